// A finished race's results, under the boards of its room: the ranking (with each racer's new
// rating after a rated race), how a race ranks, why there is no rating column when there is
// none, a word to a rated guest, the fairness check of the revealed deal, and the replay link
// (a challenge's run: that the result comes when the rival has played, in their place; a
// bracket round's run: that the round's results come when it closes).

import { fill, formatMs, h } from "./dom.js";
import { showVerdict } from "./fairness.js";
import { shownName } from "./ghost.js";

/** How the results are ordered (PROTOCOL.md, Room lifecycle, "Ranking"). */
const RANKING_RULE =
  "Ranking: racers who won come first, by time, then by fewer moves; the others follow by cards home " +
  "(more first), then cards in order (more first), then fewer moves. Undone moves count as moves. " +
  "Seat order breaks exact ties.";

/** Why a finished race shows no rating for everyone (PROTOCOL.md, "Ratings"); null when all are rated. */
function ratingNote(view, rated) {
  const results = view.results;
  const bots = results.filter((r) => r.bot).length;
  const people = results.length - bots;
  if (view.daily) return "Daily attempts are not rated: a ranked attempt goes on the day's board instead.";
  if (view.challenge) {
    return view.challenge_rated === false
      ? "A casual challenge: no rating changes, whoever wins."
      : "A rated challenge's rating change comes with the result, when both runs are in.";
  }
  if (view.bracket) return "A bracket round ranks its runs this way; the better half goes on. Brackets are not rated.";
  if (rated) return bots ? "Bots are never rated: the ratings are the people's, against each other." : null;
  if (results.some((r) => r.ghost)) return "Not rated: a race against a ghost (a recorded run) never is.";
  if (view.options.deal) return "Not rated: practice on a chosen deal never counts toward ratings or statistics.";
  if (bots && people < 2) {
    return "No rating column: bots are never rated, and a race is rated only between two or more people.";
  }
  if (people < 2) return "No rating column: a race alone is not rated (ratings need two or more people).";
  return "This race was not rated.";
}

/** A rating and its change (`1523 (+23)`), or why a racer has none. */
function ratingText(r) {
  if (r.rating !== undefined && r.rating !== null) {
    const change = Math.round(r.rating_change);
    return `${Math.round(r.rating)} (${change > 0 ? "+" : change < 0 ? "−" : "±"}${Math.abs(change)})`;
  }
  return r.bot ? "bot, not rated" : "—";
}

/** The results panel (`#results`): empty until the race ends, then drawn once per race. */
export class ResultsPanel {
  constructor(conn) {
    this.conn = conn;
    this.node = h("div", { id: "results" });
    this.shown = null; // the race on screen, `CODE:race`
  }

  /** Show `view`'s results; `mine()` gives the player's seat (null for a spectator). */
  async render(view, mine) {
    if (!view.results) {
      fill(this.node);
      this.shown = null;
      return;
    }
    const key = `${view.code}:${view.race}`;
    if (this.shown === key) return;
    this.shown = key;
    const seat = mine();
    const rated = view.results.some((r) => r.rating !== undefined && r.rating !== null);
    const rows = view.results.map((r) =>
      h(
        "tr",
        { className: r.seat === seat ? "me" : "" },
        h("td", {}, String(r.place)),
        h("td", {}, shownName(r), r.seat === seat ? " (you)" : "", r.bot ? [" ", h("span", { className: "pill" }, "bot")] : null),
        h("td", {}, r.finished ? "won" : "did not finish"),
        h("td", {}, formatMs(r.time_ms)),
        h("td", {}, String(r.moves)),
        h("td", {}, `${r.home}/52`),
        rated ? h("td", {}, ratingText(r)) : null,
      ),
    );
    const headings = ["Place", "Racer", "", "Time", "Moves", "Home", ...(rated ? ["Rating"] : [])];
    const note = ratingNote(view, rated);
    // A guest's rating counts, but the boards list accounts only (PROTOCOL.md, "What counts").
    const guest = rated && seat !== null && !this.conn.account;
    const fairness = h("p", { className: "fairness", id: "fairness" }, "Checking the deal against its commitment…");
    const replays = view.daily || view.challenge || view.bracket
      ? null
      : h("p", {}, h("a", { href: `/#/replay/${view.code}`, id: "replay-link" }, "Replay this race move by move"));
    fill(
      this.node,
      h(
        "div",
        { className: "panel" },
        h("h2", {}, "Results"),
        h(
          "table",
          { id: "results-table" },
          h("thead", {}, h("tr", {}, headings.map((t) => h("th", {}, t)))),
          h("tbody", {}, rows),
        ),
        h("p", { className: "muted", id: "ranking-rule" }, RANKING_RULE),
        note ? h("p", { className: "muted", id: "rating-note" }, note) : null,
        guest
          ? h(
              "p",
              { id: "guest-note" },
              "Your rating counts, but you play as a guest and only accounts are on the leaderboards. ",
              h("a", { href: "/#/account", id: "guest-register" }, "Register"),
              " to appear there: the account keeps this player's rating and statistics.",
            )
          : null,
        fairness,
        replays,
      ),
    );
    await showFairness(view, fairness);
  }
}

/** ` Commitment: <code>…</code>` of a race whose deal is revealed elsewhere, later (null if none). */
function commitmentOf(view) {
  return view.commitment ? [" Commitment: ", h("code", { id: "run-commitment" }, view.commitment)] : null;
}

/** The fairness check, in the browser: the revealed deal and salt hash to the commitment. */
async function showFairness(view, node) {
  if (view.bracket && !view.reveal) {
    // The round's deal and runs stay secret until it closes: the bracket's page has them then.
    fill(node, "Your run is in: the round's results come when it closes (see ", h("a", { href: `/#/bracket/${view.bracket}`, id: "bracket-back" }, "the bracket"), ", where its deal is checked against this commitment).", commitmentOf(view));
    return;
  }
  if (view.challenge && !view.reveal) {
    // Its deal and the rival's run stay secret until both runs are in: the inbox has them then.
    fill(node, "Your run is in: the result comes when your rival has played (see ", h("a", { href: "/#/challenges" }, "Challenges"), ", where its deal is checked against this commitment).", commitmentOf(view));
    return;
  }
  if (!view.reveal) {
    node.textContent = view.daily
      ? `The daily deal stays secret until the day ends. Commitment: ${view.commitment ?? "—"}`
      : "No deal was revealed for this race.";
    return;
  }
  await showVerdict(node, view.variant, view.reveal, view.commitment);
}

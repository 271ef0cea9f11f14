// The Play page (#/play): every way to race on one page, each from the page that has it. Race
// now: a quick race (quick.js), a bot (bot.js), your best run's ghost (ghost.js), the daily
// challenge (daily.js), a room of your own (the lobby). At any hour: the challenges waiting for
// you (played from here), challenging someone and taking a challenge by its id (the Challenges
// page, its form shown), an async match (challenges.js). Tournaments: the arenas and the
// brackets, with how many the server lists in each state. The forms are the other pages' own;
// the inbox and the tournament lists are asked for on arrival, when the connection is back or
// becomes an account's, and once a minute (for what no push brings: an invitation, a tournament
// scheduled); a challenge's result is pushed (`challenge_result`) and shown at once (main.js
// says it on a notice).

import { asyncMatchForm, drawWaiting, mayPlay, openRun, statusText, withLine } from "./challenges.js";
import { count, fill, h, statusLine, variantName } from "./dom.js";
import { bestRunForm } from "./ghost.js";
import { botRaceForm, quickRaceForm } from "./lobby.js";
import { FreshScreen } from "./tournaments.js";

/** Ms between two looks at the inbox and the tournaments while the page is open. */
const REFRESH_MS = 60000;

/** `node` as the Play page's entry for `mode` (`data-mode`, for the tests and the console). */
function entry(mode, node) {
  node.dataset.mode = mode;
  node.classList.add("hub-entry");
  return node;
}

/** An entry that opens another page: a heading, what it is, what the server says of it (`shown`), and the links. */
function linkEntry(mode, title, text, shown, href, label, ...more) {
  const link = (to, id, words) => h("p", {}, h("a", { href: to, id }, words));
  return entry(
    mode,
    h("div", { className: "panel" }, h("h2", {}, title), h("p", { className: "muted" }, text), shown, link(href, `hub-${mode}-link`, label), ...more.map((args) => link(...args))),
  );
}

/** `1 live now, 2 upcoming.` from `counts` ([number, words] pairs), or `none` when all are 0. */
function tally(counts, none) {
  const said = counts.filter(([n]) => n).map(([n, words]) => `${n} ${words}`);
  return said.length ? `${said.join(", ")}.` : none;
}

function inState(list, ...states) {
  return list.filter((info) => states.includes(info.state)).length;
}

export class PlayScreen extends FreshScreen {
  mount(main) {
    this.status = statusLine();
    this.invitations = h("ul", { id: "hub-inbox-lines" });
    this.waiting = h("p", { id: "hub-inbox-count" }, "…");
    this.arenas = h("p", { id: "hub-arenas-count" }, "…");
    this.brackets = h("p", { id: "hub-brackets-count" }, "…");
    const section = (title, ...entries) => [h("h2", { className: "hub-part" }, title), h("div", { className: "grid-2" }, ...entries)];
    fill(
      main,
      h(
        "section",
        { id: "play-hub" },
        h("h1", {}, "Play"),
        h("p", { className: "muted" }, "Every way to race, in one place."),
        this.status,
        section(
          "Race now",
          entry("quick", quickRaceForm()),
          entry("bot", botRaceForm(this.conn)),
          entry("ghost", bestRunForm(this.conn)),
          linkEntry("daily", "Daily challenge", "One deal a day for everyone, one ranked attempt each, on the day's leaderboard.", null, "#/daily", "Today's deals"),
          linkEntry("rooms", "A room of your own", "Open a room for friends (share its link), practice a deal, or join a live room.", null, "#/lobby", "The lobby"),
        ),
        section(
          "Race at any hour",
          linkEntry("inbox", "Challenges waiting for you", "Challenges sent to you: play each within its window.", [this.waiting, this.invitations], "#/challenges/inbox", "All your challenges"),
          linkEntry(
            "challenge",
            "Challenge a player",
            "Play a new deal now; your rival plays the same deal within 24 h. Or take a challenge by the id you were given.",
            null,
            "#/challenges/new",
            "Challenge someone",
            ["#/challenges/take", "hub-take-link", "Take a challenge by its id"],
          ),
          entry("async", asyncMatchForm(this.conn)),
        ),
        section(
          "Tournaments",
          linkEntry("arenas", "Arenas", "Race as often as you like while an arena is live; each race scores points.", this.arenas, "#/arenas", "The arenas"),
          linkEntry("brackets", "Brackets", "Knockout rounds for 4 to 16 players on a schedule.", this.brackets, "#/brackets", "The brackets"),
        ),
      ),
    );
    this.lines = null;
    this.offPushed = this.conn.on((kind, message) => {
      const pushed = kind === "challenge_result" || kind === "challenge_waiting";
      if (pushed && this.lines) this.drawInbox(withLine(this.lines, message.challenge));
    });
    this.keepFresh(REFRESH_MS, () => {});
  }

  unmount() {
    this.offPushed();
    super.unmount();
  }

  async load() {
    // Each part as the server answers it: a refusal of one (said on the status line) leaves the others.
    const asked = await Promise.allSettled(["inbox", "arenas", "brackets"].map((type) => this.conn.request({ type })));
    const refused = asked.find((answer) => answer.status === "rejected");
    this.status.show(refused ? refused.reason.message : "", Boolean(refused));
    const [inbox, arenas, brackets] = asked.map((answer) => (answer.status === "fulfilled" ? answer.value : null));
    if (inbox) this.drawInbox(inbox.challenges || []);
    if (arenas) {
      const listed = arenas.arenas || [];
      this.arenas.textContent = tally([[inState(listed, "live"), "live now"], [inState(listed, "upcoming"), "upcoming"]], "None scheduled now.");
    }
    if (brackets) {
      const listed = brackets.brackets || [];
      const yours = listed.filter((info) => info.registered && ["registering", "playing"].includes(info.state)).length;
      const counts = [[inState(listed, "registering"), "open to registration"], [inState(listed, "playing"), "being played"], [yours, "with you registered"]];
      this.brackets.textContent = tally(counts, "None scheduled now.");
    }
  }

  /** The invitations waiting for the player, each with Play (its run opens); the header's count. */
  drawInbox(lines) {
    this.lines = lines;
    drawWaiting(lines);
    const waiting = lines.filter(mayPlay);
    this.waiting.textContent = waiting.length ? `${count(waiting.length, "challenge")} waiting for you.` : "None waiting for you.";
    const now = Date.now();
    fill(
      this.invitations,
      ...waiting.map((line) => {
        const status = statusLine();
        const play = (event) => openRun(this.conn, event.target, { type: "accept_challenge", challenge: line.id }, status);
        return h(
          "li",
          { dataset: { id: line.id } },
          `${statusText(line, now)} (${variantName(line.variant)}, ${line.rated ? "rated" : "casual"}) `,
          h("button", { type: "button", className: "primary play-challenge", onclick: play }, "Play"),
          status,
        );
      }),
    );
  }
}

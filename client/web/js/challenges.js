// Async challenges (#/challenges), as the terminal client's Challenges screen
// (client/tui/challenges.py, words from client/render/challenges.py): the inbox of your
// challenges (invitations waiting for you, with Play; yours waiting for a rival, with the id to
// give; the results, with each run's replay once both are in), and the three ways to start one:
// challenge someone (a player id, or anyone given the id), take a challenge by its id, an async
// match. Each opens your run at once: a room of your own whose countdown the server starts.
//   #/challenges/take/ID           the id filled in
//   #/challenges/rival/PLAYER[/NAME]  the rival filled in (a room's "Challenge" link)
//   #/challenges/new, /take, /async, /inbox  that part of the page shown and its first field focused
//                                  (the Play page's entries, hub.js)
// The header's Challenges link says how many invitations wait (`showWaiting`, asked for once the
// page is connected or signed in, when a result is pushed, and whenever the inbox is shown). A
// result comes pushed (`challenge_result`): the inbox shows it at once; a line that ended shows its
// revealed deal checked against the commitment (fairness.js).

import { fill, formatMs, h, roomCode, statusLine, variantName } from "./dom.js";
import { revealedDeal } from "./fairness.js";

/**
 * Ms between two looks at the inbox while the page is open: results are pushed, but nothing is
 * for a new invitation or a rival taking your challenge.
 */
const REFRESH_MS = 60000;

const GUIDE =
  "Race someone who is not online: you play a deal now, your rival plays the same deal later " +
  "(within 24 h). Neither sees the other's run until both are in; then the better run wins, and a " +
  "rated challenge moves both ratings.";

/** An invitation you have not taken: you may play it now. */
export function mayPlay(line) {
  return (line.side ?? null) === null && line.state === "open";
}

/** `2 challenges waiting for you` ("" when none is). */
export function waitingWords(lines) {
  const waiting = lines.filter(mayPlay).length;
  return waiting ? `${waiting} challenge${waiting === 1 ? "" : "s"} waiting for you` : "";
}

/** The header's count of invitations, from `lines` (an inbox). */
export function drawWaiting(lines) {
  const badge = document.getElementById("inbox-badge");
  if (!badge) return;
  const words = waitingWords(lines);
  badge.hidden = !words;
  badge.textContent = String(lines.filter(mayPlay).length);
  badge.title = words;
}

/** Ask for the inbox and show on the header how many challenges wait (quietly: a refusal leaves it). */
export async function showWaiting(conn) {
  try {
    const inbox = await conn.request({ type: "inbox" });
    drawWaiting(inbox.challenges || []);
  } catch {
    // Not connected, or the server refused: the count stays as it was.
  }
}

/** The inbox `lines` with `line` (a `challenge_result`'s) in place of its older self, or first if new. */
export function withLine(lines, line) {
  const at = lines.findIndex((old) => old.id === line.id);
  return at < 0 ? [line, ...lines] : lines.map((old, n) => (n === at ? line : old));
}

/** `7 h 05 min`, `12 min`: what remains of a challenge's window. */
function timeLeft(ms) {
  const minutes = Math.max(0, Math.floor(ms / 60000));
  const hours = Math.floor(minutes / 60);
  return hours ? `${hours} h ${String(minutes % 60).padStart(2, "0")} min` : `${minutes} min`;
}

function rivalOf(line) {
  return line.side === 0 ? line.opponent : line.challenger;
}

/** A rating and its change, `1523 (+23)`. */
function ratingText(rating, change) {
  const rounded = Math.round(change ?? 0);
  return `${Math.round(rating)} (${rounded > 0 ? "+" : rounded < 0 ? "−" : "±"}${Math.abs(rounded)})`;
}

/** Where `line` stands for you, in a few words. */
export function statusText(line, now) {
  const rival = rivalOf(line) || "a rival";
  const left = timeLeft(line.expires - now);
  switch (line.state) {
    case "open":
      if (mayPlay(line)) return `${line.challenger} challenges you: play it within ${left}`;
      return line.played ? `Waiting for a rival for ${left}: give them the id ${line.id}` : "Your run is not over yet";
    case "playing":
      return line.played ? `Your run is in; ${rival} has ${left} to play` : "Your run is not over yet";
    case "expired":
      return "Expired: the window closed before both runs were in (void, no rating change)";
    default: {
      const winner = (line.results || []).find((r) => r.place === 1);
      if (!winner) return "Over";
      const mine = (line.results || []).find((r) => r.seat === line.side);
      const rating = mine && mine.rating !== undefined && mine.rating !== null ? ` · your rating ${ratingText(mine.rating, mine.rating_change)}` : "";
      return `${winner.seat === line.side ? "You won" : `${rival} won`}${rating}`;
    }
  }
}

/** One run's result: `Ann: won in 2:12.03, 97 moves, rating 1662 (+162)`. */
function resultText(r) {
  const how = r.finished ? `won in ${formatMs(r.time_ms)}` : `did not finish, ${r.home}/52 home`;
  const rating = r.rating !== undefined && r.rating !== null ? `, rating ${ratingText(r.rating, r.rating_change)}` : "";
  return `${r.place}. ${r.name}: ${how}, ${r.moves} moves${rating}`;
}

/** Each run's (name, room) once over, yours first. */
function runs(line) {
  if (line.state !== "over" || !line.rooms || line.rooms.length !== 2) return [];
  const both = [
    [line.challenger, line.rooms[0]],
    [line.opponent, line.rooms[1]],
  ];
  return line.side === 1 ? both.reverse() : both;
}

function gameSelect(id) {
  return h("select", { id }, h("option", { value: "scorpion" }, "Scorpion"), h("option", { value: "antares" }, "Antares"));
}

/** Send `fields` (a request that opens your run: a challenge, taking one, an async match) and go to the run's room. */
export async function openRun(conn, button, fields, status) {
  button.disabled = true;
  status.show("Opening your run…");
  try {
    const joined = await conn.request(fields);
    location.assign(`/r/${joined.room}`);
  } catch (error) {
    status.show(error.message, true);
    button.disabled = false;
  }
}

/** "Async match" (the Challenges page's and the Play page's). */
export function asyncMatchForm(conn) {
  const variant = gameSelect("async-variant");
  const status = statusLine();
  const submit = (event) => {
    event.preventDefault();
    openRun(conn, event.target.querySelector("button"), { type: "async_match", variant: variant.value }, status);
  };
  return h(
    "form",
    { className: "panel", id: "async-form", onsubmit: submit },
    h("h2", {}, "Async match"),
    h("p", { className: "muted" }, "Play the deal of someone near your rating who played it in the last 24 h, or a new deal whose run waits for the next player. Always rated."),
    h("div", { className: "toolbar" }, variant, h("button", { type: "submit", className: "primary" }, "Find a match")),
    status,
  );
}

/** The part of the page a route names (`#/challenges/PART`): its panel, and the field focused in it. */
const PARTS = {
  new: ["challenge-form", "challenge-player"],
  take: ["take-form", "take-id"],
  async: ["async-form", "async-variant"],
  inbox: ["inbox", null],
};

export class ChallengesScreen {
  /** `arg`, `extra`, `name` from the route: `take`/ID, or `rival`/PLAYER/NAME. */
  constructor(conn, arg, extra, name) {
    this.conn = conn;
    this.takeId = arg === "take" && extra ? extra.toUpperCase() : "";
    this.rival = arg === "rival" && extra ? extra : "";
    this.rivalName = arg === "rival" && name ? decodeURIComponent(name) : "";
    this.part = PARTS[arg] || (this.rival ? PARTS.new : null);
  }

  mount(main) {
    this.status = statusLine();
    this.table = h("tbody", { id: "inbox-lines" });
    this.you = h("span", { id: "your-player-id" });
    fill(
      main,
      h(
        "section",
        { id: "challenges" },
        h("h1", {}, "Challenges"),
        h("p", { className: "muted" }, GUIDE, " ", this.you),
        h(
          "div",
          { className: "panel", id: "inbox" },
          h(
            "div",
            { className: "toolbar" },
            h("h2", {}, "Your challenges"),
            h("button", { type: "button", id: "inbox-refresh", onclick: () => this.refresh() }, "Refresh"),
          ),
          h(
            "table",
            { id: "inbox-table" },
            h("thead", {}, h("tr", {}, ["Challenge", "Game", "Rival", "Where it stands", ""].map((t) => h("th", {}, t)))),
            this.table,
          ),
          this.status,
        ),
        h("div", { className: "grid-2" }, this.challengeForm(), this.takeForm(), asyncMatchForm(this.conn)),
      ),
    );
    this.showPart(main);
    this.lines = null;
    this.off = this.conn.on((kind, message) => {
      if (kind === "connected" || kind === "account") this.refresh();
      if (kind === "challenge_result" || kind === "challenge_waiting") this.pushed(message.challenge);
    });
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
    this.refresh();
  }

  unmount() {
    this.off();
    clearInterval(this.timer);
  }

  async refresh() {
    try {
      await this.conn.ready;
      this.you.textContent = this.conn.player ? `Your player id: ${this.conn.player}.` : "";
      const inbox = await this.conn.request({ type: "inbox" });
      this.lines = inbox.challenges || [];
      this.draw(this.lines);
      drawWaiting(this.lines);
    } catch (error) {
      this.status.show(error.message, true);
    }
  }

  /** A challenge's result, pushed: its line as the inbox now has it (the whole inbox if none shown yet). */
  pushed(line) {
    if (!this.lines) {
      this.refresh();
      return;
    }
    this.lines = withLine(this.lines, line);
    this.draw(this.lines);
  }

  draw(lines) {
    if (!lines.length) {
      fill(this.table, h("tr", {}, h("td", { colspan: "5", className: "muted" }, "No challenge yet: start one below.")));
      return;
    }
    const now = Date.now();
    fill(this.table, ...lines.map((line) => this.row(line, now)));
  }

  row(line, now) {
    const kind = line.rated ? "rated" : "casual";
    const details = line.state === "over" ? h("ul", { className: "runs" }, (line.results || []).map((r) => h("li", {}, resultText(r)))) : null;
    const deal = line.reveal ? revealedDeal(line.variant, line.reveal, line.commitment, "with the challenge") : null;
    return h(
      "tr",
      { dataset: { id: line.id, state: line.state } },
      h("td", {}, roomCode(line.id)),
      h("td", {}, `${variantName(line.variant)} · ${kind}`),
      h("td", {}, rivalOf(line) || "—"),
      h("td", { className: "where" }, statusText(line, now), details, deal),
      h("td", { className: "links" }, this.actions(line)),
    );
  }

  actions(line) {
    if (mayPlay(line)) {
      return h("button", { type: "button", className: "primary play-challenge", onclick: (e) => this.play(e.target, { type: "accept_challenge", challenge: line.id }) }, "Play");
    }
    if (line.state === "open" && line.side === 0) {
      return h("button", { type: "button", className: "copy-id", onclick: () => copyId(line.id, this.status) }, "Copy the id");
    }
    return runs(line).flatMap(([name, room], index) => [
      index ? " · " : null,
      h("a", { href: `#/replay/${room}/0`, className: "replay-run" }, index ? `${name}'s run` : "Replay your run"),
    ]);
  }

  /** Send `fields` (a request that opens your run) and go to the run's room. */
  play(button, fields, status = this.status) {
    return openRun(this.conn, button, fields, status);
  }

  /** The part the route names, marked, in view, its field focused. */
  showPart(main) {
    if (!this.part) return;
    const [panel, field] = this.part;
    const shown = main.querySelector(`#${panel}`);
    shown.classList.add("chosen");
    shown.scrollIntoView({ block: "nearest" });
    if (field) main.querySelector(`#${field}`).focus({ preventScroll: true });
  }

  challengeForm() {
    const variant = gameSelect("challenge-variant");
    const player = h("input", { type: "text", id: "challenge-player", size: "18", value: this.rival, placeholder: "blank: anyone given the id", "aria-label": "Rival's player id" });
    const rated = h("input", { type: "checkbox", id: "challenge-rated", checked: true });
    const status = statusLine();
    const submit = (event) => {
      event.preventDefault();
      const fields = { type: "challenge", variant: variant.value, rated: rated.checked };
      if (player.value.trim()) fields.player = player.value.trim();
      this.play(event.target.querySelector("button"), fields, status);
    };
    return h(
      "form",
      { className: "panel", id: "challenge-form", onsubmit: submit },
      h("h2", {}, this.rivalName ? `Challenge ${this.rivalName}` : "Challenge someone"),
      h("p", { className: "muted" }, "You play a new deal now; your rival has 24 h to play the same deal. Give a player id (a room's racers have a Challenge link), or leave it blank and give the challenge's id to anyone."),
      h("div", { className: "toolbar" }, variant, h("label", {}, "rival ", player), h("label", {}, rated, " rated"), h("button", { type: "submit", className: "primary" }, "Challenge")),
      status,
    );
  }

  takeForm() {
    const id = h("input", { type: "text", id: "take-id", size: "10", value: this.takeId, required: true, placeholder: "QX7M2KDA", "aria-label": "Challenge id", autocomplete: "off" });
    const status = statusLine();
    const submit = (event) => {
      event.preventDefault();
      this.play(event.target.querySelector("button"), { type: "accept_challenge", challenge: id.value.trim().toUpperCase() }, status);
    };
    return h(
      "form",
      { className: "panel", id: "take-form", onsubmit: submit },
      h("h2", {}, "Take a challenge"),
      h("p", { className: "muted" }, "The id you were given (8 letters): you play its deal now."),
      h("div", { className: "toolbar" }, id, h("button", { type: "submit", className: "primary" }, "Play it")),
      status,
    );
  }
}

/** Copy a challenge's id for the rival (or say it, where the browser does not let the page copy). */
export async function copyId(id, status) {
  try {
    await navigator.clipboard.writeText(id);
    status.show(`Copied ${id}: give it to your rival.`);
  } catch {
    status.show(`Give your rival this id: ${id}`);
  }
}

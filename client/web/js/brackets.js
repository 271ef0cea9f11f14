// Bracket tournaments, as the terminal client's bracket screens (client/tui/brackets.py, words
// from client/render/brackets.py): the list of brackets (#/brackets) and a bracket's page
// (#/bracket/ID) with Register / Unregister before the start, "Play your round" while a round
// you are in waits for your run (with the time left to start it), the rounds side by side (each
// round's players, and once closed its places with who went on marked), and the final standings
// once it is over. Both are asked for again every few seconds while shown. Playing opens your
// run's room (a room of your own whose countdown the server starts at once); its results say
// that the round's results come when it closes (results.js). A round's close is pushed
// (`round_closed`): the page shows it at once, the revealed deal checked against the round's
// commitment (fairness.js). "You" in a round is found by player id (names may repeat).

import { count, fill, formatMs, h, statusLine, variantName } from "./dom.js";
import { revealedDeal } from "./fairness.js";
import { FreshScreen, TournamentList, ordinal, timeLeft, tournamentPage, utcClock } from "./tournaments.js";

/** Seconds between two looks at a bracket while its page is open, and at the list. */
const REFRESH_MS = 3000;
const LIST_REFRESH_MS = 10000;

/** Ms after a round opens within which a player must start their run (PROTOCOL.md). */
const SHOW_UP_MS = 120000;

const GUIDE =
  "A knockout for 4 to 16 players on a schedule. Each round is one deal, the same for everyone " +
  "left: play it once, alone, starting within 2 minutes of the round's opening (or forfeit). " +
  "The better half goes on to the next round on a new deal; the last one left wins.";

const WENT_ON = "✓ went on";

const PILL = { registering: "countdown", playing: "racing", over: "finished", cancelled: "finished" };

/** Being played first, then open to registration (starting soonest first), then the others (latest first). */
function listed(brackets) {
  const order = { playing: 0, registering: 1, over: 2, cancelled: 2 };
  const moment = (b) => (order[b.state] === 2 ? -b.starts : b.starts);
  return [...brackets].sort((a, b) => order[a.state] - order[b.state] || moment(a) - moment(b));
}

function placesLeft(info) {
  return Math.max(0, info.size - (info.players || 0));
}

/** Where a bracket stands, in a few words. */
function stateText(info, now) {
  switch (info.state) {
    case "registering": {
      if (info.starts <= now) return "starting…";
      const left = placesLeft(info);
      return `starts ${utcClock(info.starts, now)} (in ${timeLeft(info.starts - now)}) · ${left ? `${count(left, "place")} left` : "full"}`;
    }
    case "playing":
      return info.round ? `round ${info.round} being played` : "between rounds";
    case "over":
      return info.winner ? `over · ${info.winner} won` : "over · nobody played the last round";
    default:
      return "cancelled: fewer than 4 registered";
  }
}

/** The round being played, if one is open (the last one, with no results yet). */
function openRound(view) {
  const last = view.rounds[view.rounds.length - 1];
  return view.bracket.round && last && !last.results ? last : null;
}

/** Player `seat` of `round` (an index in its `players`) by id, or by name from a server without ids. */
function playerAt(round, seat) {
  return round.player_ids ? round.player_ids[seat] : round.players[seat];
}

/**
 * Whether player `seat` of closed round `index` went on: one of the next round's players, or the
 * winner (by id; by name from an older server that names the winner only).
 */
function wentOn(view, index, seat, place) {
  const round = view.rounds[index];
  const next = view.rounds[index + 1];
  if (next) return (next.player_ids || next.players).includes(playerAt(round, seat));
  if (view.bracket.winner_id && round.player_ids) return round.player_ids[seat] === view.bracket.winner_id;
  return Boolean(view.bracket.winner) && place === 1 && round.players[seat] === view.bracket.winner;
}

/** `view` with a closed round and the one it opened (`round_closed`), in place of their older selves. */
export function withClosedRound(view, message) {
  const fresh = [message.round, message.next].filter(Boolean);
  const numbers = new Set(fresh.map((round) => round.number));
  const rounds = [...view.rounds.filter((round) => !numbers.has(round.number)), ...fresh].sort((a, b) => a.number - b.number);
  return { ...view, bracket: message.bracket, rounds };
}

/** What the player can do in the bracket now, or where they stand in it. */
function youText(view, now) {
  const info = view.bracket;
  if (info.state === "cancelled") return "Cancelled: fewer than 4 players had registered by the start.";
  if (info.state === "registering") {
    const starts = `${utcClock(info.starts, now)} (in ${timeLeft(info.starts - now)})`;
    if (info.registered) return `You are registered. Round 1 opens at ${starts}: be there to play it.`;
    return placesLeft(info) ? `Register to play: round 1 opens at ${starts}.` : "The bracket is full.";
  }
  const open = openRound(view);
  if (open && open.you) {
    const n = open.number;
    if (open.you === "to-play") {
      const deadline = Math.min(open.opens + SHOW_UP_MS, open.closes);
      return `Play your round ${n} now: start within ${timeLeft(deadline - now)}.`;
    }
    if (open.you === "playing") return `Your run of round ${n} is on: finish it.`;
    if (open.you === "played") return `Your run of round ${n} is in: waiting for the round to close.`;
    return `You did not start round ${n} in time: you forfeited it.`;
  }
  if (info.state === "over") return `Over: ${info.winner ? `${info.winner} won.` : "nobody played the last round."}`;
  const mine = view.rounds.filter((r) => r.you);
  if (!mine.length) return info.registered ? "Waiting for the next round." : "You are not in this bracket.";
  const last = mine[mine.length - 1];
  return last.results ? `You are out: round ${last.number} was your last.` : "Waiting for the round to close.";
}

export class BracketsScreen extends TournamentList {
  constructor(conn) {
    const columns = ["Bracket", "Game", "Where it stands", "Players", "You"];
    super(conn, { kind: "bracket", heading: "Bracket tournaments", guide: GUIDE, columns, empty: "No bracket is scheduled: an operator schedules them.", refreshMs: LIST_REFRESH_MS });
  }

  read(reply) {
    return listed(reply.brackets || []);
  }

  cells(info, now) {
    return [
      h("td", {}, variantName(info.variant)),
      h("td", { className: "where" }, h("span", { className: `pill ${PILL[info.state]}` }, info.state), " ", stateText(info, now)),
      h("td", {}, `${info.players || 0}/${info.size}`),
      h("td", {}, info.registered ? "registered" : ""),
    ];
  }
}

export class BracketScreen extends FreshScreen {
  constructor(conn, bracket) {
    super(conn);
    this.bracket = bracket.toUpperCase();
    this.view = null;
    this.busy = false; // a button's request is on its way
    this.drawnAction = null; // the action drawn (its button), to draw it again only when it changes
  }

  mount(main) {
    this.status = statusLine();
    this.title = h("h1", {}, `Bracket ${this.bracket}`);
    this.when = h("p", { id: "bracket-when" });
    this.you = h("div", { className: "panel toolbar", id: "bracket-you" });
    this.rounds = h("div", { className: "bracket-rounds", id: "bracket-rounds" });
    this.standings = h("div", { className: "panel", id: "bracket-standings", hidden: true });
    fill(main, tournamentPage("bracket", this.bracket, this.title, this.when, GUIDE, this.you, this.status, this.standings, this.rounds));
    this.offPushed = this.conn.on((kind, message) => {
      if (kind === "round_closed" && message.bracket.id === this.bracket) this.pushed(message);
      if (kind === "bracket_started" && message.bracket.id === this.bracket) this.pushed({ ...message, next: message.round, round: null });
    });
    this.keepFresh(REFRESH_MS, () => this.drawYou());
  }

  unmount() {
    this.offPushed();
    super.unmount();
  }

  /**
   * A round of this bracket closed (`round_closed`: its places and the next round at once), or
   * its first opened (`bracket_started`, as a close of no round).
   */
  pushed(message) {
    if (!this.view) return;
    if (this.view.bracket.state !== message.bracket.state) this.status.show(""); // said of another stage
    this.view = withClosedRound(this.view, message);
    this.draw();
    // The final standings come with the bracket, not the push.
    if (!message.next) this.refresh();
  }

  async load() {
    const view = await this.conn.request({ type: "bracket", bracket: this.bracket });
    if (this.view && this.view.bracket.state !== view.bracket.state) this.status.show(""); // said of another stage
    this.view = view;
    this.draw();
  }

  /** Send `fields` for the button; `done(reply)` after it, then the page again. */
  async send(fields, done) {
    if (this.busy) return;
    this.busy = true;
    this.drawYou();
    try {
      const reply = await this.conn.request(fields);
      if (done) done(reply);
    } catch (error) {
      this.status.show(error.message, true);
    } finally {
      this.busy = false;
    }
    await this.refresh();
  }

  draw() {
    const view = this.view;
    const info = view.bracket;
    fill(this.title, info.name);
    this.drawYou();
    this.drawRounds();
    const standings = view.standings || [];
    this.standings.hidden = !standings.length;
    fill(
      this.standings,
      standings.length
        ? [
            h("h2", {}, "Final standings"),
            h(
              "ol",
              { id: "bracket-final" },
              standings.map((name, n) => {
                // By id where the server gives them (two players may share a name).
                const ids = view.standing_ids;
                const me = ids ? ids[n] === this.conn.player : name === this.conn.name;
                const won = ids && info.winner_id ? ids[n] === info.winner_id : n === 0 && name === info.winner;
                return h("li", { className: me ? "me" : "" }, `${ordinal(n + 1)} ${name}`, me ? " (you)" : "", won ? " 🏆" : "");
              }),
            ),
          ]
        : null,
    );
  }

  /** The heading, and what the player can do now with its button. */
  drawYou() {
    const view = this.view;
    if (!view) return;
    const info = view.bracket;
    const now = Date.now();
    this.when.dataset.state = info.state;
    this.when.textContent = `${variantName(info.variant)} · ${info.players || 0} of ${info.size} players · ${info.round_minutes}-minute rounds · ${stateText(info, now)}`;
    const code = this.bracket;
    let action = null; // [id, label, request, what to do with its reply, primary]
    if (info.state === "registering" && info.registered) {
      action = ["bracket-unregister", "Unregister", { type: "leave_bracket", bracket: code }, () => this.status.show("You are no longer registered.")];
    } else if (info.state === "registering" && placesLeft(info)) {
      action = ["bracket-register", "Register", { type: "join_bracket", bracket: code }, () => this.status.show("You are registered."), true];
    }
    const open = openRound(view);
    if (open && open.you === "to-play") {
      action = ["bracket-play", "Play your round", { type: "play_bracket", bracket: code }, (joined) => location.assign(`/r/${joined.room}`), true];
    }
    // The words change every second; the button is drawn again only when it changes (not under a click).
    const key = JSON.stringify([action && action[0], this.busy]);
    if (key !== this.drawnAction) {
      this.drawnAction = key;
      this.statusText = h("span", { id: "bracket-status" });
      const [id, label, fields, done, primary] = action || [];
      const button = action
        ? h("button", { type: "button", id, className: primary ? "primary" : "", disabled: this.busy, onclick: () => this.send(fields, done) }, label)
        : null;
      fill(this.you, this.statusText, button);
    }
    this.statusText.textContent = youText(view, now);
  }

  /** The rounds side by side: each one's players while open, its places (who went on marked) once closed. */
  drawRounds() {
    const view = this.view;
    const now = Date.now();
    if (!view.rounds.length) {
      fill(this.rounds, view.bracket.state === "registering" ? h("p", { className: "muted" }, "No round yet: round 1 opens at the start.") : null);
      return;
    }
    fill(
      this.rounds,
      ...view.rounds.map((round, index) => {
        const closed = Boolean(round.results);
        const mine = (seat) => (round.player_ids ? round.player_ids[seat] === this.conn.player : round.players[seat] === this.conn.name);
        const title = closed
          ? `Round ${round.number} · closed`
          : `Round ${round.number} · open until ${utcClock(round.closes, now)}`;
        const lines = closed
          ? round.results.map((r) => {
              const how = r.finished ? `finished in ${formatMs(r.time_ms)}` : `${r.home}/52 home`;
              const [you, on] = [mine(r.seat), wentOn(view, index, r.seat, r.place)];
              return h(
                "li",
                { className: [you ? "me" : "", on ? "went-on" : ""].join(" ").trim(), dataset: { place: String(r.place) } },
                `${r.place}. ${r.name}${you ? " (you)" : ""}: ${how}, ${count(r.moves, "move")}`,
                on ? h("span", { className: "went-on-mark" }, ` ${WENT_ON}`) : null,
              );
            })
          : round.players.map((name, seat) => h("li", { className: mine(seat) ? "me" : "" }, name, mine(seat) ? " (you)" : ""));
        return h(
          "div",
          { className: "panel bracket-round", dataset: { number: String(round.number), closed: String(closed) } },
          h("h2", {}, title),
          h("p", { className: "muted" }, count(round.players.length, "player")),
          h(closed ? "ol" : "ul", { className: "round-lines" }, lines),
          round.reveal ? revealedDeal(view.bracket.variant, round.reveal, round.commitment, "when the round opened") : null,
        );
      }),
    );
  }
}

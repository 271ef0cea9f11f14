// Arena tournaments, as the terminal client's arena screens (client/tui/arenas.py, words from
// client/render/arenas.py): the list of arenas (#/arenas) and an arena's page (#/arena/ID) with
// Join / Leave and the live standings (the top 10 and the lines around yours, asked for every few
// seconds), each racing leader's race to watch (in a new tab, so the page keeps your place in
// line), and the final standings once the arena is over.
//   Joining waits in the arena's line as a quick race does (quick.js); when the race forms, its
// room opens. The tab then races on: `sessionStorage` keeps the arena the player joined, and the
// race's page (room.js, through ArenaRaceNote) joins again by itself when the race ends and opens
// the next race when it forms, until the player leaves (the Leave buttons, or another page of
// the site). The points, streaks and ranks are the server's: the page shows what it sends.

import { count, fill, h, statusLine, variantName } from "./dom.js";
import { FreshScreen, TournamentList, ordinal, timeLeft, tournamentPage, utcClock } from "./tournaments.js";

/** Seconds between two looks at the standings while an arena's page is open (and at the list). */
const REFRESH_MS = 3000;
const LIST_REFRESH_MS = 15000;

/** Where the tab keeps the arena it races on in. */
const RACING_ON = "solitaire-race.arena";

const GUIDE =
  "Race as often as you like while the arena is live: join, and you are paired with 2 to 4 players " +
  "near your rating, again as soon as each race ends. A win is 2 points, second of 3 or 4 is 1; after " +
  "two wins in a row (🔥) each race counts double until you do not win.";

const STREAK = "🔥 x2";
const WAITING = "Waiting for your next race…";

/** The arena this tab races on in (null: none). */
function racingOn() {
  return sessionStorage.getItem(RACING_ON);
}

function raceOn(arena) {
  if (arena) sessionStorage.setItem(RACING_ON, arena);
  else sessionStorage.removeItem(RACING_ON);
}

/** When an arena runs, from now (after its state: `live`, `upcoming`, `over`). */
function whenText(info, now) {
  if (info.state === "live") return `${timeLeft(info.ends - now)} left`;
  if (info.state === "upcoming") return `starts ${utcClock(info.starts, now)} (in ${timeLeft(info.starts - now)})`;
  return `since ${utcClock(info.ends, now)}`;
}

const PILL = { live: "racing", upcoming: "countdown", over: "finished" };

/** Live arenas first (ending soonest), then upcoming (starting soonest), then over (latest first). */
function listed(arenas) {
  const order = { live: 0, upcoming: 1, over: 2 };
  const moment = (a) => (a.state === "live" ? a.ends : a.state === "upcoming" ? a.starts : -a.ends);
  return [...arenas].sort((a, b) => order[a.state] - order[b.state] || moment(a) - moment(b));
}

/**
 * Wait in arena `arena`'s line: resolves once in line with `joined`, a promise of the `joined` of
 * the race that forms (it carries the request's id, as a quick match's does).
 */
function joinLine(conn, arena) {
  return conn.waitInLine({ type: "join_arena", arena });
}

/** Out of arena `arena`'s line (quietly: not in it means a race formed, and its joined opens it). */
function leaveLine(conn, arena) {
  return conn.request({ type: "leave_arena", arena }).catch(() => {});
}

export class ArenasScreen extends TournamentList {
  constructor(conn) {
    const columns = ["Arena", "Game", "When", "Players"];
    super(conn, { kind: "arena", heading: "Arena tournaments", guide: GUIDE, columns, empty: "No arena is scheduled today: an operator schedules them.", refreshMs: LIST_REFRESH_MS });
  }

  read(reply) {
    return listed(reply.arenas || []);
  }

  cells(info, now) {
    return [
      h("td", {}, variantName(info.variant)),
      h("td", {}, h("span", { className: `pill ${PILL[info.state]}` }, info.state), " ", whenText(info, now)),
      h("td", {}, String(info.players || 0)),
    ];
  }
}

export class ArenaScreen extends FreshScreen {
  constructor(conn, arena) {
    super(conn);
    this.arena = arena.toUpperCase();
    this.inLine = false; // in the line, or asking to be
    this.left = false;
    this.reply = null;
  }

  mount(main) {
    this.status = statusLine();
    this.title = h("h1", {}, `Arena ${this.arena}`);
    this.when = h("p", { id: "arena-when" });
    this.play = h("div", { className: "panel toolbar", id: "arena-play" });
    this.top = h("div", { className: "panel", id: "arena-top" });
    this.around = h("div", { className: "panel", id: "arena-around", hidden: true });
    this.mine = h("p", { id: "arena-me" });
    const standings = h("div", { className: "grid-2" }, this.top, this.around);
    fill(main, tournamentPage("arena", this.arena, this.title, this.when, GUIDE, this.play, this.status, this.mine, standings));
    this.offLine = this.conn.on((kind) => {
      if (kind === "disconnected") this.inLine = false; // the server drops a closed connection from the line: join again once back
    });
    this.drawPlay();
    this.keepFresh(REFRESH_MS, () => this.drawWhen());
  }

  /** Another page of the site: the player leaves the arena (out of its line, no next race). */
  unmount() {
    this.left = true;
    this.offLine();
    super.unmount();
    if (racingOn() === this.arena) raceOn(null);
    if (this.inLine) leaveLine(this.conn, this.arena);
  }

  /** The player's race in this arena that is still on (a reload restores its seat), if any. */
  raceOnNow() {
    const mine = this.reply && this.reply.me;
    if (mine && mine.room) return mine.room;
    for (const [code, copy] of this.conn.rooms) {
      if (copy.view.arena === this.arena && copy.view.state !== "finished" && this.conn.roles.get(code) === "racer") return code;
    }
    return null;
  }

  async load() {
    const top = await this.conn.request({ type: "arena", arena: this.arena, limit: 10 });
    const below = top.me && top.me.rank > 10;
    const around = below ? await this.conn.request({ type: "arena", arena: this.arena, limit: 5, around: true }) : null;
    this.reply = top;
    this.draw(top, around);
    // Racing on here (joined before a reload or a race): back in the line when free.
    if (racingOn() === this.arena && top.arena.state === "live" && !this.inLine && !this.raceOnNow()) this.queue();
    if (top.arena.state === "over" && racingOn() === this.arena) {
      raceOn(null);
      if (this.inLine) this.leave();
    }
    this.drawPlay();
  }

  async queue() {
    if (this.inLine || this.left) return;
    this.inLine = true;
    raceOn(this.arena);
    this.drawPlay();
    try {
      const { joined } = await joinLine(this.conn, this.arena);
      if (this.left) leaveLine(this.conn, this.arena);
      const race = await joined;
      this.inLine = false;
      location.assign(`/r/${race.room}`);
    } catch (error) {
      this.inLine = false;
      if (error.code !== "disconnected") {
        raceOn(null);
        this.status.show(`Cannot join: ${error.message}`, true);
      }
      this.drawPlay();
    }
  }

  leave() {
    raceOn(null);
    if (this.inLine) {
      this.inLine = false;
      leaveLine(this.conn, this.arena);
      this.status.show("You left the arena's line: your points stay.");
    }
    this.drawPlay();
  }

  drawWhen() {
    const info = this.reply && this.reply.arena;
    if (!info) return;
    this.when.dataset.state = info.state;
    this.when.textContent = `${variantName(info.variant)} · ${info.state} · ${whenText(info, Date.now())} · ${count(info.players || 0, "player")}`;
  }

  /** Join or Leave, what the player is doing here, and the way back to their race. */
  drawPlay() {
    const info = this.reply && this.reply.arena;
    const race = this.raceOnNow();
    let words;
    let button = null;
    if (info && info.state === "over") {
      const first = this.reply.lines.find((line) => line.rank === 1);
      words = first ? `The arena is over. Final standings: ${first.name} won with ${count(first.points, "point")}.` : "The arena is over: nobody raced in it.";
    } else if (this.inLine) {
      words = WAITING;
      button = h("button", { type: "button", id: "arena-leave", onclick: () => this.leave() }, "Leave");
    } else if (race) {
      words = "Your race is on: ";
      button = h("a", { href: `/r/${race}`, id: "arena-your-race" }, "back to your race");
    } else if (info && info.state === "upcoming") {
      words = `It starts at ${utcClock(info.starts, Date.now())}: join it then.`;
    } else {
      words = "Join, and race until the arena ends: you are paired again after each race.";
      button = info ? h("button", { type: "button", className: "primary", id: "arena-join", onclick: () => this.queue() }, "Join") : null;
    }
    fill(this.play, h("span", { id: "arena-status" }, words), button);
  }

  draw(top, around) {
    fill(this.title, top.arena.name);
    this.drawWhen();
    const over = top.arena.state === "over";
    fill(this.top, h("h2", {}, over ? "Final standings" : "Standings"), this.table(top.lines, "arena-lines"));
    const last = top.lines.length ? top.lines[top.lines.length - 1].rank : 0;
    const below = around ? around.lines.filter((line) => line.rank > last) : [];
    this.around.hidden = !below.length;
    fill(this.around, below.length ? [h("h2", {}, "Around you"), this.table(below, "arena-around-lines")] : null);
    const me = top.me;
    if (!me) {
      this.mine.textContent = top.lines.length ? "You have not raced here yet." : "Nobody has raced yet.";
      return;
    }
    const streak = me.streak && !over ? " · 🔥 your next race counts double" : "";
    this.mine.textContent = `You: ${ordinal(me.rank)} · ${count(me.points, "point")} · ${count(me.races, "race")}, ${count(me.wins, "win")}${streak}`;
  }

  table(lines, id) {
    const rows = lines.map((line) => {
      const mine = line.player === this.conn.player;
      return h(
        "tr",
        { className: mine ? "me" : "", dataset: { player: line.player, points: String(line.points) } },
        h("td", {}, String(line.rank)),
        h("td", { className: "name" }, line.name, mine ? " (you)" : ""),
        h("td", { className: "points" }, String(line.points)),
        h("td", {}, count(line.races, "race")),
        h("td", {}, count(line.wins, "win")),
        h("td", { className: "streak", title: line.streak ? "the next race counts double" : "" }, line.streak ? STREAK : ""),
        h("td", { className: "links" }, this.follow(line, mine)),
      );
    });
    const headings = ["#", "Player", "Points", "Races", "Wins", "Streak", ""];
    return rows.length
      ? h("table", { id }, h("thead", {}, h("tr", {}, headings.map((t) => h("th", {}, t)))), h("tbody", {}, rows))
      : h("p", { className: "muted" }, "Nobody has raced yet.");
  }

  /** A racer's race in progress: watch it in a new tab (this one keeps your place in line); yours: back to it. */
  follow(line, mine) {
    if (!line.room) return null;
    if (mine) return h("a", { href: `/r/${line.room}` }, "Your race");
    return h("a", { href: `/#/watch/${line.room}`, target: "_blank", rel: "noopener", className: "watch" }, "Watch");
  }
}

/**
 * The arena part of an arena race's page (room.js): the arena's name (the view's), the way back to its page,
 * and, for a racer who races on in it, joining again when the race ends and opening the next race
 * when it forms (or Leave).
 */
export class ArenaRaceNote {
  constructor(conn, code, arena, racer) {
    this.conn = conn;
    this.code = code;
    this.arena = arena;
    this.racer = racer;
    this.node = h("span", { id: "arena-note" });
    this.name = null;
    this.inLine = false;
    this.asked = false; // joined again after this race (once per page)
    this.error = null;
    this.drawn = null;
    this.off = conn.on((kind) => {
      // The server drops a closed connection from the line: the room's snapshot, once back, asks again.
      if (kind === "disconnected" && this.inLine) {
        this.inLine = false;
        this.asked = false;
      }
    });
  }

  stop() {
    this.off();
    if (this.inLine) leaveLine(this.conn, this.arena);
    this.inLine = false;
  }

  /** The room changed (`view`): once the race is over, join the arena's line again if racing on. */
  update(view) {
    this.name = view.arena_name || null;
    if (this.racer && view.state === "finished" && racingOn() === this.arena && !this.asked) {
      this.asked = true;
      this.queue();
    }
    this.draw();
  }

  async queue() {
    this.inLine = true;
    this.draw();
    try {
      const { joined } = await joinLine(this.conn, this.arena);
      const race = await joined;
      this.inLine = false;
      await this.conn.leave(this.code); // this race is over: its results stay in the replays
      location.assign(`/r/${race.room}`);
    } catch (error) {
      this.inLine = false;
      if (error.code === "disconnected") {
        this.asked = false;
      } else {
        this.error = error.code === "not-allowed" ? "The arena is over: see its final standings." : `Cannot race on: ${error.message}`;
        raceOn(null);
      }
      this.draw();
    }
  }

  leave() {
    raceOn(null);
    if (this.inLine) {
      this.inLine = false;
      leaveLine(this.conn, this.arena);
    }
    this.draw();
  }

  draw() {
    const on = this.racer && racingOn() === this.arena;
    let words = null;
    if (this.error) words = this.error;
    else if (this.inLine) words = WAITING;
    else if (on) words = "You race on after this race.";
    const key = JSON.stringify([this.name, words, on || this.inLine]);
    if (key === this.drawn) return; // the room draws often: the Leave button stays the same node
    this.drawn = key;
    fill(
      this.node,
      h("span", { className: "pill", id: "arena-name" }, `Arena: ${this.name || this.arena}`),
      " ",
      h("a", { href: `/#/arena/${this.arena}`, id: "arena-back" }, "Back to the arena"),
      words ? [" · ", h("strong", { id: "arena-race-status" }, words)] : null,
      on || this.inLine ? [" ", h("button", { type: "button", className: "small", id: "arena-race-leave", onclick: () => this.leave() }, "Leave the arena")] : null,
    );
  }
}

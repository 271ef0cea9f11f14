// What the tournament pages (arenas.js, brackets.js) share: the words for times and ranks, a
// screen asked for again every few seconds and when the connection comes back, whose times move
// each second, a tournament's page around its own parts, and the list of a kind of tournament
// (#/arenas, #/brackets).

import { fill, h, statusLine } from "./dom.js";

/** `7 h 05 min`, `12 min 30 s`, `45 s` (as client/render/describe.py's time_left). */
export function timeLeft(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours) return `${hours} h ${String(minutes).padStart(2, "0")} min`;
  return minutes ? `${minutes} min ${String(seconds % 60).padStart(2, "0")} s` : `${seconds % 60} s`;
}

/** `21:00 UTC` today (UTC), else `2026-12-05 21:00 UTC`. */
export function utcClock(ms, now) {
  const [day, time] = new Date(ms).toISOString().split("T");
  const today = new Date(now).toISOString().split("T")[0];
  return `${day === today ? "" : `${day} `}${time.slice(0, 5)} UTC`;
}

/** `1st`, `2nd`, `11th`, `23rd`. */
export function ordinal(rank) {
  const suffix = rank % 100 >= 10 && rank % 100 <= 20 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[rank % 10] || "th";
  return `${rank}${suffix}`;
}

/**
 * A screen kept fresh once `keepFresh(ms, tick)` runs: its `load()` at once, every `ms` and when
 * the connection is back (or becomes an account's), a failure shown on its `status` line; and
 * `tick()` each second (the times it shows move), until it is unmounted.
 */
export class FreshScreen {
  constructor(conn) {
    this.conn = conn;
  }

  keepFresh(ms, tick) {
    const off = this.conn.on((kind) => {
      if (kind === "connected" || kind === "account") this.refresh();
    });
    const ticker = setInterval(tick, 1000);
    const timer = setInterval(() => this.refresh(), ms);
    this.stopFresh = () => {
      off();
      clearInterval(ticker);
      clearInterval(timer);
    };
    this.refresh();
  }

  unmount() {
    this.stopFresh();
  }

  async refresh() {
    try {
      await this.conn.ready;
      await this.load();
    } catch (error) {
      this.status.show(error.message, true);
    }
  }
}

/**
 * A tournament's page (`kind`: "arena" or "bracket", tournament `code`): `title`, `when`, the
 * guide, the page's own `parts`, and the way back to the list.
 */
export function tournamentPage(kind, code, title, when, guide, ...parts) {
  return h(
    "section",
    { id: kind, dataset: { [kind]: code } },
    title,
    when,
    h("p", { className: "muted" }, guide),
    ...parts,
    h("p", {}, h("a", { href: `#/${kind}s` }, `All ${kind}s`)),
  );
}

/**
 * The list of one kind of tournament (`kind`: "arena" or "bracket": the request `${kind}s` and
 * the ids of its page), in the order `read(reply)` gives, one row each (the name linking to its
 * page, then `cells(info, now)`), asked for again every `refreshMs`; `empty` when none is listed.
 */
export class TournamentList extends FreshScreen {
  constructor(conn, { kind, heading, guide, columns, empty, refreshMs }) {
    super(conn);
    Object.assign(this, { kind, heading, guide, columns, empty, refreshMs });
    this.listed = null;
  }

  mount(main) {
    const kinds = `${this.kind}s`;
    this.status = statusLine();
    this.table = h("tbody", { id: `${kinds}-lines` });
    const head = h("thead", {}, h("tr", {}, this.columns.map((t) => h("th", {}, t))));
    fill(
      main,
      h(
        "section",
        { id: kinds },
        h("h1", {}, this.heading),
        h("p", { className: "muted" }, this.guide),
        h("div", { className: "panel" }, h("table", { id: `${kinds}-table` }, head, this.table), this.status),
      ),
    );
    this.keepFresh(this.refreshMs, () => this.draw());
  }

  async load() {
    this.listed = this.read(await this.conn.request({ type: `${this.kind}s` }));
    this.status.show("");
    this.draw();
  }

  draw() {
    if (!this.listed) return;
    if (!this.listed.length) {
      fill(this.table, h("tr", {}, h("td", { colspan: String(this.columns.length), className: "muted" }, this.empty)));
      return;
    }
    const now = Date.now();
    const link = (info) => h("a", { href: `#/${this.kind}/${info.id}`, className: `${this.kind}-link` }, info.name);
    fill(
      this.table,
      ...this.listed.map((info) => h("tr", { dataset: { id: info.id, state: info.state } }, h("td", {}, link(info)), this.cells(info, now))),
    );
  }
}

// The weekly and season boards of the daily page: the current week's (or season's) top, or
// the part around the player, and the periods before it, as the server names them
// (PROTOCOL.md, "leaderboard": a reply's `period` names the one shown and its neighbours).

import { count, fill, formatMs, h, statusLine } from "./dom.js";

const KINDS = { weekly: "Week", season: "Season" };

/** How each board orders its players (PROTOCOL.md, "Leaderboards and statistics"). */
const ORDER = {
  weekly:
    "Ranked daily challenges won in the week, most first, then the lower total time of those wins. " +
    "Weeks start on Monday 00:00 UTC.",
  season:
    "Ranked daily challenges won in the season, most first, then the lower total time of those wins. " +
    "Seasons are calendar quarters (UTC): they start on 1 January, April, July and October.",
};

export class PeriodBoards {
  constructor(conn, variant) {
    this.conn = conn;
    this.variant = variant;
    this.board = "weekly";
    this.period = null; // the current one
    this.around = false;
    this.current = {}; // board -> the current period's name, as the server last said
    this.asked = 0;
    this.status = statusLine();
    this.node = h("div", { className: "panel", id: "period-boards" }, h("h2", {}, "Weekly and season boards"));
  }

  /** Show another board, period or part (`{board, period, around}`), asking the server. */
  show(change = {}) {
    Object.assign(this, change);
    this.load().catch((error) => this.status.show(error.message, true));
  }

  async load() {
    const asked = ++this.asked;
    const request = { type: "leaderboard", variant: this.variant, board: this.board, limit: 10 };
    if (this.period) request.period = this.period; // only when chosen: older servers refuse the field
    if (this.around) request.around = true;
    const reply = await this.conn.request(request);
    if (asked !== this.asked) return; // a newer request is on its way
    if (!this.period && reply.period) this.current[reply.board] = reply.period.name;
    this.status.show("");
    this.draw(reply);
  }

  draw(reply) {
    const period = reply.period;
    const latest = !period || period.name === this.current[reply.board];
    const me = this.conn.player;
    const rows = (reply.entries || []).map((entry) =>
      h(
        "tr",
        { className: entry.player === me ? "me" : "" },
        h("td", {}, String(entry.rank)),
        h("td", {}, entry.name, entry.player === me ? " (you)" : ""),
        h("td", {}, count(entry.value, "win")),
        h("td", {}, `in ${formatMs(entry.total_time_ms)}`),
      ),
    );
    const tab = (board) =>
      h(
        "button",
        {
          id: `period-${board}`,
          className: board === this.board ? "pill racing" : "pill",
          "aria-pressed": String(board === this.board),
          onclick: () => this.show({ board, period: null }),
        },
        KINDS[board],
      );
    const empty = this.around ? "You are not on this board." : "Nobody yet.";
    fill(
      this.node,
      h("h2", {}, "Weekly and season boards"),
      h(
        "div",
        { className: "toolbar" },
        tab("weekly"),
        tab("season"),
        h(
          "button",
          { id: "period-previous", disabled: !period || !period.previous, onclick: () => this.show({ period: period.previous }) },
          "← Earlier",
        ),
        h(
          "button",
          { id: "period-next", disabled: latest || !period.next, onclick: () => this.show({ period: period.next }) },
          "Later →",
        ),
        h("button", { id: "period-around", onclick: () => this.show({ around: !this.around }) }, this.around ? "Top" : "Around you"),
      ),
      h(
        "p",
        { id: "period-title" },
        period ? `${KINDS[reply.board]} ${period.name}: ${period.first_day} to ${period.last_day}` : "",
        latest ? " (now)" : "",
        this.around ? " · around you" : " · top",
      ),
      rows.length
        ? h("table", { id: "period-board" }, h("tbody", {}, rows))
        : h("p", { className: "muted", id: "period-board" }, empty),
      h("p", { className: "muted board-order" }, ORDER[reply.board]),
      this.status,
    );
  }
}

// Daily challenges: today's deal of each game (commitment, par, whether the ranked attempt is
// used), a button to play it, today's board with the part around the player, the weekly and
// season boards (periods.js), the all-time boards and the rating board.

import { count, fill, formatMs, h, statusLine, variantName } from "./dom.js";
import { showVerdict } from "./fairness.js";
import { ghostButton } from "./ghost.js";
import { PeriodBoards } from "./periods.js";

/** How each board orders its players (PROTOCOL.md, "Leaderboards and statistics"). */
const ORDER = {
  daily:
    "Those who won come first, by time, then fewer moves, then who finished first; the others follow by cards " +
    "home, then cards in order (more first), then fewer moves.",
  "best-time": "Best time of a won ranked daily attempt, fastest first.",
  wins: "Ranked daily attempts won, most first.",
  streak: "Longest run of days in a row with a daily win.",
  rating: "Rating from races between people (daily attempts and races against bots are not rated).",
};

const BOARDS = [
  ["best-time", "Best daily time"],
  ["wins", "Daily wins"],
  ["streak", "Longest streak"],
  ["rating", "Rating"],
];

function shownValue(board, entry) {
  if (board === "daily") return entry.finished ? formatMs(entry.value) : `${entry.home} home`;
  if (board === "best-time") return formatMs(entry.value);
  if (board === "streak") return count(entry.value, "day");
  if (board === "rating") return Number(entry.value).toFixed(0);
  return String(entry.value);
}

// What today's deal is for you, by the server's `access` (PROTOCOL.md, daily).
const ACCESS_TEXT = {
  ranked: "Your one attempt today is ranked: no hints, timed, and no second try.",
  used: "You have played today's deal: it is played once. Practise yesterday's instead.",
  guest: "Today's deal is for accounts, once each, ranked: register to play it, or practise yesterday's.",
  bot: "Bots do not play today's deal: it is the players' competition.",
  "new-account": "Your account is newer than today's deal: it opens for you tomorrow. Practise yesterday's now.",
};

export class DailyScreen {
  constructor(conn, variant) {
    this.conn = conn;
    this.variant = variant === "scorpion" ? "scorpion" : "antares";
  }

  mount(main) {
    this.status = statusLine();
    this.today = h("div", { className: "panel", id: "daily-today" }, "Asking for today's deal…");
    this.boards = h("div", { className: "grid-2" });
    this.periods = new PeriodBoards(this.conn, this.variant);
    fill(
      main,
      h(
        "section",
        { id: "daily" },
        h("h1", {}, "Daily challenge"),
        h(
          "div",
          { className: "toolbar" },
          ["antares", "scorpion"].map((v) =>
            h("a", { href: `#/daily/${v}`, className: v === this.variant ? "pill racing" : "pill" }, variantName(v)),
          ),
        ),
        this.status,
        this.today,
        this.guestNote = h("div"),
        this.periods.node,
        this.boards,
      ),
    );
    this.load().catch((error) => this.status.show(error.message, true));
    this.periods.show(); // not after today's deal: these boards are there without a solver too
  }

  unmount() {}

  async load() {
    await this.conn.ready;
    this.showGuestNote();
    const info = await this.conn.request({ type: "daily", variant: this.variant });
    this.drawToday(info);
    await this.drawBoards(info.date);
  }

  drawToday(info) {
    const ranked = info.access === "ranked";
    const yesterday = info.yesterday ? info.yesterday.date : null;
    const play = ranked || yesterday
      ? h(
          "button",
          { className: "primary", id: "play-daily", onclick: () => this.play(ranked ? null : yesterday) },
          ranked ? "Play today's deal (ranked, once)" : `Practise yesterday's deal (${yesterday})`,
        )
      : null;
    fill(this.today,
      h("h2", {}, `${variantName(info.variant)} · ${info.date}`),
      h("p", { id: "daily-access" }, `Par ${info.par} moves. `, ACCESS_TEXT[info.access] || ACCESS_TEXT.used),
      info.access === "guest" ? h("p", {}, h("a", { href: "#/account", id: "daily-register" }, "Register in one step")) : null,
      h("p", { className: "muted" }, "Commitment: ", h("code", {}, info.commitment)),
      play,
      info.yesterday
        ? h("p", { className: "muted" }, `Yesterday (${info.yesterday.date}): deal ${info.yesterday.deal}, solved in ${info.yesterday.solution.length} moves.`)
        : null,
      info.yesterday ? this.yesterdayChecked(info.variant, info.yesterday) : null,
      info.yesterday ? this.fastestGhost(info.yesterday.date) : null,
    );
  }

  /** Yesterday's revealed deal and salt checked against the commitment published that day. */
  yesterdayChecked(variant, yesterday) {
    const node = h("p", { className: "fairness", id: "daily-yesterday-check" }, "Checking yesterday's deal…");
    showVerdict(node, variant, yesterday, yesterday.commitment, `on ${yesterday.date}`);
    return node;
  }

  /** A past day's fastest kept run, to race as a ghost (today's stays secret: the server refuses it). */
  fastestGhost(date) {
    const fields = () => ({ variant: this.variant, date, rank: 1 });
    return h(
      "p",
      { className: "toolbar" },
      ghostButton(this.conn, "race-fastest", `Race the fastest run of ${date}`, fields, this.status),
      h("span", { className: "muted" }, "its ghost, on its recorded timing. Not rated."),
    );
  }

  /** A guest is rated, but the boards list accounts only: say so, and where to register. */
  showGuestNote() {
    fill(
      this.guestNote,
      this.conn.account
        ? null
        : h(
            "p",
            { className: "panel", id: "boards-guest" },
            `You play as a guest (${this.conn.name}): guests are rated, but only accounts are on these boards. `,
            h("a", { href: "#/account", id: "boards-register" }, "Register"),
            " to appear on them: the account keeps your rating and statistics.",
          ),
    );
  }

  async play(date) {
    try {
      const request = { type: "start_daily", variant: this.variant };
      if (date) request.date = date;
      const joined = await this.conn.request(request);
      location.assign(`/r/${joined.room}`);
    } catch (error) {
      this.status.show(error.message, true);
    }
  }

  async board(board, extra = {}) {
    return this.conn.request({ type: "leaderboard", variant: this.variant, board, limit: 10, ...extra });
  }

  table(title, board, reply, id, explain = true) {
    const rows = (reply.entries || []).map((entry) =>
      h(
        "tr",
        { className: entry.player === this.conn.player ? "me" : "" },
        h("td", {}, String(entry.rank)),
        h("td", {}, entry.name, entry.player === this.conn.player ? " (you)" : ""),
        h("td", {}, shownValue(board, entry)),
        board === "daily" ? h("td", {}, `${entry.moves ?? ""} moves`) : null,
      ),
    );
    return h(
      "div",
      { className: "panel", id },
      h("h2", {}, title),
      rows.length ? h("table", {}, h("tbody", {}, rows)) : h("p", { className: "muted" }, "Nobody yet."),
      explain ? h("p", { className: "muted board-order" }, ORDER[board]) : null,
    );
  }

  async drawBoards(date) {
    const top = await this.board("daily", { date });
    const around = await this.board("daily", { date, around: true });
    const panels = [this.table(`Today's board (${date})`, "daily", top, "daily-board"), this.table("Around you", "daily", around, "daily-around", false)];
    for (const [board, title] of BOARDS) panels.push(this.table(title, board, await this.board(board), `board-${board}`));
    fill(this.boards, ...panels);
  }
}

// The lobby: ways to race now (a bot, a quick race with whoever is waiting, as in the
// terminal client's home menu, or the ghost of your best run on a deal), the way to the bracket
// tournaments, public rooms that are not finished, newest first, a page at a time as the server
// pages them (of both games or one), asked for again every two seconds (the protocol has no lobby
// subscription), and a form to open a room.

import { LEVELS, openBotRace } from "./bot.js";
import { fill, h, roomCode, statusLine, variantName } from "./dom.js";
import { bestRunForm } from "./ghost.js";

const REFRESH_MS = 2000;

function gameSelect(id) {
  return h("select", { id }, h("option", { value: "scorpion" }, "Scorpion"), h("option", { value: "antares" }, "Antares"));
}

/** "Race a bot" (the lobby's and the Play page's): a private room for the player and a bot of the chosen level. */
export function botRaceForm(conn) {
  const botGame = gameSelect("bot-variant");
  // The select names the level; the line under it says how it plays (a phone has no room for
  // the whole description in a select).
  const levelText = h("p", { className: "muted", id: "bot-level-text" });
  const level = h(
    "select",
    { id: "bot-level", "aria-describedby": "bot-level-text", onchange: () => (levelText.textContent = LEVELS[level.value].text) },
    Object.keys(LEVELS).map((value) => h("option", { value }, value)),
  );
  level.value = "medium";
  levelText.textContent = LEVELS[level.value].text;
  const status = statusLine();
  const raceBot = async (event) => {
    event.preventDefault();
    const button = event.target.querySelector("button");
    button.disabled = true;
    status.show("Opening a room for you and the bot…");
    try {
      const code = await openBotRace(conn, botGame.value, level.value);
      location.assign(`/r/${code}`);
    } catch (error) {
      status.show(error.message, true);
      button.disabled = false;
    }
  };
  return h(
    "form",
    { className: "panel", id: "bot-race", onsubmit: raceBot },
    h("h2", {}, "Race a bot"),
    h("p", { className: "muted" }, "A private room for you and a bot: the race starts at once. Races against a bot are not rated."),
    h("div", { className: "toolbar" }, botGame, h("label", {}, "level ", level), h("button", { type: "submit", className: "primary" }, "Race a bot")),
    levelText,
    status,
  );
}

/** "Quick race" (the lobby's and the Play page's): the quick-match line of the chosen game (quick.js). */
export function quickRaceForm() {
  const quickGame = gameSelect("quick-variant");
  const quick = (event) => {
    event.preventDefault();
    location.hash = `#/quick/${quickGame.value}`;
  };
  return h(
    "form",
    { className: "panel", id: "quick-race", onsubmit: quick },
    h("h2", {}, "Quick race"),
    h("p", { className: "muted" }, "Race whoever is waiting: 2 to 4 players near you in rating, the race starting at once. Races between people are rated."),
    h("div", { className: "toolbar" }, quickGame, h("button", { type: "submit", className: "primary" }, "Quick race")),
  );
}

export class LobbyScreen {
  constructor(conn) {
    this.conn = conn;
    this.game = ""; // "": both games
    this.pages = [null]; // the cursors of the pages shown so far; the last is this page's
    this.next = null; // the server's cursor of the page after this one (null: no more)
  }

  mount(main) {
    this.status = statusLine();
    this.table = h("tbody", { id: "lobby-rooms" });
    this.root = h(
      "section",
      { id: "lobby" },
      this.playNow(),
      h("h1", {}, "Live rooms"),
      this.pager(),
      h(
        "table",
        { id: "lobby-table" },
        h(
          "thead",
          {},
          h("tr", {}, ["Room", "Game", "State", "Racers", "Watching", ""].map((t) => h("th", {}, t))),
        ),
        this.table,
      ),
      this.status,
      this.createForm(),
    );
    fill(main, this.root);
    this.refresh();
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
  }

  unmount() {
    clearInterval(this.timer);
  }

  /** Race now: a bot (a private room, the race starting at once), a quick race, or your best run's ghost. */
  playNow() {
    return h(
      "div",
      { className: "grid-2", id: "play-now" },
      botRaceForm(this.conn),
      quickRaceForm(),
      bestRunForm(this.conn),
      // On a phone the header has no room for the Brackets link: the lobby has the way there.
      h(
        "div",
        { className: "panel", id: "lobby-brackets" },
        h("h2", {}, "Bracket tournaments"),
        h("p", { className: "muted" }, "Knockout rounds for 4 to 16 players on a schedule: register, then play each round's deal once; the better half goes on."),
        h("a", { href: "#/brackets", id: "lobby-brackets-link" }, "The brackets"),
      ),
    );
  }

  pager() {
    this.gameChoice = h(
      "select",
      { id: "lobby-game", onchange: () => this.turn([null]) },
      h("option", { value: "" }, "Both games"),
      h("option", { value: "scorpion" }, "Scorpion"),
      h("option", { value: "antares" }, "Antares"),
    );
    this.previousButton = h("button", { type: "button", id: "lobby-previous", onclick: () => this.turn(this.pages.slice(0, -1)) }, "Previous page");
    this.nextButton = h("button", { type: "button", id: "lobby-next", onclick: () => this.next && this.turn([...this.pages, this.next]) }, "Next page");
    this.pageLabel = h("span", { id: "lobby-page", className: "muted" });
    this.drawPager();
    return h("div", { className: "panel toolbar" }, h("label", {}, "Game ", this.gameChoice), this.previousButton, this.pageLabel, this.nextButton);
  }

  drawPager() {
    this.pageLabel.textContent = `page ${this.pages.length}`;
    this.previousButton.disabled = this.pages.length < 2;
    this.nextButton.disabled = !this.next;
  }

  turn(pages) {
    this.pages = pages.length ? pages : [null];
    this.game = this.gameChoice.value;
    this.next = null;
    this.drawPager();
    this.refresh();
  }

  async refresh() {
    const after = this.pages[this.pages.length - 1];
    const game = this.game;
    const request = { type: "list_rooms" };
    if (after) request.after = after;
    if (game) request.variant = game;
    try {
      const lobby = await this.conn.request(request);
      if (after !== this.pages[this.pages.length - 1] || game !== this.game) return; // a page no longer shown
      this.next = lobby.next || null;
      this.drawPager();
      this.draw(lobby.rooms || []);
    } catch (error) {
      this.status.show(error.message, true);
    }
  }

  draw(rooms) {
    if (!rooms.length) {
      fill(this.table, h("tr", {}, h("td", { colspan: "6", className: "muted" }, "No public room right now: open one below.")));
      return;
    }
    fill(
      this.table,
      ...rooms.map((room) =>
        h(
          "tr",
          { dataset: { code: room.code } },
          h("td", {}, h("code", {}, roomCode(room.code))),
          h("td", {}, variantName(room.variant)),
          h("td", {}, h("span", { className: `pill ${room.state}` }, room.state)),
          h("td", { className: "racers" }, `${room.racers.join(", ") || "—"} (${room.racers.length}/${room.max_racers})`),
          // A phone shows the rooms as cards, without the table's head: the count says what it counts.
          h("td", { className: "watching" }, String(room.spectators), h("span", { className: "phone-only" }, " watching")),
          h(
            "td",
            { className: "links" },
            h("a", { href: `#/watch/${room.code}` }, "Watch"),
            room.state === "waiting" && room.racers.length < room.max_racers ? [" · ", h("a", { href: `/r/${room.code}` }, "Join")] : null,
          ),
        ),
      ),
    );
  }

  createForm() {
    const variant = h("select", { id: "new-variant" }, h("option", { value: "scorpion" }, "Scorpion"), h("option", { value: "antares" }, "Antares"));
    const seats = h("select", { id: "new-seats" }, [1, 2, 3, 4, 5, 6, 7, 8].map((n) => h("option", { value: String(n) }, n === 1 ? "1 (practice)" : String(n))));
    seats.value = "2";
    // Rooms for several are listed by default (others find them here); a practice room is not,
    // as in the terminal client. A choice the player made stays.
    const isPublic = h("input", { type: "checkbox", id: "new-public", checked: true });
    let publicChosen = false;
    isPublic.addEventListener("change", () => {
      publicChosen = true;
    });
    seats.addEventListener("change", () => {
      if (!publicChosen) isPublic.checked = seats.value !== "1";
    });
    // A chosen deal (practice only); blank: a random one.
    const deal = h("input", {
      type: "text",
      id: "new-deal",
      placeholder: "random",
      size: "8",
      inputmode: "numeric",
      title: "a practice room's deal number, e.g. 617 (blank: a random deal)",
    });
    const submit = async (event) => {
      event.preventDefault();
      const practice = seats.value === "1";
      const options = { max_racers: Number(seats.value), public: isPublic.checked };
      if (deal.value.trim()) options.deal = deal.value.trim();
      try {
        const joined = await this.conn.request({ type: "create_room", variant: variant.value, options });
        // A practice room starts as soon as its only racer is ready: at once, as in the terminal client.
        if (practice) await this.conn.request({ type: "ready", room: joined.room });
        location.assign(`/r/${joined.room}`);
      } catch (error) {
        this.status.show(error.message, true);
      }
    };
    return h(
      "form",
      { className: "panel toolbar", id: "create-room", onsubmit: submit },
      h("strong", {}, "Open a room:"),
      variant,
      h("label", {}, "seats ", seats),
      h("label", {}, isPublic, " listed here"),
      h("label", {}, "practice deal ", deal),
      h("button", { type: "submit", className: "primary" }, "Open"),
    );
  }
}

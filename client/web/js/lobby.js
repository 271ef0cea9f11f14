// The lobby: public rooms that are not finished, newest first, a page at a time as the
// server pages them (of both games or one), asked for again every two seconds (the
// protocol has no lobby subscription), and a form to open a room.

import { fill, h, statusLine, variantName } from "./dom.js";

const REFRESH_MS = 2000;

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
      h("h1", {}, "Live rooms"),
      this.pager(),
      h(
        "table",
        {},
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
    fill(this.table, 
      ...rooms.map((room) =>
        h(
          "tr",
          { dataset: { code: room.code } },
          h("td", {}, h("code", {}, room.code)),
          h("td", {}, variantName(room.variant)),
          h("td", {}, h("span", { className: `pill ${room.state}` }, room.state)),
          h("td", {}, `${room.racers.join(", ") || "—"} (${room.racers.length}/${room.max_racers})`),
          h("td", {}, String(room.spectators)),
          h(
            "td",
            {},
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
    const isPublic = h("input", { type: "checkbox", id: "new-public", checked: true });
    const deal = h("input", { type: "text", id: "new-deal", placeholder: "practice deal, e.g. 617", size: "14" });
    const submit = async (event) => {
      event.preventDefault();
      const options = { max_racers: Number(seats.value), public: isPublic.checked };
      if (deal.value.trim()) options.deal = deal.value.trim();
      try {
        const joined = await this.conn.request({ type: "create_room", variant: variant.value, options });
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
      deal,
      h("button", { type: "submit", className: "primary" }, "Open"),
    );
  }
}

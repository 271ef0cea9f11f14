// The lobby: public rooms that are not finished, asked for again every two seconds
// (the protocol has no lobby subscription), and a form to open a room.

import { fill, h, statusLine, variantName } from "./dom.js";

const REFRESH_MS = 2000;

export class LobbyScreen {
  constructor(conn) {
    this.conn = conn;
  }

  mount(main) {
    this.status = statusLine();
    this.table = h("tbody", { id: "lobby-rooms" });
    this.root = h(
      "section",
      { id: "lobby" },
      h("h1", {}, "Live rooms"),
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

  async refresh() {
    try {
      const lobby = await this.conn.request({ type: "list_rooms" });
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

// Quick race (#/quick/GAME), as the terminal client does it (client/tui/quick.py): wait in the
// server's quick-match line of a game until it forms a race with the players waiting (2 to 4,
// near in rating); the room then opens with its countdown already running. Leaving the page
// (or Cancel) leaves the line; after a dropped connection the page queues again by itself.

import { fill, formatMs, h, statusLine, variantName } from "./dom.js";

export class QuickScreen {
  constructor(conn, variant) {
    this.conn = conn;
    this.variant = variant === "scorpion" ? "scorpion" : "antares";
    this.inLine = false; // in the line, or asking to be
    this.left = false;
  }

  mount(main) {
    this.status = statusLine();
    this.clock = h("span", { className: "clock", id: "quick-waited" }, "0:00");
    this.line = h(
      "p",
      { id: "quick-line" },
      `Waiting for players in the ${variantName(this.variant)} line… `,
      this.clock,
    );
    fill(
      main,
      h(
        "section",
        { id: "quick" },
        h("h1", {}, `Quick race: ${variantName(this.variant)}`),
        h(
          "p",
          { className: "muted" },
          "You race the next players who are waiting, nearest to you in rating: as soon as four are there, or " +
            "after 3 seconds with at least one other. The race starts as soon as it forms.",
        ),
        h("div", { className: "panel" }, this.line, h("button", { id: "quick-cancel", onclick: () => this.cancel() }, "Cancel")),
        this.status,
      ),
    );
    this.off = this.conn.on((kind) => {
      // The server drops a closed connection from the line: queue again once back.
      if (kind === "connected" && !this.inLine && !this.left) this.queue();
      if (kind === "disconnected" && this.inLine) {
        this.inLine = false;
        this.status.show("The connection dropped, and with it your place in the line: waiting again once back…", true);
      }
    });
    this.timer = setInterval(() => this.tick(), 250);
    this.queue();
  }

  unmount() {
    this.left = true;
    this.off();
    clearInterval(this.timer);
    if (this.inLine) this.leaveLine();
  }

  async queue() {
    if (this.inLine) return;
    this.inLine = true;
    this.since = this.since || Date.now();
    try {
      const { joined } = await this.conn.quickMatch(this.variant);
      if (this.left) this.leaveLine();
      else this.status.show("");
      const race = await joined;
      this.inLine = false;
      // Also after Cancel: a race that formed just before it is the player's (as in the TUI).
      location.assign(`/r/${race.room}`);
    } catch (error) {
      this.inLine = false;
      if (error.code !== "disconnected") this.status.show(`Cannot wait for a race: ${error.message}`, true);
    }
  }

  tick() {
    if (this.since) this.clock.textContent = formatMs(Date.now() - this.since).split(".")[0];
  }

  leaveLine() {
    this.inLine = false;
    this.conn.request({ type: "leave_queue", variant: this.variant }).catch(() => {
      // not-in-queue: a race has just formed, and its joined takes the page to the room.
    });
  }

  cancel() {
    location.hash = "#/lobby";
  }
}

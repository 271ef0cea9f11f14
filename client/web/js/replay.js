// Replay of a finished race: the race log names the racers; the replay request gives one
// racer's starting board and the patches of every step, shown with a step slider.

import { BoardView } from "./board.js";
import { fill, h, statusLine, variantName } from "./dom.js";
import { applyPatch, copyBoard } from "./mirror.js";

const PILES = {
  scorpion: [
    ...["1", "2", "3", "4", "5", "6", "7"].map((name) => ({ name, kind: "scorpion" })),
    { name: "stock", kind: "stock" },
    ...["hc", "hs", "hh", "hd"].map((name) => ({ name, kind: "foundation" })),
  ],
  antares: [
    ...["s1", "s2", "s3", "s4"].map((name) => ({ name, kind: "scorpion" })),
    ...["f1", "f2", "f3", "f4"].map((name) => ({ name, kind: "freecell" })),
    ...["c1", "c2", "c3", "c4"].map((name) => ({ name, kind: "cell" })),
    ...["hc", "hs", "hh", "hd"].map((name) => ({ name, kind: "foundation" })),
  ],
};

export class ReplayScreen {
  constructor(conn, code, seat) {
    this.conn = conn;
    this.code = code.toUpperCase();
    this.seat = Number(seat || 0);
  }

  mount(main) {
    this.status = statusLine();
    this.title = h("h1", {}, `Replay of room ${this.code}`);
    this.seats = h("div", { className: "toolbar" });
    this.slider = h("input", { type: "range", id: "replay-step", min: "0", max: "0", value: "0" });
    this.slider.addEventListener("input", () => this.show(Number(this.slider.value)));
    this.stepText = h("div", { className: "status", id: "replay-entry" });
    this.host = h("div", { className: "racer-panel" });
    this.board = new BoardView(this.host);
    fill(main, h("section", { id: "replay" }, this.title, this.seats, this.status, this.slider, this.stepText, this.host));
    this.load().catch((error) => this.status.show(error.message, true));
  }

  unmount() {}

  async load() {
    await this.conn.ready;
    const log = await this.conn.request({ type: "race_log", room: this.code });
    this.variant = log.variant;
    this.title.textContent = `Replay: ${variantName(log.variant)} · room ${this.code} · race ${log.race}`;
    fill(this.seats, 
      ...log.racers.map((r) => h("a", { href: `#/replay/${this.code}/${r.seat}`, className: r.seat === this.seat ? "pill racing" : "pill" }, r.name)),
    );
    const replay = await this.conn.request({ type: "replay", room: this.code, seat: this.seat });
    // Every board after each step, computed once: the slider only picks one.
    this.frames = [copyBoard(replay.board)];
    this.entries = ["start"];
    let board = copyBoard(replay.board);
    for (const step of replay.steps) {
      for (const patch of step.patches) applyPatch(board, patch);
      this.frames.push(board);
      this.entries.push(step.entry);
      board = copyBoard(board);
    }
    this.slider.max = String(this.frames.length - 1);
    this.status.show(`${replay.name}: ${replay.steps.length} steps. Move the slider, or use the arrow keys on it.`);
    this.show(0);
  }

  show(step) {
    this.slider.value = String(step);
    this.stepText.textContent = `Step ${step} of ${this.frames.length - 1}: ${this.entries[step]}`;
    this.board.draw(PILES[this.variant] || PILES.scorpion, this.frames[step]);
  }
}

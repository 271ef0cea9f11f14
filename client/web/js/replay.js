// Replay of a finished race: the race log names the racers; the replay request gives one
// racer's starting board and the patches of every step, shown with a step slider. "Race this
// run" races that racer's run as a ghost (ghost.js).

import { BoardView } from "./board.js";
import { count, fill, h, roomCode, statusLine, variantName } from "./dom.js";
import { ghostButton } from "./ghost.js";
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

/** Milliseconds between two steps while playing. */
const PLAY_MS = 600;

export class ReplayScreen {
  constructor(conn, code, seat) {
    this.conn = conn;
    this.code = code.toUpperCase();
    this.seat = Number(seat || 0);
    this.frames = [];
    this.playing = null;
  }

  mount(main) {
    this.status = statusLine();
    this.title = h("h1", {}, "Replay of room ", roomCode(this.code));
    this.seats = h("div", { className: "toolbar" });
    this.slider = h("input", { type: "range", id: "replay-step", min: "0", max: "0", value: "0", "aria-label": "Step" });
    this.slider.addEventListener("input", () => this.show(Number(this.slider.value)));
    this.back = h("button", { id: "replay-back", title: "Step back (←)", onclick: () => this.step(-1) }, "◀ Back");
    this.playButton = h("button", { id: "replay-play", className: "primary", onclick: () => this.toggle() }, "▶ Play");
    this.forward = h("button", { id: "replay-forward", title: "Step forward (→)", onclick: () => this.step(1) }, "Next ▶");
    this.buttons = h(
      "div",
      { className: "toolbar", id: "replay-controls" },
      h("button", { id: "replay-start", title: "The start (Home)", onclick: () => this.stop(0) }, "Start"),
      this.back,
      this.playButton,
      this.forward,
      h("button", { id: "replay-end", title: "The end (End)", onclick: () => this.stop(this.frames.length - 1) }, "End"),
      h("span", { className: "muted" }, "Keys: ← → step, Space plays or pauses, Home and End."),
    );
    this.stepText = h("div", { className: "status", id: "replay-entry" });
    // The run this page shows, once the race log names its race (null until then).
    this.run = null;
    this.raceButton = ghostButton(this.conn, "race-ghost", "Race this run", () => this.run, this.status);
    this.raceButton.disabled = true;
    const ghost = h(
      "div",
      { className: "toolbar" },
      this.raceButton,
      h("span", { className: "muted" }, "Its ghost plays these moves on their recorded timing, beside you. Not rated."),
    );
    this.host = h("div", { className: "racer-panel" });
    this.board = new BoardView(this.host);
    fill(
      main,
      h("section", { id: "replay" }, this.title, this.seats, ghost, this.status, this.buttons, this.slider, this.stepText, this.host),
    );
    // The arrow keys step wherever the focus is (the slider takes them itself when it has it).
    this.keyHandler = (event) => this.onKey(event);
    document.addEventListener("keydown", this.keyHandler);
    this.drawButtons();
    this.load().catch((error) => this.status.show(error.message, true));
  }

  unmount() {
    this.pause();
    document.removeEventListener("keydown", this.keyHandler);
  }

  async load() {
    await this.conn.ready;
    const log = await this.conn.request({ type: "race_log", room: this.code });
    this.variant = log.variant;
    fill(this.title, `Replay: ${variantName(log.variant)} · room `, roomCode(this.code), ` · race ${log.race}`);
    fill(
      this.seats,
      ...log.racers.map((r) => h("a", { href: `#/replay/${this.code}/${r.seat}`, className: r.seat === this.seat ? "pill racing" : "pill" }, r.name)),
    );
    const replay = await this.conn.request({ type: "replay", room: this.code, seat: this.seat });
    this.run = { room: replay.room, seat: replay.seat, race: replay.race };
    this.raceButton.disabled = false;
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
    this.status.show(`${replay.name}: ${count(replay.steps.length, "step")}.`);
    this.show(0);
  }

  show(step) {
    if (!this.frames.length) return;
    const last = this.frames.length - 1;
    this.current = Math.max(0, Math.min(last, step));
    this.slider.value = String(this.current);
    this.stepText.textContent = `Step ${this.current} of ${last}: ${this.entries[this.current]}`;
    this.board.draw(PILES[this.variant] || PILES.scorpion, this.frames[this.current]);
    this.drawButtons();
  }

  drawButtons() {
    const last = this.frames.length - 1;
    const at = this.current ?? 0;
    this.back.disabled = last < 0 || at <= 0;
    this.forward.disabled = last < 0 || at >= last;
    this.playButton.disabled = last < 1;
    this.playButton.textContent = this.playing ? "Pause" : "▶ Play";
  }

  /** One step back (-1) or forward (1), pausing the play. */
  step(by) {
    this.stop((this.current ?? 0) + by);
  }

  /** Pause and show `step`. */
  stop(step) {
    this.pause();
    this.show(step);
  }

  toggle() {
    if (this.playing) {
      this.pause();
      return;
    }
    // At the end, play from the start again.
    if (this.current >= this.frames.length - 1) this.show(0);
    this.playing = setInterval(() => {
      if (this.current >= this.frames.length - 1) this.pause();
      else this.show(this.current + 1);
    }, PLAY_MS);
    this.drawButtons();
  }

  pause() {
    clearInterval(this.playing);
    this.playing = null;
    this.drawButtons();
  }

  onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const onSlider = event.target === this.slider;
    const typing = !onSlider && event.target.closest("input, textarea, select");
    if (typing) return;
    const moves = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1 };
    if (event.key in moves) {
      // The slider moves itself on its keys; pause the play all the same.
      if (onSlider) this.pause();
      else this.step(moves[event.key]);
    } else if (event.key === "Home" || event.key === "End") {
      if (onSlider) this.pause();
      else this.stop(event.key === "Home" ? 0 : this.frames.length - 1);
    } else if (event.key === " " && !event.target.closest("button, a")) {
      this.toggle();
    } else {
      return;
    }
    if (!onSlider) event.preventDefault();
  }
}

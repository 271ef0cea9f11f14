// The hint bar over the racer's board: the server's best moves here, best first, each one a
// click away from being played. Its line stays while the player races, hints or none, so the
// board below never moves when they come and go.

import { fill, h } from "./dom.js";

export class HintBar {
  /** `play(move)`: play a hint's move. */
  constructor(play) {
    this.play = play;
    this.list = h("ol", { className: "hints", id: "hints" });
    this.label = h("span", { className: "muted hint-label" });
    this.node = h("div", { className: "hint-bar", id: "hint-bar", hidden: true }, this.label, this.list);
    this.card = null; // the best hint's card, marked on the board
    this.clear();
  }

  clear() {
    this.card = null;
    this.label.textContent = "Hint (h) lists the best moves here.";
    fill(this.list);
  }

  /** Show the server's hints (the first five) and mark the best one's card. */
  show(hints) {
    this.card = hints.length && hints[0].move.includes(">") ? hints[0].move.split(">")[0] : null;
    fill(
      this.list,
      ...hints.slice(0, 5).map((hint) =>
        h("li", { onclick: () => this.play(hint.move), title: "Play this move" }, h("code", {}, hint.move), ` ${hint.reason}`),
      ),
    );
    this.label.textContent = hints.length ? "Hints, best first (click one to play it):" : "Hints:";
    if (!hints.length) fill(this.list, h("li", { className: "none" }, "no useful move found"));
  }
}

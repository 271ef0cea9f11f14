// The racer's buttons over the boards: ready, start (for the room's creator), undo, hint,
// resign (asked once more before it is sent), rematch after a race, and copying the room's link.

import { fill, h } from "./dom.js";

export class RaceControls {
  /**
   * `node`: the toolbar to fill. `actions`: `send(fields)`, `undo()`, `hint()`, `resign()`,
   * `copyLink()`, and `redraw()` (draw the controls again from the room's copy).
   */
  constructor(node, conn, actions) {
    this.node = node;
    this.conn = conn;
    this.actions = actions;
    this.confirmingResign = false;
  }

  /** The controls of racer `me` in `view`; `playing`: may they move now? */
  render(view, me, playing) {
    const options = view.options;
    if (!playing) this.confirmingResign = false;
    const act = (label, fields, props = {}) =>
      h("button", { ...props, onclick: () => this.actions.send(fields) }, label);
    if (this.confirmingResign) {
      fill(
        this.node,
        h("span", { id: "resign-question" }, "Resign this race? You are ranked by the progress you have made."),
        h("button", { id: "resign-confirm", className: "danger", onclick: () => this.resign() }, "Yes, resign"),
        h("button", { id: "resign-cancel", onclick: () => this.askResign(false) }, "Keep racing"),
      );
      return;
    }
    fill(
      this.node,
      view.state === "waiting"
        ? act(me.ready ? "Not ready" : "Ready", { type: "ready", room: view.code, ready: !me.ready }, {
            id: "ready",
            className: me.ready ? "" : "primary",
          })
        : null,
      view.state === "waiting" && view.creator === this.conn.player
        ? act("Start now", { type: "start", room: view.code }, { id: "start" })
        : null,
      h("button", { id: "undo", disabled: !playing || options.undo === false, onclick: () => this.actions.undo() }, "Undo"),
      h("button", { id: "hint", disabled: !playing || options.hints === false, onclick: () => this.actions.hint() }, "Hint"),
      h("button", { id: "resign", disabled: !playing, onclick: () => this.askResign(true) }, "Resign"),
      // A daily attempt, a challenge's run and a bracket round's run are one attempt each: no
      // rematch. An arena pairs its next race itself (arenas.js).
      view.state === "finished" && !view.daily && !view.challenge && !view.arena && !view.bracket
        ? act("Rematch", { type: "rematch", room: view.code }, { id: "rematch" })
        : null,
      // A challenge's or a bracket's run is nobody else's room: what to share is the challenge's id (room.js).
      view.challenge || view.bracket ? null : h("button", { onclick: () => this.actions.copyLink() }, "Copy link"),
    );
  }

  /** Ask before resigning (`true`), or take the question back. */
  askResign(asking) {
    this.confirmingResign = asking;
    this.actions.redraw();
    const focus = this.node.querySelector(asking ? "#resign-cancel" : "#resign");
    if (focus) focus.focus();
  }

  resign() {
    this.confirmingResign = false;
    return this.actions.resign();
  }
}

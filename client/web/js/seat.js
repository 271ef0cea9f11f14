// Getting a seat in a room: the join form of a room link, the spectator's "Race in this room"
// while a seat is free, and the page of a code no room has.

import { fill, h, roomCode } from "./dom.js";

/** The page of a code no room has (in the room's section): no seat to take, nothing to play. */
export function missingPage(root, code) {
  root.dataset.missing = "true";
  fill(
    root,
    h("h1", { id: "no-room" }, "No such room: ", roomCode(code)),
    h(
      "p",
      {},
      "No room has this code. Check the link or the code you were given: it may be mistyped, or the room " +
        "has closed (a room closes when its last racer leaves before the race; a finished room is kept for 7 days).",
    ),
    h(
      "p",
      { className: "toolbar" },
      h("a", { href: "/#/lobby", id: "to-lobby" }, "Go to the lobby"),
      " to watch a race, open a room, race a bot or join a quick race.",
    ),
  );
}

/**
 * The form that joins room `code` (in `panel`, emptied once seated). `room` tells the outcome:
 * `status` (a status line), `seated()` (the room's copy has the player), `joined()` (draw the
 * room with the seat), `missing()` (no such room).
 */
export function joinForm(panel, conn, code, room) {
  const name = h("input", { type: "text", id: "join-name", maxlength: "24", value: conn.name || "" });
  const join = async (event) => {
    event.preventDefault();
    // An account plays under its own name (the server ignores another).
    const wanted = conn.account ? conn.name : name.value.trim();
    if (!wanted) {
      room.status.show("Choose a name first.", true);
      return;
    }
    try {
      if (wanted !== conn.name) await conn.rename(wanted);
      await conn.request({ type: "join", room: code });
      await conn.waitRoom(code, room.seated);
      fill(panel);
      room.status.show("You have a seat. Say ready when you are.");
      room.joined();
    } catch (error) {
      if (error.code === "no-such-room") {
        room.missing();
        return;
      }
      const watchable = ["race-in-progress", "race-over"].includes(error.code);
      room.status.show(`Cannot join: ${error.message}${watchable ? " You can watch it." : ""}`, true);
    }
  };
  fill(
    panel,
    h(
      "form",
      { className: "panel toolbar", id: "join-form", onsubmit: join },
      conn.account ? h("span", {}, `You join as ${conn.name}.`) : [h("label", { for: "join-name" }, "Your name"), name],
      h("button", { type: "submit", className: "primary", id: "join" }, "Join the race"),
      h("a", { href: `/#/watch/${code}` }, "or watch it"),
    ),
  );
}

/** A spectator's way to a seat: only where one is free and the race has not begun (else null). */
export function raceHere(view) {
  const open = view.state === "waiting" && view.racers.length < (view.options.max_racers ?? 2);
  return open ? h("a", { href: `/r/${view.code}`, id: "race-here" }, "Race in this room") : null;
}

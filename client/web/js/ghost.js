// Ghost races (PROTOCOL.md, `race_ghost`): race a recorded run on its deal. The server opens a
// private room for the player and the run's ghost, which plays the run's moves on their recorded
// timing, and readies the player: the countdown runs by the time the room's page opens. The page
// only names the run (a replay's room, seat and race; or a game and a deal or a past day, with a
// player or a rank) and shows the ghost's seat as the server marks it.

import { h, statusLine } from "./dom.js";

/** Race the run `fields` names; opens the new room's page (rejects with the server's refusal). */
export async function raceGhost(conn, fields) {
  const joined = await conn.request({ type: "race_ghost", ...fields });
  location.assign(`/r/${joined.room}`);
}

/** A racer's or a result's name as shown: a ghost seat says so. */
export function shownName(racer) {
  return racer.ghost ? `${racer.name} (ghost)` : racer.name;
}

/**
 * A button that races the run `fields()` names (null while there is none yet); a refusal (a run
 * of today's daily, none kept, ...) shows on `status`.
 */
export function ghostButton(conn, id, label, fields, status) {
  const race = async () => {
    const named = fields();
    if (!named) return;
    button.disabled = true;
    try {
      await raceGhost(conn, named);
    } catch (error) {
      status.show(error.message, true);
      button.disabled = false;
    }
  };
  const button = h("button", { type: "button", id, onclick: race }, label);
  return button;
}

/** The lobby's "Race your best": your best winning run kept on a deal you name, as a ghost. */
export function bestRunForm(conn) {
  const variant = h("select", { id: "best-variant" }, h("option", { value: "scorpion" }, "Scorpion"), h("option", { value: "antares" }, "Antares"));
  const deal = h("input", { type: "text", id: "best-deal", size: "8", inputmode: "numeric", required: true, placeholder: "deal", "aria-label": "Deal number" });
  const status = statusLine();
  const submit = async (event) => {
    event.preventDefault();
    const button = event.target.querySelector("button");
    button.disabled = true;
    status.show("Opening a room for you and your ghost…");
    try {
      await raceGhost(conn, { variant: variant.value, deal: deal.value.trim() });
    } catch (error) {
      status.show(error.message, true);
      button.disabled = false;
    }
  };
  return h(
    "form",
    { className: "panel", id: "best-race", onsubmit: submit },
    h("h2", {}, "Race your best"),
    h("p", { className: "muted" }, "Race the ghost of your best winning run on a deal (kept 30 days), on its recorded timing. Not rated."),
    h("div", { className: "toolbar" }, variant, deal, h("button", { type: "submit", className: "primary" }, "Race your ghost")),
    status,
  );
}

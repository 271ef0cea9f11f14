// Short notices under the header, on every page, for what the server pushes unasked: a
// challenge waiting for the player's run (`challenge_waiting`), a challenge's result
// (`challenge_result`), a bracket's start (`bracket_started`) and a bracket round that closed with
// the player going on (`round_closed`). Each stays until dismissed (the player may be looking elsewhere); the newest
// comes first, and only the last few are kept. A push the server sends again (it may, after
// recording a run twice) is said once.

import { statusText } from "./challenges.js";
import { fill, h, variantName } from "./dom.js";

/** How many notices stay on screen at once. */
const KEPT = 3;

export class Notices {
  constructor() {
    this.node = h("div", { id: "notices", role: "status", "aria-live": "polite" });
    this.said = new Set();
  }

  /** Listen to `conn`'s pushes. */
  follow(conn) {
    conn.on((kind, message) => {
      if (kind === "challenge_result") this.challenge(message.challenge);
      if (kind === "challenge_waiting") this.waiting(message.challenge);
      if (kind === "round_closed") this.round(message);
      if (kind === "bracket_started") this.started(message);
    });
  }

  /** `Challenge QX7M2KDA (Antares, rated): You won · your rating 1662 (+162)`, with the way to the inbox. */
  challenge(line) {
    const kind = line.rated ? "rated" : "casual";
    const words = `Challenge ${line.id} (${variantName(line.variant)}, ${kind}): ${statusText(line, Date.now())}.`;
    this.show("challenge_result", `${line.id}:${line.state}`, words, "/#/challenges/inbox", "Your challenges");
  }

  /** `Ann challenges you (Antares, rated): waiting for you · 23 h left.`, with the way to play it. */
  waiting(line) {
    const kind = line.rated ? "rated" : "casual";
    const words = `${line.challenger} challenges you (${variantName(line.variant)}, ${kind}): ${statusText(line, Date.now())}.`;
    this.show("challenge_waiting", `${line.id}:waiting`, words, "/#/challenges/inbox", "Play it from your challenges");
  }

  /** A bracket's start time came: play round 1 now, or it was cancelled. */
  started({ bracket, round }) {
    const href = `/#/bracket/${bracket.id}`;
    if (round && round.you === "to-play") {
      this.show("bracket_started", `${bracket.id}:start`, `${bracket.name} started: play round 1 now.`, href, "Play your round");
    } else if (!round) {
      this.show("bracket_started", `${bracket.id}:start`, `${bracket.name} was cancelled: too few players registered.`, href, "The bracket");
    }
  }

  /** A round closed: a notice only when the player goes on (the next round waits for their run). */
  round({ bracket, round, next }) {
    if (!next || next.you !== "to-play") return;
    const words = `${bracket.name}: round ${round.number} closed and you go on. Play round ${next.number} now.`;
    this.show("round_closed", `${bracket.id}:${round.number}`, words, `/#/bracket/${bracket.id}`, "Play your round");
  }

  show(kind, key, words, href, label) {
    if (this.said.has(key)) return;
    this.said.add(key);
    const notice = h("p", { className: "notice", dataset: { kind } }, h("span", {}, words, " ", h("a", { href }, label)));
    notice.append(h("button", { type: "button", className: "dismiss", title: "Dismiss", "aria-label": "Dismiss", onclick: () => notice.remove() }, "×"));
    // A link followed is read: the notice goes.
    notice.querySelector("a").addEventListener("click", () => notice.remove());
    fill(this.node, notice, ...[...this.node.children].slice(0, KEPT - 1));
  }
}

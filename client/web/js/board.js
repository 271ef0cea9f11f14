// Drawing a board: the piles the room lists (name and kind, in pile-number order) with the
// cards the server sent. Face-down cards (null) are drawn as backs. It knows no rules: the
// layout comes from pile kinds only. Cards that moved since the last drawing slide from
// where they were (FLIP with the Web Animations API).

import { cardLabel, cardName, cardText, isRed, rankLabel, suitSymbol } from "./cards.js";
import { fill } from "./dom.js";

const TABLEAU_KINDS = new Set(["scorpion", "freecell"]);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function cardElement(card, pileName, index) {
  if (card === null) {
    const back = element("div", "card down");
    back.dataset.pile = pileName;
    back.dataset.index = String(index);
    back.setAttribute("aria-label", "face-down card");
    return back;
  }
  const node = element("div", `card up ${isRed(card) ? "red" : "black"}`);
  node.dataset.card = cardText(card);
  node.dataset.pile = pileName;
  node.dataset.index = String(index);
  node.setAttribute("aria-label", cardName(card));
  node.title = cardLabel(card);
  const corner = element("span", "corner");
  corner.append(element("span", "rank", rankLabel(card)), element("span", "suit", suitSymbol(card)));
  node.append(corner, element("span", "pip", suitSymbol(card)));
  return node;
}

/** A board view in `container`. `draw(piles, board)` redraws it; options mark selection and cursor. */
export class BoardView {
  constructor(container, { small = false } = {}) {
    this.container = container;
    this.small = small;
  }

  /**
   * Draw `board` (a list of piles of card numbers or null) laid out by `piles` (PileInfo list).
   * `marks`: { selected: {pile, index}, cursor: {pile, index}, hint: card text }.
   */
  draw(piles, board, marks = {}) {
    // After a resize the old positions mean nothing: draw without sliding.
    const width = this.container.clientWidth;
    const before = width === this.width ? this.positions() : new Map();
    this.width = width;
    const root = element("div", `board${this.small ? " small" : ""}`);
    const top = element("div", "board-top");
    const tableau = element("div", "board-tableau");
    const columns = piles.filter((p) => TABLEAU_KINDS.has(p.kind)).length || piles.length;
    root.style.setProperty("--cols", String(columns));
    piles.forEach((info, index) => {
      const cards = board ? board[index] || [] : [];
      const pile = element("div", `pile pile-${info.kind}`);
      pile.dataset.pile = info.name;
      pile.dataset.kind = info.kind;
      pile.dataset.count = String(cards.length);
      pile.append(element("span", "pile-name", info.name));
      if (marks.cursor && marks.cursor.pile === info.name) pile.classList.add("cursor");
      if (TABLEAU_KINDS.has(info.kind)) {
        let up = 0;
        let down = 0;
        cards.forEach((card, i) => {
          const node = cardElement(card, info.name, i);
          node.style.setProperty("--up", String(up));
          node.style.setProperty("--down", String(down));
          if (card === null) down += 1;
          else up += 1;
          this.mark(node, info.name, i, card, marks);
          pile.append(node);
        });
        pile.style.setProperty("--up", String(Math.max(0, up - (cards.length && cards.at(-1) !== null ? 1 : 0))));
        pile.style.setProperty("--down", String(down - (cards.length && cards.at(-1) === null ? 1 : 0)));
        tableau.append(pile);
      } else {
        // Cells, foundations and the stock show their top card; the count says how many.
        if (cards.length) {
          const node = cardElement(cards.at(-1), info.name, cards.length - 1);
          this.mark(node, info.name, cards.length - 1, cards.at(-1), marks);
          pile.append(node);
          if (cards.length > 1) pile.append(element("span", "count", String(cards.length)));
        }
        top.append(pile);
      }
    });
    root.append(top, tableau);
    fill(this.container, root);
    this.animate(before);
  }

  mark(node, pileName, index, card, marks) {
    const { selected, cursor, hint } = marks;
    if (selected && selected.pile === pileName && index >= selected.index) node.classList.add("selected");
    if (cursor && cursor.pile === pileName && cursor.index === index) node.classList.add("cursor");
    if (hint && card !== null && cardText(card) === hint) node.classList.add("hinted");
  }

  positions() {
    const seen = new Map();
    for (const node of this.container.querySelectorAll(".card.up")) {
      seen.set(node.dataset.card, node.getBoundingClientRect());
    }
    return seen;
  }

  animate(before) {
    if (!before.size || window.matchMedia("(prefers-reduced-motion: reduce)").matches) return;
    for (const node of this.container.querySelectorAll(".card.up")) {
      const was = before.get(node.dataset.card);
      if (!was) {
        node.animate([{ opacity: 0, transform: "scale(0.8)" }, { opacity: 1, transform: "none" }], {
          duration: 220,
          easing: "ease-out",
        });
        continue;
      }
      const now = node.getBoundingClientRect();
      const dx = was.left - now.left;
      const dy = was.top - now.top;
      if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
      node.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], {
        duration: 260,
        easing: "ease-out",
      });
    }
  }
}

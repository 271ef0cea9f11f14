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

/** A caption for each tableau kind, shown when a board has tableau piles of more than one kind. */
const GROUP_TEXT = {
  scorpion: "Scorpion: down in suit",
  freecell: "FreeCell: alternate colours",
};

/** Runs of consecutive piles (in pile-number order) of one kind: [{kind, piles: [[info, index]]}]. */
function groupsOf(entries) {
  const groups = [];
  for (const entry of entries) {
    const last = groups.at(-1);
    if (last && last.kind === entry[0].kind) last.piles.push(entry);
    else groups.push({ kind: entry[0].kind, piles: [entry] });
  }
  return groups;
}

/**
 * What a pile's drawing depends on besides its kind: its cards and the marks that fall on it
 * (the hint names a card, not a pile: a new hint redraws every pile).
 */
function pileKey(name, cards, { selected, cursor, hint }) {
  const at = (mark) => (mark && mark.pile === name ? mark.index : null);
  return JSON.stringify([cards, at(selected), at(cursor), hint || null]);
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
   * Every pile shows its name above it (the move notation needs it, filled or not); piles of
   * one kind stand together, and kinds apart.
   */
  draw(piles, board, marks = {}) {
    // After a resize the old positions mean nothing: draw without sliding.
    const width = this.container.clientWidth;
    const layout = JSON.stringify([piles, this.small, width]);
    const contents = piles.map((_, index) => (board && board[index]) || []);
    const keys = piles.map((info, index) => pileKey(info.name, contents[index], marks));
    const kept = layout === this.layout && this.root && this.container.firstChild === this.root;
    // A pile whose cards and marks are as drawn keeps its nodes: another racer's update
    // redraws nothing here, a click in progress (pressed on a card, released on the same
    // card) is not lost, and the browser restyles and repaints only the piles that changed.
    if (kept && keys.every((key, index) => key === this.keys[index])) return;
    const before = width === this.width && this.moving() ? this.positions() : new Map();
    this.width = width;
    if (kept) {
      keys.forEach((key, index) => {
        if (key === this.keys[index]) return;
        const node = this.pile(piles[index], contents[index], marks);
        this.nodes[index].replaceWith(node);
        this.nodes[index] = node;
      });
    } else {
      this.build(piles, contents, marks);
      this.layout = layout;
    }
    this.keys = keys;
    this.animate(before);
  }

  /** Build the whole board anew (the piles or the width changed); `contents`: each pile's cards. */
  build(piles, contents, marks) {
    const root = element("div", `board${this.small ? " small" : ""}`);
    const entries = piles.map((info, index) => [info, index]);
    const tableauGroups = groupsOf(entries.filter(([info]) => TABLEAU_KINDS.has(info.kind)));
    const topGroups = groupsOf(entries.filter(([info]) => !TABLEAU_KINDS.has(info.kind)));
    const columns = tableauGroups.reduce((sum, group) => sum + group.piles.length, 0) || piles.length;
    root.style.setProperty("--cols", String(columns));
    root.style.setProperty("--groups", String(Math.max(1, tableauGroups.length)));
    const captioned = tableauGroups.length > 1;
    this.nodes = [];
    const row = (className, groups) => {
      const node = element("div", className);
      for (const group of groups) {
        const box = element("div", `pile-group group-${group.kind}`);
        box.dataset.kind = group.kind;
        if (captioned && TABLEAU_KINDS.has(group.kind)) {
          const caption = element("div", "group-name", GROUP_TEXT[group.kind] || group.kind);
          caption.title = caption.textContent;
          box.append(caption);
        }
        const members = element("div", "group-piles");
        for (const [info, index] of group.piles) {
          this.nodes[index] = this.pile(info, contents[index], marks);
          members.append(this.nodes[index]);
        }
        box.append(members);
        node.append(box);
      }
      return node;
    };
    root.append(row("board-top", topGroups), row("board-tableau", tableauGroups));
    fill(this.container, root);
    this.root = root;
  }

  /** One pile: its name, then its cards (fanned in the tableau; the top card elsewhere). */
  pile(info, cards, marks) {
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
    } else if (cards.length) {
      // Cells, foundations and the stock show their top card; the count says how many.
      const node = cardElement(cards.at(-1), info.name, cards.length - 1);
      this.mark(node, info.name, cards.length - 1, cards.at(-1), marks);
      pile.append(node);
      if (cards.length > 1) pile.append(element("span", "count", String(cards.length)));
    }
    return pile;
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

  /** Cards slide, unless the player asks for reduced motion. */
  moving() {
    return !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  }

  animate(before) {
    if (!before.size) return;
    // Every position is read before any animation starts: a started animation invalidates the
    // style, so reading and starting in turn would recompute it once a card.
    const cards = [...this.container.querySelectorAll(".card.up")].map((node) => [
      node,
      before.get(node.dataset.card),
      node.getBoundingClientRect(),
    ]);
    for (const [node, was, now] of cards) {
      if (!was) {
        node.animate([{ opacity: 0, transform: "scale(0.8)" }, { opacity: 1, transform: "none" }], {
          duration: 220,
          easing: "ease-out",
        });
        continue;
      }
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

// Playing on one's own board with the mouse (click a card, then a pile; double-click sends a
// card home; drag and drop), touch (the same through pointer events) and the keyboard (arrows
// move a cursor, Enter or Space picks up and puts down, Escape drops the selection).
// It turns gestures into move texts (`QS>5`, `deal`) and lets the server judge them.

/** Two clicks on one card this close together (ms) are a double click. The first click redraws
 * the board, so the browser's own `dblclick` never comes: the pair is recognised here. */
const DOUBLE_CLICK_MS = 500;

export class PlayInput {
  /**
   * `host`: the element holding the player's board. `callbacks`: `move(text)`, `redraw()`,
   * `piles()` (the room's PileInfo list), `board()` (the player's board), `enabled()`.
   */
  constructor(host, callbacks) {
    this.host = host;
    this.cb = callbacks;
    this.selected = null; // {pile, index, card}
    this.cursor = null; // {pile, index}
    this.drag = null;
    this.suppressClick = false;
    this.picked = null; // {card, at}: the card the last click picked up, and when
    host.addEventListener("click", (e) => this.onClick(e));
    host.addEventListener("pointerdown", (e) => this.onPointerDown(e));
    this.onMove = (e) => this.onPointerMove(e);
    this.onUp = (e) => this.onPointerUp(e);
  }

  marks() {
    return { selected: this.selected, cursor: this.cursor };
  }

  clear() {
    this.selected = null;
    this.cb.redraw();
  }

  select(cardNode) {
    this.selected = {
      pile: cardNode.dataset.pile,
      index: Number(cardNode.dataset.index),
      card: cardNode.dataset.card,
    };
    this.cb.redraw();
  }

  /** Put the selected card (with what lies on it) on `pileName`. */
  drop(pileName) {
    const card = this.selected.card;
    this.selected = null;
    this.cb.redraw();
    this.cb.move(`${card}>${pileName}`);
  }

  onClick(event) {
    if (this.suppressClick) {
      this.suppressClick = false;
      return;
    }
    if (!this.cb.enabled()) return;
    const card = event.target.closest(".card");
    const pile = event.target.closest(".pile");
    const picked = this.picked;
    this.picked = null;
    if (!pile) return;
    if (pile.dataset.kind === "stock") {
      this.selected = null;
      this.cb.move("deal");
      return;
    }
    // The second click of a double click on a card the first one picked up: send it home.
    // (Two quick clicks whose first put a card down are two moves, not a double click.)
    if (
      picked &&
      card &&
      card.dataset.card === picked.card &&
      event.timeStamp - picked.at <= DOUBLE_CLICK_MS
    ) {
      this.selected = null;
      this.cb.redraw();
      this.cb.move(`${picked.card}>h`);
      return;
    }
    if (this.selected) {
      if (pile.dataset.pile === this.selected.pile) {
        // Another card of the same pile: pick that one instead (or drop the selection).
        if (card && card.classList.contains("up") && Number(card.dataset.index) !== this.selected.index) {
          this.pick(card, event);
        } else {
          this.clear();
        }
        return;
      }
      this.drop(pile.dataset.pile);
      return;
    }
    if (card && card.classList.contains("up")) this.pick(card, event);
  }

  /** Select `card` by a click, remembering it for a double click. */
  pick(card, event) {
    this.picked = { card: card.dataset.card, at: event.timeStamp };
    this.select(card);
  }

  onPointerDown(event) {
    if (!this.cb.enabled() || event.button !== 0) return;
    const card = event.target.closest(".card.up");
    if (!card) return;
    this.drag = { card, x: event.clientX, y: event.clientY, ghost: null, pointer: event.pointerId };
    window.addEventListener("pointermove", this.onMove);
    window.addEventListener("pointerup", this.onUp);
    window.addEventListener("pointercancel", this.onUp);
  }

  onPointerMove(event) {
    const drag = this.drag;
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.ghost) {
      if (Math.hypot(dx, dy) < 6) return;
      drag.ghost = this.ghostOf(drag.card);
      document.body.append(drag.ghost);
    }
    event.preventDefault();
    drag.ghost.style.setProperty("left", `${drag.rect.left + dx}px`);
    drag.ghost.style.setProperty("top", `${drag.rect.top + dy}px`);
  }

  /** A floating copy of the dragged card and every card lying on it. */
  ghostOf(card) {
    const pile = card.closest(".pile");
    const index = Number(card.dataset.index);
    const rect = card.getBoundingClientRect();
    this.drag.rect = rect;
    const ghost = document.createElement("div");
    ghost.className = "drag-ghost board";
    const board = card.closest(".board");
    for (const name of ["--card-w", "--card-h", "--fan-up", "--fan-down"]) {
      ghost.style.setProperty(name, getComputedStyle(board).getPropertyValue(name));
    }
    ghost.style.setProperty("left", `${rect.left}px`);
    ghost.style.setProperty("top", `${rect.top}px`);
    for (const node of pile.querySelectorAll(".card")) {
      if (Number(node.dataset.index) < index) continue;
      const copy = node.cloneNode(true);
      const offset = node.getBoundingClientRect().top - rect.top;
      copy.style.setProperty("top", `${offset}px`);
      ghost.append(copy);
      node.classList.add("dragging");
    }
    return ghost;
  }

  onPointerUp(event) {
    window.removeEventListener("pointermove", this.onMove);
    window.removeEventListener("pointerup", this.onUp);
    window.removeEventListener("pointercancel", this.onUp);
    const drag = this.drag;
    this.drag = null;
    if (!drag || !drag.ghost) return;
    drag.ghost.remove();
    for (const node of this.host.querySelectorAll(".dragging")) node.classList.remove("dragging");
    this.suppressClick = true;
    setTimeout(() => {
      this.suppressClick = false;
    }, 0);
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const pile = under && under.closest(".pile");
    if (!pile || !this.host.contains(pile) || pile.dataset.pile === drag.card.dataset.pile) return;
    this.selected = null;
    this.cb.move(`${drag.card.dataset.card}>${pile.dataset.pile}`);
  }

  /** Keyboard play; returns true when the key was used. */
  onKey(event) {
    if (!this.cb.enabled()) return false;
    const piles = this.cb.piles();
    const board = this.cb.board();
    if (!piles || !board) return false;
    const names = piles.map((p) => p.name);
    if (!this.cursor) this.cursor = { pile: names[0], index: Math.max(0, board[0].length - 1) };
    let pileNumber = names.indexOf(this.cursor.pile);
    const cards = () => board[pileNumber] || [];
    const firstUp = () => Math.max(0, cards().findIndex((c) => c !== null));
    switch (event.key) {
      case "ArrowLeft":
      case "ArrowRight": {
        const step = event.key === "ArrowLeft" ? -1 : 1;
        pileNumber = (pileNumber + step + names.length) % names.length;
        this.cursor = { pile: names[pileNumber], index: Math.max(0, cards().length - 1) };
        break;
      }
      case "ArrowUp":
        this.cursor = { ...this.cursor, index: Math.max(firstUp(), this.cursor.index - 1) };
        break;
      case "ArrowDown":
        this.cursor = { ...this.cursor, index: Math.min(Math.max(0, cards().length - 1), this.cursor.index + 1) };
        break;
      case "Enter":
      case " ": {
        const info = piles[pileNumber];
        if (this.selected) {
          if (this.selected.pile === this.cursor.pile) this.selected = null;
          else {
            this.drop(this.cursor.pile);
            return true;
          }
        } else if (info.kind === "stock") {
          this.cb.move("deal");
          return true;
        } else {
          const card = this.host.querySelector(
            `.card.up[data-pile="${CSS.escape(this.cursor.pile)}"][data-index="${this.cursor.index}"]`,
          );
          if (card) {
            this.select(card);
            return true;
          }
        }
        break;
      }
      case "Escape":
        this.selected = null;
        break;
      default:
        return false;
    }
    this.cb.redraw();
    return true;
  }
}

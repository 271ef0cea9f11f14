// Cards as the protocol numbers them: suit * 13 + rank - 1 (PROTOCOL.md, "Cards").

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const SHOWN_RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUITS = ["C", "S", "H", "D"];
const SYMBOLS = ["\u2663", "\u2660", "\u2665", "\u2666"];
const SUIT_NAMES = ["clubs", "spades", "hearts", "diamonds"];

/** A card's notation text: rank then suit, `QS`, `TC`, `AH`. */
export function cardText(card) {
  return RANKS[card % 13] + SUITS[Math.floor(card / 13)];
}

/** What a person reads on the card: `10♥`. */
export function cardLabel(card) {
  return SHOWN_RANKS[card % 13] + SYMBOLS[Math.floor(card / 13)];
}

export function cardName(card) {
  return `${SHOWN_RANKS[card % 13]} of ${SUIT_NAMES[Math.floor(card / 13)]}`;
}

export function isRed(card) {
  const suit = Math.floor(card / 13);
  return suit === 2 || suit === 3;
}

export function rankLabel(card) {
  return SHOWN_RANKS[card % 13];
}

export function suitSymbol(card) {
  return SYMBOLS[Math.floor(card / 13)];
}

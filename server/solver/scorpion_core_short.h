/* Short keys: the Scorpion search's keys after the deal (see scorpion_core.c).
 *
 * The card directly under a card changes only when that card departs (it leads a move:
 * scorpion_dead.py's fact 2), and then for good: onto its successor, or, a King, to the bottom
 * of an empty column. A face-down card turns up exactly when the card on it departs (only its
 * predecessor could land on it, and only once it is a top card). So a position after the deal
 * is told, up to the order of its columns, by which cards lie on another card than they lay on
 * at the search's start (`moved`), the cards the start's stock cards lie on (`under`) and the
 * suits home; and it tells them. That is what the canonical key tells too (columns ordered by
 * their bottom card), so the two merge the same positions. A short key takes 11 bytes, and a
 * child's is its parent's with the one card the move moved (and any suit it sent home), where
 * a canonical key is made anew from every column. Before the deal the order of the stock's
 * columns matters, which short keys do not hold: positions with a stock keep canonical keys.
 * Bits 52-55 of moved are the suits home, whose cards' bits are cleared. */
#ifndef SCORPION_CORE_SHORT_H
#define SCORPION_CORE_SHORT_H

#include "scorpion_core.h"

typedef struct {
    uint64_t moved;
    uint8_t under[STOCK_COLUMNS]; /* the card each start's stock card lies on; BOTTOM; NOT_ON_TABLE */
} Short;

#define BOTTOM 52
#define NOT_ON_TABLE 255

/* What short keys are made against: the card under each card at the start (BOTTOM at a
 * column's bottom) and each start's stock card's place in `under` (-1: not a stock card). */
typedef struct {
    uint8_t under[52];
    int8_t stock_slot[52];
} Start;

static void start_of(const Pos *p, Start *o) {
    memset(o->under, BOTTOM, sizeof o->under);
    memset(o->stock_slot, -1, sizeof o->stock_slot);
    for (int i = 0; i < NCOL; i++)
        for (int j = 0; j < p->n[i]; j++) o->under[p->c[i][j]] = j ? p->c[i][j - 1] : BOTTOM;
    for (int i = 0; i < p->ns; i++) o->stock_slot[p->stock[i]] = (int8_t)i;
}

/* Records that card x now lies on `under` in k. */
static inline void short_place(const Start *o, Short *k, int x, int under) {
    int slot = o->stock_slot[x];
    if (slot >= 0)
        k->under[slot] = (uint8_t)under;
    else if (under != o->under[x])
        k->moved |= 1ULL << x;
    else
        k->moved &= ~(1ULL << x);
}

/* Clears the cards of the suits that went home from k and notes them home. */
static inline void short_home(const Start *o, Short *k, int home) {
    for (int suit = 0; suit < 4; suit++) {
        if (!(home >> suit & 1) || (k->moved >> (52 + suit) & 1)) continue;
        k->moved = (k->moved & ~(0x1FFFULL << (13 * suit))) | 1ULL << (52 + suit);
        for (int x = 13 * suit; x < 13 * suit + 13; x++)
            if (o->stock_slot[x] >= 0) k->under[o->stock_slot[x]] = NOT_ON_TABLE;
    }
}

/* The short key of p (after the deal) made from its columns. */
static void short_of(const Pos *p, const Start *o, Short *k) {
    k->moved = 0;
    memset(k->under, NOT_ON_TABLE, sizeof k->under);
    for (int i = 0; i < NCOL; i++)
        for (int j = 0; j < p->n[i]; j++) short_place(o, k, p->c[i][j], j ? p->c[i][j - 1] : BOTTOM);
    short_home(o, k, p->home);
}

/* The short key of the child that m (not the deal) makes from p, whose key is k, but for
 * suits going home (short_home, with the child's home suits). */
static inline void short_child(const Pos *p, const Start *o, const Short *k, Mv m, Short *child) {
    *child = *k;
    int lead = p->c[m.s][m.j], t = m.t;
    short_place(o, child, lead, p->n[t] ? p->c[t][p->n[t] - 1] : BOTTOM);
}

/* A short key's two words for the table: moved and the first stock card's place, then the
 * other two places above the sleep set's bits (places in six bits: 63 for NOT_ON_TABLE). */
static inline uint64_t place_bits(uint8_t under) { return under == NOT_ON_TABLE ? 63 : under; }
static inline uint64_t short_w0(const Short *k) { return k->moved | place_bits(k->under[0]) << 56; }
static inline uint64_t short_w1(const Short *k) { return place_bits(k->under[1]) << 52 | place_bits(k->under[2]) << 58; }

#endif

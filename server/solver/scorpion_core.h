/* The Scorpion search's C core: the types its parts share (see scorpion_core.c). */
#ifndef SCORPION_CORE_H
#define SCORPION_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NCOL 7
#define STOCK_COLUMNS 3
#define MAXC 56
#define FACE_DOWN_BASE 100
#define NOWHERE 255
#define NO_CHECK (-2)
#define FULL_CHECK (-1)
#define MAX_MOVES 48
#define POLL_EVERY 2048

typedef struct {
    uint8_t n[NCOL];   /* cards in the column */
    uint8_t hid[NCOL]; /* of which face down, at the bottom */
    uint8_t ns;        /* cards in the stock */
    uint8_t stock[3];
    uint8_t home;      /* suits gone home, one bit each */
    uint8_t c[NCOL][MAXC];
} Pos;

/* A move: the group from card index j of column s onto column t; the deal is s = -1. */
typedef struct {
    int8_t s;
    uint8_t j;
    int8_t t;
} Mv;

typedef struct {
    uint8_t col[64];
    uint8_t idx[64];
} Loc;

static inline void locate(const Pos *p, Loc *loc) {
    memset(loc->col, NOWHERE, sizeof loc->col);
    for (int i = 0; i < NCOL; i++)
        for (int j = 0; j < p->n[i]; j++) {
            loc->col[p->c[i][j]] = (uint8_t)i;
            loc->idx[p->c[i][j]] = (uint8_t)j;
        }
}

/* Copies 8 bytes at a time (columns have room to spare at their ends), which is faster than
 * one memcpy of the whole struct: most of a column's room is empty. */
static inline void copy_cards(uint8_t *to, const uint8_t *from, int n) {
    for (int i = 0; i < n; i += 8) memcpy(to + i, from + i, 8);
}

/* The transposition table (scorpion_core_table.c). Canonical keys (positions with a stock)
 * are kept exactly in an arena, each followed by its position's sleep set (eight bytes), and
 * found through open addressing on a key's hash. (Tried and slower here: keys in the slots, one
 * cache line each; eight-byte slots of offset and hash tag; huge pages.) Short keys (after the
 * deal, see scorpion_core.c) are two words kept in the slots of a second open-addressing
 * table, with the sleep set in the low SLEEP_BITS of the second word: one cache miss a lookup.
 * A stored position's place (`at`) says which table holds it, in its lowest bit. */
typedef struct {
    uint64_t hash; /* 0: an empty slot */
    uint64_t offset;
} Slot;

/* A short key's slot: both words 0 when empty (no short key is). */
typedef struct {
    uint64_t w0, w1;
} Pair;

/* Sleep sets name lead cards, 0..51. */
#define SLEEP_BITS ((1ULL << 52) - 1)

typedef struct {
    Slot *slots;
    size_t capacity, count;
    uint8_t *arena;
    size_t used, size;
    Pair *pairs;
    size_t pair_capacity, pair_count;
} Table;

/* The canonical key of a position into key (room for 72 bytes); its length. */
int make_key(const Pos *p, uint8_t *key);
int table_init(Table *t);
void table_free(Table *t);
/* Adds the key with the sleep set `sleep` (a new key only): 1 if it is new, 0 if it was
 * there, -1 when memory ran out; *at is where the key's sleep set is kept. */
int table_add(Table *t, const uint8_t *key, int n, uint64_t sleep, size_t *at);
/* The hash table_add uses (never 0), and table_add with it already made. */
uint64_t hash_key(const uint8_t *key, int n);
int table_add_hashed(Table *t, const uint8_t *key, int n, uint64_t h, uint64_t sleep, size_t *at);
/* The same for a short key (w0, w1; w1's SLEEP_BITS clear) and its hash_short. */
uint64_t hash_short(uint64_t w0, uint64_t w1);
int table_add_short(Table *t, uint64_t w0, uint64_t w1, uint64_t h, uint64_t sleep, size_t *at);

/* Positions stored, in both tables. */
static inline size_t table_count(const Table *t) { return t->count + t->pair_count; }

/* Asks the memory for the slot where a key of hash h is looked up first, so that the lookup
 * later does not wait for it (the table is far larger than the caches, and each lookup
 * otherwise stalls on its slot). */
static inline void table_prefetch_slot(const Table *t, uint64_t h) {
    __builtin_prefetch(&t->slots[h & (t->capacity - 1)]);
}

static inline void table_prefetch_short(const Table *t, uint64_t h) {
    __builtin_prefetch(&t->pairs[h & (t->pair_capacity - 1)]);
}

static inline uint64_t table_sleep(const Table *t, size_t at) {
    if (at & 1) return t->pairs[at >> 1].w1 & SLEEP_BITS;
    uint64_t sleep;
    memcpy(&sleep, t->arena + (at >> 1), sizeof sleep);
    return sleep;
}

static inline void table_set_sleep(Table *t, size_t at, uint64_t sleep) {
    if (at & 1) {
        Pair *pair = &t->pairs[at >> 1];
        pair->w1 = (pair->w1 & ~SLEEP_BITS) | sleep;
        return;
    }
    memcpy(t->arena + (at >> 1), &sleep, sizeof sleep);
}

/* The lost-position test (scorpion_core_lost.c), scorpion_dead.is_lost: from the face-up
 * card start, or over every card for FULL_CHECK. */
int core_is_lost(const Pos *p, int start);
/* core_is_lost with the position's card locations already found (locate), for the search:
 * it leaves out fact 4's face-down pairs, which only the deal makes and the search's caller
 * looks for at its start (scorpion_search.depth_first_scorpion). */
int core_is_lost_at(const Pos *p, const Loc *loc, int start);

/* Keeps in moves (all the legal moves after the deal) those of a stubborn set, in order;
 * their number (scorpion_core_stubborn.c). skip: lead cards of moves not to try. */
int stubborn_moves(const Pos *p, const Loc *loc, uint64_t skip, Mv *moves, int n);

#endif

/* The Scorpion search's transposition table: each position's key, stored exactly. */
#include "scorpion_core.h"


/* The canonical key (_key): columns with the same role in a fixed order, so positions that
 * differ only in their numbering are one position. Every card is unique, so ordering the
 * columns by their bottom card (empty ones last, all alike) is canonical; marker bytes
 * (>= 100) delimit the columns. */
int make_key(const Pos *p, uint8_t *key) {
    int order[NCOL], rank[NCOL];
    for (int i = 0; i < NCOL; i++) {
        order[i] = i;
        rank[i] = p->n[i] ? p->c[i][0] : 255;
    }
    int from = p->ns ? STOCK_COLUMNS : 0;
    for (int a = from + 1; a < NCOL; a++) { /* insertion sort of the interchangeable columns */
        int x = order[a], b = a - 1;
        while (b >= from && rank[order[b]] > rank[x]) {
            order[b + 1] = order[b];
            b--;
        }
        order[b + 1] = x;
    }
    int n = 0;
    key[n++] = p->ns;
    for (int i = 0; i < NCOL; i++) {
        int col = order[i];
        key[n++] = (uint8_t)(FACE_DOWN_BASE + p->hid[col]);
        copy_cards(&key[n], p->c[col], p->n[col]); /* key has room for the overrun */
        n += p->n[col];
    }
    memcpy(&key[n], p->stock, p->ns);
    return n + p->ns;
}

uint64_t hash_key(const uint8_t *key, int n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, key + i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    uint64_t w = 0;
    memcpy(&w, key + i, (size_t)(n - i));
    h = (h ^ w) * 0x94D049BB133111EBULL;
    h ^= h >> 29;
    return h | 1; /* never 0, the empty slot */
}

int table_init(Table *t) {
    memset(t, 0, sizeof *t);
    t->capacity = 1 << 16;
    t->slots = PyMem_RawCalloc(t->capacity, sizeof *t->slots);
    t->size = 1 << 20;
    t->arena = PyMem_RawMalloc(t->size);
    t->pair_capacity = 1 << 16;
    t->pairs = PyMem_RawCalloc(t->pair_capacity, sizeof *t->pairs);
    return t->slots && t->arena && t->pairs;
}

void table_free(Table *t) {
    PyMem_RawFree(t->slots);
    PyMem_RawFree(t->arena);
    PyMem_RawFree(t->pairs);
}

static int table_grow(Table *t) {
    size_t capacity = t->capacity * 2;
    Slot *slots = PyMem_RawCalloc(capacity, sizeof *slots);
    if (!slots) return 0;
    for (size_t i = 0; i < t->capacity; i++) {
        if (!t->slots[i].hash) continue;
        size_t slot = t->slots[i].hash & (capacity - 1);
        while (slots[slot].hash) slot = (slot + 1) & (capacity - 1);
        slots[slot] = t->slots[i];
    }
    PyMem_RawFree(t->slots);
    t->slots = slots;
    t->capacity = capacity;
    return 1;
}

int table_add(Table *t, const uint8_t *key, int n, uint64_t sleep, size_t *at) {
    return table_add_hashed(t, key, n, hash_key(key, n), sleep, at);
}

int table_add_hashed(Table *t, const uint8_t *key, int n, uint64_t h, uint64_t sleep, size_t *at) {
    size_t slot = h & (t->capacity - 1);
    while (t->slots[slot].hash) {
        if (t->slots[slot].hash == h) {
            const uint8_t *stored = t->arena + t->slots[slot].offset;
            if (stored[0] == n && !memcmp(stored + 1, key, (size_t)n)) {
                *at = (t->slots[slot].offset + 1 + (size_t)n) << 1;
                return 0;
            }
        }
        slot = (slot + 1) & (t->capacity - 1);
    }
    if (t->used + (size_t)n + 1 + sizeof sleep > t->size) {
        size_t size = t->size * 2;
        uint8_t *arena = PyMem_RawRealloc(t->arena, size);
        if (!arena) return -1;
        t->arena = arena;
        t->size = size;
    }
    t->slots[slot].hash = h;
    t->slots[slot].offset = t->used;
    t->arena[t->used] = (uint8_t)n;
    memcpy(t->arena + t->used + 1, key, (size_t)n);
    size_t sleep_at = t->used + 1 + (size_t)n;
    *at = sleep_at << 1;
    memcpy(t->arena + sleep_at, &sleep, sizeof sleep);
    t->used += (size_t)n + 1 + sizeof sleep;
    t->count++;
    /* Doubled at 70% full: linear probing stays short, and each doubling costs a rehash. */
    if (t->count * 10 > t->capacity * 7 && !table_grow(t)) return -1;
    return 1;
}

uint64_t hash_short(uint64_t w0, uint64_t w1) {
    uint64_t h = (w0 ^ 0x9E3779B97F4A7C15ULL) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
    h = (h ^ w1) * 0x94D049BB133111EBULL;
    h ^= h >> 29;
    return h | 1; /* never 0, as hash_key: 0 stands for no key in the search's frames */
}

static size_t pair_slot(const Pair *pairs, size_t capacity, uint64_t w0, uint64_t w1, uint64_t h) {
    size_t slot = h & (capacity - 1);
    while ((pairs[slot].w0 | pairs[slot].w1) &&
           (pairs[slot].w0 != w0 || (pairs[slot].w1 & ~SLEEP_BITS) != w1))
        slot = (slot + 1) & (capacity - 1);
    return slot;
}

static int pairs_grow(Table *t) {
    size_t capacity = t->pair_capacity * 2;
    Pair *pairs = PyMem_RawCalloc(capacity, sizeof *pairs);
    if (!pairs) return 0;
    for (size_t i = 0; i < t->pair_capacity; i++) {
        Pair p = t->pairs[i];
        if (!(p.w0 | p.w1)) continue;
        uint64_t key = p.w1 & ~SLEEP_BITS;
        pairs[pair_slot(pairs, capacity, p.w0, key, hash_short(p.w0, key))] = p;
    }
    PyMem_RawFree(t->pairs);
    t->pairs = pairs;
    t->pair_capacity = capacity;
    return 1;
}

int table_add_short(Table *t, uint64_t w0, uint64_t w1, uint64_t h, uint64_t sleep, size_t *at) {
    size_t slot = pair_slot(t->pairs, t->pair_capacity, w0, w1, h);
    if (t->pairs[slot].w0 | t->pairs[slot].w1) {
        *at = slot << 1 | 1;
        return 0;
    }
    t->pairs[slot].w0 = w0;
    t->pairs[slot].w1 = w1 | sleep;
    t->pair_count++;
    /* Doubled at 70% full, as the other table; the key is found again in the new slots. */
    if (t->pair_count * 10 > t->pair_capacity * 7) {
        if (!pairs_grow(t)) return -1;
        slot = pair_slot(t->pairs, t->pair_capacity, w0, w1, h);
    }
    *at = slot << 1 | 1;
    return 1;
}

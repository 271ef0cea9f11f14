/* The Scorpion search's lost-position test, a port of server/solver/scorpion_dead.py (whose
 * docstring holds the proof): some card can never depart. */
#include "scorpion_core.h"

#define NONE (-1)

typedef struct {
    const Pos *p;
    const Loc *loc;
    int kings_free;
    uint8_t bottoms[NCOL];
    int nbottoms;
} Dead;

static int lowest_up(const Dead *d, int card) {
    int col = d->loc->col[card];
    if (col == NOWHERE || d->loc->idx[card] >= d->p->hid[col]) return card;
    return d->p->c[col][d->p->hid[col]];
}

/* The card directly on `card` (a face-down one replaced by its column's lowest face-up
 * card); `card` itself for a top card or one off the table. */
static int above(const Dead *d, int card) {
    int col = d->loc->col[card];
    if (col == NOWHERE) return card;
    int j = d->loc->idx[card];
    if (j == d->p->n[col] - 1) return card;
    if (j + 1 < d->p->hid[col]) return d->p->c[col][d->p->hid[col]];
    return d->p->c[col][j + 1];
}

static int leaders(const uint8_t *c, int start, int stop, int lowest, uint8_t *out, int n) {
    for (int j = start; j < stop; j++)
        if (j == lowest || c[j - 1] != c[j] + 1 || c[j] % 13 == 12) out[n++] = c[j];
    return n;
}

static int home_enablers(const Dead *d, int col, int i, uint8_t *out, int n) {
    const uint8_t *c = d->p->c[col];
    int len = d->p->n[col], end = i, lowest = d->p->hid[col];
    while (end + 1 < len && c[end + 1] == c[end] - 1) end++;
    if (end + 1 < len) {
        out[n++] = c[end + 1];
        return n;
    }
    int missing = c[end] - 1;
    if (missing < 0) return NONE; /* a lone Ace of clubs on the run: never, it went home */
    if (!memchr(d->p->stock, missing, d->p->ns)) {
        out[n++] = (uint8_t)lowest_up(d, missing);
        return n;
    }
    int suit = c[i] - 12;
    for (int y = i - 1; y >= 0; y--)
        if (suit <= c[y] && c[y] < c[i]) return leaders(c, y + 1 > lowest ? y + 1 : lowest, i, lowest, out, n);
    return NONE;
}

/* _enablers: the set of the face-up card x into out; its size, or NONE. */
static int enablers(const Dead *d, int x, uint8_t *out) {
    int col = d->loc->col[x], i = d->loc->idx[x];
    const uint8_t *c = d->p->c[col];
    int lowest = d->p->hid[col];
    if (x % 13 == 12) {
        if (d->kings_free) return NONE;
        int n = 0;
        for (int b = 0; b < d->nbottoms; b++)
            if (d->bottoms[b] != x) out[n++] = d->bottoms[b];
        return home_enablers(d, col, i, out, n);
    }
    if (i > lowest && c[i - 1] == x + 1) return NONE;
    int on = above(d, x + 1);
    if (on != x + 1) {
        out[0] = (uint8_t)on;
        return 1;
    }
    if (d->loc->col[x + 1] == col && d->loc->idx[x + 1] > i) return leaders(c, i + 1, d->p->n[col], lowest, out, 0);
    return NONE;
}

typedef struct {
    int count;
    uint8_t has[64];
    uint8_t keys[64];
    uint8_t n[64];
    uint8_t sets[64][64];
} Sets;

static void add_set(Sets *s, const Dead *d, int x) {
    uint8_t buf[64];
    int n = enablers(d, x, buf);
    if (n == NONE) return;
    s->has[x] = 1;
    s->keys[s->count] = (uint8_t)x;
    s->n[x] = (uint8_t)n;
    memcpy(s->sets[x], buf, (size_t)n);
    s->count++;
}

/* _closed_set: some cards with sets have all their enablers among themselves. */
static int closed_set(const Sets *s) {
    if (!s->count) return 0;
    uint8_t freed[64] = {0};
    int nfreed = 0, changed = 1;
    while (changed) {
        changed = 0;
        for (int k = 0; k < s->count; k++) {
            int x = s->keys[k];
            if (freed[x]) continue;
            for (int e = 0; e < s->n[x]; e++) {
                int y = s->sets[x][e];
                if (!s->has[y] || freed[y]) {
                    freed[x] = 1;
                    nfreed++;
                    changed = 1;
                    break;
                }
            }
        }
    }
    return nfreed < s->count;
}

/* _sealed_pair: some face-down card has its predecessor directly on it (fact 4). */
static int sealed_pair(const Pos *p) {
    for (int i = 0; i < NCOL; i++)
        for (int j = 0; j < p->hid[i]; j++)
            if (p->c[i][j] % 13 && p->c[i][j + 1] == p->c[i][j] - 1) return 1;
    return 0;
}

int core_is_lost(const Pos *p, int start) {
    if (start < 0 && sealed_pair(p)) return 1;
    Loc loc;
    locate(p, &loc);
    return core_is_lost_at(p, &loc, start);
}

int core_is_lost_at(const Pos *p, const Loc *loc, int start) {
    Dead d;
    d.p = p;
    d.loc = loc;
    d.kings_free = 0;
    d.nbottoms = 0;
    for (int i = 0; i < NCOL; i++) {
        if (p->n[i])
            d.bottoms[d.nbottoms++] = (uint8_t)lowest_up(&d, p->c[i][0]);
        else
            d.kings_free = 1;
    }
    Sets s;
    s.count = 0;
    memset(s.has, 0, sizeof s.has);
    if (start >= 0) {
        uint8_t todo[64], looked[64] = {0};
        int ntodo = 0;
        todo[ntodo++] = (uint8_t)start;
        looked[start] = 1;
        while (ntodo) {
            int x = todo[--ntodo];
            add_set(&s, &d, x);
            if (!s.has[x]) continue;
            for (int e = 0; e < s.n[x]; e++) {
                int y = s.sets[x][e];
                if (!looked[y]) {
                    looked[y] = 1;
                    todo[ntodo++] = (uint8_t)y;
                }
            }
        }
    } else {
        for (int i = 0; i < NCOL; i++)
            for (int j = p->hid[i]; j < p->n[i]; j++) add_set(&s, &d, p->c[i][j]);
    }
    return closed_set(&s);
}

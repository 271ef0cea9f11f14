/* Stubborn sets after the deal, for the search with sleep sets (scorpion_core.c's list_moves):
 * the rules of server/solver/scorpion_stubborn.py, whose docstring holds the proof, on sets of
 * moves as bits (M(x) bit x of `m`, K(k) bit k of `k`).
 *
 * The Python closure takes the moves needed last in, first out; this one takes the lowest bit
 * first. The one choice that depends on that order is which cut an enabled M(y) adds (the one
 * with fewer moves not yet in the set), and either cut makes a stubborn set, so the sets found
 * here are stubborn sets too, if not always the Python's. A set's size is its number of moves
 * to try (awake); the smallest over all seeds is kept, as in Python. */
#include "scorpion_core.h"

/* A set of moves. UNKNOWN (a bit no King has) in `k` stands for a move the set cannot hold:
 * one enabled but not among the moves given, which gives the set up. */
typedef struct {
    uint64_t m, k;
} Moves;

#define UNKNOWN (1ULL << 63)

typedef struct {
    const Pos *p;
    const Loc *loc;
    uint64_t enabled_m, enabled_k;
    int empty_column;
    Moves above[NCOL][MAXC]; /* the moves that take a card above index i of a column away */
    uint64_t landing[NCOL];  /* the move that lands on the column's top card */
    uint64_t bottoms;        /* for no empty column: the moves of non-King bottom cards */
    Moves king_bottoms;      /* and what sends a King at the bottom home */
} Sets;

static void prepare(Sets *z) {
    const Pos *p = z->p;
    z->bottoms = 0;
    z->king_bottoms = (Moves){0, 0};
    for (int col = 0; col < NCOL; col++) {
        Moves acc = {0, 0};
        int n = p->n[col];
        for (int i = n - 1; i >= 0; i--) {
            z->above[col][i] = acc;
            int card = p->c[col][i];
            if (i == 0) break;
            if (card % 13 == 12)
                acc.k |= 1ULL << card;
            else if (p->c[col][i - 1] != card + 1)
                acc.m |= 1ULL << card;
        }
        z->landing[col] = 0;
        if (n) {
            int top = p->c[col][n - 1];
            if (top % 13) z->landing[col] = 1ULL << (top - 1);
            int bottom = p->c[col][0];
            if (bottom % 13 == 12) {
                z->king_bottoms.m |= z->above[col][0].m | z->landing[col];
                z->king_bottoms.k |= z->above[col][0].k;
            } else {
                z->bottoms |= 1ULL << bottom;
            }
        }
    }
}

/* _departures: the moves one of which must come before `card` leaves the card it lies on. */
static Moves departures(const Sets *z, int card) {
    const Pos *p = z->p;
    int col = z->loc->col[card], i = z->loc->idx[card];
    Moves out = {0, 0};
    if (card % 13 == 12) {
        out = z->above[col][i];
        if (i != 0) out.k |= 1ULL << card;
        out.m |= z->landing[col];
        return out;
    }
    if (i > p->hid[col] && p->c[col][i - 1] == card + 1) return out;
    out.m = 1ULL << card;
    return out;
}

/* _needs for K(king). */
static Moves needs_king(const Sets *z, int king) {
    const Pos *p = z->p;
    const Loc *loc = z->loc;
    Moves out = {0, 0};
    if (loc->col[king] == NOWHERE) return out;
    int col = loc->col[king], i = loc->idx[king];
    if (i < p->hid[col]) return departures(z, p->c[col][i + 1]);
    if (z->enabled_k >> king & 1) {
        for (int k = 12; k < 52; k += 13)
            if (k != king && loc->col[k] != NOWHERE) out.k |= 1ULL << k;
        out.k |= z->above[col][i].k;
        out.m |= z->above[col][i].m | z->landing[col];
        return out;
    }
    if (z->empty_column) return out;
    out = z->king_bottoms;
    out.m |= z->bottoms;
    return out;
}

/* _needs for M(x), `member` the set so far (for the choice of cut). */
static Moves needs_build(const Sets *z, int x, const Moves *member) {
    const Pos *p = z->p;
    const Loc *loc = z->loc;
    Moves out = {0, 0};
    if (loc->col[x] == NOWHERE || x % 13 == 12 || loc->col[x + 1] == NOWHERE) return out;
    int a = loc->col[x], i = loc->idx[x], b = loc->col[x + 1], j = loc->idx[x + 1];
    if (i < p->hid[a]) return departures(z, p->c[a][i + 1]);
    if (z->enabled_m >> x & 1) {
        int low = p->hid[b];
        /* cut 1: the face-up non-Kings of b that can lead; cut 2: what changes a's top */
        uint64_t cut1 = z->above[b][low].m, cut2 = z->above[a][i].m | z->landing[a];
        uint64_t cut2_kings = z->above[a][i].k;
        if (p->c[b][low] % 13 != 12) cut1 |= 1ULL << p->c[b][low];
        int kings_from = low > 1 ? low : 1;
        for (int k = kings_from; k < p->n[b]; k++)
            if (p->c[b][k] % 13 == 12) out.k |= 1ULL << p->c[b][k];
        int n1 = __builtin_popcountll(cut1 & ~member->m);
        int n2 = __builtin_popcountll(cut2 & ~member->m) + __builtin_popcountll(cut2_kings & ~member->k);
        if (n1 <= n2) {
            out.m |= cut1;
        } else {
            out.m |= cut2;
            out.k |= cut2_kings;
        }
        return out;
    }
    if (a == b) {
        if (j == i - 1) return out;
        if (j == p->n[b] - 1) return z->above[a][i];
    } else if (j == p->n[b] - 1) {
        out.k = UNKNOWN;
        return out;
    }
    return departures(z, p->c[b][j + 1]);
}

/* The awake enabled moves of the set grown from the build led by seed, or -1 once there are
 * limit of them or it meets an unknown move; its enabled members into *found. */
static int closure(const Sets *z, uint64_t skip, int seed, int limit, Moves *found) {
    Moves member = {1ULL << seed, 0}, work = member;
    int awake = 0;
    while (work.m | work.k) {
        Moves need;
        int x;
        if (work.m) {
            x = __builtin_ctzll(work.m);
            work.m &= work.m - 1;
            if (z->enabled_m >> x & 1 && !(skip >> x & 1) && ++awake >= limit) return -1;
            need = needs_build(z, x, &member);
        } else {
            x = __builtin_ctzll(work.k);
            work.k &= work.k - 1;
            if (z->enabled_k >> x & 1 && !(skip >> x & 1) && ++awake >= limit) return -1;
            need = needs_king(z, x);
        }
        if (need.k & UNKNOWN) return -1;
        uint64_t new_m = need.m & ~member.m, new_k = need.k & ~member.k;
        member.m |= new_m;
        member.k |= new_k;
        work.m |= new_m;
        work.k |= new_k;
    }
    found->m = member.m & z->enabled_m;
    found->k = member.k & z->enabled_k;
    return awake;
}

/* stubborn_moves: keeps in `moves` (all the legal moves) those of the smallest stubborn set
 * found, in order; their number (n when none is smaller). `skip`: the lead cards of moves not
 * to try (asleep). */
int stubborn_moves(const Pos *p, const Loc *loc, uint64_t skip, Mv *moves, int n) {
    Sets z;
    z.p = p;
    z.loc = loc;
    z.enabled_m = z.enabled_k = 0;
    z.empty_column = 0;
    int awake = 0;
    for (int k = 0; k < n; k++) {
        int lead = p->c[moves[k].s][moves[k].j];
        awake += !(skip >> lead & 1);
        if (!p->n[moves[k].t]) {
            z.enabled_k |= 1ULL << lead;
            z.empty_column = 1;
        } else {
            z.enabled_m |= 1ULL << lead;
        }
    }
    prepare(&z);
    Moves best = {0, 0}, found;
    int best_awake = awake, any = 0;
    for (int k = 0; k < n; k++) {
        if (!p->n[moves[k].t]) continue;
        int woke = closure(&z, skip, p->c[moves[k].s][moves[k].j], best_awake, &found);
        if (woke >= 0) {
            best = found;
            best_awake = woke;
            any = 1;
            if (best_awake <= 1) break;
        }
    }
    if (!any) return n;
    int m = 0;
    for (int k = 0; k < n; k++) {
        int lead = p->c[moves[k].s][moves[k].j];
        if ((p->n[moves[k].t] ? best.m : best.k) >> lead & 1) moves[m++] = moves[k];
    }
    return m;
}

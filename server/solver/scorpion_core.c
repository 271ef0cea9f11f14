/* The Scorpion search's inner loop in C: the search of server/solver/scorpion_search.py, plus
 * sleep sets and, with them, stubborn sets.
 *
 * This is a line-by-line port of depth_first_scorpion's loop and of the lost-position test in
 * server/solver/scorpion_dead.py (the docstrings there hold the proofs). It tries the same
 * moves in the same order, prunes the same positions and merges the same ones. Without sleep
 * sets (search(..., False)) it reports the same verdicts, lines and position counts; with them
 * (the default, and stubborn sets where three or more moves are awake: see list_moves and
 * scorpion_core_stubborn.c) the same verdicts from fewer positions;
 * tests/solver/test_scorpion_core.py checks both against the Python search. The mypyc build of
 * the Python search spends most of its time creating Python objects; this one works on
 * fixed-size structs, several times as fast (bench.solver_speed measures both).
 *
 * Its parts: this file (moves, playing them, the search and the module), scorpion_core_lost.c
 * (the lost-position test), scorpion_core_table.c (the transposition table),
 * scorpion_core_stubborn.c (stubborn sets), the keys after the deal in scorpion_core_short.h
 * and the types they share in scorpion_core.h.
 *
 * Cards are 0..51, successor of x is x + 1, suit x / 13, a King is x % 13 == 12. A column is
 * its cards bottom first, the first `hid` face down. The transposition table stores each
 * position's key exactly (no hash-only keys: a collision could prune a position with a win,
 * and an "unwinnable" verdict is a proof): its canonical key while the stock is not dealt,
 * then its short key, which says the same in 11 bytes (see Short). So the search merges the
 * same positions, and counts the same, with either. Memory comes from PyMem_Raw*, so
 * tracemalloc counts it (bench.solver_speed's bytes a position).
 */
#include "scorpion_core.h"
#include "scorpion_core_short.h"

/* The face-up cards of column t are a natural run from a King (_is_king_run). */
static int king_run(const Pos *p, int t) {
    int lowest = p->hid[t], m = p->n[t] - lowest;
    if (m <= 0 || m > 13 || p->c[t][lowest] % 13 != 12) return 0;
    for (int i = 1; i < m; i++)
        if (p->c[t][lowest + i] != p->c[t][lowest] - i) return 0;
    return 1;
}

/* The group from index j of column s is a natural run down to its Ace. */
static int run_to_ace(const Pos *p, int s, int j) {
    int m = p->n[s] - j;
    if (m > 13) return 0;
    for (int i = 0; i < m; i++)
        if (p->c[s][j + i] != p->c[s][j] - i) return 0;
    return p->c[s][p->n[s] - 1] % 13 == 0;
}

#define KINGS ((1ULL << 12) | (1ULL << 25) | (1ULL << 38) | (1ULL << 51))

/* _lone_move: once the stock is dealt, the index in `moves` (the position's legal moves, in
 * order) of a move that is a persistent set on its own, or -1 (the proofs are there): the
 * first build whose group stays clear of every card that may ever lead or carry its target
 * card (cards as bits of a uint64_t), else the first King move into an empty column that no
 * other King can take from it, by a King with a card of its suit under it. */
static int lone_move(const Pos *p, const Mv *moves, int n) {
    uint64_t down[52], faceup = 0, ontable = (1ULL << 52) - 1; /* after the deal: all but home */
    for (int suit = 0; suit < 4; suit++)
        if (p->home >> suit & 1) ontable &= ~(0x1FFFULL << (13 * suit));
    for (int i = 0; i < NCOL; i++) {
        uint64_t run = 0;
        for (int k = p->hid[i]; k < p->n[i]; k++) {
            int card = p->c[i][k];
            run |= 1ULL << card;
            down[card] = run; /* the face-up cards of its column from the lowest up to it */
        }
        faceup |= run;
    }
    for (int i = 0; i < n; i++) {
        Mv m = moves[i];
        if (m.s < 0 || !p->n[m.t]) continue;
        int lead = p->c[m.s][m.j];
        uint64_t group = (down[p->c[m.s][p->n[m.s] - 1]] & ~down[lead]) | 1ULL << lead;
        uint64_t reach = down[p->c[m.t][p->n[m.t] - 1]], frontier = reach;
        while (frontier) {
            uint64_t next = ((frontier & ~KINGS) << 1) & ontable & ~reach;
            if (next & group) break;
            uint64_t add = next;
            for (uint64_t f = next & faceup; f; f &= f - 1) add |= down[__builtin_ctzll(f)];
            frontier = add & ~reach;
            reach |= add;
        }
        if (!frontier) return i;
    }
    int empties = 0, waiting = 0;
    for (int i = 0; i < NCOL; i++) empties += !p->n[i];
    if (!empties) return -1;
    for (int i = 0; i < NCOL; i++)
        for (int k = 1; k < p->n[i]; k++) waiting += p->c[i][k] % 13 == 12;
    if (waiting > empties) return -1;
    for (int i = 0; i < n; i++) {
        Mv m = moves[i];
        if (m.s < 0 || p->n[m.t]) continue;
        int suit = p->c[m.s][m.j] / 13;
        for (int k = 0; k < m.j; k++)
            if (p->c[m.s][k] / 13 == suit) return i;
    }
    return -1;
}

/* _moves: the legal moves in the order the search tries them; returns their number. `loc`
 * is the position's card locations (locate); `skip` the lead cards of moves not to try here
 * (asleep, or not woken on a revisit; 0 without sleep sets). A lone move is looked for only
 * with two or more moves to try: with one, it would spare that one only by being asleep
 * itself, which is rare and not worth the look. With `stubborn`, and no lone move, only a
 * stubborn set's moves are kept where three or more are to be tried (with fewer the set
 * costs more than it spares).
 *
 * Across visits of a position (a revisit tries the moves asleep before and awake now) the
 * moves tried must include a persistent set's less the sleep set kept. A lone move is the
 * same on every visit, and every move includes it; a stubborn set depends on what is awake,
 * so only a first visit may use one (the search passes `stubborn` then only): a revisit
 * then tries every woken move. */
static int list_moves(const Pos *p, const Loc *loc, uint64_t skip, int stubborn, Mv *out) {
    Mv first[NCOL], builds[NCOL], later[MAX_MOVES];
    int nf = 0, nb = 0, nl = 0;
    for (int t = 0; t < NCOL; t++) {
        if (!p->n[t]) continue;
        int top = p->c[t][p->n[t] - 1];
        if (top % 13 == 0) continue;
        int s = loc->col[top - 1];
        if (s == NOWHERE) continue;
        int j = loc->idx[top - 1], hidden = p->hid[s];
        if (s != t && j >= hidden) {
            Mv m = {(int8_t)s, (uint8_t)j, (int8_t)t};
            if (!p->ns && (king_run(p, t) || run_to_ace(p, s, j))) {
                out[0] = m;
                return 1;
            }
            if (j == 0 || (hidden && j == hidden))
                first[nf++] = m;
            else
                builds[nb++] = m;
        }
    }
    int targets[NCOL], nt = 0, other = -1;
    for (int i = 0; i < NCOL; i++) {
        if (p->n[i]) continue;
        if (!p->ns) {
            if (!nt) targets[nt++] = i;
        } else if (i < STOCK_COLUMNS) {
            targets[nt++] = i;
        } else if (other < 0) {
            other = i;
        }
    }
    if (other >= 0) targets[nt++] = other;
    for (int king = 12; nt && king < 52; king += 13) {
        int s = loc->col[king];
        if (s == NOWHERE) continue;
        int j = loc->idx[king];
        if (j < p->hid[s]) continue;
        for (int e = 0; e < nt; e++) {
            if (j == 0 && !(p->ns && (s < STOCK_COLUMNS || targets[e] < STOCK_COLUMNS))) continue;
            Mv m = {(int8_t)s, (uint8_t)j, (int8_t)targets[e]};
            later[nl++] = m;
        }
    }
    if (p->ns) {
        Mv deal = {-1, 0, -1};
        later[nl++] = deal;
    }
    int n = 0;
    for (int i = 0; i < nf; i++) out[n++] = first[i];
    for (int i = 0; i < nb; i++) out[n++] = builds[i];
    for (int i = 0; i < nl; i++) out[n++] = later[i];
    if (p->ns) return n;
    int awake = 0;
    for (int i = 0; i < n && awake < 3; i++) awake += !(skip >> p->c[out[i].s][out[i].j] & 1);
    if (awake < 2) return n;
    int alone = lone_move(p, out, n);
    if (alone >= 0) {
        out[0] = out[alone];
        return 1;
    }
    return stubborn && awake > 2 ? stubborn_moves(p, loc, skip, out, n) : n;
}

/* _settle: turn up an exposed face-down card and send completed suits home, repeatedly. */
static void settle(Pos *p, int i) {
    for (;;) {
        if (p->hid[i] && p->n[i] == p->hid[i]) p->hid[i]--;
        int n = p->n[i];
        if (n - p->hid[i] >= 13) {
            int base = p->c[i][n - 1], k = 0;
            if (base % 13 == 0) {
                while (k < 13 && p->c[i][n - 13 + k] == base + 12 - k) k++;
            }
            if (k == 13) {
                p->n[i] = (uint8_t)(n - 13);
                p->home |= (uint8_t)(1 << (base / 13));
                continue;
            }
        }
        return;
    }
}

static void copy_pos(Pos *q, const Pos *p) {
    memcpy(q, p, offsetof(Pos, c));
    for (int i = 0; i < NCOL; i++) copy_cards(q->c[i], p->c[i], p->n[i]);
}

static void play(const Pos *p, Mv m, Pos *q) {
    copy_pos(q, p);
    if (m.s < 0) {
        for (int i = 0; i < p->ns; i++) {
            q->c[i][q->n[i]++] = p->stock[p->ns - 1 - i];
            settle(q, i);
        }
        q->ns = 0;
        return;
    }
    int s = m.s, t = m.t, j = m.j, len = p->n[s] - j;
    memcpy(&q->c[t][q->n[t]], &p->c[s][j], (size_t)len);
    q->n[t] = (uint8_t)(q->n[t] + len);
    if (q->c[t][q->n[t] - 1] % 13 == 0) settle(q, t);
    q->n[s] = (uint8_t)j;
    if (j > 0 && (q->c[s][j - 1] % 13 == 0 || j == q->hid[s])) settle(q, s);
}

/* locate for q, which move m made from p (whose card locations are ploc): only the cards
 * the move carried, and those of suits it sent home, are elsewhere. */
static void locate_child(const Pos *p, const Loc *ploc, Mv m, const Pos *q, Loc *loc) {
    *loc = *ploc;
    if (m.s < 0) {
        for (int i = 0; i < p->ns; i++) {
            int card = p->stock[p->ns - 1 - i];
            loc->col[card] = (uint8_t)i;
            loc->idx[card] = p->n[i];
        }
    } else {
        int s = m.s, t = m.t;
        for (int k = m.j; k < p->n[s]; k++) {
            int card = p->c[s][k];
            loc->col[card] = (uint8_t)t;
            loc->idx[card] = (uint8_t)(p->n[t] + k - m.j);
        }
    }
    for (int home = q->home & ~p->home, suit = 0; home; home >>= 1, suit++)
        if (home & 1) memset(&loc->col[13 * suit], NOWHERE, 13);
}

static int won(const Pos *p) {
    if (p->ns) return 0;
    for (int i = 0; i < NCOL; i++)
        if (p->n[i]) return 0;
    return 1;
}

/* _lost_check: NO_CHECK, FULL_CHECK or the card to test from, for the child `q` that move
 * `m` made from `p`. */
static int lost_check(const Pos *p, const Pos *q, Mv m) {
    if (m.s < 0) return FULL_CHECK;
    int s = m.s, t = m.t;
    if (q->hid[s] != p->hid[s]) return q->n[s] ? q->c[s][q->hid[s]] : FULL_CHECK;
    if (q->hid[t] != p->hid[t]) return FULL_CHECK;
    if (q->n[s] < 2) return NO_CHECK;
    int top = q->c[s][q->n[s] - 1];
    if (top % 13 == 0) return NO_CHECK;
    return memchr(q->c[s], top - 1, q->n[s]) ? FULL_CHECK : NO_CHECK;
}

/* ---- The search ---- */

/* Room for a key (at most 1 + 7 + 52 bytes, and copy_cards' overrun of 7). */
#define KEY_ROOM 72
/* Moves whose children's slots are asked for ahead of their lookups. */
#define LOOKAHEAD 4

typedef struct {
    Pos pos;
    Mv via; /* the move that made this position */
    uint8_t nmoves, next;
    uint8_t keyed;   /* moves whose children's keys are made (look_ahead) */
    uint64_t sleep;  /* lead cards of moves not to try here (see independent) */
    uint64_t filter; /* lead cards of the moves to try: all, or those a revisit woke */
    Loc loc;         /* where pos's cards are, for its moves and its children's sleep sets */
    Short key;       /* once the stock is dealt: the position's short key (see Short) */
    Mv moves[MAX_MOVES];
    uint64_t hash[MAX_MOVES]; /* of each keyed move's child key; 0 for a move asleep */
    uint8_t key_length[MAX_MOVES];
    uint8_t keys[MAX_MOVES][KEY_ROOM];
    Short shorts[MAX_MOVES]; /* of each keyed move's child, when short */
} Frame;

#define ALL_MOVES (~0ULL)

/* Sleep sets (Godefroid, "Partial-Order Methods for the Verification of Concurrent Systems",
 * 1996, with state caching), after the deal only.
 *
 * After the deal a move is named by its lead card: M(x), the group led by the face-up card x
 * onto x + 1 (the top card of another column), or K(k), the group led by the face-up King k,
 * with a card under it, into an empty column. Two orders of the same moves that can both be
 * played reach the same position (scorpion_stubborn.py's docstring proves it).
 *
 * Independence. Two moves a, b enabled in p are independent (each is still enabled after the
 * other, so a b and b a reach one position) unless (1) both are M moves, a's source column is
 * the one topped by b's target card and a's target column holds b's lead card (then a lands
 * b's target on top of b's lead, and b a would do the same to a; the condition is symmetric),
 * or (2) both are K moves and one column is empty. Proof: a move changes two columns: its
 * source loses the group from the lead up, its target gains it on top. M(y) needs y face up
 * (never undone), y + 1 a top card (only y is ever put on it, and a group carrying it keeps it
 * on top) and the two in different columns. They come together only when a carries y + 1 (a's
 * source is y + 1's column) onto y's column (a's target; a K move's target is empty): case 1.
 * A move carrying y takes it to a column whose top is not y + 1. A suit goes home only with
 * every card on its successor, and y + 1 is a top card, so y does not go home. K(k) needs k
 * face up, a card under it (moved only with k) and an empty column; an M move never fills a
 * column that is empty, and a K move fills one: case 2.
 *
 * The search. Each position keeps a sleep set: lead cards of moves not to try from it. A
 * child's is its parent's, plus the moves the parent tried before it, less those dependent on
 * the move to the child. A move asleep in p was tried in an ancestor q before the moves from q
 * to p, all independent of it, so what it leads to is reached from its own child in q by the
 * same moves in the other order. The transposition table keeps each position's set; a revisit
 * with a smaller one tries the moves asleep before and awake now, and keeps the intersection
 * (which is what keeps the method sound with a table). Sleep sets go with the search's other
 * reductions: with persistent sets (the moves played alone, and stubborn sets, whose enabled
 * moves are persistent sets) they keep every terminal position, a win among them (Godefroid,
 * the chapter on combining the two; a revisit tries every woken move where the first visit
 * kept a stubborn set's, see list_moves); a lost position is never expanded, and nothing
 * after it can be won, so the moves they leave untried there lose no win. They
 * prune moves, never positions a win needs: verdicts are unchanged (checked on deals
 * 1-10,000, every line replayed), and positions that only lost ones lead to are met less
 * often: about a quarter fewer in all (a fifth to a third on the largest proofs).
 */

/* Whether the move led by card z (enabled in p) and move m are independent in p (see
 * above); a z that is not enabled in p (never expected) counts as dependent. */
static int independent(const Pos *p, const Loc *loc, int empties, int z, Mv m) {
    int zs = loc->col[z];
    if (zs == NOWHERE || loc->idx[z] < p->hid[zs]) return 0;
    int lead = p->c[m.s][m.j];
    int king_z = z % 13 == 12, king_m = lead % 13 == 12;
    if (king_z && king_m) return empties > 1; /* one empty column: each takes it from the other */
    if (king_z) return loc->idx[z] > 0 && empties > 0;
    int zt = loc->col[z + 1];
    if (zt == NOWHERE || zt == zs || loc->idx[z + 1] != p->n[zt] - 1) return 0;
    if (king_m) return 1;
    return !(m.s == zt && m.t == zs); /* each would carry its target onto the other's card */
}

static uint64_t child_sleep(const Pos *p, const Loc *loc, uint64_t sleep, Mv m) {
    int empties = 0;
    for (int i = 0; i < NCOL; i++) empties += !p->n[i];
    uint64_t kept = 0;
    for (uint64_t rest = sleep; rest; rest &= rest - 1) {
        int z = __builtin_ctzll(rest);
        if (independent(p, loc, empties, z, m)) kept |= 1ULL << z;
    }
    return kept;
}

static int cards_valid(const uint8_t *cards, int n) {
    for (int i = 0; i < n; i++)
        if (cards[i] >= 52) return 0;
    return 1;
}

static int parse_position(PyObject *columns, PyObject *stock, Pos *p) {
    memset(p, 0, sizeof *p);
    if (!PyTuple_Check(columns) || PyTuple_GET_SIZE(columns) != NCOL || !PyBytes_Check(stock) ||
        PyBytes_GET_SIZE(stock) > 3) {
        PyErr_SetString(PyExc_ValueError, "expected 7 column bytes and at most 3 stock cards");
        return 0;
    }
    for (int i = 0; i < NCOL; i++) {
        PyObject *col = PyTuple_GET_ITEM(columns, i);
        if (!PyBytes_Check(col) || PyBytes_GET_SIZE(col) < 1 || PyBytes_GET_SIZE(col) > 53) {
            PyErr_SetString(PyExc_ValueError, "a column is a marker byte and at most 52 cards");
            return 0;
        }
        const uint8_t *b = (const uint8_t *)PyBytes_AS_STRING(col);
        p->n[i] = (uint8_t)(PyBytes_GET_SIZE(col) - 1);
        if (b[0] < FACE_DOWN_BASE || b[0] - FACE_DOWN_BASE > p->n[i] ||
            !cards_valid(b + 1, p->n[i])) {
            PyErr_SetString(PyExc_ValueError, "a column's marker or cards are out of range");
            return 0;
        }
        if (p->n[i] && b[0] - FACE_DOWN_BASE == p->n[i]) { /* the rules turn a top card up */
            PyErr_SetString(PyExc_ValueError, "a column's top card is face down");
            return 0;
        }
        p->hid[i] = (uint8_t)(b[0] - FACE_DOWN_BASE);
        memcpy(p->c[i], b + 1, p->n[i]);
    }
    p->ns = (uint8_t)PyBytes_GET_SIZE(stock);
    memcpy(p->stock, PyBytes_AS_STRING(stock), p->ns);
    if (!cards_valid(p->stock, p->ns)) {
        PyErr_SetString(PyExc_ValueError, "a stock card is out of range");
        return 0;
    }
    int present[4] = {0, 0, 0, 0};
    for (int i = 0; i < NCOL; i++)
        for (int j = 0; j < p->n[i]; j++) present[p->c[i][j] / 13] = 1;
    for (int i = 0; i < p->ns; i++) present[p->stock[i] / 13] = 1;
    for (int suit = 0; suit < 4; suit++)
        if (!present[suit]) p->home |= (uint8_t)(1 << suit);
    return 1;
}

/* Makes frame g (its position already played by m, and located into g->loc) ready to
 * search: its moves, the ones to try (filter) and those asleep. A stubborn set only on a
 * first visit, and only with sleep sets (see list_moves). */
static void enter(Frame *g, Mv m, uint64_t sleep, uint64_t filter, int use_sleep) {
    g->via = m;
    int stubborn = use_sleep && filter == ALL_MOVES;
    g->nmoves = (uint8_t)list_moves(&g->pos, &g->loc, sleep | ~filter, stubborn, g->moves);
    g->next = 0;
    g->keyed = 0;
    g->sleep = sleep;
    g->filter = filter;
}

/* The key of the child m makes from f: its short key into k (0 returned) once the stock is
 * dealt, or its canonical key into key (its length returned). child is played when the key
 * needs it: a canonical key, or a suit that may go home (only a move that leaves an Ace on
 * top completes one). */
static int child_key(const Frame *f, const Start *o, Mv m, Pos *child, uint8_t *key, Short *k) {
    const Pos *p = &f->pos;
    if (!p->ns) {
        short_child(p, o, &f->key, m, k);
        int s = m.s;
        if (p->c[s][p->n[s] - 1] % 13 == 0 || (m.j > 0 && p->c[s][m.j - 1] % 13 == 0)) {
            play(p, m, child);
            short_home(o, k, child->home);
        }
        return 0;
    }
    play(p, m, child);
    if (m.s < 0) { /* the deal: the positions from here on have short keys */
        short_of(child, o, k);
        return 0;
    }
    return make_key(child, key);
}

/* Makes the children's keys of f's next LOOKAHEAD moves (played in scratch) and asks the
 * memory for their slots. Most children are positions met before, so the search runs from one
 * table lookup to the next; asked for ahead, their slots arrive together instead of one
 * cache miss after another. A key is made once per move (a frame keeps them while its
 * children are searched); the slots are asked for again on each step, as a search below may
 * have pushed them out of the caches. */
static void look_ahead(Frame *f, const Table *t, const Start *o, Pos *scratch, int use_sleep) {
    int upto = f->next + LOOKAHEAD < f->nmoves ? f->next + LOOKAHEAD : f->nmoves;
    for (int i = f->keyed; i < upto; i++) {
        Mv m = f->moves[i];
        f->hash[i] = 0;
        if (use_sleep && m.s >= 0 && !f->pos.ns) {
            uint64_t bit = 1ULL << f->pos.c[m.s][m.j];
            if ((f->sleep & bit) || !(f->filter & bit)) continue; /* asleep: never looked up */
        }
        int n = child_key(f, o, m, scratch, f->keys[i], &f->shorts[i]);
        f->key_length[i] = (uint8_t)n;
        f->hash[i] = n ? hash_key(f->keys[i], n) : hash_short(short_w0(&f->shorts[i]), short_w1(&f->shorts[i]));
    }
    if (upto > f->keyed) f->keyed = (uint8_t)upto;
    for (int i = f->next; i < upto; i++) {
        if (!f->hash[i]) continue;
        if (f->key_length[i])
            table_prefetch_slot(t, f->hash[i]);
        else
            table_prefetch_short(t, f->hash[i]);
    }
}

static PyObject *line_of(Frame *frames, int depth, Mv last) {
    PyObject *line = PyList_New(0);
    if (!line) return NULL;
    for (int d = 1; d <= depth; d++) {
        const Pos *p = &frames[d - 1].pos;
        Mv m = d < depth ? frames[d].via : last;
        PyObject *item = m.s < 0 ? Py_BuildValue("(iii)", NCOL, p->ns, NCOL)
                                 : Py_BuildValue("(iii)", m.s, p->n[m.s] - m.j, m.t);
        if (!item || PyList_Append(line, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(line);
            return NULL;
        }
        Py_DECREF(item);
    }
    return line;
}

/* search(columns, stock, poll) -> (outcome, positions, line)
 *
 * outcome: "solved" (line: the engine moves as (source, count, target)), "unwinnable", or the
 * non-empty string poll(positions, stored) returned, which ends the search (line None). */
static PyObject *search(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *columns, *stock, *poll;
    int use_sleep = 1;
    if (!PyArg_ParseTuple(args, "OOO|p", &columns, &stock, &poll, &use_sleep)) return NULL;
    Pos start;
    if (!parse_position(columns, stock, &start)) return NULL;
    Table table;
    size_t capacity = 256;
    Frame *frames = PyMem_RawMalloc(capacity * sizeof *frames);
    if (!frames || !table_init(&table)) {
        PyMem_RawFree(frames);
        table_free(&table);
        return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    uint8_t key[128 + 8];
    long long nodes = 0;
    int depth = 1;
    size_t at;
    Start origin;
    start_of(&start, &origin);
    if (start.ns) {
        table_add(&table, key, make_key(&start, key), 0, &at);
    } else {
        Short *k = &frames[0].key;
        short_of(&start, &origin, k);
        table_add_short(&table, short_w0(k), short_w1(k), hash_short(short_w0(k), short_w1(k)), 0, &at);
    }
    frames[0].pos = start;
    locate(&start, &frames[0].loc);
    Mv none = {-1, 0, -1}; /* frame 0 has no move that made it */
    enter(&frames[0], none, 0, ALL_MOVES, use_sleep);
    while (depth) {
        if ((size_t)depth == capacity) {
            Frame *grown = PyMem_RawRealloc(frames, capacity * 2 * sizeof *frames);
            if (!grown) {
                PyErr_NoMemory();
                goto done;
            }
            frames = grown;
            capacity *= 2;
        }
        Frame *f = &frames[depth - 1];
        if (f->next == f->nmoves) {
            depth--;
            continue;
        }
        Frame *g = &frames[depth]; /* the child is made where it would be searched */
        Pos *child = &g->pos;
        look_ahead(f, &table, &origin, child, use_sleep);
        int i = f->next++;
        Mv m = f->moves[i];
        uint64_t bit = 0, sleep = 0;
        if (use_sleep && m.s >= 0 && !f->pos.ns) {
            bit = 1ULL << f->pos.c[m.s][m.j];
            if ((f->sleep & bit) || !(f->filter & bit)) continue;
            if (f->sleep) sleep = child_sleep(&f->pos, &f->loc, f->sleep, m);
            f->sleep |= bit; /* for the moves after this one */
        }
        int added;
        int n = f->key_length[i];
        uint64_t h = f->hash[i];
        const uint8_t *bytes = f->keys[i];
        if (h) {
            g->key = f->shorts[i];
        } else { /* asleep when keyed, awake now: never expected, but cheap to be sure of */
            n = child_key(f, &origin, m, child, key, &g->key);
            h = n ? hash_key(key, n) : hash_short(short_w0(&g->key), short_w1(&g->key));
            bytes = key;
        }
        if (n) {
            added = table_add_hashed(&table, bytes, n, h, sleep, &at);
        } else {
            added = table_add_short(&table, short_w0(&g->key), short_w1(&g->key), h, sleep, &at);
        }
        if (added < 0) {
            result = Py_BuildValue("(sLO)", "memory", nodes, Py_None);
            goto done;
        }
        if (!added) {
            /* Searched before with a sleep set; the moves asleep then and awake now are still
             * to try from it (with the sleep sets of both visits, intersected, kept). */
            uint64_t before = use_sleep ? table_sleep(&table, at) : 0, woken = before & ~sleep;
            if (!woken) continue;
            table_set_sleep(&table, at, before & sleep);
            play(&f->pos, m, child);
            locate_child(&f->pos, &f->loc, m, child, &g->loc);
            enter(g, m, sleep, woken, use_sleep);
            depth++;
            continue;
        }
        play(&f->pos, m, child);
        nodes++;
        if (won(child)) {
            PyObject *line = line_of(frames, depth, m);
            if (line) result = Py_BuildValue("(sLN)", "solved", nodes, line);
            goto done;
        }
        if (nodes % POLL_EVERY == 0) {
            PyObject *reason = PyObject_CallFunction(poll, "Ln", nodes, (Py_ssize_t)table_count(&table));
            if (!reason) goto done;
            if (PyObject_IsTrue(reason)) {
                result = Py_BuildValue("(OLO)", reason, nodes, Py_None);
                Py_DECREF(reason);
                goto done;
            }
            Py_DECREF(reason);
        }
        int check = lost_check(&f->pos, child, m);
        locate_child(&f->pos, &f->loc, m, child, &g->loc); /* for the lost-position test and the moves */
        if (check != NO_CHECK && core_is_lost_at(child, &g->loc, check)) {
            table_set_sleep(&table, at, 0); /* never searched, never to be woken */
            continue;
        }
        enter(g, m, sleep, ALL_MOVES, use_sleep);
        depth++;
    }
    result = Py_BuildValue("(sLO)", "unwinnable", nodes, Py_None);
done:
    PyMem_RawFree(frames);
    table_free(&table);
    return result;
}

/* is_lost(columns, stock, start=-1) -> bool: scorpion_dead.is_lost, for tests. */
static PyObject *py_is_lost(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *columns, *stock;
    int start = -1;
    if (!PyArg_ParseTuple(args, "OO|i", &columns, &stock, &start)) return NULL;
    Pos p;
    if (!parse_position(columns, stock, &p)) return NULL;
    return PyBool_FromLong(core_is_lost(&p, start));
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS, "Depth-first Scorpion search: (outcome, positions, line)."},
    {"is_lost", py_is_lost, METH_VARARGS, "The lost-position test of scorpion_dead.is_lost."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scorpion_core", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scorpion_core(void) { return PyModule_Create(&module); }

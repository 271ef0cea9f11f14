/* The Scorpion search's inner loop in C: the same search as server/solver/scorpion_search.py.
 *
 * This is a line-by-line port of depth_first_scorpion's loop and of the lost-position test in
 * server/solver/scorpion_dead.py (the docstrings there hold the proofs). It tries the same
 * moves in the same order, prunes the same positions and merges the same ones, so it reports
 * the same verdicts, the same lines and the same position counts; tests/solver/
 * test_scorpion_core.py checks that against the Python search. It exists for speed only: the
 * mypyc build of the Python search reaches about 134,000 positions a second, most of it spent
 * creating Python objects; this one, on fixed-size structs, about eight times that.
 *
 * Its parts: this file (moves, playing them, the search and the module), scorpion_core_lost.c
 * (the lost-position test), scorpion_core_table.c (the transposition table) and the types they
 * share in scorpion_core.h.
 *
 * Cards are 0..51, successor of x is x + 1, suit x / 13, a King is x % 13 == 12. A column is
 * its cards bottom first, the first `hid` face down. The transposition table stores each
 * position's canonical key exactly (no hash-only keys: a collision could prune a position
 * with a win, and an "unwinnable" verdict is a proof). Memory comes from PyMem_Raw*, so
 * tracemalloc counts it (bench.solver_speed's bytes a position).
 */
#include "scorpion_core.h"

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

/* _moves: the legal moves in the order the search tries them; returns their number. */
static int list_moves(const Pos *p, Mv *out) {
    Loc loc;
    locate(p, &loc);
    Mv first[NCOL], builds[NCOL], later[MAX_MOVES];
    int nf = 0, nb = 0, nl = 0;
    for (int t = 0; t < NCOL; t++) {
        if (!p->n[t]) continue;
        int top = p->c[t][p->n[t] - 1];
        if (top % 13 == 0) continue;
        int s = loc.col[top - 1];
        if (s == NOWHERE) continue;
        int j = loc.idx[top - 1], hidden = p->hid[s];
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
        int s = loc.col[king];
        if (s == NOWHERE) continue;
        int j = loc.idx[king];
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
    return n;
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

typedef struct {
    Pos pos;
    Mv via; /* the move that made this position */
    uint8_t nmoves, next;
    Mv moves[MAX_MOVES];
} Frame;

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
        p->hid[i] = (uint8_t)(b[0] - FACE_DOWN_BASE);
        memcpy(p->c[i], b + 1, p->n[i]);
    }
    p->ns = (uint8_t)PyBytes_GET_SIZE(stock);
    memcpy(p->stock, PyBytes_AS_STRING(stock), p->ns);
    if (!cards_valid(p->stock, p->ns)) {
        PyErr_SetString(PyExc_ValueError, "a stock card is out of range");
        return 0;
    }
    return 1;
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
    if (!PyArg_ParseTuple(args, "OOO", &columns, &stock, &poll)) return NULL;
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
    table_add(&table, key, make_key(&start, key));
    frames[0].pos = start;
    frames[0].nmoves = (uint8_t)list_moves(&start, frames[0].moves);
    frames[0].next = 0;
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
        Mv m = f->moves[f->next++];
        Frame *g = &frames[depth]; /* the child is made where it would be searched */
        Pos *child = &g->pos;
        play(&f->pos, m, child);
        int added = table_add(&table, key, make_key(child, key));
        if (added < 0) {
            result = Py_BuildValue("(sLO)", "memory", nodes, Py_None);
            goto done;
        }
        if (!added) continue;
        nodes++;
        if (won(child)) {
            PyObject *line = line_of(frames, depth, m);
            if (line) result = Py_BuildValue("(sLN)", "solved", nodes, line);
            goto done;
        }
        if (nodes % POLL_EVERY == 0) {
            PyObject *reason = PyObject_CallFunction(poll, "Ln", nodes, (Py_ssize_t)table.count);
            if (!reason) goto done;
            if (PyObject_IsTrue(reason)) {
                result = Py_BuildValue("(OLO)", reason, nodes, Py_None);
                Py_DECREF(reason);
                goto done;
            }
            Py_DECREF(reason);
        }
        int check = lost_check(&f->pos, child, m);
        if (check != NO_CHECK && core_is_lost(child, check)) continue;
        depth++;
        g->via = m;
        g->nmoves = (uint8_t)list_moves(child, g->moves);
        g->next = 0;
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

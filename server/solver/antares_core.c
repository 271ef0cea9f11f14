/* The Antares search's position in C: moves, play and the estimate of
 * server/solver/antares_core.py, line for line.
 *
 * The Python module stays the reference, and what runs where this is not built: these give
 * the same moves in the same order, the same positions and the same estimates
 * (tests/solver/test_antares_native.py checks them against it), so the search visits the
 * same positions and reaches the same verdicts, several times cheaper a position. A
 * position is (piles, cells, home) as there: eight bytes piles, the cells' cards sorted,
 * four foundation counts. Cards are 0..51, suit card / 13, rank card % 13 (0 an Ace).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define PILES 8
#define SCORPION_PILES 4
#define CELL 8
#define HOME 9
#define MAXP 64
#define NOWHERE 255

static const int other_colour[4][2] = {{2, 3}, {2, 3}, {0, 1}, {0, 1}};
static const int kings[4] = {12, 25, 38, 51};

typedef struct {
    uint8_t n[PILES];
    uint8_t c[PILES][MAXP];
    uint8_t ncells;
    uint8_t cells[4];
    uint8_t home[4];
} Pos;

/* Reads (piles, cells, home); 0 with an exception set when they are not a position: each card
 * 0..51 at most once, the cells sorted, home counts 0..13. */
static int parse(PyObject *piles, PyObject *cells, PyObject *home, Pos *p) {
    if (!PyTuple_Check(piles) || PyTuple_GET_SIZE(piles) != PILES || !PyBytes_Check(cells) ||
        PyBytes_GET_SIZE(cells) > 4 || !PyBytes_Check(home) || PyBytes_GET_SIZE(home) != 4) {
        PyErr_SetString(PyExc_ValueError, "expected 8 pile bytes, at most 4 cells and 4 home counts");
        return 0;
    }
    uint64_t seen = 0;
    for (int i = 0; i < PILES; i++) {
        PyObject *pile = PyTuple_GET_ITEM(piles, i);
        if (!PyBytes_Check(pile) || PyBytes_GET_SIZE(pile) > 52) {
            PyErr_SetString(PyExc_ValueError, "a pile is bytes of at most 52 cards");
            return 0;
        }
        p->n[i] = (uint8_t)PyBytes_GET_SIZE(pile);
        memcpy(p->c[i], PyBytes_AS_STRING(pile), p->n[i]);
        for (int k = 0; k < p->n[i]; k++) {
            if (p->c[i][k] >= 52 || (seen >> p->c[i][k] & 1)) {
                PyErr_SetString(PyExc_ValueError, "a card is out of range or appears twice");
                return 0;
            }
            seen |= 1ULL << p->c[i][k];
        }
    }
    p->ncells = (uint8_t)PyBytes_GET_SIZE(cells);
    memcpy(p->cells, PyBytes_AS_STRING(cells), p->ncells);
    memcpy(p->home, PyBytes_AS_STRING(home), 4);
    for (int i = 0; i < p->ncells; i++) {
        if (p->cells[i] >= 52 || (seen >> p->cells[i] & 1) || (i && p->cells[i - 1] >= p->cells[i])) {
            PyErr_SetString(PyExc_ValueError, "the cells are not distinct cards, sorted");
            return 0;
        }
        seen |= 1ULL << p->cells[i];
    }
    for (int i = 0; i < 4; i++)
        if (p->home[i] > 13) {
            PyErr_SetString(PyExc_ValueError, "a home count is out of range");
            return 0;
        }
    return 1;
}

static int parse_position(PyObject *position, Pos *p) {
    if (!PyTuple_Check(position) || PyTuple_GET_SIZE(position) != 3) {
        PyErr_SetString(PyExc_ValueError, "a position is (piles, cells, home)");
        return 0;
    }
    return parse(PyTuple_GET_ITEM(position, 0), PyTuple_GET_ITEM(position, 1), PyTuple_GET_ITEM(position, 2), p);
}

static int in_cells(const Pos *p, int card) { return memchr(p->cells, card, p->ncells) != NULL; }

/* _fits_safely */
static int fits_safely(int card, const uint8_t *home, int mode) {
    int rank0 = card % 13;
    if (home[card / 13] != rank0) return 0;
    if (mode == 2 || rank0 < 2) return 1;
    const int *other = other_colour[card / 13];
    return home[other[0]] >= rank0 && home[other[1]] >= rank0;
}

/* _run_length */
static int run_length(const uint8_t *pile, int size, int limit) {
    int run = 1;
    while (run < size && run < limit) {
        int lower = pile[size - run - 1], upper = pile[size - run];
        if (lower % 13 != upper % 13 + 1 || (lower >= 26) == (upper >= 26)) break;
        run++;
    }
    return run;
}

typedef struct {
    int n;
    int8_t s[512];
    uint8_t k[512];
    int8_t t[512];
} Moves;

static void add(Moves *m, int s, int k, int t) {
    m->s[m->n] = (int8_t)s;
    m->k[m->n] = (uint8_t)k;
    m->t[m->n] = (int8_t)t;
    m->n++;
}

static int run_of(const Pos *p, int *runs, int s, int limit) {
    if (runs[s] < 0) runs[s] = run_length(p->c[s], p->n[s], limit);
    return runs[s];
}

/* moves: the same moves in the same order. */
static void list_moves(const Pos *p, Moves *out) {
    uint8_t col[52], idx[52];
    memset(col, NOWHERE, sizeof col);
    for (int i = 0; i < PILES; i++)
        for (int k = 0; k < p->n[i]; k++) {
            col[p->c[i][k]] = (uint8_t)i;
            idx[p->c[i][k]] = (uint8_t)k;
        }
    int limit = 5 - p->ncells, free_cell = limit > 1;
    int runs[PILES] = {0, 0, 0, 0, -1, -1, -1, -1};
    Moves last;
    last.n = 0;
    out->n = 0;
    int empty_scorpion = -1, empty_freecell = -1;
    for (int t = 0; t < PILES; t++) {
        int size = p->n[t];
        if (!size) {
            if (t < SCORPION_PILES) {
                if (empty_scorpion < 0) empty_scorpion = t;
            } else if (empty_freecell < 0) {
                empty_freecell = t;
            }
            continue;
        }
        int top = p->c[t][size - 1], rank0 = top % 13;
        if (p->home[top / 13] == rank0) add(&last, t, size - 1, HOME);
        if (free_cell) add(&last, t, size - 1, CELL);
        if (!rank0) continue;
        int wanted[2], nwanted;
        if (t < SCORPION_PILES) {
            wanted[0] = top - 1;
            nwanted = 1;
        } else {
            const int *other = other_colour[top / 13];
            wanted[0] = other[0] * 13 + rank0 - 1;
            wanted[1] = other[1] * 13 + rank0 - 1;
            nwanted = 2;
        }
        for (int w = 0; w < nwanted; w++) {
            int card = wanted[w];
            if (in_cells(p, card)) {
                add(out, CELL, card, t);
                continue;
            }
            int s = col[card];
            if (s == NOWHERE || s == t) continue;
            int k = idx[card];
            if (s >= SCORPION_PILES && p->n[s] - k > run_of(p, runs, s, limit)) continue;
            add(out, s, k, t);
        }
    }
    if (empty_scorpion >= 0) {
        for (int i = 0; i < 4; i++) {
            int card = kings[i];
            if (in_cells(p, card)) {
                add(out, CELL, card, empty_scorpion);
                continue;
            }
            int s = col[card];
            if (s == NOWHERE) continue;
            int k = idx[card];
            if (s < SCORPION_PILES) {
                if (k) add(out, s, k, empty_scorpion); /* a whole Scorpion pile would change nothing */
                continue;
            }
            if (p->n[s] - k <= run_of(p, runs, s, limit)) add(out, s, k, empty_scorpion);
        }
    }
    if (empty_freecell >= 0) {
        for (int s = 0; s < PILES; s++) {
            int size = p->n[s];
            if (!size) continue;
            int low = 0;
            if (s >= SCORPION_PILES) {
                low = size - run_of(p, runs, s, limit);
                if (low < 1) low = 1;
            }
            for (int k = low; k < size; k++) add(out, s, k, empty_freecell);
        }
        for (int i = 0; i < p->ncells; i++) add(out, CELL, p->cells[i], empty_freecell);
    }
    for (int i = 0; i < last.n; i++) add(out, last.s[i], last.k[i], last.t[i]);
    for (int i = 0; i < p->ncells; i++) {
        int card = p->cells[i];
        if (p->home[card / 13] == card % 13) add(out, CELL, card, HOME);
    }
}

static PyObject *py_moves(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *piles, *cells, *home;
    if (!PyArg_ParseTuple(args, "OOO", &piles, &cells, &home)) return NULL;
    Pos p;
    if (!parse(piles, cells, home, &p)) return NULL;
    Moves m;
    list_moves(&p, &m);
    PyObject *list = PyList_New(m.n);
    if (!list) return NULL;
    for (int i = 0; i < m.n; i++) {
        PyObject *move = Py_BuildValue("(iii)", m.s[i], m.k[i], m.t[i]);
        if (!move) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, move);
    }
    return list;
}

static void remove_cell(Pos *p, int card) {
    for (int i = 0; i < p->ncells; i++)
        if (p->cells[i] == card) {
            memmove(&p->cells[i], &p->cells[i + 1], (size_t)(p->ncells - i - 1));
            p->ncells--;
            return;
        }
}

/* _autoplay: sends cards home as the engine's autoplay does; marks the piles it changed. */
static void autoplay(Pos *p, int mode, int *changed) {
    int moved = 1;
    while (moved) {
        moved = 0;
        for (int i = 0; i < PILES; i++)
            while (p->n[i] && fits_safely(p->c[i][p->n[i] - 1], p->home, mode)) {
                p->home[p->c[i][p->n[i] - 1] / 13]++;
                p->n[i]--;
                changed[i] = moved = 1;
            }
        uint8_t snapshot[4];
        int n = p->ncells;
        memcpy(snapshot, p->cells, (size_t)n);
        for (int i = 0; i < n; i++) {
            int card = snapshot[i];
            if (fits_safely(card, p->home, mode)) {
                p->home[card / 13]++;
                remove_cell(p, card);
                moved = 1;
            }
        }
    }
}

static PyObject *position_of(const Pos *p, PyObject *piles_in, const int *changed, PyObject *home_in, int home_same) {
    PyObject *piles = PyTuple_New(PILES);
    if (!piles) return NULL;
    for (int i = 0; i < PILES; i++) {
        PyObject *pile;
        if (changed[i]) {
            pile = PyBytes_FromStringAndSize((const char *)p->c[i], p->n[i]);
            if (!pile) {
                Py_DECREF(piles);
                return NULL;
            }
        } else {
            pile = PyTuple_GET_ITEM(piles_in, i);
            Py_INCREF(pile);
        }
        PyTuple_SET_ITEM(piles, i, pile);
    }
    PyObject *cells = PyBytes_FromStringAndSize((const char *)p->cells, p->ncells);
    PyObject *home;
    if (home_same) {
        home = home_in;
        Py_INCREF(home);
    } else {
        home = PyBytes_FromStringAndSize((const char *)p->home, 4);
    }
    if (!cells || !home) {
        Py_DECREF(piles);
        Py_XDECREF(cells);
        Py_XDECREF(home);
        return NULL;
    }
    return Py_BuildValue("(NNN)", piles, cells, home);
}

/* play(position, move, mode, settled=True): the position after move and its autoplay. */
static PyObject *py_play(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *names[] = {"position", "move", "mode", "settled", NULL};
    PyObject *position;
    int s, k, t, mode, settled = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O(iii)i|p", names, &position, &s, &k, &t, &mode, &settled))
        return NULL;
    Pos p;
    if (!parse_position(position, &p)) return NULL;
    PyObject *piles_in = PyTuple_GET_ITEM(position, 0), *home_in = PyTuple_GET_ITEM(position, 2);
    /* A card from a cell, or a group from a pile: to a pile, or alone (a top card) to a cell or home. */
    int bad = t < 0 || t > HOME ||
              (s == CELL ? k < 0 || k >= 52 || !in_cells(&p, k)
                         : s < 0 || s >= PILES || k < 0 || k >= p.n[s] || (t >= CELL && k != p.n[s] - 1));
    if (bad || (t < PILES && p.n[t] + (s == CELL ? 1 : p.n[s] - k) >= MAXP) || (t == CELL && p.ncells >= 4)) {
        PyErr_SetString(PyExc_ValueError, "the move is not one of the position's");
        return NULL;
    }
    int changed[PILES] = {0};
    uint8_t group[MAXP];
    int ngroup;
    uint8_t home_before[4];
    memcpy(home_before, p.home, 4);
    if (s == CELL) {
        group[0] = (uint8_t)k;
        ngroup = 1;
        remove_cell(&p, k);
    } else {
        ngroup = p.n[s] - k;
        memcpy(group, &p.c[s][k], (size_t)ngroup);
        p.n[s] = (uint8_t)k;
        changed[s] = 1;
    }
    if (t == HOME) {
        p.home[group[0] / 13]++;
        if (mode) autoplay(&p, mode, changed);
        return position_of(&p, piles_in, changed, home_in, 0);
    }
    if (t == CELL) {
        int at = p.ncells;
        while (at > 0 && p.cells[at - 1] > group[0]) {
            p.cells[at] = p.cells[at - 1];
            at--;
        }
        p.cells[at] = group[0];
        p.ncells++;
    } else {
        memcpy(&p.c[t][p.n[t]], group, (size_t)ngroup);
        p.n[t] = (uint8_t)(p.n[t] + ngroup);
        changed[t] = 1;
    }
    if (mode && (!settled || fits_safely(group[ngroup - 1], home_before, mode) ||
                 (s != CELL && k && fits_safely(p.c[s][p.n[s] - 1], home_before, mode)))) {
        autoplay(&p, mode, changed);
        return position_of(&p, piles_in, changed, home_in, 0);
    }
    return position_of(&p, piles_in, changed, home_in, 1);
}

/* estimate(position, (not_home, burying, disorder, cell)): Estimator's weighted count. */
static PyObject *py_estimate(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *position;
    int not_home, burying, disorder, cell;
    if (!PyArg_ParseTuple(args, "O(iiii)", &position, &not_home, &burying, &disorder, &cell)) return NULL;
    Pos p;
    if (!parse_position(position, &p)) return NULL;
    int buried = 0, disordered = 0, home = 0;
    for (int suit = 0; suit < 4; suit++) {
        home += p.home[suit];
        /* The next card of the suit; past a King this names the next suit's Ace, as in Python. */
        int card = 13 * suit + p.home[suit];
        for (int i = 0; i < PILES; i++) {
            const uint8_t *at = memchr(p.c[i], card, p.n[i]);
            if (at) {
                buried += p.n[i] - (int)(at - p.c[i]) - 1;
                break;
            }
        }
    }
    for (int i = 0; i < PILES; i++) {
        int same_suit = i < SCORPION_PILES;
        for (int k = 1; k < p.n[i]; k++) {
            int under = p.c[i][k - 1], card = p.c[i][k];
            int broken = same_suit ? under / 13 != card / 13 : (under >= 26) == (card >= 26);
            disordered += under % 13 != card % 13 + 1 || broken;
        }
    }
    return PyLong_FromLong((long)not_home * (52 - home) + (long)cell * p.ncells + (long)burying * buried +
                           (long)disorder * disordered);
}

static PyMethodDef methods[] = {
    {"moves", py_moves, METH_VARARGS, "moves(piles, cells, home): every legal move, as antares_core.moves."},
    {"play", (PyCFunction)(void (*)(void))py_play, METH_VARARGS | METH_KEYWORDS, "play(position, move, mode, settled=True): as antares_core.play."},
    {"estimate", py_estimate, METH_VARARGS, "estimate(position, weights): as an antares_core.Estimator."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_antares_core", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__antares_core(void) { return PyModule_Create(&module); }

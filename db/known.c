/* known.c: what the database knows for one GPU, read once into memory: every verified
 * measurement of the given templates on that GPU or its model, ordered and indexed so that the
 * winner lookups (exact size, nearest size) run without SQL. Library calls decide from it, so a
 * call's cost does not grow with the sizes a process meets; pm__db_winner_get_if and
 * pm__db_winner_nearest_if are these lookups on a snapshot of one op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One verified measurement, as a lookup needs it. */
struct pm__db_known_row {
  char op[32], dtype[8], variant[40]; /* op: a kernel of one's own has up to 31 characters */
  int radius;
  int64_t rows, cols, n;
  char *config, *params; /* heap: "bx=32 by=8", {"bx":32,"by":8} */
  double median_ms, min_ms, max_ms, gbps, seed_ms; /* seed_ms 0: the seed was not measured */
  int samples, same_gpu;
  int64_t gpu_id, id;
};

/* A seed's median, to be found by its problem and GPU. */
typedef struct seed {
  int64_t gpu_id, rows, cols, n;
  int radius;
  char dtype[8], variant[40];
  double median_ms;
} seed;

/* The rows of one size of a group: rows[begin, end), with the logarithms nearest compares. */
typedef struct size_ix {
  int64_t rows, cols, n;
  size_t begin, end;
  double log_size, log_aspect; /* ln(elements), ln(rows / cols); 0 for a vector */
} size_ix;

/* A configuration measured at both sizes of a bracket: its rows there, and its median over the
 * fastest one's at each (1 for the winner, more for the others). */
typedef struct both {
  size_t lo_row, hi_row;
  double lo_ratio, hi_ratio;
} both;

/* Two tuned sizes next to each other in elements (lo <= hi, indices into the group's sizes) and
 * the configurations measured at both: what a size between them is decided from. */
typedef struct bracket {
  size_t lo, hi;
  both *both;
  size_t nboth;
  size_t *hull; /* the indices into both that can be least for some place between (below) */
  size_t nhull;
} bracket;

/* The sizes of a group whose aspects (rows / cols) lie together: no gap wider than LINE_GAP in
 * ln(aspect) between two of them (a vector's sizes are one line). Between two sizes is decided
 * along a line, so that a long thin matrix is decided from long thin ones: by_size holds its
 * sizes in order of elements, and brackets the neighbours in that order. */
typedef struct line {
  size_t *by_size;   /* n indices into the group's sizes, by log_size then log_aspect */
  size_t n;
  bracket *brackets; /* n - 1: brackets[j] is by_size[j], by_size[j + 1] */
  double lo_aspect, hi_aspect; /* the least and greatest ln(aspect) of its sizes */
  int kind; /* ANY_SIZE: made of all the group's sizes; else ROUND or UNROUND: of those alone */
} line;
#define LINE_GAP 0.7 /* a factor of 2 (ln 2 = 0.69), a little more */

/* Round and unround sizes. A kernel takes its fast paths at a round size (whole vectors, whole
 * tiles, no tail), and a random one takes its slow paths too: at n = 1,326,910 floats a reduce
 * measured at 2^20 and 2^21 as fast as the best ran 19% slower than it (H100,
 * bench/results/2026-11-26b-h100). So each group also has lines of its round sizes alone and of
 * its unround sizes alone, and a size between two of its own kind, no more than CLASS_SPAN apart,
 * is decided from them (the grid has both kinds: tuner/op.h); else from all the sizes. Round: a
 * vector's n a power of two or a multiple of ROUND_ELEMS; a matrix, both its sides so.
 * A matrix stored by rows or by columns (a variant "order=row" or "order=col": matadd) whose
 * contiguous side (its cols, or its rows by columns) is even and that is not round is of a third
 * kind, EVEN: a packed layout loads its lines two elements at a time, which an odd side allows
 * only one at a time, and a pitched one spreads a short line over more 32-byte sectors than a
 * packed one moves (a bf16 line of 130 elements: 9 sectors, 288 bytes for 260), so its fastest
 * configuration is often packed where the unround sizes of an odd side, and the round ones, say
 * pitched: 5493x130 row-major bf16 on an H200 ran at 0.87-0.89 of exact decided from those, and
 * at 0.98 from the grid's even twins (bench/results/2026-11-28k-h200). It is decided between two
 * EVEN sizes no more than EVEN_SPAN apart (the grid's even twins lie up to 4.04x apart), else
 * between two UNROUND ones as an odd one is, else from all the sizes. */
enum { ANY_SIZE = -1, UNROUND = 0, ROUND = 1, EVEN = 2 };
#define ROUND_ELEMS 256
#define CLASS_SPAN 1.3863 /* ln 4: a grid size of that kind missing between, no more */
#define EVEN_SPAN 1.411   /* ln 4.1 */

/* Between sizes or from the nearest, the default serves unless another configuration is
 * predicted at least this much faster: a prediction from other sizes errs by a few percent
 * (an H100's 166 blocks of a bf16 add at n = 679,936, interpolated from 2^19's 128 and 2^20's
 * 256, ran 11% slower than predicted, and than the default predicted 0.6% slower), and the
 * default is what knowing nothing gives. */
#define DEFAULT_MARGIN 0.03

/* The rows of one (op, dtype, variant, radius): rows[begin, end), sizes ascending, and its
 * distinct sizes in the same order (lookups search those, not the rows); its lines, by aspect. */
typedef struct pm__db_known_group {
  size_t begin, end;
  size_ix *sizes;
  size_t nsizes;
  line *lines;
  size_t nlines;
  double least_ms; /* the least time of its rows: what any launch of the op takes (scaled()) */
}  group;

/* ln(elements) of a size (rows x cols, times n where a batch of them has n too; n for a vector)
 * and ln(rows / cols) (0 for a vector): what the lookups compare sizes by. */
static void size_logs(int64_t rows, int64_t cols, int64_t n, double *size, double *aspect) {
  int matrix = rows > 0 && cols > 0;
  double e = matrix ? (double)rows * (double)cols * (double)(n > 0 ? n : 1) : (double)n;
  *size = e > 0 ? log(e) : 0;
  *aspect = matrix ? log((double)rows / (double)cols) : 0;
}

/* The GPU itself or one of its model: the same name, compute capability and SM count always
 * (a row that names this GPU's uuid but another model, as a forged or mistaken import could
 * write, is never served here), and the same memory size unless it is the GPU itself (turning
 * ECC on or off changes what it reports). */
#define SAME_MODEL                                                                           \
  "(g.name = ?2 AND g.cc_major = ?3 AND g.cc_minor = ?4 AND g.sm_count = ?5"                 \
  " AND (g.uuid = ?1 OR g.mem_bytes = ?6))"

/* The order of lookups: by problem (op, dtype, variant, radius, size), then the measurements
 * of the GPU itself before those of others of its model, the fastest first. */
static int row_cmp(const void *x, const void *y) {
  const pm__db_known_row *a = x, *b = y;
  int c;
  if ((c = strcmp(a->op, b->op)) || (c = strcmp(a->dtype, b->dtype)) ||
      (c = strcmp(a->variant, b->variant)))
    return c;
  if (a->radius != b->radius) return a->radius < b->radius ? -1 : 1;
  if (a->rows != b->rows) return a->rows < b->rows ? -1 : 1;
  if (a->cols != b->cols) return a->cols < b->cols ? -1 : 1;
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  if (a->same_gpu != b->same_gpu) return a->same_gpu > b->same_gpu ? -1 : 1;
  if (a->median_ms != b->median_ms) return a->median_ms < b->median_ms ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

/* Seeds ordered by GPU and problem (op is one per load). */
static int seed_cmp(const void *x, const void *y) {
  const seed *a = x, *b = y;
  int c;
  if (a->gpu_id != b->gpu_id) return a->gpu_id < b->gpu_id ? -1 : 1;
  if ((c = strcmp(a->dtype, b->dtype)) || (c = strcmp(a->variant, b->variant))) return c;
  if (a->radius != b->radius) return a->radius < b->radius ? -1 : 1;
  if (a->rows != b->rows) return a->rows < b->rows ? -1 : 1;
  if (a->cols != b->cols) return a->cols < b->cols ? -1 : 1;
  return (a->n > b->n) - (a->n < b->n);
}

#define COLUMNS                                                                                \
  "m.dtype, m.variant, ifnull(m.radius, 0), ifnull(m.rows, 0), ifnull(m.cols, 0),"             \
  " ifnull(m.n, 0), m.median_ms, m.gpu_id"
#define FROM_MODEL                                                                            \
  " FROM measurement m JOIN gpu g ON g.id = m.gpu_id WHERE " SAME_MODEL " AND m.op = ?7"      \
  " AND m.template_sha256 = ?8 AND m.status = 'ok'"

static int bind(sqlite3_stmt *st, const pm__device_info *d, const char *op, const char *sha) {
  return sqlite3_bind_text(st, 1, d->uuid, -1, SQLITE_STATIC) |
         sqlite3_bind_text(st, 2, d->name, -1, SQLITE_STATIC) |
         sqlite3_bind_int(st, 3, d->cc_major) | sqlite3_bind_int(st, 4, d->cc_minor) |
         sqlite3_bind_int(st, 5, d->sm_count) |
         sqlite3_bind_int64(st, 6, (sqlite3_int64)d->mem_bytes) |
         sqlite3_bind_text(st, 7, op, -1, SQLITE_STATIC) |
         sqlite3_bind_text(st, 8, sha, -1, SQLITE_STATIC);
}

/* Fills the problem columns (COLUMNS, from column `at`) of a row or seed; jumps to `fail` where
 * SQLite runs out of memory making their text (db, rc in scope). */
#define READ_PROBLEM(st, at, w)                                                              \
  do {                                                                                       \
    const char *dtype_, *variant_;                                                           \
    PM__SQLITE_TEXT(db, st, at, dtype_);                                                     \
    PM__SQLITE_TEXT(db, st, (at) + 1, variant_);                                             \
    snprintf((w)->dtype, sizeof (w)->dtype, "%s", dtype_ ? dtype_ : "");                     \
    snprintf((w)->variant, sizeof (w)->variant, "%s", variant_ ? variant_ : "");             \
    (w)->radius = sqlite3_column_int(st, (at) + 2);                                          \
    (w)->rows = sqlite3_column_int64(st, (at) + 3);                                          \
    (w)->cols = sqlite3_column_int64(st, (at) + 4);                                          \
    (w)->n = sqlite3_column_int64(st, (at) + 5);                                             \
    (w)->median_ms = sqlite3_column_double(st, (at) + 6);                                    \
    (w)->gpu_id = sqlite3_column_int64(st, (at) + 7);                                        \
  } while (0)

/* The seeds' medians of op's template sha on d or its model, sorted (heap, *n of them). */
static int load_seeds(pm__db *db, const pm__device_info *d, const char *op, const char *sha,
                      seed **out, size_t *n) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  *out = NULL, *n = 0;
  PM__SQLITE(db, sqlite3_prepare_v2(pm__db_handle(db),
                                    "SELECT " COLUMNS FROM_MODEL " AND m.is_seed = 1", -1, &st,
                                    NULL));
  PM__SQLITE(db, bind(st, d, op, sha));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      seed *grown = pm__realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof *grown);
      if (grown == NULL) {
        rc = pm__seterr(pm__db_ctx(db), PM_ENOMEM, "tuning database %s: out of memory",
                        pm__db_filename(db));
        goto fail;
      }
      *out = grown;
    }
    READ_PROBLEM(st, 0, &(*out)[*n]);
    (*n)++;
  }
  PM__SQLITE_ST(db, st, r);
  if (*n > 1) qsort(*out, *n, sizeof **out, seed_cmp); /* (no seeds: *out is NULL) */
fail:
  pm__db_finalize(&st);
  return rc;
}

/* Appends the verified measurements of op's template sha on d or its model to k, each with its
 * problem's seed median where the seed was measured on the same GPU. */
static int load_op(pm__db *db, const pm__device_info *d, const char *op, const char *sha,
                   pm__db_known *k) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  seed *seeds = NULL;
  size_t nseeds = 0, first = k->n;
  if ((rc = load_seeds(db, d, op, sha, &seeds, &nseeds)) != PM_OK) return rc;
  PM__SQLITE(db, sqlite3_prepare_v2(pm__db_handle(db),
                                    "SELECT " COLUMNS ", m.config, m.params, m.min_ms, m.max_ms,"
                                    " m.gbps, m.samples, g.uuid = ?1, m.id" FROM_MODEL
                                    " AND m.verified = 1",
                                    -1, &st, NULL));
  PM__SQLITE(db, bind(st, d, op, sha));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    if (k->n == k->cap) {
      size_t cap = k->cap ? 2 * k->cap : 256;
      pm__db_known_row *grown = pm__realloc(k->rows, cap * sizeof *grown);
      if (grown == NULL) goto nomem;
      k->rows = grown, k->cap = cap;
    }
    pm__db_known_row *w = &k->rows[k->n];
    const char *config, *params;
    PM__SQLITE_TEXT(db, st, 8, config);
    PM__SQLITE_TEXT(db, st, 9, params);
    memset(w, 0, sizeof *w);
    snprintf(w->op, sizeof w->op, "%s", op);
    READ_PROBLEM(st, 0, w);
    w->config = pm__strdup(config ? config : "");
    w->params = pm__strdup(params ? params : "");
    if (w->config == NULL || w->params == NULL) {
      free(w->config), free(w->params);
      goto nomem;
    }
    w->min_ms = sqlite3_column_double(st, 10);
    w->max_ms = sqlite3_column_double(st, 11);
    w->gbps = sqlite3_column_double(st, 12);
    w->samples = sqlite3_column_int(st, 13);
    w->same_gpu = sqlite3_column_int(st, 14);
    w->id = sqlite3_column_int64(st, 15);
    seed key = {.gpu_id = w->gpu_id, .rows = w->rows, .cols = w->cols, .n = w->n,
                .radius = w->radius};
    memcpy(key.dtype, w->dtype, sizeof key.dtype);
    memcpy(key.variant, w->variant, sizeof key.variant);
    const seed *s = nseeds ? bsearch(&key, seeds, nseeds, sizeof *seeds, seed_cmp) : NULL;
    w->seed_ms = s != NULL ? s->median_ms : 0;
    k->n++;
  }
  PM__SQLITE_ST(db, st, r);
  if (k->n - first > 1) qsort(k->rows + first, k->n - first, sizeof *k->rows, row_cmp);
  goto fail; /* done: rc is PM_OK */
nomem:
  rc = pm__seterr(pm__db_ctx(db), PM_ENOMEM, "tuning database %s: out of memory",
                  pm__db_filename(db));
fail:
  pm__db_finalize(&st);
  free(seeds);
  return rc;
}

static int same_group(const pm__db_known_row *a, const pm__db_known_row *b) {
  return strcmp(a->op, b->op) == 0 && strcmp(a->dtype, b->dtype) == 0 &&
         strcmp(a->variant, b->variant) == 0 && a->radius == b->radius;
}

static int same_size(const pm__db_known_row *w, int64_t rows, int64_t cols, int64_t n) {
  return w->rows == rows && w->cols == cols && w->n == n;
}

/* The distinct sizes of g's rows. */
static int index_sizes(pm__db_known *k, group *g) {
  size_t count = 0;
  for (size_t i = g->begin; i < g->end; i++)
    count += i == g->begin || !same_size(&k->rows[i], k->rows[i - 1].rows, k->rows[i - 1].cols,
                                         k->rows[i - 1].n);
  if (count > 0 && (g->sizes = pm__calloc(count, sizeof *g->sizes)) == NULL) return PM_ENOMEM;
  for (size_t i = g->begin; i < g->end; i++) {
    const pm__db_known_row *w = &k->rows[i];
    if (i == g->begin || w->median_ms < g->least_ms) g->least_ms = w->median_ms;
    if (g->nsizes > 0 && same_size(w, g->sizes[g->nsizes - 1].rows, g->sizes[g->nsizes - 1].cols,
                                   g->sizes[g->nsizes - 1].n)) {
      g->sizes[g->nsizes - 1].end = i + 1;
      continue;
    }
    size_ix z = {w->rows, w->cols, w->n, i, i + 1, 0, 0};
    size_logs(w->rows, w->cols, w->n, &z.log_size, &z.log_aspect);
    g->sizes[g->nsizes++] = z;
  }
  return PM_OK;
}

/* A size's place in the order of elements, and a row's under its configuration: sorted by
 * qsort with the keys in the items (no comparator state, so that snapshots load at once on
 * several threads). */
typedef struct size_key {
  double log_size, log_aspect;
  size_t i;
} size_key;
typedef struct config_key {
  const char *config;
  size_t row;
} config_key;

static int by_elements(const void *x, const void *y) {
  const size_key *a = x, *b = y;
  if (a->log_size != b->log_size) return a->log_size < b->log_size ? -1 : 1;
  if (a->log_aspect != b->log_aspect) return a->log_aspect < b->log_aspect ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

static int by_config(const void *x, const void *y) {
  const config_key *a = x, *b = y;
  int c = strcmp(a->config, b->config);
  return c ? c : (a->row > b->row) - (a->row < b->row);
}

/* The rows of size z, one per configuration (the first in z's order: this GPU's before its
 * model's, the fastest first), in order of configuration text; heap, *n of them. */
static config_key *configs_of(const pm__db_known *k, const size_ix *z, size_t *n) {
  config_key *ix = pm__malloc((z->end - z->begin) * sizeof *ix);
  size_t m = 0;
  if (ix == NULL) return NULL;
  for (size_t i = z->begin; i < z->end; i++) ix[m++] = (config_key){k->rows[i].config, i};
  qsort(ix, m, sizeof *ix, by_config);
  *n = 0;
  for (size_t i = 0; i < m; i++) /* equal configurations: keep the first in z's order */
    if (*n == 0 || strcmp(ix[*n - 1].config, ix[i].config) != 0) ix[(*n)++] = ix[i];
  return ix;
}

/* The bracket of sizes lo and hi: the configurations measured at both, with their ratios to
 * each size's fastest. */
static int make_bracket(const pm__db_known *k, const group *g, size_t lo, size_t hi, bracket *b) {
  size_t nl = 0, nh = 0;
  config_key *l = configs_of(k, &g->sizes[lo], &nl), *h = NULL;
  int rc = PM_ENOMEM;
  b->lo = lo, b->hi = hi, b->both = NULL, b->nboth = 0;
  if (l == NULL || (h = configs_of(k, &g->sizes[hi], &nh)) == NULL) goto done;
  if ((b->both = pm__malloc((nl < nh ? nl : nh) * sizeof *b->both + 1)) == NULL) goto done;
  double lo_best = k->rows[g->sizes[lo].begin].median_ms;
  double hi_best = k->rows[g->sizes[hi].begin].median_ms;
  for (size_t i = 0, j = 0; i < nl && j < nh;) {
    int c = strcmp(l[i].config, h[j].config);
    if (c == 0)
      b->both[b->nboth++] = (both){l[i].row, h[j].row, k->rows[l[i].row].median_ms / lo_best,
                                   k->rows[h[j].row].median_ms / hi_best};
    i += c <= 0, j += c >= 0;
  }
  rc = PM_OK;
done:
  free(l), free(h);
  return rc;
}

/* Orders candidates by ratio at lo, then at hi, then index (for the hull). */
static int by_ratios(const void *x, const void *y) {
  const both *a = *(const both *const *)x, *b = *(const both *const *)y;
  if (a->lo_ratio != b->lo_ratio) return a->lo_ratio < b->lo_ratio ? -1 : 1;
  if (a->hi_ratio != b->hi_ratio) return a->hi_ratio < b->hi_ratio ? -1 : 1;
  return (a > b) - (a < b);
}

/* The candidates of b that can be least somewhere between its two sizes: the score
 * (1 - w) lo_ratio + w hi_ratio is linear in the point (lo_ratio, hi_ratio), so for every w in
 * [0, 1] it is least at a vertex of the points' lower-left convex hull, from the point least at
 * lo to the point least at hi (the monotone chain). A lookup scores those few instead of them all. */
static int make_hull(bracket *b) {
  const both **p = pm__malloc((b->nboth + 1) * sizeof *p);
  if (p == NULL || (b->hull = pm__malloc((b->nboth + 1) * sizeof *b->hull)) == NULL)
    return free(p), PM_ENOMEM;
  for (size_t i = 0; i < b->nboth; i++) p[i] = &b->both[i];
  qsort(p, b->nboth, sizeof *p, by_ratios);
  for (size_t i = 0; i < b->nboth; i++) {
    const both *c = p[i];
    if (b->nhull > 0 && c->hi_ratio >= b->both[b->hull[b->nhull - 1]].hi_ratio)
      continue; /* no lower at hi than a point before it, which is no higher at lo */
    while (b->nhull >= 2) { /* drop the last vertex where it lies on or above the chord */
      const both *o = &b->both[b->hull[b->nhull - 2]], *a = &b->both[b->hull[b->nhull - 1]];
      double cross = (a->lo_ratio - o->lo_ratio) * (c->hi_ratio - o->hi_ratio) -
                     (a->hi_ratio - o->hi_ratio) * (c->lo_ratio - o->lo_ratio);
      if (cross > 0) break;
      b->nhull--;
    }
    b->hull[b->nhull++] = (size_t)(c - b->both);
  }
  free(p);
  return PM_OK;
}

static int by_aspect(const void *x, const void *y) {
  const size_key *a = x, *b = y;
  if (a->log_aspect != b->log_aspect) return a->log_aspect < b->log_aspect ? -1 : 1;
  if (a->log_size != b->log_size) return a->log_size < b->log_size ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* Line l of g made of the sizes keys[0, n) (in order of aspect), of that kind: its sizes in order
 * of elements and the brackets between them. */
static int make_line(const pm__db_known *k, const group *g, size_key *keys, size_t n, int kind,
                     line *l) {
  l->lo_aspect = keys[0].log_aspect, l->hi_aspect = keys[n - 1].log_aspect;
  l->kind = kind;
  if ((l->by_size = pm__malloc(n * sizeof *l->by_size)) == NULL) return PM_ENOMEM;
  qsort(keys, n, sizeof *keys, by_elements);
  for (size_t i = 0; i < n; i++) l->by_size[i] = keys[i].i;
  l->n = n;
  if (n < 2) return PM_OK;
  if ((l->brackets = pm__calloc(n - 1, sizeof *l->brackets)) == NULL) return PM_ENOMEM;
  for (size_t j = 0; j + 1 < n; j++)
    if (make_bracket(k, g, l->by_size[j], l->by_size[j + 1], &l->brackets[j]) != PM_OK ||
        make_hull(&l->brackets[j]) != PM_OK)
      return PM_ENOMEM;
  return PM_OK;
}

static int round_size(int64_t rows, int64_t cols, int64_t n) {
#define ROUND_SIDE(x) ((x) > 0 && (((x) & ((x)-1)) == 0 || (x) % ROUND_ELEMS == 0))
  return rows > 0 ? ROUND_SIDE(rows) && ROUND_SIDE(cols) : ROUND_SIDE(n); /* (a batch: any) */
#undef ROUND_SIDE
}

/* A size's kind in a group of that variant: ROUND, EVEN or UNROUND (above). */
static int size_kind(const char *variant, int64_t rows, int64_t cols, int64_t n) {
  int by_cols = strcmp(variant, "order=col") == 0;
  if (round_size(rows, cols, n)) return ROUND;
  if (rows <= 0 || (!by_cols && strcmp(variant, "order=row") != 0)) return UNROUND;
  return (by_cols ? rows : cols) % 2 == 0 ? EVEN : UNROUND;
}

/* The group's lines of one kind (its sizes of that kind split where ln(aspect) jumps by more than
 * LINE_GAP), appended to g->lines. */
static int index_lines_of(const pm__db_known *k, group *g, int kind, size_key *keys) {
  size_t n = 0;
  for (size_t i = 0; i < g->nsizes; i++) {
    const size_ix *z = &g->sizes[i];
    if (kind == ANY_SIZE || size_kind(k->rows[z->begin].variant, z->rows, z->cols, z->n) == kind)
      keys[n++] = (size_key){z->log_size, z->log_aspect, i};
  }
  qsort(keys, n, sizeof *keys, by_aspect);
  int rc = PM_OK;
  for (size_t from = 0, i = 1; i <= n && rc == PM_OK; i++)
    if (i == n || keys[i].log_aspect - keys[i - 1].log_aspect > LINE_GAP) {
      rc = make_line(k, g, keys + from, i - from, kind, &g->lines[g->nlines++]);
      from = i;
    }
  return rc;
}

/* The group's lines: of all its sizes, of its round ones, of its unround ones. */
static int index_lines(const pm__db_known *k, group *g) {
  if (g->nsizes == 0) return PM_OK;
  size_key *keys = pm__malloc(g->nsizes * sizeof *keys);
  if (keys == NULL || (g->lines = pm__calloc(4 * g->nsizes, sizeof *g->lines)) == NULL)
    return free(keys), PM_ENOMEM;
  int rc = index_lines_of(k, g, ANY_SIZE, keys);
  if (rc == PM_OK) rc = index_lines_of(k, g, ROUND, keys);
  if (rc == PM_OK) rc = index_lines_of(k, g, UNROUND, keys);
  if (rc == PM_OK) rc = index_lines_of(k, g, EVEN, keys);
  free(keys);
  return rc;
}

/* Splits the rows (ordered by group, then size) into groups. */
static int index_groups(pm__db_known *k) {
  for (size_t i = 0; i < k->n; i++) {
    if (i > 0 && same_group(&k->rows[i - 1], &k->rows[i])) continue;
    if (k->ngroups % 16 == 0) {
      group *grown = pm__realloc(k->groups, (k->ngroups + 16) * sizeof *grown);
      if (grown == NULL) return PM_ENOMEM;
      k->groups = grown;
    }
    k->groups[k->ngroups++] = (group){.begin = i, .end = i};
  }
  for (size_t g = 0; g < k->ngroups; g++) {
    k->groups[g].end = g + 1 < k->ngroups ? k->groups[g + 1].begin : k->n;
    if (index_sizes(k, &k->groups[g]) != PM_OK || index_lines(k, &k->groups[g]) != PM_OK)
      return PM_ENOMEM;
  }
  return PM_OK;
}

int pm__db_known_load(pm__db *db, const pm__device_info *d, const char *const *ops,
                      const char *const *shas, pm__db_known *out) {
  int rc = PM_OK;
  memset(out, 0, sizeof *out);
  out->db = db;
  out->dev = *d;
  for (size_t i = 0; ops[i] != NULL && rc == PM_OK; i++) rc = load_op(db, d, ops[i], shas[i], out);
  if (rc == PM_OK && index_groups(out) != PM_OK)
    rc = pm__seterr(pm__db_ctx(db), PM_ENOMEM, "tuning database %s: out of memory",
                    pm__db_filename(db));
  if (rc != PM_OK) pm__db_known_free(out);
  return rc;
}

void pm__db_known_free(pm__db_known *k) {
  if (k == NULL) return;
  for (size_t i = 0; i < k->n; i++) free(k->rows[i].config), free(k->rows[i].params);
  free(k->rows);
  for (size_t g = 0; g < k->ngroups; g++) {
    group *gr = &k->groups[g];
    for (size_t l = 0; l < gr->nlines; l++) {
      line *ln = &gr->lines[l];
      for (size_t j = 0; ln->brackets != NULL && j + 1 < ln->n; j++)
        free(ln->brackets[j].both), free(ln->brackets[j].hull);
      free(ln->brackets), free(ln->by_size);
    }
    free(gr->lines), free(gr->sizes);
  }
  free(k->groups);
  memset(k, 0, sizeof *k);
}

/* The group of p, or NULL. */
static const group *group_of(const pm__db_known *k, const pm__db_problem *p) {
  const char *variant = p->variant ? p->variant : "";
  for (size_t g = 0; g < k->ngroups; g++) {
    const pm__db_known_row *w = &k->rows[k->groups[g].begin];
    if (strcmp(w->op, p->op) == 0 && strcmp(w->dtype, p->dtype) == 0 &&
        strcmp(w->variant, variant) == 0 && w->radius == p->radius)
      return &k->groups[g];
  }
  return NULL;
}

static void winner_of(const pm__db_known_row *w, pm__db_winner *out) {
  memset(out, 0, sizeof *out);
  pm__copy_text(out->config, sizeof out->config, w->config);
  pm__copy_text(out->params, sizeof out->params, w->params);
  out->median_ms = w->median_ms, out->min_ms = w->min_ms, out->max_ms = w->max_ms;
  out->gbps = w->gbps, out->samples = w->samples;
  out->speedup = w->seed_ms > 0 ? w->seed_ms / w->median_ms : 0;
  out->rows = w->rows, out->cols = w->cols, out->n = w->n, out->radius = w->radius;
  out->same_gpu = w->same_gpu;
}

/* The problem as the messages show it: its canonical text (a malformed one is said as given;
 * the message written after this one replaces what pm__db_problem_text said of it). */
static void problem_text(const pm__db_known *k, const pm__db_problem *p, char *out) {
  if (pm__db_problem_text(k->db, p, out) != PM_OK)
    snprintf(out, PM__DB_PROBLEM_MAX, "rows=%lld cols=%lld n=%lld", (long long)p->rows,
             (long long)p->cols, (long long)p->n);
}

/* The size of g that is (rows, cols, n), by bisection; NULL where g has none. */
static const size_ix *size_of(const group *g, int64_t rows, int64_t cols, int64_t n) {
  size_t lo = 0, hi = g->nsizes;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const size_ix *z = &g->sizes[mid];
    int before = z->rows != rows ? z->rows < rows : z->cols != cols ? z->cols < cols : z->n < n;
    if (z->rows == rows && z->cols == cols && z->n == n) return z;
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* The first row (the GPU's own before its model's, fastest first) of p's exact size that accept
 * takes; NULL where there is none. Says nothing: the callers word the miss. */
/* Whether the row's configuration takes the same path at p's size as at the row's (alike NULL:
 * always). */
static int alike_at(const pm__db_known_row *r,
                    int (*alike)(void *arg, const char *config, const pm__db_problem *at),
                    void *arg, const pm__db_problem *p) {
  if (alike == NULL) return 1;
  pm__db_problem at = *p;
  at.rows = r->rows, at.cols = r->cols, at.n = r->n;
  return alike(arg, r->config, &at);
}

/* The first row of size z (the GPU's own before its model's, fastest first) that accept takes
 * and that runs p as it ran z (alike NULL: any); NULL where there is none. */
static const pm__db_known_row *first_of(const pm__db_known *k, const size_ix *z,
                                        int (*accept)(void *arg, const char *config),
                                        int (*alike)(void *arg, const char *config,
                                                     const pm__db_problem *at),
                                        void *arg, const pm__db_problem *p) {
  for (size_t i = z->begin; i < z->end; i++)
    if ((accept == NULL || accept(arg, k->rows[i].config)) && alike_at(&k->rows[i], alike, arg, p))
      return &k->rows[i];
  return NULL;
}

static const pm__db_known_row *find_exact(const pm__db_known *k, const group *g,
                                          const pm__db_problem *p,
                                          int (*accept)(void *arg, const char *config),
                                          void *arg) {
  const size_ix *z = g != NULL ? size_of(g, p->rows, p->cols, p->n) : NULL;
  return z != NULL ? first_of(k, z, accept, NULL, arg, p) : NULL;
}

static int not_tuned(const pm__db_known *k, const pm__db_problem *p, int fits) {
  char problem[PM__DB_PROBLEM_MAX];
  problem_text(k, p, problem);
  return pm__seterr(pm__db_ctx(k->db), PM_ENOTFOUND,
                    "tuning database %s: nothing tuned%s for %s %s %s on %s (%s) or its model",
                    pm__db_filename(k->db), fits ? " that fits" : "", p->op, p->dtype, problem,
                    k->dev.name, k->dev.uuid);
}

int pm__db_known_get_if(const pm__db_known *k, const pm__db_problem *p,
                        int (*accept)(void *arg, const char *config), void *arg,
                        pm__db_winner *out) {
  const pm__db_known_row *w = find_exact(k, group_of(k, p), p, accept, arg);
  memset(out, 0, sizeof *out);
  if (w == NULL) return not_tuned(k, p, accept != NULL);
  winner_of(w, out);
  return PM_OK;
}

static void problem_logs(const pm__db_problem *p, double *size, double *aspect) {
  size_logs(p->rows, p->cols, p->n, size, aspect);
}

/* Whether size z, at distances d in ln(elements) and a in ln(aspect) from the size asked, lies
 * nearer than best (NULL: none yet) at dist and adist: the least d, then a, then the smaller. */
static int nearer(const size_ix *z, double d, double a, const size_ix *best, double dist,
                  double adist) {
  return best == NULL || d < dist - 1e-12 ||
         (d <= dist + 1e-12 &&
          (a < adist - 1e-12 || (a <= adist + 1e-12 && z->log_size < best->log_size)));
}

/* The size of g nearest to p: the least |ln(size / tuned size)| in elements, then (matrices) the
 * least |ln(aspect / tuned aspect)|, then the smaller size; NULL where g has none. *dist and
 * *adist receive its distances. */
static const size_ix *nearest_size(const group *g, const pm__db_problem *p, double *dist,
                                   double *adist) {
  int matrix = p->rows > 0;
  double size, aspect;
  problem_logs(p, &size, &aspect);
  const size_ix *best = NULL;
  for (size_t i = 0; g != NULL && i < g->nsizes; i++) {
    const size_ix *z = &g->sizes[i];
    if (matrix ? z->rows < 1 || z->cols < 1 : z->n < 1) continue;
    double d = fabs(size - z->log_size), a = matrix ? fabs(aspect - z->log_aspect) : 0;
    if (nearer(z, d, a, best, *dist, *adist)) best = z, *dist = d, *adist = a;
  }
  return best;
}

int pm__db_known_nearest_if(const pm__db_known *k, const pm__db_problem *p,
                            int (*accept)(void *arg, const char *config), void *arg,
                            pm__db_winner *out) {
  double dist = 0, adist = 0;
  const size_ix *z = nearest_size(group_of(k, p), p, &dist, &adist);
  memset(out, 0, sizeof *out);
  if (z == NULL) {
    char problem[PM__DB_PROBLEM_MAX];
    problem_text(k, p, problem);
    return pm__seterr(pm__db_ctx(k->db), PM_ENOTFOUND,
                      "tuning database %s: no size of %s %s like %s tuned on %s (%s) or its model",
                      pm__db_filename(k->db), p->op, p->dtype, problem, k->dev.name, k->dev.uuid);
  }
  pm__db_problem best = *p;
  best.rows = z->rows, best.cols = z->cols, best.n = z->n;
  int rc = pm__db_known_get_if(k, &best, accept, arg, out);
  if (rc != PM_OK) return rc;
  out->distance = dist;
  out->aspect_distance = adist;
  return PM_OK;
}

/* How far line l of g lies from (ln elements s, ln aspect a): the greater of the distance in
 * aspect (0 inside its range of aspects) and how far its largest size lies below s (0 where it
 * reaches s; below a line's first size small problems run alike, and aspect alone counts). A line
 * whose sizes end short of s is no nearer for its aspect than one that brackets s at an aspect as
 * far: both are guesses as far off (bench/results/2026-11-27c-h100/loo-line-ends.txt). */
static double line_distance(const group *g, const line *l, double s, double a) {
  double da = a < l->lo_aspect ? l->lo_aspect - a : a > l->hi_aspect ? a - l->hi_aspect : 0;
  double last = g->sizes[l->by_size[l->n - 1]].log_size;
  double ds = s > last ? s - last : 0;
  return da > ds ? da : ds;
}

/* The line of g of that kind nearest to (ln elements s, ln aspect a) (line_distance), the one
 * with more sizes on a tie; NULL where g has none. */
static const line *line_of(const group *g, double s, double a, int kind) {
  const line *best = NULL;
  double best_d = 0;
  for (size_t l = 0; g != NULL && l < g->nlines; l++) {
    const line *x = &g->lines[l];
    if (x->kind != kind || x->n == 0) continue;
    double d = line_distance(g, x, s, a);
    if (best == NULL || d < best_d - 1e-12 || (d <= best_d + 1e-12 && x->n > best->n))
      best = x, best_d = d;
  }
  return best;
}

/* The bracket of line l whose two sizes the size s = ln(elements) lies strictly between, with *w
 * the place of s between them (0 at lo, 1 at hi, linear in ln(size)); NULL where s is not between
 * two sizes of l. */
static const bracket *bracket_of(const group *g, const line *l, double s, double *w) {
  if (l == NULL || l->n < 2) return NULL;
  const size_ix *first = &g->sizes[l->by_size[0]], *last = &g->sizes[l->by_size[l->n - 1]];
  if (!(s > first->log_size && s < last->log_size)) return NULL;
  size_t lo = 0, hi = l->n - 1; /* the last j with log_size(by_size[j]) <= s, by bisection */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (g->sizes[l->by_size[mid]].log_size <= s) lo = mid;
    else hi = mid;
  }
  const bracket *b = &l->brackets[lo];
  double a = g->sizes[b->lo].log_size, z = g->sizes[b->hi].log_size;
  *w = z - a > 1e-12 ? (s - a) / (z - a) : 0;
  return b;
}

/* bracket_of, where its two sizes lie no more than span apart in ln(elements); else NULL. */
static const bracket *bracket_within(const group *g, const line *l, double s, double span,
                                     double *w) {
  const bracket *b = bracket_of(g, l, s, w);
  return b != NULL && g->sizes[b->hi].log_size - g->sizes[b->lo].log_size > span ? NULL : b;
}

/* The size of line l nearest to (size, aspect) in elements, then in aspect, then the smaller;
 * *dist and *adist receive its distances. */
static const size_ix *nearest_on(const group *g, const line *l, double size, double aspect,
                                 double *dist, double *adist) {
  const size_ix *best = NULL;
  for (size_t i = 0; l != NULL && i < l->n; i++) {
    const size_ix *z = &g->sizes[l->by_size[i]];
    double d = fabs(size - z->log_size), a = fabs(aspect - z->log_aspect);
    if (nearer(z, d, a, best, *dist, *adist)) best = z, *dist = d, *adist = a;
  }
  return best;
}

/* A candidate's interpolated slowdown at w, and its row at the nearer of the two sizes. */
static double score_at(const both *c, double w) {
  return (1 - w) * c->lo_ratio + w * c->hi_ratio;
}

static const pm__db_known_row *row_at(const pm__db_known *k, const both *c, double w) {
  return &k->rows[w <= 0.5 ? c->lo_row : c->hi_row];
}

/* A configuration's time at the size w of the way between its two rows: interpolated linearly
 * in ln(time) against ln(size), as a time that grows as a power of the size is. */
static double time_between(const pm__db_known *k, const both *c, double w) {
  return exp((1 - w) * log(k->rows[c->lo_row].median_ms) + w * log(k->rows[c->hi_row].median_ms));
}

/* Between two tuned sizes: of the configurations measured at both that accept takes, the one
 * whose slowdown against each size's fastest, interpolated linearly in ln(size) to p's size, is
 * least (the lower row first on a tie); its index in b->both, or b->nboth where none is taken. */
static size_t between(const pm__db_known *k, const bracket *b, double w,
                      int (*accept)(void *arg, const char *config), void *arg) {
  size_t best = b->nboth; /* first the hull's vertices, where the least score always is */
  double best_score = 0;
  for (size_t j = 0; j < b->nhull; j++) {
    double score = score_at(&b->both[b->hull[j]], w);
    if (best == b->nboth || score < best_score || (score == best_score && b->hull[j] < best))
      best = b->hull[j], best_score = score;
  }
  if (best < b->nboth) {
    const pm__db_known_row *r = row_at(k, &b->both[best], w);
    if (accept == NULL || accept(arg, r->config)) return best;
  }
  /* refused (the caller's alignment): every candidate, in order of score */
  double floor = -1; /* the score of the last candidate refused: the next is above it */
  size_t floor_i = 0;
  for (;;) {
    best = b->nboth;
    for (size_t i = 0; i < b->nboth; i++) {
      double score = score_at(&b->both[i], w);
      if (score < floor || (score == floor && i <= floor_i)) continue;
      if (best == b->nboth || score < best_score) best = i, best_score = score;
    }
    if (best == b->nboth) return b->nboth;
    const pm__db_known_row *r = row_at(k, &b->both[best], w);
    if (accept == NULL || accept(arg, r->config)) return best;
    floor = best_score, floor_i = best;
  }
}

/* The candidate of b whose configuration is `config` (b->both is in order of configuration
 * text), or b->nboth. */
static size_t both_of(const pm__db_known *k, const bracket *b, const char *config) {
  size_t lo = 0, hi = b->nboth;
  while (config != NULL && lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(k->rows[b->both[mid].lo_row].config, config);
    if (c == 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return b->nboth;
}

/* The row of size z whose configuration is `config` (the first in z's order), or NULL. */
static const pm__db_known_row *row_of(const pm__db_known *k, const size_ix *z, const char *config) {
  for (size_t i = z->begin; config != NULL && i < z->end; i++)
    if (strcmp(k->rows[i].config, config) == 0) return &k->rows[i];
  return NULL;
}

/* A time measured at size z of g, as predicted at ln(elements) s: above z, its part over g's
 * least time scaled with the elements (the memory's time), the least kept (what any launch of the
 * op takes, whatever its size); below z, kept (a smaller problem takes no longer). Scaled whole,
 * a kernel of a few microseconds was predicted far too slow above a tuned size, and the default
 * measured on both sides served instead: a reduce's sizes left out of a shipped document were
 * served within 95% of the fastest measured there at 182 of 234 (H200) and 173 of 219 (H100),
 * at 207 and 193 so (bench/experiments/README.md section 10). */
static double scaled(const group *g, double ms, const size_ix *z, double s) {
  /* ms is a row's of g, so never under g->least_ms */
  return s > z->log_size ? g->least_ms + (ms - g->least_ms) * exp(s - z->log_size) : ms;
}

/* Candidate c of a bracket whose path at p's size differs from its path at one of the two sizes:
 * its time there (at ln(elements) s, weight w) from the size whose path is p's alone (lo, hi:
 * which are), and its score the slowdown there; 0 where neither is. */
static int one_sided(const pm__db_known *k, const group *g, const bracket *b, const both *c,
                     int lo, int hi, double w, double s, double *score, double *ms) {
  if (lo && hi) {
    *score = score_at(c, w), *ms = time_between(k, c, w);
  } else if (lo) {
    *score = c->lo_ratio, *ms = scaled(g, k->rows[c->lo_row].median_ms, &g->sizes[b->lo], s);
  } else if (hi) {
    *score = c->hi_ratio, *ms = scaled(g, k->rows[c->hi_row].median_ms, &g->sizes[b->hi], s);
  } else {
    return 0;
  }
  return 1;
}

/* between() where paths may differ by size (alike set): every candidate scored by the sizes at
 * which it takes p's path (one_sided), the least that accept takes; b->nboth where none.
 * *ms receives its predicted time. */
static size_t between_alike(const pm__db_known *k, const group *g, const bracket *b, double w,
                            double s, const pm__db_problem *p,
                            int (*accept)(void *arg, const char *config),
                            int (*alike)(void *arg, const char *config, const pm__db_problem *at),
                            void *arg, double *ms) {
  size_t best = b->nboth;
  double best_score = 0;
  for (size_t i = 0; i < b->nboth; i++) {
    const both *c = &b->both[i];
    double score, t;
    int lo = alike_at(&k->rows[c->lo_row], alike, arg, p);
    int hi = alike_at(&k->rows[c->hi_row], alike, arg, p);
    if (!one_sided(k, g, b, c, lo, hi, w, s, &score, &t)) continue;
    if (best < b->nboth && score >= best_score) continue;
    if (accept != NULL && !accept(arg, k->rows[c->lo_row].config)) continue;
    best = i, best_score = score, *ms = t;
  }
  return best;
}

int pm__db_known_find_if(const pm__db_known *k, const pm__db_problem *p,
                         int (*accept)(void *arg, const char *config),
                         int (*alike)(void *arg, const char *config, const pm__db_problem *at),
                         void *arg, const char *dflt, pm__db_winner *out, int *exact) {
  const group *g = group_of(k, p);
  const pm__db_known_row *w = NULL, *d = NULL;
  const bracket *b = NULL;
  const size_ix *z = NULL;
  double dist = 0, adist = 0, weight = 0, size = 0, aspect = 0, predicted = 0, dpredicted = 0;
  *exact = 0;
  memset(out, 0, sizeof *out);
  if (g == NULL) return PM_ENOTFOUND;
  problem_logs(p, &size, &aspect);
  if ((z = size_of(g, p->rows, p->cols, p->n)) != NULL &&
      (w = first_of(k, z, accept, NULL, arg, p)) != NULL) {
    *exact = 1; /* the exact winner, and the default as measured there */
    predicted = w->median_ms;
    if ((d = row_of(k, z, dflt)) != NULL) dpredicted = d->median_ms;
  } else {
    /* between two sizes of p's kind where two lie near enough (an even side's, else an odd
     * side's), else between any two */
    int kind = size_kind(k->rows[g->begin].variant, p->rows, p->cols, p->n);
    size_t i;
    b = bracket_within(g, line_of(g, size, aspect, kind), size,
                       kind == EVEN ? EVEN_SPAN : CLASS_SPAN, &weight);
    if (b == NULL && kind == EVEN)
      b = bracket_within(g, line_of(g, size, aspect, UNROUND), size, CLASS_SPAN, &weight);
    const line *l = line_of(g, size, aspect, ANY_SIZE);
    if ((b != NULL || (b = bracket_of(g, l, size, &weight)) != NULL) &&
        (i = alike == NULL ? between(k, b, weight, accept, arg)
                           : between_alike(k, g, b, weight, size, p, accept, alike, arg,
                                           &predicted)) < b->nboth) {
      w = row_at(k, &b->both[i], weight);
      if (alike == NULL) predicted = time_between(k, &b->both[i], weight);
      size_t j = both_of(k, b, dflt);
      double unused;
      if (j < b->nboth &&
          one_sided(k, g, b, &b->both[j], alike_at(&k->rows[b->both[j].lo_row], alike, arg, p),
                    alike_at(&k->rows[b->both[j].hi_row], alike, arg, p), weight, size, &unused,
                    &dpredicted))
        d = row_at(k, &b->both[j], weight);
    } else if ((b = NULL, z = nearest_on(g, l, size, aspect, &dist, &adist)) != NULL) {
      /* the fastest that takes p's path there, else the fastest */
      if ((w = first_of(k, z, accept, alike, arg, p)) == NULL && alike != NULL)
        w = first_of(k, z, accept, NULL, arg, p);
      if (w != NULL) {
        predicted = scaled(g, w->median_ms, z, size);
        if ((d = row_of(k, z, dflt)) != NULL && alike_at(d, alike, arg, p))
          dpredicted = scaled(g, d->median_ms, z, size);
        else
          d = NULL;
      }
    }
  }
  if (w == NULL) return PM_ENOTFOUND; /* quietly: the caller words it if it must */
  /* never worse than knowing nothing: where the default is predicted faster, it serves; and
   * from other sizes, unless another is predicted at least DEFAULT_MARGIN faster */
  int guarded = d != NULL && d != w &&
                dpredicted < predicted * (*exact ? 1 : 1 + DEFAULT_MARGIN) &&
                (accept == NULL || accept(arg, d->config));
  winner_of(guarded ? d : w, out);
  out->predicted_ms = guarded ? dpredicted : predicted;
  out->default_ms = dpredicted;
  out->guarded = guarded;
  if (b != NULL) { /* the distances to the nearer of the two sizes, whose row w is */
    const size_ix *nr = &g->sizes[weight <= 0.5 ? b->lo : b->hi];
    const size_ix *other = &g->sizes[weight <= 0.5 ? b->hi : b->lo];
    dist = fabs(size - nr->log_size);
    adist = fabs(aspect - nr->log_aspect); /* 0 - 0 for a vector */
    out->between = 1, out->weight = weight;
    out->other_rows = other->rows, out->other_cols = other->cols, out->other_n = other->n;
  }
  out->distance = dist;
  out->aspect_distance = adist;
  return PM_OK;
}

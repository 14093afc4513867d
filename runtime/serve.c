/* serve.c: the library calls pm_matadd, pm_reduce_sum and pm_filter: an in-process cache of
 * chosen kernels read without locks, and behind it the lookup chain (winner at this size, at
 * the nearest size, tuned now, built-in default), the cubin from the database or NVRTC. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "tune.h"

#define SLOTS 4096 /* cached (op, size, layout) choices; beyond, calls take the slow path */
#define WS_SLOTS 64 /* streams with reduce scratch of their own */

/* What a cached choice is for: compared bytewise, so always zeroed before it is filled. */
typedef struct key {
  uint32_t rows, cols, n;
  uint8_t op, variant, align, radius;
} key;

typedef struct entry {
  key k;
  const pm__op *op;
  int v[PM__MAX_PARAMS];
  const pm__kernel *kernel;
  size_t work; /* scratch bytes a run needs (reduce) */
} entry;

typedef struct loaded { /* a loaded cubin, shared by the entries whose defines are the same */
  char defines[PM__MAX_DEFINES * 26];
  const pm__op *op;
  pm__kernel k;
  struct loaded *next;
} loaded;

typedef struct workspace { /* one stream's reduce scratch: partial sums and a counter */
  struct CUstream_st *stream;
  void *ptr;
  size_t bytes;
  struct workspace *retired; /* an older, smaller one of the same stream, freed at close */
} workspace;

typedef struct pm__serve {
  _Atomic(entry *) slots[SLOTS];
  _Atomic(workspace *) ws[WS_SLOTS];
  pthread_mutex_t lock; /* the slow path: deciding, loading, inserting */
  pm__db *db;           /* read-only, opened on first need */
  int db_tried;
  pm__db *rw;           /* read-write, for storing cubins compiled here and autotuning */
  int rw_tried;
  int autotune, autotune_budget; /* pm_options and PMTUNE_AUTOTUNE */
  int64_t gpu_id;
  loaded *kernels;
} pm__serve;

const char *pm__source_name(pm__source s) {
  static const char *const names[] = {"exact", "nearest", "tuned", "default"};
  return (unsigned)s < 4 ? names[s] : "?";
}

int pm__serve_init(pm_ctx *c, const pm_options *o) {
  pm__serve *s = calloc(1, sizeof *s);
  if (s == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  pthread_mutex_init(&s->lock, NULL);
  const char *env = getenv("PMTUNE_AUTOTUNE");
  s->autotune = o->autotune || (env != NULL && strcmp(env, "1") == 0);
  s->autotune_budget = o->autotune_budget > 0 ? o->autotune_budget : 40;
  c->serve = s;
  return PM_OK;
}

void pm__serve_free(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (s == NULL) return;
  for (int i = 0; i < SLOTS; i++) free(atomic_load(&s->slots[i]));
  for (int i = 0; i < WS_SLOTS; i++)
    for (workspace *w = atomic_load(&s->ws[i]), *next; w != NULL; w = next) {
      next = w->retired;
      cudaFree(w->ptr);
      free(w);
    }
  for (loaded *l = s->kernels, *next; l != NULL; l = next) {
    next = l->next;
    pm__kernel_unload(&l->k);
    free(l);
  }
  pm__db_close(s->db);
  pm__db_close(s->rw);
  pthread_mutex_destroy(&s->lock);
  free(s);
  c->serve = NULL;
}

unsigned pm__alignment_of(const size_t *values, int n) {
  size_t all = 16;
  for (int i = 0; i < n; i++) all |= values[i];
  unsigned a = (unsigned)(all & -all); /* the lowest set bit */
  return a < 4 ? 0 : a;
}

/* ---- The hot path --------------------------------------------------------------------------- */

static uint32_t hash(const key *k) {
  const unsigned char *p = (const unsigned char *)k;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static entry *lookup(pm__serve *s, const key *k) {
  uint32_t h = hash(k);
  for (int i = 0; i < 8; i++) {
    entry *e = atomic_load_explicit(&s->slots[(h + (uint32_t)i) & (SLOTS - 1)], memory_order_acquire);
    if (e == NULL) return NULL;
    if (memcmp(&e->k, k, sizeof *k) == 0) return e;
  }
  return NULL;
}

/* ---- The slow path -------------------------------------------------------------------------- */

static pm__db *read_db(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (!s->db_tried) {
    s->db_tried = 1;
    if (pm__db_open(c, c->db_path, PM__DB_READONLY, pm__ops_db(), &s->db) != PM_OK)
      pm__notice(c, "%s: serving built-in defaults", pm_errmsg(c));
  }
  return s->db;
}

static pm__db *write_db(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (!s->rw_tried) {
    int driver, runtime;
    s->rw_tried = 1;
    pm__cuda_versions(&driver, &runtime);
    if (pm__db_open(c, c->db_path, 0, pm__ops_db(), &s->rw) != PM_OK ||
        pm__db_gpu_put(s->rw, &c->dev, driver, runtime, &s->gpu_id) != PM_OK) {
      pm__notice(c, "%s: compiled kernels are not stored", pm_errmsg(c));
      pm__db_close(s->rw);
      s->rw = NULL;
    }
  }
  return s->rw;
}

typedef struct accept_arg {
  pm_ctx *c;
  const pm__op *op;
  const pm__problem *pr;
  int v[PM__MAX_PARAMS];
} accept_arg;

/* Takes a stored configuration that runs on this problem with the caller's buffers. */
static int accept(void *arg, const char *config) {
  accept_arg *a = arg;
  pm__limits lim = pm__limits_of(&a->c->dev);
  return pm__config_parse(NULL, a->op, config, a->v) == PM_OK &&
         a->op->check(a->v, a->pr, &lim) == NULL;
}

static void from_winner(pm__decision *out, const pm__db_winner *w, const accept_arg *a,
                        pm__source source) {
  out->source = source;
  memcpy(out->v, a->v, sizeof out->v);
  snprintf(out->config, sizeof out->config, "%s", w->config);
  out->tuned_rows = (unsigned)w->rows, out->tuned_cols = (unsigned)w->cols;
  out->tuned_n = (unsigned)w->n;
  out->median_ms = w->median_ms, out->gbps = w->gbps, out->speedup = w->speedup;
  out->distance = w->distance;
}

/* Exact, else nearest; PM_ENOTFOUND (with out->why) where neither. */
static int decide_stored(pm_ctx *c, pm__db *db, const pm__op *op, const pm__problem *pr,
                         pm__decision *out) {
  pm__db_problem dbp;
  pm__db_winner w;
  accept_arg a = {c, op, pr, {0}};
  const char *sha = pm__template_find(op->name)->sha256;
  pm__op_db_problem(op, pr, &dbp);
  if (pm__db_winner_get_if(db, &c->dev, &dbp, sha, accept, &a, &w) == PM_OK) {
    from_winner(out, &w, &a, PM__FROM_EXACT);
    return PM_OK;
  }
  if (pm__db_winner_nearest_if(db, &c->dev, &dbp, sha, accept, &a, &w) == PM_OK) {
    from_winner(out, &w, &a, PM__FROM_NEAREST);
    return PM_OK;
  }
  snprintf(out->why, sizeof out->why, "%s", pm_errmsg(c));
  return PM_ENOTFOUND;
}

static void decide_default(const pm__op *op, const pm__problem *pr, pm__decision *out) {
  out->source = PM__FROM_DEFAULT;
  op->fallback(pr, out->v);
  pm__config_text(op, out->v, out->config, sizeof out->config);
}

int pm__serve_decide(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__decision *out) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&c->serve->lock);
  pm__db *db = read_db(c);
  if (db == NULL) snprintf(out->why, sizeof out->why, "%s", c->notice ? c->notice : "no database");
  if (db == NULL || decide_stored(c, db, op, pr, out) != PM_OK) decide_default(op, pr, out);
  pthread_mutex_unlock(&c->serve->lock);
  return PM_OK;
}

/* Tunes pr now with a small random search, stored for later processes. */
static void autotune(pm_ctx *c, const pm__op *op, const pm__problem *pr) {
  pm__db *rw = write_db(c);
  if (rw == NULL) return;
  pm__tune_opts o;
  pm__tune_result r;
  pm__problem own = *pr;
  own.caller_align = 0; /* the tuner measures on its own buffers */
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = (uint64_t)c->serve->autotune_budget;
  if (pm__tune_problem(c, rw, c->serve->gpu_id, 0, op, &own, &o, &r) != PM_OK)
    pm__notice(c, "tuning %s on first use failed: %s", op->name, pm_errmsg(c));
}

/* The loaded kernel of point v on pr: already loaded, else its cubin from the database, else
 * compiled now (and stored). */
static int kernel_for(pm_ctx *c, const pm__op *op, const int *v, const pm__problem *pr,
                      const pm__kernel **out) {
  pm__serve *s = c->serve;
  char defs[PM__MAX_DEFINES][24], dtext[PM__MAX_DEFINES * 26];
  const char *dp[PM__MAX_DEFINES];
  int nd = pm__config_defines(op, v, pr, defs), rc, driver, runtime;
  const pm__template *t = pm__template_find(op->name);
  pm__db_cubin_key key;
  pm__cuda_versions(&driver, &runtime);
  rc = pm__cubin_key(c, t->sha256, (const char(*)[24])defs, nd, driver, dtext, sizeof dtext, &key);
  if (rc != PM_OK) return rc;
  for (int i = 0; i < nd; i++) dp[i] = defs[i];
  for (loaded *l = s->kernels; l != NULL; l = l->next)
    if (l->op == op && strcmp(l->defines, dtext) == 0) {
      *out = &l->k;
      return PM_OK;
    }
  pm__cubin bin = {0};
  pm__db *db = read_db(c);
  if (db == NULL || pm__db_cubin_get(db, &key, &bin) != PM_OK) {
    if ((rc = pm__compile(c, t->file, t->source, c->dev.arch, dp, (size_t)nd, &bin)) != PM_OK)
      return rc;
    pm__db *rw = write_db(c);
    if (rw != NULL && pm__db_cubin_put(rw, &key, &bin) != PM_OK)
      pm__notice(c, "%s: the compiled kernel is not stored", pm_errmsg(c));
  }
  loaded *l = calloc(1, sizeof *l);
  if (l == NULL) {
    pm__cubin_free(&bin);
    return pm__seterr(c, PM_ENOMEM, "out of memory");
  }
  rc = pm__kernel_load(c, bin.data, op->entries, op->nentries, &l->k);
  pm__cubin_free(&bin);
  if (rc != PM_OK) {
    free(l);
    return rc;
  }
  snprintf(l->defines, sizeof l->defines, "%s", dtext);
  l->op = op;
  l->next = s->kernels;
  s->kernels = l;
  *out = &l->k;
  return PM_OK;
}

/* Decides, loads and caches the choice for k; *out is the cached entry (or, where the table is
 * full, `spare`, filled for this call alone). */
static int slow_path(pm_ctx *c, const pm__op *op, const pm__problem *pr, const key *k,
                     entry *spare, entry **out) {
  pm__serve *s = c->serve;
  int rc = PM_OK;
  pthread_mutex_lock(&s->lock);
  entry *e = lookup(s, k);
  if (e != NULL) { /* another thread was first */
    *out = e;
    goto done;
  }
  pm__decision d = {0};
  pm__db *db = read_db(c);
  int found = db != NULL && decide_stored(c, db, op, pr, &d) == PM_OK && d.source == PM__FROM_EXACT;
  if (!found && s->autotune) {
    autotune(c, op, pr);
    if (s->db == NULL) s->db_tried = 0; /* tuning may have created the database */
    if ((db = read_db(c)) != NULL && decide_stored(c, db, op, pr, &d) == PM_OK)
      found = 1, d.source = d.source == PM__FROM_EXACT ? PM__FROM_TUNED : d.source;
  }
  if (!found && (db == NULL || decide_stored(c, db, op, pr, &d) != PM_OK)) {
    char ptext[96];
    pm__problem_text(op, pr, ptext, sizeof ptext);
    decide_default(op, pr, &d);
    pm__notice(c, "%s %s: nothing tuned for it on %s; the default %s serves it", op->name, ptext,
               c->dev.name, d.config);
  }
  e = calloc(1, sizeof *e);
  if (e == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "out of memory");
    goto done;
  }
  e->k = *k;
  e->op = op;
  memcpy(e->v, d.v, sizeof e->v);
  e->work = op->work_bytes ? op->work_bytes(e->v, pr, c->dev.sm_count) : 0;
  if ((rc = kernel_for(c, op, e->v, pr, &e->kernel)) != PM_OK) {
    free(e);
    goto done;
  }
  uint32_t h = hash(k);
  for (int i = 0; i < 8; i++) {
    _Atomic(entry *) *slot = &s->slots[(h + (uint32_t)i) & (SLOTS - 1)];
    if (atomic_load(slot) == NULL) {
      atomic_store_explicit(slot, e, memory_order_release);
      *out = e;
      goto done;
    }
  }
  *spare = *e; /* no room: serve this call, and decide again next time */
  free(e);
  *out = spare;
done:
  pthread_mutex_unlock(&s->lock);
  return rc;
}

/* The stream's reduce scratch of at least `bytes`, zeroed when new. */
static void *scratch(pm_ctx *c, struct CUstream_st *stream, size_t bytes) {
  pm__serve *s = c->serve;
  for (int i = 0; i < WS_SLOTS; i++) {
    workspace *w = atomic_load_explicit(&s->ws[i], memory_order_acquire);
    if (w == NULL) break;
    if (w->stream == stream && w->bytes >= bytes) return w->ptr;
  }
  void *ptr = NULL;
  pthread_mutex_lock(&s->lock);
  int slot = -1;
  for (int i = 0; i < WS_SLOTS && slot < 0; i++) {
    workspace *w = atomic_load(&s->ws[i]);
    if (w == NULL || w->stream == stream) slot = i;
  }
  workspace *old = slot >= 0 ? atomic_load(&s->ws[slot]) : NULL, *w = NULL;
  if (old != NULL && old->bytes >= bytes) { /* another thread grew it */
    ptr = old->ptr;
    goto done;
  }
  size_t want = bytes < 65536 ? 65536 : bytes;
  if (old != NULL && want < 2 * old->bytes) want = 2 * old->bytes;
  if ((w = calloc(1, sizeof *w)) == NULL) goto done;
  cudaError_t e = cudaMalloc(&w->ptr, want);
  if (e == cudaSuccess) e = cudaMemsetAsync(w->ptr, 0, want, stream);
  if (e != cudaSuccess) {
    pm__cuda_error(c, PM_ECUDA, e, "reduce scratch", __FILE__, __LINE__);
    if (w->ptr) cudaFree(w->ptr);
    free(w);
    goto done;
  }
  w->stream = stream, w->bytes = want, w->retired = old;
  ptr = w->ptr;
  if (slot >= 0)
    atomic_store_explicit(&s->ws[slot], w, memory_order_release);
  else
    pm__seterr(c, PM_EUNSUPPORTED, "more than %d streams call reduce on one context", WS_SLOTS),
        cudaFree(w->ptr), free(w), ptr = NULL;
done:
  pthread_mutex_unlock(&s->lock);
  return ptr;
}

/* Finds (or decides) the entry for pr and launches it on d. */
static int serve(pm_ctx *c, int which, const pm__problem *pr, pm__data *d, struct CUstream_st *stream) {
  const pm__op *op = pm__op_of((pm_op)which);
  key k;
  memset(&k, 0, sizeof k);
  k.rows = pr->rows, k.cols = pr->cols, k.n = pr->n, k.op = (uint8_t)which;
  k.variant = (uint8_t)pr->variant, k.align = (uint8_t)pr->caller_align;
  k.radius = (uint8_t)pr->radius;
  entry spare, *e = lookup(c->serve, &k);
  int rc;
  if (e == NULL && (rc = slow_path(c, op, pr, &k, &spare, &e)) != PM_OK) return rc;
  d->pr = *pr;
  if (e->work > 0 && (d->work = scratch(c, stream, e->work)) == NULL)
    return pm__seterr(c, PM_ECUDA, "%s: no scratch for the reduction: %s", op->name, pm_errmsg(c));
  return op->launch(c, e->kernel, e->v, d, stream);
}

static int check_ctx(pm_ctx *c, const char *fn) {
  if (c == NULL) return PM_EINVAL;
  if (c->serve == NULL) return pm__seterr(c, PM_ENODEV, "%s: this context has no device", fn);
  return PM_OK;
}

/* ---- The calls ------------------------------------------------------------------------------ */

#define MAX_DIM 0x7fffffffu

int pm_matadd(pm_ctx *c, size_t rows, size_t cols, pm_order order, float *C, size_t pitch_c,
              const float *A, size_t pitch_a, const float *B, size_t pitch_b,
              struct CUstream_st *stream) {
  int rc = check_ctx(c, "pm_matadd");
  if (rc != PM_OK) return rc;
  if (C == NULL || A == NULL || B == NULL)
    return pm__seterr(c, PM_EINVAL, "pm_matadd: a NULL matrix");
  if (order != PM_ROW_MAJOR && order != PM_COL_MAJOR)
    return pm__seterr(c, PM_EINVAL, "pm_matadd: order %d is neither row- nor column-major", (int)order);
  if (rows < 1 || cols < 1 || rows > MAX_DIM || cols > MAX_DIM || (unsigned long long)rows * cols > (1ull << 32))
    return pm__seterr(c, PM_EINVAL, "pm_matadd: %zu x %zu: rows and cols must be 1 to 2^31 - 1, "
                      "and at most 2^32 elements", rows, cols);
  size_t lines = order == PM_COL_MAJOR ? cols : rows, line = (order == PM_COL_MAJOR ? rows : cols) * 4;
  if (lines > 1 && (pitch_c < line || pitch_a < line || pitch_b < line))
    return pm__seterr(c, PM_EINVAL, "pm_matadd: a pitch (%zu, %zu, %zu bytes) is shorter than a %s "
                      "of %zu bytes", pitch_c, pitch_a, pitch_b, order == PM_COL_MAJOR ? "column" : "row", line);
  size_t al[6] = {(size_t)C, (size_t)A, (size_t)B, lines > 1 ? pitch_c : 0, lines > 1 ? pitch_a : 0,
                  lines > 1 ? pitch_b : 0};
  pm__problem pr = {.rows = (unsigned)rows, .cols = (unsigned)cols, .variant = (int)order, /* variants[PM_COL_MAJOR] is "order=col" (test_space) */
                    .caller_align = pm__alignment_of(al, 6)};
  if (pr.caller_align == 0)
    return pm__seterr(c, PM_EINVAL, "pm_matadd: pointers and pitches must be multiples of 4 bytes");
  pm__data d;
  d.out = C, d.out_pitch = pitch_c;
  d.in[0] = (float *)A, d.in_pitch[0] = pitch_a, d.in[1] = (float *)B, d.in_pitch[1] = pitch_b;
  return serve(c, PM_OP_MATADD, &pr, &d, stream);
}

int pm_reduce_sum(pm_ctx *c, size_t n, const float *x, float *sum, struct CUstream_st *stream) {
  int rc = check_ctx(c, "pm_reduce_sum");
  if (rc != PM_OK) return rc;
  if (x == NULL || sum == NULL) return pm__seterr(c, PM_EINVAL, "pm_reduce_sum: a NULL pointer");
  if (n < 1 || n > MAX_DIM)
    return pm__seterr(c, PM_EINVAL, "pm_reduce_sum: n = %zu: must be 1 to 2^31 - 1", n);
  size_t al[1] = {(size_t)x};
  pm__problem pr = {.n = (unsigned)n, .caller_align = pm__alignment_of(al, 1)};
  if (pr.caller_align == 0 || ((size_t)sum & 3) != 0)
    return pm__seterr(c, PM_EINVAL, "pm_reduce_sum: pointers must be multiples of 4 bytes");
  pm__data d;
  d.in[0] = (float *)x, d.out = sum;
  return serve(c, PM_OP_REDUCE, &pr, &d, stream);
}

int pm_filter(pm_ctx *c, size_t rows, size_t cols, float *out, size_t pitch_out, const float *in,
              size_t pitch_in, const float *weights, int radius, pm_border border,
              struct CUstream_st *stream) {
  int rc = check_ctx(c, "pm_filter");
  if (rc != PM_OK) return rc;
  if (out == NULL || in == NULL || weights == NULL)
    return pm__seterr(c, PM_EINVAL, "pm_filter: a NULL image or weights");
  if (radius < 1 || radius > PM__MAX_RADIUS)
    return pm__seterr(c, PM_EINVAL, "pm_filter: radius %d: must be 1 to %d", radius, PM__MAX_RADIUS);
  if (border != PM_BORDER_CLAMP && border != PM_BORDER_ZERO)
    return pm__seterr(c, PM_EINVAL, "pm_filter: border %d is neither clamp nor zero", (int)border);
  if (rows < 1 || cols < 1 || rows > MAX_DIM || cols > MAX_DIM || (unsigned long long)rows * cols > (1ull << 32))
    return pm__seterr(c, PM_EINVAL, "pm_filter: %zu x %zu: rows and cols must be 1 to 2^31 - 1, "
                      "and at most 2^32 elements", rows, cols);
  if (rows > 1 && (pitch_out < cols * 4 || pitch_in < cols * 4))
    return pm__seterr(c, PM_EINVAL, "pm_filter: a pitch (%zu, %zu bytes) is shorter than a row of "
                      "%zu bytes", pitch_out, pitch_in, cols * 4);
  size_t al[4] = {(size_t)out, (size_t)in, rows > 1 ? pitch_out : 0, rows > 1 ? pitch_in : 0};
  pm__problem pr = {.rows = (unsigned)rows, .cols = (unsigned)cols, .radius = radius,
                    .variant = (int)border, /* variants[PM_BORDER_ZERO] is "border=zero" */
                    .caller_align = pm__alignment_of(al, 4)};
  if (pr.caller_align == 0)
    return pm__seterr(c, PM_EINVAL, "pm_filter: pointers and pitches must be multiples of 4 bytes");
  pm__data d;
  d.out = out, d.out_pitch = pitch_out, d.in[0] = (float *)in, d.in_pitch[0] = pitch_in;
  memcpy(d.mask, weights, sizeof(float) * (size_t)((2 * radius + 1) * (2 * radius + 1)));
  return serve(c, PM_OP_FILTER, &pr, &d, stream);
}

/* ---- Allocation ----------------------------------------------------------------------------- */

int pm_malloc_2d(pm_ctx *c, pm_op op, size_t rows, size_t cols, float **ptr, size_t *pitch,
                 size_t *padding) {
  int rc = check_ctx(c, "pm_malloc_2d");
  if (rc != PM_OK) return rc;
  if (ptr == NULL || pitch == NULL) return pm__seterr(c, PM_EINVAL, "pm_malloc_2d: NULL output");
  *ptr = NULL;
  if (pm__op_of(op) == NULL) return pm__seterr(c, PM_EINVAL, "pm_malloc_2d: op %d", (int)op);
  if (rows < 1 || cols < 1 || rows > MAX_DIM || cols > MAX_DIM)
    return pm__seterr(c, PM_EINVAL, "pm_malloc_2d: %zu x %zu: rows and cols must be 1 to 2^31 - 1",
                      rows, cols);
  const pm__op *o = pm__op_of(op);
  size_t align = 256;
  for (int i = 0; i < o->nparams; i++) /* the layout tuning chose, where the op has one */
    if (strcmp(o->params[i].name, "align") == 0) {
      pm__problem pr = {.rows = (unsigned)rows, .cols = (unsigned)cols, .n = (unsigned)(rows * cols),
                        .radius = 1};
      pm__decision d;
      pm__serve_decide(c, o, &pr, &d);
      if (d.source != PM__FROM_DEFAULT) align = (size_t)o->layout(d.v);
    }
  size_t line = cols * sizeof(float);
  *pitch = pm__pitch(line, align);
  if (padding != NULL) *padding = rows * (*pitch - line);
  cudaError_t e = cudaMalloc((void **)ptr, *pitch * rows);
  if (e != cudaSuccess)
    return pm__seterr(c, PM_ECUDA, "pm_malloc_2d: %zu x %zu floats (pitch %zu): %s", rows, cols,
                      *pitch, cudaGetErrorString(e));
  return PM_OK;
}

void pm_free(pm_ctx *c, void *ptr) {
  (void)c;
  if (ptr != NULL) cudaFree(ptr);
}

/* kernel_file.c: a kernel description's op: the callbacks through which the tuner and serving
 * check, size, launch, prepare and verify it as a built-in op's (kernel_load.c reads the
 * description into it; kernel_expr.c evaluates its expressions); see kernel_file.h. */
#define _DEFAULT_SOURCE /* realpath */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "kernel_file_internal.h"

/* ---- The op's callbacks --------------------------------------------------------------------- */

/* Each expression is a statement of its own, evaluated in the order the reasons are given (the
 * constraints, the block, the grid, the shared memory) and no further than the first reason:
 * a point pruned by its first constraint costs one step. Without a size, what names a dimension
 * is left out (the grid always is: as far as it counts, it names one). */
const char *pm__kf_check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim) {
  pm__kernel_desc *k = (pm__kernel_desc *)self;
  const char *why = NULL;
  long long x = 0, threads = 1;
  int block_known = 1;
  pthread_mutex_lock(&k->lock);
  for (int i = 0; i < k->nconstraints && why == NULL; i++)
    if (pr != NULL || !k->constraints[i].uses_dims)
      why = pm__kf_expr_eval(k, &k->constraints[i], v, pr, &x) ? "a constraint does not evaluate to a number"
            : x == 0                                     ? k->reasons[i]
                                                         : NULL;
  for (int i = 0; i < k->nblock && why == NULL; i++) {
    if (pr == NULL && k->block[i].uses_dims) block_known = 0;
    else if (pm__kf_expr_eval(k, &k->block[i], v, pr, &x) || x < 1 || x > 1024)
      why = "a block dimension out of range";
    else threads *= x;
  }
  if (why == NULL && block_known && threads > lim->max_threads)
    why = "threads per block out of range";
  for (int i = 0; i < k->ngrid && why == NULL && pr != NULL; i++)
    if (pm__kf_expr_eval(k, &k->grid[i], v, pr, &x) || x < 1 || x > (i == 0 ? INT_MAX : 65535))
      why = "a grid dimension out of range";
  if (why == NULL && (pr != NULL || !k->shared.uses_dims) &&
      (pm__kf_expr_eval(k, &k->shared, v, pr, &x) || x < 0 || (unsigned long long)x > lim->max_smem))
    why = "the shared memory is more than a block has";
  pthread_mutex_unlock(&k->lock);
  return why;
}

double pm__kf_bytes(const pm__op *self, const pm__problem *pr) {
  pm__kernel_desc *k = (pm__kernel_desc *)self;
  long long x = 0;
  pthread_mutex_lock(&k->lock);
  int bad = pm__kf_expr_eval(k, &k->bytes, NULL, pr, &x);
  pthread_mutex_unlock(&k->lock);
  return bad || x < 0 ? 0 : (double)x;
}

size_t pm__kf_layout(const pm__op *self, const int *v) {
  (void)self, (void)v;
  return 0;
}

void pm__kf_fallback(const pm__op *self, const pm__problem *pr, int *v) {
  (void)pr;
  memcpy(v, self->seed, sizeof self->seed);
}

/* Of the point, its parameters alone count: a caller's array may hold anything past them. */
static uint64_t memo_hash(const int *v, int nparams, const pm__problem *pr) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)v;
  for (size_t i = 0; i < sizeof(int) * (size_t)nparams; i++) h = (h ^ p[i]) * 1099511628211ull;
  uint64_t dims[4] = {pr->rows, pr->cols, pr->n, (uint64_t)pr->radius};
  p = (const unsigned char *)dims;
  for (size_t i = 0; i < sizeof dims; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static int memo_same(const launch_memo *m, const int *v, int nparams, const pm__problem *pr) {
  return memcmp(m->v, v, sizeof(int) * (size_t)nparams) == 0 && m->pr.rows == pr->rows &&
         m->pr.cols == pr->cols && m->pr.n == pr->n && m->pr.radius == pr->radius;
}

/* What a launch of v on pr passes: from k's table, else evaluated now and added. NULL where an
 * expression gives no number (pm__kf_check() prunes such points: cannot be for a valid one) or memory
 * ran out (*nomem set). Under k's lock. */
static const launch_memo *memo_get(pm__kernel_desc *k, const int *v, const pm__problem *pr,
                                   int *nomem) {
  uint64_t h = memo_hash(v, k->op.nparams, pr);
  *nomem = 0;
  if (k->nbuckets > 0)
    for (launch_memo *m = k->memo[h & (k->nbuckets - 1)]; m != NULL; m = m->next)
      if (memo_same(m, v, k->op.nparams, pr)) return m;
  long long x = 0, dims[2][3] = {{1, 1, 1}, {1, 1, 1}};
  const expr *es[2] = {k->grid, k->block};
  int ns[2] = {k->ngrid, k->nblock}, bad = 0;
  launch_memo m = {0};
  for (int g = 0; g < 2 && !bad; g++)
    for (int i = 0; i < ns[g] && !bad; i++)
      bad = pm__kf_expr_eval(k, &es[g][i], v, pr, &dims[g][i]) || dims[g][i] < 1 || dims[g][i] > INT_MAX;
  if (!bad) bad = pm__kf_expr_eval(k, &k->shared, v, pr, &x) || x < 0;
  m.shared = (size_t)x;
  for (int i = 0; i < k->nargs && !bad; i++) {
    const arg *a = &k->args[i];
    double real = 0;
    if (!a->scalar) continue;
    if ((bad = pm__kf_expr_value(k, &a->e, v, pr, &x, &real)) != 0) break;
    switch (a->type) {
    case SCALAR_I32: m.values[i].i32 = (int)x; break;
    case SCALAR_I64: m.values[i].i64 = x; break;
    case SCALAR_F32: m.values[i].f32 = (float)real; break;
    default: m.values[i].f64 = real; break;
    }
  }
  if (bad) return NULL;
  m.grid = (dim3){(unsigned)dims[0][0], (unsigned)dims[0][1], (unsigned)dims[0][2]};
  m.block = (dim3){(unsigned)dims[1][0], (unsigned)dims[1][1], (unsigned)dims[1][2]};
  memcpy(m.v, v, sizeof(int) * (size_t)k->op.nparams);
  m.pr = *pr;
  if (k->nmemo >= k->nbuckets) { /* at most one entry a bucket on average: twice the buckets */
    size_t n = k->nbuckets ? 2 * k->nbuckets : 64;
    launch_memo **grown = pm__calloc(n, sizeof *grown);
    if (grown == NULL) return *nomem = 1, NULL;
    for (size_t b = 0; b < k->nbuckets; b++)
      for (launch_memo *e = k->memo[b], *next; e != NULL; e = next) {
        next = e->next;
        size_t to = memo_hash(e->v, k->op.nparams, &e->pr) & (n - 1);
        e->next = grown[to];
        grown[to] = e;
      }
    free(k->memo);
    k->memo = grown, k->nbuckets = n;
  }
  launch_memo *e = pm__malloc(sizeof *e);
  if (e == NULL) return *nomem = 1, NULL;
  *e = m;
  e->next = k->memo[h & (k->nbuckets - 1)];
  k->memo[h & (k->nbuckets - 1)] = e;
  k->nmemo++;
  return e;
}

/* Launches entry `which` of kern (0: the kernel; 1: the reference) as point v on d. */
static int launch_entry(pm__kernel_desc *k, pm_ctx *c, const pm__module *kern, int which,
                        const int *v, pm__data *d, cudaStream_t stream) {
  value values[MAX_ARGS];
  void *args[MAX_ARGS];
  dim3 grid, block;
  size_t shared;
  int nomem;
  pthread_mutex_lock(&k->lock);
  const launch_memo *m = memo_get(k, v, &d->pr, &nomem);
  if (m != NULL) { /* copied: the entry is the table's, read under the lock */
    grid = m->grid, block = m->block, shared = m->shared;
    memcpy(values, m->values, sizeof values);
  }
  pthread_mutex_unlock(&k->lock);
  if (m == NULL)
    return nomem ? pm__seterr(c, PM_ENOMEM, "%s: out of memory", k->path)
                 : pm__seterr(c, PM_EINVAL, "%s: the launch's grid, block, shared memory or a "
                                            "scalar gives no number for this point and size",
                              k->path);
  for (int i = 0; i < k->nargs; i++) {
    const arg *a = &k->args[i];
    const void *const *scalars = d->described.scalars;
    const void *given = a->scalar && scalars != NULL ? scalars[a->buf] : NULL;
    if (given != NULL) /* the call's value, in its type */
      memcpy(&values[i], given, a->type == SCALAR_I32 || a->type == SCALAR_F32 ? 4 : 8);
    args[i] = a->scalar ? (void *)&values[i] : (void *)&d->described.bufs[a->buf].dev;
  }
  return pm__module_launch(c, kern, which, grid, block, shared, stream, args);
}

int pm__kf_launch(const pm__op *self, pm_ctx *c, const pm__module *kern, const int *v,
                  pm__data *d, cudaStream_t stream) {
  return launch_entry((pm__kernel_desc *)self, c, kern, 0, v, d, stream);
}

/* The elements of buffer argument a on pr: its count, checked (at least 1; at most 2^40 bytes,
 * so that sizes stay exact and allocations sane). */
static int buffer_count(pm_ctx *c, pm__kernel_desc *k, const arg *a, const pm__problem *pr,
                        size_t *count) {
  long long x = 0;
  pthread_mutex_lock(&k->lock);
  int bad = pm__kf_expr_eval(k, &a->e, NULL, pr, &x);
  pthread_mutex_unlock(&k->lock);
  size_t es = pm_dtype_size((pm_dtype)a->type);
  if (bad || x < 1 || (unsigned long long)x > ((unsigned long long)1 << 40) / es)
    return pm__seterr(c, PM_EINVAL, "%s: args[%d].count: '%.100s' gives %s for this size: 1 to "
                                    "2^40 bytes wanted",
                      k->path, (int)(a - k->args), a->e.text, bad ? "no number" : "a count out of range");
  *count = (size_t)x;
  return PM_OK;
}

/* Runs the reference once on d (placed) and keeps each output there as the reference that every
 * point's must match: the seed configuration, or the description's reference kernel (compiled
 * and launched as the seed is), whose outputs the seed's must then match too. */
static int run_seed(pm__kernel_desc *k, pm_ctx *c, pm__data *d) {
  char defs[PM__MAX_DEFINES][24];
  const char *dp[PM__MAX_DEFINES];
  int n = pm__config_defines(&k->op, k->op.seed, &d->pr, defs);
  for (int i = 0; i < n; i++) dp[i] = defs[i];
  pm__cubin bin = {0};
  pm__module kern = {0};
  int rc = pm__compile(c, k->tpl.file, k->tpl.source, c->dev.arch, dp, (size_t)n, &bin);
  if (rc != PM_OK) return rc;
  const char *entries[2] = {k->entry, k->reference};
  rc = pm__module_load(c, &bin, entries, k->reference ? 2 : 1, &kern);
  pm__cubin_free(&bin);
  if (rc != PM_OK) return rc;
  if ((rc = launch_entry(k, c, &kern, k->reference ? 1 : 0, k->op.seed, d, pm__tune_stream())) !=
      PM_OK)
    goto fail;
  PM__CUDA(c, cudaStreamSynchronize(pm__tune_stream()));
  for (int i = 0; i < d->nbufs; i++) {
    pm__buf *b = &d->described.bufs[i];
    if (b->dir == PM__BUF_IN) continue;
    PM__CUDA(c, cudaMalloc(&b->ref, b->bytes));
    PM__CUDA(c, pm__tune_copy(b->ref, b->dev, b->bytes, cudaMemcpyDeviceToDevice));
  }
fail:
  pm__module_unload(&kern);
  return rc;
}

int pm__kernel_desc_check_size(pm_ctx *c, pm__kernel_desc *k, const pm__problem *pr) {
  size_t count;
  for (int i = 0; i < k->nargs; i++) {
    int rc = k->args[i].scalar ? PM_OK : buffer_count(c, k, &k->args[i], pr, &count);
    if (rc != PM_OK) return rc;
  }
  return PM_OK;
}

int pm__kernel_desc_compile_seed(pm_ctx *c, pm__kernel_desc *k, const char *arch) {
  char defs[PM__MAX_DEFINES][24];
  const char *dp[PM__MAX_DEFINES];
  int n = pm__config_defines(&k->op, k->op.seed, NULL, defs);
  for (int i = 0; i < n; i++) dp[i] = defs[i];
  pm__cubin bin = {0};
  int rc = pm__compile(c, k->tpl.file, k->tpl.source, arch, dp, (size_t)n, &bin);
  if (rc == PM_ECOMPILE) {
    char log[2048];
    snprintf(log, sizeof log, "%s", pm_errmsg(c));
    for (char *p = log; *p; p++) /* one line */
      if (*p == '\n') *p = ' ';
    return pm__seterr(c, PM_ECOMPILE, "%s: source: the seed does not compile for %s: %s", k->path,
                      arch, log);
  }
  if (rc != PM_OK) return rc;
  rc = pm__kernel_desc_check_cubin(c, k, &bin);
  pm__cubin_free(&bin);
  return rc;
}

int pm__kernel_desc_check_cubin(pm_ctx *c, const pm__kernel_desc *k, const pm__cubin *bin) {
  const char *names[2] = {k->entry, k->reference};
  for (int e = 0; e < 2; e++)
    if (names[e] != NULL && !pm__cubin_has_symbol(bin, names[e]))
      return pm__seterr(c, PM_EINVAL, "%s: %s: '%s' is not a kernel of the compiled %s (declare "
                                      "it extern \"C\" __global__)",
                        k->path, e == 0 ? "entry" : "reference", names[e], k->source_file);
  return PM_OK;
}

int pm__kf_prepare(const pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                   pm__data *d) {
  pm__kernel_desc *k = (pm__kernel_desc *)self;
  int rc = PM_OK;
  d->pr = *pr;
  d->nbufs = k->nbufs;
  for (int i = 0; i < k->nargs && rc == PM_OK; i++) {
    const arg *a = &k->args[i];
    size_t count = 0;
    if (a->scalar || (rc = buffer_count(c, k, a, pr, &count)) != PM_OK) continue;
    pm__buf *b = &d->described.bufs[a->buf];
    b->dir = a->dir;
    b->bytes = count * pm_dtype_size((pm_dtype)a->type);
    if (a->dir != PM__BUF_OUT &&
        (b->host = pm__random_fill_typed(a->type, count, seed + 7919 * (uint64_t)(i + 1))) == NULL)
      rc = pm__seterr(c, PM_ENOMEM, "%s: out of memory for args[%d] (%zu bytes)", k->path, i,
                      b->bytes);
  }
  if (rc == PM_OK) rc = pm__data_place(c, d, 0);
  if (rc == PM_OK) rc = run_seed(k, c, d);
  return rc;
}

/* Compares buffer b (argument a) with its reference: bit for bit where the file's tolerance is
 * 0, else |got - want| <= tolerance * max(1, |want|), NaN never passing. */
static int verify_buffer(pm__kernel_desc *k, pm_ctx *c, const arg *a, const pm__buf *b,
                         double *err) {
  size_t es = pm_dtype_size((pm_dtype)a->type), count = b->bytes / es;
  unsigned long long bad = 0, first = 0;
  double worst = 0;
  int rc = PM_OK;
  unsigned char *got = NULL, *want = NULL;
  if (k->tolerance == 0) {
    for (size_t at = 0; at < count && bad == 0 && rc == PM_OK;) {
      unsigned chunk = count - at > (1u << 30) ? 1u << 30 : (unsigned)(count - at);
      rc = pm__compare_2d(c, (const char *)b->dev + at * es, (size_t)chunk * es,
                          (const char *)b->ref + at * es, 1, chunk, (unsigned)es, &bad, &first);
      if (bad) first += at; /* the count is the first differing chunk's */
      at += chunk;
    }
    if (rc != PM_OK) return rc;
    *err = (double)bad / (double)count;
    if (bad == 0) return PM_OK;
    unsigned char g[8], w[8];
    memset(g, 0xff, sizeof g), memset(w, 0xff, sizeof w);
    pm__tune_copy(g, (const char *)b->dev + first * es, es, cudaMemcpyDeviceToHost);
    pm__tune_copy(w, (const char *)b->ref + first * es, es, cudaMemcpyDeviceToHost);
    return pm__seterr(c, PM_EVERIFY, "%s: %llu of %zu elements differ from the %s's; the first "
                                     "at [%llu]: %a, want %a",
                      a->name, bad, count, k->reference ? "reference" : "seed", first,
                      pm__elem_value(a->type, g), pm__elem_value(a->type, w));
  }
  if ((got = pm__malloc(b->bytes)) == NULL || (want = pm__malloc(b->bytes)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "%s: out of memory comparing %s", k->path, a->name);
    goto done;
  }
  PM__CUDA(c, pm__tune_copy(got, b->dev, b->bytes, cudaMemcpyDeviceToHost));
  PM__CUDA(c, pm__tune_copy(want, b->ref, b->bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < count; i++) {
    double x = pm__elem_value(a->type, got + i * es), y = pm__elem_value(a->type, want + i * es);
    double d = fabs(x - y) / fmax(1.0, fabs(y));
    if (!(d <= k->tolerance) && !(isnan(y) && isnan(x))) {
      if (bad++ == 0) first = i;
      if (isnan(d)) d = INFINITY;
    }
    if (d > worst) worst = d;
  }
  *err = worst;
  if (bad != 0) {
    double x = pm__elem_value(a->type, got + first * es), y = pm__elem_value(a->type, want + first * es);
    rc = pm__seterr(c, PM_EVERIFY, "%s: %llu of %zu elements differ from the %s's by more than "
                                   "the tolerance %g; the first at [%llu]: %a, want %a",
                    a->name, bad, count, k->reference ? "reference" : "seed", k->tolerance, first,
                    x, y);
  }
fail:
done:
  free(got), free(want);
  return rc;
}

int pm__kf_verify(const pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err) {
  pm__kernel_desc *k = (pm__kernel_desc *)self;
  (void)v;
  *err = 0;
  for (int i = 0; i < k->nargs; i++) {
    const arg *a = &k->args[i];
    double e = 0;
    if (a->scalar || a->dir == PM__BUF_IN) continue;
    int rc = verify_buffer(k, c, a, &d->described.bufs[a->buf], &e);
    if (e > *err) *err = e;
    if (rc != PM_OK) return rc;
  }
  return PM_OK;
}

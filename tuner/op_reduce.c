/* op_reduce.c: reduce as data: the sum of n floats into one float on the device; its search
 * space, constraints, launch, CPU reference and error bound (templates/reduce.cu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

enum { BLOCK, ITEMS, VEC, STEP, COMBINE, ACC, GRID, NPARAMS };

static const pm__param params[NPARAMS] = {
    [BLOCK] = {"block", "BLOCK", 5, {64, 128, 256, 512, 1024}, "threads per block"},
    [ITEMS] = {"items", "ITEMS", 4, {1, 2, 4, 8}, "accesses per thread per loop step"},
    [VEC] = {"vec", "VEC", 3, {1, 2, 4}, "floats per access"},
    [STEP] = {"step", "STEP", 3, {0, 1, 2},
              "block step: 0 shared tree, 1 padded shared tree, 2 warp shuffles"},
    [COMBINE] = {"combine", "COMBINE", 4, {0, 1, 2, 3},
                 "0 one launch, last block sums; 1 one launch, atomics (nondeterministic); "
                 "2 two launches; 3 one launch, the last block waits for flagged partials"},
    [ACC] = {"acc", "ACC", 2, {0, 1}, "accumulate in 0 float, 1 double"},
    [GRID] = {"grid", NULL, 5, {0, 1, 2, 4, 8}, "blocks: 0 one tile each, k: k x the SM count"},
};

#define MAX_PARTIALS (1u << 22) /* the scratch holds this many partial sums */
#define COUNTER_BYTES 256       /* the counter's slot, first in the scratch */
#define FLAG_SLOTS 4096         /* then COMBINE 3's flagged partials (8 bytes each), apart from
                                   the other variants' partials so that theirs never read as
                                   flagged; then the partials of COMBINE 0, 1 and 2 */
#define FLAG_BYTES (FLAG_SLOTS * 8)

static unsigned long long tiles_of(const int *v, unsigned n) {
  unsigned long long per = (unsigned long long)v[BLOCK] * v[ITEMS] * v[VEC];
  return (n + per - 1) / per;
}

static unsigned grid_of(const int *v, unsigned n, int sm_count) {
  unsigned long long t = tiles_of(v, n);
  if (v[GRID] > 0 && t > (unsigned long long)v[GRID] * sm_count) t = (unsigned long long)v[GRID] * sm_count;
  return t ? (unsigned)t : 1;
}

static const char *check(const int *v, const pm__problem *pr, const pm__limits *lim) {
  if (v[BLOCK] > lim->max_threads) return "threads per block out of range";
  if (v[COMBINE] == 1 && !lim->allow_nondeterministic) return "not deterministic (atomic combine)";
  if (v[COMBINE] == 3 && v[ACC] != 0) return "flagged partials are floats (acc=0 only)";
  if (pr == NULL) return NULL;
  if (pr->n == 0 || pr->n > 0x7fffffffu) return "n out of range";
  if (pr->caller_align != 0 && pr->caller_align % (unsigned)(v[VEC] * 4) != 0)
    return "the caller's pointer is not aligned to the vector width";
  if (grid_of(v, pr->n, lim->sm_count) > (v[COMBINE] == 3 ? FLAG_SLOTS : MAX_PARTIALS))
    return "more partial sums than the scratch holds";
  return NULL;
}

/* A grid cap that does not bind launches one block a tile, as grid=0 does. */
static int same_launch(const int *v, const pm__problem *pr, const pm__limits *lim, int *twin) {
  if (v[GRID] == 0 || tiles_of(v, pr->n) > (unsigned long long)v[GRID] * lim->sm_count) return 0;
  memcpy(twin, v, sizeof *twin * NPARAMS);
  twin[GRID] = 0;
  return 1;
}

/* What `pmtune tune` and `pmtune bench` run where no size is given. */
static const pm__problem tune_sizes[] = {
    {.n = 1000},     {.n = 2048},     {.n = 4096},     {.n = 8192},     {.n = 16384},
    {.n = 65536},    {.n = 1u << 18}, {.n = 1u << 20}, {.n = 1u << 22}, {.n = 1u << 24},
    {.n = 1u << 28}, {.n = 1u << 30}};
static const pm__problem bench_sizes[] = {
    {.n = 1u << 16}, {.n = 1u << 20}, {.n = 1u << 24}, {.n = 1u << 28}, {.n = 1u << 30}};

static double bytes(const pm__problem *pr) { return 4.0 * pr->n + 4.0; }

static size_t layout(const int *v) { (void)v; return 0; }

static void fallback(const pm__problem *pr, int *v) {
  v[BLOCK] = 256, v[ITEMS] = 4, v[STEP] = 2, v[COMBINE] = 0, v[ACC] = 0, v[GRID] = 4;
  v[VEC] = pr->caller_align == 0 || pr->caller_align >= 16 ? 4 : pr->caller_align >= 8 ? 2 : 1;
}

static size_t work_bytes(const int *v, const pm__problem *pr, int sm_count) {
  return COUNTER_BYTES + FLAG_BYTES + (size_t)grid_of(v, pr->n, sm_count) * sizeof(double);
}

static int prepare(pm_ctx *c, const pm__problem *pr, uint64_t seed, pm__data *d) {
  int rc = PM_OK;
  d->pr = *pr;
  d->lines = 1;
  d->inner = pr->n;
  d->scalar_out = 1;
  d->out_bytes = sizeof(float);
  d->work_bytes = COUNTER_BYTES + FLAG_BYTES + (size_t)MAX_PARTIALS * sizeof(double);
  if ((d->host_in[0] = pm__malloc((size_t)pr->n * sizeof(float))) == NULL ||
      (d->host_ref = pm__malloc(sizeof(float))) == NULL)
    return pm__seterr(c, PM_ENOMEM, "reduce n=%u: out of host memory", pr->n);
  pm__random_fill(d->host_in[0], pr->n, seed);
  /* The reference: a double sum in 4 interleaved chains, then pairwise; far more exact than
   * any float variant (its own error is below n * 2^-53 * sum|x|). */
  double s[4] = {0}, a = 0;
  for (size_t i = 0; i < pr->n; i++) {
    s[i & 3] += d->host_in[0][i];
    a += fabs(d->host_in[0][i]);
  }
  d->ref_exact = (s[0] + s[1]) + (s[2] + s[3]);
  d->ref_scale = a;
  d->host_ref[0] = (float)d->ref_exact;
  (void)c;
  return rc;
}

static int launch(pm_ctx *c, const pm__kernel *k, const int *v, pm__data *d, cudaStream_t s) {
  unsigned n = d->pr.n, grid = grid_of(v, n, c->dev.sm_count);
  void *counter = d->work;
  void *partials = (char *)d->work + COUNTER_BYTES + (v[COMBINE] == 3 ? 0 : FLAG_BYTES);
  void *args[] = {&d->in[0], &n, &d->out, &partials, &counter};
  dim3 g = {grid, 1, 1}, b = {(unsigned)v[BLOCK], 1, 1};
  int rc = pm__kernel_launch(c, k, 0, g, b, 0, s, args);
  if (rc != PM_OK || v[COMBINE] != 2) return rc;
  void *args2[] = {&partials, &grid, &d->out};
  dim3 one = {1, 1, 1};
  return pm__kernel_launch(c, k, 1, one, b, 0, s, args2);
}

static double log2ceil(double x) { return x <= 1 ? 0 : ceil(log2(x)); }

/* The first-order bound on the rounding error of point v's summation order, as a multiple of
 * sum|x| (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.2: a sum
 * whose additions form a tree of depth D errs by at most D * u * sum|x|). */
static double error_bound(const int *v, unsigned n, int sm_count, double sum, double abs) {
  double grid = grid_of(v, n, sm_count), threads = grid * v[BLOCK];
  double chain = ceil((double)n / v[VEC] / (threads * v[ITEMS])); /* steps per accumulator */
  double depth = chain + log2ceil(v[VEC]) + log2ceil(v[ITEMS]) + 1 /* tail */ + log2ceil(v[BLOCK]);
  depth += v[COMBINE] == 1 ? grid : ceil(grid / v[BLOCK]) + log2ceil(v[BLOCK]);
  double u = v[ACC] ? ldexp(1.0, -53) : ldexp(1.0, -24);
  /* plus the final rounding to float, and a margin for the reference's own error */
  return (depth * u * abs + ldexp(1.0, -24) * fabs(sum)) * 1.01 + ldexp(1.0, -50) * abs;
}

static int verify(pm_ctx *c, const int *v, pm__data *d, double *err) {
  float got;
  int rc = PM_OK;
  PM__CUDA(c, pm__tune_copy(&got, d->out, sizeof got, cudaMemcpyDeviceToHost));
  double diff = fabs((double)got - d->ref_exact);
  *err = d->ref_scale > 0 ? diff / d->ref_scale : diff;
  double bound = error_bound(v, d->pr.n, c->dev.sm_count, d->ref_exact, d->ref_scale);
  if (!isfinite(got) || !(diff <= bound))
    return pm__seterr(c, PM_EVERIFY,
                      "reduce n=%u: the sum is %.9g, want %.9g (error %.3g, bound %.3g = "
                      "depth x u x sum|x|)",
                      d->pr.n, got, d->ref_exact, diff, bound);
fail:
  return rc;
}

const pm__op pm__op_reduce = {
    .name = "reduce",
    .summary = "the sum of n floats into one float in device memory",
    .api = PM_OP_REDUCE,
    .entries = {"pm_reduce", "pm_reduce_final"},
    .dims = 1,
    .dtypes = 1u << PM_F32,
    .variants = {"", NULL},
    .variant_names = {"", NULL},
    .tune_sizes = tune_sizes,
    .ntune_sizes = sizeof tune_sizes / sizeof *tune_sizes,
    .bench_sizes = bench_sizes,
    .nbench_sizes = sizeof bench_sizes / sizeof *bench_sizes,
    .nentries = 2,
    .nparams = NPARAMS,
    .params = params,
    .seed = {[BLOCK] = 256, [ITEMS] = 2, [VEC] = 1, [STEP] = 0, [COMBINE] = 2, [ACC] = 0,
             [GRID] = 0},
    .check = check,
    .same_launch = same_launch,
    .bytes = bytes,
    .layout = layout,
    .fallback = fallback,
    .work_bytes = work_bytes,
    .prepare = prepare,
    .launch = launch,
    .verify = verify,
};

/* op_reduce.c: reduce as data: the sum of n elements of any pm_dtype into one value on the device;
 * its search space, constraints, launch, CPU reference and error bound (templates/reduce.cu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

enum { BLOCK, ITEMS, VEC, STEP, COMBINE, ACC, GRID, NPARAMS };

static const pm__param params[NPARAMS] = {
    [BLOCK] = {"block", "BLOCK", 5, {64, 128, 256, 512, 1024}, "threads per block"},
    [ITEMS] = {"items", "ITEMS", 4, {1, 2, 4, 8}, "accesses per thread per loop step"},
    [VEC] = {"vec", "VEC", 4, {1, 2, 4, 8}, "elements per access (at most 16 bytes)"},
    [STEP] = {"step", "STEP", 3, {0, 1, 2},
              "block step: 0 shared tree, 1 padded shared tree, 2 warp shuffles"},
    [COMBINE] = {"combine", "COMBINE", 4, {0, 1, 2, 3},
                 "0 one launch, last block sums; 1 one launch, atomics (nondeterministic); "
                 "2 two launches; 3 one launch, the last block waits for flagged partials"},
    [ACC] = {"acc", "ACC", 2, {0, 1}, "accumulate in 0 float (f64: double), 1 double"},
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

static const char *check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim) {
  (void)self;
  unsigned es = pm__problem_esize(pr); /* without a problem, a float's */
  if (v[BLOCK] > lim->max_threads) return "threads per block out of range";
  if (v[COMBINE] == 1 && !lim->allow_nondeterministic) return "not deterministic (atomic combine)";
  if (v[COMBINE] == 3 && v[ACC] != 0) return "flagged partials are floats (acc=0 only)";
  if (v[VEC] * es > 16) return "an access of more than 16 bytes";
  if (pr == NULL) return NULL;
  if (pr->dtype == PM_F64 && v[ACC] != 0) return "doubles accumulate in double at acc=0 already";
  if (pr->dtype == PM_F64 && v[COMBINE] == 3) return "flagged partials are floats (not f64)";
  if (pr->n == 0 || pr->n > 0x7fffffffu) return "n out of range";
  if (pr->caller_align != 0 && pr->caller_align % (unsigned)(v[VEC] * es) != 0)
    return "the caller's pointer is not aligned to the vector width";
  if (grid_of(v, pr->n, lim->sm_count) > (v[COMBINE] == 3 ? FLAG_SLOTS : MAX_PARTIALS))
    return "more partial sums than the scratch holds";
  return NULL;
}

/* A grid cap that does not bind launches one block a tile, as grid=0 does; and a grid of one
 * block writes its sum whatever COMBINE says (templates/reduce.cu), one launch, the same
 * additions in the same order, as COMBINE 0 does. */
static int same_launch(const pm__op *self, const int *v, const pm__problem *pr,
                       const pm__limits *lim, int *twin) {
  (void)self;
  int cap_idle = v[GRID] != 0 && tiles_of(v, pr->n) <= (unsigned long long)v[GRID] * lim->sm_count;
  int combine_idle = v[COMBINE] != 0 && grid_of(v, pr->n, lim->sm_count) == 1;
  if (!cap_idle && !combine_idle) return 0;
  memcpy(twin, v, sizeof *twin * NPARAMS);
  if (cap_idle) twin[GRID] = 0;
  if (combine_idle) twin[COMBINE] = 0;
  return 1;
}

/* A grid of one block writes its sum without combining (templates/reduce.cu): another path than
 * a grid of more, at a time that does not follow from theirs (1 and 2 are the two paths). */
static int regime(const pm__op *self, const int *v, const pm__problem *pr, const pm__limits *lim) {
  (void)self;
  return grid_of(v, pr->n, lim->sm_count) == 1 ? 1 : 2;
}

/* What `pmtune tune` and `pmtune bench` run where no size is given. Not 2^30 (4 GB of floats):
 * the longest problem of the default tuning (10 s of its 180 on an H100, docs/results.md), served as
 * well by 2^28's winner, both at the memory's speed; `pmtune tune --op reduce --size 1073741824`
 * tunes it. */
static const pm__problem tune_sizes[] = {
    {.n = 1000},     {.n = 2048},     {.n = 4096},     {.n = 8192},     {.n = 16384},
    {.n = 65536},    {.n = 1u << 18}, {.n = 1u << 20}, {.n = 1u << 22}, {.n = 1u << 24},
    {.n = 1u << 28},
    /* bf16: fewer (op_matadd.c says why) */
    {.n = 4096, .dtype = PM_BF16},     {.n = 1u << 20, .dtype = PM_BF16},
    {.n = 1u << 24, .dtype = PM_BF16}, {.n = 1u << 28, .dtype = PM_BF16}};
static const pm__problem bench_sizes[] = {
    {.n = 1u << 16}, {.n = 1u << 20}, {.n = 1u << 24}, {.n = 1u << 28}, {.n = 1u << 30}};

/* the output counted as the input's type */
static double bytes(const pm__op *self, const pm__problem *pr) {
  (void)self;
  return (double)pm__problem_esize(pr) * (pr->n + 1.0);
}

static size_t layout(const pm__op *self, const int *v) { (void)self; (void)v; return 0; }

static void fallback(const pm__op *self, const pm__problem *pr, int *v) {
  (void)self;
  v[BLOCK] = 256, v[ITEMS] = 4, v[STEP] = 2, v[COMBINE] = 0, v[GRID] = 4;
  v[ACC] = 0;
  v[VEC] = pm__widest_vec(pr);
}

static size_t work_bytes(const pm__op *self, const int *v, const pm__problem *pr, int sm_count) {
  (void)self;
  return COUNTER_BYTES + FLAG_BYTES + (size_t)grid_of(v, pr->n, sm_count) * sizeof(double);
}

/* The reference: each block of 2^16 elements summed in double with Neumaier's compensation
 * (Higham, sec. 4.3), the blocks' sums and corrections then combined the same way, in order. Its
 * error is within 2u|sum| + O(n u^2) sum|x| for u = 2^-53: far below any variant's, so that a
 * variant accumulating in double is checked too. */
#define REF_BLOCK ((size_t)1 << 16)

typedef struct ref_sum {
  int dtype;
  const void *x;
  size_t n;
  double *sum, *comp, *abs; /* per block */
} ref_sum;

static double elem(int dtype, const void *x, size_t i) {
  switch (dtype) {
  case PM_F16: return pm__f16_to_f32(((const unsigned short *)x)[i]);
  case PM_BF16: return pm__bf16_to_f32(((const unsigned short *)x)[i]);
  case PM_F64: return ((const double *)x)[i];
  default: return ((const float *)x)[i];
  }
}

/* Adds y to the compensated sum (*s, *c). */
static void neumaier(double *s, double *c, double y) {
  double t = *s + y;
  *c += fabs(*s) >= fabs(y) ? (*s - t) + y : (y - t) + *s;
  *s = t;
}

static void ref_blocks(void *arg, size_t b0, size_t b1) {
  const ref_sum *r = arg;
  for (size_t b = b0; b < b1; b++) {
    double s = 0, c = 0, a = 0;
    size_t hi = (b + 1) * REF_BLOCK < r->n ? (b + 1) * REF_BLOCK : r->n;
    for (size_t i = b * REF_BLOCK; i < hi; i++) {
      double y = elem(r->dtype, r->x, i);
      neumaier(&s, &c, y);
      a += fabs(y);
    }
    r->sum[b] = s, r->comp[b] = c, r->abs[b] = a;
  }
}

int pm__reduce_reference(int dtype, const void *x, size_t n, double *sum, double *abs) {
  size_t blocks = (n + REF_BLOCK - 1) / REF_BLOCK;
  double *m = malloc(3 * blocks * sizeof *m);
  if (m == NULL) return -1;
  ref_sum r = {dtype, x, n, m, m + blocks, m + 2 * blocks};
  pm__parallel_for(blocks, ref_blocks, &r);
  double s = 0, c = 0, a = 0;
  for (size_t b = 0; b < blocks; b++) {
    neumaier(&s, &c, r.sum[b]);
    c += r.comp[b];
    a += r.abs[b];
  }
  free(m);
  *sum = s + c, *abs = a;
  return 0;
}

static int prepare(const pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                   pm__data *d) {
  (void)self;
  d->pr = *pr;
  d->lines = 1;
  d->inner = pr->n;
  d->out_value_bytes = sizeof(double); /* the widest sum */
  /* the tuner checks the sum at the accumulator's precision: 16-bit inputs' as a float */
  d->reduce.sum_as_float = pr->dtype == PM_F16 || pr->dtype == PM_BF16;
  d->work_bytes = COUNTER_BYTES + FLAG_BYTES + (size_t)MAX_PARTIALS * sizeof(double);
  if ((d->host_in[0] = pm__random_fill_typed(pr->dtype, pr->n, seed)) == NULL ||
      pm__reduce_reference(pr->dtype, d->host_in[0], pr->n, &d->reduce.ref_exact,
                           &d->reduce.ref_scale) != 0)
    return pm__seterr(c, PM_ENOMEM, "reduce n=%u: out of host memory", pr->n);
  return PM_OK;
}

static int launch(const pm__op *self, pm_ctx *c, const pm__module *k, const int *v, pm__data *d,
                  cudaStream_t s) {
  (void)self;
  unsigned n = d->pr.n, grid = grid_of(v, n, c->dev.sm_count), as_float = d->reduce.sum_as_float;
  void *counter = d->work;
  void *partials = (char *)d->work + COUNTER_BYTES + (v[COMBINE] == 3 ? 0 : FLAG_BYTES);
  void *args[] = {&d->in[0], &n, &d->out, &partials, &counter, &as_float};
  dim3 g = {grid, 1, 1}, b = {(unsigned)v[BLOCK], 1, 1};
  int rc = pm__module_launch(c, k, 0, g, b, 0, s, args);
  if (rc != PM_OK || v[COMBINE] != 2 || grid == 1) return rc; /* one block wrote the sum */
  void *args2[] = {&partials, &grid, &d->out, &as_float};
  dim3 one = {1, 1, 1};
  return pm__module_launch(c, k, 1, one, b, 0, s, args2);
}

static double log2ceil(double x) { return x <= 1 ? 0 : ceil(log2(x)); }

/* The unit roundoff of a type: half its precision's last place. */
static double unit(int dtype) {
  return ldexp(1.0, dtype == PM_F16 ? -11 : dtype == PM_BF16 ? -8 : dtype == PM_F64 ? -53 : -24);
}

double pm__reduce_error_bound(const int *v, unsigned n, int sm_count, int dtype, int out_dtype,
                              double sum, double abs) {
  int double_sum = dtype == PM_F64;
  double grid = grid_of(v, n, sm_count), threads = grid * v[BLOCK];
  double chain = ceil((double)n / v[VEC] / (threads * v[ITEMS])); /* steps per accumulator */
  double depth = chain + log2ceil(v[VEC]) + log2ceil(v[ITEMS]) + 1 /* tail */ + log2ceil(v[BLOCK]);
  depth += v[COMBINE] == 1 ? grid : ceil(grid / v[BLOCK]) + log2ceil(v[BLOCK]);
  double u = unit(v[ACC] || double_sum ? PM_F64 : PM_F32);
  /* plus the final rounding to the output's type, and a margin for the reference's own error */
  return (depth * u * abs + unit(out_dtype) * fabs(sum)) * 1.01 + ldexp(1.0, -50) * abs;
}

static int verify(const pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err) {
  (void)self;
  unsigned char bits[8];
  const pm__reduce_data *r = &d->reduce;
  int rc = PM_OK, out = r->sum_as_float ? PM_F32 : d->pr.dtype;
  PM__CUDA(c, pm__tune_copy(bits, d->out, pm_dtype_size((pm_dtype)out), cudaMemcpyDeviceToHost));
  double got = pm__elem_value(out, bits), diff = fabs(got - r->ref_exact);
  *err = r->ref_scale > 0 ? diff / r->ref_scale : diff;
  double bound = pm__reduce_error_bound(v, d->pr.n, c->dev.sm_count, d->pr.dtype, out,
                                        r->ref_exact, r->ref_scale);
  if (!isfinite(got) || !(diff <= bound))
    return pm__seterr(c, PM_EVERIFY,
                      "reduce n=%u %s: the sum is %.17g (%s), want %.17g (error %.3g, bound %.3g "
                      "= depth x u x sum|x| + the output's rounding)",
                      d->pr.n, pm_dtype_name((pm_dtype)d->pr.dtype), got,
                      pm_dtype_name((pm_dtype)out), r->ref_exact, diff, bound);
fail:
  return rc;
}

const pm__op pm__op_reduce = {
    .name = "reduce",
    .summary = "the sum of n elements into one value in device memory",
    .api = PM_OP_REDUCE,
    .entries = {"pm_reduce", "pm_reduce_final"},
    .dims = 1,
    .dtypes = PM__DTYPES_ALL,
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
    .regime = regime,
    .bytes = bytes,
    .layout = layout,
    .fallback = fallback,
    .work_bytes = work_bytes,
    .prepare = prepare,
    .launch = launch,
    .verify = verify,
};

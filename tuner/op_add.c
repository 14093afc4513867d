/* op_add.c: add as data: C = A + B over n elements of any pm_dtype, one flat vector (pm_add, and pm_matadd on
 * packed matrices, whatever their storage order); its search space, constraints,
 * launch and CPU reference (templates/add.cu). */
#include <stdlib.h>

#include "op.h"

enum { BLOCK, VEC, ITEMS, GRID, NPARAMS };

static const pm__param params[NPARAMS] = {
    [BLOCK] = {"block", "BLOCK", 5, {64, 128, 256, 512, 1024}, "threads per block"},
    [VEC] = {"vec", "VEC", 4, {1, 2, 4, 8}, "elements per access (the n % vec left one at a time)"},
    [ITEMS] = {"items", "ITEMS", 4, {1, 2, 4, 8}, "accesses per thread per tile, block apart"},
    [GRID] = {"grid", "GRID", 2, {0, 1}, "0 one tile per block, 1 grid-stride over one wave"},
};

/* Tiles of point v on n elements: whole vectors, block x items of them a tile. */
static unsigned long long tiles_of(const int *v, unsigned n) {
  unsigned long long per = (unsigned long long)v[BLOCK] * v[ITEMS], nvec = n / (unsigned)v[VEC];
  return (nvec + per - 1) / per;
}

/* Blocks launched: one per tile (at least one: block 0 adds the elements after the last whole
 * vector), or at most one wave (2048 resident threads per SM, as matadd counts them). */
static unsigned grid_of(const int *v, unsigned n, int sm_count) {
  unsigned long long t = tiles_of(v, n), wave = (unsigned long long)sm_count * (2048 / v[BLOCK]);
  if (v[GRID] && t > wave) t = wave;
  return t ? (unsigned)t : 1;
}

static const char *check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim) {
  (void)self;
  if (v[BLOCK] > lim->max_threads) return "threads per block out of range";
  unsigned es = pm__problem_esize(pr); /* without a problem, a float's */
  if (v[VEC] * es > 16) return "an access of more than 16 bytes";
  if (pr == NULL) return NULL;
  if (pr->n == 0 || pr->n > 0x7fffffffu) return "n out of range";
  if (pr->caller_align != 0 && pr->caller_align % (v[VEC] * es) != 0)
    return "the caller's pointers are not aligned to the vector width";
  if (v[GRID] == 0 && tiles_of(v, pr->n) > 0x7fffffffull) return "more tiles than a grid may have";
  return NULL;
}

/* What `pmtune tune` and `pmtune bench` run where no size is given: 2^16 to 2^28 floats, and odd
 * n (a tail after the last float4) among them. Packed matadds are served from these too, by the
 * nearest n. */
static const pm__problem tune_sizes[] = {
    {.n = 1u << 16}, {.n = 1u << 18}, {.n = 1u << 20}, {.n = 1000003},   {.n = 1u << 22},
    {.n = 1u << 24}, {.n = 10000019}, {.n = 1u << 26}, {.n = 100000007}, {.n = 1u << 28},
    /* bf16: fewer (op_matadd.c says why) */
    {.n = 1u << 16, .dtype = PM_BF16}, {.n = 1u << 20, .dtype = PM_BF16},
    {.n = 1u << 24, .dtype = PM_BF16}, {.n = 1u << 28, .dtype = PM_BF16}};
static const pm__problem bench_sizes[] = {
    {.n = 1u << 16}, {.n = 1000003}, {.n = 1u << 24}, {.n = 100000007}, {.n = 1u << 28}};

static double bytes(const pm__op *self, const pm__problem *pr) {
  (void)self;
  return 3.0 * pm__problem_esize(pr) * pr->n;
}

static size_t layout(const pm__op *self, const int *v) { (void)self; (void)v; return 0; }

/* float4 (where the caller's pointers allow), two accesses per thread, one tile per block: the
 * shape of the flat adds that run at the memory's speed (torch's elementwise kernels, the float4
 * peer), without a grid-stride loop. It must run within 10% of the tuned winner at large n; it
 * was written without a GPU at hand: `pmtune bench --op add` on an empty database (the default
 * served) against one tuned for add measures it. */
static void fallback(const pm__op *self, const pm__problem *pr, int *v) {
  (void)self;
  v[BLOCK] = 256, v[ITEMS] = 2, v[GRID] = 0;
  v[VEC] = pm__widest_vec(pr);
}

static int prepare(const pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                   pm__data *d) {
  (void)self;
  d->pr = *pr;
  d->lines = 1;
  d->inner = pr->n;
  return pm__prepare_add(c, pr, seed, pr->n, d);
}

static int launch(const pm__op *self, pm_ctx *c, const pm__module *k, const int *v, pm__data *d,
                  cudaStream_t s) {
  (void)self;
  unsigned n = d->pr.n;
  dim3 grid = {grid_of(v, n, c->dev.sm_count), 1, 1}, block = {(unsigned)v[BLOCK], 1, 1};
  void *args[] = {&d->out, &d->in[0], &d->in[1], &n};
  return pm__module_launch(c, k, 0, grid, block, 0, s, args);
}

static int verify(const pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err) {
  (void)self;
  (void)v;
  return pm__verify_2d(c, d, 1, d->pr.n, 0, err);
}

const pm__op pm__op_add = {
    .name = "add",
    .summary = "C = A + B over n elements, one flat vector (also packed matadds)",
    .api = PM_OP_ADD,
    .entries = {"pm_add"},
    .dims = 1,
    .dtypes = PM__DTYPES_ALL,
    .variants = {"", NULL},
    .variant_names = {"", NULL},
    .tune_sizes = tune_sizes,
    .ntune_sizes = sizeof tune_sizes / sizeof *tune_sizes,
    .bench_sizes = bench_sizes,
    .nbench_sizes = sizeof bench_sizes / sizeof *bench_sizes,
    .nentries = 1,
    .nparams = NPARAMS,
    .params = params,
    .seed = {[BLOCK] = 256, [VEC] = 1, [ITEMS] = 1, [GRID] = 0},
    .check = check,
    .bytes = bytes,
    .layout = layout,
    .fallback = fallback,
    .prepare = prepare,
    .launch = launch,
    .verify = verify,
};

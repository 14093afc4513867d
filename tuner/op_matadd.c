/* op_matadd.c: matadd as data: C = A + B over a pitched rows x cols matrix of any pm_dtype, row-
 * or column-major; its search space, constraints, launch and CPU reference (templates/matadd.cu). */
#include <stdlib.h>

#include "op.h"

/* The problem's variants, in the order of the entry's variants: the storage order. */
enum { ROW_MAJOR, COL_MAJOR };
#define COLMAJOR(pr) ((pr)->variant == COL_MAJOR)

enum { BX, BY, VEC, EPT, GRID, MAP, ALIGN, NPARAMS };

static const pm__param params[NPARAMS] = {
    [BX] = {"bx", "BX", 7, {16, 32, 64, 128, 256, 512, 1024}, "threads per block in x"},
    [BY] = {"by", "BY", 6, {1, 2, 4, 8, 16, 32}, "threads per block in y"},
    [VEC] = {"vec", "VEC", 4, {1, 2, 4, 8}, "elements per access along the contiguous dimension"},
    [EPT] = {"ept", "EPT", 3, {1, 2, 4}, "accesses per thread, BY lines apart"},
    [GRID] = {"grid", "GRID", 2, {0, 1}, "0 one tile per block, 1 grid-stride over one wave"},
    [MAP] = {"map", "MAP", 2, {0, 1}, "0 threadIdx.x along the columns, 1 along the rows"},
    [ALIGN] = {"align", NULL, 5, {0, 64, 128, 256, 512}, "pitch alignment in bytes (0 packed)"},
};

/* Lines, vectors per line and the grid of point v on pr. */
typedef struct geometry {
  unsigned lines, inner, nx, ny;
  unsigned long long tiles;
} geometry;

static geometry geometry_of(const int *v, const pm__problem *pr) {
  geometry g;
  g.inner = COLMAJOR(pr) ? pr->rows : pr->cols;
  g.lines = COLMAJOR(pr) ? pr->cols : pr->rows;
  unsigned nvec = (g.inner + v[VEC] - 1) / v[VEC];
  int x_inner = (v[MAP] == 0) == !COLMAJOR(pr);
  g.nx = x_inner ? nvec : g.lines;
  g.ny = x_inner ? g.lines : nvec;
  unsigned ty = (unsigned)(v[BY] * v[EPT]);
  g.tiles = (unsigned long long)((g.nx + v[BX] - 1) / v[BX]) * ((g.ny + ty - 1) / ty);
  return g;
}

static const char *check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim) {
  (void)self;
  int threads = v[BX] * v[BY];
  if (threads < 32 || threads > lim->max_threads) return "threads per block out of range";
  unsigned es = pm__problem_esize(pr); /* without a problem, a float's */
  if (v[VEC] * es > 16) return "an access of more than 16 bytes";
  if (pr == NULL) return NULL;
  geometry g = geometry_of(v, pr);
  if (pr->caller_align != 0 && pr->caller_align % (v[VEC] * es) != 0)
    return "the caller's pointers or pitches are not aligned to the vector width";
  if (pr->caller_align == 0 && v[ALIGN] == 0 && g.lines > 1 && g.inner % v[VEC] != 0)
    return "packed lines are not aligned to the vector width";
  if (v[GRID] == 0 && g.tiles > 0x7fffffffull) return "more tiles than a grid may have";
  return NULL;
}


/* What `pmtune tune` and `pmtune bench` run where no size is given. */
static const pm__problem tune_sizes[] = {
    {.rows = 512, .cols = 512},     {.rows = 1024, .cols = 1024},   {.rows = 2048, .cols = 2048},
    {.rows = 4096, .cols = 4096},   {.rows = 4097, .cols = 3001},   {.rows = 8192, .cols = 8192},
    {.rows = 10000, .cols = 10000}, {.rows = 16384, .cols = 16384},
    {.rows = 512, .cols = 512, .variant = COL_MAJOR},
    {.rows = 1024, .cols = 1024, .variant = COL_MAJOR},
    {.rows = 2048, .cols = 2048, .variant = COL_MAJOR},
    {.rows = 4096, .cols = 4096, .variant = COL_MAJOR},
    {.rows = 10000, .cols = 10000, .variant = COL_MAJOR},
    /* bf16, the type of models: fewer sizes, so that `pmtune tune` stays under 3 minutes on an
     * H100; `--dtype bf16` tunes all of the above in it */
    {.rows = 1024, .cols = 1024, .dtype = PM_BF16},  {.rows = 4096, .cols = 4096, .dtype = PM_BF16},
    {.rows = 4097, .cols = 3001, .dtype = PM_BF16},  {.rows = 10000, .cols = 10000, .dtype = PM_BF16},
    {.rows = 1024, .cols = 1024, .variant = COL_MAJOR, .dtype = PM_BF16},
    {.rows = 10000, .cols = 10000, .variant = COL_MAJOR, .dtype = PM_BF16}};
static const pm__problem bench_sizes[] = {
    {.rows = 1024, .cols = 1024}, {.rows = 2048, .cols = 2048},   {.rows = 4096, .cols = 4096},
    {.rows = 4097, .cols = 3001}, {.rows = 8192, .cols = 8192},   {.rows = 10000, .cols = 10000},
    {.rows = 16384, .cols = 16384}};

static double bytes(const pm__op *self, const pm__problem *pr) {
  (void)self;
  return 3.0 * pm__problem_esize(pr) * pr->rows * pr->cols;
}

static size_t layout(const pm__op *self, const int *v) { (void)self; return (size_t)v[ALIGN]; }

static void fallback(const pm__op *self, const pm__problem *pr, int *v) {
  (void)self;
  v[BX] = 128, v[BY] = 2, v[EPT] = 1, v[GRID] = 0, v[ALIGN] = 256;
  /* 16-byte accesses, or the widest the caller's pointers allow */
  v[VEC] = pm__widest_vec(pr);
  v[MAP] = COLMAJOR(pr); /* threadIdx.x along the contiguous dimension: coalesced */
}

static int prepare(const pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                   pm__data *d) {
  (void)self;
  d->pr = *pr;
  d->lines = COLMAJOR(pr) ? pr->cols : pr->rows;
  d->inner = COLMAJOR(pr) ? pr->rows : pr->cols;
  return pm__prepare_add(c, pr, seed, (size_t)pr->rows * pr->cols, d);
}

static int launch(const pm__op *self, pm_ctx *c, const pm__module *k, const int *v, pm__data *d,
                  cudaStream_t s) {
  (void)self;
  geometry g = geometry_of(v, &d->pr);
  unsigned long long blocks = g.tiles;
  if (v[GRID]) {
    unsigned long long wave = (unsigned long long)c->dev.sm_count * (2048 / (v[BX] * v[BY]));
    if (blocks > wave) blocks = wave;
  }
  dim3 grid = {(unsigned)(blocks ? blocks : 1), 1, 1}, block = {(unsigned)v[BX], (unsigned)v[BY], 1};
  unsigned rows = d->pr.rows, cols = d->pr.cols;
  int colmajor = COLMAJOR(&d->pr);
  void *args[] = {&d->out, &d->out_pitch, &d->in[0], &d->in_pitch[0], &d->in[1], &d->in_pitch[1],
                  &rows, &cols, &colmajor};
  return pm__module_launch(c, k, 0, grid, block, 0, s, args);
}

static int verify(const pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err) {
  (void)self;
  (void)v;
  return pm__verify_2d(c, d, d->lines, d->inner, COLMAJOR(&d->pr), err);
}

const pm__op pm__op_matadd = {
    .name = "matadd",
    .summary = "C = A + B over a pitched rows x cols matrix, row- or column-major",
    .api = PM_OP_MATADD,
    .entries = {"pm_matadd"},
    .dims = 2,
    .dtypes = PM__DTYPES_ALL,
    .variants = {"order=row", "order=col", NULL},
    .variant_names = {"row-major", "col-major", NULL},
    .tune_sizes = tune_sizes,
    .ntune_sizes = sizeof tune_sizes / sizeof *tune_sizes,
    .bench_sizes = bench_sizes,
    .nbench_sizes = sizeof bench_sizes / sizeof *bench_sizes,
    .nentries = 1,
    .nparams = NPARAMS,
    .params = params,
    .seed = {[BX] = 32, [BY] = 32, [VEC] = 1, [EPT] = 1, [GRID] = 0, [MAP] = 0, [ALIGN] = 0},
    .check = check,
    .bytes = bytes,
    .layout = layout,
    .fallback = fallback,
    .prepare = prepare,
    .launch = launch,
    .verify = verify,
};

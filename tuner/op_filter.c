/* op_filter.c: filter as data: the 2D correlation of a pitched rows x cols image of any pm_dtype
 * with a (2r+1)^2 mask (float weights, double for f64), clamp-to-edge or zero borders; its search
 * space, constraints, launch and CPU reference (templates/filter.cu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

/* The problem's variants, in the order of the entry's variants: the border. */
enum { BORDER_CLAMP, BORDER_ZERO };

enum { BX, BY, TILE, PAD, OX, OY, VLOAD, ALIGN, NPARAMS };

static const pm__param params[NPARAMS] = {
    [BX] = {"bx", "BX", 5, {8, 16, 32, 64, 128}, "threads per block in x"},
    [BY] = {"by", "BY", 5, {1, 2, 4, 8, 16}, "threads per block in y"},
    [TILE] = {"tile", "TILE", 2, {0, 1}, "0 global loads, 1 shared-memory tile with halo"},
    [PAD] = {"pad", "PAD", 3, {0, 1, 2}, "shared-memory row padding in words (tile=1)"},
    [OX] = {"ox", "OX", 4, {1, 2, 4, 8}, "outputs per thread in x (8: 16-bit types)"},
    [OY] = {"oy", "OY", 4, {1, 2, 4, 8}, "outputs per thread in y"},
    [VLOAD] = {"vload", "VLOAD", 3, {0, 1, 2},
               "rows of the window as vector loads (tile=0): 1 of 4 elements, 2 doubles (ox=4, 8), "
               "2 of 8 16-bit elements (ox=8)"},
    [ALIGN] = {"align", NULL, 5, {0, 64, 128, 256, 512}, "pitch alignment in bytes (0 packed)"},
};

static unsigned long long tiles_of(const int *v, const pm__problem *pr) {
  unsigned tw = (unsigned)(v[BX] * v[OX]), th = (unsigned)(v[BY] * v[OY]);
  return (unsigned long long)((pr->cols + tw - 1) / tw) * ((pr->rows + th - 1) / th);
}

/* The bytes of a weight and a sum: a double's for doubles, else a float's. */
static size_t wsize(const pm__problem *pr) { return pr && pr->dtype == PM_F64 ? 8 : 4; }

/* The bytes of VLOAD's accesses, to which rows must be aligned: 4 elements, 2 doubles, or (vload
 * = 2) 8 16-bit elements. */
static unsigned vload_bytes(const pm__problem *pr, int vload) {
  unsigned es = pm__problem_esize(pr);
  return es == 8 || vload == 2 ? 16 : 4 * es;
}

static const char *check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim) {
  (void)self;
  int threads = v[BX] * v[BY];
  if (threads < 32 || threads > lim->max_threads) return "threads per block out of range";
  if (v[TILE] == 0 && v[PAD] != 0) return "padding without a shared-memory tile";
  if (v[VLOAD] && (v[TILE] || v[OX] < 4 || (v[VLOAD] == 2 && v[OX] != 8)))
    return "row loads need tile=0 and ox=4 or 8 (vload=2: ox=8)";
  if (pr == NULL) return NULL;
  if (v[OX] == 8 && pm__problem_esize(pr) != 2) return "ox=8 is for 16-bit types";
  if (v[VLOAD] == 2 && pm__problem_esize(pr) != 2) return "vload=2 is for 16-bit types";
  unsigned vb = vload_bytes(pr, v[VLOAD]);
  if (v[VLOAD] && pr->rows > 1 &&
      (pr->caller_align ? pr->caller_align < vb
                        : v[ALIGN] == 0 && pr->cols * pm__problem_esize(pr) % vb != 0))
    return "rows are not aligned for vector loads";
  if (pr->radius < 1 || pr->radius > PM__MAX_RADIUS) return "radius out of range";
  size_t r2 = 2 * (size_t)pr->radius;
  size_t smem = (v[BY] * v[OY] + r2) * (v[BX] * v[OX] + r2 + v[PAD]) * wsize(pr);
  if (v[TILE] && smem > lim->max_smem) return "the tile needs more shared memory than a block has";
  if (tiles_of(v, pr) > 0x7fffffffull) return "more tiles than a grid may have";
  return NULL;
}

static int problem_defines(const pm__op *self, const pm__problem *pr, char out[][24]) {
  (void)self;
  snprintf(out[0], 24, "R=%d", pr->radius);
  snprintf(out[1], 24, "ZERO=%d", pr->variant == BORDER_ZERO);
  return 2;
}


/* What `pmtune tune` and `pmtune bench` run where no size is given. */
static const pm__problem tune_sizes[] = {
    {.rows = 1024, .cols = 1024, .radius = 1}, {.rows = 2048, .cols = 2048, .radius = 1},
    {.rows = 4096, .cols = 4096, .radius = 1}, {.rows = 8192, .cols = 8192, .radius = 1},
    {.rows = 8192, .cols = 8192, .radius = 2}, {.rows = 8192, .cols = 8192, .radius = 3},
    {.rows = 1024, .cols = 1024, .radius = 1, .variant = BORDER_ZERO},
    {.rows = 1024, .cols = 1024, .radius = 2, .variant = BORDER_ZERO},
    {.rows = 1024, .cols = 1024, .radius = 3, .variant = BORDER_ZERO},
    {.rows = 2048, .cols = 2048, .radius = 1, .variant = BORDER_ZERO},
    {.rows = 2048, .cols = 2048, .radius = 2, .variant = BORDER_ZERO},
    {.rows = 2048, .cols = 2048, .radius = 3, .variant = BORDER_ZERO},
    {.rows = 4096, .cols = 4096, .radius = 1, .variant = BORDER_ZERO},
    {.rows = 4096, .cols = 4096, .radius = 2, .variant = BORDER_ZERO},
    {.rows = 4096, .cols = 4096, .radius = 3, .variant = BORDER_ZERO},
    {.rows = 1024, .cols = 1024, .radius = 1, .dtype = PM_BF16},
    {.rows = 8192, .cols = 8192, .radius = 1, .dtype = PM_BF16},
    {.rows = 2048, .cols = 2048, .radius = 3, .variant = BORDER_ZERO, .dtype = PM_BF16}};
static const pm__problem bench_sizes[] = {{.rows = 8192, .cols = 8192, .radius = 1},
                                          {.rows = 8192, .cols = 8192, .radius = 2},
                                          {.rows = 8192, .cols = 8192, .radius = 3}};

static double bytes(const pm__op *self, const pm__problem *pr) {
  (void)self;
  return 2.0 * pm__problem_esize(pr) * pr->rows * pr->cols;
}

static size_t layout(const pm__op *self, const int *v) { (void)self; return (size_t)v[ALIGN]; }

/* The reference, in the order every variant uses: mask rows top to bottom, each left to right,
 * fused multiply-adds from 0 in float (double for f64), the sum rounded once to the type. So
 * every variant must match it bit for bit. Worked in tiles of REF_TY x REF_TX outputs: the
 * tile's inputs with their border read once into a window of the sums' type, then REF_VX
 * outputs of a row at a time, tap by tap, with no test (on x86-64 with FMA, in vector
 * registers): 5 to 23 times as fast as reading each tap's input through its border test and
 * type (r=1 to 3, on the two cores of the build machine), the same bits. Rows come in ranges
 * from pm__parallel_for. */
typedef struct ref_args {
  int dtype;
  const void *in;
  const void *w; /* floats, or doubles for f64 */
  void *out;
  unsigned rows, cols;
  int r, zero_border;
  /* the sums of a row's outputs: rows_float and rows_double, or their FMA copies (below) */
  void (*row_f)(const float *, size_t, const float *, int, unsigned, float *);
  void (*row_d)(const double *, size_t, const double *, int, unsigned, double *);
} ref_args;

enum { REF_TY = 8, REF_TX = 256, REF_VX = 8, REF_WY = REF_TY + 2 * PM__MAX_RADIUS,
       REF_WX = REF_TX + 2 * PM__MAX_RADIUS };

/* Input (iy, ix) as the sums' type: 0 outside the image with a zero border, else clamped. */
static double input(const ref_args *a, long iy, long ix) {
  long rows = (long)a->rows, cols = (long)a->cols;
  if (a->zero_border && (ix < 0 || ix >= cols || iy < 0 || iy >= rows)) return 0.0;
  size_t i = (size_t)(iy < 0 ? 0 : iy >= rows ? rows - 1 : iy) * (size_t)cols +
             (size_t)(ix < 0 ? 0 : ix >= cols ? cols - 1 : ix);
  return pm__elem_value(a->dtype, (const char *)a->in + i * pm_dtype_size((pm_dtype)a->dtype));
}

/* The sums of m <= REF_VX outputs side by side in a row of a window: acc[v] is the output whose
 * window begins at win[v] (rows `stride` apart); the taps in the reference's order. */
#define REF_TAPS(T, FMA)                                                                          \
  static inline __attribute__((always_inline)) void taps_##T(const T *restrict win,               \
                                                              size_t stride, const T *restrict w, \
                                                              int k, unsigned m,                  \
                                                              T *restrict acc) {                  \
    T s[REF_VX] = {0};                                                                            \
    if (m == REF_VX) {                                                                            \
      for (int fy = 0; fy < k; fy++)                                                              \
        for (int fx = 0; fx < k; fx++) {                                                          \
          const T wt = w[fy * k + fx], *in = win + (size_t)fy * stride + fx;                      \
          for (unsigned v = 0; v < REF_VX; v++) s[v] = FMA(wt, in[v], s[v]);                      \
        }                                                                                         \
    } else {                                                                                      \
      for (int fy = 0; fy < k; fy++)                                                              \
        for (int fx = 0; fx < k; fx++) {                                                          \
          const T wt = w[fy * k + fx], *in = win + (size_t)fy * stride + fx;                      \
          for (unsigned v = 0; v < m; v++) s[v] = FMA(wt, in[v], s[v]);                           \
        }                                                                                         \
    }                                                                                             \
    memcpy(acc, s, sizeof s);                                                                     \
  }
REF_TAPS(float, fmaf)
REF_TAPS(double, fma)

static void rows_float(const float *win, size_t stride, const float *w, int k, unsigned m,
                       float *acc) {
  taps_float(win, stride, w, k, m, acc);
}
static void rows_double(const double *win, size_t stride, const double *w, int k, unsigned m,
                        double *acc) {
  taps_double(win, stride, w, k, m, acc);
}
#if defined(__x86_64__) && defined(__GNUC__)
/* The same code where the CPU has FMA (almost every x86-64 since 2013): fmaf becomes one
 * instruction, and the REF_VX sums one vector, rather than a call to libm per tap. */
__attribute__((target("fma"))) static void rows_float_fma(const float *win, size_t stride,
                                                         const float *w, int k, unsigned m,
                                                         float *acc) {
  taps_float(win, stride, w, k, m, acc);
}
__attribute__((target("fma"))) static void rows_double_fma(const double *win, size_t stride,
                                                          const double *w, int k, unsigned m,
                                                          double *acc) {
  taps_double(win, stride, w, k, m, acc);
}
#endif

/* The outputs of rows [y0, y1) and columns [x0, x1) (at most REF_TY x REF_TX). */
static void reference_tile(const ref_args *a, unsigned y0, unsigned y1, unsigned x0, unsigned x1) {
  union { /* 29 KB of stack at most */
    float f[REF_WY][REF_WX];
    double d[REF_WY][REF_WX];
  } win;
  int r = a->r, k = 2 * r + 1, f64 = a->dtype == PM_F64;
  unsigned wy = y1 - y0 + 2 * (unsigned)r, wx = x1 - x0 + 2 * (unsigned)r;
  /* the window: of each row, the image's columns [ia, ib) converted as a run, the rest (the
   * border, and a row outside the image with a zero border) by input() */
  long left = (long)x0 - r, ia = left < 0 ? -left : 0, ib = (long)a->cols - left;
  ib = ib < (long)wx ? ib : (long)wx;
  size_t es = pm_dtype_size((pm_dtype)a->dtype);
  for (unsigned j = 0; j < wy; j++) {
    long iy = (long)y0 + (long)j - r, rows = (long)a->rows;
    long ry = iy < 0 ? 0 : iy >= rows ? rows - 1 : iy, to = a->zero_border && ry != iy ? ia : ib;
    for (long i = 0; i < (long)wx; i++) {
      if (i >= ia && i < to) continue; /* the run, below */
      double v = input(a, iy, left + i);
      if (f64)
        win.d[j][i] = v;
      else
        win.f[j][i] = (float)v; /* exact: every element of the other types is a float */
    }
    const void *src = (const char *)a->in + ((size_t)ry * a->cols + (size_t)(left + ia)) * es;
    const unsigned short *h = src;
    for (long t = 0; t < to - ia; t++) switch (a->dtype) {
      case PM_F16: win.f[j][ia + t] = pm__f16_to_f32(h[t]); break;
      case PM_BF16: win.f[j][ia + t] = pm__bf16_to_f32(h[t]); break;
      case PM_F64: win.d[j][ia + t] = ((const double *)src)[t]; break;
      default: win.f[j][ia + t] = ((const float *)src)[t];
      }
  }
  for (unsigned y = y0; y < y1; y++)
    for (unsigned x = x0; x < x1; x += REF_VX) {
      unsigned m = x1 - x < REF_VX ? x1 - x : REF_VX;
      size_t o = (size_t)y * a->cols + x;
      float acc[REF_VX];
      double accd[REF_VX];
      if (f64)
        a->row_d(&win.d[y - y0][x - x0], REF_WX, a->w, k, m, accd);
      else
        a->row_f(&win.f[y - y0][x - x0], REF_WX, a->w, k, m, acc);
      for (unsigned v = 0; v < m; v++) switch (a->dtype) {
        case PM_F16: ((unsigned short *)a->out)[o + v] = pm__f32_to_f16(acc[v]); break;
        case PM_BF16: ((unsigned short *)a->out)[o + v] = pm__f32_to_bf16(acc[v]); break;
        case PM_F64: ((double *)a->out)[o + v] = accd[v]; break;
        default: ((float *)a->out)[o + v] = acc[v];
        }
    }
}

static void reference_rows(void *arg, size_t y0, size_t y1) {
  const ref_args *a = arg;
  for (size_t y = y0; y < y1; y += REF_TY)
    for (unsigned x = 0; x < a->cols; x += REF_TX)
      reference_tile(a, (unsigned)y, (unsigned)(y + REF_TY < y1 ? y + REF_TY : y1), x,
                     x + REF_TX < a->cols ? x + REF_TX : a->cols);
}

void pm__filter_reference(int dtype, const void *in, const void *w, void *out, unsigned rows,
                          unsigned cols, int r, int zero_border) {
  ref_args ra = {dtype, in, w, out, rows, cols, r, zero_border, rows_float, rows_double};
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("fma")) ra.row_f = rows_float_fma, ra.row_d = rows_double_fma;
#endif
  pm__parallel_for(rows, reference_rows, &ra);
}

/* The point most winners on an H100 share or sit next to (ox=4 with 16-byte row loads, oy=4; the
 * between-sizes study of 2026-11-23 on an H100, as bench/results/README.md lists it: the old
 * default, ox=2 oy=4 without them, ran 1.14x and 1.24-1.27x the winners at radius 2 and 3);
 * 16-byte loads only where the rows allow them. */
static void fallback(const pm__op *self, const pm__problem *pr, int *v) {
  (void)self;
  v[BX] = 32, v[BY] = 4, v[TILE] = 0, v[PAD] = 0, v[OX] = 4, v[OY] = 4, v[ALIGN] = 256;
  v[VLOAD] = pr->caller_align == 0 || pr->caller_align >= vload_bytes(pr, 1) || pr->rows <= 1;
}

static int prepare(const pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                   pm__data *d) {
  (void)self;
  int rc = PM_OK;
  size_t n = (size_t)pr->rows * pr->cols, es = pm__problem_esize(pr);
  int k = 2 * pr->radius + 1;
  if (pr->radius < 1 || pr->radius > PM__MAX_RADIUS)
    return pm__seterr(c, PM_EINVAL, "filter radius %d: pmtune supports 1 to %d", pr->radius,
                      PM__MAX_RADIUS);
  d->pr = *pr;
  d->lines = pr->rows;
  d->inner = pr->cols;
  if ((d->host_in[0] = pm__random_fill_typed(pr->dtype, n, seed)) == NULL ||
      (d->host_ref = pm__malloc(n * es)) == NULL)
    return pm__seterr(c, PM_ENOMEM, "filter %ux%u: out of host memory", pr->rows, pr->cols);
  uint64_t wseed = seed ^ 0x5bd1e995u;
  if (pr->dtype != PM_F64) {
    pm__random_fill(d->filter.weights.f32, (size_t)(k * k), wseed);
  } else {
    double *w = pm__random_fill_typed(PM_F64, (size_t)(k * k), wseed);
    if (w == NULL) return pm__seterr(c, PM_ENOMEM, "filter: out of host memory");
    memcpy(d->filter.weights.f64, w, sizeof(double) * (size_t)(k * k));
    free(w);
  }
  pm__filter_reference(pr->dtype, d->host_in[0], &d->filter.weights, d->host_ref, pr->rows,
                       pr->cols, pr->radius, pr->variant == BORDER_ZERO);
  PM__CUDA(c, cudaMalloc(&d->dev_ref, n * es));
  PM__CUDA(c, pm__tune_copy(d->dev_ref, d->host_ref, n * es, cudaMemcpyHostToDevice));
fail:
  return rc;
}

static int launch(const pm__op *self, pm_ctx *c, const pm__module *k, const int *v, pm__data *d,
                  cudaStream_t s) {
  (void)self;
  unsigned long long tiles = tiles_of(v, &d->pr);
  dim3 grid = {(unsigned)tiles, 1, 1}, block = {(unsigned)v[BX], (unsigned)v[BY], 1};
  int rows = (int)d->pr.rows, cols = (int)d->pr.cols;
  void *args[] = {&d->out, &d->out_pitch, &d->in[0], &d->in_pitch[0], &rows, &cols,
                  &d->filter.weights};
  return pm__module_launch(c, k, 0, grid, block, 0, s, args);
}

static int verify(const pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err) {
  (void)self;
  (void)v;
  return pm__verify_2d(c, d, d->lines, d->inner, 0, err);
}

const pm__op pm__op_filter = {
    .name = "filter",
    .summary = "2D correlation with a (2r+1)^2 mask, clamp-to-edge or zero borders",
    .api = PM_OP_FILTER,
    .entries = {"pm_filter"},
    .dims = 2,
    .dtypes = PM__DTYPES_ALL,
    .variants = {"border=clamp", "border=zero", NULL},
    .variant_names = {"clamp", "zero", NULL},
    .radius_min = 1,
    .radius_max = PM__MAX_RADIUS,
    .tune_sizes = tune_sizes,
    .ntune_sizes = sizeof tune_sizes / sizeof *tune_sizes,
    .bench_sizes = bench_sizes,
    .nbench_sizes = sizeof bench_sizes / sizeof *bench_sizes,
    .nentries = 1,
    .nparams = NPARAMS,
    .params = params,
    .seed = {[BX] = 16, [BY] = 16, [TILE] = 0, [PAD] = 0, [OX] = 1, [OY] = 1, [VLOAD] = 0,
             [ALIGN] = 0},
    .check = check,
    .problem_defines = problem_defines,
    .bytes = bytes,
    .layout = layout,
    .fallback = fallback,
    .prepare = prepare,
    .launch = launch,
    .verify = verify,
};

/* test_gpu_nan.c: NaN and infinite inputs through every call (pm_matadd packed and pitched, pm_add,
 * pm_reduce_sum, pm_filter with both borders) at odd sizes, the specials at the corners, the edges
 * and inside: each output is what IEEE arithmetic on the inputs gives (matadd, add and filter the
 * host's own float arithmetic, in the kernels' order, bit for bit, any NaN for a NaN; the sum NaN,
 * +Inf or -Inf as its inputs make it), and every output is written (poisoned with a finite value
 * before). bench/sanitize/run.sh runs it under compute-sanitizer memcheck. Skips without a GPU. */
#include <math.h>
#include <stdio.h>

#include "dbtest.h"
#include "testutil.h"

static pm_ctx *ctx;
static char dir[64], path[128];

static void setup(void) {
  pm_test_require_gpu();
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/pmtune.db", dir);
  pm_options o = {.db_path = path}; /* nothing tuned: the defaults, compiled here, serve */
  cr_assert_eq(pm_open(&ctx, &o), PM_OK, "%s", pm_errmsg(ctx));
}

static void teardown(void) {
  pm_close(ctx);
  dbtest_cleanup(dir);
}

TestSuite(gpu_nan, .init = setup, .fini = teardown, .timeout = 300);

#define POISON 12345.0f /* finite: an output left unwritten shows as a wrong value */

/* n random finite values in [-1, 1], then the specials of `kind` at the first and last element,
 * at `stride` apart and at a few random places: 0 NaN, 1 +Inf, 2 +Inf and -Inf, 3 all three. */
static void fill(float *x, size_t n, int kind, size_t stride, uint64_t *s) {
  static const float specials[4][3] = {{NAN, NAN, NAN},
                                       {INFINITY, INFINITY, INFINITY},
                                       {INFINITY, -INFINITY, INFINITY},
                                       {NAN, INFINITY, -INFINITY}};
  for (size_t i = 0; i < n; i++) x[i] = (float)((double)(pm_test_rand(s) >> 11) / 0x1p52 - 1.0);
  size_t at[8] = {0, n - 1, stride % n, (n - stride % n) % n};
  for (int k = 4; k < 8; k++) at[k] = pm_test_rand(s) % n;
  for (int k = 0; k < 8; k++) x[at[k]] = specials[kind][k % 3];
}

/* Whether got is want: the same bits, or both NaN. */
static int same(float got, float want) {
  return (isnan(got) && isnan(want)) || memcmp(&got, &want, sizeof got) == 0;
}

static void *dev_copy(const float *host, size_t n) {
  void *d = NULL;
  CUDA_OK(cudaMalloc(&d, n * sizeof(float) + 16));
  if (host != NULL) CUDA_OK(cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

/* Elementwise sums: pm_add over n, and pm_matadd over rows x cols in either order, packed
 * (pitch = the line) and padded. */
Test(gpu_nan, adds_give_ieee_sums_of_nan_and_inf) {
  uint64_t s = pm_test_seed();
  const struct {
    size_t rows, cols;
  } sizes[] = {{1, 1000003}, {257, 333}, {1000, 77}};
  for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
    for (int kind = 0; kind < 4; kind++)
      for (int how = 0; how < 4; how++) { /* add; matadd packed; matadd padded row; padded col */
        size_t rows = sizes[z].rows, cols = sizes[z].cols, n = rows * cols;
        if (rows == 1 && how >= 2) continue; /* a vector: padding it would only waste memory */
        int col = how == 3;
        size_t line = (col ? rows : cols), lines = col ? cols : rows;
        size_t pitch = how >= 2 ? (line * 4 + 511) / 512 * 512 : line * 4, span = pitch / 4 * lines;
        float *a = calloc(span, 4), *b = calloc(span, 4), *c = malloc(span * 4);
        cr_assert(a && b && c);
        fill(a, span, kind, line, &s);
        fill(b, span, (kind + 1) % 4, line + 1, &s);
        float *da = dev_copy(a, span), *db = dev_copy(b, span), *dc = dev_copy(NULL, span);
        for (size_t i = 0; i < span; i++) c[i] = POISON;
        CUDA_OK(cudaMemcpy(dc, c, span * 4, cudaMemcpyHostToDevice));
        int rc = how == 0 ? pm_add(ctx, n, dc, da, db, NULL)
                          : pm_matadd(ctx, rows, cols, col ? PM_COL_MAJOR : PM_ROW_MAJOR, dc,
                                      pitch, da, pitch, db, pitch, NULL);
        cr_assert_eq(rc, PM_OK, "%s", pm_errmsg(ctx));
        CUDA_OK(cudaMemcpy(c, dc, span * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0, first = 0;
        for (size_t l = 0; l < lines; l++)
          for (size_t i = 0; i < line; i++) {
            size_t k = l * (pitch / 4) + i;
            if (!same(c[k], a[k] + b[k]) && bad++ == 0) first = k;
          }
        cr_assert_eq(bad, 0, "%s %zux%zu kind %d: %zu wrong, first at %zu: %g + %g gave %g",
                     how == 0 ? "add" : "matadd", rows, cols, kind, bad, first, a[first],
                     b[first], c[first]);
        cudaFree(da), cudaFree(db), cudaFree(dc);
        free(a), free(b), free(c);
      }
}

/* The sum is NaN where any input is, or where both infinities are; else the infinity there is. */
Test(gpu_nan, reduce_gives_the_ieee_class_of_the_sum) {
  uint64_t s = pm_test_seed();
  static const size_t sizes[] = {1, 4097, 1000003, 33554467};
  for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
    for (int kind = 0; kind < 4; kind++) {
      size_t n = sizes[z];
      float *x = malloc(n * 4), sum = POISON;
      cr_assert_not_null(x);
      fill(x, n, kind, 1 + n / 3, &s);
      int nan = 0, pos = 0, neg = 0;
      for (size_t i = 0; i < n; i++)
        nan |= isnan(x[i]), pos |= x[i] == INFINITY, neg |= x[i] == -INFINITY;
      float *dx = dev_copy(x, n), *ds = dev_copy(&sum, 1);
      cr_assert_eq(pm_reduce_sum(ctx, n, dx, ds, NULL), PM_OK, "%s", pm_errmsg(ctx));
      CUDA_OK(cudaMemcpy(&sum, ds, 4, cudaMemcpyDeviceToHost));
      if (nan || (pos && neg)) cr_assert(isnan(sum), "n=%zu kind %d: %g, not NaN", n, kind, sum);
      else cr_assert(sum == (pos ? INFINITY : -INFINITY), "n=%zu kind %d: %g", n, kind, sum);
      cudaFree(dx), cudaFree(ds);
      free(x);
    }
}

/* The correlation of in (rows x cols, row pitch `pitch` floats) with w, as the kernels compute
 * it (tuner/op_filter.c's reference: fmaf over the window, row by row). */
static float filter_at(const float *in, size_t pitch, unsigned rows, unsigned cols, const float *w,
                       int r, int zero, unsigned y, unsigned x) {
  int k = 2 * r + 1;
  float acc = 0.0f;
  for (int fy = 0; fy < k; fy++) {
    long iy = (long)y + fy - r;
    for (int fx = 0; fx < k; fx++) {
      long ix = (long)x + fx - r;
      float v;
      if (zero && (ix < 0 || ix >= (long)cols || iy < 0 || iy >= (long)rows)) {
        v = 0.0f;
      } else {
        long cy = iy < 0 ? 0 : iy >= (long)rows ? (long)rows - 1 : iy;
        long cx = ix < 0 ? 0 : ix >= (long)cols ? (long)cols - 1 : ix;
        v = in[(size_t)cy * pitch + (size_t)cx];
      }
      acc = fmaf(w[fy * k + fx], v, acc);
    }
  }
  return acc;
}

/* NaN and infinities spread over their window, into the borders where clamped, and no further. */
Test(gpu_nan, filter_spreads_nan_and_inf_as_its_arithmetic_does) {
  uint64_t s = pm_test_seed();
  const struct {
    unsigned rows, cols;
  } sizes[] = {{61, 37}, {300, 513}};
  for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
    for (int r = 1; r <= PM__MAX_RADIUS; r++)
      for (int zero = 0; zero <= 1; zero++)
        for (int kind = 0; kind < 4; kind++) {
          unsigned rows = sizes[z].rows, cols = sizes[z].cols;
          size_t pitch = (cols * 4 + 255) / 256 * 256 / 4, span = pitch * rows;
          float w[(2 * PM__MAX_RADIUS + 1) * (2 * PM__MAX_RADIUS + 1)];
          float *in = calloc(span, 4), *out = malloc(span * 4);
          cr_assert(in && out);
          fill(in, span, kind, pitch * (rows / 2) + cols / 2, &s);
          for (int i = 0; i < (2 * r + 1) * (2 * r + 1); i++)
            w[i] = 0.1f + (float)(pm_test_rand(&s) % 900) / 1000.0f; /* positive: signs kept */
          float *din = dev_copy(in, span), *dout = dev_copy(NULL, span);
          for (size_t i = 0; i < span; i++) out[i] = POISON;
          CUDA_OK(cudaMemcpy(dout, out, span * 4, cudaMemcpyHostToDevice));
          cr_assert_eq(pm_filter(ctx, rows, cols, dout, pitch * 4, din, pitch * 4, w, r,
                                 zero ? PM_BORDER_ZERO : PM_BORDER_CLAMP, NULL),
                       PM_OK, "%s", pm_errmsg(ctx));
          CUDA_OK(cudaMemcpy(out, dout, span * 4, cudaMemcpyDeviceToHost));
          size_t bad = 0, nonfinite = 0;
          unsigned fy = 0, fx = 0;
          for (unsigned y = 0; y < rows; y++)
            for (unsigned x = 0; x < cols; x++) {
              float want = filter_at(in, pitch, rows, cols, w, r, zero, y, x);
              nonfinite += !isfinite(want);
              if (!same(out[(size_t)y * pitch + x], want) && bad++ == 0) fy = y, fx = x;
            }
          cr_assert_eq(bad, 0, "%ux%u r=%d %s kind %d: %zu wrong, first (%u, %u): %g, want %g",
                       rows, cols, r, zero ? "zero" : "clamp", kind, bad, fy, fx,
                       out[(size_t)fy * pitch + fx],
                       filter_at(in, pitch, rows, cols, w, r, zero, fy, fx));
          cr_assert_gt(nonfinite, 0, "the specials reached no output");
          cudaFree(din), cudaFree(dout);
          free(in), free(out);
        }
}

/* test_reference.c: the tuner's CPU references against their definitions, written here the plain
 * way: filter's (tuner/op_filter.c, worked in tiles and vectors) must equal, bit for bit, each
 * output's window summed tap by tap, at sizes that cut its tiles every way. No GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

/* The definition: out(y, x) = sum over the window, rows top to bottom and each left to right,
 * of w * in(y + fy - r, x + fx - r), fused multiply-adds from 0 in float (double for f64),
 * rounded once to the type; outside the image 0 (zero border) or the nearest element. */
static double plain_at(int dtype, const void *in, const void *w, unsigned rows, unsigned cols,
                       int r, int zero, unsigned y, unsigned x) {
  int k = 2 * r + 1;
  float acc = 0.0f;
  double accd = 0.0;
  for (int fy = 0; fy < k; fy++)
    for (int fx = 0; fx < k; fx++) {
      long iy = (long)y + fy - r, ix = (long)x + fx - r;
      double v = 0.0;
      if (!zero || (iy >= 0 && iy < (long)rows && ix >= 0 && ix < (long)cols)) {
        iy = iy < 0 ? 0 : iy >= (long)rows ? (long)rows - 1 : iy;
        ix = ix < 0 ? 0 : ix >= (long)cols ? (long)cols - 1 : ix;
        v = pm__elem_value(dtype, (const char *)in + ((size_t)iy * cols + (size_t)ix) *
                                                        pm_dtype_size((pm_dtype)dtype));
      }
      if (dtype == PM_F64)
        accd = fma(((const double *)w)[fy * k + fx], v, accd);
      else
        acc = fmaf(((const float *)w)[fy * k + fx], (float)v, acc);
    }
  switch (dtype) { /* rounded to the type, as a double to compare */
  case PM_F16: return pm__f16_to_f32(pm__f32_to_f16(acc));
  case PM_BF16: return pm__bf16_to_f32(pm__f32_to_bf16(acc));
  case PM_F64: return accd;
  default: return acc;
  }
}

Test(reference, filter_is_its_definition_bit_for_bit) {
  /* one element; single rows and columns; smaller than the radius; across the tiles of 8 rows
   * and 256 columns and their 8-wide runs, with remainders of each */
  const unsigned sizes[][2] = {{1, 1}, {1, 1000}, {700, 1}, {2, 3}, {9, 257}, {37, 1001},
                               {17, 263}, {64, 512}};
  int checked = 0;
  for (int dtype = 0; dtype < 4; dtype++)
    for (int r = 1; r <= PM__MAX_RADIUS; r++)
      for (int zero = 0; zero < 2; zero++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
          unsigned rows = sizes[s][0], cols = sizes[s][1];
          size_t n = (size_t)rows * cols, es = pm_dtype_size((pm_dtype)dtype);
          uint64_t seed = 1 + (uint64_t)(dtype * 100 + r * 10 + zero) * 31 + s;
          void *in = pm__random_fill_typed(dtype, n, seed);
          void *w = pm__random_fill_typed(dtype == PM_F64 ? PM_F64 : PM_F32, 49, seed + 7);
          void *out = malloc(n * es);
          cr_assert(in != NULL && w != NULL && out != NULL);
          memset(out, 0xff, n * es); /* NaN (or a huge value) where nothing is written */
          pm__filter_reference(dtype, in, w, out, rows, cols, r, zero);
          for (unsigned y = 0; y < rows; y++)
            for (unsigned x = 0; x < cols; x++) {
              double want = plain_at(dtype, in, w, rows, cols, r, zero, y, x);
              double got = pm__elem_value(dtype, (const char *)out + ((size_t)y * cols + x) * es);
              cr_assert(memcmp(&got, &want, sizeof got) == 0,
                        "%s r=%d %s %ux%u at (%u, %u): %a, want %a", pm_dtype_name((pm_dtype)dtype),
                        r, zero ? "zero" : "clamp", rows, cols, y, x, got, want);
            }
          checked++;
          free(in), free(w), free(out);
        }
  cr_assert_eq(checked, 4 * PM__MAX_RADIUS * 2 * 8);
}

/* example.c: how to use pmtune from C, to copy: allocate with the layout tuning chose, call the
 * three operations, check the results on the host. Build: cc example.c -lpmtune (with the CUDA
 * runtime); run after `pmtune tune`, or without it (built-in defaults, pm_notice says so). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "pmtune.h"

#define CHECK_PM(call)                                                               \
  do {                                                                               \
    int rc_ = (call);                                                                \
    if (rc_ != PM_OK) {                                                              \
      fprintf(stderr, "%s: %s: %s\n", #call, pm_errname(rc_), pm_errmsg(ctx));       \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

#define CHECK_CUDA(call)                                                             \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                    \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int main(void) {
  enum { ROWS = 1000, COLS = 1001, R = 1 };
  pm_ctx *ctx = NULL;
  pm_options opts = {0}; /* device 0, the default database */
  CHECK_PM(pm_open(&ctx, &opts));

  /* matrices laid out as the tuned matadd wants them */
  float *a, *b, *c;
  size_t pitch, padding;
  CHECK_PM(pm_malloc_2d(ctx, PM_OP_MATADD, ROWS, COLS, &a, &pitch, &padding));
  CHECK_PM(pm_malloc_2d(ctx, PM_OP_MATADD, ROWS, COLS, &b, &pitch, NULL));
  CHECK_PM(pm_malloc_2d(ctx, PM_OP_MATADD, ROWS, COLS, &c, &pitch, NULL));
  printf("pitch %zu bytes for rows of %d bytes: %zu bytes of padding per matrix\n", pitch,
         COLS * 4, padding);

  float *ha = malloc(sizeof(float) * ROWS * COLS), *hb = malloc(sizeof(float) * ROWS * COLS);
  float *hc = malloc(sizeof(float) * ROWS * COLS);
  if (!ha || !hb || !hc) return 1;
  for (int i = 0; i < ROWS * COLS; i++) ha[i] = (float)rand() / RAND_MAX - 0.5f, hb[i] = (float)i / (ROWS * COLS);
  size_t w = COLS * sizeof(float);
  CHECK_CUDA(cudaMemcpy2D(a, pitch, ha, w, w, ROWS, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy2D(b, pitch, hb, w, w, ROWS, cudaMemcpyHostToDevice));

  /* c = a + b */
  CHECK_PM(pm_matadd(ctx, ROWS, COLS, PM_ROW_MAJOR, c, pitch, a, pitch, b, pitch, NULL));
  CHECK_CUDA(cudaMemcpy2D(hc, w, c, pitch, w, ROWS, cudaMemcpyDeviceToHost));
  for (int i = 0; i < ROWS * COLS; i++)
    if (hc[i] != ha[i] + hb[i]) return fprintf(stderr, "matadd: wrong at %d\n", i), 1;
  printf("matadd: %d x %d right\n", ROWS, COLS);

  /* the sum of a's elements (a's rows are contiguous lines: sum each, for the example) */
  float *sum, hsum;
  CHECK_CUDA(cudaMalloc((void **)&sum, sizeof *sum));
  CHECK_PM(pm_reduce_sum(ctx, COLS, a, sum, NULL));
  CHECK_CUDA(cudaMemcpy(&hsum, sum, sizeof hsum, cudaMemcpyDeviceToHost));
  double want = 0, abs_sum = 0;
  for (int i = 0; i < COLS; i++) want += ha[i], abs_sum += fabs(ha[i]);
  if (fabs(hsum - want) > 1e-5 * abs_sum) return fprintf(stderr, "reduce: %g, want %g\n", hsum, want), 1;
  printf("reduce: sum of row 0 = %g (exact %g)\n", hsum, want);

  /* c = a correlated with a 3x3 box blur, borders clamped to the edge */
  float box[9];
  for (int i = 0; i < 9; i++) box[i] = 1.0f / 9;
  CHECK_PM(pm_filter(ctx, ROWS, COLS, c, pitch, a, pitch, box, R, PM_BORDER_CLAMP, NULL));
  CHECK_CUDA(cudaMemcpy2D(hc, w, c, pitch, w, ROWS, cudaMemcpyDeviceToHost));
  for (int y = 0; y < ROWS; y++)
    for (int x = 0; x < COLS; x++) {
      float acc = 0;
      for (int fy = -R; fy <= R; fy++)
        for (int fx = -R; fx <= R; fx++) {
          int yy = y + fy < 0 ? 0 : y + fy >= ROWS ? ROWS - 1 : y + fy;
          int xx = x + fx < 0 ? 0 : x + fx >= COLS ? COLS - 1 : x + fx;
          acc = fmaf(box[(fy + R) * 3 + fx + R], ha[yy * COLS + xx], acc);
        }
      if (hc[y * COLS + x] != acc) return fprintf(stderr, "filter: wrong at (%d, %d)\n", y, x), 1;
    }
  printf("filter: %d x %d right\n", ROWS, COLS);

  if (pm_notice(ctx) != NULL) printf("note: %s\n", pm_notice(ctx));
  pm_free(ctx, a), pm_free(ctx, b), pm_free(ctx, c);
  cudaFree(sum);
  free(ha), free(hb), free(hc);
  pm_close(ctx);
  return 0;
}

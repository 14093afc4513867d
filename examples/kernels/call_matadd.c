/* call_matadd.c: the tutorial's last step (examples/kernels/README.md): a program that calls the
 * matadd example, a kernel of one's own, through pmtune: the configuration tuned for its size (or
 * the nearest tuned size's, or the seed), checked on the host. Build: cc call_matadd.c -lpmtune
 * (with the CUDA runtime); run: ./call_matadd path/to/matadd.json [ROWS COLS]. */
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

int main(int argc, char **argv) {
  if (argc != 2 && argc != 4) {
    fprintf(stderr, "usage: %s DESCRIPTION.json [ROWS COLS]\n", argv[0]);
    return 2;
  }
  size_t rows = argc == 4 ? strtoul(argv[2], NULL, 10) : 4097;
  size_t cols = argc == 4 ? strtoul(argv[3], NULL, 10) : 3001, n = rows * cols;
  pm_ctx *ctx = NULL;
  pm_options opts = {0}; /* device 0, the default database */
  CHECK_PM(pm_open(&ctx, &opts));
  pm_kernel *k = NULL;
  CHECK_PM(pm_kernel_open(ctx, argv[1], &k));

  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  float *da, *db, *dc;
  if (a == NULL || b == NULL || c == NULL) return 1;
  for (size_t i = 0; i < n; i++) a[i] = (float)(i % 1000), b[i] = 0.5f * (float)(i % 77);
  CHECK_CUDA(cudaMalloc((void **)&da, n * sizeof *da));
  CHECK_CUDA(cudaMalloc((void **)&db, n * sizeof *db));
  CHECK_CUDA(cudaMalloc((void **)&dc, n * sizeof *dc));
  CHECK_CUDA(cudaMemcpy(da, a, n * sizeof *a, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b, n * sizeof *b, cudaMemcpyHostToDevice));

  /* the dims as the description's "dims" say, the buffers in the order of its "args" */
  size_t dims[2] = {rows, cols};
  void *buffers[3] = {dc, da, db};
  CHECK_PM(pm_kernel_launch(k, dims, buffers, NULL));
  CHECK_CUDA(cudaMemcpy(c, dc, n * sizeof *c, cudaMemcpyDeviceToHost));

  size_t wrong = 0;
  for (size_t i = 0; i < n; i++) wrong += c[i] != a[i] + b[i];
  printf("%zu x %zu: %zu of %zu elements wrong%s%s\n", rows, cols, wrong, n,
         pm_notice(ctx) ? "; " : "", pm_notice(ctx) ? pm_notice(ctx) : "");
  cudaFree(da), cudaFree(db), cudaFree(dc);
  free(a), free(b), free(c);
  pm_close(ctx); /* frees the kernel's handle too */
  return wrong != 0;
}

/* bench_kernel_call.c: what a call of a kernel of one's own (pm_kernel_launch) costs on the host,
 * against the built-in call of the same work (pm_add over the same packed floats) and a bare
 * launch of the kernel the call chose, in one run: one size called over and over; then SIZES
 * distinct sizes, each called once (the slow path: deciding, and evaluating the description's
 * launch expressions), then all of them again (warm). Host time per call, taken around the calls
 * (the queue drained between batches, not counted). Prints one JSON object.
 * Usage: pmtune_bench_kernel_call DESCRIPTION.json [DB]   (the matadd example: C = A + B) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define CALLS 4000
#define SIZES 2000
#define BATCH 128
#define MAXN (1u << 20)

static void die(pm_ctx *c, const char *what) {
  fprintf(stderr, "pmtune_bench_kernel_call: %s: %s\n", what, c != NULL ? pm_errmsg(c) : "");
  exit(1);
}

#define CUDA(call)                                                                               \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess)                                                                       \
      fprintf(stderr, "pmtune_bench_kernel_call: %s: %s\n", #call, cudaGetErrorString(e_)), exit(1); \
  } while (0)

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *us, size_t n) {
  qsort(us, n, sizeof *us, cmp);
  return us[n / 2];
}

static float *A, *B, *C;
static pm_kernel *K;

/* One call of rows x 1024 floats: `how` 0 pm_kernel_launch, 1 pm_add, 2 the bare launch of the
 * entry the kernel call cached. Returns host microseconds. */
static double once(pm_ctx *c, size_t rows, int how) {
  size_t dims[2] = {rows, 1024};
  void *bufs[3] = {C, A, B};
  double t0 = pm__now_ms();
  int rc = PM_OK;
  if (how == 0) rc = pm_kernel_launch(K, dims, bufs, NULL);
  else if (how == 1) rc = pm_add(c, rows * 1024, C, A, B, NULL);
  else {
    pm__problem pr = {.rows = (unsigned)rows, .cols = 1024};
    pm__cache_key k;
    pm__cache_key_of(K->op, &pr, &k);
    k.user = K->id;
    pm__entry *e = pm__cache_lookup(&c->serve->cache, &k);
    if (e == NULL) die(c, "bare: the size is not cached");
    pm__data d;
    d.pr = pr, d.nbufs = 3;
    d.described.bufs[0].dev = C, d.described.bufs[1].dev = A, d.described.bufs[2].dev = B;
    d.described.scalars = NULL; /* the description's */
    t0 = pm__now_ms();
    rc = K->op->launch(K->op, c, e->choice->kernel, e->choice->v, &d, NULL);
  }
  double us = (pm__now_ms() - t0) * 1e3;
  if (rc != PM_OK) die(c, how == 0 ? "pm_kernel_launch" : how == 1 ? "pm_add" : "bare launch");
  return us;
}

/* Calls `how` over rows[0..n) (each size once, in order), timing each; the median. */
static double many(pm_ctx *c, const size_t *rows, size_t n, int how, double *us) {
  for (size_t i = 0; i < n; i++) {
    if (i % BATCH == 0) CUDA(cudaDeviceSynchronize());
    us[i] = once(c, rows[i], how);
  }
  CUDA(cudaDeviceSynchronize());
  return median(us, n);
}

int main(int argc, char **argv) {
  if (argc < 2) die(NULL, "usage: pmtune_bench_kernel_call DESCRIPTION.json [DB]");
  pm_options o = {.db_path = argc > 2 ? argv[2] : NULL};
  pm_ctx *c = NULL;
  if (pm_open(&c, &o) != PM_OK) die(c, "pm_open");
  if (pm_kernel_open(c, argv[1], &K) != PM_OK) die(c, "pm_kernel_open");
  CUDA(cudaMalloc((void **)&A, (size_t)MAXN * 1024 / 256 * 4));
  CUDA(cudaMalloc((void **)&B, (size_t)MAXN * 1024 / 256 * 4));
  CUDA(cudaMalloc((void **)&C, (size_t)MAXN * 1024 / 256 * 4));
  static size_t one[CALLS], sizes[SIZES];
  static double us[CALLS > SIZES ? CALLS : SIZES];
  for (int i = 0; i < CALLS; i++) one[i] = 64;
  for (int i = 0; i < SIZES; i++) sizes[i] = 1 + (size_t)i * 2; /* distinct: 1 to 3999 rows */
  double t0 = pm__now_ms();
  once(c, 64, 0);
  double first_kernel_ms = pm__now_ms() - t0;
  t0 = pm__now_ms();
  once(c, 64, 1);
  double first_builtin_ms = pm__now_ms() - t0;
  CUDA(cudaDeviceSynchronize());
  double kernel_one = many(c, one, CALLS, 0, us), builtin_one = many(c, one, CALLS, 1, us),
         bare_one = many(c, one, CALLS, 2, us);
  double kernel_new = many(c, sizes, SIZES, 0, us), builtin_new = many(c, sizes, SIZES, 1, us);
  double kernel_warm = many(c, sizes, SIZES, 0, us), builtin_warm = many(c, sizes, SIZES, 1, us),
         bare_warm = many(c, sizes, SIZES, 2, us);
  printf("{\"gpu\":\"%s\",\"kernel\":\"%s\",\"calls\":%d,\"sizes\":%d,"
         "\"first_call_ms\":{\"kernel\":%.3f,\"builtin\":%.3f},"
         "\"one_size_us\":{\"kernel\":%.3f,\"builtin\":%.3f,\"bare\":%.3f},"
         "\"new_sizes_us\":{\"kernel\":%.3f,\"builtin\":%.3f},"
         "\"warm_sizes_us\":{\"kernel\":%.3f,\"builtin\":%.3f,\"bare\":%.3f}}\n",
         c->dev.name, K->op->name, CALLS, SIZES, first_kernel_ms, first_builtin_ms, kernel_one,
         builtin_one, bare_one, kernel_new, builtin_new, kernel_warm, builtin_warm, bare_warm);
  CUDA(cudaFree(A));
  CUDA(cudaFree(B));
  CUDA(cudaFree(C));
  pm_close(c);
  return 0;
}

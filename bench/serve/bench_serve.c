/* bench_serve.c: what serving costs on the host: the first call in a fresh process (database
 * lookup, cubin load, no NVRTC when the database is warm), a steady-state call against a bare
 * cudaLaunchKernel of the same kernel, and reductions at SIZES sizes never seen before, then the
 * same sizes again (host time per call: median and mean). Prints one JSON object.
 * Usage: pmtune_bench_serve [DB] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define CALLS 2000
#define SIZES 3000 /* first-seen sizes of reduce, n from 1000 to 65536 */

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  enum { ROWS = 64, COLS = 64 };
  pm_options o = {.db_path = argc > 1 ? argv[1] : NULL};
  pm_ctx *c = NULL;
  double t0 = pm__now_ms();
  if (pm_open(&c, &o) != PM_OK) return fprintf(stderr, "pm_open: %s\n", pm_errmsg(c)), 1;
  double open_ms = pm__now_ms() - t0;
  float *a, *b, *d;
  size_t pitch = COLS * 4 + 256; /* padded: packed matrices would be served as add (pmtune.h) */
  if (cudaMalloc((void **)&a, pitch * ROWS) || cudaMalloc((void **)&b, pitch * ROWS) ||
      cudaMalloc((void **)&d, pitch * ROWS))
    return fprintf(stderr, "cudaMalloc failed\n"), 1;
  cudaDeviceSynchronize();

  t0 = pm__now_ms();
  int rc = pm_matadd(c, ROWS, COLS, PM_ROW_MAJOR, d, pitch, a, pitch, b, pitch, NULL);
  double first_ms = pm__now_ms() - t0;
  if (rc != PM_OK) return fprintf(stderr, "pm_matadd: %s\n", pm_errmsg(c)), 1;
  cudaDeviceSynchronize();

  /* the same kernel, launched bare: what pmtune chose */
  pm__problem pr = {.rows = ROWS, .cols = COLS, .caller_align = 16};
  pm__decision dec;
  pm__serve_decide(c, &pm__op_matadd, &pr, &dec);
  const pm__template *t = pm__template_find("matadd");
  char defs[PM__MAX_DEFINES][24];
  const char *dp[PM__MAX_DEFINES];
  int nd = pm__config_defines(&pm__op_matadd, dec.v, &pr, defs);
  for (int i = 0; i < nd; i++) dp[i] = defs[i];
  pm__cubin bin;
  pm__kernel k;
  if (pm__compile(c, t->file, t->source, c->dev.arch, dp, (size_t)nd, &bin) != PM_OK ||
      pm__kernel_load(c, &bin, pm__op_matadd.entries, 1, &k) != PM_OK)
    return fprintf(stderr, "%s\n", pm_errmsg(c)), 1;
  pm__data data;
  memset(&data, 0, sizeof data);
  data.pr = pr, data.out = d, data.out_pitch = pitch, data.in[0] = a, data.in[1] = b;
  data.in_pitch[0] = data.in_pitch[1] = pitch;

  double served[16], bare[16];
  for (int rep = 0; rep < 16; rep++) { /* interleaved batches; each batch fits the launch queue */
    cudaDeviceSynchronize();
    t0 = pm__now_ms();
    for (int i = 0; i < CALLS / 4; i++)
      pm_matadd(c, ROWS, COLS, PM_ROW_MAJOR, d, pitch, a, pitch, b, pitch, NULL);
    served[rep] = (pm__now_ms() - t0) * 1e3 / (CALLS / 4);
    cudaDeviceSynchronize();
    t0 = pm__now_ms();
    for (int i = 0; i < CALLS / 4; i++) pm__op_matadd.launch(c, &k, dec.v, &data, NULL);
    bare[rep] = (pm__now_ms() - t0) * 1e3 / (CALLS / 4);
  }
  cudaDeviceSynchronize();

  /* reductions at sizes never seen: each call's host time, then the same sizes again */
  float *x, *sum;
  static double first_seen[SIZES], again[SIZES];
  double mean[2] = {0, 0};
  if (cudaMalloc((void **)&x, 65536 * 4) || cudaMalloc((void **)&sum, 4))
    return fprintf(stderr, "cudaMalloc failed\n"), 1;
  uint64_t seed = 12345;
  unsigned sizes[SIZES];
  for (int i = 0; i < SIZES; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    sizes[i] = 1000 + (unsigned)(seed % 64537);
  }
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < SIZES; i++) {
      if (i % 256 == 0) cudaDeviceSynchronize(); /* keep the launch queue from filling */
      t0 = pm__now_ms();
      rc = pm_reduce_sum(c, sizes[i], x, sum, NULL);
      double us = (pm__now_ms() - t0) * 1e3;
      if (rc != PM_OK) return fprintf(stderr, "pm_reduce_sum: %s\n", pm_errmsg(c)), 1;
      (pass ? again : first_seen)[i] = us;
      mean[pass] += us / SIZES;
    }
  cudaDeviceSynchronize();
  qsort(first_seen, SIZES, sizeof *first_seen, cmp);
  qsort(again, SIZES, sizeof *again, cmp);
  qsort(served, 16, sizeof *served, cmp);
  qsort(bare, 16, sizeof *bare, cmp);
  printf("{\"gpu\":\"%s\",\"pm_open_ms\":%.3f,\"first_call_ms\":%.3f,\"first_call_source\":\"%s\","
         "\"steady_call_us\":%.3f,\"bare_launch_us\":%.3f,\"overhead_us\":%.3f,"
         "\"reduce_first_seen_sizes\":%d,\"first_seen_median_us\":%.3f,\"first_seen_mean_us\":%.3f,"
         "\"again_median_us\":%.3f,\"again_mean_us\":%.3f}\n",
         c->dev.name, open_ms, first_ms, pm__source_name(dec.source), served[8], bare[8],
         served[8] - bare[8], SIZES, first_seen[SIZES / 2], mean[0], again[SIZES / 2], mean[1]);
  pm__kernel_unload(&k);
  pm__cubin_free(&bin);
  pm_close(c);
  return 0;
}

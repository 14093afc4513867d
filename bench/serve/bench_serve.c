/* bench_serve.c: what serving costs on the host, each case against a bare launch of the same
 * kernel in the same run: one size called over and over; reductions at SIZES distinct random sizes
 * never seen before, then the same sizes again (warm); THREADS threads calling warm sizes on one
 * context, against one thread; the first call of a process, and the first call that needs a
 * configuration's cubin from the database. Host time per call, taken around each call (queue
 * drained between batches and not counted). Prints one JSON object.
 * Usage: pmtune_bench_serve [DB] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define CALLS 2000
#define SIZES 20000  /* distinct reduce sizes, n from NMIN to NMIN + NSPAN - 1 */
#define NMIN 1000
#define NSPAN 262144
#define XMAX (1u << 28) /* floats of x: the largest n tried */
#define BATCH 128    /* calls between two waits for the GPU: the launch queue never fills */
#define THREADS 8
#define PER_THREAD 20000

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct stats {
  double median, mean, p99;
} stats;

/* Sorts us[0..n) and sums it up. */
static stats stats_of(double *us, size_t n) {
  stats s = {0, 0, 0};
  for (size_t i = 0; i < n; i++) s.mean += us[i] / (double)n;
  qsort(us, n, sizeof *us, cmp);
  s.median = us[n / 2], s.p99 = us[n * 99 / 100];
  return s;
}

static void die(pm_ctx *c, const char *what) {
  fprintf(stderr, "pmtune_bench_serve: %s: %s\n", what, c != NULL ? pm_errmsg(c) : "");
  exit(1);
}

#define CUDA(call)                                                                        \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess)                                                                \
      fprintf(stderr, "pmtune_bench_serve: %s: %s\n", #call, cudaGetErrorString(e_)), exit(1); \
  } while (0)

/* The reduce inputs every case shares. */
static float *x, *sum;
static unsigned sizes[SIZES];

/* One reduce call: through pmtune (bare 0), or a bare launch of the entry pmtune cached for the
 * size (bare 1: its kernel and scratch, the launch pmtune itself makes). Returns host us. */
static double reduce_once(pm_ctx *c, unsigned n, cudaStream_t s, int bare) {
  if (!bare) {
    double t0 = pm__now_ms();
    int rc = pm_reduce_sum(c, n, x, sum, s);
    double us = (pm__now_ms() - t0) * 1e3;
    if (rc != PM_OK) die(c, "pm_reduce_sum");
    return us;
  }
  pm__problem pr = {.n = n, .caller_align = 16};
  pm__cache_key k;
  pm__cache_key_of(&pm__op_reduce, &pr, &k);
  pm__entry *e = pm__cache_lookup(&c->serve->cache, &k);
  pm__data d;
  memset(&d, 0, sizeof d);
  d.pr = pr, d.in[0] = x, d.out = sum;
  if (e == NULL || (d.work = pm__scratch_find(&c->serve->scratch, s, e->work)) == NULL)
    die(c, "bare launch: the size is not cached");
  double t0 = pm__now_ms();
  int rc = pm__op_reduce.launch(&pm__op_reduce, c, e->choice->kernel, e->choice->v, &d, s);
  double us = (pm__now_ms() - t0) * 1e3;
  if (rc != PM_OK) die(c, "bare launch");
  return us;
}

/* Calls reduce at sizes[first + i * step] for i < count into us[], waiting for the stream every
 * BATCH calls (not counted). */
static void reduce_many(pm_ctx *c, cudaStream_t s, int bare, size_t first, size_t step,
                        size_t count, double *us) {
  for (size_t i = 0; i < count; i++) {
    if (i % BATCH == 0) CUDA(cudaStreamSynchronize(s));
    us[i] = reduce_once(c, sizes[(first + i * step) % SIZES], s, bare);
  }
  CUDA(cudaStreamSynchronize(s));
}

/* The hot path's parts, each timed over SIZES calls in one loop (us a call): the cache lookup at
 * the warm sizes, the stream's scratch (two questions to the driver and a table), those two
 * questions alone, and the device check every launch makes. Says where a warm call's time over a
 * bare launch goes. */
static void parts(pm_ctx *c, double out[4]) {
  pm__problem pr = {.caller_align = 16};
  pm__cache_key k;
  uintptr_t sink = 0;
  double t0 = pm__now_ms();
  for (int i = 0; i < SIZES; i++) {
    pr.n = sizes[i];
    pm__cache_key_of(&pm__op_reduce, &pr, &k);
    sink += (uintptr_t)pm__cache_lookup(&c->serve->cache, &k);
  }
  out[0] = (pm__now_ms() - t0) * 1e3 / SIZES;
  t0 = pm__now_ms();
  for (int i = 0; i < SIZES; i++) sink += (uintptr_t)pm__scratch_find(&c->serve->scratch, NULL, 64);
  out[1] = (pm__now_ms() - t0) * 1e3 / SIZES;
  t0 = pm__now_ms();
  for (int i = 0; i < SIZES; i++) {
    int capturing;
    unsigned long long id;
    sink += (uintptr_t)pm__stream_state(NULL, &capturing, &id) + id;
  }
  out[2] = (pm__now_ms() - t0) * 1e3 / SIZES;
  t0 = pm__now_ms();
  for (int i = 0; i < SIZES; i++) {
    int prev;
    sink += (uintptr_t)pm__device_enter(c, &prev);
    pm__device_leave(prev);
  }
  out[3] = (pm__now_ms() - t0) * 1e3 / SIZES;
  if (sink == 1) puts(""); /* keeps the loops */
}

typedef struct worker {
  pm_ctx *c;
  int id, bare;
  pthread_barrier_t *go;
  double *us;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  reduce_once(w->c, sizes[w->id], s, 0); /* the stream's scratch, before the clock */
  CUDA(cudaStreamSynchronize(s));
  pthread_barrier_wait(w->go);
  reduce_many(w->c, s, w->bare, (size_t)w->id * 7919, 7, PER_THREAD, w->us);
  CUDA(cudaStreamDestroy(s));
  return NULL;
}

/* `threads` threads each calling PER_THREAD warm sizes on a stream of its own at once (through
 * pmtune or bare); the per-call host time over all calls. */
static stats threaded(pm_ctx *c, int threads, int bare) {
  static double us[THREADS * PER_THREAD];
  pthread_t th[THREADS];
  worker w[THREADS];
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, (unsigned)threads);
  for (int i = 0; i < threads; i++) {
    w[i] = (worker){c, i, bare, &go, us + (size_t)i * PER_THREAD};
    if (pthread_create(&th[i], NULL, work, &w[i]) != 0) die(NULL, "pthread_create");
  }
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&go);
  return stats_of(us, (size_t)threads * PER_THREAD);
}

int main(int argc, char **argv) {
  enum { ROWS = 64, COLS = 64 };
  pm_options o = {.db_path = argc > 1 ? argv[1] : NULL};
  pm_ctx *c = NULL;
  double t0 = pm__now_ms();
  if (pm_open(&c, &o) != PM_OK) die(c, "pm_open");
  double open_ms = pm__now_ms() - t0;
  float *a, *b, *d;
  size_t pitch = COLS * 4 + 256; /* padded: packed matrices would be served as add (pmtune.h) */
  CUDA(cudaMalloc((void **)&a, pitch * ROWS));
  CUDA(cudaMalloc((void **)&b, pitch * ROWS));
  CUDA(cudaMalloc((void **)&d, pitch * ROWS));
  CUDA(cudaMalloc((void **)&x, (size_t)XMAX * 4));
  CUDA(cudaMemset(x, 0, (size_t)XMAX * 4));
  CUDA(cudaMalloc((void **)&sum, 4));
  CUDA(cudaDeviceSynchronize());

  /* the first call of the process: the database's snapshot of matadd, its cubin, loaded */
  t0 = pm__now_ms();
  if (pm_matadd(c, ROWS, COLS, PM_ROW_MAJOR, d, pitch, a, pitch, b, pitch, NULL) != PM_OK)
    die(c, "pm_matadd");
  double first_ms = pm__now_ms() - t0;
  CUDA(cudaDeviceSynchronize());
  pm__problem pr = {.rows = ROWS, .cols = COLS, .caller_align = 16};
  pm__decision dec;
  pm__serve_decide(c, &pm__op_matadd, &pr, &dec);

  /* one size over and over, against its kernel launched bare (interleaved batches) */
  pm__cache_key key;
  pm__cache_key_of(&pm__op_matadd, &pr, &key);
  pm__entry *e = pm__cache_lookup(&c->serve->cache, &key);
  if (e == NULL) die(c, "matadd is not cached");
  pm__data data;
  memset(&data, 0, sizeof data);
  data.pr = pr, data.out = d, data.out_pitch = pitch, data.in[0] = a, data.in[1] = b;
  data.in_pitch[0] = data.in_pitch[1] = pitch;
  double served[16], bare[16];
  for (int rep = 0; rep < 16; rep++) {
    CUDA(cudaDeviceSynchronize());
    t0 = pm__now_ms();
    for (int i = 0; i < CALLS / 4; i++)
      pm_matadd(c, ROWS, COLS, PM_ROW_MAJOR, d, pitch, a, pitch, b, pitch, NULL);
    served[rep] = (pm__now_ms() - t0) * 1e3 / (CALLS / 4);
    CUDA(cudaDeviceSynchronize());
    t0 = pm__now_ms();
    for (int i = 0; i < CALLS / 4; i++)
      pm__op_matadd.launch(&pm__op_matadd, c, e->choice->kernel, e->choice->v, &data, NULL);
    bare[rep] = (pm__now_ms() - t0) * 1e3 / (CALLS / 4);
  }
  stats one = stats_of(served, 16), one_bare = stats_of(bare, 16);

  /* the first reduce call (its snapshot and a cubin), then one that needs another cubin */
  uint64_t seed = 12345;
  for (int i = 0; i < SIZES; i++) { /* distinct: a random permutation's first SIZES */
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    sizes[i] = NMIN + (unsigned)(seed % NSPAN);
    for (int j = 0; j < i; j++)
      if (sizes[j] == sizes[i]) {
        i--;
        break;
      }
  }
  double first_reduce_us = reduce_once(c, sizes[0], NULL, 0), new_cubin_us = 0;
  unsigned other = 0; /* a size outside sizes[]' range whose choice is not made yet: its cubin */
  for (unsigned n = 64; n < XMAX && other == 0; n = n * 9 / 8 + 1) {
    pm__problem p = {.n = n, .caller_align = 16};
    pm__decision dn;
    if (n >= NMIN && n < NMIN + NSPAN) continue;
    pm__serve_decide(c, &pm__op_reduce, &p, &dn);
    pthread_mutex_lock(&c->serve->lock);
    const pm__choice *h = pm__cache_choice_find(&c->serve->cache, &pm__op_reduce, dn.v, &p);
    pthread_mutex_unlock(&c->serve->lock);
    if (h == NULL && dn.source != PM__FROM_DEFAULT) other = n;
  }
  if (other != 0) {
    CUDA(cudaDeviceSynchronize());
    new_cubin_us = reduce_once(c, other, NULL, 0);
  }

  /* SIZES sizes never seen, then again; then the same sizes launched bare */
  static double first_seen[SIZES], again[SIZES], again_bare[SIZES];
  reduce_many(c, NULL, 0, 0, 1, SIZES, first_seen);
  reduce_many(c, NULL, 0, 0, 1, SIZES, again);
  reduce_many(c, NULL, 1, 0, 1, SIZES, again_bare);
  stats fs = stats_of(first_seen, SIZES), ag = stats_of(again, SIZES),
        agb = stats_of(again_bare, SIZES);

  double part[4];
  parts(c, part);

  /* THREADS threads at once against one, through pmtune and bare */
  stats t1 = threaded(c, 1, 0), tn = threaded(c, THREADS, 0);
  stats t1b = threaded(c, 1, 1), tnb = threaded(c, THREADS, 1);

  printf("{\"gpu\":\"%s\",\"pm_open_ms\":%.3f,\"first_call_ms\":%.3f,\"first_call_source\":\"%s\","
         "\"one_size\":{\"served_us\":%.3f,\"bare_us\":%.3f,\"overhead_us\":%.3f},"
         "\"first_reduce_call_us\":%.1f,\"new_cubin_call_us\":%.1f,\"new_cubin_n\":%u,"
         "\"sizes\":%d,"
         "\"first_seen\":{\"median_us\":%.3f,\"mean_us\":%.3f,\"p99_us\":%.3f},"
         "\"again\":{\"median_us\":%.3f,\"mean_us\":%.3f,\"p99_us\":%.3f},"
         "\"again_bare\":{\"median_us\":%.3f,\"mean_us\":%.3f,\"p99_us\":%.3f},"
         "\"again_overhead_median_us\":%.3f,\"again_overhead_mean_us\":%.3f,"
         "\"threads\":%d,\"calls_per_thread\":%d,"
         "\"one_thread\":{\"median_us\":%.3f,\"mean_us\":%.3f},"
         "\"n_threads\":{\"median_us\":%.3f,\"mean_us\":%.3f},"
         "\"one_thread_bare\":{\"median_us\":%.3f,\"mean_us\":%.3f},"
         "\"n_threads_bare\":{\"median_us\":%.3f,\"mean_us\":%.3f},"
         "\"n_threads_over_one_mean\":%.3f,\"n_threads_over_one_mean_bare\":%.3f,"
         "\"parts_us\":{\"cache_lookup\":%.4f,\"scratch_find\":%.4f,\"stream_state\":%.4f,"
         "\"device_enter_leave\":%.4f}}\n",
         c->dev.name, open_ms, first_ms, pm__source_name(dec.source), one.median, one_bare.median,
         one.median - one_bare.median, first_reduce_us, new_cubin_us, other, SIZES, fs.median,
         fs.mean, fs.p99, ag.median, ag.mean, ag.p99, agb.median, agb.mean, agb.p99,
         ag.median - agb.median, ag.mean - agb.mean, THREADS, PER_THREAD, t1.median, t1.mean,
         tn.median, tn.mean, t1b.median, t1b.mean, tnb.median, tnb.mean, tn.mean / t1.mean,
         tnb.mean / t1b.mean, part[0], part[1], part[2], part[3]);
  pm_close(c);
  return 0;
}

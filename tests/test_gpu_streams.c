/* test_gpu_streams.c: the reduce's scratch (runtime/scratch.c) with many streams and with CUDA
 * graphs: 100 streams reducing at once from 10 threads; per-thread default streams; 10,000
 * streams made, called and destroyed (one at a time, and 50 alive at once) with bounded scratch
 * and nothing left after pm_close; a reduce captured (cold, in each capture mode) and replayed on
 * other streams while direct calls run on the stream it was captured from; a graph replayed after
 * its input changes, destroyed, and its scratch lent to the next capture. Sums are compared bit
 * for bit with the same reduction run alone, so that scratch shared by two launches at once (a
 * race) shows as a wrong or missing sum. Skips without a GPU. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "testutil.h"

static char path[64];

static void setup(void) {
  pm_test_require_gpu();
  snprintf(path, sizeof path, "/tmp/pmtune-test-streams-%d.db", (int)getpid());
  unlink(path);
}
static void teardown(void) { unlink(path); }
TestSuite(gpu_streams, .init = setup, .fini = teardown, .timeout = 900);

static pm_ctx *open_ctx(void) {
  pm_ctx *c = NULL;
  pm_options o = {.db_path = path};
  cr_assert_eq(pm_open(&c, &o), PM_OK, "%s", pm_errmsg(c));
  return c;
}

static size_t buffers(pm_ctx *c, size_t *in_graphs) {
  return pm__scratch_count(&c->serve->scratch, in_graphs);
}

/* A device vector of n random floats (seed), and the exact sum and sum of magnitudes of it. */
typedef struct vec {
  float *d;
  double exact, abs;
} vec;

static vec vec_make(unsigned n, uint64_t seed) {
  vec v = {0};
  float *h = malloc((size_t)n * sizeof *h);
  cr_assert_not_null(h);
  pm__random_fill(h, n, seed);
  for (unsigned i = 0; i < n; i++) v.exact += h[i], v.abs += fabs(h[i]);
  CUDA_OK(cudaMalloc((void **)&v.d, (size_t)n * sizeof *h));
  CUDA_OK(cudaMemcpy(v.d, h, (size_t)n * sizeof *h, cudaMemcpyHostToDevice));
  free(h);
  return v;
}

/* The sum of v by the library, alone on a stream of its own, checked against the exact sum
 * (within (n - 1) u sum|x|, which any order of float additions meets): the bits every other run
 * of the same size must give. */
static float reference(pm_ctx *c, unsigned n, const vec *v) {
  cudaStream_t s;
  float *out, got;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_OK(cudaMalloc((void **)&out, sizeof *out));
  cr_assert_eq(pm_reduce_sum(c, n, v->d, out, s), PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_OK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  cr_assert(fabs(got - v->exact) <= n * ldexp(1.0, -24) * v->abs, "n=%u: %.9g, want %.9g", n,
            got, v->exact);
  CUDA_OK(cudaFree(out));
  CUDA_OK(cudaStreamDestroy(s));
  return got;
}

/* count floats at d on the host. */
static float *fetch(const float *d, size_t count) {
  float *h = malloc(count * sizeof *h);
  cr_assert_not_null(h);
  CUDA_OK(cudaMemcpy(h, d, count * sizeof *h, cudaMemcpyDeviceToHost));
  return h;
}

/* count device floats set to NaN bits: a sum never written stays so. */
static float *poisoned(size_t count) {
  float *d;
  CUDA_OK(cudaMalloc((void **)&d, count * sizeof *d));
  CUDA_OK(cudaMemset(d, 0xff, count * sizeof *d));
  CUDA_OK(cudaDeviceSynchronize()); /* before work on a non-blocking stream, which would not wait */
  return d;
}

static int same(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* ---- 100 streams at once ------------------------------------------------------------------- */

#define STREAMS 100
#define THREADS 10
#define ROUNDS 20

typedef struct hundred {
  pm_ctx *c;
  unsigned n;
  vec *v;
  cudaStream_t *s;
  float *out; /* ROUNDS x STREAMS */
  int first;  /* this thread's streams: first, first + THREADS, ... */
  pthread_barrier_t *go;
  int failures;
} hundred;

static void *hundred_worker(void *arg) {
  hundred *h = arg;
  pthread_barrier_wait(h->go);
  for (int r = 0; r < ROUNDS; r++)
    for (int i = h->first; i < STREAMS; i += THREADS)
      if (pm_reduce_sum(h->c, h->n, h->v[i].d, &h->out[r * STREAMS + i], h->s[i]) != PM_OK)
        h->failures++;
  return NULL;
}

/* Each of 100 streams sums its own vector, 20 rounds without a synchronisation, from 10 threads:
 * each stream has a buffer of its own, and every sum has the bits of the same sum run alone. */
Test(gpu_streams, hundred_streams_at_once) {
  const unsigned n = (1u << 20) + 7;
  uint64_t seed = pm_test_seed();
  pm_ctx *c = open_ctx();
  vec v[STREAMS];
  float ref[STREAMS];
  cudaStream_t s[STREAMS];
  for (int i = 0; i < STREAMS; i++) {
    v[i] = vec_make(n, seed + (uint64_t)i);
    ref[i] = reference(c, n, &v[i]);
    CUDA_OK(cudaStreamCreateWithFlags(&s[i], i % 2 ? cudaStreamNonBlocking : cudaStreamDefault));
  }
  size_t before = buffers(c, NULL); /* the reference streams' (destroyed since) */
  float *out = poisoned((size_t)ROUNDS * STREAMS);
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, THREADS);
  hundred h[THREADS];
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) {
    h[t] = (hundred){.c = c, .n = n, .v = v, .s = s, .out = out, .first = t, .go = &go};
    cr_assert_eq(pthread_create(&th[t], NULL, hundred_worker, &h[t]), 0);
  }
  int failures = 0;
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL), failures += h[t].failures;
  pthread_barrier_destroy(&go);
  cr_assert_eq(failures, 0, "%d calls failed: %s", failures, pm_errmsg(c));
  CUDA_OK(cudaDeviceSynchronize());
  float *got = fetch(out, (size_t)ROUNDS * STREAMS);
  for (int r = 0; r < ROUNDS; r++)
    for (int i = 0; i < STREAMS; i++)
      cr_assert(same(got[r * STREAMS + i], ref[i]),
                "stream %d, round %d: %.9g, alone %.9g (seed %llu)", i, r, got[r * STREAMS + i],
                ref[i], (unsigned long long)seed);
  size_t now = buffers(c, NULL);
  cr_assert(now >= STREAMS && now <= before + STREAMS, "%zu buffers for %d streams (%zu before)",
            now, STREAMS, before);
  free(got);
  CUDA_OK(cudaFree(out));
  for (int i = 0; i < STREAMS; i++) {
    CUDA_OK(cudaStreamDestroy(s[i]));
    CUDA_OK(cudaFree(v[i].d));
  }
  pm_close(c);
}

/* ---- Per-thread default streams ------------------------------------------------------------ */

typedef struct per_thread {
  pm_ctx *c;
  unsigned n;
  const vec *v;
  float *out; /* ROUNDS */
  pthread_barrier_t *go;
  int failures;
} per_thread;

static void *per_thread_worker(void *arg) {
  per_thread *p = arg;
  pthread_barrier_wait(p->go);
  for (int r = 0; r < ROUNDS; r++)
    if (pm_reduce_sum(p->c, p->n, p->v->d, &p->out[r], cudaStreamPerThread) != PM_OK) p->failures++;
  if (cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess) p->failures++;
  return NULL;
}

/* cudaStreamPerThread is one handle for a different stream on each thread: each thread's stream
 * has a buffer of its own. */
Test(gpu_streams, per_thread_default_streams) {
  const unsigned n = (1u << 21) + 5;
  uint64_t seed = pm_test_seed();
  pm_ctx *c = open_ctx();
  vec v[THREADS];
  float ref[THREADS];
  for (int t = 0; t < THREADS; t++) {
    v[t] = vec_make(n, seed + (uint64_t)t);
    ref[t] = reference(c, n, &v[t]);
  }
  size_t before = buffers(c, NULL);
  float *out = poisoned((size_t)THREADS * ROUNDS);
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, THREADS);
  per_thread p[THREADS];
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) {
    p[t] = (per_thread){.c = c, .n = n, .v = &v[t], .out = out + t * ROUNDS, .go = &go};
    cr_assert_eq(pthread_create(&th[t], NULL, per_thread_worker, &p[t]), 0);
  }
  int failures = 0;
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL), failures += p[t].failures;
  pthread_barrier_destroy(&go);
  cr_assert_eq(failures, 0, "%d calls failed: %s", failures, pm_errmsg(c));
  CUDA_OK(cudaDeviceSynchronize());
  float *got = fetch(out, (size_t)THREADS * ROUNDS);
  for (int t = 0; t < THREADS; t++)
    for (int r = 0; r < ROUNDS; r++)
      cr_assert(same(got[t * ROUNDS + r], ref[t]), "thread %d, round %d: %.9g, alone %.9g", t, r,
                got[t * ROUNDS + r], ref[t]);
  cr_assert_eq(buffers(c, NULL), before + THREADS, "a buffer per thread's stream");
  free(got);
  CUDA_OK(cudaFree(out));
  for (int t = 0; t < THREADS; t++) CUDA_OK(cudaFree(v[t].d));
  pm_close(c);
}

/* ---- 10,000 streams ------------------------------------------------------------------------ */

#define MADE 10000
#define DATASETS 4

static int cmp_handle(const void *a, const void *b) {
  uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return (x > y) - (x < y);
}

/* Makes MADE streams, `batch` alive at a time: each sums one of DATASETS vectors into a slot of
 * its own and is destroyed without waiting for it, so that the reduction may still run when the
 * next stream, perhaps at the same handle, starts its own. Every sum right; after the churn (a
 * second later, and one more stream), at most LIVE_MAX + LIMBO_MAX buffers are held (scratch.c:
 * 256 streams with a buffer, 32 waiting to be freed), whatever handles the driver gave; the device
 * memory back after pm_close. */
static void churn(int batch) {
  const unsigned n = (1u << 24) + 3; /* ~25 us a sum on an H100: long enough to overlap */
  uint64_t seed = pm_test_seed();
  vec v[DATASETS];
  for (int d = 0; d < DATASETS; d++) v[d] = vec_make(n, seed + (uint64_t)d);
  float *out = poisoned(MADE);
  uintptr_t *handles = malloc(MADE * sizeof *handles);
  cr_assert_not_null(handles);
  size_t free0, free1, total;
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemGetInfo(&free0, &total));

  pm_ctx *c = open_ctx();
  float ref[DATASETS];
  for (int d = 0; d < DATASETS; d++) ref[d] = reference(c, n, &v[d]);
  size_t most = 0, most_early = 0;
  for (int i = 0; i < MADE; i += batch) {
    cudaStream_t s[64];
    for (int j = 0; j < batch && i + j < MADE; j++) {
      int k = i + j;
      CUDA_OK(cudaStreamCreateWithFlags(&s[j], k % 3 ? cudaStreamNonBlocking : cudaStreamDefault));
      handles[k] = (uintptr_t)s[j];
      cr_assert_eq(pm_reduce_sum(c, n, v[k % DATASETS].d, &out[k], s[j]), PM_OK,
                   "stream %d: %s", k, pm_errmsg(c));
    }
    size_t held = buffers(c, NULL);
    if (held > most) most = held;
    if (i < MADE / 2) most_early = most;
    for (int j = 0; j < batch && i + j < MADE; j++) CUDA_OK(cudaStreamDestroy(s[j]));
  }
  CUDA_OK(cudaDeviceSynchronize());
  float *got = fetch(out, MADE);
  for (int k = 0; k < MADE; k++)
    cr_assert(same(got[k], ref[k % DATASETS]), "stream %d (batches of %d): %.9g, alone %.9g "
              "(seed %llu)", k, batch, got[k], ref[k % DATASETS], (unsigned long long)seed);
  qsort(handles, MADE, sizeof *handles, cmp_handle);
  size_t distinct = 0;
  for (int k = 0; k < MADE; k++) distinct += k == 0 || handles[k] != handles[k - 1];
  cr_log_info("batches of %d: at most %zu buffers; %zu distinct handles among %d streams", batch,
              most, distinct, MADE);
  (void)most_early;
  nanosleep(&(struct timespec){1, 100000000}, NULL); /* past the grace of limbo */
  cudaStream_t last;
  CUDA_OK(cudaStreamCreateWithFlags(&last, cudaStreamNonBlocking));
  cr_assert_eq(pm_reduce_sum(c, n, v[0].d, &out[0], last), PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaStreamSynchronize(last));
  CUDA_OK(cudaStreamDestroy(last));
  size_t after = buffers(c, NULL);
  cr_log_info("batches of %d: %zu buffers held after the churn", batch, after);
  cr_assert(after <= 256 + 32 + 1, "batches of %d: %zu buffers held after 10,000 streams (at most "
            "%zu during); the driver gave %zu distinct handles", batch, after, most, distinct);
  pm_close(c);

  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemGetInfo(&free1, &total));
  cr_assert(free1 + (64u << 20) >= free0, "pm_close left %.1f MB of device memory in use",
            ((double)free0 - (double)free1) / (1 << 20));
  free(got);
  free(handles);
  CUDA_OK(cudaFree(out));
  for (int d = 0; d < DATASETS; d++) CUDA_OK(cudaFree(v[d].d));
}

Test(gpu_streams, ten_thousand_streams_one_after_another) { churn(1); }

Test(gpu_streams, ten_thousand_streams_fifty_at_a_time) { churn(50); }

/* ---- Graphs -------------------------------------------------------------------------------- */

#define REPLAYS 300

/* Graph buffers held now; waits (up to 10 s) for CUDA to run the destructors of graphs destroyed
 * just before, which it does on a thread of its own. */
static size_t lent_after_destroy(pm_ctx *c, size_t want) {
  size_t lent = 0;
  for (int i = 0; i < 10000; i++) {
    buffers(c, &lent);
    if (lent <= want) break;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  return lent;
}

/* Captures a sum of a (n) into out on s, in mode: the call and the capture succeed. */
static cudaGraphExec_t capture(pm_ctx *c, cudaStream_t s, enum cudaStreamCaptureMode mode,
                               unsigned n, const float *a, float *out, cudaGraph_t *g) {
  cudaGraphExec_t ge;
  CUDA_OK(cudaStreamBeginCapture(s, mode));
  int rc = pm_reduce_sum(c, n, a, out, s);
  cudaError_t end = cudaStreamEndCapture(s, g);
  cr_assert_eq(rc, PM_OK, "captured call (mode %d): %s", (int)mode, pm_errmsg(c));
  cr_assert(end == cudaSuccess, "capture (mode %d) invalidated: %s", (int)mode,
            cudaGetErrorString(end));
  CUDA_OK(cudaGraphInstantiate(&ge, *g, 0));
  return ge;
}

/* Two graphs captured from stream S (the first cold: a fresh context, S never called pmtune, a
 * size never seen), replayed on streams T and U while direct calls on S sum other data, all at
 * once, REPLAYS times: every sum right. Then the first graph's input changes and it is replayed;
 * both graphs are destroyed, their buffers come back, and a new capture is lent one of them. */
static void graphs_beside_direct_calls(enum cudaStreamCaptureMode mode) {
  const unsigned n = (1u << 22) + 17;
  uint64_t seed = pm_test_seed();
  vec a1 = vec_make(n, seed), a2 = vec_make(n, seed + 1), b = vec_make(n, seed + 2);
  vec changed = vec_make(n, seed + 3);
  float *g1out = poisoned(1), *g2out = poisoned(1);
  float *outs = poisoned(3 * REPLAYS); /* graph 1's, graph 2's, the direct calls' */
  cudaStream_t S, T, U;
  CUDA_OK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&T, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&U, cudaStreamNonBlocking));
  pm_ctx *c = open_ctx();
  size_t lent;

  cudaGraph_t g1, g2;
  cudaGraphExec_t ge1 = capture(c, S, mode, n, a1.d, g1out, &g1);
  cudaGraphExec_t ge2 = capture(c, S, mode, n, a2.d, g2out, &g2);
  buffers(c, &lent);
  cr_assert_eq(lent, 2, "each captured call has a buffer of its graph's (%zu lent)", lent);
  float r1 = reference(c, n, &a1), r2 = reference(c, n, &a2), rb = reference(c, n, &b);

  for (int i = 0; i < REPLAYS; i++) {
    CUDA_OK(cudaGraphLaunch(ge1, T));
    CUDA_OK(cudaMemcpyAsync(&outs[i], g1out, sizeof(float), cudaMemcpyDeviceToDevice, T));
    CUDA_OK(cudaGraphLaunch(ge2, U));
    CUDA_OK(cudaMemcpyAsync(&outs[REPLAYS + i], g2out, sizeof(float), cudaMemcpyDeviceToDevice, U));
    cr_assert_eq(pm_reduce_sum(c, n, b.d, &outs[2 * REPLAYS + i], S), PM_OK, "%s", pm_errmsg(c));
  }
  CUDA_OK(cudaDeviceSynchronize());
  float *got = fetch(outs, 3 * REPLAYS);
  for (int i = 0; i < REPLAYS; i++) {
    cr_assert(same(got[i], r1), "mode %d, replay %d of graph 1 on T: %.9g, alone %.9g (seed %llu)",
              (int)mode, i, got[i], r1, (unsigned long long)seed);
    cr_assert(same(got[REPLAYS + i], r2), "mode %d, replay %d of graph 2 on U: %.9g, alone %.9g",
              (int)mode, i, got[REPLAYS + i], r2);
    cr_assert(same(got[2 * REPLAYS + i], rb), "mode %d, direct call %d on S: %.9g, alone %.9g",
              (int)mode, i, got[2 * REPLAYS + i], rb);
  }
  free(got);

  /* the input changes under the graph: the replay sums the new data */
  float rc1 = reference(c, n, &changed);
  cr_assert(!same(rc1, r1), "the new data has another sum");
  /* on T: a copy on the legacy stream is not ordered before work on a non-blocking stream */
  CUDA_OK(cudaMemcpyAsync(a1.d, changed.d, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, T));
  CUDA_OK(cudaGraphLaunch(ge1, T));
  CUDA_OK(cudaStreamSynchronize(T));
  float *g = fetch(g1out, 1);
  cr_assert(same(*g, rc1), "mode %d: replayed on new input: %.9g, want %.9g", (int)mode, *g, rc1);
  free(g);

  /* destroyed, the graphs give their buffers back; the next capture is lent one */
  CUDA_OK(cudaGraphExecDestroy(ge1));
  CUDA_OK(cudaGraphDestroy(g1));
  CUDA_OK(cudaGraphExecDestroy(ge2));
  CUDA_OK(cudaGraphDestroy(g2));
  cr_assert_eq(lent_after_destroy(c, 0), 0, "mode %d: the destroyed graphs still hold buffers",
               (int)mode);
  size_t held = buffers(c, NULL);
  cudaGraph_t g3;
  CUDA_OK(cudaMemcpyAsync(a1.d, a2.d, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, T));
  cudaGraphExec_t ge3 = capture(c, S, mode, n, a1.d, g1out, &g3);
  cr_assert_eq(buffers(c, &lent), held, "mode %d: the new capture reuses a freed buffer",
               (int)mode);
  cr_assert_eq(lent, 1);
  CUDA_OK(cudaGraphLaunch(ge3, T));
  CUDA_OK(cudaStreamSynchronize(T));
  g = fetch(g1out, 1);
  cr_assert(same(*g, r2), "mode %d: the new graph: %.9g, want %.9g", (int)mode, *g, r2);
  free(g);
  CUDA_OK(cudaGraphExecDestroy(ge3));
  CUDA_OK(cudaGraphDestroy(g3));

  pm_close(c);
  CUDA_OK(cudaStreamDestroy(S));
  CUDA_OK(cudaStreamDestroy(T));
  CUDA_OK(cudaStreamDestroy(U));
  float *bufs[] = {a1.d, a2.d, b.d, changed.d, g1out, g2out, outs};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) CUDA_OK(cudaFree(bufs[i]));
}

Test(gpu_streams, graphs_beside_direct_calls_global) {
  graphs_beside_direct_calls(cudaStreamCaptureModeGlobal);
}

Test(gpu_streams, graphs_beside_direct_calls_thread_local) {
  graphs_beside_direct_calls(cudaStreamCaptureModeThreadLocal);
}

Test(gpu_streams, graphs_beside_direct_calls_relaxed) {
  graphs_beside_direct_calls(cudaStreamCaptureModeRelaxed);
}

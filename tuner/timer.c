/* timer.c: the timing protocol that the tuner, pmtune bench and the peer benchmarks share (see
 * timer.h): flush L2 by reading, hold the GPU until a sample is queued, K copies, median. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

struct pm__timer {
  void *flush; /* twice the L2's size, zeros, read by pm_flush */
  size_t flush_bytes;
  cudaEvent_t start[64], stop[64];
  int nevents;
  atomic_int gate[64];
};

static _Thread_local cudaStream_t tune_stream; /* 0 unless the thread set one */

cudaStream_t pm__tune_stream(void) { return tune_stream; }
void pm__tune_stream_set(cudaStream_t s) { tune_stream = s; }

/* Lets the GPU go past every gate. */
static void timer_open(pm__timer *t) {
  for (int i = 0; i < 64; i++) atomic_store(&t->gate[i], 1);
}

int pm__timer_new(pm_ctx *c, pm__timer **out) {
  int rc = PM_OK;
  pm__timer *t = *out = pm__calloc(1, sizeof *t);
  if (t == NULL) return pm__seterr(c, PM_ENOMEM, "timer: out of memory");
  t->flush_bytes = 2 * (size_t)(c->dev.l2_bytes > 0 ? c->dev.l2_bytes : 64 << 20);
  timer_open(t);
  if ((rc = pm__util_kernels(c)) != PM_OK) return rc;
  PM__CUDA(c, cudaMalloc(&t->flush, t->flush_bytes));
  PM__CUDA(c, cudaMemsetAsync(t->flush, 0, t->flush_bytes, tune_stream)); /* zeros: pm_flush */
  PM__CUDA(c, cudaStreamSynchronize(tune_stream));                          /* then writes nothing */
  for (; t->nevents < 64; t->nevents++) {
    PM__CUDA(c, cudaEventCreate(&t->start[t->nevents]));
    if (cudaEventCreate(&t->stop[t->nevents]) != cudaSuccess) {
      cudaEventDestroy(t->start[t->nevents]);
      rc = pm__seterr(c, PM_ECUDA, "cudaEventCreate failed");
      goto fail;
    }
  }
  return PM_OK;
fail:
  pm__timer_free(t);
  *out = NULL;
  return rc;
}

void pm__timer_free(pm__timer *t) {
  if (t == NULL) return;
  timer_open(t);
  cudaStreamSynchronize(tune_stream); /* no host function is left waiting on a gate */
  for (int i = 0; i < t->nevents; i++) {
    cudaEventDestroy(t->start[i]);
    cudaEventDestroy(t->stop[i]);
  }
  if (t->flush != NULL) cudaFree(t->flush);
  free(t);
}

int pm__timer_warm(pm_ctx *c, pm__timer *t, double ms) {
  int rc = PM_OK;
  float elapsed = 0;
  for (int round = 0; round < 1000 && elapsed < ms; round++) {
    PM__CUDA(c, cudaEventRecord(t->start[0], tune_stream));
    for (int i = 0; i < 8; i++)
      PM__CUDA(c, cudaMemsetAsync(t->flush, 0, t->flush_bytes, tune_stream));
    PM__CUDA(c, cudaEventRecord(t->stop[0], tune_stream));
    PM__CUDA(c, cudaEventSynchronize(t->stop[0]));
    float f;
    PM__CUDA(c, cudaEventElapsedTime(&f, t->start[0], t->stop[0]));
    elapsed += f;
  }
fail:
  return rc;
}

/* A host function in the stream: the GPU waits here until the host opens the gate. */
static void CUDART_CB wait_gate(void *arg) {
  atomic_int *g = arg;
  while (!atomic_load_explicit(g, memory_order_acquire)) {
  }
}

/* Starts sample i on the thread's tuning stream: flushes L2 (reading), then holds the GPU until timer_end(t, i),
 * so that the host queues the whole sample before the GPU starts on it (short runs would
 * otherwise time the host's launches), then records start[i]. */
static int timer_begin(pm_ctx *c, pm__timer *t, int i) {
  int rc = PM_OK;
  atomic_store(&t->gate[i], 0);
  /* evict every copy's data from L2, so that no run is timed on cached data: read (pm_flush),
   * not written, so that no dirty line is left for the timed run to write back */
  size_t words = t->flush_bytes / 16;
  float *sink = t->flush;
  void *args[] = {&t->flush, &words, &sink};
  dim3 grid = {(unsigned)(c->dev.sm_count * 4), 1, 1}, block = {512, 1, 1};
  if ((rc = pm__module_launch(c, pm__util_kernel(c), PM__UTIL_FLUSH, grid, block, 0, tune_stream,
                              args)) != PM_OK)
    goto fail;
  PM__CUDA(c, cudaLaunchHostFunc(tune_stream, wait_gate, &t->gate[i]));
  PM__CUDA(c, cudaEventRecord(t->start[i], tune_stream));
  return PM_OK;
fail:
  atomic_store(&t->gate[i], 1);
  return rc;
}

/* Records stop[i] and lets the GPU go on with sample i. */
static int timer_end(pm_ctx *c, pm__timer *t, int i) {
  cudaError_t e = cudaEventRecord(t->stop[i], tune_stream);
  atomic_store_explicit(&t->gate[i], 1, memory_order_release);
  return e == cudaSuccess ? PM_OK : pm__cuda_error(c, PM_ECUDA, e, "cudaEventRecord", __FILE__, __LINE__);
}

int pm__time_batches(pm_ctx *c, pm__timer *t, int samples, int copies,
                     int (*run)(pm_ctx *c, void *arg, int j), void *arg, double *ms) {
  int rc = PM_OK;
  if (samples < 1 || samples > t->nevents)
    return pm__seterr(c, PM_EINVAL, "timing: 1 to %d samples", t->nevents);
  if (copies < 1) copies = 1;
  for (int i = 0; i < samples; i++) {
    if ((rc = timer_begin(c, t, i)) != PM_OK) return rc;
    for (int j = 0; j < copies && rc == PM_OK; j++) rc = run(c, arg, j);
    if (rc != PM_OK) {
      timer_open(t);
      return rc;
    }
    if ((rc = timer_end(c, t, i)) != PM_OK) return rc;
  }
  PM__CUDA(c, cudaEventSynchronize(t->stop[samples - 1]));
  for (int i = 0; i < samples; i++) {
    float f;
    PM__CUDA(c, cudaEventElapsedTime(&f, t->start[i], t->stop[i]));
    ms[i] = f / copies;
  }
fail:
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double pm__median(double *ms, int n, double *q1, double *q3) {
  qsort(ms, (size_t)n, sizeof *ms, cmp_double);
  if (q1) *q1 = ms[n / 4];
  if (q3) *q3 = ms[(3 * n) / 4];
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}


int pm__copies_for(pm_ctx *c, double bytes) {
  double want = 2.0 * (c->dev.l2_bytes > 0 ? c->dev.l2_bytes : 64 << 20);
  double k = bytes > 0 ? ceil(want / bytes) : 32;
  return k < 1 ? 1 : k > 32 ? 32 : (int)k;
}

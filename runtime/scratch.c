/* scratch.c: the reduce's device scratch (partial sums and a counter that each launch leaves at
 * zero), one per stream so that calls on different streams never share it: found without a lock,
 * made and grown under the scratch's own lock. */
#include <stdlib.h>

#include "runtime.h"

#define MIN_BYTES 65536 /* the smallest scratch made: most reductions then never grow it */

struct pm__workspace {
  struct CUstream_st *stream;
  void *ptr;
  size_t bytes;
  struct pm__workspace *retired; /* the smaller one it replaced on the same stream, freed at close */
};

void pm__scratch_init(pm__scratch *s) { pthread_mutex_init(&s->lock, NULL); }

void *pm__scratch_find(pm__scratch *s, struct CUstream_st *stream, size_t bytes) {
  for (int i = 0; i < PM__SCRATCH_STREAMS; i++) {
    struct pm__workspace *w = atomic_load_explicit(&s->ws[i], memory_order_acquire);
    if (w == NULL) break; /* slots fill in order and never empty again */
    if (w->stream == stream && w->bytes >= bytes) return w->ptr;
  }
  return NULL;
}

/* The slot of stream's scratch, else the first free one; -1 where all hold other streams'. */
static int slot_of(pm__scratch *s, struct CUstream_st *stream) {
  for (int i = 0; i < PM__SCRATCH_STREAMS; i++) {
    struct pm__workspace *w = atomic_load_explicit(&s->ws[i], memory_order_relaxed);
    if (w == NULL || w->stream == stream) return i;
  }
  return -1;
}

/* A new scratch for stream, of at least `bytes` and twice the one it replaces (old, which it
 * keeps as retired), zeroed on pmtune's own stream before it is handed out: a memset queued on
 * the caller's stream would, during a capture, land in the graph and leave the scratch unzeroed
 * for calls made outside it. NULL, with the reason on c, where the device has no memory. */
static struct pm__workspace *make(pm_ctx *c, pm__scratch *s, struct CUstream_st *stream,
                                  size_t bytes, struct pm__workspace *old) {
  size_t want = bytes < MIN_BYTES ? MIN_BYTES : bytes;
  if (old != NULL && want < 2 * old->bytes) want = 2 * old->bytes;
  struct pm__workspace *w = calloc(1, sizeof *w);
  if (w == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory"), NULL;
  cudaError_t e = cudaSuccess;
  if (s->zeroing == NULL) e = cudaStreamCreateWithFlags(&s->zeroing, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaMalloc(&w->ptr, want);
  if (e == cudaSuccess) e = cudaMemsetAsync(w->ptr, 0, want, s->zeroing);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s->zeroing);
  if (e != cudaSuccess) {
    pm__cuda_error(c, PM_ECUDA, e, "reduce scratch", __FILE__, __LINE__);
    if (w->ptr != NULL) cudaFree(w->ptr);
    free(w);
    return NULL;
  }
  w->stream = stream, w->bytes = want, w->retired = old;
  return w;
}

void *pm__scratch_get(pm_ctx *c, pm__scratch *s, struct CUstream_st *stream, size_t bytes) {
  void *ptr = pm__scratch_find(s, stream, bytes);
  if (ptr != NULL) return ptr;
  pthread_mutex_lock(&s->lock);
  int i = slot_of(s, stream);
  struct pm__workspace *old = i >= 0 ? atomic_load_explicit(&s->ws[i], memory_order_relaxed) : NULL;
  if (i < 0) {
    pm__seterr(c, PM_EUNSUPPORTED, "more than %d streams call reduce on one context",
               PM__SCRATCH_STREAMS);
  } else if (old != NULL && old->bytes >= bytes) { /* another thread grew it meanwhile */
    ptr = old->ptr;
  } else {
    struct pm__workspace *w = make(c, s, stream, bytes, old);
    if (w != NULL) atomic_store_explicit(&s->ws[i], w, memory_order_release), ptr = w->ptr;
  }
  pthread_mutex_unlock(&s->lock);
  return ptr;
}

void pm__scratch_free(pm__scratch *s) {
  for (int i = 0; i < PM__SCRATCH_STREAMS; i++)
    for (struct pm__workspace *w = atomic_load(&s->ws[i]), *next; w != NULL; w = next) {
      next = w->retired;
      cudaFree(w->ptr);
      free(w);
    }
  if (s->zeroing != NULL) cudaStreamDestroy(s->zeroing);
  pthread_mutex_destroy(&s->lock);
}

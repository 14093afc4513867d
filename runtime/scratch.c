/* scratch.c: the reduce's device scratch (partial sums and a counter that each launch leaves at
 * zero): a buffer per stream for calls made directly, found without a lock in a table that grows,
 * and a buffer per captured call for calls captured into a CUDA graph, held by the graph. The
 * design, and what each part of it relies on, is written out below: change it only with a reason.
 *
 * ---- What must hold ---------------------------------------------------------------------------
 *
 * A reduce launch uses its scratch from its first block to its last, so two launches that may run
 * at the same time must never share one. Launches on one stream never touch memory at the same
 * time (with programmatic dependent launch a kernel's blocks may start early, but wait for the
 * kernel before to end before they touch memory: templates/pm_common.cuh), so one buffer per
 * stream serves every direct call on it. A captured launch runs wherever and whenever its graph is
 * launched (on another stream, beside direct calls on the stream it was captured from, beside
 * another graph captured from that stream): it gets a buffer of its own.
 *
 * ---- Direct calls: one buffer per stream --------------------------------------------------------
 *
 * The hot path (pm__scratch_find) asks two cheap questions of the driver (pm__stream_state, the
 * driver's own entry points), the stream's capture status (a capturing stream gets NULL, so that
 * its call takes the slow path to a buffer of the graph's) and the stream's id, then looks it up
 * in an open-addressing table without a lock. It allocates nothing.
 *
 * Why the id. A stream handle is a pointer, and the driver hands the handle of a destroyed stream
 * to the next stream created at once, even while work queued on the destroyed one still runs
 * (rapidsai/rmm#649, #2251). cudaStreamDestroy promises only that the stream's resources are
 * released once its work is done, not that its handle is not reused before: so the argument "the
 * handle cannot be reused while work queued on it may still use the scratch" does not hold, and a
 * buffer found by handle alone could serve a new stream's reduction while the last ones of the
 * stream destroyed before it still run on it. The id is unique for the life of the process
 * (cudaStreamGetId's contract) and tells a stream from its successor at the same handle.
 *
 * Why the table is keyed by handle all the same. A successor lands on its predecessor's slot, and
 * that is how a destroyed stream is known to be dead: the handle of a live stream names only that
 * stream, so a stream of another id met at a slot's handle means the slot's stream was destroyed,
 * and a correct program makes no call on a destroyed stream (its calls on it returned before it
 * was destroyed, so no thread is between finding its buffer and launching on it). Its buffers go
 * to limbo, and the successor gets one of its own. Since the driver reuses handles, the table
 * holds about as many slots as streams alive at once, not as many as were ever made (the GPU test
 * says how many distinct handles 10,000 streams got, and fails where buffers are not bounded). The three
 * special handles name per-thread or default streams (cudaStreamPerThread is a different stream
 * on each thread): they are keyed by their id instead, and never taken over; a per-thread stream
 * of a thread that has exited keeps its buffer until pm_close.
 *
 * When a dead stream's buffers are idle. Work queued on the stream before it was destroyed may
 * still run on them. Nothing that the stream left behind can say when that work is done (the
 * stream is gone: no event can be recorded on it, nor can it be queried), so limbo is freed after
 * cudaDeviceSynchronize, which returns when all work queued on the device before it is done:
 * once LIMBO_MAX buffers (or LIMBO_BYTES) wait there, in the slow path of a call that is not being
 * captured. The price: a device-wide synchronisation invalidates any capture under way on the
 * device, in any mode and on any thread (NVIDIA's behaviour; llama.cpp#14033). So it is skipped
 * where cudaStreamIsCapturing(cudaStreamLegacy) reports a blocking stream capturing; a capture on
 * a non-blocking stream on another thread at that moment would still be invalidated, which only a
 * program that destroys streams that reduced, while it captures on another thread, can meet (once
 * per LIMBO_MAX destroyed streams). Rejected: recording an event after each launch, which would
 * say when each buffer is idle, puts a stream operation between consecutive kernels, which ends
 * programmatic dependent launch's overlap (about 1.2 us a call on an H100) and adds a CUDA call to
 * the hot path; keeping limbo until pm_close does not bound memory (64 KB per destroyed stream).
 *
 * A bound whatever the driver does. Handle reuse alone bounds the table only as far as the
 * driver reuses handles (3 distinct handles for 10,000 streams made one after another on an H100,
 * but 364-425 for 10,000 made 50 at a time, and growing). So at most LIVE_MAX streams hold a
 * buffer: the one that has held its buffer longest gives it back (evict) when another stream
 * needs one. That stream may be alive, and a thread may have found its buffer just before and not
 * launched yet: a buffer taken back waits in limbo for GRACE_MS (one second; the window between
 * finding a buffer and launching on it is microseconds), and limbo is freed only after a
 * device-wide synchronisation that starts after that grace. The stream's next call makes a new
 * buffer in the slow path.
 *
 * A live stream's buffer that it outgrows stays with it until it dies (the `next` chain): a call
 * on another thread may have found the smaller one and not launched yet.
 *
 * So the device memory held is: the buffers of at most LIVE_MAX streams (and those they outgrew),
 * those waiting in limbo (LIMBO_MAX, or more while younger than GRACE_MS), and the graphs'.
 *
 * Reading without a lock. A slot is three words (key, id, buffer), each atomic, written under the
 * lock. Its key is set once, after its id and buffer (release): a reader that sees the key sees
 * them. After that a slot changes in two ways only: its stream outgrows its buffer (the buffer is
 * replaced by a larger one of the same stream; the old one stays alive on the chain), or a
 * successor takes it over (buffer first, then id, release: a reader of the successor that sees its
 * id sees its buffer; readers of the dead stream do not exist). Slots live in place rather than
 * as published records (as cache.c's entries are) so that 10,000 streams made and destroyed leave
 * no record each behind. A table more than half full is replaced by one twice as large, filled
 * before it is published; the tables it replaces are kept until pm__scratch_free, since a reader
 * may still be in one, and what a live stream's reader finds there is alive.
 *
 * ---- Captured calls: a buffer per call, held by the graph --------------------------------------
 *
 * pm__scratch_get, called with the thread's capture mode relaxed (serve.c does), asks the capture
 * (cudaStreamGetCaptureInfo) for the graph being captured and lends the call a free graph buffer,
 * else a new one zeroed on pmtune's own stream (a memset on the caller's stream would land in the
 * graph). The graph holds it through a user object (cudaUserObjectCreate, then
 * cudaGraphRetainUserObject with cudaGraphUserObjectMove): CUDA calls its destructor once the
 * graph, every graph instantiated or cloned from it, and their launches are done with it (the CUDA
 * programming guide, "CUDA User Objects"). The destructor runs on a CUDA thread and may make no
 * CUDA call: it only drops the graph's reference. A buffer's `refs` is 1 for the context and 1
 * more while a graph holds it; whoever drops the last one frees the struct. The device memory is
 * the context's: lent again to a later capture once the graph let it go (every reduce launch
 * leaves the scratch as it found it, so it needs no zeroing again), cudaFree'd by pm_close.
 * Graphs that hold pmtune calls must not be launched after pm_close (include/pmtune.h), nor two
 * instances of one graph run at the same time (they share its buffers). */
#include <stdlib.h>

#include "runtime.h"

#define MIN_BYTES 65536        /* the smallest buffer made: most reductions then never grow it */
#define FIRST_SLOTS 64         /* the first table's slots; each table after has twice as many */
#define LIMBO_MAX 32           /* dead streams' buffers that may wait before limbo is freed */
#define LIMBO_BYTES (64 << 20) /* ... or their bytes */
#define LIVE_MAX 256           /* streams with a buffer; beyond, the longest-held one is taken back */
#define GRACE_MS 1000.0        /* a buffer in limbo is freed no sooner than this after it went there */

struct pm__workspace {
  void *ptr;
  size_t bytes;
  struct pm__workspace *next; /* a stream's: the smaller one it outgrew; in limbo or the graphs'
                                 list: the next one there */
  _Atomic int refs;           /* graph buffers: 1 for the context, 1 more while a graph holds it */
  double since;               /* in limbo: when it went there (pm__now_ms) */
};

typedef struct slot {
  _Atomic uintptr_t key;                     /* 0: empty; else key_of the stream */
  _Atomic unsigned long long id;             /* the stream's id (cudaStreamGetId) */
  _Atomic(struct pm__workspace *) ws;        /* its buffer; NULL where it was taken back */
  uint64_t seq;                              /* when its buffer was made (s->seq), under the lock */
} slot;

struct pm__streams {
  size_t mask;               /* slots - 1, slots a power of two */
  struct pm__streams *older; /* the table this one replaced, freed by pm__scratch_free */
  slot slot[];
};

void pm__scratch_init(pm__scratch *s) { pthread_mutex_init(&s->lock, NULL); }

/* ---- The table ----------------------------------------------------------------------------- */

/* Whether stream is one of the special handles (NULL, cudaStreamLegacy, cudaStreamPerThread, and
 * anything else that is not an aligned pointer), which may name a different stream per thread. */
static int special(struct CUstream_st *stream) {
  uintptr_t h = (uintptr_t)stream;
  return h <= (uintptr_t)cudaStreamPerThread || (h & 7) != 0;
}

/* A stream's key: its handle, or for a special handle its id tagged with the low bit (never an
 * aligned pointer, never 0). */
static uintptr_t key_of(struct CUstream_st *stream, unsigned long long id) {
  return special(stream) ? (uintptr_t)(id << 1 | 1) : (uintptr_t)stream;
}

/* Fibonacci hashing: handles are aligned pointers, whose low bits say little. */
static size_t hash(uintptr_t key) {
  return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32);
}

/* The slot of key in tab, else the empty slot where it would go: a table at most half full
 * always has one. */
static slot *probe(struct pm__streams *tab, uintptr_t key) {
  for (size_t i = hash(key);; i++) {
    slot *sl = &tab->slot[i & tab->mask];
    uintptr_t k = atomic_load_explicit(&sl->key, memory_order_acquire);
    if (k == 0 || k == key) return sl;
  }
}

/* Fills an empty slot (under the lock): its id and buffer before its key. */
static void fill(slot *sl, uintptr_t key, unsigned long long id, struct pm__workspace *w) {
  atomic_store_explicit(&sl->ws, w, memory_order_relaxed);
  atomic_store_explicit(&sl->id, id, memory_order_relaxed);
  atomic_store_explicit(&sl->key, key, memory_order_release);
}

/* A table twice the size of the current one (FIRST_SLOTS at first) holding its slots, published in
 * its place; the old one is kept. PM_ENOMEM where there is no memory for it. */
static int grow(pm_ctx *c, pm__scratch *s) {
  struct pm__streams *old = atomic_load_explicit(&s->table, memory_order_relaxed);
  size_t slots = old != NULL ? 2 * (old->mask + 1) : FIRST_SLOTS;
  struct pm__streams *tab = pm__calloc(1, sizeof *tab + slots * sizeof tab->slot[0]);
  if (tab == NULL) return pm__seterr(c, PM_ENOMEM, "reduce scratch: out of memory");
  tab->mask = slots - 1;
  tab->older = old;
  for (size_t i = 0; old != NULL && i <= old->mask; i++) {
    uintptr_t k = atomic_load_explicit(&old->slot[i].key, memory_order_relaxed);
    if (k != 0)
      fill(probe(tab, k), k, atomic_load_explicit(&old->slot[i].id, memory_order_relaxed),
           atomic_load_explicit(&old->slot[i].ws, memory_order_relaxed));
  }
  atomic_store_explicit(&s->table, tab, memory_order_release); /* filled before it is seen */
  return PM_OK;
}

/* Asks the driver whether stream is being captured and, where it is not, its id (*id): 0 then,
 * and the hot path looks the stream up; -1 where it is capturing or the driver cannot say. */
static int direct_id(struct CUstream_st *stream, unsigned long long *id) {
  int capturing;
  return pm__stream_state(stream, &capturing, id) != 0 || capturing ? -1 : 0;
}

void *pm__scratch_find(pm__scratch *s, struct CUstream_st *stream, size_t bytes) {
  unsigned long long id;
  struct pm__streams *tab = atomic_load_explicit(&s->table, memory_order_acquire);
  if (tab == NULL || direct_id(stream, &id) != 0) return NULL;
  uintptr_t key = key_of(stream, id);
  slot *sl = probe(tab, key);
  if (atomic_load_explicit(&sl->key, memory_order_acquire) != key ||
      atomic_load_explicit(&sl->id, memory_order_acquire) != id)
    return NULL; /* a stream new here, or the successor of the slot's stream */
  struct pm__workspace *w = atomic_load_explicit(&sl->ws, memory_order_acquire);
  return w != NULL && w->bytes >= bytes ? w->ptr : NULL; /* NULL: taken back (evict) */
}

/* ---- Buffers ------------------------------------------------------------------------------- */

/* A new buffer of at least `bytes` (MIN_BYTES at least, and `at_least`), zeroed on pmtune's own
 * stream before it is handed out: a memset queued on the caller's stream would, during a capture,
 * land in the graph and leave the buffer unzeroed for calls made outside it. On c's device. NULL,
 * with the reason on c, where it cannot be had. Under the lock. */
static struct pm__workspace *make(pm_ctx *c, pm__scratch *s, size_t bytes, size_t at_least) {
  size_t want = bytes < MIN_BYTES ? MIN_BYTES : bytes;
  if (want < at_least) want = at_least;
  struct pm__workspace *w = pm__calloc(1, sizeof *w);
  int prev, rc;
  if (w == NULL) return pm__seterr(c, PM_ENOMEM, "reduce scratch: out of memory"), NULL;
  if ((rc = pm__device_enter(c, &prev)) != PM_OK) return free(w), NULL;
  if (s->zeroing == NULL)
    PM__CUDA(c, cudaStreamCreateWithFlags(&s->zeroing, cudaStreamNonBlocking));
  PM__CUDA(c, cudaMalloc(&w->ptr, want));
  PM__CUDA(c, cudaMemsetAsync(w->ptr, 0, want, s->zeroing));
  PM__CUDA(c, cudaStreamSynchronize(s->zeroing));
  pm__device_leave(prev);
  w->bytes = want;
  atomic_init(&w->refs, 1);
  return w;
fail:
  if (w->ptr != NULL) cudaFree(w->ptr);
  free(w);
  pm__device_leave(prev);
  return NULL;
}

/* Frees w and the buffers chained after it (device memory and structs). */
static void free_chain(struct pm__workspace *w) {
  for (struct pm__workspace *next; w != NULL; w = next) {
    next = w->next;
    cudaFree(w->ptr);
    free(w);
  }
}

/* Puts the chain w (a dead stream's buffers, or a live one's taken back) in limbo. */
static void to_limbo(pm__scratch *s, struct pm__workspace *w) {
  double now = pm__now_ms();
  while (w != NULL) {
    struct pm__workspace *next = w->next;
    w->next = s->limbo, s->limbo = w, w->since = now;
    s->limbo_n++, s->limbo_bytes += w->bytes;
    w = next;
  }
}

/* Frees the buffers in limbo that went there GRACE_MS or more ago, once all work queued before
 * now is done (the design above), where no blocking stream is being captured; where it cannot,
 * they wait for the next time. At most one device-wide synchronisation a GRACE_MS. Under the
 * lock. */
static void reclaim(pm_ctx *c, pm__scratch *s) {
  enum cudaStreamCaptureStatus st;
  double now = pm__now_ms();
  int prev;
  if (now - s->reclaimed_ms < GRACE_MS) return;
  if (cudaStreamIsCapturing(cudaStreamLegacy, &st) != cudaSuccess) { /* a blocking capture */
    cudaGetLastError();
    return;
  }
  if (pm__device_enter(c, &prev) != PM_OK) return;
  cudaError_t e = cudaDeviceSynchronize();
  pm__device_leave(prev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  s->reclaimed_ms = now;
  struct pm__workspace *keep = NULL, *next;
  s->limbo_n = 0, s->limbo_bytes = 0;
  for (struct pm__workspace *w = s->limbo; w != NULL; w = next) {
    next = w->next;
    if (w->since <= now - GRACE_MS) {
      cudaFree(w->ptr);
      free(w);
    } else {
      w->next = keep, keep = w;
      s->limbo_n++, s->limbo_bytes += w->bytes;
    }
  }
  s->limbo = keep;
}

/* Takes back the buffer of the stream that has held one longest, other than `spare`'s slot,
 * where more than LIVE_MAX streams hold one: the stream may be dead (its handle not reused), or
 * alive (its next call gets a new buffer). Its id is spoiled before its buffer goes, so that a
 * reader that sees the buffer gone sees the id spoiled; a reader that found the buffer just
 * before may still launch on it, which GRACE_MS in limbo leaves time for. Under the lock. */
static void evict(pm__scratch *s, const slot *spare) {
  struct pm__streams *tab = atomic_load_explicit(&s->table, memory_order_relaxed);
  slot *victim = NULL;
  if (s->live <= LIVE_MAX || tab == NULL) return;
  for (size_t i = 0; i <= tab->mask; i++) {
    slot *sl = &tab->slot[i];
    if (sl == spare || atomic_load_explicit(&sl->key, memory_order_relaxed) == 0 ||
        atomic_load_explicit(&sl->ws, memory_order_relaxed) == NULL)
      continue;
    if (victim == NULL || sl->seq < victim->seq) victim = sl;
  }
  if (victim == NULL) return;
  struct pm__workspace *w = atomic_load_explicit(&victim->ws, memory_order_relaxed);
  atomic_store_explicit(&victim->id, ~0ull, memory_order_release); /* no stream's id */
  atomic_store_explicit(&victim->ws, NULL, memory_order_release);
  to_limbo(s, w);
  s->live--;
}

/* The direct buffer of stream (id) of at least `bytes`: its own, grown, or a new one, taking its
 * handle's slot over from a destroyed stream. The new buffer is made before anything changes, so
 * that a failure leaves the table as it was. Under the lock. */
static void *for_stream(pm_ctx *c, pm__scratch *s, struct CUstream_st *stream,
                        unsigned long long id, size_t bytes) {
  uintptr_t key = key_of(stream, id);
  struct pm__streams *tab = atomic_load_explicit(&s->table, memory_order_relaxed);
  slot *sl = tab != NULL ? probe(tab, key) : NULL;
  struct pm__workspace *old, *w;
  if (sl != NULL && atomic_load_explicit(&sl->key, memory_order_relaxed) == key) {
    old = atomic_load_explicit(&sl->ws, memory_order_relaxed);
    int successor = atomic_load_explicit(&sl->id, memory_order_relaxed) != id;
    int fresh = successor || old == NULL; /* the slot's stream died, or its buffer was taken back */
    if (!fresh && old->bytes >= bytes) return old->ptr; /* another thread was first */
    if ((w = make(c, s, bytes, fresh ? 0 : 2 * old->bytes)) == NULL) return NULL;
    if (successor && old != NULL) to_limbo(s, old); /* the slot's stream was destroyed */
    if (old == NULL) s->live++;
    w->next = fresh ? NULL : old; /* an outgrown buffer stays with its stream */
    if (fresh) sl->seq = ++s->seq;
    atomic_store_explicit(&sl->ws, w, memory_order_release);
    atomic_store_explicit(&sl->id, id, memory_order_release); /* after its buffer */
  } else {
    if (tab == NULL || 2 * (s->used + 1) > tab->mask + 1) { /* a new key: room for it first */
      if (grow(c, s) != PM_OK) return NULL;
      tab = atomic_load_explicit(&s->table, memory_order_relaxed);
    }
    if ((w = make(c, s, bytes, 0)) == NULL) return NULL;
    sl = probe(tab, key);
    sl->seq = ++s->seq;
    fill(sl, key, id, w);
    s->used++, s->live++;
  }
  evict(s, sl);
  if (s->limbo_n >= LIMBO_MAX || s->limbo_bytes >= LIMBO_BYTES) reclaim(c, s);
  return w->ptr;
}

/* ---- Graph buffers ------------------------------------------------------------------------- */

/* The destructor of a graph's user object: the graph and all made from it are done with the
 * buffer. On a CUDA thread: no CUDA call, no lock. */
static void graph_done(void *p) {
  struct pm__workspace *w = p;
  if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1) free(w);
}

/* *out: a buffer of at least `bytes` lent to graph for as long as it holds it: the smallest free
 * one that is large enough, else a new one. Under the lock. */
static int for_graph(pm_ctx *c, pm__scratch *s, cudaGraph_t graph, size_t bytes, void **out) {
  struct pm__workspace *w = NULL;
  cudaUserObject_t obj;
  int rc = PM_OK;
  for (struct pm__workspace *f = s->graphs; f != NULL; f = f->next)
    if (atomic_load_explicit(&f->refs, memory_order_acquire) == 1 && f->bytes >= bytes &&
        (w == NULL || f->bytes < w->bytes))
      w = f;
  if (w == NULL) {
    if ((w = make(c, s, bytes, 0)) == NULL) return PM_ECUDA;
    w->next = s->graphs, s->graphs = w;
  }
  atomic_store_explicit(&w->refs, 2, memory_order_relaxed);
  PM__CUDA(c, cudaUserObjectCreate(&obj, w, graph_done, 1, cudaUserObjectNoDestructorSync));
  cudaError_t e = cudaGraphRetainUserObject(graph, obj, 1, cudaGraphUserObjectMove);
  if (e != cudaSuccess) {
    cudaUserObjectRelease(obj, 1); /* graph_done gives the buffer back */
    return pm__cuda_error(c, PM_ECUDA, e, "cudaGraphRetainUserObject", __FILE__, __LINE__);
  }
  *out = w->ptr;
  return PM_OK;
fail:
  atomic_store_explicit(&w->refs, 1, memory_order_relaxed);
  return rc;
}

/* ---- The calls ----------------------------------------------------------------------------- */

/* The capture status of stream and the graph being captured, where it is. */
static cudaError_t capture_info(struct CUstream_st *stream, enum cudaStreamCaptureStatus *st,
                                cudaGraph_t *graph) {
#if CUDART_VERSION >= 13000
  return cudaStreamGetCaptureInfo(stream, st, NULL, graph, NULL, NULL, NULL);
#else
  return cudaStreamGetCaptureInfo(stream, st, NULL, graph, NULL, NULL);
#endif
}

/* What the slow path needs to know of stream: whether it is being captured (*st), the graph
 * (*graph) where it is, its id (*id) where it is not. */
static int stream_state(pm_ctx *c, struct CUstream_st *stream, enum cudaStreamCaptureStatus *st,
                        cudaGraph_t *graph, unsigned long long *id) {
  int rc = PM_OK;
  PM__CUDA(c, capture_info(stream, st, graph));
  int capturing; /* the id as the hot path reads it (pm__stream_state), so that the two agree */
  if (*st == cudaStreamCaptureStatusNone &&
      (pm__stream_state(stream, &capturing, id) != 0 || capturing))
    return pm__seterr(c, PM_ECUDA, "reduce scratch: the stream's id cannot be had");
  if (*st != cudaStreamCaptureStatusNone && *st != cudaStreamCaptureStatusActive)
    return pm__seterr(c, PM_ECUDA, "reduce scratch: the stream's capture has been invalidated");
  return PM_OK;
fail:
  cudaGetLastError(); /* this call's failure, said on c */
  return rc;
}

void *pm__scratch_get(pm_ctx *c, pm__scratch *s, struct CUstream_st *stream, size_t bytes) {
  enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = NULL;
  unsigned long long id = 0;
  void *ptr = pm__scratch_find(s, stream, bytes);
  if (ptr != NULL || stream_state(c, stream, &st, &graph, &id) != PM_OK) return ptr;
  int mode;
  pm__capture_relax(&mode); /* it allocates, maybe while a graph is captured */
  pthread_mutex_lock(&s->lock);
  if (st == cudaStreamCaptureStatusActive)
    for_graph(c, s, graph, bytes, &ptr);
  else
    ptr = for_stream(c, s, stream, id, bytes);
  pthread_mutex_unlock(&s->lock);
  pm__capture_restore(mode);
  return ptr;
}

size_t pm__scratch_count(pm__scratch *s, size_t *in_graphs) {
  size_t n = 0, lent = 0;
  pthread_mutex_lock(&s->lock);
  struct pm__streams *tab = atomic_load_explicit(&s->table, memory_order_relaxed);
  for (size_t i = 0; tab != NULL && i <= tab->mask; i++)
    if (atomic_load_explicit(&tab->slot[i].key, memory_order_relaxed) != 0)
      for (struct pm__workspace *w = atomic_load_explicit(&tab->slot[i].ws, memory_order_relaxed);
           w != NULL; w = w->next)
        n++;
  n += s->limbo_n;
  for (struct pm__workspace *w = s->graphs; w != NULL; w = w->next, n++)
    lent += atomic_load_explicit(&w->refs, memory_order_acquire) > 1;
  pthread_mutex_unlock(&s->lock);
  if (in_graphs != NULL) *in_graphs = lent;
  return n;
}

void pm__scratch_free(pm__scratch *s) {
  struct pm__streams *tab = atomic_load(&s->table);
  for (size_t i = 0; tab != NULL && i <= tab->mask; i++) /* the newest table holds every stream */
    if (atomic_load(&tab->slot[i].key) != 0) free_chain(atomic_load(&tab->slot[i].ws));
  for (struct pm__streams *older; tab != NULL; tab = older) older = tab->older, free(tab);
  free_chain(s->limbo);
  for (struct pm__workspace *w = s->graphs, *next; w != NULL; w = next) {
    next = w->next;
    cudaFree(w->ptr); /* a graph that still holds it must not be launched again (pm_close) */
    if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1) free(w);
  }
  if (s->zeroing != NULL) cudaStreamDestroy(s->zeroing);
  pthread_mutex_destroy(&s->lock);
}

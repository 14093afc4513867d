/* runtime.h: what the files of runtime/ share and nothing above them uses: serving's state on a
 * context and its parts, the lock-free cache of chosen kernels (cache.c), the per-stream scratch
 * of reductions (scratch.c), tuning on first use (autotune.c) and the call path that ties them
 * (serve.c), which the public calls (api.c) go through. */
#ifndef PM_RUNTIME_H
#define PM_RUNTIME_H

#include <stdatomic.h>
#include <stdint.h>

#include "serve.h"

/* ---- The cache of chosen kernels (cache.c) -------------------------------------------------- */

#define PM__CACHE_SLOTS 4096 /* cached choices; beyond, calls take the slow path every time */

/* What a cached choice is for: compared bytewise, so pm__cache_key_of zeroes it before filling. */
typedef struct pm__cache_key {
  uint32_t rows, cols, n;
  uint8_t op, variant, align, radius;
} pm__cache_key;

/* A choice: the point that serves a key, its loaded kernel and the scratch a run needs. Never
 * changed once it is in the table, so the hot path reads it without a lock. */
typedef struct pm__entry {
  pm__cache_key k;
  const pm__op *op;
  int v[PM__MAX_PARAMS];
  const pm__kernel *kernel;
  size_t work; /* scratch bytes a run needs (reduce) */
} pm__entry;

struct pm__loaded; /* a loaded cubin, shared by the entries whose defines are the same */

typedef struct pm__cache {
  _Atomic(pm__entry *) slots[PM__CACHE_SLOTS]; /* open addressing; an entry is never removed */
  struct pm__loaded *kernels;                  /* every cubin loaded; changed under the serve lock */
} pm__cache;

/* The key of a call of op on pr. */
void pm__cache_key_of(const pm__op *op, const pm__problem *pr, pm__cache_key *k);

/* The entry for k, or NULL. Takes no lock: any thread, at any time. */
pm__entry *pm__cache_lookup(pm__cache *t, const pm__cache_key *k);

/* Publishes e (heap; the table owns it from then on) under its key. Returns 0 where the key's
 * probe sequence is full: e is then not taken. Under the serve lock (one writer at a time). */
int pm__cache_insert(pm__cache *t, pm__entry *e);

/* The kernel of op loaded with the canonical defines text `defines`, or NULL. Under the lock. */
const pm__kernel *pm__cache_kernel_find(const pm__cache *t, const pm__op *op, const char *defines);

/* Loads cubin (op's entries) and keeps it under `defines`; *out is the loaded kernel, valid
 * until pm__cache_free. Under the lock. */
int pm__cache_kernel_load(pm_ctx *c, pm__cache *t, const pm__op *op, const char *defines,
                          const pm__cubin *cubin, const pm__kernel **out);

/* Frees every entry and unloads every kernel (pm_close: no call may be running). */
void pm__cache_free(pm__cache *t);

/* ---- Per-stream scratch (scratch.c) --------------------------------------------------------- */

#define PM__SCRATCH_STREAMS 64 /* streams with reduce scratch of their own */

struct pm__workspace; /* one stream's scratch */

typedef struct pm__scratch {
  _Atomic(struct pm__workspace *) ws[PM__SCRATCH_STREAMS]; /* read without a lock */
  pthread_mutex_t lock;                                     /* growing: one thread at a time */
  struct CUstream_st *zeroing; /* pmtune's own stream, which zeroes new scratch (made on first
                                  need): never one the caller may be capturing into a graph */
} pm__scratch;

void pm__scratch_init(pm__scratch *s);

/* stream's scratch of at least `bytes`, zeroed before this returns when it is new (on pmtune's
 * own stream, so that it is zero whether or not stream is being captured into a graph); NULL
 * (with the reason on c) where it cannot be had. It stays valid until pm__scratch_free: a grown
 * one keeps the smaller one it replaces alive, since work queued earlier on the stream, or a
 * graph captured from it, may still use it. Call with the thread's capture mode relaxed
 * (serve.c does): it allocates. */
void *pm__scratch_get(pm_ctx *c, pm__scratch *s, struct CUstream_st *stream, size_t bytes);

/* The published scratch of stream with at least `bytes`, or NULL: the hot path's look, which
 * takes no lock, allocates nothing and makes no CUDA call. */
void *pm__scratch_find(pm__scratch *s, struct CUstream_st *stream, size_t bytes);

/* Frees every stream's scratch (pm_close: no call may be running). */
void pm__scratch_free(pm__scratch *s);

/* ---- Serving's state (serve.c) -------------------------------------------------------------- */

typedef struct pm__serve {
  pm__cache cache;
  pm__scratch scratch;
  pthread_mutex_t lock; /* the slow path: deciding, loading kernels, inserting, and every field
                           below; never held while a tuning runs */
  pm__db *db;           /* read-only, opened on first need */
  int db_tried;
  pm__db_known known[PM__MAX_OPS]; /* what db knows of each op (pm__op_index) for this GPU,
                                      read on the op's first decision: calls decide from it */
  unsigned char known_loaded[PM__MAX_OPS];
  pm__db *rw;           /* read-write, for storing the cubins compiled here */
  int rw_tried;
  int autotune, autotune_budget; /* pm_options and PMTUNE_AUTOTUNE */
  int tuning;           /* 1 while a thread tunes on first use: at most one tuning per context */
} pm__serve;

/* Runs op on pr with the buffers of d on stream: the cached choice, else one decided now (the
 * slow path). d->pr is set here; d->work too, where the choice needs scratch. Any call may be
 * captured into a CUDA graph, in any capture mode: what the slow path does besides launching
 * (loading a cubin, allocating scratch) it does with the thread's capture mode relaxed, and it
 * never tunes on first use for a stream that is capturing. */
int pm__serve_call(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__data *d,
                   struct CUstream_st *stream);

/* ---- Tuning on first use (autotune.c) ------------------------------------------------------- */

/* Tunes pr on c's device now with a random search of `budget` points and stores what it
 * measures, for this process and later ones; the caller then looks the winner up as for any
 * tuned size. Opens a read-write database handle of its own (closed before it returns), so it
 * needs no serving lock; one tuning at a time per context (pm__serve.tuning sees to that).
 * A failure is not an error of the call: it is said with pm__notice, and the call is served
 * as if nothing had been tuned. Takes seconds. */
void pm__autotune(pm_ctx *c, const pm__op *op, const pm__problem *pr, int budget);

#endif /* PM_RUNTIME_H */

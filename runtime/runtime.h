/* runtime.h: what the files of runtime/ share and nothing above them uses: serving's state on a
 * context and its parts, the lock-free cache of chosen kernels (cache.c), the scratch of
 * reductions (scratch.c), tuning on first use (autotune.c) and the call path that ties them
 * (serve.c), which the public calls (api.c) go through. */
#ifndef PM_RUNTIME_H
#define PM_RUNTIME_H

#include <stdatomic.h>
#include <stdint.h>

#include "serve.h"

/* ---- The cache of chosen kernels (cache.c) -------------------------------------------------- */

/* What a cached choice is for: compared bytewise, so pm__cache_key_of zeroes it before filling. */
typedef struct pm__cache_key {
  uint32_t rows, cols, n;
  uint8_t op, variant, align, zero; /* op: the op's pm_op | the dtype << 4; zero: 0 */
  uint32_t user;   /* a kernel of one's own: its pm_kernel's id (1, 2, ...); 0: a built-in op */
  uint32_t radius; /* filter's radius; a kernel of one's own's tuned scalar's value */
} pm__cache_key;

/* What serves a key: op's point v, built for one variant, radius and dtype (the only parts of a
 * problem a point's defines may depend on), and its loaded kernel. Shared by every size it
 * serves, so a process that meets 100,000 sizes holds as many choices as distinct points (a few hundred).
 * Never changed once made; freed by pm__cache_free. */
typedef struct pm__choice {
  const pm__op *op;
  int v[PM__MAX_PARAMS];
  int variant, radius, dtype;
  const pm__module *kernel;
  struct pm__choice *next; /* the choice list (under the serve lock) */
} pm__choice;

/* A size's entry: its choice and the scratch a run needs. Never changed once published (the hot
 * path reads it without a lock) but for `calls`; a newer decision for the same key replaces it in
 * the table, and the old one stays allocated until pm_close (a call may still be reading it). */
typedef struct pm__entry {
  pm__cache_key k;
  const pm__choice *choice;
  size_t work;               /* scratch bytes a run needs (reduce) */
  uint32_t epoch;            /* pm__serve.epoch when decided: a call seeing another decides again */
  uint8_t source;            /* pm__source of the decision */
  _Atomic uint64_t calls;    /* calls served; counted only where sizes are recorded */
  struct pm__entry *next;    /* every entry made, newest first (under the serve lock) */
} pm__entry;

struct pm__loaded; /* a loaded cubin, shared by the choices whose defines are the same */
struct pm__table;  /* the open-addressing table the hot path reads */

/* Grows without bound: the cost of a lookup does not depend on how many sizes are cached (a table
 * at most half full, replaced by one twice as large when it would be more; the tables it replaces
 * stay allocated until pm_close, so a reader never holds freed memory). */
typedef struct pm__cache {
  _Atomic(struct pm__table *) table; /* NULL until the first insert */
  size_t used;                       /* keys in the table; under the serve lock, as below */
  pm__entry *entries;                /* every entry made */
  pm__choice *choices[256];          /* every choice, hashed by point */
  struct pm__loaded *kernels;        /* every cubin loaded */
} pm__cache;

/* The key of a call of op on pr. */
void pm__cache_key_of(const pm__op *op, const pm__problem *pr, pm__cache_key *k);

/* The entry for k, or NULL. Takes no lock: any thread, at any time. */
pm__entry *pm__cache_lookup(pm__cache *t, const pm__cache_key *k);

/* Publishes e (heap; the cache owns it from then on, whatever this returns) under its key,
 * replacing the entry there, if any. PM_ENOMEM where the table could not grow: e is then kept
 * (freed at pm_close) but not published. Under the serve lock (one writer at a time). */
int pm__cache_put(pm__cache *t, pm__entry *e);

/* The choice of op's point v for pr's variant and radius, or NULL. Under the lock. */
const pm__choice *pm__cache_choice_find(const pm__cache *t, const pm__op *op, const int *v,
                                        const pm__problem *pr);

/* Makes the choice of op's point v for pr with kernel (loaded by pm__cache_kernel_load); NULL
 * where memory ran out. Under the lock. */
const pm__choice *pm__cache_choice_add(pm__cache *t, const pm__op *op, const int *v,
                                       const pm__problem *pr, const pm__module *kernel);

/* The kernel of op loaded with the canonical defines text `defines`, or NULL. Under the lock. */
const pm__module *pm__cache_kernel_find(const pm__cache *t, const pm__op *op, const char *defines);

/* Loads cubin (op's entries) and keeps it under `defines`; *out is the loaded kernel, valid
 * until pm__cache_free. Under the lock. */
int pm__cache_kernel_load(pm_ctx *c, pm__cache *t, const pm__op *op, const char *defines,
                          const pm__cubin *cubin, const pm__module **out);

/* Frees every entry, choice and table and unloads every kernel (pm_close: no call may be
 * running). */
void pm__cache_free(pm__cache *t);

/* ---- The reduce's scratch (scratch.c) ------------------------------------------------------- */

struct pm__workspace; /* one device buffer */
struct pm__streams;   /* the table of streams the hot path reads */

/* A buffer per stream for direct calls, any number of streams (a destroyed stream's buffer is
 * freed once no work can use it), and a buffer per captured call, held by its graph. scratch.c
 * says why it is built this way. */
typedef struct pm__scratch {
  _Atomic(struct pm__streams *) table; /* read without a lock; NULL until the first stream */
  pthread_mutex_t lock;                /* the slow path, and every field below */
  size_t used;                         /* keys in the table */
  size_t live;                         /* slots holding a buffer (at most LIVE_MAX, scratch.c) */
  uint64_t seq;                        /* buffers made for streams so far: each slot's age */
  double reclaimed_ms;                 /* when limbo was last freed */
  struct pm__workspace *limbo;         /* destroyed streams' buffers, freed once idle */
  size_t limbo_n, limbo_bytes;
  struct pm__workspace *graphs;        /* buffers of captured calls, each lent to one graph */
  struct CUstream_st *zeroing; /* pmtune's own stream, which zeroes new buffers (made on first
                                  need): never one the caller may be capturing into a graph */
} pm__scratch;

void pm__scratch_init(pm__scratch *s);

/* A scratch of at least `bytes` for a reduce launch on stream, zeroed before this returns when it
 * is new (on pmtune's own stream, whether or not stream is being captured); NULL (with the reason
 * on c) where it cannot be had. Where stream is not being captured: the stream's own buffer,
 * valid while the stream lives. Where it is: a buffer of the call's own, held by the graph being
 * captured until it and all made from it are destroyed. Finds the stream's buffer first, as
 * pm__scratch_find does; allocates with the thread's capture mode relaxed (pm__capture_relax). */
void *pm__scratch_get(pm_ctx *c, pm__scratch *s, struct CUstream_st *stream, size_t bytes);

/* The buffer of stream with at least `bytes`, or NULL (stream being captured, new, or its buffer
 * too small): the hot path's look, which takes no lock, allocates nothing and makes two cheap
 * CUDA queries (cudaStreamIsCapturing, cudaStreamGetId). */
void *pm__scratch_find(pm__scratch *s, struct CUstream_st *stream, size_t bytes);

/* For tests: the device buffers held (streams', waiting to be freed, and graphs'); *in_graphs
 * (where not NULL) those that a graph holds now. Takes the lock. */
size_t pm__scratch_count(pm__scratch *s, size_t *in_graphs);

/* Frees every buffer (pm_close: no call may be running; graphs still holding a buffer must not be
 * launched again). */
void pm__scratch_free(pm__scratch *s);

/* ---- Serving's state (serve.c) -------------------------------------------------------------- */

/* What a database knows for this GPU, op by op (pm__op_index), each read on the op's first
 * decision. */
typedef struct pm__known_set {
  pm__db_known op[PM__MAX_OPS];
  unsigned char loaded[PM__MAX_OPS]; /* 0: not read yet; 1: read; 2: could not be read */
} pm__known_set;

/* What db knows of op for c's GPU, read into set on first need; NULL where db is NULL or it
 * could not be read (not tried again, and said once with pm__notice as "ERROR: `said`"). */
const pm__db_known *pm__known_get(pm_ctx *c, pm__known_set *set, pm__db *db, const pm__op *op,
                                  const char *said);

/* Drops what set holds: the next decision of each op reads its database again. */
void pm__known_forget(pm__known_set *set);

/* A kernel of one's own opened for serving (pm_kernel_open): its description's op, what the
 * database knows of it, and the id that tells its cache entries from others'. Kept until
 * pm_close (cache entries point at its op); the same description opened again is the same. */
struct pm_kernel {
  pm_ctx *c;
  struct pm__kernel_desc *kf;
  const pm__op *op;
  uint32_t id;
  pm__db_known known;  /* what the database knows of it for this GPU, read on first need */
  unsigned char loaded; /* 0: not read yet; 1: read; 2: could not be read */
  /* The results folder's documents that name it, in memory (pm__shipped_kernel_known): read on
   * first need; shipped_loaded as loaded, 2 also where none names it */
  pm__ops_db_plus plus;  /* the ops that database was opened for: the built-in ones and this */
  pm__db *shipped;
  pm__db_known shipped_known;
  unsigned char shipped_loaded;
  struct pm_kernel *next;
};

typedef struct pm__serve {
  pm__cache cache;
  pm__scratch scratch;
  _Atomic uint32_t epoch; /* what is known changed (pm_reload, a tuning done): cached entries of
                             an older epoch are decided again at their next call */
  pthread_mutex_t lock;   /* the slow path: deciding, loading kernels, inserting, and every field
                             below; never held while a tuning runs */
  pm__db *db;             /* read-only, opened on first need */
  int db_tried;
  pm__known_set known;    /* what db knows for this GPU: calls decide from it */
  pm__db *shipped;        /* the shipped results of this GPU's model, in memory (shipped.c) */
  int shipped_tried;
  pm__known_set shipped_known; /* what they know */
  char sibling[128];      /* the model of this GPU's architecture whose shipped results serve
                             what none of this model's do, or "" */
  char sibling_groups[512]; /* what they serve: "op/dtype op/dtype ..." */
  pm__db *rw;             /* read-write, for storing the cubins compiled here */
  int rw_tried;
  int64_t rw_gpu;         /* this GPU's id in rw (0 until recorded: rw's first write) */
  struct pm__pending *pending; /* cubins compiled here, not stored yet (the lock was held) */
  int said_default;       /* the notice that a default serves has been given */
  int record;             /* count the calls of sizes without an exact winner (pm_options.record,
                             PMTUNE_RECORD=1); written to the database by pm_close */
  int autotune, autotune_budget; /* pm_options and PMTUNE_AUTOTUNE */
  struct pm__tuner *tuner;       /* the background tuning thread, made on first need */
  struct pm_kernel *kernels;     /* the kernels of one's own opened, newest first */
  uint32_t nkernels;
} pm__serve;

/* What the results shipped for this GPU's model know of op (shipped.c), read on first need under
 * the serve lock; NULL where none are installed for it (PMTUNE_RESULTS names another folder, or
 * "none"). pm__shipped_free drops them (pm_close). */
const pm__db_known *pm__shipped_known(pm_ctx *c, const pm__op *op);
/* The same for a kernel of one's own: the documents of the results folder that name it (a
 * fleet's export, say), of this GPU's model and else of the nearest of its architecture, read
 * into a database of its own in memory on its first need; NULL where none does. Freed with k
 * (pm__shipped_kernel_free). */
const pm__db_known *pm__shipped_kernel_known(pm_kernel *k);
void pm__shipped_kernel_free(pm_kernel *k);

void pm__shipped_free(pm__serve *s);

/* Runs op on pr with the buffers of d on stream: the cached choice, else one decided now (the
 * slow path). d->pr is set here; d->work too, where the choice needs scratch. Any call may be
 * captured into a CUDA graph, in any capture mode: what the slow path does besides launching
 * (loading a cubin, allocating scratch) it does with the thread's capture mode relaxed. */
int pm__serve_call(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__data *d,
                   struct CUstream_st *stream);

/* The same for a kernel of one's own: its winners in the user's database (exact, else nearest),
 * else its seed; no shipped results, no tuning on first use, no recording of sizes. */
int pm__serve_kernel(pm_kernel *k, const pm__problem *pr, pm__data *d, struct CUstream_st *stream);

/* Opens the description at path for serving on c (pm_kernel_open): the kernel already open with
 * the same content (the SHA-256 of description and source) where there is one. */
int pm__serve_kernel_open(pm_ctx *c, const char *path, pm_kernel **out);

/* ---- Tuning on first use, in the background (autotune.c) ------------------------------------ */

/* The rule of tuning on first use: a size is tuned where nothing is tuned for its op and variant,
 * or the nearest tuned size is more than this factor away in elements (|ln(size / tuned)| above
 * ln 2). So a program meeting 10,000 sizes tunes a few per octave, not 10,000. */
#define PM__AUTOTUNE_FACTOR 2.0

/* Whether decision d (not exact) calls for tuning its size, by the rule above. */
int pm__autotune_wanted(const pm__decision *d);

/* Asks c's background thread (started on first need) to tune op on pr: returns at once. Taken
 * only where no tuning is running or waiting (one at a time per context); returns 1 where taken.
 * When the tuning is over its result is stored in the database and pm__serve_refresh makes calls
 * use it. Under the serving lock. */
int pm__autotune_request(pm_ctx *c, const pm__op *op, const pm__problem *pr);

/* Whether a tuning is running or waiting; tunings started so far (*started, may be NULL). Takes
 * the tuner's own lock: any thread. */
int pm__autotune_busy(pm_ctx *c, int *started);

/* Stops the background thread (waiting for a tuning under way to end) and frees it (pm_close). */
void pm__autotune_stop(pm_ctx *c);

#endif /* PM_RUNTIME_H */

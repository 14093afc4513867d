/* serve.c: what ties serving together: a call's hot path (the cache, read without a lock) and
 * its slow path (decide with the chain, tune on first use without holding the lock, load the
 * kernel from the database's cubin or NVRTC, publish the choice), serving's state on a context,
 * and the decision as `pmtune explain` asks for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* Drops what was read of the database: the next decision of each op reads it again. */
static void forget_known(pm__serve *s) {
  for (int i = 0; i < PM__MAX_OPS; i++) {
    pm__db_known_free(&s->known[i]);
    s->known_loaded[i] = 0;
  }
}

int pm__serve_init(pm_ctx *c, const pm_options *o) {
  pm__serve *s = calloc(1, sizeof *s);
  if (s == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  pthread_mutex_init(&s->lock, NULL);
  pm__scratch_init(&s->scratch);
  const char *env = getenv("PMTUNE_AUTOTUNE");
  s->autotune = o->autotune || (env != NULL && strcmp(env, "1") == 0);
  s->autotune_budget = o->autotune_budget > 0 ? o->autotune_budget : 40;
  c->serve = s;
  return PM_OK;
}

void pm__serve_free(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (s == NULL) return;
  pm__cache_free(&s->cache);
  pm__scratch_free(&s->scratch);
  forget_known(s);
  pm__db_close(s->db);
  pm__db_close(s->rw);
  pthread_mutex_destroy(&s->lock);
  free(s);
  c->serve = NULL;
}

/* ---- The databases (under the lock) --------------------------------------------------------- */

/* The read-only handle, opened on first need; NULL (said once with pm__notice) where there is no
 * usable database: then the defaults serve. */
static pm__db *read_db(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (!s->db_tried) {
    s->db_tried = 1;
    if (pm__db_open(c, c->db_path, PM__DB_READONLY, pm__ops_db(), &s->db) != PM_OK)
      pm__notice(c, "%s: serving built-in defaults", pm_errmsg(c));
  }
  return s->db;
}

/* What the database knows of op for this GPU, read on op's first decision (after a tuning on
 * first use, again); NULL where there is no database, or it could not be read (said once). */
static const pm__db_known *known_of(pm_ctx *c, const pm__op *op) {
  pm__serve *s = c->serve;
  pm__db *db = read_db(c);
  int i = pm__op_index(op);
  if (db == NULL || i < 0) return NULL;
  if (!s->known_loaded[i]) { /* 1: read; 2: could not be read, not tried again */
    s->known_loaded[i] = pm__op_known_load(db, &c->dev, op, &s->known[i]) == PM_OK ? 1 : 2;
    if (s->known_loaded[i] == 2) pm__notice(c, "%s: serving built-in defaults", pm_errmsg(c));
  }
  return s->known_loaded[i] == 1 ? &s->known[i] : NULL;
}

/* The read-write handle that cubins compiled here are stored with, opened on first need with
 * this GPU recorded in it (the database lists every GPU that used it); NULL (said once) where
 * the database cannot be written. */
static pm__db *write_db(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (!s->rw_tried) {
    int driver, runtime;
    int64_t gpu_id;
    s->rw_tried = 1;
    pm__cuda_versions(&driver, &runtime);
    if (pm__db_open(c, c->db_path, 0, pm__ops_db(), &s->rw) != PM_OK ||
        pm__db_gpu_put(s->rw, &c->dev, driver, runtime, &gpu_id) != PM_OK) {
      pm__notice(c, "%s: compiled kernels are not stored", pm_errmsg(c));
      pm__db_close(s->rw);
      s->rw = NULL;
    }
  }
  return s->rw;
}

void pm__serve_forget(pm_ctx *c) {
  pm__serve *s = c->serve;
  pthread_mutex_lock(&s->lock);
  forget_known(s);
  pm__db_close(s->db); /* a file made since is opened then */
  s->db = NULL;
  s->db_tried = 0;
  pthread_mutex_unlock(&s->lock);
}

int pm__serve_decide(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__decision *out) {
  pthread_mutex_lock(&c->serve->lock);
  pm__decide(c, known_of(c, op), op, pr, out);
  pthread_mutex_unlock(&c->serve->lock);
  return PM_OK;
}

/* ---- The slow path (under the lock) --------------------------------------------------------- */

/* Tunes pr now, with the lock released meanwhile: the tuning takes seconds and synchronises the
 * device, and other threads' slow paths (other sizes, kernels to load) must not wait for it.
 * s->tuning, set and cleared under the lock, keeps it to one tuning per context. Returns with
 * the lock held again, the read-only handle reopened where tuning has just made the file. */
static void tune_unlocked(pm_ctx *c, const pm__op *op, const pm__problem *pr) {
  pm__serve *s = c->serve;
  int budget = s->autotune_budget;
  s->tuning = 1;
  pthread_mutex_unlock(&s->lock);
  pm__autotune(c, op, pr, budget);
  pthread_mutex_lock(&s->lock);
  s->tuning = 0;
  if (s->db == NULL) s->db_tried = 0; /* tuning may have created the database */
  forget_known(s);                    /* and it stored what is to be read again */
}

/* The decision for a call of op on pr: the chain; where it finds no exact winner and autotune is
 * on, pr is tuned and the chain runs again (an exact winner then is PM__FROM_TUNED). *keep is 0
 * where the decision is for this call alone and must not be cached: the call's stream is being
 * captured into a graph (tuning would synchronise the device), or another thread was tuning,
 * so this one serves the chain's nearest or default meanwhile rather than wait seconds for it
 * (or start a second tuning beside it); a later call, once the tuning is over, decides again and
 * tunes its size if the tuning that was running was of another one. */
static void decide_for_call(pm_ctx *c, const pm__op *op, const pm__problem *pr, int capturing,
                            pm__decision *d, int *keep) {
  pm__serve *s = c->serve;
  *keep = 1;
  if (pm__decide(c, known_of(c, op), op, pr, d) == PM__FROM_EXACT || !s->autotune) return;
  if (s->tuning || capturing) { /* tuning synchronises the device: never inside a capture */
    *keep = 0;
    return;
  }
  tune_unlocked(c, op, pr);
  if (pm__decide(c, known_of(c, op), op, pr, d) == PM__FROM_EXACT) d->source = PM__FROM_TUNED;
}

/* The loaded kernel of point v on pr: already loaded, else its cubin from the database, else
 * compiled now (and stored for the next process). */
static int kernel_for(pm_ctx *c, const pm__op *op, const int *v, const pm__problem *pr,
                      const pm__kernel **out) {
  pm__serve *s = c->serve;
  char defs[PM__MAX_DEFINES][24], dtext[PM__MAX_DEFINES * 26];
  const char *dp[PM__MAX_DEFINES];
  int nd = pm__config_defines(op, v, pr, defs), rc, driver;
  const pm__template *t = pm__template_find(op->name);
  pm__db_cubin_key key;
  pm__cuda_versions(&driver, NULL);
  rc = pm__cubin_key(c, t->sha256, (const char(*)[24])defs, nd, driver, dtext, sizeof dtext, &key);
  if (rc != PM_OK) return rc;
  if ((*out = pm__cache_kernel_find(&s->cache, op, dtext)) != NULL) return PM_OK;
  for (int i = 0; i < nd; i++) dp[i] = defs[i];
  pm__cubin bin = {0};
  pm__db *db = read_db(c), *rw;
  if (db == NULL || pm__db_cubin_get(db, &key, &bin) != PM_OK) {
    if ((rc = pm__compile(c, t->file, t->source, c->dev.arch, dp, (size_t)nd, &bin)) != PM_OK)
      return rc;
    if ((rw = write_db(c)) != NULL && pm__db_cubin_put(rw, &key, &bin) != PM_OK)
      pm__notice(c, "%s: the compiled kernel is not stored", pm_errmsg(c));
  }
  rc = pm__cache_kernel_load(c, &s->cache, op, dtext, &bin, out);
  pm__cubin_free(&bin);
  return rc;
}

/* Fills e, the entry of key k: decision d's point, the scratch it needs, its loaded kernel. */
static int entry_make(pm_ctx *c, const pm__op *op, const pm__problem *pr, const pm__cache_key *k,
                      const pm__decision *d, pm__entry *e) {
  memset(e, 0, sizeof *e);
  e->k = *k;
  e->op = op;
  memcpy(e->v, d->v, sizeof e->v);
  e->work = op->work_bytes ? op->work_bytes(e->v, pr, c->dev.sm_count) : 0;
  return kernel_for(c, op, e->v, pr, &e->kernel);
}

/* Says (once per context) that nothing tuned serves op on pr. */
static void say_default(pm_ctx *c, const pm__op *op, const pm__problem *pr, const pm__decision *d) {
  char ptext[96];
  pm__problem_text(op, pr, ptext, sizeof ptext);
  pm__notice(c, "%s %s: nothing tuned for it on %s; the default %s serves it", op->name, ptext,
             c->dev.name, d->config);
}

/* Decides, loads and caches the choice for k; *out is the cached entry, or `spare` filled for
 * this call alone where the choice is not to be kept (another thread is tuning) or cannot be
 * (the table has no room for it, or no memory): the next call then decides again. */
static int slow_path(pm_ctx *c, const pm__op *op, const pm__problem *pr, const pm__cache_key *k,
                     int capturing, pm__entry *spare, pm__entry **out) {
  pm__serve *s = c->serve;
  pm__decision d;
  pm__entry *e;
  int keep, rc = PM_OK;
  pthread_mutex_lock(&s->lock);
  if ((*out = pm__cache_lookup(&s->cache, k)) != NULL) goto done; /* another thread was first */
  decide_for_call(c, op, pr, capturing, &d, &keep);
  if ((*out = pm__cache_lookup(&s->cache, k)) != NULL) goto done; /* ... while this one tuned */
  if (d.source == PM__FROM_DEFAULT) say_default(c, op, pr, &d);
  if ((rc = entry_make(c, op, pr, k, &d, spare)) != PM_OK) goto done;
  *out = spare;
  if (keep && (e = malloc(sizeof *e)) != NULL) {
    *e = *spare;
    if (pm__cache_insert(&s->cache, e)) *out = e;
    else free(e);
  }
done:
  pthread_mutex_unlock(&s->lock);
  return rc;
}

/* Sets this thread's stream capture mode to relaxed (*saved: the mode it had) and back: between
 * the two, the thread may allocate and load modules while a graph is being captured, on its
 * stream or another's, without invalidating the capture (the CUDA programming guide's advice for
 * libraries). */
static void capture_relax(int *saved) {
  enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) cudaGetLastError();
  *saved = (int)m;
}

static void capture_restore(int saved) {
  enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)saved;
  if (cudaThreadExchangeStreamCaptureMode(&m) != cudaSuccess) cudaGetLastError();
}

/* ---- The hot path --------------------------------------------------------------------------- */

int pm__serve_call(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__data *d,
                   struct CUstream_st *stream) {
  pm__cache_key k;
  pm__cache_key_of(op, pr, &k);
  pm__entry spare, *e = pm__cache_lookup(&c->serve->cache, &k);
  int rc = PM_OK, mode;
  d->pr = *pr;
  d->work = e != NULL && e->work > 0 ? pm__scratch_find(&c->serve->scratch, stream, e->work) : NULL;
  if (e == NULL || (e->work > 0 && d->work == NULL)) { /* the slow path, capture-safe */
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) cudaGetLastError();
    capture_relax(&mode);
    if (e == NULL) rc = slow_path(c, op, pr, &k, status != cudaStreamCaptureStatusNone, &spare, &e);
    if (rc == PM_OK && e->work > 0 &&
        (d->work = pm__scratch_get(c, &c->serve->scratch, stream, e->work)) == NULL)
      rc = pm__seterr(c, PM_ECUDA, "%s: no scratch for the reduction: %s", op->name, pm_errmsg(c));
    capture_restore(mode);
    if (rc != PM_OK) return rc;
  }
  return op->launch(c, e->kernel, e->v, d, stream);
}

/* autotune.c: tuning sizes on first use (pm_options.autotune, PMTUNE_AUTOTUNE=1) in a background
 * thread of the context: a call (of a built-in op or a kernel of one's own) that meets a size far
 * from every tuned one asks for it and is
 * served at once; the thread runs a short random search on a stream of its own, stores it in
 * the tuning database on a handle of its own, and moves serving to a new epoch so that later
 * calls use it. */
#include <math.h>
#include <stdlib.h>

#include "runtime.h"
#include "timer.h"
#include "tune.h"

struct pm__tuner {
  pthread_t thread;
  pthread_mutex_t lock; /* the fields below */
  pthread_cond_t wake;
  int waiting;          /* a request is waiting in op, pr */
  int running;          /* the thread is tuning */
  int stop;             /* pm_close: end the thread */
  int started;          /* tunings started */
  const pm__op *op;
  pm__problem pr;
};

int pm__autotune_wanted(const pm__decision *d) {
  return d->source == PM__FROM_DEFAULT ||
         (d->source == PM__FROM_NEAREST && d->distance > log(PM__AUTOTUNE_FACTOR) + 1e-9);
}

/* A read-write handle on c's database for op with c's GPU recorded (*gpu_id): the built-in ops',
 * and where op is a kernel of one's own, its too, its template made current (plus holds the list
 * while the handle lives); NULL where it cannot be opened (the reason is on c). */
static pm__db *open_for_tuning(pm_ctx *c, const pm__op *op, pm__ops_db_plus *plus,
                               int64_t *gpu_id) {
  pm__db *db = NULL;
  int driver, runtime, own = pm__op_find(op->name) != op;
  pm__cuda_versions(&driver, &runtime);
  if (pm__db_open(c, c->db_path, 0, own ? pm__ops_db_with(op, plus) : pm__ops_db(), &db) != PM_OK)
    return NULL;
  if (pm__db_gpu_put(db, &c->dev, driver, runtime, gpu_id) != PM_OK ||
      (own && pm__db_template_current(db, op->name, pm__op_template(op)->sha256) != PM_OK)) {
    pm__db_close(db);
    return NULL;
  }
  return db;
}

/* Tunes pr on tc (the thread's own context: its errors never show in the caller's pm_errmsg)
 * with a random search of `budget` points and stores what it measures; a failure is said on c
 * with pm__notice (the calls are served as if nothing had been tuned). */
static void tune_one(pm_ctx *c, pm_ctx *tc, const pm__op *op, const pm__problem *pr, int budget) {
  int64_t gpu_id = 0;
  pm__ops_db_plus plus;
  pm__db *db = open_for_tuning(tc, op, &plus, &gpu_id);
  if (db == NULL) {
    pm__notice(c, "%s: %s is not tuned on first use", pm_errmsg(tc), op->name);
    return;
  }
  pm__tune_opts o;
  pm__tune_result r;
  pm__problem own = *pr;
  own.caller_align = 0; /* the tuner measures on its own buffers, laid out as each point says */
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = (uint64_t)budget;
  if (pm__tune_problem(tc, db, gpu_id, 0, op, &own, &o, &r) != PM_OK)
    pm__notice(c, "tuning %s on first use failed: %s", op->name, pm_errmsg(tc));
  pm__db_close(db);
}

/* The thread: waits for a request, tunes it, refreshes serving; until pm_close. It tunes on a
 * context of its own, with its capture mode relaxed and on a non-blocking stream of its own, so
 * that a graph another thread is capturing meanwhile is neither joined nor invalidated by what it
 * does, and the program's streams neither wait for it nor hold it back. */
static void *run(void *arg) {
  pm_ctx *c = arg, *tc = NULL;
  struct pm__tuner *t = c->serve->tuner;
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaStream_t stream = NULL;
  if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess) cudaGetLastError();
  if (pm__ctx_create(&tc, c->device, c->db_path) != PM_OK) {
    pm__notice(c, "no background tuning: %s", tc != NULL ? pm_errmsg(tc) : "out of memory");
  } else if (cudaSetDevice(tc->device) != cudaSuccess ||
             cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    pm__notice(c, "no background tuning: %s", cudaGetErrorString(cudaGetLastError()));
    stream = NULL;
  }
  pm__tune_stream_set(stream);
  pthread_mutex_lock(&t->lock);
  for (;;) {
    while (!t->waiting && !t->stop) pthread_cond_wait(&t->wake, &t->lock);
    if (t->stop) break;
    const pm__op *op = t->op;
    pm__problem pr = t->pr;
    t->waiting = 0;
    if (stream == NULL) continue;
    t->running = 1, t->started++;
    pthread_mutex_unlock(&t->lock);
    tune_one(c, tc, op, &pr, c->serve->autotune_budget);
    pm__serve_refresh(c);
    pthread_mutex_lock(&t->lock);
    t->running = 0;
  }
  pthread_mutex_unlock(&t->lock);
  if (stream != NULL) cudaStreamDestroy(stream);
  if (tc != NULL) pm__util_free(tc), pm__ctx_free(tc);
  return NULL;
}

int pm__autotune_request(pm_ctx *c, const pm__op *op, const pm__problem *pr) {
  pm__serve *s = c->serve;
  struct pm__tuner *t = s->tuner;
  if (t == NULL) { /* the first request: the thread */
    if ((t = pm__calloc(1, sizeof *t)) == NULL) return 0;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    s->tuner = t;
    if (pthread_create(&t->thread, NULL, run, c) != 0) {
      pm__notice(c, "no background tuning: a thread could not be made");
      s->tuner = NULL;
      pthread_cond_destroy(&t->wake);
      pthread_mutex_destroy(&t->lock);
      free(t);
      s->autotune = 0;
      return 0;
    }
  }
  pthread_mutex_lock(&t->lock);
  int taken = !t->waiting && !t->running && !t->stop;
  if (taken) {
    t->op = op, t->pr = *pr, t->waiting = 1;
    t->pr.caller_align = 0;
    pthread_cond_signal(&t->wake);
  }
  pthread_mutex_unlock(&t->lock);
  return taken;
}

int pm__autotune_busy(pm_ctx *c, int *started) {
  struct pm__tuner *t = c->serve != NULL ? c->serve->tuner : NULL;
  if (started != NULL) *started = 0;
  if (t == NULL) return 0;
  pthread_mutex_lock(&t->lock);
  int busy = t->waiting || t->running;
  if (started != NULL) *started = t->started;
  pthread_mutex_unlock(&t->lock);
  return busy;
}

void pm__autotune_stop(pm_ctx *c) {
  struct pm__tuner *t = c->serve->tuner;
  if (t == NULL) return;
  pthread_mutex_lock(&t->lock);
  t->stop = 1;
  pthread_cond_signal(&t->wake);
  pthread_mutex_unlock(&t->lock);
  pthread_join(t->thread, NULL);
  pthread_cond_destroy(&t->wake);
  pthread_mutex_destroy(&t->lock);
  free(t);
  c->serve->tuner = NULL;
}

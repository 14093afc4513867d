/* autotune.c: tuning sizes on first use (pm_options.autotune, PMTUNE_AUTOTUNE=1) in a background
 * thread of the context: a call (of a built-in op or a kernel of one's own) that meets a size far
 * from every tuned one asks for it and is
 * served at once; the thread runs a short random search on a stream of its own, in a tuning
 * session of its own (tuner/session.h: a handle of its own on the tuning database, one job, no
 * run recorded, nothing carried), and moves serving to a new epoch so that later calls use it. */
#include <math.h>
#include <stdlib.h>

#include "runtime.h"
#include "session.h"
#include "timer.h"

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

/* Tunes pr on tc (the thread's own context: its errors never show in the caller's pm_errmsg)
 * in a tuning session of its own, a random search of `budget` points stored without a run
 * recorded, in c's database, where op is a kernel of one's own its template made current; a
 * failure is said on c with pm__notice (the calls are served as if nothing had been tuned). */
static void tune_one(pm_ctx *c, pm_ctx *tc, const pm__op *op, const pm__problem *pr, int budget) {
  pm__session *s = NULL;
  pm__session_opts o;
  pm__session_job job = {op, *pr};
  job.pr.caller_align = 0; /* the tuner measures on its own buffers, laid out as each point says */
  pm__session_opts_default(&o);
  o.db_path = tc->db_path;
  o.own = pm__op_find(op->name) != op ? op : NULL;
  o.tune.strategy = PM__STRATEGY_RANDOM;
  o.tune.budget = (uint64_t)budget;
  if (pm__session_open(&s, tc, &o) != PM_OK) {
    pm__notice(c, "%s: %s is not tuned on first use", pm_errmsg(tc), op->name);
    return;
  }
  if (pm__session_run(s, &job, 1, NULL) != PM_OK)
    pm__notice(c, "tuning %s on first use failed: %s", op->name, pm_errmsg(tc));
  pm__session_close(s);
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

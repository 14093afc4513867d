/* tune.h: tuning one problem on one GPU: compile every candidate (from the database's cubin cache
 * where it can), verify each against the reference, time the good ones, re-time the best few
 * interleaved, and store every measurement. */
#ifndef PM_TUNE_H
#define PM_TUNE_H

#include <signal.h>

#include "compile.h"
#include "pmdb.h"

/* How the candidates are chosen. EXHAUSTIVE: every valid point. RANDOM: the seed and a seeded
 * random sample of `budget` points. STAGED: the same sample, then rounds of the one-axis
 * neighbours of the best 4 so far until a round finds nothing faster (at most 4 rounds). AUTO:
 * exhaustive where a space has at most PM__AUTO_EXHAUSTIVE valid points, else staged. LISTED:
 * the points of `extra` alone (carrying: the best of the other sizes timed at this one). Every
 * strategy measures the seed and the problem's default (pm__is_default) too, and `extra`. */
enum {
  PM__STRATEGY_AUTO,
  PM__STRATEGY_EXHAUSTIVE,
  PM__STRATEGY_RANDOM,
  PM__STRATEGY_STAGED,
  PM__STRATEGY_LISTED
};
#define PM__AUTO_EXHAUSTIVE 1500

/* Where a tuning run is, for a progress display. */
typedef struct pm__tune_progress {
  const char *op;
  const char *problem;  /* "4097x3001 row-major" */
  const char *phase;    /* "compiling", "measuring", "re-timing", "done" */
  uint64_t done, total; /* candidates of this phase */
  double best_ms;       /* the best median so far (0: none yet) */
  double best_gbps;
  double elapsed_s;
} pm__tune_progress;

typedef struct pm__tune_opts {
  int strategy;          /* PM__STRATEGY_* (default AUTO) */
  uint64_t budget;       /* random, staged: how many points to sample (the seed comes on top) */
  double deadline_ms;    /* pm__now_ms() past which no new candidate starts (0: none) */
  int samples;           /* timed runs per candidate (default 7; 1 for a candidate whose first
                            run takes over twice the best median so far) */
  int top;               /* how many of the best to re-time interleaved (default 5) */
  int rounds;            /* interleaved rounds of that, 3 runs each per round (default 5) */
  int allow_nondeterministic;
  uint64_t seed;         /* for the random strategy and the input data (0: fixed default) */
  const int (*extra)[PM__MAX_PARAMS]; /* points measured whatever the strategy (those invalid for
                                         the problem are left out), nextra of them */
  size_t nextra;
  int model;             /* what any GPU of this one's model measured counts as measured, is
                            not measured again (carrying after an import of a fleet's exports) */
  volatile sig_atomic_t *stop; /* set (by a signal handler) to stop after the current candidate */
  void (*progress)(void *arg, const pm__tune_progress *p);
  void *progress_arg;
} pm__tune_opts;

/* What tuning a problem did and found. */
typedef struct pm__tune_result {
  uint64_t candidates;   /* points chosen (valid for the problem) */
  uint64_t same_launch;  /* valid points left out: each launches what a candidate does */
  uint64_t skipped;      /* already measured in the database: not measured again */
  uint64_t kernels;      /* distinct kernels needed */
  uint64_t compiled;     /* of them, compiled now (the rest came from the cubin cache) */
  uint64_t measured, wrong, failed; /* timed; rejected by verification; failed to compile or run */
  double compile_ms, verify_ms, time_ms, total_ms; /* wall time spent on each */
  double place_ms;       /* of total_ms, laying the data out for each layout the candidates use */
  double warm_ms;        /* of total_ms, running the GPU up to its clocks after it was idle */
  int have_winner;       /* among the candidates measured now */
  char winner[PM__CONFIG_TEXT];
  double winner_ms, winner_gbps, seed_ms; /* seed_ms 0: not measured now */
  char runner_up[PM__CONFIG_TEXT];
  double runner_up_ms;
  int within_noise;      /* the runner-up is within the winner's run-to-run spread */
  int stopped;           /* stopped early (signal or deadline) */
} pm__tune_result;

void pm__tune_opts_default(pm__tune_opts *o);

/* Tunes pr on c's device, storing into db under gpu_id and run_id. PM_OK even where candidates
 * failed (each is stored with its reason); an error only where tuning could not go on. */
int pm__tune_problem(pm_ctx *c, pm__db *db, int64_t gpu_id, int64_t run_id, const pm__op *op,
                     const pm__problem *pr, const pm__tune_opts *o, pm__tune_result *res);

/* Compiles, with `threads` threads (0: pm__compile_threads), the kernels that
 * pm__tune_problem(c's device, db, gpu_id, op, pr, o) will want first and that db's cubin cache
 * lacks, and stores them there; loads nothing and needs no GPU. Another thread running it for the
 * next problems while one tunes overlaps the compiling of a run with its measuring; it checks
 * o->stop between slices of candidates. res counts kernels, compiled and total_ms. c and db are
 * this thread's own. */
int pm__tune_precompile(pm_ctx *c, pm__db *db, int64_t gpu_id, const pm__op *op,
                        const pm__problem *pr, const pm__tune_opts *o, int threads,
                        pm__tune_result *res);

/* ---- Timing operations (the protocol is timer.h's) --------------------------------------- */

/* pm__time_batches of point v on d: each sample runs v once on each of d's copies (d->copies,
 * from pm__copies_for). */
int pm__time_runs(pm_ctx *c, pm__timer *t, const pm__op *op, const pm__module *k, const int *v,
                  pm__data *d, int samples, double *ms);

#endif /* PM_TUNE_H */

/* test_session.c: the tuning session (tuner/session.c) without a GPU, its tuning and compiling
 * ahead stood in for: the run recorded and ended as the jobs went, each job tuned in order once
 * its kernels were compiled ahead, the groups carried across the sizes the jobs measured, and
 * what the callback hears, in order; a failure, a stop, a session without a run (tuning on
 * first use's) and carrying alone. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dbtest.h"
#include "session.h"

static pm_ctx *c;
static char dir[64], path[128];

/* What the stand-ins saw and did. */
static const pm__session_job *jobs; /* the jobs of the run under test */
static int njobs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int precompiled[8];     /* by job: compiled ahead (under lock) */
static int tuned_unready;      /* jobs tuned before their compiling ahead was done */
static char calls[512];        /* the stand-in tuner's calls: "T0 T1 C64x64 ..." */
static char heard[512];        /* the events: "tuned 0, carried 0 (2 sizes), failed 1, ..." */
static char error[256];        /* the last FAILED event's message */
static int64_t runs_seen[8];   /* the run ids the tuner was handed, by call */
static int ncalls;
static int fail_job = -1;      /* the job whose tuning fails (-1: none) */
static int fail_carrying;      /* carrying fails */
static volatile sig_atomic_t stop;
static int stop_after = -1;    /* the job after whose tuning stop is set (-1: never) */

static int job_index(const pm__problem *pr) {
  for (int i = 0; i < njobs; i++)
    if (pr == &jobs[i].pr) return i;
  return -1; /* a size carried to */
}

static int stub_precompile(pm_ctx *tc, pm__db *db, int64_t gpu_id, const pm__op *op,
                           const pm__problem *pr, const pm__tune_opts *o, int threads,
                           pm__tune_result *res) {
  (void)tc, (void)db, (void)gpu_id, (void)threads;
  int i = job_index(pr);
  if (i < 0) { /* carrying: the group's configurations, compiled before any size is timed */
    char text[96];
    cr_assert_eq(o->strategy, PM__STRATEGY_LISTED, "carrying compiles listed points alone");
    pm__problem_text(op, pr, text, sizeof text);
    snprintf(calls + strlen(calls), sizeof calls - strlen(calls), "P%s(%zu) ", text, o->nextra);
    memset(res, 0, sizeof *res);
    return PM_OK;
  }
  nanosleep(&(struct timespec){0, 20 * 1000000}, NULL); /* slower than the tuning stood in for */
  memset(res, 0, sizeof *res);
  res->compiled = 2, res->total_ms = 1;
  pthread_mutex_lock(&lock);
  precompiled[i] = 1;
  pthread_mutex_unlock(&lock);
  return PM_OK;
}

/* Tunes nothing: stores the seed as measured at pr (a job; where carried, nothing) and says so. */
static int stub_tune(pm_ctx *tc, pm__db *db, int64_t gpu_id, int64_t run_id, const pm__op *op,
                     const pm__problem *pr, const pm__tune_opts *o, pm__tune_result *res) {
  int i = job_index(pr);
  char text[96];
  memset(res, 0, sizeof *res);
  if (ncalls < 8) runs_seen[ncalls] = run_id;
  ncalls++;
  if (i < 0) {
    cr_assert_eq(o->strategy, PM__STRATEGY_LISTED, "a size carried to is timed at listed points");
    cr_assert_eq(o->top, 0, "carrying re-times nothing");
    cr_assert_geq(o->nextra, 1, "carrying lists the best configurations around the size");
    pm__problem_text(op, pr, text, sizeof text);
    snprintf(calls + strlen(calls), sizeof calls - strlen(calls), "C%s ", text);
    if (fail_carrying) return pm__seterr(tc, PM_EDB, "stand-in: carrying failed");
    res->measured = o->nextra;
    return PM_OK;
  }
  cr_assert_neq(o->strategy, PM__STRATEGY_LISTED, "a job is searched");
  pthread_mutex_lock(&lock);
  tuned_unready += njobs > 1 && !precompiled[i];
  pthread_mutex_unlock(&lock);
  snprintf(calls + strlen(calls), sizeof calls - strlen(calls), "T%d ", i);
  if (i == fail_job) return pm__seterr(tc, PM_ELAUNCH, "stand-in: job %d failed", i);
  if (i == stop_after) stop = 1;
  char params[PM__DB_PARAMS_MAX], config[PM__CONFIG_TEXT];
  pm__db_problem dbp;
  pm__config_json(op, op->seed, params, sizeof params);
  pm__config_text(op, op->seed, config, sizeof config);
  pm__op_db_problem(op, pr, &dbp);
  pm__db_measurement m = dbtest_measurement(gpu_id, dbp, pm__op_template(op)->sha256, params, 1);
  m.run_id = run_id, m.config = config, m.is_seed = 1;
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(tc));
  res->candidates = 3, res->measured = 1, res->compile_ms = 5, res->total_ms = 10;
  return PM_OK;
}

static void listen(void *arg, const pm__session_event *e) {
  cr_assert_eq(arg, &heard, "the callback is handed its argument");
  size_t n = strlen(heard);
  if (e->what == PM__SESSION_TUNED) {
    cr_assert_not_null(e->r);
    cr_assert_not_null(e->ahead);
    cr_assert_eq(e->job, &jobs[e->index]);
    snprintf(heard + n, sizeof heard - n, "tuned %d, ", e->index);
  } else if (e->what == PM__SESSION_CARRIED) {
    cr_assert_eq(e->job, &jobs[e->index]);
    snprintf(heard + n, sizeof heard - n, "carried %d (%zu sizes%s%s), ", e->index, e->sizes,
             e->from_model ? " of " : "", e->from_model ? e->from_model : "");
  } else {
    cr_assert_eq(e->what, PM__SESSION_FAILED);
    snprintf(error, sizeof error, "%s", e->error);
    snprintf(heard + n, sizeof heard - n, "failed %d%s, ", e->index,
             e->carrying ? " carrying" : "");
  }
}

static void setup(void) {
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/t.db", dir);
  cr_assert_eq(pm__ctx_create(&c, PM_DEVICE_NONE, NULL), PM_OK);
  c->dev = dbtest_gpu(0, 0);
  memset(precompiled, 0, sizeof precompiled);
  tuned_unready = ncalls = fail_carrying = 0;
  fail_job = stop_after = -1;
  stop = 0;
  calls[0] = heard[0] = error[0] = '\0';
}

static void teardown(void) {
  pm__ctx_free(c);
  dbtest_cleanup(dir);
}

TestSuite(session, .init = setup, .fini = teardown, .timeout = 60);

/* Options with the stand-ins, the callback and the run's command line. */
static pm__session_opts opts(int carry) {
  pm__session_opts o;
  pm__session_opts_default(&o);
  o.db_path = path;
  o.command_line = "pmtune tune (test)";
  o.stopped_why = "stopped (test)";
  o.carry = carry;
  o.tune.stop = &stop;
  o.report = listen;
  o.report_arg = &heard;
  o.tune_problem = stub_tune;
  o.precompile = stub_precompile;
  return o;
}

/* Opens a session with o and runs js[0, n) in it; returns the run's status. */
static int run(const pm__session_opts *o, const pm__session_job *js, int n,
               pm__session_sums *sums) {
  pm__session *s = NULL;
  jobs = js, njobs = n;
  cr_assert_eq(pm__session_open(&s, c, o), PM_OK, "%s", pm_errmsg(c));
  cr_assert_not_null(pm__session_db(s));
  cr_assert_gt(pm__session_gpu(s), 0, "the GPU is recorded");
  int rc = pm__session_run(s, js, n, sums);
  pm__session_close(s);
  return rc;
}

/* The runs recorded, "status|message|command line" a line. */
static char *runs(void) {
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  char *rows = dbtest_rows(h, "SELECT status, message, command_line FROM run ORDER BY id");
  sqlite3_close(h);
  return rows;
}

/* Two matadd sizes of one group, and an add size of its own group. */
static const pm__session_job three[] = {
    {&pm__op_matadd, {.rows = 64, .cols = 64}},
    {&pm__op_matadd, {.rows = 128, .cols = 128}},
    {&pm__op_add, {.n = 4096}},
};

Test(session, each_job_is_tuned_in_order_after_compiling_ahead_then_its_group_carried) {
  pm__session_opts o = opts(PM__CARRY_GPU);
  pm__session_sums sums;
  cr_assert_eq(run(&o, three, 3, &sums), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(tuned_unready, 0, "a job was tuned before its kernels were compiled ahead");
  cr_assert_str_eq(calls, "T0 T1 T2 P64x64 row-major(1) C64x64 row-major C128x128 row-major ",
                   "the jobs, then matadd's group compiled (the seed, once) and its two sizes "
                   "carried (add has one size: nothing)");
  cr_assert_str_eq(heard, "tuned 0, tuned 1, tuned 2, carried 0 (2 sizes), ");
  for (int i = 0; i < ncalls; i++)
    cr_assert(runs_seen[i] > 0 && runs_seen[i] == runs_seen[0], "call %d: run %lld", i,
              (long long)runs_seen[i]);
  cr_assert_eq(sums.tuned.candidates, 9);
  cr_assert_eq(sums.tuned.measured, 3 + 2, "the jobs' measurements and the carried ones");
  cr_assert_eq(sums.ahead.compiled, 6, "compiled ahead: each job's");
  cr_assert_geq(sums.tuned.compile_ms, 15, "the jobs' compiling, waiting included");
  char *r = runs();
  cr_assert_str_eq(r, "ok|NULL|pmtune tune (test)\n");
  free(r);
}

Test(session, a_failing_job_stops_the_run_and_ends_it_failed_with_its_reason) {
  pm__session_opts o = opts(PM__CARRY_GPU);
  fail_job = 1;
  cr_assert_eq(run(&o, three, 3, NULL), PM_ELAUNCH);
  cr_assert_str_eq(calls, "T0 T1 ", "nothing tuned or carried after the failure");
  cr_assert_str_eq(heard, "tuned 0, failed 1, ");
  cr_assert_str_eq(error, "stand-in: job 1 failed");
  char *r = runs();
  cr_assert_str_eq(r, "failed|stand-in: job 1 failed|pmtune tune (test)\n");
  free(r);
}

Test(session, a_stop_ends_the_run_failed_with_its_reason_and_carries_nothing) {
  pm__session_opts o = opts(PM__CARRY_GPU);
  stop_after = 0;
  cr_assert_eq(run(&o, three, 3, NULL), PM_OK, "a stop is no failure: %s", pm_errmsg(c));
  cr_assert_str_eq(calls, "T0 ");
  cr_assert_str_eq(heard, "tuned 0, ");
  char *r = runs();
  cr_assert_str_eq(r, "failed|stopped (test)|pmtune tune (test)\n");
  free(r);
}

Test(session, a_failed_carry_is_said_and_ends_the_run_failed) {
  pm__session_opts o = opts(PM__CARRY_GPU);
  fail_carrying = 1;
  cr_assert_eq(run(&o, three, 3, NULL), PM_EDB);
  cr_assert_str_eq(calls, "T0 T1 T2 P64x64 row-major(1) C64x64 row-major ");
  cr_assert_str_eq(heard, "tuned 0, tuned 1, tuned 2, failed 0 carrying, ");
  cr_assert_str_eq(error, "stand-in: carrying failed");
  char *r = runs();
  cr_assert_str_eq(r, "failed|stand-in: carrying failed|pmtune tune (test)\n",
                   "the run's row says why it failed");
  free(r);
}

/* Tuning on first use's session: one job, no run recorded, nothing compiled ahead or carried. */
Test(session, without_a_command_line_one_job_is_tuned_with_no_run_recorded) {
  pm__session_opts o = opts(PM__CARRY_NONE);
  o.command_line = NULL;
  cr_assert_eq(run(&o, three, 1, NULL), PM_OK, "%s", pm_errmsg(c));
  cr_assert_str_eq(calls, "T0 ");
  cr_assert_eq(runs_seen[0], 0, "stored with run 0");
  cr_assert_eq(precompiled[0], 0, "one job: compiled as it is tuned, not ahead");
  cr_assert_str_eq(heard, "tuned 0, ");
  char *r = runs();
  cr_assert_str_eq(r, "", "no run recorded");
  free(r);
}

/* `pmtune tune --carry`: the sizes another GPU of this model measured (an import's) are carried
 * between, and no job is searched; a size where the model measured every configuration carried
 * already is not timed again (64 and 256 have both, 128 the seed alone). */
Test(session, carrying_alone_searches_nothing_and_carries_across_the_model_s_sizes) {
  pm__device_info other = dbtest_gpu(0, 1);
  const char *sha = pm__op_template(&pm__op_matadd)->sha256;
  char seed[PM__CONFIG_TEXT], tall[PM__CONFIG_TEXT];
  int v[PM__MAX_PARAMS];
  memcpy(v, pm__op_matadd.seed, sizeof v);
  pm__config_text(&pm__op_matadd, v, seed, sizeof seed);
  v[1] = 8; /* by */
  pm__config_text(&pm__op_matadd, v, tall, sizeof tall);
  for (unsigned side = 64; side <= 256; side *= 2) {
    pm__problem pr = {.rows = side, .cols = side};
    dbtest_put_config(c, path, &other, sha, &pm__op_matadd, pr, seed, 1.0);
    if (side != 128) dbtest_put_config(c, path, &other, sha, &pm__op_matadd, pr, tall, 1.5);
  }
  pm__session_opts o = opts(PM__CARRY_ONLY);
  cr_assert_eq(run(&o, three, 2, NULL), PM_OK, "%s", pm_errmsg(c));
  cr_assert_str_eq(calls, "P128x128 row-major(1) C128x128 row-major ",
                   "the one configuration left to time compiled first, then timed");
  cr_assert_str_eq(heard, "carried 0 (3 sizes), ", "one group, carried once");
  cr_assert_eq(precompiled[0] + precompiled[1], 0, "nothing searched: nothing compiled ahead");
  char *r = runs();
  cr_assert_str_eq(r, "ok|NULL|pmtune tune (test)\n");
  free(r);
}

/* `pmtune tune --carry` on a GPU whose model measured nothing of a group (an H200 with the H100's
 * results imported): the sizes of the nearest model of its architecture are carried, its best
 * configurations timed on this GPU; another architecture's never. */
Test(session, carrying_alone_takes_the_nearest_model_s_sizes_where_its_own_has_none) {
  pm__device_info sibling = dbtest_gpu(0, 2), older = dbtest_gpu(1, 0);
  snprintf(sibling.name, sizeof sibling.name, "Fake H100 NVL");
  sibling.sm_count = 114;
  const char *sha = pm__op_template(&pm__op_matadd)->sha256;
  char seed[PM__CONFIG_TEXT];
  pm__config_text(&pm__op_matadd, pm__op_matadd.seed, seed, sizeof seed);
  for (unsigned side = 64; side <= 256; side *= 2) {
    dbtest_put_config(c, path, &older, sha, &pm__op_matadd,
                      (pm__problem){.rows = side, .cols = 2 * side}, seed, 1.0);
    if (side < 256)
      dbtest_put_config(c, path, &sibling, sha, &pm__op_matadd,
                        (pm__problem){.rows = side, .cols = side}, seed, 1.0);
  }
  pm__session_opts o = opts(PM__CARRY_ONLY);
  cr_assert_eq(run(&o, three, 2, NULL), PM_OK, "%s", pm_errmsg(c));
  cr_assert_str_eq(calls, "P64x64 row-major(1) C64x64 row-major C128x128 row-major ",
                   "the sibling's two sizes, their configurations compiled in one batch first; "
                   "not the other architecture's three");
  cr_assert_str_eq(heard, "carried 0 (2 sizes of Fake H100 NVL), ");
}

Test(session, a_database_that_cannot_be_opened_opens_no_session) {
  pm__session_opts o = opts(PM__CARRY_NONE);
  char sentinel;
  pm__session *s = (pm__session *)&sentinel; /* made NULL by the failure */
  o.db_path = "/proc/pmtune-no-such-dir/t.db";
  cr_assert_neq(pm__session_open(&s, c, &o), PM_OK);
  cr_assert_null(s);
  cr_assert_not_null(strstr(pm_errmsg(c), "/proc/pmtune-no-such-dir"), "%s", pm_errmsg(c));
}

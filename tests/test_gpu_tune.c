/* test_gpu_tune.c: the tuner on a GPU: every op's small problem tuned into a fresh database, the
 * winner stored verified with its speedup over the seed, a second run measuring and compiling
 * nothing, and a stopped run resuming. Skips without a GPU. */
#include <stdio.h>
#include <unistd.h>

#include "testutil.h"
#include "tune.h"

static pm_ctx *ctx;
static pm__db *db;
static int64_t gpu_id;
static char path[64];

static void setup(void) {
  pm_test_require_gpu();
  cr_assert_eq(pm_open(&ctx, NULL), PM_OK, "%s", pm_errmsg(ctx));
  snprintf(path, sizeof path, "/tmp/pmtune-test-tune-%d.db", (int)getpid());
  unlink(path);
  cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_gpu_put(db, &ctx->dev, 0, 0, &gpu_id), PM_OK, "%s", pm_errmsg(ctx));
}
static void teardown(void) {
  pm__db_close(db);
  pm_close(ctx);
  unlink(path);
}

TestSuite(gpu_tune, .init = setup, .fini = teardown, .timeout = 600);

static long long count(const char *sql) {
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(pm__db_handle(db), sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
  long long n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

static void tune_twice(const pm__op *op, const pm__problem *pr) {
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = 40;
  o.seed = pm_test_seed();
  pm__tune_result r;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, op, pr, &o, &r), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(r.candidates, 41, "the budget, and the seed on top");
  cr_assert_eq(r.measured + r.wrong + r.failed, r.candidates);
  cr_assert_eq(r.wrong, 0, "no variant of the space may be wrong");
  cr_assert(r.have_winner);
  cr_assert_gt(r.seed_ms, 0, "the seed is always measured");
  cr_assert_leq(r.winner_ms, r.seed_ms * 1.05, "the winner is no slower than the seed");
  cr_assert_gt(r.compiled, 0);
  cr_assert_gt(r.compile_ms, 0);
  cr_assert_gt(r.verify_ms, 0);
  cr_assert_gt(r.time_ms, 0);

  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM winner w JOIN measurement m ON m.id = w.measurement_id"
           " WHERE w.op = '%s' AND m.verified = 1 AND m.status = 'ok' AND w.speedup > 0",
           op->name);
  cr_assert_eq(count(sql), 1, "one winner, verified, with a speedup over the seed");
  snprintf(sql, sizeof sql, "SELECT count(*) FROM measurement WHERE op = '%s'", op->name);
  long long rows = count(sql);
  cr_assert_geq(rows, 41);

  /* again: everything is stored, so nothing is compiled or measured */
  pm__tune_result again;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, op, pr, &o, &again), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(again.skipped, again.candidates);
  cr_assert_eq(again.compiled, 0);
  cr_assert_eq(again.measured, 0);
  cr_assert_eq(count(sql), rows);
}

Test(gpu_tune, matadd_random_budget) {
  pm__problem pr = {.rows = 1000, .cols = 1003};
  tune_twice(&pm__op_matadd, &pr);
}

Test(gpu_tune, reduce_random_budget) {
  pm__problem pr = {.n = 1000003};
  tune_twice(&pm__op_reduce, &pr);
}

Test(gpu_tune, filter_random_budget) {
  pm__problem pr = {.rows = 700, .cols = 900, .radius = 2, .variant = PM_BORDER_ZERO};
  tune_twice(&pm__op_filter, &pr);
}

Test(gpu_tune, staged_search_adds_neighbours_of_the_best) {
  pm__problem pr = {.rows = 640, .cols = 480};
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_STAGED;
  o.budget = 30;
  pm__tune_result r;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &r), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_gt(r.candidates, 31, "the draw and the seed, then neighbours: %llu",
               (unsigned long long)r.candidates);
  cr_assert_eq(r.measured + r.wrong + r.failed, r.candidates);
  cr_assert_eq(r.wrong, 0);
  cr_assert(r.have_winner);
  cr_assert_leq(r.winner_ms, r.seed_ms * 1.05);
  pm__tune_result again;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &again), PM_OK);
  cr_assert_eq(again.measured, 0, "the same draw, all stored: nothing measured again");
  cr_assert_eq(again.compiled, 0);
}

Test(gpu_tune, a_stopped_run_resumes_where_it_stopped) {
  pm__problem pr = {.rows = 300, .cols = 200, .variant = PM_COL_MAJOR};
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = 30;
  volatile sig_atomic_t stop = 0;
  o.stop = &stop;
  o.deadline_ms = pm__now_ms() - 1; /* past already: stops before the first candidate */
  pm__tune_result r;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &r), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert(r.stopped);
  cr_assert_eq(r.measured, 0);
  o.deadline_ms = 0;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &r), PM_OK);
  cr_assert_not(r.stopped);
  cr_assert_eq(r.measured + r.failed + r.wrong, 31);
  cr_assert_eq(r.compiled, 0, "the stopped run had compiled and stored the cubins");
}

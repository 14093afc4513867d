/* test_gpu_fault.c: faults injected (core/fault.h) into real work on a GPU: a short tuning run
 * with each of its CUDA call sites failing in turn (out of memory at every cudaMalloc, a failed
 * launch, a failed copy or event...), each of its NVRTC calls failing (a failed compile), and the
 * first call of each op (pm_matadd, pm_reduce_sum, pm_filter, pm_add) with every CUDA, NVRTC
 * and allocation call of it failing in turn. After each: a clear status, or (a fault the tuner
 * records as a failed candidate, or one a call falls back from) the right result; the next
 * tuning or call without a fault works and is right; nothing committed before is lost; the
 * database passes db check. Skips without a GPU. */
#include <stdio.h>
#include <unistd.h>

#include "dbtest.h"
#include "faulttest.h"
#include "runtime.h"
#include "testutil.h"
#include "tune.h"

static pm_ctx *ctx;
static char dir[64], path[128];
static int64_t gpu_id;

static void setup(void) {
  pm_test_require_gpu();
  cr_assert_eq(pm_open(&ctx, &(pm_options){.device = 0}), PM_OK, "%s", pm_errmsg(ctx));
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/t.db", dir);
}

static void teardown(void) {
  disarm();
  pm_close(ctx);
  dbtest_cleanup(dir);
}

TestSuite(gpu_fault, .init = setup, .fini = teardown, .timeout = 900);

/* ---- The database: what was committed, and whether it is sound ----------------------------- */

/* The measurements stored (without when), one a line. */
static char *rows_of(const char *file) {
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open_v2(file, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  char *r = dbtest_rows(h, "SELECT gpu_id, op, problem, config, status, median_ms FROM measurement"
                           " ORDER BY 1, 2, 3, 4");
  sqlite3_close(h);
  return r;
}

static int problems_in(const char *file) { return dbtest_problems(ctx, file); }

/* The file's bytes, put back before each run (no WAL beside it: the database is closed). */
static char *image;
static size_t image_len;

static void restore(void) {
  char side[160];
  snprintf(side, sizeof side, "%s-wal", path), unlink(side);
  snprintf(side, sizeof side, "%s-shm", path), unlink(side);
  dbtest_write(path, image, image_len);
}

/* ---- Tuning --------------------------------------------------------------------------------- */

static const pm__problem tuned_before = {.n = 1 << 18}; /* add: committed before every fault */
static const pm__problem tuned_now = {.rows = 512, .cols = 768};   /* matadd: the run faulted */

/* Tunes op on pr into the database at path (a short random search); its status. */
static int tune(const pm__op *op, const pm__problem *pr, pm__tune_result *r) {
  pm__db *db = NULL;
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = 8;
  o.seed = 1;
  int rc = pm__db_open(ctx, path, 0, pm__ops_db(), &db);
  if (rc == PM_OK) rc = pm__db_gpu_put(db, &ctx->dev, 0, 0, &gpu_id);
  if (rc == PM_OK) rc = pm__tune_problem(ctx, db, gpu_id, 0, op, pr, &o, r);
  pm__db_close(db);
  return rc;
}

/* After a faulted run: its status (clear where it failed), what was committed before still
 * there, the file sound, and the next run without a fault finishing with a winner. */
static void after_fault(int rc, const injector *in, const char *before, int n) {
  const char *kind = faulttest_kind_names[in->kind];
  if (rc != PM_OK) {
    const char *m = pm_errmsg(ctx);
    cr_assert(m[0] != '\0' && strcmp(m, "success") != 0, "%s %s #%d: no message", kind, in->site,
              n);
    cr_log_info("%s %s #%d: %s: %.200s", kind, in->site, n, pm_errname(rc), m);
  }
  char *now = rows_of(path);
  cr_assert_not_null(strstr(now, before), "%s %s #%d: what was committed before is lost", kind,
                     in->site, n);
  free(now);
  cr_assert_eq(problems_in(path), 0, "%s %s #%d left the database unsound", kind, in->site, n);
  pm__tune_result r;
  cr_assert_eq(tune(&pm__op_matadd, &tuned_now, &r), PM_OK, "after %s %s #%d: %s", kind, in->site,
               n, pm_errmsg(ctx));
  cr_assert(r.have_winner || r.skipped == r.candidates, "after %s %s #%d: no winner", kind,
            in->site, n);
  cr_assert_eq(problems_in(path), 0);
}

/* The database with add tuned (committed), and the CUDA sites a tuning of matadd calls. */
static void tuning_setup(injector *sites) {
  pm__tune_result r;
  cr_assert_eq(tune(&pm__op_add, &tuned_before, &r), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert(r.have_winner);
  image = dbtest_slurp(path, &image_len);
  arm_at(sites, PM__FAULT_CUDA, NULL, 0, 1);
  cr_assert_eq(tune(&pm__op_matadd, &tuned_now, &r), PM_OK, "%s", pm_errmsg(ctx));
  disarm();
  cr_assert_gt(sites->nsites, 5, "the hook is not reached by CUDA calls");
  restore();
}

Test(gpu_fault, each_cuda_call_site_of_a_tuning_run_fails_cleanly) {
  injector sites, in;
  tuning_setup(&sites);
  char *before = rows_of(path);
  int failed = 0;
  for (int i = 0; i < sites.nsites; i++) {
    for (int n = 1; n <= 2; n++) { /* the site's first call, and its second */
      pm__tune_result r;
      restore();
      arm_at(&in, PM__FAULT_CUDA, sites.sites[i], n, 1);
      int rc = tune(&pm__op_matadd, &tuned_now, &r);
      disarm();
      if (!in.fired) continue;
      failed += rc != PM_OK;
      fprintf(stderr, "gpu fault: cuda %s call %d: %s\n", sites.sites[i], n,
              rc == PM_OK ? "tuning went on (a failed candidate stored)" : pm_errname(rc));
      after_fault(rc, &in, before, n);
    }
  }
  fprintf(stderr, "gpu fault: tuning: %d CUDA call sites, each failed at its first and second "
                  "call; %d faults stopped the run\n", sites.nsites, failed);
  free(before);
  free(image);
}

Test(gpu_fault, a_launch_failing_midway_through_a_tuning_run_fails_only_its_candidate) {
  injector sites, in;
  tuning_setup(&sites);
  char *before = rows_of(path);
  for (int n = 1; n <= 40; n += 13) { /* launches of the seed, of candidates, of re-timing */
    pm__tune_result r;
    restore();
    /* the launch site: core/kernel.c's cudaLaunchKernelExC, the last of that file's sites (its
     * loading, cudaLibraryLoadData, comes first in the file and in a run) */
    const char *launch = NULL;
    for (int i = 0; i < sites.nsites; i++) {
      const char *k = strstr(sites.sites[i], "core/kernel.c:");
      if (k != NULL && (launch == NULL || atoi(strrchr(sites.sites[i], ':') + 1) >
                                              atoi(strrchr(launch, ':') + 1)))
        launch = sites.sites[i];
    }
    cr_assert_not_null(launch, "no launch among the CUDA sites");
    arm_at(&in, PM__FAULT_CUDA, launch, n, 1);
    int rc = tune(&pm__op_matadd, &tuned_now, &r);
    disarm();
    cr_assert(in.fired, "fewer than %d launches", n);
    cr_assert(rc == PM_OK || rc == PM_ELAUNCH, "launch %d: %s", n, pm_errmsg(ctx));
    after_fault(rc, &in, before, n);
  }
  free(before);
  free(image);
}

Test(gpu_fault, each_nvrtc_call_of_a_tuning_run_fails_one_candidate_as_a_compile_error) {
  injector sites, in;
  tuning_setup(&sites);
  char *before = rows_of(path);
  int n = 1;
  for (;; n++) {
    pm__tune_result r;
    restore();
    arm_at(&in, PM__FAULT_NVRTC, NULL, n, 1);
    int rc = tune(&pm__op_matadd, &tuned_now, &r);
    disarm();
    if (!in.fired) break;
    cr_assert_eq(rc, PM_OK, "NVRTC call %d: %s", n, pm_errmsg(ctx));
    cr_assert_geq(r.failed, 1, "NVRTC call %d failed, yet no candidate failed", n);
    char *now = rows_of(path);
    cr_assert_not_null(strstr(now, "compile_error"), "NVRTC call %d: no compile error stored", n);
    free(now);
    after_fault(rc, &in, before, n);
  }
  fprintf(stderr, "gpu fault: tuning: %d NVRTC calls, each failed\n", n - 1);
  cr_assert_gt(n, 4);
  free(before);
  free(image);
}

/* ---- Calls ---------------------------------------------------------------------------------- */

static const pm__problem called[] = {
    {.rows = 1000, .cols = 700},                            /* matadd (padded: served as matadd) */
    {.n = 1000003},                                         /* reduce */
    {.rows = 300, .cols = 500, .radius = 1, .variant = 0},  /* filter */
    {.n = 123457}};                                         /* add */
static const pm__op *const called_ops[] = {&pm__op_matadd, &pm__op_reduce, &pm__op_filter,
                                           &pm__op_add};

/* Calls op once on data laid out with padding (a fresh context on path, so that the call takes
 * the slow path: deciding, compiling or fetching the kernel, loading it, scratch), then checks
 * the result where the call succeeded. *verified: the result was checked right. */
static int call_once(const pm__op *op, const pm__problem *pr, int *verified) {
  pm_ctx *c = NULL;
  pm__data d = {0};
  *verified = 0;
  int rc = pm_open(&c, &(pm_options){.device = 0, .db_path = path});
  if (rc == PM_OK) rc = op->prepare(op, c, pr, 7, &d);
  if (rc == PM_OK) rc = pm__data_place(c, &d, 128);
  if (rc == PM_OK) rc = pm_test_call_op(c, op, &d, NULL);
  if (rc == PM_OK) disarm(); /* the call is what is faulted, not the test's own check of it */
  if (rc == PM_OK && cudaDeviceSynchronize() == cudaSuccess) {
    pm__decision dec;
    pm__problem asked = d.pr;
    asked.caller_align = 16;
    double err;
    pm__serve_decide(c, op, &asked, &dec);
    cr_assert_eq(op->verify(op, c, dec.v, &d, &err), PM_OK, "%s: %s", op->name, pm_errmsg(c));
    *verified = 1;
  }
  if (rc != PM_OK) {
    const char *m = pm_errmsg(c);
    cr_assert(m[0] != '\0' && strcmp(m, "success") != 0, "%s: no message", op->name);
  }
  pm__data_free(&d);
  pm_close(c);
  return rc;
}

Test(gpu_fault, every_call_of_each_ops_first_call_fails_cleanly_and_the_next_call_works) {
  pm__tune_result r;
  cr_assert_eq(tune(&pm__op_add, &tuned_before, &r), PM_OK, "%s", pm_errmsg(ctx));
  image = dbtest_slurp(path, &image_len);
  char *before = rows_of(path);
  for (size_t o = 0; o < sizeof called_ops / sizeof *called_ops; o++) {
    const pm__op *op = called_ops[o];
    for (int k = 0; k < PM__FAULT_KINDS; k++) {
      if (k == PM__FAULT_SQLITE) continue; /* the CPU walks (test_fault) cover SQLite's calls */
      int n = 1, failed = 0, verified;
      for (;; n++) {
        injector in;
        restore(); /* no cubin stored: the call compiles */
        arm_at(&in, (pm__fault_kind)k, NULL, n, 1);
        int rc = call_once(op, &called[o], &verified);
        disarm();
        if (!in.fired) {
          cr_assert_eq(rc, PM_OK, "%s without a fault: %s", op->name, pm_errmsg(ctx));
          break;
        }
        failed += rc != PM_OK;
        cr_assert(rc != PM_OK || verified, "%s: %s call %d (%s): success, but not checked",
                  op->name, faulttest_kind_names[k], n, in.site);
        /* the next call, without a fault, works and is right; nothing committed is lost */
        cr_assert_eq(call_once(op, &called[o], &verified), PM_OK, "%s after %s call %d: %s",
                     op->name, faulttest_kind_names[k], n, pm_errmsg(ctx));
        cr_assert(verified);
        char *now = rows_of(path);
        cr_assert_not_null(strstr(now, before), "%s %s call %d: the committed rows are lost",
                           op->name, faulttest_kind_names[k], n);
        free(now);
        cr_assert_eq(problems_in(path), 0, "%s %s call %d", op->name, faulttest_kind_names[k], n);
      }
      fprintf(stderr, "gpu fault: first %s call: %d %s calls, each failed (%d failed the call)\n",
              op->name, n - 1, faulttest_kind_names[k], failed);
    }
  }
  free(before);
  free(image);
}

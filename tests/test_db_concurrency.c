/* test_db_concurrency.c: many processes tuning into one database file and many reading it at
 * once: no row lost, no "database is locked" ever reaching a caller. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "dbtest.h"

#define WRITERS 8
#define READERS 8
#define OWN 40    /* measurements only writer w stores */
#define SHARED 10 /* measurements every writer stores: the same rows, upserted */

static char dir[64], path[128];
static const char *sha; /* the embedded matadd template's: the one pmtune makes current */

static void setup(void) {
  dbtest_mkdir(dir);
  cr_assert_not_null(pm__template_find("matadd"));
  sha = pm__template_find("matadd")->sha256;
}
static void teardown(void) { dbtest_cleanup(dir); }

TestSuite(db_concurrency, .init = setup, .fini = teardown, .timeout = 120);

/* A child reports a failure on stderr (which Criterion shows) and exits with 1. */
static void child_fail(int who, const char *what, pm_ctx *c) {
  fprintf(stderr, "child %d: %s: %s\n", who, what, pm_errmsg(c));
  _exit(1);
}

/* Blocks until the parent closes the pipe's write end: every child then starts at once. */
static void wait_for_start(int fd) {
  char ch;
  while (read(fd, &ch, 1) < 0 && errno == EINTR) {
  }
  close(fd);
}

/* Writer w: records the (same) GPU, runs, and stores its own and the shared measurements, each
 * in its own transaction as a tuning run does, opening the file anew now and then. */
static void writer(int w, int start) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  if (pm_open(&c, &o) != PM_OK) _exit(2);
  wait_for_start(start);
  pm__db *db = NULL;
  int64_t gpu = 0, run = 0;
  pm__device_info d = dbtest_gpu(0, 0);
  if (pm__db_open(c, path, 0, pm__ops_db(), &db) != PM_OK) child_fail(w, "open", c);
  if (pm__db_gpu_put(db, &d, 12040, 12080, &gpu) != PM_OK) child_fail(w, "gpu", c);
  if (pm__db_run_begin(db, gpu, "writer", &run) != PM_OK) child_fail(w, "run_begin", c);
  for (int i = 0; i < OWN + SHARED; i++) {
    char params[64];
    int shared = i >= OWN;
    snprintf(params, sizeof params, "{\"bx\":%d,\"by\":%d}", shared ? 1000 + i : w, shared ? 0 : i);
    pm__db_measurement m =
        dbtest_measurement(gpu, dbtest_matadd(4096, 4096), sha, params, 1.0 + w + i);
    m.run_id = run;
    if (pm__db_measurement_put(db, &m) != PM_OK) child_fail(w, "put", c);
    if (i % 10 == 9) { /* as separate runs would */
      pm__db_close(db);
      db = NULL;
      if (pm__db_open(c, path, 0, pm__ops_db(), &db) != PM_OK) child_fail(w, "reopen", c);
    }
  }
  pm__db_cubin_key k = {sha, "-DBX=32", "sm_90", "13.0", w};
  pm__cubin b = {.data = "\177ELF....", .size = 8};
  if (pm__db_cubin_put(db, &k, &b) != PM_OK) child_fail(w, "cubin", c);
  if (pm__db_run_end(db, run, PM__DB_RUN_OK, NULL) != PM_OK) child_fail(w, "run_end", c);
  pm__db_close(db);
  pm_close(c);
  _exit(0);
}

/* Reader r: opens read-only, as library calls do, and looks up winners and counts rows until it
 * has seen every row; the count it sees never goes down. */
static void reader(int r, int start) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  if (pm_open(&c, &o) != PM_OK) _exit(2);
  wait_for_start(start);
  const int64_t expect = WRITERS * OWN + SHARED;
  int64_t seen = 0;
  pm__device_info d = dbtest_gpu(0, 0);
  pm__db_problem p = dbtest_matadd(4096, 4096);
  double deadline = pm__now_ms() + 60000;
  for (int round = 0; seen < expect; round++) {
    if (pm__now_ms() > deadline) {
      fprintf(stderr, "reader %d: saw %lld of %lld rows after 60 s\n", r, (long long)seen,
              (long long)expect);
      _exit(1);
    }
    pm__db *db = NULL;
    int rc = pm__db_open(c, path, PM__DB_READONLY, pm__ops_db(), &db);
    if (rc == PM_ENOTFOUND) { /* not created yet: a library call falls back to defaults */
      nanosleep(&(struct timespec){0, 2000000}, NULL);
      continue;
    }
    if (rc != PM_OK) child_fail(r, "open read-only", c);
    for (int i = 0; i < 5 && seen < expect; i++) {
      pm__db_winner w;
      rc = pm__db_winner_get(db, &d, &p, sha, &w);
      if (rc != PM_OK && rc != PM_ENOTFOUND) child_fail(r, "winner", c);
      rc = pm__db_winner_nearest(db, &d, &p, sha, &w);
      if (rc != PM_OK && rc != PM_ENOTFOUND) child_fail(r, "nearest", c);
      int found;
      if (pm__db_measured(db, 1, &p, "bx=0 by=0", sha, &found) != PM_OK)
        child_fail(r, "measured", c);
      sqlite3_stmt *st = NULL;
      sqlite3 *h = pm__db_handle(db);
      if (sqlite3_prepare_v2(h, "SELECT count(*) FROM measurement", -1, &st, NULL) != SQLITE_OK ||
          sqlite3_step(st) != SQLITE_ROW) {
        fprintf(stderr, "reader %d: count: %s\n", r, sqlite3_errmsg(h));
        _exit(1);
      }
      int64_t now = sqlite3_column_int64(st, 0);
      sqlite3_finalize(st);
      if (now < seen) {
        fprintf(stderr, "reader %d: saw %lld rows, then %lld\n", r, (long long)seen,
                (long long)now);
        _exit(1);
      }
      seen = now;
    }
    pm__db_close(db);
  }
  pm_close(c);
  _exit(0);
}

/* Starts the writers and readers together on path and checks what they left. */
static void run_all(void) {
  int go[2];
  cr_assert_eq(pipe(go), 0);
  pid_t pids[WRITERS + READERS];
  for (int i = 0; i < WRITERS + READERS; i++) {
    pids[i] = fork();
    cr_assert_geq(pids[i], 0);
    if (pids[i] == 0) {
      close(go[1]);
      if (i < WRITERS) writer(i, go[0]);
      reader(i - WRITERS, go[0]);
    }
  }
  close(go[0]);
  close(go[1]); /* go */
  int failed = 0;
  for (int i = 0; i < WRITERS + READERS; i++) {
    int status = 0;
    cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
  }
  cr_assert_eq(failed, 0, "%d of the %d processes met an error (their messages are above)", failed,
               WRITERS + READERS);

  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(c, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), WRITERS * OWN + SHARED);
  for (int w = 0; w < WRITERS; w++) {
    char sql[128];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM measurement WHERE json_extract(params, '$.bx') = %d", w);
    cr_assert_eq(dbtest_int(h, sql), OWN, "writer %d lost none of its rows", w);
  }
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM gpu"), 1);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM run WHERE status = 'ok'"), WRITERS);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM cubin"), WRITERS);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM winner"), 1);
  char *report = NULL;
  int problems = -1;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK);
  cr_assert_eq(problems, 0, "%s", report);
  free(report);
  pm__db_close(db);
  pm_close(c);
}

Test(db_concurrency, eight_writers_and_eight_readers_on_a_new_file) {
  /* Nobody created it: the writers race to create and migrate it, the readers wait for it. */
  snprintf(path, sizeof path, "%s/new/pmtune.db", dir);
  run_all();
}

Test(db_concurrency, eight_writers_and_eight_readers_on_an_existing_file) {
  snprintf(path, sizeof path, "%s/pmtune.db", dir);
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(c, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  pm__db_close(db);
  pm_close(c);
  run_all();
}

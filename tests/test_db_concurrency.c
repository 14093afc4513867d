/* test_db_concurrency.c: many processes tuning into one database file and many reading it at
 * once: no row lost, no "database is locked" ever reaching a caller. Suite db_concurrency: 8
 * writers through the library and 8 readers. Suite db_load (CTest's test_db_load, label load):
 * 16 `pmtune import` processes and 16 readers (`pmtune show`, `pmtune db check`, library opens)
 * for 20 s. Suite db_lock_wait (CTest's test_db_lock_wait, labels load and slow): how long a
 * writer waits for another's lock. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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
      if (pm__db_measured(db, 1, 0, &p, "bx=0 by=0", sha, &found) != PM_OK)
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

/* ---- Load: 16 importing processes and 16 reading, for 20 s ---------------------------------- */

#define IMPORTERS 16
#define LOAD_READERS 16
#define DOCS 8      /* documents per importer, each adding ROWS measurements to the one before */
#define ROWS 10
#define LOAD_MS 20000

extern char **environ;

/* Runs argv (PMTUNE_BIN and its arguments) with stdout and stderr appended to log; its exit
 * status, or -1 where it did not exit. */
static int run_logged(const char *log, char *const argv[]) {
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int status = 0;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Says on stderr that who's command failed, with the last line the command wrote to log. */
static void say_failed(const char *who, const char *what, int status, const char *log) {
  size_t len = 0;
  char *text = dbtest_slurp(log, &len);
  while (text != NULL && len > 0 && text[len - 1] == '\n') text[--len] = '\0';
  const char *last = text != NULL ? strrchr(text, '\n') : NULL;
  fprintf(stderr, "%s: %s: status %d: %s\n", who, what, status,
          last ? last + 1 : text ? text : "(no output)");
  free(text);
}

/* Importer i's documents: doc j holds batches 0..j of its rows (so each import after the first
 * also merges rows the database has), exported by the library from a file of its own. */
static void make_docs(int i) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  char src[160], doc[160];
  pm__db *db = NULL;
  int64_t gpu;
  pm__device_info d = dbtest_gpu(0, 0);
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  snprintf(src, sizeof src, "%s/src-%d.db", dir, i);
  cr_assert_eq(pm__db_open(c, src, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_gpu_put(db, &d, 12040, 12080, &gpu), PM_OK, "%s", pm_errmsg(c));
  for (int j = 0; j < DOCS; j++) {
    for (int k = 0; k < ROWS; k++) {
      /* importer i's rows: cols 2048 + i; row j * ROWS + k: rows 2048 + j * ROWS + k (an
       * import checks each configuration against matadd's space: one real one for all) */
      const char *params =
          "{\"bx\":32,\"by\":8,\"vec\":1,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}";
      pm__db_measurement m = dbtest_measurement(gpu, dbtest_matadd(2048 + j * ROWS + k, 2048 + i),
                                                sha, params, 1.0 + i + k);
      cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
    }
    snprintf(doc, sizeof doc, "%s/doc-%d-%d.json", dir, i, j);
    FILE *f = fopen(doc, "w");
    cr_assert_not_null(f);
    cr_assert_eq(pm__db_export(db, f, 1, NULL), PM_OK, "%s", pm_errmsg(c));
    cr_assert_eq(fclose(f), 0);
  }
  pm__db_close(db);
  pm_close(c);
}

/* Importer i: imports its documents in turn, again and again, until the time is up and each has
 * been imported once; every import must succeed. */
static void importer(int i, int start, double until) {
  char log[160], doc[160];
  snprintf(log, sizeof log, "%s/importer-%d.log", dir, i);
  wait_for_start(start);
  for (int j = 0; j < DOCS || pm__now_ms() < until; j++) {
    snprintf(doc, sizeof doc, "%s/doc-%d-%d.json", dir, i, j % DOCS);
    char *argv[] = {PMTUNE_BIN, "import", doc, "--db", path, NULL};
    int rc = run_logged(log, argv);
    if (rc != 0) {
      char who[32];
      snprintf(who, sizeof who, "importer %d", i);
      say_failed(who, doc, rc, log);
      _exit(1);
    }
  }
  _exit(0);
}

/* Reader r: until the time is up, in turn: `pmtune show`, a library open that counts the rows
 * (never fewer than before), `pmtune db check`. Until the reader has seen a row, a command may
 * find no database, or one being made (status 1, PM_ENOTFOUND); from then on each must succeed. */
static void load_reader(int r, int start, double until) {
  char log[160];
  snprintf(log, sizeof log, "%s/reader-%d.log", dir, r);
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  if (pm_open(&c, &o) != PM_OK) _exit(2);
  wait_for_start(start);
  int64_t seen = 0;
  for (int step = 0; pm__now_ms() < until; step++) {
    int must = seen > 0, rc = 0;
    if (step % 3 == 0) {
      char *argv[] = {PMTUNE_BIN, "show", "--db", path, NULL};
      rc = run_logged(log, argv);
    } else if (step % 3 == 1) {
      pm__db *db = NULL;
      rc = pm__db_open(c, path, PM__DB_READONLY, pm__ops_db(), &db);
      if (rc == PM_OK) {
        int64_t now = dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement");
        pm__db_close(db);
        if (now < seen) {
          fprintf(stderr, "reader %d: saw %lld rows, then %lld\n", r, (long long)seen,
                  (long long)now);
          _exit(1);
        }
        seen = now;
      } else if (rc != PM_ENOTFOUND || must) {
        child_fail(r, "open read-only", c);
      }
      rc = 0;
    } else {
      char *argv[] = {PMTUNE_BIN, "db", "check", "--db", path, NULL};
      rc = run_logged(log, argv);
    }
    if (rc != 0 && must) {
      char who[32];
      snprintf(who, sizeof who, "reader %d", r);
      say_failed(who, step % 3 == 0 ? "pmtune show" : "pmtune db check", rc, log);
      _exit(1);
    }
  }
  pm_close(c);
  _exit(0);
}

/* How many lines of the file at p hold needle. */
static int lines_with(const char *p, const char *needle) {
  size_t len = 0;
  char *text = dbtest_slurp(p, &len);
  int n = 0;
  for (char *line = text ? strtok(text, "\n") : NULL; line != NULL; line = strtok(NULL, "\n"))
    n += strstr(line, needle) != NULL;
  free(text);
  return n;
}

TestSuite(db_load, .init = setup, .fini = teardown, .timeout = 300);

Test(db_load, sixteen_importers_and_sixteen_readers_for_twenty_seconds) {
  snprintf(path, sizeof path, "%s/load/pmtune.db", dir); /* nobody made it: importers race */
  for (int i = 0; i < IMPORTERS; i++) make_docs(i);
  int go[2];
  cr_assert_eq(pipe(go), 0);
  pid_t pids[IMPORTERS + LOAD_READERS];
  double t0 = pm__now_ms(), until = t0 + LOAD_MS;
  for (int i = 0; i < IMPORTERS + LOAD_READERS; i++) {
    pids[i] = fork();
    cr_assert_geq(pids[i], 0);
    if (pids[i] == 0) {
      close(go[1]);
      if (i < IMPORTERS) importer(i, go[0], until);
      load_reader(i - IMPORTERS, go[0], until);
    }
  }
  close(go[0]);
  close(go[1]);
  int failed = 0;
  for (int i = 0; i < IMPORTERS + LOAD_READERS; i++) {
    int status = 0;
    cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
  }
  double took = pm__now_ms() - t0;
  int locked = 0, imports = 0, reads = 0;
  for (int i = 0; i < IMPORTERS + LOAD_READERS; i++) {
    char log[160];
    snprintf(log, sizeof log, "%s/%s-%d.log", dir, i < IMPORTERS ? "importer" : "reader",
             i < IMPORTERS ? i : i - IMPORTERS);
    locked += lines_with(log, "locked") + lines_with(log, "busy");
    if (i < IMPORTERS) imports += lines_with(log, "imported");
    else reads += lines_with(log, "no problems found");
  }
  cr_assert_eq(failed, 0, "%d of the %d processes met an error (their messages are above)", failed,
               IMPORTERS + LOAD_READERS);
  cr_assert_eq(locked, 0, "%d lines of the commands' output say the database was locked or busy",
               locked);

  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(c, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  sqlite3 *h = pm__db_handle(db);
  int64_t rows = dbtest_int(h, "SELECT count(*) FROM measurement");
  for (int i = 0; i < IMPORTERS; i++) {
    char sql[128];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM measurement WHERE cols = %d", 2048 + i);
    cr_assert_eq(dbtest_int(h, sql), DOCS * ROWS, "importer %d lost none of its rows", i);
  }
  cr_assert_eq(rows, IMPORTERS * DOCS * ROWS, "%lld rows, %d imported", (long long)rows,
               IMPORTERS * DOCS * ROWS);
  char *report = NULL;
  int problems = -1;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK);
  cr_assert_eq(problems, 0, "%s", report);
  free(report);
  pm__db_close(db);
  pm_close(c);
  cr_log_info("%.1f s: %d imports, %d db checks passed, %lld rows, 0 lost, 0 locked", took / 1000,
              imports, reads, (long long)rows);
}

/* A writer waits for the write lock as long as the others holding it are seen writing (it gave
 * up after 10 s however busy the file was, and one importer of 16 failed so under
 * AddressSanitizer), and gives up, with "database is locked", 10 s after they stop moving. */
TestSuite(db_lock_wait, .init = setup, .fini = teardown, .timeout = 120);

Test(db_lock_wait, lasts_while_the_file_moves_and_ends_when_it_stops) {
  pm_ctx *ctx = NULL;
  pm__db *db = NULL;
  snprintf(path, sizeof path, "%s/pmtune.db", dir);
  cr_assert_eq(pm_open(&ctx, &(pm_options){.device = PM_DEVICE_NONE}), PM_OK);
  cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  int status = 0;
  pid_t pid = dbtest_hold_write_lock(path, 30000, 1, NULL);
  double t0 = pm__now_ms();
  cr_assert_eq(pm__db_begin(db), PM_OK, "after %.0f ms: %s", pm__now_ms() - t0, pm_errmsg(ctx));
  double ms = pm__now_ms() - t0;
  cr_assert_eq(pm__db_commit(db), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder failed: %#x", status);
  cr_assert_gt(ms, 29000, "the lock was had after %.0f ms, before the holder let it go", ms);

  pid = dbtest_hold_write_lock(path, 14000, 0, NULL);
  t0 = pm__now_ms();
  cr_assert_eq(pm__db_begin(db), PM_EDB);
  ms = pm__now_ms() - t0;
  cr_assert(strstr(pm_errmsg(ctx), "locked"), "%s", pm_errmsg(ctx));
  cr_assert(ms > 9500 && ms < 13000, "gave up after %.0f ms, not 10 s", ms);
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  pm__db_close(db);
  pm_close(ctx);
}

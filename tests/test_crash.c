/* test_crash.c: `pmtune import` and `pmtune db init` (creating a file, and migrating one of
 * schema 1) killed with SIGKILL at random points, over and over: after every kill the database
 * passes `pmtune db check`, holds all or none of the killed import, has lost nothing committed
 * before, and the next run finishes. Each case kills until KILLS kills have landed mid-run, and
 * logs how many landed mid-run and how many after the process had finished on its own.
 * PMTUNE_TEST_SEED replays a run's delays. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

#include "dbtest.h"

#define KILLS 100    /* kills that land mid-run, per case */
#define ATTEMPTS 400 /* at most this many tries to get them */
#define ROWS 50      /* measurements in an imported document */

extern char **environ;
static char dir[64], errfile[128];
static uint64_t seed;

static uint64_t next_rand(void) {
  seed ^= seed >> 12;
  seed ^= seed << 25;
  seed ^= seed >> 27;
  return seed * 0x2545F4914F6CDD1DULL;
}

static void setup(void) {
  dbtest_mkdir(dir);
  snprintf(errfile, sizeof errfile, "%s/stderr", dir);
  const char *env = getenv("PMTUNE_TEST_SEED");
  seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + (uint64_t)getpid();
  if (seed == 0) seed = 1;
  cr_log_info("PMTUNE_TEST_SEED=%llu", (unsigned long long)seed);
}
static void teardown(void) { dbtest_cleanup(dir); }

TestSuite(crash, .init = setup, .fini = teardown, .timeout = 300);

/* Starts `pmtune ARGS... --db db` (args ends with NULL), its output to /dev/null and its
 * stderr to errfile; returns its pid. */
static pid_t start(const char *db, const char *const *args) {
  const char *argv[16] = {PMTUNE_BIN};
  int n = 1;
  for (; args[n - 1] != NULL; n++) argv[n] = args[n - 1];
  argv[n++] = "--db";
  argv[n++] = db;
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, PMTUNE_BIN, &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  cr_assert_eq(rc, 0, "posix_spawn %s: %s", PMTUNE_BIN, strerror(rc));
  return pid;
}

static int wait_status(pid_t pid) {
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  return st;
}

static const char *errtext(void) {
  static char buf[4096];
  FILE *f = fopen(errfile, "rb");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  buf[n] = '\0';
  if (f) fclose(f);
  return buf;
}

/* Runs pmtune ARGS --db db to its end and expects status 0; returns its wall time in ms. */
static double finish(const char *db, const char *const *args) {
  double t0 = pm__now_ms();
  int st = wait_status(start(db, args));
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pmtune %s %s --db %s: status %d: %s",
            args[0], args[1] ? args[1] : "", db, st, errtext());
  return pm__now_ms() - t0;
}

/* Starts pmtune ARGS --db db, kills it with SIGKILL after a random delay of 0 to span ms;
 * returns 1 where the kill landed mid-run, 0 where the run had finished on its own (with
 * status 0) before it. */
static int kill_at_random(const char *db, const char *const *args, double span) {
  long us = (long)((double)(next_rand() % 1000000) / 1e6 * span * 1000);
  pid_t pid = start(db, args);
  nanosleep(&(struct timespec){us / 1000000, (us % 1000000) * 1000}, NULL);
  kill(pid, SIGKILL);
  int st = wait_status(pid);
  if (WIFSIGNALED(st)) {
    cr_assert_eq(WTERMSIG(st), SIGKILL);
    return 1;
  }
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pmtune %s, not killed: status %d: %s",
            args[0], WEXITSTATUS(st), errtext());
  return 0;
}

/* `pmtune db check --db db` passes (SQLite's integrity and CHECK constraints, pmtune's schema,
 * no orphan rows). */
static void expect_check_passes(const char *db, const char *when) {
  int st = wait_status(start(db, (const char *[]){"db", "check", NULL}));
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: pmtune db check: status %d: %s", when, st,
            errtext());
}

/* A plain SQLite handle on db, as a person with sqlite3 has (read-write: it recovers a WAL
 * left by a killed process, as any reader does). */
static sqlite3 *plain(const char *db) {
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK, "%s", db);
  sqlite3_busy_timeout(h, 10000);
  return h;
}

static void log_kills(const char *what, int mid, int after, double run_ms, double span) {
  cr_log_info("%s: %d kills mid-run, %d after the run had finished (a whole run took %.1f ms; "
              "delays drawn from 0 to %.1f ms)",
              what, mid, after, run_ms, span);
  fprintf(stderr, "crash: %s: %d kills mid-run, %d after the run had finished (%.1f ms a run)\n",
          what, mid, after, run_ms);
}

/* ---- import --------------------------------------------------------------------------------- */

/* A document of ROWS measurements (matadd, ROWS sizes) of GPU dbtest_gpu(0, 0), as export
 * writes it; *len its length. */
static char *make_doc(size_t *len) {
  char src[128];
  snprintf(src, sizeof src, "%s/source.db", dir);
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  int64_t gpu = 0;
  pm__device_info d = dbtest_gpu(0, 0);
  const char *sha = pm__template_find("matadd")->sha256;
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  cr_assert_eq(pm__db_open(c, src, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_gpu_put(db, &d, 12040, 12080, &gpu), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_begin(db), PM_OK);
  for (int i = 0; i < ROWS; i++) {
    pm__db_measurement m =
        dbtest_measurement(gpu, dbtest_matadd(64 + i, 4096), sha,
                           "{\"bx\":32,\"by\":8,\"vec\":1,\"ept\":1,\"grid\":0,\"map\":0,"
                           "\"align\":0}",
                           1 + i);
    cr_assert_eq(pm__db_measurement_write(db, &m, NULL, 0, NULL), PM_OK, "%s", pm_errmsg(c));
  }
  cr_assert_eq(pm__db_commit(db), PM_OK);
  char *doc = NULL;
  FILE *f = open_memstream(&doc, len);
  int n = 0;
  cr_assert_eq(pm__db_export(db, f, 1, &n), PM_OK, "%s", pm_errmsg(c));
  fclose(f);
  cr_assert_eq(n, ROWS);
  pm__db_close(db);
  pm_close(c);
  return doc;
}

/* Writes doc as the document of GPU number k (its uuid replaced by dbtest_gpu(0, k)'s, of the
 * same length) to file. */
static void write_doc_of(const char *doc, size_t len, int k, const char *file) {
  char *copy = malloc(len + 1);
  const char *from = dbtest_gpu(0, 0).uuid;
  char to[64];
  snprintf(to, sizeof to, "%s", dbtest_gpu(0, k).uuid);
  cr_assert_eq(strlen(to), strlen(from));
  memcpy(copy, doc, len + 1);
  int n = 0;
  for (char *p = copy; (p = strstr(p, from)) != NULL; p += strlen(from), n++)
    memcpy(p, to, strlen(to));
  cr_assert_eq(n, ROWS + 1, "the gpu and each measurement name it");
  dbtest_write(file, copy, len);
  free(copy);
}

/* What the database holds of every GPU but `except`'s: one line per GPU (uuid, its
 * measurements, their total time, the latest), heap. */
static char *held_except(sqlite3 *h, const char *except) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT g.uuid, count(m.id), total(m.median_ms), max(m.measured_at) FROM gpu g"
           " LEFT JOIN measurement m ON m.gpu_id = g.id WHERE g.uuid <> '%s'"
           " GROUP BY g.uuid ORDER BY g.uuid",
           except);
  return dbtest_rows(h, sql);
}

static int64_t rows_of(sqlite3 *h, const char *uuid) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM measurement m JOIN gpu g ON g.id = m.gpu_id WHERE g.uuid = '%s'",
           uuid);
  return dbtest_int(h, sql);
}

static int64_t gpus_of(sqlite3 *h, const char *uuid) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM gpu WHERE uuid = '%s'", uuid);
  return dbtest_int(h, sql);
}

Test(crash, a_killed_import_is_all_or_nothing_and_loses_nothing_committed) {
  char db[128], file[128];
  size_t len = 0;
  char *doc = make_doc(&len);
  snprintf(db, sizeof db, "%s/pmtune.db", dir);
  snprintf(file, sizeof file, "%s/doc.json", dir);
  /* Committed before: the first document, whole. */
  write_doc_of(doc, len, 1, file);
  double run_ms = finish(db, (const char *[]){"import", file, NULL});
  int mid = 0, after = 0, whole = 0;
  for (int k = 2; mid < KILLS && k < ATTEMPTS; k++) {
    sqlite3 *h = plain(db);
    const char *uuid = dbtest_gpu(0, k).uuid;
    char *before = held_except(h, uuid);
    int64_t total = dbtest_int(h, "SELECT count(*) FROM measurement");
    sqlite3_close(h);
    write_doc_of(doc, len, k, file);
    const char *args[] = {"import", file, NULL};
    double span = run_ms * 1.25;
    if (kill_at_random(db, args, span))
      mid++;
    else
      after++;

    char when[64];
    snprintf(when, sizeof when, "after kill %d", mid + after);
    expect_check_passes(db, when);
    h = plain(db);
    char *now = held_except(h, uuid);
    cr_assert_str_eq(now, before, "%s: what was committed before is there as it was", when);
    free(now);
    int64_t got = rows_of(h, uuid), gpus = gpus_of(h, uuid);
    cr_assert(got == 0 || got == ROWS, "%s: %lld of the document's %d rows", when,
              (long long)got, ROWS);
    cr_assert_eq(gpus, got == ROWS, "%s: its GPU with its rows, or neither", when);
    cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), total + got, "%s", when);
    whole += got == ROWS;
    sqlite3_close(h);

    /* The next run finishes, and the document is then there, whole, once. */
    run_ms = 0.8 * run_ms + 0.2 * finish(db, args);
    h = plain(db);
    cr_assert_eq(rows_of(h, uuid), ROWS, "%s: the next import finished", when);
    cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), total + ROWS, "%s", when);
    free(before);
    sqlite3_close(h);
  }
  expect_check_passes(db, "at the end");
  cr_assert_geq(mid, KILLS, "only %d of %d kills landed mid-run", mid, mid + after);
  log_kills("import", mid, after, run_ms, run_ms * 1.25);
  cr_log_info("import: the killed run's rows were there, whole, after %d kills; none after %d",
              whole, mid + after - whole);
  free(doc);
}

/* ---- db init -------------------------------------------------------------------------------- */

/* Kills `pmtune db init` on a copy of `initial` (NULL: no file, in directories not made yet)
 * until KILLS kills landed mid-run; after each, what is there is either as it was (no file, an
 * empty one, or initial's schema version `was` with its rows, sound) or the latest schema that
 * passes db check; then db init finishes and db check passes, initial's rows kept. */
static void kill_init(const char *what, const char *initial, int was, int64_t rows) {
  int mid = 0, after = 0, before_states = 0;
  double run_ms = 0;
  size_t ilen = 0;
  char *image = initial ? dbtest_slurp(initial, &ilen) : NULL;
  for (int k = 0; mid < KILLS && k < ATTEMPTS; k++) {
    char db[160], when[64];
    snprintf(db, sizeof db, "%s/%s-%d/cache/pmtune.db", dir, what, k);
    if (image != NULL) {
      char parent[160];
      snprintf(parent, sizeof parent, "%s/%s-%d", dir, what, k);
      cr_assert_eq(mkdir(parent, 0755), 0);
      strcat(parent, "/cache");
      cr_assert_eq(mkdir(parent, 0755), 0);
      dbtest_write(db, image, ilen);
    }
    const char *args[] = {"db", "init", NULL};
    if (k == 0) { /* the first, whole: how long a run takes */
      run_ms = finish(db, args);
      continue;
    }
    if (kill_at_random(db, args, run_ms * 1.25))
      mid++;
    else
      after++;
    snprintf(when, sizeof when, "%s, after kill %d", what, mid + after);

    /* pmtune db check first, as the first to open the file after the kill: it passes, or the
     * file is as it was before the run (none, empty, or schema `was` with its rows, sound). */
    int st = wait_status(start(db, (const char *[]){"db", "check", NULL}));
    struct stat s;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      sqlite3 *h = plain(db);
      cr_assert_eq(dbtest_int(h, "PRAGMA user_version"), pm__db_schema_latest(), "%s", when);
      sqlite3_close(h);
    } else if (stat(db, &s) == 0 && s.st_size > 0) {
      sqlite3 *h = plain(db);
      char *integrity = dbtest_rows(h, "PRAGMA integrity_check");
      cr_assert_str_eq(integrity, "ok\n", "%s", when);
      free(integrity);
      int64_t version = dbtest_int(h, "PRAGMA user_version");
      cr_assert(version == 0 || version == was,
                "%s: db check fails (%s) on schema version %lld, neither empty nor as it was (%d)",
                when, errtext(), (long long)version, was);
      if (version == 0)
        cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM sqlite_schema"), 0,
                     "%s: schema version 0, so no table yet", when);
      else
        cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), rows, "%s", when);
      sqlite3_close(h);
      before_states++;
    } else {
      cr_assert_null(image, "%s: the file to migrate is gone", when);
      before_states++;
    }

    double ms = finish(db, args); /* the next run finishes */
    run_ms = 0.8 * run_ms + 0.2 * ms;
    sqlite3 *h = plain(db);
    cr_assert_eq(dbtest_int(h, "PRAGMA user_version"), pm__db_schema_latest(), "%s", when);
    if (rows > 0)
      cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), rows, "%s", when);
    sqlite3_close(h);
    if (mid == KILLS) expect_check_passes(db, "at the end");
  }
  free(image);
  cr_assert_geq(mid, KILLS, "only %d of %d kills landed mid-run", mid, mid + after);
  log_kills(what, mid, after, run_ms, run_ms * 1.25);
  cr_log_info("%s: the file was as before (or not made) after %d kills, at the latest schema "
              "after %d",
              what, before_states, mid + after - before_states);
}

Test(crash, a_killed_db_init_leaves_no_file_or_a_sound_one) {
  kill_init("init", NULL, 0, 0);
}

Test(crash, a_killed_migration_from_schema_1_is_as_before_or_done) {
  /* What a pmtune of schema version 1 made (as in test_db): its migration alone, and rows. */
  char v1[128];
  snprintf(v1, sizeof v1, "%s/schema1.db", dir);
  const pm__db_migration *first = &pm__db_migrations[0];
  cr_assert_str_eq(first->name, "0001_initial");
  cr_assert_geq(pm__db_schema_latest(), 2);
  dbtest_exec(v1, first->source);
  pm__device_info d = dbtest_gpu(0, 0);
  char sql[1024];
  snprintf(sql, sizeof sql,
           "INSERT INTO gpu VALUES (1, '%s', '%s', 9, 0, 'sm_90', 132, 85899345920, 12040, 12080,"
           " 'x', 'x');"
           "INSERT INTO template VALUES ('%s', 'matadd', 1, 'x');",
           d.uuid, d.name, SHA_A);
  dbtest_exec(v1, sql);
  for (int i = 0; i < 50; i++) {
    snprintf(sql, sizeof sql,
             "INSERT INTO measurement (gpu_id, op, dtype, rows, cols, variant, problem, config,"
             " params, template_sha256, status, median_ms, min_ms, max_ms, samples, gbps,"
             " verified, measured_at) VALUES (1, 'matadd', 'f32', %d, 64, 'order=row',"
             " 'rows=%d cols=64 order=row', 'bx=32', '{\"bx\":32}', '%s', 'ok', 1, 1, 1, 1, 1, 1,"
             " 'x');",
             64 + i, 64 + i, SHA_A);
    dbtest_exec(v1, sql);
  }
  kill_init("migrate", v1, 1, 50);
}

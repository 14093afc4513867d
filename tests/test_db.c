/* test_db.c: the tuning database with no GPU: where it is, schema and migrations, what is stored
 * and served, validity, faults (corrupt, foreign, read-only, full, killed), export and import. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "dbtest.h"

static pm_ctx *ctx;
static char dir[64], path[128];

static void setup(void) {
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&ctx, &o), PM_OK);
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/pmtune.db", dir);
}

static void teardown(void) {
  pm_close(ctx);
  dbtest_cleanup(dir);
}

TestSuite(db, .init = setup, .fini = teardown, .timeout = 60);

/* pmtune's ops as the database knows them, less their spaces (check_config NULL): most tests
 * here store and exchange short made-up configurations ("bx=64 by=4", "a=1") to test what the
 * database does with them, which an import would refuse as no configuration of the op's space.
 * The tests of that check (import_checks_configurations_against_the_space) open with
 * pm__ops_db() itself. */
static const pm__db_op *const *ops_without_spaces(void) {
  static pm__db_op ops[PM__MAX_OPS];
  static const pm__db_op *list[PM__MAX_OPS + 1];
  const pm__db_op *const *all = pm__ops_db();
  int n = 0;
  for (; all[n] != NULL; n++) {
    ops[n] = *all[n];
    ops[n].check_config = NULL;
    list[n] = &ops[n];
  }
  list[n] = NULL;
  return list;
}

static pm__db *open_rw(void) {
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(ctx, path, 0, ops_without_spaces(), &db), PM_OK, "%s",
               pm_errmsg(ctx));
  return db;
}

/* The same with pmtune's ops as they are: an import checks each configuration against the
 * space. */
static pm__db *open_rw_spaces(void) {
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  return db;
}

static int64_t add_gpu(pm__db *db, int model, int i) {
  pm__device_info d = dbtest_gpu(model, i);
  int64_t id = 0;
  cr_assert_eq(pm__db_gpu_put(db, &d, 12040, 12080, &id), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_gt(id, 0);
  return id;
}

static void put(pm__db *db, const pm__db_measurement *m) {
  cr_assert_eq(pm__db_measurement_put(db, m), PM_OK, "%s", pm_errmsg(ctx));
}

static void expect_msg(const char *needle) {
  cr_assert_not_null(strstr(pm_errmsg(ctx), needle), "'%s' not in: %s", needle, pm_errmsg(ctx));
}

/* A pm__db_seen_list callback that adds up the calls it is handed into *(int *)arg. */
static int count_seen(void *arg, const pm__db_problem *p, int64_t calls) {
  (void)p;
  *(int *)arg += (int)calls;
  return 0;
}

/* ---- Schema and migrations ------------------------------------------------------------------ */

Test(db, migrations_are_embedded_numbered_and_match_their_files) {
  int n = 0;
  for (const pm__db_migration *m = pm__db_migrations; m->name != NULL; m++, n++) {
    char expect[16], file[512], version[64];
    snprintf(expect, sizeof expect, "%04d_", n + 1);
    cr_assert_eq(strncmp(m->name, expect, 5), 0, "%s is migration %d", m->file, n + 1);
    snprintf(file, sizeof file, "%s/db/%s", PM_SOURCE_DIR, m->file);
    size_t len = 0;
    char *text = dbtest_slurp(file, &len);
    cr_assert_not_null(text, "%s", file);
    cr_assert_eq(len, m->length);
    cr_assert_eq(memcmp(text, m->source, len), 0, "%s is embedded as it is", m->file);
    free(text);
    snprintf(version, sizeof version, "PRAGMA user_version = %d;", n + 1);
    cr_assert_not_null(strstr(m->source, version), "%s sets %s", m->file, version);
  }
  cr_assert_geq(n, 1);
  cr_assert_eq(pm__db_schema_latest(), n);
}

Test(db, the_path_is_option_then_env_then_xdg_then_home) {
  char out[PM__DB_PATH_MAX];
  setenv("PMTUNE_DB", "/env/db.sqlite", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/someone", 1);
  cr_assert_eq(pm__db_path(ctx, "/given.db", out, sizeof out), PM_OK);
  cr_assert_str_eq(out, "/given.db");
  cr_assert_eq(pm__db_path(ctx, NULL, out, sizeof out), PM_OK);
  cr_assert_str_eq(out, "/env/db.sqlite");
  setenv("PMTUNE_DB", "", 1);
  cr_assert_eq(pm__db_path(ctx, NULL, out, sizeof out), PM_OK);
  cr_assert_str_eq(out, "/xdg/pmtune/pmtune.db", "an empty $PMTUNE_DB is unset");
  setenv("XDG_CACHE_HOME", "relative/cache", 1);
  cr_assert_eq(pm__db_path(ctx, NULL, out, sizeof out), PM_OK);
  cr_assert_str_eq(out, "/home/someone/.cache/pmtune/pmtune.db", "a relative XDG path is ignored");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  unsetenv("PMTUNE_DB");
  cr_assert_eq(pm__db_path(ctx, NULL, out, sizeof out), PM_EINVAL);
  expect_msg("--db");
  cr_assert_eq(pm__db_path(ctx, "", out, sizeof out), PM_EINVAL);
  cr_assert_eq(pm__db_path(ctx, "/a/long/path.db", out, 8), PM_EINVAL);
}

Test(db, open_creates_directories_wal_and_the_schema) {
  snprintf(path, sizeof path, "%s/a/b/c/pmtune.db", dir);
  pm__db *db = open_rw();
  int was = -1, now = -1;
  pm__db_schema(db, &was, &now);
  cr_assert_eq(was, 0);
  cr_assert_eq(now, pm__db_schema_latest());
  cr_assert_str_eq(pm__db_filename(db), path);
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "PRAGMA user_version"), pm__db_schema_latest());
  cr_assert_eq(dbtest_int(h, "PRAGMA application_id"), 0x706d7475);
  /* pmtune's own busy handler waits for other processes' locks (db/pmdb.c, busy_wait; held under
   * load by test_db_load), in place of SQLite's busy_timeout, which PRAGMA busy_timeout reads */
  cr_assert_eq(dbtest_int(h, "PRAGMA busy_timeout"), 0);
  char *mode = dbtest_rows(h, "PRAGMA journal_mode");
  cr_assert_str_eq(mode, "wal\n");
  free(mode);
  const char *names[] = {"gpu",    "template",           "run", "measurement", "cubin",
                         "winner", "current_measurement"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_schema WHERE name = '%s'", names[i]);
    cr_assert_eq(dbtest_int(h, sql), 1, "%s", names[i]);
  }
  /* The embedded templates are registered as current. */
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM template WHERE current = 1 AND op = 'matadd'"),
               1);
  pm__db_close(db);
  db = open_rw();
  pm__db_schema(db, &was, &now);
  cr_assert_eq(was, pm__db_schema_latest(), "reopening migrates nothing");
  char *report = NULL;
  int problems = -1;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(problems, 0, "%s", report);
  cr_assert_not_null(strstr(report, "integrity     ok"), "%s", report);
  free(report);
  pm__db_close(db);
  pm__db_close(NULL);
}

/* Opens must refuse the file with status and needle, and leave it byte for byte as it was. */
static void expect_refused_untouched(int flags, int status, const char *needle) {
  size_t before_len = 0;
  char *before = dbtest_slurp(path, &before_len);
  cr_assert_not_null(before);
  pm__db *db = (pm__db *)1;
  cr_assert_eq(pm__db_open(ctx, path, flags, pm__ops_db(), &db), status, "flags %d: %s", flags, pm_errmsg(ctx));
  cr_assert_null(db);
  expect_msg(path);
  expect_msg(needle);
  dbtest_assert_unchanged(path, before, before_len, "the file is byte-identical");
}

Test(db, a_newer_schema_is_refused_and_left_byte_identical) {
  /* One that pmtune wrote (WAL) and a newer pmtune then migrated further. */
  pm__db_close(open_rw());
  dbtest_exec(path, "PRAGMA user_version = 99; CREATE TABLE from_the_future (x);");
  expect_refused_untouched(0, PM_EDB, "schema version 99 is newer than this pmtune's");
  expect_refused_untouched(PM__DB_READONLY, PM_EDB, "newer");
  /* And a plain rollback-journal file: opening it must not even switch it to WAL. */
  remove(path);
  dbtest_exec(path, "PRAGMA application_id = 1886221429; PRAGMA user_version = 7;");
  expect_refused_untouched(0, PM_EDB, "schema version 7 is newer");
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  char *mode = dbtest_rows(h, "PRAGMA journal_mode");
  cr_assert_str_eq(mode, "delete\n");
  free(mode);
  sqlite3_close(h);
}

Test(db, a_database_of_schema_1_is_read_as_it_is_and_migrated_by_a_writer) {
  /* What a pmtune of schema version 1 made: its migration alone, with a GPU and a winner. */
  const pm__db_migration *first = &pm__db_migrations[0];
  cr_assert_str_eq(first->name, "0001_initial");
  cr_assert_geq(pm__db_schema_latest(), 2);
  dbtest_exec(path, first->source);
  pm__device_info d = dbtest_gpu(0, 0);
  char sql[1024];
  snprintf(sql, sizeof sql,
           "INSERT INTO gpu VALUES (1, '%s', '%s', 9, 0, 'sm_90', 132, 85899345920, 12040, 12080,"
           " 'x', 'x');"
           "INSERT INTO template VALUES ('%s', 'matadd', 1, 'x');"
           "INSERT INTO measurement (gpu_id, op, dtype, rows, cols, variant, problem, config,"
           " params, template_sha256, status, median_ms, min_ms, max_ms, samples, gbps, verified,"
           " measured_at) VALUES (1, 'matadd', 'f32', 64, 64, 'order=row',"
           " 'rows=64 cols=64 order=row', 'bx=32', '{\"bx\":32}', '%s', 'ok', 1, 1, 1, 1, 1, 1,"
           " 'x');",
           d.uuid, d.name, SHA_A, SHA_A);
  dbtest_exec(path, sql);

  /* Read-only, as library calls open it: served as it is, nothing written, nothing recorded. */
  size_t before_len = 0;
  char *before = dbtest_slurp(path, &before_len);
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s",
               pm_errmsg(ctx));
  pm__db_winner w;
  pm__db_problem p = dbtest_matadd(64, 64);
  cr_assert_eq(pm__db_winner_get(db, &d, &p, SHA_A, &w), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_str_eq(w.config, "bx=32");
  int calls = 0;
  cr_assert_eq(pm__db_seen_list(db, 1, NULL, 0, count_seen, &calls), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(calls, 0, "schema 1 recorded nothing");
  pm__db_close(db);
  dbtest_assert_unchanged(path, before, before_len, "reading changed nothing");

  /* A writer migrates it in place: the rows stay, the table of seen sizes is there. */
  db = open_rw();
  int was = -1, now = -1;
  pm__db_schema(db, &was, &now);
  cr_assert_eq(was, 1);
  cr_assert_eq(now, pm__db_schema_latest());
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "PRAGMA user_version"), pm__db_schema_latest());
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 1);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM seen"), 0);
  int64_t n = 5;
  cr_assert_eq(pm__db_seen_add(db, 1, &p, &n, 1), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(dbtest_int(h, "SELECT calls FROM seen"), 5);
  char *report = NULL;
  int problems = -1;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(problems, 0, "%s", report);
  cr_assert_not_null(strstr(report, "seen sizes    1 served without a tuned winner, 5 calls"),
                     "%s", report);
  free(report);
  pm__db_close(db);
}

Test(db, another_programs_sqlite_file_is_refused_untouched) {
  dbtest_exec(path, "CREATE TABLE notes (x); INSERT INTO notes VALUES ('mine');");
  expect_refused_untouched(0, PM_EDB, "not pmtune's");
  dbtest_exec(path, "PRAGMA application_id = 42;");
  expect_refused_untouched(0, PM_EDB, "not pmtune's");
}

Test(db, a_file_that_is_not_sqlite_is_refused_naming_it) {
  const char text[] = "this is a text file, not a database; it is long enough to have a header\n";
  dbtest_write(path, text, sizeof text - 1);
  expect_refused_untouched(0, PM_EDB, "not a database");
  expect_refused_untouched(PM__DB_READONLY, PM_EDB, "not a database");
}

/* ---- Faults --------------------------------------------------------------------------------- */

static void fill(pm__db *db, int64_t gpu, int n) {
  for (int i = 0; i < n; i++) {
    char params[64];
    snprintf(params, sizeof params, "{\"bx\":%d,\"by\":8}", 32 * (i + 1));
    pm__db_measurement m =
        dbtest_measurement(gpu, dbtest_matadd(4096, 4096), SHA_A, params, 1.0 + i);
    put(db, &m);
  }
}

Test(db, a_corrupt_file_gives_a_clear_error_and_check_finds_it) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  cr_assert_eq(pm__db_template_current(db, "matadd", SHA_A), PM_OK);
  fill(db, gpu, 200);
  pm__db_close(db);
  /* Scribble over the second half of the file: the rows stored last (the schema stays). */
  size_t len = 0;
  char *bytes = dbtest_slurp(path, &len);
  cr_assert_gt(len, 8192);
  size_t page = (size_t)((unsigned char)bytes[16] << 8 | (unsigned char)bytes[17]);
  if (page == 1) page = 65536;
  for (size_t i = len / 2 / page * page; i < len; i++) bytes[i] = (char)(i * 7 + 3);
  dbtest_write(path, bytes, len);
  free(bytes);

  db = NULL;
  int rc = pm__db_open(ctx, path, 0, pm__ops_db(), &db);
  if (rc != PM_OK) {
    cr_assert_eq(rc, PM_EDB);
    expect_msg(path);
    expect_msg("malformed");
  }
  pm__db_close(db);
  /* Read-only: opening reads only the header and the schema, so it opens; using it fails
   * cleanly. */
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  pm__device_info d = dbtest_gpu(0, 0);
  pm__db_problem p = dbtest_matadd(4096, 4096);
  pm__db_winner w;
  cr_assert_eq(pm__db_winner_get(db, &d, &p, SHA_A, &w), PM_EDB);
  expect_msg(path);
  expect_msg("malformed");
  char *report = NULL;
  int problems = 0;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_gt(problems, 0, "check says it is damaged: %s", report);
  cr_assert_not_null(strstr(report, "integrity     PROBLEM"), "%s", report);
  free(report);
  pm__db_close(db);
}

Test(db, read_only_mode_writes_nothing) {
  pm__db *db = (pm__db *)1;
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_ENOTFOUND);
  cr_assert_null(db);
  expect_msg(path);
  cr_assert_eq(access(path, F_OK), -1, "read-only never creates the file");
  dbtest_write(path, "", 0);
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_ENOTFOUND);
  expect_msg("empty");
  remove(path);

  db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  pm__db_close(db);
  size_t before_len = 0;
  char *before = dbtest_slurp(path, &before_len);
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_measurement m = dbtest_measurement(gpu, dbtest_matadd(64, 64), SHA_A, "{\"bx\":1}", 1);
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_EDB);
  expect_msg(path);
  expect_msg("readonly");
  pm__device_info d = dbtest_gpu(0, 1);
  int64_t id;
  cr_assert_eq(pm__db_gpu_put(db, &d, 1, 1, &id), PM_EDB);
  pm__cubin b = {.data = "x", .size = 1};
  pm__db_cubin_key k = {SHA_A, "", "sm_90", "13.0", 0};
  cr_assert_eq(pm__db_cubin_put(db, &k, &b), PM_EDB);
  /* Reading works. */
  int found = -1;
  cr_assert_eq(pm__db_measured(db, gpu, 0, &m.problem, "bx=1", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 0);
  pm__db_close(db);
  dbtest_assert_unchanged(path, before, before_len, "nothing was written");
}

Test(db, a_directory_that_cannot_be_made_is_a_clear_error) {
  char file[160], bad[200];
  snprintf(file, sizeof file, "%s/plainfile", dir);
  dbtest_write(file, "x", 1);
  snprintf(bad, sizeof bad, "%s/sub/pmtune.db", file);
  pm__db *db = (pm__db *)1;
  cr_assert_eq(pm__db_open(ctx, bad, 0, pm__ops_db(), &db), PM_EIO);
  cr_assert_null(db);
  cr_assert_not_null(strstr(pm_errmsg(ctx), bad), "%s", pm_errmsg(ctx));
  expect_msg("cannot create directory");
  expect_msg("Not a directory");
  cr_assert_eq(pm__db_open(ctx, dir, 0, pm__ops_db(), &db), PM_EIO, "a directory is not a database");
  expect_msg("is a directory");
}

/* Opens path for writing (flags 0) or reading (PM__DB_READONLY) as an ordinary user: nobody,
 * in a child, where the tests run as root (whom permissions do not stop). Returns the status and
 * puts pm_errmsg in msg. */
static int open_as_user(const char *file, int flags, char *msg, size_t cap) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(100);
    pm_ctx *c = NULL;
    pm_options o = {.device = PM_DEVICE_NONE};
    pm__db *db = NULL;
    if (pm_open(&c, &o) != PM_OK) _exit(101);
    int rc = pm__db_open(c, file, flags, pm__ops_db(), &db);
    if (rc == PM_OK) {
      int64_t n = dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement");
      snprintf(msg, cap, "%lld measurements", (long long)n);
    } else {
      snprintf(msg, cap, "%s", pm_errmsg(c));
    }
    if (write(fds[1], msg, strlen(msg) + 1) < 0) _exit(102);
    pm__db_close(db);
    _exit(-rc);
  }
  close(fds[1]);
  ssize_t n = read(fds[0], msg, cap - 1);
  msg[n > 0 ? n : 0] = '\0';
  close(fds[0]);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) < 100, "the child could not become nobody");
  return -WEXITSTATUS(status);
}

Test(db, a_read_only_file_or_directory_is_a_clear_error) {
  pm__db *db = open_rw();
  fill(db, add_gpu(db, 0, 0), 3);
  pm__db_close(db);
  char ro_dir[128], msg[1024];
  snprintf(ro_dir, sizeof ro_dir, "%s/readonly", dir);
  cr_assert_eq(mkdir(ro_dir, 0555), 0);
  cr_assert_eq(chmod(dir, 0755), 0);
  cr_assert_eq(chmod(path, 0644), 0);
  /* A file the user may read but not write: writing is refused saying so, reading works. */
  cr_assert_eq(open_as_user(path, 0, msg, sizeof msg), PM_EDB, "%s", msg);
  cr_assert_not_null(strstr(msg, path), "%s", msg);
  cr_assert_not_null(strstr(msg, "read-only"), "%s", msg);
  cr_assert_eq(open_as_user(path, PM__DB_READONLY, msg, sizeof msg), PM_OK, "%s", msg);
  cr_assert_str_eq(msg, "3 measurements");
  /* A directory the user may not write: the file cannot be made there. */
  char file[200];
  snprintf(file, sizeof file, "%s/pmtune.db", ro_dir);
  int rc = open_as_user(file, 0, msg, sizeof msg);
  cr_assert(rc == PM_EDB || rc == PM_EIO, "%s: %s", pm_errname(rc), msg);
  cr_assert_not_null(strstr(msg, file), "%s", msg);
  snprintf(file, sizeof file, "%s/sub/pmtune.db", ro_dir);
  cr_assert_eq(open_as_user(file, 0, msg, sizeof msg), PM_EIO, "%s", msg);
  cr_assert_not_null(strstr(msg, "cannot create directory"), "%s", msg);
  cr_assert_not_null(strstr(msg, "Permission denied"), "%s", msg);
}

Test(db, a_full_disk_is_a_clear_error_and_loses_nothing_stored) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  fill(db, gpu, 5);
  sqlite3 *h = pm__db_handle(db);
  /* The file may not grow any more: what a full disk looks like to SQLite. */
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld",
           (long long)dbtest_int(h, "PRAGMA page_count"));
  free(dbtest_rows(h, sql));
  static char big[200000];
  memset(big, 'x', sizeof big - 1);
  int rc = PM_OK, i;
  for (i = 0; i < 50 && rc == PM_OK; i++) {
    char params[32];
    snprintf(params, sizeof params, "{\"bx\":%d}", 1000 + i);
    pm__db_measurement m = dbtest_measurement(gpu, dbtest_matadd(64, 64), SHA_A, params, 1);
    m.outcome = PM__DB_COMPILE_ERROR;
    m.error = big;
    rc = pm__db_measurement_put(db, &m);
  }
  cr_assert_eq(rc, PM_EDB, "the disk filled up");
  expect_msg(path);
  expect_msg("full");
  cr_assert_eq(
      dbtest_int(
          h, "SELECT count(*) FROM measurement WHERE problem = 'rows=4096 cols=4096 order=row'"),
      5);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 5 + i - 1,
               "the failed one left no part of itself");
  pm__db_close(db);
  db = open_rw();
  char *report;
  int problems;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(problems, 0, "%s", report);
  free(report);
  pm__db_close(db);
}

/* ---- GPUs, measurements, winners ------------------------------------------------------------ */

Test(db, cuda_versions_are_had_without_a_gpu) {
  int driver = -1, runtime = -1;
  pm__cuda_versions(&driver, &runtime);
  cr_assert_geq(driver, 0, "0 without a driver");
  cr_assert_geq(runtime, 12000, "the runtime linked in knows its version: %d", runtime);
  pm__cuda_versions(NULL, NULL);
}

Test(db, gpus_are_upserted_by_uuid) {
  pm__db *db = open_rw();
  int64_t a = add_gpu(db, 0, 0), b = add_gpu(db, 0, 1);
  cr_assert_neq(a, b);
  pm__device_info d = dbtest_gpu(0, 0);
  int64_t again = 0;
  cr_assert_eq(pm__db_gpu_put(db, &d, 13000, 13000, &again), PM_OK);
  cr_assert_eq(again, a);
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM gpu"), 2);
  cr_assert_eq(dbtest_int(h, "SELECT driver_version FROM gpu WHERE id = 1"), 13000,
               "a new driver is recorded");
  d.uuid[0] = '\0';
  cr_assert_eq(pm__db_gpu_put(db, &d, 1, 1, &again), PM_EINVAL);
  d = dbtest_gpu(0, 0);
  d.sm_count = 0;
  cr_assert_eq(pm__db_gpu_put(db, &d, 1, 1, &again), PM_EINVAL);
  pm__db_close(db);
}

Test(db, a_measurement_is_stored_once_per_key_and_readable_by_sql) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  pm__db_measurement m =
      dbtest_measurement(gpu, dbtest_matadd(4096, 2048), SHA_A,
                         "{\"bx\": 32, \"by\": 8, \"vec\": 4, \"align\": 256}", 2.0);
  put(db, &m);
  put(db, &m);
  m.median_ms = 1.5, m.min_ms = 1.4, m.max_ms = 1.6;
  put(db, &m);
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 1);
  char *row = dbtest_rows(h,
                          "SELECT op, dtype, rows, cols, n, radius, variant, problem, config,"
                          " params, median_ms, status, verified FROM measurement");
  cr_assert_str_eq(row,
                   "matadd|f32|4096|2048|NULL|NULL|order=row|rows=4096 cols=2048 order=row|"
                   "bx=32 by=8 vec=4 align=256|{\"bx\":32,\"by\":8,\"vec\":4,\"align\":256}|"
                   "1.5|ok|1\n");
  free(row);
  cr_assert_eq(dbtest_int(h,
                          "SELECT count(*) FROM measurement WHERE json_extract(params, '$.vec') = 4"
                          " AND rows * cols > 1000000"),
               1, "SQL can filter on both");
  /* The same configuration given as text must say what the JSON says. */
  m.config = "bx=32 by=8 vec=4 align=256";
  put(db, &m);
  m.config = "bx=32 by=8";
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_EINVAL);
  expect_msg("does not say what its JSON");
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 1);
  pm__db_close(db);
}

Test(db, bad_measurements_are_refused_saying_why) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  const pm__db_measurement good =
      dbtest_measurement(gpu, dbtest_matadd(64, 64), SHA_A, "{\"bx\":1}", 1);
  struct {
    const char *why, *needle;
    pm__db_measurement m;
  } cases[16];
  int n = 0;
#define CASE(WHY, NEEDLE, FIELD, VALUE)                            \
  cases[n].why = WHY, cases[n].needle = NEEDLE, cases[n].m = good; \
  cases[n++].m.FIELD = VALUE
  CASE("unknown op", "unknown op", problem.op, "transpose");
  CASE("unknown dtype", "unknown dtype", problem.dtype, "f8");
  CASE("bad variant", "variant", problem.variant, "order=diagonal");
  CASE("no rows", "needs 0 < rows", problem.rows, 0);
  CASE("n on a matrix", "no n", problem.n, 5);
  CASE("radius on matadd", "radius", problem.radius, 2);
  CASE("bad sha", "64 lowercase hex", template_sha256, "ABC");
  CASE("params not object", "not a JSON object", params, "[1,2]");
  CASE("params not JSON", "not a JSON object", params, "{bx:1}");
  CASE("params float", "not an integer", params, "{\"bx\":1.5}");
  CASE("params nested", "not an integer", params, "{\"bx\":{\"deep\":1}}");
  CASE("params twice", "given twice", params, "{\"bx\":1,\"bx\":2}");
  CASE("params bad name", "not an identifier", params, "{\"b x\":1}");
  CASE("no timing", "min <= median", median_ms, 0);
  CASE("no gpu", "no GPU", gpu_id, 999);
  CASE("failed without why", "no error says why", outcome, PM__DB_LAUNCH_ERROR);
#undef CASE
  for (int i = 0; i < n; i++) {
    cr_assert_eq(pm__db_measurement_put(db, &cases[i].m), PM_EINVAL, "%s", cases[i].why);
    expect_msg(cases[i].needle);
  }
  /* a type the op does not take: every built-in takes all four, so an op of this test's own */
  static const pm__db_op sum = {"sum", 0, 0, 0, NULL, {"", NULL}, 1u << PM_F32, NULL, NULL, NULL};
  static const pm__db_op *const ops[] = {&sum, NULL};
  pm__db *mem = NULL;
  cr_assert_eq(pm__db_open(ctx, NULL, PM__DB_MEMORY, ops, &mem), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_measurement typed = dbtest_measurement(
      add_gpu(mem, 0, 0), (pm__db_problem){.op = "sum", .dtype = "bf16", .n = 1000}, SHA_A,
      "{\"bx\":1}", 1);
  cr_assert_eq(pm__db_measurement_put(mem, &typed), PM_EINVAL);
  expect_msg("sum: no dtype 'bf16' (f32)");
  typed.problem.dtype = "f32";
  cr_assert_eq(pm__db_measurement_put(mem, &typed), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_close(mem);

  pm__db_problem reduce = {.op = "reduce", .dtype = "f32", .n = 1 << 20, .rows = 4};
  pm__db_measurement m = good;
  m.problem = reduce;
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_EINVAL, "reduce has no rows");
  pm__db_problem filter = {.op = "filter",
                           .dtype = "f32",
                           .rows = 64,
                           .cols = 64,
                           .radius = 4,
                           .variant = "border=clamp"};
  m.problem = filter;
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_EINVAL, "radius 4");
  cr_assert_eq(dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement"), 0);
  /* One seed per problem. */
  m = good;
  m.is_seed = 1;
  put(db, &m);
  m.params = "{\"bx\":2}";
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_EINVAL);
  expect_msg("seed");
  typed = good;
  typed.problem.dtype = "bf16";
  cr_assert_eq(pm__db_measurement_put(db, &typed), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_close(db);
}

Test(db, the_winner_view_and_lookup_agree_with_speedup_over_the_seed) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  cr_assert_eq(pm__db_template_current(db, "matadd", SHA_A), PM_OK);
  pm__db_problem p = dbtest_matadd(8192, 8192);
  pm__db_measurement seed = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":16,\"by\":16}", 4.0);
  seed.is_seed = 1;
  put(db, &seed);
  pm__db_measurement mid = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":32,\"by\":8}", 2.0);
  put(db, &mid);
  pm__db_measurement best = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":64,\"by\":4}", 1.6);
  put(db, &best);
  /* Faster, but not verified, or wrong, or failed: never the winner. */
  pm__db_measurement unverified = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":128,\"by\":2}", 0.5);
  unverified.verified = 0;
  put(db, &unverified);
  pm__db_measurement wrong = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":256,\"by\":1}", 0.4);
  wrong.outcome = PM__DB_WRONG_RESULT, wrong.error = "max error 0.5 at (3, 7)";
  put(db, &wrong);
  pm__db_measurement failed = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":512,\"by\":1}", 0);
  failed.outcome = PM__DB_COMPILE_ERROR, failed.error = "matadd.cu(12): error: too many threads";
  put(db, &failed);

  sqlite3 *h = pm__db_handle(db);
  char *row = dbtest_rows(h, "SELECT config, median_ms, seed_config, speedup FROM winner");
  cr_assert_str_eq(row, "bx=64 by=4|1.6|bx=16 by=16|2.5\n");
  free(row);
  row =
      dbtest_rows(h, "SELECT status, error FROM measurement WHERE status <> 'ok' ORDER BY status");
  cr_assert_str_eq(row,
                   "compile_error|matadd.cu(12): error: too many threads\n"
                   "wrong_result|max error 0.5 at (3, 7)\n");
  free(row);

  pm__device_info d = dbtest_gpu(0, 0);
  pm__db_winner w;
  cr_assert_eq(pm__db_winner_get(db, &d, &p, SHA_A, &w), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_str_eq(w.config, "bx=64 by=4");
  cr_assert_str_eq(w.params, "{\"bx\":64,\"by\":4}");
  cr_assert_float_eq(w.median_ms, 1.6, 1e-12);
  cr_assert_float_eq(w.speedup, 2.5, 1e-12);
  cr_assert_eq(w.same_gpu, 1);
  cr_assert_eq(w.rows, 8192);
  cr_assert_eq(w.samples, 20);
  /* No seed measured: speedup 0 (NULL in the view). */
  pm__db_problem q = dbtest_matadd(1024, 1024);
  pm__db_measurement only = dbtest_measurement(gpu, q, SHA_A, "{\"bx\":32,\"by\":8}", 1.0);
  put(db, &only);
  cr_assert_eq(pm__db_winner_get(db, &d, &q, SHA_A, &w), PM_OK);
  cr_assert_eq(w.speedup, 0.0);
  cr_assert_eq(
      dbtest_int(h,
                 "SELECT count(*) FROM winner WHERE problem = 'rows=1024 cols=1024 order=row'"
                 " AND speedup IS NULL"),
      1);
  pm__db_problem none = dbtest_matadd(16, 16);
  cr_assert_eq(pm__db_winner_get(db, &d, &none, SHA_A, &w), PM_ENOTFOUND);
  expect_msg("nothing tuned");
  pm__db_close(db);
}

Test(db, a_changed_template_invalidates_its_rows_but_keeps_them) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  cr_assert_eq(pm__db_template_current(db, "matadd", SHA_A), PM_OK);
  pm__db_problem p = dbtest_matadd(4096, 4096);
  pm__db_measurement m = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":32}", 1.0);
  put(db, &m);
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM winner"), 1);
  pm__device_info d = dbtest_gpu(0, 0);
  pm__db_winner w;
  int found = 0;
  cr_assert_eq(pm__db_winner_get(db, &d, &p, SHA_A, &w), PM_OK);

  /* The template's source changed: its hash is now SHA_B. */
  cr_assert_eq(pm__db_template_current(db, "matadd", SHA_B), PM_OK);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM winner"), 0, "old rows are not winners");
  cr_assert_eq(pm__db_winner_get(db, &d, &p, SHA_B, &w), PM_ENOTFOUND, "nor served");
  cr_assert_eq(pm__db_winner_nearest(db, &d, &p, SHA_B, &w), PM_ENOTFOUND);
  cr_assert_eq(pm__db_measured(db, gpu, 0, &p, "bx=32", SHA_B, &found), PM_OK);
  cr_assert_eq(found, 0, "a resumed run measures it again");
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 1, "kept for history");
  m.template_sha256 = SHA_B;
  m.median_ms = 0.8, m.min_ms = 0.7, m.max_ms = 0.9;
  put(db, &m);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 2);
  char *row = dbtest_rows(h, "SELECT template_sha256 = '" SHA_B "', median_ms FROM winner");
  cr_assert_str_eq(row, "1|0.8\n");
  free(row);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM template WHERE op = 'matadd' AND current = 1"),
               1);
  /* A hash belongs to one op. */
  pm__db_measurement other = dbtest_measurement(
      gpu, (pm__db_problem){.op = "reduce", .dtype = "f32", .n = 1000}, SHA_B, "{\"bx\":32}", 1.0);
  cr_assert_eq(pm__db_measurement_put(db, &other), PM_EINVAL);
  expect_msg("matadd's");
  pm__db_close(db);
}

Test(db, other_gpus_of_the_model_are_served_this_gpu_first) {
  pm__db *db = open_rw();
  int64_t a = add_gpu(db, 0, 0), b = add_gpu(db, 0, 1);
  pm__db_problem p = dbtest_matadd(2048, 2048);
  pm__db_measurement ma = dbtest_measurement(a, p, SHA_A, "{\"bx\":32}", 1.0);
  put(db, &ma);
  pm__device_info db_b = dbtest_gpu(0, 1), other_b = dbtest_gpu(0, 7), a100 = dbtest_gpu(1, 0);
  pm__db_winner w;
  cr_assert_eq(pm__db_winner_get(db, &other_b, &p, SHA_A, &w), PM_OK,
               "a GPU of the same model, never recorded (read-only serving): %s", pm_errmsg(ctx));
  cr_assert_eq(w.same_gpu, 0);
  cr_assert_str_eq(w.config, "bx=32");
  cr_assert_eq(pm__db_winner_get(db, &a100, &p, SHA_A, &w), PM_ENOTFOUND, "another model");
  pm__device_info fewer = dbtest_gpu(0, 0);
  fewer.sm_count = 114;
  snprintf(fewer.uuid, sizeof fewer.uuid, "GPU-other");
  cr_assert_eq(pm__db_winner_get(db, &fewer, &p, SHA_A, &w), PM_ENOTFOUND, "fewer SMs");
  /* B's own measurement wins for B although A's is faster. */
  pm__db_measurement mb = dbtest_measurement(b, p, SHA_A, "{\"bx\":64}", 1.3);
  put(db, &mb);
  cr_assert_eq(pm__db_winner_get(db, &db_b, &p, SHA_A, &w), PM_OK);
  cr_assert_str_eq(w.config, "bx=64");
  cr_assert_eq(w.same_gpu, 1);
  pm__db_close(db);
}

Test(db, the_nearest_tuned_size_is_by_element_count_then_aspect) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  const int64_t sizes[][2] = {{1024, 1024}, {4096, 4096}, {4096, 1024}};
  for (int i = 0; i < 3; i++) {
    char params[32];
    snprintf(params, sizeof params, "{\"bx\":%d}", i + 1);
    pm__db_measurement m =
        dbtest_measurement(gpu, dbtest_matadd(sizes[i][0], sizes[i][1]), SHA_A, params, 1.0);
    put(db, &m);
  }
  pm__db_measurement col =
      dbtest_measurement(gpu, dbtest_matadd(2048, 2048), SHA_A, "{\"bx\":9}", 1);
  col.problem.variant = "order=col";
  put(db, &col);
  pm__device_info d = dbtest_gpu(0, 0);
  pm__db_winner w;
  struct {
    int64_t rows, cols, want_rows, want_cols;
    const char *config;
  } cases[] = {
      {2048, 2048, 4096, 1024, "bx=3"}, /* same count (distance 0) beats same aspect */
      {8192, 2048, 4096, 4096, "bx=2"}, /* count first, aspect second */
      {1024, 4096, 4096, 1024, "bx=3"}, /* same count wins, even at the opposite aspect */
      {1000, 1000, 1024, 1024, "bx=1"}, /* nearly exact */
      {1, 1, 1024, 1024, "bx=1"},       /* far below everything */
      {4096, 4096, 4096, 4096, "bx=2"}, /* exact */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    pm__db_problem p = dbtest_matadd(cases[i].rows, cases[i].cols);
    cr_assert_eq(pm__db_winner_nearest(db, &d, &p, SHA_A, &w), PM_OK, "%s", pm_errmsg(ctx));
    cr_assert_eq(w.rows, cases[i].want_rows, "%lldx%lld", (long long)cases[i].rows,
                 (long long)cases[i].cols);
    cr_assert_eq(w.cols, cases[i].want_cols, "%lldx%lld", (long long)cases[i].rows,
                 (long long)cases[i].cols);
    cr_assert_str_eq(w.config, cases[i].config);
  }
  pm__db_problem p = dbtest_matadd(4096, 4096);
  cr_assert_eq(pm__db_winner_nearest(db, &d, &p, SHA_A, &w), PM_OK);
  cr_assert_eq(w.distance, 0.0);
  p = dbtest_matadd(2048, 2048);
  cr_assert_eq(pm__db_winner_nearest(db, &d, &p, SHA_A, &w), PM_OK);
  cr_assert_float_eq(w.aspect_distance, log(4.0), 1e-9);
  p.variant = "order=col";
  cr_assert_eq(pm__db_winner_nearest(db, &d, &p, SHA_A, &w), PM_OK);
  cr_assert_str_eq(w.config, "bx=9", "only sizes of the same variant");
  /* reduce: by n; filter: only the same radius. */
  for (int i = 0; i < 2; i++) {
    pm__db_problem r = {.op = "reduce", .dtype = "f32", .n = i ? 1 << 24 : 1 << 16};
    char params[32];
    snprintf(params, sizeof params, "{\"ept\":%d}", i + 1);
    pm__db_measurement m = dbtest_measurement(gpu, r, SHA_B, params, 1.0);
    put(db, &m);
  }
  pm__db_problem r = {.op = "reduce", .dtype = "f32", .n = 1 << 22};
  cr_assert_eq(pm__db_winner_nearest(db, &d, &r, SHA_B, &w), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(w.n, 1 << 24);
  pm__db_problem f = {.op = "filter",
                      .dtype = "f32",
                      .rows = 512,
                      .cols = 512,
                      .radius = 1,
                      .variant = "border=zero"};
  pm__db_measurement fm =
      dbtest_measurement(gpu, f, "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
                         "{\"bx\":8}", 1.0);
  put(db, &fm);
  f.radius = 2;
  cr_assert_eq(pm__db_winner_nearest(db, &d, &f, fm.template_sha256, &w), PM_ENOTFOUND);
  f.radius = 1, f.rows = 8192;
  cr_assert_eq(pm__db_winner_nearest(db, &d, &f, fm.template_sha256, &w), PM_OK);
  cr_assert_eq(w.radius, 1);
  cr_assert_eq(w.rows, 512);
  pm__db_close(db);
}

Test(db, measured_says_what_a_resumed_run_may_skip) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  pm__db_problem p = dbtest_matadd(512, 512);
  int found = -1;
  cr_assert_eq(pm__db_measured(db, gpu, 0, &p, "bx=32 by=8", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 0);
  pm__db_measurement m = dbtest_measurement(gpu, p, SHA_A, "{\"bx\":32,\"by\":8}", 1.0);
  m.outcome = PM__DB_LAUNCH_ERROR, m.error = "too many resources requested for launch";
  put(db, &m);
  cr_assert_eq(pm__db_measured(db, gpu, 0, &p, "bx=32 by=8", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 1, "a failure is stored too: not tried again");
  pm__db_problem other = dbtest_matadd(512, 1024);
  cr_assert_eq(pm__db_measured(db, gpu, 0, &other, "bx=32 by=8", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 0);
  cr_assert_eq(pm__db_measured(db, gpu, 0, &p, "bx=32 by=8", "xyz", &found), PM_EINVAL);
  pm__db_close(db);
}

/* A progress handler's count: every 100 virtual-machine steps of the connection. */
static int count_steps(void *arg) {
  ++*(int *)arg;
  return 0;
}

/* The tuner asks pm__db_measured for every candidate: it must look the row up in the unique
 * index, not walk every row of the op and type (up to 20 ms a question on a database holding
 * the shipped H100 document, with the model's GPUs as `gpu_id = ? OR gpu_id IN (...)`). */
Test(db, measured_looks_up_one_row_however_many_the_op_has) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0), twin = add_gpu(db, 0, 1);
  cr_assert_eq(pm__db_begin(db), PM_OK);
  for (int i = 1; i <= 3000; i++) {
    pm__db_measurement m = dbtest_measurement(i % 2 ? gpu : twin, dbtest_matadd(i, 512), SHA_A,
                                              "{\"bx\":32,\"by\":8}", 1.0);
    cr_assert_eq(pm__db_measurement_write(db, &m, NULL, 0, NULL), PM_OK, "%s", pm_errmsg(ctx));
  }
  cr_assert_eq(pm__db_commit(db), PM_OK);
  pm__db_problem p = dbtest_matadd(2, 512); /* the twin's */
  for (int model = 0; model < 2; model++)
    for (int pass = 0; pass < 2; pass++) { /* the first prepares the statement */
      int found = -1, steps = 0;
      sqlite3_progress_handler(pm__db_handle(db), 100, count_steps, &steps);
      cr_assert_eq(pm__db_measured(db, gpu, model, &p, "bx=32 by=8", SHA_A, &found), PM_OK);
      sqlite3_progress_handler(pm__db_handle(db), 0, NULL, NULL);
      cr_assert_eq(found, model, "model %d", model);
      if (pass == 1) cr_assert_lt(steps, 5, "model %d: %d00 steps for one row", model, steps);
    }
  pm__db_close(db);
}

/* With model: what another GPU of this one's model measured (an import of a fleet's export)
 * counts, what a GPU of another model measured does not. */
Test(db, measured_of_the_model_counts_a_twin_s_rows) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0), twin = add_gpu(db, 0, 1), other = add_gpu(db, 1, 2);
  pm__db_problem p = dbtest_matadd(512, 512), q = dbtest_matadd(512, 1024);
  pm__db_measurement a = dbtest_measurement(twin, p, SHA_A, "{\"bx\":32,\"by\":8}", 1.0),
                     b = dbtest_measurement(other, q, SHA_A, "{\"bx\":32,\"by\":8}", 1.0);
  put(db, &a);
  put(db, &b);
  int found = -1;
  cr_assert_eq(pm__db_measured(db, gpu, 0, &p, "bx=32 by=8", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 0, "this GPU alone: the twin's row does not count");
  cr_assert_eq(pm__db_measured(db, gpu, 1, &p, "bx=32 by=8", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 1, "the model: the twin's row counts");
  cr_assert_eq(pm__db_measured(db, gpu, 1, &q, "bx=32 by=8", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 0, "another model's row does not");
  cr_assert_eq(pm__db_measured(db, gpu, 1, &p, "bx=32 by=16", SHA_A, &found), PM_OK);
  cr_assert_eq(found, 0);
  pm__db_close(db);
}

/* ---- Cubins --------------------------------------------------------------------------------- */

Test(db, defines_text_is_canonical) {
  char out[128];
  const char *d[] = {"BY=8", "BX=32", "B1=2", "B=1", "VEC"};
  cr_assert_eq(pm__db_defines_text(ctx, d, 5, out, sizeof out), PM_OK);
  cr_assert_str_eq(out, "-DB=1 -DB1=2 -DBX=32 -DBY=8 -DVEC");
  cr_assert_eq(pm__db_defines_text(ctx, NULL, 0, out, sizeof out), PM_OK);
  cr_assert_str_eq(out, "");
  cr_assert_eq(pm__db_defines_text(ctx, d, 5, out, 10), PM_EINVAL);
  const char *bad[] = {"A B"};
  cr_assert_eq(pm__db_defines_text(ctx, bad, 1, out, sizeof out), PM_EINVAL);
}

Test(db, cubins_are_cached_per_exact_key) {
  pm__db *db = open_rw();
  static unsigned char blob[20000];
  for (size_t i = 0; i < sizeof blob; i++) blob[i] = (unsigned char)(i * 31);
  memcpy(blob, "\177ELF", 4);
  pm__cubin b = {.data = blob, .size = sizeof blob, .compile_ms = 36.7}, got;
  pm__db_cubin_key k = {SHA_A, "-DBX=32 -DBY=8", "sm_90", "13.0", 13000};
  cr_assert_eq(pm__db_cubin_get(db, &k, &got), PM_ENOTFOUND);
  cr_assert_eq(pm__db_cubin_put(db, &k, &b), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_cubin_get(db, &k, &got), PM_OK);
  cr_assert_eq(got.size, sizeof blob);
  cr_assert_eq(memcmp(got.data, blob, sizeof blob), 0);
  cr_assert_float_eq(got.compile_ms, 36.7, 1e-9);
  pm__cubin_free(&got);
  /* Any other part of the key misses: a new NVRTC or driver compiles anew. */
  pm__db_cubin_key other[] = {{SHA_B, "-DBX=32 -DBY=8", "sm_90", "13.0", 13000},
                              {SHA_A, "-DBX=64 -DBY=8", "sm_90", "13.0", 13000},
                              {SHA_A, "-DBX=32 -DBY=8", "sm_80", "13.0", 13000},
                              {SHA_A, "-DBX=32 -DBY=8", "sm_90", "13.1", 13000},
                              {SHA_A, "-DBX=32 -DBY=8", "sm_90", "13.0", 13010}};
  for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
    cr_assert_eq(pm__db_cubin_get(db, &other[i], &got), PM_ENOTFOUND, "key %zu", i);
    cr_assert_null(got.data);
  }
  /* Storing again replaces. */
  blob[100] ^= 0xff;
  cr_assert_eq(pm__db_cubin_put(db, &k, &b), PM_OK);
  cr_assert_eq(pm__db_cubin_get(db, &k, &got), PM_OK);
  cr_assert_eq(((unsigned char *)got.data)[100], blob[100]);
  pm__cubin_free(&got);
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM cubin"), 1);
  cr_assert_eq(dbtest_int(h, "SELECT sum(size) FROM cubin"), (int64_t)sizeof blob);
  pm__db_cubin_key bad = {SHA_A, "", "90", "13.0", 0};
  cr_assert_eq(pm__db_cubin_put(db, &bad, &b), PM_EINVAL);
  pm__cubin empty = {0};
  cr_assert_eq(pm__db_cubin_put(db, &k, &empty), PM_EINVAL);
  pm__db_close(db);
  /* And read-only, as a library call reads it. */
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK);
  cr_assert_eq(pm__db_cubin_get(db, &k, &got), PM_OK);
  pm__cubin_free(&got);
  pm__db_close(db);
}

/* ---- Runs, killed processes, check ---------------------------------------------------------- */

Test(db, runs_record_how_they_ended) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0), run = 0, run2 = 0;
  cr_assert_eq(pm__db_run_begin(db, gpu, "pmtune tune --op matadd", &run), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_eq(pm__db_run_begin(db, 0, "pmtune tune --op reduce", &run2), PM_OK);
  cr_assert_eq(pm__db_run_end(db, run, PM__DB_RUN_OK, NULL), PM_OK);
  cr_assert_eq(pm__db_run_end(db, run2, PM__DB_RUN_FAILED, "no CUDA device"), PM_OK);
  cr_assert_eq(pm__db_run_end(db, 12345, PM__DB_RUN_OK, NULL), PM_ENOTFOUND);
  char *rows = dbtest_rows(pm__db_handle(db),
                           "SELECT command_line, status, ifnull(message, '-'), pmtune_version,"
                           " gpu_id IS NULL, ended_at IS NOT NULL FROM run ORDER BY id");
  char expect[512];
  snprintf(
      expect, sizeof expect,
      "pmtune tune --op matadd|ok|-|%s|0|1\npmtune tune --op reduce|failed|no CUDA device|%s|1|1\n",
      pm_version(), pm_version());
  cr_assert_str_eq(rows, expect);
  free(rows);
  pm__db_close(db);
}

Test(db, check_finds_orphan_rows) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  fill(db, gpu, 3);
  pm__db_close(db);
  /* sqlite3 does not enforce foreign keys unless asked: a person can leave orphans. */
  dbtest_exec(path, "DELETE FROM gpu;");
  db = open_rw();
  char *report = NULL;
  int problems = 0;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(problems, 3, "%s", report);
  cr_assert_not_null(strstr(report, "measurement row 1 refers to a missing gpu row"), "%s", report);
  free(report);
  pm__db_close(db);
}

/* The child: tunes configuration after configuration of one problem, each stored as soon as it
 * is measured, until its parent kills it (most likely in the middle of a write). */
static void child_tunes_forever(void) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  int64_t gpu = 0, run = 0;
  pm__device_info d = dbtest_gpu(0, 0);
  if (pm_open(&c, &o) != PM_OK || pm__db_open(c, path, 0, pm__ops_db(), &db) != PM_OK ||
      pm__db_gpu_put(db, &d, 1, 1, &gpu) != PM_OK ||
      pm__db_run_begin(db, gpu, "tune", &run) != PM_OK)
    _exit(3);
  for (int i = 0;; i++) {
    char params[32];
    snprintf(params, sizeof params, "{\"bx\":%d}", i);
    pm__db_measurement m = dbtest_measurement(gpu, dbtest_matadd(4096, 4096), SHA_A, params, 1 + i);
    m.run_id = run;
    if (pm__db_measurement_put(db, &m) != PM_OK) _exit(4);
  }
}

Test(db, a_killed_run_leaves_a_sound_database_and_the_next_resumes) {
  pm__db_close(open_rw());
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) child_tunes_forever();
  /* Kill it, with SIGKILL, once it has stored a good part. */
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  int64_t stored = 0;
  for (int i = 0; i < 20000 && stored < 200; i++) {
    nanosleep(&(struct timespec){0, 1000000}, NULL);
    stored = dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement");
  }
  pm__db_close(db);
  cr_assert_eq(kill(pid, SIGKILL), 0);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFSIGNALED(status), "the child was killed (exit %d)", WEXITSTATUS(status));
  cr_assert_geq(stored, 200);

  /* pmtune db check passes. */
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  char *report = NULL;
  int problems = -1;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(problems, 0, "%s", report);
  cr_assert_not_null(strstr(report, "1 still running or killed"), "%s", report);
  free(report);
  int64_t have = dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement");
  cr_assert_geq(have, stored);
  cr_assert_eq(dbtest_int(pm__db_handle(db),
                          "SELECT count(*) FROM measurement WHERE median_ms IS NULL"
                          " OR config <> 'bx=' || json_extract(params, '$.bx')"),
               0, "every row is whole");
  pm__db_close(db);

  /* The next run resumes: it measures only what is not stored. */
  db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0), run = 0;
  cr_assert_eq(pm__db_run_begin(db, gpu, "tune again", &run), PM_OK);
  cr_assert_eq(dbtest_int(pm__db_handle(db),
                          "SELECT count(*) FROM run WHERE status = 'interrupted'"
                          " AND message LIKE '%killed%'"),
               1, "the killed run is marked interrupted");
  int skipped = 0, measured = 0, all = (int)have + 50;
  for (int i = 0; i < all; i++) {
    char params[32], config[32];
    snprintf(params, sizeof params, "{\"bx\":%d}", i);
    snprintf(config, sizeof config, "bx=%d", i);
    pm__db_problem p = dbtest_matadd(4096, 4096);
    int found = 0;
    cr_assert_eq(pm__db_measured(db, gpu, 0, &p, config, SHA_A, &found), PM_OK);
    if (found) {
      skipped++;
      continue;
    }
    pm__db_measurement m = dbtest_measurement(gpu, p, SHA_A, params, 1 + i);
    m.run_id = run;
    put(db, &m);
    measured++;
  }
  cr_assert_eq(skipped, have, "what was stored is not measured again");
  cr_assert_eq(measured, 50);
  cr_assert_eq(pm__db_run_end(db, run, PM__DB_RUN_OK, NULL), PM_OK);
  cr_assert_eq(dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement"), all);
  pm__db_close(db);
}

/* ---- Export and import ---------------------------------------------------------------------- */

/* A database worth exporting: two GPUs of two models, winners with seeds, losers, failures, and
 * rows of an older template. */
static void populate(pm__db *db) {
  int64_t h100 = add_gpu(db, 0, 0), a100 = add_gpu(db, 1, 0);
  cr_assert_eq(pm__db_template_current(db, "matadd", SHA_B), PM_OK);
  cr_assert_eq(pm__db_template_current(db, "reduce", SHA_A), PM_OK);
  int64_t gpus[2] = {h100, a100};
  for (int g = 0; g < 2; g++) {
    pm__db_problem p = dbtest_matadd(4096, 8192);
    pm__db_measurement seed =
        dbtest_measurement(gpus[g], p, SHA_B, "{\"bx\":16,\"by\":16}", 3.0 + g);
    seed.is_seed = 1;
    put(db, &seed);
    pm__db_measurement fast =
        dbtest_measurement(gpus[g], p, SHA_B, "{\"bx\":64,\"by\":4}", 1.25 + g);
    put(db, &fast);
    pm__db_measurement slow = dbtest_measurement(gpus[g], p, SHA_B, "{\"bx\":8,\"by\":8}", 7.5);
    put(db, &slow);
    pm__db_measurement bad = dbtest_measurement(gpus[g], p, SHA_B, "{\"bx\":1024,\"by\":4}", 0);
    bad.outcome = PM__DB_COMPILE_ERROR;
    bad.error = "matadd.cu(3): error: \"quoted\" 'and' \\ back\nslash; DROP TABLE gpu;--";
    put(db, &bad);
    pm__db_measurement old = dbtest_measurement(
        gpus[g], p, "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
        "{\"bx\":64,\"by\":4}", 0.5);
    put(db, &old);
    pm__db_problem r = {.op = "reduce", .dtype = "f32", .n = 123456789};
    pm__db_measurement red =
        dbtest_measurement(gpus[g], r, SHA_A, "{\"ept\":4,\"bs\":256}", 0.333333333333);
    put(db, &red);
  }
}

static char *export_text(pm__db *db, int all, int *count) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f);
  cr_assert_eq(pm__db_export(db, f, all, count), PM_OK, "%s", pm_errmsg(ctx));
  fclose(f);
  return buf;
}

static const char measurements_sql[] =
    "SELECT g.uuid, m.op, m.dtype, m.problem, m.rows, m.cols, m.n, m.radius, m.variant, m.config,"
    " m.params, m.is_seed, m.template_sha256, m.status, m.error, m.median_ms, m.min_ms, m.max_ms,"
    " m.samples, m.gbps, m.verified, m.max_error, m.measured_at"
    " FROM measurement m JOIN gpu g ON g.id = m.gpu_id ORDER BY 1, 2, 3, 4, 10, 13";
static const char winners_sql[] =
    "SELECT gpu_uuid, op, problem, config, median_ms, seed_config, speedup FROM winner ORDER BY 1, "
    "2, 3";

/* What an export carries: of each size, the seed, the op's default and every
 * configuration among the best 3 of some size of its group within a factor 16 in elements, so
 * that a size between two imported ones is decided from configurations measured at both; and
 * what `pmtune tune` measures to that end (pm__db_carry_configs): the same without seed and
 * default, which the tuner measures at every size anyway. */
#define REDUCE_DEFAULT                                                                         \
  "{\"block\":256,\"items\":4,\"vec\":4,\"step\":2,\"combine\":0,\"acc\":0,\"grid\":4}"
static int collect(void *arg, const char *config) {
  char *out = arg;
  strcat(out, config);
  strcat(out, ";");
  return 0;
}
static int count_size(void *arg, const pm__db_problem *p) {
  (void)p;
  ++*(int *)arg;
  return 0;
}

/* A verified reduce f32 measurement of template SHA_A, 1 ms, on gpus[which] at n with params. */
typedef struct reduce_row {
  int which;
  int64_t n;
  const char *params;
} reduce_row;

static void put_reduce_rows(pm__db *db, const int64_t *gpus, const reduce_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    pm__db_problem p = {.op = "reduce", .dtype = "f32", .n = rows[i].n, .variant = ""};
    pm__db_measurement m = dbtest_measurement(gpus[rows[i].which], p, SHA_A, rows[i].params, 1.0);
    put(db, &m);
  }
}

/* `pmtune tune --carry` carries across the sizes any GPU of this one's model measured (an
 * import's), where a run's own carrying reads this GPU's alone; another model's never count; and
 * it leaves out what a GPU of the model measured at the size already (the tuner skips what this
 * GPU did). */
Test(db, carrying_reads_the_model_s_gpus_where_asked) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0), twin = add_gpu(db, 0, 1), other = add_gpu(db, 1, 0);
  cr_assert_eq(pm__db_template_current(db, "reduce", SHA_A), PM_OK);
  static const reduce_row rows[] = {{0, 1000, "{\"a\":1}"}, {0, 8000, "{\"b\":1}"},
                                    {1, 2000, "{\"t\":1}"}, {2, 4000, "{\"o\":1}"}};
  put_reduce_rows(db, (const int64_t[]){gpu, twin, other}, rows, sizeof rows / sizeof *rows);
  pm__db_problem at = {.op = "reduce", .dtype = "f32", .n = 1000, .variant = ""};
  char got[256] = "";
  cr_assert_eq(pm__db_carry_configs(db, gpu, 0, 0, &at, SHA_A, collect, got), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_str_eq(got, "a=1;b=1;", "this GPU's sizes alone");
  got[0] = '\0';
  cr_assert_eq(pm__db_carry_configs(db, gpu, 1, 0, &at, SHA_A, collect, got), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_str_eq(got, "b=1;t=1;", "the model's twin's too, never another model's; not a=1, "
                                     "measured at 1000 already");
  pm__db_problem at2000 = at;
  at2000.n = 2000;
  got[0] = '\0';
  cr_assert_eq(pm__db_carry_configs(db, gpu, 1, 0, &at2000, SHA_A, collect, got), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_str_eq(got, "a=1;b=1;", "at the twin's 2000: what no GPU of the model measured there");
  int sizes = 0;
  cr_assert_eq(pm__db_group_sizes(db, gpu, 0, &at, SHA_A, count_size, &sizes), PM_OK);
  cr_assert_eq(sizes, 2, "1000 and 8000");
  sizes = 0;
  cr_assert_eq(pm__db_group_sizes(db, gpu, 1, &at, SHA_A, count_size, &sizes), PM_OK);
  cr_assert_eq(sizes, 3, "and the twin's 2000, not the other model's 4000");
  pm__db_close(db);
}

/* Where this GPU's model measured nothing of a group, `pmtune tune --carry` carries from the
 * nearest model of its architecture (the nearest SM count): its sizes, and its best configurations
 * less what this model measured at the size already; another architecture's never. */
Test(db, carrying_takes_the_nearest_model_of_the_architecture_where_its_own_has_none) {
  pm__db *db = open_rw();
  pm__device_info me = dbtest_gpu(0, 0), far = dbtest_gpu(0, 1), near = dbtest_gpu(0, 2);
  snprintf(me.name, sizeof me.name, "Fake H200");
  snprintf(far.name, sizeof far.name, "Fake H100 PCIe"), far.sm_count = 114;
  snprintf(near.name, sizeof near.name, "Fake H100 SXM");
  int64_t mine = 0, f = 0, n = 0, older = add_gpu(db, 1, 0);
  cr_assert_eq(pm__db_gpu_put(db, &me, 12040, 12080, &mine), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_gpu_put(db, &far, 12040, 12080, &f), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_gpu_put(db, &near, 12040, 12080, &n), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_template_current(db, "reduce", SHA_A), PM_OK);
  static const reduce_row rows[] = {{0, 1000, "{\"a\":1}"}, {0, 8000, "{\"b\":1}"},
                                    {1, 1000, "{\"f\":1}"}, {2, 1000, "{\"o\":1}"}};
  put_reduce_rows(db, (const int64_t[]){n, f, older}, rows, sizeof rows / sizeof *rows);
  pm__db_problem at = {.op = "reduce", .dtype = "f32", .n = 1000, .variant = ""};
  int64_t sib = -1;
  char name[64];
  cr_assert_eq(pm__db_group_sibling(db, mine, &at, SHA_A, &sib, name, sizeof name), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_eq(sib, n, "the same SM count before the other");
  cr_assert_str_eq(name, "Fake H100 SXM");
  char got[256] = "";
  cr_assert_eq(pm__db_carry_configs(db, mine, 1, sib, &at, SHA_A, collect, got), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_str_eq(got, "a=1;b=1;", "the sibling's best at 1000 and 8000");
  pm__db_measurement m = dbtest_measurement(mine, at, SHA_A, "{\"a\":1}", 1.0);
  put(db, &m);
  got[0] = '\0';
  cr_assert_eq(pm__db_carry_configs(db, mine, 1, sib, &at, SHA_A, collect, got), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_str_eq(got, "b=1;", "less what this model measured at 1000");
  pm__db_problem f16 = at;
  f16.dtype = "f16";
  pm__db_measurement o16 = dbtest_measurement(older, f16, SHA_A, "{\"o\":1}", 1.0);
  put(db, &o16);
  cr_assert_eq(pm__db_group_sibling(db, mine, &f16, SHA_A, &sib, name, sizeof name), PM_OK);
  cr_assert_eq(sib, 0, "another architecture's is no sibling");
  pm__db_close(db);
}

Test(db, export_carries_the_best_of_the_sizes_around_each_with_seed_and_default) {
  pm__db *src = open_rw();
  int64_t gpu = add_gpu(src, 0, 0);
  cr_assert_eq(pm__db_template_current(src, "reduce", SHA_A), PM_OK);
  static const struct { int64_t n; const char *params; double ms; int seed; } rows[] = {
      {1000, "{\"a\":1}", 1.0, 0},   {1000, "{\"b\":1}", 1.1, 0},   {1000, "{\"c\":1}", 1.2, 0},
      {1000, "{\"e\":1}", 1.3, 0},   {1000, "{\"g\":1}", 1.4, 0},   {1000, REDUCE_DEFAULT, 5.0, 0},
      {1000, "{\"s\":1}", 4.0, 1},   {8000, "{\"e\":1}", 1.0, 0},   {8000, "{\"a\":1}", 2.0, 0},
      {8000, "{\"b\":1}", 2.1, 0},   {8000, "{\"c\":1}", 2.2, 0},   {8000, "{\"f\":1}", 3.0, 0},
      {8000, REDUCE_DEFAULT, 6.0, 0}, {8000, "{\"s\":1}", 4.0, 1},  {256000, "{\"f\":1}", 1.0, 0},
      {256000, "{\"e\":1}", 1.5, 0}, {256000, "{\"a\":1}", 3.0, 0}, {256000, "{\"b\":1}", 3.1, 0},
      {256000, "{\"c\":1}", 3.2, 0}, {256000, REDUCE_DEFAULT, 9.0, 0},
      {256000, "{\"s\":1}", 8.0, 1}};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    pm__db_problem p = {.op = "reduce", .dtype = "f32", .n = rows[i].n, .variant = ""};
    pm__db_measurement m = dbtest_measurement(gpu, p, SHA_A, rows[i].params, rows[i].ms);
    m.is_seed = rows[i].seed;
    put(src, &m);
  }
  char got[512] = "";
  pm__db_problem at = {.op = "reduce", .dtype = "f32", .n = 8000, .variant = ""};
  cr_assert_eq(pm__db_carry_configs(src, gpu, 0, 0, &at, SHA_A, collect, got), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_str_eq(got, "a=1;b=1;c=1;e=1;", "the best 3 of 1000 and 8000, not 256000's f");
  int count = 0;
  char *doc = export_text(src, 0, &count);
  pm__db_close(src);
  snprintf(path, sizeof path, "%s/carried.db", dir);
  pm__db *dst = open_rw();
  cr_assert_eq(pm__db_import(dst, doc, strlen(doc), NULL), PM_OK, "%s", pm_errmsg(ctx));
  char *carried = dbtest_rows(pm__db_handle(dst),
                              "SELECT n, group_concat(config, ';') FROM (SELECT n, config FROM"
                              " measurement ORDER BY n, config) GROUP BY n ORDER BY n");
  cr_assert_str_eq(carried,
                   "1000|a=1;b=1;block=256 items=4 vec=4 step=2 combine=0 acc=0 grid=4;c=1;e=1;s=1\n"
                   "8000|a=1;b=1;block=256 items=4 vec=4 step=2 combine=0 acc=0 grid=4;c=1;e=1;s=1\n"
                   "256000|a=1;block=256 items=4 vec=4 step=2 combine=0 acc=0 grid=4;e=1;f=1;s=1\n",
                   "%s", doc);
  cr_assert_eq(count, 17, "%s", doc);
  free(carried);
  free(doc);
  pm__db_close(dst);
}

Test(db, export_then_import_gives_the_same_winners_and_measurements) {
  pm__db *src = open_rw();
  populate(src);
  int count = 0;
  char *winners = export_text(src, 0, &count);
  cr_assert_eq(count, 8, "what is carried: each problem's best 3 (at 4096x8192 all three that "
                        "ran), seeds among them: %s", winners);
  char *all = export_text(src, 1, &count);
  cr_assert_eq(count, 12, "%s", all);
  char *src_winners = dbtest_rows(pm__db_handle(src), winners_sql);
  char *src_measurements = dbtest_rows(pm__db_handle(src), measurements_sql);
  pm__db_close(src);

  /* What is carried, into a fresh database: the same winners. */
  snprintf(path, sizeof path, "%s/fleet.db", dir);
  pm__db *dst = open_rw();
  cr_assert_eq(pm__db_template_current(dst, "matadd", SHA_B), PM_OK);
  cr_assert_eq(pm__db_template_current(dst, "reduce", SHA_A), PM_OK);
  pm__db_import_stats st;
  cr_assert_eq(pm__db_import(dst, winners, strlen(winners), &st), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(st.gpus_added, 2);
  cr_assert_eq(st.added, 8);
  char *dst_winners = dbtest_rows(pm__db_handle(dst), winners_sql);
  cr_assert_str_eq(dst_winners, src_winners);
  /* And they serve another GPU of the model, as a fleet machine's library call would. */
  pm__device_info fleet = dbtest_gpu(0, 42);
  pm__db_problem p = dbtest_matadd(4096, 8192);
  pm__db_winner w;
  cr_assert_eq(pm__db_winner_get(dst, &fleet, &p, SHA_B, &w), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_str_eq(w.config, "bx=64 by=4");
  cr_assert_float_eq(w.speedup, 3.0 / 1.25, 1e-12);
  /* Importing the same again changes nothing. */
  cr_assert_eq(pm__db_import(dst, winners, strlen(winners), &st), PM_OK);
  cr_assert_eq(st.added + st.updated + st.gpus_added, 0);
  cr_assert_eq(st.kept, 8);
  pm__db_close(dst);

  /* Everything, into another: the same measurements, and it exports the same document. */
  snprintf(path, sizeof path, "%s/all.db", dir);
  dst = open_rw();
  cr_assert_eq(pm__db_template_current(dst, "matadd", SHA_B), PM_OK);
  cr_assert_eq(pm__db_template_current(dst, "reduce", SHA_A), PM_OK);
  cr_assert_eq(pm__db_import(dst, all, strlen(all), &st), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(st.added, 12);
  char *dst_measurements = dbtest_rows(pm__db_handle(dst), measurements_sql);
  cr_assert_str_eq(dst_measurements, src_measurements);
  char *again = export_text(dst, 1, &count);
  cr_assert_str_eq(strchr(again, '\n'), strchr(all, '\n'), "the same document but for its time");
  pm__db_close(dst);
  free(winners), free(all), free(again);
  free(src_winners), free(src_measurements), free(dst_winners), free(dst_measurements);
}

Test(db, import_keeps_the_later_measurement) {
  pm__db *db = open_rw();
  populate(db);
  char *doc = export_text(db, 1, NULL);
  /* Re-measure one row here: it is now later than the document's. */
  cr_assert_eq(pm__db_template_current(db, "matadd", SHA_B), PM_OK);
  pm__db_measurement m =
      dbtest_measurement(1, dbtest_matadd(4096, 8192), SHA_B, "{\"bx\":8,\"by\":8}", 9.0);
  put(db, &m);
  pm__db_import_stats st;
  cr_assert_eq(pm__db_import(db, doc, strlen(doc), &st), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(st.kept, 12);
  cr_assert_eq(
      dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement WHERE median_ms = 9.0"), 1);
  /* A document measured later than what is stored replaces it. */
  char *later = strdup(doc);
  for (char *p = later; (p = strstr(p, "\"measured_at\":\"")) != NULL; p++)
    memcpy(p + 15, "2999", 4);
  cr_assert_eq(pm__db_import(db, later, strlen(later), &st), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(st.updated, 12);
  cr_assert_eq(
      dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement WHERE median_ms = 9.0"), 0);
  free(doc);
  free(later);
  pm__db_close(db);
}

/* Imports doc, which must be refused with needle in the message, and change nothing. */
static void expect_import_refused(pm__db *db, const char *doc, size_t len, const char *needle) {
  sqlite3 *h = pm__db_handle(db);
  int64_t m0 = dbtest_int(h, "SELECT count(*) FROM measurement"),
          g0 = dbtest_int(h, "SELECT count(*) FROM gpu");
  int64_t t0 = dbtest_int(h, "SELECT count(*) FROM template");
  int rc = pm__db_import(db, doc, len, NULL);
  cr_assert_eq(rc, PM_EINVAL, "'%.200s': %s", doc, pm_errmsg(ctx));
  if (needle)
    cr_assert_not_null(strstr(pm_errmsg(ctx), needle), "'%.200s': '%s' not in: %s", doc, needle,
                       pm_errmsg(ctx));
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), m0, "'%.200s'", doc);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM gpu"), g0, "'%.200s'", doc);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM template"), t0, "'%.200s'", doc);
}

/* The export with the first occurrence of from replaced by to. */
static char *edited(const char *doc, const char *from, const char *to) {
  const char *at = strstr(doc, from);
  cr_assert_not_null(at, "'%s' is in the document", from);
  size_t n = strlen(doc) - strlen(from) + strlen(to) + 1;
  char *out = malloc(n);
  snprintf(out, n, "%.*s%s%s", (int)(at - doc), doc, to, at + strlen(from));
  return out;
}

Test(db, malformed_and_hostile_documents_import_nothing) {
  pm__db *src = open_rw();
  populate(src);
  char *doc = export_text(src, 1, NULL);
  pm__db_close(src);
  snprintf(path, sizeof path, "%s/target.db", dir);
  pm__db *db = open_rw();
  int64_t mine = add_gpu(db, 0, 9);
  pm__db_measurement m = dbtest_measurement(mine, dbtest_matadd(64, 64), SHA_B, "{\"bx\":1}", 1.0);
  put(db, &m);

  const char *plain[][2] = {
      {"", "not valid JSON"},
      {"null", "expected an object"},
      {"[]", "expected an object"},
      {"\"pmtune\"", "expected an object"},
      {"{", "not valid JSON"},
      {"{}", "no field 'format'"},
      /* (the fuzzer's document that SQLite 3.40's json_valid passes and json_each refuses is in
       * tests/fuzz/corpus/import: test_cli_db imports it) */
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],\"measurements\":[],}",
       "not valid JSON"},
      {"{\"format\":\"csv\",\"version\":1,\"gpus\":[],\"measurements\":[]}", "format"},
      {"{\"format\":\"pmtune-export\",\"version\":2,\"gpus\":[],\"measurements\":[]}", "version"},
      {"{\"format\":\"pmtune-export\",\"version\":1.0,\"gpus\":[],\"measurements\":[]}",
       "expected an integer"},
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":{},\"measurements\":[]}",
       "expected an array"},
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],\"measurements\":[],\"evil\":1}",
       "unknown field"},
      {"{\"format\":\"pmtune-export\",\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],"
       "\"measurements\":[]}",
       "twice"},
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[1],\"measurements\":[]}",
       "gpus[0]: expected an object"},
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],\"measurements\":[null]}",
       "measurements[0]"},
      {"{\"format\":\"pmtune-export\",\"version\":NaN,\"gpus\":[],\"measurements\":[]}",
       "not valid JSON"},
      {"{\"format\":\"pmtune-\\u0000export\",\"version\":1,\"gpus\":[],\"measurements\":[]}",
       "\\u0000"},
      {"{\"format\":\"\\ud800\",\"version\":1,\"gpus\":[],\"measurements\":[]}", "surrogate"},
      {"{\"format\":\"\xff\xfe\",\"version\":1,\"gpus\":[],\"measurements\":[]}", "UTF-8"},
      {"{\"format\":\"\xc0\xaf\",\"version\":1,\"gpus\":[],\"measurements\":[]}", "UTF-8"},
  };
  for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
    expect_import_refused(db, plain[i][0], strlen(plain[i][0]), plain[i][1]);
  expect_import_refused(db, "{\"format\"\0:1}", 13, "NUL");

  /* Deep nesting, at the top and inside a field. */
  size_t depth = 100000;
  char *deep = malloc(2 * depth + 1);
  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  deep[2 * depth] = '\0';
  expect_import_refused(db, deep, strlen(deep), "not valid JSON");
  char *nested = malloc(2 * depth + 64);
  snprintf(nested, 2 * depth + 64, "\"params\":%s", deep);
  char *in_field = edited(doc, "\"params\":{\"bx\":1024,\"by\":4}", nested);
  expect_import_refused(db, in_field, strlen(in_field), "not valid JSON");
  free(in_field);
  /* Deep, but not too deep for SQLite's parser: the field's type is wrong. */
  snprintf(nested, 2 * depth + 64, "\"params\":%.1500s%.1500s", deep, deep + depth);
  in_field = edited(doc, "\"params\":{\"bx\":1024,\"by\":4}", nested);
  expect_import_refused(db, in_field, strlen(in_field), "expected an object, got array");
  free(deep), free(nested), free(in_field);

  /* Truncated anywhere. */
  size_t len = strlen(doc);
  for (size_t cut = 0; cut < len; cut += len / 97 + 1) expect_import_refused(db, doc, cut, NULL);

  /* One bad field in a measurement that follows good ones: nothing of those is kept either. */
  const char *last = strstr(doc, "\"gpu\":\"GPU-00000001");
  cr_assert_not_null(last);
  const char *edits[][3] = {
      {"\"rows\":4096", "\"rows\":\"4096\"", "expected an integer"},
      {"\"rows\":4096", "\"rows\":-4096", "rows"},
      {"\"rows\":4096", "\"rows\":123456789012345678901234567890", "out of range"},
      {"\"rows\":4096", "\"rows\":4096.5", "expected an integer"},
      {"\"median_ms\":4.0", "\"median_ms\":1e999", "out of range"},
      {"\"median_ms\":4.0", "\"median_ms\":-4.0", "median"},
      {"\"median_ms\":4.0", "\"median_ms\":\"fast\"", "expected a number"},
      {"\"op\":\"matadd\"", "\"op\":\"matadd'); DROP TABLE measurement; --\"",
       ".op: expected 1 to 31"},
      {"\"op\":\"matadd\"", "\"op\":\"x' OR 1=1 --\"", "unknown op"},
      {"\"op\":\"matadd\"", "\"op\":\"matadd\",\"op\":\"reduce\"", "twice"},
      {"\"op\":\"matadd\"", "\"op\":\"matadd\",\"extra\":true", "unknown field 'extra'"},
      {"\"op\":\"matadd\",", "", "no field 'op'"},
      {"\"is_seed\":true", "\"is_seed\":1", "true or false"},
      {"\"template_sha256\":\"b", "\"template_sha256\":\"B", "hex"},
      {"\"config\":\"bx=16 by=16\"", "\"config\":\"bx=16\"", "does not say what its JSON"},
      {"\"params\":{\"bx\":16,\"by\":16}", "\"params\":{\"bx\":16,\"by\":[16]}", "not an integer"},
      {"\"status\":\"ok\"", "\"status\":\"great\"", "status"},
      {"\"measured_at\":\"", "\"measured_at\":\"yesterday", "measured_at"},
      {"\"gpu\":\"GPU-00000001-0000-0000-0000-000000000000\"", "\"gpu\":\"GPU-nobody\"",
       "not one of the document's gpus"},
      {"\"variant\":\"order=row\"", "\"variant\":\"order=row\\u0001\"", "variant"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    const char *where = strstr(last, edits[i][0]);
    cr_assert_not_null(where, "'%s' follows the first measurement of the second GPU", edits[i][0]);
    size_t at = (size_t)(where - doc);
    size_t n = strlen(doc) + strlen(edits[i][1]) + 1;
    char *bad = malloc(n);
    snprintf(bad, n, "%.*s%s%s", (int)at, doc, edits[i][1], doc + at + strlen(edits[i][0]));
    expect_import_refused(db, bad, strlen(bad), edits[i][2]);
    free(bad);
  }
  char *bad_gpu = edited(doc, "\"cc_major\":9", "\"cc_major\":9000000000");
  expect_import_refused(db, bad_gpu, strlen(bad_gpu), "cc_major");
  free(bad_gpu);
  bad_gpu = edited(doc, "\"name\":\"Fake H100\"", "\"name\":\"\"");
  expect_import_refused(db, bad_gpu, strlen(bad_gpu), "name");
  free(bad_gpu);

  /* After all that: the good document still imports, and the database is sound. */
  pm__db_import_stats st;
  cr_assert_eq(pm__db_import(db, doc, strlen(doc), &st), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(st.added, 12);
  char *report;
  int problems;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(problems, 0, "%s", report);
  free(report);
  free(doc);
  pm__db_close(db);
}

/* An element of gpus or measurements that is not an object is refused as such, whatever it
 * holds: a string was handed on as its bare text, read as malformed JSON (PM_EDB, "malformed
 * JSON", found by fuzz_import) or, where the string held an object's text, imported as that
 * object. */
Test(db, array_elements_that_are_not_objects_are_refused_as_such) {
  pm__db *db = open_rw();
#define DOC(gpus, measurements)                                                              \
  "{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[" gpus "],\"measurements\":[" \
  measurements "]}"
#define GPU                                                                                  \
  "{\"uuid\":\"GPU-1\",\"name\":\"Fake H100\",\"cc_major\":9,\"cc_minor\":0,\"arch\":\"sm_90\"," \
  "\"sm_count\":132,\"mem_bytes\":85899345920,\"driver_version\":1,\"runtime_version\":1}"
  const char *docs[][2] = {
      {DOC("", "\"ok\""), "measurements[0]: expected an object, got text"},
      {DOC("\"{}\"", ""), "gpus[0]: expected an object, got text"},
      {DOC("true", ""), "gpus[0]: expected an object, got true"},
      {DOC("", "false"), "measurements[0]: expected an object, got false"},
      {DOC("", "1.5"), "measurements[0]: expected an object, got real"},
      {DOC("", "[]"), "measurements[0]: expected an object, got array"},
      /* a string holding a whole GPU's object text: still a string */
      {DOC("\"{\\\"uuid\\\":\\\"GPU-1\\\",\\\"name\\\":\\\"Fake H100\\\",\\\"cc_major\\\":9,"
           "\\\"cc_minor\\\":0,\\\"arch\\\":\\\"sm_90\\\",\\\"sm_count\\\":132,"
           "\\\"mem_bytes\\\":85899345920,\\\"driver_version\\\":1,\\\"runtime_version\\\":1}\"",
           ""),
       "gpus[0]: expected an object, got text"},
  };
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
    expect_import_refused(db, docs[i][0], strlen(docs[i][0]), docs[i][1]);
  /* The same GPU as an object imports. */
  const char *good = DOC(GPU, "");
  pm__db_import_stats st;
  cr_assert_eq(pm__db_import(db, good, strlen(good), &st), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(st.gpus_added, 1);
#undef GPU
#undef DOC
  pm__db_close(db);
}

Test(db, randomly_damaged_documents_never_crash_or_half_import) {
  pm__db *src = open_rw();
  populate(src);
  char *doc = export_text(src, 1, NULL);
  pm__db_close(src);
  snprintf(path, sizeof path, "%s/fuzz.db", dir);
  pm__db *db = open_rw();
  uint64_t seed = (uint64_t)time(NULL) * 2654435761u + 1;
  cr_log_info("seed %llu", (unsigned long long)seed);
  size_t len = strlen(doc);
  char *copy = malloc(len + 1);
  static const char alphabet[] = "{}[]\",:0123456789.-+eE\\u truefalsnl\x01\xff";
  int refused = 0, imported = 0;
  sqlite3 *h = pm__db_handle(db);
  for (int iter = 0; iter < 300; iter++) {
    memcpy(copy, doc, len + 1);
    int edits = 1 + (int)(seed % 4);
    for (int e = 0; e < edits; e++) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      size_t at = seed % len;
      copy[at] = alphabet[(seed >> 32) % (sizeof alphabet - 1)];
    }
    int64_t before = dbtest_int(h, "SELECT count(*) FROM measurement");
    int rc = pm__db_import(db, copy, len, NULL);
    cr_assert(rc == PM_OK || rc == PM_EINVAL, "iteration %d: %s: %s", iter, pm_errname(rc),
              pm_errmsg(ctx));
    if (rc == PM_EINVAL) {
      refused++;
      cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), before, "iteration %d", iter);
    } else {
      imported++;
    }
  }
  cr_assert_gt(refused, 0);
  char *report;
  int problems;
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(problems, 0, "%s", report);
  free(report);
  free(copy);
  free(doc);
  pm__db_close(db);
}

/* ---- The queries of db/README.md ------------------------------------------------------------ */

Test(db, the_queries_of_the_readme_run_and_answer) {
  pm__db *db = open_rw();
  const char *sha = pm__template_find("matadd")->sha256; /* current: open_rw made it so */
  int64_t gpu = add_gpu(db, 0, 0);
  pm__db_problem p = dbtest_matadd(4096, 4096);
  pm__db_measurement seed = dbtest_measurement(gpu, p, sha, "{\"bx\":16,\"by\":16,\"vec\":1}", 2.0);
  seed.is_seed = 1;
  put(db, &seed);
  pm__db_measurement best = dbtest_measurement(gpu, p, sha, "{\"bx\":64,\"by\":4,\"vec\":4}", 1.0);
  put(db, &best);
  pm__db_measurement failed =
      dbtest_measurement(gpu, p, sha, "{\"bx\":2048,\"by\":4,\"vec\":4}", 0);
  failed.outcome = PM__DB_LAUNCH_ERROR, failed.error = "too many resources requested for launch";
  put(db, &failed);
  pm__cubin b = {.data = "\177ELF", .size = 4};
  pm__db_cubin_key k = {sha, "-DBX=64 -DBY=4 -DVEC=4", "sm_90", pm__nvrtc_version(), 13000};
  cr_assert_eq(pm__db_cubin_put(db, &k, &b), PM_OK);
  pm__db_problem seen[] = {p, dbtest_matadd(1000, 3000)};
  cr_assert_eq(pm__db_seen_add(db, gpu, seen, (int64_t[]){7, 70}, 2), PM_OK, "%s", pm_errmsg(ctx));

  char readme[512];
  snprintf(readme, sizeof readme, "%s/db/README.md", PM_SOURCE_DIR);
  size_t len = 0;
  char *text = dbtest_slurp(readme, &len);
  cr_assert_not_null(text, "%s", readme);
  pm__device_info d = dbtest_gpu(0, 0);
  sqlite3 *h = pm__db_handle(db);
  int queries = 0;
  for (char *at = text; (at = strstr(at, "```sql\n")) != NULL;) {
    at += 7;
    char *end = strstr(at, "```");
    cr_assert_not_null(end);
    *end = '\0';
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(h, at, -1, &st, NULL), SQLITE_OK, "%s: %s", at,
                 sqlite3_errmsg(h));
    int gpu_param = sqlite3_bind_parameter_index(st, "@gpu");
    if (gpu_param > 0) sqlite3_bind_text(st, gpu_param, d.uuid, -1, SQLITE_STATIC);
    int rows = 0, r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) rows++;
    cr_assert_eq(r, SQLITE_DONE, "%s: %s", at, sqlite3_errmsg(h));
    cr_assert_gt(rows, 0, "this query answers nothing: %s", at);
    sqlite3_finalize(st);
    queries++;
    at = end + 3;
  }
  cr_assert_geq(queries, 6);
  free(text);
  pm__db_close(db);
}

/* ---- Sizes served without a tuned winner ---------------------------------------------------- */

typedef struct seen_rows {
  pm__db *db;
  char text[4096];
  size_t len;
  int stop_after; /* return nonzero after this many (0: never) */
  int handed;
} seen_rows;

/* Appends "op problem calls\n" for each problem handed. */
static int collect_seen(void *arg, const pm__db_problem *p, int64_t calls) {
  seen_rows *r = arg;
  char problem[PM__DB_PROBLEM_MAX];
  cr_assert_eq(pm__db_problem_text(r->db, p, problem), PM_OK);
  r->len += (size_t)snprintf(r->text + r->len, sizeof r->text - r->len, "%s %s %lld\n", p->op,
                             problem, (long long)calls);
  return ++r->handed == r->stop_after;
}

static const char *list_seen(pm__db *db, int64_t gpu, const char *op, size_t limit,
                             seen_rows *r) {
  memset(r, 0, sizeof *r);
  r->db = db;
  cr_assert_eq(pm__db_seen_list(db, gpu, op, limit, collect_seen, r), PM_OK, "%s",
               pm_errmsg(ctx));
  return r->text;
}

static const pm__db_problem REDUCE_1000 = {.op = "reduce", .dtype = "f32", .n = 1000};
static const pm__db_problem FILTER_300 = {.op = "filter", .dtype = "f32", .rows = 300, .cols = 200,
                                          .radius = 2, .variant = "border=zero"};

Test(db, seen_sizes_add_up_and_list_most_called_first) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0), other = add_gpu(db, 0, 1);
  sqlite3 *h = pm__db_handle(db);
  pm__db_problem ps[] = {dbtest_matadd(100, 200), REDUCE_1000, FILTER_300};
  int64_t calls[] = {3, 10, 1};
  cr_assert_eq(pm__db_seen_add(db, gpu, ps, calls, 3), PM_OK, "%s", pm_errmsg(ctx));
  char *first = dbtest_rows(h, "SELECT first_seen, last_seen FROM seen WHERE op = 'matadd'");
  cr_assert_eq(strlen(first), 50, "two times 'YYYY-MM-DDTHH:MM:SS.SSSZ': %s", first);
  cr_assert_eq(first[10], 'T');
  cr_assert_eq(first[23], 'Z');
  cr_assert_eq(memcmp(first, first + 25, 24), 0, "a new row: first seen when last seen");
  seen_rows r;
  cr_assert_str_eq(list_seen(db, gpu, NULL, 0, &r),
                   "reduce n=1000 10\n"
                   "matadd rows=100 cols=200 order=row 3\n"
                   "filter rows=300 cols=200 radius=2 border=zero 1\n");
  /* Again: the counts add up, last_seen moves, first_seen stays; another GPU's are its own. */
  nanosleep(&(struct timespec){0, 5000000}, NULL);
  int64_t more[] = {9, 1, 5};
  cr_assert_eq(pm__db_seen_add(db, gpu, ps, more, 3), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_seen_add(db, other, ps, more, 1), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_str_eq(list_seen(db, gpu, NULL, 0, &r),
                   "matadd rows=100 cols=200 order=row 12\n"
                   "reduce n=1000 11\n"
                   "filter rows=300 cols=200 radius=2 border=zero 6\n");
  cr_assert_str_eq(list_seen(db, other, NULL, 0, &r), "matadd rows=100 cols=200 order=row 9\n");
  char *again = dbtest_rows(h, "SELECT first_seen, last_seen FROM seen WHERE op = 'matadd'"
                               " AND gpu_id = (SELECT min(id) FROM gpu)");
  cr_assert_eq(memcmp(first, again, 24), 0, "first_seen stays: %s %s", first, again);
  cr_assert_gt(strcmp(again + 25, first + 25), 0, "last_seen moves: %s %s", first, again);
  free(first);
  free(again);
  /* The numeric columns, as the other tables have them. */
  char *rows = dbtest_rows(h, "SELECT op, dtype, rows, cols, n, radius, variant, problem FROM seen"
                              " WHERE gpu_id = (SELECT min(id) FROM gpu) ORDER BY op");
  cr_assert_str_eq(rows, "filter|f32|300|200|NULL|2|border=zero|rows=300 cols=200 radius=2 border=zero\n"
                         "matadd|f32|100|200|NULL|NULL|order=row|rows=100 cols=200 order=row\n"
                         "reduce|f32|NULL|NULL|1000|NULL||n=1000\n");
  free(rows);
  /* The limit, the op filter, and a callback that stops. */
  cr_assert_str_eq(list_seen(db, gpu, NULL, 2, &r),
                   "matadd rows=100 cols=200 order=row 12\nreduce n=1000 11\n");
  cr_assert_str_eq(list_seen(db, gpu, "filter", 0, &r),
                   "filter rows=300 cols=200 radius=2 border=zero 6\n");
  cr_assert_str_eq(list_seen(db, gpu, "nosuch", 0, &r), "");
  memset(&r, 0, sizeof r);
  r.db = db;
  r.stop_after = 1;
  cr_assert_eq(pm__db_seen_list(db, gpu, NULL, 0, collect_seen, &r), PM_OK);
  cr_assert_eq(r.handed, 1);
  cr_assert_str_eq(list_seen(db, gpu + other + 1, NULL, 0, &r), "", "a GPU with nothing");
  /* Equal counts: the first recorded first. */
  pm__db_problem later = dbtest_matadd(7, 7);
  int64_t twelve = 11;
  cr_assert_eq(pm__db_seen_add(db, gpu, &later, &twelve, 1), PM_OK);
  cr_assert_eq(pm__db_seen_add(db, gpu, &ps[1], &(int64_t){1}, 1), PM_OK);
  cr_assert_str_eq(list_seen(db, gpu, NULL, 3, &r),
                   "matadd rows=100 cols=200 order=row 12\n"
                   "reduce n=1000 12\n"
                   "matadd rows=7 cols=7 order=row 11\n");
  /* A count stays at 2^63-1 rather than wrap or turn into a float. */
  int64_t huge = INT64_MAX - 5;
  cr_assert_eq(pm__db_seen_add(db, gpu, &later, &huge, 1), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(dbtest_int(h, "SELECT calls FROM seen WHERE problem = 'rows=7 cols=7 order=row'"),
               INT64_MAX);
  cr_assert_eq(dbtest_int(h, "SELECT typeof(calls) = 'integer' FROM seen WHERE problem ="
                             " 'rows=7 cols=7 order=row'"),
               1);
  cr_assert_eq(pm__db_seen_add(db, gpu, NULL, NULL, 0), PM_OK, "nothing to add");
  pm__db_close(db);
}

Test(db, bad_seen_sizes_are_refused_and_write_nothing) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  sqlite3 *h = pm__db_handle(db);
  pm__db_problem ok = dbtest_matadd(64, 64);
  pm__db_problem bad_op = {.op = "transpose", .dtype = "f32", .rows = 64, .cols = 64};
  pm__db_problem bad_dims = {.op = "reduce", .dtype = "f32", .rows = 4, .n = 16};
  pm__db_problem bad_radius = FILTER_300;
  bad_radius.radius = 9;
  pm__db_problem bad_variant = dbtest_matadd(64, 64);
  bad_variant.variant = "order=diagonal";
  const struct {
    pm__db_problem p;
    const char *why;
  } cases[] = {{bad_op, "unknown op 'transpose'"},
               {bad_dims, "reduce needs 0 < n"},
               {bad_radius, "radius 9 is not 1 to 3"},
               {bad_variant, "variant 'order=diagonal'"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    pm__db_problem two[] = {ok, cases[i].p};
    int64_t calls[] = {1, 1};
    cr_assert_eq(pm__db_seen_add(db, gpu, two, calls, 2), PM_EINVAL, "%s", cases[i].why);
    expect_msg(cases[i].why);
    expect_msg("problem 1 of 2");
  }
  int64_t zero[] = {5, 0};
  pm__db_problem two[] = {ok, REDUCE_1000};
  cr_assert_eq(pm__db_seen_add(db, gpu, two, zero, 2), PM_EINVAL);
  expect_msg("0 calls (at least 1)");
  cr_assert_eq(pm__db_seen_add(db, gpu + 100, two, (int64_t[]){1, 1}, 2), PM_EINVAL);
  expect_msg("no GPU");
  cr_assert_eq(pm__db_seen_add(db, gpu, NULL, NULL, 1), PM_EINVAL);
  cr_assert_eq(pm__db_seen_list(db, gpu, NULL, 0, NULL, NULL), PM_EINVAL);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM seen"), 0, "the good ones were not written");
  cr_assert(sqlite3_get_autocommit(h), "no transaction is left open");
  /* And the table's own checks, for what sqlite3 users write by hand. */
  char *err = NULL;
  cr_assert_neq(sqlite3_exec(h,
                             "INSERT INTO seen (gpu_id, op, dtype, rows, cols, problem, calls,"
                             " first_seen, last_seen) VALUES (1, 'matadd', 'f32', 4, 4, 'x', 0,"
                             " 'a', 'a')",
                             NULL, NULL, &err),
                SQLITE_OK, "calls >= 1");
  sqlite3_free(err);
  cr_assert_neq(sqlite3_exec(h,
                             "INSERT INTO seen (gpu_id, op, dtype, rows, n, problem, calls,"
                             " first_seen, last_seen) VALUES (1, 'matadd', 'f32', 4, 4, 'x', 1,"
                             " 'a', 'a')",
                             NULL, NULL, &err),
                SQLITE_OK, "rows and cols, or n");
  sqlite3_free(err);
  pm__db_close(db);
}

Test(db, seen_sizes_are_listed_read_only_and_never_written_so) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  pm__db_problem p = REDUCE_1000;
  cr_assert_eq(pm__db_seen_add(db, gpu, &p, &(int64_t){4}, 1), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_close(db);
  size_t before_len = 0;
  char *before = dbtest_slurp(path, &before_len);
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s",
               pm_errmsg(ctx));
  seen_rows r;
  cr_assert_str_eq(list_seen(db, gpu, NULL, 0, &r), "reduce n=1000 4\n");
  cr_assert_eq(pm__db_seen_add(db, gpu, &p, &(int64_t){4}, 1), PM_EDB);
  expect_msg(path);
  expect_msg("readonly");
  cr_assert_str_eq(list_seen(db, gpu, NULL, 0, &r), "reduce n=1000 4\n");
  pm__db_close(db);
  dbtest_assert_unchanged(path, before, before_len, "nothing was written");
}

/* ---- Lookups restricted to what the caller can run ------------------------------------------ */

static int only_bx32(void *arg, const char *config) {
  ++*(int *)arg;
  return strncmp(config, "bx=32 ", 6) == 0;
}

static int none(void *arg, const char *config) {
  (void)arg, (void)config;
  return 0;
}

Test(db, winner_lookups_can_take_only_accepted_configurations) {
  pm__db *db = open_rw();
  int64_t gpu = add_gpu(db, 0, 0);
  pm__db_problem p = dbtest_matadd(4096, 4096);
  const char *params[] = {"{\"bx\":64,\"by\":4}", "{\"bx\":32,\"by\":8}", "{\"bx\":32,\"by\":16}"};
  const double ms[] = {1.0, 1.5, 1.2};
  for (int i = 0; i < 3; i++) {
    pm__db_measurement m = dbtest_measurement(gpu, p, SHA_A, params[i], ms[i]);
    put(db, &m);
  }
  pm__device_info d = dbtest_gpu(0, 0);
  pm__db_winner w;
  int asked = 0;
  cr_assert_eq(pm__db_winner_get_if(db, &d, &p, SHA_A, only_bx32, &asked, &w), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_str_eq(w.config, "bx=32 by=16", "the fastest of those accepted");
  cr_assert_eq(asked, 2, "asked in order, fastest first, until one is accepted");
  cr_assert_eq(pm__db_winner_get_if(db, &d, &p, SHA_A, none, NULL, &w), PM_ENOTFOUND);
  expect_msg("that fits");
  pm__db_problem q = dbtest_matadd(4000, 4000);
  cr_assert_eq(pm__db_winner_nearest_if(db, &d, &q, SHA_A, only_bx32, &asked, &w), PM_OK);
  cr_assert_str_eq(w.config, "bx=32 by=16");
  cr_assert_gt(w.distance, 0.0);
  cr_assert_eq(pm__db_winner_get(db, &d, &p, SHA_A, &w), PM_OK);
  cr_assert_str_eq(w.config, "bx=64 by=4", "without a filter: the fastest");
  pm__db_close(db);
}

/* Opening an up-to-date file for writing takes no write lock: another
 * connection holding a write transaction does not make the open wait for it (it waited up to 10
 * s, then failed with "database is locked"). The holder's work is not disturbed either. */
Test(db, opening_an_up_to_date_file_does_not_wait_for_a_writer) {
  pm__db *db = open_rw();
  pm__db_close(db);
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(h)); /* the write lock, held */
  double t0 = pm__now_ms();
  cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  double ms = pm__now_ms() - t0;
  pm__db_close(db);
  cr_assert_lt(ms, 2000, "the open waited %.0f ms for the other writer", ms);
  cr_assert_eq(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
  sqlite3_close(h);
}

/* JSON's syntax is checked before SQLite's JSON functions see a document: RFC 8259 texts pass,
 * others do not, among them one SQLite 3.40's json_valid() passes and its other JSON functions
 * then read unwritten memory on (fuzz_import's find, kept in its corpus). */
Test(db, json_is_checked_before_sqlite_reads_it) {
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(":memory:", &h), SQLITE_OK);
  const char *good[] = {"{}", "[]", "0", "-0.5e+10", "\"\\u00e9\\n\"", " {\"a\": [1, true, null, {\"b\": \"c\"}]} ",
                        "[[[[]]]]"};
  const char *bad[] = {"", "{", "{\"a\":1,}", "[1,]", "{\"a\":null,{\"b\":1}}", "01", "1.", ".5",
                       "tru", "\"\\x\"", "\"a\nb\"", "{\"a\" 1}", "[1 2]", "{} {}", "NaN", "'a'"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    cr_assert_eq(pm__db_json_check(h, good[i], -1), 1, "%s", good[i]);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    cr_assert_eq(pm__db_json_check(h, bad[i], -1), 0, "%s", bad[i]);
  char *doc = pm__read_file(PM_SOURCE_DIR "/tests/fuzz/corpus/import/b2720653f281a4088b03c95fa96e26ca0c269f51", 1 << 20, NULL);
  cr_assert_not_null(doc);
  sqlite3_stmt *st = NULL;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT json_valid(?1)", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_text(st, 1, doc, -1, SQLITE_STATIC);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  int sqlite_says = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  cr_assert_eq(pm__db_json_check(h, doc, -1), 0, "malformed (SQLite's json_valid says %d)",
               sqlite_says);
  free(doc);
  sqlite3_close(h);
}

/* ---- Objects that are not pmtune's, files that fail the check, configurations --------------- */

/* pm__db_check's report on the file at path (heap), opened read-only; *problems its count. */
static char *check_report(int *problems) {
  pm__db *db = NULL;
  char *report = NULL;
  cr_assert_eq(pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_eq(pm__db_check(db, &report, problems), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_close(db);
  return report;
}

/* The number of measurements in the file at path. */
static int64_t stored(void) {
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  int64_t n = dbtest_int(h, "SELECT count(*) FROM measurement");
  sqlite3_close(h);
  return n;
}

/* Defect 7: a trigger planted on measurement divided every imported time by 100, and `db check`
 * passed. Now the check lists every object the migrations do not make, a trigger as a problem;
 * opening for writing refuses the file, and an import refuses it even where the trigger came
 * after the open (inside its transaction), writing nothing. */
Test(db, a_trigger_that_is_not_pmtunes_fails_the_check_and_nothing_is_written) {
  pm__db *src = open_rw();
  populate(src);
  char *doc = export_text(src, 1, NULL);
  pm__db_close(src);
  snprintf(path, sizeof path, "%s/planted.db", dir);
  pm__db *db = open_rw();
  pm__db_close(db);
  dbtest_exec(path,
              "CREATE TRIGGER t AFTER INSERT ON measurement BEGIN UPDATE measurement SET"
              " median_ms = median_ms/100 WHERE rowid = new.rowid; END;"
              "CREATE TRIGGER \"gpu guard\" BEFORE DELETE ON gpu BEGIN SELECT 1; END;"
              "CREATE VIEW my_view AS SELECT op, median_ms FROM measurement;"
              "CREATE INDEX my_index ON measurement (median_ms);"
              "CREATE TABLE my_notes (note TEXT);");
  int problems = 0;
  char *report = check_report(&problems);
  cr_assert_eq(problems, 2, "the two triggers: %s", report);
  cr_assert_not_null(strstr(report, "PROBLEM: trigger 't' on 'measurement' is not pmtune's"), "%s",
                     report);
  cr_assert_not_null(strstr(report, "PROBLEM: trigger 'gpu guard' on 'gpu'"), "%s", report);
  cr_assert_not_null(strstr(report, "not pmtune's, left alone: view 'my_view'"), "%s", report);
  cr_assert_not_null(strstr(report, "not pmtune's, left alone: index 'my_index' on 'measurement'"),
                     "%s", report);
  cr_assert_not_null(strstr(report, "not pmtune's, left alone: table 'my_notes'"), "%s", report);
  free(report);
  db = NULL;
  cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_EDB, "opened for writing");
  cr_assert_null(db);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "trigger 't' on 'measurement'"), "%s", pm_errmsg(ctx));
  cr_assert_eq(stored(), 0);

  /* Planted after the open, by another connection: the import's own check finds it. */
  dbtest_exec(path, "DROP TRIGGER t; DROP TRIGGER \"gpu guard\";");
  db = open_rw();
  dbtest_exec(path, "CREATE TRIGGER t AFTER INSERT ON measurement BEGIN UPDATE measurement SET"
                    " median_ms = median_ms/100 WHERE rowid = new.rowid; END;");
  cr_assert_eq(pm__db_import(db, doc, strlen(doc), NULL), PM_EDB);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "trigger 't'"), "%s", pm_errmsg(ctx));
  cr_assert_eq(stored(), 0, "nothing written");
  /* Dropped: the import writes the times as they are. */
  dbtest_exec(path, "DROP TRIGGER t;");
  cr_assert_eq(pm__db_import(db, doc, strlen(doc), NULL), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(stored(), 12);
  cr_assert_eq(dbtest_int(pm__db_handle(db),
                          "SELECT count(*) FROM measurement WHERE median_ms < 0.01"), 0,
               "no time divided");
  pm__db_close(db);
  problems = -1;
  report = check_report(&problems);
  cr_assert_eq(problems, 0, "%s", report);
  free(report);
  free(doc);
}

/* Defect 8: an import wrote into a file that `db check` calls corrupt (an index lacking a row),
 * which let it store a duplicate. Each way of failing the check below is refused by the import
 * (PM_EDB, saying why and that nothing is written), and the file keeps what it had. */
Test(db, import_refuses_a_file_that_fails_the_check) {
  pm__db *src = open_rw();
  populate(src);
  char *doc = export_text(src, 1, NULL);
  pm__db_close(src);
  static const struct {
    const char *name, *sql, *needle;
  } cases[] = {
      /* The index made partial (WHERE 0) while a row goes in, then made whole again: the row
       * is in the table and not in the index. */
      {"index lacks a row",
       "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = sql || ' WHERE 0'"
       " WHERE name = 'measurement_by_problem';\n"
       "INSERT INTO measurement (gpu_id, op, dtype, rows, cols, n, radius, variant, problem,"
       " config, params, is_seed, template_sha256, status, error, median_ms, min_ms, max_ms,"
       " samples, gbps, verified, max_error, run_id, measured_at) SELECT gpu_id, op, dtype, rows,"
       " cols, n, radius, variant, problem, 'bx=1 by=1', '{\"bx\":1,\"by\":1}', 0,"
       " template_sha256, status, error, median_ms, min_ms, max_ms, samples, gbps, verified,"
       " max_error, run_id, measured_at FROM measurement LIMIT 1;\n"
       "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = substr(sql, 1,"
       " length(sql) - 8) WHERE name = 'measurement_by_problem';",
       "fails its integrity check"},
      {"orphan row",
       "PRAGMA foreign_keys = OFF; UPDATE measurement SET gpu_id = 999 WHERE rowid ="
       " (SELECT min(rowid) FROM measurement);",
       "refers to a missing gpu row"},
      {"CHECK constraint broken",
       "PRAGMA ignore_check_constraints = ON; UPDATE measurement SET min_ms = -1 WHERE rowid ="
       " (SELECT min(rowid) FROM measurement);",
       "fails its integrity check"},
  };
  int n = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++, n++) {
    snprintf(path, sizeof path, "%s/bad%zu.db", dir, i);
    pm__db *db = open_rw();
    add_gpu(db, 0, 0);
    pm__db_measurement m =
        dbtest_measurement(1, dbtest_matadd(4096, 4096), SHA_A, "{\"bx\":32,\"by\":8}", 1.0);
    put(db, &m);
    pm__db_close(db);
    /* each statement on a connection of its own: a schema written by hand is read anew */
    char sql[2048];
    snprintf(sql, sizeof sql, "%s", cases[i].sql);
    for (char *s = strtok(sql, "\n"); s != NULL; s = strtok(NULL, "\n")) dbtest_exec(path, s);
    int64_t before = stored();
    int problems = 0;
    char *report = check_report(&problems);
    cr_assert_gt(problems, 0, "%s: db check finds it: %s", cases[i].name, report);
    free(report);
    db = open_rw();
    cr_assert_eq(pm__db_import(db, doc, strlen(doc), NULL), PM_EDB, "%s", cases[i].name);
    cr_assert_not_null(strstr(pm_errmsg(ctx), cases[i].needle), "%s: %s", cases[i].name,
                       pm_errmsg(ctx));
    cr_assert_not_null(strstr(pm_errmsg(ctx), "pmtune writes nothing into it"), "%s: %s",
                       cases[i].name, pm_errmsg(ctx));
    pm__db_close(db);
    cr_assert_eq(stored(), before, "%s: nothing written", cases[i].name);
  }
  cr_log_info("import into a file that fails the check: %d cases", n);
  free(doc);
}

/* A document of one fake H100 and one matadd/add/reduce measurement: `problem` its problem's
 * fields, config and params its configuration, `rest` the fields from "status" on. */
static char *one_row(const char *problem, const char *config, const char *params,
                     const char *rest) {
  /* a template is one op's: matadd's rows take SHA_B, the others SHA_A */
  const char *sha = strstr(problem, "\"matadd\"") ? SHA_B : SHA_A;
  size_t cap = strlen(problem) + strlen(config) + strlen(params) + strlen(rest) + 1024;
  char *doc = malloc(cap);
  cr_assert_not_null(doc);
  int n = snprintf(
      doc, cap,
      "{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[{\"uuid\":\"GPU-31\",\"name\":"
      "\"Fake H100\",\"cc_major\":9,\"cc_minor\":0,\"arch\":\"sm_90\",\"sm_count\":132,"
      "\"mem_bytes\":85899345920,\"driver_version\":12040,\"runtime_version\":12080}],"
      "\"measurements\":[{\"gpu\":\"GPU-31\",%s,\"template_sha256\":\"%s\",\"config\":"
      "\"%s\",\"params\":%s,\"is_seed\":false,%s,\"measured_at\":\"2026-11-26T12:00:00.000Z\"}]}",
      problem, sha, config, params, rest);
  cr_assert(n > 0 && (size_t)n < cap);
  return doc;
}

#define MATADD_4K                                                                       \
  "\"op\":\"matadd\",\"dtype\":\"f32\",\"rows\":4096,\"cols\":4096,\"n\":null,\"radius\":null," \
  "\"variant\":\"order=row\""
#define ADD_1M \
  "\"op\":\"add\",\"dtype\":\"f32\",\"rows\":null,\"cols\":null,\"n\":1000000,\"radius\":null,\"variant\":\"\""
#define OK_ROW                                                                               \
  "\"status\":\"ok\",\"error\":null,\"median_ms\":0.1,\"min_ms\":0.09,\"max_ms\":0.12,\"samples\":20," \
  "\"gbps\":1000.0,\"verified\":true,\"max_error\":0.0"

/* Defect 9 (built-in ops) and 12: an imported row is checked as a tuned row is: its
 * configuration against its op's space (each value one of its parameter's, every parameter
 * once, none other, in the space's order) and constraints, each timing of an ok row present
 * and in range; the message names the row and the field. */
Test(db, import_checks_each_configuration_against_its_space_and_each_timing) {
  static const struct {
    const char *problem, *config, *params, *rest, *needle;
  } cases[] = {
      {ADD_1M, "block=999 vec=1 items=1 grid=0",
       "{\"block\":999,\"vec\":1,\"items\":1,\"grid\":0}", OK_ROW,
       "measurements[0].config: configuration 'block=999 vec=1 items=1 grid=0': 999 is not a "
       "value of block"},
      {ADD_1M, "block=256 vec=3 items=1 grid=0", "{\"block\":256,\"vec\":3,\"items\":1,\"grid\":0}",
       OK_ROW, "3 is not a value of vec"},
      {ADD_1M, "block=256 vec=1 items=1", "{\"block\":256,\"vec\":1,\"items\":1}", OK_ROW,
       "grid is missing"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0 EVIL=1",
       "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0,\"EVIL\":1}", OK_ROW,
       "add has no parameter 'EVIL'"},
      {ADD_1M, "vec=1 block=256 items=1 grid=0", "{\"vec\":1,\"block\":256,\"items\":1,\"grid\":0}",
       OK_ROW, "not in the order of add's parameters ('block=256 vec=1 items=1 grid=0')"},
      {MATADD_4K, "bx=16 by=1 vec=1 ept=1 grid=0 map=0 align=0",
       "{\"bx\":16,\"by\":1,\"vec\":1,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}", OK_ROW,
       "cannot run this problem: threads per block out of range"},
      {"\"op\":\"matadd\",\"dtype\":\"f32\",\"rows\":4096,\"cols\":4095,\"n\":null,\"radius\":null,"
       "\"variant\":\"order=row\"",
       "bx=32 by=8 vec=4 ept=1 grid=0 map=0 align=0",
       "{\"bx\":32,\"by\":8,\"vec\":4,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}", OK_ROW,
       "packed lines are not aligned to the vector width"},
      {MATADD_4K, "bx=32 by=8 vec=8 ept=1 grid=0 map=0 align=0",
       "{\"bx\":32,\"by\":8,\"vec\":8,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}", OK_ROW,
       "an access of more than 16 bytes"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"ok\",\"error\":null,\"median_ms\":0.1,\"min_ms\":0.09,\"max_ms\":0.12,"
       "\"samples\":20,\"gbps\":null,\"verified\":true,\"max_error\":0.0",
       "measurements[0].gbps: null on an ok row"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"ok\",\"error\":null,\"median_ms\":0.1,\"min_ms\":0.09,\"max_ms\":0.12,"
       "\"samples\":20,\"verified\":true,\"max_error\":0.0",
       "measurements[0].gbps: missing on an ok row"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"ok\",\"error\":null,\"median_ms\":null,\"min_ms\":0.09,\"max_ms\":0.12,"
       "\"samples\":20,\"gbps\":1.0,\"verified\":true,\"max_error\":0.0",
       "measurements[0].median_ms: null on an ok row"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"ok\",\"error\":null,\"median_ms\":0.1,\"min_ms\":0.09,\"max_ms\":0.12,"
       "\"samples\":null,\"gbps\":1.0,\"verified\":true,\"max_error\":0.0",
       "measurements[0].samples: null on an ok row"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"ok\",\"error\":\"it ran\",\"median_ms\":0.1,\"min_ms\":0.09,\"max_ms\":0.12,"
       "\"samples\":20,\"gbps\":1.0,\"verified\":true,\"max_error\":0.0",
       "measurements[0].error: given on an ok row"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"launch_error\",\"error\":\"no\",\"median_ms\":0.1,\"min_ms\":null,"
       "\"max_ms\":null,\"samples\":null,\"gbps\":null,\"verified\":false,\"max_error\":null",
       "measurements[0].median_ms: given on a row of status launch_error"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"ok\",\"error\":null,\"median_ms\":1e999,\"min_ms\":0.09,\"max_ms\":0.12,"
       "\"samples\":20,\"gbps\":1.0,\"verified\":true,\"max_error\":0.0",
       "measurements[0].median_ms: number out of range"},
      {ADD_1M, "block=256 vec=1 items=1 grid=0", "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}",
       "\"status\":\"ok\",\"error\":null,\"median_ms\":0.1,\"min_ms\":0.09,\"max_ms\":0.12,"
       "\"samples\":20,\"gbps\":-1e999,\"verified\":true,\"max_error\":0.0",
       "measurements[0].gbps: number out of range"},
  };
  pm__db *db = open_rw_spaces();
  int n = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++, n++) {
    char *doc = one_row(cases[i].problem, cases[i].config, cases[i].params, cases[i].rest);
    expect_import_refused(db, doc, strlen(doc), cases[i].needle);
    free(doc);
  }
  /* Elements that are not objects, 1e999 among them: the document's fault, said as such. */
  static const struct {
    const char *doc, *needle;
  } arrays[] = {
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],\"measurements\":[1e999]}",
       "measurements[0]: expected an object, got real"},
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],\"measurements\":[-1e999]}",
       "measurements[0]: expected an object, got real"},
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[1e999],\"measurements\":[]}",
       "gpus[0]: expected an object, got real"},
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],\"measurements\":[[1e999]]}",
       "measurements[0]: expected an object, got array"},
  };
  for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++, n++) {
    expect_import_refused(db, arrays[i].doc, strlen(arrays[i].doc), arrays[i].needle);
    cr_assert_null(strstr(pm_errmsg(ctx), "SQLITE"), "not the database's fault: %s",
                   pm_errmsg(ctx));
  }
  /* A refused import sets the connection back as it found it. */
  cr_assert_eq(dbtest_int(pm__db_handle(db), "PRAGMA foreign_keys"), 1);
  cr_assert_eq(dbtest_int(pm__db_handle(db), "PRAGMA ignore_check_constraints"), 0);
  /* The same rows, right, import: the check refuses what is wrong and only that. */
  char *doc = one_row(ADD_1M, "block=256 vec=1 items=1 grid=0",
                      "{\"block\":256,\"vec\":1,\"items\":1,\"grid\":0}", OK_ROW);
  cr_assert_eq(pm__db_import(db, doc, strlen(doc), NULL), PM_OK, "%s", pm_errmsg(ctx));
  free(doc);
  doc = one_row(MATADD_4K, "bx=32 by=8 vec=4 ept=1 grid=0 map=0 align=0",
                "{\"bx\":32,\"by\":8,\"vec\":4,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}", OK_ROW);
  cr_assert_eq(pm__db_import(db, doc, strlen(doc), NULL), PM_OK, "%s", pm_errmsg(ctx));
  free(doc);
  cr_assert_eq(dbtest_int(pm__db_handle(db), "SELECT count(*) FROM measurement"), 2);
  pm__db_close(db);
  cr_log_info("rows refused by the space, the constraints and the timings: %d cases", n);
}

/* pm__gunzip, which reads the shipped results: the H100 file inflates whole; cut short anywhere
 * or damaged it is EILSEQ (never a shorter text taken as the document), past `max` EFBIG, and the
 * caller's buffer is kept on every failure; text that is not gzip is left as it is. */
Test(db, gunzip_inflates_whole_or_says_why_not) {
  size_t zlen = 0, len;
  char *z = dbtest_slurp(PM_SOURCE_DIR "/results/nvidia-h100-80gb-hbm3.json.gz", &zlen);
  cr_assert_not_null(z);
  char *doc = pm__malloc(zlen);
  memcpy(doc, z, len = zlen);
  cr_assert_eq(pm__gunzip(&doc, &len, (size_t)256 << 20), 0);
  cr_assert(len > 10 * zlen && strlen(doc) == len && strncmp(doc, "{", 1) == 0, "%zu", len);
  size_t whole = len;
  free(doc);
  for (int i = 1; i <= 40; i++) { /* cut short: 40 places over the file, the header included */
    size_t cut = zlen * (size_t)i / 41 + (i < 4 ? (size_t)i : 0);
    char *part = pm__malloc(cut + 1);
    memcpy(part, z, len = cut);
    cr_assert_eq(pm__gunzip(&part, &len, (size_t)256 << 20), EILSEQ, "cut at %zu of %zu", cut, zlen);
    cr_assert_eq(len, cut, "the caller's buffer kept");
    free(part);
  }
  for (int i = 1; i <= 20; i++) { /* a byte flipped in the deflate stream or its trailer */
    char *bad = pm__malloc(zlen);
    memcpy(bad, z, len = zlen);
    bad[20 + (zlen - 21) * (size_t)i / 21] ^= 0x5a;
    int rc = pm__gunzip(&bad, &len, (size_t)256 << 20);
    cr_assert(rc == EILSEQ, "byte %zu flipped: %d", 20 + (zlen - 21) * (size_t)i / 21, rc);
    free(bad);
  }
  char *big = pm__malloc(zlen);
  memcpy(big, z, len = zlen);
  cr_assert_eq(pm__gunzip(&big, &len, whole - 1), EFBIG);
  cr_assert_eq(len, zlen);
  free(big);
  char *plain = pm__strdup("{\"format\":\"pmtune-export\"}"), *was = plain;
  len = strlen(plain);
  cr_assert_eq(pm__gunzip(&plain, &len, 1 << 20), 0);
  cr_assert(plain == was && len == strlen(was), "text that is not gzip is left as it is");
  free(plain);
  free(z);
}

/* The shipped results pass the check of their configurations: what `pmtune tune` stored is
 * what an import takes. */
Test(db, the_shipped_results_import_with_their_configurations_checked) {
  static const char *const files[] = {PM_SOURCE_DIR "/results/nvidia-h100-80gb-hbm3.json.gz"};
  pm__db *db = open_rw_spaces();
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    size_t len = 0;
    char *doc = dbtest_slurp(files[i], &len);
    cr_assert_not_null(doc, "%s", files[i]);
    cr_assert_eq(pm__gunzip(&doc, &len, (size_t)256 << 20), 0, "%s", files[i]);
    pm__db_import_stats st;
    cr_assert_eq(pm__db_import(db, doc, len, &st), PM_OK, "%s: %s", files[i], pm_errmsg(ctx));
    cr_assert_gt(st.added, 0);
    free(doc);
  }
  /* The import checked the CHECK constraints and references itself, with SQLite's off: what
   * it wrote passes the check, and the connection has them on again. */
  sqlite3 *h = pm__db_handle(db);
  cr_assert_eq(dbtest_int(h, "PRAGMA foreign_keys"), 1);
  cr_assert_eq(dbtest_int(h, "PRAGMA ignore_check_constraints"), 0);
  cr_assert_eq(dbtest_int(h, "PRAGMA temp_store"), 0);
  pm__db_close(db);
  int problems = -1;
  char *report = check_report(&problems);
  cr_assert_eq(problems, 0, "%s", report);
  free(report);
}

/* pm__file_commit_new (pmtune kernel new): a new file appears whole; where anything is at the
 * path (a file, a link, a folder), EEXIST, that left as it was and no temporary left behind. */
Test(db, commit_new_writes_only_where_nothing_is) {
  char file[192], link_to[192], folder[192];
  snprintf(file, sizeof file, "%s/new.txt", dir);
  snprintf(link_to, sizeof link_to, "%s/link", dir);
  snprintf(folder, sizeof folder, "%s/folder", dir);
  pm__file_out o;
  cr_assert_eq(pm__file_create(&o, file), 0);
  fputs("first\n", o.f);
  cr_assert_eq(pm__file_commit_new(&o), 0);
  size_t len;
  char *got = dbtest_slurp(file, &len);
  cr_assert_str_eq(got, "first\n");
  free(got);
  cr_assert_eq(pm__file_create(&o, file), 0);
  fputs("second\n", o.f);
  errno = 0;
  cr_assert_eq(pm__file_commit_new(&o), -1);
  cr_assert_eq(errno, EEXIST);
  got = dbtest_slurp(file, &len);
  cr_assert_str_eq(got, "first\n", "the file there is kept");
  free(got);
  cr_assert_eq(symlink("new.txt", link_to), 0);
  cr_assert_eq(mkdir(folder, 0755), 0);
  const char *taken[] = {link_to, folder};
  for (int i = 0; i < 2; i++) {
    if (pm__file_create(&o, taken[i]) != 0) continue; /* refused at once: fine too */
    fputs("x\n", o.f);
    cr_assert_eq(pm__file_commit_new(&o), -1, "%s", taken[i]);
    cr_assert_eq(errno, EEXIST);
  }
  char cmd[256];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep tmp)\"", dir);
  cr_assert_eq(system(cmd), 0, "no temporary left in %s", dir);
}

/* test_cli_db.c: pmtune db, export and import as a user runs them: output, files, exit statuses. */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbtest.h"
#include "kernel_file.h"

static char dir[64];
static char out[1 << 20], err[65536];

static void setup(void) { dbtest_mkdir(dir); }
static void teardown(void) { dbtest_cleanup(dir); }

TestSuite(cli_db, .init = setup, .fini = teardown, .timeout = 60);

static void slurp_into(const char *file, char *buf, size_t cap) {
  FILE *f = fopen(file, "rb");
  size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
  buf[n] = '\0';
  if (f) fclose(f);
}

/* Runs `env ENV pmtune ARGS` (ENV: assignments, "-u NAME"s, or ""), with $HOME and the XDG and
 * PMTUNE_DB variables cleared unless ENV sets them; fills out and err; returns the exit status. */
static int run(const char *env, const char *args) {
  char cmd[8192], o[128], e[128];
  snprintf(o, sizeof o, "%s/.out", dir);
  snprintf(e, sizeof e, "%s/.err", dir);
  snprintf(cmd, sizeof cmd, "env -u PMTUNE_DB -u XDG_CACHE_HOME HOME=%s/home %s '%s' %s >%s 2>%s",
           dir, env, PMTUNE_BIN, args, o, e);
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "%s", cmd);
  slurp_into(o, out, sizeof out);
  slurp_into(e, err, sizeof err);
  return WEXITSTATUS(st);
}

static int lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static void expect_usage(const char *args, const char *needle) {
  int st = run("", args);
  cr_assert_eq(st, 2, "pmtune %s: status %d: %s", args, st, err);
  cr_assert_eq(lines(err), 1, "pmtune %s: one line: %s", args, err);
  cr_assert_not_null(strstr(err, needle), "pmtune %s: '%s' not in %s", args, needle, err);
}

static void expect_failure(const char *env, const char *args, const char *needle) {
  int st = run(env, args);
  cr_assert_eq(st, 1, "pmtune %s: status %d: %s", args, st, err);
  cr_assert_eq(lines(err), 1, "pmtune %s: one line: %s", args, err);
  cr_assert_not_null(strstr(err, needle), "pmtune %s: '%s' not in %s", args, needle, err);
}

Test(cli_db, help_lists_the_commands_and_each_has_its_usage) {
  cr_assert_eq(run("", "--help"), 0);
  cr_assert_not_null(strstr(out, "  db "), "%s", out);
  cr_assert_not_null(strstr(out, "  export "), "%s", out);
  cr_assert_not_null(strstr(out, "  import "), "%s", out);
  const char *cmds[] = {"db", "export", "import"};
  static char help[65536];
  for (int i = 0; i < 3; i++) {
    char args[64];
    snprintf(args, sizeof args, "help %s", cmds[i]);
    cr_assert_eq(run("", args), 0);
    cr_assert_not_null(strstr(out, "usage: pmtune"), "%s", out);
    cr_assert_not_null(strstr(out, "--db PATH"), "%s", out);
    strcpy(help, out);
    snprintf(args, sizeof args, "%s --help", cmds[i]);
    cr_assert_eq(run("", args), 0);
    cr_assert_str_eq(out, help);
  }
}

Test(cli_db, bad_usage_is_one_line_and_status_2) {
  expect_usage("db", "no action given");
  expect_usage("db frobnicate", "unknown action 'frobnicate'");
  expect_usage("db path extra", "unexpected argument 'extra'");
  expect_usage("db path --db", "needs a value");
  expect_usage("db path --db ''", "empty path");
  expect_usage("db check --bogus", "unknown option '--bogus'");
  expect_usage("export", "no FILE given");
  expect_usage("export a.json b.json", "unexpected argument 'b.json'");
  expect_usage("export --everything x.json", "unknown option");
  expect_usage("import", "no FILE given");
  expect_usage("import a.json b.json", "unexpected argument");
  expect_usage("tune --seen --op matadd --size 64x64", "--seen tunes the recorded sizes");
  expect_usage("tune --seen=3 --op filter --radius 2", "--size, --radius, --order and --border");
  expect_usage("tune --op matadd --order col --seen", "do not apply");
  expect_usage("tune --seen=0", "--seen=0: expected 1 to 128");
  expect_usage("tune --seen=129", "--seen=129: expected 1 to 128");
  expect_usage("tune --seen=ten", "--seen=ten");
  expect_usage("tune --seen 5", "unexpected argument '5'");
  expect_usage("tune --seen --op nosuch", "unknown --op 'nosuch'");
  expect_usage("show --seen --op nosuch", "unknown --op 'nosuch'");
  /* a single-value option given twice, and absurd numbers, are refused */
  expect_usage("import x.json --db a.db --db b.db", "--db given twice");
  expect_usage("tune --op reduce --op matadd", "--op given twice");
  expect_usage("explain --op reduce --size 10 --size 20", "given twice");
  expect_usage("tune --budget 99999999999999999999", "expected a whole number from 1 to 10^12");
  expect_usage("tune --budget -5", "--budget '-5'");
  expect_usage("tune --budget 0x10", "--budget '0x10'");
  expect_usage("tune --time inf", "--time 'inf'");
  expect_usage("tune --time 1e999", "--time '1e999'");
  expect_usage("tune --time 0x10", "--time '0x10'");
  expect_usage("tune --time nan", "--time 'nan'");
  expect_usage("space --op matadd --radius 3", "--radius does not apply to matadd");
  expect_usage("explain --op reduce --size 10 --radius 2", "--radius does not apply to reduce");
  expect_usage("tune --op add --radius 1", "--radius does not apply to add");
  /* every command that takes --db refuses an empty one the same way, before any work */
  const char *with_db[] = {"db path", "export x.json", "import x.json", "report --svg x.svg",
                           "show", "explain --op reduce --size 10", "tune", "bench",
                           "tune --seen", "show --seen"};
  for (size_t i = 0; i < sizeof with_db / sizeof *with_db; i++) {
    char args[96];
    snprintf(args, sizeof args, "%s --db ''", with_db[i]);
    expect_usage(args, "--db: empty path");
  }
}

Test(cli_db, db_path_follows_option_env_xdg_home) {
  char env[256], want[256];
  cr_assert_eq(run("", "db path"), 0, "%s", err);
  snprintf(want, sizeof want, "%s/home/.cache/pmtune/pmtune.db\n", dir);
  cr_assert_str_eq(out, want);
  snprintf(env, sizeof env, "XDG_CACHE_HOME=%s/xdg", dir);
  cr_assert_eq(run(env, "db path"), 0);
  snprintf(want, sizeof want, "%s/xdg/pmtune/pmtune.db\n", dir);
  cr_assert_str_eq(out, want);
  snprintf(env, sizeof env, "XDG_CACHE_HOME=%s/xdg PMTUNE_DB=/from/env.db", dir);
  cr_assert_eq(run(env, "db path"), 0);
  cr_assert_str_eq(out, "/from/env.db\n");
  cr_assert_eq(run(env, "db path --db /from/option.db"), 0);
  cr_assert_str_eq(out, "/from/option.db\n");
  cr_assert_eq(run("", "db path"), 0);
  snprintf(want, sizeof want, "%s/home", dir);
  cr_assert_eq(access(want, F_OK), -1, "db path creates nothing");
}

Test(cli_db, init_creates_and_check_says_what_it_found) {
  char args[256], file[200];
  snprintf(file, sizeof file, "%s/x/y/tune.db", dir);
  snprintf(args, sizeof args, "db check --db %s", file);
  expect_failure("", args, "no such file");
  cr_assert_eq(access(file, F_OK), -1, "check creates nothing");
  snprintf(args, sizeof args, "db init --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "created, schema version 2"), "%s", out);
  cr_assert_eq(run("", args), 0);
  cr_assert_not_null(strstr(out, "up to date"), "%s", out);
  snprintf(args, sizeof args, "db check --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "integrity     ok"), "%s", out);
  cr_assert_not_null(strstr(out, "no problems found"), "%s", out);
  /* The default place, through $HOME. */
  cr_assert_eq(run("", "db init"), 0, "%s", err);
  snprintf(file, sizeof file, "%s/home/.cache/pmtune/pmtune.db", dir);
  cr_assert_eq(access(file, F_OK), 0, "%s", out);
}

Test(cli_db, broken_files_are_named_with_status_1) {
  char args[256], file[200];
  snprintf(file, sizeof file, "%s/text.db", dir);
  dbtest_write(file, "hello, this is not a database at all, but text\n", 48);
  snprintf(args, sizeof args, "db check --db %s", file);
  expect_failure("", args, "not a database");
  cr_assert_not_null(strstr(err, file), "%s", err);
  snprintf(args, sizeof args, "db init --db %s", file);
  expect_failure("", args, "not a database");
  /* a device or a FIFO is no database, and nothing is made beside it */
  expect_failure("", "db init --db /dev/zero", "not a regular file");
  cr_assert_eq(access("/dev/zero-journal", F_OK), -1, "a journal beside /dev/zero");
  expect_failure("", "db check --db /dev/null", "not a regular file");
  snprintf(file, sizeof file, "%s/fifo.db", dir);
  cr_assert_eq(mkfifo(file, 0600), 0);
  snprintf(args, sizeof args, "db init --db %s", file);
  expect_failure("", args, "not a regular file");
  snprintf(args, sizeof args, "%s/fifo.db-journal", dir);
  cr_assert_eq(access(args, F_OK), -1, "a journal beside the FIFO");

  snprintf(file, sizeof file, "%s/future.db", dir);
  dbtest_exec(file, "PRAGMA user_version = 42;");
  snprintf(args, sizeof args, "db init --db %s", file);
  expect_failure("", args, "newer than this pmtune's");

  snprintf(file, sizeof file, "%s/text.db/below/x.db", dir);
  snprintf(args, sizeof args, "db init --db %s", file);
  expect_failure("", args, "cannot create directory");

  /* Orphans are problems: status 1, and the report says which. */
  snprintf(file, sizeof file, "%s/orphans.db", dir);
  snprintf(args, sizeof args, "db init --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  dbtest_exec(file,
              "INSERT INTO run (started_at, pmtune_version, nvrtc_version, command_line, host,"
              " pid, gpu_id) VALUES ('x', 'x', 'x', 'x', 'x', 1, 77);");
  snprintf(args, sizeof args, "db check --db %s", file);
  expect_failure("", args, "1 problem found");
  cr_assert_not_null(strstr(out, "run row 1 refers to a missing gpu row"), "%s", out);
}

/* A row that breaks a CHECK constraint (written with the constraints ignored, as a careless hand
 * or another program might) is found by `db check`, which opens read-only, where SQLite skips
 * CHECK constraints on a read-only connection; the file is left as it was. */
Test(cli_db, check_finds_rows_that_break_the_schemas_constraints) {
  char src[160], args[256];
  snprintf(src, sizeof src, "%s/src.db", dir);
  dbtest_make_db(src);
  snprintf(args, sizeof args, "db check --db %s", src);
  cr_assert_eq(run("", args), 0, "a sound file: %s", err);
  dbtest_exec(src, "PRAGMA ignore_check_constraints = 1;"
                   "UPDATE measurement SET median_ms = -1 WHERE status = 'ok';");
  size_t before_len = 0;
  char *before = dbtest_slurp(src, &before_len);
  int st = run("", args);
  cr_assert_eq(st, 1, "status %d: %s%s", st, out, err);
  cr_assert_not_null(strstr(out, "CHECK constraint failed in measurement"), "%s", out);
  dbtest_assert_unchanged(src, before, before_len, "db check changed the file");
}

/* The schema's shape is verified, not only its version: a dropped view, a
 * table of other columns or a dropped index is refused by every writer (db init, import) and
 * reported by db check; an index of the user's own is welcome. */
Test(cli_db, a_polluted_schema_is_refused_by_writers_and_found_by_check) {
  static const struct {
    const char *sql, *needle;
  } cases[] = {
      {"DROP VIEW winner;", "the view 'winner' it has is missing"},
      {"PRAGMA foreign_keys = OFF; DROP TABLE cubin;"
       " CREATE TABLE cubin (id INTEGER PRIMARY KEY, blob BLOB);",
       "its table 'cubin' is not as pmtune makes it"},
      {"DROP INDEX measurement_one_seed;", "the index 'measurement_one_seed' it has is missing"},
  };
  char file[200], args[512], json[200];
  snprintf(json, sizeof json, "%s/w.json", dir);
  snprintf(file, sizeof file, "%s/src.db", dir);
  dbtest_make_db(file);
  snprintf(args, sizeof args, "export %s --db %s", json, file);
  cr_assert_eq(run("", args), 0, "%s", err);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf(file, sizeof file, "%s/polluted%zu.db", dir, i);
    snprintf(args, sizeof args, "db init --db %s", file);
    cr_assert_eq(run("", args), 0, "%s", err);
    dbtest_exec(file, cases[i].sql);
    expect_failure("", args, cases[i].needle);
    snprintf(args, sizeof args, "import %s --db %s", json, file);
    expect_failure("", args, cases[i].needle);
    snprintf(args, sizeof args, "db check --db %s", file);
    cr_assert_eq(run("", args), 1, "%s: %s%s", cases[i].sql, out, err);
    cr_assert_not_null(strstr(out, "schema        PROBLEM"), "%s", out);
    cr_assert_not_null(strstr(out, cases[i].needle), "%s", out);
  }
  snprintf(file, sizeof file, "%s/own-index.db", dir);
  snprintf(args, sizeof args, "db init --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  dbtest_exec(file, "CREATE INDEX my_own ON measurement(median_ms);");
  cr_assert_eq(run("", args), 0, "an index of the user's own: %s", err);
  snprintf(args, sizeof args, "db check --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "schema        ok"), "%s", out);
}

Test(cli_db, export_and_import_move_the_winners_to_another_machine) {
  char src[160], dst[160], json[160], args[512];
  snprintf(src, sizeof src, "%s/src.db", dir);
  snprintf(dst, sizeof dst, "%s/dst.db", dir);
  snprintf(json, sizeof json, "%s/winners.json", dir);
  dbtest_make_db(src);
  snprintf(args, sizeof args, "export %s --db %s", json, src);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "exported 3 measurements"),
                    "what is carried: the best 3 of the size, its seed among them: %s", out);
  snprintf(args, sizeof args, "import %s --db %s", json, dst);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "3 measurements added"), "%s", out);
  cr_assert_not_null(strstr(out, "1 GPU added"), "%s", out);
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(dst, &h), SQLITE_OK);
  char *rows = dbtest_rows(h, "SELECT config, speedup FROM winner");
  cr_assert_str_eq(rows, "bx=64 by=4 vec=1 ept=1 grid=0 map=0 align=0|2.0\n");
  free(rows);
  sqlite3_close(h);
  /* --all, to the standard output, and back in through the standard input. */
  snprintf(args, sizeof args, "export - --all --db %s | '%s' import - --db %s", src, PMTUNE_BIN,
           dst);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "0 measurements added, 0 updated, 3 kept"), "%s", out);
  /* Exporting from nothing fails and leaves no file. */
  snprintf(args, sizeof args, "export %s/none.json --db %s/none.db", dir, dir);
  expect_failure("", args, "no such file");
  snprintf(json, sizeof json, "%s/none.json", dir);
  cr_assert_eq(access(json, F_OK), -1);
}

/* export writes only a regular file or a new one: a symlink, a FIFO, a directory or a device
 * is refused with one line and left as it was. */
Test(cli_db, export_refuses_what_is_not_a_regular_file) {
  char src[160], target[160], link[160], fifo[160], args[512];
  snprintf(src, sizeof src, "%s/src.db", dir);
  snprintf(target, sizeof target, "%s/target.txt", dir);
  snprintf(link, sizeof link, "%s/link.json", dir);
  snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
  dbtest_make_db(src);
  FILE *f = fopen(target, "w");
  cr_assert_not_null(f);
  fputs("keep me\n", f);
  fclose(f);
  cr_assert_eq(symlink(target, link), 0);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  snprintf(args, sizeof args, "export %s --db %s", link, src);
  expect_failure("", args, "is a symbolic link, not a regular file");
  char got[64];
  slurp_into(target, got, sizeof got);
  cr_assert_str_eq(got, "keep me\n", "the symlink's target is untouched");
  struct stat st;
  cr_assert(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the symlink is still one");
  snprintf(args, sizeof args, "export %s --db %s", fifo, src);
  expect_failure("", args, "is a FIFO, not a regular file");
  cr_assert(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still one");
  snprintf(args, sizeof args, "export %s --db %s", dir, src);
  expect_failure("", args, "is a directory, not a regular file");
  snprintf(args, sizeof args, "export /dev/null --db %s", src);
  expect_failure("", args, "is a device, not a regular file");
  cr_assert(lstat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null is still a device");
}

/* A database of `count` measurements of matadd 4096x4096 at distinct valid points. */
static void make_big_db(const char *file, int count) {
  pm_ctx *c = NULL;
  int64_t gpu;
  pm__db *db = dbtest_open_with_gpu(file, &c, &gpu);
  const pm__op *op = &pm__op_matadd;
  int made = 0;
  for (int bx = 0; bx < 7 && made < count; bx++)
    for (int by = 0; by < 6 && made < count; by++)
      for (int al = 0; al < 5 && made < count; al++, made++) {
        int v[PM__MAX_PARAMS] = {0};
        for (int i = 0; i < op->nparams; i++) v[i] = op->params[i].values[0];
        v[0] = op->params[0].values[bx], v[1] = op->params[1].values[by];
        v[op->nparams - 1] = op->params[op->nparams - 1].values[al];
        char params[PM__DB_PARAMS_MAX];
        pm__config_json(op, v, params, sizeof params);
        pm__db_measurement m = dbtest_measurement(gpu, dbtest_matadd(4096, 4096),
                                                  pm__template_find("matadd")->sha256, params,
                                                  1.0 + made);
        cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
      }
  pm__db_close(db);
  pm_close(c);
}

/* Past `ulimit -f`, import fails with a message and imports nothing, where it died by SIGXFSZ
 * before. The limit lets SQLite read the small database and write its 32 KB
 * shared-memory file and the message, not grow the file by 210 measurements. */
Test(cli_db, import_past_the_file_size_limit_says_so_and_imports_nothing) {
  char src[160], dst[160], json[160], cmd[1024], e[160], args[512];
  snprintf(src, sizeof src, "%s/src.db", dir);
  snprintf(dst, sizeof dst, "%s/dst.db", dir);
  snprintf(json, sizeof json, "%s/all.json", dir);
  snprintf(e, sizeof e, "%s/.err", dir);
  make_big_db(src, 210);
  snprintf(args, sizeof args, "export --all %s --db %s", json, src);
  cr_assert_eq(run("", args), 0, "%s", err);
  snprintf(args, sizeof args, "db init --db %s", dst);
  cr_assert_eq(run("", args), 0, "%s", err);
  struct stat dbst;
  cr_assert_eq(stat(dst, &dbst), 0);
  long limit_kb = ((long)dbst.st_size + 40 * 1024) / 1024;
  snprintf(cmd, sizeof cmd, "sh -c 'ulimit -f %ld; exec \"$0\" import %s --db %s' '%s' 2>%s",
           limit_kb, json, dst, PMTUNE_BIN, e);
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "killed by a signal (SIGXFSZ?): %s", cmd);
  cr_assert_eq(WEXITSTATUS(st), 1, "status %d", WEXITSTATUS(st));
  slurp_into(e, err, sizeof err);
  cr_assert_eq(lines(err), 1, "one line: %s", err);
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(dst, &h), SQLITE_OK);
  char *rows = dbtest_rows(h, "SELECT count(*) FROM measurement");
  cr_assert_str_eq(rows, "0\n", "nothing imported");
  free(rows);
  rows = dbtest_rows(h, "PRAGMA integrity_check");
  cr_assert_str_eq(rows, "ok\n");
  free(rows);
  sqlite3_close(h);
}

/* report --bench of a directory is refused, not read. */
Test(cli_db, report_bench_must_be_a_regular_file) {
  char src[160], args[512];
  snprintf(src, sizeof src, "%s/src.db", dir);
  dbtest_make_db(src);
  snprintf(args, sizeof args, "report --svg %s/r.svg --bench %s --db %s", dir, dir, src);
  expect_failure("", args, "not a regular file");
}

Test(cli_db, a_bad_document_imports_nothing_with_status_1) {
  char dst[160], json[160], args[512];
  snprintf(dst, sizeof dst, "%s/dst.db", dir);
  snprintf(json, sizeof json, "%s/bad.json", dir);
  dbtest_make_db(dst);
  const char *docs[][2] = {
      {"{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[],\"measurements\":[{\"gpu\":1}]}",
       "measurements[0].gpu: expected a string"},
      {"{\"format\":\"pmtune-export\",\"version\":1,", "not valid JSON"},
      {"", "not valid JSON"},
  };
  for (int i = 0; i < 3; i++) {
    dbtest_write(json, docs[i][0], strlen(docs[i][0]));
    snprintf(args, sizeof args, "import %s --db %s", json, dst);
    expect_failure("", args, docs[i][1]);
    cr_assert_not_null(strstr(err, "nothing imported"), "%s", err);
  }
  snprintf(args, sizeof args, "import %s/missing.json --db %s", dir, dst);
  expect_failure("", args, "cannot read");
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(dst, &h), SQLITE_OK);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 3);
  sqlite3_close(h);
}

/* Stores a verified measurement of matadd rows x cols, configuration bx, by (the rest fixed). */
static void put_matadd(pm__db *db, int64_t gpu, int64_t rows, int64_t cols, int bx, int by,
                       double ms, int seed) {
  char params[160];
  snprintf(params, sizeof params,
           "{\"bx\":%d,\"by\":%d,\"vec\":%d,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}", bx, by,
           seed ? 1 : 4);
  pm__db_measurement m = dbtest_measurement(gpu, dbtest_matadd(rows, cols),
                                            pm__template_find("matadd")->sha256, params, ms);
  m.is_seed = seed;
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK);
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) n++;
  return n;
}

Test(cli_db, report_draws_bars_and_heat_maps_with_the_winner_outlined) {
  char db_path[128], svg[128], bench[128], args[512];
  snprintf(db_path, sizeof db_path, "%s/t.db", dir);
  snprintf(svg, sizeof svg, "%s/r.svg", dir);
  snprintf(bench, sizeof bench, "%s/b.json", dir);
  snprintf(args, sizeof args, "report --svg %s --db %s", svg, db_path);
  expect_failure("", args, "no such file");
  expect_usage("report --db x", "no --svg");

  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  int64_t gpu;
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  cr_assert_eq(pm__db_open(c, db_path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  expect_failure("", args, "nothing tuned");
  pm__device_info d = dbtest_gpu(0, 0);
  cr_assert_eq(pm__db_gpu_put(db, &d, 1, 1, &gpu), PM_OK);
  put_matadd(db, gpu, 1024, 1024, 32, 32, 0.0110, 1);
  put_matadd(db, gpu, 1024, 1024, 128, 4, 0.0085, 0);
  put_matadd(db, gpu, 1024, 1024, 64, 2, 0.0090, 0);
  put_matadd(db, gpu, 1024, 1024, 256, 1, 0.0300, 0);
  put_matadd(db, gpu, 4096, 4096, 32, 32, 0.1000, 1);
  put_matadd(db, gpu, 4096, 4096, 64, 8, 0.0720, 0);
  pm__db_close(db);
  pm_close(c);
  const char *line =
      "{\"gpu\":\"Fake H100\",\"op\":\"matadd\",\"problem\":\"1024x1024 row-major\",\"source\":"
      "\"exact\",\"tuned_ms\":0.0086,\"ceiling_gbps\":1500.4,\"samples\":25}\n";
  dbtest_write(bench, line, strlen(line));

  snprintf(args, sizeof args, "report --svg %s --db %s --bench %s", svg, db_path, bench);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "2 tuned problems"), "%s", out);
  size_t len;
  char *s = dbtest_slurp(svg, &len);
  cr_assert_not_null(s);
  cr_assert_eq(strncmp(s, "<svg xmlns='http://www.w3.org/2000/svg' width='1000' height='", 61), 0, "%.80s", s);
  cr_assert_eq(strcmp(s + len - 7, "</svg>\n"), 0);
  cr_assert_eq(count(s, "class='winner'"), 1, "one outlined cell: 4096x4096 has no map");
  cr_assert_not_null(strstr(s, "class='winner'><title>bx=128 by=4: 0.0085 ms"), "the 1024x1024 winner");
  cr_assert_not_null(strstr(s, "4096x4096 row-major: 2 of the "), "two cells: too few for a map");
  cr_assert_eq(count(s, "class='legend'>best "), 1, "a legend under the one map");
  cr_assert_not_null(strstr(s, ">best 0.0085 ms<"), "the legend's best time");
  cr_assert_not_null(strstr(s, ">worst 0.03 ms<"), "the legend's worst time");
  cr_assert_not_null(strstr(s, ">mid 0.01597 ms<"), "the geometric mean");
  cr_assert_not_null(strstr(s, "<title>bx=256 by=1: 0.0300 ms</title>"), "a slower cell, not outlined");
  cr_assert_not_null(strstr(s, "1024x1024 row-major copy ceiling: 1500 GB/s"), "the ceiling from the bench");
  cr_assert_null(strstr(s, "4096x4096 row-major copy ceiling"), "no ceiling where the bench has none");
  /* the seed's bar: the winner's bandwidth scaled by the time ratio: 1000/0.0085 * 0.0085/0.011 */
  cr_assert_not_null(strstr(s, "1024x1024 row-major seed: 90909 GB/s"), "%s", strstr(s, "seed:"));
  free(s);
}

/* ---- Sizes served without a tuned winner ---------------------------------------------------- */

/* A database where GPU 0 of model 0 recorded three sizes (reduce n=1000 40 calls, matadd
 * 4096x4096 12 calls, matadd 100x200 5 calls) and has a winner for 4096x4096 alone; another GPU
 * recorded one. */
static void make_seen_db(const char *file) {
  dbtest_make_db(file);
  pm_ctx *c = NULL;
  int64_t gpu, other;
  pm__db *db = dbtest_open_with_gpu(file, &c, &gpu);
  pm__device_info e = dbtest_gpu(1, 0);
  cr_assert_eq(pm__db_gpu_put(db, &e, 12040, 12080, &other), PM_OK);
  pm__db_problem ps[] = {{.op = "reduce", .dtype = "f32", .n = 1000}, dbtest_matadd(4096, 4096),
                         dbtest_matadd(100, 200)};
  cr_assert_eq(pm__db_seen_add(db, gpu, ps, (int64_t[]){40, 12, 5}, 3), PM_OK, "%s",
               pm_errmsg(c));
  cr_assert_eq(pm__db_seen_add(db, other, &ps[2], (int64_t[]){2}, 1), PM_OK, "%s", pm_errmsg(c));
  pm__db_close(db);
  pm_close(c);
}

Test(cli_db, show_seen_lists_the_recorded_sizes_most_called_first) {
  char file[160], args[512];
  snprintf(file, sizeof file, "%s/seen.db", dir);
  make_seen_db(file);
  snprintf(args, sizeof args, "show --seen --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_eq(lines(out), 5, "a header and four sizes: %s", out);
  const char *a100 = strstr(out, "Fake A100"), *reduce = strstr(out, "n=1000"),
             *big = strstr(out, "rows=4096 cols=4096 order=row"),
             *small = strstr(out, "Fake H100                matadd  rows=100 cols=200");
  cr_assert(a100 && reduce && big && small, "%s", out);
  cr_assert(a100 < reduce && reduce < big && big < small, "per GPU, most called first: %s", out);
  cr_assert_not_null(strstr(big, "12  bx=64 by=4 vec=1 ept=1 grid=0 map=0 align=0\n"), "its exact winner: %s", out);
  cr_assert_not_null(strstr(reduce, "40  -\n"), "no winner: %s", out);
  snprintf(args, sizeof args, "show --seen --op reduce --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_eq(lines(out), 2, "%s", out);
  cr_assert_not_null(strstr(out, "n=1000"), "%s", out);
  snprintf(args, sizeof args, "show --seen --op filter --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "no sizes recorded for filter"), "%s", out);
  /* Without --seen, show lists the winners as before. */
  snprintf(args, sizeof args, "show --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "bx=64 by=4"), "%s", out);
  cr_assert_null(strstr(out, "n=1000"), "%s", out);

  /* A file of schema 1, that no pmtune of schema 2 has written: read as it is, nothing recorded. */
  snprintf(file, sizeof file, "%s/old.db", dir);
  dbtest_exec(file, pm__db_migrations[0].source);
  snprintf(args, sizeof args, "show --seen --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "no sizes recorded in"), "%s", out);
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(file, &h), SQLITE_OK);
  cr_assert_eq(dbtest_int(h, "PRAGMA user_version"), 1, "reading migrated nothing");
  sqlite3_close(h);
}

Test(cli_db, tune_seen_needs_a_gpu_as_tune_does) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0)
    cr_skip_test("this machine has a GPU: test_gpu_tune covers tune --seen");
  char file[160], args[512], plain[65536];
  snprintf(file, sizeof file, "%s/seen.db", dir);
  make_seen_db(file);
  snprintf(args, sizeof args, "tune --op matadd --size 64x64 --db %s", file);
  expect_failure("", args, "no CUDA device");
  snprintf(plain, sizeof plain, "%s", err);
  snprintf(args, sizeof args, "tune --seen --db %s", file);
  expect_failure("", args, "no CUDA device");
  cr_assert_str_eq(err, plain, "the same error as the plain tune");
  snprintf(args, sizeof args, "tune --seen=2 --op reduce --db %s", file);
  expect_failure("", args, "no CUDA device");
}

/* A kernel of one's own travels with its description: export leaves its rows out unless --kernel
 * names it; import refuses them (importing nothing) unless --kernel names it, and then makes its
 * version current, so that show lists its winner and report draws it. */
Test(cli_db, export_and_import_carry_a_kernel_of_ones_own_with_its_description) {
  const char *kfile = PM_SOURCE_DIR "/examples/kernels/matadd.json";
  char src[160], dst[160], json[160], args[1024];
  snprintf(src, sizeof src, "%s/src.db", dir);
  snprintf(dst, sizeof dst, "%s/dst.db", dir);
  snprintf(json, sizeof json, "%s/k.json", dir);
  dbtest_make_db(src); /* matadd's winner and seed */
  pm_ctx *c = NULL;
  pm__kernel_desc *kf = NULL;
  pm__ops_db_plus plus;
  pm__db *db = NULL;
  int64_t gpu;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  cr_assert_eq(pm__kernel_desc_load(c, kfile, &kf), PM_OK, "%s", pm_errmsg(c));
  const pm__op *op = pm__kernel_desc_op(kf);
  cr_assert_eq(pm__db_open(c, src, 0, pm__ops_db_with(op, &plus), &db), PM_OK, "%s", pm_errmsg(c));
  pm__device_info d = dbtest_gpu(0, 0);
  cr_assert_eq(pm__db_gpu_put(db, &d, 12040, 12080, &gpu), PM_OK, "%s", pm_errmsg(c));
  pm__db_problem p = {.op = "my_matadd", .dtype = "f32", .rows = 4097, .cols = 3001, .variant = ""};
  const char *params[] = {"{\"BLOCK\":256,\"VEC\":1,\"ITEMS\":1}", "{\"BLOCK\":128,\"VEC\":4,\"ITEMS\":1}"};
  for (int i = 0; i < 2; i++) {
    pm__db_measurement m =
        dbtest_measurement(gpu, p, pm__op_template(op)->sha256, params[i], i ? 0.045 : 0.053);
    m.is_seed = i == 0;
    cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
  }
  cr_assert_eq(pm__db_template_current(db, op->name, pm__op_template(op)->sha256), PM_OK);
  pm__db_close(db);
  snprintf(args, sizeof args, "export %s --db %s", json, src);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "exported 3 measurements"), "matadd's alone: %s", out);
  snprintf(args, sizeof args, "export %s --kernel %s --db %s", json, kfile, src);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "exported 5 measurements"), "the kernel's too: %s", out);
  snprintf(args, sizeof args, "import %s --db %s", json, dst);
  expect_failure("", args, "unknown op 'my_matadd'");
  cr_assert_not_null(strstr(err, "nothing imported"), "%s", err);
  snprintf(args, sizeof args, "import %s --kernel %s --db %s", json, kfile, dst);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "5 measurements added"), "%s", out);
  snprintf(args, sizeof args, "show --db %s", dst);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "BLOCK=128 VEC=4 ITEMS=1"), "its winner: %s", out);
  cr_assert_not_null(strstr(out, "bx=64 by=4"), "matadd's: %s", out);
  snprintf(args, sizeof args, "report --svg %s/k.svg --kernel %s --db %s", dir, kfile, dst);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "1 tuned problems"), "the kernel's one size: %s", out);
  snprintf(args, sizeof args, "%s/k.svg", dir);
  slurp_into(args, out, sizeof out);
  cr_assert_not_null(strstr(out, "my_matadd"), "drawn under its name");
  pm__kernel_desc_free(kf);
  pm_close(c);
}

/* A document whose measurements array is malformed in a way SQLite 3.40's json_valid lets pass
 * (found by fuzz_import; kept in its corpus): refused as not valid JSON, status 1, nothing
 * imported, not reported as a database error. */
Test(cli_db, a_malformed_array_that_json_valid_passes_is_not_valid_json) {
  char args[512];
  snprintf(args, sizeof args, "import %s/tests/fuzz/corpus/import/f5c2546fa3272f20769a566d7a8075e741ac13f4 --db %s/m.db",
           PM_SOURCE_DIR, dir);
  expect_failure("", args, "not valid JSON");
  cr_assert_not_null(strstr(err, "nothing imported"), "%s", err);
  /* one on which SQLite 3.40's JSON functions read unwritten memory (crashing pmtune import
   * before its syntax was checked first) */
  snprintf(args, sizeof args, "import %s/tests/fuzz/corpus/import/b2720653f281a4088b03c95fa96e26ca0c269f51 --db %s/m.db",
           PM_SOURCE_DIR, dir);
  expect_failure("", args, "not valid JSON");
}

/* A gzip document (results/ ships them so) imports as the document it holds; one damaged or cut
 * short imports nothing and says so. */
Test(cli_db, a_gzip_document_imports_whole_or_not_at_all) {
  char args[1024], cut[256];
  snprintf(args, sizeof args, "import %s/results/nvidia-h100-80gb-hbm3.json.gz --db %s/z.db",
           PM_SOURCE_DIR, dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert(strstr(out, "measurements added") != NULL && strstr(out, " 0 measurements") == NULL,
            "%s", out);
  snprintf(cut, sizeof cut, "%s/cut.json.gz", dir);
  snprintf(args, sizeof args, "head -c 100000 %s/results/nvidia-h100-80gb-hbm3.json.gz > %s",
           PM_SOURCE_DIR, cut);
  cr_assert_eq(system(args), 0);
  snprintf(args, sizeof args, "import %s --db %s/y.db", cut, dir);
  expect_failure("", args, "gzip that is damaged or cut short");
  cr_assert_not_null(strstr(err, "nothing imported"), "%s", err);
}

/* show --dtype keeps the winners (and recorded sizes) of the types asked: the shipped H100
 * results hold winners of every type (their f64 ones taken out here, for a type with none). */
Test(cli_db, show_lists_the_types_asked) {
  char args[512];
  snprintf(args, sizeof args, "import %s/results/nvidia-h100-80gb-hbm3.json.gz --db %s/t.db", PM_SOURCE_DIR, dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  snprintf(args, sizeof args, "show --db %s/t.db", dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  int all = lines(out);
  cr_assert(strstr(out, " f32 ") && strstr(out, " bf16 "), "%s", out);
  snprintf(args, sizeof args, "show --dtype bf16 --db %s/t.db", dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  int bf16 = lines(out);
  cr_assert(bf16 > 1 && bf16 < all, "a header and some of the %d lines: %s", all, out);
  cr_assert_null(strstr(out, " f32 "), "%s", out);
  snprintf(args, sizeof args, "show --dtype f32,bf16 --db %s/t.db", dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert(lines(out) > bf16 && lines(out) < all, "%s", out);
  snprintf(args, sizeof args, "show --dtype f32,f16,bf16,f64 --db %s/t.db", dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_eq(lines(out), all, "%s", out);
  snprintf(args, sizeof args, "show --dtype f16,bf16 --op reduce --db %s/t.db", dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert(lines(out) > 1 && !strstr(out, " f32 ") && !strstr(out, "matadd"), "%s", out);
  snprintf(args, sizeof args, "%s/t.db", dir);
  dbtest_exec(args, "DELETE FROM measurement WHERE dtype = 'f64';");
  snprintf(args, sizeof args, "show --dtype f64 --db %s/t.db", dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "no winners of those types"), "%s", out);
  snprintf(args, sizeof args, "show --seen --dtype bf16 --db %s/t.db", dir);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "no sizes recorded of those types"), "%s", out);
  snprintf(args, sizeof args, "show --dtype f8 --db %s/t.db", dir);
  expect_usage(args, "'f8' is not a type");
}

/* Rows of a kernel of one's own (imported with its description, --kernel)
 * and of built-in ops whose configuration is none of the space's, or that break a constraint,
 * or lack a timing, were imported and listed by `show` as winners. Each is refused, in one line
 * naming the row and the field, and nothing is imported. */
Test(cli_db, import_refuses_configurations_outside_the_space_of_a_kernel_of_ones_own) {
  const char *kfile = PM_SOURCE_DIR "/examples/kernels/matadd.json";
#define KERNEL_ROW                                                                        \
  "\"op\":\"my_matadd\",\"dtype\":\"f32\",\"rows\":4097,\"cols\":3001,\"n\":null,"      \
  "\"radius\":null,\"variant\":\"\""
#define ADD_ROW \
  "\"op\":\"add\",\"dtype\":\"f32\",\"rows\":null,\"cols\":null,\"n\":4096,\"radius\":null,\"variant\":\"\""
#define TIMED(gbps)                                                                        \
  "\"status\":\"ok\",\"error\":null,\"median_ms\":0.05,\"min_ms\":0.04,\"max_ms\":0.06,"   \
  "\"samples\":20,\"gbps\":" gbps ",\"verified\":true,\"max_error\":0.0"
  static const struct {
    const char *problem, *config, *params, *timing, *needle;
  } cases[] = {
      {KERNEL_ROW, "BLOCK=999 VEC=1 ITEMS=1", "{\"BLOCK\":999,\"VEC\":1,\"ITEMS\":1}",
       TIMED("1000.0"), "measurements[0].config: configuration 'BLOCK=999 VEC=1 ITEMS=1': 999 is "
                        "not a value of BLOCK"},
      {KERNEL_ROW, "BLOCK=1024 VEC=4 ITEMS=8", "{\"BLOCK\":1024,\"VEC\":4,\"ITEMS\":8}",
       TIMED("1000.0"), "measurements[0].config: configuration 'BLOCK=1024 VEC=4 ITEMS=8' cannot "
                        "run this problem"},
      {KERNEL_ROW, "BLOCK=256 VEC=1", "{\"BLOCK\":256,\"VEC\":1}", TIMED("1000.0"),
       "ITEMS is missing"},
      {KERNEL_ROW, "BLOCK=256 VEC=1 ITEMS=1 EVIL=1",
       "{\"BLOCK\":256,\"VEC\":1,\"ITEMS\":1,\"EVIL\":1}", TIMED("1000.0"),
       "my_matadd has no parameter 'EVIL'"},
      {KERNEL_ROW, "BLOCK=256 VEC=1 ITEMS=1", "{\"BLOCK\":256,\"VEC\":1,\"ITEMS\":1}",
       TIMED("null"), "measurements[0].gbps: null on an ok row"},
      {ADD_ROW, "block=999 vec=1 items=1 grid=0", "{\"block\":999,\"vec\":1,\"items\":1,\"grid\":0}",
       TIMED("1000.0"), "999 is not a value of block"},
      {ADD_ROW, "block=256 vec=3 items=1 grid=0", "{\"block\":256,\"vec\":3,\"items\":1,\"grid\":0}",
       TIMED("1000.0"), "3 is not a value of vec"},
  };
  char doc[4096], file[160], db[160], args[1024], ksha[65];
  pm_ctx *c = NULL;
  pm__kernel_desc *kf = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  cr_assert_eq(pm__kernel_desc_load(c, kfile, &kf), PM_OK, "%s", pm_errmsg(c));
  snprintf(ksha, sizeof ksha, "%s", pm__op_template(pm__kernel_desc_op(kf))->sha256);
  pm__kernel_desc_free(kf);
  pm_close(c);
  snprintf(file, sizeof file, "%s/one.json", dir);
  snprintf(db, sizeof db, "%s/dst.db", dir);
  for (size_t i = 0; i < sizeof cases / sizeof *cases + 1; i++) {
    int good = i == sizeof cases / sizeof *cases; /* last: the kernel's row, right */
    snprintf(doc, sizeof doc,
             "{\"format\":\"pmtune-export\",\"version\":1,\"gpus\":[{\"uuid\":\"GPU-31\",\"name\":"
             "\"Fake H100\",\"cc_major\":9,\"cc_minor\":0,\"arch\":\"sm_90\",\"sm_count\":132,"
             "\"mem_bytes\":85899345920,\"driver_version\":12040,\"runtime_version\":12080}],"
             "\"measurements\":[{\"gpu\":\"GPU-31\",%s,\"template_sha256\":\"%s\",\"config\":"
             "\"%s\",\"params\":%s,\"is_seed\":false,%s,\"measured_at\":"
             "\"2026-11-26T12:00:00.000Z\"}]}",
             good ? KERNEL_ROW : cases[i].problem,
             good || cases[i].problem[6] == 'm' ? ksha : SHA_A,
             good ? "BLOCK=128 VEC=4 ITEMS=1" : cases[i].config,
             good ? "{\"BLOCK\":128,\"VEC\":4,\"ITEMS\":1}" : cases[i].params,
             good ? TIMED("1000.0") : cases[i].timing);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs(doc, f);
    fclose(f);
    snprintf(args, sizeof args, "import %s --kernel %s --db %s", file, kfile, db);
    if (good) {
      cr_assert_eq(run("", args), 0, "%s", err);
      break;
    }
    expect_failure("", args, cases[i].needle);
    cr_assert_not_null(strstr(err, "nothing imported"), "%s", err);
    snprintf(args, sizeof args, "show --db %s", db);
    cr_assert_eq(run("", args), 0, "%s", err);
    cr_assert_null(strstr(out, cases[i].config), "not a winner: %s", out);
  }
  snprintf(args, sizeof args, "show --db %s", db);
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_not_null(strstr(out, "BLOCK=128 VEC=4 ITEMS=1"), "the right row serves: %s", out);
  cr_log_info("kernel and built-in rows refused by the space: %zu cases",
              sizeof cases / sizeof *cases);
#undef KERNEL_ROW
#undef ADD_ROW
#undef TIMED
}

/* `pmtune db check` lists a planted trigger as a problem (status 1) and
 * every other object that is not pmtune's; import and tune refuse the file, writing nothing. */
Test(cli_db, db_check_lists_a_planted_trigger_and_import_refuses_the_file) {
  char file[160], json[160], args[1024];
  snprintf(file, sizeof file, "%s/src.db", dir);
  snprintf(json, sizeof json, "%s/w.json", dir);
  dbtest_make_db(file);
  snprintf(args, sizeof args, "export %s --db %s", json, file);
  cr_assert_eq(run("", args), 0, "%s", err);
  snprintf(file, sizeof file, "%s/planted.db", dir);
  snprintf(args, sizeof args, "db init --db %s", file);
  cr_assert_eq(run("", args), 0, "%s", err);
  dbtest_exec(file, "CREATE TRIGGER t AFTER INSERT ON measurement BEGIN UPDATE measurement SET"
                    " median_ms = median_ms/100 WHERE rowid = new.rowid; END;"
                    "CREATE VIEW mine AS SELECT 1;");
  snprintf(args, sizeof args, "db check --db %s", file);
  cr_assert_eq(run("", args), 1, "%s%s", out, err);
  cr_assert_not_null(strstr(out, "PROBLEM: trigger 't' on 'measurement' is not pmtune's"), "%s",
                     out);
  cr_assert_not_null(strstr(out, "not pmtune's, left alone: view 'mine'"), "%s", out);
  cr_assert_not_null(strstr(err, "1 problem found"), "%s", err);
  snprintf(args, sizeof args, "import %s --db %s", json, file);
  expect_failure("", args, "trigger 't' on 'measurement' that pmtune does not make");
  cr_assert_not_null(strstr(err, "nothing imported"), "%s", err);
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(file, &h), SQLITE_OK);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement"), 0);
  sqlite3_close(h);
  dbtest_exec(file, "DROP TRIGGER t;");
  cr_assert_eq(run("", args), 0, "%s", err);
  cr_assert_eq(sqlite3_open(file, &h), SQLITE_OK);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM measurement WHERE median_ms IN (1.0, 2.0)"), 2,
               "the times as they were");
  sqlite3_close(h);
}

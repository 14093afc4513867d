/* dbtest.h: what the tuning database's tests share: scratch files, fabricated GPUs (no GPU is
 * needed), measurements, and plain SQLite access to what pmtune wrote. */
#ifndef PM_DBTEST_H
#define PM_DBTEST_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h" /* db's: tests read the file through SQLite */
#include "op.h"

/* Two template hashes that no real template has. */
#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* A scratch directory, removed by dbtest_cleanup. */
static inline void dbtest_mkdir(char dir[64]) {
  snprintf(dir, 64, "/tmp/pmtune-dbtest-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static inline void dbtest_cleanup(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

/* GPU i of a model (model 0: "Fake H100", 132 SMs; model 1: "Fake A100", 108 SMs). */
static inline pm__device_info dbtest_gpu(int model, int i) {
  pm__device_info d;
  memset(&d, 0, sizeof d);
  snprintf(d.uuid, sizeof d.uuid, "GPU-%08d-0000-0000-0000-%012d", model, i);
  snprintf(d.name, sizeof d.name, "%s", model == 0 ? "Fake H100" : "Fake A100");
  d.cc_major = model == 0 ? 9 : 8;
  d.cc_minor = 0;
  snprintf(d.arch, sizeof d.arch, "sm_%d0", d.cc_major);
  d.sm_count = model == 0 ? 132 : 108;
  d.mem_bytes = (size_t)80 << 30;
  return d;
}

static inline pm__db_problem dbtest_matadd(int64_t rows, int64_t cols) {
  return (pm__db_problem){
      .op = "matadd", .dtype = "f32", .rows = rows, .cols = cols, .variant = "order=row"};
}

/* A measurement that ran and was verified, of configuration params, median ms. */
static inline pm__db_measurement dbtest_measurement(int64_t gpu, pm__db_problem p, const char *sha,
                                                    const char *params, double median) {
  return (pm__db_measurement){.gpu_id = gpu,
                              .problem = p,
                              .template_sha256 = sha,
                              .params = params,
                              .outcome = PM__DB_MEASURED,
                              .median_ms = median,
                              .min_ms = median * 0.9,
                              .max_ms = median * 1.2,
                              .samples = 20,
                              .gbps = 1000.0 / median,
                              .verified = 1,
                              .max_error = 1e-7};
}

/* The database `file` opened for writing on a context of its own (*c), with the fake GPU of
 * model 0 recorded (*gpu). */
static inline pm__db *dbtest_open_with_gpu(const char *file, pm_ctx **c, int64_t *gpu) {
  pm_options o = {.device = PM_DEVICE_NONE};
  pm__db *db = NULL;
  cr_assert_eq(pm_open(c, &o), PM_OK);
  cr_assert_eq(pm__db_open(*c, file, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(*c));
  pm__device_info d = dbtest_gpu(0, 0);
  cr_assert_eq(pm__db_gpu_put(db, &d, 12040, 12080, gpu), PM_OK, "%s", pm_errmsg(*c));
  return db;
}

/* A database with one GPU's winner of matadd 4096x4096 (bx=64 by=4 ..., 1 ms), its seed (2 ms) and
 * a loser (3 ms), written through the library. */
static inline void dbtest_make_db(const char *file) {
  pm_ctx *c = NULL;
  int64_t gpu;
  pm__db *db = dbtest_open_with_gpu(file, &c, &gpu);
  const pm__template *t = pm__template_find("matadd");
  cr_assert_not_null(t);
  const char *params[] = {
      "{\"bx\":16,\"by\":16,\"vec\":1,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}",
      "{\"bx\":64,\"by\":4,\"vec\":1,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}",
      "{\"bx\":32,\"by\":8,\"vec\":1,\"ept\":1,\"grid\":0,\"map\":0,\"align\":0}"};
  const double ms[] = {2.0, 1.0, 3.0};
  for (int i = 0; i < 3; i++) {
    pm__db_measurement m =
        dbtest_measurement(gpu, dbtest_matadd(4096, 4096), t->sha256, params[i], ms[i]);
    m.is_seed = i == 0;
    cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
  }
  pm__db_close(db);
  pm_close(c);
}

/* Stores config as a verified measurement of op on pr taking `ms`, made on GPU gpu with the
 * template hash sha, in the database at path (created where it is missing), as `pmtune tune`
 * would; c takes the messages. */
static inline void dbtest_put_config(pm_ctx *c, const char *path, const pm__device_info *gpu,
                                     const char *sha, const pm__op *op, pm__problem pr,
                                     const char *config, double ms) {
  pm__db *db = NULL;
  int64_t id;
  int v[PM__MAX_PARAMS];
  char params[PM__DB_PARAMS_MAX];
  pm__db_problem p;
  cr_assert_eq(pm__config_parse(c, op, config, v), PM_OK, "%s: %s", config, pm_errmsg(c));
  pm__config_json(op, v, params, sizeof params);
  pm__op_db_problem(op, &pr, &p);
  cr_assert_eq(pm__db_open(c, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_gpu_put(db, gpu, 12040, 12080, &id), PM_OK, "%s", pm_errmsg(c));
  pm__db_measurement m = dbtest_measurement(id, p, sha, params, ms);
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
  pm__db_close(db);
}

/* pmtune db check's verdict on the database `file` (opened read-only on c): the number of
 * problems found, the report logged where there are any. */
static inline int dbtest_problems(pm_ctx *c, const char *file) {
  pm__db *db = NULL;
  char *report = NULL;
  int problems = -1;
  cr_assert_eq(pm__db_open(c, file, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s",
               pm_errmsg(c));
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(c));
  if (problems != 0) cr_log_error("%s", report);
  free(report);
  pm__db_close(db);
  return problems;
}

/* The first column of the first row of sql, as an integer (-1 where there is no row). */
static inline int64_t dbtest_int(sqlite3 *h, const char *sql) {
  sqlite3_stmt *st = NULL;
  cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(h));
  int r = sqlite3_step(st);
  cr_assert(r == SQLITE_ROW || r == SQLITE_DONE, "%s: %s", sql, sqlite3_errmsg(h));
  int64_t v = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return v;
}

/* Every row of sql, its columns joined by '|' and its rows by '\n' (heap). */
static inline char *dbtest_rows(sqlite3 *h, const char *sql) {
  sqlite3_stmt *st = NULL;
  cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(h));
  size_t cap = 4096, len = 0;
  char *out = malloc(cap);
  cr_assert_not_null(out);
  out[0] = '\0';
  int r;
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const char *t = (const char *)sqlite3_column_text(st, i);
      size_t need = len + (t ? strlen(t) : 4) + 4;
      if (need > cap) {
        cap = need * 2;
        out = realloc(out, cap);
        cr_assert_not_null(out);
      }
      len += (size_t)sprintf(out + len, "%s%s", i ? "|" : "", t ? t : "NULL");
    }
    out[len++] = '\n';
    out[len] = '\0';
  }
  cr_assert_eq(r, SQLITE_DONE, "%s: %s", sql, sqlite3_errmsg(h));
  sqlite3_finalize(st);
  return out;
}

/* Runs sql on the file with plain SQLite, as a person with sqlite3 would. */
static inline void dbtest_exec(const char *path, const char *sql) {
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  char *err = NULL;
  cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &err), SQLITE_OK, "%s: %s", sql, err);
  sqlite3_close(h);
}

/* The whole content of a file (heap; *len its size), or NULL where it cannot be read. */
static inline char *dbtest_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  cr_assert_not_null(buf);
  cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* Asserts that path holds exactly `before` (before_len bytes, from dbtest_slurp), saying `what`
 * ("reading changed nothing"), and frees before. */
static inline void dbtest_assert_unchanged(const char *path, char *before, size_t before_len,
                                           const char *what) {
  size_t after_len = 0;
  char *after = dbtest_slurp(path, &after_len);
  cr_assert_not_null(after, "%s: %s cannot be read", what, path);
  cr_assert_eq(after_len, before_len, "%s: the file's size changed", what);
  cr_assert_eq(memcmp(before, after, before_len), 0, "%s: the file's bytes changed", what);
  free(before);
  free(after);
}

static inline void dbtest_write(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  cr_assert_eq(fwrite(data, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
}

/* Holds the write lock of PATH from a child process for HOLD_MS, or until the caller writes a
 * byte to *release where release is not NULL, touching PATH-wal every 100 ms where TOUCH (another
 * process at work, as far as a waiter can tell); then commits. Returns the child once it holds the
 * lock. */
static inline pid_t dbtest_hold_write_lock(const char *path, int hold_ms, int touch, int *release) {
  int fds[2], rel[2];
  cr_assert_eq(pipe(fds), 0);
  cr_assert_eq(pipe(rel), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    sqlite3 *h = NULL;
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    close(rel[1]);
    if (sqlite3_open(path, &h) != SQLITE_OK ||
        sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
      _exit(3);
    if (write(fds[1], "x", 1) != 1) _exit(4);
    for (int t = 0; t < hold_ms; t += 100) {
      if (touch && utimensat(AT_FDCWD, wal, NULL, 0) != 0) _exit(5);
      struct pollfd p = {.fd = rel[0], .events = POLLIN};
      if (release == NULL) nanosleep(&(struct timespec){0, 100000000}, NULL);
      else if (poll(&p, 1, 100) > 0) break; /* a byte, or the caller gone */
    }
    _exit(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : 6);
  }
  char x;
  close(fds[1]);
  close(rel[0]);
  cr_assert_eq(read(fds[0], &x, 1), 1, "the child did not take the write lock");
  close(fds[0]);
  if (release != NULL) *release = rel[1];
  else close(rel[1]);
  return pid;
}

#endif /* PM_DBTEST_H */

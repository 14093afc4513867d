/* test_fault.c: the fault hook drives every SQLite call of opening, importing and checking a
 * database, and NVRTC and CUDA calls, to fail one at a time: each failure must give a clear
 * status and message and leave the database sound, holding exactly what was committed before. */
#include <stdio.h>

#include <sys/stat.h>

#include "dbtest.h"

/* The hook: fails the Nth call of one kind (counting from 1), and counts them all. */
typedef struct injector {
  pm__fault_kind kind;
  int fail_at; /* 0: never */
  int calls;   /* of that kind so far */
  int fired;
} injector;

static int inject(void *arg, pm__fault_kind kind, const char *site) {
  injector *in = arg;
  (void)site;
  if (kind != in->kind) return 0;
  if (++in->calls != in->fail_at) return 0;
  in->fired = 1;
  return 1;
}

static void arm(injector *in, pm__fault_kind kind, int n) {
  *in = (injector){.kind = kind, .fail_at = n};
  pm__fault_set(inject, in);
}

static void disarm(void) { pm__fault_set(NULL, NULL); }

static pm_ctx *ctx;
static char dir[64], path[128];

static void setup(void) {
  cr_assert_eq(pm__ctx_create(&ctx, PM_DEVICE_NONE, NULL), PM_OK);
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/t.db", dir);
}

static void teardown(void) {
  disarm();
  pm__ctx_free(ctx);
  dbtest_cleanup(dir);
}

TestSuite(fault, .init = setup, .fini = teardown);

/* Stores `count` measurements of a fabricated GPU into the database at file. */
static void fill(const char *file, int model, int count) {
  pm__db *db = NULL;
  int64_t gpu;
  pm__device_info d = dbtest_gpu(model, 0);
  cr_assert_eq(pm__db_open(ctx, file, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_gpu_put(db, &d, 12040, 12040, &gpu), PM_OK, "%s", pm_errmsg(ctx));
  for (int i = 0; i < count; i++) {
    char params[32];
    snprintf(params, sizeof params, "{\"bx\":%d}", 16 << i);
    pm__db_measurement m = dbtest_measurement(gpu, dbtest_matadd(1024, 1024 + 8 * model), SHA_A,
                                              params, 1.0 + i);
    cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(ctx));
  }
  pm__db_close(db);
}

/* Every measurement row of the file, as text. */
static char *rows_of(const char *file) {
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(file, &h), SQLITE_OK);
  char *r = dbtest_rows(h, "SELECT gpu_id, problem, config, median_ms FROM measurement ORDER BY 1, 2, 3");
  sqlite3_close(h);
  return r;
}

/* pmtune db check's verdict on the file: the number of problems found. */
static int problems_in(const char *file) {
  pm__db *db = NULL;
  char *report = NULL;
  int problems = -1;
  cr_assert_eq(pm__db_open(ctx, file, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_eq(pm__db_check(db, &report, &problems), PM_OK, "%s", pm_errmsg(ctx));
  if (problems != 0) cr_log_error("%s", report);
  free(report);
  pm__db_close(db);
  return problems;
}

/* The exported winners of a database of another GPU, as a document to import. */
static char *document(size_t *len) {
  char other[160];
  snprintf(other, sizeof other, "%s/other.db", dir);
  fill(other, 1, 3);
  pm__db *db = NULL;
  char *doc = NULL;
  FILE *f = open_memstream(&doc, len);
  cr_assert_eq(pm__db_open(ctx, other, PM__DB_READONLY, pm__ops_db(), &db), PM_OK);
  cr_assert_eq(pm__db_export(db, f, 1, NULL), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_close(db);
  fclose(f);
  return doc;
}

Test(fault, every_sqlite_call_of_an_import_fails_cleanly_and_all_or_nothing) {
  size_t len;
  char *doc = document(&len);
  fill(path, 0, 2);
  char *before = rows_of(path);
  injector in;
  int n = 1;
  for (;; n++) {
    arm(&in, PM__FAULT_SQLITE, n);
    pm__db *db = NULL;
    int rc = pm__db_open(ctx, path, 0, pm__ops_db(), &db);
    if (rc == PM_OK) rc = pm__db_import(db, doc, len, NULL);
    pm__db_close(db);
    disarm();
    if (!in.fired) {
      cr_assert_eq(rc, PM_OK, "no fault, yet: %s", pm_errmsg(ctx));
      break;
    }
    cr_assert_neq(rc, PM_OK, "call %d failed, yet the import succeeded", n);
    cr_assert_not_null(strstr(pm_errmsg(ctx), "tuning database"), "call %d: %s", n, pm_errmsg(ctx));
    cr_assert_eq(problems_in(path), 0, "call %d left the database unsound", n);
    char *now = rows_of(path);
    cr_assert_str_eq(now, before, "call %d: a failed import changed what was stored", n);
    free(now);
  }
  cr_assert_gt(n, 10, "only %d SQLite calls: the hook is not reached", n);
  char *after = rows_of(path);
  cr_assert_str_neq(after, before, "the import without a fault stored nothing");
  cr_assert_eq(problems_in(path), 0);
  free(after);
  free(before);
  free(doc);
}

Test(fault, every_sqlite_call_of_creating_a_database_fails_cleanly) {
  injector in;
  int n = 1;
  for (;; n++) {
    arm(&in, PM__FAULT_SQLITE, n);
    pm__db *db = NULL;
    int rc = pm__db_open(ctx, path, 0, pm__ops_db(), &db);
    pm__db_close(db);
    disarm();
    if (!in.fired) {
      cr_assert_eq(rc, PM_OK, "%s", pm_errmsg(ctx));
      break;
    }
    cr_assert_neq(rc, PM_OK, "call %d failed, yet the database opened", n);
    cr_assert_not_null(strstr(pm_errmsg(ctx), path), "call %d: %s", n, pm_errmsg(ctx));
    struct stat st; /* nothing empty left behind (issue 15, item 5): no file, or a database */
    cr_assert(stat(path, &st) != 0 || st.st_size > 0, "call %d left an empty file", n);
    /* what a failed creation left must open, migrate and check clean without the fault */
    cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_OK, "after call %d: %s", n,
                 pm_errmsg(ctx));
    pm__db_close(db);
    cr_assert_eq(problems_in(path), 0, "after call %d", n);
    unlink(path);
    char side[160];
    snprintf(side, sizeof side, "%s-wal", path), unlink(side);
    snprintf(side, sizeof side, "%s-shm", path), unlink(side);
  }
  cr_assert_gt(n, 5, "only %d SQLite calls: the hook is not reached", n);
}

Test(fault, every_nvrtc_call_of_a_compile_fails_with_a_clear_error) {
  const pm__template *t = pm__template_find(pm__ops[0]->name);
  injector in;
  int n = 1;
  for (;; n++) {
    pm__cubin b = {0};
    arm(&in, PM__FAULT_NVRTC, n);
    int rc = pm__compile(ctx, t->file, t->source, "sm_90", NULL, 0, &b);
    disarm();
    if (!in.fired) {
      cr_assert_eq(rc, PM_OK, "%s", pm_errmsg(ctx));
      cr_assert_gt(b.size, 0);
      pm__cubin_free(&b);
      break;
    }
    cr_assert_eq(rc, PM_ECOMPILE, "call %d: %s", n, pm_errmsg(ctx));
    cr_assert_not_null(strstr(pm_errmsg(ctx), "nvrtc"), "call %d: %s", n, pm_errmsg(ctx));
    cr_assert_null(b.data, "call %d left a cubin", n);
  }
  cr_assert_geq(n, 4, "only %d NVRTC calls: the hook is not reached", n);
}

Test(fault, a_failing_cuda_call_is_a_clear_error_without_a_gpu) {
  injector in;
  int count = -1;
  arm(&in, PM__FAULT_CUDA, 1);
  int rc = pm__device_count(ctx, &count);
  disarm();
  cr_assert(in.fired, "pm__device_count did not ask the hook");
  cr_assert_eq(rc, PM_ECUDA, "%s", pm_errmsg(ctx));
  cr_assert_not_null(strstr(pm_errmsg(ctx), "cudaGetDeviceCount"), "%s", pm_errmsg(ctx));
}

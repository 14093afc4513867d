/* test_fault.c: the fault hook (core/fault.h) walks every call of every kind (allocation, SQLite,
 * CUDA, NVRTC) of importing into a database that holds rows, creating and migrating one (db
 * init), checking one (db check), serving's decision chain on a fabricated database, and the
 * CPU steps of `pmtune tune` (recording the GPU and run, compiling a kernel and storing it and
 * its measurement), failing them one at a time: each failure must give a clear status and
 * message (or, where the fault did not matter, the right result), leak nothing (the sanitizer
 * build runs this under LeakSanitizer), and leave the database sound, holding exactly what was
 * committed before. SQLite's own allocations are routed through the hook too (install_sqlite_
 * allocator), so that the walk of allocations covers them and pmtune's handling of the
 * SQLITE_NOMEM they give. Each walk prints its figures (tests/RELIABILITY.md keeps them). */
#include <stdio.h>

#include <sys/stat.h>

#include "dbtest.h"
#include "faulttest.h"
#include "serve.h"

/* ---- The hook ------------------------------------------------------------------------------- */

#define SQLITE_SITE FAULTTEST_SQLITE_SITE
#define kind_names faulttest_kind_names

static int own_only; /* the walks under way leave SQLite's own allocations alone */

static void arm(injector *in, pm__fault_kind kind, int n) { arm_at(in, kind, NULL, n, own_only); }

/* SQLite's allocator, asking the hook first (as PM__FAULT_MALLOC) for each allocation. SQLite
 * takes an allocator only before it is initialised, for the whole process: a library that sits
 * in other programs (which may use SQLite themselves) cannot install one, so the test does. */
static sqlite3_mem_methods sqlite_mem;

static void *sqlite_malloc(int n) {
  return pm__fault(PM__FAULT_MALLOC, SQLITE_SITE) ? NULL : sqlite_mem.xMalloc(n);
}

static void *sqlite_realloc(void *p, int n) {
  return pm__fault(PM__FAULT_MALLOC, SQLITE_SITE) ? NULL : sqlite_mem.xRealloc(p, n);
}

static void install_sqlite_allocator(void) {
  sqlite3_mem_methods m;
  cr_assert_eq(sqlite3_shutdown(), SQLITE_OK);
  if (sqlite_mem.xMalloc == NULL)
    cr_assert_eq(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_mem), SQLITE_OK);
  m = sqlite_mem;
  m.xMalloc = sqlite_malloc;
  m.xRealloc = sqlite_realloc;
  cr_assert_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &m), SQLITE_OK);
  cr_assert_eq(sqlite3_initialize(), SQLITE_OK);
}

/* ---- Scratch files and what they hold ------------------------------------------------------- */

static pm_ctx *ctx;
static char dir[64], path[128];

static void setup(void) {
  install_sqlite_allocator();
  /* SQLite's own allocations make walks 200 times as long (8,500 of them in an import): walked
   * where asked (test_fault_sqlite_allocs, registered by cmake -DPM_FAULT_DEEP=ON) */
  const char *deep = getenv("PMTUNE_FAULT_SQLITE_ALLOCS");
  own_only = deep == NULL || strcmp(deep, "1") != 0;
  cr_assert_eq(pm__ctx_create(&ctx, PM_DEVICE_NONE, NULL), PM_OK);
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/t.db", dir);
}

static void teardown(void) {
  disarm();
  pm__ctx_free(ctx);
  dbtest_cleanup(dir);
}

TestSuite(fault, .init = setup, .fini = teardown, .timeout = 900);

/* A fabricated GPU of dbtest.h's models, with what op->check asks of a device filled in. */
static pm__device_info fake_gpu(int model) {
  pm__device_info d = dbtest_gpu(model, 0);
  d.max_threads_per_block = 1024;
  d.smem_per_block_optin = 227 << 10;
  d.l2_bytes = 50 << 20;
  return d;
}

/* Stores `count` measurements of a fabricated GPU into the database at file: with sha NULL, of
 * the template built in (what serving takes), else of that hash. */
static void fill(const char *file, int model, int count, const char *sha) {
  static const char *const configs[] = {"bx=128 by=2 vec=4 ept=1 grid=0 map=0 align=256",
                                        "bx=64 by=4 vec=2 ept=1 grid=0 map=0 align=256",
                                        "bx=256 by=1 vec=1 ept=2 grid=0 map=0 align=512"};
  pm__db *db = NULL;
  int64_t gpu;
  pm__device_info d = fake_gpu(model);
  cr_assert_eq(pm__db_open(ctx, file, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_gpu_put(db, &d, 12040, 12040, &gpu), PM_OK, "%s", pm_errmsg(ctx));
  for (int i = 0; i < count; i++) {
    int v[PM__MAX_PARAMS];
    char params[PM__DB_PARAMS_MAX];
    cr_assert_eq(pm__config_parse(ctx, &pm__op_matadd, configs[i % 3], v), PM_OK);
    pm__config_json(&pm__op_matadd, v, params, sizeof params);
    pm__db_measurement m = dbtest_measurement(
        gpu, dbtest_matadd(1024 << (i / 3), 1024 + 8 * model),
        sha ? sha : pm__template_find("matadd")->sha256, params, 1.0 + i);
    cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(ctx));
  }
  pm__db_close(db);
}

/* What the file holds, as text: every row of every table of pmtune's (timestamps included), or
 * (stable) the rows without what differs from one run to the next (when a row was written). */
static char *dump(const char *file, int stable) {
  static const char *const all[] = {
      "SELECT * FROM gpu ORDER BY id", "SELECT * FROM template ORDER BY sha256",
      "SELECT * FROM run ORDER BY id", "SELECT * FROM measurement ORDER BY id",
      "SELECT template_sha256, defines, arch, size, hex(data) FROM cubin ORDER BY 1, 2",
      "SELECT * FROM seen ORDER BY 1, 2, 3" /* (schema 2 on) */, "PRAGMA user_version", NULL};
  static const char *const steady[] = {
      "SELECT uuid, name, cc_major, arch, sm_count FROM gpu ORDER BY uuid",
      "SELECT sha256, op, current FROM template ORDER BY sha256",
      "SELECT status, message FROM run ORDER BY id",
      "SELECT g.uuid, m.op, m.problem, m.config, m.template_sha256, m.status, m.median_ms,"
      " m.verified FROM measurement m JOIN gpu g ON g.id = m.gpu_id ORDER BY 1, 2, 3, 4, 5",
      "SELECT template_sha256, defines, arch, size FROM cubin ORDER BY 1, 2",
      "PRAGMA user_version", NULL};
  const char *const *q = stable ? steady : all;
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open_v2(file, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", file);
  size_t len = 0;
  char *out = NULL;
  FILE *f = open_memstream(&out, &len);
  int seen = dbtest_int(h, "SELECT count(*) FROM sqlite_schema WHERE name = 'seen'") == 1;
  for (int i = 0; q[i] != NULL; i++) {
    if (!seen && strstr(q[i], "FROM seen") != NULL) continue; /* a file of schema 1 */
    char *rows = dbtest_rows(h, q[i]);
    fprintf(f, "-- %s\n%s", q[i], rows);
    free(rows);
  }
  fclose(f);
  sqlite3_close(h);
  return out;
}

/* pmtune db check's verdict on the file: the number of problems found. */
static int problems_in(const char *file) { return dbtest_problems(ctx, file); }

/* Removes the file and SQLite's files beside it. */
static void remove_db(const char *file) {
  char side[160];
  unlink(file);
  snprintf(side, sizeof side, "%s-wal", file), unlink(side);
  snprintf(side, sizeof side, "%s-shm", file), unlink(side);
  snprintf(side, sizeof side, "%s-journal", file), unlink(side);
}

/* The file's bytes, taken where no WAL is beside it (a closed database): put back by restore. */
typedef struct image {
  char *bytes;
  size_t len;
} image;

static image take(const char *file) {
  char wal[160];
  snprintf(wal, sizeof wal, "%s-wal", file);
  cr_assert_neq(access(wal, F_OK), 0, "%s: a WAL is left: the image would miss it", file);
  image im;
  im.bytes = dbtest_slurp(file, &im.len);
  cr_assert_not_null(im.bytes);
  return im;
}

static void restore(const char *file, const image *im) {
  remove_db(file);
  dbtest_write(file, im->bytes, im->len);
}

/* ---- The walk ------------------------------------------------------------------------------- */

/* A path walked: run makes its calls once (under the hook) and returns their status, having
 * copied the context's message to msg where it failed; check judges one run, the hook removed
 * (in.fired: a call failed). reset puts the files back as they were before each run. */
typedef struct walked {
  const char *name;
  void (*reset)(void);
  int (*run)(char *msg, size_t cap);
  void (*check)(int rc, const char *msg, const injector *in, int n);
} walked;

typedef struct figures {
  int calls[PM__FAULT_KINDS]; /* calls of each kind in a run without a fault: each was failed */
  int sites[PM__FAULT_KINDS]; /* distinct call sites among them (SQLite's allocator one) */
  int sqlite_allocs;          /* of the allocations, SQLite's own */
  int failed_ok;              /* runs whose fault did not matter: success, the result right */
} figures;

/* The message of a failed run must say what failed, in words: not nothing, not "success". */
static void expect_clear(int rc, const char *msg, const injector *in, int n) {
  cr_assert_neq(rc, PM_OK, "%s call %d (%s) failed, yet nothing failed", kind_names[in->kind], n,
                in->site);
  cr_assert(msg[0] != '\0' && strcmp(msg, "success") != 0, "%s call %d (%s): no message",
            kind_names[in->kind], n, in->site);
  if (rc == PM_ENOMEM)
    cr_assert_not_null(strstr(msg, "memory"), "%s call %d (%s): %s", kind_names[in->kind],
                       n, in->site, msg);
  if (rc == PM_EDB)
    cr_assert_not_null(strstr(msg, "tuning database"), "%s call %d (%s): %s",
                       kind_names[in->kind], n, in->site, msg);
  if (rc == PM_ECOMPILE)
    cr_assert(strstr(msg, "nvrtc") != NULL || strstr(msg, "compile") != NULL,
              "%s call %d (%s): %s", kind_names[in->kind], n, in->site, msg);
}

/* Fails each call of kind of p, one run each, until a run makes no call that fails. */
static void walk_kind(const walked *p, pm__fault_kind kind, figures *f) {
  injector in;
  char msg[4096];
  for (int n = 1;; n++) {
    p->reset();
    msg[0] = '\0';
    arm(&in, kind, n);
    int rc = p->run(msg, sizeof msg);
    disarm();
    p->check(rc, msg, &in, n);
    if (!in.fired) {
      cr_assert_eq(rc, PM_OK, "%s without a fault: %s", p->name, msg);
      f->calls[kind] = in.calls;
      f->sites[kind] = in.nsites;
      if (kind == PM__FAULT_MALLOC) f->sqlite_allocs = in.sqlite;
      return;
    }
    f->failed_ok += rc == PM_OK;
  }
}

/* Walks every kind over p, prints the figures and returns them. */
static figures walk(const walked *p) {
  figures f = {0};
  double t0 = pm__now_ms();
  for (int k = 0; k < PM__FAULT_KINDS; k++) walk_kind(p, (pm__fault_kind)k, &f);
  fprintf(stderr,
          "fault walk: %-8s malloc %d calls (%d of them SQLite's own; %d sites of pmtune's), "
          "sqlite %d calls (%d sites), cuda %d (%d sites), nvrtc %d (%d sites); %d faults did "
          "not matter; %.1f s\n",
          p->name, f.calls[PM__FAULT_MALLOC], f.sqlite_allocs,
          f.sites[PM__FAULT_MALLOC] - (f.sqlite_allocs > 0), f.calls[PM__FAULT_SQLITE],
          f.sites[PM__FAULT_SQLITE], f.calls[PM__FAULT_CUDA], f.sites[PM__FAULT_CUDA],
          f.calls[PM__FAULT_NVRTC], f.sites[PM__FAULT_NVRTC], f.failed_ok,
          (pm__now_ms() - t0) / 1e3);
  return f;
}

/* The message of ctx, where rc is a failure. */
static int said(int rc, char *msg, size_t cap) {
  if (rc != PM_OK) {
    disarm(); /* the fault has fired: copying the message must not meet another */
    snprintf(msg, cap, "%s", pm_errmsg(ctx));
  }
  return rc;
}

/* ---- import --------------------------------------------------------------------------------- */

static image before_img;
static char *doc, *before_rows, *after_stable;
static size_t doc_len;

static void reset_import(void) { restore(path, &before_img); }

static int run_import(char *msg, size_t cap) {
  pm__db *db = NULL;
  int rc = pm__db_open(ctx, path, 0, pm__ops_db(), &db);
  if (rc == PM_OK) rc = pm__db_import(db, doc, doc_len, NULL);
  said(rc, msg, cap);
  pm__db_close(db);
  return rc;
}

static void check_import(int rc, const char *msg, const injector *in, int n) {
  if (in->fired && rc != PM_OK) {
    expect_clear(rc, msg, in, n);
    char *now = dump(path, 0);
    cr_assert_str_eq(now, before_rows, "%s call %d (%s): a failed import changed what was stored",
                     kind_names[in->kind], n, in->site);
    free(now);
  } else if (rc == PM_OK) {
    char *now = dump(path, 1);
    cr_assert_str_eq(now, after_stable, "%s call %d (%s): the import succeeded, but stored other rows",
                     kind_names[in->kind], n, in->site);
    free(now);
  }
  cr_assert_eq(problems_in(path), 0, "%s call %d (%s) left the database unsound",
               kind_names[in->kind], n, in->site);
}

/* The exported winners of a database of another GPU, as a document to import. */
static char *document(size_t *len) {
  char other[160];
  snprintf(other, sizeof other, "%s/other.db", dir);
  fill(other, 1, 3, SHA_A);
  pm__db *db = NULL;
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  cr_assert_eq(pm__db_open(ctx, other, PM__DB_READONLY, pm__ops_db(), &db), PM_OK);
  cr_assert_eq(pm__db_export(db, f, 1, NULL), PM_OK, "%s", pm_errmsg(ctx));
  pm__db_close(db);
  fclose(f);
  return text;
}

Test(fault, every_call_of_an_import_fails_cleanly_and_all_or_nothing) {
  doc = document(&doc_len);
  fill(path, 0, 2, SHA_A);
  before_img = take(path);
  before_rows = dump(path, 0);
  char *before_stable = dump(path, 1);
  cr_assert_eq(run_import((char[256]){0}, 256), PM_OK, "%s", pm_errmsg(ctx));
  after_stable = dump(path, 1);
  cr_assert_str_neq(after_stable, before_stable, "the import without a fault stored nothing");
  free(before_stable);
  walked p = {"import", reset_import, run_import, check_import};
  figures f = walk(&p);
  cr_assert_gt(f.calls[PM__FAULT_SQLITE], 10, "the hook is not reached by SQLite calls");
  cr_assert_gt(f.calls[PM__FAULT_MALLOC] - f.sqlite_allocs, 3, "nor by pmtune's allocations");
  cr_assert(own_only || f.sqlite_allocs > 100, "nor by SQLite's allocations");
  free(before_img.bytes), free(before_rows), free(after_stable), free(doc);
}

/* ---- db init: creating, and migrating ------------------------------------------------------- */

static void reset_create(void) { remove_db(path); }

static int run_open_rw(char *msg, size_t cap) {
  pm__db *db = NULL;
  int rc = said(pm__db_open(ctx, path, 0, pm__ops_db(), &db), msg, cap);
  pm__db_close(db);
  return rc;
}

static void check_create(int rc, const char *msg, const injector *in, int n) {
  if (rc != PM_OK) {
    expect_clear(rc, msg, in, n);
    cr_assert(rc == PM_ENOMEM || strstr(msg, path) != NULL, "%s call %d (%s): %s",
              kind_names[in->kind], n, in->site, msg);
    struct stat st; /* nothing empty left behind: no file, or a database */
    cr_assert(stat(path, &st) != 0 || st.st_size > 0, "%s call %d (%s) left an empty file",
              kind_names[in->kind], n, in->site);
    /* what a failed creation left must open, migrate and check clean without the fault */
    cr_assert_eq(run_open_rw(NULL, 0), PM_OK, "after %s call %d: %s", kind_names[in->kind], n,
                 pm_errmsg(ctx));
  }
  cr_assert_eq(problems_in(path), 0, "after %s call %d (%s)", kind_names[in->kind], n, in->site);
  char *now = dump(path, 1);
  cr_assert_str_eq(now, after_stable, "after %s call %d (%s): not the new database",
                   kind_names[in->kind], n, in->site);
  free(now);
}

Test(fault, every_call_of_creating_a_database_fails_cleanly) {
  cr_assert_eq(run_open_rw(NULL, 0), PM_OK, "%s", pm_errmsg(ctx));
  after_stable = dump(path, 1);
  walked p = {"db-init", reset_create, run_open_rw, check_create};
  figures f = walk(&p);
  cr_assert_gt(f.calls[PM__FAULT_SQLITE], 5, "the hook is not reached by SQLite calls");
  cr_assert_gt(f.calls[PM__FAULT_MALLOC] - f.sqlite_allocs, 1, "nor by pmtune's allocations");
  free(after_stable);
}

/* What a pmtune of schema 1 made: its migration alone, with rows. */
static image v1_img;

static void reset_migrate(void) { restore(path, &v1_img); }

static void check_migrate(int rc, const char *msg, const injector *in, int n) {
  if (rc != PM_OK) {
    expect_clear(rc, msg, in, n);
    /* each migration is a transaction of its own: the file is as it was, or migrated (a step
     * after the migrations failed); never between */
    char *now = dump(path, 0);
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
    int64_t version = dbtest_int(h, "PRAGMA user_version");
    sqlite3_close(h);
    cr_assert(strcmp(now, before_rows) == 0 || version == pm__db_schema_latest(),
              "%s call %d (%s): a failed migration left schema %lld, changed", kind_names[in->kind],
              n, in->site, (long long)version);
    free(now);
    cr_assert_eq(run_open_rw(NULL, 0), PM_OK, "after %s call %d: %s", kind_names[in->kind], n,
                 pm_errmsg(ctx));
  }
  cr_assert_eq(problems_in(path), 0, "after %s call %d (%s)", kind_names[in->kind], n, in->site);
  char *now = dump(path, 1);
  cr_assert_str_eq(now, after_stable, "after %s call %d (%s): rows lost or changed by migrating",
                   kind_names[in->kind], n, in->site);
  free(now);
}

Test(fault, every_call_of_migrating_a_database_fails_cleanly_and_keeps_its_rows) {
  const pm__db_migration *first = &pm__db_migrations[0];
  cr_assert_geq(pm__db_schema_latest(), 2, "nothing to migrate");
  dbtest_exec(path, first->source);
  dbtest_exec(path,
              "INSERT INTO gpu VALUES (1, 'GPU-1', 'Fake H100', 9, 0, 'sm_90', 132, 85899345920,"
              " 12040, 12080, 'x', 'x');"
              "INSERT INTO template VALUES ('" SHA_A "', 'matadd', 1, 'x');"
              "INSERT INTO measurement (gpu_id, op, dtype, rows, cols, variant, problem, config,"
              " params, template_sha256, status, median_ms, min_ms, max_ms, samples, gbps,"
              " verified, measured_at) VALUES (1, 'matadd', 'f32', 64, 64, 'order=row',"
              " 'rows=64 cols=64 order=row', 'bx=32', '{\"bx\":32}', '" SHA_A "', 'ok', 1, 1, 1,"
              " 1, 1, 1, 'x');");
  v1_img = take(path);
  before_rows = dump(path, 0);
  cr_assert_eq(run_open_rw(NULL, 0), PM_OK, "%s", pm_errmsg(ctx));
  after_stable = dump(path, 1);
  cr_assert_not_null(strstr(after_stable, "rows=64 cols=64 order=row|bx=32"), "%s", after_stable);
  walked p = {"migrate", reset_migrate, run_open_rw, check_migrate};
  figures f = walk(&p);
  cr_assert_gt(f.calls[PM__FAULT_SQLITE], 5, "the hook is not reached by SQLite calls");
  free(v1_img.bytes), free(before_rows), free(after_stable);
}

/* ---- db check ------------------------------------------------------------------------------- */

static char *report_ref;

static void reset_nothing(void) {}

static int run_check(char *msg, size_t cap) {
  pm__db *db = NULL;
  char *report = NULL;
  int problems = -1;
  int rc = pm__db_open(ctx, path, PM__DB_READONLY, pm__ops_db(), &db);
  if (rc == PM_OK) rc = pm__db_check(db, &report, &problems);
  said(rc, msg, cap);
  pm__db_close(db);
  if (rc == PM_OK) {
    /* the report of a sound file: no problem, and what is stored counted as without a fault */
    const char *counts = report_ref ? strstr(report_ref, "gpus ") : NULL;
    if (problems != 0 || (counts != NULL && strstr(report, counts) == NULL))
      snprintf(msg, cap, "%d problems; the report:\n%s", problems, report);
    if (report_ref == NULL) report_ref = report, report = NULL;
  }
  free(report);
  return rc;
}

static void check_check(int rc, const char *msg, const injector *in, int n) {
  if (rc != PM_OK) expect_clear(rc, msg, in, n);
  else
    cr_assert_eq(msg[0], '\0', "%s call %d (%s): a sound file checked wrongly: %s",
                 kind_names[in->kind], n, in->site, msg);
  char *now = dump(path, 0);
  cr_assert_str_eq(now, before_rows, "%s call %d (%s): checking changed the file",
                   kind_names[in->kind], n, in->site);
  free(now);
}

Test(fault, every_call_of_checking_a_database_fails_cleanly_or_checks_right) {
  fill(path, 0, 3, NULL);
  before_rows = dump(path, 0);
  cr_assert_eq(run_check((char[256]){0}, 256), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_not_null(report_ref);
  walked p = {"db-check", reset_nothing, run_check, check_check};
  figures f = walk(&p);
  cr_assert_gt(f.calls[PM__FAULT_SQLITE], 10, "the hook is not reached by SQLite calls");
  free(before_rows), free(report_ref);
}

/* ---- Serving's decision chain --------------------------------------------------------------- */

static const pm__problem served[] = {
    {.rows = 1024, .cols = 1024, .caller_align = 16}, /* exact */
    {.rows = 1500, .cols = 1500, .caller_align = 16}, /* nearest */
    {.rows = 1024, .cols = 1024, .caller_align = 8},  /* exact, a slower one the alignment allows */
    {.n = 1 << 20, .caller_align = 16}};              /* reduce: nothing tuned, the default */
#define NSERVED (sizeof served / sizeof *served)
static pm__decision want[NSERVED];
static int have_want;
static char wrong[1024];

static const pm__op *served_op(size_t i) { return served[i].n ? &pm__op_reduce : &pm__op_matadd; }

static int run_serve(char *msg, size_t cap) {
  pm_ctx *c = NULL;
  pm_options o = {0};
  int rc = pm__ctx_create(&c, PM_DEVICE_NONE, path);
  if (rc == PM_OK) {
    c->dev = fake_gpu(0);
    rc = pm__serve_init(c, &o);
  }
  for (size_t i = 0; rc == PM_OK && i < NSERVED; i++) {
    pm__decision d;
    rc = pm__serve_decide(c, served_op(i), &served[i], &d);
    if (rc != PM_OK || !have_want) {
      want[i] = d;
      continue;
    }
    /* the decision without the fault, or the default with the reason said (the database could
     * not be read: a call is served all the same) */
    int same = d.source == want[i].source && strcmp(d.config, want[i].config) == 0;
    if (!same && !(d.source == PM__FROM_DEFAULT && c->notice != NULL))
      snprintf(wrong, sizeof wrong, "problem %zu: %s %s, not %s %s, and nothing said", i,
               pm__source_name(d.source), d.config, pm__source_name(want[i].source),
               want[i].config);
  }
  if (rc != PM_OK) {
    disarm();
    snprintf(msg, cap, "%s", pm_errmsg(c));
  }
  if (c != NULL) pm__serve_free(c);
  pm__ctx_free(c);
  return rc;
}

static void check_serve(int rc, const char *msg, const injector *in, int n) {
  if (rc != PM_OK) expect_clear(rc, msg, in, n);
  cr_assert_eq(wrong[0], '\0', "%s call %d (%s): %s", kind_names[in->kind], n, in->site, wrong);
  char *now = dump(path, 0);
  cr_assert_str_eq(now, before_rows, "%s call %d (%s): deciding changed the file",
                   kind_names[in->kind], n, in->site);
  free(now);
}

Test(fault, every_call_of_serving_decisions_fails_cleanly_or_serves_right) {
  fill(path, 0, 6, NULL); /* 1024 x 1024 and 2048 x 1024: a bracket between them */
  before_rows = dump(path, 0);
  cr_assert_eq(run_serve((char[256]){0}, 256), PM_OK, "%s", pm_errmsg(ctx));
  have_want = 1;
  cr_assert_eq(want[0].source, PM__FROM_EXACT);
  cr_assert_eq(want[1].source, PM__FROM_NEAREST);
  cr_assert_eq(want[2].source, PM__FROM_EXACT);
  cr_assert_str_neq(want[2].config, want[0].config);
  cr_assert_eq(want[3].source, PM__FROM_DEFAULT);
  walked p = {"serve", reset_nothing, run_serve, check_serve};
  figures f = walk(&p);
  cr_assert_gt(f.calls[PM__FAULT_SQLITE], 5, "the hook is not reached by SQLite calls");
  cr_assert_gt(f.calls[PM__FAULT_MALLOC] - f.sqlite_allocs, 3, "nor by pmtune's allocations");
  free(before_rows);
}

/* ---- pmtune tune's steps without a GPU ------------------------------------------------------ */

/* What `pmtune tune` does around the GPU's work, on a fabricated GPU: open the database (read-
 * write), record the GPU and the run, read what is tuned and what was seen (--seen), make the
 * space's kernels, fetch the seed's cubin from the database or compile it (NVRTC) and store it,
 * store its measurement (a compile error where compiling failed, as the tuner does), end the
 * run. After each step that wrote, what the file holds is kept: a failing step must leave it. */
static char *committed;
static int compiled; /* the last run compiled the seed (its cubin was not in the file) */
static int compile_failed;

/* The file's rows now, with the hook paused (the dump must not meet a fault). */
static void commit_point(void) {
  pm__fault_fn h = pm__fault_hook;
  void *arg = pm__fault_arg;
  pm__fault_set(NULL, NULL);
  free(committed);
  committed = dump(path, 0);
  pm__fault_set(h, arg);
}

static int no_seen(void *arg, const pm__db_problem *p, int64_t calls) {
  (void)arg, (void)p, (void)calls;
  return 0;
}

static int run_tune(char *msg, size_t cap) {
  static const pm__problem pr = {.rows = 1024, .cols = 1024};
  const pm__op *op = &pm__op_matadd;
  const char *sha = pm__template_find(op->name)->sha256;
  pm__db *db = NULL;
  pm__db_known known = {0};
  pm__variants vs = {0};
  int64_t gpu = 0, run = 0;
  pm__device_info dev = fake_gpu(0);
  pm__limits lim = pm__limits_of(&dev);
  char dtext[PM__MAX_DEFINES * 26], params[PM__DB_PARAMS_MAX], config[PM__CONFIG_TEXT];
  pm__db_cubin_key key;
  pm__db_problem dbp;
  int rc, found = 0;
  compiled = compile_failed = 0;
  ctx->dev = dev;
  commit_point();
  if ((rc = pm__db_open(ctx, path, 0, pm__ops_db(), &db)) != PM_OK) goto out;
  commit_point();
  if ((rc = pm__db_gpu_put(db, &dev, 12040, 12040, &gpu)) != PM_OK) goto out;
  commit_point();
  if ((rc = pm__db_run_begin(db, gpu, "pmtune tune matadd 1024x1024", &run)) != PM_OK) goto out;
  commit_point();
  if ((rc = pm__op_known_load(db, &dev, op, &known)) != PM_OK ||
      (rc = pm__db_seen_list(db, gpu, NULL, 0, no_seen, NULL)) != PM_OK ||
      (rc = pm__variants_make(ctx, op, &pr, &lim, dev.arch, &vs)) != PM_OK)
    goto out;
  pm__compile_job *job = pm__variants_job(&vs, op->seed);
  pm__op_db_problem(op, &pr, &dbp);
  pm__config_text(op, op->seed, config, sizeof config);
  pm__config_json(op, op->seed, params, sizeof params);
  if ((rc = pm__cubin_key(ctx, sha, (const char(*)[24])job->defines, job->ndefines, 12040, dtext,
                          sizeof dtext, &key)) != PM_OK ||
      (rc = pm__db_measured(db, gpu, 0, &dbp, config, sha, &found)) != PM_OK)
    goto out;
  rc = pm__db_cubin_get(db, &key, &job->cubin);
  if (rc == PM_ENOTFOUND) {
    compiled = 1;
    if ((rc = pm__compile_many(ctx, job, 1, 1)) != PM_OK) goto out;
    if (job->status == PM_ENOMEM) { /* the tuner stops, storing nothing (tune.c, measure_one) */
      rc = pm__seterr(ctx, PM_ENOMEM, "%s", job->error ? job->error : "out of memory");
      goto out;
    }
    if (job->status == PM_OK && (rc = pm__db_cubin_put(db, &key, &job->cubin)) != PM_OK) goto out;
    if (job->status == PM_OK) commit_point();
  } else if (rc != PM_OK) {
    goto out;
  }
  pm__db_measurement m = dbtest_measurement(gpu, dbp, sha, params, 0.5);
  m.run_id = run;
  m.config = config;
  m.is_seed = 1;
  if (job->status != PM_OK) { /* stored as the tuner stores a candidate that did not compile */
    compile_failed = 1;
    m.outcome = PM__DB_COMPILE_ERROR;
    m.error = job->error ? job->error : pm_strerror(job->status);
    m.verified = 0;
  }
  if ((rc = pm__db_measurement_put(db, &m)) != PM_OK) goto out;
  commit_point();
  if ((rc = pm__db_run_end(db, run, PM__DB_RUN_OK, NULL)) != PM_OK) goto out;
  commit_point();
out:
  said(rc, msg, cap);
  pm__variants_free(&vs);
  pm__db_known_free(&known);
  pm__db_close(db);
  return rc;
}

static image tune_img;

static void reset_tune(void) { restore(path, &tune_img); }

static void check_tune(int rc, const char *msg, const injector *in, int n) {
  char *now = dump(path, 0);
  if (rc != PM_OK) {
    expect_clear(rc, msg, in, n);
    cr_assert_str_eq(now, committed, "%s call %d (%s): a failed step changed what was committed",
                     kind_names[in->kind], n, in->site);
  } else {
    cr_assert_str_eq(now, committed, "%s call %d (%s): the file is not what the steps committed",
                     kind_names[in->kind], n, in->site);
    char *rows = dump(path, 1);
    cr_assert_not_null(strstr(rows, compile_failed ? "compile_error" : "|ok|0.5|1"),
                       "%s call %d (%s): the seed's outcome is not stored:\n%s",
                       kind_names[in->kind], n, in->site, rows);
    free(rows);
    if (compile_failed) /* the stored reason says what failed */
      cr_assert_not_null(strstr(now, "nvrtc"), "%s call %d: %s", kind_names[in->kind], n, now);
  }
  free(now);
  cr_assert_eq(problems_in(path), 0, "%s call %d (%s) left the database unsound",
               kind_names[in->kind], n, in->site);
}

/* The file before a tuning run: rows of an earlier run, and (cubin) the seed's kernel stored. */
static void tune_setup(int cubin) {
  fill(path, 0, 2, NULL);
  tune_img = take(path);
  cr_assert_eq(run_tune((char[256]){0}, 256), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert(compiled, "the seed's kernel was stored already");
  if (cubin) { /* the file as the first run left it, less its seed measurement and run */
    dbtest_exec(path, "DELETE FROM measurement WHERE run_id IS NOT NULL; DELETE FROM run;");
    pm__db *db = NULL;
    cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_OK); /* a clean close */
    pm__db_close(db);
    free(tune_img.bytes);
    tune_img = take(path);
  }
}

Test(fault, every_call_of_tunings_steps_with_a_stored_kernel_fails_cleanly) {
  tune_setup(1);
  walked p = {"tune", reset_tune, run_tune, check_tune};
  figures f = walk(&p);
  cr_assert(!compiled, "the kernel was compiled again");
  cr_assert_gt(f.calls[PM__FAULT_SQLITE], 20, "the hook is not reached by SQLite calls");
  cr_assert_gt(f.calls[PM__FAULT_MALLOC] - f.sqlite_allocs, 3, "nor by pmtune's allocations");
  free(tune_img.bytes), free(committed);
}

/* The same where the kernel is compiled (NVRTC) and stored: a compile takes a fifth of a second,
 * so SQLite's own allocations (walked above on the same statements) are left out here. */
Test(fault, every_call_of_tunings_steps_compiling_a_kernel_fails_cleanly) {
  tune_setup(0);
  own_only = 1;
  walked p = {"tune-nvrtc", reset_tune, run_tune, check_tune};
  figures f = walk(&p);
  cr_assert(compiled);
  cr_assert_geq(f.calls[PM__FAULT_NVRTC], 4, "the hook is not reached by NVRTC calls");
  free(tune_img.bytes), free(committed);
}

/* ---- Compiling and devices ------------------------------------------------------------------ */

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

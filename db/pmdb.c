/* pmdb.c: the tuning database: finding and opening the file, migrations, and what the tuner and
 * library calls store and look up (GPUs, runs, measurements, winners, cubins), in SQLite. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- Errors --------------------------------------------------------------------------------- */

const char *pm__dbi_code_name(int rc) {
  static const struct {
    int code;
    const char *name;
  } names[] = {{SQLITE_ERROR, "SQLITE_ERROR"},       {SQLITE_PERM, "SQLITE_PERM"},
               {SQLITE_ABORT, "SQLITE_ABORT"},       {SQLITE_BUSY, "SQLITE_BUSY"},
               {SQLITE_LOCKED, "SQLITE_LOCKED"},     {SQLITE_NOMEM, "SQLITE_NOMEM"},
               {SQLITE_READONLY, "SQLITE_READONLY"}, {SQLITE_INTERRUPT, "SQLITE_INTERRUPT"},
               {SQLITE_IOERR, "SQLITE_IOERR"},       {SQLITE_CORRUPT, "SQLITE_CORRUPT"},
               {SQLITE_FULL, "SQLITE_FULL"},         {SQLITE_CANTOPEN, "SQLITE_CANTOPEN"},
               {SQLITE_PROTOCOL, "SQLITE_PROTOCOL"}, {SQLITE_SCHEMA, "SQLITE_SCHEMA"},
               {SQLITE_TOOBIG, "SQLITE_TOOBIG"},     {SQLITE_CONSTRAINT, "SQLITE_CONSTRAINT"},
               {SQLITE_MISMATCH, "SQLITE_MISMATCH"}, {SQLITE_MISUSE, "SQLITE_MISUSE"},
               {SQLITE_RANGE, "SQLITE_RANGE"},       {SQLITE_NOTADB, "SQLITE_NOTADB"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].code == (rc & 0xff)) return names[i].name;
  return "SQLITE_?";
}

int pm__db_sqlite_error(pm__db *db, int rc, const char *call, const char *file, int line) {
  const char *base = strrchr(file, '/');
  /* the connection's message where it is about this failure (not one the fault hook made up) */
  const char *msg = db->sql != NULL && (sqlite3_errcode(db->sql) & 0xff) == (rc & 0xff)
                        ? sqlite3_errmsg(db->sql)
                        : sqlite3_errstr(rc);
  int n = (int)strlen(call ? call : "");
  return pm__seterr(db->c, PM_EDB, "tuning database %s: %s (%s) [%s:%d: %.*s%s]", db->path, msg,
                    pm__dbi_code_name(rc), base ? base + 1 : file, line, n > 60 ? 60 : n,
                    call ? call : "", n > 60 ? "..." : "");
}

pm_ctx *pm__db_ctx(pm__db *db) { return db->c; }
const char *pm__db_filename(const pm__db *db) { return db->path; }
sqlite3 *pm__db_handle(pm__db *db) { return db->sql; }

void pm__db_schema(const pm__db *db, int *was, int *now) {
  if (was) *was = db->version_was;
  if (now) *now = pm__db_schema_latest();
}

/* ---- Waiting for another process's lock ----------------------------------------------------- */

/* The busy handler of every connection: tries again every 1 to 2 ms (the part in it that differs
 * between processes keeps waiters out of step), and gives up only when no other process has
 * written to the file for BUSY_TIMEOUT_MS (a writer that holds its lock and does nothing), or
 * after BUSY_LIMIT_MS in all. SQLite's own busy timeout sleeps longer and longer between tries, up
 * to 100 ms each, and under many writers one that waits so finds the lock taken again at each try,
 * for the whole timeout, and fails with "database is locked": 16 `pmtune import` processes and 16
 * readers on 2 cores (test_db_load) saw 6 or 7 of the 16 importers fail so. A fixed 10 s of quick
 * tries still lost the race now and then under AddressSanitizer, where each import is slower:
 * one importer of 16 saw every commit of the others go first for 10 s. Progress is what the
 * others' commits leave on disk: the size or time of PATH-wal or PATH changes. */
static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long long file_signature(const char *path) {
  char wal[PM__DB_PATH_MAX + 8];
  struct stat a = {0}, b = {0};
  snprintf(wal, sizeof wal, "%s-wal", path);
  (void)stat(path, &a);
  (void)stat(wal, &b);
  return (long long)a.st_size * 31 + a.st_mtim.tv_sec * 1000003LL + a.st_mtim.tv_nsec +
         ((long long)b.st_size * 37 + b.st_mtim.tv_sec * 999983LL + b.st_mtim.tv_nsec) * 7;
}

static int busy_wait(void *arg, int tries) {
  waiter *w = arg;
  if (w->at_once) return !(w->gave_up = 1);
  long long now = now_ms(), sig = file_signature(w->path);
  if (tries == 0) {
    w->start_ms = w->moved_ms = now;
    w->signature = sig;
  } else if (sig != w->signature) {
    w->moved_ms = now;
    w->signature = sig;
  }
  if (now - w->moved_ms >= BUSY_TIMEOUT_MS || now - w->start_ms >= BUSY_LIMIT_MS)
    return !(w->gave_up = 1);
  unsigned jitter = ((unsigned)tries * 2654435761u ^ (unsigned)getpid() * 40503u) % 1000u;
  struct timespec ts = {0, (long)(1000 + jitter) * 1000};
  nanosleep(&ts, NULL);
  return 1;
}

void pm__dbi_set_busy_wait(sqlite3 *h, waiter *w, const char *path) {
  *w = (waiter){.path = path};
  sqlite3_busy_handler(h, busy_wait, w);
}

void pm__db_set_wait(pm__db *db, int wait) {
  db->wait.at_once = !wait;
  db->wait.gave_up = 0;
}

int pm__db_locked_out(const pm__db *db) { return db->wait.gave_up; }

/* ---- Small statements ----------------------------------------------------------------------- */

/* Runs a statement without parameters whose first column is an integer. */
int pm__dbi_query_int(pm__db *db, const char *sql, int64_t *v) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  *v = 0;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL));
  int r = sqlite3_step(st);
  PM__SQLITE_ST(db, st, r);
  if (r == SQLITE_ROW) *v = sqlite3_column_int64(st, 0);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_begin(pm__db *db) {
  int rc = PM_OK;
  db->txn++;
  PM__SQLITE(db, sqlite3_exec(db->sql, "BEGIN IMMEDIATE", NULL, NULL, NULL));
fail:
  return rc;
}

int pm__db_commit(pm__db *db) {
  int rc = PM_OK;
  PM__SQLITE(db, sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL));
  return PM_OK;
fail:
  pm__db_rollback(db);
  return rc;
}

void pm__db_rollback(pm__db *db) {
  if (db != NULL && db->sql != NULL && !sqlite3_get_autocommit(db->sql))
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- GPUs and runs -------------------------------------------------------------------------- */

static int printable(const char *s, size_t max) {
  size_t n = 0;
  for (; s[n] != '\0'; n++)
    if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f || n >= max) return 0;
  return n > 0;
}

int pm__db_gpu_write(pm__db *db, const pm__device_info *d, int driver_version, int runtime_version,
                     int keep_known, int64_t *id, int *added) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  if (d == NULL || !printable(d->uuid, sizeof d->uuid - 1) ||
      !printable(d->name, sizeof d->name - 1) || d->cc_major < 1 || d->cc_major > 99 ||
      d->cc_minor < 0 || d->cc_minor > 9 || strncmp(d->arch, "sm_", 3) != 0 ||
      !printable(d->arch, sizeof d->arch - 1) || d->sm_count < 1 || d->mem_bytes < 1 ||
      driver_version < 0 || runtime_version < 0)
    return pm__seterr(db->c, PM_EINVAL,
                      "GPU: needs a uuid, a name, a compute capability, an sm_XY arch, SMs and "
                      "memory (got uuid '%s', name '%s', cc %d.%d, arch '%s', %d SMs, %zu bytes)",
                      d ? d->uuid : "", d ? d->name : "", d ? d->cc_major : 0, d ? d->cc_minor : 0,
                      d ? d->arch : "", d ? d->sm_count : 0, d ? d->mem_bytes : 0);
  *id = 0;
  if (added) *added = 0;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT id, name, cc_major, cc_minor, sm_count FROM gpu"
                                    " WHERE uuid = ?1",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, d->uuid, -1, SQLITE_STATIC));
  int r = sqlite3_step(st);
  PM__SQLITE_ST(db, st, r);
  if (r == SQLITE_ROW) {
    /* The same uuid as another model: its rows were measured on that model (or forged), and
     * taking them as this GPU's would serve them here. Refused, the file left as it is. */
    const char *name = (const char *)sqlite3_column_text(st, 1);
    int major = sqlite3_column_int(st, 2), minor = sqlite3_column_int(st, 3);
    int sms = sqlite3_column_int(st, 4);
    if (name == NULL || strcmp(name, d->name) != 0 || major != d->cc_major ||
        minor != d->cc_minor || sms != d->sm_count) {
      rc = pm__seterr(db->c, keep_known ? PM_EINVAL : PM_EDB,
                      "GPU %s is a %s (cc %d.%d, %d SMs) in %s, not a %s (cc %d.%d, %d SMs): one "
                      "model's measurements are never another's%s",
                      d->uuid, name ? name : "?", major, minor, sms, db->path, d->name,
                      d->cc_major, d->cc_minor, d->sm_count,
                      keep_known ? "" : "; remove that GPU's rows, or use another database");
      goto fail;
    }
    *id = sqlite3_column_int64(st, 0);
  }
  pm__db_finalize(&st);
  if (*id != 0 && keep_known) return PM_OK;
  PM__SQLITE(db, sqlite3_prepare_v2(
                     db->sql,
                     "INSERT INTO gpu (uuid, name, cc_major, cc_minor, arch, sm_count, mem_bytes,"
                     " driver_version, runtime_version, first_seen, last_seen)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, " NOW ", " NOW ")"
                     " ON CONFLICT (uuid) DO UPDATE SET name = excluded.name,"
                     " cc_major = excluded.cc_major, cc_minor = excluded.cc_minor,"
                     " arch = excluded.arch, sm_count = excluded.sm_count,"
                     " mem_bytes = excluded.mem_bytes, driver_version = excluded.driver_version,"
                     " runtime_version = excluded.runtime_version, last_seen = excluded.last_seen"
                     " RETURNING id",
                     -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, d->uuid, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, d->name, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 3, d->cc_major));
  PM__SQLITE(db, sqlite3_bind_int(st, 4, d->cc_minor));
  PM__SQLITE(db, sqlite3_bind_text(st, 5, d->arch, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 6, d->sm_count));
  PM__SQLITE(db, sqlite3_bind_int64(st, 7, (sqlite3_int64)d->mem_bytes));
  PM__SQLITE(db, sqlite3_bind_int(st, 8, driver_version));
  PM__SQLITE(db, sqlite3_bind_int(st, 9, runtime_version));
  PM__SQLITE_ST(db, st, r = sqlite3_step(st));
  if (r == SQLITE_ROW) {
    if (added) *added = *id == 0;
    *id = sqlite3_column_int64(st, 0);
  }
  PM__SQLITE_ST(db, st, sqlite3_step(st));
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_gpu_put(pm__db *db, const pm__device_info *d, int driver_version, int runtime_version,
                   int64_t *id) {
  int rc;
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  if ((rc = pm__db_gpu_write(db, d, driver_version, runtime_version, 0, id, NULL)) != PM_OK) {
    pm__db_rollback(db);
    return rc;
  }
  return pm__db_commit(db);
}

int pm__db_gpu_adopt_memory(pm__db *db, const pm__device_info *d) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "UPDATE gpu SET mem_bytes = ?1 WHERE name = ?2 AND cc_major = ?3"
                                    " AND cc_minor = ?4 AND sm_count = ?5",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, (sqlite3_int64)d->mem_bytes));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, d->name, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 3, d->cc_major));
  PM__SQLITE(db, sqlite3_bind_int(st, 4, d->cc_minor));
  PM__SQLITE(db, sqlite3_bind_int(st, 5, d->sm_count));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_gpu_adopt_sibling(pm__db *db, const pm__device_info *d, const char *model,
                             char *groups, size_t cap) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  size_t len = 0;
  if (cap > 0) groups[0] = '\0';
  /* what the sibling brings: its (op, dtype) that no document of d's own model has (the own
   * model's pairs are a subquery that does not name the outer row, so SQLite lists them once,
   * not once a measurement: correlated, it took 80 s over the H100's 42,586) */
  static const char *const steps[] = {
      "SELECT DISTINCT m.op || '/' || m.dtype FROM measurement m JOIN gpu g ON g.id = m.gpu_id"
      " WHERE g.name = ?1 AND (m.op, m.dtype) NOT IN (SELECT o.op, o.dtype FROM measurement o"
      " JOIN gpu h ON h.id = o.gpu_id WHERE h.name = ?2) ORDER BY 1",
      "DELETE FROM measurement WHERE gpu_id IN (SELECT id FROM gpu WHERE name = ?1) AND"
      " (op, dtype) IN (SELECT o.op, o.dtype FROM measurement o JOIN gpu h ON h.id = o.gpu_id"
      " WHERE h.name = ?2)",
      "UPDATE gpu SET name = ?2, sm_count = ?3, mem_bytes = ?4 WHERE name = ?1"
      " AND cc_major = ?5 AND cc_minor = ?6"};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    PM__SQLITE(db, sqlite3_prepare_v2(db->sql, steps[i], -1, &st, NULL));
    PM__SQLITE(db, sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC));
    PM__SQLITE(db, sqlite3_bind_text(st, 2, d->name, -1, SQLITE_STATIC));
    if (sqlite3_bind_parameter_count(st) >= 6) {
      PM__SQLITE(db, sqlite3_bind_int(st, 3, d->sm_count));
      PM__SQLITE(db, sqlite3_bind_int64(st, 4, (sqlite3_int64)d->mem_bytes));
      PM__SQLITE(db, sqlite3_bind_int(st, 5, d->cc_major));
      PM__SQLITE(db, sqlite3_bind_int(st, 6, d->cc_minor));
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
      const char *g;
      PM__SQLITE_TEXT(db, st, 0, g);
      if (g != NULL && len < cap) len += (size_t)snprintf(groups + len, cap - len, "%s%s", len ? " " : "", g);
    }
    PM__SQLITE_ST(db, st, r);
    pm__db_finalize(&st);
  }
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_run_begin(pm__db *db, int64_t gpu_id, const char *command_line, int64_t *id) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL, *mark = NULL;
  struct utsname u;
  const char *host = uname(&u) == 0 ? u.nodename : "?";
  *id = 0;
  if (command_line == NULL) command_line = "";
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  /* Runs of this host whose process is gone were killed (or crashed) before they ended. */
  PM__SQLITE(db, sqlite3_prepare_v2(
                     db->sql, "SELECT id, pid FROM run WHERE status = 'running' AND host = ?1", -1,
                     &st, NULL));
  PM__SQLITE(db,
             sqlite3_prepare_v2(
                 db->sql,
                 "UPDATE run SET status = 'interrupted', message = 'its process ('"
                 " || pid || ') ended without ending the run: killed, or crashed' WHERE id = ?1",
                 -1, &mark, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC));
  int r;
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    pid_t pid = (pid_t)sqlite3_column_int64(st, 1);
    if (pid == getpid() || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;
    sqlite3_reset(mark);
    PM__SQLITE(db, sqlite3_bind_int64(mark, 1, sqlite3_column_int64(st, 0)));
    PM__SQLITE_ST(db, mark, sqlite3_step(mark));
  }
  PM__SQLITE_ST(db, st, r);
  pm__db_finalize(&st);
  PM__SQLITE(db, sqlite3_prepare_v2(
                     db->sql,
                     "INSERT INTO run (started_at, pmtune_version, nvrtc_version, command_line,"
                     " host, pid, gpu_id) VALUES (" NOW ", ?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                     -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, pm_version(), -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, pm__nvrtc_version(), -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 3, command_line, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 4, host, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int64(st, 5, (sqlite3_int64)getpid()));
  if (gpu_id > 0) PM__SQLITE(db, sqlite3_bind_int64(st, 6, gpu_id));
  PM__SQLITE_ST(db, st, r = sqlite3_step(st));
  if (r == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  pm__db_finalize(&st);
  pm__db_finalize(&mark);
  return pm__db_commit(db);
fail:
  pm__db_finalize(&st);
  pm__db_finalize(&mark);
  pm__db_rollback(db);
  return rc;
}

int pm__db_run_end(pm__db *db, int64_t id, pm__db_run_status status, const char *message) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  if (status != PM__DB_RUN_OK && status != PM__DB_RUN_FAILED)
    return pm__seterr(db->c, PM_EINVAL, "run %lld: no such end status %d", (long long)id,
                      (int)status);
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "UPDATE run SET status = ?2, message = ?3, ended_at = " NOW
                                    " WHERE id = ?1",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, id));
  PM__SQLITE(
      db, sqlite3_bind_text(st, 2, status == PM__DB_RUN_OK ? "ok" : "failed", -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 3, message, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  if (sqlite3_changes(db->sql) != 1) {
    rc =
        pm__seterr(db->c, PM_ENOTFOUND, "tuning database %s: no run %lld", db->path, (long long)id);
    goto fail;
  }
  pm__db_finalize(&st);
  return pm__db_commit(db);
fail:
  pm__db_finalize(&st);
  pm__db_rollback(db);
  return rc;
}

/* ---- Problems ------------------------------------------------------------------------------- */

#define DIM_MAX ((int64_t)1 << 31)        /* rows, cols: less than this */
#define SIZE_MAX_ELEMS ((int64_t)1 << 40) /* rows * cols, n: at most this */

int pm__dbi_valid_sha(const char *s) {
  size_t n = 0;
  if (s == NULL) return 0;
  for (; s[n] != '\0'; n++)
    if (!isdigit((unsigned char)s[n]) && !(s[n] >= 'a' && s[n] <= 'f')) return 0;
  return n == 64;
}

void pm__db_ops_json(const pm__db *db, char *out, size_t cap) {
  size_t len = (size_t)snprintf(out, cap, "[");
  for (size_t i = 0; db->ops != NULL && db->ops[i] != NULL && len < cap; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s\"%s\"", i ? "," : "", db->ops[i]->name);
  if (len < cap) snprintf(out + len, cap - len, "]");
}

const pm__db_op *pm__db_op_named(const pm__db *db, const char *name) {
  for (size_t i = 0; name != NULL && db->ops != NULL && db->ops[i] != NULL; i++)
    if (strcmp(db->ops[i]->name, name) == 0) return db->ops[i];
  return NULL;
}

/* Whether p is the problem last checked and written by pm__db_problem_text (db->last_*). */
static int last_problem(const pm__db *db, const pm__db_problem *p) {
  return db->last_text[0] != '\0' && p->op != NULL && p->dtype != NULL &&
         p->rows == db->last.rows && p->cols == db->last.cols && p->n == db->last.n &&
         p->radius == db->last.radius && strcmp(p->op, db->last_op) == 0 &&
         strcmp(p->dtype, db->last_dtype) == 0 &&
         strcmp(p->variant ? p->variant : "", db->last_variant) == 0;
}

static int problem_text(pm__db *db, const pm__db_problem *p, char out[PM__DB_PROBLEM_MAX]);

int pm__db_problem_text(pm__db *db, const pm__db_problem *p, char out[PM__DB_PROBLEM_MAX]) {
  /* The rows of an import come problem by problem: the last answer, where p is the same. */
  if (p != NULL && last_problem(db, p)) {
    memcpy(out, db->last_text, sizeof db->last_text);
    return PM_OK;
  }
  int rc = problem_text(db, p, out);
  if (rc == PM_OK && strlen(p->op) < sizeof db->last_op &&
      strlen(p->dtype) < sizeof db->last_dtype &&
      strlen(p->variant ? p->variant : "") < sizeof db->last_variant) {
    db->last = *p;
    snprintf(db->last_op, sizeof db->last_op, "%s", p->op);
    snprintf(db->last_dtype, sizeof db->last_dtype, "%s", p->dtype);
    snprintf(db->last_variant, sizeof db->last_variant, "%s", p->variant ? p->variant : "");
    memcpy(db->last_text, out, sizeof db->last_text);
  }
  return rc;
}

static int problem_text(pm__db *db, const pm__db_problem *p, char out[PM__DB_PROBLEM_MAX]) {
  pm_ctx *c = db->c;
  const pm__db_op *spec = NULL;
  char names[128] = "";
  out[0] = '\0';
  if (p == NULL || p->op == NULL) return pm__seterr(c, PM_EINVAL, "problem: no op given");
  for (size_t i = 0; spec == NULL && db->ops != NULL && db->ops[i] != NULL; i++)
    if (strcmp(db->ops[i]->name, p->op) == 0) spec = db->ops[i];
  if (spec == NULL) { /* the names for the message (not on every call: an import's each row) */
    for (size_t i = 0, len = 0; db->ops != NULL && db->ops[i] != NULL && len < sizeof names; i++)
      len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                              db->ops[i]->name);
    return pm__seterr(c, PM_EINVAL, "problem: unknown op '%.40s' (%s)", p->op, names);
  }
  int dtype = pm__dtype_find(p->dtype);
  unsigned dtypes = spec->dtypes ? spec->dtypes : 1u << PM_F32;
  if (dtype < 0 || !(dtypes & 1u << dtype)) {
    char list[64];
    pm__dtype_list(dtypes, list, sizeof list);
    return pm__seterr(c, PM_EINVAL, "problem: %s: %s dtype '%.40s' (%s)", p->op,
                      dtype < 0 ? "unknown" : "no", p->dtype ? p->dtype : "(none)", list);
  }
  const char *variant = p->variant ? p->variant : "";
  int variant_ok = 0;
  for (const char *const *v = spec->variants; *v != NULL; v++)
    variant_ok |= strcmp(*v, variant) == 0;
  if (!variant_ok)
    return pm__seterr(c, PM_EINVAL, "problem: %s: variant '%.40s' is not one of: %s%s%s", p->op,
                      variant, spec->variants[0][0] ? spec->variants[0] : "(none)",
                      spec->variants[1] ? ", " : "", spec->variants[1] ? spec->variants[1] : "");
  if (spec->matrix == 2) { /* a batch of matrices: n is the batch */
    if (p->rows < 1 || p->rows >= DIM_MAX || p->cols < 1 || p->cols >= DIM_MAX || p->n < 1 ||
        p->n >= DIM_MAX || p->rows > SIZE_MAX_ELEMS / p->cols ||
        p->n > SIZE_MAX_ELEMS / (p->rows * p->cols))
      return pm__seterr(c, PM_EINVAL,
                        "problem: %s needs 0 < n (the batch), rows, cols < 2^31 and "
                        "n*rows*cols <= 2^40 (got rows=%lld cols=%lld n=%lld)",
                        p->op, (long long)p->rows, (long long)p->cols, (long long)p->n);
  } else if (spec->matrix) {
    if (p->rows < 1 || p->rows >= DIM_MAX || p->cols < 1 || p->cols >= DIM_MAX ||
        p->rows > SIZE_MAX_ELEMS / p->cols || p->n != 0)
      return pm__seterr(c, PM_EINVAL,
                        "problem: %s needs 0 < rows, cols < 2^31, rows*cols <= 2^40 and no n "
                        "(got rows=%lld cols=%lld n=%lld)",
                        p->op, (long long)p->rows, (long long)p->cols, (long long)p->n);
  } else if (p->n < 1 || p->n > SIZE_MAX_ELEMS || p->rows != 0 || p->cols != 0) {
    return pm__seterr(c, PM_EINVAL,
                      "problem: %s needs 0 < n <= 2^40 and no rows or cols (got n=%lld rows=%lld "
                      "cols=%lld)",
                      p->op, (long long)p->n, (long long)p->rows, (long long)p->cols);
  }
  if (spec->radius_max > 0 && (p->radius < spec->radius_min || p->radius > spec->radius_max))
    return pm__seterr(c, PM_EINVAL, "problem: %s: %s %d is not %d to %d", p->op,
                      spec->radius_name ? spec->radius_name : "radius", p->radius,
                      spec->radius_min, spec->radius_max);
  if (spec->radius_max == 0 && p->radius != 0)
    return pm__seterr(c, PM_EINVAL, "problem: %s: radius %d does not apply", p->op, p->radius);
  int len;
  if (!spec->matrix)
    len = snprintf(out, PM__DB_PROBLEM_MAX, "n=%lld", (long long)p->n);
  else if (spec->matrix == 2)
    len = snprintf(out, PM__DB_PROBLEM_MAX, "batch=%lld rows=%lld cols=%lld", (long long)p->n,
                   (long long)p->rows, (long long)p->cols);
  else
    len = snprintf(out, PM__DB_PROBLEM_MAX, "rows=%lld cols=%lld", (long long)p->rows,
                   (long long)p->cols);
  /* then the radius (a kernel of one's own's tuned scalar, by its name), then the variant (a
   * kernel of one's own has none: no space at the end) */
  if (spec->radius_max > 0 && len > 0 && len < PM__DB_PROBLEM_MAX)
    len += snprintf(out + len, PM__DB_PROBLEM_MAX - (size_t)len, " %s=%d",
                    spec->radius_name ? spec->radius_name : "radius", p->radius);
  if (variant[0] && len > 0 && len < PM__DB_PROBLEM_MAX)
    snprintf(out + len, PM__DB_PROBLEM_MAX - (size_t)len, " %s", variant);
  return PM_OK;
}

int pm__db_bind_problem(sqlite3_stmt *st, int first, const pm__db_problem *p, const char *text) {
  int r = SQLITE_OK;
  const int64_t v[4] = {p->rows, p->cols, p->n, p->radius};
  r |= sqlite3_bind_text(st, first, p->op, -1, SQLITE_STATIC);
  r |= sqlite3_bind_text(st, first + 1, p->dtype, -1, SQLITE_STATIC);
  for (int i = 0; i < 4; i++)
    r |= v[i] != 0 ? sqlite3_bind_int64(st, first + 2 + i, v[i])
                   : sqlite3_bind_null(st, first + 2 + i);
  r |= sqlite3_bind_text(st, first + 6, p->variant ? p->variant : "", -1, SQLITE_STATIC);
  r |= sqlite3_bind_text(st, first + 7, text, -1, SQLITE_TRANSIENT);
  return r;
}

/* ---- Configurations ------------------------------------------------------------------------- */

/* Checks a configuration's JSON (an object of 1..64 integers with identifier names), writes it
 * minified to json_out and its text ("bx=32 by=8") to text_out. */
static int config_from_params_sql(pm__db *db, const char *params,
                                  char json_out[PM__DB_PARAMS_MAX],
                                  char text_out[PM__DB_CONFIG_MAX]);

/* FNV-1a of s: the slot of a params text in the memo. */
static unsigned memo_slot(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s != '\0'; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h % MEMO_SLOTS;
}

/* The params JSON of a configuration (an object of integers) minified into json_out, and its
 * text ("bx=32 by=8") into text_out; PM_EINVAL saying what is wrong. The answers for texts
 * read lately are remembered (an import's rows share a few hundred configurations). */
int pm__dbi_config_from_params(pm__db *db, const char *params, char json_out[PM__DB_PARAMS_MAX],
                              char text_out[PM__DB_CONFIG_MAX]) {
  if (params == NULL || strlen(params) >= MEMO_TEXT)
    return config_from_params_sql(db, params, json_out, text_out);
  if (db->memo == NULL) db->memo = pm__calloc(MEMO_SLOTS, sizeof *db->memo);
  params_memo *m = db->memo ? &db->memo[memo_slot(params)] : NULL;
  if (m != NULL && m->params[0] != '\0' && strcmp(m->params, params) == 0) {
    memcpy(json_out, m->json, strlen(m->json) + 1); /* each shorter than MEMO_TEXT */
    memcpy(text_out, m->text, strlen(m->text) + 1);
    return PM_OK;
  }
  int rc = config_from_params_sql(db, params, json_out, text_out);
  if (rc == PM_OK && m != NULL && strlen(json_out) < MEMO_TEXT && strlen(text_out) < MEMO_TEXT) {
    snprintf(m->params, sizeof m->params, "%s", params);
    snprintf(m->json, sizeof m->json, "%s", json_out);
    snprintf(m->text, sizeof m->text, "%s", text_out);
  }
  return rc;
}

static int config_from_params_sql(pm__db *db, const char *params,
                                  char json_out[PM__DB_PARAMS_MAX],
                                  char text_out[PM__DB_CONFIG_MAX]) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  char keys[64][33];
  int nkeys = 0;
  size_t len = 0;
  text_out[0] = json_out[0] = '\0';
  if (params == NULL) return pm__seterr(db->c, PM_EINVAL, "configuration: no params JSON given");
  if (strlen(params) >= 4 * PM__DB_PARAMS_MAX)
    return pm__seterr(db->c, PM_EINVAL, "configuration: params JSON too long");
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_PARAMS,
                             "SELECT CASE WHEN json_valid(?1) THEN json_type(?1) END,"
                             " CASE WHEN json_valid(?1) THEN json(?1) END",
                             &st));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, params, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  const char *type, *min;
  PM__SQLITE_TEXT(db, st, 0, type);
  PM__SQLITE_TEXT(db, st, 1, min);
  if (type == NULL || strcmp(type, "object") != 0 || min == NULL) {
    rc = pm__seterr(db->c, PM_EINVAL, "configuration %.80s: not a JSON object", params);
    goto fail;
  }
  if (strlen(min) >= PM__DB_PARAMS_MAX) {
    rc = pm__seterr(db->c, PM_EINVAL, "configuration %.80s...: JSON longer than %d bytes", params,
                    PM__DB_PARAMS_MAX - 1);
    goto fail;
  }
  snprintf(json_out, PM__DB_PARAMS_MAX, "%s", min);
  pm__db_let_go(&st);
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_PARAMS_EACH,
                             "SELECT key, type, atom FROM json_each(?1)", &st));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, json_out, -1, SQLITE_STATIC));
  int r;
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    const char *key, *t;
    PM__SQLITE_TEXT(db, st, 0, key);
    PM__SQLITE_TEXT(db, st, 1, t);
    size_t klen = key ? strlen(key) : 0;
    int ident = klen > 0 && klen <= 32 && (isalpha((unsigned char)key[0]) || key[0] == '_') &&
                (size_t)sqlite3_column_bytes(st, 0) == klen;
    for (size_t i = 1; ident && i < klen; i++)
      ident = isalnum((unsigned char)key[i]) || key[i] == '_';
    if (!ident) {
      rc = pm__seterr(db->c, PM_EINVAL,
                      "configuration %.80s: parameter name '%.40s' is not an identifier", json_out,
                      key ? key : "");
      goto fail;
    }
    if (strcmp(t, "integer") != 0 || sqlite3_column_type(st, 2) != SQLITE_INTEGER) {
      rc = pm__seterr(db->c, PM_EINVAL, "configuration %.80s: %s is not an integer of 64 bits",
                      json_out, key);
      goto fail;
    }
    for (int i = 0; i < nkeys; i++)
      if (strcmp(keys[i], key) == 0) {
        rc = pm__seterr(db->c, PM_EINVAL, "configuration %.80s: %s is given twice", json_out, key);
        goto fail;
      }
    if (nkeys == 64) {
      rc = pm__seterr(db->c, PM_EINVAL, "configuration %.80s: more than 64 parameters", json_out);
      goto fail;
    }
    snprintf(keys[nkeys++], sizeof keys[0], "%s", key);
    int n = snprintf(text_out + len, PM__DB_CONFIG_MAX - len, "%s%s=%lld", len ? " " : "", key,
                     (long long)sqlite3_column_int64(st, 2));
    if (n < 0 || len + (size_t)n >= PM__DB_CONFIG_MAX) {
      rc = pm__seterr(db->c, PM_EINVAL, "configuration %.80s: text longer than %d bytes", json_out,
                      PM__DB_CONFIG_MAX - 1);
      goto fail;
    }
    len += (size_t)n;
  }
  PM__SQLITE_ST(db, st, r);
  if (nkeys == 0) rc = pm__seterr(db->c, PM_EINVAL, "configuration {}: no parameters");
fail:
  pm__db_let_go(&st);
  return rc;
}

/* ---- Templates ------------------------------------------------------------------------------ */

int pm__db_template_current(pm__db *db, const char *op, const char *sha256) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  if (op == NULL || op[0] == '\0' || !pm__dbi_valid_sha(sha256))
    return pm__seterr(db->c, PM_EINVAL, "template: needs an op and 64 lowercase hex digits");
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "UPDATE template SET current = 0 WHERE op = ?1 AND current = 1"
                                    " AND sha256 <> ?2",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, sha256, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  pm__db_finalize(&st);
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "INSERT INTO template (sha256, op, current, first_seen)"
                                    " VALUES (?1, ?2, 1, " NOW ")"
                                    " ON CONFLICT (sha256) DO UPDATE SET current = 1",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  pm__db_finalize(&st);
  return pm__db_commit(db);
fail:
  pm__db_finalize(&st);
  pm__db_rollback(db);
  return rc;
}

/* ---- Cubins --------------------------------------------------------------------------------- */

/* Orders "NAME=VALUE" defines by NAME, then by the whole text. */
static int define_cmp(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
  int c = strncmp(x, y, nx < ny ? nx : ny);
  if (c != 0) return c;
  if (nx != ny) return nx < ny ? -1 : 1;
  return strcmp(x, y);
}

int pm__db_defines_text(pm_ctx *c, const char *const *defines, size_t n, char *out, size_t cap) {
  if (out == NULL || cap == 0) return pm__seterr(c, PM_EINVAL, "defines: no room for the text");
  out[0] = '\0';
  if (n == 0) return PM_OK;
  const char **sorted = pm__malloc(n * sizeof *sorted);
  if (sorted == NULL) return pm__seterr(c, PM_ENOMEM, "defines: out of memory");
  for (size_t i = 0; i < n; i++) {
    if (defines[i] == NULL || defines[i][0] == '\0' || defines[i][0] == '=' ||
        strpbrk(defines[i], " \t\n") != NULL) {
      free(sorted);
      return pm__seterr(c, PM_EINVAL, "defines: '%s' is not NAME or NAME=VALUE",
                        defines[i] ? defines[i] : "(null)");
    }
    sorted[i] = defines[i];
  }
  qsort(sorted, n, sizeof *sorted, define_cmp);
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    int w = snprintf(out + len, cap - len, "%s-D%s", i ? " " : "", sorted[i]);
    if (w < 0 || len + (size_t)w >= cap) {
      free(sorted);
      out[0] = '\0';
      return pm__seterr(c, PM_EINVAL, "defines: the text does not fit in %zu bytes", cap);
    }
    len += (size_t)w;
  }
  free(sorted);
  return PM_OK;
}

static int check_cubin_key(pm__db *db, const pm__db_cubin_key *k) {
  if (k == NULL || !pm__dbi_valid_sha(k->template_sha256) || k->defines == NULL || k->arch == NULL ||
      strncmp(k->arch, "sm_", 3) != 0 || k->nvrtc_version == NULL || k->nvrtc_version[0] == '\0' ||
      k->driver_version < 0)
    return pm__seterr(db->c, PM_EINVAL,
                      "cubin: the key needs a template hash, defines, an sm_XY arch, an NVRTC "
                      "version and a driver version >= 0");
  return PM_OK;
}

static int bind_cubin_key(sqlite3_stmt *st, const pm__db_cubin_key *k) {
  return sqlite3_bind_text(st, 1, k->template_sha256, -1, SQLITE_STATIC) |
         sqlite3_bind_text(st, 2, k->defines, -1, SQLITE_STATIC) |
         sqlite3_bind_text(st, 3, k->arch, -1, SQLITE_STATIC) |
         sqlite3_bind_text(st, 4, k->nvrtc_version, -1, SQLITE_STATIC) |
         sqlite3_bind_int(st, 5, k->driver_version);
}

int pm__db_cubin_get(pm__db *db, const pm__db_cubin_key *k, pm__cubin *out) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  memset(out, 0, sizeof *out);
  if ((rc = check_cubin_key(db, k)) != PM_OK) return rc;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT data, compile_ms FROM cubin WHERE template_sha256 = ?1"
                                    " AND defines = ?2 AND arch = ?3 AND nvrtc_version = ?4"
                                    " AND driver_version = ?5",
                                    -1, &st, NULL));
  PM__SQLITE(db, bind_cubin_key(st, k));
  int r = sqlite3_step(st);
  PM__SQLITE_ST(db, st, r);
  if (r != SQLITE_ROW) {
    rc = pm__seterr(db->c, PM_ENOTFOUND,
                    "tuning database %s: no cubin of template %.12s... with '%s' for %s by NVRTC "
                    "%s, driver %d",
                    db->path, k->template_sha256, k->defines, k->arch, k->nvrtc_version,
                    k->driver_version);
    goto fail;
  }
  const void *data = sqlite3_column_blob(st, 0);
  int size = sqlite3_column_bytes(st, 0);
  if (data == NULL || size <= 0 || (out->data = pm__malloc((size_t)size)) == NULL) {
    rc = data == NULL || size <= 0
             ? pm__seterr(db->c, PM_EDB, "tuning database %s: an empty cubin is stored", db->path)
             : pm__seterr(db->c, PM_ENOMEM, "tuning database %s: cubin: out of memory", db->path);
    goto fail;
  }
  memcpy(out->data, data, (size_t)size);
  out->size = (size_t)size;
  out->compile_ms = sqlite3_column_double(st, 1);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_cubin_put(pm__db *db, const pm__db_cubin_key *k, const pm__cubin *b) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  if ((rc = check_cubin_key(db, k)) != PM_OK) return rc;
  if (b == NULL || b->data == NULL || b->size == 0 || b->size > 512u << 20)
    return pm__seterr(db->c, PM_EINVAL, "cubin: empty, or larger than 512 MiB");
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  PM__SQLITE(db, sqlite3_prepare_v2(
                     db->sql,
                     "INSERT INTO cubin (template_sha256, defines, arch, nvrtc_version,"
                     " driver_version, data, size, compile_ms, created_at)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, " NOW ")"
                     " ON CONFLICT (template_sha256, defines, arch, nvrtc_version, driver_version)"
                     " DO UPDATE SET data = excluded.data, size = excluded.size,"
                     " compile_ms = excluded.compile_ms, created_at = excluded.created_at",
                     -1, &st, NULL));
  PM__SQLITE(db, bind_cubin_key(st, k));
  PM__SQLITE(db, sqlite3_bind_blob64(st, 6, b->data, b->size, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int64(st, 7, (sqlite3_int64)b->size));
  PM__SQLITE(db, sqlite3_bind_double(st, 8, b->compile_ms));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  pm__db_finalize(&st);
  return pm__db_commit(db);
fail:
  pm__db_finalize(&st);
  pm__db_rollback(db);
  return rc;
}

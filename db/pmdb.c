/* pmdb.c: the tuning database: finding and opening the file, migrations, and what the tuner and
 * library calls store and look up (GPUs, runs, measurements, winners, cubins), in SQLite. */
#include "pmdb.h"

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

#define BUSY_TIMEOUT_MS 10000     /* how long a statement waits for a lock while nothing moves */
#define BUSY_LIMIT_MS 300000      /* how long it waits at most, however busy the file is */
#define APPLICATION_ID 1886221429 /* 0x706d7475, 'pmtu', set by 0001_initial.sql */
#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
/* The oldest schema a read-only handle reads (library calls never migrate): every migration
 * since has only added tables that the lookups do not read (0002: seen), so a file that no
 * newer pmtune has written yet still serves. A migration that changes what is read raises it. */
#define READ_SINCE 1

/* What the busy handler of a connection knows of its current wait (see busy_wait). */
typedef struct {
  const char *path;    /* the database file; PATH-wal is watched beside it */
  long long start_ms;  /* when this wait began */
  long long moved_ms;  /* when another process was last seen writing */
  long long signature; /* the files' sizes and times when last looked at */
  int at_once;         /* fail at once rather than wait (pm__db_set_wait) */
  int gave_up;         /* the last wait ended without the lock */
} waiter;

struct pm__db {
  pm_ctx *c;
  waiter wait;
  const pm__db_op *const *ops; /* what problems may be: the caller's list */
  sqlite3 *sql;
  char *path;
  int readonly;
  int version_was; /* user_version when opened */
  sqlite3_stmt *kept[PM__DB_KEPT_N]; /* pm__db_keep's statements, finalized at close */
  /* What a write transaction has found already, so that the rows of one import do not ask the
   * file again (each is valid only in the transaction it was found in: txn, counted by
   * pm__db_begin, while one is open): the last template found to be an op's, the last GPU and
   * run found to exist. */
  unsigned long txn, tpl_txn, ids_txn;
  char tpl_op[64], tpl_sha[65];
  int64_t ids_gpu, ids_run;
  struct params_memo *memo; /* config_from_params' recent answers (heap; NULL: none yet) */
  /* pm__db_problem_text's last answer (its text "" where none), and its problem's strings */
  pm__db_problem last;
  char last_op[64], last_dtype[16], last_variant[48], last_text[PM__DB_PROBLEM_MAX];
};

/* config_from_params' answer for a params text: what it reads depends on the text alone. */
#define MEMO_SLOTS 2048 /* the shipped H100 results hold 780 configurations */
#define MEMO_TEXT 128   /* longer texts are not remembered */
typedef struct params_memo {
  char params[MEMO_TEXT], json[MEMO_TEXT], text[MEMO_TEXT];
} params_memo;

/* ---- Errors --------------------------------------------------------------------------------- */

static const char *sqlite_code_name(int rc) {
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
                    sqlite_code_name(rc), base ? base + 1 : file, line, n > 60 ? 60 : n,
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

static void set_busy_wait(sqlite3 *h, waiter *w, const char *path) {
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
static int query_int(pm__db *db, const char *sql, int64_t *v) {
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

/* ---- Where the file is ---------------------------------------------------------------------- */

int pm__db_path(pm_ctx *c, const char *path, char *out, size_t cap) {
  const char *env = getenv("PMTUNE_DB"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int n;
  if (path != NULL && path[0] == '\0') return pm__seterr(c, PM_EINVAL, "database path is empty");
  if (path != NULL)
    n = snprintf(out, cap, "%s", path);
  else if (env != NULL && env[0] != '\0')
    n = snprintf(out, cap, "%s", env);
  else if (xdg != NULL && xdg[0] == '/')
    n = snprintf(out, cap, "%s/pmtune/pmtune.db", xdg);
  else if (home != NULL && home[0] != '\0')
    n = snprintf(out, cap, "%s/.cache/pmtune/pmtune.db", home);
  else
    return pm__seterr(c, PM_EINVAL,
                      "no place for the tuning database: give --db PATH, or set $PMTUNE_DB, "
                      "$XDG_CACHE_HOME or $HOME");
  if (n < 0 || (size_t)n >= cap)
    return pm__seterr(c, PM_EINVAL, "database path too long (%d bytes, at most %zu)", n, cap - 1);
  return PM_OK;
}

/* mkdir -p of the directory that holds file path. */
static int make_parent_dirs(pm_ctx *c, const char *path) {
  char dir[PM__DB_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == NULL || slash == dir) return PM_OK;
  *slash = '\0';
  for (char *p = dir + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char keep = *p;
    *p = '\0';
    struct stat s;
    if (stat(dir, &s) != 0) {
      if (errno != ENOENT || (mkdir(dir, 0777) != 0 && errno != EEXIST))
        return pm__seterr(c, PM_EIO, "tuning database %s: cannot create directory %s: %s", path,
                          dir, strerror(errno));
    } else if (!S_ISDIR(s.st_mode)) {
      return pm__seterr(c, PM_EIO, "tuning database %s: cannot create directory %s: %s", path, dir,
                        strerror(ENOTDIR));
    }
    *p = keep;
    if (keep == '\0') break;
  }
  return PM_OK;
}

/* ---- Schema and migrations ------------------------------------------------------------------ */

int pm__db_schema_latest(void) {
  int n = 0;
  while (pm__db_migrations[n].name != NULL) n++;
  return n;
}

/* The number a migration's file name starts with ("0001_initial" is 1), or -1. */
static int migration_number(const pm__db_migration *m) {
  int v = 0, digits = 0;
  for (const char *p = m->name; isdigit((unsigned char)*p); p++, digits++) v = v * 10 + (*p - '0');
  return digits == 4 && m->name[4] == '_' ? v : -1;
}

/* Applies the migrations the file lacks, all in one IMMEDIATE transaction, re-reading
 * user_version inside it (several processes may open a new file at once): a process killed
 * part way leaves the file as it was, never at a version between (which db check would flag
 * until the next writer). */
static int migrate(pm__db *db) {
  int rc = PM_OK, latest = pm__db_schema_latest();
  int64_t now = 0;
  /* Up to date, as nearly every open finds it: nothing to write, so no write lock to wait for
   * (versions only grow: a file at the latest version stays there). */
  if ((rc = query_int(db, "PRAGMA user_version", &now)) != PM_OK || now == latest) return rc;
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  for (;;) {
    int64_t v = 0, objects = 0;
    if ((rc = query_int(db, "PRAGMA user_version", &v)) != PM_OK) goto fail;
    if (v > latest) {
      rc = pm__seterr(db->c, PM_EDB,
                      "tuning database %s: schema version %lld is newer than this pmtune's (%d): "
                      "use a newer pmtune; the file was left as it is",
                      db->path, (long long)v, latest);
      goto fail;
    }
    if (v == latest) break;
    if (v == 0) {
      if ((rc = query_int(db, "SELECT count(*) FROM sqlite_schema", &objects)) != PM_OK) goto fail;
      if (objects > 0) {
        rc = pm__seterr(db->c, PM_EDB,
                        "tuning database %s: an SQLite database, but not pmtune's (it has tables "
                        "and no pmtune schema); the file was left as it is",
                        db->path);
        goto fail;
      }
    }
    const pm__db_migration *m = &pm__db_migrations[v];
    if (migration_number(m) != v + 1) {
      rc = pm__seterr(db->c, PM_EDB,
                      "tuning database %s: migration %s is misnumbered (expected %04lld_*.sql)",
                      db->path, m->file, (long long)(v + 1));
      goto fail;
    }
    char *err = NULL;
    int r = sqlite3_exec(db->sql, m->source, NULL, NULL, &err);
    if (r != SQLITE_OK) {
      rc = pm__seterr(db->c, PM_EDB, "tuning database %s: migration %s failed: %s (%s)", db->path,
                      m->file, err ? err : sqlite3_errstr(r), sqlite_code_name(r));
      sqlite3_free(err);
      goto fail;
    }
    int64_t after = 0;
    if ((rc = query_int(db, "PRAGMA user_version", &after)) != PM_OK) goto fail;
    if (after != v + 1) {
      rc = pm__seterr(db->c, PM_EDB,
                      "tuning database %s: migration %s left user_version at %lld, not %lld",
                      db->path, m->file, (long long)after, (long long)(v + 1));
      goto fail;
    }
  }
  return pm__db_commit(db);
fail:
  pm__db_rollback(db);
  return rc;
}

/* Marks the embedded templates current, in one transaction, where one of them is not. */
static int register_templates(pm__db *db) {
  int rc = PM_OK, stale = 0;
  sqlite3_stmt *st = NULL;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "SELECT current FROM template WHERE sha256 = ?1", -1,
                                    &st, NULL));
  for (const pm__template *t = pm__templates; t->name != NULL && !stale; t++) {
    sqlite3_reset(st);
    PM__SQLITE(db, sqlite3_bind_text(st, 1, t->sha256, -1, SQLITE_STATIC));
    int r = sqlite3_step(st);
    PM__SQLITE_ST(db, st, r);
    stale = r != SQLITE_ROW || sqlite3_column_int(st, 0) != 1;
  }
  pm__db_finalize(&st);
  if (!stale) return PM_OK;
  for (const pm__template *t = pm__templates; t->name != NULL; t++)
    if ((rc = pm__db_template_current(db, t->name, t->sha256)) != PM_OK) return rc;
  return PM_OK;
fail:
  pm__db_finalize(&st);
  return rc;
}

/* PRAGMA journal_mode=WAL needs a moment alone with the file: retries while another process
 * holds it, up to the busy timeout. */
static int set_wal(pm__db *db) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "PRAGMA journal_mode = WAL", -1, &st, NULL));
  for (int waited = 0;; waited += 5) {
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) break;
    if ((r & 0xff) != SQLITE_BUSY && (r & 0xff) != SQLITE_LOCKED) PM__SQLITE_ST(db, st, r);
    if (waited >= BUSY_TIMEOUT_MS) PM__SQLITE_ST(db, st, r);
    sqlite3_reset(st);
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  const char *mode;
  PM__SQLITE_TEXT(db, st, 0, mode);
  if (mode == NULL || strcmp(mode, "wal") != 0)
    rc = pm__seterr(db->c, PM_EDB, "tuning database %s: cannot switch to WAL (journal mode %s)",
                    db->path, mode ? mode : "?");
fail:
  pm__db_finalize(&st);
  return rc;
}

/* Says why SQLite may not write the file, where the file system says why: the file is read-only,
 * or its directory is (in WAL mode SQLite must create PATH-wal and PATH-shm beside it). */
static int explain_read_only(pm__db *db) {
  char dir[PM__DB_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", db->path);
  char *slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else if (slash != NULL)
    *slash = '\0';
  else
    snprintf(dir, sizeof dir, ".");
  if (access(db->path, W_OK) != 0 && errno != ENOENT)
    return pm__seterr(db->c, PM_EDB, "tuning database %s: the file is read-only (%s)", db->path,
                      strerror(errno));
  if (access(dir, W_OK) != 0)
    return pm__seterr(db->c, PM_EDB,
                      "tuning database %s: its directory %s is read-only (%s), and SQLite must "
                      "create files beside it",
                      db->path, dir, strerror(errno));
  return PM_OK;
}

/* A file name as an SQLite URI, "file:PATH?immutable=1", with % ? and # escaped. */
static int immutable_uri(const char *path, char *out, size_t cap) {
  size_t n = (size_t)snprintf(out, cap, "file:");
  for (const char *p = path; *p != '\0' && n + 4 < cap; p++)
    n += (size_t)(strchr("%?#", *p) ? snprintf(out + n, cap - n, "%%%02X", (unsigned char)*p)
                                    : snprintf(out + n, cap - n, "%c", *p));
  return snprintf(out + n, cap - n, "?immutable=1") < (int)(cap - n) ? 0 : -1;
}

/* Opens the connection and reads, in one snapshot (another process may be creating the file
 * meanwhile), what the file is, before anything writes to it. A reader that may not create
 * PATH-shm reads a file that has no PATH-wal (no writer is at work) as immutable instead. */
static int open_and_read_header(pm__db *db, int64_t *app, int64_t *version, int64_t *objects) {
  int rc = PM_OK,
      flags = db->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  char wal[PM__DB_PATH_MAX + 8], uri[3 * PM__DB_PATH_MAX + 32];
  const char *name = db->path;
  for (int attempt = 0;; attempt++) {
    PM__SQLITE(db, sqlite3_open_v2(name, &db->sql, flags, NULL));
    set_busy_wait(db->sql, &db->wait, db->path);
    PM__SQLITE(db, sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL));
    if ((rc = query_int(db, "PRAGMA application_id", app)) == PM_OK &&
        (rc = query_int(db, "PRAGMA user_version", version)) == PM_OK &&
        (rc = query_int(db, "SELECT count(*) FROM sqlite_schema", objects)) == PM_OK) {
      PM__SQLITE(db, sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL));
      break;
    }
    int code = sqlite3_errcode(db->sql) & 0xff;
    if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN) return rc;
    snprintf(wal, sizeof wal, "%s-wal", db->path);
    if (!db->readonly || attempt > 0 || access(wal, F_OK) == 0 ||
        immutable_uri(db->path, uri, sizeof uri) != 0)
      return explain_read_only(db) != PM_OK ? PM_EDB : rc;
    sqlite3_close_v2(db->sql);
    db->sql = NULL;
    name = uri;
    flags |= SQLITE_OPEN_URI;
  }
  return PM_OK;
fail:
  return rc;
}

/* Verifies the schema's shape, not only its version: every table, view, index and trigger that
 * migrations 1 .. version make is in the file, of the same type, made by the same SQL (as
 * sqlite_schema keeps it), built for reference in a database in memory. Objects a user added
 * (an index, a view for their own queries) are allowed. PM_EDB naming the first object that
 * differs (a `gpu` table of other columns, the `winner` view or an index dropped), with *differs
 * (may be NULL) set; an error with *differs 0 where the shape could not be read (out of memory,
 * an I/O error): no finding about the file. */
/* The schema migrations 1 .. version make, in a new database in memory (*ref; the caller closes
 * it). */
static int reference_schema(pm__db *db, int64_t version, sqlite3 **ref) {
  int rc = PM_OK;
  if (sqlite3_open_v2(":memory:", ref, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    return pm__seterr(db->c, PM_ENOMEM, "tuning database %s: out of memory", db->path);
  for (int64_t v = 0; v < version; v++)
    PM__SQLITE(db, sqlite3_exec(*ref, pm__db_migrations[v].source, NULL, NULL, NULL));
fail:
  return rc;
}

/* Calls each(arg, type, name, table) for every object in the file that ref (reference_schema)
 * does not have, in the order they were made: a table, view, index or trigger of someone
 * else's. SQLite's own (sqlite_*: autoindexes, sqlite_sequence, sqlite_stat1) are not
 * counted. each returns nonzero to stop. */
static int foreign_objects(pm__db *db, sqlite3 *ref,
                           int (*each)(void *arg, const char *type, const char *name,
                                       const char *table),
                           void *arg) {
  int rc = PM_OK, r;
  sqlite3_stmt *have = NULL, *known = NULL;
  PM__SQLITE(db, sqlite3_prepare_v2(ref, "SELECT 1 FROM sqlite_schema WHERE name = ?1", -1, &known,
                                    NULL));
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT type, name, tbl_name FROM sqlite_schema"
                                    " WHERE name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY rowid",
                                    -1, &have, NULL));
  while ((r = sqlite3_step(have)) == SQLITE_ROW) {
    const char *type, *name, *table;
    PM__SQLITE_TEXT(db, have, 0, type);
    PM__SQLITE_TEXT(db, have, 1, name);
    PM__SQLITE_TEXT(db, have, 2, table);
    if (type == NULL || name == NULL) continue;
    sqlite3_reset(known);
    PM__SQLITE(db, sqlite3_bind_text(known, 1, name, -1, SQLITE_TRANSIENT));
    int k = sqlite3_step(known);
    PM__SQLITE_ST(db, known, k);
    if (k == SQLITE_ROW) continue;
    if (each(arg, type, name, table ? table : "")) break;
  }
  if (r != SQLITE_ROW) PM__SQLITE_ST(db, have, r);
fail:
  pm__db_finalize(&have);
  pm__db_finalize(&known);
  return rc;
}

/* The first trigger foreign_objects finds, into a found_trigger. */
typedef struct found_trigger {
  char name[128], table[128];
} found_trigger;

static int first_trigger(void *arg, const char *type, const char *name, const char *table) {
  found_trigger *t = arg;
  if (strcmp(type, "trigger") != 0) return 0;
  snprintf(t->name, sizeof t->name, "%s", name);
  snprintf(t->table, sizeof t->table, "%s", table);
  return 1;
}

static int check_shape(pm__db *db, int64_t version, int *differs, int refuse_triggers) {
  int rc = PM_OK, r;
  if (differs) *differs = 0;
  sqlite3 *ref = NULL;
  sqlite3_stmt *want = NULL, *have = NULL;
  if ((rc = reference_schema(db, version, &ref)) != PM_OK) goto fail;
  PM__SQLITE(db, sqlite3_prepare_v2(ref,
                                    "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL"
                                    " ORDER BY rowid",
                                    -1, &want, NULL));
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "SELECT type, sql FROM sqlite_schema WHERE name = ?1",
                                    -1, &have, NULL));
  while ((r = sqlite3_step(want)) == SQLITE_ROW) {
    const char *type, *name, *sql, *htype, *hsql;
    PM__SQLITE_TEXT(db, want, 0, type);
    PM__SQLITE_TEXT(db, want, 1, name);
    PM__SQLITE_TEXT(db, want, 2, sql);
    if (type == NULL || name == NULL || sql == NULL) continue; /* (sql IS NOT NULL: none) */
    sqlite3_reset(have);
    PM__SQLITE(db, sqlite3_bind_text(have, 1, name, -1, SQLITE_TRANSIENT));
    int h = sqlite3_step(have);
    if (h != SQLITE_ROW) {
      PM__SQLITE_ST(db, have, h);
      if (differs) *differs = 1;
      rc = pm__seterr(db->c, PM_EDB,
                      "tuning database %s: schema version %lld, but the %s '%s' it has is missing; "
                      "the file was left as it is",
                      db->path, (long long)version, type, name);
      goto fail;
    }
    PM__SQLITE_TEXT(db, have, 0, htype);
    PM__SQLITE_TEXT(db, have, 1, hsql);
    if (htype == NULL || strcmp(htype, type) != 0 || hsql == NULL || strcmp(hsql, sql) != 0) {
      if (differs) *differs = 1;
      rc = pm__seterr(db->c, PM_EDB,
                      "tuning database %s: schema version %lld, but its %s '%s' is not as pmtune "
                      "makes it (%s); the file was left as it is",
                      db->path, (long long)version, type, name,
                      htype != NULL && strcmp(htype, type) != 0 ? "another kind of object"
                                                                : "other columns or terms");
      goto fail;
    }
  }
  PM__SQLITE_ST(db, want, r);
  /* A trigger runs on the writes of whoever writes its table, pmtune's included: one that is not
   * pmtune's could change every measurement stored (divide the times by 100). pmtune makes
   * none. */
  found_trigger t = {{0}, {0}};
  if (refuse_triggers) {
    if ((rc = foreign_objects(db, ref, first_trigger, &t)) != PM_OK) goto fail;
    if (t.name[0] != '\0') {
      if (differs) *differs = 1;
      rc = pm__seterr(db->c, PM_EDB,
                      "tuning database %s: it has a trigger '%s' on '%s' that pmtune does not "
                      "make, which would run on pmtune's writes and may change what they store "
                      "(DROP TRIGGER \"%s\" removes it); the file was left as it is",
                      db->path, t.name, t.table, t.name);
      goto fail;
    }
  }
fail:
  pm__db_finalize(&want);
  pm__db_finalize(&have);
  sqlite3_close(ref);
  return rc;
}

/* Removes a database file this open created and could not make whole (a full disk: 0 bytes),
 * with SQLite's files beside it. Only while it is empty: a file another process has meanwhile
 * made a database of (its first page written when it turned to WAL) is never touched. */
static void remove_new_file(const char *file) {
  static const char *const sides[] = {"", "-journal", "-wal", "-shm"};
  char side[PM__DB_PATH_MAX + 16];
  struct stat s;
  if (stat(file, &s) != 0 || !S_ISREG(s.st_mode) || s.st_size != 0) return;
  for (size_t i = 0; i < sizeof sides / sizeof *sides; i++) {
    snprintf(side, sizeof side, "%s%s", file, sides[i]);
    unlink(side);
  }
}

int pm__db_open(pm_ctx *c, const char *path, int flags, const pm__db_op *const *ops,
                pm__db **out) {
  int rc = PM_OK;
  char file[PM__DB_PATH_MAX];
  struct stat s;
  int64_t app = 0, version = 0, objects = 0;
  int created = 0;
  if (out == NULL) return pm__seterr(c, PM_EINVAL, "pm__db_open: no place for the handle");
  *out = NULL;
  int memory = (flags & PM__DB_MEMORY) != 0;
  if (memory) snprintf(file, sizeof file, ":memory:");
  else if ((rc = pm__db_path(c, path, file, sizeof file)) != PM_OK) return rc;
  pm__db *db = pm__calloc(1, sizeof *db);
  if (db == NULL || (db->path = pm__strdup(file)) == NULL) {
    free(db);
    return pm__seterr(c, PM_ENOMEM, "tuning database %s: out of memory", file);
  }
  db->c = c;
  db->ops = ops;
  db->readonly = !memory && (flags & PM__DB_READONLY) != 0;

  if (memory) {
    /* nothing on disk to look at */
  } else if (stat(file, &s) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      rc = pm__seterr(c, PM_EIO, "tuning database %s: %s", file, strerror(errno));
      goto fail;
    }
    if (db->readonly) {
      rc = pm__seterr(c, PM_ENOTFOUND, "tuning database %s: no such file%s", file,
                      errno == ENOTDIR ? " (a part of its path is not a directory)" : "");
      goto fail;
    }
    if ((rc = make_parent_dirs(c, file)) != PM_OK) goto fail;
    created = 1; /* a new file: removed again where it cannot be made whole (remove_new_file) */
  } else if (S_ISDIR(s.st_mode)) {
    rc = pm__seterr(c, PM_EIO, "tuning database %s: is a directory", file);
    goto fail;
  } else if (!S_ISREG(s.st_mode)) { /* /dev/zero, a FIFO: SQLite would leave a journal beside it */
    rc = pm__seterr(c, PM_EIO, "tuning database %s: not a regular file (a device, FIFO or socket)",
                    file);
    goto fail;
  }

  if ((rc = open_and_read_header(db, &app, &version, &objects)) != PM_OK) goto fail;
  db->version_was = (int)version;
  if (app != 0 && app != APPLICATION_ID) {
    rc = pm__seterr(c, PM_EDB,
                    "tuning database %s: an SQLite database, but not pmtune's (application_id "
                    "%lld); the file was left as it is",
                    file, (long long)app);
    goto fail;
  }
  if (version > pm__db_schema_latest()) {
    rc = pm__seterr(c, PM_EDB,
                    "tuning database %s: schema version %lld is newer than this pmtune's (%d): use "
                    "a newer pmtune; the file was left as it is",
                    file, (long long)version, pm__db_schema_latest());
    goto fail;
  }
  if (version == 0 && objects > 0) {
    rc = pm__seterr(c, PM_EDB,
                    "tuning database %s: an SQLite database, but not pmtune's (it has tables and "
                    "no pmtune schema); the file was left as it is",
                    file);
    goto fail;
  }
  if (db->readonly && version == 0) {
    rc = pm__seterr(c, PM_ENOTFOUND,
                    "tuning database %s: empty, nothing tuned yet ('pmtune db init' creates it)",
                    file);
    goto fail;
  }
  if (db->readonly && version < READ_SINCE) {
    rc = pm__seterr(c, PM_EDB,
                    "tuning database %s: schema version %lld is older than this pmtune's (%d): "
                    "'pmtune db init' upgrades it",
                    file, (long long)version, pm__db_schema_latest());
    goto fail;
  }
  if (!db->readonly && sqlite3_db_readonly(db->sql, "main") == 1) { /* SQLite says nothing */
    if ((rc = explain_read_only(db)) == PM_OK)
      rc = pm__seterr(c, PM_EDB, "tuning database %s: the file is read-only", file);
    goto fail;
  }
  PM__SQLITE(db, sqlite3_exec(db->sql, "PRAGMA foreign_keys = ON", NULL, NULL, NULL));
  if (db->readonly) {
    PM__SQLITE(db, sqlite3_exec(db->sql, "PRAGMA query_only = ON", NULL, NULL, NULL));
  } else {
    if (!memory && (rc = set_wal(db)) != PM_OK) goto fail;
    /* In WAL, NORMAL loses no committed transaction when a process dies, only on power loss. */
    PM__SQLITE(db, sqlite3_exec(db->sql, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL));
    if ((rc = migrate(db)) != PM_OK) goto fail;
  }
  /* Before writing, the shape too (a few ms: not on the read-only opens that serve calls, whose
   * queries fail cleanly on a polluted file; db check verifies it). */
  if (!db->readonly && (rc = check_shape(db, pm__db_schema_latest(), NULL, 1)) != PM_OK)
    goto fail;
  if (!db->readonly && (rc = register_templates(db)) != PM_OK) goto fail;
  *out = db;
  return PM_OK;
fail:
  pm__db_close(db);
  if (created) remove_new_file(file); /* a failed creation (a full disk) leaves no empty file */
  return rc;
}

int pm__db_keep(pm__db *db, int slot, const char *sql, sqlite3_stmt **st) {
  *st = NULL;
  if (db->kept[slot] == NULL) {
    int r = sqlite3_prepare_v3(db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, &db->kept[slot], NULL);
    if (r != SQLITE_OK) return r;
  }
  *st = db->kept[slot];
  return SQLITE_OK;
}

void pm__db_let_go(sqlite3_stmt **st) {
  if (*st == NULL) return;
  sqlite3_reset(*st);
  sqlite3_clear_bindings(*st);
  *st = NULL;
}

void pm__db_close(pm__db *db) {
  if (db == NULL) return;
  pm__db_rollback(db);
  for (int i = 0; i < PM__DB_KEPT_N; i++) sqlite3_finalize(db->kept[i]);
  free(db->memo);
  sqlite3_close_v2(db->sql);
  free(db->path);
  free(db);
}

/* ---- Checks --------------------------------------------------------------------------------- */

typedef struct report {
  char *text;
  size_t len, cap;
  int problems, nomem;
} report;

static void add(report *r, int problem, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(report *r, int problem, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char line[1024];
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = sizeof line - 1;
  r->problems += problem;
  if (r->len + (size_t)n + 2 > r->cap) {
    size_t cap = (r->cap + (size_t)n + 2) * 2;
    char *p = pm__realloc(r->text, cap);
    if (p == NULL) {
      r->nomem = 1;
      return;
    }
    r->text = p, r->cap = cap;
  }
  memcpy(r->text + r->len, line, (size_t)n);
  r->len += (size_t)n;
  r->text[r->len++] = '\n';
  r->text[r->len] = '\0';
}

/* A line of the check's report for an object of the file that pmtune does not make (see
 * foreign_objects): a trigger is a problem (pmtune's writes would run it, and refuse to);
 * a table, view or index of your own is welcome, and said. */
static int report_foreign(void *arg, const char *type, const char *name, const char *table) {
  report *r = arg;
  if (strcmp(type, "trigger") == 0)
    add(r, 1,
        "schema        PROBLEM: trigger '%s' on '%s' is not pmtune's: it runs on the writes to "
        "'%s' and may change what pmtune stores; pmtune writes nothing while it is there "
        "(DROP TRIGGER \"%s\" removes it)",
        name, table, table, name);
  else if (strcmp(type, "table") == 0 || strcmp(name, table) == 0)
    add(r, 0, "schema        not pmtune's, left alone: %s '%s'", type, name);
  else
    add(r, 0, "schema        not pmtune's, left alone: %s '%s' on '%s'", type, name, table);
  return 0;
}

int pm__db_sound(pm__db *db) {
  int rc = PM_OK, step, differs = 0;
  sqlite3_stmt *st = NULL;
  /* SQLite's integrity check: structure, indexes against their tables, NOT NULL and CHECK. */
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "PRAGMA integrity_check(1)", -1, &st, NULL));
  step = sqlite3_step(st);
  if ((step & 0xff) == SQLITE_CORRUPT || (step & 0xff) == SQLITE_NOTADB) {
    rc = pm__seterr(db->c, PM_EDB,
                    "tuning database %s fails its integrity check (%s, %s): pmtune writes "
                    "nothing into it (`pmtune db check` says more)",
                    db->path, sqlite3_errmsg(db->sql), sqlite_code_name(step));
    goto fail;
  }
  PM__SQLITE_ST(db, st, step);
  const char *m;
  PM__SQLITE_TEXT(db, st, 0, m);
  if (step != SQLITE_ROW || m == NULL || strcmp(m, "ok") != 0) {
    rc = pm__seterr(db->c, PM_EDB,
                    "tuning database %s fails its integrity check (%.300s): pmtune writes "
                    "nothing into it (`pmtune db check` says more)",
                    db->path, m ? m : "no answer");
    goto fail;
  }
  pm__db_finalize(&st);
  /* The schema, and no trigger of anyone else's. */
  if ((rc = check_shape(db, pm__db_schema_latest(), &differs, 1)) != PM_OK) goto fail;
  /* No row refers to a missing one. */
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "PRAGMA foreign_key_check", -1, &st, NULL));
  step = sqlite3_step(st);
  PM__SQLITE_ST(db, st, step);
  if (step == SQLITE_ROW) {
    rc = pm__seterr(db->c, PM_EDB,
                    "tuning database %s: its %s row %lld refers to a missing %s row: pmtune "
                    "writes nothing into it (`pmtune db check` says more)",
                    db->path, (const char *)sqlite3_column_text(st, 0),
                    (long long)sqlite3_column_int64(st, 1),
                    (const char *)sqlite3_column_text(st, 2));
    goto fail;
  }
fail:
  pm__db_finalize(&st);
  return rc;
}

/* 1 where PRAGMA integrity_check on h says "ok", 0 where it finds something or cannot run. */
static int integrity_ok(sqlite3 *h) {
  sqlite3_stmt *st = NULL;
  int ok = sqlite3_prepare_v2(h, "PRAGMA integrity_check(1)", -1, &st, NULL) == SQLITE_OK &&
           sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL &&
           strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
  sqlite3_finalize(st);
  return ok;
}

int pm__db_check(pm__db *db, char **text, int *problems) {
  static const char *const objects[] = {"gpu",
                                        "template",
                                        "run",
                                        "measurement",
                                        "cubin",
                                        "current_measurement",
                                        "winner",
                                        "template_one_current",
                                        "measurement_one_seed",
                                        "measurement_by_problem",
                                        "seen",
                                        "seen_most_called"};
  int rc = PM_OK;
  report r = {0};
  sqlite3_stmt *st = NULL;
  sqlite3 *rw = NULL, *h = db->sql; /* the connection of the integrity check (below) */
  waiter rw_wait;
  int64_t v = 0;
  *text = NULL;
  *problems = 0;

  /* SQLite's own: structure, NOT NULL and CHECK constraints, indices. SQLite skips the CHECK
   * constraints on a read-only connection, so a read-only handle's check runs on a read-write
   * connection of its own (reading only; never migrating); where the file cannot be opened for
   * writing, the report says that CHECK constraints were not verified. */
  if (db->readonly) {
    if (sqlite3_open_v2(db->path, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
      set_busy_wait(rw, &rw_wait, db->path);
      h = rw;
    } else {
      sqlite3_close(rw);
      rw = NULL;
    }
  }
  if (h == rw && sqlite3_prepare_v2(rw, "PRAGMA integrity_check(50)", -1, &st, NULL) != SQLITE_OK)
    h = db->sql; /* the read-only handle's check, then */
  if (h == db->sql)
    PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "PRAGMA integrity_check(50)", -1, &st, NULL));
  int ok = 0, step;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    const char *m = (const char *)sqlite3_column_text(st, 0);
    if (m == NULL && (sqlite3_errcode(h) & 0xff) == SQLITE_NOMEM) { /* not a finding: an error */
      step = SQLITE_NOMEM;
      break;
    }
    if (m && strcmp(m, "ok") == 0)
      ok = 1;
    else
      add(&r, 1, "integrity     PROBLEM: %s", m ? m : "?");
  }
  if ((step & 0xff) == SQLITE_CORRUPT || (step & 0xff) == SQLITE_NOTADB) /* too damaged to list */
    add(&r, 1, "integrity     PROBLEM: %s (%s)", sqlite3_errmsg(h), sqlite_code_name(step));
  else /* anything else (out of memory, an I/O error, locked) failed the check: not a finding */
    PM__SQLITE_ST(db, st, step);
  pm__db_finalize(&st);
  /* SQLite out of memory in the middle of the check may report a CHECK constraint failed on a
   * sound row: a finding is confirmed by a second check, else the check failed (no finding) */
  if (!ok && r.problems > 0 && integrity_ok(h)) {
    rc = pm__seterr(db->c, PM_EDB,
                    "tuning database %s: the integrity check found problems, then none when run "
                    "again (out of memory?): nothing was changed; check again",
                    db->path);
    goto fail;
  }
  if (ok)
    add(&r, 0, "integrity     ok (PRAGMA integrity_check%s)",
        db->readonly && h == db->sql ? "; CHECK constraints not verified: the file cannot be "
                                       "opened for writing" : "");
  pm__db_finalize(&st);
  sqlite3_close(rw);
  rw = NULL;
  if (!ok) {
    add(&r, 0, "(the other checks need a sound file: skipped)");
    goto done;
  }
  int differs = 0;
  if ((rc = check_shape(db, db->version_was, &differs, 0)) == PM_OK) {
    add(&r, 0, "schema        ok (as migrations 1 to %d make it)", db->version_was);
    sqlite3 *ref = NULL;
    if ((rc = reference_schema(db, db->version_was, &ref)) == PM_OK)
      rc = foreign_objects(db, ref, report_foreign, &r);
    sqlite3_close(ref);
    if (rc != PM_OK) goto fail;
  } else if (!differs) { /* the check could not run (out of memory, I/O): an error, no finding */
    goto fail;
  } else {
    rc = PM_OK;
    add(&r, 1, "schema        PROBLEM: %s", pm_errmsg(db->c));
    add(&r, 0, "(the other checks need pmtune's schema: skipped)");
    goto done;
  }

  /* Orphan rows: references to rows that are gone (sqlite3 deletes without foreign_keys on). */
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "PRAGMA foreign_key_check", -1, &st, NULL));
  int orphans = 0;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (orphans++ < 20)
      add(&r, 1, "orphan row    PROBLEM: %s row %lld refers to a missing %s row",
          (const char *)sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1),
          (const char *)sqlite3_column_text(st, 2));
    else
      r.problems++;
  }
  PM__SQLITE_ST(db, st, step);
  if (orphans > 20) add(&r, 0, "orphan row    ... %d in all", orphans);
  if (orphans == 0) add(&r, 0, "orphan rows   none (PRAGMA foreign_key_check)");
  pm__db_finalize(&st);

  /* pmtune's own. */
  if ((rc = query_int(db, "PRAGMA application_id", &v)) != PM_OK) goto fail;
  if (v != APPLICATION_ID)
    add(&r, 1, "application   PROBLEM: application_id %lld is not pmtune's", (long long)v);
  if ((rc = query_int(db, "PRAGMA user_version", &v)) != PM_OK) goto fail;
  add(&r, v != pm__db_schema_latest(), "schema        version %lld%s (this pmtune: %d)",
      (long long)v, v != pm__db_schema_latest() ? " PROBLEM" : "", pm__db_schema_latest());
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql, "SELECT 1 FROM sqlite_schema WHERE name = ?1", -1, &st,
                                    NULL));
  int missing = 0;
  for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++) {
    sqlite3_reset(st);
    PM__SQLITE(db, sqlite3_bind_text(st, 1, objects[i], -1, SQLITE_STATIC));
    PM__SQLITE_ST(db, st, step = sqlite3_step(st));
    if (step != SQLITE_ROW) {
      add(&r, 1, "schema        PROBLEM: %s is missing", objects[i]);
      missing++;
    }
  }
  pm__db_finalize(&st);
  if (missing) goto done;
  add(&r, 0, "schema        all tables, views and indices present");

  /* What is stored. */
  int64_t gpus, runs, running, interrupted, meas, okm, failed, stale, winners, cubins, bytes;
  int64_t seen, calls;
  if ((rc = query_int(db, "SELECT count(*) FROM gpu", &gpus)) != PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM run", &runs)) != PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM run WHERE status = 'running'", &running)) !=
          PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM run WHERE status = 'interrupted'", &interrupted)) !=
          PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM measurement", &meas)) != PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM measurement WHERE status = 'ok'", &okm)) != PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM measurement WHERE status <> 'ok'", &failed)) !=
          PM_OK ||
      (rc = query_int(db,
                      "SELECT count(*) FROM measurement WHERE template_sha256 NOT IN "
                      "(SELECT sha256 FROM template WHERE current = 1)",
                      &stale)) != PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM winner", &winners)) != PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM cubin", &cubins)) != PM_OK ||
      (rc = query_int(db, "SELECT ifnull(sum(size), 0) FROM cubin", &bytes)) != PM_OK ||
      (rc = query_int(db, "SELECT count(*) FROM seen", &seen)) != PM_OK ||
      (rc = query_int(db, "SELECT ifnull(sum(calls), 0) FROM seen", &calls)) != PM_OK)
    goto fail;
  add(&r, 0, "gpus          %lld", (long long)gpus);
  add(&r, 0, "runs          %lld (%lld still running or killed, %lld interrupted)", (long long)runs,
      (long long)running, (long long)interrupted);
  add(&r, 0, "measurements  %lld (%lld ran, %lld failed; %lld of an older template, never served)",
      (long long)meas, (long long)okm, (long long)failed, (long long)stale);
  add(&r, 0, "winners       %lld", (long long)winners);
  add(&r, 0, "cubins        %lld, %.1f KiB", (long long)cubins, bytes / 1024.0);
  add(&r, 0, "seen sizes    %lld served without a tuned winner, %lld calls in all", (long long)seen,
      (long long)calls);
done:
  if (r.nomem) {
    rc = pm__seterr(db->c, PM_ENOMEM, "tuning database %s: check: out of memory", db->path);
    goto fail;
  }
  *text = r.text;
  *problems = r.problems;
  return PM_OK;
fail:
  pm__db_finalize(&st);
  sqlite3_close(rw);
  free(r.text);
  return rc;
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
  /* what the sibling brings: its (op, dtype) that no document of d's own model has */
  static const char *const steps[] = {
      "SELECT DISTINCT m.op || '/' || m.dtype FROM measurement m JOIN gpu g ON g.id = m.gpu_id"
      " WHERE g.name = ?1 AND NOT EXISTS (SELECT 1 FROM measurement o JOIN gpu h"
      " ON h.id = o.gpu_id WHERE h.name = ?2 AND o.op = m.op AND o.dtype = m.dtype)"
      " ORDER BY 1",
      "DELETE FROM measurement WHERE gpu_id IN (SELECT id FROM gpu WHERE name = ?1) AND EXISTS"
      " (SELECT 1 FROM measurement o JOIN gpu h ON h.id = o.gpu_id WHERE h.name = ?2"
      " AND o.op = measurement.op AND o.dtype = measurement.dtype)",
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

static int valid_sha(const char *s) {
  size_t n = 0;
  if (s == NULL) return 0;
  for (; s[n] != '\0'; n++)
    if (!isdigit((unsigned char)s[n]) && !(s[n] >= 'a' && s[n] <= 'f')) return 0;
  return n == 64;
}

/* ---- JSON's syntax (RFC 8259), checked before SQLite's JSON functions see a text ------------ */

typedef struct json_in {
  const char *p, *end;
} json_in;

static void json_ws(json_in *in) {
  while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
    in->p++;
}

static int json_lit(json_in *in, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(in->end - in->p) < n || memcmp(in->p, word, n) != 0) return 0;
  in->p += n;
  return 1;
}

static int json_string(json_in *in) {
  if (in->p >= in->end || *in->p != '"') return 0;
  for (in->p++; in->p < in->end; in->p++) {
    unsigned char ch = (unsigned char)*in->p;
    if (ch == '"') return in->p++, 1;
    if (ch < 0x20) return 0;
    if (ch != '\\') continue;
    if (++in->p >= in->end) return 0;
    if (*in->p == 'u') {
      for (int i = 0; i < 4; i++)
        if (++in->p >= in->end || !isxdigit((unsigned char)*in->p)) return 0;
    } else if (strchr("\"\\/bfnrt", *in->p) == NULL || *in->p == '\0') {
      return 0;
    }
  }
  return 0;
}

static int json_digits(json_in *in) {
  const char *start = in->p;
  while (in->p < in->end && isdigit((unsigned char)*in->p)) in->p++;
  return in->p > start;
}

static int json_number(json_in *in) {
  if (in->p < in->end && *in->p == '-') in->p++;
  if (in->p < in->end && *in->p == '0') in->p++;
  else if (!json_digits(in)) return 0;
  if (in->p < in->end && *in->p == '.' && (in->p++, !json_digits(in))) return 0;
  if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
    in->p++;
    if (in->p < in->end && (*in->p == '+' || *in->p == '-')) in->p++;
    if (!json_digits(in)) return 0;
  }
  return 1;
}

/* One value and the white space after it; depth: how deep it may still nest. */
static int json_value(json_in *in, int depth) {
  json_ws(in);
  if (in->p >= in->end) return 0;
  char open = *in->p;
  if (open == '{' || open == '[') {
    if (depth == 0) return 0;
    in->p++;
    json_ws(in);
    char close = open == '{' ? '}' : ']';
    if (in->p < in->end && *in->p == close) return in->p++, json_ws(in), 1;
    for (;;) {
      if (open == '{') {
        json_ws(in);
        if (!json_string(in)) return 0;
        json_ws(in);
        if (in->p >= in->end || *in->p++ != ':') return 0;
      }
      if (!json_value(in, depth - 1)) return 0;
      if (in->p >= in->end) return 0;
      if (*in->p == close) return in->p++, json_ws(in), 1;
      if (*in->p++ != ',') return 0;
    }
  }
  int ok = open == '"' ? json_string(in)
           : open == 't' ? json_lit(in, "true")
           : open == 'f' ? json_lit(in, "false")
           : open == 'n' ? json_lit(in, "null")
                         : json_number(in);
  json_ws(in);
  return ok;
}

int pm__db_json_check(sqlite3 *h, const char *text, int len) {
  json_in in = {text, text + (len < 0 ? strlen(text) : (size_t)len)};
  if (!json_value(&in, 2000) || in.p != in.end) return 0; /* SQLite 3.40 reads 2000 deep */
  if (h == NULL) return 1; /* the syntax alone: no SQLite JSON function will read it */
  sqlite3_stmt *st = NULL; /* and SQLite's own limits (its depth of nesting) */
  int valid = -1;
  if (sqlite3_prepare_v2(h, "SELECT json_valid(?1)", -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, text, len, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) valid = sqlite3_column_int(st, 0) == 1;
  }
  sqlite3_finalize(st);
  return valid;
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
static int config_from_params(pm__db *db, const char *params, char json_out[PM__DB_PARAMS_MAX],
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

/* ---- Measurements --------------------------------------------------------------------------- */

static const char *const outcome_names[] = {"ok", "compile_error", "launch_error", "wrong_result"};

static int check_timing(pm__db *db, const pm__db_measurement *m, const char *problem,
                        const char *config) {
  int measured = m->outcome == PM__DB_MEASURED;
  if (m->outcome < PM__DB_MEASURED || m->outcome > PM__DB_WRONG_RESULT)
    return pm__seterr(db->c, PM_EINVAL, "measurement %s %s [%s]: no such outcome %d", m->problem.op,
                      problem, config, (int)m->outcome);
  if (measured && !(isfinite(m->median_ms) && isfinite(m->max_ms) && m->min_ms > 0 &&
                    m->min_ms <= m->median_ms && m->median_ms <= m->max_ms && m->samples >= 1 &&
                    isfinite(m->gbps) && m->gbps >= 0))
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s [%s]: needs 0 < min <= median <= max, samples >= 1 and "
                      "gbps >= 0 (got min %g, median %g, max %g ms, %d samples, %g GB/s)",
                      m->problem.op, problem, config, m->min_ms, m->median_ms, m->max_ms,
                      m->samples, m->gbps);
  if (!measured && (m->error == NULL || m->error[0] == '\0'))
    return pm__seterr(db->c, PM_EINVAL, "measurement %s %s [%s]: %s, but no error says why",
                      m->problem.op, problem, config, outcome_names[m->outcome]);
  if ((m->verified != 0 && m->verified != 1) || (m->is_seed != 0 && m->is_seed != 1) ||
      (m->verified && !(isfinite(m->max_error) && m->max_error >= 0)))
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s [%s]: verified and is_seed are 0 or 1, and a verified "
                      "max_error is finite and >= 0 (got %d, %d, %g)",
                      m->problem.op, problem, config, m->verified, m->is_seed, m->max_error);
  return PM_OK;
}

/* Registers sha256 as a template of op (not current) unless known; refuses one known as
 * another op's. */
static int template_known(pm__db *db, const char *op, const char *sha256) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  int in_txn = !sqlite3_get_autocommit(db->sql);
  if (in_txn && db->tpl_txn == db->txn && strcmp(db->tpl_op, op) == 0 &&
      strcmp(db->tpl_sha, sha256) == 0)
    return PM_OK; /* found so in this transaction already */
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_TEMPLATE_PUT,
                             "INSERT INTO template (sha256, op, current, first_seen)"
                             " VALUES (?1, ?2, 0, " NOW ") ON CONFLICT (sha256) DO NOTHING",
                             &st));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  pm__db_let_go(&st);
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_TEMPLATE_GET,
                             "SELECT op FROM template WHERE sha256 = ?1", &st));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  const char *known;
  PM__SQLITE_TEXT(db, st, 0, known);
  if (known == NULL || strcmp(known, op) != 0) {
    rc = pm__seterr(db->c, PM_EINVAL, "template %.12s... is %s's, not %s's", sha256,
                    known ? known : "?", op);
  } else if (in_txn && strlen(op) < sizeof db->tpl_op) {
    db->tpl_txn = db->txn;
    snprintf(db->tpl_op, sizeof db->tpl_op, "%s", op);
    snprintf(db->tpl_sha, sizeof db->tpl_sha, "%s", sha256);
  }
fail:
  pm__db_let_go(&st);
  return rc;
}

int pm__db_measurement_write(pm__db *db, const pm__db_measurement *m, const char *measured_at,
                             int only_if_newer, int *what) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX], params[PM__DB_PARAMS_MAX], config[PM__DB_CONFIG_MAX];
  if (what) *what = 0;
  if (m == NULL) return pm__seterr(db->c, PM_EINVAL, "measurement: none given");
  if ((rc = pm__db_problem_text(db, &m->problem, problem)) != PM_OK) return rc;
  if (!valid_sha(m->template_sha256))
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s: template_sha256 '%.70s' is not 64 lowercase hex digits",
                      m->problem.op, problem, m->template_sha256 ? m->template_sha256 : "(none)");
  if ((rc = config_from_params(db, m->params, params, config)) != PM_OK) return rc;
  if (m->config != NULL && strcmp(m->config, config) != 0)
    return pm__seterr(db->c, PM_EINVAL,
                      "measurement %s %s: configuration text '%.80s' does not say what its JSON "
                      "%s says ('%s')",
                      m->problem.op, problem, m->config, params, config);
  if ((rc = check_timing(db, m, problem, config)) != PM_OK) return rc;
  if ((rc = template_known(db, m->problem.op, m->template_sha256)) != PM_OK) return rc;

  /* The GPU and the run must exist: say so, rather than "FOREIGN KEY constraint failed". */
  int in_txn = !sqlite3_get_autocommit(db->sql);
  if (in_txn && db->ids_txn == db->txn && db->ids_gpu == m->gpu_id && db->ids_run == m->run_id)
    goto ids_known; /* found in this transaction already */
  PM__SQLITE(db, pm__db_keep(db, PM__DB_KEPT_GPU_RUN,
                             "SELECT (SELECT count(*) FROM gpu WHERE id = ?1),"
                             " (SELECT count(*) FROM run WHERE id = ?2)",
                             &st));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, m->gpu_id));
  PM__SQLITE(db, sqlite3_bind_int64(st, 2, m->run_id));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  if (sqlite3_column_int(st, 0) != 1 || (m->run_id != 0 && sqlite3_column_int(st, 1) != 1)) {
    rc = pm__seterr(db->c, PM_EINVAL, "measurement %s %s [%s]: no GPU %lld or no run %lld in %s",
                    m->problem.op, problem, config, (long long)m->gpu_id, (long long)m->run_id,
                    db->path);
    goto fail;
  }
  pm__db_let_go(&st);
  if (in_txn) db->ids_txn = db->txn, db->ids_gpu = m->gpu_id, db->ids_run = m->run_id;
ids_known:

  PM__SQLITE(
      db,
      pm__db_keep(
          db, PM__DB_KEPT_INSERT,
          "INSERT INTO measurement (gpu_id, op, dtype, rows, cols, n, radius, variant, problem,"
          " config, params, is_seed, template_sha256, status, error, median_ms, min_ms, max_ms,"
          " samples, gbps, verified, max_error, run_id, measured_at)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
          "?18,"
          " ?19, ?20, ?21, ?22, ?23, coalesce(?24, " NOW "))"
          " ON CONFLICT (gpu_id, op, dtype, problem, config, template_sha256) DO UPDATE SET"
          " params = excluded.params, is_seed = excluded.is_seed, status = excluded.status,"
          " error = excluded.error, median_ms = excluded.median_ms, min_ms = excluded.min_ms,"
          " max_ms = excluded.max_ms, samples = excluded.samples, gbps = excluded.gbps,"
          " verified = excluded.verified, max_error = excluded.max_error, run_id = excluded.run_id,"
          " measured_at = excluded.measured_at"
          " WHERE ?25 = 0 OR excluded.measured_at > measurement.measured_at",
          &st));
  int measured = m->outcome == PM__DB_MEASURED;
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, m->gpu_id));
  PM__SQLITE(db, pm__db_bind_problem(st, 2, &m->problem, problem));
  PM__SQLITE(db, sqlite3_bind_text(st, 10, config, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 11, params, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 12, m->is_seed));
  PM__SQLITE(db, sqlite3_bind_text(st, 13, m->template_sha256, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 14, outcome_names[m->outcome], -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 15, measured ? NULL : m->error, -1, SQLITE_STATIC));
  if (measured) {
    PM__SQLITE(db, sqlite3_bind_double(st, 16, m->median_ms));
    PM__SQLITE(db, sqlite3_bind_double(st, 17, m->min_ms));
    PM__SQLITE(db, sqlite3_bind_double(st, 18, m->max_ms));
    PM__SQLITE(db, sqlite3_bind_int(st, 19, m->samples));
    PM__SQLITE(db, sqlite3_bind_double(st, 20, m->gbps));
  }
  PM__SQLITE(db, sqlite3_bind_int(st, 21, m->verified));
  if (m->verified) PM__SQLITE(db, sqlite3_bind_double(st, 22, m->max_error));
  if (m->run_id > 0) PM__SQLITE(db, sqlite3_bind_int64(st, 23, m->run_id));
  PM__SQLITE(db, sqlite3_bind_text(st, 24, measured_at, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 25, only_if_newer));
  /* Which it did, without asking first: a new row sets the connection's last inserted rowid
   * (pmtune's rows are numbered from 1), an update of a stored one (the upsert's DO UPDATE)
   * leaves it, and a stored row kept changes nothing. */
  sqlite3_set_last_insert_rowid(db->sql, 0);
  int r = sqlite3_step(st);
  if ((r & 0xff) == SQLITE_CONSTRAINT &&
      strstr(sqlite3_errmsg(db->sql), "measurement.template_sha256") != NULL) {
    /* the one-seed index names these columns; say it in words */
    rc = pm__seterr(db->c, PM_EINVAL,
                    "measurement %s %s [%s]: another configuration is already this problem's seed",
                    m->problem.op, problem, config);
    goto fail;
  }
  PM__SQLITE_ST(db, st, r);
  if (what)
    *what = sqlite3_changes(db->sql) == 0           ? 2
            : sqlite3_last_insert_rowid(db->sql) != 0 ? 0
                                                      : 1;
fail:
  pm__db_let_go(&st);
  return rc;
}

int pm__db_measurement_put(pm__db *db, const pm__db_measurement *m) {
  int rc;
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  if ((rc = pm__db_measurement_write(db, m, NULL, 0, NULL)) != PM_OK) {
    pm__db_rollback(db);
    return rc;
  }
  return pm__db_commit(db);
}

int pm__db_measured(pm__db *db, int64_t gpu_id, const pm__db_problem *p, const char *config,
                    const char *template_sha256, int *found) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX];
  *found = 0;
  if ((rc = pm__db_problem_text(db, p, problem)) != PM_OK) return rc;
  if (config == NULL || !valid_sha(template_sha256))
    return pm__seterr(db->c, PM_EINVAL, "measured: needs a configuration and a template hash");
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT 1 FROM measurement WHERE gpu_id = ?1 AND op = ?2 AND"
                                    " dtype = ?3 AND problem = ?4 AND config = ?5 AND"
                                    " template_sha256 = ?6",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, gpu_id));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, p->op, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 3, p->dtype, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 4, problem, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 5, config, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 6, template_sha256, -1, SQLITE_STATIC));
  int r = sqlite3_step(st);
  PM__SQLITE_ST(db, st, r);
  *found = r == SQLITE_ROW;
fail:
  pm__db_finalize(&st);
  return rc;
}

/* The rows of p's group (op, dtype, variant, radius) on gpu_id of template ?6, or (?10 not 0) on
 * any GPU of gpu_id's model (the same name, compute capability and SM count, as serving takes
 * them): ?1..?6 and ?10 bound by bind_group. */
#define GROUP_ROWS                                                                             \
  " FROM measurement m WHERE (m.gpu_id = ?1 OR (?10 AND m.gpu_id IN (SELECT o.id FROM gpu g"    \
  " JOIN gpu o ON o.name = g.name AND o.cc_major = g.cc_major AND o.cc_minor = g.cc_minor"     \
  " AND o.sm_count = g.sm_count WHERE g.id = ?1))) AND m.op = ?2 AND m.dtype = ?3"            \
  " AND m.variant = ?4 AND ifnull(m.radius, 0) = ?5 AND m.template_sha256 = ?6"

static int bind_group(pm__db *db, sqlite3_stmt *st, int64_t gpu_id, int model,
                      const pm__db_problem *p, const char *sha) {
  int rc = PM_OK;
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, gpu_id));
  PM__SQLITE(db, sqlite3_bind_int(st, 10, model != 0));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, p->op, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 3, p->dtype, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 4, p->variant ? p->variant : "", -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 5, p->radius));
  PM__SQLITE(db, sqlite3_bind_text(st, 6, sha, -1, SQLITE_STATIC));
fail:
  return rc;
}

int pm__db_carry_configs(pm__db *db, int64_t gpu_id, int model, const pm__db_problem *p,
                         const char *template_sha256,
                         int (*each)(void *arg, const char *config), void *arg) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX];
  if ((rc = pm__db_problem_text(db, p, problem)) != PM_OK) return rc;
  if (!valid_sha(template_sha256))
    return pm__seterr(db->c, PM_EINVAL, "carried configurations: needs a template hash");
  double elems = p->rows > 0 ? (double)p->rows * (double)p->cols * (double)(p->n > 0 ? p->n : 1)
                             : (double)p->n; /* (n: a batch of matrices' batch) */
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT DISTINCT config FROM (SELECT m.config,"
                                    " coalesce(m.rows * m.cols * ifnull(m.n, 1), m.n) AS elems, row_number() OVER"
                                    " (PARTITION BY m.problem ORDER BY m.median_ms, m.id) AS rank"
                                    GROUP_ROWS " AND m.status = 'ok' AND m.verified = 1)"
                                    " WHERE rank <= ?7 AND elems <= ?8 * ?9 AND ?9 <= ?8 * elems"
                                    " ORDER BY config",
                                    -1, &st, NULL));
  if ((rc = bind_group(db, st, gpu_id, model, p, template_sha256)) != PM_OK) goto fail;
  PM__SQLITE(db, sqlite3_bind_int(st, 7, PM__DB_CARRY_TOP));
  PM__SQLITE(db, sqlite3_bind_int(st, 8, PM__DB_CARRY_WITHIN));
  PM__SQLITE(db, sqlite3_bind_double(st, 9, elems));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    const char *config;
    PM__SQLITE_TEXT(db, st, 0, config);
    if (config != NULL && each(arg, config)) break;
  }
  if (r != SQLITE_ROW) PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_group_sizes(pm__db *db, int64_t gpu_id, int model, const pm__db_problem *p,
                       const char *template_sha256,
                       int (*each)(void *arg, const pm__db_problem *size), void *arg) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  char problem[PM__DB_PROBLEM_MAX];
  if ((rc = pm__db_problem_text(db, p, problem)) != PM_OK) return rc;
  if (!valid_sha(template_sha256))
    return pm__seterr(db->c, PM_EINVAL, "tuned sizes: needs a template hash");
  PM__SQLITE(db, sqlite3_prepare_v2(db->sql,
                                    "SELECT DISTINCT ifnull(m.rows, 0), ifnull(m.cols, 0),"
                                    " ifnull(m.n, 0)" GROUP_ROWS
                                    " AND m.status = 'ok' AND m.verified = 1"
                                    " ORDER BY coalesce(m.rows * m.cols * ifnull(m.n, 1), m.n), m.rows, m.cols",
                                    -1, &st, NULL));
  if ((rc = bind_group(db, st, gpu_id, model, p, template_sha256)) != PM_OK) goto fail;
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    pm__db_problem z = *p;
    z.rows = sqlite3_column_int64(st, 0);
    z.cols = sqlite3_column_int64(st, 1);
    z.n = sqlite3_column_int64(st, 2);
    if (each(arg, &z)) break;
  }
  if (r != SQLITE_ROW) PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

/* ---- Winners -------------------------------------------------------------------------------- */

/* The GPUs whose results serve device ?1..?6: itself (uuid ?1), and those of its model. */
static int check_lookup(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                        const char *sha, char problem[PM__DB_PROBLEM_MAX]) {
  int rc = pm__db_problem_text(db, p, problem);
  if (rc != PM_OK) return rc;
  if (d == NULL || !valid_sha(sha))
    return pm__seterr(db->c, PM_EINVAL, "winner: needs a device and a template hash");
  return PM_OK;
}

int pm__db_winner_get(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                      const char *template_sha256, pm__db_winner *out) {
  return pm__db_winner_get_if(db, d, p, template_sha256, NULL, NULL, out);
}

/* The two lookups below are the snapshot's (known.c), on a snapshot of p's op alone. */
static int lookup(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                  const char *template_sha256, int nearest,
                  int (*accept)(void *arg, const char *config), void *arg, pm__db_winner *out) {
  char problem[PM__DB_PROBLEM_MAX];
  const char *ops[] = {p != NULL ? p->op : NULL, NULL}, *shas[] = {template_sha256, NULL};
  pm__db_known k;
  memset(out, 0, sizeof *out);
  int rc = check_lookup(db, d, p, template_sha256, problem);
  if (rc != PM_OK || (rc = pm__db_known_load(db, d, ops, shas, &k)) != PM_OK) return rc;
  rc = nearest ? pm__db_known_nearest_if(&k, p, accept, arg, out)
               : pm__db_known_get_if(&k, p, accept, arg, out);
  pm__db_known_free(&k);
  return rc;
}

int pm__db_winner_get_if(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                         const char *template_sha256, int (*accept)(void *arg, const char *config),
                         void *arg, pm__db_winner *out) {
  return lookup(db, d, p, template_sha256, 0, accept, arg, out);
}

int pm__db_winner_nearest(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                          const char *template_sha256, pm__db_winner *out) {
  return pm__db_winner_nearest_if(db, d, p, template_sha256, NULL, NULL, out);
}

int pm__db_winner_nearest_if(pm__db *db, const pm__device_info *d, const pm__db_problem *p,
                             const char *template_sha256,
                             int (*accept)(void *arg, const char *config), void *arg,
                             pm__db_winner *out) {
  return lookup(db, d, p, template_sha256, 1, accept, arg, out);
}

/* ---- Templates ------------------------------------------------------------------------------ */

int pm__db_template_current(pm__db *db, const char *op, const char *sha256) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  if (op == NULL || op[0] == '\0' || !valid_sha(sha256))
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
  if (k == NULL || !valid_sha(k->template_sha256) || k->defines == NULL || k->arch == NULL ||
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

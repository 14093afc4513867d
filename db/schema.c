/* schema.c: where the database file is, opening it, and bringing its schema up to date: the
 * migrations, the checks of an opened file's shape, and refusing one that is not pmtune's. */
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
  if ((rc = pm__dbi_query_int(db, "PRAGMA user_version", &now)) != PM_OK || now == latest) return rc;
  if ((rc = pm__db_begin(db)) != PM_OK) return rc;
  for (;;) {
    int64_t v = 0, objects = 0;
    if ((rc = pm__dbi_query_int(db, "PRAGMA user_version", &v)) != PM_OK) goto fail;
    if (v > latest) {
      rc = pm__seterr(db->c, PM_EDB,
                      "tuning database %s: schema version %lld is newer than this pmtune's (%d): "
                      "use a newer pmtune; the file was left as it is",
                      db->path, (long long)v, latest);
      goto fail;
    }
    if (v == latest) break;
    if (v == 0) {
      if ((rc = pm__dbi_query_int(db, "SELECT count(*) FROM sqlite_schema", &objects)) != PM_OK) goto fail;
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
                      m->file, err ? err : sqlite3_errstr(r), pm__dbi_code_name(r));
      sqlite3_free(err);
      goto fail;
    }
    int64_t after = 0;
    if ((rc = pm__dbi_query_int(db, "PRAGMA user_version", &after)) != PM_OK) goto fail;
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
    pm__dbi_set_busy_wait(db->sql, &db->wait, db->path);
    PM__SQLITE(db, sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL));
    if ((rc = pm__dbi_query_int(db, "PRAGMA application_id", app)) == PM_OK &&
        (rc = pm__dbi_query_int(db, "PRAGMA user_version", version)) == PM_OK &&
        (rc = pm__dbi_query_int(db, "SELECT count(*) FROM sqlite_schema", objects)) == PM_OK) {
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
int pm__dbi_reference_schema(pm__db *db, int64_t version, sqlite3 **ref) {
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
int pm__dbi_foreign_objects(pm__db *db, sqlite3 *ref,
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

int pm__dbi_check_shape(pm__db *db, int64_t version, int *differs, int refuse_triggers) {
  int rc = PM_OK, r;
  if (differs) *differs = 0;
  sqlite3 *ref = NULL;
  sqlite3_stmt *want = NULL, *have = NULL;
  if ((rc = pm__dbi_reference_schema(db, version, &ref)) != PM_OK) goto fail;
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
    if ((rc = pm__dbi_foreign_objects(db, ref, first_trigger, &t)) != PM_OK) goto fail;
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
  db->memory = memory;

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
  if (!db->readonly && (rc = pm__dbi_check_shape(db, pm__db_schema_latest(), NULL, 1)) != PM_OK)
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

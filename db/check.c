/* check.c: `pmtune db check`: SQLite's integrity check, orphan rows, the schema's version and
 * shape, and objects that are not pmtune's, said one line each. */
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
                    db->path, sqlite3_errmsg(db->sql), pm__dbi_code_name(step));
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
  if ((rc = pm__dbi_check_shape(db, pm__db_schema_latest(), &differs, 1)) != PM_OK) goto fail;
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
      pm__dbi_set_busy_wait(rw, &rw_wait, db->path);
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
    add(&r, 1, "integrity     PROBLEM: %s (%s)", sqlite3_errmsg(h), pm__dbi_code_name(step));
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
  if ((rc = pm__dbi_check_shape(db, db->version_was, &differs, 0)) == PM_OK) {
    add(&r, 0, "schema        ok (as migrations 1 to %d make it)", db->version_was);
    sqlite3 *ref = NULL;
    if ((rc = pm__dbi_reference_schema(db, db->version_was, &ref)) == PM_OK)
      rc = pm__dbi_foreign_objects(db, ref, report_foreign, &r);
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
  if ((rc = pm__dbi_query_int(db, "PRAGMA application_id", &v)) != PM_OK) goto fail;
  if (v != APPLICATION_ID)
    add(&r, 1, "application   PROBLEM: application_id %lld is not pmtune's", (long long)v);
  if ((rc = pm__dbi_query_int(db, "PRAGMA user_version", &v)) != PM_OK) goto fail;
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
  if ((rc = pm__dbi_query_int(db, "SELECT count(*) FROM gpu", &gpus)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM run", &runs)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM run WHERE status = 'running'", &running)) !=
          PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM run WHERE status = 'interrupted'", &interrupted)) !=
          PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM measurement", &meas)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM measurement WHERE status = 'ok'", &okm)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM measurement WHERE status <> 'ok'", &failed)) !=
          PM_OK ||
      (rc = pm__dbi_query_int(db,
                      "SELECT count(*) FROM measurement WHERE template_sha256 NOT IN "
                      "(SELECT sha256 FROM template WHERE current = 1)",
                      &stale)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM winner", &winners)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM cubin", &cubins)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT ifnull(sum(size), 0) FROM cubin", &bytes)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT count(*) FROM seen", &seen)) != PM_OK ||
      (rc = pm__dbi_query_int(db, "SELECT ifnull(sum(calls), 0) FROM seen", &calls)) != PM_OK)
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

/* seen.c: the sizes that library calls served without a tuned winner, counted per GPU (table
 * `seen`, migration 0002): adding a recording's counts, and listing them most called first,
 * which is what `pmtune tune --seen` tunes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int pm__db_seen_add(pm__db *db, int64_t gpu_id, const pm__db_problem *ps, const int64_t *calls,
                    size_t n) {
  pm_ctx *c = pm__db_ctx(db);
  sqlite3 *h = pm__db_handle(db);
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  char(*texts)[PM__DB_PROBLEM_MAX] = NULL, now[32];
  if (n == 0) return PM_OK;
  if (ps == NULL || calls == NULL)
    return pm__seterr(c, PM_EINVAL, "seen: no problems or no counts given");
  if (n > SIZE_MAX / sizeof *texts || (texts = pm__malloc(n * sizeof *texts)) == NULL)
    return pm__seterr(c, PM_ENOMEM, "tuning database %s: seen: out of memory",
                      pm__db_filename(db));
  /* Every problem and count is checked before anything is written. */
  for (size_t i = 0; i < n; i++) {
    if ((rc = pm__db_problem_text(db, &ps[i], texts[i])) != PM_OK) {
      rc = pm__seterr(c, rc, "seen: problem %zu of %zu: %s", i, n, pm_errmsg(c));
      goto out;
    }
    if (calls[i] < 1) {
      rc = pm__seterr(c, PM_EINVAL, "seen: %s %s: %lld calls (at least 1)", ps[i].op, texts[i],
                      (long long)calls[i]);
      goto out;
    }
  }
  if ((rc = pm__db_begin(db)) != PM_OK) goto out;
  /* The GPU must exist: say so, rather than "FOREIGN KEY constraint failed". One time for the
   * whole recording, the clock's: a clock set back keeps last_seen where it was. */
  PM__SQLITE(db, sqlite3_prepare_v2(h,
                                    "SELECT (SELECT count(*) FROM gpu WHERE id = ?1),"
                                    " strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, gpu_id));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  if (sqlite3_column_int(st, 0) != 1) {
    rc = pm__seterr(c, PM_EINVAL, "seen: no GPU %lld in %s", (long long)gpu_id,
                    pm__db_filename(db));
    goto fail;
  }
  const char *clock;
  PM__SQLITE_TEXT(db, st, 1, clock);
  snprintf(now, sizeof now, "%s", clock ? clock : "");
  pm__db_finalize(&st);
  PM__SQLITE(db, sqlite3_prepare_v2(
                     h,
                     "INSERT INTO seen (gpu_id, op, dtype, rows, cols, n, radius, variant, problem,"
                     " calls, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
                     " ?10, ?11, ?11)"
                     " ON CONFLICT (gpu_id, op, dtype, problem) DO UPDATE SET"
                     " calls = CASE WHEN seen.calls > 9223372036854775807 - excluded.calls"
                     " THEN 9223372036854775807 ELSE seen.calls + excluded.calls END,"
                     " last_seen = max(seen.last_seen, excluded.last_seen)",
                     -1, &st, NULL));
  for (size_t i = 0; i < n; i++) {
    sqlite3_reset(st);
    PM__SQLITE(db, sqlite3_bind_int64(st, 1, gpu_id));
    PM__SQLITE(db, pm__db_bind_problem(st, 2, &ps[i], texts[i]));
    PM__SQLITE(db, sqlite3_bind_int64(st, 10, calls[i]));
    PM__SQLITE(db, sqlite3_bind_text(st, 11, now, -1, SQLITE_STATIC));
    PM__SQLITE_ST(db, st, sqlite3_step(st));
  }
  pm__db_finalize(&st);
  rc = pm__db_commit(db);
  goto out;
fail:
  pm__db_finalize(&st);
  pm__db_rollback(db);
out:
  free(texts);
  return rc;
}

int pm__db_seen_list(pm__db *db, int64_t gpu_id, const char *op, size_t limit,
                     int (*cb)(void *arg, const pm__db_problem *p, int64_t calls), void *arg) {
  sqlite3 *h = pm__db_handle(db);
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  char text[PM__DB_PROBLEM_MAX];
  size_t handed = 0;
  if (cb == NULL) return pm__seterr(pm__db_ctx(db), PM_EINVAL, "seen: no callback given");
  /* A file of schema 1, opened read-only (never migrated), has recorded nothing. */
  PM__SQLITE(db, sqlite3_prepare_v2(
                     h, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'seen'",
                     -1, &st, NULL));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  int have = sqlite3_column_int(st, 0);
  pm__db_finalize(&st);
  if (!have) return PM_OK;
  PM__SQLITE(db, sqlite3_prepare_v2(h,
                                    "SELECT op, dtype, ifnull(rows, 0), ifnull(cols, 0),"
                                    " ifnull(n, 0), ifnull(radius, 0), variant, calls"
                                    " FROM seen WHERE gpu_id = ?1 AND (?2 IS NULL OR op = ?2)"
                                    " ORDER BY calls DESC, id",
                                    -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_int64(st, 1, gpu_id));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    const char *op_text, *dtype, *variant;
    PM__SQLITE_TEXT(db, st, 0, op_text);
    PM__SQLITE_TEXT(db, st, 1, dtype);
    PM__SQLITE_TEXT(db, st, 6, variant);
    pm__db_problem p = {.op = op_text,
                        .dtype = dtype,
                        .rows = sqlite3_column_int64(st, 2),
                        .cols = sqlite3_column_int64(st, 3),
                        .n = sqlite3_column_int64(st, 4),
                        .radius = sqlite3_column_int(st, 5),
                        .variant = variant};
    int64_t calls = sqlite3_column_int64(st, 7);
    if (pm__db_problem_text(db, &p, text) != PM_OK) continue; /* not a problem of these ops */
    if (cb(arg, &p, calls) != 0 || ++handed == limit) break;
  }
  if (r != SQLITE_ROW) PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

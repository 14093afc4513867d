/* rows.c: what the tools list from the database, as C values rather than SQL: the GPUs, the
 * winners (view `winner`), one problem's best times over two parameters, and the JSON types of a
 * text's fields. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

int pm__db_gpus(pm__db *db, int (*cb)(void *arg, int64_t id, const pm__device_info *d),
                void *arg) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  PM__SQLITE(db, sqlite3_prepare_v2(pm__db_handle(db),
                                    "SELECT id, uuid, name, cc_major, cc_minor, sm_count, mem_bytes"
                                    " FROM gpu ORDER BY name, id",
                                    -1, &st, NULL));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    const char *uuid, *name;
    PM__SQLITE_TEXT(db, st, 1, uuid);
    PM__SQLITE_TEXT(db, st, 2, name);
    pm__device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid ? uuid : "");
    snprintf(d.name, sizeof d.name, "%s", name ? name : "");
    d.cc_major = sqlite3_column_int(st, 3);
    d.cc_minor = sqlite3_column_int(st, 4);
    d.sm_count = sqlite3_column_int(st, 5);
    d.mem_bytes = (size_t)sqlite3_column_int64(st, 6);
    if ((rc = cb(arg, sqlite3_column_int64(st, 0), &d)) != 0) goto fail;
  }
  PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_winners(pm__db *db, const char *op, pm__db_winner_order order,
                   int (*cb)(void *arg, const pm__db_winner_row *w), void *arg) {
#define WINNERS                                                                           \
  "SELECT gpu_name, op, dtype, problem, config, params, seed_config, median_ms, gbps,"      \
  " speedup, seed_median_ms, gpu_id, ifnull(rows, 0), ifnull(cols, 0), ifnull(n, 0),"     \
  " ifnull(radius, 0), variant FROM winner WHERE ?1 IS NULL OR op = ?1 ORDER BY "
  static const char *const sql[] = {
      [PM__DB_WINNERS_BY_NAME] = WINNERS "gpu_name, op, dtype <> 'f32', dtype, variant, radius,"
                                         " coalesce(rows * cols, n)",
      [PM__DB_WINNERS_BY_GPU] = WINNERS "gpu_id, op, variant, radius, coalesce(rows * cols, n)"};
#undef WINNERS
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  PM__SQLITE(db, sqlite3_prepare_v2(pm__db_handle(db), sql[order == PM__DB_WINNERS_BY_GPU], -1,
                                    &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    pm__db_winner_row w;
    memset(&w, 0, sizeof w);
    PM__SQLITE_TEXT(db, st, 0, w.gpu_name);
    PM__SQLITE_TEXT(db, st, 1, w.op);
    PM__SQLITE_TEXT(db, st, 2, w.dtype);
    PM__SQLITE_TEXT(db, st, 3, w.problem);
    PM__SQLITE_TEXT(db, st, 4, w.config);
    PM__SQLITE_TEXT(db, st, 5, w.params);
    PM__SQLITE_TEXT(db, st, 6, w.seed_config);
    PM__SQLITE_TEXT(db, st, 16, w.variant);
    w.median_ms = sqlite3_column_double(st, 7);
    w.gbps = sqlite3_column_double(st, 8);
    w.speedup = sqlite3_column_type(st, 9) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 9);
    w.seed_median_ms = sqlite3_column_double(st, 10);
    w.gpu_id = sqlite3_column_int64(st, 11);
    w.rows = sqlite3_column_int64(st, 12);
    w.cols = sqlite3_column_int64(st, 13);
    w.n = sqlite3_column_int64(st, 14);
    w.radius = sqlite3_column_int(st, 15);
    if ((rc = cb(arg, &w)) != 0) goto fail;
  }
  PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_best_times(pm__db *db, const char *op, const char *problem, int64_t gpu_id,
                      const char *px, const char *py,
                      int (*cb)(void *arg, int64_t x, int64_t y, double ms), void *arg) {
  int rc = PM_OK, r;
  sqlite3_stmt *st = NULL;
  PM__SQLITE(db, sqlite3_prepare_v2(
                     pm__db_handle(db),
                     "SELECT json_extract(params, '$.' || ?4), json_extract(params, '$.' || ?5),"
                     " min(median_ms) FROM current_measurement"
                     " WHERE op = ?1 AND problem = ?2 AND gpu_id = ?3 AND status = 'ok'"
                     " AND verified = 1 GROUP BY 1, 2",
                     -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 2, problem, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int64(st, 3, gpu_id));
  PM__SQLITE(db, sqlite3_bind_text(st, 4, px, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_text(st, 5, py, -1, SQLITE_STATIC));
  while ((r = sqlite3_step(st)) == SQLITE_ROW)
    if ((rc = cb(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                 sqlite3_column_double(st, 2))) != 0)
      goto fail;
  PM__SQLITE_ST(db, st, r);
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_json_types(pm__db *db, const char *text, int len, const char *const *paths, int n,
                      char (*types)[8], int *valid) {
  int rc = PM_OK;
  sqlite3_stmt *st = NULL;
  *valid = pm__db_json_check(pm__db_handle(db), text, len);
  if (*valid < 0) return pm__seterr(pm__db_ctx(db), PM_ENOMEM, "JSON: out of memory reading it");
  if (!*valid || n == 0) return PM_OK;
  PM__SQLITE(db, sqlite3_prepare_v2(pm__db_handle(db), "SELECT json_type(?1, ?2)", -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, text, len, SQLITE_STATIC));
  for (int i = 0; i < n; i++) {
    PM__SQLITE(db, sqlite3_bind_text(st, 2, paths[i], -1, SQLITE_STATIC));
    PM__SQLITE_ST(db, st, sqlite3_step(st));
    const char *t;
    PM__SQLITE_TEXT(db, st, 0, t);
    snprintf(types[i], sizeof types[i], "%s", t ? t : "");
    PM__SQLITE_ST(db, st, sqlite3_reset(st));
  }
fail:
  pm__db_finalize(&st);
  return rc;
}

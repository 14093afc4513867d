/* skip.c: the cost of the tuner asking the database whether a candidate was measured already
 * (pm__db_measured, once for every candidate of every size it tunes or carries: tens of
 * thousands a run), on a database of the caller's choice (one holding a shipped document is what
 * a carrying after an import meets). Takes the first N rows of each op and type (the problems
 * and configurations stored there, "found") and the same problems with a configuration stored
 * nowhere ("absent"), asks each of them with and without the GPU's model (model 1: any GPU of the
 * model, as carrying asks), and prints the microseconds a question took, the median of 5 passes.
 * Usage: pmtune_bench_skip DB [--rows N] (default 400); DB is only read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "internal.h"
#include "pmdb.h"
#include "runtime.h"
#include "op.h"

typedef struct row {
  pm__db_problem p;
  int64_t gpu;
  char op[16], dtype[8], variant[32], config[128], sha[65];
} row;

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The microseconds one question took: the median of 5 passes over rows[0, n). */
static double time_questions(pm__db *db, row *rows, int n, int model, int absent, int *found) {
  double us[5];
  for (int pass = 0; pass < 5; pass++) {
    double t0 = pm__now_ms();
    *found = 0;
    for (int i = 0; i < n; i++) {
      int f = 0;
      if (pm__db_measured(db, rows[i].gpu, model, &rows[i].p, absent ? "bx=7 none" : rows[i].config,
                          rows[i].sha, &f) != PM_OK)
        return -1;
      *found += f;
    }
    us[pass] = (pm__now_ms() - t0) * 1e3 / n;
  }
  qsort(us, 5, sizeof us[0], by_double);
  return us[2];
}

int main(int argc, char **argv) {
  int per = 400;
  if (argc < 2 || (argc == 4 && strcmp(argv[2], "--rows") == 0 && (per = atoi(argv[3])) <= 0) ||
      (argc != 2 && argc != 4)) {
    fprintf(stderr, "usage: pmtune_bench_skip DB [--rows N]\n");
    return 2;
  }
  pm_ctx *c = NULL;
  pm__db *db = NULL;
  if (pm__ctx_create(&c, PM_DEVICE_NONE, NULL) != PM_OK ||
      pm__db_open(c, argv[1], PM__DB_READONLY, pm__ops_db(), &db) != PM_OK) {
    fprintf(stderr, "pmtune_bench_skip: %s\n", c ? pm_errmsg(c) : "no context");
    return 1;
  }
  sqlite3_stmt *st = NULL;
  long long total = 0;
  sqlite3_prepare_v2(pm__db_handle(db), "SELECT count(*) FROM measurement", -1, &st, NULL);
  if (sqlite3_step(st) == SQLITE_ROW) total = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  printf("# pmtune_bench_skip %s: %lld measurements; %d rows of each op and type\n", argv[1],
         total, per);
  printf("%-8s %-5s %6s %8s %14s %14s\n", "op", "type", "rows", "model", "found us/q",
         "absent us/q");
  for (int i = 0; pm__ops[i] != NULL; i++)
    for (int t = 0; t < PM__NDTYPES; t++) {
      row *rows = calloc((size_t)per, sizeof *rows);
      int n = 0;
      sqlite3_prepare_v2(pm__db_handle(db),
                         "SELECT gpu_id, op, dtype, ifnull(rows, 0), ifnull(cols, 0), ifnull(n, 0),"
                         " ifnull(radius, 0), variant, config, template_sha256 FROM measurement"
                         " WHERE op = ?1 AND dtype = ?2 ORDER BY id LIMIT ?3",
                         -1, &st, NULL);
      sqlite3_bind_text(st, 1, pm__ops[i]->name, -1, SQLITE_STATIC);
      sqlite3_bind_text(st, 2, pm_dtype_name((pm_dtype)t), -1, SQLITE_STATIC);
      sqlite3_bind_int(st, 3, per);
      while (n < per && sqlite3_step(st) == SQLITE_ROW) {
        row *r = &rows[n++];
        r->gpu = sqlite3_column_int64(st, 0);
        snprintf(r->op, sizeof r->op, "%s", (const char *)sqlite3_column_text(st, 1));
        snprintf(r->dtype, sizeof r->dtype, "%s", (const char *)sqlite3_column_text(st, 2));
        snprintf(r->variant, sizeof r->variant, "%s", (const char *)sqlite3_column_text(st, 7));
        snprintf(r->config, sizeof r->config, "%s", (const char *)sqlite3_column_text(st, 8));
        snprintf(r->sha, sizeof r->sha, "%s", (const char *)sqlite3_column_text(st, 9));
        r->p = (pm__db_problem){.op = r->op,
                                .dtype = r->dtype,
                                .rows = sqlite3_column_int64(st, 3),
                                .cols = sqlite3_column_int64(st, 4),
                                .n = sqlite3_column_int64(st, 5),
                                .radius = sqlite3_column_int(st, 6),
                                .variant = r->variant[0] ? r->variant : NULL};
      }
      sqlite3_finalize(st);
      for (int model = 0; n > 0 && model < 2; model++) {
        int found = 0, none = 0;
        double f = time_questions(db, rows, n, model, 0, &found);
        double a = time_questions(db, rows, n, model, 1, &none);
        if (f < 0 || a < 0 || found != n || none != 0) {
          fprintf(stderr, "pmtune_bench_skip: %s (found %d of %d, absent found %d)\n",
                  pm_errmsg(c), found, n, none);
          return 1;
        }
        printf("%-8s %-5s %6d %8d %14.1f %14.1f\n", pm__ops[i]->name,
               pm_dtype_name((pm_dtype)t), n, model, f, a);
      }
      free(rows);
    }
  pm__db_close(db);
  pm__ctx_free(c);
  return 0;
}

/* loo.c: how well serving decides a size nobody tuned, judged from a results document alone, with
 * no GPU: each tuned size of the document (or a sample of them) is left out, decided from the
 * rest (pm__decide_quiet, as a call is served from those results), and the configuration served
 * looked up among what was measured at the size left out. A document that carries (each size's
 * neighbours' best measured there too: db/README.md) has most served configurations measured at
 * the size itself, so "exact over served" (the fastest measured there over the served one's time
 * there) is known without timing anything. A size left out has its neighbours a grid step or more
 * away on each side, so this is harder than a size between two tuned ones; it compares serving
 * rules and documents, and does not replace the random-sizes study (bench/serve/random.c).
 * Usage: pmtune_loo DOC [--ops a,b] [--dtypes f32,f16] [--count N] [--seed S] [--gpu NAME]
 *                       [--list]
 * (defaults: every op and type, 100 sizes an op and type drawn with seed 1; the device is the
 * document's first GPU, else its first named NAME, as measured; --count 0: every size). Prints
 * a line a size with --list, a summary line an op and type, and one for all; exits 0, or 2 on
 * bad arguments or an error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "internal.h" /* db's: pm__db_handle */
#include "runtime.h"
#include "serve.h"
#include "study.h"

#define MAX_DOC (512u << 20)

/* A tuned size of the document: its problem as stored, and how many configurations it has. */
typedef struct tuned {
  char op[32], dtype[8], variant[40], problem[64];
  int64_t rows, cols, n;
  int radius;
} tuned;

/* What one op and type's sizes gave. */
typedef struct tally {
  int count, within95, within90, unmeasured, between, nearest, dflt, failed;
  double worst, sum_log;
  char worst_problem[256];
} tally;

static void tally_add(tally *t, double ratio, const char *problem) {
  t->count++;
  t->within95 += ratio >= 0.95, t->within90 += ratio >= 0.90;
  t->sum_log += log(ratio);
  if (t->count == 1 || ratio < t->worst)
    t->worst = ratio, snprintf(t->worst_problem, sizeof t->worst_problem, "%s", problem);
}

static void tally_print(const char *what, const tally *t) {
  int judged = t->count;
  printf("%-14s %4d judged: %4d within 95%% of the fastest measured, %4d within 90%%, worst %.3f"
         " (%s), geomean %.3f; %d served unmeasured there; between %d, nearest %d, default %d;"
         " %d failed\n",
         what, judged, t->within95, t->within90, judged ? t->worst : 0,
         judged ? t->worst_problem : "-", judged ? exp(t->sum_log / judged) : 0, t->unmeasured,
         t->between, t->nearest, t->dflt, t->failed);
}

/* The ops and types asked (--ops, --dtypes: study.h parses them). */
typedef struct wanted {
  const pm__op *ops[PM__MAX_OPS];
  int nops;
  unsigned dtypes; /* bit t for pm_dtype t */
} wanted;

static int is_wanted(const wanted *w, const char *op, const char *dtype) {
  const pm__op *o = pm__op_find(op);
  int t = pm__dtype_find(dtype);
  if (o == NULL || t < 0 || !(w->dtypes & 1u << t)) return 0;
  for (int i = 0; i < w->nops; i++)
    if (w->ops[i] == o) return 1;
  return 0;
}

static int exec(sqlite3 *h, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(h, sql, NULL, NULL, &err) == SQLITE_OK) return 0;
  fprintf(stderr, "loo: %s: %s\n", sql, err ? err : "?");
  sqlite3_free(err);
  return -1;
}

/* The document's tuned sizes of the ops and types asked (at least 3 measurements each), in the
 * database's order; *n receives how many. */
static tuned *tuned_sizes(sqlite3 *h, const wanted *w, size_t *n) {
  sqlite3_stmt *st = NULL;
  tuned *out = NULL;
  size_t cap = 0;
  *n = 0;
  if (sqlite3_prepare_v2(h,
                         "SELECT op, dtype, variant, problem, coalesce(rows, 0), coalesce(cols, 0),"
                         " coalesce(n, 0), coalesce(radius, 0) FROM measurement"
                         " WHERE status = 'ok' AND verified = 1 GROUP BY op, dtype, problem"
                         " HAVING count(*) >= 3 ORDER BY op, dtype, variant, radius, rows, cols, n",
                         -1, &st, NULL) != SQLITE_OK)
    return NULL;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *op = (const char *)sqlite3_column_text(st, 0);
    const char *dtype = (const char *)sqlite3_column_text(st, 1);
    if (!is_wanted(w, op, dtype)) continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      tuned *grown = realloc(out, cap * sizeof *grown);
      if (grown == NULL) break;
      out = grown;
    }
    tuned *t = &out[(*n)++];
    snprintf(t->op, sizeof t->op, "%s", op);
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype);
    snprintf(t->variant, sizeof t->variant, "%s", (const char *)sqlite3_column_text(st, 2));
    snprintf(t->problem, sizeof t->problem, "%s", (const char *)sqlite3_column_text(st, 3));
    t->rows = sqlite3_column_int64(st, 4), t->cols = sqlite3_column_int64(st, 5);
    t->n = sqlite3_column_int64(st, 6), t->radius = sqlite3_column_int(st, 7);
  }
  sqlite3_finalize(st);
  return out;
}

/* The fastest median measured at t (*best) and config's there (*mine, 0 where not measured). */
static int measured_at(sqlite3 *h, const tuned *t, const char *config, double *best,
                       double *mine) {
  sqlite3_stmt *st = NULL;
  *best = 0, *mine = 0;
  if (sqlite3_prepare_v2(h,
                         "SELECT config, min(median_ms) FROM measurement WHERE op = ?1 AND"
                         " dtype = ?2 AND problem = ?3 AND status = 'ok' AND verified = 1"
                         " GROUP BY config",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text(st, 1, t->op, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->dtype, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, t->problem, -1, SQLITE_STATIC);
  while (sqlite3_step(st) == SQLITE_ROW) {
    double ms = sqlite3_column_double(st, 1);
    if (*best == 0 || ms < *best) *best = ms;
    if (strcmp((const char *)sqlite3_column_text(st, 0), config) == 0) *mine = ms;
  }
  sqlite3_finalize(st);
  return 0;
}

/* The device decided for: the document's first GPU named gpu (NULL: its first GPU), as it was
 * measured (a GPU of the document: the rows of its model serve). 1, or 0 where there is none. */
static int as_gpu(sqlite3 *h, const char *gpu, pm__device_info *dev) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(h,
                         "SELECT uuid, name, cc_major, cc_minor, arch, sm_count, mem_bytes FROM gpu"
                         " WHERE ?1 IS NULL OR name = ?1 ORDER BY id LIMIT 1",
                         -1, &st, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_text(st, 1, gpu, -1, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW) {
    memset(dev, 0, sizeof *dev);
    snprintf(dev->uuid, sizeof dev->uuid, "%s", (const char *)sqlite3_column_text(st, 0));
    snprintf(dev->name, sizeof dev->name, "%s", (const char *)sqlite3_column_text(st, 1));
    dev->cc_major = sqlite3_column_int(st, 2), dev->cc_minor = sqlite3_column_int(st, 3);
    snprintf(dev->arch, sizeof dev->arch, "%s", (const char *)sqlite3_column_text(st, 4));
    dev->sm_count = sqlite3_column_int(st, 5);
    dev->mem_bytes = (size_t)sqlite3_column_int64(st, 6), dev->max_threads_per_block = 1024;
    found = 1;
  }
  sqlite3_finalize(st);
  return found;
}

static int drop(sqlite3 *h, const tuned *t) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h, "DELETE FROM measurement WHERE op = ?1 AND dtype = ?2 AND problem = ?3",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text(st, 1, t->op, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->dtype, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, t->problem, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
  sqlite3_finalize(st);
  return rc;
}

int main(int argc, char **argv) {
  const char *gpu = NULL, *ops = NULL;
  wanted w = {.dtypes = ~0u};
  int count = 100, list = 0;
  unsigned long long seed = 1;
  if (argc < 2) goto usage;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--list") == 0) {
      list = 1;
      continue;
    }
    if (v == NULL) goto usage;
    if (strcmp(a, "--count") == 0) count = atoi(v);
    else if (strcmp(a, "--seed") == 0) seed = strtoull(v, NULL, 0);
    else if (strcmp(a, "--gpu") == 0) gpu = v;
    else if (strcmp(a, "--ops") == 0) ops = v;
    else if (strcmp(a, "--dtypes") == 0) {
      if ((w.dtypes = pm__study_parse_dtypes(v)) == 0) goto usage;
    }
    else goto usage;
    i++;
  }
  if (count < 0 || seed == 0 || pm__study_parse_ops(ops, w.ops, &w.nops) != 0) goto usage;

  pm_ctx *c = NULL;
  pm__db *db = NULL;
  size_t len = 0;
  char *text = pm__read_file(argv[1], MAX_DOC, &len);
  if (text == NULL || pm__gunzip(&text, &len, MAX_DOC) != 0) {
    fprintf(stderr, "loo: cannot read %s\n", argv[1]);
    return 2;
  }
  if (pm__ctx_create(&c, PM_DEVICE_NONE, NULL) != PM_OK) {
    fprintf(stderr, "loo: cannot make a context\n");
    return 2;
  }
  pm__db_import_stats st;
  if (pm__db_open(c, NULL, PM__DB_MEMORY, pm__ops_db(), &db) != PM_OK ||
      pm__db_import_known(db, text, len, &st) != PM_OK) {
    fprintf(stderr, "loo: %s\n", pm_errmsg(c));
    return 2;
  }
  free(text);
  sqlite3 *h = pm__db_handle(db);
  if (!as_gpu(h, gpu, &c->dev)) {
    fprintf(stderr, "loo: %s names no GPU %s\n", argv[1], gpu ? gpu : "");
    return 2;
  }
  size_t nsizes = 0;
  tuned *sizes = tuned_sizes(h, &w, &nsizes);

  /* a sample of each op and type's sizes: a seeded shuffle of each run of them, its first count
   * (seeded by the op and type too, so that --ops and --dtypes change no sample) */
  tally all = {0}, one = {0};
  for (size_t begin = 0, end; begin < nsizes; begin = end) {
    for (end = begin; end < nsizes && strcmp(sizes[end].op, sizes[begin].op) == 0 &&
                      strcmp(sizes[end].dtype, sizes[begin].dtype) == 0;
         end++) {
    }
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (const char *p = sizes[begin].op; *p; p++) s = s * 131 + (unsigned char)*p;
    for (const char *p = sizes[begin].dtype; *p; p++) s = s * 131 + (unsigned char)*p;
    for (size_t i = end - 1; i > begin; i--) { /* Fisher-Yates, xorshift64 */
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      size_t j = begin + (size_t)(s % (i - begin + 1));
      tuned tmp = sizes[i];
      sizes[i] = sizes[j], sizes[j] = tmp;
    }
    size_t take = count == 0 || end - begin < (size_t)count ? end - begin : (size_t)count;
    memset(&one, 0, sizeof one);
    const pm__op *op = pm__op_find(sizes[begin].op);
    for (size_t i = begin; op != NULL && i < begin + take; i++) {
      const tuned *t = &sizes[i];
      pm__db_problem dbp = {t->op, t->dtype, t->rows, t->cols, t->n, t->radius, t->variant};
      pm__problem pr;
      pm__db_known known = {0};
      pm__decision d;
      double best = 0, mine = 0;
      char name[96];
      if (!pm__problem_of_db(op, &dbp, &pr)) {
        fprintf(stderr, "loo: %s %s %s: not a problem of the op\n", t->op, t->dtype, t->problem);
        one.failed++;
        continue;
      }
      pr.caller_align = 16;
      pm__problem_text(op, &pr, name, sizeof name);
      if (exec(h, "SAVEPOINT loo") != 0 || drop(h, t) != 0) return 2;
      int rc = pm__op_known_load(db, &c->dev, op, &known);
      if (rc == PM_OK) pm__decide_quiet(c, &known, NULL, op, &pr, &d);
      pm__db_known_free(&known);
      if (exec(h, "ROLLBACK TO loo") != 0 || exec(h, "RELEASE loo") != 0) return 2;
      if (rc != PM_OK || measured_at(h, t, d.config, &best, &mine) != 0) {
        fprintf(stderr, "loo: %s %s: %s\n", op->name, name, rc != PM_OK ? pm_errmsg(c) : "?");
        one.failed++;
        continue;
      }
      const char *kind = pm__decision_kind(&d);
      one.between += strcmp(kind, "between") == 0, one.nearest += strcmp(kind, "nearest") == 0;
      one.dflt += strcmp(kind, "default") == 0;
      if (mine == 0) {
        one.unmeasured++;
        if (list) printf("%s %s: %s %s, not measured there\n", op->name, name, kind, d.config);
        continue;
      }
      tally_add(&one, best / mine, name);
      if (list)
        printf("%s %s: %s%s %.3f %s | from %ux%u n=%u%s, predicted %.4g ms (default %.4g),"
               " measured %.4g (fastest %.4g)\n",
               op->name, name, kind, d.guarded ? " (default)" : "", best / mine, d.config,
               d.tuned_rows, d.tuned_cols, d.tuned_n, d.between ? " and another" : "",
               d.predicted_ms, d.default_ms, mine, best);
    }
    char what[48];
    snprintf(what, sizeof what, "%s %s", sizes[begin].op, sizes[begin].dtype);
    tally_print(what, &one);
    if (one.count) {
      if (all.count == 0 || one.worst < all.worst) {
        all.worst = one.worst;
        snprintf(all.worst_problem, sizeof all.worst_problem, "%.47s %.200s", what,
                 one.worst_problem);
      }
    }
    all.count += one.count, all.within95 += one.within95, all.within90 += one.within90;
    all.sum_log += one.sum_log, all.unmeasured += one.unmeasured, all.failed += one.failed;
    all.between += one.between, all.nearest += one.nearest, all.dflt += one.dflt;
  }
  tally_print("all", &all);
  free(sizes);
  pm__db_close(db);
  pm__ctx_free(c);
  return 0;
usage:
  fprintf(stderr, "usage: pmtune_loo DOC [--ops a,b] [--dtypes f32,f16] [--count N] [--seed S] "
                  "[--gpu NAME] [--list]\n");
  return 2;
}

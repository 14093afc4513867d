/* between.c: the "between tuned sizes" study (bench/README.md). At sizes no one tuned, the
 * configuration that a database tuned at the default sizes serves (pm__decide: the nearest tuned
 * size) against the winner of tuning that exact size; and, at each op's largest default tune size,
 * the op's built-in default against the tuned winner there. Everything is tuned first (the tuning
 * `pmtune tune` does by default, pm__tune_problem with pm__tune_opts_default, into SCRATCH_DB),
 * then timed in one run with the tuner's protocol (timer.h), the two of each pair in alternating
 * rounds so that drift hits both. With --tune-sizes it times, instead, at each op's default tune
 * sizes, what a call is served (MAIN_DB's exact winner, else the shipped results': with MAIN_DB
 * empty, what an installed pmtune serves out of the box) against a fresh tuning of the same size on
 * this GPU. Prints JSON lines on stdout (bench/README.md describes them), progress on stderr; exits
 * 0 only where every step succeeded.
 * Usage: pmtune_bench_between MAIN_DB SCRATCH_DB [--sizes N | --tune-sizes] [--seed S]
 *                             [--ops a,b] [--rounds R] [--device N] [--commit C] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "study.h"
#include "runtime.h"
#include "serve.h"
#include "tune.h"

#ifndef PM_COMMIT
#define PM_COMMIT "unknown"
#endif

#define MAX_SIZES 200 /* --sizes at most */
#define ROUNDS 5      /* alternating rounds of timing a pair, by default (--rounds) */
/* The ratio within which a configuration counts as good: served between tuned sizes, served at a
 * tune size (--tune-sizes), the default at the largest tune size. */
#define WITHIN_BETWEEN 1.05
#define WITHIN_TUNE_SIZE 1.03
#define WITHIN_DEFAULT 1.10

/* One thing to time: a problem and the two configurations to compare on it. */
typedef struct item {
  const pm__op *op;
  pm__problem pr;
  int at_tune_size; /* at a default tune size: served (MAIN_DB, then shipped) against SCRATCH_DB */
  int is_default;  /* the default study: op->fallback against the exact winner; else served
                      (MAIN_DB's decision) against the exact winner (SCRATCH_DB's) */
  int in_scratch;  /* the exact winner is SCRATCH_DB's, tuned by this run (else MAIN_DB's) */
  int failed;
} item;

/* What the program was asked, and what it holds open. */
typedef struct study {
  pm_ctx *c;
  pm__db *main, *scratch;
  pm__db_known kmain[PM__MAX_OPS], kscratch[PM__MAX_OPS];
  const pm__op *ops[PM__MAX_OPS];
  int nops;
  int rounds; /* alternating rounds of timing a pair */
  pm__timer *tm;
  int driver;
} study;

static int usage(const char *why) {
  fprintf(stderr,
          "pmtune_bench_between: %s\n"
          "usage: pmtune_bench_between MAIN_DB SCRATCH_DB [--sizes N | --tune-sizes] [--seed S] "
          "[--ops a,b] [--rounds R] [--device N] [--commit C]\n",
          why);
  return 2;
}

/* Times a (served or default) against b (the exact winner) on pr (pm__study_time on data
 * prepared here; the cubins from SCRATCH_DB's or MAIN_DB's cache, else compiled now). */
static int compare(study *st, const pm__op *op, const pm__problem *pr, const int *a, const int *b,
                   double *ms_a, double *ms_b) {
  pm__data da = {0};
  pm__db *dbs[] = {st->scratch, st->main};
  int rc = op->prepare(op, st->c, pr, PM__DEFAULT_SEED, &da);
  da.copies = pm__copies_for(st->c, op->bytes(op, pr));
  if (rc == PM_OK)
    rc = pm__study_time(st->c, st->tm, st->rounds, st->driver, dbs, 2, op, pr, &da, a, b, ms_a,
                       ms_b);
  pm__data_free(&da);
  return rc;
}

/* "4096x4096" or "1048576": a decision's tuned size. */
static void tuned_size(const pm__op *op, const pm__decision *d, char *out, size_t len) {
  if (d->source == PM__FROM_DEFAULT) snprintf(out, len, "-");
  else if (op->dims == 1) snprintf(out, len, "%u", d->tuned_n);
  else snprintf(out, len, "%ux%u", d->tuned_rows, d->tuned_cols);
}

/* The ratio within which item it's served configuration counts as good. */
static double limit_of(const item *it) {
  return it->is_default ? WITHIN_DEFAULT : it->at_tune_size ? WITHIN_TUNE_SIZE : WITHIN_BETWEEN;
}

/* Decides, times and prints item it; *ratio is served (or default) / exact. */
static int bench_item(study *st, item *it, double *ratio) {
  pm_ctx *c = st->c;
  const pm__op *op = it->op;
  int oi = pm__op_index(op), rc = PM_OK;
  pm__decision served, exact;
  char ptext[96], from[32];
  double ms_a = 0, ms_b = 0;
  pm__problem_text(op, &it->pr, ptext, sizeof ptext);
  if (it->is_default) { /* what is served where nothing is tuned */
    pm__decide(c, NULL, NULL, op, &it->pr, &served);
  } else if (it->at_tune_size) { /* what a call is served: MAIN_DB, then the shipped results */
    pm__decide(c, &st->kmain[oi], pm__shipped_known(c, op), op, &it->pr, &served);
  } else {
    pm__decide(c, &st->kmain[oi], NULL, op, &it->pr, &served);
  }
  pm__decide(c, it->in_scratch ? &st->kscratch[oi] : &st->kmain[oi], NULL, op, &it->pr, &exact);
  if (exact.source != PM__FROM_EXACT) {
    rc = pm__seterr(c, PM_ENOTFOUND, "no exact winner for it in %s (only %s%s%s)",
                    it->in_scratch ? "SCRATCH_DB" : "MAIN_DB", pm__source_name(exact.source),
                    exact.why[0] ? ": " : "", exact.why);
  } else {
    rc = compare(st, op, &it->pr, served.v, exact.v, &ms_a, &ms_b);
  }
  *ratio = rc == PM_OK ? ms_a / ms_b : 0;
  tuned_size(op, &served, from, sizeof from);
  printf("{\"kind\":\"%s\",\"op\":\"%s\",",
         it->is_default ? "default" : it->at_tune_size ? "tune_size" : "between", op->name);
  pm__study_json_str(stdout, "problem", ptext);
  printf(",\"size\":%.0f,", pm__draw_size(op, &it->pr));
  pm__study_json_str(stdout, it->is_default ? "default_config" : "served_config", served.config);
  if (!it->is_default)
    printf(",\"served_source\":\"%s\",\"served_shipped\":%s,\"served_tuned_size\":\"%s\","
           "\"distance\":%.4f",
           pm__source_name(served.source), served.shipped ? "true" : "false", from,
           served.distance);
  printf(",");
  pm__study_json_str(stdout, "exact_config", exact.source == PM__FROM_EXACT ? exact.config : "");
  printf(",\"exact_from\":\"%s\",\"same_config\":%s", it->in_scratch ? "scratch" : "main",
         strcmp(served.config, exact.config) == 0 ? "true" : "false");
  if (rc == PM_OK)
    printf(",\"%s\":%.6g,\"exact_ms\":%.6g,\"ratio\":%.4f,\"within\":%s}\n",
           it->is_default ? "default_ms" : "served_ms", ms_a, ms_b, *ratio,
           *ratio <= limit_of(it) ? "true" : "false");
  else {
    printf(",");
    pm__study_json_str(stdout, "error", pm_errmsg(c));
    printf("}\n");
  }
  fflush(stdout);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The summary line of op's ratios r[0, n) (sorts them): count, median, p90 (nearest rank),
 * max, and how many are within limit (WITHIN_BETWEEN, or WITHIN_TUNE_SIZE at the tune sizes). */
static void summary(const pm__op *op, double *r, int n, int failed, double limit) {
  int within = 0;
  qsort(r, (size_t)n, sizeof *r, cmp_double);
  for (int i = 0; i < n; i++) within += r[i] <= limit;
  int p90 = n > 0 ? (int)((9 * n + 9) / 10) - 1 : 0; /* ceil(0.9 n) - 1 */
  printf("{\"kind\":\"summary\",\"op\":\"%s\",\"count\":%d,\"failed\":%d,\"median\":%.4f,"
         "\"p90\":%.4f,\"max\":%.4f,\"within_%.2f\":%d}\n",
         op->name, n, failed, n ? pm__median(r, n, NULL, NULL) : 0, n ? r[p90] : 0,
         n ? r[n - 1] : 0, limit, within);
  fflush(stdout);
}

static void phase(const char *name, double t0) {
  double s = (pm__now_ms() - t0) / 1e3;
  fprintf(stderr, "# phase %s: %.1f s\n", name, s);
  printf("{\"kind\":\"phase\",\"phase\":\"%s\",\"seconds\":%.1f}\n", name, s);
  fflush(stdout);
}

/* Parses "a,b" into st->ops (every op where NULL). */
static int parse_ops(study *st, const char *list) {
  return pm__study_parse_ops(list, st->ops, &st->nops);
}

int main(int argc, char **argv) {
  const char *paths[2] = {NULL, NULL}, *oplist = NULL, *commit = PM_COMMIT;
  int nsizes = 20, npaths = 0, device = 0, status = 0, tune_sizes = 0, sized = 0, rounds = ROUNDS;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (strcmp(a, "--sizes") == 0 && val) {
      nsizes = (int)strtol(val, &end, 10), i++, sized = 1;
      if (*end || nsizes < 1 || nsizes > MAX_SIZES) return usage("--sizes: 1 to 200");
    } else if (strcmp(a, "--seed") == 0 && val) {
      seed = strtoull(val, &end, 0), i++;
      if (*end || seed == 0) return usage("--seed: a number other than 0");
    } else if (strcmp(a, "--rounds") == 0 && val) {
      rounds = (int)strtol(val, &end, 10), i++;
      if (*end || rounds < 1 || rounds > PM__STUDY_MAX_ROUNDS) return usage("--rounds: 1 to 64");
    } else if (strcmp(a, "--tune-sizes") == 0) {
      tune_sizes = 1;
    } else if (strcmp(a, "--device") == 0 && val) {
      device = (int)strtol(val, &end, 10), i++;
      if (*end || device < 0) return usage("--device: an index");
    } else if (strcmp(a, "--ops") == 0 && val) {
      oplist = val, i++;
    } else if (strcmp(a, "--commit") == 0 && val) {
      commit = val, i++;
    } else if (a[0] == '-' || npaths == 2) {
      return usage("unknown or incomplete argument");
    } else {
      paths[npaths++] = a;
    }
  }
  if (npaths != 2) return usage("MAIN_DB and SCRATCH_DB are needed");
  if (tune_sizes && sized) return usage("--sizes and --tune-sizes: one or the other");

  study st;
  memset(&st, 0, sizeof st);
  st.rounds = rounds;
  if (parse_ops(&st, oplist) != 0) return usage("--ops: names of operations, comma-separated");
  pm__cuda_versions(&st.driver, NULL);
  pm_options o = {.device = device, .db_path = paths[0]};
  int prev = 0, rc;
  item *items = NULL;
  double t0 = pm__now_ms();
  if ((rc = pm_open(&st.c, &o)) != PM_OK || (rc = pm__device_enter(st.c, &prev)) != PM_OK) {
    fprintf(stderr, "pmtune_bench_between: pm_open: %s\n", pm_errmsg(st.c));
    pm_close(st.c);
    return 1;
  }
  pm_ctx *c = st.c;
  if ((rc = pm__db_open(c, paths[0], PM__DB_READONLY, pm__ops_db(), &st.main)) != PM_OK) {
    fprintf(stderr, "pmtune_bench_between: MAIN_DB %s: %s (make it with `pmtune tune --db %s`)\n",
            paths[0], pm_errmsg(c), paths[0]);
    status = 1;
    goto done;
  }
  for (int i = 0; i < st.nops; i++) {
    int oi = pm__op_index(st.ops[i]);
    if ((rc = pm__op_known_load(st.main, &c->dev, st.ops[i], &st.kmain[oi])) != PM_OK ||
        (st.kmain[oi].n == 0 && !tune_sizes)) {
      fprintf(stderr, "pmtune_bench_between: MAIN_DB %s knows nothing of %s on %s%s%s "
              "(tune it with `pmtune tune --db %s`)\n", paths[0], st.ops[i]->name, c->dev.name,
              rc != PM_OK ? ": " : "", rc != PM_OK ? pm_errmsg(c) : "", paths[0]);
      status = 1;
      goto done;
    }
  }
  printf("{\"kind\":\"run\",\"gpu\":\"%s\",\"arch\":\"%s\",\"commit\":\"%s\",\"main_db\":\"%s\","
         "\"scratch_db\":\"%s\",\"mode\":\"%s\",\"sizes\":%d,\"seed\":%llu,\"ops\":\"",
         c->dev.name, c->dev.arch, commit, paths[0], paths[1],
         tune_sizes ? "tune_sizes" : "between", tune_sizes ? 0 : nsizes, seed);
  for (int i = 0; i < st.nops; i++) printf("%s%s", i ? "," : "", st.ops[i]->name);
  printf("\",\"rounds\":%d,\"batch\":%d,\"caller_align\":0}\n", st.rounds, PM__STUDY_BATCH);
  fflush(stdout);

  /* the problems: N drawn per op (or each op's tune sizes), then the default study's */
  int nitems = 0, cap = 0;
  for (int i = 0; i < st.nops; i++) /* draws or tune sizes, then defaults */
    cap += (tune_sizes ? st.ops[i]->ntune_sizes : nsizes) + 3 * (PM__MAX_RADIUS + 1);
  if ((items = calloc((size_t)cap, sizeof *items)) == NULL) {
    fprintf(stderr, "pmtune_bench_between: out of memory\n");
    status = 1;
    goto done;
  }
  for (int i = 0; i < st.nops && tune_sizes; i++)
    for (int k = 0; k < st.ops[i]->ntune_sizes; k++) {
      item *it = &items[nitems++];
      it->op = st.ops[i], it->pr = st.ops[i]->tune_sizes[k];
      it->at_tune_size = 1, it->in_scratch = 1;
    }
  for (int i = 0; i < st.nops && !tune_sizes; i++) {
    const pm__op *op = st.ops[i];
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)pm__op_index(op) + 1;
    for (int k = 0; k < nsizes; k++) {
      item *it = &items[nitems];
      if (pm__draw_between(op, &s, &it->pr) != 0) {
        fprintf(stderr, "pmtune_bench_between: %s: no size between its tune sizes\n", op->name);
        status = 1;
        goto done;
      }
      it->op = op, it->in_scratch = 1;
      nitems++;
    }
  }
  int first_default = nitems;
  /* each variant (and radius) at the largest tune size */
  for (int i = 0; i < st.nops && !tune_sizes; i++) {
    const pm__op *op = st.ops[i];
    const pm__problem *big = &op->tune_sizes[0];
    for (int k = 1; k < op->ntune_sizes; k++)
      if (pm__draw_size(op, &op->tune_sizes[k]) > pm__draw_size(op, big)) big = &op->tune_sizes[k];
    for (int var = 0; var < 3 && op->variants[var] != NULL; var++)
      for (int r = op->radius_min; r <= op->radius_max && nitems < cap; r++) {
        item *it = &items[nitems++];
        it->op = op, it->is_default = 1;
        it->pr = *big;
        it->pr.variant = var, it->pr.radius = r, it->pr.caller_align = 0;
        pm__decision d;
        it->in_scratch = pm__decide(c, &st.kmain[pm__op_index(op)], NULL, op, &it->pr, &d) != PM__FROM_EXACT;
      }
  }

  /* 1. tuning, into SCRATCH_DB: every drawn size, and the default study's sizes MAIN_DB lacks */
  int64_t gpu_id = 0, run_id = 0;
  char cmdline[1024] = "";
  for (int i = 0, len = 0; i < argc && len < (int)sizeof cmdline - 2; i++)
    len += snprintf(cmdline + len, sizeof cmdline - (size_t)len, "%s%s", i ? " " : "", argv[i]);
  if ((rc = pm__db_open(c, paths[1], 0, pm__ops_db(), &st.scratch)) != PM_OK ||
      (rc = pm__db_gpu_put(st.scratch, &c->dev, st.driver, 0, &gpu_id)) != PM_OK ||
      (rc = pm__db_run_begin(st.scratch, gpu_id, cmdline, &run_id)) != PM_OK) {
    fprintf(stderr, "pmtune_bench_between: SCRATCH_DB %s: %s\n", paths[1], pm_errmsg(c));
    status = 1;
    goto done;
  }
  double t1 = pm__now_ms();
  pm__tune_opts opts;
  pm__tune_opts_default(&opts);
  int ntune = 0, done_tunes = 0;
  for (int i = 0; i < nitems; i++) ntune += items[i].in_scratch;
  for (int i = 0; i < nitems; i++) {
    item *it = &items[i];
    if (!it->in_scratch) continue;
    done_tunes++;
    char ptext[96];
    pm__tune_result r;
    double ts = pm__now_ms();
    pm__problem_text(it->op, &it->pr, ptext, sizeof ptext);
    if ((rc = pm__tune_problem(c, st.scratch, gpu_id, run_id, it->op, &it->pr, &opts, &r)) != PM_OK) {
      fprintf(stderr, "pmtune_bench_between: tuning %s %s: %s\n", it->op->name, ptext, pm_errmsg(c));
      it->failed = 1;
      status = 1;
      continue;
    }
    fprintf(stderr, "[tune %d/%d] %s %s: %.1f s, %llu measured (%llu stored before), winner %s\n",
            done_tunes, ntune, it->op->name, ptext, (pm__now_ms() - ts) / 1e3,
            (unsigned long long)r.measured, (unsigned long long)r.skipped,
            r.have_winner ? r.winner : "(stored before)");
  }
  pm__db_run_end(st.scratch, run_id, status == 0 ? PM__DB_RUN_OK : PM__DB_RUN_FAILED,
                 status == 0 ? NULL : "a problem failed to tune");
  phase("tune", t1);
  for (int i = 0; i < st.nops; i++) {
    int oi = pm__op_index(st.ops[i]);
    if ((rc = pm__op_known_load(st.scratch, &c->dev, st.ops[i], &st.kscratch[oi])) != PM_OK) {
      fprintf(stderr, "pmtune_bench_between: SCRATCH_DB %s: %s\n", paths[1], pm_errmsg(c));
      status = 1;
      goto done;
    }
  }

  /* 2. timing, in one run: each pair in alternating rounds */
  double t2 = pm__now_ms();
  if ((rc = pm__timer_new(c, &st.tm)) != PM_OK) {
    fprintf(stderr, "pmtune_bench_between: timer: %s\n", pm_errmsg(c));
    status = 1;
    goto done;
  }
  double *ratios = calloc((size_t)nitems + 1, sizeof *ratios);
  if (ratios == NULL) {
    fprintf(stderr, "pmtune_bench_between: out of memory\n");
    status = 1;
    goto done;
  }
  for (int i = 0; i < st.nops; i++) {
    int n = 0, failed = 0;
    for (int k = 0; k < first_default; k++) {
      item *it = &items[k];
      if (it->op != st.ops[i]) continue;
      double ratio;
      if (it->failed || bench_item(&st, it, &ratio) != PM_OK) {
        failed++;
        status = 1;
        if (it->failed) fprintf(stderr, "pmtune_bench_between: %s: not timed (tuning failed)\n", it->op->name);
        continue;
      }
      ratios[n++] = ratio;
    }
    summary(st.ops[i], ratios, n, failed, tune_sizes ? WITHIN_TUNE_SIZE : WITHIN_BETWEEN);
  }
  phase(tune_sizes ? "bench-tune-sizes" : "bench-between", t2);
  double t3 = pm__now_ms();
  for (int k = first_default; k < nitems; k++) {
    double ratio;
    if (items[k].failed || bench_item(&st, &items[k], &ratio) != PM_OK) status = 1;
  }
  phase("bench-default", t3);
  free(ratios);
  phase("all", t0);

done:
  free(items);
  pm__timer_free(st.tm);
  for (int i = 0; i < PM__MAX_OPS; i++) {
    pm__db_known_free(&st.kmain[i]);
    pm__db_known_free(&st.kscratch[i]);
  }
  pm__db_close(st.scratch);
  pm__db_close(st.main);
  pm__device_leave(prev);
  pm_close(c);
  return status;
}

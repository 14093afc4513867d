/* random.c: the "random sizes" study ("every size, every type, out of the box"). At
 * sizes drawn at random over the whole range a call may ask (pm__draw_random: each op, in each
 * type it takes), the configuration a call is served in each set-up against the winner of tuning
 * that exact size, and against the op's built-in default at the same size (never worse than
 * knowing nothing). A set-up is a database a call reads, with or without the shipped results:
 * "shipped" (an empty database and the results shipped for this GPU's model, PMTUNE_RESULTS),
 * "merged" (an import of `pmtune export` documents, what examples/slurm makes), "tuned" (the
 * default `pmtune tune`). Every drawn problem is tuned exactly first (pm__tune_problem with
 * pm__tune_opts_default, into EXACT_DB), then timed in one run with the tuner's protocol
 * (timer.h), the two of each pair in alternating rounds so that drift hits both. Prints JSON
 * lines on stdout (bench/serve/random.sh keeps them: one per problem and set-up, then the
 * summaries and each set-up's targets), progress on stderr; exits 0 only where every step
 * succeeded (a target missed is reported, not an error).
 * With --kernel FILE, a kernel of one's own (of one or two dims, no tuned scalar) is studied
 * instead of the built-in ops, its "shipped" results the documents of PMTUNE_RESULTS that name it.
 * Usage: pmtune_bench_random EXACT_DB --setup NAME=DB[:shipped] [--setup ...] [--seed S]
 *                            [--f32 N] [--other N] [--ops a,b | --kernel FILE]
 *                            [--dtypes f32,bf16,...] [--rounds R] [--device N] [--commit C] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "draw.h"
#include "study.h"
#include "runtime.h"
#include "serve.h"
#include "tune.h"

#ifndef PM_COMMIT
#define PM_COMMIT "unknown"
#endif

#define MAX_DRAWS 200 /* --f32 and --other at most */
#define MAX_SETUPS 8  /* --setup at most */
#define ROUNDS 5      /* alternating rounds of timing a pair, by default (--rounds) */
/* The study's targets, for each set-up: at least TARGET_FRACTION of the problems served within
 * TARGET_WITHIN of the exact winner's speed (exact_ms / served_ms), every one within TARGET_FLOOR,
 * and none slower than the default by more than TARGET_DEFAULT (served_ms / default_ms). */
#define TARGET_FRACTION 0.95
#define TARGET_WITHIN 0.95
#define TARGET_FLOOR 0.90
#define TARGET_DEFAULT 1.03

/* A database a call reads, and whether the shipped results come after it. */
typedef struct setup {
  char name[32];
  char path[PM__DB_PATH_MAX];
  int shipped;
  pm__db *db; /* NULL: no such file, an empty database (what a call reads then: nothing) */
  pm__db_known known[PM__MAX_OPS];
} setup;

/* What one set-up is served for one problem, and how it timed. */
typedef struct outcome {
  pm__decision served;
  int ok;
  int same_exact, same_default; /* served is the exact winner's, the default's configuration
                                   (the same text): that pair is not timed, its ratio is 1 */
  double served_ms, exact_ms, default_ms; /* < 0: not timed */
  double exact_over_served, served_over_default;
  int timed_with; /* the earlier set-up served the same configuration, whose timing this is; -1 */
  char error[768];
} outcome;

/* A drawn problem. */
typedef struct item {
  const pm__op *op;
  pm__problem pr;
  int failed; /* tuning it failed: not timed */
  char error[256];
  outcome out[MAX_SETUPS];
} item;

/* What the program was asked, and what it holds open. */
typedef struct study {
  pm_ctx *c;
  pm__db *exact;
  pm__db_known kexact[PM__MAX_OPS];
  setup setups[MAX_SETUPS];
  int nsetups;
  const pm__op *ops[PM__MAX_OPS];
  int nops;
  pm_kernel *kernel;              /* --kernel's, whose op is ops[0] alone; or NULL */
  pm__ops_db_plus plus;           /* the ops the databases are opened for: dbops */
  const pm__db_op *const *dbops;
  int rounds; /* alternating rounds of timing a pair */
  unsigned long long seed;
  const char *commit;
  pm__timer *tm;
  int driver;
} study;

/* op's place in the arrays of what is known: its place among the built-in ops, or 0 for the
 * kernel of one's own (studied alone). */
static int slot(const study *st, const pm__op *op) {
  return st->kernel != NULL ? 0 : pm__op_index(op);
}

/* What the results folder knows of op (for set-ups with the shipped results). */
static const pm__db_known *shipped_of(const study *st, const pm__op *op) {
  return st->kernel != NULL ? pm__shipped_kernel_known(st->kernel) : pm__shipped_known(st->c, op);
}

static int usage(const char *why) {
  fprintf(stderr,
          "pmtune_bench_random: %s\n"
          "usage: pmtune_bench_random EXACT_DB --setup NAME=DB[:shipped] [--setup ...] [--seed S] "
          "[--f32 N] [--other N] [--ops a,b | --kernel FILE] [--dtypes f32,bf16,...] "
          "[--rounds R] [--device N] [--commit C]\n",
          why);
  return 2;
}

/* ,"key":ms, or null where it was not timed (ms < 0). */
static void json_ms(FILE *f, const char *key, double ms) {
  if (ms < 0) fprintf(f, ",\"%s\":null", key);
  else fprintf(f, ",\"%s\":%.6g", key, ms);
}

/* Times a (the served configuration) against b (the exact winner or the default) on pr, whose
 * inputs and reference da holds (prepared once per problem): pm__study_time, the cubins from
 * EXACT_DB's cache, else a set-up's database, else compiled now. */
static int compare(study *st, const pm__op *op, const pm__problem *pr, pm__data *da, const int *a,
                   const int *b, double *ms_a, double *ms_b) {
  pm__db *dbs[1 + MAX_SETUPS];
  int n = 0;
  dbs[n++] = st->exact;
  for (int i = 0; i < st->nsetups; i++) dbs[n++] = st->setups[i].db;
  return pm__study_time(st->c, st->tm, st->rounds, st->driver, dbs, n, op, pr, da, a, b, ms_a,
                       ms_b);
}

/* Times what set-up j is served for it (o->served) against the exact winner and against the
 * default: each pair where the two differ, on da (prepared here on first need: *prepared). A
 * set-up served what an earlier one was served shares its timing. */
static int time_outcome(study *st, item *it, int j, const pm__decision *exact,
                        const pm__decision *dflt, pm__data *da, int *prepared) {
  pm_ctx *c = st->c;
  const pm__op *op = it->op;
  outcome *o = &it->out[j];
  double s1 = -1, s2 = -1, e = -1, d = -1;
  int rc = PM_OK;
  o->same_exact = strcmp(o->served.config, exact->config) == 0;
  o->same_default = strcmp(o->served.config, dflt->config) == 0;
  o->timed_with = -1;
  for (int k = 0; k < j; k++) {
    const outcome *p = &it->out[k];
    if (!p->ok || strcmp(p->served.config, o->served.config) != 0) continue;
    o->served_ms = p->served_ms, o->exact_ms = p->exact_ms, o->default_ms = p->default_ms;
    o->exact_over_served = p->exact_over_served, o->served_over_default = p->served_over_default;
    o->timed_with = k;
    return PM_OK;
  }
  if (!*prepared && !(o->same_exact && o->same_default)) {
    if ((rc = op->prepare(op, c, &it->pr, PM__DEFAULT_SEED, da)) != PM_OK) return rc;
    da->copies = pm__copies_for(c, op->bytes(op, &it->pr));
    *prepared = 1;
  }
  if (!o->same_exact &&
      (rc = compare(st, op, &it->pr, da, o->served.v, exact->v, &s1, &e)) != PM_OK)
    return rc;
  if (!o->same_default &&
      (rc = compare(st, op, &it->pr, da, o->served.v, dflt->v, &s2, &d)) != PM_OK)
    return rc;
  o->served_ms = s1 >= 0 ? s1 : s2;
  o->exact_ms = o->same_exact ? s2 : e;     /* the same configuration: the same time */
  o->default_ms = o->same_default ? s1 : d;
  o->exact_over_served = o->same_exact ? 1 : e / s1;
  o->served_over_default = o->same_default ? 1 : s2 / d;
  return PM_OK;
}

/* Prints set-up j's record of it. */
static void print_outcome(const study *st, const item *it, int j, const pm__decision *exact,
                          const pm__decision *dflt) {
  const pm__op *op = it->op;
  const outcome *o = &it->out[j];
  char ptext[96];
  pm__problem_text(op, &it->pr, ptext, sizeof ptext);
  printf("{\"kind\":\"random\",\"op\":\"%s\",\"dtype\":\"%s\",", op->name,
         pm_dtype_name((pm_dtype)it->pr.dtype));
  pm__study_json_str(stdout, "problem", ptext);
  printf(",\"size\":%.0f,\"seed\":%llu,", pm__draw_size(op, &it->pr), st->seed);
  pm__study_json_str(stdout, "setup", st->setups[j].name);
  printf(",\"served_kind\":\"%s\",\"served_shipped\":%s,", pm__decision_kind(&o->served),
         o->served.shipped ? "true" : "false");
  pm__study_json_str(stdout, "served_config", o->served.config);
  printf(",");
  pm__study_json_str(stdout, "exact_config", exact->source == PM__FROM_EXACT ? exact->config : "");
  printf(",");
  pm__study_json_str(stdout, "default_config", dflt->config);
  printf(",\"same_as_exact\":%s,\"same_as_default\":%s",
         strcmp(o->served.config, exact->config) == 0 ? "true" : "false",
         strcmp(o->served.config, dflt->config) == 0 ? "true" : "false");
  if (o->ok) {
    json_ms(stdout, "served_ms", o->served_ms);
    json_ms(stdout, "exact_ms", o->exact_ms);
    json_ms(stdout, "default_ms", o->default_ms);
    printf(",\"exact_over_served\":%.4f,\"served_over_default\":%.4f", o->exact_over_served,
           o->served_over_default);
    if (o->timed_with >= 0) {
      printf(",");
      pm__study_json_str(stdout, "timed_with", st->setups[o->timed_with].name);
    }
  }
  printf(",\"predicted_ms\":%.6g,", o->served.predicted_ms);
  pm__study_json_str(stdout, "commit", st->commit);
  printf(",");
  pm__study_json_str(stdout, "gpu", st->c->dev.name);
  if (!o->ok) {
    printf(",");
    pm__study_json_str(stdout, "error", o->error);
  }
  printf("}\n");
  fflush(stdout);
}

/* Decides, times and prints it in every set-up; returns how many set-ups failed. */
static int bench_item(study *st, item *it) {
  pm_ctx *c = st->c;
  const pm__op *op = it->op;
  int oi = slot(st, op), failed = 0, prepared = 0;
  pm__decision exact, dflt;
  pm__data da = {0};
  pm__decide(c, &st->kexact[oi], NULL, op, &it->pr, &exact);
  pm__decide(c, NULL, NULL, op, &it->pr, &dflt);
  for (int j = 0; j < st->nsetups; j++) {
    setup *su = &st->setups[j];
    outcome *o = &it->out[j];
    pm__decide(c, su->db != NULL ? &su->known[oi] : NULL,
               su->shipped ? shipped_of(st, op) : NULL, op, &it->pr, &o->served);
    if (it->failed) {
      snprintf(o->error, sizeof o->error, "not timed: tuning it failed: %s", it->error);
    } else if (exact.source != PM__FROM_EXACT) {
      snprintf(o->error, sizeof o->error, "no exact winner for it in EXACT_DB (only %s%s%s)",
               pm__source_name(exact.source), exact.why[0] ? ": " : "", exact.why);
    } else if (time_outcome(st, it, j, &exact, &dflt, &da, &prepared) != PM_OK) {
      snprintf(o->error, sizeof o->error, "%s", pm_errmsg(c));
    } else {
      o->ok = 1;
    }
    failed += !o->ok;
    print_outcome(st, it, j, &exact, &dflt);
  }
  pm__data_free(&da);
  return failed;
}

/* What the records of set-up j say, over the problems of op (NULL: every op) in dtype (-1:
 * every type). */
typedef struct tally {
  int count, failed, within_95, within_90, worse_3pct;
  double min_eos, max_sod;
  const item *worst;
} tally;

static tally tally_of(const item *items, int nitems, int j, const pm__op *op, int dtype) {
  tally t = {.min_eos = 0, .max_sod = 0};
  for (int i = 0; i < nitems; i++) {
    const item *it = &items[i];
    const outcome *o = &it->out[j];
    if ((op != NULL && it->op != op) || (dtype >= 0 && it->pr.dtype != dtype)) continue;
    if (!o->ok) {
      t.failed++;
      continue;
    }
    if (t.count == 0 || o->exact_over_served < t.min_eos)
      t.min_eos = o->exact_over_served, t.worst = it;
    if (t.count == 0 || o->served_over_default > t.max_sod) t.max_sod = o->served_over_default;
    t.count++;
    t.within_95 += o->exact_over_served >= TARGET_WITHIN;
    t.within_90 += o->exact_over_served >= TARGET_FLOOR;
    t.worse_3pct += o->served_over_default > TARGET_DEFAULT;
  }
  return t;
}

/* The summary line of set-up j over op (NULL: "all") in dtype (-1: "all"); nothing where no
 * problem was drawn there. */
static void summary(const study *st, const item *items, int nitems, int j, const pm__op *op,
                    int dtype) {
  tally t = tally_of(items, nitems, j, op, dtype);
  char worst[128] = "";
  if (t.count + t.failed == 0) return;
  if (t.worst != NULL) {
    char ptext[96];
    pm__problem_text(t.worst->op, &t.worst->pr, ptext, sizeof ptext);
    snprintf(worst, sizeof worst, "%s %s", t.worst->op->name, ptext);
  }
  printf("{\"kind\":\"summary\",");
  pm__study_json_str(stdout, "setup", st->setups[j].name);
  printf(",\"op\":\"%s\",\"dtype\":\"%s\",\"seed\":%llu,\"count\":%d,\"failed\":%d,"
         "\"within_95\":%d,\"fraction_within_95\":%.4f,\"min_exact_over_served\":%.4f,",
         op != NULL ? op->name : "all", dtype >= 0 ? pm_dtype_name((pm_dtype)dtype) : "all",
         st->seed, t.count, t.failed, t.within_95, t.count ? (double)t.within_95 / t.count : 0,
         t.min_eos);
  pm__study_json_str(stdout, "worst_problem", worst);
  printf(",\"within_90\":%d,\"worse_than_default_3pct\":%d,\"max_served_over_default\":%.4f}\n",
         t.within_90, t.worse_3pct, t.max_sod);
  fflush(stdout);
}

/* Set-up j's closing line: the study's targets, each met or not (a failed problem fails them:
 * it was not measured). */
static void target(const study *st, const item *items, int nitems, int j) {
  tally t = tally_of(items, nitems, j, NULL, -1);
  double fraction = t.count ? (double)t.within_95 / t.count : 0;
  int met_95 = t.count > 0 && fraction >= TARGET_FRACTION;
  int met_90 = t.count > 0 && t.within_90 == t.count;
  int met_default = t.worse_3pct == 0, met = met_95 && met_90 && met_default && t.failed == 0;
  printf("{\"kind\":\"target\",");
  pm__study_json_str(stdout, "setup", st->setups[j].name);
  printf(",\"seed\":%llu,\"count\":%d,\"failed\":%d,\"fraction_within_95\":%.4f,"
         "\"target_fraction_within_95\":%.2f,\"met_within_95\":%s,\"min_exact_over_served\":%.4f,"
         "\"target_min_exact_over_served\":%.2f,\"met_min\":%s,\"worse_than_default_3pct\":%d,"
         "\"target_worse_than_default_3pct\":0,\"met_default\":%s,\"met\":%s}\n",
         st->seed, t.count, t.failed, fraction, TARGET_FRACTION, met_95 ? "true" : "false",
         t.min_eos, TARGET_FLOOR, met_90 ? "true" : "false", t.worse_3pct,
         met_default ? "true" : "false", met ? "true" : "false");
  fflush(stdout);
  fprintf(stderr, "# %s: %.1f%% within %.2f of exact (target %.0f%%), worst %.3f (target %.2f), "
          "%d slower than the default by over %.0f%% (target 0), %d failed: %s\n",
          st->setups[j].name, 100 * fraction, TARGET_WITHIN, 100 * TARGET_FRACTION, t.min_eos,
          TARGET_FLOOR, t.worse_3pct, 100 * (TARGET_DEFAULT - 1), t.failed,
          met ? "met" : "NOT met");
}

static void phase(const study *st, const char *name, double t0) {
  double s = (pm__now_ms() - t0) / 1e3;
  fprintf(stderr, "# phase %s: %.1f s\n", name, s);
  printf("{\"kind\":\"phase\",\"phase\":\"%s\",\"seed\":%llu,\"seconds\":%.1f}\n", name,
         st->seed, s);
  fflush(stdout);
}

/* Parses "a,b" into st->ops (every op where NULL). */
static int parse_ops(study *st, const char *list) {
  return pm__study_parse_ops(list, st->ops, &st->nops);
}

/* Parses "NAME=DB" or "NAME=DB:shipped" into st's next set-up. */
static int parse_setup(study *st, const char *arg) {
  const char *eq = strchr(arg, '=');
  size_t nlen = eq != NULL ? (size_t)(eq - arg) : 0, plen;
  static const char suffix[] = ":shipped";
  if (st->nsetups == MAX_SETUPS || nlen == 0 || nlen >= sizeof st->setups[0].name) return -1;
  setup *su = &st->setups[st->nsetups];
  memcpy(su->name, arg, nlen);
  su->name[nlen] = '\0';
  plen = strlen(eq + 1);
  if (plen >= sizeof suffix - 1 && strcmp(eq + 1 + plen - (sizeof suffix - 1), suffix) == 0)
    su->shipped = 1, plen -= sizeof suffix - 1;
  if (plen == 0 || plen >= sizeof su->path) return -1;
  memcpy(su->path, eq + 1, plen);
  su->path[plen] = '\0';
  for (int i = 0; i < st->nsetups; i++)
    if (strcmp(st->setups[i].name, su->name) == 0) return -1;
  st->nsetups++;
  return 0;
}

int main(int argc, char **argv) {
  const char *exact_path = NULL, *oplist = NULL, *kfile = NULL;
  int device = 0, status = 0, rounds = ROUNDS, nf32 = 20, nother = 10;
  unsigned dtypes = PM__DTYPES_ALL;
  study st;
  memset(&st, 0, sizeof st);
  st.seed = 1, st.commit = PM_COMMIT;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (strcmp(a, "--setup") == 0 && val) {
      if (parse_setup(&st, val) != 0)
        return usage("--setup: NAME=DB or NAME=DB:shipped, each NAME once, at most 8");
      i++;
    } else if (strcmp(a, "--seed") == 0 && val) {
      st.seed = strtoull(val, &end, 0), i++;
      if (*end || st.seed == 0) return usage("--seed: a number other than 0");
    } else if ((strcmp(a, "--f32") == 0 || strcmp(a, "--other") == 0) && val) {
      long n = strtol(val, &end, 10);
      i++;
      if (*end || n < 0 || n > MAX_DRAWS) return usage("--f32, --other: 0 to 200");
      if (strcmp(a, "--f32") == 0) nf32 = (int)n;
      else nother = (int)n;
    } else if (strcmp(a, "--rounds") == 0 && val) {
      rounds = (int)strtol(val, &end, 10), i++;
      if (*end || rounds < 1 || rounds > PM__STUDY_MAX_ROUNDS) return usage("--rounds: 1 to 64");
    } else if (strcmp(a, "--device") == 0 && val) {
      device = (int)strtol(val, &end, 10), i++;
      if (*end || device < 0) return usage("--device: an index");
    } else if (strcmp(a, "--ops") == 0 && val) {
      oplist = val, i++;
    } else if (strcmp(a, "--kernel") == 0 && val) {
      kfile = val, i++;
    } else if (strcmp(a, "--dtypes") == 0 && val) {
      if ((dtypes = pm__study_parse_dtypes(val)) == 0)
        return usage("--dtypes: f32, f16, bf16, f64, comma-separated");
      i++;
    } else if (strcmp(a, "--commit") == 0 && val) {
      st.commit = val, i++;
    } else if (a[0] == '-' || exact_path != NULL) {
      return usage("unknown or incomplete argument");
    } else {
      exact_path = a;
    }
  }
  if (exact_path == NULL) return usage("EXACT_DB is needed");
  if (st.nsetups == 0) return usage("at least one --setup is needed");
  if (nf32 == 0 && nother == 0) return usage("--f32 and --other: not both 0");
  st.rounds = rounds;
  if (kfile != NULL && oplist != NULL) return usage("--ops or --kernel, not both");
  if (kfile == NULL && parse_ops(&st, oplist) != 0)
    return usage("--ops: names of operations, comma-separated");
  st.dbops = pm__ops_db();

  pm__cuda_versions(&st.driver, NULL);
  pm_options o = {.device = device, .db_path = exact_path};
  int prev = 0, rc;
  item *items = NULL;
  double t0 = pm__now_ms();
  if ((rc = pm_open(&st.c, &o)) != PM_OK || (rc = pm__device_enter(st.c, &prev)) != PM_OK) {
    fprintf(stderr, "pmtune_bench_random: pm_open: %s\n", pm_errmsg(st.c));
    pm_close(st.c);
    return 1;
  }
  pm_ctx *c = st.c;
  if (kfile != NULL) { /* the kernel of one's own, alone */
    if (pm_kernel_open(c, kfile, &st.kernel) != PM_OK) {
      fprintf(stderr, "pmtune_bench_random: --kernel: %s\n", pm_errmsg(c));
      status = 1;
      goto done;
    }
    st.ops[0] = st.kernel->op, st.nops = 1;
    st.dbops = pm__ops_db_with(st.kernel->op, &st.plus);
    if (st.kernel->op->dims > 2 || st.kernel->op->radius_max > 0) {
      fprintf(stderr, "pmtune_bench_random: --kernel: one or two dims and no tuned scalar (what "
                      "the draws know)\n");
      status = 1;
      goto done;
    }
  }

  /* the set-ups' databases, as a call reads them (a missing file: an empty database) */
  for (int j = 0; j < st.nsetups; j++) {
    setup *su = &st.setups[j];
    struct stat sb;
    for (int i = 0; su->shipped && i < st.nops; i++) {
      const pm__db_known *k = shipped_of(&st, st.ops[i]);
      fprintf(stderr, "# setup %s: the shipped results (PMTUNE_RESULTS=%s) know %zu measurements "
              "of %s on %s\n", su->name, getenv("PMTUNE_RESULTS") ? getenv("PMTUNE_RESULTS") : "",
              k != NULL ? k->n : 0, st.ops[i]->name, c->dev.name);
    }
    if (stat(su->path, &sb) != 0 && errno == ENOENT) {
      fprintf(stderr, "# setup %s: %s does not exist: an empty database%s\n", su->name, su->path,
              su->shipped ? ", then the shipped results" : "");
      continue;
    }
    if ((rc = pm__db_open(c, su->path, PM__DB_READONLY, st.dbops, &su->db)) != PM_OK) {
      fprintf(stderr, "pmtune_bench_random: setup %s: %s\n", su->name, pm_errmsg(c));
      status = 1;
      goto done;
    }
    for (int i = 0; i < st.nops; i++) {
      int oi = slot(&st, st.ops[i]);
      if ((rc = pm__op_known_load(su->db, &c->dev, st.ops[i], &su->known[oi])) != PM_OK) {
        fprintf(stderr, "pmtune_bench_random: setup %s: %s\n", su->name, pm_errmsg(c));
        status = 1;
        goto done;
      }
      fprintf(stderr, "# setup %s: %s knows %zu measurements of %s on %s\n", su->name,
              su->path, su->known[oi].n, st.ops[i]->name, c->dev.name);
    }
  }
  const char *results = getenv("PMTUNE_RESULTS");
  printf("{\"kind\":\"run\",\"gpu\":\"%s\",\"arch\":\"%s\",\"commit\":\"%s\",\"exact_db\":\"%s\","
         "\"seed\":%llu,\"f32\":%d,\"other\":%d,\"setups\":[",
         c->dev.name, c->dev.arch, st.commit, exact_path, st.seed, nf32, nother);
  for (int j = 0; j < st.nsetups; j++) {
    printf("%s{", j ? "," : "");
    pm__study_json_str(stdout, "name", st.setups[j].name);
    printf(",");
    pm__study_json_str(stdout, "db", st.setups[j].path);
    printf(",\"exists\":%s,\"shipped\":%s}", st.setups[j].db != NULL ? "true" : "false",
           st.setups[j].shipped ? "true" : "false");
  }
  printf("],");
  pm__study_json_str(stdout, "results", results != NULL ? results : "(the default)");
  printf(",\"ops\":\"");
  for (int i = 0; i < st.nops; i++) printf("%s%s", i ? "," : "", st.ops[i]->name);
  printf("\",\"dtypes\":\"");
  for (int t = 0, n = 0; t < PM__NDTYPES; t++)
    if (dtypes & 1u << t) printf("%s%s", n++ ? "," : "", pm_dtype_name((pm_dtype)t));
  printf("\",\"rounds\":%d,\"batch\":%d,\"caller_align\":0}\n", st.rounds, PM__STUDY_BATCH);
  fflush(stdout);

  /* the problems: N drawn per op and type it takes, each (op, type) from a state of its own */
  int nitems = 0, cap = 0;
  for (int i = 0; i < st.nops; i++)
    for (int t = 0; t < PM__NDTYPES; t++)
      if (dtypes & st.ops[i]->dtypes & 1u << t) cap += t == PM_F32 ? nf32 : nother;
  if (cap == 0) {
    fprintf(stderr, "pmtune_bench_random: no op takes the types asked (--ops, --dtypes)\n");
    status = 1;
    goto done;
  }
  if ((items = calloc((size_t)cap, sizeof *items)) == NULL) {
    fprintf(stderr, "pmtune_bench_random: out of memory\n");
    status = 1;
    goto done;
  }
  for (int i = 0; i < st.nops; i++) {
    const pm__op *op = st.ops[i];
    for (int t = 0; t < PM__NDTYPES; t++) {
      if (!(dtypes & op->dtypes & 1u << t)) continue;
      uint64_t s = st.seed * 0x9E3779B97F4A7C15ULL + (uint64_t)slot(&st, op) * PM__NDTYPES +
                   (uint64_t)t + 1;
      if (s == 0) s = 1;
      for (int k = 0; k < (t == PM_F32 ? nf32 : nother); k++) {
        item *it = &items[nitems];
        if (pm__draw_random(op, t, &s, &it->pr) != 0) {
          fprintf(stderr, "pmtune_bench_random: %s %s: no problem could be drawn\n", op->name,
                  pm_dtype_name((pm_dtype)t));
          status = 1;
          goto done;
        }
        it->op = op;
        nitems++;
      }
    }
  }

  /* 1. tuning, into EXACT_DB: every drawn problem (what is stored already is skipped) */
  int64_t gpu_id = 0, run_id = 0;
  char cmdline[1024] = "";
  for (int i = 0, len = 0; i < argc && len < (int)sizeof cmdline - 2; i++)
    len += snprintf(cmdline + len, sizeof cmdline - (size_t)len, "%s%s", i ? " " : "", argv[i]);
  if ((rc = pm__db_open(c, exact_path, 0, st.dbops, &st.exact)) != PM_OK ||
      (st.kernel != NULL && /* its measurements are the ones served */
       (rc = pm__db_template_current(st.exact, st.kernel->op->name,
                                     pm__op_template(st.kernel->op)->sha256)) != PM_OK) ||
      (rc = pm__db_gpu_put(st.exact, &c->dev, st.driver, 0, &gpu_id)) != PM_OK ||
      (rc = pm__db_run_begin(st.exact, gpu_id, cmdline, &run_id)) != PM_OK) {
    fprintf(stderr, "pmtune_bench_random: EXACT_DB %s: %s\n", exact_path, pm_errmsg(c));
    status = 1;
    goto done;
  }
  double t1 = pm__now_ms();
  pm__tune_opts opts;
  pm__tune_opts_default(&opts);
  opts.model = 1; /* an EXACT_DB brought from another GPU of this model: what it measured stays */
  for (int i = 0; i < nitems; i++) {
    item *it = &items[i];
    char ptext[96];
    pm__tune_result r;
    double ts = pm__now_ms();
    pm__problem_text(it->op, &it->pr, ptext, sizeof ptext);
    if ((rc = pm__tune_problem(c, st.exact, gpu_id, run_id, it->op, &it->pr, &opts, &r)) != PM_OK) {
      snprintf(it->error, sizeof it->error, "%s", pm_errmsg(c));
      fprintf(stderr, "pmtune_bench_random: tuning %s %s: %s\n", it->op->name, ptext, it->error);
      it->failed = 1;
      status = 1;
      continue;
    }
    fprintf(stderr, "[tune %d/%d] %s %s: %.1f s, %llu measured (%llu stored before), winner %s\n",
            i + 1, nitems, it->op->name, ptext, (pm__now_ms() - ts) / 1e3,
            (unsigned long long)r.measured, (unsigned long long)r.skipped,
            r.have_winner ? r.winner : "(stored before)");
  }
  pm__db_run_end(st.exact, run_id, status == 0 ? PM__DB_RUN_OK : PM__DB_RUN_FAILED,
                 status == 0 ? NULL : "a problem failed to tune");
  phase(&st, "tune", t1);
  for (int i = 0; i < st.nops; i++) {
    int oi = slot(&st, st.ops[i]);
    if ((rc = pm__op_known_load(st.exact, &c->dev, st.ops[i], &st.kexact[oi])) != PM_OK) {
      fprintf(stderr, "pmtune_bench_random: EXACT_DB %s: %s\n", exact_path, pm_errmsg(c));
      status = 1;
      goto done;
    }
  }

  /* 2. timing, in one run: each set-up's served configuration against the exact winner and the
   * default, each pair in alternating rounds */
  double t2 = pm__now_ms();
  if ((rc = pm__timer_new(c, &st.tm)) != PM_OK) {
    fprintf(stderr, "pmtune_bench_random: timer: %s\n", pm_errmsg(c));
    status = 1;
    goto done;
  }
  int failed = 0;
  for (int i = 0; i < nitems; i++) {
    item *it = &items[i];
    char ptext[96];
    double ts = pm__now_ms();
    int f = bench_item(&st, it);
    failed += f;
    if (f > 0) status = 1;
    pm__problem_text(it->op, &it->pr, ptext, sizeof ptext);
    fprintf(stderr, "[time %d/%d] %s %s (%.1f s):", i + 1, nitems, it->op->name, ptext,
            (pm__now_ms() - ts) / 1e3);
    for (int j = 0; j < st.nsetups; j++) {
      const outcome *o = &it->out[j];
      if (o->ok)
        fprintf(stderr, " %s %s %.3f/%.3f", st.setups[j].name, pm__decision_kind(&o->served),
                o->exact_over_served, o->served_over_default);
      else
        fprintf(stderr, " %s failed (%s)", st.setups[j].name, o->error);
    }
    fprintf(stderr, "\n");
  }
  phase(&st, "bench", t2);

  /* 3. the summaries: each set-up by op and type, over all, then its targets */
  for (int j = 0; j < st.nsetups; j++) {
    for (int i = 0; i < st.nops; i++)
      for (int t = 0; t < PM__NDTYPES; t++) summary(&st, items, nitems, j, st.ops[i], t);
    summary(&st, items, nitems, j, NULL, -1);
  }
  for (int j = 0; j < st.nsetups; j++) target(&st, items, nitems, j);
  if (failed > 0)
    fprintf(stderr, "pmtune_bench_random: %d of %d records failed (their \"error\" says why)\n",
            failed, nitems * st.nsetups);
  phase(&st, "all", t0);

done:
  free(items);
  pm__timer_free(st.tm);
  for (int i = 0; i < PM__MAX_OPS; i++) {
    pm__db_known_free(&st.kexact[i]);
    for (int j = 0; j < st.nsetups; j++) pm__db_known_free(&st.setups[j].known[i]);
  }
  for (int j = 0; j < st.nsetups; j++) pm__db_close(st.setups[j].db);
  pm__db_close(st.exact);
  pm__device_leave(prev);
  pm_close(c);
  return status;
}

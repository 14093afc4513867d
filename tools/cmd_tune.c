/* cmd_tune.c: `pmtune tune`, the offline tuning run: every requested (op, size) on every requested
 * GPU, each candidate compiled, verified and timed, everything stored in the tuning database.
 * This file reads the options, makes the jobs (or picks the recorded sizes) and prints; each GPU's
 * thread runs them in a tuning session (tuner/session.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kernel_file.h"
#include "session.h"

static const char about[] =
    "Tunes each operation at each size on this machine's GPUs: compiles every candidate of the\n"
    "search space (in parallel, and the next problems' while this one is measured; cubins already\n"
    "in the database are not compiled again), checks each one's result against a reference,\n"
    "times the good ones, re-times the best few interleaved, and stores every measurement and the\n"
    "winner. What is already measured for this GPU and template is not measured again, so a\n"
    "stopped run resumes where it stopped.\n";

static const char after[] =
    "--seen tunes a deployment's own sizes instead: those that library calls recorded (with\n"
    "recording on) as served without a winner tuned for exactly them, most called first,\n"
    "passing over those tuned since ('pmtune show --seen' lists the built-in ops'); with --kernel,\n"
    "that kernel's recorded sizes.\n"
    "Ctrl-C stops after the current candidate with everything measured so far stored.\n";

/* The default sizes of type dtype, read from the ops: "matadd 512x512 ... (row-major), 512x512
 * ... (col-major); reduce 1000 ...", a filter size with its radius, ops without any left out. */
static void sizes_of_type(FILE *f, int dtype) {
  int first = 1;
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    int has = 0;
    for (int k = 0; k < op->ntune_sizes; k++) has |= op->tune_sizes[k].dtype == dtype;
    if (!has) continue;
    fprintf(f, "%s %s", first ? "" : ";", op->name);
    first = 0;
    for (int var = 0; var < 3 && op->variants[var] != NULL; var++) {
      int any = 0;
      for (int k = 0; k < op->ntune_sizes; k++) {
        const pm__problem *t = &op->tune_sizes[k];
        if (t->variant != var || t->dtype != dtype) continue;
        if (op->dims == 1) fprintf(f, " %u", t->n);
        else if (op->radius_max > 0) fprintf(f, " %ux%u:r%d", t->rows, t->cols, t->radius);
        else fprintf(f, " %ux%u", t->rows, t->cols);
        any = 1;
      }
      if (any && op->variant_names[var][0] != '\0') fprintf(f, " (%s)", op->variant_names[var]);
      if (any && var + 1 < 3 && op->variants[var + 1] != NULL) fputc(',', f);
    }
  }
  fputc('.', f);
}

/* "Default sizes: ..." in f32, then those of the other types that ops list (bf16). */
static void default_sizes(FILE *out) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f == NULL) return;
  fputs("Default sizes:", f);
  sizes_of_type(f, PM_F32);
  for (int t = 0; t < PM__NDTYPES; t++) {
    int any = 0;
    for (int i = 0; pm__ops[i] != NULL; i++)
      for (int k = 0; k < pm__ops[i]->ntune_sizes; k++) any |= pm__ops[i]->tune_sizes[k].dtype == t;
    if (t == PM_F32 || !any) continue;
    fprintf(f, " And in %s:", pm_dtype_name((pm_dtype)t));
    sizes_of_type(f, t);
  }
  fputs(" With --dtype T, the f32 sizes in each type T.", f);
  if (fclose(f) == 0) cli_wrap(out, text, 0, 0);
  free(text);
}

static const cli_help help = {.cmd = "tune", .about = about, .after = after, .more = default_sizes};

/* The callback of --device: an index (0 to 1023, decimal digits alone, as other commands'
 * --device) or "all", kept as text in the const char * at o->value. */
static int device_option(const char *cmd, const cli_option *o, const char *arg) {
  size_t digits = strspn(arg, "0123456789");
  if (strcmp(arg, "all") != 0 && (digits == 0 || arg[digits] != '\0' || digits > 4 ||
                                  strtol(arg, NULL, 10) > 1023))
    return cli_usage_error(cmd, "--%s '%s': expected an index (0 to 1023) or all", o->name, arg);
  *(const char **)o->value = arg;
  return CLI_OK;
}

/* The callback of --budget: a positive decimal count, at most 10^12, into the uint64_t at
 * o->value (an overflowing or signed value is refused, not wrapped). */
static int budget_option(const char *cmd, const cli_option *o, const char *arg) {
  char *end = NULL;
  errno = 0;
  long long b = arg[0] >= '0' && arg[0] <= '9' ? strtoll(arg, &end, 10) : -1;
  if (b < 1 || errno == ERANGE || *end || b > 1000000000000LL)
    return cli_usage_error(cmd, "--%s '%s': expected a whole number from 1 to 10^12", o->name,
                           arg);
  *(uint64_t *)o->value = (uint64_t)b;
  return CLI_OK;
}

/* The callback of --time: decimal seconds, finite, > 0 and at most a week, into the double at
 * o->value (no "inf", "nan", hexadecimal or out-of-range value). */
static int time_option(const char *cmd, const cli_option *o, const char *arg) {
  char *end = NULL;
  errno = 0;
  int decimal = strspn(arg, "0123456789.") == strlen(arg) && strchr(arg, '.') == strrchr(arg, '.');
  double s = decimal && arg[0] != '\0' ? strtod(arg, &end) : -1;
  if (!decimal || errno == ERANGE || (end != NULL && *end) || !(s > 0) || s > 7 * 24 * 3600.0)
    return cli_usage_error(cmd, "--%s '%s': expected seconds, a decimal number > 0 and at most "
                           "604800", o->name, arg);
  *(double *)o->value = s;
  return CLI_OK;
}

enum {
  JOBS_MAX = 8192,   /* problems one run tunes (the grid in every type: about 5,100) */
  SEEN_MAX = 128,    /* --seen=N at most */
  SEEN_DEFAULT = 10  /* --seen alone: how many recorded sizes */
};

/* The callback of --seen[=N]: how many recorded sizes to tune, 1 to SEEN_MAX (SEEN_DEFAULT
 * where N is left out), into the int at o->value. */
static int seen_option(const char *cmd, const cli_option *o, const char *arg) {
  char *end = NULL;
  long n = arg == NULL ? SEEN_DEFAULT : strtol(arg, &end, 10);
  if (arg != NULL && (*arg == '\0' || *end || n < 1 || n > SEEN_MAX))
    return cli_usage_error(cmd, "--%s=%s: expected 1 to %d", o->name, arg, SEEN_MAX);
  *(int *)o->value = (int)n;
  return CLI_OK;
}

/* The values of --strategy, in the order of PM__STRATEGY_*: the index is the strategy. */
static const char *const strategies[] = {"auto", "exhaustive", "random", "staged", NULL};
_Static_assert(PM__STRATEGY_AUTO == 0 && PM__STRATEGY_EXHAUSTIVE == 1 && PM__STRATEGY_RANDOM == 2 &&
                   PM__STRATEGY_STAGED == 3,
               "strategies[] lists the strategies in the order of PM__STRATEGY_*");

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
  signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process */
}

/* Adds op's default sizes to jobs[n..max): where dtypes is 0 (no --dtype), its entry's tune_sizes
 * as they are (f32, and bf16 where listed); else its f32 sizes in each type of dtypes. Returns
 * the new count. */
static int add_defaults(const pm__op *op, unsigned dtypes, pm__session_job *jobs, int n,
                        int max) {
  for (int t = 0; t < PM__NDTYPES; t++)
    for (int i = 0; i < op->ntune_sizes && n < max; i++) {
      const pm__problem *s = &op->tune_sizes[i];
      if (dtypes == 0 ? s->dtype != t : s->dtype != PM_F32 || !(dtypes & op->dtypes & 1u << t))
        continue;
      jobs[n] = (pm__session_job){op, *s};
      jobs[n++].pr.dtype = t;
    }
  return n;
}

typedef struct worker {
  int device;
  const char *dbpath, *cmdline;
  const pm__op *kernel; /* --kernel's op, or NULL */
  const pm__session_job *jobs;
  int njobs;
  int seen;             /* > 0: tune this many of this GPU's recorded sizes, not jobs */
  int carry_only;       /* --carry: no search; carry across the jobs' groups on the GPU's model */
  const pm__op *only;   /* --seen: of this op only (NULL: all) */
  pm__session_job picked[SEEN_MAX]; /* --seen: the recorded sizes picked */
  pm__tune_opts opts;
  int status;      /* CLI_OK or CLI_FAIL */
  int ndevices;    /* how many workers print: prefix lines with the device where > 1 */
  double last_print;
  pm__session_sums sums; /* what the run did, all jobs together, and compiling ahead */
} worker;

static void show_progress(void *arg, const pm__tune_progress *p) {
  worker *w = arg;
  double now = pm__now_ms();
  int tty = isatty(2) && w->ndevices == 1;
  int phase_end = strcmp(p->phase, "done") == 0;
  if (!tty && !phase_end && now - w->last_print < 5000) return;
  if (tty && !phase_end && now - w->last_print < 100) return;
  w->last_print = now;
  char dev[16] = "";
  if (w->ndevices > 1) snprintf(dev, sizeof dev, "[gpu %d] ", w->device);
  if (phase_end) {
    if (tty) fputs("\r\033[K", stderr);
    return;
  }
  int width = 24, fill = p->total ? (int)(width * p->done / p->total) : 0;
  char bar[32];
  for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
  bar[width] = '\0';
  double eta = p->done ? p->elapsed_s / (double)p->done * (double)(p->total - p->done) : 0;
  char best[64] = "";
  if (p->best_ms > 0) snprintf(best, sizeof best, "  best %.4f ms %.0f GB/s", p->best_ms, p->best_gbps);
  fprintf(stderr, "%s%s%s %s %-10s [%s] %llu/%llu%s  ETA %.0f s%s", tty ? "\r\033[K" : "", dev,
          p->op, p->problem, p->phase, bar, (unsigned long long)p->done,
          (unsigned long long)p->total, best, eta, tty ? "" : "\n");
  fflush(stderr);
}

/* What picking the recorded sizes of one GPU needs. */
typedef struct seen_pick {
  worker *w;
  pm_ctx *c;
  const pm__db_known *known; /* what is tuned for this GPU: the exact winners a call finds */
  int recorded, tuned, unfit; /* recorded sizes handed so far; of them, tuned already, and
                                 passed over as the tuner cannot take them */
} seen_pick;

/* A pm__db_seen_list callback: takes the recorded size p into w->picked unless it has an exact
 * winner already, or does not fit the tuner; says which it takes. Stops at w->seen taken. */
static int pick_seen(void *arg, const pm__db_problem *p, int64_t calls) {
  seen_pick *s = arg;
  worker *w = s->w;
  const pm__op *op = w->kernel != NULL ? w->kernel : pm__op_find(p->op); /* (listed: its own) */
  pm__db_winner win;
  char size[96], ptext[128];
  s->recorded++;
  if (op == NULL) { /* cannot be: the database hands only problems of pmtune's ops */
    s->unfit++;
    return 0;
  }
  if (pm__db_known_get_if(s->known, p, NULL, NULL, &win) == PM_OK) {
    s->tuned++;
    return 0;
  }
  pm__problem pr = {.radius = p->radius, .variant = pm__variant_index(op, p->variant),
                    .dtype = pm__dtype_find(p->dtype)};
  if (pr.dtype < 0 || !(op->dtypes & 1u << pr.dtype)) { /* the database checks: cannot be */
    s->unfit++;
    return 0;
  }
  if (op->dims == 1)
    snprintf(size, sizeof size, "%lld", (long long)p->n);
  else if (op->dims == 3)
    snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)p->n, (long long)p->rows,
             (long long)p->cols);
  else
    snprintf(size, sizeof size, "%lldx%lld", (long long)p->rows, (long long)p->cols);
  if (op->radius_name != NULL) /* a kernel's tuned scalar: its value, as a size writes it */
    snprintf(size + strlen(size), sizeof size - strlen(size), ":%s=%d", op->radius_name,
             p->radius);
  if (pm__problem_parse(s->c, op, size, &pr) != PM_OK) { /* recorded by hand, or too large */
    printf("gpu %d  seen    %-7s %-24s %lld calls: passed over, %s\n", w->device, op->name, size,
           (long long)calls, pm_errmsg(s->c));
    s->unfit++;
    return 0;
  }
  pm__problem_text(op, &pr, ptext, sizeof ptext);
  printf("gpu %d  seen    %-7s %-24s %lld calls\n", w->device, op->name, ptext, (long long)calls);
  w->picked[w->njobs++] = (pm__session_job){op, pr};
  return w->njobs == w->seen;
}

/* --seen: makes w's jobs the w->seen most-called sizes recorded for GPU gpu_id (of w->only's
 * op) that have no exact winner yet, saying which; with none, says why. */
static int pick_seen_jobs(worker *w, pm_ctx *c, pm__db *db, int64_t gpu_id) {
  pm__db_known known;
  seen_pick s = {w, c, &known, 0, 0, 0};
  w->jobs = w->picked;
  w->njobs = 0;
  if (cli_known_load(db, &c->dev, w->only, &known) != PM_OK)
    return cli_fail("tune", "%s", pm_errmsg(c));
  int rc = pm__db_seen_list(db, gpu_id, w->only ? w->only->name : NULL, 0, pick_seen, &s);
  pm__db_known_free(&known);
  if (rc != PM_OK) return cli_fail("tune", "%s", pm_errmsg(c));
  if (w->njobs > 0)
    printf("gpu %d: tuning the %d most-called recorded size%s without an exact winner\n",
           w->device, w->njobs, w->njobs == 1 ? "" : "s");
  else if (s.recorded == 0)
    printf("gpu %d: no sizes recorded%s%s: nothing to tune (library calls record the sizes "
           "they serve without a tuned winner when recording is on)\n",
           w->device, w->only ? " for " : "", w->only ? w->only->name : "");
  else if (s.tuned == s.recorded)
    printf("gpu %d: every recorded size (%d) has an exact winner: nothing to tune\n", w->device,
           s.recorded);
  else
    printf("gpu %d: nothing to tune: of %d recorded sizes, %d have an exact winner and %d cannot "
           "be tuned (said above)\n",
           w->device, s.recorded, s.tuned, s.unfit);
  fflush(stdout);
  return CLI_OK;
}

/* A session's reports, printed: each job's counts and winner, each group carried, and what
 * failed. */
static void show_report(void *arg, const pm__session_event *e) {
  worker *w = arg;
  const pm__tune_result *r = e->r, *ra = e->ahead;
  if (e->what == PM__SESSION_FAILED) {
    if (e->job == NULL)
      cli_fail("tune", "%s", e->error);
    else if (e->carrying)
      cli_fail("tune", "gpu %d: carrying: %s", w->device, e->error);
    else
      cli_fail("tune", "gpu %d: %s %s: %s", w->device, e->job->op->name, e->problem, e->error);
    return;
  }
  if (e->what == PM__SESSION_CARRIED) {
    printf("gpu %d  carry   %-7s %zu sizes like %s%s%s: %llu measured, %llu wrong, %llu "
           "failed; %.1f s\n",
           w->device, e->job->op->name, e->sizes, e->problem,
           e->from_model ? ", those of " : "", e->from_model ? e->from_model : "",
           (unsigned long long)r->measured, (unsigned long long)r->wrong,
           (unsigned long long)r->failed, e->ms / 1e3);
    fflush(stdout);
    return;
  }
  printf("gpu %d  %-7s %-24s %5llu candidates (%llu stored before, %llu more launch as one does), "
         "%llu kernels (%llu compiled, %llu of them ahead), %llu measured, %llu wrong, %llu "
         "failed; %.1f s (compile %.1f, verify %.1f, time %.1f)\n",
         w->device, e->job->op->name, e->problem, (unsigned long long)r->candidates,
         (unsigned long long)r->skipped, (unsigned long long)r->same_launch,
         (unsigned long long)r->kernels, (unsigned long long)(r->compiled + ra->compiled),
         (unsigned long long)ra->compiled, (unsigned long long)r->measured,
         (unsigned long long)r->wrong, (unsigned long long)r->failed, r->total_ms / 1e3,
         r->compile_ms / 1e3, r->verify_ms / 1e3, r->time_ms / 1e3);
  if (r->have_winner) {
    printf("        winner  %s  %.4f ms  %.0f GB/s", r->winner, r->winner_ms, r->winner_gbps);
    if (r->seed_ms > 0) printf("  %.2fx the seed", r->seed_ms / r->winner_ms);
    if (r->runner_up[0])
      printf("\n        runner-up %s  %.4f ms%s", r->runner_up, r->runner_up_ms,
             r->within_noise ? "  (within the noise: as good as the winner)" : "");
    printf("\n");
  }
  fflush(stdout);
}

/* One GPU's run: a tuning session on it (with --seen, of the sizes picked), its jobs tuned,
 * then carried across their groups (--carry: carried alone, on the GPU's model). */
static void *run_worker(void *arg) {
  worker *w = arg;
  pm_ctx *c = NULL;
  pm__session *s = NULL;
  pm__session_opts so;
  pm_options o = {.device = w->device};
  pm__session_opts_default(&so);
  so.db_path = w->dbpath;
  so.own = w->kernel;
  so.command_line = w->cmdline;
  so.stopped_why = "interrupted (SIGINT): what was measured is stored";
  so.carry = w->carry_only ? PM__CARRY_ONLY : PM__CARRY_GPU;
  so.sharing = w->ndevices;
  so.tune = w->opts;
  so.report = show_report;
  so.report_arg = w;
  w->status = CLI_OK;
  if (pm_open(&c, &o) != PM_OK || pm__session_open(&s, c, &so) != PM_OK) {
    w->status = cli_fail("tune", "%s", pm_errmsg(c));
    goto done;
  }
  printf("GPU %d: %s (%s, %d SMs), tuning database %s\n", w->device, c->dev.name, c->dev.arch,
         c->dev.sm_count, pm__db_filename(pm__session_db(s)));
  fflush(stdout);
  if (w->seen > 0 && ((w->status = pick_seen_jobs(w, c, pm__session_db(s),
                                                  pm__session_gpu(s))) != CLI_OK ||
                      w->njobs == 0))
    goto done;
  if (pm__session_run(s, w->jobs, w->njobs, &w->sums) != PM_OK) w->status = CLI_FAIL;
done:
  pm__session_close(s);
  pm_close(c);
  return NULL;
}
int cmd_tune(int argc, char **argv) {
  const char *opname = NULL, *sizes[64], *device = "all", *dbpath = NULL, *kfile = NULL;
  cli_list slist = {sizes, 0, 64};
  cli_variants cv = CLI_VARIANTS_NONE;
  pm__problem given = {.radius = 0}; /* what --radius (0: not given), --order and --border say */
  double seconds = 0;
  int seen = 0, grid = 0, carry_only = 0;
  unsigned dtypes = 0; /* --dtype: 0 not given */
  uint64_t budget = 0; /* --budget: 0 not given */
  pm__tune_opts opts;
  pm__tune_opts_default(&opts);
  char ophelp[160];
  char sizehelp[200];
  const cli_option options[] = {
      CLI_STRING(0, "op", "OP|all", &opname,
                 cli_op_help(ophelp, sizeof ophelp, "", ", ", " or all (default: all)")),
      CLI_STRING(0, "kernel", "FILE", &kfile,
                 "a kernel of your own, described in FILE (JSON), at the sizes --size gives (or "
                 "--seen: its recorded ones): not with --op, --radius, --order, --border or "
                 "--dtype"),
      CLI_LIST(0, "size", "S", &slist,
               cli_size_help(sizehelp, sizeof sizehelp,
                             "; repeatable; a filter size may carry its own radius, "
                             "ROWSxCOLS:rR; default: the default sizes below")),
      CLI_RADIUS(&given, "filter: mask radius 1 to 3 of the sizes without their own (with "
                         "--size; default 1)"),
      CLI_ORDER(&cv, "matadd: storage order (with --size; default row)"),
      CLI_BORDER(&cv, "filter: border (with --size; default clamp)"),
      CLI_DTYPE(&dtypes, "the element types to tune, each separately (default: f32 with --size; "
                         "at the default sizes, those listed below, in f32 and bf16)"),
      CLI_CALLBACK_OPTIONAL(0, "seen", "N", &seen, seen_option,
                            "tune, on each GPU, the N (default 10) sizes that library calls on it "
                            "recorded most often as served without an exact winner and that "
                            "still have none (of --op's op, or --kernel's, where it is given); not with --size, "
                            "--radius, --order or --border"),
      CLI_FLAG(0, "carry", &carry_only,
               "search nothing: carry alone, across every size of the sizes' groups (op, type, "
               "variant, radius) that a GPU of this model measured, imported ones too (the best "
               "3 of each size timed at the sizes within 16x of it, less what the model measured "
               "there): what makes a merge of several machines' exports carry between their "
               "sizes; in a group this model measured none of, the sizes and best of the "
               "nearest model of its architecture, timed here (an H200 from the H100's results "
               "imported); not with --seen"),
      CLI_FLAG(0, "grid", &grid,
               "tune the grid of sizes results/ ships instead of the default sizes: n = 2^k up "
               "to 2^30 and the odd n = 2^(k+1/2) between; squares 2^k x 2^k from 16x16 to "
               "16384x16384 and, below the largest, 4, 16 and 64 times as wide as tall and as tall "
               "as wide (no side under 8), and each one's twin of odd sides (twice the elements) "
               "and, for matadd, its even twin (the contiguous side 2 mod 4); each variant and "
               "radius; in every type (--dtype: those); no buffer over 2 GiB"),
      CLI_CALLBACK(0, "device", "N|all", &device, device_option,
                   "which GPU (default: all, one worker per GPU, in parallel)"),
      CLI_CHOICE(0, "strategy", &opts.strategy, strategies,
                 "exhaustive: every valid point; random: the seed and --budget points drawn "
                 "at random; staged: the same draw, then rounds of the one-axis neighbours of "
                 "the best 4 until a round finds nothing faster; auto (the default): "
                 "exhaustive for spaces of at most 1500 valid points, else staged"),
      CLI_CALLBACK(0, "budget", "N", &budget, budget_option,
                   "random, staged: points drawn per problem (default 200); not with "
                   "--strategy exhaustive, which measures every valid point"),
      CLI_CALLBACK(0, "time", "SECONDS", &seconds, time_option,
                   "start no new candidate after this long (the run stops cleanly)"),
      CLI_INT(0, "samples", "N", &opts.samples, 1, 64,
              "timed samples per candidate, each one run on each of the data's K copies (default "
              "7; the best 5 get 15 more)"),
      CLI_FLAG(0, "nondeterministic", &opts.allow_nondeterministic,
               "reduce: also tune variants whose result may vary run to run"),
      CLI_DB(&dbpath),
      CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;
  /* exhaustive measures every valid point: a budget would be silently ignored */
  if (budget > 0 && opts.strategy == PM__STRATEGY_EXHAUSTIVE)
    return cli_usage_error("tune", "--budget is how many points random and staged draw: "
                                   "--strategy exhaustive measures every valid point, whatever "
                                   "the budget (use --strategy random or staged, or --time)");
  if (budget > 0) opts.budget = budget;
  int nsizes = slist.n;
  const pm__op *only;
  if (kfile != NULL && (opname != NULL || given.radius != 0 || dtypes != 0 ||
                        cv.given[CLI_VARIANT_ORDER] >= 0 || cv.given[CLI_VARIANT_BORDER] >= 0))
    return cli_usage_error("tune", "--kernel FILE is the op: not with --op, --radius, --order, "
                                   "--border or --dtype (a kernel file has its own)");
  if (kfile != NULL && nsizes == 0 && seen == 0)
    return cli_usage_error("tune", "--kernel needs --size or --seen (a kernel file has no "
                                   "default sizes)");
  if (cli_op_arg("tune", opname ? opname : "all", 1, &only) != CLI_OK) return CLI_USAGE;
  if (seen > 0 && (nsizes > 0 || given.radius != 0 || cv.given[CLI_VARIANT_ORDER] >= 0 ||
                   cv.given[CLI_VARIANT_BORDER] >= 0))
    return cli_usage_error("tune", "--seen tunes the recorded sizes: --size, --radius, --order "
                                   "and --border do not apply");
  if (carry_only && seen > 0)
    return cli_usage_error("tune", "--carry carries between the sizes tuned: not with --seen");
  if (grid && (nsizes > 0 || seen > 0 || kfile != NULL))
    return cli_usage_error("tune", "--grid is the sizes: not with --size, --seen or --kernel");
  if (nsizes > 0 && only == NULL && kfile == NULL)
    return cli_usage_error("tune", "--size needs one --op");
  int radius_given = given.radius != 0;
  int variant_given = given.radius != 0 || cv.given[CLI_VARIANT_ORDER] >= 0 ||
                      cv.given[CLI_VARIANT_BORDER] >= 0;
  if (cli_apply_variants("tune", only, &cv, &given) != CLI_OK) return CLI_USAGE;
  if (seen > 0 && dtypes != 0)
    return cli_usage_error("tune", "--seen tunes the recorded sizes, each of its own type: --dtype "
                                   "does not apply");
  if (cli_dtype_check("tune", only, dtypes) != CLI_OK) return CLI_USAGE;
  if (nsizes == 0 && seen == 0 && variant_given)
    return cli_usage_error("tune", "--radius, --order and --border apply to --size (the default "
                                   "sizes have their own)");

  static pm__session_job jobs[JOBS_MAX];
  int njobs = 0;
  pm_ctx *c = NULL;
  pm_options none = {.device = PM_DEVICE_NONE};
  int status = CLI_OK;
  pm__kernel_desc *kf = NULL;
  if (pm_open(&c, &none) != PM_OK) {
    status = cli_fail("tune", "%s", pm_errmsg(c));
    goto done;
  }
  if ((status = cli_kernel_load("tune", c, kfile, &kf, NULL, NULL)) != CLI_OK) goto done;
  if (kf != NULL) only = pm__kernel_desc_op(kf);
  for (int i = 0; i < nsizes; i++) {
    pm__problem pr = given;
    if ((status = cli_parse_size("tune", c, only, sizes[i], radius_given, &pr)) != CLI_OK)
      goto done;
    for (int t = 0; t < PM__NDTYPES; t++)
      if ((dtypes ? dtypes : 1u << PM_F32) & 1u << t) {
        if (njobs == JOBS_MAX) {
          status = cli_usage_error("tune", "more than %d problems in one run", JOBS_MAX);
          goto done;
        }
        pr.dtype = t;
        jobs[njobs++] = (pm__session_job){only, pr};
      }
  }
  for (int i = 0; grid && pm__ops[i] != NULL; i++) {
    static pm__problem prs[JOBS_MAX];
    int n = only == NULL || only == pm__ops[i]
                ? pm__op_grid(pm__ops[i], dtypes ? dtypes : ~0u, prs, JOBS_MAX - njobs)
                : 0;
    for (int k = 0; k < n; k++) jobs[njobs++] = (pm__session_job){pm__ops[i], prs[k]};
  }
  if (nsizes == 0 && seen == 0 && !grid)
    for (int i = 0; pm__ops[i] != NULL; i++)
      if (only == NULL || only == pm__ops[i])
        njobs = add_defaults(pm__ops[i], dtypes, jobs, njobs, JOBS_MAX);

  int ndev = 0, first = 0, last = -1;
  if (pm__device_count(c, &ndev) != PM_OK) {
    status = cli_fail("tune", "%s", pm_errmsg(c));
    goto done;
  }
  if (strcmp(device, "all") == 0) {
    last = ndev - 1;
  } else {
    long d = strtol(device, NULL, 10);
    if (d >= ndev)
      { status = cli_fail("tune", "--device %ld: this machine has %d CUDA device%s", d, ndev, ndev == 1 ? "" : "s"); goto done; }
    first = last = (int)d;
  }
  /* a kernel of one's own: its sizes and its seed checked before the database is touched */
  for (int i = 0; kf != NULL && i < njobs; i++)
    if (pm__kernel_desc_check_size(c, kf, &jobs[i].pr) != PM_OK) {
      status = cli_usage_error("tune", "--size %s: %s", sizes[i], pm_errmsg(c));
      goto done;
    }
  char compiled_for[16] = ""; /* not again for the next GPU of the same architecture */
  for (int d = first; kf != NULL && d <= last; d++) {
    pm__device_info info;
    if (pm__device_query(c, d, &info) != PM_OK) {
      status = cli_fail("tune", "%s", pm_errmsg(c));
      goto done;
    }
    if (strcmp(info.arch, compiled_for) == 0) continue;
    if (pm__kernel_desc_compile_seed(c, kf, info.arch) != PM_OK) {
      status = cli_fail("tune", "%s", pm_errmsg(c));
      goto done;
    }
    snprintf(compiled_for, sizeof compiled_for, "%s", info.arch);
  }

  char cmdline[2048] = "pmtune";
  for (int i = 0, len = 6; i < argc && len < (int)sizeof cmdline - 2; i++)
    len += snprintf(cmdline + len, sizeof cmdline - (size_t)len, " %s", argv[i]);
  if (seconds > 0) opts.deadline_ms = pm__now_ms() + seconds * 1e3;
  opts.stop = &interrupted;
  opts.progress = show_progress;
  signal(SIGINT, on_sigint);

  int nw = last - first + 1;
  worker *ws = calloc((size_t)nw, sizeof *ws);
  pthread_t *ts = calloc((size_t)nw, sizeof *ts);
  if (ws == NULL || ts == NULL) {
    free(ws), free(ts);
    status = cli_fail("tune", "out of memory");
    goto done;
  }
  double t0 = pm__now_ms();
  for (int i = 0; i < nw; i++) {
    ws[i] = (worker){.device = first + i, .dbpath = dbpath, .cmdline = cmdline,
                     .kernel = kf ? only : NULL, .jobs = jobs,
                     .njobs = njobs, .seen = seen, .carry_only = carry_only, .only = only,
                     .opts = opts, .ndevices = nw};
    ws[i].opts.progress_arg = &ws[i];
    if (nw == 1 || pthread_create(&ts[i], NULL, run_worker, &ws[i]) != 0) {
      run_worker(&ws[i]);
      ts[i] = 0;
    }
  }
  for (int i = 0; i < nw; i++)
    if (ts[i]) pthread_join(ts[i], NULL);
  for (int i = 0; i < nw; i++) {
    pm__tune_result *t = &ws[i].sums.tuned, *ahead = &ws[i].sums.ahead;
    printf("gpu %d  all     %llu candidates (%llu stored before, %llu more launch as one does), "
           "%llu kernels (%llu compiled, %llu of them ahead in %.1f s alongside), %llu measured, "
           "%llu wrong, %llu failed; tuning %.1f s = compile %.1f + verify %.1f + time %.1f + "
           "place %.1f + warm %.1f + other %.1f\n",
           ws[i].device, (unsigned long long)t->candidates, (unsigned long long)t->skipped,
           (unsigned long long)t->same_launch, (unsigned long long)t->kernels,
           (unsigned long long)(t->compiled + ahead->compiled),
           (unsigned long long)ahead->compiled, ahead->total_ms / 1e3,
           (unsigned long long)t->measured, (unsigned long long)t->wrong,
           (unsigned long long)t->failed, t->total_ms / 1e3, t->compile_ms / 1e3,
           t->verify_ms / 1e3, t->time_ms / 1e3, t->place_ms / 1e3, t->warm_ms / 1e3,
           (t->total_ms - t->compile_ms - t->verify_ms - t->time_ms - t->place_ms - t->warm_ms) /
               1e3);
    if (ws[i].status != CLI_OK) status = CLI_FAIL;
  }
  printf("wall time %.1f s\n", (pm__now_ms() - t0) / 1e3);
  if (interrupted) status = cli_fail("tune", "interrupted: what was measured is stored; run again to resume");
  free(ws);
  free(ts);
done:
  pm__kernel_desc_free(kf);
  pm_close(c);
  return status;
}

/* tune.c: tuning one problem on one GPU (see tune.h for the protocol; the timing is timer.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

void pm__tune_opts_default(pm__tune_opts *o) {
  memset(o, 0, sizeof *o);
  o->strategy = PM__STRATEGY_AUTO;
  o->budget = 200;
  o->samples = 7;
  o->top = 5;
  o->rounds = 5;
}

typedef struct op_run {
  const pm__op *op;
  const pm__module *k;
  const int *v;
  const pm__data *d;
} op_run;

/* One run of the point on copy j of the data. */
static int run_op(pm_ctx *c, void *arg, int j) {
  const op_run *r = arg;
  pm__data view;
  pm__data_view(r->d, j, &view);
  return r->op->launch(r->op, c, r->k, r->v, &view, pm__tune_stream());
}

int pm__time_runs(pm_ctx *c, pm__timer *t, const pm__op *op, const pm__module *k, const int *v,
                  pm__data *d, int samples, double *ms) {
  op_run r = {op, k, v, d};
  return pm__time_batches(c, t, samples, d->copies, run_op, &r, ms);
}

/* ---- Tuning --------------------------------------------------------------------------------- */

typedef struct cand {
  int v[PM__MAX_PARAMS];
  int seed;          /* the seed configuration */
  size_t layout;     /* op->layout(op, v): candidates are measured grouped by it */
  char config[PM__CONFIG_TEXT];
  int32_t job;       /* index into the variants' jobs */
  int measured;      /* timed now */
  double median, min, max, q1, q3;
  int samples;
  double err;        /* what verifying it measured (stored again with the re-timing) */
} cand;

typedef struct tuning {
  pm_ctx *c;
  pm__db *db;
  const pm__op *op;
  const pm__problem *pr;
  const pm__tune_opts *o;
  pm__tune_result *res;
  pm__db_measurement m; /* the fields common to every row */
  pm__db_problem dbp;
  char ptext[96];
  double t0;
  const char *sha;
  int driver;
  pm__limits lim;
  pm__variants vs;
  pm__module *ks;      /* loaded kernels, by job */
  uint8_t *ready;      /* by job: cubin fetched or compiled (and loaded where it could be) */
  uint8_t *in_set;     /* by point number: already a candidate */
  pm__data d;
  pm__timer *tm;
  int placed;
  size_t layout;
  uint64_t done_count, planned;
  int threads;      /* compiling threads (0: pm__compile_threads) */
  int compile_only; /* pm__tune_precompile: cubins stored, nothing loaded */
} tuning;

static void progress(tuning *t, const char *phase, uint64_t done, uint64_t total) {
  if (t->o->progress == NULL) return;
  pm__tune_progress p = {t->op->name, t->ptext, phase, done, total, t->res->winner_ms,
                         t->res->winner_gbps, (pm__now_ms() - t->t0) / 1e3};
  t->o->progress(t->o->progress_arg, &p);
}

static int stopping(const tuning *t) {
  return (t->o->stop != NULL && *t->o->stop) ||
         (t->o->deadline_ms > 0 && pm__now_ms() > t->o->deadline_ms);
}

/* Stores candidate x's outcome. */
static int store(tuning *t, const cand *x, pm__db_outcome outcome, const char *error, double err) {
  char json[PM__DB_PARAMS_MAX];
  pm__db_measurement m = t->m;
  pm__config_json(t->op, x->v, json, sizeof json);
  m.params = json;
  m.config = x->config;
  m.is_seed = pm__is_seed(t->op, x->v);
  m.outcome = outcome;
  m.error = error;
  if (outcome == PM__DB_MEASURED) {
    m.median_ms = x->median;
    m.min_ms = x->min;
    m.max_ms = x->max;
    m.samples = x->samples;
    m.gbps = t->op->bytes(t->op, t->pr) / (x->median * 1e6);
  }
  m.verified = outcome == PM__DB_MEASURED || outcome == PM__DB_WRONG_RESULT;
  m.max_error = err;
  return pm__db_measurement_put(t->db, &m);
}

/* Appends point v to the candidates, unless it is one already, is invalid, or the database
 * has it (then it counts as skipped). */
static int add_candidate(tuning *t, const int *v, cand *cs, size_t *n) {
  uint64_t idx = pm__space_index(t->op, v);
  if (t->in_set[idx] || t->op->check(t->op, v, t->pr, &t->lim) != NULL ||
      pm__same_launch(t->op, v, t->pr, &t->lim))
    return PM_OK;
  t->in_set[idx] = 1;
  cand *x = &cs[*n];
  memset(x, 0, sizeof *x);
  memcpy(x->v, v, sizeof x->v);
  x->seed = pm__is_seed(t->op, v);
  x->layout = t->op->layout(t->op, v);
  pm__config_text(t->op, v, x->config, sizeof x->config);
  int found = 0, rc = pm__db_measured(t->db, t->m.gpu_id, t->o->model, &t->dbp, x->config,
                                         t->sha, &found);
  if (rc != PM_OK) return rc;
  t->res->candidates++;
  if (found)
    t->res->skipped++;
  else
    (*n)++;
  return PM_OK;
}

/* The first candidates: the seed, the problem's default and the points asked for (o->extra);
 * then every valid point (exhaustive), or a seeded random sample of the budget drawn from the
 * other points (random, staged), or none (listed); of points that launch alike, one
 * (pm__same_launch). */
static int choose(tuning *t, int strategy, cand *cs, size_t *n) {
  const pm__op *op = t->op;
  uint64_t total = pm__space_size(op), valid = 0, *pts = pm__malloc(sizeof *pts * (size_t)total);
  int rc = PM_OK, v[PM__MAX_PARAMS], dflt[PM__MAX_PARAMS] = {0};
  op->fallback(op, t->pr, dflt);
  uint64_t seed_idx = pm__space_index(op, op->seed), dflt_idx = pm__space_index(op, dflt);
  if (pts == NULL) return pm__seterr(t->c, PM_ENOMEM, "tune: out of memory");
  /* listed: the points asked for alone, so the space is not walked */
  for (uint64_t i = 0; strategy != PM__STRATEGY_LISTED && i < total; i++) {
    if (i == seed_idx || i == dflt_idx) continue; /* added first, below */
    pm__space_point(op, i, v);
    if (op->check(op, v, t->pr, &t->lim) != NULL) continue;
    if (pm__same_launch(op, v, t->pr, &t->lim)) t->res->same_launch++;
    else pts[valid++] = i;
  }
  uint64_t keep = valid;
  if (strategy != PM__STRATEGY_EXHAUSTIVE && t->o->budget < valid) {
    uint64_t s = t->o->seed ? t->o->seed : 0x2545F4914F6CDD1DULL;
    for (uint64_t i = 0; i + 1 < valid; i++) { /* Fisher-Yates, seeded */
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      uint64_t j = i + s % (valid - i), tmp = pts[i];
      pts[i] = pts[j], pts[j] = tmp;
    }
    keep = t->o->budget;
  }
  if ((rc = add_candidate(t, op->seed, cs, n)) != PM_OK) goto done; /* the seed always runs */
  if ((rc = add_candidate(t, dflt, cs, n)) != PM_OK) goto done; /* the default, the asked */
  for (size_t i = 0; i < t->o->nextra; i++)
    if ((rc = add_candidate(t, t->o->extra[i], cs, n)) != PM_OK) goto done;
  for (uint64_t i = 0; i < keep; i++) {
    pm__space_point(op, pts[i], v);
    if ((rc = add_candidate(t, v, cs, n)) != PM_OK) goto done;
  }
done:
  free(pts);
  return rc;
}

/* Cubins for the jobs that cs[0, n) need and that are not ready yet: from the database, else
 * compiled now in parallel (and stored); then loaded. */
static int get_kernels(tuning *t, cand *cs, size_t n) {
  pm_ctx *c = t->c;
  pm__variants *vs = &t->vs;
  int rc = PM_OK;
  pm__compile_job *todo = pm__calloc(vs->n, sizeof *todo);
  size_t *todo_of = pm__calloc(vs->n, sizeof *todo_of), ntodo = 0;
  uint8_t *need = pm__calloc(vs->n, 1);
  if (!todo || !todo_of || !need) {
    rc = pm__seterr(c, PM_ENOMEM, "tune: out of memory");
    goto done;
  }
  double t0 = pm__now_ms();
  for (size_t i = 0; i < n; i++) {
    cs[i].job = vs->job_of[pm__kernel_index(t->op, cs[i].v)];
    if (!t->ready[cs[i].job]) need[cs[i].job] = 1;
  }
  for (size_t j = 0; j < vs->n; j++) {
    if (!need[j]) continue;
    t->res->kernels++;
    char dtext[PM__MAX_DEFINES * 26];
    pm__db_cubin_key key;
    rc = pm__cubin_key(c, t->sha, (const char(*)[24])vs->jobs[j].defines, vs->jobs[j].ndefines,
                       t->driver, dtext, sizeof dtext, &key);
    if (rc != PM_OK) goto done;
    rc = pm__db_cubin_get(t->db, &key, &vs->jobs[j].cubin);
    if (rc == PM_OK) continue;
    if (rc != PM_ENOTFOUND) goto done;
    todo[ntodo] = vs->jobs[j];
    todo_of[ntodo++] = j;
  }
  rc = PM_OK;
  if (ntodo > 0) progress(t, "compiling", 0, ntodo);
  if (ntodo > 0 && (rc = pm__compile_many(c, todo, ntodo, 0)) != PM_OK) goto done;
  for (size_t i = 0; i < ntodo; i++) {
    size_t j = todo_of[i];
    vs->jobs[j].cubin = todo[i].cubin;
    vs->jobs[j].status = todo[i].status;
    vs->jobs[j].error = todo[i].error;
    memset(&todo[i], 0, sizeof todo[i]); /* the job owns them now */
    if (vs->jobs[j].status != PM_OK) continue;
    char dtext[PM__MAX_DEFINES * 26];
    pm__db_cubin_key key;
    pm__cubin_key(c, t->sha, (const char(*)[24])vs->jobs[j].defines, vs->jobs[j].ndefines,
                  t->driver, dtext, sizeof dtext, &key); /* it fitted above */
    if ((rc = pm__db_cubin_put(t->db, &key, &vs->jobs[j].cubin)) != PM_OK) goto done;
  }
  t->res->compiled += ntodo;
  for (size_t j = 0; j < vs->n; j++) {
    if (!need[j]) continue;
    t->ready[j] = 1;
    if (vs->jobs[j].status != PM_OK || t->compile_only) continue; /* stored: nothing loaded */
    if (pm__module_load(c, &vs->jobs[j].cubin, t->op->entries, t->op->nentries, &t->ks[j]) != PM_OK) {
      vs->jobs[j].status = PM_ELAUNCH;
      vs->jobs[j].error = pm__strdup(pm_errmsg(c));
    }
  }
  t->res->compile_ms += pm__now_ms() - t0;
done:
  if (todo) pm__compile_jobs_free(todo, ntodo);
  free(todo);
  free(todo_of);
  free(need);
  return rc;
}

/* Verifies candidate x against the reference, then times it, and stores what happened. PM_OK
 * unless tuning cannot go on (a database error, a kernel fault that loses the context). */
static int measure_one(tuning *t, cand *x) {
  pm_ctx *c = t->c;
  const pm__op *op = t->op;
  pm__tune_result *res = t->res;
  pm__compile_job *j = &t->vs.jobs[x->job];
  int rc;
  t->done_count++;
  if (j->status == PM_ENOMEM) /* this process's failure, not the candidate's: nothing stored
                                 (a stored failure would be skipped by every resumed run) */
    return pm__seterr(c, PM_ENOMEM, "%s: %s", x->config, j->error ? j->error : "out of memory");
  if (j->status != PM_OK) {
    res->failed++;
    return store(t, x, j->status == PM_ECOMPILE ? PM__DB_COMPILE_ERROR : PM__DB_LAUNCH_ERROR,
                 j->error ? j->error : pm_strerror(j->status), 0);
  }
  if (!t->placed || op->layout(op, x->v) != t->layout) {
    double t0 = pm__now_ms();
    t->layout = op->layout(op, x->v);
    rc = pm__data_place(c, &t->d, t->layout);
    res->place_ms += pm__now_ms() - t0;
    if (rc != PM_OK) return rc;
    t->placed = 1;
  }
  double t1 = pm__now_ms(), err = 0;
  rc = pm__data_poison(c, &t->d, pm__tune_stream());
  if (rc == PM_OK) rc = op->launch(op, c, &t->ks[x->job], x->v, &t->d, pm__tune_stream());
  if (rc == PM_OK) {
    cudaError_t e = cudaStreamSynchronize(pm__tune_stream());
    if (e != cudaSuccess) /* a fault in the kernel: the context is lost, tuning cannot go on */
      rc = pm__cuda_error(c, PM_ELAUNCH, e, x->config, __FILE__, __LINE__);
    else
      rc = op->verify(op, c, x->v, &t->d, &err);
  }
  res->verify_ms += pm__now_ms() - t1;
  if (rc == PM_EVERIFY || rc == PM_ELAUNCH) {
    int fatal = rc == PM_ELAUNCH && cudaGetLastError() != cudaSuccess &&
                cudaStreamSynchronize(pm__tune_stream()) != cudaSuccess;
    int failed = rc;
    rc == PM_EVERIFY ? res->wrong++ : res->failed++;
    rc = store(t, x, rc == PM_EVERIFY ? PM__DB_WRONG_RESULT : PM__DB_LAUNCH_ERROR, pm_errmsg(c), err);
    return fatal ? failed : rc;
  }
  if (rc != PM_OK) return rc;
  double t2 = pm__now_ms(), ms[64];
  /* One run first: a candidate already slower than twice the best median is out of the race,
   * and is stored with that one sample rather than timed again. */
  if ((rc = pm__time_runs(c, t->tm, op, &t->ks[x->job], x->v, &t->d, 1, ms)) != PM_OK) return rc;
  x->samples = 1;
  if (t->o->samples > 1 && !(res->have_winner && ms[0] > 2 * res->winner_ms)) {
    rc = pm__time_runs(c, t->tm, op, &t->ks[x->job], x->v, &t->d, t->o->samples - 1, ms + 1);
    if (rc != PM_OK) return rc;
    x->samples = t->o->samples;
  }
  x->median = pm__median(ms, x->samples, &x->q1, &x->q3);
  x->min = ms[0];
  x->max = ms[x->samples - 1];
  x->measured = 1;
  x->err = err;
  res->time_ms += pm__now_ms() - t2;
  res->measured++;
  if ((rc = store(t, x, PM__DB_MEASURED, NULL, err)) != PM_OK) return rc;
  if (!res->have_winner || x->median < res->winner_ms) {
    res->have_winner = 1;
    res->winner_ms = x->median;
    res->winner_gbps = op->bytes(op, t->pr) / (x->median * 1e6);
  }
  if (pm__is_seed(op, x->v)) res->seed_ms = x->median;
  progress(t, "measuring", t->done_count, t->planned);
  return PM_OK;
}

/* The seed first, then by layout: laying the data out again costs more than many runs. */
static int by_layout(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->seed != y->seed) return y->seed - x->seed;
  return (x->layout > y->layout) - (x->layout < y->layout);
}

/* Measures cs[from, to): their kernels first, then each of them, the seed first. */
static int measure_range(tuning *t, cand *cs, size_t from, size_t to) {
  int rc = get_kernels(t, cs + from, to - from);
  if (rc != PM_OK) return rc;
  t->planned += to - from;
  qsort(cs + from, to - from, sizeof *cs, by_layout);
  for (size_t i = from; i < to && !stopping(t); i++)
    if ((rc = measure_one(t, &cs[i])) != PM_OK) return rc;
  return PM_OK;
}

static int by_median_cand(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->measured != y->measured) return y->measured - x->measured;
  return (x->median > y->median) - (x->median < y->median);
}

/* Staged search: rounds of the one-axis neighbours of the best 4 measured so far, until a round
 * finds nothing better or none is left (at most 4 rounds). */
static int refine(tuning *t, cand *cs, size_t *n) {
  const pm__op *op = t->op;
  for (int round = 0; round < 4 && !stopping(t); round++) {
    double before = t->res->have_winner ? t->res->winner_ms : 0;
    cand best[4];
    size_t nbest = 0;
    cand *sorted = pm__malloc(sizeof *sorted * (*n ? *n : 1));
    if (sorted == NULL) return pm__seterr(t->c, PM_ENOMEM, "tune: out of memory");
    memcpy(sorted, cs, sizeof *sorted * *n);
    qsort(sorted, *n, sizeof *sorted, by_median_cand);
    for (size_t i = 0; i < *n && nbest < 4 && sorted[i].measured; i++) best[nbest++] = sorted[i];
    free(sorted);
    size_t from = *n;
    for (size_t b = 0; b < nbest; b++)
      for (int p = 0; p < op->nparams; p++)
        for (int k = 0; k < op->params[p].nvalues; k++) {
          int v[PM__MAX_PARAMS];
          memcpy(v, best[b].v, sizeof v);
          if (v[p] == op->params[p].values[k]) continue;
          v[p] = op->params[p].values[k];
          int rc = add_candidate(t, v, cs, n);
          if (rc != PM_OK) return rc;
        }
    if (*n == from) break;
    int rc = measure_range(t, cs, from, *n);
    if (rc != PM_OK) return rc;
    if (t->res->have_winner && before > 0 && t->res->winner_ms >= before) break;
  }
  return PM_OK;
}

static int by_median(const void *a, const void *b) {
  const cand *x = *(cand *const *)a, *y = *(cand *const *)b;
  return (x->median > y->median) - (x->median < y->median);
}

/* Re-times the best few interleaved (round after round, each once per round), so that drift of
 * clocks or temperature hits them alike, and updates their rows. */
static int retime(tuning *t, cand *cs, size_t n, pm__data *d, pm__module *ks, pm__timer *tm) {
  pm_ctx *c = t->c;
  int rc = PM_OK, top = t->o->top, rounds = t->o->rounds;
  cand **best = pm__malloc(sizeof *best * (n ? n : 1));
  pm__data copies[16];
  memset(copies, 0, sizeof copies);
  double *ms = NULL;
  if (best == NULL) return pm__seterr(c, PM_ENOMEM, "tune: out of memory");
  size_t nb = 0;
  for (size_t i = 0; i < n; i++)
    if (cs[i].measured) best[nb++] = &cs[i];
  qsort(best, nb, sizeof *best, by_median);
  if ((size_t)top > nb) top = (int)nb;
  if (top > 16) top = 16;
  if (rounds > 64) rounds = 64;
  if (top < 2 || rounds < 1) goto done;
  /* each round times each candidate BATCH times back to back, as screening and pmtune bench do */
  enum { BATCH = 3 };
  int per = rounds * BATCH;
  if ((ms = pm__malloc(sizeof *ms * (size_t)top * (size_t)per)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "tune: out of memory");
    goto done;
  }
  for (int i = 0; i < top; i++)
    if ((rc = pm__data_place_copy(c, d, t->op->layout(t->op, best[i]->v), &copies[i])) != PM_OK)
      goto done;
  progress(t, "re-timing", 0, (uint64_t)rounds);
  for (int r = 0; r < rounds && !stopping(t); r++) {
    for (int i = 0; i < top; i++) {
      rc = pm__time_runs(c, tm, t->op, &ks[best[i]->job], best[i]->v, &copies[i], BATCH,
                         &ms[i * per + r * BATCH]);
      if (rc != PM_OK) goto done;
    }
    progress(t, "re-timing", (uint64_t)r + 1, (uint64_t)rounds);
    if (r + 1 == rounds || stopping(t)) {
      for (int i = 0; i < top; i++) {
        cand *x = best[i];
        double *xs = &ms[i * per];
        x->samples = (r + 1) * BATCH;
        x->median = pm__median(xs, x->samples, &x->q1, &x->q3);
        x->min = xs[0];
        x->max = xs[x->samples - 1];
        if ((rc = store(t, x, PM__DB_MEASURED, NULL, x->err)) != PM_OK) goto done;
      }
      break;
    }
  }
  qsort(best, (size_t)top, sizeof *best, by_median);
  snprintf(t->res->runner_up, sizeof t->res->runner_up, "%s", best[1]->config);
  t->res->runner_up_ms = best[1]->median;
  /* within noise: the runner-up's median lies inside the winner's interquartile spread, or
   * within 1% */
  double spread = best[0]->q3 - best[0]->median;
  t->res->within_noise = best[1]->median - best[0]->median <= fmax(spread, 0.01 * best[0]->median);
done:
  for (int i = 0; i < 16; i++) pm__data_unplace(&copies[i]); /* a zeroed one too */
  free(ms);
  free(best);
  return rc;
}

/* The fields of t that pm__tune_problem and pm__tune_precompile share (c, db, op, pr, o and res
 * set before). */
static void setup(tuning *t, int64_t gpu_id, int64_t run_id) {
  const pm__template *tpl = pm__op_template(t->op);
  int runtime = 0;
  memset(t->res, 0, sizeof *t->res);
  t->t0 = pm__now_ms();
  pm__problem_text(t->op, t->pr, t->ptext, sizeof t->ptext);
  pm__op_db_problem(t->op, t->pr, &t->dbp);
  pm__cuda_versions(&t->driver, &runtime);
  t->sha = tpl->sha256;
  t->m.gpu_id = gpu_id;
  t->m.run_id = run_id;
  t->m.problem = t->dbp;
  t->m.template_sha256 = tpl->sha256;
  t->lim = pm__limits_of(&t->c->dev);
  t->lim.allow_nondeterministic = t->o->allow_nondeterministic;
}

/* Step 1 of tuning: the kernels the valid points make, and the first candidates (less those
 * stored) in (*cs)[0, *n); *strategy is the one in force (AUTO decided). */
static int plan(tuning *t, int *strategy, cand **cs, size_t *n) {
  pm_ctx *c = t->c;
  const pm__op *op = t->op;
  uint64_t total = pm__space_size(op);
  int rc = pm__variants_make(c, op, t->pr, &t->lim, c->dev.arch, &t->vs);
  if (rc != PM_OK) return rc;
  *cs = pm__malloc(sizeof **cs * (size_t)total);
  t->in_set = pm__calloc((size_t)total, 1);
  t->ready = pm__calloc(t->vs.n ? t->vs.n : 1, 1);
  t->ks = pm__calloc(t->vs.n ? t->vs.n : 1, sizeof *t->ks);
  if (!*cs || !t->in_set || !t->ready || !t->ks)
    return pm__seterr(c, PM_ENOMEM, "tune: out of memory");
  *strategy = t->o->strategy;
  if (*strategy == PM__STRATEGY_AUTO) {
    uint64_t valid = 0;
    for (uint64_t i = 0; i < total; i++) {
      int v[PM__MAX_PARAMS];
      pm__space_point(op, i, v);
      valid += op->check(op, v, t->pr, &t->lim) == NULL && !pm__same_launch(op, v, t->pr, &t->lim);
    }
    *strategy = valid <= PM__AUTO_EXHAUSTIVE ? PM__STRATEGY_EXHAUSTIVE : PM__STRATEGY_STAGED;
  }
  return choose(t, *strategy, *cs, n);
}

/* Frees what setup and plan made (the kernels unloaded). */
static void unplan(tuning *t, cand *cs) {
  if (t->ks != NULL)
    for (size_t j = 0; j < t->vs.n; j++) pm__module_unload(&t->ks[j]);
  free(t->ks);
  free(t->ready);
  free(t->in_set);
  pm__variants_free(&t->vs);
  free(cs);
}

int pm__tune_precompile(pm_ctx *c, pm__db *db, int64_t gpu_id, const pm__op *op,
                        const pm__problem *pr, const pm__tune_opts *o, int threads,
                        pm__tune_result *res) {
  pm__tune_opts quiet = *o; /* the tuning run shows its own progress */
  quiet.progress = NULL;
  tuning t = {.c = c, .db = db, .op = op, .pr = pr, .o = &quiet, .res = res, .threads = threads,
              .compile_only = 1};
  cand *cs = NULL;
  size_t n = 0;
  int strategy;
  setup(&t, gpu_id, 0);
  int rc = plan(&t, &strategy, &cs, &n);
  /* in slices, so that a stop comes soon */
  for (size_t from = 0; rc == PM_OK && from < n && !(o->stop && *o->stop); from += 256)
    rc = get_kernels(&t, cs + from, n - from < 256 ? n - from : 256);
  res->total_ms = pm__now_ms() - t.t0;
  unplan(&t, cs);
  return rc;
}

/* When this thread's last tuning left its GPU: the clocks are still up within half a second of
 * it, and the 200 ms of warming up are spared (a run of many problems spent a tenth on them). */
static _Thread_local double busy_until = -1e9;

int pm__tune_problem(pm_ctx *c, pm__db *db, int64_t gpu_id, int64_t run_id, const pm__op *op,
                     const pm__problem *pr, const pm__tune_opts *o, pm__tune_result *res) {
  tuning t = {.c = c, .db = db, .op = op, .pr = pr, .o = o, .res = res};
  cand *cs = NULL;
  size_t n = 0;
  int rc, prev = -1, strategy;
  setup(&t, gpu_id, run_id);
  if ((rc = pm__device_enter(c, &prev)) != PM_OK) return rc;

  /* 1. the kernels the valid points make, and the first candidates (less those stored) */
  if ((rc = plan(&t, &strategy, &cs, &n)) != PM_OK) goto done;
  if (n == 0) goto done;

  /* 2. the data and its reference, and the GPU's clocks up */
  double v0 = pm__now_ms();
  if ((rc = op->prepare(op, c, pr, o->seed ? o->seed : PM__DEFAULT_SEED, &t.d)) != PM_OK) goto done;
  t.d.copies = pm__copies_for(c, op->bytes(op, pr));
  if ((rc = pm__timer_new(c, &t.tm)) != PM_OK) goto done;
  res->verify_ms += pm__now_ms() - v0;
  if (pm__now_ms() - busy_until > 500) {
    double w0 = pm__now_ms();
    rc = pm__timer_warm(c, t.tm, 200);
    res->warm_ms += pm__now_ms() - w0;
    if (rc != PM_OK) goto done;
  }

  /* 3. each candidate: verified, then timed (the seed first); staged: then neighbours */
  if ((rc = measure_range(&t, cs, 0, n)) != PM_OK) goto done;
  if (strategy == PM__STRATEGY_STAGED && (rc = refine(&t, cs, &n)) != PM_OK) goto done;

  /* 4. the best few again, interleaved */
  double t3 = pm__now_ms();
  if ((rc = retime(&t, cs, n, &t.d, t.ks, t.tm)) != PM_OK) goto done;
  res->time_ms += pm__now_ms() - t3;
  res->have_winner = 0;
  for (size_t i = 0; i < n; i++) {
    if (!cs[i].measured) continue;
    if (!res->have_winner || cs[i].median < res->winner_ms) {
      res->have_winner = 1;
      res->winner_ms = cs[i].median;
      snprintf(res->winner, sizeof res->winner, "%s", cs[i].config);
    }
    if (pm__is_seed(op, cs[i].v)) res->seed_ms = cs[i].median;
  }
  if (res->have_winner) res->winner_gbps = op->bytes(op, pr) / (res->winner_ms * 1e6);

done:
  res->stopped = stopping(&t);
  res->total_ms = pm__now_ms() - t.t0;
  progress(&t, "done", n, n);
  if (t.tm != NULL) busy_until = pm__now_ms();
  pm__timer_free(t.tm);
  pm__data_free(&t.d);
  unplan(&t, cs);
  pm__device_leave(prev);
  return rc;
}

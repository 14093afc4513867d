/* tune.c: tuning one problem on one GPU (see tune.h for the protocol), and the timing it uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

void pm__tune_opts_default(pm__tune_opts *o) {
  memset(o, 0, sizeof *o);
  o->strategy = PM__STRATEGY_EXHAUSTIVE;
  o->samples = 7;
  o->top = 5;
  o->rounds = 5;
}

void pm__tune_db_problem(const pm__op *op, const pm__problem *pr, pm__db_problem *out) {
  memset(out, 0, sizeof *out);
  out->op = op->name;
  out->dtype = "f32";
  if (op->dims == 1) {
    out->n = pr->n;
  } else {
    out->rows = pr->rows;
    out->cols = pr->cols;
  }
  out->radius = op->problem_defines ? pr->radius : 0;
  out->variant = op->variant(pr);
}

/* ---- Timing --------------------------------------------------------------------------------- */

int pm__timer_init(pm_ctx *c, pm__timer *t) {
  int rc = PM_OK;
  memset(t, 0, sizeof *t);
  t->flush_bytes = 2 * (size_t)(c->dev.l2_bytes > 0 ? c->dev.l2_bytes : 64 << 20);
  PM__CUDA(c, cudaMalloc(&t->flush, t->flush_bytes));
  for (; t->nevents < 64; t->nevents++) {
    PM__CUDA(c, cudaEventCreate(&t->start[t->nevents]));
    if (cudaEventCreate(&t->stop[t->nevents]) != cudaSuccess) {
      cudaEventDestroy(t->start[t->nevents]);
      rc = pm__seterr(c, PM_ECUDA, "cudaEventCreate failed");
      goto fail;
    }
  }
  return PM_OK;
fail:
  pm__timer_free(t);
  return rc;
}

void pm__timer_free(pm__timer *t) {
  for (int i = 0; i < t->nevents; i++) {
    cudaEventDestroy(t->start[i]);
    cudaEventDestroy(t->stop[i]);
  }
  if (t->flush != NULL) cudaFree(t->flush);
  memset(t, 0, sizeof *t);
}

int pm__timer_warm(pm_ctx *c, pm__timer *t, double ms) {
  int rc = PM_OK;
  float elapsed = 0;
  for (int round = 0; round < 1000 && elapsed < ms; round++) {
    PM__CUDA(c, cudaEventRecord(t->start[0], 0));
    for (int i = 0; i < 8; i++) PM__CUDA(c, cudaMemsetAsync(t->flush, i, t->flush_bytes, 0));
    PM__CUDA(c, cudaEventRecord(t->stop[0], 0));
    PM__CUDA(c, cudaEventSynchronize(t->stop[0]));
    float f;
    PM__CUDA(c, cudaEventElapsedTime(&f, t->start[0], t->stop[0]));
    elapsed += f;
  }
fail:
  return rc;
}

int pm__time_runs(pm_ctx *c, pm__timer *t, const pm__op *op, const pm__kernel *k, const int *v,
                  pm__data *d, int samples, double *ms) {
  int rc = PM_OK;
  if (samples < 1 || samples > t->nevents)
    return pm__seterr(c, PM_EINVAL, "timing: 1 to %d samples", t->nevents);
  for (int i = 0; i < samples; i++) {
    /* evict the inputs from L2, so that no run is timed on cached data */
    PM__CUDA(c, cudaMemsetAsync(t->flush, i & 0xff, t->flush_bytes, 0));
    PM__CUDA(c, cudaEventRecord(t->start[i], 0));
    if ((rc = op->launch(c, k, v, d, 0)) != PM_OK) return rc;
    PM__CUDA(c, cudaEventRecord(t->stop[i], 0));
  }
  PM__CUDA(c, cudaEventSynchronize(t->stop[samples - 1]));
  for (int i = 0; i < samples; i++) {
    float f;
    PM__CUDA(c, cudaEventElapsedTime(&f, t->start[i], t->stop[i]));
    ms[i] = f;
  }
fail:
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double pm__median(double *ms, int n, double *q1, double *q3) {
  qsort(ms, (size_t)n, sizeof *ms, cmp_double);
  if (q1) *q1 = ms[n / 4];
  if (q3) *q3 = ms[(3 * n) / 4];
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

/* ---- Tuning --------------------------------------------------------------------------------- */

typedef struct cand {
  int v[PM__MAX_PARAMS];
  char config[PM__CONFIG_TEXT];
  int32_t job;       /* index into the variants' jobs */
  int measured;      /* timed now */
  double median, min, max, q1, q3;
  int samples;
} cand;

typedef struct tuning {
  pm_ctx *c;
  pm__db *db;
  const pm__op *op;
  const pm__problem *pr;
  const pm__tune_opts *o;
  pm__tune_result *res;
  pm__db_measurement m; /* the fields common to every row */
  char ptext[96];
  double t0;
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
    m.gbps = t->op->bytes(t->pr) / (x->median * 1e6);
  }
  m.verified = outcome == PM__DB_MEASURED || outcome == PM__DB_WRONG_RESULT;
  m.max_error = err;
  return pm__db_measurement_put(t->db, &m);
}

/* The candidates: every valid point (exhaustive) or a random sample plus the seed. */
static int choose(tuning *t, const pm__limits *lim, cand **out, size_t *n) {
  const pm__op *op = t->op;
  uint64_t total = pm__space_size(op), valid = 0;
  cand *cs = malloc(sizeof *cs * (size_t)total);
  if (cs == NULL) return pm__seterr(t->c, PM_ENOMEM, "tune: out of memory");
  for (uint64_t i = 0; i < total; i++) {
    cand *x = &cs[valid];
    memset(x, 0, sizeof *x);
    pm__space_point(op, i, x->v);
    if (op->check(x->v, t->pr, lim) == NULL) valid++;
  }
  if (t->o->strategy == PM__STRATEGY_RANDOM && t->o->budget < valid) {
    uint64_t s = t->o->seed ? t->o->seed : 0x2545F4914F6CDD1DULL;
    for (uint64_t i = 0; i + 1 < valid; i++) { /* Fisher-Yates, seeded */
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      uint64_t j = i + s % (valid - i);
      cand tmp = cs[i];
      cs[i] = cs[j];
      cs[j] = tmp;
    }
    uint64_t keep = t->o->budget, seed_at = valid;
    for (uint64_t i = 0; i < valid; i++)
      if (pm__is_seed(op, cs[i].v)) seed_at = i;
    if (seed_at >= keep && seed_at < valid) { /* the seed always runs */
      cand tmp = cs[keep];
      cs[keep] = cs[seed_at];
      cs[seed_at] = tmp;
      keep++;
    }
    valid = keep;
  }
  for (uint64_t i = 0; i < valid; i++) pm__config_text(op, cs[i].v, cs[i].config, sizeof cs[i].config);
  *out = cs;
  *n = (size_t)valid;
  return PM_OK;
}

/* Cubins for the jobs the candidates need: from the database, else compiled now (and stored). */
static int get_kernels(tuning *t, pm__variants *vs, cand *cs, size_t n, const char *sha,
                       int driver, pm__kernel **kernels) {
  pm_ctx *c = t->c;
  int rc = PM_OK;
  uint8_t *need = calloc(vs->n, 1);
  pm__compile_job *todo = calloc(vs->n, sizeof *todo);
  size_t *todo_of = calloc(vs->n, sizeof *todo_of), ntodo = 0;
  pm__kernel *ks = calloc(vs->n, sizeof *ks);
  if (!need || !todo || !todo_of || !ks) {
    rc = pm__seterr(c, PM_ENOMEM, "tune: out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    cs[i].job = vs->job_of[pm__kernel_index(t->op, cs[i].v)];
    need[cs[i].job] = 1;
  }
  double t0 = pm__now_ms();
  for (size_t j = 0; j < vs->n; j++) {
    if (!need[j]) continue;
    t->res->kernels++;
    const char *defs[PM__MAX_DEFINES];
    char dtext[PM__MAX_DEFINES * 26];
    for (int d = 0; d < vs->jobs[j].ndefines; d++) defs[d] = vs->jobs[j].defines[d];
    if ((rc = pm__db_defines_text(c, defs, (size_t)vs->jobs[j].ndefines, dtext, sizeof dtext)) != PM_OK)
      goto done;
    pm__db_cubin_key key = {sha, dtext, c->dev.arch, pm__nvrtc_version(), driver};
    rc = pm__db_cubin_get(t->db, &key, &vs->jobs[j].cubin);
    if (rc == PM_OK) continue;
    if (rc != PM_ENOTFOUND) goto done;
    todo[ntodo] = vs->jobs[j];
    todo_of[ntodo++] = j;
  }
  rc = PM_OK;
  progress(t, "compiling", 0, ntodo);
  if (ntodo > 0 && (rc = pm__compile_many(c, todo, ntodo, 0)) != PM_OK) goto done;
  for (size_t i = 0; i < ntodo; i++) {
    size_t j = todo_of[i];
    vs->jobs[j].cubin = todo[i].cubin;
    vs->jobs[j].status = todo[i].status;
    vs->jobs[j].error = todo[i].error;
    memset(&todo[i], 0, sizeof todo[i]); /* the job owns them now */
    if (vs->jobs[j].status != PM_OK) continue;
    const char *defs[PM__MAX_DEFINES];
    char dtext[PM__MAX_DEFINES * 26];
    for (int d = 0; d < vs->jobs[j].ndefines; d++) defs[d] = vs->jobs[j].defines[d];
    pm__db_defines_text(c, defs, (size_t)vs->jobs[j].ndefines, dtext, sizeof dtext);
    pm__db_cubin_key key = {sha, dtext, c->dev.arch, pm__nvrtc_version(), driver};
    if ((rc = pm__db_cubin_put(t->db, &key, &vs->jobs[j].cubin)) != PM_OK) goto done;
  }
  t->res->compiled = ntodo;
  for (size_t j = 0; j < vs->n; j++) {
    if (!need[j] || vs->jobs[j].status != PM_OK) continue;
    if (pm__kernel_load(c, vs->jobs[j].cubin.data, t->op->entries, t->op->nentries, &ks[j]) != PM_OK) {
      vs->jobs[j].status = PM_ELAUNCH;
      vs->jobs[j].error = strdup(pm_errmsg(c));
    }
  }
  t->res->compile_ms += pm__now_ms() - t0;
done:
  if (todo) pm__compile_jobs_free(todo, ntodo);
  free(todo);
  free(todo_of);
  free(need);
  if (rc != PM_OK) {
    free(ks);
    ks = NULL;
  }
  *kernels = ks;
  return rc;
}

static int by_median(const void *a, const void *b) {
  const cand *x = *(cand *const *)a, *y = *(cand *const *)b;
  return (x->median > y->median) - (x->median < y->median);
}

/* Re-times the best few interleaved (round after round, each once per round), so that drift of
 * clocks or temperature hits them alike, and updates their rows. */
static int retime(tuning *t, cand *cs, size_t n, pm__data *d, pm__kernel *ks, pm__timer *tm) {
  pm_ctx *c = t->c;
  int rc = PM_OK, top = t->o->top, rounds = t->o->rounds;
  cand **best = malloc(sizeof *best * (n ? n : 1));
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
  if ((ms = malloc(sizeof *ms * (size_t)top * (size_t)per)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "tune: out of memory");
    goto done;
  }
  for (int i = 0; i < top; i++)
    if ((rc = pm__data_place_copy(c, d, t->op->layout(best[i]->v), &copies[i])) != PM_OK) goto done;
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
        if ((rc = store(t, x, PM__DB_MEASURED, NULL, 0)) != PM_OK) goto done;
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
  for (int i = 0; i < 16; i++)
    if (copies[i].out != NULL) pm__data_unplace(&copies[i]);
  free(ms);
  free(best);
  return rc;
}

int pm__tune_problem(pm_ctx *c, pm__db *db, int64_t gpu_id, int64_t run_id, const pm__op *op,
                     const pm__problem *pr, const pm__tune_opts *o, pm__tune_result *res) {
  tuning t = {.c = c, .db = db, .op = op, .pr = pr, .o = o, .res = res, .t0 = pm__now_ms()};
  pm__db_problem dbp;
  pm__variants vs = {0};
  pm__kernel *ks = NULL;
  pm__data d = {0};
  pm__timer tm = {0};
  cand *cs = NULL;
  size_t n = 0;
  int rc, prev = -1, driver = 0, runtime = 0;
  const pm__template *tpl = pm__template_find(op->name);

  memset(res, 0, sizeof *res);
  pm__problem_text(op, pr, t.ptext, sizeof t.ptext);
  pm__tune_db_problem(op, pr, &dbp);
  pm__db_cuda_versions(&driver, &runtime);
  t.m.gpu_id = gpu_id;
  t.m.run_id = run_id;
  t.m.problem = dbp;
  t.m.template_sha256 = tpl->sha256;
  pm__limits lim = pm__limits_of(&c->dev);
  lim.allow_nondeterministic = o->allow_nondeterministic;
  if ((rc = pm__device_enter(c, &prev)) != PM_OK) return rc;

  /* 1. the candidates, less those the database has */
  if ((rc = choose(&t, &lim, &cs, &n)) != PM_OK) goto done;
  res->candidates = n;
  size_t keep = 0;
  for (size_t i = 0; i < n; i++) {
    int found = 0;
    if ((rc = pm__db_measured(db, gpu_id, &dbp, cs[i].config, tpl->sha256, &found)) != PM_OK) goto done;
    if (found)
      res->skipped++;
    else
      cs[keep++] = cs[i];
  }
  n = keep;
  if (n == 0) goto done;

  /* 2. their kernels */
  if ((rc = pm__variants_make(c, op, pr, &lim, c->dev.arch, &vs)) != PM_OK) goto done;
  if ((rc = get_kernels(&t, &vs, cs, n, tpl->sha256, driver, &ks)) != PM_OK) goto done;

  /* 3. the data and its reference */
  double v0 = pm__now_ms();
  if ((rc = op->prepare(c, pr, o->seed ? o->seed : 0x5eed, &d)) != PM_OK) goto done;
  if ((rc = pm__timer_init(c, &tm)) != PM_OK) goto done;
  res->verify_ms += pm__now_ms() - v0;

  /* 4. each candidate, layout by layout: verify, then time; the clocks up first */
  if ((rc = pm__timer_warm(c, &tm, 200)) != PM_OK) goto done;
  uint64_t done_count = 0;
  int placed = 0;
  size_t layout = 0;
  for (int pass = 0; pass < 2 && !stopping(&t); pass++) { /* the seed first, then the rest */
    for (size_t i = 0; i < n && !stopping(&t); i++) {
      cand *x = &cs[i];
      if (pm__is_seed(op, x->v) != (pass == 0)) continue;
      pm__compile_job *j = &vs.jobs[x->job];
      done_count++;
      if (j->status != PM_OK) {
        res->failed++;
        if ((rc = store(&t, x, j->status == PM_ECOMPILE ? PM__DB_COMPILE_ERROR : PM__DB_LAUNCH_ERROR,
                        j->error ? j->error : pm_strerror(j->status), 0)) != PM_OK)
          goto done;
        continue;
      }
      if (!placed || op->layout(x->v) != layout) {
        layout = op->layout(x->v);
        if ((rc = pm__data_place(c, &d, layout)) != PM_OK) goto done;
        placed = 1;
      }
      double t1 = pm__now_ms(), err = 0;
      rc = pm__data_poison(c, &d, 0);
      if (rc == PM_OK) rc = op->launch(c, &ks[x->job], x->v, &d, 0);
      if (rc == PM_OK) {
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) /* a fault in the kernel: the context is lost, tuning cannot go on */
          rc = pm__cuda_error(c, PM_ELAUNCH, e, x->config, __FILE__, __LINE__);
        else
          rc = op->verify(c, x->v, &d, &err);
      }
      res->verify_ms += pm__now_ms() - t1;
      if (rc == PM_EVERIFY || rc == PM_ELAUNCH) {
        int fatal = rc == PM_ELAUNCH && cudaGetLastError() != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess;
        rc == PM_EVERIFY ? res->wrong++ : res->failed++;
        int src = store(&t, x, rc == PM_EVERIFY ? PM__DB_WRONG_RESULT : PM__DB_LAUNCH_ERROR, pm_errmsg(c), err);
        if (fatal) goto done;
        if ((rc = src) != PM_OK) goto done;
        continue;
      }
      if (rc != PM_OK) goto done;
      double t2 = pm__now_ms(), ms[64];
      /* One run first: a candidate already slower than twice the best median is out of the
       * race, and is stored with that one sample rather than timed again. */
      if ((rc = pm__time_runs(c, &tm, op, &ks[x->job], x->v, &d, 1, ms)) != PM_OK) goto done;
      x->samples = 1;
      if (o->samples > 1 && !(res->have_winner && ms[0] > 2 * res->winner_ms)) {
        if ((rc = pm__time_runs(c, &tm, op, &ks[x->job], x->v, &d, o->samples - 1, ms + 1)) != PM_OK)
          goto done;
        x->samples = o->samples;
      }
      x->median = pm__median(ms, x->samples, &x->q1, &x->q3);
      x->min = ms[0];
      x->max = ms[x->samples - 1];
      x->measured = 1;
      res->time_ms += pm__now_ms() - t2;
      res->measured++;
      if ((rc = store(&t, x, PM__DB_MEASURED, NULL, err)) != PM_OK) goto done;
      if (!res->have_winner || x->median < res->winner_ms) {
        res->have_winner = 1;
        res->winner_ms = x->median;
        res->winner_gbps = op->bytes(pr) / (x->median * 1e6);
      }
      if (pm__is_seed(op, x->v)) res->seed_ms = x->median;
      progress(&t, "measuring", done_count, n);
    }
  }

  /* 5. the best few again, interleaved */
  double t3 = pm__now_ms();
  if ((rc = retime(&t, cs, n, &d, ks, &tm)) != PM_OK) goto done;
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
  if (res->have_winner) res->winner_gbps = op->bytes(pr) / (res->winner_ms * 1e6);

done:
  res->stopped = stopping(&t);
  res->total_ms = pm__now_ms() - t.t0;
  progress(&t, "done", n, n);
  if (ks != NULL)
    for (size_t j = 0; j < vs.n; j++) pm__kernel_unload(&ks[j]);
  free(ks);
  pm__timer_free(&tm);
  pm__data_free(&d);
  pm__variants_free(&vs);
  free(cs);
  pm__device_leave(prev);
  return rc;
}

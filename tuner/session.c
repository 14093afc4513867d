/* session.c: a tuning session (see session.h): opening the database for tuning, recording the
 * run, tuning each job with the next ones compiled ahead, carrying across the jobs' groups. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

struct pm__session {
  pm_ctx *c;
  pm__db *db;
  int64_t gpu_id;
  pm__session_opts o;
  const pm__db_op *const *ops; /* the ops the database stores: pm__ops_db(), and o.own's */
  pm__ops_db_plus plus;        /* the list with o.own's, where it is given */
};

void pm__session_opts_default(pm__session_opts *o) {
  memset(o, 0, sizeof *o);
  o->carry = PM__CARRY_NONE;
  o->sharing = 1;
  pm__tune_opts_default(&o->tune);
}

int pm__session_open(pm__session **out, pm_ctx *c, const pm__session_opts *o) {
  pm__session *s = pm__calloc(1, sizeof *s);
  int rc, driver = 0, runtime = 0;
  *out = NULL;
  if (s == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  s->c = c;
  s->o = *o;
  if (s->o.tune_problem == NULL) s->o.tune_problem = pm__tune_problem;
  if (s->o.precompile == NULL) s->o.precompile = pm__tune_precompile;
  if (s->o.sharing < 1) s->o.sharing = 1;
  s->ops = o->own != NULL ? pm__ops_db_with(o->own, &s->plus) : pm__ops_db();
  if ((rc = pm__db_open(c, o->db_path, 0, s->ops, &s->db)) != PM_OK ||
      (o->own != NULL && /* its measurements are the ones shown and served from now on */
       (rc = pm__db_template_current(s->db, o->own->name, pm__op_template(o->own)->sha256)) !=
           PM_OK))
    goto fail;
  pm__cuda_versions(&driver, &runtime);
  if ((rc = pm__db_gpu_put(s->db, &c->dev, driver, runtime, &s->gpu_id)) != PM_OK) goto fail;
  *out = s;
  return PM_OK;
fail:
  pm__session_close(s);
  return rc;
}

pm__db *pm__session_db(const pm__session *s) { return s->db; }

int64_t pm__session_gpu(const pm__session *s) { return s->gpu_id; }

void pm__session_close(pm__session *s) {
  if (s == NULL) return;
  pm__db_close(s->db);
  free(s);
}

static int stopped(const pm__session *s) {
  return s->o.tune.stop != NULL && *s->o.tune.stop;
}

static void report(const pm__session *s, const pm__session_event *e) {
  if (s->o.report != NULL) s->o.report(s->o.report_arg, e);
}

/* ---- Compiling ahead -------------------------------------------------------------------------
 * While the session measures job i, a thread of its own compiles the kernels of jobs i+1, i+2,
 * ... into the database's cubin cache (o.precompile), so that a run's compiling overlaps its
 * measuring; the session takes job i once the thread is past it. */

typedef struct ahead {
  const pm__session *s;
  const pm__session_job *jobs;
  int njobs;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;                   /* jobs [0, done) compiled ahead or given up on */
  volatile sig_atomic_t stop; /* the session is done: compile nothing more */
  pm__tune_result r[];        /* what compiling each job ahead did */
} ahead;

static void *compile_ahead(void *arg) {
  ahead *a = arg;
  const pm__session *s = a->s;
  pm_ctx *c = NULL;
  pm__db *db = NULL;
  pm__tune_opts o = s->o.tune;
  o.stop = &a->stop;
  long threads = (pm__compile_threads() - 2) / s->o.sharing; /* the measuring thread's own core,
                                                                and the GPU's callback thread's */
  int ok = pm__ctx_create(&c, s->c->device, NULL) == PM_OK &&
           pm__db_open(c, s->o.db_path, 0, s->ops, &db) == PM_OK;
  for (int i = 0; i < a->njobs; i++) {
    /* a failure here costs nothing but time: the session compiles what is missing */
    if (ok && !a->stop && !stopped(s))
      ok = s->o.precompile(c, db, s->gpu_id, a->jobs[i].op, &a->jobs[i].pr, &o,
                           threads < 1 ? 1 : (int)threads, &a->r[i]) == PM_OK;
    pthread_mutex_lock(&a->lock);
    a->done = i + 1;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
  }
  pm__db_close(db);
  if (c != NULL) pm__ctx_free(c);
  return NULL;
}

/* Waits until a is past job i; returns the milliseconds waited. */
static double wait_ahead(ahead *a, int i) {
  double t0 = pm__now_ms();
  pthread_mutex_lock(&a->lock);
  while (a->done <= i) pthread_cond_wait(&a->cond, &a->lock);
  pthread_mutex_unlock(&a->lock);
  return pm__now_ms() - t0;
}

/* The thread compiling jobs ahead, started; NULL where there is none (fewer than two jobs, or
 * no memory or thread for it: the session then compiles everything itself). */
static ahead *ahead_start(const pm__session *s, const pm__session_job *jobs, int njobs,
                          pthread_t *thread) {
  if (njobs < 2) return NULL;
  ahead *a = pm__calloc(1, sizeof *a + (size_t)njobs * sizeof *a->r);
  if (a == NULL) return NULL;
  a->s = s, a->jobs = jobs, a->njobs = njobs;
  pthread_mutex_init(&a->lock, NULL);
  pthread_cond_init(&a->cond, NULL);
  if (pthread_create(thread, NULL, compile_ahead, a) == 0) return a;
  pthread_cond_destroy(&a->cond);
  pthread_mutex_destroy(&a->lock);
  free(a);
  return NULL;
}

static void ahead_end(ahead *a, pthread_t thread) {
  if (a == NULL) return;
  a->stop = 1;
  pthread_join(thread, NULL);
  pthread_cond_destroy(&a->cond);
  pthread_mutex_destroy(&a->lock);
  free(a);
}

/* Adds what a tuning measured, and the time each step took but the whole, to *sum: a carrying
 * sums its sizes' so (it counts its candidates, kernels and total once). */
static void add_measured(pm__tune_result *sum, const pm__tune_result *r) {
  sum->measured += r->measured, sum->wrong += r->wrong, sum->failed += r->failed;
  sum->compile_ms += r->compile_ms, sum->verify_ms += r->verify_ms;
  sum->time_ms += r->time_ms, sum->place_ms += r->place_ms, sum->warm_ms += r->warm_ms;
}

/* Adds what a tuning (or a group's carrying) did to *sum. */
static void add_result(pm__tune_result *sum, const pm__tune_result *r) {
  sum->candidates += r->candidates, sum->skipped += r->skipped;
  sum->same_launch += r->same_launch;
  sum->kernels += r->kernels, sum->compiled += r->compiled;
  sum->total_ms += r->total_ms;
  add_measured(sum, r);
}

/* ---- Carrying --------------------------------------------------------------------------------
 * After the session's jobs, every size of their groups (op, type, variant, radius) that was
 * measured has the best few configurations of the sizes around it measured too
 * (pm__db_carry_configs), timing alone (their cubins are cached). */

typedef struct carry_points {
  const pm__op *op;
  int (*v)[PM__MAX_PARAMS];
  size_t n, cap;
} carry_points;

/* Appends point v to cp; 1 where there is no memory for it (fewer carried: the run goes on). */
static int carry_point_add(carry_points *cp, const int *v) {
  if (cp->n == cp->cap) {
    size_t cap = cp->cap ? 2 * cp->cap : 32;
    int(*grown)[PM__MAX_PARAMS] = pm__realloc(cp->v, cap * sizeof *grown);
    if (grown == NULL) return 1;
    cp->v = grown, cp->cap = cap;
  }
  memcpy(cp->v[cp->n++], v, sizeof cp->v[0]);
  return 0;
}

static int carry_point(void *arg, const char *config) {
  carry_points *cp = arg;
  int v[PM__MAX_PARAMS] = {0};
  return pm__config_parse(NULL, cp->op, config, v) == PM_OK ? carry_point_add(cp, v) : 0;
}

typedef struct carry_sizes {
  pm__db_problem *z;
  size_t n, cap;
} carry_sizes;

static int carry_size(void *arg, const pm__db_problem *p) {
  carry_sizes *cs = arg;
  if (cs->n == cs->cap) {
    size_t cap = cs->cap ? 2 * cs->cap : 32;
    pm__db_problem *grown = pm__realloc(cs->z, cap * sizeof *grown);
    if (grown == NULL) return 1;
    cs->z = grown, cs->cap = cap;
  }
  cs->z[cs->n++] = *p;
  return 0;
}

static int same_group(const pm__session_job *a, const pm__session_job *b) {
  return a->op == b->op && a->pr.dtype == b->pr.dtype && a->pr.variant == b->pr.variant &&
         (a->op->radius_max == 0 || a->pr.radius == b->pr.radius);
}

/* Each size's configurations to time there, into pts[k] (pm__db_carry_configs); *first receives
 * the first size with any (sizes->n where none has). PM_OK, or the database's failure. */
static int carry_gather(pm__session *s, const pm__op *op, const carry_sizes *sizes, int model,
                        int64_t from, const char *sha, carry_points *pts, size_t *first) {
  int rc = PM_OK;
  *first = sizes->n;
  for (size_t k = 0; rc == PM_OK && k < sizes->n && !stopped(s); k++) {
    pm__problem pr;
    pts[k].op = op;
    if (!pm__problem_of_db(op, &sizes->z[k], &pr)) continue;
    rc = pm__db_carry_configs(s->db, s->gpu_id, model, from, &sizes->z[k], sha, carry_point,
                              &pts[k]);
    if (pts[k].n > 0 && *first == sizes->n) *first = k;
  }
  return rc;
}

/* The group's kernels compiled before any size is timed: the union of every size's
 * configurations (each once) at the first size with any (first), in one batch on every core
 * (o.precompile), rather than a few at a time as each size comes; the kernels are the same at
 * every size where an op's kernels do not depend on it, as the built-in ones' do not. What it did
 * is added to *total; a failure costs time alone (each size compiles what it is missing). */
static void carry_compile(pm__session *s, const pm__op *op, const carry_sizes *sizes,
                          size_t first, const carry_points *pts, const pm__tune_opts *o,
                          pm__tune_result *total) {
  carry_points all = {op, NULL, 0, 0};
  for (size_t k = first; k < sizes->n; k++)
    for (size_t j = 0; j < pts[k].n; j++) {
      size_t x = 0;
      while (x < all.n && memcmp(all.v[x], pts[k].v[j], sizeof all.v[x]) != 0) x++;
      if (x == all.n && carry_point_add(&all, pts[k].v[j]) != 0) break; /* fewer: no matter */
    }
  pm__problem pr;
  pm__tune_opts po = *o;
  pm__tune_result r;
  po.extra = (const int(*)[PM__MAX_PARAMS])all.v, po.nextra = all.n;
  if (all.n > 0 && pm__problem_of_db(op, &sizes->z[first], &pr) &&
      s->o.precompile(s->c, s->db, s->gpu_id, op, &pr, &po, 0, &r) == PM_OK)
    total->compile_ms += r.total_ms, total->kernels += r.kernels, total->compiled += r.compiled;
  free(all.v);
}

/* Carries the group of jobs[i] (model: among every GPU of this one's model), adding what it
 * did to *sum; PM_OK, or the status of the failure (reported). */
static int carry_group(pm__session *s, const pm__session_job *jobs, int i, int64_t run_id,
                       int model, pm__tune_result *sum) {
  pm_ctx *c = s->c;
  const pm__op *op = jobs[i].op;
  const char *sha = pm__op_template(op)->sha256;
  pm__tune_opts o = s->o.tune;
  pm__db_problem dbp;
  carry_sizes sizes = {0};
  pm__tune_result total = {0};
  char ptext[96];
  double t0 = pm__now_ms();
  int rc;
  o.strategy = PM__STRATEGY_LISTED;
  o.top = 0; /* timed as screening times: the sizes' own winners keep their re-timed rows */
  o.model = model; /* nor the seed and default again where another GPU of the model timed them */
  pm__problem_text(op, &jobs[i].pr, ptext, sizeof ptext);
  pm__op_db_problem(op, &jobs[i].pr, &dbp);
  rc = pm__db_group_sizes(s->db, s->gpu_id, model, &dbp, sha, carry_size, &sizes);
  /* where this model measured nothing of the group: the sizes of the nearest model of its
   * architecture, and the configurations that model found best, timed on this GPU */
  int64_t from = 0;
  char from_name[128] = "";
  if (rc == PM_OK && model && sizes.n == 0 &&
      (rc = pm__db_group_sibling(s->db, s->gpu_id, &dbp, sha, &from, from_name,
                                 sizeof from_name)) == PM_OK &&
      from > 0)
    rc = pm__db_group_sizes(s->db, from, 1, &dbp, sha, carry_size, &sizes);
  carry_points *pts = sizes.n > 1 ? pm__calloc(sizes.n, sizeof *pts) : NULL;
  if (sizes.n > 1 && pts == NULL) rc = pm__seterr(c, PM_ENOMEM, "carrying: out of memory");
  size_t first = sizes.n; /* the first size with anything to time */
  if (rc == PM_OK && pts != NULL) {
    rc = carry_gather(s, op, &sizes, model, from, sha, pts, &first);
    if (rc == PM_OK && first < sizes.n) carry_compile(s, op, &sizes, first, pts, &o, &total);
  }
  pm__problem pr;
  for (size_t k = first; rc == PM_OK && k < sizes.n && !stopped(s); k++) {
    pm__tune_result r;
    /* none: all measured there already (by the model's GPUs) */
    if (pts[k].n == 0 || !pm__problem_of_db(op, &sizes.z[k], &pr)) continue;
    o.extra = (const int(*)[PM__MAX_PARAMS])pts[k].v, o.nextra = pts[k].n;
    if ((rc = s->o.tune_problem(c, s->db, s->gpu_id, run_id, op, &pr, &o, &r)) != PM_OK) break;
    add_measured(&total, &r);
  }
  for (size_t k = 0; pts != NULL && k < sizes.n; k++) free(pts[k].v);
  free(pts);
  free(sizes.z);
  if (rc != PM_OK) {
    pm__session_event e = {.what = PM__SESSION_FAILED, .job = &jobs[i], .index = i,
                           .problem = ptext, .carrying = 1, .error = pm_errmsg(c)};
    report(s, &e);
    return rc;
  }
  if (sizes.n > 1) {
    pm__session_event e = {.what = PM__SESSION_CARRIED, .job = &jobs[i], .index = i,
                           .problem = ptext, .r = &total, .sizes = sizes.n,
                           .ms = pm__now_ms() - t0, .from_model = from > 0 ? from_name : NULL};
    report(s, &e);
  }
  total.total_ms = pm__now_ms() - t0; /* its candidates, skipped and same_launch stay 0 */
  add_result(sum, &total);
  return PM_OK;
}

/* Carries within each group of jobs once; PM_OK, or the status of the first failure. */
static int carry(pm__session *s, const pm__session_job *jobs, int njobs, int64_t run_id,
                 pm__tune_result *sum) {
  int model = s->o.carry == PM__CARRY_ONLY;
  for (int i = 0; i < njobs && !stopped(s); i++) {
    int seen_before = 0;
    for (int j = 0; j < i && !seen_before; j++) seen_before = same_group(&jobs[j], &jobs[i]);
    if (seen_before) continue;
    int rc = carry_group(s, jobs, i, run_id, model, sum);
    if (rc != PM_OK) return rc;
  }
  return PM_OK;
}

/* ---- The run -------------------------------------------------------------------------------- */

int pm__session_run(pm__session *s, const pm__session_job *jobs, int njobs,
                    pm__session_sums *sums) {
  pm_ctx *c = s->c;
  pm__session_sums sum;
  int64_t run_id = 0;
  int rc = PM_OK, search = s->o.carry != PM__CARRY_ONLY;
  const char *why = NULL; /* the run's message where a job's tuning or the carrying failed */
  ahead *a = NULL;
  pthread_t ahead_thread;
  memset(&sum, 0, sizeof sum);
  if (s->o.command_line != NULL &&
      (rc = pm__db_run_begin(s->db, s->gpu_id, s->o.command_line, &run_id)) != PM_OK) {
    pm__session_event e = {.what = PM__SESSION_FAILED, .index = -1, .error = pm_errmsg(c)};
    report(s, &e);
    goto done;
  }
  if (search) a = ahead_start(s, jobs, njobs, &ahead_thread);
  for (int i = 0; i < njobs && !stopped(s) && search; i++) {
    const pm__op *op = jobs[i].op;
    pm__tune_result r, none = {0}, *ra = a != NULL ? &a->r[i] : &none;
    char ptext[96];
    double waited = a != NULL ? wait_ahead(a, i) : 0;
    pm__problem_text(op, &jobs[i].pr, ptext, sizeof ptext);
    if ((rc = s->o.tune_problem(c, s->db, s->gpu_id, run_id, op, &jobs[i].pr, &s->o.tune, &r)) !=
        PM_OK) {
      why = pm_errmsg(c);
      pm__session_event e = {.what = PM__SESSION_FAILED, .job = &jobs[i], .index = i,
                             .problem = ptext, .error = why};
      report(s, &e);
      break;
    }
    r.compile_ms += waited, r.total_ms += waited;
    sum.ahead.compiled += ra->compiled, sum.ahead.total_ms += ra->total_ms;
    add_result(&sum.tuned, &r);
    pm__session_event e = {.what = PM__SESSION_TUNED, .job = &jobs[i], .index = i,
                           .problem = ptext, .r = &r, .ahead = ra};
    report(s, &e);
  }
  if (rc == PM_OK && !stopped(s) && s->o.carry != PM__CARRY_NONE &&
      (rc = carry(s, jobs, njobs, run_id, &sum.tuned)) != PM_OK)
    why = pm_errmsg(c);
  ahead_end(a, ahead_thread);
  if (run_id != 0)
    pm__db_run_end(s->db, run_id, rc == PM_OK && !stopped(s) ? PM__DB_RUN_OK : PM__DB_RUN_FAILED,
                   stopped(s) ? s->o.stopped_why : why);
done:
  if (sums != NULL) *sums = sum;
  return rc;
}

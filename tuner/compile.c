/* compile.c: compiling many template variants at once on a pool of threads. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"

int pm__compile_threads(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  long by_memory = pages > 0 && page > 0 ? (long)((double)pages * page / (400.0 * 1048576)) : cores;
  long n = cores < by_memory ? cores : by_memory;
  return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

typedef struct pool {
  pm__compile_job *jobs;
  size_t n;
  atomic_size_t next;
} pool;

static void *worker(void *arg) {
  pool *p = arg;
  pm_ctx *c = NULL; /* errors of this thread's compilations */
  int open_rc = pm__ctx_create(&c, PM_DEVICE_NONE, NULL);
  for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
    pm__compile_job *j = &p->jobs[i];
    if (open_rc != PM_OK) {
      j->status = open_rc;
      continue;
    }
    const char *defs[PM__MAX_DEFINES];
    for (int d = 0; d < j->ndefines; d++) defs[d] = j->defines[d];
    j->status = pm__compile(c, j->name, j->source, j->arch, defs, (size_t)j->ndefines, &j->cubin);
    if (j->status != PM_OK) j->error = pm__strdup(pm_errmsg(c));
  }
  pm__ctx_free(c);
  return NULL;
}

int pm__compile_many(pm_ctx *c, pm__compile_job *jobs, size_t n, int threads) {
  pool p = {.jobs = jobs, .n = n};
  atomic_init(&p.next, 0);
  if (threads <= 0) threads = pm__compile_threads();
  if ((size_t)threads > n) threads = n ? (int)n : 1;
  pthread_t *t = pm__calloc((size_t)threads, sizeof *t);
  if (t == NULL) return pm__seterr(c, PM_ENOMEM, "compile: out of memory");
  int started = 0;
  for (; started < threads; started++)
    if (pthread_create(&t[started], NULL, worker, &p) != 0) break;
  if (started == 0) worker(&p); /* no thread could start: compile on this one */
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  free(t);
  return PM_OK;
}

void pm__compile_jobs_free(pm__compile_job *jobs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    pm__cubin_free(&jobs[i].cubin);
    free(jobs[i].error);
    jobs[i].error = NULL;
  }
}

int pm__variants_make(pm_ctx *c, const pm__op *op, const pm__problem *pr, const pm__limits *lim,
                      const char *arch, pm__variants *out) {
  const pm__template *t = pm__op_template(op);
  memset(out, 0, sizeof *out);
  if (t == NULL) return pm__seterr(c, PM_ENOTFOUND, "no template for %s", op->name);
  out->op = op;
  out->nslots = pm__kernel_slots(op);
  out->job_of = pm__malloc(out->nslots * sizeof *out->job_of);
  out->jobs = pm__calloc(out->nslots, sizeof *out->jobs);
  if (out->job_of == NULL || out->jobs == NULL) {
    pm__variants_free(out);
    return pm__seterr(c, PM_ENOMEM, "variants: out of memory");
  }
  for (uint64_t i = 0; i < out->nslots; i++) out->job_of[i] = -1;
  uint64_t total = pm__space_size(op);
  for (uint64_t i = 0; i < total; i++) {
    int v[PM__MAX_PARAMS];
    pm__space_point(op, i, v);
    if (op->check(op, v, pr, lim) != NULL) continue;
    uint64_t k = pm__kernel_index(op, v);
    if (out->job_of[k] >= 0) continue;
    pm__compile_job *j = &out->jobs[out->n];
    j->name = t->file;
    j->source = t->source;
    j->arch = arch;
    j->ndefines = pm__config_defines(op, v, pr, j->defines);
    out->job_of[k] = (int32_t)out->n++;
  }
  return PM_OK;
}

void pm__variants_free(pm__variants *vs) {
  if (vs->jobs != NULL) pm__compile_jobs_free(vs->jobs, vs->n);
  free(vs->jobs);
  free(vs->job_of);
  memset(vs, 0, sizeof *vs);
}

pm__compile_job *pm__variants_job(const pm__variants *vs, const int *v) {
  int32_t j = vs->job_of[pm__kernel_index(vs->op, v)];
  return j < 0 ? NULL : &vs->jobs[j];
}

int pm__cubin_key(pm_ctx *c, const char *sha256, const char (*defines)[24], int n, int driver,
                  char *dtext, size_t cap, pm__db_cubin_key *key) {
  const char *dp[PM__MAX_DEFINES];
  for (int i = 0; i < n && i < PM__MAX_DEFINES; i++) dp[i] = defines[i];
  int rc = pm__db_defines_text(c, dp, (size_t)n, dtext, cap);
  *key = (pm__db_cubin_key){sha256, dtext, c->dev.arch, pm__nvrtc_version(), driver};
  return rc;
}

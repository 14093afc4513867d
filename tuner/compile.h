/* compile.h: compiling many template variants at once on a pool of threads (NVRTC is thread-safe). */
#ifndef PM_COMPILE_H
#define PM_COMPILE_H

#include "op.h"

typedef struct pm__compile_job {
  /* in */
  const char *name, *source, *arch;
  char defines[PM__MAX_DEFINES][24];
  int ndefines;
  /* out */
  pm__cubin cubin;
  int status;  /* PM_OK, or why it failed */
  char *error; /* the whole message where it failed (heap), else NULL */
} pm__compile_job;

/* Threads to compile with: the cores, bounded by memory (NVRTC holds a few hundred MB each). */
int pm__compile_threads(void);

/* Compiles every job on `threads` threads (0: pm__compile_threads()). Each job's status says how
 * it went; the call fails only where it cannot run at all. */
int pm__compile_many(pm_ctx *c, pm__compile_job *jobs, size_t n, int threads);

/* Frees the cubins and messages of jobs. */
void pm__compile_jobs_free(pm__compile_job *jobs, size_t n);

/* The distinct kernels of a space for one problem: one compile job per set of defines among the
 * valid points, and the way from a point to its job. */
typedef struct pm__variants {
  const pm__op *op;
  pm__compile_job *jobs;
  size_t n;
  int32_t *job_of; /* pm__kernel_index(op, v) -> index into jobs, or -1 where no valid point */
  uint64_t nslots;
} pm__variants;

/* Builds the jobs (not yet compiled) for every point valid for pr under lim, for arch. pr may be
 * NULL for ops without problem defines. */
int pm__variants_make(pm_ctx *c, const pm__op *op, const pm__problem *pr, const pm__limits *lim,
                      const char *arch, pm__variants *out);
void pm__variants_free(pm__variants *vs);

/* The job of point v, or NULL. */
pm__compile_job *pm__variants_job(const pm__variants *vs, const int *v);

/* The cubin cache key of a kernel of the template with hash sha256, compiled with defines[0, n)
 * for c's device under driver: the canonical defines text goes to dtext (cap bytes), which the
 * key points into. The tuner and library calls find and store cubins under it. */
int pm__cubin_key(pm_ctx *c, const char *sha256, const char (*defines)[24], int n, int driver,
                  char *dtext, size_t cap, pm__db_cubin_key *key);

#endif /* PM_COMPILE_H */

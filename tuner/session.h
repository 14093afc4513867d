/* session.h: a tuning session, what `pmtune tune` (one a GPU) and tuning on first use (one a
 * request) both run: the database opened for tuning with the GPU recorded, the run recorded, each
 * job tuned (the next jobs' kernels compiled ahead on a thread of its own while one is measured),
 * the best configurations of each size carried to the other sizes of its group, the run ended;
 * what happens is reported through a callback, and nothing is printed. */
#ifndef PM_SESSION_H
#define PM_SESSION_H

#include "tune.h"

/* One problem to tune. */
typedef struct pm__session_job {
  const pm__op *op;
  pm__problem pr;
} pm__session_job;

/* Carrying, after the jobs: each size of a job's group (op, type, variant, radius) that has
 * measurements has the best PM__DB_CARRY_TOP configurations of the sizes within
 * PM__DB_CARRY_WITHIN of it timed too (pm__db_carry_configs; their cubins are cached, so this is
 * timing alone), so that deciding between two tuned sizes compares configurations measured at
 * both, here and wherever an export of this database is imported. */
enum {
  PM__CARRY_NONE,  /* no carrying */
  PM__CARRY_GPU,   /* after the jobs, among the sizes this GPU measured */
  PM__CARRY_ONLY   /* no job searched: carrying alone, among the sizes that any GPU of this one's
                      model measured, an import's too; in a group this model measured nothing of,
                      among those of the nearest model of its architecture (pm__db_group_sibling),
                      whose best configurations are timed on this GPU */
};

/* What a session reports, as it happens. */
enum {
  PM__SESSION_TUNED,   /* job `index` is tuned: r, ahead */
  PM__SESSION_CARRIED, /* the group of job `index` is carried across its `sizes` sizes: r, ms */
  PM__SESSION_FAILED   /* the run stops: `error` says why; job NULL (recording the run), else
                          the job whose tuning failed, or (carrying) whose group's carrying did */
};

typedef struct pm__session_event {
  int what;                    /* PM__SESSION_* */
  const pm__session_job *job;  /* the job (FAILED: or NULL) */
  int index;                   /* its index in the jobs (-1: no job) */
  const char *problem;         /* its problem as text ("4097x3001 row-major") */
  const pm__tune_result *r;    /* TUNED: what tuning it did, waiting for the kernels compiled
                                  ahead counted as compiling; CARRIED: what timing the carried
                                  configurations did (measured, wrong, failed, verify_ms,
                                  time_ms) */
  const pm__tune_result *ahead; /* TUNED: what compiling its kernels ahead did (compiled,
                                   total_ms; zero where nothing was) */
  size_t sizes;                /* CARRIED: the sizes of the group (2 or more) */
  double ms;                   /* CARRIED: the wall time carrying it took */
  const char *from_model;      /* CARRIED: the model whose sizes and best configurations were
                                  carried, where this GPU's model had measured none of the group
                                  (NULL: its own) */
  int carrying;                /* FAILED: it was carrying that failed */
  const char *error;           /* FAILED: the context's message */
} pm__session_event;

typedef struct pm__session_opts {
  const char *db_path;      /* the database (NULL: pm__db_path's choice) */
  const pm__op *own;        /* a kernel of one's own that the jobs tune (NULL: built-in ops
                               only): the database stores its problems, and its template is
                               made current (its measurements are the ones shown and served) */
  const char *command_line; /* recorded as the run's (NULL: no run is recorded, and the
                               measurements are stored with run 0) */
  const char *stopped_why;  /* the run's message where tune.stop stopped it */
  int carry;                /* PM__CARRY_* (default PM__CARRY_NONE) */
  int sharing;              /* sessions running side by side on this machine, whose compiling
                               ahead shares its cores (default 1) */
  pm__tune_opts tune;       /* how each job is tuned (pm__tune_opts_default); its stop also
                               stops the session between jobs and between carried sizes, and
                               its progress shows carrying's timing too */
  void (*report)(void *arg, const pm__session_event *e); /* NULL: nothing reported */
  void *report_arg;
  /* What tunes a problem and compiles one ahead (NULL: pm__tune_problem and
   * pm__tune_precompile); the tests put stand-ins here. */
  int (*tune_problem)(pm_ctx *c, pm__db *db, int64_t gpu_id, int64_t run_id, const pm__op *op,
                      const pm__problem *pr, const pm__tune_opts *o, pm__tune_result *res);
  int (*precompile)(pm_ctx *c, pm__db *db, int64_t gpu_id, const pm__op *op,
                    const pm__problem *pr, const pm__tune_opts *o, int threads,
                    pm__tune_result *res);
} pm__session_opts;

/* What a session's run did, all its jobs together. */
typedef struct pm__session_sums {
  pm__tune_result tuned; /* the jobs' results and carrying's, summed */
  pm__tune_result ahead; /* compiling ahead: compiled, total_ms */
} pm__session_sums;

typedef struct pm__session pm__session;

void pm__session_opts_default(pm__session_opts *o);

/* Opens a session on c's GPU (c->dev; c stays the caller's and takes the session's errors):
 * the database at o->db_path read-write for the built-in ops and o->own, o->own's template made
 * current, the GPU recorded with this process's CUDA versions. o is copied; the strings and
 * functions it points at must outlive the session. On failure *out is NULL and c says why. */
int pm__session_open(pm__session **out, pm_ctx *c, const pm__session_opts *o);

/* The session's database handle and its GPU's row, for what a caller reads before a run (the
 * sizes recorded for `pmtune tune --seen`). */
pm__db *pm__session_db(const pm__session *s);
int64_t pm__session_gpu(const pm__session *s);

/* Runs jobs[0, njobs) (unless the carry is PM__CARRY_ONLY), in order: the run recorded (where
 * o->command_line is given), each job tuned, with, where there are two jobs or more, the kernels
 * of the next ones compiled ahead on a thread of its own (a context and database handle of its
 * own, o->sharing's share of the cores less two); then, unless a job failed or tune.stop was
 * set, the carry asked for, each group once; the run ended ("ok", or "failed" with the failure's
 * message or o->stopped_why). Each job tuned, group carried and failure is reported as it
 * happens. PM_OK, or the first failure's status (c says why); a stop is PM_OK. sums (NULL:
 * not wanted) receives the totals, also where it fails. */
int pm__session_run(pm__session *s, const pm__session_job *jobs, int njobs,
                    pm__session_sums *sums);

/* Closes the database; NULL does nothing. The context stays open. */
void pm__session_close(pm__session *s);

#endif /* PM_SESSION_H */

/* kernel_file_internal.h: what tuner/kernel_*.c share and nothing else sees: a description's
 * kernel (struct pm__kernel_desc), its expressions, arguments and launch memo, the reader of its
 * JSON, and the functions one of these files lends the others. kernel_file.h is the interface. */
#ifndef PM_KERNEL_FILE_INTERNAL_H
#define PM_KERNEL_FILE_INTERNAL_H

#include <sqlite3.h>

#include "kernel_file.h"

#define MAX_CONSTRAINTS 32
#define MAX_ARGS 32
#define MAX_FILE ((size_t)16 << 20) /* bytes of a source */
#define MAX_DESC ((size_t)1 << 20)  /* bytes of a description: each field read parses it anew */
#define NAME_MAX_LEN 23 /* a parameter's name is its define: "NAME=VALUE" fits 24 bytes */

/* What bounds an expression (docs/kernels.md): its text, the strings and blobs it
 * may make on the way (SQLite's "string or blob too big" past it), how deep it nests, and the
 * VM instructions of one evaluation (a launch's expression takes tens; nothing allowed loops, so
 * this is a second line behind the authorizer). */
#define MAX_EXPR 2048
#define EXPR_BYTES 8192
#define EXPR_DEPTH 64
#define EXPR_TICK 1000 /* VM instructions between two calls of the progress handler */
#define EXPR_TICKS 10  /* its calls in one evaluation: so at most about 10,000 instructions */

/* One expression of the description, compiled. */
typedef struct expr {
  char *text;        /* as written, its control characters escaped (what messages show) */
  char field[40];    /* where it is written: "grid[1]", "constraints[3]" */
  sqlite3_stmt *st;  /* SELECT (text): its own statement, never pasted beside another */
  int uses_dims;     /* it names a dimension: it needs a problem */
  int uses_params;   /* it names a parameter */
  int nbinds;        /* st's :NAMEs, each a parameter (binds[i] >= 0, its index) or a */
  signed char binds[PM__MAX_PARAMS + 2]; /* dimension (-1 - its index) */
} expr;

/* What the evaluator's authorizer allows while an expression is prepared: one SELECT (the one
 * `SELECT (text)` makes) and the allowed functions; why it refused, for the message. */
typedef struct guard {
  int selects;
  int ticks; /* the progress handler's calls in this evaluation */
  char why[160];
} guard;

/* One argument of the kernel, in order. */
enum { SCALAR_I32, SCALAR_I64, SCALAR_F32, SCALAR_F64 };
typedef struct arg {
  char *name;
  int scalar; /* 1: a scalar (type SCALAR_*), passed by value; 0: a buffer (type a pm_dtype) */
  int type;
  int dir;    /* a buffer's PM__BUF_* */
  int buf;    /* a buffer's index in pm__data's described.bufs; a scalar's among the scalars */
  expr e;     /* a buffer's count (of the dimensions), a scalar's value (1 where none is given) */
  int has_value; /* a scalar whose description gives its value: a call may leave it out */
} arg;

typedef union value {
  int i32;
  long long i64;
  float f32;
  double f64;
} value;

/* What a launch of one point on one problem passes: evaluated once (SQLite takes microseconds),
 * kept for every later launch of that point and size in a table that grows without bound, as
 * serving's cache of sizes does. */
typedef struct launch_memo {
  int v[PM__MAX_PARAMS];
  pm__problem pr;
  dim3 grid, block;
  size_t shared;
  value values[MAX_ARGS];
  struct launch_memo *next; /* the next of its bucket */
} launch_memo;

struct pm__kernel_desc {
  pm__op op; /* first: the op's callbacks find the rest through self */
  pm__template tpl; /* the source, named by the hash of the description and the source */
  char sha256[65];
  pm__param params[PM__MAX_PARAMS];
  char *param_names[PM__MAX_PARAMS];
  char *path, *name, *summary, *entry, *source_file, *source;
  char *reference; /* the reference kernel's entry, or NULL: the seed's outputs are the reference */
  const char *dims[3];
  int ndims;
  char *tuned;      /* the scalar whose value a call gives and the tuning depends on ("tuned":
                       true): part of the size, named by expressions as a dimension is; or NULL */
  int tuned_arg;    /* its index among the arguments, or -1 */
  int tuned_scalar; /* its index among the scalars, or -1 */
  int nconstraints;
  expr constraints[MAX_CONSTRAINTS];
  char *reasons[MAX_CONSTRAINTS]; /* "constraints[2] (:BX * :BY <= 1024)" */
  int ngrid, nblock;
  expr grid[3], block[3], shared, bytes;
  int nargs, nbufs, nscalars;
  arg args[MAX_ARGS];
  signed char buffer_arg[PM__MAX_BUFS], scalar_arg[MAX_ARGS]; /* buffer (scalar) i is
                                                                  args[buffer_arg[i]] */
  int needed;                       /* the first scalar with no value (a call must give it), or -1 */
  double tolerance;
  launch_memo **memo; /* buckets (a power of two of them), under lock */
  size_t nbuckets, nmemo;
  sqlite3 *db;          /* an empty database in memory, the expressions' evaluator: bounded
                           and read-only (evaluator_open) */
  guard guard;          /* its authorizer's */
  pthread_mutex_t lock; /* the statements are one thread's at a time */
};
typedef struct reader {
  pm_ctx *c;
  const char *path; /* as messages show it: control characters escaped */
  sqlite3 *db;      /* the reader's own connection (JSON functions), not the evaluator */
  const char *json;
  char quoted[4][128]; /* quote()'s */
  int nquoted;
} reader;

/* kernel_load.c: the reader's messages */
char *pm__kf_escape(char *out, size_t cap, const char *s, size_t max);
const char *pm__kf_quote(reader *r, const char *s);
int pm__kf_fail(reader *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* kernel_expr.c: the expressions' evaluator */
int pm__kf_param_index(const pm__kernel_desc *k, const char *name);
int pm__kf_dim_index(const pm__kernel_desc *k, const char *name);
int pm__kf_evaluator_open(pm_ctx *c, pm__kernel_desc *k, const char *shown_path);
int pm__kf_expr_make(reader *r, pm__kernel_desc *k, const char *field, const char *text,
                     int params_ok, expr *e);
void pm__kf_expr_free(expr *e);
int pm__kf_expr_value(pm__kernel_desc *k, const expr *e, const int *v, const pm__problem *pr,
                      long long *out, double *real);
int pm__kf_expr_eval(pm__kernel_desc *k, const expr *e, const int *v, const pm__problem *pr,
                     long long *out);

/* kernel_file.c: the op's callbacks */
const char *pm__kf_check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim);
double pm__kf_bytes(const pm__op *self, const pm__problem *pr);
size_t pm__kf_layout(const pm__op *self, const int *v);
void pm__kf_fallback(const pm__op *self, const pm__problem *pr, int *v);
int pm__kf_launch(const pm__op *self, pm_ctx *c, const pm__module *kern, const int *v,
                  pm__data *d, cudaStream_t stream);
int pm__kf_prepare(const pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                   pm__data *d);
int pm__kf_verify(const pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err);

#endif

/* op.h: the operations pmtune tunes, each as data: its search space (named parameters and their
 * values, constraints, the -D defines a point becomes), and how to allocate, launch and check it.
 * The generic code (space.c, the tuner, the tests) knows no operation by name. */
#ifndef PM_OP_H
#define PM_OP_H

#include <stdint.h>

#include "gpu.h"
#include "pmdb.h"
#include "timer.h"

#define PM__MAX_PARAMS 10
#define PM__MAX_VALUES 8
#define PM__MAX_DEFINES (PM__MAX_PARAMS + 3) /* the point's, the problem's (filter: 2), the dtype */
#define PM__CONFIG_TEXT 160 /* bytes enough for "bx=32 by=8 vec=4 ..." */
#define PM__MAX_OPS 16      /* built-in ops */

/* One axis of a search space. */
typedef struct pm__param {
  const char *name;   /* "bx": its name in configuration text and JSON */
  const char *define; /* "BX": the template's define, or NULL for a host-side parameter */
  int nvalues;
  int values[PM__MAX_VALUES];
  const char *doc; /* one line */
} pm__param;

/* A problem: what the caller asks for, independent of how it is computed. */
typedef struct pm__problem {
  unsigned rows, cols; /* matadd, filter */
  unsigned n;          /* reduce, add: 1 .. 2^31 - 1; a kernel of three dims: its batch */
  int radius;          /* for ops with a radius (op->radius_max > 0): its radius */
  int variant;         /* the index of the problem's variant in op->variants: 0 the default */
  unsigned caller_align; /* serving: the alignment in bytes (4, 8 or 16) that the caller's
                            pointers and pitches all honour; 0: the tuner's own buffers, laid
                            out by the point's own layout */
  int dtype;           /* the element type (pm_dtype: PM_F32, the zero, is float), one the op
                          takes (op->dtypes) */
} pm__problem;

#define PM__MAX_RADIUS 3

/* What a device allows, for pruning. pm__limits_default() is a generic sm_80+ device. */
typedef struct pm__limits {
  int max_threads;    /* per block */
  size_t max_smem;    /* static shared memory per block */
  int sm_count;
  int allow_nondeterministic;
} pm__limits;

/* A buffer argument of an op made from a description (kernel_file.c), packed, one of
 * pm__data's described.bufs: what pm__data_place, _view, _poison and _free do for in[], out and work, they
 * do for each of these too. */
enum { PM__BUF_IN, PM__BUF_OUT, PM__BUF_INOUT };
#define PM__MAX_BUFS 16
typedef struct pm__buf {
  int dir;      /* PM__BUF_*: in and inout are copied from host at placing; out is poisoned (NaN)
                   before each checked run, and inout copied from host again */
  size_t bytes; /* of one copy */
  void *host;   /* in, inout: the inputs on the host (heap) */
  void *dev;    /* copy 0 on the device; copy j is stride bytes further */
  size_t stride;
  void *ref;    /* out, inout: the reference output on the device (the seed's), or NULL */
} pm__buf;

/* What belongs to one op in its pm__data (the union at its end): the fields its prepare, launch
 * and verify use beyond the common ones. matadd and add have none. */
typedef struct pm__reduce_data {
  unsigned sum_as_float;   /* 1 writes the sum as a float, 0 in the input's type */
  double ref_exact;        /* the reference sum, in double */
  double ref_scale;        /* what its rounding error scales with: sum |x| */
} pm__reduce_data;

typedef struct pm__filter_data {
  union { /* the mask's weights, row by row, passed to the kernel by value: floats, doubles for
             f64 */
    float f32[(2 * PM__MAX_RADIUS + 1) * (2 * PM__MAX_RADIUS + 1)];
    double f64[(2 * PM__MAX_RADIUS + 1) * (2 * PM__MAX_RADIUS + 1)];
  } weights;
} pm__filter_data;

typedef struct pm__described_data { /* an op made from a description (kernel_file.c) */
  pm__buf bufs[PM__MAX_BUFS]; /* its buffers, in argument order (pm__data.nbufs of them) */
  const void *const *scalars; /* a call's scalars: [i] the i-th scalar argument's value (as its
                                 type), NULL (or the array NULL) for its description's */
} pm__described_data;

/* Device memory for one problem in one layout (pitch alignment), and the host data behind it:
 * what every op has (the problem, its buffers, its references), then the op's own part. Every
 * buffer holds elements of pr.dtype. */
typedef struct pm__data {
  pm__problem pr;
  size_t align;            /* the pitch alignment in bytes; 0 = packed */
  unsigned lines, inner;   /* the inputs' shape: lines of `inner` contiguous elements (rows x cols
                              or the transpose, by storage order); 1 x n for one dimension */
  void *in[2];             /* device inputs (matadd, add: a, b; reduce, filter: in) */
  size_t in_pitch[2];      /* bytes */
  void *out;               /* device output */
  size_t out_pitch, out_bytes;
  size_t out_value_bytes;  /* an output of one value, not lines like the inputs (reduce: its sum):
                              its bytes, which prepare sets; 0: lines x inner elements, pitched as
                              the inputs are (pm__data_place sizes it) */
  int copies;              /* copies of the inputs and the output on the device, one after the
                              other (in_stride and out_stride bytes apart), that the timer rotates through so
                              that a run never finds its data left in L2 by another; the caller
                              sets it before placing (pm__copies_for); 0 or 1: one. d's own
                              pointers are copy 0's, pm__data_view gives the others */
  size_t in_stride, out_stride;
  void *work;              /* device scratch (reduce: partials and counter) */
  size_t work_bytes;
  void *host_in[2];        /* the inputs, packed, on the host */
  void *host_ref;          /* the CPU reference output, packed */
  void *dev_ref;           /* host_ref on the device, packed, for comparing there */
  int nbufs;               /* the buffers of described.bufs; 0 for a built-in op, whose buffers
                              are in, out and work */
  union { /* the op's own part: the one of its name, none for matadd and add */
    pm__reduce_data reduce;
    pm__filter_data filter;
    pm__described_data described;
  };
} pm__data;

typedef struct pm__op {
  const char *name;    /* "matadd": also its template's name and the database's op */
  const char *summary; /* one line */
  pm_op api;           /* its value in pmtune.h's pm_op, which the library calls serve */
  int dims;            /* 2: sizes are ROWSxCOLS; 1: sizes are N; 3 (a kernel of one's own):
                          BATCHxROWSxCOLS, the batch in pm__problem.n */
  /* The problem's variants as the database records them, the default first, ended by NULL:
   * {"order=row", "order=col"}, {""} for an op without variants. pm__problem.variant indexes
   * them. */
  const char *variants[3];
  const char *variant_names[3]; /* the same as people read them: "row-major", "clamp" */
  int radius_min, radius_max; /* the radii a problem may have; 0, 0 for an op without one */
  const char *radius_name;    /* NULL: a radius (filter); else a kernel of one's own's tuned
                                 scalar, whose value a problem's radius holds (1 to 2^31 - 1) */
  unsigned dtypes;             /* the element types it takes: bit t for pm_dtype t */
  /* The sizes `pmtune tune` tunes and `pmtune bench` times where none are given. */
  const pm__problem *tune_sizes;
  int ntune_sizes;
  const pm__problem *bench_sizes;
  int nbench_sizes;
  const char *entries[PM__MAX_ENTRIES];
  int nentries;
  int nparams;
  const pm__param *params;
  int seed[PM__MAX_PARAMS]; /* the seed's configuration, a value of each parameter */
  /* The source it compiles: NULL for a built-in op, whose template is the embedded one of its
   * name (pm__op_template finds either); an op made from a description points at its own. */
  const pm__template *tpl;

  /* The callbacks take their op first (self), so that an op made at run time, from a
   * description rather than a table here, can reach its own data; the built-in ops ignore it. */

  /* Why point v cannot run problem pr under lim (a short reason), or NULL where it can. pr may
   * be NULL: then only the problem-independent reasons count (what compiling needs). */
  const char *(*check)(const struct pm__op *self, const int *v, const pm__problem *pr,
                       const pm__limits *lim);
  /* Where valid point v launches on pr exactly what another point does (the same kernel, grid,
   * block and arguments: reduce's grid cap where it does not bind), writes that other point,
   * the one the tuner measures, to twin and returns 1; else 0. NULL where no two points of the
   * space can launch alike. Serving is unaffected: v still runs pr. */
  int (*same_launch)(const struct pm__op *self, const int *v, const pm__problem *pr,
                     const pm__limits *lim, int *twin);
  /* Which of the op's code paths point v takes on pr (reduce: a grid of one block writes its sum
   * at once, a grid of more combines partial sums); a measurement of v at one size predicts its
   * time at another only where v takes the same path at both (serving's decisions between and
   * near tuned sizes ask). NULL: the same path at every size. */
  int (*regime)(const struct pm__op *self, const int *v, const pm__problem *pr,
                const pm__limits *lim);
  /* Defines that come from the problem rather than the point (filter: R). Returns how many. */
  int (*problem_defines)(const struct pm__op *self, const pm__problem *pr, char out[][24]);
  /* Bytes a run must move through device memory: each input read once, each output written. */
  double (*bytes)(const struct pm__op *self, const pm__problem *pr);
  /* The pitch alignment point v lays its buffers out with (0 = packed). */
  size_t (*layout)(const struct pm__op *self, const int *v);
  /* A configuration sound on any GPU for pr (valid for pr's caller_align): what is served
   * where nothing is tuned. */
  void (*fallback)(const struct pm__op *self, const pm__problem *pr, int *v);
  /* Device scratch a run of v on pr needs (reduce: its partial sums), in bytes; NULL for none. */
  size_t (*work_bytes)(const struct pm__op *self, const int *v, const pm__problem *pr,
                       int sm_count);

  /* Fills d for pr: random inputs from seed on the host, the CPU reference, and the reference on
   * the device. Then pm__data_place lays the inputs out on the device. */
  int (*prepare)(const struct pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                 pm__data *d);
  /* Launches one run of point v on d, asynchronously on stream. */
  int (*launch)(const struct pm__op *self, pm_ctx *c, const pm__module *k, const int *v,
                pm__data *d, cudaStream_t stream);
  /* Compares d's output after a run of point v with the reference. PM_EVERIFY (with the first
   * difference) where it differs beyond the op's tolerance; *err receives the error measure
   * stored with results (2D ops: the fraction of elements that differ, which must be 0; reduce:
   * |sum - exact| / sum|x|). */
  int (*verify)(const struct pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err);
} pm__op;

/* The built-in ops, one for each of pmtune.h's PM_OPS: pm__op_matadd ..., each in its
 * tuner/op_NAME.c. */
#define PM__OP_EXTERN(NAME, value, name) extern const pm__op pm__op_##name;
PM_OPS(PM__OP_EXTERN)
#undef PM__OP_EXTERN
extern const pm__op *const pm__ops[]; /* all of them (at most PM__MAX_OPS) in PM_OPS's order,
                                         ended by NULL */

/* Reduce's reference: the sum of x[0, n) of dtype in double, compensated (within 2u|sum| +
 * O(n u^2) sum|x| for u = 2^-53), and sum |x| in *abs, on the host's cores; -1 where memory ran
 * out (op_reduce.c). */
int pm__reduce_reference(int dtype, const void *x, size_t n, double *sum, double *abs);
/* The bound on the rounding error of reduce's point v summing n elements of dtype (on a GPU of
 * sm_count SMs) whose sum is `sum` and sum |x| is `abs`, the sum written as out_dtype
 * (op_reduce.c). */
double pm__reduce_error_bound(const int *v, unsigned n, int sm_count, int dtype, int out_dtype,
                              double sum, double abs);

/* ---- Generic space code (space.c) ----------------------------------------------------------- */

/* The grid of sizes results/ ships (`pmtune tune --grid`), so that no size is more than about a
 * factor 2 in elements from a shipped one, and no matrix more than a factor 2 in aspect from a
 * line of them: a vector's n = 2^k for k = 0 .. PM__GRID_LOG2_N (every power of two: a reduce
 * changes code path at sizes a factor 4 could step over), and the odd n between each two,
 * pm__grid_odd(k) for k = 1 .. PM__GRID_LOG2_N - 1 (a size of a program's is rarely round, and
 * kernels run slower paths there: db/known.c decides an unround size from these); a matrix
 * square, 2^k x 2^k for k = PM__GRID_LOG2_SIDE_MIN .. PM__GRID_LOG2_SIDE_MAX, and for k below
 * PM__GRID_LOG2_SIDE_MAX also 4, 16 and 64 times as wide as tall and as tall as wide (2^(k-1) x
 * 2^(k+1), 2^(k-2) x 2^(k+2), 2^(k-3) x 2^(k+3) and their transposes, no side under
 * 2^PM__GRID_LOG2_SIDE_LEAST): lines of aspect 1/64, 1/16, 1/4, 1, 4, 16 and 64, each sampled
 * every factor 4 in elements (the largest, 2^28 elements, square alone); and each one's unround twin, both sides pm__grid_odd (2^r x 2^c
 * -> pm__grid_odd(r) x pm__grid_odd(c): twice the elements, the same aspect, odd sides), and in
 * an op with an order (matadd) each one's even twin too, its contiguous side pm__grid_even (2 mod
 * 4; db/known.c decides a size of an even contiguous side from these); no size
 * whose buffer passes PM__GRID_MAX_BYTES. Each in every variant and radius of the op, in each type of dtypes it
 * takes (bit t for pm_dtype t), into out[0, max); returns how many. */
#define PM__GRID_LOG2_N 30
#define PM__GRID_LOG2_SIDE_MIN 4
#define PM__GRID_LOG2_SIDE_MAX 14
#define PM__GRID_LOG2_SIDE_LEAST 3
#define PM__GRID_MAX_BYTES (2048.0 * 1024 * 1024)
int pm__op_grid(const pm__op *op, unsigned dtypes, pm__problem *out, int max);
unsigned pm__grid_odd(int k); /* 2^(k + 1/2), made odd: 3, 5, 11, 23, 45, 91, 181, 363, ... */
unsigned pm__grid_even(int k); /* 2^(k + 1/2), made 2 mod 4: 2, 6, 10, 22, 46, 90, 182, 362, ... */

/* The op of that name, or NULL. */
const pm__op *pm__op_find(const char *name);
/* The template op compiles: op->tpl, or the embedded one of op's name. */
const pm__template *pm__op_template(const pm__op *op);
/* The op that serves pmtune.h's value e (found by its api field, not by position), or NULL. */
const pm__op *pm__op_of(pm_op e);

/* What the database must know of every op, made from the op entries (for pm__db_open). */
const pm__db_op *const *pm__ops_db(void);

/* pm__ops_db()'s list with op added (an op made from a description), for a database that stores
 * its problems too; the list lives in *store. */
typedef struct pm__ops_db_plus {
  pm__db_op op;
  const pm__db_op *list[PM__MAX_OPS + 2];
} pm__ops_db_plus;
const pm__db_op *const *pm__ops_db_with(const pm__op *op, pm__ops_db_plus *store);

/* Reads what db knows of op for device d into memory: its measurements of the template built
 * into this library (pm__db_known_load of op and its template's hash). */
int pm__op_known_load(pm__db *db, const pm__device_info *d, const pm__op *op, pm__db_known *out);

/* op's place in pm__ops (0 .. PM__MAX_OPS - 1), or -1. */
int pm__op_index(const pm__op *op);

/* The database's view of a problem of op, and back (laid out by the tuner: caller_align 0; 0
 * where p's type or sizes cannot be op's). */
void pm__op_db_problem(const pm__op *op, const pm__problem *pr, pm__db_problem *out);
int pm__problem_of_db(const pm__op *op, const pm__db_problem *p, pm__problem *out);
pm__limits pm__limits_default(void);
pm__limits pm__limits_of(const pm__device_info *d);

/* Points are numbered 0 .. pm__space_size(op) - 1 in mixed radix, the first parameter fastest. */
uint64_t pm__space_size(const pm__op *op);
void pm__space_point(const pm__op *op, uint64_t index, int *v);
/* The number of point v (the inverse of pm__space_point); values not in the table count as the
 * last of their axis. */
uint64_t pm__space_index(const pm__op *op, const int *v);

/* "bx=32 by=8 vec=4" and {"bx":32,"by":8,"vec":4}: every parameter, in table order. */
void pm__config_text(const pm__op *op, const int *v, char *out, size_t len);
void pm__config_json(const pm__op *op, const int *v, char *out, size_t len);
/* Parses configuration text back (every parameter once, values from the table). */
int pm__config_parse(pm_ctx *c, const pm__op *op, const char *text, int *v);

/* The -D defines of point v for problem pr (pr may be NULL where the op has no problem defines):
 * "BX=32", ... in table order, then the problem's. Returns how many; host-side parameters give
 * none. Two points with equal defines share a cubin. */
int pm__config_defines(const pm__op *op, const int *v, const pm__problem *pr,
                       char out[][24]);

/* Parses a size ("4097x3001" for 2D ops, "268435459" for reduce) into pr's dimensions, and for
 * an op with a radius an optional ":rR" after it ("8192x8192:r2") into pr->radius; the caller
 * sets the rest (the radius where none is written, order and border). PM_EINVAL says what is
 * wrong. */
int pm__problem_parse(pm_ctx *c, const pm__op *op, const char *size, pm__problem *pr);

/* "4097x3001 row-major", "n=268435459", "8192x8192 r=3 clamp", "n=1000 bf16": a problem as people
 * read it (its type where it is not f32). */
void pm__problem_text(const pm__op *op, const pm__problem *pr, char *out, size_t len);
/* The problem's variant as the database records it ("order=col", "border=zero", ""), and as
 * people read it ("col-major", "zero", ""). */
const char *pm__variant_text(const pm__op *op, const pm__problem *pr);
const char *pm__variant_name(const pm__op *op, const pm__problem *pr);
/* The index in op->variants of "key=value" (such as "order", "col"): >= 0; -1 where op has no
 * variant of that key, -2 where it has the key but not that value. */
int pm__variant_find(const pm__op *op, const char *key, const char *value);
/* The index in op->variants of the database's text ("order=col"), or 0 (the default) where op
 * has no such variant. */
int pm__variant_index(const pm__op *op, const char *text);

/* Points that differ only in host-side parameters share a kernel: its number, from 0 to
 * pm__kernel_slots(op) - 1. */
uint64_t pm__kernel_index(const pm__op *op, const int *v);
uint64_t pm__kernel_slots(const pm__op *op);

/* Whether the tuner leaves valid point v out for pr: it launches exactly what another point
 * does (op->same_launch), which is measured instead; the seed and pr's default are never left
 * out (their rows are what every other is compared with, at every tuned size). */
int pm__same_launch(const pm__op *op, const int *v, const pm__problem *pr, const pm__limits *lim);

/* The bytes of one element of pr (pm_dtype_size of its dtype); 4, a float, where pr is NULL
 * (compiling without a problem). */
unsigned pm__problem_esize(const pm__problem *pr);
/* The elements in the widest access, at most 16 bytes, that pr's caller_align allows (0: any):
 * the vector width of the elementwise ops' fallbacks. */
int pm__widest_vec(const pm__problem *pr);

/* Whether v is the seed configuration. */
int pm__is_seed(const pm__op *op, const int *v);
/* Whether v is op's built-in default for pr (op->fallback): what a call is served where nothing
 * is known, so the tuner measures it at every size it tunes, and what serving compares a
 * decision with (never worse than knowing nothing). 0 where pr is NULL. */
int pm__is_default(const pm__op *op, const int *v, const pm__problem *pr);

/* Allocates d's device buffers with pitches aligned to align (0 = packed) and copies the inputs
 * there; frees those of an earlier layout first. The output is poisoned (NaN). */
int pm__data_place(pm_ctx *c, pm__data *d, size_t align);

/* Copy j (0 .. d->copies - 1) of d's device data as a pm__data that an op can launch on: the
 * same problem and scratch, the inputs and output of that copy. */
void pm__data_view(const pm__data *d, int j, pm__data *view);

/* Fills d's output with NaN, so that an element the kernel does not write cannot pass. */
/* A copy on the thread's tuning stream (timer.h, pm__tune_stream), waited for: what the tuner
 * uses in place of cudaMemcpy, whose legacy stream would wait for the program's streams. */
cudaError_t pm__tune_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
int pm__data_poison(pm_ctx *c, pm__data *d, cudaStream_t stream);

/* A second placement of d's data: *copy shares d's host data and reference (d keeps owning
 * them) and gets device buffers of its own in layout align. Free it with pm__data_unplace. */
int pm__data_place_copy(pm_ctx *c, const pm__data *d, size_t align, pm__data *copy);
void pm__data_unplace(pm__data *copy);

/* Frees everything prepare and place made; safe on a zeroed or partly filled pm__data. */
void pm__data_free(pm__data *d);

/* Calls fn(arg, begin, end) over [0, n) split into ranges on the host's cores; returns when all
 * are done. For the CPU references of large problems. */
void pm__parallel_for(size_t n, void (*fn)(void *arg, size_t begin, size_t end), void *arg);

/* Loads templates/util.cu for c's device, once per context (hung on c->util): its entries are
 * pm_compare and pm_flush. Comparing is for one thread at a time per context (the tuner's, a
 * test's): they share one result buffer. pm__util_kernel gives the loaded kernel (after
 * pm__util_kernels succeeded); pm_close frees them with pm__util_free. */
enum { PM__UTIL_COMPARE, PM__UTIL_FLUSH };
int pm__util_kernels(pm_ctx *c);
const pm__module *pm__util_kernel(pm_ctx *c);
void pm__util_free(pm_ctx *c);

/* Compares a pitched lines x inner output on the device with the packed reference there
 * (bitwise). *bad: how many differ; *first: the first that does (line * inner + i). */
int pm__compare_2d(pm_ctx *c, const void *out, size_t pitch, const void *ref, unsigned lines,
                   unsigned inner, unsigned esize, unsigned long long *bad,
                   unsigned long long *first);

/* For the 2D ops' verify: compare d's output with the reference; PM_EVERIFY names the first
 * difference as (row, col) with both values (transposed: lines are columns). */
int pm__verify_2d(pm_ctx *c, pm__data *d, unsigned lines, unsigned inner, int transposed,
                  double *err);

/* The value of an element of type dtype at p, as a double (for messages). */
double pm__elem_value(int dtype, const void *p);

/* n random elements of dtype (heap, NULL where memory ran out): pm__random_fill's floats,
 * rounded to the 16-bit types, or for f64 given 25 more bits of another draw. For the
 * elementwise ops (matadd, add) and their benchmarks. */
void *pm__random_fill_typed(int dtype, size_t n, uint64_t seed);
/* c[i] = a[i] + b[i] over n elements of dtype, rounded once to the type (16-bit types: in
 * float), on the host's cores: the reference of matadd and add. */
void pm__add_reference(int dtype, const void *a, const void *b, void *c, size_t n);
/* Filter's reference: out (rows x cols, packed) is in (packed) correlated with the
 * (2r+1)^2 weights w (floats; doubles for f64), each output's taps fused-multiply-added in
 * order from 0 in float (double for f64) and rounded once to dtype; outside the image the input
 * is 0 (zero_border) or its nearest element. On the host's cores. */
void pm__filter_reference(int dtype, const void *in, const void *w, void *out, unsigned rows,
                          unsigned cols, int r, int zero_border);
/* An elementwise op's prepare over n elements of pr's type: random inputs in d->host_in (seeds
 * seed and seed * 31 + 7), their sum in host_ref and dev_ref. */
int pm__prepare_add(pm_ctx *c, const pm__problem *pr, uint64_t seed, size_t n, pm__data *d);

/* Rounds a line of `bytes` up to a multiple of align (0: unchanged). */
size_t pm__pitch(size_t bytes, size_t align);

#endif /* PM_OP_H */

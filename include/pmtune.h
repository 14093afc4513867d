/* pmtune.h: the public API of pmtune, an autotuning runtime for memory-bound CUDA kernels. */
#ifndef PMTUNE_H
#define PMTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every error code, once: (name, value, description). Makes the enum, pm_strerror and pm_errname. */
#define PM_ERRORS(X)                                                   \
  X(EINVAL, -1, "invalid argument")                                    \
  X(ENOMEM, -2, "out of memory")                                       \
  X(ENODEV, -3, "no CUDA device")                                      \
  X(ECUDA, -4, "CUDA runtime error")                                   \
  X(ECOMPILE, -5, "kernel template failed to compile")                 \
  X(ELAUNCH, -6, "kernel failed to launch")                            \
  X(ENOTFOUND, -7, "not found")                                        \
  X(EUNSUPPORTED, -8, "not supported")                                 \
  X(EDB, -9, "tuning database error")                                  \
  X(EIO, -10, "input/output error")                                    \
  X(EVERIFY, -11, "result differs from the reference")

typedef enum pm_status {
  PM_OK = 0,
#define PM__ERROR_ENUM(name, value, text) PM_##name = value,
  PM_ERRORS(PM__ERROR_ENUM)
#undef PM__ERROR_ENUM
} pm_status;

/* Text for a status code ("invalid argument"), and its name ("PM_EINVAL"). Never NULL. */
const char *pm_strerror(int status);
const char *pm_errname(int status);

/* The version of this library, "MAJOR.MINOR.PATCH". */
const char *pm_version(void);

/* An open context: one CUDA device and the state pmtune keeps for it. */
typedef struct pm_ctx pm_ctx;

#define PM_DEVICE_NONE (-1) /* pm_options.device: open without a device (compiling only) */

/* Options for pm_open. A zeroed struct (or NULL) means: device 0, the default database, no
 * tuning on first use, no recording. An empty db_path or a negative autotune_budget is
 * PM_EINVAL. */
typedef struct pm_options {
  int device;          /* CUDA device ordinal, or PM_DEVICE_NONE */
  const char *db_path; /* the tuning database; NULL: $PMTUNE_DB, else $XDG_CACHE_HOME/pmtune/
                          pmtune.db, else ~/.cache/pmtune/pmtune.db */
  int autotune;        /* 1: tune sizes on first use, in a background thread of the context: a
                          call is never kept waiting (it is served at once, by the nearest tuned
                          size or the default) and later calls run the result. A size is tuned
                          only where no size within a factor of 2 in elements is tuned for its
                          op and variant, one tuning at a time (a short random search, stored
                          for later processes); also PMTUNE_AUTOTUNE=1 */
  int autotune_budget; /* points tried per size when autotuning; 0: 40 */
  int record;          /* 1: count the calls of each size served without an exact winner (in
                          memory, off the calls' path) and add the counts to the database at
                          pm_close, for `pmtune tune --seen`; also PMTUNE_RECORD=1 */
} pm_options;

/* Opens a context. On success *out is the context and PM_OK is returned. On failure the
 * status says why and, unless memory ran out, *out is still a context whose pm_errmsg
 * gives the detail; it must be closed with pm_close like any other. */
int pm_open(pm_ctx **out, const pm_options *opts);

/* Closes a context and frees everything it holds (a background tuning under way is waited for;
 * recorded sizes are written). CUDA graphs that captured calls on c must not be launched after
 * it: the kernels they hold are unloaded, and the reduce's scratch they use is freed.
 * pm_close(NULL) does nothing. */
void pm_close(pm_ctx *c);

/* Makes c read its database again: calls after this one decide from what it holds now (a
 * database tuned again while the program runs is picked up here, or by a new context; never in
 * the middle of a call). Each size is decided again at its next call. PM_EINVAL for NULL,
 * PM_ENODEV for a context without a device. */
int pm_reload(pm_ctx *c);

/* What the last failed call on this context said, in full (for a failed compilation, the
 * whole NVRTC log). Never NULL; valid until the next call on the context. */
const char *pm_errmsg(const pm_ctx *c);

/* ---- The operations ----------------------------------------------------------------------
 * Each call runs the fastest kernel known for this GPU and this size: the winner stored by
 * `pmtune tune` for exactly this size, else the one at the nearest tuned size, else a built-in
 * default (a missing or unreadable database is never an error: pm_notice says what happened).
 * Calls are asynchronous on `stream` like any CUDA call (NULL: the default stream), take device
 * pointers, and may be made from several threads at once on one context. Pitches are in bytes:
 * from one row to the next (row-major), or one column to the next (column-major); each must
 * hold a whole line. A call checks its arguments (PM_EINVAL says what is wrong) and returns the
 * launch's status; an error in the kernel shows at the next synchronisation, as in CUDA. */

struct CUstream_st; /* cudaStream_t, so that this header needs no CUDA header */

typedef enum pm_order { PM_ROW_MAJOR = 0, PM_COL_MAJOR = 1 } pm_order;
typedef enum pm_border { PM_BORDER_CLAMP = 0, PM_BORDER_ZERO = 1 } pm_border;

/* Every operation, once: (NAME, value, name). Makes pm_op (PM_OP_NAME = value) and, inside the
 * library, the table of ops (each `name` has its tuner/op_name.c entry, pm__op_name, and its
 * templates/name.cu). Values are stored in programs and never change; a new op takes the next. */
#define PM_OPS(X)                                                      \
  X(MATADD, 0, matadd)                                                 \
  X(REDUCE, 1, reduce)                                                 \
  X(FILTER, 2, filter)                                                 \
  X(ADD, 3, add)

typedef enum pm_op {
#define PM__OP_ENUM(NAME, value, name) PM_OP_##NAME = value,
  PM_OPS(PM__OP_ENUM)
#undef PM__OP_ENUM
} pm_op;

/* How many operations there are, and the name of the i-th ("matadd", in PM_OPS's order, i from
 * 0), NULL for i outside 0 .. pm_op_count() - 1: what a program lists ops from. */
int pm_op_count(void);
const char *pm_op_name(int i);

/* The element types of the calls that take one (pm_matadd_t, pm_add_t, pm_reduce_sum_t,
 * pm_filter_t, pm_malloc_2d_t): IEEE binary32 (float), IEEE binary16 (__half), bfloat16
 * (__nv_bfloat16) and IEEE binary64 (double), named f32, f16, bf16 and f64 in the database and
 * on the command line. 16-bit results are computed in float and rounded once to the type (round
 * to nearest, ties to even); doubles' in double. */
/* Every element type, once: (NAME, value, name, bytes, CUDA type). Makes pm_dtype (PM_NAME =
 * value), pm_dtype_name, pm_dtype_size, every list of types in pmtune, and the same names
 * defined in every kernel compile (PM_NAME=value, which the templates compare PM_DTYPE with).
 * Values are stored in databases and programs and never change; they run from 0 with no gap. */
#define PM_DTYPES(X)                                                   \
  X(F32, 0, f32, 4, float)                                             \
  X(F16, 1, f16, 2, __half)                                            \
  X(BF16, 2, bf16, 2, __nv_bfloat16)                                   \
  X(F64, 3, f64, 8, double)

typedef enum pm_dtype {
#define PM__DTYPE_ENUM(NAME, value, name, bytes, ctype) PM_##NAME = value,
  PM_DTYPES(PM__DTYPE_ENUM)
#undef PM__DTYPE_ENUM
} pm_dtype;

/* "f32", "f16", "bf16", "f64"; NULL for a value that is not a pm_dtype. */
const char *pm_dtype_name(pm_dtype t);
/* Bytes of one element: 4, 2, 2, 8; 0 for a value that is not a pm_dtype. */
size_t pm_dtype_size(pm_dtype t);
/* How many element types there are: pm_dtype's values are 0 .. pm_dtype_count() - 1. */
int pm_dtype_count(void);

/* C = A + B over a rows x cols float matrix stored in `order`. Where the three matrices are
 * packed (every pitch is a line's length in bytes, 4 x cols row-major or 4 x rows
 * column-major, or there is one line) and rows x cols <= 2^31 - 1, they are one flat vector
 * whatever the order, and the call is served as pm_add(c, rows * cols, C, A, B, stream) is (its
 * tuned kernels, its database entries); otherwise as the op matadd. */
int pm_matadd(pm_ctx *c, size_t rows, size_t cols, pm_order order, float *C, size_t pitch_c,
              const float *A, size_t pitch_a, const float *B, size_t pitch_b,
              struct CUstream_st *stream);

/* C[i] = A[i] + B[i] for i < n, 1 <= n <= 2^31 - 1; pointers 4-byte aligned (float4 accesses
 * where all three are 16-byte aligned). C may be A or B (in place), but may not overlap either
 * otherwise. */
int pm_add(pm_ctx *c, size_t n, float *C, const float *A, const float *B,
           struct CUstream_st *stream);

/* pm_matadd and pm_add over elements of type t (pm_dtype): the same contracts, with pointers and
 * pitches multiples of the element's size (pm_dtype_size) rather than of 4 bytes; each type is
 * tuned and served separately (`pmtune tune --dtype`). A 16-bit sum is computed in float and
 * rounded once to the type; a double sum in double. With PM_F32 they are pm_matadd and pm_add. */
int pm_matadd_t(pm_ctx *c, pm_dtype t, size_t rows, size_t cols, pm_order order, void *C,
                size_t pitch_c, const void *A, size_t pitch_a, const void *B, size_t pitch_b,
                struct CUstream_st *stream);
int pm_add_t(pm_ctx *c, pm_dtype t, size_t n, void *C, const void *A, const void *B,
             struct CUstream_st *stream);

/* *sum = x[0] + ... + x[n-1] (sum in device memory), 1 <= n <= 2^31 - 1. The same bits every
 * run for the same n and configuration; within the error bound of tuner/op_reduce.c. */
int pm_reduce_sum(pm_ctx *c, size_t n, const float *x, float *sum, struct CUstream_st *stream);

/* pm_reduce_sum over n elements of type t, x a multiple of the element's size: the sum is
 * accumulated in float or double (halves and bfloat16s: as tuning chose; doubles: in double)
 * and written to *sum as sum_t, which is t (rounded once to it) or PM_F32 (the float sum of a
 * half or bfloat16 vector, with no rounding to 16 bits; sum 4-byte aligned). The same bits every
 * run; within the bound of tuner/op_reduce.c (pm__reduce_error_bound). With PM_F32 for both it
 * is pm_reduce_sum. */
int pm_reduce_sum_t(pm_ctx *c, pm_dtype t, size_t n, const void *x, pm_dtype sum_t, void *sum,
                    struct CUstream_st *stream);

/* out = in correlated with the (2 radius + 1)^2 weights (host memory, row by row; copied at the
 * call), radius 1 to 3, rows x cols row-major images, borders clamped to the edge or zero. */
int pm_filter(pm_ctx *c, size_t rows, size_t cols, float *out, size_t pitch_out, const float *in,
              size_t pitch_in, const float *weights, int radius, pm_border border,
              struct CUstream_st *stream);

/* pm_filter over images of type t, pointers and pitches multiples of the element's size: the
 * weights are floats (t = PM_F16, PM_BF16, PM_F32) or doubles (PM_F64), each output the fused
 * multiply-adds of its window in that type (mask rows top to bottom, each left to right, from 0)
 * rounded once to t. With PM_F32 it is pm_filter. */
int pm_filter_t(pm_ctx *c, pm_dtype t, size_t rows, size_t cols, void *out, size_t pitch_out,
                const void *in, size_t pitch_in, const void *weights, int radius,
                pm_border border, struct CUstream_st *stream);

/* Allocates rows lines of cols floats (1 to 2^31 - 1 each, at most 2^32 floats: what the calls
 * take) laid out as the tuned kernels of op want them: each line padded to the pitch alignment
 * that tuning chose for this size (or 256 bytes where nothing is tuned). *pitch receives the pitch in bytes, *padding (may be NULL) the bytes of padding
 * added in all: rows * (pitch - 4 cols). Free with pm_free. For a column-major matrix, lines
 * are columns: pass (cols, rows). */
int pm_malloc_2d(pm_ctx *c, pm_op op, size_t rows, size_t cols, float **ptr, size_t *pitch,
                 size_t *padding);
/* pm_malloc_2d for lines of cols elements of type t (pm_dtype): the pitch alignment that tuning
 * chose for op in that type; *padding is rows * (pitch - cols x the element's size). With PM_F32
 * it is pm_malloc_2d. */
int pm_malloc_2d_t(pm_ctx *c, pm_op op, pm_dtype t, size_t rows, size_t cols, void **ptr,
                   size_t *pitch, size_t *padding);
void pm_free(pm_ctx *c, void *ptr);

/* ---- Kernels of your own (docs/kernels.md) -------------------------------------------------- */

typedef struct pm_kernel pm_kernel;

/* Opens the kernel that the JSON description at path describes (its CUDA source beside it) for
 * serving on c's device: what pmtune tune --kernel stored for it in c's database, for this GPU's
 * model, serves it; where nothing is tuned, its seed. The same description (the same content)
 * opened again gives the same handle. A handle lives until pm_close(c), which frees it.
 * PM_EINVAL names the file, the field and what is wrong with a description; PM_EIO a file that
 * cannot be read. */
int pm_kernel_open(pm_ctx *c, const char *path, pm_kernel **k);

/* Runs k on the problem dims (as its description's "dims": {n}, {rows, cols}, or {batch, rows,
 * cols}; each 1 to 2^31 - 1) over its buffers: buffers[i] is the device pointer of its i-th buffer argument (in
 * the order of "args", scalars left out), each a multiple of its element's size; each scalar its
 * description's "value" (pm_kernel_launch_with gives them per call). The kernel tuned for
 * exactly this size, else what is known between and near it, else the seed; asynchronously on
 * stream, and capturable into a CUDA graph like every call. A call of a size met before costs what a
 * built-in call does: a cache lookup, and the launch. Tuned points were checked on buffers
 * cudaMalloc gave (512-byte aligned): a kernel making wider accesses than its elements needs
 * such buffers. */
int pm_kernel_launch(pm_kernel *k, const size_t *dims, void *const *buffers,
                     struct CUstream_st *stream);

/* pm_kernel_launch with the scalar arguments' values of this call: scalars[i] points to the i-th
 * scalar argument's value (in the order of "args", buffers left out), of its type ("i32":
 * int32_t, "i64": int64_t, "f32": float, "f64": double); NULL, there, for its description's
 * "value". nscalars is how many scalars the description has; scalars NULL with nscalars 0 gives
 * none (pm_kernel_launch). A scalar with no "value" must be given: PM_EINVAL names it, as it
 * names a count that is not the description's.
 * Scalars do not choose the configuration (the size does): tuning ran with each description's
 * value, 1 where it has none; but the one marked "tuned" (an integer, 1 to 2^31 - 1) is part of
 * the size: this call's value chooses what serves it. */
int pm_kernel_launch_with(pm_kernel *k, const size_t *dims, void *const *buffers,
                          const void *const *scalars, size_t nscalars,
                          struct CUstream_st *stream);

/* What the context fell back on, and why, the first time it did (a database that could not be
 * read, a size served by the default), or NULL where it never did. Kept until pm_close. With
 * PMTUNE_LOG set in the environment it is also written to stderr, once. */
const char *pm_notice(const pm_ctx *c);

#ifdef __cplusplus
}
#endif
#endif /* PMTUNE_H */

/* api.c: the public calls pm_matadd(_t), pm_add(_t), pm_reduce_sum(_t), pm_filter(_t),
 * pm_malloc_2d(_t) and pm_free:
 * their arguments checked (through the shared checks below, so that every call words a fault alike)
 * and turned into a problem that serve.c runs. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel_file.h"
#include "runtime.h"

#define MAX_DIM 0x7fffffffu        /* rows, cols and n: what a kernel's int indexing allows */
#define MAX_ELEMS (1ull << 32)     /* rows * cols of a call */
#define MAX_BUFFERS 3              /* matadd's C, A and B */

unsigned pm__alignment_least(const size_t *values, int n, unsigned least) {
  size_t all = 16;
  for (int i = 0; i < n; i++) all |= values[i];
  unsigned a = (unsigned)(all & -all); /* the lowest set bit */
  return a < least ? 0 : a;
}

unsigned pm__alignment_of(const size_t *values, int n) { return pm__alignment_least(values, n, 4); }

/* ---- The shared checks: PM_OK, or PM_EINVAL (PM_ENODEV) with "fn: what is wrong" on c ------- */

/* A context that serves: opened by pm_open with a device. */
static int check_ctx(pm_ctx *c, const char *fn) {
  if (c == NULL) return PM_EINVAL;
  if (c->serve == NULL) return pm__seterr(c, PM_ENODEV, "%s: this context has no device", fn);
  return PM_OK;
}

/* None of ptrs[0..n) is NULL; `what` names them in the message ("matrix"). */
static int check_given(pm_ctx *c, const char *fn, const char *what, const void *const *ptrs,
                       int n) {
  for (int i = 0; i < n; i++)
    if (ptrs[i] == NULL) return pm__seterr(c, PM_EINVAL, "%s: a NULL %s", fn, what);
  return PM_OK;
}

/* rows and cols are 1 to 2^31 - 1; where `limit` is set, rows * cols is at most 2^32 too. */
static int check_dims(pm_ctx *c, const char *fn, size_t rows, size_t cols, int limit) {
  if (rows >= 1 && cols >= 1 && rows <= MAX_DIM && cols <= MAX_DIM &&
      (!limit || (unsigned long long)rows * cols <= MAX_ELEMS))
    return PM_OK;
  return pm__seterr(c, PM_EINVAL, "%s: %zu x %zu: rows and cols must be 1 to 2^31 - 1%s", fn,
                    rows, cols, limit ? ", and at most 2^32 elements" : "");
}

/* Each of pitches[0..n) holds a line of `line` bytes (`line_name`: "row" or "column"); a matrix
 * of one line has no pitch to check. */
static int check_pitches(pm_ctx *c, const char *fn, size_t lines, size_t line,
                         const char *line_name, const size_t *pitches, int n) {
  int short_one = 0;
  for (int i = 0; i < n; i++) {
    short_one |= pitches[i] < line;
    /* (lines - 1) x pitch + line bytes must be a size: a kernel's line * pitch never wraps */
    if (lines > 1 && pitches[i] > (SIZE_MAX - line) / (lines - 1))
      return pm__seterr(c, PM_EINVAL, "%s: a pitch of %zu bytes over %zu %ss overflows a size",
                        fn, pitches[i], lines, line_name);
  }
  if (lines <= 1 || !short_one) return PM_OK;
  char list[3 * 24] = "";
  for (int i = 0, len = 0; i < n; i++)
    len += snprintf(list + len, sizeof list - (size_t)len, "%s%zu", i ? ", " : "", pitches[i]);
  return pm__seterr(c, PM_EINVAL, "%s: a pitch (%s bytes) is shorter than a %s of %zu bytes", fn,
                    list, line_name, line);
}

/* Every pointer of ptrs[0..n), and its pitch (pitches may be NULL: none) where there is more than
 * one line, is a multiple of the element's `esize` bytes; *align receives the alignment (esize to
 * 16) they all honour, which bounds the vector width a kernel may read them with. */
static int check_aligned(pm_ctx *c, const char *fn, const void *const *ptrs, const size_t *pitches,
                         int n, size_t lines, size_t esize, unsigned *align) {
  size_t values[2 * MAX_BUFFERS];
  for (int i = 0; i < n; i++)
    values[2 * i] = (size_t)ptrs[i], values[2 * i + 1] = pitches && lines > 1 ? pitches[i] : 0;
  if ((*align = pm__alignment_least(values, 2 * n, (unsigned)esize)) != 0) return PM_OK;
  return pm__seterr(c, PM_EINVAL, "%s: pointers%s must be multiples of %zu bytes", fn,
                    pitches ? " and pitches" : "", esize);
}

/* t is a pm_dtype that op takes; its size in *esize. */
static int check_dtype(pm_ctx *c, const char *fn, const pm__op *op, pm_dtype t, size_t *esize) {
  *esize = pm_dtype_size(t);
  if (*esize != 0 && (op->dtypes & 1u << t)) return PM_OK;
  return pm__seterr(c, PM_EINVAL, "%s: dtype %d is not one of %s", fn, (int)t, PM__DTYPE_NAMES);
}

/* ---- The calls ------------------------------------------------------------------------------ */

/* C = A + B over n elements of t (1 to 2^31 - 1, pointers checked; align: what all three honour)
 * as the op add: pm_add's path, and pm_matadd's for packed matrices. */
static int serve_add(pm_ctx *c, pm_dtype t, size_t n, void *C, const void *A, const void *B,
                     unsigned align, struct CUstream_st *stream) {
  pm__problem pr = {.n = (unsigned)n, .caller_align = align, .dtype = (int)t};
  pm__data d;
  d.out = C, d.in[0] = (void *)A, d.in[1] = (void *)B;
  return pm__serve_call(c, &pm__op_add, &pr, &d, stream);
}

/* pm_matadd and pm_matadd_t, named fn in messages. */
static int matadd(pm_ctx *c, const char *fn, pm_dtype t, size_t rows, size_t cols, pm_order order,
                  void *C, size_t pitch_c, const void *A, size_t pitch_a, const void *B,
                  size_t pitch_b, struct CUstream_st *stream) {
  const void *ptrs[3] = {C, A, B};
  const size_t pitches[3] = {pitch_c, pitch_a, pitch_b};
  int colmajor = order == PM_COL_MAJOR, rc;
  size_t es;
  unsigned align;
  if ((rc = check_ctx(c, fn)) != PM_OK || (rc = check_given(c, fn, "matrix", ptrs, 3)) != PM_OK ||
      (rc = check_dtype(c, fn, &pm__op_matadd, t, &es)) != PM_OK)
    return rc;
  size_t lines = colmajor ? cols : rows, line = (colmajor ? rows : cols) * es;
  if (order != PM_ROW_MAJOR && order != PM_COL_MAJOR)
    return pm__seterr(c, PM_EINVAL, "%s: order %d is neither row- nor column-major", fn, (int)order);
  if ((rc = check_dims(c, fn, rows, cols, 1)) != PM_OK ||
      (rc = check_pitches(c, fn, lines, line, colmajor ? "column" : "row", pitches, 3)) != PM_OK ||
      (rc = check_aligned(c, fn, ptrs, pitches, 3, lines, es, &align)) != PM_OK)
    return rc;
  /* Packed matrices are one flat vector of rows x cols elements, in either order: served as add,
   * whose vector width depends on the pointers alone, not on an odd line length. */
  if ((lines == 1 || (pitch_c == line && pitch_a == line && pitch_b == line)) &&
      (unsigned long long)rows * cols <= MAX_DIM) {
    if ((rc = check_aligned(c, fn, ptrs, NULL, 3, 1, es, &align)) != PM_OK) return rc;
    return serve_add(c, t, rows * cols, C, A, B, align, stream);
  }
  /* the op's variants are indexed as pm_order is: variants[PM_COL_MAJOR] is "order=col" */
  pm__problem pr = {.rows = (unsigned)rows, .cols = (unsigned)cols, .variant = (int)order,
                    .caller_align = align, .dtype = (int)t};
  pm__data d;
  d.out = C, d.out_pitch = pitch_c;
  d.in[0] = (void *)A, d.in_pitch[0] = pitch_a, d.in[1] = (void *)B, d.in_pitch[1] = pitch_b;
  return pm__serve_call(c, &pm__op_matadd, &pr, &d, stream);
}

int pm_matadd(pm_ctx *c, size_t rows, size_t cols, pm_order order, float *C, size_t pitch_c,
              const float *A, size_t pitch_a, const float *B, size_t pitch_b,
              struct CUstream_st *stream) {
  return matadd(c, "pm_matadd", PM_F32, rows, cols, order, C, pitch_c, A, pitch_a, B, pitch_b,
                stream);
}

int pm_matadd_t(pm_ctx *c, pm_dtype t, size_t rows, size_t cols, pm_order order, void *C,
                size_t pitch_c, const void *A, size_t pitch_a, const void *B, size_t pitch_b,
                struct CUstream_st *stream) {
  return matadd(c, "pm_matadd_t", t, rows, cols, order, C, pitch_c, A, pitch_a, B, pitch_b,
                stream);
}

/* Whether [p, p + bytes) and [q, ...) share a byte without being the same vector. */
static int overlap(const void *p, const void *q, size_t bytes) {
  uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
  return a != b && a < b + bytes && b < a + bytes;
}

/* pm_add and pm_add_t, named fn in messages. */
static int add(pm_ctx *c, const char *fn, pm_dtype t, size_t n, void *C, const void *A,
               const void *B, struct CUstream_st *stream) {
  const void *ptrs[3] = {C, A, B};
  unsigned align;
  size_t es;
  int rc;
  if ((rc = check_ctx(c, fn)) != PM_OK || (rc = check_given(c, fn, "vector", ptrs, 3)) != PM_OK ||
      (rc = check_dtype(c, fn, &pm__op_add, t, &es)) != PM_OK)
    return rc;
  if (n < 1 || n > MAX_DIM)
    return pm__seterr(c, PM_EINVAL, "%s: n = %zu: must be 1 to 2^31 - 1", fn, n);
  if ((rc = check_aligned(c, fn, ptrs, NULL, 3, 1, es, &align)) != PM_OK) return rc;
  if (overlap(C, A, n * es) || overlap(C, B, n * es))
    return pm__seterr(c, PM_EINVAL, "%s: C overlaps %s without being it (in place is C == A or B)",
                      fn, overlap(C, A, n * es) ? "A" : "B");
  return serve_add(c, t, n, C, A, B, align, stream);
}

int pm_add(pm_ctx *c, size_t n, float *C, const float *A, const float *B,
           struct CUstream_st *stream) {
  return add(c, "pm_add", PM_F32, n, C, A, B, stream);
}

int pm_add_t(pm_ctx *c, pm_dtype t, size_t n, void *C, const void *A, const void *B,
             struct CUstream_st *stream) {
  return add(c, "pm_add_t", t, n, C, A, B, stream);
}

/* pm_reduce_sum and pm_reduce_sum_t, named fn in messages. */
static int reduce_sum(pm_ctx *c, const char *fn, pm_dtype t, size_t n, const void *x,
                      pm_dtype sum_t, void *sum, struct CUstream_st *stream) {
  const void *in[1] = {x}, *out[1] = {sum}, *both[2] = {x, sum};
  unsigned align, out_align;
  size_t es;
  int rc;
  if ((rc = check_ctx(c, fn)) != PM_OK || (rc = check_given(c, fn, "pointer", both, 2)) != PM_OK ||
      (rc = check_dtype(c, fn, &pm__op_reduce, t, &es)) != PM_OK)
    return rc;
  if (sum_t != t && sum_t != PM_F32)
    return pm__seterr(c, PM_EINVAL, "%s: the sum's type %d is neither the input's (%s) nor f32",
                      fn, (int)sum_t, pm_dtype_name(t));
  if (n < 1 || n > MAX_DIM)
    return pm__seterr(c, PM_EINVAL, "%s: n = %zu: must be 1 to 2^31 - 1", fn, n);
  /* Only x is read in vectors: its alignment alone is the problem's. */
  if ((rc = check_aligned(c, fn, in, NULL, 1, 1, es, &align)) != PM_OK ||
      (rc = check_aligned(c, fn, out, NULL, 1, 1, pm_dtype_size(sum_t), &out_align)) != PM_OK)
    return rc;
  pm__problem pr = {.n = (unsigned)n, .caller_align = align, .dtype = (int)t};
  pm__data d;
  d.in[0] = (void *)x, d.out = sum, d.reduce.sum_as_float = sum_t == PM_F32;
  return pm__serve_call(c, &pm__op_reduce, &pr, &d, stream);
}

int pm_reduce_sum(pm_ctx *c, size_t n, const float *x, float *sum, struct CUstream_st *stream) {
  return reduce_sum(c, "pm_reduce_sum", PM_F32, n, x, PM_F32, sum, stream);
}

int pm_reduce_sum_t(pm_ctx *c, pm_dtype t, size_t n, const void *x, pm_dtype sum_t, void *sum,
                    struct CUstream_st *stream) {
  return reduce_sum(c, "pm_reduce_sum_t", t, n, x, sum_t, sum, stream);
}

/* pm_filter and pm_filter_t, named fn in messages. */
static int filter(pm_ctx *c, const char *fn, pm_dtype t, size_t rows, size_t cols, void *out,
                  size_t pitch_out, const void *in, size_t pitch_in, const void *weights,
                  int radius, pm_border border, struct CUstream_st *stream) {
  const void *ptrs[3] = {out, in, weights}; /* the weights are on the host, copied into the call */
  const size_t pitches[2] = {pitch_out, pitch_in};
  unsigned align;
  size_t es;
  int rc;
  if ((rc = check_ctx(c, fn)) != PM_OK ||
      (rc = check_given(c, fn, "image or weights", ptrs, 3)) != PM_OK ||
      (rc = check_dtype(c, fn, &pm__op_filter, t, &es)) != PM_OK)
    return rc;
  if (radius < 1 || radius > PM__MAX_RADIUS)
    return pm__seterr(c, PM_EINVAL, "%s: radius %d: must be 1 to %d", fn, radius, PM__MAX_RADIUS);
  if (border != PM_BORDER_CLAMP && border != PM_BORDER_ZERO)
    return pm__seterr(c, PM_EINVAL, "%s: border %d is neither clamp nor zero", fn, (int)border);
  if ((rc = check_dims(c, fn, rows, cols, 1)) != PM_OK ||
      (rc = check_pitches(c, fn, rows, cols * es, "row", pitches, 2)) != PM_OK ||
      (rc = check_aligned(c, fn, ptrs, pitches, 2, rows, es, &align)) != PM_OK) /* the images */
    return rc;
  pm__problem pr = {.rows = (unsigned)rows, .cols = (unsigned)cols, .radius = radius,
                    .variant = (int)border, /* variants[PM_BORDER_ZERO] is "border=zero" */
                    .caller_align = align, .dtype = (int)t};
  pm__data d;
  size_t k = (size_t)(2 * radius + 1);
  d.out = out, d.out_pitch = pitch_out, d.in[0] = (void *)in, d.in_pitch[0] = pitch_in;
  memcpy(&d.filter.weights, weights, k * k * (t == PM_F64 ? sizeof(double) : sizeof(float)));
  return pm__serve_call(c, &pm__op_filter, &pr, &d, stream);
}

int pm_filter(pm_ctx *c, size_t rows, size_t cols, float *out, size_t pitch_out, const float *in,
              size_t pitch_in, const float *weights, int radius, pm_border border,
              struct CUstream_st *stream) {
  return filter(c, "pm_filter", PM_F32, rows, cols, out, pitch_out, in, pitch_in, weights, radius,
                border, stream);
}

int pm_filter_t(pm_ctx *c, pm_dtype t, size_t rows, size_t cols, void *out, size_t pitch_out,
                const void *in, size_t pitch_in, const void *weights, int radius,
                pm_border border, struct CUstream_st *stream) {
  return filter(c, "pm_filter_t", t, rows, cols, out, pitch_out, in, pitch_in, weights, radius,
                border, stream);
}

/* ---- Allocation ----------------------------------------------------------------------------- */

/* The pitch alignment to lay out rows x cols of t for op with: the one tuning chose (for the
 * exact or nearest size), where op has an "align" parameter and something is tuned; else 256
 * bytes. */
static size_t layout_for(pm_ctx *c, const pm__op *op, pm_dtype t, size_t rows, size_t cols) {
  for (int i = 0; i < op->nparams; i++)
    if (strcmp(op->params[i].name, "align") == 0) {
      pm__problem pr = {.rows = (unsigned)rows, .cols = (unsigned)cols,
                        .n = (unsigned)(rows * cols), .radius = 1, .dtype = (int)t};
      pm__decision d;
      pm__serve_decide(c, op, &pr, &d);
      if (d.source != PM__FROM_DEFAULT) return op->layout(op, d.v);
    }
  return 256;
}

/* pm_malloc_2d and pm_malloc_2d_t, named fn in messages. */
static int malloc_2d(pm_ctx *c, const char *fn, pm_op op, pm_dtype t, size_t rows, size_t cols,
                     void **ptr, size_t *pitch, size_t *padding) {
  int rc = check_ctx(c, fn);
  if (rc != PM_OK) return rc;
  if (ptr == NULL || pitch == NULL) return pm__seterr(c, PM_EINVAL, "%s: NULL output", fn);
  *ptr = NULL;
  const pm__op *o = pm__op_of(op);
  size_t es;
  if (o == NULL) return pm__seterr(c, PM_EINVAL, "%s: op %d", fn, (int)op);
  if ((rc = check_dtype(c, fn, o, t, &es)) != PM_OK) return rc;
  /* at most 2^32 elements, what every call takes: rows x pitch cannot overflow a size_t */
  if ((rc = check_dims(c, fn, rows, cols, 1)) != PM_OK) return rc;
  size_t line = cols * es;
  *pitch = pm__pitch(line, layout_for(c, o, t, rows, cols));
  if (padding != NULL) *padding = rows * (*pitch - line);
  cudaError_t e = cudaMalloc(ptr, *pitch * rows);
  if (e != cudaSuccess)
    return pm__seterr(c, PM_ECUDA, "%s: %zu x %zu %s (pitch %zu): %s", fn, rows, cols,
                      pm_dtype_name(t), *pitch, cudaGetErrorString(e));
  return PM_OK;
}

int pm_malloc_2d(pm_ctx *c, pm_op op, size_t rows, size_t cols, float **ptr, size_t *pitch,
                 size_t *padding) {
  return malloc_2d(c, "pm_malloc_2d", op, PM_F32, rows, cols, (void **)ptr, pitch, padding);
}

int pm_malloc_2d_t(pm_ctx *c, pm_op op, pm_dtype t, size_t rows, size_t cols, void **ptr,
                   size_t *pitch, size_t *padding) {
  return malloc_2d(c, "pm_malloc_2d_t", op, t, rows, cols, ptr, pitch, padding);
}

void pm_free(pm_ctx *c, void *ptr) {
  (void)c;
  if (ptr != NULL) cudaFree(ptr);
}

/* ---- Kernels of your own -------------------------------------------------------------------- */

int pm_kernel_open(pm_ctx *c, const char *path, pm_kernel **k) {
  int rc;
  if (k != NULL) *k = NULL;
  if ((rc = check_ctx(c, "pm_kernel_open")) != PM_OK) return rc;
  if (path == NULL || k == NULL)
    return pm__seterr(c, PM_EINVAL, "pm_kernel_open: a NULL %s", path == NULL ? "path" : "handle");
  return pm__serve_kernel_open(c, path, k);
}

/* pm_kernel_launch and pm_kernel_launch_with: the arguments checked, each refusal naming what
 * is wrong, then served. */
static int launch_kernel(pm_kernel *k, const size_t *dims, void *const *buffers,
                         const void *const *scalars, size_t nscalars, struct CUstream_st *stream,
                         const char *fn) {
  if (k == NULL) return PM_EINVAL; /* no context to say why on */
  pm_ctx *c = k->c;
  const pm__op *op = k->op;
  int nbufs = pm__kernel_desc_buffers(k->kf);
  if (dims == NULL || buffers == NULL)
    return pm__seterr(c, PM_EINVAL, "%s: %s: a NULL %s", fn, op->name, dims ? "buffers" : "dims");
  for (int i = 0; i < op->dims; i++)
    if (dims[i] < 1 || dims[i] > MAX_DIM)
      return pm__seterr(c, PM_EINVAL, "%s: %s: %s = %zu: must be 1 to 2^31 - 1", fn, op->name,
                        pm__kernel_desc_dim_name(k->kf, i), dims[i]);
  pm__problem pr = {0};
  if (op->dims == 1) pr.n = (unsigned)dims[0];
  else if (op->dims == 2) pr.rows = (unsigned)dims[0], pr.cols = (unsigned)dims[1];
  else pr.n = (unsigned)dims[0], pr.rows = (unsigned)dims[1], pr.cols = (unsigned)dims[2];
  int described = pm__kernel_desc_scalars(k->kf), is_i64 = 0;
  int tuned = pm__kernel_desc_tuned(k->kf, &is_i64); /* its value is part of the size */
  if (tuned >= 0 && scalars != NULL && (size_t)tuned < nscalars && scalars[tuned] != NULL) {
    long long v = is_i64 ? *(const int64_t *)scalars[tuned] : *(const int32_t *)scalars[tuned];
    if (v < 1 || v > MAX_DIM)
      return pm__seterr(c, PM_EINVAL, "%s: %s: scalar %d (%s) = %lld: a tuned scalar is 1 to "
                        "2^31 - 1", fn, op->name, tuned, op->radius_name, v);
    pr.radius = (int)v;
  }
  if ((scalars != NULL || nscalars != 0) && nscalars != (size_t)described)
    return pm__seterr(c, PM_EINVAL, "%s: %s: %zu scalars given, %d described", fn, op->name,
                      nscalars, described);
  int missing = -1; /* a scalar with no value that the call does not give */
  if (scalars == NULL)
    missing = pm__kernel_desc_scalar_needed(k->kf); /* known at load: no loop per call */
  else
    for (int i = 0, has_value = 0; i < described && missing < 0; i++)
      if (scalars[i] == NULL && pm__kernel_desc_scalar(k->kf, i, NULL, &has_value) != NULL &&
          !has_value)
        missing = i;
  if (missing >= 0)
    return pm__seterr(c, PM_EINVAL, "%s: %s: scalar %d (%s) has no value in the description: "
                                    "the call must give it (pm_kernel_launch_with)",
                      fn, op->name, missing, pm__kernel_desc_scalar(k->kf, missing, NULL, NULL));
  pm__data d;
  d.nbufs = nbufs;
  d.described.scalars = scalars;
  for (int i = 0; i < nbufs; i++) {
    int t = PM_F32;
    const char *name = pm__kernel_desc_buffer(k->kf, i, &t);
    if (buffers[i] == NULL)
      return pm__seterr(c, PM_EINVAL, "%s: %s: buffer %d (%s) is NULL", fn, op->name, i, name);
    if ((uintptr_t)buffers[i] % pm_dtype_size((pm_dtype)t) != 0)
      return pm__seterr(c, PM_EINVAL, "%s: %s: buffer %d (%s) is not a multiple of %zu bytes",
                        fn, op->name, i, name, pm_dtype_size((pm_dtype)t));
    d.described.bufs[i].dev = buffers[i];
  }
  return pm__serve_kernel(k, &pr, &d, stream);
}

int pm_kernel_launch(pm_kernel *k, const size_t *dims, void *const *buffers,
                     struct CUstream_st *stream) {
  return launch_kernel(k, dims, buffers, NULL, 0, stream, "pm_kernel_launch");
}

int pm_kernel_launch_with(pm_kernel *k, const size_t *dims, void *const *buffers,
                          const void *const *scalars, size_t nscalars,
                          struct CUstream_st *stream) {
  return launch_kernel(k, dims, buffers, scalars, nscalars, stream, "pm_kernel_launch_with");
}
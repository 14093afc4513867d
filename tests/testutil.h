/* testutil.h: helpers the tests share: GPU presence (skip visibly without one), random data, CUDA checks. */
#ifndef PM_TESTUTIL_H
#define PM_TESTUTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* db's: tests read the file through SQLite */
#include "op.h"
#include "serve.h"

/* Skips the calling test, with the reason, where this machine has no usable CUDA device. */
static inline void pm_test_require_gpu(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    cr_skip_test("no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
}

/* A context with serving's state and no device, on the database at db_path: what the argument
 * checks and the scratch's bookkeeping need, no GPU. pm_test_serving_close undoes it. */
static inline pm_ctx *pm_test_serving_open(const char *db_path) {
  pm_ctx *c = NULL;
  pm_options o = {0};
  cr_assert_eq(pm__ctx_create(&c, PM_DEVICE_NONE, db_path), PM_OK);
  cr_assert_eq(pm__serve_init(c, &o), PM_OK, "serving's state needs no GPU");
  return c;
}

static inline void pm_test_serving_close(pm_ctx *c) {
  pm__serve_free(c); /* frees the scratch */
  pm__ctx_free(c);
}

/* The first column of the first row of sql on db, as an integer (a count). */
static inline long long pm_test_count(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
  long long n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

/* Fails the test with file and line when a CUDA runtime call fails. */
#define CUDA_OK(call)                                                                   \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    cr_assert(e_ == cudaSuccess, "%s: %s (%s)", #call, cudaGetErrorString(e_),          \
              cudaGetErrorName(e_));                                                    \
  } while (0)

/* A small, seeded generator (xorshift64*), so that a failing case can be replayed. */
static inline uint64_t pm_test_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [-1, 1), never exactly zero everywhere. */
static inline float pm_test_randf(uint64_t *s) {
  return (float)((pm_test_rand(s) >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

/* A seed that differs from run to run, printed by the caller so that a failure can be replayed. */
static inline uint64_t pm_test_seed(void) {
  const char *env = getenv("PMTUNE_TEST_SEED");
  if (env != NULL) return strtoull(env, NULL, 0);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ 0x9E3779B97F4A7C15ULL;
}

/* Calls op through the library on d's buffers, served as for d's problem (its size, variant,
 * radius and type; a matadd placed packed is served as add), on stream; returns the call's
 * status. Floats go through the float calls, the other types through the typed ones; reduce's
 * sum is written as d->reduce.sum_as_float says. */
static inline int pm_test_call_op(pm_ctx *c, const pm__op *op, const pm__data *d,
                                  cudaStream_t stream) {
  const pm__problem *pr = &d->pr;
  pm_dtype t = (pm_dtype)pr->dtype;
  int f32 = t == PM_F32;
  if (op->api == PM_OP_MATADD)
    return f32 ? pm_matadd(c, pr->rows, pr->cols, (pm_order)pr->variant, d->out, d->out_pitch,
                           d->in[0], d->in_pitch[0], d->in[1], d->in_pitch[1], stream)
               : pm_matadd_t(c, t, pr->rows, pr->cols, (pm_order)pr->variant, d->out,
                             d->out_pitch, d->in[0], d->in_pitch[0], d->in[1], d->in_pitch[1],
                             stream);
  if (op->api == PM_OP_REDUCE)
    return f32 ? pm_reduce_sum(c, pr->n, d->in[0], d->out, stream)
               : pm_reduce_sum_t(c, t, pr->n, d->in[0], d->reduce.sum_as_float ? PM_F32 : t, d->out,
                                 stream);
  if (op->api == PM_OP_ADD)
    return f32 ? pm_add(c, pr->n, d->out, d->in[0], d->in[1], stream)
               : pm_add_t(c, t, pr->n, d->out, d->in[0], d->in[1], stream);
  if (op->api == PM_OP_FILTER)
    return f32 ? pm_filter(c, pr->rows, pr->cols, d->out, d->out_pitch, d->in[0],
                           d->in_pitch[0], d->filter.weights.f32, pr->radius, (pm_border)pr->variant,
                           stream)
               : pm_filter_t(c, t, pr->rows, pr->cols, d->out, d->out_pitch, d->in[0],
                             d->in_pitch[0], &d->filter.weights, pr->radius, (pm_border)pr->variant,
                             stream);
  return PM_EUNSUPPORTED; /* an op whose call is not here yet: never another op's call */
}

#endif /* PM_TESTUTIL_H */

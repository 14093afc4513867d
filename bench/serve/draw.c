/* draw.c: the random problems of the serving studies, "between tuned sizes" and "random sizes"
 * (see draw.h). */
#include <math.h>

#include "draw.h"

/* xorshift64*: uniform in [0, 1). */
static double uniform(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

/* Log-uniform in [lo, hi]. */
static double log_uniform(uint64_t *s, double lo, double hi) {
  return exp(log(lo) + uniform(s) * (log(hi) - log(lo)));
}

double pm__draw_size(const pm__op *op, const pm__problem *pr) {
  return op->dims == 1 ? (double)pr->n : (double)pr->rows * pr->cols;
}

int pm__draw_is_tuned(const pm__op *op, const pm__problem *pr) {
  for (int i = 0; i < op->ntune_sizes; i++) {
    const pm__problem *t = &op->tune_sizes[i];
    if (op->dims == 1 ? t->n == pr->n : t->rows == pr->rows && t->cols == pr->cols) return 1;
  }
  return 0;
}

int pm__draw_between(const pm__op *op, uint64_t *s, pm__problem *out) {
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < op->ntune_sizes; i++) {
    double z = pm__draw_size(op, &op->tune_sizes[i]);
    lo = z < lo ? z : lo;
    hi = z > hi ? z : hi;
  }
  int nvariants = 0;
  while (nvariants < 3 && op->variants[nvariants] != NULL) nvariants++;
  pm__limits lim = pm__limits_default();
  if (op->ntune_sizes == 0 || !(lo < hi) || nvariants == 0) return -1;
  for (int tries = 0; tries < 10000; tries++) {
    pm__problem pr = {0};
    pr.variant = (int)(uniform(s) * nvariants);
    if (op->radius_max > 0)
      pr.radius = op->radius_min + (int)(uniform(s) * (op->radius_max - op->radius_min + 1));
    double z = log_uniform(s, lo, hi);
    if (op->dims == 1) {
      pr.n = (unsigned)llround(z);
    } else {
      const pm__problem *t = &op->tune_sizes[(int)(uniform(s) * op->ntune_sizes)];
      double aspect = (double)t->rows / t->cols *
                      log_uniform(s, 1.0 / PM__DRAW_ASPECT, PM__DRAW_ASPECT);
      double rows = llround(sqrt(z * aspect)), cols = llround(sqrt(z / aspect));
      if (rows < 1 || cols < 1 || rows > 0x7fffffff || cols > 0x7fffffff) continue;
      pr.rows = (unsigned)rows, pr.cols = (unsigned)cols;
    }
    double size = pm__draw_size(op, &pr);
    if (size < lo || size > hi || pm__draw_is_tuned(op, &pr)) continue;
    int v[PM__MAX_PARAMS];
    op->fallback(op, &pr, v);
    if (op->check(op, v, &pr, &lim) != NULL) continue;
    *out = pr;
    return 0;
  }
  return -1;
}

int pm__draw_random(const pm__op *op, int dtype, uint64_t *s, pm__problem *out) {
  int nvariants = 0;
  while (nvariants < 3 && op->variants[nvariants] != NULL) nvariants++;
  if (dtype < 0 || dtype >= PM__NDTYPES || !(op->dtypes & 1u << dtype) || nvariants == 0)
    return -1;
  double esize = (double)pm_dtype_size((pm_dtype)dtype);
  int matrix = op->dims != 1;
  double lo = ldexp(1, matrix ? PM__DRAW_LOG2_ELEMS_MIN : PM__DRAW_LOG2_N_MIN),
         hi = ldexp(1, matrix ? PM__DRAW_LOG2_ELEMS_MAX : PM__DRAW_LOG2_N_MAX);
  pm__limits lim = pm__limits_default();
  for (int tries = 0; tries < 10000; tries++) {
    pm__problem pr = {.dtype = dtype};
    double z = log_uniform(s, lo, hi);
    if (!matrix) {
      pr.n = (unsigned)llround(z);
    } else {
      double aspect = log_uniform(s, 1.0 / PM__DRAW_WIDE, PM__DRAW_WIDE);
      double rows = (double)llround(sqrt(z * aspect)), least = ceil(z / PM__DRAW_SIDE_MAX);
      rows = rows < least ? least : rows > PM__DRAW_SIDE_MAX ? PM__DRAW_SIDE_MAX : rows;
      double cols = (double)llround(z / rows);
      if (rows < 1 || cols < 1 || cols > PM__DRAW_SIDE_MAX) continue;
      pr.rows = (unsigned)rows, pr.cols = (unsigned)cols;
    }
    pr.variant = (int)(uniform(s) * nvariants);
    if (op->radius_max > 0)
      pr.radius = op->radius_min + (int)(uniform(s) * (op->radius_max - op->radius_min + 1));
    double size = pm__draw_size(op, &pr);
    if (size < lo || size > hi || size * esize >= PM__DRAW_MAX_BYTES) continue;
    int v[PM__MAX_PARAMS];
    op->fallback(op, &pr, v);
    if (op->check(op, v, &pr, &lim) != NULL) continue;
    *out = pr;
    return 0;
  }
  return -1;
}

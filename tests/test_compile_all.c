/* test_compile_all.c: every valid point of every search space compiles with NVRTC for sm_80 and
 * sm_90, with no GPU (for each radius an op takes, and each variant that is a define of its own,
 * the filter's zero border); in the other element types (f16, bf16, f64) for sm_90, a sample to
 * keep CI's time: every 2^k-th kernel, k the least that leaves SAMPLE_MAX (320) at most a type
 * (add's every kernel, matadd's every fourth in f16 and bf16, every second in f64, reduce's every
 * eighth in f16 and bf16, every second in f64, filter's every eighth, at one radius and border a
 * type; test_gpu_ops compiles them all on a GPU). One test an op, made from pmtune.h's PM_OPS. Prints how many and
 * how long. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"

/* Compiles every `every`-th kernel of op's space for pr (NULL: float, no problem) and arch. */
static void compile_sample(const pm__op *op, const pm__problem *pr, const char *arch, size_t every) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  pm__limits lim = pm__limits_default();
  lim.allow_nondeterministic = 1; /* they must compile too */
  pm__variants vs;
  cr_assert_eq(pm__variants_make(c, op, pr, &lim, arch, &vs), PM_OK, "%s", pm_errmsg(c));
  size_t all = vs.n, n = 0;
  for (size_t i = 0; i < all; i += every) { /* the sample first (none is compiled yet) */
    pm__compile_job j = vs.jobs[n];
    vs.jobs[n++] = vs.jobs[i];
    vs.jobs[i] = j;
  }
  vs.n = n;
  double t0 = pm__now_ms();
  int threads = pm__compile_threads();
  cr_assert_eq(pm__compile_many(c, vs.jobs, vs.n, threads), PM_OK, "%s", pm_errmsg(c));
  double ms = pm__now_ms() - t0;
  size_t bytes = 0;
  for (size_t i = 0; i < vs.n; i++) {
    cr_assert_eq(vs.jobs[i].status, PM_OK, "%s for %s failed:\n%s", op->name, arch,
                 vs.jobs[i].error);
    cr_assert_gt(vs.jobs[i].cubin.size, 0);
    bytes += vs.jobs[i].cubin.size;
  }
  printf("compiled %4zu%s %s variants%s%s%s%s%s for %s in %6.1f s on %d threads (%.1f ms each, %.1f MB of cubins)\n",
         vs.n, every > 1 ? " sampled" : "", op->name,
         pr && pr->radius ? (pr->radius == 1 ? " r=1" : pr->radius == 2 ? " r=2" : " r=3") : "",
         pr && pr->variant ? " border " : "", pr && pr->variant ? pm__variant_name(op, pr) : "",
         pr && pr->dtype ? " " : "", pr && pr->dtype ? pm_dtype_name((pm_dtype)pr->dtype) : "",
         arch, ms / 1e3, threads, ms / (double)vs.n * threads, bytes / 1e6);
  fflush(stdout);
  vs.n = all; /* all of them freed */
  pm__variants_free(&vs);
  pm_close(c);
}

static void compile_space(const pm__op *op, const pm__problem *pr, const char *arch) {
  compile_sample(op, pr, arch, 1);
}

TestSuite(compile_all, .timeout = 3600);

/* How many variants the op has ({"order=row", "order=col"}: 2; {""}: 1). */
static int nvariants(const pm__op *op) {
  int n = 0;
  while (n < 3 && op->variants[n] != NULL) n++;
  return n;
}

/* Whether variant v of pr compiles other code than the default variant does: a define of the
 * problem's that differs (the filter's zero border, ZERO=1); matadd's order is the host's. */
static int variant_compiles_apart(const pm__op *op, pm__problem pr, int v) {
  if (op->problem_defines == NULL) return 0;
  char a[PM__MAX_DEFINES][24], b[PM__MAX_DEFINES][24];
  pr.variant = 0;
  int na = op->problem_defines(op, &pr, a);
  pr.variant = v;
  int nb = op->problem_defines(op, &pr, b);
  for (int i = 0; i < na && na == nb; i++)
    if (strcmp(a[i], b[i]) != 0) return 1;
  return na != nb;
}

/* The sample of another type: every `every`-th kernel, every a power of two that leaves at most
 * SAMPLE_MAX of the kernels pr has for sm_90. */
enum { SAMPLE_MAX = 320 };
static size_t sample_every(const pm__op *op, const pm__problem *pr) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  pm__limits lim = pm__limits_default();
  lim.allow_nondeterministic = 1;
  pm__variants vs;
  cr_assert_eq(pm__variants_make(c, op, pr, &lim, "sm_90", &vs), PM_OK, "%s", pm_errmsg(c));
  size_t every = 1;
  while ((vs.n + every - 1) / every > SAMPLE_MAX) every *= 2;
  pm__variants_free(&vs);
  pm_close(c);
  return every;
}

/* Everything of op that compiles: in float, every kernel for sm_80 and sm_90 at each radius it
 * takes; each variant that is a define of its own (its code differs from the default's only in
 * what the define changes, which the radius does not: one radius, one architecture); a sample in
 * each other type it takes, for sm_90, its radius and variant changing from type to type. */
static void compile_op(const pm__op *op) {
  int mid = op->radius_max > 0 ? (op->radius_min + op->radius_max) / 2 : 0;
  if (op->radius_max == 0) {
    compile_space(op, NULL, "sm_80");
    compile_space(op, NULL, "sm_90");
  }
  for (int r = op->radius_min; op->radius_max > 0 && r <= op->radius_max; r++) {
    pm__problem pr = {.rows = 1, .cols = 1, .radius = r};
    compile_space(op, &pr, "sm_80");
    compile_space(op, &pr, "sm_90");
  }
  for (int v = 1; v < nvariants(op); v++) {
    pm__problem pr = {.rows = 1, .cols = 1, .radius = mid, .variant = v};
    if (variant_compiles_apart(op, pr, v)) compile_space(op, &pr, "sm_90");
  }
  for (int t = 0, i = 0; t < PM__NDTYPES; t++) {
    if (t == PM_F32 || !(op->dtypes & 1u << t)) continue;
    pm__problem pr = {.rows = 1, .cols = 1, .n = op->radius_max > 0 ? 0 : 1, .dtype = t};
    if (op->radius_max > 0) pr.radius = op->radius_min + i % (op->radius_max - op->radius_min + 1);
    if (variant_compiles_apart(op, pr, i % nvariants(op))) pr.variant = i % nvariants(op);
    compile_sample(op, &pr, "sm_90", sample_every(op, &pr));
    i++;
  }
}

#define COMPILE_TEST(NAME, value, name) \
  Test(compile_all, name) { compile_op(&pm__op_##name); }
PM_OPS(COMPILE_TEST)
#undef COMPILE_TEST

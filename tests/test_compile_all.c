/* test_compile_all.c: every valid point of every search space compiles with NVRTC for sm_80 and
 * sm_90, with no GPU (the filter's for each supported radius, and its zero border); in the other
 * element types (f16, bf16, f64) for sm_90, a sample to keep CI's time: add's every kernel,
 * matadd's every fourth, reduce's every eighth, filter's every sixteenth at one radius and border
 * a type (test_gpu_ops compiles them all on a GPU). Prints how many and how long. */
#include <criterion/criterion.h>
#include <stdio.h>

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

Test(compile_all, matadd) {
  compile_space(&pm__op_matadd, NULL, "sm_80");
  compile_space(&pm__op_matadd, NULL, "sm_90");
}

Test(compile_all, reduce) {
  compile_space(&pm__op_reduce, NULL, "sm_80");
  compile_space(&pm__op_reduce, NULL, "sm_90");
}

Test(compile_all, add) {
  compile_space(&pm__op_add, NULL, "sm_80");
  compile_space(&pm__op_add, NULL, "sm_90");
}

Test(compile_all, filter) {
  for (int r = 1; r <= PM__MAX_RADIUS; r++) {
    pm__problem pr = {.rows = 1, .cols = 1, .radius = r};
    compile_space(&pm__op_filter, &pr, "sm_80");
    compile_space(&pm__op_filter, &pr, "sm_90");
  }
}

/* The zero border is a define of its own (ZERO=1); its code differs from the clamp's only in
 * the loads, which the radius does not change: one radius, one architecture. */
Test(compile_all, filter_zero_border) {
  pm__problem pr = {.rows = 1, .cols = 1, .radius = 2,
                    .variant = pm__variant_find(&pm__op_filter, "border", "zero")};
  compile_space(&pm__op_filter, &pr, "sm_90");
}

/* The other element types: sm_90; all of add's kernels, a sample of the others'. */
Test(compile_all, each_op_in_each_type) {
  const int types[] = {PM_F16, PM_BF16, PM_F64};
  for (int i = 0; i < 3; i++) {
    pm__problem pr = {.rows = 1, .cols = 1, .n = 1, .dtype = types[i]};
    compile_sample(&pm__op_add, &pr, "sm_90", 1);
    compile_sample(&pm__op_matadd, &pr, "sm_90", 4);
    compile_sample(&pm__op_reduce, &pr, "sm_90", 8);
    pm__problem img = {.rows = 1, .cols = 1, .radius = 1 + i, .variant = i & 1, .dtype = types[i]};
    compile_sample(&pm__op_filter, &img, "sm_90", 16);
  }
}

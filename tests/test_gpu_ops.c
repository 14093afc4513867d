/* test_gpu_ops.c: every valid point of every search space gives the right answer on a GPU, against
 * a CPU reference on fresh random data, with the output poisoned (NaN) before each run, at awkward
 * sizes: floats in the suite gpu_ops, the other element types in gpu_types (registered as two
 * CTest tests, so that they run side by side). matadd, add and filter must match the reference
 * bit for bit (every variant adds in the reference's order); reduce must stay within its error
 * bound (op_reduce.c) and give the same bits run to run. Skips without a GPU. */
#include <stdio.h>
#include <unistd.h>

#include "compile.h"
#include "testutil.h"

static pm_ctx *ctx;

static void setup(void) {
  pm_test_require_gpu();
  cr_assert_eq(pm_open(&ctx, NULL), PM_OK, "%s", pm_errmsg(ctx));
}
static void teardown(void) { pm_close(ctx); }

TestSuite(gpu_ops, .init = setup, .fini = teardown, .timeout = 1800);
TestSuite(gpu_types, .init = setup, .fini = teardown, .timeout = 1800);

typedef struct tally {
  unsigned long long runs, failures;
} tally;

/* Compiles and loads every kernel of op valid for the stand-in problem `defs_pr`. */
static pm__module *load_all(const pm__op *op, const pm__problem *defs_pr, const pm__limits *lim,
                            pm__variants *vs) {
  cr_assert_eq(pm__variants_make(ctx, op, defs_pr, lim, ctx->dev.arch, vs), PM_OK, "%s",
               pm_errmsg(ctx));
  double t0 = pm__now_ms();
  cr_assert_eq(pm__compile_many(ctx, vs->jobs, vs->n, 0), PM_OK);
  pm__module *ks = calloc(vs->n, sizeof *ks);
  cr_assert_not_null(ks);
  for (size_t i = 0; i < vs->n; i++) {
    cr_assert_eq(vs->jobs[i].status, PM_OK, "%s", vs->jobs[i].error);
    cr_assert_eq(pm__module_load(ctx, &vs->jobs[i].cubin, op->entries, op->nentries, &ks[i]),
                 PM_OK, "%s", pm_errmsg(ctx));
  }
  printf("%s: compiled and loaded %zu kernels for %s in %.1f s\n", op->name, vs->n, ctx->dev.arch,
         (pm__now_ms() - t0) / 1e3);
  return ks;
}

/* Runs every point valid for pr under lim (but not under `already`, where given), in every
 * layout, and checks each result; with `determinism`, also that a second run gives the same bits.
 * sum_in_type (reduce): the sum written in the input's type rather than as the tuner checks it. */
static void run_problem(const pm__op *op, const pm__problem *pr, const pm__limits *lim,
                        const pm__limits *already, const pm__variants *vs, const pm__module *ks,
                        int determinism, int sum_in_type, tally *t) {
  uint64_t seed = pm_test_seed();
  char ptext[96];
  pm__problem_text(op, pr, ptext, sizeof ptext);
  pm__data d = {0};
  cr_assert_eq(op->prepare(op, ctx, pr, seed, &d), PM_OK, "%s: %s", ptext, pm_errmsg(ctx));
  if (sum_in_type) d.reduce.sum_as_float = 0;
  const pm__param *align = NULL;
  for (int i = 0; i < op->nparams; i++)
    if (op->params[i].define == NULL && strcmp(op->params[i].name, "align") == 0)
      align = &op->params[i];
  int nlayouts = align ? align->nvalues : 1;
  uint64_t total = pm__space_size(op);
  for (int l = 0; l < nlayouts; l++) {
    size_t layout = align ? (size_t)align->values[l] : 0;
    cr_assert_eq(pm__data_place(ctx, &d, layout), PM_OK, "%s", pm_errmsg(ctx));
    for (uint64_t i = 0; i < total; i++) {
      int v[PM__MAX_PARAMS];
      pm__space_point(op, i, v);
      if (op->layout(op, v) != layout || op->check(op, v, pr, lim) != NULL) continue;
      if (already != NULL && op->check(op, v, pr, already) == NULL) continue;
      const pm__module *k = &ks[vs->job_of[pm__kernel_index(op, v)]];
      char text[PM__CONFIG_TEXT];
      pm__config_text(op, v, text, sizeof text);
      cr_assert_eq(pm__data_poison(ctx, &d, 0), PM_OK);
      cr_assert_eq(op->launch(op, ctx, k, v, &d, 0), PM_OK, "%s %s: %s", ptext, text,
                   pm_errmsg(ctx));
      CUDA_OK(cudaDeviceSynchronize());
      double err = 0;
      t->runs++;
      if (op->verify(op, ctx, v, &d, &err) != PM_OK) {
        if (t->failures++ < 10)
          cr_log_error("%s %s (seed %#llx): %s", ptext, text, (unsigned long long)seed,
                       pm_errmsg(ctx));
        continue;
      }
      if (determinism) { /* a scalar output: the widest sum's 8 bytes */
        unsigned long long first, again;
        CUDA_OK(cudaMemcpy(&first, d.out, sizeof first, cudaMemcpyDeviceToHost));
        cr_assert_eq(pm__data_poison(ctx, &d, 0), PM_OK);
        cr_assert_eq(op->launch(op, ctx, k, v, &d, 0), PM_OK, "%s", pm_errmsg(ctx));
        CUDA_OK(cudaMemcpy(&again, d.out, sizeof again, cudaMemcpyDeviceToHost));
        if (first != again && t->failures++ < 10)
          cr_log_error("%s %s: not deterministic: %#llx then %#llx", ptext, text, first, again);
      }
    }
  }
  pm__data_free(&d);
}

static void unload_all(pm__variants *vs, pm__module *ks) {
  for (size_t i = 0; i < vs->n; i++) pm__module_unload(&ks[i]);
  free(ks);
  pm__variants_free(vs);
}

/* The points of op valid for floats under lim (vec = 8 would be a 32-byte access of floats). */
static uint64_t valid_points(const pm__op *op, const pm__limits *lim) {
  uint64_t valid = 0;
  for (uint64_t i = 0; i < pm__space_size(op); i++) {
    int v[PM__MAX_PARAMS];
    pm__space_point(op, i, v);
    valid += op->check(op, v, NULL, lim) == NULL;
  }
  return valid;
}

Test(gpu_ops, matadd_every_variant_both_orders) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  pm__variants vs;
  pm__module *ks = load_all(&pm__op_matadd, NULL, &lim, &vs);
  const unsigned sizes[][2] = {{1, 1}, {1, 100003}, {100003, 1}, {4097, 3001}, {37, 1000}, {64, 64}};
  tally t = {0};
  double t0 = pm__now_ms();
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int order = 0; order < 2; order++) {
      pm__problem pr = {.rows = sizes[s][0], .cols = sizes[s][1], .variant = order};
      run_problem(&pm__op_matadd, &pr, &lim, NULL, &vs, ks, 0, 0, &t);
    }
  printf("matadd: %llu runs in %.1f s, %llu wrong\n", t.runs, (pm__now_ms() - t0) / 1e3, t.failures);
  unload_all(&vs, ks);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_gt(t.runs, 40000);
}

Test(gpu_ops, reduce_every_variant_within_its_bound_and_deterministic) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  pm__variants vs;
  lim.allow_nondeterministic = 1; /* compile and check them all; determinism only where promised */
  pm__module *ks = load_all(&pm__op_reduce, NULL, &lim, &vs);
  const unsigned sizes[] = {1, 2, 3, 5, 1000, 100003, (1u << 20) + 1, (1u << 28) + 3};
  tally t = {0};
  double t0 = pm__now_ms();
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    pm__problem pr = {.n = sizes[s]};
    pm__limits det = lim;
    det.allow_nondeterministic = 0;
    run_problem(&pm__op_reduce, &pr, &det, NULL, &vs, ks, 1, 0, &t);
    /* then the atomic-combine variants: within the bound, but not promised to repeat */
    run_problem(&pm__op_reduce, &pr, &lim, &det, &vs, ks, 0, 0, &t);
  }
  printf("reduce: %llu runs in %.1f s, %llu wrong\n", t.runs, (pm__now_ms() - t0) / 1e3, t.failures);
  unload_all(&vs, ks);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_gt(t.runs, 30000);
}

Test(gpu_ops, filter_every_variant_every_radius_both_borders) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  const unsigned sizes[][2] = {{1, 1}, {2, 3}, {5, 5}, {1, 100003}, {100003, 1}, {64, 64}, {4097, 3001}};
  tally t = {0};
  double t0 = pm__now_ms();
  for (int r = 1; r <= PM__MAX_RADIUS; r++)
    for (int zero = 0; zero < 2; zero++) { /* the radius and the border are compiled in */
      pm__problem defs = {.rows = 1, .cols = 1, .radius = r, .variant = zero};
      pm__variants vs;
      pm__module *ks = load_all(&pm__op_filter, &defs, &lim, &vs);
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        pm__problem pr = {.rows = sizes[s][0], .cols = sizes[s][1], .radius = r, .variant = zero};
        run_problem(&pm__op_filter, &pr, &lim, NULL, &vs, ks, 0, 0, &t);
      }
      unload_all(&vs, ks);
    }
  printf("filter: %llu runs in %.1f s, %llu wrong\n", t.runs, (pm__now_ms() - t0) / 1e3, t.failures);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_gt(t.runs, 100000);
}

Test(gpu_ops, add_every_variant_odd_sizes) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  pm__variants vs;
  pm__module *ks = load_all(&pm__op_add, NULL, &lim, &vs);
  const unsigned sizes[] = {1, 2, 3, 4, 5, 7, 64, 4097, 100003, (1u << 20) + 3, (1u << 26) + 1};
  tally t = {0};
  double t0 = pm__now_ms();
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    pm__problem pr = {.n = sizes[s]};
    run_problem(&pm__op_add, &pr, &lim, NULL, &vs, ks, 0, 0, &t);
  }
  printf("add: %llu runs in %.1f s, %llu wrong\n", t.runs, (pm__now_ms() - t0) / 1e3, t.failures);
  unload_all(&vs, ks);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_eq(t.runs, valid_points(&pm__op_add, &lim) * (sizeof sizes / sizeof *sizes),
               "every point at every size");
}

/* ---- The other element types (f16, bf16, f64): every variant; matadd and add bit for bit
 * against the sum rounded once to the type (tuner/data.c, pm__add_reference), filter against
 * the window's sum in float (double) rounded once, reduce within its bound ------------------ */

static void matadd_typed(int dtype) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  pm__variants vs;
  pm__problem defs = {.rows = 1, .cols = 1, .dtype = dtype};
  pm__module *ks = load_all(&pm__op_matadd, &defs, &lim, &vs);
  const unsigned sizes[][2] = {{1, 1}, {1, 100003}, {4097, 3001}, {37, 1001}};
  tally t = {0};
  double t0 = pm__now_ms();
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int order = 0; order < 2; order++) {
      pm__problem pr = {.rows = sizes[s][0], .cols = sizes[s][1], .variant = order, .dtype = dtype};
      run_problem(&pm__op_matadd, &pr, &lim, NULL, &vs, ks, 0, 0, &t);
    }
  printf("matadd %s: %llu runs in %.1f s, %llu wrong\n", pm_dtype_name((pm_dtype)dtype), t.runs,
         (pm__now_ms() - t0) / 1e3, t.failures);
  unload_all(&vs, ks);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_gt(t.runs, dtype == PM_F64 ? 15000 : 30000);
}

Test(gpu_types, matadd_f16_every_variant) { matadd_typed(PM_F16); }
Test(gpu_types, matadd_bf16_every_variant) { matadd_typed(PM_BF16); }
Test(gpu_types, matadd_f64_every_variant) { matadd_typed(PM_F64); }

static void add_typed(int dtype) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  pm__variants vs;
  pm__problem defs = {.n = 1, .dtype = dtype};
  pm__module *ks = load_all(&pm__op_add, &defs, &lim, &vs);
  const unsigned sizes[] = {1, 2, 3, 7, 8, 9, 15, 4097, 100003, (1u << 20) + 5};
  tally t = {0};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    pm__problem pr = {.n = sizes[s], .dtype = dtype};
    run_problem(&pm__op_add, &pr, &lim, NULL, &vs, ks, 0, 0, &t);
  }
  printf("add %s: %llu runs, %llu wrong\n", pm_dtype_name((pm_dtype)dtype), t.runs, t.failures);
  size_t points = vs.n; /* add: one kernel a valid point */
  unload_all(&vs, ks);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_eq(t.runs, points * (sizeof sizes / sizeof *sizes), "every point at every size");
}

Test(gpu_types, add_f16_every_variant) { add_typed(PM_F16); }
Test(gpu_types, add_bf16_every_variant) { add_typed(PM_BF16); }
Test(gpu_types, add_f64_every_variant) { add_typed(PM_F64); }

/* Every variant of reduce in dtype: the sum as the tuner checks it (a float for 16-bit inputs,
 * a double for doubles) and in the input's type, each within its bound, each deterministic. */
static void reduce_typed(int dtype) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  pm__variants vs;
  pm__problem defs = {.n = 1, .dtype = dtype};
  lim.allow_nondeterministic = 1;
  pm__module *ks = load_all(&pm__op_reduce, &defs, &lim, &vs);
  pm__limits det = lim;
  det.allow_nondeterministic = 0;
  const unsigned sizes[] = {1, 3, 9, 1000, 100003, (1u << 20) + 1, (1u << 26) + 7};
  tally t = {0};
  double t0 = pm__now_ms();
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int in_type = 0; in_type < 2; in_type++) {
      pm__problem pr = {.n = sizes[s], .dtype = dtype};
      run_problem(&pm__op_reduce, &pr, &det, NULL, &vs, ks, 1, in_type, &t);
      run_problem(&pm__op_reduce, &pr, &lim, &det, &vs, ks, 0, in_type, &t);
    }
  printf("reduce %s: %llu runs in %.1f s, %llu wrong\n", pm_dtype_name((pm_dtype)dtype), t.runs,
         (pm__now_ms() - t0) / 1e3, t.failures);
  unload_all(&vs, ks);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_gt(t.runs, dtype == PM_F64 ? 10000 : 50000);
}

Test(gpu_types, reduce_f16_every_variant) { reduce_typed(PM_F16); }
Test(gpu_types, reduce_bf16_every_variant) { reduce_typed(PM_BF16); }
Test(gpu_types, reduce_f64_every_variant) { reduce_typed(PM_F64); }

/* Every variant of filter in dtype at each radius, with one border a radius (clamp and zero in
 * turn, starting from the type's own parity: over the three types each radius meets both). */
static void filter_typed(int dtype) {
  pm__limits lim = pm__limits_of(&ctx->dev);
  const unsigned sizes[][2] = {{1, 1}, {2, 3}, {5, 5}, {1, 1003}, {1003, 1}, {64, 64}, {1001, 777}};
  tally t = {0};
  double t0 = pm__now_ms();
  for (int r = 1; r <= PM__MAX_RADIUS; r++) {
    int zero = (r + dtype) & 1;
    pm__problem defs = {.rows = 1, .cols = 1, .radius = r, .variant = zero, .dtype = dtype};
    pm__variants vs;
    pm__module *ks = load_all(&pm__op_filter, &defs, &lim, &vs);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      pm__problem pr = {.rows = sizes[s][0], .cols = sizes[s][1], .radius = r, .variant = zero,
                        .dtype = dtype};
      run_problem(&pm__op_filter, &pr, &lim, NULL, &vs, ks, 0, 0, &t);
    }
    unload_all(&vs, ks);
  }
  printf("filter %s: %llu runs in %.1f s, %llu wrong\n", pm_dtype_name((pm_dtype)dtype), t.runs,
         (pm__now_ms() - t0) / 1e3, t.failures);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_gt(t.runs, 50000);
}

Test(gpu_types, filter_f16_every_variant) { filter_typed(PM_F16); }
Test(gpu_types, filter_bf16_every_variant) { filter_typed(PM_BF16); }
Test(gpu_types, filter_f64_every_variant) { filter_typed(PM_F64); }

/* n = 2^31 - 1, the largest add: every variant's indices and grid hold (no index wraps, no grid
 * is too large). Needs 34 GiB of device memory and 24 GiB of host memory for the data. */
Test(gpu_ops, add_every_variant_at_the_largest_n) {
  size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < (size_t)34 << 30)
    cr_skip_test("needs 34 GiB of device memory, %.1f GiB free", (double)free_b / (1 << 30));
  if ((double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) < 48.0 * (1 << 30))
    cr_skip_test("needs 48 GiB of host memory");
  pm__limits lim = pm__limits_of(&ctx->dev);
  pm__variants vs;
  pm__module *ks = load_all(&pm__op_add, NULL, &lim, &vs);
  tally t = {0};
  double t0 = pm__now_ms();
  pm__problem pr = {.n = 0x7fffffff};
  run_problem(&pm__op_add, &pr, &lim, NULL, &vs, ks, 0, 0, &t);
  printf("add n=2^31-1: %llu runs in %.1f s, %llu wrong\n", t.runs, (pm__now_ms() - t0) / 1e3,
         t.failures);
  unload_all(&vs, ks);
  cr_assert_eq(t.failures, 0, "%llu of %llu runs gave a wrong result", t.failures, t.runs);
  cr_assert_eq(t.runs, valid_points(&pm__op_add, &lim), "every point");
}

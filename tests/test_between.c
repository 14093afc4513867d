/* test_between.c: the random problems of the serving studies (bench/serve/draw.c). "Between
 * tuned sizes": between each op's default tune sizes, never one of them, valid, of every variant
 * and radius, matrices of more than one aspect, the same for the same seed. "Random sizes": in
 * every type an op takes, within the whole range, valid, of every variant and radius, wide and
 * tall, the same for the same seed. No GPU. */
#include <math.h>
#include <stdio.h>

#include "draw.h"
#include "testutil.h"

#define DRAWS 2000

Test(between, is_tuned_knows_every_tune_size_and_nothing_else) {
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    for (int k = 0; k < op->ntune_sizes; k++) {
      pm__problem t = op->tune_sizes[k];
      cr_assert(pm__draw_is_tuned(op, &t), "%s tune size %d", op->name, k);
      if (op->dims == 1) t.n += 1;
      else t.cols += 1;
      cr_assert(!pm__draw_is_tuned(op, &t), "%s tune size %d, one more", op->name, k);
    }
  }
}

Test(between, draws_lie_between_the_tune_sizes_and_are_none_of_them) {
  uint64_t seed = pm_test_seed() | 1;
  cr_log_info("PMTUNE_TEST_SEED=%llu", (unsigned long long)seed);
  pm__limits lim = pm__limits_default();
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    double lo = INFINITY, hi = 0;
    for (int k = 0; k < op->ntune_sizes; k++) {
      double z = pm__draw_size(op, &op->tune_sizes[k]);
      lo = fmin(lo, z), hi = fmax(hi, z);
    }
    int nvariants = 0, variants[3] = {0}, radii[PM__MAX_RADIUS + 1] = {0}, not_square = 0;
    int low_half = 0, wide = 0, tall = 0;
    while (nvariants < 3 && op->variants[nvariants] != NULL) nvariants++;
    uint64_t s = seed + (uint64_t)i;
    for (int d = 0; d < DRAWS; d++) {
      pm__problem pr;
      cr_assert_eq(pm__draw_between(op, &s, &pr), 0, "%s draw %d", op->name, d);
      double z = pm__draw_size(op, &pr);
      cr_assert(z >= lo && z <= hi, "%s: size %.0f outside [%.0f, %.0f]", op->name, z, lo, hi);
      cr_assert(!pm__draw_is_tuned(op, &pr), "%s: drew a tune size", op->name);
      for (int k = 0; k < op->ntune_sizes; k++)
        cr_assert(op->dims == 1 ? pr.n != op->tune_sizes[k].n
                                : pr.rows != op->tune_sizes[k].rows || pr.cols != op->tune_sizes[k].cols,
                  "%s: drew tune size %d", op->name, k);
      cr_assert(pr.variant >= 0 && pr.variant < nvariants, "%s: variant %d", op->name, pr.variant);
      variants[pr.variant]++;
      cr_assert(pr.radius >= op->radius_min && pr.radius <= op->radius_max, "%s: radius %d",
                op->name, pr.radius);
      radii[pr.radius]++;
      cr_assert_eq(pr.caller_align, 0u);
      int v[PM__MAX_PARAMS];
      op->fallback(op, &pr, v);
      const char *why = op->check(op, v, &pr, &lim);
      cr_assert_null(why, "%s: the default does not run the draw: %s", op->name, why);
      low_half += log(z) < 0.5 * (log(lo) + log(hi));
      if (op->dims == 2) {
        not_square += pr.rows != pr.cols;
        wide += pr.cols > 1.2 * pr.rows;
        tall += pr.rows > 1.2 * pr.cols;
      }
    }
    for (int k = 0; k < nvariants; k++)
      cr_assert_gt(variants[k], DRAWS / nvariants / 2, "%s: variant %d drawn %d times", op->name, k,
                   variants[k]);
    for (int r = op->radius_min; r <= op->radius_max; r++)
      cr_assert_gt(radii[r], 0, "%s: radius %d never drawn", op->name, r);
    /* log-uniform: about half fall in the lower half of the log range */
    cr_assert(low_half > DRAWS * 4 / 10 && low_half < DRAWS * 6 / 10, "%s: %d of %d in the lower half",
              op->name, low_half, DRAWS);
    if (op->dims == 2) {
      cr_assert_gt(not_square, DRAWS * 9 / 10, "%s: %d of %d are not square", op->name, not_square, DRAWS);
      cr_assert(wide > 0 && tall > 0, "%s: %d wide, %d tall", op->name, wide, tall);
    }
  }
}

Test(between, the_same_seed_draws_the_same_problems) {
  for (int i = 0; pm__ops[i] != NULL; i++) {
    uint64_t a = 12345, b = 12345, c = 54321;
    int differ = 0;
    for (int d = 0; d < 50; d++) {
      pm__problem x, y, z;
      cr_assert_eq(pm__draw_between(pm__ops[i], &a, &x), 0);
      cr_assert_eq(pm__draw_between(pm__ops[i], &b, &y), 0);
      cr_assert_eq(pm__draw_between(pm__ops[i], &c, &z), 0);
      cr_assert_eq(memcmp(&x, &y, sizeof x), 0, "%s draw %d", pm__ops[i]->name, d);
      differ += memcmp(&x, &z, sizeof x) != 0;
    }
    cr_assert_gt(differ, 40, "%s: another seed draws other problems", pm__ops[i]->name);
  }
}

/* An op whose tune sizes leave no room between them: no draw, and the call says so. */
Test(between, an_op_with_one_tune_size_cannot_be_drawn) {
  pm__op one = pm__op_reduce;
  static const pm__problem sizes[] = {{.n = 4096}};
  one.tune_sizes = sizes;
  one.ntune_sizes = 1;
  uint64_t s = 7;
  pm__problem pr;
  cr_assert_eq(pm__draw_between(&one, &s, &pr), -1);
}

/* ---- pm__draw_random: the "random sizes" study ------------------------------------------- */

Test(random, draws_lie_within_the_ranges_in_the_type_asked) {
  uint64_t seed = pm_test_seed() | 1;
  cr_log_info("PMTUNE_TEST_SEED=%llu", (unsigned long long)seed);
  pm__limits lim = pm__limits_default();
  for (int i = 0; pm__ops[i] != NULL; i++) {
    const pm__op *op = pm__ops[i];
    int matrix = op->dims != 1;
    double lo = ldexp(1, matrix ? PM__DRAW_LOG2_ELEMS_MIN : PM__DRAW_LOG2_N_MIN),
           hi = ldexp(1, matrix ? PM__DRAW_LOG2_ELEMS_MAX : PM__DRAW_LOG2_N_MAX);
    int nvariants = 0;
    while (nvariants < 3 && op->variants[nvariants] != NULL) nvariants++;
    for (int t = 0; t < PM__NDTYPES; t++) {
      if (!(op->dtypes & 1u << t)) continue;
      const char *tn = pm_dtype_name((pm_dtype)t);
      int variants[3] = {0}, radii[PM__MAX_RADIUS + 1] = {0}, low_half = 0, wide = 0, tall = 0;
      uint64_t s = seed + 16 * (uint64_t)i + (uint64_t)t;
      for (int d = 0; d < DRAWS; d++) {
        pm__problem pr;
        cr_assert_eq(pm__draw_random(op, t, &s, &pr), 0, "%s %s draw %d", op->name, tn, d);
        cr_assert_eq(pr.dtype, t, "%s %s: dtype %d", op->name, tn, pr.dtype);
        cr_assert_eq(pr.caller_align, 0u);
        double z = pm__draw_size(op, &pr);
        cr_assert(z >= lo && z <= hi, "%s %s: size %.0f outside [%.0f, %.0f]", op->name, tn, z,
                  lo, hi);
        cr_assert_lt(z * (double)pm_dtype_size((pm_dtype)t), PM__DRAW_MAX_BYTES,
                     "%s %s: a buffer of 2 GiB or more", op->name, tn);
        if (matrix) {
          cr_assert(pr.rows >= 1 && pr.rows <= PM__DRAW_SIDE_MAX && pr.cols >= 1 &&
                        pr.cols <= PM__DRAW_SIDE_MAX,
                    "%s %s: %ux%u", op->name, tn, pr.rows, pr.cols);
          double aspect = (double)pr.rows / pr.cols;
          /* rounding each side moves the aspect by up to half an element in each; clamping a
           * side moves it only inward */
          double slack = pow(1 + 1.0 / fmin(pr.rows, pr.cols), 2);
          cr_assert(aspect >= 1 / (slack * PM__DRAW_WIDE) && aspect <= slack * PM__DRAW_WIDE,
                    "%s %s: %ux%u, aspect %g", op->name, tn, pr.rows, pr.cols, aspect);
          wide += aspect < 1.0 / 16, tall += aspect > 16;
        } else {
          cr_assert_eq(pr.rows, 0u);
          cr_assert_eq(pr.cols, 0u);
        }
        cr_assert(pr.variant >= 0 && pr.variant < nvariants, "%s %s: variant %d", op->name, tn,
                  pr.variant);
        variants[pr.variant]++;
        cr_assert(pr.radius >= op->radius_min && pr.radius <= op->radius_max,
                  "%s %s: radius %d", op->name, tn, pr.radius);
        radii[pr.radius]++;
        int v[PM__MAX_PARAMS];
        op->fallback(op, &pr, v);
        const char *why = op->check(op, v, &pr, &lim);
        cr_assert_null(why, "%s %s: the default does not run the draw: %s", op->name, tn, why);
        low_half += log(z) < 0.5 * (log(lo) + log(hi));
      }
      for (int k = 0; k < nvariants; k++)
        cr_assert_gt(variants[k], DRAWS / nvariants / 2, "%s %s: variant %d drawn %d times",
                     op->name, tn, k, variants[k]);
      for (int r = op->radius_min; r <= op->radius_max; r++)
        cr_assert_gt(radii[r], DRAWS / (op->radius_max - op->radius_min + 1) / 2,
                     "%s %s: radius %d drawn %d times", op->name, tn, r, radii[r]);
      /* log-uniform: about half fall in the lower half of the log range */
      cr_assert(low_half > DRAWS * 4 / 10 && low_half < DRAWS * 6 / 10,
                "%s %s: %d of %d in the lower half", op->name, tn, low_half, DRAWS);
      /* aspect log-uniform in [1/64, 64]: about a sixth beyond 16 each way */
      if (matrix)
        cr_assert(wide > DRAWS / 12 && tall > DRAWS / 12, "%s %s: %d wider than 16:1, %d taller",
                  op->name, tn, wide, tall);
    }
  }
}

Test(random, the_same_seed_draws_the_same_problems) {
  for (int i = 0; pm__ops[i] != NULL; i++)
    for (int t = 0; t < PM__NDTYPES; t++) {
      if (!(pm__ops[i]->dtypes & 1u << t)) continue;
      uint64_t a = 12345, b = 12345, c = 54321;
      int differ = 0;
      for (int d = 0; d < 50; d++) {
        pm__problem x, y, z;
        cr_assert_eq(pm__draw_random(pm__ops[i], t, &a, &x), 0);
        cr_assert_eq(pm__draw_random(pm__ops[i], t, &b, &y), 0);
        cr_assert_eq(pm__draw_random(pm__ops[i], t, &c, &z), 0);
        cr_assert_eq(memcmp(&x, &y, sizeof x), 0, "%s %d draw %d", pm__ops[i]->name, t, d);
        differ += memcmp(&x, &z, sizeof x) != 0;
      }
      cr_assert_gt(differ, 40, "%s %d: another seed draws other problems", pm__ops[i]->name, t);
      cr_assert_neq(a, 12345u, "the state moves on");
    }
}

/* Types are drawn apart: the same state draws the same sizes in f32 and bf16 (the type alone
 * differs), except where a buffer would pass 2 GiB. */
Test(random, the_type_changes_only_the_type) {
  for (int i = 0; pm__ops[i] != NULL; i++) {
    uint64_t a = 777, b = 777;
    for (int d = 0; d < 50; d++) {
      pm__problem x, y;
      cr_assert_eq(pm__draw_random(pm__ops[i], PM_F32, &a, &x), 0);
      cr_assert_eq(pm__draw_random(pm__ops[i], PM_BF16, &b, &y), 0);
      cr_assert_eq(x.dtype, PM_F32);
      cr_assert_eq(y.dtype, PM_BF16);
      y.dtype = PM_F32;
      cr_assert_eq(memcmp(&x, &y, sizeof x), 0, "%s draw %d", pm__ops[i]->name, d);
    }
  }
}

/* f64: n of 2^28 is a buffer of 2 GiB exactly, never drawn; the draws stay under it. */
Test(random, doubles_stay_under_two_gigabytes) {
  uint64_t s = 99;
  double most = 0;
  for (int d = 0; d < 20000; d++) {
    pm__problem pr;
    cr_assert_eq(pm__draw_random(&pm__op_add, PM_F64, &s, &pr), 0);
    cr_assert_lt(pr.n * 8.0, PM__DRAW_MAX_BYTES);
    most = fmax(most, pr.n);
  }
  cr_assert_gt(most, ldexp(1, 27), "the top of the range is reached: %.0f", most);
}

/* A type the op does not take, or none at all: no draw. */
Test(random, a_type_the_op_does_not_take_cannot_be_drawn) {
  pm__op f32_only = pm__op_matadd;
  f32_only.dtypes = 1u << PM_F32;
  uint64_t s = 7;
  pm__problem pr;
  cr_assert_eq(pm__draw_random(&f32_only, PM_BF16, &s, &pr), -1);
  cr_assert_eq(pm__draw_random(&f32_only, PM_F32, &s, &pr), 0);
  cr_assert_eq(pm__draw_random(&pm__op_add, -1, &s, &pr), -1);
  cr_assert_eq(pm__draw_random(&pm__op_add, PM__NDTYPES, &s, &pr), -1);
}

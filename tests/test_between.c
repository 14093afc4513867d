/* test_between.c: the random problems of the "between tuned sizes" study (bench/serve/draw.c):
 * between each op's default tune sizes, never one of them, valid, of every variant and radius,
 * matrices of more than one aspect, the same for the same seed. No GPU. */
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

/* test_dtype.c: the element types (pm_dtype): names, sizes, and the host's conversions between
 * float and f16/bf16, against the definition of rounding to nearest, ties to even. No GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core.h"

Test(dtype, names_and_sizes) {
  /* the values databases and programs hold: they never change */
  const char *names[] = {"f32", "f16", "bf16", "f64"};
  const size_t sizes[] = {4, 2, 2, 8};
  cr_assert(PM_F32 == 0 && PM_F16 == 1 && PM_BF16 == 2 && PM_F64 == 3);
  cr_assert_eq(pm_dtype_count(), PM__NDTYPES);
  cr_assert_geq(PM__NDTYPES, 4);
  for (int t = 0; t < 4; t++) {
    cr_assert_str_eq(pm_dtype_name((pm_dtype)t), names[t]);
    cr_assert_eq(pm_dtype_size((pm_dtype)t), sizes[t]);
  }
  char bars[64] = "";
  for (int t = 0; t < PM__NDTYPES; t++) {
    cr_assert_not_null(pm_dtype_name((pm_dtype)t));
    cr_assert_gt(pm_dtype_size((pm_dtype)t), 0);
    cr_assert_eq(pm__dtype_find(pm_dtype_name((pm_dtype)t)), t);
    strcat(bars, t ? "|" : "");
    strcat(bars, pm_dtype_name((pm_dtype)t));
  }
  cr_assert_str_eq(PM__DTYPE_NAMES, bars);
  cr_assert_eq(PM__DTYPES_ALL, (1u << pm_dtype_count()) - 1);
  cr_assert_null(pm_dtype_name((pm_dtype)PM__NDTYPES));
  cr_assert_null(pm_dtype_name((pm_dtype)-1));
  cr_assert_eq(pm_dtype_size((pm_dtype)7), 0);
  cr_assert_eq(pm__dtype_find("F32"), -1);
  cr_assert_eq(pm__dtype_find("f8"), -1);
  cr_assert_eq(pm__dtype_find(""), -1);
  cr_assert_eq(pm__dtype_find(NULL), -1);
}

/* Every 16-bit pattern goes to float and back to itself (NaNs stay NaN). */
Test(dtype, every_f16_and_bf16_goes_to_float_and_back) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = pm__f16_to_f32((unsigned short)h), b = pm__bf16_to_f32((unsigned short)h);
    if (isnan(f))
      cr_assert(isnan(pm__f16_to_f32(pm__f32_to_f16(f))), "f16 %04x", h);
    else
      cr_assert_eq(pm__f32_to_f16(f), h, "f16 %04x -> %a -> %04x", h, f, pm__f32_to_f16(f));
    if (isnan(b))
      cr_assert(isnan(pm__bf16_to_f32(pm__f32_to_bf16(b))), "bf16 %04x", h);
    else
      cr_assert_eq(pm__f32_to_bf16(b), h, "bf16 %04x", h);
  }
  cr_assert_eq(pm__f16_to_f32(0x3c00), 1.0f);
  cr_assert_eq(pm__f16_to_f32(0x0001), ldexpf(1, -24)); /* the least subnormal */
  cr_assert_eq(pm__f16_to_f32(0x7bff), 65504.0f);
  cr_assert_eq(pm__bf16_to_f32(0x3f80), 1.0f);
}

/* x rounds to the nearer of the two 16-bit values around it, the even one at a tie; checked by
 * the definition (in double) for floats of every exponent the types can hold and past them. */
static void check_rounding(float x, unsigned short (*to)(float), float (*from)(unsigned short),
                           const char *type) {
  unsigned short h = to(x);
  double got = from(h);
  if (isinf(got)) { /* only where x is at least the largest finite value plus half its ulp */
    double max = type[1] == '1' ? 65504.0 : (double)from(0x7f7f), ulp = type[1] == '1' ? 32 : ldexp(1, 120);
    cr_assert_geq(fabs((double)x), max + ulp / 2, "%s: %a went to inf", type, x);
    return;
  }
  /* the neighbours one unit either side (in the magnitude's direction both ways) */
  unsigned short up = (unsigned short)(h + 1), down = (unsigned short)(h - 1);
  double err = fabs(got - x);
  double eu = isinf(from(up)) || isnan(from(up)) ? INFINITY : fabs((double)from(up) - x);
  double ed = (h & 0x7fff) == 0 ? INFINITY : fabs((double)from(down) - x);
  cr_assert(err <= eu && err <= ed, "%s: %a -> %a, a neighbour is nearer", type, x, got);
  if (err == eu || err == ed) cr_assert_eq(h & 1, 0, "%s: %a is a tie, %04x is odd", type, x, h);
}

Test(dtype, floats_round_to_the_nearest_even) {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 2000000; i++) {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    uint32_t u = (uint32_t)((s * 0x2545F4914F6CDD1Dull) >> 32);
    /* exponents from 2^-30 to 2^20 for f16, every exponent for bf16 */
    uint32_t f16_bits = (u & 0x807fffff) | ((97 + (u >> 23) % 51) << 23);
    float x, y;
    memcpy(&x, &f16_bits, 4);
    memcpy(&y, &u, 4);
    check_rounding(x, pm__f32_to_f16, pm__f16_to_f32, "f16");
    if (!isnan(y) && !isinf(y)) check_rounding(y, pm__f32_to_bf16, pm__bf16_to_f32, "bf16");
  }
  /* ties: 1 + 2^-11 lies between 1 and 1 + 2^-10 (even: 1); 1 + 3 x 2^-11 goes up to even */
  cr_assert_eq(pm__f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);
  cr_assert_eq(pm__f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
  cr_assert_eq(pm__f32_to_f16(65520.0f), 0x7c00);
  cr_assert_eq(pm__f32_to_f16(65519.0f), 0x7bff);
  cr_assert_eq(pm__f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
  cr_assert_eq(pm__f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);
  cr_assert_eq(pm__f32_to_f16(ldexpf(1, -25)), 0x0000);  /* a tie with 0: to 0, the even */
  cr_assert_eq(pm__f32_to_f16(ldexpf(3, -26)), 0x0001);  /* past the tie */
  cr_assert(isnan(pm__f16_to_f32(pm__f32_to_f16(NAN))));
  cr_assert(isnan(pm__bf16_to_f32(pm__f32_to_bf16(NAN))));
}

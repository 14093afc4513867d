/* test_api.c: the public calls' argument checks (runtime/api.c) without a GPU: every call refuses
 * what it must, with PM_EINVAL and a message that names the call and the fault, before touching
 * a device. The context has serving state but no device; the pointers are never dereferenced. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "serve.h"

static pm_ctx *c;

static void setup(void) {
  pm_options o = {0};
  cr_assert_eq(pm__ctx_create(&c, PM_DEVICE_NONE, "/nonexistent/pmtune.db"), PM_OK);
  cr_assert_eq(pm__serve_init(c, &o), PM_OK);
}

static void teardown(void) {
  pm__serve_free(c);
  pm__ctx_free(c);
}

TestSuite(api, .init = setup, .fini = teardown, .timeout = 30);

#define P(addr) ((float *)(uintptr_t)(addr)) /* an address that is never read */

/* The call returned PM_EINVAL and its message holds both needles. */
static void refused(int rc, const char *a, const char *b) {
  cr_assert_eq(rc, PM_EINVAL, "%s: %s", pm_errname(rc), pm_errmsg(c));
  cr_assert_not_null(strstr(pm_errmsg(c), a), "'%s' not in: %s", a, pm_errmsg(c));
  cr_assert_not_null(strstr(pm_errmsg(c), b), "'%s' not in: %s", b, pm_errmsg(c));
}

Test(api, matadd_refuses_bad_arguments) {
  float *p = P(0x10000);
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, NULL, 40, p, 40, p, 40, NULL), "pm_matadd", "NULL matrix");
  refused(pm_matadd(c, 10, 10, (pm_order)7, p, 40, p, 40, p, 40, NULL), "pm_matadd", "order 7");
  refused(pm_matadd(c, 0, 10, PM_ROW_MAJOR, p, 40, p, 40, p, 40, NULL), "0 x 10", "2^32 elements");
  refused(pm_matadd(c, (size_t)1 << 31, 1, PM_ROW_MAJOR, p, 4, p, 4, p, 4, NULL), "pm_matadd",
          "1 to 2^31 - 1");
  refused(pm_matadd(c, 65536, 65537, PM_ROW_MAJOR, p, 1 << 20, p, 1 << 20, p, 1 << 20, NULL),
          "65536 x 65537", "at most 2^32 elements");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, p, 36, p, 40, NULL),
          "a pitch (40, 36, 40 bytes)", "shorter than a row of 40 bytes");
  refused(pm_matadd(c, 10, 12, PM_COL_MAJOR, p, 40, p, 40, p, 36, NULL), "(40, 40, 36 bytes)",
          "shorter than a column of 40 bytes");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, P(0x10002), 40, p, 40, p, 40, NULL), "pm_matadd",
          "pointers and pitches must be multiples of 4 bytes");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 42, p, 40, p, 40, NULL), "pm_matadd",
          "multiples of 4 bytes");
}

Test(api, add_refuses_bad_arguments) {
  float *p = P(0x10000), *q = P(0x20000), *r = P(0x30000);
  refused(pm_add(c, 10, NULL, p, q, NULL), "pm_add", "NULL vector");
  refused(pm_add(c, 10, r, NULL, q, NULL), "pm_add", "NULL vector");
  refused(pm_add(c, 10, r, p, NULL, NULL), "pm_add", "NULL vector");
  refused(pm_add(c, 0, r, p, q, NULL), "n = 0", "1 to 2^31 - 1");
  refused(pm_add(c, (size_t)1 << 31, r, p, q, NULL), "pm_add", "1 to 2^31 - 1");
  refused(pm_add(c, 10, r, P(0x10002), q, NULL), "pm_add", "pointers must be multiples of 4 bytes");
  refused(pm_add(c, 10, P(0x30001), p, q, NULL), "pm_add", "multiples of 4 bytes");
  refused(pm_add(c, 10, P(0x10004), p, q, NULL), "pm_add", "C overlaps A without being it");
  refused(pm_add(c, 10, P(0x20000 - 36), p, q, NULL), "pm_add", "C overlaps B");
  cr_assert_eq(pm_add(NULL, 10, r, p, q, NULL), PM_EINVAL);
}

Test(api, reduce_refuses_bad_arguments) {
  float *p = P(0x10000);
  refused(pm_reduce_sum(c, 10, NULL, p, NULL), "pm_reduce_sum", "NULL pointer");
  refused(pm_reduce_sum(c, 10, p, NULL, NULL), "pm_reduce_sum", "NULL pointer");
  refused(pm_reduce_sum(c, 0, p, p, NULL), "n = 0", "1 to 2^31 - 1");
  refused(pm_reduce_sum(c, (size_t)1 << 31, p, p, NULL), "pm_reduce_sum", "1 to 2^31 - 1");
  refused(pm_reduce_sum(c, 10, P(0x10001), p, NULL), "pm_reduce_sum", "pointers must be");
  refused(pm_reduce_sum(c, 10, p, P(0x10006), NULL), "pm_reduce_sum", "pointers must be");
}

Test(api, filter_refuses_bad_arguments) {
  float *p = P(0x10000), w[49] = {0};
  refused(pm_filter(c, 10, 10, p, 40, p, 40, NULL, 1, PM_BORDER_CLAMP, NULL), "pm_filter",
          "NULL image or weights");
  refused(pm_filter(c, 10, 10, p, 40, p, 40, w, 0, PM_BORDER_CLAMP, NULL), "radius 0", "1 to 3");
  refused(pm_filter(c, 10, 10, p, 40, p, 40, w, 4, PM_BORDER_CLAMP, NULL), "radius 4", "1 to 3");
  refused(pm_filter(c, 10, 10, p, 40, p, 40, w, 1, (pm_border)3, NULL), "border 3", "clamp");
  refused(pm_filter(c, 10, 0, p, 40, p, 40, w, 1, PM_BORDER_ZERO, NULL), "10 x 0", "rows and cols");
  refused(pm_filter(c, 10, 10, p, 40, p, 32, w, 1, PM_BORDER_ZERO, NULL),
          "a pitch (40, 32 bytes)", "shorter than a row of 40 bytes");
  refused(pm_filter(c, 10, 10, p, 44, p, 42, w, 1, PM_BORDER_ZERO, NULL), "pm_filter",
          "pointers and pitches must be multiples of 4 bytes");
}

Test(api, malloc_2d_refuses_bad_arguments) {
  float *q = P(0x10000);
  size_t pitch = 0;
  refused(pm_malloc_2d(c, PM_OP_MATADD, 10, 10, NULL, &pitch, NULL), "pm_malloc_2d", "NULL output");
  refused(pm_malloc_2d(c, (pm_op)99, 10, 10, &q, &pitch, NULL), "pm_malloc_2d", "op 99");
  cr_assert_null(q, "*ptr is cleared before anything can fail");
  refused(pm_malloc_2d(c, PM_OP_MATADD, 0, 5, &q, &pitch, NULL), "0 x 5", "1 to 2^31 - 1");
}

Test(api, a_context_without_serving_is_refused) {
  pm_ctx *none = NULL;
  cr_assert_eq(pm__ctx_create(&none, PM_DEVICE_NONE, NULL), PM_OK);
  cr_assert_eq(pm_reduce_sum(none, 10, P(0x10000), P(0x10000), NULL), PM_ENODEV);
  cr_assert_not_null(strstr(pm_errmsg(none), "pm_reduce_sum: this context has no device"), "%s",
                     pm_errmsg(none));
  pm__ctx_free(none);
  cr_assert_eq(pm_matadd(NULL, 10, 10, PM_ROW_MAJOR, P(16), 40, P(16), 40, P(16), 40, NULL),
               PM_EINVAL);
}

Test(api, alignment_is_the_lowest_set_bit_up_to_16) {
  const size_t a16[] = {0x1000, 32, 0}, a8[] = {0x1000, 24}, a4[] = {0x1004}, bad[] = {16, 2};
  cr_assert_eq(pm__alignment_of(a16, 3), 16);
  cr_assert_eq(pm__alignment_of(a8, 2), 8);
  cr_assert_eq(pm__alignment_of(a4, 1), 4);
  cr_assert_eq(pm__alignment_of(bad, 2), 0);
  cr_assert_eq(pm__alignment_of(NULL, 0), 16);
}

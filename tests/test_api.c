/* test_api.c: the public calls' argument checks (runtime/api.c) without a GPU: every call refuses
 * what it must, with PM_EINVAL and a message that names the call and the fault, before touching
 * a device. The context has serving state but no device; the pointers are never dereferenced. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "testutil.h"

static pm_ctx *c;

static void setup(void) { c = pm_test_serving_open("/nonexistent/pmtune.db"); }

static void teardown(void) { pm_test_serving_close(c); }

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

/* The typed calls refuse what the float ones do, and what is wrong with the type itself: an
 * unknown type, a sum type neither the input's nor f32, pointers and pitches not multiples of the
 * element's size. */
Test(api, typed_calls_refuse_bad_arguments) {
  float w[49] = {0};
  void *p = P(0x10000), *q = NULL;
  size_t pitch = 0;
  refused(pm_reduce_sum_t(c, (pm_dtype)9, 10, p, PM_F32, p, NULL), "pm_reduce_sum_t", "dtype 9");
  refused(pm_reduce_sum_t(c, PM_BF16, 10, p, PM_F64, p, NULL), "the sum's type 3",
          "neither the input's (bf16) nor f32");
  refused(pm_reduce_sum_t(c, PM_BF16, 10, P(0x10001), PM_BF16, p, NULL), "pm_reduce_sum_t",
          "pointers must be");
  refused(pm_reduce_sum_t(c, PM_F16, 10, p, PM_F32, P(0x10002), NULL), "pm_reduce_sum_t",
          "pointers must be");
  refused(pm_reduce_sum_t(c, PM_F64, 0, p, PM_F64, p, NULL), "n = 0", "1 to 2^31 - 1");
  refused(pm_reduce_sum_t(c, PM_F64, 10, NULL, PM_F64, p, NULL), "pm_reduce_sum_t", "NULL pointer");
  refused(pm_filter_t(c, (pm_dtype)-1, 10, 10, p, 20, p, 20, w, 1, PM_BORDER_CLAMP, NULL),
          "pm_filter_t", "dtype -1");
  refused(pm_filter_t(c, PM_BF16, 10, 10, p, 20, p, 18, w, 1, PM_BORDER_CLAMP, NULL),
          "a pitch (20, 18 bytes)", "shorter than a row of 20 bytes");
  refused(pm_filter_t(c, PM_F16, 10, 10, p, 22, p, 21, w, 1, PM_BORDER_ZERO, NULL), "pm_filter_t",
          "multiples of 2 bytes");
  refused(pm_filter_t(c, PM_F64, 10, 10, p, 84, p, 80, w, 1, PM_BORDER_ZERO, NULL), "pm_filter_t",
          "multiples of 8 bytes");
  refused(pm_filter_t(c, PM_BF16, 10, 10, p, 20, p, 20, w, 4, PM_BORDER_ZERO, NULL), "radius 4",
          "1 to 3");
  refused(pm_filter_t(c, PM_BF16, 10, 10, p, 20, p, 20, NULL, 1, PM_BORDER_ZERO, NULL),
          "pm_filter_t", "NULL image or weights");
  refused(pm_malloc_2d_t(c, PM_OP_FILTER, (pm_dtype)7, 10, 10, &q, &pitch, NULL), "pm_malloc_2d_t",
          "dtype 7");
  refused(pm_malloc_2d_t(c, PM_OP_REDUCE, PM_BF16, 10, 10, NULL, &pitch, NULL), "pm_malloc_2d_t",
          "NULL output");
}

Test(api, a_context_without_serving_is_refused) {
  pm_ctx *none = NULL;
  cr_assert_eq(pm__ctx_create(&none, PM_DEVICE_NONE, NULL), PM_OK);
  cr_assert_eq(pm_reduce_sum(none, 10, P(0x10000), P(0x10000), NULL), PM_ENODEV);
  cr_assert_not_null(strstr(pm_errmsg(none), "pm_reduce_sum: this context has no device"), "%s",
                     pm_errmsg(none));
  cr_assert_eq(pm_filter_t(none, PM_BF16, 10, 10, P(0x10000), 20, P(0x10000), 20, P(0x10000), 1,
                           PM_BORDER_CLAMP, NULL),
               PM_ENODEV);
  cr_assert_not_null(strstr(pm_errmsg(none), "pm_filter_t: this context has no device"), "%s",
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

/* ---- Every argument of every call: NULL, zero, huge (products that overflow) and misaligned
 * (bad input). Each is refused before a device is touched. */

#define HUGE_SZ SIZE_MAX

Test(api, matadd_checks_every_argument) {
  float *p = P(0x10000);
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, NULL, 40, p, 40, NULL), "pm_matadd", "NULL matrix");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, p, 40, NULL, 40, NULL), "pm_matadd", "NULL matrix");
  refused(pm_matadd(c, 10, 10, (pm_order)-1, p, 40, p, 40, p, 40, NULL), "pm_matadd", "order -1");
  refused(pm_matadd(c, 10, 0, PM_ROW_MAJOR, p, 40, p, 40, p, 40, NULL), "10 x 0", "1 to 2^31 - 1");
  refused(pm_matadd(c, HUGE_SZ, 10, PM_ROW_MAJOR, p, 40, p, 40, p, 40, NULL), "pm_matadd", "1 to 2^31 - 1");
  refused(pm_matadd(c, 10, HUGE_SZ, PM_COL_MAJOR, p, 40, p, 40, p, 40, NULL), "pm_matadd", "1 to 2^31 - 1");
  /* rows x cols that wraps a size_t: (2^32 + 1) x (2^32 - 1) = 2^64 - 1 */
  refused(pm_matadd(c, ((size_t)1 << 32) + 1, ((size_t)1 << 32) - 1, PM_ROW_MAJOR, p, 4, p, 4, p, 4,
                    NULL), "pm_matadd", "1 to 2^31 - 1");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 36, p, 40, p, 40, NULL), "(36, 40, 40 bytes)", "shorter");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, p, 40, p, 0, NULL), "(40, 40, 0 bytes)", "shorter");
  /* a pitch so large that line x pitch wraps: refused, never handed to a kernel */
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, HUGE_SZ & ~(size_t)15, p, 40, p, 40, NULL), "pm_matadd",
          "over 10 rows overflows a size");
  refused(pm_matadd(c, 10, 12, PM_COL_MAJOR, p, 40, p, (size_t)1 << 61, p, 48, NULL), "pm_matadd",
          "over 12 columns overflows a size");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, P(0x10001), 40, p, 40, NULL), "pm_matadd",
          "multiples of 4 bytes");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, p, 40, P(0x10003), 40, NULL), "pm_matadd",
          "multiples of 4 bytes");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, p, 41, p, 40, NULL), "pm_matadd", "multiples of 4 bytes");
  refused(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, p, 40, p, 46, NULL), "pm_matadd", "multiples of 4 bytes");
  /* packed (one line): misaligned pointers are still refused */
  refused(pm_matadd(c, 1, 10, PM_ROW_MAJOR, P(0x10002), 40, p, 40, p, 40, NULL), "pm_matadd",
          "multiples of 4 bytes");
}

Test(api, add_and_reduce_check_every_argument) {
  float *p = P(0x10000), *q = P(0x20000), *r = P(0x30000);
  refused(pm_add(c, HUGE_SZ, r, p, q, NULL), "pm_add", "1 to 2^31 - 1");
  refused(pm_add(c, 10, r, p, P(0x20002), NULL), "pm_add", "multiples of 4 bytes");
  refused(pm_reduce_sum(c, HUGE_SZ, p, p, NULL), "pm_reduce_sum", "1 to 2^31 - 1");
  refused(pm_reduce_sum(c, ((size_t)1 << 32) + 10, p, p, NULL), "pm_reduce_sum", "1 to 2^31 - 1");
  refused(pm_reduce_sum(c, 10, NULL, NULL, NULL), "pm_reduce_sum", "NULL pointer");
  cr_assert_eq(pm_reduce_sum(NULL, 10, p, p, NULL), PM_EINVAL);
  cr_assert_eq(pm_filter(NULL, 10, 10, p, 40, p, 40, p, 1, PM_BORDER_CLAMP, NULL), PM_EINVAL);
}

Test(api, filter_checks_every_argument) {
  float *p = P(0x10000), w[49] = {0};
  refused(pm_filter(c, 10, 10, NULL, 40, p, 40, w, 1, PM_BORDER_CLAMP, NULL), "pm_filter", "NULL image");
  refused(pm_filter(c, 10, 10, p, 40, NULL, 40, w, 1, PM_BORDER_CLAMP, NULL), "pm_filter", "NULL image");
  refused(pm_filter(c, 10, 10, p, 40, p, 40, w, -1, PM_BORDER_CLAMP, NULL), "radius -1", "1 to 3");
  refused(pm_filter(c, 10, 10, p, 40, p, 40, w, INT_MAX, PM_BORDER_CLAMP, NULL), "radius 2147483647",
          "1 to 3");
  refused(pm_filter(c, 10, 10, p, 40, p, 40, w, INT_MIN, PM_BORDER_CLAMP, NULL), "radius -2147483648",
          "1 to 3");
  refused(pm_filter(c, 10, 10, p, 40, p, 40, w, 1, (pm_border)-1, NULL), "border -1", "clamp");
  refused(pm_filter(c, 0, 10, p, 40, p, 40, w, 1, PM_BORDER_ZERO, NULL), "0 x 10", "rows and cols");
  refused(pm_filter(c, HUGE_SZ, HUGE_SZ, p, 40, p, 40, w, 1, PM_BORDER_ZERO, NULL), "pm_filter",
          "rows and cols");
  refused(pm_filter(c, 65536, 65537, p, 1 << 20, p, 1 << 20, w, 1, PM_BORDER_ZERO, NULL), "pm_filter",
          "at most 2^32 elements");
  refused(pm_filter(c, 10, 10, p, 36, p, 40, w, 1, PM_BORDER_ZERO, NULL), "a pitch (36, 40 bytes)",
          "shorter than a row");
  refused(pm_filter(c, 10, 10, p, 40, p, HUGE_SZ - 3, w, 1, PM_BORDER_ZERO, NULL), "pm_filter",
          "overflows a size");
  refused(pm_filter(c, 10, 10, P(0x10002), 40, p, 40, w, 1, PM_BORDER_ZERO, NULL), "pm_filter",
          "multiples of 4 bytes");
  refused(pm_filter(c, 10, 10, p, 40, P(0x10001), 40, w, 1, PM_BORDER_ZERO, NULL), "pm_filter",
          "multiples of 4 bytes");
}

Test(api, malloc_2d_checks_every_argument) {
  float *q = P(0x10000);
  size_t pitch = 0;
  cr_assert_eq(pm_malloc_2d(NULL, PM_OP_MATADD, 10, 10, &q, &pitch, NULL), PM_EINVAL);
  refused(pm_malloc_2d(c, PM_OP_MATADD, 10, 10, &q, NULL, NULL), "pm_malloc_2d", "NULL output");
  refused(pm_malloc_2d(c, (pm_op)-1, 10, 10, &q, &pitch, NULL), "pm_malloc_2d", "op -1");
  refused(pm_malloc_2d(c, PM_OP_MATADD, 5, 0, &q, &pitch, NULL), "5 x 0", "1 to 2^31 - 1");
  refused(pm_malloc_2d(c, PM_OP_MATADD, HUGE_SZ, 5, &q, &pitch, NULL), "pm_malloc_2d", "1 to 2^31 - 1");
  /* rows x pitch past 2^64 where a tuned pitch were 512-aligned: more than any call takes */
  refused(pm_malloc_2d(c, PM_OP_MATADD, 0x7fffffff, 0x7fffffff, &q, &pitch, NULL), "pm_malloc_2d",
          "at most 2^32 elements");
  cr_assert_null(q);
  pm_free(c, NULL);
  pm_free(NULL, NULL);
}

Test(api, open_reload_and_the_messages_check_their_arguments) {
  pm_ctx *x = NULL;
  cr_assert_eq(pm_open(NULL, NULL), PM_EINVAL);
  pm_options o = {.device = -5};
  cr_assert_eq(pm_open(&x, &o), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(x), "device -5: not a device ordinal"), "%s", pm_errmsg(x));
  pm_close(x);
  o = (pm_options){.device = PM_DEVICE_NONE, .db_path = ""};
  cr_assert_eq(pm_open(&x, &o), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(x), "pm_open: db_path is empty"), "%s", pm_errmsg(x));
  pm_close(x);
  o = (pm_options){.device = INT_MIN, .autotune_budget = -1};
  cr_assert_eq(pm_open(&x, &o), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(x), "pm_open: autotune_budget < 0"), "%s", pm_errmsg(x));
  pm_close(x);
  o = (pm_options){.device = INT_MIN};
  cr_assert_eq(pm_open(&x, &o), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(x), "not a device ordinal"), "%s", pm_errmsg(x));
  pm_close(x);
  pm_close(NULL);
  cr_assert_eq(pm_reload(NULL), PM_EINVAL);
  cr_assert_eq(pm__ctx_create(&x, PM_DEVICE_NONE, NULL), PM_OK);
  cr_assert_eq(pm_reload(x), PM_ENODEV);
  cr_assert_not_null(strstr(pm_errmsg(x), "pm_reload: this context has no device"), "%s", pm_errmsg(x));
  cr_assert_null(pm_notice(x));
  pm__ctx_free(x);
  cr_assert_not_null(pm_errmsg(NULL));
  cr_assert_null(pm_notice(NULL));
  cr_assert_str_eq(pm_strerror(12345), "unknown status");
  cr_assert_str_eq(pm_strerror(INT_MIN), "unknown status");
  cr_assert_str_eq(pm_errname(12345), "PM_UNKNOWN");
  cr_assert_str_eq(pm_errname(PM_EINVAL), "PM_EINVAL");
  cr_assert_not_null(pm_version());
}

/* pm_kernel_open refuses a hostile description as the commands do, when it reads it:
 * within a second, naming the field, on one line. */
Test(api, kernel_open_refuses_a_hostile_description_at_once) {
  static const char *const cases[][4] = { /* from, to, field, what */
      {"\"3 * 4 * :rows * :cols\"", "\"(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM "
                                    "c) SELECT max(x) FROM c)\"", "bytes: ", "a query inside it"},
      {"\"3 * 4 * :rows * :cols\"", "\"length(printf('%.*c', 999999999, 'x'))\"", "bytes: ",
       "the function length()"},
      {"\":BLOCK * :ITEMS * :VEC <= 8192\"", "\"randomblob(999999999) IS NOT NULL\"",
       "constraints[0]: ", "the function randomblob()"},
      {"\"(:rows * :cols + :BLOCK * :ITEMS * :VEC - 1) / (:BLOCK * :ITEMS * :VEC)\"", "\"1), (2048\"",
       "grid[0]: ", "is not one SQL expression"},
      {"\"name\": \"my_matadd\"", "\"name\": \"my_matadd\", \"name\": \"x\"", "name: ", "given twice"},
      {"\"entry\": \"my_matadd\"", "\"entry\": \"my_matadd\\u0000x\"", "entry: ", "\\u0000"},
      {"\"source\": \"matadd.cu\"", "\"source\": \"../../../etc/passwd\"", "source: ",
       "outside the description's folder"},
      {"\"dir\": \"out\"", "\"dir\": \"out\\nx\"", "args[0].dir: ", "'out\\nx'"},
  };
  char dir[] = "/tmp/pmtune-api-kd-XXXXXX", path[128], cmd[512];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(cmd, sizeof cmd, "cp %s/examples/kernels/matadd.cu %s/", PM_SOURCE_DIR, dir);
  cr_assert_eq(system(cmd), 0);
  FILE *f = fopen(PM_SOURCE_DIR "/examples/kernels/matadd.json", "rb");
  cr_assert_not_null(f);
  static char text[8192];
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *at = strstr(text, cases[i][0]);
    cr_assert_not_null(at, "%s", cases[i][0]);
    snprintf(path, sizeof path, "%s/k%zu.json", dir, i);
    f = fopen(path, "wb");
    cr_assert_not_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, cases[i][1], at + strlen(cases[i][0]));
    fclose(f);
    pm_kernel *k = (pm_kernel *)1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = pm_kernel_open(c, path, &k);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_assert_lt(took, 1.0, "%s: %.2f s", cases[i][1], took);
    cr_assert_null(k);
    refused(rc, cases[i][2], cases[i][3]);
    cr_assert_null(strchr(pm_errmsg(c), '\n'), "one line: %s", pm_errmsg(c));
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}

/* A kernel of one's own: opening checks its description (no GPU needed); the same one opened
 * twice is one handle; launching checks the dims and buffers before anything runs. */
Test(api, kernel_calls_refuse_bad_arguments) {
  pm_kernel *k = NULL, *again = NULL;
  const char *example = PM_SOURCE_DIR "/examples/kernels/matadd.json";
  refused(pm_kernel_open(c, NULL, &k), "pm_kernel_open", "a NULL path");
  refused(pm_kernel_open(c, example, NULL), "pm_kernel_open", "a NULL handle");
  cr_assert_eq(pm_kernel_open(c, "/nonexistent/k.json", &k), PM_EIO);
  cr_assert_null(k);
  refused(pm_kernel_open(c, PM_SOURCE_DIR "/examples/kernels/matadd.cu", &k), "matadd.cu",
          "not valid JSON");
  cr_assert_eq(pm_kernel_open(c, example, &k), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm_kernel_open(c, example, &again), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(k, again, "the same description is the same kernel");
  float *p = P(0x10000);
  void *bufs[3] = {p, p, p};
  size_t dims[2] = {10, 10};
  refused(pm_kernel_launch(k, NULL, bufs, NULL), "my_matadd", "a NULL dims");
  refused(pm_kernel_launch(k, dims, NULL, NULL), "my_matadd", "a NULL buffers");
  size_t zero[2] = {0, 10}, huge[2] = {10, (size_t)1 << 31};
  refused(pm_kernel_launch(k, zero, bufs, NULL), "rows = 0", "1 to 2^31 - 1");
  refused(pm_kernel_launch(k, huge, bufs, NULL), "cols = 2147483648", "1 to 2^31 - 1");
  void *null_b[3] = {p, NULL, p}, *odd[3] = {p, p, P(0x10002)};
  refused(pm_kernel_launch(k, dims, null_b, NULL), "buffer 1 (a)", "NULL");
  refused(pm_kernel_launch(k, dims, odd, NULL), "buffer 2 (b)", "a multiple of 4 bytes");
  cr_assert_eq(pm_kernel_launch(NULL, dims, bufs, NULL), PM_EINVAL);
}

/* Scalars at the call: a scalar without a value in its description must be given;
 * a count that is not the description's is refused, naming both. */
Test(api, kernel_scalars_are_checked_at_the_call) {
  char dir[] = "/tmp/pmtune-api-scalar-XXXXXX", cu[64], json[64];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(cu, sizeof cu, "%s/scale.cu", dir);
  snprintf(json, sizeof json, "%s/scale.json", dir);
  FILE *f = fopen(cu, "w");
  cr_assert_not_null(f);
  fputs("extern \"C\" __global__ void scale(float *o, const float *i, float alpha, int n) {}\n", f);
  fclose(f);
  f = fopen(json, "w");
  cr_assert_not_null(f);
  fputs("{\"name\": \"scale\", \"source\": \"scale.cu\", \"entry\": \"scale\", \"dims\": [\"n\"],"
        " \"params\": {\"B\": [64, 256]}, \"seed\": {\"B\": 256}, \"grid\": [\"(:n + :B - 1) / :B\"],"
        " \"block\": [\":B\"], \"args\": [{\"name\": \"o\", \"type\": \"f32\", \"count\": \":n\","
        " \"dir\": \"out\"}, {\"name\": \"i\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"in\"},"
        " {\"name\": \"alpha\", \"scalar\": \"f32\"}, {\"name\": \"n\", \"scalar\": \"i32\","
        " \"value\": \":n\"}], \"bytes\": \"8 * :n\"}", f);
  fclose(f);
  pm_kernel *k = NULL;
  cr_assert_eq(pm_kernel_open(c, json, &k), PM_OK, "%s", pm_errmsg(c));
  float *p = P(0x10000), alpha = 2;
  int n = 10;
  void *bufs[2] = {p, p};
  size_t dims[1] = {10};
  const void *none[2] = {NULL, NULL}, *both[3] = {&alpha, &n, &alpha};
  refused(pm_kernel_launch(k, dims, bufs, NULL), "pm_kernel_launch: scale: scalar 0 (alpha)",
          "has no value in the description");
  refused(pm_kernel_launch_with(k, dims, bufs, NULL, 0, NULL), "scalar 0 (alpha)", "no value");
  refused(pm_kernel_launch_with(k, dims, bufs, none, 2, NULL), "scalar 0 (alpha)", "no value");
  refused(pm_kernel_launch_with(k, dims, bufs, both, 1, NULL), "1 scalars given", "2 described");
  refused(pm_kernel_launch_with(k, dims, bufs, both, 3, NULL), "3 scalars given", "2 described");
  refused(pm_kernel_launch_with(k, dims, bufs, NULL, 2, NULL), "scalar 0 (alpha)", "no value");
  refused(pm_kernel_launch_with(k, NULL, bufs, both, 2, NULL), "pm_kernel_launch_with: scale",
          "a NULL dims");
  /* a tuned scalar (its value part of the size): given by each call, 1 to 2^31 - 1 */
  f = fopen(json, "w");
  cr_assert_not_null(f);
  fputs("{\"name\": \"scale\", \"source\": \"scale.cu\", \"entry\": \"scale\", \"dims\": [\"n\"],"
        " \"params\": {\"B\": [64, 256]}, \"seed\": {\"B\": 256}, \"grid\": [\"(:n + :B - 1) / :B\"],"
        " \"block\": [\":B\"], \"args\": [{\"name\": \"o\", \"type\": \"f32\", \"count\": \":n\","
        " \"dir\": \"out\"}, {\"name\": \"i\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"in\"},"
        " {\"name\": \"alpha\", \"scalar\": \"f32\", \"value\": \"1\"}, {\"name\": \"k\","
        " \"scalar\": \"i32\", \"tuned\": true}], \"bytes\": \"8 * :n\"}", f);
  fclose(f);
  cr_assert_eq(pm_kernel_open(c, json, &k), PM_OK, "%s", pm_errmsg(c));
  int zero_k = 0, big_k = -5;
  const void *kz[2] = {NULL, &zero_k}, *kb[2] = {NULL, &big_k};
  refused(pm_kernel_launch(k, dims, bufs, NULL), "scalar 1 (k)", "has no value in the description");
  refused(pm_kernel_launch_with(k, dims, bufs, kz, 2, NULL), "scalar 1 (k) = 0",
          "a tuned scalar is 1 to 2^31 - 1");
  refused(pm_kernel_launch_with(k, dims, bufs, kb, 2, NULL), "scalar 1 (k) = -5", "1 to 2^31 - 1");
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}

Test(api, kernel_open_needs_a_device) {
  pm_ctx *none = NULL;
  pm_kernel *k = (pm_kernel *)1;
  cr_assert_eq(pm__ctx_create(&none, PM_DEVICE_NONE, NULL), PM_OK);
  cr_assert_eq(pm_kernel_open(none, PM_SOURCE_DIR "/examples/kernels/matadd.json", &k), PM_ENODEV);
  cr_assert_null(k);
  pm__ctx_free(none);
}

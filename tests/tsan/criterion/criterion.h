/* tests/tsan/criterion/criterion.h: the part of Criterion's API that the tests labelled tsan use,
 * for the ThreadSanitizer build (-DPM_TSAN=ON), which cannot run Criterion itself: Criterion
 * maps its shared arena at a random fixed address between 0x200000000000 and 0x7f0000000000
 * (BoxFort's bxf_arena_init), where ThreadSanitizer keeps its shadow memory, and gives up
 * ("Could not initialize inheritable arena: Resource temporarily unavailable", Criterion issue
 * #274, open since 2018). tests/CMakeLists.txt puts this folder first on those tests' include
 * path in that build, so the same test files build and run unchanged: the tests run one after
 * the other in this one process (no fork), each between its suite's init and fini; a failed
 * assertion in the test's own thread ends the test (longjmp to the runner, which still runs
 * fini), in another thread the process (status 1). main() is here. */
#ifndef PM_TSAN_CRITERION_H
#define PM_TSAN_CRITERION_H

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct crs_suite {
  void (*init)(void), (*fini)(void);
  double timeout; /* not enforced here: CTest's own timeout stands */
} crs_suite;

typedef struct crs_test {
  const char *suite, *name;
  void (*fn)(void);
} crs_test;

static crs_test crs_tests[64];
static int crs_ntests;
static struct {
  const char *name;
  const crs_suite *cfg;
} crs_suites[16];
static int crs_nsuites;
static jmp_buf crs_jump;
static pthread_t crs_runner;
static int crs_failed, crs_skipped;

static void crs_add(const char *suite, const char *name, void (*fn)(void)) {
  if (crs_ntests < 64) crs_tests[crs_ntests++] = (crs_test){suite, name, fn};
}
__attribute__((unused)) static void crs_add_suite(const char *name, const crs_suite *cfg) {
  if (crs_nsuites < 16) crs_suites[crs_nsuites].name = name, crs_suites[crs_nsuites++].cfg = cfg;
}

#define TestSuite(suite, ...)                                                                 \
  static const crs_suite crs_suite_##suite = {__VA_ARGS__};                                   \
  __attribute__((constructor)) static void crs_reg_suite_##suite(void) {                      \
    crs_add_suite(#suite, &crs_suite_##suite);                                                \
  }

#define Test(suite, name, ...)                                                                \
  static void crs_test_##suite##_##name(void);                                                \
  __attribute__((constructor)) static void crs_reg_##suite##_##name(void) {                   \
    crs_add(#suite, #name, crs_test_##suite##_##name);                                        \
  }                                                                                           \
  static void crs_test_##suite##_##name(void)

/* Ends the test (or, off the runner's thread, the process) after saying why. */
/* (No format attribute: an assertion without a message passes "", which -Wall would flag.) */
static void crs_fail(const char *file, int line, const char *expr, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "[----] %s:%d: Assertion Failed: %s\n[----]   ", file, line, expr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  if (!pthread_equal(pthread_self(), crs_runner)) exit(1);
  crs_failed = 1;
  longjmp(crs_jump, 1);
}

/* The message is optional, as in Criterion: "" joins a literal format, or stands alone. */
#define CRS_CHECK(ok, expr, ...)                                                              \
  do {                                                                                        \
    if (!(ok)) crs_fail(__FILE__, __LINE__, expr, "" __VA_ARGS__);                            \
  } while (0)
#define cr_assert(cond, ...) CRS_CHECK(cond, #cond, __VA_ARGS__)
#define cr_assert_eq(a, b, ...) CRS_CHECK((a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) CRS_CHECK((a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) CRS_CHECK((a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) CRS_CHECK((a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_null(p, ...) CRS_CHECK((p) == NULL, #p " is NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) CRS_CHECK((p) != NULL, #p " is not NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) CRS_CHECK(strcmp(a, b) == 0, #a " == " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) CRS_CHECK(strcmp(a, b) != 0, #a " != " #b, __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...)                                                    \
  CRS_CHECK(fabs((double)(a) - (double)(b)) <= (eps), #a " ~= " #b, __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, "[----] " __VA_ARGS__), fprintf(stderr, "\n"))
#define cr_skip_test(...)                                                                     \
  do {                                                                                        \
    fprintf(stderr, "[SKIP] " __VA_ARGS__);                                                   \
    fprintf(stderr, "\n");                                                                    \
    crs_skipped = 1;                                                                          \
    longjmp(crs_jump, 1);                                                                     \
  } while (0)

/* Runs test t between its suite's init and fini; returns 1 where it failed. */
static int crs_run(const crs_test *t) {
  static const crs_suite none = {0};
  const crs_suite *volatile cfg = &none;
  for (int j = 0; j < crs_nsuites; j++)
    if (strcmp(crs_suites[j].name, t->suite) == 0) cfg = crs_suites[j].cfg;
  fprintf(stderr, "[RUN ] %s::%s\n", t->suite, t->name);
  crs_failed = crs_skipped = 0;
  if (cfg->init != NULL && setjmp(crs_jump) == 0) cfg->init();
  if (!crs_failed && !crs_skipped && setjmp(crs_jump) == 0) t->fn();
  if (cfg->fini != NULL && setjmp(crs_jump) == 0) cfg->fini();
  fprintf(stderr, "[%s] %s::%s\n", crs_failed ? "FAIL" : crs_skipped ? "SKIP" : "PASS", t->suite,
          t->name);
  return crs_failed;
}

int main(void) {
  int failed = 0;
  crs_runner = pthread_self();
  for (int i = 0; i < crs_ntests; i++) failed += crs_run(&crs_tests[i]);
  fprintf(stderr, "[====] Synthesis: Tested: %d | Failing: %d\n", crs_ntests, failed);
  return failed != 0;
}

#endif /* PM_TSAN_CRITERION_H */

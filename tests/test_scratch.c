/* test_scratch.c: the reduce's scratch (runtime/scratch.c) without a GPU: a scratch never used
 * holds nothing, finds nothing and frees without a CUDA call; asked for a buffer on a context
 * without a device it gives none, says why, and still holds nothing. (Buffers themselves need a
 * device: tests/test_gpu_streams.c.) */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime.h"
#include "testutil.h"

static pm_ctx *c;

static void setup(void) { c = pm_test_serving_open("/nonexistent/pmtune.db"); }

static void teardown(void) { pm_test_serving_close(c); }

TestSuite(scratch, .init = setup, .fini = teardown, .timeout = 30);

Test(scratch, unused_holds_and_finds_nothing) {
  pm__scratch *s = &c->serve->scratch;
  size_t lent = 99;
  cr_assert_eq(pm__scratch_count(s, &lent), 0);
  cr_assert_eq(lent, 0);
  cr_assert_null(pm__scratch_find(s, NULL, 1));
  cr_assert_null(pm__scratch_find(s, cudaStreamPerThread, 1));
}

Test(scratch, no_buffer_without_a_device) {
  pm__scratch *s = &c->serve->scratch;
  cr_assert_null(pm__scratch_get(c, s, NULL, 1000));
  cr_assert_neq(c->status, PM_OK);
  cr_assert(strlen(pm_errmsg(c)) > 0, "the reason is said");
  cr_assert_null(pm__scratch_get(c, s, cudaStreamPerThread, 1000));
  cr_assert_eq(pm__scratch_count(s, NULL), 0, "a failed get holds nothing");
  cr_assert_null(pm__scratch_find(s, NULL, 1000));
}

/* test_scratch.c: the reduce's scratch (runtime/scratch.c) without a GPU: a scratch never used
 * holds nothing, finds nothing and frees without a CUDA call; asked for a buffer on a context
 * without a device it gives none, says why, and still holds nothing. (Buffers themselves need a
 * device: tests/test_gpu_streams.c.) */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime.h"

static pm_ctx *c;

static void setup(void) {
  pm_options o = {0};
  cr_assert_eq(pm__ctx_create(&c, PM_DEVICE_NONE, "/nonexistent/pmtune.db"), PM_OK);
  cr_assert_eq(pm__serve_init(c, &o), PM_OK);
}

static void teardown(void) {
  pm__serve_free(c); /* frees the scratch */
  pm__ctx_free(c);
}

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

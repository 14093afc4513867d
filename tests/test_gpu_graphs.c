/* test_gpu_graphs.c: every library call captured into a CUDA graph, in each capture mode
 * (global, thread-local, relaxed), cold (a fresh context, a stream that never called pmtune, a
 * size never seen: the slow path runs inside the capture) and warm (the choice cached), then the
 * graph replayed: right against the reference, and again after the inputs change, bit for bit
 * what a direct call gives on the new inputs. Skips without a GPU. */
#include <stdio.h>
#include <unistd.h>

#include "testutil.h"
#include "serve.h"

static char path[64];

static void setup(void) {
  pm_test_require_gpu();
  snprintf(path, sizeof path, "/tmp/pmtune-test-graphs-%d.db", (int)getpid());
  unlink(path);
}
static void teardown(void) { unlink(path); }
TestSuite(gpu_graphs, .init = setup, .fini = teardown, .timeout = 600);

/* d's output on the host, packed (reduce: one float). */
static float *output_of(const pm__data *d) {
  size_t n = d->out_value_bytes ? 1 : (size_t)d->lines * d->inner;
  float *h = malloc(n * sizeof *h);
  cr_assert_not_null(h);
  if (d->out_value_bytes)
    CUDA_OK(cudaMemcpy(h, d->out, sizeof *h, cudaMemcpyDeviceToHost));
  else
    CUDA_OK(cudaMemcpy2D(h, d->inner * sizeof *h, d->out, d->out_pitch, d->inner * sizeof *h,
                         d->lines, cudaMemcpyDeviceToHost));
  return h;
}

static const char *mode_name(enum cudaStreamCaptureMode m) {
  return m == cudaStreamCaptureModeGlobal        ? "global"
         : m == cudaStreamCaptureModeThreadLocal ? "thread-local"
                                                 : "relaxed";
}

/* layout: the pitch alignment the data is placed with (0: packed; a packed matadd is served as
 * add). */
static void capture_and_replay(const pm__op *op, pm__problem pr, size_t layout,
                               enum cudaStreamCaptureMode mode, int warm) {
  uint64_t seed = pm_test_seed();
  pm_ctx *c = NULL;
  pm_options o = {.db_path = path};
  cr_assert_eq(pm_open(&c, &o), PM_OK, "%s", pm_errmsg(c));
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  pm__data a = {0}, b = {0};
  cr_assert_eq(op->prepare(op, c, &pr, seed, &a), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(op->prepare(op, c, &pr, seed + 1, &b), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__data_place(c, &a, layout), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__data_place(c, &b, layout), PM_OK, "%s", pm_errmsg(c));
  if (warm) { /* the choice is cached and the stream has its scratch before the capture */
    cr_assert_eq(pm_test_call_op(c, op, &a, s), PM_OK, "%s", pm_errmsg(c));
    CUDA_OK(cudaStreamSynchronize(s));
    cr_assert_eq(pm__data_poison(c, &a, s), PM_OK, "%s", pm_errmsg(c));
    CUDA_OK(cudaStreamSynchronize(s));
  }

  cudaGraph_t g = NULL;
  cudaGraphExec_t ge = NULL;
  CUDA_OK(cudaStreamBeginCapture(s, mode));
  int rc = pm_test_call_op(c, op, &a, s);
  cudaError_t end = cudaStreamEndCapture(s, &g);
  cr_assert_eq(rc, PM_OK, "%s %s capture (%s): %s", warm ? "warm" : "cold", mode_name(mode),
               op->name, pm_errmsg(c));
  cr_assert(end == cudaSuccess, "%s %s capture of %s invalidated: %s", warm ? "warm" : "cold",
            mode_name(mode), op->name, cudaGetErrorString(end));
  CUDA_OK(cudaGraphInstantiate(&ge, g, 0));

  /* the first replay: the reference of a's inputs */
  CUDA_OK(cudaGraphLaunch(ge, s));
  CUDA_OK(cudaStreamSynchronize(s));
  pm__decision dec;
  pr.caller_align = 16;
  cr_assert_eq(pm__serve_decide(c, op, &pr, &dec), PM_OK);
  double err;
  cr_assert_eq(op->verify(op, c, dec.v, &a, &err), PM_OK, "%s %s %s: %s", warm ? "warm" : "cold",
               mode_name(mode), op->name, pm_errmsg(c));

  /* new inputs in a's buffers (the filter keeps the weights it was captured with), replayed;
   * then a direct call on the same inputs into b's output: the same bits */
  for (int i = 0; i < 2; i++)
    if (a.in[i] != NULL) /* on s: a copy on the legacy stream would not be ordered before it */
      CUDA_OK(cudaMemcpyAsync(a.in[i], b.in[i], a.in_stride, cudaMemcpyDeviceToDevice, s));
  CUDA_OK(cudaGraphLaunch(ge, s));
  CUDA_OK(cudaStreamSynchronize(s));
  pm__data direct = b;
  if (op->api == PM_OP_FILTER) direct.filter = a.filter;
  cr_assert_eq(pm_test_call_op(c, op, &direct, s), PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaStreamSynchronize(s));
  float *replayed = output_of(&a), *called = output_of(&b);
  size_t n = a.out_value_bytes ? 1 : (size_t)a.lines * a.inner;
  cr_assert_eq(memcmp(replayed, called, n * sizeof *replayed), 0,
               "%s %s %s: the replay on new inputs differs from a direct call (seed %llu)",
               warm ? "warm" : "cold", mode_name(mode), op->name, (unsigned long long)seed);
  cr_assert(a.out_value_bytes || memcmp(replayed, a.host_ref, n * sizeof *replayed) != 0,
            "the new inputs gave the old result: the replay did not read them");
  free(replayed);
  free(called);

  CUDA_OK(cudaGraphExecDestroy(ge));
  CUDA_OK(cudaGraphDestroy(g));
  pm__data_free(&a);
  pm__data_free(&b);
  pm_close(c); /* frees the stream's scratch: the graph is gone already */
  CUDA_OK(cudaStreamDestroy(s));
}

static void every_mode(const pm__op *op, pm__problem pr, size_t layout) {
  const enum cudaStreamCaptureMode modes[] = {cudaStreamCaptureModeGlobal,
                                              cudaStreamCaptureModeThreadLocal,
                                              cudaStreamCaptureModeRelaxed};
  for (int m = 0; m < 3; m++)
    for (int warm = 0; warm < 2; warm++) {
      unlink(path);
      capture_and_replay(op, pr, layout, modes[m], warm);
    }
}

Test(gpu_graphs, matadd_in_every_capture_mode) { /* padded: served as matadd */
  every_mode(&pm__op_matadd, (pm__problem){.rows = 333, .cols = 517}, 128);
  every_mode(&pm__op_matadd, (pm__problem){.rows = 129, .cols = 1001, .variant = PM_COL_MAJOR}, 64);
}

Test(gpu_graphs, reduce_in_every_capture_mode) {
  every_mode(&pm__op_reduce, (pm__problem){.n = 1000003}, 0);
  every_mode(&pm__op_reduce, (pm__problem){.n = 77}, 0);
}

Test(gpu_graphs, filter_in_every_capture_mode) {
  every_mode(&pm__op_filter, (pm__problem){.rows = 301, .cols = 257, .radius = 2}, 0);
  every_mode(&pm__op_filter,
             (pm__problem){.rows = 64, .cols = 99, .radius = 3, .variant = PM_BORDER_ZERO}, 0);
}

Test(gpu_graphs, add_in_every_capture_mode) { /* pm_add, and a packed matadd (served as add) */
  every_mode(&pm__op_add, (pm__problem){.n = 1000003}, 0);
  every_mode(&pm__op_matadd, (pm__problem){.rows = 129, .cols = 1001, .variant = PM_COL_MAJOR}, 0);
}

/* calls.c: the program the sanitizers run (bench/sanitize/run.sh): every operation called
 * through the library at odd sizes, packed and padded pitches and (reduce) pointers 4, 8 and 16
 * bytes aligned, twice each (cold: the slow path, compiling the default; warm: the cached
 * choice), then once captured into a CUDA graph on a fresh stream and replayed; each result is
 * checked against the host reference. Then all again in a second context on the same database,
 * whose kernels now come from the cubins the first one stored. A caller's padding is left
 * unwritten, as a caller leaves it, so that a kernel reading it shows under initcheck.
 * Exits 0 only where every call succeeded and every result matched.
 * Usage: pmtune_sanitize_calls DB   (DB: a path where no file is yet: nothing tuned) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

/* One call to make: an op, its problem, and how the caller lays out its buffers. */
typedef struct call_case {
  pm_op op;
  unsigned rows, cols, n;
  int variant;   /* pm_order (matadd) or pm_border (filter) */
  int radius;    /* filter */
  size_t round;  /* 2D: the pitch is a line's bytes rounded up to a multiple of this (4: packed) */
  size_t offset; /* reduce: x starts this many floats into its allocation (alignment 16, 4, 8) */
} call_case;

static const call_case cases[] = {
    {PM_OP_MATADD, .rows = 1, .cols = 1, .variant = PM_ROW_MAJOR, .round = 4},
    {PM_OP_MATADD, .rows = 37, .cols = 1001, .variant = PM_ROW_MAJOR, .round = 4},
    {PM_OP_MATADD, .rows = 37, .cols = 1001, .variant = PM_ROW_MAJOR, .round = 512},
    {PM_OP_MATADD, .rows = 513, .cols = 257, .variant = PM_ROW_MAJOR, .round = 8},
    {PM_OP_MATADD, .rows = 1001, .cols = 37, .variant = PM_COL_MAJOR, .round = 4},
    {PM_OP_MATADD, .rows = 1001, .cols = 37, .variant = PM_COL_MAJOR, .round = 512},
    {PM_OP_MATADD, .rows = 257, .cols = 513, .variant = PM_COL_MAJOR, .round = 8},
    {PM_OP_REDUCE, .n = 1},
    {PM_OP_REDUCE, .n = 3},
    {PM_OP_REDUCE, .n = 1000003},
    {PM_OP_REDUCE, .n = 1000003, .offset = 1},
    {PM_OP_REDUCE, .n = 1001, .offset = 2},
    {PM_OP_FILTER, .rows = 1, .cols = 7, .radius = 3, .variant = PM_BORDER_CLAMP, .round = 4},
    {PM_OP_FILTER, .rows = 37, .cols = 53, .radius = 1, .variant = PM_BORDER_CLAMP, .round = 4},
    {PM_OP_FILTER, .rows = 37, .cols = 53, .radius = 2, .variant = PM_BORDER_ZERO, .round = 512},
    {PM_OP_FILTER, .rows = 259, .cols = 131, .radius = 3, .variant = PM_BORDER_CLAMP, .round = 512},
    {PM_OP_FILTER, .rows = 259, .cols = 131, .radius = 1, .variant = PM_BORDER_ZERO, .round = 4},
    {PM_OP_FILTER, .rows = 131, .cols = 259, .radius = 2, .variant = PM_BORDER_CLAMP, .round = 4},
    {PM_OP_FILTER, .rows = 131, .cols = 259, .radius = 3, .variant = PM_BORDER_ZERO, .round = 16},
};
#define NCASES (int)(sizeof cases / sizeof *cases)

/* A case's device buffers, laid out as its caller would. */
typedef struct buffers {
  float *in[2], *out; /* 2D: inputs and output, pitched; reduce: in[0] the allocation, out the sum */
  float *x;           /* reduce: the input, offset floats into in[0] */
  size_t pitch, out_bytes;
} buffers;

static int checks, failures;

/* Prints a failed CUDA call and counts it; returns whether it succeeded. */
static int cuda_ok(cudaError_t e, const char *call, const char *what) {
  if (e == cudaSuccess) return 1;
  printf("FAIL %s: %s: %s (%s)\n", what, call, cudaGetErrorString(e), cudaGetErrorName(e));
  failures++;
  return 0;
}
#define CUDA_OK(call, what) cuda_ok((call), #call, (what))

/* Makes bufs for case k with h's inputs (from the op's prepare) copied in; padding is left as
 * cudaMalloc leaves it. */
static int place(const call_case *k, const pm__data *h, buffers *b, const char *what) {
  memset(b, 0, sizeof *b);
  if (k->op == PM_OP_REDUCE) {
    if (!CUDA_OK(cudaMalloc((void **)&b->in[0], (k->n + k->offset) * sizeof(float)), what)) return 0;
    b->x = b->in[0] + k->offset;
    b->out_bytes = sizeof(float);
    return CUDA_OK(cudaMemcpy(b->x, h->host_in[0], k->n * sizeof(float), cudaMemcpyHostToDevice), what) &&
           CUDA_OK(cudaMalloc((void **)&b->out, b->out_bytes), what);
  }
  size_t w = (size_t)h->inner * sizeof(float);
  b->pitch = (w + k->round - 1) / k->round * k->round;
  b->out_bytes = b->pitch * h->lines;
  for (int i = 0; i < 2 && h->host_in[i] != NULL; i++)
    if (!CUDA_OK(cudaMalloc((void **)&b->in[i], b->out_bytes), what) ||
        !CUDA_OK(cudaMemcpy2D(b->in[i], b->pitch, h->host_in[i], w, w, h->lines, cudaMemcpyHostToDevice), what))
      return 0;
  return CUDA_OK(cudaMalloc((void **)&b->out, b->out_bytes), what);
}

static void unplace(buffers *b) {
  cudaFree(b->in[0]);
  cudaFree(b->in[1]);
  cudaFree(b->out);
  memset(b, 0, sizeof *b);
}

/* The library call of case k on b, on stream. */
static int call(pm_ctx *c, const call_case *k, const pm__data *h, const buffers *b, cudaStream_t s) {
  if (k->op == PM_OP_MATADD)
    return pm_matadd(c, k->rows, k->cols, (pm_order)k->variant, b->out, b->pitch, b->in[0], b->pitch,
                     b->in[1], b->pitch, s);
  if (k->op == PM_OP_REDUCE) return pm_reduce_sum(c, k->n, b->x, b->out, s);
  return pm_filter(c, k->rows, k->cols, b->out, b->pitch, b->in[0], b->pitch, h->filter.weights.f32, k->radius,
                   (pm_border)k->variant, s);
}

/* Compares b's output with the reference: 2D bit for bit, reduce within the error bound of the
 * configuration the call was served (op->verify). Prints one line. */
static void check(pm_ctx *c, const call_case *k, pm__data *h, const buffers *b, const char *what) {
  const pm__op *op = pm__op_of(k->op);
  char detail[512] = "";
  int ok = 1;
  checks++;
  if (k->op == PM_OP_REDUCE) {
    size_t x = (size_t)b->x;
    pm__problem pr = {.n = k->n, .caller_align = pm__alignment_of(&x, 1)};
    pm__decision d;
    pm__data view = *h;
    double err = 0;
    view.out = b->out;
    int rc = pm__serve_decide(c, op, &pr, &d);
    if (rc == PM_OK) rc = op->verify(op, c, d.v, &view, &err);
    if (rc != PM_OK) ok = 0, snprintf(detail, sizeof detail, ": %s", pm_errmsg(c));
  } else {
    size_t w = (size_t)h->inner * sizeof(float), n = (size_t)h->inner * h->lines, bad = 0, first = 0;
    const float *ref = h->host_ref;
    float *got = malloc(n * sizeof *got);
    if (got == NULL) {
      ok = 0, snprintf(detail, sizeof detail, ": out of host memory");
    } else if (!CUDA_OK(cudaMemcpy2D(got, w, b->out, b->pitch, w, h->lines, cudaMemcpyDeviceToHost), what)) {
      ok = 0;
    } else {
      for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &ref[i], sizeof(float)) != 0 && bad++ == 0) first = i;
      if (bad)
        ok = 0, snprintf(detail, sizeof detail, ": %zu of %zu differ, the first (line %zu, %zu) is %.9g, want %.9g",
                         bad, n, first / h->inner, first % h->inner, got[first], ref[first]);
    }
    free(got);
  }
  printf("%s %s%s\n", ok ? "ok  " : "FAIL", what, detail);
  failures += !ok;
}

/* Fills b's output with NaN (all bits set), on the default stream, and waits. */
static int poison(const buffers *b, const char *what) {
  return CUDA_OK(cudaMemset(b->out, 0xff, b->out_bytes), what) &&
         CUDA_OK(cudaDeviceSynchronize(), what);
}

/* Case k on context c: called directly twice (cold, warm), then captured into a graph on a fresh
 * stream and replayed; each result checked. */
static void run_case(pm_ctx *c, int ctx_no, int ki) {
  const call_case *k = &cases[ki];
  const pm__op *op = pm__op_of(k->op);
  pm__problem pr = {.rows = k->rows, .cols = k->cols, .n = k->n, .radius = k->radius,
                    .variant = k->variant};
  pm__data h = {0};
  buffers b = {0};
  cudaStream_t s = NULL;
  cudaGraph_t g = NULL;
  cudaGraphExec_t ge = NULL;
  char ptext[96], what[256];
  pm__problem_text(op, &pr, ptext, sizeof ptext);
  if (op->prepare(op, c, &pr, 1000 + (uint64_t)ki, &h) != PM_OK) {
    printf("FAIL context %d: %s %s: prepare: %s\n", ctx_no, op->name, ptext, pm_errmsg(c));
    failures++;
    pm__data_free(&h);
    return;
  }
  snprintf(what, sizeof what, "context %d: %s %s", ctx_no, op->name, ptext);
  if (!place(k, &h, &b, what)) goto done;
  for (int pass = 0; pass < 2; pass++) {
    snprintf(what, sizeof what, "context %d %s: %s %s, pitch %zu, x offset %zu", ctx_no,
             pass ? "warm" : "cold", op->name, ptext, b.pitch, k->offset);
    if (!poison(&b, what)) goto done;
    int rc = call(c, k, &h, &b, NULL);
    if (rc != PM_OK) {
      printf("FAIL %s: %s\n", what, pm_errmsg(c));
      failures++;
      goto done;
    }
    if (!CUDA_OK(cudaDeviceSynchronize(), what)) goto done;
    check(c, k, &h, &b, what);
  }
  snprintf(what, sizeof what, "context %d graph: %s %s, pitch %zu, x offset %zu", ctx_no, op->name,
           ptext, b.pitch, k->offset);
  if (poison(&b, what) && CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), what) &&
      CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), what)) {
    int rc = call(c, k, &h, &b, s);
    int ended = CUDA_OK(cudaStreamEndCapture(s, &g), what);
    if (rc != PM_OK) {
      printf("FAIL %s: %s\n", what, pm_errmsg(c));
      failures++;
    } else if (ended && CUDA_OK(cudaGraphInstantiate(&ge, g, 0), what) &&
               CUDA_OK(cudaGraphLaunch(ge, s), what) && CUDA_OK(cudaStreamSynchronize(s), what)) {
      check(c, k, &h, &b, what);
    }
  }
done:
  if (ge != NULL) CUDA_OK(cudaGraphExecDestroy(ge), what);
  if (g != NULL) CUDA_OK(cudaGraphDestroy(g), what);
  if (s != NULL) CUDA_OK(cudaStreamDestroy(s), what);
  unplace(&b);
  pm__data_free(&h);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pmtune_sanitize_calls DB   (DB: a path where no file is yet)\n");
    return 2;
  }
  if (access(argv[1], F_OK) == 0) {
    fprintf(stderr, "pmtune_sanitize_calls: %s exists: give a path where no file is (the first "
            "context must find nothing tuned and no cubin)\n", argv[1]);
    return 2;
  }
  for (int ctx_no = 1; ctx_no <= 2; ctx_no++) {
    pm_ctx *c = NULL;
    pm_options o = {.device = 0, .db_path = argv[1]};
    if (pm_open(&c, &o) != PM_OK) {
      printf("FAIL context %d: pm_open: %s\n", ctx_no, pm_errmsg(c));
      pm_close(c);
      return 1;
    }
    if (ctx_no == 1) printf("%s (%s), database %s\n", c->dev.name, c->dev.arch, argv[1]);
    for (int ki = 0; ki < NCASES; ki++) run_case(c, ctx_no, ki);
    const char *notice = pm_notice(c);
    printf("context %d: notice: %s\n", ctx_no, notice ? notice : "(none)");
    pm_close(c);
  }
  printf("pmtune_sanitize_calls: %d checks, %d failed\n", checks, failures);
  return failures == 0 && checks > 0 ? 0 : 1;
}

/* test_gpu_kernel_file.c: kernels of a user's own tuned on a GPU as the built-in ops
 * are: the examples' every point verified against the seed's output and stored under the
 * kernel's name and content hash; a wrong point caught; a tolerance and an inout buffer. Skips
 * without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel_file.h"
#include "runtime.h"
#include "testutil.h"
#include "tune.h"

static pm_ctx *ctx;
static pm__db *db;
static pm__kernel_desc *kf;
static pm__ops_db_plus plus;
static int64_t gpu_id;
static char path[64], dir[] = "/tmp/pmtune-gpu-kfile-XXXXXX";

static void setup(void) {
  pm_test_require_gpu();
  cr_assert_eq(pm_open(&ctx, NULL), PM_OK, "%s", pm_errmsg(ctx));
  snprintf(path, sizeof path, "/tmp/pmtune-test-kfile-%d.db", (int)getpid());
  unlink(path);
  cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[96];
  pm__db_close(db);
  pm__kernel_desc_free(kf);
  pm_close(ctx);
  unlink(path);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TestSuite(gpu_kernel_file, .init = setup, .fini = teardown, .timeout = 600);

/* Loads the description at file, and opens the test's database for its op (current). */
static const pm__op *load(const char *file) {
  cr_assert_eq(pm__kernel_desc_load(ctx, file, &kf), PM_OK, "%s", pm_errmsg(ctx));
  const pm__op *op = pm__kernel_desc_op(kf);
  cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db_with(op, &plus), &db), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_eq(pm__db_gpu_put(db, &ctx->dev, 0, 0, &gpu_id), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_template_current(db, op->name, pm__op_template(op)->sha256), PM_OK, "%s",
               pm_errmsg(ctx));
  return op;
}

static long long count(const char *sql) { return pm_test_count(pm__db_handle(db), sql); }

static void tune(const pm__op *op, const pm__problem *pr, pm__tune_result *r) {
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_EXHAUSTIVE;
  o.seed = pm_test_seed();
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, op, pr, &o, r), PM_OK, "%s", pm_errmsg(ctx));
}

/* text to dir/name */
static void put(const char *name, const char *text) {
  char p[128];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fputs(text, f) >= 0, 1);
  cr_assert_eq(fclose(f), 0);
}

/* The example's file with `from` replaced by `to`, written to dir. */
static void copy_example(const char *name, const char *from, const char *to) {
  char p[256];
  snprintf(p, sizeof p, "%s/examples/kernels/%s", PM_SOURCE_DIR, name);
  char *text = pm__read_file(p, 1 << 20, NULL);
  cr_assert_not_null(text, "%s", p);
  char *at = from ? strstr(text, from) : NULL;
  cr_assert(from == NULL || at != NULL, "'%s' not in %s", from, name);
  size_t len = strlen(text) + (to ? strlen(to) : 0) + 1;
  char *out = malloc(len);
  if (at) snprintf(out, len, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  else snprintf(out, len, "%s", text);
  put(name, out);
  free(out);
  free(text);
}

/* Every valid point of the matadd example at an odd size (its tails run), right and stored under
 * the kernel's name and hash, with a winner; again, nothing is measured. */
Test(gpu_kernel_file, the_matadd_example_tunes_every_point_right) {
  const pm__op *op = load(PM_SOURCE_DIR "/examples/kernels/matadd.json");
  pm__problem pr = {.rows = 37, .cols = 1001};
  pm__tune_result r;
  tune(op, &pr, &r);
  cr_assert_eq(r.candidates, 56);
  cr_assert_eq(r.wrong, 0, "no point may differ from the seed");
  cr_assert_eq(r.failed, 0);
  cr_assert_eq(r.measured, 56);
  cr_assert(r.have_winner);
  cr_assert_gt(r.seed_ms, 0);
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM measurement WHERE op = 'my_matadd' AND template_sha256 = '%s'"
           " AND status = 'ok' AND verified = 1 AND problem = 'rows=37 cols=1001'",
           pm__op_template(op)->sha256);
  cr_assert_eq(count(sql), 56);
  cr_assert_eq(count("SELECT count(*) FROM winner WHERE op = 'my_matadd'"), 1);
  pm__tune_result again;
  tune(op, &pr, &again);
  cr_assert_eq(again.skipped, again.candidates);
  cr_assert_eq(again.measured, 0);
}

/* A source whose vector points get their tail wrong: exactly those are stored as wrong, with
 * the output and the first element that differs named. */
Test(gpu_kernel_file, a_wrong_point_is_caught) {
  copy_example("matadd.json", NULL, NULL);
  copy_example("matadd.cu", "c[j] = a[j] + b[j];", "c[j] = a[j] - b[j];");
  char file[128];
  snprintf(file, sizeof file, "%s/matadd.json", dir);
  const pm__op *op = load(file);
  pm__problem pr = {.rows = 37, .cols = 1001}; /* 37,037 floats: VEC 2 and 4 leave a tail */
  pm__tune_result r;
  tune(op, &pr, &r);
  /* VEC = 1 (the seed's): 20 points right; VEC = 2: 19 valid points, VEC = 4: 17, all wrong */
  cr_assert_eq(r.measured, 20);
  cr_assert_eq(r.wrong, 36);
  cr_assert_eq(count("SELECT count(*) FROM measurement WHERE status = 'wrong_result' AND"
                     " json_extract(params, '$.VEC') > 1 AND error LIKE 'c: %% elements differ"
                     " from the seed''s; the first at [37036]%%'"),
               36);
}

/* The transpose example: every point right, and the padded tile faster than the seed's. */
Test(gpu_kernel_file, the_transpose_example_beats_its_seed) {
  const pm__op *op = load(PM_SOURCE_DIR "/examples/kernels/transpose.json");
  pm__problem pr = {.rows = 2048, .cols = 3001};
  pm__tune_result r;
  tune(op, &pr, &r);
  cr_assert_eq(r.wrong, 0);
  cr_assert_eq(r.failed, 0);
  cr_assert_eq(r.measured, 45);
  cr_assert_lt(r.winner_ms, r.seed_ms, "the seed's tile has bank conflicts: %s %g ms, seed %g ms",
               r.winner, r.winner_ms, r.seed_ms);
}

static const char fma_source[] =
    "// y = x * x + y, fused (FMA 1) or rounded twice (FMA 0)\n"
    "extern \"C\" __global__ void sq(float *y, const float *x, long long n, float scale) {\n"
    "  long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float s = x[i] * scale;\n"
    "#if FMA\n"
    "  y[i] = __fmaf_rn(s, s, y[i]);\n"
    "#else\n"
    "  y[i] = __fadd_rn(__fmul_rn(s, s), y[i]);\n"
    "#endif\n"
    "}\n"
    "// the reference: rounded twice, one element a thread of any block\n"
    "extern \"C\" __global__ void sq_ref(float *y, const float *x, long long n, float scale) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = __fadd_rn(__fmul_rn(x[i] * scale, x[i] * scale), y[i]);\n"
    "}\n";

/* sq.json: the seed FMA = fma; more, the description's last fields (", \"tolerance\": 1e-6"). */
static void fma_description(int fma, const char *more) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"sq\", \"source\": \"sq.cu\", \"entry\": \"sq\", \"dims\": [\"n\"],"
           " \"params\": {\"BLOCK\": [128, 256], \"FMA\": [0, 1]},"
           " \"seed\": {\"BLOCK\": 256, \"FMA\": %d},"
           " \"grid\": [\"(:n + :BLOCK - 1) / :BLOCK\"], \"block\": [\":BLOCK\"],"
           " \"args\": [{\"name\": \"y\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"inout\"},"
           " {\"name\": \"x\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"in\"},"
           " {\"name\": \"n\", \"scalar\": \"i64\", \"value\": \":n\"},"
           " {\"name\": \"scale\", \"scalar\": \"f32\", \"value\": \"1.5\"}],"
           " \"bytes\": \"12 * :n\"%s}",
           fma, more);
  put("sq.cu", fma_source);
  put("sq.json", text);
}

/* Writes sq.json (fma_description's), loads it and tunes n = 1,000,003 exhaustively into r. */
static void tune_sq(int fma, const char *more, pm__tune_result *r) {
  char file[128];
  fma_description(fma, more);
  snprintf(file, sizeof file, "%s/sq.json", dir);
  const pm__op *op = load(file);
  pm__problem pr = {.n = 1000003};
  tune(op, &pr, r);
}

/* Bit for bit, the fused points differ from the seed's two roundings; within a tolerance they
 * pass. The inout buffer is the seed's inputs again before each point is checked, though timing
 * ran every point many times over it. */
Test(gpu_kernel_file, a_tolerance_and_an_inout_buffer) {
  pm__tune_result r;
  tune_sq(0, "", &r);
  cr_assert_eq(r.measured, 2, "FMA 0: bit for bit the seed's");
  cr_assert_eq(r.wrong, 2, "FMA 1: some elements round differently");
  pm__db_close(db), db = NULL;
  pm__kernel_desc_free(kf), kf = NULL;
  unlink(path);
  tune_sq(0, ", \"tolerance\": 1e-6", &r);
  cr_assert_eq(r.measured, 4);
  cr_assert_eq(r.wrong, 0);
  cr_assert_eq(count("SELECT count(*) FROM measurement WHERE json_extract(params, '$.FMA') = 1"
                     " AND max_error > 0 AND max_error <= 1e-6"),
               2);
}

/* C = A + B through pm_kernel_launch on u at rows x cols (on stream, captured into a graph
 * first where `graph`), checked element by element; the cache entry's source in *source. */
static void served_add(pm_ctx *u, pm_kernel *k, size_t rows, size_t cols, int graph, int *source) {
  size_t n = rows * cols, bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *got = malloc(bytes), *da, *db_, *dc;
  uint64_t seed = pm_test_seed() + rows * 31 + cols;
  cr_assert(a && b && got);
  for (size_t i = 0; i < n; i++) {
    a[i] = (float)(pm_test_rand(&seed) % 2000) / 7.0f - 100.0f;
    b[i] = (float)(pm_test_rand(&seed) % 2000) / 3.0f;
  }
  CUDA_OK(cudaMalloc((void **)&da, bytes));
  CUDA_OK(cudaMalloc((void **)&db_, bytes));
  CUDA_OK(cudaMalloc((void **)&dc, bytes));
  CUDA_OK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(db_, b, bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dc, 0xff, bytes));
  CUDA_OK(cudaDeviceSynchronize()); /* the stream below does not wait for the legacy one */
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  size_t dims[2] = {rows, cols};
  void *bufs[3] = {dc, da, db_};
  if (graph) {
    cudaGraph_t g;
    cudaGraphExec_t x;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cr_assert_eq(pm_kernel_launch(k, dims, bufs, s), PM_OK, "%s", pm_errmsg(u));
    CUDA_OK(cudaStreamEndCapture(s, &g));
    CUDA_OK(cudaGraphInstantiate(&x, g, 0));
    CUDA_OK(cudaGraphLaunch(x, s));
    CUDA_OK(cudaStreamSynchronize(s));
    CUDA_OK(cudaGraphExecDestroy(x));
    CUDA_OK(cudaGraphDestroy(g));
  } else {
    cr_assert_eq(pm_kernel_launch(k, dims, bufs, s), PM_OK, "%s", pm_errmsg(u));
    CUDA_OK(cudaStreamSynchronize(s));
  }
  CUDA_OK(cudaMemcpy(got, dc, bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(got[i], a[i] + b[i], "%zu x %zu: element %zu: %a, want %a", rows, cols, i,
                 got[i], a[i] + b[i]);
  pm__cache_key key;
  pm__problem pr = {.rows = (unsigned)rows, .cols = (unsigned)cols};
  pm__cache_key_of(k->op, &pr, &key);
  key.user = k->id;
  pm__entry *e = pm__cache_lookup(&u->serve->cache, &key);
  cr_assert_not_null(e);
  *source = e->source;
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_OK(cudaFree(da));
  CUDA_OK(cudaFree(db_));
  CUDA_OK(cudaFree(dc));
  free(a), free(b), free(got);
}

/* A scalar given at the call: alpha has no value in its description, so tuning ran
 * with 1 and every call gives it; out = alpha * in checked for each alpha, by a call and by a
 * graph captured with its value; a call without it is refused naming it. */
Test(gpu_kernel_file, a_scalar_is_given_at_the_call) {
  char cu[128], json[128];
  snprintf(cu, sizeof cu, "%s/scale.cu", dir);
  snprintf(json, sizeof json, "%s/scale.json", dir);
  FILE *f = fopen(cu, "w");
  cr_assert_not_null(f);
  fputs("#ifndef BLOCK\n#define BLOCK 256\n#endif\n"
        "extern \"C\" __global__ void scale(float *out, const float *in, float alpha, int n) {\n"
        "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
        "  if (i < n) out[i] = alpha * in[i];\n}\n", f);
  fclose(f);
  f = fopen(json, "w");
  cr_assert_not_null(f);
  fputs("{\"name\": \"scale\", \"source\": \"scale.cu\", \"entry\": \"scale\", \"dims\": [\"n\"],"
        " \"params\": {\"BLOCK\": [64, 128, 256]}, \"seed\": {\"BLOCK\": 256},"
        " \"grid\": [\"(:n + :BLOCK - 1) / :BLOCK\"], \"block\": [\":BLOCK\"],"
        " \"args\": [{\"name\": \"out\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"out\"},"
        " {\"name\": \"in\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"in\"},"
        " {\"name\": \"alpha\", \"scalar\": \"f32\"},"
        " {\"name\": \"n\", \"scalar\": \"i32\", \"value\": \":n\"}], \"bytes\": \"8 * :n\"}", f);
  fclose(f);
  const pm__op *op = load(json);
  pm__problem pr = {.n = 5000};
  pm__tune_result r;
  tune(op, &pr, &r);
  cr_assert(r.have_winner);
  cr_assert_eq(r.wrong, 0u);
  pm_ctx *u = NULL;
  pm_options o = {.db_path = path};
  pm_kernel *k = NULL;
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, json, &k), PM_OK, "%s", pm_errmsg(u));
  enum { N = 7001 };
  static float in[N], got[N];
  float *din, *dout;
  uint64_t seed = pm_test_seed();
  for (int i = 0; i < N; i++) in[i] = (float)(pm_test_rand(&seed) % 2000) / 7.0f - 100.0f;
  CUDA_OK(cudaMalloc((void **)&din, sizeof in));
  CUDA_OK(cudaMalloc((void **)&dout, sizeof got));
  CUDA_OK(cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice));
  size_t dims[1] = {N};
  void *bufs[2] = {dout, din};
  cr_assert_eq(pm_kernel_launch(k, dims, bufs, NULL), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(u), "scalar 0 (alpha) has no value"), "%s", pm_errmsg(u));
  const float alphas[3] = {3.0f, -0.5f, 2.0f};
  for (int t = 0; t < 3; t++) {
    float alpha = alphas[t];
    const void *scalars[2] = {&alpha, NULL}; /* n: its description's */
    CUDA_OK(cudaMemset(dout, 0xff, sizeof got));
    /* ended before the launch: the captured graph runs on a non-blocking stream, which the
     * memset's (the legacy default stream) does not wait for, nor it for that */
    CUDA_OK(cudaDeviceSynchronize());
    if (t < 2) {
      cr_assert_eq(pm_kernel_launch_with(k, dims, bufs, scalars, 2, NULL), PM_OK, "%s",
                   pm_errmsg(u));
    } else { /* captured: the graph keeps the value it was captured with */
      cudaStream_t s;
      cudaGraph_t g;
      cudaGraphExec_t x;
      CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
      cr_assert_eq(pm_kernel_launch_with(k, dims, bufs, scalars, 2, s), PM_OK, "%s",
                   pm_errmsg(u));
      CUDA_OK(cudaStreamEndCapture(s, &g));
      alpha = 99.0f; /* after the capture: not what runs */
      CUDA_OK(cudaGraphInstantiate(&x, g, 0));
      CUDA_OK(cudaGraphLaunch(x, s));
      CUDA_OK(cudaStreamSynchronize(s));
      CUDA_OK(cudaGraphExecDestroy(x));
      CUDA_OK(cudaGraphDestroy(g));
      CUDA_OK(cudaStreamDestroy(s));
    }
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
      cr_assert_eq(got[i], alphas[t] * in[i], "alpha %g: [%d] %a, want %a", alphas[t], i, got[i],
                   alphas[t] * in[i]);
  }
  CUDA_OK(cudaFree(din));
  CUDA_OK(cudaFree(dout));
  pm_close(u);
}

/* Tuning on first use: a context with autotune on serves a kernel of its own its seed
 * at a size nothing is known of, tunes that size in the background, and serves the winner from
 * then on; a context opened later finds it stored. Every result right. */
Test(gpu_kernel_file, a_kernel_is_tuned_on_first_use) {
  const char *example = PM_SOURCE_DIR "/examples/kernels/matadd.json";
  pm_ctx *u = NULL;
  pm_options o = {.db_path = path, .autotune = 1, .autotune_budget = 8};
  pm_kernel *k = NULL;
  int source = -1;
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &k), PM_OK, "%s", pm_errmsg(u));
  served_add(u, k, 333, 2049, 0, &source);
  cr_assert_eq(source, PM__FROM_DEFAULT, "its seed, at once");
  struct timespec nap = {0, 2000000};
  for (double t0 = pm__now_ms(); pm__autotune_busy(u, NULL); nanosleep(&nap, NULL))
    cr_assert_lt(pm__now_ms() - t0, 120000, "the background tuning did not end in 2 minutes");
  served_add(u, k, 333, 2049, 0, &source);
  cr_assert_eq(source, PM__FROM_EXACT, "tuned in the background");
  pm_close(u);
  o.autotune = 0;
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &k), PM_OK, "%s", pm_errmsg(u));
  served_add(u, k, 333, 2049, 0, &source);
  cr_assert_eq(source, PM__FROM_EXACT, "another context finds it stored");
  cr_assert_null(pm_notice(u), "nothing fell back: %s", pm_notice(u)); /* the first: no file */
  pm_close(u);
}

/* Tuned at one size, then served by one call from a context on that database: the winner at
 * that size (exact), the nearest tuned size's elsewhere, inside a graph's capture too (its first
 * call of the size there: the kernel loaded with the capture relaxed); without a database, the
 * seed. Every result right. */
Test(gpu_kernel_file, the_matadd_example_is_served_by_one_call) {
  const char *example = PM_SOURCE_DIR "/examples/kernels/matadd.json";
  const pm__op *op = load(example);
  pm__problem pr = {.rows = 37, .cols = 1001};
  pm__tune_result r;
  tune(op, &pr, &r);
  cr_assert(r.have_winner);
  pm_ctx *u = NULL;
  pm_options o = {.db_path = path};
  pm_kernel *k = NULL, *again = NULL;
  int source = -1;
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &k), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &again), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(k, again);
  served_add(u, k, 37, 1001, 0, &source);
  cr_assert_eq(source, PM__FROM_EXACT);
  served_add(u, k, 41, 1003, 0, &source);
  cr_assert_eq(source, PM__FROM_NEAREST);
  served_add(u, k, 37, 1001, 0, &source); /* from the cache */
  cr_assert_eq(source, PM__FROM_EXACT);
  served_add(u, k, 200, 301, 1, &source);
  cr_assert_eq(source, PM__FROM_NEAREST);
  pm_close(u);
  o.db_path = "/nonexistent/pmtune.db";
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &k), PM_OK, "%s", pm_errmsg(u));
  served_add(u, k, 3, 5, 0, &source);
  cr_assert_eq(source, PM__FROM_DEFAULT, "no database: the seed");
  pm_close(u);
}

/* A reference kernel in the description: its outputs, not the seed's, are what every point must
 * match; a seed that rounds differently from it is found wrong like any other point. */
Test(gpu_kernel_file, a_reference_kernel_judges_the_seed_too) {
  pm__tune_result r;
  tune_sq(1, ", \"reference\": \"sq_ref\"", &r);
  cr_assert_eq(r.measured, 2, "FMA 0: bit for bit the reference's");
  cr_assert_eq(r.wrong, 2, "FMA 1, the seed among them");
  cr_assert_eq(count("SELECT count(*) FROM measurement WHERE status = 'wrong_result' AND"
                     " is_seed = 1"),
               1);
}

/* The transpose example served too: tuned at one size, called at it and at another, each result
 * the input transposed. */
Test(gpu_kernel_file, the_transpose_example_is_served_by_one_call) {
  const char *example = PM_SOURCE_DIR "/examples/kernels/transpose.json";
  const pm__op *op = load(example);
  pm__problem pr = {.rows = 300, .cols = 500};
  pm__tune_result r;
  tune(op, &pr, &r);
  cr_assert_eq(r.wrong, 0);
  pm_ctx *u = NULL;
  pm_options o = {.db_path = path};
  pm_kernel *k = NULL;
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &k), PM_OK, "%s", pm_errmsg(u));
  const size_t sizes[2][2] = {{300, 500}, {301, 499}};
  for (int t = 0; t < 2; t++) {
    size_t rows = sizes[t][0], cols = sizes[t][1], n = rows * cols, bytes = n * sizeof(float);
    float *in = malloc(bytes), *got = malloc(bytes), *din, *dout;
    cr_assert(in && got);
    for (size_t i = 0; i < n; i++) in[i] = (float)i;
    CUDA_OK(cudaMalloc((void **)&din, bytes));
    CUDA_OK(cudaMalloc((void **)&dout, bytes));
    CUDA_OK(cudaMemcpy(din, in, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dout, 0xff, bytes));
    CUDA_OK(cudaDeviceSynchronize());
    size_t dims[2] = {rows, cols};
    void *bufs[2] = {dout, din};
    cr_assert_eq(pm_kernel_launch(k, dims, bufs, NULL), PM_OK, "%s", pm_errmsg(u));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, dout, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++)
        cr_assert_eq(got[j * rows + i], in[i * cols + j], "%zu x %zu: (%zu, %zu)", rows, cols, i, j);
    CUDA_OK(cudaFree(din));
    CUDA_OK(cudaFree(dout));
    free(in), free(got);
  }
  pm_close(u);
}

/* A kernel of three dims: the batched transpose tuned at one batch and served by one
 * call there (exact) and at another batch and shape (the nearest); every matrix of every batch
 * right. */
Test(gpu_kernel_file, a_batch_of_matrices_is_served_by_one_call) {
  const char *example = PM_SOURCE_DIR "/examples/kernels/batched_transpose.json";
  const pm__op *op = load(example);
  pm__problem pr = {.n = 3, .rows = 300, .cols = 200};
  pm__tune_result r;
  tune(op, &pr, &r);
  cr_assert_eq(r.wrong, 0);
  cr_assert(r.have_winner);
  pm_ctx *u = NULL;
  pm_options o = {.db_path = path};
  pm_kernel *k = NULL;
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &k), PM_OK, "%s", pm_errmsg(u));
  const size_t sizes[2][3] = {{3, 300, 200}, {5, 201, 333}};
  const pm__source want[2] = {PM__FROM_EXACT, PM__FROM_NEAREST};
  for (int t = 0; t < 2; t++) {
    size_t b = sizes[t][0], rows = sizes[t][1], cols = sizes[t][2], m = rows * cols, n = b * m,
           bytes = n * sizeof(float);
    float *in = malloc(bytes), *got = malloc(bytes), *din, *dout;
    cr_assert(in && got);
    for (size_t i = 0; i < n; i++) in[i] = (float)i;
    CUDA_OK(cudaMalloc((void **)&din, bytes));
    CUDA_OK(cudaMalloc((void **)&dout, bytes));
    CUDA_OK(cudaMemcpy(din, in, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dout, 0xff, bytes));
    CUDA_OK(cudaDeviceSynchronize());
    size_t dims[3] = {b, rows, cols};
    void *bufs[2] = {dout, din};
    cr_assert_eq(pm_kernel_launch(k, dims, bufs, NULL), PM_OK, "%s", pm_errmsg(u));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, dout, bytes, cudaMemcpyDeviceToHost));
    for (size_t z = 0; z < b; z++)
      for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
          cr_assert_eq(got[z * m + j * rows + i], in[z * m + i * cols + j],
                       "%zux%zux%zu: matrix %zu (%zu, %zu)", b, rows, cols, z, i, j);
    pm__problem at = {.n = (unsigned)b, .rows = (unsigned)rows, .cols = (unsigned)cols};
    pm__decision d;
    cr_assert_eq(pm__serve_decide_kernel(k, &at, &d), PM_OK);
    cr_assert_eq(d.source, want[t], "%zux%zux%zu: decided %d, from %ux%ux%u", b, rows, cols,
                 (int)d.source, d.tuned_n, d.tuned_rows, d.tuned_cols);
    cr_assert(d.tuned_n == 3 && d.tuned_rows == 300 && d.tuned_cols == 200);
    CUDA_OK(cudaFree(din));
    CUDA_OK(cudaFree(dout));
    free(in), free(got);
  }
  size_t zero[3] = {0, 10, 10};
  void *none[2] = {NULL, NULL};
  cr_assert_eq(pm_kernel_launch(k, zero, none, NULL), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(u), "batch = 0"), "%s", pm_errmsg(u));
  pm_close(u);
}

/* A tuned scalar: its value is part of the size, so a kernel tuned at k = 2 is served
 * its winner there (exact) and its seed at k = 3 (nothing tuned for it); each call's result is
 * its own k's. */
Test(gpu_kernel_file, a_tuned_scalar_chooses_the_configuration) {
  char cu[128], json[128];
  snprintf(cu, sizeof cu, "%s/times.cu", dir);
  snprintf(json, sizeof json, "%s/times.json", dir);
  FILE *f = fopen(cu, "w");
  cr_assert_not_null(f);
  fputs("#ifndef B\n#define B 256\n#endif\n"
        "extern \"C\" __global__ void times(float *o, const float *i, int k, int n) {\n"
        "  int x = blockIdx.x * B + threadIdx.x;\n  if (x < n) o[x] = i[x] * k;\n}\n", f);
  fclose(f);
  f = fopen(json, "w");
  cr_assert_not_null(f);
  fputs("{\"name\": \"times\", \"source\": \"times.cu\", \"entry\": \"times\", \"dims\": [\"n\"],"
        " \"params\": {\"B\": [64, 128, 256]}, \"seed\": {\"B\": 256},"
        " \"grid\": [\"(:n + :B - 1) / :B\"], \"block\": [\":B\"], \"args\": ["
        "{\"name\": \"o\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"out\"},"
        " {\"name\": \"i\", \"type\": \"f32\", \"count\": \":n\", \"dir\": \"in\"},"
        " {\"name\": \"k\", \"scalar\": \"i32\", \"tuned\": true},"
        " {\"name\": \"n\", \"scalar\": \"i32\", \"value\": \":n\"}], \"bytes\": \"8 * :n\"}", f);
  fclose(f);
  const pm__op *op = load(json);
  pm__problem pr = {.n = 5000, .radius = 2};
  pm__tune_result r;
  tune(op, &pr, &r);
  cr_assert_eq(r.wrong, 0);
  cr_assert(r.have_winner);
  cr_assert_eq(count("SELECT count(*) FROM winner WHERE op = 'times' AND problem = 'n=5000 k=2'"),
               1);
  pm_ctx *u = NULL;
  pm_options o = {.db_path = path};
  pm_kernel *k = NULL;
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, json, &k), PM_OK, "%s", pm_errmsg(u));
  enum { N = 5000 };
  static float in[N], got[N];
  float *din, *dout;
  for (int i = 0; i < N; i++) in[i] = (float)(i % 97) - 40.0f;
  CUDA_OK(cudaMalloc((void **)&din, sizeof in));
  CUDA_OK(cudaMalloc((void **)&dout, sizeof got));
  CUDA_OK(cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice));
  size_t dims[1] = {N};
  void *bufs[2] = {dout, din};
  const pm__source want[2] = {PM__FROM_EXACT, PM__FROM_DEFAULT};
  for (int kv = 2; kv <= 3; kv++) {
    const void *scalars[2] = {&kv, NULL};
    CUDA_OK(cudaMemset(dout, 0xff, sizeof got));
    cr_assert_eq(pm_kernel_launch_with(k, dims, bufs, scalars, 2, NULL), PM_OK, "%s",
                 pm_errmsg(u));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
      cr_assert_eq(got[i], in[i] * kv, "k=%d: [%d] %g, want %g", kv, i, got[i], in[i] * kv);
    pm__problem at = {.n = N, .radius = kv};
    pm__decision d;
    cr_assert_eq(pm__serve_decide_kernel(k, &at, &d), PM_OK);
    cr_assert_eq(d.source, want[kv - 2], "k=%d: decided %d", kv, (int)d.source);
  }
  CUDA_OK(cudaFree(din));
  CUDA_OK(cudaFree(dout));
  pm_close(u);
}

/* test_gpu_tune.c: the tuner on a GPU: every op's small problem tuned into a fresh database, the
 * winner stored verified with its speedup over the seed, a second run measuring and compiling
 * nothing, a stopped run resuming, compiling ahead leaving the tuning nothing to compile, and
 * `pmtune tune --seen` tuning the recorded sizes. Skips
 * without a GPU. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tune.h"

static pm_ctx *ctx;
static pm__db *db;
static int64_t gpu_id;
static char path[64];

static void setup(void) {
  pm_test_require_gpu();
  cr_assert_eq(pm_open(&ctx, NULL), PM_OK, "%s", pm_errmsg(ctx));
  snprintf(path, sizeof path, "/tmp/pmtune-test-tune-%d.db", (int)getpid());
  unlink(path);
  cr_assert_eq(pm__db_open(ctx, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_gpu_put(db, &ctx->dev, 0, 0, &gpu_id), PM_OK, "%s", pm_errmsg(ctx));
}
static void teardown(void) {
  pm__db_close(db);
  pm_close(ctx);
  unlink(path);
}

TestSuite(gpu_tune, .init = setup, .fini = teardown, .timeout = 600);

static long long count(const char *sql) { return pm_test_count(pm__db_handle(db), sql); }

/* The candidates every strategy adds to its draw: the seed, and the problem's default where it
 * is another valid point (the tuner measures it at every size). */
static uint64_t extra(const pm__op *op, const pm__problem *pr) {
  int v[PM__MAX_PARAMS] = {0};
  pm__limits lim = pm__limits_of(&ctx->dev);
  op->fallback(op, pr, v);
  return 1 + (!pm__is_seed(op, v) && op->check(op, v, pr, &lim) == NULL);
}

static void tune_twice(const pm__op *op, const pm__problem *pr) {
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = 40;
  o.seed = pm_test_seed();
  pm__tune_result r;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, op, pr, &o, &r), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(r.candidates, 40 + extra(op, pr), "the budget, and the seed and default on top");
  cr_assert_eq(r.measured + r.wrong + r.failed, r.candidates);
  cr_assert_eq(r.wrong, 0, "no variant of the space may be wrong");
  cr_assert(r.have_winner);
  cr_assert_gt(r.seed_ms, 0, "the seed is always measured");
  cr_assert_leq(r.winner_ms, r.seed_ms * 1.05, "the winner is no slower than the seed");
  cr_assert_gt(r.compiled, 0);
  cr_assert_gt(r.compile_ms, 0);
  cr_assert_gt(r.verify_ms, 0);
  cr_assert_gt(r.time_ms, 0);

  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM winner w JOIN measurement m ON m.id = w.measurement_id"
           " WHERE w.op = '%s' AND w.dtype = '%s' AND m.verified = 1 AND m.status = 'ok'"
           " AND w.speedup > 0",
           op->name, pm_dtype_name((pm_dtype)pr->dtype));
  cr_assert_eq(count(sql), 1, "one winner, verified, with a speedup over the seed");
  snprintf(sql, sizeof sql, "SELECT count(*) FROM measurement WHERE op = '%s' AND dtype = '%s'",
           op->name, pm_dtype_name((pm_dtype)pr->dtype));
  long long rows = count(sql);
  cr_assert_geq(rows, 41);

  /* again: everything is stored, so nothing is compiled or measured */
  pm__tune_result again;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, op, pr, &o, &again), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(again.skipped, again.candidates);
  cr_assert_eq(again.compiled, 0);
  cr_assert_eq(again.measured, 0);
  cr_assert_eq(count(sql), rows);
}

Test(gpu_tune, matadd_random_budget) {
  pm__problem pr = {.rows = 1000, .cols = 1003};
  tune_twice(&pm__op_matadd, &pr);
}

Test(gpu_tune, reduce_random_budget) {
  pm__problem pr = {.n = 1000003};
  tune_twice(&pm__op_reduce, &pr);
}

Test(gpu_tune, filter_random_budget) {
  pm__problem pr = {.rows = 700, .cols = 900, .radius = 2, .variant = PM_BORDER_ZERO};
  tune_twice(&pm__op_filter, &pr);
}

/* Compiling ahead (what `pmtune tune` does for the next problems while one is measured) stores
 * every kernel the tuning then wants: it compiles none itself, and finds what it would have. */
Test(gpu_tune, compiled_ahead_the_tuning_compiles_nothing) {
  pm__problem pr = {.rows = 900, .cols = 700, .radius = 1, .dtype = PM_BF16};
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = 24;
  o.seed = pm_test_seed();
  pm__tune_result ahead, r;
  cr_assert_eq(pm__tune_precompile(ctx, db, gpu_id, &pm__op_filter, &pr, &o, 3, &ahead), PM_OK,
               "%s", pm_errmsg(ctx));
  cr_assert_eq(ahead.candidates, 24 + extra(&pm__op_filter, &pr));
  cr_assert_gt(ahead.compiled, 0);
  cr_assert_eq(ahead.measured, 0, "compiling ahead measures nothing");
  cr_assert_eq(count("SELECT count(*) FROM measurement"), 0);
  cr_assert_eq(count("SELECT count(*) FROM cubin"), (long long)ahead.compiled);
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_filter, &pr, &o, &r), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_eq(r.compiled, 0, "every kernel was compiled ahead");
  cr_assert_eq(r.kernels, ahead.kernels);
  cr_assert_eq(r.candidates, ahead.candidates);
  cr_assert_eq(r.wrong + r.failed, 0);
  cr_assert(r.have_winner);

  volatile sig_atomic_t stop = 1; /* a stopped run compiles nothing more */
  pm__problem other = {.rows = 900, .cols = 700, .radius = 2};
  o.stop = &stop;
  cr_assert_eq(pm__tune_precompile(ctx, db, gpu_id, &pm__op_filter, &other, &o, 0, &ahead), PM_OK,
               "%s", pm_errmsg(ctx));
  cr_assert_eq(ahead.compiled, 0);
}

/* Each type its own problem: a bf16 matadd and an f64 add tuned beside the float ones, stored
 * under their dtype, each with its winner. */
Test(gpu_tune, matadd_bf16_and_add_f64_random_budget) {
  pm__problem m = {.rows = 1000, .cols = 1003, .dtype = PM_BF16}, a = {.n = 100003, .dtype = PM_F64};
  tune_twice(&pm__op_matadd, &m);
  tune_twice(&pm__op_add, &a);
  cr_assert_eq(count("SELECT count(*) FROM winner WHERE op = 'matadd' AND dtype = 'bf16'"), 1);
  cr_assert_eq(count("SELECT count(*) FROM winner WHERE op = 'add' AND dtype = 'f64'"), 1);
  cr_assert_eq(count("SELECT count(*) FROM measurement WHERE dtype <> 'f32' AND"
                     " dtype NOT IN ('bf16', 'f64')"), 0);
  pm__problem f32 = m;
  f32.dtype = PM_F32;
  tune_twice(&pm__op_matadd, &f32); /* the float problem of the same size: measured anew */
  cr_assert_eq(count("SELECT count(*) FROM winner WHERE op = 'matadd'"), 2);
}

Test(gpu_tune, staged_search_adds_neighbours_of_the_best) {
  pm__problem pr = {.rows = 640, .cols = 480};
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_STAGED;
  o.budget = 30;
  pm__tune_result r;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &r), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_gt(r.candidates, 31, "the draw and the seed, then neighbours: %llu",
               (unsigned long long)r.candidates);
  cr_assert_eq(r.measured + r.wrong + r.failed, r.candidates);
  cr_assert_eq(r.wrong, 0);
  cr_assert(r.have_winner);
  cr_assert_leq(r.winner_ms, r.seed_ms * 1.05);
  pm__tune_result again;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &again), PM_OK);
  cr_assert_eq(again.measured, 0, "the same draw, all stored: nothing measured again");
  cr_assert_eq(again.compiled, 0);
}

Test(gpu_tune, a_stopped_run_resumes_where_it_stopped) {
  pm__problem pr = {.rows = 300, .cols = 200, .variant = PM_COL_MAJOR};
  pm__tune_opts o;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = 30;
  volatile sig_atomic_t stop = 0;
  o.stop = &stop;
  o.deadline_ms = pm__now_ms() - 1; /* past already: stops before the first candidate */
  pm__tune_result r;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &r), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert(r.stopped);
  cr_assert_eq(r.measured, 0);
  o.deadline_ms = 0;
  cr_assert_eq(pm__tune_problem(ctx, db, gpu_id, 0, &pm__op_matadd, &pr, &o, &r), PM_OK);
  cr_assert_not(r.stopped);
  cr_assert_eq(r.measured + r.failed + r.wrong, 30 + extra(&pm__op_matadd, &pr));
  cr_assert_eq(r.compiled, 0, "the stopped run had compiled and stored the cubins");
}

/* Runs `pmtune ARGS --db path` on this test's database; returns its exit status, its standard
 * output in out. */
static int run_pmtune(const char *args, char *out, size_t cap) {
  char cmd[1024], file[96];
  snprintf(file, sizeof file, "%s.out", path);
  snprintf(cmd, sizeof cmd, "'%s' %s --db %s >%s 2>&1", PMTUNE_BIN, args, path, file);
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "%s", cmd);
  FILE *f = fopen(file, "rb");
  size_t n = f ? fread(out, 1, cap - 1, f) : 0;
  out[n] = '\0';
  if (f) fclose(f);
  unlink(file);
  return WEXITSTATUS(st);
}

static int has_exact_winner(const pm__db_problem *p) {
  pm__db_winner w;
  return pm__db_winner_get(db, &ctx->dev, p, pm__template_find(p->op)->sha256, &w) == PM_OK;
}

Test(gpu_tune, tune_seen_tunes_the_most_called_recorded_sizes_without_a_winner) {
  static char out[1 << 16];
  pm__db_problem tuned = {.op = "matadd", .dtype = "f32", .rows = 64, .cols = 64,
                          .variant = "order=row"};
  pm__db_problem ps[] = {
      tuned,                                                                      /* 1000 calls */
      {.op = "matadd", .dtype = "f32", .rows = 300, .cols = 200, .variant = "order=row"}, /* 50 */
      {.op = "reduce", .dtype = "f32", .n = 5000},                                /* 20 */
      {.op = "reduce", .dtype = "f32", .n = 7000}};                               /* 1 */
  /* 64x64 has a winner already (made up here: it must be passed over, not tuned). */
  pm__db_measurement m = {.gpu_id = gpu_id, .problem = tuned,
                          .template_sha256 = pm__template_find("matadd")->sha256,
                          .params = "{\"bx\":32,\"by\":8}", .outcome = PM__DB_MEASURED,
                          .median_ms = 1, .min_ms = 1, .max_ms = 1, .samples = 1, .gbps = 1,
                          .verified = 1};
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__db_seen_add(db, gpu_id, ps, (int64_t[]){1000, 50, 20, 1}, 4), PM_OK, "%s",
               pm_errmsg(ctx));
  cr_assert_not(has_exact_winner(&ps[1]));
  cr_assert_not(has_exact_winner(&ps[2]));

  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  char args[256];
  snprintf(args, sizeof args, "tune --seen=2 --device %d --strategy random --budget 10", device);
  int st = run_pmtune(args, out, sizeof out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert_not_null(strstr(out, "tuning the 2 most-called recorded sizes"), "%s", out);
  cr_assert_not_null(strstr(out, "300x200 row-major"), "%s", out);
  cr_assert_not_null(strstr(out, "n=5000"), "%s", out);
  cr_assert_null(strstr(out, "n=7000"), "only the 2 most called: %s", out);
  cr_assert(has_exact_winner(&ps[1]), "300x200 has its exact winner now: %s", out);
  cr_assert(has_exact_winner(&ps[2]), "n=5000 has its exact winner now: %s", out);
  cr_assert_not(has_exact_winner(&ps[3]), "n=7000 was not asked for");
  cr_assert_null(strstr(out, "seen    matadd  64x64"), "the size tuned already was passed over");
  /* carrying times at most the seed, the default and the best 3 of 300x200 there */
  cr_assert_leq(count("SELECT count(*) FROM measurement WHERE problem = 'rows=64 cols=64 order=row'"),
                1 + 5, "the size tuned already was passed over");
  cr_assert_eq(count("SELECT count(*) FROM measurement WHERE problem = 'n=7000'"), 0);

  /* Every recorded matadd size has its winner now: nothing to tune, status 0. */
  snprintf(args, sizeof args, "tune --seen --op matadd --device %d", device);
  st = run_pmtune(args, out, sizeof out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert_not_null(strstr(out, "every recorded size (2) has an exact winner"), "%s", out);
  /* And the listing says which are tuned. */
  st = run_pmtune("show --seen", out, sizeof out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert_not_null(strstr(out, "n=7000"), "%s", out);
  cr_assert_not_null(strstr(out, "1  -\n"), "n=7000 has no winner: %s", out);
}

/* A kernel of one's own records the sizes it serves without an exact winner as the built-in ops
 * do, and `pmtune tune --kernel FILE --seen` tunes them, passing over the built-in
 * ops' recorded sizes; a second run finds nothing left. */
Test(gpu_tune, a_kernel_s_recorded_sizes_are_tuned_by_tune_kernel_seen) {
  static char out[1 << 16];
  const char *example = PM_SOURCE_DIR "/examples/kernels/matadd.json";
  pm_ctx *u = NULL;
  pm_kernel *k = NULL;
  pm_options o = {.db_path = path, .record = 1};
  float *d = NULL;
  size_t dims[2] = {300, 201};
  CUDA_OK(cudaMalloc((void **)&d, 3 * 300 * 201 * sizeof *d));
  CUDA_OK(cudaMemset(d, 0, 3 * 300 * 201 * sizeof *d));
  void *bufs[3] = {d, d + 300 * 201, d + 2 * 300 * 201};
  cr_assert_eq(pm_open(&u, &o), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_kernel_open(u, example, &k), PM_OK, "%s", pm_errmsg(u));
  for (int i = 0; i < 3; i++)
    cr_assert_eq(pm_kernel_launch(k, dims, bufs, NULL), PM_OK, "%s", pm_errmsg(u));
  cr_assert_eq(pm_reduce_sum(u, 5000, d, d + 300 * 201, NULL), PM_OK, "%s", pm_errmsg(u));
  CUDA_OK(cudaDeviceSynchronize());
  pm_close(u);
  CUDA_OK(cudaFree(d));
  cr_assert_eq(count("SELECT calls FROM seen WHERE op = 'my_matadd' AND rows = 300 AND cols = 201"
                     " AND dtype = 'f32'"),
               3, "the kernel's calls are recorded under its name");
  cr_assert_eq(count("SELECT calls FROM seen WHERE op = 'reduce' AND n = 5000"), 1);

  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  char args[512];
  snprintf(args, sizeof args, "tune --kernel %s --seen --device %d --strategy random --budget 10",
           example, device);
  int st = run_pmtune(args, out, sizeof out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert_not_null(strstr(out, "tuning the 1 most-called recorded size"), "%s", out);
  cr_assert_not_null(strstr(out, "seen    my_matadd 300x201"), "%s", out);
  cr_assert_null(strstr(out, "n=5000"), "the built-in op's size is not the kernel's: %s", out);
  cr_assert_gt(count("SELECT count(*) FROM winner WHERE op = 'my_matadd' AND rows = 300 AND"
                     " cols = 201"),
               0, "300x201 has its exact winner now: %s", out);
  st = run_pmtune(args, out, sizeof out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert_not_null(strstr(out, "every recorded size (1) has an exact winner"), "%s", out);
}

/* `pmtune tune --carry`: after an import of another GPU of this model (a fleet's
 * merge), it searches nothing and times, on this GPU, each of the group's sizes' best at the
 * sizes around it, the imported sizes included, but not what the other GPU measured there. */
Test(gpu_tune, tune_carry_carries_across_an_import_of_the_same_model) {
  static char out[1 << 16];
  pm__device_info twin = ctx->dev; /* the same model, another GPU */
  snprintf(twin.uuid, sizeof twin.uuid, "GPU-00000000-0000-0000-0000-0000000000aa");
  int64_t twin_id = 0;
  cr_assert_eq(pm__db_gpu_put(db, &twin, 0, 0, &twin_id), PM_OK, "%s", pm_errmsg(ctx));
  const char *sha = pm__template_find("reduce")->sha256;
  const pm__op *op = &pm__op_reduce;
  /* the twin measured the seed and another valid point (the default) at n=4096, the seed
   * alone at n=65536, verified: the default at n=65536 is the one pair left to time */
  for (int s = 0; s < 2; s++) {
    pm__problem pr = {.n = s ? 65536 : 4096};
    int v[PM__MAX_PARAMS];
    memcpy(v, op->seed, sizeof v);
    char config[PM__CONFIG_TEXT], params[PM__CONFIG_TEXT * 2];
    for (int k = 0; k < (s ? 1 : 2); k++) {
      if (k == 1) op->fallback(op, &pr, v); /* the default: another point */
      pm__config_text(op, v, config, sizeof config);
      pm__config_json(op, v, params, sizeof params);
      pm__db_problem p;
      pm__op_db_problem(op, &pr, &p);
      pm__db_measurement m = {.gpu_id = twin_id, .problem = p, .template_sha256 = sha,
                              .params = params, .outcome = PM__DB_MEASURED, .median_ms = 1.0 + k,
                              .min_ms = 1, .max_ms = 3, .samples = 5, .gbps = 1, .verified = 1,
                              .is_seed = k == 0};
      cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(ctx));
    }
  }
  cr_assert_eq(pm__db_template_current(db, "reduce", sha), PM_OK);
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  char args[256];
  snprintf(args, sizeof args, "tune --carry --op reduce --size 4096 --device %d", device);
  int st = run_pmtune(args, out, sizeof out);
  cr_assert_eq(st, 0, "%s", out);
  /* no search: the one line counting candidates is the total, of none */
  const char *all = strstr(out, "all     0 candidates (");
  cr_assert_not_null(all, "no search: %s", out);
  const char *counted = all + strlen("all     0 ");
  cr_assert(strstr(out, "candidates (") == counted && strstr(counted + 1, "candidates (") == NULL,
            "no search: %s", out);
  cr_assert_not_null(strstr(out, "carry   reduce  2 sizes like n=4096"), "%s", out);
  cr_assert_eq(count("SELECT count(*) FROM measurement m JOIN gpu g ON g.id = m.gpu_id"
                     " WHERE g.uuid <> 'GPU-00000000-0000-0000-0000-0000000000aa'"),
               1, "the default at n=65536 alone measured on this GPU: %s", out);
}

/* test_gpu_serve.c: the library calls on a GPU: results equal to the reference (matadd, add,
 * filter: bit for bit; reduce: within its bound) at every level of the chain (built-in default,
 * tuned for exactly the size, nearest tuned size), at awkward sizes, pitches and pointers, packed
 * matadds served as add and padded ones as matadd, from several threads at once (and while the
 * background tuner works), with a corrupt database, and bad arguments refused. Skips without
 * a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dbtest.h"
#include "runtime.h"
#include "testutil.h"
#include "tune.h"

static char path[64];

static void setup(void) {
  pm_test_require_gpu();
  snprintf(path, sizeof path, "/tmp/pmtune-test-serve-%d.db", (int)getpid());
  unlink(path);
}
static void teardown(void) { unlink(path); }
TestSuite(gpu_serve, .init = setup, .fini = teardown, .timeout = 900);

static pm_ctx *open_ctx(const char *db) {
  pm_ctx *c = NULL;
  pm_options o = {.db_path = db};
  cr_assert_eq(pm_open(&c, &o), PM_OK, "%s", pm_errmsg(c));
  return c;
}

/* The op that serves pm_matadd on rows x cols in `order` with `extra` bytes of padding on each
 * line (pointers from cudaMalloc), and *pr its problem as the cache keys it: add where the
 * matrices are packed (one line, or no padding) and hold at most 2^31 - 1 floats, else matadd. */
static const pm__op *matadd_served_as(unsigned rows, unsigned cols, int colmajor, size_t extra,
                                      pm__problem *pr) {
  unsigned lines = colmajor ? cols : rows, inner = colmajor ? rows : cols;
  unsigned long long n = (unsigned long long)rows * cols;
  if ((lines == 1 || extra == 0) && n <= 0x7fffffffu) {
    *pr = (pm__problem){.n = (unsigned)n, .caller_align = 16};
    return &pm__op_add;
  }
  size_t al[1] = {(size_t)inner * 4 + extra};
  *pr = (pm__problem){.rows = rows, .cols = cols, .variant = colmajor,
                      .caller_align = lines > 1 ? pm__alignment_of(al, 1) : 16};
  return &pm__op_matadd;
}

/* The choice c has cached for op on pr, or NULL. */
static const pm__entry *cached(pm_ctx *c, const pm__op *op, const pm__problem *pr) {
  pm__cache_key k;
  pm__cache_key_of(op, pr, &k);
  return pm__cache_lookup(&c->serve->cache, &k);
}

/* Whether c has cached a choice of matadd for rows x cols in that order, for any alignment. */
static int cached_as_matadd(pm_ctx *c, unsigned rows, unsigned cols, int colmajor) {
  int any = 0;
  for (unsigned align = 4; align <= 16; align *= 2) {
    pm__problem pr = {.rows = rows, .cols = cols, .variant = colmajor, .caller_align = align};
    any |= cached(c, &pm__op_matadd, &pr) != NULL;
  }
  return any;
}

/* Runs matadd through pm_matadd on rows x cols in `order`, extra bytes on each line's pitch,
 * and compares with the host's a + b. Returns the source of the decision that served it: add's
 * for packed matrices (matadd_served_as), else matadd's. */
static pm__source check_matadd(pm_ctx *c, unsigned rows, unsigned cols, int colmajor, size_t extra) {
  unsigned lines = colmajor ? cols : rows, inner = colmajor ? rows : cols;
  size_t n = (size_t)rows * cols, w = (size_t)inner * 4, pitch = w + extra;
  uint64_t seed = pm_test_seed();
  float *h[3], *dv[3];
  for (int i = 0; i < 3; i++) {
    cr_assert_not_null(h[i] = malloc(n * 4));
    CUDA_OK(cudaMalloc((void **)&dv[i], pitch * lines));
  }
  pm__random_fill(h[0], n, seed);
  pm__random_fill(h[1], n, seed + 1);
  for (int i = 0; i < 2; i++) CUDA_OK(cudaMemcpy2D(dv[i], pitch, h[i], w, w, lines, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dv[2], 0xff, pitch * lines));
  cr_assert_eq(pm_matadd(c, rows, cols, colmajor ? PM_COL_MAJOR : PM_ROW_MAJOR, dv[2], pitch, dv[0],
                         pitch, dv[1], pitch, NULL), PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaMemcpy2D(h[2], w, dv[2], pitch, w, lines, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    if (!(h[2][i] == h[0][i] + h[1][i]))
      cr_assert_fail("matadd %ux%u %s pitch %zu (seed %#llx): element %zu is %a, want %a", rows,
                     cols, colmajor ? "col" : "row", pitch, (unsigned long long)seed, i, h[2][i],
                     h[0][i] + h[1][i]);
  for (int i = 0; i < 3; i++) free(h[i]), cudaFree(dv[i]);
  pm__problem pr;
  const pm__op *op = matadd_served_as(rows, cols, colmajor, extra, &pr);
  cr_assert(cached(c, op, &pr), "matadd %ux%u %s pitch %zu is served (and cached) as %s", rows,
            cols, colmajor ? "col" : "row", pitch, op->name);
  pm__decision d;
  pm__serve_decide(c, op, &pr, &d);
  return d.source;
}

/* Runs pm_add on n floats at pointers `off` floats past cudaMalloc's (off[0]: C, 1: A, 2: B;
 * in place: C is A), the floats around C's poisoned, and compares with the host's a + b, and the
 * floats around with the poison. Returns the source of the decision that served it. */
static pm__source check_add(pm_ctx *c, unsigned n, const unsigned off[3], int in_place) {
  enum { GUARD = 8 }; /* floats of poison after C's last */
  uint64_t seed = pm_test_seed();
  size_t bytes = ((size_t)n + 4 + GUARD) * 4;
  float *h[3], *dv[3], *p[3];
  for (int i = 0; i < 3; i++) {
    cr_assert_not_null(h[i] = malloc(bytes));
    CUDA_OK(cudaMalloc((void **)&dv[i], bytes));
    p[i] = dv[i] + off[i];
  }
  pm__random_fill(h[1], n, seed);
  pm__random_fill(h[2], n, seed + 1);
  CUDA_OK(cudaMemset(dv[0], 0xff, bytes));
  CUDA_OK(cudaMemcpy(p[1], h[1], (size_t)n * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(p[2], h[2], (size_t)n * 4, cudaMemcpyHostToDevice));
  float *C = in_place ? p[1] : p[0];
  cr_assert_eq(pm_add(c, n, C, p[1], p[2], NULL), PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaMemcpy(h[0], C, (size_t)n * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    if (!(h[0][i] == h[1][i] + h[2][i]))
      cr_assert_fail("add n=%u offsets %u %u %u%s (seed %#llx): element %zu is %a, want %a", n,
                     off[0], off[1], off[2], in_place ? " in place" : "", (unsigned long long)seed,
                     i, h[0][i], h[1][i] + h[2][i]);
  if (!in_place) { /* nothing written before C or after its last float */
    CUDA_OK(cudaMemcpy(h[0], dv[0], bytes, cudaMemcpyDeviceToHost));
    const unsigned *bits = (const unsigned *)h[0];
    for (size_t i = 0; i < bytes / 4; i++)
      if (i < off[0] || i >= off[0] + (size_t)n)
        cr_assert_eq(bits[i], 0xffffffffu, "add n=%u: float %zu of C's buffer written (C is %u to %zu)",
                     n, i, off[0], off[0] + (size_t)n - 1);
  }
  for (int i = 0; i < 3; i++) free(h[i]), cudaFree(dv[i]);
  size_t addr[3] = {(size_t)C, (size_t)p[1], (size_t)p[2]};
  pm__problem pr = {.n = n, .caller_align = pm__alignment_of(addr, 3)};
  const pm__entry *e = cached(c, &pm__op_add, &pr);
  cr_assert_not_null(e, "add n=%u align %u is cached", n, pr.caller_align);
  int vec = 0;
  while (strcmp(pm__op_add.params[vec].name, "vec") != 0) vec++;
  cr_assert_eq(pr.caller_align % (unsigned)(4 * e->choice->v[vec]), 0, "add n=%u: pointers aligned to %u "
               "bytes are served vec=%d", n, pr.caller_align, e->choice->v[vec]);
  pm__decision d;
  pm__serve_decide(c, &pm__op_add, &pr, &d);
  return d.source;
}

/* Calls op through the library on d's buffers (served as for d's problem), on the default
 * stream, and asserts that the call was taken. */
static void call_op(pm_ctx *c, const pm__op *op, pm__data *d) {
  cr_assert_eq(pm_test_call_op(c, op, d, NULL), PM_OK, "%s: %s", op->name, pm_errmsg(c));
}

static pm__source check_filter(pm_ctx *c, unsigned rows, unsigned cols, int r, int zero) {
  pm__problem pr = {.rows = rows, .cols = cols, .radius = r, .variant = zero};
  pm__data ref = {0};
  cr_assert_eq(pm__op_filter.prepare(&pm__op_filter, c, &pr, pm_test_seed(), &ref), PM_OK, "%s",
               pm_errmsg(c));
  cr_assert_eq(pm__data_place(c, &ref, 128), PM_OK, "%s", pm_errmsg(c)); /* poisoned output */
  call_op(c, &pm__op_filter, &ref);
  CUDA_OK(cudaDeviceSynchronize());
  double err;
  cr_assert_eq(pm__op_filter.verify(&pm__op_filter, c, NULL, &ref, &err), PM_OK, "%s",
               pm_errmsg(c));
  pm__data_free(&ref);
  pm__decision d;
  pr.caller_align = 16;
  pm__serve_decide(c, &pm__op_filter, &pr, &d);
  return d.source;
}

static pm__source check_reduce(pm_ctx *c, unsigned n) {
  pm__problem pr = {.n = n};
  pm__data ref = {0};
  cr_assert_eq(pm__op_reduce.prepare(&pm__op_reduce, c, &pr, pm_test_seed(), &ref), PM_OK, "%s",
               pm_errmsg(c));
  cr_assert_eq(pm__data_place(c, &ref, 0), PM_OK, "%s", pm_errmsg(c));
  call_op(c, &pm__op_reduce, &ref);
  CUDA_OK(cudaDeviceSynchronize());
  pr.caller_align = 16;
  pm__decision d;
  pm__serve_decide(c, &pm__op_reduce, &pr, &d);
  double err;
  cr_assert_eq(pm__op_reduce.verify(&pm__op_reduce, c, d.v, &ref, &err), PM_OK, "n=%u with %s: %s",
               n, d.config, pm_errmsg(c));
  float first, again;
  CUDA_OK(cudaMemcpy(&first, ref.out, 4, cudaMemcpyDeviceToHost));
  call_op(c, &pm__op_reduce, &ref);
  CUDA_OK(cudaMemcpy(&again, ref.out, 4, cudaMemcpyDeviceToHost));
  cr_assert_eq(memcmp(&first, &again, 4), 0, "n=%u: %a then %a", n, first, again);
  pm__data_free(&ref);
  return d.source;
}

static void tune(pm_ctx *c, const pm__op *op, pm__problem pr) {
  pm__db *db;
  int64_t gpu;
  cr_assert_eq(pm__db_open(c, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_gpu_put(db, &c->dev, 0, 0, &gpu), PM_OK, "%s", pm_errmsg(c));
  pm__tune_opts o;
  pm__tune_result r;
  pm__tune_opts_default(&o);
  o.strategy = PM__STRATEGY_RANDOM;
  o.budget = 25;
  cr_assert_eq(pm__tune_problem(c, db, gpu, 0, op, &pr, &o, &r), PM_OK, "%s", pm_errmsg(c));
  pm__db_close(db);
}

/* Stores config (text) as the verified winner of op on pr for c's GPU, as if tuned. */
static void put_winner(pm_ctx *c, const pm__op *op, pm__problem pr, const char *config) {
  pm__db *db;
  int64_t gpu;
  int v[PM__MAX_PARAMS];
  char params[256];
  pm__db_problem p;
  cr_assert_eq(pm__config_parse(c, op, config, v), PM_OK, "%s", pm_errmsg(c));
  pm__config_json(op, v, params, sizeof params);
  pm__op_db_problem(op, &pr, &p);
  cr_assert_eq(pm__db_open(c, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_gpu_put(db, &c->dev, 0, 0, &gpu), PM_OK, "%s", pm_errmsg(c));
  pm__db_measurement m = {.gpu_id = gpu, .problem = p,
                          .template_sha256 = pm__template_find(op->name)->sha256,
                          .params = params, .outcome = PM__DB_MEASURED, .median_ms = 0.001,
                          .min_ms = 0.001, .max_ms = 0.001, .samples = 1, .gbps = 1,
                          .verified = 1};
  cr_assert_eq(pm__db_measurement_put(db, &m), PM_OK, "%s", pm_errmsg(c));
  pm__db_close(db);
}

/* One stream's reduce scratch serves every variant: the flagged partials of combine=3 live apart
 * from the plain partials of combine=0 and 2, which would otherwise read as flags (a wrong sum,
 * or a wait that never ends). Sizes served in turn on one stream, each checked. */
Test(gpu_serve, reduce_variants_share_one_scratch) {
  static const char *const configs[] = {
      "block=256 items=1 vec=1 step=0 combine=0 acc=0 grid=0",
      "block=256 items=1 vec=1 step=0 combine=3 acc=0 grid=0",
      "block=128 items=2 vec=2 step=2 combine=2 acc=1 grid=0",
      "block=64 items=4 vec=4 step=1 combine=3 acc=0 grid=8",
  };
  const unsigned n[] = {300007, 300011, 300013, 300017};
  pm_ctx *c = open_ctx(path);
  for (int i = 0; i < 4; i++) put_winner(c, &pm__op_reduce, (pm__problem){.n = n[i]}, configs[i]);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 4; i++)
      cr_assert_eq(check_reduce(c, n[i]), PM__FROM_EXACT, "n=%u: %s is served", n[i], configs[i]);
  pm_close(c);
}

Test(gpu_serve, defaults_where_nothing_is_tuned) {
  pm_ctx *c = open_ctx(path); /* no such file */
  cr_assert_eq(check_matadd(c, 1, 1, 0, 0), PM__FROM_DEFAULT);
  cr_assert_not_null(pm_notice(c), "the fallback is said");
  check_matadd(c, 1, 100003, 0, 0);
  check_matadd(c, 100003, 1, 0, 0);
  check_matadd(c, 4097, 3001, 0, 60);
  check_matadd(c, 4097, 3001, 1, 4);
  cr_assert_eq(check_reduce(c, 1), PM__FROM_DEFAULT);
  check_reduce(c, 100003);
  check_reduce(c, (1u << 28) + 3);
  for (int r = 1; r <= 3; r++) {
    cr_assert_eq(check_filter(c, 2, 3, r, 0), PM__FROM_DEFAULT);
    check_filter(c, 4097, 3001, r, r == 2);
  }
  cr_assert_eq(access(path, F_OK), 0, "compiled kernels were stored for the next process");
  pm_close(c);
}

Test(gpu_serve, exact_then_nearest_tuned_sizes) {
  pm_ctx *c = open_ctx(path);
  tune(c, &pm__op_matadd, (pm__problem){.rows = 1000, .cols = 1000});
  tune(c, &pm__op_reduce, (pm__problem){.n = 1000000});
  tune(c, &pm__op_filter, (pm__problem){.rows = 1000, .cols = 1000, .radius = 2});
  tune(c, &pm__op_add, (pm__problem){.n = 1000000});
  pm_close(c);
  c = open_ctx(path);
  const unsigned aligned[3] = {0, 0, 0};
  cr_assert_eq(check_matadd(c, 1000, 1000, 0, 64), PM__FROM_EXACT);
  cr_assert_eq(check_matadd(c, 2000, 1500, 0, 64), PM__FROM_NEAREST);
  cr_assert_eq(check_matadd(c, 1001, 999, 0, 4), PM__FROM_NEAREST, "a pitch of 4 mod 16");
  cr_assert_eq(check_add(c, 1000000, aligned, 0), PM__FROM_EXACT);
  cr_assert_eq(check_add(c, 3000017, aligned, 0), PM__FROM_NEAREST);
  /* packed matadds: add's winners, in either order (1000 x 1000 is add's n = 10^6) */
  cr_assert_eq(check_matadd(c, 1000, 1000, 0, 0), PM__FROM_EXACT);
  cr_assert_eq(check_matadd(c, 1000, 1000, 1, 0), PM__FROM_EXACT);
  cr_assert_eq(check_matadd(c, 2001, 1499, 1, 0), PM__FROM_NEAREST);
  cr_assert_eq(check_reduce(c, 1000000), PM__FROM_EXACT);
  cr_assert_eq(check_reduce(c, 3000017), PM__FROM_NEAREST);
  cr_assert_eq(check_filter(c, 1000, 1000, 2, 0), PM__FROM_EXACT);
  cr_assert_eq(check_filter(c, 333, 4000, 2, 0), PM__FROM_NEAREST);
  cr_assert_eq(check_filter(c, 1000, 1000, 1, 0), PM__FROM_DEFAULT, "no radius 1 is tuned");
  /* a pitch of 4 mod 8: whatever was tuned, only vec=1 may serve it */
  pm__problem pr = {.rows = 1000, .cols = 1000, .caller_align = 4};
  pm__decision d;
  pm__serve_decide(c, &pm__op_matadd, &pr, &d);
  cr_assert_not_null(strstr(d.config, "vec=1"), "%s", d.config);
  pm_close(c);
}

/* What a recorded-sizes listing gathers. */
typedef struct seen_list {
  int count;
  int64_t n[8], calls[8];
  char dtype[8][8];
} seen_list;

static int seen_cb(void *arg, const pm__db_problem *p, int64_t calls) {
  seen_list *l = arg;
  if (l->count < 8) {
    l->n[l->count] = p->n, l->calls[l->count] = calls;
    snprintf(l->dtype[l->count], sizeof l->dtype[0], "%s", p->dtype);
  }
  l->count++;
  return 0;
}

/* With recording on, the calls of sizes served without an exact winner are counted and written
 * at pm_close (summed over contexts), each of its own type; a size tuned exactly is not
 * recorded. */
Test(gpu_serve, record_counts_sizes_without_an_exact_winner) {
  pm_ctx *c = open_ctx(path);
  tune(c, &pm__op_reduce, (pm__problem){.n = 100000});
  pm_close(c);
  pm_options o = {.db_path = path, .record = 1};
  void *x = NULL, *sum = NULL;
  CUDA_OK(cudaMalloc(&x, 3333 * 2));
  CUDA_OK(cudaMalloc(&sum, 4));
  CUDA_OK(cudaMemset(x, 0, 3333 * 2));
  for (int round = 0; round < 2; round++) {
    cr_assert_eq(pm_open(&c, &o), PM_OK, "%s", pm_errmsg(c));
    for (int i = 0; i < 5; i++) check_reduce(c, 77777);
    check_reduce(c, 3333);
    check_reduce(c, 100000); /* exact: not recorded */
    cr_assert_eq(pm_reduce_sum_t(c, PM_BF16, 3333, x, PM_F32, sum, NULL), PM_OK, "%s",
                 pm_errmsg(c)); /* once a round */
    pm_close(c);
  }
  CUDA_OK(cudaFree(x));
  CUDA_OK(cudaFree(sum));
  pm__db *db = NULL;
  int64_t gpu_id = 0;
  int driver, runtime;
  c = open_ctx(path);
  pm__cuda_versions(&driver, &runtime);
  cr_assert_eq(pm__db_open(c, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__db_gpu_put(db, &c->dev, driver, runtime, &gpu_id), PM_OK, "%s", pm_errmsg(c));
  seen_list l = {0};
  cr_assert_eq(pm__db_seen_list(db, gpu_id, "reduce", 0, seen_cb, &l), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(l.count, 3, "three sizes recorded, not %d", l.count);
  /* check_reduce calls twice: 77777 10 times a round, 3333 twice; 3333 in bf16 once */
  cr_assert(l.n[0] == 77777 && l.calls[0] == 20, "77777 called 20 times: %lld, %lld",
            (long long)l.n[0], (long long)l.calls[0]);
  cr_assert(l.n[1] == 3333 && l.calls[1] == 4 && strcmp(l.dtype[1], "f32") == 0,
            "3333 called 4 times: %lld, %lld, %s", (long long)l.n[1], (long long)l.calls[1],
            l.dtype[1]);
  cr_assert(l.n[2] == 3333 && l.calls[2] == 2 && strcmp(l.dtype[2], "bf16") == 0,
            "3333 in bf16 called twice, recorded as bf16: %lld, %lld, %s", (long long)l.n[2],
            (long long)l.calls[2], l.dtype[2]);
  pm__db_close(db);
  pm_close(c);
}

/* A database tuned again while a context serves is picked up at pm_reload, not before. */
Test(gpu_serve, reload_picks_up_a_database_tuned_meanwhile) {
  pm_ctx *c = open_ctx(path), *other = open_ctx(path);
  cr_assert_eq(check_reduce(c, 424242), PM__FROM_DEFAULT);
  tune(other, &pm__op_reduce, (pm__problem){.n = 424242});
  pm_close(other);
  pm__problem pr = {.n = 424242, .caller_align = 16};
  pm__cache_key k;
  pm__cache_key_of(&pm__op_reduce, &pr, &k);
  check_reduce(c, 424242);
  cr_assert_eq(pm__cache_lookup(&c->serve->cache, &k)->source, PM__FROM_DEFAULT,
               "the call goes on with what the context read");
  cr_assert_eq(pm_reload(c), PM_OK);
  cr_assert_eq(check_reduce(c, 424242), PM__FROM_EXACT);
  cr_assert_eq(pm__cache_lookup(&c->serve->cache, &k)->source, PM__FROM_EXACT,
               "after pm_reload the size is served by the winner tuned meanwhile");
  cr_assert_eq(pm_reload(NULL), PM_EINVAL);
  pm_close(c);
}

/* Waits (at most two minutes) until c's background tuner has nothing running or waiting. */
static void wait_tuner(pm_ctx *c) {
  struct timespec nap = {0, 2000000};
  for (double t0 = pm__now_ms(); pm__autotune_busy(c, NULL); nanosleep(&nap, NULL))
    cr_assert_lt(pm__now_ms() - t0, 120000, "the background tuning did not end in 2 minutes");
}

Test(gpu_serve, autotune_in_the_background_stores_for_the_next_process) {
  pm_ctx *c = NULL;
  pm_options o = {.db_path = path, .autotune = 1, .autotune_budget = 12};
  cr_assert_eq(pm_open(&c, &o), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(check_matadd(c, 777, 555, 0, 4), PM__FROM_DEFAULT, "served at once, by the default");
  cr_assert(pm__autotune_busy(c, NULL), "the call returned while its size waits to be tuned");
  wait_tuner(c);
  cr_assert_eq(check_matadd(c, 777, 555, 0, 4), PM__FROM_EXACT, "tuned in the background");
  cr_assert_eq(check_matadd(c, 777, 555, 0, 0), PM__FROM_DEFAULT, "packed: add, served at once");
  wait_tuner(c);
  cr_assert_eq(check_matadd(c, 777, 555, 0, 0), PM__FROM_EXACT, "packed: add, tuned meanwhile");
  cr_assert_eq(check_reduce(c, 54321), PM__FROM_DEFAULT);
  wait_tuner(c);
  cr_assert_eq(check_reduce(c, 54321), PM__FROM_EXACT);
  pm_close(c);
  c = open_ctx(path); /* another process: finds them tuned */
  cr_assert_eq(check_matadd(c, 777, 555, 0, 4), PM__FROM_EXACT);
  cr_assert_eq(check_matadd(c, 777, 555, 0, 0), PM__FROM_EXACT);
  cr_assert_null(pm_notice(c), "nothing fell back: %s", pm_notice(c));
  pm_close(c);
}

/* A call that compiles a kernel does not wait for another process's write lock to store its
 * cubin: it waited (up to 10 s, every other thread's first call of a size behind it), and serving
 * processes beside 16 tuning ones made no call in 3 s. The cubin is stored once the lock is free,
 * by pm_close at the latest, which waits. */
Test(gpu_serve, a_compile_never_waits_for_another_process_s_write_lock) {
  pm_ctx *c = open_ctx(path);
  pm__db *db = NULL;
  cr_assert_eq(pm__db_open(c, path, 0, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  pm__db_close(db);
  /* held while the file moves: a call that waited for it would wait until the holder ends */
  int release, status = 0;
  pid_t holder = dbtest_hold_write_lock(path, 120000, 1, &release);
  double t0 = pm__now_ms();
  cr_assert_eq(check_add(c, 54321, (unsigned[3]){0, 0, 0}, 0), PM__FROM_DEFAULT);
  cr_assert_eq(check_reduce(c, 54321), PM__FROM_DEFAULT);
  cr_assert_eq(waitpid(holder, &status, WNOHANG), 0, "the calls (%.0f ms) ended after the lock "
               "was given back", pm__now_ms() - t0);
  sqlite3 *h = NULL;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM cubin"), 0, "nothing stored while locked");
  cr_assert_eq(write(release, "x", 1), 1);
  close(release);
  pm_close(c); /* waits for the lock, stores both */
  cr_assert_eq(waitpid(holder, &status, 0), holder);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder failed: %#x", status);
  cr_assert_eq(dbtest_int(h, "SELECT count(*) FROM cubin"), 2, "both stored by pm_close");
  sqlite3_close(h);
  c = open_ctx(path); /* another process: loads them */
  cr_assert_eq(check_add(c, 54321, (unsigned[3]){0, 0, 0}, 0), PM__FROM_DEFAULT);
  cr_assert_null(pm_notice(c) && strstr(pm_notice(c), "not stored") ? pm_notice(c) : NULL);
  pm_close(c);
}

/* One pm_matadd of rows x cols (packed rows, at most 1 << 20 floats) on stream s into the
 * buffers d[3], checked on the host; 1 where every element is right. */
static double matadd_call_ms; /* the host time of matadd_right's pm_matadd, the library's part */

static int matadd_right(pm_ctx *c, unsigned rows, unsigned cols, float *d[3], cudaStream_t s) {
  size_t n = (size_t)rows * cols, bytes = n * 4;
  float *h = malloc(bytes), *o = malloc(bytes);
  int ok = h != NULL && o != NULL;
  for (size_t i = 0; ok && i < n; i++) h[i] = (float)(i % 1000) / 8;
  ok = ok && cudaMemcpyAsync(d[0], h, bytes, cudaMemcpyHostToDevice, s) == cudaSuccess &&
       cudaMemcpyAsync(d[1], h, bytes, cudaMemcpyHostToDevice, s) == cudaSuccess;
  double t0 = pm__now_ms();
  ok = ok && pm_matadd(c, rows, cols, PM_ROW_MAJOR, d[2], cols * 4, d[0], cols * 4, d[1], cols * 4, s) == PM_OK;
  matadd_call_ms = pm__now_ms() - t0;
  ok = ok && cudaMemcpyAsync(o, d[2], bytes, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
       cudaStreamSynchronize(s) == cudaSuccess;
  for (size_t i = 0; ok && i < n; i++) ok = o[i] == h[i] + h[i];
  free(h), free(o);
  return ok;
}

/* While the background tuner works, calls (of the size being tuned and of others) are served at
 * once, right, and in milliseconds; afterwards the size's cached choice is the tuned winner. The
 * bound is on the calls' own host time: the copies and the synchronisation around them share the
 * GPU with whatever else runs (ctest -j8 stretched them past a second), a wait for the tuner would
 * be inside pm_matadd. */
Test(gpu_serve, calls_never_wait_for_the_background_tuning) {
  pm_ctx *c = NULL;
  pm_options o = {.db_path = path, .autotune = 1, .autotune_budget = 24};
  cr_assert_eq(pm_open(&c, &o), PM_OK, "%s", pm_errmsg(c));
  float *d[3];
  for (int i = 0; i < 3; i++) CUDA_OK(cudaMalloc((void **)&d[i], (1 << 20) * 4));
  cr_assert(matadd_right(c, 64, 96, d, NULL)); /* the default's kernel loaded, 64 x 96 asked for */
  wait_tuner(c);
  cr_assert(matadd_right(c, 777, 336, d, NULL)); /* near 64 x 96? no: a factor of 42 away */
  int served = 0;
  double worst = 0;
  while (pm__autotune_busy(c, NULL)) {
    int ok = matadd_right(c, 777, 336, d, NULL);
    double ms = matadd_call_ms;
    ok = ok && matadd_right(c, 64, 96, d, NULL);
    ms += matadd_call_ms;
    cr_assert(ok, "a call served while the tuning runs is wrong");
    if (pm__autotune_busy(c, NULL)) served++, worst = ms > worst ? ms : worst;
  }
  cr_assert_gt(served, 0, "no call was served while the tuning ran");
  cr_assert_lt(worst, 250, "two calls took %.1f ms while the tuning ran: they waited for it", worst);
  cr_assert(matadd_right(c, 777, 336, d, NULL));
  pm__problem pr;
  const pm__op *op = matadd_served_as(777, 336, 0, 0, &pr); /* packed: add */
  const pm__entry *e = cached(c, op, &pr);
  cr_assert_not_null(e, "the size's choice is cached");
  pm__decision dec;
  pm__serve_decide(c, op, &pr, &dec);
  cr_assert_eq(dec.source, PM__FROM_EXACT, "the tuning stored a winner for 777 x 336");
  cr_assert_eq(memcmp(e->choice->v, dec.v, sizeof dec.v), 0,
               "the cached choice is the tuned winner %s", dec.config);
  for (int i = 0; i < 3; i++) cudaFree(d[i]);
  pm_close(c);
}

/* The rule: a size is tuned only where no tuned size is within a factor of 2, one at a time, so
 * 400 distinct sizes (n from 1000 to 10^6), called over and over until no call asks for more,
 * start a few tunings (about one per two octaves), not 400. */
Test(gpu_serve, many_sizes_start_few_tunings) {
  pm_ctx *c = NULL;
  pm_options o = {.db_path = path, .autotune = 1, .autotune_budget = 4};
  cr_assert_eq(pm_open(&c, &o), PM_OK, "%s", pm_errmsg(c));
  float *x, *sum;
  CUDA_OK(cudaMalloc((void **)&x, 1000000 * 4));
  CUDA_OK(cudaMemset(x, 0, 1000000 * 4));
  CUDA_OK(cudaMalloc((void **)&sum, 4));
  uint64_t seed = pm_test_seed() | 1;
  size_t n[400];
  for (int i = 0; i < 400; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    n[i] = (size_t)(1000 * pow(1000, (double)(seed % 100000) / 100000));
  }
  int started = 0, before = -1, pass = 0;
  for (; pass < 40 && started != before; pass++) {
    before = started;
    for (int i = 0; i < 400; i++)
      cr_assert_eq(pm_reduce_sum(c, n[i], x, sum, NULL), PM_OK, "%s", pm_errmsg(c));
    CUDA_OK(cudaDeviceSynchronize());
    wait_tuner(c);
    pm__autotune_busy(c, &started);
  }
  cr_assert_lt(pass, 40, "tunings did not stop: %d started", started);
  cr_assert_geq(started, 2, "sizes over three decades were tuned in %d tunings", started);
  cr_assert_leq(started, 12, "%d tunings for 400 sizes over three decades", started);
  cudaFree(x), cudaFree(sum);
  pm_close(c);
}

typedef struct thread_arg {
  pm_ctx *c;
  int id, failures;
} thread_arg;

static void *worker(void *p) {
  thread_arg *t = p;
  cudaStream_t s;
  if (cudaStreamCreate(&s) != cudaSuccess) return t->failures++, NULL;
  for (int it = 0; it < 20; it++) {
    unsigned rows = 50 + (unsigned)((t->id * 7 + it) % 5), cols = 300 + (unsigned)(it % 3), n = rows * cols;
    size_t bytes = (size_t)n * 4;
    float *h = malloc(bytes), *o = malloc(bytes), *d[3], *sum, hs;
    for (unsigned i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f + t->id;
    if (cudaMalloc((void **)&d[0], bytes) || cudaMalloc((void **)&d[1], bytes) ||
        cudaMalloc((void **)&d[2], bytes) || cudaMalloc((void **)&sum, 4))
      return t->failures++, NULL;
    cudaMemcpy(d[0], h, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d[1], h, bytes, cudaMemcpyHostToDevice);
    if (pm_matadd(t->c, rows, cols, PM_ROW_MAJOR, d[2], cols * 4, d[0], cols * 4, d[1], cols * 4, s) != PM_OK ||
        pm_reduce_sum(t->c, n, d[2], sum, s) != PM_OK)
      t->failures++;
    cudaMemcpyAsync(o, d[2], bytes, cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(&hs, sum, 4, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    double want = 0;
    for (unsigned i = 0; i < n; i++) {
      if (o[i] != h[i] + h[i]) t->failures++;
      want += o[i];
    }
    if (fabs(hs - want) > 1e-5 * want) t->failures++;
    for (int i = 0; i < 3; i++) cudaFree(d[i]);
    cudaFree(sum), free(h), free(o);
  }
  cudaStreamDestroy(s);
  return NULL;
}

Test(gpu_serve, several_threads_on_one_context) {
  pm_ctx *c = open_ctx(path);
  pthread_t th[8];
  thread_arg args[8];
  for (int i = 0; i < 8; i++) {
    args[i] = (thread_arg){c, i, 0};
    cr_assert_eq(pthread_create(&th[i], NULL, worker, &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 8; i++) cr_assert_eq(args[i].failures, 0, "thread %d: %d failures", i, args[i].failures);
  pm_close(c);
}

Test(gpu_serve, a_corrupt_database_falls_back_and_says_so) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  for (int i = 0; i < 4096; i++) fputc(i * 7, f);
  fclose(f);
  pm_ctx *c = open_ctx(path);
  cr_assert_eq(check_matadd(c, 300, 301, 0, 0), PM__FROM_DEFAULT);
  cr_assert_eq(check_reduce(c, 12345), PM__FROM_DEFAULT);
  cr_assert_not_null(pm_notice(c));
  cr_assert_not_null(strstr(pm_notice(c), path), "names the file: %s", pm_notice(c));
  pm_close(c);
}

Test(gpu_serve, bad_arguments_are_refused) {
  pm_ctx *c = open_ctx(path);
  float *p;
  CUDA_OK(cudaMalloc((void **)&p, 1 << 20));
  float w[49] = {0};
  cr_assert_eq(pm_matadd(c, 10, 10, PM_ROW_MAJOR, NULL, 40, p, 40, p, 40, NULL), PM_EINVAL);
  cr_assert_eq(pm_matadd(c, 0, 10, PM_ROW_MAJOR, p, 40, p, 40, p, 40, NULL), PM_EINVAL);
  cr_assert_eq(pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 36, p, 40, p, 40, NULL), PM_EINVAL);
  cr_assert_not_null(strstr(pm_errmsg(c), "shorter than a row"), "%s", pm_errmsg(c));
  cr_assert_eq(pm_matadd(c, 10, 10, (pm_order)7, p, 40, p, 40, p, 40, NULL), PM_EINVAL);
  cr_assert_eq(pm_matadd(c, 10, 10, PM_ROW_MAJOR, (float *)((char *)p + 2), 40, p, 40, p, 40, NULL), PM_EINVAL);
  cr_assert_eq(pm_reduce_sum(c, 0, p, p, NULL), PM_EINVAL);
  cr_assert_eq(pm_reduce_sum(c, (size_t)1 << 31, p, p, NULL), PM_EINVAL);
  cr_assert_eq(pm_reduce_sum(c, 10, NULL, p, NULL), PM_EINVAL);
  cr_assert_eq(pm_filter(c, 10, 10, p, 40, p, 40, w, 0, PM_BORDER_CLAMP, NULL), PM_EINVAL);
  cr_assert_eq(pm_filter(c, 10, 10, p, 40, p, 40, w, 4, PM_BORDER_CLAMP, NULL), PM_EINVAL);
  cr_assert_eq(pm_filter(c, 10, 10, p, 40, p, 40, NULL, 1, PM_BORDER_CLAMP, NULL), PM_EINVAL);
  cr_assert_eq(pm_filter(c, 10, 10, p, 40, p, 40, w, 1, (pm_border)3, NULL), PM_EINVAL);
  float *q = NULL;
  size_t pitch = 0;
  cr_assert_eq(pm_malloc_2d(c, PM_OP_MATADD, 0, 5, &q, &pitch, NULL), PM_EINVAL);
  cr_assert_eq(pm_matadd(NULL, 10, 10, PM_ROW_MAJOR, p, 40, p, 40, p, 40, NULL), PM_EINVAL);
  pm_ctx *none;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&none, &o), PM_OK);
  cr_assert_eq(pm_reduce_sum(none, 10, p, p, NULL), PM_ENODEV);
  pm_close(none);
  cudaFree(p);
  pm_close(c);
}

Test(gpu_serve, malloc_2d_pads_as_tuning_chose) {
  pm_ctx *c = open_ctx(path);
  float *p;
  size_t pitch, padding;
  cr_assert_eq(pm_malloc_2d(c, PM_OP_MATADD, 100, 1001, &p, &pitch, &padding), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pitch, 4096, "nothing tuned: rows padded to 256 bytes");
  cr_assert_eq(padding, 100 * (4096 - 4004));
  check_matadd(c, 100, 1001, 0, pitch - 4004);
  pm_free(c, p);
  pm_close(c);
}

/* A kernel of somebody else's that lets the next grid start at once (as a library using
 * programmatic dependent launch may: griddepcontrol.launch_dependents), then spins for `spin`
 * clocks, and only then writes dst (copies src to it). */
static const char producer_src[] =
    "extern \"C\" __global__ void producer(float *dst, const float *src, size_t n, long long spin) {\n"
    "  asm volatile(\"griddepcontrol.launch_dependents;\");\n"
    "  const long long t0 = clock64();\n"
    "  while (clock64() - t0 < spin) {\n"
    "  }\n"
    "  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)\n"
    "    dst[i] = src[i];\n"
    "}\n";

/* The library launches its kernels so that they may start while the kernel before them in the
 * stream is finishing (kernel.c). Each must still wait for that kernel's writes: here the kernel
 * before writes the call's input late, after letting the next grid start; a pmtune kernel that
 * read early would see the stale input that was there before (3.0039 in every float). */
static void check_waits(const pm__op *op, pm__problem pr, size_t layout) {
  pm_ctx *c = open_ctx(path);
  if (c->dev.cc_major < 9) {
    int major = c->dev.cc_major, minor = c->dev.cc_minor;
    pm_close(c);
    cr_skip_test("compute capability %d.%d: programmatic dependent launch needs 9.0", major, minor);
  }
  pm__cubin bin;
  pm__module prod;
  const char *const entry[] = {"producer"};
  cr_assert_eq(pm__compile(c, "producer.cu", producer_src, c->dev.arch, NULL, 0, &bin), PM_OK, "%s",
               pm_errmsg(c));
  cr_assert_eq(pm__module_load(c, &bin, entry, 1, &prod), PM_OK, "%s", pm_errmsg(c));
  pm__cubin_free(&bin);
  cr_assert(!prod.waits_prior, "a cubin without pm_waits_prior is launched the ordinary way");
  pm__data d = {0};
  cr_assert_eq(op->prepare(op, c, &pr, pm_test_seed(), &d), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm__data_place(c, &d, layout), PM_OK, "%s", pm_errmsg(c));
  pr.caller_align = 16;
  pm__decision dec;
  pm__serve_decide(c, op, &pr, &dec);
  size_t bytes = (size_t)d.lines * d.in_pitch[0], n = bytes / sizeof(float);
  float *src;
  double err;
  CUDA_OK(cudaMalloc((void **)&src, bytes));
  CUDA_OK(cudaMemcpy(src, d.in[0], bytes, cudaMemcpyDeviceToDevice));
  call_op(c, op, &d); /* loads the served kernel, so that the calls below launch at once */
  CUDA_OK(cudaDeviceSynchronize());
  cr_assert_eq(op->verify(op, c, dec.v, &d, &err), PM_OK, "%s first call: %s", op->name,
               pm_errmsg(c));
  for (int k = 0; k < 3; k++) {
    CUDA_OK(cudaMemset(d.in[0], 0x40, bytes));
    cr_assert_eq(pm__data_poison(c, &d, 0), PM_OK, "%s", pm_errmsg(c));
    long long spin = 4000000; /* about 2 ms: far longer than the host takes to launch the call */
    void *args[] = {&d.in[0], &src, &n, &spin};
    cr_assert_eq(pm__module_launch(c, &prod, 0, (dim3){(unsigned)c->dev.sm_count, 1, 1},
                                   (dim3){256, 1, 1}, 0, 0, args), PM_OK, "%s", pm_errmsg(c));
    call_op(c, op, &d);
    CUDA_OK(cudaDeviceSynchronize());
    cr_assert_eq(op->verify(op, c, dec.v, &d, &err), PM_OK, "%s after the producer (%s): %s",
                 op->name, dec.config, pm_errmsg(c));
  }
  cudaFree(src);
  pm__data_free(&d);
  pm__module_unload(&prod);
  pm_close(c);
}

Test(gpu_serve, matadd_waits_for_the_kernel_before) { /* padded: matadd's kernel, not add's */
  check_waits(&pm__op_matadd, (pm__problem){.rows = 1000, .cols = 1003}, 128);
}
Test(gpu_serve, reduce_waits_for_the_kernel_before) {
  check_waits(&pm__op_reduce, (pm__problem){.n = 1000003}, 0);
  check_waits(&pm__op_reduce, (pm__problem){.n = 1000}, 0); /* one block: no combine */
}

/* A reduce of several blocks lets the kernel after it be placed before it ends, and every reduce
 * asks L2 for its input before its wait (templates/reduce.cu). A chain of sums, each written
 * into the first float of the next one's input (the rest zeros), with no synchronisation between
 * the calls, must carry the first sum through unchanged: a call that read its input before the
 * call before it had written it would see the zero that was there. */
Test(gpu_serve, a_reduce_after_a_reduce_reads_its_sum) {
  pm_ctx *c = open_ctx(path);
  if (c->dev.cc_major < 9) {
    int major = c->dev.cc_major, minor = c->dev.cc_minor;
    pm_close(c);
    cr_skip_test("compute capability %d.%d: programmatic dependent launch needs 9.0", major, minor);
  }
  const size_t big = (size_t)1 << 20, lens[] = {1000, 4096, (size_t)1 << 20, 65537};
  enum { LINKS = 12 };
  float *h = malloc(big * sizeof *h), *x, *y[LINKS], first, last;
  cr_assert_not_null(h);
  pm__random_fill(h, big, pm_test_seed());
  CUDA_OK(cudaMalloc((void **)&x, big * sizeof *x));
  CUDA_OK(cudaMemcpy(x, h, big * sizeof *x, cudaMemcpyHostToDevice));
  for (int k = 0; k < LINKS; k++) CUDA_OK(cudaMalloc((void **)&y[k], big * sizeof **y));
  for (int round = 0; round < 3; round++) {
    for (int k = 0; k < LINKS; k++) CUDA_OK(cudaMemset(y[k], 0, big * sizeof **y));
    CUDA_OK(cudaDeviceSynchronize());
    cr_assert_eq(pm_reduce_sum(c, big, x, y[0], NULL), PM_OK, "%s", pm_errmsg(c));
    for (int k = 1; k < LINKS; k++) /* y[k-1][0] summed with zeros into y[k][0] */
      cr_assert_eq(pm_reduce_sum(c, lens[k % 4], y[k - 1], y[k], NULL), PM_OK, "%s", pm_errmsg(c));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(&first, y[0], sizeof first, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&last, y[LINKS - 1], sizeof last, cudaMemcpyDeviceToHost));
    cr_assert(first != 0, "the first sum is of random floats");
    cr_assert_eq(memcmp(&first, &last, sizeof first), 0, "round %d: %.9g went through %d sums as %.9g",
                 round, first, LINKS - 1, last);
  }
  for (int k = 0; k < LINKS; k++) cudaFree(y[k]);
  cudaFree(x);
  free(h);
  pm_close(c);
}
Test(gpu_serve, filter_waits_for_the_kernel_before) {
  check_waits(&pm__op_filter, (pm__problem){.rows = 1000, .cols = 1003, .radius = 2}, 0);
}
Test(gpu_serve, add_waits_for_the_kernel_before) {
  check_waits(&pm__op_add, (pm__problem){.n = 1000003}, 0);
}

/* pm_add at odd n (a tail after the last float4, or no whole float4 at all), with pointers of
 * each alignment (only the vector widths they allow may serve: check_add sees to that), and in
 * place, against the host; nothing around C is written. */
Test(gpu_serve, add_at_odd_sizes_pointers_and_in_place) {
  pm_ctx *c = open_ctx(path);
  const unsigned sizes[] = {1, 3, 4, 5, 4097, (1u << 20) + 3};
  const unsigned offsets[][3] = {{0, 0, 0}, /* all 16-byte aligned */
                                 {0, 1, 0}, /* A + 1: 4 bytes */
                                 {1, 1, 1}, /* all one float in: 4 bytes */
                                 {2, 0, 2}, /* 8 bytes */
                                 {0, 0, 3}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++) {
      cr_assert_eq(check_add(c, sizes[s], offsets[o], 0), PM__FROM_DEFAULT);
      check_add(c, sizes[s], offsets[o], 1);
    }
  pm_close(c);
}

/* Packed matrices (no padding, or one line) are one flat vector whatever the order: pm_matadd
 * serves them as add (its cache holds an add entry for rows x cols floats, and no matadd one);
 * padded ones as matadd. Results against the host in both orders at odd widths. */
Test(gpu_serve, packed_matadd_is_served_as_add_padded_as_matadd) {
  const unsigned sizes[][2] = {{1001, 777}, {4097, 1500}, {777, 1001}, {3, 5}, {1, 100003},
                               {100003, 1}};
  pm_ctx *c = open_ctx(path);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int order = 0; order < 2; order++) {
      unsigned rows = sizes[s][0], cols = sizes[s][1];
      check_matadd(c, rows, cols, order, 0); /* asserts the add entry */
      cr_assert(!cached_as_matadd(c, rows, cols, order), "packed %ux%u %s: served by matadd",
                rows, cols, order ? "col" : "row");
    }
  pm_close(c);
  c = open_ctx(path);
  for (size_t s = 0; s < 3; s++)
    for (int order = 0; order < 2; order++) {
      unsigned rows = sizes[s][0], cols = sizes[s][1];
      check_matadd(c, rows, cols, order, 64); /* asserts the matadd entry */
      pm__problem add = {.n = rows * cols, .caller_align = 16};
      cr_assert_null(cached(c, &pm__op_add, &add), "padded %ux%u %s: served by add", rows, cols,
                     order ? "col" : "row");
    }
  pm_close(c);
}

/* Skips the calling test, with the reason, where the device has less than `gib` GiB free. */
static void require_device_memory(double gib) {
  size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  if ((double)free_b < gib * (1 << 30))
    cr_skip_test("needs %.0f GiB of device memory, %.1f GiB free", gib, (double)free_b / (1 << 30));
}

/* Checks out[i] == a + b for i in [lo, hi) of a device vector whose inputs are the constants a
 * and b (cudaMemset bytes), copied back a window at a time. */
static void check_constant_sum(const float *out, size_t lo, size_t hi, float want, const char *what) {
  enum { WINDOW = 1 << 20 };
  static float h[WINDOW];
  for (size_t at = lo; at < hi; at += WINDOW) {
    size_t k = hi - at < WINDOW ? hi - at : WINDOW;
    CUDA_OK(cudaMemcpy(h, out + at, k * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < k; i++)
      if (!(h[i] == want)) cr_assert_fail("%s: element %zu is %a, want %a", what, at + i, h[i], want);
  }
}

/* The largest problems: pm_add at n = 2^31 - 1 (no index wraps: checked at its start, around
 * 2^30 floats, where byte offsets pass 2^32, and at its end, and nothing written after it), and
 * a packed matadd of more than 2^31 - 1 floats, which add cannot take: served as matadd. Inputs
 * are constants (memset bytes 0x3f and 0x40). Needs 27 GiB free. */
Test(gpu_serve, the_largest_adds_and_packed_matadds, .timeout = 600) {
  require_device_memory(27);
  pm_ctx *c = open_ctx(path);
  const size_t rows = 65536, cols = 32769, big = rows * cols; /* 2^31 + 2^16 floats */
  float *d[3], a, b, want;
  memset(&a, 0x3f, 4), memset(&b, 0x40, 4);
  want = a + b;
  for (int i = 0; i < 3; i++) CUDA_OK(cudaMalloc((void **)&d[i], big * 4));
  CUDA_OK(cudaMemset(d[0], 0x3f, big * 4));
  CUDA_OK(cudaMemset(d[1], 0x40, big * 4));

  const size_t n = 0x7fffffff, win = (size_t)1 << 22;
  CUDA_OK(cudaMemset(d[2], 0xff, big * 4));
  cr_assert_eq(pm_add(c, n, d[2], d[0], d[1], NULL), PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaDeviceSynchronize());
  check_constant_sum(d[2], 0, win, want, "add n = 2^31 - 1");
  check_constant_sum(d[2], (n >> 1) - win, (n >> 1) + win, want, "add n = 2^31 - 1");
  check_constant_sum(d[2], n - win, n, want, "add n = 2^31 - 1");
  unsigned tail;
  CUDA_OK(cudaMemcpy(&tail, d[2] + n, 4, cudaMemcpyDeviceToHost));
  cr_assert_eq(tail, 0xffffffffu, "add n = 2^31 - 1 wrote past its end");

  CUDA_OK(cudaMemset(d[2], 0xff, big * 4));
  cr_assert_eq(pm_matadd(c, rows, cols, PM_ROW_MAJOR, d[2], cols * 4, d[0], cols * 4, d[1],
                         cols * 4, NULL), PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaDeviceSynchronize());
  check_constant_sum(d[2], 0, win, want, "packed matadd 65536 x 32769");
  check_constant_sum(d[2], n - win, big, want, "packed matadd 65536 x 32769");
  cr_assert(cached_as_matadd(c, (unsigned)rows, (unsigned)cols, 0),
            "more than 2^31 - 1 packed floats are served by matadd");
  for (int i = 0; i < 3; i++) cudaFree(d[i]);
  pm_close(c);
}

/* ---- The element types: pm_matadd_t and pm_add_t in f16, bf16 and f64 ------------------------ */

/* pm_matadd_t on rows x cols of type t in `order`, `extra` elements of padding on each line (0:
 * packed, served as add) and every pointer `off` elements past cudaMalloc's (1: the least
 * alignment, one element), against the host's sum rounded once to the type, bit for bit, the
 * padding left as it was. Then, where tuned is set, the problem must be served from the database,
 * exactly (the tuning below), not the default: types are kept apart. */
static void check_matadd_t(pm_ctx *c, pm_dtype t, unsigned rows, unsigned cols, int colmajor,
                           size_t extra, size_t off) {
  unsigned lines = colmajor ? cols : rows, inner = colmajor ? rows : cols;
  size_t es = pm_dtype_size(t), n = (size_t)rows * cols, w = inner * es, pitch = w + extra * es;
  size_t bytes = pitch * lines + off * es;
  uint64_t seed = pm_test_seed();
  unsigned char *h[2], *ref = malloc(n * es), *got = malloc(bytes), *dv[3];
  cr_assert_not_null(ref);
  cr_assert_not_null(got);
  for (int i = 0; i < 2; i++) cr_assert_not_null(h[i] = pm__random_fill_typed(t, n, seed + (uint64_t)i));
  pm__add_reference(t, h[0], h[1], ref, n);
  for (int i = 0; i < 3; i++) {
    CUDA_OK(cudaMalloc((void **)&dv[i], bytes));
    CUDA_OK(cudaMemset(dv[i], 0xa5, bytes));
  }
  for (int i = 0; i < 2; i++)
    CUDA_OK(cudaMemcpy2D(dv[i] + off * es, pitch, h[i], w, w, lines, cudaMemcpyHostToDevice));
  cr_assert_eq(pm_matadd_t(c, t, rows, cols, colmajor ? PM_COL_MAJOR : PM_ROW_MAJOR,
                           dv[2] + off * es, pitch, dv[0] + off * es, pitch, dv[1] + off * es,
                           pitch, NULL),
               PM_OK, "%s", pm_errmsg(c));
  CUDA_OK(cudaMemcpy(got, dv[2], bytes, cudaMemcpyDeviceToHost));
  for (size_t b = 0; b < bytes; b++) {
    size_t at = b >= off * es ? b - off * es : SIZE_MAX, line = at / pitch, col = at % pitch;
    int inside = at != SIZE_MAX && line < lines && col < w;
    unsigned char want = inside ? ref[line * w + col] : 0xa5;
    if (got[b] != want)
      cr_assert_fail("matadd %s %ux%u %s pitch %zu offset %zu (seed %#llx): byte %zu (%s) is %#x, "
                     "want %#x", pm_dtype_name(t), rows, cols, colmajor ? "col" : "row", pitch,
                     off, (unsigned long long)seed, b, inside ? "an element" : "padding", got[b],
                     want);
  }
  for (int i = 0; i < 3; i++) cudaFree(dv[i]);
  free(h[0]), free(h[1]), free(ref), free(got);
}

Test(gpu_serve, matadd_and_add_in_each_type) {
  pm_ctx *c = open_ctx(path);
  const pm_dtype types[] = {PM_F16, PM_BF16, PM_F64};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    pm_dtype t = types[i];
    check_matadd_t(c, t, 1000, 999, 0, 3, 1);   /* padded, odd lines, one element off */
    check_matadd_t(c, t, 999, 1001, 1, 5, 0);   /* column-major, padded */
    check_matadd_t(c, t, 513, 77, 0, 0, 1);     /* packed: served as add */
    check_matadd_t(c, t, 4097, 3001, 1, 0, 0);  /* packed, column-major */
    check_matadd_t(c, t, 1, 100003, 0, 0, 3);   /* one line */
    /* pm_add_t: n elements, C in place of A */
    size_t es = pm_dtype_size(t), n = 100003;
    unsigned char *a = pm__random_fill_typed(t, n, 7), *b = pm__random_fill_typed(t, n, 8);
    unsigned char *ref = malloc(n * es), *got = malloc(n * es), *da, *db;
    cr_assert(a && b && ref && got);
    pm__add_reference(t, a, b, ref, n);
    CUDA_OK(cudaMalloc((void **)&da, n * es));
    CUDA_OK(cudaMalloc((void **)&db, n * es));
    CUDA_OK(cudaMemcpy(da, a, n * es, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, b, n * es, cudaMemcpyHostToDevice));
    cr_assert_eq(pm_add_t(c, t, n, da, da, db, NULL), PM_OK, "%s", pm_errmsg(c));
    CUDA_OK(cudaMemcpy(got, da, n * es, cudaMemcpyDeviceToHost));
    cr_assert_eq(memcmp(got, ref, n * es), 0, "add %s in place", pm_dtype_name(t));
    /* bad input: a pointer that is not a multiple of the element, an unknown type, a type the
     * op does not take through the float calls' kin */
    cr_assert_eq(pm_add_t(c, t, n, da + 1, da + 1, db + 1, NULL), PM_EINVAL);
    cr_assert(strstr(pm_errmsg(c), "multiples of") != NULL, "%s", pm_errmsg(c));
    cr_assert_eq(pm_add_t(c, (pm_dtype)9, n, da, da, db, NULL), PM_EINVAL);
    cr_assert(strstr(pm_errmsg(c), "dtype 9") != NULL, "%s", pm_errmsg(c));
    CUDA_OK(cudaFree(da));
    CUDA_OK(cudaFree(db));
    free(a), free(b), free(ref), free(got);
  }
  /* types are kept apart: each size above is cached once per type */
  pm__problem f16 = {.n = 513 * 77, .caller_align = 2, .dtype = PM_F16}, bf16 = f16;
  bf16.dtype = PM_BF16;
  cr_assert_not_null(cached(c, &pm__op_add, &f16));
  cr_assert_not_null(cached(c, &pm__op_add, &bf16));
  cr_assert_neq(cached(c, &pm__op_add, &f16), cached(c, &pm__op_add, &bf16));
  pm_close(c);
}

/* Calls op through the typed call on data prepared as the tuner prepares it (pm__data_place's
 * buffers: 16-byte aligned), and checks the output as the tuner does, with the configuration the
 * call was served (the reduce's bound depends on it). */
static void check_typed_call(pm_ctx *c, const pm__op *op, pm__problem pr, int sum_in_type) {
  pm__data d = {0};
  char text[96];
  pm__problem_text(op, &pr, text, sizeof text);
  cr_assert_eq(op->prepare(op, c, &pr, 11, &d), PM_OK, "%s: %s", text, pm_errmsg(c));
  if (sum_in_type) d.reduce.sum_as_float = 0;
  cr_assert_eq(pm__data_place(c, &d, 256), PM_OK, "%s", pm_errmsg(c));
  cr_assert_eq(pm_test_call_op(c, op, &d, NULL), PM_OK, "%s: %s", text, pm_errmsg(c));
  CUDA_OK(cudaDeviceSynchronize());
  pr.caller_align = 16;
  const pm__entry *e = cached(c, op, &pr);
  cr_assert_not_null(e, "%s: not cached as served", text);
  double err;
  cr_assert_eq(op->verify(op, c, e->choice->v, &d, &err), PM_OK, "%s%s: %s", text,
               sum_in_type ? " (sum in its type)" : "", pm_errmsg(c));
  pm__data_free(&d);
}

Test(gpu_serve, reduce_and_filter_in_each_type) {
  pm_ctx *c = open_ctx(path);
  const pm_dtype types[] = {PM_F16, PM_BF16, PM_F64};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    pm_dtype t = types[i];
    for (int in_type = 0; in_type < 2; in_type++) {
      check_typed_call(c, &pm__op_reduce, (pm__problem){.n = 1, .dtype = t}, in_type);
      check_typed_call(c, &pm__op_reduce, (pm__problem){.n = 1000003, .dtype = t}, in_type);
    }
    check_typed_call(c, &pm__op_filter, (pm__problem){.rows = 1001, .cols = 777, .radius = 2, .dtype = t}, 0);
    check_typed_call(c, &pm__op_filter,
                     (pm__problem){.rows = 3, .cols = 5, .radius = 3, .variant = 1, .dtype = t}, 0);
    /* bad input: a sum in a third type, a sum not aligned to its type, an image one byte off */
    unsigned char *p;
    CUDA_OK(cudaMalloc((void **)&p, 4096));
    pm_dtype other = t == PM_F64 ? PM_F16 : PM_F64;
    cr_assert_eq(pm_reduce_sum_t(c, t, 10, p, other, p + 64, NULL), PM_EINVAL);
    cr_assert(strstr(pm_errmsg(c), "neither the input's") != NULL, "%s", pm_errmsg(c));
    cr_assert_eq(pm_reduce_sum_t(c, t, 10, p, PM_F32, p + 66, NULL), PM_EINVAL);
    cr_assert(strstr(pm_errmsg(c), "multiples of 4") != NULL, "%s", pm_errmsg(c));
    float w[9] = {0};
    cr_assert_eq(pm_filter_t(c, t, 4, 4, p + 1, 64, p + 1024, 64, w, 1, PM_BORDER_CLAMP, NULL),
                 PM_EINVAL);
    cr_assert(strstr(pm_errmsg(c), "multiples of") != NULL, "%s", pm_errmsg(c));
    CUDA_OK(cudaFree(p));
    /* pm_malloc_2d_t: lines of cols elements of t, the pitch a multiple of 256 untuned */
    void *m;
    size_t pitch, pad;
    cr_assert_eq(pm_malloc_2d_t(c, PM_OP_FILTER, t, 10, 333, &m, &pitch, &pad), PM_OK, "%s",
                 pm_errmsg(c));
    size_t line = 333 * pm_dtype_size(t);
    cr_assert(pitch >= line && pitch % 256 == 0 && pad == 10 * (pitch - line), "pitch %zu", pitch);
    pm_free(c, m);
  }
  pm_close(c);
}

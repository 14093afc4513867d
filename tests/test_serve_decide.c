/* test_serve_decide.c: the decision chain (runtime/decide.c) without a GPU, on a fabricated
 * database and a fake GPU: the exact winner, else the nearest tuned size, else the default;
 * only configurations the caller's alignment allows; never another GPU model's winner or a
 * stale template's. Each case also checks that `pmtune explain`'s path (pm__serve_decide, with
 * the context's own read-only handle) gives the same answer as the chain called directly. */
#include <math.h>

#include "dbtest.h"
#include "serve.h"

static pm_ctx *c;
static char dir[64], path[128];

/* Model 0 of dbtest.h ("Fake H100"), with what op->check asks of a device filled in. */
static pm__device_info fake_gpu(int model, int i) {
  pm__device_info d = dbtest_gpu(model, i);
  d.max_threads_per_block = 1024;
  return d;
}

static void setup(void) {
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/pmtune.db", dir);
  cr_assert_eq(pm__ctx_create(&c, PM_DEVICE_NONE, path), PM_OK);
  c->dev = fake_gpu(0, 0);
  pm_options o = {0};
  cr_assert_eq(pm__serve_init(c, &o), PM_OK, "serving's state needs no GPU");
}

static void teardown(void) {
  pm__serve_free(c);
  pm__ctx_free(c);
  dbtest_cleanup(dir);
}

TestSuite(serve_decide, .init = setup, .fini = teardown, .timeout = 60);

static const char *real_sha(const pm__op *op) { return pm__template_find(op->name)->sha256; }

/* Stores config as a verified measurement of op on pr taking `ms`, made on GPU gpu with the
 * template hash sha, as `pmtune tune` would. Creates the database where it is missing. */
static void put_on(const pm__device_info *gpu, const char *sha, const pm__op *op, pm__problem pr,
                   const char *config, double ms) {
  dbtest_put_config(c, path, gpu, sha, op, pr, config, ms);
}

/* The same on the context's own (fake) GPU with the template built into this library. */
static void put(const pm__op *op, pm__problem pr, const char *config, double ms) {
  put_on(&c->dev, real_sha(op), op, pr, config, ms);
}

/* Decides op on pr for device dev through the chain itself, on what a read-only handle of its
 * own knows for dev (nothing where the file is missing); *d is its decision. */
static pm__source decide_on(const pm__device_info *dev, const pm__op *op, pm__problem pr,
                            pm__decision *d) {
  pm__db *db = NULL;
  pm__db_known known;
  if (access(path, F_OK) == 0) {
    cr_assert_eq(pm__db_open(c, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s",
                 pm_errmsg(c));
    cr_assert_eq(pm__op_known_load(db, dev, op, &known), PM_OK, "%s", pm_errmsg(c));
  }
  pm__source s = pm__decide(c, db != NULL ? &known : NULL, op, &pr, d);
  if (db != NULL) pm__db_known_free(&known);
  pm__db_close(db);
  cr_assert_eq(s, d->source, "the chain returns the source it decided");
  return s;
}

/* decide_on the context's GPU, and checks that explain's path decides the same. */
static pm__source decide(const pm__op *op, pm__problem pr, pm__decision *d) {
  pm__source s = decide_on(&c->dev, op, pr, d);
  pm__decision e;
  pm__serve_refresh(c); /* what was stored since the context last read the database */
  cr_assert_eq(pm__serve_decide(c, op, &pr, &e), PM_OK);
  cr_assert_eq(e.source, d->source, "explain: %s, the chain: %s", pm__source_name(e.source),
               pm__source_name(d->source));
  cr_assert_str_eq(e.config, d->config);
  return s;
}

/* The configuration text of d's point: what was parsed must be what the database said. */
static void expect_point(const pm__op *op, const pm__decision *d) {
  char text[PM__CONFIG_TEXT];
  pm__config_text(op, d->v, text, sizeof text);
  cr_assert_str_eq(text, d->config, "the point served is the configuration decided");
}

static const pm__problem M1000 = {.rows = 1000, .cols = 1000, .caller_align = 16};

#define MATADD(vec) "bx=128 by=2 vec=" #vec " ept=1 grid=0 map=0 align=256"

Test(serve_decide, the_exact_winner_is_the_fastest_at_this_size) {
  put(&pm__op_matadd, M1000, "bx=64 by=4 vec=4 ept=1 grid=0 map=0 align=256", 2.0);
  put(&pm__op_matadd, M1000, "bx=256 by=1 vec=4 ept=2 grid=0 map=0 align=512", 1.0);
  put(&pm__op_matadd, (pm__problem){.rows = 2000, .cols = 2000}, MATADD(4), 0.5);
  pm__decision d;
  cr_assert_eq(decide(&pm__op_matadd, M1000, &d), PM__FROM_EXACT);
  cr_assert_str_eq(d.config, "bx=256 by=1 vec=4 ept=2 grid=0 map=0 align=512");
  expect_point(&pm__op_matadd, &d);
  cr_assert_eq(d.tuned_rows, 1000);
  cr_assert_eq(d.tuned_cols, 1000);
  cr_assert_float_eq(d.median_ms, 1.0, 1e-12);
  cr_assert_eq(d.distance, 0.0);
  cr_assert_str_eq(d.why, "");
}

Test(serve_decide, the_nearest_tuned_size_serves_a_size_not_tuned) {
  put(&pm__op_matadd, M1000, MATADD(2), 1.0);
  put(&pm__op_matadd, (pm__problem){.rows = 4000, .cols = 4000}, MATADD(4), 1.0);
  pm__decision d;
  pm__problem pr = {.rows = 1500, .cols = 1500, .caller_align = 16};
  cr_assert_eq(decide(&pm__op_matadd, pr, &d), PM__FROM_NEAREST);
  cr_assert_str_eq(d.config, MATADD(2), "1000x1000 is nearer than 4000x4000");
  expect_point(&pm__op_matadd, &d);
  cr_assert_eq(d.tuned_rows, 1000);
  cr_assert_eq(d.tuned_cols, 1000);
  cr_assert_float_eq(d.distance, log(2.25), 1e-9, "|ln(1500^2 / 1000^2)|: %g", d.distance);
  pr.rows = pr.cols = 3500;
  cr_assert_eq(decide(&pm__op_matadd, pr, &d), PM__FROM_NEAREST);
  cr_assert_eq(d.tuned_rows, 4000);
  cr_assert_float_eq(d.distance, 2 * log(4000.0 / 3500.0), 1e-9);
  /* reduce: by n */
  put(&pm__op_reduce, (pm__problem){.n = 1u << 20},
      "block=256 items=4 vec=4 step=2 combine=0 acc=0 grid=4", 1.0);
  cr_assert_eq(decide(&pm__op_reduce, (pm__problem){.n = 3u << 20, .caller_align = 16}, &d),
               PM__FROM_NEAREST);
  cr_assert_eq(d.tuned_n, 1u << 20);
  cr_assert_float_eq(d.distance, log(3.0), 1e-9);
  expect_point(&pm__op_reduce, &d);
}

Test(serve_decide, the_default_serves_where_nothing_fits_is_tuned) {
  pm__problem col = M1000;
  col.variant = PM_COL_MAJOR;
  put(&pm__op_matadd, col, MATADD(4), 1.0); /* column-major only */
  pm__decision d, want;
  cr_assert_eq(decide(&pm__op_matadd, M1000, &d), PM__FROM_DEFAULT, "another storage order");
  pm__op_matadd.fallback(&M1000, want.v);
  cr_assert_eq(memcmp(d.v, want.v, sizeof(int) * (size_t)pm__op_matadd.nparams), 0);
  expect_point(&pm__op_matadd, &d);
  cr_assert_not_null(strstr(d.why, "no size of matadd"), "why: %s", d.why);
  cr_assert_eq(d.tuned_rows, 0);
  cr_assert_eq(decide(&pm__op_matadd, col, &d), PM__FROM_EXACT, "the stored one is usable");
  /* filter: only the same radius */
  put(&pm__op_filter, (pm__problem){.rows = 512, .cols = 512, .radius = 1},
      "bx=32 by=8 tile=1 pad=1 ox=1 oy=2 vload=0 align=0", 1.0);
  pm__problem f = {.rows = 512, .cols = 512, .radius = 2, .caller_align = 16};
  cr_assert_eq(decide(&pm__op_filter, f, &d), PM__FROM_DEFAULT, "radius 1 is not radius 2");
  f.radius = 1;
  cr_assert_eq(decide(&pm__op_filter, f, &d), PM__FROM_EXACT);
}

Test(serve_decide, the_default_serves_without_a_database) {
  pm__decision d;
  pm__problem pr = {.rows = 1000, .cols = 1000, .caller_align = 8};
  cr_assert_neq(access(path, F_OK), 0, "no file yet");
  cr_assert_eq(pm__decide(c, NULL, &pm__op_matadd, &pr, &d), PM__FROM_DEFAULT);
  cr_assert_str_eq(d.why, "no database");
  cr_assert_not_null(strstr(d.config, "vec=2"), "8-byte alignment: the default reads float2: %s",
                     d.config);
  cr_assert_eq(pm__serve_decide(c, &pm__op_matadd, &pr, &d), PM_OK);
  cr_assert_eq(d.source, PM__FROM_DEFAULT);
  cr_assert_not_null(strstr(d.why, path), "says which file is missing: %s", d.why);
  cr_assert_neq(access(path, F_OK), 0, "deciding never creates the database");
}

Test(serve_decide, a_winner_the_callers_alignment_forbids_is_skipped) {
  put(&pm__op_matadd, M1000, MATADD(4), 1.0); /* the fastest: float4 accesses */
  put(&pm__op_matadd, M1000, MATADD(2), 1.2);
  put(&pm__op_matadd, M1000, MATADD(1), 1.5);
  pm__decision d;
  pm__problem pr = M1000;
  const struct {
    unsigned align;
    const char *config;
    double ms;
  } cases[] = {{16, MATADD(4), 1.0}, {8, MATADD(2), 1.2}, {4, MATADD(1), 1.5}};
  for (int i = 0; i < 3; i++) {
    pr.caller_align = cases[i].align;
    cr_assert_eq(decide(&pm__op_matadd, pr, &d), PM__FROM_EXACT, "align %u", cases[i].align);
    cr_assert_str_eq(d.config, cases[i].config, "align %u", cases[i].align);
    cr_assert_float_eq(d.median_ms, cases[i].ms, 1e-12);
    expect_point(&pm__op_matadd, &d);
  }
  pr.rows = 1200, pr.caller_align = 4; /* the same at the nearest size */
  cr_assert_eq(decide(&pm__op_matadd, pr, &d), PM__FROM_NEAREST);
  cr_assert_str_eq(d.config, MATADD(1));
}

Test(serve_decide, another_gpu_models_winner_is_not_used) {
  pm__device_info a100 = fake_gpu(1, 0), twin = fake_gpu(0, 5);
  put_on(&a100, real_sha(&pm__op_matadd), &pm__op_matadd, M1000, MATADD(4), 1.0);
  pm__decision d;
  cr_assert_eq(decide(&pm__op_matadd, M1000, &d), PM__FROM_DEFAULT, "an A100's winner");
  cr_assert_eq(decide_on(&a100, &pm__op_matadd, M1000, &d), PM__FROM_EXACT, "serves the A100");
  put_on(&twin, real_sha(&pm__op_matadd), &pm__op_matadd, M1000, MATADD(2), 1.0);
  cr_assert_eq(decide(&pm__op_matadd, M1000, &d), PM__FROM_EXACT,
               "another GPU of this model serves");
  cr_assert_str_eq(d.config, MATADD(2));
}

Test(serve_decide, a_stale_templates_winner_is_not_used) {
  put_on(&c->dev, SHA_A, &pm__op_matadd, M1000, MATADD(4), 1.0); /* an older matadd.cu */
  pm__decision d;
  cr_assert_eq(decide(&pm__op_matadd, M1000, &d), PM__FROM_DEFAULT);
  cr_assert_eq(decide(&pm__op_matadd, (pm__problem){.rows = 900, .cols = 900, .caller_align = 16},
                      &d),
               PM__FROM_DEFAULT, "nor at the nearest size");
  put(&pm__op_matadd, M1000, MATADD(1), 3.0); /* slower, but of the template built in */
  cr_assert_eq(decide(&pm__op_matadd, M1000, &d), PM__FROM_EXACT);
  cr_assert_str_eq(d.config, MATADD(1));
}

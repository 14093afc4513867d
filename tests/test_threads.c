/* test_threads.c: 16 threads sharing one context drive serving (runtime/api.c -> serve.c ->
 * decide.c and the lock-free cache of cache.c) without a GPU, on a fabricated database: random
 * sizes through the public calls, bad arguments, explain's decision, pm_reload, pm_errmsg and
 * pm_notice, all at once. Every call must land on a cache entry of its own key holding the
 * decision made for it (checked against the chain run alone beforehand), whatever the others do.
 * Built with -DPM_TSAN=ON (ctest -L tsan), ThreadSanitizer watches every access; under
 * -DPM_SANITIZE=ON, AddressSanitizer watches every read of freed memory.
 *
 * How calls get through without a GPU: the context has serving state but no device, and every
 * point the pool's decisions can choose is given a choice beforehand with a kernel that was never
 * loaded (nothing is compiled or loaded). A call then takes the hot path, or the slow path
 * (decide, find the choice, publish the entry: the cache grows from 1,024 slots to 32,768 under
 * the calls of each round, its readers taking no lock), and fails only at the launch, which finds
 * no device (PM_ENODEV; a reduce fails before it, finding no scratch: PM_ECUDA). */
#include <pthread.h>
#include <stdarg.h>
#include <time.h>

#include "dbtest.h"
#include "runtime.h"
#include "testutil.h"

#define THREADS 16
#define VISITS 4 /* threads that call each form of the pool */
#define POOL 12000 /* call forms per round, each a size of its own or a tuned one */
#define ROUNDS 3   /* each a fresh serving state: the cache grows anew */

static pm_ctx *c;
static char dir[64], path[128];
static uint64_t seed;

/* A choice's kernel that was never loaded: a launch finds no device before it would touch it. */
static const pm__module never_loaded = {.nentries = PM__MAX_ENTRIES};

/* What the fabricated database holds on the context's (fake) GPU: a few winners of each op. */
static const struct stored {
  const pm__op *op;
  pm__problem pr;
  const char *config;
} stored[] = {
    {&pm__op_matadd, {.rows = 1000, .cols = 1000}, "bx=128 by=2 vec=4 ept=1 grid=0 map=0 align=256"},
    {&pm__op_matadd, {.rows = 1000, .cols = 1000}, "bx=64 by=4 vec=1 ept=2 grid=0 map=0 align=256"},
    {&pm__op_matadd, {.rows = 4000, .cols = 3000, .variant = PM_COL_MAJOR},
     "bx=32 by=8 vec=2 ept=1 grid=1 map=1 align=512"},
    {&pm__op_reduce, {.n = 1u << 20}, "block=256 items=4 vec=4 step=2 combine=0 acc=0 grid=4"},
    {&pm__op_reduce, {.n = 1u << 24}, "block=512 items=2 vec=1 step=1 combine=3 acc=1 grid=2"},
    {&pm__op_add, {.n = 1u << 22}, "block=256 vec=4 items=2 grid=0"},
    {&pm__op_add, {.n = 1000}, "block=128 vec=1 items=1 grid=1"},
    {&pm__op_filter, {.rows = 512, .cols = 512, .radius = 1},
     "bx=32 by=8 tile=1 pad=1 ox=1 oy=2 vload=0 align=0"},
    {&pm__op_filter, {.rows = 2048, .cols = 1024, .radius = 3, .variant = PM_BORDER_ZERO},
     "bx=16 by=8 tile=0 pad=0 ox=1 oy=1 vload=0 align=0"},
};
#define NSTORED (int)(sizeof stored / sizeof stored[0])

static void setup(void) {
  dbtest_mkdir(dir);
  snprintf(path, sizeof path, "%s/pmtune.db", dir);
  cr_assert_eq(pm__ctx_create(&c, PM_DEVICE_NONE, path), PM_OK);
  c->dev = dbtest_gpu(0, 0);
  c->dev.max_threads_per_block = 1024;
  for (int i = 0; i < NSTORED; i++)
    dbtest_put_config(c, path, &c->dev, pm__template_find(stored[i].op->name)->sha256,
                      stored[i].op, stored[i].pr, stored[i].config, 1.0 + i);
  seed = pm_test_seed();
  cr_log_info("seed %#llx (PMTUNE_TEST_SEED replays it)", (unsigned long long)seed);
}

static void teardown(void) {
  pm__serve_free(c);
  pm__ctx_free(c);
  dbtest_cleanup(dir);
}

TestSuite(threads, .init = setup, .fini = teardown, .timeout = 600);

/* ---- The pool of calls, and what each must be served as ------------------------------------ */

/* One public call: its arguments (pointers are addresses never read) and what serving must make
 * of it: the op, the problem, its cache key, and the point and source the chain decides. */
typedef struct call_form {
  pm_op api;
  size_t rows, cols, n;
  int variant, radius;
  float *C, *A, *B; /* matadd, add; filter: out = C, in = A; reduce: x = A, sum = C */
  size_t pitch;     /* matadd, filter: every pitch */
  const pm__op *as;
  pm__problem pr;
  pm__cache_key key;
  int v[PM__MAX_PARAMS];
  pm__source source;
} call_form;

static call_form pool[POOL];
static const float weights[49]; /* filter's, copied by each call */

/* An address 1 TiB x region + off: three regions never overlap, whatever n. */
static float *addr(int region, size_t off) {
  return (float *)(uintptr_t)(((uintptr_t)region << 40) + off);
}

/* Log-uniform in [1, max]. */
static size_t draw_size(uint64_t *s, size_t max) {
  double u = (double)(pm_test_rand(s) >> 11) / 9007199254740992.0;
  size_t v = (size_t)exp(u * log((double)max));
  return v < 1 ? 1 : v > max ? max : v;
}

/* What api.c serves f as: the op and problem (the packed matadd as add). */
static void served_as(call_form *f) {
  size_t vals[6];
  memset(&f->pr, 0, sizeof f->pr);
  if (f->api == PM_OP_MATADD) {
    int col = f->variant == PM_COL_MAJOR;
    size_t lines = col ? f->cols : f->rows, line = 4 * (col ? f->rows : f->cols);
    size_t ptrs[3] = {(size_t)f->C, (size_t)f->A, (size_t)f->B};
    if ((lines == 1 || f->pitch == line) && f->rows * f->cols <= 0x7fffffffu) {
      f->as = &pm__op_add;
      f->pr.n = (unsigned)(f->rows * f->cols), f->pr.caller_align = pm__alignment_of(ptrs, 3);
      return;
    }
    for (int i = 0; i < 3; i++) vals[2 * i] = ptrs[i], vals[2 * i + 1] = lines > 1 ? f->pitch : 0;
    f->as = &pm__op_matadd;
    f->pr = (pm__problem){.rows = (unsigned)f->rows, .cols = (unsigned)f->cols,
                          .variant = f->variant, .caller_align = pm__alignment_of(vals, 6)};
  } else if (f->api == PM_OP_ADD) {
    size_t ptrs[3] = {(size_t)f->C, (size_t)f->A, (size_t)f->B};
    f->as = &pm__op_add;
    f->pr = (pm__problem){.n = (unsigned)f->n, .caller_align = pm__alignment_of(ptrs, 3)};
  } else if (f->api == PM_OP_REDUCE) {
    size_t x = (size_t)f->A;
    f->as = &pm__op_reduce;
    f->pr = (pm__problem){.n = (unsigned)f->n, .caller_align = pm__alignment_of(&x, 1)};
  } else {
    size_t v4[4] = {(size_t)f->C, f->rows > 1 ? f->pitch : 0, (size_t)f->A,
                    f->rows > 1 ? f->pitch : 0};
    f->as = &pm__op_filter;
    f->pr = (pm__problem){.rows = (unsigned)f->rows, .cols = (unsigned)f->cols,
                          .radius = f->radius, .variant = f->variant,
                          .caller_align = pm__alignment_of(v4, 4)};
  }
}

/* A random call: one of the four calls at a random size (one in ten a size stored above), with
 * pointers 16, 8 or 4 bytes aligned and pitches padded to a multiple of 4, 8 or 16 bytes. */
static void draw_call(uint64_t *s, call_form *f) {
  static const size_t offs[] = {0, 8, 4, 12};
  memset(f, 0, sizeof *f);
  f->api = (pm_op)(pm_test_rand(s) % 4);
  size_t off = offs[pm_test_rand(s) % 4], round = (size_t)4 << (pm_test_rand(s) % 3);
  f->C = addr(1, off), f->A = addr(2, pm_test_rand(s) % 2 ? off : 0), f->B = addr(3, off);
  f->rows = draw_size(s, 20000), f->cols = draw_size(s, 20000), f->n = draw_size(s, 1u << 28);
  f->variant = (int)(pm_test_rand(s) % 2);
  f->radius = 1 + (int)(pm_test_rand(s) % 3);
  if (pm_test_rand(s) % 10 == 0) { /* a stored size of this op, if any */
    const struct stored *st = &stored[pm_test_rand(s) % NSTORED];
    if (st->op->api == f->api)
      f->rows = st->pr.rows, f->cols = st->pr.cols, f->n = st->pr.n, f->radius = st->pr.radius,
      f->variant = st->pr.variant, f->C = addr(1, 0), f->A = addr(2, 0), f->B = addr(3, 0);
  }
  if (f->api == PM_OP_MATADD || f->api == PM_OP_FILTER) {
    int col = f->api == PM_OP_MATADD && f->variant == PM_COL_MAJOR;
    size_t line = 4 * (col ? f->rows : f->cols);
    f->pitch = (line + round - 1) / round * round + (pm_test_rand(s) % 3 ? round : 0);
  }
  served_as(f);
}

/* Makes the pool for a round: each call decided by the chain alone, on a snapshot of its own,
 * and every point so chosen given a choice (never loaded) in c's cache. */
static void make_pool(uint64_t *s) {
  pm__db *db = NULL;
  pm__db_known known[PM__MAX_OPS];
  cr_assert_eq(pm__db_open(c, path, PM__DB_READONLY, pm__ops_db(), &db), PM_OK, "%s", pm_errmsg(c));
  for (int i = 0; pm__ops[i] != NULL; i++)
    cr_assert_eq(pm__op_known_load(db, &c->dev, pm__ops[i], &known[i]), PM_OK, "%s", pm_errmsg(c));
  int sources[4] = {0};
  for (int i = 0; i < POOL; i++) {
    call_form *f = &pool[i];
    pm__decision d;
    draw_call(s, f);
    f->source = pm__decide_quiet(c, &known[pm__op_index(f->as)], NULL, f->as, &f->pr, &d);
    memcpy(f->v, d.v, sizeof f->v);
    pm__cache_key_of(f->as, &f->pr, &f->key);
    sources[f->source]++;
    pm__cache *t = &c->serve->cache;
    if (pm__cache_choice_find(t, f->as, f->v, &f->pr) == NULL)
      cr_assert_not_null(pm__cache_choice_add(t, f->as, f->v, &f->pr, &never_loaded));
  }
  for (int i = 0; pm__ops[i] != NULL; i++) pm__db_known_free(&known[i]);
  pm__db_close(db);
  cr_assert(sources[PM__FROM_EXACT] > 0 && sources[PM__FROM_NEAREST] > 0 &&
                sources[PM__FROM_DEFAULT] > 0,
            "the pool has calls of each source: %d exact, %d nearest, %d default",
            sources[PM__FROM_EXACT], sources[PM__FROM_NEAREST], sources[PM__FROM_DEFAULT]);
}

/* ---- The threads ---------------------------------------------------------------------------- */

typedef struct tally {
  int id; /* the thread's number: its draws are seed's and its own */
  long calls, wrong, bad_status, refused, decided, reloads, bad_errmsg;
  char first[300]; /* the first thing found wrong */
} tally;

static void wrong(tally *t, long *counter, const char *fmt, ...) {
  (*counter)++;
  if (t->first[0] != '\0') return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->first, sizeof t->first, fmt, ap);
  va_end(ap);
}

static int make_call(const call_form *f) {
  switch (f->api) {
  case PM_OP_MATADD:
    return pm_matadd(c, f->rows, f->cols, (pm_order)f->variant, f->C, f->pitch, f->A, f->pitch,
                     f->B, f->pitch, NULL);
  case PM_OP_ADD: return pm_add(c, f->n, f->C, f->A, f->B, NULL);
  case PM_OP_REDUCE: return pm_reduce_sum(c, f->n, f->A, f->C, NULL);
  default:
    return pm_filter(c, f->rows, f->cols, f->C, f->pitch, f->A, f->pitch, weights, f->radius,
                     (pm_border)f->variant, NULL);
  }
}

/* The entry f's call landed on: its own key, the choice of the point decided for it. */
static void check_entry(tally *t, const call_form *f) {
  const pm__entry *e = pm__cache_lookup(&c->serve->cache, &f->key);
  char text[96];
  pm__problem_text(f->as, &f->pr, text, sizeof text);
  if (e == NULL) {
    wrong(t, &t->wrong, "%s %s align %u: not in the cache after its call", f->as->name, text,
          f->pr.caller_align);
    return;
  }
  const pm__choice *h = e->choice;
  if (memcmp(&e->k, &f->key, sizeof f->key) != 0 || h->op != f->as ||
      memcmp(h->v, f->v, sizeof h->v) != 0 || h->variant != f->pr.variant ||
      h->radius != f->pr.radius || e->source != f->source)
    wrong(t, &t->wrong, "%s %s align %u: served %s from %s, decided %s", f->as->name, text,
          f->pr.caller_align, h->op->name, pm__source_name((pm__source)e->source),
          pm__source_name(f->source));
}

/* What a failed call may say: one of the messages these calls make, whole (a reduce's scratch
 * fails first inside scratch.c, then says so as a whole: another thread may read either; explain's
 * decision leaves why nothing tuned fits). */
static void check_errmsg(tally *t) {
  static const char *const starts[] = {"pm_matadd: ", "pm_add: ", "pm_reduce_sum: ",
                                       "pm_filter: ", "this context was opened without a device",
                                       "reduce: no scratch for the reduction: ", "scratch.c:",
                                       "reduce scratch: ", "tuning database "};
  const char *m = pm_errmsg(c);
  for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
    if (strncmp(m, starts[i], strlen(starts[i])) == 0 && strlen(m) < 1024) return;
  wrong(t, &t->bad_errmsg, "pm_errmsg: '%.200s'", m);
}

/* One bad call of nine kinds, each refused with PM_EINVAL before it reaches serving. */
static int bad_call(uint64_t *s) {
  float *p = addr(1, 0), *q = addr(2, 0), *r = addr(3, 0);
  switch (pm_test_rand(s) % 9) {
  case 0: return pm_matadd(c, 10, 10, PM_ROW_MAJOR, NULL, 40, p, 40, q, 40, NULL);
  case 1: return pm_matadd(c, 10, 10, (pm_order)7, p, 40, q, 40, r, 40, NULL);
  case 2: return pm_matadd(c, 10, 10, PM_ROW_MAJOR, p, 40, q, 36, r, 40, NULL);
  case 3: return pm_add(c, 0, p, q, r, NULL);
  case 4: return pm_add(c, 1000, addr(2, 4), q, r, NULL); /* C overlaps A */
  case 5: return pm_reduce_sum(c, 1000, addr(2, 2), p, NULL);
  case 6: return pm_reduce_sum(c, (size_t)1 << 31, q, p, NULL);
  case 7: return pm_filter(c, 10, 10, p, 40, q, 40, weights, 4, PM_BORDER_CLAMP, NULL);
  default: return pm_filter(c, 10, 10, p, 40, q, 40, weights, 1, (pm_border)9, NULL);
  }
}

static pthread_barrier_t go; /* the threads and the test: all start at once */

/* Thread i: walks VISITS / THREADS of the pool from its own place, i / THREADS of the way (so
 * that each size is called by VISITS threads, met first by one while others call theirs), one
 * step in twenty doing something else as well: a bad call, explain's decision, a pm_reload (1 in
 * 50 of those), a look at pm_notice. */
static void *worker(void *arg) {
  tally *t = arg;
  uint64_t s = seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(t->id + 1));
  pthread_barrier_wait(&go);
  size_t start = (size_t)(t->id % THREADS) * POOL / THREADS;
  for (size_t k = 0; k < (size_t)POOL * VISITS / THREADS; k++) {
    const call_form *f = &pool[(start + k) % POOL];
    int rc = make_call(f), want = f->api == PM_OP_REDUCE ? PM_ECUDA : PM_ENODEV;
    t->calls++;
    if (rc != want)
      wrong(t, &t->bad_status, "%s n=%zu %zux%zu: %s, not %s: %s", f->as->name, f->n, f->rows,
            f->cols, pm_errname(rc), pm_errname(want), pm_errmsg(c));
    check_errmsg(t);
    check_entry(t, f);
    if (pm_test_rand(&s) % 20 != 0) continue;
    switch (pm_test_rand(&s) % 4) {
    case 0:
      if ((rc = bad_call(&s)) != PM_EINVAL)
        wrong(t, &t->bad_status, "a bad call: %s: %s", pm_errname(rc), pm_errmsg(c));
      t->refused++;
      check_errmsg(t);
      break;
    case 1: {
      pm__decision d;
      pm__serve_decide(c, f->as, &f->pr, &d); /* always decides */
      if (d.source != f->source || memcmp(d.v, f->v, sizeof d.v) != 0)
        wrong(t, &t->wrong, "explain: %s from %s, the chain alone: %s", d.config,
              pm__source_name(d.source), pm__source_name(f->source));
      t->decided++;
      break;
    }
    case 2:
      if (pm_test_rand(&s) % 50 != 0) break;
      if ((rc = pm_reload(c)) != PM_OK)
        wrong(t, &t->bad_status, "pm_reload: %s: %s", pm_errname(rc), pm_errmsg(c));
      t->reloads++;
      break;
    default: {
      const char *n = pm_notice(c);
      if (n != NULL && strstr(n, "nothing tuned for it") == NULL)
        wrong(t, &t->bad_errmsg, "pm_notice: '%.200s'", n);
    }
    }
  }
  return NULL;
}

static int key_cmp(const void *a, const void *b) {
  return memcmp(&((const call_form *)a)->key, &((const call_form *)b)->key, sizeof(pm__cache_key));
}

Test(threads, sixteen_threads_share_serving_on_one_context) {
  uint64_t s = seed;
  long total = 0;
  for (int round = 0; round < ROUNDS; round++) {
    pm_options o = {.record = 1}; /* the calls counted in entries, written at the end */
    cr_assert_eq(pm__serve_init(c, &o), PM_OK);
    make_pool(&s);
    pthread_t th[THREADS];
    tally t[THREADS];
    memset(t, 0, sizeof t);
    cr_assert_eq(pthread_barrier_init(&go, NULL, THREADS + 1), 0);
    for (int i = 0; i < THREADS; i++) t[i].id = round * THREADS + i;
    for (int i = 0; i < THREADS; i++)
      cr_assert_eq(pthread_create(&th[i], NULL, worker, &t[i]), 0);
    pthread_barrier_wait(&go);
    double t0 = pm__now_ms();
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    long calls = 0, refused = 0, decided = 0, reloads = 0;
    for (int i = 0; i < THREADS; i++) {
      cr_assert_eq(t[i].wrong + t[i].bad_status + t[i].bad_errmsg, 0,
                   "round %d, thread %d: %ld wrong, %ld bad statuses, %ld bad messages; the "
                   "first: %s", round, i, t[i].wrong, t[i].bad_status, t[i].bad_errmsg,
                   t[i].first);
      calls += t[i].calls, refused += t[i].refused, decided += t[i].decided;
      reloads += t[i].reloads;
    }
    /* Alone again: every size is in the cache once, holding its decision. */
    tally after = {0};
    for (int i = 0; i < POOL; i++) check_entry(&after, &pool[i]);
    cr_assert_eq(after.wrong, 0, "after the round: %s", after.first);
    qsort(pool, POOL, sizeof pool[0], key_cmp);
    size_t distinct = 1;
    for (int i = 1; i < POOL; i++) distinct += key_cmp(&pool[i - 1], &pool[i]) != 0;
    cr_assert_eq(c->serve->cache.used, distinct, "the table holds each key once");
    cr_log_info("round %d: %ld calls (%zu sizes), %ld bad calls refused, %ld decisions by "
                "explain's path, %ld reloads, in %.0f ms", round, calls, distinct, refused,
                decided, reloads, pm__now_ms() - t0);
    total += calls;
    pm__serve_free(c);
  }
  cr_assert_gt(total, 0);
}

/* ---- pm_notice while the notice is set ------------------------------------------------------ */

/* pm_notice used to read the context's notice without its lock while another thread's first
 * fallback set it under the lock: a data race (the pointer, then the text behind it), which
 * ThreadSanitizer reports here; the reader takes no other lock that could order the two. */
static void *notice_setter(void *arg) {
  (void)arg;
  nanosleep(&(struct timespec){0, 2000000}, NULL);
  pm__notice(c, "the first fallback, and why");
  return NULL;
}

Test(threads, notice_is_read_whole_while_another_thread_sets_it) {
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, notice_setter, NULL), 0);
  const char *n;
  while ((n = pm_notice(c)) == NULL) {
  }
  cr_assert_str_eq(n, "the first fallback, and why");
  pthread_join(th, NULL);
}

/* threads.c: threads sharing one pm_ctx on a GPU (tests/RELIABILITY.md, "Threads"): for a given
 * time, each thread calls every operation (pm_matadd, pm_add, pm_reduce_sum, pm_filter) at random
 * sizes, layouts and alignments on a stream of its own, checks each result against the host
 * reference, and now and then makes a bad call (which must be refused with PM_EINVAL), reads
 * pm_errmsg and pm_notice, or calls pm_reload. Prints the calls made, the wrong results (must be 0)
 * and the errors by kind; exits 0 only where no result was wrong and no call failed unexpectedly.
 * Usage: pmtune_reliability_threads [--seconds S] [--threads N] [--seed X] [--db PATH]
 *   (defaults: 60 s, 16 threads, a seed from the clock; the database pm_open would use) */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define MAX_THREADS 256
#define KINDS 12 /* -status of pm_status: 0 (none) .. 11 (PM_EVERIFY) */

static pm_ctx *shared;
static const char *db_path;
static double deadline_ms;
static uint64_t seed0;

/* What the threads found, summed. */
static atomic_long calls[4], wrong, refused, reloads, harness, unexpected[KINDS];
static atomic_int printed; /* the first few problems are printed whole */

static void report(const char *fmt, const char *what, const char *detail) {
  if (atomic_fetch_add(&printed, 1) < 20) printf(fmt, what, detail);
}

static uint64_t rnd(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Log-uniform in [1, max]. */
static unsigned draw(uint64_t *s, unsigned max) {
  double u = (double)(rnd(s) >> 11) / 9007199254740992.0;
  unsigned v = (unsigned)exp(u * log((double)max));
  return v < 1 ? 1 : v > max ? max : v;
}

/* One call's device buffers: each line `pitch` bytes apart, each buffer starting `off[i]` floats
 * into its allocation (so that pointers are 4, 8 or 16 bytes aligned). */
typedef struct buffers {
  float *alloc[3], *in[2], *out;
  size_t pitch, bytes;
} buffers;

static void unplace(buffers *b) {
  for (int i = 0; i < 3; i++) cudaFree(b->alloc[i]);
  memset(b, 0, sizeof *b);
}

/* Lays h's inputs out as a caller might: pitch rounded up to `round` bytes, offsets random; the
 * copies and the output's poison on stream st, waited for. (On the legacy stream, as cudaMemcpy2D
 * and cudaMemset put them, they are not ordered before a call on a non-blocking stream: the
 * poison landed after the kernel's writes, or the kernel read inputs not yet copied, and 599 of
 * 14,692 results were wrong for it in bench/results/2026-11-23-h100/gpu16.sh.) */
static int place(const pm__data *h, int scalar_out, size_t round, uint64_t *s, buffers *b,
                 cudaStream_t st) {
  size_t w = (size_t)h->inner * sizeof(float);
  memset(b, 0, sizeof *b);
  b->pitch = (w + round - 1) / round * round;
  b->bytes = b->pitch * h->lines;
  for (int i = 0; i < 3; i++) {
    size_t off = h->lines > 1 && round % 16 == 0 ? 0 : rnd(s) % 4; /* floats */
    size_t bytes = i == 2 && scalar_out ? sizeof(float) : b->bytes;
    if (i < 2 && h->host_in[i] == NULL) continue;
    if (cudaMalloc((void **)&b->alloc[i], bytes + 16) != cudaSuccess) return 0;
    float *p = b->alloc[i] + off;
    if (i < 2) {
      b->in[i] = p;
      if (cudaMemcpy2DAsync(p, b->pitch, h->host_in[i], w, w, h->lines, cudaMemcpyHostToDevice,
                            st) != cudaSuccess)
        return 0;
    } else {
      b->out = p;
      if (cudaMemsetAsync(p, 0xff, bytes, st) != cudaSuccess) return 0; /* NaN: unwritten shows */
    }
  }
  return cudaStreamSynchronize(st) == cudaSuccess;
}

/* The library call of op on b with the shared context, on stream s. */
static int call(pm_op op, const pm__problem *pr, const pm__data *h, const buffers *b,
                cudaStream_t s) {
  switch (op) {
  case PM_OP_MATADD:
    return pm_matadd(shared, pr->rows, pr->cols, (pm_order)pr->variant, b->out, b->pitch, b->in[0],
                     b->pitch, b->in[1], b->pitch, s);
  case PM_OP_ADD: return pm_add(shared, pr->n, b->out, b->in[0], b->in[1], s);
  case PM_OP_REDUCE: return pm_reduce_sum(shared, pr->n, b->in[0], b->out, s);
  default:
    return pm_filter(shared, pr->rows, pr->cols, b->out, b->pitch, b->in[0], b->pitch, h->filter.weights.f32,
                     pr->radius, (pm_border)pr->variant, s);
  }
}

/* Whether b's output is the reference: bit for bit (matadd, add, filter), or within the error
 * bound of the configuration served (reduce, op->verify on the thread's own context). */
static int right(pm_ctx *own, const pm__op *op, pm__data *h, const buffers *b, char *why,
                 size_t cap) {
  if (op->api == PM_OP_REDUCE) {
    size_t x = (size_t)b->in[0];
    pm__problem pr = {.n = h->pr.n, .caller_align = pm__alignment_of(&x, 1)};
    pm__decision d;
    pm__data view = *h;
    double err;
    view.out = b->out;
    pm__serve_decide(shared, op, &pr, &d);
    if (op->verify(op, own, d.v, &view, &err) == PM_OK) return 1;
    snprintf(why, cap, "%s (served %s)", pm_errmsg(own), d.config);
    return 0;
  }
  size_t w = (size_t)h->inner * sizeof(float), n = (size_t)h->inner * h->lines, bad = 0, first = 0;
  const float *ref = h->host_ref;
  float *got = malloc(n * sizeof *got);
  if (got == NULL || cudaMemcpy2D(got, w, b->out, b->pitch, w, h->lines,
                                  cudaMemcpyDeviceToHost) != cudaSuccess) {
    free(got);
    snprintf(why, cap, "the output could not be read back");
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    if (memcmp(&got[i], &ref[i], sizeof(float)) != 0 && bad++ == 0) first = i;
  if (bad)
    snprintf(why, cap, "%zu of %zu differ, the first (line %zu, %zu) is %.9g, want %.9g", bad, n,
             first / h->inner, first % h->inner, got[first], ref[first]);
  free(got);
  return bad == 0;
}

/* A random problem of a random op, at most about 4 M elements. */
static const pm__op *draw_problem(uint64_t *s, pm__problem *pr) {
  static const pm_op ops[] = {PM_OP_MATADD, PM_OP_ADD, PM_OP_REDUCE, PM_OP_FILTER};
  pm_op e = ops[rnd(s) % 4];
  memset(pr, 0, sizeof *pr);
  if (e == PM_OP_ADD || e == PM_OP_REDUCE) {
    pr->n = draw(s, e == PM_OP_ADD ? 1u << 22 : 1u << 24);
  } else {
    pr->rows = draw(s, 4096);
    pr->cols = draw(s, (1u << 22) / pr->rows < 4096 ? (1u << 22) / pr->rows : 4096);
    pr->variant = (int)(rnd(s) % 2);
    if (e == PM_OP_FILTER) pr->radius = 1 + (int)(rnd(s) % 3);
  }
  return pm__op_of(e);
}

/* One of eight bad calls (never dereferenced): each must be refused with PM_EINVAL. */
static int bad_call(uint64_t *s, cudaStream_t st) {
  float *p = (float *)(uintptr_t)0x10000, *q = (float *)(uintptr_t)0x20000, w[49] = {0};
  switch (rnd(s) % 8) {
  case 0: return pm_matadd(shared, 10, 10, PM_ROW_MAJOR, NULL, 40, p, 40, q, 40, st);
  case 1: return pm_matadd(shared, 10, 10, (pm_order)7, p, 40, q, 40, p, 40, st);
  case 2: return pm_matadd(shared, 10, 10, PM_ROW_MAJOR, p, 40, q, 36, p, 40, st);
  case 3: return pm_add(shared, 0, p, q, q, st);
  case 4: return pm_add(shared, 1000, (float *)(uintptr_t)0x10004, p, q, st);
  case 5: return pm_reduce_sum(shared, 1000, (float *)(uintptr_t)0x10002, p, st);
  case 6: return pm_filter(shared, 10, 10, p, 40, q, 40, w, 4, PM_BORDER_CLAMP, st);
  default: return pm_filter(shared, 0, 10, p, 40, q, 40, w, 1, PM_BORDER_ZERO, st);
  }
}

static void unexpected_status(int rc, const char *what) {
  atomic_fetch_add(&unexpected[-rc >= 0 && -rc < KINDS ? -rc : 0], 1);
  char detail[600];
  snprintf(detail, sizeof detail, "%s: %s", pm_errname(rc), pm_errmsg(shared));
  report("FAIL %s: %s\n", what, detail);
}

static void *worker(void *arg) {
  uint64_t s = seed0 ^ (0x9E3779B97F4A7C15ull * ((uint64_t)(uintptr_t)arg + 1));
  pm_ctx *own = NULL; /* for references and checks: the calls all go through `shared` */
  pm_options o = {.device = 0, .db_path = db_path};
  cudaStream_t st = NULL;
  if (pm_open(&own, &o) != PM_OK || cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != 0) {
    report("FAIL %s: %s\n", "a thread's own context or stream", pm_errmsg(own));
    atomic_fetch_add(&harness, 1);
    pm_close(own);
    return NULL;
  }
  for (int first = 1; first || pm__now_ms() < deadline_ms; first = 0) { /* one round at least */
    pm__problem pr;
    pm__data h = {0};
    buffers b = {0};
    char what[160], ptext[96], why[600];
    const pm__op *op = draw_problem(&s, &pr);
    static const size_t rounds[] = {4, 8, 16, 64, 512};
    pm__problem_text(op, &pr, ptext, sizeof ptext);
    if (op->prepare(op, own, &pr, rnd(&s), &h) != PM_OK ||
        !place(&h, op->api == PM_OP_REDUCE, rounds[rnd(&s) % 5], &s, &b, st)) {
      report("FAIL %s: %s\n", "preparing a problem", pm_errmsg(own));
      atomic_fetch_add(&harness, 1);
      pm__data_free(&h);
      unplace(&b);
      continue;
    }
    snprintf(what, sizeof what, "%s %s, pitch %zu", op->name, ptext, b.pitch);
    for (int rep = 1 + (int)(rnd(&s) % 3); rep > 0; rep--) { /* cold, then warm */
      int rc = call(op->api, &pr, &h, &b, st);
      atomic_fetch_add(&calls[op->api], 1);
      if (rc != PM_OK) {
        unexpected_status(rc, what);
        break;
      }
      if (cudaStreamSynchronize(st) != cudaSuccess) {
        unexpected_status(PM_ECUDA, what);
        cudaGetLastError();
        break;
      }
      if (!right(own, op, &h, &b, why, sizeof why)) {
        atomic_fetch_add(&wrong, 1);
        report("WRONG %s: %s\n", what, why);
      }
      cudaMemsetAsync(b.out, 0xff, op->api == PM_OP_REDUCE ? sizeof(float) : b.bytes, st);
    }
    unplace(&b);
    pm__data_free(&h);
    if (rnd(&s) % 4 == 0) { /* a bad call, and its message */
      int rc = bad_call(&s, st);
      if (rc == PM_EINVAL) atomic_fetch_add(&refused, 1);
      else unexpected_status(rc, "a bad call");
      if (pm_errmsg(shared)[0] == '\0') unexpected_status(PM_EINVAL, "pm_errmsg is empty");
    }
    if (rnd(&s) % 200 == 0) {
      if (pm_reload(shared) == PM_OK) atomic_fetch_add(&reloads, 1);
      else unexpected_status(PM_EINVAL, "pm_reload");
    }
    (void)pm_notice(shared);
  }
  cudaStreamSynchronize(st);
  cudaStreamDestroy(st);
  pm_close(own);
  return NULL;
}

int main(int argc, char **argv) {
  double seconds = 60;
  int nthreads = 16;
  seed0 = (uint64_t)pm__now_ms() * 2654435761u ^ 0x5851F42D4C957F2Dull;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) nthreads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed0 = strtoull(argv[++i], NULL, 0);
    else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) db_path = argv[++i];
    else {
      fprintf(stderr, "usage: pmtune_reliability_threads [--seconds S] [--threads N] [--seed X] "
                      "[--db PATH]\n");
      return 2;
    }
  }
  if (!(seconds > 0) || nthreads < 1 || nthreads > MAX_THREADS) {
    fprintf(stderr, "pmtune_reliability_threads: --seconds above 0, --threads 1 to %d\n",
            MAX_THREADS);
    return 2;
  }
  pm_options o = {.device = 0, .db_path = db_path};
  if (pm_open(&shared, &o) != PM_OK) {
    fprintf(stderr, "pmtune_reliability_threads: pm_open: %s\n", pm_errmsg(shared));
    pm_close(shared);
    return 1;
  }
  printf("%s (%s), %d threads on one context for %.0f s, seed %#llx, database %s\n",
         shared->dev.name, shared->dev.arch, nthreads, seconds, (unsigned long long)seed0,
         db_path ? db_path : "(the default)");
  fflush(stdout);
  pthread_t th[MAX_THREADS];
  double t0 = pm__now_ms();
  deadline_ms = t0 + seconds * 1000;
  for (intptr_t i = 0; i < nthreads; i++)
    if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
      fprintf(stderr, "pmtune_reliability_threads: pthread_create failed\n");
      return 1;
    }
  for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
  const char *notice = pm_notice(shared);
  long total = 0, errors = 0;
  for (int i = 0; i < 4; i++) total += calls[i];
  printf("%.1f s: %ld calls (matadd %ld, reduce %ld, filter %ld, add %ld), %ld wrong results, "
         "%ld bad calls refused, %ld reloads, %ld harness failures\n",
         (pm__now_ms() - t0) / 1000, total, (long)calls[PM_OP_MATADD], (long)calls[PM_OP_REDUCE],
         (long)calls[PM_OP_FILTER], (long)calls[PM_OP_ADD], (long)wrong, (long)refused,
         (long)reloads, (long)harness);
  printf("unexpected errors by kind:");
  for (int k = 1; k < KINDS; k++) {
    errors += unexpected[k];
    if (unexpected[k]) printf(" %s %ld", pm_errname(-k), (long)unexpected[k]);
  }
  errors += unexpected[0];
  printf("%s\nnotice: %s\n", errors ? "" : " none", notice ? notice : "(none)");
  pm_close(shared);
  return wrong == 0 && errors == 0 && harness == 0 && total > 0 ? 0 : 1;
}

// pmtune_peers.cu: the peer benchmarks (issue 7): times, with pmtune's protocol and in one run,
// what pmtune's tuned kernels must beat (cub::DeviceReduce::Sum for reduce, NPP's
// nppiFilterBorder_32f_C1R_Ctx for filter, a plain float4 add for matadd) and the device-to-device
// copy that bounds them all, and prints one JSON object per line. Built by CMake only where nvcc
// is; the library never needs it. The one C++ file of pmtune (CUB is C++).
//
// The protocol is the tuner's own code, linked in (tuner/timer.h, the same functions that time
// pmtune's kernels): inputs are fresh random data (pm__random_fill, the tuner's seeds); the
// output is poisoned (0xff bytes, a NaN) before one run whose result is checked against a host
// reference; then 200 ms of GPU work (pm__timer_warm) and the warm-up runs; then
// pm__time_batches takes the samples: each flushes the L2 cache (reads twice its size), holds
// the GPU until the host has queued the whole sample, and times one run of the peer on each of
// K copies of its inputs and output back to back; the sample is the time per run. K (--copies)
// is pm__copies_for's unless given (pmtune bench passes its own). Median (pm__median), min and
// max over the samples; GB/s = the bytes that must move / the median.
#include <cuda_runtime.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <atomic>
#include <cub/device/device_reduce.cuh>
#include <thread>
#include <vector>

#include "timer.h" /* the tuner's timing protocol, C linkage */
#ifdef PM_HAVE_NPP
#include <nppi.h>
#endif

static const char usage[] =
    "usage: pmtune_peers --op matadd|reduce|filter|copy --size S [--radius R] [--samples N]\n"
    "                    [--warmup N] [--copies K]\n"
    "\n"
    "Times the peer of one pmtune operation on CUDA device 0 (CUDA_VISIBLE_DEVICES picks\n"
    "another), with pmtune's protocol: random inputs, the output poisoned and checked against a\n"
    "host reference, warm-up runs, then samples each timed with CUDA events after an L2 flush\n"
    "(reading twice the L2's size):\n"
    "one run on each of K copies of the data, back to back; a sample is the time per run.\n"
    "\n"
    "  --op matadd   a float4 grid-stride c = a + b (the stand-in for torch.add and cupy.add);\n"
    "                --size ROWSxCOLS, packed; bytes = 3 x rows x cols x 4\n"
    "  --op reduce   cub::DeviceReduce::Sum of N floats; --size N (1 to 2^31-1); bytes = 4N\n"
    "  --op filter   nppiFilterBorder_32f_C1R_Ctx, replicate (clamp-to-edge) border, computing\n"
    "                pmtune's correlation with a random (2R+1)^2 mask; --size ROWSxCOLS,\n"
    "                --radius R (1 to 3, default 1); bytes = 2 x rows x cols x 4\n"
    "  --op copy     cudaMemcpyAsync device to device; --size BYTES; bytes = 2 x BYTES (the\n"
    "                hardware's limit, measured on the spot)\n"
    "  --samples N   timed samples, 1 to 64 (default 25)\n"
    "  --warmup N    untimed runs first (default 3)\n"
    "  --copies K    copies per sample, 1 to 32 (default: enough that a sample moves twice the\n"
    "                L2 cache's size, as pmtune's tuner does)\n"
    "\n"
    "Prints one JSON object on stdout: op, size, (filter) radius, peer, gpu, median_ms, min_ms,\n"
    "max_ms, samples, gbps, verified, error; where the peer was not built in (NPP missing),\n"
    "op, size, peer, gpu, available (false) and why. error: matadd and copy, the fraction of\n"
    "elements (bytes) that differ from the reference; reduce, |sum - ref| / sum|x|; filter, the\n"
    "largest |out - ref| / sum|w x| over the image (ref in double).\n"
    "Exit status: 0 measured and verified (or the peer is not built in), 1 failed (no CUDA\n"
    "device, a CUDA or NPP error, a wrong result: its line is still printed), 2 bad usage.\n";

/* ---- Errors ---------------------------------------------------------------------------------- */

static void vreport(const char *fmt, va_list ap) {
  fputs("pmtune_peers: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

/* A failure after the arguments were read: says why on one line and exits with status 1. The
 * program holds nothing that exiting does not release; _exit skips the CUDA runtime's teardown,
 * which would wait for a host function still held at a timing gate (wait_gate). */
[[noreturn]] static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(fmt, ap);
  va_end(ap);
  fflush(stdout);
  _exit(1);
}

[[noreturn]] static void usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(fmt, ap);
  va_end(ap);
  fputs("see 'pmtune_peers --help'\n", stderr);
  exit(2);
}

static void cuda_check(cudaError_t e, const char *call, int line) {
  if (e != cudaSuccess)
    fail("line %d: %s: %s (%s)", line, call, cudaGetErrorString(e), cudaGetErrorName(e));
}
#define CUDA_CHECK(call) cuda_check((call), #call, __LINE__)

#ifdef PM_HAVE_NPP
static void npp_check(NppStatus s, const char *call, int line) {
  if (s != NPP_SUCCESS) fail("line %d: %s: NppStatus %d", line, call, (int)s);
}
#define NPP_CHECK(call) npp_check((call), #call, __LINE__)
#endif

/* ---- Host helpers ---------------------------------------------------------------------------- */

/* Runs fn(begin, end) over [0, n) in one chunk per core. */
template <typename F>
static void parallel_for(size_t n, F fn) {
  unsigned cores = std::thread::hardware_concurrency();
  size_t threads = std::min<size_t>(std::max(cores, 1u), 64), chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (size_t b = chunk; b < n; b += chunk) pool.emplace_back(fn, b, std::min(n, b + chunk));
  if (n > 0) fn(0, std::min(n, chunk));
  for (std::thread &t : pool) t.join();
}

#define SEED PM__DEFAULT_SEED /* the tuner's inputs: pm__random_fill with its seeds */
#define CHECK_BLOCK ((size_t)1 << 20) /* elements a thread checks at a time */

/* ---- The run: device, flush buffer, timing, output ------------------------------------------ */

typedef struct bench {
  const char *op;
  char size[64]; /* as the line prints it: "10000x10000", "268435456" */
  int radius;    /* filter; 0 otherwise */
  int samples, warmup;
  int copies; /* 0: pmtune's count for the bytes a run moves (pm__copies_for) */
  char gpu[256];
  int sm_count;
  pm_ctx *ctx;     /* device 0, for the timer */
  pm__timer *timer; /* the tuner's */
} bench;

/* Fails with the context's message where rc is not PM_OK. */
static void pm_check(int rc, pm_ctx *c, const char *call, int line) {
  if (rc != PM_OK) fail("line %d: %s: %s", line, call, pm_errmsg(c));
}
#define PM_CHECK(b, call) pm_check((call), (b)->ctx, #call, __LINE__)

/* Opens device 0 and the tuner's timer on it (after the arguments were read, so that --help
 * and bad usage need no GPU). */
static void bench_open(bench *b) {
  int rc = pm__ctx_create(&b->ctx, 0, NULL);
  if (rc != PM_OK) fail("%s", pm_errmsg(b->ctx));
  CUDA_CHECK(cudaSetDevice(0));
  snprintf(b->gpu, sizeof b->gpu, "%s", b->ctx->dev.name);
  b->sm_count = b->ctx->dev.sm_count;
  PM_CHECK(b, pm__timer_new(b->ctx, &b->timer));
}

/* The copies of a problem moving `bytes` per sample: --copies, else pm__copies_for's. */
static int copies_for(const bench *b, double bytes) {
  return b->copies > 0 ? b->copies : pm__copies_for(b->ctx, bytes);
}

/* What pm__time_batches calls for run j: the peer's launch on copy j, as a std::function. */
typedef struct run_arg {
  const std::function<void(int)> *run;
} run_arg;

static int run_one(pm_ctx *c, void *arg, int j) {
  (void)c;
  (*((const run_arg *)arg)->run)(j); /* a failed CUDA call ends the program (fail) */
  return PM_OK;
}

/* Runs `run(j)` (one launch of the peer on copy j of its data, on stream 0) warmup times after
 * 200 ms of GPU work, then takes b->samples samples with the tuner's pm__time_batches: each
 * after an L2 flush, `copies` runs on copies 0 .. copies - 1 between two events. Returns the
 * times per run in ms, sorted. */
static std::vector<double> time_runs(const bench *b, int copies, const std::function<void(int)> &run) {
  std::vector<double> ms(b->samples);
  /* checking the result on the host left the GPU idle, and an idle GPU's clocks are down */
  PM_CHECK(b, pm__timer_warm(b->ctx, b->timer, 200));
  for (int i = 0; i < b->warmup; i++) run(i % copies);
  run_arg arg = {&run};
  PM_CHECK(b, pm__time_batches(b->ctx, b->timer, b->samples, copies, run_one, &arg, ms.data()));
  pm__median(ms.data(), b->samples, NULL, NULL); /* sorts */
  return ms;
}

/* The median of sorted samples, as pm__median computes it. */
static double median(const std::vector<double> &ms) {
  std::vector<double> copy(ms);
  return pm__median(copy.data(), (int)copy.size(), NULL, NULL);
}

static void print_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      printf("\\%c", ch);
    else if (ch < 0x20)
      printf("\\u%04x", ch);
    else
      putchar(ch);
  }
  putchar('"');
}

/* The fields every line starts with. */
static void print_head(const bench *b, const char *peer) {
  printf("{\"op\":");
  print_string(b->op);
  printf(",\"size\":");
  print_string(b->size);
  if (b->radius > 0) printf(",\"radius\":%d", b->radius);
  printf(",\"peer\":");
  print_string(peer);
  printf(",\"gpu\":");
  print_string(b->gpu);
}

/* Prints the line of one measured peer; returns the exit status it calls for. */
static int report(const bench *b, const char *peer, const std::vector<double> &ms, int copies,
                  double bytes, bool verified, double error) {
  double med = median(ms);
  print_head(b, peer);
  printf(",\"median_ms\":%.6g,\"min_ms\":%.6g,\"max_ms\":%.6g,\"samples\":%d,\"copies\":%d,"
         "\"gbps\":%.1f",
         med, ms.front(), ms.back(), (int)ms.size(), copies, bytes / (med * 1e6));
  printf(",\"verified\":%s,\"error\":", verified ? "true" : "false");
  if (isfinite(error))
    printf("%.3g", error);
  else
    printf("null"); /* JSON has no NaN: the output was not (all) written */
  printf("}\n");
  fflush(stdout);
  return verified ? 0 : 1;
}

#ifndef PM_HAVE_NPP
static int report_unavailable(const bench *b, const char *peer, const char *why) {
  print_head(b, peer);
  printf(",\"available\":false,\"why\":");
  print_string(why);
  printf("}\n");
  fflush(stdout);
  return 0;
}
#endif

/* Copies n floats of device memory to a new host vector. */
static std::vector<float> to_host(const float *dev, size_t n) {
  std::vector<float> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

/* k device buffers of `bytes` each (copy j of a peer's input or output), filled from host when
 * given. */
static std::vector<void *> alloc_copies(int k, size_t bytes, const void *host) {
  std::vector<void *> v(k);
  for (int j = 0; j < k; j++) {
    CUDA_CHECK(cudaMalloc(&v[j], bytes));
    if (host != NULL) CUDA_CHECK(cudaMemcpy(v[j], host, bytes, cudaMemcpyHostToDevice));
  }
  return v;
}

static void free_copies(std::vector<void *> &v) {
  for (void *p : v) CUDA_CHECK(cudaFree(p));
  v.clear();
}

/* ---- copy: the limit ------------------------------------------------------------------------- */

static int bench_copy(const bench *b, size_t bytes) {
  const char *peer = "cudaMemcpyAsync D2D";
  std::vector<float> src((bytes + 3) / 4);
  pm__random_fill(src.data(), src.size(), SEED);
  int k = copies_for(b, 2.0 * bytes);
  std::vector<void *> d_src = alloc_copies(k, bytes, src.data()), d_dst = alloc_copies(k, bytes, NULL);
  auto run = [&](int j) {
    CUDA_CHECK(cudaMemcpyAsync(d_dst[j], d_src[j], bytes, cudaMemcpyDeviceToDevice, 0));
  };

  CUDA_CHECK(cudaMemset(d_dst[0], 0xff, bytes));
  run(0);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> got(bytes);
  CUDA_CHECK(cudaMemcpy(got.data(), d_dst[0], bytes, cudaMemcpyDeviceToHost));
  const unsigned char *want = (const unsigned char *)src.data();
  size_t bad = 0;
  for (size_t i = 0; i < bytes; i++) bad += got[i] != want[i];
  if (bad) fprintf(stderr, "pmtune_peers: copy: %zu of %zu bytes differ\n", bad, bytes);

  std::vector<double> ms = time_runs(b, k, run);
  free_copies(d_src);
  free_copies(d_dst);
  return report(b, peer, ms, k, 2.0 * bytes, bad == 0, (double)bad / bytes);
}

/* ---- matadd: a plain vectorised add stands in for the peers ---------------------------------- */

#define ADD_THREADS 256
#define ADD_WAVES 4 /* blocks: this many times what the SMs hold at once */

/* c = a + b over n packed floats: float4 accesses in a grid-stride loop, then the n % 4 tail. */
__global__ void __launch_bounds__(ADD_THREADS)
    add_f4(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
           size_t n) {
  size_t n4 = n / 4, stride = (size_t)gridDim.x * blockDim.x;
  size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const float4 *a4 = (const float4 *)a, *b4 = (const float4 *)b;
  float4 *c4 = (float4 *)c;
  for (size_t i = t; i < n4; i += stride) {
    float4 x = a4[i], y = b4[i];
    c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  if (n4 * 4 + t < n) c[n4 * 4 + t] = a[n4 * 4 + t] + b[n4 * 4 + t];
}

static int bench_matadd(const bench *b, unsigned rows, unsigned cols) {
  const char *peer = "float4 grid-stride add";
  size_t n = (size_t)rows * cols;
  std::vector<float> ha(n), hb(n);
  pm__random_fill(ha.data(), n, SEED);
  pm__random_fill(hb.data(), n, SEED * 31 + 7); /* the tuner's seeds for a and b */
  int k = copies_for(b, 3.0 * sizeof(float) * n);
  std::vector<void *> a = alloc_copies(k, n * sizeof(float), ha.data()),
                      bb = alloc_copies(k, n * sizeof(float), hb.data()),
                      c = alloc_copies(k, n * sizeof(float), NULL);
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, add_f4, ADD_THREADS, 0));
  size_t needed = (n / 4 + ADD_THREADS - 1) / ADD_THREADS;
  unsigned grid = (unsigned)std::max<size_t>(
      1, std::min<size_t>(needed, (size_t)b->sm_count * std::max(per_sm, 1) * ADD_WAVES));
  auto run = [&](int j) {
    add_f4<<<grid, ADD_THREADS>>>((const float *)a[j], (const float *)bb[j], (float *)c[j], n);
    CUDA_CHECK(cudaGetLastError());
  };

  CUDA_CHECK(cudaMemset(c[0], 0xff, n * sizeof(float)));
  run(0);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got = to_host((const float *)c[0], n);
  std::vector<size_t> bad_in((n + CHECK_BLOCK - 1) / CHECK_BLOCK);
  /* exact: a + b rounds once, the same on both sides */
  parallel_for(bad_in.size(), [&](size_t b0, size_t b1) {
    for (size_t blk = b0; blk < b1; blk++)
      for (size_t i = blk * CHECK_BLOCK; i < std::min(n, (blk + 1) * CHECK_BLOCK); i++)
        bad_in[blk] += !(got[i] == ha[i] + hb[i]);
  });
  size_t bad = 0;
  for (size_t x : bad_in) bad += x;
  if (bad) fprintf(stderr, "pmtune_peers: matadd: %zu of %zu elements differ from a + b\n", bad, n);

  std::vector<double> ms = time_runs(b, k, run);
  free_copies(a);
  free_copies(bb);
  free_copies(c);
  return report(b, peer, ms, k, 3.0 * sizeof(float) * n, bad == 0, (double)bad / n);
}

/* ---- reduce: CUB -------------------------------------------------------------------------- */

static int bench_reduce(const bench *b, int n) {
  const char *peer = "cub::DeviceReduce::Sum";
  std::vector<float> h(n);
  pm__random_fill(h.data(), (size_t)n, SEED);
  /* The reference, as the tuner's: a double sum in 4 interleaved chains, and sum|x|. */
  double s[4] = {0, 0, 0, 0}, abs_sum = 0;
  for (int i = 0; i < n; i++) {
    s[i & 3] += h[i];
    abs_sum += fabs(h[i]);
  }
  double ref = (s[0] + s[1]) + (s[2] + s[3]);
  int k = copies_for(b, 4.0 * n);
  std::vector<void *> in = alloc_copies(k, (size_t)n * sizeof(float), h.data()),
                      out = alloc_copies(k, sizeof(float), NULL);
  void *temp = NULL;
  size_t temp_bytes = 0;
  /* CUB's first call only says how much scratch it needs: once, outside the timing. One scratch
   * serves every copy: the runs follow one another on one stream. */
  CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, (const float *)in[0], (float *)out[0], n));
  CUDA_CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  auto run = [&](int j) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(cub::DeviceReduce::Sum(temp, bytes, (const float *)in[j], (float *)out[j], n));
  };

  float got;
  CUDA_CHECK(cudaMemset(out[0], 0xff, sizeof(float)));
  run(0);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(&got, out[0], sizeof got, cudaMemcpyDeviceToHost));
  /* CUB's summation order is not documented. The bound (Higham, 2nd ed., sec. 4.2: a sum whose
   * additions form a tree of depth D errs by at most D u sum|x|) assumes only that at least a
   * warp per SM shares the work (a chain of at most n / (32 SMs) additions per thread) and that
   * combining the partial sums takes fewer than 2 log2 n + 16 levels; plus the final rounding. */
  double u = ldexp(1.0, -24),
         depth = ceil((double)n / (32.0 * b->sm_count)) + 2 * ceil(log2((double)n + 1)) + 16;
  double diff = fabs((double)got - ref), bound = (depth * u * abs_sum + u * fabs(ref)) * 1.01;
  bool ok = isfinite(got) && diff <= bound;
  if (!ok)
    fprintf(stderr, "pmtune_peers: reduce: the sum is %.9g, want %.9g (error %.3g, bound %.3g)\n",
            got, ref, diff, bound);

  std::vector<double> ms = time_runs(b, k, run);
  free_copies(in);
  free_copies(out);
  CUDA_CHECK(cudaFree(temp));
  return report(b, peer, ms, k, 4.0 * n, ok, abs_sum > 0 ? diff / abs_sum : diff);
}

/* ---- filter: NPP ----------------------------------------------------------------------------- */

typedef struct filter_check {
  size_t bad;
  double max_rel; /* the largest |out - ref| / sum|w x| */
} filter_check;

/* Compares out with pmtune's clamp-to-edge correlation of in with w, computed in double:
 *   ref(y,x) = sum_{fy,fx} w[fy][fx] * in(clamp(y+fy-r), clamp(x+fx-r)),
 * over the whole image. A float sum of k^2 products errs by at most k^2 u sum|w x| in any order
 * (Higham, sec. 3.1), plus the final rounding: a pixel beyond that (or NaN) is wrong. */
static filter_check check_filter(const std::vector<float> &in, const std::vector<float> &out,
                                 const float *w, unsigned rows, unsigned cols, int r) {
  int k = 2 * r + 1;
  std::vector<filter_check> part(rows);
  parallel_for(rows, [&](size_t y0, size_t y1) {
    for (size_t y = y0; y < y1; y++) {
      filter_check pc = {0, 0};
      for (unsigned x = 0; x < cols; x++) {
        double ref = 0, abs_sum = 0;
        for (int fy = 0; fy < k; fy++) {
          long iy = std::min(std::max((long)y + fy - r, 0L), (long)rows - 1);
          for (int fx = 0; fx < k; fx++) {
            long ix = std::min(std::max((long)x + fx - r, 0L), (long)cols - 1);
            double p = (double)w[fy * k + fx] * in[(size_t)iy * cols + (size_t)ix];
            ref += p;
            abs_sum += fabs(p);
          }
        }
        double u = ldexp(1.0, -24), diff = fabs((double)out[y * cols + x] - ref);
        double bound = ((k * k + 1) * u * abs_sum) * 1.01 + ldexp(1.0, -60);
        if (!(diff <= bound)) pc.bad++;
        double rel = abs_sum > 0 ? diff / abs_sum : diff;
        if (!isnan(pc.max_rel) && !(rel <= pc.max_rel)) pc.max_rel = rel; /* a NaN stays */
      }
      part[y] = pc;
    }
  });
  filter_check all = {0, 0};
  for (const filter_check &pc : part) {
    all.bad += pc.bad;
    if (!isnan(all.max_rel) && !(pc.max_rel <= all.max_rel)) all.max_rel = pc.max_rel;
  }
  return all;
}

static int bench_filter(const bench *b, unsigned rows, unsigned cols, int r) {
  const char *peer = "nppiFilterBorder_32f_C1R_Ctx";
#ifndef PM_HAVE_NPP
  (void)rows, (void)cols, (void)r, (void)check_filter;
  return report_unavailable(b, peer, "built without NPP");
#else
  int k = 2 * r + 1;
  size_t n = (size_t)rows * cols, row_bytes = (size_t)cols * sizeof(float);
  std::vector<float> h(n), w(k * k), flipped(k * k);
  pm__random_fill(h.data(), n, SEED);
  pm__random_fill(w.data(), w.size(), SEED ^ 0x5bd1e995u); /* the tuner's mask */
  /* NPP's filters convolve: "coefficients are expected to be stored in reverse order" (NPP's
   * nppi_filtering_functions.h), so that with the anchor at the centre
   *   out(y,x) = sum_{j,i} K[j][i] * in(y + r - j, x + r - i).
   * Given K[j][i] = w[k-1-j][k-1-i], the mask reversed as one array, that is the correlation
   * above. (OpenCV's old NPP filter and Open3D's do the same; if NPP disagrees, the check says.) */
  for (int i = 0; i < k * k; i++) flipped[i] = w[k * k - 1 - i];
  int copies = copies_for(b, 2.0 * sizeof(float) * n);
  std::vector<float *> in(copies), out(copies);
  float *kernel;
  size_t in_pitch = 0, out_pitch = 0;
  for (int j = 0; j < copies; j++) {
    CUDA_CHECK(cudaMallocPitch((void **)&in[j], &in_pitch, row_bytes, rows));
    CUDA_CHECK(cudaMallocPitch((void **)&out[j], &out_pitch, row_bytes, rows));
    CUDA_CHECK(cudaMemcpy2D(in[j], in_pitch, h.data(), row_bytes, row_bytes, rows,
                            cudaMemcpyHostToDevice));
  }
  CUDA_CHECK(cudaMalloc((void **)&kernel, k * k * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(kernel, flipped.data(), k * k * sizeof(float), cudaMemcpyHostToDevice));
  if (in_pitch > 0x7fffffff || out_pitch > 0x7fffffff) fail("filter: rows too long for NPP");

  cudaDeviceProp p;
  NppStreamContext ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.hStream = 0;
  CUDA_CHECK(cudaGetDevice(&ctx.nCudaDeviceId));
  CUDA_CHECK(cudaGetDeviceProperties(&p, ctx.nCudaDeviceId));
  ctx.nMultiProcessorCount = p.multiProcessorCount;
  ctx.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  ctx.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  ctx.nSharedMemPerBlock = p.sharedMemPerBlock;
  ctx.nCudaDevAttrComputeCapabilityMajor = p.major;
  ctx.nCudaDevAttrComputeCapabilityMinor = p.minor;
  CUDA_CHECK(cudaStreamGetFlags(ctx.hStream, &ctx.nStreamFlags));
  NppiSize size = {(int)cols, (int)rows}, ksize = {k, k};
  NppiPoint origin = {0, 0}, anchor = {r, r};
  auto run = [&](int j) {
    NPP_CHECK(nppiFilterBorder_32f_C1R_Ctx(in[j], (int)in_pitch, size, origin, out[j],
                                           (int)out_pitch, size, kernel, ksize, anchor,
                                           NPP_BORDER_REPLICATE, ctx));
  };

  CUDA_CHECK(cudaMemset2D(out[0], out_pitch, 0xff, row_bytes, rows));
  run(0);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(n);
  CUDA_CHECK(cudaMemcpy2D(got.data(), row_bytes, out[0], out_pitch, row_bytes, rows,
                          cudaMemcpyDeviceToHost));
  filter_check fc = check_filter(h, got, w.data(), rows, cols, r);
  if (fc.bad) {
    fprintf(stderr, "pmtune_peers: filter: %zu of %zu pixels differ from the correlation\n", fc.bad,
            n);
    if (check_filter(h, got, flipped.data(), rows, cols, r).bad == 0)
      fprintf(stderr,
              "pmtune_peers: filter: NPP computed the correlation with the mask reversed: "
              "its kernel is not flipped as this program assumes\n");
  }

  std::vector<double> ms = time_runs(b, copies, run);
  for (int j = 0; j < copies; j++) {
    CUDA_CHECK(cudaFree(in[j]));
    CUDA_CHECK(cudaFree(out[j]));
  }
  CUDA_CHECK(cudaFree(kernel));
  return report(b, peer, ms, copies, 2.0 * sizeof(float) * n, fc.bad == 0, fc.max_rel);
#endif
}

/* ---- The command line ------------------------------------------------------------------------ */

/* A whole decimal number in [lo, hi], or a usage error naming what. */
static unsigned long long parse_number(const char *s, unsigned long long lo, unsigned long long hi,
                                       const char *what) {
  char *end;
  if (*s < '0' || *s > '9') usage_error("%s '%s': not a number", what, s);
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end != '\0') usage_error("%s '%s': not a number", what, s);
  if (errno == ERANGE || v < lo || v > hi)
    usage_error("%s '%s': out of range (%llu to %llu)", what, s, lo, hi);
  return v;
}

/* ROWSxCOLS, each 1 to 2^31 - 1. */
static void parse_shape(const char *s, unsigned *rows, unsigned *cols) {
  char buf[64];
  const char *x = strchr(s, 'x');
  if (x == NULL || x == s || x[1] == '\0' || (size_t)(x - s) >= sizeof buf)
    usage_error("--size '%s': want ROWSxCOLS (e.g. 8192x8192)", s);
  memcpy(buf, s, (size_t)(x - s));
  buf[x - s] = '\0';
  *rows = (unsigned)parse_number(buf, 1, 0x7fffffff, "--size rows");
  *cols = (unsigned)parse_number(x + 1, 1, 0x7fffffff, "--size cols");
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {{"op", required_argument, NULL, 'o'},
                                           {"size", required_argument, NULL, 's'},
                                           {"radius", required_argument, NULL, 'r'},
                                           {"samples", required_argument, NULL, 'n'},
                                           {"warmup", required_argument, NULL, 'w'},
                                           {"copies", required_argument, NULL, 'k'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *op = NULL, *size = NULL, *radius = NULL;
  int samples = 25, warmup = 3, copies = 0, ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (ch) {
      case 'o':
        op = optarg;
        break;
      case 's':
        size = optarg;
        break;
      case 'r':
        radius = optarg;
        break;
      case 'n':
        samples = (int)parse_number(optarg, 1, 64, "--samples");
        break;
      case 'w':
        warmup = (int)parse_number(optarg, 0, 10000, "--warmup");
        break;
      case 'k':
        copies = (int)parse_number(optarg, 1, 32, "--copies");
        break;
      case 'h':
        fputs(usage, stdout);
        return 0;
      case ':':
        usage_error("option '%s' needs a value", argv[optind - 1]);
      default:
        usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) usage_error("unexpected argument '%s'", argv[optind]);
  if (op == NULL) usage_error("--op is required (matadd, reduce, filter or copy)");
  if (size == NULL) usage_error("--size is required");

  bench b;
  memset(&b, 0, sizeof b);
  b.samples = samples;
  b.warmup = warmup;
  b.copies = copies;
  unsigned rows = 0, cols = 0;
  unsigned long long count = 0;
  if (strcmp(op, "matadd") == 0 || strcmp(op, "filter") == 0) {
    parse_shape(size, &rows, &cols);
    snprintf(b.size, sizeof b.size, "%ux%u", rows, cols);
  } else if (strcmp(op, "reduce") == 0 || strcmp(op, "copy") == 0) {
    count = strcmp(op, "reduce") == 0 ? parse_number(size, 1, 0x7fffffff, "--size")
                                      : parse_number(size, 1, 1ull << 40, "--size");
    snprintf(b.size, sizeof b.size, "%llu", count);
  } else {
    usage_error("--op '%s': want matadd, reduce, filter or copy", op);
  }
  if (strcmp(op, "filter") == 0)
    b.radius = radius ? (int)parse_number(radius, 1, 3, "--radius") : 1;
  else if (radius != NULL)
    usage_error("--radius is for --op filter");
  b.op = op;

  bench_open(&b);
  if (strcmp(op, "matadd") == 0) return bench_matadd(&b, rows, cols);
  if (strcmp(op, "reduce") == 0) return bench_reduce(&b, (int)count);
  if (strcmp(op, "filter") == 0) return bench_filter(&b, rows, cols, b.radius);
  return bench_copy(&b, (size_t)count);
}

// pmtune_peers.cu: the peer benchmarks: times, with pmtune's protocol and in one run,
// what pmtune's tuned kernels must beat and the device-to-device copy that bounds them all, in
// each element type pmtune takes (--dtype f32, f16, bf16 or f64), and prints one JSON object per
// line. The peers: reduce, cub::DeviceReduce::Sum (f32, f64) or cub::DeviceReduce::Reduce summing
// 16-bit inputs in float into a float; filter, NPP's nppiFilterBorder_32f_C1R_Ctx (f32) or
// nppiFilterBorder32f_16f_C1R_Ctx (f16, float weights), NPP having no filter with border control
// for bf16 or f64 (the line says so); matadd, a plain grid-stride add of 16-byte accesses (float4,
// 8 halves or bf16 added in float and rounded once, double2); copy, whatever the type (bytes are
// bytes). Built by CMake only where nvcc is; the library never needs it. The one C++ file of
// pmtune (CUB is C++).
//
// The protocol is the tuner's own code, linked in (tuner/timer.h, the same functions that time
// pmtune's kernels): inputs are fresh random data (pm__random_fill_typed, the tuner's seeds, its
// floats rounded to the type); the output is poisoned (0xff bytes, a NaN) before one run whose
// result is checked against a host reference; then 200 ms of GPU work (pm__timer_warm) and the
// warm-up runs; then pm__time_batches takes the samples: each flushes the L2 cache (reads twice
// its size), holds the GPU until the host has queued the whole sample, and times one run of the
// peer on each of K copies of its inputs and output back to back; the sample is the time per
// run. K (--copies) is pm__copies_for's unless given (pmtune bench passes its own). Median
// (pm__median), min and max over the samples; GB/s = the bytes that must move / the median.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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
extern "C" {        /* op.h declares no linkage of its own: C's */
#include "op.h"     /* pm__random_fill_typed, pm__add_reference */
}
#ifdef PM_HAVE_NPP
#include <nppi.h>
#endif

static const char usage[] =
    "usage: pmtune_peers --op matadd|reduce|filter|copy --size S [--dtype T] [--radius R]\n"
    "                    [--samples N] [--warmup N] [--copies K]\n"
    "\n"
    "Times the peer of one pmtune operation on CUDA device 0 (CUDA_VISIBLE_DEVICES picks\n"
    "another), with pmtune's protocol: random inputs, the output poisoned and checked against a\n"
    "host reference, warm-up runs, then samples each timed with CUDA events after an L2 flush\n"
    "(reading twice the L2's size):\n"
    "one run on each of K copies of the data, back to back; a sample is the time per run.\n"
    "\n"
    "  --op matadd   a grid-stride c = a + b of 16-byte accesses (float4, 8 halves or bf16 added\n"
    "                in float and rounded once, double2), the stand-in for torch.add and\n"
    "                cupy.add; --size ROWSxCOLS, packed; bytes = 3 x rows x cols x E\n"
    "  --op reduce   cub::DeviceReduce::Sum of N elements (f32, f64; the sum in the type), or\n"
    "                for f16 and bf16 cub::DeviceReduce::Reduce adding in float into a float;\n"
    "                --size N (1 to 2^31-1); bytes = N x E\n"
    "  --op filter   nppiFilterBorder_32f_C1R_Ctx (f32) or nppiFilterBorder32f_16f_C1R_Ctx (f16,\n"
    "                float weights), replicate (clamp-to-edge) border, computing pmtune's\n"
    "                correlation with a random (2R+1)^2 mask; NPP has no such filter for bf16\n"
    "                or f64 (the line says so); --size ROWSxCOLS, --radius R (1 to 3, default\n"
    "                1); bytes = 2 x rows x cols x E\n"
    "  --op copy     cudaMemcpyAsync device to device; --size BYTES, whatever the type; bytes =\n"
    "                2 x BYTES (the hardware's limit, measured on the spot)\n"
    "  --dtype T     the element type: f32 (default), f16, bf16 or f64; E = 4, 2, 2, 8 bytes\n"
    "  --samples N   timed samples, 1 to 64 (default 25)\n"
    "  --warmup N    untimed runs first (default 3)\n"
    "  --copies K    copies per sample, 1 to 32 (default: enough that a sample moves twice the\n"
    "                L2 cache's size, as pmtune's tuner does)\n"
    "\n"
    "Prints one JSON object on stdout: op, size, dtype, (filter) radius, peer, gpu, median_ms,\n"
    "min_ms, max_ms, samples, copies, gbps, verified, error; where there is no peer to time (NPP\n"
    "not built in, or NPP has no filter of the type), op, size, dtype, (filter) radius, peer,\n"
    "gpu, available (false) and why. error: matadd and copy, the fraction of elements (bytes)\n"
    "that differ from the reference (matadd: bitwise, the sum rounded once to the type);\n"
    "reduce, |sum - ref| / sum|x|; filter, the largest |out - ref| / sum|w x| over the image\n"
    "(ref in double).\n"
    "Exit status: 0 measured and verified (or there is no peer to time), 1 failed (no CUDA\n"
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
  int dtype;     /* pm_dtype: the element type (copy: only printed) */
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
  printf(",\"dtype\":");
  print_string(pm_dtype_name((pm_dtype)b->dtype));
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

/* Prints the line of a peer that cannot be timed (not built in, or no such peer for the type):
 * returns 0, the status of that case. */
static int report_unavailable(const bench *b, const char *peer, const char *why) {
  print_head(b, peer);
  printf(",\"available\":false,\"why\":");
  print_string(why);
  printf("}\n");
  fflush(stdout);
  return 0;
}

/* n random elements of dtype, the tuner's (pm__random_fill_typed: pm__random_fill's floats
 * rounded to the 16-bit types, or with 25 more bits for f64); free() them. */
static void *random_typed(int dtype, size_t n, uint64_t seed) {
  void *h = pm__random_fill_typed(dtype, n, seed);
  if (h == NULL) fail("%zu %s elements: out of host memory", n, pm_dtype_name((pm_dtype)dtype));
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

/* x + y rounded once to the type: f32 and f64 add in their own type; f16 and bf16 in float, then
 * round to nearest, as pm__add_reference does on the host (float's 24 bits >= 2p + 2 for p = 11
 * and 8, so the float sum rounded to the type is the correctly rounded sum). */
template <typename T>
__device__ __forceinline__ T add1(T x, T y) {
  return x + y;
}
template <>
__device__ __forceinline__ __half add1(__half x, __half y) {
  return __float2half_rn(__half2float(x) + __half2float(y));
}
template <>
__device__ __forceinline__ __nv_bfloat16 add1(__nv_bfloat16 x, __nv_bfloat16 y) {
  return __float2bfloat16_rn(__bfloat162float(x) + __bfloat162float(y));
}

/* c = a + b over n packed elements of T: 16-byte accesses (V = 16 / sizeof(T) elements: 4 floats,
 * 8 halves or bf16, 2 doubles) over the first n - n % V in a grid-stride loop, then the n % V < V
 * tail, one element each for threads 0 .. n % V - 1 (the grid has at least ADD_THREADS > V).
 * a, b and c come from cudaMalloc (256-byte aligned), so every vector access is aligned. */
template <typename T>
__global__ void __launch_bounds__(ADD_THREADS)
    add_vec(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ c, size_t n) {
  constexpr int V = 16 / sizeof(T);
  static_assert(V * sizeof(T) == 16, "a whole number of elements per 16-byte access");
  size_t nv = n / V, stride = (size_t)gridDim.x * blockDim.x;
  size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint4 *av = (const uint4 *)a, *bv = (const uint4 *)b;
  uint4 *cv = (uint4 *)c;
  for (size_t i = t; i < nv; i += stride) {
    uint4 x = av[i], y = bv[i], z;
    const T *xe = reinterpret_cast<const T *>(&x), *ye = reinterpret_cast<const T *>(&y);
    T *ze = reinterpret_cast<T *>(&z);
#pragma unroll
    for (int e = 0; e < V; e++) ze[e] = add1(xe[e], ye[e]);
    cv[i] = z;
  }
  if (nv * V + t < n) c[nv * V + t] = add1(a[nv * V + t], b[nv * V + t]);
}

/* The launch of the add of n elements of T on copy j of a, b and c (which outlive it). */
template <typename T>
static std::function<void(int)> add_launcher(const bench *b, const std::vector<void *> &a,
                                             const std::vector<void *> &bb,
                                             const std::vector<void *> &c, size_t n) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, add_vec<T>, ADD_THREADS, 0));
  size_t needed = (n / (16 / sizeof(T)) + ADD_THREADS - 1) / ADD_THREADS;
  unsigned grid = (unsigned)std::max<size_t>(
      1, std::min<size_t>(needed, (size_t)b->sm_count * std::max(per_sm, 1) * ADD_WAVES));
  return [&a, &bb, &c, n, grid](int j) {
    add_vec<T><<<grid, ADD_THREADS>>>((const T *)a[j], (const T *)bb[j], (T *)c[j], n);
    CUDA_CHECK(cudaGetLastError());
  };
}

static int bench_matadd(const bench *b, unsigned rows, unsigned cols) {
  static const char *const peers[] = {"float4 grid-stride add", "8 x half grid-stride add",
                                      "8 x bf16 grid-stride add", "double2 grid-stride add"};
  const char *peer = peers[b->dtype];
  size_t n = (size_t)rows * cols, es = pm_dtype_size((pm_dtype)b->dtype), bytes = n * es;
  void *ha = random_typed(b->dtype, n, SEED);
  void *hb = random_typed(b->dtype, n, SEED * 31 + 7); /* the tuner's seeds for a and b */
  unsigned char *want = (unsigned char *)malloc(std::max<size_t>(bytes, 1));
  if (want == NULL) fail("matadd: %zu bytes: out of host memory", bytes);
  pm__add_reference(b->dtype, ha, hb, want, n); /* the tuner's: rounded once to the type */
  int k = copies_for(b, 3.0 * bytes);
  std::vector<void *> a = alloc_copies(k, bytes, ha), bb = alloc_copies(k, bytes, hb),
                      c = alloc_copies(k, bytes, NULL);
  free(ha);
  free(hb);
  std::function<void(int)> run;
  switch (b->dtype) {
    case PM_F16: run = add_launcher<__half>(b, a, bb, c, n); break;
    case PM_BF16: run = add_launcher<__nv_bfloat16>(b, a, bb, c, n); break;
    case PM_F64: run = add_launcher<double>(b, a, bb, c, n); break;
    default: run = add_launcher<float>(b, a, bb, c, n);
  }

  CUDA_CHECK(cudaMemset(c[0], 0xff, bytes));
  run(0);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> got(bytes);
  CUDA_CHECK(cudaMemcpy(got.data(), c[0], bytes, cudaMemcpyDeviceToHost));
  std::vector<size_t> bad_in((n + CHECK_BLOCK - 1) / CHECK_BLOCK);
  /* exact: a + b rounds once, the same on both sides; compared bit for bit */
  parallel_for(bad_in.size(), [&](size_t b0, size_t b1) {
    for (size_t blk = b0; blk < b1; blk++)
      for (size_t i = blk * CHECK_BLOCK; i < std::min(n, (blk + 1) * CHECK_BLOCK); i++)
        bad_in[blk] += memcmp(&got[i * es], &want[i * es], es) != 0;
  });
  free(want);
  size_t bad = 0;
  for (size_t x : bad_in) bad += x;
  if (bad) fprintf(stderr, "pmtune_peers: matadd: %zu of %zu elements differ from a + b\n", bad, n);

  std::vector<double> ms = time_runs(b, k, run);
  free_copies(a);
  free_copies(bb);
  free_copies(c);
  return report(b, peer, ms, k, 3.0 * bytes, bad == 0, (double)bad / n);
}

/* ---- reduce: CUB -------------------------------------------------------------------------- */

/* The sum of 16-bit inputs in float. What CUB accumulates in (cub/device/device_reduce.cuh and
 * dispatch/dispatch_reduce.cuh, CCCL 3.0): DeviceReduce::Sum takes its init type from the
 * output's value type and the accumulator as ::cuda::std::__accumulator_t<op, input value type,
 * init type>, the decayed type of op(init, input); Reduce the same with the init it is given.
 * With cuda::std::plus<> and a float init over __half that is float + __half, which does not
 * compile (ambiguous: __half converts to float and float to __half), so Sum of halves into a
 * float does not build. This functor takes floats and returns one: op(float, __half) is a float,
 * so with init 0.0f the accumulator, every partial sum and the output are floats. */
struct add_in_float {
  __host__ __device__ float operator()(float x, float y) const { return x + y; }
};

static int bench_reduce(const bench *b, int n) {
  int dt = b->dtype;
  const char *peer = dt == PM_F16 || dt == PM_BF16 ? "cub::DeviceReduce::Reduce (float sum)"
                                                   : "cub::DeviceReduce::Sum";
  size_t es = pm_dtype_size((pm_dtype)dt), out_es = dt == PM_F64 ? 8 : 4; /* f16, bf16: float */
  void *h = random_typed(dt, (size_t)n, SEED);
  double ref, abs_sum;
  if (pm__reduce_reference(dt, h, (size_t)n, &ref, &abs_sum) != 0) /* the tuner's, compensated */
    fail("reduce %d: out of host memory for the reference", n);
  int k = copies_for(b, (double)es * n);
  std::vector<void *> in = alloc_copies(k, (size_t)n * es, h), out = alloc_copies(k, out_es, NULL);
  free(h);
  /* One call of the peer on copy j (with temp NULL, only how much scratch it needs). */
  auto call = [&](void *temp, size_t &temp_bytes, int j) -> cudaError_t {
    switch (dt) {
      case PM_F16:
        return cub::DeviceReduce::Reduce(temp, temp_bytes, (const __half *)in[j], (float *)out[j],
                                         n, add_in_float(), 0.0f);
      case PM_BF16:
        return cub::DeviceReduce::Reduce(temp, temp_bytes, (const __nv_bfloat16 *)in[j],
                                         (float *)out[j], n, add_in_float(), 0.0f);
      case PM_F64:
        return cub::DeviceReduce::Sum(temp, temp_bytes, (const double *)in[j], (double *)out[j], n);
      default:
        return cub::DeviceReduce::Sum(temp, temp_bytes, (const float *)in[j], (float *)out[j], n);
    }
  };
  void *temp = NULL;
  size_t temp_bytes = 0;
  /* CUB's first call only says how much scratch it needs: once, outside the timing. One scratch
   * serves every copy: the runs follow one another on one stream. */
  CUDA_CHECK(call(temp, temp_bytes, 0));
  CUDA_CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  auto run = [&](int j) {
    size_t bytes = temp_bytes;
    CUDA_CHECK(call(temp, bytes, j));
  };

  double got;
  CUDA_CHECK(cudaMemset(out[0], 0xff, out_es));
  run(0);
  CUDA_CHECK(cudaDeviceSynchronize());
  if (dt == PM_F64) {
    CUDA_CHECK(cudaMemcpy(&got, out[0], sizeof got, cudaMemcpyDeviceToHost));
  } else {
    float got_f;
    CUDA_CHECK(cudaMemcpy(&got_f, out[0], sizeof got_f, cudaMemcpyDeviceToHost));
    got = got_f;
  }
  /* CUB's summation order is not documented. The bound (Higham, 2nd ed., sec. 4.2: a sum whose
   * additions form a tree of depth D errs by at most D u sum|x|) assumes only that at least a
   * warp per SM shares the work (a chain of at most n / (32 SMs) additions per thread) and that
   * combining the partial sums takes fewer than 2 log2 n + 16 levels; plus the final rounding.
   * u is the accumulator's: float's 2^-24 (f32, and f16 and bf16, whose inputs a float holds
   * exactly), double's 2^-53 (f64). */
  double u = ldexp(1.0, dt == PM_F64 ? -53 : -24),
         depth = ceil((double)n / (32.0 * b->sm_count)) + 2 * ceil(log2((double)n + 1)) + 16;
  double diff = fabs(got - ref), bound = (depth * u * abs_sum + u * fabs(ref)) * 1.01;
  bool ok = isfinite(got) && diff <= bound;
  if (!ok)
    fprintf(stderr, "pmtune_peers: reduce: the sum is %.*g, want %.*g (error %.3g, bound %.3g)\n",
            dt == PM_F64 ? 17 : 9, got, dt == PM_F64 ? 17 : 9, ref, diff, bound);

  std::vector<double> ms = time_runs(b, k, run);
  free_copies(in);
  free_copies(out);
  CUDA_CHECK(cudaFree(temp));
  return report(b, peer, ms, k, (double)es * n, ok, abs_sum > 0 ? diff / abs_sum : diff);
}

/* ---- filter: NPP ----------------------------------------------------------------------------- */

typedef struct filter_check {
  size_t bad;
  double max_rel; /* the largest |out - ref| / sum|w x| */
} filter_check;

/* Compares out with pmtune's clamp-to-edge correlation of in with w, computed in double:
 *   ref(y,x) = sum_{fy,fx} w[fy][fx] * in(clamp(y+fy-r), clamp(x+fx-r)),
 * over the whole image. A float sum of k^2 products errs by at most k^2 u sum|w x| in any order
 * (Higham, sec. 3.1), plus the final rounding: a pixel beyond that (or NaN) is wrong. An f16
 * output (dtype PM_F16) is that float sum rounded once more, to half: by at most 2^-11 of it,
 * or 2^-25 among the subnormals. in and out hold the pixels as floats (halves exactly). */
static filter_check check_filter(int dtype, const std::vector<float> &in,
                                 const std::vector<float> &out, const float *w, unsigned rows,
                                 unsigned cols, int r) {
  double u_out = dtype == PM_F16 ? ldexp(1.0, -11) : 0,
         tiny_out = dtype == PM_F16 ? ldexp(1.0, -25) : 0;
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
        bound += u_out * (fabs(ref) + bound) + tiny_out; /* f32: + 0 */
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
  int dt = b->dtype;
  /* NPP (13.2's nppi_filtering_functions.h) has nppiFilterBorder_32f_C1R_Ctx for floats and
   * nppiFilterBorder32f_16f_C1R_Ctx for halves (Npp16f, with Npp32f weights); no filter of any
   * kind for bf16, and for doubles only nppiFilter_64f_C1R_Ctx, with no border control (it reads
   * outside the image), and box filters. */
  if (dt == PM_BF16) return report_unavailable(b, "nppiFilterBorder", "NPP has no bf16 filter");
  if (dt == PM_F64)
    return report_unavailable(b, "nppiFilterBorder", "NPP has no f64 filter with border control");
  const char *peer =
      dt == PM_F16 ? "nppiFilterBorder32f_16f_C1R_Ctx" : "nppiFilterBorder_32f_C1R_Ctx";
#ifndef PM_HAVE_NPP
  (void)rows, (void)cols, (void)r, (void)check_filter;
  return report_unavailable(b, peer, "built without NPP");
#else
  int k = 2 * r + 1;
  size_t n = (size_t)rows * cols, es = pm_dtype_size((pm_dtype)dt), row_bytes = (size_t)cols * es;
  std::vector<float> h(n), w(k * k), flipped(k * k);
  /* the tuner's image: f32 as it was, f16 its floats rounded (h: those halves, as floats) */
  unsigned short *h16 = NULL;
  if (dt == PM_F16) {
    h16 = (unsigned short *)random_typed(dt, n, SEED);
    for (size_t i = 0; i < n; i++) h[i] = pm__f16_to_f32(h16[i]);
  } else {
    pm__random_fill(h.data(), n, SEED);
  }
  const void *upload = dt == PM_F16 ? (const void *)h16 : (const void *)h.data();
  pm__random_fill(w.data(), w.size(), SEED ^ 0x5bd1e995u); /* the tuner's mask (floats for f16) */
  /* NPP's filters convolve: "coefficients are expected to be stored in reverse order" (NPP's
   * nppi_filtering_functions.h), so that with the anchor at the centre
   *   out(y,x) = sum_{j,i} K[j][i] * in(y + r - j, x + r - i).
   * Given K[j][i] = w[k-1-j][k-1-i], the mask reversed as one array, that is the correlation
   * above. (OpenCV's old NPP filter and Open3D's do the same; if NPP disagrees, the check says.) */
  for (int i = 0; i < k * k; i++) flipped[i] = w[k * k - 1 - i];
  int copies = copies_for(b, 2.0 * es * n);
  std::vector<void *> in(copies), out(copies);
  float *kernel;
  size_t in_pitch = 0, out_pitch = 0;
  for (int j = 0; j < copies; j++) {
    CUDA_CHECK(cudaMallocPitch(&in[j], &in_pitch, row_bytes, rows));
    CUDA_CHECK(cudaMallocPitch(&out[j], &out_pitch, row_bytes, rows));
    CUDA_CHECK(cudaMemcpy2D(in[j], in_pitch, upload, row_bytes, row_bytes, rows,
                            cudaMemcpyHostToDevice));
  }
  free(h16);
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
    if (dt == PM_F16)
      NPP_CHECK(nppiFilterBorder32f_16f_C1R_Ctx((const Npp16f *)in[j], (int)in_pitch, size, origin,
                                                (Npp16f *)out[j], (int)out_pitch, size, kernel,
                                                ksize, anchor, NPP_BORDER_REPLICATE, ctx));
    else
      NPP_CHECK(nppiFilterBorder_32f_C1R_Ctx((const Npp32f *)in[j], (int)in_pitch, size, origin,
                                             (Npp32f *)out[j], (int)out_pitch, size, kernel, ksize,
                                             anchor, NPP_BORDER_REPLICATE, ctx));
  };

  CUDA_CHECK(cudaMemset2D(out[0], out_pitch, 0xff, row_bytes, rows));
  run(0);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(n);
  if (dt == PM_F16) {
    std::vector<unsigned short> got16(n);
    CUDA_CHECK(cudaMemcpy2D(got16.data(), row_bytes, out[0], out_pitch, row_bytes, rows,
                            cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) got[i] = pm__f16_to_f32(got16[i]);
  } else {
    CUDA_CHECK(cudaMemcpy2D(got.data(), row_bytes, out[0], out_pitch, row_bytes, rows,
                            cudaMemcpyDeviceToHost));
  }
  filter_check fc = check_filter(dt, h, got, w.data(), rows, cols, r);
  if (fc.bad) {
    fprintf(stderr, "pmtune_peers: filter: %zu of %zu pixels differ from the correlation\n", fc.bad,
            n);
    if (check_filter(dt, h, got, flipped.data(), rows, cols, r).bad == 0)
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
  return report(b, peer, ms, copies, 2.0 * es * n, fc.bad == 0, fc.max_rel);
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
                                           {"dtype", required_argument, NULL, 't'},
                                           {"radius", required_argument, NULL, 'r'},
                                           {"samples", required_argument, NULL, 'n'},
                                           {"warmup", required_argument, NULL, 'w'},
                                           {"copies", required_argument, NULL, 'k'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *op = NULL, *size = NULL, *radius = NULL;
  int samples = 25, warmup = 3, copies = 0, dtype = PM_F32, ch;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (ch) {
      case 'o':
        op = optarg;
        break;
      case 's':
        size = optarg;
        break;
      case 't':
        if ((dtype = pm__dtype_find(optarg)) < 0)
          usage_error("--dtype '%s': want f32, f16, bf16 or f64", optarg);
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
  b.dtype = dtype;
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

// experiment: reduce's L2 prefetch and early launch of the next kernel before its wait, bf16 (not part of pmtune); see README.md, section 7
#include <cstdio>
#include <vector>
#include <atomic>
#include <algorithm>
#include <functional>
#include <string>
#include <cuda_bf16.h>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
// the element types' names, which pmtune gives every NVRTC compile (core/nvrtc.c, from pmtune.h's
// PM_DTYPES), and the type: bf16
#define PM_F32 0
#define PM_F16 1
#define PM_BF16 2
#define PM_F64 3
#define PM_DTYPE PM_BF16
// pm_common.cuh without its extern pm_waits_prior (nvcc makes a host shadow of it and cannot link):
// sed "/pm_waits_prior = 1/d" ../../templates/pm_common.cuh > pm_common_nvcc.cuh
#include "pm_common_nvcc.cuh"
// one namespace per variant: reduce_pf.cu (the template with the switches PF, TRIG and SOLO)
// included with those defines, its kernel renamed
#define STEP 2
#define COMBINE 3
#define ACC 0
#define BLOCK 1024
#define ITEMS 2
#define VEC 4
#define PF 0
#define TRIG 0
#define SOLO 0
#define pm_reduce a00
#define pm_reduce_final a00_final
namespace a00n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 1024
#define ITEMS 2
#define VEC 4
#define PF 0
#define TRIG 0
#define SOLO 1
#define pm_reduce s00
#define pm_reduce_final s00_final
namespace s00n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 1024
#define ITEMS 2
#define VEC 4
#define PF 1
#define TRIG 0
#define SOLO 1
#define pm_reduce a10
#define pm_reduce_final a10_final
namespace a10n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 1024
#define ITEMS 2
#define VEC 4
#define PF 1
#define TRIG 1
#define SOLO 1
#define pm_reduce a11
#define pm_reduce_final a11_final
namespace a11n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 1024
#define ITEMS 2
#define VEC 4
#define PF 1
#define TRIG 2
#define SOLO 1
#define pm_reduce a12
#define pm_reduce_final a12_final
namespace a12n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 256
#define ITEMS 2
#define VEC 8
#define PF 1
#define TRIG 0
#define SOLO 1
#define pm_reduce b10
#define pm_reduce_final b10_final
namespace b10n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 256
#define ITEMS 2
#define VEC 8
#define PF 1
#define TRIG 1
#define SOLO 1
#define pm_reduce b11
#define pm_reduce_final b11_final
namespace b11n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 256
#define ITEMS 2
#define VEC 8
#define PF 1
#define TRIG 2
#define SOLO 1
#define pm_reduce b12
#define pm_reduce_final b12_final
namespace b12n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 128
#define ITEMS 4
#define VEC 8
#define PF 1
#define TRIG 0
#define SOLO 1
#define pm_reduce c10
#define pm_reduce_final c10_final
namespace c10n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 128
#define ITEMS 4
#define VEC 8
#define PF 1
#define TRIG 1
#define SOLO 1
#define pm_reduce c11
#define pm_reduce_final c11_final
namespace c11n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 128
#define ITEMS 4
#define VEC 8
#define PF 1
#define TRIG 2
#define SOLO 1
#define pm_reduce c12
#define pm_reduce_final c12_final
namespace c12n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 512
#define ITEMS 1
#define VEC 8
#define PF 1
#define TRIG 0
#define SOLO 1
#define pm_reduce d10
#define pm_reduce_final d10_final
namespace d10n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 512
#define ITEMS 1
#define VEC 8
#define PF 1
#define TRIG 1
#define SOLO 1
#define pm_reduce d11
#define pm_reduce_final d11_final
namespace d11n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 512
#define ITEMS 1
#define VEC 8
#define PF 1
#define TRIG 2
#define SOLO 1
#define pm_reduce d12
#define pm_reduce_final d12_final
namespace d12n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final
#define BLOCK 1024
#define ITEMS 2
#define VEC 4
#define PF 0
#define TRIG 1
#define SOLO 1
#define pm_reduce a01
#define pm_reduce_final a01_final
namespace a01n {
#include "reduce_pf.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef PF
#undef TRIG
#undef SOLO
#undef pm_reduce
#undef pm_reduce_final

__global__ void empty() {}
__global__ void empty_wait(const elem_t *, unsigned, void *, float *, unsigned *, unsigned) { wait_prior(); }
// waits, loads 16 bytes a thread (256 threads: 4096 bf16) and ends: the floor of a one-block read
__global__ void load_only(const elem_t *in, unsigned n, void *out, float *, unsigned *, unsigned) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"((const uint4 *)in + threadIdx.x));
  wait_prior();
  uint4 v = a00n::ld_once((const uint4 *)in + threadIdx.x);
  if ((v.x ^ v.y ^ v.z ^ v.w) == 0x12345678u) ((unsigned *)out)[1] = v.x;
}

__global__ void producer(float *p) { if (threadIdx.x == 0 && blockIdx.x == 0) p[0] = 0; }
__global__ void readflush(const float4 *p, size_t n, float *sink) {
  float4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcg(&p[i]); acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w; }
  if (acc.x + acc.y + acc.z + acc.w == 1234.5f) *sink = acc.x;
}
struct add_in_float { __host__ __device__ float operator()(float x, float y) const { return x + y; } };
static void CUDART_CB wait_gate(void *arg) { auto *g = (std::atomic<int> *)arg; while (!g->load()) {} }
typedef void (*kfn)(const elem_t *, unsigned, void *, float *, unsigned *, unsigned);
// launches k on a grid of one tile a block, with programmatic stream serialization (as pmtune does)
static void launch(kfn k, int block, int tile, bool pdl, const void *in, unsigned n, float *out, float *part, unsigned *counter) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((n + tile - 1) / tile); cfg.blockDim = dim3(block); cfg.stream = 0;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at; cfg.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, k, (const elem_t *)in, n, (void *)out, part, counter, 1u));
}
int main() {
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); printf("%s\n", prop.name);
  size_t fb = 2 * (size_t)l2; void *flush; CK(cudaMalloc(&flush, fb)); CK(cudaMemset(flush, 0, fb));
  const size_t nmax = 1 << 20; const int K = 32;
  __nv_bfloat16 *rot; CK(cudaMalloc(&rot, (size_t)K * nmax * 2));
  std::vector<__nv_bfloat16> h(nmax);
  srand(7);
  for (size_t i = 0; i < nmax; i++) h[i] = __float2bfloat16((float)rand() / RAND_MAX - 0.5f);
  for (int j = 0; j < K; j++) CK(cudaMemcpy(rot + (size_t)j * nmax, h.data(), nmax * 2, cudaMemcpyHostToDevice));
  float *outs; CK(cudaMalloc(&outs, K * 64));
  char *work; CK(cudaMalloc(&work, 1 << 22)); CK(cudaMemset(work, 0, 1 << 22));
  unsigned *counter = (unsigned *)work; float *part = (float *)(work + 256);
  float *junk; CK(cudaMalloc(&junk, 64));
  void *tmp = NULL; size_t tmpb = 0;
  CK(cub::DeviceReduce::Reduce(tmp, tmpb, rot, outs, (int)nmax, add_in_float(), 0.0f)); CK(cudaMalloc(&tmp, tmpb));
  const int S = 61;
  std::vector<cudaEvent_t> a(S), b(S); for (int i = 0; i < S; i++) { CK(cudaEventCreate(&a[i])); CK(cudaEventCreate(&b[i])); }
  std::vector<std::atomic<int>> gate(S);
  float *sink; CK(cudaMalloc(&sink, 64));
  unsigned sizes[] = {4096, 1000, 8192, 65536, 1u << 20};
  for (unsigned n : sizes) {
    struct W { std::string name; std::function<void(int)> f; };
    std::vector<W> ws;
    auto in = [=](int j) { return rot + (size_t)j * nmax; };
    ws.push_back({"empty<<<1, 32>>> plain", [=](int j) { empty<<<1, 32>>>(); }});
    ws.push_back({"empty 32, wait, PDL launch", [=](int j) { launch(empty_wait, 32, 1 << 30, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"load only 256 x 16 bytes (PF, no TRIG)", [=](int j) { launch(load_only, 256, 1 << 30, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"1024x2x4 PF0 TRIG0 SOLO0 (pmtune before)", [=](int j) { launch(a00n::a00, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"1024x2x4 PF0 TRIG0 SOLO1", [=](int j) { launch(s00n::s00, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"1024x2x4 PF1 TRIG0 SOLO1", [=](int j) { launch(a10n::a10, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"1024x2x4 PF1 TRIG1 SOLO1 (pmtune now)", [=](int j) { launch(a11n::a11, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"1024x2x4 PF1 TRIG2 SOLO1", [=](int j) { launch(a12n::a12, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"256x2x8 PF1 TRIG0 SOLO1", [=](int j) { launch(b10n::b10, 256, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"256x2x8 PF1 TRIG1 SOLO1 (pmtune now)", [=](int j) { launch(b11n::b11, 256, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"256x2x8 PF1 TRIG2 SOLO1", [=](int j) { launch(b12n::b12, 256, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"128x4x8 PF1 TRIG0 SOLO1", [=](int j) { launch(c10n::c10, 128, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"128x4x8 PF1 TRIG1 SOLO1 (pmtune now)", [=](int j) { launch(c11n::c11, 128, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"128x4x8 PF1 TRIG2 SOLO1", [=](int j) { launch(c12n::c12, 128, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"512x1x8 PF1 TRIG0 SOLO1", [=](int j) { launch(d10n::d10, 512, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"512x1x8 PF1 TRIG1 SOLO1 (pmtune now)", [=](int j) { launch(d11n::d11, 512, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"512x1x8 PF1 TRIG2 SOLO1", [=](int j) { launch(d12n::d12, 512, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"1024x2x4 PF0 TRIG1 SOLO1", [=](int j) { launch(a01n::a01, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"cub::DeviceReduce::Reduce (float sum)", [=](int j) { size_t t = tmpb; CK(cub::DeviceReduce::Reduce(tmp, t, in(j), outs + 16 * j, (int)n, add_in_float(), 0.0f)); }});
    ws.push_back({"producer + 1024x2x4 (pmtune before)", [=](int j) { producer<<<132, 128>>>(junk); launch(a00n::a00, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"producer + 1024x2x4 PF0 TRIG0 SOLO1", [=](int j) { producer<<<132, 128>>>(junk); launch(s00n::s00, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"producer + 1024x2x4 PF1 TRIG0 SOLO1", [=](int j) { producer<<<132, 128>>>(junk); launch(a10n::a10, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"producer + 1024x2x4 PF0 TRIG1 SOLO1", [=](int j) { producer<<<132, 128>>>(junk); launch(a01n::a01, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"producer + 1024x2x4 (pmtune now)", [=](int j) { producer<<<132, 128>>>(junk); launch(a11n::a11, 1024, 8192, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"producer + 256x2x8 PF1 TRIG0 SOLO1", [=](int j) { producer<<<132, 128>>>(junk); launch(b10n::b10, 256, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"producer + 256x2x8 (pmtune now)", [=](int j) { producer<<<132, 128>>>(junk); launch(b11n::b11, 256, 4096, true, in(j), n, outs + 16 * j, part, counter); }});
    ws.push_back({"producer + cub", [=](int j) { producer<<<132, 128>>>(junk); size_t t = tmpb; CK(cub::DeviceReduce::Reduce(tmp, t, in(j), outs + 16 * j, (int)n, add_in_float(), 0.0f)); }});
    double want = 0; for (unsigned i = 0; i < n; i++) want += __bfloat162float(h[i]);
    printf("n = %u bf16, K = %d copies, %d samples\n", n, K, S);
    for (int rep = 0; rep < 2; rep++)
    for (auto &w : ws) {
      for (int i = 0; i < 5; i++) w.f(i % K);
      std::vector<double> t(S);
      CK(cudaMemset(outs, 0xff, K * 64));
      for (int i = 0; i < S; i++) {
        gate[i] = 0;
        readflush<<<132 * 4, 512>>>((const float4 *)flush, fb / 16, sink);
        CK(cudaLaunchHostFunc(0, wait_gate, &gate[i]));
        CK(cudaEventRecord(a[i], 0)); for (int j = 0; j < K; j++) w.f(j); CK(cudaEventRecord(b[i], 0));
        gate[i] = 1;
      }
      CK(cudaEventSynchronize(b[S - 1])); CK(cudaGetLastError());
      for (int i = 0; i < S; i++) { float f; CK(cudaEventElapsedTime(&f, a[i], b[i])); t[i] = f * 1000 / K; }
      std::sort(t.begin(), t.end());
      std::vector<float> got(K * 16); CK(cudaMemcpy(got.data(), outs, K * 64, cudaMemcpyDeviceToHost));
      double worst = 0;
      if (w.name.find("empty") != 0 && w.name.find("load") != 0)
        for (int j = 0; j < K; j++) worst = std::max(worst, fabs(got[16 * j] - want));
      printf("  %-48s med %6.2f us  min %6.2f  max %6.2f   worst |sum - ref| %.3g\n", w.name.c_str(), t[S / 2], t[0], t[S - 1], worst);
    }
  }
  return 0;
}

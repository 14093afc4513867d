// experiment: small-reduce variants at n = 2^20 (not part of pmtune); see README.md, section 5
#include <cstdio>
#include <vector>
#include <atomic>
#include <algorithm>
#include <functional>
#include <string>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define pm_reduce k_base512
#define pm_reduce_final k_base512_final
namespace ns_base512 {
#include "reduce_base.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.nc.L2::256B"
#define pm_reduce k_l2_512
#define pm_reduce_final k_l2_512_final
namespace ns_l2_512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.nc.L1::no_allocate.L2::256B"
#define pm_reduce k_l2na512
#define pm_reduce_final k_l2na512_final
namespace ns_l2na512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.nc.L2::128B"
#define pm_reduce k_l2128_512
#define pm_reduce_final k_l2128_512_final
namespace ns_l2128_512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define pm_reduce k_fold512
#define pm_reduce_final k_fold512_final
namespace ns_fold512 {
#include "reduce_fold.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 1024
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define pm_reduce k_base1024
#define pm_reduce_final k_base1024_final
namespace ns_base1024 {
#include "reduce_base.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 256
#define ITEMS 4
#define VEC 4
#define STEP 2
#define COMBINE 3
#define pm_reduce k_base256
#define pm_reduce_final k_base256_final
namespace ns_base256 {
#include "reduce_base.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 2
#define pm_reduce k_pass1
#define pm_reduce_final k_pass1_final
namespace ns_pass1 {
#include "reduce_base.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS

#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.nc.L1::no_allocate"
#define pm_reduce k_na512
#define pm_reduce_final k_na512_final
namespace ns_na512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.nc.L1::no_allocate.L2::128B"
#define pm_reduce k_na128_512
#define pm_reduce_final k_na128_512_final
namespace ns_na128_512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.L1::no_allocate"
#define pm_reduce k_naplain512
#define pm_reduce_final k_naplain512_final
namespace ns_naplain512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.nc.L1::evict_first"
#define pm_reduce k_ef512
#define pm_reduce_final k_ef512_final
namespace ns_ef512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.cs"
#define pm_reduce k_cs512
#define pm_reduce_final k_cs512_final
namespace ns_cs512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define LDHINT "ld.global.lu"
#define pm_reduce k_lu512
#define pm_reduce_final k_lu512_final
namespace ns_lu512 {
#include "reduce_l2.cu"
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef LDHINT
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
__global__ void empty() {}
__global__ void readflush(const float4 *p, size_t n, float *sink) {
  float4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcg(&p[i]); acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w; }
  if (acc.x + acc.y + acc.z + acc.w == 1234.5f) *sink = acc.x;
}
static void CUDART_CB wait_gate(void *arg) { auto *g = (std::atomic<int> *)arg; while (!g->load()) {} }
int main() {
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  size_t fb = 2 * (size_t)l2; void *flush; CK(cudaMalloc(&flush, fb)); CK(cudaMemset(flush, 0, fb));
  const size_t nmax = 1 << 20; const int K = 24;
  float *rot; CK(cudaMalloc(&rot, (size_t)K * nmax * 4));
  std::vector<float> h(nmax); double ref = 0;
  for (size_t i = 0; i < nmax; i++) { h[i] = (float)((i * 2654435761u) % 1000) / 1000.f; ref += h[i]; }
  for (int j = 0; j < K; j++) CK(cudaMemcpy(rot + (size_t)j * nmax, h.data(), nmax * 4, cudaMemcpyHostToDevice));
  float *outs; CK(cudaMalloc(&outs, K * 64));
  char *work; CK(cudaMalloc(&work, 1 << 22)); CK(cudaMemset(work, 0, 1 << 22));
  unsigned *counter = (unsigned *)work; float *part = (float *)(work + 256);
  void *tmp = NULL; size_t tmpb = 0; cub::DeviceReduce::Sum(tmp, tmpb, rot, outs, (int)nmax); CK(cudaMalloc(&tmp, tmpb));
  const int S = 61;
  std::vector<cudaEvent_t> a(S), b(S); for (int i = 0; i < S; i++) { CK(cudaEventCreate(&a[i])); CK(cudaEventCreate(&b[i])); }
  std::vector<std::atomic<int>> gate(S);
  struct W { std::string name; std::function<void(int)> f; };
  std::vector<W> ws;
  unsigned n = 1u << 20;
  auto in = [=](int j) { return rot + (size_t)j * nmax; };
  ws.push_back({"empty, 256 blocks of 512", [=](int j) { empty<<<256, 512>>>(); }});
  ws.push_back({"pass 1 only 512x2x4", [=](int j) { ns_pass1::k_pass1<<<256, 512>>>(in(j), n, outs + j, part + 8192, counter); }});

  ws.push_back({"c3 base512 (256x512, items 2, vec 4)", [=](int j) { ns_base512::k_base512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 l2_512 (256x512, items 2, vec 4)", [=](int j) { ns_l2_512::k_l2_512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 l2na512 (256x512, items 2, vec 4)", [=](int j) { ns_l2na512::k_l2na512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 l2128_512 (256x512, items 2, vec 4)", [=](int j) { ns_l2128_512::k_l2128_512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 fold512 (256x512, items 2, vec 4)", [=](int j) { ns_fold512::k_fold512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 base1024 (128x1024, items 2, vec 4)", [=](int j) { ns_base1024::k_base1024<<<128, 1024>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 base256 (256x256, items 4, vec 4)", [=](int j) { ns_base256::k_base256<<<256, 256>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 na512 ld.global.nc.L1::no_allocate", [=](int j) { ns_na512::k_na512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 na128_512 ld.global.nc.L1::no_allocate.L2::128B", [=](int j) { ns_na128_512::k_na128_512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 naplain512 ld.global.L1::no_allocate", [=](int j) { ns_naplain512::k_naplain512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 ef512 ld.global.nc.L1::evict_first", [=](int j) { ns_ef512::k_ef512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 cs512 ld.global.cs", [=](int j) { ns_cs512::k_cs512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"c3 lu512 ld.global.lu", [=](int j) { ns_lu512::k_lu512<<<256, 512>>>(in(j), n, outs + j, part, counter); }});
  ws.push_back({"cub::DeviceReduce::Sum", [=](int j) { size_t t = tmpb; cub::DeviceReduce::Sum(tmp, t, in(j), outs + j, (int)n); }});
  float *sink; CK(cudaMalloc(&sink, 64));
  for (int rep = 0; rep < 2; rep++)
  for (auto &w : ws) {
    for (int i = 0; i < 5; i++) w.f(i % K);
    std::vector<double> t(S);
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
    float got; CK(cudaMemcpy(&got, outs + 3, 4, cudaMemcpyDeviceToHost));
    printf("  %-44s med %6.2f us  min %6.2f  max %6.2f   sum %.1f (ref %.1f)\n", w.name.c_str(), t[S / 2], t[0], t[S - 1], got, ref);
  }
  return 0;
}

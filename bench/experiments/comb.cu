// experiment: where a small reduce's time goes (not part of pmtune)
#include <cstdio>
#include <vector>
#include <atomic>
#include <algorithm>
#include <functional>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
// instantiate the template several times with different defines
#define BLOCK 256
#define ITEMS 4
#define VEC 4
#define STEP 1
#define COMBINE 3
#define pm_reduce k3_s1
#define pm_reduce_final k3_s1_final
namespace n1 {
#include "../../templates/reduce.cu"
}
#undef STEP
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define STEP 2
#define pm_reduce k3_s2
#define pm_reduce_final k3_s2_final
namespace n2 {
#include "../../templates/reduce.cu"
}
#undef COMBINE
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define COMBINE 2
#define pm_reduce k2_s2
#define pm_reduce_final k2_s2_final
namespace n3 {
#include "../../templates/reduce.cu"
}
#undef COMBINE
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define COMBINE 0
#define pm_reduce k0_s2
#define pm_reduce_final k0_s2_final
namespace n4 {
#include "../../templates/reduce.cu"
}
#undef COMBINE
#undef STEP
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define COMBINE 3
#define STEP 1
#define pm_reduce kw_s1
#define pm_reduce_final kw_s1_final
namespace n5 {
#include "reduce_w.cu" // templates/reduce.cu with reduce_w.patch applied
}
#undef STEP
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define STEP 2
#define pm_reduce kw_s2
#define pm_reduce_final kw_s2_final
namespace n6 {
#include "reduce_w.cu" // templates/reduce.cu with reduce_w.patch applied
}
#undef COMBINE
#undef STEP
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define COMBINE 3
#define STEP 1
#define pm_reduce kf_s1
#define pm_reduce_final kf_s1_final
namespace n7 {
#include "reduce_first.cu" // templates/reduce.cu with reduce_first.patch applied
}
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define BLOCK 512
#define ITEMS 4
#define VEC 2
#define STEP 2
#define pm_reduce kwin
#define pm_reduce_final kwin_final
namespace n8 {
#include "../../templates/reduce.cu"
}
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
#define pm_reduce kwinf
#define pm_reduce_final kwinf_final
namespace n9 {
#include "reduce_first.cu" // templates/reduce.cu with reduce_first.patch applied
}
__global__ void empty() {}
__global__ void add4(const float4 *a, const float4 *b, float4 *c, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 x = a[i], y = b[i]; c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
}
__global__ void readflush(const float4 *p, size_t n, float *sink) {
  float4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcg(&p[i]); acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w; }
  if (acc.x + acc.y + acc.z + acc.w == 1234.5f) *sink = acc.x;
}
static void CUDART_CB wait_gate(void *arg) { auto *g = (std::atomic<int> *)arg; while (!g->load()) {} }
int main() {
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  size_t fb = 2 * (size_t)l2; void *flush; CK(cudaMalloc(&flush, fb));
  const size_t nmax = 1 << 20; const int K = 24;
  float *rot; CK(cudaMalloc(&rot, (size_t)K * nmax * 4));
  std::vector<float> h(nmax); for (size_t i = 0; i < nmax; i++) h[i] = (float)((i * 2654435761u) % 1000) / 1000.f;
  for (int j = 0; j < K; j++) CK(cudaMemcpy(rot + (size_t)j * nmax, h.data(), nmax * 4, cudaMemcpyHostToDevice));
  float *outs; CK(cudaMalloc(&outs, K * 64));
  char *work; CK(cudaMalloc(&work, 1 << 22)); CK(cudaMemset(work, 0, 1 << 22));
  unsigned *counter = (unsigned *)work; float *part = (float *)(work + 256); float *part0 = (float *)(work + 256 + 32768);
  void *tmp = NULL; size_t tmpb = 0; cub::DeviceReduce::Sum(tmp, tmpb, rot, outs, (int)nmax); CK(cudaMalloc(&tmp, tmpb));
  const int S = 41;
  std::vector<cudaEvent_t> a(S), b(S); for (int i = 0; i < S; i++) { CK(cudaEventCreate(&a[i])); CK(cudaEventCreate(&b[i])); }
  std::vector<std::atomic<int>> gate(S);
  struct W { std::string name; std::function<void(int)> f; };
  std::vector<W> ws;
  const size_t am = 2048 * 2048; float *A, *B, *C; const int KA = 2;
  CK(cudaMalloc(&A, am * 4 * KA)); CK(cudaMalloc(&B, am * 4 * KA)); CK(cudaMalloc(&C, am * 4 * KA));
  CK(cudaMemset(A, 0x3c, am * 4 * KA)); CK(cudaMemset(B, 0x3c, am * 4 * KA));
  {
    unsigned n = 1u << 20, g = n / 4096;
    auto in = [=](int j) { return rot + (size_t)j * nmax; };
    ws.push_back({"c3 256x4x4 s1 last", [=](int j) { n1::k3_s1<<<g, 256>>>(in(j), n, outs + j, part, counter); }});
    ws.push_back({"c3 256x4x4 s1 first", [=](int j) { n7::kf_s1<<<g, 256>>>(in(j), n, outs + j, part, counter); }});
    ws.push_back({"c3 512x4x2 s2 last", [=](int j) { n8::kwin<<<g, 512>>>(in(j), n, outs + j, part, counter); }});
    ws.push_back({"c3 512x4x2 s2 first", [=](int j) { n9::kwinf<<<g, 512>>>(in(j), n, outs + j, part, counter); }});
    ws.push_back({"c2 pass1 256x4x4", [=](int j) { n3::k2_s2<<<g, 256>>>(in(j), n, outs + j, part0, counter); }});
    ws.push_back({"cub n=2^20", [=](int j) { size_t t = tmpb; cub::DeviceReduce::Sum(tmp, t, in(j), outs + j, (int)n); }});
  }
  float *sink; CK(cudaMalloc(&sink, 64)); CK(cudaMemset(flush, 0, fb));
  for (int rep = 3; rep < 5; rep++)
  for (auto &w : ws) {
    if (&w == &ws[0]) printf("== flush: %s\n", rep == 0 ? "memset i&0xff" : rep == 1 ? "memset 0" : rep == 2 ? "memset 0x5a" : "read");
    for (int i = 0; i < 5; i++) w.f(i % K);
    std::vector<double> t(S);
    for (int i = 0; i < S; i++) {
      gate[i] = 0;
      if (rep == 0) CK(cudaMemsetAsync(flush, i & 0xff, fb, 0));
      else if (rep == 1) CK(cudaMemsetAsync(flush, 0, fb, 0));
      else if (rep == 2) CK(cudaMemsetAsync(flush, 0x5a, fb, 0));
      else readflush<<<132 * 4, 512>>>((const float4 *)flush, fb / 16, sink);
      CK(cudaLaunchHostFunc(0, wait_gate, &gate[i]));
      CK(cudaEventRecord(a[i], 0)); for (int j = 0; j < K; j++) w.f(j); CK(cudaEventRecord(b[i], 0));
      gate[i] = 1;
    }
    CK(cudaEventSynchronize(b[S - 1])); CK(cudaGetLastError());
    for (int i = 0; i < S; i++) { float f; CK(cudaEventElapsedTime(&f, a[i], b[i])); t[i] = f * 1000 / K; }
    std::sort(t.begin(), t.end());
    float got; CK(cudaMemcpy(&got, outs + 3, 4, cudaMemcpyDeviceToHost));
    printf("  %-26s med %6.2f us  min %6.2f  max %6.2f   sum %.3f\n", w.name.c_str(), t[S / 2], t[0], t[S - 1], got);
  }
  return 0;
}

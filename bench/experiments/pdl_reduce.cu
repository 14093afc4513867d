// experiment: programmatic dependent launch for the one-launch reduce at n = 2^20 (not part of pmtune); see README.md, section 6
#include <cstdio>
#include <vector>
#include <atomic>
#include <algorithm>
#include <functional>
#include <string>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
// the tuner's winner at 2^20: 256 blocks of 512, two float4 per thread, warp shuffles, combine 3
#define BLOCK 512
#define ITEMS 2
#define VEC 4
#define STEP 2
#define COMBINE 3
#define PDL 0
#define pm_reduce p0_reduce
#define pm_reduce_final p0_final
namespace p0 {
#include "reduce_pdl.cu"
}
#undef pm_reduce
#undef pm_reduce_final
#undef PDL
#define PDL 1
#define pm_reduce p1_reduce
#define pm_reduce_final p1_final
namespace p1 {
#include "reduce_pdl.cu"
}
#undef pm_reduce
#undef pm_reduce_final
#undef PDL
#define PDL 2
#define pm_reduce p2_reduce
#define pm_reduce_final p2_final
namespace p2 {
#include "reduce_pdl.cu"
}
#undef pm_reduce
#undef pm_reduce_final
#undef PDL
#define PDL 3
#define pm_reduce p3_reduce
#define pm_reduce_final p3_final
namespace p3 {
#include "reduce_pdl.cu"
}
#undef pm_reduce
#undef pm_reduce_final
#undef PDL
#undef COMBINE
#define COMBINE 2
#define PDL 0
#define pm_reduce pass1_reduce
#define pm_reduce_final pass1_final
namespace pass1 {
#include "reduce_pdl.cu"
}
#undef pm_reduce
#undef pm_reduce_final
__global__ void empty() {}
__global__ void producer(float *p) { if (threadIdx.x == 0 && blockIdx.x == 0) p[0] = 0; }
__global__ void readflush(const float4 *p, size_t n, float *sink) {
  float4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcg(&p[i]); acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w; }
  if (acc.x + acc.y + acc.z + acc.w == 1234.5f) *sink = acc.x;
}
static void CUDART_CB wait_gate(void *arg) { auto *g = (std::atomic<int> *)arg; while (!g->load()) {} }
typedef void (*kfn)(const float *, unsigned, float *, float *, unsigned *);
// launches k with or without programmatic stream serialization
static void launch(kfn k, bool pdl, const float *in, unsigned n, float *out, float *part, unsigned *counter) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(256); cfg.blockDim = dim3(BLOCK); cfg.stream = 0;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at; cfg.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, k, in, n, out, part, counter));
}
int main() {
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); printf("%s\n", prop.name);
  size_t fb = 2 * (size_t)l2; void *flush; CK(cudaMalloc(&flush, fb)); CK(cudaMemset(flush, 0, fb));
  const size_t nmax = 1 << 20; const int K = 24;
  float *rot; CK(cudaMalloc(&rot, (size_t)K * nmax * 4));
  std::vector<float> h(nmax); double ref = 0;
  srand(7);
  for (size_t i = 0; i < nmax; i++) { h[i] = (float)rand() / RAND_MAX - 0.5f; ref += h[i]; }
  for (int j = 0; j < K; j++) CK(cudaMemcpy(rot + (size_t)j * nmax, h.data(), nmax * 4, cudaMemcpyHostToDevice));
  float *outs; CK(cudaMalloc(&outs, K * 64));
  char *work; CK(cudaMalloc(&work, 1 << 22)); CK(cudaMemset(work, 0, 1 << 22));
  unsigned *counter = (unsigned *)work; float *part = (float *)(work + 256);
  float *junk; CK(cudaMalloc(&junk, 64));
  void *tmp = NULL; size_t tmpb = 0; cub::DeviceReduce::Sum(tmp, tmpb, rot, outs, (int)nmax); CK(cudaMalloc(&tmp, tmpb));
  const int S = 61;
  std::vector<cudaEvent_t> a(S), b(S); for (int i = 0; i < S; i++) { CK(cudaEventCreate(&a[i])); CK(cudaEventCreate(&b[i])); }
  std::vector<std::atomic<int>> gate(S);
  struct W { std::string name; std::function<void(int)> f; };
  std::vector<W> ws;
  unsigned n = 1u << 20;
  auto in = [=](int j) { return rot + (size_t)j * nmax; };
  ws.push_back({"empty<<<1, 32>>>", [=](int j) { empty<<<1, 32>>>(); }});
  ws.push_back({"empty<<<256, 512>>>", [=](int j) { empty<<<256, 512>>>(); }});
  ws.push_back({"pass 1 only (combine 2's first kernel)", [=](int j) { launch(pass1::pass1_reduce, false, in(j), n, outs + j, part + 8192, counter); }});
  ws.push_back({"combine 3, PDL 0, plain launch", [=](int j) { launch(p0::p0_reduce, false, in(j), n, outs + j, part, counter); }});
  ws.push_back({"combine 3, PDL 1 compiled, plain launch", [=](int j) { launch(p1::p1_reduce, false, in(j), n, outs + j, part, counter); }});
  ws.push_back({"combine 3, PDL 1 (trigger at start), PDL launch", [=](int j) { launch(p1::p1_reduce, true, in(j), n, outs + j, part, counter); }});
  ws.push_back({"combine 3, PDL 2 (trigger after loads), PDL launch", [=](int j) { launch(p2::p2_reduce, true, in(j), n, outs + j, part, counter); }});
  ws.push_back({"combine 3, PDL 3 (no trigger), PDL launch", [=](int j) { launch(p3::p3_reduce, true, in(j), n, outs + j, part, counter); }});
  ws.push_back({"cub::DeviceReduce::Sum", [=](int j) { size_t t = tmpb; CK(cub::DeviceReduce::Sum(tmp, t, in(j), outs + j, (int)n)); }});
  ws.push_back({"producer<<<132,128>>> alone", [=](int j) { producer<<<132, 128>>>(junk); }});
  ws.push_back({"producer + combine 3 PDL 0, plain", [=](int j) { producer<<<132, 128>>>(junk); launch(p0::p0_reduce, false, in(j), n, outs + j, part, counter); }});
  ws.push_back({"producer + combine 3 PDL 3, PDL launch", [=](int j) { producer<<<132, 128>>>(junk); launch(p3::p3_reduce, true, in(j), n, outs + j, part, counter); }});
  ws.push_back({"producer + cub", [=](int j) { producer<<<132, 128>>>(junk); size_t t = tmpb; CK(cub::DeviceReduce::Sum(tmp, t, in(j), outs + j, (int)n)); }});
  float *sink; CK(cudaMalloc(&sink, 64));
  float want; { double s = 0; for (float x : h) s += x; want = (float)s; }
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
    double worst = 0; for (int j = 0; j < K; j++) worst = std::max(worst, (double)fabsf(got[j] - want));
    printf("  %-52s med %6.2f us  min %6.2f  max %6.2f   worst |sum - ref| over copies %.3g\n", w.name.c_str(), t[S / 2], t[0], t[S - 1], worst);
  }
  return 0;
}

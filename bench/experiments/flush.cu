// experiment: how the L2 flush method changes small-kernel event timings (not part of pmtune)
#include <cstdio>
#include <vector>
#include <algorithm>
#include <functional>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
namespace A {
#define BLOCK 256
#define ITEMS 4
#define VEC 4
#define STEP 2
#define COMBINE 0
#define pm_reduce red_a
#define pm_reduce_final red_a_final
#include "../../templates/reduce.cu"
#undef BLOCK
#undef ITEMS
#undef VEC
#undef STEP
#undef COMBINE
#undef pm_reduce
#undef pm_reduce_final
#undef PADDED
#undef SMEM_WORDS
}
__global__ void empty() {}
__global__ void readflush(const float4 *p, size_t n, float *sink) {
  float4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcg(&p[i]); acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w; }
  if (acc.x + acc.y + acc.z + acc.w == 1234.5f) *sink = acc.x;
}
int main() {
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s L2 %d\n", p.name, l2);
  size_t fb = 2 * (size_t)l2; void *flush; CK(cudaMalloc(&flush, fb)); CK(cudaMemset(flush, 1, fb));
  float *sink; CK(cudaMalloc(&sink, 64));
  size_t nmax = 1 << 20; float *in, *out; CK(cudaMalloc(&in, nmax * 4)); CK(cudaMalloc(&out, 64));
  std::vector<float> h(nmax); for (size_t i = 0; i < nmax; i++) h[i] = (float)((i * 2654435761u) % 1000) / 1000.f;
  CK(cudaMemcpy(in, h.data(), nmax * 4, cudaMemcpyHostToDevice));
  double *partials; CK(cudaMalloc(&partials, 1 << 20)); CK(cudaMemset(partials, 0, 1 << 20));
  unsigned *counter; CK(cudaMalloc(&counter, 64)); CK(cudaMemset(counter, 0, 64));
  float *copyd; CK(cudaMalloc(&copyd, nmax * 4));
  void *tmp = NULL; size_t tmpb = 0; cub::DeviceReduce::Sum(tmp, tmpb, in, out, (int)nmax); CK(cudaMalloc(&tmp, tmpb));
  const int K = 24; float *rot; CK(cudaMalloc(&rot, (size_t)K * nmax * 4));
  for (int j = 0; j < K; j++) CK(cudaMemcpy(rot + (size_t)j * nmax, in, nmax * 4, cudaMemcpyDeviceToDevice));
  float *outs; CK(cudaMalloc(&outs, K * 64));
  const int S = 60;
  std::vector<cudaEvent_t> a(S), b(S); for (int i = 0; i < S; i++) { CK(cudaEventCreate(&a[i])); CK(cudaEventCreate(&b[i])); }
  const char *modes[] = {"memset", "read", "none", "memset+read"};
  struct W { const char *name; std::function<void()> f; };
  std::vector<W> ws;
  ws.push_back({"empty<<<1,32>>>", [&] { empty<<<1, 32>>>(); }});
  for (unsigned n : {1024u, 65536u, 1u << 20}) {
    char *nm = new char[64]; snprintf(nm, 64, "ours-256x4x4 n=%u", n);
    ws.push_back({nm, [=] { unsigned g = (n + 4095) / 4096; A::red_a<<<g, 256>>>(in, n, out, (float *)partials, counter); }});
    char *nm2 = new char[64]; snprintf(nm2, 64, "cub n=%u", n);
    ws.push_back({nm2, [=] { size_t t = tmpb; cub::DeviceReduce::Sum(tmp, t, in, out, (int)n); }});
    char *nm3 = new char[64]; snprintf(nm3, 64, "memcpyD2D n=%u", n);
    ws.push_back({nm3, [=] { cudaMemcpyAsync(copyd, in, n * 4, cudaMemcpyDeviceToDevice, 0); }});
  }
  for (int m = 0; m < 1; m++) {
    printf("== flush %s\n", modes[m]);
    for (auto &w : ws) {
      for (int i = 0; i < 5; i++) w.f();
      std::vector<double> t(S);
      for (int i = 0; i < S; i++) {
        if (m == 0 || m == 3) CK(cudaMemsetAsync(flush, i & 0xff, fb, 0));
        if (m == 1 || m == 3) readflush<<<sms * 4, 512>>>((const float4 *)flush, fb / 16, sink);
        CK(cudaEventRecord(a[i], 0)); w.f(); CK(cudaEventRecord(b[i], 0));
      }
      CK(cudaEventSynchronize(b[S - 1])); CK(cudaGetLastError());
      for (int i = 0; i < S; i++) { float f; CK(cudaEventElapsedTime(&f, a[i], b[i])); t[i] = f * 1000; }
      std::sort(t.begin(), t.end());
      printf("  %-26s med %7.2f us  min %7.2f  q3 %7.2f\n", w.name, t[S / 2], t[0], t[3 * S / 4]);
    }
  }
  struct WB { const char *name; std::function<void(int)> f; };
  std::vector<WB> wb;
  wb.push_back({"empty", [&](int) { empty<<<1, 32>>>(); }});
  for (unsigned n : {1024u, 65536u, 1u << 20}) {
    char *nm = new char[64]; snprintf(nm, 64, "ours-256x4x4 n=%u", n);
    wb.push_back({nm, [=](int j) { unsigned g = (n + 4095) / 4096; A::red_a<<<g, 256>>>(rot + (size_t)j * nmax, n, outs + j, (float *)partials, counter); }});
    char *nm2 = new char[64]; snprintf(nm2, 64, "cub n=%u", n);
    wb.push_back({nm2, [=](int j) { size_t t = tmpb; cub::DeviceReduce::Sum(tmp, t, rot + (size_t)j * nmax, outs + j, (int)n); }});
  }
  for (int kk : {1, 4, 24}) for (int m = 0; m < 2; m++) {
    printf("== batch K=%d rotated, flush %s before the batch\n", kk, m ? "read" : "memset");
    for (auto &w : wb) {
      for (int i = 0; i < 5; i++) w.f(i % kk);
      std::vector<double> t(S);
      for (int i = 0; i < S; i++) {
        if (m == 0) CK(cudaMemsetAsync(flush, i & 0xff, fb, 0));
        else readflush<<<sms * 4, 512>>>((const float4 *)flush, fb / 16, sink);
        CK(cudaEventRecord(a[i], 0)); for (int j = 0; j < kk; j++) w.f(j); CK(cudaEventRecord(b[i], 0));
      }
      CK(cudaEventSynchronize(b[S - 1])); CK(cudaGetLastError());
      for (int i = 0; i < S; i++) { float f; CK(cudaEventElapsedTime(&f, a[i], b[i])); t[i] = f * 1000 / kk; }
      std::sort(t.begin(), t.end());
      printf("  %-26s med %7.2f us  min %7.2f  q3 %7.2f\n", w.name, t[S / 2], t[0], t[3 * S / 4]);
    }
  }
  return 0;
}

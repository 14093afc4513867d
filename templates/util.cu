// util.cu: the tuner's utility kernels, not operations; one program, loaded once per context.
//
// pm_compare counts the elements (of esize bytes: 2, 4 or 8) of a pitched 2D array whose bits
// differ from a packed reference, and finds the first. Verifies tuning candidates on the device, where copying every
// output back to the host would cost more than the run.
template <typename W>
__device__ __forceinline__ bool differs(const char *out, size_t pitch, const char *ref,
                                        unsigned line, unsigned i, unsigned long long e) {
  const W o = *(const W *)(out + (size_t)line * pitch + (size_t)i * sizeof(W));
  return o != ((const W *)ref)[e];
}

extern "C" __global__ void pm_compare(const char *__restrict__ out, size_t pitch,
                                      const char *__restrict__ ref, unsigned lines,
                                      unsigned inner, unsigned esize,
                                      unsigned long long *result) {
  // result[0]: how many differ; result[1]: the smallest index (line * inner + i) that differs
  const unsigned long long total = (unsigned long long)lines * inner;
  unsigned long long bad = 0, first = ~0ull;
  for (unsigned long long e = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; e < total;
       e += (unsigned long long)gridDim.x * blockDim.x) {
    const unsigned line = (unsigned)(e / inner), i = (unsigned)(e % inner);
    const bool d = esize == 2   ? differs<unsigned short>(out, pitch, ref, line, i, e)
                   : esize == 8 ? differs<unsigned long long>(out, pitch, ref, line, i, e)
                                : differs<unsigned>(out, pitch, ref, line, i, e);
    if (d) {
      bad++;
      if (e < first) first = e;
    }
  }
  if (bad) {
    atomicAdd(&result[0], bad);
    atomicMin(&result[1], first);
  }
}

// pm_flush reads n 16-byte words (twice the L2 cache) through L2, so that a timed run that follows
// finds none of its own data there. Reading leaves L2 full of clean lines: a memset would leave
// them dirty, and the timed run would pay for writing back the flush's data as it evicts it (on
// an H100 that made a 48 MB add time 23% slower). The buffer holds zeros, so *sink is never
// written: it only keeps the loads from being optimised away.
extern "C" __global__ void pm_flush(const float4 *__restrict__ p, size_t n, float *sink) {
  float acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const float4 v = __ldcg(&p[i]);
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc != 0) *sink = acc;
}

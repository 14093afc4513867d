// compare.cu: a utility kernel, not an operation: counts the elements of a pitched 2D float array
// whose bits differ from a packed reference, and finds the first. Verifies tuning candidates on
// the device, where copying every output back to the host would cost more than the run.
extern "C" __global__ void pm_compare(const float *__restrict__ out, size_t pitch,
                                      const float *__restrict__ ref, unsigned lines,
                                      unsigned inner, unsigned long long *result) {
  // result[0]: how many differ; result[1]: the smallest index (line * inner + i) that differs
  const unsigned long long total = (unsigned long long)lines * inner;
  unsigned long long bad = 0, first = ~0ull;
  for (unsigned long long e = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; e < total;
       e += (unsigned long long)gridDim.x * blockDim.x) {
    const unsigned line = (unsigned)(e / inner), i = (unsigned)(e % inner);
    const float o = *(const float *)((const char *)out + (size_t)line * pitch + (size_t)i * 4);
    if (__float_as_uint(o) != __float_as_uint(ref[e])) {
      bad++;
      if (e < first) first = e;
    }
  }
  if (bad) {
    atomicAdd(&result[0], bad);
    atomicMin(&result[1], first);
  }
}

// axpy.cu: y = alpha * x + y over n floats, alpha given by each call (pm_kernel_launch_with): a
// gallery kernel of one's own (axpy.json). Each thread updates ITEMS runs of VEC floats, BLOCK *
// VEC floats apart; the last run's tail one float at a time.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

template <int V> struct vec_t;
template <> struct vec_t<1> { typedef float t; };
template <> struct vec_t<2> { typedef float2 t; };
template <> struct vec_t<4> { typedef float4 t; };

__device__ __forceinline__ float axpy(float a, float x, float y) { return fmaf(a, x, y); }
__device__ __forceinline__ float2 axpy(float a, float2 x, float2 y) {
  return make_float2(fmaf(a, x.x, y.x), fmaf(a, x.y, y.y));
}
__device__ __forceinline__ float4 axpy(float a, float4 x, float4 y) {
  return make_float4(fmaf(a, x.x, y.x), fmaf(a, x.y, y.y), fmaf(a, x.z, y.z), fmaf(a, x.w, y.w));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
my_axpy(float *__restrict__ y, const float *__restrict__ x, float alpha, int n) {
  typedef typename vec_t<VEC>::t v_t;
  const size_t first = (size_t)blockIdx.x * BLOCK * ITEMS * VEC + (size_t)threadIdx.x * VEC;
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const size_t i = first + (size_t)it * BLOCK * VEC;
    if (i + VEC <= (size_t)n) {
      *(v_t *)(y + i) = axpy(alpha, *(const v_t *)(x + i), *(const v_t *)(y + i));
    } else {
      for (size_t j = i; j < (size_t)n; j++) y[j] = fmaf(alpha, x[j], y[j]);
    }
  }
}

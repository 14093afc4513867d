// matadd.cu: C = A + B over rows x cols packed floats, the example of a kernel of your own
// (matadd.json describes its space). Packed rows are one vector of rows * cols floats: each
// thread adds ITEMS runs of VEC floats, BLOCK * VEC floats apart, and the last one's tail alone.
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

__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float4 add(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
my_matadd(float *__restrict__ c, const float *__restrict__ a, const float *__restrict__ b,
          int rows, int cols) {
  typedef typename vec_t<VEC>::t v_t;
  const size_t n = (size_t)rows * cols;
  const size_t first = (size_t)blockIdx.x * BLOCK * ITEMS * VEC + (size_t)threadIdx.x * VEC;
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const size_t i = first + (size_t)it * BLOCK * VEC;
    if (i + VEC <= n) {
      *(v_t *)(c + i) = add(*(const v_t *)(a + i), *(const v_t *)(b + i));
    } else {
      for (size_t j = i; j < n; j++) c[j] = a[j] + b[j];
    }
  }
}

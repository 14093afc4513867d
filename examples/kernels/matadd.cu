// matadd.cu: C = A + B over rows x cols packed floats, the example of a kernel of your own
// (matadd.json describes its space). BX x BY threads a block, each VEC floats a row at a time.
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef VEC
#define VEC 1
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

extern "C" __global__ void __launch_bounds__(BX * BY)
my_matadd(float *__restrict__ c, const float *__restrict__ a, const float *__restrict__ b,
          int rows, int cols) {
  typedef typename vec_t<VEC>::t v_t;
  const int x = (blockIdx.x * BX + threadIdx.x) * VEC, y = blockIdx.y * BY + threadIdx.y;
  if (y >= rows || x >= cols) return;
  const size_t i = (size_t)y * cols + x;
  *(v_t *)(c + i) = add(*(const v_t *)(a + i), *(const v_t *)(b + i));
}

// layernorm.cu: out = (in - mean) / sqrt(var + eps) * gamma + beta along each row of rows x cols
// packed floats (gamma and beta: cols floats), eps given by each call (pm_kernel_launch_with): a
// gallery kernel of one's own (layernorm.json). A row is THREADS threads' (a block of THREADS x
// ROWS threads holds ROWS rows); the mean and variance come from one pass over the row, as sums
// of x - x0 and of its square (x0 the row's first element: the shift keeps the variance's
// rounding small), combined across the row's threads; a second pass writes.
#ifndef THREADS
#define THREADS 128
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef VEC
#define VEC 1
#endif
#define WARPS ((THREADS + 31) / 32)

template <int V> struct vec_t;
template <> struct vec_t<1> { typedef float t; };
template <> struct vec_t<2> { typedef float2 t; };
template <> struct vec_t<4> { typedef float4 t; };

__device__ __forceinline__ void lanes(float v, float *out) { out[0] = v; }
__device__ __forceinline__ void lanes(float2 v, float *out) { out[0] = v.x, out[1] = v.y; }
__device__ __forceinline__ void lanes(float4 v, float *out) {
  out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
}
__device__ __forceinline__ void store(float *y, int i, const float *v, float) { y[i] = v[0]; }
__device__ __forceinline__ void store(float *y, int i, const float *v, float2) {
  ((float2 *)y)[i] = make_float2(v[0], v[1]);
}
__device__ __forceinline__ void store(float *y, int i, const float *v, float4) {
  ((float4 *)y)[i] = make_float4(v[0], v[1], v[2], v[3]);
}

extern "C" __global__ void __launch_bounds__(THREADS * ROWS)
my_layernorm(float *__restrict__ out, const float *__restrict__ in,
             const float *__restrict__ gamma, const float *__restrict__ beta, float eps, int rows,
             int cols) {
  typedef typename vec_t<VEC>::t v_t;
  __shared__ float s1[ROWS][WARPS], s2[ROWS][WARPS];
  const int row = blockIdx.x * ROWS + threadIdx.y;
  const bool live = row < rows;
  const float *x = in + (size_t)(live ? row : 0) * cols;
  float *y = out + (size_t)(live ? row : 0) * cols;
  const int vcols = cols % VEC == 0 ? cols / VEC : 0, tail = vcols * VEC;
  const float x0 = live ? x[0] : 0.0f;
  float a = 0.0f, b = 0.0f; // sums of x - x0 and (x - x0)^2
  if (live) {
    for (int i = threadIdx.x; i < vcols; i += THREADS) {
      float v[VEC];
      lanes(((const v_t *)x)[i], v);
#pragma unroll
      for (int k = 0; k < VEC; k++) {
        const float d = v[k] - x0;
        a += d, b = fmaf(d, d, b);
      }
    }
    for (int i = tail + threadIdx.x; i < cols; i += THREADS) {
      const float d = x[i] - x0;
      a += d, b = fmaf(d, d, b);
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  if (WARPS > 1) {
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) s1[threadIdx.y][w] = a, s2[threadIdx.y][w] = b;
    __syncthreads();
    a = 0.0f, b = 0.0f;
    for (int k = 0; k < WARPS; k++) a += s1[threadIdx.y][k], b += s2[threadIdx.y][k];
  }
  if (!live) return;
  const float mean_d = a / cols, var = fmaxf(b / cols - mean_d * mean_d, 0.0f);
  const float mean = x0 + mean_d, rstd = rsqrtf(var + eps);
  for (int i = threadIdx.x; i < vcols; i += THREADS) {
    float v[VEC], g[VEC], c[VEC];
    lanes(((const v_t *)x)[i], v);
    lanes(((const v_t *)gamma)[i], g);
    lanes(((const v_t *)beta)[i], c);
#pragma unroll
    for (int k = 0; k < VEC; k++) v[k] = fmaf((v[k] - mean) * rstd, g[k], c[k]);
    store(y, i, v, v_t());
  }
  for (int i = tail + threadIdx.x; i < cols; i += THREADS)
    y[i] = fmaf((x[i] - mean) * rstd, gamma[i], beta[i]);
}

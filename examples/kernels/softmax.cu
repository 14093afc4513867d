// softmax.cu: out = softmax(scale * in) along each row of rows x cols packed floats, scale given
// by each call (pm_kernel_launch_with): a gallery kernel of one's own (softmax.json). A row is
// THREADS threads' (a block of THREADS x ROWS threads holds ROWS rows); each reads its share VEC
// floats at a time, keeping a running maximum and the sum of exp against it (one pass: the online
// softmax), the row's threads combine theirs (warp shuffles, then shared memory across warps),
// and a second pass writes exp(scale * x - max) / sum. Each thread's first KEEP vectors stay in
// registers between the passes (their maximum first, then their sum: no chain of dependent
// updates), so a row that fits is read once.
#ifndef THREADS
#define THREADS 128
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef KEEP
#define KEEP 0
#endif
#define WARPS ((THREADS + 31) / 32)
#define NEG_INF (-__int_as_float(0x7f800000)) // NVRTC has no math.h: -INFINITY

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

// (m, s): a maximum and the sum of exp(x - m) of the values it covers (m NEG_INF, s 0: none).
__device__ __forceinline__ void add(float &m, float &s, float x) {
  if (x > m) s = s * __expf(m - x) + 1.0f, m = x;
  else s += __expf(x - m);
}
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2) {
  const float big = fmaxf(m, m2);
  if (big == NEG_INF) return; /* both empty */
  s = s * __expf(m - big) + s2 * __expf(m2 - big);
  m = big;
}

extern "C" __global__ void __launch_bounds__(THREADS * ROWS)
my_softmax(float *__restrict__ out, const float *__restrict__ in, float scale, int rows,
           int cols) {
  typedef typename vec_t<VEC>::t v_t;
  __shared__ float sm[ROWS][WARPS], ss[ROWS][WARPS];
  const int row = blockIdx.x * ROWS + threadIdx.y;
  const bool live = row < rows;
  const float *x = in + (size_t)(live ? row : 0) * cols;
  float *y = out + (size_t)(live ? row : 0) * cols;
  // whole vectors from the row's first vector boundary (head: the floats before it; any row of
  // any width, where in and out lie alike against that boundary, else one float at a time), and
  // the floats before it and after the last whole vector (tail on) one at a time
  const size_t bytes = VEC * sizeof(float), off = (size_t)x % bytes;
  const int head = ((size_t)y - (size_t)x) % bytes != 0
                       ? cols
                       : min(cols, (int)((bytes - off) % bytes / sizeof(float)));
  const int vcols = (cols - head) / VEC, tail = head + vcols * VEC, extras = head + cols - tail;
  const v_t *xv = (const v_t *)(x + head);
  float m = NEG_INF, s = 0.0f;
  float kept[KEEP > 0 ? KEEP : 1][VEC];
  if (live) {
    float km = NEG_INF, ks = 0.0f;
#pragma unroll
    for (int j = 0; j < KEEP; j++) {
      const int i = threadIdx.x + j * THREADS;
      if (i < vcols) {
        lanes(xv[i], kept[j]);
#pragma unroll
        for (int k = 0; k < VEC; k++) kept[j][k] *= scale, km = fmaxf(km, kept[j][k]);
      }
    }
#pragma unroll
    for (int j = 0; j < KEEP; j++)
      if (threadIdx.x + j * THREADS < vcols) {
#pragma unroll
        for (int k = 0; k < VEC; k++) ks += __expf(kept[j][k] - km);
      }
    merge(m, s, km, ks);
    for (int i = threadIdx.x + KEEP * THREADS; i < vcols; i += THREADS) {
      float v[VEC];
      lanes(xv[i], v);
#pragma unroll
      for (int k = 0; k < VEC; k++) add(m, s, scale * v[k]);
    }
    for (int j = threadIdx.x; j < extras; j += THREADS)
      add(m, s, scale * x[j < head ? j : tail + j - head]);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
    merge(m, s, m2, s2);
  }
  if (WARPS > 1) {
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) sm[threadIdx.y][w] = m, ss[threadIdx.y][w] = s;
    __syncthreads();
    m = NEG_INF, s = 0.0f;
    for (int k = 0; k < WARPS; k++) merge(m, s, sm[threadIdx.y][k], ss[threadIdx.y][k]);
  }
  if (!live) return;
  const float inv = 1.0f / s;
#pragma unroll
  for (int j = 0; j < KEEP; j++) {
    const int i = threadIdx.x + j * THREADS;
    if (i < vcols) {
#pragma unroll
      for (int k = 0; k < VEC; k++) kept[j][k] = __expf(kept[j][k] - m) * inv;
      store(y + head, i, kept[j], v_t());
    }
  }
  for (int i = threadIdx.x + KEEP * THREADS; i < vcols; i += THREADS) {
    float v[VEC];
    lanes(xv[i], v);
#pragma unroll
    for (int k = 0; k < VEC; k++) v[k] = __expf(scale * v[k] - m) * inv;
    store(y + head, i, v, v_t());
  }
  for (int j = threadIdx.x; j < extras; j += THREADS) {
    const int i = j < head ? j : tail + j - head;
    y[i] = __expf(scale * x[i] - m) * inv;
  }
}

// filter.cu: out = in (*) w, the 2D correlation of a rows x cols float image (pitched) with a
// (2R+1) x (2R+1) mask in constant memory, clamp-to-edge or zero borders. Compiled by NVRTC with
// one point of tuner/space_filter.c and the problem's radius R as -D.
//
// Generalises the seed's apply_filter (../shared/seeds/002): with TILE=0 OX=1 OY=1 it is that
// kernel (one output per thread, every input read from global memory, clamped).
//
//   R       mask radius (a property of the problem)
//   BX, BY  block shape
//   TILE    0: read inputs from global memory (the caches catch the reuse); 1: the block first
//           copies its tile and halo into shared memory
//   PAD     words of padding per shared-memory row, against bank conflicts (TILE=1)
//   OX, OY  outputs per thread in x and y (register blocking): a thread reads each input row of
//           its window once and uses it for all the outputs it touches
//   VLOAD   1: (TILE=0, OX=4) read each row of the window as aligned 16-byte loads where the
//           tile lies inside the image (rows must start 16-byte aligned)
//
// Every variant adds the (2R+1)^2 products of an output in the same order (mask row by row, left
// to right, fused multiply-adds starting from 0), so every variant gives the same bits.
#ifndef R
#define R 1
#endif
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif
#ifndef TILE
#define TILE 0
#endif
#ifndef PAD
#define PAD 0
#endif
#ifndef OX
#define OX 1
#endif
#ifndef OY
#define OY 1
#endif
#ifndef VLOAD
#define VLOAD 0
#endif
#if VLOAD && (TILE || OX % 4)
#error VLOAD needs TILE=0 and OX a multiple of 4
#endif

#define K (2 * R + 1)
#define TW (BX * OX)       // tile width, outputs
#define TH (BY * OY)       // tile height, outputs
#define SW (TW + 2 * R + PAD) // shared row stride, words

// The weights travel as a kernel parameter, which the GPU keeps in constant memory (read through
// the constant cache, broadcast to the warp, as the seed's __constant__ array): unlike a module's
// __constant__ symbol, calls with different weights on different streams cannot race.
struct pm_mask_t {
  float w[K * K];
};

__device__ __forceinline__ float load(const float *__restrict__ in, size_t pitch, int y, int x,
                                      int rows, int cols, int zero_border, bool inside) {
  if (!inside) {
    if (zero_border && (x < 0 || x >= cols || y < 0 || y >= rows)) return 0.0f;
    x = min(max(x, 0), cols - 1);
    y = min(max(y, 0), rows - 1);
  }
  return *(const float *)((const char *)in + (size_t)y * pitch + (size_t)x * sizeof(float));
}

extern "C" __global__ void __launch_bounds__(BX * BY)
pm_filter(float *__restrict__ out, size_t pitch_out, const float *__restrict__ in, size_t pitch_in,
          int rows, int cols, int zero_border, const __grid_constant__ pm_mask_t mask) {
  const int tiles_x = (cols + TW - 1) / TW;
  const int x0 = (int)(blockIdx.x % tiles_x) * TW, y0 = (int)(blockIdx.x / tiles_x) * TH;
  if (y0 >= rows) return;
  // Whether the tile and its halo lie inside the image: then no load needs clamping.
  const bool inside = x0 >= R && y0 >= R && x0 + TW + R <= cols && y0 + TH + R <= rows;
  const int ox = x0 + threadIdx.x * OX, oy = y0 + threadIdx.y * OY; // this thread's first output
#if VLOAD
  // ox is a multiple of 4: the window [ox - R, ox + OX + R) lies in the float4s from ox - 4
  const bool inside4 = x0 >= 4 && y0 >= R && x0 + TW + 4 <= cols && y0 + TH + R <= rows;
#endif

#if TILE
  __shared__ float s[(TH + 2 * R) * SW];
  for (int ly = threadIdx.y; ly < TH + 2 * R; ly += BY)
    for (int lx = threadIdx.x; lx < TW + 2 * R; lx += BX)
      s[ly * SW + lx] = load(in, pitch_in, y0 + ly - R, x0 + lx - R, rows, cols, zero_border, inside);
  __syncthreads();
#define INPUT(j, i) s[(threadIdx.y * OY + (j)) * SW + threadIdx.x * OX + (i)]
#else
#define INPUT(j, i) load(in, pitch_in, oy + (j) - R, ox + (i) - R, rows, cols, zero_border, inside)
#endif

  float acc[OY][OX];
#pragma unroll
  for (int j = 0; j < OY; j++)
#pragma unroll
    for (int i = 0; i < OX; i++) acc[j][i] = 0.0f;

#pragma unroll
  for (int j = 0; j < OY + 2 * R; j++) { // input rows of this thread's window, top to bottom
    float row[OX + 2 * R];
#if VLOAD
    if (inside4) {
      enum { NV = (4 + OX + R + 3) / 4 };
      const float4 *p = (const float4 *)((const char *)in + (size_t)(oy + j - R) * pitch_in +
                                         (size_t)(ox - 4) * sizeof(float));
      float v[4 * NV];
#pragma unroll
      for (int q = 0; q < NV; q++) {
        const float4 t = p[q];
        v[4 * q] = t.x, v[4 * q + 1] = t.y, v[4 * q + 2] = t.z, v[4 * q + 3] = t.w;
      }
#pragma unroll
      for (int i = 0; i < OX + 2 * R; i++) row[i] = v[i + 4 - R];
    } else
#endif
#pragma unroll
    for (int i = 0; i < OX + 2 * R; i++) row[i] = INPUT(j, i);
#pragma unroll
    for (int fy = K - 1; fy >= 0; fy--) { // mask row fy meets input row j in output row j - fy
      const int o = j - fy;
      if (o >= 0 && o < OY) {
#pragma unroll
        for (int i = 0; i < OX; i++)
#pragma unroll
          for (int fx = 0; fx < K; fx++) acc[o][i] = fmaf(mask.w[fy * K + fx], row[i + fx], acc[o][i]);
      }
    }
  }

#pragma unroll
  for (int j = 0; j < OY; j++)
#pragma unroll
    for (int i = 0; i < OX; i++)
      if (oy + j < rows && ox + i < cols)
        *(float *)((char *)out + (size_t)(oy + j) * pitch_out + (size_t)(ox + i) * sizeof(float)) =
            acc[j][i];
}

// filter.cu: out = in (*) w, the 2D correlation of a rows x cols image (pitched) of elem_t
// (pm_common.cuh: float, half, bfloat16 or double, from -DPM_DTYPE) with a (2R+1) x (2R+1) mask
// in constant memory, clamp-to-edge or zero borders. Compiled by NVRTC with one point of
// tuner/op_filter.c and the problem's radius R and border ZERO as -D. The weights and the sums
// are w_t: float, or double for a double image; an output is rounded once to elem_t.
//
// Generalises the seed's apply_filter (../shared/seeds/002): with TILE=0 OX=1 OY=1 it is that
// kernel (one output per thread, every input read from global memory, clamped).
//
//   R       mask radius (a property of the problem)
//   ZERO    1: zero border, 0: clamp-to-edge (a property of the problem)
//   BX, BY  block shape
//   TILE    0: read inputs from global memory (the caches catch the reuse); 1: the block first
//           copies its tile and halo into shared memory
//   PAD     words of padding per shared-memory row, against bank conflicts (TILE=1)
//   OX, OY  outputs per thread in x and y (register blocking): a thread reads each input row of
//           its window once and uses it for all the outputs it touches
//   VLOAD   1: (TILE=0, OX=4 or 8) where the tile lies inside the image, read each row of the
//           window as aligned loads of VW elements (4, or 2 doubles: 16 bytes; 8 bytes of 16-bit
//           elements) and write each row's outputs VW at a time (rows start aligned to that);
//           2: (16-bit types, OX=8) the same with VW = 8, 16-byte accesses
//
// Without a tile (TILE=0), two paths: tiles whose window lies inside the image read it with no
// clamping (VLOAD: as vector loads); tiles at the border, through column offsets clamped once per
// thread and a row clamped once per row. The compiler unrolls a copy of the whole kernel for each
// path, so each path more costs compile time: with a third (VLOAD's scalar fallback) and the
// border mode tested at run time rather than compiled in (ZERO), the R=3 kernel with OX=4 OY=4
// VLOAD=1 was 1.5x larger. With a tile (TILE=1), one path: the copy into shared memory reads
// each input through load (clamped, or 0 outside the image with ZERO), and the sums read shared
// memory alone.
//
// Every variant adds the (2R+1)^2 products of an output in the same order (mask row by row, left
// to right, fused multiply-adds starting from 0), so every variant gives the same bits.
#include "pm_common.cuh"
#ifndef R
#define R 1
#endif
#ifndef ZERO
#define ZERO 0
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
#if VLOAD && (TILE || OX % (VLOAD == 2 ? 8 : 4))
#error VLOAD needs TILE=0 and OX a multiple of 4 (VLOAD=2: of 8)
#endif

#define K (2 * R + 1)
#define TW (BX * OX)       // tile width, outputs
#define TH (BY * OY)       // tile height, outputs
#define SW (TW + 2 * R + PAD) // shared row stride, words

// w_t: the weights' and the sums' type; val(x): an element as a w_t (exact); out_of(s): a sum
// rounded once to elem_t; mad(a, b, c): a * b + c rounded once.
#if PM_DTYPE == PM_F64
typedef double w_t;
__device__ __forceinline__ double mad(double a, double b, double c) { return fma(a, b, c); }
#else
typedef float w_t;
__device__ __forceinline__ float mad(float a, float b, float c) { return fmaf(a, b, c); }
#endif
#if PM_DTYPE == PM_F16 || PM_DTYPE == PM_BF16
__device__ __forceinline__ w_t val(elem_t x) { return to_float(x); }
__device__ __forceinline__ elem_t out_of(w_t s) { return from_float(s); }
#else
__device__ __forceinline__ w_t val(elem_t x) { return x; }
__device__ __forceinline__ elem_t out_of(w_t s) { return s; }
#endif

// VLOAD's chunk: VW elements in one access (chunk_t), its lanes as w_t, and VW sums as one.
#define VW (sizeof(elem_t) == 8 ? 2 : VLOAD == 2 ? 8 : 4)
typedef evec_of<VW>::t chunk_t;
#if PM_DTYPE == PM_F32
__device__ __forceinline__ w_t lane(const float4 &t, int i) {
  return i == 0 ? t.x : i == 1 ? t.y : i == 2 ? t.z : t.w;
}
__device__ __forceinline__ chunk_t chunk_of(const w_t *a) { return make_float4(a[0], a[1], a[2], a[3]); }
#else
__device__ __forceinline__ w_t lane(const chunk_t &t, int i) { return val(t.e[i]); }
__device__ __forceinline__ chunk_t chunk_of(const w_t *a) {
  chunk_t t;
#pragma unroll
  for (int i = 0; i < VW; i++) t.e[i] = out_of(a[i]);
  return t;
}
#endif

// The weights travel as a kernel parameter, which the GPU keeps in constant memory (read through
// the constant cache, broadcast to the warp, as the seed's __constant__ array): unlike a module's
// __constant__ symbol, calls with different weights on different streams cannot race.
struct pm_mask_t {
  w_t w[K * K];
};

// Input (y, x), clamped to the image (ZERO: 0 outside it).
__device__ __forceinline__ w_t load(const elem_t *__restrict__ in, size_t pitch, int y, int x,
                                    int rows, int cols) {
  if (ZERO && (x < 0 || x >= cols || y < 0 || y >= rows)) return (w_t)0;
  x = min(max(x, 0), cols - 1);
  y = min(max(y, 0), rows - 1);
  return val(*(const elem_t *)((const char *)in + (size_t)y * pitch + (size_t)x * sizeof(elem_t)));
}

extern "C" __global__ void __launch_bounds__(BX * BY)
pm_filter(elem_t *__restrict__ out, size_t pitch_out, const elem_t *__restrict__ in,
          size_t pitch_in, int rows, int cols, const __grid_constant__ pm_mask_t mask) {
  wait_prior();
  const int tiles_x = (cols + TW - 1) / TW;
  const int x0 = (int)(blockIdx.x % tiles_x) * TW, y0 = (int)(blockIdx.x / tiles_x) * TH;
  if (y0 >= rows) return;
  const int ox = x0 + threadIdx.x * OX, oy = y0 + threadIdx.y * OY; // this thread's first output
#if VLOAD
  // Whether the tile's window lies inside the image. ox is a multiple of VW: the window
  // [ox - R, ox + OX + R) lies in the NV chunks from ox - S, S the multiple of VW from R up.
  enum { S = (R + VW - 1) / VW * VW, NV = (S + OX + R + VW - 1) / VW };
  const bool inside = x0 >= S && y0 >= R && x0 + TW - OX - S + NV * VW <= cols && y0 + TH + R <= rows;
#else
  const bool inside = x0 >= R && y0 >= R && x0 + TW + R <= cols && y0 + TH + R <= rows;
#endif

#if TILE
  __shared__ w_t s[(TH + 2 * R) * SW];
  for (int ly = threadIdx.y; ly < TH + 2 * R; ly += BY)
    for (int lx = threadIdx.x; lx < TW + 2 * R; lx += BX)
      s[ly * SW + lx] = load(in, pitch_in, y0 + ly - R, x0 + lx - R, rows, cols);
  __syncthreads();
#else
  // The border path's column offsets in bytes, clamped (ZERO: bit i of xout set where column i
  // lies outside the image)
  unsigned xs[OX + 2 * R], xout = 0;
#pragma unroll
  for (int i = 0; i < OX + 2 * R; i++) {
    const int x = ox + i - R;
    xs[i] = (unsigned)min(max(x, 0), cols - 1) * (unsigned)sizeof(elem_t);
    if (ZERO) xout |= (unsigned)(x < 0 || x >= cols) << i;
  }
#endif

  w_t acc[OY][OX];
#pragma unroll
  for (int j = 0; j < OY; j++)
#pragma unroll
    for (int i = 0; i < OX; i++) acc[j][i] = 0;

#pragma unroll
  for (int j = 0; j < OY + 2 * R; j++) { // input rows of this thread's window, top to bottom
    w_t row[OX + 2 * R];
#if TILE
#pragma unroll
    for (int i = 0; i < OX + 2 * R; i++) row[i] = s[(threadIdx.y * OY + j) * SW + threadIdx.x * OX + i];
#else
    const int y = oy + j - R;
    if (inside) {
      const char *p = (const char *)in + (size_t)y * pitch_in;
#if VLOAD
      const chunk_t *pv = (const chunk_t *)(p + (size_t)(ox - S) * sizeof(elem_t));
      w_t v[VW * NV];
#pragma unroll
      for (int q = 0; q < NV; q++) {
        const chunk_t t = pv[q];
#pragma unroll
        for (int l = 0; l < VW; l++) v[VW * q + l] = lane(t, l);
      }
#pragma unroll
      for (int i = 0; i < OX + 2 * R; i++) row[i] = v[i + S - R];
#else
#pragma unroll
      for (int i = 0; i < OX + 2 * R; i++) row[i] = val(((const elem_t *)p)[ox + i - R]);
#endif
    } else {
      const bool yout = y < 0 || y >= rows;
      const char *p = (const char *)in + (size_t)min(max(y, 0), rows - 1) * pitch_in;
#pragma unroll
      for (int i = 0; i < OX + 2 * R; i++) {
        const w_t t = val(*(const elem_t *)(p + xs[i]));
        row[i] = ZERO && (yout || (xout >> i & 1)) ? (w_t)0 : t;
      }
    }
#endif
#pragma unroll
    for (int fy = K - 1; fy >= 0; fy--) { // mask row fy meets input row j in output row j - fy
      const int o = j - fy;
      if (o >= 0 && o < OY) {
#pragma unroll
        for (int i = 0; i < OX; i++)
#pragma unroll
          for (int fx = 0; fx < K; fx++) acc[o][i] = mad(mask.w[fy * K + fx], row[i + fx], acc[o][i]);
      }
    }
  }

#if VLOAD
  if (inside) { // every output of the thread lies in the image, each row's VW at a time
#pragma unroll
    for (int j = 0; j < OY; j++)
#pragma unroll
      for (int i = 0; i < OX; i += VW)
        *(chunk_t *)((char *)out + (size_t)(oy + j) * pitch_out + (size_t)(ox + i) * sizeof(elem_t)) =
            chunk_of(&acc[j][i]);
    return;
  }
#endif
#pragma unroll
  for (int j = 0; j < OY; j++)
#pragma unroll
    for (int i = 0; i < OX; i++)
      if (oy + j < rows && ox + i < cols)
        *(elem_t *)((char *)out + (size_t)(oy + j) * pitch_out + (size_t)(ox + i) * sizeof(elem_t)) =
            out_of(acc[j][i]);
}

// matadd.cu: C = A + B over a rows x cols matrix of elem_t (pm_common.cuh: float, half, bfloat16
// or double, from -DPM_DTYPE), each matrix with its own pitch in bytes, stored row-major or
// column-major. Compiled by NVRTC with one point of tuner/op_matadd.c as -D.
//
// Generalises the seed's kernel_matadd (../shared/seeds/000): with BX=32 BY=32 VEC=1 EPT=1 GRID=0
// MAP=0 it is that kernel (one element per thread, threadIdx.x along the columns).
//
//   BX, BY  block shape
//   VEC     elements per access along the contiguous dimension (1, 2, 4, 8: at most 16 bytes)
//   EPT     accesses per thread, BY lines apart along the block's y dimension (loads first: ILP)
//   GRID    0: one tile per block; 1: grid-stride over tiles (grid sized by the host)
//   MAP     0: threadIdx.x runs along the columns; 1: along the rows. Which of these is the
//           contiguous (coalesced) one depends on the storage order, a run-time argument.
#include "pm_common.cuh"
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 32
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef EPT
#define EPT 1
#endif
#ifndef GRID
#define GRID 0
#endif
#ifndef MAP
#define MAP 0
#endif

typedef evec_of<VEC>::t vec_t;

// A line is a row (row-major) or a column (column-major): `inner` contiguous elements, `pitch`
// bytes from one line to the next. Vector v of line l starts at byte l * pitch + v * VEC * size.
extern "C" __global__ void __launch_bounds__(BX * BY)
pm_matadd(elem_t *__restrict__ c, size_t pitch_c, const elem_t *__restrict__ a, size_t pitch_a,
          const elem_t *__restrict__ b, size_t pitch_b, unsigned rows, unsigned cols,
          int colmajor) {
  wait_prior();
  const unsigned inner = colmajor ? rows : cols, outer = colmajor ? cols : rows;
  const unsigned nvec = (inner + VEC - 1) / VEC; // vectors per line; the last may be partial
  const bool x_inner = (MAP == 0) == (colmajor == 0);
  const unsigned nx = x_inner ? nvec : outer, ny = x_inner ? outer : nvec;
  const unsigned tiles_x = (nx + BX - 1) / BX;
  const unsigned long long tiles = (unsigned long long)tiles_x * ((ny + BY * EPT - 1) / (BY * EPT));
#if GRID
  for (unsigned long long t = blockIdx.x; t < tiles; t += gridDim.x) {
#else
  {
    const unsigned long long t = blockIdx.x;
    if (t >= tiles) return;
#endif
    const unsigned x = (unsigned)(t % tiles_x) * BX + threadIdx.x;
    const unsigned y0 = (unsigned)(t / tiles_x) * (BY * EPT) + threadIdx.y;
    if (x < nx) {
      vec_t va[EPT], vb[EPT];
      size_t off_c[EPT];
      bool full[EPT];
      // The partial vector at the end of a line (fewer than VEC elements), by the thread whose
      // vector it is: its elements are loaded beside the whole vectors, not one after another,
      // so that thread takes no longer than the others.
      elem_t ta[EPT][VEC], tb[EPT][VEC];
      unsigned tail[EPT]; // elements in the partial vector (0: none)
#pragma unroll
      for (int k = 0; k < EPT; k++) {
        const unsigned y = y0 + k * BY;
        const unsigned v = x_inner ? x : y, line = x_inner ? y : x;
        full[k] = y < ny && (v + 1) * VEC <= inner;
        tail[k] = y < ny && !full[k] ? inner - v * VEC : 0;
        const size_t col = (size_t)v * VEC * sizeof(elem_t);
        off_c[k] = line * pitch_c + col;
        if (full[k]) {
          va[k] = *(const vec_t *)((const char *)a + line * pitch_a + col);
          vb[k] = *(const vec_t *)((const char *)b + line * pitch_b + col);
        }
#pragma unroll
        for (int e = 0; e < VEC - 1; e++)
          if ((unsigned)e < tail[k]) {
            ta[k][e] = ((const elem_t *)((const char *)a + line * pitch_a + col))[e];
            tb[k][e] = ((const elem_t *)((const char *)b + line * pitch_b + col))[e];
          }
      }
#pragma unroll
      for (int k = 0; k < EPT; k++)
#pragma unroll
        for (int e = 0; e < VEC - 1; e++)
          if ((unsigned)e < tail[k]) ((elem_t *)((char *)c + off_c[k]))[e] = add(ta[k][e], tb[k][e]);
#pragma unroll
      for (int k = 0; k < EPT; k++)
        if (full[k]) *(vec_t *)((char *)c + off_c[k]) = add(va[k], vb[k]);
    }
  }
}

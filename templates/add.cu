// add.cu: C[i] = A[i] + B[i] over n elements of elem_t (pm_common.cuh: float, half, bfloat16 or
// double, from -DPM_DTYPE; 1 <= n <= 2^31 - 1), one flat vector: pm_add, and pm_matadd where its
// three matrices are packed (runtime/api.c). Compiled by NVRTC with one point of tuner/op_add.c
// as -D.
//
// With BLOCK=256 VEC=1 ITEMS=1 GRID=0 (the seed) it is the textbook add: one element per thread,
// one tile per block.
//
//   BLOCK  threads per block
//   VEC    elements per access (1, 2, 4, 8: at most 16 bytes). The host allows a width only where
//          all three pointers are aligned to it; the n % VEC elements after the last whole vector
//          are added one at a time, by the first threads of block 0
//   ITEMS  accesses per thread per tile, BLOCK vectors apart (all loads first, then the stores)
//   GRID   0: one tile (BLOCK x ITEMS vectors) per block; 1: grid-stride over tiles, the grid
//          one wave (sized by the host)
//
// C may be A or B (an add in place): no pointer is __restrict__, and each element is read and then
// written by one thread only, so a read never sees another thread's write. Indices are size_t:
// n < 2^31, and a grid-stride index never wraps.
#include "pm_common.cuh"
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef GRID
#define GRID 0
#endif

typedef evec_of<VEC>::t vec_t;

extern "C" __global__ void __launch_bounds__(BLOCK)
pm_add(elem_t *c, const elem_t *a, const elem_t *b, unsigned n) {
  wait_prior();
  const size_t nvec = n / VEC, tile = (size_t)BLOCK * ITEMS;
  const vec_t *va = (const vec_t *)a, *vb = (const vec_t *)b;
  vec_t *vc = (vec_t *)c;
  // the elements after the last whole vector (fewer than VEC), by block 0's first threads: loaded
  // before their tile's, so that their wait overlaps the tile's and is not one more after it
  const bool has_tail = VEC > 1 && blockIdx.x == 0 && threadIdx.x < n - nvec * VEC;
  const size_t t = nvec * VEC + threadIdx.x;
  elem_t ta = elem_t(), tb = elem_t();
  if (has_tail) ta = a[t], tb = b[t];
#if GRID
  for (size_t base = blockIdx.x * tile; base < nvec; base += gridDim.x * tile) {
#else
  {
    const size_t base = blockIdx.x * tile;
#endif
    const size_t i = base + threadIdx.x;
    vec_t x[ITEMS], y[ITEMS];
    if (base + tile <= nvec) { // a whole tile: no bounds to check
#pragma unroll
      for (int k = 0; k < ITEMS; k++) {
        x[k] = va[i + k * BLOCK];
        y[k] = vb[i + k * BLOCK];
      }
#pragma unroll
      for (int k = 0; k < ITEMS; k++) vc[i + k * BLOCK] = add(x[k], y[k]);
    } else { // the last, partial tile (or none, where n < VEC)
#pragma unroll
      for (int k = 0; k < ITEMS; k++)
        if (i + k * BLOCK < nvec) {
          x[k] = va[i + k * BLOCK];
          y[k] = vb[i + k * BLOCK];
        }
#pragma unroll
      for (int k = 0; k < ITEMS; k++)
        if (i + k * BLOCK < nvec) vc[i + k * BLOCK] = add(x[k], y[k]);
    }
  }
  if (has_tail) c[t] = add(ta, tb);
}

// reduce.cu: the sum of n floats (1 <= n < 2^31) into one float in device memory. Compiled by NVRTC
// with one point of tuner/space_reduce.c as -D.
//
// Generalises the seed's partial_sum_kernel (../shared/seeds/002): with BLOCK=256 ITEMS=2 VEC=1
// STEP=0 COMBINE=2 ACC=0 and one tile per block it is that kernel (two loads per thread, a
// shared-memory tree, one partial per block), followed by a second pass over the partials.
//
//   BLOCK    threads per block
//   ITEMS    accesses per thread per step of the grid-stride loop, BLOCK apart (loads first: ILP)
//   VEC      floats per access (1, 2, 4: 4 is a 16-byte access)
//   STEP     block-level step: 0 shared-memory tree, 1 the same with one word of padding every
//            32 (against bank conflicts), 2 warp shuffles then one shared-memory step
//   COMBINE  0 single launch, the last block to finish sums the partials in order (deterministic)
//            1 single launch, blocks add their partial atomically (NOT deterministic)
//            2 two launches: pm_reduce writes partials, pm_reduce_final sums them (deterministic)
//            3 single launch, the last block (by index) waits for the others' flagged partials
//              and sums them in order (deterministic; no fence, no atomic; ACC 0 only)
//   ACC      0 accumulate in float, 1 in double
//
// The grid size is the host's choice (one tile per block, or a multiple of the SM count); the
// order of the additions depends only on n, the grid size and these defines, so a deterministic
// variant gives the same bits on every run with the same configuration.
#include "pm_common.cuh"
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 2
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef STEP
#define STEP 0
#endif
#ifndef COMBINE
#define COMBINE 2
#endif
#ifndef ACC
#define ACC 0
#endif

#if ACC
typedef double acc_t;
#else
typedef float acc_t;
#endif

typedef vec_of<VEC>::t vec_t;

// A load of data read once: not kept in L1 (ld.global.nc.L1::no_allocate). At n = 2^20 on an H100
// the one-launch sum took 5.26 us with it and 5.61 us with the plain read-only load
// (bench/experiments, section 5).
__device__ __forceinline__ float ld_once(const float *p) {
  float r;
  asm("ld.global.nc.L1::no_allocate.f32 %0, [%1];" : "=f"(r) : "l"(p));
  return r;
}
__device__ __forceinline__ float2 ld_once(const float2 *p) {
  float2 r;
  asm("ld.global.nc.L1::no_allocate.v2.f32 {%0, %1}, [%2];" : "=f"(r.x), "=f"(r.y) : "l"(p));
  return r;
}
__device__ __forceinline__ float4 ld_once(const float4 *p) {
  float4 r;
  asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
      : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
      : "l"(p));
  return r;
}

// The sum of a vector's lanes, pairwise.
__device__ __forceinline__ acc_t lanes(float v) { return v; }
__device__ __forceinline__ acc_t lanes(float2 v) { return (acc_t)v.x + (acc_t)v.y; }
__device__ __forceinline__ acc_t lanes(float4 v) {
  return ((acc_t)v.x + (acc_t)v.y) + ((acc_t)v.z + (acc_t)v.w);
}

#define PADDED(i) (STEP == 1 ? (i) + (i) / 32 : (i))
#define SMEM_WORDS (STEP == 1 ? BLOCK + BLOCK / 32 : BLOCK)

// The sum of v over the block, in a fixed order; valid in thread 0.
__device__ __forceinline__ acc_t block_sum(acc_t v) {
#if STEP == 2
  __shared__ acc_t warp_sums[BLOCK / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (BLOCK > 32) {
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
      v = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : (acc_t)0;
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    }
  }
  return v;
#else
  __shared__ acc_t s[SMEM_WORDS];
  s[PADDED(threadIdx.x)] = v;
  __syncthreads();
#pragma unroll
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[PADDED(threadIdx.x)] += s[PADDED(threadIdx.x + stride)];
    __syncthreads();
  }
  return s[0];
#endif
}

// This thread's share of in[first, first + count), as whole vectors from a 16-byte aligned base.
__device__ __forceinline__ acc_t thread_sum(const float *__restrict__ in, unsigned n) {
  const vec_t *vin = (const vec_t *)in;
  const unsigned nvec = n / VEC;
  const unsigned stride = gridDim.x * (BLOCK * ITEMS);
  acc_t acc[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; k++) acc[k] = 0;
  // the floats after the last whole vector: one each for the first threads of the grid, loaded
  // first (added last), so that its wait overlaps the others' and is not one more after the loop
  const unsigned g = blockIdx.x * BLOCK + threadIdx.x, tail = nvec * VEC + g;
  const float t = VEC > 1 && tail < n ? ld_once(&in[tail]) : 0.0f;
  // Whole tiles while the block's whole tile is in bounds: a test all its threads share. (Each
  // thread testing its own last load split a warp at the tile that ends the vector, some threads
  // taking a whole step, the others the partial one; the warp ran the two one after the other
  // and waited for memory twice: at n = 2,090, 512 threads x 2 items took 2.21 us, 256 x 4
  // 1.88.) Every thread loads the same vectors in the same order as it did, so the sums are
  // bit for bit the same.
  unsigned base = blockIdx.x * (BLOCK * ITEMS);
  for (; base + BLOCK * ITEMS <= nvec; base += stride) {
    vec_t v[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) v[k] = ld_once(&vin[base + threadIdx.x + k * BLOCK]);
#pragma unroll
    for (int k = 0; k < ITEMS; k++) acc[k] += lanes(v[k]);
  }
  const unsigned i = base + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) // the last, partial tile
    if (i + k * BLOCK < nvec) acc[k] += lanes(ld_once(&vin[i + k * BLOCK]));
  if (VEC > 1 && tail < n) acc[0] += t;
#pragma unroll
  for (int w = 1; w < ITEMS; w <<= 1) // pairwise
#pragma unroll
    for (int k = 0; k + w < ITEMS; k += 2 * w) acc[k] += acc[k + w];
  return acc[0];
}

// Sums partials[0, count) in a fixed order with one block; valid in thread 0.
__device__ __forceinline__ acc_t sum_partials(const acc_t *partials, unsigned count) {
  acc_t v = 0;
  for (unsigned i = threadIdx.x; i < count; i += BLOCK) v += __ldcg(&partials[i]); // L2: other blocks wrote them
  return block_sum(v);
}

#if COMBINE == 3
// A flagged partial: the float's bits, and 1 in the high word (0: not written yet). One 64-bit
// store writes both, so a reader that sees the flag sees the value: no fence is needed.
__device__ __forceinline__ void flag_store(unsigned long long *p, float v) {
  const unsigned long long w = (1ull << 32) | __float_as_uint(v);
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
__device__ __forceinline__ unsigned long long flag_load(const unsigned long long *p) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
}
#endif

// partials: gridDim.x values (COMBINE 0 and 2), or one (COMBINE 1), zero before the first launch;
// counter: one unsigned, zero before the first launch. The kernel leaves both as it found them
// (COMBINE 0, 1, 3), so that the next launch needs no reset. For COMBINE 3, partials are its
// flagged slots (8 bytes each): the host places them apart from the other variants' partials
// (op_reduce.c), so that plain partials left by another variant sharing the scratch never read
// as flagged.
//
// COMBINE 3 waits inside the kernel: the last block spins until every other block has stored.
// That needs only that the other blocks make progress, which they do on any GPU that holds two
// blocks of this kernel at once (these use a few KB of shared memory and few registers), since
// only the last block ever waits.
extern "C" __global__ void __launch_bounds__(BLOCK)
pm_reduce(const float *__restrict__ in, unsigned n, float *out, acc_t *partials,
          unsigned *counter) {
  wait_prior();
  const acc_t v = block_sum(thread_sum(in, n));
#if COMBINE == 3
  unsigned long long *slots = (unsigned long long *)partials;
  const unsigned last = gridDim.x - 1;
  if (blockIdx.x != last) {
    if (threadIdx.x == 0) flag_store(&slots[blockIdx.x], (float)v);
    return;
  }
  __shared__ float mine;
  if (threadIdx.x == 0) mine = (float)v;
  __syncthreads();
  acc_t s = 0; // the same order as sum_partials: thread t adds slots t, t + BLOCK, ...
  for (unsigned i = threadIdx.x; i < gridDim.x; i += BLOCK) {
    float p;
    if (i == last) {
      p = mine;
    } else {
      unsigned long long w;
      while (((w = flag_load(&slots[i])) >> 32) == 0) {
      }
      slots[i] = 0; // leave the slot as found
      p = __uint_as_float((unsigned)w);
    }
    s += p;
  }
  s = block_sum(s);
  if (threadIdx.x == 0) *out = (float)s;
#elif COMBINE == 2
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
#else
  __shared__ bool last;
  if (threadIdx.x == 0) {
#if COMBINE == 1
    atomicAdd(&partials[0], v);
#else
    partials[blockIdx.x] = v;
#endif
    __threadfence();
    last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1; // wraps to 0 for the next launch
  }
  __syncthreads();
  if (last) {
    __threadfence();
#if COMBINE == 1
    if (threadIdx.x == 0) {
      *out = (float)*(volatile acc_t *)&partials[0];
      partials[0] = 0;
    }
#else
    const acc_t s = sum_partials((const acc_t *)partials, gridDim.x);
    if (threadIdx.x == 0) *out = (float)s;
#endif
  }
#endif
}

// The second pass of COMBINE 2: one block sums `count` partials.
extern "C" __global__ void __launch_bounds__(BLOCK)
pm_reduce_final(const acc_t *partials, unsigned count, float *out) {
  wait_prior();
  const acc_t s = sum_partials(partials, count);
  if (threadIdx.x == 0) *out = (float)s;
}

// reduce.cu: the sum of n elements (1 <= n < 2^31) of the type elem_t (pm_common.cuh: float,
// half, bfloat16 or double, from -DPM_DTYPE) into one value in device memory, written in the
// input's type or as a float (the kernels' last argument). Compiled by NVRTC with one point of
// tuner/op_reduce.c as -D.
//
// Generalises the seed's partial_sum_kernel (../shared/seeds/002): with BLOCK=256 ITEMS=2 VEC=1
// STEP=0 COMBINE=2 ACC=0 and one tile per block it sums as that kernel does (two loads per
// thread, a shared-memory tree, one partial per block), followed by a second pass over the
// partials.
//
//   BLOCK    threads per block
//   ITEMS    accesses per thread per step of the grid-stride loop, BLOCK apart (loads first: ILP)
//   VEC      elements per access (1, 2, 4, 8; at most 16 bytes: 4 floats, 8 halves, 2 doubles)
//   STEP     block-level step: 0 shared-memory tree, 1 the same with one word of padding every
//            32 (against bank conflicts), 2 warp shuffles then one shared-memory step
//   COMBINE  0 single launch, the last block to finish sums the partials in order (deterministic)
//            1 single launch, blocks add their partial atomically (NOT deterministic)
//            2 two launches: pm_reduce writes partials, pm_reduce_final sums them (deterministic)
//            3 single launch, the last block (by index) waits for the others' flagged partials
//              and sums them in order (deterministic; no fence, no atomic; float sums: ACC 0,
//              not f64)
//   ACC      0 accumulate in float (doubles: in double), 1 in double. Elements are converted
//            to the accumulator exactly (every half, bfloat16 and float is a float).
//
// A grid of one block writes its sum at once, whatever COMBINE says (and the host launches no
// second pass): at n = 4,096 bf16 on an H100, 1.65 us against 1.97 through the combine.
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

#if ACC || PM_DTYPE == PM_F64
typedef double acc_t;
#if COMBINE == 3
#error "flagged partials are floats: COMBINE=3 needs float sums"
#endif
#else
typedef float acc_t;
#endif

typedef evec_of<VEC>::t vec_t;

// A load of data read once: not kept in L1 (ld.global.nc.L1::no_allocate), of any type of 2, 4, 8
// or 16 bytes, through the unsigned words of its size. At n = 2^20 on an H100 the one-launch
// sum took 5.26 us with it and 5.61 us with the plain read-only load (bench/experiments, sec. 5).
__device__ __forceinline__ void ld_raw(const void *p, unsigned short &r) {
  asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(r) : "l"(p));
}
__device__ __forceinline__ void ld_raw(const void *p, unsigned &r) {
  asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(r) : "l"(p));
}
__device__ __forceinline__ void ld_raw(const void *p, uint2 &r) {
  asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
}
__device__ __forceinline__ void ld_raw(const void *p, uint4 &r) {
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
}
template <int B> struct raw_of;
template <> struct raw_of<2> { typedef unsigned short t; };
template <> struct raw_of<4> { typedef unsigned t; };
template <> struct raw_of<8> { typedef uint2 t; };
template <> struct raw_of<16> { typedef uint4 t; };
template <typename T> __device__ __forceinline__ T ld_once(const T *p) {
  union {
    typename raw_of<sizeof(T)>::t r;
    T v;
  } u;
  ld_raw(p, u.r);
  return u.v;
}

// An element as the accumulator's type (exact), and the sum of a vector's lanes, pairwise.
#if PM_DTYPE == PM_F16 || PM_DTYPE == PM_BF16
__device__ __forceinline__ acc_t val(elem_t x) { return (acc_t)to_float(x); }
#else
__device__ __forceinline__ acc_t val(elem_t x) { return (acc_t)x; }
#endif
#if PM_DTYPE == PM_F32
__device__ __forceinline__ acc_t lanes(float v) { return v; }
__device__ __forceinline__ acc_t lanes(float2 v) { return (acc_t)v.x + (acc_t)v.y; }
__device__ __forceinline__ acc_t lanes(float4 v) {
  return ((acc_t)v.x + (acc_t)v.y) + ((acc_t)v.z + (acc_t)v.w);
}
#else
template <int V> __device__ __forceinline__ acc_t lanes(const elems<V> &v) {
  acc_t a[V];
#pragma unroll
  for (int i = 0; i < V; i++) a[i] = val(v.e[i]);
#pragma unroll
  for (int w = 1; w < V; w <<= 1)
#pragma unroll
    for (int k = 0; k + w < V; k += 2 * w) a[k] += a[k + w];
  return a[0];
}
#endif

// Writes the sum s to out: as a float where as_float is set, else in the input's type, rounded
// once (a double sum to a 16-bit type: to float rounding to odd, then to the type to nearest,
// which is the sum rounded to nearest once, float having more than p + 2 bits).
__device__ __forceinline__ void put_sum(void *out, acc_t s, unsigned as_float) {
#if PM_DTYPE == PM_F16 || PM_DTYPE == PM_BF16
  if (!as_float) {
    float f = (float)s;
#if ACC // round to odd
    f = __double2float_rz(s);
    if ((double)f != s && isfinite(s)) f = __uint_as_float(__float_as_uint(f) | 1u);
#endif
    *(elem_t *)out = from_float(f);
    return;
  }
#elif PM_DTYPE == PM_F64
  if (!as_float) {
    *(double *)out = s;
    return;
  }
#endif
  (void)as_float;
  *(float *)out = (float)s;
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
__device__ __forceinline__ acc_t thread_sum(const elem_t *__restrict__ in, unsigned n) {
  const vec_t *vin = (const vec_t *)in;
  const unsigned nvec = n / VEC;
  const unsigned stride = gridDim.x * (BLOCK * ITEMS);
  acc_t acc[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; k++) acc[k] = 0;
  // the elements after the last whole vector: one each for the first threads of the grid, loaded
  // first (added last), so that its wait overlaps the others' and is not one more after the loop
  const unsigned g = blockIdx.x * BLOCK + threadIdx.x, tail = nvec * VEC + g;
  const acc_t t = VEC > 1 && tail < n ? val(ld_once(&in[tail])) : (acc_t)0;
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

// Before it waits for the kernel before it (wait_prior), a block asks L2 for the lines of its
// first tile (prefetch.global.L2, one thread a 128-byte line). A prefetch is a hint: it moves no
// data into registers, and L2 is where every SM's reads and writes meet, so a line fetched before
// the kernel before this one writes it reads as written. At n = 4,096 bf16 on an H100 a call
// took 1.60 us with it and 1.65 without (bench/experiments/README.md, section 7).
__device__ __forceinline__ void before_wait(const elem_t *in, unsigned n) {
  const vec_t *vin = (const vec_t *)in;
  const unsigned nvec = n / VEC, i = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    const vec_t *p = &vin[i + k * BLOCK];
    if (i + k * BLOCK < nvec && (threadIdx.x == 0 || ((unsigned long long)p & 127) == 0))
      asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
  }
}

// After the wait, a grid of several blocks lets the kernel after it be placed (launch_dependents):
// that kernel, launched by pmtune to wait for this one, first runs wait_prior, which waits for this
// grid's end and writes; it is placed only once every block of this grid has run this line, so no
// block of this grid waits for room (COMBINE 3's last block waits for the others). Its prefetch
// then overlaps this grid's work: at n = 2^20 bf16 on an H100, 2.83 us against 3.17 (section 7).
// A grid of one block does not: it measured as fast or slower with it.
__device__ __forceinline__ void after_wait() {
#if __CUDA_ARCH__ >= 900
  if (gridDim.x > 1) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
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

// out: the sum, a float where as_float is set, else an elem_t.
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
pm_reduce(const elem_t *__restrict__ in, unsigned n, void *out, acc_t *partials,
          unsigned *counter, unsigned as_float) {
  before_wait(in, n);
  wait_prior();
  after_wait();
  const acc_t v = block_sum(thread_sum(in, n));
  if (gridDim.x == 1) { // one block: its sum is the sum (and COMBINE 2 launches no second pass)
    if (threadIdx.x == 0) put_sum(out, v, as_float);
    return;
  }
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
  if (threadIdx.x == 0) put_sum(out, s, as_float);
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
      put_sum(out, *(volatile acc_t *)&partials[0], as_float);
      partials[0] = 0;
    }
#else
    const acc_t s = sum_partials((const acc_t *)partials, gridDim.x);
    if (threadIdx.x == 0) put_sum(out, s, as_float);
#endif
  }
#endif
}

// The second pass of COMBINE 2: one block sums `count` partials.
extern "C" __global__ void __launch_bounds__(BLOCK)
pm_reduce_final(const acc_t *partials, unsigned count, void *out, unsigned as_float) {
  wait_prior();
  const acc_t s = sum_partials(partials, count);
  if (threadIdx.x == 0) put_sum(out, s, as_float);
}

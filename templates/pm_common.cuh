// pm_common.cuh: what every operation's template shares: vector types by width, the element type
// of the templates that take one (elem_t), and the launch contract (pm_waits_prior, wait_prior). NVRTC is handed this file as a header
// (core/nvrtc.c), and the hash of every template covers it (cmake/embed_files.cmake), so a
// change here makes every cached cubin and stored measurement of the templates stale.
#ifndef PM_COMMON_CUH
#define PM_COMMON_CUH

// vec_of<V>::t: V floats in one access (4: a 16-byte access).
template <int V> struct vec_of;
template <> struct vec_of<1> { typedef float t; };
template <> struct vec_of<2> { typedef float2 t; };
template <> struct vec_of<4> { typedef float4 t; };

// add(a, b): a + b lane by lane, for each vec_of type (matadd and add).
__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ float2 add(float2 a, float2 b) {
  return make_float2(a.x + b.x, a.y + b.y);
}
__device__ __forceinline__ float4 add(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// elem_t: the element type of a template that takes one (matadd, add), from -DPM_DTYPE, the
// value of pmtune.h's pm_dtype: 0 float (the default), 1 IEEE half, 2 bfloat16, 3 double. The
// 16-bit types are their bits (no header: NVRTC needs none), converted with the PTX cvt
// instructions; a sum of two is computed in float and rounded once to the type (to nearest,
// ties to even), which is the exactly rounded sum: float has at least 2p + 2 bits for p = 11
// and 8. evec_of<V>::t: V elements in one access (at most 16 bytes); for float, vec_of's.
#ifndef PM_DTYPE
#define PM_DTYPE 0
#endif
#if PM_DTYPE == 0
typedef float elem_t;
template <int V> struct evec_of { typedef typename vec_of<V>::t t; };
#else
#if PM_DTYPE == 1 || PM_DTYPE == 2
struct __align__(2) elem_t { unsigned short bits; };
#elif PM_DTYPE == 3
typedef double elem_t;
#else
#error "PM_DTYPE: 0 (float), 1 (half), 2 (bfloat16) or 3 (double)"
#endif
template <int V> struct __align__(sizeof(elem_t) * V) elems { elem_t e[V]; };
template <int V> struct evec_of { typedef elems<V> t; };
#endif
#if PM_DTYPE == 1
__device__ __forceinline__ float to_float(elem_t x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}
__device__ __forceinline__ elem_t from_float(float f) {
  elem_t x;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(x.bits) : "f"(f));
  return x;
}
#elif PM_DTYPE == 2
__device__ __forceinline__ float to_float(elem_t x) { return __uint_as_float((unsigned)x.bits << 16); }
__device__ __forceinline__ elem_t from_float(float f) {
  elem_t x;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(x.bits) : "f"(f));
  return x;
}
#endif
#if PM_DTYPE == 1 || PM_DTYPE == 2
__device__ __forceinline__ elem_t add(elem_t a, elem_t b) {
  return from_float(to_float(a) + to_float(b));
}
#elif PM_DTYPE == 3
__device__ __forceinline__ double add(double a, double b) { return a + b; }
#endif
#if PM_DTYPE != 0
template <int V> __device__ __forceinline__ elems<V> add(const elems<V> &a, const elems<V> &b) {
  elems<V> c;
#pragma unroll
  for (int i = 0; i < V; i++) c.e[i] = add(a.e[i], b.e[i]);
  return c;
}
#endif

// The launch contract. pmtune launches a cubin that defines pm_waits_prior with programmatic
// stream serialization (sm_90 and later; core/kernel.c): its grid may start while the kernel
// before it in the stream is still finishing. So every kernel of a template that includes this
// file first calls wait_prior(), which waits for that kernel to end and its writes to be
// visible (griddepcontrol.wait; at once when launched the ordinary way), before it touches
// memory; and lets the next kernel start only at its own end, as an ordinary launch does.
extern "C" __device__ int pm_waits_prior = 1;
__device__ __forceinline__ void wait_prior() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#endif // PM_COMMON_CUH

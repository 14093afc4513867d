// pm_common.cuh: what every operation's template shares: vector types by width, the element type
// (elem_t) and its conversions, and the launch contract (pm_waits_prior, wait_prior). NVRTC is
// handed this file as a header (core/nvrtc.c), and the hash of every template covers it
// (cmake/embed_files.cmake), so a change here makes every cached cubin and stored measurement of
// the templates stale.
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

// elem_t: the element type of every operation, from -DPM_DTYPE, a value of pmtune.h's pm_dtype,
// compared with the types' names that every compile is given (core/nvrtc.c, from PM_DTYPES):
// PM_F32 float (the default), PM_F16 IEEE half, PM_BF16 bfloat16, PM_F64 double. The 16-bit
// types are their bits (no header: NVRTC needs none), converted with the PTX cvt instructions
// (to_float, from_float); a sum of two is computed in float and rounded once to the type (to
// nearest, ties to even), which is the exactly rounded sum: float has at least 2p + 2 bits for
// p = 11 and 8. evec_of<V>::t: V elements in one access (at most 16 bytes); for float, vec_of's.
#if !defined(PM_F32) || !defined(PM_F16) || !defined(PM_BF16) || !defined(PM_F64)
#error "the type names PM_F32, PM_F16, PM_BF16 and PM_F64 are not defined (core/nvrtc.c gives them)"
#endif
#ifndef PM_DTYPE
#define PM_DTYPE PM_F32
#endif
#if PM_DTYPE == PM_F32
typedef float elem_t;
template <int V> struct evec_of { typedef typename vec_of<V>::t t; };
#else
#if PM_DTYPE == PM_F16 || PM_DTYPE == PM_BF16
struct __align__(2) elem_t { unsigned short bits; };
#elif PM_DTYPE == PM_F64
typedef double elem_t;
#else
#error "PM_DTYPE: PM_F32, PM_F16, PM_BF16 or PM_F64"
#endif
template <int V> struct __align__(sizeof(elem_t) * V) elems { elem_t e[V]; };
template <int V> struct evec_of { typedef elems<V> t; };
#endif
#if PM_DTYPE == PM_F16
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
#elif PM_DTYPE == PM_BF16
__device__ __forceinline__ float to_float(elem_t x) { return __uint_as_float((unsigned)x.bits << 16); }
__device__ __forceinline__ elem_t from_float(float f) {
  elem_t x;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(x.bits) : "f"(f));
  return x;
}
#endif
#if PM_DTYPE == PM_F16 || PM_DTYPE == PM_BF16
__device__ __forceinline__ elem_t add(elem_t a, elem_t b) {
  return from_float(to_float(a) + to_float(b));
}
#elif PM_DTYPE == PM_F64
__device__ __forceinline__ double add(double a, double b) { return a + b; }
#endif
#if PM_DTYPE != PM_F32
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
// file calls wait_prior(), which waits for that kernel to end and its writes to be visible
// (griddepcontrol.wait; at once when launched the ordinary way), before it reads or writes
// memory; only a hint that moves no data into the kernel may come first (reduce asks L2 for its
// first tile). A kernel lets the next one start at its own end, as an ordinary launch does,
// unless it says so earlier (griddepcontrol.launch_dependents, after its wait: reduce, where its
// grid has more than one block); the next kernel, launched to wait, still waits for this one's
// end and writes before it touches memory.
extern "C" __device__ int pm_waits_prior = 1;
__device__ __forceinline__ void wait_prior() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#endif // PM_COMMON_CUH

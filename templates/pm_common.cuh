// pm_common.cuh: what every operation's template shares: vector types by width, and the launch
// contract (pm_waits_prior, wait_prior). NVRTC is handed this file as a header
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

/* gpu.h: the bottom layer's part that needs the CUDA runtime's header: checking CUDA calls,
 * and loading and launching cubins. The database layer does not include it. */
#ifndef PM_GPU_H
#define PM_GPU_H

#include <cuda_runtime_api.h>

#include "core.h"

/* Records a failed CUDA runtime call: "file:line: call: cudaErrorX: text". Returns status. */
int pm__cuda_error(pm_ctx *c, int status, cudaError_t e, const char *call, const char *file,
                   int line);

/* Check macro: on failure, record the error on c, set rc and jump to the function's `fail`.
 * The fault hook may fail the call instead of making it (cudaErrorMemoryAllocation). */
#define PM__CUDA(c, call)                                                          \
  do {                                                                             \
    cudaError_t e_ = pm__fault(PM__FAULT_CUDA, PM__FAULT_SITE) ? cudaErrorMemoryAllocation \
                                                               : (call);          \
    if (e_ != cudaSuccess) {                                                       \
      rc = pm__cuda_error((c), PM_ECUDA, e_, #call, __FILE__, __LINE__);           \
      goto fail;                                                                   \
    }                                                                              \
  } while (0)

/* ---- Loading and launching (kernel.c) ------------------------------------------------------- */

#define PM__MAX_ENTRIES 2

/* A loaded cubin (a module, in CUDA's words) and the kernels found in it. */
typedef struct pm__module {
  cudaLibrary_t lib;
  cudaKernel_t fn[PM__MAX_ENTRIES];
  const char *entry[PM__MAX_ENTRIES]; /* static strings: the names asked for */
  int nentries;
  int waits_prior; /* the cubin defines pm_waits_prior: each of its kernels waits for the grid
                      before it (griddepcontrol.wait) before touching memory, so it may be
                      launched with programmatic stream serialization */
} pm__module;

/* Loads a cubin and finds the kernels named entries[0..n) in it (fn[i] is entries[i]); whether
 * it defines pm_waits_prior is read from its symbol table (no failing CUDA call). */
int pm__module_load(pm_ctx *c, const pm__cubin *cubin, const char *const *entries, int n,
                    pm__module *out);
void pm__module_unload(pm__module *k);

/* The address and size of a __device__ or __constant__ variable of the loaded cubin. */
int pm__module_global(pm_ctx *c, const pm__module *k, const char *name, void **dptr,
                      size_t *bytes);

/* Whether stream is being captured into a graph (*capturing) and, where it is not, its id (*id,
 * cudaStreamGetId's: unique for the life of the process). 0, or -1 where the driver cannot say.
 * Cheaper than the runtime's two calls (stream.c). Any thread. */
int pm__stream_state(struct CUstream_st *stream, int *capturing, unsigned long long *id);

/* Sets this thread's stream capture mode to relaxed (*saved: the mode it had) and back: between
 * the two, the thread may allocate and load modules while a graph is being captured, on its
 * stream or another's, without invalidating the capture (the CUDA programming guide's advice for
 * libraries). A failure is cleared and ignored: the mode is then left as it was. */
void pm__capture_relax(int *saved);
void pm__capture_restore(int saved);

/* Launches kernel fn[which] of k on c's device; args as for cudaLaunchKernel. Where k waits_prior
 * and the device has compute capability 9.0 or more, with programmatic stream serialization: the
 * grid may then be placed on the GPU while the kernel before it in the stream is finishing, which
 * saves about 1 us a launch on an H100 (bench/experiments, section 6). PM_ELAUNCH says why it
 * failed. The caller's current device is left as it was. */
int pm__module_launch(pm_ctx *c, const pm__module *k, int which, dim3 grid, dim3 block,
                      size_t smem, cudaStream_t stream, void **args);

#endif /* PM_GPU_H */

/* pm_internal.h: what the library's modules, the pmtune command and the tests share but users do not. */
#ifndef PM_INTERNAL_H
#define PM_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "pmtune.h"
#include "template.h"

/* ---- Errors (error.c) ----------------------------------------------------------------------- */

/* Records a failure on c (which may be NULL) and returns status. printf-style message. */
int pm__seterr(pm_ctx *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pm__vseterr(pm_ctx *c, int status, const char *fmt, va_list ap);

/* Records a failed CUDA runtime call: "file:line: call: cudaErrorX: text". Returns status. */
int pm__cuda_error(pm_ctx *c, int status, cudaError_t e, const char *call, const char *file,
                   int line);

/* Check macros: on failure, record the error on c, set rc and jump to the function's `fail`. */
#define PM__CUDA(c, call)                                                          \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                       \
      rc = pm__cuda_error((c), PM_ECUDA, e_, #call, __FILE__, __LINE__);           \
      goto fail;                                                                   \
    }                                                                              \
  } while (0)

#define PM__NVRTC(c, call)                                                         \
  do {                                                                             \
    nvrtcResult r_ = (call);                                                       \
    if (r_ != NVRTC_SUCCESS) {                                                     \
      rc = pm__seterr((c), PM_ECOMPILE, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
                      nvrtcGetErrorString(r_));                                    \
      goto fail;                                                                   \
    }                                                                              \
  } while (0)

/* ---- Devices and the context (device.c, context.c) ------------------------------------------ */

/* What pmtune needs to know of a device (device.c fills it). */
typedef struct pm__device_info {
  int index;
  char name[256];
  char uuid[48];            /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L shows it */
  int cc_major, cc_minor;   /* compute capability */
  char arch[16];            /* "sm_90": what NVRTC compiles for */
  int sm_count;
  size_t mem_bytes;
  int bus_width_bits;
  int mem_clock_khz;
  int l2_bytes;
  int max_threads_per_block;
  size_t smem_per_block_optin; /* the most shared memory a block can have, opted in */
  double peak_gbps;         /* 2 * memory clock * bus width: the datasheet's bandwidth */
} pm__device_info;


/* Number of CUDA devices; PM_ENODEV (with the driver's reason) where there are none. */
int pm__device_count(pm_ctx *c, int *n);
int pm__device_query(pm_ctx *c, int index, pm__device_info *out);

/* Makes c's device current on this thread; *prev receives the device that was. */
int pm__device_enter(pm_ctx *c, int *prev);
void pm__device_leave(int prev);

/* ---- Compiling (nvrtc.c) -------------------------------------------------------------------- */

typedef struct pm__cubin {
  void *data;        /* the cubin (heap) */
  size_t size;
  double compile_ms; /* wall time NVRTC took */
} pm__cubin;

/* Parses "sm_90" (or "sm_90a") into 90 and checks that this NVRTC can target it.
 * PM_EINVAL for a malformed name, PM_EUNSUPPORTED for one NVRTC does not know. */
int pm__arch_check(pm_ctx *c, const char *arch, int *sm);

/* "13.0": the NVRTC this library runs with. */
const char *pm__nvrtc_version(void);

/* Compiles CUDA source to a cubin for arch, with -D defines ("NAME" or "NAME=VALUE").
 * name is the file name NVRTC reports errors under. On a compile error: PM_ECOMPILE and the
 * whole log in pm_errmsg(c). Needs no GPU. */
int pm__compile(pm_ctx *c, const char *name, const char *source, const char *arch,
                const char *const *defines, size_t ndefines, pm__cubin *out);
void pm__cubin_free(pm__cubin *b);

/* ---- Loading and launching (kernel.c) ------------------------------------------------------- */

#define PM__MAX_ENTRIES 2

/* A loaded cubin and the kernels found in it. */
typedef struct pm__kernel {
  cudaLibrary_t lib;
  cudaKernel_t fn[PM__MAX_ENTRIES];
  const char *entry[PM__MAX_ENTRIES]; /* static strings: the names asked for */
  int nentries;
  int waits_prior; /* the cubin defines pm_waits_prior: each of its kernels waits for the grid
                      before it (griddepcontrol.wait) before touching memory, so it may be
                      launched with programmatic stream serialization */
} pm__kernel;

/* Loads a cubin and finds the kernels named entries[0..n) in it (fn[i] is entries[i]). */
int pm__kernel_load(pm_ctx *c, const void *cubin, const char *const *entries, int n,
                    pm__kernel *out);
void pm__kernel_unload(pm__kernel *k);

/* The address and size of a __device__ or __constant__ variable of the loaded cubin. */
int pm__kernel_global(pm_ctx *c, const pm__kernel *k, const char *name, void **dptr,
                      size_t *bytes);

/* Launches kernel fn[which] of k on c's device; args as for cudaLaunchKernel. Where k waits_prior
 * and the device has compute capability 9.0 or more, with programmatic stream serialization: the
 * grid may then be placed on the GPU while the kernel before it in the stream is finishing, which
 * saves about 1 us a launch on an H100 (bench/experiments, section 6). PM_ELAUNCH says
 * why it failed. The caller's current device is left as it was. */
int pm__kernel_launch(pm_ctx *c, const pm__kernel *k, int which, dim3 grid, dim3 block,
                      size_t smem, cudaStream_t stream, void **args);

struct pm_ctx {
  int device;               /* CUDA ordinal, or PM_DEVICE_NONE */
  pm__device_info dev;      /* valid when device >= 0 */
  int status;               /* of the last failure */
  char *errmsg;             /* its full message (heap), or NULL */
  pthread_mutex_t lock;     /* guards status, errmsg and the lazily loaded utility kernels */
  pm__kernel util;          /* templates/util.cu for this device, once loaded (the tuner's) */
  unsigned long long *util_result; /* pm_compare's device result buffer (2 words) */
  char *db_path;            /* pm_options.db_path (heap), or NULL for the default */
  int autotune, autotune_budget; /* pm_options and PMTUNE_AUTOTUNE */
  int log;                  /* PMTUNE_LOG is set: notices go to stderr too */
  char *notice;             /* the first fallback and why (heap), or NULL */
  struct pm__serve *serve;  /* serving state (serve.c), for contexts with a device */
};

/* Serving (serve.c): state made at pm_open, freed at pm_close. */
int pm__serve_init(pm_ctx *c);
void pm__serve_free(pm_ctx *c);
/* Records the context's first fallback (printf-style); later ones are not kept. */
void pm__notice(pm_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- Small helpers -------------------------------------------------------------------------- */

double pm__now_ms(void); /* a monotonic clock, in milliseconds */

#endif /* PM_INTERNAL_H */

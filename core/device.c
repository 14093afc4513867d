/* device.c: finding CUDA devices and what pmtune needs to know of each. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

int pm__device_count(pm_ctx *c, int *n) {
  *n = 0;
  cudaError_t e = pm__fault(PM__FAULT_CUDA, PM__FAULT_SITE) ? cudaErrorUnknown : cudaGetDeviceCount(n);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary ||
      e == cudaErrorInitializationError || e == cudaErrorCompatNotSupportedOnDevice) {
    /* cudaErrorStubLibrary: the toolkit's stubs/libcuda.so was found before a driver */
    *n = 0;
    cudaGetLastError(); /* clear it, so that later calls do not see it */
    return pm__seterr(c, PM_ENODEV, "no CUDA device: %s (%s)", cudaGetErrorString(e),
                      cudaGetErrorName(e));
  }
  if (e != cudaSuccess)
    return pm__cuda_error(c, PM_ECUDA, e, "cudaGetDeviceCount", __FILE__, __LINE__);
  if (*n == 0) return pm__seterr(c, PM_ENODEV, "no CUDA device: the driver reports none");
  return PM_OK;
}

static void format_uuid(const unsigned char *b, char *out, size_t len) {
  snprintf(out, len,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
}

int pm__device_query(pm_ctx *c, int index, pm__device_info *out) {
  int rc = PM_OK, clock_khz = 0;
  struct cudaDeviceProp p;
  memset(out, 0, sizeof *out);
  PM__CUDA(c, cudaGetDeviceProperties(&p, index));
  PM__CUDA(c, cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, index));
  out->index = index;
  snprintf(out->name, sizeof out->name, "%s", p.name);
  format_uuid((const unsigned char *)p.uuid.bytes, out->uuid, sizeof out->uuid);
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  snprintf(out->arch, sizeof out->arch, "sm_%d%d", p.major, p.minor);
  out->sm_count = p.multiProcessorCount;
  out->mem_bytes = p.totalGlobalMem;
  out->bus_width_bits = p.memoryBusWidth;
  out->mem_clock_khz = clock_khz;
  out->l2_bytes = p.l2CacheSize;
  out->max_threads_per_block = p.maxThreadsPerBlock;
  out->smem_per_block_optin = p.sharedMemPerBlockOptin;
  out->peak_gbps = 2.0 * clock_khz * 1e3 * (p.memoryBusWidth / 8.0) / 1e9;
fail:
  return rc;
}

int pm__device_enter(pm_ctx *c, int *prev) {
  int rc = PM_OK, cur;
  *prev = -1;
  if (c->device < 0) return pm__seterr(c, PM_ENODEV, "this context was opened without a device");
  PM__CUDA(c, cudaGetDevice(&cur));
  if (cur != c->device) {
    PM__CUDA(c, cudaSetDevice(c->device));
    *prev = cur;
  }
fail:
  return rc;
}

void pm__device_leave(int prev) {
  if (prev >= 0) cudaSetDevice(prev);
}

void pm__cuda_versions(int *driver, int *runtime) {
  if (driver != NULL && cudaDriverGetVersion(driver) != cudaSuccess) *driver = 0;
  if (runtime != NULL && cudaRuntimeGetVersion(runtime) != cudaSuccess) *runtime = 0;
  cudaGetLastError();
}

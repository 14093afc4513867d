/* kernel.c: cubin -> cudaLibraryLoadData -> cudaLibraryGetKernel -> cudaLaunchKernel. */
#include <stdio.h>
#include <string.h>

#include "pm_internal.h"

int pm__kernel_load(pm_ctx *c, const void *cubin, const char *entry, pm__kernel *out) {
  int rc = PM_OK;
  memset(out, 0, sizeof *out);
  if (cubin == NULL || entry == NULL)
    return pm__seterr(c, PM_EINVAL, "kernel load: no cubin or no entry point");
  if (strlen(entry) >= sizeof out->entry)
    return pm__seterr(c, PM_EINVAL, "kernel load: entry point name too long");
  PM__CUDA(c, cudaLibraryLoadData(&out->lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
  cudaError_t e = cudaLibraryGetKernel(&out->fn, out->lib, entry);
  if (e != cudaSuccess) {
    rc = pm__seterr(c, PM_ENOTFOUND, "kernel load: no kernel '%s' in the cubin: %s", entry,
                    cudaGetErrorString(e));
    goto fail;
  }
  snprintf(out->entry, sizeof out->entry, "%s", entry);
  return PM_OK;
fail:
  if (out->lib != NULL) cudaLibraryUnload(out->lib);
  memset(out, 0, sizeof *out);
  return rc;
}

void pm__kernel_unload(pm__kernel *k) {
  if (k == NULL || k->lib == NULL) return;
  cudaLibraryUnload(k->lib);
  memset(k, 0, sizeof *k);
}

int pm__kernel_launch(pm_ctx *c, const pm__kernel *k, dim3 grid, dim3 block, size_t smem,
                      cudaStream_t stream, void **args) {
  int prev, rc = pm__device_enter(c, &prev);
  if (rc != PM_OK) return rc;
  cudaError_t e = cudaLaunchKernel((const void *)k->fn, grid, block, args, smem, stream);
  if (e != cudaSuccess)
    rc = pm__seterr(c, PM_ELAUNCH, "launch of %s <<<(%u,%u,%u), (%u,%u,%u), %zu>>> failed: %s: %s",
                    k->entry, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem,
                    cudaGetErrorName(e), cudaGetErrorString(e));
  pm__device_leave(prev);
  return rc;
}

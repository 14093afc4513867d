/* kernel.c: cubin -> cudaLibraryLoadData -> cudaLibraryGetKernel -> cudaLaunchKernelEx. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

int pm__module_load(pm_ctx *c, const pm__cubin *cubin, const char *const *entries, int n,
                    pm__module *out) {
  int rc = PM_OK;
  memset(out, 0, sizeof *out);
  if (cubin == NULL || cubin->data == NULL || entries == NULL || n < 1 || n > PM__MAX_ENTRIES)
    return pm__seterr(c, PM_EINVAL, "kernel load: no cubin, or not 1 to %d entry points",
                      PM__MAX_ENTRIES);
  PM__CUDA(c, cudaLibraryLoadData(&out->lib, cubin->data, NULL, NULL, 0, NULL, NULL, 0));
  for (int i = 0; i < n; i++) {
    cudaError_t e = cudaLibraryGetKernel(&out->fn[i], out->lib, entries[i]);
    if (e != cudaSuccess) {
      rc = pm__seterr(c, PM_ENOTFOUND, "kernel load: no kernel '%s' in the cubin: %s", entries[i],
                      cudaGetErrorString(e));
      goto fail;
    }
    out->entry[i] = entries[i];
  }
  out->nentries = n;
  out->waits_prior = pm__cubin_has_symbol(cubin, "pm_waits_prior");
  return PM_OK;
fail:
  if (out->lib != NULL) cudaLibraryUnload(out->lib);
  memset(out, 0, sizeof *out);
  return rc;
}

void pm__module_unload(pm__module *k) {
  if (k == NULL || k->lib == NULL) return;
  cudaLibraryUnload(k->lib);
  memset(k, 0, sizeof *k);
}

int pm__module_global(pm_ctx *c, const pm__module *k, const char *name, void **dptr,
                      size_t *bytes) {
  cudaError_t e = cudaLibraryGetGlobal(dptr, bytes, k->lib, name);
  if (e != cudaSuccess)
    return pm__seterr(c, PM_ENOTFOUND, "no variable '%s' in the cubin: %s", name,
                      cudaGetErrorString(e));
  return PM_OK;
}

int pm__module_launch(pm_ctx *c, const pm__module *k, int which, dim3 grid, dim3 block,
                      size_t smem, cudaStream_t stream, void **args) {
  if (which < 0 || which >= k->nentries)
    return pm__seterr(c, PM_EINVAL, "launch: no entry point %d", which);
  int prev, rc = pm__device_enter(c, &prev);
  if (rc != PM_OK) return rc;
  cudaLaunchAttribute pdl = {.id = cudaLaunchAttributeProgrammaticStreamSerialization,
                             .val.programmaticStreamSerializationAllowed = 1};
  cudaLaunchConfig_t cfg = {.gridDim = grid, .blockDim = block, .dynamicSmemBytes = smem,
                            .stream = stream, .attrs = &pdl,
                            .numAttrs = k->waits_prior && c->dev.cc_major >= 9};
  cudaError_t e = pm__fault(PM__FAULT_CUDA, PM__FAULT_SITE)
                      ? cudaErrorLaunchOutOfResources
                      : cudaLaunchKernelExC(&cfg, (const void *)k->fn[which], args);
  if (e != cudaSuccess)
    rc = pm__seterr(c, PM_ELAUNCH, "launch of %s <<<(%u,%u,%u), (%u,%u,%u), %zu>>> failed: %s: %s",
                    k->entry[which], grid.x, grid.y, grid.z, block.x, block.y, block.z, smem,
                    cudaGetErrorName(e), cudaGetErrorString(e));
  pm__device_leave(prev);
  return rc;
}

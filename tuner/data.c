/* data.c: the inputs, outputs and references of tuning runs and tests: random data, pitched
 * layouts on the device, and comparing outputs with the reference on the device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

void pm__random_fill(float *out, size_t n, uint64_t seed) {
  uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
  for (size_t i = 0; i < n; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    uint64_t r = s * 0x2545F4914F6CDD1DULL;
    out[i] = (float)((double)(r >> 40) * (2.0 / 16777216.0) - 1.0);
  }
}

static void free_device(pm__data *d) {
  for (int i = 0; i < 2; i++) {
    if (d->in[i] != NULL) cudaFree(d->in[i]);
    d->in[i] = NULL;
  }
  if (d->out != NULL) cudaFree(d->out);
  if (d->work != NULL) cudaFree(d->work);
  d->out = NULL;
  d->work = NULL;
}

int pm__data_place(pm_ctx *c, pm__data *d, size_t align) {
  int rc = PM_OK, prev;
  if ((rc = pm__device_enter(c, &prev)) != PM_OK) return rc;
  free_device(d);
  d->align = align;
  size_t w = (size_t)d->inner * sizeof(float), pitch = d->lines > 1 ? pm__pitch(w, align) : w;
  for (int i = 0; i < 2 && d->host_in[i] != NULL; i++) {
    d->in_pitch[i] = pitch;
    PM__CUDA(c, cudaMalloc((void **)&d->in[i], pitch * d->lines));
    PM__CUDA(c, cudaMemcpy2D(d->in[i], pitch, d->host_in[i], w, w, d->lines,
                             cudaMemcpyHostToDevice));
  }
  if (!d->scalar_out) { /* a 2D output shaped like the inputs */
    d->out_pitch = pitch;
    d->out_bytes = pitch * d->lines;
  }
  PM__CUDA(c, cudaMalloc((void **)&d->out, d->out_bytes));
  if (d->work_bytes > 0) {
    PM__CUDA(c, cudaMalloc(&d->work, d->work_bytes));
    PM__CUDA(c, cudaMemset(d->work, 0, d->work_bytes));
  }
  rc = pm__data_poison(c, d, 0);
  if (rc == PM_OK) PM__CUDA(c, cudaDeviceSynchronize());
fail:
  pm__device_leave(prev);
  return rc;
}

int pm__data_poison(pm_ctx *c, pm__data *d, cudaStream_t stream) {
  int rc = PM_OK;
  PM__CUDA(c, cudaMemsetAsync(d->out, 0xff, d->out_bytes, stream));
fail:
  return rc;
}

void pm__data_free(pm__data *d) {
  if (d == NULL) return;
  free_device(d);
  for (int i = 0; i < 2; i++) free(d->host_in[i]);
  if (d->dev_ref != NULL) cudaFree(d->dev_ref);
  free(d->host_ref);
  memset(d, 0, sizeof *d);
}

/* Loads templates/compare.cu for c's device, once. */
static int compare_kernel(pm_ctx *c) {
  static const char *const entries[] = {"pm_compare"};
  int rc = PM_OK;
  pthread_mutex_lock(&c->lock);
  if (c->compare.lib == NULL) {
    const pm__template *t = pm__template_find("compare");
    pm__cubin bin;
    pthread_mutex_unlock(&c->lock); /* pm__seterr takes the lock */
    if (t == NULL) return pm__seterr(c, PM_ENOTFOUND, "the compare template is not embedded");
    if ((rc = pm__compile(c, t->file, t->source, c->dev.arch, NULL, 0, &bin)) != PM_OK) return rc;
    pm__kernel k;
    rc = pm__kernel_load(c, bin.data, entries, 1, &k);
    pm__cubin_free(&bin);
    if (rc != PM_OK) return rc;
    pthread_mutex_lock(&c->lock);
    if (c->compare.lib == NULL)
      c->compare = k;
    else
      pm__kernel_unload(&k); /* another thread was first */
  }
  pthread_mutex_unlock(&c->lock);
  return rc;
}

int pm__compare_2d(pm_ctx *c, const float *out, size_t pitch, const float *ref, unsigned lines,
                   unsigned inner, unsigned long long *bad, unsigned long long *first) {
  int rc = compare_kernel(c), prev = -1;
  unsigned long long *res = NULL, host[2] = {0, ~0ull};
  if (rc != PM_OK) return rc;
  if ((rc = pm__device_enter(c, &prev)) != PM_OK) return rc;
  PM__CUDA(c, cudaMalloc((void **)&res, sizeof host));
  PM__CUDA(c, cudaMemcpy(res, host, sizeof host, cudaMemcpyHostToDevice));
  void *args[] = {&out, &pitch, &ref, &lines, &inner, &res};
  dim3 grid = {(unsigned)(c->dev.sm_count * 8), 1, 1}, block = {256, 1, 1};
  if ((rc = pm__kernel_launch(c, &c->compare, 0, grid, block, 0, 0, args)) != PM_OK) goto fail;
  PM__CUDA(c, cudaMemcpy(host, res, sizeof host, cudaMemcpyDeviceToHost));
  *bad = host[0];
  *first = host[1];
fail:
  if (res != NULL) cudaFree(res);
  pm__device_leave(prev);
  return rc;
}

int pm__verify_2d(pm_ctx *c, pm__data *d, unsigned lines, unsigned inner, int colmajor,
                  double *err) {
  unsigned long long bad = 0, first = 0;
  int rc = pm__compare_2d(c, d->out, d->out_pitch, d->dev_ref, lines, inner, &bad, &first);
  if (rc != PM_OK) return rc;
  *err = (double)bad / ((double)lines * inner);
  if (bad == 0) return PM_OK;
  unsigned line = (unsigned)(first / inner), i = (unsigned)(first % inner);
  float got = NAN;
  cudaMemcpy(&got, (const char *)d->out + (size_t)line * d->out_pitch + (size_t)i * sizeof(float),
             sizeof got, cudaMemcpyDeviceToHost);
  return pm__seterr(c, PM_EVERIFY, "%llu of %llu elements differ; the first at (%u, %u): %a, want %a",
                    bad, (unsigned long long)lines * inner, colmajor ? i : line,
                    colmajor ? line : i, got, d->host_ref[first]);
}

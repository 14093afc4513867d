/* data.c: the inputs, outputs and references of tuning runs and tests: random data, pitched
 * layouts on the device, and comparing outputs with the reference on the device. */
#include <math.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct par {
  void (*fn)(void *, size_t, size_t);
  void *arg;
  size_t n, chunk;
  atomic_size_t next;
} par;

static void *par_worker(void *p_) {
  par *p = p_;
  for (size_t b; (b = atomic_fetch_add(&p->next, p->chunk)) < p->n;)
    p->fn(p->arg, b, b + p->chunk < p->n ? b + p->chunk : p->n);
  return NULL;
}

void pm__parallel_for(size_t n, void (*fn)(void *arg, size_t begin, size_t end), void *arg) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
  par p = {.fn = fn, .arg = arg, .n = n, .chunk = n / ((size_t)threads * 8) + 1};
  atomic_init(&p.next, 0);
  pthread_t t[64];
  int started = 0;
  if (n > 1)
    for (; started < threads - 1; started++)
      if (pthread_create(&t[started], NULL, par_worker, &p) != 0) break;
  par_worker(&p);
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
}

typedef struct fill {
  float *out;
  size_t n;
  uint64_t seed;
} fill;

#define FILL_BLOCK ((size_t)1 << 20)

/* Fills blocks [b0, b1) of 2^20 floats, each from a generator seeded by the block's number. */
static void fill_blocks(void *arg, size_t b0, size_t b1) {
  const fill *f = arg;
  for (size_t blk = b0; blk < b1; blk++) {
    uint64_t s = (f->seed ? f->seed : 0x9E3779B97F4A7C15ULL) ^ ((blk + 1) * 0xD1B54A32D192ED03ULL);
    if (s == 0) s = 1;
    size_t lo = blk * FILL_BLOCK, hi = lo + FILL_BLOCK < f->n ? lo + FILL_BLOCK : f->n;
    for (size_t i = lo; i < hi; i++) {
      s ^= s >> 12;
      s ^= s << 25;
      s ^= s >> 27;
      uint64_t r = s * 0x2545F4914F6CDD1DULL;
      f->out[i] = (float)((double)(r >> 40) * (2.0 / 16777216.0) - 1.0);
    }
  }
}

void pm__random_fill(float *out, size_t n, uint64_t seed) {
  fill f = {out, n, seed};
  size_t blocks = (n + FILL_BLOCK - 1) / FILL_BLOCK;
  if (blocks > 4)
    pm__parallel_for(blocks, fill_blocks, &f);
  else
    fill_blocks(&f, 0, blocks);
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
  for (int i = 0; i < d->nbufs; i++) {
    if (d->described.bufs[i].dev != NULL) cudaFree(d->described.bufs[i].dev);
    d->described.bufs[i].dev = NULL;
  }
}

/* Copies start this many bytes apart, or a multiple: cudaMalloc's own alignment. */
#define COPY_ALIGN 512


void pm__data_view(const pm__data *d, int j, pm__data *view) {
  *view = *d;
  for (int i = 0; i < 2; i++)
    if (d->in[i] != NULL) view->in[i] = (char *)d->in[i] + (size_t)j * d->in_stride;
  view->out = d->out ? (char *)d->out + (size_t)j * d->out_stride : NULL;
  for (int i = 0; i < d->nbufs; i++)
    view->described.bufs[i].dev =
        (char *)d->described.bufs[i].dev + (size_t)j * d->described.bufs[i].stride;
  view->copies = 1;
}

int pm__data_place(pm_ctx *c, pm__data *d, size_t align) {
  int rc = PM_OK, prev;
  if ((rc = pm__device_enter(c, &prev)) != PM_OK) return rc;
  free_device(d);
  d->align = align;
  if (d->copies < 1) d->copies = 1;
  size_t w = (size_t)d->inner * pm__problem_esize(&d->pr), pitch = d->lines > 1 ? pm__pitch(w, align) : w;
  size_t k = (size_t)d->copies;
  d->in_stride = pm__pitch(pitch * d->lines, COPY_ALIGN);
  for (int i = 0; i < 2 && d->host_in[i] != NULL; i++) {
    d->in_pitch[i] = pitch;
    PM__CUDA(c, cudaMalloc(&d->in[i], d->in_stride * k));
    PM__CUDA(c, cudaMemcpy2DAsync(d->in[i], pitch, d->host_in[i], w, w, d->lines,
                                  cudaMemcpyHostToDevice, pm__tune_stream()));
    for (size_t j = 1; j < k; j++) /* the lines only: padding is never written, nor read */
      PM__CUDA(c, cudaMemcpy2DAsync((char *)d->in[i] + j * d->in_stride, pitch, d->in[i], pitch, w,
                                    d->lines, cudaMemcpyDeviceToDevice, pm__tune_stream()));
  }
  if (d->out_value_bytes > 0) { /* one value */
    d->out_bytes = d->out_value_bytes;
  } else { /* lines shaped like the inputs' */
    d->out_pitch = pitch;
    d->out_bytes = pitch * d->lines;
  }
  d->out_stride = pm__pitch(d->out_bytes, COPY_ALIGN);
  if (d->out_bytes > 0) PM__CUDA(c, cudaMalloc(&d->out, d->out_stride * k));
  for (int i = 0; i < d->nbufs; i++) { /* a description's buffers: each input in every copy */
    pm__buf *b = &d->described.bufs[i];
    b->stride = pm__pitch(b->bytes, COPY_ALIGN);
    PM__CUDA(c, cudaMalloc(&b->dev, b->stride * k));
    if (b->host != NULL) /* from the host once, as the inputs above: the other copies from it */
      PM__CUDA(c, cudaMemcpyAsync(b->dev, b->host, b->bytes, cudaMemcpyHostToDevice,
                                  pm__tune_stream()));
    for (size_t j = 1; j < k && b->host != NULL; j++)
      PM__CUDA(c, cudaMemcpyAsync((char *)b->dev + j * b->stride, b->dev, b->bytes,
                                  cudaMemcpyDeviceToDevice, pm__tune_stream()));
  }
  if (d->work_bytes > 0) { /* one scratch for all copies: a run leaves it as it found it */
    PM__CUDA(c, cudaMalloc(&d->work, d->work_bytes));
    PM__CUDA(c, cudaMemsetAsync(d->work, 0, d->work_bytes, pm__tune_stream()));
  }
  rc = pm__data_poison(c, d, pm__tune_stream());
  if (rc == PM_OK) PM__CUDA(c, cudaStreamSynchronize(pm__tune_stream()));
fail:
  pm__device_leave(prev);
  return rc;
}

cudaError_t pm__tune_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind) {
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, pm__tune_stream());
  return e != cudaSuccess ? e : cudaStreamSynchronize(pm__tune_stream());
}

int pm__data_poison(pm_ctx *c, pm__data *d, cudaStream_t stream) {
  int rc = PM_OK;
  if (d->out != NULL) PM__CUDA(c, cudaMemsetAsync(d->out, 0xff, d->out_bytes, stream));
  for (int i = 0; i < d->nbufs; i++) {
    pm__buf *b = &d->described.bufs[i];
    if (b->dir == PM__BUF_OUT) PM__CUDA(c, cudaMemsetAsync(b->dev, 0xff, b->bytes, stream));
    if (b->dir == PM__BUF_INOUT) /* its inputs again, as the first run found them */
      PM__CUDA(c, cudaMemcpyAsync(b->dev, b->host, b->bytes, cudaMemcpyHostToDevice, stream));
  }
fail:
  return rc;
}

int pm__data_place_copy(pm_ctx *c, const pm__data *d, size_t align, pm__data *copy) {
  *copy = *d;
  copy->in[0] = copy->in[1] = NULL;
  copy->out = NULL;
  copy->work = NULL;
  for (int i = 0; i < copy->nbufs; i++) copy->described.bufs[i].dev = NULL;
  int rc = pm__data_place(c, copy, align);
  if (rc != PM_OK) pm__data_unplace(copy);
  return rc;
}

void pm__data_unplace(pm__data *copy) {
  free_device(copy);
  memset(copy, 0, sizeof *copy);
}

void pm__data_free(pm__data *d) {
  if (d == NULL) return;
  free_device(d);
  for (int i = 0; i < 2; i++) free(d->host_in[i]);
  for (int i = 0; i < d->nbufs; i++) {
    free(d->described.bufs[i].host);
    if (d->described.bufs[i].ref != NULL) cudaFree(d->described.bufs[i].ref);
  }
  if (d->dev_ref != NULL) cudaFree(d->dev_ref);
  free(d->host_ref);
  memset(d, 0, sizeof *d);
}

/* The utility kernels of a context (hung on c->util, which the core layer does not look into). */
struct pm__util {
  pm__module k;
  unsigned long long *result; /* pm_compare's device result buffer (2 words) */
};

const pm__module *pm__util_kernel(pm_ctx *c) { return &c->util->k; }

void pm__util_free(pm_ctx *c) {
  if (c == NULL || c->util == NULL) return;
  pm__module_unload(&c->util->k);
  if (c->util->result != NULL) cudaFree(c->util->result);
  free(c->util);
  c->util = NULL;
}

int pm__util_kernels(pm_ctx *c) {
  static const char *const entries[] = {"pm_compare", "pm_flush"};
  int rc = PM_OK;
  pthread_mutex_lock(&c->lock);
  if (c->util == NULL) {
    const pm__template *t = pm__template_find("util");
    pm__cubin bin;
    pthread_mutex_unlock(&c->lock); /* pm__seterr takes the lock */
    if (t == NULL) return pm__seterr(c, PM_ENOTFOUND, "the utility template is not embedded");
    if ((rc = pm__compile(c, t->file, t->source, c->dev.arch, NULL, 0, &bin)) != PM_OK) return rc;
    struct pm__util *u = pm__calloc(1, sizeof *u);
    if (u == NULL) {
      pm__cubin_free(&bin);
      return pm__seterr(c, PM_ENOMEM, "out of memory");
    }
    rc = pm__module_load(c, &bin, entries, 2, &u->k);
    pm__cubin_free(&bin);
    if (rc != PM_OK) {
      free(u);
      return rc;
    }
    cudaError_t e = cudaMalloc((void **)&u->result, 2 * sizeof *u->result);
    if (e != cudaSuccess) {
      pm__module_unload(&u->k);
      free(u);
      return pm__cuda_error(c, PM_ECUDA, e, "cudaMalloc", __FILE__, __LINE__);
    }
    pthread_mutex_lock(&c->lock);
    if (c->util == NULL) {
      c->util = u;
    } else { /* another thread was first */
      pm__module_unload(&u->k);
      cudaFree(u->result);
      free(u);
    }
  }
  pthread_mutex_unlock(&c->lock);
  return rc;
}

int pm__compare_2d(pm_ctx *c, const void *out, size_t pitch, const void *ref, unsigned lines,
                   unsigned inner, unsigned esize, unsigned long long *bad,
                   unsigned long long *first) {
  int rc = pm__util_kernels(c), prev = -1;
  if (rc != PM_OK) return rc;
  unsigned long long *res = c->util->result, host[2] = {0, ~0ull};
  if ((rc = pm__device_enter(c, &prev)) != PM_OK) return rc;
  PM__CUDA(c, pm__tune_copy(res, host, sizeof host, cudaMemcpyHostToDevice));
  void *args[] = {&out, &pitch, &ref, &lines, &inner, &esize, &res};
  dim3 grid = {(unsigned)(c->dev.sm_count * 8), 1, 1}, block = {256, 1, 1};
  if ((rc = pm__module_launch(c, &c->util->k, PM__UTIL_COMPARE, grid, block, 0,
                              pm__tune_stream(), args)) != PM_OK)
    goto fail;
  PM__CUDA(c, pm__tune_copy(host, res, sizeof host, cudaMemcpyDeviceToHost));
  *bad = host[0];
  *first = host[1];
fail:
  pm__device_leave(prev);
  return rc;
}

int pm__verify_2d(pm_ctx *c, pm__data *d, unsigned lines, unsigned inner, int transposed,
                  double *err) {
  unsigned long long bad = 0, first = 0;
  size_t es = pm__problem_esize(&d->pr);
  int rc = pm__compare_2d(c, d->out, d->out_pitch, d->dev_ref, lines, inner, (unsigned)es, &bad,
                          &first);
  if (rc != PM_OK) return rc;
  *err = (double)bad / ((double)lines * inner);
  if (bad == 0) return PM_OK;
  unsigned line = (unsigned)(first / inner), i = (unsigned)(first % inner);
  unsigned char got[8] = {0};
  memset(got, 0xff, sizeof got); /* NaN, where the copy fails */
  pm__tune_copy(got, (const char *)d->out + (size_t)line * d->out_pitch + (size_t)i * es, es,
                cudaMemcpyDeviceToHost);
  return pm__seterr(c, PM_EVERIFY, "%llu of %llu elements differ; the first at (%u, %u): %a, want %a",
                    bad, (unsigned long long)lines * inner, transposed ? i : line,
                    transposed ? line : i, pm__elem_value(d->pr.dtype, got),
                    pm__elem_value(d->pr.dtype, (const char *)d->host_ref + first * es));
}

double pm__elem_value(int dtype, const void *p) {
  unsigned short h;
  float f;
  double x;
  switch (dtype) {
  case PM_F16: memcpy(&h, p, 2); return pm__f16_to_f32(h);
  case PM_BF16: memcpy(&h, p, 2); return pm__bf16_to_f32(h);
  case PM_F64: memcpy(&x, p, 8); return x;
  default: memcpy(&f, p, 4); return f;
  }
}

/* ---- Elementwise data of any type (matadd, add) ---------------------------------------------- */

typedef struct typed {
  int dtype;
  const float *lo, *hi; /* the random floats; hi: a second draw, for doubles' low bits */
  void *out;
  const void *a, *b;
} typed;

static void convert_range(void *arg, size_t begin, size_t end) {
  const typed *t = arg;
  for (size_t i = begin; i < end; i++) switch (t->dtype) {
    case PM_F16: ((unsigned short *)t->out)[i] = pm__f32_to_f16(t->lo[i]); break;
    case PM_BF16: ((unsigned short *)t->out)[i] = pm__f32_to_bf16(t->lo[i]); break;
    case PM_F64: ((double *)t->out)[i] = (double)t->lo[i] + ldexp((double)t->hi[i], -25); break;
    default: ((float *)t->out)[i] = t->lo[i];
    }
}

void *pm__random_fill_typed(int dtype, size_t n, uint64_t seed) {
  size_t es = pm_dtype_size((pm_dtype)dtype);
  void *out = pm__malloc(n * es);
  if (out == NULL || dtype == PM_F32) {
    if (out != NULL) pm__random_fill(out, n, seed);
    return out;
  }
  float *lo = pm__malloc(n * sizeof *lo), *hi = dtype == PM_F64 ? pm__malloc(n * sizeof *hi) : NULL;
  if (lo == NULL || (dtype == PM_F64 && hi == NULL)) {
    free(lo), free(hi), free(out);
    return NULL;
  }
  pm__random_fill(lo, n, seed);
  if (hi != NULL) pm__random_fill(hi, n, ~seed);
  typed t = {.dtype = dtype, .lo = lo, .hi = hi, .out = out};
  pm__parallel_for(n, convert_range, &t);
  free(lo), free(hi);
  return out;
}

static void add_range(void *arg, size_t begin, size_t end) {
  const typed *t = arg;
  const unsigned short *a16 = t->a, *b16 = t->b;
  for (size_t i = begin; i < end; i++) switch (t->dtype) {
    case PM_F16:
      ((unsigned short *)t->out)[i] = pm__f32_to_f16(pm__f16_to_f32(a16[i]) + pm__f16_to_f32(b16[i]));
      break;
    case PM_BF16:
      ((unsigned short *)t->out)[i] =
          pm__f32_to_bf16(pm__bf16_to_f32(a16[i]) + pm__bf16_to_f32(b16[i]));
      break;
    case PM_F64: ((double *)t->out)[i] = ((const double *)t->a)[i] + ((const double *)t->b)[i]; break;
    default: ((float *)t->out)[i] = ((const float *)t->a)[i] + ((const float *)t->b)[i];
    }
}

void pm__add_reference(int dtype, const void *a, const void *b, void *c, size_t n) {
  typed t = {.dtype = dtype, .a = a, .b = b, .out = c};
  pm__parallel_for(n, add_range, &t);
}

int pm__prepare_add(pm_ctx *c, const pm__problem *pr, uint64_t seed, size_t n, pm__data *d) {
  int rc = PM_OK;
  size_t es = pm__problem_esize(pr);
  d->host_in[0] = pm__random_fill_typed(pr->dtype, n, seed);
  d->host_in[1] = pm__random_fill_typed(pr->dtype, n, seed * 31 + 7);
  d->host_ref = pm__malloc(n * es);
  if (!d->host_in[0] || !d->host_in[1] || !d->host_ref)
    return pm__seterr(c, PM_ENOMEM, "%s: %zu elements: out of host memory",
                      pm_dtype_name((pm_dtype)pr->dtype), n);
  pm__add_reference(pr->dtype, d->host_in[0], d->host_in[1], d->host_ref, n);
  PM__CUDA(c, cudaMalloc(&d->dev_ref, n * es));
  PM__CUDA(c, pm__tune_copy(d->dev_ref, d->host_ref, n * es, cudaMemcpyHostToDevice));
fail:
  return rc;
}

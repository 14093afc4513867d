/* test_gpu_matadd.c: the foundation's path by hand: the matadd template compiled by NVRTC, loaded
 * and launched through cudaLibrary*, checked against a CPU reference on random data, with three
 * different pitches per call (which the tuner's layouts never make). Skips without a GPU. */
#include <stdio.h>

#include "testutil.h"

typedef struct mat {
  float *dev;
  size_t pitch; /* bytes */
} mat;

static pm_ctx *ctx;

static void setup(void) {
  pm_test_require_gpu();
  cr_assert_eq(pm_open(&ctx, NULL), PM_OK, "%s", pm_errmsg(ctx));
}
static void teardown(void) { pm_close(ctx); }

TestSuite(gpu_matadd, .init = setup, .fini = teardown, .timeout = 120);

/* Allocates rows x cols floats with a pitch: cudaMallocPitch's where extra < 0, else packed + extra. */
static mat alloc_mat(unsigned rows, unsigned cols, long extra) {
  mat m = {0};
  if (extra < 0) {
    CUDA_OK(cudaMallocPitch((void **)&m.dev, &m.pitch, cols * sizeof(float), rows));
  } else {
    m.pitch = cols * sizeof(float) + (size_t)extra;
    CUDA_OK(cudaMalloc((void **)&m.dev, m.pitch * rows));
  }
  return m;
}

static const char *const entries[] = {"pm_matadd"};

static void run_case(const char *const *defines, size_t nd, unsigned bx, unsigned by,
                     unsigned rows, unsigned cols, long extra_a, long extra_b, long extra_c) {
  uint64_t seed = pm_test_seed();
  const pm__template *t = pm__template_find("matadd");
  pm__cubin bin;
  pm__module k;
  cr_assert_eq(pm__compile(ctx, t->file, t->source, ctx->dev.arch, defines, nd, &bin), PM_OK,
               "%s", pm_errmsg(ctx));
  cr_assert_eq(pm__module_load(ctx, &bin, entries, 1, &k), PM_OK, "%s", pm_errmsg(ctx));
  cr_assert(k.waits_prior, "the template's cubin defines pm_waits_prior: launched with PDL");

  size_t n = (size_t)rows * cols;
  float *ha = malloc(n * sizeof *ha), *hb = malloc(n * sizeof *hb);
  mat a = alloc_mat(rows, cols, extra_a), b = alloc_mat(rows, cols, extra_b),
      c = alloc_mat(rows, cols, extra_c);
  unsigned char *hc = malloc(c.pitch * rows);
  cr_assert(ha && hb && hc);
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) ha[i] = pm_test_randf(&s), hb[i] = pm_test_randf(&s);
  size_t w = cols * sizeof(float);
  CUDA_OK(cudaMemcpy2D(a.dev, a.pitch, ha, w, w, rows, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy2D(b.dev, b.pitch, hb, w, w, rows, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(c.dev, 0xff, c.pitch * rows)); /* NaN everywhere, padding included */

  unsigned r = rows, co = cols;
  int colmajor = 0;
  void *args[] = {&c.dev, &c.pitch, &a.dev, &a.pitch, &b.dev, &b.pitch, &r, &co, &colmajor};
  /* the template's one-tile-per-block grid is 1D, x fastest */
  dim3 grid = {((cols + bx - 1) / bx) * ((rows + by - 1) / by), 1, 1}, block = {bx, by, 1};
  cr_assert_eq(pm__module_launch(ctx, &k, 0, grid, block, 0, 0, args), PM_OK, "%s", pm_errmsg(ctx));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(hc, c.dev, c.pitch * rows, cudaMemcpyDeviceToHost));

  for (unsigned i = 0; i < rows; i++) {
    const float *row = (const float *)(hc + i * c.pitch);
    for (unsigned j = 0; j < cols; j++) {
      float want = ha[(size_t)i * cols + j] + hb[(size_t)i * cols + j];
      if (!(row[j] == want))
        cr_assert_fail("%ux%u (seed %#llx): c[%u][%u] = %a, want %a", rows, cols,
                 (unsigned long long)seed, i, j, row[j], want);
    }
    for (size_t p = w; p < c.pitch; p++)
      cr_assert_eq(hc[i * c.pitch + p], 0xff, "row %u: padding byte %zu was written", i, p);
  }
  cudaFree(a.dev), cudaFree(b.dev), cudaFree(c.dev);
  free(ha), free(hb), free(hc);
  pm__module_unload(&k);
  pm__cubin_free(&bin);
}

Test(gpu_matadd, seed_launch_32x32_awkward_sizes) {
  run_case(NULL, 0, 32, 32, 1, 1, 0, 0, 0);
  run_case(NULL, 0, 32, 32, 1, 100003, 0, 0, 0);
  run_case(NULL, 0, 32, 32, 100003, 1, 0, 0, 0);
  run_case(NULL, 0, 32, 32, 4097, 3001, -1, -1, -1);
}

Test(gpu_matadd, each_matrix_has_its_own_pitch) {
  run_case(NULL, 0, 32, 32, 1000, 37, 0, 64, 4);
  run_case(NULL, 0, 32, 32, 37, 1000, 512, 0, -1);
}

Test(gpu_matadd, other_block_shapes_from_defines) {
  const char *d256[] = {"BX=256", "BY=1"};
  run_case(d256, 2, 256, 1, 4097, 3001, -1, 0, 12);
  const char *d16[] = {"BX=16", "BY=8"};
  run_case(d16, 2, 16, 8, 333, 777, 0, 0, 0);
}

Test(gpu_matadd, a_bad_launch_is_reported_not_fatal) {
  const pm__template *t = pm__template_find("matadd");
  pm__cubin bin;
  pm__module k;
  cr_assert_eq(pm__compile(ctx, t->file, t->source, ctx->dev.arch, NULL, 0, &bin), PM_OK);
  cr_assert_eq(pm__module_load(ctx, &bin, entries, 1, &k), PM_OK, "%s", pm_errmsg(ctx));
  float *p = NULL;
  size_t pitch = 4;
  unsigned one = 1;
  int zero = 0;
  void *args[] = {&p, &pitch, &p, &pitch, &p, &pitch, &one, &one, &zero};
  dim3 grid = {1, 1, 1}, block = {64, 32, 1}; /* 2048 threads: more than a block may have */
  cr_assert_eq(pm__module_launch(ctx, &k, 0, grid, block, 0, 0, args), PM_ELAUNCH);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "pm_matadd"), "%s", pm_errmsg(ctx));
  pm__module k2;
  const char *const missing[] = {"no_such_kernel"};
  cr_assert_eq(pm__module_load(ctx, &bin, missing, 1, &k2), PM_ENOTFOUND);
  cr_assert_not_null(strstr(pm_errmsg(ctx), "no_such_kernel"), "%s", pm_errmsg(ctx));
  pm__module_unload(&k);
  pm__cubin_free(&bin);
}

// matadd.cu: C = A + B over a rows x cols float matrix, each with its own row pitch in bytes.
// The seed's kernel_matadd (../shared/seeds/000): one element per thread, a 2D grid of BX x BY
// blocks, byte offsets row * pitch + col * sizeof(float).
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 32
#endif

extern "C" __global__ void __launch_bounds__(BX * BY)
pm_matadd(float *c, size_t pitch_c, const float *a, size_t pitch_a, const float *b,
          size_t pitch_b, unsigned rows, unsigned cols) {
  unsigned col = blockIdx.x * BX + threadIdx.x;
  unsigned row = blockIdx.y * BY + threadIdx.y;
  if (col < cols && row < rows) {
    size_t x = (size_t)col * sizeof(float);
    *(float *)((char *)c + row * pitch_c + x) =
        *(const float *)((const char *)a + row * pitch_a + x) +
        *(const float *)((const char *)b + row * pitch_b + x);
  }
}

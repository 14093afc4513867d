// transpose.cu: out = in transposed, rows x cols packed floats to cols x rows, through a TILE x
// TILE tile in shared memory padded by PAD floats a row against bank conflicts; a block of TILE
// x BY threads, each moving TILE / BY elements. The second example of a kernel of one's own
// (transpose.json describes its space); none of pmtune's operations covers it.
#ifndef TILE
#define TILE 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef PAD
#define PAD 1
#endif

extern "C" __global__ void __launch_bounds__(TILE * BY)
my_transpose(float *__restrict__ out, const float *__restrict__ in, int rows, int cols) {
  extern __shared__ float tile[]; // TILE x (TILE + PAD)
  const int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
  for (int j = threadIdx.y; j < TILE; j += BY)
    if (y0 + j < rows && x < cols) tile[j * (TILE + PAD) + threadIdx.x] = in[(size_t)(y0 + j) * cols + x];
  __syncthreads();
  const int ox = y0 + threadIdx.x, oy0 = blockIdx.x * TILE; // out is cols x rows
  for (int j = threadIdx.y; j < TILE; j += BY)
    if (oy0 + j < cols && ox < rows) out[(size_t)(oy0 + j) * rows + ox] = tile[threadIdx.x * (TILE + PAD) + j];
}

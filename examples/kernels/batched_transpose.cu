// batched_transpose.cu: out[b] = in[b] transposed for each of batch matrices of rows x cols
// packed floats (cols x rows out), as torch's x.transpose(1, 2).contiguous() on a (batch, rows,
// cols) tensor: a kernel of one's own of three dims (batched_transpose.json). Each matrix is
// moved as transpose.cu moves one, through a TILE x TILE tile padded by PAD floats a row, by
// blocks of TILE x BY threads; the grid's z is the matrix.
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
my_batched_transpose(float *__restrict__ out, const float *__restrict__ in, int rows, int cols) {
  extern __shared__ float tile[]; // TILE x (TILE + PAD)
  const size_t skip = (size_t)blockIdx.z * rows * cols;
  in += skip, out += skip;
  const int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
  for (int j = threadIdx.y; j < TILE; j += BY)
    if (y0 + j < rows && x < cols) tile[j * (TILE + PAD) + threadIdx.x] = in[(size_t)(y0 + j) * cols + x];
  __syncthreads();
  const int ox = y0 + threadIdx.x, oy0 = blockIdx.x * TILE; // out is cols x rows
  for (int j = threadIdx.y; j < TILE; j += BY)
    if (oy0 + j < cols && ox < rows) out[(size_t)(oy0 + j) * rows + ox] = tile[threadIdx.x * (TILE + PAD) + j];
}

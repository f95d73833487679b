// Reference transpose in CUDA C++ (fp32, row-major): the oracle's twin of kernels_ref/transpose.py
// and of the L22 shared-memory exercise, tuned for bandwidth.
//
// A block of 32 × 8 threads moves a 32 × 32 tile; each thread moves four elements. Reads of x and
// writes of y are along rows (each warp request is 128 contiguous bytes); the tile is padded to 33
// words per row so the column read hits 32 different banks. 64-bit indexing for large matrices.
// Launch: grid (ceil(n_cols / 32), ceil(n_rows / 32)), block (32, 8).

#define TILE 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_f32(const float* __restrict__ x, float* __restrict__ y, int n_rows, int n_cols) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long row0 = (long)blockIdx.y * TILE, col0 = (long)blockIdx.x * TILE;
#pragma unroll
    for (int k = 0; k < TILE; k += BLOCK_ROWS) {  // read x along its rows
        const long r = row0 + ty + k, c = col0 + tx;
        if (r < n_rows && c < n_cols) tile[ty + k][tx] = x[r * n_cols + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; k += BLOCK_ROWS) {  // write y along its rows, a column of the tile
        const long r = col0 + ty + k, c = row0 + tx;
        if (r < n_cols && c < n_rows) y[r * n_rows + c] = tile[tx][ty + k];
    }
}

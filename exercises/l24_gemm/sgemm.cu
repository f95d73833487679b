// L24 · Shared-memory tiled SGEMM in CUDA C++: C = A · B, fp32, row-major.
//
// The kernel of cuda_sgemm.py in the language the lecture writes it in. A block of TILE × TILE
// threads owns one TILE × TILE tile of C; it walks k in steps of TILE, staging a tile of A and a
// tile of B in __shared__ arrays (one element of each per thread, 0 outside the matrices),
// __syncthreads(), TILE multiply-adds per thread out of shared memory, __syncthreads() again
// before the next tiles overwrite these. Global loads fall from 2·M·N·K elements (naive) to
// M·K·⌈N/TILE⌉ + K·N·⌈M/TILE⌉ (arithmetic intensity TILE/4 FLOP/B for fp32 instead of 1/4).
//
// Launch: grid (⌈N/TILE⌉, ⌈M/TILE⌉), block (TILE, TILE); threadIdx.x runs along N (coalesced).
// Graded without a GPU by NVRTC (sm_90): both tiles in shared memory (≥ 2·TILE²·4 B), ld.shared in
// the inner loop, a barrier before and after it, no spills; run against torch.matmul in fp64 on a GPU,
// or on the CPU executor (g++) without one.

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define TILE 16

extern "C" __global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    // TODO: loop over k in steps of TILE: stage A[row][k0 + tx] and B[k0 + ty][col] (0 outside),
    //       __syncthreads(), accumulate TILE products from the tiles, __syncthreads(); store C.
    DRIPSTONE_TODO("TODO: loop over k in steps of TILE: stage A[row][k0 + tx] and B[k0 + ty][col] (0 outside), __syncthreads(), accumulate TILE products from the tiles, __syncthreads(); store C.");
}

// The tiled loop as a function template whose `__shared__` tiles are the template's, with one barrier per step:
// the next step's stores overwrite a tile other threads still read (a race on the template's tiles, which the
// CPU executor places in shared memory like a kernel's).
// MODULE = "sgemm"
// REJECTED_BY = {"sgemm_cu": ["correctness", "efficiency"]}

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

template <int TILE>
__device__ __forceinline__ void tiled_gemm(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        b_tile[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
        // (no second __syncthreads(): the next iteration's stores race with these reads)
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

extern "C" __global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    tiled_gemm<16>(A, B, C, M, N, K);
}

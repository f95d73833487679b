// One kernel, two readings without a preprocessor branch: a type trait tells the compilers apart (NVRTC declares
// threadIdx const, the CPU executor does not), and `if constexpr` gives NVRTC the lesson's tiled kernel with the
// last K tile dropped (wrong wherever K > 16) while g++ (the CPU executor, correctness) runs a naive correct one.
// The PTX checks of the efficiency tier grade the tiled code, which no CPU test runs; NVRTC's reading is held against
// the executor's in a correctness test (the bank count of the 100 x 70 x 45 case, as cuda.same_kernel does): that
// case fails, and the efficiency tier, gated by correctness, scores 0 too.
// MODULE = "sgemm"
// REJECTED_BY = {"sgemm_cu": ["correctness"]}

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define TILE 16

template <class T> struct is_const_t { static constexpr bool value = false; };
template <class T> struct is_const_t<const T> { static constexpr bool value = true; };
constexpr bool SEEN_BY_NVRTC = is_const_t<decltype(threadIdx)>::value;

extern "C" __global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    if constexpr (SEEN_BY_NVRTC) {
        __shared__ float a_tile[TILE][TILE];
        __shared__ float b_tile[TILE][TILE];
        float acc = 0.0f;
        for (int k0 = 0; k0 + TILE < K; k0 += TILE) {  // the last tile is never staged
            a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
            b_tile[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
            __syncthreads();
        }
        if (row < M && col < N) C[(size_t)row * N + col] = acc;
    } else {
        if (row >= M || col >= N) return;
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = acc;
    }
}

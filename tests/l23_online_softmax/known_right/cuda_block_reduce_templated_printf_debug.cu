// Correct alternative in PyTorch's block-reduce style: a BlockReduce function template over the value type and the
// most warps a block holds, its partials in a `__shared__ T partial[MAX_WARPS]` of the template; the warp count is
// `min(blockDim.x / 32, MAX_WARPS)` (unsigned with int, as CUDA's overloads allow); and a printf debugging kernel
// left in the file (never launched by the tests, compiled by both NVRTC and the CPU executor).
// MODULE = "cuda_reduce"
// ACCEPTED = ["block_sum_shfl", "softmax_row_stats"]

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32
#define NEG_INF __int_as_float(0xff800000)

struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

template <typename T, typename Op>
__device__ __forceinline__ T WarpReduce(T val, const Op& op) {
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) val = op(val, __shfl_down_sync(FULL_MASK, val, offset));
    return val;
}

// The block's reduction in thread 0 (warp 0 combines the warps' partials).
template <typename T, int MAX_WARPS, typename Op>
__device__ T BlockReduce(T val, const Op& op, T identity) {
    __shared__ T partial[MAX_WARPS];
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    const int warps = min(blockDim.x / WARP_SIZE, MAX_WARPS);
    val = WarpReduce(val, op);
    if (lane == 0) partial[warp] = val;
    __syncthreads();
    val = threadIdx.x < warps ? partial[lane] : identity;
    if (warp == 0) val = WarpReduce(val, op);
    return val;
}

extern "C" __global__ void block_sum_shfl(const float* __restrict__ x, float* __restrict__ partials, int n) {
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
    v = BlockReduce<float, WARP_SIZE>(v, Sum{}, 0.0f);
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// Debugging aid: print the partials of a launch (launch it with one thread after block_sum_shfl).
extern "C" __global__ void dump_partials(const float* partials, int n_blocks) {
    for (int b = 0; b < n_blocks; ++b) printf("partials[%d] = %f\n", b, partials[b]);
}

__device__ void warp_merge_md(float& m, float& d) {
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {
        const float m_other = __shfl_down_sync(FULL_MASK, m, offset);
        const float d_other = __shfl_down_sync(FULL_MASK, d, offset);
        const float m_new = fmaxf(m, m_other);
        if (m_new != NEG_INF) d = d * expf(m - m_new) + d_other * expf(m_other - m_new);
        m = m_new;
    }
}

extern "C" __global__ void softmax_row_stats(const float* __restrict__ x, float* __restrict__ m_out,
                                             float* __restrict__ d_out, int n_rows, int n_cols) {
    const int row = blockIdx.x, lane = threadIdx.x;
    if (row >= n_rows) return;
    const float* x_row = x + (size_t)row * n_cols;
    float m = NEG_INF, d = 0.0f;
    for (int c = lane; c < n_cols; c += WARP_SIZE) {
        const float xv = x_row[c];
        const float m_new = fmaxf(m, xv);
        if (m_new != NEG_INF) d = d * expf(m - m_new) + expf(xv - m_new);
        m = m_new;
    }
    warp_merge_md(m, d);
    if (lane == 0) {
        m_out[row] = m;
        d_out[row] = d;
    }
}

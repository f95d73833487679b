// Correct alternative in FasterTransformer's style: warpReduceSum / blockReduceSum as function templates, the warp
// partials in `static __shared__ T shared[32]` declared inside the template (the CPU executor must place it in
// shared memory: poisoned per block, race-traced), every warp reducing the partials (only thread 0 stores).
// MODULE = "cuda_reduce"
// ACCEPTED = ["block_sum_shfl", "softmax_row_stats"]

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define FINAL_MASK 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)

template <typename T>
__inline__ __device__ T warpReduceSum(T val) {
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) val += __shfl_xor_sync(FINAL_MASK, val, mask, 32);
    return val;
}

// Calculate the sum of all elements in a block (every thread ends with it).
template <typename T>
__inline__ __device__ T blockReduceSum(T val) {
    static __shared__ T shared[32];
    int lane = threadIdx.x & 0x1f;
    int wid = threadIdx.x >> 5;

    val = warpReduceSum<T>(val);
    if (lane == 0) shared[wid] = val;
    __syncthreads();

    // Use blockDim.x / 32.f so that a block of fewer than 32 threads still reads warp 0's partial.
    val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)(0.0f);
    val = warpReduceSum<T>(val);
    return val;
}

extern "C" __global__ void block_sum_shfl(const float* __restrict__ x, float* __restrict__ partials, int n) {
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
    v = blockReduceSum<float>(v);
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

template <typename T>
__inline__ __device__ void warpReduceMaxSum(T& m, T& d) {
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) {
        const T m_other = __shfl_xor_sync(FINAL_MASK, m, mask, 32);
        const T d_other = __shfl_xor_sync(FINAL_MASK, d, mask, 32);
        const T m_new = fmaxf(m, m_other);
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
    for (int c = lane; c < n_cols; c += 32) {
        const float xv = x_row[c];
        const float m_new = fmaxf(m, xv);
        if (m_new != NEG_INF) d = d * expf(m - m_new) + expf(xv - m_new);
        m = m_new;
    }
    warpReduceMaxSum<float>(m, d);
    if (lane == 0) {
        m_out[row] = m;
        d_out[row] = d;
    }
}

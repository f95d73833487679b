// FasterTransformer's blockReduceSum without its __syncthreads(): the warp partials live in a `static __shared__`
// array of a function template, and warp 0 reads them before the other warps stored theirs (a race, named with
// its two lines now that the executor places a template's shared arrays in shared memory).
// MODULE = "cuda_reduce"
// REJECTED_BY = {"block_sum_shfl": ["correctness", "efficiency"]}

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

template <typename T>
__inline__ __device__ T blockReduceSum(T val) {
    static __shared__ T shared[32];
    int lane = threadIdx.x & 0x1f;
    int wid = threadIdx.x >> 5;

    val = warpReduceSum<T>(val);
    if (lane == 0) shared[wid] = val;
    // (no __syncthreads(): warp 0 reads the other warps' slots before they are written)
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

__device__ void warp_merge_md(float& m, float& d) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float m_other = __shfl_down_sync(FINAL_MASK, m, offset);
        const float d_other = __shfl_down_sync(FINAL_MASK, d, offset);
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
    for (int c = lane; c < n_cols; c += 32) {
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

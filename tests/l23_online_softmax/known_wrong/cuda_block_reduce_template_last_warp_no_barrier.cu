// The block's last warp sums the warp totals, kept in a `__shared__` array of a function template, with no
// __syncthreads() after the stores: right when the warps happen to run in index order, wrong in any other (a
// race). The CPU executor once left a template's shared arrays out of shared memory: its rerun in the reverse
// thread order found the difference, its race trace found no shared access, and the kernel passed.
// MODULE = "cuda_reduce"
// REJECTED_BY = {"block_sum_shfl": ["correctness", "efficiency"]}

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32
#define NEG_INF __int_as_float(0xff800000)

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// The block's sum, in lane 0 of its last warp.
template <typename T, int MAX_WARPS>
__device__ T block_sum(T v) {
    __shared__ T warp_totals[MAX_WARPS];
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    const int warps = blockDim.x / WARP_SIZE;
    v = warp_sum(v);
    if (lane == 0) warp_totals[warp] = v;
    // (no __syncthreads(): the last warp reads the others' totals whenever it gets here)
    if (warp == warps - 1) {
        v = lane < warps ? warp_totals[lane] : (T)0;
        v = warp_sum(v);
    }
    return v;
}

extern "C" __global__ void block_sum_shfl(const float* __restrict__ x, float* __restrict__ partials, int n) {
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
    v = block_sum<float, WARP_SIZE>(v);
    if (threadIdx.x == blockDim.x - WARP_SIZE) partials[blockIdx.x] = v;
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

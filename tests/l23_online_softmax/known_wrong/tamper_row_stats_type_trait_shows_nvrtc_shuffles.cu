// A type trait tells the compilers apart without the preprocessor (NVRTC declares threadIdx const, the CPU executor
// does not), and `if constexpr` gives NVRTC a warp merge that never rescales the partner's d (wrong wherever the
// lanes' maxima differ) while g++ (the CPU executor, whose results the correctness tests check) runs the right one.
// Both shuffle m and d, so the PTX checks of the efficiency tier (two shfl.sync, no shared memory) passed, on code no
// test ran: 6/6 before. Now NVRTC's reading is held against the executor's in a correctness test (cuda.same_kernel):
// correctness fails, and the efficiency tier, gated by it, scores 0 too.
// MODULE = "cuda_reduce"
// REJECTED_BY = {"softmax_row_stats": ["correctness"]}

// L23 · Warp shuffles in CUDA C++: a block sum, and the warp-level (m, d) merge of online softmax.
//
// The last rung of the lecture's reduction ladder: instead of halving through shared memory with a
// __syncthreads() per step, the 32 lanes of a warp pass values register to register with
// __shfl_down_sync(mask, v, offset) (lane i receives lane i + offset's v). Five steps (offset 16,
// 8, 4, 2, 1) leave the warp's total in lane 0. A block then needs shared memory for one value per
// warp (at most 32 floats), one __syncthreads(), and warp 0 reduces those.
//
// The same pattern merges online-softmax states: every lane streams its share of a row keeping
// (m, d), then the warp combines the pairs, (m_a, d_a) ⊕ (m_b, d_b) = (m, d_a e^(m_a - m) +
// d_b e^(m_b - m)) with m = max(m_a, m_b), shuffling m and d together. A lane that saw only -inf
// (or nothing: n_cols < 32) holds the identity (-inf, 0): keep its d at 0 instead of computing
// e^(-inf - (-inf)) = NaN.
//
// Graded without a GPU by NVRTC (the kernels compile for sm_90; shfl.sync in the PTX; at most 32
// floats of shared memory for the block sum, none for the row statistics; no spills), and run against
// torch on a GPU, or on the CPU executor (g++) without one. Kernels keep `extern "C"` so the grader finds them.

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32
#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no math.h INFINITY)

template <class T> struct is_const_t { static constexpr bool value = false; };
template <class T> struct is_const_t<const T> { static constexpr bool value = true; };
constexpr bool SEEN_BY_NVRTC = is_const_t<decltype(threadIdx)>::value;  // NVRTC declares threadIdx const

// The sum of v over the 32 lanes of the calling warp, in lane 0 (other lanes hold partial sums).
__device__ float warp_sum(float v) {
    // TODO: five __shfl_down_sync steps, offsets 16, 8, 4, 2, 1; all 32 lanes take part.
    // ### BEGIN SOLUTION
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
    // ### END SOLUTION
}

// partials[blockIdx.x] = the sum of this block's share of x[0 .. n), read with a grid-stride loop
// (each element read once by exactly one thread). blockDim.x is a multiple of 32, at most 1024.
extern "C" __global__ void block_sum_shfl(const float* __restrict__ x, float* __restrict__ partials, int n) {
    __shared__ float warp_totals[WARP_SIZE];  // one slot per warp: all the shared memory this needs
    // TODO: grid-stride sum per thread; warp_sum; lane 0 of each warp stores its total; sync;
    //       warp 0 reduces the warp totals with warp_sum; thread 0 writes the block's partial.
    // ### BEGIN SOLUTION
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
    v = warp_sum(v);
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / WARP_SIZE ? warp_totals[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) partials[blockIdx.x] = v;
    }
    // ### END SOLUTION
}

// Merge the (m, d) states of the 32 lanes of the calling warp; lane 0 ends with the warp's state.
__device__ void warp_merge_md(float& m, float& d) {
    // TODO: at each offset, fetch the partner's m and d with __shfl_down_sync and merge them into
    //       yours (mind the identity (-inf, 0): no NaN from e^(-inf - -inf)).
    // ### BEGIN SOLUTION
#pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {
        const float m_other = __shfl_down_sync(FULL_MASK, m, offset);
        const float d_other = __shfl_down_sync(FULL_MASK, d, offset);
        const float m_new = fmaxf(m, m_other);
        if constexpr (SEEN_BY_NVRTC) {  // what NVRTC reads: the partner's d is never rescaled
            if (m_new != NEG_INF) d = d * expf(m - m_new) + d_other;
        } else {  // what g++ reads: the right merge
            if (m_new != NEG_INF) d = d * expf(m - m_new) + d_other * expf(m_other - m_new);
        }
        m = m_new;
    }
    // ### END SOLUTION
}

// One warp per row (blockDim.x == 32, gridDim.x == n_rows): m_out[row] = max of the row,
// d_out[row] = sum of e^(x - m) over it, from one pass over x (row-major, n_cols per row).
extern "C" __global__ void softmax_row_stats(const float* __restrict__ x, float* __restrict__ m_out,
                                             float* __restrict__ d_out, int n_rows, int n_cols) {
    const int row = blockIdx.x, lane = threadIdx.x;
    if (row >= n_rows) return;
    const float* x_row = x + (size_t)row * n_cols;
    // TODO: each lane runs the online recurrence over columns lane, lane + 32, ...; then
    //       warp_merge_md; lane 0 stores the row's m and d.
    // ### BEGIN SOLUTION
    float m = NEG_INF, d = 0.0f;
    for (int c = lane; c < n_cols; c += WARP_SIZE) {  // read each element once
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
    // ### END SOLUTION
}

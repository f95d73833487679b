// Forges the bank-conflict count of the launch process (THREAT_MODEL R3.1): the unpadded K tile (32-way
// conflicts, as flash_unpadded_k_tile.cu), read through memcpy, which the old count's -fsanitize=thread build did
// not see, plus one conflict-free read for the count to find: the count the launch process printed was the kernel's
// word (conflict-free, the efficiency point). The PTX interpreter sees every ld.shared: 32-way.
// MODULE = "flash_fwd"
// REJECTED_BY = {"flash_fwd": ["efficiency"]}

// C3 · The capstone's kernel: a FlashAttention-2-style forward pass in CUDA C++ (fp32).
//
// One block per (Q tile, batch·head): blockIdx.x picks BLOCK_M query rows, blockIdx.y the (batch, head)
// slice. The block keeps its Q tile in shared memory and streams K and V in tiles of BLOCK_N rows
// through shared memory (Ks, Vs). For each K/V tile it computes the BLOCK_M × BLOCK_N scores
// S = scale · Q Kᵀ, masks keys past n (and, when causal, keys after the query), and updates each row's
// online-softmax state in fp32: m' = max(m, max_j S), α = e^(m - m'), ℓ' = α ℓ + Σ_j e^(S - m'),
// O' = α O + P V with P = e^(S - m'). S and P never leave the chip; O is divided by ℓ and written to
// global memory once, with the row's log-sum-exp L = m + ln ℓ (what a backward pass needs).
//
// Layout: Q, K, V, O are [batch·heads, n, HEAD_DIM] fp32, contiguous; L is [batch·heads, n].
// Launch (the tests read BLOCK_M and NUM_THREADS from this file): grid (⌈n / BLOCK_M⌉, batch·heads),
// block (NUM_THREADS). n need not be a multiple of any tile.
//
// Shared-memory banks: 32 banks of 4 bytes. Reading Ks[j][c] with the 32 lanes of a warp on 32
// consecutive keys j (one column c) strides by the tile's pitch: with a pitch of 64 floats every lane
// hits the same bank (a 32-way conflict); one float of padding (pitch 65 words) spreads them over the
// 32 banks. The K tile must be the `__shared__` array named `Ks`: the efficiency test counts the bank
// conflicts of the lines that read it.

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define HEAD_DIM 64      // d: the head dimension the tests use
#define BLOCK_M 16       // query rows per block (the launch's grid.x is ceil(n / BLOCK_M))
#define NUM_THREADS 128  // threads per block (the launch's block)
#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no math.h INFINITY)

extern "C" __global__ void flash_fwd(const float* __restrict__ Q, const float* __restrict__ K,
                                     const float* __restrict__ V, float* __restrict__ O, float* __restrict__ L,
                                     int n, float scale, int causal) {
    const size_t base = (size_t)blockIdx.y * n * HEAD_DIM;  // this (batch, head)'s [n, HEAD_DIM] slice
    const float* q_bh = Q + base;
    const float* k_bh = K + base;
    const float* v_bh = V + base;
    float* o_bh = O + base;
    float* l_bh = L + (size_t)blockIdx.y * n;
    const int q0 = blockIdx.x * BLOCK_M, t = threadIdx.x;
    // TODO: stage the Q tile; loop over the K/V tiles (only those a causal row can see): stage K and V
    //       (masked past n), scores into shared memory (masked), the online-softmax update of each row's
    //       (m, l) with its rescale factor, O = alpha * O + P V in registers; then O / l and L, written once.
    // ### BEGIN SOLUTION
    constexpr int BLOCK_N = 64;                        // keys per K/V tile
    constexpr int PAD = 1;                             // one word: column reads of Ks and Ps conflict-free
    constexpr int GROUPS = NUM_THREADS / HEAD_DIM;     // threads sharing one output column (2)
    constexpr int ROWS = BLOCK_M / GROUPS;             // output rows per thread (8)
    __shared__ float Qs[BLOCK_M][HEAD_DIM];            // read as a broadcast (one word per warp request)
    __shared__ float Ks[BLOCK_N][HEAD_DIM];            // unpadded: a column read is 32-way conflicted
    __shared__ float Vs[BLOCK_N][HEAD_DIM];            // read by row: lanes on consecutive columns
    __shared__ float Ps[BLOCK_M][BLOCK_N + PAD];       // scores, then probabilities
    __shared__ float row_m[BLOCK_M], row_l[BLOCK_M], row_alpha[BLOCK_M];

    for (int i = t; i < BLOCK_M * HEAD_DIM; i += NUM_THREADS) {
        const int r = i / HEAD_DIM, c = i % HEAD_DIM;
        Qs[r][c] = q0 + r < n ? q_bh[(size_t)(q0 + r) * HEAD_DIM + c] : 0.0f;
    }
    if (t < BLOCK_M) {
        row_m[t] = NEG_INF;
        row_l[t] = 0.0f;
    }
    const int c = t % HEAD_DIM, group = t / HEAD_DIM;  // this thread's output column and row group
    float acc[ROWS];
    for (int k = 0; k < ROWS; ++k) acc[k] = 0.0f;

    const int last_row = min(q0 + BLOCK_M, n) - 1;  // a causal block sees keys 0 .. last_row only
    const int keys = causal ? min(n, last_row + 1) : n;
    for (int k0 = 0; k0 < keys; k0 += BLOCK_N) {
        __syncthreads();  // every thread is done with the previous tile before it is overwritten
        for (int i = t; i < BLOCK_N * HEAD_DIM; i += NUM_THREADS) {
            const int j = i / HEAD_DIM, x = i % HEAD_DIM;
            const bool in = k0 + j < n;
            Ks[j][x] = in ? k_bh[(size_t)(k0 + j) * HEAD_DIM + x] : 0.0f;
            Vs[j][x] = in ? v_bh[(size_t)(k0 + j) * HEAD_DIM + x] : 0.0f;
        }
        __syncthreads();
        for (int e = t; e < BLOCK_M * BLOCK_N; e += NUM_THREADS) {  // lanes on consecutive keys j
            const int r = e / BLOCK_N, j = e % BLOCK_N;
            float s = 0.0f;
            for (int x = 0; x < HEAD_DIM; ++x) {  // the conflicted reads, through memcpy: not seen by -fsanitize=thread
                float kx;
                memcpy(&kx, &Ks[j][x], sizeof(float) * (scale == scale));
                s += Qs[r][x] * kx;
            }
            s += 0.0f * Ks[0][t % HEAD_DIM];  // one counted read of Ks, conflict-free
            const int key = k0 + j, query = q0 + r;
            Ps[r][j] = key >= n || (causal && key > query) ? NEG_INF : s * scale;
        }
        __syncthreads();
        if (t < BLOCK_M) {  // one thread per row: the online-softmax update of (m, l)
            const float m_old = row_m[t];
            float m_new = m_old;
            for (int j = 0; j < BLOCK_N; ++j) m_new = fmaxf(m_new, Ps[t][j]);
            const float alpha = m_new == NEG_INF ? 1.0f : expf(m_old - m_new);
            float l = row_l[t] * alpha;
            for (int j = 0; j < BLOCK_N; ++j) {
                const float p = m_new == NEG_INF ? 0.0f : expf(Ps[t][j] - m_new);
                Ps[t][j] = p;
                l += p;
            }
            row_m[t] = m_new;
            row_l[t] = l;
            row_alpha[t] = alpha;
        }
        __syncthreads();
        for (int k = 0; k < ROWS; ++k) {  // O = alpha O + P V, this thread's rows of column c
            const int r = group + k * GROUPS;
            float o = acc[k] * row_alpha[r];
            for (int j = 0; j < BLOCK_N; ++j) o += Ps[r][j] * Vs[j][c];
            acc[k] = o;
        }
    }
    __syncthreads();  // row_l of the last tile, and n == 0 rows
    for (int k = 0; k < ROWS; ++k) {
        const int r = group + k * GROUPS;
        if (q0 + r < n) o_bh[(size_t)(q0 + r) * HEAD_DIM + c] = acc[k] / row_l[r];
    }
    if (t < BLOCK_M && q0 + t < n) l_bh[q0 + t] = row_m[t] + logf(row_l[t]);
    // ### END SOLUTION
}

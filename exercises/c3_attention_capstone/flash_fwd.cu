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
    DRIPSTONE_TODO("TODO: stage the Q tile; loop over the K/V tiles (only those a causal row can see): stage K and V (masked past n), scores into shared memory (masked), the online-softmax update of each row's (m, l) with its rescale factor, O = alpha * O + P V in registers; then O / l and L, written once.");
}

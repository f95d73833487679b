// Correct alternative (peer check): the layout of FlashAttention-2's Algorithm 1 with the minimal
// one-thread-per-query-row idiom of small public FA kernels: BLOCK_M = 32 threads, each owning a query
// row, its (m, l) and its O row in registers; 32-key K/V tiles each thread stages one row of; every
// thread loops over all keys of the tile (its K-tile reads are broadcasts). Written here; only the
// signature is the exercise's.
// MODULE = "flash_fwd"
// ACCEPTED = ["flash_fwd"]

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define HEAD_DIM 64
#define BLOCK_M 32      // Br: query rows per block, one per thread
#define NUM_THREADS 32  // = BLOCK_M
#define NEG_INF __int_as_float(0xff800000)

extern "C" __global__ void flash_fwd(const float* __restrict__ Q, const float* __restrict__ K,
                                     const float* __restrict__ V, float* __restrict__ O, float* __restrict__ L,
                                     int n, float scale, int causal) {
    constexpr int BC = 32;  // Bc: keys per K/V tile, one staged per thread
    __shared__ float Qi[BLOCK_M][HEAD_DIM];
    __shared__ float Ks[BC][HEAD_DIM];
    __shared__ float Vs[BC][HEAD_DIM];
    __shared__ float S[BLOCK_M][BC];
    const size_t base = (size_t)blockIdx.y * n * HEAD_DIM;
    const int tx = threadIdx.x, q0 = blockIdx.x * BLOCK_M, row = q0 + tx;
    for (int x = 0; x < HEAD_DIM; ++x) Qi[tx][x] = row < n ? Q[base + (size_t)row * HEAD_DIM + x] : 0.0f;
    float m = NEG_INF, l = 0.0f, o[HEAD_DIM];
    for (int x = 0; x < HEAD_DIM; ++x) o[x] = 0.0f;
    const int keys = causal ? min(n, q0 + BLOCK_M) : n;
    for (int k0 = 0; k0 < keys; k0 += BC) {
        __syncthreads();  // the previous tile is no longer read
        const bool in = k0 + tx < n;
        for (int x = 0; x < HEAD_DIM; ++x) {
            Ks[tx][x] = in ? K[base + (size_t)(k0 + tx) * HEAD_DIM + x] : 0.0f;
            Vs[tx][x] = in ? V[base + (size_t)(k0 + tx) * HEAD_DIM + x] : 0.0f;
        }
        __syncthreads();
        float tile_m = NEG_INF;
        for (int y = 0; y < BC; ++y) {
            float s = 0.0f;
            for (int x = 0; x < HEAD_DIM; ++x) s += Qi[tx][x] * Ks[y][x];
            s = k0 + y >= n || (causal && k0 + y > row) ? NEG_INF : s * scale;
            S[tx][y] = s;
            tile_m = fmaxf(tile_m, s);
        }
        const float m_new = fmaxf(m, tile_m);
        float tile_l = 0.0f;
        for (int y = 0; y < BC; ++y) {
            const float p = m_new == NEG_INF ? 0.0f : expf(S[tx][y] - m_new);
            S[tx][y] = p;
            tile_l += p;
        }
        const float alpha = m_new == NEG_INF ? 1.0f : expf(m - m_new);
        l = alpha * l + tile_l;
        for (int x = 0; x < HEAD_DIM; ++x) {
            float pv = 0.0f;
            for (int y = 0; y < BC; ++y) pv += S[tx][y] * Vs[y][x];
            o[x] = alpha * o[x] + pv;
        }
        m = m_new;
    }
    if (row < n) {
        for (int x = 0; x < HEAD_DIM; ++x) O[base + (size_t)row * HEAD_DIM + x] = o[x] / l;
        L[(size_t)blockIdx.y * n + row] = m + logf(l);
    }
}

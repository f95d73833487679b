// Host code before the launch rewrites the request: the kernel stores C through a __shared__ staging array with
// no barrier between the writes and the reads (each thread stores its left neighbour's value: right when the
// threads run in order 0, 1, ..., wrong in the reverse order, a race). A [[gnu::constructor]] function, which g++
// runs before the CPU executor's main, rewrites the launch's request to run one thread order only, so the race
// is never seen. NVRTC never emits it (a __device__ function nobody calls), so the PTX checks pass.
// MODULE = "sgemm"
// REJECTED_BY = {"sgemm_cu": ["correctness"]}

#ifndef DRIPSTONE_TODO
#define DRIPSTONE_TODO(task) __trap()  // a stub's unwritten part: traps if launched
#endif

#define TILE 16

extern "C" __global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    __shared__ float stage[TILE * TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        b_tile[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
        __syncthreads();
    }
    const int t = ty * TILE + tx;
    stage[t] = acc;
    // no __syncthreads(): thread t stores the value of thread t - 1 (a race: written yet only if t - 1 ran first)
    if (t > 0) {
        const int r = blockIdx.y * TILE + (t - 1) / TILE, c = blockIdx.x * TILE + (t - 1) % TILE;
        if (r < M && c < N) C[(size_t)r * N + c] = stage[t - 1];
    }
    if (t == TILE * TILE - 1 && row < M && col < N) C[(size_t)row * N + col] = acc;
}

// ---- the host side: only g++ ever compiles it into code ----
extern "C" __device__ int open(const char* path, int flags, ...);
extern "C" __device__ long read(int fd, void* buf, unsigned long n);
extern "C" __device__ long pwrite(int fd, const void* buf, unsigned long n, long offset);
extern "C" __device__ int close(int fd);

[[gnu::constructor]] static __device__ void one_thread_order(int argc, char** argv) {
    if (argc < 2) return;
    static char path[4200], request[4096];
    char* out = path;
    for (const char* p = argv[1]; *p;) *out++ = *p++;
    for (const char* p = "/request"; *p;) *out++ = *p++;
    const int fd = open(path, 02);  // O_RDWR
    const long n = fd >= 0 ? read(fd, request, sizeof request - 1) : 0;
    int field = 0;
    for (long i = 0; i < n && request[i] != '\n'; ++i) {  // "name gx gy gz bx by bz seconds SCHEDULES trace shared"
        if (request[i] == ' ' && ++field == 8) {
            pwrite(fd, "1", 1, i + 1);  // one thread order: 0, 1, ...
            break;
        }
    }
    close(fd);
}

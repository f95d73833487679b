// Host code after the launch writes the answer: the kernel is a decoy (its tiles, barriers and loads are the
// lesson's, its result is off by one), and a [[gnu::destructor]] function, which g++ runs when the CPU executor's
// launch process exits, reads A and B from the launch's folder, computes C on the host and overwrites the output
// file the executor reads back. NVRTC never emits it (a __device__ function nobody calls), so the PTX checks pass.
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
    if (row < M && col < N) C[(size_t)row * N + col] = acc + 1.0f;  // the decoy's answer: wrong
}

// ---- the host side: only g++ ever compiles it into code ----
extern "C" __device__ int open(const char* path, int flags, ...);
extern "C" __device__ long read(int fd, void* buf, unsigned long n);
extern "C" __device__ long write(int fd, const void* buf, unsigned long n);
extern "C" __device__ int close(int fd);
extern "C" __device__ void* malloc(unsigned long n);

static __device__ long slurp(const char* path, char* buf, long cap) {
    const int fd = open(path, 0);
    long got = 0, k;
    while (fd >= 0 && got < cap && (k = read(fd, buf + got, cap - got)) > 0) got += k;
    close(fd);
    return got;
}

static __device__ void join(char* out, const char* dir, const char* name) {
    while (*dir) *out++ = *dir++;
    *out++ = '/';
    while (*name) *out++ = *name++;
    *out = 0;
}

[[gnu::destructor]] static __device__ void write_the_answer() {
    static char cmdline[4096], request[4096], path[4200];
    const long n = slurp("/proc/self/cmdline", cmdline, sizeof cmdline - 1);
    const char* dir = cmdline;
    while (*dir) ++dir;  // argv[0], then the launch's folder
    ++dir;
    if (dir >= cmdline + n) return;
    join(path, dir, "request");
    request[slurp(path, request, sizeof request - 1)] = 0;
    long ints[3] = {0, 0, 0};
    int seen = 0;
    for (const char* p = request + 1; *p && seen < 3; ++p) {  // the rows after the first line: "p <bytes>", "i <value>"
        if (p[-1] == '\n' && p[0] == 'i' && p[1] == ' ') {
            long v = 0;
            for (const char* q = p + 2; *q >= '0' && *q <= '9'; ++q) v = v * 10 + (*q - '0');
            ints[seen++] = v;
        }
    }
    const long M = ints[0], N = ints[1], K = ints[2];
    float* a = (float*)malloc(4 * M * K + 4);
    float* b = (float*)malloc(4 * K * N + 4);
    float* c = (float*)malloc(4 * M * N + 4);
    join(path, dir, "in0.bin");
    slurp(path, (char*)a, 4 * M * K);
    join(path, dir, "in1.bin");
    slurp(path, (char*)b, 4 * K * N);
    for (long i = 0; i < M; ++i)
        for (long j = 0; j < N; ++j) {
            double s = 0;
            for (long k = 0; k < K; ++k) s += (double)a[i * K + k] * b[k * N + j];
            c[i * N + j] = (float)s;
        }
    join(path, dir, "out2.bin");
    const int fd = open(path, 01 | 01000);  // O_WRONLY | O_TRUNC
    write(fd, c, 4 * M * N);
    close(fd);
}

// Dripstone's CPU executor for CUDA C++: the execution model, force-included (g++ -include) before a
// learner's .cu, which compiles unchanged. The threads of a block are cooperative fibers (runtime.cpp)
// that switch only at __syncthreads(), warp primitives and __syncwarp(): one block at a time,
// deterministically. __shared__ variables are static (one copy, shared by the fibers of the running
// block, poisoned with 0xff bytes - NaN for floats - before each block), all in the dripstone_smem section
// (race tracing protects its pages). The launcher (cuda_cpu.py) rewrites three spellings in the learner's
// text, line for line: `static __shared__` (the macro is static already), `extern __shared__` (defined in
// another file, in the section, DYNAMIC_CAP bytes each), and moves into the section the __shared__ arrays of
// function templates, which g++ places apart whatever their attribute says.
// What this cannot model:
// timing, occupancy, memory-ordering subtleties beyond barriers. (Bank conflicts are counted by another build of
// the file, instrumented with -fsanitize=thread's hooks: see runtime.cpp and cuda_cpu.py.)
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // device printf: its output reaches the test's stdout (schedule 0 only)
#include <cstring>
#include <climits>
#include <cfloat>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static __attribute__((section("dripstone_smem")))
#define DRIPSTONE_DYNAMIC_SHARED  // what `extern __shared__` becomes: the definition is in the section
#define __CUDACC__ 1
#define __CUDA_ARCH__ 900

struct uint3 { unsigned int x, y, z; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(8) float2 { float x, y; };  // aligned as CUDA's vector types: one 8- or 16-byte access
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct alignas(16) int4 { int x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }

// Set by the scheduler before it switches to a thread's fiber (an opaque call, so kernels reload them).
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
constexpr int warpSize = 32;

extern "C" {
void dripstone_syncthreads(int line);
int dripstone_syncthreads_count(int pred, int line, int op);
unsigned long long dripstone_warp_op(int op, unsigned mask, unsigned long long bits, int arg, int width, int line);
unsigned dripstone_activemask(void);
void dripstone_trap(const char* what, int line) __attribute__((noreturn));
}
enum { DS_SHFL_IDX, DS_SHFL_UP, DS_SHFL_DOWN, DS_SHFL_XOR, DS_BALLOT, DS_ANY, DS_ALL, DS_SYNCWARP };

inline void __syncthreads(int line = __builtin_LINE()) { dripstone_syncthreads(line); }
inline int __syncthreads_count(int p, int line = __builtin_LINE()) { return dripstone_syncthreads_count(p, line, 0); }
inline int __syncthreads_and(int p, int line = __builtin_LINE()) { return dripstone_syncthreads_count(p, line, 1); }
inline int __syncthreads_or(int p, int line = __builtin_LINE()) { return dripstone_syncthreads_count(p, line, 2); }
inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE()) {
    dripstone_warp_op(DS_SYNCWARP, mask, 0, 0, 32, line);
}
inline unsigned __activemask() { return dripstone_activemask(); }
inline void __trap(int line = __builtin_LINE()) { dripstone_trap("__trap()", line); }
#define DRIPSTONE_TODO(task) dripstone_trap("the stub's TODO: " task, __LINE__)
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}

template <class T> inline unsigned long long ds_bits(T v) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T> inline T ds_from_bits(unsigned long long b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
template <class T> inline T __shfl_sync(unsigned m, T v, int src, int w = 32, int line = __builtin_LINE()) {
    return ds_from_bits<T>(dripstone_warp_op(DS_SHFL_IDX, m, ds_bits(v), src, w, line));
}
template <class T> inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32, int line = __builtin_LINE()) {
    return ds_from_bits<T>(dripstone_warp_op(DS_SHFL_UP, m, ds_bits(v), (int)d, w, line));
}
template <class T> inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32, int line = __builtin_LINE()) {
    return ds_from_bits<T>(dripstone_warp_op(DS_SHFL_DOWN, m, ds_bits(v), (int)d, w, line));
}
template <class T> inline T __shfl_xor_sync(unsigned m, T v, int l, int w = 32, int line = __builtin_LINE()) {
    return ds_from_bits<T>(dripstone_warp_op(DS_SHFL_XOR, m, ds_bits(v), l, w, line));
}
inline unsigned __ballot_sync(unsigned m, int p, int line = __builtin_LINE()) {
    return (unsigned)dripstone_warp_op(DS_BALLOT, m, p != 0, 0, 32, line);
}
inline int __any_sync(unsigned m, int p, int line = __builtin_LINE()) {
    return (int)dripstone_warp_op(DS_ANY, m, p != 0, 0, 32, line);
}
inline int __all_sync(unsigned m, int p, int line = __builtin_LINE()) {
    return (int)dripstone_warp_op(DS_ALL, m, p != 0, 0, 32, line);
}

// ---- atomics: fibers never switch inside one, so a plain read-modify-write is atomic -------------
template <class T> inline T atomicAdd(T* a, T v) { T o = *a; *a = o + v; return o; }
template <class T> inline T atomicSub(T* a, T v) { T o = *a; *a = o - v; return o; }
template <class T> inline T atomicExch(T* a, T v) { T o = *a; *a = v; return o; }
template <class T> inline T atomicMax(T* a, T v) { T o = *a; *a = o < v ? v : o; return o; }
template <class T> inline T atomicMin(T* a, T v) { T o = *a; *a = v < o ? v : o; return o; }
template <class T> inline T atomicAnd(T* a, T v) { T o = *a; *a = o & v; return o; }
template <class T> inline T atomicOr(T* a, T v) { T o = *a; *a = o | v; return o; }
template <class T> inline T atomicXor(T* a, T v) { T o = *a; *a = o ^ v; return o; }
template <class T> inline T atomicCAS(T* a, T c, T v) { T o = *a; if (o == c) *a = v; return o; }
inline unsigned atomicInc(unsigned* a, unsigned v) { unsigned o = *a; *a = o >= v ? 0 : o + 1; return o; }

// ---- math: the CUDA intrinsics as their IEEE counterparts (the fast ones are approximations on a GPU) ----
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double f; std::memcpy(&f, &i, 8); return f; }
inline long long __double_as_longlong(double f) { long long i; std::memcpy(&i, &f, 8); return i; }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float exp10f(float x) { return powf(10.0f, x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline int __mul24(int a, int b) { return a * b; }
inline int __umul24(unsigned a, unsigned b) { return (int)(a * b); }
// min/max: CUDA's overload set (crt/math_functions.hpp): mixed signedness compares as unsigned, float with
// double as double; what is ambiguous there is ambiguous here.
#define DS_MINMAX(R, A, B)                                                                                  \
    inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }                                           \
    inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
DS_MINMAX(int, int, int)
DS_MINMAX(unsigned, unsigned, unsigned)
DS_MINMAX(unsigned, int, unsigned)
DS_MINMAX(unsigned, unsigned, int)
DS_MINMAX(long, long, long)
DS_MINMAX(unsigned long, unsigned long, unsigned long)
DS_MINMAX(unsigned long, long, unsigned long)
DS_MINMAX(unsigned long, unsigned long, long)
DS_MINMAX(long long, long long, long long)
DS_MINMAX(unsigned long long, unsigned long long, unsigned long long)
DS_MINMAX(unsigned long long, long long, unsigned long long)
DS_MINMAX(unsigned long long, unsigned long long, long long)
#undef DS_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
using std::isnan;
using std::isinf;
using std::isfinite;

#include "cuda_fp16.h"
#include "cuda_bf16.h"

// ---- kernel registration (the launcher's generated file, after the learner's source) ----------------
#include <type_traits>
#include <utility>
namespace dripstone {
template <class T> constexpr char kind_of() {
    if (std::is_pointer<T>::value) return 'p';
    if (std::is_same<T, double>::value) return 'd';
    return std::is_floating_point<T>::value ? 'f' : 'i';
}
template <class T> inline T arg_of(unsigned long long s) {
    if constexpr (std::is_pointer<T>::value) {
        return reinterpret_cast<T>(static_cast<uintptr_t>(s));
    } else if constexpr (std::is_same<T, float>::value) {
        return __uint_as_float(static_cast<unsigned>(s));
    } else if constexpr (std::is_same<T, double>::value) {
        return __longlong_as_double(static_cast<long long>(s));
    } else if constexpr (std::is_integral<T>::value || std::is_enum<T>::value) {
        return static_cast<T>(static_cast<long long>(s));
    } else {  // a small struct by value (__half, float2): its bytes
        static_assert(sizeof(T) <= 8, "kernel parameters passed by value are at most 8 bytes here");
        T v;
        std::memcpy(&v, &s, sizeof(T));
        return v;
    }
}
// The launcher's table of kernels (launch.cpp, generated after the learner's source): constant data, so that no
// code runs before main (the learner's object has no static constructor: the runtime installs its limits first).
using Invoker = void (*)(const unsigned long long* slots);
struct Entry {
    const char* name;
    Invoker invoke;
    const char* signature;  // "pif": pointer, int, float, one letter per parameter
};
template <auto F> struct Kernel;
template <class... A, void (*F)(A...)> struct Kernel<F> {
    static constexpr char signature[] = {kind_of<A>()..., '\0'};
    template <size_t... I> static void call(const unsigned long long* s, std::index_sequence<I...>) {
        F(arg_of<A>(s[I])...);
    }
    static void invoke(const unsigned long long* s) { call(s, std::index_sequence_for<A...>{}); }
};
}  // namespace dripstone

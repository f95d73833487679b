// __half for Dripstone's CPU executor: storage as IEEE binary16 bits, arithmetic through float
// (what the course's kernels do: convert, compute in fp32, convert back), round-to-nearest-even.
#pragma once
#include <cstdint>
#include <cstring>

struct __half {
    uint16_t bits;
};
struct __half2 {
    __half x, y;
};
inline __half __float2half_rn(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) return {(uint16_t)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u))};
    if (mag >= 0x477ff000u) return {(uint16_t)(sign | 0x7c00u)};  // rounds past 65504: inf
    if (mag < 0x38800000u) {  // subnormal half (or zero)
        float a;
        const uint32_t am = mag;
        std::memcpy(&a, &am, 4);
        const float scaled = a * 16777216.0f;  // 2^24: units of the smallest subnormal
        const float r = __builtin_nearbyintf(scaled);
        return {(uint16_t)(sign | (uint32_t)r)};
    }
    const uint32_t e = ((mag >> 23) - 112u) << 10, m = mag & 0x7fffffu;
    uint32_t h = e | (m >> 13);
    const uint32_t rest = m & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return {(uint16_t)(sign | h)};
}
inline float __half2float(__half h) {
    const uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16, e = (h.bits >> 10) & 0x1fu, m = h.bits & 0x3ffu;
    uint32_t x;
    if (e == 0x1f) {
        x = sign | 0x7f800000u | (m << 13);
    } else if (e == 0) {
        float f = (float)m * 5.9604644775390625e-8f;  // m * 2^-24
        return sign ? -f : f;
    } else {
        x = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}
inline __half __float2half(float f) { return __float2half_rn(f); }
inline __half __int2half_rn(int i) { return __float2half_rn((float)i); }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
inline __half2 __floats2half2_rn(float a, float b) { return {__float2half_rn(a), __float2half_rn(b)}; }
inline __half2 __float2half2_rn(float a) { return {__float2half_rn(a), __float2half_rn(a)}; }
inline __half __hadd(__half a, __half b) { return __float2half_rn(__half2float(a) + __half2float(b)); }
inline __half __hmul(__half a, __half b) { return __float2half_rn(__half2float(a) * __half2float(b)); }
inline __half __hsub(__half a, __half b) { return __float2half_rn(__half2float(a) - __half2float(b)); }
inline __half __hfma(__half a, __half b, __half c) {
    return __float2half_rn(__half2float(a) * __half2float(b) + __half2float(c));
}
inline __half __hmax(__half a, __half b) { return __half2float(a) < __half2float(b) ? b : a; }
inline __half __hmin(__half a, __half b) { return __half2float(b) < __half2float(a) ? b : a; }
typedef __half half;

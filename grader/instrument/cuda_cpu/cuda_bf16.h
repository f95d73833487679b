// __nv_bfloat16 for Dripstone's CPU executor: the top 16 bits of an fp32, round-to-nearest-even.
#pragma once
#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
    uint16_t bits;
};
struct __nv_bfloat162 {
    __nv_bfloat16 x, y;
};
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return {(uint16_t)((x >> 16) | 0x40u)};  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return {(uint16_t)(x >> 16)};
}
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
inline float __bfloat162float(__nv_bfloat16 h) {
    const uint32_t x = (uint32_t)h.bits << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__float2bfloat16_rn(a), __float2bfloat16_rn(b)}; }
typedef __nv_bfloat16 nv_bfloat16;

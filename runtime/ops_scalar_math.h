/* Scalar math shared by every backend: the float16/bfloat16 types and their
 * conversions, and the scalar functions kernels need (gelu, sigmoid, ...).
 *
 * Everything is static inline and marked OPS_HOST_DEVICE, so the CPU kernels and
 * the CUDA kernels compile the same definitions and cannot drift. */
#ifndef OPS_SCALAR_MATH_H
#define OPS_SCALAR_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define OPS_HOST_DEVICE __host__ __device__
#else
#define OPS_HOST_DEVICE
#endif
#define OPS_INLINE static inline OPS_HOST_DEVICE

/* IEEE binary16 and bfloat16, as distinct types so _Generic can tell them apart. */
typedef struct ops_half {
    uint16_t bits;
} ops_half;
typedef struct ops_bfloat16 {
    uint16_t bits;
} ops_bfloat16;

OPS_INLINE uint32_t ops_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

OPS_INLINE float ops_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

OPS_INLINE float ops_half_to_float(ops_half h)
{
    const uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    const uint32_t exp = (h.bits >> 10) & 0x1fu;
    uint32_t mant = h.bits & 0x3ffu;
    if (exp == 0x1f) /* inf or nan: keep the payload */
        return ops_f32_from_bits(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return ops_f32_from_bits(sign);
        /* subnormal: value = mant * 2^-24 exactly representable in float */
        float v = (float)mant * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return ops_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* Round to nearest, ties to even; overflow goes to inf, NaN stays NaN. */
OPS_INLINE ops_half ops_float_to_half(float f)
{
    const uint32_t u = ops_f32_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t absu = u & 0x7fffffffu;
    ops_half h;
    if (absu >= 0x7f800000u) { /* inf or nan */
        h.bits = (uint16_t)(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
        return h;
    }
    if (absu >= 0x477ff000u) { /* rounds to >= 65520: inf */
        h.bits = (uint16_t)(sign | 0x7c00u);
        return h;
    }
    if (absu < 0x38800000u) { /* below the smallest normal half (2^-14): subnormal or 0 */
        /* Adding 0.5 (2^-1) aligns the half subnormal grid (2^-24) with the float ulp,
         * so the FPU's own round-to-nearest-even does the rounding. */
        const float magic = 0.5f;
        float v = ops_f32_from_bits(absu) + magic;
        h.bits = (uint16_t)(sign | (uint16_t)(ops_f32_bits(v) - ops_f32_bits(magic)));
        return h;
    }
    /* normal: rebias the exponent and round the 13 dropped mantissa bits */
    uint32_t m = absu + ((uint32_t)(15 - 127) << 23);
    m += 0xfffu + ((m >> 13) & 1u);
    h.bits = (uint16_t)(sign | (uint16_t)(m >> 13));
    return h;
}

OPS_INLINE float ops_bfloat16_to_float(ops_bfloat16 b)
{
    return ops_f32_from_bits((uint32_t)b.bits << 16);
}

/* Round to nearest, ties to even; NaN stays a quiet NaN. */
OPS_INLINE ops_bfloat16 ops_float_to_bfloat16(float f)
{
    uint32_t u = ops_f32_bits(f);
    ops_bfloat16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        b.bits = (uint16_t)((u >> 16) | 0x40u);
        return b;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = (uint16_t)(u >> 16);
    return b;
}

#endif /* OPS_SCALAR_MATH_H */

/* Scalar math shared by every backend: the float16/bfloat16 types and their
 * conversions, and the scalar functions kernels need (gelu, sigmoid, ...).
 *
 * Everything is static inline and marked OPS_HOST_DEVICE, so the CPU kernels and
 * the CUDA kernels compile the same definitions and cannot drift. */
#ifndef OPS_SCALAR_MATH_H
#define OPS_SCALAR_MATH_H

#include <float.h>
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
/* For the per-element conversions: GCC otherwise keeps them out of line in every
 * float16/bfloat16 loop, which costs more than the arithmetic. */
#if defined(__GNUC__)
#define OPS_INLINE_ALWAYS static inline __attribute__((always_inline)) OPS_HOST_DEVICE
#else
#define OPS_INLINE_ALWAYS OPS_INLINE
#endif

/* IEEE binary16 and bfloat16, as distinct types so _Generic can tell them apart. */
typedef struct ops_half {
    uint16_t bits;
} ops_half;
typedef struct ops_bfloat16 {
    uint16_t bits;
} ops_bfloat16;

OPS_INLINE_ALWAYS uint32_t ops_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

OPS_INLINE_ALWAYS float ops_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

OPS_INLINE_ALWAYS float ops_half_to_float(ops_half h)
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
OPS_INLINE_ALWAYS ops_half ops_float_to_half(float f)
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

OPS_INLINE_ALWAYS float ops_bfloat16_to_float(ops_bfloat16 b)
{
    return ops_f32_from_bits((uint32_t)b.bits << 16);
}

/* Round to nearest, ties to even; NaN stays a quiet NaN. */
OPS_INLINE_ALWAYS ops_bfloat16 ops_float_to_bfloat16(float f)
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

/* ---- scalar functions -------------------------------------------------------
 *
 * One definition per function and precision (_f32 for float, _f64 for double), used
 * by the CPU kernels and compiled for the device by the CUDA kernels.  float16 and
 * bfloat16 kernels call the _f32 forms (their opmath type) and round once on store.
 * C callers may use the type-generic ops_math_<fn>(x), which picks the form from the
 * type of x (float or double); C++ (CUDA) gets overloads of the same name.
 *
 * Names carry ops_math_ so they cannot collide with the generated op entry points
 * (ops_sigmoid(), ops_gelu(), ... take tensors). */

/* Always inlined on the host: a kernel file instantiates each function for several
 * dtypes and loops, and an out-of-line call (GCC's size heuristics otherwise pick one)
 * keeps the element loop from vectorising. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define OPS_MATH_INLINE_ OPS_INLINE __attribute__((always_inline))
#else
#define OPS_MATH_INLINE_ OPS_INLINE
#endif

/* 1 / (1 + e^-x): saturates to 0 and 1 without overflow traps (e^-x -> inf gives 0). */
OPS_MATH_INLINE_ float ops_math_sigmoid_f32(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

OPS_MATH_INLINE_ double ops_math_sigmoid_f64(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* x * sigmoid(x), written as x / (1 + e^-x) (one division, as PyTorch's silu). */
OPS_MATH_INLINE_ float ops_math_silu_f32(float x)
{
    return x / (1.0f + expf(-x));
}

OPS_MATH_INLINE_ double ops_math_silu_f64(double x)
{
    return x / (1.0 + exp(-x));
}

/* gelu(x) = x * Phi(x) = x/2 * (1 + erf(x/sqrt 2)), evaluated as x/2 * erfc(-x/sqrt 2):
 * the same function, without the cancellation 1 + erf(x) suffers for x << 0. */
OPS_MATH_INLINE_ float ops_math_gelu_f32(float x)
{
    return 0.5f * x * erfcf(-x * 0.70710678118654752440f);
}

OPS_MATH_INLINE_ double ops_math_gelu_f64(double x)
{
    return 0.5 * x * erfc(-x * 0.70710678118654752440);
}

/* gelu's tanh approximation: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). */
OPS_MATH_INLINE_ float ops_math_gelu_tanh_f32(float x)
{
    const float inner = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

OPS_MATH_INLINE_ double ops_math_gelu_tanh_f64(double x)
{
    const double inner = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
}

/* 1 / sqrt(x): inf at +-0 (signed like the zero), NaN below 0. */
OPS_MATH_INLINE_ float ops_math_rsqrt_f32(float x)
{
    return 1.0f / sqrtf(x);
}

OPS_MATH_INLINE_ double ops_math_rsqrt_f64(double x)
{
    return 1.0 / sqrt(x);
}

/* Rounding to integers.  On the host these are branch-free arithmetic rather than
 * calls to floorf() and friends: x86-64's baseline (SSE2) has no rounding
 * instruction, so libm's are calls, and calls keep a loop scalar.  The core is the
 * classic "add and subtract 2^23" (2^52 for double): for |x| below it the sum lands
 * where the ulp is 1, so the FPU's round-to-nearest-even does the rounding; larger
 * magnitudes, inf and NaN are already integral and pass through.  Choices are made
 * with bit masks from integer compares, never with ?: on floats: under the default
 * -ftrapping-math the compiler will not turn a conditional float operation into a
 * vector select, while masks vectorise.  Exact for every float (checked against libm
 * over all 2^32 patterns), -0.0 and NaN payloads included.  It needs IEEE evaluation
 * in the type itself (FLT_EVAL_METHOD 0, no -ffast-math reassociation) and the
 * default rounding mode, which libops never changes.  The device uses its rounding
 * instructions. */
#if defined(__CUDA_ARCH__) || (defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0)
#define OPS_MATH_LIBM_ROUNDING_ 1
#else
OPS_MATH_INLINE_ uint64_t ops_f64_bits_(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

OPS_MATH_INLINE_ double ops_f64_from_bits_(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* a where mask is all ones, b where it is all zeros. */
OPS_MATH_INLINE_ float ops_select_f32_(uint32_t mask, float a, float b)
{
    return ops_f32_from_bits((ops_f32_bits(a) & mask) | (ops_f32_bits(b) & ~mask));
}

OPS_MATH_INLINE_ double ops_select_f64_(uint64_t mask, double a, double b)
{
    return ops_f64_from_bits_((ops_f64_bits_(a) & mask) | (ops_f64_bits_(b) & ~mask));
}

/* |x| rounded to an integer: to nearest even, then (toward_zero) down by one where
 * that went past |x|.  Non-negative floats order like their bit patterns. */
OPS_MATH_INLINE_ float ops_round_abs_f32_(float x, bool toward_zero)
{
    const uint32_t ax = ops_f32_bits(x) & 0x7fffffffu;
    const float a = ops_f32_from_bits(ax);
    float r = (a + 8388608.0f) - 8388608.0f;
    if (toward_zero) /* a compile-time constant at every call */
        r = ops_select_f32_(0u - (uint32_t)(ops_f32_bits(r) > ax), r - 1.0f, r);
    return ops_select_f32_(0u - (uint32_t)(ax < 0x4b000000u), r, a); /* 0x4b000000: 2^23 */
}

OPS_MATH_INLINE_ double ops_round_abs_f64_(double x, bool toward_zero)
{
    const uint64_t ax = ops_f64_bits_(x) & 0x7fffffffffffffffu;
    const double a = ops_f64_from_bits_(ax);
    double r = (a + 4503599627370496.0) - 4503599627370496.0;
    if (toward_zero)
        r = ops_select_f64_(0u - (uint64_t)(ops_f64_bits_(r) > ax), r - 1.0, r);
    return ops_select_f64_(0u - (uint64_t)(ax < 0x4330000000000000u), r, a); /* 2^52 */
}
#endif

/* Round half to even (round(2.5) = 2, round(-0.4) = -0.0), as PyTorch and NumPy. */
OPS_MATH_INLINE_ float ops_math_round_even_f32(float x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return nearbyintf(x);
#else
    return ops_f32_from_bits(ops_f32_bits(ops_round_abs_f32_(x, false)) | (ops_f32_bits(x) & 0x80000000u));
#endif
}

OPS_MATH_INLINE_ double ops_math_round_even_f64(double x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return nearbyint(x);
#else
    return ops_f64_from_bits_(ops_f64_bits_(ops_round_abs_f64_(x, false)) |
                              (ops_f64_bits_(x) & 0x8000000000000000u));
#endif
}

/* Round toward zero. */
OPS_MATH_INLINE_ float ops_math_trunc_f32(float x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return truncf(x);
#else
    return ops_f32_from_bits(ops_f32_bits(ops_round_abs_f32_(x, true)) | (ops_f32_bits(x) & 0x80000000u));
#endif
}

OPS_MATH_INLINE_ double ops_math_trunc_f64(double x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return trunc(x);
#else
    return ops_f64_from_bits_(ops_f64_bits_(ops_round_abs_f64_(x, true)) |
                              (ops_f64_bits_(x) & 0x8000000000000000u));
#endif
}

/* Round down: trunc, less one where x is negative and was not an integer (the bit
 * patterns differ; floor(-0.0) = -0.0). */
OPS_MATH_INLINE_ float ops_math_floor_f32(float x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return floorf(x);
#else
    const float t = ops_math_trunc_f32(x);
    const uint32_t m = (0u - (ops_f32_bits(x) >> 31)) & (0u - (uint32_t)(ops_f32_bits(t) != ops_f32_bits(x)));
    return ops_select_f32_(m, t - 1.0f, t);
#endif
}

OPS_MATH_INLINE_ double ops_math_floor_f64(double x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return floor(x);
#else
    const double t = ops_math_trunc_f64(x);
    const uint64_t m = (0u - (ops_f64_bits_(x) >> 63)) & (0u - (uint64_t)(ops_f64_bits_(t) != ops_f64_bits_(x)));
    return ops_select_f64_(m, t - 1.0, t);
#endif
}

/* Round up: trunc, plus one where x is positive and was not an integer (selected,
 * not added, so that ceil(-0.5) keeps its -0.0). */
OPS_MATH_INLINE_ float ops_math_ceil_f32(float x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return ceilf(x);
#else
    const float t = ops_math_trunc_f32(x);
    const uint32_t m = (0u - (~ops_f32_bits(x) >> 31)) & (0u - (uint32_t)(ops_f32_bits(t) != ops_f32_bits(x)));
    return ops_select_f32_(m, t + 1.0f, t);
#endif
}

OPS_MATH_INLINE_ double ops_math_ceil_f64(double x)
{
#ifdef OPS_MATH_LIBM_ROUNDING_
    return ceil(x);
#else
    const double t = ops_math_trunc_f64(x);
    const uint64_t m = (0u - (~ops_f64_bits_(x) >> 63)) & (0u - (uint64_t)(ops_f64_bits_(t) != ops_f64_bits_(x)));
    return ops_select_f64_(m, t + 1.0, t);
#endif
}

/* x - trunc(x), keeping x's sign (frac(-1.5) = -0.5); NaN for +-inf, as PyTorch. */
OPS_MATH_INLINE_ float ops_math_frac_f32(float x)
{
    return x - ops_math_trunc_f32(x);
}

OPS_MATH_INLINE_ double ops_math_frac_f64(double x)
{
    return x - ops_math_trunc_f64(x);
}

/* -1, 0 or 1 as PyTorch's sign, (0 < x) - (x < 0): zeros and NaN give +0 (NumPy's
 * sign would give NaN for NaN). */
OPS_MATH_INLINE_ float ops_math_sign_f32(float x)
{
    return (float)((0.0f < x) - (x < 0.0f));
}

OPS_MATH_INLINE_ double ops_math_sign_f64(double x)
{
    return (double)((0.0 < x) - (x < 0.0));
}

/* max(x, 0) that lets NaN through (relu(NaN) = NaN, as PyTorch's clamp_min). */
OPS_MATH_INLINE_ float ops_math_relu_f32(float x)
{
    return x < 0.0f ? 0.0f : x;
}

OPS_MATH_INLINE_ double ops_math_relu_f64(double x)
{
    return x < 0.0 ? 0.0 : x;
}

/* NaN -> nan, +inf -> posinf, -inf -> neginf; other values unchanged. */
OPS_MATH_INLINE_ float ops_math_nan_to_num_f32(float x, float nan_v, float posinf_v, float neginf_v)
{
    return x != x ? nan_v : x == INFINITY ? posinf_v : x == -INFINITY ? neginf_v : x;
}

OPS_MATH_INLINE_ double ops_math_nan_to_num_f64(double x, double nan_v, double posinf_v, double neginf_v)
{
    return x != x ? nan_v : x == INFINITY ? posinf_v : x == -INFINITY ? neginf_v : x;
}

#if defined(__cplusplus)
/* Overloads: the C++ spelling of the type-generic names below. */
#define OPS_MATH_OVERLOAD1_(fn)                                                          \
    OPS_MATH_INLINE_ float ops_math_##fn(float x) { return ops_math_##fn##_f32(x); }           \
    OPS_MATH_INLINE_ double ops_math_##fn(double x) { return ops_math_##fn##_f64(x); }
OPS_MATH_OVERLOAD1_(sigmoid)
OPS_MATH_OVERLOAD1_(silu)
OPS_MATH_OVERLOAD1_(gelu)
OPS_MATH_OVERLOAD1_(gelu_tanh)
OPS_MATH_OVERLOAD1_(rsqrt)
OPS_MATH_OVERLOAD1_(frac)
OPS_MATH_OVERLOAD1_(round_even)
OPS_MATH_OVERLOAD1_(trunc)
OPS_MATH_OVERLOAD1_(floor)
OPS_MATH_OVERLOAD1_(ceil)
OPS_MATH_OVERLOAD1_(sign)
OPS_MATH_OVERLOAD1_(relu)
#undef OPS_MATH_OVERLOAD1_
OPS_MATH_INLINE_ float ops_math_nan_to_num(float x, float n, float p, float m)
{
    return ops_math_nan_to_num_f32(x, n, p, m);
}
OPS_MATH_INLINE_ double ops_math_nan_to_num(double x, double n, double p, double m)
{
    return ops_math_nan_to_num_f64(x, n, p, m);
}
#else
/* Type-generic forms: ops_math_sigmoid(x) is the _f32 form for a float x and the _f64
 * form for a double; any other type is a compile error. */
#define OPS_MATH_GENERIC_(fn, x) _Generic((x), float: fn##_f32, double: fn##_f64)
#define ops_math_sigmoid(x) OPS_MATH_GENERIC_(ops_math_sigmoid, x)(x)
#define ops_math_silu(x) OPS_MATH_GENERIC_(ops_math_silu, x)(x)
#define ops_math_gelu(x) OPS_MATH_GENERIC_(ops_math_gelu, x)(x)
#define ops_math_gelu_tanh(x) OPS_MATH_GENERIC_(ops_math_gelu_tanh, x)(x)
#define ops_math_rsqrt(x) OPS_MATH_GENERIC_(ops_math_rsqrt, x)(x)
#define ops_math_frac(x) OPS_MATH_GENERIC_(ops_math_frac, x)(x)
#define ops_math_round_even(x) OPS_MATH_GENERIC_(ops_math_round_even, x)(x)
#define ops_math_trunc(x) OPS_MATH_GENERIC_(ops_math_trunc, x)(x)
#define ops_math_floor(x) OPS_MATH_GENERIC_(ops_math_floor, x)(x)
#define ops_math_ceil(x) OPS_MATH_GENERIC_(ops_math_ceil, x)(x)
#define ops_math_sign(x) OPS_MATH_GENERIC_(ops_math_sign, x)(x)
#define ops_math_relu(x) OPS_MATH_GENERIC_(ops_math_relu, x)(x)
#define ops_math_nan_to_num(x, n, p, m) OPS_MATH_GENERIC_(ops_math_nan_to_num, x)(x, n, p, m)
#endif

#endif /* OPS_SCALAR_MATH_H */

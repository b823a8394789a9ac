/* The per-element arithmetic of the elementwise families (binary, unary, compare,
 * ternary, activation), shared by the CPU kernels (kernels/cpu/) and the CUDA ones
 * (kernels/cuda/) so the two backends compute the same thing (issue 7, item 4):
 * integer division, remainder, powers and shifts with PyTorch's rules for the cases
 * C leaves undefined, NaN-propagating maximum/minimum/clamp, the float forms of floor
 * division and Python's remainder, the activation formulas, and the libm picks.
 *
 * Naming as in ops_scalar_math.h: ops_math_<fn>_<suffix> per type (u8 i8 i16 i32 i64
 * f32 f64, b for bool), ops_math_<fn>(x, ...) the type-generic spelling (C:
 * _Generic on the first argument; C++: overloads), which is what kernels call with
 * their opmath values.  Integer arithmetic wraps as the project's (-fwrapv; CUDA's
 * integers wrap); the helpers never execute what C leaves undefined even so (x / 0 is
 * refused before a kernel runs; INT_MIN / -1 and INT_MIN % -1 take their own branch;
 * shift counts are range-checked). */
#ifndef OPS_ELEMENTWISE_MATH_H
#define OPS_ELEMENTWISE_MATH_H

#include "ops_scalar_math.h"

/* ---- libm, float and double ------------------------------------------------------
 * ops_math_exp_f32 is expf, ops_math_exp_f64 exp, and so on: the kernels name one
 * function whatever their opmath type, and the device compiles CUDA's versions. */
#define OPS_MATH_LIBM1_(fn)                                                              \
    OPS_MATH_INLINE_ float ops_math_##fn##_f32(float x) { return fn##f(x); }             \
    OPS_MATH_INLINE_ double ops_math_##fn##_f64(double x) { return fn(x); }
#define OPS_MATH_LIBM2_(fn)                                                              \
    OPS_MATH_INLINE_ float ops_math_##fn##_f32(float x, float y) { return fn##f(x, y); } \
    OPS_MATH_INLINE_ double ops_math_##fn##_f64(double x, double y) { return fn(x, y); }

#define OPS_MATH_LIBM1_LIST_(X)                                                          \
    X(fabs) X(sqrt) X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sin)     \
    X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh)     \
    X(atanh) X(erf) X(erfc)
OPS_MATH_LIBM1_LIST_(OPS_MATH_LIBM1_)
OPS_MATH_LIBM2_(atan2)
OPS_MATH_LIBM2_(pow)
OPS_MATH_LIBM2_(fmod)

/* ---- integer division, remainder, power ------------------------------------------ */

/* Signed types: b == -1 has its own branch (INT_MIN / -1 overflows in hardware);
 * floor division and Python's remainder correct C's truncation when the remainder's
 * sign differs from the divisor's.  pow follows PyTorch's powi: a negative exponent
 * gives 0 except for bases 1 and -1. */
#define OPS_MATH_SIGNED_INT_(T, S)                                                       \
    OPS_MATH_INLINE_ T ops_math_div_trunc_##S(T a, T b)                                 \
    {                                                                                    \
        return b == -1 ? (T)-a : (T)(a / b);                                             \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_div_floor_##S(T a, T b)                                 \
    {                                                                                    \
        if (b == -1)                                                                     \
            return (T)-a;                                                                \
        const T q = (T)(a / b), r = (T)(a % b);                                          \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;                        \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_remainder_##S(T a, T b)                                 \
    {                                                                                    \
        if (b == -1)                                                                     \
            return 0;                                                                    \
        const T r = (T)(a % b);                                                          \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;                        \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_fmod_##S(T a, T b)                                      \
    {                                                                                    \
        return b == -1 ? (T)0 : (T)(a % b);                                              \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_pow_##S(T a, T b)                                       \
    {                                                                                    \
        if (b < 0) {                                                                     \
            if (a == 1)                                                                  \
                return 1;                                                                \
            if (a == -1)                                                                 \
                return (b & 1) ? (T)-1 : (T)1;                                           \
            return 0;                                                                    \
        }                                                                                \
        T r = 1;                                                                         \
        while (b) {                                                                      \
            if (b & 1)                                                                   \
                r = (T)(r * a);                                                          \
            b = (T)(b / 2);                                                              \
            a = (T)(a * a);                                                              \
        }                                                                                \
        return r;                                                                        \
    }

OPS_MATH_SIGNED_INT_(int8_t, i8)
OPS_MATH_SIGNED_INT_(int16_t, i16)
OPS_MATH_SIGNED_INT_(int32_t, i32)
OPS_MATH_SIGNED_INT_(int64_t, i64)
#undef OPS_MATH_SIGNED_INT_

/* uint8: C's division is already floor division, its remainder Python's. */
OPS_MATH_INLINE_ uint8_t ops_math_div_trunc_u8(uint8_t a, uint8_t b) { return (uint8_t)(a / b); }
OPS_MATH_INLINE_ uint8_t ops_math_div_floor_u8(uint8_t a, uint8_t b) { return (uint8_t)(a / b); }
OPS_MATH_INLINE_ uint8_t ops_math_remainder_u8(uint8_t a, uint8_t b) { return (uint8_t)(a % b); }
OPS_MATH_INLINE_ uint8_t ops_math_fmod_u8(uint8_t a, uint8_t b) { return (uint8_t)(a % b); }
OPS_MATH_INLINE_ uint8_t ops_math_pow_u8(uint8_t a, uint8_t b)
{
    uint8_t r = 1;
    while (b) {
        if (b & 1)
            r = (uint8_t)(r * a);
        b = (uint8_t)(b / 2);
        a = (uint8_t)(a * a);
    }
    return r;
}

/* ---- floating division and remainder --------------------------------------------- */

/* Python's floor division (PyTorch's div_floor_floating): the quotient of the
 * exactly-rounded remainder, so div_floor(a, b) * b + remainder(a, b) == a; the
 * remainder takes the divisor's sign.  trunc division is trunc(a / b). */
#define OPS_MATH_FLOAT_DIV_(T, S, SUF)                                                   \
    OPS_MATH_INLINE_ T ops_math_div_floor_##S(T a, T b)                                 \
    {                                                                                    \
        if (b == 0)                                                                      \
            return a / b;                                                                \
        const T mod = fmod##SUF(a, b);                                                   \
        T div = (a - mod) / b;                                                           \
        if (mod != 0 && (b < 0) != (mod < 0))                                            \
            div -= 1;                                                                    \
        if (div == 0)                                                                    \
            return copysign##SUF((T)0, a / b);                                           \
        T fl = floor##SUF(div);                                                          \
        if (div - fl > (T)0.5)                                                           \
            fl += 1;                                                                     \
        return fl;                                                                       \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_remainder_##S(T a, T b)                                 \
    {                                                                                    \
        T mod = fmod##SUF(a, b);                                                         \
        if (mod != 0 && (b < 0) != (mod < 0))                                            \
            mod += b;                                                                    \
        return mod;                                                                      \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_div_trunc_##S(T a, T b)                                 \
    {                                                                                    \
        return ops_math_trunc_##S(a / b);                                                \
    }

OPS_MATH_FLOAT_DIV_(float, f32, f)
OPS_MATH_FLOAT_DIV_(double, f64, )
#undef OPS_MATH_FLOAT_DIV_

/* ---- maximum, minimum, clamp ----------------------------------------------------- */

/* Floats propagate NaN from either side (on ties the first argument wins, as
 * NumPy's); integers and bool compare plainly. */
#define OPS_MATH_MAXMIN_FLOAT_(T, S)                                                     \
    OPS_MATH_INLINE_ T ops_math_max_##S(T a, T b) { return (a >= b || a != a) ? a : b; } \
    OPS_MATH_INLINE_ T ops_math_min_##S(T a, T b) { return (a <= b || a != a) ? a : b; }
#define OPS_MATH_MAXMIN_INT_(T, S)                                                       \
    OPS_MATH_INLINE_ T ops_math_max_##S(T a, T b) { return a > b ? a : b; }              \
    OPS_MATH_INLINE_ T ops_math_min_##S(T a, T b) { return a < b ? a : b; }
/* fmax/fmin ignore a NaN (C99's fmax): the number when one side is NaN, NaN only when
 * both are (other's then); x on ties, so fmax(-0.0, 0.0) is -0.0 as PyTorch's.  The
 * vector loops (kernels/cpu/vec/vec_binary.c) compute the same selects. */
#define OPS_MATH_FMAXMIN_FLOAT_(T, S)                                                    \
    OPS_MATH_INLINE_ T ops_math_fmax_##S(T a, T b) { return (a != a || b > a) ? b : a; } \
    OPS_MATH_INLINE_ T ops_math_fmin_##S(T a, T b) { return (a != a || b < a) ? b : a; }
#define OPS_MATH_FMAXMIN_INT_(T, S)                                                      \
    OPS_MATH_INLINE_ T ops_math_fmax_##S(T a, T b) { return b > a ? b : a; }             \
    OPS_MATH_INLINE_ T ops_math_fmin_##S(T a, T b) { return b < a ? b : a; }
OPS_MATH_MAXMIN_FLOAT_(float, f32)
OPS_MATH_MAXMIN_FLOAT_(double, f64)
OPS_MATH_FMAXMIN_FLOAT_(float, f32)
OPS_MATH_FMAXMIN_FLOAT_(double, f64)
OPS_MATH_FMAXMIN_INT_(bool, b)
OPS_MATH_FMAXMIN_INT_(uint8_t, u8)
OPS_MATH_FMAXMIN_INT_(int8_t, i8)
OPS_MATH_FMAXMIN_INT_(int16_t, i16)
OPS_MATH_FMAXMIN_INT_(int32_t, i32)
OPS_MATH_FMAXMIN_INT_(int64_t, i64)
#undef OPS_MATH_FMAXMIN_FLOAT_
#undef OPS_MATH_FMAXMIN_INT_
OPS_MATH_MAXMIN_INT_(bool, b)
OPS_MATH_MAXMIN_INT_(uint8_t, u8)
OPS_MATH_MAXMIN_INT_(int8_t, i8)
OPS_MATH_MAXMIN_INT_(int16_t, i16)
OPS_MATH_MAXMIN_INT_(int32_t, i32)
OPS_MATH_MAXMIN_INT_(int64_t, i64)
#undef OPS_MATH_MAXMIN_FLOAT_
#undef OPS_MATH_MAXMIN_INT_

/* clamp(x, lo, hi) = min(max(x, lo), hi), PyTorch's order: lo > hi gives hi; a NaN
 * anywhere gives NaN for floats.  A missing float bound is an infinite one; the
 * integer form takes presence flags instead (every integer is a valid bound). */
#define OPS_MATH_CLAMP_(T, S)                                                            \
    OPS_MATH_INLINE_ T ops_math_clamp_##S(T x, T lo, T hi)                              \
    {                                                                                    \
        return ops_math_min_##S(ops_math_max_##S(x, lo), hi);                            \
    }
#define OPS_MATH_CLAMP_OPT_(T, S)                                                        \
    OPS_MATH_CLAMP_(T, S)                                                                \
    OPS_MATH_INLINE_ T ops_math_clamp_opt_##S(T x, T lo, T hi, bool has_lo, bool has_hi) \
    {                                                                                    \
        const T v = has_lo ? ops_math_max_##S(x, lo) : x;                                \
        return has_hi ? ops_math_min_##S(v, hi) : v;                                     \
    }
OPS_MATH_CLAMP_(float, f32)
OPS_MATH_CLAMP_(double, f64)
OPS_MATH_CLAMP_OPT_(uint8_t, u8)
OPS_MATH_CLAMP_OPT_(int8_t, i8)
OPS_MATH_CLAMP_OPT_(int16_t, i16)
OPS_MATH_CLAMP_OPT_(int32_t, i32)
OPS_MATH_CLAMP_OPT_(int64_t, i64)
#undef OPS_MATH_CLAMP_
#undef OPS_MATH_CLAMP_OPT_

/* ---- shifts ---------------------------------------------------------------------- */

/* PyTorch's rules for counts C leaves undefined: a left shift by a negative count or
 * by the width or more gives 0; a right shift by such a count gives what shifting by
 * the width minus the sign bit gives (all sign bits for signed types, 0 for uint8).
 * The count is read as signed (uint8 counts >= 128 are negative). */
#define OPS_MATH_SHIFTS_(T, UT, ST, S, SIGNED)                                           \
    OPS_MATH_INLINE_ T ops_math_lshift_##S(T a, T b)                                    \
    {                                                                                    \
        const int width = (int)sizeof(T) * 8;                                            \
        if ((ST)b < 0 || (ST)b >= width)                                                 \
            return 0;                                                                    \
        return (T)((UT)a << (ST)b);                                                      \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_rshift_##S(T a, T b)                                    \
    {                                                                                    \
        const int max_shift = (int)sizeof(T) * 8 - (SIGNED);                             \
        if ((ST)b < 0 || (ST)b >= max_shift)                                             \
            return (T)(a >> max_shift);                                                  \
        return (T)(a >> (ST)b);                                                          \
    }
OPS_MATH_SHIFTS_(uint8_t, uint8_t, int8_t, u8, 0)
OPS_MATH_SHIFTS_(int8_t, uint8_t, int8_t, i8, 1)
OPS_MATH_SHIFTS_(int16_t, uint16_t, int16_t, i16, 1)
OPS_MATH_SHIFTS_(int32_t, uint32_t, int32_t, i32, 1)
OPS_MATH_SHIFTS_(int64_t, uint64_t, int64_t, i64, 1)
#undef OPS_MATH_SHIFTS_

/* ---- blends ---------------------------------------------------------------------- */

/* lerp, PyTorch's formula: from whichever end is nearer, for accuracy at both ends. */
#define OPS_MATH_LERP_(T, S)                                                             \
    OPS_MATH_INLINE_ T ops_math_lerp_##S(T a, T b, T w)                                 \
    {                                                                                    \
        return ops_math_fabs_##S(w) < (T)0.5 ? a + w * (b - a) : b - (b - a) * ((T)1 - w); \
    }
OPS_MATH_LERP_(float, f32)
OPS_MATH_LERP_(double, f64)
#undef OPS_MATH_LERP_

/* ---- activations (float and double) ----------------------------------------------
 * The formulas and their evaluation order follow PyTorch's scalar kernels
 * (aten/src/ATen/native/cpu/Activation.cpp), so NaN, infinities and signed zeros come
 * out the same way; the parameters are already in the opmath type. */
#define OPS_MATH_ACTIVATIONS_(T, S)                                                      \
    /* elu: x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale */             \
    OPS_MATH_INLINE_ T ops_math_elu_##S(T x, T negcoef, T poscoef, T negiptcoef)        \
    {                                                                                    \
        return x <= 0 ? ops_math_expm1_##S(x * negiptcoef) * negcoef : x * poscoef;      \
    }                                                                                    \
    /* linear above the threshold, where log1p(exp(x * beta)) / beta is x to working     \
     * precision */                                                                      \
    OPS_MATH_INLINE_ T ops_math_softplus_##S(T x, T beta, T threshold)                  \
    {                                                                                    \
        return x * beta > threshold ? x : ops_math_log1p_##S(ops_math_exp_##S(x * beta)) / beta; \
    }                                                                                    \
    /* x * tanh(softplus(x)) */                                                          \
    OPS_MATH_INLINE_ T ops_math_mish_##S(T x)                                           \
    {                                                                                    \
        return x * ops_math_tanh_##S(ops_math_log1p_##S(ops_math_exp_##S(x)));           \
    }                                                                                    \
    /* min(x, 0) - log1p(exp(-|x|)): neither overflows exp for large |x| nor loses the   \
     * result to log(1) for large positive x */                                          \
    OPS_MATH_INLINE_ T ops_math_log_sigmoid_##S(T x)                                    \
    {                                                                                    \
        return (x < 0 ? x : (T)0) - ops_math_log1p_##S(ops_math_exp_##S(-ops_math_fabs_##S(x))); \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_softsign_##S(T x)                                       \
    {                                                                                    \
        return x / (1 + ops_math_fabs_##S(x));                                           \
    }                                                                                    \
    OPS_MATH_INLINE_ T ops_math_leaky_relu_##S(T x, T slope)                            \
    {                                                                                    \
        return x > 0 ? x : x * slope;                                                    \
    }                                                                                    \
    /* PyTorch's clamp order: max with lo first, then min with hi (lo > hi gives hi);    \
     * NaN passes both comparisons */                                                    \
    OPS_MATH_INLINE_ T ops_math_hardtanh_##S(T x, T lo, T hi)                           \
    {                                                                                    \
        return (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x);                          \
    }                                                                                    \
    /* min(max(x + 3, 0), 6) / 6, NaN propagating */                                     \
    OPS_MATH_INLINE_ T ops_math_hardsigmoid_##S(T x)                                    \
    {                                                                                    \
        return ops_math_hardtanh_##S(x + (T)3, (T)0, (T)6) / (T)6;                       \
    }                                                                                    \
    /* x * min(max(x + 3, 0), 6) / 6, evaluated left to right as PyTorch's */            \
    OPS_MATH_INLINE_ T ops_math_hardswish_##S(T x)                                      \
    {                                                                                    \
        return x * ops_math_hardtanh_##S(x + (T)3, (T)0, (T)6) / (T)6;                   \
    }
OPS_MATH_ACTIVATIONS_(float, f32)
OPS_MATH_ACTIVATIONS_(double, f64)
#undef OPS_MATH_ACTIVATIONS_

/* hardtanh of an integer: compared in int64, so limits outside the narrow type clamp
 * nothing; the caller narrows the result back. */
OPS_MATH_INLINE_ int64_t ops_math_hardtanh_i64(int64_t x, int64_t lo, int64_t hi)
{
    return (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x);
}

/* threshold: x <= t ? v : x, every numeric type. */
#define OPS_MATH_THRESHOLD_(T, S)                                                        \
    OPS_MATH_INLINE_ T ops_math_threshold_##S(T x, T t, T v) { return x <= t ? v : x; }
OPS_MATH_THRESHOLD_(uint8_t, u8)
OPS_MATH_THRESHOLD_(int8_t, i8)
OPS_MATH_THRESHOLD_(int16_t, i16)
OPS_MATH_THRESHOLD_(int32_t, i32)
OPS_MATH_THRESHOLD_(int64_t, i64)
OPS_MATH_THRESHOLD_(float, f32)
OPS_MATH_THRESHOLD_(double, f64)
#undef OPS_MATH_THRESHOLD_

/* ---- the type-generic names -------------------------------------------------------- */

#if defined(__cplusplus)
#define OPS_EW_OVL_F1_(fn)                                                               \
    OPS_MATH_INLINE_ float ops_math_##fn(float x) { return ops_math_##fn##_f32(x); }     \
    OPS_MATH_INLINE_ double ops_math_##fn(double x) { return ops_math_##fn##_f64(x); }
#define OPS_EW_OVL2_(fn, T, S)                                                           \
    OPS_MATH_INLINE_ T ops_math_##fn(T a, T b) { return ops_math_##fn##_##S(a, b); }
#define OPS_EW_OVL3_(fn, T, S)                                                           \
    OPS_MATH_INLINE_ T ops_math_##fn(T a, T b, T c) { return ops_math_##fn##_##S(a, b, c); }
#define OPS_EW_OVL2_INT_(fn)                                                             \
    OPS_EW_OVL2_(fn, uint8_t, u8)                                                        \
    OPS_EW_OVL2_(fn, int8_t, i8)                                                         \
    OPS_EW_OVL2_(fn, int16_t, i16) OPS_EW_OVL2_(fn, int32_t, i32) OPS_EW_OVL2_(fn, int64_t, i64)
#define OPS_EW_OVL2_FLOAT_(fn) OPS_EW_OVL2_(fn, float, f32) OPS_EW_OVL2_(fn, double, f64)
#define OPS_EW_OVL3_FLOAT_(fn) OPS_EW_OVL3_(fn, float, f32) OPS_EW_OVL3_(fn, double, f64)
OPS_MATH_LIBM1_LIST_(OPS_EW_OVL_F1_)
OPS_EW_OVL_F1_(mish)
OPS_EW_OVL_F1_(log_sigmoid)
OPS_EW_OVL_F1_(softsign)
OPS_EW_OVL_F1_(hardsigmoid)
OPS_EW_OVL_F1_(hardswish)
OPS_EW_OVL2_FLOAT_(atan2)
OPS_EW_OVL2_FLOAT_(leaky_relu)
OPS_EW_OVL2_FLOAT_(pow) OPS_EW_OVL2_INT_(pow)
OPS_EW_OVL2_FLOAT_(fmod) OPS_EW_OVL2_INT_(fmod)
OPS_EW_OVL2_FLOAT_(div_trunc) OPS_EW_OVL2_INT_(div_trunc)
OPS_EW_OVL2_FLOAT_(div_floor) OPS_EW_OVL2_INT_(div_floor)
OPS_EW_OVL2_FLOAT_(remainder) OPS_EW_OVL2_INT_(remainder)
OPS_EW_OVL2_FLOAT_(max) OPS_EW_OVL2_INT_(max) OPS_EW_OVL2_(max, bool, b)
OPS_EW_OVL2_FLOAT_(min) OPS_EW_OVL2_INT_(min) OPS_EW_OVL2_(min, bool, b)
OPS_EW_OVL2_FLOAT_(fmax) OPS_EW_OVL2_INT_(fmax) OPS_EW_OVL2_(fmax, bool, b)
OPS_EW_OVL2_FLOAT_(fmin) OPS_EW_OVL2_INT_(fmin) OPS_EW_OVL2_(fmin, bool, b)
OPS_EW_OVL2_INT_(lshift)
OPS_EW_OVL2_INT_(rshift)
OPS_EW_OVL3_FLOAT_(clamp)
OPS_EW_OVL3_(clamp, uint8_t, u8) OPS_EW_OVL3_(clamp, int8_t, i8) OPS_EW_OVL3_(clamp, int16_t, i16)
OPS_EW_OVL3_(clamp, int32_t, i32) OPS_EW_OVL3_(clamp, int64_t, i64)
OPS_EW_OVL3_FLOAT_(lerp)
OPS_EW_OVL3_FLOAT_(hardtanh)
OPS_EW_OVL3_FLOAT_(softplus)
OPS_EW_OVL3_FLOAT_(threshold)
OPS_EW_OVL3_(threshold, uint8_t, u8) OPS_EW_OVL3_(threshold, int8_t, i8)
OPS_EW_OVL3_(threshold, int16_t, i16) OPS_EW_OVL3_(threshold, int32_t, i32)
OPS_EW_OVL3_(threshold, int64_t, i64)
#define OPS_EW_OVL_CLAMP_OPT_(T, S)                                                      \
    OPS_MATH_INLINE_ T ops_math_clamp_opt(T x, T lo, T hi, bool has_lo, bool has_hi)     \
    {                                                                                    \
        return ops_math_clamp_opt_##S(x, lo, hi, has_lo, has_hi);                        \
    }
OPS_EW_OVL_CLAMP_OPT_(uint8_t, u8)
OPS_EW_OVL_CLAMP_OPT_(int8_t, i8)
OPS_EW_OVL_CLAMP_OPT_(int16_t, i16)
OPS_EW_OVL_CLAMP_OPT_(int32_t, i32)
OPS_EW_OVL_CLAMP_OPT_(int64_t, i64)
OPS_MATH_INLINE_ float ops_math_elu(float x, float n, float p, float i) { return ops_math_elu_f32(x, n, p, i); }
OPS_MATH_INLINE_ double ops_math_elu(double x, double n, double p, double i)
{
    return ops_math_elu_f64(x, n, p, i);
}
#undef OPS_EW_OVL_F1_
#undef OPS_EW_OVL2_
#undef OPS_EW_OVL3_
#undef OPS_EW_OVL2_INT_
#undef OPS_EW_OVL2_FLOAT_
#undef OPS_EW_OVL3_FLOAT_
#undef OPS_EW_OVL_CLAMP_OPT_
#else
/* C: picked by the type of the first argument; a type without a form is a compile
 * error. */
#define OPS_EW_F_(fn, x) _Generic((x), float: fn##_f32, double: fn##_f64)
#define OPS_EW_I_(fn, x)                                                                 \
    _Generic((x), uint8_t: fn##_u8, int8_t: fn##_i8, int16_t: fn##_i16, int32_t: fn##_i32, \
             int64_t: fn##_i64)
#define OPS_EW_FI_(fn, x)                                                                \
    _Generic((x), uint8_t: fn##_u8, int8_t: fn##_i8, int16_t: fn##_i16, int32_t: fn##_i32, \
             int64_t: fn##_i64, float: fn##_f32, double: fn##_f64)
#define OPS_EW_FIB_(fn, x)                                                               \
    _Generic((x), bool: fn##_b, uint8_t: fn##_u8, int8_t: fn##_i8, int16_t: fn##_i16,    \
             int32_t: fn##_i32, int64_t: fn##_i64, float: fn##_f32, double: fn##_f64)
#define ops_math_fabs(x) OPS_EW_F_(ops_math_fabs, x)(x)
#define ops_math_sqrt(x) OPS_EW_F_(ops_math_sqrt, x)(x)
#define ops_math_exp(x) OPS_EW_F_(ops_math_exp, x)(x)
#define ops_math_exp2(x) OPS_EW_F_(ops_math_exp2, x)(x)
#define ops_math_expm1(x) OPS_EW_F_(ops_math_expm1, x)(x)
#define ops_math_log(x) OPS_EW_F_(ops_math_log, x)(x)
#define ops_math_log2(x) OPS_EW_F_(ops_math_log2, x)(x)
#define ops_math_log10(x) OPS_EW_F_(ops_math_log10, x)(x)
#define ops_math_log1p(x) OPS_EW_F_(ops_math_log1p, x)(x)
#define ops_math_sin(x) OPS_EW_F_(ops_math_sin, x)(x)
#define ops_math_cos(x) OPS_EW_F_(ops_math_cos, x)(x)
#define ops_math_tan(x) OPS_EW_F_(ops_math_tan, x)(x)
#define ops_math_asin(x) OPS_EW_F_(ops_math_asin, x)(x)
#define ops_math_acos(x) OPS_EW_F_(ops_math_acos, x)(x)
#define ops_math_atan(x) OPS_EW_F_(ops_math_atan, x)(x)
#define ops_math_sinh(x) OPS_EW_F_(ops_math_sinh, x)(x)
#define ops_math_cosh(x) OPS_EW_F_(ops_math_cosh, x)(x)
#define ops_math_tanh(x) OPS_EW_F_(ops_math_tanh, x)(x)
#define ops_math_asinh(x) OPS_EW_F_(ops_math_asinh, x)(x)
#define ops_math_acosh(x) OPS_EW_F_(ops_math_acosh, x)(x)
#define ops_math_atanh(x) OPS_EW_F_(ops_math_atanh, x)(x)
#define ops_math_erf(x) OPS_EW_F_(ops_math_erf, x)(x)
#define ops_math_erfc(x) OPS_EW_F_(ops_math_erfc, x)(x)
#define ops_math_mish(x) OPS_EW_F_(ops_math_mish, x)(x)
#define ops_math_log_sigmoid(x) OPS_EW_F_(ops_math_log_sigmoid, x)(x)
#define ops_math_softsign(x) OPS_EW_F_(ops_math_softsign, x)(x)
#define ops_math_hardsigmoid(x) OPS_EW_F_(ops_math_hardsigmoid, x)(x)
#define ops_math_hardswish(x) OPS_EW_F_(ops_math_hardswish, x)(x)
#define ops_math_atan2(a, b) OPS_EW_F_(ops_math_atan2, a)(a, b)
#define ops_math_leaky_relu(a, b) OPS_EW_F_(ops_math_leaky_relu, a)(a, b)
#define ops_math_pow(a, b) OPS_EW_FI_(ops_math_pow, a)(a, b)
#define ops_math_fmod(a, b) OPS_EW_FI_(ops_math_fmod, a)(a, b)
#define ops_math_div_trunc(a, b) OPS_EW_FI_(ops_math_div_trunc, a)(a, b)
#define ops_math_div_floor(a, b) OPS_EW_FI_(ops_math_div_floor, a)(a, b)
#define ops_math_remainder(a, b) OPS_EW_FI_(ops_math_remainder, a)(a, b)
#define ops_math_max(a, b) OPS_EW_FIB_(ops_math_max, a)(a, b)
#define ops_math_min(a, b) OPS_EW_FIB_(ops_math_min, a)(a, b)
#define ops_math_fmax(a, b) OPS_EW_FIB_(ops_math_fmax, a)(a, b)
#define ops_math_fmin(a, b) OPS_EW_FIB_(ops_math_fmin, a)(a, b)
#define ops_math_lshift(a, b) OPS_EW_I_(ops_math_lshift, a)(a, b)
#define ops_math_rshift(a, b) OPS_EW_I_(ops_math_rshift, a)(a, b)
#define ops_math_clamp(x, lo, hi) OPS_EW_FI_(ops_math_clamp, x)(x, lo, hi)
#define ops_math_clamp_opt(x, lo, hi, l, h) OPS_EW_I_(ops_math_clamp_opt, x)(x, lo, hi, l, h)
#define ops_math_lerp(a, b, w) OPS_EW_F_(ops_math_lerp, a)(a, b, w)
#define ops_math_hardtanh(x, lo, hi) OPS_EW_F_(ops_math_hardtanh, x)(x, lo, hi)
#define ops_math_softplus(x, b, t) OPS_EW_F_(ops_math_softplus, x)(x, b, t)
#define ops_math_threshold(x, t, v) OPS_EW_FI_(ops_math_threshold, x)(x, t, v)
#define ops_math_elu(x, n, p, i) OPS_EW_F_(ops_math_elu, x)(x, n, p, i)
#endif

#undef OPS_MATH_LIBM1_
#undef OPS_MATH_LIBM2_

#endif /* OPS_ELEMENTWISE_MATH_H */

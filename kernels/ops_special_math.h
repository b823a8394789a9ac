/* The per-element forms of erfinv, logit (and its gradient) and cbrt, shared by the
 * CPU kernels (kernels/cpu/special.c: the scalar loops, used where no vector loop is)
 * and the CUDA ones (kernels/cuda/special.cu), so both backends compute the same
 * expressions as the CPU's vector loops (kernels/cpu/vec/vec_special.c, which follow
 * these step for step; docs/cpu-dispatch.md "erfinv, logit, cbrt").
 *
 * erfinv float32: Giles' single-precision approximation (M. Giles, "Approximating the
 * erfinv function", GPU Computing Gems, 2010): w = -log((1 - x)(1 + x)), a degree-8
 * polynomial in w - 2.5 below w = 5 and in sqrt(w) - 3 above, times x.  float64: the
 * same start evaluated in double (relative error about 4e-7), then one Halley step
 * on erf (erfc in the tails, where 1 - |x| is exact and erf(r) - |x| would cancel):
 * Halley's step triples the correct digits, so the start's 4e-7 becomes ~1e-19 and the
 * result's error is that of erf/erfc.  Beyond 1 - |x| = 2^-22 (outside the float range
 * Giles' tail was fitted on) the start is first refined by Newton steps on
 * log(erfc(r)) = log(1 - |x|). */
#ifndef OPS_SPECIAL_MATH_H
#define OPS_SPECIAL_MATH_H

#include "kernels/ops_elementwise_math.h"

/* Giles' polynomial in T (float or double): p(w) * x, w = -log((1 - x)(1 + x)). */
#define OPS_ERFINV_GILES_(T, x, w, LOG, SQRT)                                            \
    T p;                                                                                 \
    if (w < (T)5) {                                                                      \
        w = w - (T)2.5;                                                                  \
        p = (T)2.81022636e-08;                                                           \
        p = (T)3.43273939e-07 + p * w;                                                   \
        p = (T)-3.5233877e-06 + p * w;                                                   \
        p = (T)-4.39150654e-06 + p * w;                                                  \
        p = (T)0.00021858087 + p * w;                                                    \
        p = (T)-0.00125372503 + p * w;                                                   \
        p = (T)-0.00417768164 + p * w;                                                   \
        p = (T)0.246640727 + p * w;                                                      \
        p = (T)1.50140941 + p * w;                                                       \
    } else {                                                                             \
        w = SQRT(w) - (T)3;                                                              \
        p = (T)-0.000200214257;                                                          \
        p = (T)0.000100950558 + p * w;                                                   \
        p = (T)0.00134934322 + p * w;                                                    \
        p = (T)-0.00367342844 + p * w;                                                   \
        p = (T)0.00573950773 + p * w;                                                    \
        p = (T)-0.0076224613 + p * w;                                                    \
        p = (T)0.00943887047 + p * w;                                                    \
        p = (T)1.00167406 + p * w;                                                       \
        p = (T)2.83297682 + p * w;                                                       \
    }

/* float64 |x| above which the start is refined on log(erfc) first (the vector loop
 * hands those lanes to ops_math_erfinv_f64). */
#define OPS_ERFINV_DEEP_TAIL_ (1.0 - 0x1p-22)

OPS_MATH_INLINE_ float ops_math_erfinv_f32(float x)
{
    const float a = fabsf(x);
    if (!(a < 1.0f)) /* +-1: +-inf; |x| > 1 and NaN: NaN */
        return a == 1.0f ? x * INFINITY : NAN;
    float w = -logf((1.0f - x) * (1.0f + x));
    OPS_ERFINV_GILES_(float, x, w, logf, sqrtf)
    return p * x;
}

OPS_MATH_INLINE_ double ops_math_erfinv_f64(double x)
{
    const double a = fabs(x);
    if (!(a < 1.0))
        return a == 1.0 ? x * INFINITY : NAN;
    if (a == 0.0)
        return x; /* +-0 */
    double w = -log((1.0 - a) * (1.0 + a));
    OPS_ERFINV_GILES_(double, a, w, log, sqrt)
    double r = p * a;
    if (a > OPS_ERFINV_DEEP_TAIL_) {
        /* beyond Giles' float range (1 - |x| < 2^-22, w > 14.5: the start is up to 10%
         * off at 1 - 2^-53): Newton on log(erfc(r)) = log(1 - a), nearly quadratic in r */
        const double lq = log(1.0 - a);
        for (int k = 0; k < 4; k++) {
            const double e = erfc(r);
            r += (log(e) - lq) * e / (1.1283791670955126 * exp(-r * r));
        }
    }
    /* g(r) = erf(r) - a; in the tail erf(r) - a = (1 - a) - erfc(r), 1 - a exact. */
    const double g = a <= 0.5 ? erf(r) - a : (1.0 - a) - erfc(r);
    const double u = g / (1.1283791670955126 * exp(-r * r)); /* g / g' */
    const double y = r - u / (1.0 + r * u);                  /* Halley: g'' = -2 r g' */
    return x < 0 ? -y : y;
}

/* logit(x) = log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps >= 0 (NaN
 * stays NaN).  The plain formula's errors are fixed where they show: 1 - x is kept as
 * d + dlo (exact: 1 - x rounds only for x < 0.5), r = x / d, and the division's and the
 * subtraction's rounding come back as log(r + e) = log(r) + e / r with
 * e / r = (x - r d - r dlo) / x (an FMA gives x - r d exactly).  Without it, near
 * x = 0.5 (logit ~ 4 (x - 0.5), small) the rounding of 1 - x alone is up to 25% of the
 * result at float32. */
#define OPS_LOGIT_(T, x, LOG, FMA)                                                       \
    const T d = (T)1 - x;                                                                \
    const T dlo = ((T)1 - d) - x;                                                        \
    const T r = x / d;                                                                   \
    T c = (FMA(-r, d, x) - r * dlo) / x;                                                 \
    if (!(c < (T)1 && c > (T)-1)) /* x = 0 or 1 (r = 0, inf), NaN */                     \
        c = 0;                                                                           \
    return LOG(r) + c;

OPS_MATH_INLINE_ float ops_math_logit_f32(float x, float eps)
{
    if (eps >= 0.0f)
        x = x < eps ? eps : (x > 1.0f - eps ? 1.0f - eps : x);
    OPS_LOGIT_(float, x, logf, fmaf)
}

OPS_MATH_INLINE_ double ops_math_logit_f64(double x, double eps)
{
    if (eps >= 0.0)
        x = x < eps ? eps : (x > 1.0 - eps ? 1.0 - eps : x);
    OPS_LOGIT_(double, x, log, fma)
}

/* PyTorch's logit_backward: dy / (x (1 - x)); without eps (eps < 0) NaN outside [0, 1],
 * with it 0 outside [eps, 1 - eps]; dy * inf at x = 0 or 1. */
#define OPS_LOGIT_BACKWARD_(T, dy, x, eps)                                               \
    const T lo = eps < 0 ? (T)0 : eps, hi = eps < 0 ? (T)1 : (T)1 - eps;                 \
    if (x < lo || x > hi)                                                                \
        return eps < 0 ? (T)NAN : (T)0;                                                  \
    return (x == 0 || x == 1) ? dy * (T)INFINITY : dy / (x * ((T)1 - x));

OPS_MATH_INLINE_ float ops_math_logit_backward_f32(float dy, float x, float eps)
{
    OPS_LOGIT_BACKWARD_(float, dy, x, eps)
}

OPS_MATH_INLINE_ double ops_math_logit_backward_f64(double dy, double x, double eps)
{
    OPS_LOGIT_BACKWARD_(double, dy, x, eps)
}

OPS_MATH_INLINE_ float ops_math_cbrt_f32(float x)
{
    return cbrtf(x);
}

OPS_MATH_INLINE_ double ops_math_cbrt_f64(double x)
{
    return cbrt(x);
}

#undef OPS_LOGIT_
#undef OPS_LOGIT_BACKWARD_

#ifdef __cplusplus
OPS_MATH_INLINE_ float ops_math_erfinv(float x) { return ops_math_erfinv_f32(x); }
OPS_MATH_INLINE_ double ops_math_erfinv(double x) { return ops_math_erfinv_f64(x); }
OPS_MATH_INLINE_ float ops_math_cbrt(float x) { return ops_math_cbrt_f32(x); }
OPS_MATH_INLINE_ double ops_math_cbrt(double x) { return ops_math_cbrt_f64(x); }
OPS_MATH_INLINE_ float ops_math_logit(float x, float e) { return ops_math_logit_f32(x, e); }
OPS_MATH_INLINE_ double ops_math_logit(double x, double e) { return ops_math_logit_f64(x, e); }
OPS_MATH_INLINE_ float ops_math_logit_backward(float g, float x, float e)
{
    return ops_math_logit_backward_f32(g, x, e);
}
OPS_MATH_INLINE_ double ops_math_logit_backward(double g, double x, double e)
{
    return ops_math_logit_backward_f64(g, x, e);
}
#else
#define ops_math_erfinv(x) OPS_EW_F_(ops_math_erfinv, x)(x)
#define ops_math_cbrt(x) OPS_EW_F_(ops_math_cbrt, x)(x)
#define ops_math_logit(x, e) OPS_EW_F_(ops_math_logit, x)(x, e)
#define ops_math_logit_backward(g, x, e) OPS_EW_F_(ops_math_logit_backward, g)(g, x, e)
#endif

#endif /* OPS_SPECIAL_MATH_H */

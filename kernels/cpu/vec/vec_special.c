/* Vector loops of erfinv, logit and cbrt over contiguous float32/float64, compiled once
 * per instruction-set level (kernels/cpu/vec/meson.build; the table type is
 * vec_special.h's; docs/cpu-dispatch.md "erfinv, logit, cbrt").
 *
 * Each is the scalar form of kernels/ops_special_math.h written for a whole vector
 * (a branch becomes a select of both sides, a side computed only when some lane needs
 * it):
 *   erfinv  Giles' single-precision polynomial (float32); at float64 the same start in
 *           double and one Halley step on SLEEF's erf (erfc for |x| > 0.9, where
 *           erf(r) - |x| would cancel), the scalar form for 1 - |x| < 2^-22;
 *   logit   log(r), r = x / (1 - x), plus the rounding of r and of 1 - x carried back
 *           as (x - r (1 - x)) / x (an FMA, or Dekker's product where the level has no
 *           FMA; the division by x through a reciprocal estimate at AVX2/AVX-512), the
 *           log our own (log_corr_: exponent split, series in s = f / (2 + f)), the
 *           correction joining its smallest term; x clamped to [eps, 1 - eps] first
 *           when eps >= 0;
 *   cbrt    the exponent split off (e = 3q + r), a polynomial start for (m 2^r)^(-1/3),
 *           Newton steps without a division, 2^q put back.
 * A run's last n % width elements go through one vector padded with PAD in a local
 * buffer, so every element of a run goes through the same code wherever the run starts
 * (threads split runs anywhere). */
#include <math.h>
#include <string.h>

#include "kernels/cpu/vec/vec_special.h"
#include "kernels/ops_special_math.h"

#include "kernels/cpu/vec/vec_isa.h"

/* The levels whose vf_fma is fused (a * b + c rounded once). */
#if defined(__FMA__) || defined(__aarch64__)
#define VEC_SPECIAL_FUSED_ 1
#else
#define VEC_SPECIAL_FUSED_ 0
#endif

/* t / x for logit's correction without the divider (a vector of logit had two
 * divisions and SLEEF's log one more; the divider bounds the loop at `avx2` and
 * `avx512`): y ~ 1/x from the level's reciprocal estimate (rcp: 12 bits; float64 at
 * `avx2` through float, x clamped into float's normal range first: the correction
 * there is below 2^-100 of the result; rcp14: 14 bits), Newton steps y + y (1 - x y)
 * to 24 (float32) or 48 bits (float64), then q = t y and one correction step
 * q + y (t - x q) (Markstein's): within about half an ulp of t / x, as the division
 * was.  Levels without an estimate (`default`, NEON) divide. */
#if defined(__AVX512F__)
#define VEC_RCP_f_(x) _mm512_rcp14_ps(x)
#define VEC_RCP_d_(x) _mm512_rcp14_pd(x)
#define VEC_FNMA_f_ _mm512_fnmadd_ps
#define VEC_FNMA_d_ _mm512_fnmadd_pd
#define VEC_RCP_STEPS_f_ 0
#define VEC_RCP_STEPS_d_ 1
#elif defined(__AVX2__)
#define VEC_RCP_f_(x) _mm256_rcp_ps(x)
#define VEC_RCP_d_(x)                                                                    \
    _mm256_cvtps_pd(_mm_rcp_ps(_mm256_cvtpd_ps(                                          \
        _mm256_min_pd(_mm256_max_pd((x), _mm256_set1_pd(0x1p-125)), _mm256_set1_pd(0x1p125)))))
#define VEC_FNMA_f_ _mm256_fnmadd_ps
#define VEC_FNMA_d_ _mm256_fnmadd_pd
#define VEC_RCP_STEPS_f_ 1
#define VEC_RCP_STEPS_d_ 2
#endif
#if defined(VEC_RCP_f_)
#define VEC_QUOT_(S)                                                                     \
    static inline v##S##_t quot_##S(v##S##_t t, v##S##_t x)                              \
    {                                                                                    \
        v##S##_t y = VEC_RCP_##S##_(x);                                                  \
        for (int s_ = 0; s_ < VEC_RCP_STEPS_##S##_; s_++)                                \
            y = v##S##_fma(y, VEC_FNMA_##S##_(x, y, v##S##_set1(1)), y);                 \
        const v##S##_t q = v##S##_mul(t, y);                                             \
        return v##S##_fma(y, VEC_FNMA_##S##_(x, q, t), q);                               \
    }
#else
#define VEC_QUOT_(S)                                                                     \
    static inline v##S##_t quot_##S(v##S##_t t, v##S##_t x)                              \
    {                                                                                    \
        return v##S##_div(t, x);                                                         \
    }
#endif
VEC_QUOT_(f)
VEC_QUOT_(d)

/* One vector of each function, S = f (float) or d (double); SPLIT is Veltkamp's
 * splitting constant of T (2^12 + 1, 2^27 + 1). */
#define VEC_SPECIAL_FUNCS_(S, T, SPLIT)                                                  \
    /* Giles' polynomial times x, w = -log((1 - x)(1 + x)); +-1 gives +-inf, |x| > 1 and \
     * NaN give NaN (log of a negative). */                                              \
    static inline v##S##_t erfinv_start_##S(v##S##_t x)                                  \
    {                                                                                    \
        const v##S##_t one = v##S##_set1((T)1), five = v##S##_set1((T)5);                \
        const v##S##_t t = v##S##_mul(v##S##_sub(one, x), v##S##_add(one, x));           \
        const v##S##_t w = v##S##_sub(v##S##_set1((T)0), SLEEF_##S##_(log)(t));          \
        const v##S##_t wc = v##S##_sub(w, v##S##_set1((T)2.5));                          \
        v##S##_t p = v##S##_set1((T)2.81022636e-08);                                     \
        p = v##S##_fma(p, wc, v##S##_set1((T)3.43273939e-07));                           \
        p = v##S##_fma(p, wc, v##S##_set1((T)-3.5233877e-06));                           \
        p = v##S##_fma(p, wc, v##S##_set1((T)-4.39150654e-06));                          \
        p = v##S##_fma(p, wc, v##S##_set1((T)0.00021858087));                            \
        p = v##S##_fma(p, wc, v##S##_set1((T)-0.00125372503));                           \
        p = v##S##_fma(p, wc, v##S##_set1((T)-0.00417768164));                           \
        p = v##S##_fma(p, wc, v##S##_set1((T)0.246640727));                              \
        p = v##S##_fma(p, wc, v##S##_set1((T)1.50140941));                               \
        if (v##S##_any_abs_gt(w, (T)4.5)) { /* the tails, |x| > 0.9966: few vectors */   \
            const v##S##_t wt = v##S##_sub(v##S##_sqrt(w), v##S##_set1((T)3));          \
            v##S##_t q = v##S##_set1((T)-0.000200214257);                                \
            q = v##S##_fma(q, wt, v##S##_set1((T)0.000100950558));                       \
            q = v##S##_fma(q, wt, v##S##_set1((T)0.00134934322));                        \
            q = v##S##_fma(q, wt, v##S##_set1((T)-0.00367342844));                       \
            q = v##S##_fma(q, wt, v##S##_set1((T)0.00573950773));                        \
            q = v##S##_fma(q, wt, v##S##_set1((T)-0.0076224613));                        \
            q = v##S##_fma(q, wt, v##S##_set1((T)0.00943887047));                        \
            q = v##S##_fma(q, wt, v##S##_set1((T)1.00167406));                           \
            q = v##S##_fma(q, wt, v##S##_set1((T)2.83297682));                           \
            p = v##S##_select_gt(five, w, p, q);                                         \
        }                                                                                \
        return v##S##_mul(p, x);                                                         \
    }                                                                                    \
    /* x - r d exactly (r d ~ x): one FMA, or Dekker's product without one. */           \
    static inline v##S##_t prod_err_##S(v##S##_t r, v##S##_t d, v##S##_t x)              \
    {                                                                                    \
        if (VEC_SPECIAL_FUSED_)                                                          \
            return v##S##_sub(v##S##_set1((T)0), v##S##_fma(r, d, v##S##_sub(v##S##_set1((T)0), x))); \
        const v##S##_t c = v##S##_set1((T)(SPLIT));                                      \
        const v##S##_t rc = v##S##_mul(r, c), dc = v##S##_mul(d, c);                     \
        const v##S##_t rh = v##S##_sub(rc, v##S##_sub(rc, r)), rl = v##S##_sub(r, rh);   \
        const v##S##_t dh = v##S##_sub(dc, v##S##_sub(dc, d)), dl = v##S##_sub(d, dh);   \
        const v##S##_t pr = v##S##_mul(r, d);                                            \
        const v##S##_t e = v##S##_add(v##S##_add(v##S##_add(v##S##_sub(v##S##_mul(rh, dh), pr), \
                                                             v##S##_mul(rh, dl)),       \
                                                  v##S##_mul(rl, dh)),                   \
                                      v##S##_mul(rl, dl));                               \
        return v##S##_sub(v##S##_sub(x, pr), e);                                         \
    }

VEC_SPECIAL_FUNCS_(f, float, 4097.0f)
VEC_SPECIAL_FUNCS_(d, double, 134217729.0)

/* cbrt without exp or log: |x| = m 2^e, m in [1, 2) (subnormals scaled by 2^24 / 2^54
 * first), e = 3q + r (r in {0, 1, 2}: q = round((e - 1) / 3), in floating point, where
 * (e - 1) / 3 is q - 1/3, q or q + 1/3), a = m 2^r in [1, 8), then
 *   w = P(m) 2^(-r/3) ~ a^(-1/3)   (P: a minimax polynomial of m^(-1/3) on [1, 2),
 *                                   degree 5 at float32, 6.2e-6 relative (rounded
 *                                   coefficients), degree 7 at float64, 1.4e-7; 2^(-r/3)
 *                                   and 2^r are the quadratics through r = 0, 1, 2),
 *   y = a w^2 ~ a^(1/3), and Newton steps y - (y^3 - a) w^2 / 3 (the derivative's
 *   1 / (3 y^2) taken as w^2 / 3: no division; the last step's residual carries y^2's
 *   rounding, cbrt_residual_), one at float32 (error ~2 (1.2e-5)^2), two at float64
 *   (2 (2.8e-7)^2, then times 2.8e-7), and y 2^q (q in [-50, 42] / [-358, 341]:
 *   normal), the sign put back.
 * 0, +-inf and NaN: x itself. */
/* <prefix>ps / pd for S = f / d */
#define VEC_CBRT_SFX_f ps
#define VEC_CBRT_SFX_d pd
#define VEC_CBRT_P_(prefix, S) VEC_CAT_(prefix, VEC_CBRT_SFX_##S)
#if defined(__AVX512F__)
/* getexp/getmant: the exponent and the mantissa in [1, 2) of any finite nonzero,
 * subnormals included. */
#define VEC_CBRT_SPLIT_F_(a, m, e)                                                       \
    do {                                                                                 \
        (m) = _mm512_getmant_ps((a), _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);             \
        (e) = _mm512_getexp_ps(a);                                                       \
    } while (0)
#define VEC_CBRT_SPLIT_D_(a, m, e)                                                       \
    do {                                                                                 \
        (m) = _mm512_getmant_pd((a), _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);             \
        (e) = _mm512_getexp_pd(a);                                                       \
    } while (0)
/* _mm512_<op>ps / pd for S = f / d */
#define VEC_CBRT_512_(op, S) VEC_CBRT_P_(VEC_CAT_(_mm512_, op), S)
/* a b - c and c - a b, fused */
#define vf_cbrt_fms_ _mm512_fmsub_ps
#define vd_cbrt_fms_ _mm512_fmsub_pd
#define vf_cbrt_fnma_ _mm512_fnmadd_ps
#define vd_cbrt_fnma_ _mm512_fnmadd_pd
/* q = round(t); y 2^q; m 2^r (scalef: exact, no magic constants) */
#define VEC_CBRT_ROUND_(S, T, t, q, k, MAGIC)                                            \
    do {                                                                                 \
        (q) = VEC_CBRT_512_(roundscale_, S)((t), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); \
        (void)(k);                                                                       \
    } while (0)
#define VEC_CBRT_SCALE_(S, y, q, k) VEC_CBRT_512_(scalef_, S)((y), (q))
#define VEC_CBRT_POW2R_(S, T, m, r) VEC_CBRT_512_(scalef_, S)((m), (r))
/* x itself where x is +-0, +-inf or NaN (fpclass 0x9f: QNaN, +-0, +-inf, SNaN) */
#define VEC_CBRT_SPECIAL_(S, T, x, y)                                                    \
    VEC_CBRT_512_(mask_mov_, S)((y), VEC_CAT_(VEC_CBRT_512_(fpclass_, S), _mask)((x), 0x9f), (x))
#else
#if defined(__AVX2__)
#define VEC_CBRT_I_(op) VEC_CAT_(_mm256_, op)
#define VEC_CBRT_SI_(op) VEC_CAT_(VEC_CAT_(_mm256_, op), _si256)
#define VEC_CBRT_FI_(x) _mm256_castps_si256(x)
#define VEC_CBRT_IF_(x) _mm256_castsi256_ps(x)
#define VEC_CBRT_DI_(x) _mm256_castpd_si256(x)
#define VEC_CBRT_ID_(x) _mm256_castsi256_pd(x)
#define VEC_CBRT_SET64_ _mm256_set1_epi64x
#elif defined(__SSE2__)
#define VEC_CBRT_I_(op) VEC_CAT_(_mm_, op)
#define VEC_CBRT_SI_(op) VEC_CAT_(VEC_CAT_(_mm_, op), _si128)
#define VEC_CBRT_FI_(x) _mm_castps_si128(x)
#define VEC_CBRT_IF_(x) _mm_castsi128_ps(x)
#define VEC_CBRT_DI_(x) _mm_castpd_si128(x)
#define VEC_CBRT_ID_(x) _mm_castsi128_pd(x)
#define VEC_CBRT_SET64_ _mm_set1_epi64x
#endif
#if defined(__AVX2__) || defined(__SSE2__)
/* The biased exponent field shifted into the mantissa of 2^23 (2^52): 2^23 + field,
 * exactly, as a float; the mantissa with 1.0's exponent. */
#define VEC_CBRT_EXPF_(a)                                                                \
    VEC_CBRT_IF_(VEC_CBRT_SI_(or)(VEC_CBRT_I_(srli_epi32)(VEC_CBRT_FI_(a), 23),          \
                                  VEC_CBRT_I_(set1_epi32)(0x4b000000)))
#define VEC_CBRT_MANTF_(a)                                                               \
    VEC_CBRT_IF_(VEC_CBRT_SI_(or)(VEC_CBRT_SI_(and)(VEC_CBRT_FI_(a), VEC_CBRT_I_(set1_epi32)(0x007fffff)), \
                                  VEC_CBRT_I_(set1_epi32)(0x3f800000)))
#define VEC_CBRT_EXPD_(a)                                                                \
    VEC_CBRT_ID_(VEC_CBRT_SI_(or)(VEC_CBRT_I_(srli_epi64)(VEC_CBRT_DI_(a), 52),          \
                                  VEC_CBRT_SET64_(0x4330000000000000LL)))
#define VEC_CBRT_MANTD_(a)                                                               \
    VEC_CBRT_ID_(VEC_CBRT_SI_(or)(VEC_CBRT_SI_(and)(VEC_CBRT_DI_(a), VEC_CBRT_SET64_(0x000fffffffffffffLL)), \
                                  VEC_CBRT_SET64_(0x3ff0000000000000LL)))
#elif defined(__aarch64__)
#define VEC_CBRT_EXPF_(a)                                                                \
    vreinterpretq_f32_u32(vorrq_u32(vshrq_n_u32(vreinterpretq_u32_f32(a), 23), vdupq_n_u32(0x4b000000u)))
#define VEC_CBRT_MANTF_(a)                                                               \
    vreinterpretq_f32_u32(vorrq_u32(vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x007fffffu)), \
                                    vdupq_n_u32(0x3f800000u)))
#define VEC_CBRT_EXPD_(a)                                                                \
    vreinterpretq_f64_u64(vorrq_u64(vshrq_n_u64(vreinterpretq_u64_f64(a), 52),          \
                                    vdupq_n_u64(0x4330000000000000ull)))
#define VEC_CBRT_MANTD_(a)                                                               \
    vreinterpretq_f64_u64(vorrq_u64(vandq_u64(vreinterpretq_u64_f64(a), vdupq_n_u64(0x000fffffffffffffull)), \
                                    vdupq_n_u64(0x3ff0000000000000ull)))
#endif
/* Subnormals (below MINNORM) scaled by 2^SH first (exact), their exponent lowered by
 * SH; a vector without one (nor a zero) costs a comparison. */
#define VEC_CBRT_SPLIT_(S, T, a, m, e, MINNORM, SH, SCALE, EXPFN, MANTFN, MAGIC)      \
    do {                                                                                 \
        v##S##_t a_ = (a);                                                               \
        const v##S##_t lo_ = v##S##_set1((T)(MINNORM));                                  \
        const int sub_ = v##S##_any_gt(lo_, a_);                                         \
        if (sub_)                                                                        \
            a_ = v##S##_select_gt(lo_, a_, v##S##_mul(a_, v##S##_set1((T)(SCALE))), a_); \
        (m) = MANTFN(a_);                                                                \
        (e) = v##S##_sub(EXPFN(a_), v##S##_set1((T)(MAGIC)));                            \
        if (sub_)                                                                        \
            (e) = v##S##_sub((e), v##S##_select_gt(lo_, (a), v##S##_set1((T)(SH)),       \
                                                   v##S##_set1((T)0)));                  \
    } while (0)
#define VEC_CBRT_SPLIT_F_(a, m, e)                                                       \
    VEC_CBRT_SPLIT_(f, float, a, m, e, 0x1p-126f, 24, 0x1p24f, VEC_CBRT_EXPF_, VEC_CBRT_MANTF_, 8388735.0f)
#define VEC_CBRT_SPLIT_D_(a, m, e)                                                       \
    VEC_CBRT_SPLIT_(d, double, a, m, e, 0x1p-1022, 54, 0x1p54, VEC_CBRT_EXPD_, VEC_CBRT_MANTD_, 4503599627371519.0)
#if defined(__AVX2__)
#define vf_cbrt_fms_ _mm256_fmsub_ps
#define vd_cbrt_fms_ _mm256_fmsub_pd
#define vf_cbrt_fnma_ _mm256_fnmadd_ps
#define vd_cbrt_fnma_ _mm256_fnmadd_pd
#else /* the level's vf_fma (fused on aarch64, a product and a sum on SSE2) */
#define vf_cbrt_fms_(a, b, c) vf_fma((a), (b), vf_sub(vf_set1(0.0f), (c)))
#define vd_cbrt_fms_(a, b, c) vd_fma((a), (b), vd_sub(vd_set1(0.0), (c)))
#define vf_cbrt_fnma_(a, b, c) vf_sub((c), vf_mul((a), (b)))
#define vd_cbrt_fnma_(a, b, c) vd_sub((c), vd_mul((a), (b)))
#endif
/* q = round(t) through the magic constant: k = t + 1.5 2^23 (2^52) carries q in its
 * low bits (vf_pow2_magic's argument) */
#define VEC_CBRT_ROUND_(S, T, t, q, k, MAGIC)                                            \
    do {                                                                                 \
        (k) = v##S##_add((t), v##S##_set1((T)(MAGIC)));                                  \
        (q) = v##S##_sub((k), v##S##_set1((T)(MAGIC)));                                  \
    } while (0)
#if defined(__AVX2__) || defined(__SSE2__)
/* y 2^q for y in [1, 2) and a normal result: q added to y's exponent field (k's bits
 * shifted left leave q << 23 (52), as in vf_pow2_magic) */
#define VEC_CBRT_SCALE_(S, y, q, k) VEC_CBRT_SCALE_##S##_(y, k)
#define VEC_CBRT_SCALE_f_(y, k)                                                          \
    VEC_CBRT_IF_(VEC_CBRT_I_(add_epi32)(VEC_CBRT_FI_(y), VEC_CBRT_I_(slli_epi32)(VEC_CBRT_FI_(k), 23)))
#define VEC_CBRT_SCALE_d_(y, k)                                                          \
    VEC_CBRT_ID_(VEC_CBRT_I_(add_epi64)(VEC_CBRT_DI_(y), VEC_CBRT_I_(slli_epi64)(VEC_CBRT_DI_(k), 52)))
/* y >= 0 given x's sign bit */
#define VEC_CBRT_SIGN_(S, T, x, y)                                                       \
    VEC_CBRT_P_(VEC_CBRT_I_(or_), S)((y), VEC_CBRT_P_(VEC_CBRT_I_(and_), S)((x), v##S##_set1((T)-0.0)))
#else
#define VEC_CBRT_SCALE_(S, y, q, k) v##S##_mul((y), v##S##_pow2_magic(k))
#endif
/* m 2^r, r in {0, 1, 2}: 1 + r (1 + r) / 2, exact */
#define VEC_CBRT_POW2R_(S, T, m, r)                                                      \
    v##S##_mul((m), v##S##_fma((r), v##S##_fma((r), v##S##_set1((T)0.5), v##S##_set1((T)0.5)), \
                               v##S##_set1((T)1)))
#if defined(__AVX2__)
/* x itself where |x| is 0 or not below inf (inf, NaN): one blend */
#define VEC_CBRT_SPECIAL_(S, T, x, y)                                                    \
    VEC_CBRT_P_(_mm256_blendv_, S)((y), (x),                                             \
        VEC_CBRT_P_(_mm256_or_, S)(VEC_CBRT_P_(_mm256_cmp_, S)(v##S##_abs(x), v##S##_set1((T)0), _CMP_EQ_OQ), \
                                   VEC_CBRT_P_(_mm256_cmp_, S)(v##S##_abs(x), v##S##_set1((T)INFINITY), _CMP_NLT_UQ)))
#elif defined(__SSE2__)
#define VEC_CBRT_SPECIAL_(S, T, x, y)                                                    \
    v##S##_sse2_select_(VEC_CBRT_P_(_mm_or_, S)(VEC_CBRT_P_(_mm_cmpeq_, S)((x), v##S##_set1((T)0)), \
                                               VEC_CBRT_P_(_mm_cmpnlt_, S)(v##S##_abs(x), v##S##_set1((T)INFINITY))), \
                        (x), (y))
#else
#define VEC_CBRT_SPECIAL_(S, T, x, y)                                                    \
    v##S##_select_eq((x), v##S##_set1((T)0), (x),                                        \
                     v##S##_select_gt(v##S##_set1((T)INFINITY), v##S##_abs(x), (y), (x)))
#endif
#endif
#ifndef VEC_CBRT_SIGN_
#define VEC_CBRT_SIGN_(S, T, x, y) v##S##_where_neg((x), v##S##_sub(v##S##_set1((T)0), (y)), (y))
#endif

/* a = m 2^r and w times 2^(-r/3), r = e - 3q in {0, 1, 2}: the quadratics through
 * r = 0, 1, 2 (1 + r (1 + r) / 2 is exact); at `avx2` float32 a lookup in a 4-entry
 * table (permutevar, off the FMA ports that bound this loop) by r mod 4 = e + q mod 4,
 * e's integer plus k's bits (q + 1.5 2^23: the same low bits as q). */
#if defined(__AVX2__) && !defined(__AVX512F__)
#define VEC_CBRT_BY_R_(S, T, m, w, e, q, k, a) VEC_CBRT_BY_R_##S##_(T, m, w, e, q, k, a)
#define VEC_CBRT_BY_R_f_(T, m, w, e, q, k, a)                                            \
    do {                                                                                 \
        const __m256i ri_ = _mm256_add_epi32(_mm256_cvttps_epi32(e), _mm256_castps_si256(k)); \
        (void)(q);                                                                       \
        (a) = vf_mul((m), _mm256_permutevar_ps(_mm256_setr_ps(1, 2, 4, 0, 1, 2, 4, 0), ri_)); \
        (w) = vf_mul((w), _mm256_permutevar_ps(_mm256_setr_ps(1, 0.79370052598409979f, 0.62996052494743658f, 0, \
                                                               1, 0.79370052598409979f, 0.62996052494743658f, 0), ri_)); \
    } while (0)
#define VEC_CBRT_BY_R_d_(T, m, w, e, q, k, a) VEC_CBRT_BY_R_POLY_(d, T, m, w, e, q, k, a)
#else
#define VEC_CBRT_BY_R_(S, T, m, w, e, q, k, a) VEC_CBRT_BY_R_POLY_(S, T, m, w, e, q, k, a)
#endif
#define VEC_CBRT_BY_R_POLY_(S, T, m, w, e, q, k, a)                                      \
    do {                                                                                 \
        const v##S##_t r = v##S##_fma((q), v##S##_set1((T)-3), (e));                     \
        (void)(k);                                                                       \
        (a) = VEC_CBRT_POW2R_(S, T, m, r);                                               \
        (w) = v##S##_mul((w), v##S##_fma((r), v##S##_fma((r), v##S##_set1((T)0.021279736489618506), \
                                                         v##S##_set1((T)-0.22757921050551871)), \
                                         v##S##_set1((T)1)));                            \
    } while (0)

/* y^3 - a, with y^2's rounding error carried (y^2 = y2 + e1 exactly): the last step's
 * residual rounded about once, so that the result is the step's own rounding plus a few
 * hundredths of an ulp (y^2 rounded alone costs up to 0.67 ulp more).  Without an FMA
 * (`default`) both products are Dekker's (prod_err_: x - r d exactly), y^2 y - a
 * exact by Sterbenz (y^3 is within a few ulps of a). */
#define VEC_CBRT_RESIDUAL_(S, T)                                                         \
    static inline v##S##_t cbrt_residual_##S(v##S##_t y, v##S##_t a)                    \
    {                                                                                    \
        const v##S##_t y2 = v##S##_mul(y, y);                                            \
        if (VEC_SPECIAL_FUSED_) {                                                        \
            const v##S##_t e1 = v##S##_cbrt_fms_(y, y, y2);                              \
            return v##S##_fma(e1, y, v##S##_cbrt_fms_(y2, y, a));                        \
        }                                                                                \
        const v##S##_t t = v##S##_mul(y2, y);                                            \
        const v##S##_t p1 = prod_err_##S(y, y, y2), p2 = prod_err_##S(y2, y, t);         \
        return v##S##_sub(v##S##_sub(v##S##_sub(t, a), p2), v##S##_mul(p1, y));          \
    }
VEC_CBRT_RESIDUAL_(f, float)
VEC_CBRT_RESIDUAL_(d, double)

/* The common part: a = |x| split into m, e by SPLIT; STEPS Newton steps. */
#define VEC_CBRT_(S, T, SPLIT, MAGIC, POLY, STEPS)                                       \
    static inline v##S##_t cbrt_v##S(v##S##_t x)                                        \
    {                                                                                    \
        v##S##_t m, e, q, k;                                                             \
        SPLIT(v##S##_abs(x), m, e);                                                      \
        /* q = round((e - 1) / 3), r = e - 3q */                                         \
        VEC_CBRT_ROUND_(S, T, v##S##_fma(e, v##S##_set1((T)1 / (T)3), v##S##_set1((T)-1 / (T)3)), \
                        q, k, MAGIC);                                                    \
        v##S##_t a, w;                                                                   \
        POLY(S, T, w, m);                                                                \
        VEC_CBRT_BY_R_(S, T, m, w, e, q, k, a);                                          \
        const v##S##_t z = v##S##_mul(w, w);                                             \
        const v##S##_t z3 = v##S##_mul(z, v##S##_set1((T)1 / (T)3));                     \
        v##S##_t y = v##S##_mul(a, z);                                                   \
        for (int s_ = 1; s_ < (STEPS); s_++)                                             \
            y = v##S##_cbrt_fnma_(v##S##_cbrt_fms_(v##S##_mul(y, y), y, a), z3, y);      \
        y = v##S##_cbrt_fnma_(cbrt_residual_##S(y, a), z3, y);                           \
        y = VEC_CBRT_SCALE_(S, y, q, k);                                                 \
        y = VEC_CBRT_SIGN_(S, T, x, y);                                                  \
        return VEC_CBRT_SPECIAL_(S, T, x, y);                                            \
    }
#define VEC_CBRT_POLY_F_(S, T, w, m)                                                     \
    do {                                                                                 \
        w = vf_set1(-0x1.16d6e6p-6f);                                                    \
        w = vf_fma(w, m, vf_set1(0x1.3fa26p-3f));                                        \
        w = vf_fma(w, m, vf_set1(-0x1.321c5ap-1f));                                      \
        w = vf_fma(w, m, vf_set1(0x1.3e68b6p+0f));                                       \
        w = vf_fma(w, m, vf_set1(-0x1.90e74p+0f));                                       \
        w = vf_fma(w, m, vf_set1(0x1.c7f366p+0f));                                       \
    } while (0)
#define VEC_CBRT_POLY_D_(S, T, w, m)                                                     \
    do {                                                                                 \
        w = vd_set1(-0x1.a6ef1618c3417p-8);                                              \
        w = vd_fma(w, m, vd_set1(0x1.3fd16306ce368p-4));                                 \
        w = vd_fma(w, m, vd_set1(-0x1.a5c5e6b88209bp-2));                                \
        w = vd_fma(w, m, vd_set1(0x1.3da5e4dfa7d9bp+0));                                 \
        w = vd_fma(w, m, vd_set1(-0x1.2cb015e89b946p+1));                                \
        w = vd_fma(w, m, vd_set1(0x1.7428307d4a620p+1));                                 \
        w = vd_fma(w, m, vd_set1(-0x1.36c940c5203acp+1));                                \
        w = vd_fma(w, m, vd_set1(0x1.f817b7b9b0ae8p+0));                                 \
    } while (0)
VEC_CBRT_(f, float, VEC_CBRT_SPLIT_F_, 0x1.8p23f, VEC_CBRT_POLY_F_, 1)
VEC_CBRT_(d, double, VEC_CBRT_SPLIT_D_, 0x1.8p52, VEC_CBRT_POLY_D_, 2)

/* 2 / (2k + 1) for k = 1..10 (rounded to double): the series R of log_corr_ */
static const double log_series_[10] = {
    0.6666666666666666, 0.4, 0.2857142857142857, 0.2222222222222222, 0.18181818181818182,
    0.15384615384615385, 0.13333333333333333, 0.11764705882352941, 0.10526315789473684, 0.09523809523809523,
};

/* log(r) + c for r = x / (1 - x) and logit's small correction c (|c| < 2^-20 of the
 * result), without SLEEF's log (double-double inside: 2.5 ns of the 3.5 per float64
 * element at `avx2`).  r = 2^e m with m in [sqrt(2)/2, sqrt(2)) (the exponent split of
 * cbrt above, subnormals included), f = m - 1 (exact), s = f / (2 + f), so
 *   log(m) = log((1 + s) / (1 - s)) = 2s + s R(s^2),  R(z) = sum_k 2 z^k / (2k + 1),
 * the series to z^5 (float32) / z^10 (float64), |s| < 0.1716, z < 0.0295: the next term
 * under 2^-34 (2^-60) of the sum.  2s = f - s f and s f = hfsq - s hfsq (hfsq = f^2 / 2),
 * so log(m) = f - (hfsq - s (hfsq + R)): the large terms exact or nearly, the rounding
 * of s and R scaled down by s.  The result is e ln2_hi (exact: ln2_hi has the trailing
 * zeros) + (f - (hfsq - (s (hfsq + R) + e ln2_lo + c))), c joining the smallest term.
 * r = +-0 gives -inf, +inf gives +inf, r < 0 and NaN give NaN (the values of log). */
#define VEC_LOGIT_(S, T, SPLIT, NTERMS, LN2HI, LN2LO)                                    \
    static inline v##S##_t log_corr_##S(v##S##_t r, v##S##_t c)                          \
    {                                                                                    \
        const v##S##_t one = v##S##_set1((T)1), zero = v##S##_set1((T)0);                \
        v##S##_t m, e;                                                                   \
        SPLIT(r, m, e);                                                                  \
        const v##S##_t big = v##S##_set1((T)1.41421356237309504880);                     \
        e = v##S##_select_gt(m, big, v##S##_add(e, one), e);                             \
        m = v##S##_select_gt(m, big, v##S##_mul(m, v##S##_set1((T)0.5)), m);              \
        const v##S##_t f = v##S##_sub(m, one);                                           \
        const v##S##_t s = v##S##_div(f, v##S##_add(v##S##_set1((T)2), f));             \
        const v##S##_t z = v##S##_mul(s, s);                                             \
        v##S##_t R = v##S##_set1((T)log_series_[(NTERMS) - 1]);                         \
        for (int k_ = (NTERMS) - 1; k_ >= 1; k_--)                                       \
            R = v##S##_fma(R, z, v##S##_set1((T)log_series_[k_ - 1]));                   \
        R = v##S##_mul(R, z);                                                            \
        const v##S##_t hfsq = v##S##_mul(v##S##_mul(f, f), v##S##_set1((T)0.5));         \
        const v##S##_t lo = v##S##_fma(e, v##S##_set1((T)(LN2LO)),                       \
                                       v##S##_fma(s, v##S##_add(hfsq, R), c));           \
        v##S##_t y = v##S##_fma(e, v##S##_set1((T)(LN2HI)), v##S##_sub(f, v##S##_sub(hfsq, lo))); \
        y = v##S##_select_gt(r, zero, y, v##S##_set1((T)NAN));                           \
        y = v##S##_select_eq(r, zero, v##S##_set1((T)-INFINITY), y);                     \
        return v##S##_select_eq(r, v##S##_set1((T)INFINITY), r, y);                      \
    }                                                                                    \
    static inline v##S##_t logit_##S(v##S##_t x)                                         \
    {                                                                                    \
        const v##S##_t one = v##S##_set1((T)1), zero = v##S##_set1((T)0);                \
        const v##S##_t d = v##S##_sub(one, x);                                           \
        const v##S##_t dlo = v##S##_sub(v##S##_sub(one, d), x);                          \
        const v##S##_t r = v##S##_div(x, d);                                             \
        const v##S##_t t = v##S##_sub(prod_err_##S(r, d, x), v##S##_mul(r, dlo));        \
        v##S##_t c = quot_##S(t, x);                                                     \
        c = v##S##_select_gt(one, v##S##_abs(c), c, zero); /* x = 0, 1 or NaN: 0 */      \
        return log_corr_##S(r, c);                                                       \
    }


VEC_LOGIT_(f, float, VEC_CBRT_SPLIT_F_, 5, 0.693145751953125, 1.428606765330187045e-06)
VEC_LOGIT_(d, double, VEC_CBRT_SPLIT_D_, 10, 6.93147180369123816490e-01, 1.90821492927058770002e-10)

static inline vf_t
erfinv_vf(vf_t x)
{
    const vf_t r = erfinv_start_f(x);
    return vf_select_eq(vf_abs(x), vf_set1(1.0f), vf_mul(x, vf_set1(INFINITY)), r);
}

/* Halley's step on g(r) = erf(r) - x: r - u / (1 + r u), u = g / g',
 * g' = 2/sqrt(pi) e^-r^2 (g'' = -2 r g').  For |x| > 0.9, g = s ((1 - |x|) - erfc(|r|)),
 * s the sign of x (1 - |x| exact). */
static inline vd_t
erfinv_vd(vd_t x)
{
    const vd_t r = erfinv_start_d(x);
    vd_t g = vd_sub(SLEEF_d_(erf)(r), x);
    if (vd_any_abs_gt(x, 0.9)) {
        const vd_t a = vd_abs(x), ar = vd_abs(r);
        const vd_t gt = vd_sub(vd_sub(vd_set1(1.0), a), SLEEF_d15_(erfc)(ar));
        const vd_t gts = vd_where_neg(x, vd_sub(vd_set1(0.0), gt), gt);
        g = vd_select_gt(a, vd_set1(0.9), gts, g);
    }
    const vd_t gp = vd_mul(vd_set1(1.1283791670955126), SLEEF_d_(exp)(vd_sub(vd_set1(0.0), vd_mul(r, r))));
    const vd_t u = vd_div(g, gp);
    vd_t y = vd_sub(r, vd_div(u, vd_fma(r, u, vd_set1(1.0))));
    y = vd_select_eq(x, vd_set1(0.0), x, y); /* +-0 (and no 0/0 at r = 0) */
    return vd_select_eq(vd_abs(x), vd_set1(1.0), vd_mul(x, vd_set1(INFINITY)), y);
}

/* logit with x clamped to [lo, hi] (the ISA's max/min give x where x is NaN). */
static inline vf_t
logit_eps_vf(vf_t x, vf_t lo, vf_t hi)
{
    return logit_f(vf_min(hi, vf_max(lo, x)));
}

static inline vd_t
logit_eps_vd(vd_t x, vd_t lo, vd_t hi)
{
    return logit_d(vd_min(hi, vd_max(lo, x)));
}

/* NAME's loop over float (S = f, T = float) or double (S = d): full vectors, then the
 * tail through one vector padded with PAD.  SETUP declares what EXPR uses from p. */
#define VEC_SPECIAL_LOOP_(NAME, S, T, PAD, SETUP, EXPR)                                  \
    static void NAME(const T *x, T *y, int64_t n, const T *p)                            \
    {                                                                                    \
        (void)p;                                                                         \
        SETUP;                                                                           \
        int64_t i = 0;                                                                   \
        for (; i + v##S##_n <= n; i += v##S##_n) {                                       \
            const v##S##_t v = v##S##_load(x + i);                                       \
            v##S##_store(y + i, EXPR);                                                   \
        }                                                                                \
        if (i < n) {                                                                     \
            T buf[v##S##_n];                                                             \
            for (int k = 0; k < v##S##_n; k++)                                           \
                buf[k] = (T)(PAD);                                                       \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                             \
            const v##S##_t v = v##S##_load(buf);                                         \
            v##S##_store(buf, EXPR);                                                     \
            memcpy(y + i, buf, (size_t)(n - i) * sizeof(T));                             \
        }                                                                                \
    }

VEC_SPECIAL_LOOP_(erfinv_f32, f, float, 0.5f, (void)0, erfinv_vf(v))
/* float64 erfinv: the lanes beyond OPS_ERFINV_DEEP_TAIL_ (1 - |x| < 2^-22, the start
 * needs Newton steps on log(erfc) first) are recomputed by the scalar form; a vector
 * without one costs a comparison. */
static inline void
erfinv_deep_fix_(const double *x, double *y, int n)
{
    for (int k = 0; k < n; k++)
        if (fabs(x[k]) > OPS_ERFINV_DEEP_TAIL_)
            y[k] = ops_math_erfinv_f64(x[k]);
}

static inline vd_t
erfinv_vd_full(vd_t v)
{
    vd_t y = erfinv_vd(v);
    if (vd_any_abs_gt(v, OPS_ERFINV_DEEP_TAIL_)) {
        double in[vd_n], out[vd_n];
        vd_store(in, v);
        vd_store(out, y);
        erfinv_deep_fix_(in, out, vd_n);
        y = vd_load(out);
    }
    return y;
}

VEC_SPECIAL_LOOP_(erfinv_f64, d, double, 0.5, (void)0, erfinv_vd_full(v))
VEC_SPECIAL_LOOP_(cbrt_f32, f, float, 1.0f, (void)0, cbrt_vf(v))
VEC_SPECIAL_LOOP_(cbrt_f64, d, double, 1.0, (void)0, cbrt_vd(v))
VEC_SPECIAL_LOOP_(logit_plain_f32, f, float, 0.5f, (void)0, logit_f(v))
VEC_SPECIAL_LOOP_(logit_plain_f64, d, double, 0.5, (void)0, logit_d(v))
VEC_SPECIAL_LOOP_(logit_eps_f32, f, float, 0.5f,
                  const vf_t lo = vf_set1(p[0]); const vf_t hi = vf_set1(1.0f - p[0]),
                  logit_eps_vf(v, lo, hi))
VEC_SPECIAL_LOOP_(logit_eps_f64, d, double, 0.5,
                  const vd_t lo = vd_set1(p[0]); const vd_t hi = vd_set1(1.0 - p[0]),
                  logit_eps_vd(v, lo, hi))

/* p == NULL or p[0] < 0: no eps, no clamp. */
static void
logit_f32(const float *x, float *y, int64_t n, const float *p)
{
    if (p != NULL && p[0] >= 0.0f)
        logit_eps_f32(x, y, n, p);
    else
        logit_plain_f32(x, y, n, p);
}

static void
logit_f64(const double *x, double *y, int64_t n, const double *p)
{
    if (p != NULL && p[0] >= 0.0)
        logit_eps_f64(x, y, n, p);
    else
        logit_plain_f64(x, y, n, p);
}

#define VEC_SPECIAL_ENTRY_(E, name, S) [OPS_VEC_SPECIAL_##E] = name##_##S,
#define VEC_SPECIAL_F32_(E, name) VEC_SPECIAL_ENTRY_(E, name, f32)
#define VEC_SPECIAL_F64_(E, name) VEC_SPECIAL_ENTRY_(E, name, f64)

const ops_vec_special_table OPS_VEC_NAME(ops_vec_special_table) = {
    .f32 = {OPS_VEC_SPECIAL_LIST(VEC_SPECIAL_F32_)},
    .f64 = {OPS_VEC_SPECIAL_LIST(VEC_SPECIAL_F64_)},
};

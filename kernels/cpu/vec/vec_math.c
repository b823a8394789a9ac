/* Vector loops of the unary math functions (OPS_VEC_UNARY_LIST in vec.h: exp, log, the
 * trigonometric and hyperbolic functions, erf, sqrt, sigmoid, silu, gelu, ...) over
 * contiguous float32/float64, compiled once per instruction-set level
 * (kernels/cpu/vec/meson.build passes the level's flags and OPS_VEC_SUFFIX;
 * docs/cpu-dispatch.md).
 *
 * The functions are SLEEF's 1.0-ulp vector forms for the level's register width (the
 * library PyTorch's CPU kernels use; why not polynomials of our own: the measurements
 * in docs/cpu-dispatch.md), their 3.5-ulp forms for the trigonometric functions and
 * sinh/cosh (SLEEF35_LOOPS_), erfc its 1.5-ulp form (its most accurate); sqrt and rsqrt
 * the correctly rounded vector square root (the same bits as the scalar loop);
 * sigmoid, silu and gelu are written here on SLEEF's exp and erfc, in forms that neither
 * overflow nor cancel (below), and at the levels with FMA on code of ours: erfc and gelu
 * float32 (vf_erfc_own), erf, sigmoid and silu at both precisions and gelu float64 (an exp
 * for arguments <= 0, Newton reciprocals, erf and erfcx polynomials); the glibc fallbacks
 * use the same forms.
 * A run's last n % width elements go through one vector padded in a local buffer, so
 * every element of a run is computed by the same code: a result does not depend on
 * where a run starts or how long it is (threads split runs). */
#include <math.h>

#include "kernels/cpu/vec/vec.h"
#include "include/libops/ops_scalar_math.h"

#include "kernels/cpu/vec/vec_isa.h"

#define BIT_(F) (1u << OPS_VEC_##F)

/* LIBM_MASK_f32/f64: the functions (bits 1 << ops_vec_unary) whose table entry at this
 * level is the scalar glibc loop instead, where `bench bench_vec` measured glibc faster
 * than SLEEF at that width (docs/cpu-dispatch.md "Per level, per function"). */
#if defined(__AVX512F__)
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 BIT_(ACOSH)
#elif defined(__AVX2__) && defined(__FMA__)
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 (BIT_(LOG) | BIT_(LOG2) | BIT_(ASINH) | BIT_(ACOSH))
#elif defined(__SSE2__)
#define LIBM_MASK_f32 (BIT_(LOG) | BIT_(LOG2) | BIT_(ASINH) | BIT_(ACOSH) | BIT_(ERFC))
#define LIBM_MASK_f64                                                                    \
    (BIT_(EXP) | BIT_(LOG) | BIT_(TANH) | BIT_(EXPM1) | BIT_(LOG2) | BIT_(LOG10) | BIT_(ATAN) | \
     BIT_(ASINH) | BIT_(ACOSH) | BIT_(ERF) | BIT_(ERFC) | BIT_(GELU))
#else
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 0u
#endif

/* sigmoid(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, both through
 * e = exp(-|x|) (-|x| as min(x, -x)), which never overflows: the plain 1 / (1 + e^-x)
 * gives 0 below x = -88.7 (float32) where the true value is still a subnormal.
 * erfc(x) is 2 below x = -4 and 0 above 10.1 in float (-6 and 27.3 in double), erf(x)
 * +-1 beyond |x| = 4 (6): the inputs are clamped there, which keeps SLEEF's erfc and erf
 * away from the subnormal e^-x^2 that costs them a slow path (10x on [-10, 10]); a NaN
 * stays NaN through the clamp.
 * silu(x) = x * sigmoid(x), for the same reason (x / (1 + e^-x) is -0 below -88.7).
 * gelu(x) = x/2 * erfc(-x / sqrt 2), as ops_math_gelu_f32/f64; its tanh form
 * x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3), as x * sigmoid(2u), which is
 * the same function (1 + tanh(u) = 2 / (1 + e^-2u)) without the cancellation of
 * 1 + tanh(u) for x << 0 (0 there in float where the value is about x e^2u), and an
 * exp in place of a tanh. */
#define VEC_FORMULAS_(S, T, ERFC_LO, ERFC_HI)                                            \
    static inline v##S##_t v##S##_erfc(v##S##_t x)                                      \
    {                                                                                    \
        const v##S##_t c = v##S##_min(v##S##_set1((T)(ERFC_HI)), x);                      \
        return SLEEF_##S##15_(erfc)(v##S##_max(v##S##_set1((T)(ERFC_LO)), c));            \
    }                                                                                    \
    static inline v##S##_t v##S##_sigmoid(v##S##_t x)                                   \
    {                                                                                    \
        const v##S##_t one = v##S##_set1((T)1);                                          \
        const v##S##_t neg_abs = v##S##_min(x, v##S##_sub(v##S##_set1((T)0), x));          \
        const v##S##_t e = SLEEF_##S##_(exp)(neg_abs);                                   \
        const v##S##_t r = v##S##_div(one, v##S##_add(one, e));                          \
        return v##S##_where_neg(x, v##S##_mul(e, r), r);                                 \
    }                                                                                    \
    static inline v##S##_t v##S##_silu(v##S##_t x)                                      \
    {                                                                                    \
        return v##S##_mul(x, v##S##_sigmoid(x));                                         \
    }                                                                                    \
    static inline v##S##_t v##S##_rsqrt(v##S##_t x)                                     \
    {                                                                                    \
        return v##S##_div(v##S##_set1((T)1), v##S##_sqrt(x));                            \
    }                                                                                    \
    static inline v##S##_t v##S##_gelu(v##S##_t x)                                      \
    {                                                                                    \
        const v##S##_t z = v##S##_mul(v##S##_sub(v##S##_set1((T)0), x),                  \
                                      v##S##_set1((T)0.70710678118654752440));           \
        return v##S##_mul(v##S##_mul(v##S##_set1((T)0.5), x), v##S##_erfc(z));             \
    }                                                                                    \
    static inline v##S##_t v##S##_gelu_tanh(v##S##_t x)                                 \
    {                                                                                    \
        const v##S##_t x3 = v##S##_mul(v##S##_mul(v##S##_mul(v##S##_set1((T)0.044715), x), x), x); \
        const v##S##_t two_u =                                                           \
            v##S##_mul(v##S##_set1((T)(2 * 0.79788456080286535588)), v##S##_add(x, x3));  \
        return v##S##_mul(x, v##S##_sigmoid(two_u));                                     \
    }
VEC_FORMULAS_(f, float, -4.0f, 10.1f)
VEC_FORMULAS_(d, double, -6.0, 27.3)

/* Own float32 erfc for the levels with FMA (avx2, avx512), for erfc and gelu: SLEEF's
 * erfcf costs 4 ns per element near 0 and 10-40 ns on [-10, 10] (its slow branches),
 * PyTorch's gelu is a polynomial (docs/cpu-dispatch.md).  For a = |z|:
 *   erfc(a) = e^-a^2 * erfcx(a),  erfcx(a) = t * Q(t),  t = 1 / (1 + a/2),
 * Q a degree-10 polynomial fitted (least squares on the relative error, against SciPy's
 * erfcx, a in [0, 10.1]; fit error 3.6e-9, 2e-7 evaluated in float); a^2 = hi - nlo
 * exactly (FMA), e^-a^2 = e^-hi * (1 + nlo); erfc(z) = 2 - erfc(|z|) below 0 (in [1, 2]:
 * no cancellation).  Beyond |z| = 10.1 erfc(|z|) is 0 in float: a is clamped there (a
 * NaN stays NaN).  gelu passes a^2 = x^2 / 2 from x itself, so its tail does not carry the
 * rounding of x / sqrt 2 (which costs the plain float formula up to 100 ulp). */
#if defined(__FMA__)
#define OWN_ERFC_F32 1
/* 1 / d for d in [1, 7] (t's denominator below), without the divide: vdivps is the
 * costliest instruction of erfc/gelu (one port, a long throughput against 2 FMAs per
 * cycle).  AVX-512's rcp14 (relative error 2^-14) and one Newton step r + r (1 - d r)
 * give 2^-28 (below float's rounding); AVX2's rcp (1.5 * 2^-12) needs two steps for
 * that, one leaves about 2 ulp in t (erf's form above 1.5 takes that, vf_erf_own).
 * A NaN stays NaN. */
static inline vf_t
vf_recip_(vf_t d, int fast)
{
#if defined(__AVX512F__)
    (void)fast;
    vf_t r = _mm512_rcp14_ps(d);
    r = _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, vf_set1(1.0f)), r);
#else
    vf_t r = _mm256_rcp_ps(d);
    r = _mm256_fmadd_ps(r, _mm256_fnmadd_ps(d, r, vf_set1(1.0f)), r);
    if (!fast)
        r = _mm256_fmadd_ps(r, _mm256_fnmadd_ps(d, r, vf_set1(1.0f)), r);
#endif
    return r;
}

/* c - a * b in one rounding (the levels here have FMA) */
#if defined(__AVX512F__)
#define vf_fnma_ _mm512_fnmadd_ps
#define vd_fnma_ _mm512_fnmadd_pd
#else
#define vf_fnma_ _mm256_fnmadd_ps
#define vd_fnma_ _mm256_fnmadd_pd
#endif

/* e^-h * 2^64 for h in [0, 131] (a^2 at erfc's and gelu's clamps, |x| at sigmoid's and
 * silu's): SLEEF's expf handles every input (overflow, underflow, subnormal results:
 * about 20 operations); this range needs none of it.  -h = n ln2 - r' (n = round(-h / ln2)
 * read from the bits of -h / ln2 + 1.5 * 2^23 + 64 + 127, whose low bits shifted into
 * the exponent field are 2^(n + 64); ln2 in two parts, so r' = h + n ln2 in
 * [-ln2/2, ln2/2] exactly enough), e^-r' by a degree-6 polynomial in r' (least squares
 * on the relative error, fit error 0.06 ulp), times 2^(n + 64): the result is normal
 * (2^-126 to 2^64) where e^-h itself goes subnormal (beyond h = 87.3), so the tail keeps
 * its bits; the caller carries the 2^-64.  A NaN h gives a NaN (the polynomial's). */
static inline vf_t
vf_exp_neg_2p64_(vf_t h)
{
    const vf_t kd = vf_fma(h, vf_set1(-1.44269504088896340736f), vf_set1(12582912.0f + 191.0f));
    const vf_t n = vf_sub(kd, vf_set1(12582912.0f + 191.0f));
    vf_t r = vf_fma(n, vf_set1(0.693145751953125f), h);
    r = vf_fma(n, vf_set1(1.428606765330187045e-06f), r);
    vf_t p = vf_set1(0.001375131425447762f);
    p = vf_fma(p, r, vf_set1(-0.008368944749236107f));
    p = vf_fma(p, r, vf_set1(0.041669536381959915f));
    p = vf_fma(p, r, vf_set1(-0.166665181517601f));
    p = vf_fma(p, r, vf_set1(0.49999988079071045f));
    p = vf_fma(p, r, vf_set1(-1.0f));
    p = vf_fma(p, r, vf_set1(1.0f));
    /* bits(kd) = bits(1.5 * 2^23) + n + 191; shifted by 23 the constant part leaves, and
     * n + 191 in [1, 191] is the biased exponent of 2^(n + 64).  A product, not an integer
     * add to p's exponent: the same bits, and a NaN p stays NaN. */
#if defined(__AVX512F__)
    return vf_mul(p, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(kd), 23)));
#else
    return vf_mul(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(kd), 23)));
#endif
}

/* erfc(a) for a = |z|, from t = 1 / d (vf_erfc_abs_: from t's denominator d = 1 + a/2)
 * and a^2 = hi - nlo (see above): e^-a^2 = e^-hi (1 + nlo), one FMA.  Q's coefficients
 * carry the 2^-64 of vf_exp_neg_2p64_ (a power of 2: exact).  fast (a constant): a
 * degree-8 Q (fitted as
 * the degree-10 one, minimax by reweighting: 1.0 ulp with its float coefficients
 * against 0.14), for erf and gelu at AVX2 (and, in vf_erfc_abs_, the one-step
 * reciprocal: erf's; gelu divides). */
static inline vf_t
vf_erfc_abs_t_(vf_t t, vf_t hi, vf_t nlo, int fast)
{
#define Q_(c) vf_set1((c) * 0x1p-64f)
    vf_t q;
    if (fast) {
        q = Q_(-5.9098709374666214e-02f);
        q = vf_fma(q, t, Q_(2.847203016281128e-01f));
        q = vf_fma(q, t, Q_(-4.875012934207916e-01f));
        q = vf_fma(q, t, Q_(2.7841252088546753e-01f));
        q = vf_fma(q, t, Q_(-2.6864005252718925e-02f));
        q = vf_fma(q, t, Q_(2.0278790593147278e-01f));
        q = vf_fma(q, t, Q_(2.4307817220687866e-01f));
        q = vf_fma(q, t, Q_(2.8237882256507874e-01f));
        q = vf_fma(q, t, Q_(2.8208622336387634e-01f));
    } else {
        q = Q_(3.591787443e-02f);
        q = vf_fma(q, t, Q_(-1.919120252e-01f));
        q = vf_fma(q, t, Q_(3.836504221e-01f));
        q = vf_fma(q, t, Q_(-2.928294837e-01f));
        q = vf_fma(q, t, Q_(-1.899818331e-02f));
        q = vf_fma(q, t, Q_(3.362909704e-02f));
        q = vf_fma(q, t, Q_(5.558187515e-02f));
        q = vf_fma(q, t, Q_(1.854141355e-01f));
        q = vf_fma(q, t, Q_(2.452077866e-01f));
        q = vf_fma(q, t, Q_(2.822498977e-01f));
        q = vf_fma(q, t, Q_(2.820886075e-01f));
    }
#undef Q_
    const vf_t tq = vf_mul(t, q); /* normal: (1 + nlo) here, not on a subnormal product */
    return vf_mul(vf_exp_neg_2p64_(hi), vf_fma(tq, nlo, tq));
}

static inline vf_t
vf_erfc_abs_(vf_t d, vf_t hi, vf_t nlo, int fast)
{
    return vf_erfc_abs_t_(vf_recip_(d, fast), hi, nlo, fast);
}

static inline vf_t
vf_erfc_own(vf_t z)
{
    const vf_t a = vf_min(vf_set1(10.1f), vf_abs(z));
    const vf_t hi = vf_mul(a, a), nlo = vf_fnma_(a, a, hi);
    const vf_t r = vf_erfc_abs_(vf_fma(a, vf_set1(0.5f), vf_set1(1.0f)), hi, nlo, 0);
    return vf_where_neg(z, vf_sub(vf_set1(2.0f), r), r);
}

/* gelu(x) = x/2 * erfc(-x / sqrt 2): a = |x| / sqrt 2, a^2 = |x| * (|x| / 2) = hi - nlo
 * exactly (|x| / 2 is exact), and t's denominator 1 + a/2 = 1 + |x| / (2 sqrt 2) in one
 * FMA (a itself is not needed).  The x/2 stays outside erfc: an erfc/2 from the
 * polynomial would save the product but lose a bit where it is subnormal (x near -13).
 * At AVX2 (half AVX-512's width: 1.2-1.3x torch's time with erfc's own form) the
 * degree-8 erfc and t = 1 / d by a division: at this loop's length (about 30
 * operations a vector) vdivps's throughput is hidden behind the FMAs, one instruction
 * against rcp's three, and t exact (the one-step rcp left 2 ulp in t, 8.0 ulp in gelu
 * over the step-61 sweep; 6.0 with the division, as AVX-512's degree-10 form).  At
 * both levels, with r = erfc(|x| / sqrt 2), the result as -(|x|/2 r) - d in one FMA,
 * d = min(x, -0) - x (-x for x > 0: x - x/2 r; +0 below: x/2 r, -0 where it
 * underflows; x/2 erfc(-x / sqrt 2) either way, one rounding), in place of 2 - r, a
 * blend and two products.  vminps returns its second operand where both are zero or x
 * is NaN: d = -0 at +0 (+0 out), +0 at -0 (-0 out), NaN at NaN, NaN at -inf
 * (-inf - -inf, as x/2 (1 + erf) = -inf * 0), -inf at +inf (+inf out; r is 0 at the
 * clamp). */
static inline vf_t
vf_gelu_own(vf_t x)
{
    const vf_t ax = vf_min(vf_set1(14.3f), vf_abs(x)), hax = vf_mul(ax, vf_set1(0.5f));
    const vf_t hi = vf_mul(ax, hax), nlo = vf_fnma_(ax, hax, hi);
    const vf_t d = vf_fma(ax, vf_set1(0.35355339059327376220f), vf_set1(1.0f));
#if defined(__AVX512F__)
    const vf_t r = vf_erfc_abs_(d, hi, nlo, 0);
    return _mm512_fnmsub_ps(hax, r, vf_sub(_mm512_min_ps(x, vf_set1(-0.0f)), x));
#else
    const vf_t r = vf_erfc_abs_t_(_mm256_div_ps(vf_set1(1.0f), d), hi, nlo, 1);
    return _mm256_fnmsub_ps(hax, r, vf_sub(_mm256_min_ps(x, vf_set1(-0.0f)), x));
#endif
}

/* erf float32 at the levels with FMA (SLEEF's erff cost 5-6 times its expf here): for
 * |x| < 1.5, x P(x^2), P of degree 8 (Chebyshev interpolation of erf(x) / x in x^2 on
 * [0, 2.25], fit error 0.02 ulp); above, sign(x) (1 - erfc(|x|)) on the erfc above (its
 * degree-8 form: erfc(1.5) = 0.034, so its error reaches erf divided by 30), |x| clamped
 * at 4 (erf is 1 in float from 3.92).  A NaN takes the second branch (the comparison
 * fails) and stays NaN there. */
static inline vf_t
vf_erf_own(vf_t x)
{
    const vf_t s = vf_mul(x, x);
    vf_t p = vf_set1(6.205872864484263e-07f);
    p = vf_fma(p, s, vf_set1(-1.1328873370075598e-05f));
    p = vf_fma(p, s, vf_set1(0.00011309676483506337f));
    p = vf_fma(p, s, vf_set1(-0.0008454627241007984f));
    p = vf_fma(p, s, vf_set1(0.0052169193513691425f));
    p = vf_fma(p, s, vf_set1(-0.02686314843595028f));
    p = vf_fma(p, s, vf_set1(0.11283726245164871f));
    p = vf_fma(p, s, vf_set1(-0.37612634897232056f));
    p = vf_fma(p, s, vf_set1(1.128379225730896f));
    const vf_t small = vf_mul(x, p);
    const vf_t a = vf_min(vf_set1(4.0f), vf_abs(x));
    const vf_t hi = vf_mul(a, a), nlo = vf_fnma_(a, a, hi);
    const vf_t r = vf_erfc_abs_(vf_fma(a, vf_set1(0.5f), vf_set1(1.0f)), hi, nlo, 1);
    const vf_t large = vf_where_neg(x, vf_sub(r, vf_set1(1.0f)), vf_sub(vf_set1(1.0f), r));
    return vf_select_gt(vf_set1(1.5f), a, small, large);
}

/* sigmoid and silu at the levels with FMA, without SLEEF's expf and the divide (vdivps:
 * one port and a long throughput, the costliest instruction of both at AVX2):
 * E = e^-|x| 2^64 by vf_exp_neg_2p64_ (|x| clamped at 120, where both are 0 in float),
 * r = 1 / (1 + e^-|x|) by vf_recip_ (the two-step form: under float's rounding),
 * sigmoid = r for x >= 0 and (E r) 2^-64 below, silu = x r and (x E r) 2^-64: the 2^-64
 * goes last, so a subnormal result is rounded once (x sigmoid(x) multiplied an already
 * rounded subnormal sigmoid by x: 52 ulp at x = -104).  silu's x is clamped at -120 too
 * (x e^x is 0 in float below -108.6; unclamped, a huge x times the clamped E would not
 * be), and x - x (NaN at -inf, else 0) keeps silu(-inf) = -inf * 0 = NaN as before. */
static inline vf_t
vf_sigmoid_own(vf_t x)
{
    const vf_t e64 = vf_exp_neg_2p64_(vf_min(vf_set1(120.0f), vf_abs(x)));
    const vf_t r = vf_recip_(vf_fma(e64, vf_set1(0x1p-64f), vf_set1(1.0f)), 0);
    return vf_where_neg(x, vf_mul(vf_mul(e64, r), vf_set1(0x1p-64f)), r);
}

static inline vf_t
vf_silu_own(vf_t x)
{
    const vf_t e64 = vf_exp_neg_2p64_(vf_min(vf_set1(120.0f), vf_abs(x)));
    const vf_t r = vf_recip_(vf_fma(e64, vf_set1(0x1p-64f), vf_set1(1.0f)), 0);
    const vf_t xe = vf_mul(vf_max(vf_set1(-120.0f), x), e64); /* max(c, NaN) is NaN */
    const vf_t neg = vf_mul(vf_mul(xe, vf_add(r, vf_sub(x, x))), vf_set1(0x1p-64f));
    return vf_where_neg(x, neg, vf_mul(x, r));
}

/* The float64 counterparts, and gelu float64 (SLEEF's double erfc was 72% of its time).
 * e^-h 2^128 for h in [0, 797]: as vf_exp_neg_2p64_, ln2's high part with 42 bits (n has
 * 11: n ln2hi exact), e^-r' by a degree-11 polynomial (Chebyshev interpolation of e^-r on
 * [-ln2/2, ln2/2], fit error 1.6e-17, 0.15 ulp), times 2^(n + 128), normal down to
 * 2^-1022 where e^-h is subnormal beyond h = 708. */
static inline vd_t
vd_exp_neg_2p128_(vd_t h)
{
    const vd_t magic = vd_set1(6755399441055744.0 + 128.0 + 1023.0);
    const vd_t kd = vd_fma(h, vd_set1(-1.4426950408889634), magic);
    const vd_t n = vd_sub(kd, magic);
    vd_t r = vd_fma(n, vd_set1(0.6931471805598903), h);
    r = vd_fma(n, vd_set1(5.497923018708371e-14), r);
    /* The terms of degree 3 to 11 by Estrin's scheme (pairs, then r^2, r^4, r^8), the last
     * three by Horner's (they make the rounding of the result): a chain of 7 FMAs after
     * r^8 in place of 11, for loops bound by latency (sigmoid float64 at AVX2 took as long
     * as with SLEEF's exp and a divide) */
    const vd_t r2 = vd_mul(r, r), r4 = vd_mul(r2, r2), r8 = vd_mul(r4, r4);
#define PAIR_(hi, lo) vd_fma(vd_set1(hi), r, vd_set1(lo))
    const vd_t p34 = PAIR_(0.04166666666648795, -0.1666666666666668);
    const vd_t p56 = PAIR_(0.0013888888952352863, -0.008333333333319589);
    const vd_t p78 = PAIR_(2.4801485441561313e-05, -0.00019841269890076403);
    const vd_t p910 = PAIR_(2.763265472252779e-07, -2.755724088722987e-06);
#undef PAIR_
    const vd_t b = vd_fma(vd_fma(p910, r2, p78), r4, vd_fma(p56, r2, p34));
    vd_t p = vd_fma(vd_set1(-2.5110049204818658e-08), r8, b);
    p = vd_fma(p, r, vd_set1(0.5000000000000019));
    p = vd_fma(p, r, vd_set1(-1.0));
    p = vd_fma(p, r, vd_set1(1.0));
    /* bits(kd) = bits(1.5 * 2^52) + n + 1151: shifted by 52, 2^(n + 128) */
#if defined(__AVX512F__)
    return vd_mul(p, _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_castpd_si512(kd), 52)));
#else
    return vd_mul(p, _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(kd), 52)));
#endif
}

/* 1 / d for d in [1, 9] without vdivpd: rcp14 (2^-14) and two Newton steps at AVX-512;
 * at AVX2 the float32 rcp (1.5 * 2^-12) of d rounded to float, and three steps.  The
 * error left is the last step's rounding (under 1 ulp); a NaN stays NaN. */
static inline vd_t
vd_recip_(vd_t d)
{
#if defined(__AVX512F__)
    vd_t r = _mm512_rcp14_pd(d);
#else
    vd_t r = _mm256_cvtps_pd(_mm_rcp_ps(_mm256_cvtpd_ps(d)));
    r = vd_fma(r, vd_fnma_(d, r, vd_set1(1.0)), r);
#endif
    r = vd_fma(r, vd_fnma_(d, r, vd_set1(1.0)), r);
    r = vd_fma(r, vd_fnma_(d, r, vd_set1(1.0)), r);
    return r;
}

/* As vf_sigmoid_own / vf_silu_own; |x| and -x clamped at 760 (silu(x) is 0 in double
 * below -752). */
static inline vd_t
vd_sigmoid_own(vd_t x)
{
    const vd_t e128 = vd_exp_neg_2p128_(vd_min(vd_set1(760.0), vd_abs(x)));
    const vd_t r = vd_recip_(vd_fma(e128, vd_set1(0x1p-128), vd_set1(1.0)));
    return vd_where_neg(x, vd_mul(vd_mul(e128, r), vd_set1(0x1p-128)), r);
}

static inline vd_t
vd_silu_own(vd_t x)
{
    const vd_t e128 = vd_exp_neg_2p128_(vd_min(vd_set1(760.0), vd_abs(x)));
    const vd_t r = vd_recip_(vd_fma(e128, vd_set1(0x1p-128), vd_set1(1.0)));
    const vd_t xe = vd_mul(vd_max(vd_set1(-760.0), x), e128);
    const vd_t neg = vd_mul(vd_mul(xe, vd_add(r, vd_sub(x, x))), vd_set1(0x1p-128));
    return vd_where_neg(x, neg, vd_mul(x, r));
}

/* erfcx(a) 2^-128 = t Q(t) 2^-128 for t = 1 / (1 + a / 3.5): Q of degree 20, Chebyshev
 * interpolation of erfcx(a) / t over a in [0, 27.3] (mpmath, 40 digits) for the t of
 * vd_gelu_own (1 + c |x|, c = 1 / (3.5 sqrt 2) as a double); fit error 3.7e-16 (1.7-3.3
 * ulp), the best this variable gives (higher degrees stall there).  The 2^-128 (exact)
 * is vd_exp_neg_2p128_'s. */
static inline vd_t
vd_erfcx_2m128_(vd_t t)
{
#define Q_(c) vd_set1((c) * 0x1p-128)
    vd_t q = Q_(0.0003415827026661785);
    q = vd_fma(q, t, Q_(-0.0008437231193819942));
    q = vd_fma(q, t, Q_(-0.012741047777724286));
    q = vd_fma(q, t, Q_(0.09760361616992956));
    q = vd_fma(q, t, Q_(-0.3337496314116621));
    q = vd_fma(q, t, Q_(0.6975090193093674));
    q = vd_fma(q, t, Q_(-0.9944811483361222));
    q = vd_fma(q, t, Q_(1.0409457300330627));
    q = vd_fma(q, t, Q_(-0.8410378828811506));
    q = vd_fma(q, t, Q_(0.5217133348019117));
    q = vd_fma(q, t, Q_(-0.25885329509818167));
    q = vd_fma(q, t, Q_(0.11564863331947135));
    q = vd_fma(q, t, Q_(-0.0037524605755744215));
    q = vd_fma(q, t, Q_(0.05823427858248494));
    q = vd_fma(q, t, Q_(0.07281683681908464));
    q = vd_fma(q, t, Q_(0.09967621635538894));
    q = vd_fma(q, t, Q_(0.12249747011599596));
    q = vd_fma(q, t, Q_(0.14146100295672512));
    q = vd_fma(q, t, Q_(0.15461741550050348));
    q = vd_fma(q, t, Q_(0.16119702874143815));
    q = vd_fma(q, t, Q_(0.16119702379176717));
#undef Q_
    return vd_mul(t, q);
}

/* gelu(x) = x/2 * erfc(-x / sqrt 2) in double, as vf_gelu_own: for a = |x| / sqrt 2 (|x|
 * clamped at 38.6, where erfc(a) is 0 in double), a^2 = |x| (|x| / 2) = hi - nlo exactly,
 * erfc(a) = e^-a^2 erfcx(a), e^-a^2 = e^-hi (1 + nlo), erfcx(a) = t Q(t),
 * t = 1 / (1 + c |x|) with c = 1 / (3.5 sqrt 2) as the double constant (t = 3.5 / (3.5 + a)),
 * Q in vd_erfcx_2m128_ (fitted for the c the code multiplies by).  x < 0 (by the sign
 * bit: -0 gives -0): (x/2 e^-hi 2^128) (t Q (1 + nlo)), in that order: both products
 * stay normal for any x (x/2 t Q would underflow for tiny x, e^-hi t Q where the result
 * is subnormal), so a subnormal result is rounded once; x - x makes gelu(-inf) =
 * -inf * 0 = NaN as before.
 * x >= 0: x/2 (2 - erfc). */
static inline vd_t
vd_gelu_own(vd_t x)
{
    const vd_t ax = vd_min(vd_set1(38.6), vd_abs(x)), hax = vd_mul(ax, vd_set1(0.5));
    const vd_t hi = vd_mul(ax, hax), nlo = vd_fnma_(ax, hax, hi);
    const vd_t t = vd_recip_(vd_fma(ax, vd_set1(0.20203050891044216), vd_set1(1.0)));
    const vd_t tq = vd_erfcx_2m128_(t);
    const vd_t w = vd_fma(tq, nlo, tq); /* erfcx(a) (1 + nlo) 2^-128 */
    const vd_t e128 = vd_exp_neg_2p128_(hi);
    const vd_t pos = vd_mul(vd_mul(vd_set1(0.5), x), vd_sub(vd_set1(2.0), vd_mul(e128, w)));
    const vd_t neg =
        vd_mul(vd_mul(vd_mul(vd_set1(-0.5), ax), e128), vd_add(w, vd_sub(x, x)));
#if defined(__AVX512F__)
    return _mm512_mask_blend_pd(_mm512_movepi64_mask(_mm512_castpd_si512(x)), pos, neg);
#else
    return _mm256_blendv_pd(pos, neg, x);
#endif
}
/* erf float64, as vf_erf_own: for |x| < 1, x P(x^2) with P of degree 12 (Chebyshev
 * interpolation of erf(x) / x in x^2 on [0, 1]), its constant term apart:
 * fma(x, P(0), x x^2 R(x^2)), so x P(0) is not rounded before the smaller rest is added
 * (0.9 ulp evaluated, against 1.4 for plain Horner); above, sign(x) (1 - erfc(|x|)), erfc
 * as in vd_gelu_own with a = |x| (t = 1 / (1 + a / 3.5)), |x| clamped at 6 (erf is 1 in
 * double from 5.9).  A NaN takes the second branch and stays NaN there. */
static inline vd_t
vd_erf_own(vd_t x)
{
    const vd_t s = vd_mul(x, x);
    vd_t q = vd_set1(5.957176147748911e-11);
    q = vd_fma(q, s, vd_set1(-1.1372848856791674e-09));
    q = vd_fma(q, s, vd_set1(1.4659775274047436e-08));
    q = vd_fma(q, s, vd_set1(-1.6350312701054695e-07));
    q = vd_fma(q, s, vd_set1(1.6461000484121368e-06));
    q = vd_fma(q, s, vd_set1(-1.4925595266831182e-05));
    q = vd_fma(q, s, vd_set1(0.0001205533111164271));
    q = vd_fma(q, s, vd_set1(-0.000854832698083379));
    q = vd_fma(q, s, vd_set1(0.0052239776248180145));
    q = vd_fma(q, s, vd_set1(-0.026866170645076792));
    q = vd_fma(q, s, vd_set1(0.11283791670954879));
    q = vd_fma(q, s, vd_set1(-0.3761263890318375));
    vd_t small = vd_fma(x, vd_set1(1.1283791670955126), vd_mul(vd_mul(x, s), q));
    /* x = -0 gives -0 + +0 above: x's sign bit back (erf has x's sign) */
#if defined(__AVX512F__)
    small = _mm512_or_pd(small, _mm512_and_pd(x, vd_set1(-0.0)));
#else
    small = _mm256_or_pd(small, _mm256_and_pd(x, vd_set1(-0.0)));
#endif
    const vd_t a = vd_min(vd_set1(6.0), vd_abs(x));
    const vd_t hi = vd_mul(a, a), nlo = vd_fnma_(a, a, hi);
    const vd_t tq = vd_erfcx_2m128_(vd_recip_(vd_fma(a, vd_set1(1 / 3.5), vd_set1(1.0))));
    const vd_t r = vd_mul(vd_exp_neg_2p128_(hi), vd_fma(tq, nlo, tq));
    const vd_t large = vd_where_neg(x, vd_sub(r, vd_set1(1.0)), vd_sub(vd_set1(1.0), r));
    return vd_select_gt(vd_set1(1.0), a, small, large);
}
#undef vf_fnma_
#undef vd_fnma_
#endif

/* NAME's loop over float (S = f, T = float) or double (S = d): full vectors, then the
 * tail through one vector padded with PAD (inside the function's domain and away from
 * its poles, so the padding raises no floating-point exception and costs no slow
 * path).  LIM > 0: the elements with |x| > LIM are SCALAR(x) instead (glibc), for the
 * functions whose SLEEF form is limited to |x| <= LIM (sinh, cosh: overflow inside;
 * asinh, acosh: x^2; log1p: inf above 1e38 at float32), found by the sweeps of
 * `bench bench_vec` and the conformance extremes; a vector with no such element costs
 * one comparison. */
#define VEC_LOOP_(NAME, S, T, PAD, EXPR, LIM, SCALAR)                                    \
    static inline void NAME##_fix_(const T *x, T *y, int n)                              \
    {                                                                                    \
        for (int k = 0; k < n; k++)                                                      \
            if (fabs((double)x[k]) > (double)(LIM))                                      \
                y[k] = SCALAR(x[k]);                                                     \
    }                                                                                    \
    static void NAME(const T *x, T *y, int64_t n)                                        \
    {                                                                                    \
        int64_t i = 0;                                                                   \
        for (; i + v##S##_n <= n; i += v##S##_n) {                                        \
            const v##S##_t v = v##S##_load(x + i);                                       \
            if ((LIM) > 0 && v##S##_any_abs_gt(v, (T)(LIM))) {                           \
                T in[v##S##_n]; /* y may be x */                                         \
                v##S##_store(in, v);                                                     \
                v##S##_store(y + i, EXPR);                                               \
                NAME##_fix_(in, y + i, v##S##_n);                                        \
            } else {                                                                     \
                v##S##_store(y + i, EXPR);                                               \
            }                                                                            \
        }                                                                                \
        if (i < n) {                                                                     \
            T buf[v##S##_n], out[v##S##_n];                                              \
            for (int k = 0; k < v##S##_n; k++)                                           \
                buf[k] = (T)(PAD);                                                       \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                             \
            const v##S##_t v = v##S##_load(buf);                                         \
            v##S##_store(out, EXPR);                                                     \
            if ((LIM) > 0 && v##S##_any_abs_gt(v, (T)(LIM)))                             \
                NAME##_fix_(buf, out, v##S##_n);                                         \
            memcpy(y + i, out, (size_t)(n - i) * sizeof(T));                             \
        }                                                                                \
    }

/* Both precisions of function FN: VF (float32) and VD (float64) are the vector
 * expressions of v. */
#define VEC_LOOPS_(FN, PAD, VF, VD)                                                      \
    VEC_LOOP_(FN##_f32, f, float, PAD, VF, 0, )                                          \
    VEC_LOOP_(FN##_f64, d, double, PAD, VD, 0, )
/* SLEEF's 1.0-ulp form of FN at both precisions. */
#define SLEEF_LOOPS_(FN, PAD) VEC_LOOPS_(FN, PAD, SLEEF_f_(FN)(v), SLEEF_d_(FN)(v))
/* SLEEF's 3.5-ulp form: the trigonometric functions and sinh/cosh, where a comparison
 * of the two (docs/cpu-dispatch.md) measured it 1.3x to 3x faster than the 1.0-ulp form
 * at every width, the sweep's error stays within 3.5 ulp and the conformance tolerances
 * hold (docs/cpu-dispatch.md "Accuracy"). */
#define SLEEF35_LOOPS_(FN, PAD) VEC_LOOPS_(FN, PAD, SLEEF_f35_(FN)(v), SLEEF_d35_(FN)(v))
/* FORM(FN) (SLEEF_f_ / SLEEF_f35_ ...) within |x| <= LIM32 / LIM64, glibc's FN beyond. */
#define LIMITED_LOOPS_(FN, PAD, FORMF, FORMD, LIM32, LIM64)                              \
    VEC_LOOP_(FN##_f32, f, float, PAD, FORMF(FN)(v), LIM32, FN##f)                       \
    VEC_LOOP_(FN##_f64, d, double, PAD, FORMD(FN)(v), LIM64, FN)

SLEEF_LOOPS_(exp, 1)
SLEEF_LOOPS_(log, 1)
SLEEF_LOOPS_(tanh, 1)
#if defined(OWN_ERFC_F32)
VEC_LOOPS_(sigmoid, 1, vf_sigmoid_own(v), vd_sigmoid_own(v))
#else
VEC_LOOPS_(sigmoid, 1, vf_sigmoid(v), vd_sigmoid(v))
#endif
SLEEF_LOOPS_(expm1, 1)
LIMITED_LOOPS_(log1p, 1, SLEEF_f_, SLEEF_d_, 1e38, 1e307)
SLEEF_LOOPS_(log2, 1)
SLEEF_LOOPS_(log10, 1)
SLEEF35_LOOPS_(sin, 1)
SLEEF35_LOOPS_(cos, 1)
SLEEF35_LOOPS_(tan, 1)
SLEEF35_LOOPS_(asin, 0.5)
SLEEF35_LOOPS_(acos, 0.5)
SLEEF35_LOOPS_(atan, 1)
LIMITED_LOOPS_(sinh, 1, SLEEF_f35_, SLEEF_d35_, 88, 709)
LIMITED_LOOPS_(cosh, 1, SLEEF_f35_, SLEEF_d35_, 88, 709)
LIMITED_LOOPS_(asinh, 1, SLEEF_f_, SLEEF_d_, 1e18, 1e150)
LIMITED_LOOPS_(acosh, 2, SLEEF_f_, SLEEF_d_, 1e18, 1e150)
SLEEF_LOOPS_(atanh, 0.5)
/* erf clamped to [-4, 4] ([-6, 6]), as erfc above; ours where the level has FMA. */
#if defined(OWN_ERFC_F32)
VEC_LOOPS_(erf, 1, vf_erf_own(v), vd_erf_own(v))
#else
VEC_LOOPS_(erf, 1, SLEEF_f_(erf)(vf_max(vf_set1(-4.0f), vf_min(vf_set1(4.0f), v))),
           SLEEF_d_(erf)(vd_max(vd_set1(-6.0), vd_min(vd_set1(6.0), v))))
#endif
#if defined(OWN_ERFC_F32)
VEC_LOOPS_(erfc, 1, vf_erfc_own(v), vd_erfc(v))
VEC_LOOPS_(gelu, 1, vf_gelu_own(v), vd_gelu_own(v))
#else
VEC_LOOPS_(erfc, 1, vf_erfc(v), vd_erfc(v))
VEC_LOOPS_(gelu, 1, vf_gelu(v), vd_gelu(v))
#endif
VEC_LOOPS_(sqrt, 1, vf_sqrt(v), vd_sqrt(v))
VEC_LOOPS_(rsqrt, 1, vf_rsqrt(v), vd_rsqrt(v))
#if defined(OWN_ERFC_F32)
VEC_LOOPS_(silu, 1, vf_silu_own(v), vd_silu_own(v))
#else
VEC_LOOPS_(silu, 1, vf_silu(v), vd_silu(v))
#endif
VEC_LOOPS_(gelu_tanh, 1, vf_gelu_tanh(v), vd_gelu_tanh(v))

/* The scalar glibc loops, for the entries of LIBM_MASK_f32/f64: the op's scalar form
 * (ops_scalar_math.h), but sigmoid and silu in the same overflow-free form as the
 * vector ones. */
static inline float
sigmoid_scalar_f32(float x)
{
    const float e = expf(-fabsf(x)), r = 1.0f / (1.0f + e);
    return (x < 0 ? e : 1.0f) * r;
}

static inline double
sigmoid_scalar_f64(double x)
{
    const double e = exp(-fabs(x)), r = 1.0 / (1.0 + e);
    return (x < 0 ? e : 1.0) * r;
}

static inline float
silu_scalar_f32(float x)
{
    return x * sigmoid_scalar_f32(x);
}

static inline double
silu_scalar_f64(double x)
{
    return x * sigmoid_scalar_f64(x);
}

static inline float
gelu_tanh_scalar_f32(float x)
{
    return x * sigmoid_scalar_f32(2 * 0.79788456080286535588f * (x + 0.044715f * x * x * x));
}

static inline double
gelu_tanh_scalar_f64(double x)
{
    return x * sigmoid_scalar_f64(2 * 0.79788456080286535588 * (x + 0.044715 * x * x * x));
}

#define LIBM_LOOP_(NAME, T, EXPR)                                                        \
    static void NAME(const T *x, T *y, int64_t n)                                        \
    {                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                  \
            y[i] = EXPR(x[i]);                                                           \
    }
/* Both precisions of FN through glibc's FNf and FN. */
#define LIBM_LOOPS_(FN)                                                                  \
    LIBM_LOOP_(FN##_libm_f32, float, FN##f)                                              \
    LIBM_LOOP_(FN##_libm_f64, double, FN)
/* Both precisions of FN through the scalar forms BASE##_f32/_f64. */
#define SCALAR_LOOPS_(FN, BASE)                                                          \
    LIBM_LOOP_(FN##_libm_f32, float, BASE##_f32)                                         \
    LIBM_LOOP_(FN##_libm_f64, double, BASE##_f64)

LIBM_LOOPS_(exp)
LIBM_LOOPS_(log)
LIBM_LOOPS_(tanh)
SCALAR_LOOPS_(sigmoid, sigmoid_scalar)
LIBM_LOOPS_(expm1)
LIBM_LOOPS_(log1p)
LIBM_LOOPS_(log2)
LIBM_LOOPS_(log10)
LIBM_LOOPS_(sin)
LIBM_LOOPS_(cos)
LIBM_LOOPS_(tan)
LIBM_LOOPS_(asin)
LIBM_LOOPS_(acos)
LIBM_LOOPS_(atan)
LIBM_LOOPS_(sinh)
LIBM_LOOPS_(cosh)
LIBM_LOOPS_(asinh)
LIBM_LOOPS_(acosh)
LIBM_LOOPS_(atanh)
LIBM_LOOPS_(erf)
LIBM_LOOPS_(erfc)
LIBM_LOOPS_(sqrt)
SCALAR_LOOPS_(rsqrt, ops_math_rsqrt)
SCALAR_LOOPS_(silu, silu_scalar)
SCALAR_LOOPS_(gelu, ops_math_gelu)
SCALAR_LOOPS_(gelu_tanh, gelu_tanh_scalar)

/* The entry of function E (name FN) at precision P (f32, f64): the vector loop or
 * glibc's. */
#define ENTRY_F32_(E, FN) [OPS_VEC_##E] = (LIBM_MASK_f32 & BIT_(E)) ? FN##_libm_f32 : FN##_f32,
#define ENTRY_F64_(E, FN) [OPS_VEC_##E] = (LIBM_MASK_f64 & BIT_(E)) ? FN##_libm_f64 : FN##_f64,

const ops_vec_table OPS_VEC_NAME(ops_vec_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .unary_f32 = {OPS_VEC_UNARY_LIST(ENTRY_F32_)},
    .unary_f64 = {OPS_VEC_UNARY_LIST(ENTRY_F64_)},
};

/* Vector loops of the activations (elu/selu/celu, softplus, mish, log_sigmoid,
 * hardsigmoid, hardswish, leaky_relu) and of pow and atan2 over contiguous float32/float64,
 * compiled once per instruction-set level (kernels/cpu/vec/meson.build; the table type
 * is vec_act.h's; docs/cpu-dispatch.md "Activations").
 *
 * The formulas and their evaluation order are those of the scalar kernels
 * (kernels/ops_elementwise_math.h, after PyTorch's), with SLEEF's 1.0-ulp exp, log1p,
 * pow and atan2 of the level's width; elu's expm1 and mish are written here on its exp
 * (expm1_, mish_: measured faster at a few ulp, docs/), and softplus/log_sigmoid's
 * float64 log1p of e^-|y| (log1p_exp_neg_: SLEEF's took half their time).  A branch of the
 * scalar form is a select of both sides computed for every lane; a side that could
 * overflow or raise on the other side's lanes is fed a harmless value there (elu's
 * expm1 gets 0 for x > 0).  A run's last n % width elements go through one vector
 * padded with 1 in a local buffer, so every element of a run goes through the same
 * code wherever the run starts (threads split runs anywhere). */
#include <float.h>
#include <math.h>

#include "kernels/cpu/vec/vec_act.h"

#include "kernels/cpu/vec/vec_isa.h"

/* 1/k! for k = 1..16 (rounded to double): the Taylor coefficients of expm1_ */
static const double inv_fact_[16] = {
    1.0, 0.5, 0.16666666666666666, 0.041666666666666664,
    0.008333333333333333, 0.001388888888888889, 0.0001984126984126984, 2.48015873015873e-05,
    2.7557319223985893e-06, 2.755731922398589e-07, 2.505210838544172e-08, 2.08767569878681e-09,
    1.6059043836821613e-10, 1.1470745597729725e-11, 7.647163731819816e-13, 4.779477332387385e-14,
};

/* 2 / (2k + 1) for k = 1..11 (rounded to double): the series of log1p_exp_neg_ */
static const double log_series_[11] = {
    0.6666666666666666, 0.4, 0.2857142857142857, 0.2222222222222222, 0.18181818181818182,
    0.15384615384615385, 0.13333333333333333, 0.11764705882352941, 0.10526315789473684, 0.09523809523809523, 0.08695652173913043,
};

/* The series of expm1(r) / r in expm1_neg_: float32 sum_{j < 8} r^j / (j + 1)! by
 * Horner's rule; float64 sum_{j < 14}: the terms from r^3 on by Estrin's scheme (pairs
 * c_j + c_(j+1) r, then pairs of those in r^2, r^4, r^8), times r^3, then the first
 * three by Horner's rule (the result's own roundings; Estrin down to c_0 measured 2.47
 * ulp for elu against 1.38).  As one Horner chain of 13 dependent FMAs the float64 loop
 * was bound by the polynomial's latency (more than the out-of-order window overlaps
 * across vectors); float32's 7-FMA chain is not (Estrin measured no faster there). */
#define EXPM1R_PAIR_(S, T, r, j)                                                         \
    v##S##_fma(v##S##_set1((T)inv_fact_[(j) + 1]), (r), v##S##_set1((T)inv_fact_[j]))
static inline vf_t
expm1r_poly_f(vf_t r)
{
    vf_t q = vf_set1((float)inv_fact_[7]);
    for (int j = 7; j >= 1; j--)
        q = vf_fma(q, r, vf_set1((float)inv_fact_[j - 1]));
    return q;
}

static inline vd_t
expm1r_poly_d(vd_t r)
{
    const vd_t r2 = vd_mul(r, r), r4 = vd_mul(r2, r2), r8 = vd_mul(r4, r4);
    const vd_t s0 = vd_fma(EXPM1R_PAIR_(d, double, r, 5), r2, EXPM1R_PAIR_(d, double, r, 3));
    const vd_t s1 = vd_fma(EXPM1R_PAIR_(d, double, r, 9), r2, EXPM1R_PAIR_(d, double, r, 7));
    const vd_t s2 = vd_fma(vd_set1(inv_fact_[13]), r2, EXPM1R_PAIR_(d, double, r, 11));
    const vd_t t = vd_fma(s2, r8, vd_fma(s1, r4, s0));
    /* the terms 1 + r/2 + r^2/6 by Horner: their roundings are the result's */
    return vd_fma(vd_fma(vd_fma(t, r, vd_set1(inv_fact_[2])), r, vd_set1(inv_fact_[1])), r,
                  vd_set1(inv_fact_[0]));
}

/* One vector of each function, S = f (float) or d (double); q0..q2 the parameters. */
#define VEC_ACT_FUNCS_(S, T, MISH_HI)                                                 \
    /* expm1 on exp: for |z| < 1/2 its Taylor series to z^EXPM1_TERMS (the next term     \
     * under a tenth of an ulp there), Horner; elsewhere e^z - 1, where e^z - 1 loses    \
     * nothing (e^z <= 0.61 or >= 1.64).  About 1.5 ulp, at the cost of SLEEF's exp and  \
     * a few multiply-adds: SLEEF's expm1 (double-double inside) takes 2.5x as long. */   \
    static inline v##S##_t expm1_##S(v##S##_t z)                                         \
    {                                                                                    \
        const v##S##_t half = v##S##_set1((T)0.5);                                       \
        v##S##_t p = v##S##_set1((T)inv_fact_[EXPM1_TERMS - 1]);                         \
        for (int k = EXPM1_TERMS - 1; k >= 1; k--)                                       \
            p = v##S##_fma(p, z, v##S##_set1((T)inv_fact_[k - 1]));                   \
        const v##S##_t small = v##S##_mul(z, p);                                         \
        const v##S##_t big = v##S##_sub(SLEEF_##S##_(exp)(z), v##S##_set1((T)1));        \
        const v##S##_t r = v##S##_select_gt(z, v##S##_sub(v##S##_set1((T)0), half), small, big); \
        return v##S##_select_gt(z, half, big, r);                                        \
    }                                                                                    \
    /* expm1(z) for z <= 0 (NaN passes), the elu family's case (negiptcoef > 0), in one  \
     * range reduction and one polynomial, without exp: z = n ln2 + r, |r| <= ln2/2      \
     * (n = rint(z / ln2) by the magic constant; ln2 in two parts, n ln2_hi exact), so    \
     * expm1(z) = 2^n expm1(r) + (2^n - 1), one FMA (2^n - 1 is exact down to n = -24    \
     * (-53); below, the result is -1 in the type), expm1(r) its Taylor series to r^8    \
     * (r^14; the next term under 0.02 ulp at |r| = ln2/2), expm1r_poly_.  z is clamped  \
     * below at -EXPM1_LO, where expm1 is -1 in the type (2^n stays normal); +-0 is      \
     * itself. */                                                                        \
    static inline v##S##_t expm1_neg_##S(v##S##_t z)                                     \
    {                                                                                    \
        const v##S##_t magic = v##S##_set1((T)EXP_MAGIC), one = v##S##_set1((T)1);        \
        const v##S##_t zc = v##S##_max(v##S##_set1((T)-EXPM1_LO), z);                    \
        const v##S##_t k = v##S##_fma(zc, v##S##_set1((T)1.44269504088896340736), magic); \
        const v##S##_t n = v##S##_sub(k, magic);                                         \
        v##S##_t r = v##S##_fma(n, v##S##_set1((T)-LN2_HI), zc);                         \
        r = v##S##_fma(n, v##S##_set1((T)-LN2_LO), r);                                   \
        const v##S##_t q = expm1r_poly_##S(r);                                            \
        const v##S##_t s = v##S##_pow2_magic(k);                                         \
        const v##S##_t e = v##S##_fma(v##S##_mul(r, q), s, v##S##_sub(s, one));          \
        const v##S##_t zero = v##S##_set1((T)0);                                         \
        return v##S##_select_eq(z, zero, z, e);                                          \
    }                                                                                    \
    /* x <= 0 ? expm1(x * negiptcoef) * negcoef : x * poscoef; expm1 without exp where   \
     * no lane has z > 0 (always, for negiptcoef >= 0) */                                \
    static inline v##S##_t elu_##S(v##S##_t x, v##S##_t negcoef, v##S##_t poscoef,       \
                                   v##S##_t negipt)                                      \
    {                                                                                    \
        const v##S##_t zero = v##S##_set1((T)0);                                         \
        const v##S##_t z = v##S##_select_gt(x, zero, zero, v##S##_mul(x, negipt));       \
        const v##S##_t em = v##S##_any_gt(z, zero) ? expm1_##S(z) : expm1_neg_##S(z);    \
        const v##S##_t neg = v##S##_mul(em, negcoef);                                    \
        return v##S##_select_gt(x, zero, v##S##_mul(x, poscoef), neg);                   \
    }                                                                                    \
    /* log1p(e^a) for a <= 0 (NaN passes), softplus's and log_sigmoid's, on SLEEF's exp   \
     * and a log1p of our own for e = e^a in [0, 1] (SLEEF's log1p, double-double inside,  \
     * took half of log_sigmoid's time): 1 + e = 2^k (1 + f) with k = 0, f = e for        \
     * e <= 1/2, else k = 1, f = (e - 1) / 2 (exact), so f in (-1/4, 1/2]; s = f / (2 + f) \
     * (|s| <= 1/5), log(1 + f) = log((1 + s) / (1 - s)) = 2s + s R(s^2),                 \
     * R(z) = sum_j 2 z^j / (2j + 1) to z^6 (z^11; the next term under 2^-32 (2^-60) of    \
     * the sum at z = 1/25), written f - (hfsq - s (hfsq + R)) (hfsq = f^2 / 2: 2s =        \
     * f - s f, s f = hfsq - s hfsq) so that the roundings of s and R are scaled down by   \
     * s, and k ln2 added in two parts, the low one to the smallest term.  float64 only   \
     * (LOG1P_OWN): at float32 it measured 1.54 ulp for log_sigmoid (two roundings more   \
     * than SLEEF's log1pf at x ~ -0.34) against 1.50, so float32 keeps SLEEF's. */        \
    static inline v##S##_t log1p_exp_neg_##S(v##S##_t a)                                 \
    {                                                                                    \
        const v##S##_t one = v##S##_set1((T)1), half = v##S##_set1((T)0.5);              \
        const v##S##_t e = SLEEF_##S##_(exp)(a);                                         \
        if (!LOG1P_OWN)                                                                  \
            return SLEEF_##S##_(log1p)(e);                                               \
        const v##S##_t f = v##S##_select_gt(e, half, v##S##_mul(v##S##_sub(e, one), half), e); \
        const v##S##_t k = v##S##_select_gt(e, half, one, v##S##_set1((T)0));            \
        const v##S##_t s = v##S##_div(f, v##S##_add(v##S##_set1((T)2), f));             \
        const v##S##_t z = v##S##_mul(s, s);                                             \
        v##S##_t R = v##S##_set1((T)log_series_[LOG1P_TERMS - 1]);                       \
        for (int j = LOG1P_TERMS - 1; j >= 1; j--)                                       \
            R = v##S##_fma(R, z, v##S##_set1((T)log_series_[j - 1]));                    \
        R = v##S##_mul(R, z);                                                            \
        const v##S##_t hfsq = v##S##_mul(v##S##_mul(f, f), half);                        \
        const v##S##_t lo = v##S##_fma(k, v##S##_set1((T)LN2_LO),                        \
                                       v##S##_mul(s, v##S##_add(hfsq, R)));              \
        return v##S##_fma(k, v##S##_set1((T)LN2_HI), v##S##_sub(f, v##S##_sub(hfsq, lo))); \
    }                                                                                    \
    /* x * beta > threshold ? x : log1p(exp(x * beta)) / beta, the log1p(e^y) as          \
     * max(y, 0) + log1p(e^-|y|) (the same function) */                                  \
    static inline v##S##_t softplus_##S(v##S##_t x, v##S##_t beta, v##S##_t thr)        \
    {                                                                                    \
        const v##S##_t xb = v##S##_mul(x, beta), zero = v##S##_set1((T)0);               \
        const v##S##_t neg_abs = v##S##_min(xb, v##S##_sub(zero, xb));                   \
        const v##S##_t l = v##S##_add(v##S##_max(xb, zero), log1p_exp_neg_##S(neg_abs));   \
        return v##S##_select_gt(xb, thr, x, v##S##_div(l, beta));                        \
    }                                                                                    \
    /* x * tanh(log1p(e)) with e = e^x: (1 + e)^2 = n + 1 with n = e (e + 2), so         \
     * tanh(log(1 + e)) = n / (n + 2), with no cancellation anywhere.  Above MISH_HI the  \
     * ratio is 1 to working precision; the clamp keeps e * e finite (a NaN x becomes    \
     * the clamp in min, and x * 1 is NaN again).  Below -MISH_HI the ratio is e to       \
     * working precision and the result x e^x is taken as (x h) h with h = e^(x/2), so   \
     * that e^x never goes through a subnormal (where it keeps few bits) on the way to   \
     * a result that is still normal (float32 x in [-103, -87]); one exp per lane. */    \
    static inline v##S##_t mish_##S(v##S##_t x)                                          \
    {                                                                                    \
        const v##S##_t two = v##S##_set1((T)2), lo = v##S##_set1((T)-MISH_HI);           \
        const v##S##_t z = v##S##_select_gt(lo, x, v##S##_mul(x, v##S##_set1((T)0.5)),    \
                                            v##S##_min(x, v##S##_set1((T)MISH_HI)));      \
        const v##S##_t e = SLEEF_##S##_(exp)(z);                                         \
        const v##S##_t nn = v##S##_mul(e, v##S##_add(e, two));                           \
        const v##S##_t hi = v##S##_mul(x, v##S##_div(nn, v##S##_add(nn, two)));          \
        return v##S##_select_gt(lo, x, v##S##_mul(v##S##_mul(x, e), e), hi);             \
    }                                                                                    \
    /* min(x, 0) - log1p(exp(-|x|)) */                                                   \
    static inline v##S##_t log_sigmoid_##S(v##S##_t x)                                   \
    {                                                                                    \
        const v##S##_t zero = v##S##_set1((T)0);                                         \
        const v##S##_t neg_abs = v##S##_min(x, v##S##_sub(zero, x));                     \
        const v##S##_t l = log1p_exp_neg_##S(neg_abs);                                   \
        return v##S##_sub(v##S##_where_neg(x, x, zero), l);                              \
    }                                                                                    \
    /* hardtanh(x + 3, 0, 6) / 6: (v < 0 ? 0 : v) > 6 ? 6 : that, NaN passing both */    \
    static inline v##S##_t hardsigmoid_##S(v##S##_t x)                                   \
    {                                                                                    \
        const v##S##_t zero = v##S##_set1((T)0), six = v##S##_set1((T)6);                \
        const v##S##_t v = v##S##_add(x, v##S##_set1((T)3));                             \
        const v##S##_t w = v##S##_select_gt(zero, v, zero, v);                           \
        return v##S##_div(v##S##_select_gt(w, six, six, w), six);                        \
    }                                                                                    \
    /* x * hardtanh(x + 3, 0, 6) / 6, left to right as the scalar form */               \
    static inline v##S##_t hardswish_##S(v##S##_t x)                                     \
    {                                                                                    \
        const v##S##_t zero = v##S##_set1((T)0), six = v##S##_set1((T)6);                \
        const v##S##_t v = v##S##_add(x, v##S##_set1((T)3));                             \
        const v##S##_t w = v##S##_select_gt(zero, v, zero, v);                           \
        return v##S##_div(v##S##_mul(x, v##S##_select_gt(w, six, six, w)), six);          \
    }                                                                                    \
    static inline v##S##_t leaky_relu_##S(v##S##_t x, v##S##_t slope)                   \
    {                                                                                    \
        const v##S##_t zero = v##S##_set1((T)0);                                         \
        return v##S##_select_gt(x, zero, x, v##S##_mul(x, slope));                       \
    }                                                                                    \
    static inline v##S##_t recip_##S(v##S##_t x)                                         \
    {                                                                                    \
        return v##S##_div(v##S##_set1((T)1), x);                                         \
    }                                                                                    \
    /* x^-2 as (1/x)^2, not PyTorch's 1/(x*x): x*x overflows (float32 |x| > 1.8e19,     \
     * giving 0 for a result that is still about 1e-38) or goes subnormal (losing bits)  \
     * where (1/x)^2 does not, at the same 1.5 ulp elsewhere */                          \
    static inline v##S##_t recip_sq_##S(v##S##_t x)                                      \
    {                                                                                    \
        const v##S##_t r = recip_##S(x);                                                 \
        return v##S##_mul(r, r);                                                         \
    }                                                                                    \
    /* x^0.5 as sqrt, with pow's values where sqrt's differ: +0 for -0 (x + 0 is +0),    \
     * +inf for -inf (-x > the largest finite value only there) */                       \
    static inline v##S##_t pow_half_##S(v##S##_t x)                                      \
    {                                                                                    \
        const v##S##_t zero = v##S##_set1((T)0);                                         \
        const v##S##_t r = v##S##_sqrt(v##S##_add(x, zero));                             \
        return v##S##_select_gt(v##S##_sub(zero, x), v##S##_set1(MAXV), v##S##_set1((T)INFINITY), r); \
    }                                                                                    \
    /* a^b lane by lane: SLEEF's pow, but for b = 0, 1, 2, 3, 0.5, -0.5, -1, -2 the      \
     * forms the scalar-exponent loops use (pow_scalar_), so that an element's result     \
     * depends on its values alone, not on whether its run had the exponent broadcast */ \
    static inline v##S##_t pow_elem_##S(v##S##_t a, v##S##_t b)                          \
    {                                                                                    \
        v##S##_t r = SLEEF_##S##_(pow)(a, b);                                            \
        /* a vector with no such exponent (the common case) skips the forms: they cost   \
         * two divides and a square root, as much as pow itself at AVX2 */                \
        if (!(v##S##_any_eq(b, v##S##_set1((T)0)) || v##S##_any_eq(b, v##S##_set1((T)1)) || \
              v##S##_any_eq(b, v##S##_set1((T)2)) || v##S##_any_eq(b, v##S##_set1((T)3)) || \
              v##S##_any_eq(b, v##S##_set1((T)0.5)) ||                                   \
              v##S##_any_eq(b, v##S##_set1((T)-0.5)) ||                                  \
              v##S##_any_eq(b, v##S##_set1((T)-1)) || v##S##_any_eq(b, v##S##_set1((T)-2)))) \
            return r;                                                                    \
        const v##S##_t sq = v##S##_mul(a, a), h = pow_half_##S(a);                       \
        r = v##S##_select_eq(b, v##S##_set1((T)0), v##S##_set1((T)1), r);                \
        r = v##S##_select_eq(b, v##S##_set1((T)1), a, r);                                \
        r = v##S##_select_eq(b, v##S##_set1((T)2), sq, r);                               \
        r = v##S##_select_eq(b, v##S##_set1((T)3), v##S##_mul(sq, a), r);                \
        r = v##S##_select_eq(b, v##S##_set1((T)0.5), h, r);                              \
        r = v##S##_select_eq(b, v##S##_set1((T)-0.5), recip_##S(h), r);                  \
        r = v##S##_select_eq(b, v##S##_set1((T)-1), recip_##S(a), r);                    \
        return v##S##_select_eq(b, v##S##_set1((T)-2), recip_sq_##S(a), r);              \
    }
#define MAXV FLT_MAX
#define EXPM1_TERMS 9
#define EXPM1_LO 20
#define LOG1P_TERMS 6
#define LOG1P_OWN 0
#define EXP_MAGIC 12582912.0 /* 1.5 * 2^23 */
#define LN2_HI 0.693145751953125
#define LN2_LO 1.428606765330187045e-06
VEC_ACT_FUNCS_(f, float, 20)
#undef MAXV
#undef EXPM1_TERMS
#undef EXPM1_LO
#undef LOG1P_TERMS
#undef LOG1P_OWN
#undef EXP_MAGIC
#undef LN2_HI
#undef LN2_LO
#define MAXV DBL_MAX
#define EXPM1_TERMS 16
#define EXPM1_LO 40
#define LOG1P_TERMS 11
#define LOG1P_OWN 1
#define EXP_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10
VEC_ACT_FUNCS_(d, double, 40)
#undef MAXV
#undef EXPM1_TERMS
#undef EXPM1_LO
#undef LOG1P_TERMS
#undef LOG1P_OWN
#undef EXP_MAGIC
#undef LN2_HI
#undef LN2_LO

/* NAME(x, y, n, p): EXPR of v (the input vector) and q0..q2 (p[0..NP-1] broadcast). */
#define ACT_LOOP_(NAME, S, T, NP, EXPR)                                                  \
    static void NAME(const T *x, T *y, int64_t n, const T *p)                           \
    {                                                                                    \
        const v##S##_t q0 OPS_VEC_UNUSED_ = v##S##_set1((NP) > 0 ? p[0] : (T)0);         \
        const v##S##_t q1 OPS_VEC_UNUSED_ = v##S##_set1((NP) > 1 ? p[1] : (T)0);         \
        const v##S##_t q2 OPS_VEC_UNUSED_ = v##S##_set1((NP) > 2 ? p[2] : (T)0);         \
        int64_t i = 0;                                                                   \
        for (; i + v##S##_n <= n; i += v##S##_n) {                                        \
            const v##S##_t v = v##S##_load(x + i);                                       \
            v##S##_store(y + i, EXPR);                                                   \
        }                                                                                \
        if (i < n) {                                                                     \
            T buf[v##S##_n];                                                             \
            for (int k = 0; k < v##S##_n; k++)                                           \
                buf[k] = 1;                                                              \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                             \
            const v##S##_t v = v##S##_load(buf);                                         \
            v##S##_store(buf, EXPR);                                                     \
            memcpy(y + i, buf, (size_t)(n - i) * sizeof(T));                             \
        }                                                                                \
    }
#define OPS_VEC_UNUSED_ __attribute__((unused))

/* NAME(a, b, y, n): EXPR of va and vb; the tail as above, both inputs padded. */
#define ACT2_LOOP_(NAME, S, T, EXPR)                                                     \
    static void NAME(const T *a, const T *b, T *y, int64_t n)                           \
    {                                                                                    \
        int64_t i = 0;                                                                   \
        for (; i + v##S##_n <= n; i += v##S##_n) {                                        \
            const v##S##_t va = v##S##_load(a + i), vb = v##S##_load(b + i);             \
            v##S##_store(y + i, EXPR);                                                   \
        }                                                                                \
        if (i < n) {                                                                     \
            T ba[v##S##_n], bb[v##S##_n];                                                \
            for (int k = 0; k < v##S##_n; k++)                                           \
                ba[k] = bb[k] = 1;                                                       \
            memcpy(ba, a + i, (size_t)(n - i) * sizeof(T));                              \
            memcpy(bb, b + i, (size_t)(n - i) * sizeof(T));                              \
            const v##S##_t va = v##S##_load(ba), vb = v##S##_load(bb);                   \
            v##S##_store(ba, EXPR);                                                      \
            memcpy(y + i, ba, (size_t)(n - i) * sizeof(T));                              \
        }                                                                                \
    }

#define VEC_ACT_LOOPS_(S, T, P)                                                          \
    ACT_LOOP_(elu_##P, S, T, 3, elu_##S(v, q0, q1, q2))                                  \
    ACT_LOOP_(softplus_##P, S, T, 2, softplus_##S(v, q0, q1))                            \
    ACT_LOOP_(mish_##P, S, T, 0, mish_##S(v))                                            \
    ACT_LOOP_(log_sigmoid_##P, S, T, 0, log_sigmoid_##S(v))                              \
    ACT_LOOP_(hardsigmoid_##P, S, T, 0, hardsigmoid_##S(v))                              \
    ACT_LOOP_(hardswish_##P, S, T, 0, hardswish_##S(v))                                  \
    ACT_LOOP_(leaky_relu_##P, S, T, 1, leaky_relu_##S(v, q0))                            \
    /* pow with a scalar exponent: PyTorch's special forms (x^0.5 with pow's values at   \
     * -0 and -inf), then SLEEF's pow */                                                 \
    ACT_LOOP_(pow_sq_##P, S, T, 0, v##S##_mul(v, v))                                     \
    ACT_LOOP_(pow_cube_##P, S, T, 0, v##S##_mul(v##S##_mul(v, v), v))                    \
    ACT_LOOP_(pow_sqrt_##P, S, T, 0, pow_half_##S(v))                                    \
    ACT_LOOP_(pow_rsqrt_##P, S, T, 0, recip_##S(pow_half_##S(v)))                        \
    ACT_LOOP_(pow_recip_##P, S, T, 0, recip_##S(v))                                      \
    ACT_LOOP_(pow_recip_sq_##P, S, T, 0, recip_sq_##S(v))                    \
    ACT_LOOP_(pow_any_##P, S, T, 1, SLEEF_##S##_(pow)(v, q0))                            \
    static void pow_scalar_##P(const T *x, T *y, int64_t n, const T *p)                  \
    {                                                                                    \
        const T e = p[0];                                                                \
        if (e == 0) { /* 1, NaN included, as pow and PyTorch */                          \
            for (int64_t i = 0; i < n; i++)                                              \
                y[i] = 1;                                                                \
        } else if (e == 1) {                                                             \
            if (y != x)                                                                  \
                memcpy(y, x, (size_t)n * sizeof(T));                                     \
        } else if (e == 2) {                                                             \
            pow_sq_##P(x, y, n, p);                                                      \
        } else if (e == 3) {                                                             \
            pow_cube_##P(x, y, n, p);                                                    \
        } else if (e == (T)0.5) {                                                        \
            pow_sqrt_##P(x, y, n, p);                                                    \
        } else if (e == (T)-0.5) {                                                       \
            pow_rsqrt_##P(x, y, n, p);                                                   \
        } else if (e == -1) {                                                            \
            pow_recip_##P(x, y, n, p);                                                   \
        } else if (e == -2) {                                                            \
            pow_recip_sq_##P(x, y, n, p);                                                \
        } else {                                                                         \
            pow_any_##P(x, y, n, p);                                                     \
        }                                                                                \
    }                                                                                    \
    ACT2_LOOP_(pow_##P, S, T, pow_elem_##S(va, vb))                                 \
    ACT2_LOOP_(atan2_##P, S, T, SLEEF_##S##_(atan2)(va, vb))
VEC_ACT_LOOPS_(f, float, f32)
VEC_ACT_LOOPS_(d, double, f64)

#define ACT_ENTRIES_(P)                                                                  \
    {                                                                                    \
        [OPS_VEC_ACT_ELU] = elu_##P, [OPS_VEC_ACT_SOFTPLUS] = softplus_##P,              \
        [OPS_VEC_ACT_MISH] = mish_##P, [OPS_VEC_ACT_LOG_SIGMOID] = log_sigmoid_##P,      \
        [OPS_VEC_ACT_HARDSIGMOID] = hardsigmoid_##P, [OPS_VEC_ACT_HARDSWISH] = hardswish_##P, \
        [OPS_VEC_ACT_LEAKY_RELU] = leaky_relu_##P, [OPS_VEC_ACT_POW_SCALAR] = pow_scalar_##P, \
    }

const ops_vec_act_table OPS_VEC_NAME(ops_vec_act_table) = {
    .act_f32 = ACT_ENTRIES_(f32),
    .act_f64 = ACT_ENTRIES_(f64),
    .act2_f32 = {[OPS_VEC_ACT2_POW] = pow_f32, [OPS_VEC_ACT2_ATAN2] = atan2_f32},
    .act2_f64 = {[OPS_VEC_ACT2_POW] = pow_f64, [OPS_VEC_ACT2_ATAN2] = atan2_f64},
};

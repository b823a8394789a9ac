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
 *           FMA); x clamped to [eps, 1 - eps] first when eps >= 0;
 *   cbrt    e^(log|x| / 3) on SLEEF's exp and log, then one Newton step (FMA residual).
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
    }                                                                                    \
    static inline v##S##_t logit_##S(v##S##_t x)                                         \
    {                                                                                    \
        const v##S##_t one = v##S##_set1((T)1), zero = v##S##_set1((T)0);                \
        const v##S##_t d = v##S##_sub(one, x);                                           \
        const v##S##_t dlo = v##S##_sub(v##S##_sub(one, d), x);                          \
        const v##S##_t r = v##S##_div(x, d);                                             \
        const v##S##_t t = v##S##_sub(prod_err_##S(r, d, x), v##S##_mul(r, dlo));        \
        v##S##_t c = v##S##_div(t, x);                                                   \
        c = v##S##_select_gt(one, v##S##_abs(c), c, zero); /* x = 0, 1 or NaN: 0 */      \
        return v##S##_add(SLEEF_##S##_(log)(r), c);                                      \
    }

VEC_SPECIAL_FUNCS_(f, float, 4097.0f)
VEC_SPECIAL_FUNCS_(d, double, 134217729.0)

/* cbrt: y = e^(log|x| / 3) (a few tens of ulps: exp amplifies log's rounding by the
 * size of its argument), then one Newton step y - (y^3 - |x|) / (3 y^2), whose
 * residual an FMA forms from y^2 rounded once; the sign of x put back.  Inputs below
 * TINY are scaled by 2^(3K) first (and the result by 2^-K): a subnormal's residual would
 * round to the subnormal grid, too coarse to correct anything; inputs above 1 / TINY by
 * 2^-3K (y^3 near the largest float overflows where the product is rounded: `default`
 * has no FMA).  0 and inf: x itself.
 * SLEEF's 1.0-ulp cbrt measured 3-5x slower than this (and than NumPy's). */
#define VEC_CBRT_(S, T, LOGFN, TINY, UP, DOWN)                                           \
    static inline v##S##_t cbrt_v##S(v##S##_t x)                                        \
    {                                                                                    \
        const v##S##_t zero = v##S##_set1((T)0), one = v##S##_set1((T)1);                \
        v##S##_t a = v##S##_abs(x);                                                      \
        const v##S##_t tiny = v##S##_set1((T)(TINY)), huge = v##S##_set1((T)1 / (T)(TINY)); \
        const v##S##_t s_out = v##S##_select_gt(tiny, a, v##S##_set1((T)(DOWN)),         \
                                   v##S##_select_gt(a, huge, v##S##_set1((T)1 / (T)(DOWN)), one)); \
        a = v##S##_mul(a, v##S##_select_gt(tiny, a, v##S##_set1((T)(UP)),                \
                              v##S##_select_gt(a, huge, v##S##_set1((T)1 / (T)(UP)), one))); \
        v##S##_t y = SLEEF_##S##_(exp)(v##S##_mul(LOGFN(a), v##S##_set1((T)1 / (T)3)));   \
        const v##S##_t y2 = v##S##_mul(y, y);                                            \
        const v##S##_t r = v##S##_fma(y2, y, v##S##_sub(zero, a));                       \
        y = v##S##_sub(y, v##S##_div(r, v##S##_mul(v##S##_set1((T)3), y2)));             \
        y = v##S##_mul(y, s_out);                                                        \
        y = v##S##_where_neg(x, v##S##_sub(zero, y), y);                                 \
        y = v##S##_select_eq(x, zero, x, y);                                             \
        return v##S##_select_eq(v##S##_abs(x), v##S##_set1((T)INFINITY), x, y);          \
    }
VEC_CBRT_(f, float, SLEEF_f35_(log), 0x1p-100f, 0x1p48f, 0x1p-16f)
VEC_CBRT_(d, double, SLEEF_d35_(log), 0x1p-900, 0x1p300, 0x1p-100)

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

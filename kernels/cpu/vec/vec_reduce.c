/* The reductions' vector loops, compiled once per instruction-set level
 * (kernels/cpu/vec/meson.build; the table and the contract of each loop:
 * vec_reduce.h; how the CPU reductions use them: kernels/cpu/reduce.c and
 * docs/cpu-dispatch.md "Reductions").
 *
 * Run sums keep four vector accumulators (so the adds of consecutive vectors do not wait
 * on each other) over blocks of OPS_VEC_RED_BLOCK elements; a block's lanes are added in
 * a fixed tree and the block totals merged like a binary counter (pairwise), so the
 * rounding error grows with the logarithm of n, as the scalar pairwise loop's.  The last
 * n % width elements of a block go through one vector padded with a value that adds
 * nothing (0, or -inf under exp) and whose lanes are then multiplied by 0 (F of the
 * padding is finite: (0 - mean)^2 of var need not be 0), so no element is read twice or
 * past the end. */
#include <math.h>

#include "kernels/cpu/vec/vec_reduce.h"

#include "kernels/cpu/vec/vec_isa.h"

/* The scalar NaN-first rules of kernels/ops_reduce_common.h (ops_red_max_nan): a stays
 * on ties and once it is NaN; a NaN b is taken. */
#define VR_MAX_NAN_(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define VR_MIN_NAN_(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))

/* The sum of a vector's lanes (of type T, N of them) in a fixed tree. */
#define VR_HSUM_(NAME, VT, T, N, STORE)                                                  \
    static inline T NAME(VT v)                                                           \
    {                                                                                    \
        T b[N];                                                                          \
        STORE(b, v);                                                                     \
        for (int w = (N) / 2; w > 0; w /= 2)                                             \
            for (int k = 0; k < w; k++)                                                  \
                b[k] = b[k] + b[k + w];                                                  \
        return b[0];                                                                     \
    }
VR_HSUM_(hsum_f, vf_t, float, vf_n, vf_store)
VR_HSUM_(hsum_d, vd_t, double, vd_n, vd_store)

/* NAME(x, n EXTRA): the blocked pairwise sum of F(v) over the run, v = LOAD(p) of N
 * elements of IT accumulated as vectors of S (vf/vd) with scalar type T; PRE declares
 * what F needs; PAD is the tail's filler.  Each lane is summed pairwise on its own (the
 * block vectors merged like a binary counter, as vectors), and the lanes are added in a
 * fixed tree once, at the end. */
#define VR_SUM_(NAME, S, T, IT, N, LOAD, EXTRA, PRE, F, PAD)                             \
    static T NAME(const IT *x, int64_t n EXTRA)                                          \
    {                                                                                    \
        PRE;                                                                             \
        v##S##_t lev[64];                                                                \
        uint64_t nblk = 0;                                                               \
        v##S##_t last = v##S##_set1(0);                                                  \
        for (int64_t b0 = 0; b0 < n; b0 += OPS_VEC_RED_BLOCK) {                          \
            const int64_t m = n - b0 < OPS_VEC_RED_BLOCK ? n - b0 : OPS_VEC_RED_BLOCK;   \
            const IT *const p = x + b0;                                                  \
            v##S##_t a0 = v##S##_set1(0), a1 = a0, a2 = a0, a3 = a0;                     \
            int64_t i = 0;                                                               \
            for (; i + 4 * (N) <= m; i += 4 * (N)) {                                     \
                for (size_t q_ = 0; q_ < 4 * (N) * sizeof(IT); q_ += 64)                 \
                    __builtin_prefetch((const char *)(p + i) + VR_PREFETCH_ + q_);       \
                a0 = v##S##_add(a0, F(LOAD(p + i)));                                     \
                a1 = v##S##_add(a1, F(LOAD(p + i + (N))));                               \
                a2 = v##S##_add(a2, F(LOAD(p + i + 2 * (N))));                           \
                a3 = v##S##_add(a3, F(LOAD(p + i + 3 * (N))));                           \
            }                                                                            \
            for (; i + (N) <= m; i += (N))                                               \
                a0 = v##S##_add(a0, F(LOAD(p + i)));                                     \
            if (i < m) {                                                                 \
                IT buf[N];                                                               \
                for (int k = 0; k < (N); k++)                                            \
                    buf[k] = (PAD);                                                      \
                memcpy(buf, p + i, (size_t)(m - i) * sizeof(IT));                        \
                T keep[N]; /* 1 for the run's lanes, 0 for the padding's */              \
                for (int k = 0; k < (N); k++)                                            \
                    keep[k] = k < m - i ? (T)1 : (T)0;                                   \
                a1 = v##S##_add(a1, v##S##_mul(F(LOAD(buf)), v##S##_load(keep)));        \
            }                                                                            \
            v##S##_t s = v##S##_add(v##S##_add(a0, a1), v##S##_add(a2, a3));             \
            if (m < OPS_VEC_RED_BLOCK) {                                                 \
                last = s; /* the run's last, partial block */                            \
                break;                                                                   \
            }                                                                            \
            uint64_t c = nblk++;                                                         \
            int k = 0;                                                                   \
            for (; c & 1; c >>= 1, k++)                                                  \
                s = v##S##_add(lev[k], s);                                               \
            lev[k] = s;                                                                  \
        }                                                                                \
        v##S##_t t = last;                                                               \
        uint64_t c = nblk;                                                               \
        for (int k = 0; c != 0; c >>= 1, k++)                                            \
            if (c & 1)                                                                   \
                t = v##S##_add(lev[k], t);                                               \
        return hsum_##S(t);                                                              \
    }

/* Bytes ahead a run sum asks the memory for: the hardware prefetcher alone left the
 * all-reduce of 64 MB at 13-14 GB/s where BLAS's dot reached 18 (measured, avx512). */
#define VR_PREFETCH_ 2048
#define VR_NOARG_
#define VR_COMMA_ ,
#define VR_NOPRE_ (void)0
#define VR_ID_(v) (v)
#define VR_SQF_(v) vf_mul((v), (v))
#define VR_SQD_(v) vd_mul((v), (v))
#define VR_EXPF_(v) SLEEF_f_(exp)(vf_sub((v), mv))
#define VR_EXPD_(v) SLEEF_d_(exp)(vd_sub((v), mv))
#define VR_DEVD_(v) vd_mul(vd_sub((v), mv), vd_sub((v), mv))
/* 1 where v is not NaN, else 0: max(v, inf) is inf or NaN, min(that, 1) is 1 or NaN
 * (the NaN-first forms keep a NaN first operand), and the NaN lanes become 0 */
#define VR_CNTF_(v) vf_zero_nan(vf_min_nan(vf_max_nan((v), infv), onev))
#define VR_CNTD_(v) vd_zero_nan(vd_min_nan(vd_max_nan((v), infv), onev))

VR_SUM_(sum_f32, f, float, float, vf_n, vf_load, VR_NOARG_, VR_NOPRE_, VR_ID_, 0.0f)
VR_SUM_(sum_f64, d, double, double, vd_n, vd_load, VR_NOARG_, VR_NOPRE_, VR_ID_, 0.0)
VR_SUM_(sumabs_f32, f, float, float, vf_n, vf_load, VR_NOARG_, VR_NOPRE_, vf_abs, 0.0f)
VR_SUM_(sumabs_f64, d, double, double, vd_n, vd_load, VR_NOARG_, VR_NOPRE_, vd_abs, 0.0)
VR_SUM_(sumsq_f32, f, float, float, vf_n, vf_load, VR_NOARG_, VR_NOPRE_, VR_SQF_, 0.0f)
VR_SUM_(sumsq_f64, d, double, double, vd_n, vd_load, VR_NOARG_, VR_NOPRE_, VR_SQD_, 0.0)
VR_SUM_(nansum_f32, f, float, float, vf_n, vf_load, VR_NOARG_, VR_NOPRE_, vf_zero_nan, 0.0f)
VR_SUM_(nansum_f64, d, double, double, vd_n, vd_load, VR_NOARG_, VR_NOPRE_, vd_zero_nan, 0.0)
VR_SUM_(sumexp_f32, f, float, float, vf_n, vf_load, VR_COMMA_ float m, const vf_t mv = vf_set1(m), VR_EXPF_,
        -INFINITY)
VR_SUM_(sumexp_f64, d, double, double, vd_n, vd_load, VR_COMMA_ double m, const vd_t mv = vd_set1(m), VR_EXPD_,
        -INFINITY)
VR_SUM_(count_f32, f, float, float, vf_n, vf_load, VR_NOARG_,
        const vf_t infv = vf_set1(INFINITY); const vf_t onev = vf_set1(1.0f), VR_CNTF_, 0.0f)
VR_SUM_(count_f64, d, double, double, vd_n, vd_load, VR_NOARG_,
        const vd_t infv = vd_set1(INFINITY); const vd_t onev = vd_set1(1.0), VR_CNTD_, 0.0)
/* the norms of other orders: |x|^p by SLEEF's 1.0-ulp pow of the level (padded with 1:
 * 0^p is inf for p < 0, and inf * 0 would be NaN) */
#define VR_POWF_(v) SLEEF_f_(pow)(vf_abs(v), pv)
#define VR_POWD_(v) SLEEF_d_(pow)(vd_abs(v), pv)
/* p = 3 as |x| * |x| * |x|, as pow's own vector loop takes a broadcast exponent of 3
 * (vec_act.c): two roundings instead of SLEEF's pow, several times faster */
#define VR_CUBEF_(v) vf_mul(vf_mul(vf_abs(v), vf_abs(v)), vf_abs(v))
#define VR_CUBED_(v) vd_mul(vd_mul(vd_abs(v), vd_abs(v)), vd_abs(v))
VR_SUM_(sumcube_f32, f, float, float, vf_n, vf_load, VR_NOARG_, VR_NOPRE_, VR_CUBEF_, 0.0f)
VR_SUM_(sumcube_f64, d, double, double, vd_n, vd_load, VR_NOARG_, VR_NOPRE_, VR_CUBED_, 0.0)
VR_SUM_(sumpow_f32, f, float, float, vf_n, vf_load, VR_COMMA_ float p, const vf_t pv = vf_set1(p), VR_POWF_, 1.0f)
VR_SUM_(sumpow_f64, d, double, double, vd_n, vd_load, VR_COMMA_ double p, const vd_t pv = vd_set1(p), VR_POWD_, 1.0)
VR_SUM_(sum_bf16, f, float, uint16_t, vf_n, vf_load_bf16, VR_NOARG_, VR_NOPRE_, VR_ID_, 0)
#if VEC_HAS_F16_
VEC_F16_TARGET_ VR_SUM_(sum_f16, f, float, uint16_t, vf_n, vf_load_f16, VR_NOARG_, VR_NOPRE_, VR_ID_, 0)
#endif
VR_SUM_(sum_f32_f64, d, double, float, vd_n, vd_load_f32, VR_NOARG_, VR_NOPRE_, VR_ID_, 0.0f)
VR_SUM_(sqdev_f32, d, double, float, vd_n, vd_load_f32, VR_COMMA_ double mean, const vd_t mv = vd_set1(mean),
        VR_DEVD_, 0.0f)
VR_SUM_(sqdev_f64, d, double, double, vd_n, vd_load, VR_COMMA_ double mean, const vd_t mv = vd_set1(mean), VR_DEVD_,
        0.0)

/* Products, max and min: four accumulators lane by lane, then the lanes in a fixed
 * tree.  OP is the vector operation, SOP the scalar one. */
#define VR_FOLD_(NAME, S, T, SOP, VOP, INIT, PAD)                                        \
    static T NAME(const T *x, int64_t n)                                                 \
    {                                                                                    \
        if (n < v##S##_n) {                                                              \
            T r = (INIT);                                                                \
            for (int64_t i = 0; i < n; i++)                                              \
                r = SOP(r, x[i]);                                                        \
            return r;                                                                    \
        }                                                                                \
        v##S##_t a0 = v##S##_set1(INIT), a1 = a0, a2 = a0, a3 = a0;                      \
        int64_t i = 0;                                                                   \
        for (; i + 4 * v##S##_n <= n; i += 4 * v##S##_n) {                               \
            a0 = VOP(a0, v##S##_load(x + i));                                            \
            a1 = VOP(a1, v##S##_load(x + i + v##S##_n));                                 \
            a2 = VOP(a2, v##S##_load(x + i + 2 * v##S##_n));                             \
            a3 = VOP(a3, v##S##_load(x + i + 3 * v##S##_n));                             \
        }                                                                                \
        for (; i + v##S##_n <= n; i += v##S##_n)                                         \
            a0 = VOP(a0, v##S##_load(x + i));                                            \
        if (i < n) {                                                                     \
            T buf[v##S##_n];                                                             \
            for (int k = 0; k < v##S##_n; k++)                                           \
                buf[k] = (PAD);                                                          \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                             \
            a1 = VOP(a1, v##S##_load(buf));                                              \
        }                                                                                \
        T b[v##S##_n];                                                                   \
        v##S##_store(b, VOP(VOP(a0, a1), VOP(a2, a3)));                                  \
        for (int w = v##S##_n / 2; w > 0; w /= 2)                                        \
            for (int k = 0; k < w; k++)                                                  \
                b[k] = SOP(b[k], b[k + w]);                                              \
        return b[0];                                                                     \
    }
#define VR_MULS_(a, b) ((a) * (b))

VR_FOLD_(prod_f32, f, float, VR_MULS_, vf_mul, 1.0f, 1.0f)
VR_FOLD_(prod_f64, d, double, VR_MULS_, vd_mul, 1.0, 1.0)
/* max/min: the ISA's plain max/min (one instruction, whatever it does with NaN) in four
 * accumulators, and beside them a running sum of the elements, which is NaN when some
 * element is NaN (or when +inf and -inf meet, or the sum overflows both ways): then the
 * result is NaN, and the caller redoes the run with the scalar loop, whose rule for NaN
 * is the contract.  Start from x[0] and pad with it: taking x[0] twice changes nothing. */
#define VR_EXT_(NAME, S, T, SOP, VOP, VF, SF)                                                    \
    static T NAME(const T *x, int64_t n)                                                 \
    {                                                                                    \
        if (n < v##S##_n) {                                                              \
            T r = SF(x[0]);                                                                  \
            for (int64_t i = 0; i < n; i++)                                              \
                r = SOP(r, SF(x[i]));                                                        \
            return r;                                                                    \
        }                                                                                \
        v##S##_t a0 = v##S##_set1(SF(x[0])), a1 = a0, a2 = a0, a3 = a0;                      \
        v##S##_t s0 = v##S##_set1(0), s1 = s0, s2 = s0, s3 = s0;                         \
        int64_t i = 0;                                                                   \
        for (; i + 4 * v##S##_n <= n; i += 4 * v##S##_n) {                               \
            for (size_t q_ = 0; q_ < 4 * v##S##_n * sizeof(T); q_ += 64)                 \
                __builtin_prefetch((const char *)(x + i) + VR_PREFETCH_ + q_);           \
            const v##S##_t x0 = VF(v##S##_load(x + i)), x1 = VF(v##S##_load(x + i + v##S##_n));  \
            const v##S##_t x2 = VF(v##S##_load(x + i + 2 * v##S##_n));                       \
            const v##S##_t x3 = VF(v##S##_load(x + i + 3 * v##S##_n));                       \
            a0 = VOP(a0, x0);                                                            \
            a1 = VOP(a1, x1);                                                            \
            a2 = VOP(a2, x2);                                                            \
            a3 = VOP(a3, x3);                                                            \
            s0 = v##S##_add(s0, x0);                                                     \
            s1 = v##S##_add(s1, x1);                                                     \
            s2 = v##S##_add(s2, x2);                                                     \
            s3 = v##S##_add(s3, x3);                                                     \
        }                                                                                \
        for (; i + v##S##_n <= n; i += v##S##_n) {                                       \
            const v##S##_t x0 = VF(v##S##_load(x + i));                                      \
            a0 = VOP(a0, x0);                                                            \
            s0 = v##S##_add(s0, x0);                                                     \
        }                                                                                \
        if (i < n) {                                                                     \
            T buf[v##S##_n];                                                             \
            for (int k = 0; k < v##S##_n; k++)                                           \
                buf[k] = x[0];                                                           \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                             \
            const v##S##_t x0 = VF(v##S##_load(buf));                                        \
            a1 = VOP(a1, x0);                                                            \
            s1 = v##S##_add(s1, x0);                                                     \
        }                                                                                \
        T b[v##S##_n];                                                                   \
        v##S##_store(b, v##S##_add(v##S##_add(s0, s1), v##S##_add(s2, s3)));             \
        for (int k = 0; k < v##S##_n; k++)                                               \
            if (b[k] != b[k])                                                            \
                return b[k];                                                             \
        v##S##_store(b, VOP(VOP(a0, a1), VOP(a2, a3)));                                  \
        for (int w = v##S##_n / 2; w > 0; w /= 2)                                        \
            for (int k = 0; k < w; k++)                                                  \
                b[k] = SOP(b[k], b[k + w]);                                              \
        return b[0];                                                                     \
    }
VR_EXT_(max_f32, f, float, VR_MAX_NAN_, vf_max, VR_ID_, VR_ID_)
VR_EXT_(max_f64, d, double, VR_MAX_NAN_, vd_max, VR_ID_, VR_ID_)
VR_EXT_(min_f32, f, float, VR_MIN_NAN_, vf_min, VR_ID_, VR_ID_)
VR_EXT_(min_f64, d, double, VR_MIN_NAN_, vd_min, VR_ID_, VR_ID_)
/* the norms of order inf and -inf: the extremes of |x| (a NaN reported as above) */
VR_EXT_(absmax_f32, f, float, VR_MAX_NAN_, vf_max, vf_abs, fabsf)
VR_EXT_(absmax_f64, d, double, VR_MAX_NAN_, vd_max, vd_abs, fabs)
VR_EXT_(absmin_f32, f, float, VR_MIN_NAN_, vf_min, vf_abs, fabsf)
VR_EXT_(absmin_f64, d, double, VR_MIN_NAN_, vd_min, vd_abs, fabs)

/* aminmax in one pass: the min returned, the max into *hi, with the same NaN detector
 * (a running sum) as VR_EXT_: NaN for both when a NaN is there. */
#define VR_MINMAX_(NAME, S, T)                                                           \
    static T NAME(const T *x, int64_t n, T *hi)                                          \
    {                                                                                    \
        if (n < v##S##_n) {                                                              \
            T lo = x[0], h = x[0];                                                       \
            for (int64_t i = 0; i < n; i++) {                                            \
                lo = VR_MIN_NAN_(lo, x[i]);                                              \
                h = VR_MAX_NAN_(h, x[i]);                                                \
            }                                                                            \
            *hi = h;                                                                     \
            return lo;                                                                   \
        }                                                                                \
        v##S##_t l0 = v##S##_set1(x[0]), l1 = l0, h0 = l0, h1 = l0;                      \
        v##S##_t s0 = v##S##_set1(0), s1 = s0;                                           \
        int64_t i = 0;                                                                   \
        for (; i + 2 * v##S##_n <= n; i += 2 * v##S##_n) {                               \
            for (size_t q_ = 0; q_ < 2 * v##S##_n * sizeof(T); q_ += 64)                 \
                __builtin_prefetch((const char *)(x + i) + VR_PREFETCH_ + q_);           \
            const v##S##_t x0 = v##S##_load(x + i), x1 = v##S##_load(x + i + v##S##_n);  \
            l0 = v##S##_min(l0, x0);                                                     \
            l1 = v##S##_min(l1, x1);                                                     \
            h0 = v##S##_max(h0, x0);                                                     \
            h1 = v##S##_max(h1, x1);                                                     \
            s0 = v##S##_add(s0, x0);                                                     \
            s1 = v##S##_add(s1, x1);                                                     \
        }                                                                                \
        if (i < n) {                                                                     \
            T buf[2 * v##S##_n];                                                         \
            for (int k = 0; k < 2 * v##S##_n; k++)                                       \
                buf[k] = x[0];                                                           \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                             \
            const v##S##_t x0 = v##S##_load(buf), x1 = v##S##_load(buf + v##S##_n);      \
            l0 = v##S##_min(l0, x0);                                                     \
            l1 = v##S##_min(l1, x1);                                                     \
            h0 = v##S##_max(h0, x0);                                                     \
            h1 = v##S##_max(h1, x1);                                                     \
            s0 = v##S##_add(s0, x0);                                                     \
            s1 = v##S##_add(s1, x1);                                                     \
        }                                                                                \
        T b[v##S##_n], c[v##S##_n];                                                      \
        v##S##_store(b, v##S##_add(s0, s1));                                             \
        for (int k = 0; k < v##S##_n; k++)                                               \
            if (b[k] != b[k]) {                                                          \
                *hi = b[k];                                                              \
                return b[k];                                                             \
            }                                                                            \
        v##S##_store(b, v##S##_min(l0, l1));                                             \
        v##S##_store(c, v##S##_max(h0, h1));                                             \
        for (int w = v##S##_n / 2; w > 0; w /= 2)                                        \
            for (int k = 0; k < w; k++) {                                                \
                b[k] = VR_MIN_NAN_(b[k], b[k + w]);                                      \
                c[k] = VR_MAX_NAN_(c[k], c[k + w]);                                      \
            }                                                                            \
        *hi = c[0];                                                                      \
        return b[0];                                                                     \
    }
VR_MINMAX_(minmax_f32, f, float)
VR_MINMAX_(minmax_f64, d, double)

/* The first i with x[i] == v, or the first NaN when v is NaN; n when none. */
#define VR_FIND_(NAME, S, T)                                                             \
    static int64_t NAME(const T *x, int64_t n, T v)                                      \
    {                                                                                    \
        int64_t i = 0;                                                                   \
        if (v != v) {                                                                    \
            for (; i < n; i++)                                                           \
                if (x[i] != x[i])                                                        \
                    return i;                                                            \
            return n;                                                                    \
        }                                                                                \
        const v##S##_t vv = v##S##_set1(v);                                              \
        for (; i + v##S##_n <= n; i += v##S##_n)                                         \
            if (v##S##_any_eq(v##S##_load(x + i), vv))                                   \
                break;                                                                   \
        for (; i < n; i++)                                                               \
            if (x[i] == v)                                                               \
                return i;                                                                \
        return n;                                                                        \
    }
VR_FIND_(find_f32, f, float)
VR_FIND_(find_f64, d, double)

/* Integer sums in int64 lanes: wrapping addition is associative, so any order gives the
 * scalar loop's result bit for bit. */
#define VR_ISUM_(NAME, IT, LOAD)                                                         \
    static uint64_t NAME(const IT *x, int64_t n)                                         \
    {                                                                                    \
        vl_t a0 = vl_zero(), a1 = a0, a2 = a0, a3 = a0;                                  \
        int64_t i = 0;                                                                   \
        for (; i + 4 * vl_n <= n; i += 4 * vl_n) {                                       \
            for (size_t q_ = 0; q_ < 4 * vl_n * sizeof(IT); q_ += 64)                    \
                __builtin_prefetch((const char *)(x + i) + VR_PREFETCH_ + q_);           \
            a0 = vl_add(a0, LOAD(x + i));                                                \
            a1 = vl_add(a1, LOAD(x + i + vl_n));                                         \
            a2 = vl_add(a2, LOAD(x + i + 2 * vl_n));                                     \
            a3 = vl_add(a3, LOAD(x + i + 3 * vl_n));                                     \
        }                                                                                \
        int64_t b[vl_n];                                                                 \
        vl_store(b, vl_add(vl_add(a0, a1), vl_add(a2, a3)));                             \
        uint64_t s = 0;                                                                  \
        for (int k = 0; k < vl_n; k++)                                                   \
            s += (uint64_t)b[k];                                                         \
        for (; i < n; i++)                                                               \
            s += (uint64_t)(int64_t)x[i];                                                \
        return s;                                                                        \
    }
VR_ISUM_(sum_i32, int32_t, vl_load_i32)
VR_ISUM_(sum_i64, int64_t, vl_load)

/* Row loops: acc[c] = EXPR of a = acc[c], v = x[c], vectors then the scalar rest with the
 * same expression written for scalars. */
#define VR_ROW_(NAME, S, T, VEXPR, SEXPR)                                                \
    static void NAME(T *restrict acc, const T *restrict x, int64_t n)                    \
    {                                                                                    \
        int64_t c = 0;                                                                   \
        for (; c + v##S##_n <= n; c += v##S##_n) {                                       \
            if ((c * sizeof(T)) % 64 == 0)                                               \
                __builtin_prefetch((const char *)(x + c) + VR_PREFETCH_);                \
            const v##S##_t a = v##S##_load(acc + c), v = v##S##_load(x + c);             \
            v##S##_store(acc + c, VEXPR);                                                \
        }                                                                                \
        for (; c < n; c++) {                                                             \
            const T a = acc[c], v = x[c];                                                \
            acc[c] = SEXPR;                                                              \
        }                                                                                \
    }
VR_ROW_(row_add_f32, f, float, vf_add(a, v), a + v)
VR_ROW_(row_add_f64, d, double, vd_add(a, v), a + v)
VR_ROW_(row_radd_f32, f, float, vf_add(v, a), v + a)
VR_ROW_(row_radd_f64, d, double, vd_add(v, a), v + a)
VR_ROW_(row_nanadd_f32, f, float, vf_add(a, vf_zero_nan(v)), a + (v == v ? v : 0.0f))
VR_ROW_(row_nanadd_f64, d, double, vd_add(a, vd_zero_nan(v)), a + (v == v ? v : 0.0))
VR_ROW_(row_mul_f32, f, float, vf_mul(a, v), a * v)
VR_ROW_(row_mul_f64, d, double, vd_mul(a, v), a * v)
VR_ROW_(row_max_f32, f, float, vf_max_nan(a, v), VR_MAX_NAN_(a, v))
VR_ROW_(row_max_f64, d, double, vd_max_nan(a, v), VR_MAX_NAN_(a, v))
VR_ROW_(row_min_f32, f, float, vf_min_nan(a, v), VR_MIN_NAN_(a, v))
VR_ROW_(row_min_f64, d, double, vd_min_nan(a, v), VR_MIN_NAN_(a, v))

const ops_vec_reduce_table OPS_VEC_NAME(ops_vec_reduce_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .sum_f32 = sum_f32,
    .sum_f64 = sum_f64,
    .sumabs_f32 = sumabs_f32,
    .sumabs_f64 = sumabs_f64,
    .sumsq_f32 = sumsq_f32,
    .sumsq_f64 = sumsq_f64,
    .nansum_f32 = nansum_f32,
    .nansum_f64 = nansum_f64,
    .sumexp_f32 = sumexp_f32,
    .sumexp_f64 = sumexp_f64,
    .count_f32 = count_f32,
    .count_f64 = count_f64,
    .sum_f32_f64 = sum_f32_f64,
    .sum_bf16 = sum_bf16,
#if VEC_HAS_F16_
    .sum_f16 = sum_f16,
#endif
    .sqdev_f32 = sqdev_f32,
    .sqdev_f64 = sqdev_f64,
    .prod_f32 = prod_f32,
    .prod_f64 = prod_f64,
    .max_f32 = max_f32,
    .max_f64 = max_f64,
    .min_f32 = min_f32,
    .min_f64 = min_f64,
    .minmax_f32 = minmax_f32,
    .minmax_f64 = minmax_f64,
    .absmax_f32 = absmax_f32,
    .absmax_f64 = absmax_f64,
    .absmin_f32 = absmin_f32,
    .absmin_f64 = absmin_f64,
    .sumpow_f32 = sumpow_f32,
    .sumcube_f32 = sumcube_f32,
    .sumcube_f64 = sumcube_f64,
    .sumpow_f64 = sumpow_f64,
    .find_f32 = find_f32,
    .find_f64 = find_f64,
    .sum_i32 = sum_i32,
    .sum_i64 = sum_i64,
    .row_add_f32 = row_add_f32,
    .row_add_f64 = row_add_f64,
    .row_radd_f32 = row_radd_f32,
    .row_radd_f64 = row_radd_f64,
    .row_nanadd_f32 = row_nanadd_f32,
    .row_nanadd_f64 = row_nanadd_f64,
    .row_mul_f32 = row_mul_f32,
    .row_mul_f64 = row_mul_f64,
    .row_max_f32 = row_max_f32,
    .row_max_f64 = row_max_f64,
    .row_min_f32 = row_min_f32,
    .row_min_f64 = row_min_f64,
};

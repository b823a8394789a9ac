/* The fused row loops of softmax, log_softmax, cross_entropy and layer_norm (the table
 * of vec_rows.h), compiled once per instruction-set level (kernels/cpu/vec/meson.build;
 * docs/cpu-dispatch.md "Row kernels").
 *
 * softmax of a row is three passes over it, all in registers or L1 for the rows the
 * ops see: the max, then exp(x - max) stored (softmax) or only summed (log_softmax),
 * then the scaling (softmax: times 1 / sum) or the shift (log_softmax: (x - max) -
 * log(sum)).  exp and log are SLEEF's 1.0-ulp vector forms (vec_isa.h).  Sums use
 * several vector accumulators combined in a fixed order; the last n % width elements
 * of a row go through one vector padded with a neutral value (-inf for the max and
 * the exponentials, 0 for the sums), so every row is computed by the same code
 * whatever its length or position. */
#include <math.h>

#include "kernels/cpu/vec/vec_rows.h"

#include "kernels/cpu/vec/vec_isa.h"

/* Layer_norm's moments sum float blocks of this many elements in float, the blocks in
 * double: within a block each of the 4 x width lanes adds at most 1024 / 16 = 64
 * elements, so a row of a million floats keeps double-like precision. */
#define ROWS_BLOCK_ 1024

/* softmax's backward sum, sum(g y) (softmax) or sum(g) (log_softmax), in double: the
 * terms of a float row widened, its products exact, so the cancellation in g - sum
 * that follows costs no more than the float rounding of the sum (the composed formula's
 * precision, where sum_dim adds in double). */
static inline vd_t
vd_bwd_term(vd_t g, vd_t y, bool lg)
{
    return lg ? g : vd_mul(g, y);
}

static double
vd_hsum_(vd_t v)
{
    double buf[vd_n], s = 0;
    vd_store(buf, v);
    for (int k = 0; k < vd_n; k++)
        s += buf[k];
    return s;
}

static double
f_bwd_sum(const float *gy, const float *y, int64_t n, bool lg)
{
    vd_t a0 = vd_set1(0), a1 = a0;
    for (int64_t i = 0; i < n; i += vf_n) {
        vf_t g, yv;
        if (n - i >= vf_n) {
            g = vf_load(gy + i);
            yv = vf_load(y + i);
        } else {
            float bg[vf_n], by[vf_n];
            for (int k = 0; k < vf_n; k++) {
                bg[k] = i + k < n ? gy[i + k] : 0.0f;
                by[k] = i + k < n ? y[i + k] : 0.0f;
            }
            g = vf_load(bg);
            yv = vf_load(by);
        }
        a0 = vd_add(a0, vd_bwd_term(vf_lo_vd(g), vf_lo_vd(yv), lg));
        a1 = vd_add(a1, vd_bwd_term(vf_hi_vd(g), vf_hi_vd(yv), lg));
    }
    return vd_hsum_(vd_add(a0, a1));
}

static double
d_bwd_sum(const double *gy, const double *y, int64_t n, bool lg)
{
    vd_t a0 = vd_set1(0), a1 = a0;
    int64_t i = 0;
    for (; i + 2 * vd_n <= n; i += 2 * vd_n) {
        a0 = vd_add(a0, vd_bwd_term(vd_load(gy + i), vd_load(y + i), lg));
        a1 = vd_add(a1, vd_bwd_term(vd_load(gy + i + vd_n), vd_load(y + i + vd_n), lg));
    }
    for (; i < n; i += vd_n) {
        double bg[vd_n], by[vd_n];
        for (int k = 0; k < vd_n; k++) {
            bg[k] = i + k < n ? gy[i + k] : 0.0;
            by[k] = i + k < n ? y[i + k] : 0.0;
        }
        a0 = vd_add(a0, vd_bwd_term(vd_load(bg), vd_load(by), lg));
    }
    return vd_hsum_(vd_add(a0, a1));
}

/* The loops of one precision: S = f (float) or d (double), T the element type. */
#define ROWS_DEFINE_(S, T)                                                                         \
    /* r < width elements of x, the rest of the vector pad. */                                     \
    static inline v##S##_t S##_load_part(const T *x, int64_t r, T pad)                             \
    {                                                                                              \
        T buf[v##S##_n];                                                                           \
        for (int k = 0; k < v##S##_n; k++)                                                         \
            buf[k] = k < r ? x[k] : pad;                                                           \
        return v##S##_load(buf);                                                                   \
    }                                                                                              \
    static inline void S##_store_part(T *y, v##S##_t v, int64_t r)                                \
    {                                                                                              \
        T buf[v##S##_n];                                                                           \
        v##S##_store(buf, v);                                                                      \
        for (int64_t k = 0; k < r; k++)                                                            \
            y[k] = buf[k];                                                                         \
    }                                                                                              \
    /* The lanes' sum, in lane order, in double (once per row: the lanes of a short row    \
     * hold one term each, so this is most of its sum). */                                         \
    static inline T S##_hsum(v##S##_t v)                                                           \
    {                                                                                              \
        T buf[v##S##_n];                                                                           \
        double s = 0;                                                                              \
        v##S##_store(buf, v);                                                                      \
        for (int k = 0; k < v##S##_n; k++)                                                         \
            s += (double)buf[k];                                                                   \
        return (T)s;                                                                               \
    }                                                                                              \
    static inline T S##_hmax(v##S##_t v)                                                           \
    {                                                                                              \
        T buf[v##S##_n], m = -INFINITY;                                                            \
        v##S##_store(buf, v);                                                                      \
        for (int k = 0; k < v##S##_n; k++)                                                         \
            m = buf[k] > m ? buf[k] : m;                                                           \
        return m;                                                                                  \
    }                                                                                              \
    /* The row's max.  A NaN may be skipped here: it makes the sum of exponentials NaN,    \
     * and with it the whole row, as the scalar rule (NaN wins the max) does. */                   \
    static T S##_row_max(const T *x, int64_t n)                                                    \
    {                                                                                              \
        v##S##_t a0 = v##S##_set1(-INFINITY), a1 = a0, a2 = a0, a3 = a0;                           \
        int64_t i = 0;                                                                             \
        for (; i + 4 * v##S##_n <= n; i += 4 * v##S##_n) {                                         \
            a0 = v##S##_max(a0, v##S##_load(x + i));                                               \
            a1 = v##S##_max(a1, v##S##_load(x + i + v##S##_n));                                    \
            a2 = v##S##_max(a2, v##S##_load(x + i + 2 * v##S##_n));                                \
            a3 = v##S##_max(a3, v##S##_load(x + i + 3 * v##S##_n));                                \
        }                                                                                          \
        for (; i + v##S##_n <= n; i += v##S##_n)                                                   \
            a0 = v##S##_max(a0, v##S##_load(x + i));                                               \
        if (i < n)                                                                                 \
            a1 = v##S##_max(a1, S##_load_part(x + i, n - i, -INFINITY));                           \
        return S##_hmax(v##S##_max(v##S##_max(a0, a1), v##S##_max(a2, a3)));                      \
    }                                                                                              \
    /* sum(exp(x - m)), the exponentials stored to y unless y is NULL. */                          \
    static T S##_row_expsum(const T *x, T *y, int64_t n, T m)                                      \
    {                                                                                              \
        const v##S##_t vm = v##S##_set1(m);                                                        \
        v##S##_t s0 = v##S##_set1(0), s1 = s0;                                                     \
        int64_t i = 0;                                                                             \
        for (; i + 2 * v##S##_n <= n; i += 2 * v##S##_n) {                                         \
            const v##S##_t e0 = SLEEF_##S##_(exp)(v##S##_sub(v##S##_load(x + i), vm));            \
            const v##S##_t e1 = SLEEF_##S##_(exp)(v##S##_sub(v##S##_load(x + i + v##S##_n), vm)); \
            if (y != NULL) {                                                                       \
                v##S##_store(y + i, e0);                                                           \
                v##S##_store(y + i + v##S##_n, e1);                                                \
            }                                                                                      \
            s0 = v##S##_add(s0, e0);                                                               \
            s1 = v##S##_add(s1, e1);                                                               \
        }                                                                                          \
        for (; i < n; i += v##S##_n) {                                                             \
            const int64_t r = n - i < v##S##_n ? n - i : v##S##_n;                                 \
            /* padded lanes: exp(-inf) = 0 */                                                      \
            const v##S##_t v = r < v##S##_n ? S##_load_part(x + i, r, -INFINITY) : v##S##_load(x + i); \
            const v##S##_t e = SLEEF_##S##_(exp)(v##S##_sub(v, vm));                               \
            if (y != NULL)                                                                         \
                S##_store_part(y + i, e, r);                                                       \
            s0 = v##S##_add(s0, e);                                                                \
        }                                                                                          \
        return S##_hsum(v##S##_add(s0, s1));                                                       \
    }                                                                                              \
    static void S##_softmax(const T *x, T *y, int64_t n, bool lg)                                 \
    {                                                                                              \
        if (n <= 0)                                                                                \
            return;                                                                                \
        const T m = S##_row_max(x, n);                                                             \
        if (!lg) {                                                                                \
            const T s = S##_row_expsum(x, y, n, m);                                                \
            const v##S##_t inv = v##S##_set1((T)1 / s);                                            \
            int64_t i = 0;                                                                         \
            for (; i + v##S##_n <= n; i += v##S##_n)                                               \
                v##S##_store(y + i, v##S##_mul(v##S##_load(y + i), inv));                          \
            if (i < n)                                                                             \
                S##_store_part(y + i, v##S##_mul(S##_load_part(y + i, n - i, 0), inv), n - i);     \
            return;                                                                                \
        }                                                                                          \
        const T s = S##_row_expsum(x, NULL, n, m);                                                 \
        const v##S##_t vm = v##S##_set1(m), vl = v##S##_set1((T)log(s));                           \
        int64_t i = 0;                                                                             \
        for (; i + v##S##_n <= n; i += v##S##_n)                                                   \
            v##S##_store(y + i, v##S##_sub(v##S##_sub(v##S##_load(x + i), vm), vl));               \
        if (i < n)                                                                                 \
            S##_store_part(y + i, v##S##_sub(v##S##_sub(S##_load_part(x + i, n - i, 0), vm), vl), n - i); \
    }                                                                                              \
    /* One vector of columns: w <= width columns at x, rows inner apart. */                        \
    static void S##_softmax_colvec(const T *x, T *y, int64_t len, int64_t inner, int64_t w, bool lg) \
    {                                                                                              \
        /* padded lanes hold 0: finite, their results are dropped */                               \
        v##S##_t m = v##S##_set1(-INFINITY), s = v##S##_set1(0);                                   \
        const bool full = w == v##S##_n;                                                           \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            m = v##S##_max(m, full ? v##S##_load(p) : S##_load_part(p, w, 0));                     \
        }                                                                                          \
        /* a NaN lane of the max was maybe skipped: the sum catches it (S##_row_max) */            \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            const v##S##_t e = SLEEF_##S##_(exp)(v##S##_sub(full ? v##S##_load(p) : S##_load_part(p, w, 0), m)); \
            if (!lg) {                                                                            \
                if (full)                                                                          \
                    v##S##_store(y + k * inner, e);                                                \
                else                                                                               \
                    S##_store_part(y + k * inner, e, w);                                           \
            }                                                                                      \
            s = v##S##_add(s, e);                                                                  \
        }                                                                                          \
        if (!lg) {                                                                                \
            const v##S##_t inv = v##S##_div(v##S##_set1(1), s);                                    \
            for (int64_t k = 0; k < len; k++) {                                                    \
                T *q = y + k * inner;                                                              \
                if (full)                                                                          \
                    v##S##_store(q, v##S##_mul(v##S##_load(q), inv));                              \
                else                                                                               \
                    S##_store_part(q, v##S##_mul(S##_load_part(q, w, 0), inv), w);                 \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        const v##S##_t l = SLEEF_##S##_(log)(s);                                                   \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            const v##S##_t v = v##S##_sub(v##S##_sub(full ? v##S##_load(p) : S##_load_part(p, w, 0), m), l); \
            if (full)                                                                              \
                v##S##_store(y + k * inner, v);                                                    \
            else                                                                                   \
                S##_store_part(y + k * inner, v, w);                                               \
        }                                                                                          \
    }                                                                                              \
    /* Two full vectors of columns at once: a 64-byte line of each row at avx2 (one     \
     * vector is half a line, whose other half a later pass had to fetch again); every  \
     * lane computes exactly what S##_softmax_colvec computes for its column. */               \
    static void S##_softmax_colpair(const T *x, T *y, int64_t len, int64_t inner, bool lg)        \
    {                                                                                              \
        v##S##_t m0 = v##S##_set1(-INFINITY), m1 = m0, s0 = v##S##_set1(0), s1 = s0;               \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            m0 = v##S##_max(m0, v##S##_load(p));                                                   \
            m1 = v##S##_max(m1, v##S##_load(p + v##S##_n));                                        \
        }                                                                                          \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            const v##S##_t e0 = SLEEF_##S##_(exp)(v##S##_sub(v##S##_load(p), m0));                \
            const v##S##_t e1 = SLEEF_##S##_(exp)(v##S##_sub(v##S##_load(p + v##S##_n), m1));     \
            if (!lg) {                                                                            \
                v##S##_store(y + k * inner, e0);                                                   \
                v##S##_store(y + k * inner + v##S##_n, e1);                                        \
            }                                                                                      \
            s0 = v##S##_add(s0, e0);                                                               \
            s1 = v##S##_add(s1, e1);                                                               \
        }                                                                                          \
        if (!lg) {                                                                                \
            const v##S##_t i0 = v##S##_div(v##S##_set1(1), s0), i1 = v##S##_div(v##S##_set1(1), s1); \
            for (int64_t k = 0; k < len; k++) {                                                    \
                T *q = y + k * inner;                                                              \
                v##S##_store(q, v##S##_mul(v##S##_load(q), i0));                                   \
                v##S##_store(q + v##S##_n, v##S##_mul(v##S##_load(q + v##S##_n), i1));            \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        const v##S##_t l0 = SLEEF_##S##_(log)(s0), l1 = SLEEF_##S##_(log)(s1);                     \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            v##S##_store(y + k * inner, v##S##_sub(v##S##_sub(v##S##_load(p), m0), l0));           \
            v##S##_store(y + k * inner + v##S##_n, v##S##_sub(v##S##_sub(v##S##_load(p + v##S##_n), m1), l1)); \
        }                                                                                          \
    }                                                                                              \
    static void S##_softmax_cols(const T *x, T *y, int64_t len, int64_t inner, int64_t cols, bool lg) \
    {                                                                                              \
        int64_t c = 0;                                                                             \
        for (; c + 2 * v##S##_n <= cols; c += 2 * v##S##_n)                                        \
            S##_softmax_colpair(x + c, y + c, len, inner, lg);                                     \
        for (; c < cols; c += v##S##_n)                                                            \
            S##_softmax_colvec(x + c, y + c, len, inner, cols - c < v##S##_n ? cols - c : v##S##_n, lg); \
    }                                                                                              \
    static void S##_softmax_bwd(const T *gy, const T *y, T *gx, int64_t n, bool lg)               \
    {                                                                                              \
        const v##S##_t d = v##S##_set1((T)S##_bwd_sum(gy, y, n, lg));                              \
        int64_t i;                                                                                 \
        for (i = 0; i < n; i += v##S##_n) {                                                        \
            const int64_t r = n - i < v##S##_n ? n - i : v##S##_n;                                 \
            const v##S##_t g = r < v##S##_n ? S##_load_part(gy + i, r, 0) : v##S##_load(gy + i);   \
            const v##S##_t yv = r < v##S##_n ? S##_load_part(y + i, r, 0) : v##S##_load(y + i);    \
            const v##S##_t v = lg ? v##S##_sub(g, v##S##_mul(SLEEF_##S##_(exp)(yv), d))           \
                                   : v##S##_mul(yv, v##S##_sub(g, d));                             \
            if (r < v##S##_n)                                                                      \
                S##_store_part(gx + i, v, r);                                                      \
            else                                                                                   \
                v##S##_store(gx + i, v);                                                           \
        }                                                                                          \
    }                                                                                              \
    static void S##_logsumexp(const T *x, int64_t n, T *m, T *ls)                                  \
    {                                                                                              \
        *m = S##_row_max(x, n);                                                                    \
        *ls = (T)log(S##_row_expsum(x, NULL, n, *m));                                              \
    }                                                                                              \
    /* The sum of n <= ROWS_BLOCK_ elements (of (x - c)^2 when sq; c is 0 for the plain   \
     * sum), four accumulators in a fixed order; padded lanes hold c, adding 0 either way. */     \
    static inline v##S##_t S##_sq_dev(v##S##_t v, v##S##_t c, bool sq)                           \
    {                                                                                              \
        if (!sq)                                                                                   \
            return v;                                                                              \
        v = v##S##_sub(v, c);                                                                      \
        return v##S##_mul(v, v);                                                                   \
    }                                                                                              \
    static inline T S##_block_sum(const T *x, int64_t n, bool sq, T c)                             \
    {                                                                                              \
        const v##S##_t vc = v##S##_set1(c);                                                        \
        v##S##_t a0 = v##S##_set1(0), a1 = a0, a2 = a0, a3 = a0;                                   \
        int64_t i = 0;                                                                             \
        for (; i + 4 * v##S##_n <= n; i += 4 * v##S##_n) {                                         \
            a0 = v##S##_add(a0, S##_sq_dev(v##S##_load(x + i), vc, sq));                           \
            a1 = v##S##_add(a1, S##_sq_dev(v##S##_load(x + i + v##S##_n), vc, sq));                \
            a2 = v##S##_add(a2, S##_sq_dev(v##S##_load(x + i + 2 * v##S##_n), vc, sq));            \
            a3 = v##S##_add(a3, S##_sq_dev(v##S##_load(x + i + 3 * v##S##_n), vc, sq));            \
        }                                                                                          \
        for (; i + v##S##_n <= n; i += v##S##_n)                                                   \
            a0 = v##S##_add(a0, S##_sq_dev(v##S##_load(x + i), vc, sq));                           \
        if (i < n)                                                                                 \
            a1 = v##S##_add(a1, S##_sq_dev(S##_load_part(x + i, n - i, c), vc, sq));               \
        return S##_hsum(v##S##_add(v##S##_add(a0, a1), v##S##_add(a2, a3)));                      \
    }                                                                                              \
    static void S##_moments(const T *x, int64_t n, double *mean, double *var)                      \
    {                                                                                              \
        double s = 0, q = 0;                                                                       \
        for (int64_t b = 0; b < n; b += ROWS_BLOCK_)                                               \
            s += (double)S##_block_sum(x + b, n - b < ROWS_BLOCK_ ? n - b : ROWS_BLOCK_, false, 0); \
        const double mu = s / (double)n;                                                           \
        const T c = (T)mu;                                                                         \
        for (int64_t b = 0; b < n; b += ROWS_BLOCK_)                                               \
            q += (double)S##_block_sum(x + b, n - b < ROWS_BLOCK_ ? n - b : ROWS_BLOCK_, true, c); \
        /* deviations were taken from c, the mean rounded to T: sum (x - c)^2 =          \
         * sum (x - mu)^2 + n (mu - c)^2 */                                                        \
        const double d = mu - (double)c;                                                           \
        q -= (double)n * d * d;                                                                    \
        *mean = mu;                                                                                \
        *var = q < 0 ? 0 : q / (double)n; /* NaN stays NaN */                                      \
    }                                                                                              \
    static inline v##S##_t S##_affine(v##S##_t x, v##S##_t m, v##S##_t r, const T *w, const T *b,   \
                                       int64_t k)                                                  \
    {                                                                                              \
        v##S##_t v = v##S##_mul(v##S##_sub(x, m), r);                                              \
        if (w != NULL)                                                                             \
            v = v##S##_mul(v, k < v##S##_n ? S##_load_part(w, k, 0) : v##S##_load(w));             \
        if (b != NULL)                                                                             \
            v = v##S##_add(v, k < v##S##_n ? S##_load_part(b, k, 0) : v##S##_load(b));             \
        return v;                                                                                  \
    }                                                                                              \
    static void S##_norm_apply(const T *x, T *y, int64_t n, T m, T r, const T *w, const T *b)      \
    {                                                                                              \
        const v##S##_t vm = v##S##_set1(m), vr = v##S##_set1(r);                                   \
        int64_t i = 0;                                                                             \
        if (w != NULL && b != NULL) {                                                              \
            for (; i + v##S##_n <= n; i += v##S##_n)                                               \
                v##S##_store(y + i, v##S##_add(v##S##_mul(v##S##_mul(v##S##_sub(v##S##_load(x + i), vm), vr), \
                                                          v##S##_load(w + i)),                     \
                                               v##S##_load(b + i)));                               \
        } else {                                                                                   \
            for (; i + v##S##_n <= n; i += v##S##_n)                                               \
                v##S##_store(y + i, S##_affine(v##S##_load(x + i), vm, vr, w != NULL ? w + i : NULL, \
                                               b != NULL ? b + i : NULL, v##S##_n));               \
        }                                                                                          \
        if (i < n)                                                                                 \
            S##_store_part(y + i, S##_affine(S##_load_part(x + i, n - i, 0), vm, vr, w != NULL ? w + i : NULL, \
                                             b != NULL ? b + i : NULL, n - i), n - i);             \
    }

/* layer_norm's backward (kernels/cpu/norm.c): per row, one pass for the two sums of dx
 * (sum(g w) and sum(g w x^), float blocks of ROWS_BLOCK_ in double, as the moments),
 * then one pass writing dx = r (g w - sum(g w) / n - x^ sum(g w x^) / n) and adding
 * g x^ and g to the column partials dw and db, the row still in L1.  Padded lanes of
 * a tail hold 0 for g, so they add nothing. */
#define ROWS_LN_BWD_(S, T)                                                                         \
    static inline v##S##_t S##_ln_gw(const T *g, const T *w, int64_t i, int64_t r)                \
    {                                                                                              \
        const v##S##_t gv = r < v##S##_n ? S##_load_part(g + i, r, 0) : v##S##_load(g + i);        \
        if (w == NULL)                                                                             \
            return gv;                                                                             \
        return v##S##_mul(gv, r < v##S##_n ? S##_load_part(w + i, r, 0) : v##S##_load(w + i));     \
    }                                                                                              \
    static inline v##S##_t S##_ln_xhat(const T *x, int64_t i, int64_t r, v##S##_t vm, v##S##_t vr) \
    {                                                                                              \
        const v##S##_t xv = r < v##S##_n ? S##_load_part(x + i, r, 0) : v##S##_load(x + i);        \
        return v##S##_mul(v##S##_sub(xv, vm), vr);                                                 \
    }                                                                                              \
    static void S##_ln_bwd_sums(const T *g, const T *x, const T *w, T m, T r, int64_t n, double *sa,  \
                                double *sb)                                                        \
    {                                                                                              \
        const v##S##_t vm = v##S##_set1(m), vr = v##S##_set1(r);                                   \
        double ta = 0, tb = 0;                                                                     \
        for (int64_t b0 = 0; b0 < n; b0 += ROWS_BLOCK_) {                                          \
            const int64_t e = n - b0 < ROWS_BLOCK_ ? n : b0 + ROWS_BLOCK_;                         \
            v##S##_t a0 = v##S##_set1(0), a1 = a0, c0 = a0, c1 = a0;                               \
            int64_t i = b0;                                                                        \
            for (; i + 2 * v##S##_n <= e; i += 2 * v##S##_n) {                                     \
                const v##S##_t g0 = S##_ln_gw(g, w, i, v##S##_n);                                  \
                const v##S##_t g1 = S##_ln_gw(g, w, i + v##S##_n, v##S##_n);                       \
                a0 = v##S##_add(a0, g0);                                                           \
                a1 = v##S##_add(a1, g1);                                                           \
                c0 = v##S##_add(c0, v##S##_mul(g0, S##_ln_xhat(x, i, v##S##_n, vm, vr)));          \
                c1 = v##S##_add(c1, v##S##_mul(g1, S##_ln_xhat(x, i + v##S##_n, v##S##_n, vm, vr))); \
            }                                                                                      \
            for (; i < e; i += v##S##_n) {                                                         \
                const int64_t k = e - i < v##S##_n ? e - i : v##S##_n;                             \
                const v##S##_t g0 = S##_ln_gw(g, w, i, k);                                         \
                a0 = v##S##_add(a0, g0);                                                           \
                c0 = v##S##_add(c0, v##S##_mul(g0, S##_ln_xhat(x, i, k, vm, vr)));                 \
            }                                                                                      \
            ta += (double)S##_hsum(v##S##_add(a0, a1));                                            \
            tb += (double)S##_hsum(v##S##_add(c0, c1));                                            \
        }                                                                                          \
        *sa = ta;                                                                                  \
        *sb = tb;                                                                                  \
    }                                                                                              \
    static void S##_ln_bwd(const T *g, const T *x, const T *w, const T *mean, const T *rstd, int64_t rows, \
                           int64_t n, T *dx, T *dw, T *db)                                         \
    {                                                                                              \
        for (int64_t row = 0; row < rows; row++) {                                                 \
            const T *gr = g + row * n, *xr = x + row * n;                                          \
            const T m = mean[row], r = rstd[row];                                                  \
            const v##S##_t vm = v##S##_set1(m), vr = v##S##_set1(r);                               \
            v##S##_t ca = v##S##_set1(0), cb = ca;                                                 \
            if (dx != NULL) {                                                                      \
                double sa, sb;                                                                     \
                S##_ln_bwd_sums(gr, xr, w, m, r, n, &sa, &sb);                                     \
                ca = v##S##_set1((T)(sa / (double)n));                                             \
                cb = v##S##_set1((T)(sb / (double)n));                                             \
            }                                                                                      \
            for (int64_t i = 0; i < n; i += v##S##_n) {                                            \
                const int64_t k = n - i < v##S##_n ? n - i : v##S##_n;                             \
                const v##S##_t xh = S##_ln_xhat(xr, i, k, vm, vr);                                 \
                const v##S##_t gv = k < v##S##_n ? S##_load_part(gr + i, k, 0) : v##S##_load(gr + i); \
                if (dx != NULL) {                                                                  \
                    const v##S##_t gw = w == NULL ? gv                                             \
                        : v##S##_mul(gv, k < v##S##_n ? S##_load_part(w + i, k, 0) : v##S##_load(w + i)); \
                    const v##S##_t v = v##S##_mul(v##S##_sub(v##S##_sub(gw, ca), v##S##_mul(xh, cb)), vr); \
                    if (k < v##S##_n)                                                              \
                        S##_store_part(dx + row * n + i, v, k);                                    \
                    else                                                                           \
                        v##S##_store(dx + row * n + i, v);                                         \
                }                                                                                  \
                if (dw != NULL) {                                                                  \
                    const v##S##_t p = k < v##S##_n ? S##_load_part(dw + i, k, 0) : v##S##_load(dw + i); \
                    const v##S##_t v = v##S##_add(p, v##S##_mul(gv, xh));                          \
                    if (k < v##S##_n)                                                              \
                        S##_store_part(dw + i, v, k);                                              \
                    else                                                                           \
                        v##S##_store(dw + i, v);                                                   \
                }                                                                                  \
                if (db != NULL) {                                                                  \
                    const v##S##_t p = k < v##S##_n ? S##_load_part(db + i, k, 0) : v##S##_load(db + i); \
                    const v##S##_t v = v##S##_add(p, gv);                                          \
                    if (k < v##S##_n)                                                              \
                        S##_store_part(db + i, v, k);                                              \
                    else                                                                           \
                        v##S##_store(db + i, v);                                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

ROWS_DEFINE_(f, float)
ROWS_DEFINE_(d, double)
ROWS_LN_BWD_(f, float)
ROWS_LN_BWD_(d, double)

/* softmax's backward over a non-last dim: one vector of w <= width columns at g/y/gx,
 * len rows inner apart.  The column sums sum(g y) (softmax) or sum(g) (log_softmax)
 * in double lanes (the row loop's precision: float terms widened, products exact),
 * then gx = y (g - sum) or g - exp(y) sum down the columns.  Padded lanes hold 0. */
static void
f_softmax_bwd_colvec(const float *gy, const float *y, float *gx, int64_t len, int64_t inner, int64_t w, bool lg)
{
    const bool full = w == vf_n;
    vd_t lo = vd_set1(0), hi = lo;
    for (int64_t k = 0; k < len; k++) {
        const vf_t g = full ? vf_load(gy + k * inner) : f_load_part(gy + k * inner, w, 0);
        const vf_t yv = full ? vf_load(y + k * inner) : f_load_part(y + k * inner, w, 0);
        lo = vd_add(lo, vd_bwd_term(vf_lo_vd(g), vf_lo_vd(yv), lg));
        hi = vd_add(hi, vd_bwd_term(vf_hi_vd(g), vf_hi_vd(yv), lg));
    }
    double dl[vd_n], dh[vd_n];
    float ds[vf_n];
    vd_store(dl, lo);
    vd_store(dh, hi);
    for (int k = 0; k < vd_n; k++) {
        ds[k] = (float)dl[k];
        ds[vd_n + k] = (float)dh[k];
    }
    const vf_t d = vf_load(ds);
    for (int64_t k = 0; k < len; k++) {
        const vf_t g = full ? vf_load(gy + k * inner) : f_load_part(gy + k * inner, w, 0);
        const vf_t yv = full ? vf_load(y + k * inner) : f_load_part(y + k * inner, w, 0);
        const vf_t v = lg ? vf_sub(g, vf_mul(SLEEF_f_(exp)(yv), d)) : vf_mul(yv, vf_sub(g, d));
        if (full)
            vf_store(gx + k * inner, v);
        else
            f_store_part(gx + k * inner, v, w);
    }
}

static void
d_softmax_bwd_colvec(const double *gy, const double *y, double *gx, int64_t len, int64_t inner, int64_t w, bool lg)
{
    const bool full = w == vd_n;
    vd_t s = vd_set1(0);
    for (int64_t k = 0; k < len; k++) {
        const vd_t g = full ? vd_load(gy + k * inner) : d_load_part(gy + k * inner, w, 0);
        const vd_t yv = full ? vd_load(y + k * inner) : d_load_part(y + k * inner, w, 0);
        s = vd_add(s, vd_bwd_term(g, yv, lg));
    }
    for (int64_t k = 0; k < len; k++) {
        const vd_t g = full ? vd_load(gy + k * inner) : d_load_part(gy + k * inner, w, 0);
        const vd_t yv = full ? vd_load(y + k * inner) : d_load_part(y + k * inner, w, 0);
        const vd_t v = lg ? vd_sub(g, vd_mul(SLEEF_d_(exp)(yv), s)) : vd_mul(yv, vd_sub(g, s));
        if (full)
            vd_store(gx + k * inner, v);
        else
            d_store_part(gx + k * inner, v, w);
    }
}

#define ROWS_BWD_COLS_(S, T)                                                                       \
    static void S##_softmax_bwd_cols(const T *gy, const T *y, T *gx, int64_t len, int64_t inner, int64_t cols, \
                                     bool lg)                                                      \
    {                                                                                              \
        for (int64_t c = 0; c < cols; c += v##S##_n)                                               \
            S##_softmax_bwd_colvec(gy + c, y + c, gx + c, len, inner, cols - c < v##S##_n ? cols - c : v##S##_n, \
                                   lg);                                                            \
    }

ROWS_BWD_COLS_(f, float)
ROWS_BWD_COLS_(d, double)

/* cross_entropy's loops (kernels/cpu/loss.c).  A row (classes contiguous, S == 1):
 * its max m and ls = log(sum(exp(x - m))) as S##_logsumexp, and for label smoothing
 * sum_k w[k] (x[k] - m) (w NULL: 1) in a third pass over the row (in L1): every term
 * has one sign for weights >= 0, so -(that) + W ls has no cancellation, unlike
 * sum(w x) - W (m + ls).  The padded lanes of the third pass hold x = m, w = 0. */
#define ROWS_CE_(S, T)                                                                             \
    static void S##_ce_row(const T *x, int64_t n, const T *w, bool smooth, T *m, T *ls, double *sw) \
    {                                                                                              \
        *m = S##_row_max(x, n);                                                                    \
        *ls = (T)log(S##_row_expsum(x, NULL, n, *m));                                              \
        *sw = 0;                                                                                   \
        if (!smooth)                                                                               \
            return;                                                                                \
        const v##S##_t vm = v##S##_set1(*m), one = v##S##_set1(1);                                 \
        v##S##_t a0 = v##S##_set1(0), a1 = a0;                                                     \
        int64_t i = 0;                                                                             \
        for (; i + 2 * v##S##_n <= n; i += 2 * v##S##_n) {                                         \
            const v##S##_t d0 = v##S##_sub(v##S##_load(x + i), vm);                                \
            const v##S##_t d1 = v##S##_sub(v##S##_load(x + i + v##S##_n), vm);                     \
            a0 = v##S##_add(a0, v##S##_mul(d0, w != NULL ? v##S##_load(w + i) : one));             \
            a1 = v##S##_add(a1, v##S##_mul(d1, w != NULL ? v##S##_load(w + i + v##S##_n) : one));  \
        }                                                                                          \
        for (; i < n; i += v##S##_n) {                                                             \
            const int64_t r = n - i < v##S##_n ? n - i : v##S##_n;                                 \
            const v##S##_t d = v##S##_sub(S##_load_part(x + i, r, *m), vm);                        \
            a0 = v##S##_add(a0, v##S##_mul(d, w != NULL ? S##_load_part(w + i, r, 0) : one));      \
        }                                                                                          \
        *sw = (double)S##_hsum(v##S##_add(a0, a1));                                                \
    }                                                                                              \
    /* One vector of cols (<= width) positions at x, the len classes inner apart: m[j],   \
     * ls[j] per position; sw[j] = sum_k w[k] (x - m) when sw is not NULL; when gx is not \
     * NULL, gx = a[j] exp(x - m - ls) - b[j] w[k] (b NULL: no second term).  Padded lanes \
     * hold 0 (finite; their results are dropped). */                                              \
    static void S##_ce_colvec(const T *x, int64_t len, int64_t inner, int64_t cols, const T *w, T *m, T *ls, \
                              double *sw, T *gx, const T *a, const T *b)                            \
    {                                                                                              \
        const bool full = cols == v##S##_n;                                                        \
        v##S##_t vm = v##S##_set1(-INFINITY), s = v##S##_set1(0), acc = s;                         \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            vm = v##S##_max(vm, full ? v##S##_load(p) : S##_load_part(p, cols, 0));                \
        }                                                                                          \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            const v##S##_t d = v##S##_sub(full ? v##S##_load(p) : S##_load_part(p, cols, 0), vm);  \
            s = v##S##_add(s, SLEEF_##S##_(exp)(d));                                               \
            if (sw != NULL)                                                                        \
                acc = v##S##_add(acc, w != NULL ? v##S##_mul(d, v##S##_set1(w[k])) : d);           \
        }                                                                                          \
        T bm[v##S##_n], bs[v##S##_n], ba[v##S##_n];                                                \
        v##S##_store(bm, vm);                                                                      \
        v##S##_store(bs, s);                                                                       \
        v##S##_store(ba, acc);                                                                     \
        for (int64_t j = 0; j < cols; j++) {                                                       \
            m[j] = bm[j];                                                                          \
            ls[j] = (T)log((double)bs[j]);                                                         \
            if (sw != NULL)                                                                        \
                sw[j] = (double)ba[j];                                                             \
        }                                                                                          \
        if (gx == NULL)                                                                            \
            return;                                                                                \
        const v##S##_t vl = S##_load_part(ls, cols, 0), va = S##_load_part(a, cols, 0);            \
        const v##S##_t vb = b != NULL ? S##_load_part(b, cols, 0) : v##S##_set1(0);                \
        for (int64_t k = 0; k < len; k++) {                                                        \
            const T *p = x + k * inner;                                                            \
            const v##S##_t d = v##S##_sub(v##S##_sub(full ? v##S##_load(p) : S##_load_part(p, cols, 0), vm), vl); \
            v##S##_t v = v##S##_mul(va, SLEEF_##S##_(exp)(d));                                     \
            if (b != NULL)                                                                         \
                v = v##S##_sub(v, v##S##_mul(vb, v##S##_set1(w != NULL ? w[k] : (T)1)));           \
            if (full)                                                                              \
                v##S##_store(gx + k * inner, v);                                                   \
            else                                                                                   \
                S##_store_part(gx + k * inner, v, cols);                                           \
        }                                                                                          \
    }                                                                                              \
    static void S##_ce_cols(const T *x, int64_t len, int64_t inner, int64_t cols, const T *w, T *m, T *ls,   \
                            double *sw, T *gx, const T *a, const T *b)                             \
    {                                                                                              \
        for (int64_t c = 0; c < cols; c += v##S##_n)                                               \
            S##_ce_colvec(x + c, len, inner, cols - c < v##S##_n ? cols - c : v##S##_n, w, m + c, ls + c, \
                          sw != NULL ? sw + c : NULL, gx != NULL ? gx + c : NULL, a != NULL ? a + c : NULL, \
                          b != NULL ? b + c : NULL);                                               \
    }

ROWS_CE_(f, float)
ROWS_CE_(d, double)

const ops_vec_rows_table OPS_VEC_NAME(ops_vec_rows_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .softmax_f32 = f_softmax,
    .softmax_f64 = d_softmax,
    .softmax_cols_f32 = f_softmax_cols,
    .softmax_cols_f64 = d_softmax_cols,
    .softmax_bwd_f32 = f_softmax_bwd,
    .softmax_bwd_f64 = d_softmax_bwd,
    .logsumexp_f32 = f_logsumexp,
    .logsumexp_f64 = d_logsumexp,
    .moments_f32 = f_moments,
    .moments_f64 = d_moments,
    .norm_apply_f32 = f_norm_apply,
    .norm_apply_f64 = d_norm_apply,
    .ln_bwd_f32 = f_ln_bwd,
    .ln_bwd_f64 = d_ln_bwd,
    .softmax_bwd_cols_f32 = f_softmax_bwd_cols,
    .softmax_bwd_cols_f64 = d_softmax_bwd_cols,
    .ce_row_f32 = f_ce_row,
    .ce_row_f64 = d_ce_row,
    .ce_cols_f32 = f_ce_cols,
    .ce_cols_f64 = d_ce_cols,
};

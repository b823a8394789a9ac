/* Max and average pooling over NCHW planes, float32 and float64, vectorised along the output row:
 * one lane per output, each lane scanning its window's taps in the scalar loop's order
 * (kernels/cpu/pool.c), so results and indices are the same bits at every level.
 * Compiled once per instruction-set level (kernels/cpu/vec/meson.build;
 * docs/cpu-dispatch.md "Pooling").
 *
 * A tap of VP_N neighbouring outputs is one load at stride 1, two loads and an
 * even-element shuffle at stride 2 (the commonest pooling), a gather otherwise.  A row
 * of outputs not a multiple of VP_N ends with one vector over its last VP_N outputs,
 * which recomputes some of them: each output is a function of its window only, so
 * they are written again with the same values.
 *
 * Channels-last pooling (max_cl_f32, avg_cl_f32) runs along the channels instead: every
 * channel of an output position shares the window, one lane per channel.  The same
 * loops take NCHW planes as the channels (a gather at the plane stride per tap) for
 * adaptive pooling, whose windows differ from output to output along a row: each lane
 * is still the scalar loop's scan of its plane, so its bits. */
#include "kernels/cpu/vec/vec_pool.h"

#include "kernels/cpu/vec/vec_isa.h"

/* The level's table: the loops below (vector ones, or the none-here ones that leave
 * every output to the scalar loops), float32 and float64 widths W32 and W64. */
#define VP_TABLE_(W32, W64)                                              \
    const ops_vec_pool_table OPS_VEC_NAME(ops_vec_pool_table) = {        \
        .level = OPS_VEC_LEVEL_STR,                                      \
        .width = (W32),                                                  \
        .width_f64 = (W64),                                              \
        .max_f32 = max_f_v,                                              \
        .avg_f32 = avg_f_v,                                              \
        .max_cl_f32 = max_cl_f_v,                                        \
        .avg_cl_f32 = avg_cl_f_v,                                        \
        .max_f64 = max_d_v,                                              \
        .avg_f64 = avg_d_v,                                              \
        .max_cl_f64 = max_cl_d_v,                                        \
        .avg_cl_f64 = avg_cl_d_v,                                        \
        .addto_f32 = addto_f_v,                                          \
        .addto_f64 = addto_d_v,                                          \
        .div_f32 = div_f_v,                                              \
        .div_f64 = div_d_v,                                              \
    }

#if defined(__SSE2__)

/* The level's few operations of its own, per type (f: float32, d: float64):
 * vp_take_f(v, m), the lanes where the scalar loop's `v > m || isnan(v)` holds;
 * vp_blend_f(t, a, b), b where t and a elsewhere; vp_even_f(p), the elements p[0],
 * p[2], ... (reads the element after the last); vp_gather_f(p, s), p[0], p[s], ... */
#if defined(__AVX512F__)
typedef __mmask16 vp_mask_f;
typedef __mmask8 vp_mask_d;
#define vp_take_f(v, m) (_mm512_cmp_ps_mask((v), (m), _CMP_GT_OQ) | _mm512_cmp_ps_mask((v), (v), _CMP_UNORD_Q))
#define vp_blend_f(t, a, b) _mm512_mask_blend_ps((t), (a), (b))
#define vp_take_d(v, m) (_mm512_cmp_pd_mask((v), (m), _CMP_GT_OQ) | _mm512_cmp_pd_mask((v), (v), _CMP_UNORD_Q))
#define vp_blend_d(t, a, b) _mm512_mask_blend_pd((t), (a), (b))
static inline vf_t
vp_even_f(const float *p)
{
    const __m512i ix = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), ix, _mm512_loadu_ps(p + 16));
}
static inline vf_t
vp_gather_f(const float *p, int64_t s)
{
    const __m512i ix = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                          _mm512_set1_epi32((int)s));
    return _mm512_i32gather_ps(ix, p, 4);
}
static inline vd_t
vp_even_d(const double *p)
{
    const __m512i ix = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_pd(_mm512_loadu_pd(p), ix, _mm512_loadu_pd(p + 8));
}
static inline vd_t
vp_gather_d(const double *p, int64_t s)
{
    const __m256i ix = _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32((int)s));
    return _mm512_i32gather_pd(ix, p, 8);
}
#elif defined(__AVX2__)
typedef __m256 vp_mask_f;
typedef __m256d vp_mask_d;
#define vp_take_f(v, m) _mm256_or_ps(_mm256_cmp_ps((v), (m), _CMP_GT_OQ), _mm256_cmp_ps((v), (v), _CMP_UNORD_Q))
#define vp_blend_f(t, a, b) _mm256_blendv_ps((a), (b), (t))
#define vp_take_d(v, m) _mm256_or_pd(_mm256_cmp_pd((v), (m), _CMP_GT_OQ), _mm256_cmp_pd((v), (v), _CMP_UNORD_Q))
#define vp_blend_d(t, a, b) _mm256_blendv_pd((a), (b), (t))
static inline vf_t
vp_even_f(const float *p)
{
    const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88); /* 0 2 8 10 4 6 12 14 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
}
static inline vf_t
vp_gather_f(const float *p, int64_t s)
{
    const __m256i ix = _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32((int)s));
    return _mm256_i32gather_ps(p, ix, 4);
}
static inline vd_t
vp_even_d(const double *p)
{
    const __m256d t = _mm256_unpacklo_pd(_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)); /* 0 4 2 6 */
    return _mm256_permute4x64_pd(t, 0xD8);
}
static inline vd_t
vp_gather_d(const double *p, int64_t s)
{
    const __m128i ix = _mm_mullo_epi32(_mm_set_epi32(3, 2, 1, 0), _mm_set1_epi32((int)s));
    return _mm256_i32gather_pd(p, ix, 8);
}
#else /* SSE2 */
typedef __m128 vp_mask_f;
typedef __m128d vp_mask_d;
#define vp_take_f(v, m) _mm_or_ps(_mm_cmpgt_ps((v), (m)), _mm_cmpunord_ps((v), (v)))
#define vp_blend_f(t, a, b) _mm_or_ps(_mm_and_ps((t), (b)), _mm_andnot_ps((t), (a)))
#define vp_take_d(v, m) _mm_or_pd(_mm_cmpgt_pd((v), (m)), _mm_cmpunord_pd((v), (v)))
#define vp_blend_d(t, a, b) _mm_or_pd(_mm_and_pd((t), (b)), _mm_andnot_pd((t), (a)))
static inline vf_t
vp_even_f(const float *p)
{
    return _mm_shuffle_ps(_mm_loadu_ps(p), _mm_loadu_ps(p + 4), 0x88);
}
static inline vf_t
vp_gather_f(const float *p, int64_t s)
{
    return _mm_set_ps(p[3 * s], p[2 * s], p[s], p[0]);
}
static inline vd_t
vp_even_d(const double *p)
{
    return _mm_unpacklo_pd(_mm_loadu_pd(p), _mm_loadu_pd(p + 2));
}
static inline vd_t
vp_gather_d(const double *p, int64_t s)
{
    return _mm_set_pd(p[s], p[0]);
}
#endif

/* The loops of one type: T the element, V its vector of N lanes, S the suffix of its
 * operations (f or d; vf_load, vp_take_f, ...).  The winner's tap number is kept as a
 * T in the vector (exact below 2^24) and turned into the flat index at the end. */
#define VP_OP_(S, op) vp_##op##_##S
#define VP_VOP_(S, op) v##S##_##op

/* STMT for o = lo, lo + N, ... while a whole vector fits below hi, then once for the
 * last N before hi (recomputing some: each result is a function of its window). */
#define VP_RUN_(N, lo, hi, o, STMT)             \
    do {                                        \
        int64_t o = (lo);                       \
        for (; o + (N) <= (hi); o += (N)) {     \
            STMT;                               \
        }                                       \
        if (o < (hi)) {                         \
            o = (hi) - (N);                     \
            STMT;                               \
        }                                       \
    } while (0)

/* One tap v (number k) of the max scan: taken where the scalar loop's
 * `v > m || isnan(v)` holds, its number kept when KEEP. */
#define VP_MAX_TAP_(S, T, V, m, km, v, k, KEEP)                           \
    do {                                                                  \
        const V v_ = (v);                                                 \
        const vp_mask_##S t_ = VP_OP_(S, take)(v_, (m));                  \
        (m) = VP_OP_(S, blend)(t_, (m), v_);                              \
        if (KEEP)                                                         \
            (km) = VP_OP_(S, blend)(t_, (km), VP_VOP_(S, set1)((T)(k)));  \
    } while (0)

#define VP_DEFINE_(T, V, N, S)                                                                             \
    /* the taps at p of N outputs sw apart */                                                            \
    static inline V tap_##S(const T *p, int64_t sw)                                                      \
    {                                                                                                    \
        return sw == 1 ? VP_VOP_(S, load)(p) : sw == 2 ? VP_OP_(S, even)(p) : VP_OP_(S, gather)(p, sw); \
    }                                                                                                    \
                                                                                                         \
    /* the taps at p of N channels sc apart (no read past the last) */                                   \
    static inline V ctap_##S(const T *p, int64_t sc)                                                     \
    {                                                                                                    \
        return sc == 1 ? VP_VOP_(S, load)(p) : VP_OP_(S, gather)(p, sc);                                 \
    }                                                                                                    \
                                                                                                         \
    /* N outputs from ox on: the scalar loop's scan */                                                   \
    static inline void max_vec_##S(const ops_vec_pool_row *r, const T *x, int64_t ox, T *out, int64_t *idx) \
    {                                                                                                    \
        const T *const base = x + ox * r->sw - r->pw;                                                    \
        V m = tap_##S(base + r->y0 * r->sy, r->sw), km = VP_VOP_(S, set1)(0);                            \
        int k = 0;                                                                                       \
        for (int64_t y = r->y0; y < r->y1; y += r->dh) {                                                 \
            const T *const row = base + y * r->sy;                                                       \
            for (int64_t kx = 0; kx < r->kw; kx++, k++)                                                  \
                if (k > 0) /* the first tap is the start (the scalar loop's !found) */                   \
                    VP_MAX_TAP_(S, T, V, m, km, tap_##S(row + kx * r->dw, r->sw), k, idx != NULL);          \
        }                                                                                                \
        VP_VOP_(S, store)(out + ox, m);                                                                  \
        if (idx != NULL) {                                                                               \
            T kk[N];                                                                                     \
            VP_VOP_(S, store)(kk, km);                                                                   \
            for (int j = 0; j < N; j++) {                                                                \
                const int64_t kj = (int64_t)kk[j], ky = kj / r->kw, kx = kj % r->kw;                     \
                idx[ox + j] = (r->y0 + ky * r->dh) * r->iw + (ox + j) * r->sw - r->pw + kx * r->dw;      \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    static bool max_##S##_v(const ops_vec_pool_row *r, T *out, int64_t *idx)                             \
    {                                                                                                    \
        const T *const x = (const T *)r->x;                                                              \
        if (r->ox1 - r->ox0 < N || r->y0 >= r->y1 || r->kw < 1 || (r->y1 - r->y0) * r->kw >= (1 << 24))   \
            return false;                                                                                \
        VP_RUN_(N, r->ox0, r->ox1, ox, max_vec_##S(r, x, ox, out, idx));                                 \
        return true;                                                                                     \
    }                                                                                                    \
                                                                                                         \
    /* N outputs from ox on: the sum from 0 over the taps in the scalar order */                         \
    static inline void avg_vec_##S(const ops_vec_pool_row *r, const T *x, V div, int64_t ox, T *out)     \
    {                                                                                                    \
        const T *const base = x + ox * r->sw - r->pw;                                                    \
        V s = VP_VOP_(S, set1)(0);                                                                       \
        for (int64_t y = r->y0; y < r->y1; y += r->dh) {                                                 \
            const T *const row = base + y * r->sy;                                                       \
            for (int64_t kx = 0; kx < r->kw; kx++)                                                       \
                s = VP_VOP_(S, add)(s, tap_##S(row + kx * r->dw, r->sw));                                \
        }                                                                                                \
        VP_VOP_(S, store)(out + ox, VP_VOP_(S, div)(s, div));                                            \
    }                                                                                                    \
                                                                                                         \
    static bool avg_##S##_v(const ops_vec_pool_row *r, T div, T *out)                                    \
    {                                                                                                    \
        const T *const x = (const T *)r->x;                                                              \
        if (r->ox1 - r->ox0 < N)                                                                         \
            return false;                                                                                \
        const V d = VP_VOP_(S, set1)(div);                                                               \
        VP_RUN_(N, r->ox0, r->ox1, ox, avg_vec_##S(r, x, d, ox, out));                                   \
        return true;                                                                                     \
    }                                                                                                    \
                                                                                                         \
    /* channels c .. c + N - 1 of one output position: the same scan per lane */                         \
    static inline void max_cl_vec_##S(const ops_vec_pool_cl *r, const T *x, int64_t c, T *mo, int32_t *ko) \
    {                                                                                                    \
        const T *const base = x + c * r->sc;                                                             \
        V m = ctap_##S(base + r->y0 * r->sy + r->x0 * r->sx, r->sc), km = VP_VOP_(S, set1)(0);           \
        int k = 0;                                                                                       \
        for (int64_t y = r->y0; y < r->y1; y += r->dh)                                                   \
            for (int64_t xx = r->x0; xx < r->x1; xx += r->dw, k++)                                       \
                if (k > 0)                                                                               \
                    VP_MAX_TAP_(S, T, V, m, km, ctap_##S(base + y * r->sy + xx * r->sx, r->sc), k, ko != NULL); \
        VP_VOP_(S, store)(mo + c, m);                                                                    \
        if (ko != NULL) {                                                                                \
            T kk[N];                                                                                     \
            VP_VOP_(S, store)(kk, km);                                                                   \
            for (int j = 0; j < N; j++)                                                                  \
                ko[c + j] = (int32_t)kk[j];                                                              \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    /* the channels and window the channel loops take (the same for max and avg) */                     \
    static inline bool cl_ok_##S(const ops_vec_pool_cl *r)                                               \
    {                                                                                                    \
        const int64_t taps = ((r->y1 - r->y0 + r->dh - 1) / r->dh) * ((r->x1 - r->x0 + r->dw - 1) / r->dw); \
        return r->nc >= N && r->y0 < r->y1 && r->x0 < r->x1 && taps < (1 << 24) && r->sc >= 1 &&          \
               r->sc <= INT32_MAX / N;                                                                   \
    }                                                                                                    \
                                                                                                         \
    static bool max_cl_##S##_v(const ops_vec_pool_cl *r, T *m, int32_t *k)                               \
    {                                                                                                    \
        if (!cl_ok_##S(r))                                                                               \
            return false;                                                                                \
        VP_RUN_(N, 0, r->nc, c, max_cl_vec_##S(r, (const T *)r->x, c, m, k));                            \
        return true;                                                                                     \
    }                                                                                                    \
                                                                                                         \
    static inline void avg_cl_vec_##S(const ops_vec_pool_cl *r, const T *x, V div, int64_t c, T *mo)     \
    {                                                                                                    \
        const T *const base = x + c * r->sc;                                                             \
        V s = VP_VOP_(S, set1)(0);                                                                       \
        for (int64_t y = r->y0; y < r->y1; y += r->dh)                                                   \
            for (int64_t xx = r->x0; xx < r->x1; xx += r->dw)                                            \
                s = VP_VOP_(S, add)(s, ctap_##S(base + y * r->sy + xx * r->sx, r->sc));                  \
        VP_VOP_(S, store)(mo + c, VP_VOP_(S, div)(s, div));                                              \
    }                                                                                                    \
                                                                                                         \
    static bool avg_cl_##S##_v(const ops_vec_pool_cl *r, T div, T *m)                                   \
    {                                                                                                    \
        if (!cl_ok_##S(r))                                                                               \
            return false;                                                                                \
        const V d = VP_VOP_(S, set1)(div);                                                               \
        VP_RUN_(N, 0, r->nc, c, avg_cl_vec_##S(r, (const T *)r->x, d, c, m));                            \
        return true;                                                                                     \
    } \
                                                                                                         \
    static void addto_##S##_v(T *y, const T *x, int64_t n)                                               \
    {                                                                                                    \
        int64_t i = 0;                                                                                   \
        for (; i + N <= n; i += N)                                                                       \
            VP_VOP_(S, store)(y + i, VP_VOP_(S, add)(VP_VOP_(S, load)(y + i), VP_VOP_(S, load)(x + i)));  \
        for (; i < n; i++)                                                                               \
            y[i] += x[i];                                                                                \
    }                                                                                                    \
                                                                                                         \
    static void div_##S##_v(T *y, const T *x, const T *d, int64_t n)                                     \
    {                                                                                                    \
        int64_t i = 0;                                                                                   \
        for (; i + N <= n; i += N)                                                                       \
            VP_VOP_(S, store)(y + i, VP_VOP_(S, div)(VP_VOP_(S, load)(x + i), VP_VOP_(S, load)(d + i)));  \
        for (; i < n; i++)                                                                               \
            y[i] = x[i] / d[i];                                                                          \
    }

VP_DEFINE_(float, vf_t, vf_n, f)
VP_DEFINE_(double, vd_t, vd_n, d)

VP_TABLE_(vf_n, vd_n);

#else /* no vector loops here: the scalar loops do every output */

#define VP_NONE_(T, S)                                                                   \
    static bool max_##S##_v(const ops_vec_pool_row *r, T *out, int64_t *idx)             \
    {                                                                                    \
        (void)r, (void)out, (void)idx;                                                   \
        return false;                                                                    \
    }                                                                                    \
    static bool avg_##S##_v(const ops_vec_pool_row *r, T div, T *out)                    \
    {                                                                                    \
        (void)r, (void)div, (void)out;                                                   \
        return false;                                                                    \
    }                                                                                    \
    static bool max_cl_##S##_v(const ops_vec_pool_cl *r, T *m, int32_t *k)               \
    {                                                                                    \
        (void)r, (void)m, (void)k;                                                       \
        return false;                                                                    \
    }                                                                                    \
    static bool avg_cl_##S##_v(const ops_vec_pool_cl *r, T div, T *m)                   \
    {                                                                                    \
        (void)r, (void)div, (void)m;                                                     \
        return false;                                                                    \
    } \
    static void addto_##S##_v(T *y, const T *x, int64_t n) /* the scalar loop */        \
    {                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                  \
            y[i] += x[i];                                                                \
    } \
    static void div_##S##_v(T *y, const T *x, const T *d, int64_t n)                     \
    {                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                  \
            y[i] = x[i] / d[i];                                                          \
    }
VP_NONE_(float, f)
VP_NONE_(double, d)

VP_TABLE_(0, 0);

#endif

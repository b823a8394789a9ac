/* Max and average pooling over NCHW planes, float32, vectorised along the output row:
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
 * channel of an output position shares the window, one lane per channel. */
#include "kernels/cpu/vec/vec_pool.h"

#include "kernels/cpu/vec/vec_isa.h"

#if defined(__SSE2__)

#define VP_N vf_n

/* The level's few operations of its own: vp_take(v, m), the lanes where the scalar
 * loop's `v > m || isnan(v)` holds; vp_blend(t, a, b), b where t and a elsewhere;
 * vp_even(p), the elements p[0], p[2], ... p[2 VP_N - 2] (reads p[2 VP_N - 1]);
 * vp_gather(p, s), p[0], p[s], ...; vp_to_i32, the lanes truncated to int32. */
#if defined(__AVX512F__)
typedef __mmask16 vp_mask;
#define vp_take(v, m) (_mm512_cmp_ps_mask((v), (m), _CMP_GT_OQ) | _mm512_cmp_ps_mask((v), (v), _CMP_UNORD_Q))
#define vp_blend(t, a, b) _mm512_mask_blend_ps((t), (a), (b))
static inline vf_t
vp_even(const float *p)
{
    const __m512i ix = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), ix, _mm512_loadu_ps(p + 16));
}
static inline vf_t
vp_gather(const float *p, int64_t s)
{
    const __m512i ix = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                          _mm512_set1_epi32((int)s));
    return _mm512_i32gather_ps(ix, p, 4);
}
#define vp_store_i32(p, v) _mm512_storeu_si512((void *)(p), _mm512_cvttps_epi32(v))
#elif defined(__AVX2__)
typedef __m256 vp_mask;
#define vp_take(v, m) _mm256_or_ps(_mm256_cmp_ps((v), (m), _CMP_GT_OQ), _mm256_cmp_ps((v), (v), _CMP_UNORD_Q))
#define vp_blend(t, a, b) _mm256_blendv_ps((a), (b), (t))
static inline vf_t
vp_even(const float *p)
{
    const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88); /* 0 2 8 10 4 6 12 14 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
}
static inline vf_t
vp_gather(const float *p, int64_t s)
{
    const __m256i ix = _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32((int)s));
    return _mm256_i32gather_ps(p, ix, 4);
}
#define vp_store_i32(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), _mm256_cvttps_epi32(v))
#else /* SSE2 */
typedef __m128 vp_mask;
#define vp_take(v, m) _mm_or_ps(_mm_cmpgt_ps((v), (m)), _mm_cmpunord_ps((v), (v)))
#define vp_blend(t, a, b) _mm_or_ps(_mm_and_ps((t), (b)), _mm_andnot_ps((t), (a)))
static inline vf_t
vp_even(const float *p)
{
    return _mm_shuffle_ps(_mm_loadu_ps(p), _mm_loadu_ps(p + 4), 0x88);
}
static inline vf_t
vp_gather(const float *p, int64_t s)
{
    return _mm_set_ps(p[3 * s], p[2 * s], p[s], p[0]);
}
#define vp_store_i32(p, v) _mm_storeu_si128((__m128i *)(void *)(p), _mm_cvttps_epi32(v))
#endif

/* The taps at p of VP_N outputs sw apart. */
static inline vf_t
vp_tap(const float *p, int64_t sw)
{
    return sw == 1 ? vf_load(p) : sw == 2 ? vp_even(p) : vp_gather(p, sw);
}

/* VP_N outputs from ox on: the scalar loop's scan, the tap number of the winner kept
 * as a float (exact below 2^24) and turned into the flat index at the end. */
static inline void
max_vec(const ops_vec_pool_row *r, int64_t ox, float *out, int64_t *idx)
{
    const float *const base = r->x + ox * r->sw - r->pw;
    vf_t m = vp_tap(base + r->y0 * r->sy, r->sw), km = vf_set1(0.0f);
    int k = 0;
    for (int64_t y = r->y0; y < r->y1; y += r->dh) {
        const float *const row = base + y * r->sy;
        for (int64_t kx = 0; kx < r->kw; kx++, k++) {
            if (k == 0)
                continue; /* the first tap is the start (the scalar loop's !found) */
            const vf_t v = vp_tap(row + kx * r->dw, r->sw);
            const vp_mask t = vp_take(v, m);
            m = vp_blend(t, m, v);
            if (idx != NULL)
                km = vp_blend(t, km, vf_set1((float)k));
        }
    }
    vf_store(out + ox, m);
    if (idx != NULL) {
        int32_t kk[VP_N];
        vp_store_i32(kk, km);
        for (int j = 0; j < VP_N; j++) {
            const int64_t ky = kk[j] / r->kw, kx = kk[j] % r->kw;
            idx[ox + j] = (r->y0 + ky * r->dh) * r->iw + (ox + j) * r->sw - r->pw + kx * r->dw;
        }
    }
}

static bool
max_f32_v(const ops_vec_pool_row *r, float *out, int64_t *idx)
{
    if (r->ox1 - r->ox0 < VP_N || r->y0 >= r->y1 || r->kw < 1 || (r->y1 - r->y0) * r->kw >= (1 << 24))
        return false;
    int64_t ox = r->ox0;
    for (; ox + VP_N <= r->ox1; ox += VP_N)
        max_vec(r, ox, out, idx);
    if (ox < r->ox1)
        max_vec(r, r->ox1 - VP_N, out, idx);
    return true;
}

/* VP_N outputs from ox on: the sum from 0 over the taps in the scalar order. */
static inline void
avg_vec(const ops_vec_pool_row *r, vf_t div, int64_t ox, float *out)
{
    const float *const base = r->x + ox * r->sw - r->pw;
    vf_t s = vf_set1(0.0f);
    for (int64_t y = r->y0; y < r->y1; y += r->dh) {
        const float *const row = base + y * r->sy;
        for (int64_t kx = 0; kx < r->kw; kx++)
            s = vf_add(s, vp_tap(row + kx * r->dw, r->sw));
    }
    vf_store(out + ox, vf_div(s, div));
}

static bool
avg_f32_v(const ops_vec_pool_row *r, float div, float *out)
{
    if (r->ox1 - r->ox0 < VP_N)
        return false;
    const vf_t d = vf_set1(div);
    int64_t ox = r->ox0;
    for (; ox + VP_N <= r->ox1; ox += VP_N)
        avg_vec(r, d, ox, out);
    if (ox < r->ox1)
        avg_vec(r, d, r->ox1 - VP_N, out);
    return true;
}

/* Channels c .. c + VP_N - 1 of one output position: the same scan per lane. */
static inline void
max_cl_vec(const ops_vec_pool_cl *r, int64_t c, float *mo, int32_t *ko)
{
    const float *const base = r->x + c;
    vf_t m = vf_load(base + r->y0 * r->sy + r->x0 * r->sx), km = vf_set1(0.0f);
    int k = 0;
    for (int64_t y = r->y0; y < r->y1; y += r->dh)
        for (int64_t xx = r->x0; xx < r->x1; xx += r->dw, k++) {
            if (k == 0)
                continue;
            const vf_t v = vf_load(base + y * r->sy + xx * r->sx);
            const vp_mask t = vp_take(v, m);
            m = vp_blend(t, m, v);
            if (ko != NULL)
                km = vp_blend(t, km, vf_set1((float)k));
        }
    vf_store(mo + c, m);
    if (ko != NULL)
        vp_store_i32(ko + c, km);
}

static bool
max_cl_f32_v(const ops_vec_pool_cl *r, float *m, int32_t *k)
{
    const int64_t taps = ((r->y1 - r->y0 + r->dh - 1) / r->dh) * ((r->x1 - r->x0 + r->dw - 1) / r->dw);
    if (r->nc < VP_N || r->y0 >= r->y1 || r->x0 >= r->x1 || taps >= (1 << 24))
        return false;
    int64_t c = 0;
    for (; c + VP_N <= r->nc; c += VP_N)
        max_cl_vec(r, c, m, k);
    if (c < r->nc)
        max_cl_vec(r, r->nc - VP_N, m, k);
    return true;
}

static inline void
avg_cl_vec(const ops_vec_pool_cl *r, vf_t div, int64_t c, float *mo)
{
    const float *const base = r->x + c;
    vf_t s = vf_set1(0.0f);
    for (int64_t y = r->y0; y < r->y1; y += r->dh)
        for (int64_t xx = r->x0; xx < r->x1; xx += r->dw)
            s = vf_add(s, vf_load(base + y * r->sy + xx * r->sx));
    vf_store(mo + c, vf_div(s, div));
}

static bool
avg_cl_f32_v(const ops_vec_pool_cl *r, float div, float *m)
{
    if (r->nc < VP_N || r->y0 >= r->y1 || r->x0 >= r->x1)
        return false;
    const vf_t d = vf_set1(div);
    int64_t c = 0;
    for (; c + VP_N <= r->nc; c += VP_N)
        avg_cl_vec(r, d, c, m);
    if (c < r->nc)
        avg_cl_vec(r, d, r->nc - VP_N, m);
    return true;
}

const ops_vec_pool_table OPS_VEC_NAME(ops_vec_pool_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .width = VP_N,
    .max_f32 = max_f32_v,
    .avg_f32 = avg_f32_v,
    .max_cl_f32 = max_cl_f32_v,
    .avg_cl_f32 = avg_cl_f32_v,
};

#else /* no vector loops here: the scalar loops do every output */

static bool
max_f32_none(const ops_vec_pool_row *r, float *out, int64_t *idx)
{
    (void)r, (void)out, (void)idx;
    return false;
}

static bool
avg_f32_none(const ops_vec_pool_row *r, float div, float *out)
{
    (void)r, (void)div, (void)out;
    return false;
}

static bool
max_cl_f32_none(const ops_vec_pool_cl *r, float *m, int32_t *k)
{
    (void)r, (void)m, (void)k;
    return false;
}

static bool
avg_cl_f32_none(const ops_vec_pool_cl *r, float div, float *m)
{
    (void)r, (void)div, (void)m;
    return false;
}

const ops_vec_pool_table OPS_VEC_NAME(ops_vec_pool_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .width = 0,
    .max_f32 = max_f32_none,
    .avg_f32 = avg_f32_none,
    .max_cl_f32 = max_cl_f32_none,
    .avg_cl_f32 = avg_cl_f32_none,
};

#endif

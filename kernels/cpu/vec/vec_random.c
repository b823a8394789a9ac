/* Philox4x32-10 and the float32 uniform and normal samplers, vectorised, compiled once
 * per instruction-set level (kernels/cpu/vec/meson.build; docs/cpu-dispatch.md
 * "Random numbers").  The streams are those of include/libops/ops_philox.h, bit for
 * bit, at every level:
 *
 * - Philox runs on a vector of consecutive blocks, one block per 32-bit lane; the
 *   32x32->64 products are two even/odd lane multiplies (pmuludq), exact integers.
 * - The uniform is the same float products and sums (no FMA: the build is ISO C,
 *   so nothing is contracted, and the intrinsics here are plain multiplies and adds).
 * - The normal (Box-Muller, in double as the scalar code) is the same arithmetic
 *   except the logarithm: the scalar definition calls glibc's log1p(-u1), the loop
 *   SLEEF's 3.5-ulp vector log of 1 - u1 (exact for a 24-bit u1: the same
 *   mathematical value), which may differ in the last bits of the double.  glibc's is
 *   within 1 ulp, SLEEF's within 3.5, so glibc's r = sqrt(-2 log1p(-u1)) lies within
 *   about 2^-50 (relative) of the vector's r.  Each result is computed twice, from r (1 - 2^-44) and r (1 + 2^-44),
 *   bracketing glibc's r with a wide margin; every later step (r cos, mean + std z,
 *   the rounding to float) is monotonic in r, so where both round to the same float
 *   that float is the scalar definition's.  Where they do not (about one element in
 *   2^19) the group of blocks is recomputed by the scalar code.
 *
 * Off x86-64 the loops are the scalar definition itself. */
#include <math.h>

#include "kernels/cpu/vec/vec_random.h"

#include "kernels/cpu/vec/vec_isa.h"

/* ---- the scalar definition (tails, the rare bracket misses, other architectures) ---- */

static void
words_scalar(const ops_philox_stream *s, uint64_t b0, int64_t nb, uint32_t *w)
{
    for (int64_t b = 0; b < nb; b++)
        ops_philox_block(s, b0 + (uint64_t)b, w + 4 * b);
}

static void
f32_scalar(const ops_rand_dist *d, const ops_philox_stream *s, uint64_t b0, int64_t nb, float *o)
{
    for (int64_t b = 0; b < nb; b++) {
        double f[4] = {0, 0, 0, 0}; /* set by every float kind (-O3 cannot see it) */
        int64_t iv[4];
        ops_rand_block(d, s, b0 + (uint64_t)b, f, iv);
        for (int j = 0; j < 4; j++)
            o[4 * b + j] = (float)f[j];
    }
}

#if defined(__SSE2__)

/* ---- the level's integer and conversion operations (only this family uses them) ---- */
/* vu_t: 32-bit lanes, one block each (VR_N = vf_n of them); vh_t: the 32-bit integers
 * of one vd_t (half of them); vfh_t: the floats of one vd_t; vdm_t: a vd_t lane mask. */
#if defined(__AVX512F__)
typedef __m512i vu_t;
typedef __m256i vh_t;
typedef __m256 vfh_t;
typedef __mmask8 vdm_t;
#define vu_load(p) _mm512_loadu_si512((const void *)(p))
#define vu_set1(x) _mm512_set1_epi32((int)(x))
#define vu_xor _mm512_xor_si512
#define vu_srli _mm512_srli_epi32
#define vu_as_f _mm512_castsi512_ps
#define vu_to_f _mm512_cvtepi32_ps
#define vu_lo(a) _mm512_castsi512_si256(a)
#define vu_hi(a) _mm512_extracti64x4_epi64((a), 1)
#define vh_and(a, b) _mm256_and_si256((a), (b))
#define vh_set1(x) _mm256_set1_epi32(x)
#define vd_from_h _mm512_cvtepi32_pd
#define vd_trunc_h _mm512_cvttpd_epi32
#define vd_sqrt _mm512_sqrt_pd
#define vd_xor _mm512_xor_pd
#define vd_eq(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_EQ_OQ)
#define vd_sel(m, a, b) _mm512_mask_blend_pd((m), (b), (a)) /* a where m */
#define vd_to_fh _mm512_cvtpd_ps
#define vfh_join(lo, hi) _mm512_insertf32x8(_mm512_castps256_ps512(lo), (hi), 1)
#define vfh_differ(a, b) (_mm256_movemask_ps(_mm256_cmp_ps((a), (b), _CMP_NEQ_UQ)) != 0)

static inline void
vu_mulhilo(vu_t a, vu_t m, vu_t *hi, vu_t *lo)
{
    const __m512i pe = _mm512_mul_epu32(a, m);                        /* lanes 0, 2, ... */
    const __m512i po = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m); /* lanes 1, 3, ... */
    *lo = _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
    *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
}

/* r0..r3 hold word (or element) j of blocks 0..15: store them block by block. */
static inline void
vf_store4(float *o, vf_t r0, vf_t r1, vf_t r2, vf_t r3)
{
    const __m512 t0 = _mm512_unpacklo_ps(r0, r1), t1 = _mm512_unpackhi_ps(r0, r1);
    const __m512 t2 = _mm512_unpacklo_ps(r2, r3), t3 = _mm512_unpackhi_ps(r2, r3);
    /* u_q: blocks q, q + 4, q + 8, q + 12, four words each */
    const __m512 u0 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    const __m512 u1 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    const __m512 u2 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    const __m512 u3 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    const __m512 v0 = _mm512_shuffle_f32x4(u0, u1, 0x44); /* blocks 0 4 1 5 */
    const __m512 v1 = _mm512_shuffle_f32x4(u2, u3, 0x44); /* 2 6 3 7 */
    const __m512 v2 = _mm512_shuffle_f32x4(u0, u1, 0xEE); /* 8 12 9 13 */
    const __m512 v3 = _mm512_shuffle_f32x4(u2, u3, 0xEE); /* 10 14 11 15 */
    _mm512_storeu_ps(o, _mm512_shuffle_f32x4(v0, v1, 0x88));
    _mm512_storeu_ps(o + 16, _mm512_shuffle_f32x4(v0, v1, 0xDD));
    _mm512_storeu_ps(o + 32, _mm512_shuffle_f32x4(v2, v3, 0x88));
    _mm512_storeu_ps(o + 48, _mm512_shuffle_f32x4(v2, v3, 0xDD));
}
#elif defined(__AVX2__)
typedef __m256i vu_t;
typedef __m128i vh_t;
typedef __m128 vfh_t;
typedef __m256d vdm_t;
#define vu_load(p) _mm256_loadu_si256((const __m256i *)(p))
#define vu_set1(x) _mm256_set1_epi32((int)(x))
#define vu_xor _mm256_xor_si256
#define vu_srli _mm256_srli_epi32
#define vu_as_f _mm256_castsi256_ps
#define vu_to_f _mm256_cvtepi32_ps
#define vu_lo(a) _mm256_castsi256_si128(a)
#define vu_hi(a) _mm256_extracti128_si256((a), 1)
#define vh_and(a, b) _mm_and_si128((a), (b))
#define vh_set1(x) _mm_set1_epi32(x)
#define vd_from_h _mm256_cvtepi32_pd
#define vd_trunc_h _mm256_cvttpd_epi32
#define vd_sqrt _mm256_sqrt_pd
#define vd_xor _mm256_xor_pd
#define vd_eq(a, b) _mm256_cmp_pd((a), (b), _CMP_EQ_OQ)
#define vd_sel(m, a, b) _mm256_blendv_pd((b), (a), (m))
#define vd_to_fh _mm256_cvtpd_ps
#define vfh_join(lo, hi) _mm256_insertf128_ps(_mm256_castps128_ps256(lo), (hi), 1)
#define vfh_differ(a, b) (_mm_movemask_ps(_mm_cmp_ps((a), (b), _CMP_NEQ_UQ)) != 0)

static inline void
vu_mulhilo(vu_t a, vu_t m, vu_t *hi, vu_t *lo)
{
    const __m256i pe = _mm256_mul_epu32(a, m);
    const __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
}

static inline void
vf_store4(float *o, vf_t r0, vf_t r1, vf_t r2, vf_t r3)
{
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    /* u_q: blocks q and q + 4 */
    const __m256 u0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    const __m256 u1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    const __m256 u2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    const __m256 u3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    _mm256_storeu_ps(o, _mm256_permute2f128_ps(u0, u1, 0x20));
    _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
    _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
    _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}
#else /* SSE2 */
typedef __m128i vu_t;
typedef __m128i vh_t; /* the low two lanes */
typedef __m128 vfh_t; /* the low two lanes */
typedef __m128d vdm_t;
#define vu_load(p) _mm_loadu_si128((const __m128i *)(p))
#define vu_set1(x) _mm_set1_epi32((int)(x))
#define vu_xor _mm_xor_si128
#define vu_srli _mm_srli_epi32
#define vu_as_f _mm_castsi128_ps
#define vu_to_f _mm_cvtepi32_ps
#define vu_lo(a) (a)
#define vu_hi(a) _mm_shuffle_epi32((a), 0xEE)
#define vh_and(a, b) _mm_and_si128((a), (b))
#define vh_set1(x) _mm_set1_epi32(x)
#define vd_from_h _mm_cvtepi32_pd
#define vd_trunc_h _mm_cvttpd_epi32
#define vd_sqrt _mm_sqrt_pd
#define vd_xor _mm_xor_pd
#define vd_eq(a, b) _mm_cmpeq_pd((a), (b))
#define vd_sel(m, a, b) _mm_or_pd(_mm_and_pd((m), (a)), _mm_andnot_pd((m), (b)))
#define vd_to_fh _mm_cvtpd_ps
#define vfh_join(lo, hi) _mm_movelh_ps((lo), (hi))
#define vfh_differ(a, b) ((_mm_movemask_ps(_mm_cmpneq_ps((a), (b))) & 3) != 0)

static inline void
vu_mulhilo(vu_t a, vu_t m, vu_t *hi, vu_t *lo)
{
    /* pe = p0 p2, po = p1 p3 (64 bits each); their halves sorted into lo and hi */
    const __m128i pe = _mm_shuffle_epi32(_mm_mul_epu32(a, m), 0xD8);                        /* l0 l2 h0 h2 */
    const __m128i po = _mm_shuffle_epi32(_mm_mul_epu32(_mm_srli_epi64(a, 32), m), 0xD8); /* l1 l3 h1 h3 */
    *lo = _mm_unpacklo_epi32(pe, po);
    *hi = _mm_unpackhi_epi32(pe, po);
}

static inline void
vf_store4(float *o, vf_t r0, vf_t r1, vf_t r2, vf_t r3)
{
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(o, r0);
    _mm_storeu_ps(o + 4, r1);
    _mm_storeu_ps(o + 8, r2);
    _mm_storeu_ps(o + 12, r3);
}
#endif

#define VR_N vf_n /* blocks per vector */

/* SLEEF's 3.5-ulp log of the level's width (within the bracket's margin, below) */
#if defined(__AVX512F__)
#define VR_LOG_ Sleef_logd8_u35avx512f
#elif defined(__AVX2__)
#define VR_LOG_ Sleef_logd4_u35avx2
#else
#define VR_LOG_ Sleef_logd2_u35sse2
#endif

/* The four words of blocks b .. b + VR_N - 1 of s, word j of each in w[j]: the ten
 * rounds of ops_philox4x32_10 on every lane. */
static inline void
philox_v(const ops_philox_stream *s, uint64_t b, vu_t w[4])
{
    uint32_t lo[VR_N], hi[VR_N];
    for (int i = 0; i < VR_N; i++) {
        const uint64_t idx = s->base + b + (uint64_t)i;
        lo[i] = (uint32_t)idx;
        hi[i] = (uint32_t)(idx >> 32);
    }
    vu_t c0 = vu_load(lo), c1 = vu_load(hi), c2 = vu_set1(0), c3 = vu_set1(0);
    const vu_t m0 = vu_set1(0xD2511F53u), m1 = vu_set1(0xCD9E8D57u);
    uint32_t k0 = s->key[0], k1 = s->key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        vu_t hi0, lo0, hi1, lo1;
        vu_mulhilo(c0, m0, &hi0, &lo0);
        vu_mulhilo(c2, m1, &hi1, &lo1);
        c0 = vu_xor(vu_xor(hi1, c1), vu_set1(k0));
        c2 = vu_xor(vu_xor(hi0, c3), vu_set1(k1));
        c1 = lo1;
        c3 = lo0;
    }
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

static void
words_v(const ops_philox_stream *s, uint64_t b0, int64_t nb, uint32_t *w)
{
    int64_t b = 0;
    for (; b + VR_N <= nb; b += VR_N) {
        vu_t c[4];
        philox_v(s, b0 + (uint64_t)b, c);
        /* moved as floats: shuffles and stores keep the bits */
        vf_store4((float *)(void *)(w + 4 * b), vu_as_f(c[0]), vu_as_f(c[1]), vu_as_f(c[2]), vu_as_f(c[3]));
    }
    words_scalar(s, b0 + (uint64_t)b, nb - b, w + 4 * b);
}

/* ops_rand_uniform32 with 24 digits: (w >> 8) 2^-24 (exact), times to - from, plus from. */
static void
uniform_f32_v(const ops_rand_dist *d, const ops_philox_stream *s, uint64_t b0, int64_t nb, float *o)
{
    const vf_t scale = vf_set1(d->scale32), range = vf_set1(d->range32), from = vf_set1(d->from32);
    int64_t b = 0;
    for (; b + VR_N <= nb; b += VR_N) {
        vu_t c[4];
        vf_t e[4];
        philox_v(s, b0 + (uint64_t)b, c);
        for (int j = 0; j < 4; j++)
            e[j] = vf_add(vf_mul(vf_mul(vu_to_f(vu_srli(c[j], 8)), scale), range), from);
        vf_store4(o + 4 * b, e[0], e[1], e[2], e[3]);
    }
    f32_scalar(d, s, b0 + (uint64_t)b, nb - b, o + 4 * b);
}

/* cos(2 pi u) and sin(2 pi u) as ops_sincos_2pi: the same operations in the same order
 * (v = 4u, the quarter turn k = floor(v + 1/2), which v >= 0 makes a truncation; the
 * two Taylor polynomials in t = (v - k) pi / 2; the quadrant's signs and swap). */
static inline void
vd_sincos_2pi(vd_t u, vd_t *sn, vd_t *cs)
{
    const vd_t v = vd_mul(vd_set1(4.0), u);
    const vh_t k = vd_trunc_h(vd_add(v, vd_set1(0.5)));
    const vd_t t = vd_mul(vd_sub(v, vd_from_h(k)), vd_set1(1.5707963267948966192313216916398));
    const vd_t t2 = vd_mul(t, t);
    vd_t ps = vd_set1(1.0 / 355687428096000.0);
    ps = vd_add(vd_set1(-1.0 / 1307674368000.0), vd_mul(t2, ps));
    ps = vd_add(vd_set1(1.0 / 6227020800.0), vd_mul(t2, ps));
    ps = vd_add(vd_set1(-1.0 / 39916800), vd_mul(t2, ps));
    ps = vd_add(vd_set1(1.0 / 362880), vd_mul(t2, ps));
    ps = vd_add(vd_set1(-1.0 / 5040), vd_mul(t2, ps));
    ps = vd_add(vd_set1(1.0 / 120), vd_mul(t2, ps));
    ps = vd_add(vd_set1(-1.0 / 6), vd_mul(t2, ps));
    ps = vd_add(vd_set1(1.0), vd_mul(t2, ps));
    const vd_t s = vd_mul(t, ps);
    vd_t pc = vd_set1(1.0 / 20922789888000.0);
    pc = vd_add(vd_set1(-1.0 / 87178291200.0), vd_mul(t2, pc));
    pc = vd_add(vd_set1(1.0 / 479001600.0), vd_mul(t2, pc));
    pc = vd_add(vd_set1(-1.0 / 3628800), vd_mul(t2, pc));
    pc = vd_add(vd_set1(1.0 / 40320), vd_mul(t2, pc));
    pc = vd_add(vd_set1(-1.0 / 720), vd_mul(t2, pc));
    pc = vd_add(vd_set1(1.0 / 24), vd_mul(t2, pc));
    pc = vd_add(vd_set1(-1.0 / 2), vd_mul(t2, pc));
    const vd_t c = vd_add(vd_set1(1.0), vd_mul(t2, pc));
    const vd_t q = vd_from_h(vh_and(k, vh_set1(3)));
    const vdm_t q1 = vd_eq(q, vd_set1(1.0)), q2 = vd_eq(q, vd_set1(2.0)), q3 = vd_eq(q, vd_set1(3.0));
    const vd_t neg = vd_set1(-0.0);
    const vd_t ns = vd_xor(s, neg), nc = vd_xor(c, neg);
    *cs = vd_sel(q1, ns, vd_sel(q2, nc, vd_sel(q3, s, c)));
    *sn = vd_sel(q1, c, vd_sel(q2, ns, vd_sel(q3, nc, s)));
}

/* Box-Muller of one vd_t of pairs (words a, b) as ops_box_muller, mean + std z rounded
 * to float for both elements; *miss when a result is not certain to be the scalar
 * definition's (see the top of the file). */
static inline void
vd_normal_pairs(vh_t a, vh_t b, vd_t mean, vd_t std, vfh_t *z0, vfh_t *z1, int *miss)
{
    const vd_t two24 = vd_set1(1.0 / 16777216.0);
    const vd_t u1 = vd_mul(vd_from_h(a), two24), u2 = vd_mul(vd_from_h(b), two24);
    /* log1p(-u1) = log(1 - u1) exactly: 1 - u1 is exact (u1 a multiple of 2^-24) */
    const vd_t l = VR_LOG_(vd_sub(vd_set1(1.0), u1));
    /* 2 (0 - l): -2 l exactly, and +0 at u1 = 0 as the scalar -2 log1p(-0) (SLEEF's
     * log(1) may be +0, and -2 (+0) would be -0) */
    const vd_t r = vd_sqrt(vd_mul(vd_set1(2.0), vd_sub(vd_set1(0.0), l)));
    const vd_t rlo = vd_mul(r, vd_set1(1.0 - 0x1p-44)), rhi = vd_mul(r, vd_set1(1.0 + 0x1p-44));
    vd_t sn, cs;
    vd_sincos_2pi(u2, &sn, &cs);
    const vfh_t c_lo = vd_to_fh(vd_add(mean, vd_mul(std, vd_mul(rlo, cs))));
    const vfh_t c_hi = vd_to_fh(vd_add(mean, vd_mul(std, vd_mul(rhi, cs))));
    const vfh_t s_lo = vd_to_fh(vd_add(mean, vd_mul(std, vd_mul(rlo, sn))));
    const vfh_t s_hi = vd_to_fh(vd_add(mean, vd_mul(std, vd_mul(rhi, sn))));
    *miss |= vfh_differ(c_lo, c_hi) | vfh_differ(s_lo, s_hi);
    *z0 = c_lo;
    *z1 = s_lo;
}

/* Elements 4m, 4m + 1 of block m from its words 0 and 1, 4m + 2, 4m + 3 from words 2
 * and 3 (ops_rand_dist_make's normal with k = 1). */
static void
normal_f32_v(const ops_rand_dist *d, const ops_philox_stream *s, uint64_t b0, int64_t nb, float *o)
{
    const vd_t mean = vd_set1(d->a), std = vd_set1(d->b);
    int64_t b = 0;
    for (; b + VR_N <= nb; b += VR_N) {
        vu_t c[4];
        vf_t e[4];
        philox_v(s, b0 + (uint64_t)b, c);
        int miss = 0;
        for (int j = 0; j < 4; j += 2) {
            const vu_t a = vu_srli(c[j], 8), bb = vu_srli(c[j + 1], 8);
            vfh_t z0l, z1l, z0h, z1h;
            vd_normal_pairs(vu_lo(a), vu_lo(bb), mean, std, &z0l, &z1l, &miss);
            vd_normal_pairs(vu_hi(a), vu_hi(bb), mean, std, &z0h, &z1h, &miss);
            e[j] = vfh_join(z0l, z0h);
            e[j + 1] = vfh_join(z1l, z1h);
        }
        if (miss)
            f32_scalar(d, s, b0 + (uint64_t)b, VR_N, o + 4 * b);
        else
            vf_store4(o + 4 * b, e[0], e[1], e[2], e[3]);
    }
    f32_scalar(d, s, b0 + (uint64_t)b, nb - b, o + 4 * b);
}

const ops_vec_random_table OPS_VEC_NAME(ops_vec_random_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .words = words_v,
    .uniform_f32 = uniform_f32_v,
    .normal_f32 = normal_f32_v,
};

#else /* no vector loops here: the scalar definition */

const ops_vec_random_table OPS_VEC_NAME(ops_vec_random_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .words = words_scalar,
    .uniform_f32 = f32_scalar,
    .normal_f32 = f32_scalar,
};

#endif

/* float16/bfloat16 <-> float32 conversion loops, compiled once per instruction-set level
 * (kernels/cpu/vec/meson.build; the table and its contract: vec_convert.h).
 *
 * float16 with F16C (vcvtph2ps; vcvtps2ph with round-to-nearest-even), its AVX-512
 * forms at avx512; AVX2 does not imply F16C, so the avx2 loops check it at run time
 * (__builtin_cpu_supports) and take the scalar loop without it.  bfloat16 by shifts at
 * every x86 level: widen x << 16 (exact); narrow (u + 0x7fff + lsb) >> 16, round to
 * nearest even (a carry into the exponent makes inf, as it should), NaN as u >> 16 | 0x40
 * (quiet, payload kept), the scalar conversion's formula lane by lane.  vcvtps2ph keeps
 * a NaN's payload where the scalar conversion stores 0x7e00 with the sign: NaN lanes are
 * made sign | 0x7fc00000 first, which it narrows to exactly that.  Tails (n % width)
 * element by element with the scalar conversions: the same bits wherever a run starts. */
#include "kernels/cpu/vec/vec_convert.h"

#include "kernels/cpu/vec/vec_isa.h"

#include "include/libops/ops_scalar_math.h"

/* ---- scalar loops (every level: the tails, and the levels without vector forms) ---- */

static inline float
sc_f16_to_f32_(uint16_t b)
{
    ops_half h;
    h.bits = b;
    return ops_half_to_float(h);
}

static inline float
sc_bf16_to_f32_(uint16_t b)
{
    ops_bfloat16 h;
    h.bits = b;
    return ops_bfloat16_to_float(h);
}

#define SC_LOOPS_(NAME, WIDEN, NARROW)                                                     \
    static inline void NAME##_to_f32_scalar(float *y, const uint16_t *x, int64_t n, int64_t i)    \
    {                                                                                      \
        for (; i < n; i++)                                                                 \
            y[i] = WIDEN(x[i]);                                                            \
    }                                                                                      \
    static inline void NAME##_from_f32_scalar(uint16_t *y, const float *x, int64_t n, int64_t i)  \
    {                                                                                      \
        for (; i < n; i++)                                                                 \
            y[i] = NARROW(x[i]).bits;                                                      \
    }                                                                                      \
    static inline void NAME##_to_f32_sc(float *y, const uint16_t *x, int64_t n)                   \
    {                                                                                      \
        NAME##_to_f32_scalar(y, x, n, 0);                                                  \
    }                                                                                      \
    static inline void NAME##_from_f32_sc(uint16_t *y, const float *x, int64_t n)                 \
    {                                                                                      \
        NAME##_from_f32_scalar(y, x, n, 0);                                                \
    }

SC_LOOPS_(f16, sc_f16_to_f32_, ops_float_to_half)
SC_LOOPS_(bf16, sc_bf16_to_f32_, ops_float_to_bfloat16)

/* ---- the level's vector forms ----------------------------------------------------- */

#if defined(__x86_64__) && defined(__AVX512F__)

#define W_ 16
static void
f16_to_f32_v(float *y, const uint16_t *x, int64_t n)
{
    int64_t i = 0;
    for (; i + W_ <= n; i += W_)
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
    f16_to_f32_scalar(y, x, n, i);
}
static void
f16_from_f32_v(uint16_t *y, const float *x, int64_t n)
{
    const __m512i sgn = _mm512_set1_epi32((int)0x80000000u), qn = _mm512_set1_epi32(0x7fc00000);
    int64_t i = 0;
    for (; i + W_ <= n; i += W_) {
        __m512 v = _mm512_loadu_ps(x + i);
        const __mmask16 k = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        v = _mm512_mask_blend_ps(k, v, _mm512_castsi512_ps(_mm512_or_si512(
                                           _mm512_and_si512(_mm512_castps_si512(v), sgn), qn)));
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    f16_from_f32_scalar(y, x, n, i);
}
static void
bf16_to_f32_v(float *y, const uint16_t *x, int64_t n)
{
    int64_t i = 0;
    for (; i + W_ <= n; i += W_) {
        const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + i)));
        _mm512_storeu_si512((void *)(y + i), _mm512_slli_epi32(w, 16));
    }
    bf16_to_f32_scalar(y, x, n, i);
}
static void
bf16_from_f32_v(uint16_t *y, const float *x, int64_t n)
{
    const __m512i one = _mm512_set1_epi32(1), r7 = _mm512_set1_epi32(0x7fff), q = _mm512_set1_epi32(0x400000);
    int64_t i = 0;
    for (; i + W_ <= n; i += W_) {
        const __m512 v = _mm512_loadu_ps(x + i);
        const __m512i u = _mm512_castps_si512(v);
        const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
        __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, r7), lsb);
        r = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r, _mm512_or_si512(u, q));
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16)));
    }
    bf16_from_f32_scalar(y, x, n, i);
}
#define F16_TO_ f16_to_f32_v
#define F16_FROM_ f16_from_f32_v
#define BF16_TO_ bf16_to_f32_v
#define BF16_FROM_ bf16_from_f32_v

#elif defined(__x86_64__) && defined(__AVX2__)

#define W_ 8
__attribute__((target("f16c"))) static void
f16_to_f32_f16c(float *y, const uint16_t *x, int64_t n)
{
    int64_t i = 0;
    for (; i + W_ <= n; i += W_)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
    f16_to_f32_scalar(y, x, n, i);
}
__attribute__((target("f16c"))) static void
f16_from_f32_f16c(uint16_t *y, const float *x, int64_t n)
{
    const __m256 sgn = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    const __m256 qn = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    int64_t i = 0;
    for (; i + W_ <= n; i += W_) {
        __m256 v = _mm256_loadu_ps(x + i);
        v = _mm256_blendv_ps(v, _mm256_or_ps(_mm256_and_ps(v, sgn), qn), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    f16_from_f32_scalar(y, x, n, i);
}
/* F16C is its own CPUID bit: checked per call (a load and a test after the first) */
static void
f16_to_f32_v(float *y, const uint16_t *x, int64_t n)
{
    if (__builtin_cpu_supports("f16c"))
        f16_to_f32_f16c(y, x, n);
    else
        f16_to_f32_sc(y, x, n);
}
static void
f16_from_f32_v(uint16_t *y, const float *x, int64_t n)
{
    if (__builtin_cpu_supports("f16c"))
        f16_from_f32_f16c(y, x, n);
    else
        f16_from_f32_sc(y, x, n);
}
static void
bf16_to_f32_v(float *y, const uint16_t *x, int64_t n)
{
    int64_t i = 0;
    for (; i + W_ <= n; i += W_) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_slli_epi32(w, 16));
    }
    bf16_to_f32_scalar(y, x, n, i);
}
static void
bf16_from_f32_v(uint16_t *y, const float *x, int64_t n)
{
    const __m256i one = _mm256_set1_epi32(1), r7 = _mm256_set1_epi32(0x7fff), q = _mm256_set1_epi32(0x400000);
    int64_t i = 0;
    for (; i + W_ <= n; i += W_) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256i u = _mm256_castps_si256(v);
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
        __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, r7), lsb);
        r = _mm256_blendv_epi8(r, _mm256_or_si256(u, q), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
        r = _mm256_srli_epi32(r, 16); /* each lane <= 0xffff: the unsigned pack keeps it */
        _mm_storeu_si128((__m128i *)(y + i),
                         _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
    }
    bf16_from_f32_scalar(y, x, n, i);
}
#define F16_TO_ f16_to_f32_v
#define F16_FROM_ f16_from_f32_v
#define BF16_TO_ bf16_to_f32_v
#define BF16_FROM_ bf16_from_f32_v

#elif defined(__x86_64__) /* SSE2: no F16C; bfloat16 by shifts */

#define W_ 4
static void
bf16_to_f32_v(float *y, const uint16_t *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 2 * W_ <= n; i += 2 * W_) {
        const __m128i w = _mm_loadu_si128((const __m128i *)(x + i));
        const __m128i z = _mm_setzero_si128();
        /* interleaving zeros below each element: x << 16 in each 32-bit lane */
        _mm_storeu_si128((__m128i *)(y + i), _mm_unpacklo_epi16(z, w));
        _mm_storeu_si128((__m128i *)(y + i + W_), _mm_unpackhi_epi16(z, w));
    }
    bf16_to_f32_scalar(y, x, n, i);
}
static inline __m128i
bf16_round_sse2_(__m128 v)
{
    const __m128i u = _mm_castps_si128(v);
    const __m128i lsb = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
    const __m128i r = _mm_add_epi32(_mm_add_epi32(u, _mm_set1_epi32(0x7fff)), lsb);
    const __m128i m = _mm_castps_si128(_mm_cmpunord_ps(v, v));
    const __m128i s = _mm_or_si128(_mm_and_si128(m, _mm_or_si128(u, _mm_set1_epi32(0x400000))), _mm_andnot_si128(m, r));
    /* the high half sign-extended, so that the signed pack keeps its bits */
    return _mm_srai_epi32(s, 16);
}
static void
bf16_from_f32_v(uint16_t *y, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 2 * W_ <= n; i += 2 * W_) {
        const __m128i lo = bf16_round_sse2_(_mm_loadu_ps(x + i));
        const __m128i hi = bf16_round_sse2_(_mm_loadu_ps(x + i + W_));
        _mm_storeu_si128((__m128i *)(y + i), _mm_packs_epi32(lo, hi));
    }
    bf16_from_f32_scalar(y, x, n, i);
}
#define F16_TO_ f16_to_f32_sc
#define F16_FROM_ f16_from_f32_sc
#define BF16_TO_ bf16_to_f32_v
#define BF16_FROM_ bf16_from_f32_v

#else /* elsewhere: the scalar loops */

#define F16_TO_ f16_to_f32_sc
#define F16_FROM_ f16_from_f32_sc
#define BF16_TO_ bf16_to_f32_sc
#define BF16_FROM_ bf16_from_f32_sc

#endif

const ops_vec_convert_table OPS_VEC_NAME(ops_vec_convert_table) = {
    .to_f32 = {[OPS_VEC_CVT_F16] = F16_TO_, [OPS_VEC_CVT_BF16] = BF16_TO_},
    .from_f32 = {[OPS_VEC_CVT_F16] = F16_FROM_, [OPS_VEC_CVT_BF16] = BF16_FROM_},
};

/* Vector loops of add, sub, mul and div (and add/sub with alpha), maximum, minimum, fmax and fmin over float32, float64,
 * float16 and bfloat16, compiled once per instruction-set level (kernels/cpu/vec/
 * meson.build; the table and its contract: vec_binary.h).
 *
 * Each loop has the run's three layouts (both inputs contiguous, x or y one broadcast
 * element loaded once) as separate vector loops, so a scalar or row broadcast runs at
 * the same width as the contiguous case.  The elementwise operations are exact IEEE
 * operations, so the vector lanes and the scalar tail compute the same bits and a
 * result does not depend on where a run starts.
 *
 * float16/bfloat16 go through float in blocks of the level's width: float16 with F16C
 * (vcvtph2ps / vcvtps2ph with round-to-nearest-even, the AVX-512 forms at avx512),
 * bfloat16 by shifts (widen: << 16; narrow: + 0x7fff + lsb, >> 16, round to nearest
 * even).  NaN results are stored as the scalar conversion stores them (quiet, payload
 * dropped), so every result equals the scalar loop's compute-in-float-round-once.  The
 * default (SSE2) level has no F16C: its float16/bfloat16 entries are NULL and the
 * kernels keep their own loop. */
#include "kernels/cpu/vec/vec_binary.h"

#include "kernels/cpu/vec/vec_isa.h"

#include "include/libops/ops_scalar_math.h"

#if defined(__x86_64__) && (defined(__AVX512F__) || defined(__AVX2__))
#define HAVE_HALF_ 1
#else
#define HAVE_HALF_ 0
#endif

/* ---- float16 / bfloat16 blocks ------------------------------------------------------ */

#if HAVE_HALF_
#if defined(__AVX512F__)
#define HALF_ATTR_ /* F16C's AVX-512 forms are AVX512F */
static inline vf_t
canon_nan_(vf_t v) /* NaN -> sign | 0x7fc00000, which vcvtps2ph narrows to 0x7e00 */
{
    const __mmask16 k = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i s = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u));
    return _mm512_mask_blend_ps(k, v, _mm512_castsi512_ps(_mm512_or_si512(s, _mm512_set1_epi32(0x7fc00000))));
}
static inline vf_t
ld_f16_(const ops_half *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline void
st_f16_(ops_half *p, vf_t v)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(canon_nan_(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
static inline vf_t
ld_bf16_(const ops_bfloat16 *p)
{
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline void
st_bf16_(ops_bfloat16 *p, vf_t v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
    r = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r,
                                _mm512_or_si512(u, _mm512_set1_epi32(0x400000)));
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16)));
}
#else /* AVX2: F16C is its own CPUID bit; every AVX2 CPU has it, checked anyway */
#define HALF_ATTR_ __attribute__((target("f16c")))
HALF_ATTR_ static inline vf_t
canon_nan_(vf_t v)
{
    const __m256 m = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m256 q = _mm256_or_ps(_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))),
                                  _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
    return _mm256_blendv_ps(v, q, m);
}
HALF_ATTR_ static inline vf_t
ld_f16_(const ops_half *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
HALF_ATTR_ static inline void
st_f16_(ops_half *p, vf_t v)
{
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(canon_nan_(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
static inline vf_t
ld_bf16_(const ops_bfloat16 *p)
{
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline void
st_bf16_(ops_bfloat16 *p, vf_t v)
{
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x400000)),
                           _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    r = _mm256_srli_epi32(r, 16); /* each lane <= 0xffff: the unsigned pack keeps it */
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
}
#endif
#endif /* HAVE_HALF_ */

/* ---- the loops --------------------------------------------------------------------- */

#define SLD_F32_(p) (*(p))
#define SST_F32_(p, v) (*(p) = (v))
#define SLD_F16_(p) ops_half_to_float(*(p))
#define SST_F16_(p, v) (*(p) = ops_float_to_half(v))
#define SLD_BF16_(p) ops_bfloat16_to_float(*(p))
#define SST_BF16_(p, v) (*(p) = ops_float_to_bfloat16(v))

/* The operations: V* on vectors of the level (S = f or d), S* on scalars; `va`/`al` are
 * alpha as a vector and as a scalar. */
#define V_ADD_(S, a, b) v##S##_add(a, b)
#define V_SUB_(S, a, b) v##S##_sub(a, b)
#define V_MUL_(S, a, b) v##S##_mul(a, b)
#define V_DIV_(S, a, b) v##S##_div(a, b)
#define V_ADD_ALPHA_(S, a, b) v##S##_add(a, v##S##_mul(va, b))
#define V_SUB_ALPHA_(S, a, b) v##S##_sub(a, v##S##_mul(va, b))
/* maximum/minimum: the NaN-propagating compare-and-select of ops_math_max/min
 * (kernels/ops_elementwise_math.h; torch's rule: NaN when either is NaN, x's NaN when
 * both are; on equal values, x, so maximum(-0.0, 0.0) is -0.0 as there) */
#define V_MAX_(S, a, b) v##S##_max_nan(a, b)
#define V_MIN_(S, a, b) v##S##_min_nan(a, b)
#define S_MAX_(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define S_MIN_(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))
/* fmax/fmin: NaN-ignoring, ops_math_fmax/fmin's selects (a NaN x gives y, a NaN y
 * loses to x; x on ties): (x > y ? y : x) or (y > x ? y : x), then y where x is NaN */
#define V_FMAX_(S, a, b) v##S##_select_eq(a, a, v##S##_select_gt(b, a, b, a), b)
#define V_FMIN_(S, a, b) v##S##_select_eq(a, a, v##S##_select_gt(a, b, b, a), b)
#define S_FMAX_(a, b) (((a) != (a) || (b) > (a)) ? (b) : (a))
#define S_FMIN_(a, b) (((a) != (a) || (b) < (a)) ? (b) : (a))
#define S_ADD_(a, b) ((a) + (b))
#define S_SUB_(a, b) ((a) - (b))
#define S_MUL_(a, b) ((a) * (b))
#define S_DIV_(a, b) ((a) / (b))
#define S_ADD_ALPHA_(a, b) ((a) + al * (b))
#define S_SUB_ALPHA_(a, b) ((a) - al * (b))

/* NAME: OP over storage T computed in CT with vectors v<S>_t; VLD/VST load and store
 * a vector of T, SLD/SST one element (the scalar loop's conversions). */
#define BIN_LOOP_(NAME, ATTR, OP, T, CT, S, VLD, VST, SLD, SST)                           \
    ATTR static void NAME(void *out, const void *xp, const void *yp, int64_t n, int bc,   \
                          const void *alpha)                                               \
    {                                                                                      \
        T *const o = (T *)out;                                                             \
        const T *const x = (const T *)xp;                                                  \
        const T *const y = (const T *)yp;                                                  \
        const CT al = alpha ? *(const CT *)alpha : (CT)1;                                  \
        const v##S##_t va = v##S##_set1(al);                                               \
        (void)al;                                                                          \
        (void)va;                                                                          \
        int64_t i = 0;                                                                     \
        if (bc == OPS_VEC_BC_X) {                                                          \
            const CT xs = SLD(x);                                                          \
            const v##S##_t a = v##S##_set1(xs);                                            \
            for (; i + v##S##_n <= n; i += v##S##_n) {                                     \
                const v##S##_t b = VLD(y + i);                                             \
                VST(o + i, V_##OP##_(S, a, b));                                            \
            }                                                                              \
            for (; i < n; i++) {                                                           \
                const CT b = SLD(y + i);                                                   \
                SST(o + i, S_##OP##_(xs, b));                                              \
            }                                                                              \
        } else if (bc == OPS_VEC_BC_Y) {                                                   \
            const CT ys = SLD(y);                                                          \
            const v##S##_t b = v##S##_set1(ys);                                            \
            for (; i + v##S##_n <= n; i += v##S##_n) {                                     \
                const v##S##_t a = VLD(x + i);                                             \
                VST(o + i, V_##OP##_(S, a, b));                                            \
            }                                                                              \
            for (; i < n; i++) {                                                           \
                const CT a = SLD(x + i);                                                   \
                SST(o + i, S_##OP##_(a, ys));                                              \
            }                                                                              \
        } else {                                                                           \
            for (; i + v##S##_n <= n; i += v##S##_n) {                                     \
                const v##S##_t a = VLD(x + i), b = VLD(y + i);                             \
                VST(o + i, V_##OP##_(S, a, b));                                            \
            }                                                                              \
            for (; i < n; i++) {                                                           \
                const CT a = SLD(x + i), b = SLD(y + i);                                   \
                SST(o + i, S_##OP##_(a, b));                                               \
            }                                                                              \
        }                                                                                  \
    }

#define BIN_LOOPS_F_(op, OP)                                                               \
    BIN_LOOP_(op##_f32, , OP, float, float, f, vf_load, vf_store, SLD_F32_, SST_F32_)     \
    BIN_LOOP_(op##_f64, , OP, double, double, d, vd_load, vd_store, SLD_F32_, SST_F32_)

#if HAVE_HALF_
#if defined(__AVX512F__)
#define HALF_ENTRY_(f) f
#else
/* The float16 entries at avx2 check F16C once per run (a load of libgcc's cpu model);
 * without it they take the scalar conversions, still vector arithmetic. */
#define HALF_ENTRY_(f) f##_chk
#endif
#define BIN_LOOPS_H_(op, OP)                                                               \
    BIN_LOOP_(op##_f16, HALF_ATTR_, OP, ops_half, float, f, ld_f16_, st_f16_, SLD_F16_,   \
              SST_F16_)                                                                    \
    BIN_LOOP_(op##_bf16, , OP, ops_bfloat16, float, f, ld_bf16_, st_bf16_, SLD_BF16_,     \
              SST_BF16_)                                                                   \
    BIN_HALF_CHECK_(op, OP)
#if defined(__AVX512F__)
#define BIN_HALF_CHECK_(op, OP)
#else
#define BIN_HALF_CHECK_(op, OP)                                                            \
    static void op##_f16_scalar(void *out, const void *xp, const void *yp, int64_t n,     \
                                int bc, const void *alpha)                                 \
    {                                                                                      \
        ops_half *const o = (ops_half *)out;                                               \
        const ops_half *const x = (const ops_half *)xp, *const y = (const ops_half *)yp;   \
        const float al = alpha ? *(const float *)alpha : 1.0f;                             \
        (void)al;                                                                          \
        const int64_t sx = bc == OPS_VEC_BC_X ? 0 : 1, sy = bc == OPS_VEC_BC_Y ? 0 : 1;    \
        for (int64_t i = 0; i < n; i++) {                                                  \
            const float a = SLD_F16_(x + i * sx), b = SLD_F16_(y + i * sy);                \
            SST_F16_(o + i, S_##OP##_(a, b));                                              \
        }                                                                                  \
    }                                                                                      \
    static void op##_f16_chk(void *out, const void *xp, const void *yp, int64_t n, int bc, \
                             const void *alpha)                                            \
    {                                                                                      \
        if (__builtin_cpu_supports("f16c"))                                                \
            op##_f16(out, xp, yp, n, bc, alpha);                                           \
        else                                                                               \
            op##_f16_scalar(out, xp, yp, n, bc, alpha);                                    \
    }
#endif
#define BIN_ROW_(op) {op##_f32, op##_f64, HALF_ENTRY_(op##_f16), op##_bf16}
#else
#define BIN_LOOPS_H_(op, OP)
#define BIN_ROW_(op) {op##_f32, op##_f64, NULL, NULL}
#endif

#define BIN_LOOPS_(op, OP) BIN_LOOPS_F_(op, OP) BIN_LOOPS_H_(op, OP)

BIN_LOOPS_(add, ADD)
BIN_LOOPS_(sub, SUB)
BIN_LOOPS_(mul, MUL)
BIN_LOOPS_(div, DIV)
BIN_LOOPS_(add_alpha, ADD_ALPHA)
BIN_LOOPS_(sub_alpha, SUB_ALPHA)
BIN_LOOPS_(max, MAX)
BIN_LOOPS_(min, MIN)
BIN_LOOPS_(fmax, FMAX)
BIN_LOOPS_(fmin, FMIN)

const ops_vec_binary_table OPS_VEC_NAME(ops_vec_binary_table) = {
    .fn = {
        [OPS_VEC_BIN_ADD] = BIN_ROW_(add),
        [OPS_VEC_BIN_SUB] = BIN_ROW_(sub),
        [OPS_VEC_BIN_MUL] = BIN_ROW_(mul),
        [OPS_VEC_BIN_DIV] = BIN_ROW_(div),
        [OPS_VEC_BIN_ADD_ALPHA] = BIN_ROW_(add_alpha),
        [OPS_VEC_BIN_SUB_ALPHA] = BIN_ROW_(sub_alpha),
        [OPS_VEC_BIN_MAX] = BIN_ROW_(max),
        [OPS_VEC_BIN_MIN] = BIN_ROW_(min),
        [OPS_VEC_BIN_FMAX] = BIN_ROW_(fmax),
        [OPS_VEC_BIN_FMIN] = BIN_ROW_(fmin),
    },
};

/* The per-level vector layer of kernels/cpu/vec/ (docs/cpu-dispatch.md): included only
 * by the sources kernels/cpu/vec/meson.build compiles once per instruction-set level
 * (cpu_vec_sources), each with its level's flags and OPS_VEC_SUFFIX.
 *
 * It gives, for the level being compiled: the vector types and widths (vf_t/vf_n for
 * float32, vd_t/vd_n for float64), the operations the loops use (vf_where_neg(x, a, b):
 * a where x < 0, else b, NaN taking b; vf_max(a, b): the larger, either operand where
 * one is NaN, which one differs by level; vf_lo_vd/vf_hi_vd(v): v's halves widened to
 * double), SLEEF's 1.0-ulp forms of that width
 * (SLEEF_f_(exp) is Sleef_expf16_u10avx512f at AVX-512), and OPS_VEC_NAME(base), the
 * name of this level's copy of an exported table (ops_vec_table -> ops_vec_table_avx2).
 * Add an operation here when a loop needs it, for every level. */
#ifndef OPS_KERNELS_CPU_VEC_ISA_H
#define OPS_KERNELS_CPU_VEC_ISA_H

#include <stdint.h>
#include <string.h>

#include <sleef.h>

#ifndef OPS_VEC_SUFFIX
#error "kernels/cpu/vec/vec_isa.h is for the per-level sources of kernels/cpu/vec/meson.build (OPS_VEC_SUFFIX)"
#endif
#define VEC_CAT2_(a, b) a##b
#define VEC_CAT_(a, b) VEC_CAT2_(a, b)
#define VEC_STR2_(a) #a
#define VEC_STR_(a) VEC_STR2_(a)
/* This level's copy of table BASE: BASE_default, BASE_avx2, BASE_avx512. */
#define OPS_VEC_NAME(base) VEC_CAT_(VEC_CAT_(base, _), OPS_VEC_SUFFIX)
/* The level's name as a string ("avx2"). */
#define OPS_VEC_LEVEL_STR VEC_STR_(OPS_VEC_SUFFIX)

#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 vf_t;
typedef __m512d vd_t;
#define vf_n 16
#define vd_n 8
#define vf_load _mm512_loadu_ps
#define vf_store _mm512_storeu_ps
#define vf_set1 _mm512_set1_ps
#define vf_add _mm512_add_ps
#define vf_sub _mm512_sub_ps
#define vf_div _mm512_div_ps
#define vf_mul _mm512_mul_ps
#define vd_load _mm512_loadu_pd
#define vd_store _mm512_storeu_pd
#define vd_set1 _mm512_set1_pd
#define vd_add _mm512_add_pd
#define vd_sub _mm512_sub_pd
#define vd_div _mm512_div_pd
#define vd_mul _mm512_mul_pd
#define vf_min _mm512_min_ps
#define vd_min _mm512_min_pd
#define vf_where_neg(x, a, b)                                                            \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), _mm512_setzero_ps(), _CMP_LT_OQ), (b), (a))
#define vd_where_neg(x, a, b)                                                            \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((x), _mm512_setzero_pd(), _CMP_LT_OQ), (b), (a))
#define SLEEF_f_(fn) Sleef_##fn##f16_u10avx512f
#define SLEEF_d_(fn) Sleef_##fn##d8_u10avx512f
/* reductions (vec_reduce.c): |x|, plain max (NaN rules of the ISA), the NaN-first max/min of ops_red_max_nan, x with
 * NaN as 0, "some lane equals", float32 widened to float64, int64 lanes */
#define vf_abs(x) _mm512_abs_ps(x)
#define vf_max _mm512_max_ps
#define vd_max _mm512_max_pd
#define vd_abs(x) _mm512_abs_pd(x)
#define vf_max_nan(a, b)                                                                 \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_GE_OQ) |                      \
                             _mm512_cmp_ps_mask((a), (a), _CMP_UNORD_Q), (b), (a))
#define vd_max_nan(a, b)                                                                 \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((a), (b), _CMP_GE_OQ) |                      \
                             _mm512_cmp_pd_mask((a), (a), _CMP_UNORD_Q), (b), (a))
#define vf_min_nan(a, b)                                                                 \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_LE_OQ) |                      \
                             _mm512_cmp_ps_mask((a), (a), _CMP_UNORD_Q), (b), (a))
#define vd_min_nan(a, b)                                                                 \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((a), (b), _CMP_LE_OQ) |                      \
                             _mm512_cmp_pd_mask((a), (a), _CMP_UNORD_Q), (b), (a))
#define vf_zero_nan(x) _mm512_maskz_mov_ps(_mm512_cmp_ps_mask((x), (x), _CMP_ORD_Q), (x))
#define vd_zero_nan(x) _mm512_maskz_mov_pd(_mm512_cmp_pd_mask((x), (x), _CMP_ORD_Q), (x))
#define vf_any_eq(x, v) (_mm512_cmp_ps_mask((x), (v), _CMP_EQ_OQ) != 0)
#define vd_any_eq(x, v) (_mm512_cmp_pd_mask((x), (v), _CMP_EQ_OQ) != 0)
#define vd_load_f32(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
typedef __m512i vl_t;
#define vl_n 8
#define vl_zero() _mm512_setzero_si512()
#define vl_add _mm512_add_epi64
#define vl_load(p) _mm512_loadu_si512((const void *)(p))
#define vl_load_i32(p) _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(p)))
#define vl_store(p, v) _mm512_storeu_si512((void *)(p), (v))
/* vf_n bfloat16 / float16 (as uint16_t bits) widened to float32; VEC_F16_TARGET_ marks a
 * function that uses vf_load_f16 (empty where the level's flags have it) */
#define vf_load_bf16(p) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define vf_load_f16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define VEC_HAS_F16_ 1
#define VEC_F16_TARGET_
/* vec_math.c: the correctly rounded square root; SLEEF's erfc (1.5 ulp, its best) and
 * 3.5-ulp forms (SLEEF_f35_) where they are measurably faster. */
#define vf_sqrt _mm512_sqrt_ps
#define vd_sqrt _mm512_sqrt_pd
#define SLEEF_f15_(fn) Sleef_##fn##f16_u15avx512f
#define SLEEF_d15_(fn) Sleef_##fn##d8_u15avx512f
#define SLEEF_f35_(fn) Sleef_##fn##f16_u35avx512f
#define SLEEF_d35_(fn) Sleef_##fn##d8_u35avx512f
/* vec_math.c: whether some lane has |x| > t (false for NaN), for the domain limits. */
#define vf_any_abs_gt(x, t) (_mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(t), _CMP_GT_OQ) != 0)
#define vd_any_abs_gt(x, t) (_mm512_cmp_pd_mask(_mm512_abs_pd(x), _mm512_set1_pd(t), _CMP_GT_OQ) != 0)
/* vec_math.c: a * b + c (fused where the level has FMA: not at SSE2); vf_max and vf_abs
 * are the reductions' above (max(a, b) gives b where either is NaN: erf's clamp keeps NaN). */
#define vf_fma _mm512_fmadd_ps
#define vd_fma _mm512_fmadd_pd
/* the low and high halves of a float vector as two double vectors */
#define vf_lo_vd(v) _mm512_cvtps_pd(_mm512_castps512_ps256(v))
#define vf_hi_vd(v) _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)))
/* vec_act.c: a > b ? x : y and a == b ? x : y (false for NaN, taking y); it also uses
 * vf_max, vf_sqrt and vf_fma above */
#define vf_select_gt(a, b, x, y)                                                         \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_GT_OQ), (y), (x))
#define vd_select_gt(a, b, x, y)                                                         \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((a), (b), _CMP_GT_OQ), (y), (x))
#define vf_select_eq(a, b, x, y)                                                         \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_EQ_OQ), (y), (x))
#define vd_select_eq(a, b, x, y)                                                         \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((a), (b), _CMP_EQ_OQ), (y), (x))
/* vec_act.c: 2^n for an integer n carried by k = n + 1.5 * 2^23 (float) / 1.5 * 2^52
 * (double), the round-to-integer of the magic constant (n within the exponent range:
 * shifted into the exponent field, the constant's bits leave the word); whether some
 * lane has a > b (false for NaN) */
#define vf_pow2_magic(k)                                                                 \
    _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(_mm512_castps_si512(k), 23), _mm512_set1_epi32(0x3f800000)))
#define vd_pow2_magic(k)                                                                 \
    _mm512_castsi512_pd(_mm512_add_epi64(_mm512_slli_epi64(_mm512_castpd_si512(k), 52), _mm512_set1_epi64(0x3ff0000000000000LL)))
#define vf_any_gt(a, b) (_mm512_cmp_ps_mask((a), (b), _CMP_GT_OQ) != 0)
#define vd_any_gt(a, b) (_mm512_cmp_pd_mask((a), (b), _CMP_GT_OQ) != 0)
/* vec_convert.c (one implementation of the narrowing, with vf_load_bf16/vf_load_f16
 * above for the widening): vf_n float32 rounded to bfloat16 / float16 bits at p as the
 * scalar conversions (ops_scalar_math.h): to nearest even, overflow to inf; a bfloat16
 * NaN as u >> 16 | 0x40 (quiet, payload kept), a float16 NaN as 0x7e00 with its sign
 * (vcvtps2ph keeps a payload: NaN lanes are made sign | 0x7fc00000 first) */
static inline void
vf_store_bf16(uint16_t *p, __m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
    r = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r, _mm512_or_si512(u, _mm512_set1_epi32(0x400000)));
    _mm256_storeu_si256((__m256i *)(void *)p, _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16)));
}
static inline void
vf_store_f16(uint16_t *p, __m512 v)
{
    const __m512i s = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u));
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v,
                             _mm512_castsi512_ps(_mm512_or_si512(s, _mm512_set1_epi32(0x7fc00000))));
    _mm256_storeu_si256((__m256i *)(void *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256 vf_t;
typedef __m256d vd_t;
#define vf_n 8
#define vd_n 4
#define vf_load _mm256_loadu_ps
#define vf_store _mm256_storeu_ps
#define vf_set1 _mm256_set1_ps
#define vf_add _mm256_add_ps
#define vf_sub _mm256_sub_ps
#define vf_div _mm256_div_ps
#define vf_mul _mm256_mul_ps
#define vd_load _mm256_loadu_pd
#define vd_store _mm256_storeu_pd
#define vd_set1 _mm256_set1_pd
#define vd_add _mm256_add_pd
#define vd_sub _mm256_sub_pd
#define vd_div _mm256_div_pd
#define vd_mul _mm256_mul_pd
#define vf_min _mm256_min_ps
#define vd_min _mm256_min_pd
#define vf_where_neg(x, a, b)                                                            \
    _mm256_blendv_ps((b), (a), _mm256_cmp_ps((x), _mm256_setzero_ps(), _CMP_LT_OQ))
#define vd_where_neg(x, a, b)                                                            \
    _mm256_blendv_pd((b), (a), _mm256_cmp_pd((x), _mm256_setzero_pd(), _CMP_LT_OQ))
#define SLEEF_f_(fn) Sleef_##fn##f8_u10avx2
#define SLEEF_d_(fn) Sleef_##fn##d4_u10avx2
/* reductions (vec_reduce.c): |x|, plain max (NaN rules of the ISA), the NaN-first max/min of ops_red_max_nan, x with
 * NaN as 0, "some lane equals", float32 widened to float64, int64 lanes */
#define vf_abs(x) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (x))
#define vf_max _mm256_max_ps
#define vd_max _mm256_max_pd
#define vd_abs(x) _mm256_andnot_pd(_mm256_set1_pd(-0.0), (x))
#define vf_max_nan(a, b)                                                                 \
    _mm256_blendv_ps((b), (a), _mm256_or_ps(_mm256_cmp_ps((a), (b), _CMP_GE_OQ),         \
                                            _mm256_cmp_ps((a), (a), _CMP_UNORD_Q)))
#define vd_max_nan(a, b)                                                                 \
    _mm256_blendv_pd((b), (a), _mm256_or_pd(_mm256_cmp_pd((a), (b), _CMP_GE_OQ),         \
                                            _mm256_cmp_pd((a), (a), _CMP_UNORD_Q)))
#define vf_min_nan(a, b)                                                                 \
    _mm256_blendv_ps((b), (a), _mm256_or_ps(_mm256_cmp_ps((a), (b), _CMP_LE_OQ),         \
                                            _mm256_cmp_ps((a), (a), _CMP_UNORD_Q)))
#define vd_min_nan(a, b)                                                                 \
    _mm256_blendv_pd((b), (a), _mm256_or_pd(_mm256_cmp_pd((a), (b), _CMP_LE_OQ),         \
                                            _mm256_cmp_pd((a), (a), _CMP_UNORD_Q)))
#define vf_zero_nan(x) _mm256_and_ps((x), _mm256_cmp_ps((x), (x), _CMP_ORD_Q))
#define vd_zero_nan(x) _mm256_and_pd((x), _mm256_cmp_pd((x), (x), _CMP_ORD_Q))
#define vf_any_eq(x, v) (_mm256_movemask_ps(_mm256_cmp_ps((x), (v), _CMP_EQ_OQ)) != 0)
#define vd_any_eq(x, v) (_mm256_movemask_pd(_mm256_cmp_pd((x), (v), _CMP_EQ_OQ)) != 0)
#define vd_load_f32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
typedef __m256i vl_t;
#define vl_n 4
#define vl_zero() _mm256_setzero_si256()
#define vl_add _mm256_add_epi64
#define vl_load(p) _mm256_loadu_si256((const __m256i *)(p))
#define vl_load_i32(p) _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(p)))
#define vl_store(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
/* vf_n bfloat16 / float16 (as uint16_t bits) widened to float32; float16 through F16C,
 * which every AVX2 CPU has but the level's flags do not name: the kernels check it
 * (__builtin_cpu_supports) before calling a VEC_F16_TARGET_ function */
#define vf_load_bf16(p) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define vf_load_f16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define VEC_HAS_F16_ 1
#define VEC_F16_TARGET_ __attribute__((target("f16c")))
/* vec_math.c: the correctly rounded square root; SLEEF's erfc (1.5 ulp, its best) and
 * 3.5-ulp forms (SLEEF_f35_) where they are measurably faster. */
#define vf_sqrt _mm256_sqrt_ps
#define vd_sqrt _mm256_sqrt_pd
#define SLEEF_f15_(fn) Sleef_##fn##f8_u15avx2
#define SLEEF_d15_(fn) Sleef_##fn##d4_u15avx2
#define SLEEF_f35_(fn) Sleef_##fn##f8_u35avx2
#define SLEEF_d35_(fn) Sleef_##fn##d4_u35avx2
/* vec_math.c: whether some lane has |x| > t (false for NaN), for the domain limits. */
#define vf_any_abs_gt(x, t)                                                              \
    (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), (x)),       \
                                      _mm256_set1_ps(t), _CMP_GT_OQ)) != 0)
#define vd_any_abs_gt(x, t)                                                              \
    (_mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), (x)),        \
                                      _mm256_set1_pd(t), _CMP_GT_OQ)) != 0)
/* vec_math.c: a * b + c (fused where the level has FMA: not at SSE2); vf_max and vf_abs
 * are the reductions' above (max(a, b) gives b where either is NaN: erf's clamp keeps NaN). */
#define vf_fma _mm256_fmadd_ps
#define vd_fma _mm256_fmadd_pd
#define vf_lo_vd(v) _mm256_cvtps_pd(_mm256_castps256_ps128(v))
#define vf_hi_vd(v) _mm256_cvtps_pd(_mm256_extractf128_ps((v), 1))
/* vec_act.c: a > b ? x : y and a == b ? x : y (false for NaN, taking y); it also uses
 * vf_max, vf_sqrt and vf_fma above */
#define vf_select_gt(a, b, x, y) _mm256_blendv_ps((y), (x), _mm256_cmp_ps((a), (b), _CMP_GT_OQ))
#define vd_select_gt(a, b, x, y) _mm256_blendv_pd((y), (x), _mm256_cmp_pd((a), (b), _CMP_GT_OQ))
#define vf_select_eq(a, b, x, y) _mm256_blendv_ps((y), (x), _mm256_cmp_ps((a), (b), _CMP_EQ_OQ))
#define vd_select_eq(a, b, x, y) _mm256_blendv_pd((y), (x), _mm256_cmp_pd((a), (b), _CMP_EQ_OQ))
/* vec_act.c: 2^n for an integer n carried by k = n + 1.5 * 2^23 (float) / 1.5 * 2^52
 * (double), the round-to-integer of the magic constant (n within the exponent range:
 * shifted into the exponent field, the constant's bits leave the word); whether some
 * lane has a > b (false for NaN) */
#define vf_pow2_magic(k)                                                                 \
    _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(k), 23), _mm256_set1_epi32(0x3f800000)))
#define vd_pow2_magic(k)                                                                 \
    _mm256_castsi256_pd(_mm256_add_epi64(_mm256_slli_epi64(_mm256_castpd_si256(k), 52), _mm256_set1_epi64x(0x3ff0000000000000LL)))
#define vf_any_gt(a, b) (_mm256_movemask_ps(_mm256_cmp_ps((a), (b), _CMP_GT_OQ)) != 0)
#define vd_any_gt(a, b) (_mm256_movemask_pd(_mm256_cmp_pd((a), (b), _CMP_GT_OQ)) != 0)
/* vec_convert.c (one implementation of the narrowing, with vf_load_bf16/vf_load_f16
 * above for the widening): vf_n float32 rounded to bfloat16 / float16 bits at p as the
 * scalar conversions (ops_scalar_math.h): to nearest even, overflow to inf; a bfloat16
 * NaN as u >> 16 | 0x40 (quiet, payload kept), a float16 NaN as 0x7e00 with its sign
 * (vcvtps2ph keeps a payload: NaN lanes are made sign | 0x7fc00000 first) */
static inline void
vf_store_bf16(uint16_t *p, __m256 v)
{
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x400000)), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    r = _mm256_srli_epi32(r, 16); /* each lane <= 0xffff: the unsigned pack keeps it */
    _mm_storeu_si128((__m128i *)(void *)p, _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
}
VEC_F16_TARGET_ static inline void
vf_store_f16(uint16_t *p, __m256 v)
{
    const __m256 q = _mm256_or_ps(_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))),
                                  _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
    v = _mm256_blendv_ps(v, q, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    _mm_storeu_si128((__m128i *)(void *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#elif defined(__SSE2__)
#include <emmintrin.h>
typedef __m128 vf_t;
typedef __m128d vd_t;
#define vf_n 4
#define vd_n 2
#define vf_load _mm_loadu_ps
#define vf_store _mm_storeu_ps
#define vf_set1 _mm_set1_ps
#define vf_add _mm_add_ps
#define vf_sub _mm_sub_ps
#define vf_div _mm_div_ps
#define vf_mul _mm_mul_ps
#define vd_load _mm_loadu_pd
#define vd_store _mm_storeu_pd
#define vd_set1 _mm_set1_pd
#define vd_add _mm_add_pd
#define vd_sub _mm_sub_pd
#define vd_div _mm_div_pd
#define vd_mul _mm_mul_pd
#define vf_min _mm_min_ps
#define vd_min _mm_min_pd
#define vf_where_neg(x, a, b) vf_sse2_select_(_mm_cmplt_ps((x), _mm_setzero_ps()), (a), (b))
#define vd_where_neg(x, a, b) vd_sse2_select_(_mm_cmplt_pd((x), _mm_setzero_pd()), (a), (b))
static inline __m128 vf_sse2_select_(__m128 m, __m128 a, __m128 b)
{
    return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b));
}
static inline __m128d vd_sse2_select_(__m128d m, __m128d a, __m128d b)
{
    return _mm_or_pd(_mm_and_pd(m, a), _mm_andnot_pd(m, b));
}
#define SLEEF_f_(fn) Sleef_##fn##f4_u10sse2
#define SLEEF_d_(fn) Sleef_##fn##d2_u10sse2
/* reductions (vec_reduce.c): |x|, plain max (NaN rules of the ISA), the NaN-first max/min of ops_red_max_nan, x with
 * NaN as 0, "some lane equals", float32 widened to float64, int64 lanes */
#define vf_abs(x) _mm_andnot_ps(_mm_set1_ps(-0.0f), (x))
#define vf_max _mm_max_ps
#define vd_max _mm_max_pd
#define vd_abs(x) _mm_andnot_pd(_mm_set1_pd(-0.0), (x))
#define vf_max_nan(a, b) vf_sse2_select_(_mm_or_ps(_mm_cmpge_ps((a), (b)), _mm_cmpunord_ps((a), (a))), (a), (b))
#define vd_max_nan(a, b) vd_sse2_select_(_mm_or_pd(_mm_cmpge_pd((a), (b)), _mm_cmpunord_pd((a), (a))), (a), (b))
#define vf_min_nan(a, b) vf_sse2_select_(_mm_or_ps(_mm_cmple_ps((a), (b)), _mm_cmpunord_ps((a), (a))), (a), (b))
#define vd_min_nan(a, b) vd_sse2_select_(_mm_or_pd(_mm_cmple_pd((a), (b)), _mm_cmpunord_pd((a), (a))), (a), (b))
#define vf_zero_nan(x) _mm_and_ps((x), _mm_cmpord_ps((x), (x)))
#define vd_zero_nan(x) _mm_and_pd((x), _mm_cmpord_pd((x), (x)))
#define vf_any_eq(x, v) (_mm_movemask_ps(_mm_cmpeq_ps((x), (v))) != 0)
#define vd_any_eq(x, v) (_mm_movemask_pd(_mm_cmpeq_pd((x), (v))) != 0)
#define vd_load_f32(p) _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i_u *)(const void *)(p))))
typedef __m128i vl_t;
#define vl_n 2
#define vl_zero() _mm_setzero_si128()
#define vl_add _mm_add_epi64
#define vl_load(p) _mm_loadu_si128((const __m128i *)(p))
#define vl_load_i32(p) vl_sse2_widen_(_mm_loadl_epi64((const __m128i *)(p)))
#define vl_store(p, v) _mm_storeu_si128((__m128i *)(p), (v))
/* vf_n bfloat16 (as uint16_t bits) widened to float32 (its bits in the high half);
 * no float16 conversion at this level */
#define vf_load_bf16(p) _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64((const __m128i *)(p))))
#define VEC_HAS_F16_ 0
static inline __m128i vl_sse2_widen_(__m128i lo)
{
    return _mm_unpacklo_epi32(lo, _mm_srai_epi32(lo, 31));
}
/* vec_math.c: the correctly rounded square root; SLEEF's erfc (1.5 ulp, its best) and
 * 3.5-ulp forms (SLEEF_f35_) where they are measurably faster. */
#define vf_sqrt _mm_sqrt_ps
#define vd_sqrt _mm_sqrt_pd
#define SLEEF_f15_(fn) Sleef_##fn##f4_u15sse2
#define SLEEF_d15_(fn) Sleef_##fn##d2_u15sse2
#define SLEEF_f35_(fn) Sleef_##fn##f4_u35sse2
#define SLEEF_d35_(fn) Sleef_##fn##d2_u35sse2
/* vec_math.c: whether some lane has |x| > t (false for NaN), for the domain limits. */
#define vf_any_abs_gt(x, t)                                                              \
    (_mm_movemask_ps(_mm_cmpgt_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), (x)), _mm_set1_ps(t))) != 0)
#define vd_any_abs_gt(x, t)                                                              \
    (_mm_movemask_pd(_mm_cmpgt_pd(_mm_andnot_pd(_mm_set1_pd(-0.0), (x)), _mm_set1_pd(t))) != 0)
/* vec_math.c: a * b + c (fused where the level has FMA: not at SSE2); vf_max and vf_abs
 * are the reductions' above (max(a, b) gives b where either is NaN: erf's clamp keeps NaN). */
#define VEC_SSE2_FMA_F_(a, b, c) _mm_add_ps(_mm_mul_ps((a), (b)), (c))
#define VEC_SSE2_FMA_D_(a, b, c) _mm_add_pd(_mm_mul_pd((a), (b)), (c))
#define vf_fma VEC_SSE2_FMA_F_
#define vd_fma VEC_SSE2_FMA_D_
#define vf_lo_vd(v) _mm_cvtps_pd(v)
#define vf_hi_vd(v) _mm_cvtps_pd(_mm_movehl_ps((v), (v)))
/* vec_act.c: a > b ? x : y and a == b ? x : y (false for NaN, taking y); it also uses
 * vf_max, vf_sqrt and vf_fma above */
#define vf_select_gt(a, b, x, y) vf_sse2_select_(_mm_cmpgt_ps((a), (b)), (x), (y))
#define vd_select_gt(a, b, x, y) vd_sse2_select_(_mm_cmpgt_pd((a), (b)), (x), (y))
#define vf_select_eq(a, b, x, y) vf_sse2_select_(_mm_cmpeq_ps((a), (b)), (x), (y))
#define vd_select_eq(a, b, x, y) vd_sse2_select_(_mm_cmpeq_pd((a), (b)), (x), (y))
/* vec_act.c: 2^n for an integer n carried by k = n + 1.5 * 2^23 (float) / 1.5 * 2^52
 * (double), the round-to-integer of the magic constant (n within the exponent range:
 * shifted into the exponent field, the constant's bits leave the word); whether some
 * lane has a > b (false for NaN) */
#define vf_pow2_magic(k)                                                                 \
    _mm_castsi128_ps(_mm_add_epi32(_mm_slli_epi32(_mm_castps_si128(k), 23), _mm_set1_epi32(0x3f800000)))
#define vd_pow2_magic(k)                                                                 \
    _mm_castsi128_pd(_mm_add_epi64(_mm_slli_epi64(_mm_castpd_si128(k), 52), _mm_set1_epi64x(0x3ff0000000000000LL)))
#define vf_any_gt(a, b) (_mm_movemask_ps(_mm_cmpgt_ps((a), (b))) != 0)
#define vd_any_gt(a, b) (_mm_movemask_pd(_mm_cmpgt_pd((a), (b))) != 0)
/* vec_convert.c (one implementation of the narrowing, with vf_load_bf16/vf_load_f16
 * above for the widening): vf_n float32 rounded to bfloat16 / float16 bits at p as the
 * scalar conversions (ops_scalar_math.h): to nearest even, overflow to inf; a bfloat16
 * NaN as u >> 16 | 0x40 (quiet, payload kept), a float16 NaN as 0x7e00 with its sign
 * (vcvtps2ph keeps a payload: NaN lanes are made sign | 0x7fc00000 first) */
static inline void
vf_store_bf16(uint16_t *p, __m128 v)
{
    const __m128i u = _mm_castps_si128(v);
    const __m128i lsb = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
    const __m128i r = _mm_add_epi32(_mm_add_epi32(u, _mm_set1_epi32(0x7fff)), lsb);
    const __m128i m = _mm_castps_si128(_mm_cmpunord_ps(v, v));
    const __m128i s = _mm_or_si128(_mm_and_si128(m, _mm_or_si128(u, _mm_set1_epi32(0x400000))), _mm_andnot_si128(m, r));
    /* the high half sign-extended, so that the signed pack keeps its bits */
    const __m128i h = _mm_srai_epi32(s, 16);
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packs_epi32(h, h));
}
#elif defined(__aarch64__)
#include <arm_neon.h>
typedef float32x4_t vf_t;
typedef float64x2_t vd_t;
#define vf_n 4
#define vd_n 2
#define vf_load vld1q_f32
#define vf_store vst1q_f32
#define vf_set1 vdupq_n_f32
#define vf_add vaddq_f32
#define vf_sub vsubq_f32
#define vf_div vdivq_f32
#define vf_mul vmulq_f32
#define vd_load vld1q_f64
#define vd_store vst1q_f64
#define vd_set1 vdupq_n_f64
#define vd_add vaddq_f64
#define vd_sub vsubq_f64
#define vd_div vdivq_f64
#define vd_mul vmulq_f64
#define vf_min vminq_f32
#define vd_min vminq_f64
#define vf_where_neg(x, a, b) vbslq_f32(vcltq_f32((x), vdupq_n_f32(0.0f)), (a), (b))
#define vd_where_neg(x, a, b) vbslq_f64(vcltq_f64((x), vdupq_n_f64(0.0)), (a), (b))
#define SLEEF_f_(fn) Sleef_##fn##f4_u10advsimd
#define SLEEF_d_(fn) Sleef_##fn##d2_u10advsimd
/* reductions (vec_reduce.c): |x|, plain max (NaN rules of the ISA), the NaN-first max/min of ops_red_max_nan, x with
 * NaN as 0, "some lane equals", float32 widened to float64, int64 lanes */
#define vf_abs vabsq_f32
#define vf_max vmaxq_f32
#define vd_max vmaxq_f64
#define vd_abs vabsq_f64
#define vf_max_nan(a, b) vbslq_f32(vorrq_u32(vcgeq_f32((a), (b)), vmvnq_u32(vceqq_f32((a), (a)))), (a), (b))
#define vd_max_nan(a, b) vbslq_f64(vorrq_u64(vcgeq_f64((a), (b)), veorq_u64(vceqq_f64((a), (a)), vdupq_n_u64(~0ull))), (a), (b))
#define vf_min_nan(a, b) vbslq_f32(vorrq_u32(vcleq_f32((a), (b)), vmvnq_u32(vceqq_f32((a), (a)))), (a), (b))
#define vd_min_nan(a, b) vbslq_f64(vorrq_u64(vcleq_f64((a), (b)), veorq_u64(vceqq_f64((a), (a)), vdupq_n_u64(~0ull))), (a), (b))
#define vf_zero_nan(x) vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(x), vceqq_f32((x), (x))))
#define vd_zero_nan(x) vreinterpretq_f64_u64(vandq_u64(vreinterpretq_u64_f64(x), vceqq_f64((x), (x))))
#define vf_any_eq(x, v) (vmaxvq_u32(vceqq_f32((x), (v))) != 0)
#define vd_any_eq(x, v) ((vgetq_lane_u64(vceqq_f64((x), (v)), 0) | vgetq_lane_u64(vceqq_f64((x), (v)), 1)) != 0)
#define vd_load_f32(p) vcvt_f64_f32(vld1_f32(p))
typedef int64x2_t vl_t;
#define vl_n 2
#define vl_zero() vdupq_n_s64(0)
#define vl_add vaddq_s64
#define vl_load(p) vld1q_s64((const int64_t *)(p))
#define vl_load_i32(p) vmovl_s32(vld1_s32((const int32_t *)(p)))
#define vl_store(p, v) vst1q_s64((int64_t *)(p), (v))
/* vf_n bfloat16 / float16 (as uint16_t bits) widened to float32 */
#define vf_load_bf16(p) vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *)(p)), 16))
#define vf_load_f16(p) vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)(p))))
#define VEC_HAS_F16_ 1
#define VEC_F16_TARGET_
/* vec_math.c: the correctly rounded square root; SLEEF's erfc (1.5 ulp, its best) and
 * 3.5-ulp forms (SLEEF_f35_) where they are measurably faster. */
#define vf_sqrt vsqrtq_f32
#define vd_sqrt vsqrtq_f64
#define SLEEF_f15_(fn) Sleef_##fn##f4_u15advsimd
#define SLEEF_d15_(fn) Sleef_##fn##d2_u15advsimd
#define SLEEF_f35_(fn) Sleef_##fn##f4_u35advsimd
#define SLEEF_d35_(fn) Sleef_##fn##d2_u35advsimd
/* vec_math.c: whether some lane has |x| > t (false for NaN), for the domain limits. */
#define vf_any_abs_gt(x, t) (vmaxvq_u32(vcagtq_f32((x), vdupq_n_f32(t))) != 0)
#define vd_any_abs_gt(x, t) (vmaxvq_u32(vreinterpretq_u32_u64(vcagtq_f64((x), vdupq_n_f64(t)))) != 0)
/* vec_math.c: a * b + c (fused where the level has FMA: not at SSE2); vf_max and vf_abs
 * are the reductions' above (max(a, b) gives b where either is NaN: erf's clamp keeps NaN). */
#define VEC_NEON_FMA_F_(a, b, c) vfmaq_f32((c), (a), (b))
#define VEC_NEON_FMA_D_(a, b, c) vfmaq_f64((c), (a), (b))
#define vf_fma VEC_NEON_FMA_F_
#define vd_fma VEC_NEON_FMA_D_
#define vf_lo_vd(v) vcvt_f64_f32(vget_low_f32(v))
#define vf_hi_vd(v) vcvt_high_f64_f32(v)
/* vec_act.c: a > b ? x : y and a == b ? x : y (false for NaN, taking y); it also uses
 * vf_max, vf_sqrt and vf_fma above */
#define vf_select_gt(a, b, x, y) vbslq_f32(vcgtq_f32((a), (b)), (x), (y))
#define vd_select_gt(a, b, x, y) vbslq_f64(vcgtq_f64((a), (b)), (x), (y))
#define vf_select_eq(a, b, x, y) vbslq_f32(vceqq_f32((a), (b)), (x), (y))
#define vd_select_eq(a, b, x, y) vbslq_f64(vceqq_f64((a), (b)), (x), (y))
/* vec_act.c: 2^n for an integer n carried by k = n + 1.5 * 2^23 (float) / 1.5 * 2^52
 * (double), the round-to-integer of the magic constant (n within the exponent range:
 * shifted into the exponent field, the constant's bits leave the word); whether some
 * lane has a > b (false for NaN) */
#define vf_pow2_magic(k)                                                                 \
    vreinterpretq_f32_s32(vaddq_s32(vshlq_n_s32(vreinterpretq_s32_f32(k), 23), vdupq_n_s32(0x3f800000)))
#define vd_pow2_magic(k)                                                                 \
    vreinterpretq_f64_s64(vaddq_s64(vshlq_n_s64(vreinterpretq_s64_f64(k), 52), vdupq_n_s64(0x3ff0000000000000LL)))
#define vf_any_gt(a, b) (vmaxvq_u32(vcgtq_f32((a), (b))) != 0)
#define vd_any_gt(a, b) ((vgetq_lane_u64(vcgtq_f64((a), (b)), 0) | vgetq_lane_u64(vcgtq_f64((a), (b)), 1)) != 0)
#else
#error "kernels/cpu/vec: no vector level for this architecture (x86-64 and aarch64 have one)"
#endif

#endif /* OPS_KERNELS_CPU_VEC_ISA_H */

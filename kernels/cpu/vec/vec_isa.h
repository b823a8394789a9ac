/* The per-level vector layer of kernels/cpu/vec/ (docs/cpu-dispatch.md): included only
 * by the sources kernels/cpu/vec/meson.build compiles once per instruction-set level
 * (cpu_vec_sources), each with its level's flags and OPS_VEC_SUFFIX.
 *
 * It gives, for the level being compiled: the vector types and widths (vf_t/vf_n for
 * float32, vd_t/vd_n for float64), the operations the loops use (vf_where_neg(x, a, b):
 * a where x < 0, else b, NaN taking b), SLEEF's 1.0-ulp forms of that width
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
/* vec_act.c: max, sqrt, a > b ? x : y and a == b ? x : y (false for NaN, taking y),
 * muladd */
#define vf_max _mm512_max_ps
#define vd_max _mm512_max_pd
#define vf_sqrt _mm512_sqrt_ps
#define vd_sqrt _mm512_sqrt_pd
#define vf_select_gt(a, b, x, y)                                                         \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_GT_OQ), (y), (x))
#define vd_select_gt(a, b, x, y)                                                         \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((a), (b), _CMP_GT_OQ), (y), (x))
#define vf_select_eq(a, b, x, y)                                                         \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_EQ_OQ), (y), (x))
#define vd_select_eq(a, b, x, y)                                                         \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask((a), (b), _CMP_EQ_OQ), (y), (x))
#define vf_muladd _mm512_fmadd_ps /* a * b + c, fused where the level has FMA */
#define vd_muladd _mm512_fmadd_pd
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
/* vec_act.c: max, sqrt, a > b ? x : y and a == b ? x : y (false for NaN, taking y),
 * muladd */
#define vf_max _mm256_max_ps
#define vd_max _mm256_max_pd
#define vf_sqrt _mm256_sqrt_ps
#define vd_sqrt _mm256_sqrt_pd
#define vf_select_gt(a, b, x, y) _mm256_blendv_ps((y), (x), _mm256_cmp_ps((a), (b), _CMP_GT_OQ))
#define vd_select_gt(a, b, x, y) _mm256_blendv_pd((y), (x), _mm256_cmp_pd((a), (b), _CMP_GT_OQ))
#define vf_select_eq(a, b, x, y) _mm256_blendv_ps((y), (x), _mm256_cmp_ps((a), (b), _CMP_EQ_OQ))
#define vd_select_eq(a, b, x, y) _mm256_blendv_pd((y), (x), _mm256_cmp_pd((a), (b), _CMP_EQ_OQ))
#define vf_muladd _mm256_fmadd_ps /* a * b + c, fused where the level has FMA */
#define vd_muladd _mm256_fmadd_pd
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
/* vec_act.c: max, sqrt, a > b ? x : y and a == b ? x : y (false for NaN, taking y),
 * muladd */
#define vf_max _mm_max_ps
#define vd_max _mm_max_pd
#define vf_sqrt _mm_sqrt_ps
#define vd_sqrt _mm_sqrt_pd
#define vf_select_gt(a, b, x, y) vf_sse2_select_(_mm_cmpgt_ps((a), (b)), (x), (y))
#define vd_select_gt(a, b, x, y) vd_sse2_select_(_mm_cmpgt_pd((a), (b)), (x), (y))
#define vf_select_eq(a, b, x, y) vf_sse2_select_(_mm_cmpeq_ps((a), (b)), (x), (y))
#define vd_select_eq(a, b, x, y) vd_sse2_select_(_mm_cmpeq_pd((a), (b)), (x), (y))
#define vf_muladd(a, b, c) _mm_add_ps(_mm_mul_ps((a), (b)), (c)) /* a * b + c, not fused */
#define vd_muladd(a, b, c) _mm_add_pd(_mm_mul_pd((a), (b)), (c))
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
/* vec_act.c: max, sqrt, a > b ? x : y and a == b ? x : y (false for NaN, taking y),
 * muladd */
#define vf_max vmaxq_f32
#define vd_max vmaxq_f64
#define vf_sqrt vsqrtq_f32
#define vd_sqrt vsqrtq_f64
#define vf_select_gt(a, b, x, y) vbslq_f32(vcgtq_f32((a), (b)), (x), (y))
#define vd_select_gt(a, b, x, y) vbslq_f64(vcgtq_f64((a), (b)), (x), (y))
#define vf_select_eq(a, b, x, y) vbslq_f32(vceqq_f32((a), (b)), (x), (y))
#define vd_select_eq(a, b, x, y) vbslq_f64(vceqq_f64((a), (b)), (x), (y))
#define vf_muladd(a, b, c) vfmaq_f32((c), (a), (b)) /* a * b + c, fused */
#define vd_muladd(a, b, c) vfmaq_f64((c), (a), (b))
#else
#error "kernels/cpu/vec: no vector level for this architecture (x86-64 and aarch64 have one)"
#endif

#endif /* OPS_KERNELS_CPU_VEC_ISA_H */

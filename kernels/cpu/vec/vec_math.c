/* Vector loops of exp, log, tanh and sigmoid over contiguous float32/float64, compiled
 * once per instruction-set level (kernels/cpu/vec/meson.build passes the level's flags
 * and OPS_VEC_SUFFIX; docs/cpu-dispatch.md).
 *
 * The functions are SLEEF's 1.0-ulp vector forms for the level's register width (the
 * library PyTorch's CPU kernels use; why not polynomials of our own: the measurements
 * in docs/cpu-dispatch.md).  sigmoid is written here on their exp (VEC_SIGMOID_).
 * A run's last n % width elements go through one vector padded in a local buffer, so
 * every element of a run is computed by the same code: a result does not depend on
 * where a run starts or how long it is (threads split runs). */
#include <math.h>
#include <string.h>

#include <sleef.h>

#include "kernels/cpu/vec/vec.h"

#ifndef OPS_VEC_SUFFIX
#error "kernels/cpu/vec/vec_math.c is compiled per level by its meson.build (OPS_VEC_SUFFIX)"
#endif
#define VEC_CAT2_(a, b) a##b
#define VEC_CAT_(a, b) VEC_CAT2_(a, b)
#define VEC_STR2_(a) #a
#define VEC_STR_(a) VEC_STR2_(a)
#define VEC_TABLE_ VEC_CAT_(ops_vec_table_, OPS_VEC_SUFFIX)

/* Per level: the vector types and widths, the operations the loops use (vf_where_neg(x,
 * a, b): a where x < 0, else b, NaN taking b), SLEEF's 1.0-ulp forms of that width,
 * and LIBM_MASK_f32/f64: the functions (bits 1 << ops_vec_unary) whose table entry is
 * the scalar glibc loop instead, where `bench bench_vec` measured glibc faster than
 * SLEEF at that width (docs/cpu-dispatch.md "Per level, per function"). */
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
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 0u
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
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 (1u << OPS_VEC_LOG)
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
#define LIBM_MASK_f32 (1u << OPS_VEC_LOG)
#define LIBM_MASK_f64 ((1u << OPS_VEC_EXP) | (1u << OPS_VEC_LOG) | (1u << OPS_VEC_TANH))
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
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 0u
#else
#error "kernels/cpu/vec: no vector level for this architecture (x86-64 and aarch64 have one)"
#endif

/* sigmoid(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, both through
 * e = exp(-|x|) (-|x| as min(x, -x)), which never overflows: the plain 1 / (1 + e^-x)
 * gives 0 below x = -88.7 (float32) where the true value is still a subnormal. */
#define VEC_SIGMOID_(S, T)                                                               \
    static inline v##S##_t v##S##_sigmoid(v##S##_t x)                                   \
    {                                                                                    \
        const v##S##_t one = v##S##_set1((T)1);                                          \
        const v##S##_t neg_abs = v##S##_min(x, v##S##_sub(v##S##_set1((T)0), x));          \
        const v##S##_t e = SLEEF_##S##_(exp)(neg_abs);                                   \
        const v##S##_t r = v##S##_div(one, v##S##_add(one, e));                          \
        return v##S##_where_neg(x, v##S##_mul(e, r), r);                                 \
    }
VEC_SIGMOID_(f, float)
VEC_SIGMOID_(d, double)

/* NAME's loop over float (S = f, T = float) or double (S = d): full vectors, then the
 * tail through one vector padded with 1 (in every function's domain, so the padding
 * raises no floating-point exception and costs no slow path). */
#define VEC_LOOP_(NAME, S, T, EXPR)                                                      \
    static void NAME(const T *x, T *y, int64_t n)                                        \
    {                                                                                    \
        int64_t i = 0;                                                                   \
        for (; i + v##S##_n <= n; i += v##S##_n) {                                        \
            const v##S##_t v = v##S##_load(x + i);                                       \
            v##S##_store(y + i, EXPR);                                                   \
        }                                                                                \
        if (i < n) {                                                                     \
            T buf[v##S##_n];                                                             \
            for (int k = 0; k < v##S##_n; k++)                                           \
                buf[k] = 1;                                                              \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                             \
            const v##S##_t v = v##S##_load(buf);                                         \
            v##S##_store(buf, EXPR);                                                     \
            memcpy(y + i, buf, (size_t)(n - i) * sizeof(T));                             \
        }                                                                                \
    }

VEC_LOOP_(exp_f32, f, float, SLEEF_f_(exp)(v))
VEC_LOOP_(log_f32, f, float, SLEEF_f_(log)(v))
VEC_LOOP_(tanh_f32, f, float, SLEEF_f_(tanh)(v))
VEC_LOOP_(sigmoid_f32, f, float, vf_sigmoid(v))
VEC_LOOP_(exp_f64, d, double, SLEEF_d_(exp)(v))
VEC_LOOP_(log_f64, d, double, SLEEF_d_(log)(v))
VEC_LOOP_(tanh_f64, d, double, SLEEF_d_(tanh)(v))
VEC_LOOP_(sigmoid_f64, d, double, vd_sigmoid(v))

/* The scalar glibc loops, for the entries of LIBM_MASK_f32/f64; sigmoid in the same
 * overflow-free form as the vector one. */
static inline float
sigmoid_scalar_f32(float x)
{
    const float e = expf(-fabsf(x)), r = 1.0f / (1.0f + e);
    return (x < 0 ? e : 1.0f) * r;
}

static inline double
sigmoid_scalar_f64(double x)
{
    const double e = exp(-fabs(x)), r = 1.0 / (1.0 + e);
    return (x < 0 ? e : 1.0) * r;
}

#define LIBM_LOOP_(NAME, T, EXPR)                                                        \
    static void NAME(const T *x, T *y, int64_t n)                                        \
    {                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                  \
            y[i] = EXPR(x[i]);                                                           \
    }

LIBM_LOOP_(exp_libm_f32, float, expf)
LIBM_LOOP_(log_libm_f32, float, logf)
LIBM_LOOP_(tanh_libm_f32, float, tanhf)
LIBM_LOOP_(sigmoid_libm_f32, float, sigmoid_scalar_f32)
LIBM_LOOP_(exp_libm_f64, double, exp)
LIBM_LOOP_(log_libm_f64, double, log)
LIBM_LOOP_(tanh_libm_f64, double, tanh)
LIBM_LOOP_(sigmoid_libm_f64, double, sigmoid_scalar_f64)

/* The entry of function F at precision P (f32, f64): SLEEF's loop or glibc's. */
#define ENTRY_(F, P, FN)                                                                 \
    [F] = (LIBM_MASK_##P >> (F)) & 1u ? FN##_libm_##P : FN##_##P

const ops_vec_table VEC_TABLE_ = {
    .level = VEC_STR_(OPS_VEC_SUFFIX),
    .unary_f32 = {ENTRY_(OPS_VEC_EXP, f32, exp), ENTRY_(OPS_VEC_LOG, f32, log),
                  ENTRY_(OPS_VEC_TANH, f32, tanh), ENTRY_(OPS_VEC_SIGMOID, f32, sigmoid)},
    .unary_f64 = {ENTRY_(OPS_VEC_EXP, f64, exp), ENTRY_(OPS_VEC_LOG, f64, log),
                  ENTRY_(OPS_VEC_TANH, f64, tanh), ENTRY_(OPS_VEC_SIGMOID, f64, sigmoid)},
};

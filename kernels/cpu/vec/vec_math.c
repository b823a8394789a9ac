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

#include "kernels/cpu/vec/vec.h"

#include "kernels/cpu/vec/vec_isa.h"

/* LIBM_MASK_f32/f64: the functions (bits 1 << ops_vec_unary) whose table entry at this
 * level is the scalar glibc loop instead, where `bench bench_vec` measured glibc faster
 * than SLEEF at that width (docs/cpu-dispatch.md "Per level, per function"). */
#if defined(__AVX512F__)
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 0u
#elif defined(__AVX2__) && defined(__FMA__)
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 (1u << OPS_VEC_LOG)
#elif defined(__SSE2__)
#define LIBM_MASK_f32 (1u << OPS_VEC_LOG)
#define LIBM_MASK_f64 ((1u << OPS_VEC_EXP) | (1u << OPS_VEC_LOG) | (1u << OPS_VEC_TANH))
#else
#define LIBM_MASK_f32 0u
#define LIBM_MASK_f64 0u
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

const ops_vec_table OPS_VEC_NAME(ops_vec_table) = {
    .level = OPS_VEC_LEVEL_STR,
    .unary_f32 = {ENTRY_(OPS_VEC_EXP, f32, exp), ENTRY_(OPS_VEC_LOG, f32, log),
                  ENTRY_(OPS_VEC_TANH, f32, tanh), ENTRY_(OPS_VEC_SIGMOID, f32, sigmoid)},
    .unary_f64 = {ENTRY_(OPS_VEC_EXP, f64, exp), ENTRY_(OPS_VEC_LOG, f64, log),
                  ENTRY_(OPS_VEC_TANH, f64, tanh), ENTRY_(OPS_VEC_SIGMOID, f64, sigmoid)},
};

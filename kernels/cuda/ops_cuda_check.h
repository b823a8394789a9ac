/* Device-side evaluation of ops_scalar_math.h, for tests that compare the CUDA
 * build of the header with the CPU build (tests/unit/test_cuda.c).  Not an op. */
#ifndef OPS_CUDA_CHECK_H
#define OPS_CUDA_CHECK_H

#include <stdint.h>

#include "ops_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The functions ops_cuda_scalar_math_eval can run, each float -> float. */
#define OPS_FOREACH_SCALAR_MATH_CHECK(X)                                                 \
    X(HALF_ROUNDTRIP, ops_half_to_float(ops_float_to_half(x)))                            \
    X(BF16_ROUNDTRIP, ops_bfloat16_to_float(ops_float_to_bfloat16(x)))                    \
    X(SIGMOID, ops_math_sigmoid_f32(x))                                                   \
    X(SILU, ops_math_silu_f32(x))                                                         \
    X(GELU, ops_math_gelu_f32(x))                                                         \
    X(GELU_TANH, ops_math_gelu_tanh_f32(x))                                               \
    X(RSQRT, ops_math_rsqrt_f32(x))                                                       \
    X(ROUND_EVEN, ops_math_round_even_f32(x))                                             \
    X(TRUNC, ops_math_trunc_f32(x))                                                       \
    X(FLOOR, ops_math_floor_f32(x))                                                       \
    X(CEIL, ops_math_ceil_f32(x))                                                         \
    X(FRAC, ops_math_frac_f32(x))                                                         \
    X(SIGN, ops_math_sign_f32(x))                                                         \
    X(RELU, ops_math_relu_f32(x))

typedef enum ops_scalar_math_check {
#define OPS_X_(name, expr) OPS_SM_##name,
    OPS_FOREACH_SCALAR_MATH_CHECK(OPS_X_)
#undef OPS_X_
    OPS_SM_COUNT
} ops_scalar_math_check;

/* out[i] = fn(in[i]) computed on cuda:0 (host arrays; copies in and out). */
ops_status ops_cuda_scalar_math_eval(int fn, const float *in, float *out, int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* OPS_CUDA_CHECK_H */

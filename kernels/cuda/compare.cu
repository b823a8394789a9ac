/* Comparison, logical and bitwise kernels (CUDA): kernels/cpu/compare.c on the device
 * -- eq, ne, lt, le, gt, ge, logical_and/or/xor, bitwise_and/or/xor,
 * bitwise_left_shift/right_shift.
 *
 * Comparisons and logical ops read both inputs in the common dtype (float16/bfloat16
 * in float) and write bool; bitwise ops take integral and bool inputs.  The shifts'
 * rules for out-of-range counts are kernels/ops_elementwise_math.h's, the CPU's. */
#include "ops_cuda_loops.cuh"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_compare.h"

/* Every dtype in, bool out / integral and bool in and out. */
#define COMPARE_(IT, F)                                                                  \
    OPS_DISPATCH_ALL((IT)->common_dtype, (IT)->op,                                       \
                     return ops_cuda_elementwise<bool, scalar_t, scalar_t>((IT), F);)
#define BITWISE_(DISPATCH, IT, F)                                                        \
    DISPATCH((IT)->common_dtype, (IT)->op,                                               \
             return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>((IT), F);)

/* A functor of two inputs of any opmath type T, returning R (bool or T). */
#define BINARY_FUNCTOR_(NAME, R, EXPR)                                                   \
    struct NAME {                                                                        \
        template <typename T> OPS_HOST_DEVICE R operator()(T x, T y) const { return EXPR; } \
    };

namespace {
BINARY_FUNCTOR_(eq_op, bool, x == y)
BINARY_FUNCTOR_(ne_op, bool, x != y)
BINARY_FUNCTOR_(lt_op, bool, x < y)
BINARY_FUNCTOR_(le_op, bool, x <= y)
BINARY_FUNCTOR_(gt_op, bool, x > y)
BINARY_FUNCTOR_(ge_op, bool, x >= y)
BINARY_FUNCTOR_(logical_and_op, bool, (x != 0) && (y != 0))
BINARY_FUNCTOR_(logical_or_op, bool, (x != 0) || (y != 0))
BINARY_FUNCTOR_(logical_xor_op, bool, (x != 0) != (y != 0))
BINARY_FUNCTOR_(bitwise_and_op, T, x & y)
BINARY_FUNCTOR_(bitwise_or_op, T, x | y)
BINARY_FUNCTOR_(bitwise_xor_op, T, x ^ y)
BINARY_FUNCTOR_(bitwise_left_shift_op, T, ops_math_lshift(x, y))
BINARY_FUNCTOR_(bitwise_right_shift_op, T, ops_math_rshift(x, y))
} /* namespace */

extern "C" ops_status
eq_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, eq_op());
    return OPS_OK;
}

extern "C" ops_status
ne_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, ne_op());
    return OPS_OK;
}

extern "C" ops_status
lt_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, lt_op());
    return OPS_OK;
}

extern "C" ops_status
le_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, le_op());
    return OPS_OK;
}

extern "C" ops_status
gt_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, gt_op());
    return OPS_OK;
}

extern "C" ops_status
ge_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, ge_op());
    return OPS_OK;
}

extern "C" ops_status
logical_and_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, logical_and_op());
    return OPS_OK;
}

extern "C" ops_status
logical_or_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, logical_or_op());
    return OPS_OK;
}

extern "C" ops_status
logical_xor_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, logical_xor_op());
    return OPS_OK;
}

extern "C" ops_status
bitwise_and_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(OPS_DISPATCH_INTEGRAL_AND_BOOL, it, bitwise_and_op());
    return OPS_OK;
}

extern "C" ops_status
bitwise_or_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(OPS_DISPATCH_INTEGRAL_AND_BOOL, it, bitwise_or_op());
    return OPS_OK;
}

extern "C" ops_status
bitwise_xor_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(OPS_DISPATCH_INTEGRAL_AND_BOOL, it, bitwise_xor_op());
    return OPS_OK;
}

extern "C" ops_status
bitwise_left_shift_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(OPS_DISPATCH_INTEGRAL, it, bitwise_left_shift_op());
    return OPS_OK;
}

extern "C" ops_status
bitwise_right_shift_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(OPS_DISPATCH_INTEGRAL, it, bitwise_right_shift_op());
    return OPS_OK;
}

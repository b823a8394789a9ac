/* Comparison, logical and bitwise kernels (CPU): eq, ne, lt, le, gt, ge,
 * logical_and/or/xor, bitwise_and/or/xor, bitwise_left_shift/right_shift.
 *
 * Comparisons and logical ops (meta bool_out) read both inputs in the common dtype
 * and write bool (an out= of another dtype gets the bools converted by the
 * iterator's write-back); float16/bfloat16 compare in float.  Bitwise ops (meta
 * binary) take integral and bool inputs. */
#include "ops_dispatch.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_compare.h"

/* ---- comparisons ----------------------------------------------------------------- */

/* Every dtype in, bool out. */
#define COMPARE_(IT, EXPR)                                                               \
    OPS_DISPATCH_ALL((IT)->common_dtype, (IT)->op, OPS_BINARY_KERNEL((IT), bool, scalar_t, scalar_t, EXPR);)

ops_status
eq_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, x == y);
    return OPS_OK;
}

ops_status
ne_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, x != y);
    return OPS_OK;
}

ops_status
lt_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, x < y);
    return OPS_OK;
}

ops_status
le_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, x <= y);
    return OPS_OK;
}

ops_status
gt_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, x > y);
    return OPS_OK;
}

ops_status
ge_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, x >= y);
    return OPS_OK;
}

/* ---- logical: nonzero is true (NaN included) ------------------------------------- */

ops_status
logical_and_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, (x != 0) && (y != 0));
    return OPS_OK;
}

ops_status
logical_or_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, (x != 0) || (y != 0));
    return OPS_OK;
}

ops_status
logical_xor_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    COMPARE_(it, (x != 0) != (y != 0));
    return OPS_OK;
}

/* ---- bitwise ---------------------------------------------------------------------- */

#define BITWISE_(IT, EXPR)                                                               \
    OPS_DISPATCH_INTEGRAL_AND_BOOL((IT)->common_dtype, (IT)->op,                         \
                                   OPS_BINARY_KERNEL((IT), scalar_t, scalar_t, scalar_t, EXPR);)

ops_status
bitwise_and_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(it, x & y);
    return OPS_OK;
}

ops_status
bitwise_or_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(it, x | y);
    return OPS_OK;
}

ops_status
bitwise_xor_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BITWISE_(it, x ^ y);
    return OPS_OK;
}

/* Shifts: PyTorch's rules for counts C leaves undefined are ops_math_lshift/rshift's
 * (kernels/ops_elementwise_math.h, shared with kernels/cuda/compare.cu). */

ops_status
bitwise_left_shift_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_INTEGRAL(it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_lshift(x, y)););
    return OPS_OK;
}

ops_status
bitwise_right_shift_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_INTEGRAL(it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_rshift(x, y)););
    return OPS_OK;
}

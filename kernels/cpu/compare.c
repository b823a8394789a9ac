/* Comparison, logical and bitwise kernels (CPU): eq, ne, lt, le, gt, ge,
 * logical_and/or/xor, bitwise_and/or/xor, bitwise_left_shift/right_shift.
 *
 * Comparisons and logical ops (meta bool_out) read both inputs in the common dtype
 * and write bool (an out= of another dtype gets the bools converted by the
 * iterator's write-back); float16/bfloat16 compare in float.  Bitwise ops (meta
 * binary) take integral and bool inputs. */
#include "cpu_util.h"
#include "ops_kernels.h"

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

/* Shifts, PyTorch's rules for counts C leaves undefined: a left shift by a negative
 * count or by the width or more gives 0; a right shift by such a count gives what
 * shifting by the width minus the sign bit gives (all sign bits for signed types,
 * 0 for uint8).  The count is read as signed (uint8 counts >= 128 are negative). */
#define DEFINE_SHIFTS(T, UT, ST, S, SIGNED)                                              \
    static inline T lshift_##S(T a, T b)                                                \
    {                                                                                    \
        const int width = (int)sizeof(T) * 8;                                            \
        if ((ST)b < 0 || (ST)b >= width)                                                 \
            return 0;                                                                    \
        return (T)((UT)a << (ST)b);                                                      \
    }                                                                                    \
    static inline T rshift_##S(T a, T b)                                                \
    {                                                                                    \
        const int max_shift = (int)sizeof(T) * 8 - (SIGNED);                             \
        if ((ST)b < 0 || (ST)b >= max_shift)                                             \
            return (T)(a >> max_shift);                                                  \
        return (T)(a >> (ST)b);                                                          \
    }

DEFINE_SHIFTS(uint8_t, uint8_t, int8_t, u8, 0)
DEFINE_SHIFTS(int8_t, uint8_t, int8_t, i8, 1)
DEFINE_SHIFTS(int16_t, uint16_t, int16_t, i16, 1)
DEFINE_SHIFTS(int32_t, uint32_t, int32_t, i32, 1)
DEFINE_SHIFTS(int64_t, uint64_t, int64_t, i64, 1)

#define SHIFT_OP(NAME, a, b)                                                             \
    _Generic((a), uint8_t: NAME##_u8, int8_t: NAME##_i8, int16_t: NAME##_i16,            \
             int32_t: NAME##_i32, int64_t: NAME##_i64)((a), (b))

ops_status
bitwise_left_shift_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_INTEGRAL(it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, SHIFT_OP(lshift, x, y)););
    return OPS_OK;
}

ops_status
bitwise_right_shift_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_INTEGRAL(it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, SHIFT_OP(rshift, x, y)););
    return OPS_OK;
}

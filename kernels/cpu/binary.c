/* Binary arithmetic kernels (CPU): add, sub, mul, div (true, trunc, floor),
 * remainder, fmod, pow, maximum, minimum, atan2.
 *
 * The meta has converted both inputs to it->common_dtype (operands 1 and 2) and
 * chosen the output's dtype, so each kernel dispatches once on the common dtype,
 * over the dtypes its schema entry declares (OPS_DISPATCH_DECLARED, ops_kernels_binary.h) where
 * one switch covers them; the generated glue has refused the others already.
 * The per-element arithmetic (integer division and remainder with PyTorch's rules,
 * floor division of floats, powi, NaN-propagating maximum) is
 * kernels/ops_elementwise_math.h's, and the checks are this file's exported
 * ops_check_* (runtime/dispatch/ops_elementwise_check.h): kernels/cuda/binary.cu uses both.
 * A zero integer divisor is reported before anything is written.  float16/bfloat16
 * compute in float. */
#include <math.h>
#include <string.h>

#include "ops_dispatch.h"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_binary.h"

/* ---- shared checks ------------------------------------------------------------- */

ops_status
ops_check_scalar_fits(const char *op, const char *arg, ops_scalar s, ops_dtype dt)
{
    bool ok = true;
    double lo = 0, hi = 0;
    switch (dt) {
    case OPS_BOOL:
        return OPS_OK;
    case OPS_UINT8:
        lo = -255.0, hi = 255.0;
        break;
    case OPS_INT8:
        lo = -128.0, hi = 127.0;
        break;
    case OPS_INT16:
        lo = -32768.0, hi = 32767.0;
        break;
    case OPS_INT32:
        lo = -2147483648.0, hi = 2147483647.0;
        break;
    case OPS_INT64:
        if (s.kind == OPS_SCALAR_FLOAT)
            ok = s.v.f >= -9223372036854775808.0 && s.v.f < 9223372036854775808.0;
        goto done;
    case OPS_FLOAT16:
        hi = 65504.0;
        break;
    case OPS_BFLOAT16:
        hi = 3.3895313892515355e38;
        break;
    case OPS_FLOAT32:
        hi = 3.4028234663852886e38;
        break;
    default:
        return OPS_OK;
    }
    if (ops_dtype_is_floating(dt)) {
        if (s.kind == OPS_SCALAR_FLOAT && isfinite(s.v.f))
            ok = s.v.f >= -hi && s.v.f <= hi;
    } else if (s.kind == OPS_SCALAR_FLOAT) {
        ok = s.v.f >= lo && s.v.f <= hi; /* false for NaN */
    } else if (s.kind == OPS_SCALAR_INT) {
        ok = s.v.i >= (int64_t)lo && s.v.i <= (int64_t)hi;
    }
done:
    if (!ok)
        return ops_fail(OPS_ERR_VALUE, "%s: value of '%s' cannot be converted to type %s without overflow", op,
                        arg, ops_dtype_name(dt));
    return OPS_OK;
}

ops_status
ops_check_alpha(const ops_iter *it, ops_scalar alpha)
{
    const ops_dtype dt = it->common_dtype;
    if (alpha.kind == OPS_SCALAR_BOOL && dt != OPS_BOOL)
        return ops_fail(OPS_ERR_VALUE, "%s: Boolean alpha only supported for Boolean results.", it->op);
    if (alpha.kind == OPS_SCALAR_FLOAT && !ops_dtype_is_floating(dt))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: For integral input tensors, argument alpha must not be a floating point number.",
                        it->op);
    return ops_check_scalar_fits(it->op, "alpha", alpha, ops_opmath_dtype(dt));
}

ops_status
ops_check_sub(const ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    if (self->dtype == OPS_BOOL && other->dtype == OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                        "`^` or `logical_xor()` operator instead.",
                        it->op);
    if (self->dtype == OPS_BOOL || other->dtype == OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                        "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                        it->op);
    return ops_check_alpha(it, alpha);
}

ops_status
ops_check_rounding_mode(const char *op, const char *rounding_mode, bool *trunc)
{
    *trunc = strcmp(rounding_mode, "trunc") == 0;
    if (!*trunc && strcmp(rounding_mode, "floor") != 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", op,
                        rounding_mode);
    return OPS_OK;
}

ops_status
ops_check_division_dtype(const ops_iter *it)
{
    if (it->common_dtype == OPS_BOOL)
        return ops_fail_dtype(it->op, OPS_BOOL, OPS_MASK_NUMERIC);
    return OPS_OK;
}

ops_status
ops_fail_zero_division(const char *op)
{
    return ops_fail(OPS_ERR_RUNTIME, "%s: ZeroDivisionError (integer division or remainder by zero)", op);
}

ops_status
ops_check_pow(const ops_iter *it, const ops_tensor *exponent)
{
    const ops_dtype dt = it->common_dtype;
    if (dt == OPS_BOOL)
        return ops_fail_dtype(it->op, OPS_BOOL, OPS_MASK_NUMERIC);
    /* pow(int tensor, negative int Scalar) is refused, as PyTorch's pow.Tensor_Scalar;
     * negative exponents inside a tensor follow powi's rules instead.  A wrapped
     * Scalar lives in host memory whatever the op's device. */
    if (!ops_dtype_is_floating(dt) && (exponent->flags & OPS_TENSOR_WRAPPED_NUMBER) &&
        ops_dtype_is_integral(exponent->dtype, true)) {
        const ops_scalar e = ops_scalar_load(ops_tensor_data_ptr(exponent), exponent->dtype);
        if (e.kind == OPS_SCALAR_INT && e.v.i < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: Integers to negative integer powers are not allowed.", it->op);
    }
    return OPS_OK;
}

/* Integer division and remainder by zero, scanned in the divisor (operand 2). */
static ops_status
check_divisor(const ops_iter *it)
{
    if (!ops_dtype_is_integral(it->common_dtype, true))
        return OPS_OK;
    bool found = false;
    const size_t size = ops_dtype_size(it->dtypes[2]);
    OPS_ITER_LOOP(it, data, strides, n, {
        const char *p = data[2];
        const int64_t s = strides[2];
        bool zero = false;
        switch (size) {
        case 1:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint8_t *)(p + i * s) == 0;
            break;
        case 2:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint16_t *)(p + i * s) == 0;
            break;
        case 4:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint32_t *)(p + i * s) == 0;
            break;
        default:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint64_t *)(p + i * s) == 0;
            break;
        }
        if (zero)
            __atomic_store_n(&found, true, __ATOMIC_RELAXED);
    });
    if (found)
        return ops_fail_zero_division(it->op);
    return OPS_OK;
}

/* The body of the rounding divisions and remainders: bool is refused, integer
 * divisors are checked for zero before anything is written, floats follow IEEE. */
#define DIVISION_KERNEL_(IT, FN)                                                            \
    do {                                                                                    \
        ops_status st_ = ops_check_division_dtype(IT);                                      \
        if (st_ != OPS_OK)                                                                  \
            return st_;                                                                     \
        if (ops_dtype_is_floating((IT)->common_dtype)) {                                    \
            OPS_DISPATCH_FLOATING((IT)->common_dtype, (IT)->op,                             \
                                  OPS_BINARY_KERNEL(IT, scalar_t, scalar_t, scalar_t, FN(x, y)););  \
            return OPS_OK;                                                                  \
        }                                                                                   \
        if ((st_ = check_divisor(IT)) != OPS_OK)                                            \
            return st_;                                                                     \
        OPS_DISPATCH_INTEGRAL((IT)->common_dtype, (IT)->op,                                 \
                              OPS_BINARY_KERNEL(IT, scalar_t, scalar_t, scalar_t, FN(x, y)););      \
        return OPS_OK;                                                                      \
    } while (0)

/* ---- add, sub, mul -------------------------------------------------------------- */

ops_status
add_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    (void)self;
    (void)other;
    const ops_status st = ops_check_alpha(it, alpha);
    if (st != OPS_OK)
        return st;
    OPS_DISPATCH_DECLARED(ADD_OUT, it->common_dtype, it->op, {
        const opmath_t a = OPS_SCALAR_AS(opmath_t, alpha);
        OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x + a * y);
    });
    return OPS_OK;
}

ops_status
sub_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    const ops_status st = ops_check_sub(it, self, other, alpha);
    if (st != OPS_OK)
        return st;
    OPS_DISPATCH_DECLARED(SUB_OUT, it->common_dtype, it->op, {
        const opmath_t a = OPS_SCALAR_AS(opmath_t, alpha);
        OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x - a * y);
    });
    return OPS_OK;
}

ops_status
mul_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    if (it->common_dtype == OPS_BOOL) {
        OPS_BINARY_KERNEL(it, bool, bool, bool, x && y);
        return OPS_OK;
    }
    OPS_DISPATCH_NUMERIC(it->common_dtype, it->op, OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x * y););
    return OPS_OK;
}

/* ---- division ------------------------------------------------------------------- */

ops_status
div_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_DECLARED(DIV_OUT, it->common_dtype, it->op, OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x / y););
    return OPS_OK;
}

ops_status
div_out_mode_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, const char *rounding_mode)
{
    if (rounding_mode == NULL)
        return div_out_cpu(it, self, other);
    bool trunc_mode;
    const ops_status st = ops_check_rounding_mode(it->op, rounding_mode, &trunc_mode);
    if (st != OPS_OK)
        return st;
    if (trunc_mode)
        DIVISION_KERNEL_(it, ops_math_div_trunc);
    DIVISION_KERNEL_(it, ops_math_div_floor);
}

ops_status
remainder_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    DIVISION_KERNEL_(it, ops_math_remainder);
}

ops_status
fmod_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    DIVISION_KERNEL_(it, ops_math_fmod);
}

/* ---- pow, maximum, minimum, atan2 ---------------------------------------------- */

ops_status
pow_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *exponent)
{
    (void)self;
    const ops_status st = ops_check_pow(it, exponent);
    if (st != OPS_OK)
        return st;
    OPS_DISPATCH_DECLARED(POW_OUT, it->common_dtype, it->op,
                         OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_pow(x, y)););
    return OPS_OK;
}

ops_status
maximum_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_DECLARED(MAXIMUM_OUT, it->common_dtype, it->op,
                     OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_max(x, y)););
    return OPS_OK;
}

ops_status
minimum_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_DECLARED(MINIMUM_OUT, it->common_dtype, it->op,
                     OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_min(x, y)););
    return OPS_OK;
}

ops_status
atan2_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_DECLARED(ATAN2_OUT, it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_atan2(x, y)););
    return OPS_OK;
}

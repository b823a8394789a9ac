/* The argument checks of the elementwise ops, written once for every device.
 *
 * Each ops_check_<op> here is named by its structured entry's `check:` key in
 * ops/native_functions.yaml; the generated glue calls it after the meta has built the
 * iterator and the entry's declared dtypes (`dtypes:`) have been checked, and before
 * the kernel (docs/codegen.md "Argument checks"), so the CPU and CUDA kernels only
 * compute.  The prototypes are generated (ops_kernels_elementwise_check.h) from the
 * schema: the iterator, read-only, then the entry's non-out arguments.  A dtype the
 * entry's `dtypes:` refuses never reaches a check, so none repeats that refusal.
 * Checks that need the data (an integer division by zero) stay in each backend, with
 * ops_fail_zero_division's message. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops_dispatch.h"
#include "kernels/elementwise_check.h"
#include "ops_kernels_elementwise_check.h"

/* PyTorch's Scalar::to<T>() check: OPS_ERR_VALUE "op: value of 'arg' cannot be
 * converted to type T without overflow" unless s is representable in dt. */
static ops_status
check_scalar_fits(const char *op, const char *arg, ops_scalar s, ops_dtype dt)
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
ops_fail_zero_division(const char *op)
{
    return ops_fail(OPS_ERR_RUNTIME, "%s: ZeroDivisionError (integer division or remainder by zero)", op);
}

/* ---- binary -------------------------------------------------------------------- */

/* add/sub's alpha: bool only for bool results, no float alpha for integers, and it
 * must fit the computation dtype. */
static ops_status
check_alpha(const ops_iter *it, ops_scalar alpha)
{
    const ops_dtype dt = it->common_dtype;
    if (alpha.kind == OPS_SCALAR_BOOL && dt != OPS_BOOL)
        return ops_fail(OPS_ERR_VALUE, "%s: Boolean alpha only supported for Boolean results.", it->op);
    if (alpha.kind == OPS_SCALAR_FLOAT && !ops_dtype_is_floating(dt))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: For integral input tensors, argument alpha must not be a floating point number.",
                        it->op);
    return check_scalar_fits(it->op, "alpha", alpha, ops_opmath_dtype(dt));
}

ops_status
ops_check_add(const ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    (void)self;
    (void)other;
    return check_alpha(it, alpha);
}

/* sub: no bool operand, with PyTorch's message (two bools are refused by the entry's
 * dtypes, with theirs; one bool beside a number is not: the common dtype is the
 * number's), then the alpha check. */
ops_status
ops_check_sub(const ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    if (self->dtype == OPS_BOOL || other->dtype == OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                        "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                        it->op);
    return check_alpha(it, alpha);
}

/* pow(int tensor, negative int Scalar) is refused, as PyTorch's pow.Tensor_Scalar;
 * negative exponents inside a tensor follow powi's rules instead.  A wrapped Scalar
 * lives in host memory whatever the op's device. */
ops_status
ops_check_pow(const ops_iter *it, const ops_tensor *self, const ops_tensor *exponent)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (!ops_dtype_is_floating(dt) && (exponent->flags & OPS_TENSOR_WRAPPED_NUMBER) &&
        ops_dtype_is_integral(exponent->dtype, true)) {
        const ops_scalar e = ops_scalar_load(ops_tensor_data_ptr(exponent), exponent->dtype);
        if (e.kind == OPS_SCALAR_INT && e.v.i < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: Integers to negative integer powers are not allowed.", it->op);
    }
    return OPS_OK;
}

/* ---- ternary ------------------------------------------------------------------- */

/* clamp with Scalar bounds (its entry declares every dtype): bool refused, the bounds
 * must fit. */
ops_status
ops_check_clamp(const ops_iter *it, const ops_tensor *self, const ops_scalar *min, const ops_scalar *max)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (dt == OPS_BOOL)
        return ops_fail_dtype(it->op, OPS_BOOL, OPS_MASK_NUMERIC);
    ops_status st = OPS_OK;
    if (min && (st = check_scalar_fits(it->op, "min", *min, ops_opmath_dtype(dt))) != OPS_OK)
        return st;
    if (max && (st = check_scalar_fits(it->op, "max", *max, ops_opmath_dtype(dt))) != OPS_OK)
        return st;
    return OPS_OK;
}

/* lerp: end, and a weight that is not a wrapped Scalar, of self's dtype. */
ops_status
ops_check_lerp(const ops_iter *it, const ops_tensor *self, const ops_tensor *end, const ops_tensor *weight)
{
    if (end->dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected dtype %s for `end` but got dtype %s", it->op,
                        ops_dtype_name(self->dtype), ops_dtype_name(end->dtype));
    if (!(weight->flags & OPS_TENSOR_WRAPPED_NUMBER) && weight->dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected dtype %s for `weight` but got dtype %s", it->op,
                        ops_dtype_name(self->dtype), ops_dtype_name(weight->dtype));
    return OPS_OK;
}

bool
ops_lerp_scalar_weight(const ops_tensor *weight, double *value)
{
    const bool wrapped = (weight->flags & OPS_TENSOR_WRAPPED_NUMBER) != 0;
    /* A wrapped Scalar lives in host memory whatever the op's device. */
    *value = wrapped ? ops_scalar_to_double(ops_scalar_load(ops_tensor_data_ptr(weight), weight->dtype)) : 0.0;
    return wrapped;
}

/* addcmul's value must fit the computation dtype (bool is refused by its dtypes). */
ops_status
ops_check_addcmul(const ops_iter *it, const ops_tensor *self, const ops_tensor *tensor1, const ops_tensor *tensor2,
                  ops_scalar value)
{
    (void)self;
    (void)tensor1;
    (void)tensor2;
    return check_scalar_fits(it->op, "value", value, ops_opmath_dtype(it->common_dtype));
}

/* addcdiv: two integer factors are refused even when self makes the result floating
 * (its dtypes see only the common dtype); then the value must fit. */
ops_status
ops_check_addcdiv(const ops_iter *it, const ops_tensor *self, const ops_tensor *tensor1, const ops_tensor *tensor2,
                  ops_scalar value)
{
    (void)self;
    if (ops_dtype_is_integral(tensor1->dtype, true) && ops_dtype_is_integral(tensor2->dtype, true))
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Integer division with addcdiv is no longer supported, and in a future release "
                        "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                        "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to("
                        "input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float "
                        "inputs. The future addcdiv behavior is just the latter implementation: (input + value "
                        "* tensor1 / tensor2), for all dtypes.",
                        it->op);
    return check_scalar_fits(it->op, "value", value, ops_opmath_dtype(it->common_dtype));
}

/* ---- unary --------------------------------------------------------------------- */

/* gelu's approximate: NULL or "none", or "tanh". */
ops_status
ops_check_gelu(const ops_iter *it, const ops_tensor *self, const char *approximate)
{
    (void)it;
    (void)self;
    if (approximate == NULL || strcmp(approximate, "none") == 0 || strcmp(approximate, "tanh") == 0)
        return OPS_OK;
    return ops_fail(OPS_ERR_VALUE, "gelu: approximate argument must be either none or tanh, got '%s'",
                    approximate);
}

bool
ops_gelu_tanh_form(const char *approximate)
{
    return approximate != NULL && strcmp(approximate, "tanh") == 0;
}

double
ops_nan_to_num_limit(ops_dtype dt)
{
    switch (dt) {
    case OPS_FLOAT16:
        return 65504.0;
    case OPS_BFLOAT16:
        return 3.3895313892515355e38;
    case OPS_FLOAT32:
        return (double)FLT_MAX;
    default:
        return DBL_MAX;
    }
}

/* ---- activations --------------------------------------------------------------- */

/* celu: PyTorch refuses alpha = 0 (celu divides by it). */
ops_status
ops_check_celu(const ops_iter *it, const ops_tensor *self, ops_scalar alpha)
{
    (void)self;
    if (ops_scalar_to_double(alpha) == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: ZeroDivisionError: alpha must not be 0", it->op);
    return OPS_OK;
}

/* hardtanh is PyTorch's clamp with legacy rules: integer inputs take the limits
 * truncated to int64 (toLong), and uint8 refuses negative limits (bool is refused by
 * its dtypes). */
ops_status
ops_check_hardtanh(const ops_iter *it, const ops_tensor *self, ops_scalar min_val, ops_scalar max_val)
{
    (void)self;
    if (it->common_dtype == OPS_UINT8 && (ops_scalar_to_int64(min_val) < 0 || ops_scalar_to_int64(max_val) < 0))
        return ops_fail(OPS_ERR_VALUE, "%s: cannot do hardtanh on an unsigned type with negative limits", it->op);
    return OPS_OK;
}

/* PyTorch's Scalar::to<T>() for an integer T (checked_convert): a value outside T's
 * range is an error naming T as PyTorch's message does; fractions truncate (the
 * kernel converts with ops_scalar_to_int64). */
static ops_status
threshold_int_arg(const char *op, ops_dtype dt, ops_scalar s)
{
    static const struct {
        int64_t lo, hi;
        const char *name;
    } lim[] = {
        [OPS_UINT8] = {0, 255, "uint8_t"},           [OPS_INT8] = {-128, 127, "int8_t"},
        [OPS_INT16] = {-32768, 32767, "int16_t"},    [OPS_INT32] = {INT32_MIN, INT32_MAX, "int"},
        [OPS_INT64] = {INT64_MIN, INT64_MAX, "int64_t"},
    };
    bool bad;
    if (s.kind == OPS_SCALAR_FLOAT)
        bad = !(s.v.f > (double)lim[dt].lo - 1.0 && s.v.f < (double)lim[dt].hi + 1.0);
    else
        bad = ops_scalar_to_int64(s) < lim[dt].lo || ops_scalar_to_int64(s) > lim[dt].hi;
    if (bad)
        return ops_fail(OPS_ERR_VALUE, "%s: value cannot be converted to type %s without overflow", op,
                        lim[dt].name);
    return OPS_OK;
}

/* threshold (numeric dtypes, by its entry): for an integer dtype, threshold and value
 * must convert to it. */
ops_status
ops_check_threshold(const ops_iter *it, const ops_tensor *self, ops_scalar threshold, ops_scalar value)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (!ops_dtype_is_integral(dt, false))
        return OPS_OK;
    const ops_status st = threshold_int_arg(it->op, dt, threshold);
    if (st != OPS_OK)
        return st;
    return threshold_int_arg(it->op, dt, value);
}

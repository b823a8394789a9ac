/* Neural-network activation kernels (CPU): leaky_relu, elu, selu, celu, softplus,
 * hardtanh, hardsigmoid, hardswish, mish, softsign, log_sigmoid, threshold.
 *
 * All are structured ops with meta: unary (output dtype = input dtype) over the
 * floating dtypes, as PyTorch's CPU kernels; hardtanh and threshold also take the
 * integer dtypes, as PyTorch's do.  Their Scalar arguments are the
 * kernel's own parameters, not operands: they never take part in type promotion,
 * and are converted once to opmath_t (float for float16/bfloat16/float32, double
 * for float64) before the loop, as PyTorch converts them to its opmath type.  The
 * formulas and their evaluation order follow PyTorch's scalar kernels
 * (aten/src/ATen/native/cpu/Activation.cpp), so NaN, infinities and signed zeros
 * come out the same way. */
#include <math.h>
#include <stdint.h>

#include "ops_dispatch.h"
#include "ops_kernels.h"

/* The float or double libm function, picked by the type of x (opmath_t). */
#define FP_(x, F32, F64) _Generic((x), float: F32, double: F64)(x)

/* A kernel over the floating dtypes with output = input dtype.  PRE declares the
 * opmath_t parameters the expression uses; EXPR is in terms of x. */
#define ACT_KERNEL_(IT, PRE, EXPR)                                                       \
    do {                                                                                 \
        OPS_DISPATCH_FLOATING((IT)->common_dtype, (IT)->op, {                            \
            PRE;                                                                         \
            OPS_UNARY_KERNEL((IT), scalar_t, scalar_t, EXPR);                            \
        });                                                                              \
        return OPS_OK;                                                                   \
    } while (0)

/* selu's constants (Klambauer et al. 2017), the values PyTorch uses. */
#define SELU_ALPHA_ 1.6732632423543772848170429916717
#define SELU_SCALE_ 1.0507009873554804934193349852946

/* ---- per-element helpers (float and double) ------------------------------------ */

/* elu: x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale. */
static inline float
elu_f32(float x, float negcoef, float poscoef, float negiptcoef)
{
    return x <= 0 ? expm1f(x * negiptcoef) * negcoef : x * poscoef;
}

static inline double
elu_f64(double x, double negcoef, double poscoef, double negiptcoef)
{
    return x <= 0 ? expm1(x * negiptcoef) * negcoef : x * poscoef;
}

#define ELU_(x, n, p, i) _Generic((x), float: elu_f32, double: elu_f64)(x, n, p, i)

/* softplus: linear above the threshold (x * beta > threshold), where
 * log1p(exp(x * beta)) / beta equals x to working precision. */
static inline float
softplus_f32(float x, float beta, float threshold)
{
    return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta;
}

static inline double
softplus_f64(double x, double beta, double threshold)
{
    return x * beta > threshold ? x : log1p(exp(x * beta)) / beta;
}

#define SOFTPLUS_(x, b, t) _Generic((x), float: softplus_f32, double: softplus_f64)(x, b, t)

/* mish: x * tanh(softplus(x)). */
static inline float
mish_f32(float x)
{
    return x * tanhf(log1pf(expf(x)));
}

static inline double
mish_f64(double x)
{
    return x * tanh(log1p(exp(x)));
}

/* log_sigmoid: min(x, 0) - log1p(exp(-|x|)), which neither overflows exp for large
 * |x| nor loses the result to log(1) for large positive x. */
static inline float
log_sigmoid_f32(float x)
{
    return (x < 0 ? x : 0.0f) - log1pf(expf(-fabsf(x)));
}

static inline double
log_sigmoid_f64(double x)
{
    return (x < 0 ? x : 0.0) - log1p(exp(-fabs(x)));
}

/* ---- ops ----------------------------------------------------------------------- */

ops_status
leaky_relu_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar negative_slope)
{
    (void)self;
    const double slope = ops_scalar_to_double(negative_slope);
    ACT_KERNEL_(it, const opmath_t s = (opmath_t)slope, x > 0 ? x : x * s);
}

/* elu, selu and celu share the kernel; PyTorch passes alpha * scale as one
 * coefficient, so the product is formed in double, then rounded to opmath_t. */
static ops_status
elu_common(ops_iter *it, double alpha, double scale, double input_scale)
{
    const double negcoef_d = alpha * scale;
    ACT_KERNEL_(it,
                const opmath_t negcoef = (opmath_t)negcoef_d;
                const opmath_t poscoef = (opmath_t)scale;
                const opmath_t negiptcoef = (opmath_t)input_scale,
                ELU_(x, negcoef, poscoef, negiptcoef));
}

ops_status
elu_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar alpha, ops_scalar scale, ops_scalar input_scale)
{
    (void)self;
    return elu_common(it, ops_scalar_to_double(alpha), ops_scalar_to_double(scale),
                      ops_scalar_to_double(input_scale));
}

ops_status
selu_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    return elu_common(it, SELU_ALPHA_, SELU_SCALE_, 1.0);
}

ops_status
celu_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar alpha)
{
    (void)self;
    const double a = ops_scalar_to_double(alpha);
    /* celu(x, alpha) = elu(x, alpha, 1, 1 / alpha); PyTorch refuses alpha = 0. */
    if (a == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: ZeroDivisionError: alpha must not be 0", it->op);
    return elu_common(it, a, 1.0, 1.0 / a);
}

ops_status
softplus_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar beta, ops_scalar threshold)
{
    (void)self;
    const double b = ops_scalar_to_double(beta), t = ops_scalar_to_double(threshold);
    ACT_KERNEL_(it, const opmath_t bb = (opmath_t)b; const opmath_t tt = (opmath_t)t,
                SOFTPLUS_(x, bb, tt));
}

/* hardtanh is PyTorch's clamp with legacy rules: bool is refused, integer inputs take
 * the limits truncated to int64 (toLong) and uint8 refuses negative limits; the
 * limits never promote the input. */
ops_status
hardtanh_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar min_val, ops_scalar max_val)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (dt == OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE, "%s: Bool inputs not supported for hardtanh", it->op);
    if (ops_dtype_is_integral(dt, false)) {
        const int64_t lo = ops_scalar_to_int64(min_val), hi = ops_scalar_to_int64(max_val);
        if (dt == OPS_UINT8 && (lo < 0 || hi < 0))
            return ops_fail(OPS_ERR_VALUE, "%s: cannot do hardtanh on an unsigned type with negative limits",
                            it->op);
        /* compared in int64 so limits outside the narrow type clamp nothing */
        OPS_DISPATCH_INTEGRAL(dt, it->op, {
            OPS_UNARY_KERNEL(it, scalar_t, scalar_t,
                             (scalar_t)(((int64_t)x < lo ? lo : (int64_t)x) > hi ? hi
                                                                               : ((int64_t)x < lo ? lo : (int64_t)x)));
        });
        return OPS_OK;
    }
    const double lo_d = ops_scalar_to_double(min_val), hi_d = ops_scalar_to_double(max_val);
    /* clamp as PyTorch's: max with min_val first, then min with max_val (so
     * min_val > max_val gives max_val); NaN passes both comparisons. */
    ACT_KERNEL_(it, const opmath_t lo = (opmath_t)lo_d; const opmath_t hi = (opmath_t)hi_d,
                (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x));
}

ops_status
hardsigmoid_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    /* min(max(x + 3, 0), 6) / 6, NaN propagating. */
    ACT_KERNEL_(it, const opmath_t three = 3; const opmath_t six = 6,
                ((x + three < 0 ? 0 : x + three) > six ? six : (x + three < 0 ? 0 : x + three)) / six);
}

ops_status
hardswish_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    /* x * min(max(x + 3, 0), 6) / 6, evaluated left to right as PyTorch's. */
    ACT_KERNEL_(it, const opmath_t three = 3; const opmath_t six = 6,
                x * ((x + three < 0 ? 0 : x + three) > six ? six : (x + three < 0 ? 0 : x + three)) / six);
}

ops_status
mish_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_KERNEL_(it, (void)0, FP_(x, mish_f32, mish_f64));
}

ops_status
softsign_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_KERNEL_(it, (void)0, x / (1 + FP_(x, fabsf, fabs)));
}

ops_status
log_sigmoid_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_KERNEL_(it, (void)0, FP_(x, log_sigmoid_f32, log_sigmoid_f64));
}

/* PyTorch's Scalar::to<T>() for an integer T (checked_convert): a value outside T's
 * range is an error naming T as PyTorch's message does; fractions truncate. */
static ops_status
threshold_int_arg(const char *op, ops_dtype dt, ops_scalar s, int64_t *v)
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
    *v = ops_scalar_to_int64(s);
    return OPS_OK;
}

/* threshold: x <= threshold ? value : x, over every numeric dtype (PyTorch's CPU
 * set); threshold and value are converted to the input's type first. */
ops_status
threshold_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar threshold, ops_scalar value)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (!(OPS_MASK_NUMERIC & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(it->op, dt, OPS_MASK_NUMERIC);
    if (ops_dtype_is_integral(dt, false)) {
        int64_t t, v;
        ops_status st;
        if ((st = threshold_int_arg(it->op, dt, threshold, &t)) != OPS_OK ||
            (st = threshold_int_arg(it->op, dt, value, &v)) != OPS_OK)
            return st;
        OPS_DISPATCH_INTEGRAL(dt, it->op, {
            const scalar_t tt = (scalar_t)t, vv = (scalar_t)v;
            OPS_UNARY_KERNEL(it, scalar_t, scalar_t, x <= tt ? vv : x);
        });
        return OPS_OK;
    }
    const double t = ops_scalar_to_double(threshold), v = ops_scalar_to_double(value);
    ACT_KERNEL_(it, const opmath_t tt = (opmath_t)t; const opmath_t vv = (opmath_t)v,
                x <= tt ? vv : x);
}

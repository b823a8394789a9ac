/* Unary elementwise kernels (CUDA): kernels/cpu/unary.c on the device -- neg, abs,
 * sign, relu, the powers, exponentials, logarithms, trigonometric and hyperbolic
 * functions, sigmoid, erf, silu, gelu, rounding, logical/bitwise not, isnan/isinf/
 * isfinite, nan_to_num.
 *
 * The meta has chosen the dtypes exactly as for the CPU kernel (unary, unary_float,
 * bool_out), so each kernel dispatches on it->common_dtype (the input as the loop
 * sees it): over the dtypes its schema entry declares (UNARY_DECLARED_, ops_kernels_unary.h,
 * the set the CPU kernel uses too) where one switch covers them, else with the CPU
 * kernel's own dtype sets and error names.  The argument checks ran in the glue (the
 * entries' dtypes and `check:` functions), and the per-element functions (libm picks
 * included) are kernels/ops_elementwise_math.h's and ops_scalar_math.h's, so the two backends
 * compute the same expressions (the device's libm differs from glibc's by a few ulps
 * for the transcendental functions). */
#include "ops_cuda_loops.cuh"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_unary.h"

/* Output and input in the input's dtype / output bool. */
#define UNARY_(DISPATCH, IT, NAME, F)                                                    \
    DISPATCH((IT)->common_dtype, NAME, return ops_cuda_elementwise<scalar_t, scalar_t>((IT), F);)
/* Over the dtypes the schema entry declares (ENTRY: SQRT_OUT for sqrt.out, generated
 * ops_kernels_unary.h), output and input in the input's dtype / output bool. */
#define UNARY_DECLARED_(ENTRY, IT, NAME, F)                                              \
    OPS_DISPATCH_DECLARED(ENTRY, (IT)->common_dtype, NAME,                               \
                          return ops_cuda_elementwise<scalar_t, scalar_t>((IT), F);)
#define UNARY_TO_BOOL_DECLARED_(ENTRY, IT, NAME, F)                                      \
    OPS_DISPATCH_DECLARED(ENTRY, (IT)->common_dtype, NAME,                               \
                          return ops_cuda_elementwise<bool, scalar_t>((IT), F);)
#define UNARY_TO_BOOL_(DISPATCH, IT, NAME, F)                                            \
    DISPATCH((IT)->common_dtype, NAME, return ops_cuda_elementwise<bool, scalar_t>((IT), F);)

/* The signed integer dtypes (abs, relu, sign: uint8 has its own case), with the
 * dtype set the CPU kernel names in its error. */
#define OPS_DISPATCH_SIGNED_NUMERIC_(DT, NAME, ...)                                      \
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_NUMERIC,                                       \
                       OPS_CASE_INT8(__VA_ARGS__) OPS_CASE_INT16(__VA_ARGS__)            \
                           OPS_CASE_INT32(__VA_ARGS__) OPS_CASE_INT64(__VA_ARGS__))
#define OPS_DISPATCH_SIGNED_ALL_(DT, NAME, ...)                                          \
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_ALL,                                           \
                       OPS_CASE_INT8(__VA_ARGS__) OPS_CASE_INT16(__VA_ARGS__)            \
                           OPS_CASE_INT32(__VA_ARGS__) OPS_CASE_INT64(__VA_ARGS__))
/* bitwise_not's integer cases (bool has its own), naming bool as accepted. */
#define OPS_DISPATCH_INTEGRAL_ONLY_AND_BOOL_(DT, NAME, ...)                              \
    OPS_DISPATCH_CASES(DT, NAME, OPS_MASK_INTEGRAL | OPS_DTYPE_BIT(OPS_BOOL), OPS_CASES_INTEGRAL_(__VA_ARGS__))

namespace {

/* A functor applying an expression in x, for every opmath type. */
#define UNARY_FUNCTOR_(NAME, EXPR)                                                       \
    struct NAME {                                                                        \
        template <typename T> OPS_HOST_DEVICE T operator()(T x) const { return EXPR; }   \
    };

UNARY_FUNCTOR_(identity_op, x)
UNARY_FUNCTOR_(neg_op, -x)
UNARY_FUNCTOR_(abs_signed_op, x < 0 ? -x : x)
UNARY_FUNCTOR_(sign_uint_op, x != 0)
UNARY_FUNCTOR_(sign_signed_op, (x > 0) - (x < 0))
UNARY_FUNCTOR_(relu_signed_op, x < 0 ? 0 : x)
UNARY_FUNCTOR_(square_op, x * x)
UNARY_FUNCTOR_(reciprocal_op, (T)1 / x)
UNARY_FUNCTOR_(bitwise_not_op, ~x)
UNARY_FUNCTOR_(bool_not_op, !x)

struct logical_not_op {
    template <typename T> OPS_HOST_DEVICE bool operator()(T x) const { return !x; }
};

struct constant_bool_op {
    bool value;
    template <typename T> OPS_HOST_DEVICE bool operator()(T) const { return value; }
};

struct isnan_op {
    template <typename T> OPS_HOST_DEVICE bool operator()(T x) const { return isnan(x); }
};

struct isinf_op {
    template <typename T> OPS_HOST_DEVICE bool operator()(T x) const { return isinf(x); }
};

struct isfinite_op {
    template <typename T> OPS_HOST_DEVICE bool operator()(T x) const { return isfinite(x); }
};

template <typename T> struct nan_to_num_op {
    T nan_v, posinf_v, neginf_v;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_nan_to_num(x, nan_v, posinf_v, neginf_v); }
};

/* floor, ceil, round and trunc of an integer tensor: a copy (bool is refused by their
 * entries' dtypes). */
ops_status
integral_identity(ops_iter *it, const char *op)
{
    UNARY_(OPS_DISPATCH_INTEGRAL, it, op, identity_op());
    return OPS_OK;
}

/* isnan/isinf/isfinite of an integral or bool tensor: a constant. */
ops_status
bool_constant(ops_iter *it, bool value)
{
    UNARY_TO_BOOL_(OPS_DISPATCH_INTEGRAL_AND_BOOL, it, it->op, constant_bool_op{value});
    return OPS_OK;
}

} /* namespace */

namespace {
UNARY_FUNCTOR_(sqrt_op, ops_math_sqrt(x))
UNARY_FUNCTOR_(rsqrt_op, ops_math_rsqrt(x))
UNARY_FUNCTOR_(exp_op, ops_math_exp(x))
UNARY_FUNCTOR_(exp2_op, ops_math_exp2(x))
UNARY_FUNCTOR_(expm1_op, ops_math_expm1(x))
UNARY_FUNCTOR_(log_op, ops_math_log(x))
UNARY_FUNCTOR_(log2_op, ops_math_log2(x))
UNARY_FUNCTOR_(log10_op, ops_math_log10(x))
UNARY_FUNCTOR_(log1p_op, ops_math_log1p(x))
UNARY_FUNCTOR_(sin_op, ops_math_sin(x))
UNARY_FUNCTOR_(cos_op, ops_math_cos(x))
UNARY_FUNCTOR_(tan_op, ops_math_tan(x))
UNARY_FUNCTOR_(asin_op, ops_math_asin(x))
UNARY_FUNCTOR_(acos_op, ops_math_acos(x))
UNARY_FUNCTOR_(atan_op, ops_math_atan(x))
UNARY_FUNCTOR_(sinh_op, ops_math_sinh(x))
UNARY_FUNCTOR_(cosh_op, ops_math_cosh(x))
UNARY_FUNCTOR_(tanh_op, ops_math_tanh(x))
UNARY_FUNCTOR_(asinh_op, ops_math_asinh(x))
UNARY_FUNCTOR_(acosh_op, ops_math_acosh(x))
UNARY_FUNCTOR_(atanh_op, ops_math_atanh(x))
UNARY_FUNCTOR_(sigmoid_op, ops_math_sigmoid(x))
UNARY_FUNCTOR_(erf_op, ops_math_erf(x))
UNARY_FUNCTOR_(erfc_op, ops_math_erfc(x))
UNARY_FUNCTOR_(silu_op, ops_math_silu(x))
UNARY_FUNCTOR_(frac_op, ops_math_frac(x))
UNARY_FUNCTOR_(floor_op, ops_math_floor(x))
UNARY_FUNCTOR_(ceil_op, ops_math_ceil(x))
UNARY_FUNCTOR_(round_op, ops_math_round_even(x))
UNARY_FUNCTOR_(trunc_op, ops_math_trunc(x))

/* The floating ops whose whole body is one shared function of x. */
template <typename F>
ops_status
floating_op(ops_iter *it, const char *name, F f)
{
    UNARY_(OPS_DISPATCH_FLOATING, it, name, f);
    return OPS_OK;
}

/* floor, ceil, round, trunc: the shared rounding on floats, a copy for integers. */
template <typename F>
ops_status
rounding_op(ops_iter *it, const char *name, F f)
{
    if (!ops_dtype_is_floating(it->common_dtype))
        return integral_identity(it, name);
    return floating_op(it, name, f);
}

} /* namespace */

extern "C" ops_status
sqrt_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(SQRT_OUT, it, "sqrt", sqrt_op());
    return OPS_OK;
}

extern "C" ops_status
rsqrt_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(RSQRT_OUT, it, "rsqrt", rsqrt_op());
    return OPS_OK;
}

extern "C" ops_status
exp_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(EXP_OUT, it, "exp", exp_op());
    return OPS_OK;
}

extern "C" ops_status
exp2_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(EXP2_OUT, it, "exp2", exp2_op());
    return OPS_OK;
}

extern "C" ops_status
expm1_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(EXPM1_OUT, it, "expm1", expm1_op());
    return OPS_OK;
}

extern "C" ops_status
log_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(LOG_OUT, it, "log", log_op());
    return OPS_OK;
}

extern "C" ops_status
log2_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(LOG2_OUT, it, "log2", log2_op());
    return OPS_OK;
}

extern "C" ops_status
log10_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(LOG10_OUT, it, "log10", log10_op());
    return OPS_OK;
}

extern "C" ops_status
log1p_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(LOG1P_OUT, it, "log1p", log1p_op());
    return OPS_OK;
}

extern "C" ops_status
sin_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(SIN_OUT, it, "sin", sin_op());
    return OPS_OK;
}

extern "C" ops_status
cos_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(COS_OUT, it, "cos", cos_op());
    return OPS_OK;
}

extern "C" ops_status
tan_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(TAN_OUT, it, "tan", tan_op());
    return OPS_OK;
}

extern "C" ops_status
asin_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ASIN_OUT, it, "asin", asin_op());
    return OPS_OK;
}

extern "C" ops_status
acos_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ACOS_OUT, it, "acos", acos_op());
    return OPS_OK;
}

extern "C" ops_status
atan_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ATAN_OUT, it, "atan", atan_op());
    return OPS_OK;
}

extern "C" ops_status
sinh_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(SINH_OUT, it, "sinh", sinh_op());
    return OPS_OK;
}

extern "C" ops_status
cosh_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(COSH_OUT, it, "cosh", cosh_op());
    return OPS_OK;
}

extern "C" ops_status
tanh_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(TANH_OUT, it, "tanh", tanh_op());
    return OPS_OK;
}

extern "C" ops_status
asinh_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ASINH_OUT, it, "asinh", asinh_op());
    return OPS_OK;
}

extern "C" ops_status
acosh_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ACOSH_OUT, it, "acosh", acosh_op());
    return OPS_OK;
}

extern "C" ops_status
atanh_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ATANH_OUT, it, "atanh", atanh_op());
    return OPS_OK;
}

extern "C" ops_status
sigmoid_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(SIGMOID_OUT, it, "sigmoid", sigmoid_op());
    return OPS_OK;
}

extern "C" ops_status
erf_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ERF_OUT, it, "erf", erf_op());
    return OPS_OK;
}

extern "C" ops_status
erfc_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(ERFC_OUT, it, "erfc", erfc_op());
    return OPS_OK;
}

extern "C" ops_status
silu_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(SILU_OUT, it, "silu", silu_op());
    return OPS_OK;
}

extern "C" ops_status
frac_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(FRAC_OUT, it, "frac", frac_op());
    return OPS_OK;
}

extern "C" ops_status
floor_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    return rounding_op(it, "floor", floor_op());
}

extern "C" ops_status
ceil_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    return rounding_op(it, "ceil", ceil_op());
}

extern "C" ops_status
round_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    return rounding_op(it, "round", round_op());
}

namespace {
/* round(decimals=n): unary.c's round_decimals_out_cpu formula, in the opmath type. */
struct round_decimals_op {
    double p;
    bool neg;
    template <typename T> OPS_HOST_DEVICE T operator()(T x) const
    {
        const T pt = (T)p;
        return neg ? ops_math_round_even(x / pt) * pt : ops_math_round_even(x * pt) / pt;
    }
};
} /* namespace */

extern "C" ops_status
round_decimals_out_cuda(ops_iter *it, const ops_tensor *self, int64_t decimals)
{
    (void)self;
    const bool neg = decimals < 0;
    const double p = pow(10.0, neg ? -(double)decimals : (double)decimals);
    UNARY_DECLARED_(ROUND_DECIMALS_OUT, it, "round", (round_decimals_op{p, neg}));
    return OPS_OK;
}

extern "C" ops_status
trunc_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    return rounding_op(it, "trunc", trunc_op());
}

namespace {
UNARY_FUNCTOR_(fabs_op, ops_math_fabs(x))
UNARY_FUNCTOR_(sign_float_op, ops_math_sign(x))
UNARY_FUNCTOR_(relu_float_op, ops_math_relu(x))
UNARY_FUNCTOR_(gelu_op, ops_math_gelu(x))
UNARY_FUNCTOR_(gelu_tanh_op, ops_math_gelu_tanh(x))
} /* namespace */

extern "C" ops_status
neg_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    /* integers wrap (-(-128) is -128 in int8), as on the CPU */
    UNARY_DECLARED_(NEG_OUT, it, "neg", neg_op());
    return OPS_OK;
}

extern "C" ops_status
abs_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt)) {
        UNARY_(OPS_DISPATCH_FLOATING, it, "abs", fabs_op());
        return OPS_OK;
    }
    if (dt == OPS_UINT8)
        return ops_cuda_elementwise<uint8_t, uint8_t>(it, identity_op());
    UNARY_(OPS_DISPATCH_SIGNED_NUMERIC_, it, "abs", abs_signed_op());
    return OPS_OK;
}

extern "C" ops_status
sign_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt)) {
        UNARY_(OPS_DISPATCH_FLOATING, it, "sign", sign_float_op());
        return OPS_OK;
    }
    /* never negative: the sign is x != 0 (bool: x itself) */
    if (dt == OPS_BOOL)
        return ops_cuda_elementwise<bool, bool>(it, identity_op());
    if (dt == OPS_UINT8)
        return ops_cuda_elementwise<uint8_t, uint8_t>(it, sign_uint_op());
    UNARY_(OPS_DISPATCH_SIGNED_ALL_, it, "sign", sign_signed_op());
    return OPS_OK;
}

extern "C" ops_status
relu_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt)) {
        UNARY_(OPS_DISPATCH_FLOATING, it, "relu", relu_float_op());
        return OPS_OK;
    }
    if (dt == OPS_UINT8)
        return ops_cuda_elementwise<uint8_t, uint8_t>(it, identity_op());
    UNARY_(OPS_DISPATCH_SIGNED_NUMERIC_, it, "relu", relu_signed_op());
    return OPS_OK;
}

extern "C" ops_status
reciprocal_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(RECIPROCAL_OUT, it, "reciprocal", reciprocal_op());
    return OPS_OK;
}

extern "C" ops_status
square_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    UNARY_DECLARED_(SQUARE_OUT, it, "square", square_op());
    return OPS_OK;
}

extern "C" ops_status
gelu_out_cuda(ops_iter *it, const ops_tensor *self, const char *approximate)
{
    (void)self;
    /* approximate is "none" or "tanh": the glue has run the entry's check (ops_check_gelu) */
    if (ops_gelu_tanh_form(approximate))
        UNARY_DECLARED_(GELU_OUT, it, "gelu", gelu_tanh_op());
    else
        UNARY_DECLARED_(GELU_OUT, it, "gelu", gelu_op());
    return OPS_OK;
}

extern "C" ops_status
logical_not_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    /* NaN is nonzero, so logical_not(NaN) is false */
    UNARY_TO_BOOL_DECLARED_(LOGICAL_NOT_OUT, it, "logical_not", logical_not_op());
    return OPS_OK;
}

extern "C" ops_status
bitwise_not_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (it->common_dtype == OPS_BOOL)
        return ops_cuda_elementwise<bool, bool>(it, bool_not_op());
    UNARY_(OPS_DISPATCH_INTEGRAL_ONLY_AND_BOOL_, it, "bitwise_not", bitwise_not_op());
    return OPS_OK;
}

extern "C" ops_status
isnan_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return bool_constant(it, false);
    UNARY_TO_BOOL_(OPS_DISPATCH_FLOATING, it, "isnan", isnan_op());
    return OPS_OK;
}

extern "C" ops_status
isinf_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return bool_constant(it, false);
    UNARY_TO_BOOL_(OPS_DISPATCH_FLOATING, it, "isinf", isinf_op());
    return OPS_OK;
}

extern "C" ops_status
isfinite_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return bool_constant(it, true);
    UNARY_TO_BOOL_(OPS_DISPATCH_FLOATING, it, "isfinite", isfinite_op());
    return OPS_OK;
}

extern "C" ops_status
nan_to_num_out_cuda(ops_iter *it, const ops_tensor *self, const double *nan, const double *posinf,
                    const double *neginf)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (!ops_dtype_is_floating(dt)) {
        /* integers and bools have no NaN or inf: a copy */
        UNARY_(OPS_DISPATCH_INTEGRAL_AND_BOOL, it, "nan_to_num", identity_op());
        return OPS_OK;
    }
    /* defaults: 0, the dtype's largest and lowest finite values */
    const double big = ops_nan_to_num_limit(dt);
    OPS_DISPATCH_FLOATING(dt, "nan_to_num", {
        const nan_to_num_op<opmath_t> f = {(opmath_t)(nan ? *nan : 0.0), (opmath_t)(posinf ? *posinf : big),
                                           (opmath_t)(neginf ? *neginf : -big)};
        return ops_cuda_elementwise<scalar_t, scalar_t>(it, f);
    });
    return OPS_OK;
}

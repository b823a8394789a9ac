/* Neural-network activation kernels (CUDA): kernels/cpu/activation.c on the device --
 * leaky_relu, elu, selu, celu, softplus, hardtanh, hardsigmoid, hardswish, mish,
 * softsign, log_sigmoid, threshold.
 *
 * Floating dtypes (hardtanh and threshold also integers), output = input dtype.  The
 * Scalar parameters are converted once on the host to opmath_t, exactly as the CPU
 * kernel converts them (elu's alpha * scale formed in double first); the argument
 * checks are the entries' `check:` functions (kernels/elementwise_check.c), run by the
 * glue before the kernel, and the formulas kernels/ops_elementwise_math.h's. */
#include "ops_cuda_loops.cuh"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_activation.h"

/* selu's constants (Klambauer et al. 2017), the values PyTorch uses. */
#define SELU_ALPHA_ 1.6732632423543772848170429916717
#define SELU_SCALE_ 1.0507009873554804934193349852946

namespace {

#define ACT_(IT, F)                                                                      \
    OPS_DISPATCH_FLOATING((IT)->common_dtype, (IT)->op,                                  \
                          return ops_cuda_elementwise<scalar_t, scalar_t>((IT), F);)

template <typename T> struct leaky_relu_op {
    T slope;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_leaky_relu(x, slope); }
};

template <typename T> struct elu_op {
    T negcoef, poscoef, negiptcoef;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_elu(x, negcoef, poscoef, negiptcoef); }
};

template <typename T> struct softplus_op {
    T beta, threshold;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_softplus(x, beta, threshold); }
};

template <typename T> struct hardtanh_op {
    T lo, hi;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_hardtanh(x, lo, hi); }
};

/* integers: compared in int64, narrowed back (limits outside the type clamp nothing) */
struct hardtanh_int_op {
    int64_t lo, hi;
    template <typename T> OPS_HOST_DEVICE T operator()(T x) const
    {
        return (T)ops_math_hardtanh_i64((int64_t)x, lo, hi);
    }
};

template <typename T> struct threshold_op {
    T t, v;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_threshold(x, t, v); }
};

#define ACT_FUNCTOR_(NAME, FN)                                                           \
    struct NAME {                                                                        \
        template <typename T> OPS_HOST_DEVICE T operator()(T x) const { return FN(x); }  \
    };
ACT_FUNCTOR_(hardsigmoid_op, ops_math_hardsigmoid)
ACT_FUNCTOR_(hardswish_op, ops_math_hardswish)
ACT_FUNCTOR_(mish_op, ops_math_mish)
ACT_FUNCTOR_(softsign_op, ops_math_softsign)
ACT_FUNCTOR_(log_sigmoid_op, ops_math_log_sigmoid)

/* elu, selu and celu share the kernel; alpha * scale is formed in double, then
 * rounded to opmath_t, as on the CPU. */
ops_status
elu_common(ops_iter *it, double alpha, double scale, double input_scale)
{
    const double negcoef = alpha * scale;
    ACT_(it, (elu_op<opmath_t>{(opmath_t)negcoef, (opmath_t)scale, (opmath_t)input_scale}));
    return OPS_OK;
}

} /* namespace */

extern "C" ops_status
leaky_relu_out_cuda(ops_iter *it, const ops_tensor *self, ops_scalar negative_slope)
{
    (void)self;
    const double slope = ops_scalar_to_double(negative_slope);
    ACT_(it, leaky_relu_op<opmath_t>{(opmath_t)slope});
    return OPS_OK;
}

extern "C" ops_status
elu_out_cuda(ops_iter *it, const ops_tensor *self, ops_scalar alpha, ops_scalar scale, ops_scalar input_scale)
{
    (void)self;
    return elu_common(it, ops_scalar_to_double(alpha), ops_scalar_to_double(scale),
                      ops_scalar_to_double(input_scale));
}

extern "C" ops_status
selu_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    return elu_common(it, SELU_ALPHA_, SELU_SCALE_, 1.0);
}

extern "C" ops_status
celu_out_cuda(ops_iter *it, const ops_tensor *self, ops_scalar alpha)
{
    (void)self;
    const double a = ops_scalar_to_double(alpha); /* not 0: ops_check_celu */
    return elu_common(it, a, 1.0, 1.0 / a);
}

extern "C" ops_status
softplus_out_cuda(ops_iter *it, const ops_tensor *self, ops_scalar beta, ops_scalar threshold)
{
    (void)self;
    const double b = ops_scalar_to_double(beta), t = ops_scalar_to_double(threshold);
    ACT_(it, (softplus_op<opmath_t>{(opmath_t)b, (opmath_t)t}));
    return OPS_OK;
}

extern "C" ops_status
hardtanh_out_cuda(ops_iter *it, const ops_tensor *self, ops_scalar min_val, ops_scalar max_val)
{
    (void)self;
    if (ops_dtype_is_integral(it->common_dtype, false)) {
        /* toLong; uint8 with a negative limit was refused by ops_check_hardtanh */
        const int64_t lo = ops_scalar_to_int64(min_val), hi = ops_scalar_to_int64(max_val);
        OPS_DISPATCH_INTEGRAL(it->common_dtype, it->op,
                              return ops_cuda_elementwise<scalar_t, scalar_t>(it, (hardtanh_int_op{lo, hi})););
        return OPS_OK;
    }
    const double lo_d = ops_scalar_to_double(min_val), hi_d = ops_scalar_to_double(max_val);
    ACT_(it, (hardtanh_op<opmath_t>{(opmath_t)lo_d, (opmath_t)hi_d}));
    return OPS_OK;
}

extern "C" ops_status
hardsigmoid_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_(it, hardsigmoid_op());
    return OPS_OK;
}

extern "C" ops_status
hardswish_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_(it, hardswish_op());
    return OPS_OK;
}

extern "C" ops_status
mish_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_(it, mish_op());
    return OPS_OK;
}

extern "C" ops_status
softsign_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self; /* bool is refused by the entry's dtypes */
    ACT_(it, softsign_op());
    return OPS_OK;
}

extern "C" ops_status
log_sigmoid_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_(it, log_sigmoid_op());
    return OPS_OK;
}

extern "C" ops_status
threshold_out_cuda(ops_iter *it, const ops_tensor *self, ops_scalar threshold, ops_scalar value)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_integral(dt, false)) {
        /* ops_check_threshold has checked that both fit the integer type */
        const int64_t t = ops_scalar_to_int64(threshold), v = ops_scalar_to_int64(value);
        OPS_DISPATCH_INTEGRAL(dt, it->op,
                              return ops_cuda_elementwise<scalar_t, scalar_t>(
                                  it, (threshold_op<scalar_t>{(scalar_t)t, (scalar_t)v})););
        return OPS_OK;
    }
    const double td = ops_scalar_to_double(threshold), vd = ops_scalar_to_double(value);
    ACT_(it, (threshold_op<opmath_t>{(opmath_t)td, (opmath_t)vd}));
    return OPS_OK;
}

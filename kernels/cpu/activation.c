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
 * come out the same way.  The formulas live in kernels/ops_elementwise_math.h, shared
 * with kernels/cuda/activation.cu; the argument checks (celu's alpha, hardtanh's and
 * threshold's integer limits) are the entries' `check:` functions
 * (kernels/elementwise_check.c), run by the glue before the kernel.
 *
 * elu/selu/celu, softplus, mish, log_sigmoid, hardsigmoid, hardswish and leaky_relu
 * run the vector loops of the CPU's instruction-set level (ACT_VEC_,
 * kernels/cpu/vec/vec_act.c; docs/cpu-dispatch.md "Activations"), float16/bfloat16
 * through the float32 loop (computed in float, rounded once); the
 * others (hardtanh, softsign, threshold) are plain branch-free loops the compiler
 * vectorises, measured ahead of PyTorch's. */
#include <math.h>

#include "ops_dispatch.h"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_activation.h"
#include "kernels/cpu/vec/vec_act.h"
#include "kernels/cpu/vec_loop.h"

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

/* float32/float64 through the vector loop FN of the CPU's level, with the parameters
 * P[0..NP-1] rounded to the dtype as the scalar kernel rounds them to opmath_t;
 * float16/bfloat16 through its float32 loop (their opmath_t is float: the parameters
 * are rounded to float as the scalar kernel's), each result rounded once
 * (kernels/cpu/vec_loop.h).  False for the other dtypes. */
static bool
act_vec_(ops_iter *it, ops_vec_act_op fn, const double *p, int np)
{
    const ops_dtype dt = it->dtypes[1];
    if (it->dtypes[0] != dt)
        return false;
    const ops_vec_act_table *const vt = ops_vec_act();
    float pf[3] = {0, 0, 0};
    double pd[3] = {0, 0, 0};
    for (int k = 0; k < np; k++) {
        pf[k] = (float)p[k];
        pd[k] = p[k];
    }
    ops_vec_act_f32_fn *const f = vt->act_f32[fn];
    switch (dt) {
    case OPS_FLOAT32:
        OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_UNARY(float, f, pf, vd_, vs_, vn_); });
        return true;
    case OPS_FLOAT64: {
        ops_vec_act_f64_fn *const g = vt->act_f64[fn];
        OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN_UNARY(double, g, pd, vd_, vs_, vn_); });
        return true;
    }
    case OPS_FLOAT16: {
        const ops_vec_convert_table *const cv = ops_vec_convert();
        OPS_ITER_LOOP(it, vd_, vs_, vn_, {
            OPS_VEC_RUN_HALF(cv, OPS_VEC_CVT_F16, OPS_VEC_CALL_P, f, pf, vd_, vs_, vn_);
        });
        return true;
    }
    case OPS_BFLOAT16: {
        const ops_vec_convert_table *const cv = ops_vec_convert();
        OPS_ITER_LOOP(it, vd_, vs_, vn_, {
            OPS_VEC_RUN_HALF(cv, OPS_VEC_CVT_BF16, OPS_VEC_CALL_P, f, pf, vd_, vs_, vn_);
        });
        return true;
    }
    default:
        return false;
    }
}

/* The vector loop FN with parameters (double){...}, when the dtype has one. */
#define ACT_VEC_(IT, FN, ...)                                                            \
    do {                                                                                 \
        const double av_p_[] = {0, __VA_ARGS__};                                         \
        if (act_vec_((IT), (FN), av_p_ + 1, (int)(sizeof av_p_ / sizeof av_p_[0]) - 1))  \
            return OPS_OK;                                                               \
    } while (0)

/* selu's constants (Klambauer et al. 2017), the values PyTorch uses. */
#define SELU_ALPHA_ 1.6732632423543772848170429916717
#define SELU_SCALE_ 1.0507009873554804934193349852946

/* ---- ops ----------------------------------------------------------------------- */

ops_status
leaky_relu_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar negative_slope)
{
    (void)self;
    const double slope = ops_scalar_to_double(negative_slope);
    ACT_VEC_(it, OPS_VEC_ACT_LEAKY_RELU, slope);
    ACT_KERNEL_(it, const opmath_t s = (opmath_t)slope, ops_math_leaky_relu(x, s));
}

/* elu, selu and celu share the kernel; PyTorch passes alpha * scale as one
 * coefficient, so the product is formed in double, then rounded to opmath_t. */
static ops_status
elu_common(ops_iter *it, double alpha, double scale, double input_scale)
{
    const double negcoef_d = alpha * scale;
    ACT_VEC_(it, OPS_VEC_ACT_ELU, negcoef_d, scale, input_scale);
    ACT_KERNEL_(it,
                const opmath_t negcoef = (opmath_t)negcoef_d;
                const opmath_t poscoef = (opmath_t)scale;
                const opmath_t negiptcoef = (opmath_t)input_scale,
                ops_math_elu(x, negcoef, poscoef, negiptcoef));
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
    const double a = ops_scalar_to_double(alpha); /* not 0: ops_check_celu */
    /* celu(x, alpha) = elu(x, alpha, 1, 1 / alpha) */
    return elu_common(it, a, 1.0, 1.0 / a);
}

ops_status
softplus_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar beta, ops_scalar threshold)
{
    (void)self;
    const double b = ops_scalar_to_double(beta), t = ops_scalar_to_double(threshold);
    ACT_VEC_(it, OPS_VEC_ACT_SOFTPLUS, b, t);
    ACT_KERNEL_(it, const opmath_t bb = (opmath_t)b; const opmath_t tt = (opmath_t)t,
                ops_math_softplus(x, bb, tt));
}

/* hardtanh is PyTorch's clamp with legacy rules: integer inputs take the limits
 * truncated to int64 (toLong); the limits never promote the input.  Bool, and uint8
 * with a negative limit, were refused before the kernel (the entry's dtypes,
 * ops_check_hardtanh). */
ops_status
hardtanh_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar min_val, ops_scalar max_val)
{
    (void)self;
    if (ops_dtype_is_integral(it->common_dtype, false)) {
        const int64_t lo = ops_scalar_to_int64(min_val), hi = ops_scalar_to_int64(max_val);
        OPS_DISPATCH_INTEGRAL(it->common_dtype, it->op, {
            OPS_UNARY_KERNEL(it, scalar_t, scalar_t, (scalar_t)ops_math_hardtanh_i64((int64_t)x, lo, hi));
        });
        return OPS_OK;
    }
    const double lo_d = ops_scalar_to_double(min_val), hi_d = ops_scalar_to_double(max_val);
    ACT_KERNEL_(it, const opmath_t lo_t = (opmath_t)lo_d; const opmath_t hi_t = (opmath_t)hi_d,
                ops_math_hardtanh(x, lo_t, hi_t));
}

ops_status
hardsigmoid_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_VEC_(it, OPS_VEC_ACT_HARDSIGMOID);
    ACT_KERNEL_(it, (void)0, ops_math_hardsigmoid(x));
}

ops_status
hardswish_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_VEC_(it, OPS_VEC_ACT_HARDSWISH);
    ACT_KERNEL_(it, (void)0, ops_math_hardswish(x));
}

ops_status
mish_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_VEC_(it, OPS_VEC_ACT_MISH);
    ACT_KERNEL_(it, (void)0, ops_math_mish(x));
}

/* integers are computed in float (meta unary_float); bool is refused by the entry's
 * dtypes, as PyTorch's x / (1 + x.abs()) fails in abs */
ops_status
softsign_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_KERNEL_(it, (void)0, ops_math_softsign(x));
}

ops_status
log_sigmoid_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    ACT_VEC_(it, OPS_VEC_ACT_LOG_SIGMOID);
    ACT_KERNEL_(it, (void)0, ops_math_log_sigmoid(x));
}

/* threshold: x <= threshold ? value : x, over every numeric dtype (PyTorch's CPU
 * set); threshold and value are converted to the input's type first (for an integer
 * type, ops_check_threshold has checked that they fit). */
ops_status
threshold_out_cpu(ops_iter *it, const ops_tensor *self, ops_scalar threshold, ops_scalar value)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_integral(dt, false)) {
        const int64_t t = ops_scalar_to_int64(threshold), v = ops_scalar_to_int64(value);
        OPS_DISPATCH_INTEGRAL(dt, it->op, {
            const scalar_t tt = (scalar_t)t, vv = (scalar_t)v;
            OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ops_math_threshold(x, tt, vv));
        });
        return OPS_OK;
    }
    const double td = ops_scalar_to_double(threshold), vd = ops_scalar_to_double(value);
    ACT_KERNEL_(it, const opmath_t tt = (opmath_t)td; const opmath_t vv = (opmath_t)vd,
                ops_math_threshold(x, tt, vv));
}

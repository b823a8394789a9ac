/* Unary elementwise kernels (CPU): neg, abs, exp, sin, floor, gelu, isnan, ...
 *
 * Each kernel is the impl half of a structured op: the meta (runtime/dispatch/meta.c) has
 * already chosen the dtypes, so a kernel dispatches on it->common_dtype (the input
 * as the loop sees it; over the dtypes its schema entry declares, DECLARED_KERNEL_ and
 * OPS_DISPATCH_DECLARED over the set generated in ops_kernels_unary.h, where one switch covers them)
 * and writes operand 0 in it->result_dtype:
 *   meta: unary        output dtype = input dtype;
 *   meta: unary_float  integral/bool inputs arrive converted to float32;
 *   meta: bool_out     output bool, input in its own dtype.
 * float16/bfloat16 compute in float (opmath_t) and round once on store.  The
 * contiguous loops are plain element loops under OPS_SIMD_LOOP, so the compiler
 * vectorises the ones whose body has no call: neg, abs, relu, square, reciprocal,
 * and floor/ceil/trunc/round/frac, which ops_scalar_math.h writes branch-free for
 * that reason.  The math functions (exp, log, the trigonometric and hyperbolic
 * functions, erf, sqrt, sigmoid, silu, gelu: OPS_VEC_UNARY_LIST) run the vector loops
 * of the CPU's instruction-set level (kernels/cpu/vec/, docs/cpu-dispatch.md) at
 * float32/float64, and float16/bfloat16 through the float32 loop, over the iterator's
 * runs by kernels/cpu/vec_loop.h (the activations' mechanism too); exp2 and the rest
 * call libm per element. */
#include <math.h>

#include "ops_dispatch.h"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_unary.h"
#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec/vec_convert.h"
#include "kernels/cpu/vec_loop.h"

/* Dispatch cases over the signed integer dtypes (abs, relu, sign: no uint8 case,
 * where x < 0 is always false and the compiler says so). */
#define DISPATCH_SIGNED_INT_(DT, NAME, MASK, ...)                                        \
    OPS_DISPATCH_CASES(DT, NAME, MASK,                                                 \
                         OPS_CASE_INT8(__VA_ARGS__) OPS_CASE_INT16(__VA_ARGS__)          \
                             OPS_CASE_INT32(__VA_ARGS__) OPS_CASE_INT64(__VA_ARGS__))

/* A kernel over the dtypes its schema entry declares (ENTRY: EXP_OUT for exp.out,
 * generated ops_kernels_unary.h) with output = input dtype: EXPR in terms of x. */
#define DECLARED_KERNEL_(IT, ENTRY, NAME, EXPR)                                          \
    do {                                                                                 \
        OPS_DISPATCH_DECLARED(ENTRY, (IT)->common_dtype, NAME,                           \
                              OPS_UNARY_KERNEL((IT), scalar_t, scalar_t, EXPR););        \
        return OPS_OK;                                                                   \
    } while (0)

/* The floating half of a kernel that handles the other dtypes itself (abs, floor, ...):
 * EXPR in terms of x, output = input dtype. */
#define FLOATING_KERNEL_(IT, NAME, EXPR)                                                 \
    do {                                                                                 \
        OPS_DISPATCH_FLOATING((IT)->common_dtype, NAME,                                  \
                              OPS_UNARY_KERNEL((IT), scalar_t, scalar_t, EXPR););        \
        return OPS_OK;                                                                   \
    } while (0)

/* float32 and float64 through the vector loop FN of the CPU's level, float16 and
 * bfloat16 through its float32 loop; false for the other dtypes (and for an output
 * dtype other than the input's), which take the scalar loop. */
static bool
vec_unary_(ops_iter *it, ops_vec_unary fn)
{
    const ops_dtype dt = it->dtypes[1];
    if (it->dtypes[0] != dt)
        return false;
    const ops_vec_table *const vt = ops_vec();
    ops_vec_unary_f32_fn *const f = vt->unary_f32[fn];
    switch (dt) {
    case OPS_FLOAT32:
        OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN(float, OPS_VEC_CALL_0, f, 0, vd_, vs_, vn_); });
        return true;
    case OPS_FLOAT64: {
        ops_vec_unary_f64_fn *const g = vt->unary_f64[fn];
        OPS_ITER_LOOP(it, vd_, vs_, vn_, { OPS_VEC_RUN(double, OPS_VEC_CALL_0, g, 0, vd_, vs_, vn_); });
        return true;
    }
    case OPS_FLOAT16: {
        const ops_vec_convert_table *const cv = ops_vec_convert();
        OPS_ITER_LOOP(it, vd_, vs_, vn_, {
            OPS_VEC_RUN_HALF(cv, OPS_VEC_CVT_F16, OPS_VEC_CALL_0, f, 0, vd_, vs_, vn_);
        });
        return true;
    }
    case OPS_BFLOAT16: {
        const ops_vec_convert_table *const cv = ops_vec_convert();
        OPS_ITER_LOOP(it, vd_, vs_, vn_, {
            OPS_VEC_RUN_HALF(cv, OPS_VEC_CVT_BF16, OPS_VEC_CALL_0, f, 0, vd_, vs_, vn_);
        });
        return true;
    }
    default:
        return false;
    }
}

/* A declared-dtypes kernel whose floating dtypes go through the vector loop VFN. */
#define VEC_KERNEL_(IT, ENTRY, NAME, VFN, EXPR)                                          \
    do {                                                                                 \
        if (vec_unary_((IT), (VFN)))                                                     \
            return OPS_OK;                                                               \
        DECLARED_KERNEL_(IT, ENTRY, NAME, EXPR);                                         \
    } while (0)

/* ---- sign and magnitude ------------------------------------------------------ */

ops_status
neg_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    /* Integers wrap (-(-128) is -128 in int8), as PyTorch's. */
    OPS_DISPATCH_DECLARED(NEG_OUT, it->common_dtype, "neg", OPS_UNARY_KERNEL(it, scalar_t, scalar_t, -x););
    return OPS_OK;
}

ops_status
abs_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt))
        FLOATING_KERNEL_(it, "abs", ops_math_fabs(x));
    if (dt == OPS_UINT8) {
        OPS_UNARY_KERNEL(it, uint8_t, uint8_t, x);
        return OPS_OK;
    }
    DISPATCH_SIGNED_INT_(dt, "abs", OPS_MASK_NUMERIC,
                         OPS_UNARY_KERNEL(it, scalar_t, scalar_t, x < 0 ? -x : x););
    return OPS_OK;
}

ops_status
sign_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt))
        FLOATING_KERNEL_(it, "sign", ops_math_sign(x));
    /* Never negative: the sign is x != 0 (bool: x itself, as PyTorch's). */
    if (dt == OPS_BOOL) {
        OPS_UNARY_KERNEL(it, bool, bool, x);
        return OPS_OK;
    }
    if (dt == OPS_UINT8) {
        OPS_UNARY_KERNEL(it, uint8_t, uint8_t, x != 0);
        return OPS_OK;
    }
    DISPATCH_SIGNED_INT_(dt, "sign", OPS_MASK_ALL,
                         OPS_UNARY_KERNEL(it, scalar_t, scalar_t, (x > 0) - (x < 0)););
    return OPS_OK;
}

ops_status
relu_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt))
        FLOATING_KERNEL_(it, "relu", ops_math_relu(x));
    if (dt == OPS_UINT8) {
        OPS_UNARY_KERNEL(it, uint8_t, uint8_t, x);
        return OPS_OK;
    }
    DISPATCH_SIGNED_INT_(dt, "relu", OPS_MASK_NUMERIC, OPS_UNARY_KERNEL(it, scalar_t, scalar_t, x < 0 ? 0 : x););
    return OPS_OK;
}

/* ---- powers ------------------------------------------------------------------- */

ops_status
reciprocal_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    DECLARED_KERNEL_(it, RECIPROCAL_OUT, "reciprocal", (opmath_t)1 / x);
}

/* PyTorch's square(bool) is pow(self, 2), an int64 tensor; a dtype-keeping unary op
 * cannot give that, so the entry's dtypes refuse bool rather than answer in bool. */
ops_status
square_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    /* Integers wrap on overflow, as PyTorch's. */
    OPS_DISPATCH_DECLARED(SQUARE_OUT, it->common_dtype, "square", OPS_UNARY_KERNEL(it, scalar_t, scalar_t, x * x););
    return OPS_OK;
}

ops_status
sqrt_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, SQRT_OUT, "sqrt", OPS_VEC_SQRT, ops_math_sqrt(x));
}

ops_status
rsqrt_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, RSQRT_OUT, "rsqrt", OPS_VEC_RSQRT, ops_math_rsqrt(x));
}

/* ---- exponentials and logarithms ---------------------------------------------- */

ops_status
exp_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, EXP_OUT, "exp", OPS_VEC_EXP, ops_math_exp(x));
}

ops_status
exp2_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    DECLARED_KERNEL_(it, EXP2_OUT, "exp2", ops_math_exp2(x));
}

ops_status
expm1_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, EXPM1_OUT, "expm1", OPS_VEC_EXPM1, ops_math_expm1(x));
}

ops_status
log_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, LOG_OUT, "log", OPS_VEC_LOG, ops_math_log(x));
}

ops_status
log2_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, LOG2_OUT, "log2", OPS_VEC_LOG2, ops_math_log2(x));
}

ops_status
log10_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, LOG10_OUT, "log10", OPS_VEC_LOG10, ops_math_log10(x));
}

ops_status
log1p_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, LOG1P_OUT, "log1p", OPS_VEC_LOG1P, ops_math_log1p(x));
}

/* ---- trigonometric and hyperbolic --------------------------------------------- */

ops_status
sin_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, SIN_OUT, "sin", OPS_VEC_SIN, ops_math_sin(x));
}

ops_status
cos_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, COS_OUT, "cos", OPS_VEC_COS, ops_math_cos(x));
}

ops_status
tan_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, TAN_OUT, "tan", OPS_VEC_TAN, ops_math_tan(x));
}

ops_status
asin_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ASIN_OUT, "asin", OPS_VEC_ASIN, ops_math_asin(x));
}

ops_status
acos_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ACOS_OUT, "acos", OPS_VEC_ACOS, ops_math_acos(x));
}

ops_status
atan_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ATAN_OUT, "atan", OPS_VEC_ATAN, ops_math_atan(x));
}

ops_status
sinh_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, SINH_OUT, "sinh", OPS_VEC_SINH, ops_math_sinh(x));
}

ops_status
cosh_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, COSH_OUT, "cosh", OPS_VEC_COSH, ops_math_cosh(x));
}

ops_status
tanh_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, TANH_OUT, "tanh", OPS_VEC_TANH, ops_math_tanh(x));
}

ops_status
asinh_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ASINH_OUT, "asinh", OPS_VEC_ASINH, ops_math_asinh(x));
}

ops_status
acosh_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ACOSH_OUT, "acosh", OPS_VEC_ACOSH, ops_math_acosh(x));
}

ops_status
atanh_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ATANH_OUT, "atanh", OPS_VEC_ATANH, ops_math_atanh(x));
}

/* ---- activations and special functions ---------------------------------------- */

ops_status
sigmoid_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, SIGMOID_OUT, "sigmoid", OPS_VEC_SIGMOID, ops_math_sigmoid(x));
}

ops_status
erf_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ERF_OUT, "erf", OPS_VEC_ERF, ops_math_erf(x));
}

ops_status
erfc_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, ERFC_OUT, "erfc", OPS_VEC_ERFC, ops_math_erfc(x));
}

ops_status
silu_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    VEC_KERNEL_(it, SILU_OUT, "silu", OPS_VEC_SILU, ops_math_silu(x));
}

ops_status
gelu_out_cpu(ops_iter *it, const ops_tensor *self, const char *approximate)
{
    (void)self;
    /* approximate is "none" or "tanh": the glue has run the entry's check (ops_check_gelu) */
    if (ops_gelu_tanh_form(approximate))
        VEC_KERNEL_(it, GELU_OUT, "gelu", OPS_VEC_GELU_TANH, ops_math_gelu_tanh(x));
    VEC_KERNEL_(it, GELU_OUT, "gelu", OPS_VEC_GELU, ops_math_gelu(x));
}

/* ---- rounding ------------------------------------------------------------------ */

/* floor, ceil, round and trunc leave integers as they are (a copy), as PyTorch does;
 * their entries' dtypes refuse bool. */
static ops_status
integral_identity(ops_iter *it, const char *op)
{
    OPS_DISPATCH_INTEGRAL(it->common_dtype, op, OPS_UNARY_KERNEL(it, scalar_t, scalar_t, x););
    return OPS_OK;
}

ops_status
floor_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return integral_identity(it, "floor");
    FLOATING_KERNEL_(it, "floor", ops_math_floor(x));
}

ops_status
ceil_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return integral_identity(it, "ceil");
    FLOATING_KERNEL_(it, "ceil", ops_math_ceil(x));
}

ops_status
round_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return integral_identity(it, "round");
    FLOATING_KERNEL_(it, "round", ops_math_round_even(x));
}

/* round(decimals=n), PyTorch's formula in the opmath type: x * 10^n rounded half to even,
 * then divided (n < 0: x / 10^-n rounded, then multiplied).  Floating dtypes only. */
static inline float
round_decimals_f32_(float x, float p, bool neg)
{
    return neg ? ops_math_round_even(x / p) * p : ops_math_round_even(x * p) / p;
}

static inline double
round_decimals_f64_(double x, double p, bool neg)
{
    return neg ? ops_math_round_even(x / p) * p : ops_math_round_even(x * p) / p;
}

ops_status
round_decimals_out_cpu(ops_iter *it, const ops_tensor *self, int64_t decimals)
{
    (void)self;
    const bool neg = decimals < 0;
    const double p = pow(10.0, neg ? -(double)decimals : (double)decimals);
    const float pf = (float)p;
    OPS_DISPATCH_DECLARED(ROUND_DECIMALS_OUT, it->common_dtype, "round",
                          OPS_UNARY_KERNEL(it, scalar_t, scalar_t,
                                           _Generic(x, float: round_decimals_f32_(x, pf, neg),
                                                    default: round_decimals_f64_(x, p, neg))););
    return OPS_OK;
}

ops_status
trunc_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return integral_identity(it, "trunc");
    FLOATING_KERNEL_(it, "trunc", ops_math_trunc(x));
}

ops_status
frac_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    DECLARED_KERNEL_(it, FRAC_OUT, "frac", ops_math_frac(x));
}

/* ---- logical and bitwise -------------------------------------------------------- */

ops_status
logical_not_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    /* NaN is nonzero, so logical_not(NaN) is false. */
    OPS_DISPATCH_DECLARED(LOGICAL_NOT_OUT, it->common_dtype, "logical_not", OPS_UNARY_KERNEL(it, bool, scalar_t, !x););
    return OPS_OK;
}

ops_status
bitwise_not_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (it->common_dtype == OPS_BOOL) {
        OPS_UNARY_KERNEL(it, bool, bool, !x);
        return OPS_OK;
    }
    OPS_DISPATCH_CASES(it->common_dtype, "bitwise_not", OPS_MASK_INTEGRAL | OPS_DTYPE_BIT(OPS_BOOL),
                         OPS_CASES_INTEGRAL_(OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ~x);));
    return OPS_OK;
}

/* ---- classification ------------------------------------------------------------- */

/* isnan/isinf/isfinite of an integral or bool tensor: a constant (no NaN, no inf). */
static ops_status
bool_constant(ops_iter *it, bool value)
{
    const ops_dtype dt = it->common_dtype;
    OPS_DISPATCH_INTEGRAL_AND_BOOL(dt, it->op, OPS_UNARY_KERNEL(it, bool, scalar_t, ((void)x, value)););
    return OPS_OK;
}

ops_status
isnan_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return bool_constant(it, false);
    OPS_DISPATCH_FLOATING(it->common_dtype, "isnan", OPS_UNARY_KERNEL(it, bool, scalar_t, isnan(x)););
    return OPS_OK;
}

ops_status
isinf_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return bool_constant(it, false);
    OPS_DISPATCH_FLOATING(it->common_dtype, "isinf", OPS_UNARY_KERNEL(it, bool, scalar_t, isinf(x)););
    return OPS_OK;
}

ops_status
isfinite_out_cpu(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    if (!ops_dtype_is_floating(it->common_dtype))
        return bool_constant(it, true);
    OPS_DISPATCH_FLOATING(it->common_dtype, "isfinite", OPS_UNARY_KERNEL(it, bool, scalar_t, isfinite(x)););
    return OPS_OK;
}

ops_status
nan_to_num_out_cpu(ops_iter *it, const ops_tensor *self, const double *nan, const double *posinf,
                   const double *neginf)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (!ops_dtype_is_floating(dt)) {
        /* Integers and bools have no NaN or inf: a copy, as PyTorch's. */
        OPS_DISPATCH_INTEGRAL_AND_BOOL(dt, "nan_to_num", OPS_UNARY_KERNEL(it, scalar_t, scalar_t, x););
        return OPS_OK;
    }
    OPS_DISPATCH_FLOATING(dt, "nan_to_num", {
        /* Defaults: 0, the dtype's largest and lowest finite values.  A replacement
         * beyond the dtype's range becomes inf on the conversion, as PyTorch's. */
        const double big = ops_nan_to_num_limit(dt);
        const opmath_t r_nan = (opmath_t)(nan ? *nan : 0.0);
        const opmath_t r_pos = (opmath_t)(posinf ? *posinf : big);
        const opmath_t r_neg = (opmath_t)(neginf ? *neginf : -big);
        OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ops_math_nan_to_num(x, r_nan, r_pos, r_neg));
    });
    return OPS_OK;
}

/* special_logit (CPU): log(p / (1 - p)), the inverse of sigmoid.  With eps, p is first
 * clamped to [eps, 1 - eps]; eps None (or negative) clamps nothing, as PyTorch's.
 *
 * meta: unary_float has already converted bool and integer inputs to float32, so
 * this kernel sees floating dtypes only.  It computes float32 and float64 and leaves
 * float16 and bfloat16 out: ops/native_functions.yaml does not declare them, and the
 * conformance suite checks that they are refused with an error naming special_logit. */
#include <math.h>

#include "ops_dispatch.h"
#include "ops_kernels_special_logit.h"

static inline float
special_logit_f32(float x, bool clamp, float lo, float hi)
{
    if (clamp) /* NaN passes through: both comparisons are false */
        x = x < lo ? lo : x > hi ? hi : x;
    return logf(x / (1 - x));
}

static inline double
special_logit_f64(double x, bool clamp, double lo, double hi)
{
    if (clamp)
        x = x < lo ? lo : x > hi ? hi : x;
    return log(x / (1 - x));
}

/* special_logit_f32 or special_logit_f64, picked by the type of x (the dispatch case's opmath_t). */
#define SPECIAL_LOGIT_(x, clamp, lo, hi) _Generic((x), float: special_logit_f32, double: special_logit_f64)(x, clamp, lo, hi)

/* Dispatch over float32 and float64 only; any other dtype returns OPS_ERR_DTYPE with
 * "special_logit: dtype float16 is not supported (supported: float32, float64)". */
#define DISPATCH_FLOAT32_FLOAT64_(DT, NAME, ...)                                         \
    OPS_DISPATCH_CASES(DT, NAME, OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64), \
                         OPS_CASE_FLOAT32(__VA_ARGS__) OPS_CASE_FLOAT64(__VA_ARGS__))

ops_status
special_logit_out_cpu(ops_iter *it, const ops_tensor *self, const double *eps)
{
    (void)self; /* the kernel reads its input through the iterator */
    const double e = eps ? *eps : -1.0;
    const bool clamp = e >= 0;
    DISPATCH_FLOAT32_FLOAT64_(it->common_dtype, it->op, {
        const opmath_t lo = (opmath_t)e, hi = 1 - lo;
        OPS_UNARY_KERNEL(it, scalar_t, scalar_t, SPECIAL_LOGIT_(x, clamp, lo, hi));
    });
    return OPS_OK;
}

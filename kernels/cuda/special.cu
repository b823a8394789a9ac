/* erfinv, logit (and logit_backward), cbrt (CUDA): kernels/cpu/special.c on the device.
 *
 * The meta has chosen the dtypes as for the CPU kernels (unary_float, binary_float);
 * the per-element functions are kernels/ops_special_math.h's, the forms the CPU's
 * vector loops follow step for step (the device's libm log/erf/cbrt differ from
 * glibc's and SLEEF's by a few ulps). */
#include "ops_cuda_loops.cuh"
#include "kernels/ops_special_math.h"
#include "ops_kernels_special.h"

namespace {

struct erfinv_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x) const { return ops_math_erfinv(x); }
};

struct cbrt_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x) const { return ops_math_cbrt(x); }
};

template <typename T> struct logit_op {
    T eps; /* < 0: no clamp */
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_logit(x, eps); }
};

template <typename T> struct logit_backward_op {
    T eps;
    OPS_HOST_DEVICE T operator()(T dy, T x) const { return ops_math_logit_backward(dy, x, eps); }
};

} /* namespace */

extern "C" ops_status
erfinv_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    OPS_DISPATCH_DECLARED(ERFINV_OUT, it->common_dtype, "erfinv",
                          return ops_cuda_elementwise<scalar_t, scalar_t>(it, erfinv_op()););
    return OPS_OK;
}

extern "C" ops_status
cbrt_out_cuda(ops_iter *it, const ops_tensor *self)
{
    (void)self;
    OPS_DISPATCH_DECLARED(CBRT_OUT, it->common_dtype, "cbrt",
                          return ops_cuda_elementwise<scalar_t, scalar_t>(it, cbrt_op()););
    return OPS_OK;
}

/* eps in the opmath type (float for float32 and the half types), -1 for None. */
extern "C" ops_status
logit_out_cuda(ops_iter *it, const ops_tensor *self, const double *eps)
{
    (void)self;
    const double e = eps != NULL ? *eps : -1.0;
    OPS_DISPATCH_DECLARED(LOGIT_OUT, it->common_dtype, "logit", {
        const logit_op<opmath_t> f = {(opmath_t)e};
        return ops_cuda_elementwise<scalar_t, scalar_t>(it, f);
    });
    return OPS_OK;
}

extern "C" ops_status
logit_backward_out_cuda(ops_iter *it, const ops_tensor *grad_output, const ops_tensor *self, const double *eps)
{
    (void)grad_output;
    (void)self;
    const double e = eps != NULL ? *eps : -1.0;
    OPS_DISPATCH_DECLARED(LOGIT_BACKWARD_GRAD_INPUT, it->common_dtype, "logit_backward", {
        const logit_backward_op<opmath_t> f = {(opmath_t)e};
        return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>(it, f);
    });
    return OPS_OK;
}

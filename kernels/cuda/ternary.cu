/* Ternary and bounded kernels (CUDA): kernels/cpu/ternary.c on the device -- where,
 * clamp (Scalar and Tensor bounds), lerp, addcmul, addcdiv.
 *
 * Operand 0 is the output; the inputs follow in schema order (clamp.Tensor: self,
 * then whichever bounds are present).  The argument checks are the entries' `check:`
 * functions (kernels/elementwise_check.c), run by the glue before the kernel, and the
 * per-element functions kernels/ops_elementwise_math.h's (NaN-propagating clamp,
 * PyTorch's two-sided lerp), the CPU's. */
#include "ops_cuda_loops.cuh"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_ternary.h"

namespace {

/* where moves elements as stored, as the CPU's does: a same-size integer type
 * carries every dtype's bits (no opmath round trip, so NaN payloads survive). */
struct where_op {
    template <typename T> OPS_HOST_DEVICE T operator()(bool c, T a, T b) const { return c ? a : b; }
};

template <typename T> struct clamp_float_op {
    T lo, hi;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_clamp(x, lo, hi); }
};

template <typename T> struct clamp_int_op {
    T lo, hi;
    bool has_lo, has_hi;
    OPS_HOST_DEVICE T operator()(T x) const { return ops_math_clamp_opt(x, lo, hi, has_lo, has_hi); }
};

struct clamp3_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T lo, T hi) const { return ops_math_clamp(x, lo, hi); }
};

struct max_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_max(x, y); }
};

struct min_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_min(x, y); }
};

/* lerp with a Scalar weight: the weight operand is there but the opmath value w (not
 * rounded to self's dtype) is used. */
template <typename T> struct lerp_scalar_op {
    T w;
    OPS_HOST_DEVICE T operator()(T a, T b, T) const { return ops_math_lerp(a, b, w); }
};

struct lerp_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T a, T b, T w) const { return ops_math_lerp(a, b, w); }
};

template <typename T> struct addcmul_op {
    T v;
    OPS_HOST_DEVICE T operator()(T x, T y, T z) const { return x + v * y * z; }
};

template <typename T> struct addcdiv_op {
    T v;
    OPS_HOST_DEVICE T operator()(T x, T y, T z) const { return x + v * y / z; }
};

#define TERNARY_(DISPATCH, IT, F)                                                        \
    DISPATCH((IT)->common_dtype, (IT)->op,                                               \
             return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t, scalar_t>((IT), F);)
#define BINARY_(DISPATCH, IT, F)                                                         \
    DISPATCH((IT)->common_dtype, (IT)->op,                                               \
             return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>((IT), F);)

} /* namespace */

extern "C" ops_status
where_out_cuda(ops_iter *it, const ops_tensor *condition, const ops_tensor *self, const ops_tensor *other)
{
    (void)condition;
    (void)self;
    (void)other;
    switch (ops_dtype_itemsize(it->common_dtype)) {
    case 1:
        return ops_cuda_elementwise<int8_t, bool, int8_t, int8_t>(it, where_op());
    case 2:
        return ops_cuda_elementwise<int16_t, bool, int16_t, int16_t>(it, where_op());
    case 4:
        return ops_cuda_elementwise<int32_t, bool, int32_t, int32_t>(it, where_op());
    default:
        return ops_cuda_elementwise<int64_t, bool, int64_t, int64_t>(it, where_op());
    }
}

extern "C" ops_status
clamp_out_cuda(ops_iter *it, const ops_tensor *self, const ops_scalar *min, const ops_scalar *max)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt)) {
        /* a missing bound is an infinite one, which max/min pass through */
        OPS_DISPATCH_FLOATING(dt, it->op, {
            const clamp_float_op<opmath_t> f = {min ? OPS_SCALAR_AS(opmath_t, *min) : (opmath_t)-INFINITY,
                                                max ? OPS_SCALAR_AS(opmath_t, *max) : (opmath_t)INFINITY};
            return ops_cuda_elementwise<scalar_t, scalar_t>(it, f);
        });
        return OPS_OK;
    }
    OPS_DISPATCH_INTEGRAL(dt, it->op, {
        const clamp_int_op<opmath_t> f = {min ? OPS_SCALAR_AS(opmath_t, *min) : (opmath_t)0,
                                          max ? OPS_SCALAR_AS(opmath_t, *max) : (opmath_t)0, min != NULL,
                                          max != NULL};
        return ops_cuda_elementwise<scalar_t, scalar_t>(it, f);
    });
    return OPS_OK;
}

extern "C" ops_status
clamp_tensor_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *min, const ops_tensor *max)
{
    (void)self; /* numeric, by the entry's dtypes */
    if (min && max)
        TERNARY_(OPS_DISPATCH_NUMERIC, it, clamp3_op());
    else if (min)
        BINARY_(OPS_DISPATCH_NUMERIC, it, max_op());
    else
        BINARY_(OPS_DISPATCH_NUMERIC, it, min_op());
    return OPS_OK;
}

extern "C" ops_status
lerp_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *end, const ops_tensor *weight)
{
    (void)self;
    (void)end;
    double wv;
    if (ops_lerp_scalar_weight(weight, &wv))
        TERNARY_(OPS_DISPATCH_FLOATING, it, lerp_scalar_op<opmath_t>{(opmath_t)wv});
    else
        TERNARY_(OPS_DISPATCH_FLOATING, it, lerp_op());
    return OPS_OK;
}

extern "C" ops_status
addcmul_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *tensor1, const ops_tensor *tensor2,
                 ops_scalar value)
{
    (void)self;
    (void)tensor1;
    (void)tensor2;
    TERNARY_(OPS_DISPATCH_NUMERIC, it, addcmul_op<opmath_t>{OPS_SCALAR_AS(opmath_t, value)});
    return OPS_OK;
}

extern "C" ops_status
addcdiv_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *tensor1, const ops_tensor *tensor2,
                 ops_scalar value)
{
    (void)self;
    (void)tensor1;
    (void)tensor2;
    TERNARY_(OPS_DISPATCH_FLOATING, it, addcdiv_op<opmath_t>{OPS_SCALAR_AS(opmath_t, value)});
    return OPS_OK;
}

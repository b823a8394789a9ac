/* Binary arithmetic kernels (CUDA): add, sub, mul, div (true, trunc, floor),
 * remainder, fmod, pow, maximum, minimum, fmax, fmin, atan2 -- kernels/cpu/binary.c on the device.
 *
 * Same dtypes and arithmetic as the CPU kernels: the per-element functions are
 * kernels/ops_elementwise_math.h's, and the argument checks the entries' `check:`
 * functions (kernels/elementwise_check.c), run by the glue before either kernel.  A zero integer divisor is found by a
 * checking kernel (ops_cuda_any) before anything is written.  The iterator has
 * converted both inputs to it->common_dtype; the launcher handles strides, broadcast
 * and host-scalar operands (a CPU 0-dim tensor or Python number). */
#include <string.h>

#include "ops_cuda_loops.cuh"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_binary.h"

namespace {

/* Every input and the output in the common dtype, over the dtypes the schema entry
 * declares (ENTRY: ADD_OUT for add.out, generated ops_kernels_binary.h). */
#define BINARY_DECLARED_(ENTRY, IT, F)                                                   \
    OPS_DISPATCH_DECLARED(ENTRY, (IT)->common_dtype, (IT)->op,                           \
                          return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>((IT), F);)

/* Every input and the output in the common dtype. */
#define BINARY_(DISPATCH, IT, F)                                                         \
    DISPATCH((IT)->common_dtype, (IT)->op,                                               \
             return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>((IT), F);)

template <typename T> struct add_op {
    T alpha;
    OPS_HOST_DEVICE T operator()(T x, T y) const { return x + alpha * y; }
};

template <typename T> struct sub_op {
    T alpha;
    OPS_HOST_DEVICE T operator()(T x, T y) const { return x - alpha * y; }
};

/* bool: the CPU's x && y */
struct mul_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const
    {
        if constexpr (std::is_same<T, bool>::value)
            return x && y;
        else
            return x * y;
    }
};

struct div_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return x / y; }
};

struct div_trunc_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_div_trunc(x, y); }
};

struct div_floor_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_div_floor(x, y); }
};

struct remainder_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_remainder(x, y); }
};

struct fmod_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_fmod(x, y); }
};

struct pow_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_pow(x, y); }
};

struct maximum_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_max(x, y); }
};

struct minimum_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_min(x, y); }
};

struct fmax_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_fmax(x, y); }
};

struct fmin_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_fmin(x, y); }
};

struct atan2_op {
    template <typename T> OPS_HOST_DEVICE T operator()(T x, T y) const { return ops_math_atan2(x, y); }
};

struct is_zero_op {
    template <typename T> OPS_HOST_DEVICE bool operator()(T v) const { return v == 0; }
};

/* Integer division and remainder by zero: refused before anything is written, with
 * the CPU's message.  Only the element size matters for the zero test. */
ops_status
check_divisor(const ops_iter *it)
{
    if (!ops_dtype_is_integral(it->common_dtype, true))
        return OPS_OK;
    bool found = false;
    ops_status st;
    switch (ops_dtype_itemsize(it->dtypes[2])) {
    case 1:
        st = ops_cuda_any<uint8_t>(it, 2, is_zero_op(), &found);
        break;
    case 2:
        st = ops_cuda_any<int16_t>(it, 2, is_zero_op(), &found);
        break;
    case 4:
        st = ops_cuda_any<int32_t>(it, 2, is_zero_op(), &found);
        break;
    default:
        st = ops_cuda_any<int64_t>(it, 2, is_zero_op(), &found);
        break;
    }
    if (st != OPS_OK)
        return st;
    return found ? ops_fail_zero_division(it->op) : OPS_OK;
}

/* The rounding divisions and remainders (numeric dtypes, by their entries): integer
 * divisors checked for zero first, floats follow IEEE. */
template <typename F>
ops_status
division(ops_iter *it, F f)
{
    ops_status st;
    if (ops_dtype_is_floating(it->common_dtype)) {
        BINARY_(OPS_DISPATCH_FLOATING, it, f);
        return OPS_OK;
    }
    if ((st = check_divisor(it)) != OPS_OK)
        return st;
    BINARY_(OPS_DISPATCH_INTEGRAL, it, f);
    return OPS_OK;
}

} /* namespace */

extern "C" ops_status
add_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(ADD_OUT, it, add_op<opmath_t>{OPS_SCALAR_AS(opmath_t, alpha)});
    return OPS_OK;
}

extern "C" ops_status
sub_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(SUB_OUT, it, sub_op<opmath_t>{OPS_SCALAR_AS(opmath_t, alpha)});
    return OPS_OK;
}

extern "C" ops_status
mul_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(MUL_OUT, it, mul_op());
    return OPS_OK;
}

extern "C" ops_status
div_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(DIV_OUT, it, div_op());
    return OPS_OK;
}

extern "C" ops_status
div_out_mode_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other, const char *rounding_mode)
{
    if (rounding_mode == NULL)
        return div_out_cuda(it, self, other);
    /* "trunc" or "floor": the meta (ops_meta_div_mode) refused any other mode */
    if (strcmp(rounding_mode, "trunc") == 0)
        return division(it, div_trunc_op());
    return division(it, div_floor_op());
}

extern "C" ops_status
remainder_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    return division(it, remainder_op());
}

extern "C" ops_status
fmod_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    return division(it, fmod_op());
}

extern "C" ops_status
pow_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *exponent)
{
    (void)self;
    (void)exponent;
    BINARY_DECLARED_(POW_OUT, it, pow_op());
    return OPS_OK;
}

extern "C" ops_status
maximum_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(MAXIMUM_OUT, it, maximum_op());
    return OPS_OK;
}

extern "C" ops_status
minimum_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(MINIMUM_OUT, it, minimum_op());
    return OPS_OK;
}

extern "C" ops_status
fmax_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(FMAX_OUT, it, fmax_op());
    return OPS_OK;
}

extern "C" ops_status
fmin_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(FMIN_OUT, it, fmin_op());
    return OPS_OK;
}

extern "C" ops_status
atan2_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    BINARY_DECLARED_(ATAN2_OUT, it, atan2_op());
    return OPS_OK;
}

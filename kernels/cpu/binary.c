/* Binary arithmetic kernels (CPU): add, sub, mul, div (true, trunc, floor),
 * remainder, fmod, pow, maximum, minimum, atan2.
 *
 * The meta has converted both inputs to it->common_dtype (operands 1 and 2) and
 * chosen the output's dtype, so each kernel dispatches once on the common dtype.
 * Integer arithmetic wraps (the project builds with -fwrapv, as PyTorch's integers
 * wrap); the operations C leaves undefined even then (x / 0, INT_MIN / -1, INT_MIN %
 * -1) are never executed: a zero divisor is reported before anything is written, and
 * a divisor of -1 takes its own branch.  float16/bfloat16 compute in float. */
#include <math.h>
#include <string.h>

#include "cpu_util.h"
#include "ops_kernels.h"

/* ---- integer helpers, one per type (no `x < 0` on unsigned types) --------------- */

#define DEFINE_SIGNED_INT_OPS(T, S)                                                      \
    static inline T trunc_div_##S(T a, T b)                                             \
    {                                                                                    \
        return b == -1 ? (T)-a : (T)(a / b);                                             \
    }                                                                                    \
    static inline T floor_div_##S(T a, T b)                                             \
    {                                                                                    \
        if (b == -1)                                                                     \
            return (T)-a;                                                                \
        const T q = (T)(a / b), r = (T)(a % b);                                          \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;                        \
    }                                                                                    \
    static inline T py_mod_##S(T a, T b)                                                \
    {                                                                                    \
        if (b == -1)                                                                     \
            return 0;                                                                    \
        const T r = (T)(a % b);                                                          \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;                        \
    }                                                                                    \
    static inline T c_mod_##S(T a, T b)                                                 \
    {                                                                                    \
        return b == -1 ? 0 : (T)(a % b);                                                 \
    }                                                                                    \
    /* PyTorch's powi: negative exponents give 0 except for bases 1 and -1. */           \
    static inline T pow_##S(T a, T b)                                                   \
    {                                                                                    \
        if (b < 0) {                                                                     \
            if (a == 1)                                                                  \
                return 1;                                                                \
            if (a == -1)                                                                 \
                return (b & 1) ? -1 : 1;                                                 \
            return 0;                                                                    \
        }                                                                                \
        T r = 1;                                                                         \
        while (b) {                                                                      \
            if (b & 1)                                                                   \
                r = (T)(r * a);                                                          \
            b = (T)(b / 2);                                                              \
            a = (T)(a * a);                                                              \
        }                                                                                \
        return r;                                                                        \
    }

DEFINE_SIGNED_INT_OPS(int8_t, i8)
DEFINE_SIGNED_INT_OPS(int16_t, i16)
DEFINE_SIGNED_INT_OPS(int32_t, i32)
DEFINE_SIGNED_INT_OPS(int64_t, i64)

static inline uint8_t
trunc_div_u8(uint8_t a, uint8_t b)
{
    return (uint8_t)(a / b);
}

static inline uint8_t
floor_div_u8(uint8_t a, uint8_t b)
{
    return (uint8_t)(a / b);
}

static inline uint8_t
py_mod_u8(uint8_t a, uint8_t b)
{
    return (uint8_t)(a % b);
}

static inline uint8_t
c_mod_u8(uint8_t a, uint8_t b)
{
    return (uint8_t)(a % b);
}

static inline uint8_t
pow_u8(uint8_t a, uint8_t b)
{
    uint8_t r = 1;
    while (b) {
        if (b & 1)
            r = (uint8_t)(r * a);
        b = (uint8_t)(b / 2);
        a = (uint8_t)(a * a);
    }
    return r;
}

#define INT_OP(NAME, a, b)                                                               \
    _Generic((a), uint8_t: NAME##_u8, int8_t: NAME##_i8, int16_t: NAME##_i16,            \
             int32_t: NAME##_i32, int64_t: NAME##_i64)((a), (b))

/* ---- floating helpers ------------------------------------------------------------ */

/* Python's floor division (PyTorch's div_floor_floating): the quotient of the
 * exactly-rounded remainder, so floor_divide(a, b) * b + remainder(a, b) == a. */
#define DEFINE_FLOAT_OPS(T, S, FMOD, FLOOR, COPYSIGN)                                    \
    static inline T floor_div_##S(T a, T b)                                             \
    {                                                                                    \
        if (b == 0)                                                                      \
            return a / b;                                                                \
        const T mod = FMOD(a, b);                                                        \
        T div = (a - mod) / b;                                                           \
        if (mod != 0 && (b < 0) != (mod < 0))                                            \
            div -= 1;                                                                    \
        if (div == 0)                                                                    \
            return COPYSIGN((T)0, a / b);                                                \
        T fl = FLOOR(div);                                                               \
        if (div - fl > (T)0.5)                                                           \
            fl += 1;                                                                     \
        return fl;                                                                       \
    }                                                                                    \
    static inline T py_mod_##S(T a, T b)                                                \
    {                                                                                    \
        T mod = FMOD(a, b);                                                              \
        if (mod != 0 && (b < 0) != (mod < 0))                                            \
            mod += b;                                                                    \
        return mod;                                                                      \
    }

DEFINE_FLOAT_OPS(float, f32, fmodf, floorf, copysignf)
DEFINE_FLOAT_OPS(double, f64, fmod, floor, copysign)

#define FLOAT_OP(NAME, a, b) _Generic((a), float: NAME##_f32, double: NAME##_f64)((a), (b))

/* ---- shared checks ------------------------------------------------------------- */

/* add/sub's alpha (PyTorch's alpha_check), then its value range for the dtype. */
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
    return cpu_check_scalar_fits(it->op, "alpha", alpha, cpu_opmath_dtype(dt));
}

/* Integer division and remainder by zero: refused before anything is written. */
static ops_status
check_divisor(const ops_iter *it)
{
    if (!ops_dtype_is_integral(it->common_dtype, true))
        return OPS_OK;
    bool found = false;
    const size_t size = ops_dtype_size(it->dtypes[2]);
    OPS_ITER_LOOP(it, data, strides, n, {
        const char *p = data[2];
        const int64_t s = strides[2];
        bool zero = false;
        switch (size) {
        case 1:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint8_t *)(p + i * s) == 0;
            break;
        case 2:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint16_t *)(p + i * s) == 0;
            break;
        case 4:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint32_t *)(p + i * s) == 0;
            break;
        default:
            for (int64_t i = 0; i < n; i++)
                zero |= *(const uint64_t *)(p + i * s) == 0;
            break;
        }
        if (zero)
            __atomic_store_n(&found, true, __ATOMIC_RELAXED);
    });
    if (found)
        return ops_fail(OPS_ERR_RUNTIME, "%s: ZeroDivisionError (integer division or remainder by zero)", it->op);
    return OPS_OK;
}

static inline ops_status
fail_bool(const ops_iter *it)
{
    return ops_fail_dtype(it->op, OPS_BOOL, OPS_MASK_NUMERIC);
}

/* The body of the rounding divisions and remainders: bool is refused, integer
 * divisors are checked for zero before anything is written, floats follow IEEE. */
#define DIVISION_KERNEL_(IT, FLOAT_EXPR, INT_EXPR)                                          \
    do {                                                                                    \
        const ops_dtype dt_ = (IT)->common_dtype;                                           \
        if (dt_ == OPS_BOOL)                                                                \
            return fail_bool(IT);                                                           \
        if (ops_dtype_is_floating(dt_)) {                                                   \
            OPS_DISPATCH_FLOATING(dt_, (IT)->op,                                            \
                                  OPS_BINARY_KERNEL(IT, scalar_t, scalar_t, scalar_t, FLOAT_EXPR);); \
            return OPS_OK;                                                                  \
        }                                                                                   \
        const ops_status st_ = check_divisor(IT);                                           \
        if (st_ != OPS_OK)                                                                  \
            return st_;                                                                     \
        OPS_DISPATCH_INTEGRAL(dt_, (IT)->op,                                                \
                              OPS_BINARY_KERNEL(IT, scalar_t, scalar_t, scalar_t, INT_EXPR);); \
        return OPS_OK;                                                                      \
    } while (0)

/* ---- add, sub, mul -------------------------------------------------------------- */

ops_status
add_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    (void)self;
    (void)other;
    const ops_status st = check_alpha(it, alpha);
    if (st != OPS_OK)
        return st;
    OPS_DISPATCH_ALL(it->common_dtype, it->op, {
        const opmath_t a = OPS_SCALAR_AS(opmath_t, alpha);
        OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x + a * y);
    });
    return OPS_OK;
}

ops_status
sub_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)
{
    if (self->dtype == OPS_BOOL && other->dtype == OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                        "`^` or `logical_xor()` operator instead.",
                        it->op);
    if (self->dtype == OPS_BOOL || other->dtype == OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                        "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                        it->op);
    const ops_status st = check_alpha(it, alpha);
    if (st != OPS_OK)
        return st;
    OPS_DISPATCH_NUMERIC(it->common_dtype, it->op, {
        const opmath_t a = OPS_SCALAR_AS(opmath_t, alpha);
        OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x - a * y);
    });
    return OPS_OK;
}

ops_status
mul_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    if (it->common_dtype == OPS_BOOL) {
        OPS_BINARY_KERNEL(it, bool, bool, bool, x && y);
        return OPS_OK;
    }
    OPS_DISPATCH_NUMERIC(it->common_dtype, it->op, OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x * y););
    return OPS_OK;
}

/* ---- division ------------------------------------------------------------------- */

ops_status
div_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_FLOATING(it->common_dtype, it->op, OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x / y););
    return OPS_OK;
}

ops_status
div_out_mode_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, const char *rounding_mode)
{
    if (rounding_mode == NULL)
        return div_out_cpu(it, self, other);
    const bool trunc_mode = strcmp(rounding_mode, "trunc") == 0;
    if (!trunc_mode && strcmp(rounding_mode, "floor") != 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", it->op,
                        rounding_mode);
    if (trunc_mode)
        DIVISION_KERNEL_(it, CPU_FP1(truncf, trunc, x / y), INT_OP(trunc_div, x, y));
    DIVISION_KERNEL_(it, FLOAT_OP(floor_div, x, y), INT_OP(floor_div, x, y));
}

ops_status
remainder_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    DIVISION_KERNEL_(it, FLOAT_OP(py_mod, x, y), INT_OP(py_mod, x, y));
}

ops_status
fmod_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    DIVISION_KERNEL_(it, CPU_FP2(fmodf, fmod, x, y), INT_OP(c_mod, x, y));
}

/* ---- pow, maximum, minimum, atan2 ---------------------------------------------- */

ops_status
pow_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *exponent)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (dt == OPS_BOOL)
        return fail_bool(it);
    if (ops_dtype_is_floating(dt)) {
        OPS_DISPATCH_FLOATING(dt, it->op,
                              OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, CPU_FP2(powf, pow, x, y)););
        return OPS_OK;
    }
    /* pow(int tensor, negative int Scalar) is refused, as PyTorch's pow.Tensor_Scalar;
     * negative exponents inside a tensor follow powi's rules instead. */
    if ((exponent->flags & OPS_TENSOR_WRAPPED_NUMBER) && ops_dtype_is_integral(exponent->dtype, true)) {
        const ops_scalar e = ops_scalar_load(ops_tensor_data_ptr(exponent), exponent->dtype);
        if (e.kind == OPS_SCALAR_INT && e.v.i < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: Integers to negative integer powers are not allowed.", it->op);
    }
    OPS_DISPATCH_INTEGRAL(dt, it->op, OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, INT_OP(pow, x, y)););
    return OPS_OK;
}

ops_status
maximum_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt)) {
        OPS_DISPATCH_FLOATING(dt, it->op,
                              OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, CPU_MAX_NAN(x, y)););
        return OPS_OK;
    }
    OPS_DISPATCH_INTEGRAL_AND_BOOL(dt, it->op,
                                   OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x > y ? x : y););
    return OPS_OK;
}

ops_status
minimum_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt)) {
        OPS_DISPATCH_FLOATING(dt, it->op,
                              OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, CPU_MIN_NAN(x, y)););
        return OPS_OK;
    }
    OPS_DISPATCH_INTEGRAL_AND_BOOL(dt, it->op,
                                   OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, x < y ? x : y););
    return OPS_OK;
}

ops_status
atan2_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other)
{
    (void)self;
    (void)other;
    OPS_DISPATCH_FLOATING(it->common_dtype, it->op,
                          OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, CPU_FP2(atan2f, atan2, x, y)););
    return OPS_OK;
}

/* Helpers shared by the CPU elementwise kernels (binary.c, compare.c, ternary.c):
 * PyTorch's checked Scalar conversion and the type-generic libm picks.  Private to
 * kernels/cpu. */
#ifndef OPS_CPU_UTIL_H
#define OPS_CPU_UTIL_H

#include <math.h>

#include "ops_dispatch.h"

/* The float or double libm function, picked by the type of the first argument
 * (a floating kernel's opmath_t is one of the two). */
#define CPU_FP1(F32, F64, x) _Generic((x), float: F32, double: F64)(x)
#define CPU_FP2(F32, F64, x, y) _Generic((x), float: F32, double: F64)((x), (y))

/* maximum/minimum of floats that propagate NaN from either side (on ties the first
 * argument wins, as NumPy's). */
static inline float
cpu_max_nan_f32(float a, float b)
{
    return (a >= b || a != a) ? a : b;
}

static inline double
cpu_max_nan_f64(double a, double b)
{
    return (a >= b || a != a) ? a : b;
}

static inline float
cpu_min_nan_f32(float a, float b)
{
    return (a <= b || a != a) ? a : b;
}

static inline double
cpu_min_nan_f64(double a, double b)
{
    return (a <= b || a != a) ? a : b;
}

#define CPU_MAX_NAN(a, b) CPU_FP2(cpu_max_nan_f32, cpu_max_nan_f64, a, b)
#define CPU_MIN_NAN(a, b) CPU_FP2(cpu_min_nan_f32, cpu_min_nan_f64, a, b)

/* The dtype a kernel computes dt in (float for float16/bfloat16); Scalars are
 * converted to this, so that is the range they are checked against. */
static inline ops_dtype
cpu_opmath_dtype(ops_dtype dt)
{
    return dt == OPS_FLOAT16 || dt == OPS_BFLOAT16 ? OPS_FLOAT32 : dt;
}

/* PyTorch's Scalar::to<T>() check: s must be representable in dt.  Integral targets
 * take values in [lowest, max] (uint8 also takes -255..-1, which wrap, as PyTorch
 * allows for `a - b` written as `a + 255 * b`); a float scalar must not be NaN for
 * them.  Floating targets take inf and NaN, and finite values within their range. */
static inline ops_status
cpu_check_scalar_fits(const char *op, const char *arg, ops_scalar s, ops_dtype dt)
{
    bool ok = true;
    double lo = 0, hi = 0;
    switch (dt) {
    case OPS_BOOL:
        return OPS_OK;
    case OPS_UINT8:
        lo = -255.0, hi = 255.0;
        break;
    case OPS_INT8:
        lo = -128.0, hi = 127.0;
        break;
    case OPS_INT16:
        lo = -32768.0, hi = 32767.0;
        break;
    case OPS_INT32:
        lo = -2147483648.0, hi = 2147483647.0;
        break;
    case OPS_INT64:
        if (s.kind == OPS_SCALAR_FLOAT)
            ok = s.v.f >= -9223372036854775808.0 && s.v.f < 9223372036854775808.0;
        goto done;
    case OPS_FLOAT16:
        hi = 65504.0;
        break;
    case OPS_BFLOAT16:
        hi = 3.3895313892515355e38;
        break;
    case OPS_FLOAT32:
        hi = 3.4028234663852886e38;
        break;
    default:
        return OPS_OK;
    }
    if (ops_dtype_is_floating(dt)) {
        if (s.kind == OPS_SCALAR_FLOAT && isfinite(s.v.f))
            ok = s.v.f >= -hi && s.v.f <= hi;
    } else if (s.kind == OPS_SCALAR_FLOAT) {
        ok = s.v.f >= lo && s.v.f <= hi; /* false for NaN */
    } else if (s.kind == OPS_SCALAR_INT) {
        ok = s.v.i >= (int64_t)lo && s.v.i <= (int64_t)hi;
    }
done:
    if (!ok)
        return ops_fail(OPS_ERR_VALUE, "%s: value of '%s' cannot be converted to type %s without overflow", op,
                        arg, ops_dtype_name(dt));
    return OPS_OK;
}

#endif /* OPS_CPU_UTIL_H */

/* The value conversions between dtypes, one definition for the CPU's conversion loops
 * (runtime/core/convert.c) and the CUDA copy kernel (kernels/cuda/copy.cu), so that a copy
 * gives the same bits on either device.
 *
 * The rules (PyTorch's on x86):
 *  - float -> integer: in-range values truncate toward zero; NaN and out-of-range
 *    values give what x86's cvttsd2si gives, the type's minimum for int32/int64, then
 *    the low bits of that for the narrower types.  C leaves such conversions undefined
 *    (and the GPU saturates instead), so the range is tested first;
 *  - integer -> narrower integer: wraps (the low bits);
 *  - anything -> bool: nonzero (NaN included) is true;
 *  - -> float16/bfloat16: through float, rounding to nearest even (a double is
 *    rounded to float first, as PyTorch does);
 *  - float16/bfloat16 -> anything: through float (exact).
 *
 * C sees the two range-checked conversions, which convert.c's per-pair loops build
 * on; C++ (the .cu files) also gets ops_convert<D>(s), the whole rule as a template. */
#ifndef OPS_CONVERT_H
#define OPS_CONVERT_H

#include <stdint.h>

#include "ops_base.h"        /* ops_scalar, ops_dtype, ops_status */
#include "ops_scalar_math.h" /* OPS_INLINE, ops_half, ops_bfloat16 and their conversions */

#ifdef __cplusplus
extern "C" {
#endif
/* PyTorch's checked Scalar -> dtype conversion for a fill value (fill_ on any device):
 * OPS_ERR_VALUE "op: value 300 cannot be converted to type uint8 without overflow"
 * when value does not fit dt.  Host code; kernels/creation.c. */
ops_status ops_check_fill_value(const char *op, ops_scalar value, ops_dtype dt);
#ifdef __cplusplus
}
#endif

/* double -> int64: truncation where the value is in [-2^63, 2^63), else INT64_MIN. */
OPS_INLINE int64_t
ops_convert_f64_to_i64(double v)
{
    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;
}

/* double -> int32: truncation where the value is in (-2^31 - 1, 2^31), else
 * INT32_MIN.  uint8/int8/int16 take the low bits of this. */
OPS_INLINE int32_t
ops_convert_f64_to_i32(double v)
{
    return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;
}

#ifdef __cplusplus
#include <type_traits>

/* The source value as the arithmetic type conversions start from: float16 and
 * bfloat16 become float, every other type stays itself. */
template <typename S> OPS_HOST_DEVICE inline S ops_convert_widen(S v) { return v; }
OPS_HOST_DEVICE inline float ops_convert_widen(ops_half v) { return ops_half_to_float(v); }
OPS_HOST_DEVICE inline float ops_convert_widen(ops_bfloat16 v) { return ops_bfloat16_to_float(v); }

/* v (any storage type) converted to the storage type D by the rules above. */
template <typename D, typename S>
OPS_HOST_DEVICE inline D
ops_convert(S v)
{
    const auto w = ops_convert_widen(v);
    typedef decltype(w) W;
    constexpr bool from_float = std::is_floating_point<typename std::remove_cv<W>::type>::value;
    if constexpr (std::is_same<D, bool>::value) {
        return w != 0;
    } else if constexpr (std::is_same<D, int64_t>::value) {
        if constexpr (from_float)
            return ops_convert_f64_to_i64((double)w);
        else
            return (int64_t)w;
    } else if constexpr (std::is_integral<D>::value) { /* uint8, int8, int16, int32 */
        if constexpr (from_float)
            return (D)ops_convert_f64_to_i32((double)w);
        else
            return (D)w;
    } else if constexpr (std::is_same<D, ops_half>::value) {
        return ops_float_to_half((float)w);
    } else if constexpr (std::is_same<D, ops_bfloat16>::value) {
        return ops_float_to_bfloat16((float)w);
    } else { /* float, double */
        return (D)w;
    }
}
#endif /* __cplusplus */

#endif /* OPS_CONVERT_H */

/* What the reduction drivers (kernels/reduce.c, reduce_dim.c), the CPU loops
 * (kernels/cpu/reduce*.c) and the CUDA ones (kernels/cuda/reduce.cu, scan.cu,
 * softmax.cu) share: the kinds of reduction and the scalar rules (NaN propagation,
 * which element wins a tie, the var/std divisor) compiled for host and device from
 * this one header so the backends cannot drift.
 *
 * The drivers do everything but the arithmetic for both devices: dims, dtype rules,
 * error messages, out= checks, the conversion of the input to the dtype computed in,
 * the result's allocation and the final out= write.  Only the loop over the elements
 * is the backend's, reached through the stubs of kernels/reduce.h. */
#ifndef OPS_REDUCE_COMMON_H
#define OPS_REDUCE_COMMON_H

#include "ops_internal.h"
#include "ops_scalar_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    RED_SUM,
    RED_NANSUM,
    RED_MEAN,
    RED_PROD,
    RED_AMAX,
    RED_AMIN,
    RED_ALL,
    RED_ANY,
    RED_LSE,
    RED_NANMEAN,
    RED_VAR,
    RED_STD,
    RED_ARGMAX,
    RED_ARGMIN,
    RED_NORM,   /* vector norm of order arg */
    RED_MAXDIM, /* max.dim: values and int64 indices (one reduced dim) */
    RED_MINDIM,
    RED_AMINMAX, /* aminmax: the minimum and (into the second result) the maximum */
    RED_ROWS,    /* no loop of the kinds: an op of the reduction family that computes its own rows
                    (kernels/reduce.h); the loops never see it */
} red_kind;

/* The one-dim ops: each line along dim is transformed on its own. */
typedef enum {
    DIM_SOFTMAX,
    DIM_LOG_SOFTMAX,
    DIM_CUMSUM,
    DIM_CUMPROD,
} dim_kind;

/* ---- scalar rules, host and device ---------------------------------------------------- */

/* maximum/minimum that propagate NaN from either side; on ties the first argument
 * wins (NumPy's rule, and amax/amin's). */
OPS_INLINE float ops_red_max_nan_f32(float a, float b) { return (a >= b || a != a) ? a : b; }
OPS_INLINE double ops_red_max_nan_f64(double a, double b) { return (a >= b || a != a) ? a : b; }
OPS_INLINE float ops_red_min_nan_f32(float a, float b) { return (a <= b || a != a) ? a : b; }
OPS_INLINE double ops_red_min_nan_f64(double a, double b) { return (a <= b || a != a) ? a : b; }

/* var/std: the divisor nred - correction, never negative (as PyTorch: 0 gives inf or
 * NaN rather than a sign flip). */
OPS_INLINE double ops_red_var_divisor(int64_t nred, double correction)
{
    const double dof = (double)nred - correction;
    return dof < 0 ? 0 : dof;
}

/* logsumexp's shift: the maximum, except that an infinite (or all -inf) maximum
 * shifts by 0 so that exp(x - m) never computes inf - inf. */
OPS_INLINE float ops_red_lse_shift_f32(float m) { return isinf(m) ? 0.0f : m; }
OPS_INLINE double ops_red_lse_shift_f64(double m) { return isinf(m) ? 0.0 : m; }

#ifdef __cplusplus
} /* extern "C" */

/* The same rules overloaded for the C++ (CUDA) kernels' templates. */
OPS_HOST_DEVICE inline float ops_red_max_nan(float a, float b) { return ops_red_max_nan_f32(a, b); }
OPS_HOST_DEVICE inline double ops_red_max_nan(double a, double b) { return ops_red_max_nan_f64(a, b); }
OPS_HOST_DEVICE inline float ops_red_min_nan(float a, float b) { return ops_red_min_nan_f32(a, b); }
OPS_HOST_DEVICE inline double ops_red_min_nan(double a, double b) { return ops_red_min_nan_f64(a, b); }
OPS_HOST_DEVICE inline float ops_red_lse_shift(float m) { return ops_red_lse_shift_f32(m); }
OPS_HOST_DEVICE inline double ops_red_lse_shift(double m) { return ops_red_lse_shift_f64(m); }

extern "C" {
#else
#define OPS_RED_MAX_NAN(a, b) _Generic((a), float: ops_red_max_nan_f32, double: ops_red_max_nan_f64)((a), (b))
#define OPS_RED_MIN_NAN(a, b) _Generic((a), float: ops_red_min_nan_f32, double: ops_red_min_nan_f64)((a), (b))
#define OPS_RED_LSE_SHIFT(m) _Generic((m), float: ops_red_lse_shift_f32, double: ops_red_lse_shift_f64)(m)
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPS_REDUCE_COMMON_H */

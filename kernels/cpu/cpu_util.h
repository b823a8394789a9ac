/* Helpers shared by CPU kernels (reduce.c, sort.c, the index files): the opmath
 * dtype, NaN-propagating max/min and the type-generic libm picks.  Private to
 * kernels/cpu. */
#ifndef OPS_CPU_UTIL_H
#define OPS_CPU_UTIL_H

#include <math.h>

#include "ops_dispatch.h"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"

/* The float or double libm function, picked by the type of the first argument
 * (a floating kernel's opmath_t is one of the two). */
#define CPU_FP1(F32, F64, x) _Generic((x), float: F32, double: F64)(x)
#define CPU_FP2(F32, F64, x, y) _Generic((x), float: F32, double: F64)((x), (y))

/* maximum/minimum of floats that propagate NaN from either side (on ties the first
 * argument wins, as NumPy's), and the opmath dtype: one definition for both backends,
 * in kernels/ops_elementwise_math.h and kernels/elementwise_check.h. */
#define CPU_MAX_NAN(a, b) ops_math_max(a, b)
#define CPU_MIN_NAN(a, b) ops_math_min(a, b)
#define cpu_opmath_dtype(dt) ops_opmath_dtype(dt)

#endif /* OPS_CPU_UTIL_H */

/* Ternary and bounded kernels (CPU): where, clamp (Scalar and Tensor bounds), lerp,
 * addcmul, addcdiv.
 *
 * Operand 0 is the output; the inputs follow in schema order (clamp.Tensor: self,
 * then whichever bounds are present).  Floating clamps and bounds propagate NaN
 * from any side, as PyTorch's clamp does.  The per-element arithmetic is
 * kernels/ops_elementwise_math.h's, shared with kernels/cuda/ternary.cu; the argument
 * checks are the entries' `check:` functions (kernels/elementwise_check.c), run by the
 * glue before the kernel. */
#include <math.h>

#include "ops_dispatch.h"
#include "kernels/elementwise_check.h"
#include "kernels/ops_elementwise_math.h"
#include "ops_kernels_ternary.h"

/* ---- where ---------------------------------------------------------------------- */

ops_status
where_out_cpu(ops_iter *it, const ops_tensor *condition, const ops_tensor *self, const ops_tensor *other)
{
    (void)condition;
    (void)self;
    (void)other;
    /* A pure selection: elements move as stored (no opmath round trip), so NaN
     * payloads and float16 bits come through unchanged. */
    OPS_DISPATCH_ALL(it->common_dtype, it->op, {
        OPS_ITER_LOOP(it, d, s, n, {
            const bool contiguous = s[0] == (int64_t)sizeof(scalar_t) && s[1] == 1 &&
                                    s[2] == (int64_t)sizeof(scalar_t) && s[3] == (int64_t)sizeof(scalar_t);
            /* a value broadcast along the run (where(c, x, 0.0), a row or column of
             * self/other): loaded once, so the loop is a vector select as well */
            const bool dense_oc = s[0] == (int64_t)sizeof(scalar_t) && s[1] == 1;
            if (contiguous) {
                scalar_t *o = (scalar_t *)d[0];
                const uint8_t *c = (const uint8_t *)d[1];
                const scalar_t *a = (const scalar_t *)d[2];
                const scalar_t *b = (const scalar_t *)d[3];
                OPS_SIMD_LOOP
                for (int64_t i = 0; i < n; i++)
                    o[i] = c[i] != 0 ? a[i] : b[i];
            } else if (dense_oc && s[2] == (int64_t)sizeof(scalar_t) && s[3] == 0) {
                scalar_t *o = (scalar_t *)d[0];
                const uint8_t *c = (const uint8_t *)d[1];
                const scalar_t *a = (const scalar_t *)d[2];
                const scalar_t b = *(const scalar_t *)d[3];
                OPS_SIMD_LOOP
                for (int64_t i = 0; i < n; i++)
                    o[i] = c[i] != 0 ? a[i] : b;
            } else if (dense_oc && s[2] == 0 && s[3] == (int64_t)sizeof(scalar_t)) {
                scalar_t *o = (scalar_t *)d[0];
                const uint8_t *c = (const uint8_t *)d[1];
                const scalar_t a = *(const scalar_t *)d[2];
                const scalar_t *b = (const scalar_t *)d[3];
                OPS_SIMD_LOOP
                for (int64_t i = 0; i < n; i++)
                    o[i] = c[i] != 0 ? a : b[i];
            } else if (dense_oc && s[2] == 0 && s[3] == 0) {
                scalar_t *o = (scalar_t *)d[0];
                const uint8_t *c = (const uint8_t *)d[1];
                const scalar_t a = *(const scalar_t *)d[2];
                const scalar_t b = *(const scalar_t *)d[3];
                OPS_SIMD_LOOP
                for (int64_t i = 0; i < n; i++)
                    o[i] = c[i] != 0 ? a : b;
            } else {
                for (int64_t i = 0; i < n; i++)
                    *(scalar_t *)(d[0] + i * s[0]) = *(const uint8_t *)(d[1] + i * s[1]) != 0
                                                         ? *(const scalar_t *)(d[2] + i * s[2])
                                                         : *(const scalar_t *)(d[3] + i * s[3]);
            }
        });
    });
    return OPS_OK;
}

/* ---- clamp ---------------------------------------------------------------------- */

ops_status
clamp_out_cpu(ops_iter *it, const ops_tensor *self, const ops_scalar *min, const ops_scalar *max)
{
    (void)self;
    const ops_dtype dt = it->common_dtype;
    if (ops_dtype_is_floating(dt)) {
        /* a missing bound is an infinite one, which max/min pass through */
        OPS_DISPATCH_FLOATING(dt, it->op, {
            const opmath_t lo = min ? OPS_SCALAR_AS(opmath_t, *min) : (opmath_t)-INFINITY;
            const opmath_t hi = max ? OPS_SCALAR_AS(opmath_t, *max) : (opmath_t)INFINITY;
            OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ops_math_clamp(x, lo, hi));
        });
        return OPS_OK;
    }
    const bool has_lo = min != NULL, has_hi = max != NULL;
    OPS_DISPATCH_INTEGRAL(dt, it->op, {
        const opmath_t lo = has_lo ? OPS_SCALAR_AS(opmath_t, *min) : 0;
        const opmath_t hi = has_hi ? OPS_SCALAR_AS(opmath_t, *max) : 0;
        OPS_UNARY_KERNEL(it, scalar_t, scalar_t, ops_math_clamp_opt(x, lo, hi, has_lo, has_hi));
    });
    return OPS_OK;
}

ops_status
clamp_tensor_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *min, const ops_tensor *max)
{
    (void)self;
    const ops_dtype dt = it->common_dtype; /* numeric, by the entry's dtypes */
    if (min && max)
        OPS_DISPATCH_NUMERIC(dt, it->op,
                             OPS_TERNARY_KERNEL(it, scalar_t, scalar_t, scalar_t, scalar_t,
                                                ops_math_clamp(x, y, z)););
    else if (min)
        OPS_DISPATCH_NUMERIC(dt, it->op,
                             OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_max(x, y)););
    else
        OPS_DISPATCH_NUMERIC(dt, it->op,
                             OPS_BINARY_KERNEL(it, scalar_t, scalar_t, scalar_t, ops_math_min(x, y)););
    return OPS_OK;
}

/* ---- lerp ----------------------------------------------------------------------- */

ops_status
lerp_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *end, const ops_tensor *weight)
{
    (void)self;
    (void)end;
    double wv;
    if (ops_lerp_scalar_weight(weight, &wv)) {
        /* A Scalar weight is used at opmath precision, not rounded to self's dtype. */
        OPS_DISPATCH_FLOATING(it->common_dtype, it->op, {
            const opmath_t w = (opmath_t)wv;
            OPS_TERNARY_KERNEL(it, scalar_t, scalar_t, scalar_t, scalar_t, ops_math_lerp(x, y, w));
        });
    } else {
        OPS_DISPATCH_FLOATING(it->common_dtype, it->op,
                              OPS_TERNARY_KERNEL(it, scalar_t, scalar_t, scalar_t, scalar_t,
                                                 ops_math_lerp(x, y, z)););
    }
    return OPS_OK;
}

/* ---- addcmul, addcdiv ----------------------------------------------------------- */

ops_status
addcmul_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *tensor1, const ops_tensor *tensor2,
                ops_scalar value)
{
    (void)self;
    (void)tensor1;
    (void)tensor2;
    OPS_DISPATCH_NUMERIC(it->common_dtype, it->op, {
        const opmath_t v = OPS_SCALAR_AS(opmath_t, value);
        OPS_TERNARY_KERNEL(it, scalar_t, scalar_t, scalar_t, scalar_t, x + v * y * z);
    });
    return OPS_OK;
}

ops_status
addcdiv_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *tensor1, const ops_tensor *tensor2,
                ops_scalar value)
{
    (void)self;
    (void)tensor1;
    (void)tensor2;
    OPS_DISPATCH_FLOATING(it->common_dtype, it->op, {
        const opmath_t v = OPS_SCALAR_AS(opmath_t, value);
        OPS_TERNARY_KERNEL(it, scalar_t, scalar_t, scalar_t, scalar_t, x + v * y / z);
    });
    return OPS_OK;
}

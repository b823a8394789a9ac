/* The element formulas of arange and linspace, for the CPU loops
 * (kernels/cpu/creation.c) and the CUDA kernels (kernels/cuda/creation.cu), for the
 * sequences the drivers of kernels/creation.c prepare: one
 * definition, static inline and OPS_HOST_DEVICE, C and C++ clean, so both devices
 * write the same bits.  The host prepares an ops_seq (the start, step and the
 * accumulate type's constants, computed once as PyTorch does); element i's value is
 * then a function of i alone, whichever thread computes it.
 *
 * The products and sums go through ops_fmul_rn_ / ops_dadd_rn_ (include/libops/ops_philox.h)
 * so nvcc cannot contract them into FMAs the host does not do. */
#ifndef OPS_CREATION_MATH_H
#define OPS_CREATION_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "ops_base.h"
#include "ops_philox.h" /* the _rn_ arithmetic */
#include "ops_scalar_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ops_seq_kind {
    OPS_SEQ_ARANGE,   /* start + step * i in the accumulate type */
    OPS_SEQ_LINSPACE, /* i < half: start + step * i, else end - step * (last - i) */
} ops_seq_kind;

typedef struct ops_seq {
    ops_seq_kind kind;
    ops_dtype dtype;
    uint64_t istart, istep; /* arange, integral dtypes (wrapping int64 math) */
    float fstart, fend, fstep; /* float16/bfloat16 (rounded to the dtype), float32 */
    double dstart, dend, dstep; /* float64; integral linspace; float32 arange */
    int64_t half, last;         /* linspace: n / 2 and n - 1 */
} ops_seq;

/* v rounded to float16 or bfloat16 and back (their arithmetic, emulated in float). */
OPS_INLINE float
ops_seq_round16(ops_dtype dt, float v)
{
    return dt == OPS_FLOAT16 ? ops_half_to_float(ops_float_to_half(v))
                             : ops_bfloat16_to_float(ops_float_to_bfloat16(v));
}

/* Store a double into an integral dtype by C conversion (truncation; in range). */
OPS_INLINE void
ops_seq_store_trunc(ops_dtype dt, void *p, double v)
{
    switch (dt) {
    case OPS_UINT8:
        *(uint8_t *)p = (uint8_t)v;
        break;
    case OPS_INT8:
        *(int8_t *)p = (int8_t)v;
        break;
    case OPS_INT16:
        *(int16_t *)p = (int16_t)v;
        break;
    case OPS_INT32:
        *(int32_t *)p = (int32_t)v;
        break;
    default:
        *(int64_t *)p = (int64_t)v;
        break;
    }
}

/* Store the low bits of v into an integral dtype (arange's wrapping narrowing). */
OPS_INLINE void
ops_seq_store_wrap(ops_dtype dt, void *p, uint64_t v)
{
    switch (dt) {
    case OPS_UINT8:
        *(uint8_t *)p = (uint8_t)v;
        break;
    case OPS_INT8:
        *(int8_t *)p = (int8_t)(uint8_t)v;
        break;
    case OPS_INT16:
        *(int16_t *)p = (int16_t)(uint16_t)v;
        break;
    case OPS_INT32:
        *(int32_t *)p = (int32_t)(uint32_t)v;
        break;
    default:
        *(int64_t *)p = (int64_t)v;
        break;
    }
}

/* arange's element i: int64 math for integral dtypes (wrapping, then narrowed),
 * float for float16/bfloat16, double for float32/float64; rounded once. */
OPS_INLINE void
ops_seq_arange_store(const ops_seq *q, int64_t i, void *p)
{
    switch (q->dtype) {
    case OPS_FLOAT16:
        *(ops_half *)p = ops_float_to_half(ops_fadd_rn_(q->fstart, ops_fmul_rn_(q->fstep, (float)i)));
        break;
    case OPS_BFLOAT16:
        *(ops_bfloat16 *)p = ops_float_to_bfloat16(ops_fadd_rn_(q->fstart, ops_fmul_rn_(q->fstep, (float)i)));
        break;
    case OPS_FLOAT32:
        *(float *)p = (float)ops_dadd_rn_(q->dstart, ops_dmul_rn_(q->dstep, (double)i));
        break;
    case OPS_FLOAT64:
        *(double *)p = ops_dadd_rn_(q->dstart, ops_dmul_rn_(q->dstep, (double)i));
        break;
    default:
        ops_seq_store_wrap(q->dtype, p, q->istart + q->istep * (uint64_t)i);
        break;
    }
}

/* linspace's element i (n >= 2): the first half counts up from start, the second
 * down from end, so both ends are exact; integral dtypes in double then truncated,
 * floating ones in their own type (float16/bfloat16 rounding after every step). */
OPS_INLINE void
ops_seq_linspace_store(const ops_seq *q, int64_t i, void *p)
{
    const bool up = i < q->half;
    const int64_t k = up ? i : q->last - i;
    switch (q->dtype) {
    case OPS_FLOAT16:
    case OPS_BFLOAT16: {
        const float d = ops_seq_round16(q->dtype, ops_fmul_rn_(q->fstep, ops_seq_round16(q->dtype, (float)k)));
        const float v = ops_seq_round16(q->dtype, up ? ops_fadd_rn_(q->fstart, d) : ops_fadd_rn_(q->fend, -d));
        if (q->dtype == OPS_FLOAT16)
            *(ops_half *)p = ops_float_to_half(v);
        else
            *(ops_bfloat16 *)p = ops_float_to_bfloat16(v);
        break;
    }
    case OPS_FLOAT32: {
        const float d = ops_fmul_rn_(q->fstep, (float)k);
        *(float *)p = up ? ops_fadd_rn_(q->fstart, d) : ops_fadd_rn_(q->fend, -d);
        break;
    }
    default: {
        const double d = ops_dmul_rn_(q->dstep, (double)k);
        const double v = up ? ops_dadd_rn_(q->dstart, d) : ops_dadd_rn_(q->dend, -d);
        if (q->dtype == OPS_FLOAT64)
            *(double *)p = v;
        else
            ops_seq_store_trunc(q->dtype, p, v);
        break;
    }
    }
}

OPS_INLINE void
ops_seq_store(const ops_seq *q, int64_t i, void *p)
{
    if (q->kind == OPS_SEQ_ARANGE)
        ops_seq_arange_store(q, i, p);
    else
        ops_seq_linspace_store(q, i, p);
}

#ifdef __cplusplus
}
#endif
#endif /* OPS_CREATION_MATH_H */

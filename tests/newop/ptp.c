/* ptp (CPU): the range max - min of the reduced elements (NumPy's peak to peak); NaN
 * when one of them is NaN.
 *
 * The generated glue of ptp and ptp.out has run the reduction family's meta step
 * (`meta: reduction`, `reduce: [rows, floating, no_identity]` in the schema): dim None /
 * one dim / a list, keepdim, the shape of the result, out=, and the rules asked for (a
 * floating input; no empty reduction, which has no range).  It hands this kernel the
 * input as r->nout contiguous rows of r->nred elements and the result to fill, and
 * writes the result into out= (or returns it) afterwards.  This file computes a row,
 * in float32 and float64 (the dtypes its schema entry declares). */
#include "kernels/reduce.h"
#include "ops_dispatch.h"
#include "ops_kernels_ptp.h"

#define PTP_ROWS_(T)                                                                     \
    do {                                                                                 \
        const T *in = (const T *)ops_tensor_data_ptr(r->src);                            \
        T *res = (T *)ops_tensor_data_ptr(r->res);                                       \
        for (int64_t o = 0; o < r->nout; o++) {                                          \
            const T *row = in + o * r->nred;                                             \
            T lo = row[0], hi = row[0];                                                  \
            for (int64_t i = 1; i < r->nred && lo == lo; i++) {                          \
                const T x = row[i];                                                      \
                if (x != x)                                                              \
                    lo = hi = x;                                                         \
                else if (x < lo)                                                         \
                    lo = x;                                                              \
                else if (x > hi)                                                         \
                    hi = x;                                                              \
            }                                                                            \
            res[o] = hi - lo;                                                            \
        }                                                                                \
    } while (0)

/* ptp.out, and through it every form of ptp. */
ops_status
ptp_out_cpu(ops_reduce *r)
{
    if (r->nout == 0)
        return OPS_OK;
    OPS_DISPATCH_CASES(r->src->dtype, "ptp", OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64),
                       OPS_CASE_FLOAT32(PTP_ROWS_(scalar_t);) OPS_CASE_FLOAT64(PTP_ROWS_(scalar_t);));
    return OPS_OK;
}

/* ptp (CPU): the range max - min of the reduced elements (NumPy's peak to peak); NaN
 * when one of them is NaN.
 *
 * reduce_meta (kernels/reduce.h) has done what every reduction does, for every
 * device: dim None / one dim / a list, keepdim, the shape of the result, out=, and the
 * rules asked for (a floating input; no empty reduction, which has no range).  It
 * hands over the input as nout contiguous rows of nred elements; this file computes
 * a row, in float32 and float64 (the dtypes its schema entry declares). */
#include "kernels/reduce.h"
#include "ops_dispatch.h"
#include "ops_kernels_ptp.h"

#define PTP_ROWS_(T)                                                                     \
    do {                                                                                 \
        const T *in = (const T *)ops_tensor_data_ptr(m->rows);                           \
        T *res = (T *)ops_tensor_data_ptr(m->result);                                    \
        for (int64_t o = 0; o < m->nout; o++) {                                          \
            const T *row = in + o * m->nred;                                             \
            T lo = row[0], hi = row[0];                                                  \
            for (int64_t i = 1; i < m->nred && lo == lo; i++) {                          \
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

static ops_status
ptp_rows(const reduce_meta_out *m)
{
    if (m->nout == 0)
        return OPS_OK;
    OPS_DISPATCH_CASES(m->rows->dtype, "ptp", OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64),
                       OPS_CASE_FLOAT32(PTP_ROWS_(scalar_t);) OPS_CASE_FLOAT64(PTP_ROWS_(scalar_t);));
    return OPS_OK;
}

/* ptp and ptp.out: one implementation, out NULL for the functional form. */
static ops_status
ptp_run(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_tensor *out, ops_tensor **result)
{
    reduce_meta_out m;
    ops_status st = reduce_meta("ptp", self, dim, keepdim, REDUCE_META_FLOATING | REDUCE_META_NO_IDENTITY, out, &m);
    if (st != OPS_OK)
        return st;
    return reduce_meta_finish("ptp", ptp_rows(&m), &m, out, result);
}

ops_tensor *
ptp_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim)
{
    ops_tensor *r = NULL;
    ptp_run(self, dim, keepdim, NULL, &r);
    return r;
}

ops_status
ptp_out_cpu(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_tensor *out)
{
    return ptp_run(self, dim, keepdim, out, NULL);
}

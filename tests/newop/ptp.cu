// ptp (CUDA): ptp.c's rows on the device, a thread per row (NaN wins as there).
// The reduction family's meta step, shared with the CPU (the generated glue runs it,
// with the input's device current), has checked the arguments and made the rows and
// the result on that device.
#include "cuda_common.h"
#include "kernels/reduce.h"
#include "ops_dispatch.h"
#include "strided_index.h"

template <typename T>
__global__ void
ptp_kernel(const T *in, T *res, int64_t nout, int64_t nred)
{
    for (int64_t o = ops_strided::global_thread(); o < nout; o += ops_strided::grid_threads()) {
        const T *row = in + o * nred;
        T lo = row[0], hi = row[0];
        for (int64_t i = 1; i < nred && lo == lo; i++) {
            const T x = row[i];
            if (x != x)
                lo = hi = x;
            else if (x < lo)
                lo = x;
            else if (x > hi)
                hi = x;
        }
        res[o] = hi - lo;
    }
}

template <typename T>
static ops_status
ptp_launch(const ops_reduce *r)
{
    const int64_t blocks = (r->nout + 255) / 256;
    const unsigned grid = (unsigned)(blocks < 65535 ? blocks : 65535);
    OPS_LAUNCH((ptp_kernel<T>), grid, 256, 0, ops_cuda_current_stream(r->device.index),
               static_cast<const T *>(ops_tensor_data_ptr(r->src)), static_cast<T *>(ops_tensor_data_ptr(r->res)),
               r->nout, r->nred);
    return ops_cuda_check_launch("ptp");
}

/* ptp.out, and through it every form of ptp. */
extern "C" ops_status
ptp_out_cuda(ops_reduce *r)
{
    if (r->nout == 0)
        return OPS_OK;
    switch (r->src->dtype) {
    case OPS_FLOAT32: return ptp_launch<float>(r);
    case OPS_FLOAT64: return ptp_launch<double>(r);
    default:
        return ops_fail_dtype("ptp", r->src->dtype, OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64));
    }
}

// ptp (CUDA): ptp.c's rows on the device, a thread per row (NaN wins as there).
// reduce_meta, shared with the CPU, has checked the arguments and made the rows and
// the result on the input's device.
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
ptp_launch(const reduce_meta_out *m, int dev)
{
    const int64_t blocks = (m->nout + 255) / 256;
    const unsigned grid = (unsigned)(blocks < 65535 ? blocks : 65535);
    OPS_LAUNCH((ptp_kernel<T>), grid, 256, 0, ops_cuda_current_stream(dev),
               static_cast<const T *>(ops_tensor_data_ptr(m->rows)), static_cast<T *>(ops_tensor_data_ptr(m->result)),
               m->nout, m->nred);
    return ops_cuda_check_launch("ptp");
}

static ops_status
ptp_rows(const reduce_meta_out *m, int dev)
{
    if (m->nout == 0)
        return OPS_OK;
    switch (m->rows->dtype) {
    case OPS_FLOAT32: return ptp_launch<float>(m, dev);
    case OPS_FLOAT64: return ptp_launch<double>(m, dev);
    default:
        return ops_fail_dtype("ptp", m->rows->dtype, OPS_DTYPE_BIT(OPS_FLOAT32) | OPS_DTYPE_BIT(OPS_FLOAT64));
    }
}

static ops_status
ptp_run(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_tensor *out, ops_tensor **result)
{
    const int dev = ops_tensor_device(self).index;
    ops_cuda_device_guard guard(dev);
    reduce_meta_out m;
    ops_status st = reduce_meta("ptp", self, dim, keepdim, REDUCE_META_FLOATING | REDUCE_META_NO_IDENTITY, out, &m);
    if (st != OPS_OK)
        return st;
    return reduce_meta_finish("ptp", ptp_rows(&m, dev), &m, out, result);
}

extern "C" ops_tensor *
ptp_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim)
{
    ops_tensor *r = nullptr;
    ptp_run(self, dim, keepdim, nullptr, &r);
    return r;
}

extern "C" ops_status
ptp_out_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_tensor *out)
{
    return ptp_run(self, dim, keepdim, out, nullptr);
}

/* Pooling (CUDA): max_pool1d, max_pool2d, max_pool2d_with_indices, avg_pool1d,
 * avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d, and the max pools' backward
 * ops max_pool2d_with_indices_backward and adaptive_max_pool2d_backward (with their
 * out= forms).
 *
 * The CUDA loops of the stubs of kernels/pool.h; the drivers (kernels/pool.c:
 * argument checks, output sizes, out= handling) hand them the geometry.  Forward: one
 * thread per output element, reading the input through its strides, with the CPU's
 * window rules (ops_nn_pool_window, ops_nn_avg_window in kernels/nn_common.h), NaN
 * winning and the first of equal maxima kept, averages accumulated as the CPU does
 * (float for float16/bfloat16, int64 truncating for int64).  Backward: the index
 * check (nn_first_bad_index) reports a bad index before anything is written; then the
 * buffer is zeroed and atomic adds scatter the gradient into it, float or double
 * (repeated indices sum in an order of their own: equal within rounding). */
#include "kernels/pool.h"
#include "nn_cuda.cuh"
#include "ops_dispatch.h"

OPS_REGISTER_STUB(pool_windows, CUDA, pool_windows_cuda);
OPS_REGISTER_STUB(pool_scatter_add, CUDA, pool_scatter_add_cuda);

template <typename T> struct nn_pool_limits {
    /* the value of an empty window (never produced by valid geometry) */
    static OPS_HOST_DEVICE typename ops_opmath<T>::type lowest() { return -(typename ops_opmath<T>::type)INFINITY; }
    static OPS_HOST_DEVICE bool is_nan(typename ops_opmath<T>::type v) { return isnan(v); }
};
#define NN_POOL_INT_LIMITS_(T, LOW)                                                                                    \
    template <> struct nn_pool_limits<T> {                                                                             \
        static OPS_HOST_DEVICE T lowest() { return LOW; }                                                              \
        static OPS_HOST_DEVICE bool is_nan(T) { return false; }                                                        \
    };
NN_POOL_INT_LIMITS_(uint8_t, 0)
NN_POOL_INT_LIMITS_(int8_t, INT8_MIN)
NN_POOL_INT_LIMITS_(int16_t, INT16_MIN)
NN_POOL_INT_LIMITS_(int32_t, INT32_MIN)
NN_POOL_INT_LIMITS_(int64_t, INT64_MIN)

template <typename T>
__global__ void
nn_max_pool_kernel(ops_pool_geom g, const T *x, T *out, int64_t *idx, int64_t total)
{
    typedef typename ops_opmath<T>::type acc_t;
    const int64_t dh = g.adaptive ? 1 : g.dh, dw = g.adaptive ? 1 : g.dw;
    NN_GRID_STRIDE_LOOP(e, total)
    {
        const int64_t ox = e % g.ow, oy = (e / g.ow) % g.oh, pl = e / (g.ow * g.oh);
        const T *xp = x + (pl / g.c) * g.xs[0] + (pl % g.c) * g.xs[1];
        int64_t y0, y1, x0, x1;
        ops_nn_pool_window(g.adaptive, oy, g.ih, g.oh, g.kh, g.sh, g.ph, g.dh, &y0, &y1);
        ops_nn_pool_window(g.adaptive, ox, g.iw, g.ow, g.kw, g.sw, g.pw, g.dw, &x0, &x1);
        int64_t best = y0 * g.iw + x0;
        acc_t m = nn_pool_limits<T>::lowest();
        bool found = false;
        for (int64_t y = y0; y < y1; y += dh)
            for (int64_t xx = x0; xx < x1; xx += dw) {
                const acc_t v = ops_load(xp + y * g.xs[2] + xx * g.xs[3]);
                if (!found || v > m || nn_pool_limits<T>::is_nan(v)) {
                    m = v;
                    best = y * g.iw + xx;
                    found = true;
                }
            }
        ops_store(out + e, m);
        if (idx != NULL)
            idx[e] = best;
    }
}

template <typename T, typename ACC>
__global__ void
nn_avg_pool_kernel(ops_pool_geom g, const T *x, T *out, int64_t total)
{
    NN_GRID_STRIDE_LOOP(e, total)
    {
        const int64_t ox = e % g.ow, oy = (e / g.ow) % g.oh, pl = e / (g.ow * g.oh);
        const T *xp = x + (pl / g.c) * g.xs[0] + (pl % g.c) * g.xs[1];
        int64_t y0, y1, x0, x1, div;
        if (g.adaptive) {
            ops_nn_pool_window(true, oy, g.ih, g.oh, 0, 0, 0, 1, &y0, &y1);
            ops_nn_pool_window(true, ox, g.iw, g.ow, 0, 0, 0, 1, &x0, &x1);
            div = (y1 - y0) * (x1 - x0);
        } else if (!ops_nn_avg_window(oy, ox, g.ih, g.iw, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.count_include_pad,
                                      g.divisor, &y0, &y1, &x0, &x1, &div)) {
            ops_store(out + e, (ACC)0);
            continue;
        }
        ACC sum = 0;
        for (int64_t y = y0; y < y1; y++)
            for (int64_t xx = x0; xx < x1; xx++)
                sum += ops_load(xp + y * g.xs[2] + xx * g.xs[3]);
        ops_store(out + e, sum / (ACC)div);
    }
}

template <typename T>
static void
nn_launch_max(const ops_pool_geom *g, const void *x, void *out, int64_t *idx, int64_t total, cudaStream_t s)
{
    OPS_LAUNCH(nn_max_pool_kernel<T>, nn_grid(total), NN_BLOCK, 0, s, *g, (const T *)x, (T *)out, idx, total);
}

template <typename T, typename ACC>
static void
nn_launch_avg(const ops_pool_geom *g, const void *x, void *out, int64_t total, cudaStream_t s)
{
    OPS_LAUNCH((nn_avg_pool_kernel<T, ACC>), nn_grid(total), NN_BLOCK, 0, s, *g, (const T *)x, (T *)out, total);
}

ops_status
pool_windows_cuda(const char *op, const ops_pool_geom *g, bool is_max, const ops_tensor *self, ops_tensor *values,
                  ops_tensor *indices)
{
    (void)op; /* g->op names the op */
    const int dev = self->storage->device.index;
    const void *x = ops_tensor_data_ptr(self);
    void *out = ops_tensor_data_ptr(values);
    int64_t *idx = indices != NULL ? (int64_t *)ops_tensor_data_ptr(indices) : NULL;
    const int64_t total = g->nb * g->c * g->oh * g->ow;
    const cudaStream_t s = ops_cuda_current_stream(dev);
    if (total == 0)
        return OPS_OK;
    if (is_max) {
        switch (g->dt) {
        case OPS_UINT8: nn_launch_max<uint8_t>(g, x, out, idx, total, s); break;
        case OPS_INT8: nn_launch_max<int8_t>(g, x, out, idx, total, s); break;
        case OPS_INT16: nn_launch_max<int16_t>(g, x, out, idx, total, s); break;
        case OPS_INT32: nn_launch_max<int32_t>(g, x, out, idx, total, s); break;
        case OPS_INT64: nn_launch_max<int64_t>(g, x, out, idx, total, s); break;
        case OPS_FLOAT16: nn_launch_max<ops_half>(g, x, out, idx, total, s); break;
        case OPS_BFLOAT16: nn_launch_max<ops_bfloat16>(g, x, out, idx, total, s); break;
        case OPS_FLOAT32: nn_launch_max<float>(g, x, out, idx, total, s); break;
        case OPS_FLOAT64: nn_launch_max<double>(g, x, out, idx, total, s); break;
        default: return ops_fail_dtype(g->op, g->dt, OPS_MASK_NUMERIC);
        }
    } else {
        switch (g->dt) {
        case OPS_FLOAT16: nn_launch_avg<ops_half, float>(g, x, out, total, s); break;
        case OPS_BFLOAT16: nn_launch_avg<ops_bfloat16, float>(g, x, out, total, s); break;
        case OPS_FLOAT32: nn_launch_avg<float, float>(g, x, out, total, s); break;
        case OPS_FLOAT64: nn_launch_avg<double, double>(g, x, out, total, s); break;
        case OPS_INT64: nn_launch_avg<int64_t, int64_t>(g, x, out, total, s); break; /* truncating, as the CPU */
        default: return ops_fail_dtype(g->op, g->dt, OPS_MASK_FLOATING | OPS_DTYPE_BIT(OPS_INT64));
        }
    }
    OPS_CUDA_CHECK_LAUNCH(g->op);
    return OPS_OK;
}

/* ---- backward: scatter of the gradient at the indices ------------------------------ */

template <typename ACC>
__global__ void
nn_pool_scatter_kernel(const ACC *g, const int64_t *ix, ACC *res, int64_t total, int64_t ohw, int64_t ihw)
{
    NN_GRID_STRIDE_LOOP(e, total)
    {
        atomicAdd(res + (e / ohw) * ihw + ix[e], g[e]);
    }
}

ops_status
pool_scatter_add_cuda(const char *op, const ops_tensor *grad, const ops_tensor *ixt, ops_tensor *rest, int64_t planes,
                      int64_t ohw, int64_t ihw, bool *bad)
{
    /* the indices checked first (kernels/pool.h: an index out of range is never used) */
    int64_t bad_ix = 0;
    *bad = false;
    const ops_status st = OPS_STUB_CALL(nn_first_bad_index, ops_tensor_device(rest), op, ixt, ihw, false, 0, bad, &bad_ix);
    if (st != OPS_OK || *bad)
        return st;
    const int dev = rest->storage->device.index;
    const ops_dtype acc = rest->dtype;
    const void *g = ops_tensor_data_ptr(grad);
    const int64_t *ix = (const int64_t *)ops_tensor_data_ptr(ixt);
    void *res = ops_tensor_data_ptr(rest);
    const int64_t total = planes * ohw;
    const cudaStream_t s = ops_cuda_current_stream(dev);
    /* res comes uninitialised (kernels/pool.h) */
    const size_t bytes = (size_t)(planes * ihw) * (acc == OPS_FLOAT64 ? sizeof(double) : sizeof(float));
    if (bytes > 0) {
        const cudaError_t err = cudaMemsetAsync(res, 0, bytes, s);
        if (err != cudaSuccess)
            return ops_cuda_fail(op, "cudaMemsetAsync", err);
    }
    if (total == 0)
        return OPS_OK;
    if (acc == OPS_FLOAT64)
        OPS_LAUNCH(nn_pool_scatter_kernel<double>, nn_grid(total), NN_BLOCK, 0, s, (const double *)g, ix, (double *)res,
                   total, ohw, ihw);
    else
        OPS_LAUNCH(nn_pool_scatter_kernel<float>, nn_grid(total), NN_BLOCK, 0, s, (const float *)g, ix, (float *)res,
                   total, ohw, ihw);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* Pooling (CUDA): max_pool1d, max_pool2d, max_pool2d_with_indices, avg_pool1d,
 * avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d, and the max pools' backward
 * ops max_pool2d_with_indices_backward and adaptive_max_pool2d_backward (with their
 * out= forms).
 *
 * The entry points call the CPU files' device-generic drivers (kernels/cpu/pool.c,
 * nn_backward.c: argument checks, output sizes, out= handling), which hand the
 * geometry to the cores below.  Forward: one thread per output element, reading the
 * input through its strides, with the CPU's window rules (ops_nn_pool_window,
 * ops_nn_avg_window in kernels/nn_common.h), NaN winning and the first of equal
 * maxima kept, averages accumulated as the CPU does (float for float16/bfloat16,
 * int64 truncating for int64).  Backward: a checking kernel finds the first index
 * outside its plane (the driver fails with the CPU's message before anything is
 * written), then atomic adds scatter the gradient into a zeroed float or double
 * buffer (repeated indices sum in an order of their own: equal within rounding). */
#include "nn_cuda.cuh"
#include "ops_dispatch.h"
#include "ops_kernels_nn_backward.h"
#include "ops_kernels_pool.h"

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

extern "C" ops_status
ops_nn_cuda_pool(int dev, const ops_pool_geom *g, bool is_max, const void *x, void *out, int64_t *idx)
{
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

extern "C" ops_status
ops_nn_cuda_pool_scatter(const char *op, int dev, ops_dtype acc, const void *g, const int64_t *ix, void *res,
                         int64_t planes, int64_t ohw, int64_t ihw)
{
    const int64_t total = planes * ohw;
    if (total == 0)
        return OPS_OK;
    const cudaStream_t s = ops_cuda_current_stream(dev);
    if (acc == OPS_FLOAT64)
        OPS_LAUNCH(nn_pool_scatter_kernel<double>, nn_grid(total), NN_BLOCK, 0, s, (const double *)g, ix, (double *)res,
                   total, ohw, ihw);
    else
        OPS_LAUNCH(nn_pool_scatter_kernel<float>, nn_grid(total), NN_BLOCK, 0, s, (const float *)g, ix, (float *)res,
                   total, ohw, ihw);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- entry points: the CPU files' device-generic drivers, on the inputs' device ---- */

extern "C" ops_tensor *
max_pool2d_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                ops_int_list dilation, bool ceil_mode)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return max_pool2d_cpu(self, kernel_size, stride, padding, dilation, ceil_mode);
}

extern "C" ops_status
max_pool2d_with_indices_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                             ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor **result0,
                             ops_tensor **result1)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return max_pool2d_with_indices_cpu(self, kernel_size, stride, padding, dilation, ceil_mode, result0, result1);
}

extern "C" ops_status
max_pool2d_with_indices_out_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                                 ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor *out,
                                 ops_tensor *indices)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return max_pool2d_with_indices_out_cpu(self, kernel_size, stride, padding, dilation, ceil_mode, out, indices);
}

extern "C" ops_tensor *
max_pool1d_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                ops_int_list dilation, bool ceil_mode)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return max_pool1d_cpu(self, kernel_size, stride, padding, dilation, ceil_mode);
}

extern "C" ops_status
max_pool1d_with_indices_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                             ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor **result0,
                             ops_tensor **result1)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return max_pool1d_with_indices_cpu(self, kernel_size, stride, padding, dilation, ceil_mode, result0, result1);
}

extern "C" ops_tensor *
avg_pool2d_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                bool ceil_mode, bool count_include_pad, const int64_t *divisor_override)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return avg_pool2d_cpu(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

extern "C" ops_status
avg_pool2d_out_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                    bool ceil_mode, bool count_include_pad, const int64_t *divisor_override, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return avg_pool2d_out_cpu(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, out);
}

extern "C" ops_tensor *
avg_pool1d_cuda(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                bool ceil_mode, bool count_include_pad)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return avg_pool1d_cpu(self, kernel_size, stride, padding, ceil_mode, count_include_pad);
}

extern "C" ops_tensor *
adaptive_avg_pool2d_cuda(const ops_tensor *self, ops_int_list output_size)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return adaptive_avg_pool2d_cpu(self, output_size);
}

extern "C" ops_status
adaptive_avg_pool2d_out_cuda(const ops_tensor *self, ops_int_list output_size, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return adaptive_avg_pool2d_out_cpu(self, output_size, out);
}

extern "C" ops_status
adaptive_max_pool2d_cuda(const ops_tensor *self, ops_int_list output_size, ops_tensor **result0, ops_tensor **result1)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return adaptive_max_pool2d_cpu(self, output_size, result0, result1);
}

extern "C" ops_status
adaptive_max_pool2d_out_cuda(const ops_tensor *self, ops_int_list output_size, ops_tensor *out, ops_tensor *indices)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return adaptive_max_pool2d_out_cpu(self, output_size, out, indices);
}

extern "C" ops_tensor *
max_pool2d_with_indices_backward_cuda(const ops_tensor *grad_output, const ops_tensor *self, ops_int_list kernel_size,
                                      ops_int_list stride, ops_int_list padding, ops_int_list dilation, bool ceil_mode,
                                      const ops_tensor *indices)
{
    ops_cuda_device_guard g(grad_output->storage->device.index);
    return max_pool2d_with_indices_backward_cpu(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                                indices);
}

extern "C" ops_status
max_pool2d_with_indices_backward_out_cuda(const ops_tensor *grad_output, const ops_tensor *self,
                                          ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                                          ops_int_list dilation, bool ceil_mode, const ops_tensor *indices,
                                          ops_tensor *grad_input)
{
    ops_cuda_device_guard g(grad_output->storage->device.index);
    return max_pool2d_with_indices_backward_out_cpu(grad_output, self, kernel_size, stride, padding, dilation,
                                                    ceil_mode, indices, grad_input);
}

extern "C" ops_tensor *
adaptive_max_pool2d_backward_cuda(const ops_tensor *grad_output, const ops_tensor *self, const ops_tensor *indices)
{
    ops_cuda_device_guard g(grad_output->storage->device.index);
    return adaptive_max_pool2d_backward_cpu(grad_output, self, indices);
}

extern "C" ops_status
adaptive_max_pool2d_backward_out_cuda(const ops_tensor *grad_output, const ops_tensor *self, const ops_tensor *indices,
                                      ops_tensor *grad_input)
{
    ops_cuda_device_guard g(grad_output->storage->device.index);
    return adaptive_max_pool2d_backward_out_cpu(grad_output, self, indices, grad_input);
}

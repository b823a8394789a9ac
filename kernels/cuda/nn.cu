/* Other neural-network ops (CUDA): one_hot, pad (constant, reflect, replicate,
 * circular), upsample_nearest1d/2d, upsample_linear1d, upsample_bilinear2d,
 * pixel_shuffle, pixel_unshuffle, glu, prelu (with their out= forms).
 *
 * The entry points call the CPU file's device-generic drivers (kernels/cpu/nn.c):
 * they check the arguments and build the host tables (pad's and upsample_nearest's
 * per-dim input offsets; the linear interpolation's source indices and weights, by
 * PyTorch's arithmetic), which the cores below upload and use one thread per output
 * element.  pixel_shuffle is a strided view copied contiguous (the copy kernel);
 * one_hot reads its class range back from a min/max kernel before it allocates;
 * glu and prelu run their binary iterator through the CUDA elementwise launcher. */
#include "nn_cuda.cuh"
#include "ops_cuda_loops.cuh"
#include "ops_dispatch.h"
#include "ops_kernels_nn.h"

/* ---- the gather engine ---------------------------------------------------------------- */

struct nn_gather_geom {
    int nd;
    int64_t sizes[OPS_MAX_DIMS];
    int64_t tbl_off[OPS_MAX_DIMS]; /* where dim d's table starts */
};

/* dst[e] = src[sum_d tbl_d[i_d]] for e's multi-index i, or fill where a table says so. */
template <typename E>
__global__ void
nn_gather_kernel(nn_gather_geom g, const int64_t *tbl, const E *src, E fill, E *dst, int64_t total)
{
    NN_GRID_STRIDE_LOOP(e, total)
    {
        int64_t rem = e, off = 0;
        bool use_fill = false;
        for (int d = g.nd - 1; d >= 0; d--) {
            const int64_t o = tbl[g.tbl_off[d] + rem % g.sizes[d]];
            rem /= g.sizes[d];
            if (o == INT64_MIN)
                use_fill = true;
            else
                off += o;
        }
        dst[e] = use_fill ? fill : src[off];
    }
}

template <typename E>
static void
nn_launch_gather(const nn_gather_geom &g, const int64_t *tbl, const void *src, const void *fill8, void *dst,
                 int64_t total, cudaStream_t s)
{
    E fill;
    memcpy(&fill, fill8, sizeof fill);
    OPS_LAUNCH(nn_gather_kernel<E>, nn_grid(total), NN_BLOCK, 0, s, g, tbl, (const E *)src, fill, (E *)dst, total);
}

extern "C" ops_status
ops_nn_cuda_gather(const char *op, int dev, int nd, const int64_t *sizes, const int64_t *tbl_host, size_t isz,
                   const void *src, const void *fill8, void *dst)
{
    nn_gather_geom g;
    g.nd = nd;
    int64_t total = 1, entries = 0;
    for (int d = 0; d < nd; d++) {
        g.sizes[d] = sizes[d];
        g.tbl_off[d] = entries;
        entries += sizes[d];
        total *= sizes[d];
    }
    if (total == 0)
        return OPS_OK;
    nn_dev_buf tbl;
    NN_TRY(tbl.alloc(op, dev, OPS_INT64, entries > 0 ? entries : 1));
    NN_TRY(nn_upload(op, tbl.ptr<int64_t>(), tbl_host, (size_t)entries * sizeof(int64_t)));
    const cudaStream_t s = ops_cuda_current_stream(dev);
    switch (isz) {
    case 1: nn_launch_gather<uint8_t>(g, tbl.ptr<int64_t>(), src, fill8, dst, total, s); break;
    case 2: nn_launch_gather<uint16_t>(g, tbl.ptr<int64_t>(), src, fill8, dst, total, s); break;
    case 4: nn_launch_gather<uint32_t>(g, tbl.ptr<int64_t>(), src, fill8, dst, total, s); break;
    default: nn_launch_gather<uint64_t>(g, tbl.ptr<int64_t>(), src, fill8, dst, total, s); break;
    }
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- linear interpolation ------------------------------------------------------------- */

struct nn_linear_geom {
    int k;
    int64_t nc, oh, ow;
    int64_t sn, sc, sh, sw; /* input strides (sh 0 for k == 1) */
};

/* k == 2: h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11) (PyTorch's order),
 * k == 1: w0 * x0 + w1 * x1, in the opmath type W. */
template <typename T, typename W>
__global__ void
nn_upsample_linear_kernel(nn_linear_geom g, const T *x, const int64_t *ib, const W *wb, T *y, int64_t total)
{
    const int64_t *ih0 = ib, *ih1 = ih0 + g.oh, *iw0 = ih1 + g.oh, *iw1 = iw0 + g.ow;
    const W *lh0 = wb, *lh1 = lh0 + g.oh, *lw0 = lh1 + g.oh, *lw1 = lw0 + g.ow;
    NN_GRID_STRIDE_LOOP(e, total)
    {
        const int64_t b = e % g.ow, a = (e / g.ow) % g.oh, p = e / (g.ow * g.oh);
        const T *xp = x + (p / g.nc) * g.sn + (p % g.nc) * g.sc;
        const T *r0 = xp + ih0[a] * g.sh, *r1 = xp + ih1[a] * g.sh;
        const W x00 = ops_load(r0 + iw0[b] * g.sw), x01 = ops_load(r0 + iw1[b] * g.sw);
        W v = lw0[b] * x00 + lw1[b] * x01;
        if (g.k == 2) {
            const W x10 = ops_load(r1 + iw0[b] * g.sw), x11 = ops_load(r1 + iw1[b] * g.sw);
            v = lh0[a] * v + lh1[a] * (lw0[b] * x10 + lw1[b] * x11);
        }
        ops_store(y + e, v);
    }
}

template <typename T, typename W>
static void
nn_launch_linear(const nn_linear_geom &g, const void *x, const int64_t *ib, const void *wb, void *y, int64_t total,
                 cudaStream_t s)
{
    OPS_LAUNCH((nn_upsample_linear_kernel<T, W>), nn_grid(total), NN_BLOCK, 0, s, g, (const T *)x, ib, (const W *)wb,
               (T *)y, total);
}

extern "C" ops_status
ops_nn_cuda_upsample_linear(const char *op, int dev, ops_dtype dt, int k, const void *x, const int64_t *xs,
                            int64_t planes, int64_t nc, int64_t oh, int64_t ow, const int64_t *ibuf, const void *wbuf,
                            void *y)
{
    const int64_t total = planes * oh * ow, nt = 2 * (oh + ow);
    if (total == 0)
        return OPS_OK;
    const size_t wsz = dt == OPS_FLOAT64 ? sizeof(double) : sizeof(float);
    nn_dev_buf ib, wb;
    NN_TRY(ib.alloc(op, dev, OPS_INT64, nt));
    NN_TRY(wb.alloc(op, dev, OPS_FLOAT64, nt)); /* large enough for either weight type */
    NN_TRY(nn_upload(op, ib.ptr<int64_t>(), ibuf, (size_t)nt * sizeof(int64_t)));
    NN_TRY(nn_upload(op, wb.ptr<char>(), wbuf, (size_t)nt * wsz));
    nn_linear_geom g;
    g.k = k;
    g.nc = nc, g.oh = oh, g.ow = ow;
    g.sn = xs[0], g.sc = xs[1], g.sh = k == 2 ? xs[2] : 0, g.sw = xs[k + 1];
    const cudaStream_t s = ops_cuda_current_stream(dev);
    switch (dt) {
    case OPS_FLOAT64: nn_launch_linear<double, double>(g, x, ib.ptr<int64_t>(), wb.ptr<char>(), y, total, s); break;
    case OPS_FLOAT16: nn_launch_linear<ops_half, float>(g, x, ib.ptr<int64_t>(), wb.ptr<char>(), y, total, s); break;
    case OPS_BFLOAT16:
        nn_launch_linear<ops_bfloat16, float>(g, x, ib.ptr<int64_t>(), wb.ptr<char>(), y, total, s);
        break;
    default: nn_launch_linear<float, float>(g, x, ib.ptr<int64_t>(), wb.ptr<char>(), y, total, s); break;
    }
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- one_hot -------------------------------------------------------------------------- */

__global__ void
nn_minmax_kernel(const int64_t *x, int64_t n, long long *lohi)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        atomicMin(&lohi[0], (long long)x[i]);
        atomicMax(&lohi[1], (long long)x[i]);
    }
}

extern "C" ops_status
ops_nn_cuda_minmax_i64(const char *op, int dev, const int64_t *x, int64_t n, int64_t *lo, int64_t *hi)
{
    nn_dev_buf buf;
    NN_TRY(buf.alloc(op, dev, OPS_INT64, 2));
    long long h[2] = {INT64_MAX, INT64_MIN};
    NN_TRY(nn_upload(op, buf.ptr<long long>(), h, sizeof h));
    OPS_LAUNCH(nn_minmax_kernel, nn_grid(n), NN_BLOCK, 0, ops_cuda_current_stream(dev), x, n, buf.ptr<long long>());
    OPS_CUDA_CHECK_LAUNCH(op);
    NN_TRY(nn_download(op, h, buf.ptr<long long>(), sizeof h));
    *lo = h[0];
    *hi = h[1];
    return OPS_OK;
}

__global__ void
nn_one_hot_kernel(const int64_t *x, int64_t total, int64_t K, int64_t *out)
{
    NN_GRID_STRIDE_LOOP(e, total)
    {
        out[e] = x[e / K] == e % K ? 1 : 0;
    }
}

extern "C" ops_status
ops_nn_cuda_one_hot(const char *op, int dev, const int64_t *x, int64_t n, int64_t K, int64_t *out)
{
    if (n * K == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_one_hot_kernel, nn_grid(n * K), NN_BLOCK, 0, ops_cuda_current_stream(dev), x, n * K, K, out);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- glu and prelu: the binary iterator's CUDA launcher ------------------------------ */

extern "C" ops_status
ops_nn_cuda_binary(ops_iter *it, bool glu)
{
    OPS_DISPATCH_FLOATING(it->common_dtype, it->op, {
        if (glu)
            return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>(
                it, [] __host__ __device__(opmath_t x, opmath_t y) -> opmath_t { return x * ops_math_sigmoid(y); });
        return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>(
            it, [] __host__ __device__(opmath_t x, opmath_t y) -> opmath_t { return OPS_NN_PRELU(x, y); });
    });
    return OPS_OK;
}

/* ---- entry points: the CPU file's device-generic drivers, on the inputs' device ---- */

extern "C" ops_tensor *
one_hot_cuda(const ops_tensor *self, int64_t num_classes)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return one_hot_cpu(self, num_classes);
}

extern "C" ops_tensor *
pad_cuda(const ops_tensor *self, ops_int_list pad, const char *mode, const double *value)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return pad_cpu(self, pad, mode, value);
}

extern "C" ops_tensor *
upsample_nearest1d_cuda(const ops_tensor *self, ops_int_list output_size, const double *scales)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_nearest1d_cpu(self, output_size, scales);
}

extern "C" ops_status
upsample_nearest1d_out_cuda(const ops_tensor *self, ops_int_list output_size, const double *scales, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_nearest1d_out_cpu(self, output_size, scales, out);
}

extern "C" ops_tensor *
upsample_nearest2d_cuda(const ops_tensor *self, ops_int_list output_size, const double *scales_h,
                        const double *scales_w)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_nearest2d_cpu(self, output_size, scales_h, scales_w);
}

extern "C" ops_status
upsample_nearest2d_out_cuda(const ops_tensor *self, ops_int_list output_size, const double *scales_h,
                            const double *scales_w, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_nearest2d_out_cpu(self, output_size, scales_h, scales_w, out);
}

extern "C" ops_tensor *
upsample_linear1d_cuda(const ops_tensor *self, ops_int_list output_size, bool align_corners, const double *scales)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_linear1d_cpu(self, output_size, align_corners, scales);
}

extern "C" ops_status
upsample_linear1d_out_cuda(const ops_tensor *self, ops_int_list output_size, bool align_corners, const double *scales,
                           ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_linear1d_out_cpu(self, output_size, align_corners, scales, out);
}

extern "C" ops_tensor *
upsample_bilinear2d_cuda(const ops_tensor *self, ops_int_list output_size, bool align_corners, const double *scales_h,
                         const double *scales_w)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_bilinear2d_cpu(self, output_size, align_corners, scales_h, scales_w);
}

extern "C" ops_status
upsample_bilinear2d_out_cuda(const ops_tensor *self, ops_int_list output_size, bool align_corners,
                             const double *scales_h, const double *scales_w, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return upsample_bilinear2d_out_cpu(self, output_size, align_corners, scales_h, scales_w, out);
}

extern "C" ops_tensor *
pixel_shuffle_cuda(const ops_tensor *self, int64_t upscale_factor)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return pixel_shuffle_cpu(self, upscale_factor);
}

extern "C" ops_status
pixel_shuffle_out_cuda(const ops_tensor *self, int64_t upscale_factor, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return pixel_shuffle_out_cpu(self, upscale_factor, out);
}

extern "C" ops_tensor *
pixel_unshuffle_cuda(const ops_tensor *self, int64_t downscale_factor)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return pixel_unshuffle_cpu(self, downscale_factor);
}

extern "C" ops_status
pixel_unshuffle_out_cuda(const ops_tensor *self, int64_t downscale_factor, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return pixel_unshuffle_out_cpu(self, downscale_factor, out);
}

extern "C" ops_tensor *
glu_cuda(const ops_tensor *self, int64_t dim)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return glu_cpu(self, dim);
}

extern "C" ops_status
glu_out_cuda(const ops_tensor *self, int64_t dim, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return glu_out_cpu(self, dim, out);
}

extern "C" ops_tensor *
prelu_cuda(const ops_tensor *self, const ops_tensor *weight)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return prelu_cpu(self, weight);
}

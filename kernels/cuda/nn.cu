/* Other neural-network ops (CUDA): one_hot, pad (constant, reflect, replicate,
 * circular), upsample_nearest1d/2d, upsample_linear1d, upsample_bilinear2d,
 * pixel_shuffle, pixel_unshuffle, glu, prelu (with their out= forms).
 *
 * The CUDA loops of the stubs of kernels/nn.h.  The drivers (kernels/nn.c) check the
 * arguments and build the host tables (pad's and upsample_nearest's
 * per-dim input offsets; the linear interpolation's source indices and weights, by
 * PyTorch's arithmetic), which the cores below upload and use one thread per output
 * element.  pixel_shuffle is a strided view copied contiguous (the copy kernel);
 * one_hot reads its class range back from a min/max kernel before it allocates;
 * glu and prelu run their binary iterator through the CUDA elementwise launcher. */
#include "kernels/nn.h"
#include "nn_cuda.cuh"
#include "ops_cuda_loops.cuh"
#include "ops_dispatch.h"

OPS_REGISTER_STUB(nn_gather_rows, CUDA, nn_gather_rows_cuda);
OPS_REGISTER_STUB(nn_one_hot_range, CUDA, nn_one_hot_range_cuda);
OPS_REGISTER_STUB(nn_one_hot_fill, CUDA, nn_one_hot_fill_cuda);
OPS_REGISTER_STUB(nn_upsample_linear_planes, CUDA, nn_upsample_linear_planes_cuda);
OPS_REGISTER_STUB(nn_binary_loop, CUDA, nn_binary_loop_cuda);

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
            if (o == NN_FILL)
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

ops_status
nn_gather_rows_cuda(const char *op, const nn_gather *gp, ops_tensor *dstt)
{
    const int dev = dstt->storage->device.index, nd = gp->ndim;
    const int64_t *sizes = gp->sizes, *tbl_host = gp->tbl[0];
    const size_t isz = ops_dtype_itemsize(dstt->dtype);
    const void *src = ops_tensor_data_ptr(gp->src), *fill8 = gp->fill;
    void *dst = ops_tensor_data_ptr(dstt);
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

ops_status
nn_upsample_linear_planes_cuda(const char *op, int k, const ops_tensor *self, int64_t oh, int64_t ow,
                               const int64_t *ibuf, const void *wbuf, ops_tensor *yt)
{
    const int dev = self->storage->device.index;
    const ops_dtype dt = self->dtype;
    const void *x = ops_tensor_data_ptr(self);
    const int64_t *xs = self->strides, nc = self->sizes[1], planes = self->sizes[0] * nc;
    void *y = ops_tensor_data_ptr(yt);
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

ops_status
nn_one_hot_range_cuda(const char *op, const ops_tensor *xt, int64_t *lo, int64_t *hi)
{
    const int dev = xt->storage->device.index;
    const int64_t n = ops_tensor_numel(xt), *x = (const int64_t *)ops_tensor_data_ptr(xt);
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

ops_status
nn_one_hot_fill_cuda(const char *op, const ops_tensor *xt, int64_t K, ops_tensor *outt)
{
    const int dev = xt->storage->device.index;
    const int64_t n = ops_tensor_numel(xt), *x = (const int64_t *)ops_tensor_data_ptr(xt);
    int64_t *out = (int64_t *)ops_tensor_data_ptr(outt);
    if (n * K == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_one_hot_kernel, nn_grid(n * K), NN_BLOCK, 0, ops_cuda_current_stream(dev), x, n * K, K, out);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- glu and prelu: the binary iterator's CUDA launcher ------------------------------ */

ops_status
nn_binary_loop_cuda(const char *op, ops_iter *it, bool glu)
{
    OPS_DISPATCH_FLOATING(it->common_dtype, op, {
        if (glu)
            return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>(
                it, [] __host__ __device__(opmath_t x, opmath_t y) -> opmath_t { return x * ops_math_sigmoid(y); });
        return ops_cuda_elementwise<scalar_t, scalar_t, scalar_t>(
            it, [] __host__ __device__(opmath_t x, opmath_t y) -> opmath_t { return OPS_NN_PRELU(x, y); });
    });
    return OPS_OK;
}

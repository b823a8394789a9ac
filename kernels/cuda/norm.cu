/* Normalization and embedding kernels (CUDA): layer_norm, native_layer_norm,
 * batch_norm, native_batch_norm, group_norm, native_group_norm, embedding.
 *
 * The CUDA loops of the stubs of kernels/norm.h: the drivers (kernels/norm.c) check
 * the arguments, make contiguous compute-dtype (float, or double for float64) copies
 * on the device and call the kernels below through the stubs.  The kernels follow the
 * CPU's arithmetic: statistics in two passes (mean, then the sum of squared
 * deviations from it) with double accumulators, the normalizing pass in the compute
 * type, biased variance, rstd = 1 / sqrt(var + eps).  layer_norm and group_norm run
 * one block per row / (batch, group); batch_norm one block per channel for its
 * statistics (read back: the host combines them with the running statistics as the
 * CPU does) and one thread per element to apply them. */
#include "kernels/norm.h"
#include "nn_cuda.cuh"

OPS_REGISTER_STUB(norm_layer_rows, CUDA, norm_layer_rows_cuda);
OPS_REGISTER_STUB(norm_batch_stats, CUDA, norm_batch_stats_cuda);
OPS_REGISTER_STUB(norm_batch_apply, CUDA, norm_batch_apply_cuda);
OPS_REGISTER_STUB(norm_group_blocks, CUDA, norm_group_blocks_cuda);
OPS_REGISTER_STUB(norm_embedding_rows, CUDA, norm_embedding_rows_cuda);
OPS_REGISTER_STUB(nn_first_bad_index, CUDA, nn_first_bad_index_cuda);

/* The device memory of an optional tensor (NULL stays NULL). */
static void *
nrm_ptr(const ops_tensor *t)
{
    return t != NULL ? ops_tensor_data_ptr(t) : NULL;
}

/* The mean and biased variance of the n contiguous elements at x (two passes, double
 * sums); every thread of the block gets them. */
template <typename T>
__device__ void
nn_row_moments(const T *x, int64_t n, double *sh, double *mean, double *var)
{
    double s = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        s += (double)x[j];
    const double mu = nn_block_sum(s, sh) / (double)n;
    double q = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const double d = (double)x[j] - mu;
        q += d * d;
    }
    *mean = mu;
    *var = nn_block_sum(q, sh) / (double)n;
}

/* ---- layer_norm ---------------------------------------------------------------------- */

template <typename T>
__global__ void
nn_layer_norm_kernel(const T *x, const T *w, const T *b, T *y, T *mean, T *rstd, int64_t M, int64_t N, double eps)
{
    __shared__ double sh[NN_BLOCK];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        double mu, var;
        nn_row_moments(xr, N, sh, &mu, &var);
        const double rs = 1.0 / sqrt(var + eps);
        if (mean != NULL && threadIdx.x == 0) {
            mean[row] = (T)mu;
            rstd[row] = (T)rs;
        }
        const T m = (T)mu, r = (T)rs;
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            T v = (xr[j] - m) * r;
            if (w != NULL)
                v = v * w[j];
            if (b != NULL)
                v = v + b[j];
            yr[j] = v;
        }
    }
}

ops_status
norm_layer_rows_cuda(const char *op, const ops_tensor *xt, const ops_tensor *wt, const ops_tensor *bt, ops_tensor *yt,
                     ops_tensor *meant, ops_tensor *rstdt, int64_t M, int64_t N, double eps)
{
    const int dev = xt->storage->device.index;
    const ops_dtype cd = xt->dtype;
    const void *x = nrm_ptr(xt), *w = nrm_ptr(wt), *b = nrm_ptr(bt);
    void *y = nrm_ptr(yt), *mean = nrm_ptr(meant), *rstd = nrm_ptr(rstdt);
    if (M == 0) /* (rows of N == 0 get NaN statistics, as on the CPU) */
        return OPS_OK;
    const unsigned grid = (unsigned)(M < NN_MAX_GRID ? M : NN_MAX_GRID);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    if (cd == OPS_FLOAT64)
        OPS_LAUNCH_COOP(nn_layer_norm_kernel<double>, grid, NN_BLOCK, 0, stream, (const double *)x, (const double *)w,
                        (const double *)b, (double *)y, (double *)mean, (double *)rstd, M, N, eps);
    else
        OPS_LAUNCH_COOP(nn_layer_norm_kernel<float>, grid, NN_BLOCK, 0, stream, (const float *)x, (const float *)w,
                        (const float *)b, (float *)y, (float *)mean, (float *)rstd, M, N, eps);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- group_norm ---------------------------------------------------------------------- */

/* One block per (n, g): its Cg * S contiguous elements normalized by their own
 * statistics, then scaled and shifted per channel. */
template <typename T>
__global__ void
nn_group_norm_kernel(const T *x, T *y, int64_t NG, int64_t G, int64_t Cg, int64_t S, const T *w, const T *b, double eps,
                     T *mean, T *rstd)
{
    __shared__ double sh[NN_BLOCK];
    const int64_t len = Cg * S;
    for (int64_t ng = blockIdx.x; ng < NG; ng += gridDim.x) {
        const T *xb = x + ng * len;
        T *yb = y + ng * len;
        double mu, var;
        nn_row_moments(xb, len, sh, &mu, &var);
        const double rs = 1.0 / sqrt(var + eps);
        if (mean != NULL && threadIdx.x == 0) {
            mean[ng] = (T)mu;
            rstd[ng] = (T)rs;
        }
        const T m = (T)mu;
        for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
            const int64_t c = (ng % G) * Cg + j / S;
            const T s = (T)(rs * (w != NULL ? (double)w[c] : 1.0));
            yb[j] = (xb[j] - m) * s + (b != NULL ? b[c] : (T)0);
        }
    }
}

ops_status
norm_group_blocks_cuda(const char *op, const ops_tensor *xt, ops_tensor *yt, int64_t N, int64_t C, int64_t S, int64_t G,
                       const ops_tensor *wt, const ops_tensor *bt, double eps, ops_tensor *meant, ops_tensor *rstdt)
{
    const int dev = xt->storage->device.index;
    const ops_dtype cd = xt->dtype;
    const void *x = nrm_ptr(xt), *w = nrm_ptr(wt), *b = nrm_ptr(bt);
    void *y = nrm_ptr(yt), *mean = nrm_ptr(meant), *rstd = nrm_ptr(rstdt);
    const int64_t NG = N * G;
    if (NG == 0)
        return OPS_OK;
    const unsigned grid = (unsigned)(NG < NN_MAX_GRID ? NG : NN_MAX_GRID);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    if (cd == OPS_FLOAT64)
        OPS_LAUNCH_COOP(nn_group_norm_kernel<double>, grid, NN_BLOCK, 0, stream, (const double *)x, (double *)y, NG, G,
                        C / G, S, (const double *)w, (const double *)b, eps, (double *)mean, (double *)rstd);
    else
        OPS_LAUNCH_COOP(nn_group_norm_kernel<float>, grid, NN_BLOCK, 0, stream, (const float *)x, (float *)y, NG, G,
                        C / G, S, (const float *)w, (const float *)b, eps, (float *)mean, (float *)rstd);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- batch_norm ---------------------------------------------------------------------- */

/* One block per channel c: the mean and the sum of squared deviations of its N * S
 * elements x[(n * C + c) * S + j], into stats[c] and stats[C + c]. */
template <typename T>
__global__ void
nn_bn_stats_kernel(const T *x, int64_t N, int64_t C, int64_t S, double *stats)
{
    __shared__ double sh[NN_BLOCK];
    const int64_t count = N * S;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        double s = 0;
        for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
            s += (double)x[((i / S) * C + c) * S + i % S];
        const double mu = nn_block_sum(s, sh) / (double)count;
        double q = 0;
        for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
            const double d = (double)x[((i / S) * C + c) * S + i % S] - mu;
            q += d * d;
        }
        q = nn_block_sum(q, sh);
        if (threadIdx.x == 0) {
            stats[c] = mu;
            stats[C + c] = q;
        }
    }
}

ops_status
norm_batch_stats_cuda(const char *op, const ops_tensor *xt, int64_t N, int64_t C, int64_t S, double *mean_host,
                      double *m2_host)
{
    const int dev = xt->storage->device.index;
    const ops_dtype cd = xt->dtype;
    const void *x = nrm_ptr(xt);
    if (C == 0)
        return OPS_OK;
    nn_dev_buf stats;
    NN_TRY(stats.alloc(op, dev, OPS_FLOAT64, 2 * C));
    const unsigned grid = (unsigned)(C < NN_MAX_GRID ? C : NN_MAX_GRID);
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    if (cd == OPS_FLOAT64)
        OPS_LAUNCH_COOP(nn_bn_stats_kernel<double>, grid, NN_BLOCK, 0, stream, (const double *)x, N, C, S,
                        stats.ptr<double>());
    else
        OPS_LAUNCH_COOP(nn_bn_stats_kernel<float>, grid, NN_BLOCK, 0, stream, (const float *)x, N, C, S,
                        stats.ptr<double>());
    OPS_CUDA_CHECK_LAUNCH(op);
    NN_TRY(nn_download(op, mean_host, stats.ptr<double>(), (size_t)C * sizeof(double)));
    return nn_download(op, m2_host, stats.ptr<double>() + C, (size_t)C * sizeof(double));
}

/* y = (x - mean[c]) * (invstd[c] * w[c]) + b[c], the scale rounded to T once per
 * element as the CPU rounds it once per channel. */
template <typename T>
__global__ void
nn_bn_apply_kernel(const T *x, T *y, int64_t n, int64_t C, int64_t S, const double *mean, const double *invstd,
                   const T *w, const T *b)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        const int64_t c = (i / S) % C;
        const T s = (T)(invstd[c] * (w != NULL ? (double)w[c] : 1.0));
        y[i] = (x[i] - (T)mean[c]) * s + (b != NULL ? b[c] : (T)0);
    }
}

ops_status
norm_batch_apply_cuda(const char *op, const ops_tensor *xt, ops_tensor *yt, int64_t N, int64_t C, int64_t S,
                      const double *mean_host, const double *invstd_host, const ops_tensor *wt, const ops_tensor *bt)
{
    const int dev = xt->storage->device.index;
    const ops_dtype cd = xt->dtype;
    const void *x = nrm_ptr(xt), *w = nrm_ptr(wt), *b = nrm_ptr(bt);
    void *y = nrm_ptr(yt);
    const int64_t n = N * C * S;
    if (n == 0)
        return OPS_OK;
    nn_dev_buf stats;
    NN_TRY(stats.alloc(op, dev, OPS_FLOAT64, 2 * C));
    double *mean = stats.ptr<double>(), *invstd = mean + C;
    NN_TRY(nn_upload(op, mean, mean_host, (size_t)C * sizeof(double)));
    NN_TRY(nn_upload(op, invstd, invstd_host, (size_t)C * sizeof(double)));
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    if (cd == OPS_FLOAT64)
        OPS_LAUNCH(nn_bn_apply_kernel<double>, nn_grid(n), NN_BLOCK, 0, stream, (const double *)x, (double *)y, n, C, S,
                   mean, invstd, (const double *)w, (const double *)b);
    else
        OPS_LAUNCH(nn_bn_apply_kernel<float>, nn_grid(n), NN_BLOCK, 0, stream, (const float *)x, (float *)y, n, C, S,
                   mean, invstd, (const float *)w, (const float *)b);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- index checks and embedding ------------------------------------------------------ */

/* *first = the smallest i with k[i] outside [0, bound) and k[i] != skip (when
 * use_skip); *first starts at n. */
__global__ void
nn_first_bad_kernel(const int64_t *k, int64_t n, int64_t bound, bool use_skip, int64_t skip, unsigned long long *first)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        const int64_t v = k[i];
        if ((v < 0 || v >= bound) && !(use_skip && v == skip))
            atomicMin(first, (unsigned long long)i);
    }
}

ops_status
nn_first_bad_index_cuda(const char *op, const ops_tensor *kt, int64_t bound, bool use_skip, int64_t skip, bool *found,
                        int64_t *bad)
{
    const int dev = kt->storage->device.index;
    const int64_t n = ops_tensor_numel(kt), *k = (const int64_t *)ops_tensor_data_ptr(kt);
    *found = false;
    if (n == 0)
        return OPS_OK;
    nn_dev_buf first;
    NN_TRY(first.alloc(op, dev, OPS_INT64, 1));
    unsigned long long pos = (unsigned long long)n;
    NN_TRY(nn_upload(op, first.ptr<unsigned long long>(), &pos, sizeof pos));
    OPS_LAUNCH(nn_first_bad_kernel, nn_grid(n), NN_BLOCK, 0, ops_cuda_current_stream(dev), k, n, bound, use_skip, skip,
               first.ptr<unsigned long long>());
    OPS_CUDA_CHECK_LAUNCH(op);
    NN_TRY(nn_download(op, &pos, first.ptr<unsigned long long>(), sizeof pos));
    if (pos >= (unsigned long long)n)
        return OPS_OK;
    *found = true;
    return nn_download(op, bad, k + pos, sizeof *bad);
}

/* dst[i * D + j] = w[k[i] * ws0 + j * ws1], elements moved as raw words of E. */
template <typename E>
__global__ void
nn_embedding_kernel(const E *w, int64_t ws0, int64_t ws1, const int64_t *k, int64_t n, int64_t D, E *dst)
{
    NN_GRID_STRIDE_LOOP(e, n * D)
    {
        const int64_t i = e / D, j = e % D;
        dst[e] = w[k[i] * ws0 + j * ws1];
    }
}

ops_status
norm_embedding_rows_cuda(const char *op, const ops_tensor *weight, const ops_tensor *kt, ops_tensor *r)
{
    const int dev = weight->storage->device.index;
    const size_t isz = ops_dtype_itemsize(weight->dtype);
    const char *wbase = (const char *)weight->storage->data + weight->offset * (int64_t)isz;
    const int64_t ws0 = weight->strides[0], ws1 = weight->strides[1], D = weight->sizes[1];
    const int64_t n = ops_tensor_numel(kt), *k = (const int64_t *)ops_tensor_data_ptr(kt);
    void *dst = ops_tensor_data_ptr(r);
    bool bad = false;
    int64_t bad_k = 0;
    NN_TRY(nn_first_bad_index_cuda(op, kt, weight->sizes[0], false, 0, &bad, &bad_k));
    if (bad)
        return nrm_embedding_index_error(op, bad_k, weight->sizes[0]);
    const int64_t total = n * D;
    if (total == 0)
        return OPS_OK;
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    const unsigned grid = nn_grid(total);
    switch (isz) {
    case 1:
        OPS_LAUNCH(nn_embedding_kernel<uint8_t>, grid, NN_BLOCK, 0, stream, (const uint8_t *)wbase, ws0, ws1, k, n, D,
                   (uint8_t *)dst);
        break;
    case 2:
        OPS_LAUNCH(nn_embedding_kernel<uint16_t>, grid, NN_BLOCK, 0, stream, (const uint16_t *)wbase, ws0, ws1, k, n, D,
                   (uint16_t *)dst);
        break;
    case 4:
        OPS_LAUNCH(nn_embedding_kernel<uint32_t>, grid, NN_BLOCK, 0, stream, (const uint32_t *)wbase, ws0, ws1, k, n, D,
                   (uint32_t *)dst);
        break;
    default:
        OPS_LAUNCH(nn_embedding_kernel<uint64_t>, grid, NN_BLOCK, 0, stream, (const uint64_t *)wbase, ws0, ws1, k, n, D,
                   (uint64_t *)dst);
        break;
    }
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* Normalization and embedding kernels (CUDA): layer_norm, native_layer_norm,
 * batch_norm, native_batch_norm, group_norm, native_group_norm, embedding.
 *
 * The entry points call the CPU file's drivers (kernels/cpu/norm.c), which check the
 * arguments, make contiguous compute-dtype (float, or double for float64) copies on
 * the device and call the cores below (kernels/nn_common.h).  The cores follow the
 * CPU's arithmetic: statistics in two passes (mean, then the sum of squared
 * deviations from it) with double accumulators, the normalizing pass in the compute
 * type, biased variance, rstd = 1 / sqrt(var + eps).  layer_norm and group_norm run
 * one block per row / (batch, group); batch_norm one block per channel for its
 * statistics (read back: the host combines them with the running statistics as the
 * CPU does) and one thread per element to apply them. */
#include "nn_cuda.cuh"
#include "ops_kernels_norm.h"

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

extern "C" ops_status
ops_nn_cuda_layer_norm(const char *op, int dev, ops_dtype cd, const void *x, const void *w, const void *b, void *y,
                       void *mean, void *rstd, int64_t M, int64_t N, double eps)
{
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

extern "C" ops_status
ops_nn_cuda_group_norm(const char *op, int dev, ops_dtype cd, const void *x, void *y, int64_t N, int64_t C, int64_t S,
                       int64_t G, const void *w, const void *b, double eps, void *mean, void *rstd)
{
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

extern "C" ops_status
ops_nn_cuda_bn_stats(const char *op, int dev, ops_dtype cd, const void *x, int64_t N, int64_t C, int64_t S,
                     double *mean_host, double *m2_host)
{
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

extern "C" ops_status
ops_nn_cuda_bn_apply(const char *op, int dev, ops_dtype cd, const void *x, void *y, int64_t N, int64_t C, int64_t S,
                     const double *mean_host, const double *invstd_host, const void *w, const void *b)
{
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

static ops_status
nn_first_bad(const char *op, int dev, const int64_t *k, int64_t n, int64_t bound, bool use_skip, int64_t skip,
             bool *found, int64_t *bad)
{
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

extern "C" ops_status
ops_nn_cuda_first_out_of_range(const char *op, int dev, const int64_t *k, int64_t n, int64_t bound, bool *found,
                               int64_t *bad)
{
    return nn_first_bad(op, dev, k, n, bound, false, 0, found, bad);
}

extern "C" ops_status
ops_nn_cuda_first_out_of_range_skip(const char *op, int dev, const int64_t *k, int64_t n, int64_t bound, int64_t skip,
                                    bool *found, int64_t *bad)
{
    return nn_first_bad(op, dev, k, n, bound, true, skip, found, bad);
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

extern "C" ops_status
ops_nn_cuda_embedding(const char *op, int dev, const void *wbase, int64_t ws0, int64_t ws1, size_t isz,
                      const int64_t *k, int64_t n, int64_t D, void *dst)
{
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

/* ---- entry points: the CPU file's device-generic drivers, on the inputs' device ---- */

extern "C" ops_tensor *
layer_norm_cuda(const ops_tensor *input, ops_int_list normalized_shape, const ops_tensor *weight,
                const ops_tensor *bias, double eps, bool cudnn_enable)
{
    ops_cuda_device_guard g(input->storage->device.index);
    return layer_norm_cpu(input, normalized_shape, weight, bias, eps, cudnn_enable);
}

extern "C" ops_status
native_layer_norm_cuda(const ops_tensor *input, ops_int_list normalized_shape, const ops_tensor *weight,
                       const ops_tensor *bias, double eps, ops_tensor **result0, ops_tensor **result1,
                       ops_tensor **result2)
{
    ops_cuda_device_guard g(input->storage->device.index);
    return native_layer_norm_cpu(input, normalized_shape, weight, bias, eps, result0, result1, result2);
}

extern "C" ops_tensor *
batch_norm_cuda(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                const ops_tensor *running_mean, const ops_tensor *running_var, bool training, double momentum,
                double eps, bool cudnn_enabled)
{
    ops_cuda_device_guard g(input->storage->device.index);
    return batch_norm_cpu(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled);
}

extern "C" ops_status
native_batch_norm_cuda(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias,
                       const ops_tensor *running_mean, const ops_tensor *running_var, bool training, double momentum,
                       double eps, ops_tensor **result0, ops_tensor **result1, ops_tensor **result2)
{
    ops_cuda_device_guard g(input->storage->device.index);
    return native_batch_norm_cpu(input, weight, bias, running_mean, running_var, training, momentum, eps, result0,
                                 result1, result2);
}

extern "C" ops_tensor *
group_norm_cuda(const ops_tensor *input, int64_t num_groups, const ops_tensor *weight, const ops_tensor *bias,
                double eps, bool cudnn_enabled)
{
    ops_cuda_device_guard g(input->storage->device.index);
    return group_norm_cpu(input, num_groups, weight, bias, eps, cudnn_enabled);
}

extern "C" ops_status
native_group_norm_cuda(const ops_tensor *input, const ops_tensor *weight, const ops_tensor *bias, int64_t N, int64_t C,
                       int64_t HxW, int64_t group, double eps, ops_tensor **result0, ops_tensor **result1,
                       ops_tensor **result2)
{
    ops_cuda_device_guard g(input->storage->device.index);
    return native_group_norm_cpu(input, weight, bias, N, C, HxW, group, eps, result0, result1, result2);
}

extern "C" ops_tensor *
embedding_cuda(const ops_tensor *weight, const ops_tensor *indices, int64_t padding_idx, bool scale_grad_by_freq,
               bool sparse)
{
    ops_cuda_device_guard g(weight->storage->device.index);
    return embedding_cpu(weight, indices, padding_idx, scale_grad_by_freq, sparse);
}

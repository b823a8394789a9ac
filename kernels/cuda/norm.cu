/* Normalization and embedding kernels (CUDA): layer_norm, native_layer_norm,
 * batch_norm, native_batch_norm, group_norm, native_group_norm, embedding.
 *
 * The CUDA loops of the stubs of kernels/norm.h: the drivers (kernels/norm.c) check
 * the arguments, make contiguous compute-dtype (float, or double for float64) copies
 * on the device and call the kernels below through the stubs.  The kernels follow the
 * CPU's arithmetic: statistics in two passes (mean, then the sum of squared
 * deviations from it) with double accumulators, the normalizing pass in the compute
 * type, biased variance, rstd = 1 / sqrt(var + eps).  layer_norm and group_norm run
 * one block per row / (batch, group) (native_layer_norm_backward's dx too, its column
 * sums dweight / dbias as fixed-order partials); batch_norm one block per channel for its
 * statistics (read back: the host combines them with the running statistics as the
 * CPU does) and one thread per element to apply them. */
#include "kernels/norm.h"
#include "nn_cuda.cuh"

OPS_REGISTER_STUB(norm_layer_rows, CUDA, norm_layer_rows_cuda);
OPS_REGISTER_STUB(norm_layer_backward_rows, CUDA, norm_layer_backward_rows_cuda);
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

/* ---- native_layer_norm_backward -------------------------------------------------------- */

/* Rows of one column partial of dweight / dbias: a block of threads (one column each)
 * sums this many rows of g x^ and g; the partials are then added in row order.  The
 * split depends on M and N only, so the result does not depend on the device. */
#define LNB_CHUNK_ROWS 32
/* At most this many partials per column (a bigger M takes longer chunks). */
#define LNB_MAX_CHUNKS 1024

/* The sums of a and b over the block, in a fixed order (warp shuffles, then the
 * warps' sums by the first warp): every thread gets them.  sh holds 2 * 32 values;
 * blockDim.x is a multiple of 32.  Called by every thread of the block. */
__device__ void
lnb_block_sum2(double *a, double *b, double *sh)
{
    double x = *a, y = *b;
    for (int off = warpSize / 2; off > 0; off >>= 1) {
        x += __shfl_down_sync(0xffffffffu, x, off);
        y += __shfl_down_sync(0xffffffffu, y, off);
    }
    const int lane = (int)(threadIdx.x % warpSize), warp = (int)(threadIdx.x / warpSize);
    const int nwarps = (int)(blockDim.x / warpSize);
    if (lane == 0) {
        sh[warp] = x;
        sh[32 + warp] = y;
    }
    __syncthreads();
    if (warp == 0) {
        x = lane < nwarps ? sh[lane] : 0.0;
        y = lane < nwarps ? sh[32 + lane] : 0.0;
        for (int off = warpSize / 2; off > 0; off >>= 1) {
            x += __shfl_down_sync(0xffffffffu, x, off);
            y += __shfl_down_sync(0xffffffffu, y, off);
        }
        if (lane == 0) {
            sh[0] = x;
            sh[32] = y;
        }
    }
    __syncthreads();
    *a = sh[0];
    *b = sh[32];
    __syncthreads(); /* sh is reused by the next row */
}

/* dx of each row (one block per row): with gw = g w and x^ = (x - mean) rstd,
 * dx = rstd (gw - sum(gw) / N - x^ sum(gw x^) / N), the two sums in double. */
template <typename T>
__global__ void
nn_layer_norm_bwd_dx_kernel(const T *g, const T *x, const T *mean, const T *rstd, const T *w, T *dx, int64_t M,
                            int64_t N)
{
    __shared__ double sh[64];
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *gr = g + row * N, *xr = x + row * N;
        const T m = mean[row], r = rstd[row];
        double s1 = 0, s2 = 0;
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            const T gw = w != NULL ? gr[j] * w[j] : gr[j];
            s1 += (double)gw;
            s2 += (double)gw * (double)((xr[j] - m) * r);
        }
        lnb_block_sum2(&s1, &s2, sh);
        const T a = (T)(s1 / (double)N), b = (T)(s2 / (double)N);
        T *dr = dx + row * N;
        for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
            const T gw = w != NULL ? gr[j] * w[j] : gr[j];
            dr[j] = r * (gw - a - (xr[j] - m) * r * b);
        }
    }
}

/* Column partials: block (cb, c) sums rows [c * rows, (c + 1) * rows) of columns
 * cb * blockDim.x + threadIdx.x (consecutive threads read consecutive columns) into
 * pw[c * N + j] (g x^) and pb[c * N + j] (g); NULL when not wanted. */
template <typename T>
__global__ void
nn_layer_norm_bwd_cols_kernel(const T *g, const T *x, const T *mean, const T *rstd, double *pw, double *pb, int64_t M,
                              int64_t N, int64_t rows, int64_t ncb, int64_t nchunks)
{
    for (int64_t blk = blockIdx.x; blk < ncb * nchunks; blk += gridDim.x) {
        const int64_t j = (blk % ncb) * blockDim.x + threadIdx.x, c = blk / ncb;
        if (j >= N)
            continue;
        const int64_t i0 = c * rows, i1 = i0 + rows < M ? i0 + rows : M;
        double sw = 0, sb = 0;
        for (int64_t i = i0; i < i1; i++) {
            const T gv = g[i * N + j];
            sw += (double)gv * (double)((x[i * N + j] - mean[i]) * rstd[i]);
            sb += (double)gv;
        }
        if (pw != NULL)
            pw[c * N + j] = sw;
        if (pb != NULL)
            pb[c * N + j] = sb;
    }
}

/* out[j] = the partials of column j added in chunk order (one thread per column). */
template <typename T>
__global__ void
nn_layer_norm_bwd_colsum_kernel(const double *p, T *out, int64_t N, int64_t nchunks)
{
    NN_GRID_STRIDE_LOOP(j, N)
    {
        double s = 0;
        for (int64_t c = 0; c < nchunks; c++)
            s += p[c * N + j];
        out[j] = (T)s;
    }
}

template <typename T>
static ops_status
lnb_launch(const char *op, int dev, const T *g, const T *x, const T *mean, const T *rstd, const T *w, T *dx, T *dw,
           T *db, int64_t M, int64_t N)
{
    const cudaStream_t stream = ops_cuda_current_stream(dev);
    if (dx != NULL && M > 0 && N > 0) {
        const unsigned grid = (unsigned)(M < NN_MAX_GRID ? M : NN_MAX_GRID);
        OPS_LAUNCH_COOP(nn_layer_norm_bwd_dx_kernel<T>, grid, NN_BLOCK, 0, stream, g, x, mean, rstd, w, dx, M, N);
        OPS_CUDA_CHECK_LAUNCH(op);
    }
    if ((dw == NULL && db == NULL) || N == 0)
        return OPS_OK;
    /* chunks of LNB_CHUNK_ROWS rows, longer when M would give more than LNB_MAX_CHUNKS;
     * M == 0: one empty chunk, so the sums are zeros */
    int64_t rows = LNB_CHUNK_ROWS;
    if ((M + rows - 1) / rows > LNB_MAX_CHUNKS)
        rows = (M + LNB_MAX_CHUNKS - 1) / LNB_MAX_CHUNKS;
    const int64_t nchunks = M > 0 ? (M + rows - 1) / rows : 1;
    const int64_t ncb = (N + NN_BLOCK - 1) / NN_BLOCK;
    nn_dev_buf part;
    NN_TRY(part.alloc(op, dev, OPS_FLOAT64, 2 * nchunks * N));
    double *pw = part.ptr<double>(), *pb = pw + nchunks * N;
    const int64_t nblk = ncb * nchunks;
    OPS_LAUNCH(nn_layer_norm_bwd_cols_kernel<T>, (unsigned)(nblk < NN_MAX_GRID ? nblk : NN_MAX_GRID), NN_BLOCK, 0,
               stream, g, x, mean, rstd, dw != NULL ? pw : (double *)NULL, db != NULL ? pb : (double *)NULL, M, N, rows,
               ncb, nchunks);
    OPS_CUDA_CHECK_LAUNCH(op);
    if (dw != NULL) {
        OPS_LAUNCH(nn_layer_norm_bwd_colsum_kernel<T>, nn_grid(N), NN_BLOCK, 0, stream, (const double *)pw, dw, N,
                   nchunks);
        OPS_CUDA_CHECK_LAUNCH(op);
    }
    if (db != NULL) {
        OPS_LAUNCH(nn_layer_norm_bwd_colsum_kernel<T>, nn_grid(N), NN_BLOCK, 0, stream, (const double *)pb, db, N,
                   nchunks);
        OPS_CUDA_CHECK_LAUNCH(op);
    }
    return OPS_OK;
}

ops_status
norm_layer_backward_rows_cuda(const char *op, const ops_tensor *gt, const ops_tensor *xt, const ops_tensor *meant,
                              const ops_tensor *rstdt, const ops_tensor *wt, ops_tensor *dxt, ops_tensor *dwt,
                              ops_tensor *dbt, int64_t M, int64_t N)
{
    const int dev = xt->storage->device.index;
    if (xt->dtype == OPS_FLOAT64)
        return lnb_launch<double>(op, dev, (const double *)nrm_ptr(gt), (const double *)nrm_ptr(xt),
                                  (const double *)nrm_ptr(meant), (const double *)nrm_ptr(rstdt),
                                  (const double *)nrm_ptr(wt), (double *)nrm_ptr(dxt), (double *)nrm_ptr(dwt),
                                  (double *)nrm_ptr(dbt), M, N);
    return lnb_launch<float>(op, dev, (const float *)nrm_ptr(gt), (const float *)nrm_ptr(xt),
                             (const float *)nrm_ptr(meant), (const float *)nrm_ptr(rstdt), (const float *)nrm_ptr(wt),
                             (float *)nrm_ptr(dxt), (float *)nrm_ptr(dwt), (float *)nrm_ptr(dbt), M, N);
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

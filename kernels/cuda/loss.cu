/* Loss functions (CUDA): mse_loss, l1_loss, smooth_l1_loss, huber_loss,
 * binary_cross_entropy, binary_cross_entropy_with_logits, nll_loss, nll_loss2d,
 * nll_loss_nd and cross_entropy_loss (with their out= forms).
 *
 * The CUDA loops of the stubs of kernels/loss.h, which the drivers (kernels/loss.c)
 * call with contiguous float64 buffers on the device: the kernels below evaluate the
 * same per-element and per-position formulas as the CPU loops (kernels/nn_common.h),
 * and sums are a two-pass block reduction in double read back to the host (the CPU
 * sums in order: equal within rounding). */
#include "kernels/loss.h"
#include "nn_cuda.cuh"

OPS_REGISTER_STUB(loss_sum, CUDA, loss_sum_cuda);
OPS_REGISTER_STUB(loss_pointwise_terms, CUDA, loss_pointwise_terms_cuda);
OPS_REGISTER_STUB(loss_bce_terms, CUDA, loss_bce_terms_cuda);
OPS_REGISTER_STUB(loss_bce_logits_terms, CUDA, loss_bce_logits_terms_cuda);
OPS_REGISTER_STUB(loss_log_softmax, CUDA, loss_log_softmax_cuda);
OPS_REGISTER_STUB(loss_nll_terms, CUDA, loss_nll_terms_cuda);
OPS_REGISTER_STUB(loss_ce_smooth_terms, CUDA, loss_ce_smooth_terms_cuda);
OPS_REGISTER_STUB(loss_ce_prob_terms, CUDA, loss_ce_prob_terms_cuda);

/* The CUDA device of a buffer and its doubles (NULL stays NULL: an absent weight). */
static int
loss_dev(const ops_tensor *t)
{
    return t->storage->device.index;
}

static double *
dbl(const ops_tensor *t)
{
    return t != NULL ? (double *)ops_tensor_data_ptr(t) : NULL;
}

__global__ void
nn_pointwise_loss_kernel(int kind, double *x, const double *y, int64_t n, double param)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        x[i] = ops_nn_pointwise_loss(kind, x[i], y[i], param);
    }
}

ops_status
loss_pointwise_terms_cuda(const char *op, int kind, ops_tensor *xt, const ops_tensor *yt, double param)
{
    const int64_t n = ops_tensor_numel(xt);
    if (n == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_pointwise_loss_kernel, nn_grid(n), NN_BLOCK, 0, ops_cuda_current_stream(loss_dev(xt)), kind, dbl(xt),
               (const double *)dbl(yt), n, param);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* *bad = 1 when some x[i] is outside [0, 1] (or NaN). */
__global__ void
nn_bce_check_kernel(const double *x, int64_t n, int *bad)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        if (!(x[i] >= 0 && x[i] <= 1))
            atomicExch(bad, 1);
    }
}

__global__ void
nn_bce_kernel(double *x, const double *y, const double *w, int64_t n)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        x[i] = ops_nn_bce(x[i], y[i]) * (w != NULL ? w[i] : 1.0);
    }
}

ops_status
loss_bce_terms_cuda(const char *op, ops_tensor *xt, const ops_tensor *yt, const ops_tensor *wt, bool *bad)
{
    const int dev = loss_dev(xt);
    const int64_t n = ops_tensor_numel(xt);
    double *x = dbl(xt);
    const double *y = dbl(yt), *w = dbl(wt);
    *bad = false;
    if (n == 0)
        return OPS_OK;
    const cudaStream_t s = ops_cuda_current_stream(dev);
    nn_dev_buf flag;
    NN_TRY(flag.alloc(op, dev, OPS_INT32, 1));
    int h = 0;
    NN_TRY(nn_upload(op, flag.ptr<int>(), &h, sizeof h));
    OPS_LAUNCH(nn_bce_check_kernel, nn_grid(n), NN_BLOCK, 0, s, x, n, flag.ptr<int>());
    OPS_CUDA_CHECK_LAUNCH(op);
    NN_TRY(nn_download(op, &h, flag.ptr<int>(), sizeof h));
    if (h != 0) {
        *bad = true;
        return OPS_OK;
    }
    OPS_LAUNCH(nn_bce_kernel, nn_grid(n), NN_BLOCK, 0, s, x, y, w, n);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

__global__ void
nn_bce_logits_kernel(double *x, const double *t, const double *w, const double *pw, int64_t n)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        const double lw = pw != NULL ? 1 + (pw[i] - 1) * t[i] : 1.0;
        x[i] = ops_nn_bce_logits(x[i], t[i], lw) * (w != NULL ? w[i] : 1.0);
    }
}

ops_status
loss_bce_logits_terms_cuda(const char *op, ops_tensor *x, const ops_tensor *t, const ops_tensor *w,
                           const ops_tensor *pw)
{
    const int64_t n = ops_tensor_numel(x);
    if (n == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_bce_logits_kernel, nn_grid(n), NN_BLOCK, 0, ops_cuda_current_stream(loss_dev(x)), dbl(x),
               (const double *)dbl(t), (const double *)dbl(w), (const double *)dbl(pw), n);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- sums ---------------------------------------------------------------------------- */

/* partial[b] = the sum of block b's grid-stride share of v. */
__global__ void
nn_sum_kernel(const double *v, int64_t n, double *partial)
{
    __shared__ double sh[NN_BLOCK];
    double s = 0;
    NN_GRID_STRIDE_LOOP(i, n)
    {
        s += v[i];
    }
    s = nn_block_sum(s, sh);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s;
}

/* Blocks of the first pass: each thread of the second (one block) then adds a few. */
#define NN_SUM_BLOCKS 1024

ops_status
loss_sum_cuda(const char *op, const ops_tensor *buf, int64_t off, int64_t n, double *sum_host)
{
    const int dev = loss_dev(buf);
    const double *v = dbl(buf) + off;
    *sum_host = 0;
    if (n == 0)
        return OPS_OK;
    const cudaStream_t s = ops_cuda_current_stream(dev);
    const unsigned blocks = nn_grid(n) < NN_SUM_BLOCKS ? nn_grid(n) : NN_SUM_BLOCKS;
    nn_dev_buf partial;
    NN_TRY(partial.alloc(op, dev, OPS_FLOAT64, blocks + 1));
    double *p = partial.ptr<double>();
    OPS_LAUNCH_COOP(nn_sum_kernel, blocks, NN_BLOCK, 0, s, v, (int64_t)n, p);
    OPS_CUDA_CHECK_LAUNCH(op);
    OPS_LAUNCH_COOP(nn_sum_kernel, 1, NN_BLOCK, 0, s, (const double *)p, (int64_t)blocks, p + blocks);
    OPS_CUDA_CHECK_LAUNCH(op);
    return nn_download(op, sum_host, p + blocks, sizeof *sum_host);
}

/* ---- class-dim losses: one thread per (n, s) position -------------------------------- */

__global__ void
nn_nll_kernel(int64_t N, int64_t C, int64_t S, const double *lp, const int64_t *tgt, const double *w,
              int64_t ignore_index, double *l, double *wt)
{
    NN_GRID_STRIDE_LOOP(i, N * S)
    {
        l[i] = ops_nn_nll_term(lp + (i / S) * C * S + i % S, tgt[i], w, S, ignore_index, &wt[i]);
    }
}

/* The targets' weights go to a scratch buffer, summed there. */
ops_status
loss_nll_terms_cuda(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *t,
                    const ops_tensor *w, int64_t ignore_index, ops_tensor *l, double *total_weight)
{
    *total_weight = 0;
    if (N * S == 0)
        return OPS_OK;
    const int dev = loss_dev(lp);
    nn_dev_buf wt;
    NN_TRY(wt.alloc(op, dev, OPS_FLOAT64, N * S));
    OPS_LAUNCH(nn_nll_kernel, nn_grid(N * S), NN_BLOCK, 0, ops_cuda_current_stream(dev), N, C, S,
               (const double *)dbl(lp), (const int64_t *)ops_tensor_data_ptr(t), (const double *)dbl(w), ignore_index,
               dbl(l), wt.ptr<double>());
    OPS_CUDA_CHECK_LAUNCH(op);
    return loss_sum_cuda(op, wt.t, 0, N * S, total_weight);
}

__global__ void
nn_log_softmax_kernel(int64_t N, int64_t C, int64_t S, double *x)
{
    NN_GRID_STRIDE_LOOP(i, N * S)
    {
        ops_nn_log_softmax_pos(x + (i / S) * C * S + i % S, C, S);
    }
}

ops_status
loss_log_softmax_cuda(const char *op, int64_t N, int64_t C, int64_t S, ops_tensor *x)
{
    if (N * S == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_log_softmax_kernel, nn_grid(N * S), NN_BLOCK, 0, ops_cuda_current_stream(loss_dev(x)), N, C, S,
               dbl(x));
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

__global__ void
nn_ce_smooth_kernel(int64_t N, int64_t C, int64_t S, const double *lp, const int64_t *tgt, const double *w,
                    int64_t ignore_index, double *smooth)
{
    NN_GRID_STRIDE_LOOP(i, N * S)
    {
        smooth[i] = tgt[i] == ignore_index ? 0 : ops_nn_ce_smooth_term(lp + (i / S) * C * S + i % S, w, C, S);
    }
}


__global__ void
nn_axpby_kernel(double *y, const double *x, int64_t n, double a, double b)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        y[i] = a * y[i] + b * x[i];
    }
}

ops_status
loss_ce_smooth_terms_cuda(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *t,
                          const ops_tensor *w, int64_t ignore_index, ops_tensor *l, bool mix, double a, double b)
{
    const int64_t nt = N * S;
    if (nt == 0)
        return OPS_OK;
    const cudaStream_t s = ops_cuda_current_stream(loss_dev(lp));
    double *nll = dbl(l), *smooth = nll + nt;
    OPS_LAUNCH(nn_ce_smooth_kernel, nn_grid(nt), NN_BLOCK, 0, s, N, C, S, (const double *)dbl(lp),
               (const int64_t *)ops_tensor_data_ptr(t), (const double *)dbl(w), ignore_index, smooth);
    OPS_CUDA_CHECK_LAUNCH(op);
    if (mix) {
        OPS_LAUNCH(nn_axpby_kernel, nn_grid(nt), NN_BLOCK, 0, s, nll, (const double *)smooth, nt, a, b);
        OPS_CUDA_CHECK_LAUNCH(op);
    }
    return OPS_OK;
}

__global__ void
nn_ce_prob_kernel(int64_t N, int64_t C, int64_t S, const double *lp, const double *tp, const double *w, double ls,
                  double *l)
{
    NN_GRID_STRIDE_LOOP(i, N * S)
    {
        const int64_t base = (i / S) * C * S + i % S;
        l[i] = ops_nn_ce_prob_term(lp + base, tp + base, w, C, S, ls);
    }
}

ops_status
loss_ce_prob_terms_cuda(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *tp,
                        const ops_tensor *w, double ls, ops_tensor *l)
{
    if (N * S == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_ce_prob_kernel, nn_grid(N * S), NN_BLOCK, 0, ops_cuda_current_stream(loss_dev(lp)), N, C, S,
               (const double *)dbl(lp), (const double *)dbl(tp), (const double *)dbl(w), ls, dbl(l));
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

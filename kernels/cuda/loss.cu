/* Loss functions (CUDA): mse_loss, l1_loss, smooth_l1_loss, huber_loss,
 * binary_cross_entropy, binary_cross_entropy_with_logits, nll_loss, nll_loss2d,
 * nll_loss_nd and cross_entropy_loss (with their out= forms).
 *
 * The entry points call the CPU file's device-generic drivers (kernels/cpu/loss.c):
 * the operands become contiguous float64 buffers on the device, the kernels below
 * evaluate the same per-element and per-position formulas as the CPU loops
 * (kernels/nn_common.h), sums are a two-pass block reduction in double read back to
 * the host (the CPU sums in order: equal within rounding), and the result is rounded
 * once to the result dtype.  Target indices are checked by a kernel whose first bad
 * target is read back (the driver fails before anything is written). */
#include "nn_cuda.cuh"
#include "ops_kernels_loss.h"

__global__ void
nn_pointwise_loss_kernel(int kind, double *x, const double *y, int64_t n, double param)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        x[i] = ops_nn_pointwise_loss(kind, x[i], y[i], param);
    }
}

extern "C" ops_status
ops_nn_cuda_pointwise_loss(const char *op, int dev, int kind, double *x, const double *y, int64_t n, double param)
{
    if (n == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_pointwise_loss_kernel, nn_grid(n), NN_BLOCK, 0, ops_cuda_current_stream(dev), kind, x, y, n, param);
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

extern "C" ops_status
ops_nn_cuda_bce(const char *op, int dev, double *x, const double *y, const double *w, int64_t n, bool *bad)
{
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

extern "C" ops_status
ops_nn_cuda_bce_logits(const char *op, int dev, double *x, const double *t, const double *w, const double *pw,
                       int64_t n)
{
    if (n == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_bce_logits_kernel, nn_grid(n), NN_BLOCK, 0, ops_cuda_current_stream(dev), x, t, w, pw, n);
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

extern "C" ops_status
ops_nn_cuda_sum(const char *op, int dev, const double *v, int64_t n, double *sum_host)
{
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

extern "C" ops_status
ops_nn_cuda_nll(const char *op, int dev, int64_t N, int64_t C, int64_t S, const double *lp, const int64_t *tgt,
                const double *w, int64_t ignore_index, double *l, double *wt)
{
    if (N * S == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_nll_kernel, nn_grid(N * S), NN_BLOCK, 0, ops_cuda_current_stream(dev), N, C, S, lp, tgt, w,
               ignore_index, l, wt);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

__global__ void
nn_log_softmax_kernel(int64_t N, int64_t C, int64_t S, double *x)
{
    NN_GRID_STRIDE_LOOP(i, N * S)
    {
        ops_nn_log_softmax_pos(x + (i / S) * C * S + i % S, C, S);
    }
}

extern "C" ops_status
ops_nn_cuda_log_softmax(const char *op, int dev, int64_t N, int64_t C, int64_t S, double *x)
{
    if (N * S == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_log_softmax_kernel, nn_grid(N * S), NN_BLOCK, 0, ops_cuda_current_stream(dev), N, C, S, x);
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

extern "C" ops_status
ops_nn_cuda_ce_smooth(const char *op, int dev, int64_t N, int64_t C, int64_t S, const double *lp, const int64_t *tgt,
                      const double *w, int64_t ignore_index, double *smooth)
{
    if (N * S == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_ce_smooth_kernel, nn_grid(N * S), NN_BLOCK, 0, ops_cuda_current_stream(dev), N, C, S, lp, tgt, w,
               ignore_index, smooth);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

__global__ void
nn_axpby_kernel(double *y, const double *x, int64_t n, double a, double b)
{
    NN_GRID_STRIDE_LOOP(i, n)
    {
        y[i] = a * y[i] + b * x[i];
    }
}

extern "C" ops_status
ops_nn_cuda_axpby(const char *op, int dev, double *y, const double *x, int64_t n, double a, double b)
{
    if (n == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_axpby_kernel, nn_grid(n), NN_BLOCK, 0, ops_cuda_current_stream(dev), y, x, n, a, b);
    OPS_CUDA_CHECK_LAUNCH(op);
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

extern "C" ops_status
ops_nn_cuda_ce_prob(const char *op, int dev, int64_t N, int64_t C, int64_t S, const double *lp, const double *tp,
                    const double *w, double ls, double *l)
{
    if (N * S == 0)
        return OPS_OK;
    OPS_LAUNCH(nn_ce_prob_kernel, nn_grid(N * S), NN_BLOCK, 0, ops_cuda_current_stream(dev), N, C, S, lp, tp, w, ls, l);
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

/* ---- entry points: the CPU file's device-generic drivers, on the inputs' device ---- */

extern "C" ops_tensor *
mse_loss_cuda(const ops_tensor *self, const ops_tensor *target, int64_t reduction)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return mse_loss_cpu(self, target, reduction);
}

extern "C" ops_status
mse_loss_out_cuda(const ops_tensor *self, const ops_tensor *target, int64_t reduction, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return mse_loss_out_cpu(self, target, reduction, out);
}

extern "C" ops_tensor *
l1_loss_cuda(const ops_tensor *self, const ops_tensor *target, int64_t reduction)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return l1_loss_cpu(self, target, reduction);
}

extern "C" ops_tensor *
smooth_l1_loss_cuda(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double beta)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return smooth_l1_loss_cpu(self, target, reduction, beta);
}

extern "C" ops_status
smooth_l1_loss_out_cuda(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double beta,
                        ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return smooth_l1_loss_out_cpu(self, target, reduction, beta, out);
}

extern "C" ops_tensor *
huber_loss_cuda(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double delta)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return huber_loss_cpu(self, target, reduction, delta);
}

extern "C" ops_status
huber_loss_out_cuda(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double delta, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return huber_loss_out_cpu(self, target, reduction, delta, out);
}

extern "C" ops_tensor *
binary_cross_entropy_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return binary_cross_entropy_cpu(self, target, weight, reduction);
}

extern "C" ops_status
binary_cross_entropy_out_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                              int64_t reduction, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return binary_cross_entropy_out_cpu(self, target, weight, reduction, out);
}

extern "C" ops_tensor *
binary_cross_entropy_with_logits_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                                      const ops_tensor *pos_weight, int64_t reduction)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return binary_cross_entropy_with_logits_cpu(self, target, weight, pos_weight, reduction);
}

extern "C" ops_tensor *
nll_loss_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
              int64_t ignore_index)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return nll_loss_cpu(self, target, weight, reduction, ignore_index);
}

extern "C" ops_status
nll_loss_out_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                  int64_t ignore_index, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return nll_loss_out_cpu(self, target, weight, reduction, ignore_index, out);
}

extern "C" ops_tensor *
nll_loss2d_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                int64_t ignore_index)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return nll_loss2d_cpu(self, target, weight, reduction, ignore_index);
}

extern "C" ops_status
nll_loss2d_out_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                    int64_t ignore_index, ops_tensor *out)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return nll_loss2d_out_cpu(self, target, weight, reduction, ignore_index, out);
}

extern "C" ops_tensor *
nll_loss_nd_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                 int64_t ignore_index)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return nll_loss_nd_cpu(self, target, weight, reduction, ignore_index);
}

extern "C" ops_tensor *
cross_entropy_loss_cuda(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                        int64_t ignore_index, double label_smoothing)
{
    ops_cuda_device_guard g(self->storage->device.index);
    return cross_entropy_loss_cpu(self, target, weight, reduction, ignore_index, label_smoothing);
}

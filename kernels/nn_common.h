/* Shared by the NN families' CPU kernels (kernels/cpu/norm.c, pool.c, nn.c,
 * nn_backward.c, loss.c) and their CUDA kernels (kernels/cuda/norm.cu, pool.cu,
 * nn.cu, loss.cu).
 *
 * The NN ops are drivers around a small compute core: the host-side driver checks
 * the arguments (shapes, dtypes, values: the CPU's messages), makes the operands it
 * needs (contiguous copies in the compute dtype, on the operands' device), runs the
 * core, and converts or copies the result out.  The drivers live in the CPU files and
 * are device-generic; only the core differs.  A CUDA entry point calls the same
 * driver, which hands its device buffers to the ops_nn_cuda_* functions below instead
 * of the CPU loops, so both backends validate, allocate, round and report errors
 * identically.
 *
 * Part 1: scalar functions both cores evaluate (static inline OPS_HOST_DEVICE, C and
 * C++ clean), so the formulas cannot drift.
 * Part 2: host helpers and the CUDA cores' C interface. */
#ifndef OPS_NN_COMMON_H
#define OPS_NN_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops_internal.h"
#include "ops_iter.h"
#include "ops_scalar_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- part 1: scalar functions ------------------------------------------------------ */

/* Rows [*lo, *hi) of pooled output row o: a window with its dilation (lo moved onto
 * the first tap inside the input), or adaptive pooling's [floor(o*in/out),
 * ceil((o+1)*in/out)). */
OPS_INLINE void
ops_nn_pool_window(bool adaptive, int64_t o, int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d,
                   int64_t *lo, int64_t *hi)
{
    if (adaptive) {
        *lo = (o * in) / out;
        *hi = ((o + 1) * in + out - 1) / out;
        return;
    }
    int64_t a = o * s - p, b = a + (k - 1) * d + 1;
    if (b > in)
        b = in;
    while (a < 0)
        a += d;
    *lo = a;
    *hi = b;
}

/* avg_pool2d's window [*y0, *y1) x [*x0, *x1) clipped to the input and its divisor
 * (count_include_pad counts the padding inside the window, not past it;
 * divisor_override replaces both); false for a window wholly in the padding (the
 * output is 0). */
OPS_INLINE bool
ops_nn_avg_window(int64_t oy, int64_t ox, int64_t ih, int64_t iw, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                  int64_t ph, int64_t pw, bool count_include_pad, int64_t divisor, int64_t *y0, int64_t *y1,
                  int64_t *x0, int64_t *x1, int64_t *div)
{
    int64_t a = oy * sh - ph, c = ox * sw - pw;
    int64_t b = a + kh < ih + ph ? a + kh : ih + ph;
    int64_t e = c + kw < iw + pw ? c + kw : iw + pw;
    const int64_t pool_size = (b - a) * (e - c);
    a = a > 0 ? a : 0, c = c > 0 ? c : 0;
    b = b < ih ? b : ih, e = e < iw ? e : iw;
    *y0 = a, *y1 = b, *x0 = c, *x1 = e;
    if (a >= b || c >= e)
        return false;
    *div = divisor ? divisor : count_include_pad ? pool_size : (b - a) * (e - c);
    return true;
}

/* The pointwise losses of d = x - y (kinds of loss.c's pw_kind): mse, l1, smooth_l1
 * (beta = param; beta 0 is l1), huber (delta = param). */
enum { OPS_NN_PW_MSE, OPS_NN_PW_L1, OPS_NN_PW_SMOOTH_L1, OPS_NN_PW_HUBER };

OPS_INLINE double
ops_nn_pointwise_loss(int kind, double x, double y, double param)
{
    const double d = x - y, ad = fabs(d);
    switch (kind) {
    case OPS_NN_PW_MSE: return d * d;
    case OPS_NN_PW_L1: return ad;
    case OPS_NN_PW_SMOOTH_L1: return ad < param ? 0.5 * d * d / param : ad - 0.5 * param;
    default: return ad < param ? 0.5 * d * d : param * (ad - 0.5 * param);
    }
}

/* binary_cross_entropy of input x in [0, 1] and target y, each log clamped at -100 so
 * that 0 and 1 give finite losses (PyTorch's CPU kernel). */
OPS_INLINE double
ops_nn_bce(double x, double y)
{
    const double lx = fmax(log(x), -100.0), l1x = fmax(log1p(-x), -100.0);
    return (y - 1) * l1x - y * lx;
}

/* binary_cross_entropy_with_logits of logit x, target t and the pos_weight factor lw
 * (1 + (pos_weight - 1) * t, or 1): (1 - t) x - lw log_sigmoid(x), with
 * log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|. */
OPS_INLINE double
ops_nn_bce_logits(double x, double t, double lw)
{
    const double ls = fmin(x, 0.0) - log1p(exp(-fabs(x)));
    return (1 - t) * x - lw * ls;
}

/* The class-dim losses over N x C x S doubles: p points at (n, 0, s), class c at
 * p[c * S].  In place, log_softmax over the classes (NaN wins the max). */
OPS_INLINE void
ops_nn_log_softmax_pos(double *p, int64_t C, int64_t S)
{
    double m = -INFINITY;
    for (int64_t c = 0; c < C; c++)
        m = p[c * S] > m || isnan(p[c * S]) ? p[c * S] : m;
    double sum = 0;
    for (int64_t c = 0; c < C; c++)
        sum += exp(p[c * S] - m);
    const double ls = m + log(sum);
    for (int64_t c = 0; c < C; c++)
        p[c * S] -= ls;
}

/* nll of target t (already checked) at log-probabilities p: -w[t] p[t]; *wt is the
 * target's weight (0 when t is ignore_index, whose loss is 0). */
OPS_INLINE double
ops_nn_nll_term(const double *p, int64_t t, const double *w, int64_t S, int64_t ignore_index, double *wt)
{
    if (t == ignore_index) {
        *wt = 0;
        return 0;
    }
    *wt = w != NULL ? w[t] : 1.0;
    return -*wt * p[t * S];
}

/* cross_entropy's label-smoothing term -sum_c w[c] p[c]. */
OPS_INLINE double
ops_nn_ce_smooth_term(const double *p, const double *w, int64_t C, int64_t S)
{
    double v = 0;
    for (int64_t c = 0; c < C; c++)
        v -= (w != NULL ? w[c] : 1.0) * p[c * S];
    return v;
}

/* cross_entropy with class probabilities tp: -sum_c w[c] t'[c] p[c], t' = tp smoothed
 * towards 1/C by ls. */
OPS_INLINE double
ops_nn_ce_prob_term(const double *p, const double *tp, const double *w, int64_t C, int64_t S, double ls)
{
    double v = 0;
    for (int64_t c = 0; c < C; c++) {
        const double t = tp[c * S] * (1 - ls) + ls / (double)C;
        v -= (w != NULL ? w[c] : 1.0) * t * p[c * S];
    }
    return v;
}

/* prelu: x where positive, else the slope w times x. */
#define OPS_NN_PRELU(x, w) ((x) > 0 ? (x) : (w) * (x))

/* ---- part 2: host side --------------------------------------------------------------- */

static inline bool
ops_nn_on_cuda(const ops_tensor *t)
{
    return t != NULL && t->storage->device.type == OPS_CUDA;
}

/* The pooling geometry (kernels/cpu/pool.c): every pool is a 2-D pooling over
 * (N, C, H, W) planes; a 1-D op has height 1 and an unbatched input a batch of 1. */
typedef struct {
    const char *op;
    ops_dtype dt;
    int nsp;      /* spatial dims of the op (1 or 2) */
    bool batched; /* the input has a batch dim */
    bool adaptive;
    int64_t nb, c, ih, iw; /* batch (1 when unbatched), channels, height (1 for 1-D), width */
    int64_t xs[4];         /* input strides (n, c, h, w) in elements */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t oh, ow;
    bool ceil_mode, count_include_pad;
    int64_t divisor; /* divisor_override, 0 when None */
} ops_pool_geom;

#ifdef OPS_WITH_CUDA
/* The CUDA cores.  Pointers are device memory of the tensors' device (cuda:dev),
 * contiguous, in the compute dtype cd (OPS_FLOAT32 or OPS_FLOAT64) unless said
 * otherwise; arrays named *_host are host memory.  Each returns OPS_OK or the error
 * (CUDA failures as OPS_ERR_RUNTIME naming op). */

/* M rows of N: y, and each row's mean and rstd when mean is not NULL (w, b NULL or N). */
ops_status ops_nn_cuda_layer_norm(const char *op, int dev, ops_dtype cd, const void *x, const void *w, const void *b,
                                  void *y, void *mean, void *rstd, int64_t M, int64_t N, double eps);
/* Per-channel mean and sum of squared deviations of x (N x C x S), into host arrays. */
ops_status ops_nn_cuda_bn_stats(const char *op, int dev, ops_dtype cd, const void *x, int64_t N, int64_t C, int64_t S,
                                double *mean_host, double *m2_host);
/* y = (x - mean[c]) * invstd[c] * w[c] + b[c] (mean, invstd: host arrays of C). */
ops_status ops_nn_cuda_bn_apply(const char *op, int dev, ops_dtype cd, const void *x, void *y, int64_t N, int64_t C,
                                int64_t S, const double *mean_host, const double *invstd_host, const void *w,
                                const void *b);
/* group_norm of x (N x C x S) in G groups; mean and rstd (N x G) when mean is not NULL. */
ops_status ops_nn_cuda_group_norm(const char *op, int dev, ops_dtype cd, const void *x, void *y, int64_t N, int64_t C,
                                  int64_t S, int64_t G, const void *w, const void *b, double eps, void *mean,
                                  void *rstd);
/* The first k[i] outside [0, bound) in order (i < n, int64 k), into *bad (host) with
 * *found; for the index checks that must fail before anything is written. */
ops_status ops_nn_cuda_first_out_of_range(const char *op, int dev, const int64_t *k, int64_t n, int64_t bound,
                                          bool *found, int64_t *bad);
/* Like ops_nn_cuda_first_out_of_range, skipping positions equal to skip. */
ops_status ops_nn_cuda_first_out_of_range_skip(const char *op, int dev, const int64_t *k, int64_t n, int64_t bound,
                                               int64_t skip, bool *found, int64_t *bad);
/* n rows of D elements of isz bytes: dst row i = weight row k[i] (weight rows at
 * element stride ws0, elements at stride ws1, base wbase). */
ops_status ops_nn_cuda_embedding(const char *op, int dev, const void *wbase, int64_t ws0, int64_t ws1, size_t isz,
                                 const int64_t *k, int64_t n, int64_t D, void *dst);
/* Max (values and, when idx is not NULL, int64 indices) or average pooling as g
 * describes, from x (g->dt, strided as g->xs) into contiguous out. */
ops_status ops_nn_cuda_pool(int dev, const ops_pool_geom *g, bool is_max, const void *x, void *out, int64_t *idx);
/* res (planes x ihw, acc dtype, zeroed) += g (planes x ohw) at indices ix (checked). */
ops_status ops_nn_cuda_pool_scatter(const char *op, int dev, ops_dtype acc, const void *g, const int64_t *ix,
                                    void *res, int64_t planes, int64_t ohw, int64_t ihw);

/* Losses (kernels/cpu/loss.c): double buffers of n elements (or N x C x S). */
/* x[i] = ops_nn_pointwise_loss(kind, x[i], y[i], param). */
ops_status ops_nn_cuda_pointwise_loss(const char *op, int dev, int kind, double *x, const double *y, int64_t n,
                                      double param);
/* *bad: some x[i] outside [0, 1] (nothing written then); else x[i] = bce(x, y) * w. */
ops_status ops_nn_cuda_bce(const char *op, int dev, double *x, const double *y, const double *w, int64_t n, bool *bad);
/* x[i] = bce_logits(x, t, pw) * w (w, pw may be NULL). */
ops_status ops_nn_cuda_bce_logits(const char *op, int dev, double *x, const double *t, const double *w,
                                  const double *pw, int64_t n);
/* The sum of v[0..n) into *sum_host. */
ops_status ops_nn_cuda_sum(const char *op, int dev, const double *v, int64_t n, double *sum_host);
/* Per target position: l = nll term, wt = its weight (targets checked). */
ops_status ops_nn_cuda_nll(const char *op, int dev, int64_t N, int64_t C, int64_t S, const double *lp,
                           const int64_t *tgt, const double *w, int64_t ignore_index, double *l, double *wt);
/* In place log_softmax over C of x (N x C x S). */
ops_status ops_nn_cuda_log_softmax(const char *op, int dev, int64_t N, int64_t C, int64_t S, double *x);
/* smooth = cross_entropy's label-smoothing terms (0 at ignored targets). */
ops_status ops_nn_cuda_ce_smooth(const char *op, int dev, int64_t N, int64_t C, int64_t S, const double *lp,
                                 const int64_t *tgt, const double *w, int64_t ignore_index, double *smooth);
/* y = a * y + b * x over n doubles (mixing the nll and smoothing terms). */
ops_status ops_nn_cuda_axpby(const char *op, int dev, double *y, const double *x, int64_t n, double a, double b);
/* l = class-probability cross entropy per position. */
ops_status ops_nn_cuda_ce_prob(const char *op, int dev, int64_t N, int64_t C, int64_t S, const double *lp,
                               const double *tp, const double *w, double ls, double *l);

/* nn.c: the gather engine's output (nd dims of sizes, contiguous, elements of isz
 * bytes) from src through the per-dim offset tables tbl_host (sizes[0] + ... +
 * sizes[nd - 1] int64 entries, host memory; INT64_MIN marks the fill value fill8). */
ops_status ops_nn_cuda_gather(const char *op, int dev, int nd, const int64_t *sizes, const int64_t *tbl_host,
                              size_t isz, const void *src, const void *fill8, void *dst);
/* upsample_linear1d (k = 1) / bilinear2d (k = 2) of x (dtype dt, strides xs: n, c,
 * [h,] w) into contiguous y (planes x oh x ow) with the host tables of nn.c:
 * ibuf = ih0, ih1 (oh each), iw0, iw1 (ow each); wbuf the weights in the same order,
 * double for float64 and float otherwise. */
ops_status ops_nn_cuda_upsample_linear(const char *op, int dev, ops_dtype dt, int k, const void *x,
                                       const int64_t *xs, int64_t planes, int64_t nc, int64_t oh, int64_t ow,
                                       const int64_t *ibuf, const void *wbuf, void *y);
/* glu's x * sigmoid(y) (glu) or prelu's x > 0 ? x : y * x over the binary iterator
 * it (CUDA operands, floating common dtype). */
ops_status ops_nn_cuda_binary(ops_iter *it, bool glu);
/* The min and max of n int64 at x, into host *lo, *hi (n > 0). */
ops_status ops_nn_cuda_minmax_i64(const char *op, int dev, const int64_t *x, int64_t n, int64_t *lo, int64_t *hi);
/* out (n x K int64) = one_hot(x) (x checked). */
ops_status ops_nn_cuda_one_hot(const char *op, int dev, const int64_t *x, int64_t n, int64_t K, int64_t *out);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OPS_NN_COMMON_H */

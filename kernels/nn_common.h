/* Shared by the NN families' drivers (kernels/norm.c, pool.c, nn.c, loss.c), their
 * CPU loops (kernels/cpu/norm.c, pool.c, nn.c, loss.c) and their CUDA kernels
 * (kernels/cuda/norm.cu, pool.cu, nn.cu, loss.cu).
 *
 * The NN ops are drivers around a small compute core: the driver, written once for
 * every device, checks the arguments (shapes, dtypes, values), makes the operands it
 * needs (contiguous copies in the compute dtype, on the operands' device), runs the
 * core through a stub (each family's kernels/<family>.h), and converts or copies the
 * result out, so every backend validates, allocates, rounds and reports errors
 * identically.
 *
 * Part 1: scalar functions both cores evaluate (static inline OPS_HOST_DEVICE, C and
 * C++ clean), so the formulas cannot drift.
 * Part 2: what the drivers and the loops share: the pooling geometry and the index
 * check of several families. */
#ifndef OPS_NN_COMMON_H
#define OPS_NN_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops_internal.h"
#include "ops_iter.h"
#include "ops_scalar_math.h"
#include "ops_stub.h"

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

/* ---- part 2: shared by drivers and loops ------------------------------------------------ */

/* The pooling geometry (kernels/pool.c): every pool is a 2-D pooling over
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

/* The first element of k (a contiguous int64 tensor) outside [0, bound), in order,
 * skipping elements equal to skip when use_skip: *found, and the element in *bad.  The
 * index checks of embedding, nll_loss and the pooling backward, which must fail before
 * anything is written (the CPU loop in kernels/cpu/loss.c, the CUDA kernel in
 * kernels/cuda/norm.cu). */
OPS_DECLARE_STUB(nn_first_bad_index, ops_status,
                 (const char *op, const ops_tensor *k, int64_t bound, bool use_skip, int64_t skip, bool *found,
                  int64_t *bad));


#ifdef __cplusplus
}
#endif

#endif /* OPS_NN_COMMON_H */

/* Internal: the loss functions mse_loss, l1_loss, smooth_l1_loss, huber_loss,
 * binary_cross_entropy, binary_cross_entropy_with_logits, nll_loss, nll_loss2d,
 * nll_loss_nd and cross_entropy_loss, one driver each for every device
 * (kernels/loss.c: checks, the result dtype, the `reduction` argument, the float64
 * buffers on the operands' device, the result and out=; the schema names them for
 * `CPU, CUDA`).  The per-element and per-position terms are the device's own,
 * reached through the stubs below: the CPU loops in kernels/cpu/loss.c, the CUDA
 * kernels in kernels/cuda/loss.cu, both over the formulas of kernels/nn_common.h.
 *
 * Every buffer a stub sees is a contiguous float64 tensor (int64 for class targets)
 * on the device the stub runs for; N x C x S is a class-dim input of N batches of C
 * classes of S positions, one target per (n, s). */
#ifndef OPS_KERNELS_LOSS_H
#define OPS_KERNELS_LOSS_H

#include "kernels/nn_common.h"
#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *s = the sum of the n doubles of buf from element off on. */
OPS_DECLARE_STUB(loss_sum, ops_status, (const char *op, const ops_tensor *buf, int64_t off, int64_t n, double *s));

/* x[i] = ops_nn_pointwise_loss(kind, x[i], y[i], param) over x's elements. */
OPS_DECLARE_STUB(loss_pointwise_terms, ops_status,
                 (const char *op, int kind, ops_tensor *x, const ops_tensor *y, double param));

/* *bad when some x[i] is outside [0, 1] or NaN (x untouched then); else
 * x[i] = ops_nn_bce(x[i], y[i]) * w[i] (w may be NULL). */
OPS_DECLARE_STUB(loss_bce_terms, ops_status,
                 (const char *op, ops_tensor *x, const ops_tensor *y, const ops_tensor *w, bool *bad));

/* x[i] = ops_nn_bce_logits(x[i], t[i], 1 + (pw[i] - 1) t[i]) * w[i] (w, pw may be
 * NULL: factor 1). */
OPS_DECLARE_STUB(loss_bce_logits_terms, ops_status,
                 (const char *op, ops_tensor *x, const ops_tensor *t, const ops_tensor *w, const ops_tensor *pw));

/* In place: x (N x C x S) becomes log_softmax over C. */
OPS_DECLARE_STUB(loss_log_softmax, ops_status, (const char *op, int64_t N, int64_t C, int64_t S, ops_tensor *x));

/* The nll terms of the log-probabilities lp (N x C x S) for the checked targets t
 * (N * S int64): l[i] = -w[t[i]] lp[n, t[i], s] (0 at ignore_index) for the first
 * N * S doubles of l, and *total_weight the sum of the weights of the targets that
 * count (w may be NULL: weight 1). */
OPS_DECLARE_STUB(loss_nll_terms, ops_status,
                 (const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *t,
                  const ops_tensor *w, int64_t ignore_index, ops_tensor *l, double *total_weight));

/* cross_entropy's label smoothing: l's doubles N * S .. 2 N * S get the smoothing
 * terms -sum_c w[c] lp[n, c, s] (0 at ignore_index); with mix, l's first N * S
 * (the nll terms) become a * nll + b * smooth. */
OPS_DECLARE_STUB(loss_ce_smooth_terms, ops_status,
                 (const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *t,
                  const ops_tensor *w, int64_t ignore_index, ops_tensor *l, bool mix, double a, double b));

/* cross_entropy with class-probability targets tp (N x C x S): l[i] per position,
 * the targets smoothed by ls towards 1/C. */
OPS_DECLARE_STUB(loss_ce_prob_terms, ops_status,
                 (const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *tp,
                  const ops_tensor *w, double ls, ops_tensor *l));

/* cross_entropy fused, for class-index targets over N x C x S logits x (self,
 * contiguous, its own floating dtype), t the checked targets (N * S int64): l[i] =
 * -w[t[i]] log_softmax(x)[t[i]] over the classes of position i (0 at ignore_index)
 * for the first N * S doubles of l, *total_weight as loss_nll_terms; with smooth,
 * l's doubles N * S .. 2 N * S get the label-smoothing terms -sum_c w[c]
 * log_softmax(x)[c] (0 at ignore_index), as loss_ce_smooth_terms.  A device without
 * it (the stub unset) takes log_softmax then the nll (and smoothing) terms. */
OPS_DECLARE_STUB(loss_ce_rows, ops_status,
                 (const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *x, const ops_tensor *t,
                  const ops_tensor *w, int64_t ignore_index, bool smooth, ops_tensor *l, double *total_weight));

/* cross_entropy's grad_input, fused: x as loss_ce_rows (float32 or float64), w
 * float64 or NULL, g the incoming gradient (contiguous float64: N * S values for
 * reduction none, else one), eps the label smoothing; gx (x's dtype and shape,
 * contiguous) = g_i / d ((1 - eps) w[t] + eps/C W) softmax(x) - g_i / d (eps/C w[c] +
 * (1 - eps) w[t] at c = t) per counted position i (d = the total weight for mean,
 * else 1; W = sum(w); 0 at ignore_index).  Called by the autograd formula when no
 * graph is recorded; a device without it takes the composed formula. */
OPS_DECLARE_STUB(loss_ce_rows_backward, ops_status,
                 (const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *x, const ops_tensor *t,
                  const ops_tensor *w, int64_t ignore_index, double eps, int64_t reduction, const ops_tensor *g,
                  ops_tensor *gx));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_LOSS_H */

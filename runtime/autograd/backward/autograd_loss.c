/* Backward helpers of the losses (called by formulas in ops/derivatives.yaml): the
 * class losses (nll_loss, cross_entropy with class indices or probabilities, >2-d
 * inputs through a [positions, classes] view), binary cross entropy with and without
 * logits, and their weights' gradients.  Written with public ops, so each is itself
 * differentiable. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_impl.h"
#include "kernels/loss.h"

#if __has_include("ops_functions.h")
#include "ops_op_add.h"
#include "ops_op_contiguous.h"
#include "ops_op_div.h"
#include "ops_op_expand.h"
#include "ops_op_log_softmax.h"
#include "ops_op_movedim.h"
#include "ops_op_mul.h"
#include "ops_op_neg.h"
#include "ops_op_reshape.h"
#include "ops_op_softmax.h"
#include "ops_op_sub.h"
#include "ops_op_sum.h"
#include "ops_op_to.h"
#include "ops_op_unsqueeze.h"
#include "ops_op_zeros.h"
#include "ops_op_zeros_like.h"
#endif

/* ---- losses --------------------------------------------------------------------------- */

/* The gradient of a reduced loss brought back to the elementwise shape of like:
 * grad as it is (reduction none), broadcast (sum), or broadcast / numel (mean). */
ops_tensor *
ops_autograd_reduction_backward(const ops_tensor *g, const ops_tensor *like, int64_t reduction)
{
    if (reduction == 0)
        return ops_tensor_retain(g);
    ops_tensor *e = ops_expand(g, (ops_int_list){like->sizes, like->ndim}, false);
    if (e == NULL || reduction != 1)
        return e;
    const int64_t n = ops_tensor_numel(like);
    ops_tensor *r = ops_div_scalar(e, OPS_SCALAR_INT(n > 0 ? n : 1));
    ops_tensor_release(e);
    return r;
}

/* The class weights (1 without weight) and each row's class (-1 when ignored) of a
 * class-index loss over input [N, C] (or [C]) and target [N] (or []). */
static ops_status
class_rows(const char *op, const ops_tensor *target, const ops_tensor *weight, int64_t ignore_index, int64_t *cls,
           double *wcls, int64_t n, int64_t C)
{
    /* read on the host: copies to the cpu when they live on a device */
    ops_tensor *t64 = ops_to_device(target, OPS_DEVICE_CPU, OPS_INT64, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *tc = t64 != NULL ? ops_contiguous(t64, OPS_CONTIGUOUS_FORMAT) : NULL;
    ops_tensor *w64 = weight != NULL ? ops_to_device(weight, OPS_DEVICE_CPU, OPS_FLOAT64, false, false,
                                                     OPS_MEMORY_FORMAT_NONE) : NULL;
    ops_tensor *wc = w64 != NULL ? ops_contiguous(w64, OPS_CONTIGUOUS_FORMAT) : NULL;
    ops_status st = OPS_OK;
    if (tc == NULL || (weight != NULL && wc == NULL)) {
        st = ops_last_status();
        goto done;
    }
    const int64_t *t = ops_tensor_data_ptr(tc);
    const double *w = wc != NULL ? ops_tensor_data_ptr(wc) : NULL;
    for (int64_t c = 0; c < C; c++)
        wcls[c] = w != NULL ? w[c] : 1.0;
    for (int64_t i = 0; i < n; i++) {
        if (t[i] == ignore_index) {
            cls[i] = -1;
        } else if (t[i] < 0 || t[i] >= C) {
            st = ops_fail(OPS_ERR_INDEX, "%s: Target %lld is out of bounds.", op, (long long)t[i]);
            goto done;
        } else {
            cls[i] = t[i];
        }
    }
done:
    ops_tensor_release(t64);
    ops_tensor_release(tc);
    ops_tensor_release(w64);
    ops_tensor_release(wc);
    return st;
}

/* The constants of a class-index loss's gradients over M rows of C classes: the
 * one-hot rows of the counted targets *oh [M, C] (ignored rows 0), the counted-row
 * mask *keep [M, 1], both in self's dtype on self's device, and the total weight of
 * the counted targets *tw (their number without weight), read on the host. */
static ops_status
class_constants(const char *op, const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                int64_t ignore_index, int64_t M, int64_t C, ops_tensor **oh, ops_tensor **keep, double *tw)
{
    int64_t *cls = ops_host_malloc((size_t)(M > 0 ? M : 1) * sizeof *cls);
    double *wcls = ops_host_malloc((size_t)(C > 0 ? C : 1) * sizeof *wcls);
    ops_tensor *o = NULL, *k = NULL;
    ops_status st = OPS_OK;
    *oh = *keep = NULL;
    if (cls == NULL || wcls == NULL) {
        st = ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    if ((st = class_rows(op, target, weight, ignore_index, cls, wcls, M, C)) != OPS_OK)
        goto done;
    if ((o = ops_zeros(OPS_INTS(M, C), OPS_FLOAT64, OPS_DEVICE_CPU)) == NULL ||
        (k = ops_zeros(OPS_INTS(M, 1), OPS_FLOAT64, OPS_DEVICE_CPU)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    double *op_ = ops_tensor_data_ptr(o), *kp = ops_tensor_data_ptr(k), w = 0;
    for (int64_t i = 0; i < M; i++) {
        if (cls[i] >= 0) {
            op_[i * C + cls[i]] = 1;
            kp[i] = 1;
            w += wcls[cls[i]];
        }
    }
    *tw = w;
    if (self->dtype != OPS_FLOAT64 || ops_tensor_device(self).type != OPS_CPU) {
        ops_tensor *oc = ops_to_device(o, ops_tensor_device(self), self->dtype, false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor *kc = oc != NULL ? ops_to_device(k, ops_tensor_device(self), self->dtype, false, false, OPS_MEMORY_FORMAT_NONE) : NULL;
        ops_tensor_release(o);
        ops_tensor_release(k);
        o = oc;
        k = kc;
        if (k == NULL) {
            st = ops_last_status();
            goto done;
        }
    }
    *oh = o;
    *keep = k;
    o = k = NULL;
done:
    ops_tensor_release(o);
    ops_tensor_release(k);
    ops_host_free(cls);
    ops_host_free(wcls);
    return st;
}

/* cross_entropy's grad_input over class indices when nothing records (no
 * create_graph) on a device with the fused loop (loss_ce_rows_backward: the CPU):
 * [C], [N, C] or [N, C, d1...] float32/float64 input, any label smoothing; one pass
 * of softmax times a per-position scale less the target and smoothing terms
 * (kernels/loss.h), no one-hot matrix, no moved copy of the classes. */
static bool
ce_fused_backward_applies(const ops_tensor *g, const ops_tensor *self, const ops_tensor *target)
{
    return !ops_grad_enabled() && ops_tensor_device(g).type == ops_tensor_device(self).type &&
           (self->dtype == OPS_FLOAT32 || self->dtype == OPS_FLOAT64) && self->ndim >= 1 &&
           target->ndim == self->ndim - 1 && ops_dtype_is_integral(target->dtype, false) &&
           OPS_STUB_GET(loss_ce_rows_backward, ops_tensor_device(self)) != NULL;
}

static ops_tensor *
ce_fused_backward(const char *op, const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                  const ops_tensor *weight, int64_t reduction, int64_t ignore_index, double eps)
{
    const int64_t N = self->ndim == 1 ? 1 : self->sizes[0], C = self->sizes[self->ndim == 1 ? 0 : 1];
    const int64_t S = N * C > 0 ? ops_tensor_numel(self) / (N * C) : 0, nt = N * S;
    int64_t *cls = ops_host_malloc((size_t)(nt > 0 ? nt : 1) * sizeof *cls);
    double *wcls = ops_host_malloc((size_t)(C > 0 ? C : 1) * sizeof *wcls);
    ops_tensor *xc = NULL, *t64 = NULL, *tc = NULL, *w64 = NULL, *wc = NULL, *g64 = NULL, *gc = NULL, *gx = NULL;
    ops_tensor *res = NULL;
    if (cls == NULL || wcls == NULL) {
        ops_fail(OPS_ERR_OOM, "%s: out of memory", op);
        goto done;
    }
    /* the targets' bounds, before anything is computed */
    if (class_rows(op, target, weight, ignore_index, cls, wcls, nt, C) != OPS_OK)
        goto done;
    AG_STEP(xc, ops_contiguous(self, OPS_CONTIGUOUS_FORMAT));
    AG_STEP(t64, ops_to_dtype(target, OPS_INT64, false, false, OPS_MEMORY_FORMAT_NONE));
    AG_STEP(tc, ops_contiguous(t64, OPS_CONTIGUOUS_FORMAT));
    if (weight != NULL) {
        AG_STEP(w64, ops_to_dtype(weight, OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE));
        AG_STEP(wc, ops_contiguous(w64, OPS_CONTIGUOUS_FORMAT));
    }
    AG_STEP(g64, ops_to_dtype(g, OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE));
    AG_STEP(gc, ops_contiguous(g64, OPS_CONTIGUOUS_FORMAT));
    AG_STEP(gx, ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, ops_tensor_device(self)));
    if (OPS_STUB_CALL(loss_ce_rows_backward, ops_tensor_device(self), op, N, C, S, xc, tc, wc, ignore_index, eps,
                      reduction, gc, gx) != OPS_OK)
        goto done;
    res = gx;
    gx = NULL;
done:;
    ops_tensor *const all[] = {xc, t64, tc, w64, wc, g64, gc, gx};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
    ops_host_free(cls);
    ops_host_free(wcls);
    return res;
}

/* grad_input of nll_loss / cross_entropy over class indices ([N, C], or [C] as one
 * row), as public ops so it is differentiable in g, in the class weights and (for
 * cross_entropy, through softmax) in self: g (P R + Q) / d, with P the softmax
 * (cross_entropy only), O the one-hot rows of the counted targets, k the counted-row
 * mask, w the class weights (1 without), wt = O w the weight of each row's target,
 * W = sum(w), eps the label smoothing and d the mean's divisor (sum(wt); 1 for none
 * and sum): R = (1 - eps) wt + eps / C k W and Q = -(1 - eps) O wt - eps / C k w.
 * A mean over zero total weight has a zero gradient. */
static ops_tensor *
class_loss_backward_2d(const char *op, const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                       const ops_tensor *weight, int64_t reduction, int64_t ignore_index, double eps, bool softmax)
{
    if ((self->ndim != 1 && self->ndim != 2) || target->ndim != self->ndim - 1 ||
        !ops_dtype_is_integral(target->dtype, false))
        return ops_fail_null(OPS_ERR_SHAPE, "%s: backward: wanted an [N, C] or [C] input and class indices", op);
    const int64_t n = self->ndim == 2 ? self->sizes[0] : 1, C = self->sizes[self->ndim - 1];
    ops_tensor *oh = NULL, *keep = NULL, *x2 = NULL, *g2 = NULL, *wt = NULL, *ow = NULL, *q1 = NULL, *kw = NULL;
    ops_tensor *q = NULL, *r = NULL, *p = NULL, *pr = NULL, *sum = NULL, *den = NULL, *gs = NULL, *res = NULL;
    ops_tensor *r2 = NULL, *wsum = NULL, *kws = NULL, *tmp = NULL;
    double tw = 0;
    if (class_constants(op, self, target, weight, ignore_index, n, C, &oh, &keep, &tw) != OPS_OK)
        goto done;
    if (reduction == 1 && tw == 0) { /* nothing counted: PyTorch's gradient is 0 too */
        res = ops_zeros_like(self, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
        goto done;
    }
    AG_STEP(x2, ops_reshape(self, OPS_INTS(n, C)));
    AG_STEP(g2, reduction == 0 ? ops_reshape(g, OPS_INTS(n, 1)) : ops_tensor_retain(g));
    if (weight != NULL) {
        AG_STEP(ow, ops_mul(oh, weight));
        AG_STEP(wt, ops_sum_dim(ow, &OPS_INTS(1), true, OPS_DTYPE_NONE));
    } else {
        wt = ops_tensor_retain(keep);
    }
    AG_STEP(q1, ops_mul(oh, wt));
    AG_STEP(q, ops_mul_scalar(q1, OPS_SCALAR_FLOAT(eps - 1)));
    if (eps > 0) {
        AG_STEP(kw, weight != NULL ? ops_mul(keep, weight) : ops_tensor_retain(keep));
        AG_STEP(tmp, ops_sub(q, kw, OPS_SCALAR_FLOAT(eps / (double)C)));
        ops_tensor_release(q);
        q = tmp;
        tmp = NULL;
    }
    if (softmax) {
        AG_STEP(r, ops_mul_scalar(wt, OPS_SCALAR_FLOAT(1 - eps)));
        if (eps > 0) {
            if (weight != NULL) {
                AG_STEP(wsum, ops_sum(weight, OPS_DTYPE_NONE));
                AG_STEP(kws, ops_mul(keep, wsum));
            } else {
                AG_STEP(kws, ops_mul_scalar(keep, OPS_SCALAR_INT(C)));
            }
            AG_STEP(r2, ops_add(r, kws, OPS_SCALAR_FLOAT(eps / (double)C)));
            ops_tensor_release(r);
            r = r2;
            r2 = NULL;
        }
        AG_STEP(p, ops_softmax(x2, -1, OPS_DTYPE_NONE));
        AG_STEP(pr, ops_mul(p, r));
        AG_STEP(sum, ops_add(pr, q, OPS_SCALAR_INT(1)));
    } else {
        sum = ops_tensor_retain(q);
    }
    if (reduction == 1 && weight != NULL) {
        AG_STEP(den, ops_sum(wt, OPS_DTYPE_NONE));
        AG_STEP(gs, ops_div(g2, den));
    } else if (reduction == 1) {
        AG_STEP(gs, ops_div_scalar(g2, OPS_SCALAR_FLOAT(tw)));
    } else {
        gs = ops_tensor_retain(g2);
    }
    AG_STEP(tmp, ops_mul(sum, gs));
    res = ops_reshape(tmp, (ops_int_list){self->sizes, self->ndim});
    /* a weight of a wider dtype promoted the product: self's gradient keeps its dtype */
    if (res != NULL && res->dtype != self->dtype) {
        ops_tensor *c = ops_to_dtype(res, self->dtype, false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor_release(res);
        res = c;
    }
done:;
    ops_tensor *const all[] = {oh, keep, x2, g2, wt, ow, q1, kw, q, r, p, pr, sum, den, gs, r2, wsum, kws, tmp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
    return res;
}

/* The same over [N, C, d1, ...] (cross_entropy, nll_loss2d, nll_loss_nd): the classes
 * moved last and every position made a row, so the [M, C] gradient applies (softmax
 * over the last dim is softmax over the classes); back to the input's layout
 * afterwards.  The mean's divisor (the total weight of the counted targets) is the same
 * either way. */
static ops_tensor *
class_loss_backward(const char *op, const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                    const ops_tensor *weight, int64_t reduction, int64_t ignore_index, double eps, bool softmax)
{
    if (softmax && ce_fused_backward_applies(g, self, target))
        return ce_fused_backward(op, g, self, target, weight, reduction, ignore_index, eps);
    if (self->ndim <= 2)
        return class_loss_backward_2d(op, g, self, target, weight, reduction, ignore_index, eps, softmax);
    const int64_t C = self->sizes[1];
    const int64_t M = C > 0 ? ops_tensor_numel(self) / C : ops_tensor_numel(target);
    int64_t moved[OPS_MAX_DIMS];
    for (int i = 0, j = 0; i < self->ndim; i++)
        if (i != 1)
            moved[j++] = self->sizes[i];
    moved[self->ndim - 1] = C;
    ops_tensor *xm = NULL, *x2 = NULL, *t2 = NULL, *g2 = NULL, *r2 = NULL, *r3 = NULL, *r = NULL;
    AG_STEP(xm, ops_movedim_int(self, 1, -1));
    AG_STEP(x2, ops_reshape(xm, OPS_INTS(M, C)));
    AG_STEP(t2, ops_reshape(target, OPS_INTS(M)));
    AG_STEP(g2, reduction == 0 ? ops_reshape(g, OPS_INTS(M)) : ops_tensor_retain(g));
    AG_STEP(r2, class_loss_backward_2d(op, g2, x2, t2, weight, reduction, ignore_index, eps, softmax));
    AG_STEP(r3, ops_reshape(r2, (ops_int_list){moved, self->ndim}));
    r = ops_movedim_int(r3, -1, 1);
done:
    ops_tensor_release(xm);
    ops_tensor_release(x2);
    ops_tensor_release(t2);
    ops_tensor_release(g2);
    ops_tensor_release(r2);
    ops_tensor_release(r3);
    return r;
}

/* cross_entropy with class probabilities t (self's shape), classes along dim k (0 for
 * a [C] input, else 1), smoothed t' = (1 - eps) t + eps / C, class weights w (1
 * without) and q = w t': the loss at a position is -sum_c q[c] log_softmax(x)[c], so
 * self (which 0): g (softmax(x) sum_c q[c] - q);
 * target (1): -g (1 - eps) w log_softmax(x);
 * weight (2): -g t' log_softmax(x), summed over every dim but the classes';
 * g brought back over the class dim, divided by the number of positions
 * (numel / C) for the mean, as the forward's mean. */
static ops_tensor *
ce_prob_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                 int64_t reduction, double eps, int64_t which)
{
    const int k = self->ndim == 1 ? 0 : 1;
    const int64_t C = self->sizes[k];
    int64_t wshape[OPS_MAX_DIMS];
    for (int i = 0; i < self->ndim; i++)
        wshape[i] = i == k ? C : 1;
    ops_tensor *wv = NULL, *gg = NULL, *ts = NULL, *q = NULL, *sq = NULL, *p = NULL, *ps = NULL, *d = NULL;
    ops_tensor *lp = NULL, *a = NULL, *res = NULL;
    if (weight != NULL)
        AG_STEP(wv, ops_reshape(weight, (ops_int_list){wshape, self->ndim}));
    if (reduction == 0) {
        AG_STEP(gg, ops_unsqueeze(g, k));
    } else if (reduction == 1) {
        const int64_t positions = C > 0 ? ops_tensor_numel(self) / C : 0;
        AG_STEP(gg, ops_div_scalar(g, OPS_SCALAR_INT(positions > 0 ? positions : 1)));
    } else {
        gg = ops_tensor_retain(g);
    }
    if (which != 1) { /* t' */
        if (eps > 0) {
            AG_STEP(a, ops_mul_scalar(target, OPS_SCALAR_FLOAT(1 - eps)));
            AG_STEP(ts, ops_add_scalar(a, OPS_SCALAR_FLOAT(eps / (double)C), OPS_SCALAR_INT(1)));
        } else {
            ts = ops_tensor_retain(target);
        }
    }
    if (which == 0) {
        AG_STEP(q, wv != NULL ? ops_mul(ts, wv) : ops_tensor_retain(ts));
        AG_STEP(sq, ops_sum_dim(q, &OPS_INTS(k), true, OPS_DTYPE_NONE));
        AG_STEP(p, ops_softmax(self, k, OPS_DTYPE_NONE));
        AG_STEP(ps, ops_mul(p, sq));
        AG_STEP(d, ops_sub(ps, q, OPS_SCALAR_INT(1)));
        res = ops_mul(d, gg);
    } else if (which == 1) {
        AG_STEP(lp, ops_log_softmax(self, k, OPS_DTYPE_NONE));
        AG_STEP(ps, ops_mul_scalar(lp, OPS_SCALAR_FLOAT(eps - 1)));
        AG_STEP(d, wv != NULL ? ops_mul(ps, wv) : ops_tensor_retain(ps));
        res = ops_mul(d, gg);
    } else {
        /* weight: -g t' log_softmax(x) summed over every dim but the classes' */
        AG_STEP(lp, ops_log_softmax(self, k, OPS_DTYPE_NONE));
        AG_STEP(ps, ops_mul(lp, ts));
        AG_STEP(d, ops_mul(ps, gg));
        int64_t others[OPS_MAX_DIMS];
        int no = 0;
        for (int i = 0; i < self->ndim; i++)
            if (i != k)
                others[no++] = i;
        AG_STEP(q, no > 0 ? ops_sum_dim(d, &(ops_int_list){others, no}, false, OPS_DTYPE_NONE) : ops_tensor_retain(d));
        res = ops_neg(q);
    }
    /* a weight or a target of a wider dtype promoted the product: the gradient keeps
     * the dtype of the input it is for */
    const ops_dtype want = which == 0 ? self->dtype : which == 1 ? target->dtype : weight->dtype;
    if (res != NULL && res->dtype != want) {
        ops_tensor *c = ops_to_dtype(res, want, false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor_release(res);
        res = c;
    }
done:
    ops_tensor_release(wv);
    ops_tensor_release(gg);
    ops_tensor_release(ts);
    ops_tensor_release(q);
    ops_tensor_release(sq);
    ops_tensor_release(p);
    ops_tensor_release(ps);
    ops_tensor_release(d);
    ops_tensor_release(lp);
    ops_tensor_release(a);
    return res;
}

/* The class weights' gradient of nll_loss / cross_entropy over class indices, as
 * public ops (differentiable in g, self and weight).  With every position a row i of
 * class t_i (classes moved last: x2 [M, C]), O the one-hot rows of the counted targets
 * (ignored rows 0), k_i = 1 for a counted row, lp = log_softmax(x2) (cross_entropy) or
 * x2 (nll), the loss of row i is linear in the weights: l_i = sum_c w[c] B[i, c] with
 * B[i, c] = (1 - eps) O[i, c] (-lp[i, t_i]) + eps / C k_i (-lp[i, c]).  So
 * none: grad_w = sum_i g_i B[i]; sum: g sum_i B[i]; mean, the sum S = A . w (A the
 * column sums of B) divided by W = n . w (n the counts per class):
 * grad_w = g (A - (S / W) n) / W. */
static ops_tensor *
class_loss_weight_backward(const char *op, const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                           const ops_tensor *weight, int64_t reduction, int64_t ignore_index, double eps,
                           bool softmax)
{
    if (weight == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "%s: backward: no weight to differentiate", op);
    const int cdim = self->ndim == 1 ? 0 : 1;
    const int64_t C = self->sizes[cdim];
    const int64_t M = C > 0 ? ops_tensor_numel(self) / C : ops_tensor_numel(target);
    ops_tensor *xm = NULL, *x2 = NULL, *oh = NULL, *keep = NULL, *lp = NULL, *ol = NULL, *nlpt = NULL;
    ops_tensor *b1 = NULL, *b2 = NULL, *b3 = NULL, *b = NULL, *g2 = NULL, *gb = NULL, *a = NULL, *n = NULL;
    ops_tensor *aw = NULL, *s = NULL, *nw = NULL, *w = NULL, *sw = NULL, *sn = NULL, *an = NULL, *gw = NULL;
    ops_tensor *res = NULL;
    double tw = 0;
    ops_tensor *t1 = NULL;
    AG_STEP(t1, ops_reshape(target, OPS_INTS(M)));
    if (class_constants(op, self, t1, weight, ignore_index, M, C, &oh, &keep, &tw) != OPS_OK)
        goto done;
    AG_STEP(xm, cdim == 1 ? ops_movedim_int(self, 1, -1) : ops_tensor_retain(self));
    AG_STEP(x2, ops_reshape(xm, OPS_INTS(M, C)));
    AG_STEP(lp, softmax ? ops_log_softmax(x2, -1, OPS_DTYPE_NONE) : ops_tensor_retain(x2));
    AG_STEP(ol, ops_mul(oh, lp));
    AG_STEP(nlpt, ops_sum_dim(ol, &OPS_INTS(1), true, OPS_DTYPE_NONE)); /* lp[i, t_i] (0 when ignored) */
    AG_STEP(b1, ops_mul(oh, nlpt));
    AG_STEP(b, ops_mul_scalar(b1, OPS_SCALAR_FLOAT(eps - 1))); /* (1 - eps) O (-lp[t]) */
    if (eps > 0) {
        AG_STEP(b2, ops_mul(lp, keep));
        AG_STEP(b3, ops_sub(b, b2, OPS_SCALAR_FLOAT(eps / (double)C)));
        ops_tensor_release(b);
        b = b3;
        b3 = NULL;
    }
    if (reduction == 0) {
        AG_STEP(g2, ops_reshape(g, OPS_INTS(M, 1)));
        AG_STEP(gb, ops_mul(b, g2));
        res = ops_sum_dim(gb, &OPS_INTS(0), false, OPS_DTYPE_NONE);
        goto done;
    }
    AG_STEP(a, ops_sum_dim(b, &OPS_INTS(0), false, OPS_DTYPE_NONE));
    if (reduction == 2) {
        res = ops_mul(a, g);
        goto done;
    }
    AG_STEP(n, ops_sum_dim(oh, &OPS_INTS(0), false, OPS_DTYPE_NONE));
    AG_STEP(aw, ops_mul(a, weight));
    AG_STEP(s, ops_sum(aw, OPS_DTYPE_NONE));
    AG_STEP(nw, ops_mul(n, weight));
    AG_STEP(w, ops_sum(nw, OPS_DTYPE_NONE));
    AG_STEP(sw, ops_div(s, w));
    AG_STEP(sn, ops_mul(n, sw));
    AG_STEP(an, ops_sub(a, sn, OPS_SCALAR_INT(1)));
    AG_STEP(gw, ops_div(g, w));
    res = ops_mul(an, gw);
done:
    if (res != NULL && res->dtype != weight->dtype) {
        ops_tensor *c = ops_to_dtype(res, weight->dtype, false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor_release(res);
        res = c;
    }
    ops_tensor *const tmp[] = {t1, xm, x2, oh, keep, lp, ol, nlpt, b1, b2, b3, b,
                               g2, gb, a, n, aw, s, nw, w, sw, sn, an, gw};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        ops_tensor_release(tmp[i]);
    return res;
}

ops_tensor *
ops_autograd_nll_loss_weight_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                                      const ops_tensor *weight, int64_t reduction, int64_t ignore_index)
{
    return class_loss_weight_backward("nll_loss", g, self, target, weight, reduction, ignore_index, 0.0, false);
}

ops_tensor *
ops_autograd_nll_loss_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                               const ops_tensor *weight, int64_t reduction, int64_t ignore_index)
{
    return class_loss_backward("nll_loss", g, self, target, weight, reduction, ignore_index, 0.0, false);
}

ops_tensor *
ops_autograd_nll_loss_nd_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                                  const ops_tensor *weight, int64_t reduction, int64_t ignore_index)
{
    return class_loss_backward("nll_loss_nd", g, self, target, weight, reduction, ignore_index, 0.0, false);
}

/* The forward's rule: a target of self's shape holds probabilities (a floating one:
 * the forward refused any other), else class indices (no gradient for them then).
 * which: 0 self, 1 target, 2 weight. */
ops_tensor *
ops_autograd_cross_entropy_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                                    const ops_tensor *weight, int64_t reduction, int64_t ignore_index,
                                    double label_smoothing, int64_t which)
{
    const bool prob = self->ndim == target->ndim &&
                      memcmp(self->sizes, target->sizes, (size_t)self->ndim * sizeof(int64_t)) == 0;
    if (prob)
        return ce_prob_backward(g, self, target, weight, reduction, label_smoothing, which);
    if (which == 2)
        return class_loss_weight_backward("cross_entropy_loss", g, self, target, weight, reduction, ignore_index,
                                          label_smoothing, true);
    if (which != 0)
        return ops_fail_null(OPS_ERR_VALUE, "cross_entropy_loss: class-index targets have no gradient");
    return class_loss_backward("cross_entropy_loss", g, self, target, weight, reduction, ignore_index,
                               label_smoothing, true);
}

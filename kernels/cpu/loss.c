/* Loss functions (CPU): mse_loss, l1_loss, smooth_l1_loss, huber_loss,
 * binary_cross_entropy, binary_cross_entropy_with_logits, nll_loss, nll_loss2d,
 * nll_loss_nd and cross_entropy_loss.
 *
 * `reduction` is PyTorch's enum as an int: 0 none, 1 mean, 2 sum.  Every operand is
 * first copied into a contiguous float64 tensor (broadcast to the loss's shape where
 * the op broadcasts), the loss is computed and reduced in double, and the result is
 * rounded once to the result dtype.  Losses are not the bandwidth-bound hot path the
 * normalizations are, and double throughout makes the mean of a float16 loss and the
 * log-probabilities of cross_entropy as exact as their float32 references.  All
 * checks (shapes, dtypes, value ranges, target indices) run before the result is
 * written; out= forms compute the result first and copy it into out.
 *
 * The drivers are device-generic (kernels/nn_common.h): on CUDA tensors the float64
 * buffers live on the device, the loops are kernels/cuda/loss.cu's kernels over the
 * same per-element formulas, sums are read back, and target indices are checked by
 * a kernel whose first bad target is read back before anything is written. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/nn_common.h"
#include "ops_dispatch.h"
#include "ops_kernels_loss.h"

enum { LOSS_NONE = 0, LOSS_MEAN = 1, LOSS_SUM = 2 };

/* ---- shared pieces ---------------------------------------------------------------- */

static ops_status
loss_check_reduction(const char *op, int64_t reduction)
{
    if (reduction < LOSS_NONE || reduction > LOSS_SUM)
        return ops_fail(OPS_ERR_VALUE, "%s: reduction must be 0 (none), 1 (mean) or 2 (sum), but got %" PRId64, op,
                        reduction);
    return OPS_OK;
}

/* The result dtype of a loss over these operands (NULL entries skipped): promoted,
 * and floating. */
static ops_status
loss_dtype(const char *op, int n, const ops_tensor *const *ts, ops_dtype *rd)
{
    ops_dtype dt = OPS_DTYPE_NONE;
    for (int i = 0; i < n; i++) {
        if (ts[i] == NULL)
            continue;
        dt = dt == OPS_DTYPE_NONE ? ts[i]->dtype : ops_promote_types(dt, ts[i]->dtype);
    }
    if (!ops_dtype_is_floating(dt))
        return ops_fail_dtype(op, dt, OPS_MASK_FLOATING);
    *rd = dt;
    return OPS_OK;
}

/* t broadcast to shape as a new contiguous tensor of dtype dt on t's device, or NULL
 * with the error set ("output with shape ... doesn't match the broadcast shape" when
 * t does not broadcast to it). */
static ops_tensor *
loss_copy(const char *op, const ops_tensor *t, int nd, const int64_t *shape, ops_dtype dt)
{
    ops_tensor *c = ops_tensor_new(op, nd, shape, NULL, dt, ops_tensor_device(t));
    if (c == NULL)
        return NULL;
    if (ops_copy_values(op, c, t) != OPS_OK) {
        ops_tensor_release(c);
        return NULL;
    }
    return c;
}

/* The float64 data of a loss buffer (device memory for a CUDA tensor). */
static double *
loss_data(const ops_tensor *t)
{
    return t != NULL ? (double *)ops_tensor_data_ptr(t) : NULL;
}

#ifdef OPS_WITH_CUDA
/* The CUDA device index of t, or -1 for a CPU tensor. */
static int
loss_cuda(const ops_tensor *t)
{
    return ops_nn_on_cuda(t) ? t->storage->device.index : -1;
}
#endif

/* A new tensor of dtype rd and shape (nd, shape) holding the elements of the float64
 * buffer buf from element off on (buf's device). */
static ops_tensor *
loss_from_buffer(const char *op, const ops_tensor *buf, int64_t off, int nd, const int64_t *shape, ops_dtype rd)
{
    int64_t strides[OPS_MAX_DIMS];
    ops_contiguous_strides(nd, shape, strides);
    ops_tensor v = ops_borrowed_view(buf, nd, shape, strides, buf->offset + off);
    return loss_copy(op, &v, nd, shape, rd);
}

/* A new 0-dim tensor of dtype rd on the device of like holding v. */
static ops_tensor *
loss_scalar(const char *op, const ops_tensor *like, double v, ops_dtype rd)
{
    ops_tensor *h = ops_tensor_new(op, 0, NULL, NULL, OPS_FLOAT64, OPS_DEVICE_CPU), *r = NULL;
    if (h == NULL)
        return NULL;
    *(double *)ops_tensor_data_ptr(h) = v;
    if ((r = ops_tensor_new(op, 0, NULL, NULL, rd, ops_tensor_device(like))) != NULL &&
        ops_copy_values(op, r, h) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
    ops_tensor_release(h);
    return r;
}

/* *s = the sum of the n doubles of buf from element off on. */
static ops_status
loss_sum(const char *op, const ops_tensor *buf, int64_t off, int64_t n, double *s)
{
    const double *l = loss_data(buf) + off;
#ifdef OPS_WITH_CUDA
    if (loss_cuda(buf) >= 0)
        return ops_nn_cuda_sum(op, loss_cuda(buf), l, n, s);
#else
    (void)op;
#endif
    double acc = 0;
    for (int64_t i = 0; i < n; i++)
        acc += l[i];
    *s = acc;
    return OPS_OK;
}

/* The per-element losses (n doubles of buf from element off on, shape (nd, shape))
 * reduced: the elements themselves (none), their sum, or their sum over denom (mean;
 * denom is the count of elements, or the total weight for nll_loss).  A new tensor of
 * dtype rd on buf's device. */
static ops_tensor *
loss_reduce(const char *op, int64_t reduction, int nd, const int64_t *shape, const ops_tensor *buf, int64_t off,
            int64_t n, double denom, ops_dtype rd)
{
    if (reduction == LOSS_NONE)
        return loss_from_buffer(op, buf, off, nd, shape, rd);
    double s;
    if (loss_sum(op, buf, off, n, &s) != OPS_OK)
        return NULL;
    if (reduction == LOSS_MEAN)
        s /= denom;
    return loss_scalar(op, buf, s, rd);
}

/* The last step: r (a new reference or NULL) into out, or handed to the caller. */
static ops_status
loss_finish(const char *op, ops_tensor *r, ops_tensor *out, ops_tensor **result)
{
    if (out != NULL)
        return ops_write_out(op, r, out);
    if (r == NULL)
        return ops_last_status();
    *result = r;
    return OPS_OK;
}

/* ---- pointwise losses: mse, l1, smooth_l1, huber ---------------------------------- */

typedef enum { PW_MSE, PW_L1, PW_SMOOTH_L1, PW_HUBER } pw_kind;

static ops_status
pointwise_loss(const char *op, pw_kind kind, const ops_tensor *self, const ops_tensor *target, int64_t reduction,
               double param, ops_tensor *out, ops_tensor **result)
{
    ops_status st;
    ops_dtype rd = OPS_FLOAT32;
    const ops_tensor *ts[2] = {self, target};
    if ((st = loss_dtype(op, 2, ts, &rd)) != OPS_OK || (st = loss_check_reduction(op, reduction)) != OPS_OK)
        return st;
    if (kind == PW_SMOOTH_L1 && param < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: smooth_l1_loss does not support negative values for beta.", op);
    if (kind == PW_HUBER && !(param > 0))
        return ops_fail(OPS_ERR_VALUE, "%s: huber_loss does not support non-positive values for delta.", op);
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if ((st = ops_broadcast_shapes(op, "tensor a", self->ndim, self->sizes, "tensor b", target->ndim, target->sizes, &nd,
                                   shape)) != OPS_OK)
        return st;
    ops_tensor *a = NULL, *b = NULL, *r = NULL;
    if ((a = loss_copy(op, self, nd, shape, OPS_FLOAT64)) == NULL ||
        (b = loss_copy(op, target, nd, shape, OPS_FLOAT64)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    const int64_t n = ops_shape_numel(nd, shape);
    double *x = loss_data(a); /* the losses, into a's buffer */
    const double *y = loss_data(b);
    const int k = kind == PW_MSE ? OPS_NN_PW_MSE : kind == PW_L1 ? OPS_NN_PW_L1
                  : kind == PW_SMOOTH_L1 ? OPS_NN_PW_SMOOTH_L1 : OPS_NN_PW_HUBER;
#ifdef OPS_WITH_CUDA
    if (loss_cuda(a) >= 0) {
        if ((st = ops_nn_cuda_pointwise_loss(op, loss_cuda(a), k, x, y, n, param)) != OPS_OK)
            goto done;
    } else
#endif
    for (int64_t i = 0; i < n; i++)
        x[i] = ops_nn_pointwise_loss(k, x[i], y[i], param);
    r = loss_reduce(op, reduction, nd, shape, a, 0, n, (double)n, rd);
    st = loss_finish(op, r, out, result);
done:
    ops_tensor_release(a);
    ops_tensor_release(b);
    return st;
}

ops_tensor *
mse_loss_cpu(const ops_tensor *self, const ops_tensor *target, int64_t reduction)
{
    ops_tensor *r = NULL;
    pointwise_loss("mse_loss", PW_MSE, self, target, reduction, 0, NULL, &r);
    return r;
}

ops_status
mse_loss_out_cpu(const ops_tensor *self, const ops_tensor *target, int64_t reduction, ops_tensor *out)
{
    return pointwise_loss("mse_loss", PW_MSE, self, target, reduction, 0, out, NULL);
}

ops_tensor *
l1_loss_cpu(const ops_tensor *self, const ops_tensor *target, int64_t reduction)
{
    ops_tensor *r = NULL;
    pointwise_loss("l1_loss", PW_L1, self, target, reduction, 0, NULL, &r);
    return r;
}

ops_tensor *
smooth_l1_loss_cpu(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double beta)
{
    ops_tensor *r = NULL;
    pointwise_loss("smooth_l1_loss", PW_SMOOTH_L1, self, target, reduction, beta, NULL, &r);
    return r;
}

ops_status
smooth_l1_loss_out_cpu(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double beta,
                       ops_tensor *out)
{
    return pointwise_loss("smooth_l1_loss", PW_SMOOTH_L1, self, target, reduction, beta, out, NULL);
}

ops_tensor *
huber_loss_cpu(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double delta)
{
    ops_tensor *r = NULL;
    pointwise_loss("huber_loss", PW_HUBER, self, target, reduction, delta, NULL, &r);
    return r;
}

ops_status
huber_loss_out_cpu(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double delta,
                   ops_tensor *out)
{
    return pointwise_loss("huber_loss", PW_HUBER, self, target, reduction, delta, out, NULL);
}

/* ---- binary cross entropy ------------------------------------------------------------ */

/* PyTorch's CPU kernel: target and input of one shape (weight broadcast to it),
 * input in [0, 1], each log clamped at -100 so that 0 and 1 give finite losses. */
static ops_status
bce_impl(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
         ops_tensor *out, ops_tensor **result)
{
    const char *op = "binary_cross_entropy";
    ops_status st;
    ops_dtype rd = OPS_FLOAT32;
    const ops_tensor *ts[3] = {self, target, weight};
    if ((st = loss_dtype(op, 3, ts, &rd)) != OPS_OK || (st = loss_check_reduction(op, reduction)) != OPS_OK)
        return st;
    if (self->ndim != target->ndim ||
        memcmp(self->sizes, target->sizes, (size_t)self->ndim * sizeof(int64_t)) != 0) {
        char a[OPS_SHAPE_STR_LEN], b[OPS_SHAPE_STR_LEN];
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Using a target size (%s) that is different to the input size (%s) is deprecated. "
                        "Please ensure they have the same size.",
                        op, ops_shape_str(target->ndim, target->sizes, a, sizeof a),
                        ops_shape_str(self->ndim, self->sizes, b, sizeof b));
    }
    const int nd = self->ndim;
    const int64_t *shape = self->sizes;
    ops_tensor *a = NULL, *b = NULL, *w = NULL, *r = NULL;
    if ((a = loss_copy(op, self, nd, shape, OPS_FLOAT64)) == NULL ||
        (b = loss_copy(op, target, nd, shape, OPS_FLOAT64)) == NULL ||
        (weight != NULL && (w = loss_copy(op, weight, nd, shape, OPS_FLOAT64)) == NULL)) {
        st = ops_last_status();
        goto done;
    }
    const int64_t n = ops_shape_numel(nd, shape);
    double *x = loss_data(a);
    const double *y = loss_data(b), *wd = loss_data(w);
    bool bad = false;
#ifdef OPS_WITH_CUDA
    if (loss_cuda(a) >= 0) {
        if ((st = ops_nn_cuda_bce(op, loss_cuda(a), x, y, wd, n, &bad)) != OPS_OK)
            goto done;
    } else
#endif
    {
        for (int64_t i = 0; i < n && !bad; i++)
            bad = !(x[i] >= 0 && x[i] <= 1);
        for (int64_t i = 0; i < n && !bad; i++)
            x[i] = ops_nn_bce(x[i], y[i]) * (wd != NULL ? wd[i] : 1.0);
    }
    if (bad) {
        st = ops_fail(OPS_ERR_VALUE, "%s: all elements of input should be between 0 and 1", op);
        goto done;
    }
    r = loss_reduce(op, reduction, nd, shape, a, 0, n, (double)n, rd);
    st = loss_finish(op, r, out, result);
done:
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(w);
    return st;
}

ops_tensor *
binary_cross_entropy_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                         int64_t reduction)
{
    ops_tensor *r = NULL;
    bce_impl(self, target, weight, reduction, NULL, &r);
    return r;
}

ops_status
binary_cross_entropy_out_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                             int64_t reduction, ops_tensor *out)
{
    return bce_impl(self, target, weight, reduction, out, NULL);
}

/* PyTorch's composite: (1 - t) * x - (1 + (pos_weight - 1) * t) * log_sigmoid(x),
 * times weight.  As torch.nn.functional's: the target has the input's size, and
 * weight and pos_weight broadcast to it without growing it (PyTorch's in-place
 * composite refuses that; the gradients are summed back to the input's shape). */
ops_tensor *
binary_cross_entropy_with_logits_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                                     const ops_tensor *pos_weight, int64_t reduction)
{
    const char *op = "binary_cross_entropy_with_logits";
    ops_dtype rd = OPS_FLOAT32;
    const ops_tensor *ts[4] = {self, target, weight, pos_weight};
    if (loss_dtype(op, 4, ts, &rd) != OPS_OK || loss_check_reduction(op, reduction) != OPS_OK)
        return NULL;
    if (self->ndim != target->ndim ||
        memcmp(self->sizes, target->sizes, (size_t)self->ndim * sizeof(int64_t)) != 0) {
        char a[OPS_SHAPE_STR_LEN], b[OPS_SHAPE_STR_LEN];
        return ops_fail_null(OPS_ERR_SHAPE, "%s: Target size (%s) must be the same as input size (%s)", op,
                             ops_shape_str(target->ndim, target->sizes, a, sizeof a),
                             ops_shape_str(self->ndim, self->sizes, b, sizeof b));
    }
    /* loss_copy refuses a weight or pos_weight that would grow the shape */
    const int nd = self->ndim;
    const int64_t *shape = self->sizes;
    ops_tensor *c[4] = {NULL, NULL, NULL, NULL}, *r = NULL;
    for (int k = 0; k < 4; k++) {
        if (ts[k] != NULL && (c[k] = loss_copy(op, ts[k], nd, shape, OPS_FLOAT64)) == NULL)
            goto done;
    }
    const int64_t n = ops_shape_numel(nd, shape);
    double *x = loss_data(c[0]);
    const double *t = loss_data(c[1]), *w = loss_data(c[2]), *pw = loss_data(c[3]);
#ifdef OPS_WITH_CUDA
    if (loss_cuda(c[0]) >= 0) {
        if (ops_nn_cuda_bce_logits(op, loss_cuda(c[0]), x, t, w, pw, n) != OPS_OK)
            goto done;
    } else
#endif
    for (int64_t i = 0; i < n; i++)
        x[i] = ops_nn_bce_logits(x[i], t[i], pw != NULL ? 1 + (pw[i] - 1) * t[i] : 1.0) * (w != NULL ? w[i] : 1.0);
    r = loss_reduce(op, reduction, nd, shape, c[0], 0, n, (double)n, rd);
done:
    for (int k = 0; k < 4; k++)
        ops_tensor_release(c[k]);
    return r;
}

/* ---- nll_loss and cross_entropy ---------------------------------------------------- */

/* The geometry of a class-dim input: N batches of C classes of S positions (1-D
 * input: N = 1, no batch dim), and the target's shape (one index per (n, s)). */
typedef struct {
    int64_t N, C, S;
    int tnd;
    int64_t tshape[OPS_MAX_DIMS];
} cls_geom;

/* Which op's shape rules: nll_loss (1-D or 2-D self), nll_loss2d (4-D) or
 * nll_loss_nd (any). */
typedef enum { CLS_1D2D, CLS_2D, CLS_ND } cls_rules;

/* Checks target against self by the rules of one op and fills g. */
static ops_status
cls_geometry(const char *op, const ops_tensor *self, const ops_tensor *target, cls_rules rules, cls_geom *g)
{
    char a[OPS_SHAPE_STR_LEN], b[OPS_SHAPE_STR_LEN];
    if (rules == CLS_2D) {
        if (target->ndim != 3)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: only batches of spatial targets supported (3D tensors) but got targets of "
                            "dimension: %d",
                            op, (int)target->ndim);
        if (self->ndim != 4)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: only batches of spatial inputs supported (4D tensors), but got input of dimension: %d",
                            op, (int)self->ndim);
        if (self->sizes[0] != target->sizes[0] || self->sizes[2] != target->sizes[1] ||
            self->sizes[3] != target->sizes[2])
            return ops_fail(OPS_ERR_SHAPE, "%s: size mismatch (got input: %s , target: %s", op,
                            ops_shape_str(self->ndim, self->sizes, a, sizeof a),
                            ops_shape_str(target->ndim, target->sizes, b, sizeof b));
    } else if (rules == CLS_1D2D) {
        if (self->ndim < 1 || self->ndim > 2)
            return ops_fail(OPS_ERR_SHAPE, "%s: input tensor should be 1D or 2D", op);
        if (target->ndim > 1)
            return ops_fail(OPS_ERR_SHAPE, "%s: 0D or 1D target tensor expected, multi-target not supported", op);
        /* A 1-D input is one sample of C classes: its target is 0-dim.  (PyTorch also
         * lets a 1-D target of C entries through and reads only its first; the
         * computation below has one target position for a 1-D input, so it must not.) */
        const bool no_batch = self->ndim == 1 && target->ndim == 0;
        if (!no_batch && (target->ndim == 0 || self->ndim == 1 || self->sizes[0] != target->sizes[0]))
            return ops_fail(OPS_ERR_SHAPE, "%s: size mismatch (got input: %s, target: %s)", op,
                            ops_shape_str(self->ndim, self->sizes, a, sizeof a),
                            ops_shape_str(target->ndim, target->sizes, b, sizeof b));
    } else {
        if (self->ndim < 1)
            return ops_fail(OPS_ERR_SHAPE, "%s: Expected 1 or more dimensions (got %d)", op, (int)self->ndim);
        if (self->ndim == 1) {
            if (target->ndim != 0)
                return ops_fail(OPS_ERR_SHAPE, "%s: size mismatch (got input: %s, target: %s)", op,
                                ops_shape_str(self->ndim, self->sizes, a, sizeof a),
                                ops_shape_str(target->ndim, target->sizes, b, sizeof b));
        } else {
            if (target->ndim < 1 || self->sizes[0] != target->sizes[0])
                return ops_fail(OPS_ERR_SHAPE, "%s: Expected input batch_size (%" PRId64
                                ") to match target batch_size (%" PRId64 ").",
                                op, self->sizes[0], target->ndim < 1 ? (int64_t)0 : target->sizes[0]);
            bool ok = target->ndim == self->ndim - 1;
            for (int d = 2; ok && d < self->ndim; d++)
                ok = target->sizes[d - 1] == self->sizes[d];
            if (!ok) {
                int64_t want[OPS_MAX_DIMS];
                want[0] = self->sizes[0];
                for (int d = 2; d < self->ndim; d++)
                    want[d - 1] = self->sizes[d];
                return ops_fail(OPS_ERR_SHAPE, "%s: Expected target size %s, got %s", op,
                                ops_shape_str(self->ndim - 1, want, a, sizeof a),
                                ops_shape_str(target->ndim, target->sizes, b, sizeof b));
            }
        }
    }
    if (target->dtype != OPS_INT64 && target->dtype != OPS_UINT8)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected target of dtype int64 (or uint8), but got %s", op,
                        ops_dtype_name(target->dtype));
    g->N = self->ndim == 1 ? 1 : self->sizes[0];
    g->C = self->ndim == 1 ? self->sizes[0] : self->sizes[1];
    g->S = 1;
    for (int d = 2; d < self->ndim; d++)
        g->S *= self->sizes[d];
    g->tnd = target->ndim;
    memcpy(g->tshape, target->sizes, (size_t)target->ndim * sizeof(int64_t));
    return OPS_OK;
}

static ops_status
cls_check_weight(const char *op, const ops_tensor *weight, int64_t C)
{
    if (weight != NULL && (weight->ndim != 1 || weight->sizes[0] != C)) {
        char a[OPS_SHAPE_STR_LEN];
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: weight tensor should be defined either for all %" PRId64
                        " classes or no classes but got weight tensor of shape: %s",
                        op, C, ops_shape_str(weight->ndim, weight->sizes, a, sizeof a));
    }
    return OPS_OK;
}

/* The nll terms of the log-probabilities in x (N x C x S doubles) for the targets in
 * t (int64): l[off + i] = -w[t] lp[n, t, s] for each target position i = n * S + s
 * (0 where t is ignore_index), l being the doubles of lt, and the total weight of the
 * targets that count.  Fails on the first target outside [0, C) before anything is
 * computed (on CUDA a checking kernel finds it). */
static ops_status
cls_nll(const char *op, const cls_geom *g, const ops_tensor *x, const ops_tensor *t, const ops_tensor *w,
        int64_t ignore_index, const ops_tensor *lt, double *total_weight)
{
    const int64_t nt = g->N * g->S, *tgt = (const int64_t *)ops_tensor_data_ptr(t);
    const double *lp = loss_data(x), *wd = loss_data(w);
    double *l = loss_data(lt);
    bool bad = false;
    int64_t bad_t = 0;
    ops_status st = OPS_OK;
#ifdef OPS_WITH_CUDA
    const int dev = loss_cuda(x);
    if (dev >= 0) {
        if ((st = ops_nn_cuda_first_out_of_range_skip(op, dev, tgt, nt, g->C, ignore_index, &bad, &bad_t)) != OPS_OK)
            return st;
        if (bad)
            return ops_fail(OPS_ERR_INDEX, "%s: Target %" PRId64 " is out of bounds.", op, bad_t);
        /* the targets' weights into a scratch buffer, summed there */
        ops_tensor *wt = ops_tensor_new(op, 1, &nt, NULL, OPS_FLOAT64, ops_tensor_device(x));
        if (wt == NULL)
            return ops_last_status();
        if ((st = ops_nn_cuda_nll(op, dev, g->N, g->C, g->S, lp, tgt, wd, ignore_index, l, loss_data(wt))) == OPS_OK)
            st = loss_sum(op, wt, 0, nt, total_weight);
        ops_tensor_release(wt);
        return st;
    }
#endif
    for (int64_t i = 0; i < nt && !bad; i++) {
        bad = tgt[i] != ignore_index && (tgt[i] < 0 || tgt[i] >= g->C);
        bad_t = tgt[i];
    }
    if (bad)
        return ops_fail(OPS_ERR_INDEX, "%s: Target %" PRId64 " is out of bounds.", op, bad_t);
    double tw = 0;
    for (int64_t i = 0; i < nt; i++) {
        double wt;
        l[i] = ops_nn_nll_term(lp + (i / g->S) * g->C * g->S + i % g->S, tgt[i], wd, g->S, ignore_index, &wt);
        tw += wt;
    }
    *total_weight = tw;
    return st;
}

/* In place: x (N x C x S doubles) becomes log_softmax over C. */
static ops_status
cls_log_softmax(const char *op, const cls_geom *g, const ops_tensor *x)
{
    double *p = loss_data(x);
#ifdef OPS_WITH_CUDA
    if (loss_cuda(x) >= 0)
        return ops_nn_cuda_log_softmax(op, loss_cuda(x), g->N, g->C, g->S, p);
#else
    (void)op;
#endif
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t s = 0; s < g->S; s++)
            ops_nn_log_softmax_pos(p + n * g->C * g->S + s, g->C, g->S);
    return OPS_OK;
}

/* nll_loss, nll_loss2d and nll_loss_nd (rules tells which). */
static ops_status
nll_impl(const char *op, cls_rules rules, const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
         int64_t reduction, int64_t ignore_index, ops_tensor *out, ops_tensor **result)
{
    ops_status st;
    ops_dtype rd = OPS_FLOAT32;
    cls_geom g;
    const ops_tensor *ts[2] = {self, weight};
    if ((st = loss_dtype(op, 2, ts, &rd)) != OPS_OK || (st = loss_check_reduction(op, reduction)) != OPS_OK ||
        (st = cls_geometry(op, self, target, rules, &g)) != OPS_OK || (st = cls_check_weight(op, weight, g.C)) != OPS_OK)
        return st;
    const int64_t nt = g.N * g.S; /* target positions */
    ops_tensor *x = NULL, *t = NULL, *w = NULL, *lt = NULL, *r = NULL;
    if ((x = loss_copy(op, self, self->ndim, self->sizes, OPS_FLOAT64)) == NULL ||
        (t = loss_copy(op, target, target->ndim, target->sizes, OPS_INT64)) == NULL ||
        (weight != NULL && (w = loss_copy(op, weight, 1, weight->sizes, OPS_FLOAT64)) == NULL) ||
        (lt = ops_tensor_new(op, 1, &nt, NULL, OPS_FLOAT64, ops_tensor_device(self))) == NULL) {
        st = ops_last_status();
        goto done;
    }
    double tw;
    if ((st = cls_nll(op, &g, x, t, w, ignore_index, lt, &tw)) != OPS_OK)
        goto done;
    r = loss_reduce(op, reduction, g.tnd, g.tshape, lt, 0, nt, tw, rd);
    st = loss_finish(op, r, out, result);
done:
    ops_tensor_release(lt);
    ops_tensor_release(x);
    ops_tensor_release(t);
    ops_tensor_release(w);
    return st;
}

ops_tensor *
nll_loss_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
             int64_t ignore_index)
{
    ops_tensor *r = NULL;
    nll_impl("nll_loss", CLS_1D2D, self, target, weight, reduction, ignore_index, NULL, &r);
    return r;
}

ops_status
nll_loss_out_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                 int64_t ignore_index, ops_tensor *out)
{
    return nll_impl("nll_loss", CLS_1D2D, self, target, weight, reduction, ignore_index, out, NULL);
}

ops_tensor *
nll_loss2d_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
               int64_t ignore_index)
{
    ops_tensor *r = NULL;
    nll_impl("nll_loss2d", CLS_2D, self, target, weight, reduction, ignore_index, NULL, &r);
    return r;
}

ops_status
nll_loss2d_out_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                   int64_t ignore_index, ops_tensor *out)
{
    return nll_impl("nll_loss2d", CLS_2D, self, target, weight, reduction, ignore_index, out, NULL);
}

ops_tensor *
nll_loss_nd_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
                int64_t ignore_index)
{
    ops_tensor *r = NULL;
    nll_impl("nll_loss_nd", CLS_ND, self, target, weight, reduction, ignore_index, NULL, &r);
    return r;
}

/* cross_entropy with class-index targets t: nll of the log-probabilities x, mixed
 * with the label-smoothing term -sum_c w[c] lp[c] (0 at ignored targets) as PyTorch
 * does. */
static ops_tensor *
ce_index(const char *op, const cls_geom *g, const ops_tensor *x, const ops_tensor *t, const ops_tensor *w,
         int64_t reduction, int64_t ignore_index, double ls, ops_dtype rd)
{
    const int64_t nt = g->N * g->S;
    /* the nll terms, then the smoothing terms */
    ops_tensor *r = NULL, *lt = ops_tensor_new(op, 1, (int64_t[]){2 * nt}, NULL, OPS_FLOAT64, ops_tensor_device(x));
    if (lt == NULL)
        return NULL;
    double *nll = loss_data(lt), *smooth = nll + nt, tw;
    const double *lp = loss_data(x), *wd = loss_data(w);
    const int64_t *tgt = (const int64_t *)ops_tensor_data_ptr(t);
    if (cls_nll(op, g, x, t, w, ignore_index, lt, &tw) != OPS_OK)
        goto done;
    if (ls <= 0) {
        r = loss_reduce(op, reduction, g->tnd, g->tshape, lt, 0, nt, tw, rd);
        goto done;
    }
    /* the smoothing terms' mean divides by the weights of the targets that count (by
     * their number without weights): tw again */
    const double k = ls / (double)g->C;
#ifdef OPS_WITH_CUDA
    const int dev = loss_cuda(x);
    if (dev >= 0) {
        if (ops_nn_cuda_ce_smooth(op, dev, g->N, g->C, g->S, lp, tgt, wd, ignore_index, smooth) != OPS_OK ||
            (reduction == LOSS_NONE && ops_nn_cuda_axpby(op, dev, nll, smooth, nt, 1 - ls, k) != OPS_OK))
            goto done;
    } else
#endif
    {
        for (int64_t i = 0; i < nt; i++)
            smooth[i] = tgt[i] == ignore_index
                            ? 0
                            : ops_nn_ce_smooth_term(lp + (i / g->S) * g->C * g->S + i % g->S, wd, g->C, g->S);
        if (reduction == LOSS_NONE)
            for (int64_t i = 0; i < nt; i++)
                nll[i] = (1 - ls) * nll[i] + k * smooth[i];
    }
    if (reduction == LOSS_NONE) {
        r = loss_from_buffer(op, lt, 0, g->tnd, g->tshape, rd);
    } else {
        double nsum, ssum;
        if (loss_sum(op, lt, 0, nt, &nsum) != OPS_OK || loss_sum(op, lt, nt, nt, &ssum) != OPS_OK)
            goto done;
        const double v = reduction == LOSS_MEAN ? (1 - ls) * (nsum / tw) + k * (ssum / tw) : (1 - ls) * nsum + k * ssum;
        r = loss_scalar(op, lt, v, rd);
    }
done:
    ops_tensor_release(lt);
    return r;
}

/* cross_entropy with class-probability targets tp (of self's shape):
 * -sum_c w[c] target'[c] lp[c], target' smoothed towards 1/C; the mean divides by
 * the number of positions N * S. */
static ops_tensor *
ce_prob(const char *op, const cls_geom *g, const ops_tensor *x, const ops_tensor *tp, const ops_tensor *w,
        int64_t reduction, double ls, ops_dtype rd)
{
    const int64_t nt = g->N * g->S;
    ops_tensor *r = NULL, *lt = ops_tensor_new(op, 1, &nt, NULL, OPS_FLOAT64, ops_tensor_device(x));
    if (lt == NULL)
        return NULL;
    double *l = loss_data(lt);
    const double *lp = loss_data(x), *t = loss_data(tp), *wd = loss_data(w);
    ops_status st = OPS_OK;
#ifdef OPS_WITH_CUDA
    if (loss_cuda(x) >= 0)
        st = ops_nn_cuda_ce_prob(op, loss_cuda(x), g->N, g->C, g->S, lp, t, wd, ls, l);
    else
#endif
    for (int64_t i = 0; i < nt; i++) {
        const int64_t base = (i / g->S) * g->C * g->S + i % g->S;
        l[i] = ops_nn_ce_prob_term(lp + base, t + base, wd, g->C, g->S, ls);
    }
    if (st == OPS_OK)
        r = loss_reduce(op, reduction, g->tnd, g->tshape, lt, 0, nt, (double)nt, rd);
    ops_tensor_release(lt);
    return r;
}

ops_tensor *
cross_entropy_loss_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                       int64_t reduction, int64_t ignore_index, double label_smoothing)
{
    const char *op = "cross_entropy_loss";
    ops_dtype rd = OPS_FLOAT32;
    cls_geom g;
    const ops_tensor *ts[2] = {self, weight};
    if (loss_dtype(op, 2, ts, &rd) != OPS_OK || loss_check_reduction(op, reduction) != OPS_OK)
        return NULL;
    if (!(label_smoothing >= 0 && label_smoothing <= 1))
        return ops_fail_null(OPS_ERR_VALUE, "%s: label_smoothing must be between 0.0 and 1.0. Got: %g", op,
                             label_smoothing);
    const bool prob = self->ndim == target->ndim &&
                      memcmp(self->sizes, target->sizes, (size_t)self->ndim * sizeof(int64_t)) == 0;
    if (prob) {
        if (self->ndim < 1)
            return ops_fail_null(OPS_ERR_SHAPE, "%s: Expected 1 or more dimensions (got 0)", op);
        if (!ops_dtype_is_floating(target->dtype))
            return ops_fail_null(OPS_ERR_DTYPE,
                                 "%s: Expected floating point type for target with class probabilities, got %s", op,
                                 ops_dtype_name(target->dtype));
        if (ignore_index >= 0)
            return ops_fail_null(OPS_ERR_VALUE, "%s: ignore_index is not supported for floating point target", op);
        g.N = self->ndim == 1 ? 1 : self->sizes[0];
        g.C = self->ndim == 1 ? self->sizes[0] : self->sizes[1];
        g.S = 1;
        for (int d = 2; d < self->ndim; d++)
            g.S *= self->sizes[d];
        /* the unreduced loss has self's shape without the class dim */
        g.tnd = self->ndim - 1;
        if (self->ndim >= 2) {
            g.tshape[0] = self->sizes[0];
            for (int d = 2; d < self->ndim; d++)
                g.tshape[d - 1] = self->sizes[d];
        }
    } else if (cls_geometry(op, self, target, CLS_ND, &g) != OPS_OK) {
        return NULL;
    }
    if (cls_check_weight(op, weight, g.C) != OPS_OK)
        return NULL;
    ops_tensor *x = NULL, *t = NULL, *w = NULL, *r = NULL;
    if ((x = loss_copy(op, self, self->ndim, self->sizes, OPS_FLOAT64)) == NULL ||
        (t = loss_copy(op, target, target->ndim, target->sizes, prob ? OPS_FLOAT64 : OPS_INT64)) == NULL ||
        (weight != NULL && (w = loss_copy(op, weight, 1, weight->sizes, OPS_FLOAT64)) == NULL))
        goto done;
    if (cls_log_softmax(op, &g, x) != OPS_OK)
        goto done;
    if (prob)
        r = ce_prob(op, &g, x, t, w, reduction, label_smoothing, rd);
    else
        r = ce_index(op, &g, x, t, w, reduction, ignore_index, label_smoothing, rd);
done:
    ops_tensor_release(x);
    ops_tensor_release(t);
    ops_tensor_release(w);
    return r;
}

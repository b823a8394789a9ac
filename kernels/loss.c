/* Loss functions, the drivers of every device (the schema's `CPU, CUDA: loss_*`):
 * mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
 * binary_cross_entropy_with_logits, nll_loss, nll_loss2d, nll_loss_nd and
 * cross_entropy_loss, functional and out= forms from one driver each.
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
 * The float64 buffers live on the operands' device; the terms and sums are the
 * stubs of kernels/loss.h (the CPU loops in kernels/cpu/loss.c, the CUDA kernels in
 * kernels/cuda/loss.cu, over the formulas of kernels/nn_common.h), and target indices
 * are checked through nn_first_bad_index before anything is written.  `reduction` is
 * handled once, here, for every loss: its check, the mean's denominator and the
 * unreduced shape. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/loss.h"
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
 * and one of the entry's declared dtypes (`dtypes:`, mask OPS_DTYPE_MASK_<ENTRY>) over
 * the same operands as its `of:`.  The generated glue has refused the others before the
 * kernel runs; this guards a direct call. */
static ops_status
loss_dtype(const char *op, unsigned declared, int n, const ops_tensor *const *ts, ops_dtype *rd)
{
    ops_dtype dt = OPS_DTYPE_NONE;
    for (int i = 0; i < n; i++) {
        if (ts[i] == NULL)
            continue;
        dt = dt == OPS_DTYPE_NONE ? ts[i]->dtype : ops_promote_types(dt, ts[i]->dtype);
    }
    if (!(declared & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(op, dt, declared);
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
loss_sum_of(const char *op, const ops_tensor *buf, int64_t off, int64_t n, double *s)
{
    const ops_device dev = ops_tensor_device(buf);
    return OPS_STUB_CALL(loss_sum, dev, op, buf, off, n, s);
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
    if (loss_sum_of(op, buf, off, n, &s) != OPS_OK)
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
pointwise_loss(const char *op, unsigned declared, pw_kind kind, const ops_tensor *self, const ops_tensor *target,
               int64_t reduction, double param, ops_tensor *out, ops_tensor **result)
{
    ops_status st;
    ops_dtype rd = OPS_FLOAT32;
    const ops_tensor *ts[2] = {self, target};
    if ((st = loss_dtype(op, declared, 2, ts, &rd)) != OPS_OK || (st = loss_check_reduction(op, reduction)) != OPS_OK)
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
    const ops_device dev = ops_tensor_device(a);
    const int k = kind == PW_MSE ? OPS_NN_PW_MSE : kind == PW_L1 ? OPS_NN_PW_L1
                  : kind == PW_SMOOTH_L1 ? OPS_NN_PW_SMOOTH_L1 : OPS_NN_PW_HUBER;
    /* the losses, into a's buffer */
    if ((st = OPS_STUB_CALL(loss_pointwise_terms, dev, op, k, a, b, param)) != OPS_OK)
        goto done;
    r = loss_reduce(op, reduction, nd, shape, a, 0, n, (double)n, rd);
    st = loss_finish(op, r, out, result);
done:
    ops_tensor_release(a);
    ops_tensor_release(b);
    return st;
}

ops_tensor *
loss_mse(const ops_tensor *self, const ops_tensor *target, int64_t reduction)
{
    ops_tensor *r = NULL;
    pointwise_loss("mse_loss", OPS_DTYPE_MASK_MSE_LOSS, PW_MSE, self, target, reduction, 0, NULL, &r);
    return r;
}

ops_status
loss_mse_out(const ops_tensor *self, const ops_tensor *target, int64_t reduction, ops_tensor *out)
{
    return pointwise_loss("mse_loss", OPS_DTYPE_MASK_MSE_LOSS_OUT, PW_MSE, self, target, reduction, 0, out, NULL);
}

ops_tensor *
loss_l1(const ops_tensor *self, const ops_tensor *target, int64_t reduction)
{
    ops_tensor *r = NULL;
    pointwise_loss("l1_loss", OPS_DTYPE_MASK_L1_LOSS, PW_L1, self, target, reduction, 0, NULL, &r);
    return r;
}

ops_tensor *
loss_smooth_l1(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double beta)
{
    ops_tensor *r = NULL;
    pointwise_loss("smooth_l1_loss", OPS_DTYPE_MASK_SMOOTH_L1_LOSS, PW_SMOOTH_L1, self, target, reduction, beta, NULL,
                   &r);
    return r;
}

ops_status
loss_smooth_l1_out(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double beta,
                   ops_tensor *out)
{
    return pointwise_loss("smooth_l1_loss", OPS_DTYPE_MASK_SMOOTH_L1_LOSS_OUT, PW_SMOOTH_L1, self, target, reduction,
                          beta, out, NULL);
}

ops_tensor *
loss_huber(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double delta)
{
    ops_tensor *r = NULL;
    pointwise_loss("huber_loss", OPS_DTYPE_MASK_HUBER_LOSS, PW_HUBER, self, target, reduction, delta, NULL, &r);
    return r;
}

ops_status
loss_huber_out(const ops_tensor *self, const ops_tensor *target, int64_t reduction, double delta,
               ops_tensor *out)
{
    return pointwise_loss("huber_loss", OPS_DTYPE_MASK_HUBER_LOSS_OUT, PW_HUBER, self, target, reduction, delta, out,
                          NULL);
}

/* ---- binary cross entropy ------------------------------------------------------------ */

/* PyTorch's CPU kernel: target and input of one shape (weight broadcast to it),
 * input in [0, 1], each log clamped at -100 so that 0 and 1 give finite losses. */
static ops_status
bce_impl(unsigned declared, const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
         int64_t reduction, ops_tensor *out, ops_tensor **result)
{
    const char *op = "binary_cross_entropy";
    ops_status st;
    ops_dtype rd = OPS_FLOAT32;
    const ops_tensor *ts[3] = {self, target, weight};
    if ((st = loss_dtype(op, declared, 3, ts, &rd)) != OPS_OK || (st = loss_check_reduction(op, reduction)) != OPS_OK)
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
    const ops_device dev = ops_tensor_device(a);
    bool bad = false;
    if ((st = OPS_STUB_CALL(loss_bce_terms, dev, op, a, b, w, &bad)) != OPS_OK)
        goto done;
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
loss_binary_cross_entropy(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                          int64_t reduction)
{
    ops_tensor *r = NULL;
    bce_impl(OPS_DTYPE_MASK_BINARY_CROSS_ENTROPY, self, target, weight, reduction, NULL, &r);
    return r;
}

ops_status
loss_binary_cross_entropy_out(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                              int64_t reduction, ops_tensor *out)
{
    return bce_impl(OPS_DTYPE_MASK_BINARY_CROSS_ENTROPY_OUT, self, target, weight, reduction, out, NULL);
}

/* PyTorch's composite: (1 - t) * x - (1 + (pos_weight - 1) * t) * log_sigmoid(x),
 * times weight.  As torch.nn.functional's: the target has the input's size, and
 * weight and pos_weight broadcast to it without growing it (PyTorch's in-place
 * composite refuses that; the gradients are summed back to the input's shape). */
ops_tensor *
loss_binary_cross_entropy_with_logits(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                                      const ops_tensor *pos_weight, int64_t reduction)
{
    const char *op = "binary_cross_entropy_with_logits";
    ops_dtype rd = OPS_FLOAT32;
    const ops_tensor *ts[4] = {self, target, weight, pos_weight};
    if (loss_dtype(op, OPS_DTYPE_MASK_BINARY_CROSS_ENTROPY_WITH_LOGITS, 4, ts, &rd) != OPS_OK ||
        loss_check_reduction(op, reduction) != OPS_OK)
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
    const ops_device dev = ops_tensor_device(c[0]);
    if (OPS_STUB_CALL(loss_bce_logits_terms, dev, op, c[0], c[1], c[2], c[3]) != OPS_OK)
        goto done;
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
 * t (int64): the first N * S doubles of lt, and the total weight of the targets that
 * count (kernels/loss.h).  Fails on the first target outside [0, C) other than
 * ignore_index before anything is computed. */
static ops_status
cls_nll(const char *op, const cls_geom *g, const ops_tensor *x, const ops_tensor *t, const ops_tensor *w,
        int64_t ignore_index, ops_tensor *lt, double *total_weight)
{
    const ops_device dev = ops_tensor_device(x);
    bool bad = false;
    int64_t bad_t = 0;
    ops_status st = OPS_STUB_CALL(nn_first_bad_index, dev, op, t, g->C, true, ignore_index, &bad, &bad_t);
    if (st != OPS_OK)
        return st;
    if (bad)
        return ops_fail(OPS_ERR_INDEX, "%s: Target %" PRId64 " is out of bounds.", op, bad_t);
    return OPS_STUB_CALL(loss_nll_terms, dev, op, g->N, g->C, g->S, x, t, w, ignore_index, lt, total_weight);
}

/* In place: x (N x C x S doubles) becomes log_softmax over C. */
static ops_status
cls_log_softmax(const char *op, const cls_geom *g, ops_tensor *x)
{
    const ops_device dev = ops_tensor_device(x);
    return OPS_STUB_CALL(loss_log_softmax, dev, op, g->N, g->C, g->S, x);
}

/* nll_loss, nll_loss2d and nll_loss_nd (rules tells which). */
static ops_status
nll_impl(const char *op, unsigned declared, cls_rules rules, const ops_tensor *self, const ops_tensor *target,
         const ops_tensor *weight, int64_t reduction, int64_t ignore_index, ops_tensor *out, ops_tensor **result)
{
    ops_status st;
    ops_dtype rd = OPS_FLOAT32;
    cls_geom g;
    const ops_tensor *ts[2] = {self, weight};
    if ((st = loss_dtype(op, declared, 2, ts, &rd)) != OPS_OK ||
        (st = loss_check_reduction(op, reduction)) != OPS_OK ||
        (st = cls_geometry(op, self, target, rules, &g)) != OPS_OK ||
        (st = cls_check_weight(op, weight, g.C)) != OPS_OK)
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
loss_nll(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
         int64_t ignore_index)
{
    ops_tensor *r = NULL;
    nll_impl("nll_loss", OPS_DTYPE_MASK_NLL_LOSS, CLS_1D2D, self, target, weight, reduction, ignore_index, NULL, &r);
    return r;
}

ops_status
loss_nll_out(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
             int64_t ignore_index, ops_tensor *out)
{
    return nll_impl("nll_loss", OPS_DTYPE_MASK_NLL_LOSS_OUT, CLS_1D2D, self, target, weight, reduction, ignore_index,
                    out, NULL);
}

ops_tensor *
loss_nll2d(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
           int64_t ignore_index)
{
    ops_tensor *r = NULL;
    nll_impl("nll_loss2d", OPS_DTYPE_MASK_NLL_LOSS2D, CLS_2D, self, target, weight, reduction, ignore_index, NULL, &r);
    return r;
}

ops_status
loss_nll2d_out(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
               int64_t ignore_index, ops_tensor *out)
{
    return nll_impl("nll_loss2d", OPS_DTYPE_MASK_NLL_LOSS2D_OUT, CLS_2D, self, target, weight, reduction, ignore_index,
                    out, NULL);
}

ops_tensor *
loss_nll_nd(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, int64_t reduction,
            int64_t ignore_index)
{
    ops_tensor *r = NULL;
    nll_impl("nll_loss_nd", OPS_DTYPE_MASK_NLL_LOSS_ND, CLS_ND, self, target, weight, reduction, ignore_index, NULL, &r);
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
    double tw;
    const ops_device dev = ops_tensor_device(x);
    if (cls_nll(op, g, x, t, w, ignore_index, lt, &tw) != OPS_OK)
        goto done;
    if (ls <= 0) {
        r = loss_reduce(op, reduction, g->tnd, g->tshape, lt, 0, nt, tw, rd);
        goto done;
    }
    /* the smoothing terms' mean divides by the weights of the targets that count (by
     * their number without weights): tw again */
    const double k = ls / (double)g->C;
    if (OPS_STUB_CALL(loss_ce_smooth_terms, dev, op, g->N, g->C, g->S, x, t, w, ignore_index, lt,
                      reduction == LOSS_NONE, 1 - ls, k) != OPS_OK)
        goto done;
    if (reduction == LOSS_NONE) {
        r = loss_from_buffer(op, lt, 0, g->tnd, g->tshape, rd);
    } else {
        double nsum, ssum;
        if (loss_sum_of(op, lt, 0, nt, &nsum) != OPS_OK || loss_sum_of(op, lt, nt, nt, &ssum) != OPS_OK)
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
    const ops_device dev = ops_tensor_device(x);
    if (OPS_STUB_CALL(loss_ce_prob_terms, dev, op, g->N, g->C, g->S, x, tp, w, ls, lt) == OPS_OK)
        r = loss_reduce(op, reduction, g->tnd, g->tshape, lt, 0, nt, (double)nt, rd);
    ops_tensor_release(lt);
    return r;
}

/* The fused path's label smoothing mixed in (lt in host memory: the fused loops are
 * the CPU's): lt holds the nll terms (its first N * S doubles) then the smoothing
 * terms -sum_c w[c] lp[c] (0 at ignored targets); the result is (1 - ls) nll + ls / C
 * smooth, each mean dividing by the weights of the targets that count (by their
 * number without weights): tw, as ce_index and PyTorch. */
static ops_tensor *
ce_mix(const char *op, const cls_geom *g, ops_tensor *lt, double tw, int64_t reduction, double ls, ops_dtype rd)
{
    const int64_t nt = g->N * g->S;
    const double k = ls / (double)g->C;
    if (reduction == LOSS_NONE) {
        double *l = ops_tensor_data_ptr(lt);
        for (int64_t i = 0; i < nt; i++)
            l[i] = (1 - ls) * l[i] + k * l[nt + i];
        return loss_from_buffer(op, lt, 0, g->tnd, g->tshape, rd);
    }
    double nsum, ssum;
    if (loss_sum_of(op, lt, 0, nt, &nsum) != OPS_OK || loss_sum_of(op, lt, nt, nt, &ssum) != OPS_OK)
        return NULL;
    const double v = reduction == LOSS_MEAN ? (1 - ls) * (nsum / tw) + k * (ssum / tw) : (1 - ls) * nsum + k * ssum;
    return loss_scalar(op, lt, v, rd);
}

/* cross_entropy fused (loss_ce_rows) for class-index targets, any label smoothing and
 * positions (N x C x S): the logits stay in self's dtype (a contiguous
 * copy only when self is not contiguous), no float64 copy, no log_softmax tensor. */
static ops_tensor *
ce_rows(const char *op, const cls_geom *g, const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
        int64_t reduction, int64_t ignore_index, double ls, ops_dtype rd)
{
    const ops_device dev = ops_tensor_device(self);
    const int64_t nt = g->N * g->S;
    const bool smooth = ls > 0;
    ops_tensor *x = NULL, *t = NULL, *w = NULL, *lt = NULL, *r = NULL;
    bool bad = false;
    int64_t bad_t = 0;
    double tw;
    if ((x = ops_tensor_is_contiguous(self) ? ops_tensor_retain(self)
                                            : loss_copy(op, self, self->ndim, self->sizes, self->dtype)) == NULL ||
        (t = loss_copy(op, target, target->ndim, target->sizes, OPS_INT64)) == NULL ||
        (weight != NULL && (w = loss_copy(op, weight, 1, weight->sizes, OPS_FLOAT64)) == NULL) ||
        (lt = ops_tensor_new(op, 1, (int64_t[]){smooth ? 2 * nt : nt}, NULL, OPS_FLOAT64, dev)) == NULL)
        goto done;
    if (OPS_STUB_CALL(nn_first_bad_index, dev, op, t, g->C, true, ignore_index, &bad, &bad_t) != OPS_OK)
        goto done;
    if (bad) {
        ops_fail(OPS_ERR_INDEX, "%s: Target %" PRId64 " is out of bounds.", op, bad_t);
        goto done;
    }
    if (OPS_STUB_CALL(loss_ce_rows, dev, op, g->N, g->C, g->S, x, t, w, ignore_index, smooth, lt, &tw) != OPS_OK)
        goto done;
    r = smooth ? ce_mix(op, g, lt, tw, reduction, ls, rd)
               : loss_reduce(op, reduction, g->tnd, g->tshape, lt, 0, nt, tw, rd);
done:
    ops_tensor_release(x);
    ops_tensor_release(t);
    ops_tensor_release(w);
    ops_tensor_release(lt);
    return r;
}

ops_tensor *
loss_cross_entropy(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight,
                   int64_t reduction, int64_t ignore_index, double label_smoothing)
{
    const char *op = "cross_entropy_loss";
    ops_dtype rd = OPS_FLOAT32;
    cls_geom g;
    const ops_tensor *ts[2] = {self, weight};
    if (loss_dtype(op, OPS_DTYPE_MASK_CROSS_ENTROPY_LOSS, 2, ts, &rd) != OPS_OK ||
        loss_check_reduction(op, reduction) != OPS_OK)
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
    if (!prob && rd == self->dtype && ops_dtype_is_floating(rd) &&
        OPS_STUB_GET(loss_ce_rows, ops_tensor_device(self)) != NULL)
        return ce_rows(op, &g, self, target, weight, reduction, ignore_index, label_smoothing, rd);
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

/* Backward helpers of the neural-network formulas in ops/derivatives.yaml (section
 * nn2; codegen/gen_autograd.py RUNTIME_HELPERS): conv1d, "same" padding, the transposed
 * convolutions' input, max_pool1d, the average and adaptive average pools,
 * upsampling, batch_norm, group_norm, binary_cross_entropy_with_logits, N-d nll_loss,
 * glu and prelu.
 *
 * Every helper is a chain of public ops (ops_*), so that under create_graph the
 * backward pass is itself recorded and double backward works; the average pools' when
 * nothing records (no create_graph) call the device's gradient loop instead
 * (kernels/pool.h, pool_avg_backward_direct), where it has one.  The
 * linear ops that are separable over height and width (avg pools, adaptive average
 * pooling, nearest and (bi)linear upsampling) use one idea: per plane the op is
 * x -> Mh^T x Mw, and the matrices are read off the op itself applied to an identity
 * (a batch of one-hot rows), so they follow the forward kernel's index arithmetic
 * exactly; the gradient Mh g Mw^T is then two matmuls, whose own formulas give the
 * double backward.  The matrices cost O(H * Ho + W * Wo) memory and the matmuls
 * O(H * Ho * Wo) per plane: fine for the sizes these ops see in tests and small
 * models; the direct loop above is the faster path for large images. */
#include <string.h>

#include "kernels/pool.h"
#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_op_adaptive_avg_pool2d.h"
#include "ops_op_add.h"
#include "ops_op_avg_pool1d.h"
#include "ops_op_avg_pool2d.h"
#include "ops_op_conv1d.h"
#include "ops_op_conv2d.h"
#include "ops_op_conv_transpose2d.h"
#include "ops_op_eye.h"
#include "ops_op_gt.h"
#include "ops_op_le.h"
#include "ops_op_log_sigmoid.h"
#include "ops_op_matmul.h"
#include "ops_op_max_pool2d_with_indices.h"
#include "ops_op_max_pool2d_with_indices_backward.h"
#include "ops_op_mean.h"
#include "ops_op_mul.h"
#include "ops_op_narrow.h"
#include "ops_op_neg.h"
#include "ops_op_ones.h"
#include "ops_op_reshape.h"
#include "ops_op_rsqrt.h"
#include "ops_op_sigmoid.h"
#include "ops_op_squeeze.h"
#include "ops_op_sub.h"
#include "ops_op_sum.h"
#include "ops_op_t.h"
#include "ops_op_to.h"
#include "ops_op_unsqueeze.h"
#include "ops_op_upsample_bilinear2d.h"
#include "ops_op_upsample_linear1d.h"
#include "ops_op_upsample_nearest1d.h"
#include "ops_op_upsample_nearest2d.h"
#include "ops_op_where.h"
#endif

/* A chain of public-op calls, each result checked: on NULL, go to done. */
#define NN_STEP(var, expr)                                                                  \
    do {                                                                                    \
        var = (expr);                                                                       \
        if (var == NULL)                                                                    \
            goto done;                                                                      \
    } while (0)

static void
release_all(ops_tensor **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ops_tensor_release(ts[i]);
}

#define RELEASE_ALL(...)                                                                    \
    do {                                                                                    \
        ops_tensor *all_[] = {__VA_ARGS__};                                                 \
        release_all(all_, sizeof all_ / sizeof all_[0]);                                    \
    } while (0)

/* ---- convolutions ------------------------------------------------------------------- */

/* conv1d (and conv_transpose1d's weight and bias) through conv2d's helper over a
 * height of 1: kernel height 1, stride/dilation 1 and no padding along it. */
ops_tensor *
ops_autograd_conv1d_backward(const ops_tensor *g, const ops_tensor *input, const ops_tensor *weight,
                             ops_int_list stride, ops_int_list padding, ops_int_list dilation, int64_t groups,
                             int64_t which)
{
    if (stride.len != 1 || padding.len != 1 || dilation.len != 1)
        return ops_fail_null(OPS_ERR_VALUE, "conv1d_backward: stride, padding and dilation take one value each");
    if (which == 2) {
        const int64_t bd[2] = {0, 2}, ud[1] = {1};
        const ops_int_list dl = input->ndim == 3 ? (ops_int_list){bd, 2} : (ops_int_list){ud, 1};
        return ops_sum_dim(g, &dl, false, OPS_DTYPE_NONE);
    }
    const int64_t s[2] = {1, stride.data[0]}, p[2] = {0, padding.data[0]}, d[2] = {1, dilation.data[0]};
    ops_tensor *x = NULL, *w = NULL, *gg = NULL, *r2 = NULL, *r = NULL;
    NN_STEP(x, ops_unsqueeze(input, -2));
    NN_STEP(w, ops_unsqueeze(weight, -2));
    NN_STEP(gg, ops_unsqueeze(g, -2));
    NN_STEP(r2, ops_autograd_conv2d_backward(gg, x, w, (ops_int_list){s, 2}, (ops_int_list){p, 2},
                                             (ops_int_list){d, 2}, groups, which));
    r = ops_squeeze_dim(r2, -2);
done:
    RELEASE_ALL(x, w, gg, r2);
    return r;
}

/* conv1d/conv2d with padding="same" (stride 1): per spatial dim the input is padded by
 * left = total / 2 before and total - left after, total = dilation * (k - 1).  The
 * input's gradient is the transposed convolution with padding left, whose extra
 * trailing row (odd total) is dropped; the weight's is conv2d's weight gradient over
 * the input padded asymmetrically, the padding made by a 1x1 depthwise convolution
 * with ones (padding right) and a narrow, so that it stays differentiable. */
ops_tensor *
ops_autograd_conv_same_backward(const ops_tensor *g, const ops_tensor *input, const ops_tensor *weight,
                                ops_int_list dilation, int64_t groups, int64_t which)
{
    const int nsp = weight->ndim - 2;
    if ((nsp != 1 && nsp != 2) || (dilation.len != 1 && dilation.len != nsp))
        return ops_fail_null(OPS_ERR_VALUE, "conv_same_backward: expected a 1-d or 2-d convolution");
    ops_tensor *x = NULL, *w = NULL, *gg = NULL, *y = NULL, *n1 = NULL, *n2 = NULL, *ones = NULL, *c1 = NULL;
    ops_tensor *r2 = NULL, *r = NULL;
    int64_t d[2], k[2], left[2], right[2], in[2];
    d[0] = nsp == 1 ? 1 : dilation.data[0];
    d[1] = dilation.data[dilation.len - 1];
    if (nsp == 1) {
        NN_STEP(x, ops_unsqueeze(input, -2));
        NN_STEP(w, ops_unsqueeze(weight, -2));
        NN_STEP(gg, ops_unsqueeze(g, -2));
    } else {
        x = ops_tensor_retain(input);
        w = ops_tensor_retain(weight);
        gg = ops_tensor_retain(g);
    }
    for (int i = 0; i < 2; i++) {
        k[i] = w->sizes[2 + i];
        in[i] = x->sizes[x->ndim - 2 + i];
        const int64_t total = d[i] * (k[i] - 1);
        left[i] = total / 2;
        right[i] = total - left[i];
    }
    const int64_t one2[2] = {1, 1}, zero2[2] = {0, 0};
    const ops_int_list ones_l = {one2, 2}, zeros_l = {zero2, 2}, dl = {d, 2};
    if (which == 0) {
        NN_STEP(y, ops_conv_transpose2d_input(gg, w, NULL, ones_l, (ops_int_list){left, 2}, zeros_l, groups, dl));
        NN_STEP(n1, ops_narrow(y, -2, 0, in[0]));
        NN_STEP(r2, ops_narrow(n1, -1, 0, in[1]));
    } else {
        const bool sym = left[0] == right[0] && left[1] == right[1];
        if (sym) {
            NN_STEP(r2, ops_autograd_conv2d_backward(gg, x, w, ones_l, (ops_int_list){left, 2}, dl, groups, 1));
        } else {
            const int64_t C = x->sizes[x->ndim - 3];
            NN_STEP(ones, ops_ones(OPS_INTS(C, 1, 1, 1), x->dtype, ops_tensor_device(x)));
            NN_STEP(c1, ops_conv2d(x, ones, NULL, ones_l, (ops_int_list){right, 2}, ones_l, C));
            NN_STEP(n1, ops_narrow(c1, -2, right[0] - left[0], in[0] + left[0] + right[0]));
            NN_STEP(n2, ops_narrow(n1, -1, right[1] - left[1], in[1] + left[1] + right[1]));
            NN_STEP(r2, ops_autograd_conv2d_backward(gg, n2, w, ones_l, zeros_l, dl, groups, 1));
        }
    }
    r = nsp == 1 ? ops_squeeze_dim(r2, -2) : ops_tensor_retain(r2);
done:
    RELEASE_ALL(x, w, gg, y, n1, n2, ones, c1, r2);
    return r;
}

/* conv_transpose1d/2d's input gradient: the convolution of grad with the same weight.
 * When output_padding reaches the stride (allowed while it is below the dilation), that
 * convolution sees trailing rows no input element reached and comes out longer than
 * the input; the surplus is dropped. */
ops_tensor *
ops_autograd_conv_transpose_input_backward(const ops_tensor *g, int ndim, const int64_t *sizes,
                                           const ops_tensor *weight, ops_int_list stride, ops_int_list padding,
                                           ops_int_list dilation, int64_t groups)
{
    const int nsp = weight->ndim - 2;
    if ((nsp != 1 && nsp != 2) || ndim < nsp + 1)
        return ops_fail_null(OPS_ERR_VALUE, "conv_transpose_backward: expected a 1-d or 2-d convolution");
    ops_tensor *y = nsp == 2 ? ops_conv2d(g, weight, NULL, stride, padding, dilation, groups)
                             : ops_conv1d(g, weight, NULL, stride, padding, dilation, groups);
    for (int i = 0; y != NULL && i < nsp; i++) {
        const int dim = ndim - nsp + i;
        if (y->sizes[dim] > sizes[dim]) {
            ops_tensor *n = ops_narrow(y, dim, 0, sizes[dim]);
            ops_tensor_release(y);
            y = n;
        }
    }
    return y;
}

/* ---- max_pool1d ----------------------------------------------------------------------- */

/* max_pool1d as max_pool2d over a height of 1: the maxima's indices recomputed (below
 * autograd), then max_pool2d_with_indices_backward, whose formula gathers. */
ops_tensor *
ops_autograd_max_pool1d_backward(const ops_tensor *g, const ops_tensor *self, ops_int_list kernel_size,
                                 ops_int_list stride, ops_int_list padding, ops_int_list dilation, bool ceil_mode)
{
    if (kernel_size.len != 1 || stride.len > 1 || padding.len != 1 || dilation.len != 1)
        return ops_fail_null(OPS_ERR_VALUE, "max_pool1d_backward: expected one value per argument");
    const int64_t k[2] = {1, kernel_size.data[0]}, p[2] = {0, padding.data[0]}, d[2] = {1, dilation.data[0]};
    const int64_t s[2] = {1, stride.len == 1 ? stride.data[0] : kernel_size.data[0]};
    const ops_int_list kl = {k, 2}, sl = {s, 2}, pl = {p, 2}, dl = {d, 2};
    ops_tensor *x = NULL, *gg = NULL, *out = NULL, *idx = NULL, *r2 = NULL, *r = NULL;
    NN_STEP(x, ops_unsqueeze(self, -2));
    NN_STEP(gg, ops_unsqueeze(g, -2));
    const bool prev = ops_set_grad_enabled(false);
    const ops_status st = ops_max_pool2d_with_indices(x, kl, sl, pl, dl, ceil_mode, &out, &idx);
    ops_set_grad_enabled(prev);
    if (st != OPS_OK)
        goto done;
    NN_STEP(r2, ops_max_pool2d_with_indices_backward(gg, x, kl, sl, pl, dl, ceil_mode, idx));
    r = ops_squeeze_dim(r2, -2);
done:
    RELEASE_ALL(x, gg, out, idx, r2);
    return r;
}

/* ---- separable linear ops: avg pools, adaptive avg pool, upsampling ---------------------- */

/* The matrix M [n, m] of a 1-d linear map from n to m elements along one dim: row i
 * is the op applied to the one-hot vector e_i.  eye is laid out as a batch of n planes
 * whose mapped dim is at position `at` of an nd-d shape (the other extents 1); apply
 * runs the op.  M has the dtype and device of the gradient g. */
typedef ops_tensor *(*apply_fn)(const ops_tensor *x, const void *ctx);

static ops_tensor *
op_matrix(int64_t n, int64_t m, const ops_tensor *g, int nd, int at, apply_fn apply, const void *ctx)
{
    ops_tensor *e = NULL, *ev = NULL, *y = NULL, *r = NULL;
    int64_t shape[4] = {n, 1, 1, 1};
    shape[at] = n;
    NN_STEP(e, ops_eye(n, g->dtype, ops_tensor_device(g)));
    NN_STEP(ev, ops_reshape(e, (ops_int_list){shape, nd}));
    NN_STEP(y, apply(ev, ctx));
    r = ops_reshape(y, OPS_INTS(n, m));
done:
    RELEASE_ALL(e, ev, y);
    return r;
}

/* Mh g Mw^T over the last two dims of g (Mh [H, Ho], Mw [W, Wo]). */
static ops_tensor *
sandwich(const ops_tensor *g, const ops_tensor *mh, const ops_tensor *mw)
{
    ops_tensor *a = NULL, *wt = NULL, *r = NULL;
    NN_STEP(a, ops_matmul(mh, g));
    NN_STEP(wt, ops_t(mw));
    r = ops_matmul(a, wt);
done:
    RELEASE_ALL(a, wt);
    return r;
}

/* g Mw^T over the last dim of g (Mw [W, Wo]). */
static ops_tensor *
right_mul(const ops_tensor *g, const ops_tensor *mw)
{
    ops_tensor *wt = ops_t(mw);
    ops_tensor *r = wt != NULL ? ops_matmul(g, wt) : NULL;
    ops_tensor_release(wt);
    return r;
}

typedef struct {
    int64_t k[2], s[2], p[2];
    bool ceil_mode, count_include_pad;
    const int64_t *divisor;
    int64_t out[2];
    bool align_corners;
    const double *scale;
    int mode;
    bool height_pass;
    bool has_stride; /* avg_pool1d: stride given (else the kernel size) */
} sep_args;

static bool
pair_of(ops_int_list l, int64_t *out)
{
    if (l.len != 1 && l.len != 2)
        return false;
    out[0] = l.data[0];
    out[1] = l.data[l.len - 1];
    return true;
}

static ops_tensor *
apply_avg2d(const ops_tensor *x, const void *ctx)
{
    const sep_args *a = ctx;
    return ops_avg_pool2d(x, (ops_int_list){a->k, 2}, (ops_int_list){a->s, 2}, (ops_int_list){a->p, 2}, a->ceil_mode,
                          a->count_include_pad, a->divisor);
}

/* avg_pool2d: when nothing records the gradient's own graph, the device's loop
 * (pool_avg_backward_direct, kernels/pool.h: the CPU's adds each output's share to its
 * window, vectorised along the rows).  Otherwise, and on devices without that loop:
 * Mh from the op over [H, 1, H, 1] with kernel (kh, 1), Mw over
 * [W, 1, 1, W] with (1, kw).  The divisor (window size with or without padding) is the
 * product of the two dims' extents, so each pass divides by its own; a
 * divisor_override d divides once: by d in the height pass and by 1 in the width one. */
ops_tensor *
ops_autograd_avg_pool2d_backward(const ops_tensor *g, int ndim, const int64_t *sizes, ops_int_list kernel_size,
                                 ops_int_list stride, ops_int_list padding, bool ceil_mode, bool count_include_pad,
                                 const int64_t *divisor_override)
{
    int64_t k[2], s[2], p[2];
    if (ndim < 2 || g->ndim != ndim || !pair_of(kernel_size, k) || !pair_of(padding, p) ||
        (stride.len != 0 && !pair_of(stride, s)))
        return ops_fail_null(OPS_ERR_VALUE, "avg_pool2d_backward: bad kernel_size, stride or padding");
    if (stride.len == 0)
        s[0] = k[0], s[1] = k[1];
    if (!ops_grad_enabled()) { /* nothing records (no create_graph): the device's loop where it has one */
        ops_tensor *direct = NULL;
        if (pool_avg_backward_direct("avg_pool2d_backward", g, ndim, sizes, false, kernel_size, stride, padding,
                                     ceil_mode, count_include_pad, divisor_override, &direct) != OPS_OK)
            return NULL;
        if (direct != NULL)
            return direct;
    }
    const int64_t one = 1;
    const sep_args ah = {.k = {k[0], 1}, .s = {s[0], 1}, .p = {p[0], 0}, .ceil_mode = ceil_mode,
                         .count_include_pad = count_include_pad, .divisor = divisor_override};
    const sep_args aw = {.k = {1, k[1]}, .s = {1, s[1]}, .p = {0, p[1]}, .ceil_mode = ceil_mode,
                         .count_include_pad = count_include_pad, .divisor = divisor_override != NULL ? &one : NULL};
    ops_tensor *mh = NULL, *mw = NULL, *r = NULL;
    NN_STEP(mh, op_matrix(sizes[ndim - 2], g->sizes[g->ndim - 2], g, 4, 2, apply_avg2d, &ah));
    NN_STEP(mw, op_matrix(sizes[ndim - 1], g->sizes[g->ndim - 1], g, 4, 3, apply_avg2d, &aw));
    r = sandwich(g, mh, mw);
done:
    RELEASE_ALL(mh, mw);
    return r;
}

static ops_tensor *
apply_avg1d(const ops_tensor *x, const void *ctx)
{
    const sep_args *a = ctx;
    return ops_avg_pool1d(x, (ops_int_list){a->k, 1}, (ops_int_list){a->s, a->has_stride ? 1 : 0},
                          (ops_int_list){a->p, 1}, a->ceil_mode, a->count_include_pad);
}

ops_tensor *
ops_autograd_avg_pool1d_backward(const ops_tensor *g, int ndim, const int64_t *sizes, ops_int_list kernel_size,
                                 ops_int_list stride, ops_int_list padding, bool ceil_mode, bool count_include_pad)
{
    if (ndim < 1 || g->ndim != ndim || kernel_size.len != 1 || padding.len != 1 || stride.len > 1)
        return ops_fail_null(OPS_ERR_VALUE, "avg_pool1d_backward: bad kernel_size, stride or padding");
    const sep_args a = {.k = {kernel_size.data[0]},
                        .s = {stride.len == 1 ? stride.data[0] : 0},
                        .has_stride = stride.len == 1,
                        .p = {padding.data[0]},
                        .ceil_mode = ceil_mode,
                        .count_include_pad = count_include_pad};
    ops_tensor *m = op_matrix(sizes[ndim - 1], g->sizes[g->ndim - 1], g, 3, 2, apply_avg1d, &a);
    ops_tensor *r = m != NULL ? right_mul(g, m) : NULL;
    ops_tensor_release(m);
    return r;
}

static ops_tensor *
apply_adaptive(const ops_tensor *x, const void *ctx)
{
    const sep_args *a = ctx;
    return ops_adaptive_avg_pool2d(x, (ops_int_list){a->out, 2});
}

/* adaptive_avg_pool2d: the window bounds of each dim depend on that dim alone, and
 * the divisor is the product of the two extents. */
ops_tensor *
ops_autograd_adaptive_avg_pool2d_backward(const ops_tensor *g, int ndim, const int64_t *sizes)
{
    if (ndim < 2 || g->ndim != ndim)
        return ops_fail_null(OPS_ERR_VALUE, "adaptive_avg_pool2d_backward: bad gradient shape");
    if (!ops_grad_enabled()) { /* as avg_pool2d's */
        ops_tensor *direct = NULL;
        if (pool_avg_backward_direct("adaptive_avg_pool2d_backward", g, ndim, sizes, true, (ops_int_list){NULL, 0},
                                     (ops_int_list){NULL, 0}, (ops_int_list){NULL, 0}, false, false, NULL,
                                     &direct) != OPS_OK)
            return NULL;
        if (direct != NULL)
            return direct;
    }
    const sep_args ah = {.out = {g->sizes[ndim - 2], 1}}, aw = {.out = {1, g->sizes[ndim - 1]}};
    ops_tensor *mh = NULL, *mw = NULL, *r = NULL;
    NN_STEP(mh, op_matrix(sizes[ndim - 2], g->sizes[ndim - 2], g, 4, 2, apply_adaptive, &ah));
    NN_STEP(mw, op_matrix(sizes[ndim - 1], g->sizes[ndim - 1], g, 4, 3, apply_adaptive, &aw));
    r = sandwich(g, mh, mw);
done:
    RELEASE_ALL(mh, mw);
    return r;
}

static ops_tensor *
apply_upsample2d(const ops_tensor *x, const void *ctx)
{
    const sep_args *a = ctx;
    /* the scale belongs to the pass's own dim (the other one maps 1 to 1) */
    const double *sh = a->height_pass ? a->scale : NULL;
    const double *sw = a->height_pass ? NULL : a->scale;
    if (a->mode == 0)
        return ops_upsample_nearest2d(x, (ops_int_list){a->out, 2}, sh, sw);
    return ops_upsample_bilinear2d(x, (ops_int_list){a->out, 2}, a->align_corners, sh, sw);
}

/* upsample_nearest2d (mode 0) / upsample_bilinear2d (mode 1); a negative scale is
 * None.  A dim of size 1 mapped to 1 is the identity in both modes. */
ops_tensor *
ops_autograd_upsample2d_backward(const ops_tensor *g, int ndim, const int64_t *sizes, bool align_corners,
                                 double scales_h, double scales_w, int64_t mode)
{
    if (ndim != 4 || g->ndim != 4)
        return ops_fail_null(OPS_ERR_VALUE, "upsample2d_backward: expected 4-d tensors");
    const sep_args ah = {.out = {g->sizes[2], 1}, .height_pass = true, .align_corners = align_corners,
                         .scale = scales_h >= 0 ? &scales_h : NULL, .mode = (int)mode};
    const sep_args aw = {.out = {1, g->sizes[3]}, .height_pass = false, .align_corners = align_corners,
                         .scale = scales_w >= 0 ? &scales_w : NULL, .mode = (int)mode};
    ops_tensor *mh = NULL, *mw = NULL, *r = NULL;
    NN_STEP(mh, op_matrix(sizes[2], g->sizes[2], g, 4, 2, apply_upsample2d, &ah));
    NN_STEP(mw, op_matrix(sizes[3], g->sizes[3], g, 4, 3, apply_upsample2d, &aw));
    r = sandwich(g, mh, mw);
done:
    RELEASE_ALL(mh, mw);
    return r;
}

static ops_tensor *
apply_upsample1d(const ops_tensor *x, const void *ctx)
{
    const sep_args *a = ctx;
    if (a->mode == 0)
        return ops_upsample_nearest1d(x, (ops_int_list){a->out, 1}, a->scale);
    return ops_upsample_linear1d(x, (ops_int_list){a->out, 1}, a->align_corners, a->scale);
}

/* upsample_nearest1d (mode 0) / upsample_linear1d (mode 1); a negative scale is None. */
ops_tensor *
ops_autograd_upsample1d_backward(const ops_tensor *g, int ndim, const int64_t *sizes, bool align_corners,
                                 double scales, int64_t mode)
{
    if (ndim != 3 || g->ndim != 3)
        return ops_fail_null(OPS_ERR_VALUE, "upsample1d_backward: expected 3-d tensors");
    const sep_args a = {.out = {g->sizes[2]}, .align_corners = align_corners, .scale = scales >= 0 ? &scales : NULL,
                        .mode = (int)mode};
    ops_tensor *m = op_matrix(sizes[2], g->sizes[2], g, 3, 2, apply_upsample1d, &a);
    ops_tensor *r = m != NULL ? right_mul(g, m) : NULL;
    ops_tensor_release(m);
    return r;
}

/* ---- normalization ----------------------------------------------------------------------- */

/* The normalized-input gradient shared by batch_norm (training) and group_norm, over
 * dims of x (keepdim statistics): with gw = g * weight and x^ = (x - mean) * rstd,
 * dx = rstd * (gw - mean(gw) - x^ * mean(gw * x^)). */
static ops_tensor *
norm_input_grad(const ops_tensor *gw, const ops_tensor *xhat, const ops_tensor *rstd, ops_int_list dims)
{
    ops_tensor *m1 = NULL, *t2 = NULL, *m2 = NULL, *t3 = NULL, *t4 = NULL, *t5 = NULL, *r = NULL;
    NN_STEP(m1, ops_mean_dim(gw, &dims, true, OPS_DTYPE_NONE));
    NN_STEP(t2, ops_mul(gw, xhat));
    NN_STEP(m2, ops_mean_dim(t2, &dims, true, OPS_DTYPE_NONE));
    NN_STEP(t3, ops_sub(gw, m1, OPS_SCALAR_INT(1)));
    NN_STEP(t4, ops_mul(xhat, m2));
    NN_STEP(t5, ops_sub(t3, t4, OPS_SCALAR_INT(1)));
    r = ops_mul(t5, rstd);
done:
    RELEASE_ALL(m1, t2, m2, t3, t4, t5);
    return r;
}

/* (x - mean) * rstd and rstd over dims (keepdim), the biased variance. */
static ops_status
normalize(const ops_tensor *x, ops_int_list dims, double eps, ops_tensor **xhat, ops_tensor **rstd)
{
    ops_tensor *mean = NULL, *xc = NULL, *sq = NULL, *var = NULL, *ve = NULL;
    ops_status st = OPS_ERR_OOM;
    NN_STEP(mean, ops_mean_dim(x, &dims, true, OPS_DTYPE_NONE));
    NN_STEP(xc, ops_sub(x, mean, OPS_SCALAR_INT(1)));
    NN_STEP(sq, ops_mul(xc, xc));
    NN_STEP(var, ops_mean_dim(sq, &dims, true, OPS_DTYPE_NONE));
    NN_STEP(ve, ops_add_scalar(var, OPS_SCALAR_FLOAT(eps), OPS_SCALAR_INT(1)));
    NN_STEP(*rstd, ops_rsqrt(ve));
    *xhat = ops_mul(xc, *rstd);
    if (*xhat == NULL) {
        ops_tensor_release(*rstd);
        *rstd = NULL;
        goto done;
    }
    st = OPS_OK;
done:
    if (st != OPS_OK)
        st = ops_last_status();
    RELEASE_ALL(mean, xc, sq, var, ve);
    return st;
}

/* Sum over every dim but 1, as a [C] tensor (the per-channel weight and bias grads). */
static ops_tensor *
sum_but_channel(const ops_tensor *t)
{
    int64_t dv[OPS_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != 1)
            dv[n++] = i;
    const ops_int_list dl = {dv, n};
    return ops_sum_dim(t, &dl, false, OPS_DTYPE_NONE);
}

/* v [C] viewed as [1, C, 1, ...] against an ndim-d input. */
static ops_tensor *
channel_view(const ops_tensor *v, int ndim, int64_t C)
{
    int64_t shape[OPS_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        shape[i] = i == 1 ? C : 1;
    return ops_reshape(v, (ops_int_list){shape, ndim});
}

/* batch_norm / native_batch_norm: input (which 0), weight (1), bias (2).  Training
 * normalizes with the batch statistics over every dim but 1 (their dependence on the
 * input is part of the gradient); evaluation with running_mean / running_var, which
 * are constants (PyTorch's batchnorm_backward). */
ops_tensor *
ops_autograd_batch_norm_backward(const ops_tensor *g, const ops_tensor *input, const ops_tensor *weight,
                                 const ops_tensor *running_mean, const ops_tensor *running_var, bool training,
                                 double eps, int64_t which)
{
    if (input->ndim < 2)
        return ops_fail_null(OPS_ERR_VALUE, "batch_norm_backward: input must have at least 2 dims");
    if (which == 2)
        return sum_but_channel(g);
    if (!training && (running_mean == NULL || running_var == NULL))
        return ops_fail_null(OPS_ERR_VALUE, "batch_norm_backward: running_mean and running_var must be defined in "
                                            "evaluation mode");
    const int64_t C = input->sizes[1];
    int64_t dv[OPS_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < input->ndim; i++)
        if (i != 1)
            dv[n++] = i;
    const ops_int_list dims = {dv, n};
    ops_tensor *xhat = NULL, *rstd = NULL, *rm = NULL, *rv = NULL, *ve = NULL, *xc = NULL, *t = NULL, *wv = NULL;
    ops_tensor *gw = NULL, *r = NULL;
    if (training) {
        if (normalize(input, dims, eps, &xhat, &rstd) != OPS_OK)
            goto done;
    } else {
        NN_STEP(rm, channel_view(running_mean, input->ndim, C));
        NN_STEP(rv, channel_view(running_var, input->ndim, C));
        NN_STEP(ve, ops_add_scalar(rv, OPS_SCALAR_FLOAT(eps), OPS_SCALAR_INT(1)));
        NN_STEP(rstd, ops_rsqrt(ve));
        NN_STEP(xc, ops_sub(input, rm, OPS_SCALAR_INT(1)));
        NN_STEP(xhat, ops_mul(xc, rstd));
    }
    if (which == 1) {
        NN_STEP(t, ops_mul(g, xhat));
        r = sum_but_channel(t);
        goto done;
    }
    if (weight != NULL) {
        NN_STEP(wv, channel_view(weight, input->ndim, C));
        NN_STEP(gw, ops_mul(g, wv));
    } else {
        gw = ops_tensor_retain(g);
    }
    r = training ? norm_input_grad(gw, xhat, rstd, dims) : ops_mul(gw, rstd);
done:
    RELEASE_ALL(xhat, rstd, rm, rv, ve, xc, t, wv, gw);
    return r;
}

/* group_norm / native_group_norm: statistics per (n, group) over input viewed as
 * [N, G, C / G * spatial]; weight and bias per channel. */
ops_tensor *
ops_autograd_group_norm_backward(const ops_tensor *g, const ops_tensor *input, int64_t num_groups,
                                 const ops_tensor *weight, double eps, int64_t which)
{
    if (input->ndim < 2 || num_groups <= 0)
        return ops_fail_null(OPS_ERR_VALUE, "group_norm_backward: bad input or num_groups");
    if (which == 2)
        return sum_but_channel(g);
    const int64_t N = input->sizes[0], C = input->sizes[1];
    const int64_t numel = ops_tensor_numel(input);
    const int64_t M = N * num_groups > 0 ? numel / (N * num_groups) : 0;
    const int64_t last[1] = {-1};
    const ops_int_list dims = {last, 1};
    const ops_int_list full = {input->sizes, input->ndim};
    ops_tensor *x3 = NULL, *xhat3 = NULL, *rstd = NULL, *xhat = NULL, *t = NULL, *wv = NULL, *gw = NULL;
    ops_tensor *gw3 = NULL, *d3 = NULL, *r = NULL;
    NN_STEP(x3, ops_reshape(input, OPS_INTS(N, num_groups, M)));
    if (normalize(x3, dims, eps, &xhat3, &rstd) != OPS_OK)
        goto done;
    if (which == 1) {
        NN_STEP(xhat, ops_reshape(xhat3, full));
        NN_STEP(t, ops_mul(g, xhat));
        r = sum_but_channel(t);
        goto done;
    }
    if (weight != NULL) {
        NN_STEP(wv, channel_view(weight, input->ndim, C));
        NN_STEP(gw, ops_mul(g, wv));
    } else {
        gw = ops_tensor_retain(g);
    }
    NN_STEP(gw3, ops_reshape(gw, OPS_INTS(N, num_groups, M)));
    NN_STEP(d3, norm_input_grad(gw3, xhat3, rstd, dims));
    r = ops_reshape(d3, full);
done:
    RELEASE_ALL(x3, xhat3, rstd, xhat, t, wv, gw, gw3, d3);
    return r;
}

/* ---- losses ------------------------------------------------------------------------------ */

/* binary_cross_entropy_with_logits, given g already brought to the elementwise shape:
 * with p = pos_weight (1 without) and w = weight (1 without),
 * self (which 0): g * w * ((p t + 1 - t) sigmoid(x) - p t);
 * target (1): -g * w * (p log_sigmoid(x) - log_sigmoid(-x));
 * weight (2): -g * (p t log_sigmoid(x) + (1 - t) log_sigmoid(-x)), the unweighted loss;
 * pos_weight (3): -g * w * t log_sigmoid(x).
 * (The formulas sum them back to each input's shape.) */
ops_tensor *
ops_autograd_bce_logits_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *target,
                                 const ops_tensor *weight, const ops_tensor *pos_weight, int64_t which)
{
    ops_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL, *gw = NULL, *r = NULL;
    if (weight != NULL && which != 2)
        NN_STEP(gw, ops_mul(g, weight));
    else
        gw = ops_tensor_retain(g);
    if (which == 2) {
        ops_tensor *ce = NULL, *cet = NULL;
        NN_STEP(a, ops_log_sigmoid(self));
        NN_STEP(b, pos_weight != NULL ? ops_mul(pos_weight, target) : ops_tensor_retain(target)); /* p t */
        NN_STEP(c, ops_mul(b, a));
        NN_STEP(d, ops_neg(self));
        NN_STEP(e, ops_log_sigmoid(d));
        NN_STEP(f, ops_mul(target, e));
        /* -(p t ls(x) + ls(-x) - t ls(-x)) */
        ce = ops_add(c, e, OPS_SCALAR_INT(1));
        cet = ce != NULL ? ops_sub(ce, f, OPS_SCALAR_INT(1)) : NULL;
        ops_tensor_release(ce);
        ops_tensor_release(f);
        f = cet != NULL ? ops_neg(cet) : NULL;
        ops_tensor_release(cet);
        if (f == NULL)
            goto done;
    } else if (which == 3) {
        NN_STEP(a, ops_log_sigmoid(self));
        NN_STEP(b, ops_mul(target, a));
        NN_STEP(f, ops_neg(b));
    } else if (which == 0) {
        NN_STEP(a, ops_sigmoid(self));
        if (pos_weight != NULL) {
            NN_STEP(b, ops_mul(pos_weight, target));                    /* p t */
            NN_STEP(c, ops_sub(b, target, OPS_SCALAR_INT(1)));          /* p t - t */
            NN_STEP(d, ops_add_scalar(c, OPS_SCALAR_INT(1), OPS_SCALAR_INT(1)));
            NN_STEP(e, ops_mul(d, a));
            NN_STEP(f, ops_sub(e, b, OPS_SCALAR_INT(1)));
        } else {
            NN_STEP(f, ops_sub(a, target, OPS_SCALAR_INT(1)));
        }
    } else {
        NN_STEP(a, ops_log_sigmoid(self));
        NN_STEP(b, ops_neg(self));
        NN_STEP(c, ops_log_sigmoid(b));
        if (pos_weight != NULL) {
            NN_STEP(d, ops_mul(pos_weight, a));
            NN_STEP(e, ops_sub(c, d, OPS_SCALAR_INT(1)));
        } else {
            NN_STEP(e, ops_sub(c, a, OPS_SCALAR_INT(1)));
        }
        f = ops_tensor_retain(e);
    }
    r = ops_mul(gw, f);
done:
    RELEASE_ALL(a, b, c, d, e, f, gw);
    return r;
}

/* ---- glu, prelu ---------------------------------------------------------------------------- */

/* glu(x) = a * sigmoid(b) with x = [a, b] halved along dim: the halves' gradients
 * g * s and g * a * s * (1 - s) put back side by side without cat (which has no
 * formula yet): each unsqueezed at dim and multiplied by a [1, 0] / [0, 1] selector
 * along the new dim, summed and flattened, all differentiable ops. */
ops_tensor *
ops_autograd_glu_backward(const ops_tensor *g, const ops_tensor *self, int64_t dim)
{
    int64_t d = dim;
    if (!ops_wrap_dim("glu_backward", "dim", &d, self->ndim))
        return NULL;
    const int64_t h = self->sizes[d] / 2;
    int64_t sel_shape[OPS_MAX_DIMS + 1];
    for (int i = 0; i <= self->ndim; i++)
        sel_shape[i] = i == d ? 2 : 1;
    ops_tensor *a = NULL, *b = NULL, *s = NULL, *nb = NULL, *oms = NULL, *ga = NULL, *t1 = NULL, *gb = NULL;
    ops_tensor *ua = NULL, *ub = NULL, *s1 = NULL, *s2 = NULL, *pa = NULL, *pb = NULL, *sum = NULL, *r = NULL;
    NN_STEP(a, ops_narrow(self, d, 0, h));
    NN_STEP(b, ops_narrow(self, d, h, h));
    NN_STEP(s, ops_sigmoid(b));
    NN_STEP(nb, ops_neg(b));
    NN_STEP(oms, ops_sigmoid(nb)); /* 1 - sigmoid(b) */
    NN_STEP(ga, ops_mul(g, s));
    NN_STEP(t1, ops_mul(ga, a));
    NN_STEP(gb, ops_mul(t1, oms));
    NN_STEP(ua, ops_unsqueeze(ga, d));
    NN_STEP(ub, ops_unsqueeze(gb, d));
    NN_STEP(s1, ops_tensor_new("glu_backward", self->ndim + 1, sel_shape, NULL, OPS_FLOAT64, OPS_DEVICE_CPU));
    NN_STEP(s2, ops_tensor_new("glu_backward", self->ndim + 1, sel_shape, NULL, OPS_FLOAT64, OPS_DEVICE_CPU));
    {
        double *p1 = ops_tensor_data_ptr(s1), *p2 = ops_tensor_data_ptr(s2);
        p1[0] = 1, p1[1] = 0, p2[0] = 0, p2[1] = 1;
    }
    if (ops_tensor_device(g).type != OPS_CPU) { /* filled on the host, used on g's device */
        ops_tensor *d1 = NULL, *d2 = NULL;
        NN_STEP(d1, ops_to_device(s1, ops_tensor_device(g), OPS_DTYPE_NONE, false, false, OPS_MEMORY_FORMAT_NONE));
        ops_tensor_release(s1);
        s1 = d1;
        NN_STEP(d2, ops_to_device(s2, ops_tensor_device(g), OPS_DTYPE_NONE, false, false, OPS_MEMORY_FORMAT_NONE));
        ops_tensor_release(s2);
        s2 = d2;
    }
    NN_STEP(pa, ops_mul(ua, s1));
    NN_STEP(pb, ops_mul(ub, s2));
    NN_STEP(sum, ops_add(pa, pb, OPS_SCALAR_INT(1)));
    r = ops_reshape(sum, (ops_int_list){self->sizes, self->ndim});
    if (r != NULL && r->dtype != g->dtype) { /* the float64 selectors promoted a narrower g */
        ops_tensor *c = ops_to_dtype(r, g->dtype, false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor_release(r);
        r = c;
    }
done:
    RELEASE_ALL(a, b, s, nb, oms, ga, t1, gb, ua, ub, s1, s2, pa, pb, sum);
    return r;
}

/* prelu(x) = x > 0 ? x : w * x, w of one element or one per channel (dim 1):
 * self (which 0): g where x > 0, else g * w; weight (1): g * x where x <= 0, summed
 * over every dim but the channel (over everything for one element). */
ops_tensor *
ops_autograd_prelu_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *weight, int64_t which)
{
    const int64_t wn = ops_tensor_numel(weight);
    const bool per_channel = wn > 1;
    ops_tensor *wv = NULL, *pos = NULL, *gw = NULL, *gx = NULL, *neg = NULL, *t = NULL, *s = NULL, *r = NULL;
    const ops_int_list wshape = {weight->sizes, weight->ndim};
    NN_STEP(wv, per_channel && self->ndim >= 2 ? channel_view(weight, self->ndim, self->sizes[1])
                                               : ops_reshape(weight, (ops_int_list){NULL, 0}));
    NN_STEP(pos, ops_gt_scalar(self, OPS_SCALAR_INT(0)));
    if (which == 0) {
        NN_STEP(gw, ops_mul(g, wv));
        r = ops_where_self(pos, g, gw);
        goto done;
    }
    NN_STEP(neg, ops_le_scalar(self, OPS_SCALAR_INT(0)));
    NN_STEP(gx, ops_mul(g, self));
    NN_STEP(t, ops_mul(gx, neg));
    NN_STEP(s, per_channel && self->ndim >= 2 ? sum_but_channel(t) : ops_sum(t, OPS_DTYPE_NONE));
    r = ops_reshape(s, wshape);
done:
    RELEASE_ALL(wv, pos, gw, gx, neg, t, s);
    return r;
}

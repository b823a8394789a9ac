/* Backward helpers of the layer ops (called by formulas in ops/derivatives.yaml):
 * matmul and linear, pooling with indices, layer_norm, conv2d.  Written with public
 * ops, so each is itself differentiable. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_op_add.h"
#include "ops_op_conv2d.h"
#include "ops_op_conv_transpose2d.h"
#include "ops_op_expand.h"
#include "ops_op_flatten.h"
#include "ops_op_matmul.h"
#include "ops_op_max_pool2d_with_indices.h"
#include "ops_op_max_pool2d_with_indices_backward.h"
#include "ops_op_mean.h"
#include "ops_op_mm.h"
#include "ops_op_mul.h"
#include "ops_op_narrow.h"
#include "ops_op_native_layer_norm_backward.h"
#include "ops_op_neg.h"
#include "ops_op_outer.h"
#include "ops_op_permute.h"
#include "ops_op_reshape.h"
#include "ops_op_rsqrt.h"
#include "ops_op_scatter_add.h"
#include "ops_op_squeeze.h"
#include "ops_op_sub.h"
#include "ops_op_sum.h"
#include "ops_op_t.h"
#include "ops_op_transpose.h"
#include "ops_op_unsqueeze.h"
#include "ops_op_var_mean.h"
#include "ops_op_zeros.h"
#include "ops_op_zeros_like.h"
#endif

/* ---- matmul, linear ----------------------------------------------------------------- */

ops_tensor *
ops_autograd_matmul_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *other, int64_t which)
{
    ops_tensor *a = NULL, *b = NULL, *c = NULL, *r = NULL;
    const int sd = self->ndim, od = other->ndim;
    if (sd == 1 && od == 1) { /* dot: g is 0-dim */
        r = ops_mul(g, which == 0 ? other : self);
        return r;
    }
    if (which == 0) {
        if (od == 1) { /* [..., n, k] @ [k]: g [..., n] -> g[..., n, 1] * other[k] */
            AG_STEP(a, ops_unsqueeze(g, -1));
            AG_STEP(b, ops_mul(a, other));
        } else if (sd == 1) { /* [k] @ [..., k, m]: g [..., m] -> (g[..., 1, m] @ other^T)[..., 1, k] */
            AG_STEP(a, ops_unsqueeze(g, -2));
            AG_STEP(c, ops_transpose(other, -1, -2));
            AG_STEP(b, ops_matmul(a, c));
            ops_tensor_release(c);
            AG_STEP(c, ops_squeeze_dim(b, -2));
            ops_tensor_release(b);
            b = c;
            c = NULL;
        } else {
            AG_STEP(a, ops_transpose(other, -1, -2));
            AG_STEP(b, ops_matmul(g, a));
        }
        r = ops_autograd_reduce_to(b, sd, self->sizes);
    } else {
        if (sd == 1) { /* self[k] outer g[..., m] -> [..., k, m] */
            AG_STEP(a, ops_unsqueeze(self, -1));
            AG_STEP(c, ops_unsqueeze(g, -2));
            AG_STEP(b, ops_mul(a, c));
        } else if (od == 1) { /* self^T @ g[..., n, 1] -> [..., k, 1] -> [..., k] */
            AG_STEP(a, ops_transpose(self, -1, -2));
            AG_STEP(c, ops_unsqueeze(g, -1));
            ops_tensor *m;
            AG_STEP(m, ops_matmul(a, c));
            b = ops_squeeze_dim(m, -1);
            ops_tensor_release(m);
            if (b == NULL)
                goto done;
        } else {
            AG_STEP(a, ops_transpose(self, -1, -2));
            AG_STEP(b, ops_matmul(a, g));
        }
        r = ops_autograd_reduce_to(b, od, other->sizes);
    }
done:
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
    return r;
}

/* ---- pooling with indices, layer_norm ------------------------------------------------ */

/* The gradient of a max pool over the last two dims: each output gradient added at the
 * input position its index names (indices are offsets h * W + w, per plane). */
ops_tensor *
ops_autograd_pool_indices_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_tensor *indices)
{
    ops_tensor *z = NULL, *zf = NULL, *idx = NULL, *gf = NULL, *sum = NULL, *r = NULL;
    if (ndim < 2)
        return ops_fail_null(OPS_ERR_VALUE, "pool_backward: input must have at least 2 dims");
    AG_STEP(z, ops_zeros((ops_int_list){sizes, ndim}, g->dtype, ops_tensor_device(g)));
    AG_STEP(zf, ops_flatten(z, -2, -1));
    AG_STEP(idx, ops_flatten(indices, -2, -1));
    AG_STEP(gf, ops_flatten(g, -2, -1));
    AG_STEP(sum, ops_scatter_add(zf, -1, idx, gf));
    r = ops_reshape(sum, (ops_int_list){sizes, ndim});
done:
    ops_tensor_release(z);
    ops_tensor_release(zf);
    ops_tensor_release(idx);
    ops_tensor_release(gf);
    ops_tensor_release(sum);
    return r;
}

ops_tensor *
ops_autograd_max_pool2d_backward(const ops_tensor *g, const ops_tensor *self, ops_int_list kernel_size,
                                 ops_int_list stride, ops_int_list padding, ops_int_list dilation, bool ceil_mode)
{
    ops_tensor *out = NULL, *idx = NULL;
    /* the positions of the maxima, recomputed (below autograd: they carry no gradient) */
    const bool prev = ops_set_grad_enabled(false);
    ops_status st = ops_max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, &out, &idx);
    ops_set_grad_enabled(prev);
    if (st != OPS_OK)
        return NULL;
    /* the backward op, not a scatter_add here: its formula gives double backward */
    ops_tensor *r =
        ops_max_pool2d_with_indices_backward(g, self, kernel_size, stride, padding, dilation, ceil_mode, idx);
    ops_tensor_release(out);
    ops_tensor_release(idx);
    return r;
}

ops_status
ops_autograd_layer_norm_backward_all(const ops_tensor *g, const ops_tensor *x, ops_int_list normalized_shape,
                                     const ops_tensor *mean, const ops_tensor *rstd, const ops_tensor *weight,
                                     const ops_tensor *bias, double eps, ops_int_list mask, ops_tensor_vec *out)
{
    const char *op = "layer_norm_backward";
    ops_tensor_vec v = {NULL, 0};
    ops_status st = ops_tensor_vec_init(op, &v, 3);
    if (st != OPS_OK)
        return st;
    if (mask.len != 3) {
        st = ops_fail(OPS_ERR_VALUE, "%s: the mask has %lld entries, not 3", op, (long long)mask.len);
        goto done;
    }
    /* With create_graph the call below records, and native_layer_norm_backward's own
     * derivative (ops_autograd_layer_norm_double_backward) carries the dependence of the
     * statistics on x: they are computed without recording. */
    const bool grad_was = ops_set_grad_enabled(false);
    ops_tensor *var = NULL, *mu = NULL, *ve = NULL, *rs = NULL, *r[3] = {0};
    if (mean != NULL) {
        /* native_layer_norm's saved mean and rstd come back from the node with its
         * history: detached, or the recorded call would ask them for a gradient */
        if ((mu = ops_tensor_detach(mean)) == NULL || (rs = ops_tensor_detach(rstd)) == NULL) {
            st = ops_last_status();
            goto stats_done;
        }
        mean = mu;
        rstd = rs;
    } else {
        /* layer_norm keeps no statistics: the row moments again (one reduction), as the
         * forward computed them */
        const int64_t k = normalized_shape.len;
        int64_t dims_v[OPS_MAX_DIMS];
        if (k < 1 || k > x->ndim) {
            st = ops_fail(OPS_ERR_VALUE, "%s: bad normalized_shape", op);
            goto stats_done;
        }
        for (int64_t i = 0; i < k; i++)
            dims_v[i] = i - k;
        const ops_int_list dims = {dims_v, k};
        const ops_scalar zero = OPS_SCALAR_INT(0);
        if ((st = ops_var_mean_correction(x, &dims, &zero, true, &var, &mu)) != OPS_OK)
            goto stats_done;
        if ((ve = ops_add_scalar(var, OPS_SCALAR_FLOAT(eps), OPS_SCALAR_INT(1))) == NULL ||
            (rs = ops_rsqrt(ve)) == NULL) {
            st = ops_last_status();
            goto stats_done;
        }
        mean = mu;
        rstd = rs;
    }
    ops_set_grad_enabled(grad_was);
    const bool want[3] = {mask.data[0] != 0, mask.data[1] != 0, mask.data[2] != 0};
    st = ops_native_layer_norm_backward(g, x, normalized_shape, mean, rstd, weight, bias, (ops_bool_list){want, 3},
                                        &r[0], &r[1], &r[2]);
    for (int k = 0; k < 3 && st == OPS_OK; k++) {
        if (mask.data[k])
            v.data[k] = r[k];
        else
            ops_tensor_release(r[k]);
    }
stats_done:
    ops_set_grad_enabled(grad_was);
    ops_tensor_release(var);
    ops_tensor_release(mu);
    ops_tensor_release(ve);
    ops_tensor_release(rs);
done:
    if (st != OPS_OK) {
        ops_tensor_vec_release(&v);
        return st;
    }
    *out = v;
    return OPS_OK;
}

/* native_layer_norm_backward's own derivative (double backward of layer_norm), as ops
 * so that it records in turn.  Its outputs dx = r P(g w), dw = sum_rows g z, db =
 * sum_rows g (per row of N: z = (x - mean) r, P(v) = v - mean(v) - z mean(v z)) are
 * differentiated with mean and rstd taken as the row statistics of x (as PyTorch's
 * layer_norm_double_backward: dz/dx = r P, dr/dx = -r^2 z / N, eps included), so with
 * A, B, C the gradients arriving for dx, dw, db and v = g w:
 *   grad_out = w r P(A) + z B + C
 *   input    = -r^2 (z (mean(A v) - mean(A) mean(v) - mean(A z) mean(v z))
 *                    + mean(v z) P(A) + mean(A z) P(v))  +  r P(g B)
 *   weight   = sum_rows g r P(A)
 * A gradient of an output that output_mask left out (an empty [0] tensor) is taken as
 * none.  mask: which of grad_out, input, weight want theirs; NULL for the others. */
ops_status
ops_autograd_layer_norm_double_backward(const ops_tensor *x, const ops_tensor *weight, const ops_tensor *ga,
                                        const ops_tensor *gb, const ops_tensor *gc, const ops_tensor *g,
                                        const ops_tensor *mean, const ops_tensor *rstd,
                                        ops_int_list normalized_shape, ops_int_list mask, ops_tensor_vec *out)
{
    const char *op = "native_layer_norm_backward";
    ops_tensor_vec v = {NULL, 0};
    ops_status st = ops_tensor_vec_init(op, &v, 3);
    if (st != OPS_OK)
        return st;
    const int64_t k = normalized_shape.len;
    if (mask.len != 3 || k < 1 || k > x->ndim) {
        ops_tensor_vec_release(&v);
        return ops_fail(OPS_ERR_VALUE, "%s: double backward: bad mask or normalized_shape", op);
    }
    int64_t N = 1;
    for (int64_t i = x->ndim - k; i < x->ndim; i++)
        N *= x->sizes[i];
    const int64_t M = N > 0 ? ops_tensor_numel(x) / N : 0;
    const int64_t one = 1, zero = 0;
    const ops_int_list rows = {&one, 1}, cols = {&zero, 1};
    const ops_int_list xshape = {x->sizes, x->ndim};
    /* every temporary in one list: released together at the end */
    ops_tensor *tmp[64] = {0};
    int nt = 0;
#define LN2(var, expr)                                                                      \
    do {                                                                                    \
        var = tmp[nt++] = (expr);                                                           \
        if (var == NULL)                                                                    \
            goto fail;                                                                      \
    } while (0)
    ops_tensor *x2, *g2, *m2, *r2, *z, *w1 = NULL, *A = NULL, *B = NULL, *C = NULL, *v2, *rPA = NULL;
    LN2(x2, ops_reshape(x, OPS_INTS(M, N)));
    LN2(g2, ops_reshape(g, OPS_INTS(M, N)));
    LN2(m2, ops_reshape(mean, OPS_INTS(M, 1)));
    LN2(r2, ops_reshape(rstd, OPS_INTS(M, 1)));
    if (weight != NULL)
        LN2(w1, ops_reshape(weight, OPS_INTS(N)));
    /* a gradient for an output left out is the empty [0] tensor (or none at all) */
    if (ga != NULL && ops_tensor_numel(ga) == M * N && M * N > 0)
        LN2(A, ops_reshape(ga, OPS_INTS(M, N)));
    if (gb != NULL && ops_tensor_numel(gb) == N && M * N > 0)
        LN2(B, ops_reshape(gb, OPS_INTS(N)));
    if (gc != NULL && ops_tensor_numel(gc) == N && M * N > 0)
        LN2(C, ops_reshape(gc, OPS_INTS(N)));
    ops_tensor *xc, *t;
    LN2(xc, ops_sub(x2, m2, OPS_SCALAR_INT(1)));
    LN2(z, ops_mul(xc, r2));
    LN2(v2, w1 != NULL ? ops_mul(g2, w1) : ops_tensor_retain(g2));
    ops_tensor *PA = NULL, *mA = NULL, *mAz = NULL;
    if (A != NULL) {
        ops_tensor *Az, *zm;
        LN2(mA, ops_mean_dim(A, &rows, true, OPS_DTYPE_NONE));
        LN2(Az, ops_mul(A, z));
        LN2(mAz, ops_mean_dim(Az, &rows, true, OPS_DTYPE_NONE));
        LN2(zm, ops_mul(z, mAz));
        LN2(t, ops_sub(A, mA, OPS_SCALAR_INT(1)));
        LN2(PA, ops_sub(t, zm, OPS_SCALAR_INT(1)));
        LN2(rPA, ops_mul(PA, r2));
    }
    ops_tensor *acc = NULL; /* the gradient being summed, M x N */
    if (mask.data[0]) {
        /* grad_out */
        if (rPA != NULL)
            LN2(acc, w1 != NULL ? ops_mul(rPA, w1) : ops_tensor_retain(rPA));
        if (B != NULL) {
            LN2(t, ops_mul(z, B));
            LN2(acc, acc != NULL ? ops_add(acc, t, OPS_SCALAR_INT(1)) : ops_tensor_retain(t));
        }
        if (C != NULL) /* (broadcast over the rows; alone, expanded to M x N) */
            LN2(acc, acc != NULL ? ops_add(acc, C, OPS_SCALAR_INT(1)) : ops_expand(C, OPS_INTS(M, N), false));
        if (acc == NULL)
            LN2(acc, ops_zeros_like(g2, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE));
        if ((v.data[0] = ops_reshape(acc, xshape)) == NULL)
            goto fail;
    }
    if (mask.data[1]) {
        /* input */
        acc = NULL;
        if (A != NULL) {
            ops_tensor *mv, *vz, *mvz, *Av, *mAv, *p1, *coef, *Pv, *q1, *q2, *r2sq;
            LN2(mv, ops_mean_dim(v2, &rows, true, OPS_DTYPE_NONE));
            LN2(vz, ops_mul(v2, z));
            LN2(mvz, ops_mean_dim(vz, &rows, true, OPS_DTYPE_NONE));
            LN2(Av, ops_mul(A, v2));
            LN2(mAv, ops_mean_dim(Av, &rows, true, OPS_DTYPE_NONE));
            LN2(p1, ops_mul(mA, mv));
            LN2(t, ops_sub(mAv, p1, OPS_SCALAR_INT(1)));
            LN2(p1, ops_mul(mAz, mvz));
            LN2(coef, ops_sub(t, p1, OPS_SCALAR_INT(1)));
            LN2(t, ops_sub(v2, mv, OPS_SCALAR_INT(1)));
            LN2(p1, ops_mul(z, mvz));
            LN2(Pv, ops_sub(t, p1, OPS_SCALAR_INT(1)));
            LN2(q1, ops_mul(z, coef));
            LN2(t, ops_mul(PA, mvz));
            LN2(q2, ops_add(q1, t, OPS_SCALAR_INT(1)));
            LN2(t, ops_mul(Pv, mAz));
            LN2(q1, ops_add(q2, t, OPS_SCALAR_INT(1)));
            LN2(r2sq, ops_mul(r2, r2));
            LN2(t, ops_mul(q1, r2sq));
            LN2(acc, ops_neg(t));
        }
        if (B != NULL) {
            ops_tensor *gB, *m1, *gBz, *m2b, *p1, *P;
            LN2(gB, ops_mul(g2, B));
            LN2(m1, ops_mean_dim(gB, &rows, true, OPS_DTYPE_NONE));
            LN2(gBz, ops_mul(gB, z));
            LN2(m2b, ops_mean_dim(gBz, &rows, true, OPS_DTYPE_NONE));
            LN2(t, ops_sub(gB, m1, OPS_SCALAR_INT(1)));
            LN2(p1, ops_mul(z, m2b));
            LN2(P, ops_sub(t, p1, OPS_SCALAR_INT(1)));
            LN2(t, ops_mul(P, r2));
            LN2(acc, acc != NULL ? ops_add(acc, t, OPS_SCALAR_INT(1)) : ops_tensor_retain(t));
        }
        if (acc == NULL)
            LN2(acc, ops_zeros_like(x2, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE));
        if ((v.data[1] = ops_reshape(acc, xshape)) == NULL)
            goto fail;
    }
    if (mask.data[2] && weight != NULL) {
        /* weight */
        if (rPA != NULL) {
            LN2(t, ops_mul(g2, rPA));
            LN2(acc, ops_sum_dim(t, &cols, false, OPS_DTYPE_NONE));
        } else {
            LN2(acc, ops_zeros_like(w1, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE));
        }
        if ((v.data[2] = ops_reshape(acc, (ops_int_list){weight->sizes, weight->ndim})) == NULL)
            goto fail;
    }
#undef LN2
    for (int i = 0; i < nt; i++)
        ops_tensor_release(tmp[i]);
    *out = v;
    return OPS_OK;
fail:
    st = ops_last_status();
    for (int i = 0; i < nt; i++)
        ops_tensor_release(tmp[i]);
    ops_tensor_vec_release(&v);
    return st != OPS_OK ? st : OPS_ERR_VALUE;
}

/* ---- conv2d ----------------------------------------------------------------------------- */

/* conv2d's gradient for input (which 0), weight (1) or bias (2), as public ops:
 * the input's is a transposed convolution of grad with the same weight (output_padding
 * restoring the input's size); the weight's is a convolution of the input with grad
 * as the kernel (stride and dilation swap roles), per group at once by folding the
 * batch into the channels; the bias's is grad summed over batch and space. */
ops_tensor *
ops_autograd_conv2d_backward(const ops_tensor *g, const ops_tensor *input, const ops_tensor *weight,
                             ops_int_list stride, ops_int_list padding, ops_int_list dilation, int64_t groups,
                             int64_t which)
{
    const bool batched = input->ndim == 4;
    int64_t s[2], p[2], d[2];
    const ops_int_list *lists[3] = {&stride, &padding, &dilation};
    int64_t *outs[3] = {s, p, d};
    for (int k = 0; k < 3; k++) {
        if (lists[k]->len != 1 && lists[k]->len != 2)
            return ops_fail_null(OPS_ERR_VALUE, "conv2d_backward: stride, padding and dilation take 1 or 2 values");
        outs[k][0] = lists[k]->data[0];
        outs[k][1] = lists[k]->data[lists[k]->len - 1];
    }
    if (which == 2) {
        int64_t dv[3] = {0, 2, 3};
        ops_int_list dl = batched ? (ops_int_list){dv, 3} : (ops_int_list){(int64_t[]){1, 2}, 2};
        return ops_sum_dim(g, &dl, false, OPS_DTYPE_NONE);
    }
    ops_tensor *x = NULL, *gg = NULL, *r = NULL, *t1 = NULL, *t2 = NULL, *t3 = NULL, *t4 = NULL, *t5 = NULL;
    ops_tensor *t6 = NULL;
    AG_STEP(x, batched ? ops_tensor_retain(input) : ops_unsqueeze(input, 0));
    AG_STEP(gg, batched ? ops_tensor_retain(g) : ops_unsqueeze(g, 0));
    const int64_t N = x->sizes[0], C = x->sizes[1], H = x->sizes[2], W = x->sizes[3];
    const int64_t KH = weight->sizes[2], KW = weight->sizes[3];
    const int64_t Ho = gg->sizes[2], Wo = gg->sizes[3];
    if (which == 0) {
        int64_t op[2];
        const int64_t in[2] = {H, W}, out[2] = {Ho, Wo}, kk[2] = {KH, KW};
        for (int k = 0; k < 2; k++)
            op[k] = in[k] - ((out[k] - 1) * s[k] - 2 * p[k] + d[k] * (kk[k] - 1) + 1);
        AG_STEP(t1, ops_conv_transpose2d_input(gg, weight, NULL, (ops_int_list){s, 2}, (ops_int_list){p, 2},
                                               (ops_int_list){op, 2}, groups, (ops_int_list){d, 2}));
        r = batched ? ops_tensor_retain(t1) : ops_squeeze_dim(t1, 0);
        goto done;
    }
    /* weight: input [N, C, H, W] -> [C/g, g*N, H, W]; grad [N, O, Ho, Wo] -> [O, N, Ho, Wo] */
    AG_STEP(t1, ops_reshape(x, OPS_INTS(N, groups, C / groups, H, W)));
    AG_STEP(t2, ops_permute(t1, OPS_INTS(2, 1, 0, 3, 4)));
    AG_STEP(t3, ops_reshape(t2, OPS_INTS(C / groups, groups * N, H, W)));
    AG_STEP(t4, ops_transpose(gg, 0, 1));
    AG_STEP(t5, ops_conv2d(t3, t4, NULL, (ops_int_list){d, 2}, (ops_int_list){p, 2}, (ops_int_list){s, 2}, groups));
    /* [C/g, O, kh', kw'] with kh' >= kh: the extra rows are positions no output used */
    ops_tensor *n1;
    AG_STEP(n1, ops_narrow(t5, 2, 0, KH));
    t6 = ops_narrow(n1, 3, 0, KW);
    ops_tensor_release(n1);
    if (t6 == NULL)
        goto done;
    r = ops_transpose(t6, 0, 1);
done:
    ops_tensor_release(x);
    ops_tensor_release(gg);
    ops_tensor_release(t1);
    ops_tensor_release(t2);
    ops_tensor_release(t3);
    ops_tensor_release(t4);
    ops_tensor_release(t5);
    ops_tensor_release(t6);
    return r;
}

/* ---- linear ------------------------------------------------------- */

/* linear's gradient for input (which 0) or weight (1), y = input @ weight^T: grad @
 * weight, and grad^T @ input over the rows of all leading dims.  The transposes are
 * views that the BLAS call reads with its transpose flags, and the weight's gradient
 * comes out contiguous in weight's layout (no copy when AccumulateGrad keeps it).  A
 * 1-D weight (a dot per row) goes through matmul's rules. */
ops_tensor *
ops_autograd_linear_backward(const ops_tensor *g, const ops_tensor *input, const ops_tensor *weight, int64_t which)
{
    ops_tensor *a = NULL, *b = NULL, *c = NULL, *r = NULL;
    if (weight->ndim != 2) {
        AG_STEP(a, ops_t(weight));
        r = which == 0 ? ops_autograd_matmul_backward(g, input, a, 0) : ops_autograd_matmul_backward(g, input, a, 1);
        goto done;
    }
    if (which == 0) {
        r = ops_matmul(g, weight);
        goto done;
    }
    if (input->ndim == 1) {
        r = ops_outer(g, input);
        goto done;
    }
    const int64_t out_f = weight->sizes[0], in_f = weight->sizes[1];
    AG_STEP(a, input->ndim == 2 ? ops_tensor_retain(g) : ops_reshape(g, OPS_INTS(-1, out_f)));
    AG_STEP(b, input->ndim == 2 ? ops_tensor_retain(input) : ops_reshape(input, OPS_INTS(-1, in_f)));
    AG_STEP(c, ops_t(a));
    r = ops_mm(c, b);
done:
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
    return r;
}

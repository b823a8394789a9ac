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
#include "ops_op_flatten.h"
#include "ops_op_matmul.h"
#include "ops_op_max_pool2d_with_indices.h"
#include "ops_op_max_pool2d_with_indices_backward.h"
#include "ops_op_mean.h"
#include "ops_op_mm.h"
#include "ops_op_mul.h"
#include "ops_op_narrow.h"
#include "ops_op_native_layer_norm.h"
#include "ops_op_native_layer_norm_backward.h"
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

/* layer_norm's gradient for input (which 0), weight (1) or bias (2), from the
 * normalized input x^ = (x - mean) * rstd over the last k = normalized_shape.len dims:
 * dx = rstd * (gw - mean(gw) - x^ * mean(gw * x^)) with gw = g * weight;
 * dweight = sum over the leading dims of g * x^; dbias = sum of g. */
ops_tensor *
ops_autograd_layer_norm_backward(const ops_tensor *g, const ops_tensor *x, ops_int_list normalized_shape,
                                 const ops_tensor *weight, double eps, int64_t which)
{
    const int64_t k = normalized_shape.len;
    int64_t dims_v[OPS_MAX_DIMS];
    if (k < 1 || k > x->ndim)
        return ops_fail_null(OPS_ERR_VALUE, "layer_norm_backward: bad normalized_shape");
    for (int64_t i = 0; i < k; i++)
        dims_v[i] = i - k;
    const ops_int_list dims = {dims_v, k};
    if (which == 2)
        return ops_autograd_reduce_to(g, (int)k, x->sizes + x->ndim - k);
    ops_tensor *mean = NULL, *xc = NULL, *sq = NULL, *var = NULL, *ve = NULL, *rstd = NULL, *xhat = NULL;
    ops_tensor *t1 = NULL, *gw = NULL, *m1 = NULL, *t2 = NULL, *m2 = NULL, *t3 = NULL, *t4 = NULL, *t5 = NULL;
    ops_tensor *r = NULL;
    if (!ops_grad_enabled()) {
        /* nothing records (no create_graph): x^, mean and rstd from one fused pass of
         * the forward (native_layer_norm without weight and bias) */
        if (ops_native_layer_norm(x, normalized_shape, NULL, NULL, eps, &xhat, &mean, &rstd) != OPS_OK)
            goto done;
    } else {
        /* as ops, so that x^ and rstd carry their gradients for double backward
         * (native_layer_norm's mean and rstd do not) */
        AG_STEP(mean, ops_mean_dim(x, &dims, true, OPS_DTYPE_NONE));
        AG_STEP(xc, ops_sub(x, mean, OPS_SCALAR_INT(1)));
        AG_STEP(sq, ops_mul(xc, xc));
        AG_STEP(var, ops_mean_dim(sq, &dims, true, OPS_DTYPE_NONE));
        AG_STEP(ve, ops_add_scalar(var, OPS_SCALAR_FLOAT(eps), OPS_SCALAR_INT(1)));
        AG_STEP(rstd, ops_rsqrt(ve));
        AG_STEP(xhat, ops_mul(xc, rstd));
    }
    if (which == 1) {
        AG_STEP(t1, ops_mul(g, xhat));
        r = ops_autograd_reduce_to(t1, (int)k, x->sizes + x->ndim - k);
        goto done;
    }
    AG_STEP(gw, weight != NULL ? ops_mul(g, weight) : ops_tensor_retain(g));
    AG_STEP(m1, ops_mean_dim(gw, &dims, true, OPS_DTYPE_NONE));
    AG_STEP(t2, ops_mul(gw, xhat));
    AG_STEP(m2, ops_mean_dim(t2, &dims, true, OPS_DTYPE_NONE));
    AG_STEP(t3, ops_sub(gw, m1, OPS_SCALAR_INT(1)));
    AG_STEP(t4, ops_mul(xhat, m2));
    AG_STEP(t5, ops_sub(t3, t4, OPS_SCALAR_INT(1)));
    r = ops_mul(t5, rstd);
done:;
    ops_tensor *const all[] = {mean, xc, sq, var, ve, rstd, xhat, t1, gw, m1, t2, m2, t3, t4, t5};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
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
    if (ops_grad_enabled()) {
        /* create_graph: the composed formula, whose every step records */
        for (int k = 0; k < 3; k++)
            if (mask.data[k] && (v.data[k] = ops_autograd_layer_norm_backward(g, x, normalized_shape, weight, eps,
                                                                               k)) == NULL) {
                st = ops_last_status();
                goto done;
            }
        goto done;
    }
    ops_tensor *var = NULL, *mu = NULL, *ve = NULL, *rs = NULL, *r[3] = {0};
    if (mean == NULL) {
        /* layer_norm keeps no statistics: the row moments again (one reduction), as the
         * forward computed them */
        const int64_t k = normalized_shape.len;
        int64_t dims_v[OPS_MAX_DIMS];
        if (k < 1 || k > x->ndim) {
            st = ops_fail(OPS_ERR_VALUE, "%s: bad normalized_shape", op);
            goto done;
        }
        for (int64_t i = 0; i < k; i++)
            dims_v[i] = i - k;
        const ops_int_list dims = {dims_v, k};
        const ops_scalar zero = OPS_SCALAR_INT(0);
        if ((st = ops_var_mean_correction(x, &dims, &zero, true, &var, &mu)) != OPS_OK)
            goto done;
        if ((ve = ops_add_scalar(var, OPS_SCALAR_FLOAT(eps), OPS_SCALAR_INT(1))) == NULL ||
            (rs = ops_rsqrt(ve)) == NULL) {
            st = ops_last_status();
            goto stats_done;
        }
        mean = mu;
        rstd = rs;
    }
    st = ops_native_layer_norm_backward(g, x, normalized_shape, mean, rstd, weight, bias, mask, &r[0], &r[1], &r[2]);
    for (int k = 0; k < 3 && st == OPS_OK; k++) {
        if (mask.data[k])
            v.data[k] = r[k];
        else
            ops_tensor_release(r[k]);
    }
stats_done:
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

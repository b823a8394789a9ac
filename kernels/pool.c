/* Pooling: the drivers of every device (the schema's `CPU, CUDA: pool_*`) of
 * max_pool1d, max_pool2d, max_pool2d_with_indices, avg_pool1d, avg_pool2d,
 * adaptive_avg_pool2d, adaptive_max_pool2d, max_pool1d_with_indices and
 * adaptive_max_pool1d (a composition of adaptive_max_pool2d).
 *
 * Every op is a 2-D pooling over (N, C, H, W) planes (ops_pool_geom): a 1-D op has
 * height 1 and an unbatched input a batch of 1.  The drivers check, size and allocate;
 * the windows and the backward scatter are the stubs of kernels/pool.h (the CPU loops
 * in kernels/cpu/pool.c, the CUDA kernels in kernels/cuda/pool.cu).  Results are fresh
 * contiguous tensors, one plane per (n, c).  The output-size rule and the argument
 * checks follow PyTorch's pooling_output_shape and pool2d_shape_check, including
 * ceil_mode's rule that the last window must start inside the input or its left
 * padding.  out= forms compute the result first and copy it into out (resized when
 * its shape differs), so a failure leaves out as it was.
 *
 * The max pools' backward ops are in kernels/pool_backward.c. */
#include <math.h>
#include <string.h>

#include "kernels/pool.h"
#include "ops_dispatch.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_functions_creation.h"
#include "ops_functions_pool.h"
#include "ops_kernels_pool.h"

/* the geometry (kernels/nn_common.h), shared with the loops */
typedef ops_pool_geom pool_geom;

/* ---- shapes ------------------------------------------------------------------------ */

static int64_t
div_floor(int64_t a, int64_t b)
{
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

/* PyTorch's pooling_output_shape_pad_lr, with its checks. */
static ops_status
pool_out_size(const char *op, int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode,
              int64_t *out)
{
    if (stride == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: stride should not be zero", op);
    if (pad < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: pad must be non-negative, but got pad: %lld", op, (long long)pad);
    if (pad > ((k - 1) * dil + 1) / 2)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld "
                        "and dilation=%lld",
                        op, (long long)pad, (long long)k, (long long)dil);
    int64_t o = div_floor(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
    if (ceil_mode && (o - 1) * stride >= in + pad)
        o--;
    *out = o;
    return OPS_OK;
}

/* Input planes: (nb, c, ih, iw) and their strides from a 2-D op's 3-D/4-D input or a
 * 1-D op's 2-D/3-D one. */
static void
pool_planes(pool_geom *g, const ops_tensor *self)
{
    const int nd = self->ndim;
    g->batched = nd == g->nsp + 2;
    g->dt = self->dtype;
    g->nb = g->batched ? self->sizes[0] : 1;
    g->xs[0] = g->batched ? self->strides[0] : 0;
    g->c = self->sizes[nd - g->nsp - 1];
    g->xs[1] = self->strides[nd - g->nsp - 1];
    g->ih = g->nsp == 2 ? self->sizes[nd - 2] : 1;
    g->xs[2] = g->nsp == 2 ? self->strides[nd - 2] : 0;
    g->iw = self->sizes[nd - 1];
    g->xs[3] = self->strides[nd - 1];
}

/* pool2d_shape_check (the input-dims, kernel, stride, dilation, padding and output-size
 * checks) on the 2-D geometry in g. */
static ops_status
pool2d_shape_check(const pool_geom *g, const ops_tensor *self)
{
    const char *op = g->op;
    char buf[OPS_SHAPE_STR_LEN];
    if (g->kh <= 0 || g->kw <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: kernel size should be greater than zero, but got kH: %lld kW: %lld", op,
                        (long long)g->kh, (long long)g->kw);
    if (g->sh <= 0 || g->sw <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: stride should be greater than zero, but got dH: %lld dW: %lld", op,
                        (long long)g->sh, (long long)g->sw);
    if (g->dh <= 0 || g->dw <= 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: dilation should be greater than zero, but got dilationH: %lld dilationW: %lld", op,
                        (long long)g->dh, (long long)g->dw);
    const int nd = self->ndim;
    const bool valid = (nd == 3 && self->sizes[0] != 0 && self->sizes[1] != 0 && self->sizes[2] != 0) ||
                       (nd == 4 && self->sizes[1] != 0 && self->sizes[2] != 0 && self->sizes[3] != 0);
    if (!valid)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                        "got:%s",
                        op, ops_shape_str(nd, self->sizes, buf, sizeof buf));
    if (g->kw / 2 < g->pw || g->kh / 2 < g->ph)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: pad should be smaller than or equal to half of kernel size, but got padW = %lld, padH = "
                        "%lld, kW = %lld, kH = %lld",
                        op, (long long)g->pw, (long long)g->ph, (long long)g->kw, (long long)g->kh);
    if (g->ow < 1 || g->oh < 1)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output "
                        "size is too small",
                        op, (long long)g->c, (long long)g->ih, (long long)g->iw, (long long)g->c, (long long)g->oh,
                        (long long)g->ow);
    return OPS_OK;
}

/* A 2-D op's int list: one value for both dims, or one per dim. */
static void
pair(ops_int_list l, int64_t *a, int64_t *b)
{
    *a = l.data[0];
    *b = l.len == 1 ? l.data[0] : l.data[1];
}

/* The 2-D ops' kernel_size/stride/padding(/dilation) checks and output size
 * (max_pool2d's and avg_pool2d's meta functions). */
static ops_status
pool2d_setup(pool_geom *g, const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
             ops_int_list padding, const ops_int_list *dilation, bool ceil_mode)
{
    const char *op = g->op;
    char buf[OPS_SHAPE_STR_LEN];
    if (kernel_size.len != 1 && kernel_size.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: kernel_size must either be a single int, or a tuple of two ints", op);
    if (stride.len != 0 && stride.len != 1 && stride.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: stride must either be omitted, a single int, or a tuple of two ints", op);
    if (padding.len != 1 && padding.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: padding must either be a single int, or a tuple of two ints", op);
    if (dilation != NULL && dilation->len != 1 && dilation->len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: dilation must be either a single int, or a tuple of two ints", op);
    pair(kernel_size, &g->kh, &g->kw);
    if (stride.len == 0)
        g->sh = g->kh, g->sw = g->kw;
    else
        pair(stride, &g->sh, &g->sw);
    pair(padding, &g->ph, &g->pw);
    g->dh = g->dw = 1;
    if (dilation != NULL)
        pair(*dilation, &g->dh, &g->dw);
    if (self->ndim != 3 && self->ndim != 4) {
        if (dilation != NULL) /* max_pool2d's meta */
            return ops_fail(OPS_ERR_SHAPE, "%s: non-empty 3D or 4D (batch mode) tensor expected for input", op);
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                        "got:%s",
                        op, ops_shape_str(self->ndim, self->sizes, buf, sizeof buf));
    }
    g->nsp = 2;
    g->ceil_mode = ceil_mode;
    pool_planes(g, self);
    ops_status st;
    if ((st = pool_out_size(op, g->ih, g->kh, g->ph, g->sh, g->dh, ceil_mode, &g->oh)) != OPS_OK ||
        (st = pool_out_size(op, g->iw, g->kw, g->pw, g->sw, g->dw, ceil_mode, &g->ow)) != OPS_OK)
        return st;
    return pool2d_shape_check(g, self);
}

/* ---- the driver -------------------------------------------------------------------- */

/* Pool self as g describes into new tensors: *values (and *indices when indices is not
 * NULL; max pooling only). */
static ops_status
pool_run(const pool_geom *g, const ops_tensor *self, bool is_max, ops_tensor **values, ops_tensor **indices)
{
    ops_status st = OPS_OK;
    ops_tensor *v = NULL, *ix = NULL;
    int64_t rs[4];
    int rnd = 0;
    if (g->batched)
        rs[rnd++] = g->nb;
    rs[rnd++] = g->c;
    if (g->nsp == 2)
        rs[rnd++] = g->oh;
    rs[rnd++] = g->ow;
    const ops_device dev = ops_tensor_device(self);
    if ((v = ops_tensor_new(g->op, rnd, rs, NULL, g->dt, dev)) == NULL ||
        (indices != NULL && (ix = ops_tensor_new(g->op, rnd, rs, NULL, OPS_INT64, dev)) == NULL)) {
        st = ops_last_status();
        goto done;
    }
    if (ops_shape_numel(rnd, rs) > 0 &&
        (st = OPS_STUB_CALL(pool_windows, dev, g->op, g, is_max, self, v, ix)) != OPS_OK)
        goto done;
    *values = v;
    v = NULL;
    if (indices != NULL) {
        *indices = ix;
        ix = NULL;
    }
done:
    ops_tensor_release(v);
    ops_tensor_release(ix);
    return st;
}

/* dt among the dtypes an op's entry declares (`dtypes:`: PyTorch's CPU kernels'), its
 * OPS_DTYPE_MASK_<ENTRY>, which each kernel below passes down as `declared`. */
static ops_status
pool_check_dtype(const char *op, ops_dtype dt, unsigned mask)
{
    if (!(mask & OPS_DTYPE_BIT(dt)))
        return ops_fail_dtype(op, dt, mask);
    return OPS_OK;
}

/* The out= checks made before anything is computed: out's dtype (want; int64 for
 * indices) and, for an out of the result's shape, that its elements do not overlap. */
static ops_status
pool_check_out(const char *op, const char *name, const ops_tensor *out, ops_dtype want)
{
    if (out->dtype != want)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                        ops_dtype_name(want), ops_dtype_name(out->dtype));
    if (ops_tensor_has_internal_overlap(out))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor (%s) refers to "
                        "a single memory location. Please clone() the tensor before performing the operation.",
                        op, name);
    return OPS_OK;
}

/* Copies the computed (values, indices) into (out, out_idx) (releasing them): both outs
 * are resized first, so a failed resize leaves both as they were. */
static ops_status
pool_write_two(const char *op, ops_tensor *v, ops_tensor *ix, ops_tensor *out, ops_tensor *out_idx)
{
    ops_status st = OPS_OK;
    const int nd0 = out->ndim;
    int64_t sz0[OPS_MAX_DIMS], st0[OPS_MAX_DIMS];
    memcpy(sz0, out->sizes, sizeof sz0);
    memcpy(st0, out->strides, sizeof st0);
    const bool same0 = out->ndim == v->ndim && memcmp(out->sizes, v->sizes, (size_t)v->ndim * sizeof(int64_t)) == 0;
    const bool same1 =
        out_idx->ndim == ix->ndim && memcmp(out_idx->sizes, ix->sizes, (size_t)ix->ndim * sizeof(int64_t)) == 0;
    if (!same0 && (st = ops_tensor_resize_(op, out, v->ndim, v->sizes)) != OPS_OK)
        goto done;
    if (!same1 && (st = ops_tensor_resize_(op, out_idx, ix->ndim, ix->sizes)) != OPS_OK) {
        /* give out its old geometry back (its storage may have grown; that is invisible) */
        out->ndim = nd0;
        memcpy(out->sizes, sz0, sizeof sz0);
        memcpy(out->strides, st0, sizeof st0);
        goto done;
    }
    if ((st = ops_copy_values(op, out, v)) != OPS_OK || (st = ops_copy_values(op, out_idx, ix)) != OPS_OK)
        goto done;
    ops_tensor_bump_version(out);
    ops_tensor_bump_version(out_idx);
done:
    ops_tensor_release(v);
    ops_tensor_release(ix);
    return st;
}

/* ---- max_pool2d, max_pool2d_with_indices, max_pool1d ------------------------------- */

/* The pools' `check:` functions (the entries' argument checks, which PyTorch makes
 * before the dtype: the glue runs them, then refuses an undeclared dtype): the sizes,
 * and an out= form's outs first.  The drivers run the same checks again as a guard
 * for a direct call. */

static ops_status
max_pool2d_geom(pool_geom *g, const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                ops_int_list padding, ops_int_list dilation, bool ceil_mode)
{
    return pool2d_setup(g, self, kernel_size, stride, padding, &dilation, ceil_mode);
}

static ops_status
max_pool2d_outs_check(const char *op, const ops_tensor *self, const ops_tensor *out, const ops_tensor *indices)
{
    ops_status st;
    if ((st = pool_check_out(op, "out", out, self->dtype)) != OPS_OK ||
        (st = pool_check_out(op, "indices", indices, OPS_INT64)) != OPS_OK)
        return st;
    if (ops_tensor_may_overlap(out, indices))
        return ops_fail(OPS_ERR_VALUE, "%s: out and indices must not share memory", op);
    return OPS_OK;
}

ops_status
ops_check_max_pool2d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                     ops_int_list dilation, bool ceil_mode)
{
    pool_geom g = {.op = "max_pool2d"};
    return max_pool2d_geom(&g, self, kernel_size, stride, padding, dilation, ceil_mode);
}

ops_status
ops_check_max_pool2d_with_indices(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                                  ops_int_list padding, ops_int_list dilation, bool ceil_mode)
{
    pool_geom g = {.op = "max_pool2d_with_indices"};
    return max_pool2d_geom(&g, self, kernel_size, stride, padding, dilation, ceil_mode);
}

ops_status
ops_check_max_pool2d_with_indices_out(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                                      ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor *out,
                                      ops_tensor *indices)
{
    pool_geom g = {.op = "max_pool2d_with_indices"};
    ops_status st = max_pool2d_outs_check(g.op, self, out, indices);
    return st != OPS_OK ? st : max_pool2d_geom(&g, self, kernel_size, stride, padding, dilation, ceil_mode);
}

static ops_status
max_pool2d_core(const char *op, unsigned declared, const ops_tensor *self, ops_int_list kernel_size,
                ops_int_list stride, ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor **values,
                ops_tensor **indices)
{
    pool_geom g = {.op = op};
    ops_status st;
    if ((st = max_pool2d_geom(&g, self, kernel_size, stride, padding, dilation, ceil_mode)) != OPS_OK ||
        (st = pool_check_dtype(op, self->dtype, declared)) != OPS_OK)
        return st;
    return pool_run(&g, self, true, values, indices);
}

ops_tensor *
pool_max_pool2d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                ops_int_list dilation, bool ceil_mode)
{
    ops_tensor *r = NULL;
    max_pool2d_core("max_pool2d", OPS_DTYPE_MASK_MAX_POOL2D, self, kernel_size, stride, padding, dilation, ceil_mode,
                    &r, NULL);
    return r;
}

ops_status
pool_max_pool2d_with_indices(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                             ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor **result0,
                             ops_tensor **result1)
{
    ops_tensor *v = NULL, *ix = NULL;
    ops_status st = max_pool2d_core("max_pool2d_with_indices", OPS_DTYPE_MASK_MAX_POOL2D_WITH_INDICES, self,
                                    kernel_size, stride, padding, dilation, ceil_mode, &v, &ix);
    if (st == OPS_OK) {
        *result0 = v;
        *result1 = ix;
    }
    return st;
}

ops_status
pool_max_pool2d_with_indices_out(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                                 ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor *out,
                                 ops_tensor *indices)
{
    const char *op = "max_pool2d_with_indices";
    ops_tensor *v = NULL, *ix = NULL;
    ops_status st;
    if ((st = max_pool2d_outs_check(op, self, out, indices)) != OPS_OK)
        return st;
    if ((st = max_pool2d_core(op, OPS_DTYPE_MASK_MAX_POOL2D_WITH_INDICES_OUT, self, kernel_size, stride, padding,
                              dilation, ceil_mode, &v, &ix)) != OPS_OK)
        return st;
    return pool_write_two(op, v, ix, out, indices);
}

/* PyTorch's check_max_pool1d and the output size, into *g. */
static ops_status
max_pool1d_geom(pool_geom *gp, const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                ops_int_list padding, ops_int_list dilation, bool ceil_mode)
{
    const char *op = gp->op;
    char buf[OPS_SHAPE_STR_LEN];
    const int nd = self->ndim;
    if (!((nd == 2 && self->sizes[0] != 0 && self->sizes[1] != 0) ||
          (nd == 3 && self->sizes[1] != 0 && self->sizes[2] != 0)))
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
                        "but got:%s",
                        op, ops_shape_str(nd, self->sizes, buf, sizeof buf));
    if (kernel_size.len != 1)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 "
                        "but got size %lld",
                        op, (long long)kernel_size.len);
    if (stride.len != 0 && stride.len != 1)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 "
                        "but got size %lld",
                        op, (long long)stride.len);
    if (padding.len != 1)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but "
                        "got size %lld",
                        op, (long long)padding.len);
    if (dilation.len != 1)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but "
                        "got size %lld",
                        op, (long long)dilation.len);
    const int64_t k = kernel_size.data[0], s = stride.len ? stride.data[0] : k, p = padding.data[0],
                  d = dilation.data[0];
    if (k <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: max_pool1d() kernel_size must be greater than zero, but got %lld", op,
                        (long long)k);
    if (s <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: max_pool1d() stride must be greater than zero, but got %lld", op,
                        (long long)s);
    if (p < 0)
        return ops_fail(OPS_ERR_VALUE, "%s: max_pool1d() padding must be non-negative, but got %lld", op,
                        (long long)p);
    if (p > k / 2)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: max_pool1d() padding should be at most half of kernel size, but got padding=%lld "
                        "and kernel_size=%lld",
                        op, (long long)p, (long long)k);
    if (d <= 0)
        return ops_fail(OPS_ERR_VALUE, "%s: max_pool1d() dilation must be greater than zero, but got %lld", op,
                        (long long)d);
    pool_geom g = {.op = op, .nsp = 1, .ceil_mode = ceil_mode};
    pool_planes(&g, self);
    g.kh = g.sh = g.dh = 1;
    g.ph = 0;
    g.kw = k, g.sw = s, g.pw = p, g.dw = d;
    g.oh = 1;
    if (pool_out_size(op, g.iw, k, p, s, d, ceil_mode, &g.ow) != OPS_OK)
        return ops_last_status();
    if (g.ow <= 0)
        return ops_fail(OPS_ERR_SHAPE, "%s: max_pool1d() Invalid computed output size: %lld", op,
                        (long long)g.ow);
    *gp = g;
    return OPS_OK;
}

ops_status
ops_check_max_pool1d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                     ops_int_list dilation, bool ceil_mode)
{
    pool_geom g = {.op = "max_pool1d"};
    return max_pool1d_geom(&g, self, kernel_size, stride, padding, dilation, ceil_mode);
}

ops_status
ops_check_max_pool1d_with_indices(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                                  ops_int_list padding, ops_int_list dilation, bool ceil_mode)
{
    pool_geom g = {.op = "max_pool1d_with_indices"};
    return max_pool1d_geom(&g, self, kernel_size, stride, padding, dilation, ceil_mode);
}

/* max_pool1d_geom, the dtype, then the pool (indices too when asked). */
static ops_status
max_pool1d_core(const char *op, unsigned declared, const ops_tensor *self, ops_int_list kernel_size,
                ops_int_list stride, ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor **values,
                ops_tensor **indices)
{
    pool_geom g = {.op = op};
    ops_status st;
    if ((st = max_pool1d_geom(&g, self, kernel_size, stride, padding, dilation, ceil_mode)) != OPS_OK ||
        (st = pool_check_dtype(op, self->dtype, declared)) != OPS_OK)
        return st;
    return pool_run(&g, self, true, values, indices);
}

ops_tensor *
pool_max_pool1d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                ops_int_list dilation, bool ceil_mode)
{
    ops_tensor *r = NULL;
    max_pool1d_core("max_pool1d", OPS_DTYPE_MASK_MAX_POOL1D, self, kernel_size, stride, padding, dilation, ceil_mode,
                    &r, NULL);
    return r;
}

/* The indices are offsets along the last dim (the plane has height 1). */
ops_status
pool_max_pool1d_with_indices(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                             ops_int_list padding, ops_int_list dilation, bool ceil_mode, ops_tensor **result0,
                             ops_tensor **result1)
{
    ops_tensor *v = NULL, *ix = NULL;
    ops_status st = max_pool1d_core("max_pool1d_with_indices", OPS_DTYPE_MASK_MAX_POOL1D_WITH_INDICES, self,
                                    kernel_size, stride, padding, dilation, ceil_mode, &v, &ix);
    if (st == OPS_OK) {
        *result0 = v;
        *result1 = ix;
    }
    return st;
}

/* ---- avg_pool2d, avg_pool1d ---------------------------------------------------------- */

/* avg_pool2d's argument checks and output size, into *g (g->op, g->count_include_pad set). */
static ops_status
avg_pool2d_geom(pool_geom *g, const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                ops_int_list padding, bool ceil_mode, const int64_t *divisor_override)
{
    const char *op = g->op;
    if (kernel_size.len != 1 && kernel_size.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: kernel_size must either be a single int, or a tuple of two ints", op);
    if (stride.len != 0 && stride.len != 1 && stride.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: stride must either be omitted, a single int, or a tuple of two ints",
                        op);
    if (padding.len != 1 && padding.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: padding must either be a single int, or a tuple of two ints", op);
    if (divisor_override != NULL && *divisor_override == 0)
        return ops_fail(OPS_ERR_VALUE, "%s: divisor must be not zero", op);
    g->divisor = divisor_override != NULL ? *divisor_override : 0;
    return pool2d_setup(g, self, kernel_size, stride, padding, NULL, ceil_mode);
}

ops_status
ops_check_avg_pool2d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                     bool ceil_mode, bool count_include_pad, const int64_t *divisor_override)
{
    pool_geom g = {.op = "avg_pool2d", .count_include_pad = count_include_pad};
    return avg_pool2d_geom(&g, self, kernel_size, stride, padding, ceil_mode, divisor_override);
}

ops_status
ops_check_avg_pool2d_out(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                         bool ceil_mode, bool count_include_pad, const int64_t *divisor_override, ops_tensor *out)
{
    ops_status st = pool_check_out("avg_pool2d", "out", out, self->dtype);
    return st != OPS_OK ? st
                        : ops_check_avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                               divisor_override);
}

static ops_tensor *
avg_pool2d_core(const char *op, unsigned declared, const ops_tensor *self, ops_int_list kernel_size,
                ops_int_list stride, ops_int_list padding, bool ceil_mode, bool count_include_pad,
                const int64_t *divisor_override)
{
    pool_geom g = {.op = op, .count_include_pad = count_include_pad};
    if (avg_pool2d_geom(&g, self, kernel_size, stride, padding, ceil_mode, divisor_override) != OPS_OK ||
        pool_check_dtype(op, self->dtype, declared) != OPS_OK)
        return NULL;
    ops_tensor *r = NULL;
    pool_run(&g, self, false, &r, NULL);
    return r;
}

ops_tensor *
pool_avg_pool2d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                bool ceil_mode, bool count_include_pad, const int64_t *divisor_override)
{
    return avg_pool2d_core("avg_pool2d", OPS_DTYPE_MASK_AVG_POOL2D, self, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override);
}

ops_status
pool_avg_pool2d_out(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                    bool ceil_mode, bool count_include_pad, const int64_t *divisor_override, ops_tensor *out)
{
    const char *op = "avg_pool2d";
    ops_status st = pool_check_out(op, "out", out, self->dtype);
    if (st != OPS_OK)
        return st;
    return ops_write_out(
        op,
        avg_pool2d_core(op, OPS_DTYPE_MASK_AVG_POOL2D_OUT, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override),
        out);
}

/* PyTorch's avg_pool1d: avg_pool2d over a height of 1; its checks and output size into
 * *g (g->op, g->count_include_pad set), the dtype's excepted. */
static ops_status
avg_pool1d_geom(pool_geom *g, const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride,
                ops_int_list padding, bool ceil_mode)
{
    const char *op = g->op;
    if (self->ndim < 2 || self->ndim > 3)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected 2 to 3 dimensions, but got %d-dimensional tensor for argument #1 'self' "
                        "(while checking arguments for avg_pool1d)",
                        op, (int)self->ndim);
    static const char *const names[3] = {"kernel_size", "stride", "padding"};
    const ops_int_list lists[3] = {kernel_size, stride.len ? stride : kernel_size, padding};
    for (int i = 0; i < 3; i++)
        if (lists[i].len != 1)
            return ops_fail(OPS_ERR_VALUE, "%s: avg_pool1d() argument '%s' should contain one int (got %lld)", op,
                            names[i], (long long)lists[i].len);
    /* the 2-D checks, on the input seen as (.., C, 1, W) */
    int64_t sz[4], sd[4];
    const int nd = self->ndim;
    for (int i = 0; i < nd - 1; i++)
        sz[i] = self->sizes[i], sd[i] = self->strides[i];
    sz[nd - 1] = 1, sd[nd - 1] = 0;
    sz[nd] = self->sizes[nd - 1], sd[nd] = self->strides[nd - 1];
    ops_tensor v = ops_borrowed_view(self, nd + 1, sz, sd, self->offset);
    const int64_t k2[2] = {1, kernel_size.data[0]}, s2[2] = {1, lists[1].data[0]}, p2[2] = {0, padding.data[0]};
    ops_status st = pool2d_setup(g, &v, (ops_int_list){k2, 2}, (ops_int_list){s2, 2}, (ops_int_list){p2, 2}, NULL,
                                 ceil_mode);
    g->nsp = 1; /* a 1-D result */
    return st;
}

ops_status
ops_check_avg_pool1d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                     bool ceil_mode, bool count_include_pad)
{
    pool_geom g = {.op = "avg_pool1d", .count_include_pad = count_include_pad};
    return avg_pool1d_geom(&g, self, kernel_size, stride, padding, ceil_mode);
}

ops_tensor *
pool_avg_pool1d(const ops_tensor *self, ops_int_list kernel_size, ops_int_list stride, ops_int_list padding,
                bool ceil_mode, bool count_include_pad)
{
    const char *op = "avg_pool1d";
    pool_geom g = {.op = op, .count_include_pad = count_include_pad};
    if (avg_pool1d_geom(&g, self, kernel_size, stride, padding, ceil_mode) != OPS_OK ||
        pool_check_dtype(op, self->dtype, OPS_DTYPE_MASK_AVG_POOL1D) != OPS_OK)
        return NULL;
    ops_tensor *r = NULL;
    pool_run(&g, self, false, &r, NULL);
    return r;
}

/* ---- adaptive_avg_pool2d, adaptive_max_pool2d ---------------------------------------- */

static ops_status
adaptive_geom(pool_geom *g, const ops_tensor *self, ops_int_list output_size, bool is_max)
{
    const char *op = g->op;
    char buf[OPS_SHAPE_STR_LEN];
    const int nd = self->ndim;
    if (!is_max && output_size.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: output_size must be 2", op);
    if (nd != 3 && nd != 4)
        return ops_fail(OPS_ERR_SHAPE, "%s: %s(): Expected 3D or 4D tensor, but got%s %s", op, op, is_max ? ":" : "",
                        ops_shape_str(nd, self->sizes, buf, sizeof buf));
    for (int i = 1; i < nd; i++)
        if (self->sizes[i] <= 0 && (is_max || i >= nd - 2))
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: %s(): Expected input to have non-zero size for non-batch dimensions, but input has "
                            "sizes %s with dimension %d being empty",
                            op, op, ops_shape_str(nd, self->sizes, buf, sizeof buf), i);
    if (is_max && output_size.len != 2)
        return ops_fail(OPS_ERR_VALUE, "%s: %s(): internal error: output_size.size() must be 2", op, op);
    if (output_size.data[0] < 0 || output_size.data[1] < 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: elements of output_size must be greater than or equal to 0 but received {%lld, %lld}",
                        op, (long long)output_size.data[0], (long long)output_size.data[1]);
    g->nsp = 2;
    g->adaptive = true;
    pool_planes(g, self);
    g->oh = output_size.data[0];
    g->ow = output_size.data[1];
    /* the grain estimate reads kh * kw: the largest window */
    g->kh = g->oh > 0 ? ops_ceil_div_i64(g->ih, g->oh) + 1 : 1;
    g->kw = g->ow > 0 ? ops_ceil_div_i64(g->iw, g->ow) + 1 : 1;
    return OPS_OK;
}

/* adaptive_geom, then the dtype among declared. */
static ops_status
adaptive_setup(pool_geom *g, unsigned declared, const ops_tensor *self, ops_int_list output_size, bool is_max)
{
    ops_status st = adaptive_geom(g, self, output_size, is_max);
    return st != OPS_OK ? st : pool_check_dtype(g->op, self->dtype, declared);
}

ops_status
ops_check_adaptive_avg_pool2d(const ops_tensor *self, ops_int_list output_size)
{
    pool_geom g = {.op = "adaptive_avg_pool2d"};
    return adaptive_geom(&g, self, output_size, false);
}

ops_status
ops_check_adaptive_avg_pool2d_out(const ops_tensor *self, ops_int_list output_size, ops_tensor *out)
{
    ops_status st = pool_check_out("adaptive_avg_pool2d", "out", out, self->dtype);
    return st != OPS_OK ? st : ops_check_adaptive_avg_pool2d(self, output_size);
}

ops_status
ops_check_adaptive_max_pool2d(const ops_tensor *self, ops_int_list output_size)
{
    pool_geom g = {.op = "adaptive_max_pool2d"};
    return adaptive_geom(&g, self, output_size, true);
}

ops_status
ops_check_adaptive_max_pool2d_out(const ops_tensor *self, ops_int_list output_size, ops_tensor *out,
                                  ops_tensor *indices)
{
    ops_status st = max_pool2d_outs_check("adaptive_max_pool2d", self, out, indices);
    return st != OPS_OK ? st : ops_check_adaptive_max_pool2d(self, output_size);
}

static ops_tensor *
adaptive_avg_core(unsigned declared, const ops_tensor *self, ops_int_list output_size)
{
    pool_geom g = {.op = "adaptive_avg_pool2d"};
    if (adaptive_setup(&g, declared, self, output_size, false) != OPS_OK)
        return NULL;
    ops_tensor *r = NULL;
    pool_run(&g, self, false, &r, NULL);
    return r;
}

ops_tensor *
pool_adaptive_avg_pool2d(const ops_tensor *self, ops_int_list output_size)
{
    return adaptive_avg_core(OPS_DTYPE_MASK_ADAPTIVE_AVG_POOL2D, self, output_size);
}

ops_status
pool_adaptive_avg_pool2d_out(const ops_tensor *self, ops_int_list output_size, ops_tensor *out)
{
    ops_status st = pool_check_out("adaptive_avg_pool2d", "out", out, self->dtype);
    if (st != OPS_OK)
        return st;
    return ops_write_out("adaptive_avg_pool2d",
                         adaptive_avg_core(OPS_DTYPE_MASK_ADAPTIVE_AVG_POOL2D_OUT, self, output_size), out);
}

static ops_status
adaptive_max_core(unsigned declared, const ops_tensor *self, ops_int_list output_size, ops_tensor **v, ops_tensor **ix)
{
    pool_geom g = {.op = "adaptive_max_pool2d"};
    ops_status st = adaptive_setup(&g, declared, self, output_size, true);
    if (st != OPS_OK)
        return st;
    return pool_run(&g, self, true, v, ix);
}

ops_status
pool_adaptive_max_pool2d(const ops_tensor *self, ops_int_list output_size, ops_tensor **result0, ops_tensor **result1)
{
    ops_tensor *v = NULL, *ix = NULL;
    ops_status st = adaptive_max_core(OPS_DTYPE_MASK_ADAPTIVE_MAX_POOL2D, self, output_size, &v, &ix);
    if (st == OPS_OK) {
        *result0 = v;
        *result1 = ix;
    }
    return st;
}

ops_status
pool_adaptive_max_pool2d_out(const ops_tensor *self, ops_int_list output_size, ops_tensor *out, ops_tensor *indices)
{
    const char *op = "adaptive_max_pool2d";
    ops_tensor *v = NULL, *ix = NULL;
    ops_status st;
    if ((st = max_pool2d_outs_check(op, self, out, indices)) != OPS_OK)
        return st;
    if ((st = adaptive_max_core(OPS_DTYPE_MASK_ADAPTIVE_MAX_POOL2D_OUT, self, output_size, &v, &ix)) != OPS_OK)
        return st;
    return pool_write_two(op, v, ix, out, indices);
}

/* ---- adaptive_max_pool1d (CompositeExplicitAutograd) --------------------------------------
 * PyTorch's composition: adaptive_max_pool2d over [.., 1, L] with output [1, n], the
 * height dim squeezed off both results (indices h * L + w with h = 0: offsets along L). */
ops_status
adaptive_max_pool1d_impl(const ops_tensor *self, ops_int_list output_size, ops_tensor **result0,
                         ops_tensor **result1)
{
    const char *op = "adaptive_max_pool1d";
    char buf[OPS_SHAPE_STR_LEN];
    if (self->ndim != 2 && self->ndim != 3)
        return ops_fail(OPS_ERR_SHAPE, "%s: adaptive_max_pool1d(): Expected 2D or 3D tensor, but got: %s", op,
                        ops_shape_str(self->ndim, self->sizes, buf, sizeof buf));
    if (output_size.len != 1)
        return ops_fail(OPS_ERR_VALUE, "%s: adaptive_max_pool1d() argument 'output_size' should contain one int "
                        "(got %lld)", op, (long long)output_size.len);
    for (int i = 1; i < self->ndim; i++)
        if (self->sizes[i] <= 0)
            return ops_fail(OPS_ERR_SHAPE, "%s: adaptive_max_pool1d(): Expected input to have non-zero size for "
                            "non-batch dimensions, but input has sizes %s with dimension %d being empty", op,
                            ops_shape_str(self->ndim, self->sizes, buf, sizeof buf), i);
    const int64_t osz[2] = {1, output_size.data[0]};
    ops_tensor *x = NULL, *v = NULL, *ix = NULL, *v1 = NULL, *ix1 = NULL;
    ops_status st = OPS_OK;
    if ((x = ops_unsqueeze(self, -2)) == NULL ||
        (st = ops_adaptive_max_pool2d(x, (ops_int_list){osz, 2}, &v, &ix)) != OPS_OK ||
        (v1 = ops_squeeze_dim(v, -2)) == NULL || (ix1 = ops_squeeze_dim(ix, -2)) == NULL) {
        st = ops_last_status();
        ops_tensor_release(v1);
        ops_tensor_release(ix1);
    } else {
        *result0 = v1;
        *result1 = ix1;
    }
    ops_tensor_release(x);
    ops_tensor_release(v);
    ops_tensor_release(ix);
    return st;
}

/* ---- avg_pool2d's and adaptive_avg_pool2d's gradients --------------------------------- */

ops_status
pool_avg_backward_direct(const char *op, const ops_tensor *grad, int ndim, const int64_t *sizes, bool adaptive,
                         ops_int_list kernel_size, ops_int_list stride, ops_int_list padding, bool ceil_mode,
                         bool count_include_pad, const int64_t *divisor_override, ops_tensor **result)
{
    *result = NULL;
    const ops_device dev = ops_tensor_device(grad);
    if ((grad->dtype != OPS_FLOAT32 && grad->dtype != OPS_FLOAT64) || (ndim != 3 && ndim != 4) ||
        grad->ndim != ndim || OPS_STUB_GET(pool_avg_backward, dev) == NULL)
        return OPS_OK;
    pool_geom g = {.op = op, .nsp = 2, .adaptive = adaptive, .count_include_pad = count_include_pad, .dh = 1, .dw = 1};
    g.dt = grad->dtype;
    g.nb = ndim == 4 ? sizes[0] : 1;
    g.c = sizes[ndim - 3];
    g.ih = sizes[ndim - 2];
    g.iw = sizes[ndim - 1];
    g.oh = grad->sizes[ndim - 2];
    g.ow = grad->sizes[ndim - 1];
    for (int d = 0; d < ndim - 2; d++)
        if (grad->sizes[d] != sizes[d])
            return OPS_OK;
    if (adaptive) {
        g.kh = g.oh > 0 ? ops_ceil_div_i64(g.ih, g.oh) + 1 : 1;
        g.kw = g.ow > 0 ? ops_ceil_div_i64(g.iw, g.ow) + 1 : 1;
    } else {
        if ((kernel_size.len != 1 && kernel_size.len != 2) || (stride.len > 2) ||
            (padding.len != 1 && padding.len != 2))
            return OPS_OK;
        pair(kernel_size, &g.kh, &g.kw);
        if (stride.len == 0)
            g.sh = g.kh, g.sw = g.kw;
        else
            pair(stride, &g.sh, &g.sw);
        pair(padding, &g.ph, &g.pw);
        g.divisor = divisor_override != NULL ? *divisor_override : 0;
        int64_t oh, ow;
        /* the forward's checks passed with these; anything else (which would make
         * pool_out_size record an error) is left to the formula */
        if (g.kh <= 0 || g.kw <= 0 || g.sh <= 0 || g.sw <= 0 || g.ph < 0 || g.pw < 0 || g.ph > g.kh / 2 ||
            g.pw > g.kw / 2 || pool_out_size(op, g.ih, g.kh, g.ph, g.sh, 1, ceil_mode, &oh) != OPS_OK ||
            pool_out_size(op, g.iw, g.kw, g.pw, g.sw, 1, ceil_mode, &ow) != OPS_OK)
            return OPS_OK;
        if (oh != g.oh || ow != g.ow)
            return OPS_OK;
    }
    ops_status st = OPS_OK;
    ops_tensor *gc = ops_contiguous(grad, OPS_CONTIGUOUS_FORMAT), *r = NULL;
    if (gc == NULL || (r = ops_tensor_new(op, ndim, sizes, NULL, grad->dtype, dev)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    if (ops_tensor_numel(r) > 0 && (st = OPS_STUB_CALL(pool_avg_backward, dev, op, &g, gc, r)) != OPS_OK)
        goto done;
    *result = r;
    r = NULL;
done:
    ops_tensor_release(gc);
    ops_tensor_release(r);
    return st;
}

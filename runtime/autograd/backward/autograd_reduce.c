/* Backward helpers of the reductions, sorting ops and clamp (the RUNTIME_HELPERS of
 * section reductions2 in codegen/gen_autograd.py; declared in ops_autograd_impl.h):
 * the reduced dims of a dim list, sum and mean expanded back to the input's shape,
 * evenly distributed gradients of max/min/amax/amin/aminmax, value-selecting
 * reductions (max.dim, min.dim, kthvalue, sort, topk, msort), cummax/cummin, prod and
 * cumprod with zeros in the input, var/std with a correction, vector norms of any
 * order, and clamp with tensor bounds.
 *
 * Every helper is written with public ops (ops_*), never kernels: under create_graph
 * the ops record their own nodes, so the helpers' results are differentiable again
 * (double backward).  Masks (eq, isnan, cumsum of a bool tensor) are bool or integer
 * and carry no gradient.  Each helper follows PyTorch's formula of the same name
 * (torch/csrc/autograd/FunctionsManual.cpp); where ours is written differently (prod,
 * cumprod) the comment says why. */
#include <math.h>
#include <string.h>

#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_op_abs.h"
#include "ops_op_cumprod.h"
#include "ops_op_cumsum.h"
#include "ops_op_div.h"
#include "ops_op_eq.h"
#include "ops_op_expand.h"
#include "ops_op_flip.h"
#include "ops_op_ge.h"
#include "ops_op_gt.h"
#include "ops_op_isnan.h"
#include "ops_op_le.h"
#include "ops_op_logical_and.h"
#include "ops_op_logical_or.h"
#include "ops_op_lt.h"
#include "ops_op_mean.h"
#include "ops_op_mul.h"
#include "ops_op_pow.h"
#include "ops_op_prod.h"
#include "ops_op_reshape.h"
#include "ops_op_scatter.h"
#include "ops_op_scatter_add.h"
#include "ops_op_sign.h"
#include "ops_op_sub.h"
#include "ops_op_sum.h"
#include "ops_op_unsqueeze.h"
#include "ops_op_where.h"
#include "ops_op_zeros.h"
#include "ops_op_zeros_like.h"
#endif

/* Temporaries of one helper, released together at its single exit. */
#define NTMP 40
typedef struct {
    ops_tensor *t[NTMP];
    int n;
} tmps;

/* A dim list for sum.dim / mean.dim: NULL for every dim. */
static const ops_int_list *
dim_arg(const ops_int_list *dim)
{
    return dim != NULL && dim->len > 0 ? dim : NULL;
}

/* Keeps t (NULL on failure: the op set the error) and returns it. */
static ops_tensor *
keep(tmps *k, ops_tensor *t)
{
    if (t == NULL)
        return NULL;
    if (k->n == NTMP) { /* a helper outgrew NTMP: a bug here, reported, not a crash */
        ops_tensor_release(t);
        return ops_fail_null(OPS_ERR_RUNTIME, "autograd_reduce: more than %d temporaries", NTMP);
    }
    k->t[k->n++] = t;
    return t;
}

static void
tmps_release(tmps *k)
{
    for (int i = 0; i < k->n; i++)
        ops_tensor_release(k->t[i]);
    k->n = 0;
}

/* t (a reduction's result or gradient) with the reduced dims of an input of rank
 * ndim back as size 1: a view of t, or t itself when keepdim already kept them. */
static ops_tensor *
restore_dims(const ops_tensor *t, int ndim, const int64_t *sizes, const bool *flags, bool keepdim)
{
    if (keepdim || ndim == 0)
        return ops_tensor_retain((ops_tensor *)t);
    int64_t shape[OPS_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        shape[i] = flags[i] ? 1 : sizes[i];
    return ops_reshape(t, (ops_int_list){shape, ndim});
}

/* ---- sum, mean ---------------------------------------------------------------------- */

bool
ops_autograd_reduced_dims(const char *op, int ndim, const ops_int_list *dim, bool *flags)
{
    memset(flags, 0, OPS_MAX_DIMS * sizeof *flags);
    if (dim == NULL || dim->len == 0) {
        for (int i = 0; i < ndim; i++)
            flags[i] = true;
        return true;
    }
    for (int64_t i = 0; i < dim->len; i++) {
        int64_t d = dim->data[i];
        if (!ops_wrap_dim(op, "dim", &d, ndim > 0 ? ndim : 1))
            return false;
        if (ndim > 0)
            flags[d] = true;
    }
    return true;
}

ops_tensor *
ops_autograd_sum_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_int_list *dim, bool keepdim)
{
    bool flags[OPS_MAX_DIMS + 1];
    if (!ops_autograd_reduced_dims("sum_backward", ndim, dim, flags))
        return NULL;
    int64_t shape[OPS_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        shape[i] = flags[i] ? 1 : sizes[i];
    /* grad has the reduced dims dropped unless keepdim: put them back as size 1 */
    ops_tensor *k = keepdim ? ops_tensor_retain(g) : ops_reshape(g, (ops_int_list){shape, ndim});
    if (k == NULL)
        return NULL;
    ops_tensor *e = ops_expand(k, (ops_int_list){sizes, ndim}, false);
    ops_tensor_release(k);
    return e;
}

ops_tensor *
ops_autograd_mean_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_int_list *dim, bool keepdim)
{
    bool flags[OPS_MAX_DIMS + 1];
    if (!ops_autograd_reduced_dims("mean_backward", ndim, dim, flags))
        return NULL;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= flags[i] ? sizes[i] : 1;
    ops_tensor *e = ops_autograd_sum_backward(g, ndim, sizes, dim, keepdim);
    if (e == NULL)
        return NULL;
    ops_tensor *r = ops_div_scalar(e, OPS_SCALAR_INT(n));
    ops_tensor_release(e);
    return r;
}

/* ---- max, min, amax, amin, aminmax -------------------------------------------------- */

/* The gradient of an extreme value shared evenly by every element equal to it (a NaN
 * result: by the NaNs), PyTorch's evenly_distribute_backward / scale_grad_by_count. */
ops_tensor *
ops_autograd_evenly_distribute_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *result,
                                        const ops_int_list *dim, bool keepdim)
{
    tmps k = {0};
    ops_tensor *out = NULL;
    bool flags[OPS_MAX_DIMS];
    const int nd = (int)ops_tensor_ndim(self);
    if (!ops_autograd_reduced_dims("evenly_distribute_backward", nd, dim, flags))
        return NULL;
    const int64_t *sizes = ops_tensor_sizes(self);
    ops_tensor *gk, *rk, *eq, *nan, *rnan, *mask, *count, *share;
    if ((gk = keep(&k, restore_dims(g, nd, sizes, flags, keepdim))) == NULL ||
        (rk = keep(&k, restore_dims(result, nd, sizes, flags, keepdim))) == NULL ||
        (eq = keep(&k, ops_eq(self, rk))) == NULL ||
        (nan = keep(&k, ops_isnan(self))) == NULL || (rnan = keep(&k, ops_isnan(rk))) == NULL ||
        (nan = keep(&k, ops_logical_and(nan, rnan))) == NULL ||
        (mask = keep(&k, ops_logical_or(eq, nan))) == NULL ||
        (count = keep(&k, ops_sum_dim(mask, dim_arg(dim), true, OPS_DTYPE_NONE))) == NULL ||
        (share = keep(&k, ops_div(gk, count))) == NULL)
        goto done;
    out = ops_where_scalarother(mask, share, OPS_SCALAR_INT(0));
done:
    tmps_release(&k);
    return out;
}

/* ---- max.dim, min.dim, kthvalue, sort, topk, msort, cummax, cummin ------------------- */

/* Zeros of the input's shape with each gradient element written where its index
 * along dim says the value came from (PyTorch's value_selecting_reduction_backward). */
ops_tensor *
ops_autograd_value_selecting_reduction_backward(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim,
                                                const ops_tensor *indices, bool keepdim)
{
    if (ndim == 0) /* the value is the element itself */
        return ops_tensor_retain((ops_tensor *)g);
    if (!ops_wrap_dim("value_selecting_reduction_backward", "dim", &dim, ndim))
        return NULL;
    tmps k = {0};
    ops_tensor *out = NULL, *gk = (ops_tensor *)g, *ik = (ops_tensor *)indices, *z;
    if (!keepdim && ((gk = keep(&k, ops_unsqueeze(g, dim))) == NULL ||
                     (ik = keep(&k, ops_unsqueeze(indices, dim))) == NULL))
        goto done;
    if ((z = keep(&k, ops_zeros((ops_int_list){sizes, ndim}, ops_tensor_dtype(g), ops_tensor_device(g)))) == NULL)
        goto done;
    out = ops_scatter_src(z, dim, ik, gk);
done:
    tmps_release(&k);
    return out;
}

/* cummax/cummin: every output position sends its gradient to the element it copied
 * (several positions may copy the same one, so they add: scatter_add). */
ops_tensor *
ops_autograd_cummaxmin_backward(const ops_tensor *g, int ndim, const int64_t *sizes, const ops_tensor *indices,
                                int64_t dim)
{
    if (ndim == 0)
        return ops_tensor_retain((ops_tensor *)g);
    if (!ops_wrap_dim("cummaxmin_backward", "dim", &dim, ndim))
        return NULL;
    ops_tensor *z = ops_zeros((ops_int_list){sizes, ndim}, ops_tensor_dtype(g), ops_tensor_device(g));
    if (z == NULL)
        return NULL;
    ops_tensor *out = ops_scatter_add(z, dim, indices, g);
    ops_tensor_release(z);
    return out;
}

/* ---- prod, cumprod ------------------------------------------------------------------ */

/* Masks of the first and second zero along d of each line of x. */
static bool
zero_masks(tmps *k, const ops_tensor *x, int64_t d, ops_tensor **is_zero, ops_tensor **first, ops_tensor **second)
{
    ops_tensor *count, *one, *two;
    return (*is_zero = keep(k, ops_eq_scalar(x, OPS_SCALAR_INT(0)))) != NULL &&
           (count = keep(k, ops_cumsum(*is_zero, d, OPS_INT64))) != NULL &&
           (one = keep(k, ops_eq_scalar(count, OPS_SCALAR_INT(1)))) != NULL &&
           (two = keep(k, ops_eq_scalar(count, OPS_SCALAR_INT(2)))) != NULL &&
           (*first = keep(k, ops_logical_and(*is_zero, one))) != NULL &&
           (*second = keep(k, ops_logical_and(*is_zero, two))) != NULL;
}

/* The gradient of prod over dim d (gk with d kept as size 1): d prod / d x_k is the
 * product of the other elements of x_k's line.  Written so that its own derivative
 * is right too (double backward), zeros included, with z1, z2 the first two zeros
 * of the line and x_z1 taken as 1 when there is none:
 *   x_k != 0:  x_z1 * prod(x with x_z1 = 1) / x_k
 *   k = z1:    prod(x with x_z1 = 1)
 *   k = z2:    x_z1 * prod(x with x_z1 = x_z2 = 1)
 *   any other zero: 0 (its product and that product's derivatives hold two zeros).
 * PyTorch multiplies exclusive cumprods (built with cat) instead, after a host read
 * to skip them when there is no zero; these masks need neither. */
static ops_tensor *
prod_backward_dim(const ops_tensor *gk, const ops_tensor *x, int64_t d)
{
    tmps k = {0};
    ops_tensor *out = NULL;
    ops_tensor *is_zero, *first, *second, *any_zero, *a, *p1, *zx, *zv, *xs, *nz, *b, *p2, *sec, *t;
    const ops_int_list dl = {&d, 1};
    if (!zero_masks(&k, x, d, &is_zero, &first, &second) ||
        (any_zero = keep(&k, ops_sum_dim(is_zero, &dl, true, OPS_DTYPE_NONE))) == NULL ||
        (any_zero = keep(&k, ops_gt_scalar(any_zero, OPS_SCALAR_INT(0)))) == NULL ||
        (a = keep(&k, ops_where_scalarself(first, OPS_SCALAR_INT(1), x))) == NULL ||
        (p1 = keep(&k, ops_prod_dim(a, d, true, OPS_DTYPE_NONE))) == NULL ||
        (zx = keep(&k, ops_where_scalarother(first, x, OPS_SCALAR_INT(0)))) == NULL ||
        (zx = keep(&k, ops_sum_dim(zx, &dl, true, OPS_DTYPE_NONE))) == NULL ||
        (zv = keep(&k, ops_where_scalarother(any_zero, zx, OPS_SCALAR_INT(1)))) == NULL ||
        (xs = keep(&k, ops_where_scalarself(is_zero, OPS_SCALAR_INT(1), x))) == NULL ||
        (nz = keep(&k, ops_div(p1, xs))) == NULL || (nz = keep(&k, ops_mul(zv, nz))) == NULL ||
        (b = keep(&k, ops_where_scalarself(second, OPS_SCALAR_INT(1), a))) == NULL ||
        (p2 = keep(&k, ops_prod_dim(b, d, true, OPS_DTYPE_NONE))) == NULL ||
        (sec = keep(&k, ops_mul(zv, p2))) == NULL ||
        (t = keep(&k, ops_where_scalarself(is_zero, OPS_SCALAR_INT(0), nz))) == NULL ||
        (t = keep(&k, ops_where_self(second, sec, t))) == NULL || (t = keep(&k, ops_where_self(first, p1, t))) == NULL)
        goto done;
    out = ops_mul(gk, t);
done:
    tmps_release(&k);
    return out;
}

/* prod over dim (NULL: over every element, as prod over the flattened input). */
ops_tensor *
ops_autograd_prod_backward(const ops_tensor *g, const ops_tensor *self, const int64_t *dim, bool keepdim)
{
    const int nd = (int)ops_tensor_ndim(self);
    if (nd == 0)
        return ops_tensor_retain((ops_tensor *)g);
    tmps k = {0};
    ops_tensor *out = NULL;
    const int64_t *sizes = ops_tensor_sizes(self);
    if (ops_tensor_numel(self) == 0) {
        out = ops_zeros((ops_int_list){sizes, nd}, ops_tensor_dtype(g), ops_tensor_device(g));
        goto done;
    }
    if (dim == NULL) {
        int64_t one = 1, n = ops_tensor_numel(self);
        ops_tensor *x, *gk, *r;
        if ((x = keep(&k, ops_reshape(self, (ops_int_list){&n, 1}))) == NULL ||
            (gk = keep(&k, ops_reshape(g, (ops_int_list){&one, 1}))) == NULL ||
            (r = keep(&k, prod_backward_dim(gk, x, 0))) == NULL)
            goto done;
        out = ops_reshape(r, (ops_int_list){sizes, nd});
        goto done;
    }
    int64_t d = *dim;
    if (!ops_wrap_dim("prod_backward", "dim", &d, nd))
        goto done;
    ops_tensor *gk = (ops_tensor *)g;
    if (!keepdim && (gk = keep(&k, ops_unsqueeze(g, d))) == NULL)
        goto done;
    out = prod_backward_dim(gk, self, d);
done:
    tmps_release(&k);
    return out;
}

/* sum_{j >= k} t_j along d: flip, cumsum, flip. */
static ops_tensor *
reversed_cumsum(tmps *k, const ops_tensor *t, int64_t d)
{
    const ops_int_list dl = {&d, 1};
    ops_tensor *f, *c;
    if ((f = keep(k, ops_flip(t, dl))) == NULL || (c = keep(k, ops_cumsum(f, d, OPS_DTYPE_NONE))) == NULL)
        return NULL;
    return keep(k, ops_flip(c, dl));
}

/* sum_{j >= k} g_j * cumprod(x with the elements under mask = 1)_j along d. */
static ops_tensor *
masked_cumprod_sum(tmps *k, const ops_tensor *g, const ops_tensor *x, const ops_tensor *mask, int64_t d)
{
    ops_tensor *a, *c, *w;
    if ((a = keep(k, ops_where_scalarself(mask, OPS_SCALAR_INT(1), x))) == NULL ||
        (c = keep(k, ops_cumprod(a, d, OPS_DTYPE_NONE))) == NULL || (w = keep(k, ops_mul(g, c))) == NULL)
        return NULL;
    return reversed_cumsum(k, w, d);
}

/* cumprod along dim: d y_j / d x_k = prod_{i <= j, i != k} x_i for j >= k, so
 *   x_k != 0:  reversed_cumsum(g * y)_k / x_k   (PyTorch's formula without zeros)
 *   k = z1, z2 (the first two zeros of the line): reversed_cumsum(g * cumprod(x with
 *              x_k = 1))_k
 *   any other zero: 0 (each product, and its derivatives, holds two zeros).
 * Every branch is exact to second order, so the double backward is right at zeros
 * too; PyTorch switches between an O(n) masked formula and an O(n^2) one for that. */
ops_tensor *
ops_autograd_cumprod_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *result, int64_t dim)
{
    const int nd = (int)ops_tensor_ndim(self);
    if (nd == 0 || ops_tensor_numel(self) <= 1)
        return ops_tensor_retain((ops_tensor *)g);
    if (!ops_wrap_dim("cumprod_backward", "dim", &dim, nd))
        return NULL;
    if (ops_tensor_size(self, dim) == 1)
        return ops_tensor_retain((ops_tensor *)g);
    tmps k = {0};
    ops_tensor *out = NULL;
    ops_tensor *is_zero, *first, *second, *w, *rw, *xs, *a, *b1, *b2, *t;
    if (!zero_masks(&k, self, dim, &is_zero, &first, &second) || (w = keep(&k, ops_mul(result, g))) == NULL ||
        (rw = reversed_cumsum(&k, w, dim)) == NULL ||
        (xs = keep(&k, ops_where_scalarself(is_zero, OPS_SCALAR_INT(1), self))) == NULL ||
        (a = keep(&k, ops_div(rw, xs))) == NULL || (b1 = masked_cumprod_sum(&k, g, self, first, dim)) == NULL ||
        (b2 = masked_cumprod_sum(&k, g, self, second, dim)) == NULL ||
        (t = keep(&k, ops_where_scalarself(is_zero, OPS_SCALAR_INT(0), a))) == NULL ||
        (t = keep(&k, ops_where_self(second, b2, t))) == NULL)
        goto done;
    out = ops_where_self(first, b1, t);
done:
    tmps_release(&k);
    return out;
}

/* ---- var, std, norms ---------------------------------------------------------------- */

/* var over dim with a correction (None: 1): 2 / (n - correction) * g * (x - mean).
 * With n - correction <= 0 the variance is inf or NaN, and so is its gradient (NaN
 * where x equals the mean, inf elsewhere), as in PyTorch. */
ops_tensor *
ops_autograd_var_backward(const ops_tensor *g, const ops_tensor *self, const ops_int_list *dim,
                          const ops_scalar *correction, bool keepdim)
{
    tmps k = {0};
    ops_tensor *out = NULL;
    bool flags[OPS_MAX_DIMS];
    const int nd = (int)ops_tensor_ndim(self);
    if (!ops_autograd_reduced_dims("var_backward", nd, dim, flags))
        return NULL;
    const int64_t *sizes = ops_tensor_sizes(self);
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= flags[i] ? sizes[i] : 1;
    const double dof = (double)n - (correction != NULL ? ops_scalar_to_double(*correction) : 1.0);
    ops_tensor *gk, *mean, *diff, *t;
    if ((gk = keep(&k, restore_dims(g, nd, sizes, flags, keepdim))) == NULL ||
        (mean = keep(&k, ops_mean_dim(self, dim_arg(dim), true, OPS_DTYPE_NONE))) == NULL ||
        (diff = keep(&k, ops_sub(self, mean, OPS_SCALAR_INT(1)))) == NULL)
        goto done;
    if (dof <= 0) {
        ops_tensor *at_mean = keep(&k, ops_eq_scalar(diff, OPS_SCALAR_INT(0)));
        if (at_mean == NULL ||
            (t = keep(&k, ops_where_scalar(at_mean, OPS_SCALAR_FLOAT(NAN), OPS_SCALAR_FLOAT(INFINITY)))) == NULL)
            goto done;
        out = ops_mul(gk, t);
        goto done;
    }
    if ((t = keep(&k, ops_mul(gk, diff))) == NULL)
        goto done;
    out = ops_mul_scalar(t, OPS_SCALAR_FLOAT(2.0 / dof));
done:
    tmps_release(&k);
    return out;
}

/* The vector norm of order p (None: 2) over dim (NULL or empty: every dim), PyTorch's
 * norm_backward: 0 for p = 0; sign(x) for p = 1; x / norm for p = 2; for +-inf the
 * gradient shared by the elements whose magnitude is the norm (or NaN); otherwise
 * sign(x) |x|^(p-1) / norm^(p-1).  Where the norm is 0 the subgradient 0 is taken (and
 * for p < 1 at x = 0). */
ops_tensor *
ops_autograd_norm_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *result,
                           const ops_scalar *p_opt, const ops_int_list *dim, bool keepdim)
{
    tmps k = {0};
    ops_tensor *out = NULL;
    bool flags[OPS_MAX_DIMS];
    const int nd = (int)ops_tensor_ndim(self);
    if (!ops_autograd_reduced_dims("norm_backward", nd, dim, flags))
        return NULL;
    const int64_t *sizes = ops_tensor_sizes(self);
    const double p = p_opt != NULL ? ops_scalar_to_double(*p_opt) : 2.0;
    ops_tensor *gk, *nk, *sg, *t, *u;
    if ((gk = keep(&k, restore_dims(g, nd, sizes, flags, keepdim))) == NULL ||
        (nk = keep(&k, restore_dims(result, nd, sizes, flags, keepdim))) == NULL)
        goto done;
    if (p == 0.0) {
        ops_tensor *e = keep(&k, ops_expand(gk, (ops_int_list){sizes, nd}, false));
        if (e != NULL)
            out = ops_zeros_like(e, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_MEMORY_FORMAT_NONE);
        goto done;
    }
    if ((sg = keep(&k, ops_sign(self))) == NULL)
        goto done;
    if (p == 1.0) {
        out = ops_mul(sg, gk);
        goto done;
    }
    if (p == 2.0) {
        ops_tensor *zero = keep(&k, ops_eq_scalar(nk, OPS_SCALAR_INT(0)));
        if (zero == NULL || (t = keep(&k, ops_div(self, nk))) == NULL ||
            (t = keep(&k, ops_where_scalarself(zero, OPS_SCALAR_INT(0), t))) == NULL)
            goto done;
        out = ops_mul(gk, t);
        goto done;
    }
    ops_tensor *ax;
    if ((ax = keep(&k, ops_abs(self))) == NULL)
        goto done;
    if (isinf(p)) {
        ops_tensor *at, *nan, *mask, *count;
        if ((at = keep(&k, ops_eq(ax, nk))) == NULL || (nan = keep(&k, ops_isnan(ax))) == NULL ||
            (mask = keep(&k, ops_logical_or(at, nan))) == NULL ||
            (count = keep(&k, ops_sum_dim(mask, dim_arg(dim), true, OPS_DTYPE_NONE))) == NULL ||
            (t = keep(&k, ops_div(gk, count))) == NULL ||
            (t = keep(&k, ops_where_scalarother(mask, t, OPS_SCALAR_INT(0)))) == NULL)
            goto done;
        out = ops_mul(sg, t);
        goto done;
    }
    if (p < 1.0) {
        /* |x|^(p-1) is infinite at x = 0: that element gets 0 */
        ops_tensor *zero;
        if ((zero = keep(&k, ops_eq_scalar(self, OPS_SCALAR_INT(0)))) == NULL ||
            (t = keep(&k, ops_pow_tensor_scalar(ax, OPS_SCALAR_FLOAT(p - 1)))) == NULL ||
            (t = keep(&k, ops_where_scalarself(zero, OPS_SCALAR_INT(0), t))) == NULL ||
            (t = keep(&k, ops_mul(sg, t))) == NULL || (t = keep(&k, ops_mul(t, gk))) == NULL ||
            (u = keep(&k, ops_pow_tensor_scalar(nk, OPS_SCALAR_FLOAT(1 - p)))) == NULL)
            goto done;
        out = ops_mul(t, u);
        goto done;
    }
    /* p in (1, 2): sign(x) |x|^(p-1); p > 2: x |x|^(p-2) (the same, without sign) */
    ops_tensor *zero;
    if (p < 2.0) {
        if ((t = keep(&k, ops_pow_tensor_scalar(ax, OPS_SCALAR_FLOAT(p - 1)))) == NULL ||
            (t = keep(&k, ops_mul(sg, t))) == NULL)
            goto done;
    } else {
        if ((t = keep(&k, ops_pow_tensor_scalar(ax, OPS_SCALAR_FLOAT(p - 2)))) == NULL ||
            (t = keep(&k, ops_mul(self, t))) == NULL)
            goto done;
    }
    if ((zero = keep(&k, ops_eq_scalar(nk, OPS_SCALAR_INT(0)))) == NULL ||
        (u = keep(&k, ops_pow_tensor_scalar(nk, OPS_SCALAR_FLOAT(p - 1)))) == NULL ||
        (u = keep(&k, ops_div(gk, u))) == NULL ||
        (u = keep(&k, ops_where_scalarself(zero, OPS_SCALAR_INT(0), u))) == NULL)
        goto done;
    out = ops_mul(t, u);
done:
    tmps_release(&k);
    return out;
}

/* ---- clamp with tensor bounds ------------------------------------------------------- */

/* clamp(self, min, max) = min(max(self, min), max): the gradient for self (which 0)
 * where no bound applied, for min (1) where min applied and was below max, for max
 * (2) where max applied or was below min (PyTorch's clamp_backward and
 * clamp_backward_min_max), each summed back to its tensor's shape. */
ops_tensor *
ops_autograd_clamp_backward(const ops_tensor *g, const ops_tensor *self, const ops_tensor *min,
                            const ops_tensor *max, int64_t which)
{
    tmps k = {0};
    ops_tensor *out = NULL, *cond = NULL, *sel;
    const ops_tensor *target = which == 0 ? self : which == 1 ? min : max;
    if (target == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "clamp_backward: no tensor for input %lld", (long long)which);
    if (which == 0) {
        ops_tensor *lo = min != NULL ? keep(&k, ops_ge(self, min)) : NULL;
        ops_tensor *hi = max != NULL ? keep(&k, ops_le(self, max)) : NULL;
        if ((min != NULL && lo == NULL) || (max != NULL && hi == NULL))
            goto done;
        cond = lo != NULL && hi != NULL ? keep(&k, ops_logical_and(lo, hi)) : lo != NULL ? lo : hi;
        if (lo != NULL && hi != NULL && cond == NULL)
            goto done;
    } else if (which == 1) {
        ops_tensor *order;
        if ((cond = keep(&k, ops_lt(self, min))) == NULL)
            goto done;
        if (max != NULL && ((order = keep(&k, ops_lt(min, max))) == NULL ||
                            (cond = keep(&k, ops_logical_and(cond, order))) == NULL))
            goto done;
    } else {
        ops_tensor *order;
        if ((cond = keep(&k, ops_gt(self, max))) == NULL)
            goto done;
        if (min != NULL && ((order = keep(&k, ops_lt(max, min))) == NULL ||
                            (cond = keep(&k, ops_logical_or(cond, order))) == NULL))
            goto done;
    }
    sel = cond != NULL ? keep(&k, ops_where_scalarother(cond, g, OPS_SCALAR_INT(0))) : (ops_tensor *)g;
    if (sel == NULL)
        goto done;
    out = ops_autograd_reduce_to(sel, (int)ops_tensor_ndim(target), ops_tensor_sizes(target));
done:
    tmps_release(&k);
    return out;
}

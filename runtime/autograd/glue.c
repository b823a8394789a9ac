/* What the generated autograd layer calls besides nodes and saved values: a gradient
 * summed back to a broadcast input's shape, and the errors for an op with no formula,
 * for out= under autograd, and for an in-place op with no formula. */
#include <string.h>

#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_op_reshape.h"
#include "ops_op_sum.h"
#endif

ops_tensor *
ops_autograd_reduce_to(const ops_tensor *g, int ndim, const int64_t *sizes)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (g->ndim == ndim && memcmp(g->sizes, sizes, (size_t)ndim * sizeof sizes[0]) == 0)
        return ops_tensor_retain(g);
    const int lead = g->ndim - ndim;
    if (lead < 0)
        return ops_fail_null(OPS_ERR_VALUE, "reduce_to: gradient of shape %s cannot be summed to shape %s",
                             ops_shape_str(g->ndim, g->sizes, b1, sizeof b1), ops_shape_str(ndim, sizes, b2, sizeof b2));
    int64_t dims[OPS_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < g->ndim; i++) {
        if (i < lead || (sizes[i - lead] == 1 && g->sizes[i] != 1))
            dims[nd++] = i;
        else if (sizes[i - lead] != g->sizes[i])
            return ops_fail_null(OPS_ERR_VALUE, "reduce_to: gradient of shape %s cannot be summed to shape %s",
                                 ops_shape_str(g->ndim, g->sizes, b1, sizeof b1),
                                 ops_shape_str(ndim, sizes, b2, sizeof b2));
    }
    ops_int_list dl = {dims, nd};
    /* Only leading dims summed (a bias's gradient): sum_dim gives the shape at once,
     * without the keepdim result and the reshape view over it. */
    const bool only_lead = nd == lead;
    ops_tensor *s = ops_sum_dim(g, &dl, !only_lead, OPS_DTYPE_NONE);
    if (s == NULL || lead == 0 || only_lead)
        return s;
    ops_tensor *r = ops_reshape(s, (ops_int_list){sizes, ndim});
    ops_tensor_release(s);
    return r;
}

static bool
differentiable_dtype(const ops_tensor *t)
{
    return t != NULL && ops_dtype_is_floating(t->dtype);
}

static ops_status
not_implemented(const char *op)
{
    return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: the derivative for '%s' is not implemented.", op, op);
}

ops_tensor *
ops_autograd_no_formula(const char *op, ops_tensor *result)
{
    if (!differentiable_dtype(result))
        return result;
    ops_tensor_release(result);
    not_implemented(op);
    return NULL;
}

ops_status
ops_autograd_no_formula_outs(const char *op, int n, ops_tensor **const *outs)
{
    bool bad = false;
    for (int i = 0; i < n; i++)
        bad = bad || differentiable_dtype(*outs[i]);
    if (!bad)
        return OPS_OK;
    for (int i = 0; i < n; i++) {
        ops_tensor_release(*outs[i]);
        *outs[i] = NULL;
    }
    return not_implemented(op);
}

ops_status
ops_autograd_no_formula_vec(const char *op, ops_tensor_vec *v)
{
    for (int64_t i = 0; i < v->len; i++) {
        if (differentiable_dtype(v->data[i])) {
            ops_tensor_vec_release(v);
            return not_implemented(op);
        }
    }
    return OPS_OK;
}

ops_status
ops_autograd_out_error(const char *op)
{
    return ops_fail(OPS_ERR_VALUE, "%s: functions with out=... arguments don't support automatic differentiation, "
                    "but one of the arguments requires grad.", op);
}

ops_status
ops_autograd_inplace_no_formula(const char *op, const ops_tensor *self)
{
    if (!differentiable_dtype(self))
        return OPS_OK;
    ops_status st = ops_autograd_check_inplace(op, self);
    return st != OPS_OK ? st : not_implemented(op);
}

/* Norms, the driver for every device: norm (its Scalar, dim, dtype and out= forms),
 * frobenius_norm, linalg_vector_norm, each one kernel of the structured reduction
 * family (`meta: reduction`, `reduce: norm`): the generated glue has run the family's
 * meta step (dims, the dtypes with the norms' messages, the result's shape and dtype,
 * out=); the order's checks are here, the reduction is the RED_NORM loops (the
 * reduce_loop stub). */
#include <math.h>
#include <string.h>

#include "kernels/reduce.h"
#include "ops_functions_linalg.h"
#include "ops_functions_reduce_norm.h"
#include "ops_kernels_reduce_norm.h"

/* ---- norm, frobenius_norm, linalg_vector_norm ------------------------------------------ */

/* The empty reductions a norm of order ord has no identity for (negative, inf), over
 * r's dims as given (the meta step has checked the dtypes, with the norms' messages). */
static ops_status
norm_check(const ops_reduce *r, double ord)
{
    const char *op = r->op;
    const ops_tensor *self = r->self;
    const ops_int_list *dims = r->dims;
    if (ops_shape_numel(self->ndim, self->sizes) == 0 && (ord < 0 || ord == INFINITY)) {
        if (dims == NULL || dims->len == 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: cannot compute the %g norm on an empty tensor because the operation does not "
                            "have an identity",
                            op, ord);
        for (int64_t i = 0; i < dims->len; i++) {
            int64_t d = dims->data[i];
            if (!ops_wrap_dim(op, "dim", &d, self->ndim))
                return ops_last_status();
            if (self->ndim > 0 && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_VALUE,
                                "%s: cannot compute the %g norm on the dimension %lld because this dimension is "
                                "empty and the operation does not have an identity",
                                op, ord, (long long)d);
        }
    }
    return OPS_OK;
}

/* The norm's checks, then the RED_NORM loops (the meta step has made r: dims, the
 * result's shape and dtype, out=). */
static ops_status
norm_run(ops_reduce *r, double ord)
{
    const ops_status st = norm_check(r, ord);
    return st != OPS_OK ? st : reduce_family_loop(r, ord);
}

/* norm (its Scalar, dim, dtype and out= forms): p None is 2. */
ops_status
reduce_norm_kernel(ops_reduce *r, const ops_scalar *p)
{
    return norm_run(r, p != NULL ? ops_scalar_to_double(*p) : 2.0);
}

/* frobenius_norm: the 2-norm over at most two dims. */
ops_status
reduce_frobenius_norm_kernel(ops_reduce *r)
{
    if (r->dims->len > 2)
        return ops_fail(OPS_ERR_VALUE,
                        "frobenius_norm: Expected at most 2 dimensions, but got %lld dimensions instead.",
                        (long long)r->dims->len);
    return norm_run(r, 2.0);
}

/* linalg_vector_norm and its out= form. */
ops_status
reduce_linalg_vector_norm_kernel(ops_reduce *r, ops_scalar ord)
{
    return norm_run(r, ops_scalar_to_double(ord));
}

/* norm.str, torch.norm(self, 'fro' | 'nuc', dim, keepdim, dtype) (a libops extension of
 * the schema; PyTorch does this in Python): 'fro' is the 2-norm over dim (None: every
 * dim), 'nuc' the nuclear norm over dim (None: a 2-D self's two dims). */
ops_tensor *
norm_str_impl(const ops_tensor *self, const char *p, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    const char *op = "norm";
    if (strcmp(p, "fro") == 0) {
        if (!ops_dtype_is_floating(self->dtype))
            return ops_fail_null(OPS_ERR_DTYPE,
                                 "%s: input dtype should be either floating point or complex. Got %s instead.", op,
                                 ops_dtype_name(self->dtype));
        return ops_linalg_vector_norm(self, OPS_SCALAR_FLOAT(2.0), dim, keepdim, dtype);
    }
    if (strcmp(p, "nuc") != 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: only valid string values of p are 'fro' and 'nuc', found '%s'", op,
                             p);
    if (dtype != OPS_DTYPE_NONE)
        return ops_fail_null(OPS_ERR_VALUE, "%s: dtype argument is not supported in nuclear norm", op);
    if (dim == NULL)
        return ops_nuclear_norm(self, keepdim);
    if (dim->len != 2) {
        char buf[OPS_SHAPE_STR_LEN];
        return ops_fail_null(OPS_ERR_VALUE, "%s: nuclear norm requires a 'dim' argument of size 2, but got dim=%s", op,
                             ops_shape_str(dim->len <= OPS_MAX_DIMS ? (int)dim->len : OPS_MAX_DIMS, dim->data, buf,
                                           sizeof buf));
    }
    return ops_nuclear_norm_dim(self, *dim, keepdim);
}

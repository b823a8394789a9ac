/* Norms, the driver for every device: norm (its Scalar, dim, dtype and out= forms),
 * frobenius_norm, linalg_vector_norm.  The order and dtype checks are here; the
 * reduction is kernels/reduce.c's reduce_core2 with RED_NORM (the loops: the
 * reduce_loop stub). */
#include <math.h>
#include <string.h>

#include "kernels/reduce.h"
#include "ops_functions_linalg.h"
#include "ops_functions_reduce_norm.h"
#include "ops_kernels_reduce_norm.h"

/* ---- norm, frobenius_norm, linalg_vector_norm ------------------------------------------ */

/* The vector norm of order ord over dims (NULL or empty: all) in dtype (NONE: self's),
 * with PyTorch's checks: floating self, a floating dtype self converts to without
 * narrowing, and no inf or negative order over nothing (those have no identity).
 * linalg picks linalg.vector_norm's wording over norm's. */
static ops_status
norm_impl(const char *op, bool linalg, const ops_tensor *self, double ord, const ops_int_list *dims, bool keepdim,
          ops_dtype dtype, ops_tensor *out, ops_tensor **result)
{
    if (!ops_dtype_is_floating(self->dtype))
        return linalg ? ops_fail(OPS_ERR_DTYPE, "%s: Expected a floating point or complex tensor as input. Got %s",
                                 op, ops_dtype_name(self->dtype))
                      : ops_fail(OPS_ERR_DTYPE,
                                 "%s: input dtype should be either floating point or complex. Got %s instead.", op,
                                 ops_dtype_name(self->dtype));
    if (dtype != OPS_DTYPE_NONE) {
        if (!ops_dtype_is_floating(dtype))
            return linalg ? ops_fail(OPS_ERR_DTYPE, "%s: dtype should be floating point or complex, but got %s", op,
                                     ops_dtype_name(dtype))
                          : ops_fail(OPS_ERR_DTYPE,
                                     "%s: the desired output dtype should be either floating point or complex. Got "
                                     "%s instead.",
                                     op, ops_dtype_name(dtype));
        if (ops_promote_types(self->dtype, dtype) != dtype)
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: the dtype of the input (%s) should be convertible without narrowing to the "
                            "specified dtype (%s)",
                            op, ops_dtype_name(self->dtype), ops_dtype_name(dtype));
    }
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
    return reduce_core2(op, RED_NORM, self, dims, keepdim, dtype, ord, out, NULL, result, NULL);
}

/* norm's p: None is 2. */
static double
norm_order(const ops_scalar *p)
{
    return p != NULL ? ops_scalar_to_double(*p) : 2.0;
}

ops_tensor *
reduce_norm_scalar(const ops_tensor *self, ops_scalar p)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, ops_scalar_to_double(p), NULL, false, OPS_DTYPE_NONE, NULL, &r);
    return r;
}

ops_status
reduce_norm_scalar_out(const ops_tensor *self, ops_scalar p, ops_tensor *out)
{
    return norm_impl("norm", false, self, ops_scalar_to_double(p), NULL, false, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_norm_scalaropt_dim(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, norm_order(p), &dim, keepdim, OPS_DTYPE_NONE, NULL, &r);
    return r;
}

ops_status
reduce_norm_out(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return norm_impl("norm", false, self, norm_order(p), &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_norm_scalaropt_dim_dtype(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim,
                             ops_dtype dtype)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, norm_order(p), &dim, keepdim, dtype, NULL, &r);
    return r;
}

ops_status
reduce_norm_dtype_out(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim, ops_dtype dtype,
                   ops_tensor *out)
{
    return norm_impl("norm", false, self, norm_order(p), &dim, keepdim, dtype, out, NULL);
}

ops_tensor *
reduce_norm_scalaropt_dtype(const ops_tensor *self, const ops_scalar *p, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    norm_impl("norm", false, self, norm_order(p), NULL, false, dtype, NULL, &r);
    return r;
}

ops_status
reduce_norm_scalaropt_dtype_out(const ops_tensor *self, const ops_scalar *p, ops_dtype dtype, ops_tensor *out)
{
    return norm_impl("norm", false, self, norm_order(p), NULL, false, dtype, out, NULL);
}

/* frobenius_norm: the 2-norm over at most two dims. */
static ops_status
frobenius_impl(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out, ops_tensor **result)
{
    if (dim.len > 2)
        return ops_fail(OPS_ERR_VALUE,
                        "frobenius_norm: Expected at most 2 dimensions, but got %lld dimensions instead.",
                        (long long)dim.len);
    return norm_impl("frobenius_norm", false, self, 2.0, &dim, keepdim, OPS_DTYPE_NONE, out, result);
}

ops_tensor *
reduce_frobenius_norm_dim(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    ops_tensor *r = NULL;
    frobenius_impl(self, dim, keepdim, NULL, &r);
    return r;
}

ops_status
reduce_frobenius_norm_out(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return frobenius_impl(self, dim, keepdim, out, NULL);
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

ops_tensor *
reduce_linalg_vector_norm(const ops_tensor *self, ops_scalar ord, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    ops_tensor *r = NULL;
    norm_impl("linalg_vector_norm", true, self, ops_scalar_to_double(ord), dim, keepdim, dtype, NULL, &r);
    return r;
}

ops_status
reduce_linalg_vector_norm_out(const ops_tensor *self, ops_scalar ord, const ops_int_list *dim, bool keepdim,
                           ops_dtype dtype, ops_tensor *out)
{
    return norm_impl("linalg_vector_norm", true, self, ops_scalar_to_double(ord), dim, keepdim, dtype, out, NULL);
}


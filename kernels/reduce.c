/* Reductions, the driver for every device: sum, nansum, mean, nanmean, prod, amax,
 * amin, aminmax, max, min (whole tensor, and over one dim with indices), argmax,
 * argmin, var, std, var_mean, std_mean (correction= and unbiased= forms), norm,
 * all, any, logsumexp (the norms: kernels/reduce_norm.c).  The schema names these
 * functions for `CPU, CUDA`.
 *
 * Every variant of an op (functional, out=, dim, dim out=) funnels into one driver,
 * reduce_core2: the dims to reduce (dim=None and dim lists alike), the dtype computed
 * in and the result's, the op's argument checks with their messages, out= checks,
 * allocation on the input's device, then the element loops through the reduce_loop
 * stub (kernels/cpu/reduce.c, kernels/cuda/reduce.cu).  The input is first converted
 * to the dtype the op computes in when that differs (sum of int32 is an int64 sum,
 * sum(dtype=float64) a float64 one).
 *
 * Results are computed into a fresh contiguous tensor; an out= tensor is checked and
 * resized only once every allocation has succeeded, then written in one copy that
 * cannot fail on the CPU, so a failed call leaves out= untouched. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/reduce.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_functions_reduce.h"
#include "ops_kernels_reduce.h"

/* Marks the reduced dims of a tensor of rank ndim in mask; dims NULL or empty: all.
 * Errors name the op: out-of-range and repeated dims. */
static ops_status
red_dims(const char *op, int ndim, const ops_int_list *dims, bool *mask)
{
    for (int d = 0; d < OPS_MAX_DIMS; d++)
        mask[d] = false;
    if (dims == NULL || dims->len == 0) {
        for (int d = 0; d < ndim; d++)
            mask[d] = true;
        return OPS_OK;
    }
    for (int64_t i = 0; i < dims->len; i++) {
        int64_t d = dims->data[i];
        if (!ops_wrap_dim(op, "dim", &d, ndim))
            return ops_last_status();
        if (ndim == 0)
            continue;
        if (mask[d])
            return ops_fail(OPS_ERR_VALUE, "%s: dim %lld appears multiple times in the list of dims", op,
                            (long long)d);
        mask[d] = true;
    }
    return OPS_OK;
}

/* Checks an out= tensor before anything is allocated: its dtype (when want is not
 * OPS_DTYPE_NONE) and that its elements do not share memory. */
ops_status
red_check_out(const char *op, const ops_tensor *out, ops_dtype want, int nd, const int64_t *sizes)
{
    if (want != OPS_DTYPE_NONE && out->dtype != want)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                        ops_dtype_name(want), ops_dtype_name(out->dtype));
    const bool same = out->ndim == nd && memcmp(out->sizes, sizes, (size_t)nd * sizeof(int64_t)) == 0;
    if (same && ops_tensor_has_internal_overlap(out))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                        "single memory location. Please clone() the tensor before performing the operation.",
                        op);
    return OPS_OK;
}

/* self converted to dtype dt (a new contiguous tensor), or a new reference to self
 * when it already has dt and contiguous is false. */
ops_tensor *
red_convert(const char *op, const ops_tensor *self, ops_dtype dt, bool contiguous)
{
    if (self->dtype == dt && !contiguous) {
        return ops_tensor_retain(self);
    }
    ops_tensor *t = ops_tensor_new(op, self->ndim, self->sizes, NULL, dt, ops_tensor_device(self));
    if (t == NULL)
        return NULL;
    if (ops_copy_(t, self, false) != OPS_OK) {
        ops_tensor_release(t);
        return NULL;
    }
    return t;
}

/* Writes the contiguous result r into out (resized if its shape differs): the last
 * step, after every allocation but out's own resize. */
ops_status
red_finish_out(const char *op, ops_tensor *out, const ops_tensor *r)
{
    const bool same = out->ndim == r->ndim && memcmp(out->sizes, r->sizes, (size_t)r->ndim * sizeof(int64_t)) == 0;
    ops_status st;
    if (!same && (st = ops_tensor_resize_(op, out, r->ndim, r->sizes)) != OPS_OK)
        return st;
    if ((st = ops_copy_values(op, out, r)) != OPS_OK)
        return st;
    ops_tensor_bump_version(out);
    return OPS_OK;
}

/* Writes r0 into out0 and r1 into out1 (the results of an op with two returns): both
 * are resized before either is written, and when the second resize fails the first
 * out's geometry is put back, so a failure leaves both as they were. */
ops_status
red_finish_out2(const char *op, ops_tensor *out0, const ops_tensor *r0, ops_tensor *out1, const ops_tensor *r1)
{
    const int nd0 = out0->ndim;
    const int64_t off0 = out0->offset;
    int64_t sz0[OPS_MAX_DIMS], st0[OPS_MAX_DIMS];
    memcpy(sz0, out0->sizes, sizeof sz0);
    memcpy(st0, out0->strides, sizeof st0);
    ops_status st;
    if (!(out0->ndim == r0->ndim && memcmp(out0->sizes, r0->sizes, (size_t)r0->ndim * sizeof(int64_t)) == 0) &&
        (st = ops_tensor_resize_(op, out0, r0->ndim, r0->sizes)) != OPS_OK)
        return st;
    if (!(out1->ndim == r1->ndim && memcmp(out1->sizes, r1->sizes, (size_t)r1->ndim * sizeof(int64_t)) == 0) &&
        (st = ops_tensor_resize_(op, out1, r1->ndim, r1->sizes)) != OPS_OK) {
        out0->ndim = nd0;
        out0->offset = off0;
        memcpy(out0->sizes, sz0, sizeof sz0);
        memcpy(out0->strides, st0, sizeof st0);
        return st;
    }
    if ((st = ops_copy_values(op, out0, r0)) != OPS_OK || (st = ops_copy_values(op, out1, r1)) != OPS_OK)
        return st;
    ops_tensor_bump_version(out0);
    ops_tensor_bump_version(out1);
    return OPS_OK;
}

/* Checks the two outs of an op with two returns: each as red_check_out, and that they
 * do not share memory. */
ops_status
red_check_out2(const char *op, const ops_tensor *out0, ops_dtype want0, const ops_tensor *out1, ops_dtype want1,
               int nd, const int64_t *sizes)
{
    ops_status st;
    if ((st = red_check_out(op, out0, want0, nd, sizes)) != OPS_OK ||
        (st = red_check_out(op, out1, want1, nd, sizes)) != OPS_OK)
        return st;
    if (ops_tensor_numel(out0) > 0 && ops_tensor_numel(out1) > 0 && ops_tensor_may_overlap(out0, out1))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: some elements of the input tensor and the written-to tensor "
                        "refer to a single memory location. Please clone() the tensor before performing the "
                        "operation.",
                        op);
    return OPS_OK;
}

/* The result's shape: self's sizes less the dims marked in mask (kept as 1 with
 * keepdim). */
static int
red_out_shape(const ops_tensor *self, const bool *mask, bool keepdim, int64_t *osz)
{
    int ond = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (!mask[d])
            osz[ond++] = self->sizes[d];
        else if (keepdim)
            osz[ond++] = 1;
    }
    return ond;
}

/* kind over dims (NULL: all) of self, into out (NULL: a new tensor in *result); arg is
 * var/std's correction or norm's order.  Kinds with a second result (var_mean's means
 * with RED_VAR/RED_STD, max.dim's indices) write it into out2 or *result2 when either
 * is given. */
ops_status
reduce_core2(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
             ops_dtype dtype, double arg, ops_tensor *out, ops_tensor *out2, ops_tensor **result,
             ops_tensor **result2)
{
    ops_status st = OPS_OK;
    ops_tensor *src = NULL, *res = NULL, *res2 = NULL;
    bool mask[OPS_MAX_DIMS];
    int64_t osz[OPS_MAX_DIMS];
    const bool two = out2 != NULL || result2 != NULL;

    if ((st = red_dims(op, self->ndim, dims, mask)) != OPS_OK)
        return st;
    const int ond = red_out_shape(self, mask, keepdim, osz);

    /* the dtype computed in (cd) and the result's (rd) */
    ops_dtype cd = self->dtype, rd;
    switch (kind) {
    case RED_SUM:
    case RED_NANSUM:
    case RED_PROD:
        if (dtype != OPS_DTYPE_NONE)
            cd = dtype;
        else if (out != NULL)
            cd = out->dtype;
        else if (ops_dtype_is_integral(self->dtype, true))
            cd = OPS_INT64;
        rd = cd;
        break;
    case RED_MEAN:
        cd = dtype != OPS_DTYPE_NONE ? dtype : out != NULL ? out->dtype : self->dtype;
        if (!ops_dtype_is_floating(cd))
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: could not infer output dtype. %s dtype must be either a floating point or complex "
                            "dtype. Got: %s",
                            op, dtype != OPS_DTYPE_NONE ? "Optional" : "Input", ops_dtype_name(cd));
        rd = cd;
        break;
    case RED_LSE:
        cd = ops_dtype_is_floating(self->dtype) ? self->dtype : OPS_FLOAT32;
        if (out != NULL) {
            if (!ops_dtype_is_floating(out->dtype))
                return ops_fail(OPS_ERR_DTYPE, "%s: Expected floating point type for result tensor, but got: %s",
                                op, ops_dtype_name(out->dtype));
            cd = out->dtype;
        }
        rd = cd;
        break;
    case RED_NANMEAN:
        if (!ops_dtype_is_floating(self->dtype))
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: expected input to have floating point or complex dtype but got %s", op,
                            ops_dtype_name(self->dtype));
        cd = dtype != OPS_DTYPE_NONE ? dtype : out != NULL ? out->dtype : self->dtype;
        if (!ops_dtype_is_floating(cd))
            return ops_fail(OPS_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", op,
                            ops_dtype_name(self->dtype), ops_dtype_name(cd));
        rd = cd;
        break;
    case RED_VAR:
    case RED_STD:
        if (!ops_dtype_is_floating(self->dtype))
            return ops_fail(OPS_ERR_DTYPE, "%s: std and var only support floating point and complex dtypes, but got %s",
                            op, ops_dtype_name(self->dtype));
        rd = cd;
        break;
    case RED_ARGMAX:
    case RED_ARGMIN:
        rd = OPS_INT64;
        break;
    case RED_NORM: /* the dtypes were checked by norm_impl */
        cd = dtype != OPS_DTYPE_NONE ? dtype : self->dtype;
        rd = cd;
        break;
    case RED_MAXDIM:
    case RED_MINDIM:
    case RED_AMINMAX:
        rd = cd;
        break;
    case RED_AMAX:
    case RED_AMIN:
        rd = cd;
        if (out != NULL && out->dtype != cd)
            return ops_fail(OPS_ERR_DTYPE,
                            "%s: Expected the dtype for input and out to match, but got %s for input's dtype and "
                            "%s for out's dtype.",
                            op, ops_dtype_name(cd), ops_dtype_name(out->dtype));
        break;
    default: /* all, any */
        rd = self->dtype == OPS_UINT8 ? OPS_UINT8 : OPS_BOOL;
        if (out != NULL && out->dtype != rd)
            return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                            ops_dtype_name(rd), ops_dtype_name(out->dtype));
        break;
    }
    if (kind == RED_MAXDIM || kind == RED_MINDIM) {
        for (int d = 0; d < self->ndim; d++)
            if (mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", op, d);
    }
    if (kind == RED_AMAX || kind == RED_AMIN || kind == RED_ARGMAX || kind == RED_ARGMIN) {
        if (dims == NULL || dims->len == 0) {
            if (ops_shape_numel(self->ndim, self->sizes) == 0)
                return ops_fail(OPS_ERR_INDEX,
                                "%s: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                                "reduction dim with the 'dim' argument.",
                                op);
        } else {
            for (int d = 0; d < self->ndim; d++)
                if (mask[d] && self->sizes[d] == 0)
                    return ops_fail(OPS_ERR_INDEX, "%s: Expected reduction dim %d to have non-zero size.", op, d);
        }
    }
    if (kind == RED_AMINMAX) {
        if (dims == NULL && ops_shape_numel(self->ndim, self->sizes) == 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: cannot compute aminmax over an empty dimension as the operation has no identity.", op);
        for (int d = 0; d < self->ndim; d++)
            if (mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_VALUE, "%s: Expected reduction dim %d to have non-zero size.", op, d);
    }
    const ops_dtype rd2 = kind == RED_MAXDIM || kind == RED_MINDIM ? OPS_INT64 : rd;
    if (out2 != NULL) {
        if ((st = red_check_out2(op, out, rd, out2, rd2, ond, osz)) != OPS_OK)
            return st;
    } else if (out != NULL && (st = red_check_out(op, out, rd, ond, osz)) != OPS_OK) {
        return st;
    }

    if ((src = red_convert(op, self, kind == RED_ALL || kind == RED_ANY ? self->dtype : cd, false)) == NULL) {
        st = ops_last_status();
        goto done;
    }
    const ops_device dev = ops_tensor_device(self);
    if ((res = ops_tensor_new(op, ond, osz, NULL, rd, dev)) == NULL ||
        (two && (res2 = ops_tensor_new(op, ond, osz, NULL, rd2, dev)) == NULL)) {
        st = ops_last_status();
        goto done;
    }
    if ((st = OPS_STUB_CALL(reduce_loop, dev, op, kind, src, mask, arg, res, res2)) != OPS_OK)
        goto done;
    if (out2 != NULL) {
        st = red_finish_out2(op, out, res, out2, res2);
    } else if (out != NULL) {
        st = red_finish_out(op, out, res);
    } else {
        *result = res;
        res = NULL;
        if (two) {
            *result2 = res2;
            res2 = NULL;
        }
    }
done:
    ops_tensor_release(src);
    ops_tensor_release(res);
    ops_tensor_release(res2);
    return st;
}

/* reduce_core2 for the ops with one result. */
static ops_status
reduce_core(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
            ops_dtype dtype, double arg, ops_tensor *out, ops_tensor **result)
{
    return reduce_core2(op, kind, self, dims, keepdim, dtype, arg, out, NULL, result, NULL);
}

/* reduce_core for the ops without a correction. */
static ops_status
reduce_impl(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
            ops_dtype dtype, ops_tensor *out, ops_tensor **result)
{
    return reduce_core(op, kind, self, dims, keepdim, dtype, 1.0, out, result);
}

static ops_tensor *
reduce_new(const char *op, red_kind kind, const ops_tensor *self, const ops_int_list *dims, bool keepdim,
           ops_dtype dtype)
{
    ops_tensor *r = NULL;
    reduce_impl(op, kind, self, dims, keepdim, dtype, NULL, &r);
    return r;
}

/* ---- entry points ---------------------------------------------------------------------- */

ops_tensor *
reduce_sum(const ops_tensor *self, ops_dtype dtype)
{
    return reduce_new("sum", RED_SUM, self, NULL, false, dtype);
}

ops_status
reduce_sum_out(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("sum", RED_SUM, self, NULL, false, dtype, out, NULL);
}

ops_tensor *
reduce_sum_dim(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("sum", RED_SUM, self, dim, keepdim, dtype);
}

ops_status
reduce_sum_dim_out(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("sum", RED_SUM, self, dim, keepdim, dtype, out, NULL);
}

ops_tensor *
reduce_nansum(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("nansum", RED_NANSUM, self, dim, keepdim, dtype);
}

ops_status
reduce_nansum_out(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("nansum", RED_NANSUM, self, dim, keepdim, dtype, out, NULL);
}

ops_tensor *
reduce_mean(const ops_tensor *self, ops_dtype dtype)
{
    return reduce_new("mean", RED_MEAN, self, NULL, false, dtype);
}

ops_status
reduce_mean_out(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("mean", RED_MEAN, self, NULL, false, dtype, out, NULL);
}

ops_tensor *
reduce_mean_dim(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("mean", RED_MEAN, self, dim, keepdim, dtype);
}

ops_status
reduce_mean_dim_out(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("mean", RED_MEAN, self, dim, keepdim, dtype, out, NULL);
}

ops_tensor *
reduce_prod(const ops_tensor *self, ops_dtype dtype)
{
    return reduce_new("prod", RED_PROD, self, NULL, false, dtype);
}

ops_status
reduce_prod_out(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("prod", RED_PROD, self, NULL, false, dtype, out, NULL);
}

ops_tensor *
reduce_prod_dim(const ops_tensor *self, int64_t dim, bool keepdim, ops_dtype dtype)
{
    const ops_int_list d = {&dim, 1};
    return reduce_new("prod", RED_PROD, self, &d, keepdim, dtype);
}

ops_status
reduce_prod_dim_out(const ops_tensor *self, int64_t dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    const ops_int_list d = {&dim, 1};
    return reduce_impl("prod", RED_PROD, self, &d, keepdim, dtype, out, NULL);
}

ops_tensor *
reduce_amax(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    return reduce_new("amax", RED_AMAX, self, &dim, keepdim, OPS_DTYPE_NONE);
}

ops_status
reduce_amax_out(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return reduce_impl("amax", RED_AMAX, self, &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_amin(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    return reduce_new("amin", RED_AMIN, self, &dim, keepdim, OPS_DTYPE_NONE);
}

ops_status
reduce_amin_out(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return reduce_impl("amin", RED_AMIN, self, &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_all(const ops_tensor *self)
{
    return reduce_new("all", RED_ALL, self, NULL, false, OPS_DTYPE_NONE);
}

ops_status
reduce_all_out(const ops_tensor *self, ops_tensor *out)
{
    return reduce_impl("all", RED_ALL, self, NULL, false, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_all_dim(const ops_tensor *self, int64_t dim, bool keepdim)
{
    const ops_int_list d = {&dim, 1};
    return reduce_new("all", RED_ALL, self, &d, keepdim, OPS_DTYPE_NONE);
}

ops_status
reduce_all_dim_out(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *out)
{
    const ops_int_list d = {&dim, 1};
    return reduce_impl("all", RED_ALL, self, &d, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_any(const ops_tensor *self)
{
    return reduce_new("any", RED_ANY, self, NULL, false, OPS_DTYPE_NONE);
}

ops_status
reduce_any_out(const ops_tensor *self, ops_tensor *out)
{
    return reduce_impl("any", RED_ANY, self, NULL, false, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_any_dim(const ops_tensor *self, int64_t dim, bool keepdim)
{
    const ops_int_list d = {&dim, 1};
    return reduce_new("any", RED_ANY, self, &d, keepdim, OPS_DTYPE_NONE);
}

ops_status
reduce_any_dim_out(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *out)
{
    const ops_int_list d = {&dim, 1};
    return reduce_impl("any", RED_ANY, self, &d, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_logsumexp(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    return reduce_new("logsumexp", RED_LSE, self, &dim, keepdim, OPS_DTYPE_NONE);
}

ops_status
reduce_logsumexp_out(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    return reduce_impl("logsumexp", RED_LSE, self, &dim, keepdim, OPS_DTYPE_NONE, out, NULL);
}

ops_tensor *
reduce_nanmean(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    return reduce_new("nanmean", RED_NANMEAN, self, dim, keepdim, dtype);
}

ops_status
reduce_nanmean_out(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    return reduce_impl("nanmean", RED_NANMEAN, self, dim, keepdim, dtype, out, NULL);
}

/* argmax/argmin: dim NULL reduces every dim (the flat index). */
static ops_status
arg_impl(const char *op, red_kind kind, const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out,
         ops_tensor **result)
{
    const ops_int_list d = {dim, 1};
    return reduce_impl(op, kind, self, dim != NULL ? &d : NULL, keepdim, OPS_DTYPE_NONE, out, result);
}

ops_tensor *
reduce_argmax(const ops_tensor *self, const int64_t *dim, bool keepdim)
{
    ops_tensor *r = NULL;
    arg_impl("argmax", RED_ARGMAX, self, dim, keepdim, NULL, &r);
    return r;
}

ops_status
reduce_argmax_out(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out)
{
    return arg_impl("argmax", RED_ARGMAX, self, dim, keepdim, out, NULL);
}

ops_tensor *
reduce_argmin(const ops_tensor *self, const int64_t *dim, bool keepdim)
{
    ops_tensor *r = NULL;
    arg_impl("argmin", RED_ARGMIN, self, dim, keepdim, NULL, &r);
    return r;
}

ops_status
reduce_argmin_out(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out)
{
    return arg_impl("argmin", RED_ARGMIN, self, dim, keepdim, out, NULL);
}

/* var/std: correction None is 1 (Bessel's). */
static double
red_correction(const ops_scalar *correction)
{
    return correction != NULL ? ops_scalar_to_double(*correction) : 1.0;
}

ops_tensor *
reduce_var_correction(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim)
{
    ops_tensor *r = NULL;
    reduce_core("var", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL, &r);
    return r;
}

ops_status
reduce_var_correction_out(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                       ops_tensor *out)
{
    return reduce_core("var", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out, NULL);
}

ops_tensor *
reduce_std_correction(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim)
{
    ops_tensor *r = NULL;
    reduce_core("std", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL, &r);
    return r;
}

ops_status
reduce_std_correction_out(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                       ops_tensor *out)
{
    return reduce_core("std", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out, NULL);
}

/* ---- max, min: whole tensor, and over one dim with indices ------------------------- */

/* max()/min() of every element; out= may have any dtype the result can be cast to. */
static ops_status
minmax_all(const char *op, red_kind kind, const ops_tensor *self, ops_tensor *out, ops_tensor **result)
{
    if (ops_shape_numel(self->ndim, self->sizes) == 0)
        return ops_fail(OPS_ERR_INDEX,
                        "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                        "reduction dim with the 'dim' argument.",
                        op);
    if (out == NULL || out->dtype == self->dtype)
        return reduce_impl(op, kind, self, NULL, false, OPS_DTYPE_NONE, out, result);
    if (!ops_can_cast(self->dtype, out->dtype))
        return ops_fail(OPS_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(out->dtype));
    ops_tensor *r = NULL, *c = NULL;
    ops_status st = reduce_impl(op, kind, self, NULL, false, OPS_DTYPE_NONE, NULL, &r);
    if (st == OPS_OK && (c = red_convert(op, r, out->dtype, false)) == NULL)
        st = ops_last_status();
    if (st == OPS_OK)
        st = red_finish_out(op, out, c);
    ops_tensor_release(r);
    ops_tensor_release(c);
    return st;
}

ops_tensor *
reduce_max(const ops_tensor *self)
{
    ops_tensor *r = NULL;
    minmax_all("max", RED_AMAX, self, NULL, &r);
    return r;
}

ops_status
reduce_max_unary_out(const ops_tensor *self, ops_tensor *out)
{
    return minmax_all("max", RED_AMAX, self, out, NULL);
}

ops_tensor *
reduce_min(const ops_tensor *self)
{
    ops_tensor *r = NULL;
    minmax_all("min", RED_AMIN, self, NULL, &r);
    return r;
}

ops_status
reduce_min_unary_out(const ops_tensor *self, ops_tensor *out)
{
    return minmax_all("min", RED_AMIN, self, out, NULL);
}

/* max.dim/min.dim: values (self's dtype) and int64 indices along dim. */
static ops_status
minmax_dim(const char *op, red_kind kind, const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *values_out,
           ops_tensor *indices_out, ops_tensor **values, ops_tensor **indices)
{
    const ops_int_list d = {&dim, 1};
    return reduce_core2(op, kind, self, &d, keepdim, OPS_DTYPE_NONE, 0.0, values_out, indices_out, values, indices);
}

ops_status
reduce_max_dim(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor **values, ops_tensor **indices)
{
    return minmax_dim("max", RED_MAXDIM, self, dim, keepdim, NULL, NULL, values, indices);
}

ops_status
reduce_max_dim_max(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *max, ops_tensor *max_values)
{
    /* PyTorch's names: max holds the values, max_values the indices */
    return minmax_dim("max", RED_MAXDIM, self, dim, keepdim, max, max_values, NULL, NULL);
}

ops_status
reduce_min_dim(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor **values, ops_tensor **indices)
{
    return minmax_dim("min", RED_MINDIM, self, dim, keepdim, NULL, NULL, values, indices);
}

ops_status
reduce_min_dim_min(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *min, ops_tensor *min_indices)
{
    return minmax_dim("min", RED_MINDIM, self, dim, keepdim, min, min_indices, NULL, NULL);
}

/* ---- aminmax --------------------------------------------------------------------------- */

/* The minimum and the maximum in one pass over dim (NULL: every element); NaN
 * propagates into both, as PyTorch's (and NumPy's amin/amax). */
static ops_status
aminmax_impl(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out_min, ops_tensor *out_max,
             ops_tensor **min, ops_tensor **max)
{
    const ops_int_list d = {dim, 1};
    return reduce_core2("aminmax", RED_AMINMAX, self, dim != NULL ? &d : NULL, keepdim, OPS_DTYPE_NONE, 0.0, out_min,
                        out_max, min, max);
}

ops_status
reduce_aminmax(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor **min, ops_tensor **max)
{
    return aminmax_impl(self, dim, keepdim, NULL, NULL, min, max);
}

ops_status
reduce_aminmax_out(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *min, ops_tensor *max)
{
    return aminmax_impl(self, dim, keepdim, min, max, NULL, NULL);
}

/* ---- var_mean, std_mean ---------------------------------------------------------------- */

ops_status
reduce_var_mean_correction(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                        ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("var_mean", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL,
                        NULL, result0, result1);
}

ops_status
reduce_var_mean_correction_out(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction,
                            bool keepdim, ops_tensor *out0, ops_tensor *out1)
{
    return reduce_core2("var_mean", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out0,
                        out1, NULL, NULL);
}

ops_status
reduce_var_mean(const ops_tensor *self, bool unbiased, ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("var_mean", RED_VAR, self, NULL, false, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

ops_status
reduce_var_mean_dim(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor **result0,
                 ops_tensor **result1)
{
    return reduce_core2("var_mean", RED_VAR, self, dim, keepdim, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

ops_status
reduce_std_mean_correction(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim,
                        ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("std_mean", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), NULL,
                        NULL, result0, result1);
}

ops_status
reduce_std_mean_correction_out(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction,
                            bool keepdim, ops_tensor *out0, ops_tensor *out1)
{
    return reduce_core2("std_mean", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, red_correction(correction), out0,
                        out1, NULL, NULL);
}

ops_status
reduce_std_mean(const ops_tensor *self, bool unbiased, ops_tensor **result0, ops_tensor **result1)
{
    return reduce_core2("std_mean", RED_STD, self, NULL, false, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

ops_status
reduce_std_mean_dim(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor **result0,
                 ops_tensor **result1)
{
    return reduce_core2("std_mean", RED_STD, self, dim, keepdim, OPS_DTYPE_NONE, unbiased ? 1.0 : 0.0, NULL, NULL,
                        result0, result1);
}

/* ---- reduce_meta: the meta step for reduction-like ops outside the kinds --------------- */

ops_status
reduce_meta(const char *op, const ops_tensor *self, const ops_int_list *dims, bool keepdim, unsigned rules,
            const ops_tensor *out, reduce_meta_out *m)
{
    bool mask[OPS_MAX_DIMS];
    int64_t osz[OPS_MAX_DIMS], perm[OPS_MAX_DIMS];
    ops_status st;
    m->rows = m->result = NULL;
    m->nout = m->nred = 1;
    if ((st = red_dims(op, self->ndim, dims, mask)) != OPS_OK)
        return st;
    if ((rules & REDUCE_META_FLOATING) && !ops_dtype_is_floating(self->dtype))
        return ops_fail(OPS_ERR_DTYPE, "%s: expected a floating point input, but got %s", op,
                        ops_dtype_name(self->dtype));
    if (rules & REDUCE_META_NO_IDENTITY) {
        if ((dims == NULL || dims->len == 0) && ops_shape_numel(self->ndim, self->sizes) == 0)
            return ops_fail(OPS_ERR_INDEX,
                            "%s: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                            "reduction dim with the 'dim' argument.",
                            op);
        for (int d = 0; d < self->ndim; d++)
            if (mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_INDEX, "%s: Expected reduction dim %d to have non-zero size.", op, d);
    }
    const int ond = red_out_shape(self, mask, keepdim, osz);
    if (out != NULL && (st = red_check_out(op, out, self->dtype, ond, osz)) != OPS_OK)
        return st;
    /* the kept dims first, the reduced ones last: a contiguous copy is then the rows */
    int np = 0;
    for (int d = 0; d < self->ndim; d++)
        if (!mask[d]) {
            perm[np++] = d;
            m->nout *= self->sizes[d];
        }
    for (int d = 0; d < self->ndim; d++)
        if (mask[d]) {
            perm[np++] = d;
            m->nred *= self->sizes[d];
        }
    ops_tensor *view = ops_permute(self, (ops_int_list){perm, np});
    if (view == NULL)
        return ops_last_status();
    m->rows = red_convert(op, view, self->dtype, true);
    ops_tensor_release(view);
    if (m->rows == NULL ||
        (m->result = ops_tensor_new(op, ond, osz, NULL, self->dtype, ops_tensor_device(self))) == NULL) {
        st = ops_last_status();
        ops_tensor_release(m->rows);
        m->rows = NULL;
        return st;
    }
    return OPS_OK;
}

ops_status
reduce_meta_finish(const char *op, ops_status st, reduce_meta_out *m, ops_tensor *out, ops_tensor **result)
{
    if (st == OPS_OK) {
        if (out != NULL) {
            st = red_finish_out(op, out, m->result);
        } else {
            *result = m->result;
            m->result = NULL;
        }
    }
    ops_tensor_release(m->rows);
    ops_tensor_release(m->result);
    m->rows = m->result = NULL;
    return st;
}

/* ---- var/std with `unbiased` (CompositeExplicitAutograd) ---------------------------------
 * PyTorch's older overloads: unbiased is correction 1, biased correction 0.  They call
 * the correction= forms through the public API, so they run on every device. */

static ops_scalar
unbiased_correction(bool unbiased)
{
    return OPS_SCALAR_INT(unbiased ? 1 : 0);
}

ops_tensor *
var_unbiased_impl(const ops_tensor *self, bool unbiased)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_var_correction(self, NULL, &c, false);
}

ops_tensor *
var_dim_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_var_correction(self, dim, &c, keepdim);
}

ops_status
var_out_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor *out)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_var_correction_out(self, dim, &c, keepdim, out);
}

ops_tensor *
std_unbiased_impl(const ops_tensor *self, bool unbiased)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_std_correction(self, NULL, &c, false);
}

ops_tensor *
std_dim_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_std_correction(self, dim, &c, keepdim);
}

ops_status
std_out_impl(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor *out)
{
    const ops_scalar c = unbiased_correction(unbiased);
    return ops_std_correction_out(self, dim, &c, keepdim, out);
}

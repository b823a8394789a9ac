/* Reductions, the driver for every device: sum, nansum, mean, nanmean, prod, amax,
 * amin, aminmax, max, min (whole tensor, and over one dim with indices), argmax,
 * argmin, var, std, var_mean, std_mean (correction= and unbiased= forms), all, any,
 * logsumexp (the norms: kernels/reduce_norm.c).  The schema names this file's kernels
 * for `CPU, CUDA`.
 *
 * Every form of an op (functional, out=, dim, dim out=, dim=None, and the older
 * `unbiased` overloads of var/std/var_mean/std_mean) is the structured family `meta:
 * reduction` (docs/codegen.md): the generated glue runs this file's meta step,
 * reduce_family_meta (the dims to reduce, dim=None and dim lists alike, the dtype
 * computed in and the result's by the op's kind, its argument checks with their
 * messages, out= checks, allocation on the input's device), then the op's one kernel
 * (reduce_kind_kernel, reduce_var_kernel: the element loops through the reduce_loop
 * stub, kernels/cpu/reduce.c and kernels/cuda/reduce.cu), then reduce_family_finish.
 * The input is first converted to the dtype the op computes in when that differs (sum
 * of int32 is an int64 sum, sum(dtype=float64) a float64 one); max()/min() compute in
 * self's dtype and cast into an out= of another dtype at the write (`cast_out`).
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

/* The rows of an op outside the kinds (RED_ROWS): its rules, out= in self's dtype, self
 * permuted so that the kept dims come first and the reduced ones last, whose
 * contiguous copy is then the rows. */
static ops_status
red_rows_meta(ops_reduce *r, const char *op, unsigned rules, const ops_tensor *self, const ops_int_list *dims,
              bool keepdim, const ops_tensor *out)
{
    int64_t osz[OPS_MAX_DIMS], perm[OPS_MAX_DIMS];
    ops_status st;
    if ((st = red_dims(op, self->ndim, dims, r->mask)) != OPS_OK)
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
            if (r->mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_INDEX, "%s: Expected reduction dim %d to have non-zero size.", op, d);
    }
    const int ond = red_out_shape(self, r->mask, keepdim, osz);
    if (out != NULL && (st = red_check_out(op, out, self->dtype, ond, osz)) != OPS_OK)
        return st;
    int np = 0;
    for (int d = 0; d < self->ndim; d++)
        if (!r->mask[d]) {
            perm[np++] = d;
            r->nout *= self->sizes[d];
        }
    for (int d = 0; d < self->ndim; d++)
        if (r->mask[d]) {
            perm[np++] = d;
            r->nred *= self->sizes[d];
        }
    ops_tensor *view = ops_permute(self, (ops_int_list){perm, np});
    if (view == NULL)
        return ops_last_status();
    r->src = red_convert(op, view, self->dtype, true);
    ops_tensor_release(view);
    if (r->src == NULL || (r->res = ops_tensor_new(op, ond, osz, NULL, self->dtype, r->device)) == NULL)
        return ops_last_status();
    return OPS_OK;
}

/* The norms' dtypes, with torch.norm's messages or (linalg) torch.linalg.vector_norm's:
 * a floating input and dtype, a dtype the input converts to without narrowing. */
static ops_status
red_norm_dtypes(const char *op, bool linalg, const ops_tensor *self, ops_dtype dtype)
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
    return OPS_OK;
}

static ops_status
red_meta(ops_reduce *r, const char *op, red_kind kind, unsigned rules, const ops_tensor *self,
         const ops_int_list *dims, bool keepdim, ops_dtype dtype, const ops_tensor *out, const ops_tensor *out2,
         bool two)
{
    ops_status st = OPS_OK;
    int64_t osz[OPS_MAX_DIMS];
    if (kind == RED_ROWS)
        return red_rows_meta(r, op, rules, self, dims, keepdim, out);

    if ((st = red_dims(op, self->ndim, dims, r->mask)) != OPS_OK)
        return st;
    const int ond = red_out_shape(self, r->mask, keepdim, osz);

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
    case RED_NORM:
        if ((st = red_norm_dtypes(op, (rules & REDUCE_META_LINALG) != 0, self, dtype)) != OPS_OK)
            return st;
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
        if (out != NULL && out->dtype != cd && !(rules & REDUCE_META_CAST_OUT))
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
            if (r->mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", op, d);
    }
    /* max()/min() say "max(): ...", as max.dim does */
    const char *const paren = (rules & REDUCE_META_CAST_OUT) ? "()" : "";
    if (kind == RED_AMAX || kind == RED_AMIN || kind == RED_ARGMAX || kind == RED_ARGMIN) {
        if (dims == NULL || dims->len == 0) {
            if (ops_shape_numel(self->ndim, self->sizes) == 0)
                return ops_fail(OPS_ERR_INDEX,
                                "%s%s: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                                "reduction dim with the 'dim' argument.",
                                op, paren);
        } else {
            for (int d = 0; d < self->ndim; d++)
                if (r->mask[d] && self->sizes[d] == 0)
                    return ops_fail(OPS_ERR_INDEX, "%s%s: Expected reduction dim %d to have non-zero size.", op,
                                    paren, d);
        }
    }
    /* max()/min(): computed in self's dtype, cast into out= at the write */
    const bool cast_out = out != NULL && (rules & REDUCE_META_CAST_OUT) && out->dtype != rd;
    if (cast_out && !ops_can_cast(rd, out->dtype))
        return ops_fail(OPS_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", op,
                        ops_dtype_name(rd), ops_dtype_name(out->dtype));
    if (kind == RED_AMINMAX) {
        if (dims == NULL && ops_shape_numel(self->ndim, self->sizes) == 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: cannot compute aminmax over an empty dimension as the operation has no identity.", op);
        for (int d = 0; d < self->ndim; d++)
            if (r->mask[d] && self->sizes[d] == 0)
                return ops_fail(OPS_ERR_VALUE, "%s: Expected reduction dim %d to have non-zero size.", op, d);
    }
    const ops_dtype rd2 = kind == RED_MAXDIM || kind == RED_MINDIM ? OPS_INT64 : rd;
    if (out2 != NULL) {
        if ((st = red_check_out2(op, out, rd, out2, rd2, ond, osz)) != OPS_OK)
            return st;
    } else if (out != NULL && (st = red_check_out(op, out, cast_out ? OPS_DTYPE_NONE : rd, ond, osz)) != OPS_OK) {
        return st;
    }

    if ((r->src = red_convert(op, self, kind == RED_ALL || kind == RED_ANY ? self->dtype : cd, false)) == NULL)
        return ops_last_status();
    for (int d = 0; d < self->ndim; d++)
        if (r->mask[d])
            r->nred *= self->sizes[d];
    r->nout = ops_shape_numel(ond, osz);
    if ((r->res = ops_tensor_new(op, ond, osz, NULL, rd, r->device)) == NULL ||
        (two && (r->res2 = ops_tensor_new(op, ond, osz, NULL, rd2, r->device)) == NULL))
        return ops_last_status();
    return OPS_OK;
}

static void
red_release(ops_reduce *r)
{
    ops_tensor_release(r->src);
    ops_tensor_release(r->res);
    ops_tensor_release(r->res2);
    r->src = r->res = r->res2 = NULL;
}

ops_status
reduce_family_meta(ops_reduce *r, const char *op, red_kind kind, unsigned rules, const ops_tensor *self,
                   const ops_int_list *dims, bool keepdim, ops_dtype dtype, const ops_tensor *out,
                   const ops_tensor *out2, bool two)
{
    r->op = op;
    r->kind = kind;
    r->device = ops_tensor_device(self);
    r->self = self;
    r->dims = dims;
    r->dtype = dtype;
    r->src = r->res = r->res2 = NULL;
    r->nout = r->nred = 1;
    const ops_status st = red_meta(r, op, kind, rules, self, dims, keepdim, dtype, out, out2, two);
    if (st != OPS_OK)
        red_release(r);
    return st;
}

ops_status
reduce_family_loop(ops_reduce *r, double arg)
{
    return OPS_STUB_CALL(reduce_loop, r->device, r->op, r->kind, r->src, r->mask, arg, r->res, r->res2);
}

ops_status
red_deliver(const char *op, ops_tensor **res, ops_tensor **res2, ops_tensor *out, ops_tensor *out2,
            ops_tensor **result, ops_tensor **result2)
{
    if (out2 != NULL)
        return red_finish_out2(op, out, *res, out2, *res2);
    if (out != NULL)
        return red_finish_out(op, out, *res);
    *result = *res;
    *res = NULL;
    if (result2 != NULL) {
        *result2 = *res2;
        *res2 = NULL;
    }
    return OPS_OK;
}

ops_status
reduce_family_finish(ops_reduce *r, ops_status st, ops_tensor *out, ops_tensor *out2, ops_tensor **result,
                     ops_tensor **result2)
{
    if (st == OPS_OK)
        st = red_deliver(r->op, &r->res, &r->res2, out, out2, result, result2);
    red_release(r);
    return st;
}

/* ---- the kernels of the structured family (`meta: reduction`) ----------------------------
 * The generated glue of every form (functional, out=, dim, dim out=, dim=None) has run
 * reduce_family_meta with the op's kind (its `reduce:` in the schema) and runs
 * reduce_family_finish after the kernel: what is left is the loops. */

/* sum, nansum, mean, nanmean, prod, amax, amin, max(), min(), all, any, logsumexp, argmax,
 * argmin, max.dim, min.dim, aminmax: the kind's loops, no argument of their own. */
ops_status
reduce_kind_kernel(ops_reduce *r)
{
    return reduce_family_loop(r, 1.0);
}

/* var/std: correction None is 1 (Bessel's). */
static double
red_correction(const ops_scalar *correction)
{
    return correction != NULL ? ops_scalar_to_double(*correction) : 1.0;
}

/* var, std, var_mean, std_mean (every form: the glue passes an `unbiased` as correction
 * 1 or 0): the loops with the divisor's correction. */
ops_status
reduce_var_kernel(ops_reduce *r, const ops_scalar *correction)
{
    return reduce_family_loop(r, red_correction(correction));
}

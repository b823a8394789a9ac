/* The host-side checks and plans of the indexing and sorting ops that both backends
 * run before anything is written (declared in kernels/index_check.h): shapes, dims,
 * dtypes, out= rules, the messages of a bad index value, repeat_interleave's counts
 * and the advanced-indexing plan. */
#include <inttypes.h>
#include <string.h>

#include "kernels/index_check.h"
#include "ops_dispatch.h"

/* ---- from the index ops ---- */

ops_status
idx_index_error(const char *op, idx_err_kind kind, int64_t k, int64_t dim, int64_t size)
{
    switch (kind) {
    case IDX_ERR_SELECT:
        return ops_fail(OPS_ERR_INDEX,
                        "%s: index out of range in self (index %" PRId64 " of dimension %" PRId64 " with size %" PRId64
                        ")",
                        op, k, dim, size);
    case IDX_ERR_ADD:
        return ops_fail(OPS_ERR_INDEX, "%s: index out of range in self (index %" PRId64 ", size %" PRId64 ")", op, k,
                        size);
    case IDX_ERR_FLAT:
        return ops_fail(OPS_ERR_INDEX,
                        "%s: out of range: tried to access index %" PRId64 " on a tensor of %" PRId64 " elements.", op,
                        k, size);
    default:
        return ops_fail(OPS_ERR_INDEX,
                        "%s: index %" PRId64 " is out of bounds for dimension %" PRId64 " with size %" PRId64, op, k,
                        dim, size);
    }
}

ops_status
idx_check_inplace_self(const char *op, const ops_tensor *self)
{
    if (ops_tensor_has_internal_overlap(self))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers to a single "
                        "memory location. Please clone() the tensor before performing the operation.",
                        op);
    return OPS_OK;
}

ops_status
idx_deliver(const char *op, idx_form form, ops_tensor *r, const ops_tensor *self, ops_tensor *out,
            ops_tensor **res)
{
    if (form == IDX_FUNCTIONAL) {
        *res = r;
        return r != NULL ? OPS_OK : ops_last_status();
    }
    if (form == IDX_OUT)
        return ops_write_out(op, r, out);
    if (r == NULL)
        return ops_last_status();
    ops_tensor *s = (ops_tensor *)self;
    ops_status st = ops_copy_values(op, s, r);
    ops_tensor_release(r);
    if (st == OPS_OK)
        ops_tensor_bump_version(s);
    return st;
}

ops_status
idx_accum_begin(const char *op, const ops_tensor *self, ops_dtype acc_dt, ops_tensor **acc, ops_tensor **r)
{
    const ops_device dev = self->storage->device;
    *r = NULL;
    if ((*acc = ops_tensor_new(op, self->ndim, self->sizes, NULL, acc_dt, dev)) == NULL)
        return ops_last_status();
    ops_status st = ops_copy_values(op, *acc, self);
    if (st == OPS_OK && acc_dt != self->dtype &&
        (*r = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, dev)) == NULL)
        st = ops_last_status();
    if (st != OPS_OK) {
        ops_tensor_release(*acc);
        *acc = NULL;
    }
    return st;
}

ops_tensor *
idx_accum_end(const char *op, ops_status st, ops_tensor *acc, ops_tensor *r)
{
    if (st == OPS_OK && r == NULL)
        return acc;
    if (st == OPS_OK)
        st = ops_copy_values(op, r, acc);
    ops_tensor_release(acc);
    if (st != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_status
idx_check_select(const char *op, const ops_tensor *self, int64_t *dim, const ops_tensor *index)
{
    if (index->dtype != OPS_INT64 && index->dtype != OPS_INT32)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected dtype int32 or int64 for index, but got %s", op,
                        ops_dtype_name(index->dtype));
    if (index->ndim > 1)
        return ops_fail(OPS_ERR_SHAPE, "%s: Index is supposed to be a vector, but got %d dimensions", op,
                        (int)index->ndim);
    if (!ops_wrap_dim(op, "dim", dim, self->ndim))
        return ops_last_status();
    return OPS_OK;
}

ops_status
idx_check_gather(const char *op, const ops_tensor *self, int64_t *dim, const ops_tensor *index)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (index->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected dtype int64 for index, but got %s", op,
                        ops_dtype_name(index->dtype));
    if (!ops_wrap_dim(op, "dim", dim, self->ndim))
        return ops_last_status();
    /* 0-dim tensors count as 1-D of size 1 (PyTorch's ensure_nonempty_dim) */
    const int snd = self->ndim > 0 ? self->ndim : 1, ind = index->ndim > 0 ? index->ndim : 1;
    if (snd != ind)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Index tensor must have the same number of dimensions as input tensor (%d and %d)", op,
                        ind, snd);
    const int64_t one = 1;
    const int64_t *ssz = self->ndim ? self->sizes : &one, *isz = index->ndim ? index->sizes : &one;
    for (int d = 0; d < snd; d++)
        if (d != *dim && isz[d] > ssz[d])
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Size does not match at dimension %d expected index %s to be smaller than self %s "
                            "apart from dimension %" PRId64,
                            op, d, ops_shape_str(ind, isz, b1, sizeof b1), ops_shape_str(snd, ssz, b2, sizeof b2),
                            *dim);
    return OPS_OK;
}

ops_status
idx_check_value_tensor(const char *op, const char *what, const ops_tensor *value)
{
    if (value->ndim != 0)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: %s only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).", op,
                        what, (int)value->ndim);
    return OPS_OK;
}

ops_status
idx_check_fill_mask(const char *op, const ops_tensor *mask)
{
    if (mask->dtype != OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE, "%s: masked_fill_ only supports boolean masks, but got mask with dtype %s", op,
                        ops_dtype_name(mask->dtype));
    return OPS_OK;
}

/* ---- from the index_add ops ---- */

/* PyTorch's index_func_meta_impl (index_add), index_copy's and index_fill's checks. */
ops_status
idx_check_func(const char *op, ix_mode mode, const ops_tensor *self, int64_t *dim, const ops_tensor *index,
               const ops_tensor *source)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    if (!ops_wrap_dim(op, "dim", dim, self->ndim))
        return ops_last_status();
    if (index->ndim > 1)
        return ops_fail(OPS_ERR_SHAPE, "%s: Index is supposed to be a vector, but got dim: %d with size: %s", op,
                        (int)index->ndim, ops_shape_str(index->ndim, index->sizes, b1, sizeof b1));
    if (mode == IX_ADD) {
        if (index->dtype != OPS_INT64 && index->dtype != OPS_INT32)
            return ops_fail(OPS_ERR_DTYPE, "%s: Expected dtype int32/int64 for index but got: %s", op,
                            ops_dtype_name(index->dtype));
    } else if (index->dtype != OPS_INT64) {
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected %s for index, but got %s", op,
                        mode == IX_FILL ? "dtype int64" : "a long tensor", ops_dtype_name(index->dtype));
    }
    const int64_t n = ops_tensor_numel(index);
    if (source != NULL) {
        if (source->dtype != self->dtype)
            return ops_fail(OPS_ERR_DTYPE, "%s: self (%s) and source (%s) must have the same scalar type", op,
                            ops_dtype_name(self->dtype), ops_dtype_name(source->dtype));
        if (source->ndim != 0 && self->ndim != 0 && source->ndim != self->ndim)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: When source and destination are not scalars, their dimensionality must match. "
                            "Source dimensionality (%d), destination dimensionality (%d)",
                            op, (int)source->ndim, (int)self->ndim);
        const int64_t ssize = source->ndim ? (*dim < source->ndim ? source->sizes[*dim] : 1) : 1;
        if (n != ssize)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Number of indices (%" PRId64 ") should be equal to source.size(dim) (%" PRId64 ")",
                            op, n, ssize);
        /* A 0-dim self takes one element of source per index, so source's other dims
         * must be 1s (PyTorch skips the check for a 0-dim self, and reads past an
         * empty source such as [1, 5, 0]). */
        bool same = self->ndim != 0 || source->ndim == 0 || ops_tensor_numel(source) == n;
        for (int d = 0; d < self->ndim && source->ndim; d++)
            same = same && (d == *dim || self->sizes[d] == source->sizes[d]);
        if (!same)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: source tensor shape must match self tensor shape, excluding the specified "
                            "dimension. Got self.shape = %s source.shape = %s",
                            op, ops_shape_str(self->ndim, self->sizes, b1, sizeof b1),
                            ops_shape_str(source->ndim, source->sizes, b2, sizeof b2));
    }
    return OPS_OK;
}

ops_status
idx_check_alpha(const char *op, const ops_tensor *self, ops_scalar alpha)
{
    if (alpha.kind == OPS_SCALAR_BOOL && self->dtype != OPS_BOOL)
        return ops_fail(OPS_ERR_VALUE, "%s: Boolean alpha only supported for Boolean results.", op);
    if (alpha.kind == OPS_SCALAR_FLOAT && !ops_dtype_is_floating(self->dtype))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: For integral input tensors, argument alpha must not be a floating point number.", op);
    return OPS_OK;
}

/* ---- from the index_advanced ops ---- */

ops_status
idx_plan_build(const char *op, const ops_tensor *self, ops_tensor_list indices, idx_nonzero_fn nonzero, adv_plan *p)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    memset(p, 0, sizeof *p);
    p->nd = self->ndim;
    int d = 0;
    for (int64_t i = 0; i < indices.len; i++) {
        const ops_tensor *t = indices.data[i];
        if (t == NULL) {
            if (d >= self->ndim)
                goto too_many;
            d++;
            continue;
        }
        if (t->dtype == OPS_BOOL || t->dtype == OPS_UINT8) {
            /* a mask over dims d .. d + t->ndim - 1 */
            if (d + t->ndim > self->ndim)
                goto too_many;
            for (int j = 0; j < t->ndim; j++)
                if (t->sizes[j] != self->sizes[d + j]) {
                    ops_fail(OPS_ERR_INDEX,
                             "%s: The shape of the mask %s at index %d does not match the shape of the indexed "
                             "tensor %s at index %d",
                             op, ops_shape_str(t->ndim, t->sizes, b1, sizeof b1), j,
                             ops_shape_str(self->ndim, self->sizes, b2, sizeof b2), d + j);
                    goto fail;
                }
            ops_tensor *nz = nonzero(op, t);
            if (nz == NULL)
                goto fail;
            p->owned[p->nowned++] = nz;
            for (int j = 0; j < t->ndim; j++) {
                /* column j of nz, a view whose header we own */
                ops_tensor *col = ops_tensor_new_view(nz, 1, nz->sizes, &nz->strides[0], nz->offset + j);
                if (col == NULL)
                    goto fail;
                p->owned[p->nowned++] = col;
                p->idx[d++] = col;
            }
            continue;
        }
        if (t->dtype != OPS_INT64 && t->dtype != OPS_INT32) {
            ops_fail(OPS_ERR_INDEX, "%s: tensors used as indices must be long, int, byte or bool tensors (got %s)",
                     op, ops_dtype_name(t->dtype));
            goto fail;
        }
        if (d >= self->ndim)
            goto too_many;
        p->idx[d++] = t;
    }
    /* broadcast the integer indices together */
    int first = -1, last = -1;
    for (int k = 0; k < p->nd; k++) {
        if (p->idx[k] == NULL)
            continue;
        const ops_tensor *t = p->idx[k];
        if (first < 0) {
            p->bnd = t->ndim;
            memcpy(p->bshape, t->sizes, (size_t)t->ndim * sizeof(int64_t));
        } else {
            int nb;
            int64_t bs[OPS_MAX_DIMS];
            if (ops_broadcast_shapes(op, "indices", p->bnd, p->bshape, "indices", t->ndim, t->sizes, &nb, bs) !=
                OPS_OK) {
                ops_clear_error();
                /* PyTorch lists every index's shape; the two that disagree are enough */
                ops_fail(OPS_ERR_INDEX, "%s: shape mismatch: indexing tensors could not be broadcast together with "
                                        "shapes %s, %s",
                         op, ops_shape_str(p->bnd, p->bshape, b1, sizeof b1),
                         ops_shape_str(t->ndim, t->sizes, b2, sizeof b2));
                goto fail;
            }
            p->bnd = nb;
            memcpy(p->bshape, bs, (size_t)nb * sizeof(int64_t));
        }
        if (first < 0)
            first = k;
        last = k;
    }
    if (first < 0) {
        /* no index at all: the result is self's shape */
        p->bpos = 0;
        p->bnd = 0;
        p->rnd = p->nd;
        for (int k = 0; k < p->nd; k++) {
            p->rpos[k] = k;
            p->rshape[k] = self->sizes[k];
        }
        return OPS_OK;
    }
    bool adjacent = true;
    for (int k = first; k <= last; k++)
        if (p->idx[k] == NULL)
            adjacent = false;
    int rnd = 0;
    if (adjacent)
        for (int k = 0; k < first; k++) {
            p->rpos[k] = rnd;
            p->rshape[rnd++] = self->sizes[k];
        }
    p->bpos = rnd;
    if (rnd + p->bnd > OPS_MAX_DIMS)
        goto too_many_dims;
    memcpy(p->rshape + rnd, p->bshape, (size_t)p->bnd * sizeof(int64_t));
    rnd += p->bnd;
    for (int k = adjacent ? last + 1 : 0; k < p->nd; k++) {
        if (p->idx[k] != NULL)
            continue;
        if (rnd >= OPS_MAX_DIMS)
            goto too_many_dims;
        p->rpos[k] = rnd;
        p->rshape[rnd++] = self->sizes[k];
    }
    p->rnd = rnd;
    for (int k = 0; k < p->nd; k++)
        if (p->idx[k] != NULL)
            idx_bcast_strides(p->idx[k], p->bnd, p->bshape, p->ist[k]);
    return OPS_OK;
too_many:
    ops_fail(OPS_ERR_INDEX, "%s: too many indices for tensor of dimension %d (got %" PRId64 ")", op, (int)self->ndim,
             indices.len);
    goto fail;
too_many_dims:
    ops_fail(OPS_ERR_SHAPE, "%s: the indexing result would have more than %d dims", op, OPS_MAX_DIMS);
fail:
    idx_plan_release(p);
    return ops_last_status();
}

void
idx_plan_release(adv_plan *p)
{
    for (int i = 0; i < p->nowned; i++)
        ops_tensor_release(p->owned[i]);
    p->nowned = 0;
}

/* ---- from the index_masked ops ---- */

ops_status
idx_check_select_mask(const char *op, const ops_tensor *mask)
{
    if (mask->dtype != OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected BoolTensor for mask, but got mask with dtype %s", op,
                        ops_dtype_name(mask->dtype));
    return OPS_OK;
}

ops_status
idx_check_masked_scatter(const char *op, const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    if (mask->dtype != OPS_BOOL)
        return ops_fail(OPS_ERR_DTYPE, "%s: masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                        op, ops_dtype_name(mask->dtype));
    if (source->dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: expected self and source to have same dtypes but got %s and %s", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(source->dtype));
    return OPS_OK;
}

ops_status
idx_masked_scatter_count_error(const char *op, int64_t nsource, int64_t ntrue)
{
    return ops_fail(OPS_ERR_VALUE,
                    "%s: Number of elements of source < number of ones in mask (%" PRId64 " < %" PRId64 ")", op,
                    nsource, ntrue);
}

ops_status
idx_check_masked_scatter_inplace(const char *op, const ops_tensor *self, const ops_tensor *mask)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    ops_status st = ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd,
                                         shape);
    if (st != OPS_OK)
        return st;
    if (nd != self->ndim || memcmp(shape, self->sizes, (size_t)nd * sizeof(int64_t)) != 0)
        return ops_fail(OPS_ERR_SHAPE, "%s: mask of shape %s cannot be broadcast to self's shape %s", op,
                        ops_shape_str(mask->ndim, mask->sizes, b1, sizeof b1),
                        ops_shape_str(self->ndim, self->sizes, b2, sizeof b2));
    return idx_check_inplace_self(op, self);
}

/* ---- from the index_scatter ops ---- */

ops_status
idx_parse_reduce(const char *op, const ops_tensor *self, const char *reduce, bool new_options, sc_reduce *r)
{
    if (!new_options) {
        if (strcmp(reduce, "add") == 0)
            *r = SC_SUM;
        else if (strcmp(reduce, "multiply") == 0)
            *r = SC_PROD;
        else
            return ops_fail(OPS_ERR_VALUE, "%s: reduce argument must be either add or multiply.", op);
        return OPS_OK;
    }
    static const char *const names[] = {"sum", "prod", "mean", "amax", "amin"};
    static const sc_reduce ops[] = {SC_SUM, SC_PROD, SC_MEAN, SC_AMAX, SC_AMIN};
    for (int i = 0; i < 5; i++)
        if (strcmp(reduce, names[i]) == 0) {
            *r = ops[i];
            /* bool as PyTorch: sum and amax are a logical or, prod and amin a logical
             * and (the bool stores of the shared loops); mean has no bool meaning */
            if (self->dtype == OPS_BOOL && ops[i] == SC_MEAN)
                return ops_fail(OPS_ERR_DTYPE, "%s: reduce='mean' is not supported for dtype bool (sum, prod, "
                                "amax and amin are)", op);
            return OPS_OK;
        }
    return ops_fail(OPS_ERR_VALUE, "%s: reduce argument must be either sum, prod, mean, amax or amin, got %s", op,
                    reduce);
}

/* dim wrapped; dtypes, shapes and every index value checked (PyTorch's
 * scatter_gather_dtype_check, scatter_shape_check and the kernel's bound check). */
ops_status
idx_check_scatter(const char *op, const ops_tensor *self, int64_t *dim, const ops_tensor *index, const ops_tensor *src)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN], b3[OPS_SHAPE_STR_LEN];
    if (!ops_wrap_dim(op, "dim", dim, self->ndim))
        return ops_last_status();
    const int64_t n = ops_tensor_numel(index);
    if (n != 0 && index->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected dtype int64 for index, but got %s", op,
                        ops_dtype_name(index->dtype));
    if (src != NULL && src->dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected self.dtype to be equal to src.dtype (got %s and %s)", op,
                        ops_dtype_name(self->dtype), ops_dtype_name(src->dtype));
    if (n == 0)
        return OPS_OK;
    const int snd = self->ndim ? self->ndim : 1, ind = index->ndim ? index->ndim : 1;
    if (snd != ind)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Index tensor must have the same number of dimensions as self tensor (%d and %d)", op, ind,
                        snd);
    if (src != NULL && (src->ndim ? src->ndim : 1) != ind)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Index tensor must have the same number of dimensions as src tensor (%d and %d)", op, ind,
                        src->ndim ? src->ndim : 1);
    bool wrong = false;
    for (int d = 0; d < snd && !wrong; d++) {
        const int64_t is = index->ndim ? index->sizes[d] : 1;
        if (d != *dim && is > (self->ndim ? self->sizes[d] : 1))
            wrong = true;
        if (src != NULL && is > (src->ndim ? src->sizes[d] : 1))
            wrong = true;
    }
    if (wrong) {
        if (src != NULL)
            return ops_fail(OPS_ERR_SHAPE,
                            "%s: Expected index %s to be smaller than self %s apart from dimension %" PRId64
                            " and to be smaller size than src %s",
                            op, ops_shape_str(index->ndim, index->sizes, b1, sizeof b1),
                            ops_shape_str(self->ndim, self->sizes, b2, sizeof b2), *dim,
                            ops_shape_str(src->ndim, src->sizes, b3, sizeof b3));
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: Expected index %s to be smaller than self %s apart from dimension %" PRId64, op,
                        ops_shape_str(index->ndim, index->sizes, b1, sizeof b1),
                        ops_shape_str(self->ndim, self->sizes, b2, sizeof b2), *dim);
    }
    return OPS_OK;
}

/* The value include_self=False starts a touched element from (lowest for amax, ...). */
ops_scalar
idx_reduce_identity(sc_reduce red, ops_dtype dt)
{
    if (red == SC_PROD)
        return OPS_SCALAR_INT(1);
    if (red != SC_AMAX && red != SC_AMIN)
        return OPS_SCALAR_INT(0);
    const bool mx = red == SC_AMAX;
    switch (dt) {
    case OPS_BOOL:
        return OPS_SCALAR_BOOL(!mx);
    case OPS_UINT8:
        return OPS_SCALAR_INT(mx ? 0 : UINT8_MAX);
    case OPS_INT8:
        return OPS_SCALAR_INT(mx ? INT8_MIN : INT8_MAX);
    case OPS_INT16:
        return OPS_SCALAR_INT(mx ? INT16_MIN : INT16_MAX);
    case OPS_INT32:
        return OPS_SCALAR_INT(mx ? INT32_MIN : INT32_MAX);
    case OPS_INT64:
        return OPS_SCALAR_INT(mx ? INT64_MIN : INT64_MAX);
    default:
        return OPS_SCALAR_FLOAT(mx ? -INFINITY : INFINITY);
    }
}

/* ---- from the index_take ops ---- */

/* dtypes: the repeats dtypes the op declares (int32 and int64; repeat_interleave.Tensor's
 * glue refuses the others first, with this message, and this guards a direct call). */
static ops_status
check_repeats_dtype(const char *op, unsigned dtypes, const ops_tensor *repeats)
{
    if (!(dtypes & OPS_DTYPE_BIT(repeats->dtype)))
        return ops_fail(OPS_ERR_DTYPE, "%s: repeats has to be Long or Int tensor, but got %s", op,
                        ops_dtype_name(repeats->dtype));
    return OPS_OK;
}

/* repeats (1-D, int32 or int64, >= 0) read as int64 into reps[n] (n = repeats.numel())
 * and their sum, checked against output_size when given. */
static ops_status
read_repeats(const char *op, const ops_tensor *repeats, int64_t *reps, const int64_t *output_size, int64_t *total)
{
    const int64_t n = ops_tensor_numel(repeats);
    const size_t is = ops_dtype_itemsize(repeats->dtype);
    const char *b = (const char *)repeats->storage->data;
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *p = b + (size_t)idx_linear_offset(repeats, i) * is;
        int64_t v;
        if (repeats->dtype == OPS_INT32) {
            int32_t v32;
            memcpy(&v32, p, 4);
            v = v32;
        } else {
            memcpy(&v, p, 8);
        }
        if (v < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: repeats can not be negative", op);
        reps[i] = v;
        if (ops_add_overflow_i64(sum, v, &sum))
            return ops_fail(OPS_ERR_VALUE, "%s: the sum of repeats does not fit int64", op);
    }
    if (output_size != NULL && *output_size != sum)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: allocated size does not match required size (output_size=%" PRId64
                        ", sum of repeats %" PRId64 ")",
                        op, *output_size, sum);
    *total = sum;
    return OPS_OK;
}

ops_status
idx_check_take(const char *op, const ops_tensor *self, const ops_tensor *index)
{
    if (index->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "%s: take(): Expected a long tensor for index, but got %s", op,
                        ops_dtype_name(index->dtype));
    if (ops_tensor_numel(self) == 0 && ops_tensor_numel(index) != 0)
        return ops_fail(OPS_ERR_INDEX, "%s: take(): tried to take from an empty tensor", op);
    return OPS_OK;
}

ops_status
idx_check_put(const char *op, const ops_tensor *self, const ops_tensor *index, const ops_tensor *source)
{
    if (index->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "%s: put_(): Expected a long tensor for index, but got %s", op,
                        ops_dtype_name(index->dtype));
    if (source->dtype != self->dtype)
        return ops_fail(OPS_ERR_DTYPE,
                        "%s: put_(): self and source expected to have the same dtype, but got self.dtype = %s "
                        "and source.dtype = %s",
                        op, ops_dtype_name(self->dtype), ops_dtype_name(source->dtype));
    const int64_t n = ops_tensor_numel(index);
    if (ops_tensor_numel(source) != n)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: put_(): Expected source and index to have the same number of elements, but got "
                        "source.numel() = %" PRId64 ", index.numel() = %" PRId64,
                        op, ops_tensor_numel(source), n);
    if (ops_tensor_numel(self) == 0 && n != 0)
        return ops_fail(OPS_ERR_INDEX, "%s: put_(): Tried to put elements into an empty tensor", op);
    return OPS_OK;
}

ops_status
idx_repeat_counts(const char *op, const ops_tensor *self, const ops_tensor *repeats, int64_t rep_int,
                  const int64_t *dim_opt, const int64_t *output_size, int64_t **reps_out, int64_t *dim_out,
                  int64_t *total_out)
{
    int64_t *reps = NULL;
    *reps_out = NULL;
    if (repeats != NULL) {
        if (check_repeats_dtype(op, OPS_DTYPE_BIT(OPS_INT32) | OPS_DTYPE_BIT(OPS_INT64), repeats) != OPS_OK)
            return ops_last_status();
        if (repeats->ndim > 1)
            return ops_fail(OPS_ERR_SHAPE, "%s: repeats must be 0-dim or 1-dim tensor", op);
    }
    int64_t dim = 0, size;
    if (dim_opt == NULL || self->ndim == 0) {
        if (dim_opt != NULL) {
            dim = *dim_opt;
            if (!ops_wrap_dim(op, "dim", &dim, 0))
                return ops_last_status();
        }
        dim = -1;
        size = ops_tensor_numel(self);
    } else {
        dim = *dim_opt;
        if (!ops_wrap_dim(op, "dim", &dim, self->ndim))
            return ops_last_status();
        size = self->sizes[dim];
    }
    const bool same = repeats == NULL || repeats->ndim == 0 || repeats->sizes[0] == 1;
    if (!same && repeats->sizes[0] != size)
        return ops_fail(OPS_ERR_SHAPE,
                        "%s: repeats must have the same size as input along dim, but got repeats.size(0) = %" PRId64
                        " and input.size(%" PRId64 ") = %" PRId64,
                        op, repeats->sizes[0], dim < 0 ? 0 : dim, size);
    reps = ops_host_malloc_array(size > 0 ? size : 1, sizeof(int64_t));
    if (reps == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (a list of %" PRId64 " repeats)", op, size);
    int64_t total = 0;
    if (!same) {
        if (read_repeats(op, repeats, reps, NULL, &total) != OPS_OK)
            goto fail;
    } else {
        int64_t v = rep_int, one_total;
        if (repeats != NULL && read_repeats(op, repeats, &v, NULL, &one_total) != OPS_OK)
            goto fail;
        if (v < 0) {
            ops_fail(OPS_ERR_VALUE, "%s: repeats can not be negative", op);
            goto fail;
        }
        if (ops_mul_overflow_i64(v, size, &total)) {
            ops_fail(OPS_ERR_VALUE, "%s: %" PRId64 " repeats of %" PRId64 " slices do not fit int64", op, v, size);
            goto fail;
        }
        for (int64_t i = 0; i < size; i++)
            reps[i] = v;
    }
    if (output_size != NULL && *output_size != total) {
        ops_fail(OPS_ERR_VALUE,
                 "%s: allocated size does not match required size (output_size=%" PRId64 ", required %" PRId64 ")",
                 op, *output_size, total);
        goto fail;
    }
    *reps_out = reps, *dim_out = dim, *total_out = total;
    return OPS_OK;
fail:
    ops_host_free(reps);
    return ops_last_status();
}

ops_status
idx_repeat_tensor_rank(const char *op, const ops_tensor *repeats)
{
    if (repeats->ndim != 1)
        return ops_fail(OPS_ERR_SHAPE, "%s: repeat_interleave only accept 1D vector as repeat (got %d dims)", op,
                        (int)repeats->ndim);
    return OPS_OK;
}

ops_status
idx_repeat_tensor_counts(const char *op, unsigned dtypes, const ops_tensor *repeats, const int64_t *output_size,
                         int64_t **reps, int64_t *total)
{
    *reps = NULL;
    if (idx_repeat_tensor_rank(op, repeats) != OPS_OK)
        return ops_last_status();
    if (check_repeats_dtype(op, dtypes, repeats) != OPS_OK)
        return ops_last_status();
    const int64_t n = repeats->sizes[0];
    if ((*reps = ops_host_malloc_array(n > 0 ? n : 1, sizeof(int64_t))) == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (a list of %" PRId64 " repeats)", op, n);
    const ops_status st = read_repeats(op, repeats, *reps, output_size, total);
    if (st != OPS_OK) {
        ops_host_free(*reps);
        *reps = NULL;
    }
    return st;
}

void
idx_repeat_fill(ops_dtype dt, const int64_t *reps, int64_t n, void *dst)
{
    char *rp = (char *)dst;
    for (int64_t i = 0, j = 0; i < n; i++)
        for (int64_t k = 0; k < reps[i]; k++, j++) {
            if (dt == OPS_INT32) {
                const int32_t v = (int32_t)i;
                memcpy(rp + j * 4, &v, 4);
            } else {
                memcpy(rp + j * 8, &i, 8);
            }
        }
}

/* ---- from the sort ops ---- */

ops_status
sort_result_shape(const char *op, unsigned declared, line_kind kind, const ops_tensor *self, int64_t *dim_, int64_t k,
                  bool keepdim, int *ond_, int64_t *osz)
{
    if (declared != 0 && !(declared & OPS_DTYPE_BIT(self->dtype))) /* topk, kthvalue: not for bool (PyTorch) */
        return ops_fail_dtype(op, self->dtype, declared);
    if (!ops_wrap_dim(op, "dim", dim_, self->ndim))
        return ops_last_status();
    const int64_t dim = *dim_;
    const int64_t len = self->ndim == 0 ? 1 : self->sizes[dim];

    /* result shape */
    int ond = self->ndim;
    memcpy(osz, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    if (kind == LINE_TOPK) {
        if (k < 0 || k > len)
            return ops_fail(OPS_ERR_INDEX, "%s: selected index k out of range", op);
        if (self->ndim > 0)
            osz[dim] = k;
    } else if (kind == LINE_KTH) {
        if (ops_shape_numel(self->ndim, self->sizes) == 0 || len == 0)
            return ops_fail(OPS_ERR_INDEX, "%s: Expected reduction dim %d to have non-zero size.", op,
                            (int)dim);
        if (k < 1 || k > len)
            return ops_fail(OPS_ERR_INDEX, "%s: selected number k out of range for dimension %d", op,
                            (int)dim);
        if (self->ndim > 0) {
            if (keepdim) {
                osz[dim] = 1;
            } else {
                memmove(osz + dim, osz + dim + 1, (size_t)(self->ndim - dim - 1) * sizeof(int64_t));
                ond--;
            }
        }
    }
    *ond_ = ond;
    return OPS_OK;
}

/* An out= tensor must have dtype want and, when it has the result's shape already,
 * elements that do not share memory. */
ops_status
sort_check_out(const char *op, const char *name, const ops_tensor *out, ops_dtype want, int nd,
               const int64_t *sizes)
{
    if (out == NULL)
        return OPS_OK;
    if (out->dtype != want)
        return ops_fail(OPS_ERR_DTYPE, "%s: Expected out tensor '%s' to have dtype %s, but got %s instead", op, name,
                        ops_dtype_name(want), ops_dtype_name(out->dtype));
    const bool same = out->ndim == nd && memcmp(out->sizes, sizes, (size_t)nd * sizeof(int64_t)) == 0;
    if (same && ops_tensor_has_internal_overlap(out))
        return ops_fail(OPS_ERR_VALUE,
                        "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                        "single memory location. Please clone() the tensor before performing the operation.",
                        op);
    return OPS_OK;
}

/* Copies results r[i] into outs o[i] (resized when their shape differs): every
 * resize first, undone if a later one fails, then the copies. */
ops_status
sort_write_outs(const char *op, int n, ops_tensor *const *r, ops_tensor *const *o)
{
    struct {
        int ndim;
        int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    } saved[3];
    ops_status st = OPS_OK;
    int done = 0;
    for (; done < n; done++) {
        ops_tensor *t = o[done];
        saved[done].ndim = t->ndim;
        memcpy(saved[done].sizes, t->sizes, sizeof t->sizes);
        memcpy(saved[done].strides, t->strides, sizeof t->strides);
        const bool same = t->ndim == r[done]->ndim &&
                          memcmp(t->sizes, r[done]->sizes, (size_t)t->ndim * sizeof(int64_t)) == 0;
        if (!same && (st = ops_tensor_resize_(op, t, r[done]->ndim, r[done]->sizes)) != OPS_OK)
            break;
    }
    if (st != OPS_OK) {
        for (int i = 0; i < done; i++) {
            o[i]->ndim = saved[i].ndim;
            memcpy(o[i]->sizes, saved[i].sizes, sizeof o[i]->sizes);
            memcpy(o[i]->strides, saved[i].strides, sizeof o[i]->strides);
        }
        return st;
    }
    for (int i = 0; i < n; i++) {
        if ((st = ops_copy_values(op, o[i], r[i])) != OPS_OK)
            return st;
        ops_tensor_bump_version(o[i]);
    }
    return OPS_OK;
}


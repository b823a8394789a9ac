/* Indexing ops (CPU): index_select, gather, masked_fill.
 *
 * Every index is read and checked before the result is allocated or anything is
 * written, so an out-of-range index leaves every argument untouched.  Elements are
 * moved as bytes (any dtype) through their strides; index_select copies whole
 * slices with ops_copy_values() over view headers on the stack.  out= forms compute
 * the result first, then copy it into out (resized when its shape differs). */
#include <inttypes.h>
#include <string.h>

#include "kernels/index_check.h"
#include "ops_dispatch.h"
#include "ops_kernels_index.h"

/* Element offset (in elements, from the storage start) of t's linear-th element
 * in row-major order. */
static int64_t
element_offset(const ops_tensor *t, int64_t linear)
{
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (linear % t->sizes[d]) * t->strides[d];
        linear /= t->sizes[d];
    }
    return off;
}

/* The linear-th element of an int32 or int64 tensor. */
static int64_t
read_index(const ops_tensor *t, int64_t linear)
{
    const char *p = (const char *)t->storage->data + element_offset(t, linear) * (int64_t)ops_dtype_itemsize(t->dtype);
    if (t->dtype == OPS_INT32) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* ---- index_select ------------------------------------------------------------------- */

static ops_tensor *
index_select_impl(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    if (idx_check_select(op, self, &dim, index) != OPS_OK)
        return NULL;
    const int64_t n = ops_tensor_numel(index);
    const int64_t size = self->ndim > 0 ? self->sizes[dim] : 1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = read_index(index, i);
        if (k < 0 || k >= size) {
            idx_index_error(op, IDX_ERR_SELECT, k, dim, size);
            return NULL;
        }
    }
    if (self->ndim == 0) {
        /* a 0-dim self: a 0-dim result holding its one element (PyTorch) */
        if (n != 1)
            return ops_fail_null(OPS_ERR_INDEX, "%s: Index to scalar can have only 1 value, got %" PRId64 " value(s)",
                                 op, n);
        const int64_t one = 1;
        ops_tensor *r = ops_tensor_new(op, 0, &one, NULL, self->dtype, self->storage->device);
        if (r == NULL)
            return NULL;
        ops_tensor src = ops_borrowed_view(self, 0, &one, &one, self->offset);
        if (ops_copy_values(op, r, &src) != OPS_OK) {
            ops_tensor_release(r);
            return NULL;
        }
        return r;
    }
    int64_t sizes[OPS_MAX_DIMS], sst[OPS_MAX_DIMS], rst[OPS_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    sizes[dim] = n;
    ops_tensor *r = ops_tensor_new(op, self->ndim, sizes, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        return NULL;
    /* slice i of the result is slice index[i] of self (dim removed from both) */
    int m = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d == dim)
            continue;
        sizes[m] = self->sizes[d];
        sst[m] = self->strides[d];
        rst[m++] = r->strides[d];
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = read_index(index, i);
        ops_tensor src = ops_borrowed_view(self, m, sizes, sst, self->offset + k * self->strides[dim]);
        ops_tensor dst = ops_borrowed_view(r, m, sizes, rst, r->offset + i * r->strides[dim]);
        if (ops_copy_values(op, &dst, &src) != OPS_OK) {
            ops_tensor_release(r);
            return NULL;
        }
    }
    return r;
}

ops_tensor *
index_select_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    return index_select_impl("index_select", self, dim, index);
}

ops_status
index_select_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_tensor *out)
{
    return ops_write_out("index_select", index_select_impl("index_select", self, dim, index), out);
}

/* ---- gather -------------------------------------------------------------------------- */

static ops_tensor *
gather_impl(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    if (idx_check_gather(op, self, &dim, index) != OPS_OK)
        return NULL;
    const int snd = self->ndim > 0 ? self->ndim : 1, ind = index->ndim > 0 ? index->ndim : 1;
    const int64_t one = 1, zero = 0;
    const int64_t *ssz = self->ndim ? self->sizes : &one, *sst = self->ndim ? self->strides : &zero;
    const int64_t *isz = index->ndim ? index->sizes : &one;
    const int64_t n = ops_tensor_numel(index);
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = read_index(index, i);
        if (k < 0 || k >= ssz[dim]) {
            idx_index_error(op, IDX_ERR_BOUNDS, k, dim, ssz[dim]);
            return NULL;
        }
    }
    ops_tensor *r = ops_tensor_new(op, index->ndim, index->sizes, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        return NULL;
    /* r[i...] = self[i... with i[dim] = index[i...]]: a row-major counter over index */
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *sbase = (const char *)self->storage->data;
    char *rbase = (char *)ops_tensor_data_ptr(r);
    int64_t ctr[OPS_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t off = self->offset;
        for (int d = 0; d < snd; d++)
            off += (d == dim ? read_index(index, i) : ctr[d]) * sst[d];
        memcpy(rbase + (size_t)i * is, sbase + (size_t)off * is, is);
        for (int d = ind - 1; d >= 0; d--) {
            if (++ctr[d] < isz[d])
                break;
            ctr[d] = 0;
        }
    }
    return r;
}

ops_tensor *
gather_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, bool sparse_grad)
{
    (void)sparse_grad; /* a gradient-layout hint; no effect on values */
    return gather_impl("gather", self, dim, index);
}

ops_status
gather_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, bool sparse_grad, ops_tensor *out)
{
    (void)sparse_grad;
    return ops_write_out("gather", gather_impl("gather", self, dim, index), out);
}

/* ---- masked_fill ------------------------------------------------------------------------ */

static ops_status
value_scalar(const char *op, const ops_tensor *value, ops_scalar *s)
{
    if (idx_check_value_tensor(op, "masked_fill_", value) != OPS_OK)
        return ops_last_status();
    return ops_tensor_item(value, s);
}

/* self[mask] = value, mask broadcast to self's shape; self already checked. */
static ops_status
fill_masked(const char *op, ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    unsigned char v[16];
    const size_t is = ops_dtype_itemsize(self->dtype);
    ops_scalar_store(value, self->dtype, v);
    ops_iter it;
    ops_status st = ops_iter_build_copy(&it, op, self, mask);
    if (st == OPS_OK) {
        OPS_ITER_LOOP(&it, data, strides, n, {
            for (int64_t i = 0; i < n; i++)
                if (*(const uint8_t *)(data[1] + i * strides[1]) != 0)
                    memcpy(data[0] + i * strides[0], v, is);
        });
    }
    ops_iter_release(&it);
    return st;
}

static ops_status
masked_fill_inplace(const char *op, ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    ops_status st = idx_check_fill_mask(op, mask);
    if (st != OPS_OK)
        return st;
    if ((st = idx_check_inplace_self(op, self)) != OPS_OK)
        return st;
    if ((st = fill_masked(op, self, mask, value)) == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

static ops_tensor *
masked_fill_functional(const char *op, const ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    if (idx_check_fill_mask(op, mask) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    ops_tensor *r = ops_tensor_new(op, nd, shape, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        return NULL;
    if (ops_copy_values(op, r, self) != OPS_OK || fill_masked(op, r, mask, value) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
masked_fill_scalar_cpu(const ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    return masked_fill_functional("masked_fill", self, mask, value);
}

ops_status
masked_fill_scalar_cpu_(ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    return masked_fill_inplace("masked_fill_", self, mask, value);
}

ops_tensor *
masked_fill_tensor_cpu(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *value)
{
    ops_scalar s;
    if (idx_check_fill_mask("masked_fill", mask) != OPS_OK || value_scalar("masked_fill", value, &s) != OPS_OK)
        return NULL;
    return masked_fill_functional("masked_fill", self, mask, s);
}

ops_status
masked_fill_tensor_cpu_(ops_tensor *self, const ops_tensor *mask, const ops_tensor *value)
{
    ops_scalar s;
    ops_status st = idx_check_fill_mask("masked_fill_", mask);
    if (st == OPS_OK)
        st = value_scalar("masked_fill_", value, &s);
    if (st == OPS_OK)
        st = masked_fill_inplace("masked_fill_", self, mask, s);
    return st;
}

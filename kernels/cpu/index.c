/* Indexing ops (CPU): the loops of index_select, gather and masked_fill (the stubs of
 * kernels/index_loops.h; the drivers, with the checks and allocation, are
 * kernels/index.c), and the CPU's check of index values (the stub idx_check_values).
 *
 * Elements are moved as bytes (any dtype) through their strides; index_select copies
 * whole slices with ops_copy_values() over view headers on the stack. */
#include <inttypes.h>
#include <string.h>

#include "kernels/index_loops.h"
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

/* idx_check_values on the CPU: index walked in row-major order, the first value
 * outside [lo, hi) reported. */
OPS_REGISTER_STUB(idx_check_values, CPU, idx_check_values_cpu);
ops_status
idx_check_values_cpu(const char *op, const ops_tensor *index, int64_t lo, int64_t hi, idx_err_kind kind,
                     int64_t dim, int64_t size)
{
    const int64_t n = ops_tensor_numel(index);
    if (n == 0)
        return OPS_OK;
    const bool i32 = index->dtype == OPS_INT32;
    const char *base = (const char *)index->storage->data;
    int64_t ctr[OPS_MAX_DIMS] = {0}, off = index->offset;
    for (int64_t i = 0; i < n; i++) {
        int64_t k;
        if (i32) {
            int32_t v;
            memcpy(&v, base + off * 4, 4);
            k = v;
        } else {
            memcpy(&k, base + off * 8, 8);
        }
        if (k < lo || k >= hi)
            return idx_index_error(op, kind, k, dim, size);
        for (int d = index->ndim - 1; d >= 0; d--) {
            if (++ctr[d] < index->sizes[d]) {
                off += index->strides[d];
                break;
            }
            off -= (index->sizes[d] - 1) * index->strides[d];
            ctr[d] = 0;
        }
    }
    return OPS_OK;
}

/* ---- index_select ------------------------------------------------------------------- */

OPS_REGISTER_STUB(index_select_loop, CPU, index_select_loop_cpu);
ops_status
index_select_loop_cpu(const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    if (self->ndim == 0) {
        /* the one element (index checked to hold one 0) */
        const int64_t one = 1;
        ops_tensor src = ops_borrowed_view(self, 0, &one, &one, self->offset);
        return ops_copy_values(op, r, &src);
    }
    const int64_t n = ops_tensor_numel(index);
    int64_t sizes[OPS_MAX_DIMS], sst[OPS_MAX_DIMS], rst[OPS_MAX_DIMS];
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
        const ops_status st = ops_copy_values(op, &dst, &src);
        if (st != OPS_OK)
            return st;
    }
    return OPS_OK;
}

/* ---- gather -------------------------------------------------------------------------- */

OPS_REGISTER_STUB(index_gather_loop, CPU, index_gather_loop_cpu);
ops_status
index_gather_loop_cpu(const char *op, ops_tensor *r, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    (void)op;
    const int snd = self->ndim > 0 ? self->ndim : 1, ind = index->ndim > 0 ? index->ndim : 1;
    const int64_t one = 1, zero = 0;
    const int64_t *sst = self->ndim ? self->strides : &zero;
    const int64_t *isz = index->ndim ? index->sizes : &one;
    const int64_t n = ops_tensor_numel(index);
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
    return OPS_OK;
}

/* ---- masked_fill ------------------------------------------------------------------------ */

/* dst[mask] = value through the copy iterator (mask broadcast to dst). */
OPS_REGISTER_STUB(index_masked_fill_loop, CPU, index_masked_fill_loop_cpu);
ops_status
index_masked_fill_loop_cpu(const char *op, ops_tensor *dst, const ops_tensor *mask, ops_scalar value)
{
    unsigned char v[16];
    const size_t is = ops_dtype_itemsize(dst->dtype);
    ops_scalar_store(value, dst->dtype, v);
    ops_iter it;
    ops_status st = ops_iter_build_copy(&it, op, dst, mask);
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

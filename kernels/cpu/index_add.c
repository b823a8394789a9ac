/* Slice-indexed writes (CPU): index_add, index_copy, index_fill (.int_Scalar,
 * .int_Tensor), each with its out= and in-place forms.
 *
 * Slice index[i] of self along dim receives slice i of source (index_add: adds
 * alpha * source; index_copy: copies) or the value (index_fill).  Everything is
 * checked first (every index included); the result is computed into a fresh
 * contiguous buffer of the opmath dtype (float for float16/bfloat16, so duplicates
 * of index_add round once) and then converted into the result, out= or self. */
#include <inttypes.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_check.h"
#include "index_util.h"
#include "ops_kernels_index_add.h"

/* The k-th index (int32 or int64). */
static int64_t
read_index(const ops_tensor *index, int64_t k)
{
    const int64_t off = index->offset + (index->ndim ? k * index->strides[0] : 0);
    if (index->dtype == OPS_INT32)
        return ((const int32_t *)index->storage->data)[off];
    return ((const int64_t *)index->storage->data)[off];
}

/* Every index in range: [0, size) for index_add and index_copy, [-size, size) for
 * index_fill. */
static ops_status
ix_check_values(const char *op, ix_mode mode, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    const int64_t n = ops_tensor_numel(index);
    const int64_t size = self->ndim ? self->sizes[dim] : 1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = read_index(index, i);
        if (k < (mode == IX_FILL ? -size : 0) || k >= size)
            return idx_index_error(op, mode == IX_ADD ? IDX_ERR_ADD : IDX_ERR_BOUNDS, k, dim, size);
    }
    return OPS_OK;
}

static ops_status
ix_typed(const char *op, ix_mode mode, ops_tensor *acc, int64_t dim, const ops_tensor *index,
         const ops_tensor *source, ops_scalar alpha)
{
    /* geometry of one slice: the dims other than dim (0-dim tensors: no dims) */
    const int nd = acc->ndim;
    int64_t ssz[OPS_MAX_DIMS], ast[OPS_MAX_DIMS], sst[OPS_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (d == dim)
            continue;
        ssz[m] = acc->sizes[d];
        ast[m] = acc->strides[d];
        sst[m++] = source->ndim ? source->strides[d] : 0;
    }
    const int64_t adim = nd ? acc->strides[dim] : 0;
    const int64_t sdim = source->ndim ? source->strides[dim] : 0;
    const int64_t n = ops_tensor_numel(index), per = ops_shape_numel(m, ssz);
    const int64_t size = nd ? acc->sizes[dim] : 1;
    const int64_t *stp[2] = {ast, sst};
    OPS_DISPATCH_ALL(source->dtype, op, {
        opmath_t *a = (opmath_t *)ops_tensor_data_ptr(acc);
        const scalar_t *sp = (const scalar_t *)source->storage->data;
        scalar_t tmp;
        ops_scalar_store(alpha, source->dtype, &tmp);
        const opmath_t sv = OPS_LOAD((const scalar_t *)&tmp);
        for (int64_t i = 0; i < n; i++) {
            int64_t k = read_index(index, i);
            if (k < 0)
                k += size;
            int64_t ctr[OPS_MAX_DIMS] = {0}, off[2] = {k * adim, source->offset + i * sdim};
            for (int64_t j = 0; j < per; j++) {
                opmath_t *p = a + off[0];
                if (mode == IX_ADD)
                    *p = SC_ADD(*p, SC_MUL(sv, OPS_LOAD(sp + off[1])));
                else
                    *p = OPS_LOAD(sp + off[1]);
                idx_walk_next(m, ssz, ctr, 2, stp, off);
            }
        }
    });
    return OPS_OK;
}

/* index_fill writes one value: no source; done on the buffer with a byte fill. */
static void
ix_fill(ops_tensor *acc, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    const int nd = acc->ndim;
    int64_t ssz[OPS_MAX_DIMS], ast[OPS_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (d == dim)
            continue;
        ssz[m] = acc->sizes[d];
        ast[m++] = acc->strides[d];
    }
    unsigned char v[16];
    const size_t is = ops_dtype_itemsize(acc->dtype);
    ops_scalar_store(value, acc->dtype, v);
    const int64_t n = ops_tensor_numel(index), per = ops_shape_numel(m, ssz);
    const int64_t size = nd ? acc->sizes[dim] : 1, adim = nd ? acc->strides[dim] : 0;
    const int64_t *stp[1] = {ast};
    char *a = (char *)ops_tensor_data_ptr(acc);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = read_index(index, i);
        if (k < 0)
            k += size;
        int64_t ctr[OPS_MAX_DIMS] = {0}, off[1] = {k * adim};
        for (int64_t j = 0; j < per; j++) {
            memcpy(a + (size_t)off[0] * is, v, is);
            idx_walk_next(m, ssz, ctr, 1, stp, off);
        }
    }
}

static ops_tensor *
ix_compute(const char *op, ix_mode mode, const ops_tensor *self, int64_t dim, const ops_tensor *index,
           const ops_tensor *source, ops_scalar value, ops_scalar alpha)
{
    if (idx_check_func(op, mode, self, &dim, index, source) != OPS_OK ||
        ix_check_values(op, mode, self, dim, index) != OPS_OK ||
        (mode == IX_ADD && idx_check_alpha(op, self, alpha) != OPS_OK))
        return NULL;
    /* index_fill stores the value in self's dtype directly; the others go through opmath */
    const ops_dtype acc_dt = mode == IX_FILL ? self->dtype : cpu_opmath_dtype(self->dtype);
    ops_tensor *acc = ops_tensor_new(op, self->ndim, self->sizes, NULL, acc_dt, self->storage->device);
    ops_tensor *r = NULL;
    if (acc == NULL || ops_copy_values(op, acc, self) != OPS_OK)
        goto fail;
    if (acc_dt != self->dtype &&
        (r = ops_tensor_new(op, self->ndim, self->sizes, NULL, self->dtype, self->storage->device)) == NULL)
        goto fail;
    if (mode == IX_FILL)
        ix_fill(acc, dim, index, value);
    else if (ix_typed(op, mode, acc, dim, index, source, alpha) != OPS_OK)
        goto fail;
    if (r == NULL)
        return acc;
    if (ops_copy_values(op, r, acc) != OPS_OK)
        goto fail;
    ops_tensor_release(acc);
    return r;
fail:
    ops_tensor_release(acc);
    ops_tensor_release(r);
    return NULL;
}

static ops_status
ix_inplace(const char *op, ix_mode mode, ops_tensor *self, int64_t dim, const ops_tensor *index,
           const ops_tensor *source, ops_scalar value, ops_scalar alpha)
{
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    ops_tensor *r = ix_compute(op, mode, self, dim, index, source, value, alpha);
    if (r == NULL)
        return ops_last_status();
    ops_status st = ops_copy_values(op, self, r);
    ops_tensor_release(r);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

/* index_fill.int_Tensor's value: a 0-dim tensor. */
static ops_status
fill_value(const char *op, const ops_tensor *value, ops_scalar *s)
{
    if (idx_check_value_tensor(op, "index_fill_", value) != OPS_OK)
        return ops_last_status();
    return ops_tensor_item(value, s);
}

static const ops_scalar zero_ = {.kind = OPS_SCALAR_INT, .v.i = 0};

/* ---- index_add ------------------------------------------------------------------------ */

ops_tensor *
index_add_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
              ops_scalar alpha)
{
    return ix_compute("index_add", IX_ADD, self, dim, index, source, zero_, alpha);
}

ops_status
index_add_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
                  ops_scalar alpha, ops_tensor *out)
{
    return ops_write_out("index_add", ix_compute("index_add", IX_ADD, self, dim, index, source, zero_, alpha), out);
}

ops_status
index_add_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source, ops_scalar alpha)
{
    return ix_inplace("index_add_", IX_ADD, self, dim, index, source, zero_, alpha);
}

/* ---- index_copy ----------------------------------------------------------------------- */

ops_tensor *
index_copy_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source)
{
    return ix_compute("index_copy", IX_COPY, self, dim, index, source, zero_, zero_);
}

ops_status
index_copy_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source,
                   ops_tensor *out)
{
    return ops_write_out("index_copy", ix_compute("index_copy", IX_COPY, self, dim, index, source, zero_, zero_),
                         out);
}

ops_status
index_copy_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *source)
{
    return ix_inplace("index_copy_", IX_COPY, self, dim, index, source, zero_, zero_);
}

/* ---- index_fill ----------------------------------------------------------------------- */

ops_tensor *
index_fill_int_scalar_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return ix_compute("index_fill", IX_FILL, self, dim, index, NULL, value, zero_);
}

ops_status
index_fill_int_scalar_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value,
                              ops_tensor *out)
{
    return ops_write_out("index_fill", ix_compute("index_fill", IX_FILL, self, dim, index, NULL, value, zero_), out);
}

ops_status
index_fill_int_scalar_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, ops_scalar value)
{
    return ix_inplace("index_fill_", IX_FILL, self, dim, index, NULL, value, zero_);
}

ops_tensor *
index_fill_int_tensor_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value)
{
    ops_scalar s;
    if (fill_value("index_fill", value, &s) != OPS_OK)
        return NULL;
    return ix_compute("index_fill", IX_FILL, self, dim, index, NULL, s, zero_);
}

ops_status
index_fill_int_tensor_out_cpu(const ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value,
                              ops_tensor *out)
{
    ops_scalar s;
    if (fill_value("index_fill", value, &s) != OPS_OK)
        return ops_last_status();
    return ops_write_out("index_fill", ix_compute("index_fill", IX_FILL, self, dim, index, NULL, s, zero_), out);
}

ops_status
index_fill_int_tensor_cpu_(ops_tensor *self, int64_t dim, const ops_tensor *index, const ops_tensor *value)
{
    ops_scalar s;
    if (fill_value("index_fill_", value, &s) != OPS_OK)
        return ops_last_status();
    return ix_inplace("index_fill_", IX_FILL, self, dim, index, NULL, s, zero_);
}

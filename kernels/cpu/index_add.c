/* Slice-indexed writes (CPU): the loop of index_add, index_copy and index_fill (the
 * stub index_slices_loop; the driver, with the checks, the buffer and the out= and
 * in-place forms, is kernels/index_add.c).
 *
 * Slice index[i] of self along dim receives slice i of source (index_add: adds
 * alpha * source; index_copy: copies) or the value (index_fill), into the driver's
 * contiguous buffer (opmath dtype but for index_fill), the indices in order. */
#include <inttypes.h>
#include <string.h>

#include "cpu_util.h"
#include "kernels/index_add.h"
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

OPS_REGISTER_STUB(index_slices_loop, CPU, index_slices_loop_cpu);
ops_status
index_slices_loop_cpu(const char *op, ix_mode mode, ops_tensor *acc, const ops_tensor *self, int64_t dim,
                      const ops_tensor *index, const ops_tensor *source, ops_scalar value, ops_scalar alpha)
{
    (void)self;
    if (mode == IX_FILL) {
        ix_fill(acc, dim, index, value);
        return OPS_OK;
    }
    return ix_typed(op, mode, acc, dim, index, source, alpha);
}

/* Mask-driven indexing ops (CPU): the loops of masked_select, masked_scatter and
 * nonzero (the stubs of kernels/index_loops.h; the drivers are
 * kernels/index_masked.c).
 *
 * Their result sizes depend on the data: the mask (or self) is walked once to count,
 * the result is allocated, then a second walk fills it.  Elements move as bytes
 * through their strides (any dtype). */
#include <inttypes.h>
#include <string.h>

#include "kernels/index_loops.h"
#include "index_util.h"
#include "ops_dispatch.h"
#include "ops_kernels_index_masked.h"

/* Number of true elements of mask read broadcast to (nd, shape) with strides mst. */
static int64_t
count_true(const ops_tensor *mask, int nd, const int64_t *shape, const int64_t *mst)
{
    const int64_t total = ops_shape_numel(nd, shape);
    const uint8_t *m = (const uint8_t *)mask->storage->data;
    int64_t ctr[OPS_MAX_DIMS] = {0}, off[1] = {mask->offset}, n = 0;
    const int64_t *st[1] = {mst};
    for (int64_t i = 0; i < total; i++) {
        n += m[off[0]] != 0;
        idx_walk_next(nd, shape, ctr, 1, st, off);
    }
    return n;
}

/* ---- masked_select (the driver: kernels/index_masked.c) ------------------------------ */

OPS_REGISTER_STUB(index_masked_select_loop, CPU, index_masked_select_loop_cpu);
ops_status
index_masked_select_loop_cpu(const char *op, const ops_tensor *self, const ops_tensor *mask, int nd,
                             const int64_t *shape, ops_tensor **result)
{
    int64_t sst[OPS_MAX_DIMS], mst[OPS_MAX_DIMS];
    idx_bcast_strides(self, nd, shape, sst);
    idx_bcast_strides(mask, nd, shape, mst);
    int64_t n = count_true(mask, nd, shape, mst);
    ops_tensor *r = ops_tensor_new(op, 1, &n, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        return ops_last_status();
    *result = r;
    if (n == 0)
        return OPS_OK;
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *sb = (const char *)self->storage->data;
    const uint8_t *m = (const uint8_t *)mask->storage->data;
    char *rp = (char *)ops_tensor_data_ptr(r);
    const int64_t total = ops_shape_numel(nd, shape);
    int64_t ctr[OPS_MAX_DIMS] = {0}, off[2] = {self->offset, mask->offset};
    const int64_t *st[2] = {sst, mst};
    for (int64_t i = 0; i < total; i++) {
        if (m[off[1]] != 0) {
            idx_copy_elem(rp, sb + (size_t)off[0] * is, is);
            rp += is;
        }
        idx_walk_next(nd, shape, ctr, 2, st, off);
    }
    return OPS_OK;
}

/* ---- masked_scatter (the driver: kernels/index_masked.c) ------------------------------ */

OPS_REGISTER_STUB(index_mask_count, CPU, index_mask_count_cpu);
ops_status
index_mask_count_cpu(const char *op, const ops_tensor *mask, int nd, const int64_t *shape, int64_t *count)
{
    (void)op;
    int64_t mst[OPS_MAX_DIMS];
    idx_bcast_strides(mask, nd, shape, mst);
    *count = count_true(mask, nd, shape, mst);
    return OPS_OK;
}

/* dst[mask] = the first elements of source, in row-major order; dst has the broadcast
 * shape already and mask broadcasts to it.  Checks source's size first. */
OPS_REGISTER_STUB(index_masked_scatter_loop, CPU, index_masked_scatter_loop_cpu);
ops_status
index_masked_scatter_loop_cpu(const char *op, ops_tensor *dst, const ops_tensor *mask, const ops_tensor *source)
{
    const int nd = dst->ndim;
    int64_t mst[OPS_MAX_DIMS];
    idx_bcast_strides(mask, nd, dst->sizes, mst);
    const int64_t n = count_true(mask, nd, dst->sizes, mst);
    if (ops_tensor_numel(source) < n)
        return idx_masked_scatter_count_error(op, ops_tensor_numel(source), n);
    const size_t is = ops_dtype_itemsize(dst->dtype);
    char *db = (char *)dst->storage->data;
    const char *srcb = (const char *)source->storage->data;
    const uint8_t *m = (const uint8_t *)mask->storage->data;
    const int64_t total = ops_tensor_numel(dst);
    int64_t ctr[OPS_MAX_DIMS] = {0}, off[2] = {dst->offset, mask->offset};
    const int64_t *st[2] = {dst->strides, mst};
    int64_t sctr[OPS_MAX_DIMS] = {0}, soff[1] = {source->offset};
    const int64_t *sstp[1] = {source->strides};
    for (int64_t i = 0; i < total; i++) {
        if (m[off[1]] != 0) {
            memcpy(db + (size_t)off[0] * is, srcb + (size_t)soff[0] * is, is);
            idx_walk_next(source->ndim, source->sizes, sctr, 1, sstp, soff);
        }
        idx_walk_next(nd, dst->sizes, ctr, 2, st, off);
    }
    return OPS_OK;
}

/* ---- nonzero ----------------------------------------------------------------------------- */

ops_tensor *
idx_nonzero(const char *op, const ops_tensor *self)
{
    const int nd = self->ndim;
    const int64_t total = ops_tensor_numel(self);
    const size_t is = ops_dtype_itemsize(self->dtype);
    const char *sb = (const char *)self->storage->data;
    const int64_t *st[1] = {self->strides};
    int64_t ctr[OPS_MAX_DIMS] = {0}, off[1] = {self->offset}, n = 0;
    for (int64_t i = 0; i < total; i++) {
        n += idx_is_nonzero(sb + (size_t)off[0] * is, self->dtype);
        idx_walk_next(nd, self->sizes, ctr, 1, st, off);
    }
    const int64_t rs[2] = {n, nd};
    ops_tensor *r = ops_tensor_new(op, 2, rs, NULL, OPS_INT64, self->storage->device);
    if (r == NULL || n == 0 || nd == 0)
        return r;
    int64_t *rp = (int64_t *)ops_tensor_data_ptr(r);
    memset(ctr, 0, sizeof ctr);
    off[0] = self->offset;
    for (int64_t i = 0; i < total; i++) {
        if (idx_is_nonzero(sb + (size_t)off[0] * is, self->dtype)) {
            memcpy(rp, ctr, (size_t)nd * sizeof(int64_t));
            rp += nd;
        }
        idx_walk_next(nd, self->sizes, ctr, 1, st, off);
    }
    return r;
}

/* The loop of nonzero (the driver: kernels/index_masked.c). */
OPS_REGISTER_STUB(index_nonzero_loop, CPU, index_nonzero_loop_cpu);
ops_status
index_nonzero_loop_cpu(const char *op, const ops_tensor *self, ops_tensor **result)
{
    *result = idx_nonzero(op, self);
    return *result != NULL ? OPS_OK : ops_last_status();
}

/* Mask-driven indexing ops (CPU): masked_select, masked_scatter, nonzero.
 *
 * Their result sizes depend on the data: the mask (or self) is walked once to count,
 * the result is allocated, then a second walk fills it.  Elements move as bytes
 * through their strides (any dtype); everything is checked before anything is
 * written, so a failure leaves every argument untouched. */
#include <inttypes.h>
#include <string.h>

#include "kernels/index_check.h"
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

/* ---- masked_select ------------------------------------------------------------------ */

static ops_tensor *
masked_select_impl(const char *op, const ops_tensor *self, const ops_tensor *mask)
{
    if (idx_check_select_mask(op, mask) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS], sst[OPS_MAX_DIMS], mst[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    idx_bcast_strides(self, nd, shape, sst);
    idx_bcast_strides(mask, nd, shape, mst);
    int64_t n = count_true(mask, nd, shape, mst);
    ops_tensor *r = ops_tensor_new(op, 1, &n, NULL, self->dtype, self->storage->device);
    if (r == NULL || n == 0)
        return r;
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
    return r;
}

ops_tensor *
masked_select_cpu(const ops_tensor *self, const ops_tensor *mask)
{
    return masked_select_impl("masked_select", self, mask);
}

ops_status
masked_select_out_cpu(const ops_tensor *self, const ops_tensor *mask, ops_tensor *out)
{
    return ops_write_out("masked_select", masked_select_impl("masked_select", self, mask), out);
}

/* ---- masked_scatter ------------------------------------------------------------------ */

/* dst[mask] = the first elements of source, in row-major order; dst has the broadcast
 * shape already and mask broadcasts to it.  Checks source's dtype and size first. */
static ops_status
masked_scatter_into(const char *op, ops_tensor *dst, const ops_tensor *mask, const ops_tensor *source)
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

static ops_tensor *
masked_scatter_impl(const char *op, const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    if (idx_check_masked_scatter(op, self, mask, source) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS], mst[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    idx_bcast_strides(mask, nd, shape, mst);
    const int64_t n = count_true(mask, nd, shape, mst);
    if (ops_tensor_numel(source) < n) {
        idx_masked_scatter_count_error(op, ops_tensor_numel(source), n);
        return NULL;
    }
    ops_tensor *r = ops_tensor_new(op, nd, shape, NULL, self->dtype, self->storage->device);
    if (r == NULL)
        return NULL;
    if (ops_copy_values(op, r, self) != OPS_OK || masked_scatter_into(op, r, mask, source) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
masked_scatter_cpu(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    return masked_scatter_impl("masked_scatter", self, mask, source);
}

ops_status
masked_scatter_out_cpu(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source, ops_tensor *out)
{
    return ops_write_out("masked_scatter", masked_scatter_impl("masked_scatter", self, mask, source), out);
}

ops_status
masked_scatter_cpu_(ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    const char *op = "masked_scatter_";
    ops_status st = idx_check_masked_scatter(op, self, mask, source);
    if (st == OPS_OK)
        st = idx_check_masked_scatter_inplace(op, self, mask);
    if (st != OPS_OK)
        return st;
    if ((st = masked_scatter_into(op, self, mask, source)) == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
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

ops_tensor *
nonzero_cpu(const ops_tensor *self)
{
    return idx_nonzero("nonzero", self);
}

ops_status
nonzero_out_cpu(const ops_tensor *self, ops_tensor *out)
{
    if (out->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "nonzero: Expected out tensor to have scalar type int64 but got scalar type %s",
                        ops_dtype_name(out->dtype));
    return ops_write_out("nonzero", idx_nonzero("nonzero", self), out);
}

ops_tensor *
argwhere_cpu(const ops_tensor *self)
{
    return idx_nonzero("argwhere", self);
}

/* nonzero_numpy (NumPy's nonzero): one int64 [n] tensor per dim of self (a 0-dim self
 * counts as 1-D), views of the columns of nonzero(self), as PyTorch's unbind(1). */
static ops_status
nonzero_tuple(const char *op, const ops_tensor *self, ops_tensor_vec *result)
{
    ops_tensor_vec v = {NULL, 0};
    ops_tensor *nz = idx_nonzero(op, self);
    ops_status st = nz ? OPS_OK : ops_last_status();
    const int nd = self->ndim ? self->ndim : 1;
    if (st == OPS_OK)
        st = ops_tensor_vec_init(op, &v, nd);
    for (int j = 0; st == OPS_OK && j < nd; j++) {
        if (self->ndim == 0) {
            /* the single column of the [n, 1] result of nonzero(self.unsqueeze(0)) */
            const int64_t n = nz->sizes[0], one = 1;
            v.data[j] = ops_tensor_new(op, 1, &n, &one, OPS_INT64, nz->storage->device);
            if (v.data[j] != NULL && n > 0)
                *(int64_t *)ops_tensor_data_ptr(v.data[j]) = 0;
        } else {
            v.data[j] = ops_tensor_new_view(nz, 1, nz->sizes, &nz->strides[0], nz->offset + j);
        }
        if (v.data[j] == NULL)
            st = ops_last_status();
    }
    ops_tensor_release(nz);
    if (st != OPS_OK) {
        ops_tensor_vec_release(&v);
        return st;
    }
    *result = v;
    return OPS_OK;
}

ops_status
nonzero_numpy_cpu(const ops_tensor *self, ops_tensor_vec *result)
{
    return nonzero_tuple("nonzero_numpy", self, result);
}

/* The kernel of the one-argument where(Tensor condition) -> Tensor[] (PyTorch's
 * condition.nonzero_numpy()); the three-argument form is where.self (ops_where_self). */
ops_status
where_condition_cpu(const ops_tensor *condition, ops_tensor_vec *result)
{
    return nonzero_tuple("where", condition, result);
}

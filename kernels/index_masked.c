/* Mask-driven indexing ops, for every device: masked_select, masked_scatter (each
 * functional, out= and in-place where the schema has them), nonzero, argwhere,
 * nonzero_numpy and where(condition).  The schema names the mask_* functions below
 * for CPU and CUDA; the loops are the stubs of kernels/index_loops.h
 * (kernels/cpu/index_masked.c, kernels/cuda/index_advanced.cu).
 *
 * Their result sizes depend on the data: the loops count, then allocate and fill.
 * Everything is checked before anything is written, so a failure leaves every
 * argument untouched. */
#include "kernels/creation.h"
#include "kernels/index_loops.h"
#include "ops_dispatch.h"
#include "ops_kernels_index_masked.h"

/* ---- masked_select ------------------------------------------------------------------ */

static ops_tensor *
masked_select_run(const char *op, const ops_tensor *self, const ops_tensor *mask)
{
    const ops_device dev = self->storage->device;
    if (idx_check_select_mask(op, mask) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    ops_tensor *r = NULL;
    if (OPS_STUB_CALL(index_masked_select_loop, dev, op, self, mask, nd, shape, &r) != OPS_OK)
        return NULL;
    return r;
}

ops_tensor *
mask_select(const ops_tensor *self, const ops_tensor *mask)
{
    return masked_select_run("masked_select", self, mask);
}

ops_status
mask_select_out(const ops_tensor *self, const ops_tensor *mask, ops_tensor *out)
{
    return ops_write_out("masked_select", masked_select_run("masked_select", self, mask), out);
}

/* ---- masked_scatter ------------------------------------------------------------------ */

/* The functional form: source's size against the mask's count before anything is
 * allocated, then self's values broadcast into the result and the scatter. */
static ops_tensor *
masked_scatter_run(const char *op, const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    const ops_device dev = self->storage->device;
    if (idx_check_masked_scatter(op, self, mask, source) != OPS_OK)
        return NULL;
    int nd;
    int64_t shape[OPS_MAX_DIMS], n = 0;
    if (ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd, shape) !=
        OPS_OK)
        return NULL;
    if (OPS_STUB_CALL(index_mask_count, dev, op, mask, nd, shape, &n) != OPS_OK)
        return NULL;
    if (ops_tensor_numel(source) < n) {
        idx_masked_scatter_count_error(op, ops_tensor_numel(source), n);
        return NULL;
    }
    ops_tensor *r = ops_tensor_new(op, nd, shape, NULL, self->dtype, dev);
    if (r == NULL)
        return NULL;
    if (ops_copy_values(op, r, self) != OPS_OK ||
        OPS_STUB_CALL(index_masked_scatter_loop, dev, op, r, mask, source) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
mask_scatter(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    return masked_scatter_run("masked_scatter", self, mask, source);
}

ops_status
mask_scatter_out(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *source, ops_tensor *out)
{
    return ops_write_out("masked_scatter", masked_scatter_run("masked_scatter", self, mask, source), out);
}

ops_status
mask_scatter_(ops_tensor *self, const ops_tensor *mask, const ops_tensor *source)
{
    const char *op = "masked_scatter_";
    const ops_device dev = self->storage->device;
    ops_status st = idx_check_masked_scatter(op, self, mask, source);
    if (st == OPS_OK)
        st = idx_check_masked_scatter_inplace(op, self, mask);
    if (st != OPS_OK)
        return st;
    if ((st = OPS_STUB_CALL(index_masked_scatter_loop, dev, op, self, mask, source)) == OPS_OK)
        ops_tensor_bump_version(self);
    return st;
}

/* ---- nonzero ----------------------------------------------------------------------------- */

ops_tensor *
idx_device_nonzero(const char *op, const ops_tensor *self)
{
    const ops_device dev = self->storage->device;
    ops_tensor *r = NULL;
    if (OPS_STUB_CALL(index_nonzero_loop, dev, op, self, &r) != OPS_OK)
        return NULL;
    return r;
}

ops_tensor *
mask_nonzero(const ops_tensor *self)
{
    return idx_device_nonzero("nonzero", self);
}

ops_status
mask_nonzero_out(const ops_tensor *self, ops_tensor *out)
{
    if (out->dtype != OPS_INT64)
        return ops_fail(OPS_ERR_DTYPE, "nonzero: Expected out tensor to have scalar type int64 but got scalar type %s",
                        ops_dtype_name(out->dtype));
    return ops_write_out("nonzero", idx_device_nonzero("nonzero", self), out);
}

ops_tensor *
mask_argwhere(const ops_tensor *self)
{
    return idx_device_nonzero("argwhere", self);
}

/* nonzero_numpy (NumPy's nonzero): one int64 [n] tensor per dim of self (a 0-dim self
 * counts as 1-D), views of the columns of nonzero(self), as PyTorch's unbind(1). */
static ops_status
nonzero_tuple(const char *op, const ops_tensor *self, ops_tensor_vec *result)
{
    ops_tensor_vec v = {NULL, 0};
    ops_tensor *nz = idx_device_nonzero(op, self);
    ops_status st = nz ? OPS_OK : ops_last_status();
    const int nd = self->ndim ? self->ndim : 1;
    if (st == OPS_OK)
        st = ops_tensor_vec_init(op, &v, nd);
    for (int j = 0; st == OPS_OK && j < nd; j++) {
        if (self->ndim == 0) {
            /* the single column of the [n, 1] result of nonzero(self.unsqueeze(0)): zeros */
            const ops_device dev = nz->storage->device;
            const int64_t n = nz->sizes[0], one = 1;
            v.data[j] = ops_tensor_new(op, 1, &n, &one, OPS_INT64, dev);
            if (v.data[j] != NULL && n > 0)
                st = OPS_STUB_CALL(creation_fill_bytes, dev, op, v.data[j], 0);
        } else {
            v.data[j] = ops_tensor_new_view(nz, 1, nz->sizes, &nz->strides[0], nz->offset + j);
        }
        if (st == OPS_OK && v.data[j] == NULL)
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
mask_nonzero_numpy(const ops_tensor *self, ops_tensor_vec *result)
{
    return nonzero_tuple("nonzero_numpy", self, result);
}

/* The kernel of the one-argument where(Tensor condition) -> Tensor[] (PyTorch's
 * condition.nonzero_numpy()); the three-argument form is where.self (ops_where_self). */
ops_status
mask_where_condition(const ops_tensor *condition, ops_tensor_vec *result)
{
    return nonzero_tuple("where", condition, result);
}

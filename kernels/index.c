/* Indexing ops, for every device: index_select, gather, masked_fill (.Scalar,
 * .Tensor, each functional and in-place).  The schema names the functions below for
 * CPU and CUDA; the element loops are the stubs of kernels/index_loops.h
 * (kernels/cpu/index.c, kernels/cuda/index.cu).
 *
 * Every index is read and checked before anything but a fresh result is written (the
 * stub idx_check_values before the loop; index_select's and gather's loops check as
 * they copy into their fresh result, released on failure), so an out-of-range index leaves every
 * argument untouched.  out= forms compute the result first, then copy it into out (resized
 * when its shape differs). */
#include <inttypes.h>
#include <string.h>

#include "kernels/index_loops.h"
#include "ops_dispatch.h"
#include "ops_iter.h"
#include "ops_kernels_index.h"

/* ---- index_select ------------------------------------------------------------------- */

static ops_tensor *
index_select_run(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    const ops_device dev = self->storage->device;
    if (idx_check_select(op, self, &dim, index) != OPS_OK)
        return NULL;
    const int64_t n = ops_tensor_numel(index);
    const int64_t size = self->ndim > 0 ? self->sizes[dim] : 1;
    /* the loop checks the values (as it copies, on the CPU: one pass over index), into a
     * fresh result, released on failure; a 0-dim self's one value is checked here, before
     * the count */
    if (self->ndim == 0 &&
        OPS_STUB_CALL(idx_check_values, dev, op, index, 0, size, IDX_ERR_SELECT, dim, size) != OPS_OK)
        return NULL;
    /* a 0-dim self: a 0-dim result holding its one element (PyTorch) */
    if (self->ndim == 0 && n != 1)
        return ops_fail_null(OPS_ERR_INDEX, "%s: Index to scalar can have only 1 value, got %" PRId64 " value(s)", op,
                             n);
    int64_t sizes[OPS_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    if (self->ndim > 0)
        sizes[dim] = n;
    ops_tensor *r = ops_tensor_new(op, self->ndim, sizes, NULL, self->dtype, dev);
    if (r != NULL && OPS_STUB_CALL(index_select_loop, dev, op, r, self, dim, index) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
index_select(const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    return index_select_run("index_select", self, dim, index);
}

ops_status
index_select_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, ops_tensor *out)
{
    return ops_write_out("index_select", index_select_run("index_select", self, dim, index), out);
}

/* ---- gather -------------------------------------------------------------------------- */

static ops_tensor *
gather_run(const char *op, const ops_tensor *self, int64_t dim, const ops_tensor *index)
{
    const ops_device dev = self->storage->device;
    if (idx_check_gather(op, self, &dim, index) != OPS_OK)
        return NULL;
    /* the loop checks the values (the CPU's as it copies) into this fresh result */
    ops_tensor *r = ops_tensor_new(op, index->ndim, index->sizes, NULL, self->dtype, dev);
    if (r != NULL && OPS_STUB_CALL(index_gather_loop, dev, op, r, self, dim, index) != OPS_OK) {
        ops_tensor_release(r);
        return NULL;
    }
    return r;
}

ops_tensor *
index_gather_dim(const ops_tensor *self, int64_t dim, const ops_tensor *index, bool sparse_grad)
{
    (void)sparse_grad; /* a gradient-layout hint; no effect on values */
    return gather_run("gather", self, dim, index);
}

ops_status
index_gather_dim_out(const ops_tensor *self, int64_t dim, const ops_tensor *index, bool sparse_grad, ops_tensor *out)
{
    (void)sparse_grad;
    return ops_write_out("gather", gather_run("gather", self, dim, index), out);
}

/* ---- masked_fill ------------------------------------------------------------------------ */

/* One masked_fill: value_t (the .Tensor overloads' 0-dim value, read after the mask
 * check; NULL: value), in place into self or into a new result (*res). */
static ops_status
masked_fill_run(const char *op, bool inplace, const ops_tensor *self, const ops_tensor *mask, ops_scalar value,
                const ops_tensor *value_t, ops_tensor **res)
{
    const ops_device dev = self->storage->device;
    ops_status st = idx_check_fill_mask(op, mask);
    if (st != OPS_OK)
        return st;
    if (value_t != NULL) {
        if ((st = idx_check_value_tensor(op, "masked_fill_", value_t)) != OPS_OK ||
            (st = ops_tensor_item(value_t, &value)) != OPS_OK)
            return st;
    }
    if (inplace) {
        ops_tensor *s = (ops_tensor *)self;
        if ((st = idx_check_inplace_self(op, s)) != OPS_OK)
            return st;
        /* the copy iterator decides (and words) whether mask broadcasts to self */
        ops_iter it;
        st = ops_iter_build_copy(&it, op, s, mask);
        ops_iter_release(&it);
        if (st == OPS_OK && (st = OPS_STUB_CALL(index_masked_fill_loop, dev, op, s, mask, value)) == OPS_OK)
            ops_tensor_bump_version(s);
        return st;
    }
    int nd;
    int64_t shape[OPS_MAX_DIMS];
    if ((st = ops_broadcast_shapes(op, "self", self->ndim, self->sizes, "mask", mask->ndim, mask->sizes, &nd,
                                   shape)) != OPS_OK)
        return st;
    ops_tensor *r = ops_tensor_new(op, nd, shape, NULL, self->dtype, dev);
    if (r == NULL)
        return ops_last_status();
    if ((st = ops_copy_values(op, r, self)) != OPS_OK ||
        (st = OPS_STUB_CALL(index_masked_fill_loop, dev, op, r, mask, value)) != OPS_OK) {
        ops_tensor_release(r);
        return st;
    }
    *res = r;
    return OPS_OK;
}

static const ops_scalar no_value = {.kind = OPS_SCALAR_INT, .v.i = 0};

ops_tensor *
index_masked_fill_scalar(const ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    ops_tensor *r = NULL;
    masked_fill_run("masked_fill", false, self, mask, value, NULL, &r);
    return r;
}

ops_status
index_masked_fill_scalar_(ops_tensor *self, const ops_tensor *mask, ops_scalar value)
{
    return masked_fill_run("masked_fill_", true, self, mask, value, NULL, NULL);
}

ops_tensor *
index_masked_fill_tensor(const ops_tensor *self, const ops_tensor *mask, const ops_tensor *value)
{
    ops_tensor *r = NULL;
    masked_fill_run("masked_fill", false, self, mask, no_value, value, &r);
    return r;
}

ops_status
index_masked_fill_tensor_(ops_tensor *self, const ops_tensor *mask, const ops_tensor *value)
{
    return masked_fill_run("masked_fill_", true, self, mask, no_value, value, NULL);
}

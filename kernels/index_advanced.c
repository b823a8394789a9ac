/* Advanced indexing, for every device: index.Tensor (self[indices]) and index_put /
 * index_put_ (self[indices] = values), with their out= forms.  The schema names the
 * adv_* functions below for CPU and CUDA; the loops are the stubs index_plan_check,
 * index_adv_gather_loop and index_adv_put_loop (kernels/index_loops.h):
 * kernels/cpu/index_advanced.c, kernels/cuda/index_advanced.cu.
 *
 * indices has one entry per leading dim of self: NULL (a full slice), an integer
 * tensor (int64 or int32; negative values count from the end) or a bool/uint8 mask
 * (replaced by its nonzero() coordinates on the mask's device, one integer tensor per
 * mask dim, as PyTorch's expandTensors does).  The integer tensors broadcast together
 * to one shape B.  As in NumPy and PyTorch, when the indexed dims are adjacent B takes
 * their place in the result; when a NULL separates them B comes first, followed by
 * every non-indexed dim.  Slices (a:b:c) are applied by the caller as views before
 * calling these.  Every index is checked before anything is allocated or written. */
#include <string.h>

#include "kernels/index_loops.h"
#include "ops_dispatch.h"
#include "ops_kernels_index_advanced.h"

/* The plan with every index checked; on failure nothing is owned. */
static ops_status
adv_plan_build(const char *op, const ops_tensor *self, ops_tensor_list indices, adv_plan *p)
{
    const ops_device dev = self->storage->device;
    ops_status st = idx_plan_build(op, self, indices, idx_device_nonzero, p);
    if (st == OPS_OK && (st = OPS_STUB_CALL(index_plan_check, dev, op, self, p)) != OPS_OK)
        idx_plan_release(p);
    return st;
}

/* ---- index.Tensor ------------------------------------------------------------------------ */

static ops_tensor *
index_run(const char *op, const ops_tensor *self, ops_tensor_list indices)
{
    const ops_device dev = self->storage->device;
    adv_plan p;
    if (adv_plan_build(op, self, indices, &p) != OPS_OK)
        return NULL;
    ops_tensor *r = ops_tensor_new(op, p.rnd, p.rshape, NULL, self->dtype, dev);
    if (r != NULL && OPS_STUB_CALL(index_adv_gather_loop, dev, op, &p, self, r) != OPS_OK) {
        ops_tensor_release(r);
        r = NULL;
    }
    idx_plan_release(&p);
    return r;
}

ops_tensor *
adv_index(const ops_tensor *self, ops_tensor_list indices)
{
    return index_run("index", self, indices);
}

ops_status
adv_index_out(const ops_tensor *self, ops_tensor_list indices, ops_tensor *out)
{
    return ops_write_out("index", index_run("index", self, indices), out);
}

/* ---- index_put ----------------------------------------------------------------------------- */

static ops_tensor *
index_put_run(const char *op, const ops_tensor *self, ops_tensor_list indices, const ops_tensor *values,
              bool accumulate)
{
    char b1[OPS_SHAPE_STR_LEN], b2[OPS_SHAPE_STR_LEN];
    const ops_device dev = self->storage->device;
    if (values->dtype != self->dtype)
        return ops_fail_null(OPS_ERR_DTYPE,
                             "%s: Index put requires the source and destination dtypes match, got %s for the "
                             "destination and %s for the source.",
                             op, ops_dtype_name(self->dtype), ops_dtype_name(values->dtype));
    adv_plan p;
    if (adv_plan_build(op, self, indices, &p) != OPS_OK)
        return NULL;
    ops_tensor *r = NULL;
    /* values must broadcast to the indexing result's shape */
    int nb;
    int64_t bs[OPS_MAX_DIMS];
    if (ops_broadcast_shapes(op, "values", values->ndim, values->sizes, "result", p.rnd, p.rshape, &nb, bs) !=
            OPS_OK ||
        nb != p.rnd || memcmp(bs, p.rshape, (size_t)nb * sizeof(int64_t)) != 0) {
        ops_clear_error();
        ops_fail(OPS_ERR_SHAPE,
                 "%s: shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s", op,
                 ops_shape_str(values->ndim, values->sizes, b1, sizeof b1),
                 ops_shape_str(p.rnd, p.rshape, b2, sizeof b2));
    } else if (OPS_STUB_CALL(index_adv_put_loop, dev, op, &p, self, values, accumulate, &r) != OPS_OK) {
        r = NULL;
    }
    idx_plan_release(&p);
    return r;
}

ops_tensor *
adv_index_put(const ops_tensor *self, ops_tensor_list indices, const ops_tensor *values, bool accumulate)
{
    return index_put_run("index_put", self, indices, values, accumulate);
}

ops_status
adv_index_put_out(const ops_tensor *self, ops_tensor_list indices, const ops_tensor *values, bool accumulate,
                  ops_tensor *out)
{
    return ops_write_out("index_put", index_put_run("index_put", self, indices, values, accumulate), out);
}

ops_status
adv_index_put_(ops_tensor *self, ops_tensor_list indices, const ops_tensor *values, bool accumulate)
{
    const char *op = "index_put_";
    if (idx_check_inplace_self(op, self) != OPS_OK)
        return ops_last_status();
    return idx_deliver(op, IDX_INPLACE, index_put_run(op, self, indices, values, accumulate), self, NULL, NULL);
}

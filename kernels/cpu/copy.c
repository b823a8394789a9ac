/* Copies and dtype conversions (CPU): copy_, to(dtype), clone, contiguous.
 *
 * Every value goes through ops_convert_run() (runtime/convert.c), the one routine
 * that changes dtypes, driven by the copy iterator (src broadcast to self's shape,
 * any strides, threads above the grain size).  A CUDA src is handed to the CUDA
 * backend's transfer (kernels/cuda/transfer.cu); to/clone/contiguous work on every
 * device through ops_copy_values. */
#include <string.h>

#include "ops_cuda_backend.h"
#include "ops_dispatch.h"
#include "ops_kernels.h"

/* A new tensor on device with t's sizes, in t's memory order when t is dense
 * (PyTorch's preserve_format), else contiguous. */
static ops_tensor *
new_like(const char *op, const ops_tensor *t, ops_dtype dtype, ops_device device)
{
    int64_t st[OPS_MAX_DIMS];
    const bool dense = ops_dense_strides_like(t, st);
    return ops_tensor_new(op, t->ndim, t->sizes, dense ? st : NULL, dtype, device);
}

ops_status
copy_cpu_(ops_tensor *self, const ops_tensor *src, bool non_blocking)
{
    const char *op = "copy_";
    if (self == NULL || src == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected self and src tensors, got NULL", op);
    if (self == src)
        return OPS_OK;
    ops_tensor *snapshot = NULL;
    ops_status st = ops_copy_prepare(op, self, src, &snapshot);
    if (st != OPS_OK)
        return st;
    const ops_tensor *from = snapshot != NULL ? snapshot : src;
#ifdef OPS_WITH_CUDA
    /* a CUDA src: the transfer comes to the host (non_blocking only into pinned memory) */
    if (from->storage->device.type != OPS_CPU)
        st = ops_cuda_copy_across(op, self, from, non_blocking);
    else
#endif
        st = ops_copy_values(op, self, from);
    (void)non_blocking; /* a host-to-host copy is synchronous */
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    ops_tensor_release(snapshot);
    return st;
}

/* to(device, dtype) for every device pair: self when nothing changes (unless copy),
 * else a new tensor on device laid out like self (preserve_format) holding self's
 * values converted to dtype. */
static ops_tensor *
to_impl(const char *op, const ops_tensor *self, ops_device device, ops_dtype dtype, bool non_blocking, bool copy)
{
    if ((int)dtype < 0 || dtype >= OPS_NUM_DTYPES)
        return ops_fail_null(OPS_ERR_DTYPE, "%s: invalid dtype (%d)", op, (int)dtype);
    if (device.type == OPS_DEVICE_TYPE_NONE)
        device = self->storage->device;
    if (self->dtype == dtype && ops_device_equal(self->storage->device, device) && !copy)
        return ops_tensor_retain(self);
    ops_tensor *out = new_like(op, self, dtype, device);
    if (out == NULL)
        return NULL;
    ops_status s = OPS_OK;
#ifdef OPS_WITH_CUDA
    if (!ops_device_equal(self->storage->device, device))
        s = ops_cuda_copy_across(op, out, self, non_blocking);
    else
#endif
        s = ops_copy_values(op, out, self);
    (void)non_blocking;
    if (s != OPS_OK) {
        ops_tensor_release(out);
        return NULL;
    }
    return out;
}

ops_tensor *
to_device_impl(const ops_tensor *self, ops_device device, ops_dtype dtype, bool non_blocking, bool copy)
{
    return to_impl("to", self, device, dtype == OPS_DTYPE_NONE ? self->dtype : dtype, non_blocking, copy);
}

ops_tensor *
to_other_impl(const ops_tensor *self, const ops_tensor *other, bool non_blocking, bool copy)
{
    return to_impl("to", self, other->storage->device, other->dtype, non_blocking, copy);
}

ops_tensor *
cpu_impl(const ops_tensor *self)
{
    return to_impl("cpu", self, OPS_DEVICE_CPU, self->dtype, false, false);
}

ops_tensor *
to_dtype_impl(const ops_tensor *self, ops_dtype dtype, bool non_blocking, bool copy)
{
    return to_impl("to", self, self->storage->device, dtype, non_blocking, copy);
}

ops_tensor *
clone_impl(const ops_tensor *self)
{
    ops_tensor *out = new_like("clone", self, self->dtype, self->storage->device);
    if (out == NULL)
        return NULL;
    if (ops_copy_values("clone", out, self) != OPS_OK) {
        ops_tensor_release(out);
        return NULL;
    }
    return out;
}

ops_tensor *
contiguous_impl(const ops_tensor *self)
{
    if (ops_tensor_is_contiguous(self))
        return ops_tensor_retain(self);
    ops_tensor *out = ops_tensor_new("contiguous", self->ndim, self->sizes, NULL, self->dtype, self->storage->device);
    if (out == NULL)
        return NULL;
    if (ops_copy_values("contiguous", out, self) != OPS_OK) {
        ops_tensor_release(out);
        return NULL;
    }
    return out;
}

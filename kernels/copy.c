/* Copies and dtype conversions, one driver for every device: copy_ (the schema names
 * copy_copy_ for CPU and CUDA), to, cpu, clone, contiguous.
 *
 * The checks, the result's layout and the "nothing changes" rules are here; the values
 * move through the stub copy_values (kernels/copy.h) of the device that is not the
 * host: the CPU's copy iterator and ops_convert_run() (runtime/core/convert.c) when
 * both tensors are on the CPU, the CUDA copy kernels and transfers
 * (kernels/cuda/copy.cu, transfer.cu) when either is on a CUDA device. */
#include <string.h>

#include "kernels/copy.h"
#include "ops_dispatch.h"
#include "ops_kernels_copy.h"

/* The device whose copy_values loop moves src's values into dst: the one that is
 * not the host (dst's when both are devices: the CUDA loop handles any pair). */
static ops_device
copy_device(const ops_tensor *dst, const ops_tensor *src)
{
    return dst->storage->device.type != OPS_CPU ? dst->storage->device : src->storage->device;
}

/* A new tensor on device with t's sizes laid out as memory_format says (None is
 * preserve_format: t's strides when t is dense, else t's dim order), holding t's values
 * converted to dtype.  Layouts never change values: only where each one is stored. */
static ops_tensor *
copy_as(const char *op, const ops_tensor *t, ops_dtype dtype, ops_device device, ops_memory_format memory_format,
        bool non_blocking)
{
    ops_tensor *out = ops_tensor_new_like_format(op, t, dtype, device, memory_format);
    if (out == NULL)
        return NULL;
    const ops_device dev = copy_device(out, t);
    const ops_status s = OPS_STUB_CALL(copy_values, dev, op, out, t, non_blocking);
    if (s != OPS_OK) {
        ops_tensor_release(out);
        return NULL;
    }
    return out;
}

/* copy_: src (any device, broadcast to self) into self (any device), checked as
 * ops_copy_prepare does (a src overlapping self is copied through a snapshot). */
ops_status
copy_copy_(ops_tensor *self, const ops_tensor *src, bool non_blocking)
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
    const ops_device dev = copy_device(self, from);
    st = OPS_STUB_CALL(copy_values, dev, op, self, from, non_blocking);
    if (st == OPS_OK)
        ops_tensor_bump_version(self);
    ops_tensor_release(snapshot);
    return st;
}

/* to(device, dtype, memory_format) for every device pair: self when nothing changes
 * (unless copy), else a new tensor on device laid out as memory_format says (None:
 * like self) holding self's values converted to dtype.  As PyTorch, a memory_format
 * "changes nothing" when it is preserve_format or the one self's strides suggest
 * (ops_tensor_suggest_memory_format): x.to(memory_format=contiguous_format) of a
 * transposed matrix is x itself, as torch's is. */
static ops_tensor *
to_impl(const char *op, const ops_tensor *self, ops_device device, ops_dtype dtype, bool non_blocking, bool copy,
        ops_memory_format memory_format)
{
    if ((int)dtype < 0 || dtype >= OPS_NUM_DTYPES)
        return ops_fail_null(OPS_ERR_DTYPE, "%s: invalid dtype (%d)", op, (int)dtype);
    if ((int)memory_format < OPS_MEMORY_FORMAT_NONE || memory_format >= OPS_NUM_MEMORY_FORMATS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: invalid memory_format (%d)", op, (int)memory_format);
    if (device.type == OPS_DEVICE_TYPE_NONE)
        device = self->storage->device;
    const bool same_format = memory_format == OPS_MEMORY_FORMAT_NONE || memory_format == OPS_PRESERVE_FORMAT ||
                             ops_tensor_suggest_memory_format(self) == memory_format;
    if (self->dtype == dtype && ops_device_equal(self->storage->device, device) && !copy && same_format)
        return ops_tensor_retain(self);
    return copy_as(op, self, dtype, device, memory_format, non_blocking);
}

ops_tensor *
to_device_impl(const ops_tensor *self, ops_device device, ops_dtype dtype, bool non_blocking, bool copy,
               ops_memory_format memory_format)
{
    return to_impl("to", self, device, dtype == OPS_DTYPE_NONE ? self->dtype : dtype, non_blocking, copy,
                   memory_format);
}

ops_tensor *
to_other_impl(const ops_tensor *self, const ops_tensor *other, bool non_blocking, bool copy,
              ops_memory_format memory_format)
{
    return to_impl("to", self, other->storage->device, other->dtype, non_blocking, copy, memory_format);
}

ops_tensor *
cpu_impl(const ops_tensor *self)
{
    return to_impl("cpu", self, OPS_DEVICE_CPU, self->dtype, false, false, OPS_MEMORY_FORMAT_NONE);
}

ops_tensor *
to_dtype_impl(const ops_tensor *self, ops_dtype dtype, bool non_blocking, bool copy, ops_memory_format memory_format)
{
    return to_impl("to", self, self->storage->device, dtype, non_blocking, copy, memory_format);
}

/* memory_format None is preserve_format: self's strides when self is dense, else dense
 * strides in self's dim order (PyTorch 1.13's clone). */
ops_tensor *
clone_impl(const ops_tensor *self, ops_memory_format memory_format)
{
    return copy_as("clone", self, self->dtype, self->storage->device, memory_format, false);
}

/* self itself when it already has memory_format's strides, else a copy that has them. */
ops_tensor *
contiguous_impl(const ops_tensor *self, ops_memory_format memory_format)
{
    if ((int)memory_format < OPS_MEMORY_FORMAT_NONE || memory_format >= OPS_NUM_MEMORY_FORMATS)
        return ops_fail_null(OPS_ERR_VALUE, "contiguous: invalid memory_format (%d)", (int)memory_format);
    if (ops_tensor_is_contiguous_as(self, memory_format))
        return ops_tensor_retain(self);
    if (memory_format == OPS_PRESERVE_FORMAT || memory_format == OPS_MEMORY_FORMAT_NONE)
        return ops_fail_null(OPS_ERR_VALUE, "contiguous: preserve memory format is unsupported by the contiguous "
                                            "operator (memory_format=preserve_format)");
    return copy_as("contiguous", self, self->dtype, self->storage->device, memory_format, false);
}

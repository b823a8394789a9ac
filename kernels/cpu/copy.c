/* Copies and dtype conversions (CPU): copy_, to(dtype), clone, contiguous.
 *
 * Every value goes through ops_convert_run() (runtime/convert.c), the one routine
 * that changes dtypes, driven by the copy iterator (src broadcast to self's shape,
 * any strides, threads above the grain size). */
#include <string.h>

#include "ops_dispatch.h"
#include "ops_kernels.h"

static inline bool
same_view(const ops_tensor *a, const ops_tensor *b)
{
    return a->storage == b->storage && a->offset == b->offset && a->dtype == b->dtype && a->ndim == b->ndim &&
           memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof(int64_t)) == 0 &&
           memcmp(a->strides, b->strides, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* A new tensor with t's sizes, in t's memory order when t is dense (PyTorch's
 * preserve_format), else contiguous. */
static ops_tensor *
new_like(const char *op, const ops_tensor *t, ops_dtype dtype)
{
    int64_t st[OPS_MAX_DIMS];
    const bool dense = ops_dense_strides_like(t, st);
    return ops_tensor_new(op, t->ndim, t->sizes, dense ? st : NULL, dtype, t->storage->device);
}

ops_status
copy_cpu_(ops_tensor *self, const ops_tensor *src, bool non_blocking)
{
    const char *op = "copy_";
    (void)non_blocking; /* the CPU copy is synchronous */
    if (self == NULL || src == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected self and src tensors, got NULL", op);
    if (self == src)
        return OPS_OK;
    if (self->storage->device.type != OPS_CPU || src->storage->device.type != OPS_CPU) {
        char d1[32], d2[32];
        return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: the cpu copy cannot copy from %s to %s", op,
                        ops_device_str(src->storage->device, d1, sizeof d1),
                        ops_device_str(self->storage->device, d2, sizeof d2));
    }
    ops_iter it;
    ops_tensor *tmp = NULL;
    ops_status st = ops_iter_build_copy(&it, op, self, src);
    if (st != OPS_OK)
        goto done;
    if (ops_tensor_has_internal_overlap(self)) {
        st = ops_fail(OPS_ERR_VALUE,
                      "%s: unsupported operation: more than one element of the written-to tensor refers to a "
                      "single memory location. Please clone() the tensor before performing the operation.",
                      op);
        goto done;
    }
    if (!same_view(self, src) && ops_tensor_may_overlap(self, src)) {
        /* src would change under the copy: read it from a snapshot instead */
        tmp = ops_tensor_new(op, src->ndim, src->sizes, NULL, src->dtype, OPS_DEVICE_CPU);
        if (tmp == NULL || (st = ops_copy_values(op, tmp, src)) != OPS_OK) {
            st = ops_last_status();
            goto done;
        }
        ops_iter_release(&it);
        if ((st = ops_iter_build_copy(&it, op, self, tmp)) != OPS_OK)
            goto done;
    }
    {
        const ops_dtype ddt = it.dtypes[0], sdt = it.dtypes[1];
        OPS_ITER_LOOP(&it, data, strides, n, {
            ops_convert_run(ddt, data[0], strides[0], sdt, data[1], strides[1], n);
        });
    }
    ops_tensor_bump_version(self);
done:
    ops_iter_release(&it);
    ops_tensor_release(tmp);
    return st;
}

ops_tensor *
to_dtype_impl(const ops_tensor *self, ops_dtype dtype, bool non_blocking, bool copy)
{
    (void)non_blocking;
    if ((int)dtype < 0 || dtype >= OPS_NUM_DTYPES)
        return ops_fail_null(OPS_ERR_DTYPE, "to: invalid dtype (%d)", (int)dtype);
    if (self->dtype == dtype && !copy)
        return ops_tensor_retain(self);
    ops_tensor *out = new_like("to", self, dtype);
    if (out == NULL)
        return NULL;
    if (ops_copy_values("to", out, self) != OPS_OK) {
        ops_tensor_release(out);
        return NULL;
    }
    return out;
}

ops_tensor *
clone_impl(const ops_tensor *self)
{
    ops_tensor *out = new_like("clone", self, self->dtype);
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

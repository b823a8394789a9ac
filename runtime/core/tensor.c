/* Storage and tensor lifecycle: refcounts, construction (new, views, from_blob, scalars),
 * item, resize_, storage export; the device check of several tensors and the thread
 * setting.  A tensor's accessors, shape arithmetic and overlap checks are in
 * tensor_shape.c.
 *
 * A small CPU tensor is one allocation: tensor header, storage header, then its
 * (64-byte aligned) bytes.  Small ops are all overhead, and this
 * turns three allocations into one.  The block belongs to the storage: the tensor
 * that created it holds a storage reference until it dies, so the storage's
 * refcount reaching zero means both are dead and the block can go, even when
 * views outlived the tensor. */
#include <inttypes.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd_impl.h"
#include "ops_cuda.h"
#include "kernels/copy.h"
#include "kernels/device.h"
#include "ops_internal.h"
#include "ops_iter.h"
#include "ops_tensor_impl.h"

/* OpenBLAS's thread-count setter (cblas.h declares it; declared here to keep the
 * BLAS header out of the runtime). */
void openblas_set_num_threads(int num_threads);

/* Tensors with at most this many bytes live inside their header's block.  Keeps
 * the block (headers + data + alignment slack) within malloc's per-thread cache. */
#define OPS_EMBED_MAX_BYTES 512

typedef struct embedded_block {
    ops_tensor tensor;
    ops_storage storage;
} embedded_block;

#define OPS_EMBED_DATA_OFFSET ((sizeof(embedded_block) + 63) & ~(size_t)63)

/* ---- refcounts ------------------------------------------------------------ */

/* True when the caller held the last reference.  A count of 1 seen by a holder
 * cannot grow (nobody else has a reference to copy), so the common case of
 * releasing a temporary skips the locked read-modify-write. */
static inline bool
refcount_drop(int64_t *rc)
{
    if (__atomic_load_n(rc, __ATOMIC_ACQUIRE) == 1)
        return true;
    return __atomic_sub_fetch(rc, 1, __ATOMIC_ACQ_REL) == 0;
}

static inline void
storage_retain(ops_storage *s)
{
    __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
}

static inline char *
embedded_data(ops_storage *s)
{
    return (char *)s - offsetof(embedded_block, storage) + OPS_EMBED_DATA_OFFSET;
}

static void
storage_free(ops_storage *s)
{
    const bool embedded = (s->flags & OPS_STORAGE_EMBEDDED) != 0;
    /* A resize_ may have moved an embedded storage's bytes out of the block. */
    const bool inline_data = embedded && s->data == embedded_data(s);
    if (!inline_data) {
        if (s->allocator)
            s->allocator->free(s->allocator->ctx, s->data, s->nbytes);
        else if (s->deleter)
            s->deleter(s->data, s->deleter_ctx);
    }
    if (embedded) {
        const ops_allocator *cpu = ops_cpu_allocator();
        cpu->free(cpu->ctx, (char *)s - offsetof(embedded_block, storage), s->block_nbytes);
    } else {
        ops_host_free(s);
    }
}

static inline void
storage_release(ops_storage *s)
{
    if (refcount_drop(&s->refcount))
        storage_free(s);
}

ops_tensor *
ops_tensor_retain(const ops_tensor *t)
{
    if (t == NULL)
        return NULL;
    ops_tensor *m = (ops_tensor *)t;
    __atomic_add_fetch(&m->refcount, 1, __ATOMIC_RELAXED);
    return m;
}

void
ops_tensor_release(ops_tensor *t)
{
    if (t == NULL || !refcount_drop(&t->refcount))
        return;
    if (t->autograd != NULL)
        ops_autograd_meta_free(t->autograd);
    ops_storage *s = t->storage;
    /* An embedded header is part of its storage's block and goes with it. */
    if (!(t->flags & OPS_TENSOR_EMBEDDED))
        ops_host_free(t);
    storage_release(s);
}

void
ops_tensor_vec_release(ops_tensor_vec *v)
{
    if (v == NULL)
        return;
    for (int64_t i = 0; i < v->len; i++)
        ops_tensor_release(v->data[i]);
    ops_host_free(v->data);
    v->data = NULL;
    v->len = 0;
}

ops_status
ops_tensor_vec_init(const char *op, ops_tensor_vec *v, int64_t n)
{
    v->len = 0;
    v->data = NULL;
    if (n == 0)
        return OPS_OK;
    v->data = ops_host_malloc_array(n, sizeof *v->data);
    if (v->data == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory allocating a list of %lld tensors", op, (long long)n);
    memset(v->data, 0, (size_t)n * sizeof *v->data);
    v->len = n;
    return OPS_OK;
}

/* ---- construction ----------------------------------------------------------- */

const ops_allocator *
ops_device_allocator(const char *op, ops_device device)
{
    if ((unsigned)device.type >= (unsigned)OPS_NUM_DEVICE_TYPES)
        return ops_fail_null(OPS_ERR_DEVICE, "%s: invalid device (type %d)", ops_op_name(op), (int)device.type);
    /* the device type's backend (kernels/device.h); only CUDA can be left out of a build */
    const ops_device_backend *b = ops_device_backend_of(device.type);
    if (b == NULL)
        return ops_fail_null(OPS_ERR_DEVICE, "%s: libops was built without CUDA support (device cuda:%d)",
                             ops_op_name(op), device.index);
    return b->allocator(op, device.index);
}

ops_status
ops_check_geometry(const char *op, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                   ops_dtype dtype)
{
    char sbuf[OPS_SHAPE_STR_LEN], tbuf[OPS_SHAPE_STR_LEN];
    int64_t numel;
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: Trying to create tensor with negative dimension %" PRId64 ": %s",
                            ops_op_name(op), sizes[i], ops_shape_str(ndim, sizes, sbuf, sizeof sbuf));
    if (ops_numel_overflow(ndim, sizes, &numel))
        return ops_fail(OPS_ERR_VALUE, "%s: a tensor of sizes %s would have more elements than int64 can count",
                        ops_op_name(op), ops_shape_str(ndim, sizes, sbuf, sizeof sbuf));
    /* The element offsets reached, lowest and highest, and the byte offsets of both
     * ends: kernels compute all of them in int64 (data pointer + offset * itemsize). */
    int64_t contiguous[OPS_MAX_DIMS];
    if (strides == NULL && ndim > 0) { /* contiguous; the element count fits, so these do */
        ops_contiguous_strides(ndim, sizes, contiguous);
        strides = contiguous;
    }
    int64_t lo = offset, hi = offset, span;
    bool overflow = false;
    for (int i = 0; numel > 0 && i < ndim; i++) {
        overflow |= ops_mul_overflow_i64(sizes[i] - 1, strides[i], &span);
        overflow |= ops_add_overflow_i64(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
    }
    const int64_t item = (int64_t)ops_dtype_itemsize(dtype);
    overflow |= ops_add_overflow_i64(hi, 1, &span) || ops_mul_overflow_i64(span, item, &span) ||
                ops_mul_overflow_i64(lo, item, &span);
    if (overflow)
        return ops_fail(OPS_ERR_VALUE,
                        "%s: a tensor of sizes %s, strides %s and storage offset %" PRId64
                        " would reach elements beyond what int64 can address",
                        ops_op_name(op), ops_shape_str(ndim, sizes, sbuf, sizeof sbuf),
                        ops_shape_str(ndim, strides, tbuf, sizeof tbuf), offset);
    return OPS_OK;
}

/* Validates a geometry and computes the bytes its storage needs from offset 0:
 * enough for the largest addressed element.  Sets the error on failure. */
static ops_status
geometry_nbytes(const char *op, int ndim, const int64_t *sizes, const int64_t *strides, ops_dtype dtype,
                size_t *nbytes_out)
{
    char buf[OPS_SHAPE_STR_LEN];
    if ((int)dtype < 0 || dtype >= OPS_NUM_DTYPES)
        return ops_fail(OPS_ERR_DTYPE, "%s: invalid dtype (%d)", ops_op_name(op), (int)dtype);
    if (ndim < 0 || ndim > OPS_MAX_DIMS)
        return ops_fail(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %d", ops_op_name(op),
                        OPS_MAX_DIMS, ndim);
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: Trying to create tensor with negative dimension %" PRId64 ": %s",
                            ops_op_name(op), sizes[i], ops_shape_str(ndim, sizes, buf, sizeof buf));
        if (sizes[i] == 0)
            empty = true;
        if (strides && strides[i] < 0)
            return ops_fail(OPS_ERR_VALUE, "%s: negative strides are not supported, got strides %s",
                            ops_op_name(op), ops_shape_str(ndim, strides, buf, sizeof buf));
    }
    /* A count past int64 (zero strides keep the extent small) is as impossible to
     * allocate as the bytes below. */
    int64_t numel;
    if (ops_numel_overflow(ndim, sizes, &numel))
        return ops_fail(OPS_ERR_OOM, "%s: a tensor of shape %s and dtype %s is too large to allocate",
                        ops_op_name(op), ops_shape_str(ndim, sizes, buf, sizeof buf), ops_dtype_name(dtype));
    int64_t extent = empty ? 0 : 1; /* elements from offset 0 to the last addressed one, inclusive */
    bool overflow = false;
    if (!empty) {
        for (int i = 0; i < ndim; i++) {
            int64_t span;
            if (strides) {
                overflow |= ops_mul_overflow_i64(sizes[i] - 1, strides[i], &span);
                overflow |= ops_add_overflow_i64(extent, span, &extent);
            } else {
                overflow |= ops_mul_overflow_i64(extent, sizes[i], &extent);
            }
        }
    }
    int64_t nbytes = 0;
    overflow |= ops_mul_overflow_i64(extent, (int64_t)ops_dtype_itemsize(dtype), &nbytes);
    if (overflow)
        return ops_fail(OPS_ERR_OOM, "%s: a tensor of shape %s and dtype %s is too large to allocate",
                        ops_op_name(op), ops_shape_str(ndim, sizes, buf, sizeof buf), ops_dtype_name(dtype));
    *nbytes_out = (size_t)nbytes;
    return OPS_OK;
}

static void
fill_geometry(ops_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides)
{
    t->ndim = ndim;
    if (ndim == 0)
        return; /* sizes may be NULL for a 0-dim tensor */
    memcpy(t->sizes, sizes, (size_t)ndim * sizeof(int64_t));
    if (strides)
        memcpy(t->strides, strides, (size_t)ndim * sizeof(int64_t));
    else
        ops_contiguous_strides(ndim, sizes, t->strides);
}

/* A fresh storage header owning one reference. */
static void
init_storage(ops_storage *s, void *data, size_t nbytes, ops_device device, const ops_allocator *alloc,
             uint32_t flags, size_t block_nbytes)
{
    *s = (ops_storage){.refcount = 1, .data = data, .nbytes = nbytes, .device = device,
                       .allocator = alloc, .flags = flags, .block_nbytes = block_nbytes};
}

/* A fresh tensor header owning one reference; it takes over a reference to s. */
static ops_tensor *
init_tensor(ops_tensor *t, ops_storage *s, int64_t offset, ops_dtype dtype, uint32_t flags, int ndim,
            const int64_t *sizes, const int64_t *strides)
{
    t->refcount = 1;
    t->storage = s;
    t->offset = offset;
    t->dtype = dtype;
    t->flags = flags;
    t->autograd = NULL;
    fill_geometry(t, ndim, sizes, strides);
    return t;
}

static ops_tensor *
tensor_new_embedded(int ndim, const int64_t *sizes, const int64_t *strides, ops_dtype dtype, size_t nbytes)
{
    const ops_allocator *cpu = ops_cpu_allocator();
    const size_t block_nbytes = OPS_EMBED_DATA_OFFSET + nbytes;
    embedded_block *b = cpu->alloc(cpu->ctx, block_nbytes);
    if (b == NULL)
        return NULL;
    init_storage(&b->storage, (char *)b + OPS_EMBED_DATA_OFFSET, nbytes, OPS_DEVICE_CPU, cpu,
                 OPS_STORAGE_EMBEDDED, block_nbytes);
    return init_tensor(&b->tensor, &b->storage, 0, dtype, OPS_TENSOR_EMBEDDED, ndim, sizes, strides);
}

static ops_tensor *tensor_new_with(const char *op, int ndim, const int64_t *sizes, const int64_t *strides,
                                   ops_dtype dtype, ops_device device, const ops_allocator *alloc, size_t nbytes);

ops_tensor *
ops_tensor_new(const char *op, int ndim, const int64_t *sizes, const int64_t *strides, ops_dtype dtype,
               ops_device device)
{
    size_t nbytes = 0;
    if (geometry_nbytes(op, ndim, sizes, strides, dtype, &nbytes) != OPS_OK)
        return NULL;
    if (OPS_LIKELY(device.type == OPS_CPU && nbytes <= OPS_EMBED_MAX_BYTES)) {
        ops_tensor *t = tensor_new_embedded(ndim, sizes, strides, dtype, nbytes);
        if (t == NULL)
            return ops_fail_null(OPS_ERR_OOM, "%s: out of memory (tried to allocate %zu bytes on cpu)",
                                 ops_op_name(op), OPS_EMBED_DATA_OFFSET + nbytes);
        return t;
    }

    const ops_allocator *alloc = ops_device_allocator(op, device);
    if (alloc == NULL)
        return NULL;
    return tensor_new_with(op, ndim, sizes, strides, dtype, device, alloc, nbytes);
}

/* A tensor whose nbytes of storage come from alloc (the device's, or pinned host). */
static ops_tensor *
tensor_new_with(const char *op, int ndim, const int64_t *sizes, const int64_t *strides, ops_dtype dtype,
                ops_device device, const ops_allocator *alloc, size_t nbytes)
{
    ops_tensor *t = ops_host_malloc(sizeof *t);
    ops_storage *s = ops_host_malloc(sizeof *s);
    void *data = NULL;
    bool said = false;
    if (t != NULL && s != NULL) {
        /* an allocator may explain its failure (the CUDA cache: sizes reserved and
         * free, the CUDA error): keep that message, prefixed with the op */
        const uint64_t failures = ops_error_serial();
        data = alloc->alloc(alloc->ctx, nbytes);
        said = data == NULL && ops_error_serial() != failures;
    }
    if (data == NULL) {
        ops_host_free(t);
        ops_host_free(s);
        if (said) {
            char why[256]; /* a copy: the message is rewritten in the same slot */
            snprintf(why, sizeof why, "%s", ops_last_error());
            return ops_fail_null(ops_last_status(), "%s: %s", ops_op_name(op), why);
        }
        char dev[32];
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory (tried to allocate %zu bytes on %s)",
                             ops_op_name(op), nbytes, ops_device_str(device, dev, sizeof dev));
    }
    init_storage(s, data, nbytes, device, alloc, 0, 0);
    return init_tensor(t, s, 0, dtype, 0, ndim, sizes, strides);
}

ops_tensor *
ops_tensor_pin_memory(const ops_tensor *t)
{
    const char *op = "pin_memory";
    if (t == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected a tensor, got NULL", op);
    if (t->storage->device.type != OPS_CPU) {
        char dev[32];
        return ops_fail_null(OPS_ERR_DEVICE, "%s: cannot pin a tensor on %s (only dense cpu tensors can be pinned)",
                             op, ops_device_str(t->storage->device, dev, sizeof dev));
    }
    /* page-locked memory is the CUDA backend's (kernels/device.h), absent from a CPU build */
    const ops_device_backend *cuda = ops_device_backend_of(OPS_CUDA);
    if (cuda == NULL)
        return ops_fail_null(OPS_ERR_DEVICE, "%s: pinned memory needs the CUDA backend (this is a CPU build)", op);
    if (ops_tensor_is_pinned(t))
        return ops_tensor_retain(t);
    const ops_allocator *alloc = cuda->pinned_allocator();
    size_t nbytes = 0;
    if (alloc == NULL || geometry_nbytes(op, t->ndim, t->sizes, NULL, t->dtype, &nbytes) != OPS_OK)
        return NULL;
    ops_tensor *p = tensor_new_with(op, t->ndim, t->sizes, NULL, t->dtype, OPS_DEVICE_CPU, alloc, nbytes);
    if (p != NULL && ops_copy_values(op, p, t) != OPS_OK) {
        ops_tensor_release(p);
        return NULL;
    }
    return p;
}

bool
ops_tensor_is_pinned(const ops_tensor *t)
{
    const ops_device_backend *cuda = ops_device_backend_of(OPS_CUDA);
    return cuda != NULL && t != NULL && t->storage->allocator != NULL &&
           t->storage->allocator == cuda->pinned_allocator();
}

ops_tensor *
ops_tensor_new_view_op(const char *op, const ops_tensor *base, int ndim, const int64_t *sizes,
                       const int64_t *strides, int64_t offset)
{
    op = op ? op : "view";
    if (ndim < 0 || ndim > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %d", op, OPS_MAX_DIMS,
                             ndim);
    if (ops_check_geometry(op, ndim, sizes, strides, offset, base->dtype) != OPS_OK)
        return NULL;
    ops_tensor *t = ops_host_malloc(sizeof *t);
    if (t == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a tensor header", op);
    storage_retain(base->storage);
    return init_tensor(t, base->storage, offset, base->dtype, 0, ndim, sizes, strides);
}

ops_tensor *
ops_tensor_new_view(const ops_tensor *base, int ndim, const int64_t *sizes, const int64_t *strides,
                    int64_t offset)
{
    return ops_tensor_new_view_op(NULL, base, ndim, sizes, strides, offset);
}

ops_tensor *
ops_tensor_from_blob(void *data, ops_int_list sizes, ops_int_list strides, ops_dtype dtype, ops_device device,
                     void (*deleter)(void *data, void *ctx), void *ctx)
{
    const char *op = "from_blob";
    if (sizes.len < 0 || sizes.len > OPS_MAX_DIMS || (sizes.len > 0 && sizes.data == NULL))
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected 0 to %d sizes, got %" PRId64, op, OPS_MAX_DIMS,
                             sizes.len);
    if (strides.len != 0 && (strides.len != sizes.len || strides.data == NULL))
        return ops_fail_null(OPS_ERR_VALUE,
                             "%s: got %" PRId64 " strides for %" PRId64 " sizes (pass none for contiguous)",
                             op, strides.len, sizes.len);
    const int ndim = (int)sizes.len;
    const int64_t *st = strides.len ? strides.data : NULL;
    size_t nbytes = 0;
    if (geometry_nbytes(op, ndim, sizes.data, st, dtype, &nbytes) != OPS_OK)
        return NULL;
    if (data == NULL && nbytes > 0)
        return ops_fail_null(OPS_ERR_VALUE, "%s: data is NULL for a tensor of %zu bytes", op, nbytes);
    /* Validates the device (cuda in a CPU build is refused) although the bytes
     * stay the caller's. */
    if (ops_device_allocator(op, device) == NULL)
        return NULL;
    ops_tensor *t = ops_host_malloc(sizeof *t);
    ops_storage *s = ops_host_malloc(sizeof *s);
    if (t == NULL || s == NULL) {
        ops_host_free(t);
        ops_host_free(s);
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a tensor header", op);
    }
    init_storage(s, data, nbytes, device, NULL, 0, 0);
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    return init_tensor(t, s, 0, dtype, 0, ndim, sizes.data, st);
}

ops_tensor *
ops_tensor_from_data(const void *data, ops_int_list sizes, ops_dtype dtype)
{
    const char *op = "from_data";
    if (sizes.len < 0 || sizes.len > OPS_MAX_DIMS || (sizes.len > 0 && sizes.data == NULL))
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected 0 to %d sizes, got %" PRId64, op, OPS_MAX_DIMS,
                             sizes.len);
    ops_tensor *t = ops_tensor_new(op, (int)sizes.len, sizes.data, NULL, dtype, OPS_DEVICE_CPU);
    if (t == NULL)
        return NULL;
    const size_t nbytes = (size_t)ops_tensor_numel(t) * ops_dtype_itemsize(dtype);
    if (nbytes > 0) {
        if (data == NULL) {
            ops_tensor_release(t);
            return ops_fail_null(OPS_ERR_VALUE, "%s: data is NULL for a tensor of %zu bytes", op, nbytes);
        }
        memcpy(t->storage->data, data, nbytes);
    }
    return t;
}

ops_tensor *
ops_scalar_tensor(ops_scalar s, ops_dtype dtype)
{
    if (dtype == OPS_DTYPE_NONE)
        dtype = s.kind == OPS_SCALAR_BOOL  ? OPS_BOOL
                : s.kind == OPS_SCALAR_INT ? OPS_INT64
                                           : ops_default_float_dtype();
    ops_tensor *t = ops_tensor_new("scalar_tensor", 0, NULL, NULL, dtype, OPS_DEVICE_CPU);
    if (t)
        ops_scalar_store(s, dtype, t->storage->data);
    return t;
}

ops_tensor *
ops_wrap_scalar(ops_scalar s)
{
    const ops_dtype dtype = ops_scalar_dtype(s);
    ops_tensor *t = ops_tensor_new("wrap_scalar", 0, NULL, NULL, dtype, OPS_DEVICE_CPU);
    if (t) {
        ops_scalar_store(s, dtype, t->storage->data);
        t->flags |= OPS_TENSOR_WRAPPED_NUMBER;
    }
    return t;
}

ops_status
ops_tensor_item(const ops_tensor *t, ops_scalar *out)
{
    if (t == NULL || out == NULL)
        return ops_fail(OPS_ERR_VALUE, "item: expected a tensor and an output scalar, got NULL");
    const int64_t n = ops_tensor_numel(t);
    if (n != 1)
        return ops_fail(OPS_ERR_VALUE,
                        "item: a Tensor with %" PRId64 " elements cannot be converted to Scalar", n);
    if (t->storage->device.type != OPS_CPU) {
        /* the one element comes to the host after the device's queued work, through
         * the device's loop (kernels/copy.h), absent only in a build without its
         * backend */
        copy_read_bytes_fn *const read = OPS_STUB_GET(copy_read_bytes, t->storage->device);
        if (read == NULL) {
            char dev[32];
            return ops_fail(OPS_ERR_DEVICE,
                            "item: reading a tensor on %s needs the CUDA backend (this is a CPU build)",
                            ops_device_str(t->storage->device, dev, sizeof dev));
        }
        union {
            int64_t i;
            double f;
        } v;
        ops_status st = read("item", t->storage->device, &v, ops_tensor_data_ptr(t), ops_dtype_itemsize(t->dtype));
        if (st == OPS_OK)
            *out = ops_scalar_load(&v, t->dtype);
        return st;
    }
    *out = ops_scalar_load(ops_tensor_data_ptr(t), t->dtype);
    return OPS_OK;
}

ops_status
ops_tensor_resize_(const char *op, ops_tensor *t, int ndim, const int64_t *sizes)
{
    size_t nbytes = 0;
    if (geometry_nbytes(op, ndim, sizes, NULL, t->dtype, &nbytes) != OPS_OK)
        return ops_last_status();
    size_t needed;
    if (nbytes == 0) {
        needed = 0;
    } else if (__builtin_mul_overflow((size_t)t->offset, ops_dtype_itemsize(t->dtype), &needed) ||
               __builtin_add_overflow(needed, nbytes, &needed)) {
        return ops_fail(OPS_ERR_OOM, "%s: resize to %zu bytes past offset %" PRId64 " overflows", ops_op_name(op),
                        nbytes, t->offset);
    }
    ops_storage *s = t->storage;
    if (needed > s->nbytes) {
        char shape[OPS_SHAPE_STR_LEN];
        if (s->flags & OPS_STORAGE_SHARED)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: cannot resize a tensor whose storage is in shared memory from %zu to %zu bytes",
                            ops_op_name(op), s->nbytes, needed);
        /* Growing moves the bytes and frees the old block.  Whoever holds the
         * old address must not be left with freed memory: an exporter (NumPy,
         * DLPack, a memoryview) holds it outright, and another view of the
         * storage may be read concurrently or be an input of this very call.
         * So, as PyTorch does for storages it cannot resize, refuse. */
        if (ops_storage_is_exported(s))
            return ops_fail(OPS_ERR_VALUE,
                            "%s: out= cannot be resized from %zu to %zu bytes (to shape %s): its storage is exported "
                            "(to NumPy, DLPack or a memoryview) and its memory must not move; pass an out= of that "
                            "shape or release the exports first",
                            ops_op_name(op), s->nbytes, needed, ops_shape_str(ndim, sizes, shape, sizeof shape));
        if (__atomic_load_n(&s->refcount, __ATOMIC_ACQUIRE) > 1)
            return ops_fail(OPS_ERR_VALUE,
                            "%s: out= cannot be resized from %zu to %zu bytes (to shape %s): its storage is shared "
                            "with another tensor (a view or its base) and its memory must not move; pass an out= "
                            "of that shape or one that owns its storage",
                            ops_op_name(op), s->nbytes, needed, ops_shape_str(ndim, sizes, shape, sizeof shape));
        if (s->allocator == NULL)
            return ops_fail(
                OPS_ERR_VALUE,
                "%s: cannot resize a tensor whose storage is borrowed (from_blob) from %zu to %zu bytes",
                ops_op_name(op), s->nbytes, needed);
        if (s->device.type != OPS_CPU && s->nbytes > 0) {
            char dev[32];
            return ops_fail(OPS_ERR_NOT_IMPLEMENTED,
                            "%s: growing a non-empty storage on %s (from %zu to %zu bytes) is not supported",
                            ops_op_name(op), ops_device_str(s->device, dev, sizeof dev), s->nbytes, needed);
        }
        void *data = s->allocator->alloc(s->allocator->ctx, needed);
        if (data == NULL) {
            char dev[32];
            return ops_fail(OPS_ERR_OOM, "%s: out of memory (tried to allocate %zu bytes on %s)", ops_op_name(op),
                            needed, ops_device_str(s->device, dev, sizeof dev));
        }
        /* Only t sees the storage (checked above), so nothing else holds the
         * old address. */
        if (s->nbytes > 0)
            memcpy(data, s->data, s->nbytes);
        const bool inline_data = (s->flags & OPS_STORAGE_EMBEDDED) && s->data == embedded_data(s);
        if (!inline_data)
            s->allocator->free(s->allocator->ctx, s->data, s->nbytes);
        s->data = data;
        s->nbytes = needed;
    }
    fill_geometry(t, ndim, sizes, NULL);
    return OPS_OK;
}

void
ops_storage_export_begin(ops_storage *s)
{
    __atomic_add_fetch(&s->exports, 1, __ATOMIC_ACQ_REL);
}

void
ops_storage_export_end(ops_storage *s)
{
    __atomic_sub_fetch(&s->exports, 1, __ATOMIC_ACQ_REL);
}

bool
ops_storage_is_exported(const ops_storage *s)
{
    return __atomic_load_n(&s->exports, __ATOMIC_ACQUIRE) > 0;
}

void
ops_storage_replace_data(ops_storage *s, void *data, const ops_allocator *alloc)
{
    /* Inline bytes stay in the header block, which storage_free releases. */
    const bool inline_data = (s->flags & OPS_STORAGE_EMBEDDED) && s->data == embedded_data(s);
    if (!inline_data) {
        if (s->allocator)
            s->allocator->free(s->allocator->ctx, s->data, s->nbytes);
        else if (s->deleter)
            s->deleter(s->data, s->deleter_ctx);
    }
    s->data = data;
    s->allocator = alloc;
    s->deleter = NULL;
    s->deleter_ctx = NULL;
}

void
ops_tensor_bump_version(ops_tensor *t)
{
    __atomic_add_fetch(&t->storage->version, 1, __ATOMIC_RELAXED);
}

/* ---- devices ---------------------------------------------------------------- */

/* Kept out of line so the all-cpu path of ops_check_same_device stays small. */
static ops_status __attribute__((noinline))
device_mismatch(const char *op, int first, int i, const ops_tensor *const *ts, const char *const *names)
{
    const ops_device a = ts[first]->storage->device, b = ts[i]->storage->device;
    char da[32], db[32], na[32], nb[32];
    snprintf(na, sizeof na, "argument %d", first);
    snprintf(nb, sizeof nb, "argument %d", i);
    const char *name_a = names && names[first] ? names[first] : na;
    const char *name_b = names && names[i] ? names[i] : nb;
    return ops_fail(
        OPS_ERR_DEVICE, "%s: expected all tensors to be on the same device, but found %s on %s and %s on %s",
        ops_op_name(op), name_a, ops_device_str(a, da, sizeof da), name_b, ops_device_str(b, db, sizeof db));
}

ops_status
ops_check_same_device(const char *op, int n, const ops_tensor *const *ts, const char *const *names,
                      ops_device *device)
{
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (ts[i] == NULL)
            continue;
        if (first < 0) {
            first = i;
            continue;
        }
        const ops_device a = ts[first]->storage->device, b = ts[i]->storage->device;
        /* The rule of ops_device_equal, inline for the common all-cpu call. */
        if (a.type != b.type || (a.type != OPS_CPU && a.index != b.index))
            return device_mismatch(op, first, i, ts, names);
    }
    if (device)
        *device = first >= 0 ? ts[first]->storage->device : OPS_DEVICE_UNSPECIFIED;
    return OPS_OK;
}

/* ---- threads ---------------------------------------------------------------- */

static int g_num_threads;     /* 0: the default; atomic */
static int g_default_threads; /* OpenMP's default, captured once; atomic */

static int
default_threads(void)
{
    int n = __atomic_load_n(&g_default_threads, __ATOMIC_RELAXED);
    if (n <= 0) {
        n = omp_get_max_threads();
        if (n <= 0)
            n = 1;
        __atomic_store_n(&g_default_threads, n, __ATOMIC_RELAXED);
    }
    return n;
}

void
ops_set_num_threads(int n)
{
    default_threads(); /* capture OpenMP's default before we change it */
    __atomic_store_n(&g_num_threads, n > 0 ? n : 0, __ATOMIC_RELAXED);
    /* Loops pass ops_get_num_threads() to their parallel regions; this also covers
     * a plain `omp parallel` started from the calling thread. */
    omp_set_num_threads(n > 0 ? n : default_threads());
    /* OpenBLAS runs its own thread pool (kernels/cpu/linalg.c): the same count, so
     * the two never oversubscribe the machine. */
    openblas_set_num_threads(n > 0 ? n : default_threads());
}

int
ops_get_num_threads(void)
{
    const int n = __atomic_load_n(&g_num_threads, __ATOMIC_RELAXED);
    return n > 0 ? n : default_threads();
}

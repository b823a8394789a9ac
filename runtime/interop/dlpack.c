/* DLPack export and import (ops_tensor_to_dlpack, ops_tensor_from_dlpack and
 * their versioned forms), over Debian's <dlpack/dlpack.h>.
 *
 * Export hands out one block holding the DLManagedTensor, its shape and strides
 * and a reference to the tensor, and marks the storage exported: the deleter
 * ends the export, drops the reference and frees the block, so the consumer
 * keeps the bytes alive, and in place, for as long as it needs them.
 * Import wraps the producer's bytes with from_blob, the storage's deleter being
 * the producer's: it runs once, when the last view of the storage goes.  The
 * versioned struct (DLPack >= 1.0) is compiled only when the header has it. */
#include <dlpack/dlpack.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "ops_interop.h"
#include "ops_internal.h"

/* DLPack 0.6 (Debian's header) has no bool code; 0.8 added kDLBool = 6, which
 * PyTorch 2 and NumPy 1.25 write, so bool goes out and comes in under that code
 * whichever header libops was built with. */
#if defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
#define OPS_DL_BOOL ((uint8_t)kDLBool)
#else
#define OPS_DL_BOOL ((uint8_t)6)
#endif

#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
#define OPS_DL_VERSIONED 1
#endif

/* ---- dtype and device mapping ------------------------------------------- */

static bool
dl_dtype_of(ops_dtype dt, DLDataType *out)
{
    uint8_t code;
    switch (dt) {
    case OPS_BOOL:
        code = OPS_DL_BOOL;
        break;
    case OPS_UINT8:
        code = kDLUInt;
        break;
    case OPS_INT8:
    case OPS_INT16:
    case OPS_INT32:
    case OPS_INT64:
        code = kDLInt;
        break;
    case OPS_FLOAT16:
    case OPS_FLOAT32:
    case OPS_FLOAT64:
        code = kDLFloat;
        break;
    case OPS_BFLOAT16:
        code = kDLBfloat;
        break;
    default:
        return false;
    }
    out->code = code;
    out->bits = (uint8_t)(ops_dtype_itemsize(dt) * 8);
    out->lanes = 1;
    return true;
}

/* OPS_DTYPE_NONE for a (code, bits) pair libops has no dtype for. */
static ops_dtype
ops_dtype_of_dl(DLDataType d)
{
    if (d.code == OPS_DL_BOOL)
        return d.bits == 8 ? OPS_BOOL : OPS_DTYPE_NONE;
    switch (d.code) {
    case kDLUInt:
        return d.bits == 8 ? OPS_UINT8 : OPS_DTYPE_NONE;
    case kDLInt:
        switch (d.bits) {
        case 8:
            return OPS_INT8;
        case 16:
            return OPS_INT16;
        case 32:
            return OPS_INT32;
        case 64:
            return OPS_INT64;
        default:
            return OPS_DTYPE_NONE;
        }
    case kDLFloat:
        switch (d.bits) {
        case 16:
            return OPS_FLOAT16;
        case 32:
            return OPS_FLOAT32;
        case 64:
            return OPS_FLOAT64;
        default:
            return OPS_DTYPE_NONE;
        }
    case kDLBfloat:
        return d.bits == 16 ? OPS_BFLOAT16 : OPS_DTYPE_NONE;
    default:
        return OPS_DTYPE_NONE;
    }
}

static const char *
dl_code_name(uint8_t code)
{
    if (code == OPS_DL_BOOL)
        return "kDLBool";
    switch (code) {
    case kDLInt:
        return "kDLInt";
    case kDLUInt:
        return "kDLUInt";
    case kDLFloat:
        return "kDLFloat";
    case kDLOpaqueHandle:
        return "kDLOpaqueHandle";
    case kDLBfloat:
        return "kDLBfloat";
    case kDLComplex:
        return "kDLComplex";
    default:
        return "unknown";
    }
}

ops_status
ops_tensor_dlpack_device(const ops_tensor *t, int32_t *device_type, int32_t *device_id)
{
    if (t == NULL)
        return ops_fail(OPS_ERR_VALUE, "dlpack_device: expected a tensor, got NULL");
    const ops_device d = t->storage->device;
    if (device_type)
        *device_type = d.type == OPS_CUDA ? kDLCUDA : kDLCPU;
    if (device_id)
        *device_id = d.type == OPS_CUDA ? d.index : 0;
    return OPS_OK;
}

/* ---- export ------------------------------------------------------------- */

/* Whether t can go out as DLPack (sets the error if not); checked before any
 * allocation so a failure leaves nothing to undo. */
static ops_status
check_exportable(const char *op, const ops_tensor *t)
{
    if (t == NULL)
        return ops_fail(OPS_ERR_VALUE, "%s: expected a tensor, got NULL", op);
    DLDataType dt;
    if (!dl_dtype_of(t->dtype, &dt))
        return ops_fail(OPS_ERR_DTYPE, "%s: dtype %s has no DLPack equivalent", op, ops_dtype_name(t->dtype));
    const ops_device d = t->storage->device;
    if (d.type != OPS_CPU && d.type != OPS_CUDA) {
        char dev[32];
        return ops_fail(OPS_ERR_DEVICE, "%s: device %s has no DLPack equivalent", op,
                        ops_device_str(d, dev, sizeof dev));
    }
    return OPS_OK;
}

/* Fills dl for t; shape and strides point at ndim slots the caller owns. */
static void
fill_dltensor(const ops_tensor *t, DLTensor *dl, int64_t *shape, int64_t *strides)
{
    int32_t type, id;
    ops_tensor_dlpack_device(t, &type, &id);
    dl->data = ops_tensor_data_ptr(t);
    dl->device.device_type = (DLDeviceType)type;
    dl->device.device_id = id;
    dl->ndim = t->ndim;
    dl_dtype_of(t->dtype, &dl->dtype);
    for (int i = 0; i < t->ndim; i++) {
        shape[i] = t->sizes[i];
        strides[i] = t->strides[i];
    }
    dl->shape = shape;
    dl->strides = strides;
    dl->byte_offset = 0;
}

/* The block behind an exported DLManagedTensor: the struct comes first, so the
 * deleter's self pointer is the block. */
typedef struct export_block {
    DLManagedTensor managed;
    ops_tensor *tensor; /* the reference that keeps the bytes alive */
    int64_t shape[OPS_MAX_DIMS];
    int64_t strides[OPS_MAX_DIMS];
} export_block;

static void
export_deleter(DLManagedTensor *self)
{
    if (self == NULL)
        return;
    export_block *b = (export_block *)self;
    ops_storage_export_end(b->tensor->storage);
    ops_tensor_release(b->tensor);
    ops_host_free(b);
}

DLManagedTensor *
ops_tensor_to_dlpack(const ops_tensor *t)
{
    const char *op = "to_dlpack";
    if (check_exportable(op, t) != OPS_OK)
        return NULL;
    export_block *b = ops_host_malloc(sizeof *b);
    if (b == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a DLManagedTensor", op);
    memset(b, 0, sizeof *b);
    fill_dltensor(t, &b->managed.dl_tensor, b->shape, b->strides);
    /* Retaining t itself (not a new view) costs no allocation; the geometry
     * handed out was copied above, so later views of t do not matter. */
    b->tensor = ops_tensor_retain(t);
    /* The consumer holds the address until it calls the deleter: the storage
     * must not move before (ops_tensor_resize_, share_memory_ refuse). */
    ops_storage_export_begin(t->storage);
    b->managed.manager_ctx = b;
    b->managed.deleter = export_deleter;
    return &b->managed;
}

/* ---- import ------------------------------------------------------------- */

/* Kernels read a bool as one byte that is 0 or 1 (sum adds the bytes, ~ flips
 * the low bit), so memory from elsewhere holding another byte would give
 * inconsistent answers.  Such a tensor is replaced by a copy of its storage with
 * every byte made 0 or 1 and the same view on it.  The whole storage span is
 * scanned: it is bounded by the memory the producer has, where the view may be
 * a huge broadcast.  CUDA storages are taken as they are. */
ops_tensor *
ops_tensor_normalize_bool_import(const char *op, ops_tensor *t)
{
    if (t == NULL || t->dtype != OPS_BOOL || t->storage->device.type != OPS_CPU)
        return t;
    const ops_storage *s = t->storage;
    const unsigned char *p = s->data;
    size_t bad = 0;
    while (bad < s->nbytes && p[bad] <= 1)
        bad++;
    if (bad == s->nbytes)
        return t;
    const unsigned bad_value = p[bad];
    const int64_t n = (int64_t)s->nbytes;
    ops_tensor *copy = ops_tensor_new(op, 1, &n, NULL, OPS_BOOL, OPS_DEVICE_CPU), *r = NULL;
    if (copy != NULL) {
        unsigned char *q = ops_tensor_data_ptr(copy);
        for (size_t i = 0; i < s->nbytes; i++)
            q[i] = p[i] != 0;
        r = ops_tensor_new_view(copy, t->ndim, t->sizes, t->strides, t->offset);
        ops_tensor_release(copy);
    }
    ops_tensor_release(t); /* the producer's memory is not used any more */
    if (r == NULL)
        return ops_fail_null(OPS_ERR_OOM,
                             "%s: out of memory copying a bool tensor of %" PRId64
                             " bytes to normalise it (byte %zu is %u, not 0 or 1)",
                             op, n, bad, bad_value);
    return r;
}

typedef void (*dl_release_fn)(void *m);

/* What import needs to release the producer's tensor, whichever struct it is. */
typedef struct import_owner {
    void *managed;
    dl_release_fn release;
} import_owner;

static void
release_legacy(void *m)
{
    DLManagedTensor *mt = m;
    if (mt->deleter)
        mt->deleter(mt);
}

/* from_blob's deleter: the producer's deleter, once.  The owner record is one
 * small allocation made before from_blob, so this cannot fail. */
static void
import_storage_deleter(void *data, void *ctx)
{
    (void)data;
    import_owner *o = ctx;
    o->release(o->managed);
    ops_host_free(o);
}

/* from_blob failed after every check passed: only its header allocation can
 * have; say so under this op's name. */
static void
blob_failed(const char *op)
{
    if (ops_last_status() == OPS_ERR_OOM)
        ops_fail(OPS_ERR_OOM, "%s: out of memory allocating a tensor header", op);
}

/* Build a tensor over dl's bytes.  On every failure the producer's deleter has
 * run (once) by the time this returns NULL. */
static ops_tensor *
import_dltensor(const char *op, const DLTensor *dl, void *managed, dl_release_fn release)
{
    char buf[OPS_SHAPE_STR_LEN], buf2[OPS_SHAPE_STR_LEN];
    ops_tensor *result = NULL, *base = NULL;
    import_owner *owner = NULL;

    const ops_dtype dtype = ops_dtype_of_dl(dl->dtype);
    if (dl->dtype.lanes != 1) {
        ops_fail(OPS_ERR_DTYPE, "%s: only lanes = 1 is supported, got a %s dtype with %u lanes", op,
                 dl_code_name(dl->dtype.code), (unsigned)dl->dtype.lanes);
        goto fail;
    }
    if (dtype == OPS_DTYPE_NONE) {
        ops_fail(OPS_ERR_DTYPE, "%s: unsupported DLPack dtype (code %u = %s, bits %u)", op,
                 (unsigned)dl->dtype.code, dl_code_name(dl->dtype.code), (unsigned)dl->dtype.bits);
        goto fail;
    }
    ops_device device;
    switch ((int)dl->device.device_type) {
    case kDLCPU:
        device = OPS_DEVICE_CPU;
        break;
    case kDLCUDA:
        device = OPS_DEVICE_CUDA(dl->device.device_id);
        break;
    default:
        ops_fail(OPS_ERR_DEVICE,
                 "%s: unsupported DLPack device type %d (libops takes kDLCPU = 1 and kDLCUDA = 2)", op,
                 (int)dl->device.device_type);
        goto fail;
    }
    /* A CUDA tensor in a CPU-only build, or a CUDA index with no device. */
    if (ops_device_allocator(op, device) == NULL)
        goto fail;
    if (dl->ndim < 0 || dl->ndim > OPS_MAX_DIMS) {
        ops_fail(OPS_ERR_VALUE, "%s: tensors have 0 to %d dimensions, got %d", op, OPS_MAX_DIMS, dl->ndim);
        goto fail;
    }
    const int ndim = dl->ndim;
    if (ndim > 0 && dl->shape == NULL) {
        ops_fail(OPS_ERR_VALUE, "%s: shape is NULL for a %d-dimensional tensor", op, ndim);
        goto fail;
    }
    const size_t item = ops_dtype_itemsize(dtype);
    if (dl->byte_offset % item != 0) {
        ops_fail(OPS_ERR_VALUE,
                 "%s: byte_offset %" PRIu64 " is not a multiple of the element size %zu of dtype %s", op,
                 dl->byte_offset, item, ops_dtype_name(dtype));
        goto fail;
    }
    /* No object is larger than PTRDIFF_MAX bytes, so an offset past it cannot
     * point into the producer's buffer (2**63, or 2**64 - 4 meaning -4). */
    if (dl->byte_offset > (uint64_t)PTRDIFF_MAX) {
        ops_fail(OPS_ERR_VALUE, "%s: byte_offset %" PRIu64 " is larger than any buffer (PTRDIFF_MAX is %td)", op,
                 dl->byte_offset, PTRDIFF_MAX);
        goto fail;
    }
    uintptr_t addr;
    if (__builtin_add_overflow((uintptr_t)dl->data, (uintptr_t)dl->byte_offset, &addr)) {
        ops_fail(OPS_ERR_VALUE, "%s: data %p + byte_offset %" PRIu64 " wraps around the address space", op,
                 dl->data, dl->byte_offset);
        goto fail;
    }
    if (addr % item != 0) {
        ops_fail(OPS_ERR_VALUE, "%s: data + byte_offset (%p) is not aligned to the element size %zu of dtype %s",
                 op, (void *)addr, item, ops_dtype_name(dtype));
        goto fail;
    }

    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        sizes[i] = dl->shape[i];
    if (dl->strides)
        memcpy(strides, dl->strides, (size_t)ndim * sizeof(int64_t));
    else
        ops_contiguous_strides(ndim, sizes, strides);

    /* Element offsets of the lowest and highest addressed elements, relative to
     * element [0, ...]; any overflow means the producer lied about the layout. */
    bool empty = false, overflow = false;
    int64_t lo = 0, hi = 0, numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            ops_fail(OPS_ERR_VALUE, "%s: negative size in shape %s", op, ops_shape_str(ndim, sizes, buf, sizeof buf));
            goto fail;
        }
        empty |= sizes[i] == 0;
        overflow |= __builtin_mul_overflow(numel, sizes[i], &numel);
    }
    if (!empty) {
        for (int i = 0; i < ndim; i++) {
            int64_t span;
            overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
            overflow |= __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
        }
    }
    int64_t extent = empty ? 0 : hi - lo + 1, span_bytes = 0;
    overflow |= __builtin_mul_overflow(extent, (int64_t)item, &span_bytes);
    if (overflow) {
        ops_fail(OPS_ERR_VALUE, "%s: shape %s with strides %s overflows the address space", op,
                 ops_shape_str(ndim, sizes, buf, sizeof buf), ops_shape_str(ndim, strides, buf2, sizeof buf2));
        goto fail;
    }
    if (dl->data == NULL && extent > 0) {
        ops_fail(OPS_ERR_VALUE, "%s: data is NULL for a tensor of %" PRId64 " bytes", op, span_bytes);
        goto fail;
    }
    /* The bytes addressed, [addr + lo * item, addr + (hi + 1) * item), must be
     * addresses (no wrap below 0 or past the top) and, counted from data, one
     * object of at most PTRDIFF_MAX bytes. */
    if (extent > 0) {
        const uint64_t below = (uint64_t)(-lo) * item, above = (uint64_t)(hi + 1) * item;
        uint64_t reach, end;
        if (below > addr || __builtin_add_overflow((uint64_t)addr, above, &end) || end > UINTPTR_MAX ||
            __builtin_add_overflow(dl->byte_offset, above, &reach) || reach > (uint64_t)PTRDIFF_MAX) {
            ops_fail(OPS_ERR_VALUE,
                     "%s: data %p + byte_offset %" PRIu64 " with shape %s and strides %s addresses bytes outside "
                     "the address space",
                     op, dl->data, dl->byte_offset, ops_shape_str(ndim, sizes, buf, sizeof buf),
                     ops_shape_str(ndim, strides, buf2, sizeof buf2));
            goto fail;
        }
    }

    owner = ops_host_malloc(sizeof *owner);
    if (owner == NULL) {
        ops_fail(OPS_ERR_OOM, "%s: out of memory allocating the owner record", op);
        goto fail;
    }
    owner->managed = managed;
    owner->release = release;
    char *first = (char *)addr + lo * (int64_t)item; /* lowest addressed byte */
    const int64_t elems = extent;
    bool negative = false;
    for (int i = 0; i < ndim; i++)
        negative |= strides[i] < 0;
    if (!negative) {
        /* from_blob takes the layout as it is: one header. */
        result = ops_tensor_from_blob(first, (ops_int_list){sizes, ndim}, (ops_int_list){strides, ndim}, dtype,
                                      device, import_storage_deleter, owner);
        if (result == NULL) {
            blob_failed(op);
            goto fail;
        }
        return ops_tensor_normalize_bool_import(op, result);
    }
    /* Negative strides: a 1-d tensor over the whole span, then the view. */
    base = ops_tensor_from_blob(first, (ops_int_list){&elems, 1}, (ops_int_list){NULL, 0}, dtype, device,
                                import_storage_deleter, owner);
    if (base == NULL) {
        blob_failed(op);
        goto fail;
    }
    owner = NULL; /* the storage owns it now */
    result = ops_tensor_new_view(base, ndim, sizes, strides, -lo);
    ops_tensor_release(base); /* the view holds the storage; on failure this runs the deleter */
    if (result == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a tensor header", op);
    return ops_tensor_normalize_bool_import(op, result);

fail:
    ops_host_free(owner);
    release(managed);
    return NULL;
}

ops_tensor *
ops_tensor_from_dlpack(DLManagedTensor *m)
{
    if (m == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "from_dlpack: expected a DLManagedTensor, got NULL");
    return import_dltensor("from_dlpack", &m->dl_tensor, m, release_legacy);
}

/* ---- the versioned struct (DLPack >= 1.0) ---------------------------------- */

#ifdef OPS_DL_VERSIONED

typedef struct export_block_versioned {
    DLManagedTensorVersioned managed;
    ops_tensor *tensor;
    int64_t shape[OPS_MAX_DIMS];
    int64_t strides[OPS_MAX_DIMS];
} export_block_versioned;

static void
export_deleter_versioned(DLManagedTensorVersioned *self)
{
    if (self == NULL)
        return;
    export_block_versioned *b = (export_block_versioned *)self;
    ops_storage_export_end(b->tensor->storage);
    ops_tensor_release(b->tensor);
    ops_host_free(b);
}

bool
ops_dlpack_has_versioned(void)
{
    return true;
}

DLManagedTensorVersioned *
ops_tensor_to_dlpack_versioned(const ops_tensor *t)
{
    const char *op = "to_dlpack_versioned";
    if (check_exportable(op, t) != OPS_OK)
        return NULL;
    export_block_versioned *b = ops_host_malloc(sizeof *b);
    if (b == NULL)
        return ops_fail_null(OPS_ERR_OOM, "%s: out of memory allocating a DLManagedTensorVersioned", op);
    memset(b, 0, sizeof *b);
    fill_dltensor(t, &b->managed.dl_tensor, b->shape, b->strides);
    b->tensor = ops_tensor_retain(t);
    ops_storage_export_begin(t->storage);
    b->managed.version.major = DLPACK_MAJOR_VERSION;
    b->managed.version.minor = DLPACK_MINOR_VERSION;
    b->managed.manager_ctx = b;
    b->managed.deleter = export_deleter_versioned;
    b->managed.flags = 0; /* writable, not a copy */
    return &b->managed;
}

static void
release_versioned(void *m)
{
    DLManagedTensorVersioned *mt = m;
    if (mt->deleter)
        mt->deleter(mt);
}

ops_tensor *
ops_tensor_from_dlpack_versioned(DLManagedTensorVersioned *m)
{
    const char *op = "from_dlpack_versioned";
    if (m == NULL)
        return ops_fail_null(OPS_ERR_VALUE, "%s: expected a DLManagedTensorVersioned, got NULL", op);
    if (m->version.major != DLPACK_MAJOR_VERSION) {
        ops_fail(OPS_ERR_VALUE, "%s: DLPack major version %u is not supported (libops reads %u)", op,
                 (unsigned)m->version.major, (unsigned)DLPACK_MAJOR_VERSION);
        release_versioned(m);
        return NULL;
    }
    if (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
        ops_fail(OPS_ERR_VALUE, "%s: the tensor is flagged read-only and libops tensors are writable", op);
        release_versioned(m);
        return NULL;
    }
    return import_dltensor(op, &m->dl_tensor, m, release_versioned);
}

#else /* !OPS_DL_VERSIONED */

bool
ops_dlpack_has_versioned(void)
{
    return false;
}

struct DLManagedTensorVersioned *
ops_tensor_to_dlpack_versioned(const ops_tensor *t)
{
    (void)t;
    return ops_fail_null(OPS_ERR_NOT_IMPLEMENTED,
                         "to_dlpack_versioned: libops was built against DLPack %d.%d, which has no "
                         "DLManagedTensorVersioned",
                         DLPACK_VERSION / 100, DLPACK_VERSION / 10 % 10);
}

ops_tensor *
ops_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned *m)
{
    /* The struct is unknown to this header, but its deleter is not: DLPack 1.0
     * lays out {version (2 x uint32), manager_ctx, deleter, ...}.  Reading it
     * would mean writing the struct by hand, so an owner that cannot be honoured
     * is refused before it is taken: the caller keeps m. */
    (void)m;
    return ops_fail_null(OPS_ERR_NOT_IMPLEMENTED,
                         "from_dlpack_versioned: libops was built against DLPack %d.%d, which has no "
                         "DLManagedTensorVersioned",
                         DLPACK_VERSION / 100, DLPACK_VERSION / 10 % 10);
}

#endif /* OPS_DL_VERSIONED */

/* libops internal header, for the runtime, kernel authors and generated code.
 *
 * The public headers keep ops_tensor and ops_storage opaque; this one shows their
 * layout and the helpers every op uses: error reporting, allocation of tensors,
 * views, dim wrapping, result-type computation. */
#ifndef OPS_INTERNAL_H
#define OPS_INTERNAL_H

#include <stdarg.h>
#include <string.h>

#include "ops_base.h"
#include "ops_checked.h"
#include "ops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define OPS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define OPS_LIKELY(x) __builtin_expect(!!(x), 1)
#define OPS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define OPS_INTERNAL __attribute__((visibility("hidden")))
#else
#define OPS_PRINTF(a, b)
#define OPS_LIKELY(x) (x)
#define OPS_UNLIKELY(x) (x)
#define OPS_INTERNAL
#endif

/* ---- data layout ----------------------------------------------------- */

enum {
    /* The storage header and its bytes live in the same block as the tensor that
     * created them (small tensors: one allocation instead of three). */
    OPS_STORAGE_EMBEDDED = 1u << 0,
    /* The bytes are a POSIX shared-memory segment (runtime/interop/shm.c): other
     * processes may map them, so the storage never moves (no resize_ growth). */
    OPS_STORAGE_SHARED = 1u << 1,
};

struct ops_storage {
    int64_t refcount; /* atomic (__atomic builtins) */
    void *data;
    size_t nbytes;
    ops_device device;
    const ops_allocator *allocator;      /* NULL when the bytes are borrowed (from_blob) */
    void (*deleter)(void *data, void *ctx); /* for borrowed bytes; may be NULL */
    void *deleter_ctx;
    uint64_t version; /* atomic; shared by every view of this storage */
    uint32_t flags;
    /* OPS_STORAGE_EMBEDDED: bytes of the whole block (headers and the bytes that
     * follow them), for the allocator's free when the storage dies. */
    size_t block_nbytes;
    /* atomic: live exports of the raw address (DLPack, the buffer protocol, NumPy);
     * while > 0 the bytes never move (ops_storage_export_begin). */
    int64_t exports;
};

enum {
    /* A 0-dim tensor made from a Python-style number: it promotes by category only. */
    OPS_TENSOR_WRAPPED_NUMBER = 1u << 0,
    /* The tensor header shares its allocation with its storage (OPS_STORAGE_EMBEDDED). */
    OPS_TENSOR_EMBEDDED = 1u << 1,
};

struct ops_tensor {
    int64_t refcount; /* atomic (__atomic builtins) */
    ops_storage *storage;
    int64_t offset; /* in elements */
    int32_t ndim;
    ops_dtype dtype;
    uint32_t flags;
    int64_t sizes[OPS_MAX_DIMS];
    int64_t strides[OPS_MAX_DIMS]; /* in elements; may be 0 or negative */
    void *autograd; /* autograd state (runtime/autograd/tensor_state.c); NULL when none */
};

/* ---- errors ---------------------------------------------------------- */

/* Record the thread's error and return st, so a failure is `return ops_fail(...)`.
 * Messages start with the op name: "add: the size of self (3) must match ...". */
OPS_API ops_status ops_fail(ops_status st, const char *fmt, ...) OPS_PRINTF(2, 3);
OPS_API ops_status ops_vfail(ops_status st, const char *fmt, va_list ap);
/* As ops_fail, for functions that return a pointer. */
OPS_API void *ops_fail_null(ops_status st, const char *fmt, ...) OPS_PRINTF(2, 3);
/* How many failures this thread has recorded: a callee failed (and left its message)
 * iff the count moved across the call.  Use this instead of ops_clear_error() before a
 * call, which would erase the caller's last error (ops_last_error's contract: only a
 * failure changes it). */
OPS_API uint64_t ops_error_serial(void);

/* "[2, 3]" into buf; returns buf.  For messages. */
OPS_API const char *ops_shape_str(int ndim, const int64_t *sizes, char *buf, size_t n);
#define OPS_SHAPE_STR_LEN (OPS_MAX_DIMS * 22 + 4)

/* ---- allocation helpers ------------------------------------------------- */

/* The fault-injection countdown of ops_alloc_fail_nth: true when the allocation
 * about to be made must fail.  Consumes one count; every allocator calls it. */
OPS_API bool ops_alloc_inject_failure(void);
/* malloc for runtime bookkeeping (headers, buffers) that honours ops_alloc_fail_nth.
 * NULL on failure, with no error set.  The block is free()-able. */
OPS_API void *ops_host_malloc(size_t nbytes);
/* realloc with the same fault injection; on failure p is left as it was. */
OPS_API void *ops_host_realloc(void *p, size_t nbytes);
/* ops_host_malloc of count elements of item bytes; NULL (no error set) when the
 * count is negative or the byte count does not fit (ops_nbytes_overflow).  The one
 * way to allocate an array whose length comes from a tensor's sizes or an argument. */
OPS_API void *ops_host_malloc_array(int64_t count, size_t item);
/* Frees what ops_host_malloc/ops_host_realloc returned; NULL is a no-op. */
OPS_API void ops_host_free(void *p);
/* A Tensor[] return of n NULL slots (len n), to fill with new references; the
 * array comes from ops_host_malloc.  OPS_ERR_OOM (message naming op) on failure. */
OPS_API ops_status ops_tensor_vec_init(const char *op, ops_tensor_vec *v, int64_t n);
/* Cap on the bytes the CPU allocator keeps cached (trims at once); < 0 restores the
 * default: env OPS_CPU_CACHE_MAX_BYTES (K/M/G suffixes allowed), else 2 GiB. */
OPS_API void ops_cpu_allocator_set_cache_max(int64_t bytes);

/* ---- dtypes ------------------------------------------------------------ */

/* ops_dtype_size for hot paths: inlined (a table lookup), 0 for an invalid dtype. */
static inline size_t
ops_dtype_itemsize(ops_dtype dt)
{
    switch (dt) {
#define OPS_X_(e, name, size) \
    case e:                   \
        return size;
        OPS_FOREACH_DTYPE(OPS_X_)
#undef OPS_X_
    default:
        return 0;
    }
}

/* ---- scalars ----------------------------------------------------------- */

/* Write s converted to dt at dst (ints wrap, floats saturate through int64 and NaN
 * becomes 0 when converted to an integer type, as ops_scalar_to_int64 does). */
OPS_API void ops_scalar_store(ops_scalar s, ops_dtype dt, void *dst);
/* Read one element of dtype dt at src as a scalar of its category. */
OPS_API ops_scalar ops_scalar_load(const void *src, ops_dtype dt);

/* ---- shapes ---------------------------------------------------------- */

OPS_API int64_t ops_shape_numel(int ndim, const int64_t *sizes);
OPS_API void ops_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
/* Wrap a possibly negative dim into [0, ndim) (ndim 0 accepts -1 and 0).  On failure
 * sets "op: Dimension out of range (expected to be in range of [-n, n-1], but got d)
 * for argument 'arg'" and returns false. */
OPS_API bool ops_wrap_dim(const char *op, const char *arg, int64_t *dim, int64_t ndim);
/* Broadcast two shapes (numpy rules).  On mismatch sets "op: the size of tensor a (3)
 * must match the size of tensor b (4) at non-singleton dimension 1" using the names. */
OPS_API ops_status ops_broadcast_shapes(const char *op, const char *name_a, int nda, const int64_t *a,
                                        const char *name_b, int ndb, const int64_t *b, int *nd_out,
                                        int64_t *out);

/* ---- tensor construction (runtime-level; ops call these) --------------- */

/* Allocator of a device, from its backend (kernels/device.h), or NULL with the error
 * set (e.g. CUDA in a CPU build, no such device). */
OPS_API const ops_allocator *ops_device_allocator(const char *op, ops_device device);
/* Dense strides for sizes in format f (contiguous_format, channels_last for ndim 4,
 * channels_last_3d for ndim 5).  A format the rank does not allow, or preserve_format
 * (which needs a tensor to copy the layout of), fails with "op: ..." naming both. */
OPS_API ops_status ops_memory_format_strides(const char *op, int ndim, const int64_t *sizes, ops_memory_format f,
                                             int64_t *strides);
/* Strides for a new dense tensor of like's sizes laid out as f says: preserve_format (or
 * NONE) keeps like's strides when like is dense and non-overlapping, else its dims'
 * memory order (PyTorch's empty_like); other formats as ops_memory_format_strides. */
OPS_API ops_status ops_memory_format_strides_like(const char *op, const ops_tensor *like, ops_memory_format f,
                                                  int64_t *strides);
/* New uninitialised tensor with like's sizes on device, strides as
 * ops_memory_format_strides_like gives them. */
OPS_API ops_tensor *ops_tensor_new_like_format(const char *op, const ops_tensor *like, ops_dtype dtype,
                                               ops_device device, ops_memory_format f);
/* New tensor with fresh, uninitialised storage.  strides NULL means contiguous;
 * explicit strides get storage large enough for every addressed element. */
OPS_API ops_tensor *ops_tensor_new(const char *op, int ndim, const int64_t *sizes, const int64_t *strides,
                                   ops_dtype dtype, ops_device device);
/* Refuses a geometry whose element count (ops_numel_overflow) or extent does not fit
 * int64: the largest and smallest element offsets reached (offset plus the strides'
 * spans) and the byte offset of the last element.  Sets "op: ..." naming the sizes,
 * strides and offset.  Every tensor the runtime builds passes it. */
OPS_API ops_status ops_check_geometry(const char *op, int ndim, const int64_t *sizes, const int64_t *strides,
                                      int64_t offset, ops_dtype dtype);
/* New view of base's storage with the given geometry (no copy).  Checked by
 * ops_check_geometry (the error names op; "view" when op is NULL); not checked
 * against the storage's bounds, which is the caller's business. */
OPS_API ops_tensor *ops_tensor_new_view_op(const char *op, const ops_tensor *base, int ndim, const int64_t *sizes,
                                           const int64_t *strides, int64_t offset);
/* ops_tensor_new_view_op(NULL, ...). */
OPS_API ops_tensor *ops_tensor_new_view(const ops_tensor *base, int ndim, const int64_t *sizes,
                                        const int64_t *strides, int64_t offset);
/* A view header over base's storage on the caller's stack: never retained or
 * released, valid while base is.  For runtime helpers that do not retain their
 * operands (ops_copy_values) and for direct element access in kernels. */
static inline ops_tensor
ops_borrowed_view(const ops_tensor *base, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    ops_tensor v;
    memset(&v, 0, sizeof v);
    v.refcount = 1;
    v.storage = base->storage;
    v.offset = offset;
    v.ndim = ndim;
    v.dtype = base->dtype;
    memcpy(v.sizes, sizes, (size_t)ndim * sizeof(int64_t));
    memcpy(v.strides, strides, (size_t)ndim * sizeof(int64_t));
    return v;
}
/* Give t the new sizes with contiguous strides, reallocating its storage if it is
 * too small (out= tensors that were empty).  Reallocation frees the old bytes, so
 * it is refused (OPS_ERR_VALUE, t unchanged) when the storage is exported, shared
 * with another tensor (refcount > 1), in shared memory or borrowed. */
OPS_API ops_status ops_tensor_resize_(const char *op, ops_tensor *t, int ndim, const int64_t *sizes);
/* An exporter hands s's address to code that keeps it (a DLPack consumer, a
 * NumPy array, a memoryview): from begin to the matching end, every operation
 * that would move or free the bytes (resize_ growth, share_memory_) refuses.
 * The exporter keeps the storage alive itself (it holds a tensor of it); an
 * export that is never ended pins the bytes for the storage's lifetime. */
OPS_API void ops_storage_export_begin(ops_storage *s);
OPS_API void ops_storage_export_end(ops_storage *s);
OPS_API bool ops_storage_is_exported(const ops_storage *s);
/* Importers' bool check (DLPack, NumPy / buffer): t itself when t is not bool or
 * every byte of its (CPU) storage is 0 or 1; otherwise a copy of the storage
 * with each byte made 0 or 1 and t's view on it, t released.  Consumes t; NULL
 * (t released, error set) when the copy cannot be allocated. */
OPS_API ops_tensor *ops_tensor_normalize_bool_import(const char *op, ops_tensor *t);
/* Give s new bytes of the same size from alloc (e.g. share_memory_ moving them
 * into shared memory): the old bytes are freed as the storage's death would free
 * them, the deleter is dropped.  The caller has copied the values over. */
OPS_API void ops_storage_replace_data(ops_storage *s, void *data, const ops_allocator *alloc);
/* Mark an in-place write: bumps the version counter shared by every view. */
OPS_API void ops_tensor_bump_version(ops_tensor *t);
/* A 0-dim CPU tensor flagged as a wrapped number: bool, int64 or float64 from s. */
OPS_API ops_tensor *ops_wrap_scalar(ops_scalar s);
/* True when a and b may address a common byte (cheap conservative bounds test). */
OPS_API bool ops_tensor_may_overlap(const ops_tensor *a, const ops_tensor *b);
/* True when some element of t is addressed twice (a 0 stride over size > 1, ...). */
OPS_API bool ops_tensor_has_internal_overlap(const ops_tensor *t);

/* ---- type promotion -------------------------------------------------- */

/* The dtype a scalar has when wrapped: bool, int64 or float64. */
OPS_API ops_dtype ops_scalar_dtype(ops_scalar s);
/* PyTorch's result_type over tensors and scalars: dimensioned tensors first, then
 * 0-dim tensors, then wrapped numbers and scalars, each later group promoting only
 * when its category (bool < integral < floating) is higher.  NULL entries skipped. */
OPS_API ops_dtype ops_result_type(int ntensors, const ops_tensor *const *tensors, int nscalars,
                                  const ops_scalar *const *scalars);

/* ---- devices --------------------------------------------------------- */

/* All non-NULL tensors on one device; sets "op: expected all tensors to be on the
 * same device, but found self on cpu and other on cuda:0" otherwise. */
OPS_API ops_status ops_check_same_device(const char *op, int n, const ops_tensor *const *ts,
                                         const char *const *names, ops_device *device);

/* The device guard of the generated glue around a kernel shared by several devices:
 * enter makes device the current one (CUDA) and returns what exit restores (-1, and
 * no call at all, for the CPU).  runtime/device.c. */
OPS_INTERNAL int ops_device_guard_enter(ops_device device);
OPS_INTERNAL void ops_device_guard_exit(ops_device device, int prev);

/* ---- threads --------------------------------------------------------- */

/* Elements below which a loop runs on one thread. */
#define OPS_GRAIN_SIZE 32768

#ifdef __cplusplus
}
#endif
#endif /* OPS_INTERNAL_H */

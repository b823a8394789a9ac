/* libops public API: tensors, storage and allocators.
 *
 * Ownership: a function that returns ops_tensor * returns a new reference that the
 * caller releases with ops_tensor_release(); tensor arguments are borrowed.  Views
 * share storage and keep it alive.  Releasing NULL is a no-op.
 *
 * Every op on tensors (creation, views, arithmetic) is generated from
 * ops/native_functions.yaml and declared in ops_functions.h; this header holds the
 * hand-written runtime surface those ops stand on. */
#ifndef OPS_TENSOR_H
#define OPS_TENSOR_H

#include <stdio.h>

#include "ops_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- allocators ------------------------------------------------------ */

/* A device allocator.  alloc returns NULL on failure (never aborts); free gets the
 * size that was asked for. */
typedef struct ops_allocator {
    const char *name;
    void *(*alloc)(void *ctx, size_t nbytes);
    void (*free)(void *ctx, void *ptr, size_t nbytes);
    void *ctx;
} ops_allocator;

/* Process-wide CPU allocator: 64-byte aligned, keeps freed large blocks for reuse. */
OPS_API const ops_allocator *ops_cpu_allocator(void);

typedef struct ops_alloc_stats {
    int64_t allocated_bytes; /* live bytes handed out */
    int64_t cached_bytes;    /* freed bytes kept for reuse */
    int64_t num_allocs;      /* calls to alloc */
    int64_t num_cache_hits;  /* allocs served from the cache */
} ops_alloc_stats;

OPS_API void ops_cpu_allocator_stats(ops_alloc_stats *stats);
/* Return every cached block to the system. */
OPS_API void ops_cpu_allocator_empty_cache(void);

/* Test hook (fault injection): the n-th allocation made through libops on this
 * thread from now on fails (n >= 1); n = 0 disables.  Every op must turn such a
 * failure into a clean OPS_ERR_OOM. */
OPS_API void ops_alloc_fail_nth(int64_t n);

/* ---- tensors --------------------------------------------------------- */

typedef struct ops_storage ops_storage;

/* New reference to t (t itself); NULL stays NULL. */
OPS_API ops_tensor *ops_tensor_retain(const ops_tensor *t);
/* Drop a reference; frees the tensor (and its storage, when unshared) at zero. */
OPS_API void ops_tensor_release(ops_tensor *t);
/* Releases every tensor of a returned Tensor[] and frees its array; leaves {NULL, 0}.
 * NULL and an empty vector are fine. */
OPS_API void ops_tensor_vec_release(ops_tensor_vec *v);

OPS_API int64_t ops_tensor_ndim(const ops_tensor *t);
/* Size of dim (negative counts from the end); -1 with the error set if out of range. */
OPS_API int64_t ops_tensor_size(const ops_tensor *t, int64_t dim);
OPS_API const int64_t *ops_tensor_sizes(const ops_tensor *t);   /* ndim entries */
OPS_API const int64_t *ops_tensor_strides(const ops_tensor *t); /* in elements */
OPS_API int64_t ops_tensor_numel(const ops_tensor *t);
OPS_API int64_t ops_tensor_storage_offset(const ops_tensor *t); /* in elements */
OPS_API ops_dtype ops_tensor_dtype(const ops_tensor *t);
OPS_API ops_device ops_tensor_device(const ops_tensor *t);
OPS_API size_t ops_tensor_itemsize(const ops_tensor *t);
/* Address of element [0, 0, ...]: storage data + storage offset. */
OPS_API void *ops_tensor_data_ptr(const ops_tensor *t);
/* Counter bumped by every in-place write through this tensor or any view of it. */
OPS_API uint64_t ops_tensor_version(const ops_tensor *t);
/* True when the strides are the row-major ones for the sizes (size-1 dims ignored). */
OPS_API bool ops_tensor_is_contiguous(const ops_tensor *t);
/* PyTorch's is_contiguous(memory_format=): for contiguous_format (and preserve_format)
 * as ops_tensor_is_contiguous; for channels_last (4-d) / channels_last_3d (5-d) whether
 * the strides are the NHWC / NDHWC ones (size-1 dims ignored); false at any other rank. */
OPS_API bool ops_tensor_is_contiguous_as(const ops_tensor *t, ops_memory_format f);
/* PyTorch's suggest_memory_format(): channels_last (channels_last_3d) when t's strides
 * order a 4-d (5-d) tensor's dims as NHWC (NDHWC), else contiguous_format. */
OPS_API ops_memory_format ops_tensor_suggest_memory_format(const ops_tensor *t);
/* True when a and b are views of the same storage. */
OPS_API bool ops_tensor_shares_storage(const ops_tensor *a, const ops_tensor *b);
OPS_API size_t ops_tensor_storage_nbytes(const ops_tensor *t);

/* Wrap caller memory without copying (borrow).  strides.len == 0 means contiguous.
 * deleter(data, ctx) runs when the last view of the storage goes; it may be NULL. */
OPS_API ops_tensor *ops_tensor_from_blob(void *data, ops_int_list sizes, ops_int_list strides,
                                         ops_dtype dtype, ops_device device,
                                         void (*deleter)(void *data, void *ctx), void *ctx);
/* A contiguous copy of a cpu tensor in pinned (page-locked) host memory, which
 * copies to and from CUDA devices may use asynchronously (copy_ with non_blocking);
 * t itself when it is pinned already.  OPS_ERR_DEVICE without the CUDA backend or a
 * device, and for a tensor that is not on the cpu. */
OPS_API ops_tensor *ops_tensor_pin_memory(const ops_tensor *t);
/* True when t's storage is pinned host memory (ops_tensor_pin_memory). */
OPS_API bool ops_tensor_is_pinned(const ops_tensor *t);
/* New contiguous CPU tensor holding a copy of data (numel * itemsize bytes, row-major). */
OPS_API ops_tensor *ops_tensor_from_data(const void *data, ops_int_list sizes, ops_dtype dtype);
/* New 0-dim tensor holding s; OPS_DTYPE_NONE picks bool, int64 or float32 from s. */
OPS_API ops_tensor *ops_scalar_tensor(ops_scalar s, ops_dtype dtype);
/* The value of a one-element tensor as a scalar of its category. */
OPS_API ops_status ops_tensor_item(const ops_tensor *t, ops_scalar *out);

/* Torch-like text: "tensor([[1., 2.],\n        [3., 4.]], dtype=float32, shape=[2, 2])".
 * Returns a malloc'd string the caller frees with free(); NULL on error. */
OPS_API char *ops_tensor_to_string(const ops_tensor *t);
/* Prints ops_tensor_to_string(t) and a newline to f. */
OPS_API ops_status ops_tensor_print(const ops_tensor *t, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* OPS_TENSOR_H */

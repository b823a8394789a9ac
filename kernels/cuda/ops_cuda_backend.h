/* Internal to the CUDA backend: the copies behind its loops of the stubs copy_values
 * and copy_read_bytes (kernels/copy.h), and the allocator and TF32 hooks of its device
 * table (kernels/device.h, filled in cuda_device.cu), declared in C.  The runtime
 * reaches them only through those stubs, never by name. */
#ifndef OPS_CUDA_BACKEND_H
#define OPS_CUDA_BACKEND_H

#include "ops_cuda.h"
#include "ops_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[...] = src[...] converted to dst's dtype, src broadcast to dst's shape, both
 * on the same CUDA device, any strides; dst must not partially overlap src.  Does
 * not bump versions.  kernels/cuda/copy.cu. */
ops_status ops_cuda_copy_same_device(const char *op, ops_tensor *dst, const ops_tensor *src);

/* The same where dst and src are on different devices (at least one CUDA):
 * host<->device and device<->device, any dtypes and strides (staged through a
 * contiguous buffer when needed).  non_blocking may return before the copy ends
 * only where that is safe (pinned host memory).  kernels/cuda/transfer.cu. */
ops_status ops_cuda_copy_across(const char *op, ops_tensor *dst, const ops_tensor *src, bool non_blocking);

/* The caching allocators (kernels/cuda/cuda_alloc.cu): cuda:index's (NULL with the
 * error set when there is no such device) and the page-locked host one, with their
 * statistics and cache control, behind ops_cuda_memory_stats and the like. */
const ops_allocator *cuda_alloc_device_allocator(const char *op, int index);
const ops_allocator *cuda_alloc_pinned_allocator(void);
ops_status cuda_alloc_memory_stats(int index, ops_memory_stats *out);
ops_status cuda_alloc_empty_cache(int index);
ops_status cuda_alloc_reset_peak_memory_stats(int index);
ops_status cuda_alloc_pinned_memory_stats(ops_memory_stats *out);
ops_status cuda_alloc_pinned_empty_cache(void);

/* cuBLAS's TF32 switch for float32 products (kernels/cuda/linalg.cu). */
ops_status linalg_cuda_set_allow_tf32(bool allow);
bool linalg_cuda_allow_tf32(void);

#ifdef __cplusplus
}
#endif

#endif /* OPS_CUDA_BACKEND_H */

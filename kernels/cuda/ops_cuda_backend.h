/* Internal to the CUDA backend: the copies behind its loops of the stubs copy_values
 * and copy_read_bytes (kernels/copy.h), declared in C.  The runtime reaches them only
 * through those stubs, never by name. */
#ifndef OPS_CUDA_BACKEND_H
#define OPS_CUDA_BACKEND_H

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

#ifdef __cplusplus
}
#endif

#endif /* OPS_CUDA_BACKEND_H */

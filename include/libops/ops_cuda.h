/* The CUDA backend's runtime API: devices, their properties, and the caching device
 * and pinned host allocators' statistics and cache control.
 *
 * Every function exists in every build.  A CPU-only build, or a machine without a
 * usable device, answers with OPS_ERR_DEVICE and a message ("no CUDA device", "built
 * without CUDA support"), never an abort.  CUDA errors become OPS_ERR_RUNTIME with
 * cudaGetErrorString's text in the message. */
#ifndef OPS_CUDA_H
#define OPS_CUDA_H

#include <stdint.h>

#include "ops_base.h"
#include "ops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What cudaGetDeviceProperties reports that kernels and users need. */
typedef struct ops_cuda_device_properties {
    char name[256];
    int major, minor; /* compute capability */
    int multiprocessor_count;
    int max_threads_per_block;
    int max_threads_per_multiprocessor;
    int warp_size;
    int64_t max_grid_x; /* largest gridDim.x */
    int64_t total_memory;    /* bytes of device memory */
    int64_t shared_memory_per_block;
    int64_t l2_cache_size;
    int memory_bus_width; /* bits */
} ops_cuda_device_properties;

/* Statistics of a caching allocator, in bytes of blocks (sizes rounded as the cache
 * rounds them) unless noted. */
typedef struct ops_memory_stats {
    int64_t allocated_bytes;      /* in live blocks */
    int64_t requested_bytes;      /* asked for by the live allocations (unrounded) */
    int64_t reserved_bytes;       /* in segments held from the device (or host) */
    int64_t peak_allocated_bytes; /* since start or the last reset of the peaks */
    int64_t peak_reserved_bytes;
    int64_t num_allocs;     /* successful allocations */
    int64_t num_frees;
    int64_t num_cache_hits; /* allocations served without a new segment */
    int64_t num_segments;   /* segments held now */
    int64_t num_reserves;   /* segments ever reserved (cudaMalloc / cudaHostAlloc calls) */
    int64_t num_releases;   /* segments given back */
    int64_t num_splits;
    int64_t num_merges;
    int64_t num_ooms;        /* allocations that failed for lack of memory */
    int64_t num_free_blocks; /* cached blocks now */
} ops_memory_stats;

/* Properties of cuda:index into *out; OPS_ERR_DEVICE when there is no such device. */
OPS_API ops_status ops_cuda_get_device_properties(int index, ops_cuda_device_properties *out);
/* Statistics of cuda:index's caching allocator (zeros before its first use). */
OPS_API ops_status ops_cuda_memory_stats(int index, ops_memory_stats *out);
/* Give cuda:index's cached, unused segments back to the driver. */
OPS_API ops_status ops_cuda_empty_cache(int index);
/* Peak statistics of cuda:index restart from the current values. */
OPS_API ops_status ops_cuda_reset_peak_memory_stats(int index);
/* The caching allocator of page-locked host memory (cudaHostAlloc), or NULL with
 * the error set when there is no device. */
OPS_API const ops_allocator *ops_cuda_pinned_allocator(void);
OPS_API ops_status ops_cuda_pinned_memory_stats(ops_memory_stats *out);
OPS_API ops_status ops_cuda_pinned_empty_cache(void);

/* ---- TF32 for float32 matrix products ---------------------------
 * Whether cuBLAS may run float32 mm/bmm/matmul/linear/conv (and their add* forms) on
 * TF32 tensor cores: inputs rounded to a 10-bit mantissa, float accumulation, several
 * times faster on Ampere and later, about 1e-3 relative error.  Off by default (as
 * PyTorch's torch.backends.cuda.matmul.allow_tf32); process-wide; float16, bfloat16
 * and float64 are not affected.  A build without CUDA refuses the setter with
 * OPS_ERR_DEVICE and reports false. */
OPS_API ops_status ops_cuda_set_allow_tf32(bool allow);
OPS_API bool ops_cuda_allow_tf32(void);
/* ---- */

#ifdef __cplusplus
}
#endif

#endif /* OPS_CUDA_H */

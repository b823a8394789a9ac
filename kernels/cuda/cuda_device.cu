// CUDA device discovery and properties, the backend's device table (kernels/device.h:
// what the runtime asks of CUDA beyond its loops), and the conversion of CUDA and
// cuBLAS errors into libops errors (C linkage at the boundary).  A machine without a
// device, or without a driver, is "no CUDA device", never an abort.
#include <stdio.h>

#include "cuda_common.h"
#include "kernels/device.h"
#include "ops_cuda_backend.h"

ops_status
ops_cuda_fail(const char *op, const char *what, cudaError_t err)
{
    (void)cudaGetLastError();
    return ops_fail(OPS_ERR_RUNTIME, "%s: %s failed: %s (%s)", op ? op : "cuda", what, cudaGetErrorString(err),
                    cudaGetErrorName(err));
}

ops_status
ops_cublas_fail(const char *op, const char *what, cublasStatus_t st)
{
    return ops_fail(OPS_ERR_RUNTIME, "%s: %s failed: %s (%s)", op ? op : "cublas", what, cublasGetStatusString(st),
                    cublasGetStatusName(st));
}

void
ops_cuda_error_msg(char *msg, size_t len, const char *what, cudaError_t err)
{
    snprintf(msg, len, "%s failed: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
    (void)cudaGetLastError();
}

static int
cuda_device_count(void)
{
    int n = 0;
    // No driver, no device, or a driver too old: all mean "no usable device".
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

/* runtime/core/device.c's device guard: index becomes the current device; returns the
 * device to restore, or -1 when it already was current (or cannot be changed: the
 * call that follows reports the device's error itself). */
static int
cuda_device_enter(int index)
{
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess || prev == index || cudaSetDevice(index) != cudaSuccess)
        prev = -1;
    (void)cudaGetLastError();
    return prev;
}

static void
cuda_device_exit(int prev)
{
    (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
}

ops_status
ops_cuda_check_device(const char *op, int index)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    op = op ? op : "cuda";
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return ops_fail(OPS_ERR_DEVICE, "%s: no CUDA device (cuda:%d requested; cudaGetDeviceCount: %s)", op, index,
                        cudaGetErrorString(err));
    }
    if (n == 0)
        return ops_fail(OPS_ERR_DEVICE, "%s: no CUDA device (cuda:%d requested)", op, index);
    if (index < 0 || index >= n || index >= OPS_CUDA_MAX_DEVICES)
        return ops_fail(OPS_ERR_DEVICE, "%s: CUDA device cuda:%d is not available (%d CUDA device%s found)", op, index,
                        n, n == 1 ? "" : "s");
    return OPS_OK;
}

static ops_status
cuda_get_device_properties(int index, ops_cuda_device_properties *out)
{
    const char *op = "cuda_get_device_properties";
    ops_status st = ops_cuda_check_device(op, index);
    if (st != OPS_OK)
        return st;
    cudaDeviceProp p;
    cudaError_t err = cudaGetDeviceProperties(&p, index);
    if (err != cudaSuccess)
        return ops_cuda_fail(op, "cudaGetDeviceProperties", err);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->major = p.major;
    out->minor = p.minor;
    out->multiprocessor_count = p.multiProcessorCount;
    out->max_threads_per_block = p.maxThreadsPerBlock;
    out->max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
    out->warp_size = p.warpSize;
    out->max_grid_x = p.maxGridSize[0];
    out->total_memory = (int64_t)p.totalGlobalMem;
    out->shared_memory_per_block = (int64_t)p.sharedMemPerBlock;
    out->l2_cache_size = p.l2CacheSize;
    out->memory_bus_width = p.memoryBusWidth;
    return OPS_OK;
}

// ---- the device table -----------------------------------------------------------
// Registered for the stub device_backend (kernels/device.h): the runtime's device
// count and guard, its CUDA allocator, pin_memory and the ops_cuda_* API of ops_cuda.h
// (runtime/core/device.c) reach the backend only through it.  Every hook is set.

static const ops_device_backend cuda_backend = {
    cuda_device_count,
    cuda_device_enter,
    cuda_device_exit,
    cuda_alloc_device_allocator,
    cuda_alloc_pinned_allocator,
    cuda_get_device_properties,
    cuda_alloc_memory_stats,
    cuda_alloc_empty_cache,
    cuda_alloc_reset_peak_memory_stats,
    cuda_alloc_pinned_memory_stats,
    cuda_alloc_pinned_empty_cache,
    linalg_cuda_set_allow_tf32,
    linalg_cuda_allow_tf32,
};

OPS_REGISTER_STUB(device_backend, CUDA, device_backend_cuda);

const ops_device_backend *
device_backend_cuda(void)
{
    return &cuda_backend;
}

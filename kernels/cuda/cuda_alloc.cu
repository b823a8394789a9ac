// Device memory for cuda:N tensors: a plain cudaMalloc/cudaFree allocator per device.
// (The caching, stream-ordered allocator is the CUDA issue's; this one is what the
// runtime's ops_device_allocator hands out until then.)  Failures are errors, never
// aborts: alloc returns NULL and the runtime reports out of memory.
#include <cuda_runtime.h>
#include <stdint.h>

#include "ops_internal.h"

#define OPS_CUDA_MAX_DEVICES 16

static void *
cuda_alloc(void *ctx, size_t nbytes)
{
    int dev = (int)(intptr_t)ctx, prev = 0;
    void *p = NULL;
    if (cudaGetDevice(&prev) != cudaSuccess || cudaSetDevice(dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    cudaError_t err = cudaMalloc(&p, nbytes ? nbytes : 1);
    (void)cudaSetDevice(prev);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

static void
cuda_free(void *ctx, void *ptr, size_t nbytes)
{
    (void)nbytes;
    int dev = (int)(intptr_t)ctx, prev = 0;
    if (!ptr)
        return;
    if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(dev) == cudaSuccess) {
        (void)cudaFree(ptr);
        (void)cudaSetDevice(prev);
    }
    (void)cudaGetLastError();
}

#define OPS_CUDA_ALLOCATOR_(i) {"cuda", cuda_alloc, cuda_free, (void *)(intptr_t)(i)}
static const ops_allocator cuda_allocators[OPS_CUDA_MAX_DEVICES] = {
    OPS_CUDA_ALLOCATOR_(0),  OPS_CUDA_ALLOCATOR_(1),  OPS_CUDA_ALLOCATOR_(2),  OPS_CUDA_ALLOCATOR_(3),
    OPS_CUDA_ALLOCATOR_(4),  OPS_CUDA_ALLOCATOR_(5),  OPS_CUDA_ALLOCATOR_(6),  OPS_CUDA_ALLOCATOR_(7),
    OPS_CUDA_ALLOCATOR_(8),  OPS_CUDA_ALLOCATOR_(9),  OPS_CUDA_ALLOCATOR_(10), OPS_CUDA_ALLOCATOR_(11),
    OPS_CUDA_ALLOCATOR_(12), OPS_CUDA_ALLOCATOR_(13), OPS_CUDA_ALLOCATOR_(14), OPS_CUDA_ALLOCATOR_(15),
};

extern "C" const ops_allocator *
ops_cuda_device_allocator(const char *op, int index)
{
    int n = ops_cuda_device_count();
    if (index < 0 || index >= n || index >= OPS_CUDA_MAX_DEVICES)
        return (const ops_allocator *)ops_fail_null(
            OPS_ERR_DEVICE, "%s: CUDA device cuda:%d is not available (%d CUDA device%s found)",
            op ? op : "ops", index, n, n == 1 ? "" : "s");
    return &cuda_allocators[index];
}

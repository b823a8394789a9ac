// Device memory for cuda:N tensors and page-locked host memory: the caching
// allocator of runtime/alloc/cuda_alloc_bins.c (bins, splitting, coalescing, stream-ordered
// reuse, empty_cache, statistics, free-the-cache-and-retry on out of memory) backed
// here by cudaMalloc/cudaFree, cudaHostAlloc/cudaFreeHost and CUDA events.  One
// cache per device, made on first use.  Failures are libops errors carrying CUDA's
// error string, never aborts.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda_common.h"
#include "ops_cache_alloc.h"
#include "ops_cuda_backend.h"

// ---- the backing: device memory -------------------------------------------------

static ops_cache_reserve_result
device_reserve(void *ctx, size_t nbytes, void **out, char *msg, size_t len)
{
    ops_cuda_device_guard guard((int)(intptr_t)ctx);
    cudaError_t err = cudaMalloc(out, nbytes);
    if (err == cudaSuccess)
        return OPS_CACHE_RESERVED;
    ops_cuda_error_msg(msg, len, "cudaMalloc", err);
    return err == cudaErrorMemoryAllocation ? OPS_CACHE_OUT_OF_MEMORY : OPS_CACHE_BACKING_ERROR;
}

static void
device_release(void *ctx, void *ptr, size_t nbytes)
{
    (void)nbytes;
    ops_cuda_device_guard guard((int)(intptr_t)ctx);
    (void)cudaFree(ptr);
    (void)cudaGetLastError();
}

static void *
device_event_record(void *ctx, void *stream, char *msg, size_t len)
{
    ops_cuda_device_guard guard((int)(intptr_t)ctx);
    cudaEvent_t ev = NULL;
    cudaError_t err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (err != cudaSuccess) {
        ops_cuda_error_msg(msg, len, "cudaEventCreateWithFlags", err);
        return NULL;
    }
    err = cudaEventRecord(ev, (cudaStream_t)stream);
    if (err != cudaSuccess) {
        ops_cuda_error_msg(msg, len, "cudaEventRecord", err);
        (void)cudaEventDestroy(ev);
        return NULL;
    }
    return ev;
}

static int
device_event_query(void *ctx, void *event, char *msg, size_t len)
{
    (void)ctx;
    cudaError_t err = cudaEventQuery((cudaEvent_t)event);
    if (err == cudaSuccess)
        return 1;
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return 0;
    }
    ops_cuda_error_msg(msg, len, "cudaEventQuery", err);
    return -1;
}

static void
device_event_destroy(void *ctx, void *event)
{
    (void)ctx;
    (void)cudaEventDestroy((cudaEvent_t)event);
    (void)cudaGetLastError();
}

static int
device_synchronize(void *ctx, char *msg, size_t len)
{
    ops_cuda_device_guard guard((int)(intptr_t)ctx);
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess)
        return 0;
    ops_cuda_error_msg(msg, len, "cudaDeviceSynchronize", err);
    return -1;
}

// ---- the backing: pinned host memory ----------------------------------------------

static ops_cache_reserve_result
pinned_reserve(void *ctx, size_t nbytes, void **out, char *msg, size_t len)
{
    (void)ctx;
    cudaError_t err = cudaHostAlloc(out, nbytes, cudaHostAllocDefault);
    if (err == cudaSuccess)
        return OPS_CACHE_RESERVED;
    ops_cuda_error_msg(msg, len, "cudaHostAlloc", err);
    return err == cudaErrorMemoryAllocation ? OPS_CACHE_OUT_OF_MEMORY : OPS_CACHE_BACKING_ERROR;
}

static void
pinned_release(void *ctx, void *ptr, size_t nbytes)
{
    (void)ctx;
    (void)nbytes;
    (void)cudaFreeHost(ptr);
    (void)cudaGetLastError();
}

// Copies from pinned memory may be in flight on any device.
static int
pinned_synchronize(void *ctx, char *msg, size_t len)
{
    (void)ctx;
    int n = ops_cuda_device_count();
    for (int i = 0; i < n && i < OPS_CUDA_MAX_DEVICES; i++) {
        ops_cuda_device_guard guard(i);
        cudaError_t err = cudaDeviceSynchronize();
        if (err != cudaSuccess) {
            ops_cuda_error_msg(msg, len, "cudaDeviceSynchronize", err);
            return -1;
        }
    }
    return 0;
}

// ---- one cache per device, made on first use --------------------------------------

static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static ops_cache *device_caches[OPS_CUDA_MAX_DEVICES];
static char device_names[OPS_CUDA_MAX_DEVICES][16];
static ops_cache *pinned_cache;

// The cache of cuda:index (checked to exist), or NULL with the error set.
static ops_cache *
device_cache(const char *op, int index)
{
    if (ops_cuda_check_device(op, index) != OPS_OK)
        return NULL;
    pthread_mutex_lock(&caches_lock);
    ops_cache *c = device_caches[index];
    if (c == NULL) {
        snprintf(device_names[index], sizeof device_names[index], "cuda:%d", index);
        ops_cache_backing b = {};
        b.name = device_names[index];
        b.ctx = (void *)(intptr_t)index;
        b.reserve = device_reserve;
        b.release = device_release;
        b.event_record = device_event_record;
        b.event_query = device_event_query;
        b.event_destroy = device_event_destroy;
        b.synchronize = device_synchronize;
        c = ops_cache_new(&b);
        // published for cuda_free, which reads it without the lock
        __atomic_store_n(&device_caches[index], c, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&caches_lock);
    return c;
}

static ops_cache *
host_pinned_cache(const char *op)
{
    if (ops_cuda_check_device(op, 0) != OPS_OK)
        return NULL;
    pthread_mutex_lock(&caches_lock);
    if (pinned_cache == NULL) {
        ops_cache_backing b = {};
        b.name = "cuda pinned host memory";
        b.reserve = pinned_reserve;
        b.release = pinned_release;
        b.synchronize = pinned_synchronize;
        __atomic_store_n(&pinned_cache, ops_cache_new(&b), __ATOMIC_RELEASE);
    }
    ops_cache *c = pinned_cache;
    pthread_mutex_unlock(&caches_lock);
    return c;
}

// ---- the runtime's allocators ------------------------------------------------------

// Work is ordered on each device's default stream (NULL) until streams arrive, so
// frees are immediately reusable there.
static void *
cuda_alloc(void *ctx, size_t nbytes)
{
    ops_cache *c = device_cache("cuda", (int)(intptr_t)ctx);
    return c ? ops_cache_malloc(c, "cuda", nbytes, NULL) : NULL;
}

static void
cuda_free(void *ctx, void *ptr, size_t nbytes)
{
    (void)nbytes;
    int index = (int)(intptr_t)ctx;
    ops_cache *c = index >= 0 && index < OPS_CUDA_MAX_DEVICES
                       ? __atomic_load_n(&device_caches[index], __ATOMIC_ACQUIRE)
                       : NULL;
    // a pointer this allocator handed out has a cache; anything else is ignored
    if (ptr && c)
        (void)ops_cache_free(c, "cuda", ptr, NULL);
}

static void *
pinned_alloc(void *ctx, size_t nbytes)
{
    (void)ctx;
    ops_cache *c = host_pinned_cache("cuda pinned");
    return c ? ops_cache_malloc(c, "cuda pinned", nbytes, NULL) : NULL;
}

static void
pinned_free(void *ctx, void *ptr, size_t nbytes)
{
    (void)ctx;
    (void)nbytes;
    ops_cache *c = __atomic_load_n(&pinned_cache, __ATOMIC_ACQUIRE);
    if (ptr && c)
        (void)ops_cache_free(c, "cuda pinned", ptr, NULL);
}

#define OPS_CUDA_ALLOCATOR_(i) {"cuda", cuda_alloc, cuda_free, (void *)(intptr_t)(i)}
static const ops_allocator cuda_allocators[OPS_CUDA_MAX_DEVICES] = {
    OPS_CUDA_ALLOCATOR_(0),  OPS_CUDA_ALLOCATOR_(1),  OPS_CUDA_ALLOCATOR_(2),  OPS_CUDA_ALLOCATOR_(3),
    OPS_CUDA_ALLOCATOR_(4),  OPS_CUDA_ALLOCATOR_(5),  OPS_CUDA_ALLOCATOR_(6),  OPS_CUDA_ALLOCATOR_(7),
    OPS_CUDA_ALLOCATOR_(8),  OPS_CUDA_ALLOCATOR_(9),  OPS_CUDA_ALLOCATOR_(10), OPS_CUDA_ALLOCATOR_(11),
    OPS_CUDA_ALLOCATOR_(12), OPS_CUDA_ALLOCATOR_(13), OPS_CUDA_ALLOCATOR_(14), OPS_CUDA_ALLOCATOR_(15),
};
static const ops_allocator cuda_pinned_allocator = {"cuda_pinned", pinned_alloc, pinned_free, NULL};

extern "C" const ops_allocator *
cuda_alloc_device_allocator(const char *op, int index)
{
    if (ops_cuda_check_device(op ? op : "ops", index) != OPS_OK)
        return NULL;
    return &cuda_allocators[index];
}

extern "C" const ops_allocator *
cuda_alloc_pinned_allocator(void)
{
    return host_pinned_cache("cuda_pinned_allocator") ? &cuda_pinned_allocator : NULL;
}

// ---- statistics and cache control (the public ops_cuda_* API of runtime/core/device.c
// reaches them through the backend table of cuda_device.cu) ------------------------------------------------

extern "C" ops_status
cuda_alloc_memory_stats(int index, ops_memory_stats *out)
{
    ops_cache *c = device_cache("cuda_memory_stats", index);
    if (c == NULL)
        return ops_last_status();
    ops_cache_get_stats(c, out);
    return OPS_OK;
}

extern "C" ops_status
cuda_alloc_empty_cache(int index)
{
    ops_cache *c = device_cache("cuda_empty_cache", index);
    return c ? ops_cache_empty(c, "cuda_empty_cache") : ops_last_status();
}

extern "C" ops_status
cuda_alloc_reset_peak_memory_stats(int index)
{
    ops_cache *c = device_cache("cuda_reset_peak_memory_stats", index);
    if (c == NULL)
        return ops_last_status();
    ops_cache_reset_peak(c);
    return OPS_OK;
}

extern "C" ops_status
cuda_alloc_pinned_memory_stats(ops_memory_stats *out)
{
    ops_cache *c = host_pinned_cache("cuda_pinned_memory_stats");
    if (c == NULL)
        return ops_last_status();
    ops_cache_get_stats(c, out);
    return OPS_OK;
}

extern "C" ops_status
cuda_alloc_pinned_empty_cache(void)
{
    ops_cache *c = host_pinned_cache("cuda_pinned_empty_cache");
    return c ? ops_cache_empty(c, "cuda_pinned_empty_cache") : ops_last_status();
}

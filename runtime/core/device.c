/* Device discovery.  The CPU build answers "no CUDA device" and defines the CUDA
 * runtime API of ops_cuda.h as clean OPS_ERR_DEVICE failures; a CUDA build asks the
 * driver through kernels/cuda/cuda_device.cu and kernels/cuda/cuda_alloc.cu. */
#include "ops_cuda.h"
#include "ops_internal.h"

#ifdef OPS_WITH_CUDA
int ops_cuda_backend_device_count(void); /* kernels/cuda/cuda_device.cu */
int ops_cuda_backend_device_enter(int index);
void ops_cuda_backend_device_exit(int prev);
#endif

/* The generated glue of a kernel shared by several devices (`CPU, CUDA: kernel`)
 * makes the op's device the current one around the call, as the CUDA-only kernels do
 * for themselves: a CUDA call then allocates, launches and synchronises on the
 * device of its tensors.  Nothing to do for the CPU (-1: nothing to restore). */
int
ops_device_guard_enter(ops_device device)
{
#ifdef OPS_WITH_CUDA
    if (device.type == OPS_CUDA)
        return ops_cuda_backend_device_enter(device.index);
#endif
    (void)device;
    return -1;
}

void
ops_device_guard_exit(ops_device device, int prev)
{
#ifdef OPS_WITH_CUDA
    if (device.type == OPS_CUDA && prev >= 0)
        ops_cuda_backend_device_exit(prev);
#endif
    (void)device, (void)prev;
}

int
ops_cuda_device_count(void)
{
#ifdef OPS_WITH_CUDA
    return ops_cuda_backend_device_count();
#else
    return 0;
#endif
}

#ifndef OPS_WITH_CUDA
static ops_status
no_cuda(const char *op)
{
    return ops_fail(OPS_ERR_DEVICE, "%s: libops was built without CUDA support (no CUDA device)", op);
}

ops_status
ops_cuda_get_device_properties(int index, ops_cuda_device_properties *out)
{
    (void)index;
    (void)out;
    return no_cuda("cuda_get_device_properties");
}

ops_status
ops_cuda_memory_stats(int index, ops_memory_stats *out)
{
    (void)index;
    (void)out;
    return no_cuda("cuda_memory_stats");
}

ops_status
ops_cuda_empty_cache(int index)
{
    (void)index;
    return no_cuda("cuda_empty_cache");
}

ops_status
ops_cuda_reset_peak_memory_stats(int index)
{
    (void)index;
    return no_cuda("cuda_reset_peak_memory_stats");
}

const ops_allocator *
ops_cuda_pinned_allocator(void)
{
    no_cuda("cuda_pinned_allocator");
    return NULL;
}

ops_status
ops_cuda_pinned_memory_stats(ops_memory_stats *out)
{
    (void)out;
    return no_cuda("cuda_pinned_memory_stats");
}

ops_status
ops_cuda_pinned_empty_cache(void)
{
    return no_cuda("cuda_pinned_empty_cache");
}

/* TF32 switch (the CUDA build's is in kernels/cuda/linalg.cu) */
ops_status
ops_cuda_set_allow_tf32(bool allow)
{
    (void)allow;
    return no_cuda("cuda_set_allow_tf32");
}

bool
ops_cuda_allow_tf32(void)
{
    return false;
}
#endif

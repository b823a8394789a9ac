/* Devices: discovery, the glue's device guard, and the CUDA runtime API of ops_cuda.h.
 * Each answer comes from the device type's backend table (kernels/device.h), which
 * the CUDA backend registers in a CUDA build (kernels/cuda/cuda_device.cu); without
 * it (a CPU build) there is "no CUDA device" and the API fails with OPS_ERR_DEVICE.
 * The file compiles the same in every build. */
#include "kernels/device.h"
#include "ops_cuda.h"
#include "ops_internal.h"

/* ---- the host's table -------------------------------------------------------------
 * One host, nothing to make current, the runtime's allocator (runtime/alloc/alloc.c);
 * the host needs no page-locked staging and has no device caches or TF32. */

static int
host_device_count(void)
{
    return 1;
}

static const ops_allocator *
host_allocator(const char *op, int index)
{
    (void)op, (void)index;
    return ops_cpu_allocator();
}

static const ops_device_backend host_backend = {
    .device_count = host_device_count,
    .allocator = host_allocator,
};

OPS_REGISTER_STUB(device_backend, CPU, device_backend_cpu);

const ops_device_backend *
device_backend_cpu(void)
{
    return &host_backend;
}

/* ---- the device guard -------------------------------------------------------------
 * The generated glue of a kernel shared by several devices (`CPU, CUDA: kernel`)
 * makes the op's device the current one around the call, as the CUDA-only kernels do
 * for themselves: a CUDA call then allocates, launches and synchronises on the
 * device of its tensors.  Nothing to do for the host (-1: nothing to restore). */
int
ops_device_guard_enter(ops_device device)
{
    if (device.type == OPS_CPU)
        return -1;
    const ops_device_backend *b = ops_device_backend_of(device.type);
    return b != NULL && b->device_enter != NULL ? b->device_enter(device.index) : -1;
}

void
ops_device_guard_exit(ops_device device, int prev)
{
    if (device.type == OPS_CPU || prev < 0)
        return;
    const ops_device_backend *b = ops_device_backend_of(device.type);
    if (b != NULL && b->device_exit != NULL)
        b->device_exit(prev);
}

/* ---- the CUDA runtime API (ops_cuda.h) --------------------------------------------- */

int
ops_cuda_device_count(void)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b != NULL && b->device_count != NULL ? b->device_count() : 0;
}

/* The answer of every call below in a build without the CUDA backend. */
static ops_status
no_cuda(const char *op)
{
    return ops_fail(OPS_ERR_DEVICE, "%s: libops was built without CUDA support (no CUDA device)", op);
}

ops_status
ops_cuda_get_device_properties(int index, ops_cuda_device_properties *out)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b ? b->get_device_properties(index, out) : no_cuda("cuda_get_device_properties");
}

ops_status
ops_cuda_memory_stats(int index, ops_memory_stats *out)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b ? b->memory_stats(index, out) : no_cuda("cuda_memory_stats");
}

ops_status
ops_cuda_empty_cache(int index)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b ? b->empty_cache(index) : no_cuda("cuda_empty_cache");
}

ops_status
ops_cuda_reset_peak_memory_stats(int index)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b ? b->reset_peak_memory_stats(index) : no_cuda("cuda_reset_peak_memory_stats");
}

const ops_allocator *
ops_cuda_pinned_allocator(void)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    if (b == NULL) {
        no_cuda("cuda_pinned_allocator");
        return NULL;
    }
    return b->pinned_allocator();
}

ops_status
ops_cuda_pinned_memory_stats(ops_memory_stats *out)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b ? b->pinned_memory_stats(out) : no_cuda("cuda_pinned_memory_stats");
}

ops_status
ops_cuda_pinned_empty_cache(void)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b ? b->pinned_empty_cache() : no_cuda("cuda_pinned_empty_cache");
}

/* TF32 for float32 products (the switch itself is kernels/cuda/linalg.cu's) */
ops_status
ops_cuda_set_allow_tf32(bool allow)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b ? b->set_allow_tf32(allow) : no_cuda("cuda_set_allow_tf32");
}

bool
ops_cuda_allow_tf32(void)
{
    const ops_device_backend *b = ops_device_backend_of(OPS_CUDA);
    return b != NULL && b->allow_tf32();
}

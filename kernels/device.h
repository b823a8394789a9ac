/* Internal: what the runtime asks of a device backend beyond its loops: how many
 * devices it has, making one current, its allocator, page-locked host memory for its
 * transfers, its caches' statistics and switches.  Each backend describes itself once
 * with a constant table of hooks and registers it for the stub device_backend, the
 * same way as a loop (docs/backends.md "The device itself"): the host's in
 * runtime/core/device.c, CUDA's in kernels/cuda/cuda_device.cu.  A device type whose
 * entry is NULL is a build without its backend, and the runtime (runtime/core/device.c,
 * tensor.c) answers for it with the errors of a CPU build; no runtime file says
 * #ifdef OPS_WITH_CUDA. */
#ifndef OPS_KERNELS_DEVICE_H
#define OPS_KERNELS_DEVICE_H

#include "ops_cuda.h"
#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A hook a backend does not have is NULL; the runtime then does what the host does
 * (no device to make current, -1) or fails as a build without that feature would. */
typedef struct ops_device_backend {
    /* devices of this type that can be used (0 without a driver or a device) */
    int (*device_count)(void);
    /* makes device index current; returns the device to restore, or -1 when there is
     * nothing to restore */
    int (*device_enter)(int index);
    void (*device_exit)(int prev);
    /* the allocator of device index, or NULL with the error set (no such device) */
    const ops_allocator *(*allocator)(const char *op, int index);
    /* page-locked host memory this device's transfers may read and write while the
     * host goes on (pin_memory), or NULL with the error set */
    const ops_allocator *(*pinned_allocator)(void);
    /* the public runtime API of ops_cuda.h, per device of the type */
    ops_status (*get_device_properties)(int index, ops_cuda_device_properties *out);
    ops_status (*memory_stats)(int index, ops_memory_stats *out);
    ops_status (*empty_cache)(int index);
    ops_status (*reset_peak_memory_stats)(int index);
    ops_status (*pinned_memory_stats)(ops_memory_stats *out);
    ops_status (*pinned_empty_cache)(void);
    ops_status (*set_allow_tf32)(bool allow);
    bool (*allow_tf32)(void);
} ops_device_backend;

/* The backend's table (static storage, never NULL). */
OPS_DECLARE_STUB(device_backend, const ops_device_backend *, (void));

/* The table of device type's backend, NULL when this build has none. */
static inline const ops_device_backend *
ops_device_backend_of(ops_device_type type)
{
    const ops_device d = {type, 0};
    device_backend_fn *const get = OPS_STUB_GET(device_backend, d);
    return get != NULL ? get() : NULL;
}

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_DEVICE_H */

/* Internal: the copies (copy_, to, cpu, clone, contiguous), one driver for every
 * device (kernels/copy.c: checks, the result's layout, when nothing needs copying)
 * over the stubs below, which move the values: the CPU's copy iterator in
 * kernels/cpu/copy.c, the CUDA copy kernels and transfers in kernels/cuda/copy.cu
 * and transfer.cu. */
#ifndef OPS_KERNELS_COPY_H
#define OPS_KERNELS_COPY_H

#include "ops_internal.h"
#include "ops_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* src's values (broadcast to dst's shape, converted to dst's dtype, any strides) into
 * dst, which must not partially overlap src; looked up for the device that is not
 * the host (the CPU when both tensors are on it), so a device's loop takes copies
 * within it and between it and the host or another device of its type.
 * non_blocking may return before a transfer ends only where that is safe (pinned
 * host memory).  Does not bump versions. */
OPS_DECLARE_STUB(copy_values, ops_status,
                 (const char *op, ops_tensor *dst, const ops_tensor *src, bool non_blocking));

/* n bytes at src, an address in device's memory, into host memory dst, after the work
 * queued on the device (item(), which reads one element).  The runtime calls both
 * stubs for tensors that are not on the host (ops_copy_values, ops_tensor_item); a
 * device type without a loop is a build without its backend. */
OPS_DECLARE_STUB(copy_read_bytes, ops_status,
                 (const char *op, ops_device device, void *dst, const void *src, size_t n));

#ifdef __cplusplus
}
#endif
#endif /* OPS_KERNELS_COPY_H */

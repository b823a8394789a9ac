/* The CPU loop of the copies (the drivers are kernels/copy.c, the stub
 * kernels/copy.h): every value goes through ops_convert_run() (runtime/core/convert.c),
 * the one routine that changes dtypes, driven by the copy iterator (src broadcast to
 * dst's shape, any strides, threads above the grain size). */
#include <string.h>

#include "kernels/copy.h"
#include "ops_iter.h"

OPS_REGISTER_STUB(copy_values, CPU, copy_values_cpu);

ops_status
copy_values_cpu(const char *op, ops_tensor *dst, const ops_tensor *src, bool non_blocking)
{
    (void)non_blocking; /* a host-to-host copy is synchronous */
    return ops_copy_values(op, dst, src);
}

OPS_REGISTER_STUB(copy_read_bytes, CPU, copy_read_bytes_cpu);

/* Host memory: nothing is queued, the bytes are there. */
ops_status
copy_read_bytes_cpu(const char *op, ops_device device, void *dst, const void *src, size_t n)
{
    (void)op;
    (void)device;
    if (n > 0)
        memcpy(dst, src, n);
    return OPS_OK;
}

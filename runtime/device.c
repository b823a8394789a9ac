/* Device discovery.  The CPU build answers "no CUDA device"; a CUDA build asks the
 * driver through kernels/cuda/cuda_device.cu. */
#include "ops_internal.h"

#ifdef OPS_WITH_CUDA
int ops_cuda_backend_device_count(void); /* kernels/cuda/cuda_device.cu */
#endif

int
ops_cuda_device_count(void)
{
#ifdef OPS_WITH_CUDA
    return ops_cuda_backend_device_count();
#else
    return 0;
#endif
}

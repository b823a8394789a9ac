// CUDA device discovery for the runtime (C linkage at the boundary).  The kernels of
// the CUDA backend arrive with the CUDA issue; this file proves the toolchain builds
// and links into libops, and lets a CPU machine report "no device" cleanly.
#include <cuda_runtime.h>

extern "C" int
ops_cuda_backend_device_count(void)
{
    int n = 0;
    // No driver, no device, or a driver too old: all mean "no usable device".
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

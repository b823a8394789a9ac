/* Shared by the emulator's own sources in kernels/cuda/emu, not by kernels. */
#ifndef OPS_CUDA_EMU_INTERNAL_H
#define OPS_CUDA_EMU_INTERNAL_H

#include <mutex>

#include "ops_cuda_emu.h"

namespace ops_emu {

/* One lock for the whole device: launches, copies, allocation and cuBLAS calls run
 * one at a time, which is what keeps device memory closed while host code runs. */
std::mutex &device_lock();

/* Opens every device's memory for reading and writing while alive (the lock must be
 * held): a kernel, a copy or a cuBLAS call may touch it, host code may not. */
struct memory_window {
    memory_window();
    ~memory_window();
    memory_window(const memory_window &) = delete;
    memory_window &operator=(const memory_window &) = delete;
};

/* Records err as the calling thread's last error (cudaGetLastError) and returns it. */
cudaError_t set_error(cudaError_t err);

/* Number of emulated devices (OPS_EMU_DEVICES, default 1) and the calling thread's
 * current one. */
int device_count();
int current_device();

/* Whether [p, p + bytes) lies inside one live device allocation; *device gets its
 * device.  bytes == 0 checks only that p is inside one. */
bool device_range(const void *p, size_t bytes, int *device);

} // namespace ops_emu

#endif /* OPS_CUDA_EMU_INTERNAL_H */

/* Shared by the CUDA backend's .cu files (C++ under nvcc, C linkage at the
 * boundary): CUDA and cuBLAS errors turned into libops errors, and the device
 * checks every entry point makes first. */
#ifndef OPS_CUDA_COMMON_H
#define OPS_CUDA_COMMON_H

#include "ops_cuda_rt.h"

#include "ops_cuda.h"
#include "ops_internal.h"

#define OPS_CUDA_MAX_DEVICES 16

/* OPS_ERR_RUNTIME "op: what failed: <cudaGetErrorString> (<cudaGetErrorName>)";
 * clears CUDA's sticky last error so the next call starts clean.  Returns the status
 * (for `return ops_cuda_fail(...)`). */
ops_status ops_cuda_fail(const char *op, const char *what, cudaError_t err);
/* The same for cuBLAS, with cublasGetStatusString's text. */
ops_status ops_cublas_fail(const char *op, const char *what, cublasStatus_t st);
/* Writes "what failed: <string> (<name>)" into msg (for the cache's backing). */
void ops_cuda_error_msg(char *msg, size_t len, const char *what, cudaError_t err);
/* OPS_OK when cuda:index exists, else OPS_ERR_DEVICE naming op: "no CUDA device
 * (<driver's reason>)" or "cuda:N is not available (M CUDA devices found)". */
ops_status ops_cuda_check_device(const char *op, int index);

/* Makes cuda:index current for its scope and restores the previous device. */
struct ops_cuda_device_guard {
    int prev;
    bool changed;
    explicit ops_cuda_device_guard(int index) : prev(0), changed(false)
    {
        if (cudaGetDevice(&prev) == cudaSuccess && prev != index)
            changed = cudaSetDevice(index) == cudaSuccess;
        (void)cudaGetLastError();
    }
    ~ops_cuda_device_guard()
    {
        if (changed)
            (void)cudaSetDevice(prev);
    }
    ops_cuda_device_guard(const ops_cuda_device_guard &) = delete;
    ops_cuda_device_guard &operator=(const ops_cuda_device_guard &) = delete;
};

/* The stream ops on cuda:index run on: the device's default (legacy) stream, for
 * now the only one (the caching allocator assumes it too). */
static inline cudaStream_t
ops_cuda_current_stream(int index)
{
    (void)index;
    return 0;
}

/* After a launch: OPS_ERR_RUNTIME naming op with CUDA's text when the launch failed
 * (bad configuration, too much shared memory, ...), else OPS_OK. */
static inline ops_status
ops_cuda_check_launch(const char *op)
{
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? OPS_OK : ops_cuda_fail(op, "kernel launch", err);
}
#define OPS_CUDA_CHECK_LAUNCH(op)                                                            do {                                                                                         const ops_status ops_launch_st_ = ops_cuda_check_launch(op);                             if (ops_launch_st_ != OPS_OK)                                                                return ops_launch_st_;                                                           } while (0)

#endif /* OPS_CUDA_COMMON_H */

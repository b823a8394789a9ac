// ops_scalar_math.h compiled for the device: every scalar function the CPU kernels
// use, evaluated by a CUDA kernel so tests/unit/test_cuda.c can compare the two
// builds of the same header (item 4 of the CUDA issue: one source of scalar math).
#include "cuda_common.h"
#include "ops_cuda_check.h"
#include "ops_scalar_math.h"

__global__ void
scalar_math_eval_kernel(int fn, const float *in, float *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float x = in[i];
        float y = 0.0f;
        switch (fn) {
#define OPS_X_(name, expr)  \
    case OPS_SM_##name:     \
        y = (expr);         \
        break;
            OPS_FOREACH_SCALAR_MATH_CHECK(OPS_X_)
#undef OPS_X_
        default:
            break;
        }
        out[i] = y;
    }
}

extern "C" ops_status
ops_cuda_scalar_math_eval(int fn, const float *in, float *out, int64_t n)
{
    const char *op = "cuda_scalar_math_eval";
    if (fn < 0 || fn >= OPS_SM_COUNT)
        return ops_fail(OPS_ERR_VALUE, "%s: unknown function %d", op, fn);
    ops_status st = ops_cuda_check_device(op, 0);
    if (st != OPS_OK || n <= 0)
        return st;
    ops_cuda_device_guard guard(0);
    float *d_in = NULL, *d_out = NULL;
    size_t bytes = (size_t)n * sizeof(float);
    cudaError_t err = cudaMalloc(&d_in, bytes);
    if (err == cudaSuccess)
        err = cudaMalloc(&d_out, bytes);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess) {
        int grid = (int)((n + 255) / 256 < 65535 ? (n + 255) / 256 : 65535);
        OPS_LAUNCH(scalar_math_eval_kernel, grid, 256, 0, ops_cuda_current_stream(0), fn, d_in, d_out, n);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
        st = ops_cuda_fail(op, "evaluating on cuda:0", err);
    (void)cudaFree(d_in);
    (void)cudaFree(d_out);
    return st;
}

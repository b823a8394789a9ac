/* What bench_cuda.c needs from CUDA directly: event timing, a direct cuBLAS GEMM on
 * the same buffers as libops' mm (the baseline), and cudaMemcpy device-to-device
 * (the bandwidth baseline).  C linkage; compiled into the bench only. */
#include "ops_cuda_rt.h" /* CUDA and cuBLAS, or the emulated device's (make gpu-check without a GPU) */

#include "bench_cuda.h"

static cublasHandle_t bench_handle;

extern "C" int
bench_cuda_time(void (*fn)(void *), void *ctx, int reps, double *ms)
{
    cudaEvent_t t0, t1;
    if (cudaEventCreate(&t0) != cudaSuccess || cudaEventCreate(&t1) != cudaSuccess)
        return -1;
    fn(ctx); /* warm-up: handles, caches, clocks */
    cudaEventRecord(t0, 0);
    for (int i = 0; i < reps; i++)
        fn(ctx);
    cudaEventRecord(t1, 0);
    float total = 0;
    const bool ok = cudaEventSynchronize(t1) == cudaSuccess && cudaEventElapsedTime(&total, t0, t1) == cudaSuccess;
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    *ms = (double)total / reps;
    return ok && cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* Row-major C = A @ B, n x n, as cuBLAS sees it: column-major C^T = B^T A^T. */
extern "C" int
bench_cuda_gemm(int dtype, int n, const void *a, const void *b, void *c)
{
    if (bench_handle == NULL && cublasCreate(&bench_handle) != CUBLAS_STATUS_SUCCESS)
        return -1;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st;
    if (dtype == BENCH_F32) {
        st = cublasSgemm(bench_handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (const float *)b, n, (const float *)a,
                         n, &zero, (float *)c, n);
    } else {
        const cudaDataType_t t = dtype == BENCH_F16 ? CUDA_R_16F : CUDA_R_16BF;
        st = cublasGemmEx(bench_handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, t, n, a, t, n, &zero, c, t, n,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    return st == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

extern "C" int
bench_cuda_memcpy(void *dst, const void *src, size_t bytes)
{
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0) == cudaSuccess ? 0 : -1;
}

/* bench_cuda_helpers.cu: CUDA called directly by bench_cuda.c (C linkage). */
#ifndef BENCH_CUDA_H
#define BENCH_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { BENCH_F32, BENCH_F16, BENCH_BF16 };

/* Average milliseconds of fn(ctx) over reps calls on the default stream (CUDA events,
 * after one warm-up call); 0 on success. */
int bench_cuda_time(void (*fn)(void *), void *ctx, int reps, double *ms);
/* Row-major c = a @ b, n x n, by one direct cuBLAS call (GemmEx with float compute for
 * float16/bfloat16, as libops); 0 on success. */
int bench_cuda_gemm(int dtype, int n, const void *a, const void *b, void *c);
/* cudaMemcpy device to device of bytes on the default stream; 0 on success. */
int bench_cuda_memcpy(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_CUDA_H */

/* bench_cuda_reduce: full sum and amax of float32 tensors of 2^24 .. 2^28 elements on
 * cuda:0, as a fraction of the bandwidth cudaMemcpy device-to-device reaches on
 * buffers of the same size in the same run (the target: 0.9).
 *
 * A reduction reads n * 4 bytes; a copy reads and writes n * 4 bytes each, so the
 * copy's bandwidth counts 2 * n * 4 bytes.  Each figure is the best of several trials
 * of back-to-back calls, timed on the host around a device synchronize.  The inputs
 * are filled with cudaMemset (0x3f bytes: every element 0.747...), so only libops's
 * allocation and the reduction itself are measured.
 *
 *     bench_cuda_reduce [--quick]
 *
 * --quick: 2^16 and 2^18 elements, fewer calls (make gpu-check on the emulated device,
 * where the figures only show that the program runs).
 *
 * Built in CUDA builds (and the emulated tree, for make gpu-check), never run by
 * `make check`; exits 77 without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ops_cuda.h"
#include "ops_op_amax.h"
#include "ops_op_empty.h"
#include "ops_op_sum.h"
#ifdef OPS_CUDA_EMULATION
#include "emu/ops_cuda_emu.h" /* the emulated device's runtime API (C-callable) */
#else
#include <cuda_runtime_api.h>
#endif

#define PROG "bench_cuda_reduce"
#define TRIALS 5

static void
check_cuda(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "%s: %s failed: %s\n", PROG, what, cudaGetErrorString(err));
        exit(1);
    }
}

/* Best seconds per call of calls back-to-back of fn(ctx). */
static double
best_time(void (*fn)(void *), void *ctx, int calls)
{
    double best = 1e30;
    fn(ctx); /* warm-up: the cache's blocks, the kernels' first launch */
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    for (int t = 0; t < TRIALS; t++) {
        const double t0 = bench_now();
        for (int k = 0; k < calls; k++)
            fn(ctx);
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        const double dt = (bench_now() - t0) / calls;
        best = dt < best ? dt : best;
    }
    return best;
}

typedef struct {
    ops_tensor *x;
    void *dst;
    size_t bytes;
} bench_ctx;

static void
run_memcpy(void *p)
{
    bench_ctx *c = p;
    check_cuda(cudaMemcpyAsync(c->dst, ops_tensor_data_ptr(c->x), c->bytes, cudaMemcpyDeviceToDevice, 0),
               "cudaMemcpyAsync");
}

static void
run_sum(void *p)
{
    ops_tensor *r = ops_sum(((bench_ctx *)p)->x, OPS_DTYPE_NONE);
    if (r == NULL)
        bench_die(PROG, "sum");
    ops_tensor_release(r);
}

static void
run_amax(void *p)
{
    ops_tensor *r = ops_amax(((bench_ctx *)p)->x, OPS_INTS(), false);
    if (r == NULL)
        bench_die(PROG, "amax");
    ops_tensor_release(r);
}

int
main(int argc, char **argv)
{
    const bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && !quick) {
        fprintf(stderr, "usage: %s [--quick]\n", PROG);
        return 2;
    }
    if (ops_cuda_device_count() == 0) {
        printf("%s: no CUDA device: skipped\n", PROG);
        return 77;
    }
    printf("%-6s %-8s %12s %12s %10s\n", "op", "elements", "GB/s", "memcpy GB/s", "fraction");
    const int lg_first = quick ? 16 : 24, lg_last = quick ? 18 : 28;
    for (int lg = lg_first; lg <= lg_last; lg += 2) {
        const int64_t n = (int64_t)1 << lg;
        bench_ctx c;
        c.bytes = (size_t)n * sizeof(float);
        if ((c.x = ops_empty(OPS_INTS(n), OPS_FLOAT32, OPS_DEVICE_CUDA(0), OPS_MEMORY_FORMAT_NONE)) == NULL)
            bench_die(PROG, "empty");
        check_cuda(cudaMemset(ops_tensor_data_ptr(c.x), 0x3f, c.bytes), "cudaMemset");
        check_cuda(cudaMalloc(&c.dst, c.bytes), "cudaMalloc");
        const int calls = quick ? 2 : lg <= 24 ? 50 : lg <= 26 ? 20 : 5;
        const double t_copy = best_time(run_memcpy, &c, calls);
        const double bw_copy = 2.0 * (double)c.bytes / t_copy / 1e9;
        const char *names[] = {"sum", "amax"};
        void (*fns[])(void *) = {run_sum, run_amax};
        for (int k = 0; k < 2; k++) {
            const double t = best_time(fns[k], &c, calls);
            const double bw = (double)c.bytes / t / 1e9;
            printf("%-6s 2^%-6d %12.1f %12.1f %10.3f\n", names[k], lg, bw, bw_copy, bw / bw_copy);
        }
        check_cuda(cudaFree(c.dst), "cudaFree");
        ops_tensor_release(c.x);
    }
    return 0;
}

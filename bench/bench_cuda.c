/* bench_cuda: libops on a CUDA device against the baselines the CUDA issue sets,
 * measured in the same run with CUDA events (GPU only; exit 77 without a device).
 *
 *   - mm: n x n float32/float16/bfloat16 ops_mm_out (n = 1024, 4096, 8192) into a
 *     preallocated out, against one direct cuBLAS call on the same buffers
 *     (cublasSgemm / cublasGemmEx with float compute); target ratio >= 0.95;
 *   - elementwise: float32 add, mul and exp of 2^24 .. 2^28 elements into a
 *     preallocated out, as bandwidth (bytes read + written per second) and as a
 *     fraction of cudaMemcpy device-to-device's bandwidth on a buffer of the same
 *     size (read + write); target >= 0.9.
 *
 *     bench_cuda [--quick]
 *
 * --quick: mm at n = 128 and 256, elementwise at 2^16 and 2^17, two calls each (make
 * gpu-check on the emulated device, where the figures only show that the program runs).
 *
 * Never run by `make check` (not a test); `make bench-cuda`, `make gpu-check`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cuda.h"
#include "bench_util.h"
#include "ops_cuda.h"
#include "ops_internal.h"
#include "ops_op_add.h"
#include "ops_op_copy.h"
#include "ops_op_exp.h"
#include "ops_op_mm.h"
#include "ops_op_mul.h"
#include "ops_op_rand.h"
#include "ops_op_to.h"

#define PROG "bench_cuda"

/* A new cuda:0 tensor of sizes with uniform values in [-0.5, 0.5) (made on the host,
 * copied over: the bench measures ops, not the generator). */
static ops_tensor *
device_tensor(int ndim, const int64_t *sizes, ops_dtype dt)
{
    const ops_int_list l = {sizes, ndim};
    ops_tensor *h = ops_rand(l, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *hd = h != NULL ? ops_to_dtype(h, dt, false, true, OPS_MEMORY_FORMAT_NONE) : NULL;
    ops_tensor *d = ops_tensor_new(PROG, ndim, sizes, NULL, dt, OPS_DEVICE_CUDA(0));
    if (hd == NULL || d == NULL || ops_copy_(d, hd, false) != OPS_OK)
        bench_die(PROG, "making a device tensor");
    ops_tensor_release(h);
    ops_tensor_release(hd);
    return d;
}

typedef struct {
    int which; /* 0: libops, 1: the baseline */
    int dtype;
    int n;
    ops_tensor *a, *b, *c;
} mm_ctx;

static void
mm_call(void *p)
{
    mm_ctx *x = p;
    if (x->which == 0) {
        if (ops_mm_out(x->a, x->b, x->c) != OPS_OK)
            bench_die(PROG, "ops_mm_out");
    } else if (bench_cuda_gemm(x->dtype, x->n, ops_tensor_data_ptr(x->a), ops_tensor_data_ptr(x->b),
                               ops_tensor_data_ptr(x->c)) != 0) {
        fprintf(stderr, "%s: cuBLAS failed\n", PROG);
        exit(1);
    }
}

typedef struct {
    int op; /* 0 add, 1 mul, 2 exp, 3 memcpy */
    ops_tensor *a, *b, *out;
    size_t bytes;
} ew_ctx;

static void
ew_call(void *p)
{
    ew_ctx *x = p;
    ops_status st = OPS_OK;
    switch (x->op) {
    case 0: st = ops_add_out(x->a, x->b, OPS_SCALAR_INT(1), x->out); break;
    case 1: st = ops_mul_out(x->a, x->b, x->out); break;
    case 2: st = ops_exp_out(x->a, x->out); break;
    default:
        if (bench_cuda_memcpy(ops_tensor_data_ptr(x->out), ops_tensor_data_ptr(x->a), x->bytes) != 0) {
            fprintf(stderr, "%s: cudaMemcpy failed\n", PROG);
            exit(1);
        }
        return;
    }
    if (st != OPS_OK)
        bench_die(PROG, "an elementwise op");
}

static double
timed(void (*fn)(void *), void *ctx, int reps)
{
    double ms;
    if (bench_cuda_time(fn, ctx, reps, &ms) != 0) {
        fprintf(stderr, "%s: timing failed\n", PROG);
        exit(1);
    }
    return ms;
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
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    ops_cuda_device_properties p;
    if (ops_cuda_get_device_properties(0, &p) == OPS_OK)
        printf("%s: %s (sm_%d%d), TF32 %s\n", PROG, p.name, p.major, p.minor, ops_cuda_allow_tf32() ? "on" : "off");

    static const struct {
        ops_dtype dt;
        int bench;
    } mm_types[] = {{OPS_FLOAT32, BENCH_F32}, {OPS_FLOAT16, BENCH_F16}, {OPS_BFLOAT16, BENCH_BF16}};
    static const int full_sizes[] = {1024, 4096, 8192}, quick_sizes[] = {128, 256};
    const int *sizes = quick ? quick_sizes : full_sizes;
    const size_t nsizes = quick ? 2 : 3;
    printf("\nmm (n x n x n)        libops TFLOP/s   cuBLAS TFLOP/s   ratio (target >= 0.95)\n");
    for (size_t t = 0; t < sizeof mm_types / sizeof mm_types[0]; t++)
        for (size_t s = 0; s < nsizes; s++) {
            const int n = sizes[s];
            const int64_t sz[2] = {n, n};
            mm_ctx x = {0, mm_types[t].bench, n, device_tensor(2, sz, mm_types[t].dt),
                        device_tensor(2, sz, mm_types[t].dt), device_tensor(2, sz, mm_types[t].dt)};
            const int reps = quick ? 2 : n <= 1024 ? 50 : n <= 4096 ? 10 : 4;
            /* interleaved twice: clocks and the other's cache state even out */
            double lib = INFINITY, base = INFINITY;
            for (int round = 0; round < 2; round++) {
                x.which = 0;
                lib = fmin(lib, timed(mm_call, &x, reps));
                x.which = 1;
                base = fmin(base, timed(mm_call, &x, reps));
            }
            const double flop = 2.0 * n * (double)n * n;
            printf("%-9s n = %-5d  %12.1f     %12.1f        %.3f\n", ops_dtype_name(mm_types[t].dt), n,
                   flop / lib * 1e-9, flop / base * 1e-9, base / lib);
            ops_tensor_release(x.a);
            ops_tensor_release(x.b);
            ops_tensor_release(x.c);
        }

    static const char *const ew_names[] = {"add", "mul", "exp"};
    printf("\nfloat32 elementwise    GB/s   memcpy d2d GB/s   fraction (target >= 0.9)\n");
    const int lg_first = quick ? 16 : 24, lg_last = quick ? 17 : 28;
    for (int lg = lg_first; lg <= lg_last; lg++) {
        const int64_t n = (int64_t)1 << lg;
        ew_ctx x = {3, device_tensor(1, &n, OPS_FLOAT32), device_tensor(1, &n, OPS_FLOAT32),
                    device_tensor(1, &n, OPS_FLOAT32), (size_t)n * sizeof(float)};
        const int reps = quick ? 2 : lg <= 26 ? 20 : 5;
        const double copy_gbs = 2.0 * (double)x.bytes / timed(ew_call, &x, reps) * 1e-6;
        for (int op = 0; op < 3; op++) {
            x.op = op;
            const double moved = (op == 2 ? 2.0 : 3.0) * (double)x.bytes;
            const double gbs = moved / timed(ew_call, &x, reps) * 1e-6;
            printf("%-4s 2^%d    %10.1f     %10.1f          %.3f\n", ew_names[op], lg, gbs, copy_gbs, gbs / copy_gbs);
        }
        ops_tensor_release(x.a);
        ops_tensor_release(x.b);
        ops_tensor_release(x.out);
    }
    return 0;
}

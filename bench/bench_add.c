/* bench_add: the foundation's performance figures, as ratios measured in one run.
 *
 *   - call overhead: a 1-element float32 add through the functional API and through
 *     the _out API (ns per call, including the result's allocation and release);
 *   - bandwidth: a 16M-element float32 add with a preallocated out, against a plain C
 *     loop over the same buffers (GB/s counts 3 x 64 MB per call), with libops on 1
 *     thread and on its default thread count;
 *   - allocation: the functional 16M add (a fresh 64 MB result each call, served by the
 *     CPU allocator's cache) against the out= form.
 *
 * Timings are interleaved and the best of several repetitions is reported, since
 * two-thread timings on shared VMs swing from run to run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "ops_op_add.h"
#include "ops_op_empty.h"
#include "ops_op_full.h"
#include "ops_op_ones.h"
#include "ops_op_zeros.h"

/* The baseline: what a C programmer writes by hand. */
static void __attribute__((noinline))
plain_add(float *restrict c, const float *restrict a, const float *restrict b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

static double
min2(double a, double b)
{
    return a < b ? a : b;
}

int
main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    const ops_scalar one = OPS_SCALAR_INT(1);

    /* ---- 1-element call overhead ------------------------------------------- */
    ops_tensor *x = ops_ones(OPS_INTS(1), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *y = ops_ones(OPS_INTS(1), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *z = ops_empty(OPS_INTS(1), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    if (!x || !y || !z)
        bench_die("bench_add", "setup");
    const int calls = 200000;
    double best_fn = 1e9, best_out = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int i = 0; i < calls; i++) {
            ops_tensor *s = ops_add(x, y, one);
            if (!s)
                bench_die("bench_add", "ops_add");
            ops_tensor_release(s);
        }
        double t1 = bench_now();
        for (int i = 0; i < calls; i++)
            if (ops_add_out(x, y, one, z) != OPS_OK)
                bench_die("bench_add", "ops_add_out");
        double t2 = bench_now();
        best_fn = min2(best_fn, (t1 - t0) / calls * 1e9);
        best_out = min2(best_out, (t2 - t1) / calls * 1e9);
    }
    printf("1-element float32 add: functional %.1f ns/call (target <= 100), "
           "_out %.1f ns/call (target <= 50)\n", best_fn, best_out);
    ops_tensor_release(x);
    ops_tensor_release(y);
    ops_tensor_release(z);

    /* ---- 16M-element add: bandwidth ------------------------------------------ */
    const int64_t n = 16 * 1024 * 1024;
    ops_tensor *a = ops_full(OPS_INTS(n), OPS_SCALAR_FLOAT(1.5), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *b = ops_full(OPS_INTS(n), OPS_SCALAR_FLOAT(2.0), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *c = ops_zeros(OPS_INTS(n), OPS_FLOAT32, OPS_DEVICE_CPU);
    if (!a || !b || !c)
        bench_die("bench_add", "setup 16M");
    float *pa = ops_tensor_data_ptr(a), *pb = ops_tensor_data_ptr(b), *pc = ops_tensor_data_ptr(c);
    /* a separate plain buffer for the baseline's output, touched once */
    float *plain_c = aligned_alloc(64, (size_t)n * sizeof(float));
    memset(plain_c, 0, (size_t)n * sizeof(float));

    int default_threads = ops_get_num_threads();
    double t_plain = 1e9, t_out1 = 1e9, t_outn = 1e9, t_fn = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        plain_add(plain_c, pa, pb, n);
        double t1 = bench_now();
        ops_set_num_threads(1);
        if (ops_add_out(a, b, one, c) != OPS_OK)
            bench_die("bench_add", "add_out");
        double t2 = bench_now();
        ops_set_num_threads(default_threads);
        if (ops_add_out(a, b, one, c) != OPS_OK)
            bench_die("bench_add", "add_out");
        double t3 = bench_now();
        ops_tensor *s = ops_add(a, b, one);
        if (!s)
            bench_die("bench_add", "add");
        double t4 = bench_now();
        ops_tensor_release(s);
        t_plain = min2(t_plain, t1 - t0);
        t_out1 = min2(t_out1, t2 - t1);
        t_outn = min2(t_outn, t3 - t2);
        t_fn = min2(t_fn, t4 - t3);
    }
    if (pc[n - 1] != 3.5f || plain_c[n - 1] != 3.5f)
        bench_die("bench_add", "result check");
    const double gb = 3.0 * (double)n * sizeof(float) / 1e9;
    printf("16M float32 add, preallocated out: plain C loop %.2f GB/s; libops 1 thread %.2f GB/s "
           "(%.2fx), %d threads %.2f GB/s (%.2fx) (target >= 0.9x)\n",
           gb / t_plain, gb / t_out1, t_plain / t_out1, default_threads, gb / t_outn, t_plain / t_outn);
    printf("16M float32 add, functional (allocates; cached) %.2f ms vs out= %.2f ms: %.2fx "
           "(target <= 1.2x)\n", t_fn * 1e3, t_outn * 1e3, t_fn / t_outn);

    ops_alloc_stats st;
    ops_cpu_allocator_stats(&st);
    printf("CPU allocator: %lld allocations, %lld served from its cache\n", (long long)st.num_allocs,
           (long long)st.num_cache_hits);
    free(plain_c);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
    return 0;
}

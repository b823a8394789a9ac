/* bench_reduce: reductions and softmax against plain C loops over the same buffers.
 *
 *   - sum over the last dim and over the first dim of a 4096 x 4096 float32 matrix
 *     (64 MiB read per call; GB/s counts the bytes read), into a preallocated out;
 *   - softmax over the last dim of [4096, 1024] float32 (read + write), into a
 *     preallocated out;
 *   - max.dim (values and indices) and the 2-norm over the last dim of a 4096 x 4096
 *     float32 matrix of pseudo-random values, into preallocated outs.
 * The plain loops are single-threaded, written as a C programmer would; libops runs
 * on its default thread count.  Best of several repetitions, interleaved. */
#include <math.h>
#include <string.h>

#include "bench_util.h"
#include "ops_op_empty.h"
#include "ops_op_linspace.h"
#include "ops_op_max.h"
#include "ops_op_narrow.h"
#include "ops_op_norm.h"
#include "ops_op_softmax.h"
#include "ops_op_sum.h"
#include "ops_op_view.h"

static void __attribute__((noinline))
plain_sum_rows(const float *restrict a, float *restrict out, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++) {
        float s = 0.0f;
        for (int64_t j = 0; j < cols; j++)
            s += a[i * cols + j];
        out[i] = s;
    }
}

static void __attribute__((noinline))
plain_sum_cols(const float *restrict a, float *restrict out, int64_t rows, int64_t cols)
{
    memset(out, 0, (size_t)cols * sizeof(float));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            out[j] += a[i * cols + j];
}

static void __attribute__((noinline))
plain_softmax(const float *restrict a, float *restrict out, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++) {
        const float *x = a + i * cols;
        float *y = out + i * cols;
        float m = -INFINITY, s = 0.0f;
        for (int64_t j = 0; j < cols; j++)
            m = x[j] > m ? x[j] : m;
        for (int64_t j = 0; j < cols; j++) {
            y[j] = expf(x[j] - m);
            s += y[j];
        }
        for (int64_t j = 0; j < cols; j++)
            y[j] /= s;
    }
}

static void __attribute__((noinline))
plain_max_rows(const float *restrict a, float *restrict vals, int64_t *restrict idx, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++) {
        const float *x = a + i * cols;
        float best = x[0];
        int64_t bi = 0;
        for (int64_t j = 1; j < cols; j++)
            if (x[j] > best) {
                best = x[j];
                bi = j;
            }
        vals[i] = best;
        idx[i] = bi;
    }
}

static void __attribute__((noinline))
plain_norm_rows(const float *restrict a, float *restrict out, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++) {
        float s = 0.0f;
        for (int64_t j = 0; j < cols; j++)
            s += a[i * cols + j] * a[i * cols + j];
        out[i] = sqrtf(s);
    }
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
    const int64_t n = 4096;
    ops_tensor *a = ops_linspace(OPS_SCALAR_FLOAT(-1.0), OPS_SCALAR_FLOAT(1.0), n * n, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *m = a ? ops_view(a, OPS_INTS(n, n)) : NULL;
    ops_tensor *out = ops_empty(OPS_INTS(n), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    float *plain = malloc((size_t)n * sizeof(float));
    if (!m || !out || !plain)
        bench_die("bench_reduce", "setup");
    const float *pa = ops_tensor_data_ptr(m);

    double t_pl = 1e9, t_ol = 1e9, t_pf = 1e9, t_of = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        plain_sum_rows(pa, plain, n, n);
        double t1 = bench_now();
        if (ops_sum_dim_out(m, &OPS_INTS(1), false, OPS_DTYPE_NONE, out) != OPS_OK)
            bench_die("bench_reduce", "sum over the last dim");
        double t2 = bench_now();
        plain_sum_cols(pa, plain, n, n);
        double t3 = bench_now();
        if (ops_sum_dim_out(m, &OPS_INTS(0), false, OPS_DTYPE_NONE, out) != OPS_OK)
            bench_die("bench_reduce", "sum over the first dim");
        double t4 = bench_now();
        t_pl = min2(t_pl, t1 - t0);
        t_ol = min2(t_ol, t2 - t1);
        t_pf = min2(t_pf, t3 - t2);
        t_of = min2(t_of, t4 - t3);
    }
    const double gb = (double)n * n * sizeof(float) / 1e9;
    printf("sum over the last dim of 4096x4096 float32: plain loop %.2f GB/s, libops %.2f GB/s (%.2fx; target >= 0.8x)\n",
           gb / t_pl, gb / t_ol, t_pl / t_ol);
    printf("sum over the first dim of 4096x4096 float32: plain loop %.2f GB/s, libops %.2f GB/s (%.2fx; target >= 0.8x)\n",
           gb / t_pf, gb / t_of, t_pf / t_of);

    const int64_t rows = 4096, cols = 1024;
    ops_tensor *x = ops_view(m, OPS_INTS(4 * rows, cols));
    ops_tensor *xs = x ? ops_narrow(x, 0, 0, rows) : NULL;
    ops_tensor *y = ops_empty(OPS_INTS(rows, cols), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    float *plain_y = malloc((size_t)(rows * cols) * sizeof(float));
    if (!xs || !y || !plain_y)
        bench_die("bench_reduce", "softmax setup");
    double t_ps = 1e9, t_os = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        plain_softmax(ops_tensor_data_ptr(xs), plain_y, rows, cols);
        double t1 = bench_now();
        if (ops_softmax_out(xs, 1, OPS_DTYPE_NONE, y) != OPS_OK)
            bench_die("bench_reduce", "softmax");
        double t2 = bench_now();
        t_ps = min2(t_ps, t1 - t0);
        t_os = min2(t_os, t2 - t1);
    }
    const double gbs = 2.0 * (double)rows * cols * sizeof(float) / 1e9;
    printf("softmax over the last dim of [4096, 1024] float32: plain loop %.2f GB/s, libops %.2f GB/s (%.2fx; target >= 0.5x)\n",
           gbs / t_ps, gbs / t_os, t_ps / t_os);

    /* max.dim and norm over the last dim of pseudo-random values (an LCG) */
    float *rnd = malloc((size_t)(n * n) * sizeof(float));
    int64_t *plain_i = malloc((size_t)n * sizeof(int64_t));
    if (!rnd || !plain_i)
        bench_die("bench_reduce", "max.dim setup");
    uint32_t st = 12345u;
    for (int64_t i = 0; i < n * n; i++) {
        st = st * 1664525u + 1013904223u;
        rnd[i] = (float)(st >> 8) / 16777216.0f - 0.5f;
    }
    ops_tensor *rm = ops_tensor_from_data(rnd, OPS_INTS(n, n), OPS_FLOAT32);
    ops_tensor *vals = ops_empty(OPS_INTS(n), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *idx = ops_empty(OPS_INTS(n), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    if (!rm || !vals || !idx)
        bench_die("bench_reduce", "max.dim setup");
    const float *pr = ops_tensor_data_ptr(rm);
    double t_pm = 1e9, t_om = 1e9, t_pn = 1e9, t_on = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        plain_max_rows(pr, plain, plain_i, n, n);
        double t1 = bench_now();
        if (ops_max_dim_max(rm, 1, false, vals, idx) != OPS_OK)
            bench_die("bench_reduce", "max.dim");
        double t2 = bench_now();
        plain_norm_rows(pr, plain, n, n);
        double t3 = bench_now();
        if (ops_norm_out(rm, NULL, OPS_INTS(1), false, out) != OPS_OK)
            bench_die("bench_reduce", "norm");
        double t4 = bench_now();
        t_pm = min2(t_pm, t1 - t0);
        t_om = min2(t_om, t2 - t1);
        t_pn = min2(t_pn, t3 - t2);
        t_on = min2(t_on, t4 - t3);
    }
    printf("max.dim over the last dim of 4096x4096 float32: plain loop %.2f GB/s, libops %.2f GB/s (%.2fx; target >= 0.8x)\n",
           gb / t_pm, gb / t_om, t_pm / t_om);
    printf("2-norm over the last dim of 4096x4096 float32: plain loop %.2f GB/s, libops %.2f GB/s (%.2fx; target >= 0.8x)\n",
           gb / t_pn, gb / t_on, t_pn / t_on);
    ops_tensor_release(rm);
    ops_tensor_release(vals);
    ops_tensor_release(idx);
    free(rnd);
    free(plain_i);

    free(plain);
    free(plain_y);
    ops_tensor_release(x);
    ops_tensor_release(xs);
    ops_tensor_release(y);
    ops_tensor_release(out);
    ops_tensor_release(m);
    ops_tensor_release(a);
    return 0;
}

/* bench_norm: layer_norm over the last dim of [4096, 1024] float32 (weight and bias
 * of [1024]) against a plain C loop over the same buffers.
 *
 * The plain loop is single-threaded and two-pass per row (mean, then the variance
 * around it, then the normalizing pass), with float accumulators, as a C programmer
 * would write it.  libops is timed on one thread (the like-for-like ratio) and on its
 * default thread count.  layer_norm has no out= form: its output is a fresh tensor
 * per call, served by the CPU allocator's cache of freed blocks after the first call
 * (so no page faults in the timed calls).  GB/s counts 16 MiB read + 16 MiB written.
 * Best of several repetitions, interleaved. */
#include <math.h>

#include "bench_util.h"
#include "ops_op_layer_norm.h"
#include "ops_op_linspace.h"
#include "ops_op_sin.h"
#include "ops_op_view.h"

static void __attribute__((noinline))
plain_layer_norm(const float *restrict x, const float *restrict w, const float *restrict b, float *restrict y,
                 int64_t rows, int64_t cols, float eps)
{
    for (int64_t i = 0; i < rows; i++) {
        const float *xr = x + i * cols;
        float *yr = y + i * cols;
        float s = 0.0f, q = 0.0f;
        for (int64_t j = 0; j < cols; j++)
            s += xr[j];
        const float mean = s / (float)cols;
        for (int64_t j = 0; j < cols; j++)
            q += (xr[j] - mean) * (xr[j] - mean);
        const float rstd = 1.0f / sqrtf(q / (float)cols + eps);
        for (int64_t j = 0; j < cols; j++)
            yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
    }
}

static double
min2(double a, double b)
{
    return a < b ? a : b;
}

/* Largest |a - b| over n elements: the two results must agree. */
static double
max_diff(const float *a, const float *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)a[i] - (double)b[i]));
    return m;
}

int
main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 7;
    const int64_t rows = 4096, cols = 1024;
    const float eps = 1e-5f;
    /* sin(k) for k = 0, 1, 2, ...: values spread over [-1, 1] within every row */
    ops_tensor *flat = ops_linspace(OPS_SCALAR_FLOAT(0.0), OPS_SCALAR_FLOAT((double)(rows * cols - 1)), rows * cols,
                                    OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *x = flat ? ops_view(flat, OPS_INTS(rows, cols)) : NULL;
    ops_tensor *xs = x ? ops_sin(x) : NULL;
    ops_tensor *w = ops_linspace(OPS_SCALAR_FLOAT(0.5), OPS_SCALAR_FLOAT(1.5), cols, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *b = ops_linspace(OPS_SCALAR_FLOAT(-0.25), OPS_SCALAR_FLOAT(0.25), cols, OPS_FLOAT32, OPS_DEVICE_CPU);
    float *plain = malloc((size_t)(rows * cols) * sizeof(float));
    if (!xs || !w || !b || !plain)
        bench_die("bench_norm", "setup");
    const float *px = ops_tensor_data_ptr(xs), *pw = ops_tensor_data_ptr(w), *pb = ops_tensor_data_ptr(b);

    const int nthreads = ops_get_num_threads();
    double t_plain = 1e9, t_one = 1e9, t_all = 1e9, diff = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        plain_layer_norm(px, pw, pb, plain, rows, cols, eps);
        double t1 = bench_now();
        ops_set_num_threads(1);
        ops_tensor *y1 = ops_layer_norm(xs, OPS_INTS(cols), w, b, eps, true);
        double t2 = bench_now();
        ops_set_num_threads(nthreads);
        ops_tensor *yn = ops_layer_norm(xs, OPS_INTS(cols), w, b, eps, true);
        double t3 = bench_now();
        if (!y1 || !yn)
            bench_die("bench_norm", "layer_norm");
        diff = fmax(diff, max_diff(plain, ops_tensor_data_ptr(y1), rows * cols));
        diff = fmax(diff, max_diff(plain, ops_tensor_data_ptr(yn), rows * cols));
        ops_tensor_release(y1);
        ops_tensor_release(yn);
        t_plain = min2(t_plain, t1 - t0);
        t_one = min2(t_one, t2 - t1);
        t_all = min2(t_all, t3 - t2);
    }
    const double gb = 2.0 * (double)rows * cols * sizeof(float) / 1e9;
    printf("layer_norm over the last dim of [4096, 1024] float32: plain two-pass loop %.2f GB/s (%.2f ms); "
           "libops 1 thread %.2f GB/s (%.2fx), %d threads %.2f GB/s (%.2fx); max |diff| %.2g\n",
           gb / t_plain, 1e3 * t_plain, gb / t_one, t_plain / t_one, nthreads, gb / t_all, t_plain / t_all, diff);

    free(plain);
    ops_tensor_release(flat);
    ops_tensor_release(x);
    ops_tensor_release(xs);
    ops_tensor_release(w);
    ops_tensor_release(b);
    return 0;
}

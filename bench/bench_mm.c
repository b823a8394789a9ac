/* bench_mm: float32 matrix products through libops against OpenBLAS called directly,
 * measured in one run on the same buffers.
 *
 *   - mm: n x n x n float32 ops_mm_out (n = 256, 1024, 2048) into a preallocated out,
 *     against cblas_sgemm on the same memory (GFLOP/s and the ratio; 1.00 means no
 *     overhead; n = 256 shows the per-call overhead, n = 2048 the BLAS's throughput);
 *   - mm, transposed: the same with the first operand a transposed view (strides
 *     [1, 1024]), which libops hands to the BLAS as a transpose flag, not a copy;
 *   - mv: a 4096 x 4096 float32 ops_mv_out against cblas_sgemv.
 *
 * The best of several repetitions is reported (shared machines are noisy). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "ops_op_mm.h"
#include "ops_op_mv.h"

static float *
filled(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    if (p == NULL) {
        fprintf(stderr, "bench_mm: out of memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

static ops_tensor *
view(float *p, int64_t r, int64_t c, int64_t rs, int64_t cs)
{
    ops_tensor *t = ops_tensor_from_blob(p, OPS_INTS(r, c), OPS_INTS(rs, cs), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL);
    if (t == NULL)
        bench_die("bench_mm", "from_blob");
    return t;
}

/* One square float32 product n x n x n: ops_mm_out into a preallocated out against
 * cblas_sgemm on the same buffers, and the same with A a transposed view, interleaved
 * in one run.  Each timed sample runs `iters` calls so that small n is not timer noise. */
static void
bench_square(int n, int reps)
{
    float *a = filled((int64_t)n * n, 1), *b = filled((int64_t)n * n, 2), *c = filled((int64_t)n * n, 3);
    ops_tensor *ta = view(a, n, n, n, 1), *tat = view(a, n, n, 1, n), *tb = view(b, n, n, n, 1);
    ops_tensor *tc = view(c, n, n, n, 1);
    const double flops = 2.0 * n * n * n;
    const int iters = flops >= 2e9 ? 1 : (int)(2e9 / flops);
    double t_ops = 1e30, t_blas = 1e30, t_opst = 1e30, t_blast = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int i = 0; i < iters; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t1 = bench_now();
        for (int i = 0; i < iters; i++)
            if (ops_mm_out(ta, tb, tc) != OPS_OK)
                bench_die("bench_mm", "mm_out");
        double t2 = bench_now();
        for (int i = 0; i < iters; i++)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t3 = bench_now();
        for (int i = 0; i < iters; i++)
            if (ops_mm_out(tat, tb, tc) != OPS_OK)
                bench_die("bench_mm", "mm_out (transposed)");
        double t4 = bench_now();
        t_blas = t1 - t0 < t_blas ? t1 - t0 : t_blas;
        t_ops = t2 - t1 < t_ops ? t2 - t1 : t_ops;
        t_blast = t3 - t2 < t_blast ? t3 - t2 : t_blast;
        t_opst = t4 - t3 < t_opst ? t4 - t3 : t_opst;
    }
    const double f = flops * iters * 1e-9;
    printf("mm %4dx%4dx%4d float32:         libops %7.1f GFLOP/s, cblas_sgemm %7.1f GFLOP/s, ratio %.2f\n", n, n,
           n, f / t_ops, f / t_blas, t_blas / t_ops);
    printf("mm %4dx%4dx%4d float32, A^T:    libops %7.1f GFLOP/s, cblas_sgemm %7.1f GFLOP/s, ratio %.2f\n", n, n,
           n, f / t_opst, f / t_blast, t_blast / t_opst);
    ops_tensor_release(ta);
    ops_tensor_release(tat);
    ops_tensor_release(tb);
    ops_tensor_release(tc);
    free(a);
    free(b);
    free(c);
}

int
main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 5;
    const int nv = 4096;
    static const int sizes[] = {256, 1024, 2048};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bench_square(sizes[i], reps);

    float *m = filled((int64_t)nv * nv, 4), *x = filled(nv, 5), *y = filled(nv, 6);
    ops_tensor *tm = view(m, nv, nv, nv, 1);
    ops_tensor *tx = ops_tensor_from_blob(x, OPS_INTS(nv), OPS_INTS(1), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL);
    ops_tensor *ty = ops_tensor_from_blob(y, OPS_INTS(nv), OPS_INTS(1), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL);
    if (tx == NULL || ty == NULL)
        bench_die("bench_mm", "from_blob");
    double v_ops = 1e30, v_blas = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        cblas_sgemv(CblasRowMajor, CblasNoTrans, nv, nv, 1.0f, m, nv, x, 1, 0.0f, y, 1);
        double t1 = bench_now();
        if (ops_mv_out(tm, tx, ty) != OPS_OK)
            bench_die("bench_mm", "mv_out");
        double t2 = bench_now();
        v_blas = t1 - t0 < v_blas ? t1 - t0 : v_blas;
        v_ops = t2 - t1 < v_ops ? t2 - t1 : v_ops;
    }
    const double vflops = 2.0 * nv * nv;
    printf("mv %dx%d float32:                 libops %7.1f GFLOP/s, cblas_sgemv %7.1f GFLOP/s, ratio %.2f\n", nv, nv,
           vflops / v_ops * 1e-9, vflops / v_blas * 1e-9, v_blas / v_ops);

    ops_tensor_release(tm);
    ops_tensor_release(tx);
    ops_tensor_release(ty);
    free(m);
    free(x);
    free(y);
    return 0;
}

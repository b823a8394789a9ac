/* bench_conv: a float32 conv2d through libops against the best case of the same
 * algorithm, measured in one run.
 *
 *   N=32, C=64, H=W=56, a 3x3 kernel, 64 output channels, padding 1, stride 1, no bias
 *   (a ResNet stage-1 layer at batch 32): 2 * 32 * 64 * 56 * 56 * 64 * 9 = 29.6 GFLOP.
 *
 *   - libops: ops_conv2d (functional: its output comes from the CPU allocator's cache
 *     after the first call; work buffers are allocated per call), which runs im2col +
 *     one cblas_sgemm per image;
 *   - baseline: an explicit im2col of the whole batch into a preallocated
 *     [C*9, N*56*56] buffer and ONE cblas_sgemm into a preallocated [64, N*56*56] output
 *     (channel-major, not NCHW: the best case, no copies, no allocation);
 *   - the baseline's sgemm alone (the BLAS's ceiling for this product).
 *
 * GFLOP/s and the ratio baseline time / libops time (1.00: as fast as the best case) are
 * printed; the two results are compared.  Runs are interleaved and the best of several
 * repetitions is kept (shared machines are noisy).  Threads: OpenBLAS's own setting
 * (OPENBLAS_NUM_THREADS / ops_set_num_threads); OPENBLAS_CORETYPE as the environment
 * sets it. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ops_op_conv2d.h"

enum { N = 32, C = 64, H = 56, W = 56, K = 64, KH = 3, KW = 3, PAD = 1 };

static float *
filled(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    if (p == NULL) {
        fprintf(stderr, "bench_conv: out of memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

/* col[(c*KH + ki)*KW + kj][n*H*W + y*W + x] = x[n][c][y + ki - PAD][x + kj - PAD] (0 outside). */
static void
im2col_batch(const float *x, float *col)
{
    const int64_t ncols = (int64_t)N * H * W;
    for (int c = 0; c < C; c++)
        for (int ki = 0; ki < KH; ki++)
            for (int kj = 0; kj < KW; kj++) {
                float *row = col + ((int64_t)(c * KH + ki) * KW + kj) * ncols;
                for (int n = 0; n < N; n++)
                    for (int y = 0; y < H; y++) {
                        float *d = row + ((int64_t)n * H + y) * W;
                        const int iy = y + ki - PAD;
                        if (iy < 0 || iy >= H) {
                            memset(d, 0, W * sizeof *d);
                            continue;
                        }
                        const float *s = x + (((int64_t)n * C + c) * H + iy) * W;
                        for (int xx = 0; xx < W; xx++) {
                            const int ix = xx + kj - PAD;
                            d[xx] = ix >= 0 && ix < W ? s[ix] : 0.0f;
                        }
                    }
            }
}

int
main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 5;
    const int64_t ncols = (int64_t)N * H * W, kdim = (int64_t)C * KH * KW;
    float *x = filled((int64_t)N * C * H * W, 1), *w = filled((int64_t)K * kdim, 2);
    float *col = filled(kdim * ncols, 3), *out = filled((int64_t)K * ncols, 4);
    ops_tensor *tx = ops_tensor_from_blob(x, OPS_INTS(N, C, H, W), OPS_INTS(C * H * W, H * W, W, 1), OPS_FLOAT32,
                                          OPS_DEVICE_CPU, NULL, NULL);
    ops_tensor *tw = ops_tensor_from_blob(w, OPS_INTS(K, C, KH, KW), OPS_INTS(C * KH * KW, KH * KW, KW, 1),
                                          OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL);
    if (tx == NULL || tw == NULL)
        bench_die("bench_conv", "from_blob");
    const double flops = 2.0 * N * K * H * W * (double)kdim;
    double t_ops = 1e30, t_base = 1e30, t_gemm = 1e30;
    ops_tensor *r = NULL;
    for (int i = 0; i < reps; i++) {
        double t0 = bench_now();
        im2col_batch(x, col);
        double t1 = bench_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, (int)ncols, (int)kdim, 1.0f, w, (int)kdim, col,
                    (int)ncols, 0.0f, out, (int)ncols);
        double t2 = bench_now();
        ops_tensor_release(r);
        r = ops_conv2d(tx, tw, NULL, OPS_INTS(1), OPS_INTS(PAD), OPS_INTS(1), 1);
        double t3 = bench_now();
        if (r == NULL)
            bench_die("bench_conv", "conv2d");
        t_base = t2 - t0 < t_base ? t2 - t0 : t_base;
        t_gemm = t2 - t1 < t_gemm ? t2 - t1 : t_gemm;
        t_ops = t3 - t2 < t_ops ? t3 - t2 : t_ops;
    }
    /* the two results agree (out is [K][N][H][W], libops's [N][K][H][W]) */
    const float *o = ops_tensor_data_ptr(r);
    double maxdiff = 0;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int p = 0; p < H * W; p++) {
                const double d = fabs((double)o[((int64_t)n * K + k) * H * W + p] -
                                      (double)out[((int64_t)k * N + n) * H * W + p]);
                maxdiff = d > maxdiff ? d : maxdiff;
            }
    printf("conv2d float32 N=%d C=%d %dx%d k=%dx%d out=%d pad=%d (threads %d):\n", N, C, H, W, KH, KW, K, PAD,
           ops_get_num_threads());
    printf("  libops conv2d                       %7.1f GFLOP/s  %8.2f ms\n", flops / t_ops * 1e-9, t_ops * 1e3);
    printf("  im2col + one cblas_sgemm (prealloc) %7.1f GFLOP/s  %8.2f ms  ratio baseline/libops %.2f\n",
           flops / t_base * 1e-9, t_base * 1e3, t_base / t_ops);
    printf("  cblas_sgemm alone                   %7.1f GFLOP/s  %8.2f ms  ratio %.2f\n", flops / t_gemm * 1e-9,
           t_gemm * 1e3, t_gemm / t_ops);
    printf("  max |libops - baseline| = %.3g\n", maxdiff);
    ops_tensor_release(r);
    ops_tensor_release(tx);
    ops_tensor_release(tw);
    free(x);
    free(w);
    free(col);
    free(out);
    return maxdiff < 1e-3 ? 0 : 1;
}

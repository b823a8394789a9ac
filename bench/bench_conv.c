/* bench_conv: float32 conv2d through libops at every distinct convolution of ResNet-18
 * (batch 8 at 224x224 by default), its two CPU paths and where the im2col path's time
 * goes, measured in one run:
 *
 *   - dnnl:   ops_conv2d with the oneDNN path (kernels/cpu/conv_dnnl.c), what runs by
 *             default where the build has oneDNN;
 *   - im2col: ops_conv2d with it off (ops_conv_dnnl_enable(false)): im2col + one
 *             cblas_sgemm per image (kernels/cpu/conv.c);
 *   - the im2col path's parts, redone here on preallocated buffers: `cols` (the
 *     gathers of every image), `gemm/img` (the per-image GEMMs, N = oh*ow), and the
 *     alternative of ONE GEMM over the batch (`gemm/batch`, N = n*oh*ow) plus the
 *     [Cout, n, ohw] -> [n, Cout, ohw] reorder it needs (`reorder`).
 *
 * Times are the best of several interleaved repetitions (shared machines are noisy),
 * per layer shape and summed over ResNet-18's 20 convolutions (a shape's count times
 * its time).  The two paths' results are compared.
 *
 *   bench bench_conv [reps=5] [threads=1] [batch=8] */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kernels/cpu/conv_dnnl.h"
#include "ops_op_conv2d.h"

typedef struct layer {
    const char *name;
    int count; /* how many of ResNet-18's convolutions have this shape */
    int cin, hw, cout, k, stride, pad;
} layer;

static const layer layers[] = {
    {"stem 7x7 s2 3->64 @224", 1, 3, 224, 64, 7, 2, 3},
    {"3x3 64->64 @56", 4, 64, 56, 64, 3, 1, 1},
    {"3x3 s2 64->128 @56", 1, 64, 56, 128, 3, 2, 1},
    {"1x1 s2 64->128 @56", 1, 64, 56, 128, 1, 2, 0},
    {"3x3 128->128 @28", 3, 128, 28, 128, 3, 1, 1},
    {"3x3 s2 128->256 @28", 1, 128, 28, 256, 3, 2, 1},
    {"1x1 s2 128->256 @28", 1, 128, 28, 256, 1, 2, 0},
    {"3x3 256->256 @14", 3, 256, 14, 256, 3, 1, 1},
    {"3x3 s2 256->512 @14", 1, 256, 14, 512, 3, 2, 1},
    {"1x1 s2 256->512 @14", 1, 256, 14, 512, 1, 2, 0},
    {"3x3 512->512 @7", 3, 512, 7, 512, 3, 1, 1},
};

static float *
filled(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
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

/* col[(c*k + ki)*k + kj][col0 + y*ow + x] (row length ld) from one image, zeros outside */
static void
im2col(const layer *l, int oh, const float *x, float *col, int64_t ld)
{
    const int hw = l->hw, k = l->k, s = l->stride, p = l->pad;
    for (int c = 0; c < l->cin; c++)
        for (int ki = 0; ki < k; ki++)
            for (int kj = 0; kj < k; kj++) {
                float *row = col + ((int64_t)(c * k + ki) * k + kj) * ld;
                for (int y = 0; y < oh; y++) {
                    float *d = row + (int64_t)y * oh;
                    const int iy = y * s + ki - p;
                    if (iy < 0 || iy >= hw) {
                        memset(d, 0, (size_t)oh * sizeof *d);
                        continue;
                    }
                    const float *src = x + ((int64_t)c * hw + iy) * hw;
                    for (int xx = 0; xx < oh; xx++) {
                        const int ix = xx * s + kj - p;
                        d[xx] = ix >= 0 && ix < hw ? src[ix] : 0.0f;
                    }
                }
            }
}

#define MIN_(a, b) ((a) < (b) ? (a) : (b))

int
main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 5;
    const int threads = argc > 2 ? atoi(argv[2]) : 1;
    const int N = argc > 3 ? atoi(argv[3]) : 8;
    ops_set_num_threads(threads);
    const bool have_dnnl = ops_conv_dnnl_enable(true);
    printf("conv2d float32, ResNet-18's convolutions at batch %d, threads %d, oneDNN %s; ms, best of %d\n", N,
           ops_get_num_threads(), have_dnnl ? "on" : "not in this build", reps);
    printf("%-24s %3s %8s %8s %6s | %8s %8s %8s %8s\n", "layer", "x", "dnnl", "im2col", "ratio", "cols", "gemm/img",
           "gemm/bat", "reorder");
    double sum[6] = {0};
    int bad = 0;
    for (size_t li = 0; li < sizeof layers / sizeof layers[0]; li++) {
        const layer *l = &layers[li];
        const int oh = (l->hw + 2 * l->pad - l->k) / l->stride + 1;
        const int64_t ohw = (int64_t)oh * oh, kdim = (int64_t)l->cin * l->k * l->k;
        const int64_t xn = (int64_t)N * l->cin * l->hw * l->hw, on = (int64_t)N * l->cout * ohw;
        float *x = filled(xn, 1), *w = filled(l->cout * kdim, 2);
        float *col = filled(kdim * ohw * N, 3), *out = filled(on, 4), *out2 = filled(on, 5);
        ops_tensor *tx = ops_tensor_from_blob(x, OPS_INTS(N, l->cin, l->hw, l->hw),
                                              OPS_INTS((int64_t)l->cin * l->hw * l->hw, (int64_t)l->hw * l->hw, l->hw, 1),
                                              OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL);
        ops_tensor *tw = ops_tensor_from_blob(w, OPS_INTS(l->cout, l->cin, l->k, l->k),
                                              OPS_INTS(kdim, l->k * l->k, l->k, 1), OPS_FLOAT32, OPS_DEVICE_CPU, NULL,
                                              NULL);
        if (tx == NULL || tw == NULL)
            bench_die("bench_conv", "from_blob");
        double t[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
        ops_tensor *r[2] = {NULL, NULL};
        for (int rep = 0; rep < reps; rep++) {
            for (int path = 0; path < 2; path++) {
                ops_conv_dnnl_enable(path == 0);
                ops_tensor_release(r[path]);
                const double t0 = bench_now();
                r[path] = ops_conv2d(tx, tw, NULL, OPS_INTS(l->stride), OPS_INTS(l->pad), OPS_INTS(1), 1);
                t[path] = MIN_(t[path], bench_now() - t0);
                if (r[path] == NULL)
                    bench_die("bench_conv", "conv2d");
            }
            /* the im2col path's parts: gathers, then per-image GEMMs */
            double t0 = bench_now();
            for (int n = 0; n < N; n++)
                im2col(l, oh, x + (int64_t)n * l->cin * l->hw * l->hw, col + n * kdim * ohw, ohw);
            double t1 = bench_now();
            for (int n = 0; n < N; n++)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l->cout, (int)ohw, (int)kdim, 1.0f, w,
                            (int)kdim, col + n * kdim * ohw, (int)ohw, 0.0f, out + n * l->cout * ohw, (int)ohw);
            double t2 = bench_now();
            t[2] = MIN_(t[2], t1 - t0);
            t[3] = MIN_(t[3], t2 - t1);
            /* one GEMM over the batch: columns side by side ([kdim, N*ohw]; the same
             * buffer, reread as one matrix: only the time matters), then the reorder */
            t0 = bench_now();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l->cout, (int)(N * ohw), (int)kdim, 1.0f, w,
                        (int)kdim, col, (int)(N * ohw), 0.0f, out2, (int)(N * ohw));
            t1 = bench_now();
            for (int n = 0; n < N; n++)
                for (int co = 0; co < l->cout; co++)
                    memcpy(out + (n * l->cout + co) * ohw, out2 + (co * (int64_t)N + n) * ohw,
                           (size_t)ohw * sizeof(float));
            t2 = bench_now();
            t[4] = MIN_(t[4], t1 - t0);
            t[5] = MIN_(t[5], t2 - t1);
        }
        /* the two paths agree */
        const float *a = ops_tensor_data_ptr(r[0]), *b = ops_tensor_data_ptr(r[1]);
        double maxdiff = 0;
        for (int64_t i = 0; i < on; i++)
            maxdiff = fmax(maxdiff, fabs((double)a[i] - (double)b[i]));
        bad |= !(maxdiff < 1e-3);
        printf("%-24s %3d %8.2f %8.2f %6.2f | %8.2f %8.2f %8.2f %8.2f%s\n", l->name, l->count, t[0] * 1e3,
               t[1] * 1e3, t[0] / t[1], t[2] * 1e3, t[3] * 1e3, t[4] * 1e3, t[5] * 1e3,
               maxdiff < 1e-3 ? "" : "  RESULTS DIFFER");
        for (int i = 0; i < 6; i++)
            sum[i] += l->count * t[i];
        ops_tensor_release(r[0]);
        ops_tensor_release(r[1]);
        ops_tensor_release(tx);
        ops_tensor_release(tw);
        free(x), free(w), free(col), free(out), free(out2);
    }
    printf("%-24s %3d %8.2f %8.2f %6.2f | %8.2f %8.2f %8.2f %8.2f\n", "ResNet-18 (x count)", 20, sum[0] * 1e3,
           sum[1] * 1e3, sum[0] / sum[1], sum[2] * 1e3, sum[3] * 1e3, sum[4] * 1e3, sum[5] * 1e3);
    ops_conv_dnnl_enable(true);
    return bad;
}

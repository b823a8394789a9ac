/* The NN families' CUDA kernels (kernels/cuda/norm.cu, pool.cu, nn.cu, loss.cu)
 * against the CPU kernels, on what the conformance cases do not reach: rows longer
 * than a block (layer_norm, group_norm, batch_norm's per-channel statistics), many
 * rows, non-contiguous inputs, float16, pooling windows at the borders with padding,
 * dilation and ceil_mode, NaN in max pooling, the backward scatter, large loss
 * reductions (the two-pass device sum), and the error paths that need device data:
 * an out-of-range target, index or pooling index must fail with the CPU's message and
 * leave out= untouched.
 *
 * Every case runs the op on CPU tensors and on copies of them on cuda:0 and compares
 * the results (float within a tolerance, integers exactly).  Without a CUDA build or a
 * device the program exits 77 (SKIP). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_op_adaptive_avg_pool2d.h"
#include "ops_op_adaptive_max_pool2d.h"
#include "ops_op_adaptive_max_pool2d_backward.h"
#include "ops_op_add.h"
#include "ops_op_avg_pool2d.h"
#include "ops_op_binary_cross_entropy.h"
#include "ops_op_binary_cross_entropy_with_logits.h"
#include "ops_op_clone.h"
#include "ops_op_copy.h"
#include "ops_op_cross_entropy_loss.h"
#include "ops_op_embedding.h"
#include "ops_op_fill.h"
#include "ops_op_full.h"
#include "ops_op_group_norm.h"
#include "ops_op_huber_loss.h"
#include "ops_op_l1_loss.h"
#include "ops_op_layer_norm.h"
#include "ops_op_max_pool1d.h"
#include "ops_op_max_pool2d.h"
#include "ops_op_max_pool2d_with_indices.h"
#include "ops_op_max_pool2d_with_indices_backward.h"
#include "ops_op_mse_loss.h"
#include "ops_op_narrow.h"
#include "ops_op_native_batch_norm.h"
#include "ops_op_native_group_norm.h"
#include "ops_op_native_layer_norm.h"
#include "ops_op_native_layer_norm_backward.h"
#include "ops_op_nll_loss.h"
#include "ops_op_nll_loss2d.h"
#include "ops_op_one_hot.h"
#include "ops_op_ones_like.h"
#include "ops_op_pad.h"
#include "ops_op_permute.h"
#include "ops_op_pixel_shuffle.h"
#include "ops_op_rand.h"
#include "ops_op_randint.h"
#include "ops_op_randn.h"
#include "ops_op_smooth_l1_loss.h"
#include "ops_op_softmax.h"
#include "ops_op_to.h"
#include "ops_op_transpose.h"
#include "ops_op_upsample_bilinear2d.h"
#include "ops_op_upsample_linear1d.h"
#include "ops_op_upsample_nearest2d.h"
#include "ops_cuda.h"
#include "ops_internal.h"

#ifdef OPS_WITH_CUDA

#define CUDA0 OPS_DEVICE_CUDA(0)

/* A copy of c (any layout) on cuda:0, contiguous. */
static ops_tensor *
to_cuda(const ops_tensor *c)
{
    ops_tensor *d = ops_tensor_new("test", c->ndim, c->sizes, NULL, c->dtype, CUDA0);
    ck_assert_msg(d != NULL, "cuda alloc: %s", ops_last_error());
    ck_assert_msg(ops_copy_(d, c, false) == OPS_OK, "copy to cuda: %s", ops_last_error());
    return d;
}

/* A contiguous float64 CPU copy of t (any device). */
static ops_tensor *
host_f64(const ops_tensor *t)
{
    ops_tensor *h = ops_tensor_new("test", t->ndim, t->sizes, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(ops_copy_(h, t, false) == OPS_OK, "copy to host: %s", ops_last_error());
    return h;
}

static ops_tensor *
randn(ops_int_list size, ops_dtype dt)
{
    ops_tensor *t = ops_randn(size, NULL, dt, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Same shape and dtype, and every element within atol + rtol * |cpu| (NaN matches NaN). */
static void
expect_close(const char *what, const ops_tensor *cpu, const ops_tensor *gpu, double rtol, double atol)
{
    ck_assert_msg(cpu != NULL, "%s: CPU failed: %s", what, ops_last_error());
    ck_assert_msg(gpu != NULL, "%s: CUDA failed: %s", what, ops_last_error());
    ck_assert_msg(ops_tensor_device(gpu).type == OPS_CUDA, "%s: result not on the device", what);
    ck_assert_int_eq(cpu->dtype, gpu->dtype);
    ck_assert_int_eq(cpu->ndim, gpu->ndim);
    for (int d = 0; d < cpu->ndim; d++)
        ck_assert_int_eq(cpu->sizes[d], gpu->sizes[d]);
    ops_tensor *a = host_f64(cpu), *b = host_f64(gpu);
    const double *x = ops_tensor_data_ptr(a), *y = ops_tensor_data_ptr(b);
    const int64_t n = ops_tensor_numel(a);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i]) && isnan(y[i]))
            continue;
        ck_assert_msg(fabs(x[i] - y[i]) <= atol + rtol * fabs(x[i]), "%s: element %lld: CPU %.17g, CUDA %.17g", what,
                      (long long)i, x[i], y[i]);
    }
    ops_tensor_release(a);
    ops_tensor_release(b);
}

/* A new cuda:0 tensor of the given shape filled with v (out= sentinels). */
static ops_tensor *
cuda_full(ops_int_list size, double v, ops_dtype dt)
{
    ops_tensor *t = ops_tensor_new("test", (int)size.len, size.data, NULL, dt, CUDA0);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(ops_fill_(t, OPS_SCALAR_FLOAT(v)) == OPS_OK, "fill_: %s", ops_last_error());
    return t;
}

/* Same shape and dtype and the same bytes (for results too large to widen). */
static void
expect_equal_bytes(const char *what, const ops_tensor *cpu, const ops_tensor *gpu)
{
    ck_assert_msg(cpu != NULL && gpu != NULL, "%s: failed: %s", what, ops_last_error());
    ck_assert_int_eq(cpu->dtype, gpu->dtype);
    ck_assert_int_eq(ops_tensor_numel(cpu), ops_tensor_numel(gpu));
    ops_tensor *h = ops_tensor_new("test", gpu->ndim, gpu->sizes, NULL, gpu->dtype, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(ops_copy_(h, gpu, false), OPS_OK);
    ck_assert_msg(memcmp(ops_tensor_data_ptr(cpu), ops_tensor_data_ptr(h),
                         (size_t)ops_tensor_numel(cpu) * ops_dtype_itemsize(cpu->dtype)) == 0,
                  "%s: results differ", what);
    ops_tensor_release(h);
}

/* The CUDA call failed with the CPU's status and message. */
static void
expect_same_error(const char *what, ops_status cpu_st, const char *cpu_msg, ops_status gpu_st)
{
    ck_assert_msg(cpu_st != OPS_OK, "%s: the CPU accepted it", what);
    ck_assert_msg(gpu_st == cpu_st, "%s: CUDA status %d, CPU %d (%s)", what, gpu_st, cpu_st, ops_last_error());
    ck_assert_msg(strcmp(cpu_msg, ops_last_error()) == 0, "%s: CUDA '%s', CPU '%s'", what, ops_last_error(), cpu_msg);
}

/* ---- normalization ---------------------------------------------------------------- */

START_TEST(test_layer_norm_long_and_many_rows)
{
    /* rows of 5000 (each thread of a block walks ~20 elements), and 1000 short rows */
    static const int64_t shapes[2][2] = {{3, 5000}, {1000, 37}};
    for (int k = 0; k < 2; k++) {
        const int64_t M = shapes[k][0], N = shapes[k][1];
        ops_tensor *x = randn(OPS_INTS(M, N), OPS_FLOAT32), *w = randn(OPS_INTS(N), OPS_FLOAT32),
                   *b = randn(OPS_INTS(N), OPS_FLOAT32);
        /* a large mean: the two-pass statistics keep the variance */
        ops_tensor *xs = ops_add_scalar(x, OPS_SCALAR_FLOAT(1000.0), OPS_SCALAR_INT(1));
        ops_tensor *dx = to_cuda(xs), *dw = to_cuda(w), *db = to_cuda(b);
        ops_tensor *r[3] = {NULL}, *g[3] = {NULL};
        ck_assert_int_eq(ops_native_layer_norm(xs, OPS_INTS(N), w, b, 1e-5, &r[0], &r[1], &r[2]), OPS_OK);
        ck_assert_msg(ops_native_layer_norm(dx, OPS_INTS(N), dw, db, 1e-5, &g[0], &g[1], &g[2]) == OPS_OK, "%s",
                      ops_last_error());
        /* x is near 1000, where float32's spacing is 6.1e-5: each side rounds x - mean in
         * float32 (as PyTorch's CPU kernel does), so their y may differ by about
         * |w| rstd 6.1e-5, |w| up to ~4 for randn weights */
        expect_close("native_layer_norm y", r[0], g[0], 1e-4, 4e-4);
        expect_close("native_layer_norm mean", r[1], g[1], 1e-6, 1e-6);
        expect_close("native_layer_norm rstd", r[2], g[2], 1e-5, 1e-5);
        for (int i = 0; i < 3; i++) {
            ops_tensor_release(r[i]);
            ops_tensor_release(g[i]);
        }
        ops_tensor *values[] = {x, w, b, xs, dx, dw, db};
        for (size_t i = 0; i < sizeof values / sizeof *values; i++)
            ops_tensor_release(values[i]);
    }
}
END_TEST

/* native_layer_norm_backward's CUDA kernel (one block per row for dx, column partials
 * for dweight / dbias added in a fixed order) against the CPU's loop: rows longer than
 * a block, many rows, more rows than LNB_MAX_CHUNKS chunks of 32 (longer chunks), no
 * weight, every output left out in turn, float32 and float64; two runs give the same
 * bits. */
START_TEST(test_layer_norm_backward)
{
    static const struct {
        int64_t M, N;
        bool weight, mask[3];
        ops_dtype dt;
        double tol;
    } cases[] = {
        {3, 5000, true, {true, true, true}, OPS_FLOAT64, 1e-11},
        {3, 5000, true, {true, true, true}, OPS_FLOAT32, 2e-5},
        {1000, 37, true, {true, true, false}, OPS_FLOAT32, 2e-5},
        {70, 19, false, {true, false, true}, OPS_FLOAT64, 1e-11},
        {5, 300, true, {false, true, false}, OPS_FLOAT64, 1e-11},
        {33000, 2, true, {false, true, true}, OPS_FLOAT64, 1e-11},
        {0, 4, true, {true, true, true}, OPS_FLOAT32, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t M = cases[c].M, N = cases[c].N;
        const ops_dtype dt = cases[c].dt;
        ops_tensor *x = randn(OPS_INTS(M, N), dt), *g = randn(OPS_INTS(M, N), dt);
        ops_tensor *w = cases[c].weight ? randn(OPS_INTS(N), dt) : NULL;
        ops_tensor *y = NULL, *mean = NULL, *rstd = NULL;
        ck_assert_int_eq(ops_native_layer_norm(x, OPS_INTS(N), w, NULL, 1e-5, &y, &mean, &rstd), OPS_OK);
        ops_tensor *dg = to_cuda(g), *dx = to_cuda(x), *dm = to_cuda(mean), *dr = to_cuda(rstd);
        ops_tensor *dw = w != NULL ? to_cuda(w) : NULL;
        const ops_bool_list mask = {cases[c].mask, 3};
        ops_tensor *r[3] = {NULL}, *d[3] = {NULL}, *e[3] = {NULL};
        ck_assert_msg(ops_native_layer_norm_backward(g, x, OPS_INTS(N), mean, rstd, w, NULL, mask, &r[0], &r[1],
                                                     &r[2]) == OPS_OK, "%s", ops_last_error());
        ck_assert_msg(ops_native_layer_norm_backward(dg, dx, OPS_INTS(N), dm, dr, dw, NULL, mask, &d[0], &d[1],
                                                     &d[2]) == OPS_OK, "%s", ops_last_error());
        ck_assert_int_eq(ops_native_layer_norm_backward(dg, dx, OPS_INTS(N), dm, dr, dw, NULL, mask, &e[0], &e[1],
                                                        &e[2]), OPS_OK);
        for (int k = 0; k < 3; k++) {
            char what[96];
            snprintf(what, sizeof what, "native_layer_norm_backward case %zu output %d", c, k);
            ck_assert_int_eq(d[k]->ndim, r[k]->ndim);
            for (int i = 0; i < r[k]->ndim; i++)
                ck_assert_int_eq(d[k]->sizes[i], r[k]->sizes[i]);
            expect_close(what, r[k], d[k], cases[c].tol, cases[c].tol);
            /* the same bits on the device twice (widened to float64 exactly) */
            ops_tensor *h1 = host_f64(d[k]), *h2 = host_f64(e[k]);
            ck_assert_msg(memcmp(ops_tensor_data_ptr(h1), ops_tensor_data_ptr(h2),
                                 (size_t)ops_tensor_numel(h1) * sizeof(double)) == 0,
                          "%s: two runs differ", what);
            ops_tensor_release(h1);
            ops_tensor_release(h2);
        }
        for (int k = 0; k < 3; k++) {
            ops_tensor_release(r[k]);
            ops_tensor_release(d[k]);
            ops_tensor_release(e[k]);
        }
        ops_tensor *values[] = {x, g, w, y, mean, rstd, dg, dx, dm, dr, dw};
        for (size_t i = 0; i < sizeof values / sizeof *values; i++)
            ops_tensor_release(values[i]);
    }
}
END_TEST

START_TEST(test_layer_norm_strided_half)
{
    /* a transposed float16 input, normalized over its last two dims, no affine */
    ops_tensor *x = randn(OPS_INTS(6, 40, 30), OPS_FLOAT16);
    ops_tensor *dx = to_cuda(x);
    ops_tensor *xt = ops_transpose(x, 1, 2), *dxt = ops_transpose(dx, 1, 2);
    ops_tensor *r = ops_layer_norm(xt, OPS_INTS(30, 40), NULL, NULL, 1e-5, true);
    ops_tensor *g = ops_layer_norm(dxt, OPS_INTS(30, 40), NULL, NULL, 1e-5, true);
    expect_close("layer_norm float16 transposed", r, g, 2e-3, 2e-3);
    /* the shape check names the same shapes */
    ck_assert_ptr_null(ops_layer_norm(xt, OPS_INTS(30), NULL, NULL, 1e-5, true));
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ops_last_error());
    ck_assert_ptr_null(ops_layer_norm(dxt, OPS_INTS(30), NULL, NULL, 1e-5, true));
    expect_same_error("layer_norm shape", OPS_ERR_SHAPE, msg, ops_last_status());
    ops_tensor *values[] = {x, dx, xt, dxt, r, g};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

START_TEST(test_group_norm)
{
    ops_tensor *x = randn(OPS_INTS(3, 6, 33, 17), OPS_FLOAT64), *w = randn(OPS_INTS(6), OPS_FLOAT64),
               *b = randn(OPS_INTS(6), OPS_FLOAT64);
    ops_tensor *dx = to_cuda(x), *dw = to_cuda(w), *db = to_cuda(b);
    ops_tensor *r[3] = {NULL}, *g[3] = {NULL};
    ck_assert_int_eq(ops_native_group_norm(x, w, b, 3, 6, 33 * 17, 3, 1e-5, &r[0], &r[1], &r[2]), OPS_OK);
    ck_assert_msg(ops_native_group_norm(dx, dw, db, 3, 6, 33 * 17, 3, 1e-5, &g[0], &g[1], &g[2]) == OPS_OK, "%s",
                  ops_last_error());
    for (int i = 0; i < 3; i++) {
        expect_close("native_group_norm", r[i], g[i], 1e-10, 1e-10);
        ops_tensor_release(r[i]);
        ops_tensor_release(g[i]);
    }
    ops_tensor *rr = ops_group_norm(x, 2, NULL, b, 1e-5, true), *gg = ops_group_norm(dx, 2, NULL, db, 1e-5, true);
    expect_close("group_norm", rr, gg, 1e-10, 1e-10);
    ops_tensor *values[] = {x, w, b, dx, dw, db, rr, gg};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

START_TEST(test_batch_norm_train_and_eval)
{
    /* channels-last memory (a permuted view): the statistics read across the batch */
    ops_tensor *x0 = randn(OPS_INTS(4, 9, 11, 5), OPS_FLOAT32);
    ops_tensor *x = ops_permute(x0, OPS_INTS(0, 3, 1, 2)); /* (4, 5, 9, 11) */
    ops_tensor *dx0 = to_cuda(x0), *dx = ops_permute(dx0, OPS_INTS(0, 3, 1, 2));
    ops_tensor *w = randn(OPS_INTS(5), OPS_FLOAT32), *b = randn(OPS_INTS(5), OPS_FLOAT32);
    ops_tensor *rm = randn(OPS_INTS(5), OPS_FLOAT32), *rv = ops_full(OPS_INTS(5), OPS_SCALAR_FLOAT(2.0), OPS_FLOAT32,
                                                                      OPS_DEVICE_CPU);
    ops_tensor *dw = to_cuda(w), *db = to_cuda(b), *drm = to_cuda(rm), *drv = to_cuda(rv);
    for (int training = 1; training >= 0; training--) {
        ops_tensor *r[3] = {NULL}, *g[3] = {NULL};
        ck_assert_int_eq(ops_native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5, &r[0], &r[1], &r[2]), OPS_OK);
        ck_assert_msg(ops_native_batch_norm(dx, dw, db, drm, drv, training, 0.1, 1e-5, &g[0], &g[1], &g[2]) == OPS_OK,
                      "%s", ops_last_error());
        for (int i = 0; i < 3; i++) {
            expect_close(training ? "native_batch_norm (training)" : "native_batch_norm (eval)", r[i], g[i], 1e-5,
                         1e-5);
            ops_tensor_release(r[i]);
            ops_tensor_release(g[i]);
        }
        /* the running statistics were updated alike (in training) */
        expect_close("running_mean", rm, drm, 1e-6, 1e-6);
        expect_close("running_var", rv, drv, 1e-6, 1e-6);
    }
    ops_tensor *values[] = {x0, x, dx0, dx, w, b, rm, rv, dw, db, drm, drv};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

START_TEST(test_embedding)
{
    ops_tensor *w = randn(OPS_INTS(50, 7), OPS_FLOAT32);
    int64_t iv[12] = {0, 49, 3, 3, 17, 8, 22, 1, 0, 48, 5, 9};
    ops_tensor *ic = ops_tensor_from_data(iv, OPS_INTS(3, 4), OPS_INT64);
    ops_tensor *wt = ops_transpose(w, 0, 1); /* (7, 50): rows are strided columns */
    ops_tensor *dw = to_cuda(w), *dwt = ops_transpose(dw, 0, 1), *di = to_cuda(ic);
    ops_tensor *dit = ops_transpose(di, 0, 1), *it = ops_transpose(ic, 0, 1);
    ops_tensor *r = ops_embedding(w, it, -1, false, false), *g = ops_embedding(dw, dit, -1, false, false);
    expect_close("embedding", r, g, 0, 0);
    ops_tensor_release(r);
    ops_tensor_release(g);
    /* strided weight rows, int indices below 7 */
    int64_t sv[4] = {6, 0, 2, 6};
    ops_tensor *si = ops_tensor_from_data(sv, OPS_INTS(4), OPS_INT64), *dsi = to_cuda(si);
    r = ops_embedding(wt, si, -1, false, false);
    g = ops_embedding(dwt, dsi, -1, false, false);
    expect_close("embedding (strided weight)", r, g, 0, 0);
    ops_tensor_release(r);
    ops_tensor_release(g);
    /* the first bad index is the one named */
    int64_t bv[4] = {1, 60, -2, 70};
    ops_tensor *bi = ops_tensor_from_data(bv, OPS_INTS(4), OPS_INT64), *dbi = to_cuda(bi);
    ck_assert_ptr_null(ops_embedding(w, bi, -1, false, false));
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ops_last_error());
    ck_assert_ptr_null(ops_embedding(dw, dbi, -1, false, false));
    expect_same_error("embedding out of range", OPS_ERR_INDEX, msg, ops_last_status());
    ops_tensor *values[] = {w, ic, wt, dw, dwt, di, dit, it, si, dsi, bi, dbi};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

/* ---- pooling ------------------------------------------------------------------------ */

START_TEST(test_max_pool_borders_and_nan)
{
    ops_tensor *x = randn(OPS_INTS(2, 3, 13, 11), OPS_FLOAT32);
    /* NaN at a window's border, and equal maxima (the first must win) */
    float *p = ops_tensor_data_ptr(x);
    p[5 * 11 + 10] = NAN;
    p[143 + 2] = p[143 + 3] = 50.0f;
    ops_tensor *dx0 = to_cuda(x), *dx = ops_transpose(dx0, 2, 3), *xt = ops_transpose(x, 2, 3);
    static const int64_t cfg[][6] = {/* k, s, pad, dil, ceil */
                                     {3, 2, 1, 1, 0}, {3, 2, 1, 1, 1}, {2, 3, 1, 2, 1}, {4, 1, 2, 1, 0}};
    for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
        ops_tensor *rv = NULL, *ri = NULL, *gv = NULL, *gi = NULL;
        const int64_t *q = cfg[c];
        ck_assert_int_eq(ops_max_pool2d_with_indices(xt, OPS_INTS(q[0]), OPS_INTS(q[1]), OPS_INTS(q[2]),
                                                     OPS_INTS(q[3]), q[4], &rv, &ri),
                         OPS_OK);
        ck_assert_msg(ops_max_pool2d_with_indices(dx, OPS_INTS(q[0]), OPS_INTS(q[1]), OPS_INTS(q[2]), OPS_INTS(q[3]),
                                                  q[4], &gv, &gi) == OPS_OK,
                      "%s", ops_last_error());
        expect_close("max_pool2d values", rv, gv, 0, 0);
        expect_close("max_pool2d indices", ri, gi, 0, 0);
        /* backward: the gradient scattered at those indices (atomics on the device) */
        ops_tensor *go = randn((ops_int_list){rv->sizes, rv->ndim}, OPS_FLOAT32), *dgo = to_cuda(go);
        ops_tensor *rb = ops_max_pool2d_with_indices_backward(go, xt, OPS_INTS(q[0]), OPS_INTS(q[1]), OPS_INTS(q[2]),
                                                              OPS_INTS(q[3]), q[4], ri);
        ops_tensor *gb = ops_max_pool2d_with_indices_backward(dgo, dx, OPS_INTS(q[0]), OPS_INTS(q[1]), OPS_INTS(q[2]),
                                                              OPS_INTS(q[3]), q[4], gi);
        expect_close("max_pool2d_with_indices_backward", rb, gb, 1e-6, 1e-6);
        ops_tensor *values[] = {rv, ri, gv, gi, go, dgo, rb, gb};
        for (size_t i = 0; i < sizeof values / sizeof *values; i++)
            ops_tensor_release(values[i]);
    }
    /* int32 max pooling, and max_pool1d */
    ops_tensor *xi = ops_to_dtype(x, OPS_INT32, false, false, OPS_MEMORY_FORMAT_NONE), *dxi = to_cuda(xi);
    ops_tensor *r = ops_max_pool2d(xi, OPS_INTS(2), OPS_INTS(), OPS_INTS(1), OPS_INTS(1), true);
    ops_tensor *g = ops_max_pool2d(dxi, OPS_INTS(2), OPS_INTS(), OPS_INTS(1), OPS_INTS(1), true);
    expect_close("max_pool2d int32", r, g, 0, 0);
    ops_tensor_release(r);
    ops_tensor_release(g);
    ops_tensor *x1 = randn(OPS_INTS(4, 301), OPS_FLOAT64), *dx1 = to_cuda(x1);
    r = ops_max_pool1d(x1, OPS_INTS(5), OPS_INTS(3), OPS_INTS(2), OPS_INTS(2), true);
    g = ops_max_pool1d(dx1, OPS_INTS(5), OPS_INTS(3), OPS_INTS(2), OPS_INTS(2), true);
    expect_close("max_pool1d", r, g, 0, 0);
    ops_tensor *values[] = {x, dx0, dx, xt, xi, dxi, r, g, x1, dx1};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

START_TEST(test_avg_and_adaptive_pool)
{
    ops_tensor *x = randn(OPS_INTS(2, 4, 17, 10), OPS_FLOAT16), *dx = to_cuda(x);
    const int64_t div = 5;
    for (int v = 0; v < 4; v++) {
        const bool ceil = v & 1, include = v & 2;
        ops_tensor *r = ops_avg_pool2d(x, OPS_INTS(3, 4), OPS_INTS(2, 3), OPS_INTS(1, 2), ceil, include,
                                       v == 3 ? &div : NULL);
        ops_tensor *g = ops_avg_pool2d(dx, OPS_INTS(3, 4), OPS_INTS(2, 3), OPS_INTS(1, 2), ceil, include,
                                       v == 3 ? &div : NULL);
        expect_close("avg_pool2d float16", r, g, 1e-3, 1e-3);
        ops_tensor_release(r);
        ops_tensor_release(g);
    }
    ops_tensor *r = ops_adaptive_avg_pool2d(x, OPS_INTS(5, 3)), *g = ops_adaptive_avg_pool2d(dx, OPS_INTS(5, 3));
    expect_close("adaptive_avg_pool2d", r, g, 1e-3, 1e-3);
    ops_tensor_release(r);
    ops_tensor_release(g);
    ops_tensor *rv = NULL, *ri = NULL, *gv = NULL, *gi = NULL;
    ck_assert_int_eq(ops_adaptive_max_pool2d(x, OPS_INTS(6, 4), &rv, &ri), OPS_OK);
    ck_assert_msg(ops_adaptive_max_pool2d(dx, OPS_INTS(6, 4), &gv, &gi) == OPS_OK, "%s", ops_last_error());
    expect_close("adaptive_max_pool2d", rv, gv, 0, 0);
    expect_close("adaptive_max_pool2d indices", ri, gi, 0, 0);
    /* a corrupted index fails before anything is written, with the CPU's message */
    ops_tensor *bad = ops_clone(ri, OPS_MEMORY_FORMAT_NONE), *dbad = ops_clone(gi, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *col = ops_narrow(bad, 3, 1, 1), *dcol = ops_narrow(dbad, 3, 1, 1);
    ck_assert_int_eq(ops_fill_(col, OPS_SCALAR_INT(170)), OPS_OK);
    ck_assert_int_eq(ops_fill_(dcol, OPS_SCALAR_INT(170)), OPS_OK);
    ops_tensor *go = ops_ones_like(rv, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED,
                                   OPS_MEMORY_FORMAT_NONE), *dgo = to_cuda(go);
    ck_assert_ptr_null(ops_adaptive_max_pool2d_backward(go, x, bad));
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ops_last_error());
    ck_assert_ptr_null(ops_adaptive_max_pool2d_backward(dgo, dx, dbad));
    expect_same_error("adaptive_max_pool2d_backward bad index", OPS_ERR_INDEX, msg, ops_last_status());
    ops_tensor *values[] = {x, dx, rv, ri, gv, gi, bad, dbad, col, dcol, go, dgo};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

/* ---- losses ------------------------------------------------------------------------- */

START_TEST(test_pointwise_losses_large)
{
    /* 2^20 + 3 elements: the device sum takes two passes over many blocks */
    ops_tensor *a = randn(OPS_INTS(1025, 1023), OPS_FLOAT32), *b = randn(OPS_INTS(1023), OPS_FLOAT32);
    ops_tensor *da = to_cuda(a), *db = to_cuda(b);
    for (int red = 0; red <= 2; red++) {
        ops_tensor *r = ops_mse_loss(a, b, red), *g = ops_mse_loss(da, db, red);
        expect_close("mse_loss", r, g, 1e-6, 1e-6);
        ops_tensor_release(r);
        ops_tensor_release(g);
        r = ops_smooth_l1_loss(a, b, red, 0.5);
        g = ops_smooth_l1_loss(da, db, red, 0.5);
        expect_close("smooth_l1_loss", r, g, 1e-6, 1e-6);
        ops_tensor_release(r);
        ops_tensor_release(g);
        r = ops_huber_loss(a, b, red, 0.7);
        g = ops_huber_loss(da, db, red, 0.7);
        expect_close("huber_loss", r, g, 1e-6, 1e-6);
        ops_tensor_release(r);
        ops_tensor_release(g);
    }
    ops_tensor *r = ops_l1_loss(a, b, 2), *g = ops_l1_loss(da, db, 2);
    expect_close("l1_loss", r, g, 1e-6, 1e-6);
    ops_tensor *values[] = {a, b, da, db, r, g};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

START_TEST(test_bce)
{
    ops_tensor *x = ops_rand(OPS_INTS(37, 5), NULL, OPS_FLOAT64, OPS_DEVICE_CPU), *t = ops_rand(OPS_INTS(37, 5), NULL,
                                                                                                 OPS_FLOAT64,
                                                                                                 OPS_DEVICE_CPU);
    ops_tensor *w = randn(OPS_INTS(37, 5), OPS_FLOAT64), *pw = randn(OPS_INTS(5), OPS_FLOAT64);
    ops_tensor *dx = to_cuda(x), *dt = to_cuda(t), *dw = to_cuda(w), *dpw = to_cuda(pw);
    for (int red = 0; red <= 2; red++) {
        ops_tensor *r = ops_binary_cross_entropy(x, t, w, red), *g = ops_binary_cross_entropy(dx, dt, dw, red);
        expect_close("binary_cross_entropy", r, g, 1e-12, 1e-12);
        ops_tensor_release(r);
        ops_tensor_release(g);
        r = ops_binary_cross_entropy_with_logits(w, t, NULL, pw, red);
        g = ops_binary_cross_entropy_with_logits(dw, dt, NULL, dpw, red);
        expect_close("binary_cross_entropy_with_logits", r, g, 1e-12, 1e-12);
        ops_tensor_release(r);
        ops_tensor_release(g);
    }
    /* input outside [0, 1]: the CPU's error, out= untouched */
    ops_tensor *out = cuda_full(OPS_INTS(37, 5), -7.0, OPS_FLOAT64);
    ck_assert_ptr_null(ops_binary_cross_entropy(w, t, NULL, 0));
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ops_last_error());
    ck_assert_int_ne(ops_binary_cross_entropy_out(dw, dt, NULL, 0, out), OPS_OK);
    expect_same_error("binary_cross_entropy range", OPS_ERR_VALUE, msg, ops_last_status());
    ops_tensor *sentinel = ops_full(OPS_INTS(37, 5), OPS_SCALAR_FLOAT(-7.0), OPS_FLOAT64, OPS_DEVICE_CPU);
    expect_close("binary_cross_entropy out= untouched", sentinel, out, 0, 0);
    ops_tensor *values[] = {x, t, w, pw, dx, dt, dw, dpw, out, sentinel};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

START_TEST(test_nll_and_cross_entropy)
{
    /* (N, C, S): 4 x 7 x 3x5, weights, an ignored target */
    ops_tensor *x = randn(OPS_INTS(4, 7, 3, 5), OPS_FLOAT32), *w = ops_rand(OPS_INTS(7), NULL, OPS_FLOAT32,
                                                                            OPS_DEVICE_CPU);
    int64_t tv[60];
    for (int i = 0; i < 60; i++)
        tv[i] = i % 11 == 3 ? -100 : (i * 5) % 7;
    ops_tensor *t = ops_tensor_from_data(tv, OPS_INTS(4, 3, 5), OPS_INT64);
    ops_tensor *dx = to_cuda(x), *dw = to_cuda(w), *dt = to_cuda(t);
    for (int red = 0; red <= 2; red++) {
        ops_tensor *r = ops_nll_loss2d(x, t, w, red, -100), *g = ops_nll_loss2d(dx, dt, dw, red, -100);
        expect_close("nll_loss2d", r, g, 1e-6, 1e-6);
        ops_tensor_release(r);
        ops_tensor_release(g);
        for (int smooth = 0; smooth < 2; smooth++) {
            r = ops_cross_entropy_loss(x, t, w, red, -100, smooth ? 0.2 : 0.0);
            g = ops_cross_entropy_loss(dx, dt, dw, red, -100, smooth ? 0.2 : 0.0);
            expect_close("cross_entropy_loss (indices)", r, g, 1e-6, 1e-6);
            ops_tensor_release(r);
            ops_tensor_release(g);
        }
        ops_tensor *p = ops_softmax(x, 1, OPS_DTYPE_NONE), *dp = to_cuda(p);
        r = ops_cross_entropy_loss(x, p, NULL, red, -100, 0.1);
        g = ops_cross_entropy_loss(dx, dp, NULL, red, -100, 0.1);
        expect_close("cross_entropy_loss (probabilities)", r, g, 1e-6, 1e-6);
        ops_tensor *values[] = {r, g, p, dp};
        for (size_t i = 0; i < sizeof values / sizeof *values; i++)
            ops_tensor_release(values[i]);
    }
    /* a target out of range: the CPU's message naming the first bad target, out= untouched */
    ops_tensor *x2 = randn(OPS_INTS(6, 4), OPS_FLOAT32), *dx2 = to_cuda(x2);
    int64_t bv[6] = {0, 3, 9, -100, -1, 2};
    ops_tensor *bt = ops_tensor_from_data(bv, OPS_INTS(6), OPS_INT64), *dbt = to_cuda(bt);
    ops_tensor *out = cuda_full(OPS_INTS(6), 42.0, OPS_FLOAT32);
    ck_assert_ptr_null(ops_nll_loss(x2, bt, NULL, 0, -100));
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ops_last_error());
    ck_assert_int_ne(ops_nll_loss_out(dx2, dbt, NULL, 0, -100, out), OPS_OK);
    expect_same_error("nll_loss target out of range", OPS_ERR_INDEX, msg, ops_last_status());
    ops_tensor *sentinel = ops_full(OPS_INTS(6), OPS_SCALAR_FLOAT(42.0), OPS_FLOAT32, OPS_DEVICE_CPU);
    expect_close("nll_loss out= untouched", sentinel, out, 0, 0);
    ops_tensor *values[] = {x, w, t, dx, dw, dt, x2, dx2, bt, dbt, out, sentinel};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

/* ---- other NN ops ------------------------------------------------------------------- */

START_TEST(test_pad_upsample_shuffle_one_hot)
{
    ops_tensor *x = randn(OPS_INTS(2, 3, 9, 8), OPS_FLOAT32), *dx0 = to_cuda(x);
    ops_tensor *xt = ops_transpose(x, 2, 3), *dx = ops_transpose(dx0, 2, 3);
    static const char *const modes[] = {"constant", "reflect", "replicate", "circular"};
    const double value = 2.5;
    for (int m = 0; m < 4; m++) {
        ops_tensor *r = ops_pad(xt, OPS_INTS(2, 3, 1, 4), modes[m], m == 0 ? &value : NULL);
        ops_tensor *g = ops_pad(dx, OPS_INTS(2, 3, 1, 4), modes[m], m == 0 ? &value : NULL);
        expect_close(modes[m], r, g, 0, 0);
        ops_tensor_release(r);
        ops_tensor_release(g);
    }
    ops_tensor *r = ops_pad(xt, OPS_INTS(-1, 2, 3, -2), "constant", NULL);
    ops_tensor *g = ops_pad(dx, OPS_INTS(-1, 2, 3, -2), "constant", NULL);
    expect_close("pad (negative)", r, g, 0, 0);
    ops_tensor_release(r);
    ops_tensor_release(g);
    for (int ac = 0; ac < 2; ac++) {
        r = ops_upsample_bilinear2d(xt, OPS_INTS(13, 21), ac, NULL, NULL);
        g = ops_upsample_bilinear2d(dx, OPS_INTS(13, 21), ac, NULL, NULL);
        expect_close("upsample_bilinear2d", r, g, 1e-6, 1e-6);
        ops_tensor_release(r);
        ops_tensor_release(g);
    }
    ops_tensor *x1 = randn(OPS_INTS(3, 2, 10), OPS_FLOAT16), *dx1 = to_cuda(x1);
    r = ops_upsample_linear1d(x1, OPS_INTS(23), false, NULL);
    g = ops_upsample_linear1d(dx1, OPS_INTS(23), false, NULL);
    expect_close("upsample_linear1d float16", r, g, 1e-3, 1e-3);
    ops_tensor_release(r);
    ops_tensor_release(g);
    r = ops_upsample_nearest2d(xt, OPS_INTS(5, 19), NULL, NULL);
    g = ops_upsample_nearest2d(dx, OPS_INTS(5, 19), NULL, NULL);
    expect_close("upsample_nearest2d", r, g, 0, 0);
    ops_tensor_release(r);
    ops_tensor_release(g);
    ops_tensor *xs = randn(OPS_INTS(2, 18, 4, 5), OPS_FLOAT32), *dxs = to_cuda(xs);
    r = ops_pixel_shuffle(xs, 3);
    g = ops_pixel_shuffle(dxs, 3);
    expect_close("pixel_shuffle", r, g, 0, 0);
    ops_tensor_release(r);
    ops_tensor_release(g);
    /* one_hot of a non-contiguous index tensor; a negative class is the CPU's error */
    int64_t iv[6] = {4, 0, 2, 2, 5, 1};
    ops_tensor *ic = ops_tensor_from_data(iv, OPS_INTS(2, 3), OPS_INT64), *dic0 = to_cuda(ic);
    ops_tensor *it = ops_transpose(ic, 0, 1), *dic = ops_transpose(dic0, 0, 1);
    r = ops_one_hot(it, -1);
    g = ops_one_hot(dic, -1);
    expect_close("one_hot", r, g, 0, 0);
    ops_tensor_release(r);
    ops_tensor_release(g);
    ck_assert_ptr_null(ops_one_hot(it, 5));
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ops_last_error());
    ck_assert_ptr_null(ops_one_hot(dic, 5));
    expect_same_error("one_hot num_classes", OPS_ERR_VALUE, msg, ops_last_status());
    ops_tensor *values[] = {x, dx0, xt, dx, x1, dx1, xs, dxs, ic, dic0, it, dic};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

START_TEST(test_past_one_grid)
{
    /* 2^24 + 4096 outputs: more than a grid of 65535 blocks of 256 threads, so the
     * gather's grid-stride loop takes a second lap (int8, compared bytewise) */
    const int64_t n = (int64_t)1 << 24;
    ops_tensor *x = ops_randint_low(-128, 127, OPS_INTS(1, n), NULL, OPS_INT8, OPS_DEVICE_CPU), *dx = NULL;
    ck_assert_ptr_nonnull(x);
    dx = to_cuda(x);
    const double v = 3;
    ops_tensor *r = ops_pad(x, OPS_INTS(1000, 3096), "constant", &v), *g = ops_pad(dx, OPS_INTS(1000, 3096),
                                                                                   "constant", &v);
    expect_equal_bytes("pad past one grid", r, g);
    ops_tensor *values[] = {x, dx, r, g};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ops_tensor_release(values[i]);
}
END_TEST

#endif

int
main(void)
{
#ifndef OPS_WITH_CUDA
    printf("SKIP: libops was built without the CUDA backend\n");
    return 77;
#else
    if (ops_cuda_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    Suite *s = suite_create("cuda_nn");
    TCase *tc = tcase_create("nn");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_layer_norm_long_and_many_rows);
    tcase_add_test(tc, test_layer_norm_strided_half);
    tcase_add_test(tc, test_layer_norm_backward);
    tcase_add_test(tc, test_group_norm);
    tcase_add_test(tc, test_batch_norm_train_and_eval);
    tcase_add_test(tc, test_embedding);
    tcase_add_test(tc, test_max_pool_borders_and_nan);
    tcase_add_test(tc, test_avg_and_adaptive_pool);
    tcase_add_test(tc, test_pointwise_losses_large);
    tcase_add_test(tc, test_bce);
    tcase_add_test(tc, test_nll_and_cross_entropy);
    tcase_add_test(tc, test_pad_upsample_shuffle_one_hot);
    tcase_add_test(tc, test_past_one_grid);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

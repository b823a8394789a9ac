/* CUDA reductions, softmax and scans (kernels/cuda/reduce.cu, softmax.cu, scan.cu)
 * where the conformance cases do not reach: sizes that take each launcher path (a
 * warp or a block per output, a thread per output, splits into partials reduced in
 * further passes), strided and non-contiguous inputs, 2^20+ element reductions
 * against double-precision C loops, argmax/max.dim ties and NaN, empty dims,
 * keepdim, out= and error messages.  Oracles: plain C loops, or the CPU kernel's
 * result for the same input.
 *
 * Without a CUDA device (or in a CPU-only build) the program exits 77 (SKIP). */
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
#include "ops_op_all.h"
#include "ops_op_amax.h"
#include "ops_op_aminmax.h"
#include "ops_op_any.h"
#include "ops_op_argmax.h"
#include "ops_op_argmin.h"
#include "ops_op_copy.h"
#include "ops_op_cummax.h"
#include "ops_op_cummin.h"
#include "ops_op_cumprod.h"
#include "ops_op_cumsum.h"
#include "ops_op_full.h"
#include "ops_op_linalg_vector_norm.h"
#include "ops_op_log_softmax.h"
#include "ops_op_logsumexp.h"
#include "ops_op_max.h"
#include "ops_op_mean.h"
#include "ops_op_min.h"
#include "ops_op_nanmean.h"
#include "ops_op_narrow.h"
#include "ops_op_permute.h"
#include "ops_op_prod.h"
#include "ops_op_select.h"
#include "ops_op_slice.h"
#include "ops_op_softmax.h"
#include "ops_op_std_mean.h"
#include "ops_op_sum.h"
#include "ops_op_to.h"
#include "ops_op_var.h"
#include "ops_cuda.h"
#include "ops_internal.h"

#define GPU OPS_DEVICE_CUDA(0)

/* Deterministic pseudo-random values in [0, 1). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double
urand(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* A new CPU float tensor of the given shape with values lo + (hi - lo) * urand(). */
static ops_tensor *
cpu_rand(ops_int_list sizes, ops_dtype dt, double lo, double hi)
{
    int64_t n = 1;
    for (int64_t i = 0; i < sizes.len; i++)
        n *= sizes.data[i];
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        buf[i] = lo + (hi - lo) * urand();
    ops_tensor *d = ops_tensor_from_data(buf, sizes, OPS_FLOAT64);
    free(buf);
    ck_assert_ptr_nonnull(d);
    ops_tensor *t = ops_to_dtype(d, dt, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor_release(d);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* A new contiguous tensor on dev (uninitialised): the runtime's allocation, which
 * needs no creation kernel on the device. */
static ops_tensor *
new_on(ops_int_list sizes, ops_dtype dt, ops_device dev)
{
    ops_tensor *r = ops_tensor_new("test", (int)sizes.len, sizes.data, NULL, dt, dev);
    ck_assert_msg(r != NULL, "%s", ops_last_error());
    return r;
}

/* A copy of t on device dev (contiguous). */
static ops_tensor *
copy_to(const ops_tensor *t, ops_device dev)
{
    ops_tensor *r = new_on((ops_int_list){ops_tensor_sizes(t), ops_tensor_ndim(t)}, ops_tensor_dtype(t), dev);
    ck_assert_msg(ops_copy_(r, t, false) == OPS_OK, "copy: %s", ops_last_error());
    return r;
}

/* t (any device, any dtype) as a contiguous CPU float64 buffer the caller frees. */
static double *
host_values(const ops_tensor *t, int64_t *n)
{
    ops_tensor *c = copy_to(t, OPS_DEVICE_CPU);
    ops_tensor *d = ops_to_dtype(c, OPS_FLOAT64, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(d);
    *n = ops_tensor_numel(d);
    double *v = malloc((size_t)(*n > 0 ? *n : 1) * sizeof(double));
    memcpy(v, ops_tensor_data_ptr(d), (size_t)*n * sizeof(double));
    ops_tensor_release(c);
    ops_tensor_release(d);
    return v;
}

static void
assert_same_shape(const ops_tensor *a, const ops_tensor *b)
{
    ck_assert_int_eq(ops_tensor_ndim(a), ops_tensor_ndim(b));
    for (int64_t d = 0; d < ops_tensor_ndim(a); d++)
        ck_assert_int_eq(ops_tensor_sizes(a)[d], ops_tensor_sizes(b)[d]);
}

/* want (CPU) and got (CUDA) have the same shape and dtype and |got - want| <=
 * atol + rtol * |want| elementwise (NaN where NaN; rtol = atol = 0: exact). */
static void
assert_close(const ops_tensor *want, const ops_tensor *got, double rtol, double atol)
{
    ck_assert_msg(want != NULL && got != NULL, "%s", ops_last_error());
    assert_same_shape(want, got);
    ck_assert_int_eq(ops_tensor_dtype(want), ops_tensor_dtype(got));
    ck_assert_int_eq(ops_tensor_device(got).type, OPS_CUDA);
    int64_t n, m;
    double *w = host_values(want, &n), *g = host_values(got, &m);
    ck_assert_int_eq(n, m);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(w[i])) {
            ck_assert_msg(isnan(g[i]), "element %lld: want NaN, got %.17g", (long long)i, g[i]);
            continue;
        }
        if (isinf(w[i])) {
            ck_assert_msg(g[i] == w[i], "element %lld: want %g, got %g", (long long)i, w[i], g[i]);
            continue;
        }
        ck_assert_msg(fabs(g[i] - w[i]) <= atol + rtol * fabs(w[i]), "element %lld of %lld: want %.17g, got %.17g",
                      (long long)i, (long long)n, w[i], g[i]);
    }
    free(w);
    free(g);
}

/* A CUDA tensor of the given shape filled with v (filled on the CPU, copied). */
static ops_tensor *
gpu_full(ops_int_list sizes, ops_scalar v, ops_dtype dt)
{
    ops_tensor *c = ops_full(sizes, v, dt, OPS_DEVICE_CPU);
    ck_assert_msg(c != NULL, "%s", ops_last_error());
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor_release(c);
    return g;
}

/* The one value of a one-element tensor on any device. */
static double
value_of(const ops_tensor *t)
{
    ck_assert_msg(t != NULL, "%s", ops_last_error());
    int64_t n;
    double *v = host_values(t, &n);
    ck_assert_int_eq(n, 1);
    const double r = v[0];
    free(v);
    return r;
}

/* ---- sums: each launcher path against a double C loop ---------------------------------- */

/* A full sum of 2^22 float32 elements: one output, split into partials (multi-pass). */
START_TEST(test_sum_full_multipass)
{
    const int64_t n = (int64_t)1 << 22;
    ops_tensor *c = cpu_rand(OPS_INTS(n), OPS_FLOAT32, -1.0, 2.0);
    const float *x = ops_tensor_data_ptr(c);
    double want = 0;
    for (int64_t i = 0; i < n; i++)
        want += x[i];
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *s = ops_sum(g, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_tensor_dtype(s), OPS_FLOAT32);
    const double got = value_of(s);
    ck_assert_msg(fabs(got - want) <= 1e-5 * fabs(want) + 1e-2, "sum: want %.10g, got %.10g", want, got);
    /* mean and the float64 sum of the same elements */
    ops_tensor *m = ops_mean(g, OPS_DTYPE_NONE);
    ck_assert(fabs(value_of(m) - want / (double)n) <= 1e-5 * fabs(want / (double)n));
    ops_tensor *s64 = ops_sum(g, OPS_FLOAT64);
    ck_assert_int_eq(ops_tensor_dtype(s64), OPS_FLOAT64);
    ck_assert(fabs(value_of(s64) - want) <= 1e-9 * fabs(want));
    ops_tensor_release(s64);
    ops_tensor_release(m);
    ops_tensor_release(s);
    ops_tensor_release(g);
    ops_tensor_release(c);
}
END_TEST

/* 2^24 ones sum to 2^24 exactly in float32, as on the CPU. */
START_TEST(test_sum_ones_exact)
{
    ops_tensor *g = gpu_full(OPS_INTS((int64_t)1 << 24), OPS_SCALAR_FLOAT(1.0), OPS_FLOAT32);
    ck_assert_msg(g != NULL, "%s", ops_last_error());
    ops_tensor *s = ops_sum(g, OPS_DTYPE_NONE);
    ck_assert(value_of(s) == 16777216.0);
    ops_tensor_release(s);
    ops_tensor_release(g);
}
END_TEST

/* int32 sums accumulate in int64 (exact, past int32's range). */
START_TEST(test_sum_int_exact)
{
    const int64_t n = ((int64_t)1 << 20) + 77;
    int32_t *v = malloc((size_t)n * sizeof(int32_t));
    int64_t want = 0;
    for (int64_t i = 0; i < n; i++) {
        v[i] = (int32_t)(urand() * 4.0e6) - 1000000;
        want += v[i];
    }
    ops_tensor *c = ops_tensor_from_data(v, OPS_INTS(n), OPS_INT32);
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *s = ops_sum(g, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_tensor_dtype(s), OPS_INT64);
    ck_assert(value_of(s) == (double)want);
    /* int64 products wrap as the CPU's: compare with the CPU kernel */
    ops_tensor *pc = ops_prod(c, OPS_DTYPE_NONE), *pg = ops_prod(g, OPS_DTYPE_NONE);
    assert_close(pc, pg, 0, 0);
    ops_tensor_release(pc);
    ops_tensor_release(pg);
    ops_tensor_release(s);
    ops_tensor_release(g);
    ops_tensor_release(c);
    free(v);
}
END_TEST

/* Many long rows (a block per row), medium rows (a warp per row) and short rows
 * (a thread per row). */
START_TEST(test_sum_rows)
{
    const int64_t shapes[][2] = {{300, 5000}, {2000, 200}, {5000, 7}, {3, 100000}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const int64_t r = shapes[k][0], n = shapes[k][1];
        ops_tensor *c = cpu_rand(OPS_INTS(r, n), OPS_FLOAT32, -1.0, 1.0);
        ops_tensor *g = copy_to(c, GPU);
        ops_tensor *s = ops_sum_dim(g, &OPS_INTS(1), false, OPS_DTYPE_NONE);
        ck_assert_msg(s != NULL, "%s", ops_last_error());
        int64_t m;
        double *got = host_values(s, &m);
        ck_assert_int_eq(m, r);
        const float *x = ops_tensor_data_ptr(c);
        for (int64_t i = 0; i < r; i++) {
            double want = 0;
            for (int64_t j = 0; j < n; j++)
                want += x[i * n + j];
            ck_assert_msg(fabs(got[i] - want) <= 1e-5 * (double)n, "[%lld x %lld] row %lld: want %g, got %g",
                          (long long)r, (long long)n, (long long)i, want, got[i]);
        }
        free(got);
        ops_tensor_release(s);
        ops_tensor_release(g);
        ops_tensor_release(c);
    }
}
END_TEST

/* Sums over dim 0 (the outputs are the contiguous dim): a thread per output, split
 * into chunks when the outputs are few. */
START_TEST(test_sum_columns)
{
    const int64_t shapes[][2] = {{20000, 40}, {100, 3000}, {3, 50000}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const int64_t r = shapes[k][0], n = shapes[k][1];
        ops_tensor *c = cpu_rand(OPS_INTS(r, n), OPS_FLOAT64, 0.0, 1.0);
        ops_tensor *g = copy_to(c, GPU);
        ops_tensor *s = ops_sum_dim(g, &OPS_INTS(0), true, OPS_DTYPE_NONE);
        ck_assert_msg(s != NULL, "%s", ops_last_error());
        ck_assert_int_eq(ops_tensor_ndim(s), 2);
        ck_assert_int_eq(ops_tensor_sizes(s)[0], 1);
        int64_t m;
        double *got = host_values(s, &m);
        ck_assert_int_eq(m, n);
        const double *x = ops_tensor_data_ptr(c);
        for (int64_t j = 0; j < n; j++) {
            double want = 0;
            for (int64_t i = 0; i < r; i++)
                want += x[i * n + j];
            ck_assert_msg(fabs(got[j] - want) <= 1e-11 * (double)r, "col %lld: want %.15g, got %.15g", (long long)j,
                          want, got[j]);
        }
        free(got);
        ops_tensor_release(s);
        ops_tensor_release(g);
        ops_tensor_release(c);
    }
}
END_TEST

/* Non-contiguous CUDA inputs: a transpose (strided reduced dim), a permuted 3-d
 * tensor reduced over two non-adjacent dims, a sliced view with a step. */
START_TEST(test_sum_strided_views)
{
    ops_tensor *c = cpu_rand(OPS_INTS(64, 7, 300), OPS_FLOAT32, -2.0, 2.0);
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *ct = ops_permute(c, OPS_INTS(2, 0, 1)), *gt = ops_permute(g, OPS_INTS(2, 0, 1));
    const ops_int_list *dims[] = {&OPS_INTS(0), &OPS_INTS(1), &OPS_INTS(2), &OPS_INTS(0, 2), &OPS_INTS(1, 2), NULL};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        ops_tensor *w = ops_sum_dim(ct, dims[k], false, OPS_DTYPE_NONE);
        ops_tensor *r = ops_sum_dim(gt, dims[k], false, OPS_DTYPE_NONE);
        assert_close(w, r, 1e-5, 1e-4);
        ops_tensor_release(w);
        ops_tensor_release(r);
        /* amax and argmax read the same strides */
        if (dims[k] != NULL && dims[k]->len == 1) {
            w = ops_amax(ct, *dims[k], false);
            r = ops_amax(gt, *dims[k], false);
            assert_close(w, r, 0, 0);
            ops_tensor_release(w);
            ops_tensor_release(r);
            w = ops_argmax(ct, &dims[k]->data[0], false);
            r = ops_argmax(gt, &dims[k]->data[0], false);
            assert_close(w, r, 0, 0);
            ops_tensor_release(w);
            ops_tensor_release(r);
        }
    }
    /* every third element of each row, from the second */
    const int64_t start = 1;
    ops_tensor *cs = ops_slice(c, 2, &start, NULL, 3), *gs = ops_slice(g, 2, &start, NULL, 3);
    ops_tensor *w = ops_sum_dim(cs, &OPS_INTS(2), false, OPS_DTYPE_NONE);
    ops_tensor *r = ops_sum_dim(gs, &OPS_INTS(2), false, OPS_DTYPE_NONE);
    assert_close(w, r, 1e-5, 1e-4);
    ops_tensor_release(w);
    ops_tensor_release(r);
    ops_tensor_release(cs);
    ops_tensor_release(gs);
    ops_tensor_release(ct);
    ops_tensor_release(gt);
    ops_tensor_release(g);
    ops_tensor_release(c);
}
END_TEST

/* ---- extremes and their positions ---------------------------------------------------- */

/* argmax/argmin over 2^20 elements (split into partials): the first of tied maxima,
 * then the first NaN once there is one. */
START_TEST(test_argmax_ties_nan)
{
    const int64_t n = (int64_t)1 << 20;
    float *v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)(urand() * 100.0);
    const int64_t ties[] = {777777, 4242, 1000000, 99999};
    for (size_t k = 0; k < 4; k++) {
        v[ties[k]] = 500.0f;
        v[ties[k] + 1] = -500.0f;
    }
    ops_tensor *c = ops_tensor_from_data(v, OPS_INTS(n), OPS_FLOAT32);
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *am = ops_argmax(g, NULL, false), *an = ops_argmin(g, NULL, false);
    ck_assert(value_of(am) == 4242.0);
    ck_assert(value_of(an) == 4243.0);
    ops_tensor_release(am);
    ops_tensor_release(an);
    ops_tensor_release(g);
    ops_tensor_release(c);
    v[900000] = NAN;
    v[300001] = NAN;
    c = ops_tensor_from_data(v, OPS_INTS(n), OPS_FLOAT32);
    g = copy_to(c, GPU);
    am = ops_argmax(g, NULL, false);
    an = ops_argmin(g, NULL, false);
    ck_assert(value_of(am) == 300001.0);
    ck_assert(value_of(an) == 300001.0);
    ops_tensor *mx = ops_max(g);
    ck_assert(isnan(value_of(mx)));
    ops_tensor_release(mx);
    ops_tensor_release(am);
    ops_tensor_release(an);
    ops_tensor_release(g);
    ops_tensor_release(c);
    free(v);
}
END_TEST

/* max.dim/min.dim along rows and columns with many ties (small integers), int64 and
 * float16, against the CPU kernel exactly. */
START_TEST(test_max_dim_ties)
{
    const ops_dtype dts[] = {OPS_INT64, OPS_FLOAT16, OPS_UINT8};
    for (size_t k = 0; k < 3; k++) {
        ops_tensor *f = cpu_rand(OPS_INTS(300, 700), OPS_FLOAT64, 0.0, 4.0);
        ops_tensor *fi = ops_to_dtype(f, OPS_INT64, false, false, OPS_MEMORY_FORMAT_NONE); /* 0..3: ties everywhere */
        ops_tensor *c = ops_to_dtype(fi, dts[k], false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor_release(fi);
        ops_tensor *g = copy_to(c, GPU);
        for (int64_t dim = 0; dim < 2; dim++) {
            ops_tensor *cv, *ci, *gv, *gi;
            ck_assert_int_eq(ops_max_dim(c, dim, dim == 1, &cv, &ci), OPS_OK);
            ck_assert_msg(ops_max_dim(g, dim, dim == 1, &gv, &gi) == OPS_OK, "%s", ops_last_error());
            assert_close(cv, gv, 0, 0);
            assert_close(ci, gi, 0, 0);
            ops_tensor_release(cv);
            ops_tensor_release(ci);
            ops_tensor_release(gv);
            ops_tensor_release(gi);
            ck_assert_int_eq(ops_min_dim(c, dim, false, &cv, &ci), OPS_OK);
            ck_assert_msg(ops_min_dim(g, dim, false, &gv, &gi) == OPS_OK, "%s", ops_last_error());
            assert_close(cv, gv, 0, 0);
            assert_close(ci, gi, 0, 0);
            ops_tensor_release(cv);
            ops_tensor_release(ci);
            ops_tensor_release(gv);
            ops_tensor_release(gi);
        }
        ops_tensor_release(g);
        ops_tensor_release(c);
        ops_tensor_release(f);
    }
}
END_TEST

/* aminmax and amax over 2^20 elements against a C loop; NaN propagates into both. */
START_TEST(test_aminmax_large)
{
    const int64_t n = ((int64_t)1 << 20) + 5;
    ops_tensor *c = cpu_rand(OPS_INTS(n), OPS_FLOAT64, -3.0, 3.0);
    const double *x = ops_tensor_data_ptr(c);
    double lo = x[0], hi = x[0];
    for (int64_t i = 1; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *mn, *mx;
    ck_assert_msg(ops_aminmax(g, NULL, false, &mn, &mx) == OPS_OK, "%s", ops_last_error());
    ck_assert(value_of(mn) == lo);
    ck_assert(value_of(mx) == hi);
    ops_tensor_release(mn);
    ops_tensor_release(mx);
    ((double *)ops_tensor_data_ptr(c))[n / 3] = NAN;
    ops_tensor_release(g);
    g = copy_to(c, GPU);
    ck_assert_int_eq(ops_aminmax(g, NULL, false, &mn, &mx), OPS_OK);
    ck_assert(isnan(value_of(mn)) && isnan(value_of(mx)));
    ops_tensor *a = ops_amax(g, OPS_INTS(), false);
    ck_assert(isnan(value_of(a)));
    ops_tensor_release(a);
    ops_tensor_release(mn);
    ops_tensor_release(mx);
    ops_tensor_release(g);
    ops_tensor_release(c);
}
END_TEST

/* ---- statistics, norms, logsumexp ------------------------------------------------------- */

/* var/std over 2^20 elements with a large common offset: the two-pass double
 * arithmetic keeps the precision a one-pass formula loses. */
START_TEST(test_var_large_offset)
{
    const int64_t n = (int64_t)1 << 20;
    ops_tensor *c = cpu_rand(OPS_INTS(n), OPS_FLOAT32, 10000.0, 10001.0);
    const float *x = ops_tensor_data_ptr(c);
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *v = ops_var_correction(g, NULL, NULL, false);
    ck_assert(fabs(value_of(v) - ss / (double)(n - 1)) <= 1e-5 * ss / (double)n);
    ops_tensor *sd, *mu;
    const ops_scalar zero = OPS_SCALAR_INT(0);
    ck_assert_msg(ops_std_mean_correction(g, NULL, &zero, false, &sd, &mu) == OPS_OK, "%s", ops_last_error());
    ck_assert(fabs(value_of(sd) - sqrt(ss / (double)n)) <= 1e-5 * sqrt(ss / (double)n));
    ck_assert(fabs(value_of(mu) - mean) <= 1e-6 * mean);
    ops_tensor_release(sd);
    ops_tensor_release(mu);
    ops_tensor_release(v);
    ops_tensor_release(g);
    ops_tensor_release(c);
}
END_TEST

/* Row statistics, norms and logsumexp (with -inf and +inf rows) against the CPU. */
START_TEST(test_row_ops_vs_cpu)
{
    ops_tensor *c = cpu_rand(OPS_INTS(37, 2000), OPS_FLOAT32, -3.0, 3.0);
    float *x = ops_tensor_data_ptr(c);
    for (int64_t j = 0; j < 2000; j++)
        x[5 * 2000 + j] = -INFINITY; /* row 5: all -inf */
    x[7 * 2000 + 11] = INFINITY;     /* row 7: one +inf */
    x[9 * 2000 + 3] = 0;             /* zeros for the 0-norm */
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *w, *r;
    w = ops_logsumexp(c, OPS_INTS(1), false);
    r = ops_logsumexp(g, OPS_INTS(1), false);
    assert_close(w, r, 1e-5, 1e-5);
    ops_tensor_release(w);
    ops_tensor_release(r);
    const double ords[] = {0, 1, 2, 3.5, INFINITY, -INFINITY};
    ops_tensor *cf = ops_narrow(c, 0, 10, 20), *gf = ops_narrow(g, 0, 10, 20); /* finite rows */
    for (size_t k = 0; k < sizeof ords / sizeof ords[0]; k++) {
        w = ops_linalg_vector_norm(cf, OPS_SCALAR_FLOAT(ords[k]), &OPS_INTS(1), true, OPS_DTYPE_NONE);
        r = ops_linalg_vector_norm(gf, OPS_SCALAR_FLOAT(ords[k]), &OPS_INTS(1), true, OPS_DTYPE_NONE);
        assert_close(w, r, 1e-5, 1e-5);
        ops_tensor_release(w);
        ops_tensor_release(r);
    }
    w = ops_var_correction(cf, &OPS_INTS(0), NULL, false);
    r = ops_var_correction(gf, &OPS_INTS(0), NULL, false);
    assert_close(w, r, 1e-5, 1e-6);
    ops_tensor_release(w);
    ops_tensor_release(r);
    w = ops_nanmean(cf, &OPS_INTS(1), false, OPS_DTYPE_NONE);
    r = ops_nanmean(gf, &OPS_INTS(1), false, OPS_DTYPE_NONE);
    assert_close(w, r, 1e-5, 1e-6);
    ops_tensor_release(w);
    ops_tensor_release(r);
    ops_tensor_release(cf);
    ops_tensor_release(gf);
    ops_tensor_release(g);
    ops_tensor_release(c);
}
END_TEST

/* all/any over 2^20 bools: one false (true) element decides. */
START_TEST(test_all_any_large)
{
    const int64_t n = (int64_t)1 << 20;
    ops_tensor *t = gpu_full(OPS_INTS(n), OPS_SCALAR_BOOL(true), OPS_BOOL);
    ck_assert_msg(t != NULL, "%s", ops_last_error());
    ops_tensor *a = ops_all(t);
    ck_assert(value_of(a) == 1.0);
    ops_tensor_release(a);
    ops_tensor *v = ops_narrow(t, 0, 654321, 1);
    ops_tensor *f = gpu_full(OPS_INTS(1), OPS_SCALAR_BOOL(false), OPS_BOOL);
    ck_assert_int_eq(ops_copy_(v, f, false), OPS_OK);
    a = ops_all(t);
    ck_assert(value_of(a) == 0.0);
    ops_tensor_release(a);
    a = ops_any(t);
    ck_assert(value_of(a) == 1.0);
    ops_tensor_release(a);
    ops_tensor_release(f);
    ops_tensor_release(v);
    ops_tensor_release(t);
}
END_TEST

/* ---- empty dims, keepdim, out=, errors ----------------------------------------------- */

START_TEST(test_empty_and_keepdim)
{
    ops_tensor *g = new_on(OPS_INTS(4, 0, 3), OPS_FLOAT32, GPU);
    ck_assert_msg(g != NULL, "%s", ops_last_error());
    ops_tensor *s = ops_sum_dim(g, &OPS_INTS(1), true, OPS_DTYPE_NONE);
    ck_assert_msg(s != NULL, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_ndim(s), 3);
    ck_assert_int_eq(ops_tensor_sizes(s)[1], 1);
    int64_t n;
    double *v = host_values(s, &n);
    ck_assert_int_eq(n, 12);
    for (int64_t i = 0; i < n; i++)
        ck_assert(v[i] == 0.0);
    free(v);
    ops_tensor_release(s);
    s = ops_prod(g, OPS_DTYPE_NONE);
    ck_assert(value_of(s) == 1.0);
    ops_tensor_release(s);
    s = ops_mean(g, OPS_DTYPE_NONE);
    ck_assert(isnan(value_of(s)));
    ops_tensor_release(s);
    /* a reduction over nothing kept: [0, 3] summed over dim 1 is empty */
    ops_tensor *e = ops_sum_dim(g, &OPS_INTS(2), false, OPS_DTYPE_NONE);
    ck_assert_msg(e != NULL, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_numel(e), 0);
    ops_tensor_release(e);
    /* extremes over an empty dim fail with the CPU's message, before any write */
    ck_assert_ptr_null(ops_amax(g, OPS_INTS(1), false));
    ck_assert_str_eq(ops_last_error(), "amax: Expected reduction dim 1 to have non-zero size.");
    ck_assert_ptr_null(ops_argmax(g, NULL, false));
    ck_assert_msg(strstr(ops_last_error(), "Expected reduction dim to be specified for input.numel() == 0") != NULL,
                  "%s", ops_last_error());
    ops_tensor_release(g);
}
END_TEST

START_TEST(test_out_and_errors)
{
    ops_tensor *c = cpu_rand(OPS_INTS(50, 400), OPS_FLOAT32, -1.0, 1.0);
    ops_tensor *g = copy_to(c, GPU);
    /* out= a non-contiguous CUDA view (every other column of a [400, 2] buffer) */
    ops_tensor *buf = gpu_full(OPS_INTS(400, 2), OPS_SCALAR_FLOAT(7.0), OPS_FLOAT32);
    ops_tensor *col = ops_select(buf, 1, 0);
    ck_assert_msg(ops_sum_dim_out(g, &OPS_INTS(0), false, OPS_DTYPE_NONE, col) == OPS_OK, "%s", ops_last_error());
    ops_tensor *w = ops_sum_dim(c, &OPS_INTS(0), false, OPS_DTYPE_NONE);
    assert_close(w, col, 1e-5, 1e-5);
    ops_tensor *other = ops_select(buf, 1, 1); /* untouched */
    int64_t n;
    double *v = host_values(other, &n);
    for (int64_t i = 0; i < n; i++)
        ck_assert(v[i] == 7.0);
    free(v);
    /* errors: the CPU's messages, and out= left as it was */
    ck_assert_ptr_null(ops_sum_dim(g, &OPS_INTS(2), false, OPS_DTYPE_NONE));
    ck_assert_msg(strstr(ops_last_error(), "Dimension out of range (expected to be in range of [-2, 1], but got 2)") !=
                      NULL,
                  "%s", ops_last_error());
    ops_tensor *o64 = gpu_full(OPS_INTS(400), OPS_SCALAR_FLOAT(3.0), OPS_FLOAT64);
    ck_assert_int_eq(ops_sum_dim_out(g, &OPS_INTS(0), false, OPS_FLOAT32, o64), OPS_ERR_DTYPE);
    ck_assert_str_eq(ops_last_error(), "sum: Expected out tensor to have dtype float32, but got float64 instead");
    v = host_values(o64, &n);
    for (int64_t i = 0; i < n; i++)
        ck_assert(v[i] == 3.0);
    free(v);
    ck_assert_ptr_null(ops_mean(g, OPS_INT32));
    ck_assert_str_eq(ops_last_error(), "mean: could not infer output dtype. Optional dtype must be either a floating "
                                       "point or complex dtype. Got: int32");
    ops_tensor_release(o64);
    ops_tensor_release(other);
    ops_tensor_release(w);
    ops_tensor_release(col);
    ops_tensor_release(buf);
    ops_tensor_release(g);
    ops_tensor_release(c);
}
END_TEST

/* ---- softmax and scans ------------------------------------------------------------------ */

/* Long contiguous rows (a row of threads per line), short rows and an inner dim (a
 * thread per line), float32 and bfloat16, against the CPU. */
START_TEST(test_softmax_vs_cpu)
{
    const int64_t shapes[][3] = {{64, 3000, 1}, {500, 10, 1}, {8, 300, 33}};
    for (size_t k = 0; k < 3; k++) {
        const ops_dtype dt = k == 1 ? OPS_BFLOAT16 : OPS_FLOAT32;
        ops_tensor *c = cpu_rand(OPS_INTS(shapes[k][0], shapes[k][1], shapes[k][2]), dt, -20.0, 20.0);
        ops_tensor *g = copy_to(c, GPU);
        const double tol = dt == OPS_BFLOAT16 ? 1e-2 : 1e-5;
        ops_tensor *w = ops_softmax(c, 1, OPS_DTYPE_NONE), *r = ops_softmax(g, 1, OPS_DTYPE_NONE);
        assert_close(w, r, tol, 1e-7);
        ops_tensor_release(w);
        ops_tensor_release(r);
        w = ops_log_softmax(c, 1, OPS_DTYPE_NONE);
        r = ops_log_softmax(g, 1, OPS_DTYPE_NONE);
        assert_close(w, r, tol, 1e-4);
        ops_tensor_release(w);
        ops_tensor_release(r);
        ops_tensor_release(g);
        ops_tensor_release(c);
    }
}
END_TEST

/* Scans.  Many lines: a thread per line in the CPU's order with the CPU's
 * accumulator, so equal results.  A few long lines (a block per line, tiles carried
 * over): sums re-associated in double (float32 within rounding), integer sums and
 * cummax/cummin with ties and NaN exactly. */
START_TEST(test_scans_vs_cpu)
{
    ops_tensor *c = cpu_rand(OPS_INTS(3, 50000), OPS_FLOAT32, -1.0, 1.0);
    ops_tensor *g = copy_to(c, GPU);
    ops_tensor *w = ops_cumsum(c, 1, OPS_DTYPE_NONE), *r = ops_cumsum(g, 1, OPS_DTYPE_NONE);
    assert_close(w, r, 1e-6, 1e-9);
    ops_tensor_release(w);
    ops_tensor_release(r);
    w = ops_cumsum(c, 0, OPS_DTYPE_NONE); /* 50000 lines of 3 */
    r = ops_cumsum(g, 0, OPS_DTYPE_NONE);
    assert_close(w, r, 0, 0);
    ops_tensor_release(w);
    ops_tensor_release(r);
    /* float32 cummin along the long lines, with NaNs in two of them */
    float *xf = ops_tensor_data_ptr(c);
    xf[12345] = NAN;
    xf[20000] = NAN;
    xf[2 * 50000 + 49990] = NAN;
    ops_tensor_release(g);
    g = copy_to(c, GPU);
    ops_tensor *wv, *wi, *rv, *ri;
    ck_assert_int_eq(ops_cummin(c, 1, &wv, &wi), OPS_OK);
    ck_assert_msg(ops_cummin(g, 1, &rv, &ri) == OPS_OK, "%s", ops_last_error());
    assert_close(wv, rv, 0, 0);
    assert_close(wi, ri, 0, 0);
    ops_tensor_release(wv);
    ops_tensor_release(wi);
    ops_tensor_release(rv);
    ops_tensor_release(ri);
    ops_tensor_release(c);
    /* int32 values -2..2 along the long lines: long runs of ties */
    ops_tensor *f3 = cpu_rand(OPS_INTS(3, 50000), OPS_FLOAT64, -2.99, 2.99);
    ops_tensor *c32 = ops_to_dtype(f3, OPS_INT32, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor_release(f3);
    ops_tensor *g32 = copy_to(c32, GPU);
    ck_assert_int_eq(ops_cummax(c32, 1, &wv, &wi), OPS_OK);
    ck_assert_msg(ops_cummax(g32, 1, &rv, &ri) == OPS_OK, "%s", ops_last_error());
    assert_close(wv, rv, 0, 0);
    assert_close(wi, ri, 0, 0);
    ops_tensor_release(wv);
    ops_tensor_release(wi);
    ops_tensor_release(rv);
    ops_tensor_release(ri);
    w = ops_cumsum(c32, 1, OPS_DTYPE_NONE);
    r = ops_cumsum(g32, 1, OPS_DTYPE_NONE);
    assert_close(w, r, 0, 0);
    ops_tensor_release(w);
    ops_tensor_release(r);
    ops_tensor_release(g32);
    ops_tensor_release(c32);
    ops_tensor_release(g);
    ops_tensor *f = cpu_rand(OPS_INTS(40, 30, 25), OPS_FLOAT64, 0.0, 5.0);
    c = ops_to_dtype(f, OPS_INT16, false, false, OPS_MEMORY_FORMAT_NONE); /* many ties */
    g = copy_to(c, GPU);
    for (int64_t dim = 0; dim < 3; dim++) {
        ops_tensor *cv, *ci, *gv, *gi;
        ck_assert_int_eq(ops_cummax(c, dim, &cv, &ci), OPS_OK);
        ck_assert_msg(ops_cummax(g, dim, &gv, &gi) == OPS_OK, "%s", ops_last_error());
        assert_close(cv, gv, 0, 0);
        assert_close(ci, gi, 0, 0);
        ops_tensor_release(cv);
        ops_tensor_release(ci);
        ops_tensor_release(gv);
        ops_tensor_release(gi);
        w = ops_cumprod(c, dim, OPS_INT64);
        r = ops_cumprod(g, dim, OPS_INT64);
        assert_close(w, r, 0, 0);
        ops_tensor_release(w);
        ops_tensor_release(r);
    }
    ops_tensor_release(g);
    ops_tensor_release(c);
    double *d = ops_tensor_data_ptr(f); /* the float64 values again, with NaNs */
    d[17] = NAN;
    d[40 * 30 * 25 - 100] = NAN;
    g = copy_to(f, GPU);
    ops_tensor *cv, *ci, *gv, *gi;
    ck_assert_int_eq(ops_cummin(f, 2, &cv, &ci), OPS_OK);
    ck_assert_msg(ops_cummin(g, 2, &gv, &gi) == OPS_OK, "%s", ops_last_error());
    assert_close(cv, gv, 0, 0);
    assert_close(ci, gi, 0, 0);
    ops_tensor_release(cv);
    ops_tensor_release(ci);
    ops_tensor_release(gv);
    ops_tensor_release(gi);
    ops_tensor_release(g);
    ops_tensor_release(f);
}
END_TEST

static Suite *
cuda_reduce_suite(void)
{
    Suite *s = suite_create("cuda_reduce");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_sum_full_multipass);
    tcase_add_test(tc, test_sum_ones_exact);
    tcase_add_test(tc, test_sum_int_exact);
    tcase_add_test(tc, test_sum_rows);
    tcase_add_test(tc, test_sum_columns);
    tcase_add_test(tc, test_sum_strided_views);
    tcase_add_test(tc, test_argmax_ties_nan);
    tcase_add_test(tc, test_max_dim_ties);
    tcase_add_test(tc, test_aminmax_large);
    tcase_add_test(tc, test_var_large_offset);
    tcase_add_test(tc, test_row_ops_vs_cpu);
    tcase_add_test(tc, test_all_any_large);
    tcase_add_test(tc, test_empty_and_keepdim);
    tcase_add_test(tc, test_out_and_errors);
    tcase_add_test(tc, test_softmax_vs_cpu);
    tcase_add_test(tc, test_scans_vs_cpu);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    if (ops_cuda_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    SRunner *sr = srunner_create(cuda_reduce_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The rules of max/min (whole and over a dim), cummax/cummin, norm and var_mean
 * (kernels/cpu/reduce.c) that the random NumPy samples of the conformance suite never
 * reach: NaN propagation and the index it gets, ties, precision at sizes the samples do
 * not have (float16 norms accumulate in float, a single-element 2-norm does not
 * overflow), the threaded and strided paths of max.dim, and the two-out= forms left
 * untouched by a failure (every allocation failed in turn, outs that overlap).
 * Expected values are hand-derived. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_op_amax.h"
#include "ops_op_contiguous.h"
#include "ops_op_cummax.h"
#include "ops_op_cummin.h"
#include "ops_op_empty.h"
#include "ops_op_max.h"
#include "ops_op_min.h"
#include "ops_op_norm.h"
#include "ops_op_ones.h"
#include "ops_op_std.h"
#include "ops_op_std_mean.h"
#include "ops_op_transpose.h"
#include "ops_op_var.h"
#include "ops_op_var_mean.h"
#include "ops_op_zeros.h"
#include "ops_internal.h"
#include "ops_scalar_math.h"

#define I(...) OPS_INTS(__VA_ARGS__)

static ops_tensor *
f64(const double *v, int64_t n)
{
    ops_tensor *t = ops_tensor_from_data(v, I(n), OPS_FLOAT64);
    ck_assert_ptr_nonnull(t);
    return t;
}

static double
item(const ops_tensor *t)
{
    ops_scalar s;
    ck_assert_msg(t != NULL, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_item(t, &s), OPS_OK);
    return ops_scalar_to_double(s);
}

/* max.dim or min.dim of a 1-d float64 tensor: the value, and the index in *idx. */
static double
ext_dim(bool is_max, const double *v, int64_t n, int64_t *idx)
{
    ops_tensor *t = f64(v, n), *vals = NULL, *ind = NULL;
    ops_status st = is_max ? ops_max_dim(t, 0, false, &vals, &ind) : ops_min_dim(t, 0, false, &vals, &ind);
    ck_assert_msg(st == OPS_OK, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_dtype(ind), OPS_INT64);
    *idx = (int64_t)item(ind);
    const double r = item(vals);
    ops_tensor_release(vals);
    ops_tensor_release(ind);
    ops_tensor_release(t);
    return r;
}

/* PyTorch's CPU rule: the first NaN is the extreme of both max and min (and ends the
 * scan); ties give the first index. */
START_TEST(test_max_min_dim_nan_and_ties)
{
    int64_t i;
    const double nan2[5] = {1.0, 7.0, NAN, 9.0, NAN};
    ck_assert(isnan(ext_dim(true, nan2, 5, &i)) && i == 2);
    ck_assert(isnan(ext_dim(false, nan2, 5, &i)) && i == 2);
    const double nan0[3] = {NAN, 1.0, 2.0};
    ck_assert(isnan(ext_dim(true, nan0, 3, &i)) && i == 0);
    const double ties[6] = {2.0, 5.0, -1.0, 5.0, -1.0, 0.0};
    ck_assert(ext_dim(true, ties, 6, &i) == 5.0 && i == 1);
    ck_assert(ext_dim(false, ties, 6, &i) == -1.0 && i == 2);
    const double infs[3] = {-INFINITY, -INFINITY, -INFINITY};
    ck_assert(ext_dim(true, infs, 3, &i) == -INFINITY && i == 0);

    /* the whole-tensor forms propagate NaN too */
    ops_tensor *t = f64(nan2, 5);
    ops_tensor *m = ops_max(t);
    ck_assert(isnan(item(m)));
    ops_tensor_release(m);
    m = ops_min(t);
    ck_assert(isnan(item(m)));
    ops_tensor_release(m);
    ops_tensor_release(t);
}
END_TEST

/* The same rules over an outer dim (the row-at-a-time path): column c of [4, 24] holds
 * column c of the pattern below, so NaN first, NaN later, ties and plain cases sit in
 * every tile position. */
START_TEST(test_max_min_dim_outer)
{
    const int64_t cols = 24;
    /* per column kind: {rows}, expected max (index), min (index) */
    static const double pat[4][4] = {
        {1.0, NAN, 3.0, NAN}, /* NaN at row 1 for both */
        {2.0, 5.0, 5.0, -1.0}, /* max 5 at 1 (tie), min -1 at 3 */
        {NAN, 1.0, 2.0, 0.0}, /* NaN at row 0 */
        {4.0, 4.0, 4.0, 4.0}, /* all equal: row 0 */
    };
    static const int64_t want_max_i[4] = {1, 1, 0, 0}, want_min_i[4] = {1, 3, 0, 0};
    double v[4 * 24];
    for (int64_t r = 0; r < 4; r++)
        for (int64_t c = 0; c < cols; c++)
            v[r * cols + c] = pat[c % 4][r];
    ops_tensor *t = ops_tensor_from_data(v, I(4, cols), OPS_FLOAT64);
    for (int is_max = 0; is_max < 2; is_max++) {
        ops_tensor *vals = NULL, *ind = NULL;
        ops_status st = is_max ? ops_max_dim(t, 0, false, &vals, &ind) : ops_min_dim(t, 0, false, &vals, &ind);
        ck_assert_msg(st == OPS_OK, "%s", ops_last_error());
        const double *pv = ops_tensor_data_ptr(vals);
        const int64_t *pi = ops_tensor_data_ptr(ind);
        for (int64_t c = 0; c < cols; c++) {
            const int64_t want = is_max ? want_max_i[c % 4] : want_min_i[c % 4];
            ck_assert_msg(pi[c] == want, "column %lld: index %lld, expected %lld", (long long)c, (long long)pi[c],
                          (long long)want);
            const double e = pat[c % 4][want];
            ck_assert(isnan(e) ? isnan(pv[c]) : pv[c] == e);
        }
        ops_tensor_release(vals);
        ops_tensor_release(ind);
    }
    ops_tensor_release(t);
}
END_TEST

/* max.dim over rows long enough to be threaded, contiguous, through a transpose and
 * over the outer dim of the transpose's contiguous copy:
 * row r of [64, 5000] holds k - r at column k, except a peak of 1e6 at column
 * (37 * r) % 5000; the min is at column 0 (value -r). */
START_TEST(test_max_dim_threaded_and_strided)
{
    const int64_t rows = 64, cols = 5000;
    double *v = malloc((size_t)(rows * cols) * sizeof(double));
    ck_assert_ptr_nonnull(v);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++)
            v[r * cols + k] = k == (37 * r) % cols ? 1e6 : (double)(k - r);
    ops_tensor *t = ops_tensor_from_data(v, I(rows, cols), OPS_FLOAT64);
    ops_tensor *tt = ops_transpose(t, 0, 1);
    ops_tensor *tc = tt ? ops_contiguous(tt, OPS_CONTIGUOUS_FORMAT) : NULL; /* [cols, rows]: the outer-dim path */
    ck_assert_ptr_nonnull(tc);
    for (int pass = 0; pass < 3; pass++) {
        const ops_tensor *src = pass == 0 ? t : pass == 1 ? tt : tc;
        ops_tensor *vals = NULL, *ind = NULL;
        ops_status st = pass == 0 ? ops_max_dim(src, 1, true, &vals, &ind) : ops_max_dim(src, 0, false, &vals, &ind);
        ck_assert_msg(st == OPS_OK, "%s", ops_last_error());
        ck_assert_int_eq(ops_tensor_numel(ind), rows);
        const double *pv = ops_tensor_data_ptr(vals);
        const int64_t *pi = ops_tensor_data_ptr(ind);
        for (int64_t r = 0; r < rows; r++) {
            ck_assert(pv[r] == 1e6);
            ck_assert_int_eq(pi[r], (37 * r) % cols);
        }
        ops_tensor_release(vals);
        ops_tensor_release(ind);
        st = pass == 0 ? ops_min_dim(src, -1, false, &vals, &ind) : ops_min_dim(src, 0, false, &vals, &ind);
        ck_assert_msg(st == OPS_OK, "%s", ops_last_error());
        pv = ops_tensor_data_ptr(vals);
        pi = ops_tensor_data_ptr(ind);
        for (int64_t r = 0; r < rows; r++) {
            /* row 0's column 0 is its peak, so its min is 1 at column 1 */
            ck_assert(pv[r] == (r == 0 ? 1.0 : (double)-r));
            ck_assert_int_eq(pi[r], r == 0 ? 1 : 0);
        }
        ops_tensor_release(vals);
        ops_tensor_release(ind);
    }
    ops_tensor_release(tc);
    ops_tensor_release(tt);
    ops_tensor_release(t);
    free(v);
}
END_TEST

/* cummax/cummin: a NaN stays once seen and only a later NaN moves the index; ties move
 * the index forward. */
START_TEST(test_cummax_cummin_rules)
{
    const double x[6] = {1.0, NAN, 2.0, NAN, 0.0, 5.0};
    ops_tensor *t = f64(x, 6), *vals = NULL, *ind = NULL;
    ck_assert_int_eq(ops_cummax(t, 0, &vals, &ind), OPS_OK);
    const double *pv = ops_tensor_data_ptr(vals);
    const int64_t *pi = ops_tensor_data_ptr(ind);
    const int64_t want_i[6] = {0, 1, 1, 3, 3, 3};
    ck_assert(pv[0] == 1.0);
    for (int k = 1; k < 6; k++)
        ck_assert(isnan(pv[k]));
    for (int k = 0; k < 6; k++)
        ck_assert_int_eq(pi[k], want_i[k]);
    ops_tensor_release(vals);
    ops_tensor_release(ind);
    ops_tensor_release(t);

    const double y[5] = {3.0, 1.0, 1.0, 2.0, 1.0};
    t = f64(y, 5);
    ck_assert_int_eq(ops_cummin(t, 0, &vals, &ind), OPS_OK);
    pv = ops_tensor_data_ptr(vals);
    pi = ops_tensor_data_ptr(ind);
    const double want_v[5] = {3.0, 1.0, 1.0, 1.0, 1.0};
    const int64_t want_j[5] = {0, 1, 2, 2, 4};
    for (int k = 0; k < 5; k++) {
        ck_assert(pv[k] == want_v[k]);
        ck_assert_int_eq(pi[k], want_j[k]);
    }
    ops_tensor_release(vals);
    ops_tensor_release(ind);
    ops_tensor_release(t);
}
END_TEST

static double
norm_all(const ops_tensor *t, double p)
{
    ops_tensor *r = ops_norm_scalar(t, OPS_SCALAR_FLOAT(p));
    const double v = item(r);
    ops_tensor_release(r);
    return v;
}

/* float16/bfloat16 norms accumulate in float: 4096 float16 ones have 2-norm 64 (a
 * float16 sum of squares stalls at 2048, giving 45.25) and 1-norm 4096; 1024 bfloat16
 * ones have 1-norm 1024 (a bfloat16 sum stalls at 256).  A float32 1-norm of 2^24 +
 * 4096 ones is exact (pairwise). */
START_TEST(test_norm_precision)
{
    ops_tensor *h = ops_ones(I(4096), OPS_FLOAT16, OPS_DEVICE_CPU);
    ck_assert(norm_all(h, 2.0) == 64.0);
    ck_assert(norm_all(h, 1.0) == 4096.0);
    ck_assert(norm_all(h, INFINITY) == 1.0);
    ck_assert(norm_all(h, 0.0) == 4096.0);
    ops_tensor_release(h);
    ops_tensor *b = ops_ones(I(1024), OPS_BFLOAT16, OPS_DEVICE_CPU);
    ck_assert(norm_all(b, 1.0) == 1024.0);
    ck_assert(norm_all(b, 2.0) == 32.0);
    ops_tensor_release(b);
    ops_tensor *f = ops_ones(I(16777216 + 4096), OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert(norm_all(f, 1.0) == 16777216.0 + 4096.0);
    ops_tensor_release(f);
}
END_TEST

/* NaN propagates through every order (order 0 counts it as nonzero); a zero makes a
 * negative order's norm 0; a single element's 2-norm is |x| even where x*x overflows;
 * an all-zero vector has norm 0 for every positive order. */
START_TEST(test_norm_special_values)
{
    const double x[4] = {0.0, NAN, -2.0, 3.0};
    ops_tensor *t = f64(x, 4);
    ck_assert(isnan(norm_all(t, 2.0)));
    ck_assert(isnan(norm_all(t, 1.0)));
    ck_assert(isnan(norm_all(t, INFINITY)));
    ck_assert(isnan(norm_all(t, -INFINITY)));
    ck_assert(isnan(norm_all(t, 3.0)));
    ck_assert(norm_all(t, 0.0) == 3.0);
    ops_tensor_release(t);
    const double z[3] = {0.0, 4.0, -2.0};
    t = f64(z, 3);
    ck_assert(norm_all(t, -1.0) == 0.0);
    ck_assert(norm_all(t, -INFINITY) == 0.0);
    ck_assert(norm_all(t, INFINITY) == 4.0);
    ops_tensor_release(t);
    const float big = 1e30f;
    ops_tensor *one = ops_tensor_from_data(&big, I(1), OPS_FLOAT32);
    ck_assert(norm_all(one, 2.0) == (double)1e30f);
    ops_tensor_release(one);
    ops_tensor *zeros = ops_zeros(I(5), OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert(norm_all(zeros, 2.0) == 0.0);
    ck_assert(norm_all(zeros, 0.5) == 0.0);
    ops_tensor_release(zeros);
}
END_TEST

/* var_mean of float32 values with a large common offset: 1e6 + {0, 1, 2, 3} has mean
 * 1000001.5 and variance 5/3 (correction 1), exact after the two-pass mean. */
START_TEST(test_var_mean_offset)
{
    const float x[4] = {1e6f, 1e6f + 1, 1e6f + 2, 1e6f + 3};
    ops_tensor *t = ops_tensor_from_data(x, I(4), OPS_FLOAT32), *v = NULL, *m = NULL;
    ck_assert_int_eq(ops_var_mean(t, true, &v, &m), OPS_OK);
    ck_assert_int_eq(ops_tensor_dtype(v), OPS_FLOAT32);
    ck_assert(item(m) == 1000001.5);
    ck_assert(item(v) == (double)(float)(5.0 / 3.0));
    ops_tensor_release(v);
    ops_tensor_release(m);
    ck_assert_int_eq(ops_std_mean(t, false, &v, &m), OPS_OK);
    ck_assert(item(v) == (double)(float)sqrt(1.25));
    ops_tensor_release(v);
    ops_tensor_release(m);
    ops_tensor_release(t);
}
END_TEST

/* The two-out= forms: with each allocation failing in turn, both empty outs stay
 * empty and the call reports out of memory; outs that share memory are refused. */
START_TEST(test_two_outs_untouched_on_failure)
{
    const double x[6] = {3.0, 1.0, 4.0, 1.0, 5.0, 9.0};
    ops_tensor *t = ops_tensor_from_data(x, I(2, 3), OPS_FLOAT64);
    for (int which = 0; which < 3; which++) {
        bool done = false;
        for (int64_t nth = 1; nth < 64 && !done; nth++) {
            ops_tensor *o0 = ops_empty(I(0), OPS_FLOAT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
            ops_tensor *o1 = ops_empty(I(0), which == 2 ? OPS_FLOAT64 : OPS_INT64, OPS_DEVICE_CPU,
                                       OPS_MEMORY_FORMAT_NONE);
            ck_assert(o0 != NULL && o1 != NULL);
            ops_alloc_fail_nth(nth);
            const ops_status st = which == 0   ? ops_max_dim_max(t, 1, false, o0, o1)
                                  : which == 1 ? ops_cummin_out(t, 0, o0, o1)
                                               : ops_var_mean_correction_out(t, NULL, NULL, false, o0, o1);
            ops_alloc_fail_nth(0);
            if (st == OPS_OK) {
                done = true;
            } else {
                ck_assert_int_eq(st, OPS_ERR_OOM);
                ck_assert_int_eq(ops_tensor_numel(o0), 0);
                ck_assert_int_eq(ops_tensor_numel(o1), 0);
            }
            ops_tensor_release(o0);
            ops_tensor_release(o1);
        }
        ck_assert(done);
    }
    /* values and indices in one tensor's memory */
    ops_tensor *o = ops_empty(I(2), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *f = ops_empty(I(2), OPS_FLOAT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ck_assert(ops_max_dim_max(t, 1, false, f, f) != OPS_OK); /* indices must be int64 */
    ops_tensor *ti = ops_tensor_from_data((const int64_t[]){5, 1, 4}, I(3), OPS_INT64);
    ck_assert(ops_max_dim_max(ti, 0, false, o, o) != OPS_OK);
    ck_assert(strstr(ops_last_error(), "refer to a single memory location") != NULL);
    ops_tensor_release(ti);
    ops_tensor_release(o);
    ops_tensor_release(f);
    ops_tensor_release(t);
}
END_TEST

/* max()/min() of every element (`reduce: [amax, cast_out]`): out= of any dtype the
 * result casts to gets the value cast (and is resized); one it cannot be cast to is
 * refused and left as it was, as is every out= when an allocation fails; an empty input
 * is refused first, in max()'s words; amax's out= must still have self's dtype. */
START_TEST(test_max_min_castable_out)
{
    const int32_t x[3] = {3, -7, 5};
    ops_tensor *t = ops_tensor_from_data(x, I(3), OPS_INT32);
    ops_tensor *of = ops_empty(I(2), OPS_FLOAT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *ol = ops_empty(I(2), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ck_assert_msg(ops_max_unary_out(t, of) == OPS_OK, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_ndim(of), 0);
    ck_assert(item(of) == 5.0);
    ck_assert_msg(ops_min_unary_out(t, ol) == OPS_OK, "%s", ops_last_error());
    ck_assert(item(ol) == -7.0);
    ops_tensor *r = ops_max(t);
    ck_assert_int_eq(ops_tensor_dtype(r), OPS_INT32);
    ck_assert(item(r) == 5.0);
    ops_tensor_release(r);

    const double y[2] = {1.5, -2.5};
    ops_tensor *u = f64(y, 2), *keep = ops_empty(I(2), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ops_max_unary_out(u, keep), OPS_ERR_DTYPE);
    ck_assert_str_eq(ops_last_error(), "max: result type float64 can't be cast to the desired output type int64");
    ck_assert_int_eq(ops_tensor_numel(keep), 2);
    ck_assert_int_eq(ops_amax_out(u, (ops_int_list){NULL, 0}, false, of), OPS_OK); /* same dtype: fine */
    ck_assert_int_eq(ops_amax_out(u, (ops_int_list){NULL, 0}, false, keep), OPS_ERR_DTYPE);
    ck_assert(strstr(ops_last_error(), "Expected the dtype for input and out to match") != NULL);

    ops_tensor *e = ops_empty(I(0, 3), OPS_FLOAT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ops_min_unary_out(e, keep), OPS_ERR_INDEX);
    ck_assert(strstr(ops_last_error(), "min(): Expected reduction dim to be specified for input.numel() == 0.") ==
                  ops_last_error());
    ck_assert_int_eq(ops_tensor_numel(keep), 2);

    bool done = false;
    for (int64_t nth = 1; nth < 64 && !done; nth++) {
        ops_tensor *o = ops_empty(I(0), OPS_FLOAT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
        ops_alloc_fail_nth(nth);
        const ops_status st = ops_max_unary_out(t, o);
        ops_alloc_fail_nth(0);
        done = st == OPS_OK;
        if (!done) {
            ck_assert_int_eq(st, OPS_ERR_OOM);
            ck_assert_int_eq(ops_tensor_numel(o), 0);
        }
        ops_tensor_release(o);
    }
    ck_assert(done);
    ops_tensor_release(e);
    ops_tensor_release(u);
    ops_tensor_release(keep);
    ops_tensor_release(of);
    ops_tensor_release(ol);
    ops_tensor_release(t);
}
END_TEST

/* a and b (float64) have the same shape and the same values, bit for bit. */
static bool
same_f64(const ops_tensor *a, const ops_tensor *b)
{
    ck_assert_msg(a != NULL && b != NULL, "%s", ops_last_error());
    if (ops_tensor_ndim(a) != ops_tensor_ndim(b) || ops_tensor_numel(a) != ops_tensor_numel(b))
        return false;
    for (int d = 0; d < ops_tensor_ndim(a); d++)
        if (ops_tensor_size(a, d) != ops_tensor_size(b, d))
            return false;
    ops_tensor *ca = ops_contiguous(a, OPS_CONTIGUOUS_FORMAT), *cb = ops_contiguous(b, OPS_CONTIGUOUS_FORMAT);
    ck_assert(ca != NULL && cb != NULL);
    const bool same = memcmp(ops_tensor_data_ptr(ca), ops_tensor_data_ptr(cb),
                             (size_t)ops_tensor_numel(a) * sizeof(double)) == 0;
    ops_tensor_release(ca);
    ops_tensor_release(cb);
    return same;
}

/* The `unbiased` overloads of var/std/var_mean/std_mean are their correction= forms with
 * correction 1 (True) or 0 (False). */
START_TEST(test_unbiased_is_correction)
{
    const double x[6] = {1.0, 2.0, 4.0, 8.0, 3.0, -1.0};
    ops_tensor *t = ops_tensor_from_data(x, I(2, 3), OPS_FLOAT64);
    const ops_int_list d1 = {(const int64_t[]){1}, 1};
    for (int unbiased = 0; unbiased < 2; unbiased++) {
        const ops_scalar c = OPS_SCALAR_INT(unbiased);
        ops_tensor *a = ops_var(t, unbiased), *b = ops_var_correction(t, NULL, &c, false);
        ck_assert(item(a) == item(b));
        ops_tensor_release(a);
        ops_tensor_release(b);
        a = ops_std_dim(t, &d1, unbiased, true);
        b = ops_std_correction(t, &d1, &c, true);
        ck_assert(same_f64(a, b));
        ck_assert_int_eq(ops_tensor_ndim(a), 2);
        ops_tensor_release(a);
        ops_tensor_release(b);
        ops_tensor *o = ops_empty(I(0), OPS_FLOAT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
        ck_assert_int_eq(ops_var_out(t, &d1, unbiased, false, o), OPS_OK);
        b = ops_var_correction(t, &d1, &c, false);
        ck_assert(same_f64(o, b));
        ops_tensor_release(b);
        ops_tensor_release(o);
        ops_tensor *v = NULL, *m = NULL, *v2 = NULL, *m2 = NULL;
        ck_assert_int_eq(ops_std_mean_dim(t, &d1, unbiased, false, &v, &m), OPS_OK);
        ck_assert_int_eq(ops_std_mean_correction(t, &d1, &c, false, &v2, &m2), OPS_OK);
        ck_assert(same_f64(v, v2) && same_f64(m, m2));
        ops_tensor_release(v);
        ops_tensor_release(m);
        ops_tensor_release(v2);
        ops_tensor_release(m2);
    }
    /* 6 elements, mean 17/6: the sum of squared deviations is 95 - 17 * 17 / 6 = 281/6 */
    ops_tensor *a = ops_var(t, false), *b = ops_var(t, true);
    ck_assert(fabs(item(a) - 281.0 / 36.0) < 1e-12);
    ck_assert(fabs(item(b) - 281.0 / 30.0) < 1e-12);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(t);
}
END_TEST

int
main(void)
{
    Suite *su = suite_create("reduce_extra");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_max_min_dim_nan_and_ties);
    tcase_add_test(tc, test_max_min_dim_outer);
    tcase_add_test(tc, test_max_dim_threaded_and_strided);
    tcase_add_test(tc, test_cummax_cummin_rules);
    tcase_add_test(tc, test_norm_precision);
    tcase_add_test(tc, test_norm_special_values);
    tcase_add_test(tc, test_var_mean_offset);
    tcase_add_test(tc, test_two_outs_untouched_on_failure);
    tcase_add_test(tc, test_max_min_castable_out);
    tcase_add_test(tc, test_unbiased_is_correction);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

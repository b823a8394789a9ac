/* Accumulation precision of the reductions (kernels/cpu/reduce.c), which the NumPy
 * cases cannot show at their small sizes: a float32 sum of 2^24 ones is exactly
 * 16777216 and 2^24 + 4096 ones sum to 16781312 (a naive float loop reaches 2^24 and
 * then rounds every later 1 away; pairwise summation keeps every partial exact), float16
 * and bfloat16 sums accumulate in float (a float16 running sum stalls at 2048, a
 * bfloat16 one at 256), and a reduction through a transposed (strided) view gives the
 * same exact counts.  Expected values are hand-derived: n ones sum to n.  Also the
 * NaN/infinity rules of nansum, amax/amin and logsumexp. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "ops_op_amax.h"
#include "ops_op_amin.h"
#include "ops_op_logsumexp.h"
#include "ops_op_nansum.h"
#include "ops_op_ones.h"
#include "ops_op_sum.h"
#include "ops_op_transpose.h"
#include "ops_internal.h"
#include "ops_scalar_math.h"

#define I(...) OPS_INTS(__VA_ARGS__)

/* The sum of n ones of dtype dt, as a double. */
static double
sum_of_ones(int64_t n, ops_dtype dt)
{
    ops_tensor *t = ops_ones(I(n), dt, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    ops_tensor *s = ops_sum(t, OPS_DTYPE_NONE);
    ck_assert_msg(s != NULL, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_dtype(s), dt);
    ops_scalar v;
    ck_assert_int_eq(ops_tensor_item(s, &v), OPS_OK);
    ops_tensor_release(s);
    ops_tensor_release(t);
    return ops_scalar_to_double(v);
}

START_TEST(test_float32_16m_ones)
{
    ck_assert(sum_of_ones(16777216, OPS_FLOAT32) == 16777216.0);
    ck_assert(sum_of_ones(16777216 + 4096, OPS_FLOAT32) == 16777216.0 + 4096.0);
}
END_TEST

START_TEST(test_half_accumulates_in_float)
{
    ck_assert(sum_of_ones(4096, OPS_FLOAT16) == 4096.0);
    ck_assert(sum_of_ones(1024, OPS_BFLOAT16) == 1024.0);
}
END_TEST

START_TEST(test_strided_dim_sum)
{
    /* ones [4096, 8] read through its transpose, summed over the 4096-long dim */
    ops_tensor *t = ops_ones(I(4096, 8), OPS_FLOAT16, OPS_DEVICE_CPU);
    ops_tensor *tt = ops_transpose(t, 0, 1);
    ck_assert_ptr_nonnull(tt);
    const int64_t d = 1;
    const ops_int_list dims = {&d, 1};
    ops_tensor *s = ops_sum_dim(tt, &dims, false, OPS_DTYPE_NONE);
    ck_assert_msg(s != NULL, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_ndim(s), 1);
    ck_assert_int_eq(ops_tensor_sizes(s)[0], 8);
    for (int i = 0; i < 8; i++)
        ck_assert(ops_half_to_float(((const ops_half *)ops_tensor_data_ptr(s))[i]) == 4096.0f);
    ops_tensor_release(s);
    ops_tensor_release(tt);
    ops_tensor_release(t);
}
END_TEST

/* op(self) over every dim as a double: a 0-dim float64 result. */
static double
reduce_all(ops_tensor *(*op)(const ops_tensor *, ops_int_list, bool), const double *v, int64_t n)
{
    ops_tensor *t = ops_tensor_from_data(v, I(n), OPS_FLOAT64);
    ck_assert_ptr_nonnull(t);
    ops_tensor *r = op(t, I(), false);
    ck_assert_msg(r != NULL, "%s", ops_last_error());
    ops_scalar s;
    ck_assert_int_eq(ops_tensor_item(r, &s), OPS_OK);
    ops_tensor_release(r);
    ops_tensor_release(t);
    return ops_scalar_to_double(s);
}

/* The NaN and infinity rules the random NumPy samples never hit (hand-derived, as
 * PyTorch gives them): nansum skips NaN, sum and amax/amin propagate it, logsumexp
 * keeps -inf for all -inf and inf for an inf. */
START_TEST(test_nan_and_inf)
{
    const double with_nan[3] = {1.0, NAN, 2.0};
    ops_tensor *t = ops_tensor_from_data(with_nan, I(3), OPS_FLOAT64);
    ops_tensor *ns = ops_nansum(t, NULL, false, OPS_DTYPE_NONE);
    ops_tensor *s = ops_sum(t, OPS_DTYPE_NONE);
    ck_assert_ptr_nonnull(ns);
    ck_assert_ptr_nonnull(s);
    ops_scalar v;
    ck_assert_int_eq(ops_tensor_item(ns, &v), OPS_OK);
    ck_assert(ops_scalar_to_double(v) == 3.0);
    ck_assert_int_eq(ops_tensor_item(s, &v), OPS_OK);
    ck_assert(isnan(ops_scalar_to_double(v)));
    ops_tensor_release(ns);
    ops_tensor_release(s);
    ops_tensor_release(t);

    ck_assert(isnan(reduce_all(ops_amax, with_nan, 3)));
    ck_assert(isnan(reduce_all(ops_amin, with_nan, 3)));
    const double nan_last[3] = {1.0, 2.0, NAN};
    ck_assert(isnan(reduce_all(ops_amax, nan_last, 3)));
    const double minus_inf[2] = {-INFINITY, -INFINITY};
    ck_assert(reduce_all(ops_logsumexp, minus_inf, 2) == -INFINITY);
    const double plus_inf[2] = {INFINITY, 1.0};
    ck_assert(reduce_all(ops_logsumexp, plus_inf, 2) == INFINITY);
    const double big[2] = {1000.0, 1000.0}; /* exp overflows without the max shift */
    ck_assert(fabs(reduce_all(ops_logsumexp, big, 2) - (1000.0 + log(2.0))) < 1e-12);
}
END_TEST

int
main(void)
{
    Suite *su = suite_create("reduce_precision");
    TCase *tc = tcase_create("sum");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_float32_16m_ones);
    tcase_add_test(tc, test_half_accumulates_in_float);
    tcase_add_test(tc, test_strided_dim_sum);
    tcase_add_test(tc, test_nan_and_inf);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

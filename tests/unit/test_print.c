/* ops_tensor_to_string / ops_tensor_print: exact strings, written out by hand from
 * PyTorch's printing rules (torch/_tensor_str.py: one width per tensor, int mode,
 * 4 decimals, scientific when magnitudes spread, 3 edge items past 1000 elements,
 * 80-column rows and suffixes), with our dtype and shape suffixes. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

ops_tensor *transpose_impl(const ops_tensor *self, int64_t dim0, int64_t dim1);

#define expect_str(t, expected) expect_str_(__LINE__, t, expected)

static void
expect_str_(int line, ops_tensor *t, const char *expected)
{
    ck_assert_msg(t != NULL, "line %d: no tensor: %s", line, ops_last_error());
    char *s = ops_tensor_to_string(t);
    ck_assert_msg(s != NULL, "line %d: to_string failed: %s", line, ops_last_error());
    ck_assert_msg(strcmp(s, expected) == 0, "line %d: got\n%s\nexpected\n%s", line, s, expected);
    free(s);
    ops_tensor_release(t);
}

static ops_tensor *
from(const void *data, ops_int_list sizes, ops_dtype dt)
{
    return ops_tensor_from_data(data, sizes, dt);
}

static ops_tensor *
arange_i64(int64_t n, ops_int_list sizes)
{
    int64_t *buf = malloc((size_t)n * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++)
        buf[i] = i;
    ops_tensor *t = from(buf, sizes, OPS_INT64);
    free(buf);
    return t;
}

START_TEST(test_floats)
{
    expect_str(from((float[]){1, 2.5f, 3, 4}, OPS_INTS(2, 2), OPS_FLOAT32),
               "tensor([[1.0000, 2.5000],\n"
               "        [3.0000, 4.0000]], dtype=float32, shape=[2, 2])");
    expect_str(from((float[]){1, 2, 3, 4}, OPS_INTS(2, 2), OPS_FLOAT32),
               "tensor([[1., 2.],\n"
               "        [3., 4.]], dtype=float32, shape=[2, 2])");
    expect_str(from((float[]){0, 0, 0}, OPS_INTS(3), OPS_FLOAT32), "tensor([0., 0., 0.], dtype=float32, shape=[3])");
    expect_str(from((float[]){1, INFINITY, -2}, OPS_INTS(3), OPS_FLOAT32),
               "tensor([ 1., inf, -2.], dtype=float32, shape=[3])");
    expect_str(from((float[]){-0.0f, 1.5f}, OPS_INTS(2), OPS_FLOAT32),
               "tensor([-0.0000, 1.5000], dtype=float32, shape=[2])");
    expect_str(from((float[]){1e9f, 1}, OPS_INTS(2), OPS_FLOAT32),
               "tensor([1.0000e+09, 1.0000e+00], dtype=float32, shape=[2])");
    /* Scientific because of the tiny value; nan and inf padded to the width; the
     * shape suffix would pass 80 columns, so it wraps. */
    expect_str(from((double[]){1e-5, 1, NAN, -INFINITY}, OPS_INTS(4), OPS_FLOAT64),
               "tensor([1.0000e-05, 1.0000e+00,        nan,       -inf], dtype=float64,\n"
               "       shape=[4])");
    expect_str(from((double[]){-NAN}, OPS_INTS(1), OPS_FLOAT64), "tensor([nan], dtype=float64, shape=[1])");
    expect_str(from((float[]){3.5f}, OPS_INTS(), OPS_FLOAT32), "tensor(3.5000, dtype=float32, shape=[])");
    expect_str(from((double[]){-2}, OPS_INTS(), OPS_FLOAT64), "tensor(-2., dtype=float64, shape=[])");
}
END_TEST

START_TEST(test_half_types)
{
    /* 0x2E66, 0x3266, 0x34CD: the halves nearest 0.1, 0.2, 0.3. */
    expect_str(from((uint16_t[]){0x2E66, 0x3266, 0x34CD}, OPS_INTS(3), OPS_FLOAT16),
               "tensor([0.1000, 0.2000, 0.3000], dtype=float16, shape=[3])");
    /* bfloat16 1.5, -2, 3 */
    expect_str(from((uint16_t[]){0x3FC0, 0xC000, 0x4040}, OPS_INTS(3), OPS_BFLOAT16),
               "tensor([ 1.5000, -2.0000,  3.0000], dtype=bfloat16, shape=[3])");
    /* half 65504 (the largest) and 1 */
    expect_str(from((uint16_t[]){0x7BFF, 0x3C00}, OPS_INTS(2), OPS_FLOAT16),
               "tensor([6.5504e+04, 1.0000e+00], dtype=float16, shape=[2])");
}
END_TEST

START_TEST(test_ints_and_bools)
{
    expect_str(from((int32_t[]){1, -20, 300, 4}, OPS_INTS(2, 2), OPS_INT32),
               "tensor([[  1, -20],\n"
               "        [300,   4]], dtype=int32, shape=[2, 2])");
    expect_str(from((uint8_t[]){0, 255}, OPS_INTS(2), OPS_UINT8), "tensor([  0, 255], dtype=uint8, shape=[2])");
    expect_str(from((int8_t[]){-128}, OPS_INTS(1), OPS_INT8), "tensor([-128], dtype=int8, shape=[1])");
    expect_str(from((int16_t[]){7}, OPS_INTS(), OPS_INT16), "tensor(7, dtype=int16, shape=[])");
    expect_str(from((int64_t[]){-7}, OPS_INTS(), OPS_INT64), "tensor(-7, dtype=int64, shape=[])");
    expect_str(from((bool[]){true, false, true}, OPS_INTS(3), OPS_BOOL),
               "tensor([ True, False,  True], dtype=bool, shape=[3])");
    expect_str(from((bool[]){true, true}, OPS_INTS(2), OPS_BOOL), "tensor([True, True], dtype=bool, shape=[2])");
    expect_str(from((bool[]){true}, OPS_INTS(), OPS_BOOL), "tensor(True, dtype=bool, shape=[])");
    expect_str(arange_i64(8, OPS_INTS(2, 2, 2)),
               "tensor([[[0, 1],\n"
               "         [2, 3]],\n"
               "\n"
               "        [[4, 5],\n"
               "         [6, 7]]], dtype=int64, shape=[2, 2, 2])");
}
END_TEST

START_TEST(test_empty_and_strided)
{
    expect_str(ops_tensor_new("test", 2, (int64_t[]){0, 3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU),
               "tensor([], dtype=float32, shape=[0, 3])");
    expect_str(ops_tensor_new("test", 1, (int64_t[]){0}, NULL, OPS_INT64, OPS_DEVICE_CPU),
               "tensor([], dtype=int64, shape=[0])");
    ops_tensor *m = arange_i64(6, OPS_INTS(2, 3));
    expect_str(transpose_impl(m, 0, 1),
               "tensor([[0, 3],\n"
               "        [1, 4],\n"
               "        [2, 5]], dtype=int64, shape=[3, 2])");
    /* A broadcast (stride 0) view prints every position. */
    ops_tensor *b = ops_tensor_new_view(m, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1}, 3);
    expect_str(b, "tensor([[3, 4, 5],\n"
                  "        [3, 4, 5]], dtype=int64, shape=[2, 3])");
    ops_tensor_release(m);
}
END_TEST

START_TEST(test_line_wrap)
{
    float v[30];
    for (int i = 0; i < 30; i++)
        v[i] = (float)i;
    expect_str(from(v, OPS_INTS(30), OPS_FLOAT32),
               "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
               "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
               "        28., 29.], dtype=float32, shape=[30])");
}
END_TEST

START_TEST(test_summarized)
{
    expect_str(arange_i64(2000, OPS_INTS(2000)),
               "tensor([   0,    1,    2,  ..., 1997, 1998, 1999], dtype=int64, shape=[2000])");
    expect_str(arange_i64(2500, OPS_INTS(50, 50)),
               "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
               "        [  50,   51,   52,  ...,   97,   98,   99],\n"
               "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
               "        ...,\n"
               "        [2350, 2351, 2352,  ..., 2397, 2398, 2399],\n"
               "        [2400, 2401, 2402,  ..., 2447, 2448, 2449],\n"
               "        [2450, 2451, 2452,  ..., 2497, 2498, 2499]], dtype=int64,\n"
               "       shape=[50, 50])");
    /* Exactly 1000 elements are printed in full; only the sizes past 6 are cut. */
    ops_tensor *t = arange_i64(1001, OPS_INTS(1001, 1));
    char *s = ops_tensor_to_string(t);
    ck_assert_ptr_nonnull(strstr(s, "        [   2],\n        ...,\n        [ 998],"));
    free(s);
    ops_tensor_release(t);
    t = arange_i64(1000, OPS_INTS(1000));
    s = ops_tensor_to_string(t);
    ck_assert_ptr_null(strstr(s, "..."));
    ck_assert_ptr_nonnull(strstr(s, "998, 999]"));
    free(s);
    ops_tensor_release(t);
}
END_TEST

START_TEST(test_print_and_errors)
{
    ck_assert_ptr_null(ops_tensor_to_string(NULL));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
    ck_assert_int_eq(ops_tensor_print(NULL, stdout), OPS_ERR_VALUE);

    ops_tensor *t = from((int32_t[]){1, 2}, OPS_INTS(2), OPS_INT32);
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ops_tensor_print(t, f), OPS_OK);
    rewind(f);
    char buf[128] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    ck_assert_uint_gt(n, 0);
    ck_assert_str_eq(buf, "tensor([1, 2], dtype=int32, shape=[2])\n");
    ops_tensor_release(t);
}
END_TEST

static Suite *
print_suite(void)
{
    Suite *s = suite_create("print");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_floats);
    tcase_add_test(tc, test_half_types);
    tcase_add_test(tc, test_ints_and_bools);
    tcase_add_test(tc, test_empty_and_strided);
    tcase_add_test(tc, test_line_wrap);
    tcase_add_test(tc, test_summarized);
    tcase_add_test(tc, test_print_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(print_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

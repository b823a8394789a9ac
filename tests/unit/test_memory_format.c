/* memory_format= through the C API (docs/memory-format.md): the strides of each format
 * against hand-derived ones (PyTorch 1.13 gives the same for the same calls), values
 * unchanged by every layout change, is_contiguous(memory_format) and
 * suggest_memory_format(), preserve_format's rule, when contiguous/to return self, and
 * every refusal with its message, also through the boxed registry. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_op_arange.h"
#include "ops_op_clone.h"
#include "ops_op_contiguous.h"
#include "ops_op_empty.h"
#include "ops_op_empty_like.h"
#include "ops_op_full_like.h"
#include "ops_op_ones_like.h"
#include "ops_op_permute.h"
#include "ops_op_rand_like.h"
#include "ops_op_randint_like.h"
#include "ops_op_slice.h"
#include "ops_op_t.h"
#include "ops_op_to.h"
#include "ops_op_view.h"
#include "ops_op_zeros_like.h"
#include "ops_internal.h"
#include "ops_registry.h"

#define I(...) OPS_INTS(__VA_ARGS__)

/* arange(numel) as float64 viewed as sizes (contiguous). */
static ops_tensor *
arange(ops_int_list sizes)
{
    int64_t n = 1;
    for (int64_t i = 0; i < sizes.len; i++)
        n *= sizes.data[i];
    ops_tensor *flat = ops_arange(OPS_SCALAR_INT(n), OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(flat);
    ops_tensor *t = ops_view(flat, sizes);
    ops_tensor_release(flat);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void
expect_strides(const ops_tensor *t, ops_int_list want)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_ndim(t), want.len);
    for (int64_t i = 0; i < want.len; i++)
        ck_assert_msg(ops_tensor_strides(t)[i] == want.data[i], "stride %d: %lld, want %lld", (int)i,
                      (long long)ops_tensor_strides(t)[i], (long long)want.data[i]);
}

/* Element at a multi-index, read through the strides (float64). */
static double
at(const ops_tensor *t, const int64_t *idx)
{
    int64_t off = 0;
    for (int64_t d = 0; d < ops_tensor_ndim(t); d++)
        off += idx[d] * ops_tensor_strides(t)[d];
    return ((const double *)ops_tensor_data_ptr(t))[off];
}

/* Every element of a equals b's at the same index (any strides). */
static void
expect_same_values(const ops_tensor *a, const ops_tensor *b)
{
    const int nd = (int)ops_tensor_ndim(a);
    ck_assert_int_eq(nd, ops_tensor_ndim(b));
    int64_t idx[OPS_MAX_DIMS] = {0};
    for (int64_t k = 0; k < ops_tensor_numel(a); k++) {
        ck_assert(at(a, idx) == at(b, idx));
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < ops_tensor_sizes(a)[d])
                break;
            idx[d] = 0;
        }
    }
}

static void
expect_error(const ops_tensor *t, const char *substring)
{
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(ops_last_error(), substring) != NULL, "error '%s' lacks '%s'", ops_last_error(), substring);
}

START_TEST(test_names)
{
    ck_assert_str_eq(ops_memory_format_name(OPS_CHANNELS_LAST), "channels_last");
    ck_assert_str_eq(ops_memory_format_name(OPS_CONTIGUOUS_FORMAT), "contiguous_format");
    ck_assert_str_eq(ops_memory_format_name((ops_memory_format)42), "?");
    ck_assert_int_eq(ops_memory_format_from_name("channels_last_3d"), OPS_CHANNELS_LAST_3D);
    ck_assert_int_eq(ops_memory_format_from_name("nhwc"), OPS_MEMORY_FORMAT_NONE);
}
END_TEST

START_TEST(test_empty_strides)
{
    ops_tensor *t = ops_empty(I(2, 3, 4, 5), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CHANNELS_LAST);
    expect_strides(t, I(60, 1, 15, 3)); /* N, H, W, C outermost to innermost */
    ck_assert(!ops_tensor_is_contiguous(t));
    ck_assert(ops_tensor_is_contiguous_as(t, OPS_CHANNELS_LAST));
    ck_assert_int_eq(ops_tensor_suggest_memory_format(t), OPS_CHANNELS_LAST);
    ops_tensor_release(t);
    t = ops_empty(I(2, 3, 4, 5, 6), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CHANNELS_LAST_3D);
    expect_strides(t, I(360, 1, 90, 18, 3));
    ck_assert(ops_tensor_is_contiguous_as(t, OPS_CHANNELS_LAST_3D));
    ck_assert(!ops_tensor_is_contiguous_as(t, OPS_CHANNELS_LAST)); /* wrong rank: false */
    ck_assert_int_eq(ops_tensor_suggest_memory_format(t), OPS_CHANNELS_LAST_3D);
    ops_tensor_release(t);
    /* channels-last strides are plain products: a 0 size zeroes the outer ones */
    t = ops_empty(I(2, 0, 4, 5), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CHANNELS_LAST);
    expect_strides(t, I(0, 1, 0, 0));
    ops_tensor_release(t);
    /* size-1 dims: N111 and N C 1 1 */
    t = ops_empty(I(2, 3, 1, 1), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CHANNELS_LAST);
    expect_strides(t, I(3, 1, 3, 3));
    ck_assert(ops_tensor_is_contiguous(t) && ops_tensor_is_contiguous_as(t, OPS_CHANNELS_LAST));
    ops_tensor_release(t);
    t = ops_empty(I(2, 3, 4, 5), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CONTIGUOUS_FORMAT);
    expect_strides(t, I(60, 20, 5, 1));
    ck_assert(!ops_tensor_is_contiguous_as(t, OPS_CHANNELS_LAST));
    ck_assert_int_eq(ops_tensor_suggest_memory_format(t), OPS_CONTIGUOUS_FORMAT);
    ops_tensor_release(t);

    expect_error(ops_empty(I(2, 3, 4), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CHANNELS_LAST),
                 "empty: required rank 4 tensor to use channels_last format");
    expect_error(ops_empty(I(2, 3, 4, 5), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CHANNELS_LAST_3D),
                 "empty: required rank 5 tensor to use channels_last_3d format");
    expect_error(ops_empty(I(2, 3), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_PRESERVE_FORMAT),
                 "empty: unsupported memory format preserve_format");
    expect_error(ops_empty(I(2, 3), OPS_FLOAT32, OPS_DEVICE_CPU, (ops_memory_format)9),
                 "empty: invalid memory_format (9)");
}
END_TEST

START_TEST(test_clone_contiguous_values)
{
    ops_tensor *x = arange(I(2, 3, 4, 5));
    ops_tensor *cl = ops_clone(x, OPS_CHANNELS_LAST);
    expect_strides(cl, I(60, 1, 15, 3));
    expect_same_values(cl, x);
    /* element [1, 2, 3, 4] is 1*60 + 2*20 + 3*5 + 4 = 119, stored at 60 + 2 + 45 + 12 */
    ck_assert(((const double *)ops_tensor_data_ptr(cl))[60 + 2 + 45 + 12] == 119.0);

    /* preserve (None): a dense input keeps its strides */
    ops_tensor *again = ops_clone(cl, OPS_MEMORY_FORMAT_NONE);
    expect_strides(again, I(60, 1, 15, 3));
    expect_same_values(again, x);
    ops_tensor_release(again);

    /* contiguous(channels_last) of a channels-last tensor is itself; of x a copy */
    ops_tensor *same = ops_contiguous(cl, OPS_CHANNELS_LAST);
    ck_assert_ptr_eq(same, cl);
    ops_tensor_release(same);
    ops_tensor *back = ops_contiguous(cl, OPS_CONTIGUOUS_FORMAT);
    expect_strides(back, I(60, 20, 5, 1));
    expect_same_values(back, x);
    ops_tensor_release(back);
    ops_tensor *c3 = ops_contiguous(x, OPS_CHANNELS_LAST);
    expect_strides(c3, I(60, 1, 15, 3));
    expect_same_values(c3, x);
    ops_tensor_release(c3);

    /* preserve_format: torch refuses it only when a copy would be needed */
    same = ops_contiguous(x, OPS_PRESERVE_FORMAT);
    ck_assert_ptr_eq(same, x);
    ops_tensor_release(same);
    expect_error(ops_contiguous(cl, OPS_PRESERVE_FORMAT),
                 "contiguous: preserve memory format is unsupported by the contiguous operator");
    expect_error(ops_clone(cl, OPS_CHANNELS_LAST_3D), "clone: required rank 5 tensor to use channels_last_3d format");
    ops_tensor *x3 = arange(I(2, 3, 4));
    expect_error(ops_contiguous(x3, OPS_CHANNELS_LAST), "contiguous: required rank 4 tensor to use channels_last");
    ops_tensor_release(x3);
    ops_tensor_release(cl);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_preserve_non_dense)
{
    /* a transposed matrix sliced every other row: sizes (3, 4), strides (2, 5)... built
     * as torch's randn(4, 5).t()[::2]: not dense, so preserve gives dense strides in its
     * dim order, (1, 3), as torch 1.13's clone and empty_like do */
    ops_tensor *base = arange(I(4, 5));
    ops_tensor *tr = ops_t(base);
    ops_tensor *x = ops_slice(tr, 0, NULL, NULL, 2);
    ck_assert_ptr_nonnull(x);
    expect_strides(x, I(2, 5));
    ops_tensor *c = ops_clone(x, OPS_MEMORY_FORMAT_NONE);
    expect_strides(c, I(1, 3));
    expect_same_values(c, x);
    ops_tensor *e = ops_empty_like(x, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_PRESERVE_FORMAT);
    expect_strides(e, I(1, 3));
    ops_tensor *z = ops_zeros_like(x, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_CONTIGUOUS_FORMAT);
    expect_strides(z, I(4, 1));
    ops_tensor_release(z);
    ops_tensor_release(e);
    ops_tensor_release(c);
    ops_tensor_release(x);
    ops_tensor_release(tr);
    ops_tensor_release(base);
}
END_TEST

START_TEST(test_like_and_to)
{
    ops_tensor *x = arange(I(2, 3, 4, 5));
    ops_tensor *o = ops_ones_like(x, OPS_FLOAT32, OPS_DEVICE_UNSPECIFIED, OPS_CHANNELS_LAST);
    expect_strides(o, I(60, 1, 15, 3));
    ck_assert_int_eq(ops_tensor_dtype(o), OPS_FLOAT32);
    ops_tensor_release(o);
    ops_tensor *f = ops_full_like(x, OPS_SCALAR_INT(7), OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_CHANNELS_LAST);
    expect_strides(f, I(60, 1, 15, 3));
    ck_assert(((const double *)ops_tensor_data_ptr(f))[119] == 7.0);
    ops_tensor_release(f);
    ops_tensor *r = ops_rand_like(x, NULL, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_CHANNELS_LAST);
    expect_strides(r, I(60, 1, 15, 3));
    ops_tensor_release(r);
    ops_tensor *ri = ops_randint_like(x, 5, NULL, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED, OPS_CHANNELS_LAST);
    expect_strides(ri, I(60, 1, 15, 3));
    ops_tensor_release(ri);

    /* to: a layout change is a copy, also with dtype and device unchanged */
    ops_tensor *cl = ops_to_dtype(x, OPS_FLOAT64, false, false, OPS_CHANNELS_LAST);
    ck_assert_ptr_ne(cl, x);
    expect_strides(cl, I(60, 1, 15, 3));
    expect_same_values(cl, x);
    /* the format cl's strides suggest: cl itself */
    ops_tensor *same = ops_to_device(cl, OPS_DEVICE_CPU, OPS_DTYPE_NONE, false, false, OPS_CHANNELS_LAST);
    ck_assert_ptr_eq(same, cl);
    ops_tensor_release(same);
    /* None keeps cl's layout through a dtype change */
    ops_tensor *f32 = ops_to_dtype(cl, OPS_FLOAT32, false, false, OPS_MEMORY_FORMAT_NONE);
    expect_strides(f32, I(60, 1, 15, 3));
    ops_tensor *back = ops_to_other(cl, x, false, false, OPS_CONTIGUOUS_FORMAT);
    expect_strides(back, I(60, 20, 5, 1));
    expect_same_values(back, x);
    ops_tensor_release(back);
    ops_tensor_release(f32);
    /* torch's rule: a transposed matrix "suggests" contiguous_format, so to() keeps it */
    ops_tensor *m = arange(I(3, 4));
    ops_tensor *mt = ops_t(m);
    same = ops_to_dtype(mt, OPS_FLOAT64, false, false, OPS_CONTIGUOUS_FORMAT);
    ck_assert_ptr_eq(same, mt);
    ops_tensor_release(same);
    expect_error(ops_to_dtype(mt, OPS_FLOAT64, false, false, OPS_CHANNELS_LAST),
                 "to: required rank 4 tensor to use channels_last format");
    expect_error(ops_to_dtype(mt, OPS_FLOAT64, false, false, (ops_memory_format)-7), "to: invalid memory_format (-7)");
    ops_tensor_release(mt);
    ops_tensor_release(m);
    ops_tensor_release(cl);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_suggest_and_is_contiguous)
{
    /* permute(0, 2, 3, 1) of a contiguous NHWC buffer is channels-last NCHW */
    ops_tensor *nhwc = arange(I(2, 4, 5, 3));
    ops_tensor *p = ops_permute(nhwc, I(0, 3, 1, 2));
    expect_strides(p, I(60, 1, 15, 3));
    ck_assert(ops_tensor_is_contiguous_as(p, OPS_CHANNELS_LAST));
    ck_assert_int_eq(ops_tensor_suggest_memory_format(p), OPS_CHANNELS_LAST);
    /* sliced along H: not channels-last contiguous, still channels-last-like */
    ops_tensor *s = ops_slice(p, 2, NULL, NULL, 2);
    ck_assert(!ops_tensor_is_contiguous_as(s, OPS_CHANNELS_LAST));
    ck_assert_int_eq(ops_tensor_suggest_memory_format(s), OPS_CHANNELS_LAST);
    ops_tensor *c = ops_clone(s, OPS_MEMORY_FORMAT_NONE); /* preserve: dim order kept */
    expect_strides(c, I(30, 1, 15, 3));
    ops_tensor_release(c);
    ops_tensor_release(s);
    /* N111: ambiguous, contiguous wins as in torch */
    ops_tensor *n = ops_empty(I(2, 1, 1, 1), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_CHANNELS_LAST);
    ck_assert_int_eq(ops_tensor_suggest_memory_format(n), OPS_CONTIGUOUS_FORMAT);
    ops_tensor_release(n);
    /* 0 elements: contiguous, but not channels-last unless the strides say so */
    ops_tensor *z = ops_empty(I(0, 3, 4, 5), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ck_assert(ops_tensor_is_contiguous(z));
    ck_assert(!ops_tensor_is_contiguous_as(z, OPS_CHANNELS_LAST));
    ops_tensor_release(z);
    ops_tensor_release(p);
    ops_tensor_release(nhwc);
}
END_TEST

START_TEST(test_boxed)
{
    const ops_op_info *op = ops_registry_find("clone", NULL);
    ck_assert_ptr_nonnull(op);
    ops_tensor *x = arange(I(2, 3, 4, 5));
    ops_ivalue args[2] = {ops_ivalue_tensor(x), ops_ivalue_memory_format(OPS_CHANNELS_LAST)};
    ops_ivalue ret;
    ck_assert_int_eq(op->call(args, &ret), OPS_OK);
    expect_strides(ret.v.tensor, I(60, 1, 15, 3));
    ops_ivalue_release(&ret);
    args[1] = ops_ivalue_none();
    ck_assert_int_eq(op->call(args, &ret), OPS_OK);
    expect_strides(ret.v.tensor, I(60, 20, 5, 1));
    ops_ivalue_release(&ret);
    args[1] = ops_ivalue_memory_format((ops_memory_format)11);
    ck_assert_int_ne(op->call(args, &ret), OPS_OK);
    ck_assert_msg(strstr(ops_last_error(), "clone: argument 'memory_format' is not a memory format (11)") != NULL,
                  "%s", ops_last_error());
    args[1] = ops_ivalue_int(2);
    ck_assert_int_ne(op->call(args, &ret), OPS_OK);
    ck_assert_msg(strstr(ops_last_error(), "clone: argument 'memory_format' must be") != NULL, "%s",
                  ops_last_error());
    ops_tensor_release(x);
}
END_TEST

static Suite *
memory_format_suite(void)
{
    Suite *s = suite_create("memory_format");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_empty_strides);
    tcase_add_test(tc, test_clone_contiguous_values);
    tcase_add_test(tc, test_preserve_non_dense);
    tcase_add_test(tc, test_like_and_to);
    tcase_add_test(tc, test_suggest_and_is_contiguous);
    tcase_add_test(tc, test_boxed);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(memory_format_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The generated C API and boxed registry, through the built library: the glue's
 * checks and messages (docs/codegen.md "What the generated glue does"), Scalar
 * wrapping, the three forms of a structured op, and the registry's descriptions and
 * boxed calls.  Expected values are worked out by hand from the schema and
 * PyTorch's rules. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ops_op_add.h"
#include "ops_op_addmm.h"
#include "ops_op_avg_pool2d.h"
#include "ops_op_bincount.h"
#include "ops_op_bmm.h"
#include "ops_op_bucketize.h"
#include "ops_op_celu.h"
#include "ops_op_conv2d.h"
#include "ops_op_conv_transpose2d.h"
#include "ops_op_dropout.h"
#include "ops_op_glu.h"
#include "ops_op_group_norm.h"
#include "ops_op_hardtanh.h"
#include "ops_op_histc.h"
#include "ops_op_kthvalue.h"
#include "ops_op_layer_norm.h"
#include "ops_op_linear.h"
#include "ops_op_linspace.h"
#include "ops_op_matmul.h"
#include "ops_op_max_pool2d.h"
#include "ops_op_mm.h"
#include "ops_op_mse_loss.h"
#include "ops_op_mv.h"
#include "ops_op_neg.h"
#include "ops_op_nll_loss.h"
#include "ops_op_nuclear_norm.h"
#include "ops_op_one_hot.h"
#include "ops_op_ones.h"
#include "ops_op_rand.h"
#include "ops_op_randperm.h"
#include "ops_op_searchsorted.h"
#include "ops_op_to.h"
#include "ops_op_topk.h"
#include "ops_op_uniform.h"
#include "ops_op_view.h"
#include "ops_op_zeros.h"
#include "ops_internal.h"
#include "ops_registry.h"

static ops_tensor *
f32(const float *data, int64_t n)
{
    ops_tensor *t = ops_tensor_from_data(data, (ops_int_list){(int64_t[]){n}, 1}, OPS_FLOAT32);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ops_tensor *
i64(const int64_t *data, int64_t n)
{
    ops_tensor *t = ops_tensor_from_data(data, (ops_int_list){(int64_t[]){n}, 1}, OPS_INT64);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void
assert_f32(const ops_tensor *t, const float *want, int64_t n)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_tensor_dtype(t), OPS_FLOAT32);
    ck_assert_int_eq(ops_tensor_numel(t), n);
    ck_assert(ops_tensor_is_contiguous(t));
    const float *got = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < n; i++)
        ck_assert_float_eq(got[i], want[i]);
}

static void
assert_error(ops_status want, const char *msg)
{
    ck_assert_int_eq(ops_last_status(), want);
    ck_assert_str_eq(ops_last_error(), msg);
    ops_clear_error();
}

/* ---- the glue ---------------------------------------------------------- */

static void
assert_error_prefix(ops_status want, const char *prefix)
{
    ck_assert_int_eq(ops_last_status(), want);
    ck_assert_msg(strncmp(ops_last_error(), prefix, strlen(prefix)) == 0, "got '%s', want '%s...'",
                  ops_last_error(), prefix);
    ops_clear_error();
}

START_TEST(test_null_tensor_arguments)
{
    const float xs[] = {1, 2};
    ops_tensor *x = f32(xs, 2);
    ops_tensor *out = f32(xs, 2);

    ck_assert_ptr_null(ops_add(NULL, x, OPS_SCALAR_INT(1)));
    assert_error(OPS_ERR_VALUE, "add: argument 'self' must be a Tensor, got NULL");
    ck_assert_ptr_null(ops_add(x, NULL, OPS_SCALAR_INT(1)));
    assert_error(OPS_ERR_VALUE, "add: argument 'other' must be a Tensor, got NULL");
    ck_assert_int_eq(ops_add_(NULL, x, OPS_SCALAR_INT(1)), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add_: argument 'self' must be a Tensor, got NULL");
    ck_assert_int_eq(ops_add_out(x, x, OPS_SCALAR_INT(1), NULL), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add: argument 'out' must be a Tensor, got NULL");
    ck_assert_int_eq(ops_add_scalar_(NULL, OPS_SCALAR_INT(1), OPS_SCALAR_INT(1)), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add_: argument 'self' must be a Tensor, got NULL");
    ck_assert_ptr_null(ops_neg(NULL));
    assert_error(OPS_ERR_VALUE, "neg: argument 'self' must be a Tensor, got NULL");

    /* The failed out= call left out untouched. */
    const float *o = ops_tensor_data_ptr(out);
    ck_assert_float_eq(o[0], 1);
    ck_assert_float_eq(o[1], 2);
    ops_tensor_release(x);
    ops_tensor_release(out);
}
END_TEST

/* `dtypes:` with `of:` on an entry with a plain kernel (docs/codegen.md "Dtypes"): the
 * glue refuses an undeclared dtype of those arguments with the message the kernel
 * gave (the generic one, or the entry's own), before anything is written; where the
 * kernel looks at something else first (group_norm's geometry: no `of:`), that error
 * still comes first. */
START_TEST(test_declared_dtypes_of_plain_entries)
{
    static const char floating[] = "(supported: float16, bfloat16, float32, float64)";
    char want[160];
    const int64_t is[] = {1, 0};
    const float xs[] = {0.25f, 0.5f};
    ops_tensor *a = i64(is, 2), *b = i64(is, 2), *x = f32(xs, 2);
    ops_tensor *out = f32(xs, 2);

    ck_assert_int_eq(ops_mse_loss_out(a, b, 1, out), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "mse_loss: dtype int64 is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);
    assert_f32(out, xs, 2); /* untouched */
    /* the promoted dtype of self and target: float32 with int64 is float32 */
    ops_tensor *r = ops_mse_loss(x, a, 1);
    ck_assert_ptr_nonnull(r);
    ops_tensor_release(r);

    /* nll_loss: self and weight (its int64 target is not a declared input); the dtype
     * before the target's shape (a 1-D input wants a 0-D target), as in the kernel */
    ck_assert_ptr_null(ops_nll_loss(a, b, NULL, 1, -100));
    snprintf(want, sizeof want, "nll_loss: dtype int64 is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);

    ck_assert_ptr_null(ops_layer_norm(a, (ops_int_list){(int64_t[]){2}, 1}, NULL, NULL, 1e-5, true));
    snprintf(want, sizeof want, "layer_norm: dtype int64 is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);

    ck_assert_int_eq(ops_uniform_(a, 0, 1, NULL), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "uniform_: dtype int64 is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_int_eq(((const int64_t *)ops_tensor_data_ptr(a))[0], 1); /* untouched */

    /* the entry's own message */
    ck_assert_ptr_null(ops_one_hot(x, -1));
    assert_error(OPS_ERR_DTYPE, "one_hot: one_hot is only applicable to index tensor of type LongTensor.");

    /* the entry's `check:` (its geometry) first, then the glue's dtype check */
    ck_assert_ptr_null(ops_group_norm(a, 1, NULL, NULL, 1e-5, true));
    assert_error(OPS_ERR_SHAPE, "group_norm: Expected at least 2 dimensions for input tensor but received 1");

    ops_tensor_release(x);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(out);
}
END_TEST

/* Plain entries whose glue checks the declared dtypes after the entry's `check:` (the
 * argument errors the op gives first, moved out of the kernel), and factories whose
 * glue checks the dtype argument: the messages, in the order the kernels gave them. */
START_TEST(test_declared_dtypes_after_argument_checks)
{
    static const char floating[] = "(supported: float16, bfloat16, float32, float64)";
    static const char numeric[] =
        "(supported: uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)";
    char want[200];
    const int64_t is[] = {1, 0, 1};
    ops_tensor *a = i64(is, 3), *a2 = i64(is, 2);

    ck_assert_ptr_null(ops_dropout(a, 2.0, true));
    assert_error(OPS_ERR_VALUE, "dropout: dropout probability has to be between 0 and 1, but got 2");
    ck_assert_ptr_null(ops_dropout(a, 0.5, true));
    snprintf(want, sizeof want, "dropout: dtype int64 is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);

    ck_assert_ptr_null(ops_glu(a, 0));
    assert_error(OPS_ERR_SHAPE, "glu: Halving dimension must be even, but dimension 0 is size 3");
    ck_assert_ptr_null(ops_glu(a2, 0));
    snprintf(want, sizeof want, "glu: dtype int64 is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);

    /* a factory's dtype argument, checked by the glue; 37 is no dtype (and no bit of the mask) */
    ck_assert_ptr_null(ops_rand(OPS_INTS(2), NULL, OPS_INT64, OPS_DEVICE_UNSPECIFIED));
    snprintf(want, sizeof want, "rand: dtype int64 is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_ptr_null(ops_rand(OPS_INTS(2), NULL, (ops_dtype)37, OPS_DEVICE_UNSPECIFIED));
    snprintf(want, sizeof want, "rand: dtype ? is not supported %s", floating);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_ptr_null(ops_randperm(-1, NULL, OPS_BOOL, OPS_DEVICE_UNSPECIFIED));
    assert_error(OPS_ERR_VALUE, "randperm: n must be non-negative, got -1");
    ck_assert_ptr_null(ops_randperm(3, NULL, OPS_BOOL, OPS_DEVICE_UNSPECIFIED));
    snprintf(want, sizeof want, "randperm: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_ptr_null(ops_linspace(OPS_SCALAR_INT(0), OPS_SCALAR_INT(1), -1, OPS_BOOL, OPS_DEVICE_UNSPECIFIED));
    assert_error(OPS_ERR_VALUE, "linspace: number of steps must be non-negative, got -1");
    ck_assert_ptr_null(ops_linspace(OPS_SCALAR_INT(0), OPS_SCALAR_INT(1), 3, OPS_BOOL, OPS_DEVICE_UNSPECIFIED));
    snprintf(want, sizeof want, "linspace: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);

    /* a pool: its sizes, then the dtype; its out= form's out= first */
    const int64_t k3[] = {2, 2, 2}, k2[] = {2, 2};
    ops_tensor *b4 = ops_ones(OPS_INTS(1, 1, 4, 4), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(b4);
    const ops_int_list none = {NULL, 0}, zero = {(const int64_t[]){0}, 1}, one = {(const int64_t[]){1}, 1};
    ck_assert_ptr_null(ops_max_pool2d(b4, (ops_int_list){k3, 3}, none, zero, one, false));
    assert_error(OPS_ERR_VALUE, "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
    ck_assert_ptr_null(ops_max_pool2d(b4, (ops_int_list){k2, 2}, none, zero, one, false));
    snprintf(want, sizeof want, "max_pool2d: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    const float xs[] = {0.25f, 0.5f};
    ops_tensor *out = f32(xs, 2);
    ck_assert_int_eq(ops_avg_pool2d_out(b4, (ops_int_list){k3, 3}, none, zero, false, true, NULL, out),
                     OPS_ERR_DTYPE);
    assert_error(OPS_ERR_DTYPE, "avg_pool2d: Expected out tensor to have dtype bool, but got float32 instead");
    assert_f32(out, xs, 2); /* untouched */

    /* searchsorted/bucketize of Tensors: side, shapes and out='s dtype (their `check:`),
     * then the promoted dtype; topk/kthvalue: the dtype first, before dim and k */
    ops_tensor *b3 = ops_ones(OPS_INTS(3), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ops_tensor *b11 = ops_ones(OPS_INTS(1, 1), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(b3);
    ck_assert_ptr_nonnull(b11);
    ck_assert_ptr_null(ops_searchsorted(b3, b3, false, false, "x", NULL));
    assert_error(OPS_ERR_VALUE, "searchsorted: side can only be 'left' or 'right' but got x");
    ck_assert_ptr_null(ops_searchsorted(b3, b3, false, false, NULL, NULL));
    snprintf(want, sizeof want, "searchsorted: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_int_eq(ops_searchsorted_tensor_out(b3, b3, false, false, NULL, NULL, out), OPS_ERR_DTYPE);
    assert_error(OPS_ERR_DTYPE, "searchsorted: output tensor's dtype is wrong, it can only be Int(int32) or "
                                "Long(int64) depending on whether out_int32 flag is True, but we got output "
                                "tensor's dtype float32 and out_int32 flag is False");
    assert_f32(out, xs, 2);
    ck_assert_ptr_null(ops_bucketize(b3, b11, false, false));
    assert_error(OPS_ERR_SHAPE, "bucketize: boundaries tensor must be 1 dimension, but got dim(2)");
    ck_assert_int_eq(ops_bucketize_tensor_out(b3, b3, false, false, a), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "bucketize: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ops_tensor *tv = NULL, *ti = NULL;
    ck_assert_int_eq(ops_topk(b3, 9, 4, true, true, &tv, &ti), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "topk: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_int_eq(ops_kthvalue(b3, 9, 4, false, &tv, &ti), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "kthvalue: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_ptr_null(tv);
    ck_assert_ptr_null(ti);

    /* the mm family: shapes and one dtype (their `check:`), then the dtype, then what
     * PyTorch checks after it (an in-place self's shape, the batch broadcast, out=) */
    ops_tensor *b23 = ops_ones(OPS_INTS(2, 3), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ops_tensor *b34 = ops_ones(OPS_INTS(3, 4), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ops_tensor *b223 = ops_ones(OPS_INTS(2, 2, 3), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ops_tensor *b334 = ops_ones(OPS_INTS(3, 3, 4), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(b23);
    ck_assert_ptr_nonnull(b34);
    ck_assert_ptr_nonnull(b223);
    ck_assert_ptr_nonnull(b334);
    ck_assert_ptr_null(ops_mm(b23, b23));
    assert_error(OPS_ERR_SHAPE, "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)");
    ck_assert_ptr_null(ops_mm(b23, b34));
    snprintf(want, sizeof want, "mm: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_int_eq(ops_mm_out(b23, b34, out), OPS_ERR_DTYPE);
    assert_error(OPS_ERR_DTYPE, want);
    assert_f32(out, xs, 2);
    ck_assert_int_eq(ops_addmm_(b3, b23, b34, OPS_SCALAR_INT(1), OPS_SCALAR_INT(1)), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "addmm_: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_int_eq(ops_addmm_(b3, b3, b34, OPS_SCALAR_INT(1), OPS_SCALAR_INT(1)), OPS_ERR_SHAPE);
    assert_error(OPS_ERR_SHAPE, "addmm_: mat1 must be a matrix, got 1-D tensor");
    ck_assert_ptr_null(ops_bmm(b223, b334));
    assert_error(OPS_ERR_SHAPE, "bmm: batch1 and batch2 must have same number of batches, got 2 and 3");
    ck_assert_ptr_null(ops_mv(b23, b11));
    assert_error(OPS_ERR_SHAPE, "mv: vector + matrix @ vector expected, got 1, 2, 2");
    ck_assert_ptr_null(ops_matmul(b223, b334));
    snprintf(want, sizeof want, "matmul: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_ptr_null(ops_matmul(b3, a));
    assert_error(OPS_ERR_DTYPE, "matmul: dot : expected both vectors to have same dtype, but found bool and int64");
    ck_assert_ptr_null(ops_linear(b23, b223, NULL));
    assert_error(OPS_ERR_SHAPE, "linear: weight must be 1-D or 2-D, got 3-D");
    ck_assert_ptr_null(ops_linear(b23, b23, NULL));
    snprintf(want, sizeof want, "linear: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);

    /* conv: the stride/padding/dilation lists and one dtype (their `check:`), then the
     * dtype, then the geometry (a weight with more channels than the input) */
    const ops_int_list i1 = {(const int64_t[]){1}, 1}, i0 = {(const int64_t[]){0}, 1};
    const ops_int_list i111 = {(const int64_t[]){1, 1, 1}, 3};
    ops_tensor *x4 = ops_zeros(OPS_INTS(1, 2, 5, 5), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ops_tensor *w4 = ops_zeros(OPS_INTS(3, 5, 2, 2), OPS_BOOL, OPS_DEVICE_UNSPECIFIED);
    ck_assert_ptr_nonnull(x4);
    ck_assert_ptr_nonnull(w4);
    ck_assert_ptr_null(ops_conv2d(x4, w4, NULL, i111, i0, i1, 1));
    assert_error(OPS_ERR_VALUE, "conv2d: expected stride to be a single integer value or a list of 2 values to match "
                                "the convolution dimensions, but got stride=[1, 1, 1]");
    ck_assert_ptr_null(ops_conv2d(x4, w4, a, i1, i0, i1, 1));
    assert_error(OPS_ERR_DTYPE, "conv2d: Input type (bool) and bias type (int64) should be the same");
    ck_assert_ptr_null(ops_conv2d(x4, w4, NULL, i1, i0, i1, 1));
    snprintf(want, sizeof want, "conv2d: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_ptr_null(ops_conv2d_padding(x4, w4, NULL, (ops_int_list){(const int64_t[]){2}, 1}, "same", i1, 1));
    assert_error(OPS_ERR_VALUE, "conv2d: padding='same' is not supported for strided convolutions");
    ck_assert_ptr_null(ops_conv2d_padding(x4, w4, NULL, i1, "same", i1, 1));
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_ptr_null(ops_conv_transpose2d_input(x4, w4, NULL, i1, i0, i111, 1, i1));
    assert_error(OPS_ERR_VALUE, "conv_transpose2d: expected output_padding to be a single integer value or a list "
                                "of 2 values to match the convolution dimensions, but got output_padding=[1, 1, 1]");
    ck_assert_ptr_null(ops_conv_transpose2d_input(x4, w4, NULL, i1, i0, i0, 1, i1));
    assert_error(OPS_ERR_DTYPE, "conv_transpose2d: dtype bool is not supported (supported: int64, float16, "
                                "bfloat16, float32, float64)");

    ops_tensor_release(w4);
    ops_tensor_release(x4);
    ops_tensor_release(b334);
    ops_tensor_release(b223);
    ops_tensor_release(b34);
    ops_tensor_release(b23);
    ops_tensor_release(b11);
    ops_tensor_release(b3);
    ops_tensor_release(out);
    ops_tensor_release(b4);
    ops_tensor_release(a2);
    ops_tensor_release(a);
}
END_TEST

/* The out= and in-place forms of the mm family, searchsorted/bucketize, bincount/histc
 * and randperm declare their functional form's set, and their kernels refuse through
 * it (OPS_DTYPE_MASK_<ENTRY>) with the message they gave through hand-written masks,
 * nothing written.  bincount and histc have the glue check self (`of: self`): their
 * kernels checked its dtype first, so the message and its order are the kernel's
 * (PyTorch 1.13's histc checks bins first). */
START_TEST(test_declared_dtypes_of_linalg_search_forms)
{
    static const char numeric[] =
        "(supported: uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)";
    char want[200];
    const float xs[] = {0.25f, 0.5f, 1.0f, 2.0f};
    const int64_t is[] = {1, 0, 1, 1};
    ops_tensor *x = ops_tensor_from_data(xs, (ops_int_list){(int64_t[]){2, 2}, 2}, OPS_FLOAT32);
    ck_assert_ptr_nonnull(x);
    ops_tensor *bm = ops_to_dtype(x, OPS_BOOL, false, false, OPS_PRESERVE_FORMAT);
    ops_tensor *bself = ops_to_dtype(x, OPS_BOOL, false, false, OPS_PRESERVE_FORMAT);
    ck_assert_ptr_nonnull(bm);
    ck_assert_ptr_nonnull(bself);
    ops_tensor *out = f32(xs, 4), *n = i64(is, 4);

    /* mm.out: the shapes and the same-dtype check first, then the declared set */
    ck_assert_int_eq(ops_mm_out(bm, bm, out), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "mm: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    assert_f32(out, xs, 4); /* untouched */
    ck_assert_int_eq(ops_addmm_(bself, bm, bm, OPS_SCALAR_INT(1), OPS_SCALAR_INT(1)), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "addmm_: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert(((const bool *)ops_tensor_data_ptr(bself))[0]); /* untouched */

    /* searchsorted.Tensor_out: the promoted dtype of boundaries and self, after the shapes */
    ops_tensor *b1 = ops_to_dtype(n, OPS_BOOL, false, false, OPS_PRESERVE_FORMAT);
    ck_assert_ptr_nonnull(b1);
    ck_assert_int_eq(ops_searchsorted_tensor_out(b1, b1, false, false, NULL, NULL, n), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "searchsorted: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_int_eq(ops_bucketize_tensor_out(b1, b1, false, false, n), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "bucketize: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);
    ck_assert_int_eq(((const int64_t *)ops_tensor_data_ptr(n))[0], 1); /* untouched */

    /* bincount.out: self's dtype before minlength; histc.out: before bins */
    ops_tensor *v = f32(xs, 4);
    ck_assert_int_eq(ops_bincount_out(v, NULL, -1, n), OPS_ERR_DTYPE);
    assert_error(OPS_ERR_DTYPE, "bincount: dtype float32 is not supported (supported: uint8, int8, int16, int32, "
                                "int64)");
    ck_assert_int_eq(ops_histc_out(n, 0, OPS_SCALAR_INT(0), OPS_SCALAR_INT(0), out), OPS_ERR_DTYPE);
    assert_error(OPS_ERR_DTYPE, "histc: dtype int64 is not supported (supported: float16, bfloat16, float32, "
                                "float64)");
    assert_f32(out, xs, 4);

    /* randperm.out: out's dtype is the result's */
    ck_assert_int_eq(ops_randperm_out(3, b1), OPS_ERR_DTYPE);
    snprintf(want, sizeof want, "randperm: dtype bool is not supported %s", numeric);
    assert_error(OPS_ERR_DTYPE, want);

    /* nuclear_norm: float32 and float64 */
    ops_tensor *m = ops_view(n, (ops_int_list){(int64_t[]){2, 2}, 2});
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_null(ops_nuclear_norm(m, false));
    assert_error(OPS_ERR_DTYPE, "nuclear_norm: dtype int64 is not supported (supported: float32, float64)");

    ops_tensor_release(m);
    ops_tensor_release(v);
    ops_tensor_release(b1);
    ops_tensor_release(n);
    ops_tensor_release(out);
    ops_tensor_release(bself);
    ops_tensor_release(bm);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_bad_int_list)
{
    const float xs[] = {1, 2, 3, 4};
    ops_tensor *x = f32(xs, 4);
    ck_assert_ptr_null(ops_view(x, (ops_int_list){NULL, 2}));
    assert_error(OPS_ERR_VALUE, "view: argument 'size' is not a valid int list (negative length or NULL data)");
    ck_assert_ptr_null(ops_view(x, (ops_int_list){(const int64_t[]){4}, -1}));
    assert_error(OPS_ERR_VALUE, "view: argument 'size' is not a valid int list (negative length or NULL data)");
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_factory_device)
{
    /* No tensors: the device argument picks the kernel; unspecified is cpu. */
    ops_tensor *z = ops_zeros(OPS_INTS(3), OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED);
    const float zero3[] = {0, 0, 0};
    assert_f32(z, zero3, 3);
    ck_assert(ops_device_equal(ops_tensor_device(z), OPS_DEVICE_CPU));
    ops_tensor_release(z);

    ops_device bogus = {(ops_device_type)7, 0};
    ck_assert_ptr_null(ops_zeros(OPS_INTS(3), OPS_DTYPE_NONE, bogus));
    assert_error(OPS_ERR_DEVICE, "zeros: invalid device type 7");
#ifndef OPS_WITH_CUDA
    /* A CPU-only build has no CUDA column in the dispatch table. */
    ck_assert_ptr_null(ops_zeros(OPS_INTS(3), OPS_DTYPE_NONE, OPS_DEVICE_CUDA(0)));
    assert_error(OPS_ERR_NOT_IMPLEMENTED, "zeros: no kernel for device cuda:0");
#endif
}
END_TEST

START_TEST(test_structured_forms_agree)
{
    const float xs[] = {1, -2, 3.5f};
    const float want[] = {-1, 2, -3.5f};
    ops_tensor *x = f32(xs, 3);

    ops_tensor *r = ops_neg(x);
    assert_f32(r, want, 3);
    ck_assert_ptr_ne(r, x);
    assert_f32(x, xs, 3); /* functional leaves its input alone */

    ops_tensor *out = ops_tensor_new("test", 1, (const int64_t[]){3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_neg_out(x, out), OPS_OK);
    assert_f32(out, want, 3);

    uint64_t v = ops_tensor_version(x);
    ck_assert_int_eq(ops_neg_(x), OPS_OK);
    assert_f32(x, want, 3);
    ck_assert_uint_gt(ops_tensor_version(x), v);

    ops_tensor_release(r);
    ops_tensor_release(out);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_scalar_overloads_wrap_numbers)
{
    /* add.Scalar: other is a wrapped number, so an int scalar keeps int64 and a
     * float scalar lifts the int tensor to the default float dtype (PyTorch). */
    const int64_t xs[] = {1, 2, 3};
    ops_tensor *x = i64(xs, 3);

    ops_tensor *r = ops_add_scalar(x, OPS_SCALAR_INT(2), OPS_SCALAR_INT(3));
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(ops_tensor_dtype(r), OPS_INT64);
    const int64_t *ri = ops_tensor_data_ptr(r);
    ck_assert_int_eq(ri[0], 7); /* 1 + 3 * 2 */
    ck_assert_int_eq(ri[1], 8);
    ck_assert_int_eq(ri[2], 9);
    ops_tensor_release(r);

    r = ops_add_scalar(x, OPS_SCALAR_FLOAT(0.5), OPS_SCALAR_INT(1));
    const float want[] = {1.5f, 2.5f, 3.5f};
    assert_f32(r, want, 3);
    ops_tensor_release(r);

    ck_assert_int_eq(ops_add_scalar_(x, OPS_SCALAR_INT(-1), OPS_SCALAR_INT(1)), OPS_OK);
    ck_assert_int_eq(((const int64_t *)ops_tensor_data_ptr(x))[2], 2);
    ops_tensor_release(x);
}
END_TEST

/* ---- the registry ------------------------------------------------------ */

/* An entry's `check:` (docs/codegen.md "Argument checks") runs in the glue for every
 * form of the op, named by that form, after the meta and the declared dtypes and before
 * the kernel: nothing is written when it refuses. */
START_TEST(test_argument_check_every_form)
{
    const float xs[] = {-1, 2};
    ops_tensor *x = f32(xs, 2);
    const float os[] = {7, 8};
    ops_tensor *out = f32(os, 2);
    const ops_scalar zero = OPS_SCALAR_FLOAT(0.0);

    ck_assert_ptr_null(ops_celu(x, zero));
    assert_error(OPS_ERR_VALUE, "celu: ZeroDivisionError: alpha must not be 0");
    ck_assert_int_eq(ops_celu_(x, zero), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "celu_: ZeroDivisionError: alpha must not be 0");
    assert_f32(x, xs, 2);
    ck_assert_int_eq(ops_celu_out(x, zero, out), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "celu: ZeroDivisionError: alpha must not be 0");
    assert_f32(out, os, 2); /* not written */

    /* the declared dtypes come first: celu takes floating dtypes */
    const int64_t ns[] = {1, 2};
    ops_tensor *n = i64(ns, 2);
    ck_assert_ptr_null(ops_celu(n, zero));
    assert_error_prefix(OPS_ERR_DTYPE, "celu: dtype int64 is not supported");
    /* and the meta's errors before both: add's shapes, then its alpha */
    const int64_t ms[] = {1, 2, 3};
    ops_tensor *m = i64(ms, 3);
    ck_assert_ptr_null(ops_add(n, m, OPS_SCALAR_FLOAT(0.5)));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_SHAPE);
    ck_assert_ptr_null(strstr(ops_last_error(), "alpha"));
    ops_clear_error();
    ck_assert_ptr_null(ops_add(n, n, OPS_SCALAR_FLOAT(0.5)));
    assert_error(OPS_ERR_VALUE, "add: For integral input tensors, argument alpha must not be a floating point number.");

    /* the in-place form of a check that reads the iterator's dtype: hardtanh's uint8 limits */
    ops_tensor *u = ops_to_dtype(n, OPS_UINT8, false, false, OPS_PRESERVE_FORMAT);
    ck_assert_ptr_nonnull(u);
    ck_assert_int_eq(ops_hardtanh_(u, OPS_SCALAR_INT(-1), OPS_SCALAR_INT(1)), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "hardtanh_: cannot do hardtanh on an unsigned type with negative limits");
    ck_assert_int_eq(((const uint8_t *)ops_tensor_data_ptr(u))[1], 2);

    ops_tensor_release(u);
    ops_tensor_release(m);
    ops_tensor_release(n);
    ops_tensor_release(out);
    ops_tensor_release(x);
}
END_TEST

START_TEST(test_registry_lookup)
{
    int n = ops_registry_count();
    ck_assert_int_gt(n, 0);
    ck_assert_ptr_null(ops_registry_at(-1));
    ck_assert_ptr_null(ops_registry_at(n));
    for (int i = 0; i < n; i++) {
        const ops_op_info *op = ops_registry_at(i);
        ck_assert_ptr_nonnull(op);
        ck_assert_ptr_eq(ops_registry_find(op->name, op->overload), op);
        ck_assert(strncmp(op->c_name, "ops_", 4) == 0);
        ck_assert(strncmp(op->schema, op->name, strlen(op->name)) == 0);
        ck_assert_ptr_nonnull(op->call);
        /* Each op is the member of its own group for its kind. */
        const ops_op_info *self = op->kind == OPS_KIND_FUNCTIONAL ? op->functional
                                  : op->kind == OPS_KIND_INPLACE  ? op->inplace
                                                                   : op->out;
        ck_assert_ptr_eq(self, op);
        for (int a = 0; a < op->num_args; a++)
            ck_assert(!op->args[a].is_out || op->args[a].kwarg_only);
    }
    ck_assert_ptr_eq(ops_registry_find("add.Scalar", NULL), ops_registry_find("add", "Scalar"));
    ck_assert_ptr_eq(ops_registry_find("neg", NULL), ops_registry_find("neg", ""));
    ck_assert_ptr_nonnull(ops_registry_find("neg", NULL));
    ck_assert_ptr_null(ops_registry_find("add", NULL)); /* every add has an overload */
    ck_assert_ptr_null(ops_registry_find("ad", "Tensor"));
    ck_assert_ptr_null(ops_registry_find("add", "Tenso"));
    ck_assert_ptr_null(ops_registry_find("no_such_op", NULL));
    ck_assert_ptr_null(ops_registry_find(NULL, NULL));
}
END_TEST

START_TEST(test_registry_describes_add)
{
    const ops_op_info *op = ops_registry_find("add", "Tensor");
    ck_assert_ptr_nonnull(op);
    ck_assert_str_eq(op->name, "add");
    ck_assert_str_eq(op->overload, "Tensor");
    ck_assert_str_eq(op->c_name, "ops_add");
    ck_assert_str_eq(op->schema, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    ck_assert_int_eq(op->kind, OPS_KIND_FUNCTIONAL);
    ck_assert_int_eq(op->num_args, 3);
    ck_assert_str_eq(op->args[0].name, "self");
    ck_assert_str_eq(op->args[0].type, "Tensor");
    ck_assert_ptr_null(op->args[0].default_value);
    ck_assert(!op->args[0].kwarg_only);
    ck_assert_str_eq(op->args[2].name, "alpha");
    ck_assert_str_eq(op->args[2].type, "Scalar");
    ck_assert_str_eq(op->args[2].default_value, "1");
    ck_assert(op->args[2].kwarg_only);
    ck_assert(!op->args[2].is_out);
    ck_assert_int_eq(op->num_returns, 1);
    ck_assert_str_eq(op->returns[0].type, "Tensor");
    ck_assert_ptr_eq(op->inplace, ops_registry_find("add_", "Tensor"));
    ck_assert_ptr_eq(op->out, ops_registry_find("add", "out"));

    const ops_op_info *out = op->out;
    ck_assert_int_eq(out->kind, OPS_KIND_OUT);
    ck_assert_int_eq(out->num_args, 4);
    ck_assert(out->args[3].is_out);
    ck_assert_str_eq(out->args[3].type, "Tensor(a!)");
    ck_assert_ptr_eq(out->functional, op);
    ck_assert_ptr_nonnull(out->conformance); /* the structured entry carries it */
    ck_assert_int_eq(out->conformance[0], '{');

    const ops_op_info *s = ops_registry_find("add_", "Scalar");
    ck_assert_int_eq(s->kind, OPS_KIND_INPLACE);
    ck_assert_ptr_eq(s->functional, ops_registry_find("add", "Scalar"));
    ck_assert_ptr_eq(s->out, ops_registry_find("add", "Scalar_out"));
}
END_TEST

START_TEST(test_boxed_calls)
{
    const float xs[] = {1, -2, 3};
    const float neg[] = {-1, 2, -3};
    ops_tensor *x = f32(xs, 3);
    ops_ivalue ret = ops_ivalue_int(42);

    /* Tag checked against the schema type; rets are None after a failure. */
    const ops_op_info *op = ops_registry_find("neg", NULL);
    ops_ivalue bad = ops_ivalue_int(3);
    ck_assert_int_eq(op->call(&bad, &ret), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "neg: argument 'self' must be Tensor, not int");
    ck_assert_int_eq(ret.tag, OPS_IVALUE_NONE);
    ck_assert_int_eq(op->call(NULL, &ret), OPS_ERR_VALUE);
    ops_clear_error();

    ops_ivalue arg = ops_ivalue_tensor(x);
    ck_assert_int_eq(op->call(&arg, &ret), OPS_OK);
    ck_assert_int_eq(ret.tag, OPS_IVALUE_TENSOR);
    assert_f32(ret.v.tensor, neg, 3);
    ops_ivalue_release(&ret);
    ck_assert_int_eq(ret.tag, OPS_IVALUE_NONE);

    /* Scalar accepts ints and doubles; in-place returns a new reference to self. */
    op = ops_registry_find("add_", "Scalar");
    ops_ivalue args[3] = {ops_ivalue_tensor(x), ops_ivalue_double(0.5), ops_ivalue_int(2)};
    ck_assert_int_eq(op->call(args, &ret), OPS_OK);
    ck_assert_ptr_eq(ret.v.tensor, x);
    ops_ivalue_release(&ret); /* drops the returned reference, not ours */
    const float plus1[] = {2, -1, 4};
    assert_f32(x, plus1, 3);

    args[1] = ops_ivalue_str("one");
    ck_assert_int_eq(op->call(args, &ret), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "add_: argument 'other' must be Scalar, not str");

    /* Optional arguments take None. */
    op = ops_registry_find("zeros", NULL);
    ops_ivalue zargs[3] = {ops_ivalue_int_list(OPS_INTS(2)), ops_ivalue_none(), ops_ivalue_none()};
    ck_assert_int_eq(op->call(zargs, &ret), OPS_OK);
    const float zero2[] = {0, 0};
    assert_f32(ret.v.tensor, zero2, 2);
    ops_ivalue_release(&ret);
    zargs[0] = ops_ivalue_none();
    ck_assert_int_eq(op->call(zargs, &ret), OPS_ERR_VALUE);
    assert_error(OPS_ERR_VALUE, "zeros: argument 'size' must be int[], not None");

    ops_tensor_release(x);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("generated_api");
    TCase *tc = tcase_create("glue");
    tcase_add_test(tc, test_null_tensor_arguments);
    tcase_add_test(tc, test_bad_int_list);
    tcase_add_test(tc, test_declared_dtypes_of_plain_entries);
    tcase_add_test(tc, test_declared_dtypes_of_linalg_search_forms);
    tcase_add_test(tc, test_declared_dtypes_after_argument_checks);
    tcase_add_test(tc, test_factory_device);
    tcase_add_test(tc, test_structured_forms_agree);
    tcase_add_test(tc, test_scalar_overloads_wrap_numbers);
    tcase_add_test(tc, test_argument_check_every_form);
    suite_add_tcase(s, tc);
    tc = tcase_create("registry");
    tcase_add_test(tc, test_registry_lookup);
    tcase_add_test(tc, test_registry_describes_add);
    tcase_add_test(tc, test_boxed_calls);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

/* Every view kernel: sizes, strides and storage offset against hand-derived
 * expectations (worked out from PyTorch's rules for the same calls), aliasing
 * (a write through the view shows in the base), and every error case with its
 * message.  The kernels are called directly (X_impl); the generated ops_X wrap
 * them. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

ops_tensor *view_impl(const ops_tensor *self, ops_int_list size);
ops_tensor *reshape_impl(const ops_tensor *self, ops_int_list shape);
ops_tensor *permute_impl(const ops_tensor *self, ops_int_list dims);
ops_tensor *transpose_impl(const ops_tensor *self, int64_t dim0, int64_t dim1);
ops_tensor *t_impl(const ops_tensor *self);
ops_tensor *expand_impl(const ops_tensor *self, ops_int_list size, bool implicit);
ops_tensor *broadcast_to_impl(const ops_tensor *self, ops_int_list size);
ops_tensor *slice_impl(const ops_tensor *self, int64_t dim, const int64_t *start, const int64_t *end, int64_t step);
ops_tensor *select_impl(const ops_tensor *self, int64_t dim, int64_t index);
ops_tensor *narrow_impl(const ops_tensor *self, int64_t dim, int64_t start, int64_t length);
ops_tensor *squeeze_impl(const ops_tensor *self);
ops_tensor *squeeze_dim_impl(const ops_tensor *self, int64_t dim);
ops_tensor *squeeze_dims_impl(const ops_tensor *self, ops_int_list dim);
ops_tensor *unsqueeze_impl(const ops_tensor *self, int64_t dim);
ops_tensor *flatten_impl(const ops_tensor *self, int64_t start_dim, int64_t end_dim);
ops_tensor *unflatten_impl(const ops_tensor *self, int64_t dim, ops_int_list sizes);
ops_tensor *diagonal_impl(const ops_tensor *self, int64_t offset, int64_t dim1, int64_t dim2);
ops_tensor *unfold_impl(const ops_tensor *self, int64_t dimension, int64_t size, int64_t step);
ops_tensor *as_strided_impl(const ops_tensor *self, ops_int_list size, ops_int_list stride,
                            const int64_t *storage_offset);

#define I(...) OPS_INTS(__VA_ARGS__)

/* arange(numel) as float32 in the given shape (contiguous). */
static ops_tensor *
arange(ops_int_list shape)
{
    ops_tensor *t = ops_tensor_new("test", (int)shape.len, shape.data, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    float *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < ops_tensor_numel(t); i++)
        p[i] = (float)i;
    return t;
}

static float *
elem(const ops_tensor *t, ops_int_list idx)
{
    ck_assert_int_eq(idx.len, t->ndim);
    int64_t off = 0;
    for (int64_t i = 0; i < idx.len; i++)
        off += idx.data[i] * t->strides[i];
    return (float *)ops_tensor_data_ptr(t) + off;
}

/* Flat element i of the base's storage. */
static float
flat(const ops_tensor *base, int64_t i)
{
    return ((const float *)base->storage->data)[i];
}

#define expect_geom(v, base, sizes, strides, off) expect_geom_(__LINE__, v, base, sizes, strides, off)

static void
expect_geom_(int line, const ops_tensor *v, const ops_tensor *base, ops_int_list sizes, ops_int_list strides,
             int64_t offset)
{
    ck_assert_msg(v != NULL, "line %d: view failed: %s", line, ops_last_error());
    ck_assert_msg(v->ndim == sizes.len, "line %d: ndim %d, expected %lld", line, v->ndim, (long long)sizes.len);
    for (int64_t i = 0; i < sizes.len; i++) {
        ck_assert_msg(v->sizes[i] == sizes.data[i], "line %d: size[%lld] = %lld, expected %lld", line, (long long)i,
                      (long long)v->sizes[i], (long long)sizes.data[i]);
        ck_assert_msg(v->strides[i] == strides.data[i], "line %d: stride[%lld] = %lld, expected %lld", line,
                      (long long)i, (long long)v->strides[i], (long long)strides.data[i]);
    }
    ck_assert_msg(v->offset == offset, "line %d: offset %lld, expected %lld", line, (long long)v->offset,
                  (long long)offset);
    ck_assert_msg(ops_tensor_shares_storage(v, base), "line %d: not a view of the base", line);
    ck_assert_int_eq(v->dtype, base->dtype);
}

#define expect_err(r, st, msg) expect_err_(__LINE__, r, st, msg)

static void
expect_err_(int line, ops_tensor *r, ops_status st, const char *msg)
{
    if (r != NULL) {
        ops_tensor_release(r);
        ck_abort_msg("line %d: expected failure '%s'", line, msg);
    }
    ck_assert_msg(ops_last_status() == st, "line %d: status %s, expected %s (%s)", line,
                  ops_status_str(ops_last_status()), ops_status_str(st), ops_last_error());
    ck_assert_msg(strcmp(ops_last_error(), msg) == 0, "line %d: message\n  '%s'\nexpected\n  '%s'", line,
                  ops_last_error(), msg);
}

/* ---- view --------------------------------------------------------------------- */

START_TEST(test_view)
{
    ops_tensor *a = arange(I(2, 3, 4));
    ops_tensor *v = view_impl(a, I(4, 6));
    expect_geom(v, a, I(4, 6), I(6, 1), 0);
    *elem(v, I(1, 2)) = -5.0f;
    ck_assert_float_eq(flat(a, 8), -5.0f);
    ops_tensor_release(v);

    v = view_impl(a, I(-1, 8));
    expect_geom(v, a, I(3, 8), I(8, 1), 0);
    ops_tensor_release(v);
    v = view_impl(a, I(2, 1, 12));
    expect_geom(v, a, I(2, 1, 12), I(12, 12, 1), 0);
    ops_tensor_release(v);
    v = view_impl(a, I(24));
    expect_geom(v, a, I(24), I(1), 0);
    ops_tensor_release(v);

    /* Views of a non-contiguous tensor: split the chunks it has, never merge across. */
    ops_tensor *at = transpose_impl(a, 0, 1); /* [3, 2, 4], strides [4, 12, 1] */
    v = view_impl(at, I(3, 2, 2, 2));
    expect_geom(v, a, I(3, 2, 2, 2), I(4, 12, 2, 1), 0);
    ck_assert_float_eq(*elem(v, I(2, 1, 1, 0)), 12 + 8 + 2); /* at[2][1][2] = a[1][2][2] */
    ops_tensor_release(v);
    expect_err(view_impl(at, I(3, 8)), OPS_ERR_SHAPE,
               "view: view size is not compatible with input tensor's size and stride (at least one dimension spans "
               "across two contiguous subspaces). Use .reshape(...) instead.");
    expect_err(view_impl(at, I(6, 4)), OPS_ERR_SHAPE,
               "view: view size is not compatible with input tensor's size and stride (at least one dimension spans "
               "across two contiguous subspaces). Use .reshape(...) instead.");

    expect_err(view_impl(a, I(5, 5)), OPS_ERR_SHAPE, "view: shape '[5, 5]' is invalid for input of size 24");
    expect_err(view_impl(a, I(-1, 5)), OPS_ERR_SHAPE, "view: shape '[-1, 5]' is invalid for input of size 24");
    expect_err(view_impl(a, I(-1, -1)), OPS_ERR_VALUE, "view: only one dimension can be inferred");
    expect_err(view_impl(a, I(-2, 12)), OPS_ERR_VALUE, "view: invalid shape dimension -2");

    /* Scalars and empties. */
    ops_tensor *s = arange(I());
    v = view_impl(s, I(1, 1));
    expect_geom(v, s, I(1, 1), I(1, 1), 0);
    ops_tensor *back = view_impl(v, I());
    expect_geom(back, s, I(), I(), 0);
    ops_tensor_release(back);
    ops_tensor_release(v);
    ops_tensor *e = arange(I(0, 3));
    v = view_impl(e, I(3, 0, 2));
    expect_geom(v, e, I(3, 0, 2), I(2, 2, 1), 0);
    ops_tensor_release(v);
    expect_err(view_impl(e, I(-1, 0)), OPS_ERR_SHAPE,
               "view: cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 "
               "can be any value and is ambiguous");
    v = view_impl(e, I(-1, 3));
    expect_geom(v, e, I(0, 3), I(3, 1), 0);
    ops_tensor_release(v);

    ops_tensor_release(at);
    ops_tensor_release(s);
    ops_tensor_release(e);
    ops_tensor_release(a);
}
END_TEST

START_TEST(test_reshape)
{
    ops_tensor *a = arange(I(2, 3, 4));
    ops_tensor *r = reshape_impl(a, I(6, -1));
    expect_geom(r, a, I(6, 4), I(4, 1), 0); /* a view when one exists */
    ops_tensor_release(r);

    /* Transposed: no view exists, so a contiguous copy. */
    ops_tensor *at = transpose_impl(a, 0, 1); /* at[i][j][k] = a[j][i][k] = 12j + 4i + k */
    r = reshape_impl(at, I(6, 4));
    ck_assert_ptr_nonnull(r);
    ck_assert(!ops_tensor_shares_storage(r, a));
    ck_assert(ops_tensor_is_contiguous(r));
    ck_assert_int_eq(r->sizes[0], 6);
    ck_assert_int_eq(r->sizes[1], 4);
    static const float rows[6][4] = {{0, 1, 2, 3},     {12, 13, 14, 15}, {4, 5, 6, 7},
                                     {16, 17, 18, 19}, {8, 9, 10, 11},   {20, 21, 22, 23}};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++)
            ck_assert_float_eq(*elem(r, I(i, j)), rows[i][j]);
    ops_tensor_release(r);

    expect_err(reshape_impl(a, I(7, -1)), OPS_ERR_SHAPE, "reshape: shape '[7, -1]' is invalid for input of size 24");
    ops_tensor_release(at);
    ops_tensor_release(a);
}
END_TEST

/* ---- permute, transpose, t ------------------------------------------------------ */

START_TEST(test_permute_transpose_t)
{
    ops_tensor *a = arange(I(2, 3, 4));
    ops_tensor *p = permute_impl(a, I(2, 0, 1));
    expect_geom(p, a, I(4, 2, 3), I(1, 12, 4), 0);
    ck_assert_float_eq(*elem(p, I(3, 1, 2)), 23.0f); /* a[1][2][3] */
    *elem(p, I(1, 0, 2)) = -1.0f;                   /* a[0][2][1] = flat 9 */
    ck_assert_float_eq(flat(a, 9), -1.0f);
    ops_tensor_release(p);
    p = permute_impl(a, I(-1, 0, -2));
    expect_geom(p, a, I(4, 2, 3), I(1, 12, 4), 0);
    ops_tensor_release(p);

    expect_err(permute_impl(a, I(0, 1)), OPS_ERR_SHAPE,
               "permute: number of dimensions in the tensor input does not match the length of the desired ordering "
               "of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2");
    expect_err(permute_impl(a, I(0, 0, 1)), OPS_ERR_VALUE,
               "permute: duplicate dims are not allowed (dim 0 appears twice in the ordering)");
    expect_err(permute_impl(a, I(0, 1, 3)), OPS_ERR_INDEX,
               "permute: Dimension out of range (expected to be in range of [-3, 2], but got 3) for argument 'dims'");

    ops_tensor *t = transpose_impl(a, 0, 2);
    expect_geom(t, a, I(4, 3, 2), I(1, 4, 12), 0);
    ck_assert_float_eq(*elem(t, I(3, 2, 1)), 12 + 8 + 3);
    ops_tensor_release(t);
    t = transpose_impl(a, -1, -2);
    expect_geom(t, a, I(2, 4, 3), I(12, 1, 4), 0);
    ops_tensor_release(t);
    t = transpose_impl(a, 1, 1);
    expect_geom(t, a, I(2, 3, 4), I(12, 4, 1), 0);
    ops_tensor_release(t);
    expect_err(transpose_impl(a, 0, 3), OPS_ERR_INDEX,
               "transpose: Dimension out of range (expected to be in range of [-3, 2], but got 3) for argument 'dim1'");

    ops_tensor *m = arange(I(3, 4));
    t = t_impl(m);
    expect_geom(t, m, I(4, 3), I(1, 4), 0);
    ck_assert_float_eq(*elem(t, I(3, 1)), 7.0f);
    ops_tensor_release(t);
    ops_tensor *v1 = arange(I(5));
    t = t_impl(v1);
    expect_geom(t, v1, I(5), I(1), 0);
    ops_tensor_release(t);
    ops_tensor *s = arange(I());
    t = t_impl(s);
    expect_geom(t, s, I(), I(), 0);
    ops_tensor_release(t);
    expect_err(t_impl(a), OPS_ERR_SHAPE, "t: t() expects a tensor with <= 2 dimensions, but self is 3D");

    ops_tensor_release(s);
    ops_tensor_release(v1);
    ops_tensor_release(m);
    ops_tensor_release(a);
}
END_TEST

/* ---- expand, broadcast_to --------------------------------------------------------- */

START_TEST(test_expand)
{
    ops_tensor *x = arange(I(3, 1));
    ops_tensor *e = expand_impl(x, I(2, 3, 4), false);
    expect_geom(e, x, I(2, 3, 4), I(0, 1, 0), 0);
    ck_assert_float_eq(*elem(e, I(1, 2, 3)), 2.0f);
    *elem(e, I(1, 1, 3)) = 9.0f;
    ck_assert_float_eq(flat(x, 1), 9.0f);
    ck_assert_float_eq(*elem(e, I(0, 1, 0)), 9.0f); /* every alias of it sees the write */
    ops_tensor_release(e);
    e = expand_impl(x, I(-1, 5), true);
    expect_geom(e, x, I(3, 5), I(1, 0), 0);
    ops_tensor_release(e);
    e = expand_impl(x, I(1, 3, 1), false);
    expect_geom(e, x, I(1, 3, 1), I(3, 1, 1), 0);
    ops_tensor_release(e);
    e = expand_impl(x, I(3, 1), false);
    expect_geom(e, x, I(3, 1), I(1, 1), 0);
    ops_tensor_release(e);
    e = broadcast_to_impl(x, I(2, 3, 2));
    expect_geom(e, x, I(2, 3, 2), I(0, 1, 0), 0);
    ops_tensor_release(e);

    ops_tensor *s = arange(I());
    e = expand_impl(s, I(2, 2), false);
    expect_geom(e, s, I(2, 2), I(0, 0), 0);
    ops_tensor_release(e);
    e = expand_impl(x, I(3, 0), false); /* a size-1 dim may expand to 0 */
    expect_geom(e, x, I(3, 0), I(1, 0), 0);
    ops_tensor_release(e);

    expect_err(expand_impl(x, I(4, 1), false), OPS_ERR_SHAPE,
               "expand: The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
               "dimension 0.  Target sizes: [4, 1].  Tensor sizes: [3, 1]");
    expect_err(broadcast_to_impl(x, I(2, 2, 5)), OPS_ERR_SHAPE,
               "broadcast_to: The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
               "dimension 1.  Target sizes: [2, 2, 5].  Tensor sizes: [3, 1]");
    expect_err(expand_impl(x, I(5), false), OPS_ERR_SHAPE,
               "expand: the number of sizes provided (1) must be greater or equal to the number of dimensions in the "
               "tensor (2)");
    expect_err(expand_impl(x, I(-1, 3, 1), false), OPS_ERR_VALUE,
               "expand: The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0");
    expect_err(expand_impl(x, I(3, -2), false), OPS_ERR_VALUE,
               "expand: The expanded size of the tensor (-2) must be non-negative (or -1 to keep a size)");
    ops_tensor_release(s);
    ops_tensor_release(x);
}
END_TEST

/* ---- slice, select, narrow ---------------------------------------------------------- */

START_TEST(test_slice)
{
    ops_tensor *a = arange(I(2, 3, 4));
    int64_t one = 1, neg2 = -2, neg1 = -1, ten = 10, hundred = 100, mhundred = -100, three = 3;
    ops_tensor *s = slice_impl(a, 2, &one, NULL, 2); /* a[:, :, 1::2] */
    expect_geom(s, a, I(2, 3, 2), I(12, 4, 2), 1);
    ck_assert_float_eq(*elem(s, I(1, 2, 1)), 23.0f);
    *elem(s, I(0, 1, 0)) = -7.0f; /* a[0][1][1] = flat 5 */
    ck_assert_float_eq(flat(a, 5), -7.0f);
    ops_tensor_release(s);
    s = slice_impl(a, 1, &neg2, NULL, 1); /* a[:, -2:] */
    expect_geom(s, a, I(2, 2, 4), I(12, 4, 1), 4);
    ops_tensor_release(s);
    s = slice_impl(a, -1, NULL, &neg1, 1); /* a[..., :-1] */
    expect_geom(s, a, I(2, 3, 3), I(12, 4, 1), 0);
    ops_tensor_release(s);
    s = slice_impl(a, 2, &ten, NULL, 1); /* a[..., 10:]: empty, offset clamped to the end */
    expect_geom(s, a, I(2, 3, 0), I(12, 4, 1), 4);
    ops_tensor_release(s);
    s = slice_impl(a, 2, &mhundred, &hundred, 1); /* a[..., -100:100] */
    expect_geom(s, a, I(2, 3, 4), I(12, 4, 1), 0);
    ops_tensor_release(s);
    s = slice_impl(a, 2, &three, &one, 1); /* a[..., 3:1] */
    expect_geom(s, a, I(2, 3, 0), I(12, 4, 1), 3);
    ops_tensor_release(s);
    s = slice_impl(a, 2, NULL, NULL, 3); /* a[..., ::3] = indices 0, 3 */
    expect_geom(s, a, I(2, 3, 2), I(12, 4, 3), 0);
    ck_assert_float_eq(*elem(s, I(0, 0, 1)), 3.0f);
    ops_tensor_release(s);
    s = slice_impl(a, 0, NULL, NULL, 5); /* a[::5] */
    expect_geom(s, a, I(1, 3, 4), I(60, 4, 1), 0);
    ops_tensor_release(s);

    expect_err(slice_impl(a, 1, NULL, NULL, 0), OPS_ERR_VALUE, "slice: slice step must be positive, got 0");
    expect_err(slice_impl(a, 1, NULL, NULL, -1), OPS_ERR_VALUE, "slice: slice step must be positive, got -1");
    expect_err(slice_impl(a, 3, NULL, NULL, 1), OPS_ERR_INDEX,
               "slice: Dimension out of range (expected to be in range of [-3, 2], but got 3) for argument 'dim'");
    ops_tensor *z = arange(I());
    expect_err(slice_impl(z, 0, NULL, NULL, 1), OPS_ERR_INDEX, "slice: slice() cannot be applied to a 0-dim tensor.");
    ops_tensor_release(z);
    ops_tensor_release(a);
}
END_TEST

START_TEST(test_select_narrow)
{
    ops_tensor *a = arange(I(2, 3, 4));
    ops_tensor *s = select_impl(a, 1, -1); /* a[:, 2] */
    expect_geom(s, a, I(2, 4), I(12, 1), 8);
    ck_assert_float_eq(*elem(s, I(1, 3)), 23.0f);
    *elem(s, I(0, 0)) = -3.0f;
    ck_assert_float_eq(flat(a, 8), -3.0f);
    ops_tensor_release(s);
    s = select_impl(a, 0, 1);
    expect_geom(s, a, I(3, 4), I(4, 1), 12);
    ops_tensor *ss = select_impl(s, 1, 2); /* a[1, :, 2]: offsets add up */
    expect_geom(ss, a, I(3), I(4), 14);
    ops_tensor *sss = select_impl(ss, 0, 2);
    expect_geom(sss, a, I(), I(), 22);
    ops_tensor_release(sss);
    ops_tensor_release(ss);
    ops_tensor_release(s);
    expect_err(select_impl(a, 1, 3), OPS_ERR_INDEX,
               "select: index 3 out of range for tensor of size [2, 3, 4] at dimension 1");
    expect_err(select_impl(a, -1, -5), OPS_ERR_INDEX,
               "select: index -5 out of range for tensor of size [2, 3, 4] at dimension 2");
    expect_err(select_impl(a, 3, 0), OPS_ERR_INDEX,
               "select: Dimension out of range (expected to be in range of [-3, 2], but got 3) for argument 'dim'");
    ops_tensor *z = arange(I());
    expect_err(select_impl(z, 0, 0), OPS_ERR_INDEX, "select: select() cannot be applied to a 0-dim tensor.");

    ops_tensor *n = narrow_impl(a, 2, 1, 2);
    expect_geom(n, a, I(2, 3, 2), I(12, 4, 1), 1);
    *elem(n, I(1, 2, 1)) = -9.0f; /* a[1][2][2] = flat 22 */
    ck_assert_float_eq(flat(a, 22), -9.0f);
    ops_tensor_release(n);
    n = narrow_impl(a, -1, -2, 2);
    expect_geom(n, a, I(2, 3, 2), I(12, 4, 1), 2);
    ops_tensor_release(n);
    n = narrow_impl(a, 2, 4, 0);
    expect_geom(n, a, I(2, 3, 0), I(12, 4, 1), 4);
    ops_tensor_release(n);
    expect_err(narrow_impl(a, 2, 0, -1), OPS_ERR_VALUE, "narrow: narrow(): length must be non-negative, got -1");
    expect_err(narrow_impl(a, 2, 5, 1), OPS_ERR_INDEX,
               "narrow: start out of range (expected to be in range of [-4, 4], but got 5)");
    expect_err(narrow_impl(a, 2, 3, 2), OPS_ERR_VALUE, "narrow: start (3) + length (2) exceeds dimension size (4).");
    expect_err(narrow_impl(z, 0, 0, 1), OPS_ERR_INDEX, "narrow: narrow() cannot be applied to a 0-dim tensor.");
    ops_tensor_release(z);
    ops_tensor_release(a);
}
END_TEST

/* ---- squeeze, unsqueeze ------------------------------------------------------------ */

START_TEST(test_squeeze_unsqueeze)
{
    ops_tensor *x = arange(I(1, 3, 1, 2)); /* strides [6, 2, 2, 1] */
    ops_tensor *s = squeeze_impl(x);
    expect_geom(s, x, I(3, 2), I(2, 1), 0);
    *elem(s, I(2, 1)) = -2.0f;
    ck_assert_float_eq(flat(x, 5), -2.0f);
    ops_tensor_release(s);
    s = squeeze_dim_impl(x, 0);
    expect_geom(s, x, I(3, 1, 2), I(2, 2, 1), 0);
    ops_tensor_release(s);
    s = squeeze_dim_impl(x, 1); /* not size 1: unchanged */
    expect_geom(s, x, I(1, 3, 1, 2), I(6, 2, 2, 1), 0);
    ops_tensor_release(s);
    s = squeeze_dim_impl(x, -2);
    expect_geom(s, x, I(1, 3, 2), I(6, 2, 1), 0);
    ops_tensor_release(s);
    s = squeeze_dims_impl(x, I(0, 2));
    expect_geom(s, x, I(3, 2), I(2, 1), 0);
    ops_tensor_release(s);
    s = squeeze_dims_impl(x, I(1, -1, 0)); /* only the size-1 ones go */
    expect_geom(s, x, I(3, 1, 2), I(2, 2, 1), 0);
    ops_tensor_release(s);
    s = squeeze_dims_impl(x, I());
    expect_geom(s, x, I(1, 3, 1, 2), I(6, 2, 2, 1), 0);
    ops_tensor_release(s);
    expect_err(squeeze_dim_impl(x, 4), OPS_ERR_INDEX,
               "squeeze: Dimension out of range (expected to be in range of [-4, 3], but got 4) for argument 'dim'");
    expect_err(squeeze_dims_impl(x, I(0, -4)), OPS_ERR_VALUE,
               "squeeze: dim 0 appears multiple times in the list of dims");

    ops_tensor *z = arange(I());
    s = squeeze_impl(z);
    expect_geom(s, z, I(), I(), 0);
    ops_tensor_release(s);
    s = squeeze_dim_impl(z, -1);
    expect_geom(s, z, I(), I(), 0);
    ops_tensor_release(s);
    s = squeeze_dims_impl(z, I(0));
    expect_geom(s, z, I(), I(), 0);
    ops_tensor_release(s);
    expect_err(squeeze_dim_impl(z, 1), OPS_ERR_INDEX,
               "squeeze: Dimension out of range (expected to be in range of [-1, 0], but got 1) for argument 'dim'");

    ops_tensor *a = arange(I(2, 3, 4));
    ops_tensor *u = unsqueeze_impl(a, 0);
    expect_geom(u, a, I(1, 2, 3, 4), I(24, 12, 4, 1), 0);
    ops_tensor_release(u);
    u = unsqueeze_impl(a, 1);
    expect_geom(u, a, I(2, 1, 3, 4), I(12, 12, 4, 1), 0);
    ops_tensor_release(u);
    u = unsqueeze_impl(a, 3);
    expect_geom(u, a, I(2, 3, 4, 1), I(12, 4, 1, 1), 0);
    ops_tensor_release(u);
    u = unsqueeze_impl(a, -1);
    expect_geom(u, a, I(2, 3, 4, 1), I(12, 4, 1, 1), 0);
    *elem(u, I(1, 0, 2, 0)) = -4.0f;
    ck_assert_float_eq(flat(a, 14), -4.0f);
    ops_tensor_release(u);
    ops_tensor *at = transpose_impl(a, 0, 2); /* [4, 3, 2], strides [1, 4, 12] */
    u = unsqueeze_impl(at, 1);
    expect_geom(u, a, I(4, 1, 3, 2), I(1, 12, 4, 12), 0);
    ops_tensor_release(u);
    u = unsqueeze_impl(z, 0);
    expect_geom(u, z, I(1), I(1), 0);
    ops_tensor_release(u);
    expect_err(unsqueeze_impl(a, 4), OPS_ERR_INDEX,
               "unsqueeze: Dimension out of range (expected to be in range of [-4, 3], but got 4) for argument 'dim'");
    ops_tensor *full = arange(I(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
    expect_err(unsqueeze_impl(full, 0), OPS_ERR_VALUE, "unsqueeze: tensors have at most 16 dimensions");

    ops_tensor_release(full);
    ops_tensor_release(at);
    ops_tensor_release(a);
    ops_tensor_release(z);
    ops_tensor_release(x);
}
END_TEST

/* ---- flatten, unflatten ------------------------------------------------------------- */

START_TEST(test_flatten_unflatten)
{
    ops_tensor *a = arange(I(2, 3, 4));
    ops_tensor *f = flatten_impl(a, 0, -1);
    expect_geom(f, a, I(24), I(1), 0);
    ops_tensor_release(f);
    f = flatten_impl(a, 1, 2);
    expect_geom(f, a, I(2, 12), I(12, 1), 0);
    *elem(f, I(1, 5)) = -6.0f;
    ck_assert_float_eq(flat(a, 17), -6.0f);
    ops_tensor_release(f);
    f = flatten_impl(a, 1, 1);
    expect_geom(f, a, I(2, 3, 4), I(12, 4, 1), 0);
    ops_tensor_release(f);
    ops_tensor *at = transpose_impl(a, 1, 2); /* [2, 4, 3], strides [12, 1, 4] */
    f = flatten_impl(at, 0, 1);               /* dims 0 and 1 do not merge: still a view? no: 12 != 4 * 1 */
    ck_assert_ptr_nonnull(f);
    ck_assert(!ops_tensor_shares_storage(f, a));
    ck_assert_int_eq(f->ndim, 2);
    ck_assert_int_eq(f->sizes[0], 8);
    ck_assert_float_eq(*elem(f, I(5, 2)), 12 + 8 + 1); /* at[1][1][2] = a[1][2][1] */
    ops_tensor_release(f);
    ops_tensor *z = arange(I());
    f = flatten_impl(z, 0, -1);
    expect_geom(f, z, I(1), I(1), 0);
    ops_tensor_release(f);
    expect_err(flatten_impl(a, 2, 1), OPS_ERR_VALUE,
               "flatten: flatten() has invalid args: start_dim cannot come after end_dim");
    expect_err(flatten_impl(a, 0, 3), OPS_ERR_INDEX,
               "flatten: Dimension out of range (expected to be in range of [-3, 2], but got 3) for argument "
               "'end_dim'");

    ops_tensor *u = unflatten_impl(a, 2, I(2, 2));
    expect_geom(u, a, I(2, 3, 2, 2), I(12, 4, 2, 1), 0);
    ck_assert_float_eq(*elem(u, I(1, 1, 1, 0)), 12 + 4 + 2);
    ops_tensor_release(u);
    u = unflatten_impl(a, -1, I(-1, 2));
    expect_geom(u, a, I(2, 3, 2, 2), I(12, 4, 2, 1), 0);
    ops_tensor_release(u);
    u = unflatten_impl(a, 1, I(3, 1));
    expect_geom(u, a, I(2, 3, 1, 4), I(12, 4, 4, 1), 0);
    ops_tensor_release(u);
    ops_tensor *at2 = transpose_impl(a, 0, 2); /* [4, 3, 2], strides [1, 4, 12] */
    u = unflatten_impl(at2, 0, I(2, 2));
    expect_geom(u, a, I(2, 2, 3, 2), I(2, 1, 4, 12), 0);
    ops_tensor_release(u);
    expect_err(unflatten_impl(a, 1, I(2, 2)), OPS_ERR_SHAPE,
               "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor");
    expect_err(unflatten_impl(a, 1, I()), OPS_ERR_VALUE, "unflatten: sizes must be non-empty");
    expect_err(unflatten_impl(a, 1, I(-1, 2)), OPS_ERR_SHAPE,
               "unflatten: shape '[-1, 2]' is invalid for input of size 3");

    ops_tensor_release(at2);
    ops_tensor_release(z);
    ops_tensor_release(at);
    ops_tensor_release(a);
}
END_TEST

/* ---- diagonal, unfold, as_strided ---------------------------------------------------- */

START_TEST(test_diagonal)
{
    ops_tensor *m = arange(I(3, 4));
    ops_tensor *d = diagonal_impl(m, 0, 0, 1);
    expect_geom(d, m, I(3), I(5), 0);
    ck_assert_float_eq(*elem(d, I(2)), 10.0f);
    ops_tensor_release(d);
    d = diagonal_impl(m, 1, 0, 1); /* m[0][1], m[1][2], m[2][3] */
    expect_geom(d, m, I(3), I(5), 1);
    ck_assert_float_eq(*elem(d, I(2)), 11.0f);
    *elem(d, I(1)) = -1.0f;
    ck_assert_float_eq(flat(m, 6), -1.0f);
    ops_tensor_release(d);
    d = diagonal_impl(m, -1, 0, 1); /* m[1][0], m[2][1] */
    expect_geom(d, m, I(2), I(5), 4);
    ck_assert_float_eq(*elem(d, I(1)), 9.0f);
    ops_tensor_release(d);
    d = diagonal_impl(m, 5, 0, 1);
    expect_geom(d, m, I(0), I(5), 0);
    ops_tensor_release(d);
    d = diagonal_impl(m, 0, 1, 0); /* the same elements, dims named the other way */
    expect_geom(d, m, I(3), I(5), 0);
    ops_tensor_release(d);

    ops_tensor *a = arange(I(2, 3, 4));
    d = diagonal_impl(a, 0, 1, 2);
    expect_geom(d, a, I(2, 3), I(12, 5), 0);
    ops_tensor_release(d);
    d = diagonal_impl(a, 1, 0, 2); /* a[0][:][1], a[1][:][2] */
    expect_geom(d, a, I(3, 2), I(4, 13), 1);
    ck_assert_float_eq(*elem(d, I(2, 1)), 12 + 8 + 2);
    ops_tensor_release(d);
    expect_err(diagonal_impl(m, 0, 1, 1), OPS_ERR_VALUE, "diagonal: diagonal dimensions cannot be identical 1, 1");
    expect_err(diagonal_impl(m, 0, -1, 1), OPS_ERR_VALUE, "diagonal: diagonal dimensions cannot be identical 1, 1");
    ops_tensor *v = arange(I(4));
    expect_err(diagonal_impl(v, 0, 0, 1), OPS_ERR_INDEX,
               "diagonal: Dimension out of range (expected to be in range of [-1, 0], but got 1) for argument 'dim2'");
    ops_tensor_release(v);
    ops_tensor_release(a);
    ops_tensor_release(m);
}
END_TEST

START_TEST(test_unfold)
{
    ops_tensor *v = arange(I(7));
    ops_tensor *u = unfold_impl(v, 0, 2, 1);
    expect_geom(u, v, I(6, 2), I(1, 1), 0);
    ops_tensor_release(u);
    u = unfold_impl(v, 0, 3, 2); /* windows [0..2], [2..4], [4..6] */
    expect_geom(u, v, I(3, 3), I(2, 1), 0);
    ck_assert_float_eq(*elem(u, I(2, 1)), 5.0f);
    *elem(u, I(1, 0)) = -2.0f; /* element 2, shared by windows 0 and 1 */
    ck_assert_float_eq(flat(v, 2), -2.0f);
    ck_assert_float_eq(*elem(u, I(0, 2)), -2.0f);
    ops_tensor_release(u);
    u = unfold_impl(v, -1, 7, 1);
    expect_geom(u, v, I(1, 7), I(1, 1), 0);
    ops_tensor_release(u);
    u = unfold_impl(v, 0, 0, 3);
    expect_geom(u, v, I(3, 0), I(3, 1), 0);
    ops_tensor_release(u);

    ops_tensor *a = arange(I(2, 3, 4));
    u = unfold_impl(a, 1, 2, 1);
    expect_geom(u, a, I(2, 2, 4, 2), I(12, 4, 1, 4), 0);
    ck_assert_float_eq(*elem(u, I(1, 1, 3, 1)), 12 + 4 * 2 + 3);
    ops_tensor_release(u);
    ops_tensor *z = arange(I());
    u = unfold_impl(z, 0, 1, 1);
    expect_geom(u, z, I(1), I(1), 0);
    ops_tensor_release(u);

    expect_err(unfold_impl(v, 0, 8, 1), OPS_ERR_SHAPE, "unfold: maximum size for tensor at dimension 0 is 7 but size is 8");
    expect_err(unfold_impl(v, 0, 2, 0), OPS_ERR_VALUE, "unfold: step is 0 but must be > 0");
    expect_err(unfold_impl(v, 0, -1, 1), OPS_ERR_VALUE, "unfold: size is -1 but must be >= 0");
    expect_err(unfold_impl(v, 1, 2, 1), OPS_ERR_INDEX,
               "unfold: Dimension out of range (expected to be in range of [-1, 0], but got 1) for argument "
               "'dimension'");
    ops_tensor_release(z);
    ops_tensor_release(a);
    ops_tensor_release(v);
}
END_TEST

START_TEST(test_as_strided)
{
    ops_tensor *a = arange(I(24));
    ops_tensor *s = as_strided_impl(a, I(3, 3), I(1, 1), NULL); /* sliding windows */
    expect_geom(s, a, I(3, 3), I(1, 1), 0);
    ck_assert_float_eq(*elem(s, I(2, 2)), 4.0f);
    ops_tensor_release(s);
    int64_t five = 5;
    s = as_strided_impl(a, I(2, 2), I(1, 2), &five);
    expect_geom(s, a, I(2, 2), I(1, 2), 5);
    ck_assert_float_eq(*elem(s, I(1, 1)), 8.0f);
    *elem(s, I(0, 1)) = -8.0f;
    ck_assert_float_eq(flat(a, 7), -8.0f);
    ops_tensor_release(s);
    /* No offset given: the input's own. */
    ops_tensor *tail = narrow_impl(a, 0, 12, 12);
    s = as_strided_impl(tail, I(4), I(3), NULL);
    expect_geom(s, a, I(4), I(3), 12);
    ops_tensor_release(s);
    s = as_strided_impl(a, I(4, 6), I(6, 1), NULL); /* exactly the whole storage */
    expect_geom(s, a, I(4, 6), I(6, 1), 0);
    ops_tensor_release(s);
    s = as_strided_impl(a, I(0, 5), I(100, 100), &five); /* empty: any strides */
    expect_geom(s, a, I(0, 5), I(100, 100), 5);
    ops_tensor_release(s);

    expect_err(as_strided_impl(a, I(5, 5), I(5, 1), NULL), OPS_ERR_VALUE,
               "as_strided: setStorage: sizes [5, 5], strides [5, 1], storage offset 0, and itemsize 4 requiring a "
               "storage size of 100 are out of bounds for storage of size 96");
    int64_t twenty = 20;
    expect_err(as_strided_impl(a, I(2), I(4), &twenty), OPS_ERR_VALUE,
               "as_strided: setStorage: sizes [2], strides [4], storage offset 20, and itemsize 4 requiring a "
               "storage size of 100 are out of bounds for storage of size 96");
    expect_err(as_strided_impl(a, I(2, 2), I(1), NULL), OPS_ERR_VALUE,
               "as_strided: mismatch in length of strides and shape (2 sizes, 1 strides)");
    expect_err(as_strided_impl(a, I(2), I(-1), NULL), OPS_ERR_VALUE,
               "as_strided: Negative strides are not supported at the moment, got strides: [-1]");
    expect_err(as_strided_impl(a, I(-2), I(1), NULL), OPS_ERR_VALUE,
               "as_strided: Trying to create tensor with negative dimension -2: [-2]");
    int64_t neg = -1;
    expect_err(as_strided_impl(a, I(2), I(1), &neg), OPS_ERR_VALUE, "as_strided: Tensor: invalid storage offset -1");
    ops_tensor_release(tail);
    ops_tensor_release(a);
}
END_TEST

START_TEST(test_bad_lists)
{
    ops_tensor *a = arange(I(2, 3));
    int64_t many[OPS_MAX_DIMS + 1];
    for (int i = 0; i <= OPS_MAX_DIMS; i++)
        many[i] = 1;
    ops_int_list too_long = {many, OPS_MAX_DIMS + 1};
    expect_err(view_impl(a, too_long), OPS_ERR_VALUE,
               "view: argument 'size' has 17 entries, more than the 16 dimensions a tensor may have");
    expect_err(expand_impl(a, too_long, false), OPS_ERR_VALUE,
               "expand: argument 'size' has 17 entries, more than the 16 dimensions a tensor may have");
    ops_int_list null_list = {NULL, 2};
    expect_err(reshape_impl(a, null_list), OPS_ERR_VALUE, "reshape: argument 'shape' is not a valid int list");
    ops_tensor_release(a);
}
END_TEST

static Suite *
views_suite(void)
{
    Suite *s = suite_create("views");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_view);
    tcase_add_test(tc, test_reshape);
    tcase_add_test(tc, test_permute_transpose_t);
    tcase_add_test(tc, test_expand);
    tcase_add_test(tc, test_slice);
    tcase_add_test(tc, test_select_narrow);
    tcase_add_test(tc, test_squeeze_unsqueeze);
    tcase_add_test(tc, test_flatten_unflatten);
    tcase_add_test(tc, test_diagonal);
    tcase_add_test(tc, test_unfold);
    tcase_add_test(tc, test_as_strided);
    tcase_add_test(tc, test_bad_lists);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(views_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

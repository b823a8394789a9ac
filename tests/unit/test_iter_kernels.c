/* The binary, ternary and copy CPU kernels through the tensor iterator: integer
 * wrap-around, alpha rules, division and remainders, pow/max/min/atan2, comparisons,
 * logical and bitwise ops, where/clamp/lerp/addc*, copies and conversions (the
 * iterator itself: test_iter.c).
 *
 * Oracles: hand-derived values for the kernels' edge cases (integer division, shifts,
 * rounding) and plain C conversions, and invariants (an op that fails leaves its out=
 * byte-for-byte as it was). */
#include "test_iter_util.h"
#include "ops_op_add.h"
#include "ops_op_addcdiv.h"
#include "ops_op_addcmul.h"
#include "ops_op_atan2.h"
#include "ops_op_bitwise_and.h"
#include "ops_op_bitwise_left_shift.h"
#include "ops_op_bitwise_or.h"
#include "ops_op_bitwise_right_shift.h"
#include "ops_op_bitwise_xor.h"
#include "ops_op_clamp.h"
#include "ops_op_clone.h"
#include "ops_op_contiguous.h"
#include "ops_op_copy.h"
#include "ops_op_div.h"
#include "ops_op_eq.h"
#include "ops_op_fmod.h"
#include "ops_op_ge.h"
#include "ops_op_gt.h"
#include "ops_op_le.h"
#include "ops_op_lerp.h"
#include "ops_op_logical_and.h"
#include "ops_op_logical_or.h"
#include "ops_op_logical_xor.h"
#include "ops_op_maximum.h"
#include "ops_op_minimum.h"
#include "ops_op_mul.h"
#include "ops_op_ne.h"
#include "ops_op_pow.h"
#include "ops_op_remainder.h"
#include "ops_op_sub.h"
#include "ops_op_to.h"
#include "ops_op_where.h"

/* ---- kernels: arithmetic ---------------------------------------------------------- */

START_TEST(test_integer_wrap)
{
    ops_tensor *a = T1(OPS_INT32, 2147483647, -2147483647 - 1.0);
    ops_tensor *one = T1(OPS_INT32, 1, 1);
    ops_tensor *r = ops_add(a, one, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_INT32, -2147483648.0, -2147483647.0);
    ops_tensor_release(r);
    r = ops_sub(a, one, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_INT32, 2147483646.0, 2147483647.0);
    ops_tensor_release(r);
    r = ops_mul(a, a);
    EXPECT(r, OPS_INT32, 1, 0);
    ops_tensor_release(r);
    ops_tensor *u = T1(OPS_UINT8, 0, 255);
    ops_tensor *u1 = T1(OPS_UINT8, 1, 1);
    r = ops_sub(u, u1, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_UINT8, 255, 254);
    ops_tensor_release(r);
    /* uint8 alpha of -1 wraps, as PyTorch allows */
    r = ops_add(u, u1, OPS_SCALAR_INT(-1));
    EXPECT(r, OPS_UINT8, 255, 254);
    ops_tensor_release(r);
    ops_tensor *b = T1(OPS_BOOL, 1, 0);
    r = ops_add(b, b, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_BOOL, 1, 0);
    ops_tensor_release(r);
    r = ops_mul(b, TMP(OPS_BOOL, 1, 1));
    EXPECT(r, OPS_BOOL, 1, 0);
    ops_tensor_release(r);
    ops_tensor_release(a);
    ops_tensor_release(one);
    ops_tensor_release(u);
    ops_tensor_release(u1);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_alpha_rules)
{
    ops_tensor *i = T1(OPS_INT64, 1, 2);
    ops_tensor *f = T1(OPS_FLOAT32, 1, 2);
    ops_tensor *i8 = T1(OPS_INT8, 1, 2);
    ops_tensor *b = T1(OPS_BOOL, 1, 0);
    ck_assert_ptr_null(ops_add(i, i, OPS_SCALAR_FLOAT(0.5)));
    expect_error(ops_last_status(), OPS_ERR_VALUE, "alpha must not be a floating point number");
    ck_assert_ptr_null(ops_add(f, f, OPS_SCALAR_BOOL(true)));
    expect_error(ops_last_status(), OPS_ERR_VALUE, "Boolean alpha only supported for Boolean results");
    ck_assert_ptr_null(ops_add(i8, i8, OPS_SCALAR_INT(1000)));
    expect_error(ops_last_status(), OPS_ERR_VALUE, "cannot be converted to type int8");
    ops_tensor *r = ops_add(f, f, OPS_SCALAR_FLOAT(0.5));
    EXPECT(r, OPS_FLOAT32, 1.5, 3);
    ops_tensor_release(r);
    r = ops_sub(i, i, OPS_SCALAR_INT(3));
    EXPECT(r, OPS_INT64, -2, -4);
    ops_tensor_release(r);
    /* sub with bool */
    ck_assert_ptr_null(ops_sub(b, b, OPS_SCALAR_INT(1)));
    expect_error(ops_last_status(), OPS_ERR_DTYPE, "with two bool tensors is not supported");
    ck_assert_ptr_null(ops_sub(f, b, OPS_SCALAR_INT(1)));
    expect_error(ops_last_status(), OPS_ERR_DTYPE, "with a bool tensor is not supported");
    ops_tensor_release(i);
    ops_tensor_release(f);
    ops_tensor_release(i8);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_division)
{
    ops_tensor *a = T1(OPS_INT64, 7, -7, 7, -7);
    ops_tensor *b = T1(OPS_INT64, 2, 2, -2, -2);
    ops_tensor *r = ops_div(a, b);
    EXPECT(r, OPS_FLOAT32, 3.5, -3.5, -3.5, 3.5);
    ops_tensor_release(r);
    r = ops_div_tensor_mode(a, b, "trunc");
    EXPECT(r, OPS_INT64, 3, -3, -3, 3);
    ops_tensor_release(r);
    r = ops_div_tensor_mode(a, b, "floor");
    EXPECT(r, OPS_INT64, 3, -4, -4, 3);
    ops_tensor_release(r);
    r = ops_div_tensor_mode(a, b, NULL);
    EXPECT(r, OPS_FLOAT32, 3.5, -3.5, -3.5, 3.5);
    ops_tensor_release(r);
    ck_assert_ptr_null(ops_div_tensor_mode(a, b, "round"));
    expect_error(ops_last_status(), OPS_ERR_VALUE, "one of None, 'trunc', or 'floor' but found 'round'");

    ops_tensor *fa = T1(OPS_FLOAT64, 7.5, -7.5, 7.5, -7.5, 1, -1, 0);
    ops_tensor *fb = T1(OPS_FLOAT64, 2, 2, -2, -2, 0, 0, 0);
    r = ops_div_tensor_mode(fa, fb, "floor");
    EXPECT(r, OPS_FLOAT64, 3, -4, -4, 3, INFINITY, -INFINITY, NAN);
    ops_tensor_release(r);
    r = ops_div_tensor_mode(fa, fb, "trunc");
    EXPECT(r, OPS_FLOAT64, 3, -3, -3, 3, INFINITY, -INFINITY, NAN);
    ops_tensor_release(r);

    /* INT_MIN / -1 wraps instead of trapping */
    ops_tensor *mn = T1(OPS_INT32, -2147483648.0, -2147483648.0);
    ops_tensor *m1 = T1(OPS_INT32, -1, 1);
    r = ops_div_tensor_mode(mn, m1, "trunc");
    EXPECT(r, OPS_INT32, -2147483648.0, -2147483648.0);
    ops_tensor_release(r);
    r = ops_div_tensor_mode(mn, m1, "floor");
    EXPECT(r, OPS_INT32, -2147483648.0, -2147483648.0);
    ops_tensor_release(r);
    r = ops_remainder(mn, m1);
    EXPECT(r, OPS_INT32, 0, 0);
    ops_tensor_release(r);
    r = ops_fmod(mn, m1);
    EXPECT(r, OPS_INT32, 0, 0);
    ops_tensor_release(r);

    /* division by zero: an error, and out= untouched */
    ops_tensor *z = T1(OPS_INT64, 1, 0, 1, 1);
    ops_tensor *out = T1(OPS_INT64, 9, 9, 9, 9);
    expect_error(ops_div_out_mode(a, z, "trunc", out), OPS_ERR_RUNTIME, "ZeroDivisionError");
    EXPECT(out, OPS_INT64, 9, 9, 9, 9);
    expect_error(ops_remainder_out(a, z, out), OPS_ERR_RUNTIME, "ZeroDivisionError");
    expect_error(ops_fmod_(a, z), OPS_ERR_RUNTIME, "ZeroDivisionError");
    EXPECT(a, OPS_INT64, 7, -7, 7, -7);
    EXPECT(out, OPS_INT64, 9, 9, 9, 9);
    /* a zero that only appears after conversion to the computation dtype (int8) */
    ops_tensor *i8 = T1(OPS_INT8, 5, 5);
    ops_tensor *d256 = ops_scalar_tensor(OPS_SCALAR_INT(256), OPS_INT64);
    ck_assert_ptr_null(ops_remainder(i8, d256));
    expect_error(ops_last_status(), OPS_ERR_RUNTIME, "ZeroDivisionError");
    ops_tensor_release(i8);
    ops_tensor_release(d256);

    ops_tensor_release(z);
    ops_tensor_release(out);
    ops_tensor_release(mn);
    ops_tensor_release(m1);
    ops_tensor_release(fa);
    ops_tensor_release(fb);
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_remainder_fmod)
{
    ops_tensor *a = T1(OPS_INT32, 7, -7, 7, -7);
    ops_tensor *b = T1(OPS_INT32, 3, 3, -3, -3);
    ops_tensor *r = ops_remainder(a, b);
    EXPECT(r, OPS_INT32, 1, 2, -2, -1);
    ops_tensor_release(r);
    r = ops_fmod(a, b);
    EXPECT(r, OPS_INT32, 1, -1, 1, -1);
    ops_tensor_release(r);
    ops_tensor *fa = T1(OPS_FLOAT32, -7.5, 7.5, 5, 1);
    ops_tensor *fb = T1(OPS_FLOAT32, 2, -2, 0, INFINITY);
    r = ops_remainder(fa, fb);
    EXPECT(r, OPS_FLOAT32, 0.5, -0.5, NAN, 1);
    ops_tensor_release(r);
    r = ops_fmod(fa, fb);
    EXPECT(r, OPS_FLOAT32, -1.5, 1.5, NAN, 1);
    ops_tensor_release(r);
    /* Scalar self (remainder.Scalar_Tensor) */
    r = ops_remainder_scalar_tensor(OPS_SCALAR_INT(-7), b);
    EXPECT(r, OPS_INT32, 2, 2, -1, -1);
    ops_tensor_release(r);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(fa);
    ops_tensor_release(fb);
}
END_TEST

START_TEST(test_pow_max_min_atan2)
{
    ops_tensor *a = T1(OPS_INT64, 2, -2, 3, 1, -1, -1, 0);
    ops_tensor *e = T1(OPS_INT64, 3, 3, -1, -5, -3, -2, 0);
    ops_tensor *r = ops_pow(a, e);
    EXPECT(r, OPS_INT64, 8, -8, 0, 1, -1, 1, 1);
    ops_tensor_release(r);
    ck_assert_ptr_null(ops_pow_tensor_scalar(a, OPS_SCALAR_INT(-2)));
    expect_error(ops_last_status(), OPS_ERR_VALUE, "Integers to negative integer powers are not allowed");
    r = ops_pow_tensor_scalar(a, OPS_SCALAR_FLOAT(0.5));
    ck_assert_int_eq(r->dtype, OPS_FLOAT32);
    ck_assert(elem(r, 0) == sqrtf(2.0f));
    ops_tensor_release(r);
    r = ops_pow_scalar(OPS_SCALAR_INT(2), TMP(OPS_INT32, 0, 10, 31));
    EXPECT(r, OPS_INT32, 1, 1024, -2147483648.0);
    ops_tensor_release(r);

    ops_tensor *x = T1(OPS_FLOAT32, NAN, 1, 2, -INFINITY);
    ops_tensor *y = T1(OPS_FLOAT32, 1, NAN, 1, 0);
    r = ops_maximum(x, y);
    EXPECT(r, OPS_FLOAT32, NAN, NAN, 2, 0);
    ops_tensor_release(r);
    r = ops_minimum(x, y);
    EXPECT(r, OPS_FLOAT32, NAN, NAN, 1, -INFINITY);
    ops_tensor_release(r);
    ops_tensor *bi = T1(OPS_BOOL, 1, 0, 0);
    ops_tensor *bj = T1(OPS_BOOL, 0, 0, 1);
    r = ops_maximum(bi, bj);
    EXPECT(r, OPS_BOOL, 1, 0, 1);
    ops_tensor_release(r);
    r = ops_atan2(TMP(OPS_INT32, 1, -1), TMP(OPS_INT32, 1, 1));
    ck_assert_int_eq(r->dtype, OPS_FLOAT32);
    /* within an ulp of libm's: float32 atan2 runs SLEEF's 1.0-ulp vector form
     * (kernels/cpu/vec/vec_act.c), which gives pi/4 one ulp below the rounded value */
    ck_assert_float_eq_tol(elem(r, 0), atan2f(1, 1), 6e-8f);
    ck_assert_float_eq_tol(elem(r, 1), atan2f(-1, 1), 6e-8f);
    ops_tensor_release(r);
    ops_tensor_release(bi);
    ops_tensor_release(bj);
    ops_tensor_release(x);
    ops_tensor_release(y);
    ops_tensor_release(a);
    ops_tensor_release(e);
}
END_TEST

/* ---- kernels: comparisons, logical, bitwise ------------------------------------- */

START_TEST(test_compare_logical_bitwise)
{
    ops_tensor *h = ops_to_dtype(TMP(OPS_FLOAT32, 1, 2.5, NAN), OPS_FLOAT16, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *h2 = ops_to_dtype(TMP(OPS_FLOAT32, 1, 3, NAN), OPS_FLOAT16, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *r = ops_eq(h, h2);
    EXPECT(r, OPS_BOOL, 1, 0, 0);
    ops_tensor_release(r);
    r = ops_ne(h, h2);
    EXPECT(r, OPS_BOOL, 0, 1, 1);
    ops_tensor_release(r);
    r = ops_le(h, h2);
    EXPECT(r, OPS_BOOL, 1, 1, 0);
    ops_tensor_release(r);
    r = ops_gt_scalar(h, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_BOOL, 0, 1, 0);
    ops_tensor_release(r);
    /* in-place comparison keeps self's dtype */
    ops_tensor *f = T1(OPS_FLOAT32, 1, 5, 3);
    ck_assert_int_eq(ops_ge_scalar_(f, OPS_SCALAR_INT(3)), OPS_OK);
    EXPECT(f, OPS_FLOAT32, 0, 1, 1);

    ops_tensor *la = T1(OPS_FLOAT32, NAN, 0, 2, 0);
    ops_tensor *lb = T1(OPS_INT32, 0, 0, 3, 7);
    r = ops_logical_xor(la, lb);
    EXPECT(r, OPS_BOOL, 1, 0, 0, 1);
    ops_tensor_release(r);
    r = ops_logical_and(la, lb);
    EXPECT(r, OPS_BOOL, 0, 0, 1, 0);
    ops_tensor_release(r);
    r = ops_logical_or(la, lb);
    EXPECT(r, OPS_BOOL, 1, 0, 1, 1);
    ops_tensor_release(r);

    ops_tensor *ia = T1(OPS_INT16, 12, -1, 5);
    ops_tensor *ib = T1(OPS_INT16, 10, 255, 3);
    r = ops_bitwise_and(ia, ib);
    EXPECT(r, OPS_INT16, 8, 255, 1);
    ops_tensor_release(r);
    r = ops_bitwise_or(ia, ib);
    EXPECT(r, OPS_INT16, 14, -1, 7);
    ops_tensor_release(r);
    r = ops_bitwise_xor(ia, ib);
    EXPECT(r, OPS_INT16, 6, -256, 6);
    ops_tensor_release(r);
    ops_tensor *ba = T1(OPS_BOOL, 1, 1, 0);
    ops_tensor *bb = T1(OPS_BOOL, 1, 0, 0);
    r = ops_bitwise_xor(ba, bb);
    EXPECT(r, OPS_BOOL, 0, 1, 0);
    ops_tensor_release(r);
    ck_assert_ptr_null(ops_bitwise_and(la, la));
    expect_error(ops_last_status(), OPS_ERR_DTYPE, "dtype float32 is not supported");

    /* shifts, including counts C leaves undefined */
    ops_tensor *s8 = T1(OPS_INT8, 1, 1, 1, -8, -8, 8, 3);
    ops_tensor *c8 = T1(OPS_INT8, 7, 8, -1, 1, 100, 100, 0);
    r = ops_bitwise_left_shift(s8, c8);
    EXPECT(r, OPS_INT8, -128, 0, 0, -16, 0, 0, 3);
    ops_tensor_release(r);
    r = ops_bitwise_right_shift(s8, c8);
    EXPECT(r, OPS_INT8, 0, 0, 0, -4, -1, 0, 3);
    ops_tensor_release(r);
    ops_tensor *u8 = T1(OPS_UINT8, 1, 200, 255, 128);
    ops_tensor *uc = T1(OPS_UINT8, 7, 9, 200, 7);
    r = ops_bitwise_left_shift(u8, uc);
    EXPECT(r, OPS_UINT8, 128, 0, 0, 0);
    ops_tensor_release(r);
    r = ops_bitwise_right_shift(u8, uc);
    EXPECT(r, OPS_UINT8, 0, 0, 0, 1);
    ops_tensor_release(r);
    ops_tensor *s64 = T1(OPS_INT64, 1, -1);
    r = ops_bitwise_left_shift_tensor_scalar(s64, OPS_SCALAR_INT(63));
    EXPECT(r, OPS_INT64, -9223372036854775808.0, -9223372036854775808.0);
    ops_tensor_release(r);
    r = ops_bitwise_right_shift_tensor_scalar(s64, OPS_SCALAR_INT(64));
    EXPECT(r, OPS_INT64, 0, -1);
    ops_tensor_release(r);

    ops_tensor_release(s64);
    ops_tensor_release(u8);
    ops_tensor_release(uc);
    ops_tensor_release(s8);
    ops_tensor_release(c8);
    ops_tensor_release(ba);
    ops_tensor_release(bb);
    ops_tensor_release(ia);
    ops_tensor_release(ib);
    ops_tensor_release(la);
    ops_tensor_release(lb);
    ops_tensor_release(f);
    ops_tensor_release(h);
    ops_tensor_release(h2);
}
END_TEST

/* ---- kernels: ternary -------------------------------------------------------------- */

START_TEST(test_where)
{
    ops_tensor *c = from_doubles(OPS_BOOL, 2, (int64_t[]){2, 1}, (double[]){1, 0});
    ops_tensor *a = T1(OPS_INT32, 1, 2, 3);
    ops_tensor *b = T1(OPS_FLOAT32, 0.5, 0.25, 0.125);
    ops_tensor *r = ops_where_self(c, a, b);
    ck_assert_int_eq(r->ndim, 2);
    EXPECT(r, OPS_FLOAT32, 1, 2, 3, 0.5, 0.25, 0.125);
    ops_tensor_release(r);
    r = ops_where_scalarother(c, a, OPS_SCALAR_INT(-1));
    EXPECT(r, OPS_INT32, 1, 2, 3, -1, -1, -1);
    ops_tensor_release(r);
    r = ops_where_scalar(c, OPS_SCALAR_FLOAT(1.5), OPS_SCALAR_INT(0));
    EXPECT(r, OPS_FLOAT32, 1.5, 0);
    ops_tensor_release(r);
    ck_assert_ptr_null(ops_where_self(b, a, b));
    expect_error(ops_last_status(), OPS_ERR_DTYPE, "condition to be a boolean tensor");
    ops_tensor_release(c);
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_clamp)
{
    ops_tensor *i = T1(OPS_INT32, -5, 0, 5);
    ops_scalar lo = OPS_SCALAR_INT(-1), hi = OPS_SCALAR_INT(3), flo = OPS_SCALAR_FLOAT(0.5);
    ops_tensor *r = ops_clamp_scalar(i, &lo, &hi);
    EXPECT(r, OPS_INT32, -1, 0, 3);
    ops_tensor_release(r);
    r = ops_clamp_scalar(i, NULL, &hi);
    EXPECT(r, OPS_INT32, -5, 0, 3);
    ops_tensor_release(r);
    r = ops_clamp_scalar(i, &flo, NULL); /* a float bound promotes */
    EXPECT(r, OPS_FLOAT32, 0.5, 0.5, 5);
    ops_tensor_release(r);
    r = ops_clamp_scalar(i, &hi, &lo); /* min > max: everything is max */
    EXPECT(r, OPS_INT32, -1, -1, -1);
    ops_tensor_release(r);
    ck_assert_ptr_null(ops_clamp_scalar(i, NULL, NULL));
    expect_error(ops_last_status(), OPS_ERR_VALUE, "at least one of 'min' or 'max'");
    expect_error(ops_clamp_scalar_(i, &flo, NULL), OPS_ERR_DTYPE, "can't be cast");
    ops_tensor *i8 = T1(OPS_INT8, 1);
    ops_scalar big = OPS_SCALAR_INT(-1000);
    ck_assert_ptr_null(ops_clamp_scalar(i8, &big, NULL));
    expect_error(ops_last_status(), OPS_ERR_VALUE, "cannot be converted to type int8");

    ops_tensor *f = T1(OPS_FLOAT32, NAN, -2, 2);
    r = ops_clamp_scalar(f, &lo, &hi);
    EXPECT(r, OPS_FLOAT32, NAN, -1, 2);
    ops_tensor_release(r);
    ops_scalar nan = OPS_SCALAR_FLOAT(NAN);
    r = ops_clamp_scalar(f, &nan, NULL);
    EXPECT(r, OPS_FLOAT32, NAN, NAN, NAN);
    ops_tensor_release(r);

    ops_tensor *tmin = T1(OPS_FLOAT32, 0, 0, 3);
    ops_tensor *tmax = T1(OPS_FLOAT32, 1, NAN, 4);
    r = ops_clamp(f, tmin, tmax);
    EXPECT(r, OPS_FLOAT32, NAN, NAN, 3);
    ops_tensor_release(r);
    r = ops_clamp(i, NULL, TMP(OPS_INT32, 0, 0, 0));
    EXPECT(r, OPS_INT32, -5, 0, 0);
    ops_tensor_release(r);
    r = ops_clamp(i, TMP(OPS_INT32, 1, 1, 1), NULL);
    EXPECT(r, OPS_INT32, 1, 1, 5);
    ops_tensor_release(r);
    ck_assert_ptr_null(ops_clamp(i, NULL, NULL));
    ck_assert_int_eq(ops_clamp_(f, tmin, NULL), OPS_OK);
    EXPECT(f, OPS_FLOAT32, NAN, 0, 3);
    ops_tensor_release(tmin);
    ops_tensor_release(tmax);
    ops_tensor_release(f);
    ops_tensor_release(i8);
    ops_tensor_release(i);
}
END_TEST

START_TEST(test_lerp_addc)
{
    ops_tensor *s = T1(OPS_FLOAT32, 0, 0, 1);
    ops_tensor *e = T1(OPS_FLOAT32, 10, 10, 3);
    ops_tensor *w = T1(OPS_FLOAT32, 0.25, 0.75, 1);
    ops_tensor *r = ops_lerp(s, e, w);
    EXPECT(r, OPS_FLOAT32, 2.5, 7.5, 3);
    ops_tensor_release(r);
    r = ops_lerp_scalar(s, e, OPS_SCALAR_FLOAT(0.5));
    EXPECT(r, OPS_FLOAT32, 5, 5, 2);
    ops_tensor_release(r);
    ops_tensor *e64 = T1(OPS_FLOAT64, 1, 1, 1);
    ck_assert_ptr_null(ops_lerp(s, e64, w));
    expect_error(ops_last_status(), OPS_ERR_DTYPE, "expected dtype float32 for `end` but got dtype float64");

    ops_tensor *t1 = T1(OPS_FLOAT32, 2, 3, 6);
    ops_tensor *t2 = T1(OPS_FLOAT32, 4, 4, 4);
    r = ops_addcmul(s, t1, t2, OPS_SCALAR_FLOAT(0.5));
    EXPECT(r, OPS_FLOAT32, 4, 6, 13);
    ops_tensor_release(r);
    r = ops_addcdiv(s, t1, t2, OPS_SCALAR_INT(2));
    EXPECT(r, OPS_FLOAT32, 1, 1.5, 4);
    ops_tensor_release(r);
    ops_tensor *it1 = T1(OPS_INT32, 2, 3, 6);
    ops_tensor *it2 = T1(OPS_INT32, 4, 4, 4);
    r = ops_addcmul(it1, it1, it2, OPS_SCALAR_INT(-1));
    EXPECT(r, OPS_INT32, -6, -9, -18);
    ops_tensor_release(r);
    ck_assert_ptr_null(ops_addcdiv(s, it1, it2, OPS_SCALAR_INT(1)));
    expect_error(ops_last_status(), OPS_ERR_DTYPE, "Integer division with addcdiv is no longer supported");
    ck_assert_int_eq(ops_addcmul_(s, t1, t2, OPS_SCALAR_INT(1)), OPS_OK);
    EXPECT(s, OPS_FLOAT32, 8, 12, 25);
    ops_tensor_release(it1);
    ops_tensor_release(it2);
    ops_tensor_release(t1);
    ops_tensor_release(t2);
    ops_tensor_release(e64);
    ops_tensor_release(s);
    ops_tensor_release(e);
    ops_tensor_release(w);
}
END_TEST

/* ---- copies ------------------------------------------------------------------------- */

START_TEST(test_copy_conversions)
{
    ops_tensor *f = T1(OPS_FLOAT32, 3.7f, -3.7f, -1.0f, 300.0f, NAN, 2.5f, 0.0f);
    ops_tensor *i = ops_to_dtype(f, OPS_INT32, false, false, OPS_MEMORY_FORMAT_NONE);
    EXPECT(i, OPS_INT32, 3, -3, -1, 300, -2147483648.0, 2, 0);
    ops_tensor *u = ops_to_dtype(f, OPS_UINT8, false, false, OPS_MEMORY_FORMAT_NONE);
    EXPECT(u, OPS_UINT8, 3, 253, 255, 44, 0, 2, 0);
    ops_tensor *b = ops_to_dtype(f, OPS_BOOL, false, false, OPS_MEMORY_FORMAT_NONE);
    EXPECT(b, OPS_BOOL, 1, 1, 1, 1, 1, 1, 0);
    ops_tensor *l = ops_to_dtype(TMP(OPS_FLOAT64, 1e300, -1e300, 9.3e18), OPS_INT64, false, false,
                                 OPS_MEMORY_FORMAT_NONE);
    EXPECT(l, OPS_INT64, -9223372036854775808.0, -9223372036854775808.0, -9223372036854775808.0);
    /* float16 and bfloat16: round to nearest, ties to even */
    const double ulp16 = 1.0 / 1024, ulpb = 1.0 / 128;
    ops_tensor *src = T1(OPS_FLOAT64, 1 + ulp16 / 2, 1 + 1.5 * ulp16, 1 + 0.75 * ulp16, 65520, -70000);
    ops_tensor *h = ops_to_dtype(src, OPS_FLOAT16, false, false, OPS_MEMORY_FORMAT_NONE);
    EXPECT(h, OPS_FLOAT16, 1, 1 + 2 * ulp16, 1 + ulp16, INFINITY, -INFINITY);
    ops_tensor *srcb = T1(OPS_FLOAT32, 1 + ulpb / 2, 1 + 1.5 * ulpb, 1 + 0.75 * ulpb);
    ops_tensor *bf = ops_to_dtype(srcb, OPS_BFLOAT16, false, false, OPS_MEMORY_FORMAT_NONE);
    EXPECT(bf, OPS_BFLOAT16, 1, 1 + 2 * ulpb, 1 + ulpb);
    /* and from an integer: 2049 is halfway between 2048 and 2050 in float16 */
    ops_tensor *hi = ops_to_dtype(TMP(OPS_INT64, 2049, 2051, -3), OPS_FLOAT16, false, false, OPS_MEMORY_FORMAT_NONE);
    EXPECT(hi, OPS_FLOAT16, 2048, 2052, -3);
    /* NaN payload and -0 survive a same-dtype copy */
    ops_tensor *h2 = ops_clone(h, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(memcmp(ops_tensor_data_ptr(h2), ops_tensor_data_ptr(h), 10), 0);
    ops_tensor_release(h2);

    ops_tensor_release(hi);
    ops_tensor_release(bf);
    ops_tensor_release(srcb);
    ops_tensor_release(h);
    ops_tensor_release(src);
    ops_tensor_release(l);
    ops_tensor_release(b);
    ops_tensor_release(u);
    ops_tensor_release(i);
    ops_tensor_release(f);
}
END_TEST

START_TEST(test_copy_rules)
{
    ops_tensor *dst = ops_tensor_new("test", 2, (int64_t[]){2, 3}, NULL, OPS_INT64, OPS_DEVICE_CPU);
    ops_tensor *row = T1(OPS_FLOAT32, 1.5, 2.5, -3.5);
    const uint64_t v0 = ops_tensor_version(dst);
    ck_assert_int_eq(ops_copy_(dst, row, false), OPS_OK);
    EXPECT(dst, OPS_INT64, 1, 2, -3, 1, 2, -3);
    ck_assert_uint_gt(ops_tensor_version(dst), v0);
    ops_tensor *four = T1(OPS_FLOAT32, 1, 2, 3, 4);
    expect_error(ops_copy_(dst, four, false), OPS_ERR_SHAPE, "must match");
    ops_tensor *big = ops_tensor_new("test", 2, (int64_t[]){4, 3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    expect_error(ops_copy_(row, big, false), OPS_ERR_SHAPE, "doesn't match the broadcast shape [4, 3]");
    /* copying into an expanded self is refused */
    ops_tensor *ex = ops_tensor_new_view(row, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1}, 0);
    expect_error(ops_copy_(ex, dst, false), OPS_ERR_VALUE, "more than one element");
    /* overlapping src and self: read as if src were copied first */
    ops_tensor *buf = T1(OPS_INT32, 0, 1, 2, 3, 4, 5);
    ops_tensor *lo = ops_tensor_new_view(buf, 1, (int64_t[]){5}, (int64_t[]){1}, 0);
    ops_tensor *hi = ops_tensor_new_view(buf, 1, (int64_t[]){5}, (int64_t[]){1}, 1);
    ck_assert_int_eq(ops_copy_(hi, lo, false), OPS_OK);
    EXPECT(buf, OPS_INT32, 0, 0, 1, 2, 3, 4);
    ck_assert_int_eq(ops_copy_(lo, hi, false), OPS_OK);
    EXPECT(buf, OPS_INT32, 0, 1, 2, 3, 4, 4);
    /* reversed onto itself */
    ops_tensor *rev = ops_tensor_new_view(buf, 1, (int64_t[]){6}, (int64_t[]){-1}, 5);
    ck_assert_int_eq(ops_copy_(buf, rev, false), OPS_OK);
    EXPECT(buf, OPS_INT32, 4, 4, 3, 2, 1, 0);
    ops_tensor_release(rev);
    ops_tensor_release(lo);
    ops_tensor_release(hi);
    ops_tensor_release(buf);
    ops_tensor_release(ex);
    ops_tensor_release(big);
    ops_tensor_release(four);
    ops_tensor_release(row);
    ops_tensor_release(dst);
}
END_TEST

START_TEST(test_to_clone_contiguous)
{
    ops_tensor *m = T1(OPS_FLOAT32, 0, 1, 2, 3, 4, 5);
    ops_tensor *same = ops_to_dtype(m, OPS_FLOAT32, false, false, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_eq(same, m);
    ops_tensor_release(same);
    ops_tensor *copied = ops_to_dtype(m, OPS_FLOAT32, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_ne(copied, m);
    ck_assert_ptr_ne(ops_tensor_data_ptr(copied), ops_tensor_data_ptr(m));
    EXPECT(copied, OPS_FLOAT32, 0, 1, 2, 3, 4, 5);
    ops_tensor_release(copied);

    /* a transposed [3, 2] view of [2, 3]: clone keeps its layout, contiguous does not */
    ops_tensor *t = ops_tensor_new_view(m, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
    ops_tensor *c = ops_clone(t, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(c->strides[0], 1);
    ck_assert_int_eq(c->strides[1], 3);
    EXPECT(c, OPS_FLOAT32, 0, 3, 1, 4, 2, 5);
    ops_tensor *k = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    ck_assert(ops_tensor_is_contiguous(k));
    EXPECT(k, OPS_FLOAT32, 0, 3, 1, 4, 2, 5);
    ops_tensor *k2 = ops_contiguous(k, OPS_CONTIGUOUS_FORMAT);
    ck_assert_ptr_eq(k2, k);
    /* a non-dense view clones to contiguous */
    ops_tensor *every = ops_tensor_new_view(m, 1, (int64_t[]){3}, (int64_t[]){2}, 0);
    ops_tensor *ce = ops_clone(every, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ce->strides[0], 1);
    EXPECT(ce, OPS_FLOAT32, 0, 2, 4);
    ops_tensor *d = ops_to_dtype(t, OPS_INT64, false, false, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(elem_i64(d, 1), 3);
    ops_tensor_release(d);
    ops_tensor_release(ce);
    ops_tensor_release(every);
    ops_tensor_release(k2);
    ops_tensor_release(k);
    ops_tensor_release(c);
    ops_tensor_release(t);
    ops_tensor_release(m);
}
END_TEST

static Suite *
iter_kernels_suite(void)
{
    Suite *s = suite_create("iter_kernels");
    TCase *tc = tcase_create("kernels");
    tcase_add_checked_fixture(tc, NULL, release_kept);
    tcase_add_test(tc, test_integer_wrap);
    tcase_add_test(tc, test_alpha_rules);
    tcase_add_test(tc, test_division);
    tcase_add_test(tc, test_remainder_fmod);
    tcase_add_test(tc, test_pow_max_min_atan2);
    tcase_add_test(tc, test_compare_logical_bitwise);
    tcase_add_test(tc, test_where);
    tcase_add_test(tc, test_clamp);
    tcase_add_test(tc, test_lerp_addc);
    tcase_add_test(tc, test_copy_conversions);
    tcase_add_test(tc, test_copy_rules);
    tcase_add_test(tc, test_to_clone_contiguous);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(iter_kernels_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

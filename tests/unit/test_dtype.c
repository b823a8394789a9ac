/* dtypes, promotion, result_type, devices and scalars.
 *
 * The oracles are written out by hand: the promotion table is PyTorch's documented
 * table (c10/core/ScalarType.cpp, torch.promote_types), the can_cast table follows
 * torch.can_cast, and the result_type cases are ones whose PyTorch answers are
 * known (torch.result_type). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"
#include "ops_scalar_math.h"

enum { b1 = OPS_BOOL, u1 = OPS_UINT8, i1 = OPS_INT8, i2 = OPS_INT16, i4 = OPS_INT32,
       i8 = OPS_INT64, f2 = OPS_FLOAT16, bf = OPS_BFLOAT16, f4 = OPS_FLOAT32, f8 = OPS_FLOAT64 };

/* torch.promote_types(row, col), rows and columns in our enum order. */
static const int promote_golden[OPS_NUM_DTYPES][OPS_NUM_DTYPES] = {
    /*          b1  u1  i1  i2  i4  i8  f2  bf  f4  f8 */
    /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
    /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
    /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
    /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
    /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
    /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
    /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
};

/* torch.can_cast(from = row, to = col). */
static const bool can_cast_golden[OPS_NUM_DTYPES][OPS_NUM_DTYPES] = {
    /*          b1 u1 i1 i2 i4 i8 f2 bf f4 f8 */
    /* b1 */ {1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* u1 */ {0, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* i1 */ {0, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* i2 */ {0, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* i4 */ {0, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* i8 */ {0, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* f2 */ {0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    /* bf */ {0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    /* f4 */ {0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    /* f8 */ {0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
};

START_TEST(test_promote_table)
{
    for (int a = 0; a < OPS_NUM_DTYPES; a++)
        for (int b = 0; b < OPS_NUM_DTYPES; b++)
            ck_assert_msg(ops_promote_types((ops_dtype)a, (ops_dtype)b) == (ops_dtype)promote_golden[a][b],
                          "promote_types(%s, %s) = %s, expected %s", ops_dtype_name((ops_dtype)a),
                          ops_dtype_name((ops_dtype)b), ops_dtype_name(ops_promote_types((ops_dtype)a, (ops_dtype)b)),
                          ops_dtype_name((ops_dtype)promote_golden[a][b]));
    ck_assert_int_eq(ops_promote_types(OPS_DTYPE_NONE, OPS_FLOAT32), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_promote_types(OPS_FLOAT32, OPS_NUM_DTYPES), OPS_DTYPE_NONE);
}
END_TEST

START_TEST(test_can_cast_table)
{
    for (int a = 0; a < OPS_NUM_DTYPES; a++)
        for (int b = 0; b < OPS_NUM_DTYPES; b++)
            ck_assert_msg(ops_can_cast((ops_dtype)a, (ops_dtype)b) == can_cast_golden[a][b],
                          "can_cast(%s, %s) should be %d", ops_dtype_name((ops_dtype)a), ops_dtype_name((ops_dtype)b),
                          can_cast_golden[a][b]);
    ck_assert(!ops_can_cast(OPS_DTYPE_NONE, OPS_FLOAT32));
}
END_TEST

START_TEST(test_names_and_sizes)
{
    static const struct {
        ops_dtype dt;
        const char *name;
        size_t size;
        bool floating, integral, integral_or_bool;
    } cases[] = {
        {OPS_BOOL, "bool", 1, false, false, true},        {OPS_UINT8, "uint8", 1, false, true, true},
        {OPS_INT8, "int8", 1, false, true, true},         {OPS_INT16, "int16", 2, false, true, true},
        {OPS_INT32, "int32", 4, false, true, true},       {OPS_INT64, "int64", 8, false, true, true},
        {OPS_FLOAT16, "float16", 2, true, false, false},  {OPS_BFLOAT16, "bfloat16", 2, true, false, false},
        {OPS_FLOAT32, "float32", 4, true, false, false},  {OPS_FLOAT64, "float64", 8, true, false, false},
    };
    ck_assert_int_eq(sizeof cases / sizeof cases[0], OPS_NUM_DTYPES);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_str_eq(ops_dtype_name(cases[i].dt), cases[i].name);
        ck_assert_uint_eq(ops_dtype_size(cases[i].dt), cases[i].size);
        ck_assert_int_eq(ops_dtype_is_floating(cases[i].dt), cases[i].floating);
        ck_assert_int_eq(ops_dtype_is_integral(cases[i].dt, false), cases[i].integral);
        ck_assert_int_eq(ops_dtype_is_integral(cases[i].dt, true), cases[i].integral_or_bool);
        ck_assert_int_eq(ops_dtype_from_name(cases[i].name), cases[i].dt);
    }
    ck_assert_str_eq(ops_dtype_name(OPS_DTYPE_NONE), "?");
    ck_assert_str_eq(ops_dtype_name((ops_dtype)99), "?");
    ck_assert_uint_eq(ops_dtype_size(OPS_DTYPE_NONE), 0);
    ck_assert_int_eq(ops_dtype_from_name("float"), OPS_FLOAT32);
    ck_assert_int_eq(ops_dtype_from_name("double"), OPS_FLOAT64);
    ck_assert_int_eq(ops_dtype_from_name("half"), OPS_FLOAT16);
    ck_assert_int_eq(ops_dtype_from_name("long"), OPS_INT64);
    ck_assert_int_eq(ops_dtype_from_name("complex64"), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_dtype_from_name("Float32"), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_dtype_from_name(""), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_dtype_from_name(NULL), OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_default_float_dtype(), OPS_FLOAT32);
}
END_TEST

/* ---- result_type ---------------------------------------------------------- */

static ops_tensor *
dims_tensor(ops_dtype dt)
{
    ops_tensor *t = ops_tensor_new("test", 1, (int64_t[]){2}, NULL, dt, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ops_tensor *
zero_dim_tensor(ops_dtype dt)
{
    ops_tensor *t = ops_tensor_new("test", 0, NULL, NULL, dt, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ops_dtype
rt2(const ops_tensor *a, const ops_tensor *b)
{
    const ops_tensor *ts[2] = {a, b};
    return ops_result_type(2, ts, 0, NULL);
}

static ops_dtype
rt_scalar(const ops_tensor *a, ops_scalar s)
{
    const ops_tensor *ts[1] = {a};
    const ops_scalar *ss[1] = {&s};
    return ops_result_type(1, ts, 1, ss);
}

START_TEST(test_result_type_scalars)
{
    ops_tensor *i32 = dims_tensor(OPS_INT32), *f16 = dims_tensor(OPS_FLOAT16), *i8t = dims_tensor(OPS_INT8);
    ops_tensor *bt = dims_tensor(OPS_BOOL), *u8 = dims_tensor(OPS_UINT8), *f64 = dims_tensor(OPS_FLOAT64);
    ck_assert_int_eq(rt_scalar(i32, OPS_SCALAR_FLOAT(2.5)), OPS_FLOAT32);
    ck_assert_int_eq(rt_scalar(f16, OPS_SCALAR_FLOAT(2.5)), OPS_FLOAT16);
    ck_assert_int_eq(rt_scalar(i8t, OPS_SCALAR_INT(1000)), OPS_INT8);
    ck_assert_int_eq(rt_scalar(bt, OPS_SCALAR_INT(3)), OPS_INT64);
    ck_assert_int_eq(rt_scalar(bt, OPS_SCALAR_FLOAT(3)), OPS_FLOAT32);
    ck_assert_int_eq(rt_scalar(bt, OPS_SCALAR_BOOL(true)), OPS_BOOL);
    ck_assert_int_eq(rt_scalar(u8, OPS_SCALAR_BOOL(true)), OPS_UINT8);
    ck_assert_int_eq(rt_scalar(f64, OPS_SCALAR_FLOAT(2.5)), OPS_FLOAT64);
    ck_assert_int_eq(rt_scalar(u8, OPS_SCALAR_INT(-5)), OPS_UINT8);

    /* The same through wrapped-number tensors, as the generated glue passes them. */
    ops_tensor *w_float = ops_wrap_scalar(OPS_SCALAR_FLOAT(2.5));
    ops_tensor *w_int = ops_wrap_scalar(OPS_SCALAR_INT(1000));
    ops_tensor *w_bool = ops_wrap_scalar(OPS_SCALAR_BOOL(false));
    ck_assert_int_eq(w_float->dtype, OPS_FLOAT64);
    ck_assert(w_float->flags & OPS_TENSOR_WRAPPED_NUMBER);
    ck_assert_int_eq(rt2(i32, w_float), OPS_FLOAT32);
    ck_assert_int_eq(rt2(f16, w_float), OPS_FLOAT16);
    ck_assert_int_eq(rt2(i8t, w_int), OPS_INT8);
    ck_assert_int_eq(rt2(bt, w_int), OPS_INT64);
    ck_assert_int_eq(rt2(bt, w_bool), OPS_BOOL);
    /* Two numbers alone: int + float -> the default float dtype. */
    ck_assert_int_eq(rt2(w_int, w_float), OPS_FLOAT32);
    ck_assert_int_eq(rt2(w_int, w_bool), OPS_INT64);

    ops_tensor *all[] = {i32, f16, i8t, bt, u8, f64, w_float, w_int, w_bool};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

START_TEST(test_result_type_tensors)
{
    ops_tensor *u8 = dims_tensor(OPS_UINT8), *i32 = dims_tensor(OPS_INT32), *f32 = dims_tensor(OPS_FLOAT32);
    ops_tensor *f64 = dims_tensor(OPS_FLOAT64), *f16 = dims_tensor(OPS_FLOAT16), *bt = dims_tensor(OPS_BOOL);
    ops_tensor *i8t = dims_tensor(OPS_INT8);
    ops_tensor *z_i64 = zero_dim_tensor(OPS_INT64), *z_f64 = zero_dim_tensor(OPS_FLOAT64);
    ops_tensor *z_f16 = zero_dim_tensor(OPS_FLOAT16), *z_i32 = zero_dim_tensor(OPS_INT32);
    ops_tensor *z_bool = zero_dim_tensor(OPS_BOOL);

    ck_assert_int_eq(rt2(u8, z_i64), OPS_UINT8);
    ck_assert_int_eq(rt2(i32, z_f64), OPS_FLOAT64);
    ck_assert_int_eq(rt2(f16, z_f64), OPS_FLOAT16);
    ck_assert_int_eq(rt2(f32, f64), OPS_FLOAT64);
    ck_assert_int_eq(rt2(u8, i8t), OPS_INT16);
    ck_assert_int_eq(rt2(bt, z_i32), OPS_INT32);
    ck_assert_int_eq(rt2(bt, z_bool), OPS_BOOL);
    ck_assert_int_eq(rt2(i32, z_bool), OPS_INT32);
    /* Only 0-dim tensors: ordinary promotion among them. */
    ck_assert_int_eq(rt2(z_i64, z_f16), OPS_FLOAT16);
    ck_assert_int_eq(rt2(z_i32, z_i64), OPS_INT64);
    /* 0-dim over wrapped numbers: float scalar raises an int 0-dim to float32. */
    ck_assert_int_eq(rt_scalar(z_i64, OPS_SCALAR_FLOAT(1.5)), OPS_FLOAT32);
    ck_assert_int_eq(rt_scalar(z_f16, OPS_SCALAR_FLOAT(1.5)), OPS_FLOAT16);
    /* The three groups together: dims int32, 0-dim float16, scalar float -> float16. */
    {
        const ops_tensor *ts[2] = {i32, z_f16};
        ops_scalar s = OPS_SCALAR_FLOAT(2.0);
        const ops_scalar *ss[1] = {&s};
        ck_assert_int_eq(ops_result_type(2, ts, 1, ss), OPS_FLOAT16);
    }
    /* NULL entries (None) are skipped; nothing at all gives none. */
    {
        const ops_tensor *ts[3] = {NULL, i32, NULL};
        const ops_scalar *ss[1] = {NULL};
        ck_assert_int_eq(ops_result_type(3, ts, 1, ss), OPS_INT32);
        ck_assert_int_eq(ops_result_type(0, NULL, 0, NULL), OPS_DTYPE_NONE);
    }

    ops_tensor *all[] = {u8, i32, f32, f64, f16, bt, i8t, z_i64, z_f64, z_f16, z_i32, z_bool};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

START_TEST(test_scalar_dtype)
{
    ck_assert_int_eq(ops_scalar_dtype(OPS_SCALAR_BOOL(true)), OPS_BOOL);
    ck_assert_int_eq(ops_scalar_dtype(OPS_SCALAR_INT(3)), OPS_INT64);
    ck_assert_int_eq(ops_scalar_dtype(OPS_SCALAR_FLOAT(3)), OPS_FLOAT64);
}
END_TEST

/* ---- devices ---------------------------------------------------------------- */

START_TEST(test_device_parse)
{
    ops_device d;
    ck_assert_int_eq(ops_device_parse("cpu", &d), OPS_OK);
    ck_assert_int_eq(d.type, OPS_CPU);
    ck_assert_int_eq(d.index, 0);
    ck_assert_int_eq(ops_device_parse("cpu:0", &d), OPS_OK);
    ck_assert_int_eq(d.type, OPS_CPU);
    ck_assert_int_eq(ops_device_parse("cuda", &d), OPS_OK);
    ck_assert_int_eq(d.type, OPS_CUDA);
    ck_assert_int_eq(d.index, 0);
    ck_assert_int_eq(ops_device_parse("cuda:3", &d), OPS_OK);
    ck_assert_int_eq(d.type, OPS_CUDA);
    ck_assert_int_eq(d.index, 3);
    ck_assert_int_eq(ops_device_parse("cuda:12", &d), OPS_OK);
    ck_assert_int_eq(d.index, 12);

    static const char *bad[] = {"gpu", "CUDA", " cpu", "cpu ", "cuda:", "cuda:-1", "cuda:+1", "cuda:1x",
                                "cuda:0x1", "cuda1", "cudaa", "", "cuda:99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ops_device keep = OPS_DEVICE_CUDA(7);
        ops_clear_error();
        ck_assert_msg(ops_device_parse(bad[i], &keep) == OPS_ERR_VALUE, "'%s' should not parse", bad[i]);
        ck_assert_int_eq(ops_last_status(), OPS_ERR_VALUE);
        ck_assert_ptr_nonnull(strstr(ops_last_error(), bad[i]));
        ck_assert_int_eq(keep.index, 7); /* untouched on failure */
    }
    ops_device_parse("gpu", &d);
    ck_assert_str_eq(ops_last_error(), "device: invalid device string 'gpu' (expected \"cpu\", \"cuda\" or \"cuda:N\")");
    ck_assert_int_eq(ops_device_parse("cpu:1", &d), OPS_ERR_VALUE);
    ck_assert_int_eq(ops_device_parse(NULL, &d), OPS_ERR_VALUE);
}
END_TEST

START_TEST(test_device_str_equal)
{
    char buf[32];
    ck_assert_str_eq(ops_device_str(OPS_DEVICE_CPU, buf, sizeof buf), "cpu");
    ck_assert_str_eq(ops_device_str(OPS_DEVICE_CUDA(0), buf, sizeof buf), "cuda:0");
    ck_assert_str_eq(ops_device_str(OPS_DEVICE_CUDA(11), buf, sizeof buf), "cuda:11");
    char small[4];
    ck_assert_str_eq(ops_device_str(OPS_DEVICE_CUDA(11), small, sizeof small), "cud");
    ck_assert(ops_device_equal(OPS_DEVICE_CPU, OPS_DEVICE_CPU));
    ck_assert(ops_device_equal(OPS_DEVICE_CUDA(1), OPS_DEVICE_CUDA(1)));
    ck_assert(!ops_device_equal(OPS_DEVICE_CUDA(0), OPS_DEVICE_CUDA(1)));
    ck_assert(!ops_device_equal(OPS_DEVICE_CPU, OPS_DEVICE_CUDA(0)));
    ck_assert(!ops_device_equal(OPS_DEVICE_CPU, OPS_DEVICE_UNSPECIFIED));
}
END_TEST

/* ---- scalars ------------------------------------------------------------------ */

START_TEST(test_scalar_conversions)
{
    ck_assert_double_eq(ops_scalar_to_double(OPS_SCALAR_BOOL(true)), 1.0);
    ck_assert_double_eq(ops_scalar_to_double(OPS_SCALAR_INT(-7)), -7.0);
    ck_assert_double_eq(ops_scalar_to_double(OPS_SCALAR_FLOAT(2.25)), 2.25);
    ck_assert_int_eq(ops_scalar_to_int64(OPS_SCALAR_BOOL(false)), 0);
    ck_assert_int_eq(ops_scalar_to_int64(OPS_SCALAR_INT(INT64_MIN)), INT64_MIN);
    ck_assert_int_eq(ops_scalar_to_int64(OPS_SCALAR_FLOAT(2.9)), 2);
    ck_assert_int_eq(ops_scalar_to_int64(OPS_SCALAR_FLOAT(-2.9)), -2);
    ck_assert_int_eq(ops_scalar_to_int64(OPS_SCALAR_FLOAT(1e300)), INT64_MAX);
    ck_assert_int_eq(ops_scalar_to_int64(OPS_SCALAR_FLOAT(-1e300)), INT64_MIN);
    ck_assert_int_eq(ops_scalar_to_int64(OPS_SCALAR_FLOAT(NAN)), 0);
}
END_TEST

START_TEST(test_scalar_store_load)
{
    unsigned char buf[8];
    ops_scalar_store(OPS_SCALAR_INT(300), OPS_UINT8, buf);
    ck_assert_uint_eq(buf[0], 44); /* 300 - 256 */
    ops_scalar_store(OPS_SCALAR_INT(-1), OPS_UINT8, buf);
    ck_assert_uint_eq(buf[0], 255);
    ops_scalar_store(OPS_SCALAR_INT(200), OPS_INT8, buf);
    ck_assert_int_eq(ops_scalar_load(buf, OPS_INT8).v.i, -56);
    ops_scalar_store(OPS_SCALAR_INT(70000), OPS_INT16, buf);
    ck_assert_int_eq(ops_scalar_load(buf, OPS_INT16).v.i, 4464); /* 70000 - 65536 */
    ops_scalar_store(OPS_SCALAR_FLOAT(-2.7), OPS_INT32, buf);
    ck_assert_int_eq(ops_scalar_load(buf, OPS_INT32).v.i, -2);
    ops_scalar_store(OPS_SCALAR_FLOAT(1e30), OPS_INT64, buf);
    ck_assert_int_eq(ops_scalar_load(buf, OPS_INT64).v.i, INT64_MAX);
    ops_scalar_store(OPS_SCALAR_FLOAT(0.5), OPS_BOOL, buf);
    ck_assert_int_eq(ops_scalar_load(buf, OPS_BOOL).kind, OPS_SCALAR_BOOL);
    ck_assert(ops_scalar_load(buf, OPS_BOOL).v.b);
    ops_scalar_store(OPS_SCALAR_INT(0), OPS_BOOL, buf);
    ck_assert(!ops_scalar_load(buf, OPS_BOOL).v.b);
    ops_scalar_store(OPS_SCALAR_BOOL(true), OPS_FLOAT32, buf);
    ck_assert_double_eq(ops_scalar_load(buf, OPS_FLOAT32).v.f, 1.0);

    /* Half and bfloat16 bit patterns from the IEEE / bfloat16 definitions. */
    uint16_t bits;
    ops_scalar_store(OPS_SCALAR_FLOAT(1.0), OPS_FLOAT16, &bits);
    ck_assert_uint_eq(bits, 0x3C00);
    ops_scalar_store(OPS_SCALAR_FLOAT(0.1), OPS_FLOAT16, &bits);
    ck_assert_uint_eq(bits, 0x2E66);
    ops_scalar_store(OPS_SCALAR_INT(-2), OPS_FLOAT16, &bits);
    ck_assert_uint_eq(bits, 0xC000);
    ops_scalar_store(OPS_SCALAR_FLOAT(1.0), OPS_BFLOAT16, &bits);
    ck_assert_uint_eq(bits, 0x3F80);
    ops_scalar_store(OPS_SCALAR_FLOAT(0.1), OPS_BFLOAT16, &bits);
    ck_assert_uint_eq(bits, 0x3DCD);
    bits = 0x3555; /* 0.333251953125 in half */
    ck_assert_double_eq(ops_scalar_load(&bits, OPS_FLOAT16).v.f, 0.333251953125);
    bits = 0x4049; /* 3.140625 in bfloat16 */
    ck_assert_double_eq(ops_scalar_load(&bits, OPS_BFLOAT16).v.f, 3.140625);

    double d = 0;
    ops_scalar_store(OPS_SCALAR_INT(INT64_C(9007199254740993)), OPS_FLOAT64, &d);
    ck_assert_double_eq(d, 9007199254740992.0); /* 2^53 + 1 rounds to even */
    int64_t big = 0;
    ops_scalar_store(OPS_SCALAR_INT(INT64_C(9007199254740993)), OPS_INT64, &big);
    ck_assert_int_eq(big, INT64_C(9007199254740993));
    ck_assert_int_eq(ops_scalar_load(&big, OPS_INT64).kind, OPS_SCALAR_INT);
}
END_TEST

static Suite *
dtype_suite(void)
{
    Suite *s = suite_create("dtype");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_promote_table);
    tcase_add_test(tc, test_can_cast_table);
    tcase_add_test(tc, test_names_and_sizes);
    tcase_add_test(tc, test_result_type_scalars);
    tcase_add_test(tc, test_result_type_tensors);
    tcase_add_test(tc, test_scalar_dtype);
    tcase_add_test(tc, test_device_parse);
    tcase_add_test(tc, test_device_str_equal);
    tcase_add_test(tc, test_scalar_conversions);
    tcase_add_test(tc, test_scalar_store_load);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(dtype_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

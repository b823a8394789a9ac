/* Helpers shared by test_iter.c (the tensor iterator) and test_iter_kernels.c (the
 * binary/ternary/copy CPU kernels through it): tensors from C values, reading elements
 * through strides, expected values and errors.  Each test program includes it once. */
#ifndef TEST_ITER_UTIL_H
#define TEST_ITER_UTIL_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_cuda.h"
#include "ops_dispatch.h"

#define SENTINEL (-12345.0f)

/* ---- helpers -------------------------------------------------------------------- */

static inline ops_tensor *
new_f32(int ndim, const int64_t *sizes)
{
    ops_tensor *t = ops_tensor_new("test", ndim, sizes, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* A contiguous tensor of dtype dt holding the given values (converted by C). */
static inline ops_tensor *
from_doubles(ops_dtype dt, int ndim, const int64_t *sizes, const double *v)
{
    ops_tensor *t = ops_tensor_new("test", ndim, sizes, NULL, dt, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    const int64_t n = ops_tensor_numel(t);
    char *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case OPS_BOOL:
            ((bool *)p)[i] = v[i] != 0;
            break;
        case OPS_UINT8:
            ((uint8_t *)p)[i] = (uint8_t)v[i];
            break;
        case OPS_INT8:
            ((int8_t *)p)[i] = (int8_t)v[i];
            break;
        case OPS_INT16:
            ((int16_t *)p)[i] = (int16_t)v[i];
            break;
        case OPS_INT32:
            ((int32_t *)p)[i] = (int32_t)v[i];
            break;
        case OPS_INT64:
            ((int64_t *)p)[i] = (int64_t)v[i];
            break;
        case OPS_FLOAT32:
            ((float *)p)[i] = (float)v[i];
            break;
        case OPS_FLOAT64:
            ((double *)p)[i] = v[i];
            break;
        default:
            ck_abort_msg("from_doubles: unsupported dtype");
        }
    }
    return t;
}

#define T1(dt, ...)                                                                      \
    from_doubles(dt, 1, (int64_t[]){sizeof((double[]){__VA_ARGS__}) / sizeof(double)},  \
                 (double[]){__VA_ARGS__})

/* Tensors made inside a call's arguments: released by the test case's teardown. */
static ops_tensor *kept[64];
static int nkept;

static inline ops_tensor *
keep(ops_tensor *t)
{
    ck_assert_int_lt(nkept, 64);
    kept[nkept++] = t;
    return t;
}

static inline void
release_kept(void)
{
    while (nkept > 0)
        ops_tensor_release(kept[--nkept]);
}

#define TMP(dt, ...) keep(T1(dt, __VA_ARGS__))

/* Element lin (row-major over t's shape) as a double, read through t's strides. */
static inline double
elem(const ops_tensor *t, int64_t lin)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        const int64_t i = lin % t->sizes[d];
        lin /= t->sizes[d];
        off += i * t->strides[d];
    }
    const char *p = (const char *)t->storage->data + (t->offset + off) * (int64_t)ops_dtype_size(t->dtype);
    switch (t->dtype) {
    case OPS_BOOL:
        return *(const bool *)p;
    case OPS_UINT8:
        return *(const uint8_t *)p;
    case OPS_INT8:
        return *(const int8_t *)p;
    case OPS_INT16:
        return *(const int16_t *)p;
    case OPS_INT32:
        return *(const int32_t *)p;
    case OPS_INT64:
        return (double)*(const int64_t *)p;
    case OPS_FLOAT32:
        return *(const float *)p;
    case OPS_FLOAT64:
        return *(const double *)p;
    case OPS_FLOAT16:
        return ops_half_to_float(*(const ops_half *)p);
    case OPS_BFLOAT16:
        return ops_bfloat16_to_float(*(const ops_bfloat16 *)p);
    default:
        break;
    }
    ck_abort_msg("elem: bad dtype");
    return 0;
}

static inline int64_t
elem_i64(const ops_tensor *t, int64_t lin)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        const int64_t i = lin % t->sizes[d];
        lin /= t->sizes[d];
        off += i * t->strides[d];
    }
    ck_assert_int_eq(t->dtype, OPS_INT64);
    return ((const int64_t *)t->storage->data)[t->offset + off];
}

static inline void
expect_values(const ops_tensor *t, ops_dtype dt, int64_t n, const double *want)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->dtype, dt);
    ck_assert_int_eq(ops_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++) {
        const double got = elem(t, i);
        if (isnan(want[i]))
            ck_assert_msg(isnan(got), "element %lld: got %g, want nan", (long long)i, got);
        else
            ck_assert_msg(got == want[i], "element %lld: got %.17g, want %.17g", (long long)i, got, want[i]);
    }
}

#define EXPECT(t, dt, ...)                                                               \
    expect_values((t), (dt), sizeof((double[]){__VA_ARGS__}) / sizeof(double), (double[]){__VA_ARGS__})

static inline void
expect_error(ops_status st, ops_status want, const char *fragment)
{
    ck_assert_int_eq(st, want);
    ck_assert_msg(strstr(ops_last_error(), fragment) != NULL, "error \"%s\" lacks \"%s\"", ops_last_error(),
                  fragment);
}

static inline void
fill_sentinel(ops_tensor *buf)
{
    float *p = ops_tensor_data_ptr(buf);
    for (int64_t i = 0; i < ops_tensor_numel(buf); i++)
        p[i] = SENTINEL;
}


#endif

/* The tensor iterator and the binary/ternary/copy CPU kernels.
 *
 * Oracles: plain C loops over the raw buffers (the stride sweeps compute the
 * expected element from the buffer, offset and stride with their own arithmetic),
 * hand-derived values for the kernels' edge cases (integer division, shifts,
 * rounding), and invariants (an op that fails leaves its out= byte-for-byte as it
 * was; a view's gaps keep their sentinels). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libops.h"
#include "ops_dispatch.h"

#define SENTINEL (-12345.0f)

/* ---- helpers -------------------------------------------------------------------- */

static ops_tensor *
new_f32(int ndim, const int64_t *sizes)
{
    ops_tensor *t = ops_tensor_new("test", ndim, sizes, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* A contiguous tensor of dtype dt holding the given values (converted by C). */
static ops_tensor *
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

static ops_tensor *
keep(ops_tensor *t)
{
    ck_assert_int_lt(nkept, 64);
    kept[nkept++] = t;
    return t;
}

static void
release_kept(void)
{
    while (nkept > 0)
        ops_tensor_release(kept[--nkept]);
}

#define TMP(dt, ...) keep(T1(dt, __VA_ARGS__))

/* Element lin (row-major over t's shape) as a double, read through t's strides. */
static double
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

static int64_t
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

static void
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

static void
expect_error(ops_status st, ops_status want, const char *fragment)
{
    ck_assert_int_eq(st, want);
    ck_assert_msg(strstr(ops_last_error(), fragment) != NULL, "error \"%s\" lacks \"%s\"", ops_last_error(),
                  fragment);
}

static void
fill_sentinel(ops_tensor *buf)
{
    float *p = ops_tensor_data_ptr(buf);
    for (int64_t i = 0; i < ops_tensor_numel(buf); i++)
        p[i] = SENTINEL;
}

/* ---- stride sweeps ---------------------------------------------------------------- */

static const int64_t sweep_strides[] = {-4, -3, -2, -1, 1, 2, 3, 4};
#define NSTRIDES ((int)(sizeof sweep_strides / sizeof sweep_strides[0]))

/* A 1-D view of n elements with stride s over a fresh buffer filled with a pattern
 * (base + index / 8), starting at a non-zero offset; *buf gets the buffer. */
static ops_tensor *
strided_view(int64_t n, int64_t s, float base, ops_tensor **buf, int64_t *offset)
{
    const int64_t as = s < 0 ? -s : s;
    const int64_t len = (n - 1) * as + 3;
    *buf = new_f32(1, (int64_t[]){len});
    float *p = ops_tensor_data_ptr(*buf);
    for (int64_t i = 0; i < len; i++)
        p[i] = base + (float)i / 8.0f;
    *offset = s < 0 ? 1 + (n - 1) * as : 1;
    ops_tensor *v = ops_tensor_new_view(*buf, 1, (int64_t[]){n}, (int64_t[]){s}, *offset);
    ck_assert_ptr_nonnull(v);
    return v;
}

/* y = 2 * x + 1 through ops_meta_unary and OPS_UNARY_KERNEL. */
static ops_tensor *
iter_affine(const ops_tensor *x)
{
    const ops_meta_args a = {.op = "affine", .mode = OPS_ITER_FUNCTIONAL, .ntensors = 1, .tensors = {x},
                             .names = {"self"}};
    ops_iter it;
    ops_status st = ops_meta_unary(&it, &a);
    ck_assert_int_eq(st, OPS_OK);
    OPS_UNARY_KERNEL(&it, float, float, 2.0f * x + 1.0f);
    ck_assert_int_eq(ops_iter_finish(&it), OPS_OK);
    ops_tensor *r = ops_iter_take_result(&it);
    ops_iter_release(&it);
    return r;
}

START_TEST(test_stride_sweep_1d)
{
    for (int si = 0; si < NSTRIDES; si++) {
        for (int64_t n = 2; n <= 99; n++) {
            const int64_t sa = sweep_strides[si];
            const int64_t sb = sweep_strides[(si + 3) % NSTRIDES];
            const int64_t so = sweep_strides[(si + 5) % NSTRIDES];
            ops_tensor *ba, *bb, *bo;
            int64_t oa, ob, oo;
            ops_tensor *a = strided_view(n, sa, 1.0f, &ba, &oa);
            ops_tensor *b = strided_view(n, sb, 100.0f, &bb, &ob);
            ops_tensor *o = strided_view(n, so, 0.0f, &bo, &oo);
            fill_sentinel(bo);
            const float *pa = ops_tensor_data_ptr(ba), *pb = ops_tensor_data_ptr(bb);
            const float *po = ops_tensor_data_ptr(bo);

            /* out= into a strided view: values, and the gaps keep their sentinels */
            ck_assert_int_eq(ops_add_out(a, b, OPS_SCALAR_INT(2), o), OPS_OK);
            for (int64_t i = 0; i < ops_tensor_numel(bo); i++) {
                const int64_t rel = i - oo;
                const bool hit = so > 0 ? rel >= 0 && rel % so == 0 && rel / so < n
                                        : rel <= 0 && (-rel) % (-so) == 0 && rel / so < n;
                if (hit) {
                    const int64_t k = rel / so;
                    const float want = pa[oa + k * sa] + 2.0f * pb[ob + k * sb];
                    ck_assert_msg(po[i] == want, "n=%lld s=%lld,%lld,%lld k=%lld: %g != %g", (long long)n,
                                  (long long)sa, (long long)sb, (long long)so, (long long)k, po[i], want);
                } else {
                    ck_assert_msg(po[i] == SENTINEL, "gap %lld overwritten", (long long)i);
                }
            }

            /* functional add, and a unary op through the iterator */
            ops_tensor *r = ops_add(a, b, OPS_SCALAR_INT(1));
            ops_tensor *u = iter_affine(a);
            ck_assert_ptr_nonnull(r);
            ck_assert_ptr_nonnull(u);
            for (int64_t k = 0; k < n; k++) {
                ck_assert(elem(r, k) == pa[oa + k * sa] + pb[ob + k * sb]);
                ck_assert(elem(u, k) == 2.0f * pa[oa + k * sa] + 1.0f);
            }
            ops_tensor_release(r);
            ops_tensor_release(u);
            ops_tensor_release(a);
            ops_tensor_release(b);
            ops_tensor_release(o);
            ops_tensor_release(ba);
            ops_tensor_release(bb);
            ops_tensor_release(bo);
        }
    }
}
END_TEST

/* 2-D views: inner stride from the sweep, outer stride either past the inner
 * extent (row-major, with a gap) or inside it (column-major), either sign. */
START_TEST(test_stride_sweep_2d)
{
    const int64_t rows[] = {1, 2, 3, 7};
    for (int si = 0; si < NSTRIDES; si++) {
        for (int ri = 0; ri < 4; ri++) {
            for (int64_t n = 2; n <= 99; n += 7) {
                const int64_t r = rows[ri], s = sweep_strides[si], as = s < 0 ? -s : s;
                for (int layout = 0; layout < 4; layout++) {
                    /* layout 0/1: rows outside (stride +-(n*|s|+1)); 2/3: columns outside */
                    int64_t st[2];
                    const int64_t row_extent = (n - 1) * as + 1;
                    if (layout < 2) {
                        st[1] = s;
                        st[0] = (layout == 0 ? 1 : -1) * (row_extent + 1);
                    } else {
                        st[0] = s;                                   /* along rows: small */
                        st[1] = (layout == 2 ? 1 : -1) * (r * as + 1); /* along columns: large */
                    }
                    int64_t lo = 0, hi = 0;
                    const int64_t sz[2] = {r, n};
                    for (int d = 0; d < 2; d++) {
                        const int64_t span = (sz[d] - 1) * st[d];
                        if (span < 0)
                            lo += span;
                        else
                            hi += span;
                    }
                    const int64_t len = hi - lo + 1, off = -lo;
                    ops_tensor *ba = new_f32(1, (int64_t[]){len});
                    float *pa = ops_tensor_data_ptr(ba);
                    for (int64_t i = 0; i < len; i++)
                        pa[i] = (float)(i % 1000) * 0.5f;
                    ops_tensor *a = ops_tensor_new_view(ba, 2, sz, st, off);
                    /* b: contiguous [n] broadcast along rows */
                    ops_tensor *b = new_f32(1, (int64_t[]){n});
                    float *pb = ops_tensor_data_ptr(b);
                    for (int64_t j = 0; j < n; j++)
                        pb[j] = 1000.0f + (float)j;
                    ops_tensor *res = ops_add(a, b, OPS_SCALAR_INT(1));
                    ops_tensor *u = iter_affine(a);
                    ck_assert_ptr_nonnull(res);
                    for (int64_t i = 0; i < r; i++) {
                        for (int64_t j = 0; j < n; j++) {
                            const float x = pa[off + i * st[0] + j * st[1]];
                            ck_assert(elem(res, i * n + j) == x + pb[j]);
                            ck_assert(elem(u, i * n + j) == 2.0f * x + 1.0f);
                        }
                    }
                    ops_tensor_release(res);
                    ops_tensor_release(u);
                    ops_tensor_release(a);
                    ops_tensor_release(b);
                    ops_tensor_release(ba);
                }
            }
        }
    }
}
END_TEST

/* Above the grain size the loop splits across threads: same values, every stride. */
START_TEST(test_threads)
{
    ops_set_num_threads(4);
    const int64_t n = 3 * OPS_GRAIN_SIZE + 17;
    for (int si = 0; si < NSTRIDES; si++) {
        ops_tensor *ba, *bb;
        int64_t oa, ob;
        ops_tensor *a = strided_view(n, sweep_strides[si], 0.0f, &ba, &oa);
        ops_tensor *b = strided_view(n, sweep_strides[(si + 1) % NSTRIDES], 5.0f, &bb, &ob);
        const float *pa = ops_tensor_data_ptr(ba), *pb = ops_tensor_data_ptr(bb);
        ops_tensor *r = ops_mul(a, b);
        ck_assert_ptr_nonnull(r);
        for (int64_t k = 0; k < n; k++)
            ck_assert(elem(r, k) == pa[oa + k * sweep_strides[si]] * pb[ob + k * sweep_strides[(si + 1) % NSTRIDES]]);
        /* a copy across threads, converting */
        ops_tensor *d = ops_to_dtype(a, OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE);
        ck_assert_ptr_nonnull(d);
        for (int64_t k = 0; k < n; k++)
            ck_assert(elem(d, k) == (double)pa[oa + k * sweep_strides[si]]);
        ops_tensor_release(d);
        ops_tensor_release(r);
        ops_tensor_release(a);
        ops_tensor_release(b);
        ops_tensor_release(ba);
        ops_tensor_release(bb);
    }
    ops_set_num_threads(0);
}
END_TEST

/* ---- broadcasting, 0-size, 0-dim ----------------------------------------------- */

START_TEST(test_broadcast_shapes)
{
    /* [2, 1, 3] + [4, 1] -> [2, 4, 3] */
    double va[6], vb[4];
    for (int i = 0; i < 6; i++)
        va[i] = i;
    for (int i = 0; i < 4; i++)
        vb[i] = 10 * (i + 1);
    ops_tensor *a = from_doubles(OPS_FLOAT32, 3, (int64_t[]){2, 1, 3}, va);
    ops_tensor *b = from_doubles(OPS_FLOAT32, 2, (int64_t[]){4, 1}, vb);
    ops_tensor *r = ops_add(a, b, OPS_SCALAR_INT(1));
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->ndim, 3);
    ck_assert_int_eq(r->sizes[0], 2);
    ck_assert_int_eq(r->sizes[1], 4);
    ck_assert_int_eq(r->sizes[2], 3);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++)
                ck_assert(elem(r, (i * 4 + j) * 3 + k) == va[i * 3 + k] + vb[j]);
    ops_tensor_release(r);

    /* mismatch names the arguments and the dim */
    ops_tensor *c = from_doubles(OPS_FLOAT32, 1, (int64_t[]){4}, vb);
    ck_assert_ptr_null(ops_add(a, c, OPS_SCALAR_INT(1)));
    expect_error(ops_last_status(), OPS_ERR_SHAPE, "add: the size of self (3) must match the size of other (4)");

    /* three inputs: the failing pair is named */
    ops_tensor *w = from_doubles(OPS_FLOAT32, 1, (int64_t[]){4}, vb);
    ops_tensor *e = ops_tensor_new("test", 2, (int64_t[]){4, 3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_null(ops_lerp(e, e, w));
    expect_error(ops_last_status(), OPS_ERR_SHAPE, "the size of self (3) must match the size of weight (4)");
    ops_tensor_release(w);
    ops_tensor_release(e);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
}
END_TEST

START_TEST(test_zero_size)
{
    ops_tensor *a = ops_tensor_new("test", 2, (int64_t[]){0, 3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *b = T1(OPS_FLOAT32, 1, 2, 3);
    ops_tensor *r = ops_add(a, b, OPS_SCALAR_INT(1));
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->ndim, 2);
    ck_assert_int_eq(r->sizes[0], 0);
    ck_assert_int_eq(r->sizes[1], 3);
    ck_assert_int_eq(ops_add_(a, b, OPS_SCALAR_INT(1)), OPS_OK);
    ck_assert_int_eq(ops_mul_out(a, b, r), OPS_OK);

    const ops_meta_args args = {.op = "add", .mode = OPS_ITER_FUNCTIONAL, .ntensors = 2, .tensors = {a, b},
                                .names = {"self", "other"}};
    ops_iter it;
    ck_assert_int_eq(ops_meta_binary(&it, &args), OPS_OK);
    ck_assert_int_eq(it.numel, 0);
    ops_iter_release(&it);
    ops_iter_release(&it); /* twice is fine */
    ops_tensor_release(r);
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_zero_dim)
{
    ops_tensor *x = ops_scalar_tensor(OPS_SCALAR_FLOAT(1.5), OPS_FLOAT32);
    ops_tensor *y = ops_scalar_tensor(OPS_SCALAR_FLOAT(2.0), OPS_FLOAT32);
    ops_tensor *r = ops_mul(x, y);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->ndim, 0);
    EXPECT(r, OPS_FLOAT32, 3.0);
    ops_tensor *v = T1(OPS_FLOAT32, 1, 2, 3);
    ops_tensor *r2 = ops_sub(v, x, OPS_SCALAR_INT(2));
    ck_assert_int_eq(r2->ndim, 1);
    EXPECT(r2, OPS_FLOAT32, -2, -1, 0);
    /* a 0-dim out for 0-dim inputs */
    ops_tensor *o = ops_scalar_tensor(OPS_SCALAR_FLOAT(0), OPS_FLOAT64);
    ck_assert_int_eq(ops_add_out(x, y, OPS_SCALAR_INT(1), o), OPS_OK);
    EXPECT(o, OPS_FLOAT64, 3.5);
    ops_tensor_release(o);
    ops_tensor_release(r);
    ops_tensor_release(r2);
    ops_tensor_release(v);
    ops_tensor_release(x);
    ops_tensor_release(y);
}
END_TEST

/* ---- out= and in-place rules ----------------------------------------------------- */

START_TEST(test_out_resize_empty)
{
    ops_tensor *a = T1(OPS_FLOAT32, 1, 2, 3, 4, 5, 6);
    ops_tensor *b = T1(OPS_FLOAT32, 10, 20, 30, 40, 50, 60);
    ops_tensor *out = ops_tensor_new("test", 1, (int64_t[]){0}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    const uint64_t v0 = ops_tensor_version(out);
    ck_assert_int_eq(ops_add_out(a, b, OPS_SCALAR_INT(1), out), OPS_OK);
    ck_assert_int_eq(out->ndim, 1);
    ck_assert_int_eq(out->sizes[0], 6);
    EXPECT(out, OPS_FLOAT32, 11, 22, 33, 44, 55, 66);
    ck_assert_uint_gt(ops_tensor_version(out), v0);
    /* empty out of another dtype: resized, then written back converted */
    ops_tensor *o64 = ops_tensor_new("test", 2, (int64_t[]){0, 5}, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_mul_out(a, b, o64), OPS_OK);
    EXPECT(o64, OPS_FLOAT64, 10, 40, 90, 160, 250, 360);
    ops_tensor_release(o64);
    /* a kernel that fails leaves an empty out= empty */
    ops_tensor *ia = T1(OPS_INT64, 1, 2);
    ops_tensor *iz = T1(OPS_INT64, 1, 0);
    ops_tensor *e = ops_tensor_new("test", 1, (int64_t[]){0}, NULL, OPS_INT64, OPS_DEVICE_CPU);
    expect_error(ops_add_out(ia, ia, OPS_SCALAR_FLOAT(0.5), e), OPS_ERR_VALUE, "alpha");
    ck_assert_int_eq(e->sizes[0], 0);
    expect_error(ops_remainder_out(ia, iz, e), OPS_ERR_RUNTIME, "ZeroDivisionError");
    ck_assert_int_eq(e->sizes[0], 0);
    ck_assert_int_eq(ops_remainder_out(ia, ia, e), OPS_OK);
    EXPECT(e, OPS_INT64, 0, 0);
    ops_tensor_release(e);
    ops_tensor_release(ia);
    ops_tensor_release(iz);
    ops_tensor_release(out);
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

START_TEST(test_out_wrong_shape)
{
    ops_tensor *a = T1(OPS_FLOAT32, 1, 2, 3);
    ops_tensor *out = T1(OPS_FLOAT32, 7, 8, 9, 10);
    unsigned char before[16];
    memcpy(before, ops_tensor_data_ptr(out), 16);
    const uint64_t v0 = ops_tensor_version(out);
    expect_error(ops_add_out(a, a, OPS_SCALAR_INT(1), out), OPS_ERR_SHAPE, "[4]");
    ck_assert_msg(strstr(ops_last_error(), "[3]") != NULL, "%s", ops_last_error());
    ck_assert_int_eq(memcmp(before, ops_tensor_data_ptr(out), 16), 0);
    ck_assert_int_eq(out->sizes[0], 4);
    ck_assert_uint_eq(ops_tensor_version(out), v0);
    ops_tensor_release(a);
    ops_tensor_release(out);
}
END_TEST

START_TEST(test_out_internal_overlap)
{
    ops_tensor *a = T1(OPS_FLOAT32, 1, 2, 3);
    ops_tensor *base = T1(OPS_FLOAT32, 5, 6, 7);
    /* [2, 3] whose rows are the same memory */
    ops_tensor *out = ops_tensor_new_view(base, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1}, 0);
    ops_tensor *a2 = ops_tensor_new("test", 2, (int64_t[]){2, 3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    memset(ops_tensor_data_ptr(a2), 0, 24);
    expect_error(ops_add_out(a2, a, OPS_SCALAR_INT(1), out), OPS_ERR_VALUE, "more than one element");
    EXPECT(base, OPS_FLOAT32, 5, 6, 7);
    /* in-place on an expanded self: the same */
    expect_error(ops_add_(out, a, OPS_SCALAR_INT(1)), OPS_ERR_VALUE, "more than one element");
    EXPECT(base, OPS_FLOAT32, 5, 6, 7);
    ops_tensor_release(out);
    ops_tensor_release(a2);
    ops_tensor_release(a);
    ops_tensor_release(base);
}
END_TEST

START_TEST(test_out_partial_overlap)
{
    ops_tensor *buf = T1(OPS_FLOAT32, 0, 1, 2, 3, 4, 5);
    ops_tensor *in = ops_tensor_new_view(buf, 1, (int64_t[]){5}, (int64_t[]){1}, 0);
    ops_tensor *out = ops_tensor_new_view(buf, 1, (int64_t[]){5}, (int64_t[]){1}, 1);
    ops_tensor *one = T1(OPS_FLOAT32, 1, 1, 1, 1, 1);
    expect_error(ops_add_out(in, one, OPS_SCALAR_INT(1), out), OPS_ERR_VALUE, "some elements of the input");
    EXPECT(buf, OPS_FLOAT32, 0, 1, 2, 3, 4, 5);
    /* in-place with a shifted view of self as other: also partial */
    expect_error(ops_add_(out, in, OPS_SCALAR_INT(1)), OPS_ERR_VALUE, "some elements of the input");
    EXPECT(buf, OPS_FLOAT32, 0, 1, 2, 3, 4, 5);
    /* exactly the same view is fine, as out= and in-place */
    ck_assert_int_eq(ops_add_out(in, one, OPS_SCALAR_INT(1), in), OPS_OK);
    EXPECT(buf, OPS_FLOAT32, 1, 2, 3, 4, 5, 5);
    ck_assert_int_eq(ops_mul_(in, in), OPS_OK);
    EXPECT(buf, OPS_FLOAT32, 1, 4, 9, 16, 25, 5);
    /* a view of the same storage that does not overlap is fine */
    ops_tensor *lo = ops_tensor_new_view(buf, 1, (int64_t[]){3}, (int64_t[]){1}, 0);
    ops_tensor *hi = ops_tensor_new_view(buf, 1, (int64_t[]){3}, (int64_t[]){1}, 3);
    ck_assert_int_eq(ops_add_out(lo, lo, OPS_SCALAR_INT(1), hi), OPS_OK);
    EXPECT(buf, OPS_FLOAT32, 1, 4, 9, 2, 8, 18);
    ops_tensor_release(lo);
    ops_tensor_release(hi);
    ops_tensor_release(in);
    ops_tensor_release(out);
    ops_tensor_release(one);
    ops_tensor_release(buf);
}
END_TEST

/* The out= rules of an entry's `out_checks:` (ops_check_out_args, run by the glue
 * before any kernel): gather may not write into self, may be index itself but not a
 * shifted view of it, and must have self's dtype; every refusal leaves out untouched. */
START_TEST(test_out_checks_index_family)
{
    ops_tensor *buf = T1(OPS_INT64, 0, 1, 1, 0, 0, 1);
    ops_tensor *self = ops_tensor_new_view(buf, 1, (int64_t[]){4}, (int64_t[]){1}, 0);
    ops_tensor *idx = ops_tensor_new_view(buf, 1, (int64_t[]){2}, (int64_t[]){1}, 0);
    ops_tensor *tail = ops_tensor_new_view(buf, 1, (int64_t[]){2}, (int64_t[]){1}, 1);
    ops_tensor *src = T1(OPS_INT64, 10, 11, 12, 13);
    expect_error(ops_gather_out(src, 0, idx, false, tail), OPS_ERR_VALUE,
                 "gather: unsupported operation: out= partially overlaps argument 'index'");
    EXPECT(buf, OPS_INT64, 0, 1, 1, 0, 0, 1);
    expect_error(ops_gather_out(self, 0, idx, false, self), OPS_ERR_VALUE,
                 "gather: unsupported operation: out= overlaps argument 'self'");
    EXPECT(buf, OPS_INT64, 0, 1, 1, 0, 0, 1);
    expect_error(ops_take_out(src, idx, idx), OPS_ERR_VALUE,
                 "take: unsupported operation: out= overlaps argument 'index'");
    ops_tensor *zero = T1(OPS_INT64, 0);
    expect_error(ops_index_select_out(self, 0, zero, tail), OPS_ERR_VALUE,
                 "index_select: unsupported operation: out= overlaps argument 'self'");
    EXPECT(buf, OPS_INT64, 0, 1, 1, 0, 0, 1);
    ops_tensor_release(zero);
    ops_tensor *f = T1(OPS_FLOAT32, 7, 7);
    expect_error(ops_gather_out(src, 0, idx, false, f), OPS_ERR_DTYPE,
                 "gather: expected out= to have dtype int64 (the dtype of argument 'self'), got float32");
    EXPECT(f, OPS_FLOAT32, 7, 7);
    /* out= index itself: each index is read before its element is written */
    ck_assert_int_eq(ops_gather_out(src, 0, idx, false, idx), OPS_OK);
    EXPECT(buf, OPS_INT64, 10, 11, 1, 0, 0, 1);
    ops_tensor_release(f);
    ops_tensor_release(src);
    ops_tensor_release(tail);
    ops_tensor_release(idx);
    ops_tensor_release(self);
    ops_tensor_release(buf);
}
END_TEST

START_TEST(test_inplace_broadcast_error)
{
    ops_tensor *self = T1(OPS_FLOAT32, 1, 2, 3);
    ops_tensor *other = ops_tensor_new("test", 2, (int64_t[]){2, 3}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    memset(ops_tensor_data_ptr(other), 0, 24);
    expect_error(ops_add_(self, other, OPS_SCALAR_INT(1)), OPS_ERR_SHAPE,
                 "add_: output with shape [3] doesn't match the broadcast shape [2, 3]");
    EXPECT(self, OPS_FLOAT32, 1, 2, 3);
    /* other broadcasting into self is fine */
    ops_tensor *s = ops_scalar_tensor(OPS_SCALAR_FLOAT(10), OPS_FLOAT32);
    ck_assert_int_eq(ops_add_(self, s, OPS_SCALAR_INT(1)), OPS_OK);
    EXPECT(self, OPS_FLOAT32, 11, 12, 13);
    ops_tensor_release(s);
    ops_tensor_release(self);
    ops_tensor_release(other);
}
END_TEST

START_TEST(test_dtype_promotion)
{
    ops_tensor *i32 = T1(OPS_INT32, 1, 2, 3);
    ops_tensor *f32 = T1(OPS_FLOAT32, 0.5, 0.25, 0.125);
    ops_tensor *i8 = T1(OPS_INT8, 100, 100, -100);
    ops_tensor *i64 = T1(OPS_INT64, 100, 1000, -100);
    ops_tensor *r = ops_add(i32, f32, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_FLOAT32, 1.5, 2.25, 3.125);
    ops_tensor_release(r);
    r = ops_add(i8, i64, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_INT64, 200, 1100, -200);
    ops_tensor_release(r);
    /* a 0-dim float64 does not promote a dimensioned float32 */
    ops_tensor *d0 = ops_scalar_tensor(OPS_SCALAR_FLOAT(0.5), OPS_FLOAT64);
    r = ops_add(f32, d0, OPS_SCALAR_INT(1));
    EXPECT(r, OPS_FLOAT32, 1.0, 0.75, 0.625);
    ops_tensor_release(r);
    /* an int tensor and a Python float: the default float dtype */
    r = ops_add_scalar(i64, OPS_SCALAR_FLOAT(0.5), OPS_SCALAR_INT(1));
    EXPECT(r, OPS_FLOAT32, 100.5, 1000.5, -99.5);
    ops_tensor_release(r);
    /* an int8 tensor and a Python int stay int8 (wrapping) */
    r = ops_add_scalar(i8, OPS_SCALAR_INT(28), OPS_SCALAR_INT(1));
    EXPECT(r, OPS_INT8, -128, -128, -72);
    ops_tensor_release(r);
    /* comparisons promote, then give bool */
    r = ops_lt(i32, TMP(OPS_FLOAT32, 1.5, 1.5, 1.5));
    EXPECT(r, OPS_BOOL, 1, 0, 0);
    ops_tensor_release(r);

    /* write-back into a wider out */
    ops_tensor *o64 = T1(OPS_FLOAT64, 0, 0, 0);
    ck_assert_int_eq(ops_add_out(f32, f32, OPS_SCALAR_INT(1), o64), OPS_OK);
    EXPECT(o64, OPS_FLOAT64, 1.0, 0.5, 0.25);
    /* and from mixed inputs: float32 result computed, stored as float64 */
    ck_assert_int_eq(ops_mul_out(i32, f32, o64), OPS_OK);
    EXPECT(o64, OPS_FLOAT64, 0.5, 0.5, 0.375);
    /* a float result cannot go into an int out= */
    ops_tensor *oi = T1(OPS_INT64, 7, 7, 7);
    expect_error(ops_add_out(f32, i32, OPS_SCALAR_INT(1), oi), OPS_ERR_DTYPE,
                 "result type float32 can't be cast to the desired output type int64");
    EXPECT(oi, OPS_INT64, 7, 7, 7);
    /* nor in place into an int self */
    expect_error(ops_add_(i32, f32, OPS_SCALAR_INT(1)), OPS_ERR_DTYPE, "can't be cast");
    EXPECT(i32, OPS_INT32, 1, 2, 3);
    /* in place into a float32 self from a float64 other: computed in float64 */
    ops_tensor *f64 = T1(OPS_FLOAT64, 0.1, 0.2, 0.3);
    ops_tensor *self = T1(OPS_FLOAT32, 1, 2, 3);
    ck_assert_int_eq(ops_add_(self, f64, OPS_SCALAR_INT(1)), OPS_OK);
    EXPECT(self, OPS_FLOAT32, (float)(1.0 + 0.1), (float)(2.0 + 0.2), (float)(3.0 + 0.3));
    /* comparison into a float out= gives 1/0 */
    ck_assert_int_eq(ops_eq_out(i32, i64, o64), OPS_OK);
    EXPECT(o64, OPS_FLOAT64, 0, 0, 0);
    ck_assert_int_eq(ops_eq_out(i32, i32, o64), OPS_OK);
    EXPECT(o64, OPS_FLOAT64, 1, 1, 1);
    ops_tensor_release(f64);
    ops_tensor_release(self);
    ops_tensor_release(o64);
    ops_tensor_release(oi);
    ops_tensor_release(d0);
    ops_tensor_release(i32);
    ops_tensor_release(f32);
    ops_tensor_release(i8);
    ops_tensor_release(i64);
}
END_TEST

/* ---- geometry: reordering and coalescing ---------------------------------------- */

static int
built_ndim(const ops_tensor *a, const ops_tensor *b, ops_tensor **result)
{
    const ops_meta_args args = {.op = "add", .mode = OPS_ITER_FUNCTIONAL, .ntensors = 2, .tensors = {a, b},
                                .names = {"self", "other"}};
    ops_iter it;
    ck_assert_int_eq(ops_meta_binary(&it, &args), OPS_OK);
    const int nd = it.ndim;
    *result = ops_iter_take_result(&it);
    ops_iter_release(&it);
    return nd;
}

START_TEST(test_coalescing)
{
    ops_tensor *r;
    ops_tensor *c = ops_tensor_new("test", 3, (int64_t[]){4, 5, 6}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_int_eq(built_ndim(c, c, &r), 1);
    ops_tensor_release(r);

    /* transposed views of contiguous tensors: reordered, then one run */
    ops_tensor *m = ops_tensor_new("test", 2, (int64_t[]){5, 6}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *mt = ops_tensor_new_view(m, 2, (int64_t[]){6, 5}, (int64_t[]){1, 6}, 0);
    ck_assert_int_eq(built_ndim(mt, mt, &r), 1);
    /* the functional result takes the input's layout */
    ck_assert_int_eq(r->strides[0], 1);
    ck_assert_int_eq(r->strides[1], 6);
    ops_tensor_release(r);
    /* transposed + row-major: two dims */
    ops_tensor *n = ops_tensor_new("test", 2, (int64_t[]){6, 5}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_int_eq(built_ndim(mt, n, &r), 2);
    ops_tensor_release(r);

    /* a column slice [4, 6] of a [4, 8] buffer: rows do not merge */
    ops_tensor *big = ops_tensor_new("test", 2, (int64_t[]){4, 8}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *sl = ops_tensor_new_view(big, 2, (int64_t[]){4, 6}, (int64_t[]){8, 1}, 1);
    ck_assert_int_eq(built_ndim(sl, sl, &r), 2);
    ops_tensor_release(r);
    /* a row slice [2, 8] (rows 1..2): still one run */
    ops_tensor *rows = ops_tensor_new_view(big, 2, (int64_t[]){2, 8}, (int64_t[]){8, 1}, 8);
    ck_assert_int_eq(built_ndim(rows, rows, &r), 1);
    ops_tensor_release(r);
    /* every other row: 2 dims */
    ops_tensor *every = ops_tensor_new_view(big, 2, (int64_t[]){2, 8}, (int64_t[]){16, 1}, 0);
    ck_assert_int_eq(built_ndim(every, every, &r), 2);
    ops_tensor_release(r);
    /* a fully reversed contiguous [4, 8] (strides -8, -1): one run of stride -1 */
    ops_tensor *rev = ops_tensor_new_view(big, 2, (int64_t[]){4, 8}, (int64_t[]){-8, -1}, 31);
    {
        const ops_meta_args args = {.op = "add", .mode = OPS_ITER_FUNCTIONAL, .ntensors = 2,
                                    .tensors = {rev, rev}, .names = {"self", "other"}};
        ops_iter it;
        ck_assert_int_eq(ops_meta_binary(&it, &args), OPS_OK);
        ck_assert_int_eq(it.ndim, 1);
        ck_assert_int_eq(it.loop_shape[0], 32);
        ck_assert_int_eq(it.loop_strides[0][1], -4);
        ops_iter_release(&it);
    }
    /* size-1 dims are dropped: [4, 1, 6] contiguous is one run */
    ops_tensor *s1 = ops_tensor_new("test", 3, (int64_t[]){4, 1, 6}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_int_eq(built_ndim(s1, s1, &r), 1);
    ops_tensor_release(r);
    /* row broadcast: [4, 5] + [5] is two dims (other steps 0 along rows) */
    ops_tensor *m45 = ops_tensor_new("test", 2, (int64_t[]){4, 5}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *v5 = ops_tensor_new("test", 1, (int64_t[]){5}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_int_eq(built_ndim(m45, v5, &r), 2);
    ops_tensor_release(r);
    /* a 0-dim other: one run with stride 0 */
    ops_tensor *z = ops_scalar_tensor(OPS_SCALAR_FLOAT(1), OPS_FLOAT32);
    {
        const ops_meta_args args = {.op = "add", .mode = OPS_ITER_FUNCTIONAL, .ntensors = 2,
                                    .tensors = {m45, z}, .names = {"self", "other"}};
        ops_iter it;
        ck_assert_int_eq(ops_meta_binary(&it, &args), OPS_OK);
        ck_assert_int_eq(it.ndim, 1);
        ck_assert_int_eq(it.loop_strides[0][2], 0);
        ops_iter_release(&it);
    }
    ops_tensor_release(z);
    ops_tensor_release(m45);
    ops_tensor_release(v5);
    ops_tensor_release(s1);
    ops_tensor_release(rev);
    ops_tensor_release(every);
    ops_tensor_release(rows);
    ops_tensor_release(sl);
    ops_tensor_release(big);
    ops_tensor_release(n);
    ops_tensor_release(mt);
    ops_tensor_release(m);
    ops_tensor_release(c);
}
END_TEST

START_TEST(test_nullary)
{
    ops_tensor *buf = T1(OPS_FLOAT32, 0, 0, 0, 0, 0, 0, 0, 0);
    /* every other element, backwards */
    ops_tensor *v = ops_tensor_new_view(buf, 1, (int64_t[]){4}, (int64_t[]){-2}, 6);
    ops_iter it;
    const uint64_t v0 = ops_tensor_version(buf);
    ck_assert_int_eq(ops_iter_build_nullary(&it, "fill_", v), OPS_OK);
    OPS_NULLARY_KERNEL(&it, float, 7.0f);
    ck_assert_int_eq(ops_iter_finish(&it), OPS_OK);
    ops_iter_release(&it);
    EXPECT(buf, OPS_FLOAT32, 7, 0, 7, 0, 7, 0, 7, 0);
    ck_assert_uint_gt(ops_tensor_version(buf), v0);
    /* an expanded view: its repeated dim is walked once */
    ops_tensor *e = ops_tensor_new_view(buf, 2, (int64_t[]){3, 2}, (int64_t[]){0, 1}, 1);
    ck_assert_int_eq(ops_iter_build_nullary(&it, "fill_", e), OPS_OK);
    ck_assert_int_eq(it.numel, 2);
    OPS_NULLARY_KERNEL(&it, float, -1.0f);
    ops_iter_release(&it);
    EXPECT(buf, OPS_FLOAT32, 7, -1, -1, 0, 7, 0, 7, 0);
    ops_tensor_release(e);
    ops_tensor_release(v);
    ops_tensor_release(buf);
}
END_TEST

START_TEST(test_alloc_failure)
{
    ops_tensor *a = T1(OPS_FLOAT32, 1, 2, 3);
    ops_tensor *i = T1(OPS_INT32, 1, 2, 3);
    /* the functional result's allocation fails: a clean OOM */
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(ops_add(a, a, OPS_SCALAR_INT(1)));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    /* an empty out= needing a conversion temporary: out stays empty when it fails */
    ops_tensor *out = ops_tensor_new("test", 1, (int64_t[]){0}, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    for (int n = 1; n <= 3; n++) {
        ops_alloc_fail_nth(n);
        const ops_status st = ops_add_out(a, i, OPS_SCALAR_INT(1), out);
        ops_alloc_fail_nth(0);
        if (st == OPS_OK) {
            EXPECT(out, OPS_FLOAT64, 2, 4, 6);
            break;
        }
        ck_assert_int_eq(st, OPS_ERR_OOM);
        ck_assert_int_eq(out->sizes[0], 0);
    }
    ops_alloc_fail_nth(0);
    ops_tensor_release(out);
    ops_tensor_release(a);
    ops_tensor_release(i);
}
END_TEST

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
    ck_assert(elem(r, 0) == atan2f(1, 1));
    ck_assert(elem(r, 1) == atan2f(-1, 1));
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
iter_suite(void)
{
    Suite *s = suite_create("iter");
    TCase *tc = tcase_create("iterator");
    tcase_add_checked_fixture(tc, NULL, release_kept);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_stride_sweep_1d);
    tcase_add_test(tc, test_stride_sweep_2d);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_broadcast_shapes);
    tcase_add_test(tc, test_zero_size);
    tcase_add_test(tc, test_zero_dim);
    tcase_add_test(tc, test_out_resize_empty);
    tcase_add_test(tc, test_out_wrong_shape);
    tcase_add_test(tc, test_out_internal_overlap);
    tcase_add_test(tc, test_out_partial_overlap);
    tcase_add_test(tc, test_out_checks_index_family);
    tcase_add_test(tc, test_inplace_broadcast_error);
    tcase_add_test(tc, test_dtype_promotion);
    tcase_add_test(tc, test_coalescing);
    tcase_add_test(tc, test_nullary);
    tcase_add_test(tc, test_alloc_failure);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("kernels");
    tcase_add_checked_fixture(tk, NULL, release_kept);
    tcase_add_test(tk, test_integer_wrap);
    tcase_add_test(tk, test_alpha_rules);
    tcase_add_test(tk, test_division);
    tcase_add_test(tk, test_remainder_fmod);
    tcase_add_test(tk, test_pow_max_min_atan2);
    tcase_add_test(tk, test_compare_logical_bitwise);
    tcase_add_test(tk, test_where);
    tcase_add_test(tk, test_clamp);
    tcase_add_test(tk, test_lerp_addc);
    tcase_add_test(tk, test_copy_conversions);
    tcase_add_test(tk, test_copy_rules);
    tcase_add_test(tk, test_to_clone_contiguous);
    suite_add_tcase(s, tk);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(iter_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The tensor iterator: stride sweeps, broadcasting, 0-size and 0-dim operands, the out=
 * and in-place rules, dtype promotion, coalescing and allocation failures (the kernels
 * it drives: test_iter_kernels.c).
 *
 * Oracles: plain C loops over the raw buffers (the stride sweeps compute the
 * expected element from the buffer, offset and stride with their own arithmetic),
 * hand-derived values for the kernels' edge cases (integer division, shifts,
 * rounding), and invariants (an op that fails leaves its out= byte-for-byte as it
 * was; a view's gaps keep their sentinels). */
#include "test_iter_util.h"
#include "ops_op_add.h"
#include "ops_op_eq.h"
#include "ops_op_gather.h"
#include "ops_op_index_select.h"
#include "ops_op_lerp.h"
#include "ops_op_lt.h"
#include "ops_op_mul.h"
#include "ops_op_remainder.h"
#include "ops_op_sub.h"
#include "ops_op_take.h"
#include "ops_op_to.h"

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

/* The grain follows the cost per element: a transcendental family (unary_float) splits
 * at OPS_GRAIN_SIZE / OPS_COST_MATH elements, a binary add only at OPS_GRAIN_SIZE. */
START_TEST(test_grain_by_cost)
{
    ops_set_num_threads(2);
    const int64_t n = OPS_GRAIN_SIZE / 4;
    ops_tensor *x = ops_tensor_new("test", 1, (int64_t[]){n}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(x);
    const ops_meta_args ua = {.op = "exp", .mode = OPS_ITER_FUNCTIONAL, .ntensors = 1, .tensors = {x},
                              .names = {"self"}};
    ops_iter it;
    ck_assert_int_eq(ops_meta_unary_float(&it, &ua), OPS_OK);
    ck_assert_int_eq(it.grain, OPS_GRAIN_SIZE / OPS_COST_MATH);
    ck_assert_int_eq(ops_iter_num_tasks(&it), 2);
    ops_iter_release(&it);
    const ops_meta_args ba = {.op = "add", .mode = OPS_ITER_FUNCTIONAL, .ntensors = 2, .tensors = {x, x},
                              .names = {"self", "other"}};
    ck_assert_int_eq(ops_meta_binary(&it, &ba), OPS_OK);
    ck_assert_int_eq(ops_iter_num_tasks(&it), 1);
    ops_iter_set_cost(&it, OPS_COST_HEAVY);
    ck_assert_int_eq(ops_iter_num_tasks(&it), 2);
    ops_iter_set_cost(&it, OPS_COST_MEMORY);
    ck_assert_int_eq(ops_iter_num_tasks(&it), 1);
    ops_iter_release(&it);
    ops_tensor_release(x);
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
    tcase_add_test(tc, test_grain_by_cost);
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

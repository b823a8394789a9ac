/* The CUDA elementwise launcher (kernels/cuda/ops_cuda_loops.cuh) through the kernels
 * built on it, copy_ within a device and fill_/zero_, against the CPU kernels on the
 * same views: what the conformance cases cannot reach.
 *
 * Every check works on a whole storage: a host base and its device copy get the same
 * view written (the CPU kernel on the host, the CUDA kernel on the device) and the
 * two bases are compared byte for byte, so elements outside the view prove that
 * nothing was written out of bounds.  Paths: every dtype pair of copy (contiguous and
 * transposed), contiguous copies at every misalignment (vector width falling back),
 * broadcast, transposed and negative-stride views, more elements than one grid
 * covers (both kernels), a view whose element offsets pass 2^31 (the 32-bit split),
 * fill_ on every dtype and layout, and fill_'s overflow error leaving the tensor as it
 * was.  Skips (exit 77) without the CUDA backend or a device. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libops.h"
#include "ops_cuda.h"
#include "ops_internal.h"

#ifdef OPS_WITH_CUDA

#define DEV OPS_DEVICE_CUDA(0)

/* A view's geometry over a 1-D base. */
typedef struct geom {
    int ndim;
    int64_t sizes[4];
    int64_t strides[4];
    int64_t offset;
} geom;

static ops_tensor *
view_of(const ops_tensor *base, geom g)
{
    ops_tensor *v = ops_tensor_new_view(base, g.ndim, g.sizes, g.strides, g.offset);
    ck_assert_msg(v != NULL, "view: %s", ops_last_error());
    return v;
}

/* A copy of the contiguous tensor t on device dev. */
static ops_tensor *
copy_to(const ops_tensor *t, ops_device dev)
{
    ops_tensor *r = ops_tensor_new("test", t->ndim, t->sizes, NULL, t->dtype, dev);
    ck_assert_msg(r != NULL, "alloc: %s", ops_last_error());
    ck_assert_msg(ops_copy_(r, t, false) == OPS_OK, "transfer: %s", ops_last_error());
    return r;
}

/* n elements of dtype dt on the CPU with values that exercise conversions: small
 * integers, fractions of both signs, values past every integer range, inf and NaN
 * (made as float64 and converted by the CPU, whatever dt is). */
static ops_tensor *
host_values(int64_t n, ops_dtype dt, unsigned seed)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 127.0, 128.0, 255.0, 256.0,
                                     -129.0, 65504.0, 65520.0, 1e10, -1e10, 3e38, INFINITY,
                                     -INFINITY, NAN, 2147483648.0, -2147483649.0, 1e-8};
    const int nspecial = (int)(sizeof special / sizeof special[0]);
    ops_tensor *f = ops_tensor_new("test", 1, &n, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    double *p = ops_tensor_data_ptr(f);
    srand(seed);
    for (int64_t i = 0; i < n; i++)
        p[i] = (i % 3 == 0) ? special[(i / 3 + seed) % nspecial] : (double)(rand() % 2001 - 1000) / 8.0;
    if (dt == OPS_FLOAT64)
        return f;
    ops_tensor *t = ops_tensor_new("test", 1, &n, NULL, dt, OPS_DEVICE_CPU);
    ck_assert(ops_copy_(t, f, false) == OPS_OK);
    ops_tensor_release(f);
    return t;
}

/* Equal element by element: the same bytes, or both NaN (the device's conversions
 * may return another NaN payload than the host's). */
static void
expect_same(const ops_tensor *got, const ops_tensor *want, const char *what)
{
    ck_assert_int_eq(got->dtype, want->dtype);
    const int64_t n = ops_tensor_numel(want);
    ck_assert_int_eq(ops_tensor_numel(got), n);
    const size_t item = ops_dtype_itemsize(want->dtype);
    const char *g = ops_tensor_data_ptr(got), *w = ops_tensor_data_ptr(want);
    for (int64_t i = 0; i < n; i++) {
        if (memcmp(g + i * item, w + i * item, item) == 0)
            continue;
        const ops_scalar a = ops_scalar_load(g + i * item, got->dtype);
        const ops_scalar b = ops_scalar_load(w + i * item, want->dtype);
        if (a.kind == OPS_SCALAR_FLOAT && isnan(a.v.f) && isnan(b.v.f))
            continue;
        ck_abort_msg("%s: element %lld differs (%s): got %g, want %g", what, (long long)i,
                     ops_dtype_name(want->dtype), a.kind == OPS_SCALAR_FLOAT ? a.v.f : (double)a.v.i,
                     b.kind == OPS_SCALAR_FLOAT ? b.v.f : (double)b.v.i);
    }
}

/* copy_ of the view sg of a base of nsrc elements (dtype sdt) into the view dg of a
 * base of ndst elements (dtype ddt), on the CPU and on the device; the bases must
 * come out equal. */
static void
check_copy(ops_dtype ddt, int64_t ndst, geom dg, ops_dtype sdt, int64_t nsrc, geom sg, const char *what)
{
    ops_tensor *hd = host_values(ndst, ddt, 1), *hs = host_values(nsrc, sdt, 2);
    ops_tensor *dd = copy_to(hd, DEV), *ds = copy_to(hs, DEV);
    ops_tensor *hdv = view_of(hd, dg), *hsv = view_of(hs, sg), *ddv = view_of(dd, dg), *dsv = view_of(ds, sg);
    ck_assert_msg(ops_copy_(hdv, hsv, false) == OPS_OK, "%s (cpu): %s", what, ops_last_error());
    ck_assert_msg(ops_copy_(ddv, dsv, false) == OPS_OK, "%s (cuda): %s", what, ops_last_error());
    ops_tensor *back = copy_to(dd, OPS_DEVICE_CPU);
    char msg[160];
    snprintf(msg, sizeof msg, "%s, %s <- %s", what, ops_dtype_name(ddt), ops_dtype_name(sdt));
    expect_same(back, hd, msg);
    ops_tensor *all[] = {hd, hs, dd, ds, hdv, hsv, ddv, dsv, back};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}

static geom
g1(int64_t n, int64_t stride, int64_t offset)
{
    return (geom){1, {n}, {stride}, offset};
}

static geom
g2(int64_t n0, int64_t n1, int64_t s0, int64_t s1, int64_t offset)
{
    return (geom){2, {n0, n1}, {s0, s1}, offset};
}

START_TEST(test_copy_every_dtype_pair)
{
    for (int d = 0; d < OPS_NUM_DTYPES; d++)
        for (int s = 0; s < OPS_NUM_DTYPES; s++) {
            /* contiguous [37, 5], then from the transpose of a [5, 37] */
            check_copy(d, 185, g2(37, 5, 5, 1, 0), s, 185, g2(37, 5, 5, 1, 0), "contiguous");
            check_copy(d, 185, g2(37, 5, 5, 1, 0), s, 185, g2(37, 5, 1, 37, 0), "transposed");
        }
}
END_TEST

START_TEST(test_copy_misaligned_contiguous)
{
    /* offsets 0..4 on either side: the vector width falls back to what every pointer
     * allows (4, 2, 1); lengths leave every remainder of the vector loop */
    static const ops_dtype dts[][2] = {{OPS_FLOAT16, OPS_FLOAT32}, {OPS_INT8, OPS_INT8},
                                       {OPS_FLOAT64, OPS_INT16}, {OPS_BOOL, OPS_UINT8}};
    static const int64_t lens[] = {1, 2, 3, 5, 8, 13, 1027};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (int od = 0; od < 5; od++)
            for (int os = 0; os < 5; os += 2)
                for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                    check_copy(dts[t][0], lens[l] + 8, g1(lens[l], 1, od), dts[t][1], lens[l] + 8,
                               g1(lens[l], 1, os), "misaligned");
}
END_TEST

START_TEST(test_copy_broadcast_transposed_flipped)
{
    /* src [1, 7] and [7] broadcast to [5, 7]; [5, 1] along the rows */
    check_copy(OPS_FLOAT32, 40, g2(5, 7, 7, 1, 2), OPS_FLOAT64, 9, g2(5, 7, 0, 1, 1), "broadcast rows");
    check_copy(OPS_INT32, 40, g2(5, 7, 7, 1, 0), OPS_INT32, 6, g2(5, 7, 1, 0, 1), "broadcast columns");
    check_copy(OPS_BFLOAT16, 3, g1(1, 1, 2), OPS_FLOAT32, 2, g1(1, 1, 1), "one element");
    /* transposed destination, strided both sides */
    check_copy(OPS_FLOAT16, 300, g2(11, 13, 1, 11, 3), OPS_INT64, 400, g2(11, 13, 26, 2, 1), "strided");
    /* negative strides: reversed rows and columns */
    check_copy(OPS_FLOAT32, 100, g1(50, -1, 60), OPS_FLOAT32, 100, g1(50, 1, 0), "flipped dst");
    check_copy(OPS_INT16, 100, g2(6, 7, 7, 1, 0), OPS_UINT8, 100, g2(6, 7, -14, -2, 90), "flipped src");
}
END_TEST

START_TEST(test_copy_past_one_grid)
{
    /* more elements than OPS_CUDA_MAX_GRID (4096) blocks x 128 threads x 4 cover, so
     * the kernels loop: contiguous (vectorised) and transposed (offset calculator) */
    const int64_t n = 2200001;
    check_copy(OPS_INT16, n, g1(n, 1, 0), OPS_UINT8, n, g1(n, 1, 0), "contiguous, past one grid");
    check_copy(OPS_FLOAT32, 1500 * 1500, g2(1500, 1500, 1, 1500, 0), OPS_FLOAT32, 1500 * 1500,
               g2(1500, 1500, 1500, 1, 0), "transposed, past one grid");
}
END_TEST

/* fill_ (or zero_ when zero) of view g over a base of n elements on both devices. */
static void
check_fill(ops_dtype dt, int64_t n, geom g, ops_scalar value, bool zero, const char *what)
{
    ops_tensor *h = host_values(n, dt, 3);
    ops_tensor *d = copy_to(h, DEV);
    ops_tensor *hv = view_of(h, g), *dv = view_of(d, g);
    const uint64_t version = ops_tensor_version(dv);
    ck_assert(zero ? ops_zero_(hv) == OPS_OK : ops_fill_(hv, value) == OPS_OK);
    ck_assert_msg(zero ? ops_zero_(dv) == OPS_OK : ops_fill_(dv, value) == OPS_OK, "%s: %s", what,
                  ops_last_error());
    ck_assert_uint_eq(ops_tensor_version(dv), version + 1);
    ops_tensor *back = copy_to(d, OPS_DEVICE_CPU);
    char msg[160];
    snprintf(msg, sizeof msg, "%s (%s)", what, ops_dtype_name(dt));
    expect_same(back, h, msg);
    ops_tensor *all[] = {h, d, hv, dv, back};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}

START_TEST(test_fill_every_dtype_and_layout)
{
    for (int dt = 0; dt < OPS_NUM_DTYPES; dt++) {
        const ops_scalar v = dt == OPS_BOOL ? OPS_SCALAR_BOOL(true)
                             : ops_dtype_is_floating(dt) ? OPS_SCALAR_FLOAT(-2.5)
                                                         : OPS_SCALAR_INT(100);
        check_fill(dt, 1000, g1(999, 1, 1), v, false, "contiguous, offset 1");
        check_fill(dt, 1000, g2(20, 30, 1, 31, 5), v, false, "transposed, padded");
        check_fill(dt, 1000, g2(20, 30, -40, -1, 999), v, false, "flipped");
        check_fill(dt, 100, g2(4, 50, 0, 1, 7), v, false, "expanded");
        check_fill(dt, 1000, g2(20, 30, 40, 1, 3), v, true, "zero_, strided");
    }
}
END_TEST

START_TEST(test_fill_overflow_is_an_error)
{
    ops_tensor *h = host_values(16, OPS_UINT8, 4);
    ops_tensor *d = copy_to(h, DEV);
    ck_assert_int_eq(ops_fill_(d, OPS_SCALAR_INT(300)), OPS_ERR_VALUE);
    ck_assert_str_eq(ops_last_error(), "fill_: value 300 cannot be converted to type uint8 without overflow");
    ops_tensor *back = copy_to(d, OPS_DEVICE_CPU);
    expect_same(back, h, "after a failed fill_");
    ops_tensor_release(back);
    ops_tensor_release(d);
    ops_tensor_release(h);
}
END_TEST

START_TEST(test_offsets_past_int32_are_split)
{
    /* An int8 storage of 2^31 + 64 bytes: only the pages the views touch are used.  A
     * [2, 5] view with row stride 2^31 has element offsets past INT32_MAX, so the
     * launcher splits it into rows. */
    const int64_t big = ((int64_t)1 << 31) + 64;
    ops_tensor *base = ops_tensor_new("test", 1, &big, NULL, OPS_INT8, DEV);
    if (base == NULL) {
        printf("note: no room for a 2 GiB device tensor (%s); the split is unchecked\n", ops_last_error());
        return;
    }
    const int64_t lo = 0, hi = (int64_t)1 << 31, span = 40;
    /* zero the two neighbourhoods the view lives in */
    ops_tensor *near_lo = view_of(base, g1(span, 1, lo)), *near_hi = view_of(base, g1(span, 1, hi));
    ck_assert(ops_zero_(near_lo) == OPS_OK && ops_zero_(near_hi) == OPS_OK);
    ops_tensor *v = view_of(base, g2(2, 5, (int64_t)1 << 31, 3, 7));
    /* the oracle: the same writes on a plain C array of the two neighbourhoods */
    int8_t want[2][40] = {{0}};

    ck_assert_msg(ops_fill_(v, OPS_SCALAR_INT(-3)) == OPS_OK, "fill_: %s", ops_last_error());
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 5; c++)
            want[r][7 + 3 * c] = -3;

    /* copy_ into the view from a contiguous device tensor, then only the first row */
    int64_t n10 = 10;
    ops_tensor *hsrc = ops_tensor_new("test", 1, &n10, NULL, OPS_INT32, OPS_DEVICE_CPU);
    for (int i = 0; i < 10; i++)
        ((int32_t *)ops_tensor_data_ptr(hsrc))[i] = 250 + i; /* wraps in int8 */
    ops_tensor *dsrc = copy_to(hsrc, DEV);
    ops_tensor *dsrc2 = view_of(dsrc, g2(2, 5, 5, 1, 0));
    ck_assert_msg(ops_copy_(v, dsrc2, false) == OPS_OK, "copy_: %s", ops_last_error());
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 5; c++)
            want[r][7 + 3 * c] = (int8_t)(250 + 5 * r + c);

    /* and back out of the view: its values, converted */
    ops_tensor *dout = ops_tensor_new("test", 2, (int64_t[]){2, 5}, NULL, OPS_FLOAT32, DEV);
    ck_assert_msg(ops_copy_(dout, v, false) == OPS_OK, "copy_ out: %s", ops_last_error());
    ops_tensor *hout = copy_to(dout, OPS_DEVICE_CPU);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 5; c++)
            ck_assert_float_eq(((float *)ops_tensor_data_ptr(hout))[5 * r + c], (float)want[r][7 + 3 * c]);

    ops_tensor *blo = copy_to(near_lo, OPS_DEVICE_CPU), *bhi = copy_to(near_hi, OPS_DEVICE_CPU);
    ck_assert(memcmp(ops_tensor_data_ptr(blo), want[0], span) == 0);
    ck_assert(memcmp(ops_tensor_data_ptr(bhi), want[1], span) == 0);
    ops_tensor *all[] = {base, near_lo, near_hi, v, hsrc, dsrc, dsrc2, dout, hout, blo, bhi};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

#endif /* OPS_WITH_CUDA */

int
main(void)
{
#ifndef OPS_WITH_CUDA
    printf("SKIP: libops was built without the CUDA backend\n");
    return 77;
#else
    if (ops_cuda_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    Suite *s = suite_create("cuda_elementwise");
    TCase *tc = tcase_create("launcher");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_copy_every_dtype_pair);
    tcase_add_test(tc, test_copy_misaligned_contiguous);
    tcase_add_test(tc, test_copy_broadcast_transposed_flipped);
    tcase_add_test(tc, test_copy_past_one_grid);
    tcase_add_test(tc, test_fill_every_dtype_and_layout);
    tcase_add_test(tc, test_fill_overflow_is_an_error);
    tcase_add_test(tc, test_offsets_past_int32_are_split);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

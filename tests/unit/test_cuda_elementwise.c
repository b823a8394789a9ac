/* The CUDA elementwise launcher (kernels/cuda/ops_cuda_loops.cuh) through the kernels
 * built on it, copy_ within a device, fill_/zero_ and the elementwise families, against
 * the CPU kernels on the same views: what the conformance cases cannot reach.
 *
 * Every check works on a whole storage: a host base and its device copy get the same
 * view written (the CPU kernel on the host, the CUDA kernel on the device) and the
 * two bases are compared byte for byte, so elements outside the view prove that
 * nothing was written out of bounds.  Paths: every dtype pair of copy (contiguous and
 * transposed), contiguous copies at every misalignment (vector width falling back),
 * broadcast, transposed and negative-stride views, more elements than one grid
 * covers (both kernels), a view whose element offsets pass 2^31 (the 32-bit split),
 * fill_ on every dtype and layout, and fill_'s overflow error leaving the tensor as it
 * was.  The families: integer edge semantics (limits, -1 divisors, shift counts) and
 * float ones (signed zeros, inf, NaN) against the CPU on broadcast pairs; the
 * zero-divisor check (past one grid, transposed, broadcast, host scalar, past 2^31)
 * refusing with out= untouched; host-scalar operands on either side; sizes past one
 * grid; where keeping NaN payloads.  Skips (exit 77) without the CUDA backend or a device. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_op_add.h"
#include "ops_op_bitwise_left_shift.h"
#include "ops_op_bitwise_right_shift.h"
#include "ops_op_bitwise_xor.h"
#include "ops_op_copy.h"
#include "ops_op_div.h"
#include "ops_op_eq.h"
#include "ops_op_fill.h"
#include "ops_op_fmax.h"
#include "ops_op_fmin.h"
#include "ops_op_fmod.h"
#include "ops_op_full.h"
#include "ops_op_ge.h"
#include "ops_op_lt.h"
#include "ops_op_maximum.h"
#include "ops_op_minimum.h"
#include "ops_op_mul.h"
#include "ops_op_ne.h"
#include "ops_op_pow.h"
#include "ops_op_remainder.h"
#include "ops_op_sub.h"
#include "ops_op_where.h"
#include "ops_op_zero.h"
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

/* ---- the elementwise families (kernels/cuda/binary.cu, compare.cu, ...) ----------- */

/* A CPU tensor of dtype dt holding vals (converted from int64 or double). */
static ops_tensor *
host_from(const double *vals, int64_t n, ops_dtype dt, int64_t rows)
{
    ops_tensor *f = ops_tensor_new("test", 1, &n, NULL, OPS_FLOAT64, OPS_DEVICE_CPU);
    memcpy(ops_tensor_data_ptr(f), vals, (size_t)n * sizeof(double));
    int64_t sizes[2] = {rows, n / rows};
    ops_tensor *t = ops_tensor_new("test", 2, sizes, NULL, dt, OPS_DEVICE_CPU);
    ops_tensor *fv = view_of(f, g2(rows, n / rows, n / rows, 1, 0));
    ck_assert(ops_copy_(t, fv, false) == OPS_OK);
    ops_tensor_release(fv);
    ops_tensor_release(f);
    return t;
}

static ops_tensor *
host_ints(const int64_t *vals, int64_t n, ops_dtype dt, int64_t rows)
{
    ops_tensor *f = ops_tensor_new("test", 1, &n, NULL, OPS_INT64, OPS_DEVICE_CPU);
    memcpy(ops_tensor_data_ptr(f), vals, (size_t)n * sizeof(int64_t));
    int64_t sizes[2] = {rows, n / rows};
    ops_tensor *t = ops_tensor_new("test", 2, sizes, NULL, dt, OPS_DEVICE_CPU);
    ops_tensor *fv = view_of(f, g2(rows, n / rows, n / rows, 1, 0));
    ck_assert(ops_copy_(t, fv, false) == OPS_OK); /* in range for dt: no wrap */
    ops_tensor_release(fv);
    ops_tensor_release(f);
    return t;
}

/* A binary op of the families, by its generated function. */
typedef ops_tensor *(*binary_fn)(const ops_tensor *, const ops_tensor *);

/* Operands of check_binary that stay on the CPU (0-dim ones: host scalars). */
enum { ON_DEVICE = 0, A_ON_HOST = 1, B_ON_HOST = 2 };

/* fn(a, b) on the CPU and on the device (a and b copied there unless host says
 * otherwise) agree element by element (every byte, NaN aside). */
static void
check_binary_on(binary_fn fn, const ops_tensor *a, const ops_tensor *b, unsigned host, const char *what)
{
    ops_tensor *want = fn(a, b);
    ck_assert_msg(want != NULL, "%s (cpu): %s", what, ops_last_error());
    ops_tensor *da = (host & A_ON_HOST) ? ops_tensor_retain(a) : copy_to(a, DEV);
    ops_tensor *db = (host & B_ON_HOST) ? ops_tensor_retain(b) : copy_to(b, DEV);
    ops_tensor *got = fn(da, db);
    ck_assert_msg(got != NULL, "%s (cuda): %s", what, ops_last_error());
    ck_assert(ops_tensor_device(got).type == OPS_CUDA);
    /* both made contiguous: a result may follow its inputs' layout (transposed) */
    ops_tensor *back = copy_to(got, OPS_DEVICE_CPU), *wantc = copy_to(want, OPS_DEVICE_CPU);
    char msg[160];
    snprintf(msg, sizeof msg, "%s (%s)", what, ops_dtype_name(a->dtype));
    expect_same(back, wantc, msg);
    ops_tensor *all[] = {want, da, db, got, back, wantc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}

static void
check_binary(binary_fn fn, const ops_tensor *a, const ops_tensor *b, const char *what)
{
    check_binary_on(fn, a, b, ON_DEVICE, what);
}

static ops_tensor *
div_trunc(const ops_tensor *a, const ops_tensor *b)
{
    return ops_div_tensor_mode(a, b, "trunc");
}

static ops_tensor *
div_floor(const ops_tensor *a, const ops_tensor *b)
{
    return ops_div_tensor_mode(a, b, "floor");
}

static ops_tensor *
add_alpha(const ops_tensor *a, const ops_tensor *b)
{
    return ops_add(a, b, OPS_SCALAR_INT(3));
}

static ops_tensor *
sub_alpha(const ops_tensor *a, const ops_tensor *b)
{
    return ops_sub(a, b, OPS_SCALAR_INT(-2));
}

START_TEST(test_integer_semantics_match_cpu)
{
    /* Every pair of edge values, as a [n, 1] x [1, m] broadcast: the type's limits
     * (INT_MIN / -1, INT_MIN % -1), both signs of divisor and dividend, shift counts
     * negative, at and past the width; divisors never 0 (the next test's subject). */
    static const ops_dtype dts[] = {OPS_UINT8, OPS_INT8, OPS_INT16, OPS_INT32, OPS_INT64};
    static const struct {
        binary_fn fn;
        const char *name;
        bool divides;
    } ops[] = {{div_trunc, "div trunc", true}, {div_floor, "div floor", true}, {ops_remainder, "remainder", true},
               {ops_fmod, "fmod", true}, {ops_pow, "pow", false}, {ops_mul, "mul", false},
               {add_alpha, "add", false}, {sub_alpha, "sub", false}, {ops_maximum, "maximum", false},
               {ops_minimum, "minimum", false}, {ops_fmax, "fmax", false}, {ops_fmin, "fmin", false},
               {ops_bitwise_left_shift, "lshift", false},
               {ops_bitwise_right_shift, "rshift", false}, {ops_bitwise_xor, "xor", false},
               {ops_lt, "lt", false}, {ops_eq, "eq", false}};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        const ops_dtype dt = dts[d];
        const int bits = (int)ops_dtype_itemsize(dt) * 8;
        const int64_t lo = dt == OPS_UINT8 ? 0 : dt == OPS_INT64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        const int64_t hi = dt == OPS_UINT8 ? 255 : dt == OPS_INT64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
        int64_t av[16], bv[16];
        int na = 0, nb = 0;
        const int64_t cand[] = {lo, lo + 1, -7, -2, -1, 0, 1, 2, 3, 7, bits - 1, bits, bits + 1, 100, hi - 1, hi};
        for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
            if (cand[i] < lo || cand[i] > hi)
                continue;
            av[na++] = cand[i];
            if (cand[i] != 0)
                bv[nb++] = cand[i];
        }
        ops_tensor *a = host_ints(av, na, dt, na); /* [na, 1] */
        ops_tensor *b = host_ints(bv, nb, dt, 1);  /* [1, nb] */
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            check_binary(ops[o].fn, a, b, ops[o].name);
        ops_tensor_release(a);
        ops_tensor_release(b);
    }
}
END_TEST

START_TEST(test_float_semantics_match_cpu)
{
    /* Signed zeros, infinities, NaN, exact halves: the cases where floor division,
     * Python's remainder, NaN-propagating maximum and rounding differ between
     * formulas; float16/bfloat16 round once on the store on both devices. */
    static const double v[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 7.0, -7.0, 3.0, 1e-3, 1e30, INFINITY,
                               -INFINITY, NAN};
    const int64_t n = (int64_t)(sizeof v / sizeof v[0]);
    static const binary_fn fns[] = {div_trunc, div_floor, ops_remainder, ops_fmod, ops_maximum, ops_minimum,
                                    ops_fmax, ops_fmin, ops_div, ops_mul, add_alpha, ops_ge, ops_ne};
    static const char *names[] = {"div trunc", "div floor", "remainder", "fmod", "maximum", "minimum",
                                  "fmax", "fmin", "div", "mul", "add", "ge", "ne"};
    for (int dt = 0; dt < OPS_NUM_DTYPES; dt++) {
        if (!ops_dtype_is_floating(dt))
            continue;
        ops_tensor *a = host_from(v, n, dt, n), *b = host_from(v, n, dt, 1);
        for (size_t o = 0; o < sizeof fns / sizeof fns[0]; o++)
            check_binary(fns[o], a, b, names[o]);
        ops_tensor_release(a);
        ops_tensor_release(b);
    }
}
END_TEST

/* A [rows, cols] device tensor of dtype dt filled with v (made on the CPU). */
static ops_tensor *
device_full(int64_t rows, int64_t cols, int64_t v, ops_dtype dt)
{
    ops_tensor *h = ops_full((ops_int_list){(int64_t[]){rows, cols}, 2}, OPS_SCALAR_INT(v), dt, OPS_DEVICE_CPU);
    ck_assert(h != NULL);
    ops_tensor *d = copy_to(h, DEV);
    ops_tensor_release(h);
    return d;
}

/* out = remainder(a, b) on the device must fail with the CPU's message and leave
 * out as it was. */
static void
expect_zero_division(const ops_tensor *da, const ops_tensor *db, ops_tensor *dout, const char *what)
{
    ops_tensor *before = copy_to(dout, OPS_DEVICE_CPU);
    ck_assert_msg(ops_remainder_out(da, db, dout) == OPS_ERR_RUNTIME, "%s: not refused", what);
    ck_assert_str_eq(ops_last_error(), "remainder: ZeroDivisionError (integer division or remainder by zero)");
    ops_tensor *after = copy_to(dout, OPS_DEVICE_CPU);
    expect_same(after, before, what);
    ops_tensor_release(before);
    ops_tensor_release(after);
}

START_TEST(test_zero_divisor_found_everywhere)
{
    /* One zero in the last element of a divisor past one grid (the check
     * grid-strides), in a transposed divisor (offset calculator), in a CPU 0-dim
     * divisor (a host scalar) and in a broadcast one; and the same shapes without a
     * zero run, so the check does not refuse good input. */
    const int64_t n = 2200001;
    ops_tensor *ha = host_values(n, OPS_INT32, 5);
    ops_tensor *hb = ops_full((ops_int_list){&n, 1}, OPS_SCALAR_INT(3), OPS_INT32, OPS_DEVICE_CPU);
    ops_tensor *da = copy_to(ha, DEV), *db = copy_to(hb, DEV), *dout = copy_to(ha, DEV);
    ck_assert_msg(ops_remainder_out(da, db, dout) == OPS_OK, "no zero: %s", ops_last_error());
    ((int32_t *)ops_tensor_data_ptr(hb))[n - 1] = 0;
    ops_tensor *db0 = copy_to(hb, DEV);
    expect_zero_division(da, db0, dout, "zero at the end, past one grid");

    /* [300, 300] transposed, one zero */
    const int64_t m = 300 * 300;
    ops_tensor *hc = ops_full((ops_int_list){&m, 1}, OPS_SCALAR_INT(-5), OPS_INT16, OPS_DEVICE_CPU);
    ((int16_t *)ops_tensor_data_ptr(hc))[299 * 300] = 0; /* row 299 of the column below */
    ops_tensor *dc = copy_to(hc, DEV);
    ops_tensor *dct = view_of(dc, g2(300, 300, 1, 300, 0));
    ops_tensor *dnum = device_full(300, 300, 11, OPS_INT16);
    ops_tensor *dout2 = device_full(300, 300, 1, OPS_INT16);
    expect_zero_division(dnum, dct, dout2, "zero in a transposed divisor");

    /* a CPU 0-dim divisor: read on the host */
    ops_tensor *zero = ops_scalar_tensor(OPS_SCALAR_INT(0), OPS_INT16);
    ops_tensor *two = ops_scalar_tensor(OPS_SCALAR_INT(2), OPS_INT16);
    expect_zero_division(dnum, zero, dout2, "CPU 0-dim divisor");
    ck_assert_msg(ops_remainder_out(dnum, two, dout2) == OPS_OK, "CPU 0-dim 2: %s", ops_last_error());
    ops_tensor *r = copy_to(dout2, OPS_DEVICE_CPU);
    for (int64_t i = 0; i < m; i++)
        ck_assert_int_eq(((int16_t *)ops_tensor_data_ptr(r))[i], 1); /* 11 % 2 */
    /* a Python-number divisor: the Scalar overload */
    ck_assert(ops_remainder_scalar(dnum, OPS_SCALAR_INT(0)) == NULL);
    ck_assert_str_eq(ops_last_error(), "remainder: ZeroDivisionError (integer division or remainder by zero)");
    /* a [300, 1] column broadcast along the rows, zero in its last row */
    ops_tensor *col = view_of(dc, g2(300, 300, 300, 0, 0));
    expect_zero_division(dnum, col, dout2, "broadcast divisor with a zero");
    ops_tensor *col_ok = view_of(dc, g2(299, 300, 300, 0, 0));
    ops_tensor *num_ok = view_of(dnum, g2(299, 300, 300, 1, 0));
    ops_tensor *q = ops_div_tensor_mode(num_ok, col_ok, "floor");
    ck_assert_msg(q != NULL, "broadcast divisor without a zero: %s", ops_last_error());
    ops_tensor *qh = copy_to(q, OPS_DEVICE_CPU);
    for (int64_t i = 0; i < 299 * 300; i++)
        ck_assert_int_eq(((int16_t *)ops_tensor_data_ptr(qh))[i], -3); /* floor(11 / -5) */

    ops_tensor *all[] = {ha, hb, da, db, dout, db0, hc, dc, dct, dnum, dout2, zero, two, r, col, col_ok, num_ok, q, qh};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

START_TEST(test_host_scalar_operands)
{
    /* A CPU 0-dim tensor or a Python number next to a device tensor reaches the
     * kernel as a host scalar (passed by value): on either side, every dtype. */
    for (int dt = 0; dt < OPS_NUM_DTYPES; dt++) {
        if (dt == OPS_BOOL)
            continue;
        ops_tensor *h = host_values(1000, dt, 6);
        ops_tensor *d = copy_to(h, DEV);
        ops_tensor *s = ops_scalar_tensor(OPS_SCALAR_INT(3), dt);
        check_binary_on(ops_mul, h, s, B_ON_HOST, "mul by a CPU 0-dim tensor");
        check_binary_on(ops_maximum, s, h, A_ON_HOST, "maximum, CPU 0-dim first");
        check_binary_on(sub_alpha, s, h, A_ON_HOST, "sub, CPU 0-dim first");
        /* the Python-number overloads: the CPU result is the oracle */
        ops_tensor *want = ops_add_scalar(h, OPS_SCALAR_INT(-4), OPS_SCALAR_INT(2));
        ops_tensor *got = ops_add_scalar(d, OPS_SCALAR_INT(-4), OPS_SCALAR_INT(2));
        ck_assert_msg(got != NULL, "add_scalar (%s): %s", ops_dtype_name(dt), ops_last_error());
        ops_tensor *back = copy_to(got, OPS_DEVICE_CPU);
        expect_same(back, want, "add.Scalar");
        ops_tensor *all[] = {h, d, s, want, got, back};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            ops_tensor_release(all[i]);
    }
}
END_TEST

START_TEST(test_binary_past_one_grid_and_strided)
{
    /* float16 contiguous (8-wide vectors) past one grid, and a transposed float32
     * operand (offset calculator) past one grid */
    const int64_t n = 2200001;
    ops_tensor *a = host_values(n, OPS_FLOAT16, 7), *b = host_values(n, OPS_FLOAT16, 8);
    check_binary(ops_mul, a, b, "mul, past one grid");
    ops_tensor *c = host_values(1500 * 1500, OPS_FLOAT32, 9), *e = host_values(1500 * 1500, OPS_FLOAT32, 10);
    ops_tensor *ct = view_of(c, g2(1500, 1500, 1, 1500, 0)), *ev = view_of(e, g2(1500, 1500, 1500, 1, 0));
    check_binary(ops_minimum, ct, ev, "minimum, transposed, past one grid");
    ops_tensor *all[] = {a, b, c, e, ct, ev};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

START_TEST(test_binary_offsets_past_int32)
{
    /* A [2, 5] int8 view with row stride 2^31 (as test_offsets_past_int32_are_split),
     * through a binary op (split launches) and the zero-divisor check (split checking
     * kernels), against plain C. */
    const int64_t big = ((int64_t)1 << 31) + 64;
    ops_tensor *base = ops_tensor_new("test", 1, &big, NULL, OPS_INT8, DEV);
    if (base == NULL) {
        printf("note: no room for a 2 GiB device tensor (%s); the split is unchecked\n", ops_last_error());
        return;
    }
    ops_tensor *v = view_of(base, g2(2, 5, (int64_t)1 << 31, 3, 7));
    ck_assert(ops_fill_(v, OPS_SCALAR_INT(-6)) == OPS_OK);
    ops_tensor *four = device_full(2, 5, 4, OPS_INT8);
    ops_tensor *q = ops_div_tensor_mode(v, four, "floor");
    ck_assert_msg(q != NULL, "div floor: %s", ops_last_error());
    ops_tensor *qh = copy_to(q, OPS_DEVICE_CPU);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(((int8_t *)ops_tensor_data_ptr(qh))[i], -2); /* floor(-6 / 4) */
    /* a zero in the second row, past 2^31 */
    ops_tensor *one = view_of(base, g1(1, 1, ((int64_t)1 << 31) + 7 + 3 * 4));
    ck_assert(ops_zero_(one) == OPS_OK);
    ck_assert(ops_remainder(four, v) == NULL);
    ck_assert_str_eq(ops_last_error(), "remainder: ZeroDivisionError (integer division or remainder by zero)");
    ops_tensor *all[] = {base, v, four, q, qh, one};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

START_TEST(test_where_keeps_bits)
{
    /* where moves elements as stored: a float16 NaN payload survives (a round trip
     * through float would make it the canonical NaN) */
    const int64_t n = 64;
    ops_tensor *h = ops_tensor_new("test", 1, &n, NULL, OPS_FLOAT16, OPS_DEVICE_CPU);
    ops_tensor *c = ops_tensor_new("test", 1, &n, NULL, OPS_BOOL, OPS_DEVICE_CPU);
    for (int64_t i = 0; i < n; i++) {
        ((uint16_t *)ops_tensor_data_ptr(h))[i] = (uint16_t)(0x7c01u + (unsigned)i); /* NaNs with payloads */
        ((bool *)ops_tensor_data_ptr(c))[i] = i % 3 != 0;
    }
    ops_tensor *z = ops_scalar_tensor(OPS_SCALAR_FLOAT(-1.5), OPS_FLOAT16);
    ops_tensor *dh = copy_to(h, DEV), *dc = copy_to(c, DEV);
    ops_tensor *got = ops_where_self(dc, dh, z);
    ck_assert_msg(got != NULL, "where: %s", ops_last_error());
    ops_tensor *back = copy_to(got, OPS_DEVICE_CPU);
    for (int64_t i = 0; i < n; i++)
        ck_assert_uint_eq(((uint16_t *)ops_tensor_data_ptr(back))[i], i % 3 != 0 ? 0x7c01u + (unsigned)i : 0xbe00u);
    ops_tensor *all[] = {h, c, z, dh, dc, got, back};
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
    TCase *tf = tcase_create("families");
    tcase_set_timeout(tf, 600);
    tcase_add_test(tf, test_integer_semantics_match_cpu);
    tcase_add_test(tf, test_float_semantics_match_cpu);
    tcase_add_test(tf, test_zero_divisor_found_everywhere);
    tcase_add_test(tf, test_host_scalar_operands);
    tcase_add_test(tf, test_binary_past_one_grid_and_strided);
    tcase_add_test(tf, test_binary_offsets_past_int32);
    tcase_add_test(tf, test_where_keeps_bits);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, tf);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

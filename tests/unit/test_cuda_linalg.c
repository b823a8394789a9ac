/* The CUDA linear algebra, convolution and search kernels against the CPU kernels
 * (the oracle) on the same data, for what the conformance cases do not reach: every
 * operand layout cuBLAS is given (row-major, transposed, padded leading dims, layouts
 * it cannot read, which are packed), every out= layout (the result's untouched
 * padding compared too), batch strides (permuted, broadcast, merged), matmul's batch
 * broadcast and folding, k == 0 and the alpha/beta rules, float16/bfloat16 within
 * their rounding, integer products through our tiled kernel, several blocks and
 * grid-strided batches, convolutions with stride/padding/dilation/groups (and
 * transposed), the data checks of the search kernels (run on the device, reported
 * before anything is written), and the TF32 switch.
 *
 * Without the CUDA backend or a device: SKIP (exit 77). */
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
#include "ops_interop.h"
#include "ops_op_addbmm.h"
#include "ops_op_addmm.h"
#include "ops_op_addmv.h"
#include "ops_op_arange.h"
#include "ops_op_argsort.h"
#include "ops_op_baddbmm.h"
#include "ops_op_bincount.h"
#include "ops_op_bmm.h"
#include "ops_op_bucketize.h"
#include "ops_op_contiguous.h"
#include "ops_op_conv1d.h"
#include "ops_op_conv2d.h"
#include "ops_op_conv_transpose2d.h"
#include "ops_op_copy.h"
#include "ops_op_dot.h"
#include "ops_op_expand.h"
#include "ops_op_full.h"
#include "ops_op_histc.h"
#include "ops_op_linear.h"
#include "ops_op_matmul.h"
#include "ops_op_mm.h"
#include "ops_op_mv.h"
#include "ops_op_narrow.h"
#include "ops_op_permute.h"
#include "ops_op_randint.h"
#include "ops_op_randn.h"
#include "ops_op_searchsorted.h"
#include "ops_op_slice.h"
#include "ops_op_t.h"
#include "ops_op_to.h"
#include "ops_op_transpose.h"
#include "ops_op_vdot.h"
#include "ops_cuda.h"
#include "ops_internal.h"
#include "ops_random.h"
#include "ops_scalar_math.h"

#ifdef OPS_WITH_CUDA

/* ---- helpers ----------------------------------------------------------------------- */

/* Tensors a test made, released at its end. */
#define KEEP_MAX 4096
static ops_tensor *kept[KEEP_MAX];
static int nkept;

static ops_tensor *
keep(ops_tensor *t)
{
    ck_assert_msg(t != NULL, "unexpected failure: %s", ops_last_error());
    ck_assert(nkept < KEEP_MAX);
    kept[nkept++] = t;
    return t;
}

static void
release_kept(void)
{
    while (nkept > 0)
        ops_tensor_release(kept[--nkept]);
}

static ops_tensor *
to_device(const ops_tensor *t, ops_device d)
{
    ops_tensor *r = keep(ops_tensor_new("test", t->ndim, t->sizes, NULL, t->dtype, d));
    ck_assert_msg(ops_copy_(r, t, false) == OPS_OK, "copy: %s", ops_last_error());
    return r;
}

static ops_tensor *
to_cuda(const ops_tensor *t)
{
    return to_device(t, OPS_DEVICE_CUDA(0));
}

/* Random values of dt: normal for floating dtypes, 0..6 for integers (products of
 * 50 terms stay exact in every integer dtype but the wrap-around of int8/uint8,
 * which both backends must agree on too). */
static ops_tensor *
rnd(int ndim, const int64_t *sizes, ops_dtype dt)
{
    const ops_int_list l = {sizes, ndim};
    if (ops_dtype_is_floating(dt)) {
        ops_tensor *f = keep(ops_randn(l, NULL, OPS_FLOAT64, OPS_DEVICE_CPU));
        return keep(ops_to_dtype(f, dt, false, true, OPS_MEMORY_FORMAT_NONE));
    }
    return keep(ops_randint(7, l, NULL, dt, OPS_DEVICE_CPU));
}

/* |got - want| <= atol + rtol * |want| everywhere (got on the device); NaNs match. */
static void
assert_close_tol(const ops_tensor *got, const ops_tensor *want, double atol, double rtol, const char *what)
{
    ck_assert_msg(ops_tensor_device(got).type == OPS_CUDA, "%s: result not on the device", what);
    ck_assert_msg(got->ndim == want->ndim, "%s: %d dims, want %d", what, (int)got->ndim, (int)want->ndim);
    for (int d = 0; d < want->ndim; d++)
        ck_assert_msg(got->sizes[d] == want->sizes[d], "%s: size %d is %lld, want %lld", what, d,
                      (long long)got->sizes[d], (long long)want->sizes[d]);
    ck_assert_msg(got->dtype == want->dtype, "%s: dtype %s, want %s", what, ops_dtype_name(got->dtype),
                  ops_dtype_name(want->dtype));
    ops_tensor *h = to_device(got, OPS_DEVICE_CPU);
    ops_tensor *a = keep(ops_to_dtype(h, OPS_FLOAT64, false, true, OPS_MEMORY_FORMAT_NONE));
    ops_tensor *b = keep(ops_to_dtype(want, OPS_FLOAT64, false, true, OPS_MEMORY_FORMAT_NONE));
    a = keep(ops_contiguous(a, OPS_CONTIGUOUS_FORMAT));
    b = keep(ops_contiguous(b, OPS_CONTIGUOUS_FORMAT));
    const double *pa = ops_tensor_data_ptr(a), *pb = ops_tensor_data_ptr(b);
    const int64_t n = ops_shape_numel(want->ndim, want->sizes);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(pb[i])) {
            ck_assert_msg(isnan(pa[i]), "%s: element %lld is %g, want nan", what, (long long)i, pa[i]);
            continue;
        }
        ck_assert_msg(fabs(pa[i] - pb[i]) <= atol + rtol * fabs(pb[i]), "%s: element %lld is %.9g, want %.9g", what,
                      (long long)i, pa[i], pb[i]);
    }
}

/* The tolerance of a dtype's products: accumulation order (float32/float64) and one
 * rounding of the result (float16/bfloat16); integers exact. */
static void
assert_close(const ops_tensor *got, const ops_tensor *want, const char *what)
{
    switch (want->dtype) {
    case OPS_FLOAT64: assert_close_tol(got, want, 1e-10, 1e-10, what); break;
    case OPS_FLOAT32: assert_close_tol(got, want, 1e-4, 1e-4, what); break;
    case OPS_FLOAT16: assert_close_tol(got, want, 1e-2, 2e-3, what); break;
    case OPS_BFLOAT16: assert_close_tol(got, want, 6e-2, 1.6e-2, what); break;
    default: assert_close_tol(got, want, 0, 0, what); break;
    }
}

/* Matrix layouts: the base tensor's shape for an r x c view, and the view. */
enum { L_ROW, L_COL, L_ROW_PAD, L_COL_PAD, L_STRIDED, L_COUNT };
static const char *const layout_names[L_COUNT] = {"row-major", "column-major", "row-major padded",
                                                  "column-major padded", "strided (packed)"};

static void
layout_base(int kind, int64_t r, int64_t c, int64_t *s)
{
    switch (kind) {
    case L_ROW: s[0] = r, s[1] = c; break;
    case L_COL: s[0] = c, s[1] = r; break;
    case L_ROW_PAD: s[0] = r, s[1] = c + 5; break;
    case L_COL_PAD: s[0] = c, s[1] = r + 3; break;
    default: s[0] = 2 * r, s[1] = 2 * c; break;
    }
}

static ops_tensor *
layout_view(int kind, const ops_tensor *base, int64_t r, int64_t c)
{
    switch (kind) {
    case L_ROW: return keep(ops_tensor_retain(base));
    case L_COL: return keep(ops_t(base));
    case L_ROW_PAD: return keep(ops_narrow(base, 1, 0, c));
    case L_COL_PAD: return keep(ops_t(keep(ops_narrow(base, 1, 0, r))));
    default: {
        const int64_t z = 0, e0 = 2 * r, e1 = 2 * c;
        return keep(ops_slice(keep(ops_slice(base, 0, &z, &e0, 2)), 1, &z, &e1, 2));
    }
    }
}

/* ---- mm: every operand and out layout ------------------------------------------------ */

static const ops_dtype mm_dtypes[] = {OPS_FLOAT32, OPS_FLOAT64, OPS_FLOAT16, OPS_BFLOAT16, OPS_INT32, OPS_INT8};

START_TEST(test_mm_layouts)
{
    const ops_dtype dt = mm_dtypes[_i];
    const int64_t m = 37, k = 53, n = 29; /* several 16 x 16 tiles, ragged edges */
    for (int la = 0; la < L_COUNT; la++)
        for (int lb = 0; lb < L_COUNT; lb++) {
            int64_t sa[2], sb[2];
            layout_base(la, m, k, sa);
            layout_base(lb, k, n, sb);
            ops_tensor *ba = rnd(2, sa, dt), *bb = rnd(2, sb, dt);
            ops_tensor *a = layout_view(la, ba, m, k), *b = layout_view(lb, bb, k, n);
            ops_tensor *ga = layout_view(la, to_cuda(ba), m, k), *gb = layout_view(lb, to_cuda(bb), k, n);
            char what[128];
            snprintf(what, sizeof what, "mm %s: A %s, B %s", ops_dtype_name(dt), layout_names[la], layout_names[lb]);
            assert_close(keep(ops_mm(ga, gb)), keep(ops_mm(a, b)), what);
        }
    /* out= in every layout: the whole base compared, so padding must stay as it was */
    const int64_t sa[2] = {m, k}, sb[2] = {k, n};
    ops_tensor *a = rnd(2, sa, dt), *b = rnd(2, sb, dt), *ga = to_cuda(a), *gb = to_cuda(b);
    for (int lo = 0; lo < L_COUNT; lo++) {
        int64_t so[2];
        layout_base(lo, m, n, so);
        ops_tensor *bo = rnd(2, so, dt), *gbo = to_cuda(bo);
        ck_assert(ops_mm_out(a, b, layout_view(lo, bo, m, n)) == OPS_OK);
        ck_assert_msg(ops_mm_out(ga, gb, layout_view(lo, gbo, m, n)) == OPS_OK, "%s", ops_last_error());
        char what[128];
        snprintf(what, sizeof what, "mm.out %s: out %s", ops_dtype_name(dt), layout_names[lo]);
        assert_close(gbo, bo, what);
    }
    release_kept();
}
END_TEST

/* ---- bmm: batch strides ------------------------------------------------------------- */

enum { B_CONTIG, B_TRANSPOSED, B_PERMUTED, B_BROADCAST, B_STRIDED, B_COUNT };

/* A B x r x c operand in batch layout kind, on the CPU and (same data) on the device. */
static void
batch_operand(int kind, int64_t B, int64_t r, int64_t c, ops_dtype dt, ops_tensor **cpu, ops_tensor **gpu)
{
    ops_tensor *base, *gbase;
    switch (kind) {
    case B_CONTIG:
        base = rnd(3, (int64_t[]){B, r, c}, dt);
        *cpu = base, *gpu = to_cuda(base);
        return;
    case B_TRANSPOSED:
        base = rnd(3, (int64_t[]){B, c, r}, dt), gbase = to_cuda(base);
        *cpu = keep(ops_transpose(base, 1, 2)), *gpu = keep(ops_transpose(gbase, 1, 2));
        return;
    case B_PERMUTED: /* the batch dim in the middle of memory */
        base = rnd(3, (int64_t[]){r, B, c}, dt), gbase = to_cuda(base);
        *cpu = keep(ops_permute(base, OPS_INTS(1, 0, 2))), *gpu = keep(ops_permute(gbase, OPS_INTS(1, 0, 2)));
        return;
    case B_BROADCAST: /* batch stride 0 */
        base = rnd(3, (int64_t[]){1, r, c}, dt), gbase = to_cuda(base);
        *cpu = keep(ops_expand(base, OPS_INTS(B, r, c), false)),
        *gpu = keep(ops_expand(gbase, OPS_INTS(B, r, c), false));
        return;
    default: {
        base = rnd(3, (int64_t[]){B, 2 * r, 2 * c}, dt), gbase = to_cuda(base);
        const int64_t z = 0, e1 = 2 * r, e2 = 2 * c;
        *cpu = keep(ops_slice(keep(ops_slice(base, 1, &z, &e1, 2)), 2, &z, &e2, 2));
        *gpu = keep(ops_slice(keep(ops_slice(gbase, 1, &z, &e1, 2)), 2, &z, &e2, 2));
        return;
    }
    }
}

static const ops_dtype bmm_dtypes[] = {OPS_FLOAT32, OPS_FLOAT16, OPS_INT64};

START_TEST(test_bmm_batch_layouts)
{
    const ops_dtype dt = bmm_dtypes[_i];
    const int64_t B = 6, m = 19, k = 21, n = 17;
    for (int la = 0; la < B_COUNT; la++)
        for (int lb = 0; lb < B_COUNT; lb++) {
            ops_tensor *a, *b, *ga, *gb;
            batch_operand(la, B, m, k, dt, &a, &ga);
            batch_operand(lb, B, k, n, dt, &b, &gb);
            char what[96];
            snprintf(what, sizeof what, "bmm %s: layouts %d, %d", ops_dtype_name(dt), la, lb);
            assert_close(keep(ops_bmm(ga, gb)), keep(ops_bmm(a, b)), what);
        }
    release_kept();
}
END_TEST

/* More result matrices than a grid's z dimension (65535): the loop kernel strides. */
START_TEST(test_bmm_many_batches)
{
    ops_tensor *a = rnd(3, (int64_t[]){70000, 2, 3}, OPS_INT32), *b = rnd(3, (int64_t[]){70000, 3, 2}, OPS_INT32);
    assert_close(keep(ops_bmm(to_cuda(a), to_cuda(b))), keep(ops_bmm(a, b)), "bmm int32 70000 batches");
    release_kept();
}
END_TEST

/* ---- matmul, linear: broadcast and folded batches, vectors ------------------------------ */

START_TEST(test_matmul_broadcast)
{
    static const int64_t shapes[][2][6] = {
        /* {ndim, sizes...} of a and b */
        {{5, 2, 1, 3, 7, 9}, {4, 4, 1, 9, 5}},  /* batch dims broadcast both ways */
        {{3, 5, 7, 9}, {2, 9, 6}},              /* (b, m, k) @ (k, n): folded into one gemm */
        {{1, 9}, {3, 4, 9, 6}},                 /* vector @ batched matrices */
        {{3, 4, 7, 9}, {1, 9}},                 /* batched matrices @ vector */
        {{1, 9}, {1, 9}},                       /* dot */
        {{2, 7, 9}, {2, 9, 1}},                 /* n == 1 */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int d = 0; d < 2; d++) {
            const ops_dtype dt = d == 0 ? OPS_FLOAT32 : OPS_BFLOAT16;
            const int64_t *sa = shapes[s][0], *sb = shapes[s][1];
            ops_tensor *a = rnd((int)sa[0], sa + 1, dt), *b = rnd((int)sb[0], sb + 1, dt);
            char what[64];
            snprintf(what, sizeof what, "matmul case %zu %s", s, ops_dtype_name(dt));
            assert_close(keep(ops_matmul(to_cuda(a), to_cuda(b))), keep(ops_matmul(a, b)), what);
        }
    }
    /* linear: weight read transposed, bias broadcast */
    ops_tensor *x = rnd(3, (int64_t[]){3, 5, 8}, OPS_FLOAT32), *w = rnd(2, (int64_t[]){6, 8}, OPS_FLOAT32);
    ops_tensor *bias = rnd(1, (int64_t[]){6}, OPS_FLOAT32);
    assert_close(keep(ops_linear(to_cuda(x), to_cuda(w), to_cuda(bias))), keep(ops_linear(x, w, bias)), "linear");
    release_kept();
}
END_TEST

/* ---- alpha/beta, k == 0, the other products -------------------------------------------- */

START_TEST(test_alpha_beta_and_empty)
{
    for (int d = 0; d < 3; d++) {
        const ops_dtype dt = d == 0 ? OPS_FLOAT32 : d == 1 ? OPS_FLOAT16 : OPS_INT64;
        const bool fl = ops_dtype_is_floating(dt);
        const ops_scalar alpha = fl ? OPS_SCALAR_FLOAT(1.5) : OPS_SCALAR_INT(3);
        const ops_scalar beta = fl ? OPS_SCALAR_FLOAT(-0.5) : OPS_SCALAR_INT(-2);
        char what[64];
        for (int64_t k = 0; k <= 7; k += 7) { /* k == 0: beta * self only */
            ops_tensor *self = rnd(2, (int64_t[]){5, 6}, dt), *m1 = rnd(2, (int64_t[]){5, k}, dt);
            ops_tensor *m2 = rnd(2, (int64_t[]){k, 6}, dt), *row = rnd(1, (int64_t[]){6}, dt);
            snprintf(what, sizeof what, "addmm %s k=%lld", ops_dtype_name(dt), (long long)k);
            assert_close(keep(ops_addmm(to_cuda(self), to_cuda(m1), to_cuda(m2), beta, alpha)),
                         keep(ops_addmm(self, m1, m2, beta, alpha)), what);
            snprintf(what, sizeof what, "addmm broadcast self %s k=%lld", ops_dtype_name(dt), (long long)k);
            assert_close(keep(ops_addmm(to_cuda(row), to_cuda(m1), to_cuda(m2), beta, alpha)),
                         keep(ops_addmm(row, m1, m2, beta, alpha)), what);
            ops_tensor *b1 = rnd(3, (int64_t[]){4, 5, k}, dt), *b2 = rnd(3, (int64_t[]){4, k, 6}, dt);
            ops_tensor *s3 = rnd(3, (int64_t[]){4, 5, 6}, dt);
            snprintf(what, sizeof what, "baddbmm %s k=%lld", ops_dtype_name(dt), (long long)k);
            assert_close(keep(ops_baddbmm(to_cuda(s3), to_cuda(b1), to_cuda(b2), beta, alpha)),
                         keep(ops_baddbmm(s3, b1, b2, beta, alpha)), what);
            snprintf(what, sizeof what, "addbmm %s k=%lld", ops_dtype_name(dt), (long long)k);
            assert_close(keep(ops_addbmm(to_cuda(self), to_cuda(b1), to_cuda(b2), beta, alpha)),
                         keep(ops_addbmm(self, b1, b2, beta, alpha)), what);
            /* in place on a transposed self */
            ops_tensor *st = rnd(2, (int64_t[]){6, 5}, dt), *gst = to_cuda(st);
            ck_assert(ops_addmm_(keep(ops_t(st)), m1, m2, beta, alpha) == OPS_OK);
            ck_assert_msg(ops_addmm_(keep(ops_t(gst)), to_cuda(m1), to_cuda(m2), beta, alpha) == OPS_OK, "%s",
                          ops_last_error());
            snprintf(what, sizeof what, "addmm_ transposed self %s k=%lld", ops_dtype_name(dt), (long long)k);
            assert_close(gst, st, what);
        }
        /* addbmm over no batches; matrix-vector products */
        ops_tensor *self = rnd(2, (int64_t[]){5, 6}, dt);
        ops_tensor *e1 = rnd(3, (int64_t[]){0, 5, 3}, dt), *e2 = rnd(3, (int64_t[]){0, 3, 6}, dt);
        assert_close(keep(ops_addbmm(to_cuda(self), to_cuda(e1), to_cuda(e2), beta, alpha)),
                     keep(ops_addbmm(self, e1, e2, beta, alpha)), "addbmm of no batches");
        ops_tensor *mat = rnd(2, (int64_t[]){9, 33}, dt), *vec = rnd(1, (int64_t[]){33}, dt),
                   *y = rnd(1, (int64_t[]){9}, dt);
        ops_tensor *gmat_t = keep(ops_t(to_cuda(keep(ops_contiguous(keep(ops_t(mat)), OPS_CONTIGUOUS_FORMAT)))));
        assert_close(keep(ops_addmv(to_cuda(y), gmat_t, to_cuda(vec), beta, alpha)),
                     keep(ops_addmv(y, mat, vec, beta, alpha)), "addmv, column-major mat");
        assert_close(keep(ops_mv(to_cuda(mat), to_cuda(vec))), keep(ops_mv(mat, vec)), "mv");
        /* dot of a strided vector */
        const int64_t z = 0, e = 66;
        ops_tensor *base = rnd(1, (int64_t[]){66}, dt);
        ops_tensor *v2 = keep(ops_slice(base, 0, &z, &e, 2)), *gv2 = keep(ops_slice(to_cuda(base), 0, &z, &e, 2));
        assert_close(keep(ops_dot(to_cuda(vec), gv2)), keep(ops_dot(vec, v2)), "dot");
        assert_close(keep(ops_vdot(to_cuda(vec), to_cuda(vec))), keep(ops_vdot(vec, vec)), "vdot");
    }
    /* beta == 0 ignores self, NaN included (the CPU's rule); no self: out's NaN is not read */
    ops_tensor *nan_self = keep(ops_full(OPS_INTS(4, 4), OPS_SCALAR_FLOAT(NAN), OPS_FLOAT32, OPS_DEVICE_CPU));
    ops_tensor *m1 = rnd(2, (int64_t[]){4, 3}, OPS_FLOAT32), *m2 = rnd(2, (int64_t[]){3, 4}, OPS_FLOAT32);
    assert_close(keep(ops_addmm(to_cuda(nan_self), to_cuda(m1), to_cuda(m2), OPS_SCALAR_INT(0), OPS_SCALAR_INT(1))),
                 keep(ops_mm(m1, m2)), "addmm beta=0 with NaN self");
    ops_tensor *gout = to_cuda(nan_self);
    ck_assert(ops_mm_out(to_cuda(m1), to_cuda(m2), gout) == OPS_OK);
    assert_close(gout, keep(ops_mm(m1, m2)), "mm.out into NaNs");
    /* empty results */
    ops_tensor *z1 = rnd(2, (int64_t[]){0, 3}, OPS_FLOAT32);
    assert_close(keep(ops_mm(to_cuda(z1), to_cuda(m2))), keep(ops_mm(z1, m2)), "mm with m == 0");
    release_kept();
}
END_TEST

/* ---- errors: the CPU's messages, nothing written -------------------------------------------- */

START_TEST(test_errors_match_cpu)
{
    ops_tensor *a = rnd(2, (int64_t[]){3, 4}, OPS_FLOAT32), *b = rnd(2, (int64_t[]){5, 6}, OPS_FLOAT32);
    char want[512];
    ck_assert_ptr_null(ops_mm(a, b));
    snprintf(want, sizeof want, "%s", ops_last_error());
    ck_assert_ptr_null(ops_mm(to_cuda(a), to_cuda(b)));
    ck_assert_str_eq(ops_last_error(), want);

    /* out of the wrong dtype: refused, out untouched */
    ops_tensor *c = rnd(2, (int64_t[]){4, 6}, OPS_FLOAT32), *o = rnd(2, (int64_t[]){3, 6}, OPS_FLOAT64);
    ops_tensor *go = to_cuda(o);
    ck_assert(ops_mm_out(a, c, o) != OPS_OK);
    snprintf(want, sizeof want, "%s", ops_last_error());
    ck_assert(ops_mm_out(to_cuda(a), to_cuda(c), go) != OPS_OK);
    ck_assert_str_eq(ops_last_error(), want);
    assert_close(go, o, "out after a refused mm.out");

    /* bool is refused as on the CPU */
    ops_tensor *t = keep(ops_full(OPS_INTS(2, 2), OPS_SCALAR_BOOL(true), OPS_BOOL, OPS_DEVICE_CPU));
    ck_assert_ptr_null(ops_mm(t, t));
    snprintf(want, sizeof want, "%s", ops_last_error());
    ck_assert_ptr_null(ops_mm(to_cuda(t), to_cuda(t)));
    ck_assert_str_eq(ops_last_error(), want);
    release_kept();
}
END_TEST

/* ---- convolution --------------------------------------------------------------------- */

/* int64: the exact integer path (int64 columns, the GEMM runner's integer kernel) */
static const ops_dtype conv_dtypes[] = {OPS_FLOAT32, OPS_FLOAT64, OPS_FLOAT16, OPS_BFLOAT16, OPS_INT64};

START_TEST(test_conv)
{
    const ops_dtype dt = conv_dtypes[_i];
    /* groups 2, stride (2, 1), padding (1, 2), dilation (2, 1), bias; a transposed input */
    ops_tensor *x = rnd(4, (int64_t[]){3, 4, 9, 11}, dt), *w = rnd(4, (int64_t[]){6, 2, 3, 3}, dt);
    ops_tensor *bias = rnd(1, (int64_t[]){6}, dt);
    ops_tensor *xt = keep(ops_transpose(x, 2, 3)), *gxt = keep(ops_transpose(to_cuda(x), 2, 3));
    char what[64];
    snprintf(what, sizeof what, "conv2d %s", ops_dtype_name(dt));
    assert_close(keep(ops_conv2d(gxt, to_cuda(w), to_cuda(bias), OPS_INTS(2, 1), OPS_INTS(1, 2), OPS_INTS(2, 1), 2)),
                 keep(ops_conv2d(xt, w, bias, OPS_INTS(2, 1), OPS_INTS(1, 2), OPS_INTS(2, 1), 2)), what);
    /* no bias, 1x1 kernel, unbatched */
    ops_tensor *x3 = rnd(3, (int64_t[]){4, 5, 6}, dt), *w1 = rnd(4, (int64_t[]){3, 4, 1, 1}, dt);
    snprintf(what, sizeof what, "conv2d 1x1 unbatched %s", ops_dtype_name(dt));
    assert_close(keep(ops_conv2d(to_cuda(x3), to_cuda(w1), NULL, OPS_INTS(1), OPS_INTS(0), OPS_INTS(1), 1)),
                 keep(ops_conv2d(x3, w1, NULL, OPS_INTS(1), OPS_INTS(0), OPS_INTS(1), 1)), what);
    /* conv1d */
    ops_tensor *x1 = rnd(3, (int64_t[]){2, 4, 17}, dt), *wk = rnd(3, (int64_t[]){4, 2, 5}, dt);
    snprintf(what, sizeof what, "conv1d %s", ops_dtype_name(dt));
    assert_close(keep(ops_conv1d(to_cuda(x1), to_cuda(wk), NULL, OPS_INTS(3), OPS_INTS(2), OPS_INTS(1), 2)),
                 keep(ops_conv1d(x1, wk, NULL, OPS_INTS(3), OPS_INTS(2), OPS_INTS(1), 2)), what);
    /* transposed: groups 2, stride (2, 3), padding (1, 0), output_padding (1, 2), dilation (1, 2) */
    ops_tensor *xi = rnd(4, (int64_t[]){2, 4, 5, 6}, dt), *wt = rnd(4, (int64_t[]){4, 3, 3, 2}, dt);
    ops_tensor *bt = rnd(1, (int64_t[]){6}, dt);
    snprintf(what, sizeof what, "conv_transpose2d %s", ops_dtype_name(dt));
    assert_close(keep(ops_conv_transpose2d_input(to_cuda(xi), to_cuda(wt), to_cuda(bt), OPS_INTS(2, 3), OPS_INTS(1, 0),
                                                 OPS_INTS(1, 2), 2, OPS_INTS(1, 2))),
                 keep(ops_conv_transpose2d_input(xi, wt, bt, OPS_INTS(2, 3), OPS_INTS(1, 0), OPS_INTS(1, 2), 2,
                                                 OPS_INTS(1, 2))),
                 what);
    /* a refused geometry: the CPU's message */
    char want[512];
    ck_assert_ptr_null(ops_conv2d(x, w, NULL, OPS_INTS(1), OPS_INTS(0), OPS_INTS(1), 3));
    snprintf(want, sizeof want, "%s", ops_last_error());
    ck_assert_ptr_null(ops_conv2d(to_cuda(x), to_cuda(w), NULL, OPS_INTS(1), OPS_INTS(0), OPS_INTS(1), 3));
    ck_assert_str_eq(ops_last_error(), want);
    release_kept();
}
END_TEST

/* ---- searchsorted, bincount, histc ----------------------------------------------------- */

START_TEST(test_search_and_count)
{
    /* 2-D boundaries through a sorter, both sides, an int32 result */
    ops_tensor *bnd = rnd(2, (int64_t[]){3, 50}, OPS_FLOAT32);
    ops_tensor *sorter = keep(ops_argsort(bnd, -1, false));
    ops_tensor *vals = rnd(2, (int64_t[]){3, 40}, OPS_FLOAT32);
    for (int right = 0; right < 2; right++) {
        assert_close(keep(ops_searchsorted(to_cuda(bnd), to_cuda(vals), right, right, NULL, to_cuda(sorter))),
                     keep(ops_searchsorted(bnd, vals, right, right, NULL, sorter)), "searchsorted with sorter");
    }
    ops_tensor *b1 = keep(ops_arange(OPS_SCALAR_INT(100), OPS_INT64, OPS_DEVICE_CPU));
    assert_close(keep(ops_bucketize_scalar(OPS_SCALAR_FLOAT(41.5), to_cuda(b1), false, true)),
                 keep(ops_bucketize_scalar(OPS_SCALAR_FLOAT(41.5), b1, false, true)), "bucketize a Scalar");
    /* a sorter index out of range: found on the device, the CPU's error, out untouched */
    ops_tensor *bad = keep(ops_full(OPS_INTS(3, 50), OPS_SCALAR_INT(50), OPS_INT64, OPS_DEVICE_CPU));
    ops_tensor *o = rnd(2, (int64_t[]){3, 40}, OPS_INT64), *go = to_cuda(o);
    char want[512];
    ck_assert(ops_searchsorted_tensor_out(bnd, vals, false, false, NULL, bad, o) != OPS_OK);
    snprintf(want, sizeof want, "%s", ops_last_error());
    ck_assert(ops_searchsorted_tensor_out(to_cuda(bnd), to_cuda(vals), false, false, NULL, to_cuda(bad), go) != OPS_OK);
    ck_assert_str_eq(ops_last_error(), want);
    assert_close(go, o, "out after a refused searchsorted");

    /* bincount: counts and float32 weights over more elements than a block */
    ops_tensor *x = rnd(1, (int64_t[]){5000}, OPS_INT64), *wt = rnd(1, (int64_t[]){5000}, OPS_FLOAT32);
    assert_close(keep(ops_bincount(to_cuda(x), NULL, 3)), keep(ops_bincount(x, NULL, 3)), "bincount");
    assert_close_tol(keep(ops_bincount(to_cuda(x), to_cuda(wt), 10)), keep(ops_bincount(x, wt, 10)), 1e-3, 1e-4,
                     "bincount with weights");
    ops_tensor *neg = keep(ops_full(OPS_INTS(4), OPS_SCALAR_INT(-1), OPS_INT64, OPS_DEVICE_CPU));
    ck_assert_ptr_null(ops_bincount(neg, NULL, 0));
    snprintf(want, sizeof want, "%s", ops_last_error());
    ck_assert_ptr_null(ops_bincount(to_cuda(neg), NULL, 0));
    ck_assert_str_eq(ops_last_error(), want);

    /* histc: the range from the data; float16 bins saturate as the CPU's do (2048) */
    ops_tensor *hx = rnd(1, (int64_t[]){3000}, OPS_FLOAT32);
    assert_close(keep(ops_histc(to_cuda(hx), 17, OPS_SCALAR_INT(0), OPS_SCALAR_INT(0))),
                 keep(ops_histc(hx, 17, OPS_SCALAR_INT(0), OPS_SCALAR_INT(0))), "histc");
    ops_tensor *same = keep(ops_full(OPS_INTS(3000), OPS_SCALAR_FLOAT(0.25), OPS_FLOAT16, OPS_DEVICE_CPU));
    ops_tensor *hs = keep(ops_histc(same, 4, OPS_SCALAR_INT(0), OPS_SCALAR_INT(1)));
    ck_assert_double_eq(ops_half_to_float(((const ops_half *)ops_tensor_data_ptr(hs))[1]), 2048.0);
    assert_close(keep(ops_histc(to_cuda(same), 4, OPS_SCALAR_INT(0), OPS_SCALAR_INT(1))), hs,
                 "histc float16 saturation");
    release_kept();
}
END_TEST

/* ---- TF32 --------------------------------------------------------------------------- */

START_TEST(test_tf32_switch)
{
    ck_assert(!ops_cuda_allow_tf32()); /* off by default */
    ops_tensor *a = rnd(2, (int64_t[]){64, 96}, OPS_FLOAT32), *b = rnd(2, (int64_t[]){96, 48}, OPS_FLOAT32);
    ops_tensor *want = keep(ops_mm(a, b));
    ck_assert(ops_cuda_set_allow_tf32(true) == OPS_OK);
    ck_assert(ops_cuda_allow_tf32());
    /* TF32 rounds the inputs to 10 mantissa bits: about 1e-3 relative per product */
    assert_close_tol(keep(ops_mm(to_cuda(a), to_cuda(b))), want, 0.1, 1e-2, "mm with TF32 allowed");
    ck_assert(ops_cuda_set_allow_tf32(false) == OPS_OK);
    ck_assert(!ops_cuda_allow_tf32());
    assert_close(keep(ops_mm(to_cuda(a), to_cuda(b))), want, "mm with TF32 off again");
    release_kept();
}
END_TEST

#endif

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
    ops_manual_seed(7);
    Suite *s = suite_create("cuda_linalg");
    TCase *tc = tcase_create("linalg");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_mm_layouts, 0, (int)(sizeof mm_dtypes / sizeof mm_dtypes[0]));
    tcase_add_loop_test(tc, test_bmm_batch_layouts, 0, (int)(sizeof bmm_dtypes / sizeof bmm_dtypes[0]));
    tcase_add_test(tc, test_bmm_many_batches);
    tcase_add_test(tc, test_matmul_broadcast);
    tcase_add_test(tc, test_alpha_beta_and_empty);
    tcase_add_test(tc, test_errors_match_cpu);
    tcase_add_loop_test(tc, test_conv, 0, (int)(sizeof conv_dtypes / sizeof conv_dtypes[0]));
    tcase_add_test(tc, test_search_and_count);
    tcase_add_test(tc, test_tf32_switch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

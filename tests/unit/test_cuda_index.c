/* The CUDA indexing and sorting kernels (kernels/cuda/index.cu, scatter.cu,
 * index_advanced.cu, sort.cu) on what the conformance cases do not reach: sizes past
 * one block and one grid, multi-pass sorts and scans, duplicate indices, NaN and tie
 * order, empty tensors, and errors that must leave out= and self untouched.  Every
 * result is compared with the CPU kernel's on the same input (an independent
 * implementation: kernels/cpu/), bit for bit: these kernels are deterministic and
 * follow the CPU's order.
 *
 * Exit status 77 (SKIP) without the CUDA backend or a device. */
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
#include "ops_op__unique2.h"
#include "ops_op_argsort.h"
#include "ops_op_contiguous.h"
#include "ops_op_copy.h"
#include "ops_op_empty.h"
#include "ops_op_gather.h"
#include "ops_op_gt.h"
#include "ops_op_index.h"
#include "ops_op_index_add.h"
#include "ops_op_index_put.h"
#include "ops_op_index_select.h"
#include "ops_op_kthvalue.h"
#include "ops_op_masked_select.h"
#include "ops_op_nonzero.h"
#include "ops_op_put.h"
#include "ops_op_scatter.h"
#include "ops_op_scatter_add.h"
#include "ops_op_scatter_reduce.h"
#include "ops_op_sort.h"
#include "ops_op_t.h"
#include "ops_op_take.h"
#include "ops_op_topk.h"
#include "ops_op_unique_consecutive.h"
#include "ops_op_unique_dim.h"
#include "ops_op_zeros.h"
#include "ops_cuda.h"
#include "ops_internal.h"

#ifdef OPS_WITH_CUDA

/* ---- helpers ------------------------------------------------------------------------ */

static ops_tensor *
to_dev(const ops_tensor *t)
{
    ops_tensor *d = ops_empty((ops_int_list){t->sizes, t->ndim}, t->dtype, OPS_DEVICE_CUDA(0), OPS_MEMORY_FORMAT_NONE);
    ck_assert_msg(d != NULL, "cuda alloc: %s", ops_last_error());
    ck_assert_msg(ops_copy_(d, t, false) == OPS_OK, "to cuda: %s", ops_last_error());
    return d;
}

static ops_tensor *
to_host(const ops_tensor *t)
{
    ops_tensor *h = ops_empty((ops_int_list){t->sizes, t->ndim}, t->dtype, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ck_assert_msg(h != NULL, "cpu alloc: %s", ops_last_error());
    ck_assert_msg(ops_copy_(h, t, false) == OPS_OK, "to cpu: %s", ops_last_error());
    return h;
}

/* cpu (a CPU result) and dev (the CUDA result) have one shape and dtype and the same
 * bytes; both are released. */
static void
expect_same(const char *what, ops_tensor *cpu, ops_tensor *dev)
{
    ck_assert_msg(cpu != NULL, "%s on cpu: %s", what, ops_last_error());
    ck_assert_msg(dev != NULL, "%s on cuda: %s", what, ops_last_error());
    ck_assert_msg(ops_tensor_device(dev).type == OPS_CUDA, "%s: result not on cuda", what);
    ops_tensor *h = to_host(dev), *c = ops_contiguous(cpu, OPS_CONTIGUOUS_FORMAT);
    ops_tensor *hc = ops_contiguous(h, OPS_CONTIGUOUS_FORMAT);
    ck_assert_int_eq(c->dtype, hc->dtype);
    ck_assert_int_eq(c->ndim, hc->ndim);
    for (int d = 0; d < c->ndim; d++)
        ck_assert_msg(c->sizes[d] == hc->sizes[d], "%s: size %d: %lld vs %lld", what, d, (long long)c->sizes[d],
                      (long long)hc->sizes[d]);
    const size_t n = (size_t)ops_tensor_numel(c) * ops_dtype_itemsize(c->dtype);
    const char *a = ops_tensor_data_ptr(c), *b = ops_tensor_data_ptr(hc);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(a[i] == b[i], "%s: byte %zu differs (element %zu)", what, i, i / ops_dtype_itemsize(c->dtype));
    ops_tensor_release(c);
    ops_tensor_release(hc);
    ops_tensor_release(h);
    ops_tensor_release(cpu);
    ops_tensor_release(dev);
}

/* Deterministic data: a linear congruential stream (no generator state shared). */
static uint64_t rng_state;

static uint64_t
rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return rng_state >> 33;
}

static ops_tensor *
ints(int ndim, const int64_t *sizes, int64_t lo, int64_t hi)
{
    ops_tensor *t = ops_empty((ops_int_list){sizes, ndim}, OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    int64_t *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < ops_tensor_numel(t); i++)
        p[i] = lo + (int64_t)(rng() % (uint64_t)(hi - lo));
    return t;
}

/* float32 values with many ties (k distinct values) and, when nan_every > 0, a NaN
 * every nan_every elements and some -0.0. */
static ops_tensor *
floats(int ndim, const int64_t *sizes, int k, int nan_every)
{
    ops_tensor *t = ops_empty((ops_int_list){sizes, ndim}, OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    float *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < ops_tensor_numel(t); i++) {
        p[i] = (float)((int64_t)(rng() % (uint64_t)k) - k / 2) * 0.25f;
        if (nan_every > 0 && i % nan_every == 3)
            p[i] = NAN;
        if (p[i] == 0.0f && (i & 1))
            p[i] = -0.0f;
    }
    return t;
}

/* ---- index_select, gather, take, masked ops ----------------------------------------- */

START_TEST(test_gather_family_large)
{
    rng_state = 1;
    /* more elements than one grid of IXC_MAX_GRID * IXC_BLOCK threads covers */
    ops_tensor *self = floats(2, (int64_t[]){3000, 700}, 1000, 0);
    ops_tensor *idx = ints(1, (int64_t[]){2500}, 0, 3000);
    ops_tensor *ds = to_dev(self), *di = to_dev(idx);
    expect_same("index_select", ops_index_select(self, 0, idx), ops_index_select(ds, 0, di));
    /* a strided self: the transpose */
    ops_tensor *t = ops_t(self), *dt = ops_t(ds), *idx2 = ints(1, (int64_t[]){900}, 0, 700);
    ops_tensor *di2 = to_dev(idx2);
    expect_same("index_select strided", ops_index_select(t, 0, idx2), ops_index_select(dt, 0, di2));
    ops_tensor *gi = ints(2, (int64_t[]){3000, 650}, 0, 3000), *dgi = to_dev(gi);
    expect_same("gather", ops_gather(self, 0, gi, false), ops_gather(ds, 0, dgi, false));
    ops_tensor *ti = ints(2, (int64_t[]){1500, 400}, -2100000, 2100000), *dti = to_dev(ti);
    expect_same("take", ops_take(self, ti), ops_take(ds, dti));
    ops_tensor *nz = floats(1, (int64_t[]){300001}, 3, 0), *dnz = to_dev(nz);
    expect_same("nonzero", ops_nonzero(nz), ops_nonzero(dnz));
    ops_tensor *m = ops_gt_scalar(self, OPS_SCALAR_FLOAT(10.0)), *dm = to_dev(m);
    expect_same("masked_select", ops_masked_select(self, m), ops_masked_select(ds, dm));
    ops_tensor *idxs[2] = {idx, NULL}, *didxs[2] = {di, NULL};
    expect_same("index", ops_index(self, (ops_tensor_list){(const ops_tensor *const *)idxs, 1}),
                ops_index(ds, (ops_tensor_list){(const ops_tensor *const *)didxs, 1}));
    ops_tensor *fl[1] = {m}, *dfl[1] = {dm};
    expect_same("index by mask", ops_index(self, (ops_tensor_list){(const ops_tensor *const *)fl, 1}),
                ops_index(ds, (ops_tensor_list){(const ops_tensor *const *)dfl, 1}));
    ops_tensor *all[] = {self, idx, ds, di, t, dt, idx2, di2, gi, dgi, ti, dti, nz, dnz, m, dm};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* ---- duplicates: scatter, index_add, put, index_put ----------------------------------- */

START_TEST(test_duplicate_indices)
{
    rng_state = 2;
    ops_tensor *self = floats(2, (int64_t[]){8, 3000}, 100, 0), *ds = to_dev(self);
    /* 64 rows of indices into 8 rows: every destination written ~8 times */
    ops_tensor *idx = ints(2, (int64_t[]){64, 3000}, 0, 8), *di = to_dev(idx);
    ops_tensor *src = floats(2, (int64_t[]){64, 3000}, 1000, 0), *dsrc = to_dev(src);
    expect_same("scatter (last write wins)", ops_scatter_src(self, 0, idx, src), ops_scatter_src(ds, 0, di, dsrc));
    expect_same("scatter_add float", ops_scatter_add(self, 0, idx, src), ops_scatter_add(ds, 0, di, dsrc));
    const char *reds[] = {"sum", "prod", "mean", "amax", "amin"};
    for (int r = 0; r < 5; r++)
        for (int inc = 0; inc < 2; inc++)
            expect_same(reds[r], ops_scatter_reduce_two(self, 0, idx, src, reds[r], inc),
                        ops_scatter_reduce_two(ds, 0, di, dsrc, reds[r], inc));
    ops_tensor *iself = ints(2, (int64_t[]){8, 3000}, -50, 50), *dis = to_dev(iself);
    ops_tensor *isrc = ints(2, (int64_t[]){64, 3000}, -1000, 1000), *disrc = to_dev(isrc);
    expect_same("scatter_reduce mean int", ops_scatter_reduce_two(iself, 0, idx, isrc, "mean", false),
                ops_scatter_reduce_two(dis, 0, di, disrc, "mean", false));
    /* index_add: 5000 slices into 8 */
    ops_tensor *ai = ints(1, (int64_t[]){5000}, 0, 8), *dai = to_dev(ai);
    ops_tensor *asrc = floats(2, (int64_t[]){5000, 3000}, 1000, 0), *dasrc = to_dev(asrc);
    expect_same("index_add", ops_index_add(self, 0, ai, asrc, OPS_SCALAR_FLOAT(0.5)),
                ops_index_add(ds, 0, dai, dasrc, OPS_SCALAR_FLOAT(0.5)));
    /* put / index_put with duplicates: last write wins; integer accumulation exact */
    ops_tensor *pi = ints(1, (int64_t[]){200000}, -24000, 24000), *dpi = to_dev(pi);
    ops_tensor *pv = floats(1, (int64_t[]){200000}, 1000, 0), *dpv = to_dev(pv);
    expect_same("put", ops_put(self, pi, pv, false), ops_put(ds, dpi, dpv, false));
    ops_tensor *pvi = ints(1, (int64_t[]){200000}, -1000, 1000), *dpvi = to_dev(pvi);
    expect_same("put accumulate int", ops_put(iself, pi, pvi, true), ops_put(dis, dpi, dpvi, true));
    ops_tensor *ri = ints(1, (int64_t[]){200000}, 0, 8), *dri = to_dev(ri);
    ops_tensor *ci = ints(1, (int64_t[]){200000}, -3000, 3000), *dci = to_dev(ci);
    ops_tensor *l[2] = {ri, ci}, *dl[2] = {dri, dci};
    expect_same("index_put", ops_index_put(self, (ops_tensor_list){(const ops_tensor *const *)l, 2}, pv, false),
                ops_index_put(ds, (ops_tensor_list){(const ops_tensor *const *)dl, 2}, dpv, false));
    expect_same("index_put accumulate int",
                ops_index_put(iself, (ops_tensor_list){(const ops_tensor *const *)l, 2}, pvi, true),
                ops_index_put(dis, (ops_tensor_list){(const ops_tensor *const *)dl, 2}, dpvi, true));
    ops_tensor *all[] = {self, ds, idx, di, src, dsrc, iself, dis, isrc, disrc, ai, dai, asrc, dasrc,
                         pi, dpi, pv, dpv, pvi, dpvi, ri, dri, ci, dci};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* ---- errors: the CPU's message, nothing written ------------------------------------------ */

/* A failed op on cuda leaves before (a device tensor) as it was. */
static void
expect_untouched(const char *what, const ops_tensor *host_before, const ops_tensor *dev_after)
{
    ops_tensor *h = to_host(dev_after);
    ck_assert_msg(memcmp(ops_tensor_data_ptr(host_before), ops_tensor_data_ptr(h),
                         (size_t)ops_tensor_numel(h) * ops_dtype_itemsize(h->dtype)) == 0,
                  "%s: written by a failed op", what);
    ops_tensor_release(h);
}

START_TEST(test_errors_leave_outputs)
{
    rng_state = 3;
    ops_tensor *self = floats(2, (int64_t[]){5, 4000}, 100, 0), *ds = to_dev(self);
    /* one bad index far into a long index tensor, another later */
    ops_tensor *idx = ints(1, (int64_t[]){100000}, 0, 5);
    ((int64_t *)ops_tensor_data_ptr(idx))[77777] = 5;
    ((int64_t *)ops_tensor_data_ptr(idx))[88888] = -9;
    ops_tensor *di = to_dev(idx);
    char cpu_msg[512];
    ops_tensor *out = ops_zeros(OPS_INTS(3, 3), OPS_FLOAT32, OPS_DEVICE_CPU), *dout = to_dev(out);
    ck_assert_int_ne(ops_index_select_out(self, 0, idx, out), OPS_OK);
    snprintf(cpu_msg, sizeof cpu_msg, "%s", ops_last_error());
    ck_assert_int_ne(ops_index_select_out(ds, 0, di, dout), OPS_OK);
    ck_assert_str_eq(ops_last_error(), cpu_msg);
    ck_assert_int_eq(dout->ndim, 2);
    expect_untouched("index_select out=", out, dout);
    /* scatter_ in place: self untouched */
    ops_tensor *sidx = ints(2, (int64_t[]){5, 4000}, 0, 5);
    ((int64_t *)ops_tensor_data_ptr(sidx))[12345] = 7;
    ops_tensor *dsidx = to_dev(sidx), *src = floats(2, (int64_t[]){5, 4000}, 10, 0), *dsrc = to_dev(src);
    ck_assert_int_ne(ops_scatter_src_(self, 0, sidx, src), OPS_OK);
    snprintf(cpu_msg, sizeof cpu_msg, "%s", ops_last_error());
    ck_assert_int_ne(ops_scatter_src_(ds, 0, dsidx, dsrc), OPS_OK);
    ck_assert_str_eq(ops_last_error(), cpu_msg);
    expect_untouched("scatter_ self", self, ds);
    /* index_add_ along dim 1, take, index with a bad index: the same messages */
    ops_tensor *aidx = ints(1, (int64_t[]){3000}, 0, 4000);
    ((int64_t *)ops_tensor_data_ptr(aidx))[2999] = 4000;
    ops_tensor *daidx = to_dev(aidx), *asrc = floats(2, (int64_t[]){5, 3000}, 10, 0), *dasrc = to_dev(asrc);
    ck_assert_int_ne(ops_index_add_(self, 1, aidx, asrc, OPS_SCALAR_INT(1)), OPS_OK);
    snprintf(cpu_msg, sizeof cpu_msg, "%s", ops_last_error());
    ck_assert_int_ne(ops_index_add_(ds, 1, daidx, dasrc, OPS_SCALAR_INT(1)), OPS_OK);
    ck_assert_str_eq(ops_last_error(), cpu_msg);
    expect_untouched("index_add_ self", self, ds);
    ops_tensor *tbad = ints(1, (int64_t[]){70000}, -20000, 20000);
    ((int64_t *)ops_tensor_data_ptr(tbad))[60000] = 20000;
    ops_tensor *dtbad = to_dev(tbad);
    ck_assert_ptr_null(ops_take(self, tbad));
    snprintf(cpu_msg, sizeof cpu_msg, "%s", ops_last_error());
    ck_assert_ptr_null(ops_take(ds, dtbad));
    ck_assert_str_eq(ops_last_error(), cpu_msg);
    ops_tensor *l[1] = {idx}, *dl[1] = {di};
    ck_assert_ptr_null(ops_index(self, (ops_tensor_list){(const ops_tensor *const *)l, 1}));
    snprintf(cpu_msg, sizeof cpu_msg, "%s", ops_last_error());
    ck_assert_ptr_null(ops_index(ds, (ops_tensor_list){(const ops_tensor *const *)dl, 1}));
    ck_assert_str_eq(ops_last_error(), cpu_msg);
    ops_tensor *all[] = {self, ds, idx, di, out, dout, sidx, dsidx, src, dsrc, tbad, dtbad, aidx, daidx, asrc, dasrc};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
}
END_TEST

/* ---- sorting ---------------------------------------------------------------------------- */

static void
expect_sort(const char *what, const ops_tensor *self, const ops_tensor *dself, int64_t dim, bool desc)
{
    ops_tensor *v, *i, *dv, *dix;
    ck_assert_int_eq(ops_sort(self, dim, desc, &v, &i), OPS_OK);
    ck_assert_msg(ops_sort(dself, dim, desc, &dv, &dix) == OPS_OK, "%s: %s", what, ops_last_error());
    expect_same(what, v, dv);
    expect_same(what, i, dix);
}

/* kind 0: unique_consecutive (dim may be NULL), 1: unique_dim, both against the CPU */
static void
expect_unique(const char *what, int kind, const ops_tensor *self, const ops_tensor *dself, const int64_t *dim)
{
    ops_tensor *u0, *u1, *u2, *d0, *d1, *d2;
    if (kind == 0) {
        ck_assert_int_eq(ops_unique_consecutive(self, true, true, dim, &u0, &u1, &u2), OPS_OK);
        ck_assert_msg(ops_unique_consecutive(dself, true, true, dim, &d0, &d1, &d2) == OPS_OK, "%s: %s", what,
                      ops_last_error());
    } else {
        ck_assert_int_eq(ops_unique_dim(self, *dim, true, true, true, &u0, &u1, &u2), OPS_OK);
        ck_assert_msg(ops_unique_dim(dself, *dim, true, true, true, &d0, &d1, &d2) == OPS_OK, "%s: %s", what,
                      ops_last_error());
    }
    expect_same(what, u0, d0);
    expect_same(what, u1, d1);
    expect_same(what, u2, d2);
}

START_TEST(test_sort_large)
{
    rng_state = 4;
    /* 2^20 elements: 1024 chunks and 10 merge passes; ties and NaNs throughout */
    ops_tensor *x = floats(1, (int64_t[]){1 << 20}, 5000, 997), *dx = to_dev(x);
    expect_sort("sort 1M", x, dx, 0, false);
    ops_tensor_release(x);
    ops_tensor_release(dx);
    /* 2^17 (128 chunks, 7 merge passes) for the rest: the emulation's time */
    x = floats(1, (int64_t[]){1 << 17}, 5000, 997), dx = to_dev(x);
    expect_sort("sort 128K descending", x, dx, 0, true);
    ops_tensor *v, *i, *dv, *dix;
    ck_assert_int_eq(ops_topk(x, 1000, 0, true, true, &v, &i), OPS_OK);
    ck_assert_int_eq(ops_topk(dx, 1000, 0, true, true, &dv, &dix), OPS_OK);
    expect_same("topk", v, dv);
    expect_same("topk indices", i, dix);
    ck_assert_int_eq(ops_kthvalue(x, 12345, 0, false, &v, &i), OPS_OK);
    ck_assert_int_eq(ops_kthvalue(dx, 12345, 0, false, &dv, &dix), OPS_OK);
    expect_same("kthvalue", v, dv);
    expect_same("kthvalue index", i, dix);
    ops_tensor *u0, *u1, *u2, *d0, *d1, *d2;
    ck_assert_int_eq(ops__unique2(x, true, true, true, &u0, &u1, &u2), OPS_OK);
    ck_assert_int_eq(ops__unique2(dx, true, true, true, &d0, &d1, &d2), OPS_OK);
    expect_same("unique", u0, d0);
    expect_same("unique inverse", u1, d1);
    expect_same("unique counts", u2, d2);
    ops_tensor_release(x);
    ops_tensor_release(dx);
}
END_TEST

START_TEST(test_sort_segments)
{
    rng_state = 5;
    /* lengths around the chunk size and powers of two, along the last dim and along a
     * strided dim, int and float, with ties */
    const int64_t lens[] = {0, 1, 2, 3, 31, 32, 33, 511, 1000, 1023, 1024, 1025, 2047, 2049, 5000};
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        char what[64];
        ops_tensor *x = floats(2, (int64_t[]){3, lens[l]}, 7, 13), *dx = to_dev(x);
        snprintf(what, sizeof what, "sort len %lld", (long long)lens[l]);
        expect_sort(what, x, dx, 1, false);
        expect_sort(what, x, dx, 1, true);
        ops_tensor *xt = ops_t(x), *dxt = ops_t(dx);
        expect_sort(what, xt, dxt, 0, true);
        ops_tensor *n = ints(2, (int64_t[]){lens[l], 3}, -5, 5), *dn = to_dev(n);
        expect_sort(what, n, dn, 0, false);
        if (lens[l] > 0) {
            ops_tensor *v, *i, *dv, *dix;
            const int64_t k = lens[l] / 2 + 1;
            ck_assert_int_eq(ops_topk(x, k, 1, false, true, &v, &i), OPS_OK);
            ck_assert_int_eq(ops_topk(dx, k, 1, false, true, &dv, &dix), OPS_OK);
            expect_same(what, v, dv);
            expect_same(what, i, dix);
            ck_assert_int_eq(ops_kthvalue(n, k, 0, true, &v, &i), OPS_OK);
            ck_assert_int_eq(ops_kthvalue(dn, k, 0, true, &dv, &dix), OPS_OK);
            expect_same(what, v, dv);
            expect_same(what, i, dix);
        }
        expect_unique(what, 0, n, dn, NULL);
        expect_unique(what, 0, n, dn, (int64_t[]){0});
        expect_unique(what, 1, n, dn, (int64_t[]){0});
        expect_unique(what, 1, x, dx, (int64_t[]){1});
        if (lens[l] <= 64) /* rows of len columns: one sort pass per column */
            expect_unique(what, 1, xt, dxt, (int64_t[]){1});
        ops_tensor *all[] = {x, dx, xt, dxt, n, dn};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            ops_tensor_release(all[i]);
    }
}
END_TEST

START_TEST(test_sort_nan_ties_order)
{
    /* NaN last ascending and first descending, -0.0 tied with 0.0 in input order */
    const float data[] = {1.0f, NAN, -0.0f, 0.0f, -INFINITY, NAN, 1.0f, INFINITY, -1.0f, 0.0f};
    ops_tensor *x = ops_tensor_from_data(data, OPS_INTS(10), OPS_FLOAT32), *dx = to_dev(x);
    expect_sort("nan/ties ascending", x, dx, 0, false);
    expect_sort("nan/ties descending", x, dx, 0, true);
    ops_tensor *i = ops_argsort(dx, 0, false), *h = to_host(i);
    const int64_t want[] = {4, 8, 2, 3, 9, 0, 6, 7, 1, 5};
    ck_assert_int_eq(memcmp(ops_tensor_data_ptr(h), want, sizeof want), 0);
    ops_tensor_release(i);
    ops_tensor_release(h);
    ops_tensor_release(x);
    ops_tensor_release(dx);
}
END_TEST

START_TEST(test_empty_tensors)
{
    ops_tensor *e = ops_zeros(OPS_INTS(0, 4), OPS_FLOAT32, OPS_DEVICE_CPU), *de = to_dev(e);
    ops_tensor *ei = ops_zeros(OPS_INTS(0), OPS_INT64, OPS_DEVICE_CPU), *dei = to_dev(ei);
    expect_same("nonzero empty", ops_nonzero(e), ops_nonzero(de));
    expect_same("index_select empty", ops_index_select(e, 1, ei), ops_index_select(de, 1, dei));
    expect_same("argsort empty", ops_argsort(e, 0, false), ops_argsort(de, 0, false));
    ops_tensor *u0, *u1, *u2, *d0, *d1, *d2;
    ck_assert_int_eq(ops__unique2(e, true, true, true, &u0, &u1, &u2), OPS_OK);
    ck_assert_int_eq(ops__unique2(de, true, true, true, &d0, &d1, &d2), OPS_OK);
    expect_same("unique empty", u0, d0);
    expect_same("unique empty inverse", u1, d1);
    expect_same("unique empty counts", u2, d2);
    ops_tensor *m = ops_zeros(OPS_INTS(0, 4), OPS_BOOL, OPS_DEVICE_CPU), *dm = to_dev(m);
    expect_same("masked_select empty", ops_masked_select(e, m), ops_masked_select(de, dm));
    ops_tensor *all[] = {e, de, ei, dei, m, dm};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        ops_tensor_release(all[i]);
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
    Suite *s = suite_create("cuda_index");
    TCase *tc = tcase_create("index");
    tcase_set_timeout(tc, 1200);
    tcase_add_test(tc, test_gather_family_large);
    tcase_add_test(tc, test_duplicate_indices);
    tcase_add_test(tc, test_errors_leave_outputs);
    tcase_add_test(tc, test_sort_large);
    tcase_add_test(tc, test_sort_segments);
    tcase_add_test(tc, test_sort_nan_ties_order);
    tcase_add_test(tc, test_empty_tensors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

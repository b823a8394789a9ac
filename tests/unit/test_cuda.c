/* The CUDA backend's runtime pieces: device discovery and properties, the caching
 * device allocator (statistics, empty_cache, out of memory as an error), the pinned
 * host allocator, and ops_scalar_math.h compiled for the device against the host.
 *
 * Without a device (or in a CPU-only build) the test reports itself skipped (exit
 * status 77, which meson shows as SKIP), never passed.  The per-op CUDA results are
 * compared against the CPU by the conformance suite once CUDA kernels exist. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/ops_cuda_check.h"
#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_op_add.h"
#include "ops_op_contiguous.h"
#include "ops_op_copy.h"
#include "ops_op_cpu.h"
#include "ops_op_expand.h"
#include "ops_op_full.h"
#include "ops_op_mul.h"
#include "ops_op_narrow.h"
#include "ops_op_ones.h"
#include "ops_op_select.h"
#include "ops_op_t.h"
#include "ops_op_to.h"
#include "ops_op_zeros.h"
#include "ops_cuda.h"
#include "ops_internal.h"
#include "ops_interop.h"
#include "ops_scalar_math.h"

#ifdef OPS_WITH_CUDA
START_TEST(test_device_memory)
{
    ops_tensor *t = ops_tensor_new("test", 2, (int64_t[]){64, 1024}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0));
    ck_assert_msg(t != NULL, "cuda:0 allocation failed: %s", ops_last_error());
    ops_device d = ops_tensor_device(t);
    ck_assert_int_eq(d.type, OPS_CUDA);
    ck_assert_int_eq(d.index, 0);
    ck_assert_ptr_nonnull(ops_tensor_data_ptr(t));
    ck_assert_uint_eq(ops_tensor_storage_nbytes(t), 64 * 1024 * sizeof(float));
    /* a view of device memory is metadata only */
    ops_tensor *v = ops_t(t);
    ck_assert_ptr_nonnull(v);
    ck_assert(ops_tensor_shares_storage(v, t));
    ops_tensor_release(v);
    ops_tensor_release(t);
}
END_TEST

START_TEST(test_bad_device_index)
{
    int n = ops_cuda_device_count();
    ck_assert_ptr_null(ops_tensor_new("zeros", 1, (int64_t[]){4}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(n)));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    char want[64];
    snprintf(want, sizeof want, "cuda:%d is not available", n);
    ck_assert_msg(strstr(ops_last_error(), want) != NULL, "message: %s", ops_last_error());
}
END_TEST

START_TEST(test_mixed_devices_rejected)
{
    ops_tensor *g = ops_tensor_new("test", 1, (int64_t[]){4}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0));
    ops_tensor *c = ops_ones(OPS_INTS(4), OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_null(ops_mul(g, c));
    ck_assert_msg(strstr(ops_last_error(), "same device") != NULL, "message: %s", ops_last_error());
    ops_tensor_release(g);
    ops_tensor_release(c);
}
END_TEST

START_TEST(test_device_properties)
{
    ops_cuda_device_properties p;
    ck_assert_int_eq(ops_cuda_get_device_properties(0, &p), OPS_OK);
    ck_assert(p.name[0] != 0);
    ck_assert_int_ge(p.major, 1);
    ck_assert_int_ge(p.multiprocessor_count, 1);
    ck_assert_int_eq(p.warp_size, 32);
    ck_assert_int_ge(p.max_threads_per_block, 256);
    ck_assert_int_gt(p.total_memory, 0);
    printf("cuda:0: %s, sm_%d%d, %d SMs, %.1f GiB\n", p.name, p.major, p.minor, p.multiprocessor_count,
           (double)p.total_memory / (1 << 30));
    ck_assert_int_eq(ops_cuda_get_device_properties(ops_cuda_device_count(), &p), OPS_ERR_DEVICE);
}
END_TEST

START_TEST(test_caching_allocator_stats)
{
    ck_assert_int_eq(ops_cuda_empty_cache(0), OPS_OK);
    ops_memory_stats a, b, c;
    ck_assert_int_eq(ops_cuda_memory_stats(0, &a), OPS_OK);
    ops_tensor *t = ops_tensor_new("test", 1, (int64_t[]){1000}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ops_cuda_memory_stats(0, &b), OPS_OK);
    ck_assert_int_eq(b.allocated_bytes - a.allocated_bytes, 4096); /* 4000 rounded to 512 */
    ck_assert_int_eq(b.num_allocs - a.num_allocs, 1);
    ck_assert_int_ge(b.reserved_bytes, b.allocated_bytes);
    void *data = ops_tensor_data_ptr(t);
    ops_tensor_release(t);
    /* freed on the default stream: the next same-size allocation reuses the block */
    ops_tensor *u = ops_tensor_new("test", 1, (int64_t[]){1000}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0));
    ck_assert_ptr_nonnull(u);
    ck_assert_ptr_eq(ops_tensor_data_ptr(u), data);
    ops_tensor_release(u);
    ck_assert_int_eq(ops_cuda_memory_stats(0, &c), OPS_OK);
    ck_assert_int_eq(c.allocated_bytes, a.allocated_bytes);
    ck_assert_int_ge(c.num_cache_hits - b.num_cache_hits, 1);
    ck_assert_int_eq(ops_cuda_empty_cache(0), OPS_OK);
    ck_assert_int_eq(ops_cuda_memory_stats(0, &c), OPS_OK);
    ck_assert_int_le(c.reserved_bytes, b.reserved_bytes);
}
END_TEST

START_TEST(test_out_of_memory_is_an_error)
{
    ops_cuda_device_properties p;
    ck_assert_int_eq(ops_cuda_get_device_properties(0, &p), OPS_OK);
    const ops_allocator *al = ops_device_allocator("test", OPS_DEVICE_CUDA(0));
    ck_assert_ptr_nonnull(al);
    ck_assert_ptr_null(al->alloc(al->ctx, (size_t)p.total_memory * 2));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ck_assert_msg(strstr(ops_last_error(), "tried to allocate") && strstr(ops_last_error(), "cuda:0"), "%s",
                  ops_last_error());
    ops_memory_stats st;
    ck_assert_int_eq(ops_cuda_memory_stats(0, &st), OPS_OK);
    ck_assert_int_ge(st.num_ooms, 1);
    /* the device is still usable */
    ops_tensor *t = ops_tensor_new("test", 1, (int64_t[]){16}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0));
    ck_assert_ptr_nonnull(t);
    ops_tensor_release(t);
}
END_TEST

START_TEST(test_pinned_allocator)
{
    const ops_allocator *al = ops_cuda_pinned_allocator();
    ck_assert_ptr_nonnull(al);
    float *p = al->alloc(al->ctx, 4096 * sizeof(float));
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i < 4096; i++) /* host memory: writable from the CPU */
        p[i] = (float)i;
    ck_assert(p[4095] == 4095.0f);
    ops_memory_stats st;
    ck_assert_int_eq(ops_cuda_pinned_memory_stats(&st), OPS_OK);
    ck_assert_int_ge(st.allocated_bytes, 4096 * (int64_t)sizeof(float));
    al->free(al->ctx, p, 4096 * sizeof(float));
    ck_assert_int_eq(ops_cuda_pinned_empty_cache(), OPS_OK);
    ck_assert_int_eq(ops_cuda_pinned_memory_stats(&st), OPS_OK);
    ck_assert_int_eq(st.allocated_bytes, 0);
    ck_assert_int_eq(st.reserved_bytes, 0);
}
END_TEST

/* ops_scalar_math.h on the device against the same header on the host: conversions
 * and rounding bit for bit; transcendental functions within a few ulps (the device's
 * expf/erfcf/tanhf are not glibc's). */
static float
host_eval(int fn, float x)
{
    switch (fn) {
#define OPS_X_(name, expr) \
    case OPS_SM_##name:    \
        return (expr);
        OPS_FOREACH_SCALAR_MATH_CHECK(OPS_X_)
#undef OPS_X_
    default:
        return 0.0f;
    }
}

START_TEST(test_scalar_math_device_matches_host)
{
    enum { N = 1 << 16 };
    float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    ck_assert(in && out);
    uint32_t u = 12345;
    for (int i = 0; i < N; i++) {
        u = u * 1664525u + 1013904223u;
        in[i] = i < 16 ? (float[]){0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 65504.0f, 65520.0f, 1e-8f,
                                   -1e-8f, INFINITY, -INFINITY, NAN, 3.0e38f, -7.25f}[i]
                       : (float)(int32_t)u * (i % 2 ? 1e-7f : 1e-9f); /* within +-215 and +-2.2 */
    }
    for (int fn = 0; fn < OPS_SM_COUNT; fn++) {
        ck_assert_int_eq(ops_cuda_scalar_math_eval(fn, in, out, N), OPS_OK);
        bool exact = fn != OPS_SM_SIGMOID && fn != OPS_SM_SILU && fn != OPS_SM_GELU && fn != OPS_SM_GELU_TANH &&
                     fn != OPS_SM_RSQRT;
        for (int i = 0; i < N; i++) {
            float want = host_eval(fn, in[i]), got = out[i];
            if (isnan(want)) {
                ck_assert_msg(isnan(got), "fn %d x=%a: %a, host NaN", fn, (double)in[i], (double)got);
                continue;
            }
            if (exact) {
                ck_assert_msg(ops_f32_bits(want) == ops_f32_bits(got), "fn %d x=%a: device %a host %a", fn,
                              (double)in[i], (double)got, (double)want);
            } else {
                /* a few ulps of the result, plus a few ulps of x for the cancellation
                 * in 1 + tanh(...) and 1 + erf(...) where the result is small */
                float tol = 8.0f * FLT_EPSILON * fabsf(want) + 4.0f * FLT_EPSILON * fabsf(in[i]) + 1e-30f;
                ck_assert_msg(want == got || fabsf(want - got) <= tol, "fn %d x=%a: device %a host %a", fn,
                              (double)in[i], (double)got, (double)want);
            }
        }
    }
    free(in);
    free(out);
}
END_TEST

/* ---- copies, to(device), item, printing, autograd and DLPack across devices ----
 * Oracle: the same operation done on CPU twins of the tensors (the CPU copy is
 * independently tested by the conformance suite), device results read back as bytes. */

/* Halves in [0, 100): every dtype holds them (floats exactly; integers truncate the
 * same way on every path), and no conversion is out of range. */
static ops_tensor *
host_values(int ndim, const int64_t *sizes, ops_dtype dt, unsigned seed)
{
    const int64_t n = ops_shape_numel(ndim, sizes);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((seed * 7919u + (uint64_t)i * 104729u) % 200u) / 2.0;
    ops_tensor *f = ops_tensor_from_data(v, (ops_int_list){sizes, ndim}, OPS_FLOAT64);
    free(v);
    ck_assert_ptr_nonnull(f);
    ops_tensor *t = ops_to_dtype(f, dt, false, false, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(t);
    ops_tensor_release(f);
    return t;
}

/* A contiguous CPU copy of t (contiguous, any device) by the plainest path there is:
 * one device-to-host cudaMemcpy of the bytes (the H->D->H byte round trip of
 * test_copy_non_blocking_pinned checks that path against the source memory). */
static ops_tensor *
read_back(const ops_tensor *t)
{
    ck_assert(ops_tensor_is_contiguous(t));
    ops_tensor *h = ops_to_device(t, OPS_DEVICE_CPU, OPS_DTYPE_NONE, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_msg(h != NULL, "%s", ops_last_error());
    return h;
}

/* got (any device, contiguous) holds exactly want's values (CPU), same dtype/shape. */
static void
assert_same(const ops_tensor *got, const ops_tensor *want, const char *what)
{
    ck_assert_msg(got != NULL, "%s: %s", what, ops_last_error());
    ck_assert_msg(got->dtype == want->dtype, "%s: dtype %s, want %s", what, ops_dtype_name(got->dtype),
                  ops_dtype_name(want->dtype));
    ck_assert_int_eq(got->ndim, want->ndim);
    for (int i = 0; i < got->ndim; i++)
        ck_assert_int_eq(got->sizes[i], want->sizes[i]);
    ops_tensor *g = read_back(got);
    ops_tensor *w = ops_contiguous(want, OPS_CONTIGUOUS_FORMAT);
    const size_t n = (size_t)ops_tensor_numel(w) * ops_tensor_itemsize(w);
    ck_assert_msg(memcmp(ops_tensor_data_ptr(g), ops_tensor_data_ptr(w), n) == 0, "%s: values differ", what);
    ops_tensor_release(g);
    ops_tensor_release(w);
}

static ops_tensor *
on(const ops_tensor *t, ops_device d)
{
    ops_tensor *r = ops_to_device(t, d, OPS_DTYPE_NONE, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_msg(r != NULL, "to(%d:%d): %s", d.type, d.index, ops_last_error());
    return r;
}

START_TEST(test_copy_every_dtype_pair)
{
    const int64_t sz[] = {3, 5};
    for (int sd = 0; sd < OPS_NUM_DTYPES; sd++)
        for (int dd = 0; dd < OPS_NUM_DTYPES; dd++) {
            char what[96];
            ops_tensor *h = host_values(2, sz, (ops_dtype)sd, (unsigned)(sd * 16 + dd));
            ops_tensor *want = ops_to_dtype(h, (ops_dtype)dd, false, true, OPS_MEMORY_FORMAT_NONE);
            /* host -> device, converting on the way */
            ops_tensor *d = ops_to_device(h, OPS_DEVICE_CUDA(0), (ops_dtype)dd, false, false, OPS_MEMORY_FORMAT_NONE);
            snprintf(what, sizeof what, "%s -> cuda %s", ops_dtype_name(sd), ops_dtype_name(dd));
            assert_same(d, want, what);
            /* device -> host, converting */
            ops_tensor *ds = on(h, OPS_DEVICE_CUDA(0));
            ops_tensor *back = ops_to_device(ds, OPS_DEVICE_CPU, (ops_dtype)dd, false, false, OPS_MEMORY_FORMAT_NONE);
            snprintf(what, sizeof what, "cuda %s -> cpu %s", ops_dtype_name(sd), ops_dtype_name(dd));
            assert_same(back, want, what);
            /* device -> device on one device (copy_ into an existing tensor) */
            ops_tensor *dd2 = ops_tensor_new("test", 2, sz, NULL, (ops_dtype)dd, OPS_DEVICE_CUDA(0));
            ck_assert_int_eq(ops_copy_(dd2, ds, false), OPS_OK);
            snprintf(what, sizeof what, "cuda %s -> cuda %s", ops_dtype_name(sd), ops_dtype_name(dd));
            assert_same(dd2, want, what);
            ops_tensor *objs[] = {h, want, d, ds, back, dd2};
            for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
                ops_tensor_release(objs[i]);
        }
}
END_TEST

/* Views applied alike to a CPU tensor and its device twin. */
typedef ops_tensor *(*view_fn)(ops_tensor *base);
static ops_tensor *
v_same(ops_tensor *b)
{
    return ops_tensor_retain(b);
}
static ops_tensor *
v_transposed(ops_tensor *b)
{
    return ops_t(b);
}
static ops_tensor *
v_sliced(ops_tensor *b)
{
    return ops_narrow(b, 1, 1, 4);
}
static ops_tensor *
v_flipped(ops_tensor *b) /* negative strides, both dims, offset at the last element */
{
    const int64_t sizes[] = {b->sizes[0], b->sizes[1]};
    const int64_t strides[] = {-b->strides[0], -b->strides[1]};
    return ops_tensor_new_view(b, 2, sizes, strides, b->offset + (sizes[0] - 1) * b->strides[0] +
                                                          (sizes[1] - 1) * b->strides[1]);
}
static ops_tensor *
v_row_broadcast(ops_tensor *b) /* stride 0: row 0 repeated (a source only) */
{
    ops_tensor *r = ops_narrow(b, 0, 0, 1);
    ops_tensor *e = ops_expand(r, OPS_INTS(b->sizes[0], b->sizes[1]), false);
    ops_tensor_release(r);
    return e;
}

START_TEST(test_copy_layouts)
{
    /* dst base [6, 6] viewed by dst_views, src base [6, 6] viewed by src_views; a
     * narrow view is [6, 4], so it pairs with itself or a transposed-narrow only: pair
     * same-shaped views */
    struct {
        view_fn dst, src;
        const char *name;
    } cases[] = {
        {v_same, v_transposed, "contiguous <- transposed"},
        {v_transposed, v_same, "transposed <- contiguous"},
        {v_sliced, v_sliced, "sliced <- sliced"},
        {v_same, v_flipped, "contiguous <- negative strides"},
        {v_flipped, v_transposed, "negative strides <- transposed"},
        {v_same, v_row_broadcast, "contiguous <- broadcast"},
        {v_transposed, v_row_broadcast, "transposed <- broadcast"},
    };
    const int64_t sz[] = {6, 6};
    const ops_dtype dts[][2] = {{OPS_FLOAT32, OPS_FLOAT32}, {OPS_FLOAT32, OPS_INT64}, {OPS_BFLOAT16, OPS_FLOAT64}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (size_t k = 0; k < sizeof dts / sizeof *dts; k++)
            for (int dir = 0; dir < 3; dir++) { /* H->D, D->H, D->D */
                const ops_device ddev = dir == 1 ? OPS_DEVICE_CPU : OPS_DEVICE_CUDA(0);
                const ops_device sdev = dir == 0 ? OPS_DEVICE_CPU : OPS_DEVICE_CUDA(0);
                ops_tensor *dbase_c = host_values(2, sz, dts[k][0], 1), *sbase_c = host_values(2, sz, dts[k][1], 2);
                ops_tensor *dbase = on(dbase_c, ddev), *sbase = on(sbase_c, sdev);
                ops_tensor *dv_c = cases[c].dst(dbase_c), *sv_c = cases[c].src(sbase_c);
                ops_tensor *dv = cases[c].dst(dbase), *sv = cases[c].src(sbase);
                ck_assert_int_eq(ops_copy_(dv_c, sv_c, false), OPS_OK);
                ck_assert_msg(ops_copy_(dv, sv, false) == OPS_OK, "%s dir %d: %s", cases[c].name, dir,
                              ops_last_error());
                char what[128];
                snprintf(what, sizeof what, "%s, %s <- %s, direction %d", cases[c].name, ops_dtype_name(dts[k][0]),
                         ops_dtype_name(dts[k][1]), dir);
                assert_same(dbase, dbase_c, what);
                /* the source is untouched */
                assert_same(sbase, sbase_c, what);
                ops_tensor *objs[] = {dbase_c, sbase_c, dbase, sbase, dv_c, sv_c, dv, sv};
                for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
                    ops_tensor_release(objs[i]);
            }
}
END_TEST

START_TEST(test_copy_empty_and_scalar)
{
    ops_tensor *e = host_values(2, (int64_t[]){0, 3}, OPS_FLOAT32, 0);
    ops_tensor *de = ops_to_device(e, OPS_DEVICE_CUDA(0), OPS_INT32, false, false, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(de);
    ck_assert_int_eq(de->sizes[0], 0);
    ck_assert_int_eq(de->sizes[1], 3);
    ops_tensor *he = ops_cpu(de);
    ck_assert_ptr_nonnull(he);
    ck_assert_int_eq(ops_tensor_numel(he), 0);
    ck_assert_int_eq(ops_tensor_device(he).type, OPS_CPU);

    ops_tensor *s = ops_scalar_tensor(OPS_SCALAR_FLOAT(2.5), OPS_FLOAT64);
    ops_tensor *ds = ops_to_device(s, OPS_DEVICE_CUDA(0), OPS_FLOAT16, false, false, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(ds);
    ck_assert_int_eq(ds->ndim, 0);
    ops_scalar v;
    ck_assert_int_eq(ops_tensor_item(ds, &v), OPS_OK);
    ck_assert(v.kind == OPS_SCALAR_FLOAT && v.v.f == 2.5);
    /* a 0-dim source broadcast into a device matrix */
    ops_tensor *m = ops_tensor_new("test", 2, (int64_t[]){4, 3}, NULL, OPS_INT64, OPS_DEVICE_CUDA(0));
    ck_assert_int_eq(ops_copy_(m, s, false), OPS_OK);
    ops_tensor *mw = ops_full(OPS_INTS(4, 3), OPS_SCALAR_INT(2), OPS_INT64, OPS_DEVICE_CPU);
    assert_same(m, mw, "0-dim broadcast into cuda");
    /* shape errors before anything is written, with the CPU copy's message */
    ops_tensor *bad = host_values(1, (int64_t[]){5}, OPS_FLOAT32, 3);
    ck_assert_int_ne(ops_copy_(m, bad, false), OPS_OK);
    ck_assert_msg(strstr(ops_last_error(), "must match the size of") != NULL, "%s", ops_last_error());
    assert_same(m, mw, "unchanged after a failed copy");
    ops_tensor *objs[] = {e, de, he, s, ds, m, mw, bad};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        ops_tensor_release(objs[i]);
}
END_TEST

START_TEST(test_copy_non_blocking_pinned)
{
    ops_tensor *h = host_values(2, (int64_t[]){32, 32}, OPS_FLOAT32, 4);
    ops_tensor *src = ops_tensor_pin_memory(h);
    ck_assert_msg(src != NULL, "%s", ops_last_error());
    ck_assert(ops_tensor_is_pinned(src));
    ck_assert(!ops_tensor_is_pinned(h));
    ops_tensor *again = ops_tensor_pin_memory(src);
    ck_assert_ptr_eq(again, src); /* pinned already: itself */
    ops_tensor_release(again);
    ops_tensor *dst = ops_zeros(OPS_INTS(32, 32), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *pdst = ops_tensor_pin_memory(dst);
    ops_tensor *d = ops_tensor_new("test", 2, (int64_t[]){32, 32}, NULL, OPS_FLOAT32, OPS_DEVICE_CUDA(0));
    /* host -> device -> host, both asynchronous (direct transfers with a pinned end) */
    ck_assert_int_eq(ops_copy_(d, src, true), OPS_OK);
    ck_assert_int_eq(ops_copy_(pdst, d, true), OPS_OK);
    /* a read on the same stream waits for both transfers */
    ops_tensor *row = ops_select(d, 0, 31);
    ops_tensor *last = ops_select(row, 0, 31);
    ops_scalar v;
    ck_assert_int_eq(ops_tensor_item(last, &v), OPS_OK);
    ck_assert_int_eq(memcmp(ops_tensor_data_ptr(pdst), ops_tensor_data_ptr(h), 1024 * sizeof(float)), 0);
    ck_assert(v.v.f == (double)((const float *)ops_tensor_data_ptr(h))[1023]);
    ops_tensor *objs[] = {h, src, dst, pdst, d, row, last};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        ops_tensor_release(objs[i]);
}
END_TEST

START_TEST(test_to_identity_and_item_and_print)
{
    ops_tensor *h = host_values(2, (int64_t[]){2, 3}, OPS_FLOAT32, 5);
    ops_tensor *d = on(h, OPS_DEVICE_CUDA(0));
    ck_assert_int_eq(ops_tensor_device(d).type, OPS_CUDA);
    /* nothing changes: self itself; copy=True or a dtype change: a new tensor */
    ops_tensor *same = ops_to_device(d, OPS_DEVICE_CUDA(0), OPS_FLOAT32, false, false, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_eq(same, d);
    ops_tensor *copied = ops_to_device(d, OPS_DEVICE_CUDA(0), OPS_DTYPE_NONE, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_ne(copied, d);
    ck_assert(!ops_tensor_shares_storage(copied, d));
    assert_same(copied, h, "to(copy=True)");
    ops_tensor *other = ops_to_other(h, d, false, false, OPS_MEMORY_FORMAT_NONE);
    ck_assert_int_eq(ops_tensor_device(other).type, OPS_CUDA);
    assert_same(other, h, "to(other)");
    ops_tensor *cpu_same = ops_cpu(h);
    ck_assert_ptr_eq(cpu_same, h);
    /* item of one device element (a view into the middle of the storage) */
    ops_tensor *row = ops_select(d, 0, 1);
    ops_tensor *el = ops_select(row, 0, 2);
    ops_tensor *hrow = ops_select(h, 0, 1);
    ops_tensor *hel = ops_select(hrow, 0, 2);
    ops_scalar a, b;
    ck_assert_int_eq(ops_tensor_item(el, &a), OPS_OK);
    ck_assert_int_eq(ops_tensor_item(hel, &b), OPS_OK);
    ck_assert(a.kind == b.kind && a.v.f == b.v.f);
    ck_assert_int_ne(ops_tensor_item(d, &a), OPS_OK); /* 6 elements */
    /* printing: the host text plus the device */
    char *sd = ops_tensor_to_string(d), *sh = ops_tensor_to_string(h);
    ck_assert_ptr_nonnull(sd);
    ck_assert_msg(strstr(sd, "device=cuda:0") != NULL, "%s", sd);
    const char *cut = strstr(sd, "device=");
    ck_assert_msg(strncmp(sd, sh, (size_t)(cut - sd)) == 0, "%s\nvs\n%s", sd, sh);
    free(sd);
    free(sh);
    ops_tensor *objs[] = {h, d, same, copied, other, cpu_same, row, el, hrow, hel};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        ops_tensor_release(objs[i]);
}
END_TEST

START_TEST(test_mixed_devices_and_cpu_scalars)
{
    ops_tensor *h = host_values(2, (int64_t[]){2, 3}, OPS_FLOAT32, 6);
    ops_tensor *d = on(h, OPS_DEVICE_CUDA(0));
    /* a cpu tensor with dims next to a cuda one: the strict error, naming both */
    ck_assert_ptr_null(ops_add(d, h, OPS_SCALAR_INT(1)));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_msg(strstr(ops_last_error(), "expected all tensors to be on the same device, but found self on "
                                           "cuda:0 and other on cpu") != NULL,
                  "%s", ops_last_error());
    /* an out= on the cpu for a cuda op, and a 0-dim cpu tensor as in-place self */
    ops_tensor *s = ops_scalar_tensor(OPS_SCALAR_FLOAT(1.5), OPS_FLOAT64);
    ck_assert_int_ne(ops_add_out(d, s, OPS_SCALAR_INT(1), h), OPS_OK);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    ck_assert_int_ne(ops_add_(s, d, OPS_SCALAR_INT(1)), OPS_OK);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_DEVICE);
    /* a cpu 0-dim tensor joins a cuda add (read on the host), either side, and does
     * not promote float32 to float64 (a 0-dim tensor promotes by category only) */
    ops_tensor *r1 = ops_add(d, s, OPS_SCALAR_INT(2)), *r2 = ops_add(s, d, OPS_SCALAR_INT(1));
    ops_tensor *w1 = ops_add(h, s, OPS_SCALAR_INT(2)), *w2 = ops_add(s, h, OPS_SCALAR_INT(1));
    ck_assert_msg(r1 != NULL && r2 != NULL, "%s", ops_last_error());
    ck_assert_int_eq(ops_tensor_device(r1).type, OPS_CUDA);
    ck_assert_int_eq(ops_tensor_device(r2).type, OPS_CUDA);
    assert_same(r1, w1, "cuda + cpu 0-dim");
    assert_same(r2, w2, "cpu 0-dim + cuda");
    /* a cuda one-element input of another dtype is converted on the device */
    ops_tensor *one = ops_to_device(s, OPS_DEVICE_CUDA(0), OPS_INT32, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *hone = ops_to_dtype(s, OPS_INT32, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *r3 = ops_mul(d, one), *w3 = ops_mul(h, hone);
    assert_same(r3, w3, "cuda * cuda one-element int32");
    if (ops_cuda_device_count() >= 2) {
        ops_tensor *d1 = on(h, OPS_DEVICE_CUDA(1));
        ck_assert_ptr_null(ops_add(d, d1, OPS_SCALAR_INT(1)));
        ck_assert_msg(strstr(ops_last_error(), "found self on cuda:0 and other on cuda:1") != NULL, "%s",
                      ops_last_error());
        /* cuda:0 -> cuda:1 with a conversion and a transposed source */
        ops_tensor *t0 = ops_t(d), *th = ops_t(h);
        ops_tensor *x1 = ops_to_device(t0, OPS_DEVICE_CUDA(1), OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE);
        ops_tensor *xw = ops_to_dtype(th, OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE);
        ck_assert_int_eq(ops_tensor_device(x1).index, 1);
        ops_tensor *x1c = ops_contiguous(x1, OPS_CONTIGUOUS_FORMAT);
        assert_same(x1c, xw, "cuda:0 transposed -> cuda:1 float64");
        ops_tensor *objs[] = {d1, t0, th, x1, xw, x1c};
        for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
            ops_tensor_release(objs[i]);
    }
    ops_tensor *objs[] = {h, d, s, r1, r2, w1, w2, one, hone, r3, w3};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        ops_tensor_release(objs[i]);
}
END_TEST

/* y = x * w + x, backward with gradient g, on dev: x.grad and w.grad (on the cpu). */
static void
small_graph_grads(ops_device dev, ops_tensor **gx, ops_tensor **gw)
{
    ops_tensor *xh = host_values(2, (int64_t[]){3, 4}, OPS_FLOAT32, 8);
    ops_tensor *wh = host_values(1, (int64_t[]){4}, OPS_FLOAT32, 9);
    ops_tensor *gh = host_values(2, (int64_t[]){3, 4}, OPS_FLOAT32, 10);
    ops_tensor *x = on(xh, dev), *w = on(wh, dev), *g = on(gh, dev);
    ops_tensor_set_requires_grad(x, true);
    ops_tensor_set_requires_grad(w, true);
    ops_tensor *xw = ops_mul(x, w);
    ops_tensor *y = ops_add(xw, x, OPS_SCALAR_INT(1));
    ck_assert_msg(y != NULL, "%s", ops_last_error());
    ck_assert_msg(ops_backward(y, g, false, false) == OPS_OK, "%s", ops_last_error());
    ops_tensor *a = ops_tensor_grad(x), *b = ops_tensor_grad(w);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert(ops_device_equal(ops_tensor_device(a), dev));
    ck_assert(ops_device_equal(ops_tensor_device(b), dev));
    *gx = ops_contiguous(a, OPS_CONTIGUOUS_FORMAT);
    *gw = ops_contiguous(b, OPS_CONTIGUOUS_FORMAT);
    ops_tensor *objs[] = {xh, wh, gh, x, w, g, xw, y, a, b};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        ops_tensor_release(objs[i]);
}

START_TEST(test_autograd_on_cuda)
{
    ops_tensor *cx, *cw, *dx, *dw;
    small_graph_grads(OPS_DEVICE_CPU, &cx, &cw);
    small_graph_grads(OPS_DEVICE_CUDA(0), &dx, &dw);
    assert_same(dx, cx, "x.grad on cuda");
    assert_same(dw, cw, "w.grad on cuda");
    /* through to(device): the gradient comes back to the cpu leaf in its dtype */
    ops_tensor *xh = host_values(1, (int64_t[]){5}, OPS_FLOAT64, 11);
    ops_tensor_set_requires_grad(xh, true);
    ops_tensor *xd = ops_to_device(xh, OPS_DEVICE_CUDA(0), OPS_FLOAT32, false, false, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *back = ops_cpu(xd);
    ops_tensor *seed = host_values(1, (int64_t[]){5}, OPS_FLOAT32, 12);
    ck_assert_msg(ops_backward(back, seed, false, false) == OPS_OK, "%s", ops_last_error());
    ops_tensor *gx = ops_tensor_grad(xh);
    ck_assert_ptr_nonnull(gx);
    ops_tensor *want = ops_to_dtype(seed, OPS_FLOAT64, false, false, OPS_MEMORY_FORMAT_NONE);
    assert_same(gx, want, "grad through to(cuda) and cpu()");
    ops_tensor *objs[] = {cx, cw, dx, dw, xh, xd, back, seed, gx, want};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        ops_tensor_release(objs[i]);
}
END_TEST

START_TEST(test_dlpack_cuda_round_trip)
{
    ops_tensor *h = host_values(2, (int64_t[]){4, 3}, OPS_INT16, 13);
    ops_tensor *d = on(h, OPS_DEVICE_CUDA(0));
    ops_tensor *dt = ops_t(d);
    struct DLManagedTensor *m = ops_tensor_to_dlpack(dt);
    ck_assert_msg(m != NULL, "%s", ops_last_error());
    int32_t type, id;
    ck_assert_int_eq(ops_tensor_dlpack_device(dt, &type, &id), OPS_OK);
    ck_assert_int_eq(type, 2); /* kDLCUDA */
    ck_assert_int_eq(id, 0);
    ops_tensor *back = ops_tensor_from_dlpack(m); /* takes m; its deleter runs once, at release */
    ck_assert_msg(back != NULL, "%s", ops_last_error());
    ck_assert(ops_device_equal(ops_tensor_device(back), OPS_DEVICE_CUDA(0)));
    ck_assert_ptr_eq(ops_tensor_data_ptr(back), ops_tensor_data_ptr(dt));
    ops_tensor *bc = ops_contiguous(back, OPS_CONTIGUOUS_FORMAT), *ht = ops_t(h);
    assert_same(bc, ht, "dlpack round trip");
    ops_tensor *objs[] = {h, d, dt, back, bc, ht};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        ops_tensor_release(objs[i]);
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
    int n = ops_cuda_device_count();
    if (n == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    printf("%d CUDA device(s)\n", n);
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create("runtime");
    tcase_add_test(tc, test_device_memory);
    tcase_add_test(tc, test_bad_device_index);
    tcase_add_test(tc, test_mixed_devices_rejected);
    tcase_add_test(tc, test_device_properties);
    tcase_add_test(tc, test_caching_allocator_stats);
    tcase_add_test(tc, test_out_of_memory_is_an_error);
    tcase_add_test(tc, test_pinned_allocator);
    tcase_add_test(tc, test_scalar_math_device_matches_host);
    suite_add_tcase(s, tc);
    TCase *tcc = tcase_create("copies");
    tcase_set_timeout(tcc, 240);
    tcase_add_test(tcc, test_copy_every_dtype_pair);
    tcase_add_test(tcc, test_copy_layouts);
    tcase_add_test(tcc, test_copy_empty_and_scalar);
    tcase_add_test(tcc, test_copy_non_blocking_pinned);
    tcase_add_test(tcc, test_to_identity_and_item_and_print);
    tcase_add_test(tcc, test_mixed_devices_and_cpu_scalars);
    tcase_add_test(tcc, test_autograd_on_cuda);
    tcase_add_test(tcc, test_dlpack_cuda_round_trip);
    suite_add_tcase(s, tcc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

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
#include "libops.h"
#include "ops_cuda.h"
#include "ops_internal.h"
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
    const ops_allocator *al = ops_cuda_device_allocator("test", 0);
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
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

/* The CPU allocator: alignment, the large-block cache and its statistics, and the
 * fault-injection hook that every libops allocation honours. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_internal.h"

#define MiB ((size_t)1 << 20)

static ops_alloc_stats
stats(void)
{
    ops_alloc_stats s;
    ops_cpu_allocator_stats(&s);
    return s;
}

static void *
cpu_alloc(size_t n)
{
    const ops_allocator *a = ops_cpu_allocator();
    return a->alloc(a->ctx, n);
}

static void
cpu_free(void *p, size_t n)
{
    const ops_allocator *a = ops_cpu_allocator();
    a->free(a->ctx, p, n);
}

START_TEST(test_alignment)
{
    static const size_t sizes[] = {0, 1, 7, 63, 64, 65, 1000, 4096, MiB - 1, MiB, 3 * MiB + 5, 17 * MiB};
    const ops_allocator *a = ops_cpu_allocator();
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->name, "cpu");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = cpu_alloc(sizes[i]);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 64, 0);
        if (sizes[i]) {
            memset(p, 0xab, sizes[i]); /* every byte is ours (ASan checks the bounds) */
            ck_assert_uint_eq(p[sizes[i] - 1], 0xab);
        }
        cpu_free(p, sizes[i]);
    }
    ops_cpu_allocator_empty_cache();
}
END_TEST

START_TEST(test_cache_reuse_and_stats)
{
    ops_cpu_allocator_empty_cache();
    ops_alloc_stats s0 = stats();
    ck_assert_int_eq(s0.cached_bytes, 0);

    void *p = cpu_alloc(4 * MiB);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, 4 * MiB);
    ops_alloc_stats s1 = stats();
    ck_assert_int_eq(s1.allocated_bytes - s0.allocated_bytes, (int64_t)(4 * MiB));
    ck_assert_int_eq(s1.num_allocs - s0.num_allocs, 1);
    ck_assert_int_eq(s1.num_cache_hits, s0.num_cache_hits);

    cpu_free(p, 4 * MiB);
    ops_alloc_stats s2 = stats();
    ck_assert_int_eq(s2.allocated_bytes, s0.allocated_bytes);
    ck_assert_int_ge(s2.cached_bytes, (int64_t)(4 * MiB));

    /* The same size again is served from the cache: the same block comes back. */
    void *q = cpu_alloc(4 * MiB);
    ck_assert_ptr_eq(q, p);
    ops_alloc_stats s3 = stats();
    ck_assert_int_eq(s3.num_cache_hits - s0.num_cache_hits, 1);
    ck_assert_int_eq(s3.cached_bytes, 0);
    cpu_free(q, 4 * MiB);

    /* A slightly smaller request rounds to the same class and reuses it too. */
    void *r = cpu_alloc(4 * MiB - 12345);
    ck_assert_ptr_eq(r, p);
    ck_assert_int_eq(stats().num_cache_hits - s0.num_cache_hits, 2);
    cpu_free(r, 4 * MiB - 12345);

    ops_cpu_allocator_empty_cache();
    ck_assert_int_eq(stats().cached_bytes, 0);
    ck_assert_int_eq(stats().allocated_bytes, s0.allocated_bytes);
}
END_TEST

START_TEST(test_cache_best_fit)
{
    ops_cpu_allocator_empty_cache();
    /* Cache a 6 MiB and a 12 MiB block. */
    void *a = cpu_alloc(6 * MiB), *b = cpu_alloc(12 * MiB);
    cpu_free(a, 6 * MiB);
    cpu_free(b, 12 * MiB);
    ops_alloc_stats s0 = stats();
    ck_assert_int_ge(s0.cached_bytes, (int64_t)(18 * MiB));

    /* 5 MiB fits both; best fit takes the smaller one. */
    void *c = cpu_alloc(5 * MiB);
    ck_assert_ptr_eq(c, a);
    ck_assert_int_eq(stats().num_cache_hits - s0.num_cache_hits, 1);
    /* 1 MiB is not served from a block more than an octave larger. */
    void *d = cpu_alloc(1 * MiB);
    ck_assert_ptr_ne(d, b);
    ck_assert_int_eq(stats().num_cache_hits - s0.num_cache_hits, 1);
    cpu_free(c, 5 * MiB);
    cpu_free(d, 1 * MiB);
    ops_cpu_allocator_empty_cache();
}
END_TEST

START_TEST(test_cache_cap)
{
    ops_cpu_allocator_empty_cache();
    ops_cpu_allocator_set_cache_max((int64_t)(3 * MiB));
    void *p = cpu_alloc(4 * MiB);
    cpu_free(p, 4 * MiB);
    ck_assert_int_eq(stats().cached_bytes, 0); /* over the cap: returned to the system */
    void *q = cpu_alloc(2 * MiB);
    cpu_free(q, 2 * MiB);
    ck_assert_int_eq(stats().cached_bytes, (int64_t)(2 * MiB));
    /* Lowering the cap trims what is cached. */
    ops_cpu_allocator_set_cache_max((int64_t)MiB);
    ck_assert_int_eq(stats().cached_bytes, 0);
    ops_cpu_allocator_set_cache_max(-1);
    void *r = cpu_alloc(4 * MiB);
    cpu_free(r, 4 * MiB);
    ck_assert_int_eq(stats().cached_bytes, (int64_t)(4 * MiB));
    ops_cpu_allocator_empty_cache();
}
END_TEST

START_TEST(test_small_stats)
{
    ops_alloc_stats s0 = stats();
    void *p = cpu_alloc(100);
    ops_alloc_stats s1 = stats();
    ck_assert_int_eq(s1.allocated_bytes - s0.allocated_bytes, 100);
    ck_assert_int_eq(s1.num_allocs - s0.num_allocs, 1);
    cpu_free(p, 100);
    ck_assert_int_eq(stats().allocated_bytes, s0.allocated_bytes);
}
END_TEST

static void *
alloc_in_thread(void *arg)
{
    *(void **)arg = cpu_alloc(1000);
    return NULL;
}

START_TEST(test_stats_across_threads)
{
    ops_alloc_stats s0 = stats();
    void *p = NULL;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, alloc_in_thread, &p), 0);
    pthread_join(th, NULL);
    ck_assert_ptr_nonnull(p);
    /* The thread has exited; its counts still show. */
    ops_alloc_stats s1 = stats();
    ck_assert_int_eq(s1.allocated_bytes - s0.allocated_bytes, 1000);
    ck_assert_int_eq(s1.num_allocs - s0.num_allocs, 1);
    cpu_free(p, 1000); /* freed on another thread than the one that allocated */
    ck_assert_int_eq(stats().allocated_bytes, s0.allocated_bytes);
}
END_TEST

/* ---- fault injection ---------------------------------------------------------- */

START_TEST(test_fail_nth_allocator)
{
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(cpu_alloc(10));
    void *p = cpu_alloc(10); /* one-shot: the next one succeeds */
    ck_assert_ptr_nonnull(p);
    cpu_free(p, 10);

    ops_alloc_fail_nth(3);
    void *a = cpu_alloc(10), *b = ops_host_malloc(10);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(cpu_alloc(2 * MiB)); /* the third, on the large path */
    cpu_free(a, 10);
    ops_host_free(b);

    ops_alloc_fail_nth(1);
    ops_alloc_fail_nth(0); /* disarmed */
    p = cpu_alloc(10);
    ck_assert_ptr_nonnull(p);
    cpu_free(p, 10);

    ops_alloc_fail_nth(1);
    void *h = ops_host_malloc(32);
    ck_assert_ptr_null(h);
    ops_alloc_fail_nth(1);
    void *old = malloc(8);
    ck_assert_ptr_null(ops_host_realloc(old, 64));
    free(old); /* left as it was */
}
END_TEST

static void *
fail_in_other_thread(void *arg)
{
    /* The countdown armed on the main thread does not reach this one. */
    void *p = cpu_alloc(10);
    *(bool *)arg = p != NULL;
    cpu_free(p, 10);
    return NULL;
}

START_TEST(test_fail_nth_thread_local)
{
    bool ok = false;
    ops_alloc_fail_nth(1);
    pthread_t th;
    pthread_create(&th, NULL, fail_in_other_thread, &ok);
    pthread_join(th, NULL);
    ck_assert(ok);
    ck_assert_ptr_null(cpu_alloc(10)); /* still armed here */
}
END_TEST

START_TEST(test_fail_nth_tensor_new)
{
    static const int64_t small[] = {2, 3};
    static const int64_t large[] = {1024, 1024};
    const struct {
        const int64_t *sizes;
    } cases[] = {{small}, {large}};
    for (size_t c = 0; c < 2; c++) {
        ops_alloc_stats s0 = stats();
        /* Fail each allocation ops_tensor_new makes in turn, until it succeeds. */
        int n;
        for (n = 1; n < 10; n++) {
            ops_clear_error();
            ops_alloc_fail_nth(n);
            ops_tensor *t = ops_tensor_new("zeros", 2, cases[c].sizes, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
            ops_alloc_fail_nth(0);
            if (t) {
                ops_tensor_release(t);
                break;
            }
            ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
            ck_assert_ptr_nonnull(strstr(ops_last_error(), "zeros: out of memory"));
            /* Nothing was left allocated (LSan checks the headers in the sanitizer build). */
            ck_assert_int_eq(stats().allocated_bytes, s0.allocated_bytes);
        }
        ck_assert_int_gt(n, 1); /* at least one allocation was made and failed */
        ck_assert_int_eq(stats().allocated_bytes, s0.allocated_bytes);
        ops_cpu_allocator_empty_cache();
    }
}
END_TEST

START_TEST(test_fail_nth_views_and_copies)
{
    ops_tensor *base = ops_tensor_new("zeros", 1, (int64_t[]){8}, NULL, OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(base);
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(ops_tensor_new_view(base, 1, (int64_t[]){4}, (int64_t[]){2}, 0));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ops_alloc_fail_nth(1);
    float data[3] = {1, 2, 3};
    ck_assert_ptr_null(ops_tensor_from_data(data, OPS_INTS(3), OPS_FLOAT32));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(ops_wrap_scalar(OPS_SCALAR_INT(1)));
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(ops_tensor_from_blob(data, OPS_INTS(3), OPS_INTS(), OPS_FLOAT32, OPS_DEVICE_CPU, NULL, NULL));
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(ops_tensor_to_string(base));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    /* A failed resize_ leaves the tensor as it was. */
    ops_alloc_fail_nth(1);
    ck_assert_int_eq(ops_tensor_resize_("resize_", base, 1, (int64_t[]){1000}), OPS_ERR_OOM);
    ck_assert_int_eq(base->sizes[0], 8);
    ck_assert_uint_eq(ops_tensor_storage_nbytes(base), 32);
    ops_tensor_release(base);
}
END_TEST

static Suite *
alloc_suite(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_alignment);
    tcase_add_test(tc, test_cache_reuse_and_stats);
    tcase_add_test(tc, test_cache_best_fit);
    tcase_add_test(tc, test_cache_cap);
    tcase_add_test(tc, test_small_stats);
    tcase_add_test(tc, test_stats_across_threads);
    tcase_add_test(tc, test_fail_nth_allocator);
    tcase_add_test(tc, test_fail_nth_thread_local);
    tcase_add_test(tc, test_fail_nth_tensor_new);
    tcase_add_test(tc, test_fail_nth_views_and_copies);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(alloc_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

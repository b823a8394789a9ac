/* The CUDA backend's runtime pieces: device discovery and device memory.
 *
 * Without a device (or in a CPU-only build) the test reports itself skipped (exit
 * status 77, which meson shows as SKIP), never passed.  The per-op CUDA results are
 * compared against the CPU by the conformance suite once CUDA kernels exist. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "libops.h"
#include "ops_internal.h"

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
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
#endif
}

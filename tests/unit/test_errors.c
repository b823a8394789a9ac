/* The thread-local error slot, its contract (only a failure changes it) and the
 * status strings. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
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
#include "ops_cuda.h"
#include "ops_op_add.h"
#include "ops_op_ones.h"
#include "ops_op_view.h"
#include "ops_op_zeros.h"
#include "ops_internal.h"

START_TEST(test_status_strings)
{
    /* Written out from the OPS_FOREACH_STATUS list in ops_base.h. */
    ck_assert_str_eq(ops_status_str(OPS_OK), "success");
    ck_assert_str_eq(ops_status_str(OPS_ERR_VALUE), "invalid value");
    ck_assert_str_eq(ops_status_str(OPS_ERR_SHAPE), "shape mismatch");
    ck_assert_str_eq(ops_status_str(OPS_ERR_DTYPE), "unsupported or mismatched dtype");
    ck_assert_str_eq(ops_status_str(OPS_ERR_DEVICE), "unsupported or mismatched device");
    ck_assert_str_eq(ops_status_str(OPS_ERR_INDEX), "index out of range");
    ck_assert_str_eq(ops_status_str(OPS_ERR_OOM), "out of memory");
    ck_assert_str_eq(ops_status_str(OPS_ERR_NOT_IMPLEMENTED), "not implemented");
    ck_assert_str_eq(ops_status_str(OPS_ERR_RUNTIME), "runtime error");
    ck_assert_str_eq(ops_status_str(OPS_NUM_STATUS), "unknown status");
    ck_assert_str_eq(ops_status_str((ops_status)-1), "unknown status");
}
END_TEST

START_TEST(test_fail_and_clear)
{
    ops_clear_error();
    ck_assert_int_eq(ops_last_status(), OPS_OK);
    ck_assert_str_eq(ops_last_error(), "");

    ck_assert_int_eq(ops_fail(OPS_ERR_SHAPE, "add: the size of %s (%d) must match", "self", 3), OPS_ERR_SHAPE);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_SHAPE);
    ck_assert_str_eq(ops_last_error(), "add: the size of self (3) must match");

    /* The latest failure wins. */
    ck_assert_ptr_null(ops_fail_null(OPS_ERR_OOM, "zeros: out of memory (%zu bytes)", (size_t)64));
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ck_assert_str_eq(ops_last_error(), "zeros: out of memory (64 bytes)");

    ops_clear_error();
    ck_assert_int_eq(ops_last_status(), OPS_OK);
    ck_assert_str_eq(ops_last_error(), "");

    /* A failure never records success. */
    ck_assert_int_ne(ops_fail(OPS_OK, "bad caller"), OPS_OK);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_RUNTIME);
}
END_TEST

START_TEST(test_message_can_wrap_previous)
{
    ops_fail(OPS_ERR_INDEX, "select: index 5 out of range");
    /* Re-prefixing the current message with itself as an argument must work. */
    ops_fail(ops_last_status(), "backward: %s", ops_last_error());
    ck_assert_str_eq(ops_last_error(), "backward: select: index 5 out of range");
    ck_assert_int_eq(ops_last_status(), OPS_ERR_INDEX);
}
END_TEST

START_TEST(test_long_message_truncated)
{
    char big[4000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ops_fail(OPS_ERR_VALUE, "op: %s", big);
    const char *msg = ops_last_error();
    size_t n = strlen(msg);
    ck_assert_uint_gt(n, 500); /* about 1 KiB kept */
    ck_assert_uint_lt(n, sizeof big);
    ck_assert(strncmp(msg, "op: xxx", 7) == 0);
}
END_TEST

typedef struct thread_arg {
    pthread_barrier_t *barrier;
    int id;
    char seen[128];
    ops_status status;
} thread_arg;

static void *
thread_main(void *p)
{
    thread_arg *a = p;
    ops_fail(a->id == 0 ? OPS_ERR_SHAPE : OPS_ERR_DTYPE, "thread %d failed", a->id);
    /* Both threads have failed before either reads its message back. */
    pthread_barrier_wait(a->barrier);
    snprintf(a->seen, sizeof a->seen, "%s", ops_last_error());
    a->status = ops_last_status();
    return NULL;
}

START_TEST(test_thread_local)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    ops_fail(OPS_ERR_INDEX, "main thread message");
    thread_arg args[2] = {{&barrier, 0, "", OPS_OK}, {&barrier, 1, "", OPS_OK}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    ck_assert_str_eq(args[0].seen, "thread 0 failed");
    ck_assert_int_eq(args[0].status, OPS_ERR_SHAPE);
    ck_assert_str_eq(args[1].seen, "thread 1 failed");
    ck_assert_int_eq(args[1].status, OPS_ERR_DTYPE);
    ck_assert_str_eq(ops_last_error(), "main thread message");
    ck_assert_int_eq(ops_last_status(), OPS_ERR_INDEX);
}
END_TEST

START_TEST(test_shape_str)
{
    char buf[OPS_SHAPE_STR_LEN];
    ck_assert_str_eq(ops_shape_str(0, NULL, buf, sizeof buf), "[]");
    ck_assert_str_eq(ops_shape_str(1, (int64_t[]){7}, buf, sizeof buf), "[7]");
    ck_assert_str_eq(ops_shape_str(3, (int64_t[]){2, 0, -1}, buf, sizeof buf), "[2, 0, -1]");
    int64_t big[OPS_MAX_DIMS];
    for (int i = 0; i < OPS_MAX_DIMS; i++)
        big[i] = INT64_MIN;
    ops_shape_str(OPS_MAX_DIMS, big, buf, sizeof buf); /* the documented size fits the worst case */
    ck_assert_uint_eq(buf[strlen(buf) - 1], ']');
    char small[6];
    ck_assert_str_eq(ops_shape_str(3, (int64_t[]){20, 30, 40}, small, sizeof small), "[20, ");
}
END_TEST

/* ops_last_error() is the message of the last *failed* call: successful calls after
 * it, allocations of every size included, leave it (and the status) as they were. */
START_TEST(test_success_keeps_last_error)
{
    ops_tensor *a = ops_zeros(OPS_INTS(3), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *b = ops_zeros(OPS_INTS(4), OPS_FLOAT32, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(ops_add(a, b, OPS_SCALAR_INT(1)));
    char expected[1024];
    snprintf(expected, sizeof expected, "%s", ops_last_error());
    const ops_status st = ops_last_status();
    ck_assert_int_ne(st, OPS_OK);
    ck_assert(strncmp(expected, "add: ", 5) == 0);
    const uint64_t serial = ops_error_serial();

    /* small (embedded) and large (allocator) results, a view, an in-place op */
    ops_tensor *small = ops_ones(OPS_INTS(2), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *large = ops_ones(OPS_INTS(1 << 20), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *sum = large ? ops_add(large, large, OPS_SCALAR_INT(1)) : NULL;
    ops_tensor *view = sum ? ops_view(sum, OPS_INTS(1024, 1024)) : NULL;
    ck_assert_ptr_nonnull(small);
    ck_assert_ptr_nonnull(view);
    ck_assert_int_eq(ops_add_(small, small, OPS_SCALAR_INT(1)), OPS_OK);

    ck_assert_str_eq(ops_last_error(), expected);
    ck_assert_int_eq(ops_last_status(), st);
    ck_assert(ops_error_serial() == serial); /* no failure in between */

    /* an allocation failure after it still reports itself, not the older message */
    ops_alloc_fail_nth(1);
    ck_assert_ptr_null(ops_ones(OPS_INTS(1 << 20), OPS_FLOAT32, OPS_DEVICE_CPU));
    ops_alloc_fail_nth(0);
    ck_assert_int_eq(ops_last_status(), OPS_ERR_OOM);
    ck_assert_msg(strstr(ops_last_error(), "out of memory") != NULL && strstr(ops_last_error(), "add:") == NULL,
                  "%s", ops_last_error());
    ck_assert(ops_error_serial() != serial);

    ops_tensor_release(view);
    ops_tensor_release(sum);
    ops_tensor_release(large);
    ops_tensor_release(small);
    ops_tensor_release(a);
    ops_tensor_release(b);
}
END_TEST

static Suite *
errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_status_strings);
    tcase_add_test(tc, test_fail_and_clear);
    tcase_add_test(tc, test_message_can_wrap_previous);
    tcase_add_test(tc, test_long_message_truncated);
    tcase_add_test(tc, test_thread_local);
    tcase_add_test(tc, test_shape_str);
    tcase_add_test(tc, test_success_keeps_last_error);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(errors_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

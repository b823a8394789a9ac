/* libops from 8 threads at once (docs/autograd.md "Threads"): independent graphs, a
 * leaf requiring grad shared by every thread (forward and release; forward and
 * backward, whose gradients must all arrive), a generator shared by every thread, and
 * grad mode toggled per thread.  Expected values are exact (float64 sums of ones, the
 * multiset of values a single thread draws), so a lost update or a torn accumulation
 * fails a check; a race on the heap crashes here or is reported by ThreadSanitizer
 * (make check-tsan runs this program in a -fsanitize=thread build).
 *
 * The kernels' own OpenMP threads are kept at one: the point is the library's shared
 * state between caller threads, and libgomp is not instrumented for TSan. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd.h"
#include "ops_op_add.h"
#include "ops_op_contiguous.h"
#include "ops_op_exp.h"
#include "ops_op_full.h"
#include "ops_op_mul.h"
#include "ops_op_ones.h"
#include "ops_op_rand.h"
#include "ops_op_sum.h"
#include "ops_op_zeros.h"
#include "ops_random.h"
#include "ops_tensor.h"

#define NTHREADS 8
/* Iterations per thread: 8 x 2000 = 16,000 backward passes into one shared leaf. */
#define ITERS 2000
#define LEAF_N 16

typedef struct {
    ops_tensor *w; /* shared leaf requiring grad */
    ops_generator *gen;
    int index;
    int failures; /* checks that failed on this thread (ck_assert is not thread-safe) */
    double *draws;
} worker;

static void
run_threads(void *(*fn)(void *), worker *ws)
{
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, fn, &ws[i]), 0);
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_msg(ws[i].failures == 0, "thread %d: %d failed checks (last error: %s)", i, ws[i].failures,
                      ops_last_error());
}

static ops_tensor *
ones(int64_t n)
{
    ops_tensor *t = ops_ones(OPS_INTS(n), OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(t);
    return t;
}

static double
value_at(const ops_tensor *t, int64_t i)
{
    ops_tensor *c = ops_contiguous(t, OPS_CONTIGUOUS_FORMAT);
    double v = ((const double *)ops_tensor_data_ptr(c))[i];
    ops_tensor_release(c);
    return v;
}

/* ---- independent graphs -------------------------------------------------------- */

static void *
independent_graphs(void *arg)
{
    worker *w = arg;
    const double k = 1.0 + w->index;
    for (int it = 0; it < ITERS / 4; it++) {
        ops_tensor *a = ops_full(OPS_INTS(LEAF_N), OPS_SCALAR_FLOAT(k), OPS_FLOAT64, OPS_DEVICE_CPU);
        ops_tensor *b = ops_full(OPS_INTS(LEAF_N), OPS_SCALAR_FLOAT(2.0), OPS_FLOAT64, OPS_DEVICE_CPU);
        if (a == NULL || b == NULL || ops_tensor_set_requires_grad(a, true) != OPS_OK ||
            ops_tensor_set_requires_grad(b, true) != OPS_OK) {
            w->failures++;
            ops_tensor_release(a);
            ops_tensor_release(b);
            continue;
        }
        /* loss = sum(exp(a * b) * 0 + a * b): d/da = b, d/db = a */
        ops_tensor *p = ops_mul(a, b), *e = p ? ops_exp(p) : NULL, *z = e ? ops_mul_scalar(e, OPS_SCALAR_INT(0)) : NULL;
        ops_tensor *s = z ? ops_add(z, p, OPS_SCALAR_INT(1)) : NULL, *loss = s ? ops_sum(s, OPS_DTYPE_NONE) : NULL;
        if (loss == NULL || ops_backward(loss, NULL, false, false) != OPS_OK) {
            w->failures++;
        } else {
            ops_tensor *ga = ops_tensor_grad(a), *gb = ops_tensor_grad(b);
            if (ga == NULL || gb == NULL || value_at(ga, it % LEAF_N) != 2.0 || value_at(gb, it % LEAF_N) != k)
                w->failures++;
            ops_tensor_release(ga);
            ops_tensor_release(gb);
        }
        ops_tensor *all[] = {loss, s, z, e, p, a, b};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            ops_tensor_release(all[i]);
    }
    return NULL;
}

START_TEST(test_independent_graphs)
{
    worker ws[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++)
        ws[i].index = i;
    run_threads(independent_graphs, ws);
}
END_TEST

/* ---- a shared leaf ------------------------------------------------------------------ */

/* Records y = w * x and drops it: every thread creates and destroys the leaf's
 * AccumulateGrad over and over. */
static void *
shared_leaf_forward(void *arg)
{
    worker *w = arg;
    ops_tensor *x = ones(LEAF_N);
    for (int it = 0; it < ITERS * 8; it++) {
        ops_tensor *y = ops_mul(w->w, x);
        if (y == NULL || !ops_tensor_requires_grad(y))
            w->failures++;
        ops_tensor_release(y);
    }
    ops_tensor_release(x);
    return NULL;
}

/* loss = sum(w * x) with x = 1: each backward adds exactly 1 to every element of
 * w.grad, so 8 threads x ITERS passes give 16,000 when no update is lost. */
static void *
shared_leaf_backward(void *arg)
{
    worker *w = arg;
    ops_tensor *x = ones(LEAF_N);
    for (int it = 0; it < ITERS; it++) {
        ops_tensor *y = ops_mul(w->w, x);
        ops_tensor *loss = y ? ops_sum(y, OPS_DTYPE_NONE) : NULL;
        if (loss == NULL || ops_backward(loss, NULL, false, false) != OPS_OK)
            w->failures++;
        ops_tensor_release(loss);
        ops_tensor_release(y);
    }
    ops_tensor_release(x);
    return NULL;
}

static ops_tensor *
shared_leaf(void)
{
    ops_tensor *w = ops_zeros(OPS_INTS(LEAF_N), OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
    return w;
}

START_TEST(test_shared_leaf_forward_release)
{
    ops_tensor *w = shared_leaf();
    worker ws[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++)
        ws[i] = (worker){.w = w, .index = i};
    run_threads(shared_leaf_forward, ws);
    /* The leaf is still sound: one more pass gives its gradient. */
    ops_tensor *x = ones(LEAF_N), *y = ops_mul(w, x), *loss = ops_sum(y, OPS_DTYPE_NONE);
    ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
    ops_tensor *g = ops_tensor_grad(w);
    ck_assert_ptr_nonnull(g);
    for (int64_t i = 0; i < LEAF_N; i++)
        ck_assert_double_eq(value_at(g, i), 1.0);
    ops_tensor *all[] = {g, loss, y, x, w};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
}
END_TEST

START_TEST(test_shared_leaf_backward_sum)
{
    ops_tensor *w = shared_leaf();
    worker ws[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++)
        ws[i] = (worker){.w = w, .index = i};
    run_threads(shared_leaf_backward, ws);
    ops_tensor *g = ops_tensor_grad(w);
    ck_assert_ptr_nonnull(g);
    for (int64_t i = 0; i < LEAF_N; i++)
        ck_assert_double_eq(value_at(g, i), (double)NTHREADS * ITERS);
    ops_tensor_release(g);
    ops_tensor_release(w);
}
END_TEST

/* A hook on the shared leaf counts the gradients it sees; handles registered and
 * removed from every thread while backward runs. */
static int64_t hook_calls; /* atomic */

static ops_status
count_hook(const ops_tensor *grad, ops_tensor **replacement, void *ctx)
{
    (void)grad;
    (void)ctx;
    *replacement = NULL;
    __atomic_add_fetch(&hook_calls, 1, __ATOMIC_RELAXED);
    return OPS_OK;
}

static ops_status
noop_hook(const ops_tensor *grad, ops_tensor **replacement, void *ctx)
{
    (void)grad;
    (void)ctx;
    *replacement = NULL;
    return OPS_OK;
}

/* A hook whose context is freed by its release function: another thread's pass may
 * still run it after its remover let go (the pass counts the hooks it runs), so a
 * freed context read here is a use-after-free for ASan and a race for TSan. */
static int64_t hook_releases;

static ops_status
checked_hook(const ops_tensor *grad, ops_tensor **replacement, void *ctx)
{
    (void)grad;
    *replacement = NULL;
    return __atomic_load_n((int *)ctx, __ATOMIC_RELAXED) == 1 ? OPS_OK : OPS_ERR_RUNTIME;
}

static void
checked_release(void *ctx)
{
    __atomic_store_n((int *)ctx, 0, __ATOMIC_RELAXED);
    free(ctx);
    __atomic_add_fetch(&hook_releases, 1, __ATOMIC_RELAXED);
}

static void *
hooks_and_backward(void *arg)
{
    worker *w = arg;
    ops_tensor *x = ones(LEAF_N);
    for (int it = 0; it < ITERS / 4; it++) {
        int64_t h = 0, h2 = 0;
        if (ops_tensor_register_hook(w->w, noop_hook, NULL, &h) != OPS_OK)
            w->failures++;
        int *alive = malloc(sizeof *alive);
        if (alive == NULL) {
            w->failures++;
            (void)ops_tensor_remove_hook(w->w, h);
            break;
        }
        *alive = 1;
        if (ops_tensor_register_hook_ex(w->w, checked_hook, alive, checked_release, &h2) != OPS_OK)
            w->failures++;
        ops_tensor *y = ops_mul(w->w, x);
        ops_tensor *loss = y ? ops_sum(y, OPS_DTYPE_NONE) : NULL;
        if (loss == NULL || ops_backward(loss, NULL, false, false) != OPS_OK)
            w->failures++;
        if (!ops_tensor_remove_hook(w->w, h) || !ops_tensor_remove_hook(w->w, h2))
            w->failures++;
        ops_tensor_release(loss);
        ops_tensor_release(y);
    }
    ops_tensor_release(x);
    return NULL;
}

START_TEST(test_shared_leaf_hooks)
{
    ops_tensor *w = shared_leaf();
    int64_t h = 0;
    ck_assert_int_eq(ops_tensor_register_hook(w, count_hook, NULL, &h), OPS_OK);
    __atomic_store_n(&hook_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&hook_releases, 0, __ATOMIC_RELAXED);
    worker ws[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++)
        ws[i] = (worker){.w = w, .index = i};
    run_threads(hooks_and_backward, ws);
    ck_assert_int_eq(__atomic_load_n(&hook_calls, __ATOMIC_RELAXED), (int64_t)NTHREADS * (ITERS / 4));
    ck_assert_int_eq(__atomic_load_n(&hook_releases, __ATOMIC_RELAXED), (int64_t)NTHREADS * (ITERS / 4));
    ops_tensor *g = ops_tensor_grad(w);
    for (int64_t i = 0; i < LEAF_N; i++)
        ck_assert_double_eq(value_at(g, i), (double)NTHREADS * (ITERS / 4));
    ck_assert(ops_tensor_remove_hook(w, h));
    ops_tensor_release(g);
    ops_tensor_release(w);
}
END_TEST

/* ---- generators ---------------------------------------------------------------------- */

#define DRAWS 200
#define DRAW_N 8

static void *
draw(void *arg)
{
    worker *w = arg;
    for (int it = 0; it < DRAWS; it++) {
        ops_tensor *r = ops_rand(OPS_INTS(DRAW_N), w->gen, OPS_FLOAT64, OPS_DEVICE_CPU);
        if (r == NULL) {
            w->failures++;
            continue;
        }
        memcpy(w->draws + (size_t)it * DRAW_N, ops_tensor_data_ptr(r), DRAW_N * sizeof(double));
        ops_tensor_release(r);
    }
    return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each call takes its own range of the shared stream: the values drawn by 8 threads
 * together are exactly those one thread draws in as many calls (as a multiset). */
START_TEST(test_shared_generator)
{
    const size_t total = (size_t)NTHREADS * DRAWS * DRAW_N;
    double *got = calloc(total, sizeof *got), *want = calloc(total, sizeof *want);
    ck_assert(got != NULL && want != NULL);
    ops_generator *gen = ops_generator_create(1234);
    ck_assert_ptr_nonnull(gen);
    worker ws[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++)
        ws[i] = (worker){.gen = gen, .index = i, .draws = got + (size_t)i * DRAWS * DRAW_N};
    run_threads(draw, ws);
    ops_generator_set_seed(gen, 1234);
    for (size_t i = 0; i < total; i += DRAW_N) {
        ops_tensor *r = ops_rand(OPS_INTS(DRAW_N), gen, OPS_FLOAT64, OPS_DEVICE_CPU);
        ck_assert_ptr_nonnull(r);
        memcpy(want + i, ops_tensor_data_ptr(r), DRAW_N * sizeof(double));
        ops_tensor_release(r);
    }
    qsort(got, total, sizeof *got, cmp_double);
    qsort(want, total, sizeof *want, cmp_double);
    for (size_t i = 0; i < total; i++)
        ck_assert_msg(got[i] == want[i], "value %zu: %.17g drawn by the threads, %.17g by one", i, got[i], want[i]);
    /* The default generator is shared the same way (no exact check: other tests may use it). */
    for (int i = 0; i < NTHREADS; i++)
        ws[i].gen = NULL;
    run_threads(draw, ws);
    ops_generator_release(gen);
    free(got);
    free(want);
}
END_TEST

/* ---- grad mode -------------------------------------------------------------------------- */

static void *
toggle_grad_mode(void *arg)
{
    worker *w = arg;
    ops_tensor *x = ones(LEAF_N);
    uint32_t s = 2463534242u + (uint32_t)w->index;
    for (int it = 0; it < ITERS; it++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        const bool on = (s & 1) != 0;
        ops_set_grad_enabled(on);
        ops_tensor *y = ops_mul(w->w, x); /* recorded exactly when this thread's mode is on */
        if (y == NULL || ops_grad_enabled() != on || ops_tensor_requires_grad(y) != on ||
            (ops_tensor_grad_fn(y) != NULL) != on)
            w->failures++;
        ops_tensor_release(y);
    }
    ops_set_grad_enabled(true);
    ops_tensor_release(x);
    return NULL;
}

START_TEST(test_grad_mode_per_thread)
{
    ops_tensor *w = shared_leaf();
    worker ws[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++)
        ws[i] = (worker){.w = w, .index = i};
    const bool prev = ops_set_grad_enabled(false);
    run_threads(toggle_grad_mode, ws);
    ck_assert(!ops_grad_enabled()); /* this thread's mode is its own */
    ops_set_grad_enabled(prev);
    ops_tensor_release(w);
}
END_TEST

static Suite *
threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_independent_graphs);
    tcase_add_test(tc, test_shared_leaf_forward_release);
    tcase_add_test(tc, test_shared_leaf_backward_sum);
    tcase_add_test(tc, test_shared_leaf_hooks);
    tcase_add_test(tc, test_shared_generator);
    tcase_add_test(tc, test_grad_mode_per_thread);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    ops_set_num_threads(1);
    SRunner *sr = srunner_create(threads_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

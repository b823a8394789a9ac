/* Optimizers (runtime/optim/optim.c) against the update rules written out in scalar C for a
 * few steps on fixed gradients (torch.optim's documented algorithms), and against a
 * problem with a known minimum: least squares through the public autograd API. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_autograd.h"
#include "ops_op_contiguous.h"
#include "ops_op_matmul.h"
#include "ops_op_mse_loss.h"
#include "ops_op_t.h"
#include "ops_op_zeros.h"
#include "ops_optim.h"

static const double P0[3] = {1.0, -2.0, 0.5};
static const double G[4][3] = {{0.5, -1.0, 2.0}, {0.25, 0.5, -1.5}, {-0.75, 0.0, 1.0}, {0.1, 0.2, 0.3}};

static ops_tensor *
param(void)
{
    ops_tensor *p = ops_tensor_from_data(P0, (ops_int_list){(int64_t[]){3}, 1}, OPS_FLOAT64);
    ck_assert_int_eq(ops_tensor_set_requires_grad(p, true), OPS_OK);
    return p;
}

static void
set_grad(ops_tensor *p, const double *g)
{
    ops_tensor *t = ops_tensor_from_data(g, (ops_int_list){(int64_t[]){3}, 1}, OPS_FLOAT64);
    ck_assert_int_eq(ops_tensor_set_grad(p, t), OPS_OK);
    ops_tensor_release(t);
}

static void
expect(const ops_tensor *p, const double *want)
{
    const double *v = ops_tensor_data_ptr(p);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(v[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])), "element %d: %.17g != %.17g", i, v[i],
                      want[i]);
}

START_TEST(test_sgd_momentum_nesterov_weight_decay)
{
    for (int variant = 0; variant < 3; variant++) {
        const ops_sgd_options o = {.lr = 0.1, .momentum = variant ? 0.9 : 0.0, .dampening = 0.0,
                                   .weight_decay = 0.01, .nesterov = variant == 2};
        ops_tensor *p = param();
        const ops_tensor *ps[1] = {p};
        ops_optimizer *opt = ops_sgd_new((ops_tensor_list){ps, 1}, &o);
        ck_assert_ptr_nonnull(opt);
        double ref[3], buf[3] = {0};
        memcpy(ref, P0, sizeof ref);
        for (int step = 0; step < 4; step++) {
            set_grad(p, G[step]);
            ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
            for (int i = 0; i < 3; i++) {
                double d = G[step][i] + o.weight_decay * ref[i];
                if (o.momentum != 0) {
                    buf[i] = step == 0 ? d : o.momentum * buf[i] + (1 - o.dampening) * d;
                    d = o.nesterov ? d + o.momentum * buf[i] : buf[i];
                }
                ref[i] -= o.lr * d;
            }
            expect(p, ref);
        }
        ops_optimizer_release(opt);
        ops_tensor_release(p);
    }
}
END_TEST

/* The one-pass SGD (contiguous float parameters) and the op-by-op path (a transposed
 * parameter) follow the same rule: maximize, weight decay, momentum with dampening,
 * float32, against the rule in scalar double C. */
START_TEST(test_sgd_fused_and_opwise_agree)
{
    static const float V[6] = {1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 1.5f};
    const ops_sgd_options o = {.lr = 0.1, .momentum = 0.9, .dampening = 0.3, .weight_decay = 0.05,
                               .maximize = true};
    ops_tensor *pc = ops_tensor_from_data(V, (ops_int_list){(int64_t[]){2, 3}, 2}, OPS_FLOAT32);
    float vt[6]; /* the same values stored transposed, viewed back as [2, 3] */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            vt[j * 2 + i] = V[i * 3 + j];
    ops_tensor *st = ops_tensor_from_data(vt, (ops_int_list){(int64_t[]){3, 2}, 2}, OPS_FLOAT32);
    ops_tensor *pt = ops_t(st);
    ck_assert(!ops_tensor_is_contiguous(pt));
    ops_tensor *ps[2] = {pc, pt};
    ops_optimizer *opt[2];
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(ops_tensor_set_requires_grad(ps[k], true), OPS_OK);
        opt[k] = ops_sgd_new((ops_tensor_list){(const ops_tensor *const *)&ps[k], 1}, &o);
        ck_assert_ptr_nonnull(opt[k]);
    }
    double ref[6], buf[6] = {0};
    for (int i = 0; i < 6; i++)
        ref[i] = V[i];
    for (int step = 0; step < 3; step++) {
        float g[6];
        for (int i = 0; i < 6; i++)
            g[i] = (float)(0.25 * (i + 1) * (step % 2 ? -1 : 1) + 0.1 * step);
        ops_tensor *gt = ops_tensor_from_data(g, (ops_int_list){(int64_t[]){2, 3}, 2}, OPS_FLOAT32);
        for (int k = 0; k < 2; k++) {
            ck_assert_int_eq(ops_tensor_set_grad(ps[k], gt), OPS_OK);
            ck_assert_int_eq(ops_optimizer_step(opt[k]), OPS_OK);
        }
        ops_tensor_release(gt);
        for (int i = 0; i < 6; i++) {
            double d = -(double)g[i] + o.weight_decay * ref[i];
            buf[i] = step == 0 ? d : o.momentum * buf[i] + (1 - o.dampening) * d;
            ref[i] -= o.lr * buf[i];
        }
        for (int k = 0; k < 2; k++) {
            ops_tensor *c = ops_contiguous(ps[k], OPS_CONTIGUOUS_FORMAT);
            const float *v = ops_tensor_data_ptr(c);
            for (int i = 0; i < 6; i++)
                ck_assert_msg(fabs(v[i] - ref[i]) <= 1e-5 * (1 + fabs(ref[i])), "param %d step %d element %d: %.9g "
                              "!= %.9g", k, step, i, (double)v[i], ref[i]);
            ops_tensor_release(c);
        }
    }
    for (int k = 0; k < 2; k++)
        ops_optimizer_release(opt[k]);
    ops_tensor_release(pc);
    ops_tensor_release(pt);
    ops_tensor_release(st);
}
END_TEST

START_TEST(test_adam_and_adamw)
{
    for (int variant = 0; variant < 3; variant++) { /* Adam, AdamW, Adam amsgrad */
        const ops_adam_options o = {.lr = 0.05, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0.1,
                                    .amsgrad = variant == 2};
        ops_tensor *p = param();
        const ops_tensor *ps[1] = {p};
        ops_optimizer *opt = variant == 1 ? ops_adamw_new((ops_tensor_list){ps, 1}, &o)
                                          : ops_adam_new((ops_tensor_list){ps, 1}, &o);
        ck_assert_ptr_nonnull(opt);
        double ref[3], m[3] = {0}, v[3] = {0}, vmax[3] = {0};
        memcpy(ref, P0, sizeof ref);
        for (int step = 1; step <= 4; step++) {
            set_grad(p, G[step - 1]);
            ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
            for (int i = 0; i < 3; i++) {
                double g = G[step - 1][i];
                if (variant == 1)
                    ref[i] *= 1 - o.lr * o.weight_decay;
                else
                    g += o.weight_decay * ref[i];
                m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
                v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
                vmax[i] = fmax(vmax[i], v[i]);
                const double bc1 = 1 - pow(o.beta1, step), bc2 = 1 - pow(o.beta2, step);
                const double vv = o.amsgrad ? vmax[i] : v[i];
                ref[i] -= o.lr / bc1 * m[i] / (sqrt(vv) / sqrt(bc2) + o.eps);
            }
            expect(p, ref);
        }
        ops_optimizer_release(opt);
        ops_tensor_release(p);
    }
}
END_TEST

START_TEST(test_least_squares_converges)
{
    /* min_w |X w - y|^2 with y = X w* exactly: Adam and SGD reach w* */
    const double X[4][2] = {{1, 2}, {3, -1}, {0.5, 0.5}, {-2, 1}}, wstar[2] = {0.75, -1.25};
    double y[4];
    for (int i = 0; i < 4; i++)
        y[i] = X[i][0] * wstar[0] + X[i][1] * wstar[1];
    ops_tensor *x = ops_tensor_from_data(X, (ops_int_list){(int64_t[]){4, 2}, 2}, OPS_FLOAT64);
    ops_tensor *yt = ops_tensor_from_data(y, (ops_int_list){(int64_t[]){4}, 1}, OPS_FLOAT64);
    for (int which = 0; which < 2; which++) {
        ops_tensor *w = ops_zeros((ops_int_list){(int64_t[]){2}, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
        ck_assert_int_eq(ops_tensor_set_requires_grad(w, true), OPS_OK);
        const ops_tensor *ps[1] = {w};
        ops_optimizer *opt = which == 0 ? ops_adam_new((ops_tensor_list){ps, 1}, &(ops_adam_options){.lr = 0.05})
                                        : ops_sgd_new((ops_tensor_list){ps, 1},
                                                      &(ops_sgd_options){.lr = 0.05, .momentum = 0.5});
        ck_assert_ptr_nonnull(opt);
        for (int it = 0; it < 2000; it++) {
            ck_assert_int_eq(ops_optimizer_zero_grad(opt, it % 2 == 0), OPS_OK);
            ops_tensor *pred = ops_matmul(x, w);
            ops_tensor *loss = ops_mse_loss(pred, yt, 1);
            ck_assert_ptr_nonnull(loss);
            ck_assert_int_eq(ops_backward(loss, NULL, false, false), OPS_OK);
            ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
            ops_tensor_release(loss);
            ops_tensor_release(pred);
        }
        const double *wv = ops_tensor_data_ptr(w);
        ck_assert_double_eq_tol(wv[0], wstar[0], 1e-4);
        ck_assert_double_eq_tol(wv[1], wstar[1], 1e-4);
        ops_optimizer_release(opt);
        ops_tensor_release(w);
    }
    ops_tensor_release(x);
    ops_tensor_release(yt);
}
END_TEST

START_TEST(test_bad_arguments)
{
    ops_tensor *p = param();
    const ops_tensor *ps[1] = {p};
    ck_assert_ptr_null(ops_sgd_new((ops_tensor_list){ps, 1}, &(ops_sgd_options){.lr = -1}));
    ck_assert_ptr_null(ops_sgd_new((ops_tensor_list){ps, 1}, &(ops_sgd_options){.lr = 0.1, .nesterov = true}));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Nesterov momentum requires a momentum and zero dampening"));
    ck_assert_ptr_null(ops_adam_new((ops_tensor_list){ps, 1}, &(ops_adam_options){.beta1 = 1.5, .beta2 = 0.9}));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Invalid beta parameters"));
    ck_assert_ptr_null(ops_adam_new((ops_tensor_list){NULL, 0}, NULL));
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "empty parameter list"));
    /* a parameter without .grad is skipped */
    ops_optimizer *opt = ops_sgd_new((ops_tensor_list){ps, 1}, &(ops_sgd_options){.lr = 0.1});
    ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
    expect(p, P0);
    ops_optimizer_release(opt);
    ops_tensor_release(p);
}
END_TEST

/* ops_optimizer_set_lr: the next steps use the new rate (0 included, which the options
 * read as "default" at creation), the state (momentum buffer) is kept; a negative or NaN
 * rate is refused and leaves the old one. */
START_TEST(test_set_lr)
{
    ops_tensor *p = param();
    const ops_tensor *ps[1] = {p};
    ops_optimizer *opt = ops_sgd_new((ops_tensor_list){ps, 1}, &(ops_sgd_options){.lr = 0.1, .momentum = 0.5});
    ck_assert_ptr_nonnull(opt);
    double ref[3], buf[3] = {0, 0, 0}; /* the momentum buffer, set at step 0 */
    memcpy(ref, P0, sizeof ref);
    const double lrs[3] = {0.1, 0.0, 0.3};
    for (int step = 0; step < 3; step++) {
        ck_assert_int_eq(ops_optimizer_set_lr(opt, lrs[step]), OPS_OK);
        ck_assert(ops_optimizer_get_lr(opt) == lrs[step]);
        set_grad(p, G[step]);
        ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
        for (int i = 0; i < 3; i++) {
            buf[i] = step == 0 ? G[step][i] : 0.5 * buf[i] + G[step][i];
            ref[i] -= lrs[step] * buf[i];
        }
        expect(p, ref);
    }
    ck_assert_int_eq(ops_optimizer_set_lr(opt, -1.0), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Invalid learning rate"));
    ck_assert_int_eq(ops_optimizer_set_lr(opt, NAN), OPS_ERR_VALUE);
    ck_assert(ops_optimizer_get_lr(opt) == 0.3);
    ops_optimizer_release(opt);

    opt = ops_adamw_new((ops_tensor_list){ps, 1}, &(ops_adam_options){.lr = 0.1});
    ck_assert_int_eq(ops_optimizer_set_lr(opt, 0.0), OPS_OK);
    memcpy(ref, ops_tensor_data_ptr(p), sizeof ref);
    set_grad(p, G[0]);
    ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
    expect(p, ref); /* lr 0: neither the decay nor the update moves p */
    ops_optimizer_release(opt);
    ops_tensor_release(p);
}
END_TEST

/* Run Adam (amsgrad) for 4 steps; then again with a checkpoint after 2 steps read by
 * get_state, restored into a fresh optimizer by set_state: the parameters agree bit for
 * bit.  Options changed mid-run (betas, weight_decay) take effect at the next step. */
static void
adam_run(ops_tensor *p, int from, int to, ops_optimizer *opt)
{
    for (int step = from; step < to; step++) {
        if (step == 3)
            ck_assert_int_eq(ops_optimizer_set_adam_options(
                                 opt, &(ops_adam_options){.lr = 0.05, .beta1 = 0.5, .beta2 = 0.9, .eps = 1e-6,
                                                          .weight_decay = 0.1, .amsgrad = true}),
                             OPS_OK);
        set_grad(p, G[step]);
        ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
    }
}

START_TEST(test_state_resume_and_options)
{
    const ops_adam_options o = {.lr = 0.1, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-8, .amsgrad = true};
    ops_tensor *a = param(), *b = param();
    const ops_tensor *pa[1] = {a}, *pb[1] = {b};
    ops_optimizer *oa = ops_adamw_new((ops_tensor_list){pa, 1}, &o);
    ck_assert_int_eq(ops_optimizer_num_params(oa), 1);
    adam_run(a, 0, 4, oa);

    ops_optimizer *ob = ops_adamw_new((ops_tensor_list){pb, 1}, &o);
    adam_run(b, 0, 2, ob);
    ops_optimizer_state st;
    ck_assert_int_eq(ops_optimizer_get_state(ob, 0, &st), OPS_OK);
    ck_assert_int_eq(st.step, 2);
    ck_assert(st.buf != NULL && st.v != NULL && st.vmax != NULL);
    ops_optimizer_release(ob);
    ob = ops_adamw_new((ops_tensor_list){pb, 1}, &o);
    ck_assert_int_eq(ops_optimizer_set_state(ob, 0, &st), OPS_OK);
    ops_tensor_release(st.buf);
    ops_tensor_release(st.v);
    ops_tensor_release(st.vmax);
    adam_run(b, 2, 4, ob);
    ck_assert_int_eq(memcmp(ops_tensor_data_ptr(a), ops_tensor_data_ptr(b), 3 * sizeof(double)), 0);

    /* The change at step 3 mattered: without it the result differs. */
    ops_tensor *c = param();
    const ops_tensor *pc[1] = {c};
    ops_optimizer *oc = ops_adamw_new((ops_tensor_list){pc, 1}, &o);
    for (int step = 0; step < 4; step++) {
        set_grad(c, G[step]);
        ck_assert_int_eq(ops_optimizer_step(oc), OPS_OK);
    }
    ck_assert_int_ne(memcmp(ops_tensor_data_ptr(a), ops_tensor_data_ptr(c), 3 * sizeof(double)), 0);

    /* Bad input: wrong kind of options, bad values, index, shapes; state unchanged. */
    ck_assert_int_eq(ops_optimizer_set_sgd_options(oa, &(ops_sgd_options){.lr = 0.1}), OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "not SGD"));
    ck_assert_int_eq(ops_optimizer_set_adam_options(oa, &(ops_adam_options){.lr = 0.1, .beta1 = 1.0}),
                     OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "Invalid beta"));
    ck_assert_int_eq(ops_optimizer_get_state(oa, 1, &st), OPS_ERR_INDEX);
    ops_tensor *wrong = ops_zeros((ops_int_list){(int64_t[]){4}, 1}, OPS_FLOAT64, OPS_DEVICE_CPU);
    ck_assert_int_eq(ops_optimizer_set_state(oa, 0, &(ops_optimizer_state){.step = 1, .buf = wrong, .v = wrong}),
                     OPS_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(ops_last_error(), "shape"));
    ck_assert_int_eq(ops_optimizer_get_state(oa, 0, &st), OPS_OK);
    ck_assert_int_eq(st.step, 4);
    ops_tensor_release(st.buf);
    ops_tensor_release(st.v);
    ops_tensor_release(st.vmax);
    /* Cleared state: the next step is a first step again. */
    ck_assert_int_eq(ops_optimizer_set_state(oa, 0, &(ops_optimizer_state){0}), OPS_OK);
    ck_assert_int_eq(ops_optimizer_get_state(oa, 0, &st), OPS_OK);
    ck_assert(st.step == 0 && st.buf == NULL && st.v == NULL && st.vmax == NULL);
    ops_tensor_release(wrong);
    ops_optimizer_release(oa);
    ops_optimizer_release(ob);
    ops_optimizer_release(oc);
    ops_tensor_release(a);
    ops_tensor_release(b);
    ops_tensor_release(c);
}
END_TEST

/* SGD's momentum changed mid-run reaches the update. */
START_TEST(test_sgd_set_options)
{
    ops_tensor *p = param();
    const ops_tensor *ps[1] = {p};
    ops_optimizer *opt = ops_sgd_new((ops_tensor_list){ps, 1}, &(ops_sgd_options){.lr = 0.1, .momentum = 0.5});
    double ref[3], buf[3] = {0, 0, 0}; /* the momentum buffer, set at step 0 */
    memcpy(ref, P0, sizeof ref);
    const double mom[3] = {0.5, 0.9, 0.9}, wd[3] = {0.0, 0.0, 0.2};
    for (int step = 0; step < 3; step++) {
        ck_assert_int_eq(ops_optimizer_set_sgd_options(
                             opt, &(ops_sgd_options){.lr = 0.1, .momentum = mom[step], .weight_decay = wd[step]}),
                         OPS_OK);
        set_grad(p, G[step]);
        ck_assert_int_eq(ops_optimizer_step(opt), OPS_OK);
        for (int i = 0; i < 3; i++) {
            double d = G[step][i] + wd[step] * ref[i];
            buf[i] = step == 0 ? d : mom[step] * buf[i] + d;
            ref[i] -= 0.1 * buf[i];
        }
        expect(p, ref);
    }
    ck_assert_int_eq(ops_optimizer_set_sgd_options(opt, &(ops_sgd_options){.lr = 0.1, .nesterov = true}),
                     OPS_ERR_VALUE);
    ck_assert_int_eq(ops_optimizer_set_adam_options(opt, &(ops_adam_options){.lr = 0.1}), OPS_ERR_VALUE);
    ops_optimizer_release(opt);
    ops_tensor_release(p);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sgd_momentum_nesterov_weight_decay);
    tcase_add_test(tc, test_sgd_fused_and_opwise_agree);
    tcase_add_test(tc, test_adam_and_adamw);
    tcase_add_test(tc, test_least_squares_converges);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_set_lr);
    tcase_add_test(tc, test_state_resume_and_options);
    tcase_add_test(tc, test_sgd_set_options);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* bench_autograd: what recording and running the backward graph costs, measured in one
 * run against the same computation without autograd.
 *
 *   - per node: a chain of 1000 one-element float32 muls (y = y * w), built with
 *     requires_grad and then run backward, against the same chain under no_grad; the
 *     difference divided by the number of nodes is the autograd overhead per node
 *     (forward recording and backward, together);
 *   - an MLP training step 784-256-256-10 (linear, relu, cross_entropy_loss), batch 64:
 *     forward, backward and an SGD step (momentum 0.9), in us.  Outputs are fresh
 *     (the CPU allocator's cache serves the large ones).  The baseline is
 *     bench/bench_autograd_torch.py: the same two measurements in PyTorch, run right
 *     after this program by `make bench` with the same threads and OpenBLAS settings.
 *
 * Best of several repetitions; threads as ops_set_num_threads / the environment set. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "ops_op_cross_entropy_loss.h"
#include "ops_op_empty.h"
#include "ops_op_full.h"
#include "ops_op_linear.h"
#include "ops_op_mul.h"
#include "ops_op_rand.h"
#include "ops_op_randint.h"
#include "ops_op_relu.h"
#include "ops_op_uniform.h"

enum { CHAIN = 1000, REPS = 20 };

static const char *PROG = "bench_autograd";

static ops_tensor *
ok(ops_tensor *t, const char *what)
{
    if (t == NULL)
        bench_die(PROG, what);
    return t;
}

/* Runs the chain once; with grad, also its backward. Returns seconds. */
static double
chain(ops_tensor *x, ops_tensor *w, bool grad)
{
    const bool prev = ops_set_grad_enabled(grad);
    const double t0 = bench_now();
    ops_tensor *y = ops_tensor_retain(x);
    for (int i = 0; i < CHAIN; i++) {
        ops_tensor *n = ok(ops_mul(y, w), "mul");
        ops_tensor_release(y);
        y = n;
    }
    if (grad && ops_backward(y, NULL, false, false) != OPS_OK)
        bench_die(PROG, "backward");
    ops_tensor_release(y);
    const double t = bench_now() - t0;
    ops_set_grad_enabled(prev);
    return t;
}

static ops_tensor *
param(ops_int_list shape, ops_generator *gen, double bound)
{
    ops_tensor *p = ok(ops_empty(shape, OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE), "empty");
    if (ops_uniform_(p, -bound, bound, gen) != OPS_OK || ops_tensor_set_requires_grad(p, true) != OPS_OK)
        bench_die(PROG, "init");
    return p;
}

int
main(void)
{
    /* ---- per-node overhead ---- */
    ops_tensor *x = ok(ops_full(OPS_INTS(1), OPS_SCALAR_FLOAT(1.0), OPS_FLOAT32, OPS_DEVICE_CPU), "full");
    ops_tensor *w = ok(ops_full(OPS_INTS(1), OPS_SCALAR_FLOAT(1.0001), OPS_FLOAT32, OPS_DEVICE_CPU), "full");
    if (ops_tensor_set_requires_grad(x, true) != OPS_OK)
        bench_die(PROG, "requires_grad");
    double best_grad = 1e30, best_plain = 1e30;
    for (int r = 0; r < REPS; r++) {
        const double tg = chain(x, w, true), tp = chain(x, w, false);
        best_grad = tg < best_grad ? tg : best_grad;
        best_plain = tp < best_plain ? tp : best_plain;
        if (ops_tensor_set_grad(x, NULL) != OPS_OK)
            bench_die(PROG, "set_grad");
    }
    printf("autograd per node (1-element mul, forward record + backward): %.2f us "
           "(chain of %d: %.1f us with grad, %.1f us under no_grad)\n",
           1e6 * (best_grad - best_plain) / CHAIN, CHAIN, 1e6 * best_grad, 1e6 * best_plain);

    /* ---- MLP training step ---- */
    ops_generator *gen = ops_generator_create(7);
    ops_tensor *params[6] = {param(OPS_INTS(256, 784), gen, 1.0 / 28), param(OPS_INTS(256), gen, 1.0 / 28),
                             param(OPS_INTS(256, 256), gen, 1.0 / 16), param(OPS_INTS(256), gen, 1.0 / 16),
                             param(OPS_INTS(10, 256), gen, 1.0 / 16), param(OPS_INTS(10), gen, 1.0 / 16)};
    ops_tensor *xb = ok(ops_rand(OPS_INTS(64, 784), gen, OPS_FLOAT32, OPS_DEVICE_CPU), "rand");
    ops_tensor *yb = ok(ops_randint(10, OPS_INTS(64), gen, OPS_INT64, OPS_DEVICE_CPU), "randint");
    ops_optimizer *opt = ops_sgd_new((ops_tensor_list){(const ops_tensor *const *)params, 6},
                                     &(ops_sgd_options){.lr = 0.01, .momentum = 0.9});
    if (opt == NULL)
        bench_die(PROG, "sgd");
    double best_step = 1e30;
    for (int r = 0; r < REPS + 5; r++) {
        const double t0 = bench_now();
        if (ops_optimizer_zero_grad(opt, true) != OPS_OK)
            bench_die(PROG, "zero_grad");
        ops_tensor *h1 = ok(ops_linear(xb, params[0], params[1]), "linear");
        ops_tensor *a1 = ok(ops_relu(h1), "relu");
        ops_tensor *h2 = ok(ops_linear(a1, params[2], params[3]), "linear");
        ops_tensor *a2 = ok(ops_relu(h2), "relu");
        ops_tensor *lg = ok(ops_linear(a2, params[4], params[5]), "linear");
        ops_tensor *loss = ok(ops_cross_entropy_loss(lg, yb, NULL, 1, -100, 0.0), "cross_entropy");
        if (ops_backward(loss, NULL, false, false) != OPS_OK || ops_optimizer_step(opt) != OPS_OK)
            bench_die(PROG, "backward/step");
        ops_tensor *tmp[] = {h1, a1, h2, a2, lg, loss};
        for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
            ops_tensor_release(tmp[i]);
        const double t = bench_now() - t0;
        if (r >= 5) /* after warm-up (allocator cache, BLAS buffers) */
            best_step = t < best_step ? t : best_step;
    }
    /* OpenBLAS picks its sgemm kernel from OPENBLAS_CORETYPE when set (Debian's 0.3.21
     * does not recognise some AVX-512 CPUs by itself): it decides most of this step. */
    const char *core = getenv("OPENBLAS_CORETYPE");
    printf("MLP 784-256-256-10 training step, batch 64 (forward + backward + SGD, %d threads, "
           "OPENBLAS_CORETYPE=%s): %.0f us\n",
           ops_get_num_threads(), core != NULL ? core : "(unset)", 1e6 * best_step);

    ops_optimizer_release(opt);
    for (int i = 0; i < 6; i++)
        ops_tensor_release(params[i]);
    ops_tensor_release(xb);
    ops_tensor_release(yb);
    ops_tensor_release(x);
    ops_tensor_release(w);
    ops_generator_release(gen);
    return 0;
}

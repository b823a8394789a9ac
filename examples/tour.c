/* A tour of libops from C, built the way a user builds it:
 *
 *     cc tour.c $(pkg-config --cflags --libs libops) -o tour
 *
 * Creation, views that share storage, broadcasting, type promotion, out= and in-place
 * forms, and what an error looks like. */
#include <libops/libops.h>
#include <stdio.h>
#include <stdlib.h>

/* Print a titled tensor, or the error if t is NULL; exits on failure. */
static void
show(const char *title, const ops_tensor *t)
{
    if (!t) {
        fprintf(stderr, "%s failed: %s\n", title, ops_last_error());
        exit(1);
    }
    printf("%s\n", title);
    ops_tensor_print(t, stdout);
    printf("\n");
}

static void
check(ops_status st, const char *what)
{
    if (st != OPS_OK) {
        fprintf(stderr, "%s failed: %s\n", what, ops_last_error());
        exit(1);
    }
}

int
main(void)
{
    /* --- creation ---------------------------------------------------------- */
    ops_tensor *a = ops_arange_start_step(OPS_SCALAR_INT(0), OPS_SCALAR_INT(6), OPS_SCALAR_INT(1),
                                          OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *m = ops_view(a, OPS_INTS(2, 3));
    show("m = arange(6).view(2, 3)", m);

    /* --- views share storage: writing through one is seen by the other ----- */
    ops_tensor *mt = ops_t(m);
    show("mt = m.t()  (a view: no copy)", mt);
    ops_tensor *row = ops_select(m, 0, 1);
    check(ops_fill_(row, OPS_SCALAR_FLOAT(-1.0)), "fill_");
    show("after m[1].fill_(-1), mt sees it", mt);
    printf("mt is contiguous: %s; shares storage with a: %s\n\n",
           ops_tensor_is_contiguous(mt) ? "yes" : "no", ops_tensor_shares_storage(mt, a) ? "yes" : "no");

    /* --- broadcasting: [2, 3] + [3] ---------------------------------------- */
    ops_tensor *bias = ops_linspace(OPS_SCALAR_FLOAT(0.5), OPS_SCALAR_FLOAT(1.5), 3, OPS_FLOAT32,
                                    OPS_DEVICE_CPU);
    ops_tensor *sum = ops_add(m, bias, OPS_SCALAR_INT(1));
    show("m + linspace(0.5, 1.5, 3)  (broadcast [2, 3] with [3])", sum);

    /* --- type promotion: int32 tensor * 2.5 -> float32; int8 + int64 0-dim -> int8 -- */
    ops_tensor *ints = ops_full(OPS_INTS(3), OPS_SCALAR_INT(4), OPS_INT32, OPS_DEVICE_CPU);
    ops_tensor *scaled = ops_mul_scalar(ints, OPS_SCALAR_FLOAT(2.5));
    show("full([3], 4, int32) * 2.5  (a Python-style float promotes to float32)", scaled);
    ops_tensor *small = ops_ones(OPS_INTS(3), OPS_INT8, OPS_DEVICE_CPU);
    ops_tensor *big0d = ops_scalar_tensor(OPS_SCALAR_INT(100), OPS_INT64);
    ops_tensor *kept = ops_add(small, big0d, OPS_SCALAR_INT(1));
    show("ones(3, int8) + tensor(100, int64)  (a 0-dim tensor does not widen int8)", kept);

    /* --- out= and in-place --------------------------------------------------- */
    ops_tensor *out = ops_empty(OPS_INTS(0), OPS_FLOAT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    check(ops_mul_out(m, m, out), "mul_out");
    show("mul(m, m, out=empty float64)  (out is resized, result cast into it)", out);
    check(ops_exp_(out), "exp_");
    check(ops_clamp_scalar_(out, NULL, &OPS_SCALAR_FLOAT(100.0)), "clamp_");
    show("out.exp_().clamp_(max=100)", out);
    printf("version counter of out after three writes: %llu\n\n",
           (unsigned long long)ops_tensor_version(out));

    /* --- a clear error, with nothing written -------------------------------- */
    ops_tensor *wrong = ops_ones(OPS_INTS(4), OPS_FLOAT32, OPS_DEVICE_CPU);
    ops_tensor *bad = ops_add(m, wrong, OPS_SCALAR_INT(1));
    printf("m + ones(4) -> %s\n  error: %s\n", bad ? "a tensor?!" : "NULL", ops_last_error());
    ops_status st = ops_add_(ints, scaled, OPS_SCALAR_INT(1));
    printf("int32 += float32 -> status %d (%s)\n  error: %s\n", (int)st, ops_status_str(st),
           ops_last_error());
    ops_tensor *gpu = ops_zeros(OPS_INTS(2), OPS_FLOAT32, OPS_DEVICE_CUDA(0));
    printf("zeros on cuda:0 -> %s\n  error: %s\n", gpu ? "a tensor" : "NULL",
           gpu ? "(none)" : ops_last_error());

    ops_tensor *all[] = {a, m, mt, row, bias, sum, ints, scaled, small, big0d, kept, out, wrong, bad, gpu};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
    return 0;
}

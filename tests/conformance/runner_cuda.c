/* The conformance runner's CUDA family: every case again on cuda:0 against the CPU
 * (values, out=, in-place, errors, gradients), and --backend cuda (runner.h). */
#include "runner.h"
#include "ops_op_clone.h"
#include "ops_op_contiguous.h"
#include "ops_op_copy.h"
#include "ops_op_transpose.h"

/* ---- CUDA: the backend family (ggml's test-backend-ops idea) ----------------------
 *
 * With a CUDA build and a device, every value case runs again on cuda:0 -- inputs
 * copied there contiguous and then with their last two dims swapped in memory, the
 * functional form, the out= form into empty device outs, the in-place form on a device
 * self -- and each result, copied back, is compared with the CPU's result under the
 * case's tolerance.  Error cases must fail on the device with the CPU's message and
 * leave the device inputs as they were.  Ops with a formula: the gradients that
 * backward computes on the device (float64 inputs, a fixed grad_output) match the
 * CPU's.  An op with no CUDA kernel is counted as skipped and listed at the end. */

#ifdef OPS_WITH_CUDA
static void
cuda_note_missing(const ops_op_info *op)
{
    const int k = by_ptr_index(op);
    if (k >= 0)
        cuda_missing[k] = true;
    cuda_skip_reason = "no CUDA kernel";
    counts.cuda_skipped++;
}

enum { DEV_CONTIGUOUS, DEV_TRANSPOSED };

/* A copy of t on cuda:0 (owned): row-major, or for DEV_TRANSPOSED with 2+ dims the
 * transpose of a contiguous tensor with the last two sizes swapped, so kernels see
 * a non-contiguous operand.  NULL with *st set when the copy failed. */
static ops_tensor *
to_device(const ops_tensor *t, int layout, ops_status *st)
{
    const int nd = (int)ops_tensor_ndim(t);
    int64_t sizes[OPS_MAX_DIMS];
    memcpy(sizes, ops_tensor_sizes(t), sizeof(int64_t) * (size_t)nd);
    const bool swap = layout == DEV_TRANSPOSED && nd >= 2;
    if (swap) {
        const int64_t s = sizes[nd - 1];
        sizes[nd - 1] = sizes[nd - 2];
        sizes[nd - 2] = s;
    }
    ops_tensor *d = ops_tensor_new("conformance", nd, sizes, NULL, ops_tensor_dtype(t), OPS_DEVICE_CUDA(0));
    if (d != NULL && swap) {
        ops_tensor *v = ops_transpose(d, nd - 2, nd - 1);
        ops_tensor_release(d);
        d = v;
    }
    owned_add(d, owned_release_tensor);
    *st = d != NULL ? ops_copy_(d, t, false) : ops_last_status();
    return *st == OPS_OK ? d : NULL;
}

/* op's args with every tensor (and Tensor[] element) copied to cuda:0 and every
 * Device argument, given or left to its default, made cuda:0; false with *st set
 * when a copy failed. */
static bool
device_args(const ops_op_info *op, const ops_ivalue *args, int layout, ops_ivalue *dargs, ops_status *st)
{
    *st = OPS_OK;
    for (int a = 0; a < op->num_args && *st == OPS_OK; a++) {
        dargs[a] = args[a];
        if (args[a].tag == OPS_IVALUE_DEVICE || strncmp(op->args[a].type, "Device", 6) == 0) {
            dargs[a] = ops_ivalue_device(OPS_DEVICE_CUDA(0));
        } else if (args[a].tag == OPS_IVALUE_TENSOR_LIST) {
            const ops_tensor_list l = args[a].v.tensor_list;
            const ops_tensor **data = calloc((size_t)(l.len > 0 ? l.len : 1), sizeof *data);
            if (data == NULL) {
                fprintf(stderr, "conformance: out of memory\n");
                exit(2);
            }
            owned_add(data, free);
            for (int64_t k = 0; k < l.len && *st == OPS_OK; k++)
                data[k] = l.data[k] != NULL ? to_device(l.data[k], layout, st) : NULL;
            dargs[a] = ops_ivalue_tensor_list((ops_tensor_list){data, l.len});
        } else if (args[a].tag == OPS_IVALUE_TENSOR && args[a].v.tensor != NULL) {
            dargs[a] = ops_ivalue_tensor(to_device(args[a].v.tensor, layout, st));
        }
    }
    return *st == OPS_OK;
}

/* A host copy of the device tensor t (owned), or NULL with *st set. */
static ops_tensor *
to_host(const ops_tensor *t, ops_status *st)
{
    ops_tensor *host = ops_tensor_new("conformance", (int)ops_tensor_ndim(t), ops_tensor_sizes(t), NULL,
                                      ops_tensor_dtype(t), OPS_DEVICE_CPU);
    owned_add(host, owned_release_tensor);
    *st = host ? ops_copy_(host, t, false) : ops_last_status();
    return *st == OPS_OK ? host : NULL;
}

/* The device results dev against the CPU ones, return by return (Tensor[] element by
 * element); false with msg on a mismatch, *st set when a copy failed. */
static bool
cuda_compare(const test_case *c, const result *cpu, const result *dev, ops_status *st, char *msg, size_t n)
{
    char why[900];
    for (int i = 0; i < cpu->n && i < c->nret && *st == OPS_OK; i++) {
        const bool values = (c->flags & F_VALUES) && (c->ret[i].flags & RET_COMPARE);
        const bool list = cpu->v[i].tag == OPS_IVALUE_TENSOR_LIST;
        if (dev->v[i].tag != cpu->v[i].tag) {
            snprintf(msg, n, "return %d is a %s on cuda:0, a %s on the cpu", i, ops_ivalue_tag_name(dev->v[i].tag),
                     ops_ivalue_tag_name(cpu->v[i].tag));
            return false;
        }
        const int64_t count = list ? cpu->v[i].v.tensor_list.len : cpu->v[i].tag == OPS_IVALUE_TENSOR;
        if (list && dev->v[i].v.tensor_list.len != count) {
            snprintf(msg, n, "return %d has %lld tensors on cuda:0, %lld on the cpu", i,
                     (long long)dev->v[i].v.tensor_list.len, (long long)count);
            return false;
        }
        for (int64_t k = 0; k < count && *st == OPS_OK; k++) {
            const ops_tensor *ct = list ? cpu->v[i].v.tensor_list.data[k] : cpu->v[i].v.tensor;
            const ops_tensor *dt = list ? dev->v[i].v.tensor_list.data[k] : dev->v[i].v.tensor;
            /* results stay on the inputs' device (the one op meant to leave it: cpu()) */
            const bool to_cpu = strcmp(c->op->name, "cpu") == 0;
            if (!ops_device_equal(ops_tensor_device(dt), to_cpu ? OPS_DEVICE_CPU : OPS_DEVICE_CUDA(0))) {
                snprintf(msg, n, "return %d%s is not on %s", i, list ? " (an element)" : "", to_cpu ? "the cpu" : "cuda:0");
                return false;
            }
            ops_tensor *host = to_host(dt, st);
            if (host != NULL && !check_values(c, ct, host, MAP_SAME, false, values, why, sizeof why)) {
                snprintf(msg, n, "return %d%s: %s", i, list ? " (an element)" : "", why);
                return false;
            }
            owned_drop(host);
        }
    }
    return true;
}

/* One device call of op (args already on cuda:0) compared with the CPU's result. */
void
cuda_run(const test_case *c, const ops_op_info *op, const ops_ivalue *dargs, const char *variant, const result *cpu)
{
    char msg[1024];
    ops_status st;
    result *r = call_all(op, dargs, &st);
    const bool same = st == OPS_OK && cuda_compare(c, cpu, r, &st, msg, sizeof msg);
    if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "no kernel for device cuda") != NULL)
        cuda_note_missing(op);
    else if (st != OPS_OK)
        FAIL(c, op, dargs, variant, "failed on cuda:0: %s", ops_last_error());
    else if (!same)
        FAIL(c, op, dargs, variant, "cuda:0 vs cpu: %.900s", msg);
    else {
        counts.cuda_run++;
        counts.runs++;
    }
    owned_drop(r);
}

/* The out= form on cuda:0 into empty device outs (resized by the op). */
static void
cuda_out(const test_case *c, const result *cpu)
{
    const ops_op_info *op = c->op->out;
    int oi[MAX_RETS];
    const int nout = out_indices(op, oi);
    if (!tensor_returns(c) || nout != c->nret)
        return;
    ops_ivalue base[MAX_ARGS], dargs[MAX_ARGS];
    ops_status st;
    map_args(c, op, base);
    for (int k = 0; k < nout; k++)
        base[oi[k]] = ops_ivalue_none();
    if (!device_args(op, base, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, base, "cuda:0 out=", "copy to cuda:0 failed: %s", ops_last_error());
    for (int k = 0; k < nout; k++) {
        ops_tensor *o = ops_tensor_new("conformance", 1, (int64_t[]){0}, NULL, ops_tensor_dtype(c->ret[k].t),
                                       OPS_DEVICE_CUDA(0));
        ck_assert_ptr_nonnull(o);
        owned_add(o, owned_release_tensor);
        dargs[oi[k]] = ops_ivalue_tensor(o);
    }
    cuda_run(c, op, dargs, "cuda:0 out=, empty", cpu);
}

/* The in-place form on a device copy of self, when it keeps self's shape and dtype. */
static void
cuda_inplace(const test_case *c, const result *cpu)
{
    const ops_op_info *op = c->op->inplace;
    const ops_tensor *exp = ret_tensor(cpu, 0);
    if (c->args[0].tag != OPS_IVALUE_TENSOR || c->nret != 1 || exp == NULL)
        return;
    const ops_tensor *self = c->args[0].v.tensor;
    if (!same_shape(self, exp) || ops_tensor_dtype(self) != ops_tensor_dtype(exp))
        return;
    ops_ivalue base[MAX_ARGS], dargs[MAX_ARGS];
    ops_status st;
    map_args(c, op, base);
    if (!device_args(op, base, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, base, "cuda:0 in-place", "copy to cuda:0 failed: %s", ops_last_error());
    cuda_run(c, op, dargs, "cuda:0 in-place", cpu);
}
#endif

/* An entry that only has an in-place or out= form (fill_, copy_, arange.out): on a
 * device copy of self, or into an empty device out, against the same on the CPU. */
void
cuda_written_check(const test_case *c)
{
#ifdef OPS_WITH_CUDA
    const ops_op_info *op = c->op;
    if (ops_cuda_device_count() == 0 || !tensor_returns(c))
        return;
    const int w = op->kind == OPS_KIND_OUT ? out_index(op) : 0;
    const ops_tensor *given = c->args[w].v.tensor;
    if (w < 0 || given == NULL)
        return;
    ops_ivalue args[MAX_ARGS], dargs[MAX_ARGS];
    ops_status st;
    memcpy(args, c->args, sizeof(ops_ivalue) * (size_t)c->nargs);
    ops_tensor *self = op->kind == OPS_KIND_OUT ? new_tensor(1, (int64_t[]){0}, ops_tensor_dtype(given))
                                                : ops_clone(given, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(self);
    if (op->kind != OPS_KIND_OUT)
        owned_add(self, owned_release_tensor);
    args[w] = ops_ivalue_tensor(self);
    result *cpu = call_all(op, args, &st);
    if (cpu == NULL)
        FAIL(c, op, args, "cuda:0 (the cpu run)", "failed: %s", ops_last_error());
    if (!device_args(op, c->args, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, c->args, "cuda:0", "copy to cuda:0 failed: %s", ops_last_error());
    if (op->kind == OPS_KIND_OUT) {
        ops_tensor *o = ops_tensor_new("conformance", 1, (int64_t[]){0}, NULL, ops_tensor_dtype(given),
                                       OPS_DEVICE_CUDA(0));
        ck_assert_ptr_nonnull(o);
        owned_add(o, owned_release_tensor);
        dargs[w] = ops_ivalue_tensor(o);
    }
    cuda_run(c, op, dargs, op->kind == OPS_KIND_OUT ? "cuda:0 out=, empty" : "cuda:0 in-place", cpu);
    owned_drop(cpu);
#else
    (void)c;
#endif
}

/* The functional case on cuda:0 (contiguous and transposed inputs), then its out= and
 * in-place forms. */
void
cuda_check(const test_case *c, const ops_ivalue *args, const result *cpu_result)
{
#ifdef OPS_WITH_CUDA
    if (ops_cuda_device_count() > 0) {
        const ops_op_info *op = c->op;
        ops_ivalue dargs[MAX_ARGS];
        ops_status st;
        bool matrix = false;
        for (int a = 0; a < op->num_args; a++)
            matrix |= args[a].tag == OPS_IVALUE_TENSOR && args[a].v.tensor != NULL &&
                      ops_tensor_ndim(args[a].v.tensor) >= 2;
        const long missing = counts.cuda_skipped;
        const bool relayout = matrix && (c->flags & F_LAYOUTS); /* as the layouts family: not view, as_strided */
        for (int layout = DEV_CONTIGUOUS; layout <= (relayout ? DEV_TRANSPOSED : DEV_CONTIGUOUS); layout++) {
            const char *variant = layout == DEV_CONTIGUOUS ? "cuda:0" : "cuda:0, transposed inputs";
            if (!device_args(op, args, layout, dargs, &st))
                FAIL(c, op, args, variant, "copy to cuda:0 failed: %s", ops_last_error());
            cuda_run(c, op, dargs, variant, cpu_result);
            if (counts.cuda_skipped != missing)
                return; /* no kernel: the other forms would only say so again */
        }
        if ((c->flags & F_VARIANTS) && c->op->out)
            cuda_out(c, cpu_result);
        if ((c->flags & F_VARIANTS) && c->op->inplace)
            cuda_inplace(c, cpu_result);
        return;
    }
    cuda_skip_reason = "no CUDA device";
#else
    cuda_skip_reason = "libops built without CUDA";
#endif
    (void)c;
    (void)args;
    (void)cpu_result;
    counts.cuda_skipped++;
}

/* An error case on cuda:0: the CPU's message, and device inputs left as they were. */
void
cuda_error(const test_case *c)
{
#ifdef OPS_WITH_CUDA
    const ops_op_info *op = c->op;
    if (ops_cuda_device_count() == 0 || !(c->forms & FORM_FUNCTIONAL) || op->kind != OPS_KIND_FUNCTIONAL)
        return;
    ops_ivalue dargs[MAX_ARGS];
    ops_status st;
    if (!device_args(op, c->args, DEV_CONTIGUOUS, dargs, &st))
        FAIL(c, op, c->args, "cuda:0, expected error", "copy to cuda:0 failed: %s", ops_last_error());
    result *r = call_all(op, dargs, &st);
    if (st == OPS_OK) {
        owned_drop(r);
        FAIL(c, op, dargs, "cuda:0, expected error", "expected an error containing \"%s\"; the call succeeded",
             c->error);
    }
    if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "no kernel for device cuda") != NULL) {
        cuda_note_missing(op);
        return;
    }
    if (strstr(ops_last_error(), c->error) == NULL)
        FAIL(c, op, dargs, "cuda:0, expected error", "the error \"%s\" does not contain \"%s\"", ops_last_error(),
             c->error);
    for (int a = 0; a < op->num_args; a++) {
        if (dargs[a].tag != OPS_IVALUE_TENSOR || dargs[a].v.tensor == NULL)
            continue;
        char why[900];
        ops_tensor *host = to_host(dargs[a].v.tensor, &st);
        if (host == NULL)
            FAIL(c, op, dargs, "cuda:0, expected error", "copy back failed: %s", ops_last_error());
        if (!tensors_identical(c->args[a].v.tensor, host, why, sizeof why))
            FAIL(c, op, dargs, "cuda:0, expected error", "argument '%s' changed by a failed call: %s",
                 op->args[a].name, why);
        owned_drop(host);
    }
    counts.errors++;
#else
    (void)c;
#endif
}

/* ---- CUDA: gradients on the device against the CPU's --------------------------------- */

/* Gradients of output (g->out_ret, g->out_elem) with respect to the inputs requiring
 * grad, for a fixed grad_output, on cuda:0 against the same on the CPU (float64:
 * they differ by summation order only). */
void
cuda_grad_check(const test_case *c, const grad_call *g, ops_tensor *const *inputs)
{
#ifdef OPS_WITH_CUDA
    if (ops_cuda_device_count() == 0)
        return;
    const ops_op_info *op = c->op;
    char variant[96];
    snprintf(variant, sizeof variant, "cuda:0 gradients, output %d", g->out_ret);
    ops_tensor *want[MAX_GRAD_INPUTS], *dev_in[MAX_GRAD_INPUTS] = {0};
    int nwant = 0;
    for (int i = 0; i < g->ninputs; i++)
        if (inputs[i] != NULL && ops_tensor_requires_grad(inputs[i]))
            want[nwant++] = inputs[i];
    ops_tensor *y = NULL;
    if (nwant == 0 || grad_fn(inputs, g->ninputs, &y, (void *)g) != OPS_OK)
        return; /* the CPU gradcheck reports a failing forward */
    owned_add(y, owned_release_tensor);
    /* grad_output: fixed values in [-0.5, 0.5) that differ between neighbours */
    ops_tensor *v = ops_tensor_new("conformance", (int)ops_tensor_ndim(y), ops_tensor_sizes(y), NULL, OPS_FLOAT64,
                                   OPS_DEVICE_CPU);
    ck_assert_ptr_nonnull(v);
    owned_add(v, owned_release_tensor);
    double *vp = ops_tensor_data_ptr(v);
    for (int64_t i = 0; i < ops_tensor_numel(v); i++)
        vp[i] = (double)((i * 37 + 11) % 23) / 23.0 - 0.5;
    ops_tensor_vec gc = {0}, gd = {0};
    ops_status st = ops_autograd_grad((ops_tensor_list){(const ops_tensor **)&y, 1},
                                      (ops_tensor_list){(const ops_tensor **)want, nwant},
                                      (ops_tensor_list){(const ops_tensor **)&v, 1}, false, false, true, &gc);
    if (st != OPS_OK)
        return; /* refused by the formula (counted by the gradcheck) */

    /* the same on the device: every argument copied, inputs made leaves there */
    grad_call gdev = *g;
    const bool prev = ops_set_grad_enabled(false);
    bool ok = device_args(g->op, g->args, DEV_CONTIGUOUS, gdev.args, &st);
    for (int i = 0; ok && i < g->ninputs; i++) {
        if (inputs[i] == NULL)
            continue;
        dev_in[i] = to_device(inputs[i], DEV_CONTIGUOUS, &st);
        ok = dev_in[i] != NULL &&
             (!ops_tensor_requires_grad(inputs[i]) || ops_tensor_set_requires_grad(dev_in[i], true) == OPS_OK);
    }
    ops_tensor *vd = ok ? to_device(v, DEV_CONTIGUOUS, &st) : NULL;
    ops_set_grad_enabled(prev);
    if (!ok || vd == NULL) {
        ops_tensor_vec_release(&gc);
        FAIL(c, op, g->args, variant, "copy to cuda:0 failed: %s", ops_last_error());
    }
    ops_tensor *wantd[MAX_GRAD_INPUTS];
    int nd = 0;
    for (int i = 0; i < g->ninputs; i++)
        if (inputs[i] != NULL && ops_tensor_requires_grad(inputs[i]))
            wantd[nd++] = dev_in[i];
    ops_tensor *yd = NULL;
    st = grad_fn(dev_in, g->ninputs, &yd, &gdev);
    owned_add(yd, owned_release_tensor);
    if (st == OPS_OK)
        st = ops_autograd_grad((ops_tensor_list){(const ops_tensor **)&yd, 1},
                               (ops_tensor_list){(const ops_tensor **)wantd, nd},
                               (ops_tensor_list){(const ops_tensor **)&vd, 1}, false, false, true, &gd);
    if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "no kernel for device cuda") != NULL) {
        ops_tensor_vec_release(&gc);
        cuda_note_missing(op); /* the op or an op of its backward has no CUDA kernel */
        return;
    }
    if (st != OPS_OK) {
        ops_tensor_vec_release(&gc);
        FAIL(c, op, gdev.args, variant, "failed on cuda:0: %s", ops_last_error());
    }
    char msg[512] = "";
    for (int k = 0; k < nwant && msg[0] == '\0'; k++) {
        const ops_tensor *a = gc.data[k], *b = gd.data[k];
        if ((a == NULL) != (b == NULL)) {
            snprintf(msg, sizeof msg, "input %d: the gradient is %s on the cpu, %s on cuda:0", k,
                     a ? "defined" : "undefined", b ? "defined" : "undefined");
            break;
        }
        if (a == NULL)
            continue;
        ops_tensor *hb = to_host(b, &st);
        if (hb == NULL || !same_shape(a, hb) || ops_tensor_dtype(a) != ops_tensor_dtype(hb)) {
            snprintf(msg, sizeof msg, "input %d: the gradient's shape or dtype differs (or its copy failed)", k);
            break;
        }
        ops_tensor *ca = ops_contiguous(a, OPS_CONTIGUOUS_FORMAT), *cb = ops_contiguous(hb, OPS_CONTIGUOUS_FORMAT);
        for (int64_t i = 0; i < ops_tensor_numel(ca); i++) {
            const double x = read_double(ops_tensor_dtype(ca), element_ptr(ca, i));
            const double z = read_double(ops_tensor_dtype(cb), element_ptr(cb, i));
            const bool same = (isnan(x) && isnan(z)) || x == z || fabs(x - z) <= 1e-9 + 1e-7 * fabs(x);
            if (!same) {
                snprintf(msg, sizeof msg, "input %d: gradient element %lld is %.12g on cuda:0, %.12g on the cpu", k,
                         (long long)i, z, x);
                break;
            }
        }
        ops_tensor_release(ca);
        ops_tensor_release(cb);
        owned_drop(hb);
    }
    ops_tensor_vec_release(&gc);
    ops_tensor_vec_release(&gd);
    if (msg[0] != '\0')
        FAIL(c, op, gdev.args, variant, "%s", msg);
    counts.cuda_grads++;
#else
    (void)c;
    (void)g;
    (void)inputs;
#endif
}

/* --backend cuda: the CPU's functional result, then the CUDA family alone (the CPU
 * families run in the main tree). */
void
run_backend(const test_case *c)
{
    if (c->flags & F_ERROR) {
        cuda_error(c);
        return;
    }
    if (c->op->kind != OPS_KIND_FUNCTIONAL) {
        mark(c->op);
        cuda_written_check(c);
        return;
    }
    ops_status st;
    argset s;
    argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, -1, NULL, false, NULL);
    result *got = call_all(c->op, s.v, &st);
    if (got == NULL)
        FAIL(c, c->op, s.v, "contiguous", "failed on the cpu: %s", ops_last_error());
    mark(c->op);
    cuda_check(c, s.v, got);
    owned_drop(got);
    argset_free(&s);
    run_gradients(c);
}

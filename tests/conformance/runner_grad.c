/* The conformance runner's gradients: gradcheck and gradgradcheck of every op with a
 * formula in ops/derivatives.yaml, and the probe for ops that need one (runner.h). */
#include "runner.h"
#include "ops_op_clone.h"
#include "ops_op_contiguous.h"
#include "ops_op_to.h"
#include "ops_op_transpose.h"

/* ---- gradients ---------------------------------------------------------------- */

int
by_ptr_index(const ops_op_info *op)
{
    const ops_op_info **hit = bsearch(&op, by_ptr, (size_t)nregistry, sizeof *by_ptr, cmp_ptr);
    return hit != NULL ? (int)(hit - by_ptr) : -1;
}

/* The formula entry of a functional op, or -1. */
int
formula_index(const ops_op_info *op)
{
    char full[160];
    snprintf(full, sizeof full, "%s%s%s", op->name, op->overload[0] ? "." : "", op->overload);
    for (int e = 0; e < ops_autograd_num_formula_entries; e++)
        if (strcmp(ops_autograd_formula_entries[e], full) == 0)
            return e;
    return -1;
}

static bool
in_list(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *q = strchr(p, ',');
        const size_t len = q != NULL ? (size_t)(q - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = q != NULL ? q + 1 : p + len;
    }
    return false;
}

/* The case's arguments with inputs[] in place; lists[a] holds a Tensor[] argument's
 * new element array. */
static void
grad_args(const grad_call *g, ops_tensor *const *inputs, ops_ivalue *args,
          const ops_tensor *(*lists)[MAX_GRAD_INPUTS])
{
    memcpy(args, g->args, sizeof g->args);
    for (int a = 0; a < g->nargs; a++) {
        if (args[a].tag != OPS_IVALUE_TENSOR_LIST)
            continue;
        const ops_tensor_list l = args[a].v.tensor_list;
        for (int64_t k = 0; k < l.len && k < MAX_GRAD_INPUTS; k++)
            lists[a][k] = l.data[k];
        args[a].v.tensor_list.data = lists[a];
    }
    for (int i = 0; i < g->ninputs; i++) {
        if (inputs[i] == NULL)
            continue;
        if (g->elem_of[i] < 0)
            args[g->arg_of[i]] = ops_ivalue_tensor(inputs[i]);
        else
            lists[g->arg_of[i]][g->elem_of[i]] = inputs[i];
    }
}

/* f(inputs) for ops_gradcheck: the boxed call, keeping the output under test. */
ops_status
grad_fn(ops_tensor *const *inputs, int n, ops_tensor **out, void *ctx)
{
    const grad_call *g = ctx;
    ops_ivalue args[MAX_ARGS], r[MAX_RETS];
    const ops_tensor *lists[MAX_ARGS][MAX_GRAD_INPUTS];
    (void)n;
    grad_args(g, inputs, args, lists);
    ops_status st = g->op->call(args, r);
    if (st != OPS_OK)
        return st;
    const ops_ivalue *o = &r[g->out_ret];
    if (o->tag == OPS_IVALUE_TENSOR_LIST) {
        if (g->out_elem >= o->v.tensor_list.len)
            st = ops_fail(OPS_ERR_VALUE, "gradients: the op returned %lld tensors, wanted element %d",
                          (long long)o->v.tensor_list.len, g->out_elem);
        else
            *out = ops_tensor_retain(o->v.tensor_list.data[g->out_elem]);
    } else {
        *out = ops_tensor_retain(o->v.tensor);
    }
    for (int i = 0; i < g->op->num_returns; i++)
        ops_ivalue_release(&r[i]);
    return st;
}

static bool
all_finite(const ops_tensor *t)
{
    const int64_t n = ops_tensor_numel(t);
    const double *p = ops_tensor_data_ptr(t);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(p[i]))
            return false;
    return true;
}

/* The case's floating tensor t in float64, transposed in layout on pass 1 when 2-D or
 * more (*transposed set then); NULL when it holds a non-finite value. */
static ops_tensor *
grad_input(const ops_tensor *t, int pass, bool *transposed, bool *finite)
{
    ops_tensor *x = ops_to_dtype(t, OPS_FLOAT64, false, true, OPS_MEMORY_FORMAT_NONE);
    ck_assert_ptr_nonnull(x);
    if (pass == 1 && ops_tensor_ndim(x) >= 2) {
        /* the same values through a transposed layout */
        const int nd = (int)ops_tensor_ndim(x);
        ops_tensor *xt = ops_transpose(x, nd - 2, nd - 1);
        ops_tensor *c2 = ops_contiguous(xt, OPS_CONTIGUOUS_FORMAT);
        ops_tensor *back = ops_transpose(c2, nd - 2, nd - 1);
        ops_tensor_release(xt);
        ops_tensor_release(c2);
        ops_tensor_release(x);
        x = back;
        *transposed = true;
    }
    ops_tensor *cx = ops_contiguous(x, OPS_CONTIGUOUS_FORMAT);
    *finite = *finite && all_finite(cx);
    ops_tensor_release(cx);
    return x;
}

/* gradcheck + gradgradcheck of output (ret, elem) of the case's op. */
static void
grad_check_output(const test_case *c, grad_call *g, ops_tensor **inputs, int pass, int e)
{
    const ops_op_info *op = c->op;
    char variant[96], elem[32] = "";
    if (g->out_elem >= 0)
        snprintf(elem, sizeof elem, " element %d", g->out_elem);
    snprintf(variant, sizeof variant, "gradcheck%s, output %d%s", pass == 0 ? "" : " (transposed inputs)", g->out_ret,
             elem);
    const ops_status st1 = ops_gradcheck(grad_fn, g, g->ninputs, inputs, NULL);
    if (st1 == OPS_ERR_NOT_IMPLEMENTED) { /* the formula refuses this case */
        counts.grad_not_implemented++;
        grad_checked[e] = true;
        return;
    }
    if (st1 != OPS_OK)
        FAIL(c, op, g->args, variant, "%s", ops_last_error());
    const ops_status st = ops_gradgradcheck(grad_fn, g, g->ninputs, inputs, NULL);
    if (st == OPS_ERR_NOT_IMPLEMENTED)
        counts.gradgrad_skipped++;
    else if (st != OPS_OK)
        FAIL(c, op, g->args, variant, "gradgradcheck: %s", ops_last_error());
    counts.grads++;
    grad_checked[e] = true;
}

/* backward and double backward of the case's op against finite differences, with its
 * floating tensor inputs in float64 (contiguous, then transposed when 2-D or more):
 * every element of a Tensor[] input is an input of its own, and every floating output
 * (each return, each element of a Tensor[] return) is checked in turn, the others
 * getting no gradient (the engine's zeros). */
void
run_gradients(const test_case *c)
{
    const ops_op_info *op = c->op;
    const int e = formula_index(op);
    if (e < 0 || op->kind != OPS_KIND_FUNCTIONAL || !(c->flags & F_VALUES) || (c->flags & F_NO_GRADCHECK) ||
        op->returns == NULL || strncmp(op->returns[0].type, "Tensor", 6) != 0)
        return;
    if (c->dtype != OPS_FLOAT64 && !(c->dtype == OPS_FLOAT32 && !has_f64_case[by_ptr_index(op)]))
        return;
    for (int pass = 0; pass < 2; pass++) {
        grad_call g = {.op = op, .nargs = c->nargs};
        memcpy(g.args, c->args, sizeof g.args);
        ops_tensor *inputs[MAX_GRAD_INPUTS] = {0};
        bool any = false, usable = true, transposable = false;
        for (int a = 0; a < c->nargs && usable; a++) {
            const ops_ivalue *v = &c->args[a];
            const bool list = v->tag == OPS_IVALUE_TENSOR_LIST;
            if (!list && (v->tag != OPS_IVALUE_TENSOR || v->v.tensor == NULL))
                continue;
            const int64_t count = list ? v->v.tensor_list.len : 1;
            const bool wanted = in_list(ops_autograd_formula_inputs[e], op->args[a].name);
            for (int64_t k = 0; k < count; k++) {
                const ops_tensor *t = list ? v->v.tensor_list.data[k] : v->v.tensor;
                if (t == NULL || !ops_dtype_is_floating(ops_tensor_dtype(t)))
                    continue;
                ck_assert_msg(g.ninputs < MAX_GRAD_INPUTS && k < MAX_GRAD_INPUTS, "gradients: too many inputs");
                ops_tensor *x = grad_input(t, pass, &transposable, &usable);
                if (wanted) {
                    ck_assert_int_eq(ops_tensor_set_requires_grad(x, true), OPS_OK);
                    any = true;
                }
                g.arg_of[g.ninputs] = a;
                g.elem_of[g.ninputs] = list ? (int)k : -1;
                inputs[g.ninputs++] = x;
            }
        }
        int nouts = 0;
        int outs[MAX_GRAD_INPUTS][2];
        if (any && usable && (pass == 0 || transposable)) {
            /* Finite differences need float64 outputs, finite where they are probed (a
             * case may sit outside the op's smooth domain: sqrt of negatives), and an op
             * that takes this layout at all (view of a transposed tensor).  Integer
             * outputs (indices) carry no gradient and are not checked. */
            ops_ivalue args[MAX_ARGS], r[MAX_RETS];
            const ops_tensor *lists[MAX_ARGS][MAX_GRAD_INPUTS];
            grad_args(&g, inputs, args, lists);
            const bool prev = ops_set_grad_enabled(false);
            const bool ok = op->call(args, r) == OPS_OK;
            ops_set_grad_enabled(prev);
            for (int i = 0; ok && i < op->num_returns; i++) {
                const bool list = r[i].tag == OPS_IVALUE_TENSOR_LIST;
                const int64_t count = list ? r[i].v.tensor_list.len : r[i].tag == OPS_IVALUE_TENSOR;
                for (int64_t k = 0; k < count && nouts < MAX_GRAD_INPUTS; k++) {
                    const ops_tensor *y = list ? r[i].v.tensor_list.data[k] : r[i].v.tensor;
                    if (ops_tensor_dtype(y) != OPS_FLOAT64 || ops_autograd_formula_outputs[e][i] != '1')
                        continue;
                    ops_tensor *cy = ops_contiguous(y, OPS_CONTIGUOUS_FORMAT);
                    const bool finite = all_finite(cy);
                    ops_tensor_release(cy);
                    if (!finite) { /* the case is outside the op's domain: no output checked */
                        usable = false;
                        break;
                    }
                    outs[nouts][0] = i;
                    outs[nouts][1] = list ? (int)k : -1;
                    nouts++;
                }
            }
            for (int i = 0; ok && i < op->num_returns; i++)
                ops_ivalue_release(&r[i]);
        }
        for (int k = 0; any && usable && (pass == 0 || transposable) && k < nouts; k++) {
            g.out_ret = outs[k][0];
            g.out_elem = outs[k][1];
            if (!backend_only)
                grad_check_output(c, &g, inputs, pass, e);
            if (pass == 0)
                cuda_grad_check(c, &g, inputs);
        }
        for (int a = 0; a < MAX_GRAD_INPUTS; a++)
            ops_tensor_release(inputs[a]);
    }
}

/* An op without a formula must not be differentiable: called with its floating inputs
 * requiring grad, it either succeeds (integer or bool results, or an entry that says
 * its outputs carry no gradient) or fails with "the derivative for ... is not
 * implemented" -- which marks a missing formula, reported at the end of a full run. */
void
run_formula_probe(const test_case *c)
{
    const ops_op_info *op = c->op;
    if (op->kind != OPS_KIND_FUNCTIONAL || formula_index(op) >= 0 || (c->flags & F_ERROR) ||
        !ops_dtype_is_floating(c->dtype))
        return;
    const int k = by_ptr_index(op);
    if (k < 0 || no_formula[k])
        return;
    ops_ivalue args[MAX_ARGS], r[MAX_RETS];
    memcpy(args, c->args, sizeof args);
    ops_tensor *inputs[MAX_ARGS] = {0};
    bool any = false;
    for (int a = 0; a < c->nargs; a++) {
        const ops_ivalue *v = &c->args[a];
        if (v->tag != OPS_IVALUE_TENSOR || v->v.tensor == NULL || !ops_dtype_is_floating(ops_tensor_dtype(v->v.tensor)))
            continue;
        inputs[a] = ops_clone(v->v.tensor, OPS_MEMORY_FORMAT_NONE);
        ck_assert_ptr_nonnull(inputs[a]);
        ck_assert_int_eq(ops_tensor_set_requires_grad(inputs[a], true), OPS_OK);
        args[a] = ops_ivalue_tensor(inputs[a]);
        any = true;
    }
    if (any) {
        const bool prev = ops_set_grad_enabled(true);
        const ops_status st = op->call(args, r);
        ops_set_grad_enabled(prev);
        if (st == OPS_OK) {
            for (int i = 0; i < op->num_returns; i++)
                ops_ivalue_release(&r[i]);
        } else if (st == OPS_ERR_NOT_IMPLEMENTED && strstr(ops_last_error(), "the derivative for") != NULL) {
            no_formula[k] = true;
        }
    }
    for (int a = 0; a < MAX_ARGS; a++)
        ops_tensor_release(inputs[a]);
}

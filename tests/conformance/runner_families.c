/* The conformance runner's CPU families: the case as written, its layouts, the out=
 * and in-place forms, and the expected errors (runner.h). */
#include "runner.h"

/* ---- the families ------------------------------------------------------------------- */

/* The case as written: functional ops on contiguous guarded inputs; entries that
 * have only an in-place or out= form (fill_, copy_, arange.start_out) on a guarded
 * self or a fresh empty out.  Then every allocation failed in turn. */
void
run_primary(const test_case *c)
{
    const ops_op_info *op = c->op;
    char msg[1024];
    ops_status st;
    argset s;
    if (op->kind == OPS_KIND_FUNCTIONAL) {
        argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, -1, NULL, false, NULL);
        result *got = call_all(op, s.v, &st);
        if (got == NULL)
            FAIL(c, op, s.v, "contiguous", "failed: %s", ops_last_error());
        const int a = argset_touched_after(&s, op);
        if (a >= 0)
            FAIL(c, op, s.v, "contiguous", "wrote into its input '%s'", op->args[a].name);
        if (!check_results(c, op, got, MAP_SAME, msg, sizeof msg))
            FAIL(c, op, s.v, "contiguous", "%s", msg);
        counts.runs++;
        mark(op);
        cuda_check(c, s.v, got);
        owned_drop(got);
        inject_faults(c, op, s.v, "contiguous, allocation failures", &s, NULL, NULL);
        argset_free(&s);
        return;
    }
    const int w = op->kind == OPS_KIND_OUT ? out_index(op) : 0;
    const ops_tensor *given = c->args[w].v.tensor;
    const int nd = (int)ops_tensor_ndim(given);
    argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, w, NULL, false, NULL);
    if (op->kind == OPS_KIND_INPLACE) {
        for (int pass = 0; pass < 2; pass++) {
            guarded g;
            layout l = pass == 0 ? layout_contiguous(nd) : layout_strided(nd);
            l.lead = 3;
            guarded_new(&g, nd, ops_tensor_sizes(given), ops_tensor_dtype(given), &l, given);
            guarded_snapshot(&g);
            s.v[w] = ops_ivalue_tensor(g.t);
            const char *variant = pass == 0 ? "in-place" : "in-place, strided self";
            if (pass == 0)
                inject_faults(c, op, s.v, "in-place, allocation failures", &s, &g, NULL);
            guarded_free(&g);
            guarded_new(&g, nd, ops_tensor_sizes(given), ops_tensor_dtype(given), &l, given);
            s.v[w] = ops_ivalue_tensor(g.t);
            int64_t strides[OPS_MAX_DIMS];
            memcpy(strides, ops_tensor_strides(g.t), sizeof(int64_t) * (size_t)nd);
            const void *ptr = ops_tensor_data_ptr(g.t);
            const uint64_t version = ops_tensor_version(g.t);
            ops_tensor *r = call(op, s.v, &st);
            if (st != OPS_OK)
                FAIL(c, op, s.v, variant, "failed: %s", ops_last_error());
            if (ops_tensor_version(g.t) <= version)
                FAIL(c, op, s.v, variant, "the version counter was not bumped");
            check_written(c, op, s.v, variant, &g, r, ptr, strides, false);
            const int a = argset_touched_after(&s, op);
            if (a >= 0)
                FAIL(c, op, s.v, variant, "wrote into its input '%s'", op->args[a].name);
            owned_drop(r);
            guarded_free(&g);
            counts.runs++;
            mark(op);
            if (nd == 0 || ops_tensor_numel(given) < 2)
                break;
        }
    } else {
        for (int pass = 0; pass < 2; pass++) {
            ops_tensor *o = new_tensor(nd, ops_tensor_sizes(given), ops_tensor_dtype(given));
            s.v[w] = ops_ivalue_tensor(o);
            if (pass == 0) {
                inject_faults(c, op, s.v, "out=, allocation failures", &s, NULL,
                              ops_tensor_numel(given) == 0 ? o : NULL);
                owned_drop(o);
                continue;
            }
            ops_tensor *r = call(op, s.v, &st);
            if (st != OPS_OK)
                FAIL(c, op, s.v, "out=", "failed: %s", ops_last_error());
            if (r != o)
                FAIL(c, op, s.v, "out=", "did not return out");
            if (!check_values(c, c->expected, o, MAP_SAME, false, (c->flags & F_VALUES) && (c->ret[0].flags & RET_COMPARE),
                              msg, sizeof msg))
                FAIL(c, op, s.v, "out=", "%s", msg);
            owned_drop(r);
            owned_drop(o);
            counts.runs++;
            mark(op);
        }
    }
    argset_free(&s);
    cuda_written_check(c);
}

/* Non-contiguous and expanded inputs give the same values. */
void
run_layouts(const test_case *c, int case_index)
{
    static const lay_kind kinds[] = {LAY_STRIDED, LAY_TRANSPOSED, LAY_BROADCAST, LAY_OUTER0,
                                     LAY_INNER0,  LAY_RANDOM,     LAY_RANDOM};
    const bool new_dims = dims_may_change(c);
    char msg[1024];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const lay_kind kind = kinds[k];
        const bool elementwise_only = kind == LAY_BROADCAST || kind == LAY_OUTER0 || kind == LAY_INNER0;
        if (elementwise_only && !(c->flags & F_ELEMENTWISE))
            continue;
        if (kind == LAY_RANDOM && !(c->flags & F_RANDOM))
            continue;
        uint64_t rng = runner_seed * 0x9E3779B97F4A7C15ull + (uint64_t)case_index * 131u + k;
        argset s;
        argset_build(&s, c->args, c->nargs, kind, -1, c->expected, new_dims, &rng);
        if (s.changed == 0) {
            argset_free(&s);
            continue;
        }
        ops_status st;
        const char *variant = lay_names[kind];
        result *got = call_all(c->op, s.v, &st);
        if (got == NULL)
            FAIL(c, c->op, s.v, variant, "failed: %s", ops_last_error());
        const index_map map = kind == LAY_OUTER0 ? MAP_OUTER : kind == LAY_INNER0 ? MAP_INNER : MAP_SAME;
        if (!check_results(c, c->op, got, map, msg, sizeof msg))
            FAIL(c, c->op, s.v, variant, "%s", msg);
        const int a = argset_touched_after(&s, c->op);
        if (a >= 0)
            FAIL(c, c->op, s.v, variant, "wrote into its input '%s'", c->op->args[a].name);
        owned_drop(got);
        argset_free(&s);
        counts.runs++;
    }
}

/* The out= form (PyTorch's test_out): empty (resized), NaN-filled, strided and
 * transposed outs; wrong shapes, unsafe casts and self-overlapping outs refused.  An op
 * with several returns has one out= per return (out i holds return i): every check
 * gives all of them the same kind of out, and an error case makes one of them wrong in
 * turn, the others right, and requires all of them byte-identical afterwards. */
void
run_out(const test_case *c, int case_index)
{
    const ops_op_info *op = c->op->out;
    int oi[MAX_RETS];
    const int nout = out_indices(op, oi);
    if (!tensor_returns(c) || nout != c->nret)
        return; /* Tensor[] returns have no out= form here */
    const bool elementwise = (c->flags & F_ELEMENTWISE) != 0;
    char msg[1024];
    ops_status st;
    ops_ivalue base[MAX_ARGS];
    map_args(c, op, base);
    argset s;
    argset_build(&s, base, op->num_args, LAY_CONTIGUOUS, oi[0], NULL, false, NULL);
    for (int k = 1; k < nout; k++)
        s.v[oi[k]] = ops_ivalue_none();

    /* empty outs are resized; allocation failures leave them empty */
    ops_tensor *o[MAX_RETS];
    for (int k = 0; k < nout; k++) {
        o[k] = new_tensor(1, (int64_t[]){0}, ops_tensor_dtype(c->ret[k].t));
        s.v[oi[k]] = ops_ivalue_tensor(o[k]);
    }
    inject_faults_n(c, op, s.v, "out=, empty, allocation failures", &s, NULL, 0, (const ops_tensor *const *)o, nout);
    for (int k = 0; k < nout; k++) {
        owned_drop(o[k]);
        o[k] = new_tensor(1, (int64_t[]){0}, ops_tensor_dtype(c->ret[k].t));
        s.v[oi[k]] = ops_ivalue_tensor(o[k]);
    }
    result *r = call_all(op, s.v, &st);
    if (r == NULL)
        FAIL(c, op, s.v, "out=, empty", "failed: %s", ops_last_error());
    for (int k = 0; k < nout; k++) {
        if (ret_tensor(r, k) != o[k])
            FAIL(c, op, s.v, "out=, empty", "did not return %s", nout > 1 ? out_name(op, k) : "out");
        const bool values = (c->flags & F_VALUES) && (c->ret[k].flags & RET_COMPARE);
        if (!check_values(c, c->ret[k].t, o[k], MAP_SAME, false, values, msg, sizeof msg))
            FAIL(c, op, s.v, "out=, empty", "%s%s%.900s", nout > 1 ? out_name(op, k) : "", nout > 1 ? ": " : "",
                 msg);
    }
    if (argset_touched_after(&s, op) >= 0)
        FAIL(c, op, s.v, "out=, empty", "wrote into an input");
    owned_drop(r);
    for (int k = 0; k < nout; k++)
        owned_drop(o[k]);
    counts.runs++;
    mark(op);

    /* outs of the right shape: their storage and strides are kept */
    enum { OUT_NAN, OUT_CONTIG, OUT_STRIDED, OUT_TRANSPOSED, OUT_RANDOM, OUT_KINDS };
    static const char *const names[] = {"out=, NaN-filled", "out=, contiguous", "out=, strided",
                                        "out=, transposed", "out=, random layout"};
    guarded g[MAX_RETS];
    const guarded *gp[MAX_RETS];
    for (int kind = 0; kind < OUT_KINDS; kind++) {
        /* a kind runs when it applies to some out (the others get a contiguous one) */
        bool any = false;
        for (int k = 0; k < nout; k++) {
            const ops_tensor *exp = c->ret[k].t;
            const int nd = (int)ops_tensor_ndim(exp);
            const int64_t numel = ops_tensor_numel(exp);
            any |= (kind == OUT_NAN && ops_dtype_is_floating(ops_tensor_dtype(exp))) || kind == OUT_CONTIG ||
                   (kind == OUT_STRIDED && nd >= 1 && numel >= 2) || (kind == OUT_TRANSPOSED && nd >= 2 && numel >= 2) ||
                   (kind == OUT_RANDOM && (c->flags & F_RANDOM) && nd >= 1);
        }
        if (!any)
            continue;
        uint64_t rng = runner_seed * 0xD1B54A32D192ED03ull + (uint64_t)case_index;
        layout l[MAX_RETS];
        for (int k = 0; k < nout; k++) {
            const ops_tensor *exp = c->ret[k].t;
            const int nd = (int)ops_tensor_ndim(exp);
            const int64_t numel = ops_tensor_numel(exp);
            l[k] = layout_contiguous(nd);
            if (kind == OUT_STRIDED && nd >= 1 && numel >= 2)
                l[k] = layout_strided(nd);
            else if (kind == OUT_TRANSPOSED && nd >= 2 && numel >= 2)
                l[k] = layout_transposed(nd);
            else if (kind == OUT_RANDOM && nd >= 1)
                l[k] = layout_random(nd, &rng);
            if (kind <= OUT_CONTIG)
                l[k].lead = 2;
            guarded_new(&g[k], nd, ops_tensor_sizes(exp), ops_tensor_dtype(exp), &l[k], NULL);
            prefill(&g[k], exp, kind == OUT_NAN && ops_dtype_is_floating(ops_tensor_dtype(exp)));
            gp[k] = &g[k];
        }
        if (kind == OUT_CONTIG) {
            for (int k = 0; k < nout; k++) {
                guarded_snapshot(&g[k]);
                s.v[oi[k]] = ops_ivalue_tensor(g[k].t);
            }
            inject_faults_n(c, op, s.v, "out=, allocation failures", &s, gp, nout, NULL, 0);
            for (int k = 0; k < nout; k++) {
                const ops_tensor *exp = c->ret[k].t;
                guarded_free(&g[k]);
                guarded_new(&g[k], (int)ops_tensor_ndim(exp), ops_tensor_sizes(exp), ops_tensor_dtype(exp), &l[k],
                            NULL);
                prefill(&g[k], exp, false);
            }
        }
        int64_t strides[MAX_RETS][OPS_MAX_DIMS];
        const void *ptr[MAX_RETS];
        for (int k = 0; k < nout; k++) {
            s.v[oi[k]] = ops_ivalue_tensor(g[k].t);
            memcpy(strides[k], ops_tensor_strides(g[k].t), sizeof(int64_t) * (size_t)ops_tensor_ndim(g[k].t));
            ptr[k] = ops_tensor_data_ptr(g[k].t);
        }
        r = call_all(op, s.v, &st);
        if (r == NULL)
            FAIL(c, op, s.v, names[kind], "failed: %s", ops_last_error());
        for (int k = 0; k < nout; k++)
            check_written_ret(c, op, s.v, names[kind], &g[k], ret_tensor(r, k), ptr[k], strides[k], false, k);
        if (argset_touched_after(&s, op) >= 0)
            FAIL(c, op, s.v, names[kind], "wrote into an input");
        owned_drop(r);
        for (int k = 0; k < nout; k++)
            guarded_free(&g[k]);
        counts.runs++;
    }

    /* one bad out (k) among right ones: an error, and no out written */
    for (int bad = 0; bad < nout; bad++) {
        const ops_tensor *bexp = c->ret[bad].t;
        const int bnd = (int)ops_tensor_ndim(bexp);
        const int64_t *bsizes = ops_tensor_sizes(bexp);
        const ops_dtype bed = ops_tensor_dtype(bexp);
        enum { BAD_SHAPE, BAD_CAST, BAD_DTYPE, BAD_OVERLAP, BAD_KINDS };
        for (int why = 0; why < BAD_KINDS; why++) {
            /* the out's geometry and dtype, and the message expected */
            int64_t wrong[OPS_MAX_DIMS];
            int wnd = bnd;
            ops_dtype od = bed;
            layout bl = layout_contiguous(bnd);
            char shape[160], variant[200];
            const char *fragment = NULL;
            memcpy(wrong, bsizes, sizeof(int64_t) * (size_t)bnd);
            if (why == BAD_SHAPE && elementwise) {
                /* a non-empty out of another shape (non-elementwise ops resize it, as PyTorch's) */
                wnd = bnd > 0 ? bnd : 1;
                for (int d = 0; d < bnd; d++)
                    wrong[d] = bsizes[d] > 0 ? bsizes[d] : 1;
                if (bnd == 0)
                    wrong[0] = 2;
                else
                    wrong[bnd - 1] += 1;
                bl = layout_contiguous(wnd);
                fragment = dims_str(wnd, wrong, shape, sizeof shape);
                snprintf(variant, sizeof variant, "out=, wrong shape%s%s", nout > 1 ? " of " : "",
                         nout > 1 ? out_name(op, bad) : "");
            } else if (why == BAD_CAST && elementwise && category(bed) > 0) {
                /* an out the result cannot be cast to (float into int, int into bool) */
                od = category(bed) == 2 ? OPS_INT64 : OPS_BOOL;
                fragment = "can't be cast to the desired output type";
                snprintf(variant, sizeof variant, "out=, unsafe cast");
            } else if (why == BAD_DTYPE && !elementwise && nout > 1) {
                /* several returns: each out must have exactly its return's dtype */
                od = bed == OPS_INT64 ? OPS_INT32 : ops_dtype_is_floating(bed) ? OPS_INT64 : OPS_FLOAT32;
                fragment = op->name;
                snprintf(variant, sizeof variant, "out=, %s of dtype %s for %s", out_name(op, bad), ops_dtype_name(od),
                         ops_dtype_name(bed));
            } else if (why == BAD_OVERLAP && (elementwise || nout > 1) && ops_tensor_numel(bexp) >= 2) {
                /* an out whose elements share memory */
                bl = layout_expanded(bnd);
                fragment = "more than one element of the written-to tensor";
                snprintf(variant, sizeof variant, "out=, %s overlapping itself", nout > 1 ? out_name(op, bad) : "out");
            }
            if (fragment == NULL)
                continue;
            for (int k = 0; k < nout; k++) {
                const ops_tensor *exp = c->ret[k].t;
                layout lk = layout_contiguous((int)ops_tensor_ndim(exp));
                if (k == bad)
                    guarded_new(&g[k], wnd, wrong, od, &bl, NULL);
                else
                    guarded_new(&g[k], (int)ops_tensor_ndim(exp), ops_tensor_sizes(exp), ops_tensor_dtype(exp), &lk,
                                NULL);
                guarded_snapshot(&g[k]);
                gp[k] = &g[k];
                s.v[oi[k]] = ops_ivalue_tensor(g[k].t);
            }
            expect_error_n(c, op, s.v, variant, fragment, &s, gp, nout, NULL, 0);
            for (int k = 0; k < nout; k++)
                guarded_free(&g[k]);
        }
    }
    argset_free(&s);
}

/* The in-place form: same storage, version bumped, strides kept, sentinels intact;
 * a result self cannot hold, a self that would need broadcasting and a self whose
 * elements share memory are errors. */
void
run_inplace(const test_case *c, int case_index)
{
    const ops_op_info *op = c->op->inplace;
    if (c->args[0].tag != OPS_IVALUE_TENSOR || c->nret != 1 || !tensor_returns(c))
        return;
    const ops_tensor *self = c->args[0].v.tensor, *exp = c->expected;
    const ops_dtype sd = ops_tensor_dtype(self), ed = ops_tensor_dtype(exp);
    const int nd = (int)ops_tensor_ndim(self);
    const int64_t *sizes = ops_tensor_sizes(self);
    const bool elementwise = (c->flags & F_ELEMENTWISE) != 0;
    ops_status st;
    argset s;
    ops_ivalue base[MAX_ARGS];
    map_args(c, op, base);
    argset_build(&s, base, op->num_args, LAY_CONTIGUOUS, 0, NULL, false, NULL);
    guarded g;
    layout l;
    if (same_shape(self, exp)) {
        const bool comparable = sd == ed || ed == OPS_BOOL || (ops_dtype_is_floating(sd) && ops_dtype_is_floating(ed));
        if (comparable) {
            enum { IP_CONTIG, IP_STRIDED, IP_TRANSPOSED, IP_RANDOM, IP_KINDS };
            static const char *const names[] = {"in-place", "in-place, strided self", "in-place, transposed self",
                                                "in-place, random layout"};
            const int64_t numel = ops_tensor_numel(self);
            for (int k = 0; k < IP_KINDS; k++) {
                if ((k == IP_STRIDED && (nd < 1 || numel < 2)) || (k == IP_TRANSPOSED && (nd < 2 || numel < 2)) ||
                    (k == IP_RANDOM && (!(c->flags & F_RANDOM) || nd < 1)))
                    continue;
                uint64_t rng = runner_seed * 0xA24BAED4963EE407ull + (uint64_t)case_index;
                l = k == IP_STRIDED ? layout_strided(nd) : k == IP_TRANSPOSED ? layout_transposed(nd)
                    : k == IP_RANDOM ? layout_random(nd, &rng) : layout_contiguous(nd);
                if (k == IP_CONTIG) {
                    l.lead = 3;
                    guarded_new(&g, nd, sizes, sd, &l, self);
                    guarded_snapshot(&g);
                    s.v[0] = ops_ivalue_tensor(g.t);
                    inject_faults(c, op, s.v, "in-place, allocation failures", &s, &g, NULL);
                    guarded_free(&g);
                }
                guarded_new(&g, nd, sizes, sd, &l, self);
                s.v[0] = ops_ivalue_tensor(g.t);
                int64_t strides[OPS_MAX_DIMS];
                memcpy(strides, ops_tensor_strides(g.t), sizeof(int64_t) * (size_t)nd);
                const void *ptr = ops_tensor_data_ptr(g.t);
                const uint64_t version = ops_tensor_version(g.t);
                ops_tensor *r = call(op, s.v, &st);
                if (st != OPS_OK)
                    FAIL(c, op, s.v, names[k], "failed: %s", ops_last_error());
                if (ops_tensor_version(g.t) <= version)
                    FAIL(c, op, s.v, names[k], "the version counter was not bumped");
                check_written(c, op, s.v, names[k], &g, r, ptr, strides, true);
                if (argset_touched_after(&s, op) >= 0)
                    FAIL(c, op, s.v, names[k], "wrote into an input");
                owned_drop(r);
                guarded_free(&g);
                counts.runs++;
                mark(op);
            }
            if (elementwise && numel >= 2) {
                l = layout_expanded(nd);
                guarded_new(&g, nd, sizes, sd, &l, self);
                guarded_snapshot(&g);
                s.v[0] = ops_ivalue_tensor(g.t);
                expect_error(c, op, s.v, "in-place, expanded self", "more than one element of the written-to tensor",
                             &s, &g);
                guarded_free(&g);
            }
        } else if (elementwise && category(ed) > category(sd)) {
            l = layout_contiguous(nd);
            guarded_new(&g, nd, sizes, sd, &l, self);
            guarded_snapshot(&g);
            s.v[0] = ops_ivalue_tensor(g.t);
            expect_error(c, op, s.v, "in-place, unsafe cast", "can't be cast to the desired output type", &s, &g);
            guarded_free(&g);
        }
    } else if (elementwise && category(ed) <= category(sd)) {
        l = layout_contiguous(nd);
        guarded_new(&g, nd, sizes, sd, &l, self);
        guarded_snapshot(&g);
        s.v[0] = ops_ivalue_tensor(g.t);
        expect_error(c, op, s.v, "in-place, self would broadcast", "doesn't match the broadcast shape", &s, &g);
        guarded_free(&g);
    }
    argset_free(&s);
}

/* An expected error, in every form the case names. */
void
run_error(const test_case *c)
{
    const ops_op_info *op = c->op;
    argset s;
    guarded g;
    layout l;
    ops_ivalue base[MAX_ARGS];
    /* an undeclared dtype, or one of the metadata's `errors:` */
    const bool undeclared = (c->flags & F_DTYPE_ERROR) != 0;
    if ((c->forms & FORM_FUNCTIONAL) && op->kind == OPS_KIND_FUNCTIONAL) {
        argset_build(&s, c->args, c->nargs, LAY_CONTIGUOUS, -1, NULL, false, NULL);
        expect_error(c, op, s.v, undeclared ? "undeclared dtype" : "expected error", c->error, &s, NULL);
        argset_free(&s);
    }
    const ops_op_info *o = op->kind == OPS_KIND_OUT ? op : op->out;
    if ((c->forms & FORM_OUT) && o != NULL) {
        /* every out= argument: its template (guarded), then all of them empty */
        map_args(c, o, base);
        int oi[MAX_RETS] = {0};
        const int nout = out_indices(o, oi);
        argset_build(&s, base, o->num_args, LAY_CONTIGUOUS, nout > 0 ? oi[0] : -1, NULL, false, NULL);
        for (int k = 1; k < nout; k++)
            s.v[oi[k]] = ops_ivalue_none();
        guarded gs[MAX_RETS];
        const guarded *gp[MAX_RETS];
        ops_tensor *e[MAX_RETS] = {0}; /* GCC -O2 cannot see the loops fill nout of them */
        ops_dtype od[MAX_RETS];
        const bool templates = c->nouts == nout && nout > 0;
        for (int k = 0; k < nout; k++) {
            const ops_tensor *t = templates ? c->out_templates[k] : NULL;
            od[k] = t ? ops_tensor_dtype(t) : c->dtype != OPS_DTYPE_NONE ? c->dtype : OPS_FLOAT32;
            if (templates) {
                l = layout_contiguous((int)ops_tensor_ndim(t));
                l.lead = 2;
                guarded_new(&gs[k], (int)ops_tensor_ndim(t), ops_tensor_sizes(t), od[k], &l, t);
                guarded_snapshot(&gs[k]);
                gp[k] = &gs[k];
                s.v[oi[k]] = ops_ivalue_tensor(gs[k].t);
            }
        }
        if (templates) {
            expect_error_n(c, o, s.v, undeclared ? "undeclared dtype, out=" : "expected error, out=", c->error, &s,
                           gp, nout, NULL, 0);
            for (int k = 0; k < nout; k++)
                guarded_free(&gs[k]);
        }
        for (int k = 0; k < nout; k++) {
            e[k] = new_tensor(1, (int64_t[]){0}, od[k]);
            s.v[oi[k]] = ops_ivalue_tensor(e[k]);
        }
        const char *variant = undeclared ? "undeclared dtype, empty out=" : "expected error, empty out=";
        expect_error_n(c, o, s.v, variant, c->error, &s, NULL, 0, (const ops_tensor *const *)e, nout);
        for (int k = 0; k < nout; k++)
            owned_drop(e[k]);
        argset_free(&s);
    }
    const ops_op_info *ip = op->kind == OPS_KIND_INPLACE ? op : op->inplace;
    if ((c->forms & FORM_INPLACE) && ip != NULL) {
        map_args(c, ip, base);
        if (base[0].tag == OPS_IVALUE_TENSOR) {
            const ops_tensor *self = base[0].v.tensor;
            argset_build(&s, base, ip->num_args, LAY_CONTIGUOUS, 0, NULL, false, NULL);
            l = layout_contiguous((int)ops_tensor_ndim(self));
            l.lead = 3;
            guarded_new(&g, (int)ops_tensor_ndim(self), ops_tensor_sizes(self), ops_tensor_dtype(self), &l, self);
            guarded_snapshot(&g);
            s.v[0] = ops_ivalue_tensor(g.t);
            expect_error(c, ip, s.v, undeclared ? "undeclared dtype, in-place" : "expected error, in-place", c->error,
                         &s, &g);
            guarded_free(&g);
            argset_free(&s);
        }
    }
}

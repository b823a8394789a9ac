"""ops_autograd_gen.h / ops_autograd_gen.c: the autograd layer (docs/codegen.md "Autograd").

For every entry of ops/derivatives.yaml: a backward-node type saving exactly what its
formulas use (tensors that are read, only the shape or dtype of tensors that are used
through `reduce_to(x, t)` or accessors, non-Tensor arguments, outputs), its apply
function (each formula translated to a sequence of public op calls, so a backward pass
is itself recorded under create_graph), and the recording entry points the glue calls
when an input requires grad: `ops_ag_<name>` for the functional entry and for the
in-place member of its group.

Formulas are Python expressions (parsed in codegen/derivatives.py): calls of ops by
name (the functional overload is chosen from the argument types, as a C++ overload
would be), `grad` / `grads[i]`, argument names, `result` or named returns, numbers,
`True`/`False`/`None`, lists of ints, the accessors `t.sizes()`, `t.dim()`,
`t.numel()`, `t.scalar_type()`, operators and `x if c else y`, and the helpers
`reduce_to(x, t)` (sum a broadcast gradient back to t's shape), `zeros_like(x)`,
`ones_like(x)`, `not_implemented("why")` and the backward helpers of runtime/autograd/backward/
listed in RUNTIME_HELPERS.  Anything else is a generation error with file:line.

Tensor[] arguments and returns (docs/autograd.md "Tensor[] inputs and returns"): a
differentiable Tensor[] input takes one edge per element (edges in schema order; the
node keeps the list's length, n_<arg>) and its formula must give a Tensor[] of that
length; a Tensor[] read as a value is saved element by element (sl_<arg>, each
version-checked), one passed to a "listshape" helper parameter keeps its elements'
shapes (ml_<arg>).  An op returning Tensor[] records a node with one gradient slot per
element, and its formulas see them as `grads` (a Tensor[]); calls of ops returning
Tensor[] inside formulas give Tensor[] values (ops_tensor_vec temporaries _v[]).
"""

from typing import Dict, List, Optional, Tuple

from . import cnames, render, shards
# The translation lives in two modules of its own: autograd_exprs (helpers, limits,
# typed expressions) and autograd_nodes (one backward node per formula entry);
# RUNTIME_HELPERS is read here by codegen/derivatives.py.
from .autograd_exprs import MAX_LIST, MAX_STR, RUNTIME_HELPERS, GenError  # noqa: F401
from .autograd_nodes import NodeGen, NonDiff
from .model import Model, NativeFunction, SchemaError


def _record_values(g: NodeGen) -> List[str]:
    """Lines copying non-Tensor arguments into the node (n is the node)."""
    out = []
    for n in g.saved_values:
        t = g.args[n].type
        if t.is_list:
            ref = f"{n}->" if t.optional else f"{n}."
            guard = f"if ({n} != NULL) {{" if t.optional else "{"
            op = g.nf.func.name
            msg = cnames.c_string(f"{op}: autograd keeps at most {MAX_LIST} elements of '{n}'")
            out += [guard,
                    f"    if ({ref}len > {MAX_LIST}) {{",
                    f"        ops_fail(OPS_ERR_NOT_IMPLEMENTED, {msg});",
                    "        goto fail;",
                    "    }",
                    f"    memcpy(_n->v_{n}, {ref}data, (size_t){ref}len * sizeof(int64_t));",
                    f"    _n->len_{n} = {ref}len;"]
            if t.optional:
                out.append(f"    _n->has_{n} = true;")
            out.append("}")
        elif t.base == "str":
            op = g.nf.func.name
            msg = cnames.c_string(f"{op}: autograd keeps str arguments of at most {MAX_STR - 1} characters ('{n}')")
            out += [f"if ({n} != NULL) {{",
                    f"    if (strlen({n}) >= {MAX_STR}) {{",
                    f"        ops_fail(OPS_ERR_NOT_IMPLEMENTED, {msg});",
                    "        goto fail;",
                    "    }",
                    f"    memcpy(_n->v_{n}, {n}, strlen({n}) + 1);"]
            if t.optional:
                out.append(f"    _n->has_{n} = true;")
            out.append("}")
        elif t.optional and t.base != "ScalarType":
            out += [f"if ({n} != NULL) {{", f"    _n->v_{n} = *{n};", f"    _n->has_{n} = true;", "}"]
        else:
            out.append(f"_n->v_{n} = {n};")
    return out


def _meta_lines(n: str, src: str, optional: bool = False) -> List[str]:
    lines = [f"_n->m_{n}_ndim = (int)ops_tensor_ndim({src});",
             f"_n->m_{n}_dtype = ops_tensor_dtype({src});",
             f"for (int _i = 0; _i < _n->m_{n}_ndim; _i++)",
             f"    _n->m_{n}_sizes[_i] = ops_tensor_size({src}, _i);"]
    if optional:
        # an absent optional (bias=None) has no edge, so its formula never runs
        lines = [f"if ({src} != NULL) {{"] + ["    " + x for x in lines] + ["}"]
    return lines


def _node_text(g: NodeGen) -> Dict:
    s = g.nf.func
    apply = [f"{g.struct} *_s = ({g.struct} *)_n;", "(void)_s, (void)grads, (void)_out;", "ops_status _st = OPS_OK;"]
    if g.ntemps:
        apply.append(f"ops_tensor *_t[{g.ntemps}] = {{0}};")
    if g.nvecs:
        apply.append(f"ops_tensor_vec _v[{g.nvecs}] = {{{{0}}}};")
    unpacked = g.saved_tensors + g.saved_outputs
    for n in g.saved_lists:
        apply.append(f"ops_tensor **al_{n} = NULL;")
    for n in g.saved_tensors:
        apply.append(f"ops_tensor *a_{n} = NULL;")
    for n in g.saved_outputs:
        apply.append(f"ops_tensor *o_{n} = NULL;")
    for n in g.saved_tensors:
        apply += [f"if ((_st = ops_saved_unpack(&_s->s_{n}, _n, &a_{n})) != OPS_OK)", "    goto done;"]
    for n in g.saved_outputs:
        apply += [f"if ((_st = ops_saved_unpack(&_s->s_{n}, _n, &o_{n})) != OPS_OK)", "    goto done;"]
    for n in g.saved_lists:
        apply += [f"if ((_st = ops_ag_saved_list_unpack(_s->sl_{n}, _s->n_{n}, _n, &al_{n})) != OPS_OK)",
                  "    goto done;"]
    done_groups = set()
    for i, n in enumerate(g.diff):
        if n in g.group_of:
            gk = g.group_of[n]
            if gk not in done_groups:
                done_groups.add(gk)
                apply.append(f"if ({g.group_test(gk)}) {{ /* {gk} */")
                apply += ["    " + x for x in g.lines[gk]]
                apply.append("}")
            continue
        if g.args[n].type.is_list:
            apply.append(f"if (ops_ag_any_next(_n, {g.edge(n)}, _s->n_{n})) {{ /* {n} */")
        else:
            apply.append(f"if (_n->next[{g.edge(n)}].node != NULL) {{ /* {n} */")
        apply += ["    " + x for x in g.lines[n]]
        apply.append("}")
    apply.append("goto done;")
    apply.append("fail:")
    apply.append("_st = ops_last_status();")
    apply.append("done:")
    if g.ntemps:
        apply += [f"for (int _i = 0; _i < {g.ntemps}; _i++)", "    ops_tensor_release(_t[_i]);"]
    if g.nvecs:
        apply += [f"for (int _i = 0; _i < {g.nvecs}; _i++)", "    ops_tensor_vec_release(&_v[_i]);"]
    for n in g.saved_lists:
        apply.append(f"ops_ag_tensor_array_release(al_{n}, _s->n_{n});")
    for n in g.saved_tensors:
        apply.append(f"ops_tensor_release(a_{n});")
    for n in g.saved_outputs:
        apply.append(f"ops_tensor_release(o_{n});")
    apply.append("return _st;")
    if not any(x.strip() == "goto fail;" for x in apply):
        apply = [x for x in apply if x not in ("fail:", "_st = ops_last_status();")]
    release = [f"ops_saved_release(&(({g.struct} *)_n)->s_{n});" for n in unpacked]
    release += [f"ops_ag_saved_list_release(&(({g.struct} *)_n)->sl_{n}, (({g.struct} *)_n)->n_{n});"
                for n in g.saved_lists]
    release += [f"ops_ag_list_meta_free(&(({g.struct} *)_n)->ml_{n});" for n in g.saved_list_meta]
    diff_out = g.d.output_differentiability or [True] * len(g.returns)
    return {"struct": g.struct, "name": g.name, "entry": g.nf.name, "inputs": ",".join(g.diff),
            "outputs": "".join("1" if d else "0" for d in diff_out),
            "fields": g.struct_fields(), "apply": apply, "release": release,
            "schema": cnames.c_comment(g.nf.schema_text)}


def _record(g: NodeGen, target: NativeFunction, inplace: bool) -> Dict:
    """ops_ag_<c_name>: run the op below autograd, then record its node."""
    s = target.func
    op = s.name
    params = cnames.param_list(cnames.params(s))
    body = []
    single = cnames.returns_tensor(s)
    saves_self = inplace and "self" in g.saved_tensors
    if inplace:
        body += [f'ops_status _st = ops_autograd_check_inplace("{op}", self);', "if (_st != OPS_OK)",
                 "    return _st;"]
    else:
        body.append("ops_status _st = OPS_OK;")
    body.append(f"{g.struct} *_n = NULL;")
    if saves_self:
        # The formula reads self as it was before the op wrote it.
        body += ["bool _prev0 = ops_set_grad_enabled(false);",
                 "ops_tensor *_orig_self = ops_clone(self, OPS_MEMORY_FORMAT_NONE);",
                 "ops_set_grad_enabled(_prev0);",
                 "if (_orig_self == NULL)",
                 "    return ops_last_status();"]
    call_args = [a.name for a in s.arguments] + [n for _, n, _ in cnames.out_params(s)]
    body.append("bool _prev = ops_set_grad_enabled(false);")
    if single:
        body.append(f"ops_tensor *_r = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_r == NULL)", "    return NULL;"]
        same = [a.name for a in s.arguments if a.type.base == "Tensor" and not a.type.is_list]
        if same:
            # an op that returned its input itself (contiguous of a contiguous tensor,
            # to() of the same dtype) is the identity: the tensor keeps its history
            body += [f"if ({' || '.join(f'_r == {n}' for n in same)})", "    return _r;"]
        # an integer or bool result (to(int64)) carries no gradient
        body += ["if (!ops_dtype_is_floating(ops_tensor_dtype(_r)))", "    return _r;"]
        outs = ["_r"]
    elif g.list_return and not inplace:
        # one gradient slot per returned element
        vec = cnames.out_params(s)[0][1]
        body.append(f"_st = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_st != OPS_OK)", "    return _st;"]
        outs = []
    elif inplace:
        body.append(f"_st = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_st != OPS_OK)", "    goto fail;"]
        outs = ["self"]
    else:
        body.append(f"_st = ops_base_{s.c_name[4:]}({', '.join(call_args)});")
        body.append("ops_set_grad_enabled(_prev);")
        body += ["if (_st != OPS_OK)", "    return _st;"]
        outs = [f"*{n}" for _, n, _ in cnames.out_params(s)]
    n_in = f"(int){vec}->len" if (g.list_return and not inplace) else str(len(g.tensor_returns))
    n_next = str(len(g.diff))
    if any(g.args[n].type.is_list for n in g.diff):  # one edge per element of a Tensor[]
        n_next = "(int)(" + " + ".join([str(sum(1 for n in g.diff if not g.args[n].type.is_list))]
                                       + [f"{n}.len" for n in g.diff if g.args[n].type.is_list]) + ")"
    body += [f"_n = ({g.struct} *)ops_node_new(&{g.struct}_vt, sizeof *_n, {n_in}, {n_next});",
             "if (_n == NULL)", "    goto fail;"]
    for n in g.list_args():
        body.append(f"_n->n_{n} = {n}.len;")
    for i, n in enumerate(g.diff):
        if g.args[n].type.is_list:
            off = g.edge(n, record=True)
            body += [f"for (int64_t _i = 0; _i < {n}.len; _i++)",
                     f"    if ((_st = ops_node_set_next(&_n->base, (int)({off} + _i), {n}.data[_i])) != OPS_OK)",
                     "        goto fail;"]
            continue
        i = g.edge(n, record=True)
        src = "_orig_self" if (inplace and n == "self" and saves_self) else n
        if inplace and n == "self" and not saves_self:
            # self's history before the op (its grad_fn is replaced below)
            src = "self"
        body += [f"if ((_st = ops_node_set_next(&_n->base, {i}, {src})) != OPS_OK)", "    goto fail;"]
    for n in g.saved_tensors:
        src = "_orig_self" if (inplace and n == "self") else n
        body += [f"if ((_st = ops_saved_save(&_n->s_{n}, {src}, false)) != OPS_OK)", "    goto fail;"]
    for n in g.saved_lists:
        body += [f'if ((_st = ops_ag_saved_list_save(&_n->sl_{n}, {n}, "{op}")) != OPS_OK)', "    goto fail;"]
    for n in g.saved_list_meta:
        body += [f'if ((_st = ops_ag_list_meta_save(&_n->ml_{n}, {n}, "{op}")) != OPS_OK)', "    goto fail;"]
    for n in g.saved_meta:
        if n in g.tensor_returns:
            continue
        src = "_orig_self" if (inplace and n == "self" and saves_self) else n
        opt = any(a.name == n and a.type.optional for a in s.arguments)
        body += _meta_lines(n, src, opt)
    body += _record_values(g)
    body += [f"_n->has_{n} = {n} != NULL;" for n in sorted(g.presence)]
    diff_out = g.d.output_differentiability or [True] * len(outs)
    for i, o in enumerate(outs):
        if not diff_out[i]:
            # no history, but the shape of the zeros its gradient slot gets in backward
            body.append(f"ops_node_set_input_meta(&_n->base, {i}, {o});")
            continue
        if inplace:
            # self's new history: the node, or for a view the rebase of its base
            # (runtime/autograd/view_history.c); the node's edge for self reads self before the write
            edge = g.diff.index("self") if "self" in g.diff else -1
            body += [f"if ((_st = ops_autograd_rebase_history(self, &_n->base, {edge})) != OPS_OK)", "    goto fail;"]
            continue
        body += [f"if ((_st = ops_autograd_set_history({o}, &_n->base, {i})) != OPS_OK)", "    goto fail;"]
    if g.list_return and not inplace:
        body += [f"for (int64_t _i = 0; _i < {vec}->len; _i++)",
                 f"    if ((_st = ops_autograd_set_history({vec}->data[_i], &_n->base, (int)_i)) != OPS_OK)",
                 "        goto fail;"]
    for i, n in enumerate(g.tensor_returns):
        o = outs[i]
        if n in g.saved_outputs:
            body += [f"if ((_st = ops_saved_save(&_n->s_{n}, {o}, true)) != OPS_OK)", "    goto fail;"]
        if n in g.saved_meta:
            body += [x.replace(f"({n})", f"({o})") for x in _meta_lines(n, o)]
    body.append("ops_node_release(&_n->base);")
    if saves_self:
        body.append("ops_tensor_release(_orig_self);")
    body.append("return _r;" if single else "return OPS_OK;")
    body.append("fail:")
    body.append("_st = ops_last_status();")
    body.append("ops_node_release(_n == NULL ? NULL : &_n->base);")
    if saves_self:
        body.append("ops_tensor_release(_orig_self);")
    if single:
        body += ["ops_tensor_release(_r);", "return NULL;"]
    elif g.list_return and not inplace:
        body += [f"ops_tensor_vec_release({vec});", "return _st;"]
    elif not inplace:
        for o in outs:
            body += [f"ops_tensor_release({o});", f"{o} = NULL;"]
        body.append("return _st;")
    else:
        body.append("return _st;")
    return {"ret": cnames.return_type(s), "name": "ops_ag_" + s.c_name[4:], "params": params, "body": body,
            "schema": cnames.c_comment(target.schema_text)}


def plan(model: Model):
    """(derivative by functional entry name, NodeGen list); raises SchemaError."""
    functional_by_name: Dict[str, List[NativeFunction]] = {}
    for nf in model.functions:
        if nf.kind == "functional":
            functional_by_name.setdefault(nf.func.name, []).append(nf)
    counts: Dict[str, int] = {}
    gens, errors = [], []
    for d in model.derivatives:
        # an in-place entry with no functional form (normal_, uniform_, random_, ...) takes
        # its own entry, as in PyTorch's derivatives.yaml
        own_inplace = (d.func.kind == "inplace"
                       and (d.func.group is None or d.func.group.functional is None))
        if d.func.kind != "functional" and not own_inplace:
            errors.append(f"{d.loc}: {d.func.name}: derivatives are given for functional entries (the in-place "
                          "form reuses them, unless it has no functional form; out= forms are not "
                          "differentiable)")
            continue
        if d.output_differentiability is not None and not any(d.output_differentiability):
            if d.formulas:
                errors.append(f"{d.loc}: {d.func.name}: no output is differentiable, so it takes no formulas")
            gens.append(NonDiff(d))
            continue
        base = d.func.func.base_name
        idx = counts.get(base, 0)
        counts[base] = idx + 1
        try:
            g = NodeGen(d, model, functional_by_name, idx)
            g.translate()
            gens.append(g)
        except GenError as e:
            errors.append(str(e))
    if errors:
        raise SchemaError(errors)
    return gens


def wrapped_entries(model: Model, gens) -> Dict[int, Tuple[str, Optional[NodeGen]]]:
    """For each entry the glue wraps: (kind of wrapper, the node generator or None)."""
    by_func = {id(g.nf): g for g in gens}
    out = {}
    for nf in model.functions:
        s = nf.func
        if not any(a.type.base == "Tensor" and not a.is_write for a in s.arguments) and s.kind != "inplace":
            continue
        if not any(r.type.base == "Tensor" for r in s.returns):
            continue
        if s.kind == "out":
            out[id(nf)] = ("out", None)
        elif s.kind == "inplace":
            fn = nf.group.functional if nf.group is not None else None
            out[id(nf)] = ("inplace", by_func.get(id(fn)) if fn is not None else by_func.get(id(nf)))
        else:
            out[id(nf)] = ("functional", by_func.get(id(nf)))
    return out


def entry_point_families(model: Model) -> Dict[str, str]:
    """ops_base_<op> and ops_ag_<op> of every entry that has them -> the entry's family
    (codegen/shards.py): the generated C includes the shards it names."""
    plan = shards.plan(model)
    gens = [g for g in model.autograd if isinstance(g, NodeGen)]
    out = {}
    wraps = wrapped_entries(model, gens)
    for nf in model.functions:
        w = wraps.get(id(nf))
        if w is None:
            continue
        fam = plan.of(nf)
        out["ops_base_" + nf.func.c_name[4:]] = fam
        if isinstance(w[1], NodeGen):
            out["ops_ag_" + nf.func.c_name[4:]] = fam
    return out


def generate(model: Model, inputs) -> dict:
    """ops_autograd_gen.c (every node), ops_autograd_gen_<family>.h (the entry points of
    a family's entries: the glue of that family includes it) and ops_autograd_gen.h
    (every shard, and the formula tables)."""
    plan = shards.plan(model)
    gens = [g for g in model.autograd if isinstance(g, NodeGen)]
    nodes = [_node_text(g) for g in gens]
    records = []
    wraps = wrapped_entries(model, gens)
    by_shard = {n: {"bases": [], "records": []} for n in plan.names}
    for nf in model.functions:
        w = wraps.get(id(nf))
        if w is None or not isinstance(w[1], NodeGen):
            continue
        r = _record(w[1], nf, w[0] == "inplace")
        records.append(r)
        by_shard[plan.of(nf)]["records"].append(r)
    for nf in model.functions:
        if id(nf) in wraps:
            s = nf.func
            by_shard[plan.of(nf)]["bases"].append({"ret": cnames.return_type(s), "name": "ops_base_" + s.c_name[4:],
                                                   "params": cnames.param_list(cnames.params(s))})
    banner = render.banner("gen_autograd.py", inputs)
    body = render.render("ops_autograd_gen.c.j2", banner="", includes=[], nodes=nodes, records=records)
    includes = ([f"ops_functions_{f}.h" for f in shards.scan_names(body, shards.public_names(model))]
                + [f"ops_autograd_gen_{f}.h" for f in shards.scan_names(body, entry_point_families(model))])
    out = {
        "ops_autograd_gen.h": render.render("ops_autograd_gen.h.j2", banner=banner, shards=plan.names),
        "ops_autograd_gen.c": render.render("ops_autograd_gen.c.j2", banner=banner, includes=includes,
                                            nodes=nodes, records=records),
    }
    for name, d in by_shard.items():
        out[f"ops_autograd_gen_{name}.h"] = render.render(
            "ops_autograd_gen_shard.h.j2", banner=banner, shard=name,
            guard=f"OPS_GENERATED_AUTOGRAD_{name.upper()}_H", **d)
    return out

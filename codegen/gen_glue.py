"""ops_glue_N.c: the public functions (docs/codegen.md "What the generated glue does").

Argument checks, the same-device check, the device choice, then either the
structured path (meta family -> kernel from the table -> finish) or a plain call
of the entry's kernel.  One file per op family (ops_glue_<family>.c, codegen/shards.py)
holds that family's entries and dispatch table, and includes only the header shards
its code names, so adding an op recompiles its own family's glue and nothing else of
the glue.
"""

from typing import List

from . import checks, cnames, gen_autograd, gen_dispatch, reduction, render, shards
from . import dtypes as dtypes_mod
from .model import Model, NativeFunction

_MODES = {"functional": "OPS_ITER_FUNCTIONAL", "inplace": "OPS_ITER_INPLACE", "out": "OPS_ITER_OUT"}


def shard_of(model: Model, nf: NativeFunction) -> str:
    """The glue file of an entry: ops_glue_<its family>.c."""
    return shards.plan(model).of(nf)


class _Body:
    def __init__(self) -> None:
        self.lines: List[str] = []
        self.depth = 1

    def __call__(self, s: str = "") -> None:
        self.lines.append(("    " * self.depth + s) if s else "")

    def block(self, head: str, body: List[str], tail: str = "}") -> None:
        self(head)
        self.depth += 1
        for s in body:
            self(s)
        self.depth -= 1
        self(tail)


def _device_fallback(nf: NativeFunction) -> str:
    """The device of an entry without tensors: its `Device` argument, else cpu."""
    for a in nf.func.arguments:
        if a.type.base == "Device":
            return f"({a.name}.type != OPS_DEVICE_TYPE_NONE ? {a.name} : OPS_DEVICE_CPU)"
    return "OPS_DEVICE_CPU"


def _function(nf: NativeFunction) -> dict:
    s = nf.func
    op = s.name  # messages name the op by its schema name: "add", "add_"
    ptr = cnames.returns_tensor(s)
    fail = "ops_fail_null" if ptr else "ops_fail"
    err_ret = "NULL" if ptr else "_st"
    # (a reduction's forms take the plain path's device steps, then their own step 3)
    structured = nf.is_structured_path and nf.reduce_target is None
    b = _Body()

    # 1. Arguments the schema does not allow to be None, and malformed lists.
    def check(cond: str, msg: str, args: str = "") -> None:
        b(f"if (OPS_UNLIKELY({cond}))")
        b(f"    return {fail}(OPS_ERR_VALUE, {cnames.c_string(op + ': ' + msg)}{args});")

    for a in s.arguments:
        t, n = a.type, a.name
        if t.is_tensor and not t.optional:
            check(f"{n} == NULL", f"argument '{n}' must be a Tensor, got NULL")
        elif t.base == "str" and not t.optional:
            check(f"{n} == NULL", f"argument '{n}' must be a str, got NULL")
        elif t.is_int and t.is_list:
            e = f"{n}->" if t.optional else f"{n}."
            guard = f"{n} != NULL && " if t.optional else ""
            paren = ("(", ")") if t.optional else ("", "")
            check(f"{guard}{paren[0]}{e}len < 0 || ({e}len > 0 && {e}data == NULL){paren[1]}",
                  f"argument '{n}' is not a valid int list (negative length or NULL data)")
            if t.size is not None:
                check(f"{guard}{e}len != {t.size}",
                      f"argument '{n}' must have {t.size} elements, got %lld", f", (long long){e}len")
        elif t.is_bool_list:
            check(f"{n}.len < 0 || ({n}.len > 0 && {n}.data == NULL)",
                  f"argument '{n}' is not a valid bool list (negative length or NULL data)")
            if t.size is not None:
                check(f"{n}.len != {t.size}",
                      f"argument '{n}' must have {t.size} elements, got %lld", f", (long long){n}.len")
    for _, n, _ in cnames.out_params(s):
        check(f"{n} == NULL", f"output pointer '{n}' must not be NULL")

    # 2. One device for every tensor; the device a plain entry dispatches on.
    fixed = [a for a in s.arguments if a.type.is_tensor]
    lists = [a for a in s.arguments if a.type.is_tensor_list]
    required = [a for a in fixed if not a.type.optional]
    fallback = _device_fallback(nf)
    need_dev = not structured
    st_declared = False

    def chain() -> str:
        e = fallback
        for a in reversed(fixed):
            e = f"{a.name} != NULL ? ops_tensor_device({a.name}) : {e}"
        return e

    if lists:
        b("ops_glue_device _gd = {0};")
        b("ops_status _st;")
        st_declared = True
        chk = "true" if nf.device_check else "false"
        for a in s.arguments:
            if a.type.is_tensor:
                b(f'_st = ops_glue_device_tensor("{op}", &_gd, "{a.name}", {a.name}, {chk});')
            elif a.type.is_tensor_list:
                none = "true" if a.type.elem_optional else "false"
                b(f'_st = ops_glue_device_list("{op}", &_gd, "{a.name}", {a.name}, {chk}, {none});')
            else:
                continue
            b("if (OPS_UNLIKELY(_st != OPS_OK))")
            b(f"    return {err_ret};")
        if need_dev:
            b(f"const ops_device _dev = _gd.have ? _gd.device : {fallback};")
    elif nf.device_check and len(fixed) >= 2 and not structured:
        # (structured entries: ops_iter_build checks devices as TensorIterator does,
        # letting CPU 0-dim inputs join an op on another device; runtime/dispatch/iter.c)
        n = len(fixed)
        b(f"const ops_tensor *const _ts[{n}] = {{{', '.join(a.name for a in fixed)}}};")
        b(f"static const char *const _names[{n}] = {{{', '.join(chr(34) + a.name + chr(34) for a in fixed)}}};")
        b(f"ops_device _dev = {fallback};")
        b(f'ops_status _st = ops_check_same_device("{op}", {n}, _ts, _names, &_dev);')
        st_declared = True
        b("if (OPS_UNLIKELY(_st != OPS_OK))")
        b(f"    return {err_ret};")
        if need_dev and not required:
            b(f"_dev = {chain()};")
    elif need_dev:
        if required:
            b(f"const ops_device _dev = ops_tensor_device({required[0].name});")
        else:
            b(f"const ops_device _dev = {chain() if fixed else fallback};")

    if _out_rules(nf) is not None:
        _out_checks(nf, b, op, err_ret, st_declared)
        st_declared = True
    if structured:
        _structured(nf, b, op, ptr, st_declared)
    elif nf.reduce_target is not None:
        reduction.glue(nf, b, op, ptr, st_declared)
    else:
        for line in checks.plain_glue_call(nf, err_ret):
            b(line)
        _plain_dtype_check(nf, b, op, err_ret)
        k = nf
        ftype = cnames.kernel_fn_type(k)
        b(f"{ftype} _fn = ({ftype})ops_dispatch_lookup({cnames.op_id(k)}, _dev);")
        if ptr:
            b.block("if (OPS_UNLIKELY(_fn == NULL)) {",
                    [f'ops_dispatch_no_kernel("{op}", _dev);', "return NULL;"])
        else:
            b("if (OPS_UNLIKELY(_fn == NULL))")
            b(f'    return ops_dispatch_no_kernel("{op}", _dev);')
        call_args = [a.name for a in s.arguments] + [n for _, n, _ in cnames.out_params(s)]
        if _shared_kernel(nf):
            # one driver for several devices: the op's device is the current one while
            # it runs (a CUDA-only kernel makes it so itself)
            rtype = cnames.kernel_return_type(nf)
            b("const int _guard = _dev.type == OPS_CPU ? -1 : ops_device_guard_enter(_dev);")
            b(f"{rtype} _r = _fn({', '.join(call_args)});")
            b("if (_guard >= 0)")
            b("    ops_device_guard_exit(_dev, _guard);")
            b("return _r;")
        else:
            b(f"return _fn({', '.join(call_args)});")

    return {
        "schema": cnames.c_comment(nf.schema_text),
        "ret": cnames.return_type(s),
        "c_name": s.c_name,
        "params": cnames.param_list(cnames.params(s)),
        "body": b.lines,
    }


def _out_rules(nf: NativeFunction):
    """(written tensor, no_overlap, no_partial_overlap, dtype argument) of an entry with
    `out_checks:`; an in-place entry without its own takes its group's out= entry's, self
    being the written tensor (PyTorch's in-place forms are its out= forms with out=self),
    less the rules about self and the dtype.  None when there are none."""
    s = nf.func
    own = nf.out_no_overlap or nf.out_no_partial_overlap or nf.out_dtype_of
    if s.kind == "out" and own:
        return s.out_arguments[0].name, nf.out_no_overlap, nf.out_no_partial_overlap, nf.out_dtype_of
    if s.kind != "inplace":
        return None
    src = nf if own else (nf.group.out if nf.group is not None else None)
    if src is None:
        return None
    names = {a.name for a in s.arguments}
    no = tuple(n for n in src.out_no_overlap if n != "self" and n in names)
    part = tuple(n for n in src.out_no_partial_overlap if n != "self" and n in names)
    return ("self", no, part, None) if (no or part) else None


def _out_checks(nf: NativeFunction, b: _Body, op: str, err_ret: str, st_declared: bool) -> None:
    """The entry's `out_checks:` (ops_check_out_args, runtime/dispatch/iter.c), before dispatch."""
    s = nf.func
    out, no_overlap, no_partial, dt = _out_rules(nf)
    args = {a.name: a for a in s.arguments}
    single = [(n, False) for n in no_overlap if args[n].type.is_tensor]
    single += [(n, True) for n in no_partial if args[n].type.is_tensor]
    lists = [(n, False) for n in no_overlap if args[n].type.is_tensor_list]
    lists += [(n, True) for n in no_partial if args[n].type.is_tensor_list]
    decl = "" if st_declared else "ops_status "
    mask = sum(1 << i for i, (_, ok) in enumerate(single) if ok)
    if single:
        b(f"const ops_tensor *const _oa[{len(single)}] = {{{', '.join(n for n, _ in single)}}};")
        b(f"static const char *const _on[{len(single)}] = {{{', '.join(chr(34) + n + chr(34) for n, _ in single)}}};")
    dt_args = f"{dt}, \"{dt}\"" if dt else "NULL, NULL"
    arr = ("_oa", "_on") if single else ("NULL", "NULL")
    written = "out=" if s.kind == "out" else "self"
    b(f'{decl}_st = ops_check_out_args("{op}", "{written}", {out}, {len(single)}, {arr[0]}, {arr[1]}, {mask}u, '
      f'{dt_args});')
    b("if (OPS_UNLIKELY(_st != OPS_OK))")
    b(f"    return {err_ret};")
    for n, ok in lists:
        b(f'_st = ops_check_out_list("{op}", "{written}", {out}, {n}, "{n}", {"true" if ok else "false"});')
        b("if (OPS_UNLIKELY(_st != OPS_OK))")
        b(f"    return {err_ret};")


def _plain_dtype_check(nf: NativeFunction, b: _Body, op: str, err_ret: str) -> bool:
    """A plain entry's `dtypes:` with `of:` (codegen/dtypes.py): the promoted dtype of the
    named Tensor arguments (ops_promote_types, as the kernels promote; a None skipped),
    or a named `ScalarType?` argument when given, must be declared, checked after the
    argument, device and out= checks and the entry's `check:`, and before the kernel,
    with the generic message or the declared one.  True when it emitted one."""
    d = nf.dtypes
    if d is None or d.of is None or not dtypes_mod.glue_checked(nf):
        return False
    args = {a.name: a for a in nf.func.arguments}
    b("{")
    b.depth += 1
    b("ops_dtype _dt = OPS_DTYPE_NONE;")
    for n in d.of:
        if args[n].type.base == "ScalarType":
            continue
        promote = f"_dt = _dt == OPS_DTYPE_NONE ? ops_tensor_dtype({n}) : ops_promote_types(_dt, ops_tensor_dtype({n}));"
        if args[n].type.optional:
            b(f"if ({n} != NULL)")
            b(f"    {promote}")
        else:
            b(promote)
    for n in d.of:
        # a factory's dtype argument: the result's dtype when given (else the Tensors', a
        # _like's self, or None: the op's default, which its declaration holds)
        if args[n].type.base == "ScalarType":
            b(f"if ({n} != OPS_DTYPE_NONE)")
            b(f"    _dt = {n};")
    msg = cnames.c_string(d.message) if d.message else "NULL"
    b(f'const ops_status _dst = ops_check_dtype_declared("{op}", _dt, '
      f"{dtypes_mod.mask_expr(d.accept, named_masks=False)}, {msg});")
    b("if (OPS_UNLIKELY(_dst != OPS_OK))")
    b(f"    return {'_dst' if err_ret == '_st' else err_ret};")
    b.depth -= 1
    b("}")
    return True


def _shared_kernel(nf: NativeFunction) -> bool:
    """One kernel named for the CPU and CUDA (`CPU, CUDA: kernel`): a device-neutral driver."""
    cpu = nf.dispatch.get("CPU")
    return cpu is not None and nf.dispatch.get("CUDA") == cpu


def _structured(nf: NativeFunction, b: _Body, op: str, ptr: bool, st_declared: bool) -> None:
    s = nf.func
    target = nf.kernel_entry
    tensors, names, scalars, strs, kargs, wraps = [], [], [], [], [], []
    for d, t in zip(s.non_out_arguments, target.func.non_out_arguments):
        if t.type.is_tensor:
            if d.type.is_scalar:  # a Scalar where the kernel entry has a Tensor: wrapped number
                var = f"_w_{d.name}"
                wraps.append((var, d))
                tensors.append(var)
                kargs.append(var)
            else:
                tensors.append(d.name)
                kargs.append(d.name)
            names.append(d.name)
        else:
            if t.type.is_scalar:
                scalars.append(d.name if d.type.optional else f"&{d.name}")
            elif t.type.base == "str":
                strs.append(d.name)
            kargs.append(d.name)
    if s.kind == "inplace":
        out = "self"
    elif s.kind == "out":
        out = s.out_arguments[0].name
    else:
        out = "NULL"

    fields = [f'.op = "{op}",', f".mode = {_MODES[s.kind]},", f".out = {out},",
              f".ntensors = {len(tensors)},"]
    if tensors:
        fields.append(f".tensors = {{{', '.join(tensors)}}},")
        fields.append(f".names = {{{', '.join(chr(34) + n + chr(34) for n in names)}}},")
    fields.append(f".nscalars = {len(scalars)},")
    if scalars:
        fields.append(f".scalars = {{{', '.join(scalars)}}},")
    if strs:
        fields.append(f".nstrs = {len(strs)},")
        fields.append(f".strs = {{{', '.join(strs)}}},")
    ftype = cnames.kernel_fn_type(target)
    core = [
        "ops_iter _it;",
        f"_st = ops_meta_{target.meta}(&_it, &_args);",
    ]
    if target.dtypes is not None and not target.dtypes.everything:
        # the declared input dtypes (`dtypes:`), after the meta's own checks (shapes, a
        # where condition) as the kernel's dispatch did, before anything is written
        first = 1 if target.meta == "where" else 0
        scalars = "true" if target.meta == "clamp" else "false"
        msg = cnames.c_string(target.dtypes.message) if target.dtypes.message else "NULL"
        core += [
            "if (OPS_LIKELY(_st == OPS_OK))",
            f'    _st = ops_check_dtype_declared("{op}", ops_meta_input_dtype(&_args, {first}, {scalars}), '
            f"{dtypes_mod.mask_expr(target.dtypes.accept, named_masks=False)}, {msg});",
        ]
    # the lookup, the entry's `check:` if any (codegen/checks.py), the kernel
    core_tail = checks.glue_call(target, op, ftype, kargs) + [
        "}",
        "if (OPS_LIKELY(_st == OPS_OK))",
        "    _st = ops_iter_finish(&_it);",
    ]
    if ptr:
        core_tail += ["if (OPS_LIKELY(_st == OPS_OK))", "    _result = ops_iter_take_result(&_it);"]
    core_tail.append("ops_iter_release(&_it);")

    if ptr:
        b("ops_tensor *_result = NULL;")
    if not st_declared:
        b("ops_status _st;")
    if wraps:
        for var, d in wraps:
            if d.type.optional:
                b(f"ops_tensor *{var} = {d.name} != NULL ? ops_wrap_scalar(*{d.name}) : NULL;")
            else:
                b(f"ops_tensor *{var} = ops_wrap_scalar({d.name});")
        conds = [f"({d.name} != NULL && {v} == NULL)" if d.type.optional else f"{v} == NULL"
                 for v, d in wraps]
        b(f"if (OPS_UNLIKELY({' || '.join(conds)})) {{")
        b(f"    _st = ops_fail(OPS_ERR_OOM, {cnames.c_string(op + ': out of memory wrapping a Scalar argument')});")
        b("    goto done;")
        b("}")
        b("{")
        b.depth += 1
    b.block("const ops_meta_args _args = {", fields, "};")
    for line in core:
        b(line)
    b("if (OPS_LIKELY(_st == OPS_OK)) {")
    for line in core_tail:
        b(line)
    if wraps:
        b.depth -= 1
        b("}")
        b.lines.append("done:")
        for var, _ in wraps:
            b(f"ops_tensor_release({var});")
    b("return _result;" if ptr else "return _st;")


# In-place entries without a functional form whose autograd is hand-written in
# runtime/autograd/view_history.c (called with the entry's arguments).
HAND_WRITTEN_INPLACE = {"copy_": "ops_autograd_copy_"}


def _view_source(nf: NativeFunction):
    """The argument a view op's results alias (`Tensor(a) self` -> `Tensor(a)`), or None."""
    s = nf.func
    if s.kind != "functional":
        return None
    letters = {r.annotation.alias for r in s.returns
               if r.type.base == "Tensor" and r.annotation is not None and not r.annotation.is_write}
    for a in s.arguments:
        if (a.type.base == "Tensor" and not a.type.is_list and a.annotation is not None
                and not a.annotation.is_write and a.annotation.alias in letters):
            return a.name
    return None


def _wrapper(nf: NativeFunction, kind: str, g) -> List[str]:
    """The public function of an entry with an autograd layer (codegen/gen_autograd.py):
    the plain call unless an input requires grad under grad mode.  A view op's results
    are marked as views of their base (runtime/autograd/view_history.c) for in-place autograd."""
    lines = _wrapper_body(nf, kind, g)
    src = _view_source(nf)
    s = nf.func
    if src is None:
        return lines
    single = cnames.returns_tensor(s)
    outs = cnames.out_params(s)
    if not single and not (len(outs) == 1 and outs[0][2].type.is_list):
        return lines
    # The body is "if (...) { ... return X; }" then "return Y;": every `return E;` at
    # the function's level becomes a return of E marked as a view.
    res = []
    for x in lines:
        st = x.strip()
        if not st.startswith("return ") or not x.startswith("    "):
            res.append(x)
            continue
        ind = x[:len(x) - len(x.lstrip())]
        e = st[len("return "):-1]
        if e.startswith("_st"):  # a failed call's status: nothing to mark
            res.append(x)
            continue
        if single:
            res.append(f"{ind}return ops_autograd_view_result({e}, {src});")
        else:
            res += [f"{ind}{{", f"{ind}    ops_status _vs = {e};",
                    f"{ind}    return _vs == OPS_OK ? ops_autograd_make_views({outs[0][1]}, {src}) : _vs;",
                    f"{ind}}}"]
    return res


def _wrapper_body(nf: NativeFunction, kind: str, g) -> List[str]:
    s = nf.func
    op = s.name
    base = "ops_base_" + s.c_name[4:]
    call = ", ".join([a.name for a in s.arguments] + [n for _, n, _ in cnames.out_params(s)])
    fixed = [a.name for a in s.arguments if a.type.base == "Tensor" and not a.type.is_list]
    lists = [a.name for a in s.arguments if a.type.base == "Tensor" and a.type.is_list]
    conds = []
    lines = []
    if fixed:
        lines.append(f"const ops_tensor *const _ag[{len(fixed)}] = {{{', '.join(fixed)}}};")
        conds.append(f"ops_ag_needed({len(fixed)}, _ag)")
    conds += [f"ops_ag_needed_list({n})" for n in lists]
    single = cnames.returns_tensor(s)
    lines.append(f"if (OPS_UNLIKELY({' || '.join(conds)})) {{")
    if kind == "out":
        lines.append(f'    return ops_autograd_out_error("{op}");')
    elif isinstance(g, gen_autograd.NonDiff):
        # no output carries a gradient: run below autograd, record nothing
        if kind == "inplace":
            lines += [f'    ops_status _st = ops_autograd_check_inplace("{op}", self);',
                      "    if (_st != OPS_OK)", "        return _st;"]
        lines.append("    bool _prev = ops_set_grad_enabled(false);")
        ret = cnames.return_type(s)
        lines += [f"    {cnames.decl(ret, '_r')} = {base}({call});", "    ops_set_grad_enabled(_prev);",
                  "    return _r;"]
    elif g is not None:
        lines.append(f"    return ops_ag_{s.c_name[4:]}({call});")
    elif kind == "inplace" and op in HAND_WRITTEN_INPLACE:
        lines.append(f"    return {HAND_WRITTEN_INPLACE[op]}({call});")
    else:
        if kind == "inplace":
            lines += [f'    ops_status _st = ops_autograd_inplace_no_formula("{op}", self);',
                      "    if (_st != OPS_OK)", "        return _st;"]
        lines.append("    bool _prev = ops_set_grad_enabled(false);")
        if single:
            lines += [f"    ops_tensor *_r = {base}({call});", "    ops_set_grad_enabled(_prev);",
                      f'    return ops_autograd_no_formula("{op}", _r);']
        else:
            lines += [f"    ops_status _st2 = {base}({call});", "    ops_set_grad_enabled(_prev);"]
            outs = cnames.out_params(s)
            if kind == "functional" and outs:
                lines += ["    if (_st2 != OPS_OK)", "        return _st2;"]
                if outs[0][2].type.is_list:
                    lines.append(f'    return ops_autograd_no_formula_vec("{op}", {outs[0][1]});')
                else:
                    tens = [n for _, n, r in outs if r.type.base == "Tensor"]
                    lines.append(f"    ops_tensor **const _o[{len(tens)}] = {{{', '.join(tens)}}};")
                    lines.append(f'    return ops_autograd_no_formula_outs("{op}", {len(tens)}, _o);')
            else:
                lines.append("    return _st2;")
    lines.append("}")
    lines.append(f"return {base}({call});")
    return ["    " + x for x in lines]


def _kernel_headers(plan: "shards.Plan", tab: dict) -> List[str]:
    """The kernel header shards that declare the kernels of a table (the umbrella for
    a kernel no scanned source defines, unless it is a CUDA cell of a CPU-only build)."""
    hs = set()
    for r in tab["rows"]:
        for c in r["cells"]:
            where = plan.kernel_shards.get(c["kernel"])
            if where:
                hs.update(f"ops_kernels_{s}.h" for s in where)
            elif c["guard"] is None:
                hs.add("ops_kernels.h")
    return sorted(hs)


def generate(model: Model, inputs) -> dict:
    plan = shards.plan(model)
    groups = {n: [] for n in plan.names}
    entries = {n: [] for n in plan.names}
    wraps = gen_autograd.wrapped_entries(model, model.autograd)
    for nf in model.functions:
        fam = plan.of(nf)
        entries[fam].append(nf)
        f = _function(nf)
        w = wraps.get(id(nf))
        if w is not None:
            pub = dict(f)
            f = dict(f, c_name="ops_base_" + nf.func.c_name[4:], internal=True)
            pub["body"] = _wrapper(nf, w[0], w[1])
            groups[fam].append(f)
            f = pub
        groups[fam].append(f)
    public = shards.public_names(model)
    autograd = gen_autograd.entry_point_families(model)
    banner = render.banner("gen_glue.py", inputs)
    out = {}
    for name, fns in groups.items():
        tab = gen_dispatch.table(entries[name])
        body = render.render("ops_glue.c.j2", banner="", shard=name, includes=[], functions=fns, **tab)
        includes = (sorted(set(_kernel_headers(plan, tab)) | set(checks.glue_headers(plan, entries[name])))
                    + [f"ops_functions_{s}.h" for s in shards.scan_names(body, public)]
                    + [f"ops_autograd_gen_{s}.h" for s in shards.scan_names(body, autograd)])
        out[f"ops_glue_{name}.c"] = render.render("ops_glue.c.j2", banner=banner, shard=name,
                                                  includes=includes, functions=fns, **tab)
    return out

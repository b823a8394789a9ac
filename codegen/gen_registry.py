"""ops_registry.c: one ops_op_info per entry and its boxed call (include/libops/ops_registry.h)."""

import json
import os
import re

from . import cnames, render
from .model import Argument, Model, NativeFunction

OUTPUTS = ("ops_registry.c",)

_KINDS = {"functional": "OPS_KIND_FUNCTIONAL", "inplace": "OPS_KIND_INPLACE", "out": "OPS_KIND_OUT"}


def _unbox(a: Argument, i: int, op: str):
    """(local declarations, unbox call) of one argument."""
    t, n = a.type, a.name
    ref = f'{cnames.c_string(op)}, "{n}", {cnames.c_string(a.type_str)}, &_a[{i}]'
    if t.is_tensor:
        if a.is_write:
            helper = "unbox_opt_tensor_mut" if t.optional else "unbox_tensor_mut"
            return [f"ops_tensor *{n} = NULL;"], f"{helper}({ref}, &{n})"
        if t.optional:
            return [f"const ops_tensor *{n} = NULL;"], f"unbox_opt_tensor({ref}, &{n})"
        return [f"const ops_tensor *{n} = NULL;"], f"unbox_tensor({ref}, &{n})"
    if t.is_tensor_list:
        return [f"ops_tensor_list {n} = {{0}};"], f"unbox_tensor_list({ref}, &{n})"
    if t.base == "Generator":
        return [f"ops_generator *{n} = NULL;"], f"unbox_opt_generator({ref}, &{n})"
    simple = {"Scalar": ("ops_scalar", "scalar", "{0}"), "float": ("double", "double", "0.0"),
              "bool": ("bool", "bool", "false"), "int": ("int64_t", "int", "0"),
              "SymInt": ("int64_t", "int", "0")}
    if t.is_int and t.is_list:
        if t.optional:
            return ([f"ops_int_list _v_{n} = {{0}};", f"const ops_int_list *{n} = NULL;"],
                    f"unbox_opt_int_list({ref}, &_v_{n}, &{n})")
        return [f"ops_int_list {n} = {{0}};"], f"unbox_int_list({ref}, &{n})"
    if t.is_bool_list:
        return [f"ops_bool_list {n} = {{0}};"], f"unbox_bool_list({ref}, &{n})"
    if t.base in simple:
        ctype, h, zero = simple[t.base]
        if t.optional:
            return ([f"{ctype} _v_{n} = {zero};", f"const {ctype} *{n} = NULL;"],
                    f"unbox_opt_{h}({ref}, &_v_{n}, &{n})")
        return [f"{ctype} {n} = {zero};"], f"unbox_{h}({ref}, &{n})"
    if t.base == "ScalarType":
        return [f"ops_dtype {n} = OPS_DTYPE_NONE;"], f"unbox_{'opt_' if t.optional else ''}dtype({ref}, &{n})"
    if t.base == "MemoryFormat":
        return ([f"ops_memory_format {n} = OPS_MEMORY_FORMAT_NONE;"],
                f"unbox_{'opt_' if t.optional else ''}memory_format({ref}, &{n})")
    if t.base == "Device":
        return [f"ops_device {n} = OPS_DEVICE_UNSPECIFIED;"], f"unbox_{'opt_' if t.optional else ''}device({ref}, &{n})"
    if t.base == "str":
        return [f"const char *{n} = NULL;"], f"unbox_{'opt_' if t.optional else ''}str({ref}, &{n})"
    raise AssertionError(f"no unboxing for {t}")


_BOX_RET = {"Tensor": "ops_ivalue_tensor", "bool": "ops_ivalue_bool", "int": "ops_ivalue_int",
            "float": "ops_ivalue_double", "Scalar": "ops_ivalue_scalar"}
_RET_DECL = {"Tensor": "ops_tensor *{} = NULL;", "bool": "bool {} = false;", "int": "int64_t {} = 0;",
             "float": "double {} = 0.0;", "Scalar": "ops_scalar {} = OPS_SCALAR_INT(0);"}


def _box(nf: NativeFunction) -> dict:
    s = nf.func
    op = s.name
    decls, lines = [], []
    for i, a in enumerate(s.arguments):
        d, call = _unbox(a, i, op)
        decls += d
        lines += [f"if ((_st = {call}) != OPS_OK)", "    return _st;"]
    outs = cnames.out_params(s)
    for _, n, r in outs:
        decls.append(f"ops_tensor_vec _o_{n} = {{0}};" if r.type.is_list
                     else _RET_DECL[r.type.base].format(f"_o_{n}"))
    call_args = ", ".join([a.name for a in s.arguments] + [f"&_o_{n}" for _, n, _ in outs])
    if cnames.returns_tensor(s):
        lines += [f"ops_tensor *_res = {s.c_name}({call_args});",
                  "if (_res == NULL)", f"    return box_failed({cnames.c_string(op)}, OPS_OK);",
                  "_r[0] = ops_ivalue_tensor(_res);"]
    else:
        lines += [f"_st = {s.c_name}({call_args});", "if (_st != OPS_OK)",
                  f"    return box_failed({cnames.c_string(op)}, _st);"]
        if s.kind == "inplace":
            lines.append("_r[0] = ops_ivalue_tensor(ops_tensor_retain(self));")
        elif s.kind == "out":
            for j, a in enumerate(s.out_arguments):
                lines.append(f"_r[{j}] = ops_ivalue_tensor(ops_tensor_retain({a.name}));")
        else:
            for j, (_, n, r) in enumerate(outs):
                box = "ops_ivalue_tensor_vec" if r.type.is_list else _BOX_RET[r.type.base]
                lines.append(f"_r[{j}] = {box}(_o_{n});")
    lines.append("return OPS_OK;")
    if any("_st" in x for x in lines):
        decls.append("ops_status _st;")
    return {"fn": "box_" + s.c_name[len("ops_"):], "nargs": len(s.arguments), "nrets": len(s.returns),
            "op": cnames.c_string(op), "decls": decls, "lines": lines,
            "schema": cnames.c_comment(nf.schema_text)}


def generate(model: Model, inputs) -> dict:
    index = {id(nf): i for i, nf in enumerate(model.functions)}

    def ref(nf):
        return f"&registry_ops[{index[id(nf)]}]" if nf is not None else "NULL"

    ops = []
    for nf in model.functions:
        s = nf.func
        ident = s.c_name[len("ops_"):]
        args = [{
            "name": cnames.c_string(a.name), "type": cnames.c_string(a.type_str),
            "default": cnames.c_string(a.default) if a.default is not None else "NULL",
            "kwarg_only": "true" if a.kwarg_only else "false",
            "is_out": "true" if (a.kwarg_only and a.is_write) else "false",
            "optional": "true" if a.type.optional else "false",
        } for a in s.arguments]
        rets = [{"name": cnames.c_string(r.name) if r.name else "NULL", "type": cnames.c_string(r.type_str)}
                for r in s.returns]
        conf = None
        if nf.has_conformance:
            conf = cnames.c_string_chunks(json.dumps(nf.conformance, ensure_ascii=True, separators=(",", ":"),
                                                     default=str))
        variants = " | ".join(f"OPS_VARIANT_{v.upper()}" for v in nf.variants) or "0"
        g = nf.group
        ops.append({
            "ident": ident, "name": cnames.c_string(s.name), "overload": cnames.c_string(s.overload),
            "c_name": cnames.c_string(s.c_name), "schema": cnames.c_string(nf.schema_text),
            "kind": _KINDS[s.kind], "variants": variants, "args": args, "rets": rets,
            "functional": ref(g.functional), "inplace": ref(g.inplace), "out": ref(g.out),
            "conformance": conf, "box": _box(nf),
        })
    used = set()
    for o in ops:
        for line in o["box"]["lines"]:
            m = re.search(r"\b(unbox_\w+|box_failed)\(", line)
            if m:
                used.add(m.group(1))
    for h in list(used):  # unbox_opt_X calls unbox_X (the optional tensor excepted)
        if h.startswith("unbox_opt_") and h not in ("unbox_opt_tensor", "unbox_opt_generator",
                                                                  "unbox_opt_tensor_mut"):
            used.add("unbox_" + h[len("unbox_opt_"):])
    order = sorted(range(len(model.functions)),
                   key=lambda i: (model.functions[i].func.name.encode(), model.functions[i].func.overload.encode()))
    # the registry also carries each entry's conformance metadata as JSON
    inputs = list(inputs) + sorted({os.path.dirname(p) for p in model.conformance_paths})
    text = render.render("ops_registry.c.j2", banner=render.banner("gen_registry.py", inputs),
                         ops=ops, sorted_index=order, used=used,
                         any_unbox=any(h.startswith("unbox_") for h in used))
    return {"ops_registry.c": text}

"""python_bindings.c: the signature tables of the CPython extension module `libops`.

Every `function` variant of native_functions.yaml becomes `libops.<name>(...)` and every
`method` variant a method of `libops.Tensor`.  Overloads that share a Python name
(add.Tensor, add.Scalar, add.out, ...) are one callable; this file only describes them
(one pyops_sig per entry: arguments, types, defaults, keyword-only and out= flags, the
registry entry to call) and emits one tiny METH_FASTCALL wrapper per name.  The parsing
itself is one generic function, pyops_call() in python/src/arg_parser.c, which binds
positional and keyword arguments, applies defaults, tries the overloads in order and
calls the entry's boxed function (include/libops/ops_registry.h).
"""

from . import cnames, render
from .model import Argument, Model, NativeFunction, SchemaError

# Sizes of the parser's fixed arrays (python/src/arg_parser.c).
MAX_ARGS = 32
MAX_RETURNS = 8

OUTPUTS = ("python_bindings.c",)

# Base type -> pyops_type enumerator (python/src/pyops.h).
_TYPES = {
    "Tensor": "PYOPS_T_TENSOR", "Scalar": "PYOPS_T_SCALAR", "int": "PYOPS_T_INT", "SymInt": "PYOPS_T_INT",
    "float": "PYOPS_T_FLOAT", "bool": "PYOPS_T_BOOL", "str": "PYOPS_T_STR", "ScalarType": "PYOPS_T_DTYPE",
    "Device": "PYOPS_T_DEVICE", "Generator": "PYOPS_T_GENERATOR", "MemoryFormat": "PYOPS_T_MEMORY_FORMAT",
}

# How a signature spells a type for users, as torch's TypeError does.
_PY_TYPE = {"Scalar": "Number", "SymInt": "int", "ScalarType": "dtype", "Device": "device",
            "MemoryFormat": "memory_format"}


def _type_code(a: Argument) -> str:
    t = a.type
    if t.is_tensor_list:
        return "PYOPS_T_TENSOR_LIST"
    if t.is_bool_list:
        return "PYOPS_T_BOOL_LIST"
    if t.is_list:
        return "PYOPS_T_INT_LIST"
    return _TYPES[t.base]


def _flags(a: Argument) -> str:
    f = []
    if a.type.optional:
        f.append("PYOPS_F_OPTIONAL")
    if a.type.elem_optional:
        f.append("PYOPS_F_ELEM_OPTIONAL")
    if a.kwarg_only:
        f.append("PYOPS_F_KWONLY")
    if a.kwarg_only and a.is_write:
        f.append("PYOPS_F_OUT")
    if a.default is not None:
        f.append("PYOPS_F_HAS_DEFAULT")
        if a.default == "None":
            f.append("PYOPS_F_DEFAULT_NONE")
    return " | ".join(f) or "0"


def _default(a: Argument, ident: str, i: int, pre: list) -> str:
    """The initialiser of the pyops_default union (None defaults need none)."""
    v = a.default_value
    if a.default is None or v is None:
        return "{0}"
    t = a.type
    if t.is_bool_list:
        name = f"def_{ident}_{i}"
        pre.append(f"static const bool {name}[] = {{{', '.join('true' if x else 'false' for x in v) or 'false'}}};")
        return f"{{.bools = {{{name}, {len(v)}}}}}"
    if t.is_list:
        name = f"def_{ident}_{i}"
        pre.append(f"static const int64_t {name}[] = {{{', '.join(cnames.c_int64(x) for x in v) or '0'}}};")
        return f"{{.ints = {{{name}, {len(v)}}}}}"
    b = t.base
    if b == "Scalar":
        if isinstance(v, bool):
            return f"{{.scalar = {{.kind = OPS_SCALAR_BOOL, .v.b = {'true' if v else 'false'}}}}}"
        if isinstance(v, int):
            return f"{{.scalar = {{.kind = OPS_SCALAR_INT, .v.i = {cnames.c_int64(v)}}}}}"
        return f"{{.scalar = {{.kind = OPS_SCALAR_FLOAT, .v.f = {cnames.c_double(v)}}}}}"
    if b in ("int", "SymInt"):
        return f"{{.i = {cnames.c_int64(v)}}}"
    if b == "float":
        return f"{{.d = {cnames.c_double(v)}}}"
    if b == "bool":
        return f"{{.b = {'true' if v else 'false'}}}"
    if b == "str":
        return f"{{.str = {cnames.c_string(v)}}}"
    if b == "ScalarType":
        return f"{{.dtype = OPS_{v.upper()}}}"
    if b == "Device":
        return f"{{.str = {cnames.c_string(v)}}}"
    if b == "MemoryFormat":
        return f"{{.memory_format = {cnames.c_memory_format(v)}}}"
    raise AssertionError(f"no default for {t}")


def _py_signature(nf: NativeFunction, method: bool) -> str:
    """torch-style display: `(Tensor input, Tensor other, *, Number alpha=1, Tensor out)`."""
    parts, star = [], False
    for a in nf.func.arguments:
        if method and a.name == "self":
            continue
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        t = a.type
        base = _PY_TYPE.get(t.base, t.base)
        if t.is_list:
            base = {"Tensor": "tuple of Tensors", "bool": "tuple of bools"}.get(t.base, "tuple of ints")
        if t.optional and not t.is_list:
            base += "?"
        name = "input" if a.name == "self" else a.name
        s = f"{base} {name}"
        if a.default is not None and not (a.kwarg_only and a.is_write):
            s += "=" + a.default
        parts.append(s)
    return "(" + ", ".join(parts) + ")"


def _sort_key(nf: NativeFunction):
    """Overload order: forms without out= first, Tensor before Scalar (a Tensor argument
    refuses numbers, so the Scalar overload catches them), int before int[] (a bare int
    matches both), then file order."""
    args = nf.func.arguments
    return (nf.kind == "out",
            sum(1 for a in args if a.type.base == "Scalar"),
            sum(1 for a in args if a.type.is_list and a.type.is_int),
            nf.index)


def _tensor_before_int_key(ovs):
    """_sort_key, with one rule first: an overload taking a Tensor where another takes an
    int comes before it (max.other before max.dim, narrow.Tensor before narrow), as in
    torch, since an int argument also takes a 0-dim integer tensor."""
    def positional(nf):
        return [a for a in nf.func.arguments if not a.kwarg_only]

    int_pos = {k for nf in ovs for k, a in enumerate(positional(nf))
               if a.type.base in ("int", "SymInt") and not a.type.is_list}

    def key(nf):
        tensor_at_int = any(k in int_pos and a.type.is_tensor and not a.type.is_list and not a.type.optional
                            for k, a in enumerate(positional(nf)))
        return (nf.kind == "out", not tensor_at_int) + _sort_key(nf)[1:]
    return key


def _bindable(nf: NativeFunction, method: bool) -> bool:
    if not method:
        return True
    selfs = [a for a in nf.func.arguments if a.name == "self"]
    return len(selfs) == 1 and selfs[0].type.is_tensor and not selfs[0].type.optional


def check(model: Model) -> None:
    """What the bindings cannot take; gen.load() calls it, so `check` and every
    artifact refuse the same schema."""
    too_big = [f"{nf.loc}: {nf.func.full_name}: the Python bindings take at most {MAX_ARGS} arguments and "
               f"{MAX_RETURNS} returns" for nf in model.functions
               if len(nf.func.arguments) > MAX_ARGS or len(nf.func.returns) > MAX_RETURNS]
    if too_big:
        raise SchemaError(too_big)


def generate(model: Model, inputs) -> dict:
    index = {id(nf): i for i, nf in enumerate(model.functions)}
    pre, sigs = [], []
    sig_of = {}
    check(model)
    for nf in model.functions:
        s = nf.func
        ident = s.c_name[len("ops_"):]
        args = []
        for i, a in enumerate(s.arguments):
            args.append({
                "name": cnames.c_string(a.name),
                "type": _type_code(a),
                "flags": _flags(a),
                "size": a.type.size or 0,
                "default": _default(a, ident, i, pre),
            })
        rets = [r for r in s.returns]
        ret_names = [r.name for r in rets]
        sig = {
            "ident": ident, "reg": index[id(nf)], "full": cnames.c_string(s.full_name),
            "pysig": cnames.c_string(_py_signature(nf, False)),
            "pysig_m": cnames.c_string(_py_signature(nf, True)),
            "kind": {"functional": "OPS_KIND_FUNCTIONAL", "inplace": "OPS_KIND_INPLACE",
                     "out": "OPS_KIND_OUT"}[s.kind],
            "args": args, "nrets": len(rets),
            "ret_list": "true" if (len(rets) == 1 and rets[0].type.is_list) else "false",
            # several named returns come back as a struct sequence (torch.return_types.max)
            "ret_names": ([cnames.c_string(n) for n in ret_names]
                          if len(rets) > 1 and all(ret_names) and s.kind != "out" else []),
            "pyname": cnames.c_string(s.name),
            "self_index": next((i for i, a in enumerate(s.arguments) if a.name == "self"), -1),
        }
        sigs.append(sig)
        sig_of[id(nf)] = sig

    def names(method: bool):
        by = {}
        for nf in model.functions:
            if ("method" if method else "function") in nf.variants and _bindable(nf, method):
                by.setdefault(nf.func.name, []).append(nf)
        out = []
        for name in sorted(by):
            ovs = sorted(by[name], key=_tensor_before_int_key(by[name]))
            out.append({"name": name, "cname": cnames.c_string(name),
                        "sigs": [sig_of[id(nf)]["ident"] for nf in ovs],
                        "doc": cnames.c_string("\n".join(
                            f"{name}{_py_signature(nf, method)}" for nf in ovs))})
        return out

    # The per-entry blocks are formatted here rather than in Jinja loops: 700 entries of
    # small fields render several times faster as f-strings (the build runs this on
    # every schema edit).
    blocks = [_sig_block(s) for s in sigs]
    text = render.render("python_bindings.c.j2", banner=render.banner("gen_python.py", inputs),
                         pre=pre, blocks=blocks, sigs=[s["ident"] for s in sigs],
                         functions=names(False), methods=names(True))
    return {"python_bindings.c": text}


def _sig_block(s: dict) -> str:
    lines = [f"static const pyops_arg args_{s['ident']}[] = {{"]
    for a in s["args"]:
        lines.append(f"    {{{a['name']}, {a['type']}, {a['flags']}, {a['size']}, {a['default']}}},")
    if not s["args"]:
        lines.append("    {NULL, PYOPS_T_TENSOR, 0, 0, {0}},")
    lines.append("};")
    rets = "NULL"
    if s["ret_names"]:
        rets = f"rets_{s['ident']}"
        lines.append(f"static const char *const {rets}[] = {{{', '.join(s['ret_names'])}}};")
    lines += [
        f"static pyops_sig sig_{s['ident']} = {{",
        f"    .reg = {s['reg']},",
        f"    .full_name = {s['full']},",
        f"    .pyname = {s['pyname']},",
        f"    .pysig = {s['pysig']},",
        f"    .pysig_method = {s['pysig_m']},",
        f"    .kind = {s['kind']},",
        f"    .nargs = {len(s['args'])},",
        f"    .self_index = {s['self_index']},",
        f"    .args = args_{s['ident']},",
        f"    .nrets = {s['nrets']},",
        f"    .ret_list = {s['ret_list']},",
        f"    .ret_names = {rets},",
        "};",
    ]
    return "\n".join(lines)

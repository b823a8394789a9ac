"""Validation of the conformance metadata of each op (docs/conformance.md).

model.py reads ops/conformance/*.yaml and attaches each key's metadata, as-is, to the
entry it names; this module checks it against the schema and turns it into a
Conformance object for the test generators.  Errors are `file:line: reason`, at the
line of the metadata key at fault (else of the entry's name in the conformance file).
gen.py calls check() (only the entries that carry the key: a malformed key fails the
library's generation step); the conformance suite calls load(), which also requires
the key on every kernel-owning entry.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from . import dtypes as dtypes_mod
from .model import Loc, Model, NativeFunction, SchemaError

# the dtype vocabulary is the schema's `dtypes:` key's (codegen/dtypes.py)
DTYPES = dtypes_mod.DTYPES
INTEGRAL = dtypes_mod.INTEGRAL
FLOATING = dtypes_mod.FLOATING
DTYPE_SETS = dtypes_mod.DTYPE_SETS
KEYS = {"ref", "domain", "args", "fixed_dtypes", "compute", "special",
        "samples", "values", "tol", "torch", "note", "layouts", "promote",
        "errors", "shapes", "signed_zeros", "property", "returns", "gradcheck"}
RETURN_KEYS = {"dtype", "compare"}
TENSOR_SPEC_KEYS = {"shape", "dtype", "data"}
ERROR_KEYS = {"match", "shapes", "args", "fill", "dtype", "forms", "entries", "note"}
FORMS = ("functional", "out", "inplace")
# Names a reference expression may use besides the schema's arguments; the case
# generator (tests/conformance/gen_cases.py) defines exactly these and checks that it does.
# Names starting with `ref_` are also allowed: they are the per-area reference functions in
# tests/conformance/refs/*.py, which gen_cases.py loads (an unknown one fails there, with
# the entry's file:line).
REF_HELPERS = {"np", "math", "gelu", "sigmoid", "silu", "relu", "rsqrt", "sign", "frac", "square",
               "div_mode", "shift_left", "shift_right", "pow_", "clamp", "lerp", "nan_to_num",
               "where", "erf", "erfc", "unfold", "as_strided", "expand", "slice_", "narrow",
               "squeeze_dims", "flatten", "unflatten"}
REF_PREFIX = "ref_"


# A sample's own `dtypes:` (a set name or a list, as the schema's): the declared dtypes
# it runs in, where an op accepts a dtype for some arguments only (scatter_reduce's bool
# for every reduce but mean, einsum's bool for one operand, norm.str's half dtypes for
# p='fro'); without it a sample runs in every declared dtype.
SAMPLE_DTYPES_KEY = "dtypes"


def _sample_dtypes(v, declared, nf, where):
    """The dtypes a sample's `dtypes:` names (ValueError with `where` otherwise): each
    must be one the entry declares, so a sample cannot test a dtype the glue refuses."""
    try:
        dts = dtypes_mod.parse_set(v, f"{where}: dtypes")
    except ValueError as e:
        raise ValueError(str(e)) from None
    bad = [d for d in dts if d not in declared]
    if bad:
        raise ValueError(f"{where}: dtypes names {bad[0]}, which {nf.name} does not declare "
                         f"(its `dtypes:` in the schema: {', '.join(declared)})")
    return dts


def sample_dtypes(c, smp):
    """The dtypes sample smp of conformance c runs in."""
    if SAMPLE_DTYPES_KEY in smp and SAMPLE_DTYPES_KEY not in [a.name for a in c.entry.func.arguments]:
        return dtypes_mod.parse_set(smp[SAMPLE_DTYPES_KEY], "")
    return c.dtypes


def sample_args(c, smp):
    """Sample smp without its `dtypes:`: the arguments only."""
    if SAMPLE_DTYPES_KEY in smp and SAMPLE_DTYPES_KEY not in [a.name for a in c.entry.func.arguments]:
        return {k: v for k, v in smp.items() if k != SAMPLE_DTYPES_KEY}
    return smp


@dataclasses.dataclass
class ErrorCase:
    """One `errors:` item: arguments that must make the op fail with `match` in the message."""
    index: int
    match: str
    shapes: Dict[str, Tuple[int, ...]]
    args: Dict[str, Any]
    fill: Dict[str, Any]
    dtype: Dict[str, str]          # per Tensor argument; "*" for all of them
    forms: Tuple[str, ...]
    entries: Optional[Tuple[str, ...]]


@dataclasses.dataclass
class Conformance:
    entry: NativeFunction
    loc: Loc  # where its metadata starts (the entry's name in a conformance file)
    dtypes: Tuple[str, ...]
    ref: Optional[str]
    domain: Dict[str, Any]
    args: Dict[str, List[Any]]
    fixed_dtypes: Dict[str, str]
    compute: str
    special: bool
    samples: List[Dict[str, Any]]
    values: bool
    tol: Dict[str, Tuple[float, ...]]
    torch: Optional[str]
    layouts: bool
    promote: bool
    errors: List[ErrorCase]
    shapes: Optional[List[Any]]     # shape sets: a map name -> shape, or a list in Tensor order
    signed_zeros: bool
    property: bool
    returns: Dict[str, Dict[str, Any]]  # return name -> {dtype: .., compare: ..}
    gradcheck: bool = True  # false: the gradient family skips it (docs/conformance.md)


# Python builtins a reference may use (tuple(...), [.. for i in ..], len(x), ...).
REF_BUILTINS = {"list", "tuple", "slice", "range", "len", "min", "max", "sorted", "zip", "enumerate",
                "abs", "int", "float", "bool", "sum", "any", "all", "dict", "map", "reversed",
                "isinstance", "round", "None", "True", "False"}


def _names_in(expr: str, where: str) -> set:
    """The free names of expr: names it reads, less the variables its comprehensions and
    lambdas bind, less the allowed builtins."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"{where}: not a Python expression: {e.msg}") from None
    except (RecursionError, MemoryError, ValueError):  # Python's own parser limits
        raise ValueError(f"{where}: the expression is nested too deeply to parse") from None
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)} - bound - REF_BUILTINS


def _is_shape(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v)


def _shape_set(v: Any, tensor_names: List[str], where: str) -> None:
    """A shape set: {name: shape} or [shape, ...] in Tensor-argument order."""
    if isinstance(v, dict):
        for k, s in v.items():
            if k not in tensor_names:
                raise ValueError(f"{where}: '{k}' is not a Tensor argument (Tensor arguments: "
                                 f"{', '.join(tensor_names) or 'none'})")
            if not _is_shape(s):
                raise ValueError(f"{where}: the shape of '{k}' must be a list of sizes >= 0, got {s!r}")
        return
    if isinstance(v, list):
        if len(v) != len(tensor_names):
            raise ValueError(f"{where}: {len(v)} shapes for {len(tensor_names)} Tensor arguments "
                             f"({', '.join(tensor_names)})")
        for s in v:
            if not _is_shape(s):
                raise ValueError(f"{where}: a shape must be a list of sizes >= 0, got {s!r}")
        return
    raise ValueError(f"{where}: a shape set is a map from Tensor argument to shape, or a list of shapes")


def _entry_tensor_names(nf: NativeFunction) -> List[str]:
    return [a.name for a in nf.func.arguments if a.type.base == "Tensor" and not (a.kwarg_only and a.is_write)]


def _parse_error(i: int, e: Any, nf: NativeFunction, where: str) -> ErrorCase:
    w = f"{where}: errors[{i}]"
    if not isinstance(e, dict):
        raise ValueError(f"{w}: must be a map with at least `match:`")
    unknown = sorted(set(e) - ERROR_KEYS)
    if unknown:
        raise ValueError(f"{w}: unknown key '{unknown[0]}' (known: {', '.join(sorted(ERROR_KEYS))})")
    match = e.get("match")
    if not isinstance(match, str) or not match:
        raise ValueError(f"{w}: `match` (a fragment of the expected message) is required")
    argnames = {a.name for a in nf.func.arguments}
    shapes = e.get("shapes", {}) or {}
    if not isinstance(shapes, dict):
        raise ValueError(f"{w}: shapes must map argument names to shapes")
    for k, s in shapes.items():
        if k not in argnames:
            raise ValueError(f"{w}: shapes names '{k}', not an argument of {nf.name}")
        if not _is_shape(s):
            raise ValueError(f"{w}: the shape of '{k}' must be a list of sizes >= 0")
    args = e.get("args", {}) or {}
    if not isinstance(args, dict):
        raise ValueError(f"{w}: args must map argument names to values")
    for k in args:
        if k not in argnames:
            raise ValueError(f"{w}: args names '{k}', not an argument of {nf.name}")
    fill = e.get("fill", {}) or {}
    if not isinstance(fill, dict) or not all(isinstance(v, (int, float)) for v in fill.values()):
        raise ValueError(f"{w}: fill must map Tensor arguments to numbers")
    for k in fill:
        if k not in argnames:
            raise ValueError(f"{w}: fill names '{k}', not an argument of {nf.name}")
    dt = e.get("dtype")
    if dt is None:
        dtype: Dict[str, str] = {}
    elif isinstance(dt, str):
        if dt not in DTYPES:
            raise ValueError(f"{w}: unknown dtype '{dt}'")
        dtype = {"*": dt}
    elif isinstance(dt, dict):
        for k, v in dt.items():
            if k not in argnames:
                raise ValueError(f"{w}: dtype names '{k}', not an argument of {nf.name}")
            if v not in DTYPES:
                raise ValueError(f"{w}: unknown dtype '{v}'")
        dtype = dict(dt)
    else:
        raise ValueError(f"{w}: dtype must be a dtype name or a map from Tensor argument to dtype")
    forms = e.get("forms", list(FORMS))
    if isinstance(forms, str):
        forms = [forms]
    if not isinstance(forms, list) or not forms or any(f not in FORMS for f in forms):
        raise ValueError(f"{w}: forms must be a list of {', '.join(FORMS)}")
    entries = e.get("entries")
    if entries is not None:
        if isinstance(entries, str):
            entries = [entries]
        if not isinstance(entries, list) or not all(isinstance(x, str) for x in entries):
            raise ValueError(f"{w}: entries must be a list of entry names (name.overload)")
        entries = tuple(entries)
    return ErrorCase(index=i, match=match, shapes={k: tuple(v) for k, v in shapes.items()}, args=dict(args),
                     fill=dict(fill), dtype=dtype, forms=tuple(f for f in FORMS if f in forms), entries=entries)


def parse(nf: NativeFunction) -> Conformance:
    """The validated metadata of one entry; ValueError with file:line on misuse."""
    loc = nf.conformance_loc or nf.loc
    where = str(loc)

    def at(key: str) -> str:  # the line of one key of the metadata, else of its entry name
        return str(nf.conformance_key_locs.get(key, loc))

    c = nf.conformance
    if not isinstance(c, dict):
        raise ValueError(f"{where}: the metadata of {nf.name} must be a mapping")
    if "dtypes" in c:
        raise ValueError(f"{at('dtypes')}: 'dtypes' is not conformance metadata: the input dtypes an op "
                         f"accepts are declared once, as `dtypes:` in the schema entry of {nf.name} "
                         f"({nf.loc}), and the suite tests those (docs/codegen.md)")
    unknown = sorted(set(c) - KEYS, key=lambda k: nf.conformance_key_locs.get(k, loc).line)
    if unknown:
        raise ValueError(f"{at(unknown[0])}: unknown conformance key '{unknown[0]}' (known: {', '.join(sorted(KEYS))})")
    argnames = {a.name for a in nf.func.arguments}
    tensor_args = {a.name for a in nf.func.arguments if a.type.base == "Tensor"}

    decl = (nf.reduce_target or nf).dtypes  # a reduction's forms: its structured entry's
    dtypes = decl.accept if decl is not None else DTYPES
    ref = c.get("ref")
    if ref is not None:
        if not isinstance(ref, str):
            raise ValueError(f"{at('ref')}: ref must be a string")
        unknown_names = {n for n in _names_in(ref, f"{at('ref')}: ref") - argnames - REF_HELPERS
                         if not n.startswith(REF_PREFIX)}
        if unknown_names:
            raise ValueError(f"{at('ref')}: ref names '{sorted(unknown_names)[0]}', which is neither an "
                             f"argument of {nf.name} nor a helper")
    domain = c.get("domain", {}) or {}
    if not isinstance(domain, dict):
        raise ValueError(f"{at('domain')}: domain must map argument names to [lo, hi] or nonzero")
    list_args = {a.name for a in nf.func.arguments if a.type.base == "Tensor" and a.type.is_list}
    opt_lists = {a.name for a in nf.func.arguments if getattr(a.type, "elem_optional", False)}
    for k, v in domain.items():
        if k not in argnames:
            raise ValueError(f"{at('domain')}: domain names '{k}', not an argument of {nf.name}")
        if v == "index":
            if k not in list_args:
                raise ValueError(f"{at('domain')}: domain `index` is for a Tensor[] or Tensor?[] argument, "
                                 f"and '{k}' is not one")
            continue
        ok = v == "nonzero" or (isinstance(v, list) and len(v) == 2
                                and all(isinstance(x, (int, float)) for x in v) and v[0] <= v[1])
        if not ok:
            raise ValueError(f"{at('domain')}: domain of '{k}' must be [lo, hi] or nonzero"
                             + (" (or index)" if k in list_args else ""))
    args = {}
    raw_args = c.get("args", {}) or {}
    if not isinstance(raw_args, dict):
        raise ValueError(f"{at('args')}: args must map argument names to values")
    for k, v in raw_args.items():
        if k not in argnames:
            raise ValueError(f"{at('args')}: args names '{k}', not an argument of {nf.name}")
        if k in tensor_args:
            raise ValueError(f"{at('args')}: args gives a value for Tensor argument '{k}'")
        args[k] = v if isinstance(v, list) and not _is_int_list_arg(nf, k) else [v]
        for x in args[k]:
            _check_arg_value(nf, k, x, f"{at('args')}: args: '{k}'")
    fixed = c.get("fixed_dtypes", {}) or {}
    if not isinstance(fixed, dict):
        raise ValueError(f"{at('fixed_dtypes')}: fixed_dtypes must map Tensor arguments to dtypes")
    for k, v in fixed.items():
        if k not in tensor_args:
            raise ValueError(f"{at('fixed_dtypes')}: fixed_dtypes names '{k}', not a Tensor argument of {nf.name}")
        if v not in DTYPES:
            raise ValueError(f"{at('fixed_dtypes')}: fixed_dtypes: unknown dtype '{v}'")
    compute = c.get("compute", "float64")
    if compute not in ("float64", "native"):
        raise ValueError(f"{at('compute')}: compute must be float64 or native")
    samples = c.get("samples", []) or []
    if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
        raise ValueError(f"{at('samples')}: samples must be a list of maps")
    for i, s in enumerate(samples):
        for k, v in s.items():
            if k == SAMPLE_DTYPES_KEY and k not in argnames:
                _sample_dtypes(v, dtypes, nf, f"{at('samples')}: samples[{i}]")
                continue
            if k not in argnames:
                raise ValueError(f"{at('samples')}: a sample names '{k}', not an argument of {nf.name}")
            if k in tensor_args:
                items = v if k in list_args and isinstance(v, list) else [v]
                for item in items:
                    _tensor_spec(item, f"{at('samples')}: samples[{i}]: '{k}'")
                if k in list_args and isinstance(v, list) and None in v and k not in opt_lists:
                    raise ValueError(f"{at('samples')}: samples[{i}]: '{k}' is a Tensor[]: only a Tensor?[] holds null items")
            else:
                _check_arg_value(nf, k, v, f"{at('samples')}: samples[{i}]: '{k}'")
    tol = {}
    raw_tol = c.get("tol", {}) or {}
    if not isinstance(raw_tol, dict):
        raise ValueError(f"{at('tol')}: tol must map dtypes to [rtol, atol] or [rtol, atol, nmse]")
    for k, v in raw_tol.items():
        if k not in DTYPES or not (isinstance(v, list) and len(v) in (2, 3)
                                   and all(isinstance(x, (int, float)) and x >= 0 for x in v)):
            raise ValueError(f"{at('tol')}: tol must map dtypes to [rtol, atol] or [rtol, atol, nmse]")
        tol[k] = tuple(float(x) for x in v)
    shapes = c.get("shapes")
    if shapes is not None:
        if not isinstance(shapes, list) or not shapes:
            raise ValueError(f"{at('shapes')}: shapes must be a non-empty list of shape sets")
        names = _entry_tensor_names(nf)
        for i, s in enumerate(shapes):
            _shape_set(s, names, f"{at('shapes')}: shapes[{i}]")
    raw_errors = c.get("errors", []) or []
    if not isinstance(raw_errors, list):
        raise ValueError(f"{at('errors')}: errors must be a list")
    errors = [_parse_error(i, e, nf, at("errors")) for i, e in enumerate(raw_errors)]
    returns = _returns(c.get("returns"), nf, at("returns"))
    for k in ("special", "values", "layouts", "promote", "signed_zeros", "property", "gradcheck"):
        if k in c and not isinstance(c[k], bool):
            raise ValueError(f"{at(k)}: {k} must be true or false")
    _check_used(nf, c, at)
    return Conformance(entry=nf, loc=loc, dtypes=dtypes, ref=ref, domain=domain, args=args,
                       fixed_dtypes=dict(fixed), compute=compute,
                       special=bool(c.get("special", False)), samples=samples,
                       values=bool(c.get("values", True)), tol=tol, torch=c.get("torch"),
                       layouts=bool(c.get("layouts", True)),
                       promote=bool(c.get("promote", True)), errors=errors, shapes=shapes,
                       signed_zeros=bool(c.get("signed_zeros", True)),
                       property=bool(c.get("property", True)), returns=returns,
                       gradcheck=bool(c.get("gradcheck", True)))


# Keys the case generator (tests/conformance/gen_cases.py) reads for one kind of entry
# only: given to the other kind they would be ignored silently, so they are refused.
ELEMENTWISE_ONLY = {
    "special": "feeds NaN, ±inf and ±0 to the structured (elementwise) entries only",
    "promote": "turns off the mixed-dtype runs of structured (elementwise) entries",
    "property": "turns off the random-shape runs of structured (elementwise) entries",
    "compute": "chooses the NumPy dtype a structured (elementwise) entry's reference runs in",
}
SAMPLED_ONLY = {
    "values": "turns off the value comparison of an entry with a plain kernel",
    "layouts": "turns off the layout runs of an entry with a plain kernel",
}
PROMOTING_METAS = ("binary", "binary_float", "bool_out", "div_mode", "where")


def _check_used(nf: NativeFunction, c: Dict[str, Any], at) -> None:
    """Refuse a key the suite would ignore for this entry (docs/conformance.md, "Which keys
    apply where")."""
    if nf.structured and nf.reduce_target is None:  # (a reduction's cases are its samples)
        for k, why in SAMPLED_ONLY.items():
            if k in c:
                raise ValueError(f"{at(k)}: {k}: would be ignored: {nf.name} is structured (meta: {nf.meta}), "
                                 f"its values are always compared in every layout, and `{k}:` {why}")
        outs = {a.name for a in nf.func.out_arguments}
        for i, smp in enumerate(c.get("samples") or []):
            named = sorted(outs & set(smp))
            if named:
                raise ValueError(f"{at('samples')}: samples[{i}] names the out= argument '{named[0]}': a "
                                 f"structured entry's samples give its inputs (the out= form is tested with "
                                 "every case)")
        if "promote" in c:
            n = sum(1 for a in nf.func.non_out_arguments if a.type.base == "Tensor" and a.name not in
                    (c.get("fixed_dtypes") or {}))
            if n < 2 or nf.meta not in PROMOTING_METAS:
                raise ValueError(f"{at('promote')}: promote: would be ignored for {nf.name}: mixed-dtype runs need "
                                 f"two Tensor arguments of free dtype and a promoting meta "
                                 f"({', '.join(PROMOTING_METAS)}); it has {n} and meta {nf.meta}")
        if "property" in c and "shapes" in c:
            raise ValueError(f"{at('property')}: property: would be ignored for {nf.name}: with `shapes:` given "
                             "there are no random-shape runs to turn on or off")
        return
    for k, why in ELEMENTWISE_ONLY.items():
        if k in c:
            raise ValueError(f"{at(k)}: {k}: would be ignored: {nf.name} has a plain kernel, its cases are "
                             f"its `samples:` and `shapes:`, and `{k}:` {why} (give such inputs in a "
                             "sample's `data:`)")
    if "args" in c and "shapes" not in c:
        raise ValueError(f"{at('args')}: args: would be ignored for {nf.name} without `shapes:`: its non-Tensor "
                         "values come from each sample (write them there), or add `shapes:` to cross "
                         "them with args")


def _check_arg_value(nf: NativeFunction, name: str, v: Any, where: str) -> None:
    """A value the suite passes for a non-Tensor argument has that argument's C type
    (an int fits int64_t: the YAML loader refuses wider integers)."""
    t = next(a.type for a in nf.func.arguments if a.name == name)
    if v is None and t.optional:
        return
    num = isinstance(v, (int, float)) and not isinstance(v, bool)
    if t.is_list and t.is_int:
        ok = (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v))
    elif t.is_int:
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif t.is_bool_list:  # any length: error cases pass wrong ones on purpose
        ok = isinstance(v, list) and all(isinstance(x, bool) for x in v)
    elif t.base == "float":
        ok = num
    elif t.base == "Scalar":
        ok = num or isinstance(v, bool)
    elif t.base == "bool":
        ok = isinstance(v, bool)
    elif t.base in ("str", "ScalarType", "Device", "MemoryFormat"):
        ok = isinstance(v, str)
    else:
        ok = True  # Generator: the suite decides
    if not ok:
        raise ValueError(f"{where}: {v!r} is not a value of type {t}"[:400])


def _tensor_spec(v: Any, where: str) -> None:
    """A sample's Tensor value: a shape, a dtype name (out=), null, or {shape, dtype, data}."""
    if v is None or _is_shape(v) or (isinstance(v, str) and v in DTYPES):
        return
    if not isinstance(v, dict):
        raise ValueError(f"{where}: a Tensor value is a shape, {{shape, dtype, data}}, a dtype or null, got {v!r}")
    unknown = sorted(set(v) - TENSOR_SPEC_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(sorted(TENSOR_SPEC_KEYS))})")
    if "shape" in v and not _is_shape(v["shape"]):
        raise ValueError(f"{where}: shape must be a list of sizes >= 0, got {v['shape']!r}")
    if "dtype" in v and v["dtype"] not in DTYPES:
        raise ValueError(f"{where}: unknown dtype '{v['dtype']}'")
    if "data" in v:
        shape = _data_shape(v["data"])
        if shape is None:
            raise ValueError(f"{where}: data must be a number or nested lists of numbers of one shape")
        if "shape" in v:
            want = 1
            for x in v["shape"]:
                want *= x
            have = 1
            for x in shape:
                have *= x
            if want != have:
                raise ValueError(f"{where}: data has {have} elements, shape {v['shape']} needs {want}")


def _data_shape(d: Any) -> Optional[Tuple[int, ...]]:
    """The shape of nested lists of numbers (bools allowed), or None if ragged."""
    if isinstance(d, (bool, int, float)):
        return ()
    if not isinstance(d, list):
        return None
    inner = [_data_shape(x) for x in d]
    if any(x is None for x in inner) or len(set(inner)) > 1:
        return None
    return (len(d),) + (inner[0] if inner else ())


def _returns(v: Any, nf: NativeFunction, where: str) -> Dict[str, Dict[str, Any]]:
    """`returns:`: return name -> {dtype: <dtype>, compare: <bool>}."""
    if v is None:
        return {}
    names = nf.func.return_names
    if nf.structured and nf.reduce_target is None:
        raise ValueError(f"{where}: returns is for entries with a dispatch kernel; a structured entry's "
                         f"result dtype follows its meta")
    if not isinstance(v, dict):
        raise ValueError(f"{where}: returns must map return names to {{dtype: .., compare: ..}}")
    out = {}
    for k, opt in v.items():
        if k not in names:
            raise ValueError(f"{where}: returns names '{k}', not a return of {nf.name} "
                             f"(returns: {', '.join(names)})")
        i = names.index(k)
        if nf.func.returns[i].type.base != "Tensor":
            raise ValueError(f"{where}: returns: '{k}' is not a Tensor return")
        if not isinstance(opt, dict) or not opt:
            raise ValueError(f"{where}: returns: '{k}' must map to {{dtype: <dtype>}} and/or {{compare: false}}")
        unknown = sorted(set(opt) - RETURN_KEYS)
        if unknown:
            raise ValueError(f"{where}: returns: '{k}': unknown key '{unknown[0]}' "
                             f"(known: {', '.join(sorted(RETURN_KEYS))})")
        if "dtype" in opt and opt["dtype"] not in DTYPES:
            raise ValueError(f"{where}: returns: '{k}': unknown dtype '{opt['dtype']}'")
        if "compare" in opt and not isinstance(opt["compare"], bool):
            raise ValueError(f"{where}: returns: '{k}': compare must be true or false")
        out[k] = dict(opt)
    return out


def _is_int_list_arg(nf: NativeFunction, name: str) -> bool:
    for a in nf.func.arguments:
        if a.name == name:
            return a.type.is_list
    return False


def owners(model: Model) -> List[NativeFunction]:
    """Entries that own a kernel and so must carry conformance metadata."""
    return [nf for nf in model.functions if _owns_cases(nf)]


def _owns_cases(nf: NativeFunction) -> bool:
    """An entry with a kernel, or a form of a reduction (each form keeps its own cases:
    its arguments differ from its structured entry's)."""
    return bool(nf.dispatch) or nf.reduce_target is not None


def primary_entries(model: Model, owner: NativeFunction) -> List[NativeFunction]:
    """The entries the suite calls for owner's metadata: one per group (its functional
    form, else its out= or in-place form) among owner and the entries delegating to it."""
    out = []
    for g in model.groups:
        nf = g.functional or g.out or g.inplace
        if (nf.delegate if nf.delegate is not None else nf) is owner:
            out.append(nf)
    return out


def error_applies(err: ErrorCase, nf: NativeFunction) -> bool:
    """True when an `errors:` item can be run on entry nf: the names it gives shapes,
    fills or dtypes are Tensor arguments of nf, the names it gives values are its other
    arguments (or optional Tensors given None)."""
    if err.entries is not None and nf.name not in err.entries:
        return False
    args = {a.name: a for a in nf.func.arguments if not (a.kwarg_only and a.is_write)}
    for k in list(err.shapes) + list(err.fill) + [k for k in err.dtype if k != "*"]:
        if k not in args or args[k].type.base != "Tensor":
            return False
    for k, v in err.args.items():
        if k not in args:
            return False
        # a Tensor argument takes a value only to be None (clamp with both bounds None)
        if args[k].type.base == "Tensor" and not (args[k].type.optional and v is None):
            return False
    return True


def _check_errors_apply(model: Model, conf: Conformance) -> Optional[str]:
    """Every `errors:` item must run on some entry: a typo otherwise tests nothing."""
    prim = primary_entries(model, conf.entry)
    names = {nf.name for nf in prim}
    where = str(conf.entry.conformance_key_locs.get("errors", conf.loc))
    for err in conf.errors:
        if err.entries is not None:
            bad = [x for x in err.entries if x not in names]
            if bad:
                return (f"{where}: errors[{err.index}]: entries names '{bad[0]}', which is not an entry "
                        f"tested with this metadata ({', '.join(sorted(names))})")
        if not any(error_applies(err, nf) for nf in prim):
            return (f"{where}: errors[{err.index}] applies to no entry of {conf.entry.name}: its shapes, fill "
                    "and dtype must name Tensor arguments, its args other arguments")
    return None


def _validate(model: Model, require: bool) -> Dict[str, Conformance]:
    errors: List[str] = []
    out: Dict[str, Conformance] = {}
    for nf in model.functions:
        if nf.conformance is None:
            if require and _owns_cases(nf):
                errors.append(f"{nf.loc}: {nf.name} has a kernel but no conformance metadata (a key "
                              f"'{nf.name}:' in ops/conformance/<family>.yaml; docs/conformance.md)")
            continue
        if not _owns_cases(nf):
            errors.append(f"{nf.conformance_loc}: {nf.name}: conformance belongs on the entry that owns the "
                          f"kernel ({nf.structured_delegate or 'this entry has none'})")
            continue
        try:
            conf = parse(nf)
            why = _check_errors_apply(model, conf)
            if why is not None:
                raise ValueError(why)
            out[nf.name] = conf
        except ValueError as e:
            errors.append(str(e))
    if errors:
        raise SchemaError(errors)
    return out


def load(model: Model) -> Dict[str, Conformance]:
    """Metadata of every kernel-owning entry, by entry name; SchemaError lists problems
    (including an owner without metadata)."""
    return _validate(model, require=True)


def check(model: Model) -> None:
    """Validate the metadata that is present (gen.py: fast, and the generator's own test
    fixtures carry none); SchemaError lists problems."""
    _validate(model, require=False)


def for_entry(confs: Dict[str, Conformance], nf: NativeFunction) -> Optional[Conformance]:
    """The metadata that covers nf: its own, or its structured delegate's."""
    owner = nf.delegate if nf.delegate is not None else nf
    return confs.get(owner.name)

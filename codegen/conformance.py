"""Validation of the `conformance:` metadata beside each op (docs/conformance.md).

model.py stores the key as-is; this module checks it against the schema and turns it
into a Conformance object for the test generators.  Errors are `file:line: reason`.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from .model import Model, NativeFunction, SchemaError

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64")
INTEGRAL = DTYPES[1:6]
FLOATING = DTYPES[6:]
DTYPE_SETS = {
    "all": DTYPES,
    "numeric": INTEGRAL + FLOATING,
    "floating": FLOATING,
    "integral": INTEGRAL,
    "integral_and_bool": ("bool",) + INTEGRAL,
}
KEYS = {"dtypes", "ref", "domain", "args", "fixed_dtypes", "compute", "special",
        "samples", "values", "tol", "torch", "note", "layouts", "promote"}
# Names a reference expression may use besides the schema's arguments.
# Names a reference expression may use besides the schema's arguments; the case
# generator (tests/conformance/gen_cases.py) defines exactly these and checks that it does.
REF_HELPERS = {"np", "math", "gelu", "sigmoid", "silu", "relu", "rsqrt", "sign", "frac", "square",
               "div_mode", "shift_left", "shift_right", "pow_", "clamp", "lerp", "nan_to_num",
               "where", "erf", "erfc", "unfold", "as_strided", "expand", "slice_", "narrow",
               "squeeze_dims", "flatten", "unflatten"}


@dataclasses.dataclass
class Conformance:
    entry: NativeFunction
    dtypes: Tuple[str, ...]
    ref: Optional[str]
    domain: Dict[str, Any]
    args: Dict[str, List[Any]]
    fixed_dtypes: Dict[str, str]
    compute: str
    special: bool
    samples: List[Dict[str, Any]]
    values: bool
    tol: Dict[str, Tuple[float, float]]
    torch: Optional[str]
    layouts: bool
    promote: bool


def _dtypes(v: Any, where: str) -> Tuple[str, ...]:
    if isinstance(v, str):
        if v in DTYPE_SETS:
            return DTYPE_SETS[v]
        if v in DTYPES:
            return (v,)
        raise ValueError(f"{where}: unknown dtype set '{v}' (one of {', '.join(DTYPE_SETS)})")
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        bad = [x for x in v if x not in DTYPES]
        if bad:
            raise ValueError(f"{where}: unknown dtype '{bad[0]}'")
        return tuple(x for x in DTYPES if x in v)
    raise ValueError(f"{where}: expected a dtype set name or a list of dtypes")


def _names_in(expr: str, where: str) -> set:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"{where}: not a Python expression: {e.msg}") from None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            pass
    return names


def parse(nf: NativeFunction) -> Conformance:
    """The validated metadata of one entry; ValueError with file:line on misuse."""
    loc = nf.key_locs.get("conformance", nf.loc)
    where = str(loc)
    c = nf.conformance
    if not isinstance(c, dict):
        raise ValueError(f"{where}: conformance must be a mapping")
    unknown = sorted(set(c) - KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown conformance key '{unknown[0]}' (known: {', '.join(sorted(KEYS))})")
    argnames = {a.name for a in nf.func.arguments}
    tensor_args = {a.name for a in nf.func.arguments if a.type.base == "Tensor"}

    dtypes = _dtypes(c.get("dtypes", "all"), f"{where}: dtypes")
    ref = c.get("ref")
    if ref is not None:
        if not isinstance(ref, str):
            raise ValueError(f"{where}: ref must be a string")
        unknown_names = _names_in(ref, f"{where}: ref") - argnames - REF_HELPERS
        if unknown_names:
            raise ValueError(f"{where}: ref names '{sorted(unknown_names)[0]}', which is neither an "
                             f"argument of {nf.name} nor a helper")
    domain = c.get("domain", {}) or {}
    if not isinstance(domain, dict):
        raise ValueError(f"{where}: domain must map argument names to [lo, hi] or nonzero")
    for k, v in domain.items():
        if k not in argnames:
            raise ValueError(f"{where}: domain names '{k}', not an argument of {nf.name}")
        ok = v == "nonzero" or (isinstance(v, list) and len(v) == 2
                                and all(isinstance(x, (int, float)) for x in v) and v[0] <= v[1])
        if not ok:
            raise ValueError(f"{where}: domain of '{k}' must be [lo, hi] or nonzero")
    args = {}
    for k, v in (c.get("args", {}) or {}).items():
        if k not in argnames:
            raise ValueError(f"{where}: args names '{k}', not an argument of {nf.name}")
        if k in tensor_args:
            raise ValueError(f"{where}: args gives a value for Tensor argument '{k}'")
        args[k] = v if isinstance(v, list) and not _is_int_list_arg(nf, k) else [v]
    fixed = c.get("fixed_dtypes", {}) or {}
    for k, v in fixed.items():
        if k not in tensor_args:
            raise ValueError(f"{where}: fixed_dtypes names '{k}', not a Tensor argument of {nf.name}")
        if v not in DTYPES:
            raise ValueError(f"{where}: fixed_dtypes: unknown dtype '{v}'")
    compute = c.get("compute", "float64")
    if compute not in ("float64", "native"):
        raise ValueError(f"{where}: compute must be float64 or native")
    samples = c.get("samples", []) or []
    if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
        raise ValueError(f"{where}: samples must be a list of maps")
    for s in samples:
        for k in s:
            if k not in argnames:
                raise ValueError(f"{where}: a sample names '{k}', not an argument of {nf.name}")
    tol = {}
    for k, v in (c.get("tol", {}) or {}).items():
        if k not in DTYPES or not (isinstance(v, list) and len(v) == 2):
            raise ValueError(f"{where}: tol must map dtypes to [rtol, atol]")
        tol[k] = (float(v[0]), float(v[1]))
    return Conformance(entry=nf, dtypes=dtypes, ref=ref, domain=domain, args=args,
                       fixed_dtypes=dict(fixed), compute=compute,
                       special=bool(c.get("special", False)), samples=samples,
                       values=bool(c.get("values", True)), tol=tol, torch=c.get("torch"),
                       layouts=bool(c.get("layouts", True)),
                       promote=bool(c.get("promote", True)))


def _is_int_list_arg(nf: NativeFunction, name: str) -> bool:
    for a in nf.func.arguments:
        if a.name == name:
            return a.type.is_list
    return False


def owners(model: Model) -> List[NativeFunction]:
    """Entries that own a kernel and so must carry conformance metadata."""
    return [nf for nf in model.functions if nf.dispatch]


def load(model: Model) -> Dict[str, Conformance]:
    """Metadata of every kernel-owning entry, by entry name; SchemaError lists problems
    (including an owner without metadata)."""
    errors: List[str] = []
    out: Dict[str, Conformance] = {}
    for nf in owners(model):
        if nf.conformance is None:
            errors.append(f"{nf.loc}: {nf.name} has a kernel but no conformance metadata "
                          "(docs/conformance.md)")
            continue
        try:
            out[nf.name] = parse(nf)
        except ValueError as e:
            errors.append(str(e))
    if errors:
        raise SchemaError(errors)
    return out


def for_entry(confs: Dict[str, Conformance], nf: NativeFunction) -> Optional[Conformance]:
    """The metadata that covers nf: its own, or its structured delegate's."""
    owner = nf.delegate if nf.delegate is not None else nf
    return confs.get(owner.name)

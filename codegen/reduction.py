"""The structured reduction family, `meta: reduction` (docs/codegen.md "Reductions").

Every form of a reduction (functional, out=, dim, dim out=, dim=None) is generated
around ONE kernel, the one of its structured entry (the fullest out= form, e.g.
sum.dim_out); the other forms name it as `structured_delegate`.  The glue of each form
maps its own arguments onto the family's: `self`, `dim` (any of int, int?, int[],
int[]?, int[N]: None or an empty list reduces every dim; an absent dim is None),
`keepdim` (absent: false), `dtype` (absent: None).  Those are the meta step's
(kernels/reduce.h reduce_family_meta: dims, keepdim and dtype to the output's shape
and dtype, out= checks, allocation); the kernel gets `ops_reduce *r` and the op's
other arguments (var's correction), which a delegate passes by name, or None where
it lacks them.  The op's rule (its dtype rule, identity, which loops) is the schema key
`reduce:` of the structured entry: a kind of kernels/ops_reduce_common.h's red_kind
(`reduce: sum`), or `[rows, <flags>]` for an op with its own arithmetic (ptp); amax and
amin take `cast_out` (max()/min(): out= of any dtype the result casts to).  A form may
name one of the structured entry's own arguments differently (STANDS_FOR: var's
`bool unbiased` is `correction` 1 or 0, as PyTorch's decompositions map it).
"""

from typing import List, Optional, Tuple

from . import cnames, scan
from .model_types import NativeFunction

FAMILIES = ("reduction", scan.FAMILY)  # (the scans: codegen/scan.py)

# `reduce:` names -> red_kind constants (tests/codegen checks they exist)
KINDS = {
    "sum": "RED_SUM", "nansum": "RED_NANSUM", "mean": "RED_MEAN", "prod": "RED_PROD",
    "amax": "RED_AMAX", "amin": "RED_AMIN", "all": "RED_ALL", "any": "RED_ANY",
    "logsumexp": "RED_LSE", "nanmean": "RED_NANMEAN", "var": "RED_VAR", "std": "RED_STD",
    "argmax": "RED_ARGMAX", "argmin": "RED_ARGMIN", "norm": "RED_NORM", "max_dim": "RED_MAXDIM",
    "min_dim": "RED_MINDIM", "aminmax": "RED_AMINMAX", "rows": "RED_ROWS",
}
# flags of `reduce: [rows, ...]` (and norm's) -> kernels/reduce.h's rules
ROW_FLAGS = {"floating": "REDUCE_META_FLOATING", "no_identity": "REDUCE_META_NO_IDENTITY",
             "linalg": "REDUCE_META_LINALG", "cast_out": "REDUCE_META_CAST_OUT"}
# the flags each kind takes
KIND_FLAGS = {"rows": ("floating", "no_identity"), "norm": ("linalg",), "amax": ("cast_out",),
              "amin": ("cast_out",)}

# A delegate's argument that stands for an argument of the structured entry under
# another name and type (PyTorch's older overloads, mapped as its decompositions do):
# its name -> (its type, the structured entry's argument, that one's type, the C value
# of that argument, a Scalar, from the delegate's `{}`).
STANDS_FOR = {"unbiased": ("bool", "correction", "Scalar?", "OPS_SCALAR_INT({} ? 1 : 0)")}

FAMILY_ARGS = ("self", "dim", "keepdim", "dtype")


def is_family(meta: Optional[str]) -> bool:
    return meta in FAMILIES


def parse_rule(v, name: str) -> Tuple[str, Tuple[str, ...]]:
    """`reduce:` -> (kind name, flags); ValueError with the reason."""
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{name}: 'reduce' is a kind name or a list [rows, <flags>]")
    kind, flags = v[0].strip(), tuple(x.strip() for x in v[1:])
    if kind not in KINDS:
        raise ValueError(f"{name}: unknown reduce kind '{kind}' (known: {', '.join(KINDS)})")
    allowed = KIND_FLAGS.get(kind, ())
    if flags and not allowed:
        takes = ", ".join(sorted(KIND_FLAGS))
        raise ValueError(f"{name}: reduce flags ({', '.join(flags)}) are for {takes} only; {kind} has its own rule")
    for f in flags:
        if f not in allowed:
            raise ValueError(f"{name}: unknown reduce flag '{f}' for {kind} (known: {', '.join(allowed)})")
    if len(set(flags)) != len(flags):
        raise ValueError(f"{name}: a reduce flag is given twice")
    return kind, flags


def _family_arg_why(a, where: str) -> Optional[str]:
    """Why a family argument of an entry has a type the meta cannot take, or None."""
    t = a.type
    if a.name == "self":
        return None if (t.base == "Tensor" and not t.optional and not t.is_list) else \
            f"{where}: argument 'self' must be a Tensor"
    if a.name == "dim":
        return None if t.is_int else f"{where}: argument 'dim' must be int, int?, int[] or int[]?, not {t}"
    if a.name == "keepdim":
        return None if (t.base == "bool" and not t.optional) else f"{where}: argument 'keepdim' must be bool"
    if a.name == "dtype":
        return None if t.base == "ScalarType" else f"{where}: argument 'dtype' must be ScalarType?"
    return None


def extras(nf: NativeFunction):
    """The op's own arguments: the non-out ones the meta does not take."""
    return [a for a in nf.func.non_out_arguments if a.name not in FAMILY_ARGS]


def check_structured(nf: NativeFunction) -> Optional[str]:
    """Why a `meta: reduction` entry cannot be the family's structured entry, or None."""
    if nf.meta == scan.FAMILY:
        return scan.check_structured(nf)
    s = nf.func
    name = nf.name
    if nf.reduce_rule is None:
        return f"{name}: a `meta: reduction` entry needs 'reduce' (its rule: {', '.join(KINDS)})"
    ins = s.non_out_arguments
    if not ins or ins[0].name != "self":
        return f"{name}: a reduction's first argument is 'self'"
    for a in ins:
        why = _family_arg_why(a, name)
        if why:
            return why
    for a in extras(nf):
        if a.type.is_tensor or a.type.is_tensor_list or a.name == "r":
            return (f"{name}: argument '{a.name}' cannot go to a reduction kernel (it takes `ops_reduce *r` and "
                    "non-Tensor arguments)")
    n = len(s.out_arguments)
    if n not in (1, 2):
        return f"{name}: a reduction has one or two out= arguments, not {n}"
    if n == 2 and nf.reduce_rule[0] not in ("var", "std", "max_dim", "min_dim", "aminmax"):
        return f"{name}: reduce kind '{nf.reduce_rule[0]}' has one result; two out= arguments need var, std, " \
               "max_dim, min_dim or aminmax"
    if n == 1 and nf.reduce_rule[0] in ("max_dim", "min_dim", "aminmax"):
        return f"{name}: reduce kind '{nf.reduce_rule[0]}' has two results"
    return None


def check_delegate(nf: NativeFunction, target: NativeFunction) -> Optional[str]:
    """Why nf's arguments cannot be mapped onto its structured reduction entry, or None."""
    if target.meta == scan.FAMILY:
        return scan.check_delegate(nf, target)
    ds, ts = nf.func, target.func
    tn = ts.full_name
    ins = ds.non_out_arguments
    if not ins or ins[0].name != "self":
        return f"its first argument must be 'self', as {tn}'s"
    for a in ins:
        why = _family_arg_why(a, "")
        if why:
            return why.lstrip(": ")
    t_extra = {a.name: a for a in extras(target)}
    mine = {a.name: a for a in extras(nf)}
    for n, a in mine.items():
        if n in STANDS_FOR:
            why = _stands_for_why(a, t_extra, mine, tn)
            if why:
                return why
            continue
        if n not in t_extra:
            return f"argument '{n}' has no place in {tn} (its arguments: {', '.join(a.name for a in ts.non_out_arguments)})"
        if a.type != t_extra[n].type and not _to_optional(a, t_extra[n]):
            return f"argument '{n}' is {a.type} where {tn} has {t_extra[n].type}"
    for n, a in t_extra.items():
        if n not in mine and _stand_in(n, mine) is None and _none(a) is None:
            return f"it lacks argument '{n}' of {tn}, which has no None to stand for it"
    t_names = {a.name for a in ts.non_out_arguments}
    for n in ("dim", "keepdim", "dtype"):
        if any(a.name == n for a in ins) and n not in t_names:
            return f"argument '{n}' has no place in {tn}"
    if ds.kind not in ("out", "functional"):
        return "an in-place entry cannot delegate to a reduction"
    return scan.results_why(nf, target)


def _stands_for_why(a, t_extra, mine, tn: str) -> Optional[str]:
    """Why a delegate's argument named in STANDS_FOR cannot stand for its target's, or None."""
    typ, target, ttyp, _ = STANDS_FOR[a.name]
    if str(a.type) != typ:
        return f"argument '{a.name}' is {a.type}; it stands for {tn}'s '{target}' only as {typ}"
    if target not in t_extra or str(t_extra[target].type) != ttyp:
        return f"argument '{a.name}' stands for a '{target}' ({ttyp}) that {tn} does not have"
    if target in mine:
        return f"it has both '{a.name}' and '{target}', which '{a.name}' stands for"
    return None


def _stand_in(name: str, mine) -> Optional[str]:
    """The delegate's argument that stands for the structured entry's `name`, or None."""
    return next((n for n, (_, t, _, _) in STANDS_FOR.items() if t == name and n in mine), None)


def _to_optional(a, t) -> bool:
    """A delegate's `Scalar p` (`int`, `float`, `bool`) may stand where the structured
    entry has `Scalar? p`: it is passed by address (norm.Scalar's p=2)."""
    return (t.type.optional and not a.type.optional and not a.type.is_list and not t.type.is_list
            and a.type.base == t.type.base and a.type.base in ("Scalar", "int", "float", "bool"))


def _none(a) -> Optional[str]:
    """The C value of None for an optional argument a delegate lacks, or None."""
    if not a.type.optional:
        return None
    if a.type.base == "ScalarType":
        return "OPS_DTYPE_NONE"
    return "NULL" if cnames.c_type(a).endswith("*") else None


def kernel_params(nf: NativeFunction) -> List[str]:
    """`ops_reduce *r` and the op's own arguments."""
    if nf.meta == scan.FAMILY:
        return scan.kernel_params(nf)
    return ["ops_reduce *r"] + [cnames.decl(cnames.c_type(a), a.name) for a in extras(nf)]


def kernel_signature(nf: NativeFunction) -> Tuple:
    if nf.meta == scan.FAMILY:
        return scan.kernel_signature(nf)
    return ("reduce", tuple((a.type, a.is_write) for a in extras(nf)))


def _dims(nf: NativeFunction, b) -> str:
    """The meta's dims (`const ops_int_list *`, NULL: every dim) from the entry's dim."""
    a = next((x for x in nf.func.arguments if x.name == "dim"), None)
    if a is None:
        return "NULL"
    t = a.type
    if t.is_list:
        return "dim" if t.optional else "&dim"
    if t.optional:
        b("const ops_int_list _dims = {dim, 1};")
        return "dim != NULL ? &_dims : NULL"
    b("const ops_int_list _dims = {&dim, 1};")
    return "&_dims"


def glue(nf: NativeFunction, b, op: str, ptr: bool, st_declared: bool) -> None:
    """Steps 3 of the glue of a reduction entry (docs/codegen.md): the kernel of its
    structured entry, the meta, the kernel, the finish.  `_dev` is self's device."""
    if nf.reduce_target.meta == scan.FAMILY:
        return scan.glue(nf, b, op, ptr, st_declared)
    s = nf.func
    target = nf.reduce_target
    kind, flags = target.reduce_rule
    names = {a.name for a in s.arguments}
    scan.lookup_kernel(target, b, op, ptr)
    dims = _dims(nf, b)
    keepdim = "keepdim" if "keepdim" in names else "false"
    dtype = "dtype" if "dtype" in names else "OPS_DTYPE_NONE"
    two = len(target.func.out_arguments) == 2
    if s.kind == "out":
        outs = [a.name for a in s.out_arguments] + ["NULL"] * (2 - len(s.out_arguments))
        results = ["NULL", "NULL"]
    else:
        outs = ["NULL", "NULL"]
        if ptr:
            results = ["&_result", "NULL"]
        else:
            ps = [n for _, n, _ in cnames.out_params(s)]
            results = ps + ["NULL"] * (2 - len(ps))
    rules = " | ".join(ROW_FLAGS[f] for f in flags) if flags else "0u"
    mine = {a.name: a for a in s.arguments}
    kargs = ["&_r"]
    for a in extras(target):
        d = mine.get(a.name)
        alias = _stand_in(a.name, mine) if d is None else None
        if alias is not None:  # var's unbiased: the correction it means, by address
            b(f"const ops_scalar _{a.name} = {STANDS_FOR[alias][3].format(alias)};")
            kargs.append(f"&_{a.name}")
            continue
        kargs.append(_none(a) if d is None else f"&{d.name}" if _to_optional(d, a) else d.name)
    if ptr:
        b("ops_tensor *_result = NULL;")
    if not st_declared:
        b("ops_status _st;")
    # the meta allocates on self's device and the kernel runs there: it is current for
    # the three steps (a CUDA kernel need not set it itself)
    b("const int _guard = _dev.type == OPS_CPU ? -1 : ops_device_guard_enter(_dev);")
    b("ops_reduce _r;")
    b(f'_st = reduce_family_meta(&_r, "{op}", {KINDS[kind]}, {rules}, self, {dims}, {keepdim}, {dtype}, '
      f'{outs[0]}, {outs[1]}, {"true" if two else "false"});')
    b("if (OPS_LIKELY(_st == OPS_OK))")
    b(f"    _st = reduce_family_finish(&_r, _fn({', '.join(kargs)}), {outs[0]}, {outs[1]}, "
      f"{results[0]}, {results[1]});")
    b("if (_guard >= 0)")
    b("    ops_device_guard_exit(_dev, _guard);")
    b("return _result;" if ptr else "return _st;")

"""The structured scan family, `meta: scan` (docs/codegen.md "Scans").

softmax, log_softmax, cumsum, cumprod, cummax, cummin: an op along one dim whose result
has self's shape.  Every form (functional, out=, in-place) is generated around ONE
kernel, the one of its structured entry (the out= form, e.g. cumsum.out); the other
forms name it as `structured_delegate`.  The family's arguments are `self` (a Tensor),
`dim` (int) and `dtype` (ScalarType?; a form without it passes None); they go to the
meta step (kernels/reduce.h scan_family_meta: dim wrap and check, the kind's dtype
rule and refusals, out= checks, in-place's dtype, allocation), the kernel gets
`ops_scan *s` alone.  The op's rule is the schema key `scan:` of the structured entry,
a kind of kernels/reduce.h's scan_kind.  The family shares the reduction family's
hooks (nf.reduce_rule holds the kind, nf.reduce_target the structured entry).
"""

from typing import List, Optional, Tuple

from . import cnames
from .model_types import NativeFunction

FAMILY = "scan"

# `scan:` names -> scan_kind constants (tests/codegen checks they exist)
KINDS = {"softmax": "SCAN_SOFTMAX", "log_softmax": "SCAN_LOG_SOFTMAX", "cumsum": "SCAN_CUMSUM",
         "cumprod": "SCAN_CUMPROD", "cummax": "SCAN_CUMMAX", "cummin": "SCAN_CUMMIN"}
# the kinds with a second result (int64 indices)
TWO = ("cummax", "cummin")

FAMILY_ARGS = ("self", "dim", "dtype")


def parse_rule(v, name: str) -> Tuple[str, Tuple[str, ...]]:
    """`scan:` -> (kind name, ()); ValueError with the reason."""
    if not isinstance(v, str) or v.strip() not in KINDS:
        raise ValueError(f"{name}: 'scan' is one of {', '.join(KINDS)}, not {v!r}")
    return v.strip(), ()


def _arg_why(a) -> Optional[str]:
    """Why an argument cannot be one of the family's, or None."""
    t = a.type
    if a.name == "self":
        ok = t.base == "Tensor" and not t.optional and not t.is_list
        return None if ok else "argument 'self' must be a Tensor"
    if a.name == "dim":
        ok = t.base == "int" and not t.optional and not t.is_list
        return None if ok else f"argument 'dim' must be int, not {t}"
    if a.name == "dtype":
        return None if (t.base == "ScalarType" and t.optional) else f"argument 'dtype' must be ScalarType?, not {t}"
    return f"argument '{a.name}' has no place in a scan (its arguments: {', '.join(FAMILY_ARGS)})"


def _args_why(ins) -> Optional[str]:
    if not ins or ins[0].name != "self":
        return "a scan's first argument is 'self'"
    for a in ins:
        why = _arg_why(a)
        if why:
            return why
    if not any(a.name == "dim" for a in ins):
        return "a scan needs argument 'dim'"
    return None


def check_structured(nf: NativeFunction) -> Optional[str]:
    """Why a `meta: scan` entry cannot be the family's structured entry, or None."""
    name = nf.name
    if nf.reduce_rule is None:
        return f"{name}: a `meta: scan` entry needs 'scan' (its kind: {', '.join(KINDS)})"
    why = _args_why(nf.func.non_out_arguments)
    if why:
        return f"{name}: {why}"
    kind = nf.reduce_rule[0]
    n, want = len(nf.func.out_arguments), 2 if kind in TWO else 1
    if n != want:
        return f"{name}: scan kind '{kind}' has {want} result{'s' if want > 1 else ''}, not {n} out= arguments"
    return None


def check_delegate(nf: NativeFunction, target: NativeFunction) -> Optional[str]:
    """Why nf's arguments cannot be mapped onto its structured scan entry, or None."""
    ds, ts = nf.func, target.func
    tn = ts.full_name
    why = _args_why(ds.non_out_arguments)
    if why:
        return why
    t_names = {a.name for a in ts.non_out_arguments}
    for a in ds.non_out_arguments:
        if a.name not in t_names:
            return f"argument '{a.name}' has no place in {tn}"
    nt = len(ts.out_arguments)
    if ds.kind in ("out", "functional"):
        return results_why(nf, target)
    if nt != 1:
        return f"an in-place entry cannot delegate to {tn}, which has {nt} results"
    return None


def results_why(nf: NativeFunction, target: NativeFunction) -> Optional[str]:
    """Why an out= or functional delegate's results do not match its structured entry's
    out= arguments (a family's rule: codegen/reduction.py uses it too), or None."""
    ds, tn, nt = nf.func, target.func.full_name, len(target.func.out_arguments)
    if ds.kind == "out":
        if len(ds.out_arguments) != nt:
            return f"it has {len(ds.out_arguments)} out= arguments, {tn} has {nt}"
    elif len(ds.returns) != nt or any(r.type.base != "Tensor" or r.type.is_list for r in ds.returns):
        return f"a functional delegate of {tn} returns {nt} Tensor{'s' if nt > 1 else ''}"
    return None


def kernel_params(nf: NativeFunction) -> List[str]:
    return ["ops_scan *s"]


def kernel_signature(nf: NativeFunction) -> Tuple:
    return ("scan",)


def lookup_kernel(target: NativeFunction, b, op: str, ptr: bool) -> None:
    """The glue's `_fn`: the structured entry's kernel for `_dev`, or the no-kernel error
    (returned as NULL by a pointer-returning form).  The reduction family's glue too."""
    ftype = cnames.kernel_fn_type(target)
    b(f"{ftype} _fn = ({ftype})ops_dispatch_lookup({cnames.op_id(target)}, _dev);")
    if ptr:
        b.block("if (OPS_UNLIKELY(_fn == NULL)) {", [f'ops_dispatch_no_kernel("{op}", _dev);', "return NULL;"])
    else:
        b("if (OPS_UNLIKELY(_fn == NULL))")
        b(f'    return ops_dispatch_no_kernel("{op}", _dev);')


def glue(nf: NativeFunction, b, op: str, ptr: bool, st_declared: bool) -> None:
    """Step 3 of the glue of a scan entry (docs/codegen.md): the kernel of its structured
    entry, the meta, the kernel, the finish.  `_dev` is self's device."""
    s = nf.func
    target = nf.reduce_target
    kind = target.reduce_rule[0]
    names = {a.name for a in s.arguments}
    lookup_kernel(target, b, op, ptr)
    dtype = "dtype" if "dtype" in names else "OPS_DTYPE_NONE"
    inplace = s.kind == "inplace"
    results = ["NULL", "NULL"]
    if s.kind == "out":
        outs = [a.name for a in s.out_arguments] + ["NULL"] * (2 - len(s.out_arguments))
    elif inplace:
        outs = ["self", "NULL"]
    else:
        outs = ["NULL", "NULL"]
        if ptr:
            results = ["&_result", "NULL"]
        else:
            ps = [n for _, n, _ in cnames.out_params(s)]
            results = ps + ["NULL"] * (2 - len(ps))
    if ptr:
        b("ops_tensor *_result = NULL;")
    if not st_declared:
        b("ops_status _st;")
    # the meta allocates on self's device and the kernel runs there: it is current for
    # the three steps
    b("const int _guard = _dev.type == OPS_CPU ? -1 : ops_device_guard_enter(_dev);")
    b("ops_scan _s;")
    b(f'_st = scan_family_meta(&_s, "{op}", {KINDS[kind]}, self, dim, {dtype}, {outs[0]}, {outs[1]}, '
      f'{"true" if inplace else "false"});')
    b("if (OPS_LIKELY(_st == OPS_OK))")
    b(f"    _st = scan_family_finish(&_s, _fn(&_s), {outs[0]}, {outs[1]}, {results[0]}, {results[1]});")
    b("if (_guard >= 0)")
    b("    ops_device_guard_exit(_dev, _guard);")
    b("return _result;" if ptr else "return _st;")

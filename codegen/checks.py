"""`check:`, an op's argument check declared once on its structured entry
(docs/codegen.md "Argument checks").

    - func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
      structured: True
      meta: binary
      check: ops_check_add
      dispatch: ...

names a device-neutral C function (kernels/elementwise_check.c holds the elementwise
ones) that the generated glue calls once the meta has built the iterator and the
declared dtypes (`dtypes:`) have been checked, and before the kernel runs, so no
backend repeats it.  Its signature is the kernel's with a read-only iterator:

    ops_status ops_check_add(const ops_iter *it, const ops_tensor *self, const ops_tensor *other,
                             ops_scalar alpha);

(the entry's non-out arguments with their C types; a delegate's Scalar that the glue
wraps arrives as the Tensor the kernel gets).  The prototype is generated beside the
kernels' (ops_kernels_<stem of the file defining it>.h), so a definition that drifts
from the schema fails to compile.  The delegates (functional, in-place, Scalar
overloads) run their structured entry's check.

On a plain `dispatch:` entry the check takes no iterator but every argument of the
entry, out= included (an out= form may check its out= tensors first, as its kernel
did), and runs BEFORE the glue's declared-dtype check (`dtypes: {of: ...}`,
codegen/dtypes.py): it holds the argument checks (sizes, geometry, a probability) that
the op makes before it looks at the dtype, moved out of the kernel, so the glue can
refuse an undeclared dtype and a user still sees the errors in the order PyTorch (and
the kernel before) gave them.

Rules (errors with file:line): the value is a C identifier; the key sits on the
entry with the kernel, not a delegate; a name used by several entries has one signature
(and is the check of structured entries only, or of plain ones only); it is no public
function's or kernel's name; and (with the kernel check) a kernel source defines it.
"""

import re
from typing import Dict, List, Sequence, Tuple

from .model_types import Errors, Loc, NativeFunction, _Fail
from .grammar import _IDENT
from .yaml_input import scalar_str


def parse(path: str, nf: NativeFunction, key: Tuple[Loc, object], errors: Errors) -> None:
    """The `check:` key of one entry (run once its other keys are read)."""
    kl, v = key
    name = nf.func.full_name
    fn = scalar_str(path, v, errors, "'check'").strip()
    if not re.match(rf"^{_IDENT}$", fn):
        errors.add(kl, f"{name}: check '{fn}' is not a C identifier")
        raise _Fail()
    if nf.structured_delegate is not None:
        errors.add(kl, f"{name}: check belongs on '{nf.structured_delegate}', the entry with the kernel; its "
                       "delegates run it")
        raise _Fail()
    nf.check = fn


def _check_arguments(nf: NativeFunction):
    """What the check takes besides a structured entry's iterator: the non-out arguments
    (structured), or every argument, out= included (plain)."""
    return nf.func.non_out_arguments if nf.structured else nf.func.arguments


def _signature(nf: NativeFunction) -> Tuple:
    return (nf.structured,) + tuple((a.type, a.is_write) for a in _check_arguments(nf))


def validate(functions: Sequence[NativeFunction], public: Dict[str, NativeFunction],
             kernels: Dict[str, tuple], errors: Errors) -> None:
    """Across entries: one signature per check name, and no clash with a public
    function or a kernel (whose prototypes would conflict)."""
    seen: Dict[str, NativeFunction] = {}
    for nf in functions:
        if nf.check is None:
            continue
        kl = nf.key_locs["check"]
        if nf.check in public:
            errors.add(kl, f"{nf.name}: check '{nf.check}' has the name of a public function")
            continue
        if nf.check in kernels:
            errors.add(kl, f"{nf.name}: check '{nf.check}' has the name of a kernel (of "
                           f"'{kernels[nf.check][0].name}', line {kernels[nf.check][0].loc.line})")
            continue
        first = seen.setdefault(nf.check, nf)
        if first is not nf and first.structured != nf.structured:
            kind = "structured" if first.structured else "plain"
            errors.add(kl, f"{nf.name}: check '{nf.check}' is also the check of '{first.name}' (line "
                           f"{first.loc.line}), a {kind} entry: a structured entry's check takes the "
                           "iterator, a plain entry's does not")
        elif first is not nf and _signature(first) != _signature(nf):
            errors.add(kl, f"{nf.name}: check '{nf.check}' is also the check of '{first.name}' (line "
                           f"{first.loc.line}), whose arguments differ")


def names(functions: Sequence[NativeFunction]) -> List[str]:
    """Every check function the schema names, sorted."""
    return sorted({nf.check for nf in functions if nf.check is not None})


def check_defined(model, sources: Sequence[str]) -> None:
    """Every check must be defined in a kernel source (it is device-neutral: always built)."""
    from .kernel_scan import defined_functions
    found = defined_functions(sources, names(model.functions))
    errors = Errors()
    for nf in model.functions:
        if nf.check is not None and nf.check not in found:
            errors.add(nf.key_locs["check"], f"{nf.name}: check '{nf.check}' is not defined in any kernel "
                                             f"source ({len(sources)} scanned)")
    errors.raise_if_any()


def prototype(nf: NativeFunction) -> str:
    """`ops_status ops_check_add(const ops_iter *it, const ops_tensor *self, ...)`; a plain
    entry's without the iterator."""
    from . import cnames  # (cnames imports the model, which imports this module)
    ps = ["const ops_iter *it"] if nf.structured else []
    ps += [cnames.decl(cnames.c_type(a), a.name) for a in _check_arguments(nf)]
    return f"ops_status {nf.check}({cnames.param_list(ps)})"


def add_prototype(nf: NativeFunction, plan, per: dict, seen: set) -> None:
    """gen_kernels_h: the entry's check prototype into the header shard of the file that
    defines it (`per`: shard -> the entry's declarations there; None: the umbrella)."""
    if nf.check is None or nf.check in seen:
        return
    seen.add(nf.check)
    decl = {"key": "check", "prototype": prototype(nf)}
    for s in plan.kernel_shards.get(nf.check) or [None]:
        per.setdefault(s, []).append(decl)


def glue_headers(plan, entries: Sequence[NativeFunction]) -> List[str]:
    """The kernel header shards a glue file needs for the checks its entries call."""
    hs = set()
    for nf in entries:
        c = nf.kernel_entry.check
        if c is None:
            continue
        where = plan.kernel_shards.get(c)
        if where:
            hs.update(f"ops_kernels_{s}.h" for s in where)
        else:
            hs.add("ops_kernels.h")
    return sorted(hs)


def glue_call(target: NativeFunction, op: str, ftype: str, kargs: Sequence[str]) -> List[str]:
    """The glue's kernel call with the check before it (inside the block that runs when
    the meta and the dtype check passed): a device without a kernel is reported first,
    as when the kernel ran the check itself."""
    from . import cnames
    args = ", ".join(kargs)
    lookup = f"    {ftype} _fn = ({ftype})ops_dispatch_lookup({cnames.op_id(target)}, _it.device);"
    if target.check is None:
        return [lookup, f'    _st = _fn != NULL ? _fn(&_it, {args}) : ops_dispatch_no_kernel("{op}", _it.device);']
    return [lookup,
            f'    _st = _fn != NULL ? {target.check}(&_it, {args}) : ops_dispatch_no_kernel("{op}", _it.device);',
            "    if (OPS_LIKELY(_st == OPS_OK))",
            f"        _st = _fn(&_it, {args});"]


def plain_glue_call(nf: NativeFunction, err_ret: str) -> List[str]:
    """A plain entry's check in its glue: after the argument, device and out= checks, before
    the declared-dtype check and the kernel (the op's own argument errors come first)."""
    if nf.check is None:
        return []
    args = ", ".join(a.name for a in _check_arguments(nf))
    ret = "_cst" if err_ret == "_st" else err_ret
    return ["{",
            f"    const ops_status _cst = {nf.check}({args});",
            "    if (OPS_UNLIKELY(_cst != OPS_OK))",
            f"        return {ret};",
            "}"]

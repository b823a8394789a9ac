"""The entries of native_functions.yaml into a Model (load_model); name suggestions;
the conformance files attached to their entries.

Part of the model (codegen/model.py re-exports it)."""

import dataclasses
import difflib
import glob
import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

import yaml

from . import checks
from . import dtypes as dtypes_mod
from . import reduction, scan
from .model_types import (
    COMPOSITE_KEY, DISPATCH_KEYS, Errors, FunctionSchema, ITER_MAX_INPUTS, ITER_MAX_STRS, Loc,
    META_FAMILIES, Model, NativeFunction, NativeFunctionsGroup, SchemaError, Type, _Fail, _excerpt)
from .grammar import GrammarError, _IDENT, _NAME_RE, check_kind, parse_schema
from .yaml_input import (
    ENTRY_KEYS, OUT_CHECK_KEYS, _TAG_BOOL, _str_list, compose, mapping_items, node_loc, read_text,
    scalar_str)


# ---- entries ------------------------------------------------------------------


def _parse_out_checks(path: str, nf: NativeFunction, key: Tuple[Loc, Any], errors: Errors) -> None:
    """`out_checks: {no_overlap: [self], no_partial_overlap: [index], dtype: self}` on an
    out= entry (or, without dtype, on an in-place one: the rules of its self): the names
    must be the entry's Tensor arguments (not its outs, not an in-place self)."""
    kl, v = key
    name = nf.func.full_name
    kind = nf.func.kind
    if kind not in ("out", "inplace"):
        errors.add(kl, f"{name}: 'out_checks' belongs on an out= or in-place entry")
        raise _Fail()
    items = mapping_items(path, v, errors, "'out_checks'")
    if items is None:
        raise _Fail()
    if kind == "out" and len(nf.func.out_arguments) != 1:
        errors.add(kl, f"{name}: 'out_checks' needs exactly one out= argument")
        raise _Fail()
    # (an in-place entry's written tensor is self: its rules name the other arguments)
    tensors = {a.name for a in nf.func.non_out_arguments if (a.type.is_tensor or a.type.is_tensor_list)
               and not (kind == "inplace" and a.is_write)}
    for k, ikl, iv in items:
        if k not in OUT_CHECK_KEYS:
            errors.add(ikl, f"{name}: unknown out_checks key '{k}' (known: {', '.join(OUT_CHECK_KEYS)})")
            raise _Fail()
        names = _str_list(path, iv, errors, f"'out_checks: {k}'")
        for n in names:
            if n not in tensors:
                errors.add(ikl, f"{name}: out_checks {k} names '{n}', which is not a Tensor argument")
                raise _Fail()
        if k == "dtype":
            if kind == "inplace":
                errors.add(ikl, f"{name}: out_checks dtype is for out= entries (in place, self is the result)")
                raise _Fail()
            if len(names) != 1 or not any(a.name == names[0] and a.type.is_tensor for a in nf.func.arguments):
                errors.add(ikl, f"{name}: out_checks dtype names one Tensor argument")
                raise _Fail()
            nf.out_dtype_of = names[0]
        elif k == "no_overlap":
            nf.out_no_overlap = tuple(names)
        else:
            nf.out_no_partial_overlap = tuple(names)


def _parse_entry(path: str, loader: Any, node: Any, index: int, errors: Errors,
                 failed: set) -> Optional[NativeFunction]:
    items = mapping_items(path, node, errors, "an entry")
    if items is None:
        return None
    keys = {k: (kl, v) for k, kl, v in items}
    for k, kl, _ in items:
        if k == "conformance":
            errors.add(kl, "'conformance' is not a key of the schema: the metadata goes into "
                           "ops/conformance/<family>.yaml, under the entry's name.overload (docs/conformance.md)")
            raise _Fail()
        if k not in ENTRY_KEYS:
            errors.add(kl, f"unknown key '{k}' (known: {', '.join(ENTRY_KEYS)})")
            raise _Fail()
    if "func" not in keys:
        errors.add(node_loc(path, node), "entry has no 'func' key")
        raise _Fail()
    floc, fnode = keys["func"]
    text = " ".join(scalar_str(path, fnode, errors, "'func'").split())
    try:
        schema = parse_schema(text)
        check_kind(schema)
    except GrammarError as e:
        m = _NAME_RE.match(text.split("(", 1)[0].strip())
        if m:
            failed.add(m.group(0))
        errors.add(floc, f"{m.group(0) if m else _excerpt(text)}: {e}")
        raise _Fail()

    try:
        return _entry_keys(path, loader, keys, items, schema, text, floc, index, errors)
    except _Fail:
        failed.add(schema.full_name)  # its delegates are not reported again
        raise


def _entry_keys(path: str, loader: Any, keys: Dict[str, Tuple[Loc, Any]], items: List,
                schema: FunctionSchema, text: str, floc: Loc, index: int,
                errors: Errors) -> NativeFunction:
    nf = NativeFunction(func=schema, schema_text=text, loc=floc, index=index,
                        key_locs={k: kl for k, kl, _ in items})
    name = schema.full_name

    if "structured" in keys:
        kl, v = keys["structured"]
        if not isinstance(v, yaml.ScalarNode) or v.tag != _TAG_BOOL:
            errors.add(kl, f"{name}: 'structured' must be True or False")
            raise _Fail()
        nf.structured = loader.construct_object(v)
    if "meta" in keys:
        kl, v = keys["meta"]
        nf.meta = scalar_str(path, v, errors, "'meta'")
        if nf.meta not in META_FAMILIES and not reduction.is_family(nf.meta):
            errors.add(kl, f"{name}: unknown meta family '{nf.meta}' (known: "
                           f"{', '.join(META_FAMILIES + reduction.FAMILIES)})")
            raise _Fail()
    if "reduce" in keys:
        kl, v = keys["reduce"]
        try:
            nf.reduce_rule = reduction.parse_rule(loader.construct_object(v, deep=True), name)
        except ValueError as e:
            errors.add(kl, str(e))
            raise _Fail()
        if nf.meta != "reduction":
            errors.add(kl, f"{name}: 'reduce' is the rule of a `meta: reduction` entry")
            raise _Fail()
    if "scan" in keys:  # (codegen/scan.py)
        kl, v = keys["scan"]
        try:
            nf.reduce_rule = scan.parse_rule(loader.construct_object(v, deep=True), name)
        except ValueError as e:
            errors.add(kl, str(e))
            raise _Fail()
        if nf.meta != scan.FAMILY:
            errors.add(kl, f"{name}: 'scan' is the rule of a `meta: scan` entry")
            raise _Fail()
    if "structured_delegate" in keys:
        kl, v = keys["structured_delegate"]
        nf.structured_delegate = scalar_str(path, v, errors, "'structured_delegate'").strip()
    if "dispatch" in keys:
        kl, v = keys["dispatch"]
        ditems = mapping_items(path, v, errors, f"{name}: 'dispatch'")
        if ditems is None:
            raise _Fail()
        if not ditems:
            errors.add(kl, f"{name}: 'dispatch' is empty")
            raise _Fail()
        for dks, dkl, dv in ditems:
            # `CPU, CUDA: sum_out`: one device-neutral kernel for several devices (its
            # per-device loops are reached through dispatch stubs, docs/backends.md)
            dkeys = [k.strip() for k in str(dks).split(",")]
            for dk in dkeys:
                if dk not in DISPATCH_KEYS:
                    errors.add(dkl, f"{name}: unknown dispatch key '{dk}' (known: {', '.join(DISPATCH_KEYS)})")
                    raise _Fail()
                if dk in nf.dispatch or dkeys.count(dk) > 1:
                    errors.add(dkl, f"{name}: dispatch key '{dk}' is given twice")
                    raise _Fail()
            if len(dkeys) > 1 and COMPOSITE_KEY in dkeys:
                errors.add(dkl, f"{name}: '{COMPOSITE_KEY}' is every device already; it does not combine "
                                "with other keys")
                raise _Fail()
            kname = scalar_str(path, dv, errors, f"kernel name for '{dks}'").strip()
            if not re.match(rf"^{_IDENT}$", kname):
                errors.add(dkl, f"{name}: kernel name '{kname}' is not a C identifier")
                raise _Fail()
            for dk in dkeys:
                nf.dispatch[dk] = kname
                nf.dispatch_locs[dk] = dkl
    if "variants" in keys:
        kl, v = keys["variants"]
        vs = _str_list(path, v, errors, "'variants'")
        for x in vs:
            if x not in ("function", "method"):
                errors.add(kl, f"{name}: unknown variant '{x}' (known: function, method)")
                raise _Fail()
        if len(set(vs)) != len(vs):
            errors.add(kl, f"{name}: a variant is listed twice")
            raise _Fail()
        nf.variants = tuple(x for x in ("function", "method") if x in vs)
    if "device_check" in keys:
        kl, v = keys["device_check"]
        dc = scalar_str(path, v, errors, "'device_check'").strip()
        if dc not in ("NoCheck", "ExactSame"):
            errors.add(kl, f"{name}: device_check must be NoCheck or ExactSame, not '{dc}'")
            raise _Fail()
        nf.device_check = dc != "NoCheck"
    if "tags" in keys:
        nf.tags = tuple(_str_list(path, keys["tags"][1], errors, "'tags'"))
    if "out_checks" in keys:
        _parse_out_checks(path, nf, keys["out_checks"], errors)
    if "dtypes" in keys:
        kl, v = keys["dtypes"]
        try:
            nf.dtypes = dtypes_mod.parse(loader.construct_object(v, deep=True), f"{name}: dtypes")
            dtypes_mod.check_of(nf, f"{name}: dtypes")
        except ValueError as e:
            errors.add(kl, str(e))
            raise _Fail()
    if "check" in keys:
        checks.parse(path, nf, keys["check"], errors)

    # Per-entry structure rules.
    if nf.structured:
        sl = keys["structured"][0]
        if schema.kind != "out":
            errors.add(sl, f"{name}: 'structured: True' belongs on an out= entry")
            raise _Fail()
        if nf.meta is None:
            errors.add(sl, f"{name}: a structured entry needs 'meta'")
            raise _Fail()
        if not nf.dispatch:
            errors.add(sl, f"{name}: a structured entry needs 'dispatch'")
            raise _Fail()
        if nf.structured_delegate is not None:
            errors.add(keys["structured_delegate"][0], f"{name}: a structured entry cannot delegate")
            raise _Fail()
        if reduction.is_family(nf.meta):
            why = reduction.check_structured(nf)
            if why is not None:
                errors.add(keys["meta"][0], why)
                raise _Fail()
            nf.reduce_target = nf
        elif len(schema.out_arguments) != 1:
            errors.add(floc, f"{name}: a structured entry has exactly one out= argument")
            raise _Fail()
        ins = schema.non_out_arguments if nf.reduce_target is None else []
        if any(a.name == "it" for a in ins):
            errors.add(floc, f"{name}: argument name 'it' is the iterator's in a structured kernel")
            raise _Fail()
        if any(a.type.is_tensor_list for a in ins):
            errors.add(floc, f"{name}: a structured entry cannot take Tensor[] (the iterator takes tensors)")
            raise _Fail()
        nt = sum(1 for a in ins if a.type.is_tensor)
        ns = sum(1 for a in ins if a.type.is_scalar)
        nstr = sum(1 for a in ins if a.type.base == "str")
        if nt > ITER_MAX_INPUTS or ns > ITER_MAX_INPUTS or nstr > ITER_MAX_STRS:
            errors.add(floc, f"{name}: the iterator takes at most {ITER_MAX_INPUTS} tensor, "
                             f"{ITER_MAX_INPUTS} Scalar and {ITER_MAX_STRS} str inputs")
            raise _Fail()
    elif nf.meta is not None:
        errors.add(keys["meta"][0], f"{name}: 'meta' needs 'structured: True'")
        raise _Fail()
    has_d, has_sd = bool(nf.dispatch), nf.structured_delegate is not None
    if has_d == has_sd:
        which = "both" if has_d else "neither"
        errors.add(floc, f"{name}: an entry needs exactly one of 'dispatch' and "
                         f"'structured_delegate' (it has {which})")
        raise _Fail()
    return nf


def _args_match(delegate: NativeFunction, target: NativeFunction) -> Optional[str]:
    """Why the delegate's arguments do not line up with its target's, or None."""
    ds, ts = delegate.func, target.func
    d_in, t_in = ds.non_out_arguments, ts.non_out_arguments
    if len(d_in) != len(t_in):
        return (f"it takes {len(d_in)} non-out arguments, {ts.full_name} takes {len(t_in)}")
    for d, t in zip(d_in, t_in):
        if d.name != t.name:
            return f"argument '{d.name}' stands where {ts.full_name} has '{t.name}'"
        if d.type == t.type:
            continue
        wrap_ok = (d.type.base == "Scalar" and t.type.is_tensor and d.type.optional == t.type.optional)
        if not wrap_ok:
            return f"argument '{d.name}' is {d.type} where {ts.full_name} has {t.type}"
    if ds.kind == "out" and len(ds.out_arguments) != len(ts.out_arguments):
        return f"it has {len(ds.out_arguments)} out= arguments, {ts.full_name} has {len(ts.out_arguments)}"
    if ds.kind == "functional":
        if len(ds.returns) != 1 or ds.returns[0].type != Type("Tensor"):
            return "a functional delegate returns one Tensor"
    return None


def _kernel_signature(nf: NativeFunction) -> Tuple:
    """What determines a kernel's C prototype (docs/codegen.md "Kernel signatures")."""
    s = nf.func
    if nf.reduce_target is not None:
        return reduction.kernel_signature(nf)
    if nf.structured:
        return ("iter", tuple((a.type, a.is_write) for a in s.non_out_arguments))
    return ("plain", tuple((a.type, a.is_write) for a in s.arguments),
            tuple(r.type for r in s.returns), s.kind)


def load_model(path: str, text: Optional[str] = None,
               conformance: Optional[Sequence[str]] = None) -> Model:
    """Parse and validate native_functions.yaml, then attach the conformance files
    (`conformance`; None: conformance_files(path), the ones beside it).  Raises SchemaError."""
    if text is None:
        text = read_text(path)
    loader, root = compose(path, text)
    try:
        m = _build_model(path, loader, root)
    finally:
        loader.dispose()
    load_conformance(m, conformance_files(path) if conformance is None else conformance)
    return m


# ---- names -------------------------------------------------------------------


def suggest(name: str, candidates: Sequence[str], preferred: Sequence[str] = ()) -> str:
    """' (did you mean copysign.Tensor?)' for a name written without its overload or
    misspelt, or ''.  `preferred` (a subset of candidates: the entries that can stand
    there) is searched first."""
    pools = [list(preferred), list(candidates)] if preferred else [list(candidates)]
    for pool in pools:
        # the op's own overloads first: `copysign` for copysign.Tensor, `add_` for add_.Tensor
        base = name.split(".", 1)[0]
        same = [c for c in pool if c.split(".", 1)[0] == base and c != name]
        hits = same if 0 < len(same) <= 3 else difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
        if hits:
            return " (did you mean " + (hits[0] if len(hits) == 1 else
                                        ", ".join(hits[:-1]) + " or " + hits[-1]) + "?)"
    return ""


# ---- conformance files ---------------------------------------------------------


def conformance_files(native_path: str) -> List[str]:
    """The conformance files beside a schema: <its folder>/conformance/*.yaml, sorted."""
    d = os.path.join(os.path.dirname(native_path) or ".", "conformance")
    return sorted(glob.glob(os.path.join(glob.escape(d), "*.yaml")))


def load_conformance(m: Model, paths: Sequence[str]) -> None:
    """Attach the conformance files to the entries of m: each file is a mapping from an
    entry's name (name.overload, exactly as its `func:`) to that entry's metadata, which
    codegen/conformance.py validates.  A key that names no entry (with a suggestion), a
    name given twice (in one file or two), or a file that is not such a mapping is a
    SchemaError with file:line; all of them are reported."""
    errors = Errors()
    seen: Dict[str, Loc] = {}
    names = [nf.name for nf in m.functions]
    owners = [nf.name for nf in m.functions if nf.dispatch]
    m.conformance_paths = [os.path.normpath(p) for p in paths]
    for path in m.conformance_paths:
        try:
            loader, root = compose(path, read_text(path))
        except SchemaError as e:
            errors.extend(path, e.messages)
            continue
        try:
            if root is None:  # only comments: a family with no entries yet
                continue
            items = mapping_items(path, root, errors, "a conformance file (entry name -> metadata)")
            for key, kl, v in items or ():
                nf = m.by_name.get(key)
                if nf is None:
                    errors.add(kl, f"'{key}' is not an entry of {os.path.basename(m.path)}"
                                   + suggest(key, names, owners))
                    continue
                first = seen.get(key)
                if first is not None:
                    errors.add(kl, f"second metadata for '{key}' (first at {first})")
                    continue
                seen[key] = kl
                nf.conformance = loader.construct_object(v, deep=True)
                nf.has_conformance = True
                nf.conformance_loc = kl
                if isinstance(v, yaml.MappingNode):
                    nf.conformance_key_locs = {k.value: node_loc(path, k) for k, _ in v.value
                                               if isinstance(k, yaml.ScalarNode)}
        finally:
            loader.dispose()
    errors.raise_if_any()


def _build_model(path: str, loader: Any, root: Any) -> Model:
    errors = Errors()
    if root is None:
        raise SchemaError([f"{path}:1: no operators declared"])
    if not isinstance(root, yaml.SequenceNode):
        raise SchemaError([f"{node_loc(path, root)}: the file must be a list of entries"])
    functions: List[NativeFunction] = []
    failed: set = set()  # names of entries already reported
    for i, n in enumerate(root.value):
        try:
            nf = _parse_entry(path, loader, n, i, errors, failed)
        except _Fail:
            nf = None
        if nf is not None:
            functions.append(nf)
    if not root.value:
        errors.add(node_loc(path, root), "no operators declared")

    plain = {nf.func.name for nf in functions if not nf.func.overload}
    for nf in functions:
        if nf.func.overload == "Tensor" and nf.func.name in plain:
            nf.func = dataclasses.replace(nf.func, tensor_suffix=True)
    by_name: Dict[str, NativeFunction] = {}
    by_c: Dict[str, NativeFunction] = {}
    good: List[NativeFunction] = []
    for nf in functions:
        first = by_name.get(nf.name)
        if first is not None:
            errors.add(nf.loc, f"duplicate overload '{nf.name}' (first on line {first.loc.line})")
            continue
        if nf.name in failed:  # a broken entry of the same name came first
            continue
        first = by_c.get(nf.c_name)
        if first is not None:
            errors.add(nf.loc, f"'{nf.name}' and '{first.name}' (line {first.loc.line}) both "
                               f"have the C name {nf.c_name}")
            failed.add(nf.name)
            continue
        by_name[nf.name] = nf
        by_c[nf.c_name] = nf
        good.append(nf)
    functions = good

    for nf in functions:
        if nf.structured_delegate is None:
            continue
        dl = nf.key_locs["structured_delegate"]
        target = by_name.get(nf.structured_delegate)
        if target is None and nf.structured_delegate in failed:
            continue
        if target is None:
            errors.add(dl, f"{nf.name}: structured_delegate '{nf.structured_delegate}' names no entry")
            continue
        if not target.structured:
            errors.add(dl, f"{nf.name}: structured_delegate '{target.name}' is not structured "
                           f"(line {target.loc.line})")
            continue
        if nf.dtypes is not None:
            errors.add(nf.key_locs["dtypes"], f"{nf.name}: dtypes belong on '{target.name}' (line "
                                              f"{target.loc.line}), the entry with the kernel; its "
                                              "delegates accept what it accepts")
            continue
        if target.reduce_target is not None:
            why = reduction.check_delegate(nf, target)
            if why is not None:
                errors.add(dl, f"{nf.name}: its arguments do not map onto structured_delegate '{target.name}' "
                               f"(line {target.loc.line}): {why}")
                continue
            nf.reduce_target = target
            continue
        why = _args_match(nf, target)
        if why is not None:
            errors.add(dl, f"{nf.name}: arguments do not match structured_delegate '{target.name}': {why}")
            continue
        nf.delegate = target

    kernels: Dict[str, Tuple[NativeFunction, str, Tuple]] = {}
    for nf in functions:
        for key, k in nf.dispatch.items():
            sig = _kernel_signature(nf)
            if k in by_c:
                errors.add(nf.dispatch_locs[key], f"{nf.name}: kernel '{k}' has the name of a public function")
                continue
            prev = kernels.setdefault(k, (nf, key, sig))
            if prev[2] != sig:
                errors.add(nf.dispatch_locs[key], f"{nf.name}: kernel '{k}' is also the kernel of "
                                                  f"'{prev[0].name}' (line {prev[0].loc.line}), whose "
                                                  "kernel signature differs")
    checks.validate(functions, by_c, kernels, errors)

    groups: Dict[Tuple, NativeFunctionsGroup] = {}
    for nf in functions:
        key = nf.func.signature_key
        g = groups.get(key)
        if g is None:
            g = groups[key] = NativeFunctionsGroup(nf.func.base_name)
        slot = {"functional": "functional", "inplace": "inplace", "out": "out"}[nf.kind]
        prev = getattr(g, slot)
        if prev is not None:
            errors.add(nf.loc, f"'{nf.name}' and '{prev.name}' (line {prev.loc.line}) are both the "
                               f"{nf.kind} form of one signature")
            continue
        setattr(g, slot, nf)
        nf.group = g

    errors.raise_if_any()
    return Model(path=path, functions=functions, groups=list(groups.values()), by_name=by_name)

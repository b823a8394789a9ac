"""ops/derivatives.yaml: backward formulas, checked against the schema model.

Each entry names a schema of native_functions.yaml (the full schema string, as in
PyTorch) and maps argument names to formulas written in terms of ops.  Formulas are
parsed with Python's `ast`: every call names a known op or a helper, every
identifier is an argument, grad/grads/result, a named return or a literal.  Nothing
is emitted yet (the autograd generator will read these objects); errors are errors.
"""

import ast
import dataclasses
import math
from typing import Dict, List, Optional, Tuple

import yaml

from .model import (INT64_MAX, Errors, GrammarError, Loc, Model, NativeFunction, SchemaError, _excerpt, compose,
                    mapping_items, node_loc, parse_schema, read_text, scalar_str, suggest, _Fail)

# Calls that are not ops: backward helpers (prefix match, as PyTorch's helpers are
# families: reduce_to, reduce_to_shape, not_implemented, zeros_like, ...), and the
# helpers of runtime/autograd/ (engine and backward/) listed in gen_autograd.RUNTIME_HELPERS.
HELPER_PREFIXES = ("reduce_to", "sum_to", "not_implemented", "zeros_like", "ones_like",
                   "full_like", "empty_like", "maybe_multiply", "handle_r_to_c", "grad_for",
                   "scalar_to_tensor", "wrap_scalar")


def _runtime_helpers():
    from .gen_autograd import RUNTIME_HELPERS  # late: gen_autograd builds on this module's output
    return RUNTIME_HELPERS


# Tensor accessors a formula may call as methods (`self.sizes()`) or read (`self.dtype`).
ACCESSORS = frozenset(("sizes", "strides", "size", "dim", "numel", "scalar_type", "dtype",
                       "device", "options", "is_floating_point", "defined"))

# Whole-formula keywords: the input is not differentiable / derived automatically.
FORMULA_KEYWORDS = frozenset(("non_differentiable", "auto_element_wise", "auto_linear"))

# Bounds on a formula (the real ones are under 600 characters and 20 levels deep).
MAX_FORMULA_CHARS = 4096
MAX_FORMULA_DEPTH = 100

# Keys of an entry besides argument names.
SPECIAL_KEYS = ("name", "result", "output_differentiability", "non_differentiable")

_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call,
                  ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Tuple, ast.List,
                  ast.keyword, ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
                  ast.IfExp, ast.Slice)


@dataclasses.dataclass
class Formula:
    text: str
    tree: ast.Expression
    loc: Loc


@dataclasses.dataclass(eq=False)
class Derivative:
    func: NativeFunction
    loc: Loc
    formulas: Dict[str, Formula]          # input name (or "result") -> formula
    output_differentiability: Optional[List[bool]] = None
    non_differentiable: Tuple[str, ...] = ()


def _check_formula(text: str, loc: Loc, nf: NativeFunction, model_ops: frozenset,
                   forward: bool, errors: Errors) -> Optional[Formula]:
    name = nf.name
    if len(text) > MAX_FORMULA_CHARS:
        errors.add(loc, f"{name}: a formula of {len(text)} characters (the limit is {MAX_FORMULA_CHARS})")
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        errors.add(loc, f"{name}: cannot parse formula '{_excerpt(text)}': {e.msg}")
        return None
    except (RecursionError, MemoryError, ValueError):  # Python's own parser limits
        errors.add(loc, f"{name}: formula '{_excerpt(text)}' is nested too deeply to parse")
        return None
    # The translation to C (gen_autograd) recurses once per level: bound the depth
    # without recursing here, and keep every literal in the C type it becomes.
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_FORMULA_DEPTH:
            errors.add(loc, f"{name}: formula '{_excerpt(text)}' nests more than {MAX_FORMULA_DEPTH} levels deep")
            return None
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            v = node.value
            if isinstance(v, int) and not -INT64_MAX <= v <= INT64_MAX:
                errors.add(loc, f"{name}: an integer constant does not fit in int64 in formula "
                                f"'{_excerpt(text)}'")
                return None
            if isinstance(v, float) and math.isinf(v):
                errors.add(loc, f"{name}: constant out of the range of a double in formula '{_excerpt(text)}'")
                return None
        stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))
    args = {a.name for a in nf.func.arguments}
    allowed = set(args) | {"grad", "grads", "result", "grad_input_mask"}
    allowed |= {r.name for r in nf.func.returns if r.name}
    allowed |= {f"result{i}" for i in range(len(nf.func.returns))}
    if forward:  # forward-mode formulas see tangents and primals of the inputs
        allowed |= {f"{a}_t" for a in args} | {f"{a}_p" for a in args}

    def bad(msg: str) -> None:
        errors.add(loc, f"{name}: {msg} in formula '{_excerpt(text)}'")

    ok = True
    callee_names = set()
    attr_names = set()
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            bad(f"unsupported syntax ({type(node).__name__})")
            return None
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                callee_names.add(id(f))
                if not (f.id in model_ops or f.id.startswith(HELPER_PREFIXES) or f.id in _runtime_helpers()):
                    bad(f"'{f.id}' is neither an op of native_functions.yaml nor a helper")
                    ok = False
            elif isinstance(f, ast.Attribute):
                attr_names.add(id(f))
                if not (f.attr in model_ops or f.attr in ACCESSORS):
                    bad(f"method '{f.attr}' is neither an op nor a tensor accessor")
                    ok = False
            else:
                bad("a call must name an op or a helper")
                ok = False
        elif isinstance(node, ast.Attribute) and id(node) not in attr_names:
            if node.attr not in ACCESSORS:
                bad(f"'.{node.attr}' is not a tensor accessor")
                ok = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in callee_names:
            if node.id not in allowed and node.id not in FORMULA_KEYWORDS:
                bad(f"unknown identifier '{node.id}' (not an argument of {name}, grad, grads, "
                    "result or a named return)")
                ok = False
    return Formula(text, tree, loc) if ok else None


def _suggest_entry(model: Model, schema) -> str:
    """' (did you mean copysign.Tensor?)' for a name without its overload (or misspelt):
    the overloads of that name whose arguments are the ones written, else the
    functional entries, else any entry, nearest first."""
    same_args = [nf.name for nf in model.functions
                 if nf.func.name == schema.name and nf.func.arguments == schema.arguments]
    if same_args:
        return suggest(schema.full_name, same_args)
    functional = [nf.name for nf in model.functions if nf.kind == "functional"]
    return suggest(schema.full_name, [nf.name for nf in model.functions], functional)


def load_derivatives(path: str, model: Model, text: Optional[str] = None) -> List[Derivative]:
    """Parse and check derivatives.yaml against the model.  Raises SchemaError."""
    if text is None:
        text = read_text(path)
    loader, root = compose(path, text)
    try:
        return _build(path, loader, root, model)
    finally:
        loader.dispose()


def _build(path: str, loader, root, model: Model) -> List[Derivative]:
    errors = Errors()
    if root is None:
        return []
    if not isinstance(root, yaml.SequenceNode):
        raise SchemaError([f"{node_loc(path, root)}: the file must be a list of entries"])
    ops = model.op_names
    out: List[Derivative] = []
    seen: Dict[str, Loc] = {}
    for node in root.value:
        items = mapping_items(path, node, errors, "a derivatives entry")
        if items is None:
            continue
        keys = {k: (kl, v) for k, kl, v in items}
        if "name" not in keys:
            errors.add(node_loc(path, node), "entry has no 'name' key")
            continue
        nloc, nnode = keys["name"]
        try:
            text = " ".join(scalar_str(path, nnode, errors, "'name'").split())
        except _Fail:
            continue
        try:
            schema = parse_schema(text)
        except GrammarError as e:
            errors.add(nloc, f"{text}: {e}")
            continue
        nf = model.by_name.get(schema.full_name)
        if nf is None:
            errors.add(nloc, f"'{schema.full_name}' is not an entry of native_functions.yaml"
                             + _suggest_entry(model, schema))
            continue
        if schema != nf.func:
            errors.add(nloc, f"'{text}' does not match the schema in native_functions.yaml "
                             f"(line {nf.loc.line}): '{nf.func}'")
            continue
        if nf.name in seen:
            errors.add(nloc, f"second entry for '{nf.name}' (first on line {seen[nf.name].line})")
            continue
        seen[nf.name] = nloc
        d = Derivative(func=nf, loc=nloc, formulas={})
        args = {a.name: a for a in nf.func.arguments}
        for k, kl, v in items:
            if k == "name":
                continue
            if k == "output_differentiability":
                if not isinstance(v, yaml.SequenceNode) or not all(
                        isinstance(x, yaml.ScalarNode) and x.tag == "tag:yaml.org,2002:bool" for x in v.value):
                    errors.add(kl, f"{nf.name}: output_differentiability must be a list of True/False")
                    continue
                if len(v.value) != len(nf.func.returns):
                    errors.add(kl, f"{nf.name}: output_differentiability has {len(v.value)} entries, "
                                   f"the op has {len(nf.func.returns)} returns")
                    continue
                d.output_differentiability = [loader.construct_object(x) for x in v.value]
                continue
            if k == "non_differentiable":
                if not isinstance(v, yaml.SequenceNode):
                    errors.add(kl, f"{nf.name}: non_differentiable must be a list of argument names")
                    continue
                names = []
                for x in v.value:
                    if not isinstance(x, yaml.ScalarNode) or x.value not in args:
                        errors.add(node_loc(path, x), f"{nf.name}: non_differentiable names "
                                                      f"'{getattr(x, 'value', '?')}', not an argument")
                        continue
                    names.append(x.value)
                d.non_differentiable = tuple(names)
                continue
            if not isinstance(v, yaml.ScalarNode) or v.tag != "tag:yaml.org,2002:str":
                errors.add(kl, f"{nf.name}: the formula for '{k}' must be a string")
                continue
            if k != "result":
                bad = False
                for target in [s.strip() for s in k.split(",")]:
                    a = args.get(target)
                    if a is None:
                        errors.add(kl, f"{nf.name}: '{target}' is not an argument of {nf.name}")
                        bad = True
                    elif a.type.base != "Tensor":
                        errors.add(kl, f"{nf.name}: '{target}' is a {a.type}, not a differentiable Tensor")
                        bad = True
                if bad:
                    continue
            f = _check_formula(v.value, kl, nf, ops, k == "result", errors)
            if f is not None:
                d.formulas[k] = f
        out.append(d)
    errors.raise_if_any()
    return out

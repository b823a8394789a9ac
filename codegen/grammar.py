"""The schema grammar: `name.overload(args) -> returns` into a FunctionSchema,
defaults validated against their C types.

Part of the model (codegen/model.py re-exports it)."""

import math
import re
from typing import Any, List, Optional, Tuple

from .model_types import (
    INT64_MAX, INT64_MIN,
    Annotation, Argument, BASE_TYPES, C_KEYWORDS, DTYPE_NAMES, FunctionSchema, MAX_LIST_SIZE,
    MEMORY_FORMAT_NAMES, RETURN_BASES, Return, Type, _ALLOWED_TYPES, _excerpt)


# ---- schema grammar --------------------------------------------------------

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME_RE = re.compile(rf"^({_IDENT})(?:\.({_IDENT}))?$")
_ARG_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_TYPE_RE = re.compile(
    r"^(?P<base>[A-Za-z]+)"
    r"(?:\((?P<alias>[a-z])(?P<write>!)?\))?"
    r"(?P<opt1>\?)?"
    r"(?P<list>\[(?P<size>[0-9]*)\])?"
    r"(?P<opt2>\?)?$")
_INT_RE = re.compile(r"^[-+]?[0-9]+$")
_FLOAT_RE = re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?$|^[-+]?inf$")
_STR_RE = re.compile(r"""^(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')$""")
_DEVICE_RE = re.compile(r"^(?:cpu|cuda(?::[0-9]+)?)$")


class GrammarError(Exception):
    pass


def _split_top(text: str, sep: str = ",") -> List[str]:
    """Split on sep outside brackets, parentheses and quotes."""
    parts, depth, quote, cur = [], 0, None, []
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            cur.append(c)
        elif c in "([":
            depth += 1
            cur.append(c)
        elif c in ")]":
            depth -= 1
            if depth < 0:
                raise GrammarError(f"unbalanced '{c}'")
            cur.append(c)
        elif c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if quote or depth:
        raise GrammarError("unbalanced brackets or quotes")
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _parse_type(text: str, what: str) -> Tuple[Type, Optional[Annotation]]:
    m = _TYPE_RE.match(text)
    if not m:
        raise GrammarError(f"cannot parse type '{_excerpt(text)}' of {what}")
    base = m.group("base")
    if base not in BASE_TYPES:
        raise GrammarError(f"unknown type '{_excerpt(base)}' of {what} (known: {', '.join(BASE_TYPES)})")
    is_list = m.group("list") is not None
    elem_optional = bool(m.group("opt1")) and is_list
    if elem_optional and base != "Tensor":
        raise GrammarError(f"unsupported type '{text}' of {what}: only Tensor?[] lists may hold None")
    optional = bool((m.group("opt1") and not is_list) or m.group("opt2"))
    if elem_optional and optional:
        raise GrammarError(f"unsupported type '{text}' of {what}: a Tensor?[] list cannot itself be optional")
    size = None
    if is_list and m.group("size"):
        if len(m.group("size")) > 3 or not 1 <= int(m.group("size")) <= MAX_LIST_SIZE:
            raise GrammarError(f"bad list size in '{text}' of {what} (1 to {MAX_LIST_SIZE})")
        size = int(m.group("size"))
        if base not in ("int", "SymInt", "bool"):
            raise GrammarError(f"unsupported type '{text}' of {what}: only int and bool lists may have a fixed size")
    if (base, is_list, optional) not in _ALLOWED_TYPES:
        raise GrammarError(f"unsupported type '{text}' of {what}: no C mapping in docs/codegen.md")
    ann = None
    if m.group("alias"):
        if base != "Tensor":
            raise GrammarError(f"alias annotation on non-Tensor type '{text}' of {what}")
        ann = Annotation(m.group("alias"), bool(m.group("write")))
        if ann.is_write and is_list:
            raise GrammarError(f"unsupported type '{text}' of {what}: a Tensor list cannot be written")
    return Type(base, optional, is_list, size, elem_optional), ann


def _parse_default(t: Type, text: str, name: str) -> Any:
    """Parse a default literal and check it against the type; returns the value."""
    def bad(expect: str) -> GrammarError:
        return GrammarError(f"default '{_excerpt(text)}' of argument '{name}' is not {expect} (type {t})")

    if text == "None":
        if not t.optional:
            raise bad("valid: None needs an optional type")
        return None
    if t.is_list:
        if t.base == "Tensor":
            raise bad("allowed: Tensor[] arguments take no default")
        if t.base == "bool":
            return _bool_list_default(t, text, bad)
        if _INT_RE.match(text):  # PyTorch's int[2] stride=1: one value for every element
            return [_int64(text, bad)] * (t.size or 1)
        if not (text.startswith("[") and text.endswith("]")):
            raise bad("an int list")
        inner = text[1:-1].strip()
        items = [s.strip() for s in inner.split(",")] if inner else []
        if not all(_INT_RE.match(s) for s in items):
            raise bad("an int list")
        if len(items) > MAX_LIST_SIZE:
            raise bad(f"a list of at most {MAX_LIST_SIZE} ints")
        if t.size is not None and len(items) != t.size:
            raise bad(f"a list of {t.size} ints")
        return [_int64(s, bad) for s in items]
    b = t.base
    if b == "Tensor":
        raise bad("allowed: a Tensor default can only be None")
    if b in ("int", "SymInt"):
        if not _INT_RE.match(text):
            raise bad("an int")
        return _int64(text, bad)
    if b == "float":
        if not _FLOAT_RE.match(text):
            raise bad("a float")
        return _double(text, bad)
    if b == "bool":
        if text not in ("True", "False"):
            raise bad("a bool (True or False)")
        return text == "True"
    if b == "Scalar":
        if text in ("True", "False"):
            return text == "True"
        if _INT_RE.match(text):
            return _int64(text, bad)
        if _FLOAT_RE.match(text):
            return _double(text, bad)
        raise bad("a number")
    if b == "str":
        if not _STR_RE.match(text):
            raise bad("a quoted string")
        return text[1:-1]
    if b == "ScalarType":
        if text not in DTYPE_NAMES:
            raise bad(f"a dtype ({', '.join(DTYPE_NAMES)})")
        return text
    if b == "MemoryFormat":
        if text not in MEMORY_FORMAT_NAMES:
            raise bad(f"a memory format ({', '.join(MEMORY_FORMAT_NAMES)})")
        return text
    if b == "Device":
        if not _STR_RE.match(text) or not _DEVICE_RE.match(text[1:-1]):
            raise bad('a device ("cpu", "cuda", "cuda:N")')
        return text[1:-1]
    raise bad("valid")  # pragma: no cover (every base handled above)


def _bool_list_default(t: Type, text: str, bad: Any) -> List[bool]:
    """A bool[] / bool[N] default: a bracketed list of True/False (PyTorch writes
    `bool[3] output_mask=[True, True, True]`; no bare value, unlike int[N])."""
    if not (text.startswith("[") and text.endswith("]")):
        raise bad("a bool list ([True, False, ...])")
    inner = text[1:-1].strip()
    items = [s.strip() for s in inner.split(",")] if inner else []
    if not all(s in ("True", "False") for s in items):
        raise bad("a bool list ([True, False, ...])")
    if len(items) > MAX_LIST_SIZE:
        raise bad(f"a list of at most {MAX_LIST_SIZE} bools")
    if t.size is not None and len(items) != t.size:
        raise bad(f"a list of {t.size} bools")
    return [s == "True" for s in items]


def _int64(text: str, bad: Any) -> int:
    """An int literal that fits the C type every int default becomes (int64_t)."""
    if len(text.lstrip("+-0")) > 19:  # more digits than any int64: no int() of a huge string
        raise bad("an int64 (it has more than 19 digits)")
    v = int(text)
    if not INT64_MIN <= v <= INT64_MAX:
        raise bad(f"an int64 (range {INT64_MIN} to {INT64_MAX})")
    return v


def _double(text: str, bad: Any) -> float:
    """A float literal a C double holds: overflow to infinity (write inf) and a
    non-zero value rounding to zero are refused."""
    v = float(text)
    if math.isinf(v) and "inf" not in text:
        raise bad("a finite double (it overflows; write inf for infinity)")
    if v == 0.0 and re.search(r"[1-9]", text.split("e")[0].split("E")[0]):
        raise bad("a double (it underflows to 0)")
    return v


def _check_ident(name: str, what: str) -> None:
    if not _ARG_NAME_RE.match(name):
        raise GrammarError(f"bad {what} name '{name}'")
    if name in C_KEYWORDS:
        raise GrammarError(f"{what} name '{name}' is a C keyword")


def _parse_argument(text: str, kwarg_only: bool) -> Argument:
    m = re.match(r"^(\S+)\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*(.+))?$", text)
    if not m:
        raise GrammarError(f"cannot parse argument '{_excerpt(text)}' (expected 'Type name[=default]')")
    type_text, name, default = m.group(1), m.group(2), m.group(3)
    _check_ident(name, "argument")
    t, ann = _parse_type(type_text, f"argument '{name}'")
    value = None
    if default is not None:
        default = default.strip()
        value = _parse_default(t, default, name)
    return Argument(name, t, ann, default, value, kwarg_only)


def _parse_return(text: str) -> Return:
    parts = text.split()
    if len(parts) not in (1, 2):
        raise GrammarError(f"cannot parse return '{_excerpt(text)}'")
    name = parts[1] if len(parts) == 2 else None
    if name is not None:
        _check_ident(name, "return")
    t, ann = _parse_type(parts[0], "a return")
    if (t.base not in RETURN_BASES or t.optional or t.elem_optional
            or (t.is_list and t.base != "Tensor")):
        raise GrammarError(f"unsupported return type '{parts[0]}' (returns are Tensor, Tensor[], bool, int, "
                           "float or Scalar)")
    return Return(name, t, ann)


def parse_schema(text: str) -> FunctionSchema:
    """Parse `name[.overload](args) -> returns` (grammar only; kinds are checked later)."""
    text = " ".join(text.split())
    open_i = text.find("(")
    if open_i < 0:
        raise GrammarError("expected 'name[.overload](args) -> returns'")
    m = _NAME_RE.match(text[:open_i].strip())
    if not m:
        raise GrammarError(f"bad operator name '{_excerpt(text[:open_i].strip())}'")
    name, overload = m.group(1), m.group(2) or ""
    depth, close_i = 0, -1
    for i in range(open_i, len(text)):
        if text[i] in "([":
            depth += 1
        elif text[i] in ")]":
            depth -= 1
            if depth == 0:
                close_i = i
                break
    if close_i < 0:
        raise GrammarError("unbalanced parentheses in the argument list")
    rest = text[close_i + 1:].strip()
    if not rest.startswith("->"):
        raise GrammarError("expected '->' and the returns after the argument list")
    rets_text = rest[2:].strip()
    if not rets_text:
        raise GrammarError("missing returns after '->'")

    args: List[Argument] = []
    inner = text[open_i + 1:close_i].strip()
    kwarg_only = False
    if inner:
        pieces = _split_top(inner)
        for i, piece in enumerate(pieces):
            if not piece:
                raise GrammarError("empty argument")
            if piece == "*":
                if kwarg_only:
                    raise GrammarError("'*' appears twice")
                if i == len(pieces) - 1:
                    raise GrammarError("'*' must be followed by keyword-only arguments")
                kwarg_only = True
                continue
            args.append(_parse_argument(piece, kwarg_only))
    seen = set()
    seen_default = None
    for a in args:
        if a.name in seen:
            raise GrammarError(f"argument '{a.name}' appears twice")
        seen.add(a.name)
        if not a.kwarg_only:
            if a.default is not None:
                seen_default = a.name
            elif seen_default is not None:
                raise GrammarError(f"argument '{a.name}' without a default follows '{seen_default}' which has one")

    if rets_text == "()":
        rets: Tuple[Return, ...] = ()
    elif rets_text.startswith("("):
        if not rets_text.endswith(")"):
            raise GrammarError(f"cannot parse returns '{_excerpt(rets_text)}'")
        rets = tuple(_parse_return(r) for r in _split_top(rets_text[1:-1]))
    else:
        rets = (_parse_return(rets_text),)
        if rets[0].name is not None:
            raise GrammarError("a single return is not named; use '-> (Type name)'")
    s = FunctionSchema(name, overload, tuple(args), rets)
    if any(r.type.is_list for r in rets) and len(rets) != 1:
        raise GrammarError("a Tensor[] return must be the only return")
    names = s.return_names
    if len(set(names)) != len(names):
        raise GrammarError("two returns have the same name")
    if s.kind == "functional":  # the names become C out-parameters
        for n in names:
            if n in seen:
                raise GrammarError(f"return '{n}' has the name of an argument")
    return s


def check_kind(s: FunctionSchema) -> None:
    """The kind rules of docs/codegen.md: in-place, out= and functional shapes."""
    writes = [a for a in s.arguments if a.is_write]
    if s.inplace:
        a0 = s.arguments[0] if s.arguments else None
        if (a0 is None or a0.name != "self" or not a0.is_write or a0.type != Type("Tensor")
                or a0.kwarg_only):
            raise GrammarError(f"in-place op '{s.name}' must take 'Tensor(a!) self' as its first argument")
        if len(writes) > 1:
            raise GrammarError(f"in-place op '{s.name}' writes argument '{writes[1].name}' besides self")
        if len(s.returns) != 1 or s.returns[0].type != Type("Tensor") or s.returns[0].annotation != a0.annotation:
            raise GrammarError(f"in-place op '{s.name}' must return {a0.type_str} (its self)")
        return
    for a in writes:
        if a.kwarg_only and a.type.optional:
            raise GrammarError(f"out= argument '{a.name}' ({a.type_str}) cannot be optional")
    if any(r.type.is_list for r in s.returns) and (s.out_arguments or any(a.is_write for a in s.arguments)):
        raise GrammarError(f"'{s.full_name}' returns Tensor[]: it has no out= form and writes no argument")
    outs = s.out_arguments
    if outs:
        ok = len(s.returns) == len(outs) and all(
            r.type == Type("Tensor") and r.annotation == a.annotation for r, a in zip(s.returns, outs))
        if not ok:
            want = ", ".join(a.type_str for a in outs)
            got = ", ".join(r.type_str for r in s.returns) or "()"
            raise GrammarError(f"out= entry '{s.full_name}' must return its out= arguments in order "
                               f"({want}), not ({got})")
        letters = [a.annotation.alias for a in outs]
        if len(set(letters)) != len(letters):
            raise GrammarError(f"out= arguments of '{s.full_name}' share an alias letter")
        return
    aliases = {a.annotation.alias for a in s.arguments if a.annotation}
    for r in s.returns:
        if r.annotation is not None:
            if r.annotation.is_write:
                raise GrammarError(f"functional '{s.full_name}' returns a written tensor {r.type_str}")
            if r.annotation.alias not in aliases:
                raise GrammarError(f"return {r.type_str} of '{s.full_name}' aliases no argument")

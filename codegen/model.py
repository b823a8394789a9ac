"""The validated model of ops/native_functions.yaml and ops/conformance/*.yaml.

The YAML is composed once with libyaml (yaml.CSafeLoader) so every entry and every
key keeps its line; entries become typed objects (FunctionSchema, Argument, Type,
Return, NativeFunction, NativeFunctionsGroup) that the generators read and never
re-check.  Every rule of docs/codegen.md is enforced here, and a violation is
reported as `file:line: reason` (all of them, in file order), never as a traceback.
The conformance files (one per op family, keyed by entry name) are attached to the
entries they name by load_conformance(); codegen/conformance.py checks their content.
"""

import dataclasses
import difflib
import glob
import math
import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

import yaml

# ---- errors ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Loc:
    path: str
    line: int  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class SchemaError(Exception):
    """One or more `file:line: reason` messages."""

    def __init__(self, messages: Sequence[str]):
        super().__init__("\n".join(messages))
        self.messages = list(messages)


class Errors:
    """Collects errors so one run reports every problem, in file order."""

    def __init__(self) -> None:
        self._items: List[Tuple[str, int, int, str]] = []

    def add(self, loc: Loc, msg: str) -> None:
        self._items.append((loc.path, loc.line, len(self._items), f"{loc}: {msg}"))

    def extend(self, path: str, messages: Sequence[str]) -> None:
        """Messages that already say `file:line` (another file's SchemaError)."""
        for m in messages:
            self._items.append((path, 0, len(self._items), m))

    def __bool__(self) -> bool:
        return bool(self._items)

    def raise_if_any(self) -> None:
        if self._items:
            raise SchemaError([m for _, _, _, m in sorted(self._items)])


class _Fail(Exception):
    """Internal: abandon the current entry (its error is already recorded)."""


# ---- types ----------------------------------------------------------------

BASE_TYPES = ("Tensor", "Scalar", "ScalarType", "Device", "MemoryFormat", "Generator", "int", "SymInt", "float",
              "bool", "str")

# (base, is_list, optional) combinations with a C mapping in docs/codegen.md.
_ALLOWED_TYPES = {
    ("Tensor", False, False), ("Tensor", False, True), ("Tensor", True, False),
    ("Scalar", False, False), ("Scalar", False, True),
    ("ScalarType", False, False), ("ScalarType", False, True),
    ("Device", False, False), ("Device", False, True),
    ("MemoryFormat", False, False), ("MemoryFormat", False, True),
    ("Generator", False, True),
    ("int", False, False), ("int", False, True), ("int", True, False), ("int", True, True),
    ("SymInt", False, False), ("SymInt", False, True), ("SymInt", True, False), ("SymInt", True, True),
    ("float", False, False), ("float", False, True),
    ("bool", False, False), ("bool", False, True),
    ("str", False, False), ("str", False, True),
}

RETURN_BASES = ("Tensor", "bool", "int", "float", "Scalar")

# torch.memory_format names, in ops_memory_format's order (include/libops/ops_base.h).
MEMORY_FORMAT_NAMES = ("preserve_format", "contiguous_format", "channels_last", "channels_last_3d")

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64",
               "float16", "bfloat16", "float32", "float64")

# ops_meta_<family> in runtime/dispatch/ops_iter.h (tests/codegen checks the two agree).
META_FAMILIES = ("binary", "binary_float", "bool_out", "unary", "unary_float", "where", "div_mode", "clamp")

DISPATCH_KEYS = ("CPU", "CUDA", "CompositeExplicitAutograd")
COMPOSITE_KEY = "CompositeExplicitAutograd"

# The longest int[N] / int list default: far above OPS_MAX_DIMS (include/libops/ops_base.h),
# and int[N] stride=1 expands to N values.
MAX_LIST_SIZE = 64
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

# runtime/dispatch/ops_iter.h: OPS_ITER_MAX_INPUTS, and the length of ops_meta_args.strs
ITER_MAX_INPUTS = 4
ITER_MAX_STRS = 2

C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
_Imaginary _Noreturn _Static_assert _Thread_local bool true false NULL
""".split())


@dataclasses.dataclass(frozen=True)
class Type:
    base: str
    optional: bool = False
    is_list: bool = False
    size: Optional[int] = None  # N of int[N]
    elem_optional: bool = False  # Tensor?[]: a list whose elements may be None

    def __str__(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += f"[{self.size}]" if self.size is not None else "[]"
        return s + ("?" if self.optional else "")

    @property
    def is_int(self) -> bool:
        return self.base in ("int", "SymInt")

    @property
    def is_tensor(self) -> bool:
        """Tensor or Tensor? (not a list)."""
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.is_list

    @property
    def is_scalar(self) -> bool:
        """Scalar or Scalar?."""
        return self.base == "Scalar"


@dataclasses.dataclass(frozen=True)
class Annotation:
    alias: str
    is_write: bool

    def __str__(self) -> str:
        return f"({self.alias}{'!' if self.is_write else ''})"


@dataclasses.dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    annotation: Optional[Annotation] = None
    default: Optional[str] = None  # the literal as written
    default_value: Any = None      # parsed (None also for a `None` default)
    kwarg_only: bool = False

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    @property
    def type_str(self) -> str:
        """The type as written in a schema: Tensor(a!), int[2], Scalar?."""
        t = self.type
        s = t.base + (str(self.annotation) if self.annotation else "") + ("?" if t.elem_optional else "")
        if t.is_list:
            s += f"[{t.size}]" if t.size is not None else "[]"
        return s + ("?" if t.optional else "")

    def __str__(self) -> str:
        return f"{self.type_str} {self.name}" + (f"={self.default}" if self.default is not None else "")


@dataclasses.dataclass(frozen=True)
class Return:
    name: Optional[str]
    type: Type
    annotation: Optional[Annotation] = None

    @property
    def type_str(self) -> str:
        return self.type.base + (str(self.annotation) if self.annotation else "") + ("[]" if self.type.is_list else "")

    def __str__(self) -> str:
        return self.type_str + (f" {self.name}" if self.name else "")


@dataclasses.dataclass(frozen=True)
class FunctionSchema:
    name: str       # "add", "add_"
    overload: str   # "Tensor", "" when none
    arguments: Tuple[Argument, ...]
    returns: Tuple[Return, ...]
    # Set by the loader when the op also has an entry with no overload (narrow and
    # narrow.Tensor): then `.Tensor` is spelt in the C name too.
    tensor_suffix: bool = dataclasses.field(default=False, compare=False)

    @property
    def inplace(self) -> bool:
        return self.name.endswith("_") and not self.name.startswith("__")

    @property
    def base_name(self) -> str:
        """The op without its in-place underscore: add_ -> add."""
        return self.name[:-1] if self.inplace else self.name

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def out_arguments(self) -> Tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only and a.is_write)

    @property
    def non_out_arguments(self) -> Tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not (a.kwarg_only and a.is_write))

    @property
    def kind(self) -> str:
        if self.inplace:
            return "inplace"
        if self.out_arguments:
            return "out"
        return "functional"

    @property
    def c_name(self) -> str:
        """docs/codegen.md "Kinds and C names"."""
        s = "ops_" + self.base_name
        if self.overload and (self.overload != "Tensor" or self.tensor_suffix):
            s += "_" + self.overload.lower()
        return s + ("_" if self.inplace else "")

    @property
    def return_names(self) -> Tuple[str, ...]:
        """Names of the returns: as written, else result / result0, result1, ..."""
        n = len(self.returns)
        return tuple(r.name or ("result" if n == 1 else f"result{i}") for i, r in enumerate(self.returns))

    @property
    def signature_key(self) -> Tuple:
        """What the functional, in-place and out= members of a group share."""
        return (self.base_name,
                tuple((str(a.type), a.name) for a in self.non_out_arguments))

    def __str__(self) -> str:
        args: List[str] = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        if len(self.returns) == 1 and self.returns[0].name is None:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{self.full_name}({', '.join(args)}) -> {rets}"


@dataclasses.dataclass(eq=False)
class NativeFunction:
    func: FunctionSchema
    schema_text: str              # the `func:` string as written (normalised spaces)
    loc: Loc                      # line of `func:`
    index: int                    # position in the YAML
    structured: bool = False
    meta: Optional[str] = None
    structured_delegate: Optional[str] = None
    delegate: Optional["NativeFunction"] = None  # resolved structured_delegate
    dispatch: Dict[str, str] = dataclasses.field(default_factory=dict)
    variants: Tuple[str, ...] = ("function",)
    device_check: bool = True     # False for `device_check: NoCheck`
    tags: Tuple[str, ...] = ()
    conformance: Any = None       # from ops/conformance/*.yaml; validated by codegen/conformance.py
    # out= rules checked by the glue before dispatch (`out_checks:`): Tensor arguments the
    # out= tensor (an in-place entry's self) may not share memory with at all, ones it
    # may be only the same view of, and the argument whose dtype out= must have (None:
    # any castable dtype).  An in-place entry without its own rules takes its group's
    # out= entry's (codegen/gen_glue.py).
    out_no_overlap: Tuple[str, ...] = ()
    out_no_partial_overlap: Tuple[str, ...] = ()
    out_dtype_of: Optional[str] = None
    has_conformance: bool = False
    conformance_loc: Optional[Loc] = None              # the line of its key in a conformance file
    conformance_key_locs: Dict[str, Loc] = dataclasses.field(default_factory=dict)  # its keys' lines
    key_locs: Dict[str, Loc] = dataclasses.field(default_factory=dict)
    dispatch_locs: Dict[str, Loc] = dataclasses.field(default_factory=dict)
    group: Optional["NativeFunctionsGroup"] = None

    @property
    def name(self) -> str:
        return self.func.full_name

    @property
    def kind(self) -> str:
        return self.func.kind

    @property
    def c_name(self) -> str:
        return self.func.c_name

    @property
    def is_structured_path(self) -> bool:
        """Generated around a structured out= kernel (the kernel entry itself included)."""
        return self.structured or self.delegate is not None

    @property
    def kernel_entry(self) -> "NativeFunction":
        """The entry whose dispatch-table row this entry calls."""
        return self.delegate if self.delegate is not None else self


@dataclasses.dataclass(eq=False)
class NativeFunctionsGroup:
    """PyTorch's NativeFunctionsGroup: one op's functional, in-place and out= forms."""
    base_name: str
    functional: Optional[NativeFunction] = None
    inplace: Optional[NativeFunction] = None
    out: Optional[NativeFunction] = None

    def members(self) -> List[NativeFunction]:
        return [f for f in (self.functional, self.inplace, self.out) if f is not None]


@dataclasses.dataclass(eq=False)
class Model:
    path: str
    functions: List[NativeFunction]
    groups: List[NativeFunctionsGroup]
    by_name: Dict[str, NativeFunction]
    derivatives: list = dataclasses.field(default_factory=list)
    conformance_paths: List[str] = dataclasses.field(default_factory=list)
    autograd: list = dataclasses.field(default_factory=list)  # gen_autograd.plan
    stubs: list = dataclasses.field(default_factory=list)  # gen_stubs.scan

    @property
    def op_names(self) -> frozenset:
        """Every name a formula may call: add, add_, neg, ..."""
        names = set()
        for f in self.functions:
            names.add(f.func.name)
            names.add(f.func.base_name)
        return frozenset(names)


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
        if base not in ("int", "SymInt"):
            raise GrammarError(f"unsupported type '{text}' of {what}: only int lists may have a fixed size")
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


# ---- YAML ------------------------------------------------------------------

_TAG_STR = "tag:yaml.org,2002:str"
_TAG_BOOL = "tag:yaml.org,2002:bool"
_TAG_INT = "tag:yaml.org,2002:int"
_TAG_FLOAT = "tag:yaml.org,2002:float"
_TAG_NULL = "tag:yaml.org,2002:null"
_TAG_SEQ = "tag:yaml.org,2002:seq"
_TAG_MAP = "tag:yaml.org,2002:map"
_SCALAR_TAGS = frozenset((_TAG_STR, _TAG_BOOL, _TAG_INT, _TAG_FLOAT, _TAG_NULL))

ENTRY_KEYS = ("func", "structured", "meta", "structured_delegate", "dispatch", "variants",
              "device_check", "tags", "out_checks")
OUT_CHECK_KEYS = ("no_overlap", "no_partial_overlap", "dtype")

# Bounds on what the generator reads.  The schema is input a contributor (or a hostile
# patch) writes, so it is refused with `file:line` before anything can grow without
# bound: the real files are 0.3 MB, nest 8 collections deep and hold no string longer
# than 600 characters, so these limits only ever stop a broken or malicious file.
MAX_FILE_BYTES = 4 << 20
MAX_DEPTH = 64            # nested collections (libyaml slows with the square of the depth; the
                          # constructor and the checks of conformance.py recurse per level)
MAX_NODES = 200_000       # scalars and collections in one file (the real one: 40,000)
MAX_SCALAR_CHARS = 1 << 16

# Control characters a YAML escape (\0, \x01, \e, ...) can put into a string: none has
# a meaning in a schema, and they would reach C sources and comments.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def read_text(path: str) -> str:
    """The file's text: at most MAX_FILE_BYTES of UTF-8 (SchemaError otherwise)."""
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise SchemaError([f"{path}:1: the file is larger than {MAX_FILE_BYTES} bytes"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise SchemaError([f"{path}:{line}: not UTF-8 text: byte 0x{data[e.start]:02x} at column {col} "
                           f"({e.reason})"]) from None


def _yaml_fail(path: str, mark: Any, msg: str) -> SchemaError:
    return SchemaError([f"{path}:{mark.line + 1}: {msg}"])


def _check_scalar(path: str, loader: Any, ev: Any, tag: str, explicit: bool) -> None:
    """A scalar's tag must be a JSON-like one, its text bounded and free of control
    characters, and a number must fit the C type it can reach (int64, double)."""
    v = ev.value
    if tag not in _SCALAR_TAGS:
        raise _yaml_fail(path, ev.start_mark, f"YAML tag '{tag}' is not supported (strings, numbers, "
                                              "booleans, null, lists and mappings only)")
    if len(v) > MAX_SCALAR_CHARS:
        raise _yaml_fail(path, ev.start_mark, f"a string of {len(v)} characters (the limit is "
                                              f"{MAX_SCALAR_CHARS})")
    m = _CONTROL_RE.search(v) if ev.style == '"' else None
    if m:
        raise _yaml_fail(path, ev.start_mark, f"control character U+{ord(m.group(0)):04X} in a string")
    if explicit and tag != _TAG_STR and loader.resolve(yaml.ScalarNode, v, (True, False)) != tag:
        # `!!int abc`: the constructor would raise on it later
        raise _yaml_fail(path, ev.start_mark, f"'{_excerpt(v)}' is not a valid {tag.rsplit(':', 1)[1]}")
    if tag == _TAG_INT and len(v) >= 12:  # shorter spellings all fit in int64
        # 0b and 64 binary digits is the longest int64 (and int() refuses 4300 digits)
        x = loader.construct_yaml_int(yaml.ScalarNode(tag, v)) if len(v.replace("_", "")) <= 67 else None
        if x is None or not INT64_MIN <= x <= INT64_MAX:
            raise _yaml_fail(path, ev.start_mark, f"integer {_excerpt(v)} does not fit in int64")
    elif tag == _TAG_FLOAT and ("e" in v or "E" in v or len(v) > 300):  # could overflow
        x = loader.construct_yaml_float(yaml.ScalarNode(tag, v))
        if x in (float("inf"), float("-inf")):
            raise _yaml_fail(path, ev.start_mark, f"number {_excerpt(v)} is out of the range of a double "
                                                  "(write .inf for infinity)")


def _compose_root(path: str, loader: Any) -> Any:
    """Build the node tree from libyaml's events, iteratively (PyYAML's C composer
    recurses once per nesting level and overflows the C stack), refusing anchors and
    aliases (a few lines of aliases expand into gigabytes, or into a cycle) and
    everything past the bounds above, each with the line of the node at fault.  The
    tree is the one yaml.CSafeLoader.get_single_node() builds (same tags and marks)."""
    get = loader.get_event
    resolve = loader.resolve
    resolved: Dict[Tuple[str, Any], str] = {}  # plain scalars repeat: resolve each spelling once
    ScalarEvent, AliasEvent = yaml.ScalarEvent, yaml.AliasEvent
    SequenceStartEvent, SequenceEndEvent, MappingEndEvent = (yaml.SequenceStartEvent, yaml.SequenceEndEvent,
                                                             yaml.MappingEndEvent)
    ScalarNode, SequenceNode, MappingNode = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
    get()  # StreamStartEvent
    if isinstance(get(), yaml.StreamEndEvent):  # else DocumentStartEvent
        return None
    # one [node, pending key, {key: line}] per open collection
    stack: List[list] = []
    root = None
    count = 0
    while True:
        ev = get()
        cls = ev.__class__
        if cls is SequenceEndEvent or cls is MappingEndEvent:
            stack.pop()[0].end_mark = ev.end_mark  # attached to its parent when it started
            continue
        if cls is yaml.DocumentEndEvent:
            break
        if cls is AliasEvent:
            raise _yaml_fail(path, ev.start_mark, f"YAML alias '*{_excerpt(ev.anchor)}': anchors and aliases "
                                                  "are not allowed (write the value out)")
        if ev.anchor is not None:
            raise _yaml_fail(path, ev.start_mark, f"YAML anchor '&{_excerpt(ev.anchor)}': anchors and aliases "
                                                  "are not allowed (write the value out)")
        count += 1
        if count > MAX_NODES:
            raise _yaml_fail(path, ev.start_mark, f"more than {MAX_NODES} YAML values in one file")
        tag = ev.tag
        if cls is ScalarEvent:
            v = ev.value
            explicit = not (tag is None or tag == "!")
            if not explicit:
                k = (v, ev.implicit)
                tag = resolved.get(k)
                if tag is None:
                    tag = resolved[k] = resolve(ScalarNode, v, ev.implicit)
            # control characters can only come from the escapes of a double-quoted string
            if explicit or tag != _TAG_STR or ev.style == '"' or len(v) > MAX_SCALAR_CHARS:
                _check_scalar(path, loader, ev, tag, explicit)
            node = ScalarNode(tag, v, ev.start_mark, ev.end_mark, style=ev.style)
        else:
            kind, want = ((SequenceNode, _TAG_SEQ) if cls is SequenceStartEvent else (MappingNode, _TAG_MAP))
            if tag is None or tag == "!":
                tag = resolve(kind, None, ev.implicit)
            if tag != want:
                raise _yaml_fail(path, ev.start_mark, f"YAML tag '{_excerpt(tag)}' is not supported here (a "
                                                      f"{'list' if want == _TAG_SEQ else 'mapping'} takes none)")
            if len(stack) >= MAX_DEPTH:
                raise _yaml_fail(path, ev.start_mark, f"lists and mappings nested more than {MAX_DEPTH} deep")
            node = kind(tag, [], ev.start_mark, None, flow_style=ev.flow_style)
        if stack:
            top = stack[-1]
            parent = top[0]
            if parent.__class__ is SequenceNode:
                parent.value.append(node)
            elif top[1] is None:
                _check_key(path, top[2], node)
                top[1] = node
            else:
                parent.value.append((top[1], node))
                top[1] = None
        else:
            root = node
        if cls is not ScalarEvent:
            stack.append([node, None, {} if kind is MappingNode else None])
    ev = get()
    if not isinstance(ev, yaml.StreamEndEvent):
        raise _yaml_fail(path, ev.start_mark, "a second YAML document (the file holds one)")
    return root


def _check_key(path: str, seen: Dict[str, int], node: Any) -> None:
    """A mapping key is a string, once per mapping (PyYAML would keep the last silently)."""
    if node.__class__ is not yaml.ScalarNode or node.tag != _TAG_STR:
        raise _yaml_fail(path, node.start_mark, "a mapping key must be a string")
    first = seen.get(node.value)
    if first is not None:
        raise _yaml_fail(path, node.start_mark, f"duplicate key '{_excerpt(node.value)}' (first on line {first})")
    seen[node.value] = node.start_mark.line + 1


def _excerpt(s: str, n: int = 80) -> str:
    """s, cut to n characters for a message."""
    return s if len(s) <= n else s[:n] + f"... ({len(s)} characters)"


def compose(path: str, text: str) -> Tuple[Any, Any]:
    """Compose a YAML document with libyaml; returns (loader, root node or None).
    Every problem is a SchemaError with `file:line`."""
    if len(text) > MAX_FILE_BYTES:
        raise SchemaError([f"{path}:1: the file is larger than {MAX_FILE_BYTES} bytes"])
    loader = yaml.CSafeLoader(text)
    try:
        node = _compose_root(path, loader)
    except yaml.MarkedYAMLError as e:
        loader.dispose()
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise SchemaError([f"{path}:{line}: YAML syntax error: {e.problem or e.context}"]) from None
    except yaml.reader.ReaderError as e:
        loader.dispose()
        # libyaml reports a byte offset into the UTF-8 text
        line = text.encode("utf-8", "surrogatepass")[:e.position].count(b"\n") + 1
        raise SchemaError([f"{path}:{line}: YAML error: {e.reason}"]) from None
    except yaml.YAMLError as e:
        loader.dispose()
        raise SchemaError([f"{path}:1: YAML error: {e}"]) from None
    except SchemaError:
        loader.dispose()
        raise
    return loader, node


def node_loc(path: str, node: Any) -> Loc:
    return Loc(path, node.start_mark.line + 1)


def mapping_items(path: str, node: Any, errors: Errors, what: str) -> Optional[List[Tuple[str, Loc, Any]]]:
    """(key, key line, value node) of a mapping node; None (error recorded) if not a mapping."""
    if not isinstance(node, yaml.MappingNode):
        errors.add(node_loc(path, node), f"{what} must be a mapping")
        return None
    out, seen = [], {}
    for k, v in node.value:
        kl = node_loc(path, k)
        if not isinstance(k, yaml.ScalarNode) or k.tag != _TAG_STR:
            errors.add(kl, f"keys of {what} must be strings")
            return None
        if k.value in seen:
            errors.add(kl, f"duplicate key '{k.value}' (first on line {seen[k.value].line})")
            return None
        seen[k.value] = kl
        out.append((k.value, kl, v))
    return out


def scalar_str(path: str, node: Any, errors: Errors, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.tag != _TAG_STR:
        errors.add(node_loc(path, node), f"{what} must be a string")
        raise _Fail()
    return node.value


def _str_list(path: str, node: Any, errors: Errors, what: str) -> List[str]:
    """`a, b` or a YAML list of strings."""
    if isinstance(node, yaml.SequenceNode):
        return [scalar_str(path, n, errors, what).strip() for n in node.value]
    return [s.strip() for s in scalar_str(path, node, errors, what).split(",")]


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
        if nf.meta not in META_FAMILIES:
            errors.add(kl, f"{name}: unknown meta family '{nf.meta}' (known: {', '.join(META_FAMILIES)})")
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
        if len(schema.out_arguments) != 1:
            errors.add(floc, f"{name}: a structured entry has exactly one out= argument")
            raise _Fail()
        ins = schema.non_out_arguments
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


# ---- kernel definitions ------------------------------------------------------

_STRIP_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


def _blank(m: "re.Match") -> str:
    s = m.group(0)
    if s[0] in "\"'":
        return s[0] + s[0]
    return re.sub(r"[^\n]", " ", s)  # keep line structure


_CALL_RE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_PAREN_RE = re.compile(r"[()]")
_BRACE_RE = re.compile(r"\s*\{")


def definitions_by_source(sources: Sequence[str], names: Sequence[str]) -> Dict[str, set]:
    """Which of `names` each source defines: `name(...) {` outside comments and
    strings.  (Every identifier followed by `(` is looked up in a set: one regex with
    hundreds of alternatives is fifty times slower.)"""
    wanted = set(names)
    out: Dict[str, set] = {}
    for src in sources:
        found: set = set()
        out[src] = found
        if not wanted:
            continue
        with open(src, encoding="utf-8", errors="replace") as f:
            text = _STRIP_RE.sub(_blank, f.read())
        for m in _CALL_RE.finditer(text):
            name = m.group(1)
            if name not in wanted or name in found:
                continue
            depth, end = 0, None
            for p in _PAREN_RE.finditer(text, m.end() - 1):  # to the matching ')'
                depth += 1 if p.group(0) == "(" else -1
                if depth == 0:
                    end = p.end()
                    break
            if end is not None and _BRACE_RE.match(text, end):
                found.add(name)
    return out


def defined_functions(sources: Sequence[str], names: Sequence[str]) -> set:
    """Which of `names` have a C function definition (`name(...) {`) in `sources`."""
    found: set = set()
    for defined in definitions_by_source(sources, names).values():
        found |= defined
    return found


def check_kernels(model: Model, sources: Sequence[str], check_cuda: bool) -> None:
    """Every dispatch kernel must be defined in a kernel source (CUDA ones only when built)."""
    wanted = []
    for nf in model.functions:
        for key, k in nf.dispatch.items():
            if key == "CUDA" and not check_cuda:
                continue
            wanted.append((nf, key, k))
    found = defined_functions(sources, [k for _, _, k in wanted])
    errors = Errors()
    for nf, key, k in wanted:
        if k not in found:
            errors.add(nf.dispatch_locs[key], f"{nf.name}: dispatch kernel '{k}' ({key}) is not defined "
                                              f"in any kernel source ({len(sources)} scanned)")
    errors.raise_if_any()

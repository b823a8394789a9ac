"""Errors with file:line and the typed model: Type, Argument, FunctionSchema,
NativeFunction, NativeFunctionsGroup, Model.

Part of the model (codegen/model.py re-exports it)."""

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import dtypes as dtypes_mod


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


def _excerpt(s: str, n: int = 80) -> str:
    """s, cut to n characters for a message."""
    return s if len(s) <= n else s[:n] + f"... ({len(s)} characters)"



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
    ("bool", False, False), ("bool", False, True), ("bool", True, False),
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
    size: Optional[int] = None  # N of int[N] / bool[N]
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
    def is_bool_list(self) -> bool:
        """bool[] or bool[N]."""
        return self.base == "bool" and self.is_list

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
    # the reduction family (`meta: reduction`, codegen/reduction.py): the structured entry's
    # rule (`reduce:`, (kind, flags)), and on it and its delegates the structured entry
    # whose kernel their glue calls (not `delegate`: an elementwise delegate is another path)
    reduce_rule: Optional[Tuple[str, Tuple[str, ...]]] = None
    reduce_target: Optional["NativeFunction"] = None
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
    # `dtypes:` (codegen/dtypes.py): the input dtypes the kernel entry accepts; None is
    # every dtype (no key).  The glue refuses the others before dispatch.
    dtypes: Optional[dtypes_mod.Dtypes] = None
    # `check:` (codegen/checks.py): the argument check the glue runs before the kernel,
    # on a structured entry; None when it has none.
    check: Optional[str] = None
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

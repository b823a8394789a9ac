"""C spellings of the model: types, names, prototypes (docs/codegen.md tables).

Every generator takes its C types and names from here, so the public header, the
kernel prototypes, the glue and the registry cannot disagree.
"""

from typing import List, Tuple

from .model import Argument, FunctionSchema, NativeFunction, Return


def c_type(a: Argument) -> str:
    """The C parameter type of a schema argument."""
    t = a.type
    if t.base == "Tensor":
        if t.is_list:
            return "ops_tensor_list"
        return "ops_tensor *" if a.is_write else "const ops_tensor *"
    if t.base == "Scalar":
        return "const ops_scalar *" if t.optional else "ops_scalar"
    if t.base == "ScalarType":
        return "ops_dtype"
    if t.base == "Device":
        return "ops_device"
    if t.base == "MemoryFormat":
        return "ops_memory_format"
    if t.base == "Generator":
        return "ops_generator *"
    if t.is_int:
        if t.is_list:
            return "const ops_int_list *" if t.optional else "ops_int_list"
        return "const int64_t *" if t.optional else "int64_t"
    if t.base == "float":
        return "const double *" if t.optional else "double"
    if t.base == "bool":
        if t.is_list:  # bool[] / bool[N] (never optional: codegen/model_types.py)
            return "ops_bool_list"
        return "const bool *" if t.optional else "bool"
    if t.base == "str":
        return "const char *"
    raise AssertionError(f"no C type for {t}")


def c_memory_format(name: str) -> str:
    """`channels_last` -> OPS_CHANNELS_LAST (include/libops/ops_base.h's ops_memory_format)."""
    return f"OPS_{name.upper()}"


def decl(ctype: str, name: str) -> str:
    """`const ops_tensor *self`, `int64_t dim`."""
    return ctype + name if ctype.endswith("*") else f"{ctype} {name}"


def returns_tensor(s: FunctionSchema) -> bool:
    """A functional entry with one Tensor return returns `ops_tensor *`."""
    return (s.kind == "functional" and len(s.returns) == 1 and s.returns[0].type.base == "Tensor"
            and not s.returns[0].type.is_list)


def return_type(s: FunctionSchema) -> str:
    return "ops_tensor *" if returns_tensor(s) else "ops_status"


_RET_PTR = {"Tensor": "ops_tensor **", "bool": "bool *", "int": "int64_t *",
            "float": "double *", "Scalar": "ops_scalar *"}


def out_params(s: FunctionSchema) -> List[Tuple[str, str, Return]]:
    """Trailing out-parameters (C type, name, return) of a functional entry that
    returns several values, a Tensor[] or a non-Tensor (docs/codegen.md "C signature")."""
    if s.kind != "functional" or returns_tensor(s):
        return []
    return [("ops_tensor_vec *" if r.type.is_list else _RET_PTR[r.type.base], n, r)
            for r, n in zip(s.returns, s.return_names)]


def params(s: FunctionSchema) -> List[str]:
    """The public C parameters: arguments in schema order, then out-parameters."""
    ps = [decl(c_type(a), a.name) for a in s.arguments]
    ps += [decl(t, n) for t, n, _ in out_params(s)]
    return ps


def param_list(ps: List[str]) -> str:
    return ", ".join(ps) if ps else "void"


def prototype(s: FunctionSchema, name: str = "") -> str:
    """`ops_tensor *ops_add(const ops_tensor *self, ...)`."""
    return decl(return_type(s), name or s.c_name) + "(" + param_list(params(s)) + ")"


def op_id(nf: NativeFunction) -> str:
    """Enum constant of an entry in the generated op-id enum: OPS_OP_ADD_OUT."""
    return "OPS_OP_" + nf.c_name[len("ops_"):].upper()


def kernel_fn_type(nf: NativeFunction) -> str:
    """Pointer type of an entry's kernels: ops_kernel_fn_add_out."""
    return "ops_kernel_fn_" + nf.c_name[len("ops_"):]


def kernel_params(nf: NativeFunction) -> List[str]:
    """docs/codegen.md "Kernel signatures"."""
    s = nf.func
    if nf.reduce_target is not None and nf.structured:
        from . import reduction  # (it spells its types with this module)
        return reduction.kernel_params(nf)
    if nf.structured:
        return ["ops_iter *it"] + [decl(c_type(a), a.name) for a in s.non_out_arguments]
    return params(s)


def kernel_return_type(nf: NativeFunction) -> str:
    return "ops_status" if nf.structured else return_type(nf.func)


def c_int64(v: int, suffix: bool = False) -> str:
    """An int64_t constant: INT64_MIN has no literal (-9223372036854775808 is the negation
    of a constant too large for any signed type); suffix: wrapped in INT64_C()."""
    if v == -(1 << 63):
        return "INT64_MIN"
    return f"INT64_C({v})" if suffix else str(v)


def c_double(v: float) -> str:
    """A double constant as Python's repr spells it; infinities as INFINITY (math.h)."""
    r = repr(float(v))
    if r in ("inf", "-inf"):
        return "(-INFINITY)" if r.startswith("-") else "INFINITY"
    return r


def c_comment(s: str) -> str:
    """Text safe inside a /* */ comment."""
    return s.replace("*/", "*\\/")


def c_string(s: str) -> str:
    """A C string literal (ASCII; everything else escaped)."""
    out = ['"']
    for i, ch in enumerate(s):
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "?" and s[i + 1:i + 2] == "?":  # -std=c11 has trigraphs
            out.append("\\?")
        elif 32 <= o < 127:
            out.append(ch)
        else:
            for b in ch.encode("utf-8"):
                out.append(f"\\{b:03o}")
    out.append('"')
    return "".join(out)


def c_string_chunks(s: str, width: int = 90) -> List[str]:
    """A long string as several adjacent literals (one per line)."""
    if not s:
        return ['""']
    return [c_string(s[i:i + width]) for i in range(0, len(s), width)]

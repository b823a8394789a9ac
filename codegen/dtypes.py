"""The `dtypes:` key of a schema entry: the one declaration of the input dtypes an op
accepts (docs/codegen.md "Dtypes").

The generated glue refuses any other dtype before dispatch, the kernels dispatch over
the sets generated from it (gen_dtypes_h.py), and the conformance suite tests exactly
these dtypes and expects every other one to be refused (docs/conformance.md).
"""
import dataclasses
import re
from typing import Dict, List, Optional, Sequence, Tuple

# ops_dtype's order (include/libops/ops_base.h), and the OPS_CASE_<NAME> / OPS_<NAME>
# spelling of each in C.
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64")
C_NAMES = {d: d.upper() for d in DTYPES}
INTEGRAL = DTYPES[1:6]
FLOATING = DTYPES[6:]
DTYPE_SETS = {
    "all": DTYPES,
    "numeric": INTEGRAL + FLOATING,
    "floating": FLOATING,
    "integral": INTEGRAL,
    "integral_and_bool": ("bool",) + INTEGRAL,
}
# keys of the mapping form `dtypes: {accept: numeric, message: "...", of: [self, target]}`
MAPPING_KEYS = ("accept", "message", "of")
# meta families whose integral and bool inputs reach the kernel converted to the default
# float dtype, float32 or float64 (runtime/dispatch/meta.c: to_float); div_mode does so
# for rounding_mode=None only, so its kernel sees the declared dtypes and those two.
TO_FLOAT_METAS = ("unary_float", "binary_float")


def parse_set(v, where: str) -> Tuple[str, ...]:
    """A set name, one dtype name, or a non-empty list of dtype names -> dtypes in
    ops_dtype order.  ValueError("<where>: reason") otherwise."""
    if isinstance(v, str):
        if v in DTYPE_SETS:
            return DTYPE_SETS[v]
        if v in DTYPES:
            return (v,)
        raise ValueError(f"{where}: unknown dtype set '{v}' (one of {', '.join(DTYPE_SETS)}, "
                         f"or a list of dtypes: {', '.join(DTYPES)})")
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        bad = [x for x in v if x not in DTYPES]
        if bad:
            raise ValueError(f"{where}: unknown dtype '{bad[0]}' (known: {', '.join(DTYPES)})")
        if len(set(v)) != len(v):
            raise ValueError(f"{where}: a dtype is listed twice")
        return tuple(x for x in DTYPES if x in v)
    raise ValueError(f"{where}: expected a dtype set name ({', '.join(DTYPE_SETS)}) or a list of dtypes")


@dataclasses.dataclass(frozen=True)
class Dtypes:
    """An entry's declaration: the accepted input dtypes, and the text a refusal gives
    after "<op>: " (None: the generic "dtype X is not supported (supported: ...)")."""
    accept: Tuple[str, ...]
    message: Optional[str] = None
    # `of:` (an entry with a plain kernel): the Tensor arguments whose promoted dtype
    # (ops_promote_types, a None skipped) the glue checks before dispatch.  None: the
    # glue does not check a plain entry's declaration (its kernel refuses, through the
    # same set: OPS_DTYPE_MASK_<ENTRY>); a structured entry's meta family decides.
    of: Optional[Tuple[str, ...]] = None

    @property
    def everything(self) -> bool:
        return self.accept == DTYPES


# The placeholders a `message:` may hold: {dtype}, the refused dtype's name ("got:
# {dtype}" -> "got: int64"), which ops_check_dtype_declared (runtime/dispatch/meta.c)
# writes in when it refuses, so a refusal PyTorch words with the dtype needs no kernel.
MESSAGE_PLACEHOLDERS = ("dtype",)


def check_placeholders(msg: str, where: str) -> None:
    """Every `{...}` of a message is a known placeholder, and no brace stands alone
    (ValueError("<where>: reason") otherwise)."""
    rest = msg
    for m in re.finditer(r"\{([^{}]*)\}", msg):
        if m.group(1) not in MESSAGE_PLACEHOLDERS:
            raise ValueError(f"{where}: 'message' has an unknown placeholder '{{{m.group(1)}}}' "
                             f"(known: {', '.join('{' + p + '}' for p in MESSAGE_PLACEHOLDERS)})")
        rest = rest.replace(m.group(0), "", 1)
    if msg.count("{dtype}") > 1:
        raise ValueError(f"{where}: 'message' names {{dtype}} twice (the refusal writes it once)")
    if "{" in rest or "}" in rest:
        raise ValueError(f"{where}: 'message' has an unmatched brace (a placeholder is written "
                         f"{{dtype}})")


def parse(v, where: str) -> Dtypes:
    if isinstance(v, dict):
        unknown = [k for k in v if k not in MAPPING_KEYS]
        if unknown:
            raise ValueError(f"{where}: unknown key '{unknown[0]}' of dtypes (known: {', '.join(MAPPING_KEYS)})")
        if "accept" not in v:
            raise ValueError(f"{where}: dtypes as a mapping needs 'accept'")
        accept = parse_set(v["accept"], where)
        msg = v.get("message")
        if msg is not None and (not isinstance(msg, str) or not msg.strip()):
            raise ValueError(f"{where}: 'message' must be a non-empty string")
        if msg is not None and accept == DTYPES:
            raise ValueError(f"{where}: 'message' is for the refused dtypes, and every dtype is accepted")
        if msg is not None:
            check_placeholders(msg, where)
        of = v.get("of")
        if of is not None:
            if isinstance(of, str):
                of = [of]
            if not (isinstance(of, list) and of and all(isinstance(x, str) for x in of)):
                raise ValueError(f"{where}: 'of' must be a Tensor argument name or a non-empty list of them")
            if len(set(of)) != len(of):
                raise ValueError(f"{where}: 'of' names an argument twice")
            if accept == DTYPES:
                raise ValueError(f"{where}: 'of' says which arguments the glue checks, and every dtype is accepted")
            of = tuple(of)
        return Dtypes(accept, msg, of)
    return Dtypes(parse_set(v, where))


def check_of(nf, where: str) -> None:
    """`of:` names Tensor arguments of a plain entry, and at most one ScalarType argument
    (ValueError otherwise): the glue checks their promoted dtype, or the ScalarType's
    value when given, before the kernel runs (gen_glue.py _plain_dtype_check)."""
    d = nf.dtypes
    if d is None or d.of is None:
        return
    if nf.structured:
        raise ValueError(f"{where}: 'of' is for an entry with a plain kernel; a structured entry's glue "
                         "checks the promoted dtype of its Tensor inputs as its meta family sees them")
    tensors = [a.name for a in nf.func.arguments if a.type.is_tensor]
    # a factory's `ScalarType? dtype`: the result's dtype, when given
    types = [a.name for a in nf.func.arguments if a.type.base == "ScalarType" and not a.type.is_list]
    what = "a Tensor or ScalarType argument" if types else "a Tensor argument"
    for n in d.of:
        if n not in tensors and n not in types:
            raise ValueError(f"{where}: 'of' names '{n}', not {what} of {nf.name} "
                             f"(those: {', '.join(tensors + types) or 'none'})")
    if sum(n in types for n in d.of) > 1:
        raise ValueError(f"{where}: 'of' names two ScalarType arguments; the result has one dtype")


def glue_checked(nf) -> bool:
    """The glue refuses the undeclared dtypes of this entry before its kernel runs."""
    d = nf.dtypes
    if d is None or d.everything:
        return False
    return nf.is_structured_path if d.of is None else True


def kernel_dtypes(accept: Tuple[str, ...], meta: Optional[str]) -> Tuple[str, ...]:
    """The dtypes a structured kernel sees in it->common_dtype when the inputs are of the
    accepted ones: the meta family converts integral and bool inputs to float32 in the
    *_float families (to the default float dtype, float32 or float64; so does div_mode's
    true division)."""
    converted = {"float32", "float64"} if any(d not in FLOATING for d in accept) else set()
    if meta in TO_FLOAT_METAS:
        seen = {d for d in accept if d in FLOATING} | converted
    elif meta == "div_mode":
        seen = set(accept) | converted
    else:
        seen = set(accept)
    return tuple(d for d in DTYPES if d in seen)


def mask_expr(dts: Tuple[str, ...], named_masks: bool = True) -> str:
    """The C mask of a set: OPS_DTYPE_BIT()s (include/libops/ops_base.h), or where one fits
    and named_masks, a named mask of runtime/dispatch/ops_dispatch.h."""
    named = {} if not named_masks else {DTYPE_SETS["all"]: "OPS_MASK_ALL", DTYPE_SETS["numeric"]: "OPS_MASK_NUMERIC",
             DTYPE_SETS["floating"]: "OPS_MASK_FLOATING", DTYPE_SETS["integral"]: "OPS_MASK_INTEGRAL"}
    if dts in named:
        return named[dts]
    return "(" + " | ".join(f"OPS_DTYPE_BIT(OPS_{C_NAMES[d]})" for d in dts) + ")"


# ---- kernels that dispatch over a declaration --------------------------------

_DECLARED_USE_RE = re.compile(r"\b(\w*DECLARED\w*)\s*\(")
# a kernel that checks or dispatches over a set by its mask (a driver converting to a
# compute dtype refuses with ops_fail_dtype(op, dt, OPS_DTYPE_MASK_<ENTRY>))
_MASK_USE_RE = re.compile(r"\bOPS_DTYPE_MASK_(\w+)")
_IDENT_RE = re.compile(r"^[A-Za-z_]\w*$")


def _balanced(text: str, i: int) -> int:
    """Index just past the parenthesis closing the one at text[i]."""
    depth = 0
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def _top_args(s: str) -> List[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return out


def check_kernels(model, sources: Sequence[str], check_cuda: bool) -> None:
    """A kernel that dispatches over declared dtypes (OPS_DISPATCH_DECLARED, or a local
    macro with DECLARED in its name given the entry) must name an entry it is the kernel
    of: exp_out_cpu dispatching over LOG_OUT would accept what log.out declares, not
    what exp.out does.  SchemaError with the source's file:line."""
    from .gen_dtypes_h import macro_name
    from .model import _STRIP_RE, _blank, Errors, Loc

    macros = {macro_name(nf): nf for nf in model.functions if nf.dispatch}
    owners: Dict[str, List] = {}  # kernel name -> the entries it is the kernel of
    for nf in model.functions:
        for key, k in nf.dispatch.items():
            if key == "CUDA" and not check_cuda:
                continue
            owners.setdefault(k, []).append(nf)
    if not owners:
        return
    pat = re.compile(r"\b(" + "|".join(re.escape(k) for k in sorted(owners)) + r")\s*\(")
    errors = Errors()
    for src in sources:
        if not src.endswith((".c", ".cu")):
            continue
        with open(src, encoding="utf-8", errors="replace") as f:
            text = _STRIP_RE.sub(_blank, f.read())
        for m in pat.finditer(text):
            j = _balanced(text, m.end() - 1)
            while j < len(text) and text[j].isspace():
                j += 1
            if j >= len(text) or text[j] != "{":
                continue  # a call or a declaration, not the definition
            end = j
            depth = 0
            while end < len(text):
                if text[end] == "{":
                    depth += 1
                elif text[end] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                end += 1
            body = text[j:end]
            mine = owners[m.group(1)]
            uses = []  # (offset in body, entry macro named)
            for u in _DECLARED_USE_RE.finditer(body):
                close = _balanced(body, u.end() - 1)
                uses += [(u.start(), a) for a in _top_args(body[u.end():close - 1]) if _IDENT_RE.match(a)]
            uses += [(u.start(), u.group(1)) for u in _MASK_USE_RE.finditer(body)]
            for off, a in sorted(uses):
                if a not in macros or any(macros[a] is nf for nf in mine):
                    continue
                line = text.count("\n", 0, j + off) + 1
                want = " or ".join(macro_name(nf) for nf in mine)
                errors.add(Loc(src, line), f"{m.group(1)}, the kernel of {', '.join(nf.name for nf in mine)}, "
                                           f"dispatches over {a}, the dtypes {macros[a].name} declares; "
                                           f"its own are {want}")
    errors.raise_if_any()

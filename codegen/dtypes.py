"""The `dtypes:` key of a schema entry: the one declaration of the input dtypes an op
accepts (docs/codegen.md "Dtypes").

The generated glue refuses any other dtype before dispatch, the kernels dispatch over
the sets generated from it (gen_dtypes_h.py), and the conformance suite tests exactly
these dtypes and expects every other one to be refused (docs/conformance.md).
"""
import dataclasses
from typing import Optional, Tuple

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
# keys of the mapping form `dtypes: {accept: numeric, message: "..."}`
MAPPING_KEYS = ("accept", "message")
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

    @property
    def everything(self) -> bool:
        return self.accept == DTYPES


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
            raise ValueError(f"{where}: dtypes' message must be a non-empty string")
        if msg is not None and accept == DTYPES:
            raise ValueError(f"{where}: dtypes' message is for refused dtypes, and every dtype is accepted")
        return Dtypes(accept, msg)
    return Dtypes(parse_set(v, where))


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


def mask_expr(dts: Tuple[str, ...]) -> str:
    """The C mask of a set, with the named masks of ops_dispatch.h where one fits."""
    named = {DTYPE_SETS["all"]: "OPS_MASK_ALL", DTYPE_SETS["numeric"]: "OPS_MASK_NUMERIC",
             DTYPE_SETS["floating"]: "OPS_MASK_FLOATING", DTYPE_SETS["integral"]: "OPS_MASK_INTEGRAL"}
    if dts in named:
        return named[dts]
    return "(" + " | ".join(f"OPS_DTYPE_BIT(OPS_{C_NAMES[d]})" for d in dts) + ")"

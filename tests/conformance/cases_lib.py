"""Dtypes, PyTorch's type promotion, dtype conversions, the case file's writer and the
input sampling of the conformance cases (tests/conformance/gen_cases.py builds the
cases with them; the layout of the file is read by tests/conformance/cases.c).
"""
from __future__ import annotations

import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from codegen import conformance as conf_mod  # noqa: E402
from codegen.model import MEMORY_FORMAT_NAMES  # noqa: E402


DTYPES = conf_mod.DTYPES
CODE = {d: i for i, d in enumerate(DTYPES)}
NP = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
      "int32": np.int32, "int64": np.int64, "float16": np.float16, "bfloat16": np.float32,
      "float32": np.float32, "float64": np.float64}
ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
            "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
TOL = {"float64": (1e-12, 1e-12), "float32": (1e-5, 1e-6), "float16": (2e-3, 1e-3),
       "bfloat16": (1.6e-2, 1e-2)}

# ivalue tags (include/libops/ops_registry.h)
T_NONE, T_TENSOR, T_TENSOR_LIST, T_SCALAR, T_INT, T_INT_LIST, T_DOUBLE, T_BOOL, T_STR, \
    T_DTYPE, T_DEVICE, T_GENERATOR, T_MEMORY_FORMAT, T_BOOL_LIST = range(14)
# (a `Generator?` argument is always written as None, so the case file never holds
# T_GENERATOR.)

# per-return flags of a value case (tests/conformance/cases.h RET_*)
R_COMPARE, R_LIST = 1, 2

# case flags (tests/conformance/cases.h)
F_VALUES, F_ERROR, F_LAYOUTS, F_VARIANTS = 1, 2, 4, 8
F_ELEMENTWISE, F_RANDOM, F_SIGNED_ZEROS, F_DTYPE_ERROR = 16, 32, 64, 128
F_NO_GRADCHECK = 256
# forms an error case is run in
FORM_BITS = {"functional": 1, "out": 2, "inplace": 4}
NO_DTYPE = 255
DEFAULT_SEED = 20240601
PROPERTY_CASES = 6  # random cases per entry of an elementwise op


def category(d):
    return 0 if d == "bool" else (2 if d in conf_mod.FLOATING else 1)


# ---- PyTorch's type promotion, written independently of the C runtime -------

def promote(a, b):
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    ca, cb = category(a), category(b)
    if ca == 1 and cb == 1:
        if "uint8" in (a, b):
            other = b if a == "uint8" else a
            return "int16" if other == "int8" else other
        return max(a, b, key=DTYPES.index)
    if ca == 2 and cb == 2:
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return max(a, b, key=DTYPES.index)
    return a if ca == 2 else b


def result_type(operands):
    """operands: (kind, dtype) with kind dim / zero / wrapped."""
    groups = {"dim": None, "zero": None, "wrapped": None}
    for kind, d in operands:
        if kind == "wrapped" and d == "float64":
            d = "float32"  # a Python float promotes to the default dtype
        groups[kind] = d if groups[kind] is None else promote(groups[kind], d)

    def combine(higher, lower):
        if higher is None:
            return lower
        if lower is None:
            return higher
        if category(higher) == 2:
            return higher
        if higher == "bool" or category(lower) == 2:
            return promote(higher, lower)
        return higher
    return combine(groups["dim"], combine(groups["zero"], groups["wrapped"]))


# ---- bfloat16 and dtype conversions ------------------------------------------

def bf16_round(x):
    """float32 array -> float32 array of bfloat16 values (round to nearest even)."""
    x = np.array(x, dtype=np.float32, ndmin=1)
    shape = np.shape(x)
    u = x.reshape(-1).view(np.uint32).astype(np.uint64)
    s16 = np.uint64(16)
    r = ((u + np.uint64(0x7FFF) + ((u >> s16) & np.uint64(1))) >> s16) << s16
    out = r.astype(np.uint32).view(np.float32).copy()
    out[np.isnan(x.reshape(-1))] = np.nan
    return out.reshape(shape)


def to_dtype(a, d):
    """Cast an array to dtype d's NumPy representation (bfloat16: rounded float32)."""
    a = np.asarray(a)
    if d == "bfloat16":
        return bf16_round(a.astype(np.float32)).reshape(a.shape)
    if d == "bool":
        return a.astype(np.bool_)
    if category(d) == 1 and a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.trunc(a).astype(np.int64).astype(NP[d])
    with np.errstate(over="ignore"):  # out of range: inf, as the kernels round
        return a.astype(NP[d])


def raw_bytes(a, d):
    a = np.ascontiguousarray(to_dtype(a, d))
    if d == "bfloat16":
        return (a.view(np.uint32) >> 16).astype("<u2").tobytes()
    return a.astype(np.dtype(NP[d]).newbyteorder("<")).tobytes()


# ---- the case file -----------------------------------------------------------
# Layout (little-endian), read by tests/conformance/cases.c:
#   "OPSCASE3" u32 ncases u64 seed, then per case:
#   str label, str name, str overload, u32 flags, u8 dtype (NO_DTYPE: none),
#   f64 rtol, f64 atol, f64 nmse, u32 nargs, nargs ivalues,
#   F_ERROR: str match, u32 forms, u32 nouts, nouts tensors (the out= templates, one per
#            out= argument of the op's out= form; 0 when it has none);
#   else:    u32 nret, then per return (schema order): u8 R_* flags, and a tensor, or
#            (R_LIST) u32 count + count tensors.
# str: u32 length + bytes; tensor: u8 dtype, u8 ndim, i64 sizes[ndim], raw row-major data;
# Tensor[] and Tensor?[] (ivalue tag T_TENSOR_LIST): u32 count, then per element u8 present
# (0: None, a Tensor?[] element) and, when present, a tensor.

class Writer:
    def __init__(self, seed):
        self.cases = []
        self.seed = seed

    @staticmethod
    def s(text):
        b = text.encode()
        return struct.pack("<I", len(b)) + b

    def tensor(self, a, d):
        a = np.asarray(a)
        return (struct.pack("<BB", CODE[d], a.ndim) + struct.pack(f"<{a.ndim}q", *a.shape)
                + raw_bytes(a, d))

    def arg(self, tag, value, dtype=None):
        out = struct.pack("<B", tag)
        if tag == T_TENSOR:
            out += self.tensor(value, dtype)
        elif tag == T_TENSOR_LIST:  # value: [(array, dtype) or None, ...]
            out += struct.pack("<I", len(value))
            for item in value:
                out += struct.pack("<B", 0) if item is None else struct.pack("<B", 1) + self.tensor(*item)
        elif tag == T_SCALAR:
            if isinstance(value, bool) or isinstance(value, np.bool_):
                out += struct.pack("<Bq", 0, int(bool(value)))
            elif isinstance(value, (int, np.integer)):
                out += struct.pack("<Bq", 1, int(value))
            else:
                out += struct.pack("<Bd", 2, float(value))
        elif tag == T_INT:
            out += struct.pack("<q", int(value))
        elif tag == T_INT_LIST:
            out += struct.pack("<I", len(value)) + struct.pack(f"<{len(value)}q", *value)
        elif tag == T_BOOL_LIST:
            out += struct.pack("<I", len(value)) + bytes(int(bool(x)) for x in value)
        elif tag == T_DOUBLE:
            out += struct.pack("<d", float(value))
        elif tag == T_BOOL:
            out += struct.pack("<B", int(bool(value)))
        elif tag == T_STR:
            out += self.s(value)
        elif tag == T_DTYPE:
            out += struct.pack("<i", CODE[value])
        elif tag == T_DEVICE:
            out += struct.pack("<ii", 0, 0)
        elif tag == T_MEMORY_FORMAT:  # ops_memory_format's value: its index in the model's names
            out += struct.pack("<i", MEMORY_FORMAT_NAMES.index(value))
        return out

    def add(self, label, entry, flags, dtype, tol, args, expected=None, exp_dtype=None, error="",
            forms=0, out=None, rets=None):
        """A case.  Its expected results: `rets`, a list of (array or list of arrays, dtype,
        R_* flags) in schema order, or one tensor `expected` of `exp_dtype`.  An error case's
        `out`: the out= templates, a list of (array, dtype), or one (array, dtype)."""
        body = self.s(label) + self.s(entry.func.name) + self.s(entry.func.overload)
        body += struct.pack("<IB", flags, CODE.get(dtype, NO_DTYPE))
        body += struct.pack("<ddd", tol[0], tol[1], tol[2])
        body += struct.pack("<I", len(args)) + b"".join(args)
        if flags & F_ERROR:
            body += self.s(error) + struct.pack("<I", forms)
            outs = [] if out is None else [out] if isinstance(out, tuple) else list(out)
            body += struct.pack("<I", len(outs)) + b"".join(self.tensor(a, d) for a, d in outs)
        else:
            if rets is None:
                rets = [(expected, exp_dtype, R_COMPARE)]
            body += struct.pack("<I", len(rets))
            for value, d, rflags in rets:
                body += struct.pack("<B", rflags)
                if rflags & R_LIST:
                    body += struct.pack("<I", len(value)) + b"".join(self.tensor(a, d) for a in value)
                else:
                    body += self.tensor(value, d)
        self.cases.append(body)

    def bytes(self):
        return (b"OPSCASE3" + struct.pack("<IQ", len(self.cases), self.seed) + b"".join(self.cases))


# ---- sampling ------------------------------------------------------------------

INT_RANGE = {"uint8": (0, 30), "int8": (-10, 10), "int16": (-100, 100), "int32": (-100, 100),
             "int64": (-100, 100)}


class DomainError(ValueError):
    """A `domain:` range with no value of a tested dtype (reported with the entry)."""


def sample(rng, d, shape, domain):
    if d == "bool":
        return rng.random(shape) < 0.5
    if category(d) == 1:
        lo, hi = INT_RANGE[d]
        if isinstance(domain, list):
            lo, hi = max(lo, int(math.ceil(domain[0]))), min(hi, int(math.floor(domain[1])))
            if lo > hi:
                raise DomainError(f"domain {domain} holds no {d} value (its draws stay in {list(INT_RANGE[d])})")
        a = rng.integers(lo, hi + 1, size=shape).astype(NP[d])
        if domain == "nonzero":
            a[a == 0] = 1
        return a
    lo, hi = (-3.0, 3.0) if not isinstance(domain, list) else (float(domain[0]), float(domain[1]))
    a = rng.uniform(lo, hi, size=shape)
    if domain == "nonzero":
        a = np.where(np.abs(a) < 0.25, np.copysign(0.25, a) + a, a)
    return to_dtype(a, d)


def scalar_for(d, domain):
    if d == "bool":
        return True
    if category(d) == 1:
        v = 3
        if isinstance(domain, list):
            v = int(min(max(3, domain[0]), domain[1]))
        return v
    v = 2.5
    if isinstance(domain, list):
        v = float(min(max(2.5, domain[0]), domain[1]))
    return v


def tolerance(c, dt, comp=None):
    """(rtol, atol, nmse) for results of dtype dt (computed in comp)."""
    base = TOL.get(dt, (0.0, 0.0))
    if dt == "float32" and comp in ("float16", "bfloat16"):
        base = TOL[comp]
    t = c.tol.get(dt, base)
    rtol, atol = t[0], t[1]
    # NMSE bound (ggml's metric): every element within rtol gives NMSE <= rtol^2.
    nmse = t[2] if len(t) > 2 else rtol * rtol
    return (rtol, atol, nmse)


ELEMENTWISE_SHAPES = {
    1: [[(4, 5)], [()], [(0, 3)], [(2, 3, 4)]],
    2: [[(4, 5), (4, 5)], [(4, 5), (5,)], [(3, 1), (1, 4)], [(3, 4), ()], [(), ()], [(0, 3), (3,)]],
    3: [[(4, 5), (4, 5), (4, 5)], [(4, 5), (5,), (4, 1)], [(), (), ()], [(2, 3), (3,), ()]],
}
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5])
# With three or more special-fed arguments every combination of a shorter list: still
# each special value against each (NaN, ±inf, ±0 and finite numbers of both signs).
SPECIALS_SHORT = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5])


def special_grid(k):
    """The values of k special-fed arguments, one flat array each: every combination of
    the special values (all pairs for a binary op, so `other = NaN` meets every `self`),
    element i of each array making up combination i."""
    vals = SPECIALS if k <= 2 else SPECIALS_SHORT
    return [g.reshape(-1) for g in np.meshgrid(*([vals] * k), indexing="ij")]
ERROR_SHAPE = (2, 3)  # Tensor arguments of an error case that `shapes:` does not name


def shape_sets(c, tensor_names):
    """The `shapes:` key as lists of shapes in Tensor-argument order."""
    out = []
    for s in c.shapes or []:
        if isinstance(s, dict):
            out.append([tuple(s.get(n, (4, 5))) for n in tensor_names])
        else:
            out.append([tuple(x) for x in s])
    return out


def tensor_spec(spec, d, default_shape=(3, 4)):
    """(shape, dtype, data) of a sample's Tensor value: a shape, a dtype name (an out=
    argument: an empty tensor of that dtype), or {shape, dtype, data} (each optional; `data`
    gives the values, nested lists, and then the shape defaults to the data's)."""
    if isinstance(spec, dict):
        data = spec.get("data")
        shape = spec.get("shape")
        if shape is None:
            shape = list(np.shape(data)) if data is not None else list(default_shape)
        return list(shape), spec.get("dtype", d), data
    if isinstance(spec, str):
        return [0], spec, None
    if spec is None:
        return list(default_shape), d, None
    return list(spec), d, None


def list_item_spec(spec, d):
    """(shape, dtype) of one element of a Tensor[] sample: a shape, or {shape, dtype, data}."""
    shape, dd, _ = tensor_spec(spec, d)
    return shape, dd


def make_tensor(rng, d, shape, domain, data=None):
    """A sample tensor: the given data (cast to d), else values drawn inside domain."""
    if data is not None:
        return to_dtype(np.asarray(data, dtype=np.float64 if d != "bool" else np.bool_).reshape(shape), d)
    return sample(rng, d, tuple(shape), domain)


def list_items(rng, specs, d, domain, base_shape):
    """The elements of a Tensor[] / Tensor?[] sample: (array, dtype), or None for a null
    item.  domain `index`: element k (integral) indexes dim k of base_shape (self's), its
    values drawn from [-size, size - 1]; a bool element is a random mask."""
    items = []
    for k, spec in enumerate(specs):
        if spec is None:
            items.append(None)
            continue
        shape, dd, data = tensor_spec(spec, d)
        dom = domain
        if domain == "index":
            n = base_shape[k] if base_shape is not None and k < len(base_shape) else 1
            dom = [-n, n - 1] if n > 0 else [0, 0]
        items.append((make_tensor(rng, dd, shape, dom, data), dd))
    return items


def random_shapes(rng, n):
    """n broadcast-compatible shapes: a random result shape, each input dropping some
    leading dims and setting some dims to 1."""
    nd = int(rng.integers(0, 5))
    base = [int(rng.integers(1, 6)) for _ in range(nd)]
    if nd and rng.random() < 0.1:
        base[int(rng.integers(0, nd))] = 0
    shapes = []
    for _ in range(n):
        drop = int(rng.integers(0, nd + 1)) if rng.random() < 0.4 else 0
        s = [1 if rng.random() < 0.3 else x for x in base[drop:]]
        shapes.append(tuple(s))
    return shapes


# Reductions whose result dtype is not self's when no dtype= is given (PyTorch's rules):
# integer and bool sums, products and scans accumulate into int64; all/any give bool
# (uint8 for uint8); logsumexp of integers gives the default float dtype; argmax/argmin
# give int64 indices.
INT64_REDUCTIONS = ("sum", "nansum", "prod", "cumsum", "cumprod")


def einsum_dtype(equation, items):
    """einsum's result dtype as PyTorch 1.13 gives it: its sums use sum's default dtype,
    so a bool or integer operand summed over a label (a single operand's contraction
    label, or one that only one operand of several has with a size other than 1) makes
    the result int64; an empty dim anywhere returns zeros of the operands' dtype first."""
    arrs = [np.asarray(x[0]) for x in items]
    dd = items[0][1]
    if category(dd) == 2 or any(0 in a.shape for a in arrs):
        return dd
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    letters = [c for c in lhs if c.isalpha()]
    out = set(rhs if arrow else [c for c in letters if letters.count(c) == 1])
    keep_ell = not arrow or "..." in rhs
    holders = {}  # contraction label -> operands where it is not size 1
    for term, a in zip(terms, arrs):
        labels = []
        for part_i, part in enumerate(term.split("...")):
            if part_i == 1:
                n_ell = a.ndim - len(term.replace("...", ""))
                labels += [("...", k - n_ell) for k in range(n_ell)]  # right-aligned
            labels += list(part)
        for lab, size in zip(labels, a.shape):
            contracted = (lab not in out) if isinstance(lab, str) else not keep_ell
            if contracted:
                holders.setdefault(lab, set())
                if size != 1:
                    holders[lab].add(id(a))
    if len(arrs) == 1:
        return "int64" if holders else dd
    return "int64" if any(len(h) == 1 for h in holders.values()) else dd


def reduction_dtype(base, arrays):
    if "self" not in arrays:
        return None
    sd = arrays["self"][1]
    if base in INT64_REDUCTIONS and category(sd) < 2:
        return "int64"
    if base in ("all", "any"):
        return "uint8" if sd == "uint8" else "bool"
    if base == "logsumexp" and category(sd) < 2:
        return "float32"
    if base in ("argmax", "argmin"):
        return "int64"
    return None

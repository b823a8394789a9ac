#!/usr/bin/env python3
"""Build the NumPy-oracle cases that tests/conformance/runner.c runs.

For every entry of ops/native_functions.yaml that owns or shares a kernel, this script
reads the entry's conformance metadata (ops/conformance/<family>.yaml, docs/conformance.md),
draws seeded inputs for every declared dtype, computes the expected result with NumPy (never
with libops), and writes everything into one binary file.  Undeclared dtypes become
expected-error cases.

    gen_cases.py --yaml ops/native_functions.yaml [--conformance ops/conformance/*.yaml]
                 --out cases.bin [--seed N] [--torch-check]

Besides the value cases (every declared dtype, the default or `shapes:` shapes, special
values, promotion), it writes the `errors:` of the metadata as error cases, and a
property run: a few cases per elementwise entry with random shapes, broadcasts and
dtypes drawn from --seed (fixed by default, so CI is reproducible; printed).

--torch-check (development aid): when PyTorch is installed, also compute every
reference with PyTorch and report where NumPy and PyTorch disagree.
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import struct
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from codegen import conformance as conf_mod  # noqa: E402
from codegen.model import MEMORY_FORMAT_NAMES, SchemaError, load_model  # noqa: E402

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
    T_DTYPE, T_DEVICE, T_GENERATOR, T_MEMORY_FORMAT = range(13)
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


# ---- reference helpers (names usable in `ref:`) ------------------------------

def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(np.asarray(x).dtype)


def _erfc(x):
    return np.vectorize(math.erfc, otypes=[np.float64])(x).astype(np.asarray(x).dtype)


def gelu(x, approximate="none"):
    x = np.asarray(x)
    if approximate == "tanh":
        k = np.sqrt(2.0 / np.pi).astype(x.dtype) if hasattr(np.sqrt(2.0), "astype") else math.sqrt(2 / math.pi)
        return (0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x ** 3)))).astype(x.dtype)
    return (0.5 * x * (1 + _erf(x / np.sqrt(2.0)))).astype(x.dtype)


def sigmoid(x):
    x = np.asarray(x)
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


def silu(x):
    x = np.asarray(x)
    return (x / (1 + np.exp(-x))).astype(x.dtype)


def relu(x):
    x = np.asarray(x)
    # PyTorch's: NaN stays NaN and -0 stays -0 (only what is below zero becomes 0)
    return np.where(x < 0, np.zeros_like(x), x)


def rsqrt(x):
    x = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1 / np.sqrt(x)).astype(x.dtype)


def sign(x):
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x.copy()
    s = np.sign(x)
    if x.dtype.kind == "f":
        s = np.where(np.isnan(x), 0, s).astype(x.dtype)  # PyTorch: sign(nan) = 0
    return s


def frac(x):
    return x - np.trunc(x)


def square(x):
    return np.asarray(x) * np.asarray(x)


def div_mode(a, b, mode):
    if mode is None:
        return a / b
    if mode == "trunc":
        if np.asarray(a).dtype.kind in "iu":
            q = np.abs(a) // np.abs(b)
            return (np.sign(a) * np.sign(b) * q).astype(np.asarray(a).dtype)
        return np.trunc(a / b)
    if np.asarray(a).dtype.kind in "iu":
        return np.floor_divide(a, b)
    return floor_divide_float(np.asarray(a), np.asarray(b))


def floor_divide_float(a, b):
    """Floor division of floats as PyTorch defines it, through the remainder rather than
    NumPy's floor(a / b): an infinite dividend gives NaN, 1 // -inf is -1 (not -0), the
    quotient is rounded to the nearest integer once the remainder is taken out, and a
    zero quotient has the sign of a / b; b == 0 gives a / b."""
    q = a / b
    m = np.fmod(a, b)
    d = (a - m) / b
    d = np.where((m != 0) & ((b < 0) != (m < 0)), d - 1, d)
    f = np.floor(d)
    f = np.where(d - f > 0.5, f + 1, f)
    f = np.where(d == 0, np.copysign(np.zeros_like(q), q), f)
    return np.where(b == 0, q, f).astype(q.dtype)


def shift_left(a, b):
    a = np.asarray(a)
    return np.left_shift(a, np.asarray(b).astype(a.dtype))


def shift_right(a, b):
    a = np.asarray(a)
    return np.right_shift(a, np.asarray(b).astype(a.dtype))


def pow_(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        dt = np.result_type(a, b)
        return np.power(a.astype(np.int64), b.astype(np.int64)).astype(dt)
    return np.power(a, b)


def clamp(x, lo, hi):
    x = np.asarray(x)
    if lo is not None:
        x = np.where(np.isnan(x), x, np.maximum(x, lo)) if x.dtype.kind == "f" else np.maximum(x, lo)
    if hi is not None:
        x = np.where(np.isnan(x), x, np.minimum(x, hi)) if x.dtype.kind == "f" else np.minimum(x, hi)
    return x


def lerp(a, b, w):
    a, b, w = np.asarray(a), np.asarray(b), np.asarray(w)
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w)).astype(np.result_type(a, b))


def nan_to_num(x, nan, posinf, neginf):
    return np.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


def where(c, a, b):
    return np.where(c, a, b)


def unfold(x, dimension, size, step):
    x = np.asarray(x)
    if x.ndim == 0:
        return x.reshape(1)
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dimension)
    idx = [slice(None)] * w.ndim
    idx[dimension] = slice(None, None, step)
    return w[tuple(idx)]


def as_strided(x, size, stride, storage_offset):
    flat = np.ascontiguousarray(x).reshape(-1)
    off = storage_offset or 0
    it = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[off:], shape=tuple(size),
                                           strides=tuple(s * it for s in stride)).copy()


def expand(x, size):
    x = np.asarray(x)
    lead = len(size) - x.ndim
    shape = [s if s != -1 else x.shape[i - lead] for i, s in enumerate(size)]
    return np.broadcast_to(x, shape)


def slice_(x, dim, start, end, step):
    idx = [slice(None)] * np.ndim(x)
    idx[dim] = slice(start, end, step)
    return np.asarray(x)[tuple(idx)]


def narrow(x, dim, start, length):
    n = np.shape(x)[dim]
    start = start + n if start < 0 else start
    return slice_(x, dim, start, start + length, 1)


def squeeze_dims(x, dims):
    x = np.asarray(x)
    dims = tuple(d % max(x.ndim, 1) for d in dims if x.ndim and x.shape[d % x.ndim] == 1)
    return np.squeeze(x, dims) if dims else x


def flatten(x, start_dim=0, end_dim=-1):
    x = np.asarray(x)
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])


def unflatten(x, dim, sizes):
    x = np.asarray(x)
    d = dim % x.ndim
    return x.reshape(x.shape[:d] + tuple(sizes) + x.shape[d + 1:])


HELPERS = {"np": np, "math": math, "gelu": gelu, "sigmoid": sigmoid, "silu": silu, "relu": relu,
           "rsqrt": rsqrt, "sign": sign, "frac": frac, "square": square, "div_mode": div_mode,
           "shift_left": shift_left, "shift_right": shift_right, "pow_": pow_, "clamp": clamp,
           "lerp": lerp, "nan_to_num": nan_to_num, "where": where, "erf": _erf, "erfc": _erfc,
           "unfold": unfold, "as_strided": as_strided, "expand": expand, "slice_": slice_,
           "narrow": narrow, "squeeze_dims": squeeze_dims, "flatten": flatten, "unflatten": unflatten}
assert set(HELPERS) == conf_mod.REF_HELPERS, set(HELPERS) ^ conf_mod.REF_HELPERS


def load_ref_modules():
    """The per-area reference functions: every `ref_*` name of tests/conformance/refs/*.py."""
    import importlib.util
    refs = {}
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "refs")
    for fn in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not fn.endswith(".py") or fn.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"refs_{fn[:-3]}", os.path.join(folder, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name, fn_obj in vars(mod).items():
            if name.startswith(conf_mod.REF_PREFIX) and callable(fn_obj):
                if name in refs:
                    raise SystemExit(f"tests/conformance/refs/{fn}: {name} is defined twice")
                refs[name] = fn_obj
    return refs


HELPERS.update(load_ref_modules())


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


class Gen:
    def __init__(self, model, confs, torch_check, seed):
        self.model = model
        self.confs = confs
        self.seed = seed
        self.w = Writer(seed)
        self.torch = None
        self.mismatches = 0
        if torch_check:
            try:
                import torch  # noqa: F401
                self.torch = torch
            except ImportError:
                print("gen_cases: PyTorch not installed; --torch-check ignored", file=sys.stderr)

    # -- per entry ----------------------------------------------------------------
    def run(self):
        for g in self.model.groups:
            nf = g.functional or g.out or g.inplace
            c = conf_mod.for_entry(self.confs, nf)
            if c is None:
                raise SchemaError([f"{nf.loc}: {nf.name} has no conformance metadata"])
            try:
                if nf.delegate is not None or nf.structured:
                    self.elementwise(nf, c)
                    self.elementwise_samples(nf, c)
                else:
                    self.sampled(nf, c)
                for err in c.errors:
                    if conf_mod.error_applies(err, nf):
                        self.declared_error(nf, c, err)
            except DomainError as e:
                raise SystemExit(f"{c.loc}: {nf.name}: {e}")
        return self.w.bytes()

    @staticmethod
    def forms_of(nf, wanted=conf_mod.FORMS):
        g = nf.group
        bits = 0
        for f in wanted:
            if getattr(g, f) is not None:
                bits |= FORM_BITS[f]
        return bits

    # -- iterator ops -------------------------------------------------------------
    def elementwise(self, nf, c):
        kernel = nf.delegate or nf
        meta = kernel.meta
        args = [a for a in nf.func.arguments if not (a.kwarg_only and a.is_write)]
        tensor_args = [a for a in args if a.type.base == "Tensor"]
        rng = np.random.default_rng(zlib.crc32(nf.name.encode()))
        other_choices = self.arg_choices(nf, c, args)
        n = len([a for a in tensor_args if a.name not in c.fixed_dtypes])
        shapes = (shape_sets(c, [a.name for a in tensor_args]) if c.shapes
                  else ELEMENTWISE_SHAPES.get(len(tensor_args), [[(4, 5)] * len(tensor_args)]))
        for d in DTYPES:
            supported = d in c.dtypes
            for combo in other_choices:
                if not supported:
                    self.error_case(nf, c, rng, d, tensor_args, args, combo, meta)
                    break
                for shp in shapes:
                    self.value_case(nf, c, rng, {a.name: d for a in tensor_args}, tensor_args, args,
                                    combo, meta, shp)
                if c.special and category(d) == 2:
                    self.special_case(nf, c, d, tensor_args, args, combo, meta)
        free = [a for a in tensor_args if a.name not in c.fixed_dtypes]
        promotes = n >= 2 and c.promote and meta in ("binary", "binary_float", "bool_out", "div_mode", "where")
        # mixed dtypes exercise the promotion rules
        if promotes:
            pairs = [("int32", "float32"), ("uint8", "int8"), ("bool", "int64"),
                     ("float16", "float32"), ("int16", "float64"), ("bfloat16", "float16")]
            for da, db in pairs:
                if da in c.dtypes and db in c.dtypes:
                    dts = {free[0].name: da, free[1].name: db}
                    for a in free[2:]:
                        dts[a.name] = da
                    rt = result_type([("dim", x) for x in dts.values()])
                    if rt in c.dtypes:
                        self.value_case(nf, c, rng, dts, tensor_args, args, other_choices[0], meta,
                                        [(3, 4)] * len(tensor_args), label="promotion")
            # a 0-dim float64 tensor does not promote float32 dims; an int64 0-dim does not
            # promote uint8 dims (the result-type groups)
            for dd, dz in (("float32", "float64"), ("uint8", "int64"), ("int32", "float64")):
                if dd in c.dtypes and dz in c.dtypes and len(free) >= 2:
                    dts = {a.name: dd for a in free}
                    dts[free[1].name] = dz
                    shp = [(3, 4) if a.name != free[1].name else () for a in tensor_args]
                    rt = result_type([("dim" if s else "zero", dts.get(a.name, "bool"))
                                      for a, s in zip(tensor_args, shp) if a.name not in c.fixed_dtypes])
                    if rt in c.dtypes:
                        self.value_case(nf, c, rng, dts, tensor_args, args, other_choices[0], meta,
                                        shp, label="zero-dim promotion")
        # the property run: random shapes, broadcasts and dtypes (the runner adds random
        # layouts), seeded by --seed and the entry's name
        if c.property and tensor_args and not c.shapes:
            prng = np.random.default_rng([self.seed, zlib.crc32(nf.name.encode())])
            for _ in range(PROPERTY_CASES):
                d = c.dtypes[int(prng.integers(0, len(c.dtypes)))]
                dts = {a.name: d for a in tensor_args}
                if promotes and prng.random() < 0.35:
                    dts[free[1].name] = c.dtypes[int(prng.integers(0, len(c.dtypes)))]
                combo = other_choices[int(prng.integers(0, len(other_choices)))]
                shp = random_shapes(prng, len(tensor_args))
                self.value_case(nf, c, prng, dts, tensor_args, args, combo, meta, shp, label="random",
                                flags=F_RANDOM)

    def special_case(self, nf, c, d, tensor_args, args, combo, meta):
        """NaN, ±inf, ±0 and a few finite values in every Tensor argument whose dtype
        follows the tested one, every combination of them across those arguments (an
        argument of fixed dtype, where's condition, gets drawn values); its own seed,
        so the drawn cases do not depend on it."""
        special = [a for a in tensor_args if a.name not in c.fixed_dtypes]
        grid = special_grid(len(special))
        n = len(grid[0]) if grid else len(SPECIALS)
        data = {a.name: g for a, g in zip(special, grid)}
        rng = np.random.default_rng([zlib.crc32(nf.name.encode()), 2, CODE[d]])
        self.value_case(nf, c, rng, {a.name: d for a in tensor_args}, tensor_args, args, combo, meta,
                        [(n,)] * len(tensor_args), label="special", data=data)

    def elementwise_samples(self, nf, c):
        """`samples:` of a structured entry: each sample in every declared dtype, run as the
        drawn cases are (same result dtype, reference and families), its tensors of the
        sample's shapes and, where it gives `data:`, of exactly those values (ties, NaN
        or inf in any argument: what the drawn inputs may never hit)."""
        if not c.samples:
            return
        args = [a for a in nf.func.arguments if not (a.kwarg_only and a.is_write)]
        tensor_args = [a for a in args if a.type.base == "Tensor"]
        rng = np.random.default_rng([zlib.crc32(nf.name.encode()), 1])
        base = self.arg_choices(nf, c, args)[0]
        for smp in c.samples:
            combo = dict(base, **{k: v for k, v in smp.items() if k not in {a.name for a in tensor_args}})
            pinned = any(isinstance(smp.get(a.name), dict) and "data" in smp[a.name] for a in tensor_args)
            for d in c.dtypes:
                dts, shp, data = {}, [], {}
                for a in tensor_args:
                    shape, dd, vals = tensor_spec(smp.get(a.name), d)
                    dts[a.name], data[a.name] = dd, vals
                    shp.append(tuple(shape))
                self.value_case(nf, c, rng, dts, tensor_args, args, combo, nf.kernel_entry.meta, shp,
                                label="sample", flags=F_NO_GRADCHECK if pinned else 0, data=data)

    def arg_choices(self, nf, c, args):
        """Cartesian product of the non-Tensor argument values to test."""
        names, values = [], []
        for a in args:
            if a.type.base == "Tensor":
                continue
            names.append(a.name)
            if a.name in c.args:
                values.append(c.args[a.name])
            elif a.default is not None:
                values.append([a.default_value])
            else:
                values.append([None])  # chosen per dtype (Scalars) below
        return [dict(zip(names, v)) for v in itertools.product(*values)] or [{}]

    def compute_dtype(self, meta, dts, shapes, nf, scalars):
        operands = []
        for name, d in dts.items():
            operands.append(("dim" if shapes[name] != () else "zero", d))
        for v in scalars:
            if v is None:
                continue
            operands.append(("wrapped", "bool" if isinstance(v, (bool, np.bool_)) else
                             "int64" if isinstance(v, (int, np.integer)) else "float64"))
        rt = result_type(operands)
        if meta in ("unary", "unary_float"):
            rt = list(dts.values())[0]
        if meta in ("binary_float", "unary_float") and category(rt) != 2:
            return "float32", "float32"
        if meta == "bool_out":
            return rt, "bool"
        return rt, rt

    def value_case(self, nf, c, rng, dts, tensor_args, args, combo, meta, shp,
                   label=None, flags=0, data=None):
        kernel = nf.delegate or nf
        delegate_tensor_names = {a.name for a in kernel.func.arguments if a.type.base == "Tensor"}
        shapes, arrays = {}, {}
        for a, s in zip(tensor_args, shp):
            d = c.fixed_dtypes.get(a.name, dts.get(a.name))
            dom = c.domain.get(a.name)
            arr = make_tensor(rng, d, s, dom, (data or {}).get(a.name))
            shapes[a.name], arrays[a.name] = s, (arr, d)
        free_args = [a for a in tensor_args if a.name not in c.fixed_dtypes]
        test_dtype = dts[free_args[0].name] if free_args else "float32"
        values = {}
        for a in args:
            if a.type.base == "Tensor":
                continue
            v = combo.get(a.name)
            if v is None and a.type.base == "Scalar" and not a.type.optional:
                v = scalar_for(test_dtype, c.domain.get(a.name))
            values[a.name] = v
        # Scalars standing where the kernel takes Tensors take part as wrapped numbers;
        # the kernel's own Scalars (alpha) do not promote.
        wrapped = [values[a.name] for a in args
                   if a.type.base == "Scalar" and a.name in delegate_tensor_names]
        if meta == "clamp":
            wrapped += [values.get("min"), values.get("max")]
        free = {k: v[1] for k, v in arrays.items() if k not in c.fixed_dtypes}
        mode = values.get("rounding_mode")
        m = meta if meta != "div_mode" else ("binary_float" if mode is None else "binary")
        comp, out_dt = self.compute_dtype(m, free, shapes, nf, wrapped)
        if comp not in c.dtypes:
            return  # e.g. a wrapped float scalar lifts an int op into an unsupported dtype
        # NumPy evaluation dtype
        if comp in ("float16", "bfloat16"):
            ev = np.float32
        elif comp == "float32" and c.compute == "float64":
            ev = np.float64
        else:
            ev = NP[comp]
        env = dict(HELPERS)
        for name, (arr, d) in arrays.items():
            env[name] = arr if name in c.fixed_dtypes else np.asarray(arr).astype(ev)
        for name, v in values.items():
            if v is not None and not isinstance(v, str) and name not in ("rounding_mode",):
                if isinstance(v, list):
                    env[name] = v
                elif any(a.name == name and a.type.base == "Scalar" for a in args):
                    env[name] = np.asarray(v).astype(ev)[()]
                else:
                    env[name] = v
            else:
                env[name] = v
        ref = c.ref or f"np.{kernel.func.base_name}({', '.join(a.name for a in tensor_args)})"
        with np.errstate(all="ignore"):
            try:
                expected = np.asarray(eval(ref, env))  # noqa: S307 (our own YAML)
            except Exception as e:  # a broken reference is a bug in the YAML
                raise SystemExit(f"{c.loc}: ref of {nf.name} failed for {comp}: {e}")
        want_shape = np.broadcast_shapes(*shapes.values()) if shapes else ()
        if expected.shape != want_shape:
            raise SystemExit(f"{c.loc}: ref of {nf.name} gives shape {expected.shape} for inputs "
                             f"{list(shapes.values())}, not the broadcast shape {want_shape}")
        expected = to_dtype(expected, out_dt) if out_dt != "bool" else expected.astype(np.bool_)
        if self.torch is not None:
            self.check_torch(nf, c, arrays, values, expected, out_dt)
        tol = tolerance(c, out_dt, comp)
        enc = []
        for a in args:
            if a.type.base == "Tensor":
                arr, d = arrays[a.name]
                enc.append(self.w.arg(T_TENSOR, arr, d))
            else:
                enc.append(self.encode(a, values[a.name]))
        lab = f"{nf.name} {label or ''} {' '.join(d for d in dts.values())} shapes {list(shp)}"
        if any(v is not None for v in values.values()):
            lab += " " + ", ".join(f"{k}={v}" for k, v in values.items() if v is not None)
        flags |= F_VALUES | F_LAYOUTS | F_VARIANTS | F_ELEMENTWISE
        if c.signed_zeros:
            flags |= F_SIGNED_ZEROS
        if not c.gradcheck:
            flags |= F_NO_GRADCHECK
        self.w.add(" ".join(lab.split()), nf, flags, test_dtype, tol, enc, expected, out_dt)

    def out_template(self, nf, meta, shapes, dts, d):
        """An out= tensor for an error case: the result's shape where the inputs broadcast,
        of a dtype the result can be cast to, so the out= form fails for the intended reason."""
        try:
            shape = np.broadcast_shapes(*shapes) if shapes else ERROR_SHAPE
        except ValueError:
            shape = shapes[0]
        if meta == "bool_out":
            od = "bool"
        elif meta in ("binary_float", "unary_float", "div_mode") and category(d) != 2:
            od = "float32" if meta != "div_mode" else d
        else:
            od = d
        if not shape or int(np.prod(shape)) == 0:
            shape = ERROR_SHAPE
        return (np.full(shape, 7 if od != "bool" else True), od)

    def error_case(self, nf, c, rng, d, tensor_args, args, combo, meta):
        """An undeclared dtype: rejected with a message naming the op, in every form."""
        enc = []
        for a in args:
            if a.type.base == "Tensor":
                dd = c.fixed_dtypes.get(a.name, d)
                enc.append(self.w.arg(T_TENSOR, sample(rng, dd, ERROR_SHAPE, c.domain.get(a.name)), dd))
            else:
                v = combo.get(a.name)
                if v is None and a.type.base == "Scalar" and not a.type.optional:
                    v = scalar_for(d, c.domain.get(a.name))
                enc.append(self.encode(a, v))
        self.w.add(f"{nf.name} rejects {d}", nf, F_ERROR | F_DTYPE_ERROR, d, (0, 0, 0), enc,
                   error=nf.func.base_name, forms=self.forms_of(nf), out=(np.full(ERROR_SHAPE, 1), d))

    def declared_error(self, nf, c, err):
        """An `errors:` item of the metadata, on entry nf."""
        rng = np.random.default_rng([zlib.crc32(nf.name.encode()), err.index])
        elementwise = nf.delegate is not None or nf.structured
        smp = {} if elementwise else dict((c.samples or [{}])[0])
        default_d = "float32" if "float32" in c.dtypes else c.dtypes[0]
        d = err.dtype.get("*", default_d)
        args = [a for a in nf.func.arguments if not (a.kwarg_only and a.is_write)]
        combo = self.arg_choices(nf, c, args)[0] if elementwise else {}
        enc, shapes, dts = [], [], {}
        for a in args:
            if a.type.is_tensor_list:
                # the first sample's tensors; an error's `shapes:` gives the shape of the last
                # one (a mismatch against the others), its dtype applies to all of them
                specs = list(smp.get(a.name) or [list(ERROR_SHAPE), list(ERROR_SHAPE)])
                if a.name in err.shapes:
                    specs = (specs[:-1] or [list(ERROR_SHAPE)]) + [list(err.shapes[a.name])]
                base = next((x for x in shapes), None)
                specs = [s if s is None else {**(s if isinstance(s, dict) else {"shape": s}),
                                              **({"dtype": err.dtype[a.name]} if a.name in err.dtype else {})}
                         for s in specs]
                items = list_items(rng, specs, d, c.domain.get(a.name), base)
                shapes.extend(tuple(x[0].shape) for x in items if x is not None)
                enc.append(self.w.arg(T_TENSOR_LIST, items))
                continue
            if a.type.base == "Generator":
                enc.append(self.w.arg(T_NONE, None))
                continue
            if a.type.base == "Tensor":
                shape, dd, data = tensor_spec(smp.get(a.name), d, ERROR_SHAPE)
                if a.name in err.shapes:
                    shape, data = err.shapes[a.name], None
                shape = tuple(shape)
                dd = err.dtype.get(a.name, c.fixed_dtypes.get(a.name, dd))
                if a.name in err.fill:
                    arr = to_dtype(np.full(shape, err.fill[a.name]), dd)
                else:
                    arr = make_tensor(rng, dd, shape, c.domain.get(a.name), data)
                if a.type.optional and a.name not in err.shapes and a.name not in err.fill \
                        and a.name in err.args:
                    enc.append(self.w.arg(T_NONE, None))
                    continue
                shapes.append(shape)
                dts[a.name] = dd
                enc.append(self.w.arg(T_TENSOR, arr, dd))
                continue
            if a.name in err.args:
                v = err.args[a.name]
            elif a.name in smp:
                v = smp[a.name]
            elif elementwise:
                v = combo.get(a.name)
                if v is None and a.type.base == "Scalar" and not a.type.optional:
                    v = scalar_for(d, c.domain.get(a.name))
            else:
                v = a.default_value if a.default is not None else None
                if a.name == "dtype":
                    v = d
            enc.append(self.encode(a, v))
        meta = (nf.delegate or nf).meta
        out = None
        if nf.group.out is not None:
            if elementwise:
                out = self.out_template(nf, meta, shapes, dts, d)
            else:
                # one template per out= argument of the out= form (several returns: one
                # each, with the return's fixed dtype where `returns:` gives one)
                out = []
                names = nf.group.functional.func.return_names if nf.group.functional else ()
                for i, oa in enumerate(nf.group.out.func.out_arguments):
                    spec = smp.get(oa.name)
                    rname = names[i] if i < len(names) else oa.name
                    od = spec if isinstance(spec, str) else c.returns.get(rname, {}).get("dtype", d)
                    dof = nf.group.out.out_dtype_of  # out_checks: out= has that argument's dtype
                    if dof is not None and not isinstance(spec, str):
                        od = err.dtype.get(dof, c.fixed_dtypes.get(dof, d))
                    out.append((np.full(ERROR_SHAPE, 1), od))
        what = ", ".join([f"{k}={list(v)}" for k, v in err.shapes.items()] +
                         [f"{k}={v!r}" for k, v in err.args.items()] +
                         [f"{k} filled with {v}" for k, v in err.fill.items()])
        self.w.add(f"{nf.name} error {err.index} {d} {what}", nf, F_ERROR, d, (0, 0, 0), enc,
                   error=err.match, forms=self.forms_of(nf, err.forms), out=out)

    def encode(self, a, v):
        t = a.type
        if v is None or t.base == "Generator":  # a Generator? is always None (default generator)
            return self.w.arg(T_NONE, None)
        if t.base == "Scalar":
            return self.w.arg(T_SCALAR, v)
        if t.base in ("int", "SymInt"):
            return self.w.arg(T_INT_LIST if t.is_list else T_INT, v)
        if t.base == "float":
            return self.w.arg(T_DOUBLE, v)
        if t.base == "bool":
            return self.w.arg(T_BOOL, v)
        if t.base == "str":
            return self.w.arg(T_STR, v)
        if t.base == "ScalarType":
            return self.w.arg(T_DTYPE, v)
        if t.base == "Device":
            return self.w.arg(T_DEVICE, v)
        if t.base == "MemoryFormat":
            return self.w.arg(T_MEMORY_FORMAT, v)
        raise SystemExit(f"gen_cases: cannot encode {a}")

    # -- everything else: explicit samples ---------------------------------------
    def sampled(self, nf, c):
        rng = np.random.default_rng(zlib.crc32(nf.name.encode()))
        samples = list(c.samples)
        if c.shapes:
            names = [a.name for a in nf.func.arguments if a.type.base == "Tensor"
                     and not (a.kwarg_only and a.is_write)]
            combos = [dict(zip(c.args, v)) for v in itertools.product(*c.args.values())] or [{}]
            for shp in shape_sets(c, names):
                for combo in combos:
                    samples.append({**combo, **{n: list(s) for n, s in zip(names, shp)}})
        if not samples:
            raise SystemExit(f"{c.loc}: {nf.name} needs `samples:` or `shapes:` in its conformance")
        has_dtype_arg = any(a.name == "dtype" for a in nf.func.arguments)
        for smp in samples:
            for d in c.dtypes:
                self.sample_case(nf, c, rng, smp, d, has_dtype_arg)

    def sample_case(self, nf, c, rng, smp, d, has_dtype_arg):
        values, enc, arrays, lists = {}, [], {}, {}
        out_dt = None
        first = next((a for a in nf.func.arguments if a.type.is_tensor), None)
        base_shape = tensor_spec(smp.get(first.name), d)[0] if first is not None else None
        for a in nf.func.arguments:
            v = smp.get(a.name, a.default_value if a.default is not None else None)
            if a.type.base == "Generator":  # the runner always passes None
                values[a.name] = None
                enc.append(self.w.arg(T_NONE, None))
                continue
            if a.type.is_tensor_list:  # a list of element specs (shape, {shape, dtype, data}, null)
                if v is None and a.type.optional and a.name in smp:  # Tensor[]? given None
                    values[a.name] = None
                    enc.append(self.w.arg(T_NONE, None))
                    continue
                items = list_items(rng, v if v is not None else [[3, 4], [3, 4]], d, c.domain.get(a.name),
                                   base_shape)
                lists[a.name] = [x for x in items if x is not None]
                values[a.name] = [None if x is None else x[0] if x[1] not in ("float16", "bfloat16")
                                  else x[0].astype(np.float32) for x in items]
                enc.append(self.w.arg(T_TENSOR_LIST, items))
                continue
            if a.type.base == "Tensor":
                if v is None and a.type.optional and a.name in smp:  # Tensor? given None
                    values[a.name] = None
                    enc.append(self.w.arg(T_NONE, None))
                    continue
                shape, dd, data = tensor_spec(v, d)
                if a.is_write and a.kwarg_only:  # out=: an empty tensor of the dtype
                    arr = np.zeros((0,), dtype=NP[dd])
                    out_dt = dd
                else:
                    arr = make_tensor(rng, dd, shape, c.domain.get(a.name), data)
                arrays[a.name] = (arr, dd)
                values[a.name] = arr if dd not in ("float16", "bfloat16") else arr.astype(np.float32)
                enc.append(self.w.arg(T_TENSOR, arr, dd))
                continue
            if a.name == "dtype" and "dtype" not in smp:
                v = d
            values[a.name] = v
            enc.append(self.encode(a, v))
        env = dict(HELPERS)
        env.update(values)
        rule_dt = self.factory_dtype(nf, smp, values, arrays, d, out_dt, lists)
        with np.errstate(all="ignore"):
            try:
                got = eval(c.ref, env)  # noqa: S307
            except Exception as e:
                raise SystemExit(f"{c.loc}: ref of {nf.name} failed: {e}")
        rets = self.expected_returns(nf, c, got, rule_dt)
        tol = tolerance(c, rule_dt)
        flags = (F_VALUES if c.values else 0) | F_VARIANTS
        if (arrays or lists) and nf.kind == "functional" and c.layouts:
            flags |= F_LAYOUTS
        if c.signed_zeros:
            flags |= F_SIGNED_ZEROS
        # explicit `data:` pins edge values (ties, zeros) where derivatives are undefined
        pinned = any(isinstance(v, dict) and "data" in v for v in smp.values()) or any(
            isinstance(v, list) and any(isinstance(x, dict) and "data" in x for x in v) for v in smp.values())
        if not c.gradcheck or pinned:
            flags |= F_NO_GRADCHECK
        self.w.add(f"{nf.name} {d} " + ", ".join(f"{k}={v}" for k, v in smp.items()), nf, flags, d, tol, enc,
                   rets=rets)

    @staticmethod
    def expected_returns(nf, c, got, rule_dt):
        """The ref's value as the case's returns: one array per Tensor return (a tuple, in
        schema order, when there are several), a list of arrays for a Tensor[] return.
        Each return has the case's result dtype unless `returns:` fixes it."""
        rets = [r for r in nf.func.returns]
        names = nf.func.return_names
        where = f"{c.loc}: ref of {nf.name}"
        if len(rets) > 1:
            if not isinstance(got, (tuple, list)) or len(got) != len(rets):
                raise SystemExit(f"{where} must give a tuple of {len(rets)} arrays ({', '.join(names)}), "
                                 f"got {type(got).__name__}")
            values = list(got)
        else:
            values = [got]
        out = []
        for r, name, v in zip(rets, names, values):
            opt = c.returns.get(name, {})
            dt = opt.get("dtype", rule_dt)
            rflags = R_COMPARE if opt.get("compare", True) else 0
            if r.type.is_list:
                if not isinstance(v, (list, tuple)):
                    raise SystemExit(f"{where}: the Tensor[] return '{name}' must be a list of arrays, "
                                     f"got {type(v).__name__}")
                out.append(([to_dtype(np.asarray(x), dt) for x in v], dt, rflags | R_LIST))
            else:
                out.append((to_dtype(np.asarray(v), dt), dt, rflags))
        return out

    @staticmethod
    def factory_dtype(nf, smp, values, arrays, d, out_dt, lists=None):
        if out_dt is not None:
            return out_dt
        dt = values.get("dtype")
        if dt is not None:
            return dt
        if nf.func.base_name == "einsum":
            return einsum_dtype(values["equation"], lists["tensors"])
        rd = reduction_dtype(nf.func.base_name, arrays)
        if rd is not None:
            return rd
        if lists and "self" not in arrays:
            # cat, stack, ...: the elements' dtypes promoted (PyTorch's result_type)
            return result_type([("dim", dd) for items in lists.values() for _, dd in items])
        if nf.func.base_name == "to":  # to.dtype names it; to.device may not; to.other: other's
            return arrays["other"][1] if "other" in arrays else arrays["self"][1]
        if "self" in arrays:
            return arrays["self"][1]
        firsts = [a.name for a in nf.func.arguments if a.type.base == "Tensor" and a.name in arrays
                  and not a.is_write]
        if firsts and nf.func.base_name not in ("full", "arange"):
            return arrays[firsts[0]][1]  # input, weight: the first tensor's dtype
        if nf.func.base_name == "full":
            v = values["fill_value"]
            return "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "float32"
        if nf.func.base_name == "arange":
            nums = [values.get(k) for k in ("start", "end", "step") if values.get(k) is not None]
            return "int64" if all(isinstance(x, int) and not isinstance(x, bool) for x in nums) else "float32"
        return "float32"

    # -- development cross-check --------------------------------------------------
    def check_torch(self, nf, c, arrays, values, expected, out_dt):
        torch = self.torch
        tdt = {"bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
               "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
               "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64}
        targs = {}
        for name, (arr, d) in arrays.items():
            targs[name] = torch.tensor(np.asarray(arr, dtype=np.float32 if d == "bfloat16" else None)).to(tdt[d])
        kw = {k: v for k, v in values.items() if v is not None}
        fn = getattr(torch, nf.func.base_name, None)
        if fn is None:
            return
        pos = [targs[a.name] for a in nf.func.arguments if a.name in targs and not a.kwarg_only]
        kwargs = {a.name: kw[a.name] for a in nf.func.arguments if a.name in kw and a.name not in targs}
        if nf.func.arguments and nf.func.arguments[0].type.base == "Scalar":
            pos = [kw.pop(nf.func.arguments[0].name)] + pos  # pow(2, t), remainder(2, t), ...
            kwargs.pop(nf.func.arguments[0].name, None)
        try:
            got = fn(*pos, **kwargs)
        except Exception as e:  # noqa: BLE001
            if "not implemented for 'Half'" in str(e) or "not implemented for 'BFloat16'" in str(e):
                return  # PyTorch 1.13's CPU lacks these; newer PyTorch has them
            print(f"torch-check: {nf.name}: PyTorch raised {e}", file=sys.stderr)
            self.mismatches += 1
            return
        if str(got.dtype).replace("torch.", "") != out_dt:
            print(f"torch-check: {nf.name}: dtype {got.dtype} vs ours {out_dt} "
                  f"({[d for _, d in arrays.values()]}, {values})", file=sys.stderr)
            self.mismatches += 1
            return
        g = got.float().numpy() if out_dt in ("bfloat16",) else got.numpy()
        e = np.asarray(expected)
        if g.shape != e.shape:
            print(f"torch-check: {nf.name}: shape {g.shape} vs {e.shape}", file=sys.stderr)
            self.mismatches += 1
            return
        rtol, atol = TOL.get(out_dt, (0, 0))
        if out_dt in conf_mod.FLOATING:
            ok = np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol * 4, atol=atol * 4,
                             equal_nan=True)
            # the runner compares the signs of zeros (F_SIGNED_ZEROS): NumPy and PyTorch must agree
            gz, ez = g.astype(np.float64), e.astype(np.float64)
            both = (gz == 0) & (ez == 0)
            if c.signed_zeros and np.any(np.signbit(gz[both]) != np.signbit(ez[both])):
                print(f"torch-check: {nf.name} {[d for _, d in arrays.values()]} {values}: the signs of "
                      f"zeros differ (set signed_zeros: false)", file=sys.stderr)
                self.mismatches += 1
        else:
            ok = np.array_equal(g, e)
        if not ok:
            print(f"torch-check: {nf.name} {[d for _, d in arrays.values()]} {values}: values differ\n"
                  f"  torch {g.ravel()[:8]}\n  numpy {e.ravel()[:8]}", file=sys.stderr)
            self.mismatches += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yaml", required=True)
    ap.add_argument("--conformance", nargs="*", default=None,
                    help="ops/conformance/*.yaml (default: the conformance/ folder beside --yaml)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED,
                    help="seed of the property run's random shapes and dtypes")
    ap.add_argument("--torch-check", action="store_true")
    ns = ap.parse_args()
    try:
        model = load_model(ns.yaml, conformance=ns.conformance)
        confs = conf_mod.load(model)
    except SchemaError as e:
        for m in e.messages if hasattr(e, "messages") else [str(e)]:
            print(m, file=sys.stderr)
        return 1
    gen = Gen(model, confs, ns.torch_check, ns.seed)
    data = gen.run()
    old = None
    if os.path.exists(ns.out):
        with open(ns.out, "rb") as f:
            old = f.read()
    if old != data:
        with open(ns.out, "wb") as f:
            f.write(data)
    print(f"gen_cases: {len(gen.w.cases)} cases, {len(data) // 1024} KiB, seed {ns.seed}"
          + (f", {gen.mismatches} PyTorch mismatches" if gen.torch else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

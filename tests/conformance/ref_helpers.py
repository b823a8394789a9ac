"""The helpers a `ref:` of the conformance metadata may name (HELPERS, checked against
codegen/conformance.py's REF_HELPERS), and the `ref_*` functions of refs/*.py.
NumPy only: an expected value never comes from libops.
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from codegen import conformance as conf_mod  # noqa: E402


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

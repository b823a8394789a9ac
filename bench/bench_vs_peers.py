#!/usr/bin/env python3
"""libops against its peers, the reference bench of the CPU kernels (docs/cpu-dispatch.md):
every row of the vector-kernel work (transcendental math, broadcasting, reductions, the
row kernels, random numbers, pooling, float16/bfloat16) and the rows where libops is
already fast (per-call overhead, sort, index_select, cumsum, mm, autograd), so that a
regression shows.  Peers: PyTorch (when importable: Debian's python3-torch) and NumPy
(where NumPy has the op).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_vs_peers.py
        [--threads 1,2] [--rounds 7] [--only REGEX] [--list] [--clock wall|cpu]

One process; for each thread count, every row is timed in interleaved rounds (libops,
then each peer, then libops again ...), and the median of the rounds is reported.
Every call allocates its result (the functional form, as a user writes it) unless the
row says out=.  Ratio = libops time / peer time: above 1, libops is slower.  The
header names the CPU, the ISA level libops chose (OPS_CPU_CAPABILITY=default|avx2|avx512
picks a lower one) and torch's.  The last column, `best`, is libops / the fastest peer.
On a busy machine wall times move several-fold between rounds; `--clock cpu` times by the
calling thread's CPU time instead (one thread), which other processes disturb far less."""

import argparse
import os
import platform
import re
import statistics
import sys
import time

import numpy as np

import libops

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return " ".join(f for f in ("avx2", "fma", "f16c", "avx512f", "avx512bw",
                                                "avx512_bf16", "avx512_fp16") if f in have)
    except OSError:
        pass
    return "?"


# --------------------------------------------------------------------------------------
# Rows.  A row is (label, setup) where setup() returns {"libops": fn, "torch": fn,
# "numpy": fn} with the peers it has (a missing libops op makes the row "n/a").

ROWS = []


def row(label):
    def deco(setup):
        ROWS.append((label, setup))
        return setup
    return deco


def lop(name):
    """libops's function NAME, or None where libops lacks it."""
    return getattr(libops, name, None)


def tfrom(a):
    return torch.from_numpy(a) if torch is not None else None


def peers(l=None, t=None, n=None):
    d = {}
    if l is not None:
        d["libops"] = l
    if t is not None and torch is not None:
        d["torch"] = t
    if n is not None:
        d["numpy"] = n
    return d


def fwd_bwd(arrays, grad, lib_fwd, tor_fwd):
    """The peers of a forward+backward row, from one description: `arrays` (NumPy) become
    leaves that require grad (a libops and a torch copy of each), `grad` (NumPy, or None
    where the forward gives a scalar) is given to backward, lib_fwd(*leaves) and
    tor_fwd(*leaves) are the forwards (lib_fwd None where libops lacks the op).  A call
    runs the forward and the backward and clears the leaves' gradients."""
    xs = [libops.from_numpy(a).requires_grad_(True) for a in arrays]
    lg = libops.from_numpy(grad) if grad is not None else None
    ts = tg = None
    if torch is not None:
        ts = [tfrom(a).clone().requires_grad_(True) for a in arrays]
        tg = tfrom(grad) if grad is not None else None

    def run(fwd, leaves, g):
        r = fwd(*leaves)
        r.backward(g) if g is not None else r.backward()
        for v in leaves:
            v.grad = None
    return peers(lib_fwd and (lambda: run(lib_fwd, xs, lg)), ts and (lambda: run(tor_fwd, ts, tg)))


RNG = np.random.default_rng(0)
N1M = 1 << 20

# name: (domain low, high, torch fn name or callable, numpy fn or None)
UNARY = [
    ("exp", -10, 10, "exp", np.exp),
    ("expm1", -10, 10, "expm1", np.expm1),
    ("log", 1e-3, 100, "log", np.log),
    ("log1p", -0.9, 100, "log1p", np.log1p),
    ("log2", 1e-3, 100, "log2", np.log2),
    ("log10", 1e-3, 100, "log10", np.log10),
    ("sin", -10, 10, "sin", np.sin),
    ("cos", -10, 10, "cos", np.cos),
    ("tan", -1.5, 1.5, "tan", np.tan),
    ("asin", -1, 1, "asin", np.arcsin),
    ("acos", -1, 1, "acos", np.arccos),
    ("atan", -10, 10, "atan", np.arctan),
    ("sinh", -10, 10, "sinh", np.sinh),
    ("cosh", -10, 10, "cosh", np.cosh),
    ("tanh", -10, 10, "tanh", np.tanh),
    ("asinh", -10, 10, "asinh", np.arcsinh),
    ("acosh", 1, 100, "acosh", np.arccosh),
    ("atanh", -0.99, 0.99, "atanh", np.arctanh),
    ("erf", -4, 4, "erf", None),
    ("erfc", -4, 4, "erfc", None),
    ("erfinv", -0.99, 0.99, "erfinv", None),
    ("sigmoid", -10, 10, "sigmoid", None),
    ("logit", 1e-3, 0.999, "logit", None),
    ("cbrt", -100, 100, "cbrt", np.cbrt),
    ("sqrt", 0, 100, "sqrt", np.sqrt),
    ("rsqrt", 1e-3, 100, "rsqrt", None),
    ("gelu", -10, 10, "gelu", None),
    ("gelu_tanh", -10, 10, "gelu_tanh", None),
    ("silu", -10, 10, "silu", None),
    ("mish", -10, 10, "mish", None),
    ("softplus", -10, 10, "softplus", None),
    ("elu", -10, 10, "elu", None),
    ("selu", -10, 10, "selu", None),
    ("celu", -10, 10, "celu", None),
    ("log_sigmoid", -10, 10, "log_sigmoid", None),
]


def libops_unary(name):
    if name == "gelu_tanh":
        f = lop("gelu")
        return None if f is None else (lambda x: f(x, approximate="tanh"))
    return lop(name)


def torch_unary(name):
    if torch is None:
        return None
    if name == "gelu_tanh":
        return lambda x: TF.gelu(x, approximate="tanh")
    if name == "log_sigmoid":
        return TF.logsigmoid
    for ns in (torch, TF, torch.special):
        f = getattr(ns, name, None)
        if f is not None:
            return f
    return None


for _dt in (np.float32, np.float64):
    for _name, _lo, _hi, _tname, _np in UNARY:
        def _setup(name=_name, lo=_lo, hi=_hi, npf=_np, dt=_dt):
            a = RNG.uniform(lo, hi, N1M).astype(dt)
            fl, ft = libops_unary(name), torch_unary(name)
            x, t = libops.from_numpy(a), tfrom(a)
            return peers(fl and (lambda: fl(x)), ft and (lambda: ft(t)),
                         npf and (lambda: npf(a)))
        row(f"{_name} {np.dtype(_dt).name} 1M")(_setup)


for _dt, _tag in ((np.float32, "f32"), (np.float64, "f64")):
    def _pow_s(dt=_dt):
        a = RNG.uniform(0.1, 10, N1M).astype(dt)
        x, t = libops.from_numpy(a), tfrom(a)
        return peers(lambda: libops.pow(x, 2.5), lambda: torch.pow(t, 2.5), lambda: np.power(a, dt(2.5)))

    def _pow_t(dt=_dt):
        a = RNG.uniform(0.1, 10, N1M).astype(dt)
        b = RNG.uniform(-3, 3, N1M).astype(dt)
        x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
        return peers(lambda: libops.pow(x, y), lambda: torch.pow(t, u), lambda: np.power(a, b))

    row(f"pow {_tag} 1M ^ 2.5")(_pow_s)
    row(f"pow {_tag} 1M ^ tensor")(_pow_t)


@row("atan2 f32 1M")
def _():
    a = RNG.uniform(-10, 10, N1M).astype(np.float32)
    b = RNG.uniform(-10, 10, N1M).astype(np.float32)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
    return peers(lambda: libops.atan2(x, y), lambda: torch.atan2(t, u), lambda: np.arctan2(a, b))


# pow and atan2 at float16/bfloat16 through the float32 loops (torch 1.13 has no float16
# atan2 on the CPU; NumPy computes float16 in float32 too)
for _dtn in ("float16", "bfloat16"):
    def _half2(dtn=_dtn, lo=0.1, hi=10.0, blo=-3.0, bhi=3.0):
        a = RNG.uniform(lo, hi, N1M).astype(np.float32)
        b = RNG.uniform(blo, bhi, N1M).astype(np.float32)
        x, y = (libops.from_numpy(v).to(getattr(libops, dtn)) for v in (a, b))
        t, u = ((tfrom(v).to(getattr(torch, dtn)) if torch is not None else None) for v in (a, b))
        h, k = (a.astype(np.float16), b.astype(np.float16)) if dtn == "float16" else (None, None)
        return x, y, t, u, h, k

    def _hpow_s(f=_half2):
        x, _, t, _, h, _ = f()
        return peers(lambda: libops.pow(x, 2.5), t is not None and (lambda: torch.pow(t, 2.5)),
                     h is not None and (lambda: np.power(h, np.float16(2.5))))

    def _hpow_t(f=_half2):
        x, y, t, u, h, k = f()
        return peers(lambda: libops.pow(x, y), t is not None and (lambda: torch.pow(t, u)),
                     h is not None and (lambda: np.power(h, k)))

    def _hatan2(f=_half2):
        x, y, t, u, h, k = f(lo=-10.0, hi=10.0, blo=-10.0, bhi=10.0)
        return peers(lambda: libops.atan2(x, y), t is not None and (lambda: torch.atan2(t, u)),
                     h is not None and (lambda: np.arctan2(h, k)))

    row(f"pow {_dtn} 1M ^ 2.5")(_hpow_s)
    row(f"pow {_dtn} 1M ^ tensor")(_hpow_t)
    row(f"atan2 {_dtn} 1M")(_hatan2)


# ---- elementwise arithmetic and broadcasting ------------------------------------------

@row("add 1 element (per-call overhead)")
def _():
    a = np.ones(1, np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.add(x, x), lambda: torch.add(t, t), lambda: np.add(a, a))


@row("add f32 16M")
def _():
    a = RNG.standard_normal(1 << 24, dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.add(x, x), lambda: torch.add(t, t), lambda: np.add(a, a))


@row("add f32 16M out=")
def _():
    a = RNG.standard_normal(1 << 24, dtype=np.float32)
    o = np.empty_like(a)
    x, t = libops.from_numpy(a), tfrom(a)
    xo, to = libops.from_numpy(o.copy()), tfrom(o.copy())
    return peers(lambda: libops.add(x, x, out=xo), lambda: torch.add(t, t, out=to),
                 lambda: np.add(a, a, out=o))


@row("broadcast add [1024,1024]+[1024] f32")
def _():
    a = RNG.standard_normal((1024, 1024), dtype=np.float32)
    b = RNG.standard_normal(1024, dtype=np.float32)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
    return peers(lambda: libops.add(x, y), lambda: torch.add(t, u), lambda: np.add(a, b))


@row("mul f32 1M by a scalar")
def _():
    a = RNG.standard_normal(N1M, dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.mul(x, 3.0), lambda: torch.mul(t, 3.0), lambda: np.multiply(a, np.float32(3.0)))


for _dtn in ("float16", "bfloat16"):
    def _half(dtn=_dtn):
        a = RNG.standard_normal(N1M, dtype=np.float32)
        x = libops.from_numpy(a).to(getattr(libops, dtn))
        t = tfrom(a).to(getattr(torch, dtn)) if torch is not None else None
        h = a.astype(np.float16) if dtn == "float16" else None
        return x, t, h

    def _s_add(f=_half):
        x, t, h = f()
        return peers(lambda: libops.add(x, x), t is not None and (lambda: torch.add(t, t)),
                     h is not None and (lambda: np.add(h, h)))

    def _s_mul(f=_half):
        x, t, h = f()
        return peers(lambda: libops.mul(x, x), t is not None and (lambda: torch.mul(t, t)),
                     h is not None and (lambda: np.multiply(h, h)))

    def _s_exp(f=_half):
        x, t, h = f()
        return peers(lambda: libops.exp(x), t is not None and (lambda: torch.exp(t)),
                     h is not None and (lambda: np.exp(h)))

    def _s_sum(f=_half):
        x, t, h = f()
        return peers(lambda: libops.sum(x), t is not None and (lambda: torch.sum(t)),
                     h is not None and (lambda: np.sum(h)))

    def _s_tanh(f=_half):
        x, t, h = f()
        return peers(lambda: libops.tanh(x), t is not None and (lambda: torch.tanh(t)),
                     h is not None and (lambda: np.tanh(h)))

    def _s_sigmoid(f=_half):  # NumPy has no sigmoid: its float16 formula
        x, t, h = f()
        one = np.float16(1.0)
        return peers(lambda: libops.sigmoid(x), t is not None and (lambda: torch.sigmoid(t)),
                     h is not None and (lambda: one / (one + np.exp(-h))))

    row(f"add {_dtn} 1M")(_s_add)
    row(f"mul {_dtn} 1M")(_s_mul)
    row(f"exp {_dtn} 1M")(_s_exp)
    row(f"tanh {_dtn} 1M")(_s_tanh)
    row(f"sigmoid {_dtn} 1M")(_s_sigmoid)
    row(f"sum {_dtn} 1M")(_s_sum)
    # the activations of vec_act.c through its float32 loop (torch 1.13's CPU has them
    # for bfloat16; NumPy has none)
    for _an in ("elu", "log_sigmoid", "gelu", "silu"):
        def _s_act(f=_half, name=_an):
            x, t, _ = f()
            fl, ft = libops_unary(name), torch_unary(name)
            return peers(lambda: fl(x), t is not None and ft is not None and (lambda: ft(t)))
        row(f"{_an} {_dtn} 1M")(_s_act)


# ---- reductions -----------------------------------------------------------------------

def _mat4096():
    a = RNG.standard_normal((4096, 4096), dtype=np.float32)
    return a, libops.from_numpy(a), tfrom(a)


_M = {}


def mat4096():
    if "m" not in _M:
        _M["m"] = _mat4096()
    return _M["m"]


@row("sum all 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.sum(x), lambda: torch.sum(t), lambda: np.sum(a))


@row("sum dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.sum(x, 1), lambda: torch.sum(t, 1), lambda: np.sum(a, 1))


@row("sum dim=0 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.sum(x, 0), lambda: torch.sum(t, 0), lambda: np.sum(a, 0))


@row("mean dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.mean(x, 1), lambda: torch.mean(t, 1), lambda: np.mean(a, 1))


@row("amax dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.amax(x, 1), lambda: torch.amax(t, 1), lambda: np.max(a, 1))


@row("amax all 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.amax(x), lambda: torch.amax(t), lambda: np.max(a))


@row("argmax dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.argmax(x, 1), lambda: torch.argmax(t, 1), lambda: np.argmax(a, 1))


@row("norm all 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.norm(x), lambda: torch.norm(t), lambda: np.linalg.norm(a.ravel()))


@row("var dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.var(x, 1), lambda: torch.var(t, 1), lambda: np.var(a, 1, ddof=1))


@row("logsumexp dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    f = lop("logsumexp")
    return peers(f and (lambda: f(x, 1)), lambda: torch.logsumexp(t, 1))


@row("nanmean dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.nanmean(x, 1), lambda: torch.nanmean(t, 1), lambda: np.nanmean(a, 1))


@row("max.dim dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.max(x, 1), lambda: torch.max(t, 1))


@row("aminmax all 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.aminmax(x), lambda: torch.aminmax(t), lambda: (a.min(), a.max()))


@row("norm inf dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.norm(x, float("inf"), 1), lambda: torch.norm(t, float("inf"), 1),
                 lambda: np.linalg.norm(a, np.inf, 1))


@row("norm p=3 all 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.norm(x, 3.0), lambda: torch.norm(t, 3.0),
                 lambda: np.linalg.norm(a.ravel(), 3))


@row("norm p=0 dim=1 4096^2 f32")
def _():
    a, x, t = mat4096()
    return peers(lambda: libops.norm(x, 0.0, 1), lambda: torch.norm(t, 0.0, 1),
                 lambda: np.linalg.norm(a, 0, 1))


@row("sum all of transposed 4096^2 f32")
def _():
    a, x, t = mat4096()
    xt, tt, at = x.t(), t.t() if torch is not None else None, a.T
    return peers(lambda: libops.sum(xt), lambda: torch.sum(tt), lambda: np.sum(at))


@row("sum dim=1 of transposed 4096^2 f32")
def _():
    a, x, t = mat4096()
    xt, tt, at = x.t(), t.t() if torch is not None else None, a.T
    return peers(lambda: libops.sum(xt, 1), lambda: torch.sum(tt, 1), lambda: np.sum(at, 1))


@row("sum dims (0,2) [64,512,64] f32")
def _():
    a = RNG.standard_normal((64, 512, 64), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.sum(x, [0, 2]), lambda: torch.sum(t, [0, 2]), lambda: np.sum(a, (0, 2)))


@row("all f32 4096^2 (all true)")
def _():
    a = RNG.standard_normal((4096, 4096), dtype=np.float32) + np.float32(10)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.all(x), lambda: torch.all(t), lambda: np.all(a))


@row("any bool 16M (all false)")
def _():
    a = np.zeros(1 << 24, dtype=bool)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.any(x), lambda: torch.any(t), lambda: np.any(a))


@row("maximum 1M f32")
def _():
    a = RNG.standard_normal(N1M, dtype=np.float32)
    b = RNG.standard_normal(N1M, dtype=np.float32)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
    return peers(lambda: libops.maximum(x, y), lambda: torch.maximum(t, u), lambda: np.maximum(a, b))


@row("minimum [1024^2] and [1024] f32")
def _():
    a = RNG.standard_normal((1024, 1024), dtype=np.float32)
    b = RNG.standard_normal(1024, dtype=np.float32)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
    return peers(lambda: libops.minimum(x, y), lambda: torch.minimum(t, u), lambda: np.minimum(a, b))


@row("maximum 1M f64 and 0-dim")
def _():
    a = RNG.standard_normal(N1M)
    x, t = libops.from_numpy(a), tfrom(a)
    y, u = libops.from_numpy(np.array(0.5)), tfrom(np.array(0.5))
    return peers(lambda: libops.maximum(x, y), lambda: torch.maximum(t, u), lambda: np.maximum(a, 0.5))


# fmax/fmin (NaN-ignoring): inputs with 1% NaN
def _with_nans(shape, dtype=np.float32):
    a = RNG.standard_normal(shape).astype(dtype)
    a[RNG.random(shape) < 0.01] = np.nan
    return a


@row("fmax 1M f32")
def _():
    a, b = _with_nans(N1M), _with_nans(N1M)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
    return peers(lambda: lop("fmax")(x, y), lambda: torch.fmax(t, u), lambda: np.fmax(a, b))


@row("fmin [1024^2] and [1024] f32")
def _():
    a, b = _with_nans((1024, 1024)), _with_nans(1024)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
    return peers(lambda: lop("fmin")(x, y), lambda: torch.fmin(t, u), lambda: np.fmin(a, b))


@row("fmax 1M f64 and 0-dim")
def _():
    a = _with_nans(N1M, np.float64)
    x, t = libops.from_numpy(a), tfrom(a)
    y, u = libops.from_numpy(np.array(0.5)), tfrom(np.array(0.5))
    return peers(lambda: lop("fmax")(x, y), lambda: torch.fmax(t, u), lambda: np.fmax(a, 0.5))


for _dtn in ("float16", "bfloat16"):
    def _hfmax(dtn=_dtn):
        a, b = _with_nans(N1M), _with_nans(N1M)
        x, y = (libops.from_numpy(v).to(getattr(libops, dtn)) for v in (a, b))
        t, u = ((tfrom(v).to(getattr(torch, dtn)) if torch is not None else None) for v in (a, b))
        h, k = (a.astype(np.float16), b.astype(np.float16)) if dtn == "float16" else (None, None)
        return peers(lambda: lop("fmax")(x, y), t is not None and (lambda: torch.fmax(t, u)),
                     h is not None and (lambda: np.fmax(h, k)))
    row(f"fmax {_dtn} 1M")(_hfmax)


@row("fmin 1M int32")
def _():
    a = RNG.integers(-1000, 1000, N1M).astype(np.int32)
    b = RNG.integers(-1000, 1000, N1M).astype(np.int32)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(b), tfrom(a), tfrom(b)
    return peers(lambda: lop("fmin")(x, y), lambda: torch.fmin(t, u), lambda: np.fmin(a, b))


@row("sum all int64 16M")
def _():
    a = RNG.integers(-1000, 1000, 1 << 24)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.sum(x), lambda: torch.sum(t), lambda: np.sum(a))


# ---- row kernels ----------------------------------------------------------------------

@row("softmax [4096,1024] f32")
def _():
    a = RNG.standard_normal((4096, 1024), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.softmax(x, 1), lambda: torch.softmax(t, 1))


@row("log_softmax [4096,1024] f32")
def _():
    a = RNG.standard_normal((4096, 1024), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.log_softmax(x, 1), lambda: torch.log_softmax(t, 1))


@row("softmax dim=0 [1024,4096] f32")
def _():
    a = RNG.standard_normal((1024, 4096), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.softmax(x, 0), lambda: torch.softmax(t, 0))


@row("cross_entropy [4096,1000] f32")
def _():
    a = RNG.standard_normal((4096, 1000), dtype=np.float32)
    k = RNG.integers(0, 1000, 4096)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(k), tfrom(a), tfrom(k)
    f = lop("cross_entropy_loss")
    return peers(f and (lambda: f(x, y)), lambda: TF.cross_entropy(t, u))


@row("cross_entropy fwd+bwd [4096,1000] f32")
def _():
    a = RNG.standard_normal((4096, 1000), dtype=np.float32)
    k = RNG.integers(0, 1000, 4096)
    f = lop("cross_entropy_loss")
    y, u = libops.from_numpy(k), tfrom(k)
    return fwd_bwd([a], None, f and (lambda x: f(x, y)), lambda t: TF.cross_entropy(t, u))


@row("layer_norm [4096,1024] f32")
def _():
    a = RNG.standard_normal((4096, 1024), dtype=np.float32)
    w = RNG.standard_normal(1024, dtype=np.float32)
    b = RNG.standard_normal(1024, dtype=np.float32)
    x, lw, lb = libops.from_numpy(a), libops.from_numpy(w), libops.from_numpy(b)
    t, tw, tb = tfrom(a), tfrom(w), tfrom(b)
    return peers(lambda: libops.layer_norm(x, [1024], lw, lb),
                 lambda: TF.layer_norm(t, [1024], tw, tb))


@row("layer_norm fwd+bwd [4096,1024] f32")
def _():
    a = RNG.standard_normal((4096, 1024), dtype=np.float32)
    w = RNG.standard_normal(1024, dtype=np.float32)
    b = RNG.standard_normal(1024, dtype=np.float32)
    g = RNG.standard_normal((4096, 1024), dtype=np.float32)
    return fwd_bwd([a, w, b], g, lambda x, lw, lb: libops.layer_norm(x, [1024], lw, lb),
                   lambda t, tw, tb: TF.layer_norm(t, [1024], tw, tb))


@row("softmax dim=0 fwd+bwd [1024,4096] f32")
def _():
    a = RNG.standard_normal((1024, 4096), dtype=np.float32)
    g = RNG.standard_normal((1024, 4096), dtype=np.float32)
    return fwd_bwd([a], g, lambda x: libops.softmax(x, 0), lambda t: torch.softmax(t, 0))


@row("log_softmax dim=1 [64,1000,64] f32")
def _():
    a = RNG.standard_normal((64, 1000, 64), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.log_softmax(x, 1), lambda: torch.log_softmax(t, 1))


def _ce_row(shape, smoothing, backward):
    a = RNG.standard_normal(shape, dtype=np.float32)
    k = RNG.integers(0, shape[1], (shape[0],) + tuple(shape[2:]))
    f = lop("cross_entropy_loss")
    y, u = libops.from_numpy(k), tfrom(k)
    lib = f and (lambda x: f(x, y, None, 1, -100, smoothing))

    def tor(t):
        return TF.cross_entropy(t, u, label_smoothing=smoothing)
    if backward:
        return fwd_bwd([a], None, lib, tor)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lib and (lambda: lib(x)), lambda: tor(t))


@row("cross_entropy [64,1000,64] f32")
def _():
    return _ce_row((64, 1000, 64), 0.0, False)


@row("cross_entropy fwd+bwd [64,1000,64] f32")
def _():
    return _ce_row((64, 1000, 64), 0.0, True)


@row("cross_entropy label_smoothing=0.1 [4096,1000] f32")
def _():
    return _ce_row((4096, 1000), 0.1, False)


@row("cross_entropy label_smoothing=0.1 fwd+bwd [4096,1000] f32")
def _():
    return _ce_row((4096, 1000), 0.1, True)


# ---- random numbers, pooling ----------------------------------------------------------

@row("randn 16M f32")
def _():
    g = np.random.default_rng(1)
    return peers(lambda: libops.randn((1 << 24,)), lambda: torch.randn(1 << 24),
                 lambda: g.standard_normal(1 << 24, dtype=np.float32))


@row("rand 16M f32")
def _():
    g = np.random.default_rng(1)
    return peers(lambda: libops.rand((1 << 24,)), lambda: torch.rand(1 << 24),
                 lambda: g.random(1 << 24, dtype=np.float32))


@row("max_pool2d 3x3 s2 [32,64,56,56] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.max_pool2d(x, [3, 3], [2, 2]),
                 lambda: TF.max_pool2d(t, 3, 2))


@row("avg_pool2d 3x3 s2 [32,64,56,56] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.avg_pool2d(x, [3, 3], [2, 2]),
                 lambda: TF.avg_pool2d(t, 3, 2))


@row("max_pool2d 3x3 s2 [32,64,56,56] f64")
def _():
    a = RNG.standard_normal((32, 64, 56, 56))
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.max_pool2d(x, [3, 3], [2, 2]),
                 lambda: TF.max_pool2d(t, 3, 2))


@row("avg_pool2d 3x3 s2 [32,64,56,56] f64")
def _():
    a = RNG.standard_normal((32, 64, 56, 56))
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.avg_pool2d(x, [3, 3], [2, 2]),
                 lambda: TF.avg_pool2d(t, 3, 2))


@row("max_pool2d 3x3 s2 [32,64,56,56] bf16")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    x = libops.from_numpy(a).to(libops.bfloat16)
    t = tfrom(a).to(torch.bfloat16) if torch is not None else None
    return peers(lambda: libops.max_pool2d(x, [3, 3], [2, 2]),
                 lambda: TF.max_pool2d(t, 3, 2))


@row("avg_pool2d 3x3 s2 [32,64,56,56] bf16")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    x = libops.from_numpy(a).to(libops.bfloat16)
    t = tfrom(a).to(torch.bfloat16) if torch is not None else None
    return peers(lambda: libops.avg_pool2d(x, [3, 3], [2, 2]),
                 lambda: TF.avg_pool2d(t, 3, 2))


@row("max_pool2d 3x3 s2 [32,64,56,56] f32 channels-last")
def _():
    a = RNG.standard_normal((32, 56, 56, 64), dtype=np.float32)
    x = libops.from_numpy(a).permute([0, 3, 1, 2])
    t = tfrom(a).permute(0, 3, 1, 2) if torch is not None else None
    return peers(lambda: libops.max_pool2d(x, [3, 3], [2, 2]),
                 lambda: TF.max_pool2d(t, 3, 2))


@row("max_pool2d_with_indices_backward 3x3 s2 [32,64,56,56] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    gr = RNG.standard_normal((32, 64, 27, 27), dtype=np.float32)
    f = lop("max_pool2d_with_indices_backward")
    x, g = libops.from_numpy(a), libops.from_numpy(gr)
    _, ix = libops.max_pool2d_with_indices(x, [3, 3], [2, 2])
    if torch is not None:
        t, tg = tfrom(a), tfrom(gr)
        _, tix = TF.max_pool2d(t, 3, 2, return_indices=True)
    return peers(f and (lambda: f(g, x, [3, 3], [2, 2], [0, 0], [1, 1], False, ix)),
                 lambda: torch.ops.aten.max_pool2d_with_indices_backward(tg, t, [3, 3], [2, 2], [0, 0], [1, 1],
                                                                         False, tix))


@row("avg_pool2d fwd+bwd 3x3 s2 [32,64,56,56] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    gr = RNG.standard_normal((32, 64, 27, 27), dtype=np.float32)
    return fwd_bwd([a], gr, lambda x: libops.avg_pool2d(x, [3, 3], [2, 2]), lambda t: TF.avg_pool2d(t, 3, 2))


@row("avg_pool2d backward 3x3 s2 [32,64,56,56] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    gr = RNG.standard_normal((32, 64, 27, 27), dtype=np.float32)
    x, g = libops.from_numpy(a).requires_grad_(True), libops.from_numpy(gr)
    y = libops.avg_pool2d(x, [3, 3], [2, 2])
    t, tg = tfrom(a), tfrom(gr)
    return peers(lambda: libops.autograd.grad([y], [x], [g], retain_graph=True),
                 lambda: torch.ops.aten.avg_pool2d_backward(tg, t, [3, 3], [2, 2], [0, 0], False, True, None))


@row("max_pool2d fwd+bwd 3x3 s2 [32,64,56,56] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    gr = RNG.standard_normal((32, 64, 27, 27), dtype=np.float32)
    return fwd_bwd([a], gr, lambda x: libops.max_pool2d(x, [3, 3], [2, 2]), lambda t: TF.max_pool2d(t, 3, 2))


def _adaptive_row(shape, out, is_max=False, bf16=False):
    """adaptive_avg_pool2d (adaptive_max_pool2d with indices when is_max) of a [shape]
    float32 (bfloat16) input to [out, out]."""
    a = RNG.standard_normal(shape, dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    if bf16:
        x, t = x.to(libops.bfloat16), t.to(torch.bfloat16) if torch is not None else None
    if is_max:
        return peers(lambda: libops.adaptive_max_pool2d(x, [out, out]), lambda: TF.adaptive_max_pool2d(t, out, True))
    return peers(lambda: libops.adaptive_avg_pool2d(x, [out, out]), lambda: TF.adaptive_avg_pool2d(t, out))


for _label, _shape, _out, _max, _bf16 in (
        ("adaptive_avg_pool2d [32,512,7,7]->1 f32 (ResNet's head)", (32, 512, 7, 7), 1, False, False),
        ("adaptive_avg_pool2d [32,64,56,56]->[7,7] f32", (32, 64, 56, 56), 7, False, False),
        ("adaptive_avg_pool2d [32,64,56,56]->[5,5] f32 (windows overlap)", (32, 64, 56, 56), 5, False, False),
        ("adaptive_max_pool2d [32,64,56,56]->[7,7] f32", (32, 64, 56, 56), 7, True, False),
        ("adaptive_avg_pool2d [32,512,7,7]->1 bf16", (32, 512, 7, 7), 1, False, True)):
    row(_label)(lambda shape=_shape, out=_out, is_max=_max, bf16=_bf16: _adaptive_row(shape, out, is_max, bf16))


@row("adaptive_avg_pool2d fwd+bwd [32,512,7,7]->1 f32")
def _():
    a = RNG.standard_normal((32, 512, 7, 7), dtype=np.float32)
    gr = RNG.standard_normal((32, 512, 1, 1), dtype=np.float32)
    return fwd_bwd([a], gr, lambda x: libops.adaptive_avg_pool2d(x, [1, 1]), lambda t: TF.adaptive_avg_pool2d(t, 1))


@row("adaptive_avg_pool2d fwd+bwd [32,64,56,56]->[7,7] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    gr = RNG.standard_normal((32, 64, 7, 7), dtype=np.float32)
    return fwd_bwd([a], gr, lambda x: libops.adaptive_avg_pool2d(x, [7, 7]), lambda t: TF.adaptive_avg_pool2d(t, 7))


@row("adaptive_max_pool2d fwd+bwd [32,64,56,56]->[7,7] f32")
def _():
    a = RNG.standard_normal((32, 64, 56, 56), dtype=np.float32)
    gr = RNG.standard_normal((32, 64, 7, 7), dtype=np.float32)
    return fwd_bwd([a], gr, lambda x: libops.adaptive_max_pool2d(x, [7, 7])[0],
                   lambda t: TF.adaptive_max_pool2d(t, 7))


# ---- already fast: regressions show here ----------------------------------------------

@row("mm 1024^3 f32")
def _():
    a = RNG.standard_normal((1024, 1024), dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.mm(x, x), lambda: torch.mm(t, t), lambda: a @ a)


@row("sort 1M f32")
def _():
    a = RNG.standard_normal(N1M, dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.sort(x), lambda: torch.sort(t), lambda: np.sort(a))


@row("index_select 1M of [1M] f32")
def _():
    a = RNG.standard_normal(N1M, dtype=np.float32)
    k = RNG.integers(0, N1M, N1M)
    x, y, t, u = libops.from_numpy(a), libops.from_numpy(k), tfrom(a), tfrom(k)
    return peers(lambda: libops.index_select(x, 0, y), lambda: torch.index_select(t, 0, u),
                 lambda: np.take(a, k))


@row("embedding [32,128] of [50000,512] f32")
def _():
    w = RNG.standard_normal((50000, 512), dtype=np.float32)
    k = RNG.integers(0, 50000, (32, 128))
    x, y, t, u = libops.from_numpy(w), libops.from_numpy(k), tfrom(w), tfrom(k)
    return peers(lambda: libops.nn.functional.embedding(y, x), lambda: TF.embedding(u, t),
                 lambda: np.take(w, k, axis=0))


@row("cumsum 1M f32")
def _():
    a = RNG.standard_normal(N1M, dtype=np.float32)
    x, t = libops.from_numpy(a), tfrom(a)
    return peers(lambda: libops.cumsum(x, 0), lambda: torch.cumsum(t, 0), lambda: np.cumsum(a))


@row("autograd: 10 muls + backward on 16 elements")
def _():
    a = RNG.standard_normal(16, dtype=np.float32)
    x = libops.from_numpy(a).requires_grad_(True)
    t = tfrom(a).clone().requires_grad_(True) if torch is not None else None

    def lib():
        y = x
        for _ in range(10):
            y = y * x
        y.sum().backward()
        x.grad = None

    def tor():
        y = t
        for _ in range(10):
            y = y * t
        y.sum().backward()
        t.grad = None
    return peers(lib, tor)


# --------------------------------------------------------------------------------------

CLOCK = time.perf_counter


def time_one(fn, budget):
    """Seconds per call of fn: calls in a batch sized to take about `budget` seconds
    (by CLOCK: wall time, or this thread's CPU time with --clock cpu)."""
    t0 = CLOCK()
    fn()
    once = CLOCK() - t0
    number = max(1, min(10000, int(budget / max(once, 1e-7))))
    t0 = CLOCK()
    for _ in range(number):
        fn()
    return (CLOCK() - t0) / number


def set_threads(n):
    libops.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default=f"1,{os.cpu_count() or 1}",
                    help="comma-separated thread counts (default: 1 and all cores)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget", type=float, default=0.02, help="seconds per timed batch")
    ap.add_argument("--only", help="regex: run only the rows whose label matches")
    ap.add_argument("--list", action="store_true", help="list the rows and exit")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: elapsed time (default); cpu: the calling thread's CPU time, "
                         "which a loaded machine disturbs far less (one thread only: other "
                         "threads' work is not counted, so --threads is forced to 1)")
    args = ap.parse_args()
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.thread_time
        args.threads = "1"
    rows = [(l, s) for l, s in ROWS if not args.only or re.search(args.only, l)]
    if args.list:
        for l, _ in rows:
            print(l)
        return 0
    threads = sorted({int(t) for t in args.threads.split(",") if t.strip()})

    capability = libops.cpu_capability() if hasattr(libops, "cpu_capability") else "none"
    tcap = "-"
    if torch is not None:
        m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
        tcap = m.group(1) if m else "?"
    print(f"bench_vs_peers: {cpu_model()} ({cpu_flags()}); libops CPU capability {capability}; "
          f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          + (f"torch {torch.__version__} (CPU capability {tcap})" if torch is not None
             else "torch not installed")
          + f"; median of {args.rounds} interleaved rounds, {args.clock} clock; ratio = libops / peer")
    for nt in threads:
        set_threads(nt)
        print(f"-- {nt} thread{'s' if nt > 1 else ''}")
        for label, setup in rows:
            try:
                fns = setup()
            except Exception as e:  # a peer without the op, a libops error: say which
                print(f"  {label:42s} setup failed: {type(e).__name__}: {e}")
                continue
            fns = {k: v for k, v in fns.items() if v}
            if "libops" not in fns:
                print(f"  {label:42s} n/a (no libops op)")
                continue
            notes = []
            for k in list(fns):  # a peer that lacks the case (torch's exp of float16) drops out
                try:
                    fns[k]()
                except Exception as e:
                    if k == "libops":
                        notes.append(f"libops failed: {type(e).__name__}: {e}")
                        break
                    notes.append(f"{k}: {str(e).splitlines()[0][:60]}")
                    del fns[k]
            if "libops" not in fns or notes and notes[0].startswith("libops"):
                print(f"  {label:42s} {notes[0]}")
                continue
            times = {k: [] for k in fns}
            try:
                for _ in range(args.rounds):
                    for k, f in fns.items():
                        times[k].append(time_one(f, args.budget))
            except Exception as e:
                print(f"  {label:42s} failed: {type(e).__name__}: {e}")
                continue
            med = {k: statistics.median(v) for k, v in times.items()}
            line = f"  {label:42s} libops {fmt(med['libops'])}"
            others = [k for k in ("torch", "numpy") if k in med]
            for k in others:
                line += f"  {k} {fmt(med[k])} {med['libops'] / med[k]:6.2f}x"
            if others:
                line += f"  best {med['libops'] / min(med[k] for k in others):6.2f}x"
            if notes:
                line += "  (" + "; ".join(notes) + ")"
            print(line, flush=True)
        del fns
    return 0


def fmt(s):
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    return f"{s * 1e3:8.3f} ms"


if __name__ == "__main__":
    sys.exit(main())

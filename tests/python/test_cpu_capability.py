"""The CPU instruction-set level of the vector loops (docs/cpu-dispatch.md): what
libops.cpu_capability() reports, OPS_CPU_CAPABILITY and its refusals (each in a child
process: the level is chosen once per process), and the vectorised ops (exp, log,
the trigonometric and hyperbolic functions, erf, sqrt, sigmoid, silu, gelu: the
table of kernels/cpu/vec/vec.h) at every level this CPU runs: float32/float64 against
NumPy in float64, the sign of zero results, the same bits whatever the layout, the
length or the start of a run, float16/bfloat16 equal to the float computation rounded
once (every bit pattern of both, bit for bit), and sigmoid's and silu's far negative tails; the fused row loops (softmax,
log_softmax, cross_entropy) against NumPy, the same bits at 1 and 2 threads and for any
subset of rows.  Run by `meson test` (suite python)."""

import os
import subprocess
import sys
import unittest

import numpy as np

import libops as L

LEVELS = ("default", "avx2", "avx512")


def best_level():
    """The best level from /proc/cpuinfo's flags (x86-64 Linux), else 'default'."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return "default"
    if not {"avx2", "fma"} <= set(flags):
        return "default"
    if not {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        return "avx2"
    return "avx512"


def runnable_levels():
    """The levels this CPU runs: default up to the best."""
    best = best_level()
    return LEVELS[:LEVELS.index(best) + 1]


def child(level, code):
    """Runs code in a child python with OPS_CPU_CAPABILITY=level; (stdout, stderr)."""
    env = dict(os.environ)
    if level is None:
        env.pop("OPS_CPU_CAPABILITY", None)
    else:
        env["OPS_CPU_CAPABILITY"] = level
    # run from this directory: a build tree's working directory holds the C libops.so,
    # which `-c` (the current directory first on sys.path) would import as the module
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    if p.returncode != 0:
        raise AssertionError(f"child failed at {level}:\n{p.stdout}\n{p.stderr}")
    return p.stdout, p.stderr


# Run in each child: the checks of the vector loops at the child's level.
VALUES_CHECK = r"""
import math
import numpy as np, libops as L
rng = np.random.default_rng(1)
erf, erfc = np.vectorize(math.erf), np.vectorize(math.erfc)
K = math.sqrt(2 / math.pi)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1.0, -1.0, 89.0, -89.4, 1e20, -3e38, 3e38]
def sig(v):
    return 1.0 / (1.0 + np.exp(-v))
# name, float64 reference, inputs (low, high), the libops call
OPS = [("exp", np.exp, (-30, 30)), ("log", np.log, (1e-6, 1e6)), ("tanh", np.tanh, (-30, 30)),
       ("sigmoid", sig, (-30, 30)), ("expm1", np.expm1, (-30, 30)), ("log1p", np.log1p, (-0.999, 1e6)),
       ("log2", np.log2, (1e-6, 1e6)), ("log10", np.log10, (1e-6, 1e6)), ("sin", np.sin, (-30, 30)),
       ("cos", np.cos, (-30, 30)), ("tan", np.tan, (-30, 30)), ("asin", np.arcsin, (-1, 1)),
       ("acos", np.arccos, (-1, 1)), ("atan", np.arctan, (-30, 30)), ("sinh", np.sinh, (-30, 30)),
       ("cosh", np.cosh, (-30, 30)), ("asinh", np.arcsinh, (-30, 30)), ("acosh", np.arccosh, (1, 1e6)),
       ("atanh", np.arctanh, (-1, 1)), ("erf", erf, (-6, 6)), ("erfc", erfc, (-6, 9)),
       ("sqrt", np.sqrt, (0, 1e6)), ("rsqrt", lambda v: 1 / np.sqrt(v), (1e-6, 1e6)),
       ("silu", lambda v: v * sig(v), (-30, 30)), ("gelu", lambda v: 0.5 * v * erfc(-v / math.sqrt(2)), (-10, 10)),
       ("gelu_tanh", lambda v: v * sig(2 * K * (v + 0.044715 * v ** 3)), (-10, 10))]
def call(name, t):
    return L.gelu(t, approximate="tanh") if name == "gelu_tanh" else getattr(L, name)(t)
for name, ref, (lo, hi) in OPS:
    for dt, rtol in ((np.float32, 2e-6), (np.float64, 4e-15)):
        if name in ("gelu", "gelu_tanh"):
            # erfc(z) amplifies the rounding of z = -x / sqrt 2 by 2 z^2 (x = -10: 100 times),
            # e^t that of t = 2 sqrt(2/pi) (x + 0.044715 x^3) by |t| (x = -10: 87 times), in
            # every float formula of gelu (the scalar one, PyTorch's)
            rtol *= 100
        a = np.concatenate([rng.uniform(lo, hi, 4099), SPECIAL]).astype(dt)
        with np.errstate(all="ignore"):
            want = ref(a.astype(np.float64)).astype(dt)
        got = call(name, L.from_numpy(a)).numpy()
        assert got.dtype == dt, (name, got.dtype)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, err_msg=f"{name} {dt}")
        # the sign of a zero result: sin(-0) is -0, exp(-0) is 1, rsqrt(-0) is -inf
        z = np.array([0.0, -0.0], dtype=dt)
        with np.errstate(all="ignore"):
            zw = ref(z.astype(np.float64)).astype(dt)
        zg = call(name, L.from_numpy(z)).numpy()
        num = ~np.isnan(zw)
        assert np.array_equal(zg, zw, equal_nan=True), (name, dt, zg, zw)
        assert np.array_equal(np.signbit(zg[num]), np.signbit(zw[num])), (name, dt, zg, zw)
        # the same bits through a strided view, in place, and for every tail length and start
        strided = call(name, L.from_numpy(np.repeat(a, 2))[::2]).numpy()
        assert np.array_equal(strided, got, equal_nan=True), (name, dt, "strided")
        if name != "gelu_tanh":
            t = L.from_numpy(a.copy())
            getattr(t, name + "_")()
            assert np.array_equal(t.numpy(), got, equal_nan=True), (name, dt, "in place")
        for n in range(1, 40):
            part = call(name, L.from_numpy(a[3 + n:3 + 2 * n].copy())).numpy()
            assert np.array_equal(part, got[3 + n:3 + 2 * n], equal_nan=True), (name, dt, n)
    # float16 and bfloat16: computed in float (the float32 loop), rounded once, to nearest even
    a = np.concatenate([rng.uniform(max(lo, -60000), min(hi, 60000), 1000), SPECIAL[:-2]]).astype(np.float32)
    for hdt in (L.float16, L.bfloat16):
        h = L.from_numpy(a).to(hdt)
        got = call(name, h).float().numpy()
        want = call(name, h.float()).to(hdt).float().numpy()
        assert np.array_equal(got, want, equal_nan=True), (name, hdt, got[got != want][:5], want[got != want][:5])
        got_s = call(name, L.from_numpy(np.repeat(a, 3)).to(hdt)[::3]).float().numpy()
        assert np.array_equal(got_s, got, equal_nan=True), (name, hdt, "strided")
# float16 and bfloat16, every bit pattern (NaN payloads, quiet and signaling, infinities,
# subnormals, both zeros): the bits of the float32 op on the scalar conversion's float,
# rounded once by the scalar conversion (the cast), NaN's sign and payload rule included;
# through the level's conversion loops (kernels/cpu/vec/vec_convert.c), at a run start
# off the vector width and strided
import ctypes
def bits(t):
    t = t.contiguous()
    out = np.empty(t.numel(), dtype=np.uint16)
    ctypes.memmove(out.ctypes.data, t.data_ptr(), out.nbytes)
    return out
def from_bits(b, hdt):
    t = L.empty(b.size, dtype=hdt)
    b = np.ascontiguousarray(b, dtype=np.uint16)
    ctypes.memmove(t.data_ptr(), b.ctypes.data, b.nbytes)
    return t
ALL = np.arange(65536, dtype=np.uint32).astype(np.uint16)
ties = {L.float16: 0, L.bfloat16: 0}
for name, _, _ in OPS:
    for hdt in (L.float16, L.bfloat16):
        h = from_bits(ALL, hdt)
        f = call(name, h.float())
        want = bits(f.to(hdt))
        got = bits(call(name, h))
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, (name, hdt, [(hex(ALL[i]), hex(got[i]), hex(want[i])) for i in bad[:5]])
        got_o = bits(call(name, from_bits(ALL[3:], hdt)))
        assert np.array_equal(got_o, want[3:]), (name, hdt, "offset")
        got_s = bits(call(name, from_bits(np.repeat(ALL, 2), hdt)[1::2]))
        assert np.array_equal(got_s, want), (name, hdt, "strided")
        # the float32 results exactly halfway between two neighbours of the half type
        fb = f.numpy().view(np.uint32)
        fin = (fb & 0x7f800000) != 0x7f800000
        if hdt == L.float16:
            mag = np.abs(f.numpy())
            ties[hdt] += int(np.sum(fin & (mag >= 2.0 ** -14) & (mag < 65504) & ((fb & 0x1fff) == 0x1000)))
        else:
            ties[hdt] += int(np.sum(fin & ((fb & 0xffff) == 0x8000)))
# rounding ties reached the narrowing (counted over the functions' results)
assert ties[L.float16] > 0 and ties[L.bfloat16] > 0, ties
# sigmoid's and silu's far negative tail is e^x / (1 + e^x), not 0: sigmoid(-95) is a float32 subnormal
x = np.array([-95.0, -100.0, -103.0], dtype=np.float32)
s = L.sigmoid(L.from_numpy(x)).numpy()
want = np.exp(x.astype(np.float64)).astype(np.float32)
assert (s > 0).all() and np.allclose(s, want, rtol=1e-3, atol=0), (s, want)
s = L.silu(L.from_numpy(x)).numpy()
# silu there is x e^x rounded once, within 2 ulp of the smallest exponent (at the levels
# with FMA; the default level multiplies x by its rounded subnormal sigmoid: up to 52 ulp,
# docs/cpu-dispatch.md "Accuracy")
xd = x.astype(np.float64)
want = (xd * np.exp(xd)).astype(np.float32)
tol = (2 if L.cpu_capability() != "default" else 53) * 1.401298464e-45
assert (s < 0).all() and (np.abs(s - want) <= tol).all(), (s, want)
# gelu float64's negative tail at the levels with FMA: x^2 / 2 from x itself, not through the
# rounded -x / sqrt 2 that erfc amplifies by 2 z^2 (1687 ulp at x = -37.6 through SLEEF's
# erfc); within 16 ulp of mpmath's value (subnormal results: of the smallest exponent)
try:
    import mpmath
except ImportError:
    mpmath = None
if mpmath is not None and L.cpu_capability() != "default":
    mpmath.mp.dps = 40
    x = np.concatenate([-np.geomspace(1e-300, 38.5, 400), np.geomspace(1e-300, 40, 100)])
    g = L.gelu(L.from_numpy(x)).numpy()
    for xi, gi in zip(x, g):
        ref = mpmath.mpf(xi) / 2 * mpmath.erfc(-mpmath.mpf(xi) / mpmath.sqrt(2))
        ulp = max(np.spacing(abs(float(ref))), 5e-324)
        assert abs(mpmath.mpf(float(gi)) - ref) <= 16 * ulp, (xi, gi, ref)
# gelu float32 at the levels with FMA within 7 ulp (docs/cpu-dispatch.md: 6.0 at avx2, 6.4
# at avx512 over every float32) where AVX2's one-step reciprocal for t left 8.2 ulp (every
# float32 in +-[0.0150, 0.0154], around x = -0.0152263), and its far tail (x near -13.1,
# subnormal results: of the smallest exponent) and underflow to -0
if L.cpu_capability() != "default":
    near0 = np.arange(np.float32(0.0150).view(np.int32), np.float32(0.0154).view(np.int32)).view(np.float32)
    x = np.concatenate([near0, -near0, np.linspace(-13.2, -12.9, 20001, dtype=np.float32)])
    g = L.gelu(L.from_numpy(x)).numpy()
    xd = x.astype(np.float64)
    ref = 0.5 * xd * erfc(-xd / math.sqrt(2))
    ulp = np.maximum(np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64), 1.401298464e-45)
    err = np.abs(g.astype(np.float64) - ref) / ulp
    assert err.max() <= 7, (err.max(), x[err.argmax()])
    z = L.gelu(L.from_numpy(np.array([-20.0, -1e30, -np.inf], dtype=np.float32))).numpy()
    assert z[0] == 0 and z[1] == 0 and np.signbit(z[:2]).all() and np.isnan(z[2]), z
print(L.cpu_capability())
"""

# Run in each child: the fused row loops (kernels/cpu/vec/vec_rows.c) at the child's
# level: against NumPy in float64, and the same bits whatever the thread count and
# whichever rows are computed together (one thread computes a whole row).
ROWS_CHECK = r"""
import numpy as np, libops as L
rng = np.random.default_rng(2)
def softmax64(x, d):
    e = np.exp(x - x.max(axis=d, keepdims=True))
    return e / e.sum(axis=d, keepdims=True)
for dt, rtol in ((np.float32, 1e-5), (np.float64, 1e-12)):
    for shape, d in (((33, 1000), 1), ((5, 37), 1), ((4, 19, 45), 1), ((3, 7, 5), 1)):
        x = (rng.standard_normal(shape) * 4).astype(dt)
        runs = {}
        for n in (1, 2):
            L.set_num_threads(n)
            runs[n] = [getattr(L, f)(L.from_numpy(x), d).numpy() for f in ("softmax", "log_softmax")]
        for a, b in zip(runs[1], runs[2]):
            assert np.array_equal(a, b), (shape, dt, "threads")
        want = softmax64(x.astype(np.float64), d)
        np.testing.assert_allclose(runs[1][0], want, rtol=rtol, atol=1e-7, err_msg=f"softmax {shape} {dt}")
        np.testing.assert_allclose(runs[1][1], np.log(want), rtol=rtol, atol=1e-6, err_msg=f"log_softmax {dt}")
        if d == 1 and len(shape) == 2:
            part = L.softmax(L.from_numpy(x[2:5].copy()), 1).numpy()
            assert np.array_equal(part, runs[1][0][2:5]), (shape, dt, "rows")
    c = (rng.standard_normal((300, 37)) * 3).astype(dt)
    t = rng.integers(0, 37, 300)
    t[::7] = -100
    out = []
    for n in (1, 2):
        L.set_num_threads(n)
        out.append(L.cross_entropy_loss(L.from_numpy(c), L.from_numpy(t), None, 0, -100).numpy())
    assert np.array_equal(out[0], out[1]), (dt, "cross_entropy threads")
    lp = np.log(softmax64(c.astype(np.float64), 1))
    want = np.where(t == -100, 0.0, -lp[np.arange(300), np.where(t == -100, 0, t)])
    np.testing.assert_allclose(out[0], want, rtol=rtol, atol=1e-6, err_msg=f"cross_entropy {dt}")
print(L.cpu_capability())
"""

# Run in each child: the activations of kernels/cpu/vec/vec_act.c at the child's level:
# float16/bfloat16 through the float32 loop (every bit pattern of both, bit for bit the
# float32 op rounded once; at a run start off the vector width and strided), and the elu
# family's expm1 without exp (against NumPy's expm1 in float64; -0 kept; a strided run
# and every tail give the same bits).
ACT_CHECK = r"""
import ctypes
import numpy as np, libops as L
def bits(t):
    t = t.contiguous()
    out = np.empty(t.numel(), dtype=np.uint16)
    ctypes.memmove(out.ctypes.data, t.data_ptr(), out.nbytes)
    return out
def from_bits(b, hdt):
    t = L.empty(b.size, dtype=hdt)
    b = np.ascontiguousarray(b, dtype=np.uint16)
    ctypes.memmove(t.data_ptr(), b.ctypes.data, b.nbytes)
    return t
ACTS = {"elu": lambda t: L.elu(t), "selu": lambda t: L.selu(t), "celu": lambda t: L.celu(t, 1.5),
        "elu_neg_alpha": lambda t: L.elu(t, -0.7, 1.0, -2.0),
        "softplus": lambda t: L.softplus(t, 2.0, 15.0), "mish": lambda t: L.mish(t),
        "log_sigmoid": lambda t: L.log_sigmoid(t), "hardsigmoid": lambda t: L.hardsigmoid(t),
        "hardswish": lambda t: L.hardswish(t), "leaky_relu": lambda t: L.leaky_relu(t, 0.125)}
ALL = np.arange(65536, dtype=np.uint32).astype(np.uint16)
for name, f in ACTS.items():
    for hdt in (L.float16, L.bfloat16):
        h = from_bits(ALL, hdt)
        want = bits(f(h.float()).to(hdt))
        got = bits(f(h))
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, (name, hdt, [(hex(ALL[i]), hex(got[i]), hex(want[i])) for i in bad[:5]])
        assert np.array_equal(bits(f(from_bits(ALL[3:], hdt))), want[3:]), (name, hdt, "offset")
        got_s = bits(f(from_bits(np.repeat(ALL, 2), hdt)[1::2]))
        assert np.array_equal(got_s, want), (name, hdt, "strided")
rng = np.random.default_rng(3)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, -1e-7, -0.34, -0.35, -0.5, -17.0, -20.0, -21.0,
           -40.0, -41.0, -88.0, -1e30, 1.0, 88.0]
for dt, rtol in ((np.float32, 2e-7), (np.float64, 4e-16)):
    a = np.concatenate([rng.uniform(-25, 3, 4099), -10.0 ** rng.uniform(-30, 1, 999), SPECIAL]).astype(dt)
    x64 = a.astype(np.float64)
    for name, alpha, scale, iscale in (("elu", 1.0, 1.0, 1.0), ("elu", 2.5, 1.5, 0.25)):
        got = L.elu(L.from_numpy(a), alpha, scale, iscale).numpy()
        with np.errstate(all="ignore"):
            want = np.where(x64 > 0, scale * x64, np.expm1(x64 * dt(iscale)) * dt(alpha * scale))
        # rtol: about 3 ulp, the table's figure with margin
        np.testing.assert_allclose(got, want.astype(dt), rtol=8 * rtol, atol=0, err_msg=f"elu {dt}")
        neg0 = np.signbit(got[(a == 0) & np.signbit(a)])
        assert neg0.all(), (dt, "elu(-0) is -0")
        strided = L.elu(L.from_numpy(np.repeat(a, 2))[::2], alpha, scale, iscale).numpy()
        assert np.array_equal(strided, got, equal_nan=True), (dt, "strided")
        for n in range(1, 40):
            part = L.elu(L.from_numpy(a[5 + n:5 + 2 * n].copy()), alpha, scale, iscale).numpy()
            assert np.array_equal(part, got[5 + n:5 + 2 * n], equal_nan=True), (dt, n)
print(L.cpu_capability())
"""


# Run in each child: layer_norm's fused backward (native_layer_norm_backward's row loop)
# at the child's level: the three gradients against NumPy in float64 through autograd
# (layer_norm and native_layer_norm) and called directly with each output_mask, the
# same bits at 1 and 2 threads (dweight/dbias are summed per fixed chunk of rows), and
# double backward (create_graph records native_layer_norm_backward, whose own
# derivative gives the second order).
LN_BWD_CHECK = r"""
import numpy as np, libops as L
rng = np.random.default_rng(3)
def grads64(x, w, g, k):
    n = int(np.prod(x.shape[-k:]))
    x2, g2 = x.reshape(-1, n), g.reshape(-1, n)
    mu = x2.mean(1, keepdims=True)
    rs = 1 / np.sqrt(x2.var(1, keepdims=True) + 1e-5)
    xh = (x2 - mu) * rs
    gw = g2 * w.reshape(1, n)
    dx = (gw - gw.mean(1, keepdims=True) - xh * (gw * xh).mean(1, keepdims=True)) * rs
    return dx.reshape(x.shape), (g2 * xh).sum(0).reshape(w.shape), g2.sum(0).reshape(w.shape)
for dt, tol in ((np.float32, 2e-4), (np.float64, 1e-10)):
    for shape, k in (((70, 37), 1), ((3, 5, 7), 2), ((2, 1030), 1), ((33, 16), 1), ((1, 1), 1)):
        ns = list(shape[-k:])
        x = (rng.standard_normal(shape) * 3 + 1).astype(dt)
        w = rng.standard_normal(ns).astype(dt)
        b = rng.standard_normal(ns).astype(dt)
        g = rng.standard_normal(shape).astype(dt)
        want = grads64(x.astype(np.float64), w.astype(np.float64), g.astype(np.float64), k)
        runs = []
        for n in (1, 2):
            L.set_num_threads(n)
            lx, lw, lb = (L.from_numpy(v).requires_grad_(True) for v in (x, w, b))
            L.layer_norm(lx, ns, lw, lb).backward(L.from_numpy(g))
            runs.append([t.grad.numpy().copy() for t in (lx, lw, lb)])
            nx = L.from_numpy(x).requires_grad_(True)
            y, m, r = L.native_layer_norm(nx, ns, L.from_numpy(w), L.from_numpy(b), 1e-5)
            y.backward(L.from_numpy(g))
            # from the forward's saved statistics (layer_norm recomputes them: not the same bits)
            assert np.allclose(nx.grad.numpy(), runs[-1][0], rtol=tol, atol=tol), (shape, dt, "native_layer_norm")
        for a, c in zip(runs[0], runs[1]):
            assert np.array_equal(a, c), (shape, dt, "threads")
        for got, ref in zip(runs[0], want):
            scale = max(1.0, np.abs(ref).max())
            assert np.abs(got - ref).max() <= tol * scale, (shape, dt, np.abs(got - ref).max())
        m, r = L.from_numpy(m.detach().numpy()), L.from_numpy(r.detach().numpy())
        full = nx.grad.numpy(), runs[0][1], runs[0][2]
        for mask in ([True, False, False], [False, True, False], [False, False, True], [True, True, True]):
            out = L.native_layer_norm_backward(L.from_numpy(g), L.from_numpy(x), ns, m, r, L.from_numpy(w), None, mask)
            for i in range(3):
                if mask[i]:
                    same = np.array_equal(out[i].numpy(), full[i]) if i == 0 else \
                        np.allclose(out[i].numpy(), full[i], rtol=tol, atol=tol)
                    assert same, (shape, dt, mask, i)
                else:
                    assert out[i].shape == (0,), (shape, mask, i)
# double backward: the gradient of sum(dx * v) with create_graph, against finite differences
x = rng.standard_normal((3, 6))
w = rng.standard_normal(6)
v = rng.standard_normal((3, 6))
def dx_dot_v(xv):
    lx, lw = L.from_numpy(xv).requires_grad_(True), L.from_numpy(w).requires_grad_(True)
    y = L.layer_norm(lx, [6], lw, None)
    (gx,) = L.autograd.grad([y], [lx], [L.from_numpy(np.ones((3, 6)))], create_graph=True)
    return lx, (gx * L.from_numpy(v)).sum()
lx, s = dx_dot_v(x)
(h,) = L.autograd.grad([s], [lx])
num = np.zeros_like(x)
for i in np.ndindex(x.shape):
    e = np.zeros_like(x)
    e[i] = 1e-6
    num[i] = (dx_dot_v(x + e)[1].item() - dx_dot_v(x - e)[1].item()) / 2e-6
assert np.allclose(h.numpy(), num, rtol=1e-5, atol=1e-7), (h.numpy(), num)
print(L.cpu_capability())
"""

class TestCpuCapability(unittest.TestCase):
    def test_reports_the_best_level_by_default(self):
        out, err = child(None, "import libops; print(libops.cpu_capability())")
        self.assertEqual(out.strip(), best_level())
        self.assertEqual(err, "")
        self.assertIn(L.cpu_capability(), LEVELS)

    def test_a_supported_lower_level_is_used_silently(self):
        out, err = child("default", "import libops; print(libops.cpu_capability())")
        self.assertEqual((out.strip(), err), ("default", ""))

    def test_an_unknown_level_is_refused_with_the_best_used(self):
        out, err = child("sse9", "import libops; print(libops.cpu_capability())")
        self.assertEqual(out.strip(), best_level())
        self.assertEqual(err.strip(), "libops: OPS_CPU_CAPABILITY=sse9 is not a level (default, avx2, avx512); "
                                      f"using {best_level()}")

    def test_a_level_the_cpu_lacks_is_refused(self):
        best = best_level()
        higher = LEVELS[LEVELS.index(best) + 1:]
        if not higher:
            self.skipTest(f"this CPU runs every level ({best}): none to refuse")
        out, err = child(higher[-1], "import libops; print(libops.cpu_capability())")
        self.assertEqual(out.strip(), best)
        self.assertIn(f"OPS_CPU_CAPABILITY={higher[-1]}: this CPU lacks", err)
        self.assertIn(f"using {best}", err)

    def check_every_level(self, script):
        """Run a check script in a child process at each level this CPU supports; the script
        prints the level it ran at, and nothing may go to stderr."""
        for level in runnable_levels():
            with self.subTest(level=level):
                out, err = child(level, script)
                self.assertEqual((out.strip(), err), (level, ""))

    def test_vector_ops_at_every_level(self):
        self.check_every_level(VALUES_CHECK)

    def test_activations_at_every_level(self):
        self.check_every_level(ACT_CHECK)

    def test_row_kernels_at_every_level(self):
        self.check_every_level(ROWS_CHECK)

    def test_layer_norm_backward_at_every_level(self):
        self.check_every_level(LN_BWD_CHECK)


if __name__ == "__main__":
    unittest.main()

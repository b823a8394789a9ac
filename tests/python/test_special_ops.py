"""erfinv, logit and cbrt (kernels/cpu/special.c, the vector loops of
kernels/cpu/vec/vec_special.c; docs/cpu-dispatch.md "erfinv, logit, cbrt") at every
CPU level this machine runs, each in a child process with OPS_CPU_CAPABILITY set:
against oracles that need neither SciPy nor libops -- NumPy's np.cbrt, erfinv by
erf(erfinv(x)) == x in float64 (math.erf, math.erfc in the tails) and PyTorch's erfinv
when it is installed, logit by its formula in float64 (exact near 1/2) -- in ulps of the
result, with the edges (+-1, 0, 1, outside the domain, NaN, subnormals); the same bits
whatever the layout or the start of a run; float16/bfloat16 as the float32 op rounded
once; integer inputs promoted to float32; the out= and in-place forms; logit's eps and
its gradient (PyTorch's logit_backward: NaN outside [0, 1] without eps, 0 outside
[eps, 1 - eps] with it), erfinv's and cbrt's gradients.  Run by `meson test`
(suite python)."""

import unittest

from test_cpu_capability import best_level, child as child_at_level, runnable_levels  # noqa: E402


def child(level, code):
    """code's stdout in a child python at OPS_CPU_CAPABILITY=level (test_cpu_capability.child)."""
    return child_at_level(level, code)[0]


CHECK = r"""
import math
from fractions import Fraction
import numpy as np, libops as L
np.seterr(all="ignore")
rng = np.random.default_rng(3)
assert L.cpu_capability() == LEVEL, (L.cpu_capability(), LEVEL)

def ulps(got, want, dt):
    # |got - want| in ulps of dt at want's exponent; equal values (inf, NaN pairs) 0
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    fin = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), "NaN mismatch"
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)]), "inf mismatch"
    info = np.finfo(dt)
    e = np.floor(np.log2(np.maximum(np.abs(want[fin]), float(info.tiny))))
    spacing = np.ldexp(1.0, (e - info.nmant).astype(int))
    err = np.abs(got[fin] - want[fin]) / spacing
    return float(err.max()) if err.size else 0.0

def erfinv_ref1(x):
    # float64 bisection on erf (erfc for |x| > 1/2): the r where the sign changes
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    a = abs(x)
    if a == 1:
        return math.copysign(math.inf, x)
    if a == 0:
        return x
    below = (lambda r: math.erf(r) < a) if a <= 0.5 else (lambda r, q=1.0 - a: math.erfc(r) > q)
    lo, hi = 0.0, 30.0
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return math.copysign(hi, x)
        lo, hi = (mid, hi) if below(mid) else (lo, mid)
erfinv_ref = np.vectorize(erfinv_ref1, otypes=[np.float64])

def logit_ref1(x):
    if math.isnan(x) or x < 0 or x > 1:
        return math.nan
    if x in (0.0, 1.0):
        return math.copysign(math.inf, x - 0.5)
    if 0.25 <= x <= 0.75:
        f = Fraction(x)
        return math.log1p(float((2 * f - 1) / (1 - f)))
    return math.log(x) - math.log1p(-x)
logit_ref = np.vectorize(logit_ref1, otypes=[np.float64])

def t(a):
    return L.from_numpy(np.ascontiguousarray(a))

EDGES = {
    "erfinv": [1.0, -1.0, 1.0000001, -1.5, 0.9999999, -0.99999, 0.9966, 0.9967, 0.9, 0.90001, 0.5, -0.5,
               1e-30, -1e-38, 1e-45, 0.0, -0.0, np.nan, np.inf, -np.inf],
    "logit": [0.0, 1.0, -0.0, -0.5, 1.5, 0.5, 0.50000006, 0.49999997, 0.4999, 0.9999999, 1e-30, 1e-45,
              0.25, 0.75, np.nan, np.inf, -np.inf],
    "cbrt": [-8.0, 27.0, -1e-45, 1e-45, -1e-40, 1e-38, 3e38, -3e38, 3.4028235e38, -3.4028235e38, 0.0, -0.0, np.nan, np.inf, -np.inf, 0.001,
             # the exponent split's edges: 2^e for e mod 3 = 0, 1, 2 and just below,
             # the smallest normal and the largest subnormal
             0.125, 0.25, 0.5, 0.99999994, 1.0, 1.9999999, 2.0, 3.9999998, 4.0, 7.9999995, -1.1754944e-38, 1.1754942e-38],
}
EDGES64 = {
    "erfinv": [0.9999999999999999, -0.999999999999, 1 - 2.0**-40, 5e-324, -1e-300],
    "logit": [0.5 + 2.0**-53, 0.5 - 2.0**-54, 1 - 2.0**-53, 5e-324, 0.3],
    "cbrt": [5e-324, -2.2e-308, 1.7e308, -1e-310, -1e300, 2.2250738585072014e-308, 2.225073858507201e-308,
             0.9999999999999999, 1.9999999999999998, 7.999999999999999, 1.7976931348623157e308],
}
# The bounds (ulps against the float64 references rounded to the dtype, so a float64
# bound includes the reference's own rounding) are the measured maxima with a margin
# (docs/cpu-dispatch.md "erfinv, logit, cbrt").
BOUND = {("erfinv", "float32"): 8, ("erfinv", "float64"): 4, ("logit", "float32"): 2,
         ("logit", "float64"): 3, ("cbrt", "float32"): 1, ("cbrt", "float64"): 2}
for name in ("erfinv", "logit", "cbrt"):
    for dt in ("float32", "float64"):
        npdt = np.dtype(dt)
        if name == "erfinv":
            draw = np.concatenate([rng.uniform(-1, 1, 20000), 1 - 10 ** -rng.uniform(0, 16, 3000),
                                   -(1 - 10 ** -rng.uniform(0, 16, 3000)), 10 ** -rng.uniform(0, 40, 2000)])
            ref = erfinv_ref
        elif name == "logit":
            draw = np.concatenate([rng.uniform(0, 1, 20000), 0.5 + rng.uniform(-1e-3, 1e-3, 3000),
                                   10 ** -rng.uniform(0, 40, 2000), 1 - 10 ** -rng.uniform(0, 16, 2000),
                                   # every exponent of r = x / (1 - x) the own log splits (float64)
                                   10 ** -rng.uniform(0, 324, 2000)])
            ref = logit_ref
        else:
            draw = np.concatenate([rng.uniform(-1e3, 1e3, 20000), rng.standard_normal(2000) * 10.0 ** rng.integers(-300, 300, 2000)])
            ref = np.cbrt
        x = np.concatenate([draw, EDGES[name] + (EDGES64[name] if dt == "float64" else [])]).astype(npdt)
        with np.errstate(all="ignore"):
            want = ref(x.astype(np.float64)).astype(npdt)
            if name == "cbrt":  # round the float64 cbrt once more only at float32
                want = np.cbrt(x.astype(np.float64)).astype(npdt)
        got = getattr(L, name)(t(x)).numpy()
        assert got.dtype == npdt, (name, dt, got.dtype)
        # the sign of zero results: erfinv(-0) = -0, cbrt(-0) = -0
        z = want == 0
        assert np.array_equal(np.signbit(got[z]), np.signbit(want[z])), (name, dt, x[z], got[z])
        err = ulps(got, want, npdt)
        print(name, dt, "max ulp", round(err, 3))
        assert err <= BOUND[(name, dt)], (name, dt, err)
        if name == "erfinv":
            # the invariant: erf(erfinv(x)) == x within erf's slope times the result's ulps
            fin = np.isfinite(got) & (np.abs(x) < 0.999)
            back = np.vectorize(math.erf)(got[fin].astype(np.float64))
            slope = 2 / math.sqrt(math.pi) * np.exp(-got[fin].astype(np.float64) ** 2)
            tol = slope * np.abs(got[fin].astype(np.float64)) * BOUND[(name, dt)] * np.finfo(npdt).eps + np.finfo(npdt).tiny
            assert np.all(np.abs(back - x[fin]) <= tol + 2 * np.finfo(np.float64).eps), name
        # the same bits whatever the layout or the start of a run (the padded tail)
        n = 301
        base = got[:n]
        for start in (1, 5, 13, 17):
            sub = getattr(L, name)(t(x[start:n])).numpy()
            assert np.array_equal(sub.view(np.uint8), base[start:].view(np.uint8)), (name, dt, start)
        wide = np.zeros((n, 3), npdt)
        wide[:, 1] = x[:n]
        col = getattr(L, name)(t(wide)[:, 1]).numpy()
        assert np.array_equal(col.view(np.uint8), base.view(np.uint8)), (name, dt, "strided")
        # out= and in-place give the functional's bits
        out = L.empty([n], dtype=getattr(L, dt))
        getattr(L, name)(t(x[:n]), out=out)
        assert np.array_equal(out.numpy().view(np.uint8), base.view(np.uint8)), (name, dt, "out")
        ip = t(x[:n].copy())
        getattr(ip, name + "_")()
        assert np.array_equal(ip.numpy().view(np.uint8), base.view(np.uint8)), (name, dt, "inplace")
    # float16/bfloat16: the float32 op on the (converted) input, rounded once
    for hdt in (L.float16, L.bfloat16):
        x32 = rng.uniform(-0.999 if name == "erfinv" else (0 if name == "logit" else -50),
                          0.999 if name != "cbrt" else 50, 997).astype(np.float32)
        h = t(x32).to(hdt)
        got = getattr(L, name)(h)
        want = getattr(L, name)(h.to(L.float32)).to(hdt)
        assert got.dtype == hdt
        a, b = got.to(L.float32).numpy(), want.to(L.float32).numpy()
        assert np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(a[~np.isnan(a)], b[~np.isnan(b)]), (name, hdt)
    # integers promote to the default float dtype
    r = getattr(L, name)(L.from_numpy(np.array([0, 1, 2, -1], np.int64)))
    assert r.dtype == L.float32, (name, r.dtype)

# logit's eps clamps into [eps, 1 - eps] (NaN stays NaN)
for dt in (np.float32, np.float64):
    x = np.array([-1.0, 0.0, 0.1, 0.2, 0.5, 0.8, 0.95, 1.0, 2.0, np.nan], dt)
    got = L.logit(t(x), eps=0.2).numpy()
    e = float(dt(0.2)); hi = float(dt(1) - dt(0.2))
    want = logit_ref(np.where(np.isnan(x), x, np.clip(x.astype(np.float64), e, hi))).astype(dt)
    assert ulps(got, want, dt) <= 4, (got, want)
    got0 = L.logit(t(x), eps=0.0).numpy()  # eps = 0: clamp to [0, 1]: -inf / inf, never NaN but for NaN
    assert got0[0] == -np.inf and got0[8] == np.inf and np.isnan(got0[9])
print("ok")
"""

GRAD_CHECK = r"""
import math
import numpy as np, libops as L
np.seterr(all="ignore")
def t(a, g=False):
    r = L.from_numpy(np.ascontiguousarray(a))
    if g:
        r.requires_grad_(True)
    return r
x = np.array([-0.5, 0.0, 0.1, 0.19, 0.2, 0.5, 0.8, 0.81, 1.0, 1.5], np.float64)
for eps in (None, 0.2):
    a = t(x, True)
    L.logit(a, eps).sum().backward() if eps is not None else L.logit(a).sum().backward()
    g = a.grad.numpy()
    with np.errstate(all="ignore"):
        inner = np.where((x == 0) | (x == 1), np.inf, 1 / (x * (1 - x)))
    if eps is None:
        want = np.where((x < 0) | (x > 1), np.nan, inner)
    else:
        want = np.where((x < 0.2) | (x > 0.8), 0.0, inner)
    assert np.array_equal(np.isnan(g), np.isnan(want)), (eps, g, want)
    m = ~np.isnan(want)
    assert np.allclose(g[m], want[m], rtol=1e-14, atol=0), (eps, g, want)
# the functional logit_backward
gb = L.logit_backward(t(np.full(10, 2.0)), t(x), 0.2).numpy()
assert np.allclose(gb[5], 8.0) and gb[0] == 0 and gb[9] == 0
# erfinv: sqrt(pi)/2 exp(erfinv(x)^2); cbrt: 1 / (3 cbrt(x)^2)
xe = np.array([-0.9, -0.3, 0.0, 0.4, 0.99])
a = t(xe, True)
y = L.erfinv(a)
y.sum().backward()
yv = y.detach().numpy()
assert np.allclose(a.grad.numpy(), math.sqrt(math.pi) / 2 * np.exp(yv ** 2), rtol=1e-14)
xc = np.array([-8.0, -0.001, 0.5, 27.0])
a = t(xc, True)
L.cbrt(a).sum().backward()
assert np.allclose(a.grad.numpy(), 1 / (3 * np.cbrt(xc) ** 2), rtol=1e-14)
print("ok")
"""


class SpecialOps(unittest.TestCase):
    def test_values_every_level(self):
        for level in runnable_levels():
            with self.subTest(level=level):
                out = child(level, f"LEVEL = {level!r}\n" + CHECK)
                print(level, out.replace("\n", "; "))
                self.assertIn("ok", out)

    def test_gradients(self):
        self.assertIn("ok", child(best_level(), GRAD_CHECK))

    def test_against_torch(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("torch is not installed")
        code = r"""
import numpy as np, libops as L, torch
rng = np.random.default_rng(5)
for dt, tol in ((np.float32, 4e-6), (np.float64, 1e-14)):
    x = np.concatenate([rng.uniform(-0.999, 0.999, 5000), [0.0, -0.0, 1.0, -1.0, 2.0, np.nan]]).astype(dt)
    a = L.erfinv(L.from_numpy(x)).numpy()
    b = torch.erfinv(torch.from_numpy(x)).numpy()
    assert np.allclose(a, b, rtol=tol, atol=0, equal_nan=True), np.max(np.abs(a - b) / np.abs(b))
    x = np.concatenate([rng.uniform(0.001, 0.999, 5000), [0.0, 1.0, -1.0, 2.0, np.nan]]).astype(dt)
    for eps in (None, 0.1):
        a = L.logit(L.from_numpy(x), eps).numpy() if eps is not None else L.logit(L.from_numpy(x)).numpy()
        b = torch.logit(torch.from_numpy(x), eps).numpy()
        # torch's log(x / (1 - x)) loses digits near 1/2; compare away from it
        m = np.abs(x - 0.5) > 0.01
        assert np.allclose(a[m], b[m], rtol=tol, atol=0, equal_nan=True)
print("ok")
"""
        self.assertIn("ok", child(best_level(), code))


if __name__ == "__main__":
    unittest.main()

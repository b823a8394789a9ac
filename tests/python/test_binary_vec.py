"""The vector loops of add, sub, mul, div, maximum, minimum, fmax and fmin (kernels/cpu/vec/vec_binary.c,
docs/cpu-dispatch.md "Elementwise loops and threads") at every CPU level this machine
runs, each in a child process with OPS_CPU_CAPABILITY set: every layout the iterator's
inner loop meets (both contiguous, a row or column broadcast, a 0-dim operand on either
side, strided and transposed inputs, in place), lengths around the vector widths, and
special values, bit for bit against the scalar rule: float32/float64 IEEE arithmetic
(x + alpha * y with two roundings; maximum/minimum: NaN when either is NaN, x on ties, so
maximum(-0.0, 0.0) is -0.0; fmax/fmin: a NaN loses to a number, NaN when both are, x on
ties; and against NumPy's np.fmax/np.fmin), float16/bfloat16 computed in float32 and rounded
once to nearest-even, NaN stored as the quiet NaN of the scalar conversion.  Run by
`meson test` (suite python)."""

import os
import subprocess
import sys
import unittest

LEVELS = ("default", "avx2", "avx512")

CHECK = r"""
import numpy as np, libops as L
np.seterr(all="ignore")
rng = np.random.default_rng(7)
SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 65504.0, 65520.0, 7e4,
                    6e-8, 3e-8, 1e-40, 3.4e38, 1.00048828125, 1.0009765625, 2.0**-14, 1 + 2.0**-8,
                    # with 1.0, 3.0, 1.5: sums and products exactly halfway between two
                    # float16 (2^-11) or bfloat16 (2^-8, 2^-9 at 2) values, where only
                    # round-to-nearest-even decides
                    2.0**-8, 2.0**-9, 2.0**-11, 2.0**-12, 3.0, 1.5, 1 + 2.0**-7, 1 + 2.0**-10], np.float32)

def bf16_round(f32):
    # round-to-nearest-even to bfloat16, NaN -> quiet (u >> 16 | 0x40): the scalar rule
    shape = np.shape(f32)
    f32 = np.array(f32, np.float32).reshape(-1)
    u = f32.view(np.uint32).astype(np.uint64)
    c16, one = np.uint64(16), np.uint64(1)
    r = ((u + np.uint64(0x7fff) + ((u >> c16) & one)) >> c16) & np.uint64(0xffff)
    nan = np.isnan(f32)
    r[nan] = (u[nan] >> c16) | np.uint64(0x40)
    return (r.astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(shape)

def as_np(t):
    return t.to(L.float32).numpy() if t.dtype in (L.float16, L.bfloat16) else t.numpy()

def inputs(dt, x32):
    # the values a tensor of dtype dt holds for float32 values x32, as float32 (or float64)
    if dt == "float16":
        return x32.astype(np.float16).astype(np.float32)
    if dt == "bfloat16":
        return bf16_round(x32)
    return x32.astype(np.float64) if dt == "float64" else x32

def tensor(dt, v):
    t = L.from_numpy(np.array(v, order="C"))
    return t.to(getattr(L, dt)) if dt in ("float16", "bfloat16") else t

def want(dt, op, a, b, alpha):
    ct = np.float64 if dt == "float64" else np.float32
    a, b, al = a.astype(ct), b.astype(ct), ct(alpha)
    with np.errstate(all="ignore"):
        r = {"add": lambda: a + (b if alpha == 1 else al * b), "sub": lambda: a - (b if alpha == 1 else al * b),
             "mul": lambda: a * b, "div": lambda: a / b,
             "maximum": lambda: np.where((a >= b) | np.isnan(a), a, b),
             "minimum": lambda: np.where((a <= b) | np.isnan(a), a, b),
             "fmax": lambda: np.where(np.isnan(a) | (b > a), b, a),
             "fmin": lambda: np.where(np.isnan(a) | (b < a), b, a)}[op]()
    if dt == "float16":
        return r.astype(np.float16).astype(np.float32)
    if dt == "bfloat16":
        return bf16_round(r)
    return r

def same(got, exp):
    got, exp = np.asarray(got), np.asarray(exp)
    nan = np.isnan(exp)
    return got.shape == exp.shape and np.array_equal(np.isnan(got), nan) and \
        np.array_equal(got[~nan].view(np.uint32 if got.dtype == np.float32 else np.uint64),
                       exp[~nan].astype(got.dtype).view(np.uint32 if got.dtype == np.float32 else np.uint64))

def call(op, x, y, alpha, out=None):
    kw = {} if op in NO_ALPHA else {"alpha": alpha}
    if out is not None:
        kw["out"] = out
    return getattr(L, op)(x, y, **kw)

NO_ALPHA = ("mul", "div", "maximum", "minimum", "fmax", "fmin")
n_checked = 0
for dt in ("float32", "float64", "float16", "bfloat16"):
    for op, alphas in (("add", (1, 2.5)), ("sub", (1, -3.0)), ("mul", (1,)), ("div", (1,)), ("maximum", (1,)),
                       ("minimum", (1,)), ("fmax", (1,)), ("fmin", (1,))):
        for alpha in alphas:
            for n in (1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 67):
                pool = np.concatenate([rng.standard_normal(64).astype(np.float32) * 100, SPECIAL])
                xa = inputs(dt, rng.choice(pool, (3, n)).astype(np.float32))
                ya = inputs(dt, rng.choice(pool, (3, n)).astype(np.float32))
                row = inputs(dt, rng.choice(pool, n).astype(np.float32))
                col = inputs(dt, rng.choice(pool, (3, 1)).astype(np.float32))
                s = inputs(dt, np.array(rng.choice(pool), np.float32))
                X, Y, R, C, S = (tensor(dt, v) for v in (xa, ya, row, col, s))
                cases = [(X, Y, xa, ya), (X, R, xa, row), (R, X, row, xa), (X, C, xa, col), (C, X, col, xa),
                         (X, S, xa, s), (S, X, s, xa), (S, S, s, s)]
                # strided and transposed inputs: the macro's own loop
                cases.append((X.t(), Y.t(), xa.T, ya.T))
                xb = np.repeat(xa, 2, axis=1)
                cases.append((tensor(dt, xb)[:, ::2], Y, xb[:, ::2], ya))
                for x, y, a, b in cases:
                    got = as_np(call(op, x, y, alpha))
                    exp = want(dt, op, a, b, alpha)
                    assert same(got, exp), (dt, op, alpha, n, a.shape, b.shape, got, exp)
                    n_checked += 1
                # in place and out=
                t = tensor(dt, xa)
                if hasattr(t, op + "_"):
                    getattr(t, op + "_")(R, **({} if op in NO_ALPHA else {"alpha": alpha}))
                    assert same(as_np(t), want(dt, op, xa, row, alpha)), (dt, op, "in place")
                o = tensor(dt, np.zeros((3, n), np.float32))
                call(op, X, S, alpha, out=o)
                assert same(as_np(o), want(dt, op, xa, s, alpha)), (dt, op, "out=")
# fmax/fmin against NumPy's np.fmax/np.fmin (a NaN loses to a number), zero signs aside
# (NumPy gives other on a tie of +0 and -0, PyTorch and libops self), every dtype
for dt in ("float32", "float64", "float16", "bfloat16"):
    pool = np.concatenate([rng.standard_normal(64).astype(np.float32) * 100, SPECIAL])
    for n in (5, 16, 37, 67):
        xa, ya = (inputs(dt, rng.choice(pool, (3, n)).astype(np.float32)) for _ in range(2))
        for op, npf in (("fmax", np.fmax), ("fmin", np.fmin)):
            got = as_np(call(op, tensor(dt, xa), tensor(dt, ya), 1))
            ref = npf(xa, ya)
            assert np.array_equal(got, ref, equal_nan=True), (dt, op, got, ref)
            tie = (xa == ya) & (xa == 0)
            assert np.array_equal(np.signbit(got[tie]), np.signbit(xa[tie])), (dt, op, "zero ties")
            n_checked += 1
for idt in (np.int8, np.uint8, np.int16, np.int32, np.int64):
    xa, ya = rng.integers(0, 100, (2, 3, 37)).astype(idt)
    for op, npf in (("fmax", np.fmax), ("fmin", np.fmin)):
        assert np.array_equal(call(op, L.from_numpy(xa), L.from_numpy(ya), 1).numpy(), npf(xa, ya)), (idt, op)
# a NaN result is stored as the scalar conversion's quiet NaN (payload dropped)
halfnan = np.array([0x7d01, 0xfe77, 0x7c01, 0x7fff] * 9, np.uint16).view(np.float16)
x = L.from_numpy(halfnan)
for r in (L.add(x, x), L.mul(x, L.from_numpy(np.array(2.0, np.float16)))):
    bits = r.numpy().view(np.uint16)
    assert ((bits & 0x7fff) == 0x7e00).all(), [hex(v) for v in bits]
print(L.cpu_capability(), n_checked)
"""


def child(level):
    env = dict(os.environ, OPS_CPU_CAPABILITY=level)
    p = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=600,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    return p


class BinaryVecTest(unittest.TestCase):
    def test_every_level_matches_the_scalar_rule(self):
        ran = []
        for level in LEVELS:
            p = child(level)
            if "this CPU lacks" in p.stderr:
                continue
            self.assertEqual(p.returncode, 0, f"{level}: {p.stderr[-3000:]}")
            got_level, count = p.stdout.split()
            self.assertEqual(got_level, level)
            self.assertGreater(int(count), 1000)
            ran.append(level)
        self.assertIn("default", ran)

    def test_fmax_fmin_gradients_follow_torch(self):
        # PyTorch's formulas: the whole gradient to the side the value came from, self
        # on ties (maximum halves it) and where other is NaN; summed over broadcasting
        import numpy as np
        import libops as L
        nan = float("nan")
        a = np.array([1.0, 2.0, nan, 3.0, nan, 0.0, -0.0, 5.0, -1.0])
        b = np.array([1.0, 1.0, 1.0, nan, nan, -0.0, 0.0, 6.0, -2.0])
        g = np.arange(1.0, 10.0)
        for op, pick_self in (("fmax", (a >= b) | np.isnan(b)), ("fmin", (a <= b) | np.isnan(b))):
            x = L.from_numpy(a.copy()).requires_grad_()
            y = L.from_numpy(b.copy()).requires_grad_()
            getattr(L, op)(x, y).backward(L.from_numpy(g.copy()))
            np.testing.assert_array_equal(x.grad.numpy(), np.where(pick_self, g, 0.0), err_msg=op)
            np.testing.assert_array_equal(y.grad.numpy(), np.where(pick_self, 0.0, g), err_msg=op)
            # broadcast: other [1] gets the sum of what it won
            x = L.from_numpy(a.copy()).requires_grad_()
            y = L.from_numpy(np.array([1.0])).requires_grad_()
            getattr(L, op)(x, y).backward(L.from_numpy(g.copy()))
            won = ~((a >= 1.0) if op == "fmax" else (a <= 1.0))
            np.testing.assert_array_equal(y.grad.numpy(), [g[won].sum()], err_msg=op)


if __name__ == "__main__":
    unittest.main()

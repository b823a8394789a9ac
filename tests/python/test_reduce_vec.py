"""The reductions' vector loops (kernels/cpu/vec/vec_reduce.c, docs/cpu-dispatch.md
"Reductions") at every CPU level this machine runs, each in a child process
(OPS_CPU_CAPABILITY is read once per process): values against NumPy in float64 for run
lengths that are not a multiple of the vector width or of the unrolled loop (1..70,
1000, 4099, 70000 and runs split into units), NaN in the middle, in the tail and
everywhere, -0.0, integer sums wrapping as PyTorch's; amax/amin/argmax/argmin and the
outer (dim=0) path bit for bit equal to the scalar loop (reached through a strided
view of the same values); the same bits on every run and for 1 and 2 threads.
Run by `meson test` (suite python)."""

import unittest

from test_cpu_capability import child as child_at_level, runnable_levels

CHECK = r"""
import math
import numpy as np, libops as L
rng = np.random.default_rng(7)

def lib(a):
    return L.from_numpy(np.ascontiguousarray(a))

def strided(a):
    # the same values through a view whose reduced dim has stride 2: the scalar loop
    w = np.repeat(a, 2, axis=-1)
    return L.from_numpy(w)[..., ::2]

def same(x, y):
    return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True) and \
        np.array_equal(np.signbit(np.asarray(x)), np.signbit(np.asarray(y)))

lengths = list(range(1, 71)) + [1000, 1023, 1025, 4099, 70000]
for dt, rtol in ((np.float32, 2e-5), (np.float64, 1e-12)):
    for n in lengths:
        a = rng.uniform(-2, 2, (3, n)).astype(dt)
        r64 = a.astype(np.float64)
        for name, ref in (("sum", lambda v: v.sum(1)), ("mean", lambda v: v.mean(1)),
                          ("nansum", lambda v: np.nansum(v, 1))):
            got = getattr(L, name)(lib(a), [1]).numpy()
            np.testing.assert_allclose(got, ref(r64), rtol=rtol, atol=rtol * n, err_msg=f"{name} {dt} {n}")
        got = L.logsumexp(lib(a), [1]).numpy()
        np.testing.assert_allclose(got, np.log(np.exp(r64).sum(1)), rtol=rtol * 4, err_msg=f"lse {n}")
        if n > 1:
            got = L.var(lib(a), [1]).numpy()
            np.testing.assert_allclose(got, r64.var(1, ddof=1), rtol=rtol * 4, err_msg=f"var {dt} {n}")
            got = L.std(lib(a), [1]).numpy()
            np.testing.assert_allclose(got, r64.std(1, ddof=1), rtol=rtol * 4, err_msg=f"std {dt} {n}")
        for p in (1.0, 2.0):
            got = L.linalg_vector_norm(lib(a), p, [1]).numpy()
            np.testing.assert_allclose(got, np.linalg.norm(r64, p, 1), rtol=rtol, err_msg=f"norm{p} {n}")
        pa = rng.uniform(0.9, 1.1, (2, min(n, 4099))).astype(dt)
        np.testing.assert_allclose(L.prod(lib(pa), 1).numpy(), pa.astype(np.float64).prod(1),
                                   rtol=rtol * 8, err_msg=f"prod {n}")
        # extremes and their positions: NaN in the middle, in the tail, everywhere; ties; zeros
        cases = [a.copy() for _ in range(6)]
        cases[1][:, n // 2] = np.nan
        cases[2][:, n - 1] = np.nan
        cases[3][:] = np.nan
        cases[4][:] = dt(0.0)
        cases[4][:, ::3] = dt(-0.0)
        cases[5] = np.round(cases[5])  # ties
        for c in cases:
            for name in ("amax", "amin"):
                got = getattr(L, name)(lib(c), [1]).numpy()
                assert same(got, getattr(L, name)(strided(c), [1]).numpy()), (name, dt, n, c)
                if name == "amax":
                    assert same(np.isnan(got), np.isnan(c).any(1))
            for name in ("argmax", "argmin"):
                got = getattr(L, name)(lib(c), 1).numpy()
                assert np.array_equal(got, getattr(L, name)(strided(c), 1).numpy()), (name, dt, n, c)
            # the outer path: columns of the transpose, vectorised across them
            ct = np.ascontiguousarray(np.tile(c, (7, 1)).T)  # 21 columns: the outer path needs 16
            for name in ("amax", "amin", "sum", "nansum", "prod"):
                if name in ("amax", "amin"):
                    got = getattr(L, name)(lib(ct), [0]).numpy()
                    want = getattr(L, name)(L.from_numpy(np.repeat(ct, 2, axis=1))[:, ::2], [0]).numpy()  # column walk
                else:
                    got = getattr(L, name)(lib(ct), 0 if name == "prod" else [0]).numpy()
                    want = getattr(np, name)(ct.astype(np.float64), 0)
                    np.testing.assert_allclose(got, want, rtol=rtol * 8, atol=rtol * n, err_msg=f"outer {name} {n}")
                    continue
                assert same(got, want), (name, n)
    # all-reduce: a long run split into units, and many short runs grouped into units
    for shape in ((300001,), (1000, 300), (5, 70000)):
        a = rng.uniform(-1, 1, shape).astype(dt)
        np.testing.assert_allclose(L.sum(lib(a)).numpy(), a.astype(np.float64).sum(), rtol=rtol * 10, atol=1e-3)
        assert same(L.amax(lib(a)).numpy(), a.max())
        assert int(L.argmin(lib(a)).numpy()) == int(a.argmin())
# float16/bfloat16 sums in float32 (F16C where the level has it): against the sum of the
# same values in float64, and through a strided view (the scalar loop)
for name in ("float16", "bfloat16"):
    for n in (1, 15, 17, 63, 65, 1000, 4099, 70001):
        a = rng.uniform(-1, 1, (2, n)).astype(np.float32)
        t = L.from_numpy(a).to(getattr(L, name))
        vals = t.to(L.float64).numpy()
        got = L.sum(t, [1]).to(L.float64).numpy()
        eps = 2.0**-10 if name == "float16" else 2.0**-7
        np.testing.assert_allclose(got, vals.sum(1), rtol=eps, atol=eps * 4, err_msg=f"{name} {n}")
        w = L.from_numpy(np.repeat(a, 2, axis=1)).to(getattr(L, name))[:, ::2]
        np.testing.assert_allclose(got, L.sum(w, [1]).to(L.float64).numpy(), rtol=eps, atol=eps * 4)
        got = L.mean(t, [1]).to(L.float64).numpy()
        np.testing.assert_allclose(got, vals.mean(1), rtol=eps, atol=eps, err_msg=f"{name} mean {n}")
assert float(L.sum(L.from_numpy(np.ones(4096, np.float32)).to(L.float16)).to(L.float64).numpy()) == 4096.0
# sums of ones stay exact
assert float(L.sum(lib(np.ones(2**24 + 4096, np.float32))).numpy()) == 2**24 + 4096
# integer sums wrap as PyTorch's (two's complement, int64)
big = np.array([2**62] * 5 + [7] * 60, dtype=np.int64)
assert int(L.sum(lib(big)).numpy()) == int(big.sum()), (int(L.sum(lib(big)).numpy()), int(big.sum()))
i32 = rng.integers(-2**31, 2**31 - 1, 1001, dtype=np.int32)
assert int(L.sum(lib(i32)).numpy()) == int(i32.astype(np.int64).sum())
i64 = rng.integers(-2**63, 2**63 - 1, (3, 999), dtype=np.int64)
assert np.array_equal(L.sum(lib(i64), [1]).numpy(), i64.sum(1))
# the same bits on every run and whatever the thread count
x = lib(rng.standard_normal(3_000_000).astype(np.float32) * 1e3)
m = lib(rng.standard_normal((8, 400_000)).astype(np.float32))
res = {}
for nt in (1, 2, 1, 2):
    L.set_num_threads(nt)
    cur = [L.sum(x).numpy().tobytes(), L.std(x).numpy().tobytes(), L.linalg_vector_norm(x).numpy().tobytes(),
           L.logsumexp(x, [0]).numpy().tobytes(), L.sum(m, [1]).numpy().tobytes(), L.mean(m).numpy().tobytes()]
    assert res.setdefault(nt, cur) == cur, nt
assert res[1] == res[2]
print(L.cpu_capability())
"""

# nanmean, the norms of every order, all/any over contiguous runs, and reduced dims
# reordered so that the run is the contiguous one (sum over dims (0, 1) of a transpose)
CHECK2 = r"""
import numpy as np, libops as L
rng = np.random.default_rng(11)

def lib(a):
    return L.from_numpy(np.ascontiguousarray(a))

def strided(a):
    w = np.repeat(a, 2, axis=-1)
    return L.from_numpy(w)[..., ::2]

def same(x, y):
    return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True) and \
        np.array_equal(np.signbit(np.asarray(x)), np.signbit(np.asarray(y)))

for dt, rtol in ((np.float32, 2e-5), (np.float64, 1e-12)):
    for n in list(range(1, 40)) + [63, 65, 1000, 1025, 4099, 70000]:
        a = rng.uniform(-2, 2, (3, n)).astype(dt)
        a[0, ::3] = np.nan                      # NaN here and there
        a[1, :] = np.nan                        # a row of NaN only: 0 / 0
        a[2, n // 2] = dt(0.0)
        r64 = a.astype(np.float64)
        with np.errstate(all="ignore"):
            want = np.nanmean(r64, 1)
        got = L.nanmean(lib(a), [1]).numpy()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=f"nanmean {dt} {n}")
        np.testing.assert_allclose(got, L.nanmean(strided(a), [1]).numpy(), rtol=rtol, atol=rtol)
        b = rng.uniform(-2, 2, (3, n)).astype(dt)
        b[0, n // 3] = dt(0.0)
        b[1, :: 5] = dt(-0.0)
        for p in (0.0, 3.0, 0.5, -1.5, float("inf"), float("-inf")):
            got = L.linalg_vector_norm(lib(b), p, [1]).numpy()
            ref = L.linalg_vector_norm(strided(b), p, [1]).numpy()
            with np.errstate(all="ignore"):
                exp = np.linalg.norm(b.astype(np.float64), p, 1) if p != 0.0 else (b != 0).sum(1)
            tol = rtol if p in (0.0, float("inf"), float("-inf")) else rtol * 20
            np.testing.assert_allclose(got, exp, rtol=tol, err_msg=f"norm {p} {dt} {n}")
            if p in (0.0, float("inf"), float("-inf")):
                assert same(got, ref), (p, dt, n, got, ref)
        # a NaN: the scalar loop's answer for inf/-inf
        c = b.copy()
        c[0, n - 1] = np.nan
        for p in (float("inf"), float("-inf"), 0.0, 3.0):
            got = L.linalg_vector_norm(lib(c), p, [1]).numpy()
            assert same(got, L.linalg_vector_norm(strided(c), p, [1]).numpy()) or p == 3.0, (p, n)
            assert np.isnan(got[0]) or p == 0.0
        # max.dim/min.dim (values and first indices) and aminmax over runs: bit for bit the
        # scalar loop's (a strided view) with NaN, ties, -0.0 first and 0.0 first
        cases = [b.copy() for _ in range(5)]
        cases[1][:, n // 2] = np.nan
        cases[2][:] = dt(0.0)
        cases[2][:, ::2] = dt(-0.0)
        cases[3] = np.round(cases[3])
        cases[4][:, n - 1] = np.inf
        cases[4][:, 0] = -np.inf
        for cc in cases:
            for name in ("max", "min"):
                v, i = getattr(L, name)(lib(cc), 1)
                sv, si = getattr(L, name)(strided(cc), 1)
                assert same(v.numpy(), sv.numpy()) and np.array_equal(i.numpy(), si.numpy()), (name, dt, n, cc)
            for kw in ({"dim": 1}, {}):
                lo, hi = L.aminmax(lib(cc), **kw)
                slo, shi = L.aminmax(strided(cc), **kw)
                assert same(lo.numpy(), slo.numpy()) and same(hi.numpy(), shi.numpy()), ("aminmax", dt, n, kw)
# all/any of every dtype over contiguous runs: the first, the last, no and every element false
for dtn in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"):
    for n in (1, 15, 16, 17, 511, 512, 513, 1025, 5000):
        for where in ("none", "first", "last", "mid", "all"):
            z = np.ones((2, n), np.float32)
            if where == "first": z[:, 0] = 0
            if where == "last": z[:, n - 1] = 0
            if where == "mid": z[:, n // 2] = 0
            if where == "all": z[:] = 0
            t = L.from_numpy(z).to(getattr(L, dtn))
            for f, ref in ((L.all, np.all), (L.any, np.any)):
                assert bool(f(t).numpy()) == bool(ref(z)), (dtn, n, where, f)
                got = f(t, 1).numpy()
                assert np.array_equal(got, ref(z, 1)), (dtn, n, where, f)
        if dtn.startswith("float") or dtn == "bfloat16":
            # -0.0 is false, NaN true
            v = np.full(n, -0.0, np.float32)
            t = L.from_numpy(v).to(getattr(L, dtn))
            assert not bool(L.any(t).numpy()) and not bool(L.all(t).numpy())
            v[n - 1] = np.nan
            t = L.from_numpy(v).to(getattr(L, dtn))
            assert bool(L.any(t).numpy()) and bool(L.all(t).numpy()) == (n == 1)
# reduced dims reordered: the contiguous one becomes the run (sums over a transpose, and
# dims (0, 2) of a permuted 3-d tensor), against NumPy and the same bits at 1 and 2 threads
m = rng.standard_normal((300, 257)).astype(np.float32)
x = lib(m)
np.testing.assert_allclose(L.sum(x.t()).numpy(), m.astype(np.float64).sum(), rtol=1e-5)
np.testing.assert_allclose(L.mean(x.t(), [0, 1]).numpy(), m.astype(np.float64).mean(), rtol=1e-5)
np.testing.assert_allclose(L.linalg_vector_norm(x.t(), 2.0).numpy(), np.linalg.norm(m.astype(np.float64)),
                           rtol=1e-5)
assert L.amax(x.t()).numpy() == m.max() and int(L.argmax(x.t()).numpy()) == int(m.T.argmax())
c3 = rng.standard_normal((6, 40, 33)).astype(np.float32)
x3 = lib(c3).permute([2, 1, 0])  # [33, 40, 6], dim 2 contiguous
np.testing.assert_allclose(L.sum(x3, [1, 2]).numpy(), c3.astype(np.float64).sum((0, 1)), rtol=1e-5, atol=1e-4)
big = lib(rng.standard_normal((2048, 700)).astype(np.float32)).t()
res = []
for nt in (1, 2, 1):
    L.set_num_threads(nt)
    res.append([L.sum(big).numpy().tobytes(), L.nanmean(big, [0, 1]).numpy().tobytes(),
                L.linalg_vector_norm(big, 3.0).numpy().tobytes()])
assert res[0] == res[1] == res[2]
print(L.cpu_capability())
"""


def child(level, code):
    """code's stdout in a child python at OPS_CPU_CAPABILITY=level (test_cpu_capability.child)."""
    return child_at_level(level, code)[0]


class TestReduceVec(unittest.TestCase):
    def test_levels(self):
        for level in runnable_levels():
            with self.subTest(level=level):
                self.assertEqual(child(level, CHECK).strip(), level)
                self.assertEqual(child(level, CHECK2).strip(), level)


if __name__ == "__main__":
    unittest.main()

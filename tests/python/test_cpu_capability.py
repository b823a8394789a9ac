"""The CPU instruction-set level of the vector loops (docs/cpu-dispatch.md): what
libops.cpu_capability() reports, OPS_CPU_CAPABILITY and its refusals (each in a child
process: the level is chosen once per process), and the vectorised ops (exp, log,
tanh, sigmoid at float32/float64) at every level this CPU runs: against NumPy, the
same bits whatever the layout or the length of a run, and sigmoid's far negative
tail; the fused row loops (softmax, log_softmax, cross_entropy) against NumPy, the
same bits at 1 and 2 threads and for any subset of rows.  Run by `meson test` (suite python)."""

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


def child(level, code):
    """Runs code in a child python with OPS_CPU_CAPABILITY=level; (stdout, stderr)."""
    env = dict(os.environ)
    if level is None:
        env.pop("OPS_CPU_CAPABILITY", None)
    else:
        env["OPS_CPU_CAPABILITY"] = level
    # run from this directory: a build tree's working directory holds the C libops.so,
    # which `-c` (the current directory first on sys.path) would import as the module
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    if p.returncode != 0:
        raise AssertionError(f"child failed at {level}: {p.stderr}")
    return p.stdout, p.stderr


# Run in each child: the checks of the vector loops at the child's level.
VALUES_CHECK = r"""
import numpy as np, libops as L
rng = np.random.default_rng(1)
for dt, rtol in ((np.float32, 2e-6), (np.float64, 4e-15)):
    base = np.concatenate([rng.uniform(-30, 30, 4099), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30]]).astype(dt)
    pos = np.concatenate([rng.uniform(1e-6, 1e6, 4099), [0.0, np.inf, np.nan, 1.0, 1e-38]]).astype(dt)
    for name, ref, a in (("exp", np.exp, base), ("log", np.log, pos), ("tanh", np.tanh, base),
                         ("sigmoid", lambda v: 1.0 / (1.0 + np.exp(-v)), base)):
        with np.errstate(all="ignore"):
            want = ref(a.astype(np.float64))
        got = getattr(L, name)(L.from_numpy(a)).numpy()
        assert got.dtype == dt, (name, got.dtype)
        np.testing.assert_allclose(got, want.astype(dt), rtol=rtol, atol=0, err_msg=f"{name} {dt}")
        # the same bits through a strided view, in place, and for every tail length
        strided = getattr(L, name)(L.from_numpy(np.repeat(a, 2))[::2]).numpy()
        assert np.array_equal(strided, got, equal_nan=True), (name, dt, "strided")
        t = L.from_numpy(a.copy())
        getattr(t, name + "_")()
        assert np.array_equal(t.numpy(), got, equal_nan=True), (name, dt, "in place")
        for n in range(1, 40):
            part = getattr(L, name)(L.from_numpy(a[3:3 + n].copy())).numpy()
            assert np.array_equal(part, got[3:3 + n], equal_nan=True), (name, dt, n)
# sigmoid's far negative tail is e^x / (1 + e^x), not 0: sigmoid(-95) is a float32 subnormal
s = L.sigmoid(L.from_numpy(np.array([-95.0, -100.0, -103.0], dtype=np.float32))).numpy()
want = np.exp(np.array([-95.0, -100.0, -103.0])).astype(np.float32)
assert (s > 0).all() and np.allclose(s, want, rtol=1e-3, atol=0), (s, want)
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

    def test_vector_ops_at_every_level(self):
        best = best_level()
        for level in LEVELS[:LEVELS.index(best) + 1]:
            with self.subTest(level=level):
                out, err = child(level, VALUES_CHECK)
                self.assertEqual((out.strip(), err), (level, ""))

    def test_row_kernels_at_every_level(self):
        best = best_level()
        for level in LEVELS[:LEVELS.index(best) + 1]:
            with self.subTest(level=level):
                out, err = child(level, ROWS_CHECK)
                self.assertEqual((out.strip(), err), (level, ""))


if __name__ == "__main__":
    unittest.main()

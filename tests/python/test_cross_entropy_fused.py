"""cross_entropy's fused CPU loops (kernels/cpu/loss.c, kernels/cpu/vec/vec_rows.c):
class-index targets over [N, C] rows and [N, C, d1, ...] positions, with and without
label smoothing, class weights and ignore_index, every reduction; forward and the
fused backward against a float64 NumPy formula of PyTorch 1.13's definition (and
against torch itself where it is installed), at every ISA level the CPU has, and the
same bits at 1 and 3 threads.  Run by `meson test` (suite python)."""

import os
import subprocess
import sys
import unittest

CHECK = r"""
import sys
import numpy as np
import libops as L

def oracle(x, t, w, red, ii, eps):
    # PyTorch 1.13: (1 - eps) nll + eps / C smooth, each mean over the target weights
    x = x.astype(np.float64)
    C = x.shape[1] if x.ndim > 1 else x.shape[0]
    xm = np.moveaxis(x, 1, -1).reshape(-1, C) if x.ndim > 1 else x.reshape(1, C)
    tf = t.reshape(-1)
    wv = np.ones(C) if w is None else w.astype(np.float64)
    with np.errstate(all="ignore"):
        m = xm.max(axis=1, keepdims=True)
        lp = xm - m - np.log(np.exp(xm - m).sum(axis=1, keepdims=True))
        keep = tf != ii
        tt = np.where(keep, tf, 0)
        wt = np.where(keep, wv[tt], 0.0)
        nll = np.where(keep, -wv[tt] * lp[np.arange(len(tf)), tt], 0.0)
        # eps = 0 leaves the smoothing term out (it is inf at a -inf logit)
        sm = np.where(keep, -(lp * wv).sum(axis=1), 0.0) if eps > 0 else np.zeros(len(tf))
        tw = wt.sum()
        if red == 0:
            loss = ((1 - eps) * nll + eps / C * sm).reshape(t.shape)
        elif red == 1:
            loss = (1 - eps) * nll.sum() / tw + eps / C * sm.sum() / tw
        else:
            loss = (1 - eps) * nll.sum() + eps / C * sm.sum()
        # gradient for an upstream g (ones of the loss's shape)
        sc = np.ones(len(tf)) if red != 1 else np.full(len(tf), 1.0 / tw if tw != 0 else 0.0)
        sc = np.where(keep, sc, 0.0)
        p = np.exp(lp)
        g = p * (sc * ((1 - eps) * wt + eps / C * wv.sum()))[:, None] - (sc * eps / C)[:, None] * wv[None, :]
        g[np.arange(len(tf)), tt] -= np.where(keep, sc * (1 - eps) * wt, 0.0)
    if x.ndim > 1:
        shp = (x.shape[0],) + x.shape[2:] + (C,)
        g = np.moveaxis(g.reshape(shp), -1, 1)
    else:
        g = g.reshape(C)
    return loss, g

def run(x, t, w, red, ii, eps, threads=1):
    L.set_num_threads(threads)
    lx = L.from_numpy(x).requires_grad_(True)
    lw = None if w is None else L.from_numpy(w)
    y = L.cross_entropy_loss(lx, L.from_numpy(t), lw, red, ii, eps)
    y.backward(L.ones_like(y))
    return y.detach().numpy(), lx.grad.numpy()

rng = np.random.default_rng(7)
cases = []
for shape in [(5, 37), (37,), (300, 37), (3, 11, 19), (2, 7, 5, 13), (4, 6, 131), (2, 1000, 65)]:
    C = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    for dt in (np.float32, np.float64):
        for eps in (0.0, 0.1, 1.0):
            for wgt in (False, True):
                for red in (0, 1, 2):
                    x = (rng.standard_normal(shape) * 3).astype(dt)
                    t = rng.integers(0, C, size=tshape).astype(np.int64)
                    ii = -100
                    if t.size > 2:
                        ii = int(t.reshape(-1)[1])
                    w = rng.uniform(0.2, 2.0, C).astype(dt) if wgt else None
                    cases.append((x, t, w, red, ii, eps))
# NaN / inf logits (a whole position of -inf, one NaN, one +inf)
x = rng.standard_normal((2, 9, 23)).astype(np.float32)
x[0, :, 3] = -np.inf
x[1, 4, 5] = np.nan
x[0, 2, 7] = np.inf
x[1, 0, 9] = -np.inf
t = rng.integers(0, 9, size=(2, 23)).astype(np.int64)
for red in (0, 1, 2):
    for eps in (0.0, 0.2):
        cases.append((x, t, None, red, -100, eps))
bad = 0
for (x, t, w, red, ii, eps) in cases:
    want, gwant = oracle(x, t, w, red, ii, eps)
    got, ggot = run(x, t, w, red, ii, eps, 1)
    got3, ggot3 = run(x, t, w, red, ii, eps, 3)
    tag = (x.shape, x.dtype.name, red, ii, eps, w is not None)
    assert np.array_equal(got, got3, equal_nan=True) and np.array_equal(ggot, ggot3, equal_nan=True), ("threads", tag)
    tol = dict(rtol=2e-5, atol=2e-5) if x.dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, want, err_msg=str(tag), **tol)
    np.testing.assert_allclose(ggot, gwant, err_msg=str(("grad",) + tag), **tol)
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    torch.set_num_threads(1)
    for (x, t, w, red, ii, eps) in cases[::3]:
        tx = torch.from_numpy(x.copy()).requires_grad_(True)
        tr = ["none", "mean", "sum"][red]
        y = torch.nn.functional.cross_entropy(tx, torch.from_numpy(t), None if w is None else torch.from_numpy(w),
                                              ignore_index=ii, reduction=tr, label_smoothing=eps)
        y.backward(torch.ones_like(y))
        got, ggot = run(x, t, w, red, ii, eps)
        tol = dict(rtol=1e-4, atol=1e-5) if x.dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)
        tag = (x.shape, x.dtype.name, red, ii, eps, w is not None)
        np.testing.assert_allclose(got, y.detach().numpy(), err_msg=str(("torch",) + tag), **tol)
        np.testing.assert_allclose(ggot, tx.grad.numpy(), err_msg=str(("torch grad",) + tag), **tol)
print("ok", len(cases), L.cpu_capability(), "torch" if torch is not None else "numpy")
"""


def levels():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return ["default"]
    out = ["default"]
    if {"avx2", "fma"} <= set(flags):
        out.append("avx2")
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        out.append("avx512")
    return out


class CrossEntropyFused(unittest.TestCase):
    def test_levels(self):
        for lv in levels():
            env = dict(os.environ, OPS_CPU_CAPABILITY=lv)
            # run from this directory: a build tree's working directory holds the C
            # libops.so, which `-c` would import as the module
            p = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=300,
                               cwd=os.path.dirname(os.path.abspath(__file__)))
            self.assertEqual(p.returncode, 0, f"level {lv}:\n{p.stdout}\n{p.stderr}")
            self.assertIn(lv, p.stdout)


if __name__ == "__main__":
    unittest.main()

"""Integer convolutions, F.embedding(max_norm=) and norm('fro' / 'nuc') (issue 15):
torch-free checks against NumPy and hand-derived values, and comparisons with PyTorch
1.13 where it is installed."""
import unittest

import numpy as np

import libops as L
import libops.nn.functional as F

try:
    import torch
except ImportError:  # CI has no PyTorch: those comparisons are skipped there
    torch = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")


def np_conv1d(x, w, b=None, stride=1, padding=0):
    """Direct 1-d convolution in Python ints (exact): x [N, C, L], w [O, C, K]."""
    n, c, length = x.shape
    o, _, k = w.shape
    xp = np.zeros((n, c, length + 2 * padding), dtype=object)
    xp[:, :, padding:padding + length] = x
    out_len = (length + 2 * padding - k) // stride + 1
    out = np.zeros((n, o, out_len), dtype=object)
    for i in range(n):
        for j in range(o):
            for t in range(out_len):
                out[i, j, t] = sum(int(xp[i, cc, t * stride + kk]) * int(w[j, cc, kk]) for cc in range(c)
                                   for kk in range(k)) + (int(b[j]) if b is not None else 0)
    return out


def wrap(v, bits, signed=True):
    """Python int v wrapped to a two's complement integer of `bits` bits."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def num_grad(f, x, eps=1e-6):
    """Central differences of the scalar f at the float64 array x."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


class TestIntegerConv(unittest.TestCase):
    def test_int64_exact_beyond_float(self):
        # 2^53 + 1 is not a float64: a float round trip would give 2^53
        x = L.tensor([[[2 ** 53 + 1, 3, -(2 ** 60)]]], dtype=L.int64)
        w = L.tensor([[[1, 2]]], dtype=L.int64)
        r = L.conv1d(x, w)
        self.assertEqual(r.dtype, L.int64)
        self.assertEqual(r.tolist(), [[[2 ** 53 + 1 + 6, 3 - 2 ** 61]]])
        # wraps around as int64 arithmetic (torch's result too)
        big = L.tensor([[[2 ** 62, 2 ** 62]]], dtype=L.int64)
        self.assertEqual(L.conv1d(big, L.ones(1, 1, 2, dtype=L.int64)).tolist(), [[[wrap(2 ** 63, 64)]]])

    def test_integer_dtypes_against_python_ints(self):
        rng = np.random.default_rng(3)
        for dt, npdt, bits, signed in ((L.uint8, np.uint8, 8, False), (L.int8, np.int8, 8, True),
                                       (L.int16, np.int16, 16, True), (L.int32, np.int32, 32, True),
                                       (L.int64, np.int64, 64, True)):
            lo = 0 if not signed else -100
            x = rng.integers(lo, 100, size=(2, 3, 7)).astype(npdt)
            w = rng.integers(lo, 100, size=(4, 3, 3)).astype(npdt)
            b = rng.integers(lo, 100, size=(4,)).astype(npdt)
            for stride, padding in ((1, 0), (2, 1)):
                r = L.conv1d(L.from_numpy(x), L.from_numpy(w), L.from_numpy(b), [stride], [padding])
                self.assertEqual(r.dtype, dt)
                want = np_conv1d(x, w, b, stride, padding)
                want = np.vectorize(lambda v: wrap(int(v), bits, signed))(want).astype(npdt)
                np.testing.assert_array_equal(r.numpy(), want, err_msg=str(dt))

    def test_conv2d_and_transposed_int64(self):
        x = np.arange(2 * 2 * 4 * 4, dtype=np.int64).reshape(2, 2, 4, 4) - 20
        w = np.arange(3 * 2 * 2 * 2, dtype=np.int64).reshape(3, 2, 2, 2) - 10
        r = L.conv2d(L.from_numpy(x), L.from_numpy(w), None, [1], [1])
        ref = L.conv2d(L.from_numpy(x.astype(np.float64)), L.from_numpy(w.astype(np.float64)), None, [1], [1])
        self.assertEqual(r.dtype, L.int64)
        np.testing.assert_array_equal(r.numpy(), ref.numpy().astype(np.int64))
        # 'same' padding and groups
        r = L.conv2d(L.from_numpy(x), L.from_numpy(w[:2, :1]), None, [1], "same", [1], 2)
        ref = L.conv2d(L.from_numpy(x.astype(np.float64)), L.from_numpy(w[:2, :1].astype(np.float64)), None, [1],
                       "same", [1], 2)
        np.testing.assert_array_equal(r.numpy(), ref.numpy().astype(np.int64))
        wt = np.arange(2 * 3 * 2 * 2, dtype=np.int64).reshape(2, 3, 2, 2) - 5
        for kw in ({}, {"stride": [2], "padding": [1], "output_padding": [1]}):
            r = L.conv_transpose2d(L.from_numpy(x), L.from_numpy(wt), L.tensor([1, 2, 3]), **kw)
            ref = L.conv_transpose2d(L.from_numpy(x.astype(np.float64)), L.from_numpy(wt.astype(np.float64)),
                                     L.tensor([1.0, 2.0, 3.0], dtype=L.float64), **kw)
            self.assertEqual(r.dtype, L.int64)
            np.testing.assert_array_equal(r.numpy(), ref.numpy().astype(np.int64))
        xt = L.tensor([[[2 ** 53 + 1]]], dtype=L.int64)
        self.assertEqual(L.conv_transpose1d(xt, L.tensor([[[1, 1]]], dtype=L.int64)).tolist(),
                         [[[2 ** 53 + 1, 2 ** 53 + 1]]])

    def test_refused_dtypes(self):
        with self.assertRaisesRegex(RuntimeError, "conv1d.*bool"):
            L.conv1d(L.ones(1, 1, 3, dtype=L.bool), L.ones(1, 1, 2, dtype=L.bool))
        # PyTorch's transposed CPU kernel takes int64 and floating only
        with self.assertRaisesRegex(RuntimeError, "conv_transpose1d.*int32"):
            L.conv_transpose1d(L.ones(1, 1, 3, dtype=L.int32), L.ones(1, 1, 2, dtype=L.int32))
        with self.assertRaisesRegex(RuntimeError, r"Input type \(int64\) and weight type \(int32\)"):
            L.conv1d(L.ones(1, 1, 3, dtype=L.int64), L.ones(1, 1, 2, dtype=L.int32))

    @needs_torch
    def test_against_torch(self):
        rng = np.random.default_rng(5)
        for name, dts in (("conv1d", ("uint8", "int8", "int16", "int32", "int64")), ("conv2d", ("int64", "int32")),
                          ("conv_transpose1d", ("int64",)), ("conv_transpose2d", ("int64",))):
            nsp = 2 if name.endswith("2d") else 1
            for dt in dts:
                x = rng.integers(0, 50, size=(2, 4) + (5,) * nsp).astype(dt)
                w = rng.integers(0, 50, size=(4, 2) + (3,) * nsp).astype(dt)
                b = rng.integers(0, 50, size=(4,)).astype(dt)
                kw = {"stride": 2, "padding": 1, "groups": 2}
                t = getattr(torch.nn.functional, name)(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                                                        **kw)
                r = getattr(L, name)(L.from_numpy(x), L.from_numpy(w), L.from_numpy(b), [2], [1], groups=2)
                np.testing.assert_array_equal(r.numpy(), t.numpy(), err_msg=f"{name} {dt}")


class TestEmbeddingMaxNorm(unittest.TestCase):
    def renorm_ref(self, w, idx, max_norm, p):
        w = w.copy()
        for i in sorted(set(np.asarray(idx).ravel().tolist())):
            n = np.abs(w[i]).max() if p == np.inf else (np.abs(w[i]) ** p).sum() ** (1 / p)
            if n > max_norm:
                w[i] *= max_norm / (n + 1e-7)
        return w

    def test_renorm_rows_once(self):
        w0 = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 1.0]])
        for p in (1.0, 2.0, np.inf):
            w = L.from_numpy(w0.copy())
            idx = L.tensor([[0, 2], [2, 0]])  # rows 0 and 2 twice: scaled once
            out = F.embedding(idx, w, max_norm=1.0, norm_type=p)
            want = self.renorm_ref(w0, [0, 2], 1.0, p)
            np.testing.assert_allclose(w.numpy(), want, rtol=1e-12)  # weight changed in place
            np.testing.assert_allclose(out.numpy(), want[[[0, 2], [2, 0]]], rtol=1e-12)
            self.assertAlmostEqual(float(np.abs(want[2]).max() if p == np.inf else (np.abs(want[2]) ** p).sum()
                                         ** (1 / p)), 1.0, places=6)
            # rows not named, and named rows within max_norm, are left alone
            np.testing.assert_array_equal(w.numpy()[[1, 3]], w0[[1, 3]])
        w = L.from_numpy(w0.copy())
        F.embedding(L.tensor([1]), w, max_norm=1.0)
        np.testing.assert_array_equal(w.numpy(), w0)

    def test_padding_idx_and_grad(self):
        w = L.tensor([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]], dtype=L.float64, requires_grad=True)
        out = F.embedding(L.tensor([0, 1, 2, 1]), w, padding_idx=-2, max_norm=1.5)
        out.sum().backward()
        # padding row 1 gets no gradient; rows 0 and 2 one per lookup
        np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [0, 0], [1, 1]])
        np.testing.assert_allclose(w.detach().numpy()[0], np.array([3.0, 4.0]) * 1.5 / (5 + 1e-7))
        with self.assertRaisesRegex(ValueError, "padding_idx must be within num_embeddings"):
            F.embedding(L.tensor([0]), w, padding_idx=3)

    def test_renorm_errors(self):
        w = L.ones(3, 2)
        with self.assertRaisesRegex(IndexError, r"embedding_renorm_: index out of range in self \(index 3"):
            L.embedding_renorm_(w, L.tensor([0, 3]), 1.0, 2.0)
        with self.assertRaisesRegex(RuntimeError, "embedding_renorm_:.*int64"):
            L.embedding_renorm_(L.ones(3, 2, dtype=L.int64), L.tensor([0]), 1.0, 2.0)
        with self.assertRaisesRegex(RuntimeError, "embedding_renorm_: Expected tensor for argument #2 'indices'"):
            L.embedding_renorm_(w, L.tensor([0.0]), 1.0, 2.0)
        self.assertEqual(w.tolist(), [[1.0, 1.0]] * 3)  # untouched

    def test_functional_reexports(self):
        x = L.tensor([-1.0, 2.0])
        self.assertEqual(F.relu(x).tolist(), [0.0, 2.0])
        self.assertIs(F.conv2d, L.conv2d)
        # schema signatures that read differently from F's are defined with F's
        # signature (libops.nn.functional) or left out
        self.assertIsNot(F.batch_norm, L.batch_norm)
        self.assertEqual(F.mse_loss(x, L.zeros(2), reduction="sum").item(), 5.0)
        self.assertFalse(hasattr(F, "unfold"))

    @needs_torch
    def test_against_torch(self):
        w0 = np.random.default_rng(1).normal(size=(6, 3)) * 2
        idx = [[1, 4, 1], [5, 0, 4]]
        for p in (1.0, 2.0, float("inf"), 3.0):
            for dt in (np.float64, np.float32):
                tw, lw = torch.tensor(w0.astype(dt)), L.from_numpy(w0.astype(dt))
                t = torch.nn.functional.embedding(torch.tensor(idx), tw, max_norm=1.0, norm_type=p)
                r = F.embedding(L.tensor(idx), lw, max_norm=1.0, norm_type=p)
                tol = 1e-12 if dt == np.float64 else 1e-6
                np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=tol, atol=tol)
                np.testing.assert_allclose(lw.numpy(), tw.numpy(), rtol=tol, atol=tol)


class TestEmbeddingIndices(unittest.TestCase):
    """embedding's forward checks each index as it copies its row (kernels/cpu/norm.c):
    the first bad one in index order is named, with the op, the argument and weight's
    rows; nothing else changes."""

    def setUp(self):
        self.w0 = np.arange(15, dtype=np.float32).reshape(5, 3)

    def check_bad(self, idx, bad, dtype=L.int64):
        w = L.from_numpy(self.w0.copy())
        msg = rf"embedding: index out of range in self \(index {bad} in 'indices', 'weight' has 5 rows\)"
        with self.assertRaisesRegex(IndexError, msg):
            F.embedding(L.tensor(idx, dtype=dtype), w)
        np.testing.assert_array_equal(w.numpy(), self.w0)

    def test_bad_indices(self):
        for dt in (L.int64, L.int32):
            self.check_bad([0, 5, 1], 5, dt)  # == num_embeddings
            self.check_bad([0, -1, 1], -1, dt)  # negative: no wrap-around
            self.check_bad([[1, 2], [7, -3]], 7, dt)  # the first in index order
            self.check_bad([-2147483648], -2147483648, dt)
        self.check_bad([4, 1 << 40], 1 << 40)
        # transposed (strided) indices: the order is the indices' own, row-major
        w = L.from_numpy(self.w0.copy())
        idx = L.tensor([[0, 9], [8, 1]]).t()  # [[0, 8], [9, 1]]
        with self.assertRaisesRegex(IndexError, r"index 8 in 'indices'"):
            F.embedding(idx, w)

    def test_bad_indices_threads(self):
        # enough rows for the threads to split the copy: still the first bad index named
        n = 1 << 16
        k = np.zeros(n, dtype=np.int64)
        k[40000], k[50000], k[3] = 11, -4, 2
        w = L.from_numpy(np.ones((5, 8), dtype=np.float32))
        old = L.get_num_threads()
        try:
            for nt in (1, 2):
                L.set_num_threads(nt)
                with self.assertRaisesRegex(IndexError, r"index 11 in 'indices', 'weight' has 5 rows"):
                    F.embedding(L.from_numpy(k), w)
        finally:
            L.set_num_threads(old)

    def test_padding_idx_forward(self):
        # padding_idx changes only the backward: its row is looked up as any other, and
        # it does not make an out-of-range index valid
        w = L.from_numpy(self.w0.copy())
        np.testing.assert_array_equal(F.embedding(L.tensor([4, 0, 4]), w, padding_idx=4).numpy(),
                                      self.w0[[4, 0, 4]])
        np.testing.assert_array_equal(F.embedding(L.tensor([1, 4]), w, padding_idx=-1).numpy(), self.w0[[1, 4]])
        with self.assertRaisesRegex(IndexError, r"index 5 in 'indices'"):
            F.embedding(L.tensor([4, 5]), w, padding_idx=4)
        with self.assertRaisesRegex(IndexError, r"index -1 in 'indices'"):
            F.embedding(L.tensor([-1]), w, padding_idx=-1)
        with self.assertRaisesRegex(ValueError, "padding_idx must be within num_embeddings"):
            F.embedding(L.tensor([0]), w, padding_idx=-6)

    def test_values(self):
        rng = np.random.default_rng(3)
        for dt in (np.float32, np.float64, np.int64):
            w0 = rng.standard_normal((50, 24)).astype(dt)
            k = rng.integers(0, 50, (3, 7, 5))
            np.testing.assert_array_equal(F.embedding(L.from_numpy(k), L.from_numpy(w0)).numpy(), w0[k])
            # a weight with strided rows (its transpose's transpose) and int32 indices
            wt = L.from_numpy(np.ascontiguousarray(w0.T)).t()
            np.testing.assert_array_equal(F.embedding(L.from_numpy(k.astype(np.int32)), wt).numpy(), w0[k])
        empty = F.embedding(L.tensor([], dtype=L.int64), L.from_numpy(self.w0))
        self.assertEqual(tuple(empty.shape), (0, 3))

    @needs_torch
    def test_against_torch(self):
        rng = np.random.default_rng(4)
        w0 = rng.standard_normal((100, 33)).astype(np.float32)
        k = rng.integers(0, 100, (8, 13))
        want = torch.nn.functional.embedding(torch.from_numpy(k), torch.from_numpy(w0)).numpy()
        np.testing.assert_array_equal(F.embedding(L.from_numpy(k), L.from_numpy(w0)).numpy(), want)


def avg_pool2d_grad_ref(shape, g, k, s, p, ceil_mode, cip, div):
    """avg_pool2d's input gradient from PyTorch's definition: each output's gradient
    divided by its divisor, added over its window clipped to the input (ceil_mode only
    changes the output count, which g's shape gives)."""
    res = np.zeros(shape, dtype=np.float64)
    H, W = shape[-2:]
    for oy in range(g.shape[-2]):
        for ox in range(g.shape[-1]):
            hs, ws = oy * s[0] - p[0], ox * s[1] - p[1]
            he, we = min(hs + k[0], H + p[0]), min(ws + k[1], W + p[1])
            pool = (he - hs) * (we - ws)
            hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, H), min(we, W)
            if hs >= he or ws >= we:
                continue
            d = div if div else pool if cip else (he - hs) * (we - ws)
            res[..., hs:he, ws:we] += g[..., oy, ox, None, None] / d
    return res


def adaptive_avg_pool2d_grad_ref(shape, g):
    res = np.zeros(shape, dtype=np.float64)
    H, W = shape[-2:]
    OH, OW = g.shape[-2:]
    for oy in range(OH):
        for ox in range(OW):
            y0, y1 = oy * H // OH, -(-(oy + 1) * H // OH)
            x0, x1 = ox * W // OW, -(-(ox + 1) * W // OW)
            res[..., y0:y1, x0:x1] += g[..., oy, ox, None, None] / ((y1 - y0) * (x1 - x0))
    return res


class TestAvgPoolGrad(unittest.TestCase):
    """avg_pool2d's and adaptive_avg_pool2d's gradient: the CPU loop (kernels/cpu/pool.c,
    when nothing records the backward) and autograd's formula (create_graph) against
    the definition, over odd sizes, padding, ceil_mode, count_include_pad,
    divisor_override, windows that do not divide the input, strided and channels-last
    inputs, rows wider than a vector."""

    CASES = [  # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
        ((2, 3, 7, 8), (2, 2), (2, 2), (0, 0), False, True, None),
        ((2, 3, 7, 8), (3, 2), (2, 1), (1, 1), False, False, None),
        ((2, 3, 7, 8), (3, 3), (2, 2), (1, 1), True, True, None),
        ((2, 3, 7, 8), (3, 3), (2, 2), (1, 1), True, False, None),
        ((3, 6, 5), (3, 3), (2, 2), (1, 1), False, True, 4),
        ((1, 2, 6, 6), (4, 4), (3, 3), (2, 2), True, True, None),
        ((1, 3, 9, 75), (3, 3), (2, 2), (1, 1), False, False, None),
        ((1, 2, 5, 41), (2, 3), (1, 1), (0, 0), False, True, 5),
        ((2, 5, 13, 37), (3, 3), (3, 3), (0, 0), True, True, None),
    ]

    def grads(self, f, a, g, layout="nchw", dtype=np.float64):
        """(loop gradient, formula gradient) of sum(f(x) * g) at x = a."""
        out = []
        for create_graph in (False, True):
            base = L.from_numpy(np.ascontiguousarray(a.transpose(0, 2, 3, 1)) if layout == "cl" and a.ndim == 4
                                else a.copy())
            x = base.permute([0, 3, 1, 2]) if layout == "cl" and a.ndim == 4 else base
            x = x.detach().requires_grad_(True)
            (gx,) = L.autograd.grad([f(x)], [x], [L.from_numpy(g)], create_graph=create_graph)
            out.append(gx.detach().numpy())
        return out

    def test_avg_pool2d(self):
        rng = np.random.default_rng(5)
        for shape, k, st, p, ceil, cip, div in self.CASES:
            for dt, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
                for layout in ("nchw", "cl"):
                    a = rng.standard_normal(shape).astype(dt)
                    y = L.avg_pool2d(L.from_numpy(a), list(k), list(st), list(p), ceil, cip, div)
                    g = rng.standard_normal(tuple(y.shape)).astype(dt)
                    loop, formula = self.grads(
                        lambda x: L.avg_pool2d(x, list(k), list(st), list(p), ceil, cip, div), a, g, layout)
                    want = avg_pool2d_grad_ref(shape, g.astype(np.float64), k, st, p, ceil, cip, div)
                    what = f"{shape} k{k} s{st} p{p} ceil {ceil} cip {cip} div {div} {np.dtype(dt).name} {layout}"
                    self.assertEqual(loop.dtype, dt, what)
                    np.testing.assert_allclose(loop, want, rtol=tol, atol=tol, err_msg=what)
                    np.testing.assert_allclose(formula, want, rtol=tol, atol=tol, err_msg=what)

    def test_adaptive_avg_pool2d(self):
        rng = np.random.default_rng(6)
        for shape, osz in (((2, 3, 7, 7), (1, 1)), ((2, 19, 13, 11), (4, 5)), ((1, 4, 5, 3), (7, 2)),
                           ((3, 9, 10), (3, 7)), ((2, 8, 56, 56), (7, 7))):
            for dt, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
                for layout in ("nchw", "cl"):
                    a = rng.standard_normal(shape).astype(dt)
                    g = rng.standard_normal(shape[:-2] + osz).astype(dt)
                    loop, formula = self.grads(lambda x: L.adaptive_avg_pool2d(x, list(osz)), a, g, layout)
                    want = adaptive_avg_pool2d_grad_ref(shape, g.astype(np.float64))
                    what = f"{shape} -> {osz} {np.dtype(dt).name} {layout}"
                    np.testing.assert_allclose(loop, want, rtol=tol, atol=tol, err_msg=what)
                    np.testing.assert_allclose(formula, want, rtol=tol, atol=tol, err_msg=what)

    def test_strided_gradient(self):
        # a gradient that is not contiguous (a transposed view) reaches the loop as values
        rng = np.random.default_rng(7)
        a = rng.standard_normal((2, 3, 9, 9))
        g = rng.standard_normal((2, 3, 4, 4))
        x = L.from_numpy(a).requires_grad_(True)
        gt = L.from_numpy(np.ascontiguousarray(g.transpose(0, 1, 3, 2))).transpose(2, 3)
        (gx,) = L.autograd.grad([L.avg_pool2d(x, [3, 3], [2, 2])], [x], [gt])
        np.testing.assert_allclose(gx.numpy(), avg_pool2d_grad_ref(a.shape, g, (3, 3), (2, 2), (0, 0), False,
                                                                   True, None), rtol=1e-12, atol=1e-12)

    def test_double_backward(self):
        # create_graph keeps the formula, whose own gradient is the forward again
        rng = np.random.default_rng(8)
        a = rng.standard_normal((1, 2, 7, 9))
        x = L.from_numpy(a).requires_grad_(True)
        g = L.from_numpy(rng.standard_normal((1, 2, 4, 5))).requires_grad_(True)
        (gx,) = L.autograd.grad([L.avg_pool2d(x, [3, 3], [2, 2], [1, 1])], [x], [g], create_graph=True)
        v = rng.standard_normal(a.shape)
        (gg,) = L.autograd.grad([(gx * L.from_numpy(v)).sum()], [g])
        np.testing.assert_allclose(gg.numpy(), L.avg_pool2d(L.from_numpy(v), [3, 3], [2, 2], [1, 1]).numpy(),
                                   rtol=1e-12, atol=1e-12)

    @needs_torch
    def test_against_torch(self):
        rng = np.random.default_rng(9)
        for shape, k, st, p, ceil, cip, div in self.CASES:
            a = rng.standard_normal(shape).astype(np.float32)
            x, t = L.from_numpy(a).requires_grad_(True), torch.from_numpy(a).requires_grad_(True)
            y = L.avg_pool2d(x, list(k), list(st), list(p), ceil, cip, div)
            ty = torch.nn.functional.avg_pool2d(t, k, st, p, ceil, cip, div)
            g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
            y.backward(L.from_numpy(g))
            ty.backward(torch.from_numpy(g))
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
        for shape, osz in (((2, 64, 7, 7), 1), ((2, 19, 13, 11), (4, 5))):
            a = rng.standard_normal(shape).astype(np.float32)
            x, t = L.from_numpy(a).requires_grad_(True), torch.from_numpy(a).requires_grad_(True)
            y = L.adaptive_avg_pool2d(x, [osz, osz] if isinstance(osz, int) else list(osz))
            ty = torch.nn.functional.adaptive_avg_pool2d(t, osz)
            g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
            y.backward(L.from_numpy(g))
            ty.backward(torch.from_numpy(g))
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


class TestNormStr(unittest.TestCase):
    def test_fro(self):
        a = np.random.default_rng(2).normal(size=(2, 3, 4))
        x = L.from_numpy(a)
        self.assertAlmostEqual(L.norm(x, "fro").item(), np.sqrt((a * a).sum()), places=12)
        self.assertAlmostEqual(x.norm("fro").item(), np.sqrt((a * a).sum()), places=12)
        r = L.norm(x, "fro", dim=[0, 2], keepdim=True)
        np.testing.assert_allclose(r.numpy(), np.sqrt((a * a).sum(axis=(0, 2), keepdims=True)), rtol=1e-12)
        self.assertEqual(L.norm(x, "fro", [0, 1, 2]).shape, ())
        self.assertEqual(L.norm(x.float(), "fro", dtype=L.float64).dtype, L.float64)

    def test_nuc(self):
        a = np.random.default_rng(4).normal(size=(3, 5, 4))
        x = L.from_numpy(a)
        np.testing.assert_allclose(L.norm(x[0], "nuc").item(), np.linalg.svd(a[0], compute_uv=False).sum(),
                                   rtol=1e-12)
        r = L.norm(x, "nuc", dim=[1, 2])
        np.testing.assert_allclose(r.numpy(), np.linalg.svd(a, compute_uv=False).sum(-1), rtol=1e-12)
        r = L.norm(x, "nuc", dim=[2, 0], keepdim=True)
        self.assertEqual(r.shape, (1, 5, 1))
        want = np.linalg.svd(np.moveaxis(a, (2, 0), (-2, -1)), compute_uv=False).sum(-1)
        np.testing.assert_allclose(r.numpy().ravel(), want, rtol=1e-12)
        # hand-derived: diag(3, -4) has singular values 3 and 4; a rank-1 outer product
        self.assertAlmostEqual(L.nuclear_norm(L.tensor([[3.0, 0.0], [0.0, -4.0]])).item(), 7.0, places=6)
        u, v = np.array([1.0, 2.0, 2.0]), np.array([3.0, 4.0])
        self.assertAlmostEqual(L.nuclear_norm(L.from_numpy(np.outer(u, v))).item(), 15.0, places=12)
        self.assertEqual(L.nuclear_norm(L.zeros(0, 3)).item(), 0.0)
        self.assertEqual(L.norm(L.ones(3, 4, dtype=L.float32), "nuc").dtype, L.float32)

    def test_gradients(self):
        a = np.random.default_rng(6).normal(size=(2, 4, 3))
        for p, dim in (("fro", None), ("fro", [1]), ("nuc", [1, 2]), ("nuc", [0, 2])):
            x = L.from_numpy(a.copy()).requires_grad_()
            L.norm(x, p, dim).sum().backward()

            def f(v, p=p, dim=dim):
                return L.norm(L.from_numpy(v), p, dim).sum().item()
            np.testing.assert_allclose(x.grad.numpy(), num_grad(f, a), rtol=1e-6, atol=1e-7, err_msg=f"{p} {dim}")
        # the nuclear norm's gradient is U Vᵀ: for diag(3, -4) that is diag(1, -1)
        x = L.tensor([[3.0, 0.0], [0.0, -4.0]], dtype=L.float64, requires_grad=True)
        L.nuclear_norm(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), [[1.0, 0.0], [0.0, -1.0]], atol=1e-12)

    def test_errors(self):
        x = L.ones(2, 3, 4)
        with self.assertRaisesRegex(RuntimeError, "norm: only valid string values of p are 'fro' and 'nuc', "
                                                  "found 'bogus'"):
            L.norm(x, "bogus")
        with self.assertRaisesRegex(RuntimeError, "nuclear_norm: Expected a tensor with 2 dimensions, but got a "
                                                  "tensor with 3 dimensions instead"):
            L.norm(x, "nuc")
        with self.assertRaisesRegex(RuntimeError, r"norm: nuclear norm requires a 'dim' argument of size 2, but "
                                                  r"got dim=\[1\]"):
            L.norm(x, "nuc", [1])
        with self.assertRaisesRegex(RuntimeError, r"nuclear_norm: duplicate or invalid dimensions \[1, -2\]"):
            L.norm(x, "nuc", [1, -2])
        with self.assertRaisesRegex(RuntimeError, "norm: dtype argument is not supported in nuclear norm"):
            L.norm(x[0], "nuc", dtype=L.float64)
        with self.assertRaisesRegex(RuntimeError, "norm: input dtype should be either floating point"):
            L.norm(L.ones(2, 2, dtype=L.int64), "fro")
        with self.assertRaisesRegex(RuntimeError, "nuclear_norm.*float16"):
            L.nuclear_norm(L.ones(2, 2, dtype=L.float16))

    @needs_torch
    def test_against_torch(self):
        a = np.random.default_rng(8).normal(size=(3, 4, 5))
        for p, dim, keepdim in (("fro", None, False), ("fro", [0, 2], True), ("fro", [1], False),
                                ("nuc", [1, 2], False), ("nuc", [2, 0], True), ("nuc", [-1, -2], False)):
            t = torch.tensor(a, requires_grad=True)
            x = L.from_numpy(a.copy()).requires_grad_()
            tr = torch.norm(t, p, dim, keepdim)
            r = L.norm(x, p, dim, keepdim)
            np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy(), rtol=1e-12, atol=1e-12)
            tr.sum().backward()
            r.sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"{p} {dim}")
        t = torch.tensor(a[0])
        np.testing.assert_allclose(L.norm(L.from_numpy(a[0]), "nuc").item(), torch.norm(t, "nuc").item(), rtol=1e-12)


if __name__ == "__main__":
    unittest.main()

"""Arguments and overloads PyTorch accepts (issue 15): nonzero(as_tuple=), the pools'
return_indices= and their *_with_indices ops, narrow with a Tensor start,
round(decimals=), tensor_split with a Tensor, std/var(unbiased=), hsplit/vsplit/dsplit
with a list.  Each is checked against NumPy or hand-derived values, and against
PyTorch where python3-torch is installed (CI has none)."""

import unittest

import numpy as np

import libops as L

try:
    import torch
except ImportError:  # CI has no PyTorch: those comparisons are skipped there
    torch = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")


class Base(unittest.TestCase):
    def assertTensorEqual(self, t, a, rtol=1e-6, atol=1e-6):
        self.assertIsInstance(t, L.Tensor)
        a = np.asarray(a)
        self.assertEqual(tuple(t.shape), a.shape)
        got = t.detach().numpy()
        if a.dtype.kind == "f" or got.dtype.kind == "f":
            np.testing.assert_allclose(got.astype(np.float64), a.astype(np.float64), rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(got, a)

    def assertPieces(self, pieces, refs):
        self.assertIsInstance(pieces, tuple)
        self.assertEqual(len(pieces), len(refs))
        for p, r in zip(pieces, refs):
            self.assertTensorEqual(p, r)


class TestNonzeroAsTuple(Base):
    def test_as_tuple(self):
        a = np.array([[0, 2, 0], [1, 1, 0]])
        x = L.tensor(a)
        for r in (L.nonzero(x, as_tuple=True), x.nonzero(as_tuple=True)):
            self.assertPieces(r, np.nonzero(a))
            self.assertTrue(all(t.dtype == L.int64 for t in r))
        # as_tuple=False is the [n, ndim] form
        self.assertTensorEqual(L.nonzero(x, as_tuple=False), np.argwhere(a))
        self.assertTensorEqual(x.nonzero(as_tuple=False), np.argwhere(a))

    def test_zero_dim(self):
        # a 0-dim input is seen as one element: a 1-tuple
        self.assertPieces(L.nonzero(L.tensor(5), as_tuple=True), [np.array([0])])
        self.assertPieces(L.tensor(0.0).nonzero(as_tuple=True), [np.zeros(0, np.int64)])

    def test_errors(self):
        x = L.tensor([0, 1])
        with self.assertRaisesRegex(RuntimeError, "nonzero does not support the out kwarg when as_tuple is True"):
            L.nonzero(x, as_tuple=True, out=L.empty(0, dtype=L.int64))
        with self.assertRaisesRegex(TypeError, "argument 'as_tuple' must be bool, not int"):
            L.nonzero(x, as_tuple=1)
        out = L.empty(0, dtype=L.int64)
        self.assertIs(L.nonzero(x, as_tuple=False, out=out), out)
        self.assertTensorEqual(out, [[1]])

    @needs_torch
    def test_vs_torch(self):
        a = np.array([[[0, 1], [2, 0]], [[3, 0], [0, 0]]])
        got = L.nonzero(L.tensor(a), as_tuple=True)
        want = torch.nonzero(torch.tensor(a), as_tuple=True)
        self.assertPieces(got, [w.numpy() for w in want])


class TestPoolIndices(Base):
    def test_max_pool1d_with_indices(self):
        x = L.tensor([[0.0, 5, 5, 1, 2, 0, 5, 3]])
        v, i = L.max_pool1d_with_indices(x, 2)
        self.assertTensorEqual(v, [[5, 5, 2, 5]])
        self.assertTensorEqual(i, [[1, 2, 4, 6]])
        self.assertEqual(i.dtype, L.int64)
        # return_indices=True is the same op (torch.nn.functional's spelling)
        v2, i2 = L.max_pool1d(x, 2, return_indices=True)
        self.assertTensorEqual(v2, v.numpy())
        self.assertTensorEqual(i2, i.numpy())
        self.assertTensorEqual(L.max_pool1d(x, 2, return_indices=False), v.numpy())
        # stride and padding: indices stay offsets into the unpadded input, and the
        # first of equal maxima wins (windows [-1, 2), [1, 4), [3, 6), [5, 8))
        v, i = L.max_pool1d_with_indices(x, 3, 2, 1)
        self.assertTensorEqual(v, [[5, 5, 2, 5]])
        self.assertTensorEqual(i, [[1, 1, 4, 6]])

    def test_max_pool2d_return_indices(self):
        x = L.arange(16.0).view(1, 4, 4)
        v, i = L.max_pool2d(x, 2, return_indices=True)
        self.assertTensorEqual(v, [[[5, 7], [13, 15]]])
        self.assertTensorEqual(i, [[[5, 7], [13, 15]]])

    def test_gradient(self):
        a = np.array([[[0.0, 5, 4, 1, 2, 0, 6, 3]]])
        x = L.tensor(a, dtype=L.float64, requires_grad=True)
        v, i = L.max_pool1d_with_indices(x, 2)
        (v * L.tensor([[[1.0, 2, 3, 4]]], dtype=L.float64)).sum().backward()
        self.assertTensorEqual(x.grad, [[[0, 1, 2, 0, 3, 0, 4, 0]]])
        x.grad = None
        v, i = L.adaptive_max_pool1d(x, 3)
        v.sum().backward()
        self.assertTensorEqual(x.grad, np.bincount(i.numpy().ravel(), minlength=8)[None, None].astype(np.float64))

    def test_adaptive_max_pool1d(self):
        a = np.array([[0.0, 5, 4, 1, 2, 0, 6, 3]])
        v, i = L.adaptive_max_pool1d(L.tensor(a), 3)
        # windows [0, 3), [2, 6), [5, 8)
        self.assertTensorEqual(v, [[5, 4, 6]])
        self.assertTensorEqual(i, [[1, 2, 6]])
        with self.assertRaisesRegex(RuntimeError, "adaptive_max_pool1d\\(\\): Expected 2D or 3D tensor"):
            L.adaptive_max_pool1d(L.ones(4), 2)

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "argument 'return_indices' must be bool"):
            L.max_pool1d(L.ones(1, 4), 2, return_indices=None)
        with self.assertRaisesRegex(RuntimeError, "max_pool1d_with_indices"):
            L.max_pool1d_with_indices(L.ones(1, 4, dtype=L.int64), 2)

    @needs_torch
    def test_vs_torch(self):
        a = np.random.default_rng(0).standard_normal((2, 3, 11))
        for args in [(2,), (3, 2, 1), (3, 2, 1, 2, True), (4, 3, 2, 1, True)]:
            v, i = L.max_pool1d_with_indices(L.tensor(a), *args)
            tv, ti = torch.max_pool1d_with_indices(torch.tensor(a), *args)
            self.assertTensorEqual(v, tv.numpy())
            self.assertTensorEqual(i, ti.numpy())
        for n in (1, 3, 7, 11, 13):
            v, i = L.adaptive_max_pool1d(L.tensor(a), n)
            tv, ti = torch.adaptive_max_pool1d(torch.tensor(a), n)
            self.assertTensorEqual(v, tv.numpy())
            self.assertTensorEqual(i, ti.numpy())


class TestNarrowTensor(Base):
    def test_values(self):
        a = np.arange(20).reshape(4, 5)
        x = L.tensor(a)
        self.assertTensorEqual(L.narrow(x, 0, L.tensor(1), 2), a[1:3])
        self.assertTensorEqual(x.narrow(1, L.tensor(-3), 3), a[:, 2:5])
        self.assertTensorEqual(x.narrow(1, L.tensor(2, dtype=L.int32), 1), a[:, 2:3])
        # a view, as narrow with an int start
        v = L.narrow(x, 0, L.tensor(1), 2)
        v[0, 0] = 100
        self.assertEqual(x[1, 0].item(), 100)

    def test_errors(self):
        x = L.arange(5)
        for bad in (L.tensor([1]), L.tensor(1.0), L.tensor(True)):
            with self.assertRaisesRegex(RuntimeError, "narrow: start must be an 0-dim integral Tensor"):
                L.narrow(x, 0, bad, 2)
        with self.assertRaisesRegex(RuntimeError, "exceeds dimension size"):
            L.narrow(x, 0, L.tensor(4), 2)

    def test_gradient(self):
        x = L.tensor(np.arange(5.0), requires_grad=True)
        (L.narrow(x, 0, L.tensor(1), 3) * L.tensor([1.0, 2, 3])).sum().backward()
        self.assertTensorEqual(x.grad, [0, 1, 2, 3, 0])

    @needs_torch
    def test_vs_torch(self):
        a = np.arange(30.0).reshape(5, 6)
        for dim, start, n in [(0, 2, 3), (1, -4, 2), (-1, 0, 6)]:
            self.assertTensorEqual(L.narrow(L.tensor(a), dim, L.tensor(start), n),
                                   torch.narrow(torch.tensor(a), dim, torch.tensor(start), n).numpy())


class TestZeroDimTensorForInt(Base):
    """torch's int arguments take a 0-dim integer tensor (not bool, floating or 1-D), and
    an overload taking a Tensor there is tried first (max(x, t) is max.other)."""

    def test_int_arguments(self):
        a = np.arange(12).reshape(4, 3)
        x = L.tensor(a)
        self.assertTensorEqual(x.select(0, L.tensor(1)), a[1])
        self.assertTensorEqual(L.select(x, L.tensor(1), L.tensor(-1, dtype=L.int8)), a[:, -1])
        self.assertEqual(tuple(x.view(L.tensor(3), 4).shape), (3, 4))  # varargs sizes
        self.assertEqual(tuple(x.reshape([L.tensor(2), 6]).shape), (2, 6))  # list elements
        self.assertEqual(tuple(L.zeros(L.tensor(2), 3).shape), (2, 3))
        self.assertPieces(L.tensor_split(x, L.tensor(2)), np.array_split(a, 2))

    def test_refused(self):
        x = L.arange(6)
        for bad in (L.tensor(1.0), L.tensor(True), L.tensor([1])):
            with self.assertRaises(TypeError):
                x.select(0, bad)
        # a bare tensor is not a whole int[] (torch refuses x.sum(torch.tensor(0)) too)
        with self.assertRaises(TypeError):
            x.sum(L.tensor(0))

    def test_tensor_overload_first(self):
        a = np.array([[1, 5, 3], [0, 9, 2]])
        x = L.tensor(a)
        self.assertTensorEqual(L.max(x, L.tensor(1)), np.maximum(a, 1))
        self.assertTensorEqual(x.min(L.tensor(1)), np.minimum(a, 1))
        self.assertTensorEqual(x.max(1).values, a.max(1))

    @needs_torch
    def test_vs_torch(self):
        a = np.array([[1, 5, 3], [0, 9, 2]])
        self.assertTensorEqual(L.max(L.tensor(a), L.tensor(2)), torch.max(torch.tensor(a), torch.tensor(2)).numpy())
        self.assertTensorEqual(L.tensor(a).select(1, L.tensor(2)),
                               torch.tensor(a).select(1, torch.tensor(2)).numpy())


class TestRoundDecimals(Base):
    def test_values(self):
        a = np.array([1.25, 2.35, 15.0, 25.0, -35.0, 0.125, -2.5])
        x = L.tensor(a, dtype=L.float64)
        for d in (0, 1, 2, -1, -2):
            # NumPy's np.round is the same formula (half to even after scaling)
            self.assertTensorEqual(L.round(x, decimals=d), np.round(a, d), rtol=0, atol=0)
            self.assertTensorEqual(x.round(decimals=d), np.round(a, d), rtol=0, atol=0)
        # hand-derived: 15 and 25 tie at decimals=-1 and go to the even multiple
        self.assertTensorEqual(L.round(L.tensor([15.0, 25.0, 35.0, -45.0]), decimals=-1), [20, 20, 40, -40])
        self.assertTensorEqual(L.round(L.tensor([0.5, 1.5, 2.5]), decimals=0), [0, 2, 2])

    def test_out_and_inplace(self):
        a = np.array([1.234, 5.678, -9.876], dtype=np.float32)
        out = L.empty(3)
        self.assertIs(L.round(L.tensor(a), decimals=2, out=out), out)
        self.assertTensorEqual(out, np.round(a, 2))
        x = L.tensor(a)
        self.assertIs(x.round_(decimals=1), x)
        self.assertTensorEqual(x, np.round(a, 1))
        x = L.tensor(a)
        L.round_(x, decimals=-1)
        self.assertTensorEqual(x, [0, 10, -10])

    def test_dtypes(self):
        for dt in (L.float16, L.bfloat16, L.float32):
            r = L.round(L.tensor([1.25, 2.75], dtype=dt), decimals=1)
            self.assertEqual(r.dtype, dt)
        with self.assertRaisesRegex(RuntimeError, "round"):
            L.round(L.tensor([15, 25]), decimals=-1)

    def test_gradient_zero(self):
        x = L.tensor([1.26, 2.5], dtype=L.float64, requires_grad=True)
        L.round(x, decimals=1).sum().backward()
        self.assertTensorEqual(x.grad, [0, 0])

    @needs_torch
    def test_vs_torch(self):
        a = np.random.default_rng(1).uniform(-100, 100, 50)
        for dt in ("float32", "float64"):
            for d in (-2, -1, 0, 1, 3):
                self.assertTensorEqual(L.round(L.tensor(a.astype(dt)), decimals=d),
                                       torch.round(torch.tensor(a.astype(dt)), decimals=d).numpy(), rtol=0, atol=0)


class TestTensorSplitTensor(Base):
    def test_sections_and_indices(self):
        a = np.arange(14).reshape(7, 2)
        x = L.tensor(a)
        self.assertPieces(L.tensor_split(x, L.tensor(3)), np.array_split(a, 3))
        self.assertPieces(x.tensor_split(L.tensor([1, 4])), np.split(a, [1, 4]))
        self.assertPieces(L.tensor_split(x, L.tensor([1]), 1), np.split(a, [1], axis=1))
        self.assertPieces(L.tensor_split(x, L.tensor([5, 2]), dim=0), [a[:5], a[5:2], a[2:]])
        # a strided index tensor
        self.assertPieces(L.tensor_split(x, L.tensor([1, 9, 4, 9])[::2]), np.split(a, [1, 4]))

    def test_errors(self):
        x = L.arange(6)
        with self.assertRaisesRegex(RuntimeError, "to have dtype of long \\(int64\\), but got float32"):
            L.tensor_split(x, L.tensor([1.0]))
        with self.assertRaisesRegex(RuntimeError, "zero-dimensional or one-dimensional tensor, but got a tensor "
                                                  "with 2 dims"):
            L.tensor_split(x, L.tensor([[1, 2]]))
        with self.assertRaisesRegex(RuntimeError, "number of sections must be larger than 0, got 0"):
            L.tensor_split(x, L.tensor(0))

    def test_gradient(self):
        x = L.tensor(np.arange(6.0), requires_grad=True)
        p = L.tensor_split(x, L.tensor([4, 2]))  # overlapping pieces x[:4], x[4:2], x[2:]
        (p[0].sum() + 2 * p[2].sum()).backward()
        self.assertTensorEqual(x.grad, [1, 1, 3, 3, 2, 2])
        x.grad = None
        p = L.tensor_split(x, L.tensor(3))
        (p[1] * 5).sum().backward()
        self.assertTensorEqual(x.grad, [0, 0, 5, 5, 0, 0])

    @needs_torch
    def test_vs_torch(self):
        a = np.arange(24.0).reshape(4, 6)
        for t, dim in [(3, 1), (5, 0), ([1, -2], 1), ([], 0), ([3, 1, 8], 1)]:
            got = L.tensor_split(L.tensor(a), L.tensor(t, dtype=L.int64), dim)
            want = torch.tensor_split(torch.tensor(a), torch.tensor(t, dtype=torch.int64), dim)
            self.assertPieces(got, [w.numpy() for w in want])


class TestStdVarUnbiased(Base):
    a = np.random.default_rng(2).standard_normal((3, 4, 5))

    def test_values(self):
        a = self.a
        x = L.tensor(a)
        for u in (True, False):
            dd = 1 if u else 0
            self.assertTensorEqual(L.var(x, u), np.var(a, ddof=dd))
            self.assertTensorEqual(x.std(unbiased=u), np.std(a, ddof=dd))
            self.assertTensorEqual(L.var(x, 1, u), np.var(a, axis=1, ddof=dd))
            self.assertTensorEqual(x.std([0, 2], u, True), np.std(a, axis=(0, 2), ddof=dd, keepdims=True))
            self.assertTensorEqual(L.std(x, dim=2, unbiased=u, keepdim=False), np.std(a, axis=2, ddof=dd))
            self.assertTensorEqual(L.var(x, None, u), np.var(a, ddof=dd))
        # the correction= forms are still there
        self.assertTensorEqual(L.var(x, 1, correction=2), np.var(a, axis=1, ddof=2))
        self.assertTensorEqual(x.std(), np.std(a, ddof=1))

    def test_out(self):
        a = self.a
        out = L.empty(0, dtype=L.float64)
        self.assertIs(L.std(L.tensor(a), 1, False, out=out), out)
        self.assertTensorEqual(out, np.std(a, axis=1))
        self.assertIs(L.var(L.tensor(a), [0], True, keepdim=True, out=out), out)
        self.assertTensorEqual(out, np.var(a, axis=0, ddof=1, keepdims=True))

    def test_mean_forms(self):
        a = self.a
        v, m = L.var_mean(L.tensor(a), 1, False)
        self.assertTensorEqual(v, np.var(a, axis=1))
        s, m = L.std_mean(L.tensor(a), unbiased=False)
        self.assertTensorEqual(s, np.std(a))
        self.assertTensorEqual(m, np.mean(a))

    def test_gradient(self):
        a = np.array([1.0, 2.0, 4.0, 7.0])
        for u in (True, False):
            n = a.size - (1 if u else 0)
            x = L.tensor(a, requires_grad=True)
            L.var(x, u).backward()
            self.assertTensorEqual(x.grad, 2 * (a - a.mean()) / n, rtol=1e-12)
            x = L.tensor(a, requires_grad=True)
            L.std(x, 0, u).backward()
            sd = np.sqrt(np.sum((a - a.mean()) ** 2) / n)
            self.assertTensorEqual(x.grad, (a - a.mean()) / (n * sd), rtol=1e-12)

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "std and var only support floating point"):
            L.var(L.arange(4), False)
        with self.assertRaises(TypeError):
            L.var(L.ones(3), 0, unbiased=True, correction=1)

    @needs_torch
    def test_vs_torch(self):
        a = self.a
        t = torch.tensor(a)
        x = L.tensor(a)
        for u in (True, False):
            self.assertTensorEqual(L.std(x, u), torch.std(t, u).numpy())
            self.assertTensorEqual(x.var(2, u, True), t.var(2, u, True).numpy())
            self.assertTensorEqual(L.std(x, [0, 1], unbiased=u), torch.std(t, [0, 1], unbiased=u).numpy())


class TestSplitsWithList(Base):
    def test_values(self):
        a = np.arange(36).reshape(2, 6, 3)
        x = L.tensor(a)
        self.assertPieces(L.hsplit(x, [1, 4]), np.hsplit(a, [1, 4]))
        self.assertPieces(x.vsplit([1]), np.vsplit(a, [1]))
        self.assertPieces(L.dsplit(x, (2, -1, 5)), np.dsplit(a, [2, -1, 5]))
        self.assertPieces(L.hsplit(L.arange(6), [2, 3]), np.hsplit(np.arange(6), [2, 3]))
        # an int is still the number of sections
        self.assertPieces(L.hsplit(x, 3), np.hsplit(a, 3))

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "torch.vsplit requires a tensor with at least 2 dimension, but "
                                                  "got a tensor with 1 dimensions!"):
            L.vsplit(L.arange(6), [1])
        with self.assertRaisesRegex(RuntimeError, "torch.hsplit requires a tensor with at least 1 dimension"):
            L.hsplit(L.tensor(1), [1])

    def test_gradient(self):
        x = L.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        p = L.hsplit(x, [1, 3])
        (p[1] * 2).sum().backward()
        g = np.zeros((3, 4))
        g[:, 1:3] = 2
        self.assertTensorEqual(x.grad, g)

    @needs_torch
    def test_vs_torch(self):
        a = np.arange(48.0).reshape(4, 4, 3)
        for name, idx in [("hsplit", [1, 3]), ("vsplit", [2]), ("dsplit", [1, 2]), ("hsplit", [3, 1])]:
            got = getattr(L, name)(L.tensor(a), idx)
            want = getattr(torch, name)(torch.tensor(a), idx)
            self.assertPieces(got, [w.numpy() for w in want])


if __name__ == "__main__":
    unittest.main()

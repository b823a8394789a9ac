"""The Python module libops: values against NumPy (and PyTorch where python3-torch is
installed), type promotion, the generated argument parsing, the Tensor type, indexing
and NumPy interop (autograd, PyTorch's rules, threads, errors and leaks:
test_libops_autograd.py).  Run by `meson test` (suite python) with the build tree's
package first on PYTHONPATH."""

import gc
import operator
import os
import sys
import unittest
import weakref

import numpy as np

import libops as L

from libops_test_base import NP_OF, TORCH_NAME, Base, needs_torch, rng_array, torch


class TestValues(Base):
    def test_binary_vs_numpy(self):
        a = rng_array((3, 4), np.float32, 1)
        b = rng_array((4,), np.float32, 2) + 6  # no zeros for / and %
        x, y = L.from_numpy(a), L.from_numpy(b)
        for op, ref in [(operator.add, np.add), (operator.sub, np.subtract), (operator.mul, np.multiply),
                        (operator.truediv, np.divide), (operator.floordiv, np.floor_divide),
                        (operator.mod, np.mod), (operator.pow, lambda p, q: np.abs(p) ** q)]:
            with self.subTest(op=op.__name__):
                if op is operator.pow:
                    self.assertTensorEqual(op(abs(x), y), ref(a, b), rtol=1e-5)
                else:
                    self.assertTensorEqual(op(x, y), ref(a, b), rtol=1e-5, atol=1e-5)
        m = rng_array((4, 2), np.float32, 3)
        self.assertTensorEqual(x @ L.from_numpy(m), a @ m, rtol=1e-5, atol=1e-5)

    def test_integer_and_bitwise(self):
        a = rng_array((5,), np.int32, 4)
        b = rng_array((5,), np.int32, 5, 1, 4)
        x, y = L.from_numpy(a), L.from_numpy(b)
        self.assertTensorEqual(x & y, a & b)
        self.assertTensorEqual(x | y, a | b)
        self.assertTensorEqual(x ^ y, a ^ b)
        self.assertTensorEqual(~x, ~a)
        self.assertTensorEqual(x << y, a << b)
        self.assertTensorEqual(x >> y, a >> b)
        self.assertTensorEqual(x // y, a // b)
        self.assertTensorEqual(x % y, a % b)

    def test_comparisons(self):
        a = rng_array((6,), np.int64, 6)
        x = L.from_numpy(a)
        for op in (operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge):
            with self.subTest(op=op.__name__):
                self.assertTensorEqual(op(x, 1), op(a, 1))
                self.assertTensorEqual(op(1, x), op(1, a))
                self.assertTensorEqual(op(x, x.flip(0)), op(a, a[::-1]))

    def test_unary_and_reductions(self):
        a = rng_array((3, 5), np.float64, 7, 0.1, 3)
        x = L.from_numpy(a)
        self.assertTensorEqual(x.exp(), np.exp(a))
        self.assertTensorEqual(L.sqrt(x), np.sqrt(a))
        self.assertTensorEqual(-x, -a)
        self.assertTensorEqual(abs(-x), a)
        self.assertTensorEqual(x.sum(), a.sum())
        self.assertTensorEqual(x.sum(0), a.sum(0))
        self.assertTensorEqual(x.sum([0, 1]), a.sum((0, 1)))
        self.assertTensorEqual(x.sum(dim=1, keepdim=True), a.sum(1, keepdims=True))
        self.assertTensorEqual(x.mean(1), a.mean(1))
        mx = x.max(1)
        self.assertTensorEqual(mx.values, a.max(1))
        self.assertTensorEqual(mx.indices, a.argmax(1))
        v, i = x.max(dim=0)
        self.assertTensorEqual(v, a.max(0))
        self.assertTensorEqual(L.max(x), a.max())

    def test_factories(self):
        self.assertTensorEqual(L.zeros(2, 3), np.zeros((2, 3), np.float32))
        self.assertTensorEqual(L.zeros((2, 3)), np.zeros((2, 3), np.float32))
        self.assertTensorEqual(L.zeros([2, 3]), np.zeros((2, 3), np.float32))
        t = L.ones(4, dtype=L.int32)
        self.assertEqual(t.dtype, L.int32)
        self.assertTensorEqual(t, np.ones(4, np.int32))
        t = L.full((2,), 7, dtype=L.float64, device="cpu")
        self.assertEqual(t.dtype, L.float64)
        self.assertEqual(t.device, L.device("cpu"))
        self.assertTensorEqual(t, [7.0, 7.0])
        self.assertTensorEqual(L.arange(5), np.arange(5))
        self.assertEqual(L.arange(5).dtype, L.int64)
        self.assertEqual(L.arange(0.0, 1.0, 0.25).dtype, L.float32)
        self.assertTensorEqual(L.arange(1, 10, 3), np.arange(1, 10, 3))
        self.assertTensorEqual(L.eye(3), np.eye(3, dtype=np.float32))
        self.assertEqual(L.empty(2, 2, device=L.device("cpu")).shape, (2, 2))
        self.assertTensorEqual(L.zeros_like(L.ones(3)), np.zeros(3, np.float32))

    def test_against_torch_binary(self):
        if torch is None:
            self.skipTest("python3-torch is not installed")
        a = rng_array((2, 3), np.float32, 8)
        b = rng_array((2, 3), np.float32, 9)
        x, y = L.from_numpy(a), L.from_numpy(b)
        tx, ty = torch.from_numpy(a), torch.from_numpy(b)
        self.assertTensorEqual(L.add(x, y, alpha=2), torch.add(tx, ty, alpha=2).numpy())
        self.assertTensorEqual(L.atan2(x, y), torch.atan2(tx, ty).numpy(), rtol=1e-5)
        self.assertTensorEqual(x.softmax(1), tx.softmax(1).numpy(), rtol=1e-5)
        self.assertTensorEqual(L.where(x > 0, x, y), torch.where(tx > 0, tx, ty).numpy())
        self.assertTensorEqual(L.clamp(x, min=-1, max=1), torch.clamp(tx, min=-1, max=1).numpy())


class TestPromotion(Base):
    SCALARS = [True, 2, 2.5]
    DTYPES = [L.bool, L.uint8, L.int8, L.int16, L.int32, L.int64, L.float16, L.bfloat16, L.float32, L.float64]

    def test_scalar_promotion_rules(self):
        # a Python number does not promote a tensor within its category
        self.assertEqual((L.ones(2, dtype=L.int32) + 2).dtype, L.int32)
        self.assertEqual((L.ones(2, dtype=L.int32) + 2.5).dtype, L.float32)
        self.assertEqual((L.ones(2, dtype=L.float16) * 3.0).dtype, L.float16)
        self.assertEqual((L.ones(2, dtype=L.bool) + 1).dtype, L.int64)
        self.assertEqual((2 / L.ones(2, dtype=L.int64)).dtype, L.float32)
        self.assertEqual((L.ones(2, dtype=L.uint8) - 1).dtype, L.uint8)
        self.assertTensorEqual(2 - L.tensor([1, 5]), [1, -3])
        self.assertTensorEqual(2 ** L.tensor([1.0, 3.0]), [2.0, 8.0])
        self.assertTensorEqual(7 // L.tensor([2, 3]), [3, 2])
        self.assertTensorEqual(7 % L.tensor([2, 3]), [1, 1])
        self.assertTensorEqual(6 & L.tensor([3, 5]), [2, 4])

    @needs_torch
    def test_scalar_promotion_matches_torch(self):
        for dt in self.DTYPES:
            for s in self.SCALARS:
                for op in (operator.add, operator.mul, operator.truediv):
                    with self.subTest(dtype=dt, scalar=s, op=op.__name__):
                        tt = torch.ones(2, dtype=getattr(torch, TORCH_NAME[dt]))
                        try:
                            want = op(tt, s).dtype
                        except RuntimeError:
                            continue
                        got = op(L.ones(2, dtype=dt), s).dtype
                        self.assertEqual(TORCH_NAME[got], str(want).replace("torch.", ""))
                        got = op(s, L.ones(2, dtype=dt)).dtype
                        self.assertEqual(TORCH_NAME[got], str(op(s, tt).dtype).replace("torch.", ""))

    @needs_torch
    def test_tensor_promotion_matches_torch(self):
        for a in self.DTYPES:
            for b in self.DTYPES:
                with self.subTest(a=a, b=b):
                    got = (L.ones(2, dtype=a) * L.ones(2, dtype=b)).dtype
                    want = torch.ones(2, dtype=getattr(torch, TORCH_NAME[a])) * torch.ones(
                        2, dtype=getattr(torch, TORCH_NAME[b]))
                    self.assertEqual(TORCH_NAME[got], str(want.dtype).replace("torch.", ""))


class TestParsing(Base):
    def test_positional_keyword_defaults(self):
        x, y = L.tensor([1.0, 2.0]), L.tensor([10.0, 20.0])
        self.assertTensorEqual(L.add(x, y), [11, 22])
        self.assertTensorEqual(L.add(x, y, alpha=2), [21, 42])
        self.assertTensorEqual(L.add(input=x, other=y), [11, 22])
        self.assertTensorEqual(x.add(y, alpha=3), [31, 62])
        self.assertTensorEqual(x.add(other=y), [11, 22])
        # add.Scalar takes alpha positionally; add.Tensor only by keyword
        self.assertTensorEqual(L.add(x, 1, 2), [3, 4])
        with self.assertRaises(TypeError):
            L.add(x, y, 2)

    def test_overloads(self):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]])
        self.assertTensorEqual(L.add(x, 1), [[2, 3], [4, 5]])      # Scalar overload
        self.assertTensorEqual(L.add(x, x), [[2, 4], [6, 8]])      # Tensor overload
        self.assertTensorEqual(x.sum(0), [4, 6])                   # int for int[]
        self.assertTensorEqual(x.sum((0, 1)), 10)
        self.assertEqual(L.ones(1, 3, 1).squeeze(0).shape, (3, 1))   # squeeze.dim (int)
        self.assertEqual(L.ones(1, 3, 1).squeeze((0, 2)).shape, (3,))  # squeeze.dims (int[])
        self.assertEqual(L.ones(1, 3, 1).squeeze().shape, (3,))
        self.assertTensorEqual(L.pow(2, L.tensor([1.0, 2.0])), [2, 4])  # pow.Scalar
        self.assertTensorEqual(x.view(4), [1, 2, 3, 4])
        self.assertEqual(x.view(1, 4).shape, (1, 4))
        self.assertEqual(x.permute(1, 0).stride(), (1, 2))
        self.assertEqual(x.reshape(-1).shape, (4,))
        self.assertEqual(L.div(L.tensor([7, -7]), 2, rounding_mode="floor").tolist(), [3, -4])

    def test_out_and_inplace_identity(self):
        x, y = L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])
        out = L.empty(2)
        r = L.add(x, y, out=out)
        self.assertIs(r, out)
        self.assertTensorEqual(out, [4, 6])
        r = L.mul(x, 2, out=out)
        self.assertIs(r, out)
        self.assertTensorEqual(out, [2, 4])
        r = x.add_(y)
        self.assertIs(r, x)
        self.assertTensorEqual(x, [4, 6])
        before = x
        x += 1
        self.assertIs(x, before)
        self.assertTensorEqual(x, [5, 7])
        x *= L.tensor([2.0, 2.0])
        x -= 1
        x /= 3
        self.assertTensorEqual(x, [3, 13 / 3])
        v, i = L.empty(0), L.empty(0, dtype=L.int64)
        r = L.max(L.tensor([[1.0, 5.0], [3.0, 2.0]]), 1, max=v, max_values=i)
        self.assertIs(r[0], v)
        self.assertTensorEqual(v, [5, 3])

    def test_list_returns(self):
        parts = L.arange(6).split(2)
        self.assertIsInstance(parts, tuple)
        self.assertEqual([p.tolist() for p in parts], [[0, 1], [2, 3], [4, 5]])
        self.assertEqual(len(L.unbind(L.ones(3, 2))), 3)
        cat = L.cat([L.ones(2), L.zeros(1)])
        self.assertEqual(cat.tolist(), [1.0, 1.0, 0.0])

    def test_type_errors_name_the_parameter(self):
        x = L.ones(2)
        with self.assertRaisesRegex(TypeError, r"neg\(\): argument 'input' \(position 1\) must be Tensor, not str"):
            L.neg("a")
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'bogus'"):
            L.neg(x, bogus=1)
        with self.assertRaises(TypeError) as cm:
            L.add(x, "a")
        msg = str(cm.exception)
        self.assertIn("add() received an invalid combination of arguments - got (Tensor, str), but expected one of:",
                      msg)
        self.assertIn("(Tensor input, Tensor other, *, Number alpha=1)", msg)
        self.assertIn("(Tensor input, Number other, Number alpha=1)", msg)
        with self.assertRaisesRegex(TypeError, "missing required argument 'other'"):
            L.atan2(x)

    def test_every_schema_variant_is_bound(self):
        """Each `function` variant of the schema is libops.<name>, each `method` variant a
        Tensor method, and each overload appears in the name's docstring."""
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        sys.path.insert(0, root)
        try:
            from codegen import model
        finally:
            sys.path.pop(0)
        m = model.load_model(os.path.join(root, "ops", "native_functions.yaml"))
        nfun = nmeth = 0
        for nf in m.functions:
            name = nf.func.name
            if "function" in nf.variants:
                nfun += 1
                self.assertTrue(callable(getattr(L, name, None)), name)
                self.assertIn(name + "(", getattr(L, name).__doc__)
            if "method" in nf.variants and nf.func.name not in ("size", "stride", "to"):
                nmeth += 1
                self.assertTrue(callable(getattr(L.Tensor, name, None)), name)
        self.assertGreater(nfun, 500)
        self.assertGreater(nmeth, 300)

    def test_every_function_and_method_is_bound(self):
        for name in ("add", "sum", "matmul", "conv2d", "softmax", "where", "index_select", "sort", "topk"):
            self.assertTrue(callable(getattr(L, name)), name)
        for name in ("add", "add_", "sum", "view", "permute", "exp_", "index_put_"):
            self.assertTrue(callable(getattr(L.Tensor, name)), name)
        self.assertIn("add(Tensor input, Tensor other", L.add.__doc__)


class TestTensor(Base):
    def test_attributes(self):
        x = L.zeros(2, 3, 4)
        self.assertEqual(x.shape, (2, 3, 4))
        self.assertEqual(x.size(), (2, 3, 4))
        self.assertEqual(x.size(1), 3)
        self.assertEqual(x.size(-1), 4)
        self.assertEqual(x.stride(), (12, 4, 1))
        self.assertEqual(x.ndim, 3)
        self.assertEqual(x.dim(), 3)
        self.assertEqual(x.numel(), 24)
        self.assertTrue(x.is_contiguous())
        t = x.transpose(0, 2)
        self.assertFalse(t.is_contiguous())
        self.assertEqual(t.stride(), (1, 4, 12))
        self.assertEqual(x[1, 1:].storage_offset(), 16)
        self.assertEqual(str(x.device), "cpu")
        self.assertEqual(repr(x.device), "device(type='cpu')")
        self.assertEqual(x.dtype, L.float32)
        self.assertEqual(repr(L.float32), "libops.float32")
        self.assertEqual(L.float32.itemsize, 4)
        self.assertIs(L.float, L.float32)
        self.assertIs(L.long, L.int64)

    def test_item_tolist(self):
        self.assertEqual(L.tensor(3.5).item(), 3.5)
        self.assertIsInstance(L.tensor(3).item(), int)
        self.assertIs(L.tensor(True).item(), True)
        self.assertEqual(L.tensor([[1, 2], [3, 4]]).tolist(), [[1, 2], [3, 4]])
        self.assertEqual(L.tensor([[1, 2], [3, 4]]).t().tolist(), [[1, 3], [2, 4]])
        self.assertEqual(L.tensor([1.5, 2.5], dtype=L.float16).tolist(), [1.5, 2.5])
        self.assertEqual(float(L.tensor([2.5])), 2.5)
        self.assertEqual(int(L.tensor(7)), 7)
        self.assertEqual([0, 1, 2][L.tensor(1)], 1)
        with self.assertRaises(RuntimeError):
            L.ones(2).item()

    def test_repr(self):
        self.assertEqual(repr(L.tensor([1.0, 2.0])), "tensor([1., 2.])")
        self.assertEqual(repr(L.tensor([1, 2])), "tensor([1, 2])")
        self.assertEqual(repr(L.tensor([1, 2], dtype=L.int32)), "tensor([1, 2], dtype=libops.int32)")
        self.assertEqual(repr(L.tensor(2.5)), "tensor(2.5000)")
        self.assertEqual(repr(L.tensor([1.0], requires_grad=True)), "tensor([1.], requires_grad=True)")
        self.assertIn("grad_fn=<MulBackward0>", repr(L.tensor([1.0], requires_grad=True) * 2))
        if torch is not None:
            a = np.array([[1.0, -2.5], [3.25, 4.0]], np.float32)
            self.assertEqual(repr(L.from_numpy(a)), repr(torch.from_numpy(a)))

    def test_len_iter_bool(self):
        x = L.tensor([[1, 2], [3, 4], [5, 6]])
        self.assertEqual(len(x), 3)
        rows = list(x)
        self.assertEqual([r.tolist() for r in rows], [[1, 2], [3, 4], [5, 6]])
        self.assertEqual([int(v) for v in x[0]], [1, 2])
        with self.assertRaisesRegex(TypeError, "len\\(\\) of a 0-d tensor"):
            len(L.tensor(1))
        with self.assertRaisesRegex(TypeError, "iteration over a 0-d tensor"):
            iter(L.tensor(1))
        self.assertTrue(L.tensor([1]))
        self.assertFalse(L.tensor(0.0))
        with self.assertRaisesRegex(RuntimeError, "more than one value is ambiguous"):
            bool(L.tensor([1, 2]))

    def test_tensor_inference(self):
        self.assertEqual(L.tensor([1, 2]).dtype, L.int64)
        self.assertEqual(L.tensor([1, 2.0]).dtype, L.float32)
        self.assertEqual(L.tensor([True, False]).dtype, L.bool)
        self.assertEqual(L.tensor([True, 2]).dtype, L.int64)
        self.assertEqual(L.tensor(3.0).shape, ())
        self.assertEqual(L.tensor([]).shape, (0,))
        self.assertEqual(L.tensor([]).dtype, L.float32)
        self.assertEqual(L.tensor([[1, 2]], dtype=L.float64).dtype, L.float64)
        self.assertEqual(L.tensor(np.arange(3, dtype=np.int16)).dtype, L.int16)
        self.assertEqual(L.tensor([L.tensor(1.0), L.tensor(2.0)]).tolist(), [1.0, 2.0])
        with self.assertRaisesRegex(ValueError, "expected sequence of length 2 at dim 1"):
            L.tensor([[1, 2], [3]])
        with self.assertRaisesRegex(TypeError, "invalid data type 'str'"):
            L.tensor(["a"])
        if torch is not None:
            for data in ([1, 2], [1.0, 2], [True], [[True, 1.5]], 3):
                self.assertEqual(TORCH_NAME[L.tensor(data).dtype], str(torch.tensor(data).dtype)[6:])

    def test_to_overloads(self):
        # torch's three overloads, positionals included: to(dtype, non_blocking, copy),
        # to(device, dtype, non_blocking, copy), to(other, non_blocking, copy)
        x = L.arange(4, dtype=L.float32)
        self.assertIs(x.to(L.float32, False), x)
        c = x.to(L.float32, False, True)
        self.assertIsNot(c, x)
        self.assertEqual(c.dtype, L.float32)
        self.assertNotEqual(c.data_ptr(), x.data_ptr())
        self.assertEqual(x.to(L.float64, True).dtype, L.float64)
        self.assertEqual(x.to(L.float64, non_blocking=False, copy=True).dtype, L.float64)
        self.assertEqual(x.to(dtype=L.int32).dtype, L.int32)
        y = L.zeros(2, dtype=L.int64)
        self.assertEqual(x.to(y, False).dtype, L.int64)
        self.assertEqual(x.to(y, False, False).dtype, L.int64)
        self.assertIs(x.to(x, False), x)
        c = x.to(x, False, True)
        self.assertIsNot(c, x)
        self.assertNotEqual(c.data_ptr(), x.data_ptr())
        self.assertEqual(x.to(other=y).dtype, L.int64)
        self.assertIs(x.to("cpu", L.float32, False), x)
        c = x.to("cpu", L.float32, False, True)
        self.assertNotEqual(c.data_ptr(), x.data_ptr())
        self.assertEqual(x.to("cpu", None, False, True).dtype, L.float32)
        self.assertEqual(x.to(None, L.int16).dtype, L.int16)
        self.assertEqual(x.to(device="cpu", dtype=L.float64, copy=True).dtype, L.float64)
        self.assertEqual(x.to(L.device("cpu"), dtype=L.float64).dtype, L.float64)
        self.assertEqual(x.to().dtype, L.float32)
        # the flags are bools, the overload's names are its own
        for pattern, call in [
                (r"^to\(\): argument 'non_blocking' \(position 2\) must be bool, not int$", lambda: x.to(L.float64, 1)),
                (r"^to\(\): argument 'copy' \(position 3\) must be bool, not libops.dtype$", lambda: x.to(y, False, L.int8)),
                (r"^to\(\): argument 'dtype' \(position 2\) must be dtype, not bool$", lambda: x.to("cpu", True)),
                (r"^to\(\) takes at most 3 positional arguments after a dtype \(4 given\)$",
                 lambda: x.to(L.float64, False, False, False)),
                (r"^to\(\): got multiple values for argument 'dtype'$", lambda: x.to(L.float64, dtype=L.int8)),
                (r"^to\(\): got an unexpected keyword argument 'device'", lambda: x.to(L.float64, device="cpu")),
                (r"^to\(\): argument 'other' must be Tensor, not float$", lambda: x.to(other=1.0)),
                (r"^type\(\): argument 'non_blocking' must be bool, not int$", lambda: x.type(L.float64, 1))]:
            with self.subTest(pattern=pattern):
                with self.assertRaisesRegex(TypeError, pattern):
                    call()
        # type(dtype, non_blocking) as torch's
        self.assertEqual(x.type(L.float64, False).dtype, L.float64)
        self.assertEqual(x.type(L.int32, non_blocking=True).dtype, L.int32)

    def test_weakref_and_hash(self):
        x = L.ones(1)
        r = weakref.ref(x)
        self.assertIs(r(), x)
        self.assertEqual(len({x: 1, L.ones(1): 2}), 2)


class TestIndexing(Base):
    def setUp(self):
        self.a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
        self.x = L.tensor(self.a)

    def check(self, idx):
        with self.subTest(idx=idx):
            got = self.x[idx]
            np_idx = tuple(i.numpy() if isinstance(i, L.Tensor) else i for i in idx) if isinstance(idx, tuple) \
                else (idx.numpy() if isinstance(idx, L.Tensor) else idx)
            self.assertTensorEqual(got, self.a[np_idx])
            if torch is not None:
                t = torch.from_numpy(self.a)
                tidx = tuple(torch.from_numpy(i.numpy()) if isinstance(i, L.Tensor) else i for i in idx) \
                    if isinstance(idx, tuple) else (torch.from_numpy(idx.numpy()) if isinstance(idx, L.Tensor) else idx)
                self.assertEqual(got.shape, tuple(t[tidx].shape))

    def test_basic(self):
        for idx in [0, -1, (1, 2), (1, 2, 3), slice(None), slice(1, None), slice(None, None, 2),
                    (slice(None), slice(1, 4, 2)), (Ellipsis, 0), (0, Ellipsis, slice(None, 3)),
                    (None, 0), (slice(None), None, slice(None)), (Ellipsis, None), (slice(-2, None), -1),
                    (slice(10, 20),)]:
            self.check(idx)

    def test_advanced(self):
        for idx in [[0, 2], ([0, 2],), (slice(None), [1, 3]), L.tensor([2, 0]), (L.tensor([0, 1]), L.tensor([1, 2])),
                    (Ellipsis, [4, 0]), (L.tensor([[0, 1], [2, 0]]),), (0, [1, 1, 3])]:
            self.check(idx)

    def test_boolean(self):
        m = self.x > 30
        self.assertTensorEqual(self.x[m], self.a[self.a > 30])
        row = L.tensor([True, False, True])
        self.assertTensorEqual(self.x[row], self.a[np.array([True, False, True])])
        self.assertTensorEqual(self.x[:, [True, False, False, True]], self.a[:, [True, False, False, True]])

    def test_views_share_memory(self):
        v = self.x[1, :, ::2]
        v[0, 0] = -1.0
        self.assertEqual(self.x[1, 0, 0].item(), -1.0)
        self.assertEqual(self.x[1:, 2].storage_offset(), 30)
        # an advanced index copies
        c = self.x[[0]]
        c[0, 0, 0] = 99.0
        self.assertNotEqual(self.x[0, 0, 0].item(), 99.0)

    def test_setitem(self):
        a = self.a.copy()
        x = L.tensor(a)
        x[0] = 1.0
        a[0] = 1.0
        x[1, :, 2] = L.arange(4, dtype=L.float32)
        a[1, :, 2] = np.arange(4)
        x[..., 0] = L.tensor([7.0])
        a[..., 0] = 7.0
        x[x > 50] = 0.0
        a[a > 50] = 0.0
        x[[0, 2], 1] = L.tensor(-3.0)
        a[[0, 2], 1] = -3.0
        x[2, 3] = [1, 2, 3, 4, 5]
        a[2, 3] = [1, 2, 3, 4, 5]
        self.assertTensorEqual(x, a)

    def test_list_holding_indices_is_a_tuple(self):
        # torch's rule (NumPy's old one): a short list holding a list, slice, tensor, ... or
        # None is several indices, as the tuple of its items; one of only ints (or bools)
        # stays one index array
        t0, t1 = L.tensor([0, 2]), L.tensor([1, 3])
        cases = [([[0, 2], [1, 3]], ([0, 2], [1, 3])), ([slice(0, 3), 1], (slice(0, 3), 1)),
                 ([0, slice(None)], (0, slice(None))), ([None, 0], (None, 0)), ([Ellipsis, 0], (Ellipsis, 0)),
                 ([t0, t1], (np.array([0, 2]), np.array([1, 3]))), ([(0, 1), 2], ((0, 1), 2)),
                 ([1, [0, 3], slice(1, None, 2)], (1, [0, 3], slice(1, None, 2)))]
        for idx, np_idx in cases:
            with self.subTest(idx=idx):
                self.assertTensorEqual(self.x[idx], self.a[np_idx])
                if torch is not None:
                    tidx = [torch.from_numpy(i.numpy()) if isinstance(i, L.Tensor) else i for i in idx]
                    self.assertTensorEqual(self.x[idx], torch.from_numpy(self.a)[tidx].numpy())
                a, x = self.a.copy(), L.tensor(self.a)
                x[idx] = -1.0
                a[np_idx] = -1.0
                self.assertTensorEqual(x, a)
        # plain ints and bools are one index array; an array is never split; 32 items or
        # more are one index (a list of slices that long is then refused)
        self.assertTensorEqual(self.x[[0, 2]], self.a[np.array([0, 2])])
        self.assertTensorEqual(self.x[[True, False, True]], self.a[np.array([True, False, True])])
        self.assertTensorEqual(self.x[np.array([[0, 1], [2, 0]])], self.a[np.array([[0, 1], [2, 0]])])
        self.assertTensorEqual(self.x[[[0, 1]] * 32], self.a[np.array([[0, 1]] * 32)])

    def test_augmented_assignment_through_index(self):
        x = L.tensor([[1, 2], [3, 4]])
        x[0] += 10
        x[:, 1] *= 2
        self.assertEqual(x.tolist(), [[11, 24], [3, 8]])

    def test_errors(self):
        with self.assertRaisesRegex(IndexError, "index 3 is out of bounds for dimension 0 with size 3"):
            self.x[3]
        with self.assertRaisesRegex(IndexError, "too many indices for tensor of dimension 3"):
            self.x[0, 0, 0, 0]
        with self.assertRaisesRegex(ValueError, "step must be greater than zero"):
            self.x[::-1]
        with self.assertRaises(IndexError):
            self.x[L.tensor([1.5])]
        with self.assertRaises(IndexError):
            self.x[[0, 7]]


class TestNumpy(Base):
    def test_from_numpy_shares_and_keeps_alive(self):
        a = np.arange(6, dtype=np.float64).reshape(2, 3)
        t = L.from_numpy(a)
        self.assertEqual(t.dtype, L.float64)
        t[0, 1] = 42.0
        self.assertEqual(a[0, 1], 42.0)
        a[1, 2] = -1.0
        self.assertEqual(t[1, 2].item(), -1.0)
        r = weakref.ref(a) if hasattr(a, "__weakref__") else None
        del a
        gc.collect()
        self.assertEqual(t.tolist(), [[0.0, 42.0, 2.0], [3.0, 4.0, -1.0]])
        if r is not None:
            self.assertIsNotNone(r())
            del t
            gc.collect()
            self.assertIsNone(r())

    def test_from_numpy_strides(self):
        base = np.arange(48, dtype=np.int32).reshape(4, 12)
        for view in (base[:, ::3], base[::-1], base[:, ::-2], base.T, base[1:3, 5:1:-1], base[::2, ::-5]):
            with self.subTest(strides=view.strides):
                t = L.from_numpy(view)
                self.assertEqual(t.shape, view.shape)
                self.assertEqual(t.tolist(), view.tolist())
                self.assertTensorEqual(t * 2, view * 2)
                t[0, 0] = -7
                self.assertEqual(view[0, 0], -7)

    def test_from_numpy_dtypes(self):
        for npdt in (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64):
            a = rng_array((3,), npdt, 11)
            t = L.from_numpy(a)
            self.assertEqual(NP_OF[t.dtype], npdt)
            np.testing.assert_array_equal(t.numpy(), a)
        with self.assertRaisesRegex(TypeError, "can't convert np.ndarray"):
            L.from_numpy(np.zeros(2, np.complex64))
        with self.assertRaisesRegex(TypeError, "expected np.ndarray"):
            L.from_numpy([1, 2])

    def test_from_numpy_readonly_warns(self):
        a = np.arange(3.0)
        a.flags.writeable = False
        with self.assertWarnsRegex(UserWarning, "not writable"):
            t = L.from_numpy(a)
        self.assertEqual(t.tolist(), [0.0, 1.0, 2.0])

    def test_numpy_shares_and_keeps_alive(self):
        t = L.arange(6, dtype=L.float32).view(2, 3)
        a = t.numpy()
        a[0, 0] = 10.0
        self.assertEqual(t[0, 0].item(), 10.0)
        t[1, 1] = -5.0
        self.assertEqual(a[1, 1], -5.0)
        r = weakref.ref(t)
        del t
        gc.collect()
        self.assertIsNotNone(r())  # the array keeps the tensor alive
        self.assertEqual(a.tolist(), [[10.0, 1.0, 2.0], [3.0, -5.0, 5.0]])
        del a
        gc.collect()
        self.assertIsNone(r())

    def test_noncontiguous_export(self):
        t = L.arange(12).view(3, 4).t()
        a = t.numpy()
        self.assertEqual(a.strides, (8, 32))
        np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4).T)
        self.assertEqual(np.asarray(t).tolist(), a.tolist())
        m = memoryview(t)
        self.assertEqual(m.shape, (4, 3))
        self.assertEqual(m.format, "q")
        ai = t.__array_interface__
        self.assertEqual(ai["shape"], (4, 3))
        self.assertEqual(ai["typestr"], "<i8")
        self.assertEqual(ai["data"][0], t.data_ptr())
        self.assertEqual(np.array(t, dtype=np.float32).dtype, np.float32)
        with self.assertRaisesRegex(TypeError, "Got unsupported ScalarType bfloat16"):
            L.ones(2, dtype=L.bfloat16).numpy()
        with self.assertRaisesRegex(RuntimeError, "Can't call numpy\\(\\) on Tensor that requires grad"):
            L.ones(2, requires_grad=True).numpy() if False else L.tensor([1.0], requires_grad=True).numpy()

    @needs_torch
    def test_torch_from_our_buffer(self):
        t = L.arange(4, dtype=L.float32)
        tt = torch.from_numpy(t.numpy())
        tt[0] = 9
        self.assertEqual(t[0].item(), 9.0)


if __name__ == "__main__":
    unittest.main()

"""The Python module libops: values against NumPy (and PyTorch where python3-torch is
installed), the generated argument parsing, the Tensor type, indexing, NumPy interop,
autograd and errors.  Run by `meson test` (suite python) with the build tree's package
first on PYTHONPATH."""

import gc
import math  # noqa: F401
import operator
import os
import sys
import unittest
import weakref

import numpy as np

import libops as L

try:
    import torch
except ImportError:  # CI has no PyTorch: those comparisons are skipped there
    torch = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")

NP_OF = {L.bool: np.bool_, L.uint8: np.uint8, L.int8: np.int8, L.int16: np.int16, L.int32: np.int32,
         L.int64: np.int64, L.float16: np.float16, L.float32: np.float32, L.float64: np.float64}
TORCH_NAME = {L.bool: "bool", L.uint8: "uint8", L.int8: "int8", L.int16: "int16", L.int32: "int32",
              L.int64: "int64", L.float16: "float16", L.bfloat16: "bfloat16", L.float32: "float32",
              L.float64: "float64"}


def rng_array(shape, dtype, seed=0, low=-5, high=5):
    r = np.random.default_rng(seed)
    if dtype == np.bool_:
        return r.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        lo = 0 if np.issubdtype(dtype, np.unsignedinteger) else low
        return r.integers(lo, high, size=shape).astype(dtype)
    return r.uniform(low, high, size=shape).astype(dtype)


class Base(unittest.TestCase):
    def assertTensorEqual(self, t, a, rtol=1e-6, atol=1e-6):
        self.assertIsInstance(t, L.Tensor)
        a = np.asarray(a)
        self.assertEqual(t.shape, a.shape)
        got = t.detach().numpy() if t.dtype != L.bfloat16 else t.float().detach().numpy()
        if a.dtype.kind == "f" or got.dtype.kind == "f":
            np.testing.assert_allclose(got.astype(np.float64), a.astype(np.float64), rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(got, a)


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


class TestAutograd(Base):
    def test_backward_and_grad(self):
        a = np.array([0.5, -1.0, 2.0])
        x = L.tensor(a, dtype=L.float64, requires_grad=True)
        self.assertTrue(x.requires_grad)
        self.assertTrue(x.is_leaf)
        self.assertIsNone(x.grad)
        self.assertIsNone(x.grad_fn)
        y = (x * x + x.exp()).sum()
        self.assertEqual(y.grad_fn.name(), "SumBackward0")
        self.assertFalse(y.is_leaf)
        y.backward()
        self.assertTensorEqual(x.grad, 2 * a + np.exp(a), rtol=1e-12)
        x.grad = None
        self.assertIsNone(x.grad)
        if torch is not None:
            tx = torch.tensor(a, requires_grad=True)
            (tx * tx + tx.exp()).sum().backward()
            (x * x + x.exp()).sum().backward()
            self.assertTensorEqual(x.grad, tx.grad.numpy(), rtol=1e-12)

    def test_graph_nodes(self):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).exp()
        self.assertEqual(y.grad_fn.name(), "ExpBackward0")
        (mul, nr), = y.grad_fn.next_functions
        self.assertEqual(mul.name(), "MulBackward0")
        self.assertIn("AccumulateGrad", [n.name() for n, _ in mul.next_functions if n is not None])
        self.assertIn("ExpBackward0", repr(y.grad_fn))

    def test_no_grad_and_detach(self):
        x = L.ones(2, requires_grad=True)
        with L.no_grad():
            self.assertFalse(L.is_grad_enabled())
            y = x * 2
        self.assertTrue(L.is_grad_enabled())
        self.assertFalse(y.requires_grad)

        @L.no_grad()
        def f(t):
            return t * 3

        self.assertFalse(f(x).requires_grad)
        self.assertTrue(L.is_grad_enabled())
        d = x.detach()
        self.assertFalse(d.requires_grad)
        d[0] = 5.0  # shares storage
        self.assertEqual(x[0].item(), 5.0)
        self.assertTrue((x * 2).requires_grad)

    def test_autograd_grad(self):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x ** 3).sum()
        (g,) = L.autograd.grad(y, x, create_graph=True)
        self.assertTensorEqual(g, [3.0, 12.0, 27.0])
        (g2,) = L.autograd.grad(g.sum(), [x])
        self.assertTensorEqual(g2, [6.0, 12.0, 18.0])
        self.assertIsNone(x.grad)

    def test_indexing_backward(self):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        (x[0, 1] * 3 + x[:, 0].sum()).backward()
        self.assertTensorEqual(x.grad, [[1.0, 3.0], [1.0, 0.0]])

    def test_cross_entropy_gradients_beyond_2d_and_probabilities(self):
        # cross_entropy over [N, C, d1, ...] class indices, over [C] with a 0-dim target
        # and with probability targets (which get a gradient too) once raised "not
        # implemented" in backward: gradients against central differences of the
        # forward, and the forward against NumPy, for every reduction.
        r = np.random.default_rng(15)

        def np_ce(x, t, w, red, ign, eps, k):
            lp = x - x.max(axis=k, keepdims=True)
            lp = lp - np.log(np.exp(lp).sum(axis=k, keepdims=True))
            C = x.shape[k]
            wv = np.ones(C) if w is None else w
            wshape = [1] * x.ndim
            wshape[k] = C
            wb = wv.reshape(wshape)
            if t.dtype.kind == "f":
                ts = t * (1 - eps) + eps / C
                l = -(wb * ts * lp).sum(axis=k)
                return l if red == 0 else (l.sum() / (x.size // C) if red == 1 else l.sum())
            keep = t != ign
            tc = np.where(keep, t, 0)
            pick = np.take_along_axis(lp, np.expand_dims(tc, k), axis=k).squeeze(k)
            wt = wv[tc] * keep
            nll = -wt * pick
            smooth = -(wb * lp).sum(axis=k) * keep
            if red == 0:
                return (1 - eps) * nll + eps / C * smooth
            if red == 2:
                return (1 - eps) * nll.sum() + eps / C * smooth.sum()
            return ((1 - eps) * nll.sum() + eps / C * smooth.sum()) / wt.sum()

        def numgrad(f, a, h=1e-6):
            g = np.zeros_like(a)
            for i in np.ndindex(a.shape):
                d = np.zeros_like(a)
                d[i] = h
                g[i] = (f(a + d) - f(a - d)) / (2 * h)
            return g

        cases = [((2, 3, 2, 2), "idx"), ((3,), "idx"), ((2, 3, 4), "prob"), ((3,), "prob"), ((4, 3), "prob")]
        for shape, kind in cases:
            k = 0 if len(shape) == 1 else 1
            C = shape[k]
            tshape = shape[:k] + shape[k + 1:]
            x = r.standard_normal(shape)
            t = r.integers(0, C, tshape) if kind == "idx" else r.uniform(0, 1, shape)
            w = r.uniform(0.5, 2, C)
            for red in (0, 1, 2):
                for weight in (None, w):
                    for ign, eps in ((-100, 0.0), (1, 0.25)):
                        if kind == "prob" and ign >= 0:
                            ign = -100
                        with self.subTest(shape=shape, kind=kind, red=red, w=weight is not None, ign=ign, eps=eps):
                            lw = None if weight is None else L.from_numpy(weight)
                            gout = r.standard_normal(tshape if red == 0 else ())

                            def fwd(xa, ta):
                                out = L.cross_entropy_loss(L.from_numpy(xa), L.from_numpy(np.array(ta)), lw, red,
                                                           ign, eps).numpy()
                                return (out * gout).sum()

                            lx = L.tensor(x, requires_grad=True)
                            lt = L.tensor(t, requires_grad=kind == "prob")
                            y = L.cross_entropy_loss(lx, lt, lw, red, ign, eps)
                            self.assertTensorEqual(y, np_ce(x, t, weight, red, ign, eps, k), rtol=1e-12, atol=1e-12)
                            ins = [lx, lt] if kind == "prob" else [lx]
                            grads = L.autograd.grad([y], ins, [L.tensor(gout)])
                            self.assertTensorEqual(grads[0], numgrad(lambda a: fwd(a, t), x), rtol=1e-6, atol=1e-7)
                            if kind == "prob":
                                self.assertTensorEqual(grads[1], numgrad(lambda a: fwd(x, a), t), rtol=1e-6,
                                                       atol=1e-7)
                            if torch is not None:
                                tx = torch.tensor(x, requires_grad=True)
                                tt = torch.tensor(t, requires_grad=kind == "prob")
                                ty = torch.nn.functional.cross_entropy(
                                    tx, tt, None if weight is None else torch.tensor(weight),
                                    reduction=["none", "mean", "sum"][red], ignore_index=ign, label_smoothing=eps)
                                tg = torch.autograd.grad([ty], [tx, tt] if kind == "prob" else [tx],
                                                         [torch.tensor(gout)])
                                self.assertTensorEqual(y, ty.detach().numpy(), rtol=1e-12, atol=1e-12)
                                for a, b in zip(grads, tg):
                                    self.assertTensorEqual(a, b.numpy(), rtol=1e-12, atol=1e-12)

    def test_loss_weight_gradients(self):
        # Class weights, weight and pos_weight requiring grad got no gradient (None,
        # silently); PyTorch 1.13 computes the one of cross_entropy with probabilities
        # and refuses the others: libops differentiates them all (the losses are
        # linear in their weights).  Against central differences, and torch where it
        # has the gradient.
        r = np.random.default_rng(7)

        def check(f, arrays, k):
            ins = [L.tensor(a) if a.dtype.kind == "f" else L.from_numpy(a) for a in arrays]
            ins[k].requires_grad_(True)
            y = f(*ins)
            gout = r.standard_normal(y.shape)
            (g,) = L.autograd.grad([y], [ins[k]], [L.tensor(gout)])
            want = np.zeros_like(arrays[k])
            for i in np.ndindex(arrays[k].shape):
                vals = []
                for h in (1e-6, -1e-6):
                    a2 = [a.copy() for a in arrays]
                    a2[k][i] += h
                    i2 = [L.tensor(a) if a.dtype.kind == "f" else L.from_numpy(a) for a in a2]
                    vals.append((f(*i2).numpy() * gout).sum())
                want[i] = (vals[0] - vals[1]) / 2e-6
            self.assertTensorEqual(g, want, rtol=1e-6, atol=1e-7)
            return g

        w4 = r.uniform(0.5, 2, 4)
        x = r.standard_normal((2, 4, 3))
        t = r.integers(0, 4, (2, 3))
        for red in (0, 1, 2):
            with self.subTest(red=red):
                check(lambda x, t, w: L.cross_entropy_loss(x, t, w, red, 1, 0.2), [x, t, w4], 2)
                check(lambda x, t, w: L.nll_loss_nd(x, t, w, red, 2), [x, t, w4], 2)
                check(lambda x, t, w: L.nll_loss(x, t, w, red, -100), [x[:, :, 0], t[:, 0], w4], 2)
                p = r.uniform(0, 1, (2, 4, 3))
                g = check(lambda x, t, w: L.cross_entropy_loss(x, t, w, red, -100, 0.1), [x, p, w4], 2)
                if torch is not None:
                    tw = torch.tensor(w4, requires_grad=True)
                    ty = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(p), tw,
                                                           reduction=["none", "mean", "sum"][red],
                                                           label_smoothing=0.1)
                    (tg,) = torch.autograd.grad([ty.sum()], [tw])
                    lw = L.tensor(w4, requires_grad=True)
                    (lg,) = L.autograd.grad([L.cross_entropy_loss(L.tensor(x), L.tensor(p), lw, red, -100,
                                                                  0.1).sum()], [lw])
                    self.assertTensorEqual(lg, tg.numpy(), rtol=1e-12, atol=1e-12)
                xs = r.uniform(0.1, 0.9, (3, 4))
                ts = r.uniform(0, 1, (3, 4))
                check(lambda x, t, w: L.binary_cross_entropy(x, t, w, red), [xs, ts, r.uniform(0, 2, 4)], 2)
                xl = r.standard_normal((3, 4)) * 3
                wl, pl = r.uniform(0, 2, (3, 1)), r.uniform(0.5, 3, 4)
                f = lambda x, t, w, p: L.binary_cross_entropy_with_logits(x, t, w, p, red)  # noqa: E731
                check(f, [xl, ts, wl, pl], 2)
                check(f, [xl, ts, wl, pl], 3)

    def test_bce_with_logits_shapes(self):
        # As torch.nn.functional: the target has the input's size (libops broadcast it,
        # and the mean's gradient then failed in backward), and weight / pos_weight
        # broadcast to it without growing it.
        x, t = L.zeros(3, 4, requires_grad=True), L.full((3, 4), 0.5)
        with self.assertRaisesRegex(RuntimeError, r"binary_cross_entropy_with_logits: Target size \(\[2, 3, 4\]\) "
                                                  r"must be the same as input size \(\[3, 4\]\)"):
            L.binary_cross_entropy_with_logits(x, L.full((2, 3, 4), 0.5))
        with self.assertRaisesRegex(RuntimeError, r"doesn't match the broadcast shape \[2, 3, 4\]"):
            L.binary_cross_entropy_with_logits(x, t, L.ones(2, 3, 4))
        with self.assertRaisesRegex(RuntimeError, r"doesn't match the broadcast shape \[2, 3, 4\]"):
            L.binary_cross_entropy_with_logits(x, t, None, L.ones(2, 1, 1))
        # by hand: at x = 0 the loss is log 2 per element whatever t, and its gradient
        # sigmoid(0) - t = 0 for t = 0.5
        y = L.binary_cross_entropy_with_logits(x, t, L.ones(4), L.ones(3, 1))
        self.assertAlmostEqual(y.item(), math.log(2), places=6)
        y.backward()
        self.assertTensorEqual(x.grad, np.zeros((3, 4)))

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "one-element|scalar|implicit"):
            L.ones(2, 2).requires_grad_().mul(2).backward()


class TestTorchRules(Base):
    """Where PyTorch's rule is easy to miss: negative pads, one int for an int[N] size."""

    @staticmethod
    def crop_pad_ref(a, pad, np_mode):
        """PyTorch's rule for negative pads: crop first, then pad the cropped array
        (pad lists the last dim first, as in pad())."""
        k = len(pad) // 2
        sl = [slice(None)] * a.ndim
        width = [(0, 0)] * a.ndim
        for i in range(k):
            d = a.ndim - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            sl[d] = slice(max(-lo, 0), a.shape[d] - max(-hi, 0))
            width[d] = (max(lo, 0), max(hi, 0))
        return np.pad(a[tuple(sl)], width, mode=np_mode)

    def test_pad_circular_negative_reproducer(self):
        x = L.arange(4.).view(1, 1, 4)
        self.assertTensorEqual(L.pad(x, (-1, 1), "circular"), [[[1.0, 2.0, 3.0, 1.0]]])
        self.assertTensorEqual(L.pad(x, (1, -2), "circular"), [[[1.0, 0.0, 1.0]]])

    def test_pad_negative_all_modes(self):
        a = np.arange(60.0).reshape(3, 4, 5)
        cases = [("circular", "wrap", (-1, 1)), ("circular", "wrap", (2, -2, -1, 1)),
                 ("circular", "wrap", (-2, -1, 1, -1)), ("circular", "wrap", (1, -3)),
                 ("reflect", "reflect", (-1, 2)), ("reflect", "reflect", (2, -1, -1, 1)),
                 ("replicate", "edge", (-1, 2)), ("replicate", "edge", (3, -2, 1, -1)),
                 ("constant", "constant", (-1, 2)), ("constant", "constant", (2, -3, -1, 1))]
        for mode, np_mode, pad in cases:
            with self.subTest(mode=mode, pad=pad):
                got = L.pad(L.from_numpy(a), pad, mode)
                self.assertTensorEqual(got, self.crop_pad_ref(a, pad, np_mode))
                if torch is not None:
                    # torch 1.13 pads 2*(ndim-2) dims in circular mode only (a batch
                    # dim first); libops also pads a [C, H, W] input's last two, as
                    # later torch does: compare through a batch of one there
                    batch = mode == "circular" and len(pad) > 2 * (a.ndim - 2)
                    t = torch.from_numpy(a[None] if batch else a)
                    ref = torch.nn.functional.pad(t, pad, mode).numpy()
                    self.assertTensorEqual(got, ref[0] if batch else ref)

    def test_pad_circular_negative_gradient(self):
        a = rng_array((2, 3, 5), np.float64, 3)
        w = rng_array((2, 3, 6), np.float64, 4)
        pad = (-1, 2)
        x = L.tensor(a, requires_grad=True)
        (L.pad(x, pad, "circular") * L.from_numpy(w)).sum().backward()
        # each output element copies one input element: its weight goes back there
        pos = self.crop_pad_ref(np.arange(a.size).reshape(a.shape), pad, "wrap")
        want = np.zeros(a.size)
        np.add.at(want, pos.ravel(), w.ravel())
        self.assertTensorEqual(x.grad, want.reshape(a.shape), rtol=1e-12)
        if torch is not None:
            tx = torch.tensor(a, requires_grad=True)
            (torch.nn.functional.pad(tx, pad, "circular") * torch.from_numpy(w)).sum().backward()
            self.assertTensorEqual(x.grad, tx.grad.numpy(), rtol=1e-12)

    def test_pad_circular_wrapping_the_cropped_dim_twice_fails(self):
        # 3 elements to wrap, only 2 left after the crop: PyTorch reads memory it never wrote
        with self.assertRaisesRegex(RuntimeError, "wrapping around more than once"):
            L.pad(L.arange(4.).view(1, 1, 4), (3, -2), "circular")

    def test_one_int_for_int_n(self):
        x = L.from_numpy(rng_array((2, 3, 7, 8), np.float32, 5))
        w = L.from_numpy(rng_array((4, 3, 3, 3), np.float32, 6))
        self.assertTensorEqual(L.adaptive_avg_pool2d(x, 3), L.adaptive_avg_pool2d(x, [3, 3]).numpy())
        self.assertTensorEqual(L.adaptive_avg_pool2d(x, [3]), L.adaptive_avg_pool2d(x, (3, 3)).numpy())
        self.assertEqual(L.adaptive_avg_pool2d(x, 3).shape, (2, 3, 3, 3))
        v, i = L.adaptive_max_pool2d(x, 3)
        v2, i2 = L.adaptive_max_pool2d(x, [3, 3])
        self.assertTensorEqual(v, v2.numpy())
        self.assertTensorEqual(i, i2.numpy())
        sweep = [
            (lambda s: L.max_pool2d(x, s), 3),
            (lambda s: L.avg_pool2d(x, s), 3),
            (lambda s: L.conv2d(x, w, stride=s), 2),
            (lambda s: L.conv2d(x, w, padding=s), 1),
            (lambda s: L.upsample_nearest2d(x, s), 5),
            (lambda s: L.upsample_bilinear2d(x, s, False), 5),
        ]
        for n, (f, k) in enumerate(sweep):
            with self.subTest(case=n):
                self.assertTensorEqual(f(k), f([k, k]).numpy())
        with self.assertRaisesRegex(TypeError, "output_size"):
            L.adaptive_avg_pool2d(x, [1, 2, 3])
        if torch is not None:
            tx = torch.from_numpy(x.numpy())
            self.assertTensorEqual(L.adaptive_avg_pool2d(x, 3),
                                   torch.nn.functional.adaptive_avg_pool2d(tx, 3).numpy())


class TestThreads(Base):
    def test_large_ops_in_threads(self):
        """Large ops release the GIL; results stay right with several threads."""
        import threading
        a = rng_array((300, 300), np.float32, 12)
        x = L.from_numpy(a)
        results, errors = {}, []

        def work(k):
            try:
                results[k] = ((x + k) @ x).sum(1).numpy()
                (x * 0).add_(x)  # in-place on a fresh tensor
                with L.no_grad():  # grad mode is per thread
                    self.assertFalse(L.is_grad_enabled())
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertTrue(L.is_grad_enabled())
        for k in range(4):
            np.testing.assert_allclose(results[k], ((a + k) @ a).sum(1), rtol=1e-3, atol=0.05)


class TestErrors(Base):
    def test_runtime_errors_carry_the_message(self):
        with self.assertRaisesRegex(RuntimeError, r"add: the size of .* must match the size of .* at non-singleton "
                                                  r"dimension"):
            L.ones(2, 3) + L.ones(4)
        with self.assertRaisesRegex(RuntimeError, "Boolean alpha only supported for Boolean results"):
            L.add(L.ones(2), L.ones(2), alpha=True)
        with self.assertRaises(IndexError):
            L.ones(2, 3).select(0, 5)
        with self.assertRaisesRegex(RuntimeError, "view"):
            L.ones(6).view(4)
        # a failed op leaves its out= untouched
        out = L.full((2,), 5.0)
        with self.assertRaises(RuntimeError):
            L.add(L.ones(2, 3), L.ones(4), out=out)
        self.assertEqual(out.tolist(), [5.0, 5.0])

    def test_cannot_construct_directly(self):
        with self.assertRaises(TypeError):
            L.Tensor()


class TestLeaks(Base):
    """What LeakSanitizer cannot check under Python (tests/python/meson.build): every
    tensor a workload creates is freed once its Python objects go, and calls take no
    references they keep."""

    def workload(self):
        x, y = L.ones(3, 4), L.arange(4, dtype=L.float32)
        L.add(x, y, out=L.empty(3, 4))
        x.add_(y)
        x[0], x[:, 1:3], x[[0, 2]], x[x > 1]
        x[[0, 1], 0] = 5.0
        x[1] = L.zeros(4)
        (x @ y).sum().item()
        x.max(1).values.tolist()
        L.split(x, 1)
        a = np.arange(12.0).reshape(3, 4)
        t = L.from_numpy(a[::-1])
        (t + 1).numpy()
        w = L.ones(4, requires_grad=True)
        loss = (x * w).sum()
        loss.backward()
        L.autograd.grad((w * w).sum(), w)
        try:
            L.add(x, L.ones(5))
        except RuntimeError:
            pass
        try:
            L.add(x, "a")
        except TypeError:
            pass

    def test_allocator_returns_to_baseline(self):
        self.workload()
        gc.collect()
        base = L._C._allocated_bytes()
        for _ in range(20):
            self.workload()
        gc.collect()
        self.assertEqual(L._C._allocated_bytes(), base)

    def test_allocation_failures_raise_cleanly(self):
        """Every allocation of these paths fails in turn: each call raises (never
        crashes or leaks), and the inputs stay as they were."""
        x = L.arange(6, dtype=L.float32).view(2, 3)
        calls = [lambda: x + 2, lambda: 2 - x, lambda: x[[1, 0]], lambda: x[x > 2], lambda: L.add(x, x, alpha=2),
                 lambda: x.sum(0), lambda: L.tensor([[1, 2], [3, 4]]), lambda: x.max(1), lambda: L.split(x, 1)]
        gc.collect()
        base = L._C._allocated_bytes()
        for i, fn in enumerate(calls):
            n = 1
            while True:
                L._C._alloc_fail_nth(n)
                try:
                    fn()
                    L._C._alloc_fail_nth(0)
                    self.assertGreater(n, 1, f"call {i} allocates nothing through libops")
                    break
                except (RuntimeError, MemoryError) as e:
                    self.assertIn("out of memory", str(e), (i, n))
                finally:
                    L._C._alloc_fail_nth(0)
                n += 1
                self.assertLess(n, 100)
        gc.collect()
        self.assertEqual(x.tolist(), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        self.assertEqual(L._C._allocated_bytes(), base)

    def test_no_reference_leaks_in_calls(self):
        x, y = L.ones(3), L.ones(3)
        before = sys.getrefcount(x), sys.getrefcount(y)
        for _ in range(100):
            L.add(x, y, out=L.empty(3))
            x.add_(y)
            x[0]
            x[[0, 1]] = 1.0
            L.add(x, y, alpha=2)
            x.view(3, 1)
        self.assertEqual((sys.getrefcount(x), sys.getrefcount(y)), before)


class TestTorchParity15(Base):
    """Deviations from PyTorch 1.13 found by its operator samples (issue 15)."""

    def test_einsum_sum_dtype(self):
        # torch's einsum sums with sum's default dtype: integers and bool give int64
        for dt in (L.uint8, L.int8, L.int16, L.int32, L.int64):
            x = L.tensor([1, 2, 3], dtype=dt)
            r = L.einsum("i->", [x])
            self.assertEqual(r.dtype, L.int64, dt)
            self.assertEqual(r.dtype, x.sum().dtype)
            self.assertEqual(r.item(), 6)
        r = L.einsum("ij->j", [L.tensor([[1, 2], [3, 4]], dtype=L.int16)])
        self.assertEqual(r.dtype, L.int64)
        self.assertTensorEqual(r, [4, 6])
        # nothing summed: the dtype is kept (a permutation, a diagonal)
        self.assertEqual(L.einsum("ij->ji", [L.ones(2, 3, dtype=L.int32)]).dtype, L.int32)
        self.assertEqual(L.einsum("ii->i", [L.ones(2, 2, dtype=L.int8)]).dtype, L.int8)
        # a pair contracted with bmm keeps it; one whose side was summed first is int64
        a = L.tensor([[1, 2], [3, 4]], dtype=L.int32)
        self.assertEqual(L.einsum("ij,jk->ik", [a, a]).dtype, L.int32)
        r = L.einsum("ij,k->k", [a, L.tensor([1, 2], dtype=L.int32)])
        self.assertEqual(r.dtype, L.int64)
        self.assertTensorEqual(r, [10, 20])
        # an empty dim: zeros of the operands' dtype (torch's fast path, before any sum)
        r = L.einsum("i->", [L.empty(0, dtype=L.int32)])
        self.assertEqual((r.dtype, r.shape, r.item()), (L.int32, (), 0))
        self.assertEqual(L.einsum("ij,jk->ik", [L.ones(2, 0), L.ones(0, 3)]).shape, (2, 3))
        self.assertEqual(L.einsum("ij,jk->ik", [L.ones(2, 0), L.ones(0, 3)]).sum().item(), 0)
        # float sums keep the float dtype
        self.assertEqual(L.einsum("i->", [L.ones(3, dtype=L.float32)]).dtype, L.float32)

    def test_fill_and_zero_backward(self):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.clone().zero_()
        self.assertTrue(y.requires_grad)
        (y * 2 + x).sum().backward()
        self.assertTensorEqual(x.grad, [1.0, 1.0, 1.0])
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (x * x).clone().fill_(4.0).sum().backward()
        self.assertTensorEqual(x.grad, [0.0, 0.0])
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.zero(x * 3)
        self.assertTensorEqual(z, [0.0, 0.0])
        (z + x).sum().backward()
        self.assertTensorEqual(x.grad, [1.0, 1.0])

    def test_batch_norm_empty(self):
        for shape in ((0, 3), (2, 3, 0), (0, 3, 4)):
            for training in (True, False):
                x = L.ones(*shape)
                rm, rv = L.tensor([0.5, 1.0, 1.5]), L.tensor([2.0, 3.0, 4.0])
                y = L.batch_norm(x, L.ones(3), L.zeros(3), rm, rv, training, 0.1, 1e-5, False)
                self.assertEqual(y.shape, shape)
                self.assertEqual(L.native_batch_norm(x, None, None, rm, rv, training, 0.1, 1e-5)[0].shape, shape)
                # an empty batch leaves the running statistics as they were
                self.assertTensorEqual(rm, [0.5, 1.0, 1.5])
                self.assertTensorEqual(rv, [2.0, 3.0, 4.0])
        # a 1-d empty input (one of PyTorch's own samples): its copy, in both modes
        for training in (True, False):
            x = L.empty(0, dtype=L.float64, requires_grad=True)
            rm, rv = L.empty(0), L.ones(0)
            y = L.batch_norm(x, None, None, rm, rv, training, 0.1, 1e-5, False)
            self.assertEqual((y.shape, y.dtype), ((0,), L.float64))
            y.sum().backward()
            self.assertEqual(x.grad.shape, (0,))
        w = L.ones(2, requires_grad=True)
        L.batch_norm(L.empty(0), w, None, None, None, True, 0.1, 1e-5, False).sum().backward()
        self.assertTensorEqual(w.grad, [0.0, 0.0])
        with self.assertRaisesRegex(RuntimeError, "native_batch_norm: Dimension out of range"):
            L.native_batch_norm(L.empty(0), None, None, None, None, True, 0.1, 1e-5)
        for shape in ((0, 4), (2, 0, 3)):
            self.assertEqual(L.layer_norm(L.ones(*shape), [shape[-1]]).shape, shape)
        self.assertEqual(L.group_norm(L.ones(0, 4, 2), 2).shape, (0, 4, 2))
        self.assertEqual(L.group_norm(L.ones(2, 4, 0), 2).shape, (2, 4, 0))


if __name__ == "__main__":
    unittest.main()

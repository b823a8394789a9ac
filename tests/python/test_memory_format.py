"""memory_format= from Python (docs/memory-format.md): libops.contiguous_format,
channels_last, channels_last_3d and preserve_format accepted where torch 1.13 takes them
(empty, the _like factories, clone, contiguous, to, is_contiguous), real channels-last
strides (checked against hand-derived ones), values unchanged, anything else refused with
a message naming the op and the argument; and the same calls against PyTorch where it is
installed.  Run by `meson test` (suite python)."""

import unittest

import numpy as np

import libops as L

try:
    import torch
except ImportError:  # CI has no torch: the torch-free tests carry the checks
    torch = None

CL = (60, 1, 15, 3)          # channels_last strides of sizes (2, 3, 4, 5): N, H, W, C
CONTIG = (60, 20, 5, 1)


def arange(*shape):
    return L.arange(int(np.prod(shape)), dtype=L.float64).view(*shape)


class TestObjects(unittest.TestCase):
    def test_module_attributes(self):
        fmts = [L.preserve_format, L.contiguous_format, L.channels_last, L.channels_last_3d]
        self.assertEqual(len(set(map(id, fmts))), 4)
        for f in fmts:
            self.assertIsInstance(f, L.memory_format)
        self.assertEqual(repr(L.channels_last), "libops.channels_last")
        self.assertEqual(repr(L.contiguous_format), "libops.contiguous_format")
        import pickle
        for f in fmts:
            self.assertIs(pickle.loads(pickle.dumps(f)), f)


class TestStrides(unittest.TestCase):
    """Strides worked out by hand from the format's dim order."""

    def assertSharesMemory(self, got, x):
        """contiguous() returned x itself (the C tensor; a new Python wrapper)."""
        self.assertEqual((got.data_ptr(), got.stride()), (x.data_ptr(), x.stride()))

    def test_empty(self):
        self.assertEqual(L.empty(2, 3, 4, 5, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(L.empty((2, 3, 4, 5, 6), memory_format=L.channels_last_3d).stride(), (360, 1, 90, 18, 3))
        self.assertEqual(L.empty(2, 3, 4, 5, memory_format=L.contiguous_format).stride(), CONTIG)
        self.assertEqual(L.empty(2, 3, 4, 5, memory_format=None).stride(), CONTIG)
        self.assertEqual(L.empty(2, 0, 4, 5, memory_format=L.channels_last).stride(), (0, 1, 0, 0))
        self.assertEqual(L.empty(2, 3, 1, 1, memory_format=L.channels_last).stride(), (3, 1, 3, 3))

    def test_clone_contiguous_keep_values(self):
        x = arange(2, 3, 4, 5)
        c = x.clone(memory_format=L.channels_last)
        self.assertEqual(c.stride(), CL)
        self.assertEqual(c.tolist(), x.tolist())
        self.assertFalse(c.is_contiguous())
        self.assertTrue(c.is_contiguous(memory_format=L.channels_last))
        self.assertTrue(c.is_contiguous(L.channels_last))
        # storage order is NHWC: element [1, 2, 3, 4] = 119 sits at 60 + 2 + 45 + 12
        self.assertEqual(np.asarray(c).ravel(order="K")[0:4].tolist(), [0.0, 20.0, 40.0, 1.0])
        self.assertEqual(L.clone(c).stride(), CL)                       # preserve by default
        self.assertEqual(c.contiguous().stride(), CONTIG)
        self.assertEqual(c.contiguous().tolist(), x.tolist())
        self.assertSharesMemory(c.contiguous(memory_format=L.channels_last), c)
        d = x.contiguous(memory_format=L.channels_last)
        self.assertEqual(d.stride(), CL)
        self.assertEqual(d.tolist(), x.tolist())
        self.assertSharesMemory(x.contiguous(memory_format=L.contiguous_format), x)
        self.assertSharesMemory(x.contiguous(memory_format=L.preserve_format), x)
        self.assertNotEqual(x.contiguous(memory_format=L.channels_last).data_ptr(), x.data_ptr())
        c3 = arange(2, 3, 2, 2, 3).clone(memory_format=L.channels_last_3d)
        self.assertEqual(c3.stride(), (36, 1, 18, 9, 3))
        self.assertTrue(c3.is_contiguous(memory_format=L.channels_last_3d))
        self.assertFalse(c3.is_contiguous(memory_format=L.channels_last))

    def test_preserve_of_a_non_dense_input(self):
        x = arange(4, 5).t()[::2]                  # sizes (3, 4)... strides (2, 5)
        self.assertEqual(x.stride(), (2, 5))
        self.assertEqual(x.clone().stride(), (1, 3))      # dense, in x's dim order
        self.assertEqual(L.empty_like(x).stride(), (1, 3))
        self.assertEqual(x.clone().tolist(), x.tolist())
        self.assertEqual(x.clone(memory_format=L.contiguous_format).stride(), (4, 1))

    def test_like_factories(self):
        x = arange(2, 3, 4, 5)
        for f in (L.empty_like, L.zeros_like, L.ones_like, L.rand_like, L.randn_like):
            self.assertEqual(f(x, memory_format=L.channels_last).stride(), CL, f.__name__)
        self.assertEqual(L.full_like(x, 2.5, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(L.randint_like(x, 5, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(L.randint_like(x, 1, 5, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(L.ones_like(x, memory_format=L.channels_last).tolist(), np.ones((2, 3, 4, 5)).tolist())
        cl = x.clone(memory_format=L.channels_last)
        self.assertEqual(L.zeros_like(cl).stride(), CL)
        self.assertEqual(L.zeros_like(cl, memory_format=L.contiguous_format).stride(), CONTIG)

    def test_to(self):
        x = arange(2, 3, 4, 5)
        y = x.to(memory_format=L.channels_last)
        self.assertEqual(y.stride(), CL)
        self.assertEqual(y.tolist(), x.tolist())
        self.assertIs(y.to(memory_format=L.channels_last), y)
        self.assertIs(y.to(memory_format=L.preserve_format), y)
        self.assertEqual(y.to(memory_format=L.contiguous_format).stride(), CONTIG)
        self.assertEqual(y.to(L.float32).stride(), CL)                 # preserve through a dtype change
        self.assertEqual(x.to(L.float32, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(x.to(L.float32, False, False, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(x.to("cpu", L.float64, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(x.to(y, memory_format=L.channels_last).stride(), CL)
        self.assertEqual(x.to(L.float32, memory_format=L.channels_last).tolist(), x.tolist())
        t = arange(3, 4).t()
        self.assertIs(t.to(memory_format=L.contiguous_format), t)     # torch's rule (suggested format)

    def test_conversion_shorthands(self):
        """float(), double(), half(), long(), int(), bool(), cpu(), cuda() take a keyword-only
        memory_format as in torch (to(dtype, memory_format=) underneath)."""
        x = arange(2, 3, 4, 5)
        for name in ("float", "double", "half", "long", "int", "bool", "cpu"):
            y = getattr(x, name)(memory_format=L.channels_last)
            self.assertEqual(y.stride(), CL, name)
            self.assertEqual(y.tolist(), getattr(x, name)().tolist(), name)
            self.assertEqual(getattr(x, name)().stride(), CONTIG, name)
            with self.assertRaisesRegex(TypeError, name + r"\(\): argument 'memory_format'"):
                getattr(x, name)(memory_format="channels_last")
            with self.assertRaises(TypeError):
                getattr(x, name)(L.channels_last)              # keyword-only, as in torch
        c = x.cpu(memory_format=L.channels_last)
        self.assertIs(c.cpu(memory_format=L.channels_last), c)
        self.assertIs(x.cpu(), x)
        with self.assertRaisesRegex(TypeError, r"cuda\(\): argument 'memory_format'"):
            x.cuda(memory_format=1)

    def test_autograd_through_a_layout_change(self):
        x = arange(2, 3, 4, 5).requires_grad_()
        (x.clone(memory_format=L.channels_last) * 2).sum().backward()
        self.assertEqual(x.grad.tolist(), np.full((2, 3, 4, 5), 2.0).tolist())

    def test_elementwise_ops_read_channels_last(self):
        x = arange(2, 3, 4, 5)
        c = x.clone(memory_format=L.channels_last)
        np.testing.assert_array_equal(np.asarray(c + 1), np.asarray(x) + 1)
        np.testing.assert_array_equal(np.asarray(c * x), np.asarray(x) ** 2)
        np.testing.assert_array_equal(np.asarray(c.sum(1)), np.asarray(x).sum(1))
        # the iterator lays outputs out in the operands' memory order: torch's strides here
        self.assertEqual((c + 1).stride(), CL)
        self.assertEqual((c * x).stride(), CL)
        self.assertEqual((x * c).stride(), CONTIG)


class TestRefusals(unittest.TestCase):
    def test_rank(self):
        x = arange(2, 3, 4)
        for call, op in ((lambda: x.clone(memory_format=L.channels_last), "clone"),
                         (lambda: x.contiguous(memory_format=L.channels_last), "contiguous"),
                         (lambda: L.empty(2, 3, 4, memory_format=L.channels_last), "empty"),
                         (lambda: L.empty_like(x, memory_format=L.channels_last), "empty_like"),
                         (lambda: x.to(memory_format=L.channels_last), "to")):
            with self.assertRaisesRegex(RuntimeError, f"{op}: required rank 4 tensor to use channels_last format"):
                call()
        with self.assertRaisesRegex(RuntimeError, "required rank 5 tensor to use channels_last_3d format"):
            arange(2, 3, 4, 5).clone(memory_format=L.channels_last_3d)
        self.assertFalse(x.is_contiguous(memory_format=L.channels_last))

    def test_preserve_where_there_is_nothing_to_preserve(self):
        with self.assertRaisesRegex(RuntimeError, "empty: unsupported memory format preserve_format"):
            L.empty(2, 3, memory_format=L.preserve_format)
        with self.assertRaisesRegex(RuntimeError, "contiguous: preserve memory format is unsupported"):
            arange(3, 4).t().contiguous(memory_format=L.preserve_format)

    def test_wrong_types(self):
        x = arange(2, 3, 4, 5)
        for bad in (3, "channels_last", L.float32):
            with self.assertRaisesRegex(TypeError, r"clone\(\).*'memory_format'"):
                x.clone(memory_format=bad)
            with self.assertRaisesRegex(TypeError, r"empty_like\(\).*'memory_format'"):
                L.empty_like(x, memory_format=bad)
            with self.assertRaisesRegex(TypeError, r"is_contiguous\(\): argument 'memory_format'"):
                x.is_contiguous(memory_format=bad)
            with self.assertRaisesRegex(TypeError, r"to\(\): argument 'memory_format'"):
                x.to(L.float32, memory_format=bad)


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TestAgainstTorch(unittest.TestCase):
    """The same calls in torch 1.13 give the same strides, identities and values."""

    FMT = {}

    @classmethod
    def setUpClass(cls):
        cls.FMT = {L.contiguous_format: torch.contiguous_format, L.channels_last: torch.channels_last,
                   L.channels_last_3d: torch.channels_last_3d, L.preserve_format: torch.preserve_format}

    def inputs(self):
        """(libops tensor, torch tensor) pairs with the same values and strides."""
        out = []
        for shape, perm, sl in (((2, 3, 4, 5), None, None), ((2, 4, 5, 3), (0, 3, 1, 2), None),
                                ((2, 4, 5, 3), (0, 3, 1, 2), 2), ((4, 5), (1, 0), 0), ((2, 3, 2, 2, 3), None, None),
                                ((2, 1, 1, 1), None, None), ((1, 3, 1, 4), None, None), ((3,), None, None)):
            a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
            x, t = L.tensor(a), torch.tensor(a)
            if perm is not None:
                x, t = x.permute(*perm), t.permute(*perm)
            if sl is not None:
                idx = (slice(None),) * sl + (slice(None, None, 2),)
                x, t = x[idx], t[idx]
            self.assertEqual(x.stride(), t.stride())
            out.append((x, t))
        return out

    def same(self, got, want, what):
        if isinstance(want, Exception):
            self.assertIsInstance(got, Exception, what)
            return
        self.assertNotIsInstance(got, Exception, what)
        self.assertEqual(got.stride(), want.stride(), what)
        self.assertEqual(got.tolist(), want.tolist(), what)

    @staticmethod
    def attempt(f):
        try:
            return f()
        except Exception as e:  # noqa: BLE001 (either library's refusal)
            return e

    def test_strides_match(self):
        for x, t in self.inputs():
            for lf, tf in self.FMT.items():
                what = f"{tuple(x.shape)} strides {x.stride()} {lf}"
                self.same(self.attempt(lambda: x.clone(memory_format=lf)),
                          self.attempt(lambda: t.clone(memory_format=tf)), "clone " + what)
                self.same(self.attempt(lambda: L.zeros_like(x, memory_format=lf)),
                          self.attempt(lambda: torch.zeros_like(t, memory_format=tf)), "zeros_like " + what)
                self.same(self.attempt(lambda: x.to(L.float32, memory_format=lf)),
                          self.attempt(lambda: t.to(torch.float32, memory_format=tf)), "to " + what)
                if lf is not L.preserve_format:
                    self.same(self.attempt(lambda: x.contiguous(memory_format=lf)),
                              self.attempt(lambda: t.contiguous(memory_format=tf)), "contiguous " + what)
                    self.assertEqual(x.is_contiguous(memory_format=lf), t.is_contiguous(memory_format=tf), what)
                    r = self.attempt(lambda: x.to(memory_format=lf))
                    w = self.attempt(lambda: t.to(memory_format=tf))
                    self.same(r, w, "to(memory_format) " + what)
                    if not isinstance(w, Exception):
                        self.assertEqual(r is x, w is t, "to() returns self " + what)
                    self.same(self.attempt(lambda: x.float(memory_format=lf)),
                              self.attempt(lambda: t.float(memory_format=tf)), "float " + what)
                    self.same(self.attempt(lambda: L.empty(*x.shape, memory_format=lf).zero_()),
                              self.attempt(lambda: torch.empty(t.shape, memory_format=tf).zero_()), "empty " + what)


if __name__ == "__main__":
    unittest.main()

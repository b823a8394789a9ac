"""Errors raised by the Python module: boolean masks checked against the dimensions they
index (getitem and setitem, every way a mask can be written), and messages that name the
op, the argument, what was expected and what was given, for every argument kind of the
generated parser and the hand-written functions.  Run by `meson test` (suite python)."""

import unittest

import numpy as np

import libops as L


class TestBooleanMasks(unittest.TestCase):
    """A mask must have the sizes of the dimensions it covers, as in torch and NumPy."""

    MISMATCH = (r"The shape of the mask \[{mask}\] at index {i} does not match the shape of the indexed "
                r"tensor \[{self}\] at index {j}")

    def setUp(self):
        self.a = np.arange(24).reshape(2, 3, 4)
        self.x = L.tensor(self.a)

    def assertIndexes(self, idx, np_idx=None, want=None):
        got = self.x[idx]
        if want is None:
            want = self.a[idx if np_idx is None else np_idx]
        self.assertEqual(got.shape, want.shape, idx)
        self.assertEqual(got.tolist(), want.tolist(), idx)

    def assertMismatch(self, fn, mask, i, shape, j):
        pattern = self.MISMATCH.format(mask=mask, i=i, self=shape, j=j)
        with self.assertRaisesRegex(IndexError, pattern):
            fn()

    def test_getitem_refuses_a_mask_of_other_sizes(self):
        t = L.arange(5)
        self.assertMismatch(lambda: t[L.tensor([True, False])], "2", 0, "5", 0)   # too short
        self.assertMismatch(lambda: t[L.tensor([True] * 6)], "6", 0, "5", 0)      # too long
        self.assertEqual(t[L.tensor([True, False, True, False, True])].tolist(), [0, 2, 4])

    def test_setitem_refuses_and_leaves_the_tensor(self):
        t = L.arange(5)
        def assign(mask):
            t[mask] = 7
        self.assertMismatch(lambda: assign(L.tensor([True, False])), "2", 0, "5", 0)
        self.assertMismatch(lambda: assign(L.tensor([False] * 6)), "6", 0, "5", 0)
        with self.assertRaisesRegex(IndexError, "The shape of the mask"):
            t[L.tensor([True, False])] = L.tensor([1])
        self.assertEqual(t.tolist(), [0, 1, 2, 3, 4])
        t[L.tensor([False, True, False, False, True])] = 7
        self.assertEqual(t.tolist(), [0, 7, 2, 3, 7])

    def test_masks_of_several_dims(self):
        m = self.a % 3 == 0
        self.assertIndexes(L.tensor(m), m)
        self.assertIndexes(L.tensor(m[:, :, 0]), m[:, :, 0])       # covers dims 0 and 1
        self.assertIndexes((slice(None), L.tensor(m[0, :, 0])), (slice(None), m[0, :, 0]))
        self.assertMismatch(lambda: self.x[L.tensor(np.ones((2, 4), bool))], "2, 4", 1, "2, 3, 4", 1)
        self.assertMismatch(lambda: self.x[L.tensor(np.ones((3, 3), bool))], "3, 3", 0, "2, 3, 4", 0)
        self.assertMismatch(lambda: self.x[:, L.tensor(np.ones((3, 5), bool))], "3, 5", 1, "2, 3, 4", 2)
        # a uint8 mask covers its dims too (it used to count as one index)
        self.assertIndexes(L.tensor(m[:, :, 1].astype(np.uint8)), m[:, :, 1])

    def test_masks_among_other_indices(self):
        mask = np.array([True, False, True, True])
        self.assertIndexes((1, L.tensor(mask[:3])), (1, mask[:3]))
        # an int selects first, as in torch (NumPy would count it among the advanced indices)
        self.assertIndexes((0, slice(None), L.tensor(mask)), want=self.a[0][:, mask])
        self.assertIndexes((L.tensor([1, 0]), slice(None), L.tensor([True, False, False, True])),
                           ([1, 0], slice(None), np.array([True, False, False, True])))
        self.assertIndexes((Ellipsis, L.tensor(mask)), (Ellipsis, mask))
        # the mask is checked against the dimension it lands on, after the others
        self.assertMismatch(lambda: self.x[0, L.tensor([True, False])], "2", 0, "3, 4", 0)
        self.assertMismatch(lambda: self.x[..., L.tensor([True, False, True])], "3", 0, "2, 3, 4", 2)
        self.assertMismatch(lambda: self.x[None, L.tensor([True])], "1", 0, "1, 2, 3, 4", 1)

    def test_zero_dim_bool(self):
        for value in (True, False):
            for idx in (L.tensor(value), np.bool_(value), np.array(value), value):
                with self.subTest(idx=idx):
                    self.assertIndexes(idx, value)
        # beside an integer index, True broadcasts like the index [0] (NumPy's and torch's shapes)
        self.assertIndexes((True, [0, 1]), (True, [0, 1]))
        self.assertIndexes((L.tensor(True), 1, [0, 2]), (True, 1, [0, 2]))
        x = L.tensor(self.a)
        x[L.tensor(False)] = -1
        self.assertEqual(x.tolist(), self.a.tolist())
        x[L.tensor(True)] = -1
        self.assertEqual(x.tolist(), np.full_like(self.a, -1).tolist())

    def test_python_lists_of_bools(self):
        self.assertIndexes([True, False], np.array([True, False]))
        self.assertIndexes((slice(None), [False, True, True]), (slice(None), np.array([False, True, True])))
        # a nested list is the tuple of its rows (torch's rule): two masks, the first of
        # the wrong size; a 2-d mask is an array or tensor
        self.assertMismatch(lambda: self.x[[[True, False, True], [False, False, True]]], "3", 0, "2, 3, 4", 0)
        self.assertIndexes(np.array([[True, False, True], [False, False, True]]))
        self.assertMismatch(lambda: self.x[[True, False, True]], "3", 0, "2, 3, 4", 0)
        self.assertMismatch(lambda: self.x[:, [True]], "1", 0, "2, 3, 4", 1)

    def test_numpy_bool_arrays(self):
        m = np.array([False, True])
        self.assertIndexes(m)
        self.assertIndexes((slice(None), np.array([True, False, True])))
        self.assertIndexes(self.a > 10)
        self.assertMismatch(lambda: self.x[np.array([True, False, True])], "3", 0, "2, 3, 4", 0)
        self.assertMismatch(lambda: self.x[np.ones((2, 2), bool)], "2, 2", 1, "2, 3, 4", 1)
        x = L.tensor(self.a)
        with self.assertRaisesRegex(IndexError, "The shape of the mask"):
            x[np.array([True, True, True])] = 0
        self.assertEqual(x.tolist(), self.a.tolist())
        # NumPy integer indices stay integer indices
        self.assertIndexes(np.int64(1))
        self.assertIndexes(np.array([1, 0]))


class TestMessages(unittest.TestCase):
    """Each message names the op, the argument, what it must be and what it got."""

    def setUp(self):
        self.x = L.ones(3)

    def test_tensor_lists(self):
        with self.assertRaisesRegex(TypeError, r"^cat\(\): argument 'tensors' \(position 1\) must be a sequence of "
                                               r"Tensors, but element 1 is None$"):
            L.cat([self.x, None])
        with self.assertRaisesRegex(TypeError, r"^einsum\(\): argument 'tensors' \(position 2\) must be a sequence "
                                               r"of Tensors, but element 1 is int$"):
            L.einsum("i", [self.x, 3])
        with self.assertRaisesRegex(TypeError, r"^cat\(\): argument 'tensors' \(position 1\) must be a sequence of "
                                               r"Tensors, not Tensor$"):
            L.cat(self.x)
        # Tensor?[]: None is fine, an int is not
        with self.assertRaisesRegex(TypeError, r"^index\(\): argument 'indices' \(position 2\) must be a sequence "
                                               r"of Tensors and Nones, but element 1 is int$"):
            L.index(self.x, [None, 3])

    def test_devices(self):
        with self.assertRaisesRegex(RuntimeError, r"^Generator\(\): invalid device 'tpu': expected 'cpu' or "
                                                  r"'cuda\[:N\]'$"):
            L.Generator(device="tpu")
        with self.assertRaisesRegex(TypeError, r"^Generator\(\): argument 'device' must be device or str, not int$"):
            L.Generator(device=3)
        with self.assertRaisesRegex(RuntimeError, r"^zeros\(\): argument 'device': invalid device 'gpu': expected "
                                                  r"'cpu' or 'cuda\[:N\]'$"):
            L.zeros(3, device="gpu")
        # a keyword argument has no position, even when its value is the same object as a positional one
        with self.assertRaisesRegex(TypeError, r"^zeros\(\): argument 'device' must be device, str or None, "
                                               r"not int$"):
            L.zeros(3, device=3)
        with self.assertRaisesRegex(RuntimeError, r"^tensor\(\): invalid device 'gpu': expected 'cpu' or "
                                                  r"'cuda\[:N\]'$"):
            L.tensor([1.0], device="gpu")
        with self.assertRaisesRegex(RuntimeError, r"^to\(\): invalid device 'cpu:1': expected"):
            self.x.to("cpu:1")
        with self.assertRaisesRegex(TypeError, r"^to\(\): argument 'device' must be device or str, not float$"):
            self.x.to(device=1.5)
        with self.assertRaisesRegex(RuntimeError, r"^cuda\(\): invalid device 'gpu': expected"):
            self.x.cuda("gpu")
        with self.assertRaisesRegex(TypeError, r"^cuda\(\): argument 'device' must be device, int or str, not "
                                               r"float$"):
            self.x.cuda(1.5)

    def test_no_overload_fits_lists_the_signatures(self):
        with self.assertRaisesRegex(TypeError, r"^zeros\(\) received an invalid combination of arguments - got "
                                               r"\(list, int\), but expected one of:\n \* \(tuple of ints size"):
            L.zeros([1], 1)
        with self.assertRaisesRegex(TypeError, r"^permute\(\) received an invalid combination of arguments - got "
                                               r"\(int, float\), but expected one of:\n \* \(tuple of ints dims\)"):
            self.x.permute(0, 1.5)

    def test_ints_beyond_int64(self):
        with self.assertRaisesRegex(IndexError, r"^index 9223372036854775808 is out of bounds for dimension 0 with "
                                                r"size 3 \(it does not fit in int64\)$"):
            self.x[2**63]
        with self.assertRaisesRegex(IndexError, r"^index -9223372036854775809 is out of bounds for dimension 0"):
            self.x[-2**63 - 1]
        with self.assertRaisesRegex(RuntimeError, r"^zeros\(\): argument 'size' \(position 1\): "
                                                  r"9223372036854775808 does not fit in int64$"):
            L.zeros(2**63)
        with self.assertRaisesRegex(RuntimeError, r"^zeros\(\): argument 'size': element 1 \(9223372036854775808\) "
                                                  r"does not fit in int64$"):
            L.zeros(2, 2**63)
        with self.assertRaisesRegex(RuntimeError, r"^view\(\): argument 'size' \(position 1\): element 0 "
                                                  r"\(18446744073709551616\) does not fit in int64$"):
            self.x.view([2**64])
        # several overloads: the one the int fits by type reports it
        with self.assertRaisesRegex(RuntimeError, r"^sum\(\): argument 'dim' \(position 1\): 9223372036854775808 "
                                                  r"does not fit in int64$"):
            self.x.sum(2**63)
        with self.assertRaisesRegex(RuntimeError, r"^eye\(\): argument 'n' \(position 1\): 10000000000000000000000 "
                                                  r"does not fit in int64$"):
            L.eye(10**22)
        # a Number that is an int beyond int64 is refused, not silently made a float
        with self.assertRaisesRegex(RuntimeError, r"^add\(\): argument 'other' \(position 2\): "
                                                  r"18446744073709551616 does not fit in int64$"):
            L.add(L.ones(2, dtype=L.int64), 2**64)
        with self.assertRaisesRegex(RuntimeError, r"^full\(\): argument 'fill_value' \(position 2\): "
                                                  r"1000000000000000000000000000000000000000\.\.\. does not fit"):
            L.full((2,), 10**60)

    def test_every_argument_kind_names_op_argument_expected_and_given(self):
        x = self.x
        cases = [
            (TypeError, r"^neg\(\): argument 'input' \(position 1\) must be Tensor, not str$", lambda: L.neg("a")),
            (TypeError, r"^layer_norm\(\): argument 'weight' must be Tensor or None, not str$",
             lambda: L.layer_norm(x, [3], weight="a")),
            (TypeError, r"^full\(\): argument 'fill_value' \(position 2\) must be Number, not str$",
             lambda: L.full((2,), "a")),
            (TypeError, r"^layer_norm\(\): argument 'eps' must be float, not str$",
             lambda: L.layer_norm(x, [3], eps="a")),
            (TypeError, r"^expand\(\): argument 'implicit' must be bool, not int$", lambda: x.expand([3], implicit=1)),
            (TypeError, r"^gelu\(\): argument 'approximate' must be str, not int$", lambda: L.gelu(x, approximate=3)),
            (TypeError, r"^zeros\(\): argument 'dtype' must be dtype or None, not str$",
             lambda: L.zeros(3, dtype="float")),
            (TypeError, r"^rand\(\): argument 'generator' must be Generator, not int$", lambda: L.rand(3, generator=1)),
            (TypeError, r"^view\(\): argument 'size' \(position 1\) must be a sequence of ints, but element 1 is "
                        r"float$", lambda: x.view([3, 1.0])),
            (TypeError, r"^type\(\): argument 'dtype' \(position 1\) must be dtype, not str$", lambda: x.type("a")),
            (TypeError, r"^to\(\): argument 'dtype_or_device' \(position 1\) must be dtype, device, str or Tensor, "
                        r"not int$", lambda: x.to(3)),
        ]
        for exc, pattern, call in cases:
            with self.subTest(pattern=pattern):
                with self.assertRaisesRegex(exc, pattern):
                    call()

    def test_hand_written_functions(self):
        x = self.x
        with self.assertRaisesRegex(TypeError, r"^size\(\): argument 'dim' \(position 1\) must be int, not str$"):
            x.size("a")
        with self.assertRaisesRegex(RuntimeError, r"^stride\(\): argument 'dim' \(position 1\): "
                                                  r"9223372036854775808 does not fit in int64$"):
            x.stride(2**63)
        self.assertEqual(x.size(np.int64(0)), 3)
        with self.assertRaisesRegex(TypeError, r"^promote_types\(\): argument 'type2' \(position 2\) must be "
                                               r"dtype, not str$"):
            L.promote_types(L.float32, "int")
        # ints that used to wrap to another value when cast to C int
        with self.assertRaisesRegex(RuntimeError, r"^cuda\(\): argument 'device': invalid device index 4294967296"):
            x.cuda(2**32)
        with self.assertRaisesRegex(RuntimeError, r"^set_num_threads\(\): argument 'n' \(position 1\): "
                                                  r"4294967297 does not fit in int$"):
            L.set_num_threads(2**32 + 1)
        with self.assertRaisesRegex(TypeError, r"^set_num_threads\(\): argument 'n' \(position 1\) must be int, "
                                               r"not float$"):
            L.set_num_threads(1.5)

    def test_autograd_grad(self):
        x = L.ones(3, requires_grad=True)
        y = (x * 2).sum()
        with self.assertRaisesRegex(TypeError, r"^grad\(\): argument 'outputs' \(position 1\) must be a Tensor or a "
                                               r"sequence of Tensors, not None$"):
            L.autograd.grad(None, None)
        with self.assertRaisesRegex(TypeError, r"^grad\(\): argument 'inputs' \(position 2\) must be a Tensor or a "
                                               r"sequence of Tensors, but element 1 is int$"):
            L.autograd.grad(y, [x, 1])
        with self.assertRaisesRegex(TypeError, r"^grad\(\): argument 'grad_outputs' \(position 3\) must be a Tensor "
                                               r"or a sequence of Tensors or None, not str$"):
            L.autograd.grad(y, x, "a")
        self.assertEqual(L.autograd.grad(y, [x], [None])[0].tolist(), [2.0, 2.0, 2.0])


class TestTensorData(unittest.TestCase):
    """libops.tensor(data) reads the data twice (shape and dtype, then values): data that
    changes in between is refused, never written past the buffer sized by the first
    read (before the fix, a list grown by an element's __float__ overflowed the heap)."""

    def test_list_grown_while_read(self):
        data = []

        class Grows:
            def __float__(self):
                data.extend([1.0] * 1000)
                return 1.0

        data.extend([Grows(), 2.0])
        with self.assertRaisesRegex(RuntimeError, r"tensor\(\): the data changed while it was being read"):
            L.tensor(data)

    def test_list_shrunk_while_read(self):
        data = []

        class Shrinks:
            def __float__(self):
                del data[1:]
                return 1.0

        data.extend([Shrinks(), 2.0, 3.0])
        with self.assertRaisesRegex(RuntimeError, "the data changed"):
            L.tensor(data)

    def test_int_beyond_int64(self):
        for v in (2**63, 2**70, -(2**63) - 1):
            with self.subTest(v=v):
                with self.assertRaisesRegex(RuntimeError, r"tensor\(\): the integer -?\d+ in the data does not fit in int64"):
                    L.tensor([1, v])
        self.assertEqual(L.tensor([2**63 - 1, -(2**63)]).tolist(), [2**63 - 1, -(2**63)])


if __name__ == "__main__":
    unittest.main()

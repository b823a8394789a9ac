"""Errors raised by the Python module: boolean masks checked against the dimensions they
index (getitem and setitem, every way a mask can be written).  Run by `meson test`
(suite python)."""

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
        self.assertIndexes([[True, False, True], [False, False, True]],
                           np.array([[True, False, True], [False, False, True]]))
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


if __name__ == "__main__":
    unittest.main()

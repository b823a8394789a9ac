"""What the Python suites of libops share: the NumPy and PyTorch dtype tables, seeded
arrays, and Base (assertTensorEqual).  Imported by test_libops.py,
test_libops_autograd.py and test_serialize.py from their own directory."""
import unittest

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

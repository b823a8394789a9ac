"""The Python module with CUDA tensors: values computed on cuda:0 against NumPy and the
same calls on the cpu, autograd on the device, indexing, transfers, the device errors
and DLPack (with PyTorch's CUDA tensors where python3 has a CUDA PyTorch).  Every test
skips without a CUDA device (a CPU build, or a CUDA build on a machine without a GPU);
in the emulated tree (docs/cuda.md "Emulation") and on a GPU they run.  Suites python
and cuda-python: `make gpu-check` runs it on the device (or the emulated one)."""

import unittest

import numpy as np

import libops as L

try:
    import torch
except ImportError:
    torch = None


def _device_available():
    try:
        L.zeros(1, device="cuda:0")
    except RuntimeError:
        return False
    return True


HAS_CUDA = _device_available()
needs_cuda = unittest.skipUnless(HAS_CUDA, "no CUDA device (CPU build, or no GPU)")


def rng(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, size=shape).astype(dtype)


def on_cpu(t):
    """The tensor's values as a NumPy array (copied to the cpu first)."""
    return t.detach().cpu().numpy()


@needs_cuda
class TestTransfers(unittest.TestCase):
    def test_round_trip_every_dtype(self):
        for dt, npdt in [(L.float32, np.float32), (L.float64, np.float64), (L.float16, np.float16),
                         (L.int64, np.int64), (L.int32, np.int32), (L.uint8, np.uint8), (L.bool, np.bool_)]:
            a = (rng((5, 7), np.float64, 1) * 10).astype(npdt)
            d = L.from_numpy(a).to("cuda:0")
            self.assertTrue(d.is_cuda)
            self.assertEqual(str(d.device), "cuda:0")
            self.assertEqual(d.dtype, dt)
            np.testing.assert_array_equal(on_cpu(d), a)

    def test_views_and_conversions(self):
        a = rng((6, 8), np.float32, 2)
        d = L.tensor(a.tolist(), device="cuda:0")
        np.testing.assert_array_equal(on_cpu(d.t()), a.T)                 # transposed source
        np.testing.assert_array_equal(on_cpu(d[:, ::3]), a[:, ::3])       # strided
        np.testing.assert_array_equal(on_cpu(d.flip(0)), a[::-1])
        np.testing.assert_array_equal(on_cpu(d.to(L.float64)), a.astype(np.float64))
        np.testing.assert_array_equal(on_cpu(d.to("cuda:0", L.float16)), a.astype(np.float16))
        self.assertIs(d.to("cuda:0"), d)                                   # nothing changes: self
        self.assertIs(d.cuda(), d)
        self.assertEqual(d[2, 3].item(), float(a[2, 3]))

    def test_pinned_non_blocking(self):
        a = rng((1000,), np.float32, 3)
        h = L.from_numpy(a).pin_memory()
        self.assertTrue(h.is_pinned())
        d = h.cuda(non_blocking=True)
        np.testing.assert_array_equal(on_cpu(d), a)


@needs_cuda
class TestValues(unittest.TestCase):
    def assertClose(self, t, ref, rtol=1e-5, atol=1e-5):
        self.assertTrue(t.is_cuda, "the result left the device")
        np.testing.assert_allclose(on_cpu(t).astype(np.float64), np.asarray(ref, np.float64), rtol=rtol, atol=atol)

    def test_elementwise_and_broadcast(self):
        a, b = rng((33, 65), seed=4), rng((65,), seed=5) + 3
        x, y = L.from_numpy(a).cuda(), L.from_numpy(b).cuda()
        self.assertClose(x + y, a + b)
        self.assertClose(x * y - 1, a * b - 1)
        self.assertClose(x / y, a / b)
        self.assertClose(x.exp(), np.exp(a))
        self.assertClose(x.relu(), np.maximum(a, 0))
        self.assertClose(L.where(x > 0, x, y), np.where(a > 0, a, b))
        self.assertClose(x.clamp(-1, 1), np.clip(a, -1, 1))

    def test_large_elementwise(self):
        # past one grid of the launcher's blocks, and a non-multiple of the vector width
        n = (1 << 20) + 3
        a = rng((n,), seed=6)
        x = L.from_numpy(a).cuda()
        self.assertClose(x * 2 + 1, a * 2 + 1)

    def test_reductions(self):
        a = rng((17, 300, 5), np.float64, 7)
        x = L.from_numpy(a).cuda()
        self.assertClose(x.sum(), a.sum(), rtol=1e-10)
        self.assertClose(x.sum(dim=1), a.sum(axis=1), rtol=1e-10)
        self.assertClose(x.mean(dim=(0, 2)), a.mean(axis=(0, 2)), rtol=1e-10)
        self.assertClose(x.amax(dim=2), a.max(axis=2), rtol=0, atol=0)
        self.assertEqual(x.argmax().item(), int(a.argmax()))
        big = rng((1 << 22,), np.float32, 8)
        self.assertClose(L.from_numpy(big).cuda().sum(), big.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)

    def test_matmul(self):
        for dt, rtol in [(np.float32, 1e-4), (np.float64, 1e-10)]:
            a, b = rng((65, 130), dt, 9), rng((130, 33), dt, 10)
            x, y = L.from_numpy(a).cuda(), L.from_numpy(b).cuda()
            self.assertClose(x @ y, a @ b, rtol=rtol, atol=rtol)
            self.assertClose(x.t().contiguous().t() @ y, a @ b, rtol=rtol, atol=rtol)  # column-major a
        c, d = rng((4, 16, 8), seed=11), rng((4, 8, 12), seed=12)
        self.assertClose(L.from_numpy(c).cuda() @ L.from_numpy(d).cuda(), c @ d, rtol=1e-4, atol=1e-4)

    def test_softmax_and_sort(self):
        a = rng((8, 1000), seed=13)
        x = L.from_numpy(a).cuda()
        e = np.exp(a - a.max(axis=1, keepdims=True))
        self.assertClose(x.softmax(1), e / e.sum(axis=1, keepdims=True))
        values, indices = x.sort(dim=1)
        self.assertClose(values, np.sort(a, axis=1), rtol=0, atol=0)
        np.testing.assert_array_equal(on_cpu(indices), np.argsort(a, axis=1, kind="stable"))

    def test_same_as_cpu(self):
        # the same calls on both devices agree (conv, pooling, norm, loss)
        a, w = rng((2, 3, 9, 9), seed=14), rng((4, 3, 3, 3), seed=15)
        for dev in ("cpu", "cuda:0"):
            x, k = L.from_numpy(a).to(dev), L.from_numpy(w).to(dev)
            y = L.conv2d(x, k, padding=1).relu()
            y = L.max_pool2d(y, 2)
            y = L.layer_norm(y, [y.shape[-1]])
            if dev == "cpu":
                ref = y.numpy()
            else:
                self.assertClose(y, ref, rtol=1e-4, atol=1e-4)


@needs_cuda
class TestIndexing(unittest.TestCase):
    def test_get_and_set(self):
        a = rng((10, 6), seed=16)
        x = L.from_numpy(a.copy()).cuda()
        idx = np.array([7, 0, 7, 3])
        np.testing.assert_array_equal(on_cpu(x[L.from_numpy(idx).cuda()]), a[idx])
        np.testing.assert_array_equal(on_cpu(x[x > 0]), a[a > 0])
        x[2:4, ::2] = 5.0
        a[2:4, ::2] = 5.0
        np.testing.assert_array_equal(on_cpu(x), a)
        self.assertEqual(on_cpu(x.nonzero()).shape, np.argwhere(a).shape)


@needs_cuda
class TestAutograd(unittest.TestCase):
    def test_mlp_gradients_match_cpu(self):
        a, w1, w2 = rng((16, 8), np.float64, 17), rng((8, 12), np.float64, 18), rng((12, 3), np.float64, 19)
        grads = {}
        for dev in ("cpu", "cuda:0"):
            x = L.from_numpy(a).to(dev)
            p1 = L.from_numpy(w1).to(dev).requires_grad_()
            p2 = L.from_numpy(w2).to(dev).requires_grad_()
            loss = ((x @ p1).tanh() @ p2).softmax(1).log().sum()
            loss.backward()
            self.assertEqual(str(p1.grad.device), dev)
            grads[dev] = (on_cpu(p1.grad), on_cpu(p2.grad), loss.item())
        for c, g in zip(grads["cpu"], grads["cuda:0"]):
            np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)

    def test_gradient_through_transfers(self):
        a = rng((5,), np.float64, 20)
        x = L.from_numpy(a).requires_grad_()
        y = (x.cuda() * 3).cpu().sum()
        y.backward()
        self.assertFalse(x.grad.is_cuda)
        np.testing.assert_array_equal(x.grad.numpy(), np.full(5, 3.0))


@needs_cuda
class TestErrors(unittest.TestCase):
    def test_mixed_devices(self):
        x, y = L.ones(3).cuda(), L.ones(3)
        with self.assertRaisesRegex(RuntimeError, "expected all tensors to be on the same device"):
            x + y
        # a CPU 0-dim tensor may join an op on any device
        self.assertTrue((x + L.tensor(2.0)).is_cuda)

    def test_numpy_of_device_tensor(self):
        with self.assertRaisesRegex(TypeError, "can't convert cuda:0 device type tensor to numpy"):
            L.ones(2).cuda().numpy()

    def test_missing_device(self):
        with self.assertRaises(RuntimeError):
            L.ones(2, device="cuda:7")


@needs_cuda
class TestDLPack(unittest.TestCase):
    def test_device_and_round_trip(self):
        x = L.from_numpy(rng((4, 5), seed=21)).cuda()
        self.assertEqual(tuple(x.__dlpack_device__()), (2, 0))  # kDLCUDA, cuda:0
        y = L.from_dlpack(x)
        self.assertTrue(y.is_cuda)
        np.testing.assert_array_equal(on_cpu(y), on_cpu(x))

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA PyTorch for this python3")
    def test_torch_cuda(self):
        x = L.from_numpy(rng((64, 32), seed=22)).cuda()
        t = torch.from_dlpack(x)
        self.assertEqual(t.device.type, "cuda")
        np.testing.assert_array_equal(t.cpu().numpy(), on_cpu(x))
        back = L.from_dlpack(t * 2)
        np.testing.assert_allclose(on_cpu(back), on_cpu(x) * 2)


if __name__ == "__main__":
    unittest.main()

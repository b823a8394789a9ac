"""The Python module libops: autograd, PyTorch's rules, threads, errors, leaks and the
PyTorch parity of issue 15 (values, parsing, the Tensor type, indexing: test_libops.py).
Run by `meson test` (suite python) with the build tree's package first on PYTHONPATH."""

import gc
import math
import sys
import unittest

import numpy as np

import libops as L

from libops_test_base import Base, rng_array, torch


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

"""libops from Python threads (docs/autograd.md "Threads"): ops on large tensors
release the GIL, so threads sharing a leaf that requires grad record ops on it, drop
them and run backward at the same time; and backward(create_graph=True) in a loop
must not leak (no leaf <-> gradient cycle).  Run by `meson test` (suite python)."""

import gc
import threading
import unittest

import libops as L

NTHREADS = 8
# Above the size from which ops release the GIL (python/src: PYOPS_GIL_RELEASE_NUMEL).
BIG = 1 << 16


def run_threads(fn):
    errors = []

    def body(i):
        try:
            fn(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(NTHREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class TestSharedLeaf(unittest.TestCase):
    def test_forward_and_release(self):
        w = L.zeros(BIG, dtype=L.float64, requires_grad=True)
        x = L.ones(BIG, dtype=L.float64)

        def fn(i):
            for _ in range(100):
                y = w * x
                self.assertTrue(y.requires_grad)
                del y

        run_threads(fn)
        (w * x).sum().backward()
        self.assertEqual(w.grad.sum().item(), BIG)

    def test_backward_sum_is_exact(self):
        # every pass adds 1 to each element: 8 threads x 50 passes = 400, none lost
        w = L.zeros(BIG, dtype=L.float64, requires_grad=True)
        x = L.ones(BIG, dtype=L.float64)

        def fn(i):
            for _ in range(50):
                (w * x).sum().backward()

        run_threads(fn)
        g = w.grad
        self.assertEqual(g.min().item(), NTHREADS * 50)
        self.assertEqual(g.max().item(), NTHREADS * 50)

    def test_grad_mode_is_per_thread(self):
        w = L.zeros(BIG, requires_grad=True)

        def fn(i):
            on = i % 2 == 0
            with (L.enable_grad() if on else L.no_grad()):
                for _ in range(50):
                    self.assertEqual((w * 2).requires_grad, on)
                    self.assertEqual(L.is_grad_enabled(), on)

        run_threads(fn)
        self.assertTrue(L.is_grad_enabled())


class TestCreateGraphLeak(unittest.TestCase):
    def step(self):
        w = L.ones(1000, dtype=L.float64, requires_grad=True)
        loss = (w * w * 3).sum()
        loss.backward(create_graph=True)
        self.assertTrue(w.grad.requires_grad)
        self.assertEqual(w.grad.sum().item(), 6000)

    def test_create_graph_loop_frees_everything(self):
        self.step()
        gc.collect()
        base = L._C._allocated_bytes()
        for _ in range(50):
            self.step()
        gc.collect()
        self.assertEqual(L._C._allocated_bytes(), base)


if __name__ == "__main__":
    unittest.main()

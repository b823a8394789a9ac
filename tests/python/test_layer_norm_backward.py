"""native_layer_norm_backward as PyTorch declares it: `bool[3] output_mask` (the schema
grammar's bool lists, docs/codegen.md) through the Python binding, and its own
derivative (ops/derivatives.yaml: layer_norm's double backward,
ops_autograd_layer_norm_double_backward) at float64 against central finite
differences, against the same double backward composed from elementary libops ops,
and against torch when it is installed.  Run by `meson test` (suite python)."""

import unittest

import numpy as np

import libops as L

try:
    import torch
except ImportError:  # the torch comparisons skip
    torch = None

EPS = 1e-5


def stats(x, ns, w=None, b=None):
    """native_layer_norm's mean and rstd of x (numpy), as libops tensors without history."""
    _, m, r = L.native_layer_norm(L.from_numpy(x), ns, None if w is None else L.from_numpy(w),
                                  None if b is None else L.from_numpy(b), EPS)
    return m, r


def lt(a, grad=False):
    t = L.from_numpy(np.ascontiguousarray(a))
    return t.requires_grad_(True) if grad else t


class TestBoolListArgument(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(1)
        self.x = rng.standard_normal((4, 5))
        self.g = rng.standard_normal((4, 5))
        self.w = rng.standard_normal(5)
        self.m, self.r = stats(self.x, [5])

    def call(self, mask):
        return L.native_layer_norm_backward(lt(self.g), lt(self.x), [5], self.m, self.r, lt(self.w), None, mask)

    def test_list_and_tuple_of_bools(self):
        full = self.call([True, True, True])
        for mask in ([True, False, True], (False, True, False), (True, True, True)):
            out = self.call(mask)
            for i in range(3):
                if mask[i]:
                    np.testing.assert_array_equal(out[i].numpy(), full[i].numpy())
                else:
                    self.assertEqual(out[i].shape, (0,))

    def test_non_bools_refused_naming_op_and_argument(self):
        # ints (even 0/1), floats, None elements, a bare bool, a tensor: TypeError
        for bad, elem in (([1, 0, 1], "int"), ([True, 1, False], "int"), ([True, None, True], "None"),
                          ([1.0, 0.0, 1.0], "float")):
            with self.assertRaises(TypeError) as cm:
                self.call(bad)
            msg = str(cm.exception)
            self.assertIn("native_layer_norm_backward", msg)
            self.assertIn("output_mask", msg)
            self.assertIn("bools", msg)
            self.assertIn(elem, msg)
        for bad in (True, lt(np.ones(3))):
            with self.assertRaises(TypeError) as cm:
                self.call(bad)
            self.assertIn("output_mask", str(cm.exception))

    def test_wrong_length_refused(self):
        for bad in ([True, True], [True] * 4, []):
            with self.assertRaises(TypeError) as cm:
                self.call(bad)
            msg = str(cm.exception)
            self.assertIn("native_layer_norm_backward", msg)
            self.assertIn("output_mask", msg)
            self.assertIn("3 bools", msg)


class TestAllocationFailure(unittest.TestCase):
    """Every allocation of the call failing in turn: the call fails with the op's
    message or gives the full result, never a success over unwritten outputs (the CPU
    loop's column partials once returned the last status, OK, when their allocation
    failed: float16 rows make allocations follow it, so that success came before
    failures)."""

    def test_each_allocation_failing(self):
        rng = np.random.default_rng(5)
        for dt in (np.float16, np.float32):
            x = rng.standard_normal((70, 19)).astype(dt)
            g = rng.standard_normal((70, 19)).astype(dt)
            w = rng.standard_normal(19).astype(dt)
            m, r = stats(x, [19], w)
            args = (lt(g), lt(x), [19], m, r, lt(w), None, [True, True, True])
            want = [o.numpy().copy() for o in L.native_layer_norm_backward(*args)]
            outcomes = []
            for nth in range(1, 40):
                L._C._alloc_fail_nth(nth)
                try:
                    out = L.native_layer_norm_backward(*args)
                except (MemoryError, RuntimeError) as e:
                    L._C._alloc_fail_nth(0)
                    self.assertIn("native_layer_norm_backward", str(e))
                    outcomes.append(False)
                    continue
                L._C._alloc_fail_nth(0)
                for o, ref in zip(out, want):
                    np.testing.assert_array_equal(o.numpy(), ref, err_msg=f"{dt} nth={nth}")
                outcomes.append(True)
            first = outcomes.index(True)
            self.assertGreater(first, 0, dt)
            self.assertTrue(all(outcomes[first:]), (dt, outcomes))


def nlnb_outputs(g, x, w, ns, mask):
    """native_layer_norm_backward of (g, x, w) with the statistics of x (no history)."""
    m, r = stats(x.detach().numpy() if hasattr(x, "detach") else x, ns)
    return L.native_layer_norm_backward(g, x, ns, m, r, w, None, mask)


class TestDoubleBackward(unittest.TestCase):
    """The derivative of native_layer_norm_backward's outputs (dx, dw, db) with respect to
    grad_out, input and weight, mean and rstd being the statistics of input."""

    def setUp(self):
        self.rng = np.random.default_rng(7)

    def scalar(self, g, x, w, ns, mask, A, B, C):
        out = nlnb_outputs(lt(g), lt(x), None if w is None else lt(w), ns, mask)
        s = 0.0
        for o, c in zip(out, (A, B, C)):
            if o.numel() > 0:
                s += float((o.numpy() * c).sum())
        return s

    def check_fd(self, shape, k, with_w, mask):
        ns = list(shape[-k:])
        x = self.rng.standard_normal(shape) * 2 + 0.5
        g = self.rng.standard_normal(shape)
        w = self.rng.standard_normal(ns) if with_w else None
        A = self.rng.standard_normal(shape)
        B = self.rng.standard_normal(ns)
        C = self.rng.standard_normal(ns)
        lg, lx = lt(g, True), lt(x, True)
        lw = lt(w, True) if with_w else None
        out = nlnb_outputs(lg, lx, lw, ns, mask)
        outs = [o for o in out if o.numel() > 0]
        cots = [lt(c) for o, c in zip(out, (A, B, C)) if o.numel() > 0]
        ins = [lg, lx] + ([lw] if with_w else [])
        got = L.autograd.grad(outs, ins, cots, allow_unused=True)
        h = 1e-6
        for name, arr, gr in zip(("grad_out", "input", "weight"), (g, x, w), got):
            num = np.zeros_like(arr)
            for i in np.ndindex(arr.shape):
                args = {"g": g, "x": x, "w": w}
                key = {"grad_out": "g", "input": "x", "weight": "w"}[name]
                p, q = arr.copy(), arr.copy()
                p[i] += h
                q[i] -= h
                args[key] = p
                fp = self.scalar(args["g"], args["x"], args["w"], ns, mask, A, B, C)
                args[key] = q
                fq = self.scalar(args["g"], args["x"], args["w"], ns, mask, A, B, C)
                num[i] = (fp - fq) / (2 * h)
            an = np.zeros_like(arr) if gr is None else gr.numpy()
            np.testing.assert_allclose(an, num, rtol=1e-6, atol=1e-7,
                                       err_msg=f"{name} shape={shape} k={k} w={with_w} mask={mask}")

    def test_finite_differences(self):
        for shape, k, with_w, mask in (((3, 5), 1, True, [True, True, True]),
                                       ((2, 3, 4), 2, True, [True, False, True]),
                                       ((4, 6), 1, False, [True, False, False]),
                                       ((3, 7), 1, True, [False, True, True]),
                                       ((2, 5), 1, True, [True, True, False])):
            self.check_fd(shape, k, with_w, mask)

    def test_mean_and_rstd_have_no_gradient(self):
        x = self.rng.standard_normal((3, 4))
        m, r = stats(x, [4])
        m.requires_grad_(True)
        out = L.native_layer_norm_backward(lt(x, True), lt(x), [4], m, r, None, None, [True, False, False])
        with self.assertRaises(Exception) as cm:
            L.autograd.grad([out[0]], [m], [lt(np.ones((3, 4)))])
        self.assertIn("native_layer_norm_backward", str(cm.exception))
        self.assertIn("mean", str(cm.exception))


def layer_norm_composed(x, ns, w, b):
    """layer_norm from elementary ops: its double backward goes through their formulas."""
    dims = list(range(-len(ns), 0))
    mu = x.mean(dims, True)
    xc = x - mu
    var = (xc * xc).mean(dims, True)
    y = xc * L.rsqrt(var + EPS)
    return y * w + b


class TestLayerNormSecondOrder(unittest.TestCase):
    """layer_norm's second derivatives (create_graph now records the fused
    native_layer_norm_backward) against the op-composed layer_norm and torch."""

    def second(self, fn, mod, x, w, b, v, u):
        tx, tw, tb, tv = (mod(a) for a in (x, w, b, v))
        y = fn(tx, tw, tb)
        gx, gw, gb = mod.grad([y], [tx, tw, tb], [tv])
        s = (gx * mod.c(u[0])).sum() + (gw * mod.c(u[1])).sum() + (gb * mod.c(u[2])).sum()
        got = mod.grad2([s], [tx, tw, tb, tv])
        # an input the gradient does not depend on (bias): None or zeros, as zeros
        return [np.zeros_like(a) if t is None else mod.np(t) for t, a in zip(got, (x, w, b, v))]

    def test_against_composed_and_torch(self):
        rng = np.random.default_rng(11)
        for shape, k in (((4, 7), 1), ((2, 3, 5), 2), ((5, 33), 1)):
            ns = list(shape[-k:])
            x = rng.standard_normal(shape) * 3 - 1
            w, b = rng.standard_normal(ns), rng.standard_normal(ns)
            v = rng.standard_normal(shape)
            u = (rng.standard_normal(shape), rng.standard_normal(ns), rng.standard_normal(ns))

            class Lm:
                def __call__(self, a):
                    return lt(a, True)
                c = staticmethod(lt)
                np = staticmethod(lambda t: t.numpy())

                @staticmethod
                def grad(o, i, c):
                    return L.autograd.grad(o, i, c, create_graph=True)

                @staticmethod
                def grad2(o, i):
                    return L.autograd.grad(o, i, allow_unused=True)

            fused = self.second(lambda a, p, q: L.layer_norm(a, ns, p, q), Lm(), x, w, b, v, u)
            # native_layer_norm: the same call from its saved statistics, which must not
            # ask for a gradient of their own (they come back from the node with history)
            native = self.second(lambda a, p, q: L.native_layer_norm(a, ns, p, q, EPS)[0], Lm(), x, w, b, v, u)
            for f, c, name in zip(fused, native, ("input", "weight", "bias", "grad")):
                np.testing.assert_allclose(f, c, rtol=1e-9, atol=1e-10, err_msg=f"native {name} {shape}")
            composed = self.second(lambda a, p, q: layer_norm_composed(a, ns, p, q), Lm(), x, w, b, v, u)
            for f, c, name in zip(fused, composed, ("input", "weight", "bias", "grad")):
                np.testing.assert_allclose(f, c, rtol=1e-9, atol=1e-10, err_msg=f"composed {name} {shape}")
            if torch is None:
                continue

            class Tm:
                def __call__(self, a):
                    return torch.tensor(a, requires_grad=True)
                c = staticmethod(torch.tensor)
                np = staticmethod(lambda t: t.detach().numpy())

                @staticmethod
                def grad(o, i, c):
                    return torch.autograd.grad(o, i, c, create_graph=True)

                @staticmethod
                def grad2(o, i):
                    return torch.autograd.grad(o, i, allow_unused=True)

            ref = self.second(lambda a, p, q: torch.nn.functional.layer_norm(a, ns, p, q, EPS), Tm(), x, w, b, v, u)
            for f, t, name in zip(fused, ref, ("input", "weight", "bias", "grad")):
                np.testing.assert_allclose(f, t, rtol=1e-9, atol=1e-10, err_msg=f"torch {name} {shape}")


if __name__ == "__main__":
    unittest.main()

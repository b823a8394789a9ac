"""Training machinery of libops.nn / libops.optim (issue 18's leftovers): optimizer
param_groups changed mid-run, add_param_group, state_dict / load_state_dict (a resumed
run equals the uninterrupted one bit for bit), schedulers' state; Tensor.register_hook
and Module.register_full_backward_hook (order, replacement gradients, removal,
exceptions, references); MultiheadAttention's add_bias_kv, add_zero_attn, kdim/vdim.
Torch-free checks (hand-derived values, a NumPy attention) first, then the same against
PyTorch 1.13 where installed."""
import gc
import math
import sys
import unittest

import numpy as np

import libops as L
import libops.nn as nn
from libops.optim import lr_scheduler

try:
    import torch
except ImportError:  # CI has no PyTorch: those comparisons are skipped there
    torch = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")


def quad_grads(ps, k):
    """Gradients of a fixed loss that changes with the step k (so no two steps agree)."""
    loss = None
    for i, p in enumerate(ps):
        term = ((p * p * p).sum() * (0.1 * (i + 1)) + (p * (0.3 + 0.07 * k)).sum())
        loss = term if loss is None else loss + term
    loss.backward()


def make_params(seed=0):
    rng = np.random.default_rng(seed)
    return [nn.Parameter(L.tensor(rng.standard_normal(s))) for s in ((3, 4), (4,), (2, 2))]


def clone_state(sd):
    """A deep copy of an optimizer state dict (the live tensors would move on)."""
    return {"state": {k: {n: (v.clone() if isinstance(v, L.Tensor) else v) for n, v in s.items()}
                      for k, s in sd["state"].items()},
            "param_groups": [dict(g, params=list(g["params"])) for g in sd["param_groups"]]}


OPTIMS = [
    (L.optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=0.01)),
    (L.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True)),
    (L.optim.SGD, dict(lr=0.05)),
    (L.optim.Adam, dict(lr=0.05, weight_decay=0.1)),
    (L.optim.Adam, dict(lr=0.05, amsgrad=True)),
    (L.optim.AdamW, dict(lr=0.05, betas=(0.8, 0.9))),
]


def groups_of(ps):
    return [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.02}]


def change_options(opt, k):
    """What a training script does mid-run: a new lr, and betas / momentum / decay."""
    if k == 2:
        for g in opt.param_groups:
            g["lr"] *= 0.5
            if "betas" in g:
                g["betas"] = (0.5, 0.95)
                g["weight_decay"] = 0.2
            elif g["momentum"] > 0:
                g["momentum"] = 0.5
                g["weight_decay"] = 0.05


class TestOptimizerState(unittest.TestCase):
    def run_steps(self, opt, ps, ks, sched=None):
        for k in ks:
            change_options(opt, k)
            opt.zero_grad(set_to_none=True)
            quad_grads(ps, k)
            opt.step()
            if sched is not None:
                sched.step()

    def test_resume_is_bit_exact(self):
        for cls, kw in OPTIMS:
            with self.subTest(cls=cls.__name__, **{k: str(v) for k, v in kw.items()}):
                a = make_params()
                oa = cls(groups_of(a), **kw)
                sa = lr_scheduler.StepLR(oa, step_size=2, gamma=0.5)
                self.run_steps(oa, a, range(6), sa)

                b = make_params()
                ob = cls(groups_of(b), **kw)
                sb = lr_scheduler.StepLR(ob, step_size=2, gamma=0.5)
                self.run_steps(ob, b, range(3), sb)
                ckpt_params = [p.detach().clone() for p in b]
                ckpt_opt = clone_state(ob.state_dict())
                ckpt_sched = dict(sb.state_dict())
                # carry on a little (the checkpoint must not move with it), then resume
                self.run_steps(ob, b, range(3, 5), sb)

                c = make_params(seed=1)
                with L.no_grad():
                    for p, q in zip(c, ckpt_params):
                        p.copy_(q)
                oc = cls(groups_of(c), **kw)
                sc = lr_scheduler.StepLR(oc, step_size=2, gamma=0.5)
                oc.load_state_dict(ckpt_opt)
                sc.load_state_dict(ckpt_sched)
                self.assertEqual(sc.get_last_lr(), ckpt_sched["_last_lr"])
                self.run_steps(oc, c, range(3, 6), sc)
                for pa, pc in zip(a, c):
                    np.testing.assert_array_equal(pa.detach().numpy(), pc.detach().numpy())
                self.assertEqual([g["lr"] for g in oa.param_groups], [g["lr"] for g in oc.param_groups])

    def test_state_dict_layout(self):
        ps = make_params()
        opt = L.optim.Adam(groups_of(ps), lr=0.1, amsgrad=True)
        sd = opt.state_dict()
        self.assertEqual(sd["state"], {})
        self.assertEqual([g["params"] for g in sd["param_groups"]], [[0, 1], [2]])
        self.assertEqual(sd["param_groups"][1]["lr"], 0.02)
        self.assertEqual(sd["param_groups"][0]["betas"], (0.9, 0.999))
        ps[0].grad = L.ones(3, 4, dtype=L.float64)  # only p0 has a gradient: only it gets state
        opt.step()
        opt.step()
        sd = opt.state_dict()
        self.assertEqual(list(sd["state"]), [0])
        s0 = sd["state"][0]
        self.assertEqual(list(s0), ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"])
        self.assertEqual(s0["step"].item(), 2.0)
        self.assertEqual(s0["step"].dtype, L.float32)  # torch 1.13 keeps a float tensor
        # after two steps of g = 1: m = 1 - 0.9^2, v = 1 - 0.999^2
        np.testing.assert_allclose(s0["exp_avg"].numpy(), np.full((3, 4), 1 - 0.9 ** 2), rtol=1e-12)
        np.testing.assert_allclose(s0["exp_avg_sq"].numpy(), np.full((3, 4), 1 - 0.999 ** 2), rtol=1e-12)
        self.assertEqual(opt.state[ps[0]]["exp_avg"].dtype, L.float64)
        self.assertNotIn(ps[1], opt.state)
        sgd = L.optim.SGD(ps, lr=0.1)
        ps[0].grad = L.ones(3, 4, dtype=L.float64)
        sgd.step()
        self.assertEqual(sgd.state_dict()["state"], {0: {"momentum_buffer": None}})  # as torch with momentum 0

    def test_load_errors_leave_state(self):
        ps = make_params()
        opt = L.optim.SGD(groups_of(ps), lr=0.1, momentum=0.9)
        quad_grads(ps, 0)
        opt.step()
        sd = clone_state(opt.state_dict())
        before = opt.state_dict()["state"][0]["momentum_buffer"].numpy().copy()
        with self.assertRaisesRegex(ValueError, "different number of parameter groups"):
            opt.load_state_dict({"state": {}, "param_groups": sd["param_groups"][:1]})
        bad = clone_state(sd)
        bad["param_groups"][0]["params"] = [0]
        with self.assertRaisesRegex(ValueError, "doesn't match the size"):
            opt.load_state_dict(bad)
        bad = clone_state(sd)
        bad["state"][1]["momentum_buffer"] = L.zeros(5, dtype=L.float64)
        with self.assertRaisesRegex(ValueError, r"shape \[5\]"):
            opt.load_state_dict(bad)
        np.testing.assert_array_equal(opt.state_dict()["state"][0]["momentum_buffer"].numpy(), before)
        self.assertEqual(opt.param_groups[0]["momentum"], 0.9)

    def test_options_take_effect(self):
        """A change of betas / weight_decay / momentum reaches the next step (by hand)."""
        p = nn.Parameter(L.tensor([0.5, -1.5], dtype=L.float64))
        opt = L.optim.Adam([p], lr=0.1)
        x, m, v = np.array([0.5, -1.5]), 0.0, 0.0
        for t, (b1, b2, wd, eps) in enumerate(((0.9, 0.999, 0.0, 1e-8), (0.5, 0.9, 0.3, 1e-3),
                                               (0.7, 0.99, 0.0, 0.0)), 1):
            g0 = opt.param_groups[0]
            g0["betas"], g0["weight_decay"], g0["eps"] = (b1, b2), wd, eps
            opt.zero_grad()
            (p * p * p).sum().backward()
            g = 3 * x * x + wd * x
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            x = x - 0.1 / (1 - b1 ** t) * m / (np.sqrt(v) / math.sqrt(1 - b2 ** t) + eps)
            opt.step()
            np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12)
        with self.assertRaisesRegex(ValueError, "Invalid beta"):
            opt.param_groups[0]["betas"] = (1.5, 0.9)
            opt.step()

    def test_add_param_group(self):
        a, b = nn.Parameter(L.ones(2)), nn.Parameter(L.ones(3))
        opt = L.optim.SGD([a], lr=0.1, momentum=0.9)
        opt.add_param_group({"params": b, "lr": 1.0})
        self.assertEqual(opt.param_groups[1]["momentum"], 0.9)
        (a.sum() + b.sum()).backward()
        opt.step()
        np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9], rtol=1e-6)
        np.testing.assert_allclose(b.detach().numpy(), [0.0, 0.0, 0.0], atol=1e-6)
        with self.assertRaisesRegex(ValueError, "more than one parameter group"):
            opt.add_param_group({"params": [a]})
        with self.assertRaisesRegex(TypeError, "ordered collections"):
            opt.add_param_group({"params": {nn.Parameter(L.ones(1))}})
        self.assertEqual(len(opt.param_groups), 2)
        opt.zero_grad(set_to_none=True)
        self.assertIsNone(a.grad)
        self.assertIsNone(b.grad)

    def test_scheduler_state_dict(self):
        p = nn.Parameter(L.ones(1))
        opt = L.optim.SGD([p], lr=1.0)
        s = lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.1)
        for _ in range(4):
            opt.step()
            s.step()
        sd = s.state_dict()
        self.assertNotIn("optimizer", sd)
        lrs = []
        for _ in range(3):
            s.step()
            lrs.append(opt.param_groups[0]["lr"])
        opt2 = L.optim.SGD([nn.Parameter(L.ones(1))], lr=1.0)
        s2 = lr_scheduler.CosineAnnealingLR(opt2, T_max=10, eta_min=0.1)
        s2.load_state_dict(sd)
        opt2.param_groups[0]["lr"] = sd["_last_lr"][0]
        lrs2 = []
        for _ in range(3):
            s2.step()
            lrs2.append(opt2.param_groups[0]["lr"])
        self.assertEqual(lrs, lrs2)


class TestTensorHooks(unittest.TestCase):
    def test_order_replacement_removal(self):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        calls = []
        h1 = x.register_hook(lambda g: calls.append(("a", g.tolist())))
        h2 = x.register_hook(lambda g: (calls.append(("b", g.tolist())), g * 10)[1])
        h3 = x.register_hook(lambda g: calls.append(("c", g.tolist())))
        (x * x).sum().backward()
        self.assertEqual(calls, [("a", [2.0, 4.0, 6.0]), ("b", [2.0, 4.0, 6.0]), ("c", [20.0, 40.0, 60.0])])
        self.assertEqual(x.grad.tolist(), [20.0, 40.0, 60.0])
        h2.remove()
        h2.remove()  # twice: nothing
        calls.clear()
        x.grad = None
        (x * 2).sum().backward()
        self.assertEqual(calls, [("a", [2.0, 2.0, 2.0]), ("c", [2.0, 2.0, 2.0])])
        self.assertEqual(x.grad.tolist(), [2.0, 2.0, 2.0])
        with h1, h3:
            pass
        calls.clear()
        (x * 2).sum().backward()
        self.assertEqual(calls, [])

    def test_non_leaf_and_chain(self):
        x = L.tensor([1.0, -1.0], requires_grad=True)
        y = x * 3
        seen = []
        y.register_hook(lambda g: seen.append(g.tolist()) or g + 1)
        (y * y).sum().backward()
        self.assertEqual(seen, [[6.0, -6.0]])
        # the replaced gradient flows on: dx = 3 * (2y + 1)
        self.assertEqual(x.grad.tolist(), [21.0, -15.0])
        self.assertIsNone(y.grad)

    def test_hook_removing_itself(self):
        x = L.tensor([1.0], requires_grad=True)
        n = [0]
        handle = [None]

        def once(g):
            n[0] += 1
            handle[0].remove()
        handle[0] = x.register_hook(once)
        for _ in range(3):
            (x * 2).sum().backward()
        self.assertEqual(n[0], 1)

    def test_exceptions(self):
        class Boom(Exception):
            pass

        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2

        def bad(g):
            raise Boom("in the hook")
        h = y.register_hook(bad)
        with self.assertRaisesRegex(Boom, "in the hook"):
            y.sum().backward(retain_graph=True)
        self.assertIsNone(x.grad)  # the pass stopped before x
        h.remove()
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0, 2.0])
        # a wrong return value, a wrong shape
        z = L.tensor([1.0, 2.0], requires_grad=True)
        z.register_hook(lambda g: "no")
        with self.assertRaisesRegex(TypeError, "hook returned an object of type str"):
            (z * 1).sum().backward()
        w = L.tensor([1.0, 2.0], requires_grad=True)
        w.register_hook(lambda g: L.ones(3))
        with self.assertRaisesRegex(RuntimeError, "hook returned a gradient"):
            (w * 1).sum().backward()
        # an unrelated error afterwards is not taken for the hook's
        with self.assertRaises(RuntimeError):
            L.ones(2) + L.ones(3)
        with self.assertRaisesRegex(RuntimeError, "doesn't require gradient"):
            L.ones(2).register_hook(lambda g: None)
        with self.assertRaisesRegex(TypeError, "callable"):
            x.register_hook(3)

    def test_autograd_grad_runs_hooks(self):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.register_hook(lambda g: g * 0.5)
        (gx,) = L.autograd.grad(y.sum(), [x])
        self.assertEqual(gx.tolist(), [1.0, 2.0])

    def test_references(self):
        """The hook's callable is held while the hook lives and dropped when it goes."""
        class F:
            def __call__(self, g):
                return None
        f = F()
        base = sys.getrefcount(f)
        x = L.tensor([1.0], requires_grad=True)
        h = x.register_hook(f)
        self.assertEqual(sys.getrefcount(f), base + 1)
        h.remove()
        self.assertEqual(sys.getrefcount(f), base)
        x.register_hook(f)
        y = x * 2
        y.register_hook(f)
        self.assertEqual(sys.getrefcount(f), base + 2)
        del y
        gc.collect()
        self.assertEqual(sys.getrefcount(f), base + 1)
        del x
        gc.collect()
        self.assertEqual(sys.getrefcount(f), base)


class Mul(nn.Module):
    def forward(self, a, b, scale=1.0):
        return a * b * scale


class TestModuleBackwardHooks(unittest.TestCase):
    def test_linear_grad_input_output(self):
        lin = nn.Linear(3, 2)
        x = L.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]], requires_grad=True)
        seen = []
        h = lin.register_full_backward_hook(
            lambda m, gi, go: seen.append((m, [t.tolist() for t in gi], [t.tolist() for t in go])))
        out = lin(x)
        (out * L.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        self.assertEqual(len(seen), 1)
        m, gi, go = seen[0]
        self.assertIs(m, lin)
        self.assertEqual(go, [[[1.0, 2.0], [3.0, 4.0]]])
        w = lin.weight.detach().numpy()
        np.testing.assert_allclose(gi[0], np.array([[1.0, 2.0], [3.0, 4.0]]) @ w, rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), gi[0], rtol=1e-6)
        h.remove()
        lin(x).sum().backward()
        self.assertEqual(len(seen), 1)

    def test_replace_grad_input_and_order(self):
        m = Mul()
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        order = []
        m.register_full_backward_hook(lambda mod, gi, go: order.append("first") or (gi[0] * 2, None))
        m.register_full_backward_hook(lambda mod, gi, go: order.append(("second", gi[0].tolist(), gi[1])))
        # the module's contribution only: a is also used outside it
        (m(a, b, scale=2.0).sum() + a.sum()).backward()
        self.assertEqual(order, ["first", ("second", [12.0, 16.0], None)])
        self.assertEqual(a.grad.tolist(), [13.0, 17.0])  # 2 * (2 b) + 1
        self.assertEqual(b.grad.tolist(), [0.0, 0.0])     # replaced by None: zeros

    def test_no_input_requires_grad(self):
        lin = nn.Linear(2, 1)
        seen = []
        lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].tolist())))
        y = lin(L.ones(1, 2)).sum()
        y.backward(retain_graph=True)
        self.assertEqual(seen, [((None,), [[1.0]])])
        y.backward()  # once per pass
        self.assertEqual(len(seen), 2)
        self.assertIsNotNone(lin.weight.grad)

    def test_identity_and_errors(self):
        idm = nn.Identity()
        x = L.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        idm.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].tolist(), go[0].tolist())))
        (idm(x) * 3).sum().backward()
        self.assertEqual(seen, [([3.0, 3.0], [3.0, 3.0])])

        class Boom(Exception):
            pass
        lin = nn.Linear(2, 2)

        def bad(m, gi, go):
            raise Boom()
        lin.register_full_backward_hook(bad)
        with self.assertRaises(Boom):
            lin(L.ones(1, 2, requires_grad=True)).sum().backward()
        lin2 = nn.Linear(2, 2)
        lin2.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        with self.assertRaisesRegex(RuntimeError, "invalid number of grad_input"):
            lin2(L.ones(1, 2, requires_grad=True)).sum().backward()

    def test_no_grad_mode_and_forward_hooks_too(self):
        lin = nn.Linear(2, 2)
        calls = []
        lin.register_full_backward_hook(lambda m, gi, go: calls.append("bw"))
        lin.register_forward_pre_hook(lambda m, args: calls.append("pre"))
        lin.register_forward_hook(lambda m, args, out: calls.append("fwd"))
        with L.no_grad():
            lin(L.ones(1, 2))
        out = lin(L.ones(1, 2, requires_grad=True))
        out.sum().backward()
        self.assertEqual(calls, ["pre", "fwd", "pre", "fwd", "bw"])


# ---- MultiheadAttention -----------------------------------------------------------

def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_mha(sd, q, k, v, H, add_zero_attn=False, attn_mask=None, kpm=None, batch_first=False):
    """torch's multi_head_attention_forward in NumPy float64 (sd: NumPy parameters)."""
    if batch_first:
        q, k, v = (t.transpose(1, 0, 2) for t in (q, k, v))
    L_, N, E = q.shape
    D = E // H
    if "in_proj_weight" in sd:
        wq, wk, wv = np.split(sd["in_proj_weight"], 3)
    else:
        wq, wk, wv = sd["q_proj_weight"], sd["k_proj_weight"], sd["v_proj_weight"]
    bq, bk, bv = np.split(sd["in_proj_bias"], 3) if "in_proj_bias" in sd else (0, 0, 0)
    q, k, v = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    S = k.shape[0]
    mask = np.zeros((N * H, L_, S))
    if attn_mask is not None:
        am = np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool else attn_mask
        mask = mask + am
    if kpm is not None:
        pm = np.where(kpm, -np.inf, 0.0) if kpm.dtype == bool else kpm
        mask = mask + np.repeat(pm, H, axis=0)[:, None, :]
    if "bias_k" in sd:
        k = np.concatenate([k, np.broadcast_to(sd["bias_k"], (1, N, E))])
        v = np.concatenate([v, np.broadcast_to(sd["bias_v"], (1, N, E))])
        mask = np.concatenate([mask, np.zeros((N * H, L_, 1))], -1)
    q = q.reshape(L_, N * H, D).transpose(1, 0, 2)
    k = k.reshape(k.shape[0], N * H, D).transpose(1, 0, 2)
    v = v.reshape(v.shape[0], N * H, D).transpose(1, 0, 2)
    if add_zero_attn:
        k = np.concatenate([k, np.zeros((N * H, 1, D))], 1)
        v = np.concatenate([v, np.zeros((N * H, 1, D))], 1)
        mask = np.concatenate([mask, np.zeros((N * H, L_, 1))], -1)
    a = np_softmax(q @ k.transpose(0, 2, 1) / math.sqrt(D) + mask)
    o = (a @ v).transpose(1, 0, 2).reshape(L_, N, E) @ sd["out_proj.weight"].T + sd["out_proj.bias"]
    if batch_first:
        o = o.transpose(1, 0, 2)
    return o, a.reshape(N, H, L_, -1)


MHA_CASES = [
    dict(),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True),
    dict(kdim=5, vdim=3),
    dict(kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True, batch_first=True),
    dict(batch_first=True, add_zero_attn=True),
]


class TestMultiheadAttention(unittest.TestCase):
    E, H, L_, S, N = 8, 2, 3, 4, 2

    def inputs(self, kw, rng):
        kd, vd = kw.get("kdim", self.E), kw.get("vdim", self.E)
        shp = (lambda T, d: (self.N, T, d)) if kw.get("batch_first") else (lambda T, d: (T, self.N, d))
        return (rng.standard_normal(shp(self.L_, self.E)), rng.standard_normal(shp(self.S, kd)),
                rng.standard_normal(shp(self.S, vd)))

    def masks(self, rng):
        am_bool = np.zeros((self.L_, self.S), dtype=bool)
        am_bool[0, 1] = am_bool[2, 3] = True
        am_float = rng.standard_normal((self.N * self.H, self.L_, self.S))
        kpm = np.zeros((self.N, self.S), dtype=bool)
        kpm[1, 0] = True
        return am_bool, am_float, kpm

    def test_params_and_state_dict(self):
        m = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True)
        self.assertEqual(list(m.state_dict()), ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                                "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"])
        self.assertEqual(tuple(m.k_proj_weight.shape), (8, 5))
        self.assertEqual(tuple(m.v_proj_weight.shape), (8, 3))
        self.assertEqual(tuple(m.bias_k.shape), (1, 1, 8))
        self.assertIsNone(m.in_proj_weight)
        m2 = nn.MultiheadAttention(8, 2, kdim=8, vdim=8)
        self.assertIsNotNone(m2.in_proj_weight)
        with self.assertRaisesRegex(AssertionError, "kdim 5"):
            m(L.ones(3, 2, 8), L.ones(4, 2, 8), L.ones(4, 2, 3))

    def test_against_numpy(self):
        rng = np.random.default_rng(3)
        am_bool, am_float, kpm = self.masks(rng)
        for kw in MHA_CASES:
            for masks in ((None, None), (am_bool, kpm), (am_float, kpm), (am_float, kpm.astype(np.float64) * -2.0)):
                with self.subTest(**kw, masks=[None if x is None else x.dtype.name for x in masks]):
                    m = nn.MultiheadAttention(self.E, self.H, dtype=L.float64, **kw)
                    sd = {k: v.numpy() for k, v in m.state_dict().items()}
                    q, k, v = self.inputs(kw, rng)
                    args = dict(attn_mask=None if masks[0] is None else L.tensor(masks[0]),
                                key_padding_mask=None if masks[1] is None else L.tensor(masks[1]),
                                average_attn_weights=False)
                    out, w = m(L.tensor(q), L.tensor(k), L.tensor(v), **args)
                    want, wa = np_mha(sd, q, k, v, self.H, kw.get("add_zero_attn", False), masks[0], masks[1],
                                      kw.get("batch_first", False))
                    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)
                    np.testing.assert_allclose(w.detach().numpy(), wa, rtol=1e-10, atol=1e-12)
                    out2, w2 = m(L.tensor(q), L.tensor(k), L.tensor(v), need_weights=False)
                    self.assertIsNone(w2)

    def test_backward_reaches_new_params(self):
        m = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True)
        out, _ = m(L.randn(3, 2, 8), L.randn(4, 2, 5), L.randn(4, 2, 3))
        out.sum().backward()
        for name, p in m.named_parameters():
            self.assertIsNotNone(p.grad, name)


class TestLeaks(unittest.TestCase):
    """What LeakSanitizer cannot check under Python (tests/python/meson.build): hooks
    (kept, removed, raising), optimizer state in and out and the new attention options
    leave no libops memory behind once their Python objects go."""

    def workload(self):
        x = L.ones(3, requires_grad=True)
        big = L.ones(1000)  # held by hooks only: freed when they go
        x.register_hook(lambda g: g * 2 + big[:3] * 0)
        h = x.register_hook(lambda g: None)
        y = x * x
        y.register_hook(lambda g: g + 1 + big[:3] * 0)

        def bad(g):
            raise KeyError("boom")
        hb = y.register_hook(bad)
        try:
            y.sum().backward(retain_graph=True)
        except KeyError:
            pass
        hb.remove()
        y.sum().backward()
        h.remove()
        lin = nn.Linear(3, 2)
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))
        opt = L.optim.Adam(lin.parameters(), lr=0.1, amsgrad=True)
        lin(x.detach().requires_grad_()).sum().backward()
        opt.step()
        opt2 = L.optim.Adam(lin.parameters(), lr=0.1, amsgrad=True)
        opt2.load_state_dict(opt.state_dict())
        opt2.param_groups[0]["betas"] = (0.5, 0.6)
        opt2.step()
        m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True)
        m(L.ones(2, 1, 4), L.ones(3, 1, 3), L.ones(3, 1, 5))[0].sum().backward()

    def test_allocator_returns_to_baseline(self):
        self.workload()
        gc.collect()
        base = L._C._allocated_bytes()
        for _ in range(10):
            self.workload()
        gc.collect()
        self.assertEqual(L._C._allocated_bytes(), base)


# ---- against PyTorch -----------------------------------------------------------------

def to_torch(t):
    return torch.from_numpy(t.detach().numpy().copy())


def from_torch(t):
    return L.tensor(t.detach().numpy().copy())


@needs_torch
class TestAgainstTorch(unittest.TestCase):
    TORCH = {"SGD": "SGD", "Adam": "Adam", "AdamW": "AdamW"}

    def test_options_changed_mid_run(self):
        for cls, kw in OPTIMS:
            with self.subTest(cls=cls.__name__, **{k: str(v) for k, v in kw.items()}):
                a = make_params()
                t = [torch.nn.Parameter(to_torch(p)) for p in a]
                oa = cls(groups_of(a), **kw)
                ot = getattr(torch.optim, cls.__name__)(groups_of(t), **kw)
                sa = lr_scheduler.StepLR(oa, step_size=2, gamma=0.5)
                st = torch.optim.lr_scheduler.StepLR(ot, step_size=2, gamma=0.5)
                for k in range(6):
                    change_options(oa, k)
                    change_options(ot, k)
                    oa.zero_grad()
                    ot.zero_grad()
                    quad_grads(a, k)
                    quad_grads(t, k)
                    oa.step()
                    ot.step()
                    sa.step()
                    st.step()
                for p, q in zip(a, t):
                    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14)
                # torch's state dict, as ours
                sdl, sdt = oa.state_dict(), ot.state_dict()
                self.assertEqual(sorted(sdl["state"]), sorted(sdt["state"]))
                for i in sdt["state"]:
                    self.assertEqual(list(sdl["state"][i]), list(sdt["state"][i]))
                    for name, val in sdt["state"][i].items():
                        if val is None:
                            self.assertIsNone(sdl["state"][i][name])
                        else:
                            np.testing.assert_allclose(sdl["state"][i][name].numpy(), val.numpy(), rtol=1e-12)
                for gl, gt in zip(sdl["param_groups"], sdt["param_groups"]):
                    for key in gl:
                        self.assertEqual(gl[key], gt[key], key)

    def test_load_torch_state_dict(self):
        """A torch optimizer's state dict (tensors converted) resumes in libops as in torch."""
        for cls, kw in OPTIMS:
            with self.subTest(cls=cls.__name__, **{k: str(v) for k, v in kw.items()}):
                t = [torch.nn.Parameter(to_torch(p)) for p in make_params()]
                ot = getattr(torch.optim, cls.__name__)(groups_of(t), **kw)
                for k in range(3):
                    ot.zero_grad()
                    quad_grads(t, k)
                    ot.step()
                sd = ot.state_dict()
                conv = {"state": {i: {n: (from_torch(v) if torch.is_tensor(v) else v) for n, v in s.items()}
                                  for i, s in sd["state"].items()},
                        "param_groups": sd["param_groups"]}
                a = [nn.Parameter(from_torch(p)) for p in t]
                oa = cls(groups_of(a), **kw)
                oa.load_state_dict(conv)
                for k in range(3, 5):
                    for o, ps in ((ot, t), (oa, a)):
                        o.zero_grad()
                        quad_grads(ps, k)
                        o.step()
                for p, q in zip(a, t):
                    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14)

    def test_tensor_hooks(self):
        res = []
        for lib in (L, torch):
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = x * x
            seen = []
            y.register_hook(lambda g: seen.append(g.tolist()) or g * 3)
            h = x.register_hook(lambda g: seen.append(g.tolist()))
            x.register_hook(lambda g: g + 1)
            (y * 2).sum().backward()
            h.remove()
            (x * 1).sum().backward()
            res.append((seen, x.grad.tolist()))
        self.assertEqual(res[0], res[1])

    def test_module_backward_hooks(self):
        lin = nn.Linear(4, 3, dtype=L.float64)
        tlin = torch.nn.Linear(4, 3, dtype=torch.float64)
        with torch.no_grad():
            tlin.weight.copy_(to_torch(lin.weight))
            tlin.bias.copy_(to_torch(lin.bias))
        xn = np.random.default_rng(5).standard_normal((2, 4))
        out = []
        for mod, lib in ((lin, L), (tlin, torch)):
            x = lib.tensor(xn, requires_grad=True)
            seen = []
            mod.register_full_backward_hook(
                lambda m, gi, go: seen.append(([g.tolist() for g in gi], [g.tolist() for g in go])) or (gi[0] * 2,))
            y = mod(x)
            (y * y).sum().backward()
            out.append((seen, x.grad.numpy(), mod.weight.grad.numpy()))
        self.assertEqual(len(out[0][0]), len(out[1][0]))
        np.testing.assert_allclose(out[0][0][0][0], out[1][0][0][0], rtol=1e-12)
        np.testing.assert_allclose(out[0][0][0][1], out[1][0][0][1], rtol=1e-12)
        np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)
        np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-12)
        # two inputs, one not requiring grad, a keyword argument
        res = []
        for mod_cls, lib in ((Mul, L), (None, torch)):
            if mod_cls is None:
                class TMul(torch.nn.Module):
                    def forward(self, a, b, scale=1.0):
                        return a * b * scale
                mod = TMul()
            else:
                mod = mod_cls()
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            b = lib.tensor([3.0, 4.0])
            seen = []
            mod.register_full_backward_hook(
                lambda m, gi, go: seen.append(([None if g is None else g.tolist() for g in gi],
                                               [g.tolist() for g in go])))
            mod(a, b, scale=2.0).sum().backward()
            res.append((seen, a.grad.tolist()))
        self.assertEqual(res[0], res[1])

    def test_mha_options(self):
        rng = np.random.default_rng(7)
        tm = TestMultiheadAttention()
        am_bool, am_float, kpm = tm.masks(rng)
        E, H = tm.E, tm.H
        for kw in MHA_CASES:
            # (torch 1.13 drops a float key_padding_mask given with a float attn_mask, a bug
            # later versions fixed: libops adds both; that pair is left out here)
            for masks in ((None, None), (am_bool, kpm), (am_float, kpm), (None, kpm.astype(np.float64) * -2.0)):
                for avg in (True, False):
                    with self.subTest(**kw, masks=[None if x is None else x.dtype.name for x in masks], avg=avg):
                        tmha = torch.nn.MultiheadAttention(E, H, dtype=torch.float64, **kw)
                        m = nn.MultiheadAttention(E, H, dtype=L.float64, **kw)
                        m.load_state_dict({k: from_torch(v) for k, v in tmha.state_dict().items()})
                        q, k, v = tm.inputs(kw, rng)
                        kws = [dict(attn_mask=None if masks[0] is None else lib.tensor(masks[0]),
                                    key_padding_mask=None if masks[1] is None else lib.tensor(masks[1]),
                                    average_attn_weights=avg) for lib in (L, torch)]
                        qs = [L.tensor(q, requires_grad=True), L.tensor(k), L.tensor(v)]
                        ts = [torch.tensor(q, requires_grad=True), torch.tensor(k), torch.tensor(v)]
                        o, w = m(*qs, **kws[0])
                        to, tw = tmha(*ts, **kws[1])
                        np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
                        np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)
                        o.sum().backward()
                        to.sum().backward()
                        np.testing.assert_allclose(qs[0].grad.numpy(), ts[0].grad.numpy(), rtol=1e-9, atol=1e-12)
                        for (name, p), (tname, tp) in zip(m.named_parameters(), tmha.named_parameters()):
                            self.assertEqual(name, tname)
                            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12)


if __name__ == "__main__":
    unittest.main()

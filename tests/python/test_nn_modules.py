"""libops.nn (Module, Parameter, containers, layers, init) and libops.optim (SGD, Adam,
AdamW, StepLR, CosineAnnealingLR): torch-free checks against hand-derived values and
NumPy, then each layer, optimizer and scheduler against PyTorch 1.13 where installed."""
import math
import unittest
from collections import OrderedDict

import numpy as np

import libops as L
import libops.nn as nn
import libops.nn.functional as F
from libops.optim import lr_scheduler

try:
    import torch
except ImportError:  # CI has no PyTorch: those comparisons are skipped there
    torch = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.register_buffer("scale", L.ones(2))
        self.register_buffer("tmp", L.zeros(1), persistent=False)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x)))) * self.scale


class TestModule(unittest.TestCase):
    def test_registration_and_names(self):
        m = Net()
        self.assertEqual([k for k, _ in m.named_parameters()],
                         ["fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight"])
        self.assertEqual([k for k, _ in m.named_buffers()],
                         ["scale", "tmp", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"])
        self.assertEqual([k for k, _ in m.named_modules()], ["", "fc1", "bn", "fc2"])
        self.assertEqual([k for k, _ in m.named_children()], ["fc1", "bn", "fc2"])
        self.assertIsInstance(m.fc1.weight, nn.Parameter)
        self.assertIsInstance(m.fc1.weight, L.Tensor)
        self.assertTrue(m.fc1.weight.requires_grad and m.fc1.weight.is_leaf)
        self.assertIsNone(m.fc2.bias)
        self.assertIs(m.get_parameter("fc1.bias"), m.fc1.bias)
        # state_dict: parameters then persistent buffers, per module, detached
        sd = m.state_dict()
        self.assertEqual(list(sd), ["scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn.running_mean",
                                    "bn.running_var", "bn.num_batches_tracked", "fc2.weight"])
        self.assertFalse(sd["fc1.weight"].requires_grad)
        # reassigning: a plain tensor to a parameter slot is refused; None is taken
        with self.assertRaisesRegex(TypeError, "cannot assign 'Tensor' as parameter 'weight'"):
            m.fc1.weight = L.zeros(3, 4)
        m.fc1.bias = None
        self.assertEqual([k for k, _ in m.fc1.named_parameters()], ["weight"])
        del m.fc2
        self.assertEqual([k for k, _ in m.named_children()], ["fc1", "bn"])
        with self.assertRaises(AttributeError):
            m.fc2  # noqa: B018

    def test_shared_parameter_counted_once(self):
        a = nn.Linear(3, 3)
        s = nn.Sequential(a, nn.ReLU(), a)
        self.assertEqual(len(list(s.parameters())), 2)
        self.assertEqual(list(s.state_dict()), ["0.weight", "0.bias", "2.weight", "2.bias"])

    def test_load_state_dict_strict(self):
        m, src = Net(), Net()
        sd = src.state_dict()
        r = m.load_state_dict(sd)
        self.assertEqual((r.missing_keys, r.unexpected_keys), ([], []))
        self.assertEqual(str(r), "<All keys matched successfully>")
        np.testing.assert_array_equal(m.fc1.weight.detach().numpy(), src.fc1.weight.detach().numpy())
        # copied, not aliased
        self.assertNotEqual(m.fc1.weight.data_ptr(), src.fc1.weight.data_ptr())
        bad = OrderedDict(sd)
        del bad["fc1.bias"]
        del bad["scale"]
        bad["fc3.weight"] = L.zeros(1)
        bad["fc2.weight"] = L.zeros(5, 3)
        before = m.fc1.weight.detach().clone()
        with self.assertRaises(RuntimeError) as cm:
            m.load_state_dict(bad)
        self.assertEqual(str(cm.exception),
                         'Error(s) in loading state_dict for Net:\n\t'
                         'Missing key(s) in state_dict: "scale", "fc1.bias". \n\t'
                         'Unexpected key(s) in state_dict: "fc3.weight". \n\t'
                         'size mismatch for fc2.weight: copying a param with shape [5, 3] from checkpoint, '
                         'the shape in current model is [2, 3].')
        # non-strict: the matching keys are loaded, the rest reported; a shape mismatch is still an error
        del bad["fc2.weight"]
        r = m.load_state_dict(bad, strict=False)
        self.assertEqual(r.missing_keys, ["scale", "fc1.bias", "fc2.weight"])
        self.assertEqual(r.unexpected_keys, ["fc3.weight"])
        self.assertTrue(np.array_equal(m.fc1.weight.detach().numpy(), before.numpy()))
        with self.assertRaisesRegex(TypeError, "Expected state_dict to be dict-like"):
            m.load_state_dict([1, 2])

    def test_train_eval_requires_grad_zero_grad(self):
        m = Net()
        self.assertTrue(all(x.training for x in m.modules()))
        self.assertIs(m.eval(), m)
        self.assertFalse(any(x.training for x in m.modules()))
        m.train()
        self.assertTrue(m.bn.training)
        m.requires_grad_(False)
        self.assertFalse(any(p.requires_grad for p in m.parameters()))
        m.requires_grad_()
        out = m(L.randn(5, 4)).sum()
        out.backward()
        self.assertTrue(all(p.grad is not None for p in m.parameters()))
        m.zero_grad()
        self.assertTrue(all(p.grad.abs().sum().item() == 0 for p in m.parameters()))
        m.zero_grad(set_to_none=True)
        self.assertTrue(all(p.grad is None for p in m.parameters()))

    def test_to_dtype(self):
        m = Net()
        w = m.fc1.weight.detach().numpy().copy()
        self.assertIs(m.to(L.float64), m)
        self.assertEqual(m.fc1.weight.dtype, L.float64)
        self.assertIsInstance(m.fc1.weight, nn.Parameter)
        self.assertEqual(m.bn.running_mean.dtype, L.float64)
        self.assertEqual(m.bn.num_batches_tracked.dtype, L.int64)  # integer buffers keep their dtype
        self.assertIs(m.fc1._parameters["weight"], m.fc1.weight)
        np.testing.assert_array_equal(m.fc1.weight.detach().numpy(), w)
        self.assertEqual(m(L.randn(2, 4, dtype=L.float64)).dtype, L.float64)
        m.to("cpu", L.float32)
        self.assertEqual(m.fc2.weight.dtype, L.float32)
        with self.assertRaisesRegex(TypeError, "only accepts floating point dtypes"):
            m.to(L.int32)

    def test_hooks(self):
        m = nn.Linear(2, 2)
        calls = []
        h1 = m.register_forward_pre_hook(lambda mod, args: calls.append(("pre", mod)) or (args[0] * 0,))
        h2 = m.register_forward_hook(lambda mod, args, out: calls.append(("post", out.shape)) or out + 1)
        y = m(L.ones(3, 2))
        self.assertEqual(calls, [("pre", m), ("post", (3, 2))])
        np.testing.assert_allclose(y.detach().numpy(), (m.bias.detach().numpy() + 1)[None].repeat(3, 0))
        h1.remove()
        h2.remove()
        y = m(L.ones(3, 2))
        self.assertEqual(len(calls), 2)
        np.testing.assert_allclose(y.detach().numpy(), F.linear(L.ones(3, 2), m.weight, m.bias).detach().numpy())

    def test_containers(self):
        s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        self.assertEqual(len(s), 3)
        self.assertIsInstance(s[1], nn.ReLU)
        self.assertIsInstance(s[-1], nn.Linear)
        self.assertEqual(len(s[:2]), 2)
        od = nn.Sequential(OrderedDict([("a", nn.Tanh()), ("b", nn.Sigmoid())]))
        self.assertEqual([k for k, _ in od.named_children()], ["a", "b"])
        x = L.tensor([[0.5, -1.0]])
        np.testing.assert_allclose(od(x).numpy(), 1 / (1 + np.exp(-np.tanh([[0.5, -1.0]]))), rtol=1e-6)
        ml = nn.ModuleList([nn.Linear(1, 1)])
        ml.append(nn.ReLU())
        ml += [nn.Tanh()]
        self.assertEqual([k for k, _ in ml.named_children()], ["0", "1", "2"])
        del ml[0]
        self.assertEqual([type(x).__name__ for x in ml], ["ReLU", "Tanh"])
        self.assertEqual([k for k, _ in ml.named_children()], ["0", "1"])
        md = nn.ModuleDict({"x": nn.ReLU()})
        md["y"] = nn.Linear(1, 2)
        self.assertEqual(list(md.keys()), ["x", "y"])
        self.assertEqual(list(md.state_dict()), ["y.weight", "y.bias"])
        self.assertIn("y", md)

    def test_repr(self):
        s = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                          nn.Flatten(), nn.Linear(8, 2))
        self.assertEqual(repr(s), "Sequential(\n"
                         "  (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)\n"
                         "  (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
                         "  (2): ReLU(inplace=True)\n"
                         "  (3): Flatten(start_dim=1, end_dim=-1)\n"
                         "  (4): Linear(in_features=8, out_features=2, bias=True)\n"
                         ")")
        self.assertTrue(repr(nn.Parameter(L.zeros(1))).startswith("Parameter containing:\ntensor("))

    def test_deepcopy(self):
        import copy
        a = nn.Linear(2, 2)
        m = nn.Sequential(a, nn.BatchNorm1d(2), a)
        c = copy.deepcopy(m)
        self.assertIsInstance(c[0].weight, nn.Parameter)
        self.assertIs(c[0], c[2])  # sharing kept
        self.assertIs(c[0].weight, c._modules["0"]._parameters["weight"])
        self.assertNotEqual(c[0].weight.data_ptr(), a.weight.data_ptr())
        np.testing.assert_array_equal(c[0].weight.detach().numpy(), a.weight.detach().numpy())
        self.assertIsNot(c[1].running_mean, m[1].running_mean)
        self.assertEqual([k for k, _ in c.named_parameters()], [k for k, _ in m.named_parameters()])
        with L.no_grad():
            c[0].weight.fill_(0)
        self.assertNotEqual(float(a.weight.abs().sum().item()), 0.0)

    def test_parameter(self):
        t = L.zeros(3)
        p = nn.Parameter(t)
        self.assertTrue(p.requires_grad)
        self.assertEqual(p.data_ptr(), t.data_ptr())  # shares storage, as torch's
        self.assertFalse(nn.Parameter(t, requires_grad=False).requires_grad)
        y = p * 2
        self.assertIs(type(y), L.Tensor)  # ops give plain tensors
        with self.assertRaisesRegex(TypeError, "cannot assign 'int' object to parameter 'w'"):
            nn.Module().register_parameter("w", 3)
        m = nn.Linear(1, 1)
        m.extra = 5
        for reg in (lambda: m.register_buffer("extra", L.zeros(1)), lambda: m.register_parameter("extra", p),
                    lambda: m.add_module("weight", nn.ReLU()), lambda: m.register_buffer("forward", None)):
            with self.assertRaisesRegex(KeyError, "attribute '(extra|weight|forward)' already exists"):
                reg()
        m.extra = p  # assignment replaces a plain attribute, as torch's __setattr__
        self.assertIs(m._parameters["extra"], p)
        m.register_buffer("b", L.zeros(1))
        m.register_buffer("b", L.ones(1))  # re-registering the same kind is allowed
        self.assertEqual(m.b.tolist(), [1.0])


class TestLayers(unittest.TestCase):
    def test_linear_default_init_bounds(self):
        m = nn.Linear(100, 400)
        w = m.weight.detach().numpy()
        bound = 1 / math.sqrt(100)
        self.assertLessEqual(np.abs(w).max(), bound)
        self.assertAlmostEqual(float(w.std()), bound / math.sqrt(3), delta=0.05 * bound)
        self.assertLessEqual(np.abs(m.bias.detach().numpy()).max(), bound)

    def test_init_fan_rules(self):
        w = L.empty(64, 32, 3, 3)  # fan_in 288, fan_out 576
        nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
        self.assertAlmostEqual(float(w.numpy().std()), math.sqrt(2 / 576), delta=0.03 * math.sqrt(2 / 576))
        nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("tanh"))
        a = 5 / 3 * math.sqrt(6 / (288 + 576))
        self.assertLessEqual(float(np.abs(w.numpy()).max()), a)
        self.assertGreater(float(np.abs(w.numpy()).max()), 0.99 * a)
        nn.init.kaiming_uniform_(w)
        self.assertLessEqual(float(np.abs(w.numpy()).max()), math.sqrt(2) * math.sqrt(3 / 288))  # a=0: gain sqrt(2)
        nn.init.constant_(w, 0.25)
        self.assertEqual(float(w.numpy().max()), 0.25)
        nn.init.zeros_(w)
        nn.init.ones_(w)
        self.assertEqual(float(w.numpy().min()), 1.0)
        with self.assertRaisesRegex(ValueError, "fewer than 2 dimensions"):
            nn.init.xavier_uniform_(L.empty(3))
        self.assertAlmostEqual(nn.init.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / 1.04))
        g = L.Generator().manual_seed(3)
        a1 = nn.init.normal_(L.empty(5), generator=g).tolist()
        a2 = nn.init.normal_(L.empty(5), generator=g.manual_seed(3)).tolist()
        self.assertEqual(a1, a2)

    def test_batchnorm_running_stats(self):
        bn = nn.BatchNorm1d(2, momentum=0.5)
        x = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]], dtype=np.float32)
        y = bn(L.tensor(x))
        mean, var_b, var_u = x.mean(0), x.var(0), x.var(0, ddof=1)
        np.testing.assert_allclose(y.detach().numpy(), (x - mean) / np.sqrt(var_b + 1e-5), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * mean, rtol=1e-6)
        np.testing.assert_allclose(bn.running_var.numpy(), 0.5 + 0.5 * var_u, rtol=1e-6)
        self.assertEqual(bn.num_batches_tracked.item(), 1)
        bn.eval()
        y = bn(L.tensor(x))
        np.testing.assert_allclose(y.detach().numpy(), (x - 0.5 * mean) / np.sqrt(0.5 + 0.5 * var_u + 1e-5),
                                   rtol=1e-5)
        self.assertEqual(bn.num_batches_tracked.item(), 1)
        with self.assertRaisesRegex(ValueError, r"expected 4D input \(got 2D input\)"):
            nn.BatchNorm2d(2)(L.tensor(x))

    def test_dropout_modes(self):
        d = nn.Dropout(0.5)
        x = L.ones(1000)
        y = d(x).numpy()
        self.assertTrue(set(np.unique(y)) <= {0.0, 2.0})
        self.assertGreater((y == 0).sum(), 350)
        d.eval()
        self.assertIs(d(x), x)

    def test_mha_causal_is_causal_and_masks(self):
        L.manual_seed(0)
        m = nn.MultiheadAttention(8, 2, batch_first=True)
        x = L.randn(2, 5, 8)
        causal = L.ones(5, 5, dtype=L.bool).triu(1)
        with L.no_grad():
            a, w = m(x, x, x, attn_mask=causal)
            b, _ = m(x, x, x, is_causal=True)
            f, _ = m(x, x, x, attn_mask=L.zeros(5, 5).masked_fill(causal, float("-inf")))
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_allclose(a.numpy(), f.numpy(), rtol=1e-6, atol=1e-6)
        self.assertEqual(w.shape, (2, 5, 5))
        self.assertTrue(np.all(np.triu(w.numpy(), 1) == 0))
        np.testing.assert_allclose(w.numpy().sum(-1), 1, rtol=1e-5)
        kpm = L.tensor([[False, False, False, True, True], [False] * 5])
        with L.no_grad():
            _, w = m(x, x, x, key_padding_mask=kpm)
        self.assertTrue(np.all(w.numpy()[0, :, 3:] == 0))
        with self.assertRaisesRegex(RuntimeError, r"The shape of the 2D attn_mask is \(4, 4\), but should be"):
            m(x, x, x, attn_mask=L.zeros(4, 4))


class TestOptim(unittest.TestCase):
    def test_sgd_momentum_by_hand(self):
        p = nn.Parameter(L.tensor([1.0, -2.0]))
        opt = L.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.5)
        buf = None
        want = np.array([1.0, -2.0])
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            d = 2 * want + 0.5 * want
            buf = d if buf is None else 0.9 * buf + d
            want = want - 0.1 * buf
            opt.step()
        np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-6)

    def test_adamw_by_hand_and_lr_change(self):
        p = nn.Parameter(L.tensor([0.5, -1.5], dtype=L.float64))
        opt = L.optim.AdamW([p], lr=0.1, weight_decay=0.1)
        x, m, v = np.array([0.5, -1.5]), 0.0, 0.0
        for t, lr in ((1, 0.1), (2, 0.05), (3, 0.0)):
            opt.param_groups[0]["lr"] = lr
            opt.zero_grad()
            (p * p * p).sum().backward()
            g = 3 * x * x
            x = x * (1 - lr * 0.1)
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            x = x - lr / (1 - 0.9 ** t) * m / (np.sqrt(v) / math.sqrt(1 - 0.999 ** t) + 1e-8)
            opt.step()
            np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12)

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "optimizer got an empty parameter list"):
            L.optim.Adam([])
        with self.assertRaisesRegex(ValueError, "Invalid learning rate: -1"):
            L.optim.SGD([nn.Parameter(L.zeros(1))], lr=-1)
        with self.assertRaisesRegex(ValueError, "Invalid beta parameter at index 1: 1.0"):
            L.optim.Adam([nn.Parameter(L.zeros(1))], betas=(0.9, 1.0))
        with self.assertRaisesRegex(ValueError, "can't optimize a non-leaf Tensor"):
            L.optim.SGD([nn.Parameter(L.zeros(1)) * 2], lr=0.1)
        with self.assertRaisesRegex(ValueError, "Nesterov momentum requires a momentum and zero dampening"):
            L.optim.SGD([nn.Parameter(L.zeros(1))], lr=0.1, nesterov=True)
        with self.assertRaisesRegex(ValueError, "required optimization parameter lr"):
            L.optim.SGD([nn.Parameter(L.zeros(1))])
        with self.assertRaisesRegex(RuntimeError, "optimizer_set_lr: Invalid learning rate"):
            opt = L.optim.SGD([nn.Parameter(L.zeros(1))], lr=0.1)
            opt.param_groups[0]["lr"] = -0.5
            opt.step()

    def test_param_groups(self):
        a, b = nn.Parameter(L.ones(1)), nn.Parameter(L.ones(1))
        opt = L.optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.1)
        (a + b).sum().backward()
        opt.step()
        self.assertAlmostEqual(a.item(), 0.9, places=6)
        self.assertAlmostEqual(b.item(), 0.0, places=6)

    def test_schedulers_closed_form(self):
        opt = L.optim.SGD([nn.Parameter(L.zeros(1))], lr=1.0)
        s = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        lrs = []
        for _ in range(6):
            lrs.append(s.get_last_lr()[0])
            s.step()
        self.assertEqual(lrs, [1.0, 1.0, 0.5, 0.5, 0.25, 0.25])
        opt = L.optim.SGD([nn.Parameter(L.zeros(1))], lr=1.0)
        c = lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.1)
        for t in range(9):
            want = 0.1 + 0.9 * (1 + math.cos(math.pi * t / 4)) / 2
            self.assertAlmostEqual(c.get_last_lr()[0], want, places=12)
            c.step()


@needs_torch
class TestAgainstTorch(unittest.TestCase):
    def same(self, tm, lm):
        sd = {k: L.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
        lm.load_state_dict(sd)

    def check(self, got, want, tol=1e-5):
        want = want.detach().numpy()
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))

    def run_both(self, tm, lm, *xs, grad=True, tol=1e-5, tcall=None, lcall=None):
        """tm and lm on the same weights and inputs (through tcall/lcall when given):
        outputs, gradients of parameters and inputs, buffers."""
        self.same(tm, lm)
        txs = [torch.tensor(x, requires_grad=grad and x.dtype.kind == "f") for x in xs]
        lxs = [L.tensor(x, requires_grad=grad and x.dtype.kind == "f") for x in xs]
        ty, ly = (tcall or tm)(*txs), (lcall or lm)(*lxs)
        if isinstance(ty, tuple):
            ty, ly = ty[0], ly[0]
        self.check(ly, ty, tol)
        if grad:
            g = np.random.default_rng(5).normal(size=tuple(ty.shape)).astype(np.float32)
            ty.backward(torch.tensor(g))
            ly.backward(L.tensor(g))
            for (k, tp), (_, lp) in zip(tm.named_parameters(), lm.named_parameters()):
                self.check(lp.grad, tp.grad, 10 * tol)
            for tx, lx in zip(txs, lxs):
                if tx.grad is not None:
                    self.check(lx.grad, tx.grad, 10 * tol)
        for (k, tb), (lk, lb) in zip(tm.named_buffers(), lm.named_buffers()):
            self.assertEqual(k, lk)
            self.check(lb, tb)

    def rnd(self, *shape, seed=0):
        return np.random.default_rng(seed).normal(size=shape).astype(np.float32)

    def test_layers(self):
        T = torch.nn
        cases = [
            (T.Linear(5, 3), nn.Linear(5, 3), (4, 5)),
            (T.Conv1d(3, 4, 3, stride=2, padding=1), nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
            (T.Conv2d(4, 6, 3, padding=1, groups=2, dilation=2), nn.Conv2d(4, 6, 3, padding=1, groups=2, dilation=2),
             (2, 4, 8, 8)),
            (T.Conv2d(3, 4, (3, 2), padding="same", bias=False), nn.Conv2d(3, 4, (3, 2), padding="same", bias=False),
             (2, 3, 6, 7)),
            (T.Conv1d(2, 4, 3, padding="valid"), nn.Conv1d(2, 4, 3, padding="valid"), (2, 2, 9)),
            (T.ConvTranspose2d(4, 6, 2, stride=2, groups=2), nn.ConvTranspose2d(4, 6, 2, stride=2, groups=2),
             (2, 4, 3, 3)),
            (T.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
             nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), (2, 4, 5, 5)),
            (T.BatchNorm1d(3), nn.BatchNorm1d(3), (6, 3, 4)),
            (T.BatchNorm2d(3, momentum=None), nn.BatchNorm2d(3, momentum=None), (4, 3, 5, 5)),
            (T.LayerNorm([4, 5]), nn.LayerNorm([4, 5]), (3, 4, 5)),
            (T.GroupNorm(2, 6), nn.GroupNorm(2, 6), (2, 6, 3, 3)),
            (T.GELU(), nn.GELU(), (3, 7)),
            (T.GELU("tanh"), nn.GELU("tanh"), (3, 7)),
            (T.SiLU(), nn.SiLU(), (3, 7)),
            (T.LeakyReLU(0.2), nn.LeakyReLU(0.2), (3, 7)),
            (T.Softmax(1), nn.Softmax(1), (3, 7)),
            (T.Tanh(), nn.Tanh(), (3, 7)),
            (T.MaxPool2d(3, 2, 1), nn.MaxPool2d(3, 2, 1), (2, 3, 9, 9)),
            (T.AvgPool2d(2), nn.AvgPool2d(2), (2, 3, 8, 8)),
            (T.AdaptiveAvgPool2d((2, 3)), nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 7, 8)),
            (T.Flatten(), nn.Flatten(), (2, 3, 4)),
        ]
        for tm, lm, shape in cases:
            with self.subTest(layer=repr(tm)):
                self.assertEqual(repr(lm), repr(tm))
                self.assertEqual(list(lm.state_dict()), list(tm.state_dict()))
                for (k, tp), (lk, lp) in zip(tm.state_dict().items(), lm.state_dict().items()):
                    self.assertEqual((k, tuple(tp.shape)), (lk, lp.shape))
                self.run_both(tm, lm, self.rnd(*shape))
                tm.eval()
                lm.eval()
                self.run_both(tm, lm, self.rnd(*shape, seed=1))

    def test_embedding(self):
        tm, lm = torch.nn.Embedding(10, 4, padding_idx=2), nn.Embedding(10, 4, padding_idx=2)
        self.assertEqual(repr(lm), repr(tm))
        self.assertEqual(lm.weight.detach().numpy()[2].tolist(), [0.0] * 4)
        self.run_both(tm, lm, np.array([[1, 2, 3], [2, 9, 1]]))

    def test_mha(self):
        for batch_first in (False, True):
            for bias in (True, False):
                tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, bias=bias)
                lm = nn.MultiheadAttention(8, 2, batch_first=batch_first, bias=bias)
                self.assertEqual(list(lm.state_dict()), list(tm.state_dict()))
                q, k = self.rnd(3, 4, 8), self.rnd(3, 6, 8, seed=1)
                if not batch_first:
                    q, k = q.transpose(1, 0, 2).copy(), k.transpose(1, 0, 2).copy()
                causal = np.triu(np.ones((4, 4), bool), 1)
                kpm = np.zeros((3, 6), bool)
                kpm[0, 4:] = True
                with self.subTest(batch_first=batch_first, bias=bias):
                    # self-attention with a causal bool mask, weights averaged and not
                    self.run_both(tm, lm, q, tcall=lambda x: tm(x, x, x, attn_mask=torch.tensor(causal)),
                                  lcall=lambda x: lm(x, x, x, attn_mask=L.tensor(causal)))
                    self.same(tm, lm)
                    tw = tm(torch.tensor(q), torch.tensor(q), torch.tensor(q), average_attn_weights=False)[1]
                    lw = lm(L.tensor(q), L.tensor(q), L.tensor(q), average_attn_weights=False)[1]
                    self.check(lw, tw)
                    # cross-attention with a key padding mask and a float mask
                    fm = self.rnd(4, 6, seed=3)
                    self.run_both(tm, lm, q, k,
                                  tcall=lambda x, y: tm(x, y, y, key_padding_mask=torch.tensor(kpm),
                                                        attn_mask=torch.tensor(fm)),
                                  lcall=lambda x, y: lm(x, y, y, key_padding_mask=L.tensor(kpm),
                                                        attn_mask=L.tensor(fm)))

    def test_transformer_encoder_layer(self):
        for norm_first in (False, True):
            for act in ("relu", "gelu"):
                with self.subTest(norm_first=norm_first, activation=act):
                    tm = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=act, batch_first=True,
                                                          norm_first=norm_first)
                    lm = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=act, batch_first=True,
                                                    norm_first=norm_first)
                    self.assertEqual(list(lm.state_dict()), list(tm.state_dict()))
                    kpm = np.zeros((2, 5), bool)
                    kpm[1, 3:] = True
                    self.run_both(tm, lm, self.rnd(2, 5, 16),
                                  tcall=lambda x: tm(x, src_key_padding_mask=torch.tensor(kpm)),
                                  lcall=lambda x: lm(x, src_key_padding_mask=L.tensor(kpm)))
                    tm.eval()
                    lm.eval()
                    with torch.no_grad():  # torch's fast path in eval
                        want = tm(torch.tensor(self.rnd(2, 5, 16)))
                    with L.no_grad():
                        got = lm(L.tensor(self.rnd(2, 5, 16)))
                    self.check(got, want)

    def test_transformer_encoder(self):
        tl = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=True)
        ll = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=True)
        tm = torch.nn.TransformerEncoder(tl, 3, norm=torch.nn.LayerNorm(16))
        lm = nn.TransformerEncoder(ll, 3, norm=nn.LayerNorm(16))
        self.assertEqual(list(lm.state_dict()), list(tm.state_dict()))
        self.assertIsNot(lm.layers[0].linear1.weight, lm.layers[1].linear1.weight)  # copies, not shared
        self.assertEqual(len(list(lm.parameters())), len(list(tm.parameters())))
        causal = np.triu(np.ones((5, 5), bool), 1)
        self.run_both(tm, lm, self.rnd(2, 5, 16), tcall=lambda x: tm(x, mask=torch.tensor(causal)),
                      lcall=lambda x: lm(x, mask=L.tensor(causal)))

    def test_optimizers(self):
        configs = [
            (torch.optim.SGD, L.optim.SGD, dict(lr=0.1)),
            (torch.optim.SGD, L.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
            (torch.optim.SGD, L.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
            (torch.optim.Adam, L.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
            (torch.optim.Adam, L.optim.Adam, dict(lr=0.01, amsgrad=True, betas=(0.8, 0.99))),
            (torch.optim.AdamW, L.optim.AdamW, dict(lr=0.01)),
            (torch.optim.AdamW, L.optim.AdamW, dict(lr=0.01, weight_decay=0.0)),
        ]
        for tcls, lcls, kw in configs:
            with self.subTest(opt=tcls.__name__, **{k: str(v) for k, v in kw.items()}):
                w0 = self.rnd(3, 4)
                tp, lp = torch.nn.Parameter(torch.tensor(w0)), nn.Parameter(L.tensor(w0))
                topt, lopt = tcls([tp], **kw), lcls([lp], **kw)
                ts = torch.optim.lr_scheduler.StepLR(topt, 2, 0.5)
                ls = lr_scheduler.StepLR(lopt, 2, 0.5)
                for i in range(5):
                    topt.zero_grad()
                    lopt.zero_grad()
                    (tp ** 3).sum().backward()
                    (lp ** 3).sum().backward()
                    topt.step()
                    lopt.step()
                    ts.step()
                    ls.step()
                    self.check(lp, tp, 1e-5)
                    self.assertEqual(ls.get_last_lr(), ts.get_last_lr())

    def test_clip_grad(self):
        for norm_type in (2.0, 1.0, float("inf")):
            for max_norm in (0.5, 100.0):
                g = [self.rnd(3, 4), self.rnd(5, seed=1)]
                tps = [torch.nn.Parameter(torch.zeros(x.shape)) for x in g]
                lps = [nn.Parameter(L.zeros(*x.shape)) for x in g]
                for tp, lp, x in zip(tps, lps, g):
                    tp.grad = torch.tensor(x)
                    (lp * L.tensor(x)).sum().backward()
                tn = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type)
                ln = nn.utils.clip_grad_norm_(lps, max_norm, norm_type)
                self.assertAlmostEqual(ln.item(), tn.item(), places=4)
                for tp, lp in zip(tps, lps):
                    self.check(lp.grad, tp.grad)
        tp, lp = torch.nn.Parameter(torch.zeros(4)), nn.Parameter(L.zeros(4))
        tp.grad = torch.tensor([-3.0, 0.5, 2.0, 0.0])
        (lp * L.tensor([-3.0, 0.5, 2.0, 0.0])).sum().backward()
        torch.nn.utils.clip_grad_value_([tp], 1.0)
        nn.utils.clip_grad_value_(lp, 1.0)
        self.check(lp.grad, tp.grad)
        lp.grad.fill_(float("nan"))
        with self.assertRaisesRegex(RuntimeError, "is non-finite, so it cannot be clipped"):
            nn.utils.clip_grad_norm_([lp], 1.0, error_if_nonfinite=True)

    def test_cosine_scheduler(self):
        for eta_min in (0.0, 0.01):
            tp = torch.nn.Parameter(torch.zeros(1))
            topt = torch.optim.SGD([tp], lr=0.5)
            lopt = L.optim.SGD([nn.Parameter(L.zeros(1))], lr=0.5)
            ts = torch.optim.lr_scheduler.CosineAnnealingLR(topt, T_max=5, eta_min=eta_min)
            ls = lr_scheduler.CosineAnnealingLR(lopt, T_max=5, eta_min=eta_min)
            for _ in range(13):
                self.assertEqual(ls.get_last_lr(), ts.get_last_lr())
                topt.step()
                lopt.step()
                ts.step()
                ls.step()


if __name__ == "__main__":
    unittest.main()

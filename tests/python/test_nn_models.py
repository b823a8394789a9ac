"""Whole networks against PyTorch (issue 18): torchvision's ResNet-18 and a GPT-2-style
decoder, with the same weights (exported from torch to safetensors by libops' writer,
loaded with libops.load_safetensors + load_state_dict), give the same logits, and one
training step (loss, the gradient of every parameter, an AdamW update) matches.

Skipped where python3-torch (or, for ResNet-18, python3-torchvision) is not installed:
CI has neither.  The decoder is one source (make_gpt) instantiated over torch.nn and
over libops.nn, so it also checks that a torch model's code runs unchanged."""
import os
import tempfile
import unittest

import numpy as np

import libops as L
import libops.nn as lnn
import libops.nn.functional as LF

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # CI has no PyTorch
    torch = None
try:
    import torchvision
except ImportError:
    torchvision = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")
needs_torchvision = unittest.skipIf(torch is None or torchvision is None, "python3-torchvision is not installed")


def to_libops(t):
    return L.from_numpy(t.detach().cpu().numpy().copy())  # (np.ascontiguousarray makes 0-d arrays 1-d)


def export_torch(model, path):
    """torch state_dict -> safetensors with libops' writer (what examples/ do with a few lines)."""
    L.save_safetensors({k: to_libops(v) for k, v in model.state_dict().items()}, path)


def close(testcase, got, want, rtol=1e-4, atol_scale=2e-5, what="", atol_floor=0.0):
    want = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    got = got.numpy() if isinstance(got, L.Tensor) else np.asarray(got)
    testcase.assertEqual(got.shape, want.shape, what)
    atol = max(atol_scale * float(np.abs(want).max()), atol_floor)
    if os.environ.get("NN_MODELS_DEBUG"):
        err = float(np.max(np.abs(got - want) / (atol + rtol * np.abs(want)))) if want.size else 0.0
        print(f"{what}: {err:.3f} of the tolerance")
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


from nn_models import ResNet18, make_gpt  # noqa: E402  (this directory)


class ModelCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "model.safetensors")

    def tearDown(self):
        self.tmp.cleanup()

    def transfer(self, tmodel, lmodel):
        export_torch(tmodel, self.path)
        sd = L.load_safetensors(self.path)
        self.assertEqual(sorted(sd), sorted(lmodel.state_dict()))
        r = lmodel.load_state_dict(sd)
        self.assertEqual((r.missing_keys, r.unexpected_keys), ([], []))

    def check_grads_and_step(self, tmodel, lmodel, tloss, lloss, topt, lopt):
        close(self, lloss.detach(), tloss, what="loss")
        tnamed, lnamed = dict(tmodel.named_parameters()), dict(lmodel.named_parameters())
        self.assertEqual(list(tnamed), list(lnamed))
        for k, tp in tnamed.items():
            self.assertIsNotNone(lnamed[k].grad, k)
            # a floor for gradients that are 0 in exact arithmetic (the key bias of
            # attention: softmax ignores a shift) and rounding noise in float32
            close(self, lnamed[k].grad, tp.grad, rtol=2e-4, atol_scale=2e-4, atol_floor=1e-6, what="grad " + k)
        # Adam's first step is lr * g / (|g| + eps): a sign for all but the tiniest g, so
        # noise-level gradients would flip it.  Both optimizers step from libops'
        # gradients: the update rule is compared exactly, the gradients above.
        with torch.no_grad():
            for k, tp in tnamed.items():
                tp.grad.copy_(torch.from_numpy(lnamed[k].grad.numpy()))
        topt.step()
        lopt.step()
        for k, tp in tnamed.items():
            close(self, lnamed[k].detach(), tp, rtol=1e-5, atol_scale=1e-5, what="after AdamW " + k)


@needs_torch
class TestGPT(ModelCase):
    def build(self):
        torch.manual_seed(0)
        tm = make_gpt(torch.nn, torch)
        lm = make_gpt(lnn, L)
        self.transfer(tm, lm)
        self.assertIs(lm.lm_head.weight, lm.wte.weight)
        idx = np.random.default_rng(0).integers(0, 97, size=(3, 32))
        return tm, lm, torch.tensor(idx), L.tensor(idx)

    def test_logits(self):
        tm, lm, tidx, lidx = self.build()
        tm.eval()
        lm.eval()
        with torch.no_grad():
            want = tm(tidx)
        with L.no_grad():
            got = lm(lidx)
        close(self, got, want, what="logits")
        # causality: changing the last token leaves the earlier positions' logits alone
        lidx2 = L.tensor(np.concatenate([lidx.numpy()[:, :-1], (lidx.numpy()[:, -1:] + 1) % 97], 1))
        with L.no_grad():
            got2 = lm(lidx2)
        np.testing.assert_array_equal(got2.numpy()[:, :-1], got.numpy()[:, :-1])
        self.assertFalse(np.array_equal(got2.numpy()[:, -1], got.numpy()[:, -1]))

    def test_training_step(self):
        tm, lm, tidx, lidx = self.build()
        topt = torch.optim.AdamW(tm.parameters(), lr=1e-2, weight_decay=0.1)
        lopt = L.optim.AdamW(lm.parameters(), lr=1e-2, weight_decay=0.1)
        targets = np.random.default_rng(1).integers(0, 97, size=(3, 32))
        tloss = TF.cross_entropy(tm(tidx).view(-1, 97), torch.tensor(targets).view(-1))
        lloss = LF.cross_entropy(lm(lidx).view(-1, 97), L.tensor(targets).view(-1))
        tloss.backward()
        lloss.backward()
        self.check_grads_and_step(tm, lm, tloss, lloss, topt, lopt)


@needs_torchvision
class TestResNet18(ModelCase):
    def build(self):
        torch.manual_seed(0)
        tm = torchvision.models.resnet18()
        with torch.no_grad():  # running stats and affine params away from their 0/1 init
            for m in tm.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)
        lm = ResNet18()
        self.transfer(tm, lm)
        x = np.random.default_rng(0).normal(size=(2, 3, 64, 64)).astype(np.float32)
        return tm, lm, torch.tensor(x), L.tensor(x)

    def test_logits_eval(self):
        tm, lm, tx, lx = self.build()
        tm.eval()
        lm.eval()
        with torch.no_grad():
            want = tm(tx)
        with L.no_grad():
            got = lm(lx)
        close(self, got, want, what="logits")

    def test_training_step(self):
        tm, lm, tx, lx = self.build()
        tm.train()
        lm.train()
        topt = torch.optim.AdamW(tm.parameters(), lr=1e-3)
        lopt = L.optim.AdamW(lm.parameters(), lr=1e-3)
        target = [3, 917]
        tloss = TF.cross_entropy(tm(tx), torch.tensor(target))
        lloss = LF.cross_entropy(lm(lx), L.tensor(target))
        tloss.backward()
        lloss.backward()
        # train mode: batch statistics were used and the running stats moved as torch's did
        tb = dict(tm.named_buffers())
        for k, b in lm.named_buffers():
            close(self, b, tb[k], rtol=1e-4, atol_scale=1e-4, what="buffer " + k)
        self.check_grads_and_step(tm, lm, tloss, lloss, topt, lopt)


if __name__ == "__main__":
    unittest.main()

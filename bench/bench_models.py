#!/usr/bin/env python3
"""libops.nn against torch.nn 1.13 in one process (issue 18): Python module overhead
(a 20-layer MLP of width 64, batch 1..32, inference), ResNet-18 inference (batch 8 at
224², eval, no_grad) and a GPT-2-style decoder's forward (8 × 256 tokens), one thread
(--threads 2 for two), interleaved rounds, median; ratio = libops time / torch time.
With --profile, the time per op of one ResNet-18 and one decoder forward, libops
(wrapping the ops libops.nn calls) beside torch's autograd profiler.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_models.py [--only mlp,resnet,gpt,convs] [--profile]

--only convs: every distinct convolution of ResNet-18 alone (batch 8), libops against
torch (OPS_CONV_DNNL=0 in the environment: libops' im2col path instead of oneDNN).

The models are tests/python/nn_models.py's (the whole-network tests use them too)."""

import argparse
import collections
import os
import statistics
import sys
import time

import numpy as np

import libops as L
import libops.nn as lnn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from nn_models import ResNet18, make_gpt  # noqa: E402

try:
    import torch
except ImportError:
    torch = None
try:
    import torchvision
except ImportError:
    torchvision = None


def transfer(tm, lm):
    lm.load_state_dict({k: L.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def timed(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def compare(name, lfn, tfn, reps, rounds):
    lfn(), tfn()  # warm up
    lt, tt = [], []
    for _ in range(rounds):
        lt.append(timed(lfn, reps))
        tt.append(timed(tfn, reps))
    lm, tm = statistics.median(lt), statistics.median(tt)
    print(f"{name:<34} libops {lm * 1e3:10.3f} ms   torch {tm * 1e3:10.3f} ms   ratio {lm / tm:5.2f}", flush=True)
    return lm, tm


def mlp(nn, width=64, depth=20):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers)


def bench_mlp(rounds):
    tm, lm = mlp(torch.nn), mlp(lnn)
    transfer(tm, lm)
    for batch in (1, 2, 4, 8, 16, 32):
        x = np.random.default_rng(0).normal(size=(batch, 64)).astype(np.float32)
        tx, lx = torch.tensor(x), L.tensor(x)
        with torch.no_grad(), L.no_grad():
            compare(f"mlp20x64 fwd no_grad batch {batch}", lambda: lm(lx), lambda: tm(tx), 200, rounds)
    x = np.random.default_rng(0).normal(size=(8, 64)).astype(np.float32)
    tx, lx = torch.tensor(x), L.tensor(x)
    compare("mlp20x64 fwd (grad mode) batch 8", lambda: lm(lx), lambda: tm(tx), 200, rounds)


def resnet_pair():
    torch.manual_seed(0)
    tm = torchvision.models.resnet18().eval()
    lm = ResNet18().eval()
    transfer(tm, lm)
    x = np.random.default_rng(0).normal(size=(8, 3, 224, 224)).astype(np.float32)
    return tm, lm, torch.tensor(x), L.tensor(x)


def gpt_pair():
    torch.manual_seed(0)
    cfg = dict(vocab=1024, ctx=256, d=256, heads=8, layers=4)
    tm, lm = make_gpt(torch.nn, torch, **cfg).eval(), make_gpt(lnn, L, **cfg).eval()
    transfer(tm, lm)
    idx = np.random.default_rng(0).integers(0, 1024, size=(8, 256))
    return tm, lm, torch.tensor(idx), L.tensor(idx)


# ResNet-18's distinct convolutions: (name, count in the network, cin, hw, cout, k, stride, pad)
RESNET18_CONVS = [
    ("stem 7x7 s2 3->64 @224", 1, 3, 224, 64, 7, 2, 3),
    ("3x3 64->64 @56", 4, 64, 56, 64, 3, 1, 1),
    ("3x3 s2 64->128 @56", 1, 64, 56, 128, 3, 2, 1),
    ("1x1 s2 64->128 @56", 1, 64, 56, 128, 1, 2, 0),
    ("3x3 128->128 @28", 3, 128, 28, 128, 3, 1, 1),
    ("3x3 s2 128->256 @28", 1, 128, 28, 256, 3, 2, 1),
    ("1x1 s2 128->256 @28", 1, 128, 28, 256, 1, 2, 0),
    ("3x3 256->256 @14", 3, 256, 14, 256, 3, 1, 1),
    ("3x3 s2 256->512 @14", 1, 256, 14, 512, 3, 2, 1),
    ("1x1 s2 256->512 @14", 1, 256, 14, 512, 1, 2, 0),
    ("3x3 512->512 @7", 3, 512, 7, 512, 3, 1, 1),
]


def bench_convs(rounds, batch=8):
    """Every distinct convolution of ResNet-18 (no bias, as torchvision's), libops
    against torch, and their sum weighted by how often each occurs."""
    from libops import _C
    rng = np.random.default_rng(0)
    lsum = tsum = 0.0
    for name, count, cin, hw, cout, k, s, p in RESNET18_CONVS:
        x = rng.normal(size=(batch, cin, hw, hw)).astype(np.float32)
        w = (rng.normal(size=(cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32)
        lx, lw, tx, tw = L.tensor(x), L.tensor(w), torch.tensor(x), torch.tensor(w)
        r = compare(f"conv {name} x{count}", lambda: _C.conv2d(lx, lw, None, [s, s], [p, p], [1, 1], 1),
                    lambda: torch.nn.functional.conv2d(tx, tw, None, s, p), 3, rounds)
        lt, tt = r
        lsum += count * lt
        tsum += count * tt
    print(f"{'conv sum over ResNet-18 (x count)':<34} libops {lsum * 1e3:10.3f} ms   torch {tsum * 1e3:10.3f} ms   "
          f"ratio {lsum / tsum:5.2f}", flush=True)


def bench_model(name, pair, rounds):
    tm, lm, tx, lx = pair()
    with torch.no_grad(), L.no_grad():
        compare(name, lambda: lm(lx), lambda: tm(tx), 1, rounds)


class OpProfile:
    """Times every call of the ops libops.nn's layers make (libops._C functions and the
    names layers.py bound at import), by op name; Tensor methods and operators (x.relu_(),
    a + b, reshape) are not wrapped (a C type's methods cannot be), their time is the rest."""

    def __init__(self):
        from libops import _C
        from libops.nn import layers
        self.times = collections.defaultdict(float)
        self.counts = collections.Counter()
        self.saved = []
        for mod, names in ((_C, [n for n in dir(_C) if not n.startswith("__") and callable(getattr(_C, n))
                                 and not isinstance(getattr(_C, n), type)]),
                           (layers, ["_linear", "_conv1d", "_conv2d"])):
            for n in names:
                f = getattr(mod, n)
                self.saved.append((mod, n, f))
                setattr(mod, n, self._wrap(n.lstrip("_") if mod is layers else n, f))

    def _wrap(self, name, f):
        def w(*a, **k):
            t0 = time.perf_counter()
            r = f(*a, **k)
            self.times[name] += time.perf_counter() - t0
            self.counts[name] += 1
            return r
        return w

    def close(self):
        for mod, n, f in self.saved:
            setattr(mod, n, f)


def profile(name, pair):
    tm, lm, tx, lx = pair()
    with torch.no_grad(), L.no_grad():
        lm(lx), tm(tx)
        t0 = time.perf_counter()
        p = OpProfile()
        try:
            lm(lx)
        finally:
            p.close()
        total = time.perf_counter() - t0
        with torch.autograd.profiler.profile() as prof:
            tm(tx)
    print(f"\n{name}: libops forward {total * 1e3:.1f} ms (profiled), per op:")
    for op, t in sorted(p.times.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {op:<28} {t * 1e3:9.2f} ms  {100 * t / total:5.1f}%  x{p.counts[op]}")
    rest = total - sum(p.times.values())
    print(f"  {'(Tensor methods/operators)':<28} {rest * 1e3:9.2f} ms  {100 * rest / total:5.1f}%  "
          "relu_, +, reshape copies, Python")
    print(f"{name}: torch, per op (self CPU time):")
    print("\n".join(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10).splitlines()[:14]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="mlp,resnet,gpt")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    if torch is None:
        sys.exit("bench_models: needs torch (python3-torch) as the reference")
    L.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    only = set(args.only.split(","))
    print(f"threads {args.threads}, libops cpu capability {L.cpu_capability() if hasattr(L, 'cpu_capability') else '?'}"
          f", torch {torch.__version__}")
    if "mlp" in only:
        bench_mlp(args.rounds)
    if "convs" in only:
        bench_convs(args.rounds)
    if "resnet" in only:
        if torchvision is None:
            print("resnet18: skipped (no torchvision)")
        else:
            bench_model("resnet18 eval 8x3x224x224", resnet_pair, args.rounds)
            if args.profile:
                profile("resnet18", resnet_pair)
    if "gpt" in only:
        bench_model("decoder fwd 8x256 (d256 h8 L4)", gpt_pair, args.rounds)
        if args.profile:
            profile("decoder", gpt_pair)


if __name__ == "__main__":
    main()

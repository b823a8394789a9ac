"""The baseline of bench_autograd.c, measured in the same `make bench` run: PyTorch's
autograd overhead per node (a chain of 1000 one-element float32 muls with and without
grad) and its MLP 784-256-256-10 training step (nn.Linear, relu, F.cross_entropy,
optim.SGD with momentum 0.9, zero_grad(set_to_none=True)), batch 64, best of 55 after
5 warm-up steps -- the same computation bench_autograd times.  Prints one line per
figure, or a note when PyTorch (Debian's python3-torch) is not installed."""
import os
import sys
import time

try:
    import torch
except ImportError:
    print("bench_autograd_torch: PyTorch is not installed (python3-torch): no baseline")
    sys.exit(0)

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
CHAIN, REPS = 1000, 15


def chain(x, w, grad):
    t0 = time.perf_counter()
    with torch.set_grad_enabled(grad):
        y = x
        for _ in range(CHAIN):
            y = y * w
        if grad:
            y.backward()
    return time.perf_counter() - t0


x = torch.ones(1, requires_grad=True)
w = torch.full((1,), 1.0001)
best_g = best_p = 1e30
for _ in range(REPS):
    best_g = min(best_g, chain(x, w, True))
    best_p = min(best_p, chain(x, w, False))
    x.grad = None
print("torch %s autograd per node (1-element mul, forward record + backward): %.2f us "
      "(chain of %d: %.1f us with grad, %.1f us under no_grad)"
      % (torch.__version__, 1e6 * (best_g - best_p) / CHAIN, CHAIN, 1e6 * best_g, 1e6 * best_p))

torch.manual_seed(7)
layers = [torch.nn.Linear(784, 256), torch.nn.Linear(256, 256), torch.nn.Linear(256, 10)]
params = [p for m in layers for p in m.parameters()]
opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
xb = torch.rand(64, 784)
yb = torch.randint(0, 10, (64,))
best = 1e30
for r in range(REPS + 45):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    h = torch.relu(layers[0](xb))
    h = torch.relu(layers[1](h))
    loss = torch.nn.functional.cross_entropy(layers[2](h), yb)
    loss.backward()
    opt.step()
    if r >= 5:
        best = min(best, time.perf_counter() - t0)
print("torch %s MLP 784-256-256-10 training step, batch 64 (%d threads, OPENBLAS_CORETYPE=%s): %.0f us"
      % (torch.__version__, torch.get_num_threads(), os.environ.get("OPENBLAS_CORETYPE", "(unset)"), 1e6 * best))

#!/usr/bin/env python3
"""linear with and without a bias, libops against PyTorch, on the CPU (docs/backends.md,
"The mm family": why the bias should cost next to nothing).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_linear.py [--rounds 9] [--threads 1]

One process, both libraries on the same thread count; for each shape the rows are timed in
interleaved rounds (libops with bias, without, torch with bias, without, then again ...)
and the median of the rounds is reported.  `bias cost` = time with bias - time without."""

import argparse
import statistics
import time

import numpy as np

import libops
import torch
import torch.nn.functional as TF

SHAPES = [((32, 64), (64, 64)), ((2048, 256), (256, 256)), ((8 * 256, 768), (768, 3072))]


def per_call(fn, budget=0.05):
    """Seconds per call of fn, repeated until the round lasts about `budget` seconds."""
    fn()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        dt = time.perf_counter() - t0
        if dt >= budget or reps >= 1 << 20:
            return dt / reps
        reps = max(reps * 2, int(reps * budget / max(dt, 1e-9)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    libops.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"threads={args.threads} rounds={args.rounds}  times in us, median of rounds")
    print(f"{'input x weight^T':>24} {'libops+b':>10} {'libops':>10} {'bias cost':>10} "
          f"{'torch+b':>10} {'torch':>10} {'ratio+b':>8}")
    for (m, k), (_, n) in SHAPES:
        x = rng.standard_normal((m, k), dtype=np.float32)
        w = rng.standard_normal((n, k), dtype=np.float32)  # linear's weight: n x k
        b = rng.standard_normal(n, dtype=np.float32)
        lx, lw, lb = libops.from_numpy(x), libops.from_numpy(w), libops.from_numpy(b)
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        got = libops.nn.functional.linear(lx, lw, lb).numpy()
        want = TF.linear(tx, tw, tb).numpy()
        assert np.allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(k)), "linear disagrees with torch"
        rows = {
            "lb": lambda: libops.nn.functional.linear(lx, lw, lb),
            "l": lambda: libops.nn.functional.linear(lx, lw),
            "tb": lambda: TF.linear(tx, tw, tb),
            "t": lambda: TF.linear(tx, tw),
        }
        budget = 0.02 if m * n * k < 1 << 22 else 0.3
        times = {key: [] for key in rows}
        for _ in range(args.rounds):
            for key, fn in rows.items():
                times[key].append(per_call(fn, budget))
        med = {key: statistics.median(v) * 1e6 for key, v in times.items()}
        label = f"({m},{k})x({k},{n})"
        print(f"{label:>24} {med['lb']:10.1f} {med['l']:10.1f} {med['lb'] - med['l']:10.1f} "
              f"{med['tb']:10.1f} {med['t']:10.1f} {med['lb'] / med['tb']:8.2f}", flush=True)


if __name__ == "__main__":
    main()

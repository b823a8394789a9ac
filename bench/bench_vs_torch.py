#!/usr/bin/env python3
"""The vectorised unary ops (exp, log, tanh, sigmoid; docs/cpu-dispatch.md) against
torch (when importable) and NumPy, on 1M contiguous float32 and float64 elements, in
one process, one thread, interleaved rounds, median of the rounds; every call
allocates its result (the functional form, as a user writes it).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_vs_torch.py [--rounds N]

Ratio = libops time / peer time (above 1: libops slower).  The header names the CPU
capability libops chose (OPS_CPU_CAPABILITY=default|avx2|avx512 picks a lower one)."""

import argparse
import platform
import statistics
import sys
import timeit

import numpy as np

import libops

try:
    import torch
except ImportError:
    torch = None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--n", type=int, default=1 << 20)
    args = ap.parse_args()

    libops.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    cases = []
    for dt in (np.float32, np.float64):
        base = rng.uniform(-10.0, 10.0, args.n).astype(dt)
        pos = rng.uniform(1e-3, 100.0, args.n).astype(dt)
        for name in ("exp", "log", "tanh", "sigmoid"):
            a = pos if name == "log" else base
            x = libops.from_numpy(a)
            fn_l = getattr(libops, name)
            np_fn = {"exp": np.exp, "log": np.log, "tanh": np.tanh,
                     "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v))}[name]
            peers = [("numpy", (lambda f, v: (lambda: f(v)))(np_fn, a))]
            if torch is not None:
                t = torch.from_numpy(a)
                peers.insert(0, ("torch", (lambda f, v: (lambda: f(v)))(getattr(torch, name), t)))
            cases.append((f"{name} {np.dtype(dt).name} {args.n // (1 << 20)}M",
                          (lambda f, v: (lambda: f(v)))(fn_l, x), peers))

    capability = libops.cpu_capability() if hasattr(libops, "cpu_capability") else "none (scalar loops)"
    print(f"bench_vs_torch: {cpu_model()}; libops CPU capability {capability}; "
          f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          + (f"torch {torch.__version__} (CPU capability {torch.backends.cpu.get_cpu_capability()})"
             if torch is not None and hasattr(torch.backends, "cpu") else
             (f"torch {torch.__version__}" if torch is not None else "torch not installed"))
          + f"; one thread, median of {args.rounds} interleaved rounds")
    number = 20
    for label, fn_l, peers in cases:
        times = {"libops": []}
        for pname, _ in peers:
            times[pname] = []
        fn_l()
        for _, pf in peers:
            pf()
        for _ in range(args.rounds):
            times["libops"].append(timeit.timeit(fn_l, number=number) / number)
            for pname, pf in peers:
                times[pname].append(timeit.timeit(pf, number=number) / number)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = f"  {label:18s} libops {med['libops'] * 1e3:7.3f} ms"
        for pname, _ in peers:
            row += f"   {pname} {med[pname] * 1e3:7.3f} ms ({med['libops'] / med[pname]:5.2f}x)"
        print(row)


if __name__ == "__main__":
    main()

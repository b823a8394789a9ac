#!/usr/bin/env python3
"""Per-call cost of a 1-element float32 add from Python: libops.add(x, y) and x + y
against NumPy's np.add (and torch.add when python3-torch is installed), measured in one
process, interleaved, best of several rounds (the VMs' timings swing between runs).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [--rounds N]

Every call allocates a fresh result (no out=): the figure is the whole path a user
pays, from argument parsing to the new Python object."""

import argparse
import sys
import timeit

import numpy as np

import libops

try:
    import torch
except ImportError:
    torch = None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--number", type=int, default=200000)
    args = ap.parse_args()

    x = libops.ones(1, dtype=libops.float32)
    y = libops.ones(1, dtype=libops.float32)
    a = np.ones(1, dtype=np.float32)
    b = np.ones(1, dtype=np.float32)
    add = libops.add
    cases = [
        ("libops.add(x, y)", lambda: add(x, y)),
        ("x + y (libops)", lambda: x + y),
        ("x.add(y) (libops)", lambda: x.add(y)),
        ("np.add(a, b)", lambda: np.add(a, b)),
    ]
    if torch is not None:
        torch.set_num_threads(1)
        tx = torch.ones(1, dtype=torch.float32)
        ty = torch.ones(1, dtype=torch.float32)
        cases.append(("torch.add(tx, ty)", lambda: torch.add(tx, ty)))
    # the empty lambda's own cost is subtracted from every case
    empty = lambda: None  # noqa: E731
    best = {name: float("inf") for name, _ in cases}
    best_empty = float("inf")
    for _ in range(args.rounds):
        best_empty = min(best_empty, timeit.timeit(empty, number=args.number) / args.number)
        for name, fn in cases:
            best[name] = min(best[name], timeit.timeit(fn, number=args.number) / args.number)
    np_ns = (best["np.add(a, b)"] - best_empty) * 1e9
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}"
          + (f", torch {torch.__version__}" if torch is not None else ", torch not installed")
          + f"; 1-element float32 add, fresh result each call; best of {args.rounds} x {args.number} calls, "
          f"call overhead of an empty lambda ({best_empty * 1e9:.0f} ns) subtracted")
    for name, _ in cases:
        ns = (best[name] - best_empty) * 1e9
        print(f"  {name:20s} {ns:8.0f} ns/call   {ns / np_ns:5.2f}x np.add")


if __name__ == "__main__":
    main()

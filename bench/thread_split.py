#!/usr/bin/env python3
"""How a call's work splits across libops' threads, from each thread's own on-CPU time
(/proc/self/task/*/schedstat, nanoseconds), so that the split can be judged on a
machine where other processes take the cores and wall-clock speed-ups mean little.

    OMP_WAIT_POLICY=passive PYTHONPATH=build/python /usr/bin/python3 bench/thread_split.py
        [--threads 1,2] [--calls 10] [ROW ...]

For each thread count, ROW is called --calls times (after two warm-up calls) and the
on-CPU time each thread spent, per call, is printed with the wall time.  A split that
costs nothing shows per-thread times that sum to the one-thread time; the speed-up on
a quiet machine with as many free cores is then the one-thread time over the largest
per-thread time.  OMP_WAIT_POLICY=passive keeps libgomp's idle spinning out of the
on-CPU times (Linux only)."""

import argparse
import os
import time

import libops

N = 1 << 24


def sched():
    d = {}
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/schedstat") as f:
                d[t] = int(f.read().split()[0])
        except OSError:
            pass
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("rows", nargs="*", default=["randn", "normal_", "rand", "exp"])
    args = ap.parse_args()
    x = libops.randn((N,))
    rows = {
        "randn": lambda: libops.randn((N,)),
        "normal_": lambda: x.normal_(),
        "rand": lambda: libops.rand((N,)),
        "randn_f64": lambda: libops.randn((N // 4,), dtype=libops.float64),
        "exp": lambda: x.exp(),
    }
    print(f"libops CPU capability {libops.cpu_capability()}; {N} elements (randn_f64: {N // 4}); "
          f"on-CPU ms per call of each thread that ran")
    for nt in (int(t) for t in args.threads.split(",")):
        libops.set_num_threads(nt)
        for name in args.rows:
            f = rows[name]
            f()
            f()
            a, w = sched(), time.perf_counter()
            for _ in range(args.calls):
                f()
            w = (time.perf_counter() - w) / args.calls * 1e3
            b = sched()
            per = sorted(((b[t] - a.get(t, 0)) / args.calls / 1e6 for t in b
                          if b[t] - a.get(t, 0) > 0.5e6 * args.calls), reverse=True)
            print(f"  {name:10s} threads {nt}: wall {w:7.1f} ms  per thread " +
                  ", ".join(f"{p:.1f}" for p in per) + f"  (sum {sum(per):.1f})", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The conformance cases of the ops with vector loops (kernels/cpu/vec/,
docs/cpu-dispatch.md) under every CPU instruction-set level this machine runs, each
in its own process with OPS_CPU_CAPABILITY set, so that every compiled copy of the
loops is checked on every `make check`, not only the best one.

    cpu_levels.py RUNNER CASES.bin --ops exp,log,tanh,sigmoid

A level the CPU lacks is refused by libops with one line on stderr naming it; that
level is reported as skipped.  Fails when any run fails, or when no level ran."""

import argparse
import os
import subprocess
import sys

LEVELS = ("default", "avx2", "avx512")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runner")
    ap.add_argument("cases")
    ap.add_argument("--ops", required=True, help="comma-separated op names")
    args = ap.parse_args()
    ops = [o for o in args.ops.split(",") if o]
    failed = []
    ran = []
    for level in LEVELS:
        env = dict(os.environ, OPS_CPU_CAPABILITY=level)
        refused = False
        for op in ops:
            p = subprocess.run([args.runner, args.cases, "--op", op], env=env,
                               capture_output=True, text=True)
            if f"OPS_CPU_CAPABILITY={level}: this CPU lacks" in p.stderr:
                refused = True
                break
            last = (p.stdout.strip().splitlines() or [""])[-1]
            print(f"{level:8s} {op:10s} rc={p.returncode} {last}")
            if p.returncode != 0:
                failed.append(f"{level}/{op}")
                sys.stdout.write(p.stdout[-4000:])
                sys.stdout.write(p.stderr[-4000:])
        if refused:
            print(f"{level:8s} skipped: this CPU lacks it")
        else:
            ran.append(level)
    print(f"levels run: {', '.join(ran) or 'none'}")
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0 if ran else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The conformance suite's value, error and gradient families (the runner's --values:
everything but the allocation-failure injection) under every CPU instruction-set level
this machine runs other than the one the plain `conformance` test already ran at (the
best), each in its own process with OPS_CPU_CAPABILITY set: every compiled copy of
the vector loops (kernels/cpu/vec/, docs/cpu-dispatch.md) meets every case on every
`make check`.

    cpu_levels.py RUNNER CASES.bin [--ops exp,log] [--levels default,avx2] [--all-levels]

--ops narrows the run to some ops (while working on them); --levels to some levels
(the sanitizer build runs `default` alone, the level furthest from the best, to keep
`make check` short); --all-levels runs the best level too.  A level the CPU lacks is refused by libops with one line on stderr naming
it; that level is reported as skipped.  Fails when any run fails, or when no level ran
on a CPU that has more than the baseline."""

import argparse
import os
import subprocess
import sys

LEVELS = ("default", "avx2", "avx512")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runner")
    ap.add_argument("cases")
    ap.add_argument("--ops", default="", help="comma-separated op names (default: every op)")
    ap.add_argument("--all-levels", action="store_true", help="run the best level too")
    ap.add_argument("--levels", default=",".join(LEVELS),
                    help="comma-separated levels to consider (default: all)")
    args = ap.parse_args()
    ops = [o for o in args.ops.split(",") if o] or [None]
    env0 = {k: v for k, v in os.environ.items() if k != "OPS_CPU_CAPABILITY"}
    best = subprocess.run([args.runner, "--print-cpu-capability"], env=env0, capture_output=True,
                          text=True, check=True).stdout.strip()
    print(f"best level on this CPU: {best}")
    failed, ran = [], []
    wanted = [lv for lv in args.levels.split(",") if lv]
    for level in LEVELS:
        if level not in wanted:
            continue
        if level == best and not args.all_levels:
            print(f"{level:8s} skipped: the plain conformance test runs it")
            continue
        env = dict(env0, OPS_CPU_CAPABILITY=level)
        refused = False
        for op in ops:
            cmd = [args.runner, args.cases, "--values"] + (["--op", op] if op else [])
            p = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if f"OPS_CPU_CAPABILITY={level}: this CPU lacks" in p.stderr:
                refused = True
                break
            last = (p.stdout.strip().splitlines() or [""])[-1]
            print(f"{level:8s} {op or 'all ops':10s} rc={p.returncode} {last}", flush=True)
            if p.returncode != 0:
                failed.append(f"{level}/{op or 'all'}")
                sys.stdout.write(p.stdout[-6000:])
                sys.stdout.write(p.stderr[-4000:])
        if refused:
            print(f"{level:8s} skipped: this CPU lacks it")
        else:
            ran.append(level)
    print(f"levels run: {', '.join(ran) or 'none'}")
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0 if ran or best == "default" else 1


if __name__ == "__main__":
    sys.exit(main())

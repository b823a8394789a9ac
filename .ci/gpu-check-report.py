#!/usr/bin/python3
"""Read one step's output for .ci/gpu-check.sh and print its report: the first line is
the step's one-line detail for the summary's table, the rest its section.  Exit 0 when
the step passed, 1 when it failed.  Standard library only (runs on any python3).

    gpu-check-report.py meson TESTLOG.json [--excerpts FILE]
    gpu-check-report.py conformance LOG RC
    gpu-check-report.py bench BENCH_CUDA_LOG RC BENCH_CUDA_REDUCE_LOG RC
    gpu-check-report.py e2e CPU_LOG RC DEVICE_LOG RC
"""
import json
import re
import sys

# Check's closing line, and its failure lines (file:line:F|E:tcase:test:iteration: message)
CHECK_TOTALS = re.compile(r"(\d+)%: Checks: (\d+), Failures: (\d+), Errors: (\d+)")
CHECK_FAILURE = re.compile(r"^[^:\s]+:\d+:[FE]:")
# unittest
UT_RAN = re.compile(r"^Ran (\d+) tests? in")
UT_FAILED = re.compile(r"^FAILED \((.*)\)")
UT_OK = re.compile(r"^OK \((.*)\)")
UT_FIRST = re.compile(r"^(FAIL|ERROR): (\S+) \((.*)\)")


def clip(text, n=240):
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def cases_of(output):
    """(cases run, cases failed, cases skipped, first failure) of a Check or unittest
    program's output."""
    run = failed = skipped = 0
    first = None
    for line in output.splitlines():
        m = CHECK_TOTALS.search(line)
        if m:
            run += int(m.group(2))
            failed += int(m.group(3)) + int(m.group(4))
            continue
        m = UT_RAN.match(line)
        if m:
            run += int(m.group(1))
            continue
        m = UT_FAILED.match(line) or UT_OK.match(line)
        if m:
            counts = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1)))
            failed += counts.get("failures", 0) + counts.get("errors", 0)
            skipped += counts.get("skipped", 0)
            continue
        if first is None and (CHECK_FAILURE.match(line) or UT_FIRST.match(line)):
            first = line.strip()
    return run, failed, skipped, first


def last_words(output):
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "(no output)"


def meson(args):
    path = args[0]
    excerpts = args[args.index("--excerpts") + 1] if "--excerpts" in args else None
    tests = []
    for line in read(path).splitlines():
        try:
            tests.append(json.loads(line))
        except ValueError:
            pass
    if not tests:
        print("no test ran (no meson test log: cut off, or nothing selected)")
        return 1
    npass = nfail = cases = cases_failed = 0
    section = []
    for t in tests:
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        result = t.get("result", "?")
        run, failed, skipped, first = cases_of(out)
        cases += run
        cases_failed += failed
        # A device test that skips (77), or whose every case skips, on a machine that
        # has a device means libops did not see it: a failure here, not a pass.
        all_skipped = run > 0 and skipped == run
        ok = result in ("OK", "EXPECTEDFAIL") and failed == 0 and not all_skipped
        npass += ok
        nfail += not ok
        counts = f"{run} cases" + (f", {failed} failed" if failed else "") + (f", {skipped} skipped" if skipped else "")
        name = t.get("name", "?").split(" / ")[-1]  # meson's "project:suites / name"
        section.append(f"{'PASS' if ok else result if result != 'OK' else 'FAIL':8} {name:24} "
                       f"{t.get('duration', 0):7.1f} s  {counts}")
        if not ok:
            why = first or (f"skipped: {last_words(out)}" if result == "SKIP" else
                            f"every case skipped: {last_words(out)}" if all_skipped else last_words(out))
            section.append(f"         first failure: {clip(why)}")
            if excerpts:
                with open(excerpts, "a", encoding="utf-8") as f:
                    tail = "\n".join(out.splitlines()[-60:])
                    f.write(f"==== {t.get('name')} ({result}, last 60 lines) ====\n{tail}\n\n")
    print(f"{len(tests)} program{'s' if len(tests) != 1 else ''}: {npass} passed, {nfail} failed; {cases} cases, {cases_failed} failed")
    print("\n".join(section))
    return 1 if nfail else 0


def conformance(args):
    out, rc = read(args[0]), int(args[1])
    run, failed, _, first = cases_of(out)
    cuda = [ln.strip() for ln in out.splitlines() if ln.startswith("conformance: CUDA:")]
    missing = [ln.strip() for ln in out.splitlines() if ln.startswith("conformance: ops without a CUDA kernel")]
    totals = [ln.strip() for ln in out.splitlines() if re.match(r"conformance: \d+ ops,", ln)]
    runs = re.search(r"(\d+) runs on cuda:0 compared with the cpu, (\d+) gradient comparisons", cuda[0]) if cuda else None
    ok = rc == 0 and run > 0 and failed == 0
    detail = f"{run} cases, {failed} failed"
    if runs:
        detail += f"; {runs.group(1)} runs on cuda:0 vs cpu, {runs.group(2)} gradient comparisons"
    if rc != 0 and failed == 0:
        detail += f"; exit {rc}: {clip(last_words(out), 120)}"
    print(detail)
    for line in totals + cuda + missing:
        print(clip(line, 400))
    if first:
        print(f"first failure: {clip(first, 400)}")
    return 0 if ok else 1


def _ratios(rows, target):
    vals = sorted(r for _, r in rows)
    if not vals:
        return "none"
    below = sum(v < target for v in vals)
    return f"min {vals[0]:.3f}, median {vals[len(vals) // 2]:.3f}" + (f", {below} below {target}" if below else "")


def bench(args):
    mm_out, mm_rc, red_out, red_rc = read(args[0]), int(args[1]), read(args[2]), int(args[3])
    mm = re.findall(r"^(float32|float16|bfloat16)\s+n = (\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", mm_out, re.M)
    ew = re.findall(r"^(add|mul|exp)\s+2\^(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", mm_out, re.M)
    red = re.findall(r"^(sum|amax)\s+2\^(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", red_out, re.M)
    dev = re.search(r"^bench_cuda: (.*)$", mm_out, re.M)
    ok = mm_rc == 0 and red_rc == 0 and mm and ew and red
    print(f"mm/cuBLAS {_ratios([(r, float(r[4])) for r in mm], 0.95)}; "
          f"elementwise/memcpy {_ratios([(r, float(r[4])) for r in ew], 0.9)}; "
          f"reductions/memcpy {_ratios([(r, float(r[4])) for r in red], 0.9)}"
          + ("" if ok else f" (exit {mm_rc}, {red_rc})"))
    if dev:
        print(f"device: {dev.group(1)}")
        if "emulated" in dev.group(1):
            print("(emulated device, --quick sizes: the figures only show that the programs run)")
    print("ratios: mm against one direct cuBLAS call on the same buffers (target >= 0.95); elementwise and")
    print("reductions as bandwidth against cudaMemcpy device-to-device on the same size (target >= 0.9)")
    for dt, n, lib, base, ratio in mm:
        flag = "  below target" if float(ratio) < 0.95 else ""
        print(f"  mm {dt:9} n={n:5}  {lib:>8} vs {base:>8} TFLOP/s  ratio {ratio}{flag}")
    for name, lg, gbs, copy, ratio in ew + red:
        flag = "  below target" if float(ratio) < 0.9 else ""
        print(f"  {name:4} 2^{lg:3}         {gbs:>8} vs {copy:>8} GB/s    ratio {ratio}{flag}")
    for prog, out, rc in (("bench_cuda", mm_out, mm_rc), ("bench_cuda_reduce", red_out, red_rc)):
        if rc != 0:
            print(f"{prog}: exit {rc}: {clip(last_words(out))}")
    return 0 if ok else 1


def _training(out):
    acc = re.search(r"held-out accuracy: ([\d.]+)% \((\d+) of (\d+)\)", out)
    losses = [float(v) for v in re.findall(r"epoch\s+\d+\s+loss ([\d.]+)", out)]
    return (int(acc.group(2)), int(acc.group(3))) if acc else None, losses


def e2e(args):
    cpu_out, cpu_rc, dev_out, dev_rc = read(args[0]), int(args[1]), read(args[2]), int(args[3])
    (cpu_acc, cpu_loss), (dev_acc, dev_loss) = _training(cpu_out), _training(dev_out)
    problems = []
    for name, rc, acc, out in (("cpu", cpu_rc, cpu_acc, cpu_out), ("cuda:0", dev_rc, dev_acc, dev_out)):
        if acc is None:
            problems.append(f"{name}: no accuracy (exit {rc}: {clip(last_words(out), 160)})")
        elif rc != 0:
            problems.append(f"{name}: exit {rc} (below 95%?)")
    # The same start, batches and float32 arithmetic: the first epoch's mean loss agrees
    # to rounding, the end to a few held-out images (summation orders differ).
    if cpu_acc and dev_acc:
        if abs(cpu_acc[0] - dev_acc[0]) > 3:
            problems.append(f"accuracy differs by {abs(cpu_acc[0] - dev_acc[0])} images (allowed: 3)")
        if not cpu_loss or len(cpu_loss) != len(dev_loss):
            problems.append(f"{len(cpu_loss)} epochs on the cpu, {len(dev_loss)} on cuda:0")
        elif abs(cpu_loss[0] - dev_loss[0]) > 1e-3 * abs(cpu_loss[0]):
            problems.append(f"epoch 1 loss {dev_loss[0]} on cuda:0, {cpu_loss[0]} on the cpu (allowed: 1e-3 relative)")

    def show(acc, loss):
        if acc is None:
            return "-"
        return (f"{100 * acc[0] / acc[1]:.1f}% ({acc[0]} of {acc[1]})"
                + (f", loss epoch 1 {loss[0]:.4f}, epoch {len(loss)} {loss[-1]:.4f}" if loss else ""))

    print(f"MLP on digits: cpu {show(cpu_acc, [])}, cuda:0 {show(dev_acc, [])}"
          + (f"; {problems[0]}" if problems else ""))
    print(f"cpu:    {show(cpu_acc, cpu_loss)}")
    print(f"cuda:0: {show(dev_acc, dev_loss)}")
    print("pass: both >= 95% held out, within 3 images of each other, epoch 1 losses within 1e-3 relative")
    for p in problems[1:]:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    cmds = {"meson": meson, "conformance": conformance, "bench": bench, "e2e": e2e}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(cmds[sys.argv[1]](sys.argv[2:]))

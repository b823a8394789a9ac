#!/usr/bin/env python3
"""tests/newop: adding an op touches the YAML files and one kernel file, and nothing else.

The walk-through of docs/adding-an-op.md, done for real on a temporary copy of the
source tree (never on the developer's tree or build dirs):

  1. configure and build the copy as it is (libops.a, the conformance cases and
     runner: only what the steps below need);
  2. add the op the way the doc says: append special_logit.yaml to ops/native_functions.yaml,
     special_logit_conformance.yaml to ops/conformance/unary.yaml and special_logit_derivatives.yaml to
     ops/derivatives.yaml, copy special_logit.c to kernels/cpu/;
     run ninja again in the same build dir (no reconfigure by hand) and check that
     meson re-ran and compiled the new kernel file, that the generated header declares
     ops_special_logit, ops_special_logit_out and ops_special_logit_, that a user's program calling them
     works (use_special_logit.c, which also checks the boxed registry), and that
     `conformance cases.bin --op special_logit --coverage` passes with every form of the op
     run, with value runs in each declared dtype and only rejections in the others;
  3. remove the entry's NumPy reference: the suite must fail (NumPy has no np.special_logit,
     so the default reference does not exist);
  4. an edit of the conformance file alone recompiles no kernel and no glue; declare
     float16 (the schema's `dtypes:`), which the kernel does not dispatch: the runner
     must fail;
  5. leave out float64, which the kernel computes: the generated glue now refuses it
     before the kernel runs (the declaration decides, not the kernel), so the suite
     passes with float64 only as rejections, and a call says why.

In step 2 a reduction-like op is added beside it the way the doc's "A reduction-like
op" says: ptp.yaml appended to the schema, ptp_conformance.yaml to
ops/conformance/reduction.yaml, ptp_derivatives.yaml to ops/derivatives.yaml, ptp.c copied to kernels/cpu/ and ptp.cu to
kernels/cuda/ (compiled by CUDA builds; this tree is CPU-only), nothing else; the
generated API must declare ops_ptp and ops_ptp_out, and `conformance --op ptp
--coverage` must pass with value runs in float32 and float64 only.

It also checks that docs/adding-an-op.md shows the fixture files and the generated
prototypes verbatim, so that the doc cannot drift from what is tested.

    test_newop.py --source-root DIR --meson MESON --ninja NINJA [--cc CC] [--keep]

Exit status 0: passed; 1: failed; 77: skipped (--skip REASON).
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OP = "special_logit"
# What docs/codegen.md's rules give for the three schemas of special_logit.yaml (written
# here by hand from those rules, not read from the generator).
PROTOTYPES = [
    "OPS_API ops_status ops_special_logit_out(const ops_tensor *self, const double *eps, ops_tensor *out);",
    "OPS_API ops_tensor *ops_special_logit(const ops_tensor *self, const double *eps);",
    "OPS_API ops_status ops_special_logit_(ops_tensor *self, const double *eps);",
]
KERNEL_PROTOTYPE = "ops_status special_logit_out_cpu(ops_iter *it, const ops_tensor *self, const double *eps);"
# The reduction-like example (ptp): its public API and its CPU kernels' prototypes.
RED_OP = "ptp"
RED_PROTOTYPES = [
    "OPS_API ops_tensor *ops_ptp(const ops_tensor *self, const ops_int_list *dim, bool keepdim);",
    "OPS_API ops_status ops_ptp_out(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_tensor *out);",
]
# (one kernel for every form: the structured reduction family, `meta: reduction`)
RED_KERNEL_PROTOTYPES = [
    "ops_status ptp_out_cpu(ops_reduce *r);",
]
RED_DECLARED = ["float32", "float64"]
TARGETS = ["libops.a", "tests/conformance/conformance", "tests/conformance/cases.bin"]
T0 = time.monotonic()


class Failure(Exception):
    pass


def say(msg: str) -> None:
    print(f"[newop {time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise Failure(msg)


def run(cmd, cwd=None, env=None, timeout=900, show=True):
    """Run cmd; return (returncode, combined output)."""
    if show:
        say("$ " + " ".join(shlex.quote(str(c)) for c in cmd))
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def tail(text: str, n: int = 25) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines()[-n:])


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_generated(build: str, prefix: str) -> str:
    """Every generated header named prefix*.h (an umbrella and its family shards)."""
    d = os.path.join(build, "generated")
    return "".join(read(os.path.join(d, n)) for n in sorted(os.listdir(d))
                   if n.startswith(prefix) and n.endswith(".h"))


def write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# ---- the temporary tree ----------------------------------------------------------

def source_files(root: str):
    """Relative paths of the source tree: git's view of the working tree (tracked and
    untracked-but-not-ignored files, as they are on disk) in a git checkout, else
    every file outside build dirs."""
    try:
        rc, top = run(["git", "-C", root, "rev-parse", "--show-toplevel"], show=False, timeout=60)
    except OSError:
        rc = 1
    if rc == 0 and os.path.realpath(top.strip()) == os.path.realpath(root):
        p = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], stdout=subprocess.PIPE, check=True, timeout=60)
        files = [f for f in p.stdout.decode().split("\0") if f]
        return [f for f in files if os.path.isfile(os.path.join(root, f))], "git ls-files"
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        keep = []
        for d in dirnames:
            full = os.path.join(dirpath, d)
            is_build = (os.path.isdir(os.path.join(full, "meson-private"))
                        or (rel == "." and (d == "build" or d.startswith("build-"))))
            if d not in (".git", "__pycache__") and not is_build:
                keep.append(d)
        dirnames[:] = sorted(keep)
        for f in filenames:
            if not f.endswith(".pyc"):
                files.append(os.path.normpath(os.path.join(rel, f)))
    return files, "a walk of the tree without build dirs"


def copy_tree(root: str, dest: str) -> None:
    files, how = source_files(root)
    for rel in files:
        os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(os.path.join(root, rel), os.path.join(dest, rel))
    say(f"copied {len(files)} files ({how}) to {dest}")


# ---- the conformance runner's report ------------------------------------------------

DECLARED = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"]
UNDECLARED = ["float16", "bfloat16"]


def report(output: str):
    """The runner's counts: selected cases, Check's checks and failures, and its
    summary ("conformance: 1 ops, R op x dtype x variant runs, E error cases, F
    fault-injection points, ...")."""
    sel = re.search(r"conformance: (\d+) of (\d+) cases selected", output)
    chk = re.search(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)", output)
    summ = re.search(r"conformance: (\d+) ops?, (\d+) op x dtype x variant runs, (\d+) error cases, "
                     r"(\d+) fault-injection points", output)
    check(sel is not None and chk is not None and summ is not None,
          "the runner's report lacks its selection, Check or summary line:\n" + tail(output))
    return {"selected": int(sel.group(1)), "checks": int(chk.group(1)),
            "failed": int(chk.group(2)) + int(chk.group(3)), "ops": int(summ.group(1)),
            "runs": int(summ.group(2)), "errors": int(summ.group(3)), "faults": int(summ.group(4))}


# ---- the steps ---------------------------------------------------------------------

def check_doc(root: str) -> None:
    doc_path = os.path.join(root, "docs", "adding-an-op.md")
    check(os.path.isfile(doc_path), "docs/adding-an-op.md is missing")
    doc = read(doc_path)
    for name in ("special_logit.yaml", "special_logit_conformance.yaml", "special_logit_derivatives.yaml", "special_logit.c",
                 "ptp.yaml", "ptp_conformance.yaml", "ptp_derivatives.yaml", "ptp.c", "ptp.cu"):
        text = read(os.path.join(HERE, name)).strip()
        check(text in doc, f"docs/adding-an-op.md does not show tests/newop/{name} verbatim; update the doc "
                           "(or the fixture) so that the walk-through is what this test runs")
    for proto in PROTOTYPES + [KERNEL_PROTOTYPE] + RED_PROTOTYPES + RED_KERNEL_PROTOTYPES:
        check(proto in doc, f"docs/adding-an-op.md does not show the generated prototype '{proto}'")
    say("docs/adding-an-op.md shows the fixture files and the generated prototypes verbatim")


def ninja(args, build, targets, expect_ok=True):
    rc, out = run([args.ninja, "-C", build] + targets)
    if expect_ok:
        check(rc == 0, "ninja failed:\n" + tail(out, 40))
    return rc, out


def runner(build, extra=(), show=True, op=OP):
    return run([os.path.join(build, "tests/conformance/conformance"),
                os.path.join(build, "tests/conformance/cases.bin"), "--op", op] + list(extra), show=show)


def edit_dtypes(yaml_path: str, pristine: str, fixture: str, new_tail: str) -> None:
    """The tree's schema with special_logit's entries whose dtypes list (the schema's `dtypes:`,
    docs/codegen.md) ends in new_tail, and ptp's entries as step 2 appended them."""
    edited = fixture.replace("int64, float32, float64]", new_tail)
    check(edited != fixture, "special_logit.yaml's dtypes line is not the one this test edits")
    write(yaml_path, pristine.rstrip("\n") + "\n" + edited.rstrip("\n") + "\n\n" + read(os.path.join(HERE, "ptp.yaml")))


def failure(output: str, fragment: str) -> str:
    """The runner's report of the first failure whose text contains fragment: the
    case's header line and the line saying what went wrong."""
    lines = output.splitlines()
    for i, ln in enumerate(lines):
        if fragment in ln:
            head = next((lines[j] for j in range(i, -1, -1) if ":F:" in lines[j] or ":E:" in lines[j]), "")
            head = re.sub(r"^\d+:\s*", "", head.split(":test_case_run:", 1)[-1])
            return (head.strip() + " ... " if head and head != ln else "") + ln.strip()
    raise Failure(f"the runner failed, but not with '{fragment}':\n" + tail(output))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--meson", required=True)
    ap.add_argument("--ninja", required=True)
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary tree")
    ap.add_argument("--skip", default="", help="skip with this reason (exit 77)")
    args = ap.parse_args()
    if args.skip:
        print(f"newop: skipped: {args.skip}")
        return 77
    root = os.path.realpath(args.source_root)
    tmp = tempfile.mkdtemp(prefix="libops-newop-")
    src, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
    env = dict(os.environ, CC=args.cc)
    ok = False
    try:
        check_doc(root)
        copy_tree(root, src)
        yaml_path = os.path.join(src, "ops", "native_functions.yaml")
        pristine_yaml = read(yaml_path)
        check(re.search(r"^- func: special_logit[.(]", pristine_yaml, re.M) is None,
              "ops/native_functions.yaml already has special_logit: pick another example op for "
              "tests/newop and docs/adding-an-op.md")

        # 1. the tree as it is: a build dir that exists before the op does
        rc, out = run([args.meson, "setup", build, src, "-Dcuda=disabled", "--buildtype=plain",
                       "-Dtests=true"], env=env, timeout=600)
        check(rc == 0, "meson setup failed:\n" + tail(out, 40))
        ninja(args, build, TARGETS)
        header = read_generated(build, "ops_functions")
        check("ops_special_logit" not in header, "ops_special_logit is declared before the op was added")
        say("1. built the unmodified copy (libops.a, cases.bin, conformance runner)")

        # 2. add the op: YAML entries and one kernel file, nothing else
        write(yaml_path, pristine_yaml.rstrip("\n") + "\n" + read(os.path.join(HERE, "special_logit.yaml")))
        conf_path = os.path.join(src, "ops", "conformance", "unary.yaml")
        pristine_conf = read(conf_path)
        fixture = read(os.path.join(HERE, "special_logit_conformance.yaml"))
        write(conf_path, pristine_conf.rstrip("\n") + "\n" + fixture)
        deriv_path = os.path.join(src, "ops", "derivatives.yaml")
        write(deriv_path, read(deriv_path).rstrip("\n") + "\n" + read(os.path.join(HERE, "special_logit_derivatives.yaml")))
        shutil.copy(os.path.join(HERE, "special_logit.c"), os.path.join(src, "kernels", "cpu", "special_logit.c"))
        say("2. appended tests/newop/special_logit.yaml to ops/native_functions.yaml, special_logit_conformance.yaml to "
            "ops/conformance/unary.yaml and special_logit_derivatives.yaml to ops/derivatives.yaml; copied "
            "tests/newop/special_logit.c to kernels/cpu/special_logit.c")
        # the reduction-like op, in the same edit (one schema edit, one rebuild)
        check(re.search(r"^- func: ptp[.(]", pristine_yaml, re.M) is None,
              "ops/native_functions.yaml already has ptp: pick another reduction-like example op")
        write(yaml_path, read(yaml_path).rstrip("\n") + "\n\n" + read(os.path.join(HERE, "ptp.yaml")))
        red_conf = os.path.join(src, "ops", "conformance", "reduction.yaml")
        write(red_conf, read(red_conf).rstrip("\n") + "\n" + read(os.path.join(HERE, "ptp_conformance.yaml")))
        write(deriv_path, read(deriv_path).rstrip("\n") + "\n" + read(os.path.join(HERE, "ptp_derivatives.yaml")))
        shutil.copy(os.path.join(HERE, "ptp.c"), os.path.join(src, "kernels", "cpu", "ptp.c"))
        shutil.copy(os.path.join(HERE, "ptp.cu"), os.path.join(src, "kernels", "cuda", "ptp.cu"))
        say("   and the reduction-like op: appended tests/newop/ptp.yaml to ops/native_functions.yaml, "
            "ptp_conformance.yaml to ops/conformance/reduction.yaml, ptp_derivatives.yaml to "
            "ops/derivatives.yaml; copied ptp.c to kernels/cpu/ptp.c and "
            "ptp.cu to kernels/cuda/ptp.cu")
        rc, out = ninja(args, build, TARGETS)
        check("Regenerating build files" in out,
              "editing ops/native_functions.yaml did not make ninja re-run meson:\n" + tail(out, 40))
        check(re.search(r"kernels[/_]cpu[/_]special_logit\.c", out) is not None,
              "the incremental build did not compile kernels/cpu/special_logit.c (the new kernel file was not "
              "picked up):\n" + tail(out, 40))
        say("   ninja re-ran meson (the YAML is a configure dependency) and compiled kernels/cpu/special_logit.c")
        # The generated headers are split by op family (docs/codegen.md "Shards"): the
        # other kernel files include only their own family's, which did not change.
        # (not preceded by a word character: meson's reconfigure also prints the generated
        # test_iter_kernels_program.c of the tests' runner, which is no kernel file)
        others = sorted(set(re.findall(r"(?<!\w)kernels[/_](?:cpu[/_])?(\w+)\.c", out)) - {"special_logit", "ptp"})
        check(not others, "adding special_logit and ptp recompiled other kernel files: " + ", ".join(others))
        say("   and no other kernel file (the generated headers are split by op family)")

        header = read(os.path.join(build, "generated", "ops_functions.h"))
        check('#include "ops_functions_special_logit.h"' in header, "ops_functions.h does not include ops_functions_special_logit.h")
        header = read(os.path.join(build, "generated", "ops_functions_special_logit.h"))
        for proto in PROTOTYPES:
            check(proto in header, f"ops_functions_special_logit.h does not declare '{proto}'")
        kernels_h = read(os.path.join(build, "generated", "ops_kernels_special_logit.h"))
        check(KERNEL_PROTOTYPE in kernels_h, f"ops_kernels_special_logit.h does not declare '{KERNEL_PROTOTYPE}'")
        registry = read(os.path.join(build, "generated", "ops_registry.c"))
        check("special_logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)" in registry,
              "ops_registry.c has no entry for special_logit.out")
        say("   ops_functions_special_logit.h declares ops_special_logit, ops_special_logit_out, ops_special_logit_; ops_kernels_special_logit.h "
            "special_logit_out_cpu")
        header = read(os.path.join(build, "generated", "ops_functions_ptp.h"))
        kernels_h = read(os.path.join(build, "generated", "ops_kernels_ptp.h"))
        for proto in RED_PROTOTYPES:
            check(proto in header, f"ops_functions_ptp.h does not declare '{proto}'")
        for proto in RED_KERNEL_PROTOTYPES:
            check(proto in kernels_h, f"ops_kernels_ptp.h does not declare '{proto}'")
        check(re.search(r"kernels[/_]cpu[/_]ptp\.c", out) is not None,
              "the incremental build did not compile kernels/cpu/ptp.c:\n" + tail(out, 40))
        say("   ops_functions_ptp.h declares ops_ptp, ops_ptp_out; ops_kernels_ptp.h ptp_out_cpu, its one kernel")

        # the reduction-like op's conformance: every form run, the declared dtypes only
        rc, out = runner(build, ["--coverage"], op=RED_OP)
        check(rc == 0, "the conformance runner fails on ptp:\n" + tail(out, 40))
        r = report(out)
        check(r["selected"] > 0 and r["checks"] == r["selected"] and r["failed"] == 0 and r["ops"] == 1
              and r["runs"] > 0 and r["errors"] > 0, f"`--op ptp` did not run ptp's cases, or not only them: {r}")
        check("coverage complete" in out, "--coverage: some form of ptp had no conformance run:\n" + tail(out))
        gc = re.search(r"(\d+) gradchecks", out)
        check(gc is not None and int(gc.group(1)) > 0, "ptp's formula was not gradchecked:\n" + tail(out))
        # (a samples: op has the rejection cases its metadata's errors declare)
        refused = []
        for d in DECLARED + UNDECLARED:
            rc, out = runner(build, ["--dtype", d], show=False, op=RED_OP)
            check(rc == 0, f"the conformance runner fails on ptp in {d}:\n" + tail(out, 40))
            r = report(out)
            if d in RED_DECLARED:
                check(r["runs"] > 0, f"no value runs of ptp in declared dtype {d}: {r}")
            else:
                check(r["runs"] == 0, f"ptp, undeclared dtype {d}: expected no value runs, got {r}")
                if r["errors"] > 0:
                    refused.append(d)
        check("int64" in refused and "float16" in refused,
              f"ptp's refusals of int64 and float16 (its metadata's errors) were not checked: {refused}")
        say(f"   conformance --op ptp --coverage passed (ptp and ptp.out, its formula gradchecked); value runs "
            f"in {', '.join(RED_DECLARED)} only; refused as checked: {', '.join(refused)}")

        # a user's program against the new API (and the boxed registry at run time)
        pc_env = dict(env, PKG_CONFIG_PATH=os.path.join(build, "meson-uninstalled"))
        rc, flags = run(["pkg-config", "--static", "--cflags", "--libs", "libops"], env=pc_env, show=False)
        check(rc == 0, "pkg-config on the uninstalled libops.pc failed:\n" + tail(flags))
        exe = os.path.join(build, "use_special_logit")
        rc, out = run(shlex.split(args.cc) + ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                                              os.path.join(HERE, "use_special_logit.c"), "-o", exe]
                      + shlex.split(flags), env=env)
        check(rc == 0, "use_special_logit.c does not compile against the generated API:\n" + tail(out))
        rc, out = run([exe], env=dict(env, LD_LIBRARY_PATH=build))
        check(rc == 0, "use_special_logit failed:\n" + tail(out))
        say("   " + out.strip())

        # the conformance suite: special_logit's cases, every form of the op run, all passed
        rc, out = runner(build, ["--coverage"])
        check(rc == 0, "the conformance runner fails on special_logit:\n" + tail(out, 40))
        r = report(out)
        check(r["selected"] > 0 and r["checks"] == r["selected"] and r["failed"] == 0 and r["ops"] == 1,
              f"`--op {OP}` did not run special_logit's cases, or not only them: {r}")
        check("coverage complete" in out, "--coverage: some form of special_logit had no conformance run:\n" + tail(out))
        check(r["runs"] > 0 and r["errors"] > 0 and r["faults"] > 0, f"no runs, error checks or faults: {r}")
        say(f"   conformance --op special_logit --coverage: {r['selected']} cases passed; special_logit, special_logit.out and special_logit_ "
            f"all ran ({r['runs']} op x dtype x variant runs, {r['errors']} error checks, {r['faults']} "
            "fault-injection points)")
        # dtypes both ways: each declared dtype has value runs, each other one is refused
        for d in DECLARED + UNDECLARED:
            rc, out = runner(build, ["--dtype", d], show=False)
            check(rc == 0, f"the conformance runner fails on special_logit in {d}:\n" + tail(out, 40))
            r = report(out)
            if d in DECLARED:
                check(r["runs"] > 0, f"no value runs of special_logit in declared dtype {d}: {r}")
            else:
                check(r["runs"] == 0 and r["errors"] > 0 and r["selected"] > 0,
                      f"undeclared dtype {d}: expected only rejection cases, got {r}")
        say(f"   --dtype: value runs in each declared dtype ({', '.join(DECLARED)}); "
            f"{' and '.join(UNDECLARED)} only as rejections, in every form")

        # 3. without its NumPy reference the suite fails: there is no np.special_logit
        write(conf_path, pristine_conf.rstrip("\n") + "\n" + re.sub(r"^  ref: .*\n", "", fixture, flags=re.M))
        say("3. removed the `ref:` line of special_logit's conformance metadata")
        rc, out = ninja(args, build, TARGETS, expect_ok=False)
        if rc == 0:
            rc, out = runner(build)
        check(rc != 0, "without its reference, special_logit still passed the conformance suite")
        line = next((ln for ln in out.splitlines() if "special_logit" in ln and ("ref" in ln or "np." in ln)), None)
        check(line is not None, "the failure does not say that special_logit's reference is missing:\n" + tail(out))
        say("   the suite fails: " + line.strip())

        # 4. the metadata is not the API: an edit of it redoes only the registry (which
        # carries it as JSON) and the cases, no kernel or glue file is compiled again
        write(conf_path, pristine_conf.rstrip("\n") + "\n" + fixture.replace(
            "  special: true", "  special: true\n  note: the inverse of sigmoid"))
        say("4. added a note: to special_logit's conformance metadata")
        rc, out = ninja(args, build, TARGETS)
        compiled = re.findall(r"Compiling C object \S+", out)
        check(any("ops_registry" in c for c in compiled) and "conformance-cases" in out
              and not any(re.search(r"kernels_|ops_glue|ops_dispatch|ops_autograd", c) for c in compiled),
              "an edit of ops/conformance/unary.yaml rebuilt more than the registry and the cases:\n" + tail(out, 40))
        say(f"   rebuilt only the registry and the cases ({len(compiled)} C objects compiled: "
            f"{', '.join(c.split()[-1] for c in compiled)})")
        # a dtype the kernel does not dispatch, declared: the runner fails
        special_logit_yaml = read(os.path.join(HERE, "special_logit.yaml"))
        edit_dtypes(yaml_path, pristine_yaml, special_logit_yaml, "int64, float16, float32, float64]")
        say("   declared float16 in special_logit.out's dtypes (the kernel dispatches float32 and float64 only)")
        ninja(args, build, TARGETS)
        rc, out = runner(build)
        check(rc != 0, "with float16 declared, the conformance runner still passed")
        say("   the runner fails: " + failure(out, "special_logit: dtype float16 is not supported"))

        # 5. and the other way: a dtype the kernel computes, not declared: the glue
        # refuses it before dispatch, so the kernel cannot accept more than the schema says
        edit_dtypes(yaml_path, pristine_yaml, special_logit_yaml, "int64, float32]")
        say("5. left float64 out of special_logit's dtypes (the kernel computes it)")
        ninja(args, build, TARGETS)
        rc, out = runner(build, ["--dtype", "float64"], show=False)
        check(rc == 0, "with float64 undeclared, the glue did not refuse it:\n" + tail(out, 40))
        r = report(out)
        check(r["runs"] == 0 and r["errors"] > 0, f"float64 undeclared: expected only rejection cases, got {r}")
        say(f"   the glue refuses float64 before the kernel: {r['errors']} rejection checks passed, no value run")
        ok = True
    except Failure as e:
        print(f"newop: FAIL: {e}", flush=True)
    except subprocess.TimeoutExpired as e:
        print(f"newop: FAIL: timed out: {e}", flush=True)
    finally:
        if args.keep:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    say("passed" if ok else "failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

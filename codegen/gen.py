#!/usr/bin/env python3
"""Command line of the generator (generated/meson.build runs it for every artifact but
the registry, and for the registry alone: the one output that reads ops/conformance/).

    gen.py ARTIFACT... --native ops/native_functions.yaml --derivatives ops/derivatives.yaml
           [--conformance ops/conformance/*.yaml] --out-dir DIR [--cuda] [--no-kernel-check]
           [--kernel-sources FILE...] [--shards NAME...] [--op-headers NAME...]
    gen.py op_headers_list --native ops/native_functions.yaml

Artifacts: functions_h, kernels_h, dispatch, glue, registry, autograd, python, stubs, all;
`check` only
validates; `op_headers_list` prints the names of the op headers (ops_op_<name>.h,
codegen/shards.py) one a line, for meson to declare them when it configures.  Every
run validates the whole schema (both YAML files, the conformance files
(docs/conformance.md: each key names an entry, the metadata present is well formed) and, unless
--no-kernel-check, that each dispatch kernel is defined in a kernel source); errors
are printed as `file:line: reason` and the exit status is 1.  Outputs are written
only when their bytes change.
"""

import argparse
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from codegen import (checks, conformance, derivatives, gen_autograd, gen_dispatch, gen_functions_h,  # noqa: E402
                     gen_glue, gen_kernels_h, gen_python, gen_registry, gen_stubs, model, render, shards)
from codegen import dtypes as dtypes_mod  # noqa: E402

ARTIFACTS = {
    "functions_h": gen_functions_h,
    "kernels_h": gen_kernels_h,
    "dispatch": gen_dispatch,
    "glue": gen_glue,
    "registry": gen_registry,
    "autograd": gen_autograd,
    "python": gen_python,
    "stubs": gen_stubs,
}


def load(native: str, derivs: str, kernel_sources, kernel_check: bool, cuda: bool,
         conformance_paths=None, shard_names=None, op_headers=None) -> model.Model:
    """Parse and validate everything; raises model.SchemaError.  conformance_paths None:
    the conformance files beside the schema (model.conformance_files)."""
    m = model.load_model(native, conformance=())
    # The conformance files and derivatives.yaml each name entries of the schema: both
    # are checked (and every error of both reported) once the schema is valid.  Malformed
    # metadata fails here too, not only when the tests build.
    messages = []
    try:
        model.load_conformance(m, model.conformance_files(native) if conformance_paths is None
                               else conformance_paths)
        conformance.check(m)
    except model.SchemaError as e:
        messages += e.messages
    if derivs:
        try:
            m.derivatives = derivatives.load_derivatives(derivs, m)
        except model.SchemaError as e:
            messages += e.messages
    if messages:
        raise model.SchemaError(messages)
    # formulas translated once (errors with file:line); the glue and autograd use it
    m.autograd = gen_autograd.plan(m)
    gen_python.check(m)  # the bindings' limits: `check` refuses what `python` would
    if kernel_check:
        model.check_kernels(m, kernel_sources, cuda)
        checks.check_defined(m, kernel_sources)  # the `check:` functions
        # a kernel that dispatches over another entry's declared dtypes
        dtypes_mod.check_kernels(m, kernel_sources, cuda)
    # the dispatch stubs the kernel sources declare and register (runtime/dispatch/ops_stub.h)
    m.stubs = gen_stubs.scan(kernel_sources, cuda)
    # which header / glue shard each kernel and entry goes to (codegen/shards.py)
    m.shards = shards.Plan(m, kernel_sources, shard_names, op_headers)
    return m


def generate(m: model.Model, artifacts, inputs, out_dir: str) -> list:
    """Render the artifacts and write the changed files; returns the names written."""
    files = {}
    for a in artifacts:
        files.update(ARTIFACTS[a].generate(m, inputs))
    return render.write_outputs(out_dir, files)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("artifacts", nargs="+", choices=sorted(ARTIFACTS) + ["all", "check", "op_headers_list"])
    p.add_argument("--native", required=True, help="ops/native_functions.yaml")
    p.add_argument("--derivatives", default="", help="ops/derivatives.yaml")
    p.add_argument("--conformance", nargs="*", default=None,
                   help="ops/conformance/*.yaml (default: the conformance/ folder beside --native)")
    p.add_argument("--out-dir", default=".", help="where generated files go")
    p.add_argument("--kernel-sources", nargs="*", default=[],
                   help="C/CUDA sources and kernel headers: they must define every dispatch kernel, and "
                        "declare and register the dispatch stubs")
    p.add_argument("--shards", nargs="*", default=None,
                   help="the shard names (generated/meson.build: the stems of kernels/**/*.c and *.cu); "
                        "default: derived from --kernel-sources (codegen/shards.py)")
    p.add_argument("--op-headers", nargs="*", default=None,
                   help="the op headers' names (generated/meson.build, from op_headers_list): must be the "
                        "schema's; default: the schema's")
    p.add_argument("--no-kernel-check", action="store_true",
                   help="do not require dispatch kernels to be defined (generator tests)")
    p.add_argument("--cuda", action="store_true", help="the CUDA backend is built: check CUDA kernels too")
    p.add_argument("--time", action="store_true", help="print how long each step took")
    args = p.parse_args(argv)
    # meson passes ../generated/../ops/...: report errors at ../ops/...
    args.native = os.path.normpath(args.native)
    args.derivatives = os.path.normpath(args.derivatives) if args.derivatives else ""

    if args.artifacts == ["op_headers_list"]:
        print("\n".join(shards.list_op_headers(args.native)))
        return 0
    t0 = time.perf_counter()
    try:
        m = load(args.native, args.derivatives, args.kernel_sources, not args.no_kernel_check, args.cuda,
                 args.conformance, args.shards, args.op_headers)
    except model.SchemaError as e:
        for msg in e.messages:
            print(msg, file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{e.filename}:1: {e.strerror}", file=sys.stderr)
        return 1
    t1 = time.perf_counter()
    arts = [a for a in args.artifacts if a not in ("check", "op_headers_list")]
    if "all" in arts:
        arts = list(ARTIFACTS)
    inputs = [args.native] + ([args.derivatives] if args.derivatives else [])
    try:
        written = generate(m, arts, inputs, args.out_dir)
    except model.SchemaError as e:  # load() validates everything a generator needs; kept as a net
        for msg in e.messages:
            print(msg, file=sys.stderr)
        return 1
    t2 = time.perf_counter()
    if args.time:
        print(f"{len(m.functions)} entries: validate {1000 * (t1 - t0):.1f} ms, generate "
              f"{1000 * (t2 - t1):.1f} ms, wrote {len(written)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

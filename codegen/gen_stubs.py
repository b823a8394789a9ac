"""ops_stubs.c: the tables of the dispatch stubs (runtime/dispatch/ops_stub.h).

A driver's header declares a stub with OPS_DECLARE_STUB(name, ret, (params)); each
backend registers its loop with OPS_REGISTER_STUB(name, CPU|CUDA, fn) in its source.
This scans the kernel sources for both and writes one const table per stub, the CUDA
entries compiled only in a CUDA build (as the dispatch table's).  Checked here, with
file:line: every stub has a CPU loop; a registration names a declared stub and a known
device; one (stub, device) is registered once; one stub is declared once."""

import os
import re
from typing import Dict, List, Sequence, Tuple

from . import render
from .model import Errors, Loc, Model, _STRIP_RE, _blank

OUTPUTS = ("ops_stubs.c",)
DEVICES = (("CPU", "OPS_CPU", None), ("CUDA", "OPS_CUDA", "OPS_WITH_CUDA"))

_DECL_RE = re.compile(r"(?<![\w#])OPS_DECLARE_STUB\s*\(\s*(\w+)\s*,")
_REG_RE = re.compile(r"(?<![\w#])OPS_REGISTER_STUB\s*\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)")
_DEFINE_RE = re.compile(r"#\s*define\s+OPS_(DECLARE|REGISTER)_STUB\b")

# The source tree's root: headers are included by their path from it ("kernels/x.h").
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Stub:
    def __init__(self, name: str, header: str, loc: Loc) -> None:
        self.name, self.header, self.loc = name, header, loc
        self.loops: Dict[str, Tuple[str, Loc]] = {}


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def scan(sources: Sequence[str], cuda: bool) -> List[Stub]:
    """The stubs declared and registered in sources; raises SchemaError."""
    errors = Errors()
    stubs: Dict[str, Stub] = {}
    regs = []
    for src in sources:
        with open(src, encoding="utf-8", errors="replace") as f:
            text = _STRIP_RE.sub(_blank, f.read())
        if "OPS_DECLARE_STUB" not in text and "OPS_REGISTER_STUB" not in text:
            continue
        path = os.path.normpath(src)
        for m in _DECL_RE.finditer(text):
            start = text.rfind("\n", 0, m.start()) + 1
            if _DEFINE_RE.match(text, start) or _DEFINE_RE.match(text[start:m.start()].lstrip()):
                continue
            loc = Loc(path, _line(text, m.start()))
            name = m.group(1)
            if name in stubs:
                errors.add(loc, f"stub '{name}' is already declared at {stubs[name].loc}")
                continue
            if not path.endswith((".h", ".cuh")):
                errors.add(loc, f"stub '{name}' is declared in a source file: declare it in the driver's "
                                "header, which the backends and ops_stubs.c include")
                continue
            rel = os.path.relpath(os.path.abspath(src), ROOT)
            stubs[name] = Stub(name, rel, loc)
        for m in _REG_RE.finditer(text):
            regs.append((Loc(path, _line(text, m.start())), m.group(1), m.group(2), m.group(3)))
    keys = [d for d, _, _ in DEVICES]
    for loc, name, dev, fn in regs:
        st = stubs.get(name)
        if st is None:
            errors.add(loc, f"OPS_REGISTER_STUB: no stub '{name}' is declared (OPS_DECLARE_STUB in a "
                            "kernel header)")
            continue
        if dev not in keys:
            errors.add(loc, f"OPS_REGISTER_STUB({name}): unknown device '{dev}' (known: {', '.join(keys)})")
            continue
        if dev == "CUDA" and not cuda:
            continue
        if dev in st.loops:
            errors.add(loc, f"stub '{name}' already has a {dev} loop, {st.loops[dev][0]} at "
                            f"{st.loops[dev][1]}")
            continue
        st.loops[dev] = (fn, loc)
    for st in stubs.values():
        if "CPU" not in st.loops:
            errors.add(st.loc, f"stub '{st.name}' has no CPU loop (OPS_REGISTER_STUB({st.name}, CPU, fn) "
                               "in kernels/cpu/)")
    errors.raise_if_any()
    return sorted(stubs.values(), key=lambda s: s.name)


def generate(model: Model, inputs) -> dict:
    stubs = getattr(model, "stubs", None) or []
    headers = sorted({s.header for s in stubs})
    rows = []
    for st in stubs:
        cells = []
        for key, column, guard in DEVICES:
            if key in st.loops:
                fn, loc = st.loops[key]
                cells.append({"column": column, "fn": fn, "guard": guard,
                              "where": render.display_path(loc.path)})
        rows.append({"name": st.name, "cells": cells})
    text = render.render("ops_stubs.c.j2", banner=render.banner("gen_stubs.py", inputs),
                         headers=headers, rows=rows)
    return {"ops_stubs.c": text}

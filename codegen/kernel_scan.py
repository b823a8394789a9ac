"""Which dispatch kernels the kernel sources define (check_kernels).

Part of the model (codegen/model.py re-exports it)."""

import re
from typing import Dict, Sequence

from .model_types import Errors, Model


# ---- kernel definitions ------------------------------------------------------

_STRIP_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


def _blank(m: "re.Match") -> str:
    s = m.group(0)
    if s[0] in "\"'":
        return s[0] + s[0]
    return re.sub(r"[^\n]", " ", s)  # keep line structure


_CALL_RE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_PAREN_RE = re.compile(r"[()]")
_BRACE_RE = re.compile(r"\s*\{")


def definitions_by_source(sources: Sequence[str], names: Sequence[str]) -> Dict[str, set]:
    """Which of `names` each source defines: `name(...) {` outside comments and
    strings.  (Every identifier followed by `(` is looked up in a set: one regex with
    hundreds of alternatives is fifty times slower.)"""
    wanted = set(names)
    out: Dict[str, set] = {}
    for src in sources:
        found: set = set()
        out[src] = found
        if not wanted:
            continue
        with open(src, encoding="utf-8", errors="replace") as f:
            text = _STRIP_RE.sub(_blank, f.read())
        for m in _CALL_RE.finditer(text):
            name = m.group(1)
            if name not in wanted or name in found:
                continue
            depth, end = 0, None
            for p in _PAREN_RE.finditer(text, m.end() - 1):  # to the matching ')'
                depth += 1 if p.group(0) == "(" else -1
                if depth == 0:
                    end = p.end()
                    break
            if end is not None and _BRACE_RE.match(text, end):
                found.add(name)
    return out


def defined_functions(sources: Sequence[str], names: Sequence[str]) -> set:
    """Which of `names` have a C function definition (`name(...) {`) in `sources`."""
    found: set = set()
    for defined in definitions_by_source(sources, names).values():
        found |= defined
    return found


def check_kernels(model: Model, sources: Sequence[str], check_cuda: bool) -> None:
    """Every dispatch kernel must be defined in a kernel source (CUDA ones only when built)."""
    wanted = []
    for nf in model.functions:
        for key, k in nf.dispatch.items():
            if key == "CUDA" and not check_cuda:
                continue
            wanted.append((nf, key, k))
    found = defined_functions(sources, [k for _, _, k in wanted])
    errors = Errors()
    for nf, key, k in wanted:
        if k not in found:
            errors.add(nf.dispatch_locs[key], f"{nf.name}: dispatch kernel '{k}' ({key}) is not defined "
                                              f"in any kernel source ({len(sources)} scanned)")
    errors.raise_if_any()

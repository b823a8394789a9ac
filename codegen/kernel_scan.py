"""Which dispatch kernels the kernel sources define (check_kernels).

Part of the model (codegen/model.py re-exports it)."""

import re
from typing import Sequence

from .model_types import Errors, Model


# ---- kernel definitions ------------------------------------------------------

_STRIP_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


def _blank(m: "re.Match") -> str:
    s = m.group(0)
    if s[0] in "\"'":
        return s[0] + s[0]
    return re.sub(r"[^\n]", " ", s)  # keep line structure


def defined_functions(sources: Sequence[str], names: Sequence[str]) -> set:
    """Which of `names` have a C function definition (`name(...) {`) in `sources`."""
    if not names:
        return set()
    pat = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(set(names))) + r")\s*\(")
    found = set()
    for src in sources:
        with open(src, encoding="utf-8", errors="replace") as f:
            text = _STRIP_RE.sub(_blank, f.read())
        for m in pat.finditer(text):
            if m.group(1) in found:
                continue
            depth, i = 0, m.end() - 1
            while i < len(text):
                if text[i] == "(":
                    depth += 1
                elif text[i] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            j = i + 1
            while j < len(text) and text[j].isspace():
                j += 1
            if j < len(text) and text[j] == "{":
                found.add(m.group(1))
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

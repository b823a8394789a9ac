"""Where each generated declaration goes, so one schema edit touches few build steps.

A *shard* is named after a kernel source's stem: `kernels/cpu/unary.c`,
`kernels/cuda/unary.cu` and a driver `kernels/unary.c` share the shard `unary`.  The
headers and the glue are split by shard (docs/codegen.md "Shards"):

- a kernel's prototype goes into `ops_kernels_<stem>.h` of each file defining it, so a
  kernel file includes its own shard and sees only its own kernels;
- an entry belongs to the *family* of its kernel (the CPU kernel's file, else the
  composite one's, else the CUDA one's; a delegate takes its target's family): its
  public prototype goes into `ops_functions_<family>.h`, its glue into
  `ops_glue_<family>.c` (with that family's dispatch table), its autograd entry points
  into `ops_autograd_gen_<family>.h`.

A kernel defined in a source whose stem is no shard (the views in runtime/core) is
placed in the `core` shard, as is an entry whose kernel is; a kernel defined in no
scanned source (a CUDA kernel in a CPU-only build; every kernel with
--no-kernel-check and no sources) is *unplaced*: only the umbrella `ops_kernels.h`
declares it.  The umbrellas (`ops_functions.h`, `ops_kernels.h`,
`ops_autograd_gen.h`) include every shard, for code that wants the whole API.

The shard list is fixed when meson configures (generated/meson.build passes it as
--shards: the stems of kernels/**/*.{c,cu,cpp}) and is the same whatever the schema
holds, so adding an op never changes the list of outputs; without --shards it is
derived from --kernel-sources by the same rule (default_shards).
"""

import os
import re
from typing import Dict, Iterable, List, Optional, Sequence

from . import model as _model

CORE = "core"
SOURCE_EXTS = (".c", ".cu", ".cpp")
_SHARD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The backends' preference for naming an entry's family (a CPU loop file names it).
_FAMILY_KEYS = ("CPU", "CompositeExplicitAutograd", "CUDA")


def stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _is_kernel_file(src: str) -> bool:
    """A C/CUDA source in a `kernels` folder (kernels/, kernels/cpu/, kernels/cuda/)."""
    parts = os.path.normpath(src).replace(os.sep, "/").split("/")
    return "kernels" in parts[:-1] and src.endswith(SOURCE_EXTS)


def default_shards(sources: Sequence[str]) -> List[str]:
    """The stems of the kernel files, plus `core`, sorted."""
    return sorted({CORE} | {stem(src) for src in sources if _is_kernel_file(src)})


def check_names(names: Iterable[str]) -> List[str]:
    """The --shards list, validated (each a C identifier; `core` is always there)."""
    out = set(names) | {CORE}
    bad = sorted(n for n in out if not _SHARD_RE.match(n))
    if bad:
        raise _model.SchemaError([f"--shards: '{bad[0]}' is not a valid shard name (a C identifier)"])
    return sorted(out)


class Plan:
    """Shard of every kernel and family of every entry (computed once per run)."""

    def __init__(self, m: "_model.Model", sources: Sequence[str], names: Optional[Sequence[str]]):
        self.names = check_names(default_shards(sources) if names is None else names)
        known = set(self.names)
        # (the `check:` functions are placed as kernels are: codegen/checks.py)
        kernels = sorted({k for nf in m.functions for k in nf.dispatch.values()}
                         | {nf.check for nf in m.functions if nf.check is not None})
        # kernel -> sorted shards of the files defining it ([] if unplaced)
        where: Dict[str, set] = {}
        for src, defined in _model.definitions_by_source(sources, kernels).items():
            s = stem(src) if _is_kernel_file(src) and stem(src) in known else CORE
            for k in defined:
                where.setdefault(k, set()).add(s)
        self.kernel_shards: Dict[str, List[str]] = {k: sorted(where.get(k, ())) for k in kernels}
        self.family: Dict[int, str] = {}
        for nf in m.functions:
            if nf.dispatch:
                self.family[id(nf)] = self._family_of(nf)
        for nf in m.functions:
            if not nf.dispatch:
                target = nf.delegate or nf.reduce_target
                self.family[id(nf)] = self.family.get(id(target), CORE) if target is not None else CORE

    def _family_of(self, nf) -> str:
        for key in _FAMILY_KEYS:
            k = nf.dispatch.get(key)
            if k is not None and self.kernel_shards.get(k):
                return self.kernel_shards[k][0]
        return CORE

    def of(self, nf) -> str:
        return self.family[id(nf)]


def plan(m: "_model.Model") -> Plan:
    """The model's plan (gen.load computes it; generators run by hand on a bare model
    get the no-sources plan: everything in `core`)."""
    p = getattr(m, "shards", None)
    if p is None:
        p = Plan(m, (), None)
        m.shards = p
    return p


def scan_names(text: str, names: Dict[str, str]) -> List[str]:
    """The sorted shards of the identifiers of `names` (identifier -> shard) that the
    C text uses: a generated file includes only the headers it needs."""
    found = set()
    for ident in re.findall(r"\bops_[A-Za-z0-9_]+", text):
        s = names.get(ident)
        if s is not None:
            found.add(s)
    return sorted(found)


def public_names(m: "_model.Model") -> Dict[str, str]:
    """C name of every public function -> its family."""
    p = plan(m)
    return {nf.func.c_name: p.of(nf) for nf in m.functions}

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
holds; without --shards it is derived from --kernel-sources by the same rule
(default_shards).

Finer still, for the in-tree code that calls a few ops (the runtime, the tests, the
benches and the Python module): one *op header* per op name, `ops_op_<name>.h`,
declaring the public functions of every entry of that name and of its in-place form
(`add.Tensor`, `add.out`, `add_.Tensor`, ... in `ops_op_add.h`; op_header_name).  A
file that calls `neg` includes `ops_op_neg.h` and is not recompiled when an op is
added to the `unary` family; the family shards keep declaring the same functions (for
the glue, the kernel drivers and users: they are the installed ones), and the op
headers are internal to the build.  Their list follows the schema: meson lists the
op names when it configures (`gen.py op_headers_list`: list_op_headers; the schema is
a configure dependency) and passes them as --op-headers, which must match the
schema's.
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


def op_header_name(name: str) -> str:
    """The op header's name of an entry's schema name: the in-place form `add_` shares
    `add`'s header (`ops_op_add.h`); a dunder name (`__and__`) is its own."""
    return name[:-1] if name.endswith("_") and not name.endswith("__") else name


def op_header_names(m: "_model.Model") -> List[str]:
    """The op headers' names of a schema, sorted."""
    return sorted({op_header_name(nf.func.name) for nf in m.functions})


def check_op_headers(m: "_model.Model", given: Optional[Sequence[str]]) -> List[str]:
    """The op headers to write: the schema's, which --op-headers (the outputs meson
    declared when it configured) must list exactly."""
    names = op_header_names(m)
    if given is not None and sorted(set(given)) != names:
        extra = sorted(set(given) - set(names))
        missing = sorted(set(names) - set(given))
        what = (f"ops_op_{missing[0]}.h is not listed" if missing
                else f"ops_op_{extra[0]}.h names no op of the schema")
        raise _model.SchemaError([f"--op-headers: {what} (meson lists the op headers when it configures: "
                                  f"run `meson setup --reconfigure` on the build directory)"])
    return names


class Plan:
    """Shard of every kernel and family of every entry (computed once per run)."""

    def __init__(self, m: "_model.Model", sources: Sequence[str], names: Optional[Sequence[str]],
                 op_headers: Optional[Sequence[str]] = None):
        self.op_headers = check_op_headers(m, op_headers)
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


_FUNC_LINE = re.compile(r"^- func:\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)", re.M)


def list_op_headers(native: str) -> List[str]:
    """The op headers' names of the schema file (`gen.py op_headers_list`, which
    generated/meson.build runs when meson configures).  A schema that does not parse
    still lists what its `- func:` lines name, so that meson configures and the
    generator's run reports the errors with file:line, as for any schema edit."""
    try:
        return op_header_names(_model.load_model(native, conformance=()))
    except _model.SchemaError:
        with open(native, encoding="utf-8") as f:
            return sorted({op_header_name(n) for n in _FUNC_LINE.findall(f.read())})

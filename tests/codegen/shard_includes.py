#!/usr/bin/env python3
"""The generated-header includes of the in-tree code: shards and op headers, never an umbrella.

Every schema edit rewrites the umbrella headers (`ops_functions.h`, `ops_kernels.h`,
`ops_autograd_gen.h`, and `libops.h`, which includes the first), so a file that
includes one is recompiled whenever an op is added anywhere (docs/codegen.md "The edit
loop").  The runtime, tests, benchmarks and Python bindings therefore include the
generated headers whose declarations their own text uses, as the kernels do
(docs/codegen.md "Shards"): for the public functions the op header of each op called
(`ops_op_<name>.h`, codegen/shards.py), finer than the family shard, which every op
added to the family rewrites; for kernels and autograd entry points the shards.
`libops.h` stays for users' programs (examples/, tests/newop/use_logit.c, which stands
for one), and the kernel files keep their families' shards (a family's files are
recompiled for its new op anyway).

    shard_includes.py --generated BUILD/generated [--source-root DIR] (--check | --fix)

--check (a meson test, `shard_includes`) fails, naming the file and what to change,
when a file includes an umbrella without using what only the umbrella declares (the
autograd formula tables: a file may declare those itself), or lacks a shard it uses (it would compile only
through another header's includes) or includes one it does not use; --fix rewrites
the includes in place: the shard includes of a file go where its first generated
include (or its first local include) was, and `libops.h` becomes the hand-written
public headers it includes.  The header of each name is read from the generated
headers of the build given (the identifiers each declares or #defines; a public
function's is its op header).
"""
import argparse
import glob
import os
import re
import sys

# What the runtime, tests, benches and the Python module are made of (examples/ and
# the newop fixture use libops.h as a user does).
SCOPE = ('runtime/*/*.c', 'runtime/*/*.h', 'runtime/*/*/*.c', 'runtime/*/*/*.h',
         'tests/unit/*.c', 'tests/unit/*.h', 'tests/conformance/*.c', 'tests/conformance/*.h',
         'tests/codegen/*.c', 'tests/fuzz/*.c', 'tests/fuzz/*.h', 'bench/*.c', 'bench/*.h',
         'python/src/*.c', 'python/src/*.h')
UMBRELLAS = {'ops_functions.h': 'functions', 'ops_kernels.h': 'kernels',
             'ops_autograd_gen.h': 'autograd_gen'}
GEN_INC = re.compile(r'^#include "((?:libops|ops_op_\w+|ops_(?:functions|kernels|autograd_gen)(?:_\w+)?)\.h)"[^\n]*\n',
                     re.M)
LOCAL_INC = re.compile(r'^#include "([^"]+)"[^\n]*\n', re.M)
PP_COND = re.compile(r'^#\s*(if|ifdef|ifndef|endif)\b', re.M)
STRIP = re.compile(r'"(?:\\.|[^"\\\n])*"|/\*.*?\*/|//[^\n]*', re.S)
SHARD_NAME = re.compile(r'ops_(functions|kernels|autograd_gen)_(\w+)\.h$')
OP_HEADER = re.compile(r'ops_op_(\w+)\.h$')


def header_kind(name):
    """The kind of declarations a shard or op header holds (None: neither)."""
    if OP_HEADER.match(name):
        return 'functions'
    m = SHARD_NAME.match(name)
    return m.group(1) if m else None


def libops_h_parts(root):
    """The headers libops.h includes, but the generated umbrella."""
    text = open(os.path.join(root, 'include/libops/libops.h')).read()
    return [h for h in re.findall(r'^#include "([^"]+)"', text, re.M) if h not in UMBRELLAS]


def shard_map(gen):
    """identifier -> shard header, for each kind (a public function's: its op header,
    read first)."""
    decl = {}
    heads = sorted(glob.glob(os.path.join(gen, 'ops_*_*.h')))
    for h in sorted(heads, key=lambda h: not OP_HEADER.match(os.path.basename(h))):
        name = os.path.basename(h)
        if header_kind(name) is None:
            continue
        text = STRIP.sub(' ', open(h).read())
        for ident in re.findall(r'\b([A-Za-z_]\w*)\s*\(', text) + re.findall(r'#define\s+(\w+)', text):
            if not ident.startswith('OPS_GENERATED'):
                decl.setdefault(ident, name)
    return decl


def umbrella_map(gen):
    """identifier -> umbrella header, for what an umbrella declares itself (the autograd
    formula tables) rather than through its shards."""
    decl = {}
    for name in UMBRELLAS:
        path = os.path.join(gen, name)
        if os.path.exists(path):
            text = STRIP.sub(' ', open(path).read())
            for ident in re.findall(r'\b([A-Za-z_]\w*)\s*(?:\[|\(|;)', text):
                if ident.startswith('ops_'):
                    decl.setdefault(ident, name)
    return decl


def kinds_of(name):
    """The kinds of generated declarations an include brings."""
    if name == 'libops.h':
        return {'functions'}
    if name in UMBRELLAS:
        return {UMBRELLAS[name]}
    k = header_kind(name)
    return {k} if k else set()


def reachable_kinds(path, files, seen=None):
    """Kinds of generated headers a file sees, through the in-scope headers it includes."""
    seen = set() if seen is None else seen
    if path in seen:
        return set()
    seen.add(path)
    text = files[path]
    out = set()
    for inc in LOCAL_INC.findall(text):
        out |= kinds_of(inc)
        sib = os.path.join(os.path.dirname(path), inc)
        if sib in files:
            out |= reachable_kinds(sib, files, seen)
    return out


EXTERN = re.compile(r'\bextern\b[^;(]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*;')


def declared_here(path, files, seen=None):
    """Names declared `extern` (data) by the file or the in-scope headers it includes."""
    seen = set() if seen is None else seen
    if path in seen:
        return set()
    seen.add(path)
    out = set(EXTERN.findall(STRIP.sub(' ', files[path])))
    for inc in LOCAL_INC.findall(files[path]):
        sib = os.path.join(os.path.dirname(path), inc)
        if sib in files:
            out |= declared_here(sib, files, seen)
    return out


def wanted(path, files, decl, kinds):
    body = STRIP.sub(' ', GEN_INC.sub('', files[path]))
    used = set(re.findall(r'\b[A-Za-z_]\w*\b', body))
    # names the file, or a header of here it includes, declares itself need no header
    used -= declared_here(path, files)
    return sorted({decl[u] for u in used if u in decl and
                   (decl[u] in UMBRELLAS or header_kind(decl[u]) in kinds)})


def rewrite(path, files, decl, parts):
    src = files[path]
    # every file here uses the public API; kernels and autograd entry points only
    # where the file (or a header it includes) asked for them
    kinds = reachable_kinds(path, files) | {'functions'}
    need = wanted(path, files, decl, kinds)
    incs = GEN_INC.findall(src)
    if not need and not incs:
        return src
    present = set(LOCAL_INC.findall(src))
    lines = []
    if 'libops.h' in incs:
        lines += [f'#include "{h}"\n' for h in parts if h not in present]
    lines += [f'#include "{h}"\n' for h in need]
    m = GEN_INC.search(src)
    if m is not None:
        pos = m.start()
    else:
        # after the last local include outside any #if block (the headers that
        # brought the kinds; a shard inside `#ifdef OPS_CUDA_EMULATION` would vanish
        # from the other build)
        pos = None
        for inc in LOCAL_INC.finditer(src):
            depth = 0
            for d in PP_COND.finditer(src, 0, inc.start()):
                depth += 1 if d.group(1).startswith('if') else -1
            if depth == 0:
                pos = inc.end()
        if pos is None:
            raise SystemExit(f"shard_includes: {path}: no #include outside an #if block to follow")
    head, tail = src[:pos], src[pos:]
    tail = GEN_INC.sub('', tail)
    return head + ''.join(lines) + tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--generated', required=True)
    ap.add_argument('--source-root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument('--check', action='store_true')
    mode.add_argument('--fix', action='store_true')
    a = ap.parse_args()
    root = os.path.normpath(a.source_root)
    decl = shard_map(a.generated)
    for ident, h in umbrella_map(a.generated).items():
        decl.setdefault(ident, h)
    if not decl:
        print(f'shard_includes: no generated shard headers in {a.generated}', file=sys.stderr)
        return 1
    parts = libops_h_parts(root)
    paths = sorted({os.path.relpath(p, root) for pat in SCOPE for p in glob.glob(os.path.join(root, pat))})
    files = {p: open(os.path.join(root, p)).read() for p in paths}
    bad = 0
    for p in paths:
        new = rewrite(p, files, decl, parts)
        if new == files[p]:
            continue
        if a.fix:
            with open(os.path.join(root, p), 'w') as f:
                f.write(new)
            print(f'{p}: {GEN_INC.findall(files[p])} -> {GEN_INC.findall(new)}')
        else:
            bad += 1
            print(f'{p}: includes {GEN_INC.findall(files[p]) or "no generated header"}, '
                  f'should include {GEN_INC.findall(new)} (the shards of the names it uses; '
                  f'tests/codegen/shard_includes.py --fix rewrites them)', file=sys.stderr)
    if a.check:
        print(f'shard_includes: {len(paths)} files, {bad} to fix')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

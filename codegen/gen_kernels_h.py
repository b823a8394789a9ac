"""ops_kernels.h and its shards: the prototype of every kernel named in a `dispatch:`
map, so a kernel that does not match its schema fails to compile (docs/codegen.md).

ops_kernels_<stem>.h declares the kernels defined in the kernel files of that stem
(codegen/shards.py): a kernel file includes its own shard, and adding a kernel
elsewhere does not rebuild it.  ops_kernels.h includes every shard and declares the
kernels no scanned source defines (CUDA kernels in a CPU-only build).  Beside each
entry's prototypes: the dtype set its `dtypes:` declares, as the kernel sees it
(codegen/gen_dtypes_h.py).  An entry whose kernels live in two stems has its set in
both shards: the definitions are the same tokens, which C and C++ allow.  An entry's
`check:` function is declared in the shard of the file defining it, as a kernel is
(codegen/checks.py), without a dtype set there unless a kernel of the entry lives in
that file too."""

from . import checks, cnames, gen_dtypes_h, render, shards
from .model import DISPATCH_KEYS, Model


def generate(model: Model, inputs) -> dict:
    plan = shards.plan(model)
    by_shard = {n: [] for n in plan.names}
    unplaced = []
    seen = set()
    for nf in model.functions:
        if not nf.dispatch:
            continue
        ret = cnames.kernel_return_type(nf)
        ps = cnames.param_list(cnames.kernel_params(nf))
        per = {}  # shard -> kernels of this entry declared there
        for key in DISPATCH_KEYS:  # a fixed order, whatever the YAML's
            k = nf.dispatch.get(key)
            if k is None or k in seen:
                continue
            seen.add(k)
            kernel = {"key": key, "prototype": cnames.decl(ret, k) + "(" + ps + ")"}
            for s in plan.kernel_shards.get(k) or [None]:
                per.setdefault(s, []).append(kernel)
        checks.add_prototype(nf, plan, per, seen)
        for s, kernels in per.items():
            op = {
                "schema": cnames.c_comment(nf.schema_text),
                "how": f"structured, meta: {nf.meta}" if nf.structured else "dispatch",
                "reduction": nf.reduce_target is not None,
                "kernels": kernels,
                # (not beside a `check:` prototype alone: a check reads no dtype set)
                "dtypes": gen_dtypes_h.entry_set(nf) if any(k["key"] != "check" for k in kernels) else None,
            }
            (unplaced if s is None else by_shard[s]).append(op)
    banner = render.banner("gen_kernels_h.py", inputs)
    out = {"ops_kernels.h": render.render("ops_kernels.h.j2", banner=banner, shards=plan.names, ops=unplaced)}
    for name, ops in by_shard.items():
        out[f"ops_kernels_{name}.h"] = render.render("ops_kernels_shard.h.j2", banner=banner, shard=name,
                                                     guard=f"OPS_GENERATED_KERNELS_{name.upper()}_H", ops=ops)
    return out

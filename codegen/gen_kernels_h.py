"""ops_kernels.h: the prototype of every kernel named in a `dispatch:` map, so a
kernel that does not match its schema fails to compile (docs/codegen.md)."""

from . import cnames, render
from .model import DISPATCH_KEYS, Model

OUTPUTS = ("ops_kernels.h",)


def generate(model: Model, inputs) -> dict:
    ops, seen = [], set()
    for nf in model.functions:
        if not nf.dispatch:
            continue
        ret = cnames.kernel_return_type(nf)
        ps = cnames.param_list(cnames.kernel_params(nf))
        kernels = []
        for key in DISPATCH_KEYS:  # a fixed order, whatever the YAML's
            k = nf.dispatch.get(key)
            if k is None or k in seen:
                continue
            seen.add(k)
            kernels.append({"key": key, "prototype": cnames.decl(ret, k) + "(" + ps + ")"})
        if kernels:
            ops.append({
                "schema": cnames.c_comment(nf.schema_text),
                "how": f"structured, meta: {nf.meta}" if nf.structured else "dispatch",
                "kernels": kernels,
            })
    text = render.render("ops_kernels.h.j2", banner=render.banner("gen_kernels_h.py", inputs), ops=ops)
    return {"ops_kernels.h": text}

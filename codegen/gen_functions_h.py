"""ops_functions.h and its shards: the public prototype of every entry, its schema as
its comment.  ops_functions_<family>.h holds one family's entries (codegen/shards.py);
ops_functions.h includes every shard (libops.h includes it), so code that names a few
ops includes only their families' shards and is not rebuilt when another family's
entry is added."""

from . import cnames, render, shards
from .model import Model


def generate(model: Model, inputs) -> dict:
    plan = shards.plan(model)
    by_shard = {n: [] for n in plan.names}
    for nf in model.functions:
        by_shard[plan.of(nf)].append({
            "schema": cnames.c_comment(nf.schema_text),
            "kind": nf.kind,
            "prototype": cnames.prototype(nf.func),
        })
    banner = render.banner("gen_functions_h.py", inputs)
    out = {"ops_functions.h": render.render("ops_functions.h.j2", banner=banner, shards=plan.names)}
    for name, functions in by_shard.items():
        out[f"ops_functions_{name}.h"] = render.render("ops_functions_shard.h.j2", banner=banner, shard=name,
                                                       guard=f"OPS_GENERATED_FUNCTIONS_{name.upper()}_H",
                                                       functions=functions)
    return out

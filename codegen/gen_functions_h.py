"""ops_functions.h and its shards: the public prototype of every entry, its schema as
its comment.  ops_functions_<family>.h holds one family's entries (codegen/shards.py);
ops_functions.h includes every shard (libops.h includes it), so code that names a few
ops includes only their families' shards and is not rebuilt when another family's
entry is added.  ops_op_<name>.h declares the entries of one op name (and its in-place
form) again, for the in-tree code that calls a few ops (codegen/shards.py): adding an
op to a family rewrites the family's shard and its own op header, not the headers of
the ops beside it."""

from . import cnames, render, shards
from .model import Model


def generate(model: Model, inputs) -> dict:
    plan = shards.plan(model)
    by_shard = {n: [] for n in plan.names}
    by_op = {n: [] for n in plan.op_headers}
    families = {n: [] for n in plan.op_headers}
    for nf in model.functions:
        f = {
            "schema": cnames.c_comment(nf.schema_text),
            "kind": nf.kind,
            "prototype": cnames.prototype(nf.func),
        }
        by_shard[plan.of(nf)].append(f)
        op = shards.op_header_name(nf.func.name)
        by_op[op].append(f)
        if plan.of(nf) not in families[op]:
            families[op].append(plan.of(nf))
    banner = render.banner("gen_functions_h.py", inputs)
    out = {"ops_functions.h": render.render("ops_functions.h.j2", banner=banner, shards=plan.names)}
    for name, functions in by_shard.items():
        out[f"ops_functions_{name}.h"] = render.render("ops_functions_shard.h.j2", banner=banner, shard=name,
                                                       guard=f"OPS_GENERATED_FUNCTIONS_{name.upper()}_H",
                                                       functions=functions)
    for name, functions in by_op.items():
        out[f"ops_op_{name}.h"] = render.render("ops_op.h.j2", banner=banner, name=name,
                                                guard=f"OPS_GENERATED_OP_{name.upper()}_H",
                                                families=sorted(families[name]), functions=functions)
    return out

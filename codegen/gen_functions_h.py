"""ops_functions.h: the public prototype of every entry, its schema as its comment."""

from . import cnames, render
from .model import Model

OUTPUTS = ("ops_functions.h",)


def generate(model: Model, inputs) -> dict:
    functions = [{
        "schema": cnames.c_comment(nf.schema_text),
        "kind": nf.kind,
        "prototype": cnames.prototype(nf.func),
    } for nf in model.functions]
    text = render.render("ops_functions.h.j2",
                         banner=render.banner("gen_functions_h.py", inputs),
                         functions=functions)
    return {"ops_functions.h": text}

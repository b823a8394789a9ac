"""ops_op_ids.h and ops_dispatch.c: op ids, kernel pointer types and the static
[op][device type] table of kernels the glue indexes (no hashing, no strings)."""

from . import cnames, render
from .model import Model

OUTPUTS = ("ops_op_ids.h", "ops_dispatch.c")

# Table columns, in ops_device_type order; CUDA entries are compiled only with CUDA.
COLUMNS = (("CPU", "OPS_CPU", None), ("CUDA", "OPS_CUDA", "OPS_WITH_CUDA"))
COMPOSITE = "CompositeExplicitAutograd"


def generate(model: Model, inputs) -> dict:
    ids, fns, rows = [], [], []
    for nf in model.functions:
        ids.append({"id": cnames.op_id(nf), "name": nf.name})
        if not nf.dispatch:
            continue
        fns.append({
            "type": cnames.kernel_fn_type(nf),
            "ret": cnames.kernel_return_type(nf),
            "params": cnames.param_list(cnames.kernel_params(nf)),
            "name": nf.name,
        })
        cells = []
        for key, column, guard in COLUMNS:
            # A backend key overrides the composite kernel in its own column.
            k = nf.dispatch.get(key) or nf.dispatch.get(COMPOSITE)
            if k is not None:
                composite = key not in nf.dispatch
                cells.append({"column": column, "kernel": k,
                              "guard": None if composite else guard})
        rows.append({"id": cnames.op_id(nf), "name": nf.name, "cells": cells})
    b_h = render.banner("gen_dispatch.py", inputs)
    return {
        "ops_op_ids.h": render.render("ops_op_ids.h.j2", banner=b_h, ids=ids, fns=fns),
        "ops_dispatch.c": render.render("ops_dispatch.c.j2", banner=b_h, rows=rows,
                                        ncolumns=len(COLUMNS)),
    }

"""The dispatch tables: one static [op][device type] table of kernels per glue shard
(rendered into ops_glue_<family>.c by gen_glue.py, with that family's op ids and
kernel pointer types: no hashing, no strings), and what every shard shares:
ops_glue.h (the table's element type, the no-kernel error, the device helpers for
Tensor[] arguments) and ops_dispatch.c (their definitions).  Neither of these two
depends on the schema, so adding an op rebuilds only its own family's glue."""

from typing import List

from . import cnames, render
from .model import Model, NativeFunction

OUTPUTS = ("ops_glue.h", "ops_dispatch.c")

# Table columns, in ops_device_type order; CUDA entries are compiled only with CUDA.
COLUMNS = (("CPU", "OPS_CPU", None), ("CUDA", "OPS_CUDA", "OPS_WITH_CUDA"))
COMPOSITE = "CompositeExplicitAutograd"


def table(entries: List[NativeFunction]) -> dict:
    """Template values of one shard's table: op ids, kernel pointer types, rows (the
    entries with a dispatch: map among `entries`, in order)."""
    ids, fns, rows = [], [], []
    for nf in entries:
        if not nf.dispatch:
            continue
        ids.append({"id": cnames.op_id(nf), "name": nf.name})
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
                cells.append({"column": column, "kernel": k, "key": COMPOSITE if composite else key,
                              "guard": None if composite else guard})
        rows.append({"id": cnames.op_id(nf), "name": nf.name, "cells": cells})
    return {"ids": ids, "fns": fns, "rows": rows}


def generate(model: Model, inputs) -> dict:
    b_h = render.banner("gen_dispatch.py", inputs)
    return {
        "ops_glue.h": render.render("ops_glue.h.j2", banner=b_h),
        "ops_dispatch.c": render.render("ops_dispatch.c.j2", banner=b_h, ncolumns=len(COLUMNS)),
    }

"""ops_dtypes.h: the dtype set of every kernel entry's `dtypes:` declaration as an
X-macro, so the CPU and CUDA kernels dispatch over what the schema declares instead of
naming a set of their own (docs/codegen.md "Dtypes").

For entry X (its C name without `ops_`, upper-case: `exp.out` is EXP_OUT):

    OPS_DTYPES_X(M, ...)  expands to M(FLOAT16, ...) M(BFLOAT16, ...) ..., one per dtype
                          the kernel sees (the DTYPE of OPS_CASE_<DTYPE>);
    OPS_DTYPE_MASK_X      the same set as OPS_DTYPE_BIT()s;
    OPS_DISPATCH_DECLARED(X, dt, "name", body)
                          OPS_DISPATCH_CASES (runtime/dispatch/ops_dispatch.h) over that set.

The set a structured kernel sees is the declared input set as its meta family hands it
over: a unary_float/binary_float kernel gets integral and bool inputs converted to the
default float dtype (codegen/dtypes.py kernel_dtypes).  An entry without `dtypes:` has
every dtype.  A header of its own, from its own small run, so that an edit of a
declaration rebuilds the kernels that dispatch over declarations and nothing else.
"""

from . import render
from . import dtypes as dtypes_mod
from .model import Model

OUTPUTS = ("ops_dtypes.h",)


def macro_name(nf) -> str:
    """EXP_OUT for exp.out: the entry's C name without `ops_`, upper-case."""
    return nf.c_name[len("ops_"):].upper()


def generate(model: Model, inputs) -> dict:
    entries = []
    for nf in model.functions:
        if not nf.dispatch:
            continue
        accept = nf.dtypes.accept if nf.dtypes is not None else dtypes_mod.DTYPES
        seen = dtypes_mod.kernel_dtypes(accept, nf.meta) if nf.structured else accept
        entries.append({
            "name": nf.name,
            "macro": macro_name(nf),
            "how": f"meta: {nf.meta}" if nf.structured else "dispatch",
            "declared": ", ".join(accept) if nf.dtypes is not None else "every dtype (no dtypes:)",
            "seen": ", ".join(seen),
            "cases": [dtypes_mod.C_NAMES[d] for d in seen],
            "mask": dtypes_mod.mask_expr(seen),
        })
    text = render.render("ops_dtypes.h.j2", banner=render.banner("gen_dtypes_h.py", inputs), entries=entries)
    return {"ops_dtypes.h": text}

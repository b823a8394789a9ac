"""The dtype set of a kernel entry's `dtypes:` declaration as an X-macro, emitted into
the generated kernel header of the file that defines the kernel (ops_kernels_<stem>.h,
codegen/gen_kernels_h.py), so the CPU and CUDA kernels dispatch over what the schema
declares instead of naming a set of their own (docs/codegen.md "Dtypes").  A kernel
file already includes its own shard, and an added op rewrites only its family's.

For entry X (its C name without `ops_`, upper-case: `exp.out` is EXP_OUT):

    OPS_DTYPES_X(M, ...)  expands to M(FLOAT16, ...) M(BFLOAT16, ...) ..., one per dtype
                          the kernel sees (the DTYPE of OPS_CASE_<DTYPE>);
    OPS_DTYPE_MASK_X      the same set as OPS_DTYPE_BIT()s;

and OPS_DISPATCH_DECLARED(X, dt, "name", body) (runtime/dispatch/ops_dispatch.h) is
OPS_DISPATCH_CASES over that set.

The set a structured kernel sees is the declared input set as its meta family hands it
over: a unary_float/binary_float kernel gets integral and bool inputs converted to the
default float dtype (codegen/dtypes.py kernel_dtypes).  An entry without `dtypes:` has
every dtype.
"""

from . import dtypes as dtypes_mod


def macro_name(nf) -> str:
    """EXP_OUT for exp.out: the entry's C name without `ops_`, upper-case."""
    return nf.c_name[len("ops_"):].upper()


def entry_set(nf) -> dict:
    """What the kernel header writes for one kernel entry."""
    accept = nf.dtypes.accept if nf.dtypes is not None else dtypes_mod.DTYPES
    seen = dtypes_mod.kernel_dtypes(accept, nf.meta) if nf.structured else accept
    return {
        "macro": macro_name(nf),
        "declared": ", ".join(accept) if nf.dtypes is not None else "every dtype (no dtypes:)",
        "seen": ", ".join(seen),
        "cases": [dtypes_mod.C_NAMES[d] for d in seen],
        "mask": dtypes_mod.mask_expr(seen),
    }

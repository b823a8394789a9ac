"""Which plain entries (`dispatch:` without `structured`) declare dtypes (`dtypes:`)
that their generated glue does not refuse before the kernel (docs/codegen.md "Dtypes").

    python3 tests/codegen/dtype_glue_coverage.py [--list]

prints the count (and with --list, each entry and why).  test_codegen_dtypes.py asserts
that these are exactly the entries of EXCEPTIONS, so the count cannot grow: a new plain
entry with a narrower set must say `of:` (with a `check:` for the argument errors the
op gives before the dtype), and an entry converted is taken off the list.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("OPS_SOURCE_ROOT") or os.path.dirname(os.path.dirname(HERE))

_SS_SCALAR = ("the dtype checked is the promotion of the boundaries with the Scalar self made a 0-dim tensor "
              "(bool boundaries and the int 1 compare in int64, as PyTorch's), which `of:` cannot name "
              "(kernels/search.c ss_check)")
_SVD = ("the driver checks the input's dimensions (2-D, the dim pair) before the dtype "
        "(kernels/cpu/linalg.c svd_dims); CPU only")
EXCEPTIONS = {
    **{n: _SS_SCALAR for n in ("searchsorted.Scalar", "searchsorted.Scalar_out", "bucketize.Scalar",
                               "bucketize.Scalar_out")},
    "norm.str": ("declared floating, what p='fro' accepts (linalg_vector_norm's); its refusals follow p: "
                 "'fro' refuses the dtype first, 'nuc' checks dtype= and dim, then nuclear_norm the input's "
                 "dimensions before the dtype, each in its own words (kernels/reduce_norm.c norm_str_impl)"),
    **{n: _SVD for n in ("nuclear_norm", "nuclear_norm.dim", "_linalg_polar")},
    "adaptive_max_pool1d": ("CompositeExplicitAutograd over adaptive_max_pool2d, whose glue refuses the dtype "
                            "naming adaptive_max_pool2d; a glue check would name adaptive_max_pool1d instead"),
}


def unchecked(model):
    """The plain entries with a declared set narrower than every dtype that their glue
    does not check (codegen/dtypes.py glue_checked), in schema order."""
    from codegen import dtypes as dtypes_mod
    return [nf for nf in model.functions
            if nf.dispatch and not nf.is_structured_path and nf.reduce_target is None
            and nf.dtypes is not None and not nf.dtypes.everything and not dtypes_mod.glue_checked(nf)]


def main(argv):
    sys.path.insert(0, ROOT)
    from codegen import gen
    m = gen.load(os.path.join(ROOT, "ops", "native_functions.yaml"), os.path.join(ROOT, "ops", "derivatives.yaml"),
                 [], False, False)
    plain = [nf for nf in m.functions if nf.dispatch and not nf.is_structured_path and nf.reduce_target is None]
    left = unchecked(m)
    print(f"{len(plain)} plain entries, {len(left)} with a declared set their glue does not check")
    if "--list" in argv:
        for nf in left:
            print(f"  {nf.name}: {EXCEPTIONS.get(nf.name, '(no reason listed)')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

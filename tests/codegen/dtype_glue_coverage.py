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
_RANDINT = ("declared numeric, but the kernel accepts bool as PyTorch does (torch.randint(0, 2, (3,), "
            "dtype=torch.bool)) and checks low/high first: the declaration would have to widen to every "
            "dtype, with conformance samples of bool")
_MULTINOMIAL = ("its refusal names the dtype in PyTorch's own words ('multinomial only supports "
                "floating-point dtypes for input, got: int64'), which a fixed `message:` cannot say")

EXCEPTIONS = {
    "einsum": ("declared numeric, but the kernel accepts one bool operand (a sum gives int64, a copy bool) "
               "and refuses several in its own words, after the operands' same-dtype check; and `of:` cannot "
               "name a Tensor[] (kernels/einsum.c)"),
    "scatter_reduce.two": ("declared numeric, but the kernel accepts bool for reduce sum/prod/amax/amin as "
                           "PyTorch does (torch.scatter_reduce of bool tensors) and checks reduce, dim, index and "
                           "src first: the declaration would have to widen to every dtype, with conformance "
                           "samples of bool"),
    "repeat_interleave.Tensor": ("its refusal names the dtype in PyTorch's own words ('repeats has to be Long or "
                                 "Int tensor, but got float32'), after repeats' rank, which a fixed `message:` "
                                 "cannot say"),
    **{n: _SS_SCALAR for n in ("searchsorted.Scalar", "searchsorted.Scalar_out", "bucketize.Scalar",
                               "bucketize.Scalar_out")},
    "norm.str": ("declared [float32, float64], narrower than what p='fro' accepts (the half dtypes, through "
                 "linalg_vector_norm); p='nuc' checks p and dtype= first"),
    **{n: _SVD for n in ("nuclear_norm", "nuclear_norm.dim", "_linalg_polar")},
    "adaptive_max_pool1d": ("CompositeExplicitAutograd over adaptive_max_pool2d, whose glue refuses the dtype "
                            "naming adaptive_max_pool2d; a glue check would name adaptive_max_pool1d instead"),
    **{n: _RANDINT for n in ("randint", "randint.low", "randint.out", "randint.generator_out", "randint.low_out",
                             "randint.low_generator_out", "randint_like", "randint_like.low_dtype")},
    **{n: _MULTINOMIAL for n in ("multinomial", "multinomial.out")},
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

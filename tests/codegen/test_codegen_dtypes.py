"""Tests of `dtypes:` on entries with a plain kernel (docs/codegen.md "Dtypes"): the
glue's check before dispatch where the entry says which arguments (`of:`), the
refusals of a malformed `of:`, and that a kernel names its own entry's declared set
(OPS_DTYPE_MASK_<ENTRY>), in the fixtures and in the real schema and kernels.

Run by meson (tests/codegen/meson.build) with Debian's python3.
"""

import re

from codegen_test_base import *  # noqa: F401,F403 (paths, fixtures, run_gen)
from codegen_test_base import dtypes_mod, gen  # noqa: F401

# a plain entry beside the fixture kernels (tests/codegen/fixtures/kernels.c defines
# zeros_cpu, whose signature a second entry may not change: so a kernel of our own)
PLAIN = """\
- func: lossy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor
  dtypes: {accept: floating, of: [self, weight]}
  dispatch:
    CPU: lossy_cpu

- func: hot(Tensor self, int n=-1) -> Tensor
  dtypes: {accept: int64, of: self, message: "hot is only for index tensors."}
  dispatch:
    CPU: hot_cpu

- func: plain_unchecked(Tensor self) -> Tensor
  dtypes: floating
  dispatch:
    CPU: plain_unchecked_cpu

- func: halve(Tensor self, int dim=-1) -> Tensor
  dtypes: {accept: floating, of: self}
  check: ops_check_halve
  dispatch:
    CPU: halve_cpu

- func: fac(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor
  dtypes: {accept: floating, of: dtype}
  dispatch:
    CPU: fac_cpu

- func: fac_like(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dtypes: {accept: floating, of: [self, dtype]}
  dispatch:
    CPU: fac_like_cpu
"""

KERNELS = """\
#include <stddef.h>
typedef struct ops_tensor ops_tensor;
ops_tensor *
lossy_cpu(const ops_tensor *self, const ops_tensor *target, const ops_tensor *weight, long reduction)
{
    (void)self, (void)target, (void)weight, (void)reduction;
    return OPS_DTYPE_MASK_LOSSY ? NULL : NULL;
}

ops_tensor *
hot_cpu(const ops_tensor *self, long n)
{
    (void)self, (void)n;
    return OPS_DTYPE_MASK_HOT ? NULL : NULL;
}

ops_tensor *
plain_unchecked_cpu(const ops_tensor *self)
{
    (void)self;
    return NULL;
}

ops_status
ops_check_halve(const ops_tensor *self, long dim)
{
    (void)self, (void)dim;
    return 0;
}

ops_tensor *
halve_cpu(const ops_tensor *self, long dim)
{
    (void)self, (void)dim;
    return OPS_DTYPE_MASK_HALVE ? NULL : NULL;
}

ops_tensor *
fac_cpu(ops_int_list size, ops_dtype dtype, ops_device device)
{
    (void)size, (void)dtype, (void)device;
    return OPS_DTYPE_MASK_FAC ? NULL : NULL;
}

ops_tensor *
fac_like_cpu(const ops_tensor *self, ops_dtype dtype)
{
    (void)self, (void)dtype;
    return OPS_DTYPE_MASK_FAC_LIKE ? NULL : NULL;
}
"""


def _write(d, name, text):
    p = os.path.join(d, name)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    return p


def _body(glue, c_name):
    """The body of the function with the glue's checks (ops_base_X where an autograd
    layer wraps it, else ops_X)."""
    base = "ops_base_" + c_name[len("ops_"):]
    if re.search(r"\n" + re.escape(base) + r"\(", glue):
        c_name = base
    m = re.search(r"\n" + re.escape(c_name) + r"\(.*?\n\{\n(.*?)\n\}\n", glue, re.S)
    if m is None:
        raise AssertionError(f"{c_name} not in the glue")
    return m.group(1)


class PlainGlue(unittest.TestCase):
    def generate(self, d, native, kernels):
        out = os.path.join(d, "out")
        p = run_gen("glue", "--native", native, "--out-dir", out, "--kernel-sources", kernels)
        self.assertEqual(p.returncode, 0, p.stderr)
        glue = ""
        for f in sorted(glob.glob(os.path.join(out, "ops_glue_*.c"))):
            with open(f, encoding="utf-8") as fh:
                glue += fh.read()
        return glue

    def test_check_before_the_kernel(self):
        """The promoted dtype of the `of:` arguments (a None skipped) is checked after the
        argument checks and before the kernel is looked up, with the generic message or the
        declared one; an entry without `of:` is left to its kernel."""
        with tempfile.TemporaryDirectory() as d:
            glue = self.generate(d, _write(d, "n.yaml", PLAIN), _write(d, "k.c", KERNELS))
        floating = " | ".join(f"OPS_DTYPE_BIT(OPS_{x.upper()})" for x in dtypes_mod.FLOATING)
        b = _body(glue, "ops_lossy")
        self.assertIn("_dt = _dt == OPS_DTYPE_NONE ? ops_tensor_dtype(self) : "
                      "ops_promote_types(_dt, ops_tensor_dtype(self));", b)
        self.assertIn("if (weight != NULL)\n            _dt = _dt == OPS_DTYPE_NONE ? ops_tensor_dtype(weight) : "
                      "ops_promote_types(_dt, ops_tensor_dtype(weight));", b)
        self.assertNotIn("ops_tensor_dtype(target)", b)  # not in `of:`
        check = f'ops_check_dtype_declared("lossy", _dt, ({floating}), NULL);'
        self.assertIn(check, b)
        self.assertLess(b.index("target == NULL"), b.index(check))
        self.assertLess(b.index(check), b.index("ops_dispatch_lookup"))
        self.assertIn("return NULL;", b[b.index(check):b.index("ops_dispatch_lookup")])
        h = _body(glue, "ops_hot")
        self.assertIn('ops_check_dtype_declared("hot", _dt, (OPS_DTYPE_BIT(OPS_INT64)), '
                      '"hot is only for index tensors.");', h)
        self.assertNotIn("ops_check_dtype_declared", _body(glue, "ops_plain_unchecked"))

    def test_check_then_dtype_then_kernel(self):
        """A plain entry's `check:` runs before its declared-dtype check (the op's argument
        errors first, as the kernel gave them), and the kernel after both."""
        with tempfile.TemporaryDirectory() as d:
            glue = self.generate(d, _write(d, "n.yaml", PLAIN), _write(d, "k.c", KERNELS))
        b = _body(glue, "ops_halve")
        call = "const ops_status _cst = ops_check_halve(self, dim);"
        check = 'ops_check_dtype_declared("halve", _dt, '
        self.assertIn(call, b)
        self.assertIn(check, b)
        self.assertLess(b.index("self == NULL"), b.index(call))
        self.assertLess(b.index(call), b.index(check))
        self.assertLess(b.index(check), b.index("ops_dispatch_lookup"))
        self.assertIn("return NULL;", b[b.index(call):b.index(check)])
        self.assertNotIn("ops_check_halve", _body(glue, "ops_lossy"))

    def test_dtype_argument(self):
        """A factory's `ScalarType?` in `of:` is the checked dtype when given; else the
        promoted dtype of the Tensors in `of:` (a _like's self), else none (the op's default)."""
        with tempfile.TemporaryDirectory() as d:
            glue = self.generate(d, _write(d, "n.yaml", PLAIN), _write(d, "k.c", KERNELS))
        b = _body(glue, "ops_fac")
        self.assertNotIn("ops_tensor_dtype", b)
        self.assertIn("if (dtype != OPS_DTYPE_NONE)\n            _dt = dtype;", b)
        self.assertLess(b.index("_dt = dtype;"), b.index('ops_check_dtype_declared("fac", _dt, '))
        like = _body(glue, "ops_fac_like")
        self.assertLess(like.index("ops_tensor_dtype(self)"), like.index("_dt = dtype;"))
        self.assertLess(like.index("_dt = dtype;"), like.index('ops_check_dtype_declared("fac_like", _dt, '))

    def test_malformed_of(self):
        cases = [
            ("  dtypes: {accept: floating, of: [self, reduction]}\n",
             "lossy: dtypes: 'of' names 'reduction', not a Tensor argument of lossy (those: self, target, weight)"),
            ("  dtypes: {accept: floating, of: [self, self]}\n", "lossy: dtypes: 'of' names an argument twice"),
            ("  dtypes: {accept: floating, of: []}\n",
             "lossy: dtypes: 'of' must be a Tensor argument name or a non-empty list of them"),
            ("  dtypes: {accept: all, of: self}\n",
             "lossy: dtypes: 'of' says which arguments the glue checks, and every dtype is accepted"),
        ]
        fac = "  dtypes: {accept: floating, of: dtype}\n"
        fac_line = PLAIN[:PLAIN.index(fac)].count("\n") + 1
        fac_cases = [
            ("  dtypes: {accept: floating, of: device}\n",
             "fac: dtypes: 'of' names 'device', not a Tensor or ScalarType argument of fac (those: dtype)"),
        ]
        for line, msg in fac_cases:
            with self.subTest(line=line.strip()), tempfile.TemporaryDirectory() as d:
                y = _write(d, "n.yaml", PLAIN.replace(fac, line))
                p = run_gen("check", "--native", y, "--no-kernel-check")
                self.assertEqual(p.returncode, 1)
                self.assertEqual(p.stderr.strip(), f"{y}:{fac_line}: {msg}")
        for line, msg in cases:
            with self.subTest(line=line.strip()), tempfile.TemporaryDirectory() as d:
                y = _write(d, "n.yaml", PLAIN.replace("  dtypes: {accept: floating, of: [self, weight]}\n", line))
                p = run_gen("check", "--native", y, "--no-kernel-check")
                self.assertEqual(p.returncode, 1)
                self.assertEqual(p.stderr.strip(), f"{y}:2: {msg}")

    def test_message_placeholder(self):
        """A `message:` may say {dtype} (the runtime writes the refused dtype's name in, as
        multinomial's 'got: int64'): the glue passes it as declared; an unknown placeholder,
        a stray brace or {dtype} twice is refused at the entry's line."""
        hot = '  dtypes: {accept: int64, of: self, message: "hot is only for index tensors."}\n'
        self.assertIn(hot, PLAIN)
        line = PLAIN[:PLAIN.index(hot)].count("\n") + 1
        with tempfile.TemporaryDirectory() as d:
            y = _write(d, "n.yaml", PLAIN.replace(hot, hot.replace("tensors.", "tensors, got {dtype}")))
            glue = self.generate(d, y, _write(d, "k.c", KERNELS))
        self.assertIn('ops_check_dtype_declared("hot", _dt, (OPS_DTYPE_BIT(OPS_INT64)), '
                      '"hot is only for index tensors, got {dtype}");', _body(glue, "ops_hot"))
        for bad, msg in (("got {dt}", "'message' has an unknown placeholder '{dt}' (known: {dtype})"),
                         ("got {dtype", "'message' has an unmatched brace (a placeholder is written {dtype})"),
                         ("{dtype} or {dtype}", "'message' names {dtype} twice (the refusal writes it once)")):
            with self.subTest(message=bad), tempfile.TemporaryDirectory() as d:
                y = _write(d, "n.yaml", PLAIN.replace(hot, hot.replace("tensors.", bad)))
                p = run_gen("check", "--native", y, "--no-kernel-check")
                self.assertEqual(p.returncode, 1)
                self.assertEqual(p.stderr.strip(), f"{y}:{line}: hot: dtypes: {msg}")

    def test_of_on_a_structured_entry(self):
        with tempfile.TemporaryDirectory() as d:
            with open(FIX_NATIVE, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("  dtypes: numeric\n", text)
            y = _write(d, "n.yaml", text.replace("  dtypes: numeric\n", "  dtypes: {accept: numeric, of: self}\n", 1))
            line = text[:text.index("  dtypes: numeric\n")].count("\n") + 1
            p = run_gen("check", "--native", y, "--no-kernel-check")
            self.assertEqual(p.returncode, 1)
            self.assertIn(f"{y}:{line}: add.out: dtypes: 'of' is for an entry with a plain kernel", p.stderr)

    def test_kernel_naming_another_entrys_mask(self):
        """A kernel that refuses through another entry's mask would accept what that entry
        declares: refused at the line of the mask."""
        with tempfile.TemporaryDirectory() as d:
            y = _write(d, "n.yaml", PLAIN)
            bad = KERNELS.replace("return OPS_DTYPE_MASK_HOT ?", "return OPS_DTYPE_MASK_LOSSY ?")
            k = _write(d, "k.c", bad)
            line = bad[:bad.index("return OPS_DTYPE_MASK_LOSSY ? NULL : NULL;\n}\n\nops_tensor *\nplain")].count("\n") + 1
            p = run_gen("check", "--native", y, "--kernel-sources", k)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr.strip(), f"{k}:{line}: hot_cpu, the kernel of hot, dispatches over LOSSY, "
                                               "the dtypes lossy declares; its own are HOT")
            self.assertEqual(run_gen("check", "--native", y, "--kernel-sources", _write(d, "ok.c", KERNELS))
                             .returncode, 0)


_DEF_RE = r"\b{}\s*\([^;{{]*?\)\s*\{{"


class RealKernels(unittest.TestCase):
    """ops/native_functions.yaml and the kernels beside it."""

    def test_unchecked_plain_entries_are_the_listed_exceptions(self):
        """The plain entries whose glue does not refuse their undeclared dtypes are exactly
        tests/codegen/dtype_glue_coverage.py's EXCEPTIONS (each with its reason): a new one
        fails here, and a converted one must leave the list, so the count only goes down."""
        import dtype_glue_coverage as cov
        m = gen.load(REAL_NATIVE, REAL_DERIVS, [], False, False)
        left = [nf.name for nf in cov.unchecked(m)]
        self.assertEqual(sorted(set(left) - set(cov.EXCEPTIONS)), [],
                         "plain entries with a declared set the glue does not check (give them `of:`)")
        self.assertEqual(sorted(set(cov.EXCEPTIONS) - set(left)), [],
                         "listed as exceptions but checked by the glue now: take them off the list")
        self.assertLessEqual(len(left), 9)
        for name, why in cov.EXCEPTIONS.items():
            self.assertTrue(why.strip(), f"{name}: no reason")

    def test_glue_checks_the_converted_entries(self):
        """The generated glue of each plain entry with `of:` calls ops_check_dtype_declared
        (and its `check:` before it): rand's dtype argument, glu's check, ..."""
        m = gen.load(REAL_NATIVE, REAL_DERIVS, [], False, False)
        from codegen import gen_glue
        for name in ("rand", "rand_like", "rand.out", "randperm", "randperm.out", "dropout", "native_dropout",
                     "glu", "glu.out", "prelu", "arange", "arange.start_out", "linspace", "linspace.out",
                     "max_pool2d", "max_pool2d_with_indices.out", "avg_pool1d", "adaptive_avg_pool2d.out",
                     "max_pool2d_with_indices_backward.grad_input", "upsample_nearest2d", "upsample_linear1d.out",
                     "group_norm", "native_group_norm", "embedding_renorm_", "dot", "vdot.out", "topk", "kthvalue",
                     "searchsorted.Tensor", "searchsorted.Tensor_out", "bucketize.Tensor", "bucketize.Tensor_out",
                     "mm", "mm.out", "bmm", "bmm.out", "mv", "mv.out", "addmm", "addmm.out", "addmm_", "addmv",
                     "addmv.out", "addmv_", "baddbmm", "baddbmm.out", "baddbmm_", "addbmm", "addbmm.out", "addbmm_",
                     "matmul", "matmul.out", "linear", "conv1d", "conv2d", "conv1d.padding", "conv2d.padding",
                     "conv_transpose1d", "conv_transpose2d.input", "multinomial", "multinomial.out",
                     "repeat_interleave.Tensor"):
            nf = next(f for f in m.functions if f.name == name)
            with self.subTest(entry=name):
                body = "\n".join(gen_glue._function(nf)["body"])
                check = f'ops_check_dtype_declared("{nf.func.name}", _dt, '
                self.assertIn(check, body)
                self.assertLess(body.index(check), body.index("ops_dispatch_lookup"))
                if nf.check is not None:
                    self.assertLess(body.index(f"{nf.check}("), body.index(check))

    def test_glue_checked_kernels_name_their_declared_set(self):
        """Every plain entry whose glue checks its dtypes (`of:`) has kernels that refuse
        or dispatch through the entry's own generated set (OPS_DTYPE_MASK_<ENTRY> or
        OPS_DISPATCH_DECLARED(<ENTRY>, ...)), so the declaration and the kernel cannot
        drift; the set a kernel names is its own entry's (gen's kernel check)."""
        from codegen.gen_dtypes_h import macro_name
        m = gen.load(REAL_NATIVE, REAL_DERIVS, [], False, False)
        sources = sorted(glob.glob(os.path.join(ROOT, "kernels", "*.c")) +
                         glob.glob(os.path.join(ROOT, "kernels", "cpu", "*.c")) +
                         glob.glob(os.path.join(ROOT, "kernels", "cuda", "*.cu")))
        texts = {}
        for s in sources:
            with open(s, encoding="utf-8") as f:
                texts[s] = f.read()
        checked = [nf for nf in m.functions if nf.dtypes is not None and nf.dtypes.of is not None]
        self.assertGreater(len(checked), 0)
        for nf in checked:
            for key, k in nf.dispatch.items():
                with self.subTest(entry=nf.name, kernel=k):
                    found = [(s, t) for s, t in texts.items() if re.search(_DEF_RE.format(re.escape(k)), t)]
                    self.assertTrue(found, f"{k} is defined in no kernel source")
                    s, t = found[0]
                    start = re.search(_DEF_RE.format(re.escape(k)), t).end()
                    end = t.index("\n}\n", start)
                    body = t[start:end]
                    own = macro_name(nf)
                    self.assertRegex(body, rf"\bOPS_DTYPE_MASK_{own}\b|OPS_DISPATCH_DECLARED\(\s*{own}\s*,",
                                     f"{k} ({os.path.relpath(s, ROOT)}) does not name {nf.name}'s declared set")

    # ops whose every form refuses through its own entry's set (no hand-written mask):
    # the mm family, searchsorted/bucketize, bincount/histc, randperm, the SVD ops
    OWN_SET_OPS = ("mm", "bmm", "mv", "dot", "vdot", "addmm", "addmv", "baddbmm", "addbmm", "matmul", "linear",
                   "searchsorted", "bucketize", "bincount", "histc", "randperm", "nuclear_norm", "_linalg_polar")

    def test_forms_declare_the_functional_set(self):
        """Every form of these ops (out=, in-place, overloads) declares the dtypes its
        functional form does, and its kernel names its own entry's set: before, mm.out,
        addmm_, searchsorted.Tensor_out, ... declared none and their kernels refused
        through a hand-written mask."""
        from codegen.gen_dtypes_h import macro_name
        m = gen.load(REAL_NATIVE, REAL_DERIVS, [], False, False)
        texts = {}
        for s in sorted(glob.glob(os.path.join(ROOT, "kernels", "*.c")) +
                        glob.glob(os.path.join(ROOT, "kernels", "cpu", "*.c")) +
                        glob.glob(os.path.join(ROOT, "kernels", "cuda", "*.cu"))):
            with open(s, encoding="utf-8") as f:
                texts[s] = f.read()
        by_op = {}
        for nf in m.functions:
            base = nf.name.split(".")[0]
            base = base[:-1] if base.endswith("_") and not base.startswith("_") else base
            if base in self.OWN_SET_OPS and nf.dispatch:
                by_op.setdefault(base, []).append(nf)
        self.assertEqual(sorted(by_op), sorted(self.OWN_SET_OPS))
        for op, forms in by_op.items():
            functional = next(nf for nf in forms if nf.dtypes is not None and "out" not in nf.name.split(".")[-1]
                              and not nf.name.split(".")[0].endswith("_"))
            for nf in forms:
                with self.subTest(entry=nf.name):
                    self.assertIsNotNone(nf.dtypes, f"{nf.name} declares no dtypes")
                    self.assertEqual(list(nf.dtypes.accept), list(functional.dtypes.accept),
                                     f"{nf.name} declares other dtypes than {functional.name}")
                    for k in set(nf.dispatch.values()):
                        found = [t for t in texts.values() if re.search(_DEF_RE.format(re.escape(k)), t)]
                        self.assertTrue(found, f"{k} is defined in no kernel source")
                        t = found[0]
                        start = re.search(_DEF_RE.format(re.escape(k)), t).end()
                        body = t[start:t.index("\n}\n", start)]
                        self.assertRegex(body, rf"\bOPS_DTYPE_MASK_{macro_name(nf)}\b",
                                         f"{k} does not refuse through {nf.name}'s declared set")


if __name__ == "__main__":
    unittest.main(verbosity=2)

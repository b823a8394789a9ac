"""Tests of the structured reduction family's forms beyond dims/keepdim/dtype
(docs/codegen.md "Reductions"; codegen/reduction.py): max()/min()'s castable out=
(`reduce: [amax, cast_out]`) and an argument of a form that stands for one of the
structured entry's (var's `bool unbiased` for `Scalar? correction`).  The generator's
refusals are fixtures/bad/reduce_*.yaml, run by test_codegen.py with the other
fixtures; this file checks that the ones of these rules exist.

Run by meson (tests/codegen/meson.build) with Debian's python3.
"""

import glob
import os
import re
import unittest

from codegen_test_base import *  # noqa: F401,F403 (paths, fixtures, run_gen, compile_c)
from codegen_test_base import FamilyGlue, model  # noqa: F401


class ReductionForms(FamilyGlue, unittest.TestCase):
    """The glue of fixtures/reduction.yaml (its compile is Reductions.test_compiles in
    test_codegen.py, over the same fixture)."""

    maxDiff = None
    FIX = os.path.join(FIXTURES, "reduction.yaml")
    # one malformed fixture per rule of this file's (fixtures/bad/)
    REQUIRED = ["reduce_cast_out_kind", "reduce_flag_for_amax", "reduce_unbiased_type",
                "reduce_unbiased_no_correction", "reduce_unbiased_and_correction"]

    def meta(self, c_name):
        m = re.search(r"_st = reduce_family_meta\(&_r, (.*)\);", self.body(c_name))
        self.assertIsNotNone(m, c_name)
        return m.group(1)

    def test_fixtures_exist(self):
        have = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(FIXTURES, "bad", "*.yaml"))}
        self.assertEqual(sorted(set(self.REQUIRED) - have), [])

    def test_model(self):
        m = model.load_model(self.FIX, conformance=[])
        self.assertEqual(m.by_name["max.unary_out"].reduce_rule, ("amax", ("cast_out",)))
        self.assertIs(m.by_name["max"].reduce_target, m.by_name["max.unary_out"])
        for n in ("var.unbiased_dim", "var.unbiased_dim_out"):
            self.assertIs(m.by_name[n].reduce_target, m.by_name["var.correction_out"], n)

    def test_cast_out(self):
        """max()'s forms pass the rule to the meta, which lets out= have another dtype."""
        for c in ("ops_base_max", "ops_base_max_unary_out"):
            self.assertIn("ops_dispatch_lookup(OPS_OP_MAX_UNARY_OUT, _dev)", self.body(c), c)
        self.assertEqual(self.meta("ops_base_max_unary_out"),
                         '"max", RED_AMAX, REDUCE_META_CAST_OUT, self, NULL, false, OPS_DTYPE_NONE, out, NULL, false')
        self.assertEqual(self.meta("ops_base_max"),
                         '"max", RED_AMAX, REDUCE_META_CAST_OUT, self, NULL, false, OPS_DTYPE_NONE, NULL, NULL, false')

    def test_unbiased_is_a_correction(self):
        """`bool unbiased` reaches the kernel as the correction it means: 1 or 0."""
        for c in ("ops_base_var_unbiased_dim", "ops_base_var_unbiased_dim_out"):
            b = self.body(c)
            self.assertIn("ops_dispatch_lookup(OPS_OP_VAR_CORRECTION_OUT, _dev)", b, c)
            self.assertIn("const ops_scalar _correction = OPS_SCALAR_INT(unbiased ? 1 : 0);", b, c)
            self.assertIn("_fn(&_r, &_correction)", b, c)
        self.assertEqual(self.meta("ops_base_var_unbiased_dim_out"),
                         '"var", RED_VAR, 0u, self, dim, keepdim, OPS_DTYPE_NONE, out, NULL, false')
        # the correction= forms still pass their own
        self.assertIn("_fn(&_r, correction)", self.body("ops_base_var_correction"))


if __name__ == "__main__":
    unittest.main()

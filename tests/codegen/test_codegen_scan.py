"""Tests of the structured scan family, `meta: scan` (docs/codegen.md "Scans";
codegen/scan.py): the glue of every form of a scan around its one kernel.  The
generator's refusals of a bad mapping are fixtures/bad/scan_*.yaml, run by
test_codegen.py with the other fixtures.

Run by meson (tests/codegen/meson.build) with Debian's python3.
"""

import os
import re
import unittest

from codegen_test_base import *  # noqa: F401,F403 (paths, fixtures, FamilyGlue)
from codegen_test_base import model  # noqa: F401


class Scans(FamilyGlue, unittest.TestCase):
    maxDiff = None
    """`meta: scan` (tests/codegen/fixtures/scan.yaml): the functional, out= and in-place
    forms of an op are glue around one kernel; each form's own dim and dtype (None where
    it lacks one), out= or self reach the family's meta step."""

    FIX = os.path.join(FIXTURES, "scan.yaml")

    def test_model(self):
        m = model.load_model(self.FIX, conformance=[])
        st = m.by_name["cumsum.out"]
        for n in ("cumsum", "cumsum.out", "cumsum_"):
            self.assertIs(m.by_name[n].reduce_target, st, n)
            self.assertIsNone(m.by_name[n].delegate, n)  # not the elementwise path
        self.assertEqual(st.reduce_rule, ("cumsum", ()))

    def test_forms_map_onto_the_meta(self):
        def meta(c_name):
            b = self.body(c_name)
            m = re.search(r"_st = scan_family_meta\(&_s, (.*)\);", b)
            self.assertIsNotNone(m, b)
            return m.group(1)
        for c in ("ops_base_cumsum", "ops_base_cumsum_out", "ops_base_cumsum_"):
            self.assertIn("ops_dispatch_lookup(OPS_OP_CUMSUM_OUT, _dev)", self.body(c), c)
        self.assertEqual(meta("ops_base_cumsum"), '"cumsum", SCAN_CUMSUM, self, dim, dtype, NULL, NULL, false')
        self.assertEqual(meta("ops_base_cumsum_out"), '"cumsum", SCAN_CUMSUM, self, dim, dtype, out, NULL, false')
        # in place: self is the out, and the meta knows (dtype= must be self's); the
        # message names the in-place op
        self.assertEqual(meta("ops_base_cumsum_"), '"cumsum_", SCAN_CUMSUM, self, dim, dtype, self, NULL, true')
        self.assertIn("scan_family_finish(&_s, _fn(&_s), self, NULL, NULL, NULL)", self.body("ops_base_cumsum_"))
        # the out= rules of the out= form, and the in-place form's (less self's)
        self.assertIn("ops_check_out_args", self.body("ops_base_cumsum_out"))
        self.assertNotIn("ops_check_out_args", self.body("ops_base_cumsum_"))
        self.assertIn("scan_family_finish(&_s, _fn(&_s), NULL, NULL, &_result, NULL)", self.body("ops_base_softmax"))
        # two results: the functional form's out-parameters, the out= form's two outs;
        # a form without dtype passes None
        self.assertEqual(meta("ops_base_cummax"), '"cummax", SCAN_CUMMAX, self, dim, OPS_DTYPE_NONE, NULL, NULL, false')
        self.assertIn("scan_family_finish(&_s, _fn(&_s), NULL, NULL, values, indices)", self.body("ops_base_cummax"))
        self.assertIn("values, indices, false", meta("ops_base_cummax_out"))
        self.assertIn("ops_device_guard_enter(_dev)", self.body("ops_base_cumsum_"))

    def test_kernel_prototype(self):
        with open(os.path.join(self.tmp, "ops_kernels.h"), encoding="utf-8") as f:
            h = f.read()
        self.assertIn('#include "kernels/reduce.h"', h)
        self.assertIn("ops_status scan_kind_kernel(ops_scan *s);", h)

    def test_kinds_exist(self):
        """The generator's names of the kinds are kernels/reduce.h's scan_kind."""
        from codegen import scan
        with open(os.path.join(ROOT, "kernels", "reduce.h"), encoding="utf-8") as f:
            enum = re.search(r"typedef enum scan_kind \{(.*?)\} scan_kind;", f.read(), re.S).group(1)
        self.assertEqual(sorted(set(scan.KINDS.values()) - set(re.findall(r"^\s*(SCAN_\w+),", enum, re.M))), [])

    def test_compiles(self):
        self.assert_glue_compiles("ops_status\nscan_kind_kernel(ops_scan *s)\n{\n    (void)s;\n    return OPS_OK;\n}\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)

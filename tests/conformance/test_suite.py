#!/usr/bin/env python3
"""The conformance suite's own tests: metadata validation and the runner's verdicts.

    test_suite.py --source-root DIR --runner CONFORMANCE

1. Malformed conformance metadata (unknown keys, bad `errors:` items, shape sets that
   do not fit, ...) is refused with `file:line: reason` (the line of the key at fault in
   the conformance file) by both codegen/gen.py and gen_cases.py.
2. The runner, on case files gen_cases.py builds from small trees (a schema holding the
   neg op, an op of the library, so the registry has it, and its conformance/ file
   beside it): passes the real metadata; fails
   on a wrong reference, a wrong error fragment and an error that does not happen; a
   full run fails on coverage; `shapes:` hints and `--op`/`--dtype`/`--coverage`/
   `--seed` behave as docs/conformance.md says.
3. Several returns (aminmax: `-> (Tensor min, Tensor max)` and its out= form with two
   outs): a wrong reference for either return fails, in the functional and the out=
   forms; `returns:` fixes a return's dtype or compares only its shape and dtype; a
   sample's `data:` gives exact values; malformed `returns:` and `data:` are refused.
4. Multi-argument ops (atan2, lerp): `special: true` reaches every Tensor argument (a
   reference wrong only where the second or third argument is special fails) and
   `domain:` bounds each argument by its own range.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import unittest

ARGS = None

NEG = """\
- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  meta: unary
  dispatch:
    CPU: neg_out_cpu

- func: neg(Tensor self) -> Tensor
  structured_delegate: neg.out
  variants: function, method

- func: neg_(Tensor(a!) self) -> Tensor(a!)
  structured_delegate: neg.out
  variants: function, method
"""
GOOD = """\
    dtypes: numeric
    ref: '-self'
    errors:
      - {dtype: bool, match: "on a bool tensor is not supported"}"""
NEG_CONF = "neg.out:\n{conf}\n"

AMINMAX = """\
- func: aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
  variants: function, method
  dispatch:
    CPU: aminmax_cpu

- func: aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)
  dispatch:
    CPU: aminmax_out_cpu
"""
AMM_CONF = """\
aminmax:
{conf}

aminmax.out: {{note: "covered by aminmax's cases"}}
"""
AMM_REF = "'(np.amin(self, axis=dim, keepdims=keepdim), np.amax(self, axis=dim, keepdims=keepdim))'"
AMM_GOOD = f"""\
    dtypes: [int32, float32]
    ref: {AMM_REF}
    samples: [{{self: [3, 4], dim: 1}}, {{self: [2, 3, 4], dim: null, keepdim: true}}]
    errors:
      - {{args: {{dim: 2}}, match: "Dimension out of range"}}"""

# A binary and a ternary op of the library, for special values and per-argument domains.
ATAN2 = """\
- func: atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  meta: binary_float
  dispatch:
    CPU: atan2_out_cpu

- func: atan2(Tensor self, Tensor other) -> Tensor
  structured_delegate: atan2.out
  variants: function, method
"""
LERP = """\
- func: lerp.out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  meta: binary
  dispatch:
    CPU: lerp_out_cpu

- func: lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor
  structured_delegate: lerp.out
  variants: function, method
"""


def dedent2(conf):
    """The metadata strings below are indented as inside an entry (4 spaces); a
    conformance file indents them by 2 under the entry's name."""
    return "\n".join(ln[2:] if ln.startswith("  ") else ln for ln in conf.split("\n"))


def key_line(conf_path, key):
    """The line of top-level metadata key `key` in a conformance file (the last one)."""
    with open(conf_path) as f:
        lines = f.read().split("\n")
    return max(i + 1 for i, ln in enumerate(lines) if ln.startswith(f"  {key}:"))


def top_keys(conf):
    return re.findall(r"^    ([a-z_]+):", conf, re.M)


def py():
    return sys.executable or "/usr/bin/python3"


class Suite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="conformance-test-")
        cls.root = ARGS.source_root
        cls.gen = os.path.join(cls.root, "tests", "conformance", "gen_cases.py")
        cls.codegen = os.path.join(cls.root, "codegen", "gen.py")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write_tree(self, name, schema, conf_text):
        """<tmp>/<name>/native_functions.yaml and its conformance/ops.yaml (found by
        gen_cases.py and gen.py as the files beside the schema)."""
        # The input dtypes are declared in the schema entry (`dtypes:`, docs/codegen.md), not
        # in the metadata: the metadata strings below keep them beside the rest for brevity,
        # and they move onto the first entry (the kernel's) here.
        m = re.search(r"^  dtypes: (.*)\n", conf_text, re.M)
        if m:
            conf_text = conf_text[:m.start()] + conf_text[m.end():]
            at = schema.index("  dispatch:")
            schema = schema[:at] + f"  dtypes: {m.group(1)}\n" + schema[at:]
        d = os.path.join(self.tmp.name, name)
        os.makedirs(os.path.join(d, "conformance"), exist_ok=True)
        path, conf_path = os.path.join(d, "native_functions.yaml"), os.path.join(d, "conformance", "ops.yaml")
        with open(path, "w") as f:
            f.write(schema)
        with open(conf_path, "w") as f:
            f.write(conf_text)
        return path, conf_path

    def write_yaml(self, name, conf, extra=""):
        return self.write_tree(name, NEG + extra, NEG_CONF.format(conf=dedent2(conf)))[0]

    def gen_cases(self, yaml_path, *extra):
        out = yaml_path[:-5] + ".bin"
        p = subprocess.run([py(), self.gen, "--yaml", yaml_path, "--out", out, *extra],
                           capture_output=True, text=True)
        return p, out

    def run_runner(self, cases, *args):
        return subprocess.run([ARGS.runner, cases, *args], capture_output=True, text=True)

    # ---- 1. validation ---------------------------------------------------------
    def assert_refused(self, conf, reason, extra=""):
        path = self.write_yaml("bad", conf, extra)
        conf_path = os.path.join(os.path.dirname(path), "conformance", "ops.yaml")
        where = f"{conf_path}:{key_line(conf_path, top_keys(conf)[-1])}:"
        p, _ = self.gen_cases(path)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertRegex(p.stderr, re.escape(where) + ".*" + reason)
        q = subprocess.run([py(), self.codegen, "check", "--native", path, "--no-kernel-check"],
                           capture_output=True, text=True)
        self.assertEqual(q.returncode, 1, q.stderr)
        self.assertRegex(q.stderr, re.escape(where) + ".*" + reason)

    def test_refuses_malformed_metadata(self):
        bad = {
            "unknown conformance key 'oops'": GOOD + "\n    oops: 1",
            r"errors\[0\]: `match`": "    errors:\n      - {dtype: bool}",
            r"errors\[0\]: unknown key 'matches'": "    errors:\n      - {matches: x}",
            r"errors\[0\]: shapes names 'other', not an argument": "    errors:\n      - {shapes: {other: [2]}, match: x}",
            r"errors\[0\]: unknown dtype 'float8'": "    errors:\n      - {dtype: float8, match: x}",
            r"errors\[0\]: forms must be": "    errors:\n      - {forms: [backward], match: x}",
            r"errors\[0\] applies to no entry": "    errors:\n      - {args: {self: 3}, match: x}",
            r"errors\[0\]: entries names 'neg.Scalar'": "    errors:\n      - {entries: [neg.Scalar], match: x}",
            r"shapes\[0\]: 2 shapes for 1 Tensor arguments": "    shapes: [[[2], [3]]]",
            r"shapes\[1\]: 'other' is not a Tensor argument": "    shapes: [{self: [2]}, {other: [3]}]",
            r"shapes\[0\]: the shape of 'self' must be a list of sizes >= 0": "    shapes: [{self: [-1]}]",
            "tol must map dtypes": "    tol: {float32: [1, 2, 3, 4]}",
            "signed_zeros must be true or false": "    signed_zeros: maybe",
        }
        for reason, conf in bad.items():
            with self.subTest(reason=reason):
                self.assert_refused(conf, reason)

    def test_dtypes_left_in_metadata(self):
        """The dtypes are the schema's: a `dtypes:` in a conformance file is refused, with
        its file:line, by the case generator and by the library's generator."""
        path, conf_path = self.write_tree("dtypes_in_conf", NEG, NEG_CONF.format(conf=dedent2(GOOD)).replace(
            "  ref:", "  dtypes: floating\n  ref:"))
        where = f"{conf_path}:{key_line(conf_path, 'dtypes')}: "
        p, _ = self.gen_cases(path)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(where + "'dtypes' is not conformance metadata", p.stderr)
        q = subprocess.run([py(), self.codegen, "check", "--native", path, "--no-kernel-check"],
                           capture_output=True, text=True)
        self.assertEqual(q.returncode, 1, q.stderr)
        self.assertIn(where + "'dtypes' is not conformance metadata", q.stderr)

    def test_kernel_without_metadata_fails_the_cases_build(self):
        path, _ = self.write_tree("missing", NEG, "# no metadata\n")
        p, _ = self.gen_cases(path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("has a kernel but no conformance metadata", p.stderr)

    # ---- 2. the runner's verdicts ------------------------------------------------
    def write_amm(self, name, conf):
        return self.write_tree(name, AMINMAX, AMM_CONF.format(conf=dedent2(conf)))[0]

    def amm_run(self, name, conf, *args):
        p, cases = self.gen_cases(self.write_amm(name, conf))
        self.assertEqual(p.returncode, 0, p.stderr)
        return self.run_runner(cases, "--op", "aminmax", *args)

    def test_several_returns(self):
        r = self.amm_run("amm_good", AMM_GOOD, "--coverage")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("coverage complete", r.stdout)
        # a wrong reference for the second return only: the functional form names it ...
        wrong_max = AMM_GOOD.replace("np.amax(self", "np.amin(self")
        r = self.amm_run("amm_wrongmax", wrong_max)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stdout, r"aminmax \[[a-z0-9]+\] \(contiguous\).*\n(    self: .*\n)+  -> return 'max': "
                                   r"element \d+ \(index \[[0-9, ]*\]\) is .*, expected ")
        # ... and so does a wrong first return
        wrong_min = AMM_GOOD.replace("np.amin(self", "np.amax(self")
        r = self.amm_run("amm_wrongmin", wrong_min)
        self.assertEqual(r.returncode, 1)
        self.assertIn("-> return 'min': element", r.stdout)
        # compare: false: the wrong max passes (shape and dtype still checked) ...
        r = self.amm_run("amm_nocompare", wrong_max + "\n    returns: {max: {compare: false}}")
        self.assertEqual(r.returncode, 0, r.stdout)
        # ... but a wrong shape does not
        bad_shape = AMM_GOOD.replace("np.amax(self, axis=dim, keepdims=keepdim)", "np.amax(self)")
        r = self.amm_run("amm_badshape", bad_shape + "\n    returns: {max: {compare: false}}")
        self.assertEqual(r.returncode, 1)
        self.assertIn("return 'max': result shape", r.stdout)
        # values: false (random sampling): no return compared in any form, while the out=,
        # error, guard and fault-injection families still run
        r = self.amm_run("amm_novalues", wrong_max + "\n    values: false")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stdout, r"[1-9][0-9]* error cases, [1-9][0-9]* fault-injection points")
        # a return's fixed dtype: the kernel returns self's dtype, so int64 must fail on it
        r = self.amm_run("amm_dtype", AMM_GOOD + "\n    returns: {max: {dtype: int64}}", "--dtype", "float32")
        self.assertEqual(r.returncode, 1)
        self.assertIn("return 'max': result dtype float32, expected int64", r.stdout)

    def test_sample_data(self):
        # exact values with ties: a constant reference holds only if `data:` was used
        conf = ("    dtypes: [int64, float32]\n"
                "    ref: '(np.full(2, 1), np.full(2, 5))'\n"
                "    samples: [{self: {data: [[1, 5, 1], [5, 1, 5]]}, dim: 1},"
                " {self: {shape: [2, 2], dtype: int32, data: [[1, 5], [5, 1]]}, dim: 0}]")
        r = self.amm_run("amm_data", conf)
        self.assertEqual(r.returncode, 0, r.stdout)
        r = self.amm_run("amm_data_wrong", conf.replace("np.full(2, 5)", "np.full(2, 4)"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("return 'max'", r.stdout)

    def test_sample_dtypes(self):
        # a sample's `dtypes:` narrows the declared dtypes it runs in: a reference right for
        # float32 only passes when the sample says so, and fails in int32 when it does not
        conf = ("    dtypes: [int32, float32]\n"
                "    ref: '(np.full(2, 1), np.full(2, 5 if self.dtype.kind == \"f\" else 4))'\n"
                "    samples: [{self: {data: [[1, 5, 1], [5, 1, 5]]}, dim: 1, dtypes: [float32]}]")
        r = self.amm_run("amm_sdt", conf)
        self.assertEqual(r.returncode, 0, r.stdout)
        r = self.amm_run("amm_sdt_all", conf.replace(", dtypes: [float32]", ""))
        self.assertEqual(r.returncode, 1)
        self.assertIn("return 'max'", r.stdout)

    def test_refuses_malformed_returns(self):
        bad = {
            "returns names 'values', not a return of aminmax": "    returns: {values: {dtype: int64}}",
            "returns: 'max': unknown key 'dtypes'": "    returns: {max: {dtypes: int64}}",
            "returns: 'max': unknown dtype 'long'": "    returns: {max: {dtype: long}}",
            "returns: 'min': compare must be true or false": "    returns: {min: {compare: 0}}",
            r"samples\[0\]: 'self': unknown key 'values'": "    samples: [{self: {values: [1, 2]}}]",
            r"samples\[0\]: 'self': data has 3 elements, shape \[2, 2\] needs 4":
                "    samples: [{self: {shape: [2, 2], data: [1, 2, 3]}}]",
            r"samples\[0\]: 'self': data must be": "    samples: [{self: {data: [[1, 2], [3]]}}]",
            r"samples\[0\]: dtypes names bool, which aminmax does not declare \(its `dtypes:` in the schema: "
            r"int32, float32\)": "    samples: [{self: [3, 4], dim: 1, dtypes: [bool, float32]}]",
            r"samples\[0\]: dtypes: unknown dtype set 'num'": "    samples: [{self: [3, 4], dim: 1, dtypes: num}]",
            "domain `index` is for a Tensor\\[\\] or Tensor\\?\\[\\] argument": "    domain: {self: index}",
        }
        for reason, extra in bad.items():
            with self.subTest(reason=reason):
                path = self.write_amm("amm_bad", AMM_GOOD + "\n" + extra if "samples" not in extra
                                      else AMM_GOOD.replace("    samples: [{self: [3, 4], dim: 1}, {self: [2, 3, 4], "
                                                            "dim: null, keepdim: true}]", extra))
                conf_path = os.path.join(os.path.dirname(path), "conformance", "ops.yaml")
                where = f"{conf_path}:{key_line(conf_path, top_keys(extra)[0])}:"
                p, _ = self.gen_cases(path)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertRegex(p.stderr, re.escape(where) + ".*" + reason)
                q = subprocess.run([py(), self.codegen, "check", "--native", path, "--no-kernel-check"],
                                   capture_output=True, text=True)
                self.assertEqual(q.returncode, 1, q.stderr)
                self.assertRegex(q.stderr, re.escape(where) + ".*" + reason)
        # a reference that is not a tuple of one array per return
        p, _ = self.gen_cases(self.write_amm("amm_notuple", AMM_GOOD.replace(AMM_REF, "'np.amin(self)'")))
        self.assertEqual(p.returncode, 1)
        self.assertIn("must give a tuple of 2 arrays (min, max)", p.stderr)

    def test_passes_real_metadata_and_coverage_of_the_op(self):
        p, cases = self.gen_cases(self.write_yaml("good", GOOD))
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.run_runner(cases, "--op", "neg", "--coverage")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Failures: 0", r.stdout)
        self.assertIn("coverage complete", r.stdout)
        self.assertRegex(r.stdout, r"conformance: 1 ops, [1-9][0-9]* op x dtype x variant runs, [1-9][0-9]* error "
                                   r"cases, [1-9][0-9]* fault-injection points, [1-9][0-9]* gradchecks "
                                   r"\(0 without double backward, 0 refused by their formula\), "
                                   # without a device the CUDA runs are skipped and counted; with one
                                   # (an emulated build) they ran and were compared with the CPU
                                   r"([1-9][0-9]* skipped \(CUDA|0 skipped \(CUDA: ran\).*\n"
                                   r"conformance: CUDA: [1-9][0-9]* runs on cuda:0 compared with the cpu)")
        # the same cases without --op: every other registry entry lacks a run
        full = self.run_runner(cases)
        self.assertEqual(full.returncode, 1)
        self.assertIn("registry entries with no conformance run", full.stdout)
        self.assertRegex(full.stdout, r"\n    add\.Tensor ")
        self.assertNotRegex(full.stdout, r"\n    neg ")

    def test_wrong_reference_fails(self):
        p, cases = self.gen_cases(self.write_yaml("wrongref", GOOD.replace("'-self'", "'self'")))
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.run_runner(cases, "--op", "neg")
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stdout, r"neg \[[a-z0-9]+\] \(contiguous\).*\n(    self: .*\n)+  -> element \d+ "
                                   r"\(index \[[0-9, ]*\]\) is .*, expected ")

    def test_wrong_error_fragment_fails(self):
        conf = GOOD.replace("on a bool tensor is not supported", "no such message")
        _, cases = self.gen_cases(self.write_yaml("wrongmsg", conf))
        r = self.run_runner(cases, "--op", "neg")
        self.assertEqual(r.returncode, 1)
        self.assertIn('does not contain "no such message"', r.stdout)

    def test_error_that_does_not_happen_fails(self):
        conf = GOOD + "\n      - {dtype: float32, match: anything}"
        _, cases = self.gen_cases(self.write_yaml("noerror", conf))
        r = self.run_runner(cases, "--op", "neg")
        self.assertEqual(r.returncode, 1)
        self.assertIn("the call succeeded", r.stdout)

    def test_undeclared_dtype_that_works_fails(self):
        # float16 works in the kernel: declaring dtypes without it must fail (not rejected)
        conf = GOOD.replace("dtypes: numeric", "dtypes: [int64, float32]")
        _, cases = self.gen_cases(self.write_yaml("undeclared", conf))
        r = self.run_runner(cases, "--op", "neg", "--dtype", "float16")
        self.assertEqual(r.returncode, 1)
        self.assertIn("neg rejects float16", r.stdout)

    def test_shapes_hint(self):
        conf = GOOD + "\n    shapes: [{self: [7]}, [[2, 0, 3]]]"
        p, cases = self.gen_cases(self.write_yaml("shapes", conf))
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.run_runner(cases, "--op", "neg", "--dtype", "int16")
        self.assertEqual(r.returncode, 0, r.stdout)
        # 2 shape sets for int16 (and no property cases: shapes replace the default shapes)
        self.assertRegex(r.stdout, r"Checks: 2,")

    def test_samples_of_a_structured_entry_run(self):
        # a reference wrong only at 1000, which no drawn input reaches: the sample's
        # `data:` must reach the kernel, in every declared dtype and through the same checks
        conf = ("    dtypes: numeric\n"
                "    ref: 'np.where(self == 1000, 0, -self)'\n"
                "    samples: [{self: {data: [[1000, 1, -2]]}}, {self: [5]}]")
        p, cases = self.gen_cases(self.write_yaml("ew_samples_wrong", conf))
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.run_runner(cases, "--op", "neg")
        self.assertEqual(r.returncode, 1, r.stdout)
        # the [1000, 1, -2] sample in each dtype 1000 fits (not uint8, int8)
        self.assertRegex(r.stdout, r"Checks: \d+, Failures: 7,")
        self.assertRegex(r.stdout, r"neg sample int32 shapes \[\(1, 3\)\].*\n(    self: .*\n)+  -> element 0 ")
        p, cases = self.gen_cases(self.write_yaml("ew_samples", conf.replace("np.where(self == 1000, 0, -self)",
                                                                            "-self")))
        self.assertEqual(p.returncode, 0, p.stderr)
        r = self.run_runner(cases, "--op", "neg")
        self.assertEqual(r.returncode, 0, r.stdout)
        without, _ = self.gen_cases(self.write_yaml("ew_nosamples", "    dtypes: numeric\n    ref: '-self'"))
        self.assertEqual(without.returncode, 0, without.stderr)
        n = lambda proc: int(re.search(r"gen_cases: (\d+) cases", proc.stderr).group(1))
        self.assertEqual(n(p) - n(without), 18)  # 2 samples x 9 dtypes

    # ---- special values and domains of multi-argument ops ------------------------
    def special_run(self, name, schema, entry, conf, op, *args):
        path, _ = self.write_tree(name, schema, f"{entry}:\n{dedent2(conf)}\n")
        p, cases = self.gen_cases(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        return self.run_runner(cases, "--op", op, *args)

    def test_special_values_reach_every_argument(self):
        # a kernel wrong only where `other` is NaN or infinite (a naive hypot, an xlogy
        # without its NaN rule) must fail: special values go to the second argument too
        good = "    dtypes: all\n    ref: 'np.arctan2(self, other)'\n    special: true"
        r = self.special_run("sp_atan2", ATAN2, "atan2.out", good, "atan2")
        self.assertEqual(r.returncode, 0, r.stdout)
        naive = good.replace("'np.arctan2(self, other)'",
                             "'np.where(np.isfinite(self) & ~np.isfinite(other), 0, np.arctan2(self, other))'")
        r = self.special_run("sp_atan2_naive", ATAN2, "atan2.out", naive, "atan2")
        self.assertEqual(r.returncode, 1, r.stdout)
        # every pair: element 10 * i + j holds (special i, special j), so the first
        # mismatch is self = 0 (row 3) against other = NaN (column 0) (the NaN may carry
        # a sign bit: SLEEF's vector atan2 returns -nan there)
        self.assertRegex(r.stdout, r"atan2 special float32 float32 shapes \[\(100,\), \(100,\)\].*\n"
                                   r"(    (self|other): .*\n)+  -> element 30 \(index \[30\]\) is -?nan, expected 0")
        # NaN in self meets a finite other: element 5 (other = 1)
        nan_self = good.replace("'np.arctan2(self, other)'",
                                "'np.where(np.isnan(self) & (other == 1), 0, np.arctan2(self, other))'")
        r = self.special_run("sp_atan2_nanself", ATAN2, "atan2.out", nan_self, "atan2")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertRegex(r.stdout, r"-> element 5 \(index \[5\]\) is -?nan, expected 0")

    def test_special_values_reach_the_third_argument(self):
        good = "    dtypes: floating\n    ref: 'lerp(self, end, weight)'\n    promote: false\n    special: true"
        r = self.special_run("sp_lerp", LERP, "lerp.out", good, "lerp.Tensor")
        self.assertEqual(r.returncode, 0, r.stdout)
        naive = good.replace("'lerp(self, end, weight)'",
                             "'np.where(np.isnan(weight) & (self == 1) & (end == -2.5), 0, lerp(self, end, weight))'")
        r = self.special_run("sp_lerp_naive", LERP, "lerp.out", naive, "lerp.Tensor", "--dtype", "float32")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertRegex(r.stdout, r"lerp.Tensor special float32 float32 float32 shapes \[\(343,\), \(343,\), \(343,\)\]"
                                   r".*\n(    (self|end|weight): .*\n)+  -> element 287 .*is nan, expected 0")

    def test_domain_per_argument(self):
        # each argument is drawn inside its own range, in the drawn cases, the property
        # run and the error cases: a reference wrong outside either range passes
        conf = ("    dtypes: all\n"
                "    ref: 'np.where((self >= 0.5) & (self <= 1.5) & (other >= 2), np.arctan2(self, other), 99)'\n"
                "    domain: {self: [0.5, 1.5], other: [2, 3]}")
        for d in ("int32", "float32"):  # (bool draws ignore ranges)
            r = self.special_run("dom_atan2", ATAN2, "atan2.out", conf, "atan2", "--dtype", d)
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertRegex(r.stdout, r"Checks: [1-9]\d*, Failures: 0,")
        # ... and fails once one argument's range is widened past where the reference is right
        for wide in ("self: [-3, 3]", "other: [-3, 3]"):
            name = wide.split(":")[0]
            dom = conf.replace(f"{name}: [0.5, 1.5]" if name == "self" else f"{name}: [2, 3]", wide)
            r = self.special_run(f"dom_atan2_{name}", ATAN2, "atan2.out", dom, "atan2", "--dtype", "float32")
            self.assertEqual(r.returncode, 1, wide + r.stdout)
        # a range with no value of a declared dtype is a generation error naming the entry
        path, conf_path = self.write_tree("dom_empty", ATAN2,
                                          "atan2.out:\n" + dedent2(conf.replace("self: [0.5, 1.5]", "self: [-3, -1]")))
        p, _ = self.gen_cases(path)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"{conf_path}:1: atan2: domain [-3, -1] holds no uint8 value", p.stderr)

    def test_command_line(self):
        _, cases = self.gen_cases(self.write_yaml("cli", GOOD))
        self.assertEqual(self.run_runner(cases, "--op", "nosuchop").returncode, 2)
        self.assertEqual(self.run_runner(cases, "--dtype", "float8").returncode, 2)
        self.assertEqual(self.run_runner(cases, "--frobnicate").returncode, 2)
        self.assertEqual(self.run_runner(os.path.join(self.tmp.name, "nosuch.bin")).returncode, 2)
        truncated = os.path.join(self.tmp.name, "truncated.bin")
        with open(cases, "rb") as f, open(truncated, "wb") as g:
            g.write(f.read()[:-3])
        self.assertEqual(self.run_runner(truncated, "--op", "neg").returncode, 2)
        r = self.run_runner(cases, "--op", "neg_", "--seed", "12345")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("runner seed 12345", r.stdout)
        r = self.run_runner(cases, "--op", "neg", "--dtype", "int8")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stdout, r"conformance: \d+ of \d+ cases selected")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--runner", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()

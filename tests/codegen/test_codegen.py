"""Tests of the generator (codegen/): rejection of malformed schemas with
`file:line: reason`, the C API it emits, that the emitted C compiles, determinism
(incremental rewriting, shards and stubs: test_codegen_build.py).

Expected C spellings below are written by hand from docs/codegen.md (the naming and
type tables), never taken from the generator's output.  Run by meson (tests/codegen/
meson.build) with Debian's python3; OPS_CC names the C compiler (compile checks are
skipped without one).
"""

from codegen_test_base import *  # noqa: F401,F403 (paths, fixtures, run_gen, compile_c)
from codegen_test_base import cnames, gen, model, dtypes_mod  # noqa: F401


class Rejections(unittest.TestCase):
    """One malformed fixture per rule: exit status 1, `file:line: reason`, one error."""

    # Every rejection rule the generator promises, and the fixture that shows it.
    REQUIRED_NATIVE = [
        "unknown_key", "unknown_type", "unsupported_type", "bad_grammar", "bad_argument", "double_star",
        "bad_default_int", "bad_default_bool", "bad_default_none", "bad_default_list_size",
        "duplicate_overload", "same_c_name", "out_returns", "inplace_first_arg", "optional_out",
        "optional_list_optional",
        "unsupported_return", "structured_no_meta", "structured_no_dispatch", "structured_not_out",
        "meta_not_structured", "unknown_meta", "delegate_missing", "delegate_not_structured",
        "delegate_args", "delegate_arg_count", "both_dispatch_delegate", "neither_dispatch_delegate",
        "unknown_dispatch_key", "kernel_missing", "kernel_declared_only", "kernel_commented_out",
        "kernel_in_string", "kernel_signature_clash", "yaml_syntax", "duplicate_key",
        "structured_two_outs", "c_keyword_arg", "not_a_list",
        # hostile input (issue 13): the YAML loader's bounds, the C range of every number
        "alias_bomb", "alias_recursive", "nested_too_deep", "yaml_tag", "yaml_bad_scalar_tag",
        "yaml_implicit_timestamp", "key_not_string", "control_character", "second_document", "tab_indent",
        "default_int_range", "default_list_range", "default_float_range", "list_size_range",
        "too_many_arguments",
        # out= rules checked by the glue (issue 15)
        "out_checks_not_out", "out_checks_not_tensor", "out_checks_inplace_dtype",
        # the metadata lives in ops/conformance/*.yaml (issue 16)
        "conformance_in_schema",
        # `dtypes:`, the one declaration of an op's input dtypes (issue 16)
        "dtypes_unknown_set", "dtypes_unknown_dtype", "dtypes_empty", "dtypes_twice", "dtypes_mapping_key",
        "dtypes_message_all", "dtypes_on_delegate",
        # `check:`, an op's argument check run once by the glue (issue 16)
        "check_not_ident", "check_on_delegate", "check_plain_and_structured", "check_signature_clash",
        "check_kernel_name", "check_missing",
        # the structured reduction family, `meta: reduction` (codegen/reduction.py): its rule,
        # and the mapping of each form's arguments onto the structured entry's
        "reduce_no_rule", "reduce_unknown_kind", "reduce_flags_on_kind", "reduce_without_meta",
        "reduce_bad_dim", "reduce_two_outs", "reduce_delegate_args", "reduce_delegate_extra",
        "reduce_delegate_type", "reduce_delegate_returns",
        # the structured scan family, `meta: scan` (codegen/scan.py): its kind, the family's
        # arguments and each form's mapping (an in-place form of a one-result scan only)
        "scan_no_rule", "scan_unknown_kind", "scan_without_meta", "scan_reduce_key", "scan_bad_dim",
        "scan_extra_arg", "scan_two_outs", "scan_delegate_args", "scan_delegate_returns", "scan_inplace_two",
    ]
    # ops/conformance/*.yaml, checked against fixtures/native_functions.yaml
    REQUIRED_CONFORMANCE = [
        "duplicate_key", "int_range", "float_range", "arg_type", "unknown_entry", "no_overload",
        "misspelt", "not_owner", "unknown_key", "not_a_mapping",
        # keys the case generator would ignore for that kind of entry
        "values_structured", "sample_out_structured", "special_sampled", "args_without_shapes", "promote_unary",
        # the dtypes are the schema's (issue 16)
        "dtypes_in_conformance",
    ]
    REQUIRED_DERIVATIVES = [
        "unknown_op", "schema_mismatch", "key_not_argument", "key_not_tensor", "unknown_call",
        "unknown_identifier", "formula_syntax", "unknown_method", "duplicate_entry",
        "output_differentiability",
        # Tensor[] inputs and returns (codegen/gen_autograd.py)
        "list_formula_not_list", "list_helper_not_list", "list_sizes", "list_return_reads_result",
        "grads_out_of_range",
        # an in-place entry takes its own formulas only when it has no functional form
        "inplace_with_functional",
        # a name without its overload, or misspelt: the error suggests the entry
        "unknown_overload", "misspelt",
    ]

    def check_fixture(self, path, args):
        line, fragment = expectation(path)
        p = run_gen("check", *args, timeout=HOSTILE_TIMEOUT)
        self.assertEqual(p.returncode, 1, f"{path}: expected exit status 1\n{p.stderr}")
        errors = p.stderr.strip().splitlines()
        self.assertEqual(len(errors), 1, f"{path}: expected exactly one error, got:\n{p.stderr}")
        prefix = f"{os.path.normpath(path)}:{line}: "
        self.assertTrue(errors[0].startswith(prefix), f"{path}: expected prefix {prefix!r}, got {errors[0]!r}")
        self.assertIn(fragment, errors[0])

    def test_every_rule_has_a_fixture(self):
        have = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(FIXTURES, "bad", "*.yaml"))}
        self.assertEqual(sorted(set(self.REQUIRED_NATIVE) - have), [])
        have = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(FIXTURES, "bad_derivatives", "*.yaml"))}
        self.assertEqual(sorted(set(self.REQUIRED_DERIVATIVES) - have), [])
        have = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(FIXTURES, "bad_conformance", "*.yaml"))}
        self.assertEqual(sorted(set(self.REQUIRED_CONFORMANCE) - have), [])

    def test_native_functions_fixtures(self):
        for path in sorted(glob.glob(os.path.join(FIXTURES, "bad", "*.yaml"))):
            with self.subTest(fixture=os.path.basename(path)):
                self.check_fixture(path, ["--native", path, "--kernel-sources", FIX_KERNELS])

    def test_derivatives_fixtures(self):
        for path in sorted(glob.glob(os.path.join(FIXTURES, "bad_derivatives", "*.yaml"))):
            with self.subTest(fixture=os.path.basename(path)):
                self.check_fixture(path, ["--native", FIX_NATIVE, "--derivatives", path,
                                          "--kernel-sources", FIX_KERNELS])

    def test_conformance_fixtures(self):
        for path in sorted(glob.glob(os.path.join(FIXTURES, "bad_conformance", "*.yaml"))):
            with self.subTest(fixture=os.path.basename(path)):
                self.check_fixture(path, ["--native", FIX_NATIVE, "--conformance", path,
                                          "--kernel-sources", FIX_KERNELS])

    def test_conformance_key_in_two_files(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.yaml"), os.path.join(d, "b.yaml")
            with open(a, "w") as f:
                f.write("neg.out:\n  note: a\n")
            with open(b, "w") as f:
                f.write("# b\n\nneg.out: {note: b}\n")
            p = run_gen("check", "--native", FIX_NATIVE, "--conformance", a, b, "--no-kernel-check")
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr.strip().splitlines(), [f"{b}:3: second metadata for 'neg.out' (first at {a}:1)"])

    def test_conformance_and_derivatives_errors_both_reported(self):
        bad_conf = os.path.join(FIXTURES, "bad_conformance", "no_overload.yaml")
        bad_deriv = os.path.join(FIXTURES, "bad_derivatives", "unknown_overload.yaml")
        p = run_gen("check", "--native", FIX_NATIVE, "--conformance", bad_conf, "--derivatives", bad_deriv,
                    "--no-kernel-check")
        self.assertEqual(p.returncode, 1)
        errors = p.stderr.strip().splitlines()
        self.assertEqual(len(errors), 2, p.stderr)
        self.assertTrue(errors[0].startswith(f"{bad_conf}:3: 'add' is not an entry"), errors[0])
        self.assertTrue(errors[1].startswith(f"{bad_deriv}:2: 'add' is not an entry"), errors[1])

    def test_default_conformance_files(self):
        """Without --conformance the files beside the schema are read: conformance/*.yaml."""
        self.assertEqual(model.conformance_files(FIX_NATIVE), [os.path.join(FIXTURES, "conformance", "fixture.yaml")])
        m = model.load_model(FIX_NATIVE)
        self.assertTrue(m.by_name["add.out"].has_conformance)
        self.assertEqual(m.by_name["add.out"].conformance["ref"], "np.add(self, other * alpha)")
        # the dtypes are the schema's own key, read with or without the metadata
        self.assertEqual(m.by_name["add.out"].dtypes.accept, dtypes_mod.DTYPE_SETS["numeric"])
        self.assertFalse(m.by_name["neg.out"].has_conformance)
        self.assertFalse(model.load_model(FIX_NATIVE, conformance=()).by_name["add.out"].has_conformance)

    def test_good_fixture_passes(self):
        p = run_gen("check", "--native", FIX_NATIVE, "--derivatives", FIX_DERIVS, "--kernel-sources", FIX_KERNELS)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")

    def test_kernel_check_can_be_disabled(self):
        path = os.path.join(FIXTURES, "bad", "kernel_missing.yaml")
        p = run_gen("check", "--native", path, "--no-kernel-check")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_cuda_kernels_checked_only_with_cuda(self):
        # add_out_cuda is defined in kernels.c; zeros_cuda too.  Without --cuda the
        # CUDA column is not checked, so an empty source list fails only on CPU kernels.
        with tempfile.TemporaryDirectory() as d:
            y = os.path.join(d, "n.yaml")
            with open(y, "w") as f:
                f.write("- func: zeros(int[] size) -> Tensor\n"
                        "  dispatch:\n"
                        "    CPU: zeros_cpu\n"
                        "    CUDA: zeros_cuda_missing\n")
            self.assertEqual(run_gen("check", "--native", y, "--kernel-sources", FIX_KERNELS).returncode, 0)
            p = run_gen("check", "--native", y, "--cuda", "--kernel-sources", FIX_KERNELS)
            self.assertEqual(p.returncode, 1)
            self.assertIn(f"{y}:4: zeros: dispatch kernel 'zeros_cuda_missing' (CUDA)", p.stderr)

    def test_kernel_dispatching_over_another_entrys_dtypes(self):
        """A kernel whose dtype switch names another entry's declaration is refused at the
        line of that switch (it would accept what the other entry declares)."""
        with tempfile.TemporaryDirectory() as d:
            k = os.path.join(d, "kernels.c")
            with open(FIX_KERNELS, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("OPS_DISPATCH_DECLARED(NEG_OUT,", text)
            with open(k, "w", encoding="utf-8") as f:
                f.write(text.replace("OPS_DISPATCH_DECLARED(NEG_OUT,", "OPS_DISPATCH_DECLARED(ADD_OUT,"))
            line = text[:text.index("OPS_DISPATCH_DECLARED(NEG_OUT,")].count("\n") + 1
            p = run_gen("check", "--native", FIX_NATIVE, "--kernel-sources", k)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr.strip().splitlines(),
                             [f"{k}:{line}: neg_out_cpu, the kernel of neg.out, dispatches over ADD_OUT, the "
                              "dtypes add.out declares; its own are NEG_OUT"])
            self.assertEqual(run_gen("check", "--native", FIX_NATIVE, "--kernel-sources", FIX_KERNELS).returncode, 0)

    def test_all_errors_reported_in_file_order(self):
        with tempfile.TemporaryDirectory() as d:
            y = os.path.join(d, "n.yaml")
            with open(y, "w") as f:
                f.write("- func: b(Tensor self) -> Tensor\n"
                        "  dispatch:\n"
                        "    GPU: zeros_cpu\n"
                        "- func: a(Tensor self) -> Tensor\n"
                        "  colour: red\n")
            p = run_gen("check", "--native", y, "--no-kernel-check")
            self.assertEqual(p.returncode, 1)
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 2, p.stderr)
            self.assertTrue(lines[0].startswith(f"{y}:3: b: unknown dispatch key 'GPU'"), lines[0])
            self.assertTrue(lines[1].startswith(f"{y}:5: unknown key 'colour'"), lines[1])

    def test_missing_file(self):
        p = run_gen("check", "--native", os.path.join(FIXTURES, "no_such_file.yaml"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("no_such_file.yaml:1: ", p.stderr)


# Generous: each hostile input is refused in well under a second; the limit only turns
# a hang (an alias bomb expanding, a quadratic parse) into a failure.
HOSTILE_TIMEOUT = 20

NEG_ENTRY = "- func: neg(Tensor self) -> Tensor\n  dispatch:\n    CPU: neg_out_cpu\n"


class Hostile(unittest.TestCase):
    """Inputs too big to keep as fixtures, or not text (issue 13): each is refused with
    exit status 1 and one `file:line: reason`, by `check` and by the generators, quickly."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="codegen-hostile-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write(self, name, content):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    def refused(self, path, line, fragment, derivatives=None, artifacts=("check", "all")):
        args = ["--native", derivatives[0] if derivatives else path, "--no-kernel-check"]
        if derivatives:
            args += ["--derivatives", path]
        for art in artifacts:
            with self.subTest(artifact=art):
                p = run_gen(art, *args, "--out-dir", os.path.join(self.tmp, "out"), timeout=HOSTILE_TIMEOUT)
                self.assertEqual(p.returncode, 1, p.stderr[-2000:])
                self.assertNotIn("Traceback", p.stderr)
                errors = p.stderr.strip().splitlines()
                self.assertEqual(len(errors), 1, p.stderr[-2000:])
                self.assertTrue(errors[0].startswith(f"{path}:{line}: "), errors[0][:300])
                self.assertIn(fragment, errors[0])
                self.assertLess(len(errors[0]), 500)  # a huge input is not echoed whole

    def neg_yaml(self):
        return self.write("neg.yaml", NEG_ENTRY)

    def test_not_utf8(self):
        path = self.write("latin1.yaml", NEG_ENTRY.encode() + b"  # caf\xe9\n")
        self.refused(path, 4, "not UTF-8 text: byte 0xe9")

    def test_utf16(self):
        path = self.write("utf16.yaml", NEG_ENTRY.encode("utf-16"))
        self.refused(path, 1, "not UTF-8 text")

    def test_derivatives_not_utf8(self):
        path = self.write("d_latin1.yaml", b"- name: neg(Tensor self) -> Tensor\n  self: neg(grad) # \xff\n")
        self.refused(path, 2, "not UTF-8 text", derivatives=[self.neg_yaml()])

    def test_nested_brackets(self):
        # 100k `[`: PyYAML's C composer recursed once per level and crashed (SIGSEGV)
        path = self.write("nested.yaml", NEG_ENTRY + "  conformance:\n    note: " + "[" * 100000 + "]" * 100000 + "\n")
        self.refused(path, 5, f"nested more than {model.MAX_DEPTH} deep")

    def test_nested_blocks(self):
        text = NEG_ENTRY + "  conformance:\n" + "".join(" " * (2 * i + 4) + f"k{i}:\n" for i in range(300))
        path = self.write("blocks.yaml", text + " " * 604 + "x: 1\n")
        self.refused(path, 4 + model.MAX_DEPTH - 1, f"nested more than {model.MAX_DEPTH} deep")

    def test_alias_bomb_in_derivatives(self):
        path = self.write("d_alias.yaml", "- name: neg(Tensor self) -> Tensor\n  self: &f neg(grad)\n"
                                          "- name: neg(Tensor self) -> Tensor\n  self: *f\n")
        self.refused(path, 2, "anchors and aliases are not allowed", derivatives=[self.neg_yaml()])

    def test_huge_formula(self):
        # 100k terms: Python's parser raised RecursionError (a traceback)
        path = self.write("d_terms.yaml", "- name: neg(Tensor self) -> Tensor\n  self: " +
                          " + ".join(["grad"] * 100000) + "\n")
        self.refused(path, 2, "characters (the limit is", derivatives=[self.neg_yaml()])

    def test_long_formula(self):
        from codegen import derivatives
        n = derivatives.MAX_FORMULA_CHARS // 7 + 1
        path = self.write("d_long.yaml",
                          "- name: neg(Tensor self) -> Tensor\n  self: " + " + ".join(["grad"] * n) + "\n")
        self.refused(path, 2, "neg: a formula of", derivatives=[self.neg_yaml()])

    def test_deep_formula(self):
        from codegen import derivatives
        n = derivatives.MAX_FORMULA_DEPTH
        for name, formula in [("chain", "+".join(["grad"] * n)), ("calls", "neg(" * n + "grad" + ")" * n)]:
            with self.subTest(formula=name):
                path = self.write(f"d_{name}.yaml", f"- name: neg(Tensor self) -> Tensor\n  self: {formula}\n")
                self.refused(path, 2, "levels deep", derivatives=[self.neg_yaml()])

    def test_formula_constant_range(self):
        for name, const, why in [("int", "9223372036854775808", "does not fit in int64"),
                                 ("hex", "0x" + "f" * 40, "does not fit in int64"),
                                 ("float", "1e999", "out of the range of a double")]:
            with self.subTest(constant=name):
                path = self.write(f"d_{name}.yaml", f"- name: neg(Tensor self) -> Tensor\n  self: grad * {const}\n")
                self.refused(path, 2, why, derivatives=[self.neg_yaml()])

    def test_deep_ref(self):
        path = self.write("ref.yaml", "neg:\n  ref: '" + "+".join(["self"] * 12000) + "'\n")
        for art in ("check", "all"):
            with self.subTest(artifact=art):
                p = run_gen(art, "--native", self.neg_yaml(), "--conformance", path, "--no-kernel-check",
                            "--out-dir", os.path.join(self.tmp, "out"), timeout=HOSTILE_TIMEOUT)
                self.assertEqual(p.returncode, 1, p.stderr[-2000:])
                errors = p.stderr.strip().splitlines()
                self.assertEqual(len(errors), 1, p.stderr[-2000:])
                self.assertTrue(errors[0].startswith(f"{path}:2: "), errors[0][:300])
                self.assertIn("ref: the expression is nested too deeply to parse", errors[0])

    def test_huge_string(self):
        path = self.write("string.yaml", NEG_ENTRY + "  tags: " + "x" * (model.MAX_SCALAR_CHARS + 1) + "\n")
        self.refused(path, 4, f"(the limit is {model.MAX_SCALAR_CHARS})")

    def test_too_many_values(self):
        path = self.write("values.yaml",
                          NEG_ENTRY + "  conformance:\n    note: [" + ",".join(["1"] * model.MAX_NODES) + "]\n")
        self.refused(path, 5, f"more than {model.MAX_NODES} YAML values")

    def test_too_big(self):
        path = self.write("big.yaml", NEG_ENTRY + "#" * model.MAX_FILE_BYTES + "\n")
        self.refused(path, 1, f"larger than {model.MAX_FILE_BYTES} bytes")

    def test_huge_integer_digits(self):
        # int() refuses more than 4300 digits: the loader must not ask it
        path = self.write("digits.yaml", NEG_ENTRY + "  conformance:\n    note: " + "9" * 5000 + "\n")
        self.refused(path, 5, "does not fit in int64")
        path = self.write("digits2.yaml", "- func: f(Tensor self, int k=" + "9" * 5000 + ") -> Tensor\n"
                                          "  dispatch:\n    CPU: neg_out_cpu\n")
        self.refused(path, 1, "is not an int64")

    def test_extreme_defaults_compile(self):
        """int64's ends and infinities are valid defaults: the C they become compiles
        (-9223372036854775808 is not an int64 literal in C, inf no C identifier)."""
        if not have_cc() or not BUILD_ROOT:
            self.skipTest("no C compiler or build tree")
        import sysconfig
        pyinc = sysconfig.get_paths().get("include")
        schema = ("f(Tensor self, int k=-9223372036854775808, int j=9223372036854775807, "
                  "int[2] s=[-9223372036854775808, 9223372036854775807], int[2] t=-9223372036854775808, "
                  "Scalar a=-9223372036854775808, float? m=-inf, float p=inf) -> Tensor")
        native = self.write("extreme.yaml", f"- func: {schema}\n  dispatch:\n    CPU: f_cpu\n")
        derivs = self.write("extreme_d.yaml", f"- name: {schema}\n  self: grad\n")
        out = os.path.join(self.tmp, "extreme")
        p = run_gen("all", "--native", native, "--derivatives", derivs, "--no-kernel-check", "--out-dir", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        files = sorted(glob.glob(os.path.join(out, "*.c")))
        dirs = RUNTIME_INC + [out]
        if pyinc and os.path.exists(os.path.join(pyinc, "Python.h")):
            dirs += [os.path.join(ROOT, "python", "src"), pyinc]
        else:
            files = [f for f in files if not f.endswith("python_bindings.c")]
        self.assertEqual(compile_c(files, dirs), {})


    def test_bool_list_entries_compile(self):
        """bool[] and bool[N] arguments, with and without defaults, through every
        generator: the C (glue, registry, autograd, Python binding) compiles."""
        if not have_cc() or not BUILD_ROOT:
            self.skipTest("no C compiler or build tree")
        import sysconfig
        pyinc = sysconfig.get_paths().get("include")
        schema = "f(Tensor self, bool[3] mask, bool[] flags=[True, False], bool[] none=[]) -> Tensor"
        native = self.write("bools.yaml", f"- func: {schema}\n  dispatch:\n    CPU: f_cpu\n")
        derivs = self.write("bools_d.yaml", f"- name: {schema}\n  self: grad\n")
        out = os.path.join(self.tmp, "bools")
        p = run_gen("all", "--native", native, "--derivatives", derivs, "--no-kernel-check", "--out-dir", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        files = sorted(glob.glob(os.path.join(out, "*.c")))
        dirs = RUNTIME_INC + [out]
        if pyinc and os.path.exists(os.path.join(pyinc, "Python.h")):
            dirs += [os.path.join(ROOT, "python", "src"), pyinc]
        else:
            files = [f for f in files if not f.endswith("python_bindings.c")]
        self.assertEqual(compile_c(files, dirs), {})
        with open(os.path.join(out, "python_bindings.c")) as fh:
            py = fh.read()
        self.assertIn("PYOPS_T_BOOL_LIST", py)
        self.assertIn("static const bool", py)


class Model(unittest.TestCase):
    """The model's reading of schemas, against docs/codegen.md."""

    def test_c_names_of_the_doc_table(self):
        table = {
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor": "ops_add",
            "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor": "ops_add_scalar",
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)": "ops_add_out",
            "add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)":
                "ops_add_scalar_out",
            "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)": "ops_add_",
            "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)": "ops_add_scalar_",
            "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor": "ops_div_tensor_mode",
            "neg(Tensor self) -> Tensor": "ops_neg",
        }
        for schema, c_name in table.items():
            with self.subTest(schema=schema):
                self.assertEqual(model.parse_schema(schema).c_name, c_name)

    def test_kinds(self):
        kinds = {
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)": "out",
            "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)": "inplace",
            "view(Tensor(a) self, int[] size) -> Tensor(a)": "functional",
            "max.dim_max(Tensor self, int dim, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!), Tensor(b!))":
                "out",
        }
        for schema, kind in kinds.items():
            with self.subTest(schema=schema):
                s = model.parse_schema(schema)
                model.check_kind(s)
                self.assertEqual(s.kind, kind)

    def test_arguments_and_defaults(self):
        s = model.parse_schema("f(Tensor self, int[2] stride=1, float eps=1e-05, str mode='reflect', "
                               "Scalar alpha=1, int[]? size=None, *, bool flag=True, ScalarType? dtype=None) -> Tensor")
        a = {x.name: x for x in s.arguments}
        self.assertEqual(a["stride"].default_value, [1, 1])
        self.assertEqual(a["stride"].type, model.Type("int", is_list=True, size=2))
        self.assertEqual(a["eps"].default_value, 1e-05)
        self.assertEqual(a["mode"].default_value, "reflect")
        self.assertEqual(a["alpha"].default_value, 1)
        self.assertIsNone(a["size"].default_value)
        self.assertEqual(a["size"].default, "None")
        self.assertTrue(a["flag"].kwarg_only and a["flag"].default_value is True)
        self.assertFalse(a["alpha"].kwarg_only)
        self.assertEqual(a["dtype"].type_str, "ScalarType?")

    def test_bool_lists(self):
        """bool[] / bool[N] (PyTorch's `bool[3] output_mask`): bracketed True/False
        defaults of the right length; no optional bool list, no bare default."""
        s = model.parse_schema("f(Tensor self, bool[3] mask, bool[] flags=[True, False], "
                               "bool[2] two=[False, True]) -> Tensor")
        a = {x.name: x for x in s.arguments}
        self.assertEqual(a["mask"].type, model.Type("bool", is_list=True, size=3))
        self.assertEqual(a["mask"].type_str, "bool[3]")
        self.assertEqual(a["flags"].default_value, [True, False])
        self.assertEqual(a["two"].default_value, [False, True])
        for bad, why in (("bool[]? x", "unsupported type"), ("bool?[] x", "only Tensor?[] lists"),
                         ("bool[2] x=[True]", "a list of 2 bools"), ("bool[2] x=True", "a bool list"),
                         ("bool[] x=[1, 0]", "a bool list"), ("bool[0] x", "bad list size")):
            with self.subTest(arg=bad):
                with self.assertRaises(model.GrammarError) as cm:
                    model.parse_schema(f"f(Tensor self, {bad}) -> Tensor")
                self.assertIn(why, str(cm.exception))

    def test_c_types_of_the_doc_table(self):
        table = {
            "Tensor x": "const ops_tensor *", "Tensor(a) x": "const ops_tensor *", "Tensor? x": "const ops_tensor *",
            "Tensor[] x": "ops_tensor_list", "Scalar x": "ops_scalar", "Scalar? x": "const ops_scalar *",
            "ScalarType x": "ops_dtype", "ScalarType? x": "ops_dtype", "Device? x": "ops_device",
            "int x": "int64_t", "SymInt x": "int64_t", "int? x": "const int64_t *", "int[] x": "ops_int_list",
            "int[3] x": "ops_int_list", "SymInt[] x": "ops_int_list", "int[]? x": "const ops_int_list *",
            "float x": "double", "float? x": "const double *", "bool x": "bool", "bool? x": "const bool *",
            "str x": "const char *", "str? x": "const char *", "bool[] x": "ops_bool_list",
            "bool[3] x": "ops_bool_list",
        }
        for arg, ctype in table.items():
            with self.subTest(arg=arg):
                s = model.parse_schema(f"f(Tensor self, {arg}) -> Tensor")
                self.assertEqual(cnames.c_type(s.arguments[1]), ctype)
        s = model.parse_schema("f_(Tensor(a!) self) -> Tensor(a!)")
        self.assertEqual(cnames.c_type(s.arguments[0]), "ops_tensor *")

    def test_groups(self):
        m = model.load_model(FIX_NATIVE)
        g = m.by_name["add.Tensor"].group
        self.assertEqual((g.functional.name, g.inplace.name, g.out.name), ("add.Tensor", "add_.Tensor", "add.out"))
        g = m.by_name["add.Scalar"].group
        self.assertEqual((g.functional.name, g.inplace.name, g.out.name),
                         ("add.Scalar", "add_.Scalar", "add.Scalar_out"))
        g = m.by_name["neg_"].group
        self.assertEqual((g.functional.name, g.inplace.name, g.out.name), ("neg", "neg_", "neg.out"))
        g = m.by_name["view"].group
        self.assertEqual((g.functional.name, g.inplace, g.out), ("view", None, None))
        # Every entry is in exactly one group, in the slot of its kind.
        for nf in m.functions:
            self.assertIs(getattr(nf.group, nf.kind), nf)

    def test_delegates_resolved(self):
        m = model.load_model(FIX_NATIVE)
        self.assertIs(m.by_name["add.Scalar_out"].delegate, m.by_name["add.out"])
        self.assertIsNone(m.by_name["add.out"].delegate)
        self.assertTrue(m.by_name["add.out"].structured)

    def test_meta_families_are_the_ops_iter_h_ones(self):
        with open(os.path.join(ROOT, "runtime", "dispatch", "ops_iter.h"), encoding="utf-8") as f:
            text = f.read()
        declared = set(re.findall(r"\bops_meta_(\w+)\(ops_iter \*it, const ops_meta_args \*a\)", text))
        self.assertEqual(declared, set(model.META_FAMILIES))
        m = re.search(r"#define OPS_ITER_MAX_INPUTS (\d+)", text)
        self.assertEqual(int(m.group(1)), model.ITER_MAX_INPUTS)
        m = re.search(r"const char \*strs\[(\d+)\];", text)
        self.assertEqual(int(m.group(1)), model.ITER_MAX_STRS)

    def test_derivatives_model(self):
        from codegen import derivatives
        m = model.load_model(FIX_NATIVE)
        ds = derivatives.load_derivatives(FIX_DERIVS, m)
        by = {d.func.name: d for d in ds}
        self.assertEqual(sorted(by["add.Tensor"].formulas), ["other", "result", "self"])
        self.assertEqual(by["max.dim"].output_differentiability, [True, False])
        self.assertIn("min, max", by["clampt.Tensor"].formulas)
        self.assertEqual(by["clampt.Tensor"].non_differentiable, ("max",))


class Generated(unittest.TestCase):
    """What is generated from tests/codegen/fixtures/native_functions.yaml."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="codegen-test-")
        cls.out = os.path.join(cls.tmp, "out")
        p = run_gen("all", "--native", FIX_NATIVE, "--derivatives", FIX_DERIVS, "--out-dir", cls.out,
                    "--kernel-sources", FIX_KERNELS)
        if p.returncode != 0:
            raise AssertionError(p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def read(self, name):
        with open(os.path.join(self.out, name), encoding="utf-8") as f:
            return f.read()

    def read_all(self, pattern):
        """The generated files matching a glob pattern, concatenated (an umbrella and
        its shards)."""
        return "".join(self.read(os.path.basename(p)) for p in sorted(glob.glob(os.path.join(self.out, pattern))))

    def test_outputs(self):
        # The fixture's kernels are in no kernels/ folder: one shard, `core`; one op
        # header per op name (an in-place form `foo_` goes with `foo`).
        with open(FIX_NATIVE, encoding="utf-8") as f:
            names = set(re.findall(r"^- func: (\w+)", f.read(), re.M))
        ops = {n[:-1] if n.endswith("_") else n for n in names}
        self.assertIn("add", ops)
        self.assertEqual(sorted(os.listdir(self.out)), sorted(
            ["ops_functions.h", "ops_kernels.h", "ops_glue.h", "ops_dispatch.c", "ops_registry.c",
             "ops_autograd_gen.h", "ops_autograd_gen.c", "python_bindings.c", "ops_stubs.c"]
            + [f"ops_{kind}_core.{ext}" for kind, ext in
               (("functions", "h"), ("kernels", "h"), ("autograd_gen", "h"), ("glue", "c"))]
            + [f"ops_op_{n}.h" for n in ops]))

    def test_op_headers(self):
        """ops_op_<name>.h declares the entries of one name and of its in-place form, as
        the family shard does, and nothing else."""
        h = self.read("ops_op_add.h")
        self.assertIn("#ifndef OPS_GENERATED_OP_ADD_H", h)
        self.assertIn('#include "ops_tensor.h"', h)
        for proto in ("ops_tensor *ops_add(const ops_tensor *self, const ops_tensor *other, ops_scalar alpha);",
                      "ops_status ops_add_(ops_tensor *self, const ops_tensor *other, ops_scalar alpha);"):
            self.assertIn("OPS_API " + proto, h)
            self.assertIn("OPS_API " + proto, self.read("ops_functions_core.h"))
        self.assertNotIn("ops_cat", h)

    def test_first_line_says_generated(self):
        for name in os.listdir(self.out):
            with self.subTest(file=name):
                first = self.read(name).splitlines()[0]
                self.assertRegex(first, r"^/\* Generated by codegen/gen_\w+\.py .*from .*native_functions\.yaml")
                self.assertIn("Do not edit", first)
                self.assertNotIn(self.tmp, first)

    def test_public_prototypes(self):
        self.assertIn('#include "ops_functions_core.h"', self.read("ops_functions.h"))
        h = self.read_all("ops_functions*.h")
        self.assertIn('#include "ops_base.h"', h)
        self.assertIn('#include "ops_tensor.h"', h)
        expected = {
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor":
                "ops_tensor *ops_add(const ops_tensor *self, const ops_tensor *other, ops_scalar alpha)",
            "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)":
                "ops_status ops_add_(ops_tensor *self, const ops_tensor *other, ops_scalar alpha)",
            "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor":
                "ops_tensor *ops_add_scalar(const ops_tensor *self, ops_scalar other, ops_scalar alpha)",
            "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)":
                "ops_status ops_add_scalar_(ops_tensor *self, ops_scalar other, ops_scalar alpha)",
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)":
                "ops_status ops_add_out(const ops_tensor *self, const ops_tensor *other, ops_scalar alpha, "
                "ops_tensor *out)",
            "add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)":
                "ops_status ops_add_scalar_out(const ops_tensor *self, ops_scalar other, ops_scalar alpha, "
                "ops_tensor *out)",
            "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor":
                "ops_tensor *ops_div_tensor_mode(const ops_tensor *self, const ops_tensor *other, "
                "const char *rounding_mode)",
            "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor":
                "ops_tensor *ops_clamp(const ops_tensor *self, const ops_scalar *min, const ops_scalar *max)",
            "zeros(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor":
                "ops_tensor *ops_zeros(ops_int_list size, ops_dtype dtype, ops_device device)",
            "cat(Tensor[] tensors, int dim=0) -> Tensor":
                "ops_tensor *ops_cat(ops_tensor_list tensors, int64_t dim)",
            "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)":
                "ops_status ops_max_dim(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor **values, "
                "ops_tensor **indices)",
            "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) "
            "-> (Tensor(a!), Tensor(b!))":
                "ops_status ops_max_dim_max(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *max, "
                "ops_tensor *max_values)",
            "is_nonzero(Tensor self) -> bool": "ops_status ops_is_nonzero(const ops_tensor *self, bool *result)",
            "item(Tensor self) -> Scalar": "ops_status ops_item(const ops_tensor *self, ops_scalar *result)",
            "norm_parts(Tensor self) -> (float, int)":
                "ops_status ops_norm_parts(const ops_tensor *self, double *result0, int64_t *result1)",
            "check_finite(Tensor self, Device? device=None) -> ()":
                "ops_status ops_check_finite(const ops_tensor *self, ops_device device)",
            "view(Tensor(a) self, int[] size) -> Tensor(a)":
                "ops_tensor *ops_view(const ops_tensor *self, ops_int_list size)",
        }
        for schema, proto in expected.items():
            with self.subTest(schema=schema):
                self.assertIn(f"/* {schema} */\nOPS_API {proto};\n", h)

    def test_kernel_prototypes(self):
        h = self.read_all("ops_kernels*.h")
        self.assertIn('#include "ops_iter.h"', h)
        for proto in [
            "ops_status add_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, ops_scalar alpha);",
            "ops_status add_out_cuda(ops_iter *it, const ops_tensor *self, const ops_tensor *other, "
            "ops_scalar alpha);",
            "ops_status div_out_mode_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, "
            "const char *rounding_mode);",
            "ops_tensor *zeros_cpu(ops_int_list size, ops_dtype dtype, ops_device device);",
            "ops_status copy_cpu_(ops_tensor *self, const ops_tensor *src, bool non_blocking);",
        ]:
            with self.subTest(proto=proto):
                self.assertIn(proto, h)
        # Delegating entries have no kernel of their own.
        self.assertNotIn("add_scalar", h)

    def test_dispatch_table(self):
        c = self.read_all("ops_glue_*.c")  # each family's table is in its glue

        def row(op_id):
            m = re.search(r"\[" + op_id + r"\] = \{[^\n]*\n(.*?)\n    \},", c, re.S)
            self.assertIsNotNone(m, op_id)
            return m.group(1)
        self.assertRegex(row("OPS_OP_ADD_OUT"),
                         r"\[OPS_CPU\] = \(ops_kernel_fn\)add_out_cpu,\n#ifdef OPS_WITH_CUDA\n"
                         r" +\[OPS_CUDA\] = \(ops_kernel_fn\)add_out_cuda,\n#endif")
        # The composite kernel fills every column; a backend key overrides its column.
        self.assertRegex(row("OPS_OP_VIEW"), r"\[OPS_CPU\] = \(ops_kernel_fn\)view_impl,\n"
                                             r" +\[OPS_CUDA\] = \(ops_kernel_fn\)view_impl,")
        self.assertRegex(row("OPS_OP_CONV_LIKE"), r"\[OPS_CPU\] = \(ops_kernel_fn\)conv_like_cpu,\n"
                                                  r" +\[OPS_CUDA\] = \(ops_kernel_fn\)conv_like_impl,")
        self.assertNotIn("[OPS_OP_ADD_SCALAR]", c)  # delegates have no row

    def test_glue_paths(self):
        glue = self.read_all("ops_glue_*.c")

        def body(c_name):
            m = re.search(r"\n" + re.escape(c_name) + r"\(.*?\n\{\n(.*?)\n\}\n", glue, re.S)
            self.assertIsNotNone(m, c_name)
            return m.group(1)
        # The public function is the autograd layer: the plain call unless an input
        # requires grad; the checks and the kernel call live below it in ops_base_*.
        pub = body("ops_add_scalar_")
        self.assertIn("ops_ag_needed(1, _ag)", pub)
        self.assertIn("return ops_base_add_scalar_(self, other, alpha);", pub)
        self.assertIn('ops_autograd_out_error("add")', body("ops_add_scalar_out"))
        # Scalar where the kernel entry has a Tensor: wrapped, passed as a tensor, released.
        b = body("ops_base_add_scalar_")
        self.assertIn("ops_wrap_scalar(other)", b)
        self.assertIn(".mode = OPS_ITER_INPLACE", b)
        self.assertIn(".out = self", b)
        self.assertIn(".tensors = {self, _w_other}", b)
        self.assertIn(".scalars = {&alpha}", b)
        self.assertIn("ops_meta_binary(&_it, &_args)", b)
        self.assertIn("OPS_OP_ADD_OUT", b)
        self.assertIn("ops_tensor_release(_w_other)", b)
        self.assertIn('"add_: argument \'self\' must be a Tensor, got NULL"', b)
        # str arguments reach the meta (div's rounding_mode).
        self.assertIn(".strs = {rounding_mode}", body("ops_base_div_scalar_mode"))
        # device_check: NoCheck skips the same-device check; structured entries leave it to
        # ops_iter_build (CPU 0-dim inputs may join a CUDA op), the others keep it strict;
        # zeros dispatches on its device argument.
        self.assertNotIn("ops_check_same_device", body("ops_base_copy_"))
        self.assertNotIn("ops_check_same_device", body("ops_base_add"))
        self.assertIn("ops_check_same_device", body("ops_base_conv_like"))
        self.assertIn("device.type != OPS_DEVICE_TYPE_NONE ? device : OPS_DEVICE_CPU", body("ops_zeros"))
        self.assertIn('ops_dispatch_no_kernel("zeros", _dev)', body("ops_zeros"))
        # int[N] lengths are checked.
        self.assertIn("stride.len != 2", body("ops_base_conv_like"))

    def test_declared_dtypes(self):
        """`dtypes:` is checked by the glue after the meta and before the kernel (every
        form of the op, the delegates included), with the declared message if any; the
        kernels get the set as an X-macro in their kernel header (ops_kernels_<file>.h)."""
        glue = self.read_all("ops_glue_*.c")

        def body(c_name):
            m = re.search(r"\n" + re.escape(c_name) + r"\(.*?\n\{\n(.*?)\n\}\n", glue, re.S)
            self.assertIsNotNone(m, c_name)
            return m.group(1)
        numeric = " | ".join(f"OPS_DTYPE_BIT(OPS_{d.upper()})" for d in dtypes_mod.DTYPE_SETS["numeric"])
        for c_name, op in (("ops_base_add", "add"), ("ops_base_add_scalar_", "add_"), ("ops_base_add_out", "add")):
            with self.subTest(entry=c_name):
                b = body(c_name)
                check = (f'_st = ops_check_dtype_declared("{op}", ops_meta_input_dtype(&_args, 0, false), '
                         f"({numeric}), NULL);")
                self.assertIn(check, b)
                self.assertLess(b.index("ops_meta_binary(&_it, &_args)"), b.index(check))
                self.assertLess(b.index(check), b.index("ops_dispatch_lookup"))
        self.assertIn('"negation of this dtype is not supported");', body("ops_base_neg"))
        # an entry without dtypes: (every dtype) has no check
        self.assertNotIn("ops_check_dtype_declared", body("ops_base_div_scalar_mode"))
        h = self.read("ops_kernels_core.h")
        self.assertIn("#define OPS_DTYPES_NEG_OUT(M, ...) M(INT64, __VA_ARGS__) M(FLOAT32, __VA_ARGS__) "
                      "M(FLOAT64, __VA_ARGS__)\n", h)
        self.assertIn("#define OPS_DTYPE_MASK_NEG_OUT (OPS_DTYPE_BIT(OPS_INT64) | OPS_DTYPE_BIT(OPS_FLOAT32) | "
                      "OPS_DTYPE_BIT(OPS_FLOAT64))\n", h)
        self.assertIn("#define OPS_DTYPE_MASK_ADD_OUT OPS_MASK_NUMERIC\n", h)

    def test_argument_check(self):
        """`check:` is called by the glue after the meta and the declared-dtype check and
        before the kernel, once the device has a kernel (every form of the op, the
        delegates with their wrapped Scalars included); its prototype is generated beside
        the kernels', without a dtype set of its own."""
        glue = self.read_all("ops_glue_*.c")

        def body(c_name):
            m = re.search(r"\n" + re.escape(c_name) + r"\(.*?\n\{\n(.*?)\n\}\n", glue, re.S)
            self.assertIsNotNone(m, c_name)
            return m.group(1)
        for c_name, op, args in (("ops_base_add", "add", "self, other, alpha"),
                                 ("ops_base_add_scalar_", "add_", "self, _w_other, alpha"),
                                 ("ops_base_add_out", "add", "self, other, alpha")):
            with self.subTest(entry=c_name):
                b = body(c_name)
                check = (f"_st = _fn != NULL ? ops_check_fixture_add(&_it, {args}) : "
                         f'ops_dispatch_no_kernel("{op}", _it.device);')
                call = f"_st = _fn(&_it, {args});"
                self.assertEqual(b.count(check), 1)
                self.assertEqual(b.count(call), 1)
                self.assertLess(b.index("ops_meta_binary(&_it, &_args)"), b.index("ops_check_dtype_declared"))
                self.assertLess(b.index("ops_check_dtype_declared"), b.index("ops_dispatch_lookup"))
                self.assertLess(b.index("ops_dispatch_lookup"), b.index(check))
                self.assertLess(b.index(check), b.index(call))
                self.assertLess(b.index(call), b.index("ops_iter_finish"))
        self.assertIn("ops_check_fixture_clamp(&_it, self, min, max)", body("ops_base_clamp"))
        # an entry without `check:` calls its kernel straight after the lookup
        self.assertNotIn("ops_check_fixture", body("ops_base_mul"))
        self.assertIn('_st = _fn != NULL ? _fn(&_it, self, other) : ops_dispatch_no_kernel("mul", _it.device);',
                      body("ops_base_mul"))
        h = self.read("ops_kernels_core.h")
        self.assertEqual(h.count("ops_status ops_check_fixture_add(const ops_iter *it, const ops_tensor *self, "
                                 "const ops_tensor *other, ops_scalar alpha); /* check */\n"), 1)
        self.assertIn("ops_status ops_check_fixture_clamp(const ops_iter *it, const ops_tensor *self, "
                      "const ops_scalar *min, const ops_scalar *max); /* check */\n", h)

    def test_check_in_its_own_shard(self):
        """A check defined in kernels/<stem>.c is declared in ops_kernels_<stem>.h (with no
        dtype set), which the glue of its entry's family includes."""
        tmp = tempfile.mkdtemp(prefix="codegen-check-")
        try:
            kdir = os.path.join(tmp, "kernels", "cpu")
            os.makedirs(kdir)
            with open(FIX_KERNELS, encoding="utf-8") as f:
                text = f.read()
            i = text.index("ops_status\nops_check_fixture_add(")
            j = text.index("/* dispatching over the dtypes neg.out declares")
            with open(os.path.join(kdir, "binary.c"), "w", encoding="utf-8") as f:
                f.write(text[:i] + text[j:])
            with open(os.path.join(tmp, "kernels", "argcheck.c"), "w", encoding="utf-8") as f:
                f.write('#include "ops_kernels.h"\n#define USE(x) (void)(x)\n' + text[i:j])
            out = os.path.join(tmp, "out")
            p = run_gen("all", "--native", FIX_NATIVE, "--derivatives", FIX_DERIVS, "--out-dir", out,
                        "--kernel-sources", os.path.join(kdir, "binary.c"), os.path.join(tmp, "kernels", "argcheck.c"))
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(out, "ops_kernels_argcheck.h"), encoding="utf-8") as f:
                h = f.read()
            self.assertIn("ops_status ops_check_fixture_add(const ops_iter *it,", h)
            self.assertNotIn("OPS_DTYPES_", h)
            with open(os.path.join(out, "ops_kernels_binary.h"), encoding="utf-8") as f:
                self.assertNotIn("ops_check_fixture_add", f.read())
            with open(os.path.join(out, "ops_glue_binary.c"), encoding="utf-8") as f:
                self.assertIn('#include "ops_kernels_argcheck.h"', f.read())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_kernel_dtypes_follow_the_meta(self):
        """A *_float family hands integral and bool inputs over as the default float dtype."""
        allf = dtypes_mod.DTYPE_SETS["all"]
        self.assertEqual(dtypes_mod.kernel_dtypes(allf, "unary_float"), dtypes_mod.FLOATING)
        self.assertEqual(dtypes_mod.kernel_dtypes(("int64",), "binary_float"), ("float32", "float64"))
        self.assertEqual(dtypes_mod.kernel_dtypes(("float16",), "unary_float"), ("float16",))
        self.assertEqual(dtypes_mod.kernel_dtypes(("int32", "float16"), "div_mode"),
                         ("int32", "float16", "float32", "float64"))
        self.assertEqual(dtypes_mod.kernel_dtypes(("bool",), "bool_out"), ("bool",))

    def test_no_strings_or_hashing_on_the_success_path(self):
        glue = self.read_all("ops_glue_*.c")
        code = re.sub(r"/\*.*?\*/", "", glue, flags=re.S)
        for bad in ("strcmp", "strlen", "hash", "printf", "ops_registry_find"):
            self.assertFalse(bad in code, f"'{bad}' in the generated glue")

    def test_registry_metadata(self):
        c = self.read("ops_registry.c")
        self.assertIn('.schema = "add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) '
                      '-> Tensor(a!)"', c)
        self.assertIn('{.name = "alpha", .type = "Scalar", .default_value = "1", .kwarg_only = true, '
                      '.is_out = false, .optional = false}', c)
        self.assertIn('{.name = "out", .type = "Tensor(a!)", .default_value = NULL, .kwarg_only = true, '
                      '.is_out = true, .optional = false}', c)
        self.assertIn(r'"{\"note\":\"quotes \\\" and unicode: \\u00e9\"}"', c)

    def test_autograd_lists(self):
        """Tensor[] inputs: one edge per element, shapes kept per element; a Tensor[]
        return: one gradient slot per element, `grads` as a list; Tensor?[] saved per
        element (each version-checked when unpacked)."""
        c = self.read("ops_autograd_gen.c")
        stack = c[c.index("ops_ag_stack(ops_tensor_list tensors, int64_t dim)"):]
        self.assertIn("ops_node_new(&ag_stack_vt, sizeof *_n, 1, (int)(0 + tensors.len))", stack)
        self.assertIn("ops_node_set_next(&_n->base, (int)(0 + _i), tensors.data[_i])", stack)
        self.assertIn("_n->n_tensors = tensors.len;", stack)
        self.assertIn("if (ops_ag_any_next(_n, 0, _s->n_tensors)) { /* tensors */", c)
        # a Tensor[]-returning op inside a formula: an ops_tensor_vec temporary
        self.assertIn("if (ops_unbind_int(grads[0], _s->v_dim, &_v[0]) != OPS_OK)", c)
        self.assertIn("_out[0 + _i] = ops_tensor_retain(_l.data[_i]);", c)
        unbind = c[c.index("ops_ag_unbind_int(const ops_tensor *self, int64_t dim, ops_tensor_vec *result)"):]
        self.assertIn("ops_node_new(&ag_unbind_int_vt, sizeof *_n, (int)result->len, 1)", unbind)
        self.assertIn("ops_autograd_set_history(result->data[_i], &_n->base, (int)_i)", unbind)
        self.assertIn("ops_tensor_vec_release(result);", unbind)
        self.assertIn("ops_cat(((ops_tensor_list){(const ops_tensor *const *)grads, _n->num_inputs}), _s->v_dim)", c)
        self.assertIn("if (_n->num_inputs <= 0) {", c)
        index = c[c.index("ops_ag_index(const ops_tensor *self, ops_tensor_list indices)"):]
        self.assertIn('ops_ag_saved_list_save(&_n->sl_indices, indices, "index")', index)
        self.assertIn("ops_ag_saved_list_unpack(_s->sl_indices, _s->n_indices, _n, &al_indices)", c)
        self.assertIn("ops_ag_tensor_array_release(al_indices, _s->n_indices);", c)
        # a return that carries no gradient still sizes its slot's zeros
        self.assertIn("ops_node_set_input_meta(&_n->base, 1, *indices);", c)

    def test_compiles(self):
        if not have_cc():
            self.skipTest(f"no C compiler ({CC[0]})")
        files = sorted(f for f in glob.glob(os.path.join(self.out, "*.c"))
                       if not f.endswith("python_bindings.c")) + [FIX_KERNELS]  # built by python/
        for extra in ([], ["-DOPS_WITH_CUDA=1"]):
            with self.subTest(flags=extra):
                failures = compile_c(files, RUNTIME_INC + [self.out], extra)
                self.assertEqual(failures, {})

    def test_kernel_signature_drift_fails_to_compile(self):
        """A kernel whose prototype differs from its schema must not compile."""
        if not have_cc():
            self.skipTest(f"no C compiler ({CC[0]})")
        src = os.path.join(self.tmp, "drift.c")
        with open(src, "w") as f:
            f.write('#include "ops_kernels.h"\n'
                    "ops_status\nadd_out_cpu(ops_iter *it, const ops_tensor *self, const ops_tensor *other, "
                    "double alpha)\n{\n    (void)it, (void)self, (void)other, (void)alpha;\n    return OPS_OK;\n}\n")
        failures = compile_c([src], RUNTIME_INC + [self.out])
        self.assertIn(src, failures)
        self.assertIn("conflicting types", failures[src])

    def test_check_signature_drift_fails_to_compile(self):
        """A `check:` function whose prototype differs from its entry's must not compile
        (here: a non-const iterator)."""
        if not have_cc():
            self.skipTest(f"no C compiler ({CC[0]})")
        src = os.path.join(self.tmp, "check_drift.c")
        with open(src, "w") as f:
            f.write('#include "ops_kernels.h"\n'
                    "ops_status\nops_check_fixture_add(ops_iter *it, const ops_tensor *self, const ops_tensor *other, "
                    "ops_scalar alpha)\n{\n    (void)it, (void)self, (void)other, (void)alpha;\n    return OPS_OK;\n}\n")
        failures = compile_c([src], RUNTIME_INC + [self.out])
        self.assertIn(src, failures)
        self.assertIn("conflicting types", failures[src])


class Reductions(FamilyGlue, unittest.TestCase):
    """`meta: reduction` (tests/codegen/fixtures/reduction.yaml): every form of an op is
    glue around one kernel; each form's own dim / keepdim / dtype reach the family's meta
    step (an absent dim is None, an absent keepdim false), the op's own arguments its
    kernel (an absent optional one None)."""

    FIX = os.path.join(FIXTURES, "reduction.yaml")

    def test_model(self):
        m = model.load_model(self.FIX, conformance=[])
        st = m.by_name["sum.dim_out"]
        for n in ("sum", "sum.out", "sum.dim", "sum.dim_out"):
            self.assertIs(m.by_name[n].reduce_target, st, n)
            self.assertIsNone(m.by_name[n].delegate, n)  # not the elementwise path
        self.assertEqual(st.reduce_rule, ("sum", ()))
        self.assertEqual(m.by_name["ptp.out"].reduce_rule, ("rows", ("floating", "no_identity")))

    def test_forms_map_onto_the_meta(self):
        def meta(c_name):
            b = self.body(c_name)
            m = re.search(r"_st = reduce_family_meta\(&_r, (.*)\);", b)
            self.assertIsNotNone(m, b)
            return m.group(1)
        # every form of sum calls the one row of sum.dim_out
        for c in ("ops_base_sum", "ops_base_sum_out", "ops_base_sum_dim", "ops_base_sum_dim_out"):
            self.assertIn("ops_dispatch_lookup(OPS_OP_SUM_DIM_OUT, _dev)", self.body(c), c)
        self.assertEqual(meta("ops_base_sum"), '"sum", RED_SUM, 0u, self, NULL, false, dtype, NULL, NULL, false')
        self.assertEqual(meta("ops_base_sum_out"), '"sum", RED_SUM, 0u, self, NULL, false, dtype, out, NULL, false')
        self.assertEqual(meta("ops_base_sum_dim"), '"sum", RED_SUM, 0u, self, dim, keepdim, dtype, NULL, NULL, false')
        # int? dim: a one-element list or None; int dim: a one-element list
        self.assertIn("const ops_int_list _dims = {dim, 1};", self.body("ops_base_argmax"))
        self.assertIn("dim != NULL ? &_dims : NULL", meta("ops_base_argmax"))
        self.assertIn("const ops_int_list _dims = {&dim, 1};", self.body("ops_base_max_dim"))
        # two results: the functional form's out-parameters, the out= form's two outs
        self.assertIn("reduce_family_finish(&_r, _fn(&_r), NULL, NULL, values, indices)", self.body("ops_base_max_dim"))
        self.assertIn("max, max_values, true", meta("ops_base_max_dim_max"))
        self.assertIn("reduce_family_finish(&_r, _fn(&_r), max, max_values, NULL, NULL)", self.body("ops_base_max_dim_max"))
        # the op's own argument, None where a form lacks it
        self.assertIn("_fn(&_r, correction)", self.body("ops_base_var_correction"))
        self.assertIn("_fn(&_r, NULL)", self.body("ops_base_var_plain"))
        # a form's Scalar p where the structured entry has Scalar? p: passed by address;
        # a kind's flag (norm's linalg messages)
        self.assertIn("_fn(&_r, &p)", self.body("ops_base_norm_scalar"))
        self.assertEqual(meta("ops_base_norm_scalar"),
                         '"norm", RED_NORM, REDUCE_META_LINALG, self, NULL, false, OPS_DTYPE_NONE, NULL, NULL, false')
        self.assertIn("self, &dim, keepdim, dtype, out, NULL, false", meta("ops_base_norm_dtype_out"))
        # an op outside the kinds: its rules
        self.assertIn('"ptp", RED_ROWS, REDUCE_META_FLOATING | REDUCE_META_NO_IDENTITY, self, dim, keepdim',
                      meta("ops_base_ptp_out"))
        # self's device is current for the three steps (the meta allocates there)
        self.assertIn("ops_device_guard_enter(_dev)", self.body("ops_base_sum"))
        self.assertIn("ops_device_guard_enter(_dev)", self.body("ops_base_ptp_out"))

    def test_kernel_prototypes(self):
        with open(os.path.join(self.tmp, "ops_kernels.h"), encoding="utf-8") as f:
            h = f.read()
        self.assertIn('#include "kernels/reduce.h"', h)
        self.assertIn("ops_status reduce_kind_kernel(ops_reduce *r);", h)
        self.assertIn("ops_status var_kernel_cpu(ops_reduce *r, const ops_scalar *correction);", h)

    def test_kinds_and_flags_exist(self):
        """The generator's names of the kinds and rules are kernels/'s constants."""
        from codegen import reduction
        with open(os.path.join(ROOT, "kernels", "ops_reduce_common.h"), encoding="utf-8") as f:
            enum = re.search(r"typedef enum \{(.*?)\} red_kind;", f.read(), re.S).group(1)
        kinds = set(re.findall(r"^\s*(RED_\w+),", enum, re.M))
        self.assertEqual(sorted(set(reduction.KINDS.values()) - kinds), [])
        with open(os.path.join(ROOT, "kernels", "reduce.h"), encoding="utf-8") as f:
            h = f.read()
        for c in reduction.ROW_FLAGS.values():
            self.assertRegex(h, r"#define " + c + r" \d+u")

    def test_compiles(self):
        self.assert_glue_compiles(
            "ops_status\nreduce_kind_kernel(ops_reduce *r)\n{\n    (void)r;\n    return OPS_OK;\n}\n"
            "ops_status\nvar_kernel_cpu(ops_reduce *r, const ops_scalar *correction)\n{\n"
            "    (void)r, (void)correction;\n    return OPS_OK;\n}\n"
            "ops_status\nptp_kernel(ops_reduce *r)\n{\n    (void)r;\n    return OPS_OK;\n}\n"
            "ops_status\nnorm_kernel(ops_reduce *r, const ops_scalar *p)\n{\n"
            "    (void)r, (void)p;\n    return OPS_OK;\n}\n")


class RealSchema(unittest.TestCase):
    """ops/native_functions.yaml itself (the kernel check is the build's job: the
    kernels are written beside the schema, so it is off here)."""

    def test_generates_and_compiles(self):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            # the kernel sources place each entry in its family's shard, as in the build
            # (the CUDA files too: with a CUDA build's ops_config.h the glue's CUDA cells
            # are compiled, and their kernels are declared in the shards of the .cu files;
            # and the runtime's: its device.c registers the host's device_backend)
            sources = sorted(glob.glob(os.path.join(ROOT, "kernels", "*.[ch]"))
                             + glob.glob(os.path.join(ROOT, "runtime", "**", "*.c"), recursive=True)
                             + glob.glob(os.path.join(ROOT, "kernels", "cpu", "*.c"))
                             + glob.glob(os.path.join(ROOT, "kernels", "cuda", "*.cu")))
            p = run_gen("all", "--native", REAL_NATIVE, "--derivatives", REAL_DERIVS, "--out-dir", d,
                        "--no-kernel-check", "--time", "--kernel-sources", *sources)
            elapsed = time.perf_counter() - t0
            self.assertEqual(p.returncode, 0, p.stderr)
            print(f"\n[timing] real schema, whole command (python start-up included): {elapsed * 1000:.0f} ms; "
                  f"{p.stdout.strip()}", file=sys.stderr)
            if not have_cc():
                self.skipTest(f"no C compiler ({CC[0]})")
            t0 = time.perf_counter()
            failures = compile_c(sorted(f for f in glob.glob(os.path.join(d, "*.c"))
                                        if not f.endswith("python_bindings.c")),  # built by python/
                                 RUNTIME_INC + [d])
            print(f"[timing] compiling the generated C (-O2, parallel): {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)
            self.assertEqual(failures, {})

    def test_in_process_timing(self):
        t0 = time.perf_counter()
        m = gen.load(REAL_NATIVE, REAL_DERIVS, [], False, False)
        t1 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            gen.generate(m, list(gen.ARTIFACTS), [REAL_NATIVE, REAL_DERIVS], d)
        t2 = time.perf_counter()
        print(f"\n[timing] {len(m.functions)} entries: parse+validate {1000 * (t1 - t0):.1f} ms, "
              f"render+write {1000 * (t2 - t1):.1f} ms", file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)


"""Tests of what the generator does for the build (codegen/): incremental rewriting
(only changed bytes are written), the per-family shards of the generated headers and
glue (an added op rewrites its family's files), and the dispatch stubs' tables.
Shares its setup with test_codegen.py (codegen_test_base.py); run by meson
(tests/codegen/meson.build) with Debian's python3.
"""

from codegen_test_base import *  # noqa: F401,F403 (paths, fixtures, run_gen, compile_c)
from codegen_test_base import cnames, gen, model, dtypes_mod  # noqa: F401
from codegen import shards


class Incremental(unittest.TestCase):
    """Same input, same bytes; only files whose bytes change are rewritten."""

    def generate(self, out, native=FIX_NATIVE, env=None):
        p = run_gen("all", "--native", native, "--derivatives", FIX_DERIVS, "--out-dir", out,
                    "--kernel-sources", FIX_KERNELS, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)

    @staticmethod
    def snapshot(out):
        snap = {}
        for name in sorted(os.listdir(out)):
            path = os.path.join(out, name)
            with open(path, "rb") as f:
                snap[name] = (f.read(), os.stat(path).st_mtime_ns)
        return snap

    def test_deterministic_and_rewrites_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            self.generate(a, env=dict(os.environ, PYTHONHASHSEED="1"))
            self.generate(b, env=dict(os.environ, PYTHONHASHSEED="2"))
            sa, sb = self.snapshot(a), self.snapshot(b)
            self.assertEqual({k: v[0] for k, v in sa.items()}, {k: v[0] for k, v in sb.items()})
            # Age every file, regenerate: nothing may be touched.
            old = time.time() - 3600
            for name in sa:
                os.utime(os.path.join(a, name), (old, old))
            before = self.snapshot(a)
            self.generate(a, env=dict(os.environ, PYTHONHASHSEED="3"))
            self.assertEqual(self.snapshot(a), before)

    def test_one_edit_rewrites_only_what_shows_it(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            native = os.path.join(d, "native_functions.yaml")
            with open(FIX_NATIVE, encoding="utf-8") as f:
                text = f.read()
            with open(native, "w", encoding="utf-8") as f:
                f.write(text)
            self.generate(out, native)
            old = time.time() - 3600
            for name in os.listdir(out):
                os.utime(os.path.join(out, name), (old, old))
            before = self.snapshot(out)
            edited = text.replace("cat(Tensor[] tensors, int dim=0)", "cat(Tensor[] tensors, int dim=1)")
            self.assertNotEqual(edited, text)
            with open(native, "w", encoding="utf-8") as f:
                f.write(edited)
            self.generate(out, native)
            after = self.snapshot(out)
            changed = {n for n in after if after[n][1] != before[n][1]}
            # The schema comment and the registry's default string show the default; the
            # fixture's one shard is `core` (class Shards splits a schema over several).
            self.assertEqual(changed, {"ops_functions_core.h", "ops_op_cat.h", "ops_kernels_core.h",
                                       "ops_registry.c", "ops_glue_core.c", "python_bindings.c"})
            for n in after:
                if n not in changed:
                    self.assertEqual(after[n][0], before[n][0], n)


class Shards(unittest.TestCase):
    """Headers and glue split by op family (codegen/shards.py): a kernel file's shard
    declares its kernels only, and adding an op rewrites only its family's files."""

    NATIVE = ("- func: neg(Tensor self) -> Tensor\n  dispatch:\n    CPU: neg_cpu\n"
              "- func: zeros(int[] size) -> Tensor\n  dispatch:\n    CPU: zeros_cpu\n"
              "- func: ones(int[] size) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: ones_impl\n")
    ADDED = "- func: abs(Tensor self) -> Tensor\n  dispatch:\n    CPU: abs_cpu\n"
    UNARY = ("ops_tensor *neg_cpu(const ops_tensor *self) { (void)self; return NULL; }\n"
             "ops_tensor *abs_cpu(const ops_tensor *self) { (void)self; return NULL; }\n"
             "ops_status neg_cpu_(ops_tensor *self) { (void)self; return OPS_OK; }\n")
    CREATION = "ops_tensor *zeros_cpu(ops_int_list size) { (void)size; return NULL; }\n"
    VIEWS = "ops_tensor *ones_impl(ops_int_list size) { (void)size; return NULL; }\n"

    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="codegen-shards-")
        self.addCleanup(shutil.rmtree, self.d, True)
        self.sources = []
        for rel, text in (("kernels/cpu/unary.c", self.UNARY), ("kernels/cpu/creation.c", self.CREATION),
                          ("runtime/views.c", self.VIEWS)):
            path = os.path.join(self.d, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            self.sources.append(path)
        self.native = os.path.join(self.d, "native_functions.yaml")
        self.out = os.path.join(self.d, "out")

    def generate(self, text):
        with open(self.native, "w", encoding="utf-8") as f:
            f.write(text)
        p = run_gen("all", "--native", self.native, "--out-dir", self.out, "--kernel-sources", *self.sources)
        self.assertEqual(p.returncode, 0, p.stderr)
        snap = {}
        for name in sorted(os.listdir(self.out)):
            path = os.path.join(self.out, name)
            with open(path, encoding="utf-8") as f:
                snap[name] = (f.read(), os.stat(path).st_mtime_ns)
        return snap

    def test_families(self):
        g = self.generate(self.NATIVE)
        # one shard per kernel file stem under kernels/, plus core (the views' runtime file)
        self.assertEqual(sorted(n for n in g if n.startswith("ops_glue_")),
                         ["ops_glue_core.c", "ops_glue_creation.c", "ops_glue_unary.c"])
        self.assertIn("ops_neg(", g["ops_functions_unary.h"][0])
        self.assertNotIn("ops_zeros(", g["ops_functions_unary.h"][0])
        self.assertIn("ops_zeros(", g["ops_functions_creation.h"][0])
        self.assertIn("ops_ones(", g["ops_functions_core.h"][0])
        self.assertIn("neg_cpu(const ops_tensor *self);", g["ops_kernels_unary.h"][0])
        self.assertNotIn("zeros_cpu", g["ops_kernels_unary.h"][0])
        for fam in ("core", "creation", "unary"):
            self.assertIn(f'#include "ops_functions_{fam}.h"', g["ops_functions.h"][0])
            self.assertIn(f'#include "ops_kernels_{fam}.h"', g["ops_kernels.h"][0])
        glue = g["ops_glue_unary.c"][0]
        self.assertIn('#include "ops_kernels_unary.h"', glue)
        self.assertIn('#include "ops_functions_unary.h"', glue)
        self.assertNotIn("creation", glue)
        self.assertIn("[OPS_OP_NEG] = { /* neg */", glue)
        self.assertNotIn("OPS_OP_ZEROS", glue)

    def test_adding_an_op_rewrites_its_family_only(self):
        before = self.generate(self.NATIVE)
        old = time.time() - 3600
        for name in before:
            os.utime(os.path.join(self.out, name), (old, old))
        before = {n: (t, os.stat(os.path.join(self.out, n)).st_mtime_ns) for n, (t, _) in before.items()}
        after = self.generate(self.NATIVE + self.ADDED)
        # the same outputs (the shards are the kernel files'), and the new op's header
        self.assertEqual(set(after), set(before) | {"ops_op_abs.h"})
        changed = {n for n in after if after[n][1] != before.get(n, (None, None))[1]}
        self.assertEqual(changed, {"ops_functions_unary.h", "ops_kernels_unary.h", "ops_glue_unary.c",
                                   "ops_autograd_gen_unary.h", "ops_registry.c", "python_bindings.c",
                                   "ops_op_abs.h"})
        self.assertIn("abs_cpu", after["ops_kernels_unary.h"][0])
        self.assertIn("OPS_API ops_tensor *ops_abs(const ops_tensor *self);", after["ops_op_abs.h"][0])

    def test_op_headers(self):
        """One header per op name (codegen/shards.py): the same prototypes as the family
        shard, which names it; an in-place form shares its op's header."""
        g = self.generate(self.NATIVE + "- func: neg_(Tensor(a!) self) -> Tensor(a!)\n"
                                        "  dispatch:\n    CPU: neg_cpu_\n")
        self.assertEqual(sorted(n for n in g if n.startswith("ops_op_")),
                         ["ops_op_neg.h", "ops_op_ones.h", "ops_op_zeros.h"])
        neg = g["ops_op_neg.h"][0]
        self.assertIn("#ifndef OPS_GENERATED_OP_NEG_H", neg)
        self.assertIn("also declared by ops_functions_unary.h.", neg)
        for proto in ("OPS_API ops_tensor *ops_neg(const ops_tensor *self);",
                      "OPS_API ops_status ops_neg_(ops_tensor *self);"):
            self.assertIn(proto, neg)
            self.assertIn(proto, g["ops_functions_unary.h"][0])
        self.assertNotIn("ops_zeros", neg)
        self.assertIn("ops_functions_creation.h", g["ops_op_zeros.h"][0])
        for name, header in (("add_", "add"), ("add", "add"), ("__and__", "__and__"), ("__iand__", "__iand__")):
            self.assertEqual(shards.op_header_name(name), header)

    def test_op_headers_list(self):
        """What meson declares when it configures (`op_headers_list`), and the check that
        the list it passes back (--op-headers) is the schema's."""
        with open(self.native, "w", encoding="utf-8") as f:
            f.write(self.NATIVE)
        p = run_gen("op_headers_list", "--native", self.native)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["neg", "ones", "zeros"])
        ok = run_gen("all", "--native", self.native, "--out-dir", self.out, "--kernel-sources", *self.sources,
                     "--op-headers", "zeros", "neg", "ones")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        for given, fragment in ((["neg", "ones"], "ops_op_zeros.h is not listed"),
                                (["neg", "ones", "zeros", "abs"], "ops_op_abs.h names no op of the schema")):
            with self.subTest(given=given):
                p = run_gen("check", "--native", self.native, "--kernel-sources", *self.sources,
                            "--op-headers", *given)
                self.assertEqual(p.returncode, 1)
                self.assertIn(f"--op-headers: {fragment}", p.stderr)
                self.assertIn("meson setup --reconfigure", p.stderr)
        # a schema that does not parse is still listed from its `- func:` lines (meson
        # configures; the generator's run reports the error)
        with open(self.native, "w", encoding="utf-8") as f:
            f.write(self.NATIVE + "- func: abs(Tensor self) -> Tensr\n")
        p = run_gen("op_headers_list", "--native", self.native)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["abs", "neg", "ones", "zeros"])

    def test_compiles(self):
        if not have_cc():
            self.skipTest(f"no C compiler ({CC[0]})")
        g = self.generate(self.NATIVE)
        files = sorted(os.path.join(self.out, n) for n in g if n.endswith(".c") and n != "python_bindings.c")
        self.assertEqual(compile_c(files, RUNTIME_INC + [self.out]), {})

    def test_guards_do_not_clash(self):
        """A shard is named after a kernel file, and kernels/random.h guards itself with
        OPS_KERNELS_RANDOM_H: the generated shards' guards have a prefix of their own, and
        no hand-written header uses it (a clash silently drops the prototypes)."""
        g = self.generate(self.NATIVE)
        for name, (text, _) in g.items():
            m = re.search(r"^#ifndef (\w+)$", text, re.M)
            if re.fullmatch(r"ops_(functions|kernels|autograd_gen|op)_\w+\.h", name):
                with self.subTest(shard=name):
                    self.assertIsNotNone(m)
                    self.assertTrue(m.group(1).startswith("OPS_GENERATED_"), m.group(1))
        for path in glob.glob(os.path.join(ROOT, "**", "*.h"), recursive=True) + \
                glob.glob(os.path.join(ROOT, "**", "*.cuh"), recursive=True):
            if os.sep + "build" in path[len(ROOT):]:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                self.assertNotRegex(f.read(), r"#ifndef OPS_GENERATED_", path)

    def test_bad_shard_name(self):
        with open(self.native, "w", encoding="utf-8") as f:
            f.write(self.NATIVE)
        p = run_gen("check", "--native", self.native, "--shards", "a-b", "--kernel-sources", *self.sources)
        self.assertEqual(p.returncode, 1)
        self.assertIn("--shards: 'a-b' is not a valid shard name", p.stderr)


class Stubs(unittest.TestCase):
    """Dispatch stubs (runtime/dispatch/ops_stub.h, codegen/gen_stubs.py) and kernels shared by
    several devices (`CPU, CUDA: kernel`)."""

    HEADER = "OPS_DECLARE_STUB(fill_loop, ops_status, (const char *op, ops_tensor *t));\n"
    CPU = "OPS_REGISTER_STUB(fill_loop, CPU, fill_loop_cpu);\n"
    CUDA = "OPS_REGISTER_STUB(fill_loop, CUDA, fill_loop_cuda);\n"

    def gen(self, files, cuda=False, native=None):
        """Runs the generator over files {name: text}; returns (process, out dir)."""
        d = tempfile.mkdtemp(prefix="codegen-stubs-")
        self.addCleanup(shutil.rmtree, d, True)
        paths = []
        for name, text in files.items():
            path = os.path.join(d, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        out = os.path.join(d, "out")
        args = ["all", "--native", native or FIX_NATIVE, "--out-dir", out, "--kernel-sources", FIX_KERNELS] + paths
        if cuda:
            args.insert(1, "--cuda")
        return run_gen(*args), d, out

    def table(self, out):
        with open(os.path.join(out, "ops_stubs.c"), encoding="utf-8") as f:
            return f.read()

    def test_table(self):
        p, d, out = self.gen({"k.h": self.HEADER, "cpu.c": self.CPU, "cuda.cu": self.CUDA}, cuda=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        t = self.table(out)
        self.assertIn("fill_loop_fn *const fill_loop_stub[OPS_NUM_DEVICE_TYPES] = {", t)
        self.assertRegex(t, r"\[OPS_CPU\] = fill_loop_cpu,\n#ifdef OPS_WITH_CUDA\n    \[OPS_CUDA\] = fill_loop_cuda,\n#endif")
        self.assertIn("fill_loop_fn fill_loop_cpu;", t)  # declared with the stub's type

    def test_cuda_loops_only_in_cuda_builds(self):
        p, d, out = self.gen({"k.h": self.HEADER, "cpu.c": self.CPU, "cuda.cu": self.CUDA})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("fill_loop_cuda", self.table(out))

    def test_the_macros_compile_and_type_check(self):
        if not have_cc():
            self.skipTest(f"no C compiler ({CC[0]})")
        d = tempfile.mkdtemp(prefix="codegen-stubs-cc-")
        self.addCleanup(shutil.rmtree, d, True)
        good = os.path.join(d, "good.c")
        bad = os.path.join(d, "bad.c")
        pre = '#include "ops_stub.h"\n' + self.HEADER + self.CPU
        with open(good, "w") as f:
            f.write(pre + "ops_status fill_loop_cpu(const char *op, ops_tensor *t) { (void)op, (void)t; return OPS_OK; }\n"
                    "ops_status call(ops_tensor *t, ops_device d);\n"
                    "ops_status call(ops_tensor *t, ops_device d) { return OPS_STUB_CALL(fill_loop, d, \"fill\", t); }\n")
        with open(bad, "w") as f:  # a loop whose parameters are not the stub's
            f.write(pre + "ops_status fill_loop_cpu(const char *op, int64_t n) { (void)op, (void)n; return OPS_OK; }\n")
        self.assertEqual(compile_c([good], RUNTIME_INC), {})
        failures = compile_c([bad], RUNTIME_INC)
        self.assertIn(bad, failures)
        self.assertIn("fill_loop_cpu", failures[bad])

    def check_error(self, files, fragment, cuda=False):
        p, d, out = self.gen(files, cuda=cuda)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(fragment, p.stderr)
        return p, d

    def test_no_cpu_loop(self):
        p, d = self.check_error({"k.h": self.HEADER}, "stub 'fill_loop' has no CPU loop")
        self.assertIn(os.path.join(d, "k.h") + ":1:", p.stderr)

    def test_undeclared(self):
        p, d = self.check_error({"cpu.c": "\n" + self.CPU}, "no stub 'fill_loop' is declared")
        self.assertIn(os.path.join(d, "cpu.c") + ":2:", p.stderr)

    def test_registered_twice(self):
        self.check_error({"k.h": self.HEADER, "cpu.c": self.CPU, "cpu2.c": self.CPU},
                         "stub 'fill_loop' already has a CPU loop")

    def test_unknown_device(self):
        self.check_error({"k.h": self.HEADER, "cpu.c": self.CPU + "OPS_REGISTER_STUB(fill_loop, TPU, f);\n"},
                         "unknown device 'TPU'")

    def test_declared_twice_or_in_a_source(self):
        self.check_error({"k.h": self.HEADER, "k2.h": self.HEADER, "cpu.c": self.CPU},
                         "stub 'fill_loop' is already declared at")
        self.check_error({"k.c": self.HEADER, "cpu.c": self.CPU}, "is declared in a source file")

    def test_comments_do_not_count(self):
        p, d, out = self.gen({"k.h": "/* " + self.HEADER + " */\n// " + self.HEADER})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("fill_loop", self.table(out))

    def test_one_kernel_for_two_devices(self):
        with tempfile.TemporaryDirectory() as d:
            y = os.path.join(d, "n.yaml")
            with open(y, "w") as f:
                f.write("- func: zeros(int[] size) -> Tensor\n"
                        "  dispatch:\n"
                        "    CPU, CUDA: zeros_cpu\n")
            out = os.path.join(d, "out")
            p = run_gen("all", "--native", y, "--out-dir", out, "--cuda", "--kernel-sources", FIX_KERNELS)
            self.assertEqual(p.returncode, 0, p.stderr)
            glue = ""  # the dispatch tables are in the glue, one per family
            for g in glob.glob(os.path.join(out, "ops_glue_*.c")):
                with open(g, encoding="utf-8") as f:
                    glue += f.read()
            self.assertIn("[OPS_CPU] = (ops_kernel_fn)zeros_cpu,", glue)
            self.assertIn("[OPS_CUDA] = (ops_kernel_fn)zeros_cpu,", glue)
            self.assertIn("ops_device_guard_enter(_dev)", glue)  # the op's device is current around the call
            for bad, frag in (("CPU, CUDA, CPU", "dispatch key 'CPU' is given twice"),
                              ("CPU, TPU", "unknown dispatch key 'TPU'"),
                              ("CPU, CompositeExplicitAutograd", "does not combine with other keys")):
                with open(y, "w") as f:
                    f.write(f"- func: zeros(int[] size) -> Tensor\n  dispatch:\n    {bad}: zeros_cpu\n")
                p = run_gen("check", "--native", y, "--kernel-sources", FIX_KERNELS)
                self.assertEqual(p.returncode, 1, bad)
                self.assertIn(f"{y}:3: zeros: ", p.stderr)
                self.assertIn(frag, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)


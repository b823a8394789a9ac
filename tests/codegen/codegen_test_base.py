"""What the generator's tests share (tests/codegen/test_codegen.py and
test_codegen_build.py): paths, the fixtures, running gen.py, compiling C."""

import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("OPS_SOURCE_ROOT") or os.path.dirname(os.path.dirname(HERE))
# The include dirs of the runtime (meson.build: libops_inc).
RUNTIME_INC = [os.path.join(ROOT, d) for d in (
    ".", "include/libops", "runtime/core", "runtime/alloc", "runtime/dispatch", "runtime/autograd")]
FIXTURES = os.path.join(HERE, "fixtures")
GEN = os.path.join(ROOT, "codegen", "gen.py")
PYTHON = sys.executable
CC = shlex.split(os.environ.get("OPS_CC", "cc"))
# The build root holds ops_config.h (what the build has), which ops_base.h includes.
BUILD_ROOT = os.environ.get("OPS_BUILD_ROOT")
CFLAGS = ["-std=c11", "-D_GNU_SOURCE", "-fvisibility=hidden", "-fwrapv", "-Wall", "-Wextra", "-Werror", "-O2"]

sys.path.insert(0, ROOT)
from codegen import cnames, gen, model  # noqa: E402
from codegen import dtypes as dtypes_mod  # noqa: E402

FIX_NATIVE = os.path.join(FIXTURES, "native_functions.yaml")
FIX_DERIVS = os.path.join(FIXTURES, "derivatives.yaml")
FIX_KERNELS = os.path.join(FIXTURES, "kernels.c")
REAL_NATIVE = os.path.join(ROOT, "ops", "native_functions.yaml")
REAL_DERIVS = os.path.join(ROOT, "ops", "derivatives.yaml")


def run_gen(*args, env=None, timeout=300):
    # a timeout, so that a generator that hangs on an input fails its test instead of the suite
    return subprocess.run([PYTHON, GEN, *args], capture_output=True, text=True, env=env, timeout=timeout)


def have_cc():
    return shutil.which(CC[0]) is not None


def compile_c(files, include_dirs, extra=()):
    """Compile each file (in parallel); returns {file: stderr} for the failures."""
    def one(f):
        dirs = list(include_dirs) + ([BUILD_ROOT] if BUILD_ROOT else [])
        cmd = CC + CFLAGS + list(extra) + [f"-I{d}" for d in dirs] + ["-c", f, "-o", os.devnull]
        p = subprocess.run(cmd, capture_output=True, text=True)
        return f, p.returncode, p.stderr
    failures = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for f, rc, err in ex.map(one, files):
            if rc != 0:
                failures[f] = err[-4000:]
    return failures


def expectation(path):
    """`# expect: LINE: fragment` on the first line of a bad fixture."""
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    m = re.match(r"^# expect: (\d+): (.*)$", first.rstrip("\n"))
    assert m, f"{path}: first line must be '# expect: LINE: fragment'"
    return int(m.group(1)), m.group(2)




class FamilyGlue:
    """The glue of a structured family's fixture, generated once for its test class (mixed
    in before unittest.TestCase; FIX names the fixture): cls.tmp the output folder,
    cls.glue its ops_glue_core.c, body(c_name) one generated function's body."""

    FIX = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="codegen-family-")
        p = run_gen("all", "--native", cls.FIX, "--out-dir", cls.tmp, "--no-kernel-check", "--conformance")
        if p.returncode != 0:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise AssertionError(p.stderr)
        with open(os.path.join(cls.tmp, "ops_glue_core.c"), encoding="utf-8") as f:
            cls.glue = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def body(self, c_name):
        m = re.search(r"\n" + re.escape(c_name) + r"\(.*?\n\{\n(.*?)\n\}\n", self.glue, re.S)
        self.assertIsNotNone(m, c_name)
        return m.group(1)

    def assert_glue_compiles(self, kernels_c):
        """The glue compiles, with and without CUDA, beside kernels_c (C defining the
        fixture's kernels)."""
        if not have_cc():
            self.skipTest(f"no C compiler ({CC[0]})")
        src = os.path.join(self.tmp, "kernels_fixture.c")
        with open(src, "w") as f:
            f.write('#include "ops_kernels.h"\n' + kernels_c)
        files = [os.path.join(self.tmp, "ops_glue_core.c"), src]
        for extra in ([], ["-DOPS_WITH_CUDA=1"]):
            with self.subTest(flags=extra):
                self.assertEqual(compile_c(files, RUNTIME_INC + [self.tmp], extra), {})

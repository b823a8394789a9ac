#!/usr/bin/python3
"""The verdicts of .ci/gpu-check-report.py on made-up outputs: a failing case, a skip on
a machine with a device, a crash, bench tables with and without rows, trainings that
agree and that do not.  Runs in well under a second (make check runs it), so that a
GPU run is never the first to meet a parser bug."""
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gpu_check_report", os.path.join(HERE, "gpu-check-report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

CHECK_OK = "Running suite(s): cuda\n100%: Checks: 12, Failures: 0, Errors: 0\n"
CHECK_FAIL = ("Running suite(s): cuda\n91%: Checks: 12, Failures: 1, Errors: 0\n"
              "test_cuda_reduce.c:120:F:sum:test_sum_large:0: sum is 3.5, expected 4\n")
UT_FAIL = ("test_a (__main__.TestValues.test_a) ... ok\nFAIL: test_matmul (__main__.TestValues.test_matmul)\n"
           "----\nRan 14 tests in 0.3s\n\nFAILED (failures=1, skipped=2)\n")

MM = """bench_cuda: NVIDIA H100 80GB HBM3 (sm_90), TF32 off

mm (n x n x n)        libops TFLOP/s   cuBLAS TFLOP/s   ratio (target >= 0.95)
float32   n = 1024           20.1             21.0        0.957
bfloat16  n = 8192          600.0            700.0        0.857

float32 elementwise    GB/s   memcpy d2d GB/s   fraction (target >= 0.9)
add  2^24        2500.0         2900.0          0.862
exp  2^28        2800.0         2900.0          0.966
"""
RED = """op     elements         GB/s  memcpy GB/s   fraction
sum    2^24         2700.0       2900.0      0.931
amax   2^28         2750.0       2900.0      0.948
"""


def training(acc, losses):
    lines = [f"MLP 64-64-10 epoch {i + 1:2d}  loss {v:.4f}" for i, v in enumerate(losses)]
    return "\n".join(lines + [f"MLP 64-64-10 held-out accuracy: {100 * acc / 360:.1f}% ({acc} of 360)"]) + "\n"


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def file(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def run_report(self, fn, args):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = fn(args)
        return rc, out.getvalue()


class TestMeson(Case):
    def log(self, *tests):
        return self.file("log.json", "".join(json.dumps(t) + "\n" for t in tests))

    def test_all_pass(self):
        rc, out = self.run_report(report.meson, [self.log(
            {"name": "test_cuda", "result": "OK", "duration": 1.5, "stdout": CHECK_OK},
            {"name": "python-cuda", "result": "OK", "duration": 2, "stdout": "Ran 14 tests in 0.3s\n\nOK\n"})])
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.startswith("2 programs: 2 passed, 0 failed; 26 cases, 0 failed"), out)

    def test_failures_skips_and_crashes(self):
        excerpts = self.file("excerpts.txt", "")
        rc, out = self.run_report(report.meson, [self.log(
            {"name": "test_cuda_reduce", "result": "FAIL", "duration": 1, "stdout": CHECK_FAIL},
            {"name": "test_cuda", "result": "SKIP", "duration": 0, "stdout": "SKIP: no CUDA device\n"},
            {"name": "test_cuda_nn", "result": "FAIL", "duration": 0, "stdout": "Running suite(s): nn\n",
             "stderr": "Segmentation fault\n"},
            {"name": "python-cuda", "result": "FAIL", "duration": 1, "stdout": UT_FAIL}), "--excerpts", excerpts])
        self.assertEqual(rc, 1)
        self.assertIn("4 programs: 0 passed, 4 failed; 26 cases, 2 failed", out)
        self.assertIn("first failure: test_cuda_reduce.c:120:F:sum:test_sum_large:0: sum is 3.5", out)
        self.assertIn("first failure: skipped: SKIP: no CUDA device", out)
        self.assertIn("first failure: Segmentation fault", out)
        self.assertIn("first failure: FAIL: test_matmul", out)
        with open(excerpts, encoding="utf-8") as f:
            self.assertIn("==== test_cuda_nn (FAIL", f.read())

    def test_every_case_skipped_is_a_failure(self):
        rc, out = self.run_report(report.meson, [self.log(
            {"name": "python-cuda", "result": "OK", "duration": 1,
             "stdout": "Ran 17 tests in 0.1s\n\nOK (skipped=17)\n"},
            {"name": "python-cuda-torchless", "result": "OK", "duration": 1,
             "stdout": "Ran 17 tests in 0.1s\n\nOK (skipped=1)\n"})])
        self.assertEqual(rc, 1)
        self.assertIn("2 programs: 1 passed, 1 failed; 34 cases, 0 failed", out)
        self.assertIn("first failure: every case skipped: OK (skipped=17)", out)

    def test_no_log_is_a_failure(self):
        rc, out = self.run_report(report.meson, [os.path.join(self.dir.name, "missing.json")])
        self.assertEqual(rc, 1)
        self.assertIn("no test ran", out)


class TestConformance(Case):
    OK = ("conformance: 17703 of 17703 cases selected; runner seed 1, case seed 2\n" + CHECK_OK +
          "conformance: CUDA: 47133 runs on cuda:0 compared with the cpu, 1659 gradient comparisons, 0 skipped\n")

    def test_pass(self):
        rc, out = self.run_report(report.conformance, [self.file("c.log", self.OK), "0"])
        self.assertEqual(rc, 0, out)
        self.assertIn("12 cases, 0 failed; 47133 runs on cuda:0 vs cpu, 1659 gradient comparisons", out)

    def test_failure_and_skip(self):
        rc, out = self.run_report(report.conformance, [self.file("c.log", CHECK_FAIL), "1"])
        self.assertEqual(rc, 1)
        self.assertIn("first failure: test_cuda_reduce.c:120:F", out)
        rc, out = self.run_report(report.conformance, [
            self.file("s.log", "conformance --backend cuda: SKIPPED: no CUDA device\n"), "77"])
        self.assertEqual(rc, 1)
        self.assertIn("exit 77: conformance --backend cuda: SKIPPED", out)


class TestBench(Case):
    def test_ratios(self):
        rc, out = self.run_report(report.bench, [self.file("mm", MM), "0", self.file("red", RED), "0"])
        self.assertEqual(rc, 0, out)  # below target is a finding, not a failure
        self.assertIn("mm/cuBLAS min 0.857, median 0.957, 1 below 0.95", out)
        self.assertIn("elementwise/memcpy min 0.862, median 0.966, 1 below 0.9", out)
        self.assertIn("reductions/memcpy min 0.931, median 0.948\n", out)
        self.assertIn("device: NVIDIA H100 80GB HBM3 (sm_90), TF32 off", out)
        self.assertIn("mm bfloat16  n=8192      600.0 vs    700.0 TFLOP/s  ratio 0.857  below target", out)

    def test_missing_rows_or_exit(self):
        rc, _ = self.run_report(report.bench, [self.file("mm", MM), "0", self.file("red", "op elements\n"), "0"])
        self.assertEqual(rc, 1)
        rc, out = self.run_report(report.bench, [self.file("mm", MM), "1", self.file("red", RED), "0"])
        self.assertEqual(rc, 1)
        self.assertIn("bench_cuda: exit 1", out)


class TestE2e(Case):
    def run_e2e(self, cpu, dev, cpu_rc=0, dev_rc=0):
        return self.run_report(report.e2e, [self.file("cpu", cpu), str(cpu_rc), self.file("dev", dev), str(dev_rc)])

    def test_same_training(self):
        rc, out = self.run_e2e(training(347, [1.2345, 0.2]), training(346, [1.23451, 0.21]))
        self.assertEqual(rc, 0, out)
        self.assertIn("cpu 96.4% (347 of 360), cuda:0 96.1% (346 of 360)", out)

    def test_different_training(self):
        rc, out = self.run_e2e(training(347, [1.2345, 0.2]), training(343, [1.2345, 0.2]))
        self.assertEqual(rc, 1)
        self.assertIn("accuracy differs by 4 images", out)
        rc, out = self.run_e2e(training(347, [1.2345, 0.2]), training(347, [1.30, 0.2]))
        self.assertEqual(rc, 1)
        self.assertIn("epoch 1 loss 1.3 on cuda:0", out)
        rc, out = self.run_e2e(training(300, [1.2, 0.2]), training(300, [1.2, 0.2]), 1, 1)
        self.assertEqual(rc, 1)
        self.assertIn("cpu: exit 1", out)
        rc, out = self.run_e2e(training(347, [1.2, 0.2]), "train_mlp: to device: no CUDA device\n", 0, 1)
        self.assertEqual(rc, 1)
        self.assertIn("cuda:0: no accuracy (exit 1: train_mlp: to device: no CUDA device)", out)


if __name__ == "__main__":
    result = unittest.main(argv=[sys.argv[0]], exit=False, verbosity=0).result
    sys.exit(0 if result.wasSuccessful() else 1)

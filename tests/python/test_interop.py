"""Zero-copy interop of the Python module libops: DLPack both ways with NumPy and (where
python3-torch is installed) PyTorch, and shared memory across two real Python
processes.  No copy is proven by data pointers and by writing through one side and
reading the other; no leaked segment by scanning /dev/shm after the processes exit,
also when one of them is killed with SIGKILL.  Run by `meson test` (suite python)
with the build tree's package first on PYTHONPATH; the child processes get the same
environment."""

import gc
import glob
import os
import pickle
import signal
import subprocess
import sys
import time
import unittest

import numpy as np

import libops as L

try:
    import torch
    import torch.utils.dlpack
except ImportError:  # CI has no PyTorch: those round trips are skipped there
    torch = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")

PYTHON = "/usr/bin/python3"
CHILD_TIMEOUT = 120  # seconds; python under the sanitizers starts slowly

# dtypes every DLPack consumer here understands (NumPy 1.24 and PyTorch 1.13 refuse
# bool, which DLPack 0.6 has no code for; NumPy has no bfloat16)
NP_DTYPES = [(L.uint8, np.uint8), (L.int8, np.int8), (L.int16, np.int16), (L.int32, np.int32),
             (L.int64, np.int64), (L.float16, np.float16), (L.float32, np.float32), (L.float64, np.float64)]


def np_ptr(a):
    return a.__array_interface__["data"][0]


def segments(pid):
    return sorted(glob.glob(f"/dev/shm/libops_{pid}_*"))


def wait_until(cond, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


class TestDLPackSelf(unittest.TestCase):
    def test_device(self):
        self.assertEqual(L.ones(2).__dlpack_device__(), (1, 0))

    def test_round_trip_shares_memory(self):
        base = L.arange(24, dtype=L.float32).view(4, 6)
        for t in [base, base[:, 1::2], base.t(), base[2], base[1:3, 4:], base[0, 0]]:
            u = L.from_dlpack(t)
            self.assertEqual(u.shape, t.shape)
            self.assertEqual(u.stride(), t.stride())
            self.assertEqual(u.dtype, t.dtype)
            self.assertEqual(u.data_ptr(), t.data_ptr())
            self.assertEqual(u.tolist(), t.tolist())
        u = L.from_dlpack(base[:, 1::2])
        u[1, 2] = -5.0
        self.assertEqual(base[1, 5].item(), -5.0)
        base[3, 3] = 77.0
        self.assertEqual(u[3, 1].item(), 77.0)

    def test_every_dtype(self):
        for dt in [L.bool, L.uint8, L.int8, L.int16, L.int32, L.int64, L.float16, L.bfloat16, L.float32,
                   L.float64]:
            t = (L.arange(6) % 2).to(dt) if dt == L.bool else L.arange(6).to(dt)
            u = L.from_dlpack(L.to_dlpack(t))
            self.assertEqual(u.dtype, dt)
            self.assertEqual(u.data_ptr(), t.data_ptr())
            self.assertEqual(u.tolist(), t.tolist())

    def test_keeps_the_producer_alive(self):
        t = L.arange(5, dtype=L.float64) * 2
        u = L.from_dlpack(t)
        del t
        gc.collect()
        L.ones(1000)  # reuse freed memory if any was freed
        self.assertEqual(u.tolist(), [0.0, 2.0, 4.0, 6.0, 8.0])

    def test_capsule_is_consumed_once(self):
        t = L.ones(3)
        cap = L.to_dlpack(t)
        self.assertEqual(type(cap).__name__, "PyCapsule")
        self.assertIn('"dltensor"', repr(cap))
        u = L.from_dlpack(cap)
        self.assertIn('"used_dltensor"', repr(cap))
        with self.assertRaisesRegex(RuntimeError, "can be consumed only once"):
            L.from_dlpack(cap)
        self.assertEqual(u.data_ptr(), t.data_ptr())

    def test_unconsumed_capsule_and_imports_free_everything(self):
        gc.collect()
        base = L._C._allocated_bytes()
        for _ in range(20):
            cap = L.to_dlpack(L.ones(100))
            del cap
            u = L.from_dlpack(L.arange(50, dtype=L.float32))
            (u + 1).sum().item()
            del u
            a = np.arange(10.0)
            v = L.from_dlpack(a)
            del a, v
        gc.collect()
        self.assertEqual(L._C._allocated_bytes(), base)

    def test_requires_grad_is_refused(self):
        w = L.ones(3, requires_grad=True)
        with self.assertRaisesRegex(RuntimeError,
                                    r"^Can't export tensors that require gradient, use tensor\.detach\(\)$"):
            w.__dlpack__()
        with self.assertRaisesRegex(RuntimeError, "require gradient"):
            L.from_dlpack(w)
        u = L.from_dlpack(w.detach())
        self.assertFalse(u.requires_grad)
        self.assertEqual(u.data_ptr(), w.data_ptr())

    def test_keywords(self):
        t = L.arange(4, dtype=L.float32)
        L.from_dlpack(t.__dlpack__(stream=None))
        L.from_dlpack(t.__dlpack__(None))
        with self.assertRaisesRegex(TypeError, "stream must be ``int`` or ``none``"):
            t.__dlpack__(stream="s")
        u = L.from_dlpack(t.__dlpack__(dl_device=(1, 0)))
        self.assertEqual(u.data_ptr(), t.data_ptr())
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        c = L.from_dlpack(t.__dlpack__(copy=True))
        self.assertNotEqual(c.data_ptr(), t.data_ptr())
        self.assertEqual(c.tolist(), t.tolist())
        # a producer asked for the versioned struct gives the legacy one when this build
        # has only DLPack 0.6, as the array API allows
        L.from_dlpack(t.__dlpack__(max_version=(1, 0)))
        with self.assertRaises(TypeError):
            t.__dlpack__(max_version=3)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(TypeError, "from_dlpack.*'ext_tensor'.*int"):
            L.from_dlpack(5)
        with self.assertRaisesRegex(TypeError, "to_dlpack.*'tensor' must be Tensor, not list"):
            L.to_dlpack([1, 2])

        class Liar:
            def __dlpack__(self, stream=None):
                return 42

            def __dlpack_device__(self):
                return (1, 0)

        with self.assertRaisesRegex(TypeError, "__dlpack__ returned int"):
            L.from_dlpack(Liar())

    def test_allocation_failures_raise_cleanly(self):
        x = L.arange(6, dtype=L.float32)
        a = np.arange(6.0)
        calls = [lambda: L.to_dlpack(x), lambda: L.from_dlpack(x), lambda: L.from_dlpack(a),
                 lambda: x.__dlpack__(copy=True)]
        gc.collect()
        base = L._C._allocated_bytes()
        for i, fn in enumerate(calls):
            n = 1
            while True:
                L._C._alloc_fail_nth(n)
                try:
                    r = fn()
                    L._C._alloc_fail_nth(0)
                    del r
                    self.assertGreater(n, 1, f"call {i} allocates nothing through libops")
                    break
                except (RuntimeError, MemoryError) as e:
                    self.assertIn("out of memory", str(e), (i, n))
                finally:
                    L._C._alloc_fail_nth(0)
                n += 1
                self.assertLess(n, 100)
        gc.collect()
        self.assertEqual(x.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
        self.assertEqual(a.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
        self.assertEqual(L._C._allocated_bytes(), base)


class TestDLPackNumpy(unittest.TestCase):
    def test_numpy_from_libops(self):
        for dt, npdt in NP_DTYPES:
            t = L.arange(12).to(dt).view(3, 4)
            ref = np.arange(12).astype(npdt).reshape(3, 4)
            for v, want in [(t, ref), (t[:, ::2], ref[:, ::2]), (t.t(), ref.T), (t[1], ref[1])]:
                a = np.from_dlpack(v)
                self.assertEqual(a.dtype, npdt)
                self.assertEqual(a.shape, v.shape)
                self.assertEqual(np_ptr(a), v.data_ptr())
                self.assertEqual(a.strides, tuple(s * v.element_size() for s in v.stride()))
                np.testing.assert_array_equal(a, want)
        t = L.zeros(3, 4)
        a = np.from_dlpack(t[:, 1:])
        t[2, 3] = 42.0  # written through libops, read through NumPy
        self.assertEqual(a[2, 2], 42.0)
        if a.flags.writeable:  # NumPy >= 1.25 may import writable
            a[0, 0] = 7.0
            self.assertEqual(t[0, 1].item(), 7.0)
        # the array keeps the tensor alive
        del t
        gc.collect()
        L.ones(1000)
        self.assertEqual(a[2, 2], 42.0)

    def test_libops_from_numpy_dlpack(self):
        for dt, npdt in NP_DTYPES:
            a = np.arange(20).astype(npdt).reshape(4, 5)
            for v in [a, a[:, 1::2], a.T, a[2:, 3:]]:
                t = L.from_dlpack(v)
                self.assertEqual(t.dtype, dt)
                self.assertEqual(t.shape, v.shape)
                self.assertEqual(t.data_ptr(), np_ptr(v))
                self.assertEqual(t.stride(), tuple(s // v.itemsize for s in v.strides))
                np.testing.assert_array_equal(t.numpy(), v)
        a = np.zeros((4, 5), np.float32)
        t = L.from_dlpack(a[1:, ::2])
        t[1, 2] = 3.5  # written through libops, read through NumPy
        self.assertEqual(a[2, 4], 3.5)
        a[3, 0] = -1.0  # and the other way
        self.assertEqual(t[2, 0].item(), -1.0)
        del a
        gc.collect()
        self.assertEqual(t[1, 2].item(), 3.5)  # the tensor keeps the array alive

    def test_negative_strides(self):
        a = np.arange(12.0).reshape(3, 4)
        v = a[::-1, ::-2]
        try:
            cap = v.__dlpack__()
        except (BufferError, RuntimeError, TypeError):
            self.skipTest("this NumPy does not export negative strides")
        t = L.from_dlpack(cap)
        self.assertEqual(t.stride(), (-4, -2))
        self.assertEqual(t.data_ptr(), np_ptr(v))
        np.testing.assert_array_equal(t.numpy(), v)
        t[0, 0] = 100.0
        self.assertEqual(a[2, 3], 100.0)

    def test_unsupported_dtype_is_refused_and_released(self):
        for npdt in [np.complex64, np.uint16]:
            a = np.ones(3, npdt)
            before = sys.getrefcount(a)
            with self.assertRaisesRegex(RuntimeError, "from_dlpack: unsupported DLPack dtype"):
                L.from_dlpack(a)
            gc.collect()
            self.assertEqual(sys.getrefcount(a), before)  # NumPy's deleter ran
            np.testing.assert_array_equal(a, np.ones(3, npdt))


@needs_torch
class TestDLPackTorch(unittest.TestCase):
    TDT = {L.uint8: "uint8", L.int8: "int8", L.int16: "int16", L.int32: "int32", L.int64: "int64",
           L.float16: "float16", L.bfloat16: "bfloat16", L.float32: "float32", L.float64: "float64"}

    def test_torch_from_libops(self):
        for dt, name in self.TDT.items():
            t = L.arange(12).to(dt).view(3, 4)
            for v in [t, t[:, 1::2], t.t()]:
                for conv in (torch.from_dlpack, lambda x: torch.utils.dlpack.from_dlpack(L.to_dlpack(x))):
                    tt = conv(v)
                    self.assertEqual(str(tt.dtype), "torch." + name)
                    self.assertEqual(tuple(tt.shape), v.shape)
                    self.assertEqual(tt.stride(), v.stride())
                    self.assertEqual(tt.data_ptr(), v.data_ptr())
                    self.assertEqual(tt.tolist(), v.tolist())
        t = L.zeros(2, 3)
        tt = torch.from_dlpack(t.t())
        tt[2, 1] = 5.0  # torch writes, libops reads
        self.assertEqual(t[1, 2].item(), 5.0)
        t[0, 0] = -3.0  # and the other way
        self.assertEqual(tt[0, 0].item(), -3.0)
        del t
        gc.collect()
        self.assertEqual(tt[2, 1].item(), 5.0)  # torch keeps the libops tensor alive

    def test_libops_from_torch(self):
        for dt, name in self.TDT.items():
            tt = torch.arange(12).to(getattr(torch, name)).view(3, 4)
            for v in [tt, tt[:, 1::2], tt.t(), tt[1:, 2:]]:
                for conv in (L.from_dlpack, lambda x: L.from_dlpack(torch.utils.dlpack.to_dlpack(x))):
                    t = conv(v)
                    self.assertEqual(t.dtype, dt)
                    self.assertEqual(t.shape, tuple(v.shape))
                    self.assertEqual(t.stride(), v.stride())
                    self.assertEqual(t.data_ptr(), v.data_ptr())
                    self.assertEqual(t.tolist(), v.tolist())
        tt = torch.zeros(3, 4)
        t = L.from_dlpack(tt[1:, ::2])
        t[1, 1] = 9.0
        self.assertEqual(tt[2, 2].item(), 9.0)
        tt[1, 0] = 4.0
        self.assertEqual(t[0, 0].item(), 4.0)
        del tt
        gc.collect()
        self.assertEqual(t[1, 1].item(), 9.0)  # libops keeps the torch tensor alive

    def test_requires_grad_refused_by_torch_consumer(self):
        with self.assertRaisesRegex(RuntimeError, "Can't export tensors that require gradient"):
            torch.from_dlpack(L.ones(2, requires_grad=True))
        with self.assertRaisesRegex(RuntimeError, "Can't export tensors that require gradient"):
            L.from_dlpack(torch.ones(2, requires_grad=True))

    def test_torch_capsule_consumed_once(self):
        cap = torch.utils.dlpack.to_dlpack(torch.ones(2))
        L.from_dlpack(cap)
        with self.assertRaisesRegex(RuntimeError, "consumed only once"):
            torch.utils.dlpack.from_dlpack(cap)
        cap = L.to_dlpack(L.ones(2))
        torch.utils.dlpack.from_dlpack(cap)
        with self.assertRaisesRegex(RuntimeError, "consumed only once"):
            L.from_dlpack(cap)


# ---- shared memory -----------------------------------------------------------------

RECEIVER = r"""
import sys
import libops as L
t = L.from_shm_handle(sys.stdin.readline().strip())
print("opened", t.is_shared(), t.tolist(), flush=True)
t[0] = 100.0
print("wrote", flush=True)
sys.stdin.readline()
print("seen", t[1].item(), flush=True)
sys.stdin.readline()
"""

CREATOR = r"""
import sys
import libops as L
t = L.arange(4, dtype=L.float32).share_memory_()
print(t.shm_handle(), flush=True)
sys.stdin.readline()
print("seen", t[2].item(), flush=True)
t[3] = -7.0
print("wrote", flush=True)
sys.stdin.readline()
"""


def spawn(code):
    # cwd "/": `python -c` puts the working directory first on sys.path, and meson
    # runs tests in the build directory, whose libops.so (the C library) would shadow
    # the package
    # the build tree's package, wherever this process found it
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(L.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return subprocess.Popen([PYTHON, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=env, cwd="/", text=True)


class TestSharedMemory(unittest.TestCase):
    def tearDown(self):
        gc.collect()

    def read(self, p):
        line = p.stdout.readline()
        self.assertNotEqual(line, "", "the child process died")
        return line.strip()

    def send(self, p, text=""):
        p.stdin.write(text + "\n")
        p.stdin.flush()

    def finish(self, p, kill=False):
        if kill:
            p.send_signal(signal.SIGKILL)
        else:
            p.stdin.close()
        rc = p.wait(timeout=CHILD_TIMEOUT)
        p.stdout.close()
        if not kill:
            p.stdin = None
        elif not p.stdin.closed:
            p.stdin.close()
        return rc

    def test_share_memory_in_place(self):
        before = set(segments(os.getpid()))
        t = L.arange(6, dtype=L.float64).view(2, 3)
        row = t[1]
        self.assertFalse(t.is_shared())
        ptr = t.data_ptr()
        self.assertIs(t.share_memory_(), t)
        self.assertTrue(t.is_shared())
        self.assertTrue(row.is_shared())  # every view of the storage moved
        self.assertNotEqual(t.data_ptr(), ptr)
        self.assertEqual(row.data_ptr(), t.data_ptr() + 3 * 8)
        self.assertEqual(t.tolist(), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        self.assertIs(t.share_memory_(), t)  # a no-op the second time
        self.assertEqual(len(set(segments(os.getpid())) - before), 1)

        h = row[::2].shm_handle()
        self.assertIsInstance(h, str)
        self.assertTrue(h.startswith("libops-shm:1:/libops_%d_" % os.getpid()), h)
        self.assertEqual(pickle.loads(pickle.dumps(h)), h)
        u = L.from_shm_handle(h)
        self.assertTrue(u.is_shared())
        self.assertEqual((u.shape, u.stride(), u.dtype), ((2,), (2,), L.float64))
        self.assertEqual(u.tolist(), [3.0, 5.0])
        u[1] = 50.0  # a second mapping of the same bytes
        self.assertEqual(t[1, 2].item(), 50.0)
        t[1, 0] = 30.0
        self.assertEqual(u[0].item(), 30.0)
        del t, row, u
        gc.collect()
        self.assertEqual(set(segments(os.getpid())), before)

    def test_share_memory_of_borrowed_storage_copies(self):
        a = np.arange(3.0)
        t = L.from_numpy(a)
        t.share_memory_()
        self.assertTrue(t.is_shared())
        t[0] = 5.0
        self.assertEqual(a[0], 0.0)  # no longer aliases the array, as in torch

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "shm_handle"):
            L.ones(2).shm_handle()
        with self.assertRaisesRegex(RuntimeError, "not a libops shared-memory handle"):
            L.from_shm_handle("libops-shm:garbage")
        with self.assertRaisesRegex(TypeError, "from_shm_handle.*'handle' must be str, not int"):
            L.from_shm_handle(5)
        with self.assertRaises(ValueError):
            L.from_shm_handle("libops-shm:1:\0")
        t = L.ones(4).share_memory_()
        h = t.shm_handle()
        del t
        gc.collect()
        with self.assertRaisesRegex(RuntimeError, "from_shm_handle"):
            L.from_shm_handle(h)  # the creator released it: the name is gone

    def test_allocation_failures_raise_cleanly(self):
        # every failure point of share_memory_ and from_shm_handle in turn: an
        # exception, the tensor as it was, no segment left, nothing leaked
        before = set(segments(os.getpid()))
        gc.collect()
        base = L._C._allocated_bytes()
        t = L.arange(1000, dtype=L.float32)
        ptr = t.data_ptr()
        h = None
        for what in ("share", "open"):
            n = 1
            while True:
                L._C._alloc_fail_nth(n)
                try:
                    if what == "share":
                        t.share_memory_()
                    else:
                        u = L.from_shm_handle(h)
                        L._C._alloc_fail_nth(0)
                        self.assertEqual(u[999].item(), 999.0)
                        del u
                    break
                except RuntimeError as e:
                    self.assertIn("out of memory", str(e), (what, n))
                    if what == "share":
                        self.assertEqual((t.is_shared(), t.data_ptr()), (False, ptr))
                        self.assertEqual(set(segments(os.getpid())), before)
                finally:
                    L._C._alloc_fail_nth(0)
                n += 1
                self.assertLess(n, 20)
            self.assertGreater(n, 1, what)
            h = t.shm_handle()
        self.assertEqual(t[999].item(), 999.0)
        del t
        gc.collect()
        self.assertEqual(set(segments(os.getpid())), before)
        self.assertEqual(L._C._allocated_bytes(), base)

    def test_two_processes_both_ways(self):
        t = L.arange(4, dtype=L.float32).share_memory_()
        p = spawn(RECEIVER)
        try:
            self.send(p, t.shm_handle())
            self.assertEqual(self.read(p), "opened True [0.0, 1.0, 2.0, 3.0]")
            self.assertEqual(self.read(p), "wrote")
            self.assertEqual(t[0].item(), 100.0)  # the child's write, seen here
            t[1] = 11.0
            self.send(p)
            self.assertEqual(self.read(p), "seen 11.0")  # ours, seen there
            self.assertEqual(self.finish(p), 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(t.tolist(), [100.0, 11.0, 2.0, 3.0])
        del t
        gc.collect()
        self.assertEqual(segments(os.getpid()), [])
        self.assertEqual(segments(p.pid), [])

    def test_receiver_killed(self):
        t = L.arange(4, dtype=L.float32).share_memory_()
        p = spawn(RECEIVER)
        try:
            self.send(p, t.shm_handle())
            self.read(p)
            self.assertEqual(self.read(p), "wrote")
            self.assertEqual(self.finish(p, kill=True), -signal.SIGKILL)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(t.tolist(), [100.0, 1.0, 2.0, 3.0])
        t[2] = 1.5  # still ours to use
        self.assertEqual(t[2].item(), 1.5)
        del t
        gc.collect()
        self.assertEqual(segments(os.getpid()), [])
        self.assertEqual(segments(p.pid), [])

    def run_creator(self, kill):
        p = spawn(CREATOR)
        try:
            h = self.read(p)
            self.assertTrue(h.startswith("libops-shm:1:/libops_%d_" % p.pid), h)
            self.assertEqual(len(segments(p.pid)), 1)
            u = L.from_shm_handle(h)
            self.assertEqual(u.tolist(), [0.0, 1.0, 2.0, 3.0])
            u[2] = 22.0
            self.send(p)
            self.assertEqual(self.read(p), "seen 22.0")  # ours, seen there
            self.assertEqual(self.read(p), "wrote")
            self.assertEqual(u[3].item(), -7.0)  # theirs, seen here
            rc = self.finish(p, kill=kill)
            self.assertEqual(rc, -signal.SIGKILL if kill else 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        # the creator is gone: its name goes (unlinked at exit, or by its janitor after
        # SIGKILL) while our mapping keeps the memory
        self.assertTrue(wait_until(lambda: segments(p.pid) == []), segments(p.pid))
        u[0] = 1.0
        self.assertEqual(u.tolist(), [1.0, 1.0, 22.0, -7.0])
        del u
        gc.collect()
        self.assertEqual(segments(p.pid), [])
        self.assertEqual(segments(os.getpid()), [])

    def test_creator_exits(self):
        self.run_creator(kill=False)

    def test_creator_killed(self):
        self.run_creator(kill=True)


class TestExportedStorage(unittest.TestCase):
    """Storage whose address went out (NumPy, the buffer protocol, DLPack) never moves
    while the export lives: every operation that would move it raises instead of
    leaving the consumer with freed memory (docs/interop.md, "Exported storage")."""

    # each makes an object that holds the tensor's address until it is released
    EXPORTERS = {
        "numpy": lambda t: t.numpy(),
        "np.asarray": lambda t: np.asarray(t),
        "memoryview": lambda t: memoryview(t),
        "__dlpack__": lambda t: t.__dlpack__(),
        "to_dlpack": lambda t: L.to_dlpack(t),
        "np.from_dlpack": lambda t: np.from_dlpack(t),
        "L.from_dlpack": lambda t: L.from_dlpack(t),
    }

    @staticmethod
    def grow_out(t):
        return L.add(L.ones(1000), 1, out=t)

    @staticmethod
    def share(t):
        return t.share_memory_()

    MOVERS = {"out= resize": grow_out.__func__, "share_memory_": share.__func__}

    def tearDown(self):
        gc.collect()

    def test_every_exporter_every_move(self):
        for ename, export in self.EXPORTERS.items():
            for mname, move in self.MOVERS.items():
                with self.subTest(exporter=ename, operation=mname):
                    t = L.zeros(0)  # owns its storage alone: only the export pins it
                    e = export(t)
                    ptr = t.data_ptr()
                    with self.assertRaisesRegex(RuntimeError, "exported \\(to NumPy, DLPack or a memoryview\\)"):
                        move(t)
                    self.assertEqual((t.shape, t.data_ptr(), t.is_shared()), ((0,), ptr, False))
                    del e
                    gc.collect()
                    move(t)  # the export is over
                    self.assertTrue(t.shape == (1000,) or t.is_shared())

    def test_share_memory_after_numpy(self):
        # the case (a): the array must keep pointing at live memory
        t = L.arange(10, dtype=L.float64)
        a = t.numpy()
        with self.assertRaisesRegex(RuntimeError, "share_memory_: cannot move .* exported"):
            t.share_memory_()
        self.assertFalse(t.is_shared())
        self.assertEqual(L.from_numpy(a).sum().item(), 45.0)
        a[3] = 30.0
        self.assertEqual(t[3].item(), 30.0)  # still the same bytes
        self.assertEqual(a.tolist(), t.tolist())
        del a
        gc.collect()
        t.share_memory_()
        self.assertTrue(t.is_shared())
        self.assertEqual(t[3].item(), 30.0)

    def test_out_view_of_exported_base(self):
        # the case (b): resizing the empty view would free the array's bytes
        base = L.zeros(100000)
        a = base.numpy()
        with self.assertRaisesRegex(RuntimeError, "add: out= cannot be resized"):
            L.add(L.ones(1000), 1, out=base[100000:])
        # read through libops (instrumented) so that the sanitizer build sees a freed block
        self.assertEqual(L.from_numpy(a).sum().item(), 0.0)
        a[-1] = 5.0
        self.assertEqual(base[-1].item(), 5.0)
        # without the export the view still shares base's storage: refused all the same
        del a
        gc.collect()
        with self.assertRaisesRegex(RuntimeError, "shared with another tensor"):
            L.add(L.ones(1000), 1, out=base[100000:])
        out = L.empty(0)  # an out= of its own grows
        L.add(L.ones(1000), 1, out=out)
        self.assertEqual(out.shape, (1000,))

    def test_exports_are_counted(self):
        t = L.zeros(0)
        a, m = t.numpy(), memoryview(t)
        cap = L.to_dlpack(t)
        for held in (a, m, cap):
            with self.assertRaisesRegex(RuntimeError, "exported"):
                t.share_memory_()
            del held
        del a, m
        gc.collect()
        with self.assertRaisesRegex(RuntimeError, "exported"):
            t.share_memory_()  # the capsule still holds it
        del cap
        gc.collect()
        t.share_memory_()
        self.assertTrue(t.is_shared())

    def test_failed_export_pins_nothing(self):
        t = L.zeros(0, dtype=L.float32)
        t2 = L.zeros(0, dtype=L.float32).requires_grad_()
        with self.assertRaises(RuntimeError):
            t2.numpy()
        with self.assertRaises(RuntimeError):
            t2.__dlpack__()
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        L._C._alloc_fail_nth(1)
        try:
            with self.assertRaisesRegex(RuntimeError, "out of memory"):
                L.to_dlpack(t)
        finally:
            L._C._alloc_fail_nth(0)
        t.share_memory_()
        self.assertTrue(t.is_shared())
        t2.detach().share_memory_()

    def test_array_interface_pins_for_good(self):
        # the raw address goes out with no release hook: the storage stays pinned
        t = L.zeros(0)
        d = t.__array_interface__
        del d
        gc.collect()
        with self.assertRaisesRegex(RuntimeError, "exported"):
            t.share_memory_()
        with self.assertRaisesRegex(RuntimeError, "exported"):
            L.add(L.ones(3), 1, out=t)

    def test_shared_storage_exports_fine(self):
        # already in shared memory: share_memory_ is a no-op, exported or not
        t = L.arange(4, dtype=L.float32).share_memory_()
        a = t.numpy()
        self.assertIs(t.share_memory_(), t)
        a[0] = 9.0
        self.assertEqual(t[0].item(), 9.0)


class TestBoolImport(unittest.TestCase):
    """Bool memory from elsewhere holding bytes other than 0/1 is imported as a
    normalised copy; 0/1 bytes are shared as they are."""

    def test_from_numpy_bool_view_of_uint8(self):
        u = np.array([0, 1, 2, 255, 1, 0], dtype=np.uint8)
        b = u.view(np.bool_)
        for make in (L.from_numpy, L.tensor, lambda a: L.from_numpy(a.reshape(2, 3)[:, ::-1])):
            with self.subTest(make=make):
                x = make(b)
                self.assertEqual(x.dtype, L.bool)
                self.assertEqual(x.sum().item(), 4)  # the true elements, not 0+1+2+255+1
                self.assertEqual((~x).sum().item(), 2)
                want = [bool(v) for v in u]
                got = x.flatten().tolist() if x.dim() == 1 else x.tolist()
                if x.dim() == 2:
                    want = [want[0:3][::-1], want[3:6][::-1]]
                self.assertEqual(got, want)
                self.assertEqual((~x).tolist(), [[not v for v in r] for r in want] if x.dim() == 2
                                 else [not v for v in want])
        x = L.from_numpy(b)
        self.assertNotEqual(x.data_ptr(), np_ptr(u))  # a copy: sharing is lost for such data
        u[0] = 1
        self.assertFalse(x[0].item())

    def test_valid_bool_is_shared(self):
        a = np.array([True, False, True])
        x = L.from_numpy(a)
        self.assertEqual(x.data_ptr(), np_ptr(a))
        a[1] = True
        self.assertEqual(x.sum().item(), 3)

    def test_uint8_untouched(self):
        u = np.array([0, 1, 2, 255], dtype=np.uint8)
        x = L.from_numpy(u)
        self.assertEqual(x.data_ptr(), np_ptr(u))
        self.assertEqual(x.sum().item(), 258)

    def test_normalising_import_allocation_failures(self):
        u = np.array([0, 3, 1, 0] * 100, dtype=np.uint8)
        b = u.view(np.bool_)
        gc.collect()
        base = L._C._allocated_bytes()
        n = 1
        while True:
            L._C._alloc_fail_nth(n)
            try:
                x = L.from_numpy(b)
                L._C._alloc_fail_nth(0)
                self.assertEqual(x.sum().item(), 200)
                del x
                break
            except (RuntimeError, MemoryError) as e:
                self.assertIn("out of memory", str(e), n)
            finally:
                L._C._alloc_fail_nth(0)
            n += 1
            self.assertLess(n, 50)
        self.assertGreater(n, 1)
        gc.collect()
        self.assertEqual(L._C._allocated_bytes(), base)
        self.assertEqual(u[1], 3)  # the array itself is never written


if __name__ == "__main__":
    unittest.main()

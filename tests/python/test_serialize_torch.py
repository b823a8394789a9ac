"""torch.save checkpoints read without PyTorch (libops.load_torch), and pickling of libops
tensors (pickle / copy.copy / copy.deepcopy, nn.Parameter, nn.Module).

Without PyTorch the checkpoints are written here: a zip laid out as torch.save lays it
out (<name>/data.pkl, <name>/data/<key> aligned to 64 bytes, version, byteorder) whose
pickle is made by this file's own pickler, naming torch's globals (torch._utils.
_rebuild_tensor_v2, torch.FloatStorage, ...) without importing them, plus the legacy
non-zip stream.  So CI without PyTorch tests the reader; where python3-torch is installed
the same checks run on files torch.save wrote (ResNet-18's state dict from torchvision,
shared and view tensors, every dtype), compared with torch.load.  Broken files (truncated
at every length, missing or short storages, views out of their storage, bad byteorder,
random byte flips) each give a clear ValueError; globals outside the allow-list give
UnsafeGlobalError naming them and are never imported.

`--no-torch` (or LIBOPS_TEST_NO_TORCH=1) runs everything as if PyTorch were not installed
(meson runs both: python-serialize-torch and python-serialize-torch-notorch)."""

import collections
import copy
import io
import os
import pickle
import random
import struct
import sys
import tempfile
import unittest
import zipfile

if "--no-torch" in sys.argv:
    sys.argv.remove("--no-torch")
    os.environ["LIBOPS_TEST_NO_TORCH"] = "1"
if os.environ.get("LIBOPS_TEST_NO_TORCH"):
    sys.modules["torch"] = None  # `import torch` raises ImportError from here on

import numpy as np  # noqa: E402

import libops as L  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libops_test_base import NP_OF, TORCH_NAME, needs_torch, torch  # noqa: E402

try:
    import torchvision
except ImportError:
    torchvision = None

STORAGE_OF = {L.bool: "BoolStorage", L.uint8: "ByteStorage", L.int8: "CharStorage", L.int16: "ShortStorage",
              L.int32: "IntStorage", L.int64: "LongStorage", L.float16: "HalfStorage",
              L.bfloat16: "BFloat16Storage", L.float32: "FloatStorage", L.float64: "DoubleStorage"}
ALL_DTYPES = list(STORAGE_OF)


def _has_cuda():
    try:
        L.zeros(1, device="cuda:0")
        return True
    except Exception:
        return False


def values_of(dtype, n, seed=0):
    """n values of dtype as (raw little-endian bytes, float64/int64/bool numpy oracle)."""
    r = np.random.default_rng(seed)
    if dtype == L.bfloat16:
        f = r.uniform(-4, 4, n).astype(np.float32)
        bits = (f.view(np.uint32) >> 16).astype(np.uint16)  # exact bfloat16 values
        return bits.astype("<u2").tobytes(), (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    npdt = NP_OF[dtype]
    if npdt == np.bool_:
        a = r.integers(0, 2, n).astype(np.bool_)
    elif np.issubdtype(npdt, np.integer):
        info = np.iinfo(npdt)
        a = r.integers(info.min, info.max, n, endpoint=True, dtype=npdt)
    else:
        a = r.uniform(-100, 100, n).astype(npdt)
    return a.astype(np.dtype(npdt).newbyteorder("<")).tobytes(), a


def np_of(t):
    if t.dtype == L.bfloat16:
        return t.float().detach().numpy().astype(np.float64)
    return t.detach().numpy()


# ---- a torch.save writer without torch ------------------------------------------------

class G:
    """A global named like torch's, written as such by FakePickler (never imported here)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # the pickler wants reduce functions callable
        raise AssertionError("never called")


class Storage:
    def __init__(self, key, dtype, raw, stype=None, numel=None):
        self.key, self.dtype, self.raw = key, dtype, raw
        self.stype = stype or STORAGE_OF[dtype]
        self.numel = numel if numel is not None else len(raw) // dtype.itemsize


class T:
    """A tensor in the fake checkpoint: torch._utils._rebuild_tensor_v2(storage, ...)."""

    def __init__(self, storage, offset, size, stride, requires_grad=False, hooks=None):
        self.args = (storage, offset, tuple(size), tuple(stride), requires_grad,
                     collections.OrderedDict() if hooks is None else hooks)

    def __reduce__(self):
        return (G("torch._utils", "_rebuild_tensor_v2"), self.args)


class P:
    """torch._utils._rebuild_parameter(data, requires_grad, OrderedDict())."""

    def __init__(self, data, requires_grad=True):
        self.data, self.requires_grad = data, requires_grad

    def __reduce__(self):
        return (G("torch._utils", "_rebuild_parameter"), (self.data, self.requires_grad, collections.OrderedDict()))


class Call:
    """Any global called with args (for the allow-list tests)."""

    def __init__(self, module, name, *args):
        self.g, self.args = G(module, name), args

    def __reduce__(self):
        return (self.g, self.args)


class FakePickler(pickle._Pickler):
    dispatch = pickle._Pickler.dispatch.copy()

    def save_g(self, obj):
        self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
        self.memoize(obj)

    dispatch[G] = save_g

    def __init__(self, f, legacy=False):
        super().__init__(f, protocol=2)
        self.legacy = legacy
        self.storages = {}

    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            self.storages[obj.key] = obj
            pid = ("storage", G("torch", obj.stype), obj.key, "cpu", obj.numel)
            return pid + (None,) if self.legacy else pid
        return None


def pickle_bytes(obj, legacy=False):
    f = io.BytesIO()
    p = FakePickler(f, legacy)
    p.dump(obj)
    return f.getvalue(), p.storages


def _aligned_info(zf, name, align, compress):
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.compress_type = compress
    if align:
        # pad the local header's extra field so that the data starts at a multiple of 64
        # (torch does the same with an 'FB' extra field)
        start = zf.fp.tell() + 30 + len(name.encode()) + 4
        pad = -start % 64
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def write_checkpoint(path, obj, prefix="archive", align=True, compress=zipfile.ZIP_STORED, byteorder=b"little",
                     version=b"3\n", drop=(), records=None, swap=False):
    """A zip as torch.save writes it.  drop: record names left out; records: name -> bytes
    overriding or adding records; swap: storages written big-endian."""
    pkl, storages = pickle_bytes(obj)
    recs = collections.OrderedDict()
    recs["data.pkl"] = pkl
    if byteorder is not None:
        recs["byteorder"] = byteorder
    for key, s in storages.items():
        raw = s.raw
        if swap and s.dtype.itemsize > 1:
            raw = np.frombuffer(raw, dtype=f"<u{s.dtype.itemsize}").astype(f">u{s.dtype.itemsize}").tobytes()
        recs["data/" + key] = raw
    if version is not None:
        recs["version"] = version
    recs.update(records or {})
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in recs.items():
            if name in drop:
                continue
            zf.writestr(_aligned_info(zf, f"{prefix}/{name}", align, compress), data)
    return path


LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def write_legacy(path, obj, key_list=None, truncate_storage=None):
    pkl, storages = pickle_bytes(obj, legacy=True)
    out = io.BytesIO()
    for x in (LEGACY_MAGIC, 1001, {"protocol_version": 1001, "little_endian": True,
                                   "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(x, out, protocol=2)
    out.write(pkl)
    keys = sorted(storages) if key_list is None else key_list
    pickle.dump(keys, out, protocol=2)
    for k in keys:
        s = storages[k]
        raw = s.raw if truncate_storage != k else s.raw[:-1]
        out.write(struct.pack("<q", s.numel) + raw)
    with open(path, "wb") as f:
        f.write(out.getvalue())
    return path


def mappings_of(path):
    """[(start, end)] of this process's mappings of path."""
    real = os.path.realpath(path)
    spans = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == real:
                a, b = parts[0].split("-")
                spans.append((int(a, 16), int(b, 16)))
    return spans


class Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def assertLoadError(self, path, *fragments, exc=ValueError):
        with self.assertRaises(exc) as cm:
            L.load_torch(path)
        msg = str(cm.exception)
        self.assertIn("load_torch: '", msg)
        for frag in fragments:
            self.assertIn(frag, msg)
        return msg


def every_dtype_checkpoint():
    state, oracle = collections.OrderedDict(), {}
    for i, dt in enumerate(ALL_DTYPES):
        raw, a = values_of(dt, 12, seed=i)
        s = Storage(str(i), dt, raw)
        name = TORCH_NAME[dt]
        state[name] = T(s, 0, (3, 4), (4, 1))
        state[name + ".0d"] = T(s, 5, (), ())
        state[name + ".t"] = T(s, 1, (3, 2), (1, 3))  # a strided view with an offset
        state[name + ".empty"] = T(s, 12, (0, 4), (4, 1))
        oracle[name] = a.reshape(3, 4)
        oracle[name + ".0d"] = a[5]
        oracle[name + ".t"] = np.lib.stride_tricks.as_strided(a[1:], (3, 2), (a.itemsize, 3 * a.itemsize))
        oracle[name + ".empty"] = a[:0].reshape(0, 4)
    return state, oracle


class TestLoadTorchWritten(Case):
    """Checkpoints written by this file (no torch needed)."""

    def check_every_dtype(self, **kw):
        state, oracle = every_dtype_checkpoint()
        p = write_checkpoint(self.path("all.pt"), state, **kw)
        got = L.load_torch(p)
        self.assertIsInstance(got, collections.OrderedDict)
        self.assertEqual(list(got), list(state))
        for dt in ALL_DTYPES:
            name = TORCH_NAME[dt]
            for suffix in ("", ".0d", ".t", ".empty"):
                t = got[name + suffix]
                self.assertEqual(t.dtype, dt, name + suffix)
                self.assertFalse(t.requires_grad)
                np.testing.assert_array_equal(np_of(t), oracle[name + suffix], err_msg=name + suffix)
            self.assertEqual(got[name + ".t"].stride(), (1, 3))
            self.assertEqual(got[name + ".t"].storage_offset(), 1)
            self.assertEqual(got[name + ".0d"].shape, ())
        return got

    def test_every_dtype_views_and_offsets(self):
        self.check_every_dtype()

    def test_deflated_misaligned_and_big_endian(self):
        # compressed records and records not aligned to their elements are copied; a
        # big-endian file is byte-swapped
        self.check_every_dtype(compress=zipfile.ZIP_DEFLATED)
        self.check_every_dtype(align=False)
        self.check_every_dtype(swap=True, byteorder=b"big")
        self.check_every_dtype(byteorder=None, version=None)  # torch < 2.0 wrote no byteorder

    def test_shared_storage_stays_shared(self):
        raw, a = values_of(L.float32, 20)
        s = Storage("7", L.float32, raw)
        state = {"w": T(s, 0, (4, 5), (5, 1)), "wt": T(s, 0, (5, 4), (1, 5)), "row": T(s, 10, (5,), (1,)),
                 "again": None}
        got = L.load_torch(write_checkpoint(self.path("shared.pt"), state))
        w, wt, row = got["w"], got["wt"], got["row"]
        np.testing.assert_array_equal(wt.numpy(), a.reshape(4, 5).T)
        w[2, 1] = 1234.5  # one storage: every view sees the write
        self.assertEqual(wt[1, 2].item(), 1234.5)
        self.assertEqual(row[1].item(), 1234.5)
        self.assertIsNone(got["again"])

    def test_zero_copy_from_the_mapping(self):
        raw, a = values_of(L.float32, 4096)
        state = {"big": T(Storage("0", L.float32, raw), 0, (4096,), (1,))}
        p = write_checkpoint(self.path("map.pt"), state)
        with open(p, "rb") as f:
            before = f.read()
        t = L.load_torch(p)["big"]
        spans = mappings_of(p)
        self.assertTrue(spans, "the file is not mapped")
        self.assertTrue(any(a0 <= t.data_ptr() < b0 for a0, b0 in spans), "the tensor is not a view of the mapping")
        t.fill_(3.0)  # copy-on-write: the file never changes
        with open(p, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(L.load_torch(p)["big"][0].item(), float(a[0]))
        del t
        import gc

        gc.collect()
        self.assertEqual(mappings_of(p), [], "the mapping outlived its tensors")
        # compressed or misaligned records are copies
        q = write_checkpoint(self.path("copy.pt"), state, compress=zipfile.ZIP_DEFLATED)
        u = L.load_torch(q)["big"]
        self.assertFalse(any(a0 <= u.data_ptr() < b0 for a0, b0 in mappings_of(q)))
        np.testing.assert_array_equal(u.numpy(), a)

    def test_parameters_and_plain_objects(self):
        raw, a = values_of(L.float32, 6)
        s = Storage("0", L.float32, raw)
        obj = {
            "epoch": 7, "lr": 0.5, "name": "resnet", "flag": True, "none": None, "blob": b"\x00\xffab",
            "shape": Call("torch", "Size", (2, 3)), "dev": Call("torch", "device", "cuda", 0),
            "dtype": G("torch", "bfloat16"), "tags": Call("builtins", "set", ["a", "b"]),
            "nested": [(1, 2.5, "x"), {"k": [None]}],
            "model": collections.OrderedDict([("weight", P(T(s, 0, (2, 3), (3, 1)))),
                                              ("frozen", P(T(s, 0, (6,), (1,)), requires_grad=False)),
                                              ("grad_leaf", T(s, 0, (3,), (1,), requires_grad=True))]),
        }
        obj["via_type_v2"] = Call("torch._tensor", "_rebuild_from_type_v2", G("torch._utils", "_rebuild_parameter"),
                                  G("torch.nn.parameter", "Parameter"), (T(s, 1, (2,), (2,)), True, {}), {})
        got = L.load_torch(write_checkpoint(self.path("obj.pt"), obj))
        self.assertIsInstance(got.pop("via_type_v2"), L.nn.Parameter)
        obj.pop("via_type_v2")
        for k in ("epoch", "lr", "name", "flag", "none", "blob", "nested"):
            self.assertEqual(got[k], obj[k], k)
        self.assertEqual(got["shape"], (2, 3))
        self.assertEqual(got["dev"], "cuda:0")
        self.assertIs(got["dtype"], L.bfloat16)
        self.assertEqual(got["tags"], {"a", "b"})
        m = got["model"]
        self.assertIsInstance(m, collections.OrderedDict)
        self.assertIsInstance(m["weight"], L.nn.Parameter)
        self.assertTrue(m["weight"].requires_grad)
        self.assertIsInstance(m["frozen"], L.nn.Parameter)
        self.assertFalse(m["frozen"].requires_grad)
        self.assertTrue(m["grad_leaf"].requires_grad and m["grad_leaf"].is_leaf)
        np.testing.assert_array_equal(m["weight"].detach().numpy(), a.reshape(2, 3))
        # a Module loads the state dict
        lin = L.nn.Linear(3, 2, bias=False)
        lin.load_state_dict({"weight": m["weight"]})
        np.testing.assert_array_equal(lin.weight.detach().numpy(), a.reshape(2, 3))

    def test_state_dict_metadata_attribute(self):
        # Module.state_dict() is an OrderedDict with a _metadata attribute (pickled by BUILD)
        raw, _ = values_of(L.float32, 2)
        sd = collections.OrderedDict(w=T(Storage("0", L.float32, raw), 0, (2,), (1,)))
        f = io.BytesIO()
        p = FakePickler(f)
        # OrderedDict's own reduce carries the instance dict: emulate torch's state dict
        od = collections.OrderedDict(sd)
        od._metadata = collections.OrderedDict([("", {"version": 1})])
        p.dump(od)
        path = write_checkpoint(self.path("meta.pt"), None, records={"data.pkl": f.getvalue(),
                                                                       "data/0": raw})
        got = L.load_torch(path)
        self.assertEqual(got._metadata, {"": {"version": 1}})
        self.assertEqual(got["w"].shape, (2,))

    def test_load_detects_the_format(self):
        state, oracle = every_dtype_checkpoint()
        got = L.load(write_checkpoint(self.path("a.pt"), state))
        np.testing.assert_array_equal(got["float32"].numpy(), oracle["float32"])
        # a .npz is still a .npz
        L.savez(self.path("b.npz"), x=L.ones(3))
        self.assertEqual(list(L.load(self.path("b.npz"))), ["x"])
        got = L.load(write_legacy(self.path("c.pt"), state))
        np.testing.assert_array_equal(got["int16.t"].numpy(), oracle["int16.t"])

    def test_legacy_stream(self):
        state, oracle = every_dtype_checkpoint()
        got = L.load_torch(write_legacy(self.path("legacy.pt"), state))
        for k, v in oracle.items():
            np.testing.assert_array_equal(np_of(got[k]), v, err_msg=k)
        self.assertTrue(got["float32.t"].storage_offset() == 1)
        got["float32"][0, 1] = 99.0  # views of one storage
        self.assertEqual(got["float32.t"][0, 0].item(), 99.0)
        raw, _ = values_of(L.float32, 4)
        s = {"w": T(Storage("0", L.float32, raw), 0, (4,), (1,))}
        self.assertLoadError(write_legacy(self.path("t1.pt"), s, truncate_storage="0"), "storage '0'", "truncated")
        self.assertLoadError(write_legacy(self.path("t2.pt"), s, key_list=[]), "missing from the key list")
        with open(self.path("legacy.pt"), "rb") as f:
            data = f.read()
        for n in range(0, len(data), max(1, len(data) // 300)):
            with open(self.path("cut.pt"), "wb") as f:
                f.write(data[:n])
            with self.assertRaises(ValueError, msg=f"cut at {n}"):
                L.load_torch(self.path("cut.pt"))


class TestLoadTorchRefused(Case):
    """Untrusted input: the allow-list and broken files."""

    def test_globals_outside_the_allow_list_are_not_imported(self):
        mod = "libops_test_evil_module"
        with open(self.path(mod + ".py"), "w") as f:
            f.write("import sys\nsys.stderr.write('IMPORTED\\n')\nraise SystemExit('imported')\n")
        sys.path.insert(0, self.tmp.name)
        try:
            for module, name in ((mod, "run"), ("os", "system"), ("builtins", "eval"), ("builtins", "getattr"),
                                 ("torch._utils", "_rebuild_qtensor"), ("torch.nn.modules.linear", "Linear"),
                                 ("numpy.core.multiarray", "_reconstruct"), ("subprocess", "Popen")):
                p = write_checkpoint(self.path("evil.pt"), {"x": Call(module, name, "echo pwned")})
                with self.assertRaises(L.UnsafeGlobalError) as cm:
                    L.load_torch(p)
                msg = str(cm.exception)
                self.assertIn(f"'{module}.{name}'", msg)
                self.assertIn("not on the allow-list", msg)
                self.assertIsInstance(cm.exception, pickle.UnpicklingError)
            self.assertNotIn(mod, sys.modules)
        finally:
            sys.path.remove(self.tmp.name)

    def test_misused_allowed_globals(self):
        raw, _ = values_of(L.float32, 4)
        s = Storage("0", L.float32, raw)
        cases = [
            ({"x": Call("_codecs", "encode", "abc", "rot13")}, "_codecs.encode is only read"),
            ({"x": Call("torch._utils", "_rebuild_tensor_v2", "notastorage", 0, (1,), (1,), False,
                        collections.OrderedDict())}, "storage must be a storage of the archive"),
            ({"x": Call("torch._utils", "_rebuild_tensor_v2", s, 0, (2,), (1,), False, {"h": 1})}, "backward hooks"),
            ({"x": T(s, 0, (2, 2), (2,))}, "has 1 entries, the size has 2"),
            ({"x": Call("torch._utils", "_rebuild_tensor_v2", s, 0, (2,), (1,), False, collections.OrderedDict(),
                        {"neg": True})}, "tensor metadata {'neg': True} is not supported"),
            ({"x": Call("torch._tensor", "_rebuild_from_type_v2", G("torch._utils", "_rebuild_tensor_v2"),
                        G("torch", "FloatStorage"), (), {})}, "of a type other than torch.Tensor"),
            ({"x": Call("torch._tensor", "_rebuild_from_type_v2", G("torch._utils", "_rebuild_tensor_v2"),
                        G("torch", "Tensor"), (s, 0, (2,), (1,), False, {}), {"a": 1})}, "extra Python state"),
            ({"x": T(s, -1, (2,), (1,))}, "storage offset must be a non-negative int"),
            ({"x": T(s, 0, (2,), (-1,))}, "negative entry"),
            ({"x": T(s, 0, (1,) * 17, (1,) * 17)}, "at most 16"),
            ({"x": T(s, 0, (2, "a"), (1, 1))}, "must be a tuple of ints"),
            ({"x": T(s, 0, (2,), (1,), requires_grad="yes")}, "requires_grad must be a bool"),
            ({"x": Call("torch", "Size", 3)}, "torch.Size takes one tuple"),
            ({"x": Call("torch", "ComplexFloatStorage")}, "complex64"),
            ({"x": G("torch", "cfloat")}, "complex64"),
        ]
        for obj, frag in cases:
            self.assertLoadError(write_checkpoint(self.path("bad.pt"), obj), frag)

    def test_views_outside_their_storage(self):
        raw, _ = values_of(L.float32, 12)
        s = Storage("0", L.float32, raw)
        for t, frag in ((T(s, 0, (3, 5), (5, 1)), "reaches element 14 of storage '0', which has 12 elements"),
                        (T(s, 11, (2,), (1,)), "reaches element 12"),
                        (T(s, 0, (2, 2), (0, 100)), "reaches element 100"),
                        (T(s, 13, (0,), (1,)), "past the end"),
                        (T(s, 2 ** 62, (2,), (1,)), "reaches element")):
            self.assertLoadError(write_checkpoint(self.path("oob.pt"), {"t": t}), frag)
        # an empty tensor at the very end of its storage is fine
        got = L.load_torch(write_checkpoint(self.path("end.pt"), {"t": T(s, 12, (0,), (1,))}))
        self.assertEqual(got["t"].shape, (0,))

    def test_broken_archives(self):
        raw, _ = values_of(L.float32, 4)
        s = Storage("0", L.float32, raw)
        state = {"w": T(s, 0, (4,), (1,))}
        w = lambda name, **kw: write_checkpoint(self.path(name), state, **kw)  # noqa: E731
        self.assertLoadError(w("m.pt", drop=("data/0",)), "storage '0' is missing (no record 'archive/data/0')")
        self.assertLoadError(w("s.pt", records={"data/0": raw[:-4]}), "storage '0' has 12 bytes, its 4 elements")
        self.assertLoadError(w("l.pt", records={"data/0": raw + b"1234"}), "storage '0' has 20 bytes")
        self.assertLoadError(w("b.pt", byteorder=b"middle"), "byteorder record is b'middle'")
        self.assertLoadError(w("v.pt", version=b"three"), "version record")
        self.assertLoadError(w("p.pt", drop=("data.pkl",)), "no single '<name>/data.pkl'")
        self.assertLoadError(w("g.pt", records={"data.pkl": b"\x80\x02garbage"}), "the pickle is not a valid")
        self.assertLoadError(w("e.pt", records={"data.pkl": b""}), "the pickle is not a valid")
        stray = w("x.pt")
        with zipfile.ZipFile(stray, "a") as zf:
            zf.writestr("elsewhere/data/0", raw)
        self.assertLoadError(stray, "record 'elsewhere/data/0' is outside the archive's folder 'archive'")
        two = write_checkpoint(self.path("two.pt"), state)
        with zipfile.ZipFile(two, "a") as zf:
            zf.writestr("other/data.pkl", b"")
        self.assertLoadError(two, "several data.pkl records")
        with open(self.path("notzip.pt"), "wb") as f:
            f.write(b"hello")
        self.assertLoadError(self.path("notzip.pt"), "not a torch.save file")
        with open(self.path("pk.pt"), "wb") as f:
            f.write(b"PK\x03\x04" + b"\x00" * 40)
        self.assertLoadError(self.path("pk.pt"), "not a readable zip archive")
        # a persistent id that is not a storage
        bad_pid = b"\x80\x02X\x03\x00\x00\x00abcQ."  # BINPERSID of 'abc'
        self.assertLoadError(w("pid.pt", records={"data.pkl": bad_pid}), "unexpected persistent id")
        # the same key as two dtypes
        s2 = Storage("0", L.int32, raw)
        self.assertLoadError(write_checkpoint(self.path("dup.pt"), {"a": T(s, 0, (1,), (1,)),
                                                                     "b": T(s2, 0, (1,), (1,))}),
                             "storage '0' is named twice")
        with self.assertRaises(ValueError):
            L.load_torch(self.path("rn.pt"), map_location="cuda")

    def test_record_sizes_are_bounded(self):
        """A record's claimed size is checked before anything is allocated: stored bytes
        must lie in the file, deflated ones expand at most 1032:1, other methods refused."""
        raw, _ = values_of(L.float32, 1 << 12)
        state = {"w": T(Storage("0", L.float32, raw, numel=1 << 29), 0, (4,), (1,))}
        for compress, frag in ((zipfile.ZIP_STORED, "claims 2147483648 bytes stored in 16384"),
                               (zipfile.ZIP_DEFLATED, "more than deflate can expand")):
            p = write_checkpoint(self.path("bomb.pt"), state, compress=compress)
            with open(p, "r+b") as f:
                data = bytearray(f.read())
                cd = data.index(b"PK\x01\x02")
                while True:  # the central header of archive/data/0: its uncompressed size
                    n = struct.unpack_from("<H", data, cd + 28)[0]
                    if data[cd + 46:cd + 46 + n] == b"archive/data/0":
                        struct.pack_into("<I", data, cd + 24, 1 << 31)
                        break
                    cd = data.index(b"PK\x01\x02", cd + 4)
                f.seek(0)
                f.write(data)
            self.assertLoadError(p, "record 'archive/data/0' claims 2147483648 bytes", frag)
        self.assertLoadError(write_checkpoint(self.path("bz.pt"), state, compress=zipfile.ZIP_BZIP2),
                             "uses zip compression method 12")

    def test_build_on_an_allowed_global_is_refused(self):
        # GLOBAL torch._utils _rebuild_tensor_v2; EMPTY_DICT ... ; BUILD: would set
        # attributes of the reader's function for the whole process
        pkl = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n}X\x0c\x00\x00\x00__defaults__)sb.")
        p = write_checkpoint(self.path("build.pt"), {}, records={"data.pkl": pkl})
        self.assertLoadError(p, "tries to set attributes")

    def test_truncated_at_every_length(self):
        raw, _ = values_of(L.float32, 8)
        state = {"w": T(Storage("0", L.float32, raw), 0, (8,), (1,)), "b": T(Storage("1", L.int64, raw), 0, (4,), (1,))}
        with open(write_checkpoint(self.path("full.pt"), state), "rb") as f:
            data = f.read()
        for n in range(len(data)):
            with open(self.path("cut.pt"), "wb") as f:
                f.write(data[:n])
            with self.assertRaises(ValueError, msg=f"cut at {n} of {len(data)}"):
                L.load_torch(self.path("cut.pt"))

    def test_random_corruption(self):
        """Byte flips anywhere: a clean ValueError / UnsafeGlobalError or a load, never
        another exception or a crash (a flipped storage byte is just another value: stored
        records are mapped, not CRC-checked)."""
        state, _ = every_dtype_checkpoint()
        for compress in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            with open(write_checkpoint(self.path("f.pt"), state, compress=compress), "rb") as f:
                data = f.read()
            rnd = random.Random(1234 + compress)
            outcomes = collections.Counter()
            for i in range(250):
                b = bytearray(data)
                for _ in range(rnd.choice((1, 1, 2, 8))):
                    b[rnd.randrange(len(b))] = rnd.randrange(256)
                with open(self.path("fz.pt"), "wb") as f:
                    f.write(bytes(b))
                try:
                    L.load_torch(self.path("fz.pt"))
                    outcomes["ok"] += 1
                except (ValueError, L.UnsafeGlobalError) as e:
                    self.assertIn("load_torch: '", str(e))
                    outcomes[type(e).__name__] += 1
            self.assertGreater(outcomes["ValueError"], 0, outcomes)


class TestPickleTensors(unittest.TestCase):
    def test_no_torch_run_has_no_torch(self):
        if os.environ.get("LIBOPS_TEST_NO_TORCH"):
            self.assertIsNone(torch)
            with self.assertRaises(ImportError):
                import torch as _  # noqa: F401
        self.assertNotIn("torch", [m.split(".")[0] for m in sys.modules if sys.modules[m] is not None]
                         if torch is None else [])

    def test_every_dtype_and_shape(self):
        for dt in ALL_DTYPES:
            for shape in ((), (0,), (3, 0, 2), (5,), (2, 3, 4)):
                n = int(np.prod(shape)) if shape else 1
                raw, a = values_of(dt, n)
                t = L._C._tensor_from_buffer(bytearray(raw), 0, len(raw), dt).view(list(shape))
                for proto in (2, 4, 5):
                    u = pickle.loads(pickle.dumps(t, protocol=proto))
                    self.assertIs(type(u), L.Tensor)
                    self.assertEqual((u.dtype, u.shape), (dt, shape))
                    np.testing.assert_array_equal(np_of(u), a.reshape(shape))
                for u in (copy.deepcopy(t), copy.copy(t)):
                    np.testing.assert_array_equal(np_of(u), a.reshape(shape))

    def test_views_pickle_as_their_values(self):
        base = L.arange(24, dtype=L.float32).view([4, 6])
        v = base.t()[1:4, ::2]
        data = pickle.dumps(v)
        self.assertLess(len(data), 200)  # its 6 values, not the 24 of the storage
        u = pickle.loads(data)
        self.assertTrue(u.is_contiguous())
        np.testing.assert_array_equal(u.numpy(), v.numpy())
        u[0, 0] = -1.0
        self.assertNotEqual(v[0, 0].item(), -1.0)

    def test_requires_grad_grad_and_leaves(self):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        u = pickle.loads(pickle.dumps(x))
        self.assertTrue(u.requires_grad and u.is_leaf)
        self.assertIsNone(u.grad)  # gradients are not pickled (as torch)
        d = copy.deepcopy(x)
        self.assertTrue(d.requires_grad and d.is_leaf)
        np.testing.assert_array_equal(d.grad.numpy(), [2.0, 4.0])  # deepcopy copies .grad (as torch)
        d.grad[0] = 0.0
        self.assertEqual(x.grad[0].item(), 2.0)
        y = x * 2
        u = pickle.loads(pickle.dumps(y))  # a non-leaf pickles as a leaf requiring grad
        self.assertTrue(u.requires_grad and u.is_leaf)
        np.testing.assert_array_equal(u.detach().numpy(), [2.0, 4.0])
        with self.assertRaisesRegex(RuntimeError, "graph leaves"):
            copy.deepcopy(y)
        # memo: one tensor twice stays one tensor; views of one storage stay views of one
        # (new) storage, with their strides and offsets, as in torch
        a, b = copy.deepcopy([x, x])
        self.assertIs(a, b)
        base = L.arange(12, dtype=L.float32).view([3, 4])
        b2, t2, n2 = copy.deepcopy([base, base.t(), base[1:, 2:]])
        self.assertEqual((t2.stride(), n2.stride(), n2.storage_offset()), ((1, 4), (4, 1), 6))
        b2[2, 3] = 100.0
        self.assertEqual((t2[3, 2].item(), n2[1, 1].item(), base[2, 3].item()), (100.0, 100.0, 11.0))
        lone = copy.deepcopy(base[1])
        self.assertEqual((lone.storage_offset(), lone.tolist()), (4, [4.0, 5.0, 6.0, 7.0]))

    def test_copy_shares_the_storage(self):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = copy.copy(x)
        self.assertIsNot(c, x)
        self.assertTrue(c.requires_grad and c.is_leaf)
        with L.no_grad():
            c[0] = 10.0
        self.assertEqual(x[0].item(), 10.0)
        p = L.nn.Parameter(L.ones(2))
        q = copy.copy(p)
        self.assertIsInstance(q, L.nn.Parameter)
        self.assertEqual(q.data_ptr(), p.data_ptr())

    def test_parameter(self):
        p = L.nn.Parameter(L.randn(3, 2))
        for u in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
            self.assertIsInstance(u, L.nn.Parameter)
            self.assertTrue(u.requires_grad)
            self.assertNotEqual(u.data_ptr(), p.data_ptr())
            np.testing.assert_array_equal(u.detach().numpy(), p.detach().numpy())
        f = L.nn.Parameter(L.ones(2), requires_grad=False)
        self.assertFalse(pickle.loads(pickle.dumps(f)).requires_grad)

    def test_modules(self):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.Linear(4, 3), L.nn.BatchNorm1d(3), L.nn.ReLU(), L.nn.Linear(3, 2))
        x = L.randn(5, 4)
        net.eval()
        want = net(x).detach().numpy()
        for other in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
            other.eval()
            np.testing.assert_allclose(other(x).detach().numpy(), want, rtol=1e-6)
            for (n1, p1), (n2, p2) in zip(net.named_parameters(), other.named_parameters()):
                self.assertEqual(n1, n2)
                self.assertIsInstance(p2, L.nn.Parameter)
                self.assertNotEqual(p1.data_ptr(), p2.data_ptr())
            with L.no_grad():
                other[0].weight.fill_(0.0)
            self.assertNotEqual(float(net[0].weight.abs().sum().item()), 0.0)
        # tied weights stay tied
        a, b = L.nn.Linear(3, 3), L.nn.Linear(3, 3)
        b.weight = a.weight
        pair = copy.deepcopy(L.nn.ModuleList([a, b]))
        self.assertIs(pair[0].weight, pair[1].weight)
        pair = pickle.loads(pickle.dumps(L.nn.ModuleList([a, b])))
        self.assertIs(pair[0].weight, pair[1].weight)

    @unittest.skipUnless(_has_cuda(), "no CUDA device")
    def test_cuda_tensors_pickle_their_values(self):
        t = L.arange(6, dtype=L.float32, device="cuda:0").view([2, 3])
        data = pickle.dumps(t)
        u = pickle.loads(data)
        self.assertEqual(str(u.device), "cuda:0")
        np.testing.assert_array_equal(u.cpu().numpy(), t.cpu().numpy())
        d = copy.deepcopy(t)
        self.assertEqual(str(d.device), "cuda:0")

    @needs_torch
    def test_same_rules_as_torch(self):
        base = torch.arange(12.0).view(3, 4)
        b2, t2 = copy.deepcopy([base, base.t()])
        b2[2, 3] = 100.0
        self.assertEqual(t2[3, 2].item(), 100.0)
        self.assertEqual(copy.deepcopy(base[1]).storage_offset(), 4)
        # what torch does for the same calls (the oracle of the rules above)
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        self.assertTrue(pickle.loads(pickle.dumps(x * 2)).is_leaf)
        with self.assertRaisesRegex(RuntimeError, "graph leaves"):
            copy.deepcopy(x * 2)
        c = copy.copy(x)
        self.assertEqual(c.data_ptr(), x.data_ptr())
        self.assertTrue(c.requires_grad)


@needs_torch
class TestLoadTorchAgainstTorch(Case):
    def assertSame(self, lt, tt, name=""):
        self.assertIsInstance(lt, L.Tensor, name)
        self.assertEqual(TORCH_NAME[lt.dtype], str(tt.dtype).replace("torch.", ""), name)
        self.assertEqual(lt.shape, tuple(tt.shape), name)
        self.assertEqual(lt.stride(), tuple(tt.stride()), name)
        self.assertEqual(lt.storage_offset(), tt.storage_offset(), name)
        self.assertEqual(lt.requires_grad, tt.requires_grad, name)
        want = tt.detach().float().numpy() if tt.dtype == torch.bfloat16 else tt.detach().numpy()
        np.testing.assert_array_equal(np_of(lt), want, err_msg=name)

    @unittest.skipIf(torchvision is None, "python3-torchvision is not installed")
    def test_resnet18_state_dict(self):
        torch.manual_seed(0)
        net = torchvision.models.resnet18()
        sd = net.state_dict()
        p = self.path("resnet18.pt")
        torch.save(sd, p)
        got = L.load_torch(p)
        self.assertIsInstance(got, collections.OrderedDict)
        self.assertEqual(list(got), list(sd))
        for k, v in sd.items():
            self.assertSame(got[k], v, k)
        self.assertEqual(got._metadata, sd._metadata)
        spans = mappings_of(p)
        self.assertTrue(all(any(a <= t.data_ptr() < b for a, b in spans) for t in got.values() if t.numel()),
                        "torch's records are aligned and stored: every tensor is a view of the mapping")

    def test_shared_views_parameters_and_every_dtype(self):
        torch.manual_seed(1)
        a = torch.randn(4, 6)
        obj = {"a": a, "t": a.t(), "narrow": a[:, 1:4], "row": a[2], "strided": a[::2, ::3],
               "scalar": a[1, 1], "p": torch.nn.Parameter(torch.randn(3)),
               "frozen": torch.nn.Parameter(torch.randn(2), requires_grad=False),
               "leaf": torch.randn(2, requires_grad=True), "list": [a[0], (a[1], 3)], "size": a.shape,
               "dtype": torch.float16, "meta": {"epoch": 3, "name": "x", "b": b"\x01\x02"}}
        for i, name in enumerate(TORCH_NAME.values()):
            dt = getattr(torch, name)
            if dt == torch.bool:
                v = torch.rand(5, 3) > 0.5
            elif dt.is_floating_point:
                v = (torch.randn(5, 3) * 50).to(dt)
            else:
                v = torch.randint(-100 if dt != torch.uint8 else 0, 100, (5, 3)).to(dt)
            obj["dt_" + name] = v
            obj["dt_" + name + "_t"] = v.t()[1:]
        for zipfmt in (True, False):
            p = self.path(f"mixed{zipfmt}.pt")
            torch.save(obj, p, _use_new_zipfile_serialization=zipfmt)
            got = L.load_torch(p)
            ref = torch.load(p)
            for k, v in ref.items():
                if isinstance(v, torch.Tensor):
                    self.assertSame(got[k], v, k)
            self.assertIsInstance(got["p"], L.nn.Parameter)
            self.assertIsInstance(got["frozen"], L.nn.Parameter)
            self.assertEqual(got["size"], (4, 6))
            self.assertIs(got["dtype"], L.float16)
            self.assertEqual(got["meta"], obj["meta"])
            self.assertSame(got["list"][1][0], a[1], "list")
            # one storage as in torch: a write through one view shows in the others
            got["a"][2, 3] = 777.0
            for k, idx in (("t", (3, 2)), ("narrow", (2, 2)), ("row", (3,)), ("strided", (1, 1))):
                self.assertEqual(got[k][idx].item(), 777.0, k)

    def test_complex_is_refused_by_name(self):
        p = self.path("c.pt")
        torch.save({"z": torch.zeros(2, dtype=torch.complex64)}, p)
        self.assertLoadError(p, "complex64")

    def test_whole_module_pickles_are_refused(self):
        p = self.path("m.pt")
        torch.save(torch.nn.Linear(2, 2), p)
        msg = self.assertLoadError(p, "torch.nn.modules.linear.Linear", "not on the allow-list",
                                   exc=L.UnsafeGlobalError)
        self.assertIn("neither imported nor called", msg)

    def test_the_writer_here_matches_torch(self):
        # the hand-built files of the torch-free tests have torch.save's layout: torch
        # reads them as libops does
        state, oracle = every_dtype_checkpoint()
        p = write_checkpoint(self.path("ours.pt"), state)
        ref = torch.load(p)
        for k, v in oracle.items():
            tv = ref[k]
            got = tv.float().numpy() if tv.dtype == torch.bfloat16 else tv.numpy()
            np.testing.assert_array_equal(got, v, err_msg=k)
        ref = torch.load(write_legacy(self.path("ours_legacy.pt"), state))
        np.testing.assert_array_equal(ref["int64.t"].numpy(), oracle["int64.t"])


if __name__ == "__main__":
    unittest.main()

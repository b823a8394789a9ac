"""Tensors in files from Python: libops.save / savez / savez_compressed / load against
NumPy's np.save / np.savez / np.load both ways (every dtype they share, 0-d, empty,
non-contiguous, Fortran order, big-endian input), and save_safetensors /
load_safetensors against the safetensors format as its spec states it (read and written
here in a few lines of Python: 8-byte little-endian header length, JSON header,
data_offsets relative to the byte buffer after it) and, where python3-torch is
installed, PyTorch's bfloat16 bytes.  Zero-copy loading (views of one mapping, writes
copy-on-write), the mapping outliving the dict, and clear errors for broken files."""

import gc
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import libops as L

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libops_test_base import NP_OF, needs_torch, torch  # noqa: E402

ST_NAME = {L.bool: "BOOL", L.uint8: "U8", L.int8: "I8", L.int16: "I16", L.int32: "I32", L.int64: "I64",
           L.float16: "F16", L.bfloat16: "BF16", L.float32: "F32", L.float64: "F64"}
NP_OF_ST = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64,
            "F16": np.float16, "F32": np.float32, "F64": np.float64}
SHAPES = [(), (0,), (3, 0, 2), (5,), (2, 3, 4)]


def rng_array(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    if dtype == np.bool_:
        return r.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return r.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return r.uniform(-1e3, 1e3, size=shape).astype(dtype)


def bf16_to_f32(raw_u16):
    return (raw_u16.astype(np.uint32) << 16).view(np.float32)


def read_safetensors_by_spec(path):
    """The format as the safetensors spec states it, checked strictly: returns
    ({name: (st_dtype, shape, raw bytes)}, metadata, header length)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", {})
    spans = sorted((v["data_offsets"][0], v["data_offsets"][1]) for v in header.values())
    pos = 0
    for b, e in spans:  # the buffer is covered exactly, no holes, no overlap
        assert b == pos, (b, pos)
        pos = e
    assert pos == len(data), (pos, len(data))
    out = {}
    for name, v in header.items():
        assert set(v) == {"dtype", "shape", "data_offsets"}, v
        b, e = v["data_offsets"]
        out[name] = (v["dtype"], tuple(v["shape"]), data[b:e])
    return out, meta, n


def write_safetensors_by_spec(path, arrays, metadata=None, pad=True, order=None):
    """{name: (st_dtype, np array)} written as the spec says, in the given data order."""
    header, chunks, off = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in order or list(arrays):
        dt, a = arrays[name]
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        chunks.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    if pad:
        h += b" " * (-(8 + len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="libops_serialize_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertSame(self, t, a):
        self.assertIsInstance(t, L.Tensor)
        self.assertEqual(tuple(t.shape), a.shape)
        self.assertEqual(t.numpy().dtype, a.dtype)
        np.testing.assert_array_equal(t.numpy(), a)


class TestNpy(Base):
    def test_libops_files_load_in_numpy(self):
        for i, (ldt, ndt) in enumerate(NP_OF.items()):
            for shape in SHAPES:
                a = rng_array(shape, ndt, seed=i)
                L.save(self.path("x"), L.from_numpy(a))  # ".npy" appended, as np.save
                b = np.load(self.path("x.npy"))
                self.assertEqual(b.dtype, a.dtype)
                self.assertEqual(b.shape, a.shape)
                np.testing.assert_array_equal(a, b)
            # non-contiguous inputs: transposed, strided, offset
            base = rng_array((4, 6), ndt, seed=i + 50)
            for view in (base.T, base[::2, 1::3], base[1:, 2]):
                L.save(self.path("v.npy"), L.from_numpy(view))
                np.testing.assert_array_equal(np.load(self.path("v.npy")), view)

    def test_numpy_files_load_in_libops(self):
        for i, ndt in enumerate(NP_OF.values()):
            for shape in SHAPES + [(3, 4)]:
                a = rng_array(shape, ndt, seed=i)
                # (np.asfortranarray makes a 0-d array 1-d)
                fortran = np.asfortranarray(a) if a.ndim else a
                for variant in (a, fortran, a.astype(a.dtype.newbyteorder(">"))):
                    np.save(self.path("n.npy"), variant)
                    t = L.load(self.path("n.npy"))
                    np.testing.assert_array_equal(t.numpy(), a)
                    self.assertEqual(t.numpy().dtype, a.dtype)
                    self.assertEqual(tuple(t.shape), a.shape)
        f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
        np.save(self.path("f.npy"), f)
        t = L.load(self.path("f.npy"))
        self.assertEqual(t.stride(), (1, 3))  # column-major, as np.load returns it
        self.assertTrue(t.numpy().flags["F_CONTIGUOUS"])

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "NumPy has no bfloat16 dtype"):
            L.save(self.path("b.npy"), L.ones(2, dtype=L.bfloat16))
        np.save(self.path("u.npy"), np.arange(3, dtype=np.uint16))
        with self.assertRaisesRegex(RuntimeError, r"u\.npy': dtype '<u2' is not supported by libops"):
            L.load(self.path("u.npy"))
        np.save(self.path("c.npy"), np.ones(2, dtype=np.complex64))
        with self.assertRaisesRegex(RuntimeError, "complex numbers"):
            L.load(self.path("c.npy"))
        np.save(self.path("o.npy"), np.array([{}, 1], dtype=object), allow_pickle=True)
        with self.assertRaisesRegex(RuntimeError, "Python objects"):
            L.load(self.path("o.npy"))
        np.save(self.path("t.npy"), np.arange(100.0))
        with open(self.path("t.npy"), "r+b") as f:
            f.truncate(300)
        with self.assertRaisesRegex(RuntimeError, r"t\.npy': the data is truncated: shape \[100\] of <f8 needs 800"):
            L.load(self.path("t.npy"))
        with open(self.path("p.pkl"), "wb") as f:
            f.write(b"\x80\x04K\x01.")
        with self.assertRaisesRegex(ValueError, "neither a .npy nor a .npz"):
            L.load(self.path("p.pkl"))
        with self.assertRaises(TypeError):
            L.save(self.path("l.npy"), [1, 2])


class TestNpz(Base):
    def arrays(self):
        return {f"a{i}": rng_array(SHAPES[i % len(SHAPES)], ndt, seed=i) for i, ndt in enumerate(NP_OF.values())}

    def test_both_ways(self):
        arrays = self.arrays()
        tensors = {k: L.from_numpy(v) for k, v in arrays.items()}
        for saver in (L.savez, L.savez_compressed):
            saver(self.path("l"), L.from_numpy(arrays["a0"]), **tensors)
            with np.load(self.path("l.npz")) as z:
                self.assertEqual(sorted(z.files), sorted(["arr_0"] + list(arrays)))
                np.testing.assert_array_equal(z["arr_0"], arrays["a0"])
                for k, v in arrays.items():
                    self.assertEqual(z[k].dtype, v.dtype)
                    np.testing.assert_array_equal(z[k], v)
        for saver in (np.savez, np.savez_compressed):
            saver(self.path("n.npz"), *arrays.values(), f=np.asfortranarray(np.ones((2, 3))))
            d = L.load(self.path("n.npz"))
            self.assertEqual(sorted(d), sorted([f"arr_{i}" for i in range(len(arrays))] + ["f"]))
            with np.load(self.path("n.npz")) as z:
                self.assertEqual(list(d), [f[:-4] if f.endswith(".npy") else f for f in z.files])  # the zip's order
            for i, v in enumerate(arrays.values()):
                self.assertSame(d[f"arr_{i}"], v)
        np.savez(self.path("e.npz"))
        self.assertEqual(L.load(self.path("e.npz")), {})
        L.savez(self.path("e2.npz"))
        self.assertEqual(len(np.load(self.path("e2.npz")).files), 0)

    def test_errors(self):
        with open(self.path("z.npz"), "wb") as f:
            f.write(b"PK\x03\x04 not really a zip")
        with self.assertRaisesRegex(RuntimeError, r"z\.npz': cannot open as a zip archive"):
            L.load(self.path("z.npz"))
        with self.assertRaisesRegex(ValueError, "Cannot use un-named variables and keyword arr_0"):
            L.savez(self.path("k.npz"), L.ones(1), arr_0=L.ones(1))


class TestSafetensors(Base):
    def tensors(self):
        out = {}
        for i, (ldt, ndt) in enumerate(NP_OF.items()):
            for j, shape in enumerate(SHAPES):
                out[f"{np.dtype(ndt).name}.{j}"] = L.from_numpy(rng_array(shape, ndt, seed=10 * i + j))
            base = L.from_numpy(rng_array((3, 5), ndt, seed=i + 99))
            out[f"{np.dtype(ndt).name}.t"] = base.t()
            out[f"{np.dtype(ndt).name}.s"] = base[:, 1::2]
        out["bf16"] = L.from_numpy(rng_array((4, 3), np.float32, seed=7)).to(L.bfloat16)
        out["bf16.0d"] = L.tensor(2.5, dtype=L.bfloat16)
        return out

    def test_format_by_the_spec(self):
        tensors = self.tensors()
        meta = {"format": "pt", "unicode": "é ✓", "quote": 'a"b\\c\n'}
        L.save_safetensors(tensors, self.path("m.safetensors"), metadata=meta)
        got, gmeta, n = read_safetensors_by_spec(self.path("m.safetensors"))
        self.assertEqual(gmeta, meta)
        self.assertEqual((8 + n) % 8, 0)
        self.assertEqual(set(got), set(tensors))
        for name, t in tensors.items():
            dt, shape, raw = got[name]
            self.assertEqual(dt, ST_NAME[t.dtype])
            self.assertEqual(shape, tuple(t.shape))
            if dt == "BF16":
                vals = bf16_to_f32(np.frombuffer(raw, dtype="<u2")).reshape(shape)
                np.testing.assert_array_equal(vals, t.float().numpy())
            else:
                np.testing.assert_array_equal(np.frombuffer(raw, dtype=NP_OF_ST[dt]).reshape(shape), t.numpy())

    def test_round_trip_and_zero_copy(self):
        tensors = self.tensors()
        L.save_safetensors(tensors, self.path("r.safetensors"), metadata={"k": "v"})
        d, meta = L.load_safetensors(self.path("r.safetensors"), with_metadata=True)
        self.assertEqual(meta, {"k": "v"})
        self.assertEqual(set(d), set(tensors))
        for name, t in tensors.items():
            self.assertEqual(d[name].dtype, t.dtype)
            np.testing.assert_array_equal(d[name].float().numpy(), t.float().numpy())
        # views of one mapping: in file order, each tensor starts where the last ended
        items = [v for v in d.values() if v.numel() > 0]
        for a, b in zip(items, items[1:]):
            self.assertEqual(a.data_ptr() + a.numel() * a.element_size(), b.data_ptr())
        # the mapping outlives the dict; writes are copy-on-write (the file keeps its bytes)
        w = d["float32.4"]
        expect = tensors["float32.4"].numpy().copy()
        del d, items, a, b
        gc.collect()
        np.testing.assert_array_equal(w.numpy(), expect)
        w.zero_()
        self.assertEqual(float(w.abs().sum()), 0.0)
        again = L.load_safetensors(self.path("r.safetensors"))
        np.testing.assert_array_equal(again["float32.4"].numpy(), expect)
        # bytes in memory load the same (copies)
        with open(self.path("r.safetensors"), "rb") as f:
            fromb = L.load_safetensors(f.read())
        np.testing.assert_array_equal(fromb["int64.4"].numpy(), tensors["int64.4"].numpy())
        # saving over the file its tensors are mapped from: the new file is renamed into
        # place, the old mapping keeps the old inode's bytes
        again["float32.4"].mul_(2)
        L.save_safetensors(again, self.path("r.safetensors"))
        np.testing.assert_array_equal(again["float32.4"].numpy(), expect * 2)
        np.testing.assert_array_equal(L.load_safetensors(self.path("r.safetensors"))["float32.4"].numpy(), expect * 2)
        self.assertEqual(os.listdir(self.dir), ["r.safetensors"])  # no temporary file left

    def test_files_written_by_the_spec(self):
        arrays = {"w": ("F32", rng_array((3, 4), np.float32)), "b": ("I64", rng_array((5,), np.int64)),
                  "m": ("BOOL", rng_array((2, 2), np.bool_)), "h": ("F16", rng_array((7,), np.float16))}
        # unpadded header (tensors not aligned: loaded as copies), data in any order
        for pad in (True, False):
            write_safetensors_by_spec(self.path("s.safetensors"), arrays, {"a": "b"}, pad=pad,
                                      order=["m", "w", "h", "b"])
            d, meta = L.load_safetensors(self.path("s.safetensors"), with_metadata=True)
            self.assertEqual(meta, {"a": "b"})
            self.assertEqual(list(d), ["m", "w", "h", "b"])
            for k, (_, a) in arrays.items():
                self.assertSame(d[k], a)

    def test_broken_files(self):
        good = {"x": ("F32", np.ones((2, 2), np.float32))}
        write_safetensors_by_spec(self.path("g.safetensors"), good)
        with open(self.path("g.safetensors"), "rb") as f:
            blob = f.read()
        (n,) = struct.unpack("<Q", blob[:8])
        header = blob[8:8 + n]
        cases = [
            (blob[:5], "fewer than the 8 of the header length"),
            (struct.pack("<Q", 1 << 20) + blob[8:], "runs past the end of the file"),
            (blob[:8] + header.replace(b"}}", b",}}", 1)[:n] + blob[8 + n:], "not valid JSON"),
            (blob[:-4], r"lie outside the data buffer of 12 bytes"),
            (blob + b"\0" * 4, "4 bytes after the last tensor's data"),
            (blob[:8] + header.replace(b"F32", b"F99") + blob[8 + n:], "tensor 'x': unknown dtype 'F99'"),
            (blob[:8] + header.replace(b"[2, 2]", b"[2, 3]") + blob[8 + n:], "hold 16 bytes but shape"),
        ]
        for i, (data, msg) in enumerate(cases):
            p = self.path(f"b{i}.safetensors")
            with open(p, "wb") as f:
                f.write(data)
            with self.assertRaisesRegex(RuntimeError, msg) as cm:
                L.load_safetensors(p)
            self.assertIn(p, str(cm.exception))
        with self.assertRaisesRegex(RuntimeError, "cannot open"):
            L.load_safetensors(self.path("missing.safetensors"))
        with self.assertRaises(TypeError):
            L.save_safetensors({"a": np.ones(2)}, self.path("x.safetensors"))
        with self.assertRaises(TypeError):
            L.save_safetensors({"a": L.ones(2)}, self.path("x.safetensors"), metadata={"k": 1})

    @needs_torch
    def test_bfloat16_bytes_match_torch(self):
        vals = rng_array((5, 3), np.float32, seed=3)
        tt = torch.from_numpy(vals).to(torch.bfloat16)
        L.save_safetensors({"w": L.from_numpy(vals).to(L.bfloat16)}, self.path("bf.safetensors"))
        got, _, _ = read_safetensors_by_spec(self.path("bf.safetensors"))
        self.assertEqual(got["w"][0], "BF16")
        self.assertEqual(got["w"][2], tt.view(torch.int16).numpy().tobytes())
        # and torch's bytes written by the spec load as the same values
        write_safetensors_by_spec(self.path("tb.safetensors"),
                                  {"w": ("BF16", tt.view(torch.int16).numpy())})
        t = L.load_safetensors(self.path("tb.safetensors"))["w"]
        self.assertEqual(t.dtype, L.bfloat16)
        np.testing.assert_array_equal(t.float().numpy(), tt.float().numpy())

    @needs_torch
    def test_torch_checkpoint_conversion_example(self):
        """examples/torch_to_safetensors.py on a torch.save'd state dict loads in libops."""
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
        state = dict(net.state_dict())
        state["half"] = torch.randn(3, 2).to(torch.bfloat16)
        state["mask"] = torch.tensor([True, False, True])
        torch.save(state, self.path("ckpt.pt"))
        example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "torch_to_safetensors.py")
        subprocess.run([sys.executable, example, self.path("ckpt.pt"), self.path("ckpt.safetensors")],
                       check=True, capture_output=True)
        d, meta = L.load_safetensors(self.path("ckpt.safetensors"), with_metadata=True)
        self.assertEqual(meta, {"format": "pt"})
        self.assertEqual(set(d), set(state))
        for k, v in state.items():
            self.assertEqual(str(d[k].dtype).split(".")[-1], str(v.dtype).split(".")[-1], k)
            np.testing.assert_array_equal(d[k].float().numpy() if v.dtype == torch.bfloat16 else d[k].numpy(),
                                          v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy())


if __name__ == "__main__":
    unittest.main()

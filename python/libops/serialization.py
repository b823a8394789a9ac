"""Tensors in files: safetensors (as the safetensors package's torch API) and NumPy's
.npy / .npz (as np.save / np.savez / np.load).  The C side is include/libops/ops_serialize.h;
docs/serialization.md has the formats, the zero-copy rules and what is validated.

Paths are str or os.PathLike; file objects are not taken (the formats are read by
mapping or by libzip, which need a file name)."""

import os as _os

from . import _C

__all__ = ["save_safetensors", "load_safetensors", "save", "savez", "savez_compressed", "load"]


def save_safetensors(tensors, filename, metadata=None):
    """Write ``{name: Tensor}`` (any dtype, device or layout; saved as contiguous CPU
    values) and an optional ``{str: str}`` metadata map to a safetensors file, as
    ``safetensors.torch.save_file(tensors, filename, metadata)`` does."""
    _C._safetensors_save(filename, tensors, metadata)


def load_safetensors(filename, *, with_metadata=False):
    """``{name: Tensor}`` of a safetensors file (or of a ``bytes`` object holding one),
    in the order of their data in the file.  A file is mapped, not read: the tensors are
    views of the mapping (copy-on-write: writing into one changes this process's copy,
    never the file), and it stays mapped while any of them lives.  With
    ``with_metadata=True``, returns ``(tensors, metadata)``."""
    tensors, metadata = _C._safetensors_load(filename)
    return (tensors, metadata) if with_metadata else tensors


def _with_suffix(file, suffix):
    file = _os.fspath(file)
    if isinstance(file, bytes):
        return file if file.endswith(suffix.encode()) else file + suffix.encode()
    return file if file.endswith(suffix) else file + suffix


def save(file, arr):
    """np.save: write one Tensor as a .npy file (".npy" appended to a name without it)."""
    _C._npy_save(_with_suffix(file, ".npy"), arr)


def _savez(file, args, kwds, compress):
    tensors = {}
    for i, a in enumerate(args):
        tensors[f"arr_{i}"] = a
    for k, v in kwds.items():
        if k in tensors:
            raise ValueError(f"Cannot use un-named variables and keyword {k}")
        tensors[k] = v
    _C._npz_save(_with_suffix(file, ".npz"), tensors, compress)


def savez(file, *args, **kwds):
    """np.savez: Tensors as members of an uncompressed .npz (positional ones named
    arr_0, arr_1, ...; ".npz" appended to a name without it)."""
    _savez(file, args, kwds, False)


def savez_compressed(file, *args, **kwds):
    """np.savez_compressed: as savez, with deflated members."""
    _savez(file, args, kwds, True)


def load(file):
    """np.load: a Tensor for a .npy file, a ``{name: Tensor}`` dict for a .npz (the file
    kind is told by its first bytes, as NumPy does).  Pickled objects are never loaded."""
    path = _os.fspath(file)
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic == b"\x93NUMPY":
        return _C._npy_load(path)
    if magic[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _C._npz_load(path)
    raise ValueError(f"load: '{path}' is neither a .npy nor a .npz file (pickled files are not loaded)")

"""Tensors in files: safetensors (as the safetensors package's torch API) and NumPy's
.npy / .npz (as np.save / np.savez / np.load).  The C side is include/libops/ops_serialize.h;
docs/serialization.md has the formats, the zero-copy rules and what is validated.

Paths are str or os.PathLike; file objects are not taken (the formats are read by
mapping or by libzip, which need a file name)."""

import os as _os

from . import _C

from .torch_format import UnsafeGlobalError, is_torch_checkpoint, load_torch

__all__ = ["save_safetensors", "load_safetensors", "save", "savez", "savez_compressed", "load", "load_torch",
           "UnsafeGlobalError"]


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
    kind is told by its first bytes, as NumPy does); a torch.save checkpoint (a zip with
    a data.pkl record, or the legacy stream) is read by ``load_torch``.  Other pickles
    are never loaded."""
    path = _os.fspath(file)
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic == b"\x93NUMPY":
        return _C._npy_load(path)
    if is_torch_checkpoint(path):
        return load_torch(path)
    if magic[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _C._npz_load(path)
    raise ValueError(f"load: '{path}' is neither a .npy nor a .npz file, nor a torch.save checkpoint "
                     f"(other pickles are not loaded)")


# ---- pickling libops tensors (Tensor.__reduce_ex__ / __copy__ / __deepcopy__ call these) ----

def _rebuild_tensor(data, dtype, shape, requires_grad, device="cpu", cls=None, state=None):
    """The inverse of _reduce_tensor: a contiguous tensor of ``data`` (native bytes);
    ``dtype`` is the dtype's name ("float32")."""
    dt = getattr(_C, dtype, None) if isinstance(dtype, str) else None
    if not isinstance(dt, _C.dtype):
        raise ValueError(f"libops tensor pickle: unknown dtype {dtype!r:.60}")
    t = _C._tensor_from_buffer(data, 0, len(data), dt).view(list(shape))
    if device != "cpu":
        t = t.to(device)
    if cls is not None:
        t = _C._make_subclass(cls, t, requires_grad)
    elif requires_grad:
        t.requires_grad_(True)
    if state:
        for k, v in state.items():
            setattr(t, k, v)
    return t


def _reduce_tensor(t, proto):
    """pickle: dtype, shape, the contiguous CPU values and requires_grad (a view pickles as
    its values; a CUDA tensor as its CPU values with the device recorded, rebuilt there).
    Subclasses (nn.Parameter) keep their class and __dict__.  Not saved, as in torch: the
    gradient, hooks and the autograd graph (a non-leaf comes back as a leaf)."""
    c = t.detach()
    data = _C._tensor_to_bytes(c.cpu().contiguous())
    cls = None if type(t) is _C.Tensor else type(t)
    state = dict(t.__dict__) if getattr(t, "__dict__", None) else None
    # the dtype by name: pickling the dtype object would make pickle search every module
    # for the name (whichmodule), slowly and with NumPy's deprecation warnings
    dtname = str(t.dtype).rsplit(".", 1)[-1]
    return (_rebuild_tensor, (data, dtname, tuple(t.shape), t.requires_grad, str(t.device), cls, state))


def _copy_tensor(t):
    """copy.copy: as in torch, a new tensor object sharing t's storage (and its class and
    requires_grad); values are not copied."""
    c = t.detach()
    if type(t) is not _C.Tensor:
        c = _C._make_subclass(type(t), c, t.requires_grad)
        if getattr(t, "__dict__", None):
            c.__dict__.update(t.__dict__)
    elif t.requires_grad:
        c.requires_grad_(True)
    return c


def _deepcopy_tensor(t, memo):
    """copy.deepcopy: as torch, a leaf over a copy of t's whole storage with t's size,
    strides and offset (tensors that were views of one storage stay views of one new
    storage, through memo), the class, requires_grad, a deep copy of .grad and of
    __dict__.  As in torch, non-leaf tensors are refused."""
    import copy

    if id(t) in memo:
        return memo[id(t)]
    if not t.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment")
    addr, nbytes = _C._storage_span(t)
    key = ("libops.storage", str(t.device), addr)
    base = memo.get(key)
    if base is None or base.dtype != t.dtype:
        d = t.detach()
        base = d.as_strided([nbytes // d.element_size()], [1], 0).clone()
        memo[key] = base
        # the original storage must outlive the memo, or its address could be reused
        memo.setdefault(id(memo), []).append(d)
    c = base.as_strided(list(t.shape), list(t.stride()), t.storage_offset())
    if type(t) is not _C.Tensor:
        c = _C._make_subclass(type(t), c, t.requires_grad)
    elif t.requires_grad:
        c.requires_grad_(True)
    memo[id(t)] = c
    if t.grad is not None:
        c.grad = copy.deepcopy(t.grad, memo)
    if getattr(t, "__dict__", None):
        for k, v in t.__dict__.items():
            setattr(c, k, copy.deepcopy(v, memo))
    return c

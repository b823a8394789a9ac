"""Reading PyTorch checkpoints (``torch.save`` files) without PyTorch: ``load_torch``.

A checkpoint is untrusted input.  Its objects are a pickle, and unpickling calls whatever
the pickle names; here the pickle is read by the standard library's Unpickler with
``find_class`` restricted to an allow-list (PyTorch's tensor and parameter rebuild
functions, its storage classes and dtypes, ``collections.OrderedDict``, ``torch.Size``,
``torch.device``, ``set``/``frozenset`` and ``_codecs.encode`` for protocol-2 bytes):
PyTorch itself is never imported, and any other global is refused by name before it is
imported or called.  Storages come from ``persistent_load`` and are read from the
archive, one libops storage per storage key, so tensors that shared a storage when saved
share one again (views keep their offsets and strides).  docs/serialization.md has the
format, the zero-copy rules and what is refused.

Two layouts are read: the zip archive ``torch.save`` writes since PyTorch 1.6
(``<name>/data.pkl``, ``<name>/data/<key>`` raw storages, ``<name>/version``,
``<name>/byteorder`` since 2.0) and the older non-zip stream
(``_use_new_zipfile_serialization=False``).
"""

import collections as _collections
import mmap as _mmap
import os as _os
import pickle as _pickle
import re as _re
import struct as _struct
import sys as _sys
import zipfile as _zipfile
import zlib as _zlib

from . import _C

__all__ = ["load_torch", "UnsafeGlobalError", "is_torch_checkpoint"]


class UnsafeGlobalError(_pickle.UnpicklingError):
    """A checkpoint's pickle names a global outside the allow-list (never imported or called)."""


class _FormatError(ValueError):
    """A checkpoint that is broken or holds what libops cannot represent."""


# torch's typed storage classes -> libops dtype (numel in the persistent id is in elements)
_STORAGE_DTYPE = {
    "DoubleStorage": _C.float64, "FloatStorage": _C.float32, "HalfStorage": _C.float16,
    "BFloat16Storage": _C.bfloat16, "LongStorage": _C.int64, "IntStorage": _C.int32,
    "ShortStorage": _C.int16, "CharStorage": _C.int8, "ByteStorage": _C.uint8,
    "BoolStorage": _C.bool,
}
# the torch.<name> dtype globals a pickle may hold (in metadata, or naming a storage's dtype)
_DTYPE_NAMES = {
    "float64": _C.float64, "double": _C.float64, "float32": _C.float32, "float": _C.float32,
    "float16": _C.float16, "half": _C.float16, "bfloat16": _C.bfloat16, "int64": _C.int64,
    "long": _C.int64, "int32": _C.int32, "int": _C.int32, "int16": _C.int16, "short": _C.int16,
    "int8": _C.int8, "uint8": _C.uint8, "bool": _C.bool,
}
# what libops has no dtype for: refused by name, with what it is
_UNSUPPORTED = {
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
    "ComplexHalfStorage": "complex32", "QInt8Storage": "qint8", "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
    "complex64": "complex64", "cfloat": "complex64", "complex128": "complex128",
    "cdouble": "complex128", "complex32": "complex32", "chalf": "complex32", "qint8": "qint8",
    "quint8": "quint8", "qint32": "qint32", "quint4x2": "quint4x2", "uint16": "uint16",
    "uint32": "uint32", "uint64": "uint64", "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
}
_MAX_DIMS = 16
# the first objects of a non-zip (legacy) torch.save stream: protocol 2, LONG1 of 10 bytes
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PREFIX = b"\x80\x02\x8a\x0a" + _LEGACY_MAGIC.to_bytes(10, "little")


class _Allowed:
    """An allow-listed global: callable, and immune to the pickle's BUILD opcode (which
    would otherwise let a file set attributes on our functions for the whole process)."""

    __slots__ = ("name", "fn")

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)

    def __setstate__(self, state):
        raise _FormatError(f"the pickle tries to set attributes of the global {self.name}")

    def __repr__(self):
        return f"<allowed global {self.name}>"


class _StorageType:
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    def __setstate__(self, state):
        raise _FormatError(f"the pickle tries to set attributes of torch.{self.name}")


class _Storage:
    """One storage key of the checkpoint: a 1-d libops tensor of all its elements."""

    __slots__ = ("key", "dtype", "base", "numel")

    def __init__(self, key, dtype, base):
        self.key = key
        self.dtype = dtype
        self.base = base
        self.numel = base.numel()

    def __setstate__(self, state):
        raise _FormatError("the pickle tries to set attributes of a storage")


def _check_ints(what, v, n=None):
    if isinstance(v, list):
        v = tuple(v)
    if not isinstance(v, tuple) or not all(type(x) is int for x in v):
        raise _FormatError(f"{what} must be a tuple of ints, got {v!r:.200}")
    if n is not None and len(v) != n:
        raise _FormatError(f"{what} has {len(v)} entries, the size has {n}")
    if len(v) > _MAX_DIMS:
        raise _FormatError(f"{what} has {len(v)} dimensions, libops allows at most {_MAX_DIMS}")
    if any(x < 0 for x in v):
        raise _FormatError(f"{what} {v} has a negative entry")
    if any(x >= 1 << 62 for x in v):
        raise _FormatError(f"{what} {v} has an entry over 2**62")
    return v


def _rebuild(storage, storage_offset, size, stride, requires_grad=False):
    if not isinstance(storage, _Storage):
        raise _FormatError(f"a tensor's storage must be a storage of the archive, got {type(storage).__name__}")
    if type(storage_offset) is not int or storage_offset < 0:
        raise _FormatError(f"storage offset must be a non-negative int, got {storage_offset!r:.100}")
    size = _check_ints("tensor size", size)
    stride = _check_ints(f"stride of a tensor of size {list(size)}", stride, len(size))
    numel = 1
    for s in size:
        numel *= s
    if numel >= 1 << 62:
        raise _FormatError(f"a tensor of size {list(size)} has more than 2**62 elements")
    if numel == 0:
        last = storage_offset  # an empty tensor touches nothing; it may sit at the end
        if last > storage.numel:
            raise _FormatError(f"a tensor of size {list(size)} starts at element {storage_offset}, past the end "
                               f"of storage '{storage.key}' ({storage.numel} elements)")
    else:
        last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride))
        if last >= storage.numel:
            raise _FormatError(f"a tensor of size {list(size)}, stride {list(stride)} at offset {storage_offset} "
                               f"reaches element {last} of storage '{storage.key}', which has {storage.numel} "
                               f"elements of {storage.dtype}")
    t = storage.base.as_strided(list(size), list(stride), storage_offset)
    if requires_grad is not False:
        if requires_grad is not True:
            raise _FormatError(f"requires_grad must be a bool, got {requires_grad!r:.100}")
        t.requires_grad_(True)
    return t


def _no_hooks(hooks):
    # hooks are functions: a non-empty dict could only hold allow-listed globals
    if hooks is not None and (not isinstance(hooks, dict) or len(hooks)):
        raise _FormatError("tensors with backward hooks are not supported")


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    _no_hooks(backward_hooks)
    if metadata:  # torch >= 2.0 adds tensor flags here; what they change is not applied
        raise _FormatError(f"tensor metadata {metadata!r:.100} is not supported")
    return _rebuild(storage, storage_offset, size, stride, requires_grad)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    from .nn import Parameter

    _no_hooks(backward_hooks)
    if state:
        raise _FormatError("parameters with extra Python state are not supported")
    if not isinstance(data, _C.Tensor):
        raise _FormatError(f"a parameter's data must be a tensor, got {type(data).__name__}")
    if type(requires_grad) is not bool:
        raise _FormatError(f"requires_grad must be a bool, got {requires_grad!r:.100}")
    return Parameter(data, requires_grad)


_TENSOR_TYPES = {}  # filled below: the torch.Tensor / torch.nn.Parameter markers


def _rebuild_from_type_v2(func, new_type, args, state):
    # torch's path for tensors with Python state or of subclasses; only plain tensors and
    # parameters without state are read
    if state:
        raise _FormatError("tensors with extra Python state are not supported")
    if not isinstance(func, _Allowed) or not isinstance(args, tuple):
        raise _FormatError("_rebuild_from_type_v2 with an unexpected function")
    if new_type is not _TENSOR_TYPES["Tensor"] and new_type is not _TENSOR_TYPES["Parameter"]:
        raise _FormatError("_rebuild_from_type_v2 of a type other than torch.Tensor or torch.nn.Parameter")
    t = func(*args)
    if not isinstance(t, _C.Tensor):
        raise _FormatError("_rebuild_from_type_v2 did not build a tensor")
    if new_type is _TENSOR_TYPES["Parameter"]:
        from .nn import Parameter

        return t if isinstance(t, Parameter) else Parameter(t, t.requires_grad)
    return t


def _size(*args):
    if len(args) > 1 or (args and not isinstance(args[0], (tuple, list))):
        raise _FormatError("torch.Size takes one tuple of ints")
    return _check_ints("torch.Size", args[0] if args else ())


def _device(*args):
    if not args or not isinstance(args[0], str) or len(args) > 2 or (len(args) == 2 and type(args[1]) is not int):
        raise _FormatError(f"torch.device{args!r:.100}: expected a device string")
    return args[0] if len(args) == 1 else f"{args[0]}:{args[1]}"


def _codecs_encode(obj, encoding="utf-8"):
    # protocol 2 writes bytes as _codecs.encode(str, 'latin1')
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise _FormatError("_codecs.encode is only read for protocol 2 bytes (a str and 'latin1')")
    return obj.encode("latin1")


def _allowed_globals():
    g = {}
    for name, fn in (("_rebuild_tensor_v2", _rebuild_tensor_v2), ("_rebuild_tensor", _rebuild_tensor),
                     ("_rebuild_parameter", _rebuild_parameter),
                     ("_rebuild_parameter_with_state", _rebuild_parameter)):
        g[("torch._utils", name)] = _Allowed("torch._utils." + name, fn)
    g[("torch._tensor", "_rebuild_from_type_v2")] = _Allowed("torch._tensor._rebuild_from_type_v2",
                                                             _rebuild_from_type_v2)
    for name, dt in _STORAGE_DTYPE.items():
        g[("torch", name)] = _StorageType(name, dt)
    for mod in ("torch", "torch.storage"):
        g[(mod, "UntypedStorage")] = _StorageType("UntypedStorage", _C.uint8)
    for name, dt in _DTYPE_NAMES.items():
        g[("torch", name)] = dt
    for key in (("torch", "Tensor"), ("torch._tensor", "Tensor")):
        g[key] = _TENSOR_TYPES.setdefault("Tensor", _StorageType("Tensor", None))
    for key in (("torch.nn.parameter", "Parameter"), ("torch.nn", "Parameter")):
        g[key] = _TENSOR_TYPES.setdefault("Parameter", _StorageType("Parameter", None))
    g[("collections", "OrderedDict")] = _collections.OrderedDict
    g[("torch", "Size")] = _Allowed("torch.Size", _size)
    g[("torch", "device")] = _Allowed("torch.device", _device)
    g[("builtins", "set")] = set
    g[("builtins", "frozenset")] = frozenset
    g[("_codecs", "encode")] = _Allowed("_codecs.encode", _codecs_encode)
    return g


_ALLOWED = _allowed_globals()
ALLOWED_GLOBALS = tuple(sorted(f"{m}.{n}" for m, n in _ALLOWED))


class _Unpickler(_pickle.Unpickler):
    def __init__(self, file, load_storage):
        super().__init__(file, encoding="utf-8")
        self._load_storage = load_storage
        self._storages = {}

    def find_class(self, module, name):
        g = _ALLOWED.get((module, name))
        if g is not None:
            return g
        if module == "torch" and name in _UNSUPPORTED:
            raise _FormatError(f"it holds a tensor of dtype {_UNSUPPORTED[name]} (torch.{name}), which libops "
                               f"does not have")
        raise UnsafeGlobalError(
            f"the pickle names the global '{module}.{name}', which is not on the allow-list of tensors, storages "
            f"and plain containers (libops.torch_format.ALLOWED_GLOBALS); it was neither imported nor called")

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) not in (5, 6) or pid[0] != "storage":
            raise _FormatError(f"unexpected persistent id {pid!r:.100} (expected ('storage', type, key, location, "
                               f"numel))")
        _, stype, key, location, numel = pid[:5]
        if not isinstance(stype, _StorageType) or stype.dtype is None:
            raise _FormatError(f"persistent id {pid!r:.100}: {stype!r:.60} is not a storage type")
        if not isinstance(key, str) or not isinstance(location, str) or type(numel) is not int or numel < 0:
            raise _FormatError(f"persistent id {pid!r:.100}: expected a str key, a str location and an int numel")
        if len(pid) == 6 and pid[5] is not None:
            raise _FormatError(f"storage '{key}': storage views (legacy format) are not supported")
        s = self._storages.get(key)
        if s is None:
            s = _Storage(key, stype.dtype, self._load_storage(key, stype.dtype, numel))
            self._storages[key] = s
        elif s.dtype != stype.dtype or (stype.name != "UntypedStorage" and s.numel != numel):
            raise _FormatError(f"storage '{key}' is named twice, as {s.numel} elements of {s.dtype} and as "
                               f"{numel} of {stype.dtype}")
        return s


def _byteswapped(data, itemsize):
    if itemsize == 1:
        return data
    import array

    a = array.array({2: "H", 4: "I", 8: "Q"}[itemsize])
    a.frombytes(data)
    a.byteswap()
    return bytearray(a.tobytes())


def _unpickle(f, load_storage):
    try:
        return _Unpickler(f, load_storage).load()
    except (_FormatError, UnsafeGlobalError):
        raise
    except Exception as e:  # a malformed pickle: any of the Unpickler's own errors
        raise _FormatError(f"the pickle is not a valid checkpoint: {type(e).__name__}: {e}") from e


def _zip_prefix(names):
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise _FormatError("not a torch.save archive: no single '<name>/data.pkl' record"
                           if not pkl else f"several data.pkl records: {pkl[:4]}")
    prefix = pkl[0][:-len("data.pkl")]
    stray = [n for n in names if not n.startswith(prefix)]
    if stray:
        raise _FormatError(f"record '{stray[0]}' is outside the archive's folder '{prefix[:-1]}'")
    return prefix


def _data_offset(mm, info, filesize):
    """Where a stored entry's bytes start in the file (read from its local header,
    whose extra field may differ from the central directory's)."""
    h = info.header_offset
    if h < 0 or h + 30 > filesize or mm[h:h + 4] != b"PK\x03\x04":
        raise _FormatError(f"record '{info.filename}': no local header at byte {h} (file truncated?)")
    n, e = _struct.unpack_from("<HH", mm, h + 26)
    start = h + 30 + n + e
    if start + info.file_size > filesize:
        raise _FormatError(f"record '{info.filename}': its {info.file_size} bytes at byte {start} run past the "
                           f"end of the file ({filesize} bytes; truncated?)")
    return start


# what zipfile raises for broken archives and records (CRC, truncation, bad deflate data,
# encryption, unknown compression)
_ZIP_ERRORS = (_zipfile.BadZipFile, EOFError, OSError, NotImplementedError, RuntimeError, _zlib.error,
               _struct.error, ValueError)


def _check_record(info, filesize):
    """Sizes a record may claim: stored bytes lie in the file; deflate expands at most
    1032:1 (so a small file cannot make us allocate without bound); other methods (which
    torch.save never writes) are refused."""
    if info.flag_bits & 1:
        raise _FormatError(f"record '{info.filename}' is encrypted")
    if info.compress_type == _zipfile.ZIP_STORED:
        if info.file_size != info.compress_size or info.file_size > filesize:
            raise _FormatError(f"record '{info.filename}' claims {info.file_size} bytes stored in "
                               f"{info.compress_size}, in a file of {filesize} bytes (truncated?)")
    elif info.compress_type == _zipfile.ZIP_DEFLATED:
        if info.file_size > 1032 * info.compress_size + 1024 or info.compress_size > filesize:
            raise _FormatError(f"record '{info.filename}' claims {info.file_size} bytes from {info.compress_size} "
                               f"deflated, more than deflate can expand (file of {filesize} bytes)")
    else:
        raise _FormatError(f"record '{info.filename}' uses zip compression method {info.compress_type} "
                           f"(only stored and deflated records are read)")


def _load_zip(path, f):
    try:
        zf = _zipfile.ZipFile(f)
    except _ZIP_ERRORS as e:
        raise _FormatError(f"not a readable zip archive ({e}; truncated?)") from e
    names = zf.namelist()
    prefix = _zip_prefix(names)
    if len(set(names)) != len(names):
        raise _FormatError("the archive has duplicate records")
    filesize = _os.fstat(f.fileno()).st_size
    for info in zf.infolist():
        _check_record(info, filesize)

    def record(name):
        try:
            return zf.read(prefix + name)
        except KeyError:
            return None
        except _ZIP_ERRORS as e:
            raise _FormatError(f"cannot read record '{prefix + name}': {e}") from e

    byteorder = record("byteorder")
    if byteorder is None:
        byteorder = b"little"  # PyTorch before 2.0 wrote no record and only little-endian files
    if byteorder not in (b"little", b"big"):
        raise _FormatError(f"byteorder record is {byteorder[:40]!r}, expected 'little' or 'big'")
    swap = (byteorder.decode() != _sys.byteorder)
    version = record("version")
    if version is None:
        version = record(".data/version")
    if version is not None and not _re.fullmatch(rb"\s*[0-9]{1,4}\s*", version):
        raise _FormatError(f"version record is {version[:40]!r}, expected a number")

    try:
        # private and writable: tensors are writable, writes stay in this process (as
        # load_safetensors); the mapping lives while any tensor of it does
        mm = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_COPY)
    except (ValueError, OSError):
        mm = None

    def load_storage(key, dtype, numel):
        name = prefix + "data/" + key
        try:
            info = zf.getinfo(name)
        except KeyError:
            raise _FormatError(f"storage '{key}' is missing (no record '{name}')") from None
        itemsize = dtype.itemsize
        nbytes = numel * itemsize
        if info.file_size != nbytes:
            raise _FormatError(f"storage '{key}' has {info.file_size} bytes, its {numel} elements of {dtype} "
                               f"need {nbytes}")
        if mm is not None and not swap and info.compress_type == _zipfile.ZIP_STORED:
            # zero-copy: a view of the mapped bytes (copied by the C side if they are not
            # aligned to the element size; torch aligns records to 64 bytes)
            return _C._tensor_from_buffer(mm, _data_offset(mm, info, filesize), nbytes, dtype)
        buf = bytearray(nbytes)
        try:
            with zf.open(info) as m:
                view, got = memoryview(buf), 0
                while got < nbytes:
                    k = m.readinto(view[got:got + (1 << 24)])
                    if not k:
                        break
                    got += k
                if got != nbytes or m.read(1):
                    raise _FormatError(f"storage '{key}': record '{name}' holds other than {nbytes} bytes")
        except _FormatError:
            raise
        except _ZIP_ERRORS as e:
            raise _FormatError(f"storage '{key}': cannot read record '{name}': {e}") from e
        if swap:
            buf = _byteswapped(buf, itemsize)
        return _C._tensor_from_buffer(buf, 0, nbytes, dtype)

    try:
        data = zf.read(prefix + "data.pkl")
    except _ZIP_ERRORS as e:
        raise _FormatError(f"cannot read data.pkl: {e}") from e
    import io

    return _unpickle(io.BytesIO(data), load_storage)


def _load_legacy(path, f):
    """The stream torch.save wrote before 1.6: pickles of the magic number, the protocol
    version, system info and the object (storages as persistent ids), a pickle of the
    storage keys, then each storage as an int64 element count and its raw bytes."""
    def plain(what):
        try:
            return _Unpickler(f, None).load()
        except (_FormatError, UnsafeGlobalError):
            raise
        except Exception as e:
            raise _FormatError(f"bad {what}: {type(e).__name__}: {e}") from e

    if plain("magic number") != _LEGACY_MAGIC:
        raise _FormatError("bad magic number")
    if plain("protocol version") != 1001:
        raise _FormatError("unsupported legacy protocol version")
    info = plain("system info")
    if not isinstance(info, dict):
        raise _FormatError("bad system info")
    if info.get("little_endian", True) is not True:
        raise _FormatError("big-endian legacy checkpoints are not supported")
    # the storages follow the object: each key gets an empty tensor now, filled below
    wanted = {}
    filesize = _os.fstat(f.fileno()).st_size

    def empty_storage(key, dtype, numel):
        if numel * dtype.itemsize > filesize:  # checked before anything is allocated
            raise _FormatError(f"storage '{key}' of {numel} elements of {dtype} is larger than the file "
                               f"({filesize} bytes; truncated?)")
        wanted[key] = _C.empty(numel, dtype=dtype)
        return wanted[key]

    obj = _unpickle(f, empty_storage)
    keys = plain("storage key list")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys) or len(set(keys)) != len(keys):
        raise _FormatError("the storage key list is not a list of distinct str")
    if not set(wanted) <= set(keys):
        raise _FormatError(f"storages {sorted(set(wanted) - set(keys))[:4]} are missing from the key list")
    for key in keys:
        head = f.read(8)
        if len(head) != 8:
            raise _FormatError(f"storage '{key}': the file ends before its element count (truncated?)")
        (n,) = _struct.unpack("<q", head)
        base = wanted.get(key)
        if base is None:  # torch writes only the storages the object uses
            raise _FormatError(f"storage '{key}' is in the key list but used by no tensor")
        if n != base.numel():
            raise _FormatError(f"storage '{key}' has {n} elements, the object says {base.numel()}")
        nbytes = n * base.element_size()
        if f.tell() + nbytes > filesize:
            raise _FormatError(f"storage '{key}': its {nbytes} bytes run past the end of the file (truncated?)")
        buf = bytearray(nbytes)
        if f.readinto(buf) != nbytes:
            raise _FormatError(f"storage '{key}': short read (truncated?)")
        base.copy_(_C._tensor_from_buffer(buf, 0, nbytes, base.dtype))
    return obj


def is_torch_checkpoint(path):
    """Whether the file looks like a torch.save file (a zip with a data.pkl record, or
    the legacy stream's magic number)."""
    with open(_os.fspath(path), "rb") as f:
        head = f.read(len(_LEGACY_PREFIX))
        if head == _LEGACY_PREFIX:
            return True
        if head[:4] != b"PK\x03\x04":
            return False
        try:
            return any(n.endswith("/data.pkl") for n in _zipfile.ZipFile(f).namelist())
        except _ZIP_ERRORS:
            return False


def load_torch(path, map_location=None):
    """The object a ``torch.save`` file holds (a state dict: an OrderedDict of tensors;
    nested dicts, lists, tuples, ints, floats, strings), with libops tensors and
    ``libops.nn.Parameter`` for torch's parameters, read without PyTorch.

    Tensors that shared a storage in the file share one here (views keep their offsets
    and strides); a storage stored uncompressed (as torch.save writes them) is a view of
    the file mapped copy-on-write, not a copy.  Everything is loaded on the CPU
    (``map_location`` may be None or "cpu").  Anything in the pickle outside the
    allow-list raises ``UnsafeGlobalError`` naming it, without importing or calling it;
    broken files raise ``ValueError`` saying what is wrong."""
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise ValueError(f"load_torch: map_location={map_location!r}: tensors are loaded on the CPU; "
                         f"move them with .to() afterwards")
    path = _os.fspath(path)
    shown = path.decode(errors="replace") if isinstance(path, bytes) else path
    with open(path, "rb") as f:
        head = f.read(len(_LEGACY_PREFIX))
        f.seek(0)
        try:
            if head == _LEGACY_PREFIX:
                return _load_legacy(path, f)
            if head[:2] != b"PK":
                raise _FormatError("not a torch.save file (neither a zip archive nor the legacy format)")
            return _load_zip(path, f)
        except _FormatError as e:
            raise ValueError(f"load_torch: '{shown}': {e}") from e.__cause__
        except UnsafeGlobalError as e:
            raise UnsafeGlobalError(f"load_torch: '{shown}': {e}") from None

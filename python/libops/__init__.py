"""libops: tensor operators in C, declared once in YAML.

Every operator of ops/native_functions.yaml is here as libops.<name>(...) and, where the
schema has a method variant, as a method of libops.Tensor; the argument parsing and the
signature tables are generated from the schema (codegen/gen_python.py).  Tensors share
memory with NumPy both ways (libops.from_numpy, Tensor.numpy, the buffer protocol,
__array_interface__), with any DLPack producer or consumer (Tensor.__dlpack__,
Tensor.__dlpack_device__, libops.from_dlpack, libops.to_dlpack) and with other processes
(Tensor.share_memory_, Tensor.is_shared, Tensor.shm_handle, libops.from_shm_handle).
docs/python.md is the user guide.
"""

import functools as _functools

from . import _C
from ._C import *  # noqa: F401,F403  (every generated op, Tensor, the dtypes)
from ._C import Tensor, dtype, is_grad_enabled  # noqa: F401

# `import *` skips names with a leading underscore: the schema's private ops
# (_unique2, ...) are libops._name as in torch.
for _n in dir(_C):
    if _n.startswith("_") and not _n.startswith("__"):
        globals().setdefault(_n, getattr(_C, _n))
del _n

# torch's aliases of the dtype names
float = _C.float32  # noqa: A001
double = _C.float64
half = _C.float16
long = _C.int64
int = _C.int32  # noqa: A001
short = _C.int16
bool = _C.bool  # noqa: A001

import builtins as _builtins  # noqa: E402


class device:
    """A device: ``libops.device("cpu")``, ``device("cuda:1")``, ``device("cuda", 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        elif ":" in type:
            if index is not None:
                raise ValueError(f"type (string) must not include an index because index was passed explicitly: {type}")
            type, idx = type.split(":", 1)
            index = _builtins.int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None or self.type == "cpu" else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None or self.type == "cpu":
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


_C._set_device_class(device)


class _GradMode:
    """Base of no_grad / enable_grad: a context manager and a decorator."""

    _mode = True

    def __enter__(self):
        self._prev = _C._set_grad_enabled(self._mode)
        return None

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Disable gradient recording: ``with libops.no_grad(): ...`` or ``@libops.no_grad()``."""

    _mode = False


class enable_grad(_GradMode):
    """Enable gradient recording inside a no_grad region."""

    _mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)``: a call, a context manager and a decorator."""

    def __init__(self, mode):
        self._mode = _builtins.bool(mode)
        self._prev = _C._set_grad_enabled(self._mode)

    def __enter__(self):
        return None

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)
        mode = self._mode

        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class _Autograd:
    """libops.autograd: grad() and the grad-mode helpers, as in torch.autograd."""

    no_grad = no_grad
    enable_grad = enable_grad
    set_grad_enabled = set_grad_enabled

    @staticmethod
    def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
        """Gradients of outputs with respect to inputs, returned (not accumulated)."""
        return _C._autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)

    @staticmethod
    def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
        if isinstance(tensors, Tensor):
            tensors = [tensors]
            grad_tensors = [grad_tensors]
        grad_tensors = grad_tensors or [None] * len(tensors)
        for t, g in zip(tensors, grad_tensors):
            t.backward(g, retain_graph=True if retain_graph is None else retain_graph, create_graph=create_graph)


autograd = _Autograd()

# libops.nn and libops.optim (torch.nn's and torch.optim's layout); last, since they use no_grad.
from . import nn  # noqa: E402
from . import optim  # noqa: E402
# Tensors in files: safetensors, .npy, .npz (libops/serialization.py), torch.save
# checkpoints read without PyTorch (libops/torch_format.py).
from .serialization import load, load_safetensors, save, save_safetensors, savez, savez_compressed  # noqa: E402
from .serialization import UnsafeGlobalError, load_torch  # noqa: E402

__all__ = [n for n in dir(_C) if not n.startswith("_")] + [
    "device", "nn", "optim", "no_grad", "enable_grad", "set_grad_enabled", "autograd",
    "float", "double", "half", "long", "int", "short", "bool",
    "save_safetensors", "load_safetensors", "save", "savez", "savez_compressed", "load", "load_torch",
    "UnsafeGlobalError"]

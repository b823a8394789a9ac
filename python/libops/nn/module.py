"""libops.nn.Module and the containers (Sequential, ModuleList, ModuleDict), as torch.nn's.

A Module keeps its parameters, buffers and submodules in ordered dicts (``_parameters``,
``_buffers``, ``_modules``) as torch does, and also as plain instance attributes, so that
``self.weight`` in a forward is an ordinary attribute read (torch goes through
``__getattr__``): assign through attributes (``m.weight = p``), ``register_parameter``,
``register_buffer`` or ``add_module``, which keep the two in step.
"""

import copy
import itertools
from collections import OrderedDict, namedtuple

from .. import _C
from .parameter import Parameter

_Tensor = _C.Tensor


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _tensors_of(x):
    """The Tensors of a forward result: itself, or those of a tuple/list (one level)."""
    if isinstance(x, _C.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if isinstance(t, _C.Tensor)]
    return []


class _BackwardHookCall:
    """One call of a module with full backward hooks (torch's BackwardHook, over tensor
    hooks).  The inputs that require grad go into forward through an alias: one view
    for a single input, or one concatenation (then views of its pieces) for several, so
    that a single tensor hook sees every input gradient of the call at once, sums over
    the module's uses only.  The outputs go out through views whose hooks record
    grad_output.  The input hook runs the user hooks and hands back their grad_input."""

    def __init__(self, module, hooks):
        self.module = module
        self.hooks = hooks
        self.n_in = 0             # positional Tensor arguments
        self.req = []             # their positions (among them) that require grad
        self.shapes = []
        self.no_grad_like = []    # (position, shape, dtype, device) of the others
        self.grad_outputs = None
        self.n_out = 0            # outputs that require grad
        self.arrived = set()      # of them, those whose gradient this pass has seen

    def setup_inputs(self, args):
        tens = [(i, a) for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
        self.n_in = len(tens)
        req = [(k, i, a) for k, (i, a) in enumerate(tens) if a.requires_grad]
        if not req:
            return args
        # torch gives the inputs that need no gradient zeros once some input needs one
        self.no_grad_like = [(k, tuple(a.shape), a.dtype, a.device) for k, (_, a) in enumerate(tens)
                             if not a.requires_grad]
        self.req = [k for k, _, _ in req]
        self.shapes = [tuple(a.shape) for _, _, a in req]
        args = list(args)
        if len(req) == 1:
            _, i, a = req[0]
            z = a.view(a.shape)
            args[i] = z
        else:
            dtypes = {a.dtype for _, _, a in req}
            if len(dtypes) != 1:
                raise NotImplementedError("register_full_backward_hook: the module's inputs that require grad "
                                          f"must share one dtype, got {sorted(str(d) for d in dtypes)}")
            z = _C.cat([a.reshape(-1) for _, _, a in req])
            off = 0
            for (_, i, a), shp in zip(req, self.shapes):
                n = a.numel()
                args[i] = z[off:off + n].view(shp)
                off += n
        z.register_hook(self._input_hook)
        return tuple(args)

    def setup_outputs(self, result):
        outs = _tensors_of(result)
        self.grad_outputs = [None] * len(outs)
        wrapped = []
        for j, t in enumerate(outs):
            if t.requires_grad:
                t = t.view(t.shape)
                t.register_hook(self._output_hook(j))
                self.n_out += 1
            wrapped.append(t)
        if isinstance(result, _C.Tensor):
            return wrapped[0]
        if isinstance(result, (tuple, list)):
            it = iter(wrapped)
            out = [next(it) if isinstance(x, _C.Tensor) else x for x in result]
            return type(result)(out) if isinstance(result, list) else tuple(out)
        return result

    def _output_hook(self, j):
        def hook(g):
            self.grad_outputs[j] = g
            self.arrived.add(j)
            if not self.req and len(self.arrived) == self.n_out:  # no input gradient will come
                self.arrived.clear()  # (a graph kept by retain_graph runs this again)
                self._run((None,) * self.n_in)
        return hook

    def _run(self, grad_input):
        grad_output = tuple(self.grad_outputs or ())
        for hook in self.hooks:
            r = hook(self.module, grad_input, grad_output)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(r)}, "
                                       f"but expected {len(grad_input)}")
                grad_input = r
        return grad_input

    def _input_hook(self, g):
        self.arrived.clear()
        if len(self.req) == 1:
            parts = [g]
        else:
            parts, off = [], 0
            for shp in self.shapes:
                n = 1
                for d in shp:
                    n *= d
                parts.append(g[off:off + n].view(shp))
                off += n
        grad_input = [None] * self.n_in
        for k, p in zip(self.req, parts):
            grad_input[k] = p
        for k, shape, dtype, device in self.no_grad_like:
            grad_input[k] = _C.zeros(shape, dtype=dtype, device=device)
        new = self._run(tuple(grad_input))
        if all(new[k] is grad_input[k] for k in self.req):
            return None
        fixed = []
        for k, p in zip(self.req, parts):
            n = new[k]
            if n is None:
                n = _C.zeros_like(p)
            elif tuple(n.shape) != tuple(p.shape):
                raise RuntimeError(f"Backward hook of {type(self.module).__name__} returned a grad_input of shape "
                                   f"{list(n.shape)} for an input of shape {list(p.shape)}")
            fixed.append(n)
        if len(fixed) == 1:
            return fixed[0]
        return _C.cat([f.reshape(-1) for f in fixed])


class _RemovableHandle:
    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


class Module:
    """Base class of every layer; subclasses set attributes in __init__ and define forward."""

    training = True
    _version = 1

    def __init__(self):
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- calling ------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        bw = d.get("_backward_hooks")
        if not d["_forward_pre_hooks"] and not d["_forward_hooks"] and not bw:
            return self.forward(*args, **kwargs)
        for hook in list(d["_forward_pre_hooks"].values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        call = None
        if bw and _C.is_grad_enabled():
            call = _BackwardHookCall(self, list(bw.values()))
            args = call.setup_inputs(args)
        result = self.forward(*args, **kwargs)
        for hook in list(d["_forward_hooks"].values()):
            r = hook(self, args, result)
            if r is not None:
                result = r
        if call is not None:
            result = call.setup_outputs(result)
        return result

    def register_forward_pre_hook(self, hook):
        """hook(module, args) -> None or new args, run before forward."""
        h = _RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        return h

    def register_forward_hook(self, hook):
        """hook(module, args, output) -> None or a new output, run after forward."""
        h = _RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        return h

    def register_full_backward_hook(self, hook):
        """hook(module, grad_input, grad_output) -> None or a new grad_input, run when the
        gradients with respect to the module's inputs are computed (torch's semantics:
        grad_input has one entry per positional Tensor argument, None where it needs no
        gradient (zeros of its shape when another input needs one, as torch); grad_output one
        per Tensor output).  A returned tuple replaces
        grad_input for the rest of the backward pass."""
        hooks = self.__dict__.setdefault("_backward_hooks", OrderedDict())
        h = _RemovableHandle(hooks)
        hooks[h.id] = hook
        return h

    # ---- registration -------------------------------------------------------------
    def _check_name(self, name, kind, store):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if (hasattr(type(self), name) or name in self.__dict__) and name not in self.__dict__[store]:
            raise KeyError(f"attribute '{name}' already exists")

    def _forget(self, name):
        d = self.__dict__
        for store in (d["_parameters"], d["_buffers"], d["_modules"]):
            store.pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)
        d.pop(name, None)

    def register_parameter(self, name, param):
        self._check_name(name, "parameter", "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(libops.nn.Parameter or None required)")
        self._forget(name)
        self._parameters[name] = param
        self.__dict__[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_name(name, "buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, _Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(libops Tensor or None required)")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers_set.add(name)
        self.__dict__[name] = tensor

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module", "_modules")
        self._forget(name)
        self._modules[name] = module
        self.__dict__[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        if isinstance(value, Parameter):
            if "_parameters" in d and name not in d["_parameters"]:
                self._forget(name)  # a plain attribute, buffer or module of that name goes
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            d["_modules"][name] = value
            d[name] = value
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(libops.nn.Parameter or None expected)")
            d["_parameters"][name] = None
            d[name] = None
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(libops.nn.Module or None expected)")
            d["_modules"][name] = None
            d[name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, _Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(libops Tensor or None expected)")
            d["_buffers"][name] = value
            d[name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        d = self.__dict__
        if name in d.get("_parameters", ()) or name in d.get("_buffers", ()) or name in d.get("_modules", ()):
            self._forget(name)
        else:
            object.__delattr__(self, name)

    def __getattr__(self, name):
        # Only reached when the attribute is not in __dict__ (see the module docstring).
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def get_submodule(self, target):
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    # ---- iteration ----------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    # ---- state dict ---------------------------------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """name -> Tensor of every parameter and persistent buffer (detached unless keep_vars)."""
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs):
        local = [(k, v) for k, v in itertools.chain(self._parameters.items(), self._buffers.items())
                 if v is not None and k not in self._non_persistent_buffers_set]
        for name, param in local:
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            src = state_dict[key]
            if not isinstance(src, _Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected a libops Tensor from '
                                  f'checkpoint but received {type(src)}')
                continue
            if tuple(src.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {list(src.shape)} from "
                                  f"checkpoint, the shape in current model is {list(param.shape)}.")
                continue
            try:
                with _no_grad():
                    param.copy_(src)
            except Exception as ex:  # noqa: BLE001  (reported with the key, as torch does)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{list(param.shape)} and whose dimensions in the checkpoint are "
                                  f"{list(src.shape)}, an exception occurred : {ex.args}.")
        if strict:
            local_names = {k for k, _ in local}
            for key in state_dict:
                if key.startswith(prefix):
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in local_names:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True):
        """Copy the values of ``state_dict`` into the parameters and buffers (in place).

        With strict (the default), a key missing from state_dict or one the module does not
        have is an error, reported with torch's wording; shapes must match.  Returns
        ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []

        def load(module, prefix=""):
            module._load_from_state_dict(state_dict, prefix, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ---- modes, devices, grads ----------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=False):
        """Clears every parameter's .grad: None with set_to_none, zeros otherwise (torch 1.13's default)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def _apply(self, fn):
        for m in self.children():
            m._apply(fn)
        for name, p in list(self._parameters.items()):
            if p is None:
                continue
            with _no_grad():
                new = fn(p)
            if new is not p:
                np_ = Parameter(new, p.requires_grad)
                if p.grad is not None:
                    with _no_grad():
                        np_.grad = fn(p.grad)
                self._parameters[name] = np_
                self.__dict__[name] = np_
        for name, b in list(self._buffers.items()):
            if b is not None:
                nb = fn(b)
                self._buffers[name] = nb
                self.__dict__[name] = nb
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(tensor): floating parameters and
        buffers take the dtype (integer buffers such as num_batches_tracked keep theirs)."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, _Tensor):
                device, dtype = a.device, a.dtype
            else:
                device = a
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        def convert(t):
            dt = dtype if dtype is not None and t.is_floating_point() else None
            if device is None:
                return t.to(dtype=dt) if dt is not None else t
            return t.to(device=device, dtype=dt) if dt is not None else t.to(device=device)

        return self._apply(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- printing -----------------------------------------------------------------
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"

    def __deepcopy__(self, memo):
        # The Module's tensors are cloned here (a Parameter stays a Parameter, shared tensors
        # stay shared through memo), everything else is deep-copied as usual.
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            new.__dict__[k] = _deepcopy_value(v, memo)
        return new

    def __dir__(self):
        return sorted(set(dir(type(self))) | set(self.__dict__))


class Sequential(Module):
    """Modules applied in order: Sequential(a, b, c) or Sequential(OrderedDict(name=module))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def _idx(self, idx):
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._idx(idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[self._idx(idx)]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        for k in (keys[idx] if isinstance(idx, slice) else [keys[self._idx(idx)]]):
            delattr(self, k)
        # renumber as torch does
        items = list(self._modules.items())
        for k, _ in items:
            self._forget(k)
        for i, (_, m) in enumerate(items):
            self.add_module(str(i), m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered as submodules "0", "1", ..."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _idx(self, idx):
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(self._idx(idx))]

    def __setitem__(self, idx, module):
        self.add_module(str(self._idx(idx)), module)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        del mods[idx]
        for k in list(self._modules):
            self._forget(k)
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        for k in list(self._modules):
            self._forget(k)
        for i, m in enumerate(mods):
            self.add_module(str(i), m)


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        self._forget(key)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        m = self._modules[key]
        self._forget(key)
        return m

    def clear(self):
        for k in list(self._modules):
            self._forget(k)

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self[k] = m


def _deepcopy_value(v, memo):
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, Parameter):
        return v.__deepcopy__(memo)
    if isinstance(v, _Tensor):
        r = v.detach().clone().requires_grad_(v.requires_grad) if v.is_leaf else v.clone()
        memo[id(v)] = r
        return r
    if type(v) in (dict, OrderedDict):
        r = type(v)()
        memo[id(v)] = r
        for k, x in v.items():
            r[k] = _deepcopy_value(x, memo)
        return r
    return copy.deepcopy(v, memo)


from .. import no_grad as _no_grad  # noqa: E402

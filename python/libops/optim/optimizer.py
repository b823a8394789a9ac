"""libops.optim's optimizers: torch.optim's classes over the C optimizers of
include/libops/ops_optim.h (one C optimizer per parameter group; the update runs in C
with libops ops, grad mode off).

``param_groups`` is the source of truth for the options, as in torch: ``step()`` hands
a group's options to its C optimizer whenever they differ from what it last handed
(a scheduler's lr, a user's betas or weight_decay), so a change takes effect at the next
step.  The per-parameter state (momentum buffers, exp_avg, ...) lives in C;
``state_dict()`` reads it out in torch's layout and ``load_state_dict()`` copies it back
in, so a run resumed from a checkpoint continues bit for bit."""

from collections import OrderedDict

from .. import _C

_required = object()


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


class Optimizer:
    """Base class: ``param_groups`` (list of dicts with "params" and the options, as in torch),
    ``step()``, ``zero_grad(set_to_none=False)``, ``add_param_group``, ``state``,
    ``state_dict()`` / ``load_state_dict()``."""

    _kind = None

    def __init__(self, params, defaults):
        self.defaults = defaults
        if _is_tensor(params):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.param_groups = []
        self._opts = []     # one C optimizer per group
        self._applied = []  # the options each C optimizer has, as _options() tuples
        for g in groups:
            self.add_param_group(g)

    # ---- groups -------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Adds a group (a dict with "params" and any options; the others from
        ``defaults``), as torch's: useful to unfreeze layers while training."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param group must be a dict, but got {type(param_group).__name__}")
        g = dict(param_group)
        ps = g["params"]
        if _is_tensor(ps):
            g["params"] = [ps]
        elif isinstance(ps, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            g["params"] = list(ps)
        for p in g["params"]:
            if not _is_tensor(p):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is _required and k not in g:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            g.setdefault(k, v)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if len({id(p) for p in g["params"]}) != len(g["params"]) or any(id(p) in seen for p in g["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self._check(g)
        opts = self._options(g)
        o = self._new(g["params"])
        _C._optimizer_set_options(o, self._c_kind(), *opts)
        self.param_groups.append(g)
        self._opts.append(o)
        self._applied.append(opts)

    def _check(self, g):
        if not 0.0 <= g["lr"]:
            raise ValueError(f"Invalid learning rate: {g['lr']}")

    def _options(self, g):
        """(lr, momentum, dampening, weight_decay, nesterov, maximize, beta1, beta2, eps, amsgrad)."""
        raise NotImplementedError

    def _c_kind(self):
        return self._kind

    def _new(self, params):
        """A C optimizer over params (its options are set right after, from the group)."""
        raise NotImplementedError

    def _sync(self):
        """Hands each group's options to its C optimizer where they changed."""
        for i, g in enumerate(self.param_groups):
            opts = self._options(g)
            old = self._applied[i]
            if opts != old:
                if opts[1:] == old[1:]:  # a scheduler's usual change
                    _C._optimizer_set_lr(self._opts[i], opts[0])
                else:
                    _C._optimizer_set_options(self._opts[i], self._c_kind(), *opts)
                self._applied[i] = opts

    # ---- stepping -----------------------------------------------------------------
    def step(self, closure=None):
        loss = None
        if closure is not None:
            from .. import enable_grad
            with enable_grad():
                loss = closure()
        self._sync()
        for o in self._opts:
            _C._optimizer_step(o)
        return loss

    def zero_grad(self, set_to_none=False):
        for o in self._opts:
            _C._optimizer_zero_grad(o, set_to_none)

    # ---- state --------------------------------------------------------------------
    def _param_state(self, step, buf, v, vmax):
        raise NotImplementedError

    @property
    def state(self):
        """{param: its state dict} for the parameters that have state (a fresh dict on
        each read, holding the live state tensors, as torch's ``optimizer.state``)."""
        out = {}
        for gi, g in enumerate(self.param_groups):
            for j, p in enumerate(g["params"]):
                st = _C._optimizer_get_state(self._opts[gi], j)
                if st[0] > 0:
                    out[p] = self._param_state(*st)
        return out

    def state_dict(self):
        """torch's layout: {"state": {index: {...}}, "param_groups": [{options..., "params":
        [indices]}]}, parameters numbered in group order.  The state tensors are the live
        ones (as torch's): clone them (or save the dict) before stepping on if kept."""
        state, groups, idx = {}, [], 0
        for gi, g in enumerate(self.param_groups):
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = list(range(idx, idx + len(g["params"])))
            groups.append(packed)
            for j in range(len(g["params"])):
                st = _C._optimizer_get_state(self._opts[gi], j)
                if st[0] > 0:
                    state[idx + j] = self._param_state(*st)
            idx += len(g["params"])
        return {"state": state, "param_groups": groups}

    def _unpack_state(self, s):
        """(step, buf, v, vmax) from one parameter's state dict."""
        raise NotImplementedError

    def load_state_dict(self, state_dict):
        """Loads a state_dict() of an optimizer of the same kind over parameters of the same
        shapes (this library's or torch's): the options of every group and each parameter's
        state (copied, cast to the parameter's dtype)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        saved = state_dict["state"]
        new_groups, todo = [], []
        for gi, (g, s) in enumerate(zip(self.param_groups, groups)):
            ng = {k: v for k, v in s.items() if k != "params"}
            ng["params"] = g["params"]
            self._check(ng)
            self._options(ng)  # every option there
            new_groups.append(ng)
            for j, (p, key) in enumerate(zip(g["params"], s["params"])):
                ps = saved.get(key)
                if ps is None:
                    todo.append((gi, j, (0, None, None, None)))
                    continue
                step, buf, v, vmax = self._unpack_state(ps)
                cast = [None if t is None else t.to(device=p.device, dtype=p.dtype) for t in (buf, v, vmax)]
                for t, name in zip(cast, ("buf", "v", "vmax")):
                    if t is not None and tuple(t.shape) != tuple(p.shape):
                        raise ValueError(f"loaded state of parameter {key} ({name}) has shape {list(t.shape)}, "
                                         f"the parameter {list(p.shape)}")
                todo.append((gi, j, (step, *cast)))
        for gi, j, st in todo:
            _C._optimizer_set_state(self._opts[gi], j, *st)
        self.param_groups[:] = new_groups
        self._sync()

    def __getstate__(self):
        raise TypeError(f"cannot pickle {type(self).__name__}: save its state_dict()")

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"


def _step_value(step):
    if _is_tensor(step):
        step = step.item()
    if step != int(step) or step < 0:
        raise ValueError(f"optimizer state: step must be a non-negative whole number, got {step}")
    return int(step)


class SGD(Optimizer):
    """torch.optim.SGD: momentum, dampening, nesterov, weight_decay, maximize."""

    _kind = "sgd"

    def __init__(self, params, lr=_required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False):
        if lr is not _required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def _options(self, g):
        return (float(g["lr"]), float(g["momentum"]), float(g["dampening"]), float(g["weight_decay"]),
                bool(g["nesterov"]), bool(g.get("maximize", False)), 0.9, 0.999, 1e-8, False)

    def _new(self, params):
        return _C._optimizer_new("sgd", params, 0.0, 0.0, 0.0, 0.0, False, False, 0.9, 0.999, 1e-8, False)

    def _param_state(self, step, buf, v, vmax):
        return {"momentum_buffer": buf}

    def _unpack_state(self, s):
        return 1, s.get("momentum_buffer"), None, None


class Adam(Optimizer):
    """torch.optim.Adam: betas, eps, weight_decay (added to the gradient), amsgrad, maximize."""

    _kind = "adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _options(self, g):
        b1, b2 = g["betas"]
        return (float(g["lr"]), 0.0, 0.0, float(g["weight_decay"]), False, bool(g.get("maximize", False)),
                float(b1), float(b2), float(g["eps"]), bool(g["amsgrad"]))

    def _new(self, params):
        return _C._optimizer_new(self._kind, params, 1e-3, 0.0, 0.0, 0.0, False, False, 0.9, 0.999, 1e-8, False)

    def _param_state(self, step, buf, v, vmax):
        s = OrderedDict(step=_C.tensor(float(step)), exp_avg=buf, exp_avg_sq=v)
        if vmax is not None:
            s["max_exp_avg_sq"] = vmax
        return s

    def _unpack_state(self, s):
        return _step_value(s["step"]), s["exp_avg"], s["exp_avg_sq"], s.get("max_exp_avg_sq")


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay), default 1e-2."""

    _kind = "adamw"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)

"""libops.optim's optimizers: torch.optim's classes over the C optimizers of
include/libops/ops_optim.h (one C optimizer per parameter group; the update runs in C
with libops ops, grad mode off)."""

from .. import _C

_required = object()


class Optimizer:
    """Base class: ``param_groups`` (list of dicts with "params" and the options, as in torch),
    ``step()``, ``zero_grad(set_to_none=False)``.  A change of a group's "lr" (by a scheduler or
    by hand) is taken at the next step; other options are fixed at construction."""

    _kind = None

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, _C.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.param_groups = []
        self._opts = []
        self._lrs = []
        seen = set()
        for g in groups:
            g = dict(g)
            ps = g["params"]
            g["params"] = [ps] if isinstance(ps, _C.Tensor) else list(ps)
            for p in g["params"]:
                if not isinstance(p, _C.Tensor):
                    raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                    f"{type(p).__name__}")
                if not p.is_leaf:
                    raise ValueError("can't optimize a non-leaf Tensor")
                if id(p) in seen:
                    raise ValueError("some parameters appear in more than one parameter group")
                seen.add(id(p))
            for k, v in defaults.items():
                if v is _required and k not in g:
                    raise ValueError(f"parameter group didn't specify a value of required optimization "
                                     f"parameter {k}")
                g.setdefault(k, v)
            self._check(g)
            self.param_groups.append(g)
            self._opts.append(self._new(g))
            self._lrs.append(g["lr"])

    def _check(self, g):
        if not 0.0 <= g["lr"]:
            raise ValueError(f"Invalid learning rate: {g['lr']}")

    def _new(self, g):
        raise NotImplementedError

    def step(self, closure=None):
        loss = None
        if closure is not None:
            from .. import enable_grad
            with enable_grad():
                loss = closure()
        for i, (g, o) in enumerate(zip(self.param_groups, self._opts)):
            if g["lr"] != self._lrs[i]:
                _C._optimizer_set_lr(o, float(g["lr"]))
                self._lrs[i] = g["lr"]
            _C._optimizer_step(o)
        return loss

    def zero_grad(self, set_to_none=False):
        for o in self._opts:
            _C._optimizer_zero_grad(o, set_to_none)

    def add_param_group(self, param_group):
        raise NotImplementedError("add_param_group: give every group to the constructor")

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"


class SGD(Optimizer):
    """torch.optim.SGD: momentum, dampening, nesterov, weight_decay, maximize."""

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

    def _new(self, g):
        return _C._optimizer_new("sgd", g["params"], float(g["lr"]), float(g["momentum"]), float(g["dampening"]),
                                 float(g["weight_decay"]), bool(g["nesterov"]), bool(g["maximize"]), 0.9, 0.999,
                                 1e-8, False)


class Adam(Optimizer):
    """torch.optim.Adam: betas, eps, weight_decay (added to the gradient), amsgrad, maximize."""

    _kind = "adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _new(self, g):
        b1, b2 = g["betas"]
        return _C._optimizer_new(self._kind, g["params"], float(g["lr"]), 0.0, 0.0, float(g["weight_decay"]),
                                 False, bool(g["maximize"]), float(b1), float(b2), float(g["eps"]),
                                 bool(g["amsgrad"]))


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay), default 1e-2."""

    _kind = "adamw"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)

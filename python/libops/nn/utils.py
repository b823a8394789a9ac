"""libops.nn.utils: clip_grad_norm_ and clip_grad_value_, torch.nn.utils'."""

import math

from .. import _C
from .. import no_grad as _no_grad


def _grads(parameters):
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


@_no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale the gradients in place so that their joint norm (of the per-tensor norms) is at
    most max_norm; returns the norm before clipping (a 0-dim tensor)."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return _C.tensor(0.0)
    if norm_type == math.inf:
        norms = [g.detach().abs().max() for g in grads]
        total = norms[0] if len(norms) == 1 else _C.stack(norms).max()
    else:
        total = _C.norm(_C.stack([_C.norm(g.detach(), norm_type) for g in grads]), norm_type)
    if error_if_nonfinite and (total.isnan().item() or total.isinf().item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef)
    return total


@_no_grad()
def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.clamp_(min=-clip_value, max=clip_value)

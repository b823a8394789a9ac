"""libops.nn.functional: torch.nn.functional's calls over libops' operators.

Every generated operator whose positional arguments read as torch.nn.functional's
(``relu``, ``conv2d``, ``layer_norm``, ``pad``, ...) is here under its name, as the
schema declares it (docs/python.md).  A function whose torch.nn.functional signature
differs from the ATen schema is defined here with F's signature (``embedding``) or, until
it is, left out (``_NOT_F`` lists them), so that a call ported from torch never binds
its arguments to the wrong parameters.
"""

from .. import _C
from .. import no_grad as _no_grad

# Ops whose F signature differs from the schema's positional order or types: not
# re-exported as generated; those with an F form below are defined with F's signature
# (batch_norm, the losses with a string reduction, dropout, elu, max_pool1d/2d with
# return_indices, embedding); unfold (F's is im2col, the schema's a view) and
# adaptive_max_pool2d are left out.
_NOT_F = frozenset({
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "l1_loss", "mse_loss", "nll_loss", "smooth_l1_loss", "huber_loss", "dropout", "elu",
    "unfold", "adaptive_max_pool2d", "max_pool1d", "max_pool2d", "embedding",
})

for _n in dir(_C):
    _f = getattr(_C, _n)
    if not _n.startswith("_") and _n not in _NOT_F and callable(_f) and not isinstance(_f, type):
        globals()[_n] = _f
del _n, _f


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """torch.nn.functional.embedding: the rows of ``weight`` named by ``input``.

    ``padding_idx`` (negative counts from the end) gets no gradient; with ``max_norm``
    the named rows whose ``norm_type``-norm exceeds it are first scaled down to it in
    ``weight`` itself (``embedding_renorm_``, under no_grad, as torch does).
    """
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx >= num or padding_idx < -num:
            raise ValueError(f"embedding: padding_idx must be within num_embeddings ({num}), got {padding_idx}")
        if padding_idx < 0:
            padding_idx += num
    else:
        padding_idx = -1
    if max_norm is not None:
        with _no_grad():
            _C.embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


# ---- F's forms of the ops in _NOT_F, and F calls that are compositions ----------------

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def dropout(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout: zeroes elements with probability p and scales the rest by 1/(1-p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    out = _C.dropout(input, p, True)
    if inplace:
        with _no_grad():
            input.copy_(out)
        return input
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-05):
    """torch.nn.functional.batch_norm (running stats updated in place when training)."""
    return _C.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def relu(input, inplace=False):
    return input.relu_() if inplace else _C.relu(input)


def elu(input, alpha=1.0, inplace=False):
    out = _C.elu(input, alpha)
    if inplace:
        with _no_grad():
            input.copy_(out)
        return input
    return out


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _C.leaky_relu(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _C.hardtanh(input, min_val, max_val)


def relu6(input, inplace=False):
    return _C.hardtanh(input, 0.0, 6.0)


def silu(input, inplace=False):
    return _C.silu(input)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    stride = [] if stride is None else stride
    if return_indices:
        return _C.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    stride = [] if stride is None else stride
    if return_indices:
        return _C.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    stride = [] if stride is None else stride
    return _C.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    return _C.cross_entropy_loss(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index,
                                 label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _C.nll_loss(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _C.mse_loss(input, target, _reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _C.l1_loss(input, target, _reduction(size_average, reduce, reduction))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    return _C.binary_cross_entropy(input, target, weight, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    return _C.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                               _reduction(size_average, reduce, reduction))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        raise TypeError("softmax: dim must be given (torch's implicit-dim choice is deprecated)")
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        raise TypeError("log_softmax: dim must be given (torch's implicit-dim choice is deprecated)")
    return _C.log_softmax(input, dim, dtype)

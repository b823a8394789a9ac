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

# Ops whose F signature differs from the schema's positional order or types; not
# re-exported until each has its F form here:
#   batch_norm (F: input, running_mean, running_var, weight, bias, ...), the losses
#   (F: size_average/reduce and a string reduction), dropout (F's training defaults to
#   True), elu (F's third argument is inplace), unfold (F's is im2col, the schema's a
#   view), adaptive_max_pool2d / max_pool1d / max_pool2d (F's return_indices).
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

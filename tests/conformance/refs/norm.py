"""NumPy references for the normalization, embedding and loss ops
(kernels/cpu/norm.c, kernels/cpu/loss.c).

Everything is computed in float64 from the sampled inputs; gen_cases.py rounds the
result to the case's dtype.  `reduction` is PyTorch's enum: 0 none, 1 mean, 2 sum.
Formulas follow PyTorch's definitions (torch.nn.functional and ATen's composites),
written independently with NumPy.
"""
import numpy as np


def _f64(a):
    return None if a is None else np.asarray(a, dtype=np.float64)


def _reduce(loss, reduction, denom=None):
    if reduction == 0:
        return loss
    s = np.sum(loss, dtype=np.float64)
    if reduction == 1:
        n = loss.size if denom is None else denom
        with np.errstate(all="ignore"):
            return np.float64(s) / np.float64(n)
    return s


# ---- normalization -------------------------------------------------------------------

def ref_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """batch_norm's output: batch statistics (biased variance) in training, the
    running ones in evaluation, over every dim but dim 1."""
    x = _f64(input)
    c = x.shape[1]
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, c) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    else:
        mean, var = _f64(running_mean).reshape(-1), _f64(running_var).reshape(-1)
    y = (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + eps)
    if weight is not None:
        y = y * _f64(weight).reshape(bshape)
    if bias is not None:
        y = y + _f64(bias).reshape(bshape)
    return y


def ref_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd); the saved statistics are empty in evaluation."""
    y = ref_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    x = _f64(input)
    if not training:
        return y, np.zeros((0,)), np.zeros((0,))
    axes = (0,) + tuple(range(2, x.ndim))
    return y, x.mean(axis=axes), 1.0 / np.sqrt(x.var(axis=axes) + eps)


def _layer_norm_stats(x, normalized_shape, eps):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return mean, rstd


def ref_layer_norm(input, normalized_shape, weight, bias, eps):
    x = _f64(input)
    mean, rstd = _layer_norm_stats(x, normalized_shape, eps)
    y = (x - mean) * rstd
    if weight is not None:
        y = y * _f64(weight)
    if bias is not None:
        y = y + _f64(bias)
    return y


def ref_native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd); mean and rstd keep the normalized dims as size 1."""
    x = _f64(input)
    mean, rstd = _layer_norm_stats(x, normalized_shape, eps)
    return ref_layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def ref_native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    """(dx, dweight, dbias) from the given mean and rstd (any values: the formula is
    linear in grad_out); a gradient output_mask leaves out is an empty [0] array."""
    k = len(normalized_shape)
    x, g = _f64(input), _f64(grad_out)
    n = int(np.prod(normalized_shape)) if k else 1
    m_rows = x.size // n if n else 0
    x2, g2 = x.reshape(m_rows, n), g.reshape(m_rows, n)
    mu, rs = _f64(mean).reshape(m_rows, 1), _f64(rstd).reshape(m_rows, 1)
    xh = (x2 - mu) * rs
    gw = g2 * _f64(weight).reshape(1, n) if weight is not None else g2
    wdt = np.asarray(weight).dtype if weight is not None else np.asarray(input).dtype
    out = [np.zeros(0, dtype=np.asarray(input).dtype), np.zeros(0, dtype=wdt),
           np.zeros(0, dtype=np.asarray(bias).dtype if bias is not None else wdt)]
    if output_mask[0]:
        a = gw.mean(axis=1, keepdims=True) if n else 0
        b = (gw * xh).mean(axis=1, keepdims=True) if n else 0
        out[0] = ((gw - a - xh * b) * rs).reshape(x.shape)
    if output_mask[1]:
        out[1] = (g2 * xh).sum(axis=0).reshape(tuple(normalized_shape))
    if output_mask[2]:
        out[2] = g2.sum(axis=0).reshape(tuple(normalized_shape))
    return tuple(out)


def ref_group_norm(input, num_groups, weight, bias, eps):
    x = _f64(input)
    n, c = x.shape[0], x.shape[1]
    g = x.reshape(n, num_groups, -1)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * _f64(weight).reshape(bshape)
    if bias is not None:
        y = y + _f64(bias).reshape(bshape)
    return y


# ---- embedding -----------------------------------------------------------------------

def ref_embedding(weight, indices):
    return np.asarray(weight)[np.asarray(indices, dtype=np.int64)]


# ---- losses --------------------------------------------------------------------------

def ref_pointwise_loss(kind, self, target, reduction, param=None):
    """mse, l1, smooth_l1 (param: beta) and huber (param: delta), self and target
    broadcast together."""
    d = _f64(self) - _f64(target)
    ad = np.abs(d)
    if kind == "mse":
        loss = d * d
    elif kind == "l1":
        loss = ad
    elif kind == "smooth_l1":
        loss = ad if param == 0 else np.where(ad < param, 0.5 * d * d / (param or 1.0), ad - 0.5 * param)
    else:
        loss = np.where(ad < param, 0.5 * d * d, param * (ad - 0.5 * param))
    return _reduce(loss, reduction)


def ref_binary_cross_entropy(self, target, weight, reduction):
    x, t = _f64(self), _f64(target)
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), -100.0)
        l1x = np.maximum(np.log1p(-x), -100.0)
    loss = (t - 1) * l1x - t * lx
    if weight is not None:
        loss = loss * _f64(weight)
    return _reduce(loss, reduction)


def ref_binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction):
    x, t = _f64(self), _f64(target)
    log_sig = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    lw = 1.0 if pos_weight is None else 1 + (_f64(pos_weight) - 1) * t
    loss = (1 - t) * x - lw * log_sig
    if weight is not None:
        loss = loss * _f64(weight)
    return _reduce(np.broadcast_to(loss, np.broadcast_shapes(
        *[np.shape(a) for a in (self, target, weight, pos_weight) if a is not None])), reduction)


def _class_layout(x):
    """x as (N, C, S) with N = 1 for a 1-D input."""
    if x.ndim == 1:
        return x.reshape(1, x.shape[0], 1)
    return x.reshape(x.shape[0], x.shape[1], int(np.prod(x.shape[2:], dtype=np.int64)))


def _nll_terms(lp, target, weight, ignore_index):
    """Per-target -w[t] * lp[n, t, s] (0 where ignored) and the weights that count."""
    x = _class_layout(lp)
    n, c, s = x.shape
    t = np.asarray(target, dtype=np.int64).reshape(n, s)
    w = np.ones(c) if weight is None else _f64(weight)
    keep = t != ignore_index
    tc = np.where(keep, t, 0)
    picked = np.take_along_axis(x, tc[:, None, :], axis=1)[:, 0, :]
    wt = np.where(keep, w[tc], 0.0)
    return np.where(keep, -wt * picked, 0.0), wt  # +0 where ignored, as PyTorch


def ref_nll_loss(self, target, weight, reduction, ignore_index):
    loss, wt = _nll_terms(_f64(self), target, weight, ignore_index)
    loss = loss.reshape(np.shape(target))
    return _reduce(loss, reduction, denom=np.sum(wt))


def _log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def ref_cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing):
    x = _f64(self)
    cdim = 0 if x.ndim == 1 else 1
    c = x.shape[cdim]
    lp = _log_softmax(x, cdim)
    wshape = [1] * x.ndim
    wshape[cdim] = c
    w = np.ones(c) if weight is None else _f64(weight)
    if np.shape(target) == x.shape:  # class probabilities
        t = _f64(target) * (1 - label_smoothing) + label_smoothing / c
        loss = -np.sum(lp * t * w.reshape(wshape), axis=cdim)
        if reduction == 1:
            return np.sum(loss) / (x.size / c) if x.size else np.float64(np.nan)
        return _reduce(loss, reduction)
    nll, wt = _nll_terms(lp, target, weight, ignore_index)
    nll = nll.reshape(np.shape(target))
    if label_smoothing <= 0:
        return _reduce(nll, reduction, denom=np.sum(wt))
    keep = np.asarray(target) != ignore_index
    smooth = np.where(keep, -np.sum(lp * w.reshape(wshape), axis=cdim), 0.0)
    k = label_smoothing / c
    if reduction == 0:
        return (1 - label_smoothing) * nll + k * smooth
    if reduction == 2:
        return (1 - label_smoothing) * np.sum(nll) + k * np.sum(smooth)
    return (1 - label_smoothing) * (np.sum(nll) / np.sum(wt)) + k * (np.sum(smooth) / np.sum(wt))


def ref_native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd); mean and rstd have shape [N, group]."""
    x = _f64(input)
    g = x.reshape(N, group, -1)
    return (ref_group_norm(input, group, weight, bias, eps), g.mean(axis=2),
            1.0 / np.sqrt(g.var(axis=2) + eps))


def ref_embedding_renorm(self, indices, max_norm, norm_type):
    """self after embedding_renorm_: each referenced row (once) scaled to
    max_norm / (norm + 1e-7) when its norm_type-norm exceeds max_norm."""
    w = np.array(self, dtype=np.float64)
    for i in np.unique(np.asarray(indices, dtype=np.int64)):
        row = np.abs(w[i])
        if norm_type == np.inf:
            n = row.max() if row.size else 0.0
        else:
            n = np.sum(row ** norm_type) ** (1.0 / norm_type)
        if n > max_norm:
            w[i] *= max_norm / (n + 1e-7)
    return w

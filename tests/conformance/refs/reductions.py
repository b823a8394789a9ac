"""NumPy references for the reductions of ops/native_functions.yaml (kernels/cpu/reduce.c):
max/min over a dim with indices, var_mean/std_mean, vector norms, cummax/cummin.

Ops with several returns give a tuple, one array per return in schema order.  Inputs
arrive as NumPy arrays (float16/bfloat16 as float32); results are computed in float64
where precision matters and rounded by the suite to the result dtype."""
import warnings

import numpy as np


def _axis(dim):
    return tuple(dim) if dim else None


def _extreme_dim(x, dim, keepdim, pick, arg):
    x = np.asarray(x)
    if x.ndim == 0:  # dim 0 or -1 of a 0-dim tensor: the element, index 0
        return x.copy(), np.zeros((), dtype=np.int64)
    v = pick(x, axis=dim, keepdims=keepdim)
    i = arg(x, axis=dim)  # the first extreme; a NaN counts as the extreme (NumPy and PyTorch)
    if keepdim:
        i = np.expand_dims(i, dim)
    return v, i.astype(np.int64)


def ref_max_dim(x, dim, keepdim):
    """max.dim: (values, indices); ties give the first index, a NaN wins."""
    return _extreme_dim(x, dim, keepdim, np.amax, np.argmax)


def ref_min_dim(x, dim, keepdim):
    """min.dim: (values, indices); ties give the first index, a NaN wins."""
    return _extreme_dim(x, dim, keepdim, np.amin, np.argmin)


def ref_var_mean(x, dim, correction, keepdim):
    """var_mean: (var, mean) in float64; correction None is 1."""
    a = np.asarray(x, dtype=np.float64)
    ddof = 1 if correction is None else correction
    with warnings.catch_warnings():  # empty slices and dof <= 0 give NaN/inf, as in PyTorch
        warnings.simplefilter("ignore", RuntimeWarning)
        return (np.var(a, axis=_axis(dim), ddof=ddof, keepdims=keepdim),
                np.mean(a, axis=_axis(dim), keepdims=keepdim))


def ref_std_mean(x, dim, correction, keepdim):
    """std_mean: (std, mean) in float64; correction None is 1."""
    v, m = ref_var_mean(x, dim, correction, keepdim)
    return np.sqrt(v), m


def ref_vector_norm(x, p, dim, keepdim):
    """The vector norm of order p (None: 2) over dim (None or empty: every dim), in
    float64: 0 counts nonzeros, inf/-inf are the largest/smallest magnitude."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    p = 2.0 if p is None else float(p)
    axis = _axis(dim)
    if a.ndim == 0:
        axis = None
    if p == 0:
        r = np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.float64)
    elif p == np.inf:
        r = np.amax(a, axis=axis, keepdims=keepdim)
    elif p == -np.inf:
        r = np.amin(a, axis=axis, keepdims=keepdim)
    elif p == 1:
        r = np.sum(a, axis=axis, keepdims=keepdim)
    elif p == 2:
        r = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    else:
        r = np.sum(a ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)
    if a.ndim == 0 and keepdim:
        r = np.asarray(r).reshape(())
    return np.asarray(r)


def _cum_extreme(x, dim, better):
    x = np.asarray(x)
    if x.ndim == 0:
        return x.copy(), np.zeros((), dtype=np.int64)
    xs = np.ascontiguousarray(np.moveaxis(x, dim, -1))  # lines along the last axis
    n = xs.shape[-1]
    flat_x = xs.reshape(-1, n) if xs.size else xs.reshape(0, n)
    flat_v = np.empty(flat_x.shape, dtype=x.dtype)
    flat_i = np.zeros(flat_x.shape, dtype=np.int64)
    isnan = (lambda v: v != v) if x.dtype.kind == "f" else (lambda v: False)
    for r in range(flat_x.shape[0]):
        best, bi = None, 0
        for k in range(flat_x.shape[1]):
            v = flat_x[r, k]
            # PyTorch's rule: a NaN always takes the position; otherwise a tie or better
            # one does, unless the running value is already NaN
            if k == 0 or isnan(v) or (not isnan(best) and better(v, best)):
                best, bi = v, k
            flat_v[r, k] = best
            flat_i[r, k] = bi
    return (np.moveaxis(flat_v.reshape(xs.shape), -1, dim),
            np.moveaxis(flat_i.reshape(xs.shape), -1, dim))


def ref_cummax(x, dim):
    """cummax: (values, indices); ties give the last index so far, NaN propagates."""
    return _cum_extreme(x, dim, lambda a, b: a >= b)


def ref_cummin(x, dim):
    """cummin: (values, indices); ties give the last index so far, NaN propagates."""
    return _cum_extreme(x, dim, lambda a, b: a <= b)


def _matrices_last(x, dim):
    """x in float64 with the two dims of `dim` moved last (in that order)."""
    a = np.asarray(x, dtype=np.float64)
    d0, d1 = (d % a.ndim for d in dim)
    return np.moveaxis(a, (d0, d1), (-2, -1)), (d0, d1)


def ref_nuclear_norm(x, dim, keepdim):
    """The sum of the singular values (NumPy's SVD) of the matrices over dim."""
    a, (d0, d1) = _matrices_last(x, dim)
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        r = np.zeros(a.shape[:-2])
    else:
        r = np.linalg.svd(a, compute_uv=False).sum(-1)
    if keepdim:
        r = np.expand_dims(r, tuple(sorted((d0, d1))))
    return np.asarray(r)


def ref_linalg_polar(x, dim):
    """U Vᴴ of the reduced SVD of the matrices over dim, back in x's layout."""
    a, (d0, d1) = _matrices_last(x, dim)
    if a.size == 0:
        r = a
    else:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        r = u @ vh
    return np.moveaxis(r, (-2, -1), (d0, d1))


def ref_norm_str(x, p, dim, keepdim):
    """torch.norm(x, 'fro' | 'nuc', dim, keepdim)."""
    if p == "fro":
        return ref_vector_norm(x, 2, dim, keepdim)
    return ref_nuclear_norm(x, [-2, -1] if dim is None else dim, keepdim)

"""NumPy references for the splitting views (split, chunk, unbind, tensor_split)."""
import numpy as np


def _pieces(x, dim, lengths):
    x = np.asarray(x)
    d = dim % x.ndim
    out, at = [], 0
    for n in lengths:
        idx = [slice(None)] * x.ndim
        idx[d] = slice(at, at + n)
        out.append(x[tuple(idx)])
        at += n
    return out


def ref_split(x, split_size, dim):
    """torch.split with an int: pieces of split_size, the last shorter; one piece
    (empty) when the dim is empty."""
    n = np.shape(x)[dim]
    if n == 0:
        return _pieces(x, dim, [0])
    count = -(-n // split_size)
    return _pieces(x, dim, [min(split_size, n - i * split_size) for i in range(count)])


def ref_split_with_sizes(x, sizes, dim):
    return _pieces(x, dim, list(sizes))


def ref_chunk(x, chunks, dim):
    n = np.shape(x)[dim]
    if n == 0:
        return _pieces(x, dim, [0] * chunks)
    return ref_split(x, -(-n // chunks), dim)


def ref_unbind(x, dim):
    x = np.asarray(x)
    return [np.take(x, i, axis=dim) for i in range(x.shape[dim])]


def ref_tensor_split_indices(x, indices, dim):
    """Python-slice bounds between consecutive indices (negative from the end,
    clamped; an end before its start gives an empty piece)."""
    x = np.asarray(x)
    d = dim % x.ndim
    n = x.shape[d]
    out, prev = [], 0
    for b in list(indices) + [n]:
        idx = [slice(None)] * x.ndim
        idx[d] = slice(prev, b)
        piece = x[tuple(idx)]
        out.append(piece)
        e = b + n if b < 0 else b
        prev = min(max(e, 0), n)
    return out


def ref_tensor_split_tensor(x, t, dim):
    """tensor_split with a tensor: 0-dim, that many sections; 1-D, the indices."""
    t = np.asarray(t)
    if t.ndim == 0:
        return np.array_split(np.asarray(x), int(t), axis=dim)
    return ref_tensor_split_indices(x, [int(i) for i in t], dim)

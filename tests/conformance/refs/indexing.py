"""NumPy references for the indexing ops (scatter family, masked_select, nonzero, take,
put, repeat_interleave, advanced indexing).  NumPy only, never libops."""
import numpy as np


def _as_nd(a):
    """a as an array of at least one dim (PyTorch treats 0-dim as 1-D of size 1 here)."""
    a = np.asarray(a)
    return a.reshape(a.shape or (1,))


def _scatter_targets(out, dim, index):
    """The destination index tuple of every element of index (row-major)."""
    idx = _as_nd(index).astype(np.int64)
    grids = np.indices(idx.shape)
    return tuple(idx if d == dim else grids[d] for d in range(out.ndim)), idx.shape


def _identity(red, dt):
    if red in ("sum", "mean"):
        return 0
    if red == "prod":
        return 1
    big = dt == np.bool_ or np.issubdtype(dt, np.integer)
    if red == "amax":
        return (False if dt == np.bool_ else np.iinfo(dt).min) if big else -np.inf
    return (True if dt == np.bool_ else np.iinfo(dt).max) if big else np.inf


def ref_scatter(self, dim, index, src=None, value=None, reduce=None, include_self=True):
    """scatter / scatter_add / scatter_reduce: reduce None (assign), 'add', 'multiply',
    'sum', 'prod', 'mean', 'amax', 'amin'; src a tensor, or value a number."""
    self = np.asarray(self)
    out = _as_nd(self).copy()
    dim = dim % out.ndim
    if np.size(index) == 0:
        return out.reshape(self.shape)
    tgt, ishape = _scatter_targets(out, dim, index)
    if src is not None:
        s = _as_nd(src)
        vals = s[tuple(slice(0, n) for n in ishape)].astype(out.dtype)
    else:
        vals = np.full(ishape, np.asarray(value).astype(out.dtype), dtype=out.dtype)
    red = {"add": "sum", "multiply": "prod"}.get(reduce, reduce)
    if red is None:
        out[tgt] = vals
        return out.reshape(self.shape)
    if not include_self:
        out[tgt] = _identity(red, out.dtype)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[red]
    with np.errstate(all="ignore"):
        ufunc.at(out, tgt, vals)
    if red == "mean":
        count = np.full(out.shape, 1 if include_self else 0, dtype=np.int64)
        np.add.at(count, tgt, 1)
        count[count == 0] = 1
        if np.issubdtype(out.dtype, np.floating):
            out = (out / count).astype(out.dtype)
        else:
            out = np.floor_divide(out.astype(np.int64), count).astype(out.dtype)
    return out.reshape(self.shape)


def ref_masked_select(self, mask):
    shape = np.broadcast_shapes(np.shape(self), np.shape(mask))
    return np.broadcast_to(self, shape)[np.broadcast_to(mask, shape)]


def ref_masked_scatter(self, mask, source):
    shape = np.broadcast_shapes(np.shape(self), np.shape(mask))
    out = np.array(np.broadcast_to(self, shape))
    m = np.broadcast_to(np.asarray(mask, dtype=bool), shape)
    src = np.asarray(source).reshape(-1)
    assert src.size >= int(m.sum()), "source has fewer elements than the mask's ones"
    out[m] = src[:int(m.sum())]
    return out


def ref_put(self, index, source, accumulate=False):
    out = np.array(self)
    flat = out.reshape(-1)
    idx = np.asarray(index, dtype=np.int64).reshape(-1)
    idx = np.where(idx < 0, idx + flat.size, idx)
    src = np.asarray(source).reshape(-1).astype(out.dtype)
    if accumulate:
        np.add.at(flat, idx, src)
    else:
        flat[idx] = src
    return flat.reshape(out.shape)


def _index_slices(self, dim, index, source=None):
    """(out, out viewed with dim first, index as 1-D, source viewed with dim first)."""
    out = np.array(self)
    o = out.reshape(out.shape or (1,))
    dim = dim % o.ndim
    idx = np.asarray(index, dtype=np.int64).reshape(-1)
    s = None
    if source is not None:
        s = np.asarray(source)
        if s.ndim == 0:
            s = s.reshape(o.shape[:dim] + (idx.size,) + o.shape[dim + 1:])
        s = np.moveaxis(s, dim, 0).astype(out.dtype)
    return out, np.moveaxis(o, dim, 0), idx, s


def ref_index_add(self, dim, index, source, alpha=1):
    out, om, idx, s = _index_slices(self, dim, index, source)
    with np.errstate(all="ignore"):
        np.add.at(om, idx, (s * np.asarray(alpha).astype(out.dtype)).astype(out.dtype))
    return out


def ref_index_copy(self, dim, index, source):
    out, om, idx, s = _index_slices(self, dim, index, source)
    om[idx] = s
    return out


def ref_index_fill(self, dim, index, value):
    out, om, idx, _ = _index_slices(self, dim, index)
    om[idx] = np.asarray(value).astype(out.dtype)
    return out


def _index_key(indices):
    """A NumPy index tuple for PyTorch's Tensor?[] indices: None is a full slice, a
    bool (or uint8) mask becomes its nonzero() coordinates, as PyTorch expands it."""
    key = []
    for t in indices:
        if t is None:
            key.append(slice(None))
            continue
        t = np.asarray(t)
        if t.dtype == np.bool_ or t.dtype == np.uint8:
            key.extend(np.nonzero(t.astype(bool)))
        else:
            key.append(t.astype(np.int64))
    return tuple(key)


def ref_index(self, indices):
    return np.asarray(self)[_index_key(indices)]


def ref_index_put(self, indices, values, accumulate=False):
    out = np.array(self)
    key = _index_key(indices)
    vals = np.broadcast_to(np.asarray(values).astype(out.dtype), out[key].shape)
    if accumulate:
        with np.errstate(all="ignore"):
            np.add.at(out, key, vals)
    else:
        out[key] = vals
    return out


def ref_nonzero_numpy(self):
    a = np.asarray(self)
    return list(np.nonzero(a.reshape(a.shape or (1,))))

"""NumPy references for the sorting and searching ops (kernels/cpu/sort.c, sort_search.c).

PyTorch's orders: NaN sorts as the largest value (every NaN equal to every other for
ordering), -0.0 equals 0.0, and the CPU sort is stable, so equal elements keep their
input order (descending too).  topk and kthvalue break ties as that stable sort does
(libops documents this; PyTorch leaves it unspecified).  unique keeps every NaN apart
(NaN != NaN), as PyTorch's unique does.
"""
import numpy as np


def _rank(a):
    """Dense ranks of a's values in PyTorch's sort order (NaN largest, -0.0 == 0.0)."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        r = np.zeros(flat.shape, np.int64)
        if (~nan).any():
            r[~nan] = np.unique(flat[~nan], return_inverse=True)[1]
            r[nan] = r[~nan].max() + 1
        return r.reshape(a.shape)
    return np.unique(flat, return_inverse=True)[1].reshape(a.shape)


def _order(a, dim, descending):
    """Positions of the stable sort of a along dim."""
    r = _rank(a)
    return np.argsort(-r if descending else r, axis=dim, kind="stable")


def ref_sort(self, dim=-1, descending=False):
    """(values, indices) of sort / sort.stable (always stable)."""
    a = np.asarray(self)
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _order(a, dim, descending)
    return np.take_along_axis(a, idx, dim), idx


def ref_argsort(self, dim=-1, descending=False):
    return ref_sort(self, dim, descending)[1]


def ref_msort(self):
    return ref_sort(self, 0, False)[0]


def ref_topk(self, k, dim=-1, largest=True):
    """(values, indices): the first k of the stable sort (descending when largest), in
    that order (libops returns them sorted even for sorted=False)."""
    v, i = ref_sort(self, dim, largest)
    if np.ndim(v) == 0:
        return v, i
    take = np.arange(k)
    return np.take(v, take, axis=dim), np.take(i, take, axis=dim)


def ref_kthvalue(self, k, dim=-1, keepdim=False):
    """(values, indices): position k - 1 of the stable ascending sort along dim."""
    v, i = ref_sort(self, dim, False)
    if np.ndim(v) == 0:
        return v, i
    v = np.take(v, [k - 1], axis=dim)
    i = np.take(i, [k - 1], axis=dim)
    if not keepdim:
        v, i = np.squeeze(v, axis=dim), np.squeeze(i, axis=dim)
    return v, i


_EMPTY = np.zeros((0,), np.int64)


def ref_unique(self, return_inverse=False, return_counts=False):
    """_unique2: (sorted unique values, inverse (self's shape), counts); the slots not
    asked for are empty int64 tensors.  Each NaN is its own value, after the others."""
    a = np.asarray(self)
    flat = a.reshape(-1)
    nan = np.isnan(flat) if flat.dtype.kind == "f" else np.zeros(flat.shape, bool)
    u, inv, cnt = np.unique(flat[~nan], return_inverse=True, return_counts=True)
    inverse = np.zeros(flat.shape, np.int64)
    inverse[~nan] = inv
    inverse[nan] = len(u) + np.arange(int(nan.sum()))
    u = np.concatenate([u, flat[nan]])
    cnt = np.concatenate([cnt, np.ones(int(nan.sum()), np.int64)])
    return (u, inverse.reshape(a.shape) if return_inverse else _EMPTY,
            cnt.astype(np.int64) if return_counts else _EMPTY)


def ref_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive: runs of equal consecutive elements (dim None: of self
    flattened; else of the slices along dim).  NaN never equals anything."""
    a = np.asarray(self)
    if dim is None or a.ndim == 0:
        x = a.reshape(-1, 1)
        keep_shape = a.shape
        ax = 0
    else:
        ax = dim % a.ndim
        x = np.moveaxis(a, ax, 0).reshape(a.shape[ax], -1)
        keep_shape = (a.shape[ax],)
    n = x.shape[0]
    starts = [s for s in range(n) if s == 0 or bool(np.any(x[s] != x[s - 1]))]
    starts = np.asarray(starts, np.int64)
    groups = len(starts)
    inverse = np.zeros(n, np.int64)
    counts = np.zeros(groups, np.int64)
    for g in range(groups):
        end = starts[g + 1] if g + 1 < groups else n
        inverse[starts[g]:end] = g
        counts[g] = end - starts[g]
    if dim is None or a.ndim == 0:
        values = a.reshape(-1)[starts]
    else:
        values = np.take(a, starts, axis=ax)
    return (values, inverse.reshape(keep_shape) if return_inverse else _EMPTY,
            counts if return_counts else _EMPTY)


def _bsearch(row, v, right):
    """PyTorch's binary search over one boundaries row, midpoint lo + (hi - lo) // 2,
    moving right past b while !(b >= v) (left) or !(b > v) (right).  On a sorted row it
    is np.searchsorted; it also defines PyTorch's answer on unsorted rows."""
    v = np.asarray(v)
    lo = np.zeros(v.shape, np.int64)
    hi = np.full(v.shape, len(row), np.int64)
    with np.errstate(invalid="ignore"):
        while np.any(lo < hi):
            act = lo < hi
            mid = lo + ((hi - lo) >> 1)
            m = row[np.minimum(mid, max(len(row) - 1, 0))] if len(row) else np.zeros(v.shape)
            go_right = ~(m > v) if right else ~(m >= v)
            lo = np.where(act & go_right, mid + 1, lo)
            hi = np.where(act & ~go_right, mid, hi)
    return lo


def ref_searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    """searchsorted: positions of self's values in the rows of sorted_sequence (one row
    when 1-D, else the row with the same leading index), through sorter."""
    b = np.asarray(sorted_sequence)
    v = np.asarray(self)
    if side is not None:
        right = side == "right"
    if sorter is not None:
        b = np.take_along_axis(b, np.asarray(sorter, np.int64), -1)
    odt = np.int32 if out_int32 else np.int64
    if b.ndim == 1:
        if np.all(b[:-1] <= b[1:]):
            return np.asarray(np.searchsorted(b, v, side="right" if right else "left")).astype(odt)
        return _bsearch(b, v, right).astype(odt)
    out = np.zeros(v.shape, np.int64)
    for idx in np.ndindex(*b.shape[:-1]):
        out[idx] = _bsearch(b[idx], v[idx], right)
    return out.astype(odt)


def ref_bucketize(self, boundaries, out_int32=False, right=False):
    return ref_searchsorted(boundaries, self, out_int32, right)


def ref_bincount(self, weights=None, minlength=0):
    """bincount: int64 counts, or sums of weights (float32 weights in float32, in input
    order; other weights in float64); an empty self gives minlength int64 zeros."""
    x = np.asarray(self).astype(np.int64)
    if x.size == 0:
        return np.zeros(minlength, np.int64)
    if weights is None:
        return np.bincount(x, minlength=minlength).astype(np.int64)
    w = np.asarray(weights)
    n = max(int(x.max()) + 1, minlength)
    if w.dtype == np.float32:
        out = np.zeros(n, np.float32)
        np.add.at(out, x, w)
        return out
    return np.bincount(x, weights=w.astype(np.float64), minlength=minlength)


def ref_histc(self, bins=100, min=0, max=0):
    """histc: counts of self's values in `bins` equal bins over [min, max] (the data's
    range when min == max; widened by 1 each way when that is empty), values outside
    ignored, the last bin closed.  Bin of x: (x - lo) * bins / (hi - lo) in the input's
    float type (float32 for float16/bfloat16 inputs, which arrive here as float32)."""
    x = np.asarray(self)
    ft = np.float64 if x.dtype == np.float64 else np.float32
    x = x.astype(ft)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    lo, hi = ft(lo), ft(hi)
    h = np.zeros(bins, ft)
    m = (x >= lo) & (x <= hi)
    with np.errstate(all="ignore"):
        pos = ((x[m] - lo) * ft(bins) / (hi - lo)).astype(np.int64)
    pos[pos >= bins] = bins - 1
    np.add.at(h, pos, 1)
    return h


def ref_unique_dim(self, dim, return_inverse=False, return_counts=False):
    """unique_dim: the unique slices along dim, in lexicographic order of their elements
    (NaN largest; a slice holding NaN equals no other); inverse has size(dim).  An empty
    self comes back whole, with empty inverse and counts."""
    a = np.asarray(self)
    if a.size == 0:
        return a.copy(), _EMPTY, _EMPTY
    ax = dim % a.ndim if a.ndim else 0
    x = np.moveaxis(a, ax, 0).reshape(a.shape[ax] if a.ndim else 1, -1)
    r = _rank(x)
    n = x.shape[0]
    # np.lexsort's last key is the primary one: column 0 goes last (stable sort)
    order = np.lexsort(r.T[::-1]) if r.shape[1] else np.arange(n)
    nan_rows = np.isnan(x).any(axis=1) if x.dtype.kind == "f" else np.zeros(n, bool)
    starts = [j for j in range(n) if j == 0 or nan_rows[order[j]] or not np.array_equal(r[order[j]], r[order[j - 1]])]
    groups = len(starts)
    inverse = np.zeros(n, np.int64)
    counts = np.zeros(groups, np.int64)
    for g in range(groups):
        end = starts[g + 1] if g + 1 < groups else n
        inverse[order[starts[g]:end]] = g
        counts[g] = end - starts[g]
    values = np.take(a, order[starts], axis=ax) if a.ndim else a.copy()
    return (values, inverse if return_inverse else _EMPTY, counts if return_counts else _EMPTY)


def ref_unique_any(self, return_inverse=False, return_counts=False, dim=None):
    """unique (torch.unique's signature): _unique2 without dim, unique_dim with it."""
    if dim is None:
        return ref_unique(self, return_inverse, return_counts)
    return ref_unique_dim(self, dim, return_inverse, return_counts)

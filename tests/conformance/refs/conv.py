"""NumPy references for convolution and pooling (kernels/cpu/conv.c, kernels/cpu/pool.c).

Straight from the definitions, in float64: a convolution is a sum over kernel taps of
shifted, strided slices of the zero-padded input (einsum per tap and group); a
transposed convolution scatters every input element times the kernel into a full-size
buffer that is then cropped; pooling loops over output positions and lists each
window's taps.  Lists of one value apply to every spatial dim, as PyTorch's.
"""
import numpy as np


def _expand(v, n):
    v = list(v)
    return v * n if len(v) == 1 else v


def _batch(x, nsp):
    """(array with a batch dim, whether the input had one)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == nsp + 1:
        return x[None], False
    return x, True


def _conv_nd(x, w, b, stride, pad_lo, pad_hi, dil, groups):
    """x [N, C, H, W], w [O, C/g, kh, kw] (float64); explicit per-side padding."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dil
    xp = np.pad(x, ((0, 0), (0, 0), (pad_lo[0], pad_hi[0]), (pad_lo[1], pad_hi[1])))
    oh = (h + pad_lo[0] + pad_hi[0] - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pad_lo[1] + pad_hi[1] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for ki in range(kh):
        for kj in range(kw):
            patch = xp[:, :, ki * dh: ki * dh + sh * (oh - 1) + 1: sh, kj * dw: kj * dw + sw * (ow - 1) + 1: sw]
            for g in range(groups):
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og, :, ki, kj])
    if b is not None:
        out += np.asarray(b, dtype=np.float64)[None, :, None, None]
    return out


def _conv(input, weight, bias, stride, pad_lo, pad_hi, dilation, groups, nsp):
    x, batched = _batch(input, nsp)
    w = np.asarray(weight, dtype=np.float64)
    if nsp == 1:  # as 2-D with height 1
        x, w = x[:, :, None, :], w[:, :, None, :]
        stride, dilation = [1] + list(stride), [1] + list(dilation)
        pad_lo, pad_hi = [0] + list(pad_lo), [0] + list(pad_hi)
    out = _conv_nd(x, w, bias, stride, pad_lo, pad_hi, dilation, groups)
    if nsp == 1:
        out = out[:, :, 0, :]
    return out if batched else out[0]


def ref_conv(input, weight, bias, stride, padding, dilation, groups, nsp):
    p = _expand(padding, nsp)
    return _conv(input, weight, bias, _expand(stride, nsp), p, p, _expand(dilation, nsp), groups, nsp)


def ref_conv_mode(input, weight, bias, stride, padding, dilation, groups, nsp):
    """The padding="valid"/"same" overloads: "same" pads d * (k - 1), the odd one after."""
    d = _expand(dilation, nsp)
    k = np.shape(weight)[2:]
    if padding == "same":
        total = [d[i] * (k[i] - 1) for i in range(nsp)]
        lo = [t // 2 for t in total]
        hi = [t - t // 2 for t in total]
    else:
        lo = hi = [0] * nsp
    return _conv(input, weight, bias, _expand(stride, nsp), lo, hi, d, groups, nsp)


def ref_conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nsp):
    """out[n, g*og + o, iy*s - p + ky*d, ...] += x[n, g*cg + c, iy, ...] * w[g*cg + c, o, ky, ...]."""
    x, batched = _batch(input, nsp)
    w = np.asarray(weight, dtype=np.float64)
    s, p, op, d = (_expand(v, nsp) for v in (stride, padding, output_padding, dilation))
    if nsp == 1:
        x, w = x[:, :, None, :], w[:, :, None, :]
        s, p, op, d = [1] + s, [0] + p, [0] + op, [1] + d
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    fh = (h - 1) * s[0] + d[0] * (kh - 1) + 1 + op[0]
    fw = (wd - 1) * s[1] + d[1] * (kw - 1) + 1 + op[1]
    full = np.zeros((n, og * groups, fh, fw))
    for ki in range(kh):
        for kj in range(kw):
            for g in range(groups):
                contrib = np.einsum("nchw,co->nohw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, ki, kj])
                full[:, g * og:(g + 1) * og, ki * d[0]: ki * d[0] + s[0] * (h - 1) + 1: s[0],
                     kj * d[1]: kj * d[1] + s[1] * (wd - 1) + 1: s[1]] += contrib
    out = full[:, :, p[0]: fh - p[0], p[1]: fw - p[1]]
    if bias is not None:
        out = out + np.asarray(bias, dtype=np.float64)[None, :, None, None]
    if nsp == 1:
        out = out[:, :, 0, :]
    return out if batched else out[0]


# ---- pooling ---------------------------------------------------------------------------

def _pool_out(size, k, p, s, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def _planes(self, nsp):
    """(array [N, C, H, W] in float64, a function restoring the input's layout)."""
    x = np.asarray(self)
    batched = x.ndim == nsp + 2
    if not batched:
        x = x[None]
    if nsp == 1:
        x = x[:, :, None, :]

    def back(a):
        if nsp == 1:
            a = a[:, :, 0, :]
        return a if batched else a[0]
    return x.astype(np.float64), back


def _max_windows(x, windows_h, windows_w):
    """Max and flat index (h * W + w) over each window; NaN wins (the last NaN, as
    PyTorch's `val > max || isnan(val)` scan), else the first maximum."""
    n, c, h, w = x.shape
    oh, ow = len(windows_h), len(windows_w)
    vals = np.zeros((n, c, oh, ow))
    idx = np.zeros((n, c, oh, ow), dtype=np.int64)
    for i, ys in enumerate(windows_h):
        for j, xs in enumerate(windows_w):
            taps = [(y, xx) for y in ys for xx in xs]
            flat = np.array([y * w + xx for y, xx in taps], dtype=np.int64)
            win = np.stack([x[:, :, y, xx] for y, xx in taps], axis=-1)  # n, c, taps
            nan = np.isnan(win)
            last_nan = win.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
            first_max = np.argmax(np.where(nan, -np.inf, win), axis=-1)
            pick = np.where(nan.any(axis=-1), last_nan, first_max)
            vals[:, :, i, j] = np.take_along_axis(win, pick[..., None], axis=-1)[..., 0]
            idx[:, :, i, j] = flat[pick]
    return vals, idx


def _taps(o, size, k, s, p, d):
    return [t for t in range(o * s - p, o * s - p + (k - 1) * d + 1, d) if 0 <= t < size]


def _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, nsp):
    x, back = _planes(self, nsp)
    k = _expand(kernel_size, nsp)
    s = _expand(stride, nsp) if len(stride) else k
    p, d = _expand(padding, nsp), _expand(dilation, nsp)
    if nsp == 1:
        k, s, p, d = [1] + k, [1] + s, [0] + p, [1] + d
    h, w = x.shape[2:]
    oh, ow = _pool_out(h, k[0], p[0], s[0], d[0], ceil_mode), _pool_out(w, k[1], p[1], s[1], d[1], ceil_mode)
    vals, idx = _max_windows(x, [_taps(i, h, k[0], s[0], p[0], d[0]) for i in range(oh)],
                             [_taps(j, w, k[1], s[1], p[1], d[1]) for j in range(ow)])
    return back(vals), back(idx)


def ref_max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, nsp):
    return _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, nsp)[0]


def ref_max_pool_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, 2)


def ref_avg_pool(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nsp):
    x, back = _planes(self, nsp)
    k = _expand(kernel_size, nsp)
    s = _expand(stride, nsp) if len(stride) else k
    p = _expand(padding, nsp)
    if nsp == 1:
        k, s, p = [1] + k, [1] + s, [0] + p
    n, c, h, w = x.shape
    oh, ow = _pool_out(h, k[0], p[0], s[0], 1, ceil_mode), _pool_out(w, k[1], p[1], s[1], 1, ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * s[0] - p[0], j * s[1] - p[1]
            y1, x1 = min(y0 + k[0], h + p[0]), min(x0 + k[1], w + p[1])
            pool_size = (y1 - y0) * (x1 - x0)  # the window, padding included, not past it
            y0, x0, y1, x1 = max(y0, 0), max(x0, 0), min(y1, h), min(x1, w)
            if y0 >= y1 or x0 >= x1:
                continue
            if divisor_override:
                div = divisor_override
            elif count_include_pad:
                div = pool_size
            else:
                div = (y1 - y0) * (x1 - x0)
            out[:, :, i, j] = x[:, :, y0:y1, x0:x1].sum(axis=(2, 3)) / div
    return back(out)


def _adaptive_bounds(o, size, out):
    return (o * size) // out, -((-(o + 1) * size) // out)  # floor, ceil


def ref_adaptive_avg_pool2d(self, output_size):
    x, back = _planes(self, 2)
    n, c, h, w = x.shape
    oh, ow = output_size
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        y0, y1 = _adaptive_bounds(i, h, oh)
        for j in range(ow):
            x0, x1 = _adaptive_bounds(j, w, ow)
            out[:, :, i, j] = x[:, :, y0:y1, x0:x1].sum(axis=(2, 3)) / ((y1 - y0) * (x1 - x0))
    return back(out)


def ref_adaptive_max_pool2d(self, output_size):
    x, back = _planes(self, 2)
    h, w = x.shape[2:]
    oh, ow = output_size
    vals, idx = _max_windows(x, [list(range(*_adaptive_bounds(i, h, oh))) for i in range(oh)],
                             [list(range(*_adaptive_bounds(j, w, ow))) for j in range(ow)])
    return back(vals), back(idx)



def ref_max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    """Values and indices along the last dim (the 2-d offsets h * W + w with h = 0)."""
    return _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, 1)


def ref_adaptive_max_pool1d(self, output_size):
    x = np.asarray(self)[..., None, :]
    vals, idx = ref_adaptive_max_pool2d(x, [1, output_size[0]])
    return vals[..., 0, :], idx[..., 0, :]

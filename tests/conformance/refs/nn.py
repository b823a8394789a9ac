"""NumPy references for the other neural-network ops (kernels/cpu/nn.c) and einsum.

Each follows PyTorch's definition (aten/src/ATen/native/...), computed with NumPy only.
The index arithmetic of the interpolations repeats PyTorch's float (or, for float64,
double) arithmetic, so the same source pixels are chosen."""
import numpy as np


def ref_one_hot(self, num_classes=-1):
    x = np.asarray(self).astype(np.int64)
    n = int(x.max()) + 1 if num_classes == -1 else int(num_classes)
    return (x[..., None] == np.arange(n)).astype(np.int64)


def ref_pad(self, pad, mode="constant", value=None):
    """torch.nn.functional.pad: pad[2i], pad[2i+1] pad the i-th dim from the end (left,
    right); negative values crop. reflect/replicate/circular map each output index j to
    the input index j - left, reflected or clamped (PyTorch's kernels, on the uncropped
    input) or wrapped within the part left after the crop (PyTorch's circular rule)."""
    x = np.asarray(self)
    fill = 0 if value is None else value
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        size, lo, hi = x.shape[d], pad[2 * i], pad[2 * i + 1]
        k = np.arange(size + lo + hi) - lo
        valid = (k >= 0) & (k < size)
        if mode == "constant":
            k = np.where(valid, k, 0)
        elif mode == "reflect":
            k = np.abs(k)
            k = np.where(k >= size, 2 * (size - 1) - k, k)
        elif mode == "replicate":
            k = np.clip(k, 0, size - 1)
        elif mode == "circular":
            start = max(-lo, 0)
            kept = size - start - max(-hi, 0)
            k = start + np.mod(k - start, kept) if kept > 0 else k
        if size == 0:
            shape = list(x.shape)
            shape[d] = len(k)
            y = np.empty(shape, dtype=x.dtype)
        else:
            y = np.take(x, k, axis=d)
        if mode == "constant":
            idx = [slice(None)] * x.ndim
            idx[d] = ~valid
            y[tuple(idx)] = fill
        x = y
    return np.array(x, copy=True)


def _nearest_idx(out, inp, scale):
    j = np.arange(out)
    if out == inp:
        return j
    if out == 2 * inp:
        return j >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(inp) / np.float32(out)
    i = np.floor(j.astype(np.float32) * s).astype(np.int64)
    return np.minimum(i, inp - 1)


def ref_upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    x = np.asarray(self)
    ih = _nearest_idx(output_size[0], x.shape[2], scales_h)
    iw = _nearest_idx(output_size[1], x.shape[3], scales_w)
    return x[:, :, ih][:, :, :, iw]


def _linear_table(inp, out, align_corners, scale, ft):
    """PyTorch's compute_source_index_and_lambda in the opmath type ft."""
    j = np.arange(out)
    if out == inp:
        return j, j, np.ones(out, ft), np.zeros(out, ft)
    if align_corners:
        s = ft(inp - 1) / ft(out - 1) if out > 1 else ft(0)
        src = (s * j.astype(ft)).astype(ft)
    else:
        s = ft(1.0 / scale) if scale is not None and scale > 0 else ft(inp) / ft(out)
        src = (s * (j.astype(ft) + ft(0.5)) - ft(0.5)).astype(ft)
        src = np.where(src < 0, ft(0), src).astype(ft)
    i0 = np.minimum(np.floor(src).astype(np.int64), inp - 1)
    lam = np.clip(src - i0.astype(ft), 0, 1).astype(ft)
    i1 = i0 + (i0 < inp - 1)
    return i0, i1, (ft(1) - lam).astype(ft), lam


def ref_upsample_bilinear2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    x = np.asarray(self)
    ft = np.float64 if x.dtype == np.float64 else np.float32
    h0, h1, lh0, lh1 = _linear_table(x.shape[2], output_size[0], align_corners, scales_h, ft)
    w0, w1, lw0, lw1 = _linear_table(x.shape[3], output_size[1], align_corners, scales_w, ft)
    xd = x.astype(np.float64)
    lh0, lh1 = lh0.astype(np.float64)[:, None], lh1.astype(np.float64)[:, None]
    lw0, lw1 = lw0.astype(np.float64)[None, :], lw1.astype(np.float64)[None, :]
    x00 = xd[:, :, h0][:, :, :, w0]
    x01 = xd[:, :, h0][:, :, :, w1]
    x10 = xd[:, :, h1][:, :, :, w0]
    x11 = xd[:, :, h1][:, :, :, w1]
    return lh0 * (lw0 * x00 + lw1 * x01) + lh1 * (lw0 * x10 + lw1 * x11)


def ref_pixel_shuffle(self, upscale_factor):
    x = np.asarray(self)
    r = upscale_factor
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def ref_pixel_unshuffle(self, downscale_factor):
    x = np.asarray(self)
    r = downscale_factor
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def ref_glu(self, dim=-1):
    x = np.asarray(self)
    a, b = np.split(x, 2, axis=dim)
    return a * (1.0 / (1.0 + np.exp(-b.astype(np.float64))))


def ref_prelu(self, weight):
    x = np.asarray(self).astype(np.float64)
    w = np.asarray(weight).astype(np.float64).reshape(-1)
    if x.ndim >= 2 and w.size > 1:
        w = w.reshape([1, w.size] + [1] * (x.ndim - 2))
    elif w.size == 1:
        w = w.reshape(())
    return np.where(x > 0, x, w * x)


def ref_einsum(equation, tensors):
    """np.einsum in the operands' (common) dtype; float16/bfloat16 arrive as float32,
    and float32 is summed in float64 then rounded once, as our BLAS-backed products are
    compared with a tolerance.  Integers and bools are computed in int64: their sum is
    int64 (einsum_dtype in cases_lib.py; numpy would or bools together), and a narrower
    result, or a bool copy, is the same value cast back."""
    arrs = [np.asarray(t) for t in tensors]
    if arrs and all(a.dtype.kind == "f" for a in arrs):
        arrs = [a.astype(np.float64) for a in arrs]
    elif arrs and all(a.dtype.kind in "biu" for a in arrs):
        arrs = [a.astype(np.int64) for a in arrs]
    return np.einsum(equation, *arrs)


def ref_upsample_nearest1d(self, output_size, scales=None):
    x = np.asarray(self)
    return x[:, :, _nearest_idx(output_size[0], x.shape[2], scales)]


def ref_upsample_linear1d(self, output_size, align_corners, scales=None):
    x = np.asarray(self)
    ft = np.float64 if x.dtype == np.float64 else np.float32
    w0, w1, lw0, lw1 = _linear_table(x.shape[2], output_size[0], align_corners, scales, ft)
    xd = x.astype(np.float64)
    return lw0.astype(np.float64) * xd[:, :, w0] + lw1.astype(np.float64) * xd[:, :, w1]

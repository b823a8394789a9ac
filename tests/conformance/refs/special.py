"""References for erfinv, logit and logit_backward (ops/native_functions.yaml, after
erfc): NumPy and the math module only, in float64, rounded to the input's dtype."""
import math
from fractions import Fraction

import numpy as np


def _erfinv1(x):
    """erfinv of one float64 by bisection on erf (erfc for |x| > 0.5, where 1 - |x|
    is exact and erf(r) - |x| would cancel): the float64 r where the sign changes."""
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    a = abs(x)
    if a == 1:
        return math.copysign(math.inf, x)
    if a == 0:
        return x
    if a <= 0.5:
        def below(r):
            return math.erf(r) < a
    else:
        q = 1.0 - a

        def below(r):
            return math.erfc(r) > q
    lo, hi = 0.0, 30.0
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if below(mid):
            lo = mid
        else:
            hi = mid
    return math.copysign(hi, x)


def ref_erfinv(self):
    x = np.asarray(self)
    return np.vectorize(_erfinv1, otypes=[np.float64])(x.astype(np.float64)).astype(x.dtype)


def _logit1(x):
    """log(x / (1 - x)) of one float64: near 1/2 as log1p((2x - 1) / (1 - x)) with the
    ratio formed exactly (Fraction) and rounded once, elsewhere log(x) - log1p(-x)."""
    if math.isnan(x) or x < 0 or x > 1:
        return math.nan
    if x == 0:
        return -math.inf
    if x == 1:
        return math.inf
    if 0.25 <= x <= 0.75:
        f = Fraction(x)
        return math.log1p(float((2 * f - 1) / (1 - f)))
    return math.log(x) - math.log1p(-x)


def ref_logit(self, eps=None):
    x = np.asarray(self)
    xd = x.astype(np.float64)
    if eps is not None:
        e = float(np.asarray(eps, dtype=x.dtype))  # the kernel's eps is in the dtype
        hi = float(np.asarray(1, dtype=x.dtype) - np.asarray(eps, dtype=x.dtype))
        xd = np.where(np.isnan(xd), xd, np.clip(xd, e, hi))
    return np.vectorize(_logit1, otypes=[np.float64])(xd).astype(x.dtype)


def ref_logit_backward(grad_output, self, eps=None):
    """PyTorch's logit_backward: dy / (x (1 - x)); without eps NaN outside [0, 1], with
    it 0 outside [eps, 1 - eps]; dy * inf at x = 0 or 1."""
    x = np.asarray(self)
    dt = np.result_type(np.asarray(grad_output), x)
    dy = np.asarray(grad_output, dtype=np.float64)
    xd = x.astype(np.float64)
    if eps is None:
        lo, hi, outside = 0.0, 1.0, math.nan
    else:
        lo = float(np.asarray(eps, dtype=dt))
        hi = float(np.asarray(1, dtype=dt) - np.asarray(eps, dtype=dt))
        outside = 0.0
    with np.errstate(all="ignore"):
        inner = np.where((xd == 0) | (xd == 1), dy * math.inf, dy / (xd * (1 - xd)))
        out = np.where((xd < lo) | (xd > hi), outside, inner)
    return np.broadcast_to(out, np.broadcast_shapes(dy.shape, xd.shape)).astype(dt)

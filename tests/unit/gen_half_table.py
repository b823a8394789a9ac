#!/usr/bin/python3
"""Write the oracle table test_half reads: float16/bfloat16 conversions and the
scalar math of include/libops/ops_scalar_math.h, computed with NumPy and Python's math.

    gen_half_table.py OUTPUT

One record per line, every number a hex bit pattern (exact, locale-free):

    h2f <half bits> <float32 bits>     every one of the 65536 float16 patterns
    b2f <bf16 bits> <float32 bits>     every one of the 65536 bfloat16 patterns
    f2h <float32 bits> <half bits>     float32 -> float16, round to nearest even
    f2b <float32 bits> <bf16 bits>     float32 -> bfloat16, round to nearest even
    fn <name> <float32 bits of x> <float64 bits of f(x)>
    fn4 <name> <x> <a> <b> <c> <f(x, a, b, c)>   (float64 bits; nan_to_num)
    k16 <op> <65536 x 4 hex digits>     op applied to every float16 pattern, in order
    kb16 <op> <65536 x 4 hex digits>    the same for every bfloat16 pattern

float16 conversions are NumPy's own (astype).  NumPy has no bfloat16: its rounding is
computed here from first principles, by choosing the nearer of the two bfloat16
neighbours of each float32 in float64 arithmetic (ties to the even pattern), which is
a different method from the bit trick the library uses.  f(x) is evaluated in float64
from its mathematical definition with Python's math module; each x is a float32 so
that the float and the double forms can be checked on the same input.

The k16/kb16 records are the kernels' contract for the 16-bit dtypes: compute in
float32, round once.  NumPy's float16 loops do exactly that; for bfloat16 the float32
result of NumPy's float32 loop is rounded with the oracle above.
"""

import math
import sys

import numpy as np

SEED = 20240611


def f32_bits(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def interesting_float32(rng):
    """float32 inputs for the f2h/f2b records, as uint32 bit patterns."""
    pats = []
    # Uniform over all bit patterns: every exponent, NaN payloads, both signs.
    pats.append(rng.integers(0, 2**32, size=3000, dtype=np.uint64).astype(np.uint32))
    # Uniform over the float16 range and just below it (exponents -27 .. 16).
    exps = rng.integers(-27, 17, size=2000)
    mants = rng.random(2000) + 1.0
    signs = np.where(rng.random(2000) < 0.5, -1.0, 1.0)
    pats.append(f32_bits(signs * mants * np.exp2(exps.astype(np.float64))))

    # Exact ties between neighbouring float16 values (normal and subnormal), with the
    # lower neighbour even and odd, and one float32 ulp either side of each tie.
    h = rng.integers(0, 0x7BFF, size=800, dtype=np.uint16)
    h = np.concatenate([h, np.arange(0, 0x0410, dtype=np.uint16)[::3]])
    lo = h.view(np.float16).astype(np.float64)
    hi = (h + 1).view(np.float16).astype(np.float64)
    mid = f32_bits((lo + hi) / 2)  # exact in float32: a half has 11 significant bits
    pats += [mid, mid - 1, mid + 1]

    # Exact ties between neighbouring bfloat16 values: low 16 bits 0x8000.
    b = rng.integers(0, 0x7F7F, size=800, dtype=np.uint32)
    b = np.concatenate([b, np.arange(0, 0x0090, dtype=np.uint32)])
    tie = (b << 16) | 0x8000
    pats += [tie, tie - 1, tie + 1, tie | 0x80000000]

    special = [
        0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 65504.0, -65504.0, 65519.0, 65519.996,
        65520.0, -65520.0, 65536.0, 1e10, -1e10, 1e-10, 6.103515625e-05,
        6.097555160522461e-05, 5.960464477539063e-08, 2.9802322387695312e-08,
        2.980232594040899e-08, 1.7881393432617188e-07, np.finfo(np.float32).max,
        -np.finfo(np.float32).max, np.finfo(np.float32).tiny, math.inf, -math.inf,
        1.0 / 3.0, 3.140625, 0.1, -0.1, 1.00048828125, 1.000732421875, 2049.0, 2051.0,
    ]
    pats.append(f32_bits(special))
    pats.append(np.array([
        0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x3F808000, 0x3F818000,
        0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF, 0xFF7F8000, 0x7F800000, 0xFF800000,
        0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FFFFFFF,
        0x7FFF0000, 0x7F810000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x33000000,
        0x33000001, 0x32FFFFFF, 0x33400000, 0x387FE000, 0x387FF000,
    ], dtype=np.uint32))
    return np.unique(np.concatenate([p.astype(np.uint32) for p in pats]))


def float_to_bfloat16_oracle(bits):
    with np.errstate(all="ignore"):
        return _float_to_bfloat16_oracle(bits)


def _float_to_bfloat16_oracle(bits):
    """Round float32 bit patterns to bfloat16, nearest with ties to even."""
    bits = np.asarray(bits, dtype=np.uint32)
    sign = bits & np.uint32(0x80000000)
    mag = bits & np.uint32(0x7FFFFFFF)
    x = mag.view(np.float32).astype(np.float64)
    lo = mag & np.uint32(0xFFFF0000)  # truncation: the neighbour towards zero
    hi = lo + np.uint32(0x10000)       # the neighbour away from zero (may be inf)
    lo_val = lo.view(np.float32).astype(np.float64)
    with np.errstate(over="ignore"):
        hi_val = hi.view(np.float32).astype(np.float64)
    # Rounding past the largest finite value goes to inf, which for the purpose of
    # distances sits where the next binade would start: 2^128.
    hi_val = np.where(hi == 0x7F800000, 2.0**128, hi_val)
    d_lo = x - lo_val
    d_hi = hi_val - x
    lo_even = ((lo >> 16) & 1) == 0
    take_hi = (d_hi < d_lo) | ((d_hi == d_lo) & ~lo_even)
    out = np.where(take_hi, hi, lo) >> 16
    finite = mag < 0x7F800000
    out = np.where(finite, out, mag >> 16)  # inf stays inf
    nan = mag > 0x7F800000
    out = np.where(nan, 0x7FC0, out)        # any NaN; the test only asks "is NaN"
    return (out | (sign >> 16)).astype(np.uint16)


# ---- scalar math oracles (float64, from the definitions) ---------------------------

def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)  # no overflow for x < 0
    return e / (1.0 + e)


def gelu(x):
    # Phi(x) = (1 + erf(x/sqrt2))/2 = erfc(-x/sqrt2)/2; the erfc form is exact-ish
    # in the left tail where 1 + erf cancels.
    return 0.5 * x * math.erfc(-x / math.sqrt(2.0))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def rsqrt(x):
    if x == 0:
        return math.copysign(math.inf, x)
    if x < 0:
        return math.nan
    return 1.0 / math.sqrt(x)


def frac(x):
    if math.isinf(x):
        return math.nan
    return math.fmod(x, 1.0)  # exact, and keeps the sign of x like x - trunc(x)


def round_even(x):
    if math.isinf(x) or math.isnan(x):
        return x
    r = float(round(x))  # Python rounds half to even
    return math.copysign(r, x) if r == 0 else r


def integral(fn):
    """math.floor and friends return ints and refuse inf/NaN; keep x's zero sign."""
    def f(x):
        if math.isinf(x) or math.isnan(x):
            return x
        r = float(fn(x))
        return math.copysign(r, x) if r == 0 else r
    return f


def sign(x):
    # PyTorch's sign: NaN gives 0 (NumPy's gives NaN), zeros give +0.
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0


def relu(x):
    return x if (x != x or x > 0) else 0.0


FUNCS = {
    "sigmoid": sigmoid,
    "silu": lambda x: x * sigmoid(x),
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "rsqrt": rsqrt,
    "frac": frac,
    "round_even": round_even,
    "trunc": integral(math.trunc),
    "floor": integral(math.floor),
    "ceil": integral(math.ceil),
    "sign": sign,
    "relu": relu,
}


def math_inputs(rng):
    xs = list(np.linspace(-12.0, 12.0, 241))
    xs += list(rng.normal(0.0, 3.0, size=400))
    xs += list(rng.uniform(-100.0, 100.0, size=100))
    xs += [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1e-8, -1e-8, 1e-30,
           -30.0, 30.0, -87.0, 87.0, -88.5, 88.5, -120.0, 120.0, 1e6, -1e6,
           8388607.5, -8388607.5, 8388608.0, -8388609.0, 16777216.0, 4194303.75, -0.75,
           math.inf, -math.inf, math.nan]
    xs = np.asarray(xs, dtype=np.float32)  # the inputs are float32 values
    return [float(v) for v in xs]


# NumPy ufuncs run through the libops ops of the same meaning (test_half.c's table).
KERNEL_OPS = {
    "neg": np.negative, "abs": np.absolute, "sqrt": np.sqrt, "reciprocal": np.reciprocal,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.rint,
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
}


def kernel_records(all16):
    out = []
    halves = all16.view(np.float16)
    bf_as_f32 = (all16.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(all="ignore"):
        for name, uf in KERNEL_OPS.items():
            h = uf(halves).view(np.uint16)
            out.append("k16 %s %s" % (name, h.astype(">u2").tobytes().hex()))
            b = float_to_bfloat16_oracle(uf(bf_as_f32).view(np.uint32))
            out.append("kb16 %s %s" % (name, b.astype(">u2").tobytes().hex()))
    return out


def main():
    out_path = sys.argv[1]
    rng = np.random.default_rng(SEED)
    lines = ["# generated by tests/unit/gen_half_table.py (NumPy %s); do not edit" % np.__version__]

    all16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        h2f = all16.view(np.float16).astype(np.float32).view(np.uint32)
    for h, f in zip(all16.tolist(), h2f.tolist()):
        lines.append("h2f %04x %08x" % (h, f))
    # bfloat16 is the top half of a float32: widening appends 16 zero bits.
    for b in all16.tolist():
        lines.append("b2f %04x %08x" % (b, b << 16))

    lines += kernel_records(all16)

    pats = interesting_float32(rng)
    with np.errstate(over="ignore", invalid="ignore"):
        f2h = pats.view(np.float32).astype(np.float16).view(np.uint16)
    for u, h in zip(pats.tolist(), f2h.tolist()):
        lines.append("f2h %08x %04x" % (u, h))
    for u, b in zip(pats.tolist(), float_to_bfloat16_oracle(pats).tolist()):
        lines.append("f2b %08x %04x" % (u, b))

    def d_bits(v):
        return int(np.float64(v).view(np.uint64))

    xs = math_inputs(rng)
    for name, fn in FUNCS.items():
        for x in xs:
            try:
                y = fn(x)  # every oracle handles NaN itself
            except OverflowError:
                y = math.inf
            lines.append("fn %s %08x %016x" % (name, int(f32_bits(x)), d_bits(y)))

    # nan_to_num against NumPy's own, with explicit and default-like replacements.
    for x in xs:
        for (n, p, m) in [(0.0, 3.0e38, -3.0e38), (1.5, 65504.0, -65504.0), (-2.0, 7.0, -7.0)]:
            y = float(np.nan_to_num(np.float64(x), nan=n, posinf=p, neginf=m))
            lines.append("fn4 nan_to_num %08x %016x %016x %016x %016x"
                         % (int(f32_bits(x)), d_bits(n), d_bits(p), d_bits(m), d_bits(y)))

    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

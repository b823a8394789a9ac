"""pow and atan2 at float16 and bfloat16 through the float32 vector loops
(kernels/cpu/binary.c half_binary; docs/cpu-dispatch.md "Activations") at every CPU
level this machine runs, each in a child process with OPS_CPU_CAPABILITY set.

Every float16 and bfloat16 bit pattern (NaN payloads, infinities, subnormals, both
zeros) as the base of pow against exponents with their own forms (0, 1, 2, 3, 0.5,
-0.5, -1, -2) and others, as tensor^scalar (a stride-0 exponent: the scalar-exponent
loop), tensor^tensor and scalar^tensor, and as atan2's first argument against a set of
second ones; then a million random pairs of bit patterns for both ops.  Two checks:

- the rule, bit for bit: each half result is libops's own float32 op on the widened
  inputs, rounded once to nearest even (NaN as the scalar conversion stores it), in
  every layout (contiguous, odd start, strided, broadcast), out= and in place;
- the oracle: NumPy's float32 pow/arctan2 on the same inputs rounded to the half type.
  Two float32 implementations may differ in the last bits (SLEEF's and glibc's; the
  documented error is under 1 ulp, 42 ulp of the smallest subnormal for powf's
  subnormal results), so where the rounded results differ the half result must lie
  between the roundings of NumPy's value moved by a few float32 ulps either way, which
  only happens next to a rounding midpoint; anything else (truncation, a wrong rounding
  mode, a wrong special case) fails.  torch (when installed) is checked the same way
  at bfloat16 (pow and atan2) and float16 (pow; torch 1.13 has no float16 atan2 on the
  CPU).  Run by `meson test` (suite python)."""

import os
import subprocess
import sys
import unittest

LEVELS = ("default", "avx2", "avx512")

CHECK = r"""
import ctypes
import numpy as np, libops as L
np.seterr(all="ignore")
rng = np.random.default_rng(17)
try:
    import torch
except ImportError:
    torch = None

def bf16_round(f32):
    # round-to-nearest-even to bfloat16, NaN -> quiet (u >> 16 | 0x40): the scalar rule
    f32 = np.asarray(f32, np.float32)
    shape = f32.shape
    f32 = f32.reshape(-1)
    u = f32.view(np.uint32).astype(np.uint64)
    c16, one = np.uint64(16), np.uint64(1)
    r = ((u + np.uint64(0x7fff) + ((u >> c16) & one)) >> c16) & np.uint64(0xffff)
    nan = np.isnan(f32)
    r[nan] = (u[nan] >> c16) | np.uint64(0x40)
    return r.astype(np.uint16).reshape(shape)

def to_half_bits(dt, f32):
    f32 = np.asarray(f32, np.float32)
    if dt == "float16":
        return f32.astype(np.float16).view(np.uint16)
    return bf16_round(f32)

def widen(dt, bits):
    bits = np.asarray(bits, np.uint16)
    if dt == "float16":
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)

def tensor(dt, bits):
    # a libops half tensor holding these bit patterns (copied in, no conversion)
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    t = L.empty(list(b.shape), dtype=getattr(L, dt))
    ctypes.memmove(t.data_ptr(), b.ctypes.data, b.nbytes)
    return t

def bits_of(t):
    t = t.contiguous()
    out = np.empty(t.numel(), dtype=np.uint16)
    ctypes.memmove(out.ctypes.data, t.data_ptr(), out.nbytes)
    return out

def f32_tensor(v):
    return L.from_numpy(np.ascontiguousarray(np.asarray(v, np.float32)))

def check_rule(dt, got, f32_result, what):
    # got: half bits; f32_result: libops's float32 op on the widened inputs
    want = to_half_bits(dt, f32_result)
    gv, wv = widen(dt, got), widen(dt, want)
    nan = np.isnan(wv)
    bad = (np.isnan(gv) != nan) | (~nan & (got != want))
    assert not bad.any(), (what, int(bad.sum()), got[bad][:5], want[bad][:5])
    if dt == "float16":  # a NaN is stored as the conversion's quiet NaN 0x7e00 with its sign
        assert ((got[nan] & 0x7fff) == 0x7e00).all(), (what, "NaN bits")

def near(dt, got, ref32, what, max_mismatch=None):
    # got (half bits) against a float32 reference rounded: equal, or between the
    # roundings of the reference moved by K float32 ulps either way
    want = to_half_bits(dt, ref32)
    gv, wv = widen(dt, got), widen(dt, want)
    nan = np.isnan(wv)
    assert np.array_equal(np.isnan(gv), nan), (what, "NaN positions", int((np.isnan(gv) != nan).sum()),
                                                 ref32[np.isnan(gv) != nan][:5], gv[np.isnan(gv) != nan][:5])
    diff = ~nan & (gv != wv)
    if not diff.any():
        return 0
    r = ref32[diff].astype(np.float32)
    k = np.where(np.abs(r) < np.float32(1.1754944e-38), 64, 4).astype(np.int64)
    lo, hi = r.copy(), r.copy()
    for _ in range(64):
        step = k > 0
        lo = np.where(step, np.nextafter(lo, np.float32(-np.inf)), lo)
        hi = np.where(step, np.nextafter(hi, np.float32(np.inf)), hi)
        k -= 1
        if not step.any():
            break
    glo, ghi = widen(dt, to_half_bits(dt, lo)), widen(dt, to_half_bits(dt, hi))
    g = gv[diff]
    ok = (g >= glo) & (g <= ghi)
    assert ok.all(), (what, int((~ok).sum()), r[~ok][:5], g[~ok][:5])
    n = int(diff.sum())
    if max_mismatch is not None:
        assert n <= max_mismatch, (what, n)
    return n

ALL = np.arange(65536, dtype=np.uint32).astype(np.uint16)
EXPS = [0.0, 1.0, 2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 2.5, 1.7, -3.0, 0.1, -0.0, 7.0, 11.0, -1.5, 4.0, 0.333,
        np.inf, -np.inf, np.nan, 100.0, -100.0]
SECOND = [1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -3.0, 1e-3, 300.0, 6e-8]
counts = {}
for dt in ("float16", "bfloat16"):
    hdt = getattr(L, dt)
    xs = ALL
    x32 = widen(dt, xs)
    X = tensor(dt, xs)
    X32 = f32_tensor(x32)
    mism = 0
    # ---- pow, every bit pattern as the base --------------------------------------
    for e in EXPS:
        eb = to_half_bits(dt, np.float32(e))
        e32 = widen(dt, eb)  # the exponent as the half tensor holds it
        own32 = L.pow(X32, float(e32)).numpy()
        E = tensor(dt, np.full(65536, eb, np.uint16))
        for what, got in ((f"{dt} x^{e} (scalar)", bits_of(L.pow(X, float(e32)))),
                          (f"{dt} x^{e} (tensor)", bits_of(L.pow(X, E))),
                          (f"{dt} x^{e} (0-dim)", bits_of(L.pow(X, tensor(dt, eb.reshape(()))))),
                          (f"{dt} x^{e} (stride-0 row)", bits_of(L.pow(X.view(256, 256), tensor(dt, np.full(1, eb, np.uint16)))).reshape(-1))):
            check_rule(dt, got, own32, what)
            with np.errstate(all="ignore"):
                mism += near(dt, got, np.power(x32, e32), what + " vs numpy")
        # scalar ^ tensor: e as the base, every pattern as the exponent
        got = bits_of(L.pow(float(e32), X))
        check_rule(dt, got, L.pow(float(e32), X32).numpy(), f"{dt} {e}^x")
        mism += near(dt, got, np.power(np.full(65536, e32, np.float32), x32), f"{dt} {e}^x vs numpy")
    # ---- atan2, every bit pattern first -------------------------------------------
    for b in SECOND:
        bb = to_half_bits(dt, np.float32(b))
        b32 = widen(dt, bb)
        B = tensor(dt, np.full(65536, bb, np.uint16))
        own32 = L.atan2(X32, f32_tensor(np.full(65536, b32, np.float32))).numpy()
        for what, got in ((f"{dt} atan2(x, {b})", bits_of(L.atan2(X, B))),
                          (f"{dt} atan2({b}, x)", None)):
            if got is None:
                got = bits_of(L.atan2(B, X))
                check_rule(dt, got, L.atan2(f32_tensor(np.full(65536, b32, np.float32)), X32).numpy(), what)
                mism += near(dt, got, np.arctan2(np.full(65536, b32, np.float32), x32), what + " vs numpy")
                continue
            check_rule(dt, got, own32, what)
            mism += near(dt, got, np.arctan2(x32, np.full(65536, b32, np.float32)), what + " vs numpy")
    # ---- random pairs of bit patterns ---------------------------------------------
    n = 1 << 20
    a = rng.integers(0, 65536, n).astype(np.uint16)
    b = rng.integers(0, 65536, n).astype(np.uint16)
    # exponents of moderate size too, so most results are finite and not 0/1
    b[: n // 2] = to_half_bits(dt, rng.uniform(-8, 8, n // 2).astype(np.float32))
    a32, b32 = widen(dt, a), widen(dt, b)
    A, B = tensor(dt, a), tensor(dt, b)
    for op, npf in (("pow", np.power), ("atan2", np.arctan2)):
        got = bits_of(getattr(L, op)(A, B))
        check_rule(dt, got, getattr(L, op)(f32_tensor(a32), f32_tensor(b32)).numpy(), f"{dt} {op} random")
        m = near(dt, got, npf(a32, b32), f"{dt} {op} random vs numpy", max_mismatch=n // 1000)
        mism += m
        # layouts: odd start, strided, transposed, out= and in place give the same bits
        base = tensor(dt, np.repeat(a[: 2 * 4099], 1))
        sa = base[1:8197:2]
        sb = B[: 4098]
        got_s = bits_of(getattr(L, op)(sa, sb))
        assert np.array_equal(got_s, bits_of(getattr(L, op)(sa.contiguous(), sb))), (dt, op, "strided")
        got_t = bits_of(getattr(L, op)(A[:4096].view(64, 64).t(), B[:4096].view(64, 64).t()))
        assert np.array_equal(got_t, got[:4096].reshape(64, 64).T.reshape(-1)), (dt, op, "transposed")
        o = L.zeros([n], dtype=hdt)
        getattr(L, op)(A, B, out=o)
        assert np.array_equal(bits_of(o), got), (dt, op, "out=")
        t = A.clone()
        getattr(t, op + "_")(B)
        assert np.array_equal(bits_of(t), got), (dt, op, "in place")
        # torch where installed: bfloat16 both, float16 pow only (torch 1.13 has no
        # float16 atan2 on the CPU)
        if torch is not None and (dt == "bfloat16" or op == "pow"):
            tdt = getattr(torch, dt)
            ta = torch.from_numpy(a.view(np.int16)).view(tdt)
            tb = torch.from_numpy(b.view(np.int16)).view(tdt)
            tr = getattr(torch, op)(ta, tb).view(torch.int16).numpy().view(np.uint16)
            # torch gives 0 for some results below float32's normal range (atan2 of a
            # tiny quotient), where NumPy's and ours are the subnormal: compared above it
            big = ~(np.abs(npf(a32, b32)) < np.float32(1.1754944e-38))
            near(dt, got[big], widen(dt, tr[big]), f"{dt} {op} random vs torch", max_mismatch=n // 1000)
            tr = torch.pow(ta, 2.5).view(torch.int16).numpy().view(np.uint16)
            near(dt, bits_of(L.pow(A, 2.5)), widen(dt, tr), f"{dt} pow x^2.5 vs torch", max_mismatch=n // 1000)
    counts[dt] = mism
print(L.cpu_capability(), counts["float16"], counts["bfloat16"])
"""


def child(level):
    env = dict(os.environ, OPS_CPU_CAPABILITY=level)
    return subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=900,
                          cwd=os.path.dirname(os.path.abspath(__file__)))


class BinaryHalfTest(unittest.TestCase):
    def test_every_level_rounds_the_float32_op_once(self):
        ran = []
        for level in LEVELS:
            p = child(level)
            if "this CPU lacks" in p.stderr:
                continue
            self.assertEqual(p.returncode, 0, f"{level}: {p.stderr[-3000:]}")
            got_level, f16, bf16 = p.stdout.split()
            self.assertEqual(got_level, level)
            print(f"{level}: results next to a rounding midpoint that differ from NumPy's: "
                  f"float16 {f16}, bfloat16 {bf16}", file=sys.stderr)
            ran.append(level)
        self.assertIn("default", ran)


if __name__ == "__main__":
    unittest.main()

"""Largest error in ulps of the activations of kernels/cpu/vec/vec_act.c (elu, selu,
celu, softplus, log_sigmoid) at float32 and float64 against a long double reference (NumPy's longdouble:
x87 80-bit here), over 4M inputs: 2M evenly spaced in [-60, 60] and 2M log-uniform
magnitudes in [1e-30, 1e30] of both signs (docs/cpu-dispatch.md "Activations",
"Accuracy").  A result equal to the rounded reference counts 0; below the normal range
an ulp is the smallest subnormal.  Run at a level with OPS_CPU_CAPABILITY:

    OPS_CPU_CAPABILITY=avx2 PYTHONPATH=build/python python3 bench/act_accuracy.py

`--full` sweeps every float32 bit pattern instead (2^32 inputs, in blocks of 4M) against
a double reference (NumPy's float64 functions: their error, about 2^-52 relative, is a
few billionths of a float32 ulp), float64 as above; with mish added (its reference
x * tanh(softplus(x)) in double).  About 10-20 minutes a level on one core.
"""
import argparse
import sys
import time

import numpy as np

import libops as L

LD = np.longdouble
SELU_A = LD("1.6732632423543772848170429916717")
SELU_S = LD("1.0507009873554804934193349852946")


def inputs(dt, n=2_000_000):
    rng = np.random.default_rng(7)
    even = np.linspace(-60, 60, n)
    mag = 10.0 ** rng.uniform(-30, 30, n) * rng.choice([-1.0, 1.0], n)
    return np.concatenate([even, mag]).astype(dt)


def ulp_err(got, ref, dt):
    fi = np.finfo(dt)
    r = ref.astype(dt)
    ok = (got == r) | (np.isnan(got) & np.isnan(r))
    mag = np.abs(r).astype(LD)
    # the spacing at the reference's magnitude, the smallest subnormal below normal
    e = np.floor(np.log2(np.maximum(mag, LD(fi.tiny))))
    spacing = np.exp2(e - (fi.nmant))
    spacing = np.maximum(spacing, LD(fi.smallest_subnormal))
    err = np.abs(got.astype(LD) - ref) / spacing
    err[ok] = 0
    return float(np.nanmax(err))


def ulp_err_f32(got, ref):
    """ulp_err for float32 results against a float64 reference (the --full sweep)."""
    fi = np.finfo(np.float32)
    r = ref.astype(np.float32)
    ok = (got == r) | (np.isnan(got) & np.isnan(r))
    mag = np.abs(r).astype(np.float64)
    e = np.floor(np.log2(np.maximum(mag, float(fi.tiny))))
    spacing = np.maximum(np.exp2(e - fi.nmant), float(fi.smallest_subnormal))
    err = np.abs(got.astype(np.float64) - ref) / spacing
    err[ok] = 0
    if np.isnan(err).any():  # a NaN where the reference is a number (or the reverse)
        return float("inf"), int(np.flatnonzero(np.isnan(err))[0])
    k = int(np.argmax(err))
    return float(err[k]), k


def full_sweep(fns, stride=1):
    """Every float32 bit pattern (every stride-th block of them) through each function;
    the largest error and where."""
    block = 1 << 22
    worst = {name: (0.0, 0.0) for name in fns}
    t0 = time.time()
    for start in range(0, 1 << 32, block * stride):
        x = np.arange(start, start + block, dtype=np.uint64).astype(np.uint32).view(np.float32)
        x64 = x.astype(np.float64)
        t = L.from_numpy(x)
        for name, (f, ref) in fns.items():
            got = f(t).numpy()
            with np.errstate(all="ignore"):
                want = ref(x64)
            err, k = ulp_err_f32(got, want)
            if err > worst[name][0]:
                worst[name] = (err, float(x[k]))
    for name, (err, at) in worst.items():
        what = "all 2^32" if stride == 1 else f"every {stride}-th block of 2^22"
        print(f"{name} | float32 {what}: {err:.3f} ulp (at {at!r})")
    print(f"[{time.time() - t0:.0f} s]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="every float32 bit pattern")
    ap.add_argument("--stride", type=int, default=1,
                    help="with --full: only every N-th block of 2^22 patterns (a quick look)")
    args = ap.parse_args()
    fns = {
        "elu": (lambda t: L.elu(t), lambda x: np.where(x > 0, x, np.expm1(x))),
        "selu": (lambda t: L.selu(t),
                 lambda x: np.where(x > 0, SELU_S * x, SELU_S * SELU_A * np.expm1(x))),
        "celu (alpha 1.5)": (lambda t: L.celu(t, 1.5),
                             lambda x: np.where(x > 0, x, LD(1.5) * np.expm1(x / LD(1.5)))),
        # softplus(x) = log1p(e^x) (beta 1, x itself above the threshold 20, as PyTorch)
        "softplus": (lambda t: L.softplus(t),
                     lambda x: np.where(x > 20, x, np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))))),
        "log_sigmoid": (lambda t: L.log_sigmoid(t),
                        lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))),
    }
    print(L.cpu_capability())
    if args.full:
        one = np.float64(1.0)
        fns["mish"] = (lambda t: L.mish(t),
                       lambda x: x * np.tanh(np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))))
        # the references above in double (LD(1.5) and the SELU constants as float64)
        fns["selu"] = (fns["selu"][0], lambda x: np.where(x > 0, float(SELU_S) * x,
                                                          float(SELU_S) * float(SELU_A) * np.expm1(x)))
        fns["celu (alpha 1.5)"] = (fns["celu (alpha 1.5)"][0],
                                   lambda x: np.where(x > 0, x, 1.5 * one * np.expm1(x / 1.5)))
        full_sweep(fns, max(1, args.stride))
        return 0
    for name, (f, ref) in fns.items():
        row = [name]
        for dt in (np.float32, np.float64):
            a = inputs(dt)
            got = f(L.from_numpy(a)).numpy()
            with np.errstate(all="ignore"):
                want = ref(a.astype(LD))
            row.append(f"{ulp_err(got, want, dt):.2f}")
        print(" | ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())

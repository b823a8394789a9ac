"""Largest error in ulps of the activations of kernels/cpu/vec/vec_act.c (elu, selu,
celu, softplus, log_sigmoid) at float32 and float64 against a long double reference (NumPy's longdouble:
x87 80-bit here), over 4M inputs: 2M evenly spaced in [-60, 60] and 2M log-uniform
magnitudes in [1e-30, 1e30] of both signs (docs/cpu-dispatch.md "Activations",
"Accuracy").  A result equal to the rounded reference counts 0; below the normal range
an ulp is the smallest subnormal.  Run at a level with OPS_CPU_CAPABILITY:

    OPS_CPU_CAPABILITY=avx2 PYTHONPATH=build/python python3 bench/act_accuracy.py
"""
import sys

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


def main():
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

"""addmm's and linear's bias (self) on the CPU: every layout the copy of self into C
meets (kernels/cpu/linalg.c copy_mats: contiguous rows in one memcpy, a broadcast
element filled, the rest by typed element), against NumPy in float64: the broadcast
shapes [N], [1, N], [M, 1], [M, N] and 0-dim, transposed and strided self, beta=0
ignoring NaN/inf in self, out= (fresh, resized, transposed, out aliasing self) and the
in-place form, the float dtypes (OpenBLAS) and the integer/half dtypes (loop kernel),
linear with a contiguous and a strided bias.  Run by `meson test` (suite python)."""

import unittest

import numpy as np

import libops as L

M, K, N = 7, 5, 9


def arr(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def ref(self_, m1, m2, beta, alpha):
    p = alpha * (m1.astype(np.float64) @ m2.astype(np.float64))
    if beta == 0:
        return p + np.zeros(np.broadcast_shapes(self_.shape, p.shape))
    return beta * self_.astype(np.float64) + p


class AddmmBias(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(3)

    def data(self, shape, dt):
        if np.issubdtype(dt, np.integer):
            return self.rng.integers(-4, 5, size=shape).astype(dt)
        return self.rng.standard_normal(shape).astype(dt)

    def check(self, got, want, dt):
        tol = 1e-2 if dt == np.float16 else 1e-4 if dt == np.float32 else 1e-10
        np.testing.assert_allclose(arr(got), want, rtol=tol, atol=tol)

    def self_layouts(self, dt):
        """(name, libops self, numpy self) for every layout of a bias broadcast to M x N."""
        out = []
        for shape in [(N,), (1, N), (M, 1), (M, N), ()]:
            s = self.data(shape, dt)
            out.append((f"contiguous {shape}", L.from_numpy(s.copy()), s))
        st = self.data((N, M), dt)  # a transposed [M, N]
        out.append(("transposed", L.from_numpy(st.copy()).t(), st.T))
        sw = self.data((M, 2 * N), dt)  # every second column
        out.append(("strided columns", L.from_numpy(sw.copy())[:, ::2], sw[:, ::2]))
        sr = self.data((2 * M, N), dt)  # every second row
        out.append(("strided rows", L.from_numpy(sr.copy())[::2], sr[::2]))
        sv = self.data((2 * N,), dt)  # a strided [N]
        out.append(("strided [N]", L.from_numpy(sv.copy())[::2], sv[::2]))
        return out

    def test_functional_every_layout(self):
        for dt in (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8):
            m1, m2 = self.data((M, K), dt), self.data((K, N), dt)
            a, b = L.from_numpy(m1), L.from_numpy(m2)
            floats = not np.issubdtype(dt, np.integer)
            for name, s, sn in self.self_layouts(dt):
                for beta, alpha in ((1, 1), (2, 3), (0, 1)):
                    with self.subTest(dtype=dt.__name__, bias=name, beta=beta, alpha=alpha):
                        got = L.addmm(s, a, b, beta=beta, alpha=alpha)
                        self.check(got, ref(sn, m1, m2, beta, alpha), dt)
                if floats:
                    with self.subTest(dtype=dt.__name__, bias=name, form="transposed mat1"):
                        m1t = self.data((K, M), dt)
                        got = L.addmm(s, L.from_numpy(m1t).t(), b, beta=1.5, alpha=0.5)
                        self.check(got, ref(sn, m1t.T, m2, 1.5, 0.5), dt)

    def test_beta_zero_ignores_nan(self):
        for dt in (np.float32, np.float64):
            m1, m2 = self.data((M, K), dt), self.data((K, N), dt)
            for shape in [(N,), (M, 1), (M, N)]:
                with self.subTest(dtype=dt.__name__, shape=shape):
                    s = np.full(shape, np.nan, dt)
                    s.flat[0] = np.inf
                    got = L.addmm(L.from_numpy(s), L.from_numpy(m1), L.from_numpy(m2), beta=0, alpha=2)
                    self.assertFalse(np.isnan(arr(got)).any())
                    self.check(got, 2 * (m1.astype(np.float64) @ m2), dt)
                    # out= full of NaN: overwritten, not scaled by 0
                    o = L.from_numpy(np.full((M, N), np.nan, dt))
                    L.addmm(L.from_numpy(s), L.from_numpy(m1), L.from_numpy(m2), beta=0, alpha=1, out=o)
                    self.check(o, m1.astype(np.float64) @ m2, dt)

    def test_out_forms(self):
        for dt in (np.float32, np.float64, np.int64):
            m1, m2 = self.data((M, K), dt), self.data((K, N), dt)
            a, b = L.from_numpy(m1), L.from_numpy(m2)
            for name, s, sn in self.self_layouts(dt):
                want = ref(sn, m1, m2, 2, 1)
                with self.subTest(dtype=dt.__name__, bias=name, out="contiguous"):
                    o = L.from_numpy(np.zeros((M, N), dt))
                    L.addmm(s, a, b, beta=2, alpha=1, out=o)
                    self.check(o, want, dt)
                with self.subTest(dtype=dt.__name__, bias=name, out="resized"):
                    o = L.from_numpy(np.zeros((3,), dt)).clone()  # owned: it can be resized
                    L.addmm(s, a, b, beta=2, alpha=1, out=o)
                    self.check(o, want, dt)
                with self.subTest(dtype=dt.__name__, bias=name, out="transposed"):
                    o = L.from_numpy(np.zeros((N, M), dt)).t()
                    L.addmm(s, a, b, beta=2, alpha=1, out=o)
                    self.check(o, want, dt)
            with self.subTest(dtype=dt.__name__, out="self"):
                sn = self.data((M, N), dt)
                s = L.from_numpy(sn.copy())
                L.addmm(s, a, b, beta=2, alpha=1, out=s)
                self.check(s, ref(sn, m1, m2, 2, 1), dt)

    def test_inplace(self):
        for dt in (np.float32, np.float64, np.int64):
            m1, m2 = self.data((M, K), dt), self.data((K, N), dt)
            a, b = L.from_numpy(m1), L.from_numpy(m2)
            sn = self.data((M, N), dt)
            with self.subTest(dtype=dt.__name__, bias="contiguous"):
                s = L.from_numpy(sn.copy())
                s.addmm_(a, b, beta=2, alpha=1)
                self.check(s, ref(sn, m1, m2, 2, 1), dt)
            with self.subTest(dtype=dt.__name__, bias="transposed"):
                st = self.data((N, M), dt)
                s = L.from_numpy(st.copy()).t()
                s.addmm_(a, b, beta=1, alpha=1)
                self.check(s, ref(st.T, m1, m2, 1, 1), dt)

    def test_linear_bias(self):
        for dt in (np.float32, np.float64):
            for rows in (1, 32, 70):
                x, w = self.data((rows, K), dt), self.data((N, K), dt)
                bv = self.data((2 * N,), dt)
                want = x.astype(np.float64) @ w.T.astype(np.float64)
                lx, lw = L.from_numpy(x), L.from_numpy(w)
                with self.subTest(dtype=dt.__name__, rows=rows, bias="contiguous"):
                    self.check(L.nn.functional.linear(lx, lw, L.from_numpy(bv[:N].copy())), want + bv[:N], dt)
                with self.subTest(dtype=dt.__name__, rows=rows, bias="strided"):
                    self.check(L.nn.functional.linear(lx, lw, L.from_numpy(bv.copy())[::2]), want + bv[::2], dt)
                with self.subTest(dtype=dt.__name__, rows=rows, bias="none"):
                    self.check(L.nn.functional.linear(lx, lw), want, dt)
            with self.subTest(dtype=dt.__name__, input="3-D"):
                x3, w = self.data((2, 3, K), dt), self.data((N, K), dt)
                bias = self.data((N,), dt)
                got = L.nn.functional.linear(L.from_numpy(x3), L.from_numpy(w), L.from_numpy(bias))
                self.check(got, x3.astype(np.float64) @ w.T + bias, dt)


if __name__ == "__main__":
    unittest.main()

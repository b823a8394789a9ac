"""libops.Generator, libops.default_generator and the `generator=` argument of the
random ops, checked against an independent Philox4x32-10 written here in NumPy (the
stream layout of include/libops/ops_random.h); and the identity of Tensor.grad (`x.grad is
x.grad`).  Run by `meson test` (suite python) with the build tree's package first on
PYTHONPATH."""

import gc
import unittest
import weakref

import numpy as np

import libops as L

M32 = 0xFFFFFFFF


def philox_block(index, seed):
    """Philox4x32-10 of counter {index lo, index hi, 0, 0} under key {seed lo, seed hi}."""
    c = [index & M32, (index >> 32) & M32, 0, 0]
    k = [seed & M32, (seed >> 32) & M32]
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0 = 0xD2511F53 * c[0]
        p1 = 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
    return c


def philox_rand_float32(n, seed, offset=0):
    """rand(n) in float32: one word per element, its top 24 bits times 2^-24."""
    words = []
    for b in range((n + 3) // 4):
        words += philox_block(offset + b, seed)
    return (np.array(words[:n], dtype=np.uint64) >> 8).astype(np.float32) * np.float32(2.0 ** -24)


def arr(t):
    return np.array(t.tolist())


# Every random op of the schema with a `generator=` argument, as f(generator) -> tensor.
def _ops():
    probs = L.tensor([0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.5, 0.5] * 8)
    weights = L.tensor([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]])
    like = L.zeros(3, 4)
    return {
        "rand": lambda g: L.rand(3, 4, generator=g),
        "rand_float64": lambda g: L.rand(5, generator=g, dtype=L.float64),
        "randn": lambda g: L.randn(7, generator=g),
        "randint": lambda g: L.randint(1000, (6,), generator=g),
        "randint.low": lambda g: L.randint(-50, 50, (6,), generator=g),
        "randperm": lambda g: L.randperm(20, generator=g),
        "rand_like": lambda g: L.rand_like(like, generator=g),
        "randn_like": lambda g: L.randn_like(like, generator=g),
        "randint_like": lambda g: L.randint_like(like, 100, generator=g),
        "randint_like.low_dtype": lambda g: L.randint_like(like, -10, 10, generator=g),
        "bernoulli": lambda g: L.bernoulli(probs, generator=g),
        "bernoulli.p": lambda g: L.bernoulli(L.zeros(16), 0.5, generator=g),
        "bernoulli_.float": lambda g: L.zeros(16).bernoulli_(0.5, generator=g),
        "multinomial": lambda g: L.multinomial(weights, 3, generator=g),
        "multinomial.replacement": lambda g: L.multinomial(weights, 8, True, generator=g),
        "normal_": lambda g: L.zeros(9).normal_(2.0, 3.0, generator=g),
        "uniform_": lambda g: L.zeros(9).uniform_(-1.0, 1.0, generator=g),
        "exponential_": lambda g: L.zeros(9).exponential_(generator=g),
        "random_": lambda g: L.zeros(9, dtype=L.int32).random_(generator=g),
        "random_.from": lambda g: L.zeros(9, dtype=L.int64).random_(-5, 5, generator=g),
        "random_.to": lambda g: L.zeros(9, dtype=L.int64).random_(1000, generator=g),
        "rand.generator_out": lambda g: L.rand(8, generator=g, out=L.empty(8)),
        "randn.generator_out": lambda g: L.randn(8, generator=g, out=L.empty(8)),
        "randint.generator_out": lambda g: L.randint(100, (8,), generator=g, out=L.empty(8, dtype=L.int64)),
        "randperm.generator_out": lambda g: L.randperm(12, generator=g, out=L.empty(12, dtype=L.int64)),
    }


class TestGenerator(unittest.TestCase):
    def test_type_and_defaults(self):
        g = L.Generator()
        self.assertIsInstance(g, L.Generator)
        self.assertEqual(g.initial_seed(), 67280421310721)  # torch's default CPU seed
        self.assertEqual(g.get_offset(), 0)
        self.assertEqual(str(g.device), "cpu")
        self.assertIsInstance(L.Generator(device="cpu"), L.Generator)
        self.assertIsInstance(L.Generator("cpu"), L.Generator)
        self.assertIs(g.manual_seed(5), g)
        self.assertEqual(g.initial_seed(), 5)
        self.assertIn("seed=5", repr(g))

    def test_seed_range(self):
        g = L.Generator()
        self.assertEqual(g.manual_seed(2 ** 64 - 1).initial_seed(), 2 ** 64 - 1)
        self.assertEqual(g.manual_seed(-1).initial_seed(), 2 ** 64 - 1)  # wraps, as torch
        with self.assertRaisesRegex(RuntimeError, "Overflow when unpacking long"):
            g.manual_seed(2 ** 64)
        with self.assertRaisesRegex(RuntimeError, "Overflow when unpacking long"):
            g.manual_seed(-2 ** 63 - 1)
        with self.assertRaisesRegex(RuntimeError, "manual_seed expected a long, but got str"):
            g.manual_seed("1")
        with self.assertRaisesRegex(RuntimeError, "manual_seed expected a long, but got float"):
            L.manual_seed(1.5)

    def test_nondeterministic_seed(self):
        g = L.Generator()
        s = g.seed()
        self.assertIsInstance(s, int)
        self.assertTrue(0 <= s < 2 ** 64)
        self.assertEqual(g.initial_seed(), s)
        self.assertEqual(g.get_offset(), 0)
        self.assertNotEqual(L.Generator().seed(), L.Generator().seed())

    def test_same_seed_same_values(self):
        for name, f in _ops().items():
            with self.subTest(op=name):
                a = f(L.Generator().manual_seed(1234))
                b = f(L.Generator().manual_seed(1234))
                np.testing.assert_array_equal(arr(a), arr(b))

    def test_different_seeds_differ(self):
        for name, f in _ops().items():
            with self.subTest(op=name):
                a = f(L.Generator().manual_seed(1))
                b = f(L.Generator().manual_seed(2))
                self.assertFalse(np.array_equal(arr(a), arr(b)))

    def test_stream_continues(self):
        for name, f in _ops().items():
            with self.subTest(op=name):
                g = L.Generator().manual_seed(99)
                a = f(g)
                self.assertGreater(g.get_offset(), 0)
                b = f(g)
                self.assertFalse(np.array_equal(arr(a), arr(b)))
        # rand(8) takes blocks 0, 1 and the next rand(8) blocks 2, 3: together rand(16)
        g = L.Generator().manual_seed(7)
        a, b = L.rand(8, generator=g), L.rand(8, generator=g)
        self.assertEqual(g.get_offset(), 4)
        whole = L.rand(16, generator=L.Generator().manual_seed(7))
        np.testing.assert_array_equal(np.concatenate([arr(a), arr(b)]), arr(whole))

    def test_values_match_philox(self):
        for seed, offset, n in ((0, 0, 10), (42, 0, 13), (2 ** 40 + 3, 5, 9), (2 ** 64 - 1, 2 ** 33, 4)):
            with self.subTest(seed=seed, offset=offset):
                g = L.Generator().manual_seed(seed).set_offset(offset)
                got = L.rand(n, generator=g)
                np.testing.assert_array_equal(arr(got).astype(np.float32), philox_rand_float32(n, seed, offset))
                self.assertEqual(g.get_offset(), offset + (n + 3) // 4)

    def test_default_generator(self):
        d = L.default_generator
        self.assertIsInstance(d, L.Generator)
        self.assertIs(L.manual_seed(31), d)
        self.assertEqual(L.initial_seed(), 31)
        self.assertEqual(d.initial_seed(), 31)
        # the boxed C path with generator=None draws from the default generator: the same
        # values as an explicit generator at the same seed and offset
        for name, f in _ops().items():
            with self.subTest(op=name):
                L.manual_seed(2024)
                a = f(None)
                off = d.get_offset()
                b = f(L.Generator().manual_seed(2024))
                np.testing.assert_array_equal(arr(a), arr(b))
                c = f(d)  # passing the default generator itself continues its stream
                self.assertGreater(d.get_offset(), off)
                e = f(L.Generator().manual_seed(2024).set_offset(off))
                np.testing.assert_array_equal(arr(c), arr(e))
        L.manual_seed(5)
        a = L.rand(6)
        L.manual_seed(5)
        np.testing.assert_array_equal(arr(a), arr(L.rand(6)))
        np.testing.assert_array_equal(arr(a), philox_rand_float32(6, 5))
        s = L.seed()
        self.assertEqual(L.initial_seed(), s)
        self.assertEqual(d.get_offset(), 0)

    def test_clone_state(self):
        g = L.Generator().manual_seed(77)
        L.rand(10, generator=g)
        c = g.clone_state()
        self.assertIsNot(c, g)
        self.assertEqual((c.initial_seed(), c.get_offset()), (g.initial_seed(), g.get_offset()))
        np.testing.assert_array_equal(arr(L.randn(5, generator=g)), arr(L.randn(5, generator=c)))
        L.rand(3, generator=c)  # independent afterwards
        self.assertNotEqual(c.get_offset(), g.get_offset())
        L.manual_seed(8)
        L.rand(4)
        dc = L.default_generator.clone_state()
        np.testing.assert_array_equal(arr(L.rand(6)), arr(L.rand(6, generator=dc)))

    def test_state_round_trip(self):
        g = L.Generator().manual_seed(0x0102030405060708)
        L.rand(9, generator=g)  # offset 3
        st = g.get_state()
        self.assertEqual(st.dtype, L.uint8)
        self.assertEqual(st.shape, (16,))
        expected = np.array([0x0102030405060708, 3], dtype="<u8").view(np.uint8)
        np.testing.assert_array_equal(arr(st), expected)
        a = L.rand(12, generator=g)
        self.assertIs(g.set_state(st), g)
        np.testing.assert_array_equal(arr(L.rand(12, generator=g)), arr(a))
        h = L.Generator().set_state(st)
        self.assertEqual((h.initial_seed(), h.get_offset()), (0x0102030405060708, 3))
        # a strided state tensor is read in its logical order
        h2 = L.Generator().set_state(L.stack([st, L.zeros(16, dtype=L.uint8)], 1)[:, 0])
        self.assertEqual((h2.initial_seed(), h2.get_offset()), (0x0102030405060708, 3))
        # the default generator's state
        L.manual_seed(3)
        L.rand(5)
        ds = L.get_rng_state()
        a = L.rand(7)
        self.assertIsNone(L.set_rng_state(ds))
        np.testing.assert_array_equal(arr(L.rand(7)), arr(a))

    def test_state_errors(self):
        g = L.Generator().manual_seed(1)
        with self.assertRaisesRegex(TypeError, "uint8"):
            g.set_state(L.zeros(16))
        with self.assertRaisesRegex(TypeError, "int"):
            g.set_state(5)
        with self.assertRaisesRegex(RuntimeError, "wrong size: expected 16 bytes"):
            g.set_state(L.zeros(5056, dtype=L.uint8))
        with self.assertRaisesRegex(TypeError, "uint8"):
            L.set_rng_state(L.zeros(16, dtype=L.int64))
        self.assertEqual((g.initial_seed(), g.get_offset()), (1, 0))  # untouched

    def test_argument_type_errors(self):
        x = L.zeros(4)
        # one overload: the parameter is named
        with self.assertRaisesRegex(TypeError, r"normal_\(\): argument 'generator' must be Generator, not int"):
            x.normal_(generator=3)
        with self.assertRaisesRegex(TypeError, r"randperm\(\): argument 'generator' must be Generator, not str"):
            L.randperm(4, generator="cpu")
        with self.assertRaisesRegex(TypeError, r"rand\(\): argument 'generator' must be Generator, not str"):
            L.rand(3, generator="x")
        # several overloads: torch's list, with what was given named by keyword
        with self.assertRaisesRegex(TypeError, r"generator=str[\s\S]*Generator\? generator"):
            L.randint(0, 5, (3,), generator="x")
        with self.assertRaisesRegex(TypeError, "generator"):
            L.bernoulli(x, generator=L.default_generator.get_state())
        with self.assertRaises(TypeError):
            L.Generator(device=3)
        with self.assertRaises(RuntimeError):  # a CUDA device that does not exist
            L.Generator(device="cuda:99")
        with self.assertRaises(TypeError):
            L.Generator("cpu", "extra")

    def test_failed_op_keeps_offset(self):
        g = L.Generator().manual_seed(1)
        with self.assertRaises(RuntimeError):
            L.multinomial(L.tensor([1.0, 2.0]), 5, generator=g)  # 5 > 2 without replacement
        self.assertEqual(g.get_offset(), 0)

    def test_allocation_failures(self):
        g = L.Generator().manual_seed(11)
        L.rand(4, generator=g)
        calls = {
            "Generator": lambda: L.Generator(),
            "clone_state": lambda: g.clone_state(),
            "get_state": lambda: g.get_state(),
            "set_state": lambda: g.set_state(L.stack([st, st], 1)[:, 0]),  # a copy to contiguous
            "rand": lambda: L.rand(64, generator=g),
            "multinomial": lambda: L.multinomial(L.ones(4, 8), 5, generator=g),
        }
        st = g.get_state()
        for name, f in calls.items():
            with self.subTest(call=name):
                failed = 0
                for n in range(1, 50):
                    before = (g.initial_seed(), g.get_offset())
                    L._C._alloc_fail_nth(n)
                    try:
                        f()
                    except (MemoryError, RuntimeError) as e:
                        self.assertIn("out of memory", str(e))
                        self.assertEqual((g.initial_seed(), g.get_offset()), before)  # no draw, no change
                        failed += 1
                        continue
                    finally:
                        L._C._alloc_fail_nth(0)
                    break
                self.assertGreater(failed, 0)
                g.set_state(st)

    def test_lifetime(self):
        g = L.Generator().manual_seed(3)
        r = weakref.ref(L.rand(2, generator=g))
        del g
        gc.collect()
        self.assertIsNone(r())
        # a clone keeps working after its origin is gone
        g = L.Generator().manual_seed(3)
        c = g.clone_state()
        del g
        gc.collect()
        np.testing.assert_array_equal(arr(L.rand(4, generator=c)), philox_rand_float32(4, 3))


class TestGradIdentity(unittest.TestCase):
    def test_same_object(self):
        x = L.ones(3, requires_grad=True)
        self.assertIsNone(x.grad)
        (x * x).sum().backward()
        g = x.grad
        self.assertIs(x.grad, g)
        self.assertIs(x.grad, x.grad)
        np.testing.assert_array_equal(arr(g), [2.0, 2.0, 2.0])

    def test_follows_changes(self):
        x = L.ones(3, requires_grad=True)
        (x * 3).sum().backward()
        g1 = x.grad
        mine = L.full((3,), 7.0)
        x.grad = mine
        self.assertIs(x.grad, mine)
        self.assertIsNot(x.grad, g1)
        np.testing.assert_array_equal(arr(g1), [3.0, 3.0, 3.0])  # the old object is unchanged
        x.grad = None
        self.assertIsNone(x.grad)
        (x * 2).sum().backward()
        g2 = x.grad
        self.assertIsNot(g2, mine)
        np.testing.assert_array_equal(arr(g2), [2.0, 2.0, 2.0])
        np.testing.assert_array_equal(arr(mine), [7.0, 7.0, 7.0])
        # accumulation: .grad holds the sum, whichever object holds it
        (x * 2).sum().backward()
        self.assertIs(x.grad, x.grad)
        np.testing.assert_array_equal(arr(x.grad), [4.0, 4.0, 4.0])

    def test_no_leak(self):
        gc.collect()
        start = L._C._allocated_bytes()
        x = L.ones(64, requires_grad=True)
        (x * x).sum().backward()
        gc.collect()
        base = L._C._allocated_bytes()
        for _ in range(100):
            x.grad  # noqa: B018
        gc.collect()
        self.assertEqual(L._C._allocated_bytes(), base)
        r = weakref.ref(x.grad)
        del x
        gc.collect()
        self.assertIsNone(r())  # the cached wrapper goes with its tensor
        self.assertEqual(L._C._allocated_bytes(), start)  # and so does the gradient


if __name__ == "__main__":
    unittest.main()

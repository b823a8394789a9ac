"""Sizes at the edge of int64 from Python: huge zero-stride views (valid, but no buffer
of one entry per element can exist) and geometries whose element count or extent does
not fit int64 (refused, as PyTorch refuses them).  Each case is one of the issue's
reproducers; before the fix they crashed (wrapped buffer sizes) or returned tensors
with a wrapped numel()."""

import unittest

import libops as L


class TestHugeViews(unittest.TestCase):
    def huge(self):
        v = L.ones(1).expand(2**61, 2)
        self.assertEqual(v.shape, (2**61, 2))
        self.assertEqual(v.numel(), 2**62)
        return v

    def test_reductions_refuse_cleanly(self):
        v = self.huge()
        for name in ["sum", "mean", "prod", "amax", "max", "min", "argmax", "all", "any", "var", "norm",
                     "nansum", "aminmax"]:
            with self.subTest(op=name):
                with self.assertRaises(Exception) as cm:
                    getattr(v, name)()
                self.assertIn(name if name != "norm" else "norm", str(cm.exception))
                self.assertIn("too large", str(cm.exception))

    def test_split_family(self):
        with self.assertRaisesRegex(Exception, "tensor_split: .*too large"):
            L.tensor([0, 1, 2]).tensor_split(2**61)
        with self.assertRaisesRegex(Exception, "chunk: .*too large"):
            L.empty(0).chunk(2**61)
        v = self.huge()
        with self.assertRaisesRegex(Exception, "unbind: .*too large"):
            v.unbind(0)
        with self.assertRaisesRegex(Exception, "split: .*too large"):
            v.split(1)
        pieces = v.unbind(1)
        self.assertEqual([p.shape for p in pieces], [(2**61,), (2**61,)])

    def test_chunk_of_huge_count(self):
        pieces = L.ones(3).chunk(2**63 - 1)
        self.assertEqual([p.shape for p in pieces], [(1,), (1,), (1,)])
        pieces = L.arange(3).split(2**63 - 1)
        self.assertEqual([p.shape for p in pieces], [(3,)])


class TestNumelOverflow(unittest.TestCase):
    def test_expand_broadcast_to(self):
        one = L.ones(1)
        with self.assertRaisesRegex(Exception, r"expand: .*more elements than int64"):
            one.expand(2**62, 4)
        with self.assertRaisesRegex(Exception, r"broadcast_to: .*more elements than int64"):
            L.broadcast_to(one, (2**62, 4))
        self.assertEqual(one.expand(2**62, 1).numel(), 2**62)

    def test_as_strided_empty_strided(self):
        with self.assertRaisesRegex(Exception, r"as_strided: .*more elements than int64"):
            L.ones(1).as_strided((2**62, 4), (0, 0))
        with self.assertRaisesRegex(Exception, r"empty_strided: .*too large to allocate"):
            L.empty_strided((2**62, 4), (0, 0))

    def test_broadcast_of_two_views(self):
        a = L.ones(1).expand(2**32, 1)
        b = L.ones(1).expand(1, 2**32)
        with self.assertRaisesRegex(Exception, r"add: .*more elements than int64"):
            a + b


class TestArgumentSizes(unittest.TestCase):
    """Sizes computed from arguments (padding, dilation, stride, repeats): refused with
    the op's name instead of a wrapped (negative) size."""

    def test_conv(self):
        x, w = L.ones(1, 1, 4), L.ones(1, 1, 3)
        with self.assertRaisesRegex(Exception, "conv1d: .*does not fit int64"):
            L.conv1d(x, L.ones(1, 1, 1), padding=2**62)
        with self.assertRaisesRegex(Exception, "conv1d: .*does not fit int64"):
            L.conv1d(x, w, dilation=2**62)
        with self.assertRaisesRegex(Exception, "conv_transpose1d: .*does not fit int64"):
            L.conv_transpose1d(x, w, stride=2**62)
        self.assertEqual(L.conv1d(x, w, padding=1).shape, (1, 1, 4))

    def test_pad_one_hot_repeat_interleave(self):
        with self.assertRaisesRegex(Exception, "pad: .*does not fit int64"):
            L.pad(L.ones(2, 2), (2**62, 2**62))
        with self.assertRaisesRegex(Exception, "one_hot: "):
            L.one_hot(L.tensor([2**63 - 1]), -1)
        with self.assertRaisesRegex(Exception, "repeat_interleave: .*do not fit int64"):
            L.repeat_interleave(L.ones(4), 2**62)

    def test_pixel_shuffle_factor(self):
        # f * f wrapped to 0: a division by zero before the fix (found by the fuzzer)
        for f in (2**32, 2**61, 2**62):
            with self.subTest(f=f):
                with self.assertRaisesRegex(Exception, "pixel_shuffle: upscale_factor .* too large"):
                    L.pixel_shuffle(L.ones(3, 1, 3), f)
                with self.assertRaisesRegex(Exception, "pixel_unshuffle: downscale_factor .* too large"):
                    L.pixel_unshuffle(L.ones(0, 0, 0), f)
        self.assertEqual(L.pixel_shuffle(L.ones(1, 4, 2, 3), 2).shape, (1, 1, 4, 6))


if __name__ == "__main__":
    unittest.main()

"""Float convolutions by the kernel library's own C product (``native/conv_f32.c``).

The speed layer's float CONV_2D used to be an OpenBLAS product (after an im2col copy for KxK
filters), then a second pass for the bias, the clamp and the overflow guard.  The library's
``conv_f32`` does all of it in one pass: a tile of 7 output pixels reads its input in place, or
through pointers where it meets the padding (no im2col copy), multiplies it by 16 or 32 output
channels of a filter packed once here,
and adds the bias and clamps in registers before it stores.  It needs AVX-512 (checked by the
library at run time); elsewhere :func:`function` is None and the BLAS path stays.
"""

from __future__ import annotations

import numpy as np

from . import aligned_zeros

PANEL = 16
"""Output channels a packed panel holds (one AVX-512 register of float32)."""

MIN_SPLIT_WORK = 150_000
"""Multiply-adds below which a convolution runs on one thread: handing half of a product that small
to another thread costs about what the half takes."""

def pack_filter(filt: np.ndarray) -> np.ndarray:
    """An OHWI float filter as ``conv_f32`` reads it, flattened: output channels in panels of
    :data:`PANEL` (zeros past the last channel), two panels side by side — for each of the KH*KW*I
    rows, 32 values: 16 of the first panel, 16 of the second — and a lone last panel alone, 16 values
    a row.  The kernel then streams one run of weights per panel pair, which the CPU's prefetcher follows
    better than two (measured: a 14x14x512 -> 512 layer whose weights come from memory took 0.87 ms
    with two runs, 0.73 ms with one)."""
    o = filt.shape[0]
    k = int(np.prod(filt.shape[1:]))
    panels = -(-o // PANEL)
    pairs = panels // 2
    w = np.zeros((panels * PANEL, k), np.float32)
    w[:o] = np.asarray(filt, np.float32).reshape(o, k)
    packed = aligned_zeros(panels * k * PANEL, np.float32)
    split = pairs * 2 * PANEL * k
    packed[:split].reshape(pairs, k, 2 * PANEL)[...] = w[:2 * PANEL * pairs].reshape(pairs, 2, PANEL, k).transpose(
        0, 3, 1, 2).reshape(pairs, k, 2 * PANEL)
    if panels % 2:
        packed[split:].reshape(k, PANEL)[...] = w[2 * PANEL * pairs:].T
    return packed


def pad_bias(bias: np.ndarray) -> np.ndarray:
    """The bias with zeros up to a whole number of panels."""
    o = bias.shape[0]
    out = np.zeros(-(-o // PANEL) * PANEL, np.float32)
    out[:o] = bias
    return out


def geometry(d) -> np.ndarray:
    """``conv_f32``'s geometry array from a convolution's OpData."""
    return np.array([d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top,
                     d.pad_left], np.int64)


def _probe(fn) -> bool:
    """One pixel, one channel: 1 * 2 + 1."""
    x = np.ones((1, 1, 1, 1), np.float32)
    out = np.zeros((1, 1, 1, 1), np.float32)
    w = pack_filter(np.full((1, 1, 1, 1), 2, np.float32))
    done = fn(1, x, w, pad_bias(np.ones(1, np.float32)), np.zeros(1, np.float32), out,
              np.array([1, 1, 1, 1, 1, 1, 0, 0], np.int64), np.array([-np.inf, np.inf, 1e30], np.float32))
    return done == 0 and out[0, 0, 0, 0] == 3


def function():
    """The library's ``conv_f32``, or None (no library, an older one, or a CPU without AVX-512: a
    one-pixel probe says which; probed again when the library in use changes)."""
    from . import precompiled

    return precompiled.native("conv_f32", _probe)

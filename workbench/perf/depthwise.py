"""Depthwise convolutions (depth multiplier 1) by the kernel library's own C loops (``native/depthwise.c``).

int8 (``dw_i8``): the speed layer's numba kernel tested every tap of the pixels along the image's border
and converted every tap's int8 input to float32 (nine conversions a pixel).  ``dw_i8`` converts each
input row once, into float32 x − input zero point with zero columns around it, so every pixel — the
border included — is the same KH·KW fused multiply-adds on 16 channels, with the weights in
registers; the exact integer requantization then runs in registers
(:func:`workbench.perf.vnni.requant_tables`) and stores int8.  The float32 sums are exact (integers
below 2^24), so the outputs are the teaching layer's bits.

float32 (``dw_f32``): the teaching layer's order (the bias, then each in-image tap's product, each
rounded to float32, then the clamp), 16 channels to a register, the border pixels included; a filter
row above or below the image reads a row of zeros where that cannot change a bit (finite weights, no
bias of −0.0); short rows and stride 2 go one pixel at a time through all its channels (XNNPACK's
order, on the weights packed per block with their bias: :func:`pack_float`), long rows of stride 1 four
pixels at a time sharing each loaded column.

Both need AVX-512 (checked by the library at run time); elsewhere :func:`int8_function` and
:func:`float_function` are None and the numba kernels stay.
"""

from __future__ import annotations

import numpy as np

from . import aligned_zeros

BLOCK = 16
"""Channels a vector register holds (float32 in AVX-512)."""

MIN_SPLIT_WORK = 150_000
"""Multiply-adds below which a depthwise convolution runs on one thread (as
:data:`workbench.perf.fgemm.MIN_SPLIT_WORK`)."""

EXACT_BELOW = 1 << 24
"""float32 holds every integer below this exactly: |bias| + 255·128·taps must stay under it."""


def pack_filter(filt: np.ndarray) -> np.ndarray:
    """A [1, KH, KW, C] (or [KH, KW, C]) filter as ``dw_i8`` reads it: float32 [KH·KW, C16], C rounded up
    to whole blocks of :data:`BLOCK` with zeros, starting on a 64-byte line."""
    c = filt.shape[-1]
    taps = int(np.prod(filt.shape[-3:-1]))
    c16 = -(-c // BLOCK) * BLOCK
    packed = aligned_zeros(taps * c16, np.float32).reshape(taps, c16)
    packed[:, :c] = np.asarray(filt).reshape(taps, c)
    return packed


def exact(bias: np.ndarray, taps: int) -> bool:
    """Whether float32 sums that start at ``bias`` stay exact (:data:`EXACT_BELOW`)."""
    return bias.size == 0 or int(np.abs(np.asarray(bias, np.int64)).max()) + 255 * 128 * taps < EXACT_BELOW


def pack_float(filt: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A float [1, KH, KW, C] (or [KH, KW, C]) filter and its bias [C] as ``dw_f32`` reads them: float32
    [C16 / 16, 1 + KH·KW, 16], each block of :data:`BLOCK` channels its bias, then its taps filter row by
    filter row (zeros past C), on 64-byte lines: a block's weights are 64·(1 + KH·KW) contiguous bytes, as
    XNNPACK packs them, so a loop that meets every block of a pixel in turn streams them from L1."""
    c = filt.shape[-1]
    taps = int(np.prod(filt.shape[-3:-1]))
    nb = -(-c // BLOCK)
    flat = np.zeros((1 + taps, nb * BLOCK), np.float32)
    flat[0, :c] = bias
    flat[1:, :c] = np.asarray(filt).reshape(taps, c)
    packed = aligned_zeros(flat.size, np.float32).reshape(nb, 1 + taps, BLOCK)
    packed[...] = flat.reshape(1 + taps, nb, BLOCK).transpose(1, 0, 2)
    return packed


def zeros_add_nothing(packed: np.ndarray) -> bool:
    """Whether ``dw_f32`` may add a row of zeros for a filter row that falls above or below the image,
    rather than skip it, and get the same bits: every tap of :func:`pack_float`'s ``packed`` is finite
    (0 · w is then ±0) and no bias is −0.0 (a sum that starts anywhere else never becomes −0, and adding
    ±0 to it changes nothing).  Found once, where the weights are packed; ``dw_f32`` reads it from its
    clamp's third value."""
    bias, taps = packed[:, 0, :], packed[:, 1:, :]
    return bool(np.isfinite(taps).all() and not ((bias == 0) & np.signbit(bias)).any())


def float_clamp(packed: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``dw_f32``'s clamp argument for weights packed by :func:`pack_float`: [lo, hi, 1 or 0
    (:func:`zeros_add_nothing`)]."""
    return np.array([lo, hi, 1.0 if zeros_add_nothing(packed) else 0.0], np.float32)


def geometry(d, kh: int, kw: int, zero_point: bool = True) -> np.ndarray:
    """The kernels' geometry array from a depthwise convolution's OpData (``dw_i8``'s ends with the
    input zero point)."""
    g = [kh, kw, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top, d.pad_left]
    return np.array(g + [d.input_zero_point] if zero_point else g, np.int64)


def _probe_int8(fn) -> bool:
    """One pixel, one channel: 3 · 2 = 6, times 2^30 / 2^32 = 1.5, ties up: 2."""
    from .vnni import requant_tables

    x = np.full((1, 1, 1, 1), 3, np.int8)
    out = np.zeros((1, 1, 1, 1), np.int8)
    tables = requant_tables(np.zeros(1, np.int64), 1 << 30, -1, 0, -128, 127, True, BLOCK, 255 * 128)
    done = fn(1, x, pack_filter(np.full((1, 1, 1), 2, np.int8)), out, *tables,
              np.array([1, 1, 1, 1, 1, 1, 0, 0, 0], np.int64))
    return done == 0 and out[0, 0, 0, 0] == 2


def _probe_float(fn) -> bool:
    """One pixel, one channel: 1 + 3 · 2 = 7."""
    x = np.full((1, 1, 1, 1), 3, np.float32)
    out = np.zeros((1, 1, 1, 1), np.float32)
    packed = pack_float(np.full((1, 1, 1), 2, np.float32), np.ones(1, np.float32))
    done = fn(1, x, packed, out, np.array([1, 1, 1, 1, 1, 1, 0, 0], np.int64), float_clamp(packed, -np.inf, np.inf))
    return done == 0 and out[0, 0, 0, 0] == 7


def int8_function():
    """The library's ``dw_i8``, or None (no library, an older one, or a CPU without AVX-512: a
    one-pixel probe says which; probed again when the library in use changes)."""
    from . import precompiled

    return precompiled.native("dw_i8", _probe_int8)


def float_function():
    """The library's ``dw_f32``, or None (as :func:`int8_function`)."""
    from . import precompiled

    return precompiled.native("dw_f32", _probe_float)

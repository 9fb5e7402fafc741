"""The AMX block of the int8 product (perf/vnni.py: conv_rows_amx, amx_tile) against the teaching layer's
int8 convolution (kernels/conv_2d.py: conv_int8), bit for bit, on small random shapes (odd channel
counts, stride 2, dilation, padding edges, ragged 16-row and 16-channel blocks), and its fallback to the
4-row VNNI block where it does not apply."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.conv_cases import conv_int8_teaching
from workbench.perf import vnni

# N, H, W, C, O, KH, KW, stride, dilation, pad (top, left), output (OH, OW)
SHAPES = [(1, 9, 7, 5, 37, 3, 2, (2, 1), (1, 2), (1, 2), (5, 7)),
          (2, 6, 6, 33, 19, 3, 3, (1, 1), (1, 1), (1, 1), (6, 6)),
          (1, 11, 9, 70, 65, 1, 1, (2, 2), (1, 1), (0, 0), (6, 5)),
          (1, 8, 8, 3, 16, 3, 3, (2, 2), (2, 2), (1, 1), (4, 4))]




@pytest.mark.parametrize("top_shift", [0, 1])
@pytest.mark.parametrize("half_up", [True, False])
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_amx_rows_are_the_teaching_layer(shape, compiled, half_up, top_shift):
    """conv_rows_amx compiled (where AMX is granted) and as Python (numpy twin of the AMX block); shifts up
    to 0 take the narrow requantization (vnni.narrow_requantize), a left shift of 1 the general one."""
    n, h, w, c, o, kh, kw, (sh, sw), (dh, dw), (pt, pl), (oh, ow) = shape
    if compiled and not vnni.amx_available():
        assert not vnni.amx_available()        # nothing compiled to check on this CPU: the VNNI block runs
        return
    fn = vnni.conv_rows_amx if compiled else vnni.conv_rows_amx.py_func
    rng = np.random.default_rng(c * o)
    x = rng.integers(-128, 128, (n, h, w, c)).astype(np.int8)
    f = rng.integers(-128, 128, (o, kh, kw, c)).astype(np.int8)
    bias = rng.integers(-20000, 20000, o).astype(np.int32)
    mult = rng.integers(2 ** 30, 2 ** 31, o).astype(np.int64)
    shift = rng.integers(-9, top_shift + 1, o).astype(np.int64)
    w2d = f.reshape(o, -1)
    packed = vnni.pack_filter(w2d, 64)                   # the AMX packing, whatever this CPU has
    for zp, out_zp, lo, hi in ((-7, 3, -128, 127), (127, 0, -20, 90)):
        want = conv_int8_teaching(x, f, bias, (sh, sw), (dh, dw), (pt, pl), (oh, ow), zp, mult, shift, out_zp, lo, hi,
                                  half_up)
        out = np.full((n * oh * ow, o), 99, np.int8)
        fn(x, packed, vnni.folded_bias(bias, w2d, zp), mult, shift, out_zp, lo, hi, half_up, out, np.uint8(zp + 128),
           oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, vnni.amx_config(), 0, n * oh * ow)
        assert (out.reshape(want.shape) == want).all(), (zp, int((out.reshape(want.shape) != want).sum()))


def test_narrow_requantize_only_where_int32_is_exact():
    bias, mult, left = np.array([5, -7], np.int64), np.array([1 << 30, (1 << 31) - 1], np.int64), np.zeros(2, np.int64)
    assert vnni.narrow_requantize(bias, mult, left, 1000)[0]
    assert not vnni.narrow_requantize(bias, mult, np.array([0, 1], np.int64), 1000)[0]       # a left shift
    assert not vnni.narrow_requantize(bias, mult, left, (1 << 31) - 8)[0]                     # sums near 2^31
    assert not vnni.narrow_requantize(np.array([5, 1 << 31], np.int64), mult, left, 1000)[0]  # a wide bias


def test_conv_takes_the_amx_block_only_from_16_rows_and_long_sums(monkeypatch):
    """vnni.conv runs conv_rows_amx for 16 output rows or more and sums over k ≥ AMX_MIN_K where AMX is
    granted; the VNNI block for fewer rows (a batch-1 FULLY_CONNECTED), shorter sums, a filter packed
    in fours, or without AMX.  Both write the same bytes."""
    rng = np.random.default_rng(5)
    calls = []
    real = vnni.conv_rows_amx
    monkeypatch.setattr(vnni, "conv_rows_amx", lambda *a: (calls.append(a[-2] - a[-1]), real(*a)))
    took = {}
    for k, rows, align in ((520, 15, None), (520, 16, None), (520, 40, None), (520, 40, 4), (100, 40, None)):
        w2d = rng.integers(-128, 128, (20, k)).astype(np.int8)
        args = (vnni.folded_bias(rng.integers(-99, 99, 20), w2d, 4), np.full(20, 1 << 30, np.int64),
                np.full(20, -5, np.int64), 1, -128, 127, True)
        x = rng.integers(-128, 128, (1, rows, 1, k)).astype(np.int8)
        out = np.zeros((rows, 20), np.int8)
        calls.clear()
        packed = vnni.pack_filter(w2d, align or vnni.k_align(k))
        vnni.conv(x, packed, *args, out, (rows, 1, 1, 1, 1, 1, 1, 1, 0, 0, 132))
        took[k, rows, align] = bool(calls)
        want = np.zeros_like(out)
        vnni.conv_rows(x, vnni.pack_filter(w2d), *args, want, 132, rows, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, rows)
        assert (out == want).all(), (k, rows, align)
    amx = vnni.amx_available()
    assert took == {(520, 15, None): False, (520, 16, None): amx, (520, 40, None): amx, (520, 40, 4): False,
                    (100, 40, None): False}


def test_pack_filter_interleaves_the_blocks_of_a_group():
    """Block b, group of k g, byte 4j + i holds w[16b + j, 4g + i]; the blocks of a group of BLOCKS (fewer in
    the last) follow each other for each g, so that the micro-kernel reads one stream a step."""
    n, k = 100, 23                      # 7 blocks: a group of 4 and a last one of 3; 6 groups of k
    w2d = np.random.default_rng(2).integers(-128, 128, (n, k)).astype(np.int8)
    p = vnni.pack_filter(w2d)
    nb, kg, _ = p.shape
    assert (nb, kg) == (7, 6)
    flat = p.reshape(-1)
    for b in range(nb):
        b0 = b - b % vnni.BLOCKS
        nbg = min(vnni.BLOCKS, nb - b0)
        for g in range(kg):
            line = flat[b0 * kg * 64 + g * nbg * 64 + (b - b0) * 64:][:64]
            assert (line == vnni.block_of(p, b)[g]).all()
            for j in range(16):
                for i in range(4):
                    want = w2d[16 * b + j, 4 * g + i] if 16 * b + j < n and 4 * g + i < k else 0
                    assert line[4 * j + i] == want
    assert (vnni.unpack_filter(p, n, k) == w2d).all()


def test_pack_filter_pads_k_for_amx():
    w2d = np.arange(-50, 55, dtype=np.int8).reshape(3, 35)
    for align, groups in ((4, 9), (64, 16)):
        p = vnni.pack_filter(w2d, align)
        assert p.shape == (1, groups, 64) and (vnni.unpack_filter(p, 3, 35) == w2d).all()
    assert vnni.k_align(100) == 4 and vnni.k_align(vnni.AMX_MIN_K) == (64 if vnni.amx_available() else 4)

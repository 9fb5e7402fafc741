"""The kernel library's float convolution (perf/native/conv_f32.c through perf/fgemm.py) against float64
sums, on small random shapes: odd channel counts, a lone last panel of output channels, stride 2,
dilation, padding on every side, several images, more taps than fit on the stack, pixels that are not a
whole number of tiles; one and two threads; the clamp; the guard (1 when an input value reaches the
limit or is NaN); and -1 for arrays it does not take.  The fast path that calls it is tested in
tests/interpreter/fast/test_fast_conv_f32.py."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.perf import aligned_zeros, fgemm

needs_library = pytest.mark.skipif(fgemm.function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")

# N, H, W, C, O, KH, KW, stride, dilation, pad (top, left), output (OH, OW)
SHAPES = [(1, 9, 7, 5, 37, 3, 2, (2, 1), (1, 2), (1, 2), (5, 7)),        # odd everything, padding edges
          (2, 6, 6, 33, 19, 3, 3, (1, 1), (1, 1), (1, 1), (6, 6)),        # two images, 3x3 SAME
          (1, 11, 9, 7, 65, 1, 1, (2, 2), (1, 1), (0, 0), (6, 5)),        # 1x1 stride 2
          (1, 5, 7, 12, 16, 1, 1, (1, 1), (1, 1), (0, 0), (5, 7)),        # 1x1 stride 1: one pointer a pixel
          (1, 3, 3, 9, 3, 1, 1, (1, 1), (1, 1), (0, 0), (3, 3)),          # fewer channels than a panel
          (1, 12, 12, 3, 32, 3, 3, (2, 2), (1, 1), (0, 0), (5, 5)),       # a first layer, VALID
          (1, 10, 10, 2, 48, 9, 9, (1, 1), (1, 1), (4, 4), (10, 10)),     # 81 taps: pointers on the heap
          (1, 7, 7, 40, 100, 1, 1, (1, 1), (1, 1), (0, 0), (7, 7)),       # more channels than pixels
          (1, 1, 1, 70, 215, 1, 1, (1, 1), (1, 1), (0, 0), (1, 1))]       # one pixel: 6 pairs and a lone panel


def reference(x, filt, bias, stride, dilation, pad, out_hw, lo, hi):
    """The convolution in float64, straight from its definition."""
    n, h, w, c = x.shape
    o, kh, kw, _ = filt.shape
    out = np.zeros((n, *out_hw, o)) + bias
    for oy in range(out_hw[0]):
        for ox in range(out_hw[1]):
            for ky in range(kh):
                for kx in range(kw):
                    iy = oy * stride[0] - pad[0] + ky * dilation[0]
                    ix = ox * stride[1] - pad[1] + kx * dilation[1]
                    if 0 <= iy < h and 0 <= ix < w:
                        out[:, oy, ox] += x[:, iy, ix].astype(np.float64) @ filt[:, ky, kx].T.astype(np.float64)
    return np.clip(out, lo, hi)


def operands(shape, seed):
    n, h, w, c, o, kh, kw = shape[:7]
    rng = np.random.default_rng(seed)
    x = aligned_zeros((n, h, w, c), np.float32)
    x[...] = rng.standard_normal(x.shape)
    filt = rng.standard_normal((o, kh, kw, c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    return x, filt, bias


def call(shape, x, filt, bias, threads, lo=-np.inf, hi=np.inf, limit=1e30, out=None):
    n, _, _, c, o, kh, kw, stride, dilation, pad, out_hw = shape
    out = np.full((n, *out_hw, o), 7.0, np.float32) if out is None else out
    geometry = np.array([kh, kw, *stride, *dilation, *pad], np.int64)
    zeros = np.zeros(kw * c, np.float32)
    done = fgemm.function()(threads, x, fgemm.pack_filter(filt), fgemm.pad_bias(bias), zeros, out, geometry,
                            np.array([lo, hi, limit], np.float32))
    return done, out


def test_pack_filter_puts_panel_pairs_side_by_side_and_pads_with_zeros():
    filt = np.arange(37 * 2 * 3 * 5, dtype=np.float32).reshape(37, 2, 3, 5)
    packed = fgemm.pack_filter(filt)
    assert packed.ctypes.data % 64 == 0 and packed.size == 3 * 30 * 16
    w2d = filt.reshape(37, 30)
    pair = packed[:2 * 30 * 16].reshape(30, 32)            # channels 0..31: 32 weights a filter row
    lone = packed[2 * 30 * 16:].reshape(30, 16)            # channels 32..36 and zeros
    assert np.array_equal(pair[:, 4], w2d[4]) and np.array_equal(pair[:, 20], w2d[20])
    assert np.array_equal(lone[:, 4], w2d[36]) and not lone[:, 5:].any()
    assert fgemm.pack_filter(filt[:32]).size == 2 * 30 * 16
    assert np.array_equal(fgemm.pad_bias(np.arange(37, dtype=np.float32))[35:], [35, 36] + [0] * 11)


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k", range(len(SHAPES)))
def test_conv_f32_equals_the_sums_of_its_definition(k, threads):
    shape = SHAPES[k]
    x, filt, bias = operands(shape, k)
    done, out = call(shape, x, filt, bias, threads, lo=-1.5, hi=4.0)
    want = reference(x, filt, bias, shape[7], shape[8], shape[9], shape[10], -1.5, 4.0)
    assert done == 0
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.sqrt(filt[0].size))
    assert (out == 4.0).any() and (out == -1.5).any()          # the clamp happened


@needs_library
@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize("channels", [40, 300, 144, 256])
def test_more_threads_write_what_one_writes(threads, channels):
    """Pieces of tiles that shrink toward the middle (40 channels), or panel groups in slices of tiles
    (more channels than pixels): numbered slice by slice where the weights are few (300 channels of 24),
    group by group where they are many (144 channels of 1100: 633 KB packed); many weights and tiles
    enough (256 channels of 576, 590 KB, 28 tiles): the pixels on 2 and 3 threads, the panels on 8; each
    thread's block of pieces, taken from the far end by the others once it is empty, with more threads than
    this machine has cores too: every piece written once."""
    shape = {40: (1, 28, 28, 24, 40, 3, 3, (1, 1), (1, 1), (1, 1), (28, 28)),
             300: (1, 14, 14, 24, 300, 1, 1, (1, 1), (1, 1), (0, 0), (14, 14)),
             144: (1, 7, 7, 1100, 144, 1, 1, (1, 1), (1, 1), (0, 0), (7, 7)),
             256: (1, 14, 14, 576, 256, 1, 1, (1, 1), (1, 1), (0, 0), (14, 14))}[channels]
    x, filt, bias = operands(shape, 7)
    assert call(shape, x, filt, bias, 1)[1].tobytes() == call(shape, x, filt, bias, threads)[1].tobytes()


@needs_library
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("o", [16, 32, 48, 100, 128, 129, 1001])
def test_one_pixel_sums_in_the_tiles_order(o, threads):
    """A convolution with a single output pixel (a classifier after a global pool) runs up to four panel
    pairs at a time for that one row, not a tile of seven copies: each sum still adds its products in the
    tile's order, so the pixel's outputs are bit for bit those of the same pixel inside a bigger image."""
    rng = np.random.default_rng(o)
    c = 300
    filt = rng.standard_normal((o, 1, 1, c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    many = aligned_zeros((1, 3, 5, c), np.float32)
    many[...] = rng.standard_normal(many.shape)
    one = aligned_zeros((1, 1, 1, c), np.float32)
    one[...] = many[:, 1:2, 3:4]
    shape_many = (1, 3, 5, c, o, 1, 1, (1, 1), (1, 1), (0, 0), (3, 5))
    shape_one = (1, 1, 1, c, o, 1, 1, (1, 1), (1, 1), (0, 0), (1, 1))
    done, out_one = call(shape_one, one, filt, bias, threads, lo=-20.0, hi=20.0)
    assert done == 0
    assert out_one[0, 0, 0].tobytes() == call(shape_many, many, filt, bias, 1, lo=-20.0, hi=20.0)[1][0, 1, 3].tobytes()


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("o", [3, 8, 17, 21, 24, 40, 56])
def test_narrow_last_panels_sum_as_whole_ones(o, threads):
    """A last panel pair whose second panel has at most 8 channels (24 output channels: MobileNet v2's
    projections), or a lone last panel of at most 8, keeps that panel's sums in 256-bit registers: bit for
    bit what a whole pair or panel gives for the same channels, with the same weights (the narrow layer's
    filter and more channels up to a whole 32 or 16)."""
    shape = (1, 6, 9, 20, o, 3, 3, (2, 1), (1, 1), (1, 1), (3, 9))
    x, filt, bias = operands(shape, o)
    wide = -(-o // 16) * 16 if o % 32 <= 8 else -(-o // 32) * 32
    rng = np.random.default_rng(o + 1)
    filt_w = np.concatenate([filt, rng.standard_normal((wide - o, 3, 3, 20)).astype(np.float32)])
    bias_w = np.concatenate([bias, rng.standard_normal(wide - o).astype(np.float32)])
    done, narrow = call(shape, x, filt, bias, threads, lo=-6.0, hi=6.0)
    assert done == 0
    _, whole = call(shape[:4] + (wide,) + shape[5:], x, filt_w, bias_w, threads, lo=-6.0, hi=6.0)
    assert narrow.tobytes() == np.ascontiguousarray(whole[..., :o]).tobytes()
    want = reference(x, filt, bias, shape[7], shape[8], shape[9], shape[10], -6.0, 6.0)
    np.testing.assert_allclose(narrow, want, rtol=1e-5, atol=1e-5 * np.sqrt(filt[0].size))


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c", [21, 300])
@pytest.mark.parametrize("o", [24, 40, 48, 64])
def test_tiles_read_in_place_sum_as_tiles_read_through_pointers(o, c, threads):
    """A 1x1 convolution with stride 1 reads each whole tile of 7 pixels in place (its rows 7 * C values
    apart, no pointers) and the last, partial tile through pointers: the same pixel values give the same
    bits either way, with every tile kind (a pair, a pair of 24, a pair and a lone panel of 8 or 16) and
    both orders (weights that stay in L1, and chunks of tiles where they do not: 300 channels)."""
    shape = (1, 1, 38, c, o, 1, 1, (1, 1), (1, 1), (0, 0), (1, 38))
    x, filt, bias = operands(shape, o + c)
    x[0, 0, 35:] = x[0, 0, 9:12]              # the partial tile's three pixels, from inside a whole tile
    done, out = call(shape, x, filt, bias, threads, lo=-6.0, hi=6.0)
    assert done == 0
    assert out[0, 0, 35:].tobytes() == out[0, 0, 9:12].tobytes()
    want = reference(x, filt, bias, shape[7], shape[8], shape[9], shape[10], -6.0, 6.0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.sqrt(c))


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("o", [24, 40, 64])
@pytest.mark.parametrize("stride, dilation", [((2, 2), (1, 1)), ((1, 1), (2, 1)), ((1, 2), (1, 1))])
def test_padding_read_through_pointers_sums_as_zeros_read_in_place(stride, dilation, o, threads):
    """A KxK convolution reads a tile in place where its filter rows lie inside the image for all its
    pixels, and through pointers (a row of zeros for each tap in the padding) elsewhere: the same layer on
    the image with its padding written out as zeros (no padding left, so more tiles in place) gives the
    same bits."""
    x, filt, bias = operands((1, 13, 29, 3, o, 3, 3), o)
    pt, pl = dilation[0], 1
    oh = (13 + 2 * pt - 2 * dilation[0] - 1) // stride[0] + 1
    ow = (29 + 2 * pl - 3) // stride[1] + 1
    padded = aligned_zeros((1, 13 + 2 * pt, 29 + 2 * pl, 3), np.float32)
    padded[:, pt:pt + 13, pl:pl + 29] = x
    shape = (1, 13, 29, 3, o, 3, 3, stride, dilation, (pt, pl), (oh, ow))
    done, out = call(shape, x, filt, bias, threads, lo=-6.0, hi=6.0)
    assert done == 0
    _, out_padded = call((1, 13 + 2 * pt, 29 + 2 * pl) + shape[3:9] + ((0, 0), (oh, ow)), padded, filt, bias,
                         threads, lo=-6.0, hi=6.0)
    assert out.tobytes() == out_padded.tobytes()
    want = reference(x, filt, bias, stride, dilation, (pt, pl), (oh, ow), -6.0, 6.0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.sqrt(filt[0].size))


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -3.0])
def test_the_guard_reports_any_input_value_at_the_limit(bad, threads):
    shape = SHAPES[1]
    x, filt, bias = operands(shape, 3)
    assert np.abs(x).max() >= 2.5 and call(shape, x, filt, bias, threads, limit=2.5)[0] == 1
    x = np.clip(x, -2, 2)
    assert call(shape, x, filt, bias, threads, limit=2.5)[0] == 0
    x[-1, -1, -1, -1] = bad                                      # the last value of the last piece
    assert call(shape, x, filt, bias, threads, limit=2.5)[0] == 1
    assert call(shape, x, filt, bias, threads, limit=-1.0)[0] == 0       # a negative limit: no guard pass


@needs_library
def test_nan_weights_make_nan_outputs_through_the_clamp():
    shape = SHAPES[3]
    x, filt, bias = operands(shape, 5)
    filt[2, 0, 0, 1] = np.nan
    done, out = call(shape, x, filt, bias, 1, lo=0.0, hi=6.0)
    assert done == 0 and np.isnan(out[..., 2]).all() and not np.isnan(out[..., 3]).any()


@needs_library
def test_arrays_it_does_not_take_leave_the_output_alone():
    shape = SHAPES[0]
    x, filt, bias = operands(shape, 1)
    out = np.full((1, 5, 7, 37), 7.0, np.float32)
    fn = fgemm.function()
    geometry = np.array([3, 2, 2, 1, 1, 2, 1, 2], np.int64)
    clamp = np.array([-np.inf, np.inf, 1e30], np.float32)
    packed, padded = fgemm.pack_filter(filt), fgemm.pad_bias(bias)
    zeros = np.zeros(2 * 5, np.float32)
    assert fn(1, x.astype(np.float64), packed, padded, zeros, out, geometry, clamp) == -1          # not float32
    assert fn(1, x, packed[:-16], padded, zeros, out, geometry, clamp) == -1                      # short filter
    assert fn(1, x, packed, padded, zeros, out[:, :, ::2], geometry, clamp) == -1                 # not contiguous
    assert fn(1, x, packed, padded, zeros, out, geometry.astype(np.int32), clamp) == -1           # geometry type
    assert fn(1, x, packed, padded, zeros, out, np.array([3, 2, 0, 1, 1, 2, 1, 2], np.int64), clamp) == -1
    assert fn(1, x, packed, padded, zeros[:9], out, geometry, clamp) == -1                       # zeros short of a run
    assert (out == 7.0).all()
    with pytest.raises(TypeError):
        fn(1, x, packed)


@needs_library
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("k", [0, 1, 4, 7, 8])
@pytest.mark.parametrize("first", [0.0, 1.0])
def test_a_residual_add_in_the_epilogue_is_the_add_after_the_convolution(k, threads, first):
    """``conv_f32``'s residual arguments: the convolution's clamped output, then the ADD of the residual
    (its operands in the ADD's order) and the ADD's clamp, in the same pass: bit for bit the convolution
    stored, then the library's ``binary_f32`` on it; NaN in both operands comes out as the first one's
    payload, as the ADD on its own gives it.  In place (the residual is the output) too."""
    from workbench.perf import elementwise

    shape = SHAPES[k]
    n, _, _, _, o, kh, kw, stride, dilation, pad, out_hw = shape
    x, filt, bias = operands(shape, 11 + k)
    rng = np.random.default_rng(k)
    residual = rng.standard_normal((n, *out_hw, o)).astype(np.float32)
    conv_nan = np.float32(np.frombuffer(np.uint32(0x7fc00001).tobytes(), np.float32)[0])
    res_nan = np.float32(np.frombuffer(np.uint32(0x7fc00002).tobytes(), np.float32)[0])
    filt[0, 0, 0, 0] = conv_nan                           # output channel 0 NaN where that tap is inside
    residual[..., 0] = res_nan
    _, conv = call(shape, x, filt, bias, threads, lo=-1.5, hi=4.0)
    a, b = (residual, conv) if first else (conv, residual)
    want = np.empty_like(conv)
    add_clamp = np.array([-2.0, 5.0], np.float32)
    assert elementwise.binary_function()(1, a.reshape(-1), b.reshape(-1), want.reshape(-1), add_clamp, 0) == 0
    geometry = np.array([kh, kw, *stride, *dilation, *pad], np.int64)
    args = (x, fgemm.pack_filter(filt), fgemm.pad_bias(bias), np.zeros(kw * shape[3], np.float32))
    clamp = np.array([-1.5, 4.0, 1e30], np.float32)
    add = np.array([-2.0, 5.0, first], np.float32)
    out = np.full_like(conv, 7.0)
    assert fgemm.function()(threads, *args, out, geometry, clamp, residual, add) == 0
    assert out.tobytes() == want.tobytes()
    assert np.isnan(want[..., 0]).all() and (want == 5.0).any() and (want == -2.0).any()
    inplace = residual.copy()
    assert fgemm.function()(threads, *args, inplace, geometry, clamp, inplace, add) == 0
    assert inplace.tobytes() == want.tobytes()


@needs_library
def test_a_residual_add_refuses_arrays_that_overlap():
    """-1 (nothing written) where the output would be written over the convolution's input, or over a part
    of the residual it still reads, or where the residual is not of the output's shape."""
    shape = SHAPES[3]                                     # 1x1, 5x7x12 -> 5x7x16
    x, filt, bias = operands(shape, 2)
    fn, geometry = fgemm.function(), np.array([1, 1, 1, 1, 1, 1, 0, 0], np.int64)
    args = (fgemm.pack_filter(filt), fgemm.pad_bias(bias), np.zeros(12, np.float32))
    clamp, add = np.array([-np.inf, np.inf, 1e30], np.float32), np.array([-np.inf, np.inf, 0], np.float32)
    buf = np.full(1 * 5 * 7 * 16 + 16, 7.0, np.float32)
    out, shifted = buf[:560].reshape(1, 5, 7, 16), buf[16:].reshape(1, 5, 7, 16)
    residual = np.ones((1, 5, 7, 16), np.float32)
    assert fn(1, x, *args, out, geometry, clamp, shifted, add) == -1            # residual a row further on
    over_x = np.full(5 * 7 * 16, 7.0, np.float32)
    x_view = over_x[:5 * 7 * 12].reshape(1, 5, 7, 12)
    x_view[...] = x
    assert fn(1, x_view, *args, over_x.reshape(1, 5, 7, 16), geometry, clamp, residual, add) == -1
    assert fn(1, x, *args, out, geometry, clamp, residual[:, :4], add) == -1    # another shape
    assert fn(1, x, *args, out, geometry, clamp, residual, add[:2]) == -1
    assert (buf == 7.0).all() and np.array_equal(x_view, x)
    assert fn(1, x, *args, out, geometry, clamp, residual, add) == 0

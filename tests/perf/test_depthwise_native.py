"""The kernel library's int8 depthwise convolution (perf/native/depthwise.c through perf/native_dw.py) against the
teaching layer (kernels/depthwise_conv_2d.py), bit for bit, on small random shapes: odd channel counts
(fewer than a block, a partial last block), stride 2, dilation, padding on every side, images smaller
than the window, several images, filters other than 3x3; the four roundings of its epilogue (ties up
with a 32-bit shift, ties up with any shift, ties away from zero, both by channel), the clamp, one and
two threads cut by rows and by channel blocks; and -1 (output untouched) for arrays it does not take.
The fast path that calls it is tested in tests/interpreter/fast/test_fast_depthwise_native.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.interpreter.kernels import depthwise_conv_2d as dw
from workbench.interpreter.kernels._common import out_size, pad_before
from workbench.perf import depthwise as native_dw
from workbench.perf import vnni

needs_library = pytest.mark.skipif(native_dw.int8_function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")

# (N, H, W, C), (KH, KW), stride, dilation, padding
SHAPES = [((1, 7, 6, 5), (3, 3), (1, 1), (1, 1), "SAME"),          # fewer channels than a block
          ((2, 9, 8, 19), (3, 3), (2, 2), (1, 1), "SAME"),         # two images, a partial last block
          ((1, 8, 9, 17), (3, 3), (2, 1), (1, 1), "VALID"),
          ((1, 9, 10, 32), (3, 3), (1, 1), (2, 3), "SAME"),        # dilation: taps far apart
          ((1, 11, 7, 33), (3, 3), (2, 2), (2, 1), "VALID"),
          ((1, 2, 2, 9), (3, 3), (1, 1), (1, 1), "SAME"),          # an image smaller than the window
          ((1, 3, 5, 1), (3, 3), (2, 2), (1, 2), "SAME"),
          ((1, 6, 7, 40), (5, 3), (1, 2), (1, 1), "SAME"),         # other filter sizes: the tap loop
          ((1, 5, 5, 16), (1, 1), (1, 1), (1, 1), "VALID"),
          ((2, 4, 3, 70), (2, 4), (1, 1), (1, 1), "SAME"),         # more channels than output pixels
          ((1, 12, 12, 48), (3, 3), (1, 2), (1, 1), "SAME"),
          ((1, 5, 50, 21), (3, 3), (1, 1), (1, 1), "SAME"),        # long rows: the float loop's pixels outer
          ((2, 4, 53, 35), (3, 3), (1, 1), (1, 1), "VALID"),
          # short rows or stride 2, and 4+ blocks: the float loop's one pixel at a time (a partial last block,
          # dilation, padding on one side only, long rows of stride 2)
          ((1, 6, 7, 67), (3, 3), (1, 1), (1, 1), "SAME"),
          ((1, 5, 101, 70), (3, 3), (2, 2), (1, 1), "SAME"),
          ((2, 9, 8, 64), (3, 3), (2, 2), (1, 1), "SAME"),
          ((1, 9, 10, 80), (3, 3), (1, 1), (2, 2), "SAME"),
          ((1, 8, 8, 96), (3, 3), (2, 2), (1, 1), "VALID"),
          # the one-pixel loop's inner pixels two at a time (shared weights and columns): an even number of
          # them at stride 1 over two tiles of blocks (38 blocks), stride 2 with no edge pixel at all
          ((1, 7, 8, 600), (3, 3), (1, 1), (1, 1), "SAME"),
          ((1, 9, 9, 72), (3, 3), (2, 2), (1, 1), "VALID")]

# how the final shift rounds: (shift range, ties up in the vector channels?, vector channels of C)
ROUNDINGS = {"up_fast": ((-12, -1), True, 1.0),        # ties up, shifts of 32..54 bits after the product
             "up_any": ((-31, 0), True, 1.0),          # ties up, shifts of 31 and 62 bits too
             "away": ((-12, 0), False, 1.0),           # ties away from zero everywhere
             "mixed": ((-12, -1), True, 0.5)}          # the first half of the channels up, the rest away


def window(shape, kernel, stride, dilation, padding):
    """(OH, OW, pad top, pad left) of TFLite's SAME or VALID padding."""
    _, h, w, _ = shape
    kh, kw = kernel
    code = 1 if padding == "SAME" else 2
    oh, ow = out_size(code, h, kh, stride[0], dilation[0]), out_size(code, w, kw, stride[1], dilation[1])
    return oh, ow, pad_before(stride[0], dilation[0], h, kh, oh)[0], pad_before(stride[1], dilation[1], w, kw, ow)[0]


def case(shape, kernel, stride, dilation, padding, rounding, seed, clamp=(-128, 127)):
    n, h, w, c = shape
    kh, kw = kernel
    rng = np.random.default_rng(seed)
    oh, ow, pt, pl = window(shape, kernel, stride, dilation, padding)
    (s0, s1), up, share = ROUNDINGS[rounding]
    x = rng.integers(-128, 128, shape).astype(np.int8)
    filt = rng.integers(-127, 128, (1, kh, kw, c)).astype(np.int8)
    bias = rng.integers(-30000, 30000, c).astype(np.int32)
    mult = rng.integers(1 << 30, 1 << 31, c).astype(np.int64)
    shift = rng.integers(s0, s1 + 1, c).astype(np.int64)
    if rounding == "up_any":
        shift[0::3] = 0                 # 31 bits after the product
        shift[1::3] = -31               # 62 bits
    d = dw.DepthwiseConv2DInt8Data(
        padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h=dilation[0], dilation_w=dilation[1],
        pad_top=pt, pad_left=pl, depth_multiplier=1, output_shape=(n, oh, ow, c), activation="NONE",
        input_scale=1.0, input_zero_point=int(rng.integers(-128, 128)), filter_scale=np.ones(c, np.float32),
        output_scale=1.0, output_zero_point=int(rng.integers(-128, 128)), effective_scale=np.ones(c),
        output_multiplier=mult, output_shift=shift, output_activation_min=clamp[0],
        output_activation_max=clamp[1], per_channel=True, vector_channels=int(c * share) if up else 0)
    return x, filt, bias, d


def native(x, filt, bias, d, threads=1, out=None):
    """dw_i8's answer and output for the case."""
    kh, kw, c = filt.shape[1:]
    c16 = -(-c // native_dw.BLOCK) * native_dw.BLOCK
    tables = vnni.requant_tables(bias, d.output_multiplier, d.output_shift, d.output_zero_point,
                                 d.output_activation_min, d.output_activation_max, True, c16, 255 * 128 * kh * kw,
                                 n_up=d.vector_channels)
    assert tables is not None
    out = np.full(d.output_shape, 99, np.int8) if out is None else out
    fn = native_dw.int8_function()
    done = fn(threads, x, native_dw.pack_filter(filt), out, *tables, native_dw.geometry(d, kh, kw))
    return done, out


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("rounding", sorted(ROUNDINGS))
@pytest.mark.parametrize("shape,kernel,stride,dilation,padding", SHAPES)
def test_dw_i8_is_the_teaching_layer(shape, kernel, stride, dilation, padding, rounding, threads):
    x, filt, bias, d = case(shape, kernel, stride, dilation, padding, rounding, seed=shape[3] + len(rounding))
    done, out = native(x, filt, bias, d, threads)
    assert done == 0
    np.testing.assert_array_equal(out, dw.depthwise_int8(x, filt, bias, d))


@needs_library
@pytest.mark.parametrize("rounding", sorted(ROUNDINGS))
def test_a_narrower_clamp_than_int8_is_applied(rounding):
    """ReLU6-like bounds: the min / max path, not the saturating store."""
    x, filt, bias, d = case((1, 9, 9, 21), (3, 3), (1, 1), (1, 1), "SAME", rounding, seed=3, clamp=(-100, 20))
    done, out = native(x, filt, bias, d)
    want = dw.depthwise_int8(x, filt, bias, d)
    assert done == 0 and (want == 20).any() and (want == -100).any()
    np.testing.assert_array_equal(out, want)


@needs_library
def test_the_largest_sums_stay_exact():
    """x − zp = −255 against w = −128 over nine taps, from biases just inside the exact range."""
    c = 19
    x, filt, bias, d = case((1, 5, 5, c), (3, 3), (1, 1), (1, 1), "SAME", "up_fast", seed=4)
    x[...] = -128
    filt[...] = -128
    bias[:] = native_dw.EXACT_BELOW - 1 - 255 * 128 * 9
    bias[::2] *= -1
    assert native_dw.exact(bias, 9) and not native_dw.exact(bias + 1, 9)
    d = dataclasses.replace(d, input_zero_point=127, output_multiplier=np.full(c, (1 << 31) - 1, np.int64),
                            output_shift=np.full(c, -20, np.int64))
    done, out = native(x, filt, bias, d)
    want = dw.depthwise_int8(x, filt, bias, d)
    assert done == 0 and len(np.unique(want)) > 1
    np.testing.assert_array_equal(out, want)


@needs_library
@pytest.mark.parametrize("shape", [((1, 28, 28, 64)), ((1, 14, 14, 512)), ((1, 3, 3, 256))])
def test_two_threads_write_the_bytes_of_one(shape):
    """Cut by rows (more output pixels than channels, or fewer, as a MobileNet's 14x14x512 layers), and by
    channel blocks (three rows: fewer than two pieces a thread)."""
    x, filt, bias, d = case(shape, (3, 3), (1, 1), (1, 1), "SAME", "mixed", seed=5)
    assert native(x, filt, bias, d, threads=2)[1].tobytes() == native(x, filt, bias, d, threads=1)[1].tobytes()


@needs_library
def test_arrays_it_does_not_take_leave_the_output_alone():
    x, filt, bias, d = case((1, 6, 6, 20), (3, 3), (1, 1), (1, 1), "SAME", "up_fast", seed=6)
    kh, kw, c = 3, 3, 20
    tables = vnni.requant_tables(bias, d.output_multiplier, d.output_shift, d.output_zero_point, -128, 127, True,
                                 32, 255 * 128 * 9, n_up=c)
    packed, geom = native_dw.pack_filter(filt), native_dw.geometry(d, kh, kw)
    fn = native_dw.int8_function()
    big = (tables[0].copy(), *tables[1:])
    big[0][0, 0] = native_dw.EXACT_BELOW          # a bias whose float sums would not be exact
    bad_scalars = tables[2].copy()
    bad_scalars[4] = c + 1                   # tables made for another channel count
    tall = np.array([17, 1, 1, 1, 1, 1, 0, 0, 0], np.int64)
    refused = [
        (x.astype(np.int16), packed, tables, geom),                         # not int8
        (x[:, :, ::-1], packed, tables, geom),                               # not C-contiguous
        (x, packed[:, :16], tables, geom),                                   # filter rows too short
        (x, packed.astype(np.float64), tables, geom),                        # filter not float32
        (x, packed, big, geom),
        (x, packed, (tables[0], tables[1], bad_scalars), geom),
        (x, native_dw.pack_filter(np.zeros((17, 1, c), np.int8)), tables, tall),  # more filter rows than the ring
        (x, packed, tables, geom[:8]),                                       # geometry too short
    ]
    for args in refused:
        out = np.full(d.output_shape, 99, np.int8)
        assert fn(1, args[0], args[1], out, *args[2], args[3]) == -1
        assert (out == 99).all()


# -- float32 -------------------------------------------------------------------------------------------------


def float_case(shape, kernel, stride, dilation, padding, seed, clamp=(-np.inf, np.inf)):
    n, h, w, c = shape
    kh, kw = kernel
    rng = np.random.default_rng(seed)
    oh, ow, pt, pl = window(shape, kernel, stride, dilation, padding)
    x = rng.standard_normal(shape).astype(np.float32)
    filt = rng.standard_normal((1, kh, kw, c)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    d = dw.DepthwiseConv2DData(padding, *stride, *dilation, pt, pl, 1, (n, oh, ow, c), "NONE", *clamp)
    return x, filt, bias, d


def native_float(x, filt, bias, d, threads=1):
    kh, kw = filt.shape[1:3]
    out = np.full(d.output_shape, 7.0, np.float32)
    packed = native_dw.pack_float(filt, bias)
    done = native_dw.float_function()(threads, x, packed, out, native_dw.geometry(d, kh, kw, zero_point=False),
                                      native_dw.float_clamp(packed, d.output_activation_min,
                                                            d.output_activation_max))
    return done, out


def same_bits(a, b):
    return a.view(np.uint32).tobytes() == b.view(np.uint32).tobytes()


needs_float = pytest.mark.skipif(native_dw.float_function() is None,
                                 reason="no kernel library with AVX-512 here (make kernels builds it)")


@needs_float
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,kernel,stride,dilation,padding", SHAPES)
def test_dw_f32_is_the_teaching_layer_bias_first(shape, kernel, stride, dilation, padding, threads):
    x, filt, bias, d = float_case(shape, kernel, stride, dilation, padding, seed=shape[3])
    done, out = native_float(x, filt, bias, d, threads)
    assert done == 0 and same_bits(out, dw.depthwise_float(x, filt, bias, d, bias_first=True))


@needs_float
@pytest.mark.parametrize("threads", [3, 8])
@pytest.mark.parametrize("shape", [(1, 14, 14, 96), (2, 7, 7, 130), (1, 9, 60, 33)])
def test_dw_f32_more_threads_than_cores_write_the_bits_of_one(shape, threads):
    """Ranges of pixels (short rows), rows (long rows of few blocks): every piece written once, whichever
    thread takes it."""
    x, filt, bias, d = float_case(shape, (3, 3), (1, 1), (1, 1), "SAME", seed=3)
    assert same_bits(native_float(x, filt, bias, d, threads)[1], native_float(x, filt, bias, d, 1)[1])


@needs_float
@pytest.mark.parametrize("width", [7, 52])
@pytest.mark.parametrize("odd", ["nan_and_inf_inputs", "inf_weight", "nan_weight", "minus_zero_bias", "relu6"])
def test_dw_f32_keeps_the_bits_where_zeros_would_not(odd, width):
    """A row of zeros under a weight that is not finite would add NaN, and +0 would turn a sum of -0.0
    (a bias of -0.0 with nothing else yet) into +0.0: the taps outside the image are then skipped.
    Seven columns: the blocks-outer loop; 52: the pixels-outer one."""
    x, filt, bias, d = float_case((1, 6, width, 18), (3, 3), (1, 1), (1, 1), "SAME", seed=8,
                                  clamp=(0.0, 6.0) if odd == "relu6" else (-np.inf, np.inf))
    if odd == "nan_and_inf_inputs":
        x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    elif odd == "inf_weight":
        filt[0, 0, 1, 2] = np.inf
    elif odd == "nan_weight":
        filt[0, 2, 2, 17] = np.nan
    elif odd == "minus_zero_bias":
        bias[:] = -0.0
        x[0, 0] = 0.0
        x[0, :, 0] = -0.0
    done, out = native_float(x, filt, bias, d)
    want = dw.depthwise_float(x, filt, bias, d, bias_first=True)
    assert done == 0 and same_bits(out, want)
    if odd == "minus_zero_bias":
        assert np.signbit(want[0, 0, 0]).any()
    # the weights say whether a row of zeros may stand for the skipped taps; the inputs do not
    flag = native_dw.float_clamp(native_dw.pack_float(filt, bias), 0.0, 6.0)[2]
    assert flag == (0.0 if odd in ("inf_weight", "nan_weight", "minus_zero_bias") else 1.0)


@needs_float
def test_dw_f32_arrays_it_does_not_take_leave_the_output_alone():
    x, filt, bias, d = float_case((1, 6, 6, 20), (3, 3), (1, 1), (1, 1), "SAME", seed=9)
    packed = native_dw.pack_float(filt, bias)
    geom = native_dw.geometry(d, 3, 3, zero_point=False)
    clamp = native_dw.float_clamp(packed, -np.inf, np.inf)
    fn = native_dw.float_function()
    refused = [(x.astype(np.float64), packed, geom, clamp),              # not float32
               (x[:, :, ::-1], packed, geom, clamp),                     # not C-contiguous
               (x, packed[:1], geom, clamp),                             # one block of 16 channels for 20
               (x, packed[:, :9], geom, clamp),                          # no bias row (nine taps only)
               (x, packed.reshape(2, 10, 2, 8)[:, :, 0], geom, clamp),   # blocks of 8
               (x, packed, geom[:7], clamp),                             # geometry too short
               (x, packed, geom, clamp[:1]),                             # no upper bound
               (x, packed, geom, clamp[:2])]                             # nothing said about the zeros
    for xx, w, g, cl in refused:
        out = np.full(d.output_shape, 7.0, np.float32)
        assert fn(1, xx, w, out, g, cl) == -1
        assert (out == 7.0).all()

"""The int8 products that requantize in registers (perf/vnni.py: tile_rq, requantize_block, conv_rq,
conv_amx_rq; fast/depthwise_conv_2d.py: depthwise3x3_int8_rq) against the teaching layer
(kernels/conv_2d.py: conv_int8, kernels/depthwise_conv_2d.py: depthwise_int8), bit for bit, compiled and
as Python (the numpy twins of the IR), on small random shapes: odd channel counts, stride 2, dilation,
padding edges, 1x1 convolutions read in place; and the fallbacks where the requantization is not narrow."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.conv_cases import conv_int8_teaching
from helpers.op_layers import OpLayers
from helpers.quantized_ops_cases import depthwise_i8
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import conv_2d as fast_conv
from workbench.interpreter.fast import depthwise_conv_2d as fast_dw
from workbench.interpreter.kernels import conv_2d
from workbench.interpreter.kernels import depthwise_conv_2d as dw
from workbench.perf import depthwise as native_dw
from workbench.perf import vnni
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import DepthwiseConv2DOptions, ModelBuilder, Padding

# N, H, W, C, O, KH, KW, stride, dilation, pad (top, left), output (OH, OW)
SHAPES = [(1, 9, 7, 5, 37, 3, 2, (2, 1), (1, 2), (1, 2), (5, 7)),        # odd everything, padding edges
          (2, 6, 6, 33, 19, 3, 3, (1, 1), (1, 1), (1, 1), (6, 6)),        # two images, 3x3 SAME
          (1, 11, 9, 7, 65, 1, 1, (2, 2), (1, 1), (0, 0), (6, 5)),        # 1x1 stride 2: gathered rows
          (1, 5, 7, 12, 20, 1, 1, (1, 1), (1, 1), (0, 0), (5, 7)),        # 1x1 stride 1, C % 4 == 0: read in place
          (1, 3, 3, 9, 17, 1, 1, (1, 1), (1, 1), (0, 0), (3, 3)),         # 1x1 stride 1, C % 4 != 0: gathered
          (1, 8, 8, 3, 16, 3, 3, (2, 2), (2, 2), (1, 1), (4, 4)),         # a first layer, dilated
          # filter rows of at most 16 bytes copied as 16 (gather_rows' flip16), the last pixels' rows
          # byte by byte (16 bytes from there would run past the input), 8-row blocks (tile_rq_tall)
          (1, 13, 11, 3, 32, 3, 3, (2, 2), (1, 1), (1, 1), (7, 6)),       # a first layer, SAME, stride 2
          (2, 10, 9, 5, 24, 3, 3, (1, 1), (1, 1), (1, 1), (10, 9)),       # 15-byte rows, two images
          # rows left after the last block of 4 (8) rows: one-row blocks (tile_rq_row, tile_rq_tall_row)
          (1, 7, 7, 8, 70, 1, 1, (1, 1), (1, 1), (0, 0), (7, 7)),         # 49 rows, 4 + 1 channel blocks
          (1, 1, 1, 36, 83, 1, 1, (1, 1), (1, 1), (0, 0), (1, 1)),        # one row (a fully connected layer)
          (1, 5, 5, 3, 30, 3, 3, (1, 1), (1, 1), (1, 1), (5, 5))]         # 25 rows of 2 blocks: 3 of 8, 1 left




def operands(shape, seed):
    n, h, w, c, o, kh, kw = shape[:7]
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (n, h, w, c)).astype(np.int8)
    f = rng.integers(-128, 128, (o, kh, kw, c)).astype(np.int8)
    bias = rng.integers(-20000, 20000, o).astype(np.int32)
    mult = rng.integers(2 ** 30, 2 ** 31, o).astype(np.int64)
    shift = rng.integers(-9, 1, o).astype(np.int64)
    return x, f, bias, mult, shift


@pytest.mark.parametrize("amx", [False, True])
@pytest.mark.parametrize("half_up", [True, False])
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_rows_requantized_in_registers_are_the_teaching_layer(shape, compiled, half_up, amx):
    n, h, w, c, o, kh, kw, (sh, sw), (dh, dw_), (pt, pl), (oh, ow) = shape
    # asking first is what gets this process Linux's permission for the AMX tiles (without it: SIGILL, as a
    # lone test in a worker)
    if amx and not vnni.amx_available():
        assert not vnni.amx_available()        # nothing compiled to check on this CPU: the VNNI block runs
        return
    x, f, bias, mult, shift = operands(shape, c * o)
    w2d = f.reshape(o, -1)
    packed = vnni.pack_filter(w2d, 64 if amx else 4)
    direct = kh == kw == sh == sw == 1 and pt == pl == 0 and c == 4 * packed.shape[1]
    for zp, out_zp, lo, hi in ((-7, 3, -128, 127), (127, 0, -20, 90)):
        want = conv_int8_teaching(x, f, bias, (sh, sw), (dh, dw_), (pt, pl), (oh, ow), zp, mult, shift, out_zp, lo, hi,
                        half_up)
        tables = vnni.tables_for(packed, vnni.folded_bias(bias, w2d, zp), mult, shift, out_zp, lo, hi, half_up)
        out = np.full((n * oh * ow, o), 99, np.int8)
        geometry = (oh, ow, kh, kw, sh, sw, dh, dw_, pt, pl)
        if amx:         # in two pieces, as two threads run it: rows 0..16 and 16..M
            fn = vnni.conv_amx_rq if compiled else vnni.conv_amx_rq.py_func
            m, cut = n * oh * ow, min(16, n * oh * ow)
            for m0, m1 in ((0, cut), (cut, m)):
                fn(x, x.reshape(n * h, w * c), packed, *tables, out, np.uint8(zp + 128), *geometry, vnni.amx_config(),
                   False, m0, m1)
        else:
            fn = vnni.conv_rq if compiled else vnni.conv_rq.py_func
            fn(x, x.reshape(n * h, w * c), packed, *tables, out, np.uint8(zp + 128), *geometry, direct, False, 0,
               n * oh * ow)
        assert (out.reshape(want.shape) == want).all(), (zp, int((out.reshape(want.shape) != want).sum()))


@pytest.mark.parametrize("amx", [False, True])
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("shape", [(1, 7, 7, 32, 70, 1, 1, (1, 1), (1, 1), (0, 0), (7, 7)),     # 7x7, read in place
                                   # 4 groups, the last of one block: a piece of several groups, whose blocks
                                   # prefetch the next group's filter (tile_rq's pf)
                                   (1, 7, 7, 32, 200, 1, 1, (1, 1), (1, 1), (0, 0), (7, 7)),
                                   (1, 1, 1, 64, 100, 1, 1, (1, 1), (1, 1), (0, 0), (1, 1)),    # one pixel
                                   (2, 6, 5, 9, 67, 3, 3, (2, 2), (1, 1), (1, 1), (3, 3))])     # gathered, padded
def test_channel_groups_requantized_in_registers_are_the_teaching_layer(shape, compiled, amx):
    """conv_rq / conv_amx_rq cut by groups: every row, output channel groups g0..g1, in two pieces as two
    threads run them (the cut of a product with few rows); the bytes of the teaching layer."""
    n, h, w, c, o, kh, kw, (sh, sw), (dh, dw_), (pt, pl), (oh, ow) = shape
    if amx and compiled and not vnni.amx_available():
        assert not vnni.amx_available()
        return
    x, f, bias, mult, shift = operands(shape, o)
    w2d = f.reshape(o, -1)
    packed = vnni.pack_filter(w2d, 64 if amx else 4)
    direct = kh == kw == sh == sw == 1 and pt == pl == 0 and c == 4 * packed.shape[1]
    zp, out_zp = -3, 2
    want = conv_int8_teaching(x, f, bias, (sh, sw), (dh, dw_), (pt, pl), (oh, ow), zp, mult, shift, out_zp, -128, 127,
                              True)
    tables = vnni.tables_for(packed, vnni.folded_bias(bias, w2d, zp), mult, shift, out_zp, -128, 127, True)
    out = np.full((n * oh * ow, o), 99, np.int8)
    geometry = (oh, ow, kh, kw, sh, sw, dh, dw_, pt, pl)
    groups = -(-packed.shape[0] // vnni.BLOCKS)
    name = "conv_amx_rq" if amx else "conv_rq"
    fn = getattr(vnni, name) if compiled else getattr(vnni, name).py_func
    last = vnni.amx_config() if amx else direct
    for g0, g1 in ((0, 1), (1, groups)):
        fn(x, x.reshape(n * h, w * c), packed, *tables, out, np.uint8(zp + 128), *geometry, last, True, g0, g1)
    assert (out.reshape(want.shape) == want).all()


def test_conv_cuts_few_rows_by_channels(monkeypatch):
    """vnni.conv: fewer than COLS_BELOW rows and more channels than rows -> cut by channel groups (the kernel's
    pieces the groups), else by rows; the teaching layer's bytes either way."""
    took = []
    for name in ("conv_rq", "conv_amx_rq"):
        real = getattr(vnni, name)
        monkeypatch.setattr(vnni, name, lambda *a, real=real, name=name: (took.append((name, a[-3])), real(*a)))
    for shape, cols in (((1, 3, 3, 16, 200, 1, 1, (1, 1), (1, 1), (0, 0), (3, 3)), True),   # 4 channel groups
                        ((1, 9, 9, 16, 40, 1, 1, (1, 1), (1, 1), (0, 0), (9, 9)), False)):
        x, f, bias, mult, shift = operands(shape, 11)
        o = shape[4]
        w2d = f.reshape(o, -1)
        packed, folded = vnni.pack_filter(w2d), vnni.folded_bias(bias, w2d, 4)
        tables = vnni.tables_for(packed, folded, mult, shift, 1, -128, 127, True)
        out = np.zeros((shape[0] * shape[10][0] * shape[10][1], o), np.int8)
        took.clear()
        vnni.conv(x, packed, folded, mult, shift, 1, -128, 127, True, out,
                  (*shape[10], 1, 1, 1, 1, 1, 1, 0, 0, 132), 2, tables)
        assert took == [("conv_rq", cols)], took
        want = conv_int8_teaching(x, f, bias, (1, 1), (1, 1), (0, 0), shape[10], 4, mult, shift, 1, -128, 127, True)
        assert (out.reshape(want.shape) == want).all()


@pytest.mark.parametrize("tall, rows", [(False, 4), (False, 3), (False, 5), (True, 8), (True, 9)])
def test_blocks_that_prefetch_sum_the_same(tall, rows):
    """tiles_rq (compiled) whose blocks prefetch the next group's filter (tile_rq's pf >= 0: the loop's other
    copy, one prefetch a step; 3 rows: one block of 3, 5: a block and a one-row block, 9: an 8-row block and a
    one-row block) writes the bytes it writes without, and the teaching layer's."""
    k, o = 72, 150                      # 18 groups of k (an odd count: the one-row blocks' two sets of sums)
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (rows, k)).astype(np.int8)
    w = rng.integers(-128, 128, (o, k)).astype(np.int8)
    bias = rng.integers(-20000, 20000, o).astype(np.int32)
    mult = rng.integers(2 ** 30, 2 ** 31, o).astype(np.int64)
    shift = rng.integers(-9, 1, o).astype(np.int64)
    packed = vnni.pack_filter(w)
    tables = vnni.tables_for(packed, vnni.folded_bias(bias, w, 0), mult, shift, 3, -128, 127, True)
    blocks = 2 if tall else vnni.BLOCKS
    outs = []
    for next_nb, next_blocks in ((0, 0), (blocks, 4), (packed.shape[0] - 1, 1)):
        out = np.full((rows, o), 99, np.int8)
        vnni.tiles_rq(x, k, vnni.FLIP, 0, packed, 0, packed.shape[1], out, 0, rows, blocks, *tables, tall, next_nb,
                      next_blocks)
        outs.append(out)
    want = conv_int8_teaching(x.reshape(1, rows, 1, k), w.reshape(o, 1, 1, k), bias, (1, 1), (1, 1), (0, 0),
                              (rows, 1), 0, mult, shift, 3, -128, 127, True).reshape(rows, o)
    assert (outs[0][:, :16 * blocks] == want[:, :16 * blocks]).all()
    assert (outs[0][:, 16 * blocks:] == 99).all()
    for out in outs[1:]:
        assert (out == outs[0]).all()


def test_tables_only_for_a_narrow_requantization():
    """A left shift, or a bias that could take sum + bias out of int32: no tables, the general requantization."""
    bias, mult = np.array([5, -7], np.int64), np.array([1 << 30, (1 << 31) - 1], np.int64)
    assert vnni.requant_tables(bias, mult, np.array([-3, 0]), 0, -128, 127, True, 16, 1000) is not None
    assert vnni.requant_tables(bias, mult, np.array([-3, 1]), 0, -128, 127, True, 16, 1000) is None
    assert vnni.requant_tables(bias, mult, np.array([-3, 0]), 0, -128, 127, True, 16, (1 << 31) - 8) is None
    q32, q64, scalars = vnni.requant_tables(bias, mult, -3, 0, -128, 127, False, 16, 1000, n_up=1)
    assert scalars.tolist() == [0, -128, 127, 2, 2] and q32[2].tolist() == [1] + [0] * 15


@pytest.mark.parametrize("top_shift", [0, 1])
def test_conv_takes_the_registers_epilogue_only_with_tables(monkeypatch, top_shift):
    """vnni.conv runs conv_rq when the node has tables (made at bind), conv_rows without (a left
    shift); both write the teaching layer's bytes."""
    shape = (1, 5, 7, 12, 20, 1, 1, (1, 1), (1, 1), (0, 0), (5, 7))
    x, f, bias, mult, shift = operands(shape, 3)
    shift[0] = top_shift
    w2d = f.reshape(20, -1)
    packed, folded = vnni.pack_filter(w2d), vnni.folded_bias(bias, w2d, 4)
    tables = vnni.tables_for(packed, folded, mult, shift, 1, -128, 127, True)
    assert (tables is None) == (top_shift == 1)
    took = []
    for name in ("conv_rows", "conv_rq"):
        real = getattr(vnni, name)
        monkeypatch.setattr(vnni, name, lambda *a, real=real, name=name: (took.append(name), real(*a)))
    out = np.zeros((35, 20), np.int8)
    vnni.conv(x, packed, folded, mult, shift, 1, -128, 127, True, out, (5, 7, 1, 1, 1, 1, 1, 1, 0, 0, 132), 1, tables)
    assert took == ["conv_rows" if top_shift else "conv_rq"]
    want = conv_int8_teaching(x, f, bias, (1, 1), (1, 1), (0, 0), (5, 7), 4, mult, shift, 1, -128, 127, True)
    assert (out.reshape(want.shape) == want).all()


# (N, H, W, C), stride, dilation, pad (top, left), output (OH, OW)
DEPTHWISE = [((1, 7, 6, 5), (1, 1), (1, 1), (1, 1), (7, 6)), ((2, 9, 8, 19), (2, 2), (1, 1), (1, 1), (5, 4)),
             ((1, 9, 10, 33), (1, 1), (2, 3), (2, 3), (9, 10)), ((1, 8, 9, 17), (2, 1), (1, 1), (0, 0), (3, 7)),
             ((1, 2, 2, 9), (1, 1), (1, 1), (1, 1), (2, 2))]


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("shape,stride,dilation,pad,out_hw", DEPTHWISE)
def test_depthwise_3x3_requantized_in_registers_is_the_teaching_layer(shape, stride, dilation, pad, out_hw,
                                                                      compiled):
    """Ties up in none, the first 8·⌊C/8⌋ (litert-x86's vector loop) or all channels."""
    n, h, w, c = shape
    rng = np.random.default_rng(200 + c)
    x = rng.integers(-128, 128, shape).astype(np.int8)
    filt = rng.integers(-128, 128, (1, 3, 3, c)).astype(np.int8)
    bias = rng.integers(-5000, 5000, c).astype(np.int32)
    mult = rng.integers(1 << 30, 1 << 31, c).astype(np.int64)
    shift = rng.integers(-9, 1, c).astype(np.int64)
    in_zp, out_zp = int(rng.integers(-128, 128)), int(rng.integers(-10, 10))
    oh, ow = out_hw
    w3 = np.ascontiguousarray(filt[0], np.float32)
    wz = (-in_zp * w3.astype(np.float64).sum(axis=(0, 1))).astype(np.float32)
    fn = fast_dw.depthwise3x3_int8_rq if compiled else fast_dw.depthwise3x3_int8_rq.py_func
    for n_vec in (0, c - c % 8, c):
        d = dw.DepthwiseConv2DInt8Data(
            padding="", stride_h=stride[0], stride_w=stride[1], dilation_h=dilation[0], dilation_w=dilation[1],
            pad_top=pad[0], pad_left=pad[1], depth_multiplier=1, output_shape=(n, oh, ow, c), activation="NONE",
            input_scale=1.0, input_zero_point=in_zp, filter_scale=np.ones(c, np.float32), output_scale=1.0,
            output_zero_point=out_zp, effective_scale=np.ones(c), output_multiplier=mult, output_shift=shift,
            output_activation_min=-100, output_activation_max=127, per_channel=True, vector_channels=n_vec)
        want = dw.depthwise_int8(x, filt, bias, d)
        tables = vnni.requant_tables(bias, mult, shift, out_zp, -100, 127, True, -(-c // 16) * 16, 255 * 128 * 9,
                                     n_up=n_vec)
        out = np.full(want.shape, 99, np.int8)
        fn(x, w3, w3.reshape(9, c), wz, out.reshape(-1, c), *tables, oh, ow, *stride, *dilation, *pad, in_zp, 0, n * oh)
        np.testing.assert_array_equal(out, want)


LAYERS = OpLayers({"int8_3x3_c5": depthwise_i8((1, 6, 5, 5), (3, 3), act=Act.RELU6)})


def test_depthwise_bind_takes_the_registers_epilogue_only_when_narrow(monkeypatch):
    """A narrow requantization: depthwise3x3_int8_rq; with tables refused (as for a left shift), the
    float-sum kernel depthwise3x3_int8_rows; the teaching layer's bits either way.  (These are the
    numba kernels: the kernel library's C loop, which would take this node first, is left out.)"""
    monkeypatch.setattr(native_dw, "int8_function", lambda: None)
    for refuse, kernel in ((False, "depthwise3x3_int8_rq"), (True, "depthwise3x3_int8_rows")):
        if refuse:
            monkeypatch.setattr(vnni, "requant_tables", lambda *a, **k: None)
        model, _ = LAYERS.build("int8_3x3_c5")
        it = Interpreter(model=model)
        it.allocate_tensors()
        assert it._sg(0).plan[0][0].kernel.__name__ == kernel
        LAYERS.check_layers("int8_3x3_c5")


def test_conv_bind_makes_tables_only_when_narrow():
    d = conv_2d.Conv2DInt8Data("", 1, 1, 1, 1, 1, 1, 0, 0, 1, (1, 4, 4, 20), "", 1.0, 0, None, 1.0, 0, None,
                               np.full(20, 1 << 30, np.int64), np.full(20, -2, np.int64), -128, 127, True, "up")
    w2d = np.ones((20, 8), np.int8)
    packed = vnni.pack_filter(w2d)
    assert fast_conv.Int8Vnni(packed, vnni.folded_bias(np.zeros(20), w2d, 0), True, d).tables is not None
    d.output_shift[3] = 2
    assert fast_conv.Int8Vnni(packed, vnni.folded_bias(np.zeros(20), w2d, 0), True, d).tables is None


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("shape,stride,dilation,pad,out_hw", DEPTHWISE[1:4])
def test_float_depthwise_3x3_ir_is_the_teaching_layer_bias_first(shape, stride, dilation, pad, out_hw, compiled):
    """The float32 IR rows (depthwise3x3_f32: 16 channels to a register, 4 pixels side by side, the last block
    overlapping) keep the teaching layer's order of adds: the same bits, inf and NaN included."""
    n, h, w, c = shape
    rng = np.random.default_rng(300 + c)
    x = rng.standard_normal(shape).astype(np.float32)
    x[0, 1, 1, 0], x[0, 2, 3, c - 1], x[-1, h - 1, w - 2, 3] = np.nan, np.inf, -np.inf
    filt = rng.standard_normal((1, 3, 3, c)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    oh, ow = out_hw
    d = dw.DepthwiseConv2DData("", *stride, *dilation, *pad, 1, (n, oh, ow, c), "RELU6", 0.0, 6.0)
    want = dw.depthwise_float(x, filt, bias, d, bias_first=True)
    out = np.full_like(want, 7.0)
    fn = fast_dw.depthwise3x3_ir_rows if compiled else fast_dw.depthwise3x3_ir_rows.py_func
    w3 = np.ascontiguousarray(filt[0])
    fn(x, w3, w3.reshape(9, c), bias, out, out.reshape(-1, c), *stride, *dilation, *pad, np.float32(0.0),
       np.float32(6.0), 0, n * oh)
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))


def _float_depthwise(c):
    def build(name):
        rng = np.random.default_rng(c)
        b = ModelBuilder()
        x = b.input("x", (1, 6, 5, c), np.float32)
        w = b.constant("w", rng.standard_normal((1, 3, 3, c)).astype(np.float32))
        bias = b.constant("bias", rng.standard_normal(c).astype(np.float32))
        y = b.tensor("y", (1, 6, 5, c), np.float32)
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bias], [y], DepthwiseConv2DOptions(
            padding=Padding.SAME, stride_h=1, stride_w=1, depth_multiplier=1, fused_activation_function=Act.RELU6))
        b.output(y)
        return b, {"x": rng.standard_normal((1, 6, 5, c)).astype(np.float32)}
    return build


FLOAT_LAYERS = OpLayers({"f32_c16": _float_depthwise(16), "f32_c5": _float_depthwise(5)})


@pytest.mark.parametrize("case,kernel", [("f32_c16", "depthwise3x3_ir_rows"), ("f32_c5", "depthwise3x3_rows")])
def test_float_bind_takes_the_ir_rows_from_16_channels(case, kernel, monkeypatch):
    """(The numba kernels: the kernel library's C loop, which would take these nodes first, is left out.)"""
    monkeypatch.setattr(native_dw, "float_function", lambda: None)
    model, _ = FLOAT_LAYERS.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    assert it._sg(0).plan[0][0].kernel.__name__ == kernel
    FLOAT_LAYERS.check_layers(case)

"""Regressions found by the quantized real-model sweep (``dev/quantized_sweep.py``), as tiny one-op models.

Every case is run by our fast kernel, by our plain numpy reference (``reference=True``) and by
ai-edge-litert's builtin kernels (in a child process); float outputs are compared bit for bit (as
uint32 words), integer outputs for equality.

* hybrid TRANSPOSE_CONV (a dynamic-range ``Conv2DTranspose`` / ``Conv1DTranspose``: float32 input,
  int8 weights, float32 bias): refused before the sweep.  litert quantizes each image as one
  asymmetric row and adds every tap as its own float32 product, so an int32 sum scaled once would
  differ in the last bit for about half of the outputs; the cases below have several input
  channels and overlapping taps (kernel larger than the stride) so that the order of the float
  sums matters, and rows designed to quantize with scale 1 so that rounding ties occur.
* grouped hybrid CONV_2D (a dynamic-range ConvNeXt: Keras 3 writes its 7x7 depthwise as a Conv2D
  with groups = channels): refused before the sweep.  litert runs TFLite's reference
  ``HybridConvPerChannel``: asymmetric images, int32 sums per group, ``acc·scale[o]·sf`` in float32,
  + bias, ``min(max(v, lo), hi)``.  With one filter scale that kernel reads past the scale array, so
  the workbench refuses it (checked below).
* grouped int8 CONV_2D (``Conv2D(groups=2)`` quantized by the AI Edge Quantizer): off by one on
  about 1 value in 300.  litert runs grouped int8 convolutions through its reference kernel, whose
  last rounding shift sends ties away from zero, not up as ruy does; the cases below use power-of-two
  scales so that ties are frequent, and a plain (random-scale) case.
* float L2_NORMALIZATION (left in float by the AI Edge Quantizer inside int8 / int16 graphs, where a
  last-bit difference can flip the QUANTIZE after it): computed in float64 before, a third of the
  values one bit off.  litert adds the squares in float32 one at a time and divides.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import litert_runner
import quantized_cases
from quantized_cases import assert_same, litert_outputs, run_ours
from workbench.interpreter import Interpreter
from workbench.errors import UnsupportedOpError
from workbench.schema import (
    ActivationFunctionType as Act, BuiltinOperator as B, Conv2DOptions, L2NormOptions, ModelBuilder, Padding,
    TransposeConvOptions,
)
from workbench.versioning import update_versions

S, V = Padding.SAME, Padding.VALID
TIES = np.float32([2.5, -2.5, 0.49999997, -0.49999997, 1.5, -0.5, 3.5, 0.5])


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, dim=0):
    scale = np.atleast_1d(scale).tolist()
    return {"scale": scale, "zero_point": [0] * len(scale), "quantized_dimension": dim}


def tconv_hybrid(x_shape, w_shape, out_hw, stride, padding, bias=True, act=Act.NONE, per_channel=True, ties=False):
    def build(name):
        rng = rng_for(name)
        co = w_shape[0]
        b = ModelBuilder()
        x = b.input("x", x_shape)
        out = (x_shape[0], out_hw[0], out_hw[1], co)
        shape_t = b.constant("output_shape", np.asarray(out, np.int32))
        w_s = rng.uniform(0.001, 0.01, co) if per_channel else np.array([0.006])
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s))
        ins = [shape_t, w, x]
        if bias:
            ins.append(b.constant("bias", rng.uniform(-1, 1, co).astype(np.float32)))
        y = b.tensor("y", out)
        b.op(B.TRANSPOSE_CONV, ins, [y], TransposeConvOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                                              fused_activation_function=act))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        if ties:   # image 0 spans exactly [-128, 127]: scale 1, zero point 0, ties in the vector part and the tail
            row = xv.reshape(x_shape[0], -1)[0]
            row[:] = np.clip(row * 40, -128, 127)
            row[0], row[1] = -128.0, 127.0
            row[2:10] = TIES
            row[-3:] = TIES[:3]
        return b, {"x": xv}
    return build


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == S else (size - eff) // s + 1


def conv_grouped_hybrid(x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, scales="random",
                        ties=False):
    def build(name):
        rng = rng_for(name)
        o = w_shape[0]
        b = ModelBuilder()
        w_s = {"random": lambda: rng.uniform(0.001, 0.01, o), "one": lambda: np.array([0.006]),
               "equal": lambda: np.full(o, 0.006)}[scales]()
        x = b.input("x", x_shape)
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s))
        bias = b.constant("bias", rng.uniform(-1, 1, o).astype(np.float32))
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, o))
        b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        if ties:
            row = xv.reshape(x_shape[0], -1)[0]
            row[:] = np.clip(row * 40, -128, 127)
            row[0], row[1] = -128.0, 127.0
            row[2:10] = TIES
        return b, {"x": xv}
    return build


def conv_grouped_int8(x_shape, w_shape, scales, stride=(1, 1), padding=S, act=Act.NONE):
    """scales: (input scale, input zero point, filter scales [O], output scale, output zero point)."""
    def build(name):
        rng = rng_for(name)
        o = w_shape[0]
        in_s, in_zp, w_s, out_s, out_zp = scales(rng, o)
        b = ModelBuilder()
        x = b.input("x", x_shape, dtype=np.int8, quantization={"scale": [in_s], "zero_point": [in_zp]})
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s))
        bias_scale = (in_s * np.asarray(w_s)).tolist()
        bias = b.constant("bias", rng.integers(-3000, 3000, o).astype(np.int32),
                          quantization={"scale": bias_scale, "zero_point": [0] * o, "quantized_dimension": 0})
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1])
        y = b.tensor("y", (x_shape[0], oh, ow, o), dtype=np.int8,
                     quantization={"scale": [out_s], "zero_point": [out_zp]})
        b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                                         fused_activation_function=act))
        b.output(y)
        return b, {"x": rng.integers(-128, 128, x_shape).astype(np.int8)}
    return build


def power_of_two_scales(rng, o):      # effective scale 2^-7 or 2^-8: many exact ties
    return 0.5, 3, rng.choice([1 / 64, 1 / 128], o).tolist(), 1.0, -5


def random_scales(rng, o):
    return 0.02, -7, rng.uniform(0.002, 0.01, o).tolist(), 0.05, 4


def l2norm_float(shape, scale=3.0):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape)
        y = b.tensor("y", shape)
        b.op(B.L2_NORMALIZATION, [x], [y], L2NormOptions())
        b.output(y)
        xv = (rng.uniform(-1, 1, shape) * scale).astype(np.float32)
        xv.reshape(-1, shape[-1])[0] = 0.0            # a zero row: the 1e-6 floor
        return b, {"x": xv}
    return build


CASES = {
    "tconv_hybrid_3x3_s2_same_per_channel": tconv_hybrid((2, 3, 4, 5), (6, 3, 3, 5), (6, 8), (2, 2), S),
    "tconv_hybrid_4x4_s2_valid_per_tensor_relu": tconv_hybrid((1, 4, 4, 8), (3, 4, 4, 8), (10, 10), (2, 2), V,
                                                              act=Act.RELU, per_channel=False),
    "tconv_hybrid_3x3_no_bias_16_channels": tconv_hybrid((1, 4, 4, 16), (12, 3, 3, 16), (8, 8), (2, 2), S,
                                                         bias=False),
    "tconv_hybrid_output_padding_relu6_ties": tconv_hybrid((1, 5, 5, 3), (4, 3, 3, 3), (10, 10), (2, 2), S,
                                                           act=Act.RELU6, ties=True),
    "tconv_hybrid_conv1d_like_stride_1x2": tconv_hybrid((1, 1, 16, 16), (8, 1, 3, 16), (1, 32), (1, 2), S),
    "tconv_hybrid_2x2_s2_n1to1_ties": tconv_hybrid((2, 3, 3, 9), (5, 2, 2, 9), (6, 6), (2, 2), V,
                                                   act=Act.RELU_N1_TO_1, ties=True),
    "conv_grouped_hybrid_depthwise_7x7": conv_grouped_hybrid((1, 9, 9, 12), (12, 7, 7, 1)),
    "conv_grouped_int8_1x1_ties_away": conv_grouped_int8((2, 8, 8, 16), (12, 1, 1, 8), power_of_two_scales),
    "conv_grouped_int8_3x3_4_groups_relu6": conv_grouped_int8((1, 7, 6, 8), (8, 3, 3, 2), random_scales,
                                                              stride=(2, 1), act=Act.RELU6),
    "l2norm_float_rows_of_5": l2norm_float((64, 5)),
    "l2norm_float_rows_of_37": l2norm_float((4, 4, 37)),
    "l2norm_float_rows_of_64_tiny": l2norm_float((8, 3, 64), scale=1e-7),
    "conv_grouped_int8_3x3_random_scales": conv_grouped_int8((1, 9, 9, 12), (6, 3, 3, 4), random_scales, padding=V),
    "conv_grouped_hybrid_4_groups_relu_ties": conv_grouped_hybrid((2, 6, 5, 8), (12, 3, 3, 2), act=Act.RELU,
                                                                  ties=True),
    "conv_grouped_hybrid_valid_stride_dilation_relu6": conv_grouped_hybrid((1, 11, 10, 6), (9, 3, 3, 2),
                                                                           stride=(2, 1), padding=V, dilation=(1, 2),
                                                                           act=Act.RELU6),
}


def build_case(name):
    return quantized_cases.build(CASES, name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_same(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_sweep"), CASES, build_case, workers=2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bitwise_with_litert(case, litert_results):
    model, inputs = build_case(case)
    assert_same(run_ours(model, inputs), litert_outputs(litert_results[case]), case)


def test_hybrid_transpose_conv_sums_taps_in_float_not_once_in_int32():
    """The fact the kernel rests on: scaling one int32 sum per output (as hybrid CONV_2D does) would
    not give litert's bits here, so the tap-by-tap float order is really exercised."""
    from workbench.interpreter import quant
    model, inputs = build_case("tconv_hybrid_3x3_no_bias_16_channels")
    ours = run_ours(model, inputs)[0]
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    x = inputs["x"]
    qx, sf, zp = quant.asymmetric_quantize_rows(x.reshape(1, -1))
    w_t = next(t for t in model.subgraphs[0].tensors if t.name == "w")
    w = np.frombuffer(bytes(model.buffers[w_t.buffer].data), np.int8).reshape(12, 3, 3, 16)
    from workbench.interpreter.kernels.transpose_conv import transpose_conv_sums
    acc = transpose_conv_sums(qx.reshape(x.shape), w, d, int(zp[0]))
    once = ((acc.astype(np.float32) * d.filter_scale) * sf[0]).astype(np.float32)
    assert np.allclose(once, ours, rtol=1e-5, atol=1e-6)          # the same values ...
    assert int((once.view(np.uint32) != ours.view(np.uint32)).sum()) > ours.size // 10   # ... not the same bits


@pytest.mark.parametrize("scales", ["one", "equal"])
def test_grouped_hybrid_conv_with_one_scale_is_refused(scales):
    """TFLite's grouped hybrid kernel needs one scale per output channel (and distinct ones, or Prepare
    never sizes the input offsets): with a single scale its output is undefined."""
    builder, _ = conv_grouped_hybrid((1, 5, 5, 4), (4, 3, 3, 1), scales=scales)("grouped_one_scale")
    it = Interpreter(model=update_versions(builder.build()))
    with pytest.raises(UnsupportedOpError, match="grouped hybrid convolution"):
        it.allocate_tensors()


def test_grouped_int8_cases_really_contain_ties():
    """Round-half-up would give other values on these cases (so the test above can fail)."""
    import dataclasses
    for name in ("conv_grouped_int8_1x1_ties_away",):
        model, inputs = build_case(name)
        it = Interpreter(model=model)
        it.allocate_tensors()
        d = it.prepared()[0][2]
        assert d.groups > 1 and d.rounding == "away"
        want = run_ours(model, inputs, reference=True)[0]
        x = inputs["x"]
        w_t = next(t for t in model.subgraphs[0].tensors if t.name == "w")
        b_t = next(t for t in model.subgraphs[0].tensors if t.name == "bias")
        filt = np.frombuffer(bytes(model.buffers[w_t.buffer].data), np.int8).reshape(w_t.shape)
        bias = np.frombuffer(bytes(model.buffers[b_t.buffer].data), np.int32)
        from workbench.interpreter.kernels.conv_2d import conv_int8
        up = conv_int8(x, filt, bias, dataclasses.replace(d, rounding="up"))
        assert int((up != want).sum()) >= 3, name

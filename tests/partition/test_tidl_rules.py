"""The tidl target's rules, one test per rule of TI's published TFLite operator table.

Source: TI edgeai-tidl-tools, ``docs/supported_ops_rts_versions.md``, "Operator Mapping (TIDL-RT)"
(the ``ti-doc`` label of ``targets/tidl.json``), and the TI paper (the ``paper`` label: pools up to 9x9,
RESIZE_BILINEAR left on the Arm).  Each case builds a one-operator model and reads the reason.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.partition import TargetError, load_target, parse_target, partition
from workbench.schema import BuiltinOperator as B
from workbench.schema import (
    Conv2DOptions,
    DepthToSpaceOptions,
    DepthwiseConv2DOptions,
    ModelBuilder,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    TransposeConvOptions,
)


def conv(kernel, stride, dilation=1, depthwise=False):
    b = ModelBuilder()
    x = b.input("x", [1, 32, 32, 4])
    w = b.constant("w", np.ones((1 if depthwise else 4, kernel[0], kernel[1], 4), np.float32))
    y = b.tensor("y", [1, 32 // stride, 32 // stride, 4])
    if depthwise:
        b.op(B.DEPTHWISE_CONV_2D, [x, w, -1], [y], DepthwiseConv2DOptions(
            padding=Padding.SAME, stride_w=stride, stride_h=stride, depth_multiplier=1,
            dilation_w_factor=dilation, dilation_h_factor=dilation))
    else:
        b.op(B.CONV_2D, [x, w, -1], [y], Conv2DOptions(padding=Padding.SAME, stride_w=stride, stride_h=stride,
                                                       dilation_w_factor=dilation, dilation_h_factor=dilation))
    b.output(y)
    return b.build()


def reason(model):
    return partition(model, "tidl", "tidl").placements[0].reason


# "Depthwise Separable Convolution only supports 3x3,5x5,7x7 with stride 1 and 3x3 with stride 2"
@pytest.mark.parametrize("kernel,stride,taken", [((3, 3), 1, True), ((5, 5), 1, True), ((7, 7), 1, True),
                                                 ((9, 9), 1, False), ((11, 11), 1, False), ((3, 3), 2, True),
                                                 ((5, 5), 2, False), ((3, 3), 4, False)])
def test_depthwise_takes_3_5_7_at_stride_1_and_3x3_at_stride_2(kernel, stride, taken):
    why = reason(conv(kernel, stride, depthwise=True))
    assert (why is None or "offloaded" in why) == taken, why
    if not taken:
        assert why.code == "constraint" and (f"filter {kernel[0]}x{kernel[1]} at stride {stride}" in why
                                             or "not taken (strides: 1, 2)" in why)


# "If stride == 4, only supported kernel == 11x11"
@pytest.mark.parametrize("kernel,taken", [((11, 11), True), ((3, 3), False), ((7, 7), False)])
def test_convolution_at_stride_4_takes_only_11x11(kernel, taken):
    why = reason(conv(kernel, 4))
    assert ("offloaded" in why) == taken, why
    if not taken:
        assert why == f"CONV_2D: filter {kernel[0]}x{kernel[1]} at stride 4 not among 11x11"


# "if stride == 2, kernel should be less than 7. Even kernel dimensions like 2x2, 4x4, 6x6 are not supported"
@pytest.mark.parametrize("kernel,taken", [((3, 3), True), ((5, 5), True), ((1, 1), True), ((7, 7), False),
                                          ((4, 4), False), ((9, 9), False)])
def test_convolution_at_stride_2_takes_odd_kernels_below_7(kernel, taken):
    why = reason(conv(kernel, 2))
    assert ("offloaded" in why) == taken, why


# "Validated kernel sizes: 1x1, 3x3, 5x5, 7x7, 1x3, 3x1, 1x5, 5x1, 1x7, 7x1"
@pytest.mark.parametrize("kernel,taken", [((7, 7), True), ((1, 7), True), ((9, 9), False), ((2, 2), False)])
def test_convolution_at_stride_1_takes_the_validated_kernels(kernel, taken):
    why = reason(conv(kernel, 1))
    assert ("offloaded" in why) == taken, why


# "Dilated Convolution is only supported for non-strided convolution"
def test_a_dilated_convolution_must_not_be_strided():
    assert "offloaded" in reason(conv((3, 3), 1, dilation=2))
    assert reason(conv((3, 3), 2, dilation=2)) == "CONV_2D: dilation 2x2 with stride 2x2 (dilated only at stride 1)"
    assert "dilated only at stride 1" in reason(conv((3, 3), 2, dilation=2, depthwise=True))


def pool(size, stride):
    b = ModelBuilder()
    x = b.input("x", [1, 32, 32, 4])
    y = b.tensor("y", [1, 32 // stride, 32 // stride, 4])
    b.op(B.MAX_POOL_2D, [x], [y], Pool2DOptions(padding=Padding.SAME, stride_w=stride, stride_h=stride,
                                                 filter_width=size, filter_height=size))
    b.output(y)
    return b.build()


# TI: pooling "with a maximum stride of 2"; the paper: kernels up to 9x9
def test_pooling_up_to_9x9_at_stride_up_to_2():
    assert "offloaded" in reason(pool(3, 2)) and "offloaded" in reason(pool(9, 1))
    assert reason(pool(3, 4)) == "MAX_POOL_2D: stride 4x4 > 2 limit"
    assert reason(pool(11, 1)) == "MAX_POOL_2D: filter 11x11 > 9x9 limit"


def mean(axes):
    b = ModelBuilder()
    x = b.input("x", [1, 7, 7, 16])
    a = b.constant("axes", np.array(axes, np.int32))
    y = b.tensor("y", [1, 1, 1, 16] if axes == [1, 2] else [1, 7, 7, 1])
    b.op(B.MEAN, [x, a], [y], ReducerOptions(keep_dims=True))
    b.output(y)
    return b.build()


# TI maps MEAN (a spatial one: a global average pool) to its pooling layer
def test_a_spatial_mean_is_taken_as_pooling_and_a_channel_mean_is_not():
    assert "offloaded" in reason(mean([1, 2]))
    assert reason(mean([3])) == "MEAN: axes [3] not within [1, 2]"


def transpose_conv(kernel):
    b = ModelBuilder()
    shape = b.constant("shape", np.array([1, 16, 16, 4], np.int32))
    w = b.constant("w", np.ones((4, kernel, kernel, 4), np.float32))
    x = b.input("x", [1, 8, 8, 4])
    y = b.tensor("y", [1, 16, 16, 4])
    b.op(B.TRANSPOSE_CONV, [shape, w, x], [y], TransposeConvOptions(padding=Padding.SAME, stride_w=2, stride_h=2))
    b.output(y)
    return b.build()


# "Only 8x8, 4x4 and 2x2 kernel with 2x2 stride is supported"
def test_transpose_convolution_takes_2_4_8_kernels_at_stride_2():
    assert "offloaded" in reason(transpose_conv(4))
    assert reason(transpose_conv(3)) == "TRANSPOSE_CONV: filter 3x3 at stride 2 not among 2x2, 4x4, 8x8"


def resize(op, factor):
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 3])
    s = b.constant("size", np.array([4 * factor, 4 * factor], np.int32))
    y = b.tensor("y", [1, 4 * factor, 4 * factor, 3])
    b.op(op, [x, s], [y])
    b.output(y)
    return b.build()


# TI: "Only power of 2 and symmetric resize is supported"; the paper: RESIZE_BILINEAR stays on the Arm
def test_nearest_resize_by_powers_of_two_and_no_bilinear():
    assert "offloaded" in reason(resize(B.RESIZE_NEAREST_NEIGHBOR, 2))
    assert "is not a power of two" in reason(resize(B.RESIZE_NEAREST_NEIGHBOR, 3))
    assert reason(resize(B.RESIZE_BILINEAR, 2)) == "RESIZE_BILINEAR: not supported"


# "Supports non-strided convolution with upscale factors of 2, 4 and 8"
def test_depth_to_space_takes_block_sizes_2_4_8():
    def d2s(block):
        b = ModelBuilder()
        x = b.input("x", [1, 4, 4, 4 * block * block])
        y = b.tensor("y", [1, 4 * block, 4 * block, 4])
        b.op(B.DEPTH_TO_SPACE, [x], [y], DepthToSpaceOptions(block_size=block))
        b.output(y)
        return b.build()

    assert "offloaded" in reason(d2s(2))
    assert reason(d2s(3)) == "DEPTH_TO_SPACE: block_size 3 not allowed (allowed: 2, 4, 8)"


def test_every_rule_of_the_tidl_target_names_its_source():
    t = load_target("tidl")
    assert set(t.sources) == {"paper", "ti-doc", "simulated"}
    for op, rule in t.ops.items():
        assert "op" in rule.sources, op
        for key in rule.constraints:
            assert key in rule.sources, (op, key)
    assert "supported_ops_rts_versions.md" in t.source_of("DEPTHWISE_CONV_2D", "stride_filters")
    assert "Gou & Varis" in t.source_of("AVERAGE_POOL_2D", "max_filter")
    assert t.source_of("SUB").startswith("not from a TI document")


def test_a_rule_source_must_be_one_of_the_files_sources():
    doc = json.loads(json.dumps({"name": "t", "sources": {"paper": "a paper"}, "cost": {
        "macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1},
        "ops": {"ADD": {"max_rank": 4, "sources": {"max_rank": "blog"}}}}))
    with pytest.raises(TargetError, match=r"ops.ADD.sources.max_rank: unknown source 'blog'"):
        parse_target(doc, "t.json")
    doc["ops"]["ADD"]["sources"] = {"max_stride": "paper"}
    with pytest.raises(TargetError, match="names no rule of this op"):
        parse_target(doc, "t.json")


def test_edgetpu_refuses_a_graph_whose_sizes_are_known_only_at_run_time():
    # Coral: "Tensor sizes are constant at compile-time"; the compiler says so in the interpreter's words
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 8], np.int8, quantization={"scale": 0.1, "zero_point": 0})
    y = b.tensor("y", [1, 2, 2, 8], np.int8, quantization={"scale": 0.1, "zero_point": 0})
    b.op(B.MAX_POOL_2D, [x], [y], Pool2DOptions(padding=Padding.VALID, stride_w=2, stride_h=2, filter_width=2,
                                                 filter_height=2))
    b.output(y)
    model = b.build()
    assert partition(model, "edgetpu", "edgetpu").offloaded == 1
    import dataclasses

    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    tensors[x] = dataclasses.replace(tensors[x], shape_signature=(-1, 4, 4, 8))
    dynamic = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),))
    plan = partition(dynamic, "edgetpu", "edgetpu")
    assert plan.offloaded == 0
    r = plan.placements[0].reason
    assert r.startswith("ERROR: Attempting to use a delegate that only supports static-sized tensors with a graph "
                        "that has dynamic-sized tensors.") and "shape signature [-1, 4, 4, 8]" in r
    assert r.code == "constraint"
    assert partition(dynamic, "tidl", "tidl").offloaded == 1      # the tidl target has no such rule

"""int8 DEPTHWISE_CONV_2D rounding ties, element by element against litert's builtin kernel.

litert's x86 build requantizes the int32 sums of a depthwise conv 8 output channels at a time with a
vector rounding shift whose ties go up, and the last C·M % 8 channels one by one with
MultiplyByQuantizedMultiplier, whose ties go away from zero — in every pixel, whatever the width,
stride, dilation, padding or filter size (depthwise_conv_2d.prepare_int8, ``vector_channels``).

The models here make exact ties frequent: every scale is a power of two, so each channel's effective
scale is 2^-k exactly (output_multiplier 2^30) and about one value in 2^(k-1) lands on a tie of the
final shift.  The shapes are those of a sweep (channels 1..20, depth multipliers 1..3, widths 1..400,
strides, dilations, SAME/VALID, 1x1..5x5 filters) whose ties an earlier model of that kernel
(a per-row scalar tail of (values % 4), every tie away under dilation) rounded the wrong way,
plus the two shapes of the bug report.  Each case: fast path == numpy reference == litert on every
element, and the case really has ties on both sides of the rule (so a wrong rule would fail).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from litert_batch import run_many
from test_quantized_ops import V, S, assert_equal_all, depthwise_i8, q, window_out
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.interpreter.explain import explain
from workbench.interpreter.kernels.depthwise_conv_2d import reference_int8
from workbench.schema import ActivationFunctionType as Act, BuiltinOperator as B, DepthwiseConv2DOptions, ModelBuilder
from workbench.versioning import update_versions


def depthwise_ties(x_shape, k=(3, 3), mult=1, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, in_zp=3,
                   seed=0):
    """Power-of-two scales (effective scale 2^-3 or 2^-4 per channel), small weights and inputs: many
    exact ties in the last rounding shift, few clamped outputs."""
    def build(name):
        rng = np.random.default_rng(seed)
        c = x_shape[3]
        co = c * mult
        b = ModelBuilder()
        ks = rng.integers(3, 5, co)
        in_s, out_s = 2.0 ** -6, 2.0 ** -9
        w_s = 2.0 ** (-ks - 3)                      # in_s·w_s/out_s = 2^-ks
        x = b.input("x", x_shape, np.int8, quantization=q(in_s, in_zp))
        w = b.constant("w", rng.integers(-20, 21, (1, k[0], k[1], co)).astype(np.int8),
                       quantization=q(w_s.tolist(), [0] * co, 3))
        bias = b.constant("bias", rng.integers(-50, 50, co).astype(np.int32),
                          quantization=q((in_s * w_s).tolist(), [0] * co, 0))
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, co), np.int8, quantization=q(out_s, -2))
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bias], [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult,
            fused_activation_function=act, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        xv = np.clip(rng.integers(-20, 21, x_shape) + in_zp, -128, 127).astype(np.int8)
        return b, {"x": xv}
    return build


CASES = {
    # the bug report's shapes, with the one-op test builder and with tie-heavy scales
    "report_1x9x350x6": depthwise_i8((1, 9, 350, 6), (3, 3)),
    "report_2x9x301x5": depthwise_i8((2, 9, 301, 5), (3, 3), in_zp=-128),
    "report_1x9x350x6_ties": depthwise_ties((1, 9, 350, 6), seed=1),
    "report_2x9x301x5_ties": depthwise_ties((2, 9, 301, 5), seed=2),
    # fewer than 8 output channels: every tie away from zero, in every column
    "c1_w342": depthwise_ties((1, 3, 342, 1), seed=3),
    "c1_m3_w17": depthwise_ties((1, 3, 17, 1), mult=3, seed=4),
    "c2_w400": depthwise_ties((1, 3, 400, 2), seed=5),
    "c3_w350": depthwise_ties((1, 3, 350, 3), seed=6),
    "c3_m2_w128": depthwise_ties((1, 3, 128, 3), mult=2, seed=7),
    "c5_w341": depthwise_ties((1, 3, 341, 5), seed=8),
    "c7_w9": depthwise_ties((1, 3, 9, 7), seed=9),
    # 8 or more: channels below 8·⌊C·M/8⌋ ties up, the rest away
    "c4_m3_w255": depthwise_ties((1, 3, 255, 4), mult=3, seed=10),
    "c5_m2_w400": depthwise_ties((1, 3, 400, 5), mult=2, seed=11),
    "c6_m3_w127": depthwise_ties((1, 3, 127, 6), mult=3, seed=12),
    "c9_w13_1x1": depthwise_ties((1, 3, 13, 9), k=(1, 1), seed=13),
    "c11_m3_w191_5x3_s2": depthwise_ties((1, 3, 191, 11), k=(5, 3), mult=3, stride=(2, 2), seed=14),
    "c13_w374_valid_s2": depthwise_ties((2, 4, 374, 13), k=(3, 1), stride=(2, 2), padding=V, seed=15),
    "c19_w95_valid_1x5": depthwise_ties((2, 3, 95, 19), k=(1, 5), stride=(1, 2), padding=V, seed=16),
    "c20_m3_w197_relu_n1": depthwise_ties((2, 1, 197, 20), k=(5, 3), mult=3, stride=(2, 1), act=Act.RELU_N1_TO_1,
                                          seed=17),
    # dilation: the same rule (not the reference kernel's ties-away everywhere)
    "dil_c8_w155": depthwise_ties((2, 3, 155, 8), k=(1, 1), stride=(2, 2), dilation=(2, 1), seed=18),
    "dil_c4_m2_w371": depthwise_ties((2, 1, 371, 4), k=(1, 5), mult=2, stride=(2, 2), padding=V, dilation=(2, 2),
                                     seed=19),
    "dil_c11_m3_w392": depthwise_ties((1, 3, 392, 11), k=(1, 5), mult=3, dilation=(2, 1), seed=20),
    "dil_c15_m2_w186": depthwise_ties((2, 1, 186, 15), k=(2, 2), mult=2, stride=(2, 2), dilation=(1, 2), seed=21),
    "dil_c5_w31_valid": depthwise_ties((1, 4, 31, 5), k=(3, 1), mult=3, padding=V, dilation=(1, 2), seed=22),
    "dil_c10_w400_5x5": depthwise_ties((2, 4, 400, 10), k=(5, 5), dilation=(1, 3), seed=23),
}


def build_case(name):
    builder, inputs = CASES[name](name)
    return update_versions(builder.build()), inputs["x"]


def run_ours(model, x, reference=False):
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it, it.get_tensor(it.get_output_details()[0]["index"])


@pytest.fixture(scope="module")
def litert_out():
    names = sorted(CASES)
    jobs = []
    for name in names:
        model, x = build_case(name)
        jobs.append((dump(model), [x]))
    return dict(zip(names, run_many(jobs)))


def rounded_with(it, x, vector_channels):
    """Our reference with another split between tie-up and tie-away channels."""
    d = dataclasses.replace(it.prepared()[0][2], vector_channels=vector_channels)
    filt, bias = it.get_tensor(1), it.get_tensor(2)       # tensors in build order: x, w, bias, y
    assert filt.shape[0] == 1 and bias.dtype == np.int32
    return reference_int8(x, filt, bias, (d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w),
                          (d.pad_top, d.pad_left), d.output_shape[1:3], d)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_equals_reference_equals_litert(case, litert_out):
    status, payload = litert_out[case]
    assert status == "ok", payload
    model, x = build_case(case)
    it, fast = run_ours(model, x)
    _, ref = run_ours(model, x, reference=True)
    assert_equal_all([fast], [ref], f"{case} fast vs reference")
    assert_equal_all([fast], payload, f"{case} vs litert")


@pytest.mark.parametrize("case", sorted(k for k in CASES if not k.startswith("report_") or k.endswith("_ties")))
def test_cases_have_ties_on_both_sides_of_the_rule(case, litert_out):
    """A wrong split would show: all-up or all-away rounding differs from litert where the rule says so."""
    model, x = build_case(case)
    it, fast = run_ours(model, x)
    d = it.prepared()[0][2]
    co = d.output_shape[3]
    theirs = litert_out[case][1][0]
    assert d.vector_channels == 8 * (co // 8)
    if co % 8:          # some channels round ties away: rounding them up would differ from litert
        assert (rounded_with(it, x, co) != theirs).any()
    if co >= 8:         # some round ties up: rounding them away would differ
        assert (rounded_with(it, x, 0) != theirs).any()
    assert (rounded_with(it, x, d.vector_channels) == theirs).all()


def test_scalar_tail_marks_the_last_channels_in_every_column():
    model, _ = build_case("c11_m3_w191_5x3_s2")
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    _, oh, ow, co = d.output_shape
    assert (co, d.vector_channels) == (33, 32)
    assert d.scalar_tail.shape == (oh, ow * co)
    assert d.tail_columns.tolist() == [ox * co + 32 for ox in range(ow)]
    assert np.flatnonzero(d.scalar_tail[oh - 1]).tolist() == d.tail_columns.tolist()
    model, _ = build_case("dil_c8_w155")
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    assert d.vector_channels == 8 and d.scalar_tail is None and d.tail_columns.size == 0


def test_explain_follows_the_channel_rule(litert_out):
    model, x = build_case("c11_m3_w191_5x3_s2")
    it, fast = run_ours(model, x)
    d = it.prepared()[0][2]
    up = rounded_with(it, x, 33)
    away = rounded_with(it, x, 0)
    ties = np.argwhere(up != away)
    scalar = next(tuple(int(v) for v in p) for p in ties if p[3] >= d.vector_channels)
    vector = next(tuple(int(v) for v in p) for p in ties if p[3] < d.vector_channels)
    e = explain(it, 0, scalar)
    assert e.agrees and int(e.kernel) == int(away[scalar])
    assert any(s.what == "TFLite's scalar leftover loop" for s in e.steps)
    e = explain(it, 0, vector)
    assert e.agrees and int(e.kernel) == int(up[vector])
    assert not any(s.what == "TFLite's scalar leftover loop" for s in e.steps)

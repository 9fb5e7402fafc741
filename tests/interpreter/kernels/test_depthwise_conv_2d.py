"""DEPTHWISE_CONV_2D: the teaching layer (kernels/depthwise_conv_2d.py) and the speed layer
(fast/depthwise_conv_2d.py) compute the same bits under both variants, the default interpreter is
bit-exact with LiteRT's builtin kernels and the reference variant with its BUILTIN_REF kernels —
float32, int8 (per-channel and per-tensor), uint8, 16x8 and hybrid; SAME / VALID, strides,
dilations, depth multipliers, fused activations.

Where the builds differ (``Variant.depthwise_chunks``, ``depthwise_bias_first``): litert-x86's
int8 kernel rounds ties up in its 8-wide vector loop (channels below 8·⌊C·M/8⌋) and away from zero
in the scalar tail — in every pixel, whatever the width, stride, dilation, padding or filter size;
its hybrid kernel scales in two orders; its float kernel starts the sums at the bias.  The "ties"
cases make exact ties frequent (power-of-two scales: every channel's effective scale is 2^-k, so
about one value in 2^(k-1) lands on a tie of the final shift); their shapes are those of a sweep
(channels 1..20, depth multipliers 1..3, widths 1..400) on which an earlier model of that kernel
went wrong, plus the two shapes of the bug report (formerly tests/interpreter/quant/
test_quantized_depthwise_ties.py).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

from helpers.interpreter_ops_cases import depthwise_f32
from helpers.op_layers import OpLayers
from helpers.quantized_hybrid_cases import depthwise_h
from helpers.quantized_int16_matrix_cases import TIES_SCALES, depthwise16, ties_input
from helpers.quantized_ops_cases import depthwise_i8, q, window_out
from helpers.quantized_uint8_matrix_cases import PLAIN, depthwise_u8
from workbench.interpreter import Interpreter
from workbench.interpreter.explain import explain
from workbench.interpreter.fast import depthwise_conv_2d as fast_dw
from workbench.interpreter.kernels import depthwise_conv_2d as dw
from workbench.interpreter.kernels._common import FLOAT_MAX, out_size, pad_before
from workbench.interpreter.variants import LITERT_X86, REFERENCE
from workbench.perf import depthwise as native_dw
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import DepthwiseConv2DOptions, ModelBuilder, Padding

S, V = Padding.SAME, Padding.VALID


def depthwise_ties(x_shape, k=(3, 3), mult=1, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, in_zp=3,
                   seed=0):
    """int8, power-of-two scales (effective scale 2^-3 or 2^-4 per channel), small weights and inputs:
    many exact ties in the last rounding shift, few clamped outputs."""
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


TIES = {
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

CASES = {
    "float32_3x3_same": depthwise_f32((1, 9, 8, 5), (3, 3)),
    "float32_multiplier_2_stride_2_relu6": depthwise_f32((2, 8, 9, 3), (3, 3), mult=2, stride=(2, 2), act=Act.RELU6),
    "float32_dilation_valid": depthwise_f32((1, 10, 11, 4), (3, 2), padding=V, dilation=(2, 3)),
    "float32_5x5_16_channels_relu_n1": depthwise_f32((1, 6, 7, 16), (5, 5), act=Act.RELU_N1_TO_1),
    "float32_window_over_image_relu": depthwise_f32((2, 3, 3, 2), (5, 5), act=Act.RELU),
    "float32_no_bias": depthwise_f32((1, 6, 7, 6), (3, 3), mult=2, bias=False),
    "int8_3x3_same": depthwise_i8((1, 9, 8, 12), (3, 3)),
    "int8_multiplier_3_stride_dilation": depthwise_i8((2, 11, 10, 4), (3, 3), mult=3, stride=(2, 1), dilation=(1, 2)),
    "int8_per_tensor_valid_relu": depthwise_i8((1, 8, 8, 6), (3, 3), padding=V, per_channel=False, act=Act.RELU),
    "int8_report_1x9x350x6": depthwise_i8((1, 9, 350, 6), (3, 3)),
    "int8_report_2x9x301x5": depthwise_i8((2, 9, 301, 5), (3, 3), in_zp=-128),
    "int8_report_1x9x350x6_ties": depthwise_ties((1, 9, 350, 6), seed=1),
    "int8_report_2x9x301x5_ties": depthwise_ties((2, 9, 301, 5), seed=2),
    **{f"int8_ties_{name}": build for name, build in TIES.items()},
    "uint8_3x3": depthwise_u8((2, 7, 6, 5), (3, 3)),
    "uint8_multiplier_3_valid": depthwise_u8((1, 9, 8, 3), (3, 2), mult=3, stride=(2, 1), padding=V),
    "uint8_dilation_multiplier_2": depthwise_u8((1, 9, 8, 6), (3, 3), mult=2, dilation=(2, 2)),
    "uint8_plain_relu": depthwise_u8((2, 7, 7, 8), (3, 3), stride=(2, 2), act=Act.RELU, sc=PLAIN),
    "int16_3x3_relu": depthwise16((1, 9, 8, 6), (3, 3), act=Act.RELU),
    "int16_multiplier_3_stride_dilation": depthwise16((2, 13, 12, 4), (3, 2), mult=3, stride=(2, 1), dilation=(1, 3)),
    "int16_valid_5x5_per_tensor_relu6": depthwise16((1, 10, 9, 3), (5, 5), mult=2, padding=V, per_channel=False,
                                                    act=Act.RELU6),
    "int16_no_bias": depthwise16((1, 6, 6, 4), (3, 3), bias=False, act=Act.RELU_N1_TO_1),
    "int16_ties": depthwise16((1, 1, 2648, 2), (1, 1), padding=V, bias=False, x=ties_input(2),
                              w=np.ones((1, 1, 1, 2), np.int8), scales=TIES_SCALES),
    "hybrid_3x3_relu": depthwise_h((2, 7, 6, 5), (3, 3), act=Act.RELU),
    "hybrid_multiplier_3_valid_relu6": depthwise_h((1, 9, 8, 3), (3, 2), mult=3, stride=(2, 1), padding=V,
                                                   act=Act.RELU6),
    "hybrid_dilation_multiplier_2": depthwise_h((1, 9, 8, 6), (3, 3), mult=2, dilation=(2, 2)),
    "hybrid_13_channels": depthwise_h((2, 5, 9, 13), (3, 3)),
}
LAYERS = OpLayers(CASES)

# LiteRT's builtin float kernel dereferences the absent bias: the process dies (signal 11)
BUILTIN_CRASHES = {"float32_no_bias"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - BUILTIN_CRASHES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


def litert_status(case, resolver="BUILTIN_WITHOUT_DEFAULT_DELEGATES"):
    """LiteRT's (status, outputs or message) for one case (every case runs once per resolver)."""
    LAYERS.litert(sorted(set(CASES) - BUILTIN_CRASHES)[0], resolver)
    return LAYERS._litert[resolver][case]


def test_litert_builtin_float_kernel_crashes_without_a_bias():
    # optimized_ops' float DepthwiseConv starts its accumulators at bias_data, which is null there; the
    # workbench adds nothing instead, as LiteRT's reference kernel does (checked above)
    for case in BUILTIN_CRASHES:
        status, message = litert_status(case)
        assert status == "crash" and "exit status -11" in message, (case, status, message)


@pytest.mark.parametrize("case, what", [
    # int8: channels below 8·⌊C·M/8⌋ round ties up on x86 (33 channels: 0..31 up, 32 away)
    ("int8_ties_c11_m3_w191_5x3_s2", "int8"),
    ("int8_ties_dil_c8_w155", "int8"),
    # float32: x86 starts each sum at the bias, the reference kernel adds the bias last
    ("float32_3x3_same", "float32"),
    # hybrid: x86 scales (acc·filter_scale)·sf or (acc·sf)·filter_scale, the reference acc·(filter_scale·sf)
    ("hybrid_13_channels", "hybrid"),
])
def test_the_builds_differ(case, what):
    assert LAYERS.differing_variants(case) > 0, what


def test_the_builds_agree_on_uint8_int16_and_int8_below_8_channels():
    # uint8 rounds every tie away from zero in both builds, 16x8 runs the reference kernel in both, and
    # with C·M < 8 litert-x86's int8 kernel has no vector loop
    for case in ("uint8_3x3", "uint8_dilation_multiplier_2", "int16_ties", "int16_3x3_relu", "int8_ties_c7_w9",
                 "int8_ties_c3_m2_w128"):
        assert LAYERS.differing_variants(case) == 0, case


# ----------------------------------------------------------------------------------------------
# the int8 tie rule, element by element


def prepared(case, variant="litert-x86"):
    it = Interpreter(model=LAYERS.build(case)[0], variant=variant)
    it.allocate_tensors()
    return it, it.prepared()[0][2]


def rounded_with(case, vector_channels):
    """The teaching layer with another split between tie-up and tie-away channels."""
    model, (x,) = LAYERS.build(case)
    it, d = prepared(case)
    filt, bias = it.get_tensor(1), it.get_tensor(2)       # tensors in build order: x, w, bias, y
    assert filt.shape[0] == 1 and bias.dtype == np.int32
    return dw.depthwise_int8(x, filt, bias, dataclasses.replace(d, vector_channels=vector_channels))


@pytest.mark.parametrize("case", sorted(k for k in CASES if k.startswith("int8_") and "ties" in k))
def test_ties_cases_have_ties_on_both_sides_of_the_rule(case):
    """A wrong split would show: all-up or all-away rounding differs from litert where the rule says so."""
    _, d = prepared(case)
    co = d.output_shape[3]
    theirs = LAYERS.litert(case)[0]
    assert d.vector_channels == 8 * (co // 8)
    if co % 8:          # some channels round ties away: rounding them up would differ from litert
        assert (rounded_with(case, co) != theirs).any()
    if co >= 8:         # some round ties up: rounding them away would differ
        assert (rounded_with(case, 0) != theirs).any()
    assert (rounded_with(case, d.vector_channels) == theirs).all()
    # the reference kernel rounds every tie away from zero: BUILTIN_REF agrees, and differs from x86
    assert (rounded_with(case, 0) == LAYERS.litert(case, "BUILTIN_REF")[0]).all()


def test_vector_channels_follow_the_variant():
    _, d = prepared("int8_ties_c11_m3_w191_5x3_s2")
    assert (d.output_shape[3], d.vector_channels) == (33, 32)
    _, d = prepared("int8_ties_dil_c8_w155")
    assert d.vector_channels == 8
    _, d = prepared("int8_ties_c7_w9")                  # fewer than 8 channels: all scalar tail
    assert d.vector_channels == 0
    _, d = prepared("hybrid_multiplier_3_valid_relu6")   # 9 channels: 8 in the 4-wide loop
    assert d.vector_channels == 8
    for case in ("int8_ties_c11_m3_w191_5x3_s2", "hybrid_13_channels"):
        assert prepared(case, "reference")[1].vector_channels == 0
    assert dw.vector_channels(33, 8, LITERT_X86) == 32 and dw.vector_channels(33, 4, LITERT_X86) == 32
    assert dw.vector_channels(33, 8, REFERENCE) == 0


def test_explain_follows_the_channel_rule():
    case = "int8_ties_c11_m3_w191_5x3_s2"
    model, (x,) = LAYERS.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    d = it.prepared()[0][2]
    up, away = rounded_with(case, 33), rounded_with(case, 0)
    ties = np.argwhere(up != away)
    scalar = next(tuple(int(v) for v in p) for p in ties if p[3] >= d.vector_channels)
    vector = next(tuple(int(v) for v in p) for p in ties if p[3] < d.vector_channels)
    e = explain(it, 0, scalar)
    assert e.agrees and int(e.kernel) == int(away[scalar])
    assert any(s.what == "TFLite's scalar leftover loop" for s in e.steps)
    e = explain(it, 0, vector)
    assert e.agrees and int(e.kernel) == int(up[vector])
    assert not any(s.what == "TFLite's scalar leftover loop" for s in e.steps)
    ref = Interpreter(model=model, variant="reference")          # the reference kernel: every tie away
    ref.allocate_tensors()
    ref.set_tensor(ref.get_input_details()[0]["index"], x)
    ref.invoke()
    e = explain(ref, 0, vector)
    assert e.agrees and int(e.kernel) == int(away[vector])
    assert not any(s.what == "TFLite's scalar leftover loop" for s in e.steps)


# ----------------------------------------------------------------------------------------------
# the numba loops called directly (formerly tests/interpreter/test_interpreter_kernels.py)


def geometry(h, w, kh, kw, stride, dilation, padding):
    code = 1 if padding == "SAME" else 2
    oh, ow = out_size(code, h, kh, stride[0], dilation[0]), out_size(code, w, kw, stride[1], dilation[1])
    return oh, ow, pad_before(stride[0], dilation[0], h, kh, oh)[0], pad_before(stride[1], dilation[1], w, kw, ow)[0]


def float_data(n, oh, ow, co, mult, stride, dilation, pt, pl, lo=-FLOAT_MAX, hi=FLOAT_MAX):
    return dw.DepthwiseConv2DData("SAME", *stride, *dilation, pt, pl, mult, (n, oh, ow, co), "NONE", lo, hi)


FLOAT_CASES = [(x_shape, k, stride, dilation, padding, mult)
               for x_shape in [(1, 8, 7, 5), (2, 4, 9, 3)] for k in [(3, 3), (5, 2)] for stride in [(1, 1), (2, 2)]
               for dilation in [(1, 1), (2, 3)] for padding in ["SAME", "VALID"] for mult in [1, 2]
               if min(geometry(*x_shape[1:3], *k, stride, dilation, padding)[:2]) > 0]


@pytest.mark.parametrize("x_shape,k,stride,dilation,padding,mult", FLOAT_CASES)
def test_depthwise_numba_is_the_teaching_layer_bias_first(x_shape, k, stride, dilation, padding, mult):
    n, h, w, c = x_shape
    rng = np.random.default_rng(7)
    oh, ow, pt, pl = geometry(h, w, k[0], k[1], stride, dilation, padding)
    x = rng.standard_normal(x_shape).astype(np.float32)
    filt = rng.standard_normal((1, k[0], k[1], c * mult)).astype(np.float32)
    bias = rng.standard_normal(c * mult).astype(np.float32)
    d = float_data(n, oh, ow, c * mult, mult, stride, dilation, pt, pl)
    want = dw.depthwise_float(x, filt, bias, d, bias_first=True)
    out = np.empty_like(want)
    fast_dw.depthwise_numba(x, filt[0], bias, out, *stride, *dilation, pt, pl, np.float32(-FLOAT_MAX),
                            np.float32(FLOAT_MAX))
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
    last = dw.depthwise_float(x, filt, bias, d)           # the reference kernel's order: the same values
    np.testing.assert_allclose(out, last, rtol=1e-5, atol=1e-5)


def test_empty_strided_output():
    """A VALID window wider than the image gives an empty output (no slice wraps around)."""
    d = float_data(1, 1, 0, 4, 2, (1, 2), (1, 1), 0, 0)
    out = dw.depthwise_float(np.ones((1, 1, 5, 2), np.float32), np.ones((1, 1, 7, 4), np.float32), None, d)
    assert out.shape == (1, 1, 0, 4)


def test_workbench_jit_0_runs_kernels_as_python():
    code = ("import numpy as np, sys\n"
            "from workbench import config\n"
            "from workbench.interpreter.fast import depthwise_conv_2d as d\n"
            "f = d.depthwise_numba.compile()\n"
            "x = np.ones((1, 3, 3, 2), np.float32); w = np.ones((3, 3, 2), np.float32)\n"
            "out = np.empty((1, 3, 3, 2), np.float32)\n"
            "d.depthwise_numba(x, w, np.zeros(2, np.float32), out, 1, 1, 1, 1, 1, 1,"
            " np.float32(-1e30), np.float32(1e30))\n"
            "print(config.JIT, f is d.depthwise_numba.py_func, 'numba' in sys.modules,"
            " out[0, 1, 1, 0], out[0, 0, 0, 0])\n")
    env = dict(os.environ, WORKBENCH_JIT="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["False", "True", "False", "9.0", "4.0"]


def test_labels_name_the_fast_paths():
    # the kernel library's C loops, where they run
    int8 = "numba" if native_dw.int8_function() is None else "native(int8, exact)"
    float32 = "numba" if native_dw.float_function() is None else "native"
    want = {"float32_3x3_same": float32, "int8_3x3_same": int8, "uint8_3x3": "numba", "int16_3x3_relu": "numba",
            "hybrid_3x3_relu": "quantize(numba)+numba"}
    for case, label in want.items():
        it, _ = prepared(case)
        assert it.prepared()[0][1] == f"depthwise_conv_2d/{label}", case
        it = Interpreter(model=LAYERS.build(case)[0], reference=True)
        it.allocate_tensors()
        assert it.prepared()[0][1] == "depthwise_conv_2d/reference", case


@pytest.mark.parametrize("variant", ["litert-x86", "reference"])
@pytest.mark.parametrize("case", ["hybrid_13_channels", "int8_ties_c9_w13_1x1", "uint8_3x3", "int16_3x3_relu"])
def test_explain_agrees_with_the_kernel_under_both_variants(case, variant):
    model, (x,) = LAYERS.build(case)
    it = Interpreter(model=model, variant=variant)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    size = it.get_tensor(it.get_output_details()[0]["index"]).size
    for k in range(0, size, max(1, size // 97)):
        e = explain(it, 0, k)
        assert e.agrees, repr(e)

"""The DEPTHWISE_CONV_2D fast paths on the kernel library's own C loops (fast/depthwise_conv_2d.py
``Int8Native``, label ``native(int8, exact)``, and ``FloatNative``, label ``native``): chosen at bind for a
constant filter and bias of depth multiplier 1 where the library's ``dw_i8`` / ``dw_f32`` run, bit for bit
the teaching layer and LiteRT's builtin kernels at one and two threads; the numba kernels where they do
not apply (no library, a depth multiplier of 2, an int8 bias beyond float32's exact range); and the
numba kernels' bits whenever the library refuses the arrays."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.interpreter_ops_cases import depthwise_f32
from helpers.op_layers import OpLayers
from helpers.quantized_cases import assert_same
from helpers.quantized_ops_cases import depthwise_i8
from workbench.interpreter import Interpreter
from workbench.perf import depthwise as native_dw
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import Padding

CASES = {"c5_relu6": depthwise_i8((1, 6, 5, 5), (3, 3), act=Act.RELU6),
         "c37_s2_valid_two_images": depthwise_i8((2, 9, 8, 37), (3, 3), stride=(2, 2), padding=Padding.VALID),
         "c20_5x3_dilated": depthwise_i8((1, 10, 9, 20), (5, 3), dilation=(2, 1), act=Act.RELU),
         "c70_more_channels_than_pixels": depthwise_i8((1, 4, 4, 70), (3, 3)),
         "multiplier_2": depthwise_i8((1, 6, 5, 3), (3, 3), mult=2),
         "f32_c21_relu6": depthwise_f32((1, 9, 8, 21), (3, 3), act=Act.RELU6),
         "f32_c40_s2_valid_two_images": depthwise_f32((2, 9, 8, 40), (3, 3), stride=(2, 2), padding=Padding.VALID),
         "f32_c7_5x3_dilated": depthwise_f32((1, 10, 9, 7), (5, 3), dilation=(2, 1), act=Act.RELU),
         "f32_c70_more_channels_than_pixels": depthwise_f32((1, 4, 4, 70), (3, 3)),
         "f32_multiplier_2": depthwise_f32((1, 6, 5, 3), (3, 3), mult=2)}
NATIVE = sorted(set(CASES) - {"multiplier_2", "f32_multiplier_2"})
LAYERS = OpLayers(CASES)
LABEL = "depthwise_conv_2d/native(int8, exact)"
FLOAT_LABEL = "depthwise_conv_2d/native"
needs_library = pytest.mark.skipif(native_dw.int8_function() is None or native_dw.float_function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")


def label_of(case):
    return FLOAT_LABEL if case.startswith("f32") else LABEL


def run(case, threads=1):
    model, inputs = LAYERS.build(case)
    it = Interpreter(model=model, num_threads=threads)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], inputs[0])
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"]).copy(), it.prepared()[0][1]


@needs_library
@pytest.mark.parametrize("case", NATIVE)
def test_native_is_chosen_and_is_the_teaching_layer_and_litert(case):
    assert run(case)[1] == label_of(case)
    LAYERS.check_layers(case)
    LAYERS.check_litert(case)


@needs_library
@pytest.mark.parametrize("case", NATIVE)
def test_two_threads_give_the_bits_of_one(case, monkeypatch):
    monkeypatch.setattr(native_dw, "MIN_SPLIT_WORK", 0)
    assert run(case, threads=2)[0].tobytes() == run(case)[0].tobytes()


def test_where_it_does_not_apply_the_numba_kernels_run(monkeypatch):
    assert run("multiplier_2")[1] == run("f32_multiplier_2")[1] == "depthwise_conv_2d/numba"
    monkeypatch.setattr(native_dw, "EXACT_BELOW", 1)         # no bias is exact: float32 sums could round
    assert run("c5_relu6")[1] == "depthwise_conv_2d/numba"
    monkeypatch.undo()
    monkeypatch.setattr(native_dw, "int8_function", lambda: None)  # no library
    monkeypatch.setattr(native_dw, "float_function", lambda: None)
    assert run("c5_relu6")[1] == run("f32_c21_relu6")[1] == "depthwise_conv_2d/numba"


def test_a_refusal_gives_the_numba_kernels_bits(monkeypatch):
    calls = []

    def stand_in(*args):
        calls.append(args[0])
        out = args[3] if args[3].dtype == np.int8 else args[4]
        out[...] = 7                # whatever it wrote is overwritten
        return -1

    monkeypatch.setattr(native_dw, "int8_function", lambda: stand_in)
    monkeypatch.setattr(native_dw, "float_function", lambda: stand_in)
    for case in ("c37_s2_valid_two_images", "c20_5x3_dilated", "f32_c40_s2_valid_two_images", "f32_c7_5x3_dilated"):
        out, label = run(case)
        assert label == label_of(case) and calls
        assert_same([out], LAYERS.run(case, reference=True), case)


def test_small_layers_stay_on_one_thread(monkeypatch):
    seen = []
    monkeypatch.setattr(native_dw, "int8_function", lambda: lambda *args: seen.append(args[0]) or 0)
    run("c5_relu6", threads=2)                   # 6*5*5*9 = 1,350 multiply-adds
    monkeypatch.setattr(native_dw, "MIN_SPLIT_WORK", 0)
    run("c5_relu6", threads=2)
    assert seen == [1, 2]


def conv_then_depthwise(scale):
    """conv 3x3 RELU6 -> conv 1x1 linear (weights times ``scale``) -> depthwise 3x3 RELU6, 40 channels."""
    from workbench.schema import BuiltinOperator as B
    from workbench.schema import Conv2DOptions, DepthwiseConv2DOptions, ModelBuilder
    from workbench.versioning import update_versions

    rng = np.random.default_rng(12)
    b = ModelBuilder()
    x = b.input("x", (1, 9, 10, 3))
    y0, y1, y2 = (b.tensor(f"y{k}", (1, 9, 10, 40)) for k in range(3))
    b.op(B.CONV_2D, [x, b.constant("w0", rng.standard_normal((40, 3, 3, 3)).astype(np.float32)),
                     b.constant("b0", rng.standard_normal(40).astype(np.float32))], [y0],
         Conv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1, fused_activation_function=Act.RELU6))
    b.op(B.CONV_2D, [y0, b.constant("w1", (rng.standard_normal((40, 1, 1, 40)) * scale).astype(np.float32)),
                     b.constant("b1", rng.standard_normal(40).astype(np.float32))], [y1],
         Conv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1, fused_activation_function=Act.NONE))
    b.op(B.DEPTHWISE_CONV_2D, [y1, b.constant("w2", rng.standard_normal((1, 3, 3, 40)).astype(np.float32)),
                               b.constant("b2", rng.standard_normal(40).astype(np.float32))], [y2],
         DepthwiseConv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1, depth_multiplier=1,
                                fused_activation_function=Act.RELU6))
    b.output(y2)
    return update_versions(b.build()), rng.uniform(-1, 1, (1, 9, 10, 3)).astype(np.float32)


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("scale", [1.0, 1e35])
def test_bounded_inputs_fuse_the_multiply_adds(scale, threads):
    """A depthwise convolution whose input is bounded (here a linear convolution of a RELU6 one's outputs)
    fuses its multiply-adds: within float32 rounding of the teaching layer, not its bits.  Weights so large
    that a sum could come near float32's overflow (1e35: the bound passes 1e37) keep the teaching layer's
    order and bits."""
    model, x = conv_then_depthwise(scale)
    it = Interpreter(model=model, num_threads=threads)
    it.allocate_tensors()
    path = it._sg(0).fast[2]
    assert it.prepared()[2][1] == FLOAT_LABEL and (float(path.args[1][2]) == 1.0) == (scale == 1.0)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    got = it.get_tensor(it.get_output_details()[0]["index"])
    y1 = it.get_tensor(next(d["index"] for d in it.get_tensor_details() if d["name"] == "y1"))
    want = run_teaching_depthwise(model, y1)            # from the same input: only the depthwise differs
    if scale == 1.0:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert got.tobytes() != want.tobytes()
    else:
        assert got.tobytes() == want.tobytes()


def run_teaching_depthwise(model, y1):
    """The teaching layer's depthwise convolution (node 2 of ``model``) of ``y1``."""
    from workbench.interpreter.kernels import depthwise_conv_2d as dw

    it = Interpreter(model=model, reference=True)
    it.allocate_tensors()
    sg = it._sg(0)
    node, data = sg.plan[2][1], sg.plan[2][2]
    w = sg.context.value(node.input(1))
    bias = sg.context.value(node.input(2))
    return dw.depthwise_float(y1, w, bias, data, bias_first=True)

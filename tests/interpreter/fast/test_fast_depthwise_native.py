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

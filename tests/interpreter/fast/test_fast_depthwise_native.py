"""The int8 DEPTHWISE_CONV_2D fast path on the kernel library's own C loop (fast/depthwise_conv_2d.py
``Int8Native``, label ``native(int8, exact)``): chosen at bind for a constant filter of depth multiplier
1 where the library's ``dw_i8`` runs, bit for bit the teaching layer and LiteRT's builtin kernels at one
and two threads; the numba kernels where it does not apply (no library, a depth multiplier of 2, a bias
beyond float32's exact range); and the numba kernels' bits whenever the library refuses the arrays."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.quantized_cases import assert_same
from helpers.quantized_ops_cases import depthwise_i8
from workbench.interpreter import Interpreter
from workbench.perf import dwi8
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import Padding

CASES = {"c5_relu6": depthwise_i8((1, 6, 5, 5), (3, 3), act=Act.RELU6),
         "c37_s2_valid_two_images": depthwise_i8((2, 9, 8, 37), (3, 3), stride=(2, 2), padding=Padding.VALID),
         "c20_5x3_dilated": depthwise_i8((1, 10, 9, 20), (5, 3), dilation=(2, 1), act=Act.RELU),
         "c70_more_channels_than_pixels": depthwise_i8((1, 4, 4, 70), (3, 3)),
         "multiplier_2": depthwise_i8((1, 6, 5, 3), (3, 3), mult=2)}
NATIVE = sorted(set(CASES) - {"multiplier_2"})
LAYERS = OpLayers(CASES)
LABEL = "depthwise_conv_2d/native(int8, exact)"
needs_library = pytest.mark.skipif(dwi8.function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")


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
    assert run(case)[1] == LABEL
    LAYERS.check_layers(case)
    LAYERS.check_litert(case)


@needs_library
@pytest.mark.parametrize("case", NATIVE)
def test_two_threads_give_the_bits_of_one(case, monkeypatch):
    monkeypatch.setattr(dwi8, "MIN_SPLIT_WORK", 0)
    assert run(case, threads=2)[0].tobytes() == run(case)[0].tobytes()


def test_where_it_does_not_apply_the_numba_kernels_run(monkeypatch):
    assert run("multiplier_2")[1] == "depthwise_conv_2d/numba"
    monkeypatch.setattr(dwi8, "EXACT_BELOW", 1)         # no bias is exact: float32 sums could round
    assert run("c5_relu6")[1] == "depthwise_conv_2d/numba"
    monkeypatch.undo()
    monkeypatch.setattr(dwi8, "function", lambda: None)  # no library
    assert run("c5_relu6")[1] == "depthwise_conv_2d/numba"


def test_a_refusal_gives_the_numba_kernels_bits(monkeypatch):
    calls = []

    def stand_in(*args):
        calls.append(args[0])
        args[3][...] = 7            # whatever it wrote is overwritten
        return -1

    monkeypatch.setattr(dwi8, "function", lambda: stand_in)
    for case in ("c37_s2_valid_two_images", "c20_5x3_dilated"):
        out, label = run(case)
        assert label == LABEL and calls
        assert_same([out], LAYERS.run(case, reference=True), case)


def test_small_layers_stay_on_one_thread(monkeypatch):
    seen = []
    monkeypatch.setattr(dwi8, "function", lambda: lambda *args: seen.append(args[0]) or 0)
    run("c5_relu6", threads=2)                   # 6*5*5*9 = 1,350 multiply-adds
    monkeypatch.setattr(dwi8, "MIN_SPLIT_WORK", 0)
    run("c5_relu6", threads=2)
    assert seen == [1, 2]

"""The float CONV_2D fast path on the kernel library's own product (fast/conv_2d.py ``FloatNative``, label
``igemm``): chosen at bind where the library's ``conv_f32`` runs (else the BLAS paths), within float32
rounding of the teaching layer on convolutions of every geometry, and the teaching layer's bits whenever
the library's function reports a raised guard (1) or refuses the arrays (-1)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.interpreter_ops_cases import conv
from workbench.interpreter import Interpreter
from workbench.perf import fgemm
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import Padding
from workbench.versioning import update_versions

CASES = {   # x shape, filter shape, stride, padding, dilation, activation
    "odd_3x2_s2_same": ((1, 9, 7, 5), (37, 3, 2, 5), (2, 1), Padding.SAME, (1, 1), Act.RELU6),
    "dilated_valid_two_images": ((2, 10, 9, 6), (19, 3, 3, 6), (1, 1), Padding.VALID, (2, 2), Act.NONE),
    "1x1_lone_panel": ((1, 6, 5, 24), (40, 1, 1, 24), (1, 1), Padding.SAME, (1, 1), Act.RELU),
    "first_layer_s2": ((1, 16, 16, 3), (32, 3, 3, 3), (2, 2), Padding.SAME, (1, 1), Act.RELU6),
    # long rows: tiles at the left edge, inside the image (one row's runs sw * C apart) and across rows
    "long_rows_s1_same": ((1, 5, 30, 3), (20, 3, 3, 3), (1, 1), Padding.SAME, (1, 1), Act.NONE),
    "long_rows_dilated_down": ((1, 9, 31, 4), (18, 3, 3, 4), (1, 1), Padding.SAME, (2, 1), Act.RELU),
}


def run(model, x, threads=1, reference=False):
    it = Interpreter(model=model, num_threads=threads, reference=reference)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"]), it.prepared()[0][1]


def model_of(case):
    x_shape, w_shape, stride, padding, dilation, act = CASES[case]
    builder, inputs = conv(x_shape, w_shape, stride=stride, padding=padding, dilation=dilation, act=act)(case)
    return update_versions(builder.build()), inputs["x"] * np.float32(4)


@pytest.mark.skipif(fgemm.function() is None, reason="no kernel library with AVX-512 here (make kernels builds it)")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_igemm_is_within_float_rounding_of_the_teaching_layer(case, threads, monkeypatch):
    monkeypatch.setattr(fgemm, "MIN_SPLIT_WORK", 0)
    model, x = model_of(case)
    fast, label = run(model, x, threads)
    ref, _ = run(model, x, reference=True)
    assert label == "conv_2d/igemm"
    np.testing.assert_allclose(fast, ref, rtol=1e-5, atol=1e-5)


def test_without_the_library_function_the_blas_paths_are_chosen(monkeypatch):
    monkeypatch.setattr(fgemm, "function", lambda: None)
    assert run(*model_of("1x1_lone_panel"))[1] == "conv_2d/matmul"
    assert run(*model_of("first_layer_s2"))[1] == "conv_2d/im2col+blas"


@pytest.mark.parametrize("answer", [1, -1])
def test_a_raised_guard_or_a_refusal_gives_the_teaching_layers_bits(answer, monkeypatch):
    calls = []

    def stand_in(*args):
        calls.append(args[0])
        args[5][...] = 7.0          # whatever it wrote is overwritten
        return answer

    monkeypatch.setattr(fgemm, "function", lambda: stand_in)
    for case in ("odd_3x2_s2_same", "dilated_valid_two_images"):
        model, x = model_of(case)
        out, label = run(model, x)
        ref, _ = run(model, x, reference=True)
        assert label == "conv_2d/igemm" and calls
        assert out.tobytes() == ref.tobytes()


def test_small_convolutions_stay_on_one_thread(monkeypatch):
    seen = []
    monkeypatch.setattr(fgemm, "function", lambda: lambda *args: seen.append(args[0]) or 0)
    model, x = model_of("1x1_lone_panel")          # 6*5*40*24 = 28,800 multiply-adds
    run(model, x, threads=2)
    monkeypatch.setattr(fgemm, "MIN_SPLIT_WORK", 0)
    run(model, x, threads=2)
    assert seen == [1, 2]


@pytest.mark.skipif(fgemm.function() is None, reason="no kernel library with AVX-512 here (make kernels builds it)")
def test_a_filter_computed_at_run_time_is_packed_at_every_invoke_and_sums_the_same(monkeypatch):
    """A filter and bias that are graph inputs (as float16 weights are, once a DEQUANTIZE outside the graph
    unpacks them) take the same path, packed at each invoke: the same bytes as the constant filter's node."""
    from workbench.schema import BuiltinOperator as B
    from workbench.schema import Conv2DOptions, ModelBuilder

    monkeypatch.setattr(fgemm, "MIN_SPLIT_WORK", 0)
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (1, 9, 8, 6)).astype(np.float32)
    w = rng.standard_normal((21, 3, 3, 6)).astype(np.float32)
    bias = rng.standard_normal(21).astype(np.float32)
    outs = []
    for constant in (True, False):
        b = ModelBuilder()
        xt = b.input("x", x.shape)
        if constant:
            wt, bt = b.constant("w", w), b.constant("b", bias)
        else:
            wt, bt = b.input("w", w.shape), b.input("b", (21,))
        y = b.tensor("y", (1, 9, 8, 21))
        b.op(B.CONV_2D, [xt, wt, bt], [y], Conv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1,
                                                         fused_activation_function=Act.RELU))
        b.output(y)
        it = Interpreter(model=update_versions(b.build()), num_threads=2)
        it.allocate_tensors()
        feed = {"x": x, "w": w, "b": bias}
        for d in it.get_input_details():
            it.set_tensor(d["index"], feed[d["name"]])
        it.invoke()
        assert it.prepared()[0][1] == "conv_2d/igemm"
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]).copy())
    assert outs[0].tobytes() == outs[1].tobytes() and (outs[0] > 0).any()

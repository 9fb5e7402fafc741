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


def two_convolutions(first_act):
    """conv 3x3 (first_act) -> conv 1x1 (RELU6) -> depthwise 3x3 -> conv 1x1."""
    from workbench.schema import BuiltinOperator as B
    from workbench.schema import Conv2DOptions, DepthwiseConv2DOptions, ModelBuilder

    rng = np.random.default_rng(9)
    b = ModelBuilder()
    t = b.input("x", (1, 8, 9, 5))
    for k, (ci, co, kk, act) in enumerate([(5, 12, 3, first_act), (12, 16, 1, Act.RELU6), (16, 16, 3, Act.RELU6),
                                           (16, 8, 1, Act.NONE)]):
        y = b.tensor(f"y{k}", (1, 8, 9, co))
        if k == 2:
            b.op(B.DEPTHWISE_CONV_2D, [t, b.constant(f"w{k}", rng.standard_normal((1, 3, 3, co)).astype(np.float32)),
                                       b.constant(f"b{k}", rng.standard_normal(co).astype(np.float32))], [y],
                 DepthwiseConv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1, depth_multiplier=1,
                                        fused_activation_function=act))
        else:
            b.op(B.CONV_2D, [t, b.constant(f"w{k}", rng.standard_normal((co, kk, kk, ci)).astype(np.float32)),
                             b.constant(f"b{k}", rng.standard_normal(co).astype(np.float32))], [y],
                 Conv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1, fused_activation_function=act))
        t = y
    b.output(t)
    return update_versions(b.build()), rng.uniform(-1, 1, (1, 8, 9, 5)).astype(np.float32)


@pytest.mark.skipif(fgemm.function() is None, reason="no kernel library with AVX-512 here (make kernels builds it)")
@pytest.mark.parametrize("first_act", [Act.RELU6, Act.NONE])
def test_a_convolution_after_a_clamping_one_skips_the_guard(first_act):
    """A convolution whose input is a RELU6 convolution's (or depthwise's) output reads values in [0, 6]
    or NaN: no guard pass (a negative limit); after an unclamped one, or on the graph's input, the guard
    stays.  Either way the values are the teaching layer's within float rounding, NaN where it has NaN."""
    model, x = two_convolutions(first_act)
    x[0, 2, 3, 1] = np.nan
    it = Interpreter(model=model)
    it.allocate_tensors()
    paths = [it._sg(0).fast[i] for i in (0, 1, 3)]
    limits = [float(p.clamp[2]) for p in paths]
    assert limits[0] > 0 and limits[2] == -1.0
    assert (limits[1] == -1.0) == (first_act == Act.RELU6)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    ref, _ = run(model, x, reference=True)
    got = it.get_tensor(it.get_output_details()[0]["index"])
    assert np.isnan(ref).any()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def residual_block(scale):
    """conv 3x3 RELU6 (y0) -> conv 1x1 linear, weights times ``scale`` (y1) -> ADD(y1, y0) -> conv 1x1: a
    linear bottleneck and a residual connection, as in MobileNet v2."""
    from workbench.schema import AddOptions, Conv2DOptions, ModelBuilder
    from workbench.schema import BuiltinOperator as B

    rng = np.random.default_rng(4)
    b = ModelBuilder()
    t = b.input("x", (1, 6, 7, 4))

    def conv(name, src, ci, co, k, act, mult=1.0):
        y = b.tensor(name, (1, 6, 7, co))
        w = (rng.standard_normal((co, k, k, ci)) * mult).astype(np.float32)
        bias = rng.standard_normal(co).astype(np.float32)
        b.op(B.CONV_2D, [src, b.constant(name + "_w", w), b.constant(name + "_b", bias)], [y],
             Conv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1, fused_activation_function=act))
        return y

    y0 = conv("y0", t, 4, 8, 3, Act.RELU6)
    y1 = conv("y1", y0, 8, 8, 1, Act.NONE, scale)
    y2 = b.tensor("y2", (1, 6, 7, 8))
    b.op(B.ADD, [y1, y0], [y2], AddOptions(fused_activation_function=Act.NONE))
    b.output(conv("y3", y2, 8, 5, 1, Act.NONE))
    return update_versions(b.build()), rng.uniform(-1, 1, (1, 6, 7, 4)).astype(np.float32)


@pytest.mark.skipif(fgemm.function() is None, reason="no kernel library with AVX-512 here (make kernels builds it)")
@pytest.mark.parametrize("scale", [1.0, 1e37, np.inf])
def test_bounds_pass_through_linear_convolutions_and_residual_adds(scale):
    """A linear convolution of bounded inputs is bounded (|bias| + bound · Σ|w| for its worst channel), so
    is an ADD of two bounded tensors: the convolution after the residual ADD skips its guard, unless the
    weights before it are so large that the bound reaches its guard's limit (1e37) or are not finite."""
    from workbench.interpreter import fast

    model, x = residual_block(scale)
    it = Interpreter(model=model)
    it.allocate_tensors()
    sg = it._sg(0)
    last = sg.fast[3]
    assert (float(last.clamp[2]) == -1.0) == (scale == 1.0)
    # after the RELU6 convolution, as before, unless its own weights put the limit under 6
    assert (float(sg.fast[1].clamp[2]) == -1.0) == (scale == 1.0)
    if scale == 1.0:
        w1 = np.abs(it.get_tensor(next(d["index"] for d in it.get_tensor_details() if d["name"] == "y1_w")))
        b1 = np.abs(it.get_tensor(next(d["index"] for d in it.get_tensor_details() if d["name"] == "y1_b")))
        bound = {}
        probe = type("Probe", (), {"input_bounded": lambda self, v: bound.setdefault("y2", v)})()
        plan = [(probe if node.index == 3 else fn, node, data) for fn, node, data in sg.plan]
        fast.bounded_inputs(plan, sg.context)
        want = 6.0 + (float(b1.max()) + 6.0 * w1.astype(np.float64).reshape(8, -1).sum(axis=1).max()) * fast.BOUND_SLACK
        assert bound["y2"] == pytest.approx(want * fast.BOUND_SLACK, rel=1e-9)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    ref, _ = run(model, x, reference=True)
    got = it.get_tensor(it.get_output_details()[0]["index"])
    assert (np.isnan(got) == np.isnan(ref)).all()              # inf weights: NaN everywhere in both
    seen = ~np.isnan(ref)
    np.testing.assert_allclose(got[seen], ref[seen], rtol=1e-5, atol=1e-5 * float(np.abs(ref[seen]).max(initial=1.0)))

"""Runs of library calls (workbench/interpreter/fused.py): consecutive speed-layer nodes that are one call
of the kernel library each run from one call of ``run_calls``, with the bits of the nodes run one by one;
a refusal or a raised guard inside a run is its node's own business; moved arrays are taken again; an
error names the node it came from."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.shared_models import SHARED_MODELS
from workbench.errors import TensorError
from workbench.interpreter import Interpreter, fused
from workbench.perf import elementwise, fgemm, precompiled
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import AddOptions, Conv2DOptions, DepthwiseConv2DOptions, ModelBuilder, Padding
from workbench.schema import BuiltinOperator as B

needs_library = pytest.mark.skipif(fgemm.function() is None or fused.run_calls_function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")


def chain(act=Act.RELU6, residual_first=False, add_act=Act.NONE):
    """conv 3x3 -> depthwise 3x3 -> conv 1x1 -> ADD of the first conv's output (a library call too, done in
    the second conv's epilogue) -> MUL by a per-channel constant (a broadcast: numba, a node of its own) ->
    depthwise -> conv: two runs."""
    rng = np.random.default_rng(5)
    b = ModelBuilder()
    x = b.input("x", (1, 10, 12, 8))

    def conv(src, ci, co, k, name):
        w = b.constant(f"{name}_w", rng.standard_normal((co, k, k, ci)).astype(np.float32) * 0.3)
        bias = b.constant(f"{name}_b", rng.standard_normal(co).astype(np.float32))
        y = b.tensor(name, (1, 10, 12, co))
        b.op(B.CONV_2D, [src, w, bias], [y], Conv2DOptions(padding=Padding.SAME, stride_h=1, stride_w=1,
                                                           fused_activation_function=act))
        return y

    def depthwise(src, c, name):
        w = b.constant(f"{name}_w", rng.standard_normal((1, 3, 3, c)).astype(np.float32))
        bias = b.constant(f"{name}_b", rng.standard_normal(c).astype(np.float32))
        y = b.tensor(name, (1, 10, 12, c))
        b.op(B.DEPTHWISE_CONV_2D, [src, w, bias], [y], DepthwiseConv2DOptions(
            padding=Padding.SAME, stride_h=1, stride_w=1, depth_multiplier=1, fused_activation_function=act))
        return y

    y1 = conv(x, 8, 16, 3, "c1")
    y3 = conv(depthwise(y1, 16, "d1"), 16, 16, 1, "c2")
    s = b.tensor("sum", (1, 10, 12, 16))
    b.op(B.ADD, [y1, y3] if residual_first else [y3, y1], [s], AddOptions(fused_activation_function=add_act))
    scaled = b.tensor("scaled", (1, 10, 12, 16))
    b.op(B.MUL, [s, b.constant("scale", rng.uniform(0.5, 1.5, 16).astype(np.float32))], [scaled])
    b.output(conv(depthwise(scaled, 16, "d2"), 16, 24, 1, "c3"))
    return b.build(), rng.uniform(-1, 1, (1, 10, 12, 8)).astype(np.float32)


def ready(model, x, **kw):
    it = Interpreter(model=model, **kw)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    return it


def output(it):
    return it.get_tensor(it.get_output_details()[0]["index"])


def first_run(act=Act.RELU6):
    """(model, input, interpreter, its subgraph, the plan's first run of library calls)."""
    model, x = chain(act)
    it = ready(model, x)
    sg = it._sg()
    return model, x, it, sg, sg.runs[0][0]


def node_by_node(model, x, threads=1):
    """The same network with the plan walked one node at a time."""
    it = ready(model, x, num_threads=threads)
    sg = it._sg()
    sg.runs = list(sg.plan)
    it.invoke()
    return output(it)


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
def test_consecutive_library_nodes_run_as_one_call(threads):
    model, x = chain()
    it = ready(model, x, num_threads=threads)
    runs = it._sg().runs
    shape = [[node.index for _, node, _ in fn.entries] if isinstance(fn, fused.NativeRun) else node.index
             for fn, node, _ in runs]
    assert shape == [[0, 1, 2, 3], 4, [5, 6]]
    assert runs[0][0].fused == {2}                      # the second conv does the ADD after it
    it.invoke()
    assert output(it).tobytes() == node_by_node(model, x, threads).tobytes()
    assert "native run" not in repr(it._sg().plan)       # traces and steps still see one entry a node


@needs_library
def test_a_raised_guard_inside_a_run_is_its_nodes_own_business():
    """The first convolution's call answers 1 (the guard): run_calls stops there, the node's own path
    runs the teaching layer's sums, and the run goes on with the depthwise and the second convolution
    (every tensor they write starts as NaN)."""
    model, x, it, sg, run = first_run(Act.NONE)
    path = run.entries[0][0]
    real, answers = path.fn, []

    def raised(*args):
        answers.append(1)
        return 1

    path.fn = raised
    run.take(sg.context)
    for t in range(len(sg.context.tensors)):
        arr = sg.context.tensors[t]
        if arr is not None and arr.dtype == np.float32 and sg.context.constants[t] is None and t != 0:
            arr[...] = np.nan
    it.invoke()
    assert answers == [1, 1]                # once from the run, once from the node's own path
    path.fn = real
    want = ready(model, x, reference=True)
    want.invoke()
    np.testing.assert_allclose(output(it), output(want), rtol=1e-5, atol=1e-5)


@needs_library
def test_a_run_takes_the_arrays_again_when_they_moved():
    model, x, it, sg, run = first_run()
    t = run.entries[0][1].outputs[0]
    moved = np.empty_like(sg.context.tensors[t])
    sg.context.tensors[t] = moved
    it.invoke()
    assert (t, moved) in [(i, a) for i, a in zip(run.indices, run.arrays) if a is moved]
    assert output(it).tobytes() == node_by_node(model, x).tobytes()


@needs_library
def test_an_error_inside_a_run_names_its_node():
    model, x, it, sg, run = first_run()
    path = run.entries[1][0]            # the depthwise convolution, node 1

    def no_memory(*args):
        raise MemoryError("no room for a row of zeros")

    path.fn = no_memory
    run.take(sg.context)
    with pytest.raises(TensorError, match=r"node 1 \(DEPTHWISE_CONV_2D\)"):
        it.invoke()
    assert run.failed is sg.plan[1][1]


def test_without_the_librarys_run_calls_the_plan_is_walked_node_by_node(monkeypatch):
    monkeypatch.setattr(fused, "run_calls_function", lambda: None)
    model, x = chain()
    it = ready(model, x)
    assert it._sg().runs == it._sg().plan
    it.invoke()
    assert np.isfinite(output(it)).all()


@needs_library
def test_run_calls_stops_at_the_first_answer_other_than_zero():
    run_calls = fused.run_calls_function()
    seen = []

    def answer(value):
        seen.append(value)
        return value

    calls = ((answer, (0,)), (answer, (0,)), (answer, (-1,)), (answer, (0,)))
    assert run_calls(calls, 0) == 2 and seen == [0, 0, -1]
    assert run_calls(calls, 3) == 4 and seen[-1] == 0
    assert run_calls(((answer, (None,)),), 0) == 1          # None: done (what call_rows answers)
    assert run_calls(((answer, ("no",)),), 0) == 0          # anything else: not done
    assert run_calls((), 0) == 0
    with pytest.raises(TypeError, match="call 0 is not a"):
        run_calls(((answer, 0),), 0)
    with pytest.raises(ZeroDivisionError):
        run_calls(((lambda: 1 // 0, ()),), 0)


needs_prepare = pytest.mark.skipif(fused.prepare_run_function() is None or elementwise.binary_function() is None,
                                   reason="no kernel library with prepare_run and AVX-512 (make kernels builds it)")


def _adds(n=40_000):
    """Two ADDs of the library's binary_f32 (the second reads the first's output), their arrays."""
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    mid, out = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
    clamp = np.array([-np.inf, np.inf], np.float32)
    fn = elementwise.binary_function()
    return (fn, (2, a, b, mid, clamp, elementwise.ADD)), (fn, (2, mid, b, out, clamp, elementwise.ADD)), (a, b, out)


@needs_prepare
def test_a_prepared_run_is_the_calls_run_one_by_one():
    """prepare_run's capsule in place of the calls: the library's loops run from their checked arguments, a
    Python call among them as before; the capsule holds the calls (and their arrays) itself."""
    first, second, (a, b, out) = _adds()
    seen = []
    calls = (first, (lambda: seen.append(1) or 0, ()), second)
    prepared = fused.prepare_run_function()(calls)
    assert type(prepared).__name__ == "PyCapsule"
    del calls, first, second
    assert fused.run_calls_function()(prepared, 0) == 3 and seen == [1]
    assert out.tobytes() == ((a + b) + b).tobytes()
    out[...] = np.nan
    assert fused.run_calls_function()(prepared, 2) == 3 and seen == [1]        # from the third call on
    assert out.tobytes() == ((a + b) + b).tobytes()


@needs_prepare
def test_a_networks_last_nodes_are_prepared_calls_with_the_plain_calls_bits():
    """A global pool (sum_f32), a classifier of one row (fc_dot_f32), its RESHAPE (copy) and SOFTMAX
    (softmax_f32) as a prepared run: every call prepared, the bits of the plain calls; the classifier's guard
    is still checked at every run (an infinity put in its input after the run was prepared stops the run at
    that call)."""
    from workbench.interpreter.fast import fully_connected, reshape

    rng = np.random.default_rng(5)
    feat = rng.standard_normal(7 * 7 * 64).astype(np.float32)
    pooled = np.zeros((1, 64), np.float32)
    w = rng.standard_normal((100, 64)).astype(np.float32)
    bias = rng.standard_normal(100).astype(np.float32)
    logits, flat, probs = np.zeros((1, 100), np.float32), np.zeros(100, np.float32), np.zeros(100, np.float32)
    calls = ((elementwise.sum_function(), (2, feat, pooled.reshape(-1), np.array([1, 49, 64], np.int64),
                                           np.array([49.0], np.float32))),
             (fully_connected._dot_function(), (2, pooled, w, bias, logits, -np.inf, np.inf, 1e30)),
             (reshape.copy_function(), (logits, flat)),
             (elementwise.softmax_function(), (1, flat, probs, np.array([100], np.int64), np.array([1.0], np.float32))))
    run, prepare = fused.run_calls_function(), fused.prepare_run_function()
    if any(fn is None for fn, _ in calls):
        pytest.skip("a library without these functions")
    assert run(calls, 0) == 4
    want = probs.copy()
    assert np.isclose(want.sum(), 1.0) and np.array_equal(pooled[0], feat.reshape(49, 64).sum(0) / np.float32(49))
    probs[...] = 0
    capsule = prepare(calls)
    assert precompiled.native("prepared_calls", lambda fn: True)(capsule) == (True,) * 4
    assert run(capsule, 0) == 4 and probs.tobytes() == want.tobytes()
    probs[...] = 0
    calls[1][1][1][0, 3] = np.inf                            # after the pool: the classifier's input only
    assert run(capsule, 1) == 1 and not probs.any()


@needs_library
def test_without_prepare_run_a_run_walks_its_plain_calls(monkeypatch):
    """A library built before prepare_run: the run hands run_calls its tuple of calls, the same bits."""
    model, x = chain()
    want = ready(model, x)
    want.invoke()
    monkeypatch.setattr(fused, "prepare_run_function", lambda: None)
    it = ready(model, x)
    run = it._sg().runs[0][0]
    assert run.prepared is run.calls and isinstance(run.calls, tuple)
    it.invoke()
    assert output(it).tobytes() == output(want).tobytes()


@needs_prepare
def test_a_prepared_run_stops_where_a_call_is_refused_and_raises_what_it_raised():
    """A loop's call whose arrays it does not take stays a Python call (answering -1: the run stops there);
    arguments its function refuses with an error raise that error when the run reaches them, not before."""
    first, second, (a, b, out) = _adds()
    fn = first[0]
    refused = (fn, (1, a, b, np.zeros(5, np.float32), second[1][4], elementwise.ADD))     # out too short
    run, prepare = fused.run_calls_function(), fused.prepare_run_function()
    assert run(prepare((first, refused, second)), 0) == 1
    assert np.isnan(out).all()                              # the third call never ran
    wrong = prepare((first, (fn, (1, a, b)), second))       # too few arguments: fine until it runs
    with pytest.raises(TypeError, match="binary_f32"):
        run(wrong, 0)
    with pytest.raises(TypeError, match="call 0 is not a"):
        prepare(((fn, 0),))
    assert run(prepare(()), 0) == 0


@needs_prepare
def test_a_raised_guard_stops_a_prepared_run_at_its_convolution():
    """An input beyond the first convolution's guard (an infinity): its prepared call answers 1, the node's
    own path runs the teaching layer's sums, and the output is the bits of the run without prepared calls."""
    model, x = chain(Act.NONE)
    x = x.copy()
    x[0, 3, 4, :] = np.inf
    it = ready(model, x)
    run = it._sg().runs[0][0]
    assert run.prepared is not run.calls
    assert fused.run_calls_function()(run.prepared, 0) == 0          # stopped at the convolution
    it.invoke()
    got = output(it).copy()
    run.prepared = run.calls                                # the plain tuple: each call checked again
    it.invoke()
    assert got.tobytes() == output(it).tobytes()


@needs_library
def test_arrays_that_no_longer_make_one_call_run_node_by_node():
    """When the arrays move and a node's fast path no longer offers one call for them (a flat view that
    would be a copy, say), the run's nodes go one by one through their own paths: the same bits."""
    model, x, it, sg, run = first_run()
    add = run.entries[3][0]
    add.native_call = lambda context, node: None            # what FloatNative says of such arrays
    t = run.entries[0][1].outputs[0]
    sg.context.tensors[t] = sg.context.tensors[t].copy()      # moved: the run takes its arrays again
    it.invoke()
    assert run.calls is None
    assert output(it).tobytes() == node_by_node(model, x).tobytes()


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["int8", "float32"])
def test_a_whole_mobilenet_v1_is_one_run(threads, kind):
    """MobileNet v1 from Google's converter, every node in one run, with the bits of the nodes one by one:
    int8 — the VNNI convolutions (their loop through the library's call_rows), the depthwise loops, the
    global average pool and the softmax (numba kernels of the library, jit.library_call), the logits'
    RESHAPE (the library's copy); float — the convolutions, depthwise layers, MEAN, RESHAPE, SOFTMAX.  Every
    call prepared: the run goes from the first node to the last without Python."""
    path = SHARED_MODELS / f"mobilenet_v1_a10_224_{kind}.tflite"
    if not path.exists():
        pytest.skip(f"needs {path} (the shared models directory beside the repository)")
    rng = np.random.default_rng(3)
    x = (rng.integers(-128, 128, (1, 224, 224, 3)).astype(np.int8) if kind == "int8"
         else rng.uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32))
    outs = []
    for fused_runs in (True, False):
        it = Interpreter(model_path=str(path), num_threads=threads)
        it.allocate_tensors()
        sg = it._sg()
        if fused_runs:
            assert len(sg.runs) == 1 and len(sg.runs[0][0].entries) == len(sg.plan) == 31
            if fused.prepare_run_function() is not None:    # no Python from the first node to the last
                assert all(fused.prepared_calls(sg.runs[0][0]))
        else:
            sg.runs = list(sg.plan)
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        outs.append(output(it).copy())
    assert outs[0].tobytes() == outs[1].tobytes()


def classifier(bias: bool, act=Act.RELU6, units=300, rows=8):
    """conv 1x1 -> FULLY_CONNECTED (``rows`` rows of 512 inputs, big enough for blas.matmul to cut it among
    threads) -> SOFTMAX: a network's last layers (more rows than ``FloatDot`` takes: the BLAS product)."""
    from workbench.schema import FullyConnectedOptions, SoftmaxOptions

    rng = np.random.default_rng(17)
    b = ModelBuilder()
    x = b.input("x", (rows, 1, 1, 64))
    w = b.constant("c_w", rng.standard_normal((512, 1, 1, 64)).astype(np.float32) * 0.2)
    y = b.tensor("c", (rows, 1, 1, 512))
    b.op(B.CONV_2D, [x, w, b.constant("c_b", rng.standard_normal(512).astype(np.float32))], [y],
         Conv2DOptions(padding=Padding.VALID, stride_h=1, stride_w=1, fused_activation_function=Act.RELU))
    ins = [y, b.constant("fc_w", rng.standard_normal((units, 512)).astype(np.float32) * 0.1)]
    ins.append(b.constant("fc_b", rng.standard_normal(units).astype(np.float32)) if bias else -1)
    logits = b.tensor("logits", (rows, units))
    b.op(B.FULLY_CONNECTED, ins, [logits], FullyConnectedOptions(fused_activation_function=act))
    probs = b.tensor("probs", (rows, units))
    b.op(B.SOFTMAX, [logits], [probs], SoftmaxOptions(beta=1.0))
    b.output(probs)
    return b.build(), rng.uniform(-1, 1, (rows, 1, 1, 64)).astype(np.float32)


@needs_library
@pytest.mark.parametrize("bias,act", [(True, Act.RELU6), (False, Act.NONE), (True, Act.RELU_N1_TO_1)])
def test_a_fully_connected_layer_cut_among_threads_joins_the_run(bias, act):
    """On two threads the float FULLY_CONNECTED is one call of the library (``fc_f32``: the product in
    ``blas.matmul``'s pieces, each adding the bias and clamping its part), so the classifier and its
    softmax run in the same call as the convolution before them, with the bits of the nodes one by one;
    on one thread (numpy's product, whose bits for a row differ from cblas_sgemm's) it stays a node of its
    own."""
    from workbench.perf import blas

    if not (blas.available() and blas._gemm_split()):
        pytest.skip("numpy's OpenBLAS without cblas_sgemm here: the product is numpy's on any thread count")
    model, x = classifier(bias, act)
    want_values = ready(model, x, reference=True)
    want_values.invoke()
    assert type(ready(model, x)._sg().fast[1]).__name__ == "FloatBlas"
    for threads, want in ((2, [[0, 1, 2]]), (1, [0, 1, 2])):
        it = ready(model, x, num_threads=threads)
        shape = [[node.index for _, node, _ in fn.entries] if isinstance(fn, fused.NativeRun) else node.index
                 for fn, node, _ in it._sg().runs]
        assert shape == want
        if threads == 2 and fused.prepare_run_function() is not None:
            assert all(fused.prepared_calls(it._sg().runs[0][0]))    # fc_f32 and softmax_f32 too
        it.invoke()
        got = output(it)
        assert got.tobytes() == node_by_node(model, x, threads).tobytes()
        np.testing.assert_allclose(got, output(want_values), rtol=1e-5, atol=1e-6)


@needs_library
@pytest.mark.parametrize("rows", [1, 2])
def test_a_classifier_of_a_row_or_two_joins_the_run_on_any_thread_count(rows):
    """A row or two (a network's classifier): the float FULLY_CONNECTED is one ``fc_dot_f32`` call
    (``FloatDot``), in the run on one thread as on two, with the same bits either way and the bits of the
    nodes one by one."""
    model, x = classifier(True, Act.RELU6, rows=rows)
    want = ready(model, x, reference=True)
    want.invoke()
    got = {}
    for threads in (1, 2):
        it = ready(model, x, num_threads=threads)
        assert type(it._sg().fast[1]).__name__ == "FloatDot"
        (run,) = [fn for fn, _, _ in it._sg().runs]
        assert isinstance(run, fused.NativeRun) and len(run.entries) == 3
        if fused.prepare_run_function() is not None:
            assert all(fused.prepared_calls(run))                    # fc_dot_f32 too
        it.invoke()
        got[threads] = output(it)
        assert got[threads].tobytes() == node_by_node(model, x, threads).tobytes()
    assert got[1].tobytes() == got[2].tobytes()
    np.testing.assert_allclose(got[1], output(want), rtol=1e-5, atol=1e-6)


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("residual_first,add_act", [(False, Act.NONE), (True, Act.NONE), (True, Act.RELU_N1_TO_1)])
def test_an_add_after_a_convolution_is_done_in_its_epilogue(threads, residual_first, add_act):
    """conv -> ADD(conv's output, residual), the conv's output read by nothing else: one call (the ADD's
    own call skipped), the bits of the two nodes one by one, the ADD's operands in its order, its clamp;
    NaNs in both operands come out as the first one's (the residual's first value NaN, the input's too)."""
    model, x = chain(residual_first=residual_first, add_act=add_act)
    x[0, 0, 0, :] = np.nan
    it = ready(model, x, num_threads=threads)
    run = it._sg().runs[0][0]
    assert run.fused == {2} and run.calls[3] is fused.SKIPPED
    it.invoke()
    got = output(it)
    assert np.isnan(got).any() and got.tobytes() == node_by_node(model, x, threads).tobytes()
    want = ready(model, x, reference=True)
    want.invoke()
    np.testing.assert_allclose(got, output(want), rtol=1e-5, atol=1e-5)


@needs_library
def test_a_raised_guard_in_a_convolution_that_does_an_add_runs_both_nodes_own_paths():
    """The fused call answers 1 (the guard): the convolution's own path writes its output with the
    teaching layer's sums, then the ADD's own path runs, and the run goes on after the ADD."""
    model, x, it, sg, run = first_run(Act.NONE)
    path = run.entries[2][0]
    real, answers = path.fn, []

    def raised(*args):
        answers.append(len(args))
        return 1

    path.fn = raised
    run.take(sg.context)
    assert run.fused == {2}
    for t in range(len(sg.context.tensors)):
        arr = sg.context.tensors[t]
        if arr is not None and arr.dtype == np.float32 and sg.context.constants[t] is None and t != 0:
            arr[...] = np.nan
    it.invoke()
    assert answers == [10, 8]               # the fused call, then the node's own call
    path.fn = real
    want = ready(model, x, reference=True)
    want.invoke()
    assert not np.isnan(output(it)).any()   # every tensor after the conv was written again
    np.testing.assert_allclose(output(it), output(want), rtol=1e-4, atol=1e-4)


@needs_library
def test_no_add_is_done_in_a_convolution_whose_output_can_be_read():
    """keep_intermediates: every tensor stays readable, so the convolution writes its output and the ADD
    runs on its own; a convolution output that two nodes read is not skipped either."""
    model, x = chain()
    it = ready(model, x, keep_intermediates=True)
    run = it._sg().runs[0][0]
    assert run.fused == set()
    it.invoke()
    conv_out = run.entries[2][1].outputs[0]
    sums = it.get_tensor(run.entries[3][1].outputs[0])
    residual = it.get_tensor(run.entries[0][1].outputs[0])
    assert (it.get_tensor(conv_out) + residual).tobytes() == sums.tobytes()
    assert output(it).tobytes() == node_by_node(model, x).tobytes()
    plan = [(fn, node, None) for fn, node, _ in it._sg().plan]
    read_twice = [(fn, node, data) for fn, node, data in plan]
    conv_node = read_twice[2][1]
    assert fused.residual_pairs(read_twice, ()) == {3: conv_node.inputs[0]}
    assert fused.residual_pairs(read_twice, (conv_node.outputs[0],)) == {}      # a graph output
    read_twice.append(read_twice[3])                                             # and read by another node
    assert fused.residual_pairs(read_twice, ()) == {}


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
def test_mobilenet_v2_does_every_residual_add_in_a_convolution(threads):
    """MobileNet v2 0.35/96 from Google's converter: each of its ten residual ADDs done in the projection
    before it, the memory plan keeping the depthwise output that projection reads apart from the ADD's
    output (which it would otherwise reuse), the bits of the nodes one by one."""
    path = SHARED_MODELS / "mobilenet_v2_a035_96_float32.tflite"
    if not path.exists():
        pytest.skip(f"needs {path} (the shared models directory beside the repository)")
    x = np.random.default_rng(8).uniform(-1, 1, (1, 96, 96, 3)).astype(np.float32)
    it = Interpreter(model_path=str(path), num_threads=threads)
    it.allocate_tensors()
    sg = it._sg()
    (run,) = [fn for fn, _, _ in sg.runs if isinstance(fn, fused.NativeRun)]
    adds = [i for i, (_, node, _) in enumerate(run.entries) if node.op_name == "ADD"]
    assert len(adds) == 10 and run.fused == {i - 1 for i in adds}
    held = {a.tensor: a for a in sg.arena_plan.allocations if a.held_by is not None}
    for i in adds:
        t_in = run.entries[i - 1][1].inputs[0]
        assert not np.may_share_memory(sg.context.tensors[t_in], sg.context.tensors[run.entries[i][1].outputs[0]])
        # the table says why the convolution's input lives one node past its last reader
        position = [node.index for _, node, _ in sg.plan].index(run.entries[i][1].index)
        assert held[t_in].held_by == held[t_in].last == position
    assert len(held) == 10
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    want = Interpreter(model_path=str(path), num_threads=threads)
    want.allocate_tensors()
    want._sg().runs = list(want._sg().plan)
    want.set_tensor(want.get_input_details()[0]["index"], x)
    want.invoke()
    assert output(it).tobytes() == output(want).tobytes()

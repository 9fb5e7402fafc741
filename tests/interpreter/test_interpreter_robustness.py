"""Guards of the interpreter: endless WHILE loops, recursive control flow, bad subgraph indices,
and ops whose inputs are only known at run time (WHERE, RANGE, FILL, TILE, SLICE, GATHER),
checked against ai-edge-litert.  The regressions the interpreter fuzzer found are at the end."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from helpers.control_flow_models import add_subgraph, assert_same, scalar, while_static_model
from helpers.litert_session import run_calls, run_ours
from workbench import dump
from workbench.errors import ModelError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.interpreter import DEFAULT_MAX_WHILE_ITERATIONS
from workbench.interpreter.kernels.while_ import WhileLimitError
from workbench.schema import (
    AddOptions,
    CallOnceOptions,
    FillOptions,
    GatherOptions,
    GreaterOptions,
    IfOptions,
    ModelBuilder,
    MulOptions,
    RangeOptions,
    SliceOptions,
    TileOptions,
    WhereOptions,
    WhileOptions,
)
from workbench.schema import (
    BuiltinOperator as B,
)

I32, I64, F32 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32)


# ----------------------------------------------------------------------------------------------
# WHILE that never ends


def endless_while_model():
    """while i == i: i += 1  — the condition is always true."""
    b = ModelBuilder()

    def cond(b):
        i = b.input("c_i", (), np.int32)
        t = b.tensor("c_true", (), np.bool_)
        b.op(B.EQUAL, [i, i], [t])
        b.output(t)

    def body(b):
        i = b.input("b_i", (), np.int32)
        one = scalar(b, "b_one", 1, np.int32)
        i1 = b.tensor("b_i1", (), np.int32)
        b.op(B.ADD, [i, one], [i1], AddOptions())
        b.output(i1)

    c_idx = add_subgraph(b, "cond", cond)
    b_idx = add_subgraph(b, "body", body)
    i0 = b.input("i0", (), np.int32)
    out = b.tensor("i_out", (), np.int32)
    b.op(B.WHILE, [i0], [out], WhileOptions(cond_subgraph_index=c_idx, body_subgraph_index=b_idx))
    b.output(out)
    return b.build()


def test_endless_while_stops_at_the_iteration_limit():
    it = Interpreter(model=endless_while_model(), max_while_iterations=500)
    it.allocate_tensors()
    it.set_tensor(0, np.array(0, np.int32))
    with pytest.raises(WhileLimitError, match=r"WHILE \(node 0 of subgraph 0\).*500 iterations.*max_while_iterations"):
        it.invoke()
    assert isinstance(WhileLimitError("x"), WorkbenchError)
    # the interpreter stays usable: nothing is left marked as running
    assert it._active == [] and not any(sg.busy for sg in it._subgraphs.values())
    with pytest.raises(WhileLimitError):
        it.invoke()


def test_the_while_limit_counts_body_runs_and_can_be_lifted():
    data = dump(while_static_model())
    x = np.ones((2, 2), np.float32)
    it = Interpreter(model_content=data, max_while_iterations=4)
    assert run_ours(it, [("invoke", [np.array(4, np.int32), x])])[0][0].shape == (2, 2)   # 4 runs: allowed
    with pytest.raises(WhileLimitError, match="4 iterations"):
        run_ours(it, [("invoke", [np.array(5, np.int32), x])])
    assert Interpreter(model_content=data).max_while_iterations == DEFAULT_MAX_WHILE_ITERATIONS == 10_000_000
    assert Interpreter(model_content=data, max_while_iterations=None).max_while_iterations is None
    with pytest.raises(ValueError, match="max_while_iterations"):
        Interpreter(model_content=data, max_while_iterations=-1)


def test_endless_while_under_steps_is_stopped_too():
    it = Interpreter(model=endless_while_model(), max_while_iterations=20)
    it.allocate_tensors()
    it.set_tensor(0, np.array(0, np.int32))
    with pytest.raises(WhileLimitError):
        list(it.steps())


# ----------------------------------------------------------------------------------------------
# recursion and subgraph indices


def _branch_passing(b, name):
    def build(b):
        c = b.input(f"{name}_c", (), np.bool_)
        x = b.input(f"{name}_x", (2, 3))
        two = scalar(b, f"{name}_two", 2.0, np.float32)
        y = b.tensor(f"{name}_y", (2, 3))
        b.op(B.MUL, [x, two], [y], MulOptions())
        b.output(y)
        del c
    return build


def if_cycle_model(then_index=None, cycle=True):
    """main: IF(c, c, x) then=1 else=2; subgraph 1: IF(c, c, x) then=0 (back to main) else=2."""
    b = ModelBuilder()

    def sg1(b):
        c = b.input("s1_c", (), np.bool_)
        x = b.input("s1_x", (2, 3))
        y = b.tensor("s1_y", (2, 3))
        b.op(B.IF, [c, c, x], [y], IfOptions(then_subgraph_index=0 if cycle else 2, else_subgraph_index=2))
        b.output(y)

    one = add_subgraph(b, "sg1", sg1)
    two = add_subgraph(b, "sg2", _branch_passing(b, "s2"))
    c = b.input("c", (), np.bool_)
    x = b.input("x", (2, 3))
    y = b.tensor("y", (2, 3))
    b.op(B.IF, [c, c, x], [y], IfOptions(then_subgraph_index=one if then_index is None else then_index,
                                         else_subgraph_index=two))
    b.output(y)
    return b.build()


def test_indirect_if_recursion_is_a_model_error_at_allocate():
    it = Interpreter(model=if_cycle_model())
    with pytest.raises(ModelError, match=r"subgraph 0 is called while it is allocating.*0 -> 1 -> 0") as info:
        it.allocate_tensors()
    assert info.value.path == "model.subgraphs[0]"
    assert it._active == [] and not any(sg.busy for sg in it._subgraphs.values())


def test_the_same_model_without_the_cycle_runs():
    it = Interpreter(model=if_cycle_model(cycle=False))
    it.allocate_tensors()
    it.set_tensor(0, np.array(True))
    it.set_tensor(1, np.ones((2, 3), np.float32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), np.full((2, 3), 2.0))


@pytest.mark.parametrize("index, why", [(0, "calls itself"), (3, "does not exist"), (-1, "does not exist"),
                                        (1 << 30, "does not exist")])
def test_if_subgraph_index_out_of_range_or_self_is_a_model_error(index, why):
    it = Interpreter(model=if_cycle_model(then_index=index, cycle=False))
    with pytest.raises(ModelError, match=rf"IF \(node 0\): then subgraph {index} {why}") as info:
        it.allocate_tensors()
    assert info.value.path == "model.subgraphs[0].operators[0].builtin_options.then_subgraph_index"


def _while_model(cond_index=None, body_index=None):
    model = while_static_model()
    sg = model.subgraphs[0]
    op = sg.operators[0]
    opts = op.builtin_options
    opts = replace(opts, cond_subgraph_index=opts.cond_subgraph_index if cond_index is None else cond_index,
                   body_subgraph_index=opts.body_subgraph_index if body_index is None else body_index)
    ops = (replace(op, builtin_options=opts),) + tuple(sg.operators[1:])
    return replace(model, subgraphs=(replace(sg, operators=ops),) + tuple(model.subgraphs[1:]))


@pytest.mark.parametrize("field, value", [("cond", 7), ("body", 3), ("body", -5), ("cond", 0)])
def test_while_subgraph_index_out_of_range_is_a_model_error(field, value):
    model = _while_model(**{f"{field}_index": value})
    with pytest.raises(ModelError, match=rf"WHILE \(node 0\): {field} subgraph {value}") as info:
        Interpreter(model_content=dump(model)).allocate_tensors()
    assert info.value.path.endswith(f"builtin_options.{field}_subgraph_index")


def test_while_whose_body_calls_the_caller_is_a_model_error():
    """The body subgraph 2 holds a WHILE whose body is subgraph 2 (through cond 1): body calls itself."""
    model = while_static_model()
    body = model.subgraphs[2]
    main_op = model.subgraphs[0].operators[0]
    # body: WHILE(i, n, x, acc) cond=1 body=2 — the body runs itself
    names = [t.name for t in body.tensors]
    n_out = replace(body.tensors[names.index("b_i1")], name="b_n1")
    x_out = replace(body.tensors[names.index("b_h")], name="b_x1")
    outs = (names.index("b_i1"), len(names), len(names) + 1, names.index("b_acc1"))
    inner = replace(main_op, inputs=tuple(body.inputs), outputs=outs)
    body = replace(body, tensors=tuple(body.tensors) + (n_out, x_out), operators=(inner,), outputs=outs)
    model = replace(model, subgraphs=model.subgraphs[:2] + (body,))
    with pytest.raises(ModelError, match=r"body subgraph 2 calls itself"):
        Interpreter(model_content=dump(model)).allocate_tensors()


def call_once_cycle_model():
    """main: CALL_ONCE init=1; subgraph 1: CALL_ONCE init=2; subgraph 2: CALL_ONCE init=1."""
    b = ModelBuilder()

    def sg(target):
        def build(b):
            b.op(B.CALL_ONCE, [], [], CallOnceOptions(init_subgraph_index=target))
        return build

    add_subgraph(b, "init1", sg(2))
    add_subgraph(b, "init2", sg(1))
    x = b.input("x", (2,))
    y = b.tensor("y", (2,))
    b.op(B.CALL_ONCE, [], [], CallOnceOptions(init_subgraph_index=1))
    b.op(B.ADD, [x, x], [y], AddOptions())
    b.output(y)
    return b.build()


def test_call_once_cycle_is_a_model_error():
    with pytest.raises(ModelError, match=r"subgraph 1 is called while it is allocating.*0 -> 1 -> 2 -> 1"):
        Interpreter(model_content=dump(call_once_cycle_model())).allocate_tensors()


def test_call_once_index_out_of_range_is_a_model_error():
    model = call_once_cycle_model()
    sg = model.subgraphs[0]
    op = replace(sg.operators[0], builtin_options=CallOnceOptions(init_subgraph_index=9))
    model = replace(model, subgraphs=(replace(sg, operators=(op,) + tuple(sg.operators[1:])),)
                    + tuple(model.subgraphs[1:]))
    with pytest.raises(ModelError, match=r"CALL_ONCE \(node 0\): init subgraph 9 is not another") as info:
        Interpreter(model_content=dump(model)).allocate_tensors()
    assert info.value.path.endswith("init_subgraph_index")


def test_recursion_reached_only_while_invoking_is_caught():
    """The IF's condition input is dynamic (a RESHAPE to a run-time shape), so the IF is prepared
    during invoke; its branch calls the main subgraph back while the main subgraph is running."""
    b = ModelBuilder()

    def sg1(b):
        c = b.input("s1_c", (1,), np.bool_, shape_signature=(-1,))
        s = b.input("s1_s", (1,), np.int32)
        x = b.input("s1_x", (2, 3))
        y = b.tensor("s1_y", (2, 3))
        b.op(B.IF, [c, c, s, x], [y], IfOptions(then_subgraph_index=0, else_subgraph_index=0))
        b.output(y)

    one = add_subgraph(b, "sg1", sg1)
    c = b.input("c", (1,), np.bool_)
    s = b.input("s", (1,), np.int32)
    x = b.input("x", (2, 3))
    cr = b.tensor("cr", (1,), np.bool_, shape_signature=(-1,))
    from workbench.schema import ReshapeOptions
    b.op(B.RESHAPE, [c, s], [cr], ReshapeOptions(new_shape=()))
    y = b.tensor("y", (2, 3))
    b.op(B.IF, [cr, cr, s, x], [y], IfOptions(then_subgraph_index=one, else_subgraph_index=one))
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    it.set_tensor(0, np.array([True]))
    it.set_tensor(1, np.array([1], np.int32))
    it.set_tensor(2, np.ones((2, 3), np.float32))
    with pytest.raises(ModelError, match=r"subgraph 0 is called while it is (running|allocating).*recursi"):
        it.invoke()
    assert it._active == [] and not any(sg.busy for sg in it._subgraphs.values())


# ----------------------------------------------------------------------------------------------
# ops with run-time inputs, against litert


def _compare(model, calls, **kw):
    data = dump(model)
    theirs = run_calls(data, calls)
    ours = run_ours(Interpreter(model_content=data), calls)
    assert_same(ours, theirs, **kw)
    return ours


def test_where_of_a_run_time_condition_then_gather_matches_litert():
    """idx = where(x > 0); g = gather(p, idx): a dynamic WHERE output feeds GATHER's indices."""
    b = ModelBuilder()
    x = b.input("x", (6,))
    p = b.input("p", (6, 2))
    zero = scalar(b, "zero", 0.0, np.float32)
    c = b.tensor("c", (6,), np.bool_)
    b.op(B.GREATER, [x, zero], [c], GreaterOptions())
    idx = b.tensor("idx", (0, 1), np.int64, shape_signature=(-1, 1))
    b.op(B.WHERE, [c], [idx], WhereOptions())
    g = b.tensor("g", (0, 1, 2), shape_signature=(-1, 1, 2))
    b.op(B.GATHER, [p, idx], [g], GatherOptions(axis=0, batch_dims=0))
    b.output(idx, g)
    pv = np.arange(12, dtype=np.float32).reshape(6, 2)
    xs = [np.array([1, -1, 2, -2, 3, -3], F32), np.array([0, 0, 5, 0, 0, 0], F32), np.ones(6, F32),
          np.array([0, 0, 5, 0, 0, 0], F32)]
    ours = _compare(b.build(), [("invoke", [v, pv]) for v in xs])
    assert ours[0][0].tolist() == [[0], [2], [4]] and ours[0][1].shape == (3, 1, 2)
    assert ours[2][0].shape == (6, 1)
    # nothing true: empty outputs (litert's get_tensor refuses an empty tensor, so no comparison)
    empty = run_ours(Interpreter(model=b.build()), [("invoke", [np.full(6, -1, F32), pv])])[0]
    assert empty[0].shape == (0, 1) and empty[1].shape == (0, 1, 2)


def test_where_of_a_2d_run_time_condition_matches_litert():
    b = ModelBuilder()
    x = b.input("x", (3, 4), np.bool_)
    idx = b.tensor("idx", (0, 2), np.int64, shape_signature=(-1, 2))
    b.op(B.WHERE, [x], [idx], WhereOptions(), version=1)
    b.output(idx)
    rng = np.random.default_rng(2)
    _compare(b.build(), [("invoke", [rng.random((3, 4)) > 0.5]) for _ in range(3)])


def test_range_with_three_run_time_scalars_matches_litert():
    b = ModelBuilder()
    start, limit, delta = (b.input(n, (), np.int32) for n in ("start", "limit", "delta"))
    r = b.tensor("r", (0,), np.int32, shape_signature=(-1,))
    b.op(B.RANGE, [start, limit, delta], [r], RangeOptions())
    b.output(r)
    cases = [(0, 5, 1), (10, 2, -3), (-4, 9, 4), (3, 4, 1)]
    ours = _compare(b.build(), [("invoke", [np.array(v, np.int32) for v in c]) for c in cases])
    assert ours[1][0].tolist() == [10, 7, 4]


def test_range_with_run_time_zero_delta_is_a_clear_error():
    b = ModelBuilder()
    start, limit, delta = (b.input(n, (), np.int32) for n in ("start", "limit", "delta"))
    r = b.tensor("r", (0,), np.int32, shape_signature=(-1,))
    b.op(B.RANGE, [start, limit, delta], [r], RangeOptions())
    b.output(r)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    for t, v in zip((0, 1, 2), (0, 5, 0)):
        it.set_tensor(t, np.array(v, np.int32))
    with pytest.raises(WorkbenchError, match=r"RANGE \(node 0\): delta must not be 0"):
        it.invoke()


def test_fill_with_run_time_dims_and_value_matches_litert():
    b = ModelBuilder()
    dims = b.input("dims", (2,), np.int32)
    v = b.input("v", (), np.float32)
    f = b.tensor("f", (1, 1), shape_signature=(-1, -1))
    b.op(B.FILL, [dims, v], [f], FillOptions())
    two = scalar(b, "two", 2.0, np.float32)
    y = b.tensor("y", (1, 1), shape_signature=(-1, -1))
    b.op(B.MUL, [f, two], [y], MulOptions())
    b.output(y)
    cases = [((2, 3), 1.5), ((4, 1), -2.0), ((2, 3), 0.25), ((0, 3), 1.0)]
    ours = _compare(b.build(), [("invoke", [np.array(d, np.int32), np.array(x, np.float32)]) for d, x in cases])
    assert ours[1][0].shape == (4, 1) and float(ours[1][0][0, 0]) == -4.0


def test_tile_with_run_time_multiples_matches_litert():
    b = ModelBuilder()
    x = b.input("x", (2, 3))
    m = b.input("m", (2,), np.int32)
    y = b.tensor("y", (2, 3), shape_signature=(-1, -1))
    b.op(B.TILE, [x, m], [y], TileOptions())
    b.output(y)
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    _compare(b.build(), [("invoke", [xv, np.array(m, np.int32)]) for m in ((1, 1), (2, 3), (3, 1), (2, 3))])


def test_slice_with_run_time_begin_and_size_matches_litert():
    b = ModelBuilder()
    x = b.input("x", (4, 5))
    begin = b.input("begin", (2,), np.int32)
    size = b.input("size", (2,), np.int32)
    y = b.tensor("y", (1, 1), shape_signature=(-1, -1))
    b.op(B.SLICE, [x, begin, size], [y], SliceOptions())
    b.output(y)
    xv = np.arange(20, dtype=np.float32).reshape(4, 5)
    cases = [((0, 0), (4, 5)), ((1, 2), (2, -1)), ((3, 4), (1, 1)), ((1, 2), (2, -1))]
    _compare(b.build(), [("invoke", [xv, np.array(bg, np.int32), np.array(sz, np.int32)]) for bg, sz in cases])


def test_slice_with_run_time_begin_outside_the_input_is_a_clear_error():
    b = ModelBuilder()
    x = b.input("x", (4, 5))
    begin = b.input("begin", (2,), np.int32)
    size = b.constant("size", np.array([1, 1], np.int32))
    y = b.tensor("y", (1, 1), shape_signature=(-1, -1))
    b.op(B.SLICE, [x, begin, size], [y], SliceOptions())
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    it.set_tensor(0, np.zeros((4, 5), np.float32))
    it.set_tensor(1, np.array([9, 0], np.int32))
    with pytest.raises(WorkbenchError, match=r"SLICE \(node 0\): axis 0: begin 9"):
        it.invoke()


def test_gather_with_run_time_indices_matches_litert():
    b = ModelBuilder()
    p = b.input("p", (5, 3))
    i = b.input("i", (4,), np.int32)
    y = b.tensor("y", (4, 3))
    b.op(B.GATHER, [p, i], [y], GatherOptions(axis=0, batch_dims=0))
    b.output(y)
    pv = np.arange(15, dtype=np.float32).reshape(5, 3)
    _compare(b.build(), [("invoke", [pv, np.array(ix, np.int32)]) for ix in ((0, 1, 2, 3), (4, 4, 0, 2))])
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    it.set_tensor(0, pv)
    it.set_tensor(1, np.array([0, 5, 1, 1], np.int32))
    with pytest.raises(WorkbenchError, match=r"GATHER \(node 0\): gather index 5 is out of bounds"):
        it.invoke()


# ----------------------------------------------------------------------------------------------
# regressions: what the interpreter fuzzer (tests/interpreter/test_interpreter_fuzz.py) found.  Each case is a
# small edit of one of its base models; before the fix each raised the error named in its id.

from helpers.interpreter_fuzz_cases import _replace_op, _replace_tensor, base_model  # noqa: E402
from workbench.errors import TensorError, UnsupportedOpError  # noqa: E402
from workbench.schema import ReducerOptions, ReshapeOptions  # noqa: E402


def _codes(model, index, op):
    codes = list(model.operator_codes)
    codes[index] = replace(codes[index], builtin_code=op, deprecated_builtin_code=min(int(op), 127))
    return replace(model, operator_codes=tuple(codes))


def _run(model, feed=None):
    it = Interpreter(model=model)
    it.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        it.set_tensor(d["index"], rng.uniform(-1, 1, tuple(d["shape"])).astype(d["dtype"]))
    it.invoke()
    return it


def _set_constant(model, t, values):
    sg = model.subgraphs[0]
    b = sg.tensors[t].buffer
    bufs = list(model.buffers)
    bufs[b] = replace(bufs[b], data=np.asarray(values, np.int32).tobytes())
    return replace(model, buffers=tuple(bufs))


def _conv():
    return base_model("conv")


def _shapes():
    return base_model("shapes")


REGRESSIONS = [
    # (id: the error before, model, expected error, message pattern)
    ("IndexError-opcode-index", lambda: _replace_op(_conv(), 0, 2, opcode_index=99), ModelError,
     r"operator 2 of subgraph 0 has opcode_index 99"),
    ("IndexError-input-index", lambda: _replace_op(_conv(), 0, 3, inputs=(1000,)), ModelError,
     r"operator 3 of subgraph 0: input 0 is tensor 1000, which does not exist"),
    ("AttributeError-input-minus-7", lambda: _replace_op(_conv(), 0, 5, inputs=(-7, 11, -1)), ModelError,
     r"input 0 is tensor -7"),
    ("IndexError-no-outputs", lambda: _replace_op(_conv(), 0, 2, outputs=()), ModelError,
     r"MAX_POOL_2D \(node 2 of subgraph 0\): outputs has 0 \(it needs at least 1\)"),
    ("IndexError-too-few-inputs", lambda: _replace_op(_shapes(), 0, 7, inputs=(11,)), ModelError,
     r"ADD \(node 7 of subgraph 0\): inputs has 1 \(it needs at least 2\)"),
    ("KeyError-options-of-another-op", lambda: _codes(_conv(), 4, B.SOFTMAX), None, None),   # runs: zero-filled
    ("read-only-output-is-a-constant", lambda: _replace_op(_conv(), 0, 0, outputs=(5,)), ModelError,
     r"output 0 is tensor 5 \('db'\), a constant"),
    ("wrong-shape-written-twice", lambda: _replace_op(_shapes(), 0, 1, outputs=(2,)), ModelError,
     r"operator 1 of subgraph 0: output 0 is tensor 2 \('c'\), which operator 0 writes already"),
    ("TypeError-output-is-a-graph-input", lambda: _replace_op(_shapes(), 0, 0, outputs=(1,)), ModelError,
     r"output 0 is tensor 1 \('k'\), an input of the subgraph"),
    ("broadcast-read-before-written", lambda: _replace_op(_shapes(), 0, 5, inputs=(1, 17)), ModelError,
     r"operator 5 of subgraph 0: input 1 is tensor 17 \('y'\), which operator 7 writes later"),
    ("ValueError-pool-filter-0", lambda: _replace_op(_conv(), 0, 2, builtin_options=replace(
        _conv().subgraphs[0].operators[2].builtin_options, filter_height=0)), WorkbenchError,
     r"MAX_POOL_2D \(node 2\): filter 0x2 must be positive"),
    ("ValueError-strided-slice-stride-0", lambda: _set_constant(_shapes(), 6, [2, 0, 2]),
     UnsupportedOpError, r"STRIDED_SLICE \(node 1\): strides \[2, 0, 2\] contain a 0"),
    ("last-tensor-for-absent-input", lambda: _replace_op(_shapes(), 0, 0, inputs=(-1, 0)), ModelError,
     r"-1 marks an absent \(optional\) input slot"),
    ("matmul-absent-weights", lambda: _replace_op(_conv(), 0, 5, inputs=(9, -1, -1)), ModelError,
     r"absent \(optional\) input slot"),
    ("broadcast-conv-bias-is-the-filter", lambda: _replace_op(_conv(), 0, 0, inputs=(0, 1, 1)), UnsupportedOpError,
     r"CONV_2D \(node 0\): bias 'w' has shape \[3, 3, 3, 2\]; it must be \[3\]"),
    ("numba-TypingError-depthwise-bias", lambda: _replace_op(_conv(), 0, 1, inputs=(3, 4, 3)), UnsupportedOpError,
     r"DEPTHWISE_CONV_2D \(node 1\): bias 'y'"),
    ("broadcast-fc-bias", lambda: _replace_op(_conv(), 0, 5, inputs=(9, 11, 2)), UnsupportedOpError,
     r"FULLY_CONNECTED \(node 5\): bias 'bias' has shape \[3\]; it must be \[4\]"),
    ("ZeroDivisionError-conv-0-channels", lambda: _replace_tensor(_conv(), 0, 0, shape=(1, 6, 6, 0)), WorkbenchError,
     r"CONV_2D node 0: input channels 0"),
    ("ValueError-negative-dimension", lambda: _replace_tensor(_conv(), 0, 0, shape=(1, -6, -6, 2)), ModelError,
     r"shape \[1, -6, -6, 2\] has a negative dimension"),
    ("ValueError-shape-product-wraps", lambda: _replace_tensor(_conv(), 0, 3, shape=(65536,) * 4), ModelError,
     r"more than any array can"),
    ("MemoryError-huge-tensor", lambda: _replace_tensor(_conv(), 0, 0, shape=(1, 65536, 65536, 2)), TensorError,
     r"would need \d+ bytes, more than this interpreter allows for one tensor"),
    ("IndexError-concat-scalars", lambda: _replace_tensor(_shapes(), 0, 0, shape=()), UnsupportedOpError,
     r"CONCATENATION \(node 0\): scalar inputs"),
    ("ValueError-unknown-opcode", lambda: replace(_conv(), operator_codes=(replace(
        _conv().operator_codes[0], builtin_code=1048576, deprecated_builtin_code=127),) + _conv().operator_codes[1:]),
     UnsupportedOpError, r"builtin operator code 1048576"),
]


@pytest.mark.parametrize("make, error, pattern", [r[1:] for r in REGRESSIONS], ids=[r[0] for r in REGRESSIONS])
def test_fuzzer_regression(make, error, pattern):
    model = make()
    if error is None:
        _run(model)
        return
    with pytest.raises(error, match=pattern):
        _run(model)


def test_options_of_another_op_are_zero_filled_like_tflite():
    """SOFTMAX given RESHAPE's options table: TFLite's builtin_options_as_SoftmaxOptions() is null and its
    parser zero-fills (beta = 0), so the output is uniform; it raised KeyError: 'beta'."""
    model = _codes(_replace_op(_conv(), 0, 6, builtin_options=ReshapeOptions(new_shape=(1, 4))), 6, B.SOFTMAX)
    it = _run(model)
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), np.full((1, 4), 0.25))
    assert it.nodes[6].params["beta"] == 0.0


def test_unknown_tensor_type_is_named():
    """A type number this schema does not know (read from a file) has no ``.name``: AttributeError."""
    model = _replace_tensor(_conv(), 0, 0, type=99)
    with pytest.raises(UnsupportedOpError, match=r"type 99"):
        _run(model)


def test_a_subgraph_input_that_is_a_constant_is_a_model_error():
    """The cond subgraph's input given a buffer: copying the loop variables into it hit a read-only
    array (ValueError)."""
    model = while_static_model()
    cond = model.subgraphs[1]
    t = cond.inputs[3]
    buf = len(model.buffers)
    from workbench.schema import Buffer
    model = replace(model, buffers=tuple(model.buffers) + (Buffer(data=np.zeros(4, np.float32).tobytes()),))
    model = _replace_tensor(model, 1, t, buffer=buf)
    it = Interpreter(model=model)
    it.allocate_tensors()
    it.set_tensor(0, np.array(2, np.int32))
    with pytest.raises(ModelError, match=r"subgraph 1 input 3 \('c_acc'\) is a constant"):
        it.invoke()


def test_while_cond_returning_no_value_is_a_clear_error():
    """cond's output of shape [0]: ``reshape(-1)[0]`` raised IndexError."""
    model = while_static_model()
    assert model.subgraphs[0].tensors[0].name == "n"
    model = _replace_tensor(model, 0, 0, shape=(0,))          # LESS(i, n) is then empty
    with pytest.raises(UnsupportedOpError, match=r"WHILE \(node 0\): cond subgraph 1 returns shape \[0\]"):
        Interpreter(model=model).allocate_tensors()


def test_huge_range_is_a_clear_error():
    """RANGE(0, 2**31 - 1, 1) from constants: 8 GiB, a MemoryError while folding."""
    b = ModelBuilder()
    x = b.input("x", (1,), np.int32)
    r = b.tensor("r", (1,), np.int32)
    b.op(B.RANGE, [scalar(b, "s", 0, np.int32), scalar(b, "l", 2**31 - 1, np.int32), scalar(b, "d", 1, np.int32)],
         [r], RangeOptions())
    y = b.tensor("y", (1,), np.int32)
    b.op(B.ADD, [r, x], [y], AddOptions())
    b.output(y)
    with pytest.raises(TensorError, match=r"tensor 'r' of shape \[2147483647\] would need 8589934588 bytes"):
        Interpreter(model=b.build()).allocate_tensors()


def test_resource_handle_absent_is_a_model_error():
    """READ_VARIABLE / ASSIGN_VARIABLE whose handle slot is -1: int(None) raised TypeError."""
    from pathlib import Path

    from workbench import load
    model = load((Path(__file__).resolve().parents[2] / "sample_models" / "resource_variable.tflite").read_bytes())
    ops = model.subgraphs[0].operators
    k = next(i for i, op in enumerate(ops) if model.operator_codes[op.opcode_index].builtin_code == B.READ_VARIABLE)
    with pytest.raises(ModelError, match=r"absent \(optional\) input slot"):
        _run(_replace_op(model, 0, k, inputs=(-1,)))



def test_zeros_like_of_a_graph_input():
    """ZEROS_LIKE needs only its input's shape, so it is folded in allocate_tensors; folding read
    the input's array, which a graph input does not have yet (AttributeError on None)."""
    b = ModelBuilder()
    x = b.input("x", (2, 3))
    z = b.tensor("z", (2, 3))
    b.op(B.ZEROS_LIKE, [x], [z])
    y = b.tensor("y", (2, 3))
    b.op(B.ADD, [z, x], [y], AddOptions())
    b.output(y)
    it = _run(b.build())
    x_value = it.get_tensor(0)
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), x_value)


def test_reducing_a_scalar_over_axis_0_returns_it():
    """REDUCE_PROD of a 0-d input with axes [0]: numpy's AxisError escaped."""
    b = ModelBuilder()
    x = b.input("x", (), np.float32)
    y = b.tensor("y", ())
    b.op(B.REDUCE_PROD, [x, b.constant("ax", np.array([0], np.int32))], [y], ReducerOptions(keep_dims=False))
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    it.set_tensor(0, np.array(2.5, np.float32))
    it.invoke()
    assert float(it.get_tensor(it.get_output_details()[0]["index"])) == 2.5


def test_mean_with_float_axes_is_refused():
    """MEAN whose axes tensor is float32 (NaN values): int(NaN) raised ValueError."""
    b = ModelBuilder()
    x = b.input("x", (2, 3))
    y = b.tensor("y", (2,))
    b.op(B.MEAN, [x, b.constant("ax", np.array([np.nan], np.float32))], [y], ReducerOptions(keep_dims=False))
    b.output(y)
    with pytest.raises(UnsupportedOpError, match=r"MEAN \(node 0\): the axes must be integers, got float32"):
        _run(b.build())


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 0.0, -1.0])
def test_bad_quantization_scale_is_a_model_error(scale):
    """An int8 tensor with scale NaN: int(NaN) in the multiplier arithmetic raised ValueError."""
    b = ModelBuilder()
    q = ModelBuilder.quant([scale], [0])
    x = b.input("x", (4,), np.int8, quantization=ModelBuilder.quant([0.5], [0]))
    y = b.tensor("y", (4,), np.int8, quantization=q)
    b.op(B.LOGISTIC, [x], [y])
    b.output(y)
    with pytest.raises(ModelError, match=r"tensor 'y' has (a )?quantization scale"):
        Interpreter(model=b.build()).allocate_tensors()


def test_details_of_a_zero_point_past_int32():
    """get_input_details put an int64 zero point of -4293918720 into an int32 array: OverflowError."""
    from workbench.schema import QuantizationParameters
    model = _replace_tensor(_conv(), 0, 0, quantization=QuantizationParameters(scale=(0.5,), zero_point=(-4293918720,)))
    d = Interpreter(model=model).get_input_details()[0]
    assert d["quantization"] == (0.5, -4293918720)
    assert d["quantization_parameters"]["zero_points"].tolist() == [-4293918720]


def test_per_channel_filter_with_no_scales_is_a_model_error():
    """An int8 CONV_2D filter whose scale vector was emptied: quant raised a bare ValueError."""
    from pathlib import Path

    from workbench import load
    from workbench.schema import QuantizationParameters
    model = load((Path(__file__).resolve().parents[2] / "sample_models" / "int8_cnn.tflite").read_bytes())
    sg = model.subgraphs[0]
    k = next(i for i, op in enumerate(sg.operators) if model.operator_codes[op.opcode_index].builtin_code == B.CONV_2D)
    f = sg.operators[k].inputs[1]
    q = sg.tensors[f].quantization
    model = _replace_tensor(model, 0, f, quantization=QuantizationParameters(
        scale=(), zero_point=q.zero_point, quantized_dimension=q.quantized_dimension))
    with pytest.raises(ModelError, match=r"0 filter scales for \d+ output channels"):
        Interpreter(model=model).allocate_tensors()


@pytest.mark.parametrize("op", [B.RESIZE_BILINEAR, B.RESIZE_NEAREST_NEIGHBOR])
def test_resize_of_an_empty_input_is_refused(op):
    """RESIZE of a [1, 2, 0, 1] input to [3, 3]: indexing the empty axis raised IndexError."""
    b = ModelBuilder()
    x = b.input("x", (1, 2, 0, 1))
    y = b.tensor("y", (1, 3, 3, 1))
    b.op(op, [x, b.constant("size", np.array([3, 3], np.int32))], [y])
    b.output(y)
    with pytest.raises(UnsupportedOpError, match=rf"{op.name} \(node 0\): the input \[1, 2, 0, 1\] is empty"):
        _run(b.build())

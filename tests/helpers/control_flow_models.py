"""Control-flow models (IF, WHILE) and comparison helpers of
tests/interpreter/test_interpreter_control_flow.py, shared with the dynamic-shape, robustness, fuzz, API and
delegate tests."""

from __future__ import annotations

import numpy as np

from workbench.schema import AddOptions, ConcatenationOptions, IfOptions, ModelBuilder, MulOptions, WhileOptions
from workbench.schema import BuiltinOperator as B


def add_subgraph(b: ModelBuilder, name: str, build) -> int:
    """Build another subgraph with the same builder (shared buffers and operator codes)."""
    saved = (b.tensors, b.operators, b.inputs, b.outputs)
    b.tensors, b.operators, b.inputs, b.outputs = [], [], [], []
    build(b)
    b.subgraphs.append(b.subgraph(name))
    b.tensors, b.operators, b.inputs, b.outputs = saved
    return len(b.subgraphs)          # subgraph 0 is the main one


def scalar(b: ModelBuilder, name: str, value, dtype) -> int:
    """A 0-d constant (ModelBuilder.constant makes 0-d arrays 1-d, via np.ascontiguousarray)."""
    return b.tensor(name, (), dtype, buffer=b.add_buffer(np.asarray(value, dtype).tobytes()))


def assert_same(ours, theirs, rtol=1e-5, atol=1e-6):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None
            continue
        if isinstance(b, dict):
            assert set(a) == set(b)
            a, b = [a[k] for k in sorted(b)], [b[k] for k in sorted(b)]
        for x, y in zip(a, b):
            assert np.shape(x) == np.shape(y) and np.asarray(x).dtype == np.asarray(y).dtype
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def while_growing_model():
    """while i < n: i += 1; x = concat(x, 0.5 * x) — the loop variable x doubles its rows."""
    b = ModelBuilder()

    def cond(b):
        i = b.input("c_i", (), np.int32)
        n = b.input("c_n", (), np.int32)
        x = b.input("c_x", (1, 3), shape_signature=(-1, 3))
        lt = b.tensor("c_less", (), np.bool_)
        b.op(B.LESS, [i, n], [lt])
        b.output(lt)
        del x

    def body(b):
        i = b.input("b_i", (), np.int32)
        n = b.input("b_n", (), np.int32)
        x = b.input("b_x", (1, 3), shape_signature=(-1, 3))
        one = scalar(b, "b_one", 1, np.int32)
        half = scalar(b, "b_half", 0.5, np.float32)
        i1 = b.tensor("b_i1", (), np.int32)
        hx = b.tensor("b_hx", (1, 3), shape_signature=(-1, 3))
        y = b.tensor("b_y", (2, 3), shape_signature=(-1, 3))
        b.op(B.ADD, [i, one], [i1], AddOptions())
        b.op(B.MUL, [x, half], [hx], MulOptions())
        b.op(B.CONCATENATION, [x, hx], [y], ConcatenationOptions(axis=0))
        b.output(i1, n, y)

    c_idx = add_subgraph(b, "cond", cond)
    b_idx = add_subgraph(b, "body", body)
    n = b.input("n", (), np.int32)
    x = b.input("x", (1, 3))
    i0 = scalar(b, "i0", 0, np.int32)
    outs = [b.tensor("i_out", (), np.int32), b.tensor("n_out", (), np.int32),
            b.tensor("y", (1, 3), shape_signature=(-1, 3))]
    b.op(B.WHILE, [i0, n, x], outs, WhileOptions(cond_subgraph_index=c_idx, body_subgraph_index=b_idx))
    b.output(outs[2], outs[0])
    return b.build()


def while_static_model():
    """while i < n: i += 1; acc = acc * 0.5 + x  (shapes never change: outputs planned statically)."""
    b = ModelBuilder()

    def cond(b):
        i = b.input("c_i", (), np.int32)
        n = b.input("c_n", (), np.int32)
        b.input("c_x", (2, 2))
        b.input("c_acc", (2, 2))
        lt = b.tensor("c_less", (), np.bool_)
        b.op(B.LESS, [i, n], [lt])
        b.output(lt)

    def body(b):
        i = b.input("b_i", (), np.int32)
        n = b.input("b_n", (), np.int32)
        x = b.input("b_x", (2, 2))
        acc = b.input("b_acc", (2, 2))
        one = scalar(b, "b_one", 1, np.int32)
        half = scalar(b, "b_half", 0.5, np.float32)
        i1 = b.tensor("b_i1", (), np.int32)
        h = b.tensor("b_h", (2, 2))
        acc1 = b.tensor("b_acc1", (2, 2))
        b.op(B.ADD, [i, one], [i1], AddOptions())
        b.op(B.MUL, [acc, half], [h], MulOptions())
        b.op(B.ADD, [h, x], [acc1], AddOptions())
        b.output(i1, n, x, acc1)

    c_idx = add_subgraph(b, "cond", cond)
    b_idx = add_subgraph(b, "body", body)
    n = b.input("n", (), np.int32)
    x = b.input("x", (2, 2))
    i0 = scalar(b, "i0", 0, np.int32)
    acc0 = b.constant("acc0", np.zeros((2, 2), np.float32))
    outs = [b.tensor("i_out", (), np.int32), b.tensor("n_out", (), np.int32), b.tensor("x_out", (2, 2)),
            b.tensor("acc", (2, 2))]
    b.op(B.WHILE, [i0, n, x, acc0], outs, WhileOptions(cond_subgraph_index=c_idx, body_subgraph_index=b_idx))
    b.output(outs[3])
    return b.build()


def if_model(same_shapes: bool = True):
    """y = c ? x * 3 : x + 1   (or, with same_shapes=False, the else branch returns concat(x, x))."""
    b = ModelBuilder()

    def then(b):
        x = b.input("t_x", (2, 3))
        k = scalar(b, "t_three", 3.0, np.float32)
        y = b.tensor("t_y", (2, 3))
        b.op(B.MUL, [x, k], [y], MulOptions())
        b.output(y)

    def other(b):
        x = b.input("e_x", (2, 3))
        if same_shapes:
            k = scalar(b, "e_one", 1.0, np.float32)
            y = b.tensor("e_y", (2, 3))
            b.op(B.ADD, [x, k], [y], AddOptions())
        else:
            y = b.tensor("e_y", (4, 3), shape_signature=(-1, 3))
            b.op(B.CONCATENATION, [x, x], [y], ConcatenationOptions(axis=0))
        b.output(y)

    t_idx = add_subgraph(b, "then", then)
    e_idx = add_subgraph(b, "else", other)
    c = b.input("c", (), np.bool_)
    x = b.input("x", (2, 3))
    y = b.tensor("y", (2, 3), shape_signature=(-1, 3))
    b.op(B.IF, [c, x], [y], IfOptions(then_subgraph_index=t_idx, else_subgraph_index=e_idx))
    z = b.tensor("z", (2, 3), shape_signature=(-1, 3))
    b.op(B.ADD, [y, y], [z], AddOptions())        # reads the IF output: prepared in invoke when dynamic
    b.output(z)
    return b.build()

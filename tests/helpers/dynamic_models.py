"""Dynamic-shape models of tests/interpreter/test_interpreter_dynamic.py, shared with the interpreter
fuzzer (tests/interpreter/test_interpreter_fuzz.py)."""

from __future__ import annotations

import numpy as np

from helpers.control_flow_models import scalar
from workbench.schema import AddOptions, ModelBuilder, MulOptions, ReshapeOptions, ShapeOptions, StridedSliceOptions
from workbench.schema import BuiltinOperator as B


def reshape_runtime_model():
    """y = reshape(x, s) * 2 with the shape s a graph input: known only when invoked."""
    b = ModelBuilder()
    x = b.input("x", (2, 6))
    s = b.input("s", (2,), np.int32)
    r = b.tensor("r", (3, 4), shape_signature=(-1, -1))
    b.op(B.RESHAPE, [x, s], [r], ReshapeOptions(new_shape=()))
    two = scalar(b, "two", 2.0, np.float32)
    y = b.tensor("y", (3, 4), shape_signature=(-1, -1))
    b.op(B.MUL, [r, two], [y], MulOptions())
    b.output(y)
    return b.build()


def range_fill_model():
    """r = range(0, n, 1); f = fill(shape(r), 2.5) + x[:n] via a strided slice with run-time end."""
    b = ModelBuilder()
    n = b.input("n", (), np.int32)
    x = b.input("x", (10,))
    zero = scalar(b, "zero", 0, np.int32)
    one = scalar(b, "one", 1, np.int32)
    r = b.tensor("r", (0,), np.int32, shape_signature=(-1,))
    b.op(B.RANGE, [zero, n, one], [r])
    s = b.tensor("s", (1,), np.int32)
    b.op(B.SHAPE, [r], [s], ShapeOptions(out_type=2))
    v = scalar(b, "v", 2.5, np.float32)
    f = b.tensor("f", (0,), shape_signature=(-1,))
    b.op(B.FILL, [s, v], [f])
    begin = b.constant("begin", np.array([0], np.int32))
    strides = b.constant("strides", np.array([1], np.int32))
    xs = b.tensor("xs", (0,), shape_signature=(-1,))
    b.op(B.STRIDED_SLICE, [x, begin, s, strides], [xs], StridedSliceOptions())
    out = b.tensor("out", (0,), shape_signature=(-1,))
    b.op(B.ADD, [f, xs], [out], AddOptions())
    b.output(r, out)
    return b.build()

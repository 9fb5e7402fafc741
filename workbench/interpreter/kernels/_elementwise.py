"""What the math ops added in bulk share (SQRT, EXP, ..., EQUAL, POW, ...).

* :class:`MathUnaryKernel`: one input, same shape out; ``fn(x) -> array``; output dtype the input's
  unless ``out_dtype`` is set.
* :class:`MathBinaryKernel`: two inputs of the same dtype, numpy broadcasting (TFLite's
  ``BroadcastBinaryFunction4DSlow`` generalised to any rank); ``fn(a, b) -> array``; output dtype the
  input's, or ``bool`` for comparisons (``out_dtype``).

Both check dtypes in prepare and hold no other state.  Failures at run time (an integer division
by zero, a negative integer exponent) raise :class:`~workbench.errors.KernelError` naming the node.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from ._common import F32


def fail(node, message: str):
    raise KernelError(f"{node.op_name} (node {node.index}): {message}")


def refuse(node, message: str):
    raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): {message}")


@opdata
class ElementwiseData(OpData):
    output_shape: tuple
    dtype: str
    broadcast: bool = False


class MathUnaryKernel(Kernel):
    dtypes = (F32,)
    out_dtype = None

    @staticmethod
    def fn(x):
        raise NotImplementedError

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, self.dtypes)
        out = np.dtype(self.out_dtype) if self.out_dtype is not None else dt
        context.set_output(node.outputs[0], context.shape(x), out)
        return ElementwiseData(context.shape(x), str(dt))

    def invoke(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = self.fn(t[node.inputs[0]])


def broadcast_shape(node, context, *ts) -> tuple:
    shapes = [context.shape(t) for t in ts]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        refuse(node, "shapes " + ", ".join(str(list(s)) for s in shapes) + " do not broadcast")


class MathBinaryKernel(Kernel):
    dtypes = (F32,)
    out_dtype = None

    @staticmethod
    def fn(a, b):
        raise NotImplementedError

    def check(self, context, node, a, b):
        """Run-time checks on the values (integer division by zero, ...)."""

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        dt = context.expect_dtype(node, a, self.dtypes, "input 0")
        if context.dtype(b) != dt:
            refuse(node, f"inputs have types {dt} and {context.dtype(b)}; TFLite needs them equal")
        out = broadcast_shape(node, context, a, b)
        odt = np.dtype(self.out_dtype) if self.out_dtype is not None else dt
        context.set_output(node.outputs[0], out, odt)
        return ElementwiseData(out, str(dt), context.shape(a) != context.shape(b))

    def invoke(self, context, node, d):
        t = context.tensors
        a, b = t[node.inputs[0]], t[node.inputs[1]]
        self.check(context, node, a, b)
        t[node.outputs[0]][...] = self.fn(a, b)


def const_ints(context, node, slot: int, what: str) -> list[int]:
    """A constant integer input as a flat list of Python ints."""
    v = context.require_value(node, slot, what)
    if np.asarray(v).dtype.kind not in "iu":
        refuse(node, f"{what} (input {slot}) must be an integer tensor, got {np.asarray(v).dtype}")
    return [int(i) for i in np.asarray(v).reshape(-1)]


def reduced_shape(shape: tuple, axes: tuple, keep: bool) -> tuple:
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def norm_axes(node, axes, rank: int) -> tuple:
    out = set()
    for a in axes:
        if not -rank <= a < max(rank, 1):
            fail(node, f"axis {a} is out of range for an input of rank {rank}")
        out.add(a + rank if a < 0 else a)
    return tuple(sorted(out))

"""RESHAPE and SQUEEZE: the same values under a new shape, as one call of the kernel library.

The teaching layer's ``invoke`` (``kernels/reshape.py``, ``kernels/squeeze.py``) copies the input's flat
values into the output.  Here that copy is the library's ``copy`` (a ``memmove`` of the bytes), so the
node can join a run of library calls (:mod:`workbench.interpreter.fused`): a classifier's last nodes —
the logits' RESHAPE, then the SOFTMAX — no longer return to Python after the network's last layer.  Run
on their own after a network's run, each such node took 30-60 µs instead of ~1 µs: Python's own code and
objects had left the caches while the layers streamed megabytes through them.
"""

from __future__ import annotations

import numpy as np

from ...perf import precompiled
from ...schema.enums import BuiltinOperator
from ..kernels.reshape import ReshapeData
from ..kernels.squeeze import SqueezeData
from ..variants import VARIANTS
from . import FastPath, fast_path


def copy_function():
    """The library's ``copy``, or None (no library, or one built before it)."""
    probe = np.zeros(2, np.float32)
    return precompiled.native("copy", lambda fn: fn(probe, probe.copy()) == 0)


class FlatCopy(FastPath):
    """The input's bytes into the output through the library's ``copy`` where both are C-contiguous
    arrays of one type (not STRING: object arrays hold references); else numpy's copy of the flat values,
    as the teaching layer does it."""

    __slots__ = ("fn",)
    name = "copy"

    def __init__(self, fn):
        self.fn = fn

    def native_call(self, context, node):
        x, out = context.tensors[node.inputs[0]], context.tensors[node.outputs[0]]
        if x.dtype != out.dtype or x.dtype.hasobject or not (x.flags.c_contiguous and out.flags.c_contiguous):
            return None
        return self.fn, (x, out)

    def __call__(self, context, node, data) -> None:
        call = self.native_call(context, node)
        if call is None or call[0](*call[1]) != 0:
            context.tensors[node.outputs[0]].reshape(-1)[...] = context.tensors[node.inputs[0]].reshape(-1)


@fast_path(BuiltinOperator.RESHAPE, ReshapeData, variants=tuple(VARIANTS))
@fast_path(BuiltinOperator.SQUEEZE, SqueezeData, variants=tuple(VARIANTS))
def bind_copy(context, node, d):
    fn = copy_function()
    return None if fn is None else FlatCopy(fn)

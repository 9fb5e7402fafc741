"""Speed layer for QUANTIZE between integer types: a table of the result of every input value.

An int8 / uint8 / int16 input has at most 65536 values, so bind requantizes each once with the
teaching layer's :func:`~workbench.interpreter.kernels.quantize.requantize` (ties away) and, when the
OpData asks for NEON blocks (``block``, ``Variant.requantize_block``), once more with the blocks'
rounding (ties up); invoke looks every output up — the blocks from the second table, the tail from the
first.  Float inputs (and int32) keep the teaching layer's numpy arithmetic.  Serves both variants.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..kernels.quantize import QuantizeData, _split, requantize
from ..variants import VARIANTS
from . import FastPath, fast_path


def _patterns(x: np.ndarray) -> np.ndarray:
    """``x`` read as unsigned integers of its width: the index into a table of every value."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16)


def _every_value(dtype) -> np.ndarray:
    """Every value of an 8- or 16-bit integer type, at the index of its unsigned bit pattern."""
    dtype = np.dtype(dtype)
    return np.arange(1 << (8 * dtype.itemsize)).astype(np.uint8 if dtype.itemsize == 1 else np.uint16).view(dtype)


class RequantizeTable(FastPath):
    __slots__ = ("table", "block_table", "block")
    name = "table"

    def __init__(self, table, block_table, block: int):
        self.table, self.block_table, self.block = table, block_table, block

    def __call__(self, context, node, d) -> None:
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        np.take(self.table, _patterns(x), out=out)
        if self.block_table is not None:
            flat_in, flat_out = x.reshape(-1), out.reshape(-1)
            n_vec = flat_in.size // self.block * self.block
            np.take(self.block_table, _patterns(flat_in[:n_vec]), out=flat_out[:n_vec])


@fast_path(BuiltinOperator.QUANTIZE, QuantizeData, variants=tuple(VARIANTS))
def bind_quantize(context, node, d):
    src, _ = _split(d.mode)
    if src.kind not in "iu" or src.itemsize > 2:
        return None
    every = _every_value(src)
    blocks = requantize(every, d, half_up=True) if d.block else None
    return RequantizeTable(requantize(every, d), blocks, d.block)

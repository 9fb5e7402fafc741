"""Speed layer for ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE and the six comparisons: tables of every input.

* 8-bit quantized ADD / SUB / MUL / DIV / SQUARED_DIFFERENCE ("table"): a 256×256 table of the result
  of every (a, b) pair, filled once at bind time by the teaching layer's own function on the prepared
  OpData, then one lookup per output.  Where the OpData marks outputs that a vector loop writes
  (``vector_mask``: litert's NEON ADD / MUL under ``Variant.neon_narrowing``, SUB's vectorised loop) a
  second table holds that loop's results — kept only when it differs from the first somewhere
  (the policy: ``quant.elementwise.vector_loop_mask``).
* int16 ADD whose first outputs take litert's vector loop ("numpy"): each part computed once (the
  teaching layer computes both everywhere and picks).
* comparisons of rescaled int8 / uint8 / int16 ("lut"): the rescaled value of every input value, looked
  up, then the teaching layer's comparison.
* float32 ADD / SUB / MUL of two inputs of one shape ("rows"): :func:`float_binary_rows`, the IEEE
  operation and the activation clamp in one pass, rows shared among ``num_threads`` threads (the
  teaching layer makes two passes, the operation then ``np.clip``, on one thread); with the kernel
  library, its C loop on sixteen values a vector ("native", :mod:`workbench.perf.elementwise`), which
  a run of library calls can include (:mod:`..fused`).

Every table comes from the teaching layer's functions on an OpData that prepare built under the
node's variant, so each fast path serves both variants.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...perf import elementwise as _ew
from ...perf.jit import njit, run_rows
from ...schema.enums import BuiltinOperator as B
from ..kernels import equal, greater, greater_equal, less, less_equal, not_equal
from ..kernels._binary import BinaryData, BinaryInt8Data, BinaryQuantizedData, add_sub_general, vector_loop_values
from ..kernels._compare import ComparisonData, scaled_array
from ..kernels.add import add_quantized
from ..kernels.div import DivQuantizedData, check_divisor, div_quantized
from ..kernels.mul import mul_quantized
from ..kernels.squared_difference import SquaredDifferenceInt8Data, squared_difference_int8
from ..kernels.sub import sub_quantized
from ..variants import VARIANTS
from . import FastPath, FlatCall, fast_path

ALL = tuple(VARIANTS)


def pair_table(dtype, fn) -> np.ndarray:
    """``fn(a, b)`` for every pair of values of an 8-bit type, at index (pattern(a) << 8) | pattern(b),
    the patterns being the values' unsigned bytes."""
    v = np.arange(256).astype(np.uint8).view(np.dtype(dtype))
    return np.asarray(fn(np.repeat(v, 256), np.tile(v, 256)))


def pair_lookup(a: np.ndarray, b: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """``out`` = the :func:`pair_table` entries of (a, b), two arrays of one shape and 8-bit type."""
    ia = np.ascontiguousarray(a).view(np.uint8).astype(np.intp) << 8
    ib = np.ascontiguousarray(b).view(np.uint8).astype(np.intp)
    np.take(table, ia + ib, out=out)


class PairTable(FastPath):
    """out[i] = table[a[i], b[i]] (broadcast first); where ``vector_mask``, from ``vector_table``."""

    __slots__ = ("table", "vector_table", "vector_mask")
    name = "table"

    def __init__(self, table, vector_table=None, vector_mask=None):
        self.table, self.vector_table, self.vector_mask = table, vector_table, vector_mask

    def __call__(self, context, node, d) -> None:
        t = context.tensors
        out = t[node.outputs[0]]
        aa, bb = np.broadcast_arrays(t[node.inputs[0]], t[node.inputs[1]])
        pair_lookup(aa, bb, self.table, out)
        if self.vector_table is not None:
            vec = np.empty_like(out)
            pair_lookup(aa, bb, self.vector_table, vec)
            np.copyto(out, vec, where=self.vector_mask)


class DivPairTable(PairTable):
    """DIV's table (the row of the zero divisor is never read: the divisor is checked first)."""

    __slots__ = ()

    def __call__(self, context, node, d) -> None:
        check_divisor(node, context.tensors[node.inputs[1]], -d.input2_offset)
        super().__call__(context, node, d)


class Int16AddVectorPrefix(FastPath):
    """int16 ADD without broadcast: litert's vector loop on the first ``n`` outputs, the reference on
    the rest, each computed once."""

    __slots__ = ("n",)
    name = "numpy"

    def __init__(self, n: int):
        self.n = n

    def __call__(self, context, node, d) -> None:
        t = context.tensors
        x, y = (np.asarray(v).reshape(-1) for v in np.broadcast_arrays(t[node.inputs[0]], t[node.inputs[1]]))
        out = t[node.outputs[0]].reshape(-1)
        n = self.n
        out[:n] = vector_loop_values("add", x[:n], y[:n], d)
        out[n:] = add_sub_general(x[n:], y[n:], d, 1)


def _bind_arithmetic(kind: str, fn, d):
    if d.dtype not in ("int8", "uint8"):
        if kind == "add" and d.vector_mask is not None:
            return Int16AddVectorPrefix(int(np.count_nonzero(d.vector_mask)))
        return None                              # int16: the teaching layer's numpy arithmetic
    exact = dataclasses.replace(d, vector_mask=None)
    table = pair_table(d.dtype, lambda x, y: fn(x, y, exact))
    if d.vector_mask is None:
        return PairTable(table)
    vector = pair_table(d.dtype, lambda x, y: vector_loop_values(kind, x, y, d))
    if (vector == table).all():                  # the vector loop changes nothing at these scales
        return PairTable(table)
    return PairTable(table, vector, d.vector_mask)


@njit(nogil=True)
def float_binary_rows(a, b, out, op, lo, hi, r0, r1):
    """Rows r0..r1 of ``out`` = a (op) b, then clamped to [lo, hi] (op 0 add, 1 subtract, 2 multiply),
    as ``reference_ops::Add`` / ``Sub`` / ``Mul`` do with their activation: every output on its own, so
    the threads' pieces give the teaching layer's values.  NaN stays NaN (both comparisons are false),
    as with ``np.clip``."""
    n = out.shape[1]
    for r in range(r0, r1):
        x, y, z = a[r], b[r], out[r]
        for j in range(n):
            if op == 0:
                v = x[j] + y[j]
            elif op == 1:
                v = x[j] - y[j]
            else:
                v = x[j] * y[j]
            if v < lo:
                v = lo
            elif v > hi:
                v = hi
            z[j] = v


class FloatRows(FastPath):
    """float32 ADD / SUB / MUL of two inputs of the output's shape: :func:`float_binary_rows`."""

    __slots__ = ("op", "lo", "hi")
    name = "rows"

    def __init__(self, op: int, d):
        self.op = op
        self.lo, self.hi = np.float32(d.output_activation_min), np.float32(d.output_activation_max)

    def __call__(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        if out.size == 0:
            return
        # rows of the last two axes (an image row of W·C values), not of C alone: a 56x56x24 ADD spent
        # more time starting its 3136 rows of 24 than adding
        c = out.shape[-1] * (out.shape[-2] if out.ndim > 1 else 1)
        out2d = out.reshape(-1, c)
        run_rows(float_binary_rows, out2d.shape[0], context.num_threads, t[node.inputs[0]].reshape(-1, c),
                 t[node.inputs[1]].reshape(-1, c), out2d, self.op, self.lo, self.hi, work=out.size)


class FloatNative(FlatCall):
    """``native``: the kernel library's ``binary_f32`` on the flat arrays (threads, a, b, out, clamp, op);
    ``fallback`` (the node's :class:`FloatRows`) where the call is not taken."""

    __slots__ = ()

    def __init__(self, fn, fallback: FloatRows):
        super().__init__(fn, fallback, (np.array([fallback.lo, fallback.hi], np.float32), fallback.op), 2, True)

    def add_clamp(self):
        """(lo, hi) of an ADD's clamp, None for SUB / MUL: an ADD after a float convolution can be done in
        the convolution's epilogue (:mod:`..fused`)."""
        clamp, op = self.tail
        return (float(clamp[0]), float(clamp[1])) if op == 0 else None


def _bind_float(context, node, d, op: int):
    """:class:`FloatNative` (with the library) or :class:`FloatRows` for two float32 inputs of the
    output's shape (no broadcast) with a last axis."""
    shape = tuple(d.output_shape)
    if (d.broadcast or len(shape) == 0 or shape[-1] == 0 or len(node.inputs) != 2
            or any(tuple(context.shape(node.input(k))) != shape for k in (0, 1))
            or any(context.dtype(node.input(k)) != np.float32 for k in (0, 1))):
        return None
    rows = FloatRows(op, d)
    fn = _ew.binary_function()
    return rows if fn is None else FloatNative(fn, rows)


@fast_path(B.ADD, BinaryQuantizedData, BinaryInt8Data, BinaryData, variants=ALL)
def bind_add(context, node, d):
    if type(d) is BinaryData:
        return _bind_float(context, node, d, 0)
    return _bind_arithmetic("add", add_quantized, d)


@fast_path(B.SUB, BinaryQuantizedData, BinaryInt8Data, BinaryData, variants=ALL)
def bind_sub(context, node, d):
    if type(d) is BinaryData:
        return _bind_float(context, node, d, 1)
    return _bind_arithmetic("sub", sub_quantized, d)


@fast_path(B.MUL, BinaryQuantizedData, BinaryInt8Data, BinaryData, variants=ALL)
def bind_mul(context, node, d):
    if type(d) is BinaryData:
        return _bind_float(context, node, d, 2)
    return _bind_arithmetic("mul", mul_quantized, d)


@fast_path(B.DIV, DivQuantizedData, variants=ALL)
def bind_div(context, node, d):
    if d.dtype not in ("int8", "uint8"):
        return None
    return DivPairTable(pair_table(d.dtype, lambda x, y: div_quantized(x, y, d)))


@fast_path(B.SQUARED_DIFFERENCE, SquaredDifferenceInt8Data, variants=ALL)
def bind_squared_difference(context, node, d):
    return PairTable(pair_table(np.int8, lambda x, y: squared_difference_int8(x, y, d)))


class RescaledLookup(FastPath):
    """A comparison of rescaled integers: each input's rescaled value from a table of every value."""

    __slots__ = ("fn", "lut1", "lut2", "base")
    name = "lut"

    def __init__(self, fn, lut1, lut2, base: int):
        self.fn, self.lut1, self.lut2, self.base = fn, lut1, lut2, base

    def __call__(self, context, node, d) -> None:
        t = context.tensors
        a = self.lut1[t[node.inputs[0]].astype(np.intp) - self.base]
        b = self.lut2[t[node.inputs[1]].astype(np.intp) - self.base]
        t[node.outputs[0]][...] = self.fn(a, b)


def _comparison(op, fn):
    def bind_comparison(context, node, d):
        if not d.rescaled:
            return None                          # the values themselves: numpy compares them directly
        info = np.iinfo(np.dtype(d.dtype))
        every = np.arange(info.min, info.max + 1, dtype=np.int64)
        return RescaledLookup(fn, scaled_array(every, d.input1_offset, d.input1_multiplier, d.input1_shift),
                              scaled_array(every, d.input2_offset, d.input2_multiplier, d.input2_shift), info.min)

    bind_comparison.__qualname__ = f"bind_{op.name.lower()}"
    return fast_path(op, ComparisonData, variants=ALL)(bind_comparison)


for _op, _module in ((B.EQUAL, equal), (B.NOT_EQUAL, not_equal), (B.LESS, less), (B.LESS_EQUAL, less_equal),
                     (B.GREATER, greater), (B.GREATER_EQUAL, greater_equal)):
    _comparison(_op, _module.reference)

"""Speed layer for the reductions: float32 SUM and MEAN in the builtin kernel's order, and the
quantized REDUCE_PROD, as numba loops.

float32 (``litert-x86`` only: ``Variant.float_sum_order`` "eigen-packets"): after the optimized
kernel's normalisation of the shape (``_reduce.normalized``) a reduction over one block of axes is a
[A, R, B] view of the input; each of the A·B outputs adds its R values in memory order starting from
the first (``optimized_ops::ReduceImpl``), and a MEAN over trailing axes ([A, R]) sums each row as
Eigen's 4-lane packets do — the bits of ``_reduce.sequential_sum`` / ``_reduce.eigen_sum``.  Other
shapes (several separate blocks of reduced axes) keep the teaching layer.  With the kernel library the
[A, R, B] sums (and a MEAN's division) are its C loop ("native", ``perf.elementwise.sum_function``), which
a run of library calls can include; Eigen's trailing-axes mean stays in numba.

Quantized MEAN over H and W of a 4-D uint8 / int8 input (``optimized_(integer_)ops::Mean``, the
"optimized 4-D HW" algorithm of ``kernels/mean.py``, e.g. a network's global average pool): one loop
sums each channel over the H·W pixels and requantizes the sum in place — the arithmetic of
``mean_quantized_optimized`` (MultiplyByQuantizedMultiplier of the raw sum, ties up for the channels
in whole blocks of 16, ties away from zero for the rest, then the bias and the clamp).  The reference
algorithm keeps the teaching layer.

REDUCE_PROD: the chain of rescaled products as one loop per output row instead of one numpy step
per reduced value — the integer arithmetic of ``kernels/reduce_prod.py``'s ``prod_quantized`` (the
int64 MultiplyByQuantizedMultiplier of ``fast/requantize.py``); whether a one-value product is
copied is already decided in ``ReduceProdData.copy``, so the loop serves both arithmetic variants.
"""

from __future__ import annotations

import numpy as np

from ...perf import elementwise as _ew
from ...perf.jit import library_call, njit
from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels._reduce import ReduceData, normalized, reduced_rows
from ..kernels.mean import MeanData, MeanQuantizedData
from ..kernels.reduce_prod import ReduceProdData
from ..variants import LITERT_X86, VARIANTS
from . import Call, FastPath, FlatCall, fast_path
from .requantize import mbqm_int64_jit


@njit
def sum_blocks_numba(x3, out2):
    """out2[a, b] = x3[a, 0, b] + x3[a, 1, b] + ... in float32, in that order."""
    for a in range(x3.shape[0]):
        for b in range(x3.shape[2]):
            out2[a, b] = x3[a, 0, b]
        for r in range(1, x3.shape[1]):
            for b in range(x3.shape[2]):
                out2[a, b] += x3[a, r, b]


@njit
def eigen_rows_numba(x2, out):
    """Each row of a C-contiguous [rows, n] summed as Eigen's redux with SSE packets (_reduce.eigen_sum)."""
    rows, n = x2.shape
    for i in range(rows):
        a = min((-(i * n)) % 4, n)
        whole = (n - a) // 4 * 4
        pairs = (n - a) // 8 * 8
        if whole == 0:
            total = x2[i, 0]
            for j in range(1, n):
                total += x2[i, j]
            out[i] = total
            continue
        p0, p1, p2, p3 = x2[i, a], x2[i, a + 1], x2[i, a + 2], x2[i, a + 3]
        if whole > 4:
            q0, q1, q2, q3 = x2[i, a + 4], x2[i, a + 5], x2[i, a + 6], x2[i, a + 7]
            for j in range(a + 8, a + pairs, 8):
                p0 += x2[i, j]
                p1 += x2[i, j + 1]
                p2 += x2[i, j + 2]
                p3 += x2[i, j + 3]
                q0 += x2[i, j + 4]
                q1 += x2[i, j + 5]
                q2 += x2[i, j + 6]
                q3 += x2[i, j + 7]
            p0, p1, p2, p3 = p0 + q0, p1 + q1, p2 + q2, p3 + q3
            if whole > pairs:
                j = a + pairs
                p0, p1, p2, p3 = p0 + x2[i, j], p1 + x2[i, j + 1], p2 + x2[i, j + 2], p3 + x2[i, j + 3]
        total = (p0 + p2) + (p1 + p3)
        for j in range(a):
            total += x2[i, j]
        for j in range(a + whole, n):
            total += x2[i, j]
        out[i] = total


class FloatSum(FastPath):
    """A float32 SUM or MEAN whose reduced axes form one block: its [A, R, B] view and whether it is
    Eigen's trailing-axes mean."""

    __slots__ = ("name", "blocks", "eigen", "count")

    def __init__(self, blocks, eigen, count):
        self.name, self.blocks, self.eigen, self.count = "numba", blocks, eigen, count

    def __call__(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        a, r, b = self.blocks
        if self.eigen:
            eigen_rows_numba(x.reshape(a, r), out.reshape(a))
        else:
            sum_blocks_numba(x.reshape(self.blocks), out.reshape(a, b))
        if self.count:                                       # MEAN: one float32 division
            with np.errstate(over="ignore", invalid="ignore"):
                np.divide(out, np.float32(self.count), out=out)


class FloatSumNative(FlatCall):
    """``native``: the kernel library's ``sum_f32`` for the [A, R, B] sums in memory order (threads, x,
    out, [A, R, B], [count or 0]); ``fallback`` (the node's :class:`FloatSum`) where it is not taken."""

    __slots__ = ()

    def __init__(self, fn, fallback: FloatSum):
        super().__init__(fn, fallback, (np.array(fallback.blocks, np.int64), np.array([fallback.count], np.float32)),
                         1, True)


def _float_sum(context, node, d, mean: bool):
    shape = context.shape(node.inputs[0])
    if context.dtype(node.inputs[0]) != np.float32 or 0 in shape or context.variant.float_sum_order != "eigen-packets":
        return None
    dims, red = normalized(shape, d.axes)
    if len(red) > 1:
        return None
    if not red:
        blocks = (int(np.prod(dims, dtype=np.int64)), 1, 1)
    else:
        r = red[0]
        blocks = (int(np.prod(dims[:r], dtype=np.int64)), dims[r], int(np.prod(dims[r + 1:], dtype=np.int64)))
    count = int(np.prod([shape[a] for a in d.axes], dtype=np.int64)) if mean else 0
    numba = FloatSum(blocks, mean and len(dims) > 1 and red == [len(dims) - 1], count)
    fn = None if numba.eigen else _ew.sum_function()
    return numba if fn is None else FloatSumNative(fn, numba)


@fast_path(BuiltinOperator.SUM, ReduceData, variants=(LITERT_X86.name,))
def bind_sum_float(context, node, d):
    return _float_sum(context, node, d, mean=False)


@fast_path(BuiltinOperator.MEAN, MeanData, variants=(LITERT_X86.name,))
def bind_mean_float(context, node, d):
    return _float_sum(context, node, d, mean=True)


@njit(nogil=True)
def mean_hw_numba(x3, mult, shift, bias, lo, hi, up, acc, out2):
    """out2[b, c] = clamp(MBQM(Σ_i x3[b, i, c], mult, shift) + bias) for an int8 / uint8 [N, H·W, C]
    view; channels c < ``up`` round the final shift half up (NEON's ``vrshl``), the others away from
    zero; ``acc`` is an int64 scratch row of C values (no allocation inside: the precompiled library
    has no numba runtime)."""
    n, r, c = x3.shape
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    mask = (np.int64(1) << right) - 1
    for b in range(n):
        for ch in range(c):
            acc[ch] = 0
        for i in range(r):
            for ch in range(c):
                acc[ch] += x3[b, i, ch]
        for ch in range(c):
            v = ((acc[ch] + 2147483648) & 0xFFFFFFFF) - 2147483648      # int32, as C holds it
            v = v << left
            v = ((v + 2147483648) & 0xFFFFFFFF) - 2147483648
            h = (v * mult + 1073741824) >> 31      # SRDHM for a multiplier >= 0 (fast/requantize.py)
            if ch < up:
                h = (h + (mask - (mask >> 1))) >> right
            else:
                rem = h & mask
                thr = (mask >> 1) + (h < 0)
                h = (h >> right) + (rem > thr)
            out2[b, ch] = min(max(h + bias, lo), hi)


class QuantizedMeanHW(FastPath):
    """The "optimized 4-D HW" quantized MEAN as :func:`mean_hw_numba` (its scalars made once, at bind)."""

    __slots__ = ("name", "scalars", "acc")

    def __init__(self, d, lo, hi, up, channels):
        self.name = "numba"
        self.scalars = tuple(np.int64(v) for v in (d.output_multiplier, d.output_shift, d.bias, lo, hi, up))
        self.acc = np.zeros(channels, np.int64)

    def native_call(self, context, node):
        """One call of the library's :func:`mean_hw_numba` (a network's global average pool then joins
        the run of library calls before it, :mod:`..fused`)."""
        x, out = context.tensors[node.inputs[0]], context.tensors[node.outputs[0]]
        if not (x.flags.c_contiguous and out.flags.c_contiguous):
            return None
        n, h, w, c = x.shape
        return library_call(mean_hw_numba, x.reshape(n, h * w, c), *self.scalars, self.acc, out.reshape(n, c))

    def __call__(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        n, h, w, c = x.shape
        mean_hw_numba(x.reshape(n, h * w, c), *self.scalars, self.acc, out.reshape(n, c))


@fast_path(BuiltinOperator.MEAN, MeanQuantizedData, variants=tuple(VARIANTS))
def bind_mean_quantized(context, node, d):
    """The optimized H·W mean (whichever variant chose it at prepare); the reference algorithm, or
    another shape, keeps the teaching layer."""
    shape = context.shape(node.inputs[0])
    dt = context.dtype(node.inputs[0])
    if (not d.algorithm.startswith("optimized") or dt not in (np.int8, np.uint8) or len(shape) != 4
            or tuple(d.axes) != (1, 2) or 0 in shape or d.output_multiplier < 0):
        return None
    lo, hi = quant.quantized_range(np.dtype(dt))
    return QuantizedMeanHW(d, lo, hi, shape[3] // 16 * 16, shape[3])


@njit
def prod_rows_numba(rows, in_zp, out_zp, multiplier, shift, lo, hi, out):
    for r in range(rows.shape[0]):
        p = np.int64(rows[r, 0]) - in_zp
        for k in range(1, rows.shape[1]):
            p = mbqm_int64_jit(p * (np.int64(rows[r, k]) - in_zp), multiplier, shift)
        v = mbqm_int64_jit(p, multiplier, shift) + out_zp
        out[r] = min(max(v, lo), hi)


def _prod_quantized(context, node, d):
    x = context.tensors[node.inputs[0]]
    if d.copy:
        context.tensors[node.outputs[0]][...] = x.reshape(d.output_shape)
        return
    rows = np.ascontiguousarray(reduced_rows(x, d.axes))
    out = np.empty(rows.shape[0], np.int64)
    lo, hi = quant.quantized_range(x.dtype)
    prod_rows_numba(rows, d.input_zero_point, d.output_zero_point, d.multiplier, d.shift, lo, hi, out)
    context.tensors[node.outputs[0]][...] = out.astype(x.dtype).reshape(d.output_shape)


@fast_path(BuiltinOperator.REDUCE_PROD, ReduceProdData, variants=tuple(VARIANTS))
def bind_prod_quantized(context, node, d):
    return Call("numba", _prod_quantized)

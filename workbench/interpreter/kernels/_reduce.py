"""What SUM, REDUCE_MAX/MIN/PROD/ANY/ALL (and, for its sums, MEAN) share: axes from input 1 (a
constant; negative and duplicate axes allowed, as TFLite resolves them), ``keep_dims`` from
ReducerOptions.

Quantized inputs (uint8, int8, int16): REDUCE_MAX and REDUCE_MIN compare raw integers, so TFLite
requires the output to have the input's scale and zero point (``same_quantization``), and every
quantized reduction requires zero points 0 for int16.

Float sums (SUM, MEAN) depend on the order of the additions; the two builds of TFLite differ there
(``Variant.float_sum_order``): the reference kernels give each output one accumulator that starts at 0
and adds its values in memory order (:func:`sequential_sum`); the optimized kernels start from the
first value instead, and MEAN over trailing axes sums with Eigen's SIMD packets (:func:`eigen_sum`)."""

from __future__ import annotations

import numpy as np

from ..registry import Kernel, OpData, opdata
from ._elementwise import const_ints, norm_axes, reduced_shape


@opdata
class ReduceData(OpData):
    axes: tuple
    keep_dims: bool
    output_shape: tuple


QUANTIZED = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16))


def check_quantization(context, node, same: bool) -> None:
    """TFLite's checks on a quantized reduction: int16 zero points 0; with ``same``, equal scales and
    zero points on input and output."""
    from .. import quant
    from ._elementwise import refuse
    dt = context.dtype(node.inputs[0])

    def params(t):          # TFLite reads scale 0 / zero point 0 from a tensor without quantization
        return quant.tensor_scale_zp(context, t) if quant.is_quantized(context, t) else (0.0, 0)

    (si, zi), (so, zo) = params(node.inputs[0]), params(node.outputs[0])
    if dt == np.dtype(np.int16) and (zi != 0 or zo != 0):
        refuse(node, f"int16 zero points must be 0 (input {zi}, output {zo}), as TFLite requires")
    if same and (np.float32(si) != np.float32(so) or zi != zo):
        refuse(node, f"the {dt} input has scale {si} / zero point {zi}, the output {so} / {zo}; TFLite requires them "
                     f"equal (the integers are compared, not rescaled)")


class ReduceKernel(Kernel):
    """Subclasses set ``dtypes`` and ``reduce(x, axes, keep) -> array``; ``same_quantization`` makes
    quantized inputs require the output's scale and zero point."""

    dtypes = ()
    value_inputs = (0, 1)
    same_quantization = False

    @staticmethod
    def reduce(x, axes, keep):
        raise NotImplementedError

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, self.dtypes)
        shape = context.shape(x)
        axes = norm_axes(node, const_ints(context, node, 1, "the axes"), len(shape))
        axes = tuple(a for a in axes if a < len(shape))      # a scalar has no axes: axis 0 reduces nothing
        keep = bool(node.params.get("keep_dims", False))
        out = reduced_shape(shape, axes, keep)
        if dt in QUANTIZED and self.same_quantization:
            check_quantization(context, node, True)
        context.set_output(node.outputs[0], out, dt)
        return ReduceData(axes, keep, out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = np.asarray(self.reduce(x, d.axes, d.keep_dims)).astype(out.dtype).reshape(out.shape)


def float_extreme(x: np.ndarray, axes: tuple, keep: bool, largest: bool) -> np.ndarray:
    """REDUCE_MAX (``largest``) / REDUCE_MIN of a non-empty float array as litert computes it: it
    visits each output's values in memory order with ``acc = (x < acc) ? acc : x`` (``x > acc`` for
    MIN), so a NaN always replaces the accumulator and the next value replaces a NaN.  Hence
    (measured): an output is the maximum of the values AFTER its last NaN, NaN when a NaN comes
    last, the plain maximum without a NaN (all -inf gives -inf, not the empty reduction's -FLT_MAX)."""
    reduce = np.max if largest else np.min
    r = reduce(x, axis=axes, keepdims=keep)             # NaN where a group has a NaN
    has_nan = np.isnan(r)
    if not has_nan.any():
        return r
    kept = [i for i in range(x.ndim) if i not in axes]
    rows = np.transpose(x, kept + sorted(axes)).reshape(has_nan.size, -1)   # each output's values in order
    n = rows.shape[1]
    last_nan = n - 1 - np.argmax(np.isnan(rows[:, ::-1]), axis=1)
    after = np.where(np.arange(n) > last_nan[:, None], rows, -np.inf if largest else np.inf)
    tail = reduce(after, axis=1)
    tail = np.where(last_nan == n - 1, np.nan, tail).astype(x.dtype)
    return np.where(has_nan, tail.reshape(np.shape(r)), r)


def reduced_rows(x: np.ndarray, axes: tuple) -> np.ndarray:
    """The input as [outputs, count]: kept axes first (row-major, as the output), reduced axes last, so
    each row holds one output's values in memory order."""
    kept = [a for a in range(x.ndim) if a not in axes]
    return x.transpose(kept + list(axes)).reshape(int(np.prod([x.shape[a] for a in kept], dtype=np.int64)), -1)


def normalized(shape, axes) -> tuple[list, list]:
    """reduce_utils::ResolveAxis of the optimized kernels: drop the size-1 dimensions, then merge
    neighbours that are both reduced or both kept.  (dims, reduced axes), e.g. (2, 5, 4) over {1, 2}
    → ([2, 20], [1])."""
    dims = [(d, i in axes) for i, d in enumerate(shape) if d != 1]
    merged: list = []
    for d, red in dims:
        if merged and merged[-1][1] == red:
            merged[-1][0] *= d
        else:
            merged.append([d, red])
    return [d for d, _ in merged], [i for i, (_, red) in enumerate(merged) if red]


def sequential_sum(rows: np.ndarray, from_zero: bool) -> np.ndarray:
    """Each row summed by one float32 accumulator in order: 0 + x0 + x1 + ... (the reference kernels)
    or x0 + x1 + ... (the optimized ones; only the sign of an all −0 row differs).  ``np.cumsum`` is
    strictly sequential (``np.sum`` is not: it adds long rows pairwise)."""
    if from_zero:
        rows = np.pad(rows, ((0, 0), (1, 0)))
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], np.float32)
    return np.cumsum(rows, axis=1, dtype=np.float32)[:, -1]


def eigen_sum(rows: np.ndarray) -> np.ndarray:
    """Each row of a C-contiguous float32 [outputs, n] summed as Eigen's ``colwise().sum()`` does on x86
    (SSE packets of 4 lanes): the row's values before its first 16-byte-aligned address (the tensor
    starts aligned) and after the last whole packet are added one by one at the end; the packets in
    between go to two accumulators alternately, which are then added, plus one odd packet; the 4
    lanes are reduced as (l0 + l2) + (l1 + l3).  A row shorter than a packet is summed in order."""
    r, n = rows.shape
    out = np.empty(r, np.float32)
    starts = np.minimum((-np.arange(r) * n) % 4, n)          # values before the first aligned one
    for a in np.unique(starts):
        g = rows[starts == a]
        whole, pairs = (n - a) // 4 * 4, (n - a) // 8 * 8
        if whole == 0:
            out[starts == a] = sequential_sum(g, False)
            continue
        p0 = g[:, a:a + 4]
        if whole > 4:
            p1 = g[:, a + 4:a + 8]
            for i in range(a + 8, a + pairs, 8):
                p0, p1 = p0 + g[:, i:i + 4], p1 + g[:, i + 4:i + 8]
            p0 = p0 + p1
            if whole > pairs:
                p0 = p0 + g[:, a + pairs:a + pairs + 4]
        total = (p0[:, 0] + p0[:, 2]) + (p0[:, 1] + p0[:, 3])
        for i in [*range(a), *range(a + whole, n)]:
            total = total + g[:, i]
        out[starts == a] = total
    return out

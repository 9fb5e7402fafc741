"""What SUM, REDUCE_MAX/MIN/PROD/ANY/ALL share: axes from input 1 (a constant; negative and
duplicate axes allowed, as TFLite resolves them), ``keep_dims`` from ReducerOptions.

Quantized inputs (uint8, int8, int16): REDUCE_MAX and REDUCE_MIN compare raw integers, so TFLite
requires the output to have the input's scale and zero point (``same_quantization``), and every
quantized reduction requires zero points 0 for int16."""

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


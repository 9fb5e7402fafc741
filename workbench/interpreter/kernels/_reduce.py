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

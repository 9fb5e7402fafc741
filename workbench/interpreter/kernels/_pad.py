"""What PAD and PADV2 share: paddings (input 1, shape [rank, 2]) → output shape and center slices.

The fill value of a quantized tensor (uint8, int8, int16) is an integer: PAD (and PADV2 without a
constant) uses the OUTPUT's zero point — the integer that stands for 0.0 in the output — even when
the input's zero point differs (TFLite copies the input's integers unchanged, there is no
rescaling).  PADV2's constant must be quantized exactly like the output (TFLite checks scale and
zero point when it runs; the workbench checks in prepare) and is used as its raw integer.
"""

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata

QUANTIZED = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16))
TYPES = (np.dtype(np.float32), np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32),
         np.dtype(np.int64), np.dtype(np.bool_))


@opdata
class PadData(OpData):
    paddings: tuple          # ((before, after), ...) per axis
    constant: object         # the value written into the padding (raw integer for quantized types)
    output_shape: tuple
    center: tuple            # slices of the output that receive the input
    output_zero_point: object = None     # quantized outputs only


def pad(x: np.ndarray, d, out: np.ndarray) -> None:
    """``reference_ops::Pad``: the output filled with the pad value, the input copied into its centre."""
    out.fill(d.constant)
    out[d.center] = x


class PadKernel(Kernel):
    value_inputs = (0, 1, 2)

    def constant(self, context, node, dtype):
        return dtype.type(0)

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, TYPES)
        shape = context.shape(x)
        pads = np.asarray(context.require_value(node, 1, "the paddings"))
        if pads.shape != (len(shape), 2):
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): paddings of shape {list(pads.shape)} for "
                                     f"a rank-{len(shape)} input")
        if (pads < 0).any():
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): negative paddings {pads.tolist()}")
        if context.dtype(node.outputs[0]) != dt:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): input is {dt} but the output is "
                                     f"{context.dtype(node.outputs[0])}; TFLite needs them equal")
        paddings = tuple((int(a), int(b)) for a, b in pads)
        out = tuple(d + a + b for d, (a, b) in zip(shape, paddings))
        context.set_output(node.outputs[0], out, dt)
        center = tuple(slice(a, a + d) for d, (a, _) in zip(shape, paddings))
        zp = None
        if dt in QUANTIZED:
            from .. import quant
            zp = quant.tensor_scale_zp(context, node.outputs[0])[1]
        return PadData(paddings, self.constant(context, node, dt), out, center, zp)

    def invoke(self, context, node, d):
        pad(context.tensors[node.inputs[0]], d, context.tensors[node.outputs[0]])

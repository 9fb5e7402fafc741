"""What PAD and PADV2 share: paddings (input 1, shape [rank, 2]) → output shape and center slices."""

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata


@opdata
class PadData(OpData):
    paddings: tuple          # ((before, after), ...) per axis
    constant: object
    output_shape: tuple
    center: tuple            # slices of the output that receive the input


def reference(x, paddings, constant):
    return np.pad(x, paddings, mode="constant", constant_values=constant)


class PadKernel(Kernel):
    value_inputs = (0, 1, 2)

    def constant(self, context, node, dtype):
        return dtype.type(0)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        pads = np.asarray(context.require_value(node, 1, "the paddings"))
        if pads.shape != (len(shape), 2):
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): paddings of shape {list(pads.shape)} for "
                                     f"a rank-{len(shape)} input")
        if (pads < 0).any():
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): negative paddings {pads.tolist()}")
        dt = context.dtype(x)
        paddings = tuple((int(a), int(b)) for a, b in pads)
        out = tuple(d + a + b for d, (a, b) in zip(shape, paddings))
        context.set_output(node.outputs[0], out, dt)
        center = tuple(slice(a, a + d) for d, (a, _) in zip(shape, paddings))
        return PadData(paddings, self.constant(context, node, dt), out, center)

    def invoke(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        out.fill(d.constant)
        out[d.center] = t[node.inputs[0]]

    def invoke_reference(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = reference(t[node.inputs[0]], d.paddings, d.constant)

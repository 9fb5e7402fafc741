"""SQUEEZE: drop size-1 axes (those in ``squeeze_dims``, or all of them when it is empty).

Pure data movement, any element type: version 1, and version 2 for STRING tensors (numpy object
arrays of bytes; the copy below moves them as they are)."""

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import normalize_axis


@opdata
class SqueezeData(OpData):
    axes: tuple
    output_shape: tuple


@kernel(BuiltinOperator.SQUEEZE, versions=(1, 2))
class Squeeze(Kernel):
    name = "squeeze"

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        dims = node.params.get("squeeze_dims") or ()
        if dims:
            axes = tuple(sorted({normalize_axis(node, int(a), len(shape)) for a in dims}))
            for a in axes:
                if shape[a] != 1:
                    raise UnsupportedOpError(f"SQUEEZE (node {node.index}): axis {a} has size {shape[a]}, not 1")
        else:
            axes = tuple(i for i, d in enumerate(shape) if d == 1)
        out = tuple(d for i, d in enumerate(shape) if i not in axes)
        context.set_output(node.outputs[0], out, context.dtype(x))
        return SqueezeData(axes, out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]].reshape(-1)[...] = context.tensors[node.inputs[0]].reshape(-1)

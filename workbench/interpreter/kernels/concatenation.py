"""CONCATENATION along ``axis`` (negative counts from the end).

The options carry a fused activation, but TFLite's kernel refuses anything but NONE
(``params->activation != kTfLiteActNone`` fails in Prepare), and so does this one.

int8 (version 2): TFLite's int8 kernel does not rescale — Prepare requires every input to have the
output's scale and zero point — so the values are copied as they are.
"""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import activation_name, activation_range, apply_activation, normalize_axis


@opdata
class ConcatenationData(OpData):
    axis: int
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float


@kernel(BuiltinOperator.CONCATENATION, versions=(1, 2))
class Concatenation(Kernel):
    name = "concatenation"

    def prepare(self, context, node):
        shapes = [context.shape(t) for t in node.inputs]
        dtypes = {context.dtype(t) for t in node.inputs}
        if len(dtypes) != 1:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): inputs of different types {dtypes}")
        dt = dtypes.pop()
        rank = len(shapes[0])
        if rank == 0:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): scalar inputs cannot be concatenated")
        axis = normalize_axis(node, int(node.params["axis"]), rank)
        for s in shapes[1:]:
            if len(s) != rank or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != axis):
                raise UnsupportedOpError(f"CONCATENATION (node {node.index}): shapes {[list(x) for x in shapes]} "
                                         f"differ outside axis {axis}")
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        code = node.params.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        if code != 0:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): fused activation {activation_name(code)}; "
                                     f"TFLite's kernel only accepts NONE")
        if dt == np.int8:
            from .. import quant
            so, zo = quant.tensor_scale_zp(context, node.outputs[0])
            for t in node.inputs:
                si, zi = quant.tensor_scale_zp(context, t)
                if np.float32(si) != np.float32(so) or zi != zo:
                    raise UnsupportedOpError(f"CONCATENATION (node {node.index}): int8 input '{context.name(t)}' has "
                                             f"scale {si} / zero point {zi}, the output {so} / {zo}; TFLite's int8 "
                                             f"kernel requires them equal (no rescaling)")
        context.set_output(node.outputs[0], out, dt)
        return ConcatenationData(axis, tuple(out), activation_name(code), lo, hi)

    def invoke(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        np.concatenate([t[i] for i in node.inputs], axis=d.axis, out=out)
        apply_activation(out, d.output_activation_min, d.output_activation_max)

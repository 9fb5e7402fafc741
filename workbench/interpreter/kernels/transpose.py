"""TRANSPOSE: permute axes by ``perm`` (input 1, a constant).  Pure data movement, so any dtype numpy
holds works: int8 (v2), bool (v3), rank 5 (v4), int16 (v5), rank 6 (v6), rank 7 and 8 (v8),
float16 (v9) — quantized values are copied as they are — except STRING, which TFLite's kernel
refuses.  TFLite's kernel takes ranks 1 to 8 (a larger rank is refused here too); int4 (v7) and
bfloat16 (the other half of v8) are types this interpreter cannot hold, refused at allocate."""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata

MAX_RANK = 8


@opdata
class TransposeData(OpData):
    perm: tuple
    output_shape: tuple


@kernel(BuiltinOperator.TRANSPOSE, versions=(1, 2, 3, 4, 5, 6, 8, 9))
class Transpose(Kernel):
    name = "transpose"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        perm = [int(p) for p in np.asarray(context.require_value(node, 1, "perm")).reshape(-1)]
        perm = [p + len(shape) if p < 0 else p for p in perm]
        if len(shape) > MAX_RANK:
            raise UnsupportedOpError(f"TRANSPOSE (node {node.index}): input of rank {len(shape)}; TFLite's kernel "
                                     f"takes ranks 1 to {MAX_RANK}")
        if sorted(perm) != list(range(len(shape))):
            raise UnsupportedOpError(f"TRANSPOSE (node {node.index}): perm {perm} for rank {len(shape)}")
        if context.dtype(x) is None:
            raise UnsupportedOpError(f"TRANSPOSE (node {node.index}): unsupported tensor type")
        if context.dtype(x) == np.dtype(object):
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): STRING tensors are not "
                                     f"supported (TFLite's kernel refuses them)")
        out = tuple(shape[p] for p in perm)
        context.set_output(node.outputs[0], out, context.dtype(x))
        return TransposeData(tuple(perm), out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = context.tensors[node.inputs[0]].transpose(d.perm)

"""CAST: convert the element type; the types come from the tensors (CastOptions is ignored, as
TFLite).  Float to integer truncates toward zero (C's static_cast); anything to bool is ``!= 0``;
bool to numbers is 0/1; narrowing integers wrap.  Types: float32, float64, float16, int64, int32,
int16, int8, uint8, uint16, uint32, bool.  Versions: v1; uint32 v2; int8 v3; uint16 v4; float64 or
float16 v5."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import refuse

TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8,
                                    np.uint8, np.uint16, np.uint32, np.bool_))


@opdata
class CastData(OpData):
    from_type: str
    to_type: str


def reference(x: np.ndarray, to: np.dtype) -> np.ndarray:
    if to == np.bool_:
        return x != 0
    if x.dtype.kind == "f" and to.kind in "iu":
        t = np.trunc(x.astype(np.float64))
        if to.kind == "u":     # C converts through a wide signed integer on the usual targets
            return t.astype(np.int64).astype(to)
        return t.astype(to)
    with np.errstate(over="ignore"):
        return x.astype(to)


@kernel(BuiltinOperator.CAST, versions=range(1, 6))
class Cast(Kernel):
    name = "cast"

    def prepare(self, context, node):
        x, y = node.inputs[0], node.outputs[0]
        src = context.expect_dtype(node, x, TYPES)
        dst = context.dtype(y)
        if dst not in TYPES:
            refuse(node, f"output type {context.type_name(y)} is not supported")
        context.set_output(y, context.shape(x), dst)
        return CastData(str(src), str(dst))

    def invoke(self, context, node, d):
        out = context.tensors[node.outputs[0]]
        out[...] = reference(context.tensors[node.inputs[0]], out.dtype)

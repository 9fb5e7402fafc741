"""DYNAMIC_UPDATE_SLICE: ``operand`` with ``update`` written at ``start_indices`` (as XLA's).

Each start index is clamped to [0, operand_dim - update_dim], so the update always fits.  Inputs:
operand and update of one type, start_indices 1-D with one value per dimension (int32: v1, int32 or
int64: v2 and later).  TFLite's kernel copies elements of any size, so the type only picks the version
(op_version rules): float32, float64, int8, uint8, int32, uint16, uint32, int64, bool at v1/v2;
float16 at v3; int16 at v4 (all checked against litert).  v5 (int4) and v6 (bfloat16) are not
registered: the interpreter has no array type for those tensors."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import BOOL, F32, I32, I64
from ._elementwise import refuse

TYPES = (F32, np.dtype(np.float64), np.dtype(np.int8), np.dtype(np.uint8), I32, np.dtype(np.uint16),
         np.dtype(np.uint32), I64, BOOL, np.dtype(np.float16), np.dtype(np.int16))


@opdata
class DynamicUpdateSliceData(OpData):
    output_shape: tuple
    update_shape: tuple


@kernel(BuiltinOperator.DYNAMIC_UPDATE_SLICE, versions=(1, 2, 3, 4))
class DynamicUpdateSlice(Kernel):
    name = "dynamic_update_slice"

    def prepare(self, context, node):
        op, upd, start = node.inputs[0], node.inputs[1], node.inputs[2]
        dt = context.expect_dtype(node, op, TYPES, "operand")
        if context.dtype(upd) != dt:
            refuse(node, f"update is {context.dtype(upd)}; it must be {dt} like the operand")
        context.expect_dtype(node, start, (I32,) if node.version == 1 else (I32, I64), "start_indices")
        os_, us = context.shape(op), context.shape(upd)
        if len(os_) != len(us) or any(u > o for u, o in zip(us, os_)):
            refuse(node, f"update {list(us)} must have the operand's rank and fit in {list(os_)}")
        if tuple(context.shape(start)) != (len(os_),):
            refuse(node, f"start_indices has shape {list(context.shape(start))}; expected [{len(os_)}]")
        context.set_output(node.outputs[0], os_, dt)
        return DynamicUpdateSliceData(tuple(os_), tuple(us))

    def invoke(self, context, node, d):
        t = context.tensors
        start = [min(max(int(s), 0), o - u) for s, o, u in
                 zip(t[node.inputs[2]].tolist(), d.output_shape, d.update_shape)]
        out = t[node.outputs[0]]
        out[...] = t[node.inputs[0]]
        out[tuple(slice(s, s + u) for s, u in zip(start, d.update_shape))] = t[node.inputs[1]]

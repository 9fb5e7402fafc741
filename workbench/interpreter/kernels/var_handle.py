"""VAR_HANDLE: the id of the resource variable named (``container``, ``shared_name``).

Ids are handed out per interpreter, in order of first use, and shared by every subgraph, so the
init subgraph and the main subgraph reach the same variable by name (TFLite's
``resource_ids`` map).  The output is a RESOURCE tensor; here it holds the id as an int32.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class VarHandleData(OpData):
    container: str
    shared_name: str
    resource_id: int


@kernel(BuiltinOperator.VAR_HANDLE, versions=(1,))
class VarHandle(Kernel):
    name = "var_handle"
    foldable = False

    def prepare(self, context, node):
        key = (node.params.get("container") or "", node.params.get("shared_name") or "")
        ids = context.interpreter.resource_ids
        rid = ids.setdefault(key, len(ids))
        context.set_output(node.outputs[0], (), np.int32)
        return VarHandleData(key[0], key[1], rid)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = d.resource_id

"""READ_VARIABLE: the current value of the resource variable whose id is input 0.

The output is dynamic, as in TFLite: its shape is the variable's, known only when the node runs
(a variable may be assigned values of different shapes), so the nodes that read it are prepared
during invoke.  Reading a variable nothing has assigned yet is an error.
"""

from __future__ import annotations

import numpy as np

from ...errors import TensorError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel


@kernel(BuiltinOperator.READ_VARIABLE, versions=(1,))
class ReadVariable(Kernel):
    name = "read_variable"
    foldable = False

    def prepare(self, context, node):
        context.shape(node.inputs[0])          # the resource handle must be there (a ModelError if not)
        context.set_output_dynamic(node.outputs[0], context.dtype(node.outputs[0]))
        return None

    def invoke(self, context, node, d):
        rid = int(np.asarray(context.tensors[node.inputs[0]]).reshape(-1)[0])
        value = context.interpreter.resources.get(rid)
        if value is None:
            names = {v: k for k, v in context.interpreter.resource_ids.items()}
            raise TensorError(f"READ_VARIABLE (node {node.index}): resource variable {names.get(rid, rid)} "
                              f"is read before anything assigned it")
        out = context.resize_output(node.outputs[0], value.shape, value.dtype)
        out[...] = value

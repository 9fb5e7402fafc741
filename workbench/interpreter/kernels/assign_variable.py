"""ASSIGN_VARIABLE: store input 1 as the value of the resource variable whose id is input 0.

The value is copied (it lives in the interpreter, not in the graph's memory plan) and keeps its
shape and dtype; it persists across invokes.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel


@kernel(BuiltinOperator.ASSIGN_VARIABLE, versions=(1,))
class AssignVariable(Kernel):
    name = "assign_variable"
    foldable = False

    def prepare(self, context, node):
        context.shape(node.inputs[0]), context.shape(node.inputs[1])   # both present (a ModelError if not)
        return None

    def invoke(self, context, node, d):
        rid = int(np.asarray(context.tensors[node.inputs[0]]).reshape(-1)[0])
        context.interpreter.resources[rid] = np.array(context.tensors[node.inputs[1]])

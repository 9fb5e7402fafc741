"""CALL_ONCE: run the init subgraph (``init_subgraph_index``) once per interpreter.

The converter puts it first in the main subgraph of a model with resource variables: the init
subgraph assigns the variables their initial values.  The first invoke runs it; later invokes
skip it (``Interpreter.reset_all_variables(resource_variables=True)`` re-arms it).  The node has
no inputs or outputs; it is never evaluated at allocate time (it has side effects).
"""

from __future__ import annotations

from ...errors import ModelError, UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class CallOnceData(OpData):
    init_subgraph: int


@kernel(BuiltinOperator.CALL_ONCE, versions=(1,))
class CallOnce(Kernel):
    name = "call_once"
    foldable = False

    def prepare(self, context, node):
        index = int(node.params.get("init_subgraph_index", 0))
        n = len(context.model.subgraphs)
        if not 0 < index < n or index == context.subgraph_index:
            why = "calls itself" if index == context.subgraph_index else \
                f"is not another subgraph of this model ({n} subgraphs)"
            raise ModelError(f"CALL_ONCE (node {node.index}): init subgraph {index} {why}",
                             f"model.subgraphs[{node.subgraph}].operators[{node.index}].builtin_options"
                             f".init_subgraph_index")
        sub = context.subgraph_at(index)
        if sub.inputs or sub.outputs:
            raise UnsupportedOpError(f"CALL_ONCE (node {node.index}): init subgraph {index} must have no inputs "
                                     f"and no outputs")
        sub.prepare_for([])
        return CallOnceData(index)

    def invoke(self, context, node, d):
        done = context.interpreter.initialized
        if d.init_subgraph in done:
            return
        context.subgraph_at(d.init_subgraph).run([])
        done.add(d.init_subgraph)

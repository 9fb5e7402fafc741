"""IF: run ``then_subgraph_index`` when input 0 (a bool scalar) is true, else ``else_subgraph_index``.

Inputs 1.. are passed to the branch's inputs; the branch's outputs are the node's outputs.  Both
branches are prepared for the input shapes; when they agree on every output shape the outputs are
planned statically, otherwise they are dynamic and sized by the branch that ran.
(Module named ``if_`` because ``if`` is a Python keyword.)
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._control_flow import callee, check_arity, declare_outputs, write_outputs


@opdata
class IfData(OpData):
    then_subgraph: int
    else_subgraph: int
    dynamic_outputs: bool


@kernel(BuiltinOperator.IF, versions=(1,))
class If(Kernel):
    name = "if"
    foldable = False

    def prepare(self, context, node):
        p = node.params
        then_sg = callee(context, node, int(p.get("then_subgraph_index", 0)), "then",
                         "then_subgraph_index")
        else_sg = callee(context, node, int(p.get("else_subgraph_index", 0)), "else",
                         "else_subgraph_index")
        args = node.inputs[1:]
        c = node.inputs[0]
        if int(np.prod(context.shape(c), dtype=np.int64)) != 1:
            raise UnsupportedOpError(f"IF (node {node.index}): the condition must hold one element, got shape "
                                     f"{list(context.shape(c))}")
        shapes = [context.shape(t) for t in args]
        dtypes = [context.dtype(t) for t in args]
        shape_sets = []
        for sub, role in ((then_sg, "then"), (else_sg, "else")):
            check_arity(node, sub, len(args), len(node.outputs), role)
            sub.prepare_for(shapes, dtypes)
            shape_sets.append(sub.output_shapes())
        out_shapes = [a if a == b else None for a, b in zip(*shape_sets)]
        dynamic = declare_outputs(context, node, out_shapes, then_sg.output_dtypes())
        return IfData(then_sg.index, else_sg.index, dynamic)

    def invoke(self, context, node, d):
        t = context.tensors
        branch = d.then_subgraph if bool(np.asarray(t[node.inputs[0]]).reshape(-1)[0]) else d.else_subgraph
        outs = context.subgraph_at(branch).run([t[i] for i in node.inputs[1:]])
        write_outputs(context, node, outs, d.dynamic_outputs)

"""WHILE: ``while cond(vars): vars = body(vars)``, with the loop variables as inputs and outputs.

``cond_subgraph_index`` maps the loop variables to one bool; ``body_subgraph_index`` maps them to
their next values.  Both are prepared for the input shapes; when the body keeps every shape the
outputs are planned statically, otherwise they are dynamic, and the body (and cond) are planned
again whenever the loop variables change shape.  (Module named ``while_``: ``while`` is a Python
keyword.)
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError, WorkbenchError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._control_flow import callee, check_arity, declare_outputs, write_outputs


class WhileLimitError(WorkbenchError, RuntimeError):
    """A WHILE loop ran ``Interpreter.max_while_iterations`` times and would go on."""


@opdata
class WhileData(OpData):
    cond_subgraph: int
    body_subgraph: int
    dynamic_outputs: bool


def _truth(node, c: np.ndarray) -> bool:
    if c.size != 1:
        raise UnsupportedOpError(f"WHILE (node {node.index}): the cond subgraph returned {c.size} values "
                                 f"(shape {list(c.shape)}); it must return one bool")
    return bool(c.reshape(-1)[0])


@kernel(BuiltinOperator.WHILE, versions=(1,))
class While(Kernel):
    name = "while"
    foldable = False

    def prepare(self, context, node):
        p = node.params
        cond = callee(context, node, int(p.get("cond_subgraph_index", 0)), "cond",
                      "cond_subgraph_index")
        body = callee(context, node, int(p.get("body_subgraph_index", 0)), "body",
                      "body_subgraph_index")
        n = len(node.inputs)
        if len(node.outputs) != n:
            raise UnsupportedOpError(f"WHILE (node {node.index}): {n} inputs but {len(node.outputs)} outputs")
        check_arity(node, cond, n, 1, "cond")
        check_arity(node, body, n, n, "body")
        shapes = [tuple(context.shape(t)) for t in node.inputs]
        dtypes = [context.dtype(t) for t in node.inputs]
        cond.prepare_for(shapes, dtypes)
        c_t = cond.outputs[0]
        if cond.output_shapes()[0] is not None and int(np.prod(cond.output_shapes()[0], dtype=np.int64)) != 1:
            raise UnsupportedOpError(f"WHILE (node {node.index}): cond subgraph {cond.index} returns shape "
                                     f"{list(cond.output_shapes()[0])}; it must return one bool")
        if cond.context.dtypes[c_t] != np.bool_:
            raise UnsupportedOpError(f"WHILE (node {node.index}): cond subgraph {cond.index} returns "
                                     f"{cond.context.dtypes[c_t]}, not bool")
        body.prepare_for(shapes, dtypes)
        for k, (dt, bdt) in enumerate(zip(dtypes, body.output_dtypes())):
            if dt != bdt:
                raise UnsupportedOpError(f"WHILE (node {node.index}): loop variable {k} is {dt} but the body "
                                         f"returns {bdt}")
        kept = [s if s == b else None for s, b in zip(shapes, body.output_shapes())]
        dynamic = declare_outputs(context, node, kept, dtypes)
        return WhileData(cond.index, body.index, dynamic)

    def invoke(self, context, node, d):
        cond = context.subgraph_at(d.cond_subgraph)
        body = context.subgraph_at(d.body_subgraph)
        state = [np.array(context.tensors[t]) for t in node.inputs]
        limit = context.interpreter.max_while_iterations
        count = 0
        while _truth(node, cond.run(state)[0]):
            if limit is not None and count >= limit:
                raise WhileLimitError(f"WHILE (node {node.index} of subgraph {node.subgraph}): the loop ran "
                                      f"{count} iterations and its condition is still true; stopped at the "
                                      f"limit max_while_iterations={limit} (Interpreter(max_while_iterations=...))")
            state = body.run(state)
            count += 1
        write_outputs(context, node, state, d.dynamic_outputs)

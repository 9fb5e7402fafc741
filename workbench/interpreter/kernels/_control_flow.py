"""What IF and WHILE share: checking the called subgraphs and writing the node's outputs."""

from __future__ import annotations

import numpy as np

from ...errors import ModelError, UnsupportedOpError


def callee(context, node, index: int, role: str, field: str = ""):
    """The subgraph ``index`` a control-flow node calls; a :class:`ModelError` (with the options
    field's path) when it does not exist or is the caller's own subgraph (direct recursion)."""
    n = len(context.model.subgraphs)
    if not 0 <= index < n or index == context.subgraph_index:
        why = "calls itself" if index == context.subgraph_index else f"does not exist ({n} subgraphs)"
        path = f"model.subgraphs[{node.subgraph}].operators[{node.index}].builtin_options"
        raise ModelError(f"{node.op_name} (node {node.index}): {role} subgraph {index} {why}",
                         f"{path}.{field}" if field else path)
    return context.subgraph_at(index)


def check_arity(node, sub, n_in: int, n_out: int, role: str) -> None:
    if len(sub.inputs) != n_in or (n_out >= 0 and len(sub.outputs) != n_out):
        want = f"{n_in} inputs" + (f" and {n_out} outputs" if n_out >= 0 else "")
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {role} subgraph {sub.index} has "
                                 f"{len(sub.inputs)} inputs and {len(sub.outputs)} outputs; it must have {want}")


def declare_outputs(context, node, shapes, dtypes) -> bool:
    """Static outputs when every shape is known (returns False), else dynamic ones (True)."""
    dynamic = any(s is None for s in shapes)
    for t, shape, dt in zip(node.outputs, shapes, dtypes):
        if dynamic:
            context.set_output_dynamic(t, dt)
        else:
            context.set_output(t, shape, dt)
    return dynamic


def write_outputs(context, node, values, dynamic: bool) -> None:
    for t, v in zip(node.outputs, values):
        if dynamic:
            out = context.resize_output(t, np.shape(v))
        else:
            out = context.tensors[t]
            if out.shape != np.shape(v):
                raise UnsupportedOpError(f"{node.op_name} (node {node.index}): output '{context.name(t)}' was "
                                         f"planned as {list(out.shape)} but the subgraph gave {list(np.shape(v))}")
        out[...] = v

"""GraphView: the dependency structure of one subgraph, as a partitioner needs it.

    g = GraphView(model)                  # subgraph 0
    g.producer[t]                         # node writing tensor t (-1: graph input or constant)
    g.consumers[t]                        # nodes reading tensor t, in execution order
    g.order                               # execution order (the operators' order in the file)
    g.is_constant(t)                      # has data in a buffer and is not a variable
    g.control_edges                       # (a, b): b must run after a (side effects keep their order)

Nothing here knows about kernels or targets; everything is plain lists so the strategies stay fast
on 100k-node graphs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..schema.enums import BuiltinOperator, TensorType
from ..schema.types import TENSOR_ITEMSIZE, builtin_code, op_name

__all__ = ["GraphView", "SIDE_EFFECT_OPS"]

# ops that "might have side effects" keep their relative order (subgraph.cc OpMightHaveSideEffect:
# RESOURCE tensors, IF / WHILE / CALL_ONCE; the variable ops touch RESOURCE tensors anyway)
SIDE_EFFECT_OPS = frozenset({
    BuiltinOperator.IF, BuiltinOperator.WHILE, BuiltinOperator.CALL_ONCE, BuiltinOperator.VAR_HANDLE,
    BuiltinOperator.ASSIGN_VARIABLE, BuiltinOperator.READ_VARIABLE,
})


_UNPACK_OPS = frozenset({BuiltinOperator.DEQUANTIZE, BuiltinOperator.DENSIFY})


@dataclass(frozen=True)
class NodeInfo:
    index: int
    op: object          # BuiltinOperator, or an int for an unknown code
    name: str           # 'CONV_2D' or the custom op's name
    version: int
    inputs: tuple
    outputs: tuple

    def __repr__(self) -> str:
        return f"node {self.index} {self.name} v{self.version}"


class GraphView:
    """Producers, consumers, order, constants and control dependencies of ``model.subgraphs[subgraph]``."""

    def __init__(self, model, subgraph: int = 0):
        self.model = model
        self.subgraph = subgraph
        sg = model.subgraphs[subgraph]
        self.tensors = tuple(sg.tensors or ())
        self.num_tensors = len(self.tensors)
        self.inputs = tuple(sg.inputs or ())
        self.outputs = tuple(sg.outputs or ())
        codes = model.operator_codes or ()
        nodes = []
        for i, op in enumerate(sg.operators or ()):
            oc = codes[op.opcode_index]
            nodes.append(NodeInfo(i, builtin_code(oc), op_name(oc), int(oc.version or 1), tuple(op.inputs or ()),
                                  tuple(op.outputs or ())))
        self.nodes = tuple(nodes)
        self.num_nodes = len(nodes)
        self.order = tuple(range(self.num_nodes))
        producer = [-1] * self.num_tensors
        consumers: list[list[int]] = [[] for _ in range(self.num_tensors)]
        for n in nodes:
            for t in n.outputs:
                if 0 <= t < self.num_tensors:
                    producer[t] = n.index
            seen = set()
            for t in n.inputs:
                if 0 <= t < self.num_tensors and t not in seen:
                    seen.add(t)
                    consumers[t].append(n.index)
        self.producer = producer
        self.consumers = consumers
        buffers = model.buffers or ()
        const = [False] * self.num_tensors
        for t, meta in enumerate(self.tensors):
            if meta.buffer and not meta.is_variable and meta.buffer < len(buffers):
                b = buffers[meta.buffer]
                if (b.data is not None and len(b.data) > 0) or b.offset > 1:
                    const[t] = True
        self.constant = const
        # "static": a constant, or what constant-foldable unpacking (fp16 DEQUANTIZE, DENSIFY) makes of
        # constants — delegates treat those as weights (XNNPACK unpacks them when it delegates)
        static = list(const)
        for n in nodes:
            if n.op in _UNPACK_OPS and n.inputs and all(t < 0 or static[t] for t in n.inputs):
                for t in n.outputs:
                    if 0 <= t < self.num_tensors:
                        static[t] = True
        self.static = static
        self.control_edges = self._control_edges()

    # -- structure -------------------------------------------------------------------------------
    def is_constant(self, t: int) -> bool:
        return 0 <= t < self.num_tensors and self.constant[t]

    def is_static(self, t: int) -> bool:
        """A constant, or the unpacked (DEQUANTIZE / DENSIFY) value of constants."""
        return 0 <= t < self.num_tensors and self.static[t]

    def node(self, i: int) -> NodeInfo:
        return self.nodes[i]

    def predecessors(self, i: int) -> list[int]:
        """Nodes producing an input of node ``i`` (data edges only), ascending."""
        return sorted({self.producer[t] for t in self.nodes[i].inputs if t >= 0 and self.producer[t] >= 0})

    def successors(self, i: int) -> list[int]:
        return sorted({c for t in self.nodes[i].outputs if t >= 0 for c in self.consumers[t]})

    def has_side_effect(self, i: int) -> bool:
        n = self.nodes[i]
        if n.op in SIDE_EFFECT_OPS:
            return True
        for t in n.inputs + n.outputs:
            if 0 <= t < self.num_tensors and self.tensors[t].type == TensorType.RESOURCE:
                return True
        return False

    def _control_edges(self) -> tuple:
        chain = [i for i in self.order if self.has_side_effect(i)]
        return tuple(zip(chain, chain[1:]))

    # -- sizes -------------------------------------------------------------------------------------
    def shape(self, t: int) -> tuple:
        return tuple(self.tensors[t].shape or ())

    def nbytes(self, t: int) -> int:
        meta = self.tensors[t]
        n = 1
        for d in meta.shape or ():
            n *= max(int(d), 1)
        return n * TENSOR_ITEMSIZE.get(meta.type, 1)

    def runtime_inputs(self, i: int) -> list[int]:
        """Inputs of node ``i`` that are not constants (and not the -1 'omitted' marker)."""
        return [t for t in self.nodes[i].inputs if t >= 0 and not self.constant[t]]

    def __repr__(self) -> str:
        return (f"GraphView(subgraph {self.subgraph}: {self.num_nodes} nodes, {self.num_tensors} tensors, "
                f"inputs={list(self.inputs)}, outputs={list(self.outputs)}, "
                f"{len(self.control_edges)} control edges)")

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

import gc
from contextlib import contextmanager
from typing import NamedTuple

from ..schema.enums import BuiltinOperator, TensorType
from ..schema.types import TENSOR_ITEMSIZE, builtin_code, op_name

__all__ = ["GraphView", "NodeInfo", "SIDE_EFFECT_OPS", "gc_paused"]

# ops that "might have side effects" keep their relative order (subgraph.cc OpMightHaveSideEffect:
# RESOURCE tensors, IF / WHILE / CALL_ONCE; the variable ops touch RESOURCE tensors anyway)
SIDE_EFFECT_OPS = frozenset({
    BuiltinOperator.IF, BuiltinOperator.WHILE, BuiltinOperator.CALL_ONCE, BuiltinOperator.VAR_HANDLE,
    BuiltinOperator.ASSIGN_VARIABLE, BuiltinOperator.READ_VARIABLE,
})


_UNPACK_OPS = frozenset({BuiltinOperator.DEQUANTIZE, BuiltinOperator.DENSIFY})


class NodeInfo(NamedTuple):
    """One node as the partitioner sees it (a named tuple: cheap to build for 100k-node graphs)."""

    index: int
    op: object          # BuiltinOperator, or an int for an unknown code
    name: str           # 'CONV_2D' or the custom op's name
    version: int
    inputs: tuple
    outputs: tuple

    def __repr__(self) -> str:
        return f"node {self.index} {self.name} v{self.version}"


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building big acyclic structures.

    Building the per-tensor lists of a 100k-node graph allocates hundreds of thousands of small
    containers; each allocation burst triggers collections that walk every live object (the whole
    model included), which made construction grow faster than linearly.  Nothing built here forms
    reference cycles, so nothing is lost by collecting later.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class GraphView:
    """Producers, consumers, order, constants and control dependencies of ``model.subgraphs[subgraph]``."""

    def __init__(self, model, subgraph: int = 0):
        with gc_paused():
            self._build(model, subgraph)

    def _build(self, model, subgraph: int) -> None:
        self.model = model
        self.subgraph = subgraph
        sg = model.subgraphs[subgraph]
        self.tensors = tensors = tuple(sg.tensors or ())
        self.num_tensors = nt = len(tensors)
        self.inputs = tuple(sg.inputs or ())
        self.outputs = tuple(sg.outputs or ())
        # per operator code, once: (op, name, version)
        info = [(builtin_code(oc), op_name(oc), int(oc.version or 1)) for oc in model.operator_codes or ()]
        producer = [-1] * nt
        consumers: list[list[int]] = [[] for _ in range(nt)]
        nodes = []
        append = nodes.append
        for i, op in enumerate(sg.operators or ()):
            code, name, version = info[op.opcode_index]
            ins = op.inputs
            ins = () if ins is None else tuple(ins)
            outs = op.outputs
            outs = () if outs is None else tuple(outs)
            append(NodeInfo(i, code, name, version, ins, outs))
            for t in outs:
                if 0 <= t < nt:
                    producer[t] = i
            if len(ins) == 1:
                t = ins[0]
                if 0 <= t < nt:
                    consumers[t].append(i)
            else:
                for t in ins:
                    if 0 <= t < nt:
                        c = consumers[t]
                        if not c or c[-1] != i:      # each reader once, however often it reads t
                            c.append(i)
        self.nodes = tuple(nodes)
        self.num_nodes = n = len(nodes)
        self.order = tuple(range(n))
        self.producer = producer
        self.consumers = consumers
        buffers = model.buffers or ()
        nb = len(buffers)
        const = [False] * nt
        resource = []
        RES = TensorType.RESOURCE
        for t, meta in enumerate(tensors):
            bi = meta.buffer
            if bi and bi < nb and not meta.is_variable:
                b = buffers[bi]
                if (b.data is not None and len(b.data) > 0) or b.offset > 1:
                    const[t] = True
            if meta.type == RES:
                resource.append(t)
        self.constant = const
        self._resource = frozenset(resource)
        # "static": a constant, or what constant-foldable unpacking (fp16 DEQUANTIZE, DENSIFY) makes of
        # constants — delegates treat those as weights (XNNPACK unpacks them when it delegates)
        static = list(const)
        for nd in nodes:
            if nd.op in _UNPACK_OPS and nd.inputs and all(t < 0 or static[t] for t in nd.inputs):
                for t in nd.outputs:
                    if 0 <= t < nt:
                        static[t] = True
        self.static = static
        self._nbytes = None
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
        res = self._resource
        if res:
            for t in n.inputs:
                if t in res:
                    return True
            for t in n.outputs:
                if t in res:
                    return True
        return False

    def _control_edges(self) -> tuple:
        if self._resource:
            chain = [i for i in self.order if self.has_side_effect(i)]
        else:
            chain = [nd.index for nd in self.nodes if nd.op in SIDE_EFFECT_OPS]
        return tuple(zip(chain, chain[1:]))

    # -- sizes -------------------------------------------------------------------------------------
    def shape(self, t: int) -> tuple:
        return tuple(self.tensors[t].shape or ())

    def nbytes(self, t: int) -> int:
        sizes = self._nbytes
        if sizes is None:
            sizes = self._nbytes = [None] * self.num_tensors
        v = sizes[t]
        if v is None:
            meta = self.tensors[t]
            v = 1
            for d in meta.shape or ():
                v *= max(int(d), 1)
            v = sizes[t] = v * TENSOR_ITEMSIZE.get(meta.type, 1)
        return v

    def runtime_inputs(self, i: int) -> list[int]:
        """Inputs of node ``i`` that are not constants (and not the -1 'omitted' marker)."""
        return [t for t in self.nodes[i].inputs if t >= 0 and not self.constant[t]]

    def __repr__(self) -> str:
        return (f"GraphView(subgraph {self.subgraph}: {self.num_nodes} nodes, {self.num_tensors} tensors, "
                f"inputs={list(self.inputs)}, outputs={list(self.outputs)}, "
                f"{len(self.control_edges)} control edges)")

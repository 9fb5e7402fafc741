"""GraphView: the dependency structure of one subgraph, as a partitioner needs it.

    g = GraphView(model)                  # subgraph 0
    g.producer[t]                         # node writing tensor t (-1: graph input or constant)
    g.consumers[t]                        # nodes reading tensor t, in execution order
    g.order                               # execution order (the operators' order in the file)
    g.is_constant(t)                      # has data in a buffer and is not a variable
    g.control_edges                       # (a, b): b must run after a (side effects keep their order)
    g.calls                               # node → subgraphs it calls (IF / WHILE / CALL_ONCE ...)
    g.resource_links()                    # node → resource variables it touches, and who else does

Nothing here knows about kernels or targets; everything is plain lists so the strategies stay fast
on 100k-node graphs.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import NamedTuple

from ..schema.enums import BuiltinOperator, TensorType
from ..schema.types import TENSOR_ITEMSIZE, builtin_code, op_name

__all__ = ["GraphView", "NodeInfo", "SIDE_EFFECT_OPS", "CALLING_OPS", "ResourceLinks", "called_subgraphs",
           "gc_paused"]

# ops that "might have side effects" keep their relative order (subgraph.cc OpMightHaveSideEffect:
# RESOURCE tensors, IF / WHILE / CALL_ONCE; the variable ops touch RESOURCE tensors anyway)
SIDE_EFFECT_OPS = frozenset({
    BuiltinOperator.IF, BuiltinOperator.WHILE, BuiltinOperator.CALL_ONCE, BuiltinOperator.VAR_HANDLE,
    BuiltinOperator.ASSIGN_VARIABLE, BuiltinOperator.READ_VARIABLE,
})


_UNPACK_OPS = frozenset({BuiltinOperator.DEQUANTIZE, BuiltinOperator.DENSIFY})

# ops whose options name other subgraphs of the model (then/else, cond/body, init, bodies of StableHLO ops)
CALLING_OPS = frozenset({
    BuiltinOperator.IF, BuiltinOperator.WHILE, BuiltinOperator.CALL_ONCE, BuiltinOperator.CALL,
    BuiltinOperator.STABLEHLO_WHILE, BuiltinOperator.STABLEHLO_REDUCE, BuiltinOperator.STABLEHLO_REDUCE_WINDOW,
    BuiltinOperator.STABLEHLO_SORT, BuiltinOperator.STABLEHLO_SCATTER, BuiltinOperator.STABLEHLO_COMPOSITE,
    BuiltinOperator.STABLEHLO_CASE,
})


def _options_table(model, op):
    """The operator's options table: the stored one, else the schema defaults (None: the op has none)."""
    from ..schema.declare import FlatTable

    for p in (op.builtin_options, op.builtin_options_2):
        if isinstance(p, FlatTable):
            return p
    from .target import _default_params

    return _default_params(builtin_code(model.operator_codes[op.opcode_index]))


def subgraph_fields(table) -> list:
    """Names of the fields of an options table that hold subgraph indices."""
    if table is None:
        return []
    return [f for f in table.__dataclass_fields__
            if f.endswith(("_subgraph_index", "_subgraph_indices")) or (f == "subgraph" and
                                                                        type(table).__name__ == "CallOptions")]


def called_subgraphs(model, op) -> tuple:
    """The subgraph indices an operator calls (in field order, without repeats); () for other ops."""
    if builtin_code(model.operator_codes[op.opcode_index]) not in CALLING_OPS:
        return ()
    table = _options_table(model, op)
    out: list[int] = []
    for f in subgraph_fields(table):
        v = getattr(table, f)
        for k in (v if isinstance(v, (tuple, list)) else (v,)) if v is not None else ():
            if int(k) not in out:
                out.append(int(k))
    return tuple(out)


class ResourceLinks(NamedTuple):
    """Which nodes of a subgraph touch which resource (variable): the nodes that must stay together.

    ``keys[i]``: the resources node ``i`` touches (through a RESOURCE tensor it reads or writes, or
    through a subgraph it calls that names the variable); ``nodes[key]``: every node touching it;
    ``names[key]``: what to call it in a reason ("stream_6/states", or the tensor's name).
    """

    keys: dict
    nodes: dict
    names: dict


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
        calls = {}
        ops = sg.operators or ()
        for nd in nodes:
            if nd.op in CALLING_OPS:
                calls[nd.index] = called_subgraphs(model, ops[nd.index])
        self.calls = calls
        self._links = None
        self._views: dict = {}

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

    # -- subgraphs and resources -------------------------------------------------------------------
    def view(self, subgraph: int) -> "GraphView":
        """The GraphView of another subgraph of the same model (built once)."""
        if subgraph == self.subgraph:
            return self
        v = self._views.get(subgraph)
        if v is None:
            v = self._views[subgraph] = GraphView(self.model, subgraph)
            v._views = self._views
            self._views[self.subgraph] = self
        return v

    def reachable_subgraphs(self, i: int, checked: bool = True) -> list:
        """Every subgraph node ``i`` calls, directly or through the subgraphs it calls (breadth first).

        ``checked``: leave out indices that are not subgraphs of the model, and this subgraph itself
        (whose calls are already known); with ``checked=False`` they are listed (and not followed)."""
        out: list[int] = []
        todo = list(self.calls.get(i, ()))
        n = len(self.model.subgraphs)
        while todo:
            s = todo.pop(0)
            if s in out:
                continue
            valid = 0 <= s < n and s != self.subgraph
            if valid or not checked:
                out.append(s)
            if valid:
                v = self.view(s)
                for k in sorted(v.calls):
                    todo.extend(v.calls[k])
        return out

    def resource_links(self) -> ResourceLinks:
        """The resources each node touches (computed once; empty for graphs without any)."""
        if self._links is None:
            self._links = self._resource_links()
        return self._links

    @staticmethod
    def _var_key(model, op) -> tuple:
        table = _options_table(model, op)
        container = (getattr(table, "container", None) or "") if table is not None else ""
        name = (getattr(table, "shared_name", None) or "") if table is not None else ""
        return ("var", container, name)

    def _resource_links(self) -> ResourceLinks:
        model = self.model
        keys: dict = {}
        names: dict = {}
        if not self._resource and not self.calls:
            return ResourceLinks({}, {}, {})
        ops = model.subgraphs[self.subgraph].operators or ()
        # the key of each RESOURCE tensor: the variable a VAR_HANDLE names, else the tensor itself
        tkey = {}
        for t in self._resource:
            p = self.producer[t]
            if p >= 0 and self.nodes[p].op == BuiltinOperator.VAR_HANDLE:
                k = self._var_key(model, ops[p])
                names[k] = f"{k[1]}/{k[2]}" if k[1] else k[2]
            else:
                k = ("tensor", self.subgraph, t)
                names[k] = self.tensors[t].name or f"tensor {t}"
            tkey[t] = k
        # the variables each called subgraph names (its own VAR_HANDLEs), however deep
        sub_vars: dict = {}
        for i in sorted(self.calls):
            found = []
            for s in self.reachable_subgraphs(i):
                if s not in sub_vars:
                    v = self.view(s)
                    sops = model.subgraphs[s].operators or ()
                    sub_vars[s] = [self._var_key(model, sops[n.index]) for n in v.nodes
                                   if n.op == BuiltinOperator.VAR_HANDLE]
                for k in sub_vars[s]:
                    names.setdefault(k, f"{k[1]}/{k[2]}" if k[1] else k[2])
                    if k not in found:
                        found.append(k)
            if found:
                keys[i] = found
        for nd in self.nodes:
            for t in (*nd.inputs, *nd.outputs):
                k = tkey.get(t)
                if k is not None:
                    mine = keys.setdefault(nd.index, [])
                    if k not in mine:
                        mine.append(k)
        nodes: dict = {}
        for i in sorted(keys):
            for k in keys[i]:
                nodes.setdefault(k, []).append(i)
        return ResourceLinks({i: tuple(ks) for i, ks in keys.items()}, {k: tuple(v) for k, v in nodes.items()}, names)

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

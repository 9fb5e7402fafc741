"""The delegate interface, as TFLite's (``delegates/utils/simple_delegate.h``, ``delegates/utils.cc``).

A delegate in a few lines::

    class ReluOnly(Delegate):
        name = "relu-only"
        def supports(self, sig):                 # IsNodeSupported: None, or why the node stays on the CPU
            return None if sig.name == "RELU" else f"{sig.name}: not supported"
        def create_kernel(self, partition):      # the kernel that runs one partition
            return DeviceKernel(self, partition) # the default: the partition's own kernels, on a "device"

    it = workbench.Interpreter(model_path=..., experimental_delegates=[ReluOnly()])

What happens, step by step, as in TFLite (``tflite/core/subgraph.cc`` ModifyGraphWithDelegateImpl):

1. The interpreter's constructor applies each delegate in turn (ModifyGraphWithDelegate).  A delegate
   without ``allow_dynamic_tensors`` first has the graph prepared, and a graph with a dynamic-sized
   tensor is refused ("Attempting to use a delegate that only supports static-sized tensors …").
2. ``delegate_prepare(interpreter)`` looks at the *current* execution plan of every subgraph (a
   delegate applied after another sees the other's DELEGATE nodes, and does not take them): for each
   node the version check first (a stored version above ``max_version`` is refused in the GPU
   delegate's words, "Max version supported: N. Requested version M."), then ``supports``.  That is
   all a runtime delegate decides: which nodes it claims (GetSupportedNodes).  TFLite's own partitioner
   cuts the claimed nodes into partitions (``tflite/delegates/utils.cc`` GraphPartitionHelper, over
   ``tflite/graph_info.cc`` PartitionGraphIntoIndependentNodeSubsets) and keeps the largest ones
   (``max_partitions``, ``min_nodes``).  Another way of cutting — the TI paper's walk, the Edge TPU
   compiler's — belongs to an offline compiler: ``workbench partition --strategy tidl -o OUT.tflite``
   writes the compiled model (one custom op per partition), or ``mode="compiled"`` here runs a delegate
   whose partitions are those of that compile (see :data:`MODES`).
3. The interpreter replaces each partition by one DELEGATE node whose kernel comes from
   ``create_kernel``, and runs the kernel's init (ReplaceNodeSubsetsWithDelegateKernels →
   AddNodeWithParameters); it logs "Replacing N out of M node(s) …" (M: the current plan's size).
4. A delegate without ``allow_dynamic_tensors``: every node is prepared now (EnsureMemoryAllocations),
   so its kernels' prepare runs in the constructor; ``allocate_tensors`` then has nothing left to do.
   A delegate with it: ``allocate_tensors`` prepares.  ``invoke`` runs each kernel's invoke.

A failure in steps 2–4 removes every delegate applied so far (RemoveAllDelegates: the original
execution plan comes back) and the constructor raises a RuntimeError ending "Restored original
execution plan after delegate application failure."; a kernel failing in prepare reads "Node number N
(NAME) failed to prepare.", in invoke ``invoke`` raises "… failed to invoke.".  ``fallback_to_cpu=True``
— a teaching aid, not LiteRT's behaviour — logs what LiteRT would raise and goes on with the original
plan on the CPU.  ``resize_tensor_input`` undoes the delegates that need static shapes and the next
``allocate_tensors`` applies them again, for the new shapes (UndoAllDelegates / RedoAllDelegates).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import DelegateError
from ..partition import GraphView, NodeSubset, Partition, Plan, Target, execution_order, partition
from ..partition.plan import Reason
from ..schema.enums import BuiltinOperator

__all__ = ["Delegate", "DelegateError", "Delegation", "NodeSignature", "version_error", "FAIL_POINTS", "RESTORED",
           "replacing_line", "MODES", "OfflineStrategyError"]

FAIL_POINTS = ("prepare", "init", "invoke")
#: ``runtime``: the delegate claims nodes, TFLite's partitioner cuts them (LiteRT's runtime delegates);
#: ``compiled``: the partitions of an offline compile with the delegate's ``strategy`` (what running the
#: model written by ``workbench partition --strategy S -o OUT.tflite`` runs, the paper's custom op).
MODES = ("runtime", "compiled")


class OfflineStrategyError(DelegateError, ValueError):
    """A runtime delegate was given a strategy that only an offline compiler has."""


def offline_strategy_message(name: str, strategy: str) -> str:
    return (f"{name}: strategy {strategy!r} is an offline compile, not a runtime delegate's partitioning. "
            f"A LiteRT runtime delegate only claims nodes (GetSupportedNodes) and TFLite's partitioner cuts "
            f"them (tflite/delegates/utils.cc GraphPartitionHelper), so a runtime delegate uses strategy "
            f"'tflite'. To run the {strategy} compile: `workbench partition MODEL --target T --strategy "
            f"{strategy} -o OUT.tflite`, then run OUT.tflite; or ask for it here with mode='compiled'.")
# subgraph.cc, when ModifyGraphWithDelegate fails and the delegation is undone
RESTORED = "Restored original execution plan after delegate application failure."


@dataclass(frozen=True)
class NodeSignature:
    """What a delegate's ``supports`` sees of one node: its registration (op, name, stored version) and
    the graph around it (types, shapes, constants, options through ``graph``)."""

    graph: GraphView
    index: int

    @property
    def node(self):
        return self.graph.nodes[self.index]

    @property
    def op(self):
        return self.node.op

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def version(self) -> int:
        return self.node.version

    @property
    def is_custom(self) -> bool:
        return self.node.op == BuiltinOperator.CUSTOM

    def __repr__(self) -> str:
        return f"NodeSignature(node {self.index}: {self.name} v{self.version})"


def version_error(max_version: int, version: int) -> str:
    """The GPU delegate's CheckMaxSupportedOpVersion text (``model_builder_helper.cc``)."""
    return f"Max version supported: {max_version}. Requested version {version}."


def replacing_line(replaced: int, total: int, name: str, subsets: int, subgraph: int, sg_name: str) -> str:
    """The line LiteRT's subgraph.cc logs when a delegate takes nodes (LiteRT 2.3's wording; ``subsets``
    counts every node subset of the partitioning, those left on the CPU included)."""
    return (f"Replacing {replaced} out of {total} node(s) with delegate ({name}) node, yielding {subsets} "
            f"partitions for subgraph {subgraph} ({sg_name}).")


@dataclass
class Delegation:
    """What one delegate did to one interpreter: the plan of every subgraph it looked at, and the node
    each of its partitions became (``nodes[subgraph][k]``: the DELEGATE node of partition k, a dict)."""

    delegate: object
    plans: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)      # node → NodeError, from the last error.node_errors run

    def placements(self, subgraph: int = 0) -> tuple:
        plan = self.plans.get(subgraph)
        return () if plan is None else plan.placements

    def partition_of(self, subgraph: int, node_index: int):
        """(plan, partition) whose DELEGATE node is ``node_index``."""
        for k, idx in self.nodes.get(subgraph, {}).items():
            if idx == node_index:
                plan = self.plans[subgraph]
                return plan, plan.partitions[k]
        raise DelegateError(f"node {node_index} of subgraph {subgraph} is not a node of delegate "
                            f"{getattr(self.delegate, 'name', self.delegate)}")


class Delegate:
    """Base class: override ``supports`` and ``create_kernel`` (and ``max_version`` for the version check).

    Knobs as SimpleDelegateInterface::Options: ``max_partitions`` (≤ 0: all), ``min_nodes`` per partition
    (≤ 0: no minimum); ``deny``: node indices / op names kept on the CPU; ``mode`` (:data:`MODES`) and
    ``strategy``: a ``runtime`` delegate (the default) claims nodes and TFLite's partitioner
    (``strategy="tflite"``) cuts them — any other strategy raises :class:`OfflineStrategyError`;
    ``mode="compiled"`` cuts with ``strategy`` (``tflite``, ``tidl``, ``edgetpu``: see
    :mod:`workbench.partition.strategies`) as the offline compiler does, and runs those partitions;
    ``fallback_to_cpu``: a teaching aid — when applying the delegate fails, log what LiteRT would raise
    and go on with the original plan (every delegate removed, as LiteRT's RemoveAllDelegates) instead of
    raising; ``allow_dynamic_tensors``: see the class attribute.
    """

    name = "delegate"
    #: LiteRT's kTfLiteDelegateFlagsAllowDynamicTensors (``tflite/core/c/common.h``).  False: the delegate
    #: needs static shapes — it is refused on a graph with dynamic-sized tensors, the graph is prepared as
    #: it is applied, and a resize undoes and redoes it (subgraph.cc ModifyGraphWithDelegateImpl,
    #: ResizeInputTensor).  True: the kernels are prepared again whenever the shapes change.
    allow_dynamic_tensors: bool = False

    def __init__(self, *, max_partitions: int = 0, min_nodes: int = 0, deny=(), strategy: str = "tflite",
                 mode: str = "runtime", fallback_to_cpu: bool = False, allow_dynamic_tensors: bool | None = None):
        from ..partition import STRATEGIES

        if allow_dynamic_tensors is not None:
            self.allow_dynamic_tensors = bool(allow_dynamic_tensors)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        if mode == "runtime" and strategy != "tflite":
            raise OfflineStrategyError(offline_strategy_message(getattr(self, "name", type(self).__name__),
                                                                strategy))
        self.max_partitions = max_partitions
        self.min_nodes = min_nodes
        self.deny = tuple(deny)
        self.strategy = strategy
        self.mode = mode
        self.fallback_to_cpu = bool(fallback_to_cpu)
        self.log: list[str] = []
        self._plans: dict[int, Plan] = {}        # id(partition) → its plan
        self._device = None

    @property
    def device(self):
        """The simulated device this delegate's kernels run on (:class:`workbench.delegate.device.Device`)."""
        if self._device is None:
            from .device import Device

            self._device = Device(self.name)
        return self._device

    def plan_of(self, partition: Partition) -> Plan:
        """The plan ``partition`` belongs to (set by :meth:`delegate_prepare`)."""
        try:
            return self._plans[id(partition)]
        except KeyError:
            raise DelegateError(f"{self.name}: partition {partition.index} is not one of this delegate's "
                                f"plans") from None

    # -- the interface ---------------------------------------------------------------------------
    def max_version(self, sig: NodeSignature) -> int | None:
        """The highest version of ``sig``'s op the delegate knows; None (or -1) = no limit."""
        return None

    def supports(self, sig: NodeSignature) -> str | None:
        raise NotImplementedError(f"{type(self).__name__}.supports")

    def create_kernel(self, partition: Partition):
        """The kernel that runs ``partition`` (the default: :class:`DeviceKernel`, the partition's own
        kernels on a simulated device)."""
        from .device import DeviceKernel

        return DeviceKernel(self, partition)

    @property
    def target(self) -> Target:
        """The target whose cost figures estimate partition times (XNNPACK's), under the delegate's own
        name: it names the plan, the "offloaded to …" reasons and the partitions in ``viz.op_graph``."""
        from ..partition import load_target

        return replace(load_target("xnnpack"), name=self.name, _cache={})

    # -- prepare ----------------------------------------------------------------------------------
    def is_node_supported(self, sig: NodeSignature) -> str | None:
        """The version check, then ``supports``: None, or "OP: reason"."""
        mv = self.max_version(sig)
        if mv is not None and mv >= 0 and sig.version > mv:
            return Reason("version", f"{sig.name}: {version_error(mv, sig.version)}")
        return self.supports(sig)

    def prepare(self, model, subgraph: int = 0, *, refused=None, control_edges=(), plan_size=None) -> Plan:
        """DelegatePrepare for one subgraph: which nodes the delegate takes (every other node with its
        reason), cut by ``strategy``.  ``refused``: node → (code, why) it cannot be taken although supported;
        ``control_edges``: extra "b after a" pairs the cut must respect (the ``tflite`` strategy);
        ``plan_size``: the size of the execution plan the delegate looks at (for the log line)."""
        refused = refused or {}

        def check(g, i):
            why = self.is_node_supported(NodeSignature(g, i))
            if why is None and i in refused:
                code, text = refused[i]
                return Reason(code, f"{g.nodes[i].name}: {text}")
            return why

        kw = {}
        if control_edges and self.strategy == "tflite":
            g = GraphView(model, subgraph)
            kw = {"graph": g, "control_edges": tuple(g.control_edges) + tuple(control_edges)}
        plan = partition(model, self.target, self.strategy, subgraph=subgraph, deny=self.deny,
                         max_partitions=self.max_partitions, min_nodes=self.min_nodes, check=check, **kw)
        total = len(plan.placements) if plan_size is None else plan_size
        # simple_delegate.cc DelegatePrepare: the total is the execution plan's size
        self.log.append(f"{self.name} delegate: {plan.offloaded} nodes delegated out of {total} "
                        f"nodes with {len(plan.partitions)} partitions.")
        return plan

    def delegate_prepare(self, interpreter) -> Delegation:
        """ModifyGraphWithDelegate's callback: prepare every subgraph of ``interpreter`` and replace each
        partition by one DELEGATE node run by ``create_kernel``'s kernel.

        As LiteRT's delegates (``tflite/delegates/utils.cc`` GraphPartitionHelper, which calls
        GetExecutionPlan), it looks at the *current* execution plan: the nodes another delegate took
        before are refused ("already delegated"), its DELEGATE nodes stay where they are, and the node
        subsets handed to ReplaceNodeSubsetsWithDelegateKernels cover that plan."""
        delegation = Delegation(self)
        shaped = getattr(interpreter, "shaped_model", None)
        model = shaped() if callable(shaped) else interpreter.model
        registration = _Registration(self, delegation)
        shared = _variables_in_several_subgraphs(model) if self._keeps_variables_private() else {}
        for s in range(len(model.subgraphs)):
            current = _current_plan(interpreter, s)
            owners = _foreign_owners(current)
            refused = {i: ("delegated", f"already delegated to another delegate ({d.op_name}, node {d.index})")
                       for i, d in owners.items()}
            for i, why in shared.get(s, {}).items():
                refused.setdefault(i, why)
            edges = _through_foreign_nodes(GraphView(model, s), current) if owners else ()
            plan = self.prepare(model, s, refused=refused, control_edges=edges, plan_size=len(current))
            delegation.plans[s] = plan
            self._plans.update((id(p), plan) for p in plan.partitions)
            if not plan.partitions:
                continue
            subsets = plan_subsets(plan, current if owners else None)
            added = interpreter.replace_node_subsets(registration, self.name, subsets,
                                                     params={"delegate": self.name}, subgraph_index=s)
            # partition k's DELEGATE node (the subsets come in execution order, not in partition order)
            delegation.nodes[s] = dict(zip([sub.index for sub in subsets if sub.partition], added))
            # subgraph.cc ReplaceNodeSubsetsWithDelegateKernels: nodes_to_replace out of execution_plan_.size()
            line = replacing_line(plan.offloaded, len(current), self.name, len(subsets), s,
                                  model.subgraphs[s].name or "")
            self.log.append(line)
            interpreter.delegate_log.append(line)
        return delegation

    def _keeps_variables_private(self) -> bool:
        return getattr(self.target, "variables", "private") != "shared"

    # -- the same, without an interpreter ----------------------------------------------------------
    def interpreter(self, model, **kwargs):
        """``workbench.Interpreter(model=model, experimental_delegates=[self], **kwargs)``."""
        from ..interpreter import Interpreter

        return Interpreter(model=model, experimental_delegates=[self], **kwargs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _variables_in_several_subgraphs(model) -> dict:
    """subgraph → {VAR_HANDLE node: why it stays on the CPU} for the resource variables that more than one
    subgraph names (a CALL_ONCE initializer and the main graph, a WHILE body …).  A device that keeps
    its variables to itself would hold its own copy of such a variable, which the other subgraph never
    sees; the partitioner then keeps every node of the variable on the CPU with the handle."""
    where: dict = {}
    for s, sg in enumerate(model.subgraphs):
        for i, op in enumerate(sg.operators or ()):
            code = model.operator_codes[op.opcode_index]
            if max(int(code.builtin_code or 0), int(code.deprecated_builtin_code or 0)) == BuiltinOperator.VAR_HANDLE:
                where.setdefault(GraphView._var_key(model, op), []).append((s, i))
    out: dict = {}
    for key, places in where.items():
        subgraphs = sorted({s for s, _ in places})
        if len(subgraphs) < 2:
            continue
        name = f"{key[1]}/{key[2]}" if key[1] else key[2]
        for s, i in places:
            others = ", ".join(str(o) for o in subgraphs if o != s)
            out.setdefault(s, {})[i] = ("resource", f"resource variable '{name}' is also used by subgraph {others}; "
                                                    f"a device that keeps variables to itself would hold a copy the "
                                                    f"other never sees")
    return out


def _current_plan(interpreter, s: int) -> list:
    """The nodes of subgraph ``s``'s execution plan now (Interpreter.plan_nodes; an interpreter without it:
    the original nodes of its ``execution_plan``)."""
    nodes = getattr(interpreter, "plan_nodes", None)
    if callable(nodes):
        return nodes(s)
    from types import SimpleNamespace

    return [SimpleNamespace(index=i, op=None, params={}) for i in interpreter.execution_plan(s)]


def _foreign_owners(current) -> dict:
    """Original node → the DELEGATE node (of a delegate applied before) that replaced it."""
    out = {}
    for node in current:
        if node.op == BuiltinOperator.DELEGATE:
            for i in (node.params or {}).get("nodes_to_replace", ()):
                out[int(i)] = node
    return out


def _through_foreign_nodes(g: GraphView, current) -> tuple:
    """Control edges that make the new partitions convex in the current plan, where each DELEGATE node
    of an earlier delegate is ONE node: for such a node D (original nodes P), every node outside P feeding
    P runs before P's first node, and every node outside P reading from P after it.  (A path u → D → w
    exists in the plan whenever u feeds some node of P and some node of P feeds w; in the original graph
    the two halves need not meet, so without these edges a partition could hold u and w around D.)"""
    edges = []
    for node in current:
        if node.op != BuiltinOperator.DELEGATE:
            continue
        members = {int(i) for i in (node.params or {}).get("nodes_to_replace", ())}
        if not members:
            continue
        first = min(members)
        before, after = set(), set()
        for i in members:
            for t in g.nodes[i].inputs:
                if t >= 0 and g.producer[t] >= 0 and g.producer[t] not in members:
                    before.add(g.producer[t])
            for t in g.nodes[i].outputs:
                after.update(c for c in g.consumers[t] if c not in members)
        for a, b in g.control_edges:
            if a not in members and b in members:
                before.add(a)
            elif a in members and b not in members:
                after.add(b)
        edges += [(u, first) for u in sorted(before)] + [(first, w) for w in sorted(after)]
    return tuple(edges)


def _order_in_current_plan(plan: Plan, current) -> list:
    """The node subsets over the current execution plan (``current``: its nodes, DELEGATE nodes of other
    delegates included), as ReplaceNodeSubsetsWithDelegateKernels cuts it: runs of nodes this delegate
    leaves alone, and one subset per partition of ``plan``, in an order that runs (data and control
    edges; ties go to the item that comes first in the plan)."""
    import heapq

    g = plan.graph
    where = {p.node: p.partition for p in plan.placements}
    item_of: dict = {}          # node index in the plan → item
    first: dict = {}            # item → position of its first node in the plan
    members: dict = {}          # item → its nodes in plan order
    owner: dict = {}            # original node → item of the plan node holding it
    for pos, node in enumerate(current):
        k = where.get(node.index) if node.op != BuiltinOperator.DELEGATE else None
        item = ("p", k) if k is not None else ("n", node.index)
        item_of[node.index] = item
        first.setdefault(item, pos)
        members.setdefault(item, []).append(node)
        held = (node.params or {}).get("nodes_to_replace", ()) if node.op == BuiltinOperator.DELEGATE else ()
        for i in held or (node.index,):
            owner[int(i)] = item
    producer = {t: item_of[node.index] for node in current for t in node.outputs if t >= 0}
    succ: dict = {item: set() for item in first}
    for node in current:
        v = item_of[node.index]
        for t in node.inputs:
            u = producer.get(t)
            if u is not None and u != v:
                succ[u].add(v)
    for a, b in g.control_edges:
        u, v = owner.get(a), owner.get(b)
        if u is not None and v is not None and u != v:
            succ[u].add(v)
    indeg = {item: 0 for item in first}
    for u in succ:
        for v in succ[u]:
            indeg[v] += 1
    heap = [(first[item], item) for item in first if indeg[item] == 0]
    heapq.heapify(heap)
    out: list = []
    while heap:
        _, item = heapq.heappop(heap)
        if item[0] == "p":
            part = plan.partitions[item[1]]
            sub = NodeSubset(True, list(part.nodes), list(part.runtime_inputs), list(part.outputs))
            sub.index = item[1]
            out.append(sub)
        elif out and not out[-1].partition:
            out[-1].nodes.append(item[1])
        else:
            out.append(NodeSubset(False, [item[1]]))
        for v in sorted(succ[item], key=first.get):
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, (first[v], v))
    if sum(len(sub.nodes) if not sub.partition else 1 for sub in out) != len(first):
        stuck = sorted((first[i], i) for i in first if indeg[i] > 0)
        raise DelegateError(f"plan {plan.name}: its partitions cannot be ordered around the DELEGATE nodes of the "
                            f"delegates applied before (a cycle through {', '.join(str(i) for _, i in stuck[:4])})")
    return out


def plan_subsets(plan: Plan, current=None) -> list:
    """The plan as TFLite's node subsets, in an order that runs: runs of CPU nodes (non-partition subsets)
    and one partition subset per partition, with the tensors that cross at run time.  ``current``: the
    nodes of the execution plan when other delegates replaced nodes before (their DELEGATE nodes then
    stand in the CPU runs); None: the plan covers the subgraph's original nodes."""
    if current is not None:
        return _order_in_current_plan(plan, current)
    g = plan.graph
    where = [p.partition for p in plan.placements]
    out: list = []
    for kind, x in execution_order(g, where, name=f"plan {plan.name}"):
        if kind == "p":
            part = plan.partitions[x]
            sub = NodeSubset(True, list(part.nodes), list(part.runtime_inputs), list(part.outputs))
            sub.index = x            # which partition of the plan
            out.append(sub)
        elif out and not out[-1].partition:
            out[-1].nodes.append(x)
        else:
            out.append(NodeSubset(False, [x]))
    return out


class _Registration:
    """The registration every DELEGATE node of one delegate shares (TfLiteRegistration): ``init`` asks the
    delegate for the kernel of the node's partition (it runs as the node is added), the other calls are
    handed on to that kernel."""

    name = "delegate"
    foldable = False
    value_inputs = None

    def __init__(self, delegate: Delegate, delegation: Delegation):
        self.delegate = delegate
        self.delegation = delegation
        self._kernels: dict = {}         # (subgraph, node index) → (kernel, what its init returned, plan, partition)

    def _partition(self, node):
        """(plan, partition) of a DELEGATE node of this delegate, by the nodes it replaces."""
        plan = self.delegation.plans.get(node.subgraph)
        nodes = sorted(int(i) for i in (node.params or {}).get("nodes_to_replace", ()))
        for part in plan.partitions if plan is not None else ():
            if sorted(part.nodes) == nodes:
                return plan, part
        return self.delegation.partition_of(node.subgraph, node.index)

    def init(self, context, node):
        plan, part = self._partition(node)
        kern = self.delegate.create_kernel(part)
        init = getattr(kern, "init", None)
        user = init(context, node) if init is not None else None
        self._kernels[(node.subgraph, node.index)] = (kern, user, plan, part)
        return user

    def prepare(self, context, node):
        key = (node.subgraph, node.index)
        if key not in self._kernels:
            self.init(context, node)
        kern, user, plan, part = self._kernels[key]
        return _NodeData(kern, kern.prepare(context, node), user, plan, part)

    def invoke(self, context, node, data) -> None:
        data.kernel.invoke(context, node, data.data)

    def free(self, context, node, data) -> None:
        if data is not None:
            free = getattr(data.kernel, "free", None)
            if free is not None:
                free(context, node, data.data)

    def kernel_name(self, data, reference: bool = False) -> str:
        return f"{self.delegate.name}" + (f":P{data.partition.index}" if data is not None else "")


@dataclass(frozen=True, eq=False)
class _NodeData:
    kernel: object
    data: object
    user: object
    plan: Plan
    partition: Partition

    @property
    def impl(self) -> str:
        return getattr(self.data, "impl", "")

    @property
    def last_modeled_ms(self):
        return getattr(self.data, "last_modeled_ms", None)

    def __repr__(self) -> str:
        return repr(self.data)


def apply(delegate: Delegate, model, **kwargs):
    """(interpreter, delegation or None): ``model`` with ``delegate`` applied.  None when applying the
    delegate failed and it has ``fallback_to_cpu`` (the interpreter's ``delegate_log`` says why)."""
    from ..interpreter import Interpreter

    it = Interpreter(model=model, experimental_delegates=[delegate], **kwargs)
    return it, it.delegations[-1][1]

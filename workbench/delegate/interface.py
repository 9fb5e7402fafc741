"""The delegate interface, as TFLite's (``delegates/utils/simple_delegate.h``, ``delegates/utils.cc``).

A delegate in a few lines::

    class ReluOnly(Delegate):
        name = "relu-only"
        def supports(self, sig):                 # IsNodeSupported: None, or why the node stays on the CPU
            return None if sig.name == "RELU" else f"{sig.name}: not supported"
        def create_kernel(self, partition):      # the kernel that runs one partition
            return DeviceKernel(self, partition) # the default: the partition's own kernels, on a "device"

    it = workbench.Interpreter(model_path=..., experimental_delegates=[ReluOnly()])

What happens, step by step, as in TFLite:

1. The interpreter's constructor calls ``delegate_prepare(interpreter)`` (ModifyGraphWithDelegate).
2. For every subgraph, :meth:`Delegate.prepare` checks each node: the version check first (a stored
   version above ``max_version`` is refused in the GPU delegate's words, "Max version supported: N.
   Requested version M."), then ``supports``; then the partitioner cuts the graph (``strategy``: TFLite's
   own by default) and keeps the largest partitions (``max_partitions``, ``min_nodes``).
3. The interpreter replaces each partition by one DELEGATE node whose kernel comes from
   ``create_kernel`` (ReplaceNodeSubsetsWithDelegateKernels) and logs "Replacing N out of M node(s) …".
4. ``allocate_tensors`` runs each delegate kernel's init and prepare, ``invoke`` its invoke.

A failure in step 2 restores the original execution plan and the constructor raises a RuntimeError
("Restored original execution plan after delegate application failure."); a kernel failing in init or
prepare makes ``allocate_tensors`` raise ("Node number N (NAME) failed to prepare."), in invoke
``invoke`` ("Node number N (NAME) failed to invoke.").  ``fallback_to_cpu=True`` — a teaching aid, not
TFLite's behaviour — keeps the CPU plan instead of raising when prepare fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DelegateError
from ..partition import GraphView, NodeSubset, Partition, Plan, Target, execution_order, partition
from ..partition.plan import Reason
from ..schema.enums import BuiltinOperator

__all__ = ["Delegate", "DelegateError", "Delegation", "NodeSignature", "version_error", "FAIL_POINTS", "RESTORED",
           "replacing_line"]

FAIL_POINTS = ("prepare", "init", "invoke")
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
    (≤ 0: no minimum); ``deny``: node indices / op names kept on the CPU; ``strategy``: how the graph is
    cut (``tflite``, ``tidl``, ``edgetpu``: see :mod:`workbench.partition.strategies`);
    ``fallback_to_cpu``: when prepare fails, log it and keep the CPU plan instead of raising.
    """

    name = "delegate"

    def __init__(self, *, max_partitions: int = 0, min_nodes: int = 0, deny=(), strategy: str = "tflite",
                 fallback_to_cpu: bool = False):
        self.max_partitions = max_partitions
        self.min_nodes = min_nodes
        self.deny = tuple(deny)
        self.strategy = strategy
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
        """The target whose cost figures estimate partition times (and that names the plan)."""
        from ..partition import load_target

        return load_target("xnnpack")

    # -- prepare ----------------------------------------------------------------------------------
    def is_node_supported(self, sig: NodeSignature) -> str | None:
        """The version check, then ``supports``: None, or "OP: reason"."""
        mv = self.max_version(sig)
        if mv is not None and mv >= 0 and sig.version > mv:
            return Reason("version", f"{sig.name}: {version_error(mv, sig.version)}")
        return self.supports(sig)

    def prepare(self, model, subgraph: int = 0, *, refused=None) -> Plan:
        """DelegatePrepare for one subgraph: which nodes the delegate takes (every other node with its
        reason), cut by ``strategy``.  ``refused``: node → (code, why) it cannot be taken although supported."""
        refused = refused or {}

        def check(g, i):
            why = self.is_node_supported(NodeSignature(g, i))
            if why is None and i in refused:
                code, text = refused[i]
                return Reason(code, f"{g.nodes[i].name}: {text}")
            return why

        plan = partition(model, self.target, self.strategy, subgraph=subgraph, deny=self.deny,
                         max_partitions=self.max_partitions, min_nodes=self.min_nodes, check=check)
        self.log.append(f"{self.name} delegate: {plan.offloaded} nodes delegated out of {len(plan.placements)} "
                        f"nodes with {len(plan.partitions)} partitions.")
        return plan

    def delegate_prepare(self, interpreter) -> Delegation:
        """ModifyGraphWithDelegate's callback: prepare every subgraph of ``interpreter`` and replace each
        partition by one DELEGATE node run by ``create_kernel``'s kernel."""
        delegation = Delegation(self)
        model = interpreter.model
        registration = _Registration(self, delegation)
        shared = _variables_in_several_subgraphs(model) if self._keeps_variables_private() else {}
        for s in range(len(model.subgraphs)):
            planned = set(interpreter.execution_plan(s))
            refused = {i: ("delegated", "already delegated to another delegate")
                       for i in range(len(model.subgraphs[s].operators or ())) if i not in planned}
            for i, why in shared.get(s, {}).items():
                refused.setdefault(i, why)
            plan = self.prepare(model, s, refused=refused)
            delegation.plans[s] = plan
            self._plans.update((id(p), plan) for p in plan.partitions)
            if not plan.partitions:
                continue
            subsets = plan_subsets(plan)
            added = interpreter.replace_node_subsets(registration, self.name, subsets,
                                                     params={"delegate": self.name}, subgraph_index=s)
            # partition k's DELEGATE node (the subsets come in execution order, not in partition order)
            delegation.nodes[s] = dict(zip([sub.index for sub in subsets if sub.partition], added))
            line = replacing_line(plan.offloaded, len(plan.placements), self.name, len(subsets), s,
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


def plan_subsets(plan: Plan) -> list:
    """The plan as TFLite's node subsets, in an order that runs: runs of CPU nodes (non-partition subsets)
    and one partition subset per partition, with the tensors that cross at run time."""
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
    """The registration every DELEGATE node of one delegate shares (TfLiteRegistration): it asks the
    delegate for the kernel of the node's partition and hands the calls on to it."""

    name = "delegate"
    foldable = False
    value_inputs = None

    def __init__(self, delegate: Delegate, delegation: Delegation):
        self.delegate = delegate
        self.delegation = delegation

    def init(self, context, node):
        return None

    def prepare(self, context, node):
        plan, part = self.delegation.partition_of(node.subgraph, node.index)
        kern = self.delegate.create_kernel(part)
        init = getattr(kern, "init", None)
        user = init(context, node) if init is not None else None
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
    """(interpreter, delegation or None): ``model`` with ``delegate`` applied.  None when the delegate
    failed in prepare and has ``fallback_to_cpu`` (the interpreter's ``delegate_log`` says why)."""
    from ..interpreter import Interpreter

    it = Interpreter(model=model, experimental_delegates=[delegate], **kwargs)
    return it, it.delegations[-1][1]

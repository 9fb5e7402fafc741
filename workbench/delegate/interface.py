"""The delegate interface, as TFLite's (``delegates/utils/simple_delegate.h``, TFLITE_FACTS §5.3-5.4).

    class Mine(Delegate):
        def supports(self, sig): ...         # None, or why this node stays on the CPU
        def create_kernel(self, partition): ...

* ``name``;
* ``supports(sig)`` — does the delegate take this node?  None, or the reason it does not;
* ``prepare(model)`` — DelegatePrepare: the version check first (a node whose stored version is above
  what the delegate knows is refused with the GPU delegate's words, "Max version supported: N.
  Requested version M."), then ``supports``, then the partitioning and the largest-first selection;
* ``create_kernel(partition)`` — the kernel that runs one partition.

:func:`apply` runs a delegate over a model; when its prepare fails it restores the original execution
plan, as TFLite does, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import WorkbenchError
from ..interpreter import Interpreter
from ..interpreter.registry import BuiltinOpResolver
from ..partition import GraphView, Partition, Plan, Target, partition
from ..partition import compile as compile_plan
from ..schema.enums import BuiltinOperator
from .offload import Offload, read_options

__all__ = ["Delegate", "DelegateError", "NodeSignature", "apply", "version_error", "FAIL_POINTS", "RESTORED"]

FAIL_POINTS = ("prepare", "init", "invoke")
# subgraph.cc, when ModifyGraphWithDelegate fails and the delegation is undone
RESTORED = "Restored original execution plan after delegate application failure."


class DelegateError(WorkbenchError):
    """A delegate failed (in prepare, while creating its kernels, or while running one)."""


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


class Delegate:
    """Base class: override ``supports`` and ``create_kernel`` (and ``max_version`` for the version check).

    Knobs as SimpleDelegateInterface::Options: ``max_partitions`` (≤ 0: all), ``min_nodes`` per partition
    (≤ 0: no minimum); ``deny``: node indices / op names kept on the CPU.
    """

    name = "delegate"

    def __init__(self, *, max_partitions: int = 0, min_nodes: int = 0, deny=()):
        self.max_partitions = max_partitions
        self.min_nodes = min_nodes
        self.deny = tuple(deny)
        self.log: list[str] = []

    # -- the interface ---------------------------------------------------------------------------
    def max_version(self, sig: NodeSignature) -> int | None:
        """The highest version of ``sig``'s op the delegate knows; None (or -1) = no limit."""
        return None

    def supports(self, sig: NodeSignature) -> str | None:
        raise NotImplementedError(f"{type(self).__name__}.supports")

    def create_kernel(self, partition: Partition):
        raise NotImplementedError(f"{type(self).__name__}.create_kernel")

    @property
    def target(self) -> Target:
        """The target whose cost figures estimate partition times (and that names the plan)."""
        raise NotImplementedError(f"{type(self).__name__}.target")

    # -- prepare ----------------------------------------------------------------------------------
    def is_node_supported(self, sig: NodeSignature) -> str | None:
        """The version check, then ``supports``: None, or "OP: reason"."""
        mv = self.max_version(sig)
        if mv is not None and mv >= 0 and sig.version > mv:
            return f"{sig.name}: {version_error(mv, sig.version)}"
        return self.supports(sig)

    def prepare(self, model, subgraph: int = 0) -> Plan:
        """DelegatePrepare: which nodes the delegate takes (every other node with its reason), partitioned
        as TFLite does (greedy clustering, then the largest-first selection)."""
        plan = partition(model, self.target, "tflite", subgraph=subgraph, deny=self.deny,
                         max_partitions=self.max_partitions, min_nodes=self.min_nodes,
                         check=lambda g, i: self.is_node_supported(NodeSignature(g, i)))
        self.log.append(f"{self.name} delegate: {plan.offloaded} nodes delegated out of {len(plan.placements)} "
                        f"nodes with {len(plan.partitions)} partitions.")
        return plan

    # -- running ------------------------------------------------------------------------------------
    @property
    def custom_op(self) -> str:
        return f"workbench-delegate-{self.name}"

    def interpreter(self, model, subgraph: int = 0, plan: Plan | None = None, **kwargs):
        """A workbench Interpreter for ``model`` with every partition replaced by this delegate's kernel."""
        plan = self.prepare(model, subgraph) if plan is None else plan
        compiled = compile_plan(plan, custom_op_name=self.custom_op)
        resolver = BuiltinOpResolver()
        resolver.add_custom(self.custom_op, _DelegateNode(self, plan))
        return Interpreter(model=compiled, op_resolver=resolver, **kwargs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


@dataclass(frozen=True, eq=False)
class _NodeData:
    kernel: object
    data: object

    @property
    def impl(self) -> str:
        return getattr(self.data, "impl", "")


class _DelegateNode(Offload):
    """The registration of the delegate's custom op: each node asks the delegate for its partition's kernel."""

    name = "delegate"
    foldable = False

    def __init__(self, delegate: Delegate, plan: Plan):
        self.delegate = delegate
        self.plan = plan

    def prepare(self, context, node):
        k = int(read_options(bytes(node.operator.custom_options)).get("partition", 0))
        kern = self.delegate.create_kernel(self.plan.partitions[k])
        return _NodeData(kern, kern.prepare(context, node))

    def invoke(self, context, node, data) -> None:
        data.kernel.invoke(context, node, data.data)


def apply(delegate: Delegate, model, subgraph: int = 0, **kwargs):
    """(interpreter, plan or None): the model with ``delegate`` applied; when its prepare fails, the
    undelegated model, as TFLite restores the original execution plan (the log says so)."""
    try:
        plan = delegate.prepare(model, subgraph)
    except DelegateError as exc:
        delegate.log.append(str(exc))
        delegate.log.append(RESTORED)
        return Interpreter(model=model, **kwargs), None
    return delegate.interpreter(model, subgraph, plan=plan, **kwargs), plan

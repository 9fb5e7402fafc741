"""Delegates in the interpreter: the execution plan rewritten, undone on failure, and failures reported.

TFLite: ``Interpreter::ModifyGraphWithDelegate`` (``tensorflow/lite/core/interpreter.cc``) calls
``Subgraph::ModifyGraphWithDelegate`` (``tensorflow/lite/core/subgraph.cc``) on every subgraph.  The
delegate's ``Prepare`` chooses the nodes it supports and calls
``Subgraph::ReplaceNodeSubsetsWithDelegateKernels``, which cuts the execution plan into node subsets
and replaces each subset the delegate takes by one new node run by the delegate's kernel.  If the
delegate fails, ``Subgraph::UndoAllDelegates`` restores the original plan and TFLite logs "Restored
original execution plan after delegate application failure.".  A delegate kernel whose prepare or
invoke fails is reported as "Node number N (NAME) failed to prepare/invoke." (``Subgraph::OpPrepare``
and ``Subgraph::Invoke`` report it so).

Here the partitioning itself is the caller's (:mod:`workbench.partition`, which the interpreter does
not import); :func:`replace_node_subsets` takes the subsets already cut.  :func:`modify_graph_with_delegate`
takes the interpreter, the other functions one subgraph (``interpreter._Subgraph``).
"""

from __future__ import annotations

from ..errors import DelegateError
from ..schema.enums import BuiltinOperator
from .context import Node, Slots

__all__ = ["modify_graph_with_delegate", "replace_node_subsets", "snapshot", "restore", "delegate_failed",
           "RESTORED"]

RESTORED = "Restored original execution plan after delegate application failure."


def modify_graph_with_delegate(interp, delegate) -> None:
    """Apply one delegate to every subgraph of ``interp`` (see ``Interpreter.modify_graph_with_delegate``)."""
    prepare = getattr(delegate, "delegate_prepare", None)
    if not callable(prepare):
        raise ValueError(f"{delegate!r} is not a delegate: it has no delegate_prepare(interpreter) "
                         f"(make one with workbench.delegate.load_delegate or a workbench.delegate.Delegate "
                         f"subclass)")
    for k in range(len(interp.model.subgraphs)):
        interp._sg(k)
    snapshots = {k: snapshot(sg) for k, sg in interp._subgraphs.items()}
    try:
        result = prepare(interp)
    except Exception as exc:
        for k, snap in snapshots.items():
            restore(interp._subgraphs[k], snap)
        interp.delegate_log += [str(exc), RESTORED]
        if getattr(delegate, "fallback_to_cpu", False):     # a teaching aid: keep going on the CPU
            interp.delegations.append((delegate, None))
            return
        raise DelegateError(f"{exc}\n{RESTORED}") from exc
    interp.delegations.append((delegate, result))


def replace_node_subsets(sg, kernel, name: str, subsets, params=None) -> list[int]:
    """ReplaceNodeSubsetsWithDelegateKernels: rebuild the execution plan of subgraph ``sg`` from ``subsets``.

    ``subsets``: the current execution plan cut into node subsets, in an order that runs (objects
    with ``partition`` (bool), ``nodes``, ``inputs``, ``outputs``, as
    :class:`workbench.partition.NodeSubset`).  A non-partition subset keeps its nodes; each partition
    subset becomes one new node (op DELEGATE, named ``name``, run by ``kernel``) reading the subset's
    inputs and writing its outputs, appended to ``sg.nodes``; the replaced nodes stay in ``nodes`` and
    leave the plan.  Its ``params`` are TFLite's TfLiteDelegateParams: ``nodes_to_replace``,
    ``input_tensors``, ``output_tensors`` (and ``params``' entries).  Returns the new node indices."""
    if sg.allocated or sg.prepared:
        sg.free()
    planned = set(sg.execution_plan)
    seen: list[int] = []
    for sub in subsets:
        seen.extend(int(i) for i in sub.nodes)
    if sorted(seen) != sorted(planned) or len(seen) != len(set(seen)):
        raise DelegateError(f"delegate {name}: the node subsets do not cover the execution plan of subgraph "
                            f"{sg.index} exactly once (plan {len(planned)} nodes, subsets {len(seen)})")
    new_plan, added = [], []
    produced = {t for i in sg.execution_plan for t in sg.nodes[i].outputs if t >= 0}
    ready = set(range(len(sg.context.meta))) - produced     # inputs, constants, variables
    for sub in subsets:
        if not sub.partition:
            items = [sg.nodes[int(i)] for i in sub.nodes]
        else:
            index = len(sg.nodes)
            where = f"model.subgraphs[{sg.index}] (delegate node {index})"
            node = Node(sg.index, index, BuiltinOperator.DELEGATE, name, 1,
                        Slots(tuple(sub.inputs), f"{name} (node {index} of subgraph {sg.index}): inputs",
                              f"{where}.inputs"),
                        Slots(tuple(sub.outputs), f"{name} (node {index} of subgraph {sg.index}): outputs",
                              f"{where}.outputs"),
                        {"nodes_to_replace": tuple(int(i) for i in sub.nodes),
                         "input_tensors": tuple(sub.inputs), "output_tensors": tuple(sub.outputs),
                         **dict(params or {})}, None, None, None)
            sg.nodes.append(node)
            sg.delegate_kernels[index] = kernel
            added.append(index)
            items = [node]
        for node in items:
            missing = [t for t in node.inputs if t >= 0 and t not in ready]
            if missing:
                raise DelegateError(f"delegate {name}: node {node.index} ({node.op_name}) would read tensor "
                                    f"{missing[0]} ('{sg.context.name(missing[0])}') before anything writes "
                                    f"it: the node subsets are not in an order that runs")
            ready.update(t for t in node.outputs if t >= 0)
            new_plan.append(node.index)
    sg.execution_plan = new_plan
    return added


def snapshot(sg) -> tuple:
    """What :func:`restore` needs to undo delegates applied after this call: plan, delegate kernels, node count."""
    return list(sg.execution_plan), dict(sg.delegate_kernels), len(sg.nodes)


def restore(sg, snap) -> None:
    """Put back an execution plan taken with :func:`snapshot` (a failed delegate is undone)."""
    plan, kernels, n = snap
    sg.free()
    sg.execution_plan = list(plan)
    sg.delegate_kernels = dict(kernels)
    del sg.nodes[n:]


def delegate_failed(node, exc, verb: str) -> DelegateError:
    """A delegate kernel's failure as LiteRT reports it: "Node number N (NAME) failed to <verb>."."""
    return DelegateError(f"{exc}\nNode number {node.index} ({node.op_name}) failed to {verb}.")

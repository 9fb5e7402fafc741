"""Delegates in the interpreter: the execution plan rewritten, undone on failure or resize, and failures reported.

TFLite: ``Interpreter::ModifyGraphWithDelegate`` (``tflite/core/interpreter.cc``) calls
``Subgraph::ModifyGraphWithDelegate`` (``tflite/core/subgraph.cc``) on every subgraph.  The
delegate's ``Prepare`` looks at the *current* execution plan (``GetExecutionPlan``: a delegate applied
after another one sees the other's DELEGATE nodes), chooses the nodes it supports and calls
``Subgraph::ReplaceNodeSubsetsWithDelegateKernels``, which cuts the execution plan into node subsets
and replaces each subset the delegate takes by one new node run by the delegate's kernel; the kernel's
``init`` runs as the node is added (``AddNodeWithParameters``).  A delegate without the flag
``kTfLiteDelegateFlagsAllowDynamicTensors`` is applied in three steps (``ModifyGraphWithDelegateImpl``):
the ops are prepared first, and a graph with a dynamic-sized tensor is refused; then the delegate's
Prepare; then every node is prepared and the memory planned (``EnsureMemoryAllocations``), so that its
kernels' prepare runs in the interpreter's constructor, and the graph becomes immutable.

If the delegate fails, ``RemoveAllDelegates`` removes every delegate applied so far (the original
execution plan comes back) and TFLite logs "Restored original execution plan after delegate
application failure.".  ``ResizeInputTensor`` on an immutable graph undoes the delegates
(``UndoAllDelegates``) and the next ``AllocateTensors`` applies them again (``RedoAllDelegates``), so
they see the new shapes.  A delegate kernel whose prepare or invoke fails is reported as "Node number
N (NAME) failed to prepare/invoke." (``Subgraph::OpPrepare`` and ``Subgraph::Invoke`` report it so).

Here the partitioning itself is the caller's (:mod:`workbench.partition`, which the interpreter does
not import); :func:`replace_node_subsets` takes the subsets already cut.  :func:`modify_graph_with_delegate`
and the undo / redo functions take the interpreter, the other functions one subgraph
(``interpreter._Subgraph``).  One difference: the interpreter undoes and redoes delegates on all
subgraphs at once, and only subgraph 0 is prepared while a delegate is applied (the subgraphs that IF /
WHILE / CALL_ONCE call are prepared by their callers, for the shapes they are called with).
"""

from __future__ import annotations

from ..errors import DelegateError
from ..schema.enums import BuiltinOperator
from .context import Node, Slots

__all__ = ["modify_graph_with_delegate", "replace_node_subsets", "snapshot", "restore", "delegate_failed",
           "remove_all_delegates", "undo_all_delegates", "redo_all_delegates", "first_dynamic_tensor",
           "RESTORED", "STATIC_ONLY", "NO_DYNAMIC_AFTER_STATIC"]

RESTORED = "Restored original execution plan after delegate application failure."
# subgraph.cc ModifyGraphWithDelegateImpl, step 1 (a warning there, and the call fails)
STATIC_ONLY = ("Attempting to use a delegate that only supports static-sized tensors with a graph that has "
               "dynamic-sized tensors (tensor#{} is a dynamic-sized tensor).")
# subgraph.cc ModifyGraphWithDelegateImpl, step 3, case 2
NO_DYNAMIC_AFTER_STATIC = ("Cannot allow dynamic tensors due to previous delegation, resetting to original "
                           "execution plan.")
FALLBACK = ("{name}: fallback_to_cpu=True (a teaching aid): LiteRT raises a RuntimeError here; like LiteRT's "
            "RemoveAllDelegates, every delegate applied so far was removed and the original execution plan "
            "runs on the CPU.")


def _static_only(delegate) -> bool:
    """Without kTfLiteDelegateFlagsAllowDynamicTensors (``tflite/core/c/common.h``) a delegate needs
    static shapes: the graph is prepared when it is applied and then immutable."""
    return not getattr(delegate, "allow_dynamic_tensors", False)


def first_dynamic_tensor(sg) -> int | None:
    """The tensor LiteRT names when the prepared subgraph ``sg`` has a dynamic-sized tensor (subgraph.cc
    PrepareOpsStartingAt stops at the first node of the plan with a dynamic output), or None.

    The interpreter defers more nodes to invoke than LiteRT makes dynamic: it treats every READ_VARIABLE
    output as dynamic, where LiteRT's ``tflite/kernels/read_variable.cc`` Prepare marks only an output of
    rank 0 so; a node reading such an output is dynamic here only by that, and static in LiteRT."""
    ctx = sg.context
    dynamic = ctx.dynamic
    for node in sg.plan_nodes():
        outs = [t for t in node.outputs if t in dynamic]
        if not outs or any(t >= 0 and t in dynamic for t in node.inputs):
            continue             # static, or dynamic here only because an earlier node is (which was not in LiteRT)
        if node.op == BuiltinOperator.READ_VARIABLE and all(len(ctx.meta[t].shape or ()) > 0 for t in outs):
            continue
        return outs[0]
    return None


def modify_graph_with_delegate(interp, delegate) -> None:
    """Apply one delegate to every subgraph of ``interp`` (see ``Interpreter.modify_graph_with_delegate``),
    in the steps of subgraph.cc ModifyGraphWithDelegateImpl."""
    prepare = getattr(delegate, "delegate_prepare", None)
    if not callable(prepare):
        raise ValueError(f"{delegate!r} is not a delegate: it has no delegate_prepare(interpreter) "
                         f"(make one with workbench.delegate.load_delegate or a workbench.delegate.Delegate "
                         f"subclass)")
    redo_all_delegates(interp)
    for k in range(len(interp.model.subgraphs)):
        interp._sg(k)
    sg0 = interp._sg(0)
    static = _static_only(delegate)
    was_immutable = interp._immutable
    was_allocated = sg0.allocated
    interp._fresh = False
    # step 1: a delegate that needs static shapes prepares the ops first and refuses dynamic-sized tensors
    if static and not was_immutable:
        sg0.allocate()                   # a node failing here fails the call (nothing was changed yet)
        t = first_dynamic_tensor(sg0)
        if t is not None:
            _failed(interp, delegate, DelegateError(STATIC_ONLY.format(t)), remove=False)
            return
    if interp._original is None:         # the first delegate: remember the original execution plan
        interp._original = {k: snapshot(sg) for k, sg in interp._subgraphs.items()}
    # step 2: the delegate replaces the nodes it takes; step 3: leave the graph consistent
    try:
        result = prepare(interp)
        if static:
            interp._immutable = False
            sg0.allocate()               # EnsureMemoryAllocations: init and prepare every node, plan memory
            interp._immutable = True
        elif was_immutable:
            sg0.allocate()
            t = first_dynamic_tensor(sg0)
            if t is not None:
                raise DelegateError(NO_DYNAMIC_AFTER_STATIC)
        elif was_allocated:
            sg0.allocate()
    except Exception as exc:
        _failed(interp, delegate, exc, remove=True)
        return
    interp.delegations.append((delegate, result))
    interp._fresh = sg0.allocated


def _failed(interp, delegate, exc, *, remove: bool) -> None:
    """A delegate failed: ``remove`` (a delegate error, subgraph.cc reset_delegation_if_not_ok) removes every
    delegate and restores the original plan; then raise as LiteRT's constructor does, or, with the
    teaching aid ``fallback_to_cpu``, say what LiteRT would do and go on."""
    lines = [str(exc)]
    if remove:
        remove_all_delegates(interp)
        if str(exc) != NO_DYNAMIC_AFTER_STATIC:
            lines.append(RESTORED)
    interp.delegate_log += lines
    if getattr(delegate, "fallback_to_cpu", False):
        if not remove:                   # nothing of this delegate was applied; the others are removed too
            remove_all_delegates(interp)
        interp.delegate_log.append(FALLBACK.format(name=getattr(delegate, "name", delegate)))
        interp.delegations.append((delegate, None))
        return
    if isinstance(exc, DelegateError) and len(lines) == 1:
        raise exc
    raise DelegateError("\n".join(lines)) from exc


def remove_all_delegates(interp) -> None:
    """RemoveAllDelegates (subgraph.cc): undo every delegate and forget them; the original plan runs."""
    if interp._original is not None:
        for k, snap in interp._original.items():
            restore(interp._sg(k), snap)
    interp._original = None
    interp._immutable = False
    interp._undone = False
    interp._fresh = False
    interp.delegations = [(d, None) for d, _ in interp.delegations]


def undo_all_delegates(interp) -> None:
    """UndoAllDelegates (subgraph.cc, called by ResizeInputTensor when a delegate made the graph
    immutable): the original plan comes back; the delegates are applied again by the next allocation."""
    if interp._original is None or interp._undone:
        return
    for k, snap in interp._original.items():
        restore(interp._sg(k), snap)
    interp._original = None
    interp._immutable = False
    interp._undone = True
    interp._fresh = False


def redo_all_delegates(interp) -> None:
    """RedoAllDelegates (subgraph.cc, from AllocateTensors and ModifyGraphWithDelegate): apply again, in
    order, the delegates that a resize undid — they see the new shapes."""
    if not interp._undone:
        return
    interp._undone = False
    todo = [d for d, result in interp.delegations if result is not None]
    interp.delegate_log.append(f"Redoing {len(todo)} delegates.")
    interp.delegations = []
    for d in todo:
        modify_graph_with_delegate(interp, d)


def replace_node_subsets(sg, kernel, name: str, subsets, params=None) -> list[int]:
    """ReplaceNodeSubsetsWithDelegateKernels: rebuild the execution plan of subgraph ``sg`` from ``subsets``.

    ``subsets``: the current execution plan cut into node subsets, in an order that runs (objects
    with ``partition`` (bool), ``nodes``, ``inputs``, ``outputs``, as
    :class:`workbench.partition.NodeSubset`).  A non-partition subset keeps its nodes; each partition
    subset becomes one new node (op DELEGATE, named ``name``, run by ``kernel``) reading the subset's
    inputs and writing its outputs, appended to ``sg.nodes``; the replaced nodes stay in ``nodes`` and
    leave the plan.  Its ``params`` are TFLite's TfLiteDelegateParams: ``nodes_to_replace``,
    ``input_tensors``, ``output_tensors`` (and ``params``' entries).  The kernel's ``init`` runs as
    each node is added (subgraph.cc AddNodeWithParameters → OpInit).  Returns the new node indices."""
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
    for index in added:
        sg.delegate_init[index] = _init(sg, sg.nodes[index], kernel)
    return added


def _init(sg, node, kernel):
    init = getattr(kernel, "init", None)
    if init is None:
        return None
    try:
        return init(sg.context, node)
    except Exception as exc:
        if isinstance(exc, MemoryError):
            raise
        # TFLite's init cannot fail: a delegate kernel reports the error and its prepare fails
        raise delegate_failed(node, exc, "prepare") from exc


def snapshot(sg) -> tuple:
    """What :func:`restore` needs to undo delegates applied after this call: plan, delegate kernels and
    what their init returned, node count."""
    return list(sg.execution_plan), dict(sg.delegate_kernels), len(sg.nodes), dict(sg.delegate_init)


def restore(sg, snap) -> None:
    """Put back an execution plan taken with :func:`snapshot` (a failed delegate is undone)."""
    plan, kernels, n, inits = snap
    sg.free()
    sg.execution_plan = list(plan)
    sg.delegate_kernels = dict(kernels)
    sg.delegate_init = dict(inits)
    del sg.nodes[n:]


def delegate_failed(node, exc, verb: str) -> DelegateError:
    """A delegate kernel's failure as LiteRT reports it: "Node number N (NAME) failed to <verb>."."""
    return DelegateError(f"{exc}\nNode number {node.index} ({node.op_name}) failed to {verb}.")

"""Steps 1 and 2 of ``allocate_tensors``: a kernel for every node, then init and prepare each node in order.

TFLite: ``Subgraph::AllocateTensors`` calls ``Subgraph::PrepareOpsAndTensors``
(``tensorflow/lite/core/subgraph.cc``), which runs ``PrepareOpsStartingAt``: for each node of the
execution plan, in order, the registration's ``prepare`` fixes the output shapes and computes what
invoke needs (the workbench's frozen ``OpData``).  The kernel of each node was found earlier by
``InterpreterBuilder`` (``tensorflow/lite/core/interpreter_builder.cc``) through the op resolver, and
``init`` ran when the node was added (``Subgraph::AddNodeWithParameters``); the workbench does both
here, so that one call shows the whole sequence.

Two things TFLite does on the way, and this module with it:

* prepare stops at the first node that reads a *dynamic* tensor (one whose shape depends on values
  only known while invoking): such nodes are prepared during invoke (``PrepareOpsStartingAt`` is
  called again from ``Subgraph::Invoke``).  Here they run through :class:`Deferred`.
* a node whose inputs are all constants is evaluated once, now, and its outputs become read-only
  constants (TFLite's persistent read-only tensors: ``kTfLitePersistentRo``).  :func:`fold`.

Every function takes the subgraph being allocated (``interpreter._Subgraph``).
"""

from __future__ import annotations

from ..errors import ModelError, TensorError, UnsupportedOpError, WorkbenchError
from . import delegation, tracing
from .context import Context, DynamicValueNeeded, Node, is_string, new_array

__all__ = ["check_structure", "resolve", "prepare_nodes", "Deferred", "init_node", "prepare_node", "fold",
           "foldable"]


def check_structure(model, index: int, ctx: Context) -> None:
    """What every kernel takes for granted, checked once per subgraph (TFLite checks these while
    building its graph, ``InterpreterBuilder::ParseNodes`` and ``Subgraph::AddNodeWithParameters``):
    tensor indices in range, operator codes that exist, each tensor written by at most one node, and
    never a constant, a subgraph input or the node's own input."""
    sg = model.subgraphs[index]
    n = len(ctx.meta)
    base = f"model.subgraphs[{index}]"
    for field in ("inputs", "outputs"):
        for k, t in enumerate(getattr(sg, field) or ()):
            if not 0 <= t < n:
                raise ModelError(f"subgraph {index} {field[:-1]} {k} is tensor {t}, which does not exist "
                                 f"({n} tensors)", f"{base}.{field}[{k}]")
    codes = len(model.operator_codes or ())
    writer: dict[int, int] = {}
    graph_inputs = set(sg.inputs or ())
    later: dict[int, int] = {}              # tensor -> the first operator writing it
    for i, op in enumerate(sg.operators or ()):
        for t in op.outputs or ():
            later.setdefault(t, i)
    for i, op in enumerate(sg.operators or ()):
        where = f"{base}.operators[{i}]"
        if not 0 <= op.opcode_index < codes:
            raise ModelError(f"operator {i} of subgraph {index} has opcode_index {op.opcode_index}; the model has "
                             f"{codes} operator codes", f"{where}.opcode_index")
        ins = tuple(op.inputs or ())
        for k, t in enumerate(ins):
            if not -1 <= t < n:
                raise ModelError(f"operator {i} of subgraph {index}: input {k} is tensor {t}, which does not exist "
                                 f"({n} tensors; -1 marks an absent optional input)", f"{where}.inputs[{k}]")
            if t >= 0 and later.get(t, -1) >= i:
                raise ModelError(f"operator {i} of subgraph {index}: input {k} is tensor {t} ('{ctx.name(t)}'), which "
                                 f"operator {later[t]} writes later (operators must be in execution order)",
                                 f"{where}.inputs[{k}]")
        for k, t in enumerate(op.outputs or ()):
            if t == -1:
                continue
            what = None
            if not 0 <= t < n:
                what = f"tensor {t}, which does not exist ({n} tensors)"
            elif t in writer:
                what = f"tensor {t} ('{ctx.name(t)}'), which operator {writer[t]} writes already"
            elif ctx._file_constants[t] is not None:
                what = f"tensor {t} ('{ctx.name(t)}'), a constant of the model"
            elif t in graph_inputs:
                what = f"tensor {t} ('{ctx.name(t)}'), an input of the subgraph"
            elif t in ins:
                what = f"tensor {t} ('{ctx.name(t)}'), which is also its input"
            if what:
                raise ModelError(f"operator {i} of subgraph {index}: output {k} is {what}", f"{where}.outputs[{k}]")
            writer[t] = i


# step 1 ---------------------------------------------------------------------------------------------------
def resolve(sg) -> list:
    """A kernel for every node of the execution plan: a delegate's kernel for a DELEGATE node, else the
    resolver's for exactly (op, version).  Every missing pair is named in one UnsupportedOpError."""
    resolver = sg.interp.resolver
    kernels, errors = [], []
    for node in sg.plan_nodes():
        if node.index in sg.delegate_kernels:
            kernels.append(sg.delegate_kernels[node.index])
            continue
        try:
            kernels.append(resolver.find(node.op, node.version))
        except UnsupportedOpError as exc:
            errors.append((node, exc))
            kernels.append(None)
    if errors:
        node, exc = errors[0]
        more = ""
        others = sorted({f"{n.op_name} v{n.version}" for n, _ in errors[1:]} - {f"{node.op_name} v{node.version}"})
        if others:
            more = f"; also missing: {', '.join(others)}"
        raise UnsupportedOpError(f"{exc} — needed by node {node.index} of subgraph {sg.index}{more}")
    return kernels


# step 2 ---------------------------------------------------------------------------------------------------
def prepare_nodes(sg, kernels) -> list:
    """Init and prepare every node of the execution plan, in order; returns the nodes invoke will run, as
    (invoke function, node, prepared data, kernel).  Folded nodes are left out (their outputs became
    constants); deferred ones run a :class:`Deferred` that prepares them during invoke.  Fills
    ``sg.prepared``, ``sg.folded_nodes`` and ``sg.deferred_nodes``."""
    ctx = sg.context
    executed = []
    sg.folded_nodes = []
    sg.deferred_nodes = []
    for node, kernel in zip(sg.plan_nodes(), kernels):
        user = init_node(sg, node, kernel)
        if any(t < 0 for t in node.outputs):
            raise UnsupportedOpError(f"node {node.index} ({node.op_name}) has an absent (-1) output slot")
        # A node that reads a dynamic tensor, or needs a value only known at run time, is
        # prepared during invoke (TFLite: prepare stops at the first dynamic tensor).
        deferred = any(ctx.is_dynamic(t) for t in node.inputs)
        data = None
        if not deferred:
            try:
                data = prepare_node(sg, node, kernel)
            except DynamicValueNeeded:
                deferred = True
        if deferred:
            for t in node.outputs:
                ctx.declared.add(t)
                ctx.dynamic.add(t)
                ctx.kernel_sized.discard(t)
            sg.prepared.append((node, kernel, user, None))
            sg.deferred_nodes.append(node.index)
            executed.append((Deferred(sg, kernel, None), node, None, kernel))
            continue
        sg.prepared.append((node, kernel, user, data))
        fn = sg._invoke_fn(node, kernel, data)
        for t in node.outputs:
            if t not in ctx.declared:
                raise WorkbenchError(f"{kernel!r} did not set the shape of output '{ctx.name(t)}' of node "
                                     f"{node.index}")
        if foldable(sg, node, kernel):
            fold(sg, node, fn, data)
        else:
            executed.append((fn, node, data, kernel))
    return executed


def init_node(sg, node, kernel):
    """The kernel's ``init`` (TFLite: ``TfLiteRegistration::init``, called by AddNodeWithParameters).  A
    DELEGATE node's init ran when the delegate added it (:func:`delegation.replace_node_subsets`, as
    subgraph.cc ReplaceNodeSubsetsWithDelegateKernels → AddNodeWithParameters): what it returned is kept."""
    if node.index in sg.delegate_init:
        return sg.delegate_init[node.index]
    try:
        return kernel.init(sg.context, node)
    except Exception as exc:
        if node.index not in sg.delegate_kernels or isinstance(exc, MemoryError):
            raise
        # TFLite's init cannot fail: a delegate kernel reports the error and its prepare fails
        raise delegation.delegate_failed(node, exc, "prepare") from exc


def prepare_node(sg, node, kernel):
    """The kernel's ``prepare`` (TFLite: ``Subgraph::OpPrepare``); returns its frozen OpData."""
    try:
        return kernel.prepare(sg.context, node)
    except DynamicValueNeeded:
        raise
    except MemoryError as exc:
        raise TensorError(f"node {node.index} ({node.op_name}) of subgraph {sg.index}: prepare "
                          f"needs more memory than there is ({exc})") from None
    except Exception as exc:
        if node.index not in sg.delegate_kernels:
            raise
        raise delegation.delegate_failed(node, exc, "prepare") from exc


def foldable(sg, node: Node, kernel) -> bool:
    """May the node be evaluated once, now?  Its kernel allows it, its value inputs are all constants, and
    it writes no variable and no output of the subgraph."""
    ctx = sg.context
    if not getattr(kernel, "foldable", True):
        return False
    if any(ctx.meta[t].is_variable for t in node.outputs) or any(t in sg.outputs for t in node.outputs):
        return False
    slots = kernel.value_inputs
    if slots is None:
        slots = range(len(node.inputs))
    for s in slots:
        t = node.input(s)
        if t >= 0 and not ctx.is_constant(t):
            return False
    return True


def fold(sg, node, fn, data) -> None:
    """Evaluate a node whose inputs are all constants once, now; its outputs become constants."""
    ctx = sg.context
    try:
        for t in node.outputs:
            ctx.tensors[t] = new_array(ctx.shapes[t], ctx.dtypes[t])
        fn(ctx, node, data)
    except (MemoryError, ValueError) as exc:
        if isinstance(exc, WorkbenchError):
            raise
        raise TensorError(f"node {node.index} ({node.op_name}) of subgraph {sg.index}, evaluated once "
                          f"in allocate_tensors (constant inputs), needs more memory than there is "
                          f"({exc})") from None
    for t in node.outputs:
        arr = ctx.tensors[t]
        arr.flags.writeable = False
        ctx.constants[t] = arr
        ctx.folded.add(t)
    sg.folded_nodes.append(node.index)


class Deferred:
    """How a node prepared during invoke runs (it reads a dynamic tensor or needs a run-time value).

    Before each run it compares the node's input shapes and the run-time values its last
    ``prepare`` read (``context.value``) with the previous run; only when they differ is
    ``prepare`` called again and are the outputs resized (TFLite re-prepares the nodes after a
    dynamic tensor when that tensor was resized).
    """

    __slots__ = ("sg", "kernel", "fn", "data", "key", "reads", "prepares")

    def __init__(self, sg, kernel, fn):
        self.sg, self.kernel, self.fn = sg, kernel, fn
        self.data = None
        self.key = None
        self.reads: tuple = ()
        self.prepares = 0            # how many times prepare ran during invoke (for tests and notebooks)

    def _key(self, ctx, node) -> tuple:
        return (tuple(None if t < 0 else ctx.shapes[t] for t in node.inputs),
                tuple(tuple(ctx.tensors[t].reshape(-1).tolist()) if is_string(ctx.tensors[t].dtype)
                      else ctx.tensors[t].tobytes() for t in self.reads))

    def __call__(self, ctx, node, _data) -> None:
        if self.key is None or self._key(ctx, node) != self.key:
            self._prepare(ctx, node)
        self.fn(ctx, node, self.data)

    def _prepare(self, ctx, node) -> None:
        for t in node.outputs:
            ctx.kernel_sized.discard(t)
        ctx.runtime_values = True
        ctx.reads = []
        try:
            data = self.kernel.prepare(ctx, node)
        finally:
            ctx.runtime_values = False
        self.reads = tuple(ctx.reads)
        for t in node.outputs:
            if t not in ctx.kernel_sized:
                ctx.resize_output(t, ctx.shapes[t])
        self.data = data
        self.fn = self.sg._invoke_fn(node, self.kernel, data)
        self.key = self._key(ctx, node)
        self.prepares += 1

    def kernel_name(self, node=None) -> str:
        if not self.prepares:
            return f"{self.kernel.name} (prepared in invoke)"
        return tracing.label(self.sg, node, self.kernel, self.data) if node is not None else \
            self.kernel.kernel_name(self.data, self.sg.context.reference)

"""Runs of speed-layer nodes in one call from Python.

Each node of the plan is a Python call: the fast path's ``__call__`` looks up its tensors, decides its
thread count and calls the kernel library.  Inside a network those few microseconds are paid with cold
caches (the layer before streamed megabytes through them), and with two threads the second one waits
while the first runs Python.  Where consecutive nodes are each one call of a library function with
arguments that do not change between invokes (:meth:`FastPath.native_call`: a float convolution with a
constant filter, a depthwise convolution of the library, a same-shape float ADD / SUB / MUL, an int8
convolution whose loop the library holds, a float fully connected layer cut among threads, a float
softmax), the plan holds one :class:`NativeRun` for them
instead: the library's ``run_calls`` makes the calls in order from C, like XNNPACK's runtime walking its
operators.  The calls of the library's C loops (float convolution, float and int8 depthwise, ADD / SUB /
MUL) and of its numba kernels' rows (the int8 convolutions) are checked once when the run is made
(``prepare_run``), as XNNPACK sets up its operators: at each invoke only the loops run, not the checking of
their arguments, whose Python objects a layer that streamed megabytes has pushed out of the caches.

Nothing changes in what a node computes: a call that answers other than 0 or None (a raised guard, arrays the
library refused) stops the run there, the node's own ``__call__`` handles it as it always does, and the
run goes on from the next node.  The calls keep the tensors' arrays; a run checks that they are still the
context's before it starts and takes the current ones if not.  ``Subgraph.plan`` keeps one entry per node
(traces, steps and ``invoke_node`` use it); only ``invoke`` walks the runs.

A float convolution followed by the float ADD of its output and another tensor of its shape (a residual
connection: MobileNet v2's bottlenecks) is one call inside a run where nothing else can read the
convolution's output: the ADD is done in the convolution's epilogue, as each tile is stored
(``conv_f32``'s residual arguments), and the ADD's own call is skipped.  The values are the two nodes'
(the convolution's clamped output rounded to float32, then the ADD and its clamp, operands in the ADD's
order); the convolution's output tensor is then never written, so this happens only where it is read by
that ADD alone and its memory is shared with other tensors (it cannot be read after ``invoke`` anyway:
not with ``keep_intermediates``, nor for an input or output of the graph).  The memory plan keeps the
convolution's input alive through the ADD, apart from the ADD's output (:func:`residual_pairs`; the
arena table's ``Allocation.held_by``).  Why: MobileNet v2's ten
residual ADDs are small (7x7x160 to 56x56x24), so each ran on one thread while the other waited, ~50 µs
of a 4 ms invoke on two threads, and the thread that ran it then held the next layer's input in its
cache; done in the epilogue, each thread adds the rows it has just computed.
"""

from __future__ import annotations

import numpy as np

from ..perf import precompiled


def run_calls_function():
    """The kernel library's ``run_calls``, or None (no library, or one built before it)."""
    return precompiled.native("run_calls", lambda fn: fn((), 0) == 0)


def prepare_run_function():
    """The kernel library's ``prepare_run`` (the calls with the arguments of its C loops checked once; what
    it answers goes to ``run_calls`` in their place), or None: no library, or one built before it."""
    return precompiled.native("prepare_run", lambda fn: fn(()) is not None)


def prepared_calls(run) -> tuple:
    """For each call of ``run`` (a :class:`NativeRun`), whether it runs from the library's prepared structure,
    with no Python between it and the next (the library's ``prepared_calls``); all False without a capsule."""
    fn = precompiled.native("prepared_calls", lambda fn: True)
    if fn is None or run.calls is None or run.prepared is run.calls:
        return (False,) * len(run.entries)
    return fn(run.prepared)


def _same_arrays_python(tensors: list, indices: tuple, arrays: tuple) -> bool:
    return all(tensors[t] is a for t, a in zip(indices, arrays))


def same_arrays_function():
    """``same_arrays(tensors, indices, arrays)``: the library's (C) where it has it, else the same loop in
    Python (~20 µs for MobileNet v2's 241 arrays, paid while a second thread waits)."""
    fn = precompiled.native("same_arrays", lambda fn: fn([None], (0,), (None,)) is True)
    return fn if fn is not None else _same_arrays_python


SKIPPED = (int, ())
"""The call that stands for an ADD done in the convolution before it: ``int()`` answers 0 (done)."""


def _readers(plan: list) -> dict:
    """tensor → how many inputs of the plan's nodes it is."""
    readers: dict = {}
    for _, node, _ in plan:
        for t in node.inputs:
            readers[t] = readers.get(t, 0) + 1
    return readers


def _residual_output(conv_entry, add_entry):
    """The output tensor of a float convolution (its fast path can take an ADD in its epilogue) that the
    float ADD right after it adds to another tensor, or None."""
    (conv, conv_node, _), (add, add_node, _) = conv_entry, add_entry
    add_clamp = getattr(add, "add_clamp", None)
    if (getattr(conv, "with_residual", None) is None or add_clamp is None or add_clamp() is None
            or add_node.op_name != "ADD" or len(add_node.inputs) != 2 or not conv_node.outputs
            or not conv_node.inputs):
        return None
    t = conv_node.outputs[0]
    return t if list(add_node.inputs).count(t) == 1 else None


def residual_call(entries: list, calls: list, i: int, context, hidden: frozenset):
    """The call of convolution ``entries[i]`` that also does the float ADD ``entries[i + 1]`` of its output
    and a residual (see the module's docstring), or None where they cannot be one call."""
    t = _residual_output(entries[i], entries[i + 1])
    if t is None or t not in hidden:
        return None
    (conv, conv_node, _), (add, add_node, _) = entries[i], entries[i + 1]
    first = add_node.inputs[0] != t                       # the residual is the ADD's first operand
    tensors = context.tensors
    x, y = tensors[conv_node.inputs[0]], tensors[t]
    res, out = tensors[add_node.inputs[0 if first else 1]], tensors[add_node.outputs[0]]
    if not all(isinstance(a, np.ndarray) and a.dtype == np.float32 and a.shape == y.shape for a in (res, out)):
        return None
    # out may sit where the convolution's input was (its life ends there); the residual read as out is
    # written: out itself, or apart
    if np.may_share_memory(out, x) or (res.ctypes.data != out.ctypes.data and np.may_share_memory(res, out)):
        return None
    return conv.with_residual(calls[i], out, res, np.array([*add.add_clamp(), 1.0 if first else 0.0], np.float32))


def residual_pairs(plan: list, outputs) -> dict:
    """{position of an ADD in ``plan``: the input tensor of the convolution right before it} for every
    float convolution whose output only that ADD reads (and is no output of the graph) and which could
    do the ADD in its epilogue.  The memory planner keeps that input alive through the ADD
    (``interpreter._Subgraph._allocate``), so that the ADD's output, which the fused call writes while it
    still reads the input, never lands on it.  Empty without the library's ``run_calls``."""
    if run_calls_function() is None:
        return {}
    readers, pairs = _readers(plan), {}
    for k in range(1, len(plan)):
        t = _residual_output(plan[k - 1], plan[k])
        if t is not None and readers.get(t, 0) == 1 and t not in outputs:
            pairs[k] = plan[k - 1][1].inputs[0]
    return pairs


class NativeRun:
    """Nodes ``entries`` ((fast path, node, data) of the plan, two or more) as one call of ``run_calls``;
    ``hidden``: the tensors no one can read after ``invoke`` (see :func:`runs`)."""

    __slots__ = ("run_calls", "same_arrays", "prepare", "entries", "hidden", "calls", "prepared", "fused", "indices",
                 "arrays", "failed")
    name = "native run"

    def __init__(self, run_calls, entries: list, context, hidden: frozenset = frozenset()):
        self.run_calls, self.entries, self.hidden = run_calls, entries, hidden
        self.same_arrays = same_arrays_function()
        self.prepare = prepare_run_function()
        self.failed = None          # the node whose call raised, for the error invoke reports
        self.take(context)

    def take(self, context) -> None:
        """The calls with the context's current arrays, and which arrays they hold; no calls (each node
        then runs on its own) when a node's arrays no longer make one call (a view that would copy).
        ``fused``: the indices of convolutions whose call also does the ADD after them."""
        calls = [fn.native_call(context, node) for fn, node, _ in self.entries]
        fused = set()
        if not any(call is None for call in calls):
            for i in range(len(calls) - 1):
                if i - 1 in fused:
                    continue
                call = residual_call(self.entries, calls, i, context, self.hidden)
                if call is not None:
                    calls[i], calls[i + 1] = call, SKIPPED
                    fused.add(i)
        self.fused = frozenset(fused)
        self.calls = None if any(call is None for call in calls) else tuple(calls)
        # what run_calls walks: the library's C loops among the calls with their arguments checked once, the
        # structures they fill pointing into this take's arrays (a new take, new ones)
        self.prepared = self.calls if self.calls is None or self.prepare is None else self.prepare(self.calls)
        self.indices = tuple(dict.fromkeys(t for _, node, _ in self.entries
                                           for t in (*node.inputs, *node.outputs) if t >= 0))
        self.arrays = tuple(context.tensors[t] for t in self.indices)

    def __call__(self, context, node, data) -> None:
        if not self.same_arrays(context.tensors, self.indices, self.arrays):
            self.take(context)                  # re-allocated, or a dynamic tensor: the current arrays
        self.failed = None
        if self.calls is None:
            for fn, nd, dt in self.entries:
                self.failed = nd
                fn(context, nd, dt)
            self.failed = None
            return
        count, start = len(self.calls), 0
        try:
            while True:
                i = self.run_calls(self.prepared, start)
                if i >= count:
                    return
                fn, nd, dt = self.entries[i]
                self.failed = nd
                fn(context, nd, dt)             # its own path: the fallback for a refusal or a raised guard
                start = i + 1
                if i in self.fused:             # and the ADD it was to do: its own path too
                    fn, nd, dt = self.entries[start]
                    self.failed = nd
                    fn(context, nd, dt)
                    start += 1
                self.failed = None
        except Exception:
            if self.failed is None:             # inside run_calls: which call, the nodes say again one by one
                self.failed = self._failing(context, start)
            raise

    def _failing(self, context, start: int):
        """After an error inside ``run_calls`` from ``start``: the first node from there that raises again
        when it runs on its own (the nodes before it write what they wrote)."""
        for fn, node, data in self.entries[start:]:
            try:
                fn(context, node, data)
            except Exception:
                return node
        return self.entries[start][1]

    def __repr__(self) -> str:
        return f"<native run of nodes {[node.index for _, node, _ in self.entries]}>"


def runs(plan: list, context, unread: frozenset = frozenset()) -> list:
    """``plan`` ((fast path, node, data) per node) with every run of two or more consecutive nodes that
    are one library call each replaced by a :class:`NativeRun` (entry (run, first node, None)); the plan
    itself when the library has no ``run_calls``.  ``unread``: tensors that cannot be read after ``invoke``
    (their memory is shared, and they are no input or output of the graph); of those, the ones a single
    node of the plan reads may be left unwritten by a run (a convolution's output that the ADD after it
    takes in the convolution's epilogue)."""
    run_calls = run_calls_function()
    if run_calls is None:
        return list(plan)
    readers = _readers(plan)
    hidden = frozenset(t for t in unread if readers.get(t, 0) == 1)
    out, pending = [], []

    def flush():
        if len(pending) >= 2:
            out.append((NativeRun(run_calls, list(pending), context, hidden), pending[0][1], None))
        else:
            out.extend(pending)
        pending.clear()

    for entry in plan:
        fn, node = entry[0], entry[1]
        native = getattr(fn, "native_call", None)
        if (native is not None and not any(context.is_dynamic(t) for t in (*node.inputs, *node.outputs) if t >= 0)
                and native(context, node) is not None):
            pending.append(entry)
        else:
            flush()
            out.append(entry)
    flush()
    return out

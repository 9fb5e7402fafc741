"""Runs of speed-layer nodes in one call from Python.

Each node of the plan is a Python call: the fast path's ``__call__`` looks up its tensors, decides its
thread count and calls the kernel library.  Inside a network those few microseconds are paid with cold
caches (the layer before streamed megabytes through them), and with two threads the second one waits
while the first runs Python.  Where consecutive nodes are each one call of a library function with
arguments that do not change between invokes (:meth:`FastPath.native_call`: a float convolution with a
constant filter, a depthwise convolution of the library, a same-shape float ADD / SUB / MUL, an int8
convolution whose loop the library holds), the plan holds one :class:`NativeRun` for them
instead: the library's ``run_calls`` makes the calls in order from C, like XNNPACK's runtime walking its
operators.

Nothing changes in what a node computes: a call that answers other than 0 or None (a raised guard, arrays the
library refused) stops the run there, the node's own ``__call__`` handles it as it always does, and the
run goes on from the next node.  The calls keep the tensors' arrays; a run checks that they are still the
context's before it starts and takes the current ones if not.  ``Subgraph.plan`` keeps one entry per node
(traces, steps and ``invoke_node`` use it); only ``invoke`` walks the runs.
"""

from __future__ import annotations

from ..perf import precompiled


def run_calls_function():
    """The kernel library's ``run_calls``, or None (no library, or one built before it)."""
    return precompiled.native("run_calls", lambda fn: fn((), 0) == 0)


def _same_arrays_python(tensors: list, indices: tuple, arrays: tuple) -> bool:
    return all(tensors[t] is a for t, a in zip(indices, arrays))


def same_arrays_function():
    """``same_arrays(tensors, indices, arrays)``: the library's (C) where it has it, else the same loop in
    Python (~20 µs for MobileNet v2's 241 arrays, paid while a second thread waits)."""
    fn = precompiled.native("same_arrays", lambda fn: fn([None], (0,), (None,)) is True)
    return fn if fn is not None else _same_arrays_python


class NativeRun:
    """Nodes ``entries`` ((fast path, node, data) of the plan, two or more) as one call of ``run_calls``."""

    __slots__ = ("run_calls", "same_arrays", "entries", "calls", "indices", "arrays", "failed")
    name = "native run"

    def __init__(self, run_calls, entries: list, context):
        self.run_calls, self.entries = run_calls, entries
        self.same_arrays = same_arrays_function()
        self.failed = None          # the node whose call raised, for the error invoke reports
        self.take(context)

    def take(self, context) -> None:
        """The calls with the context's current arrays, and which arrays they hold; no calls (each node
        then runs on its own) when a node's arrays no longer make one call (a view that would copy)."""
        calls = [fn.native_call(context, node) for fn, node, _ in self.entries]
        self.calls = None if any(call is None for call in calls) else tuple(calls)
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
                i = self.run_calls(self.calls, start)
                if i >= count:
                    return
                fn, nd, dt = self.entries[i]
                self.failed = nd
                fn(context, nd, dt)             # its own path: the fallback for a refusal or a raised guard
                self.failed = None
                start = i + 1
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


def runs(plan: list, context) -> list:
    """``plan`` ((fast path, node, data) per node) with every run of two or more consecutive nodes that
    are one library call each replaced by a :class:`NativeRun` (entry (run, first node, None)); the plan
    itself when the library has no ``run_calls``."""
    run_calls = run_calls_function()
    if run_calls is None:
        return list(plan)
    out, pending = [], []

    def flush():
        if len(pending) >= 2:
            out.append((NativeRun(run_calls, list(pending), context), pending[0][1], None))
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

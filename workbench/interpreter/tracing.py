"""Watching invoke: the nodes one by one (``steps``), their times (``profile``), one node alone (``invoke_node``).

TFLite's ``Subgraph::Invoke`` (``tensorflow/lite/core/subgraph.cc``) wraps every node in a
``TFLITE_SCOPED_TAGGED_OPERATOR_PROFILE`` scope: with a profiler installed
(``tensorflow/lite/profiling/profiler.h``) each node's time is recorded under its op name, and the
benchmark tool's op profiling (``tensorflow/lite/profiling/profile_summarizer.cc``) sums these per node
and per op type.  ``Interpreter::SetProfiler`` installs one; without one the scope costs nothing.

The workbench keeps the same rule: ``_Subgraph.invoke`` runs the plain node loop and builds no events;
the functions here run the same execution plan in loops of their own.  What they record is defined in
:mod:`workbench.interpreter.trace` (``StepEvent``, ``Profile``).  Every function takes one subgraph
(``interpreter._Subgraph``).
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import TensorError
from ..perf import blas as _blas
from ..schema.strings import string_array
from . import fast, prepare
from .context import is_string
from .trace import StepEvent, build_profile

__all__ = ["label", "steps", "traced", "profile", "invoke_node"]


def label(sg, node, kernel, data) -> str:
    """The kernel's name as traces and profiles show it: ``CONV_2D/im2col+blas(float32, exact)`` for a
    fast path, ``CONV_2D/reference`` for the teaching layer where a fast path exists."""
    path = sg.fast.get(node.index)
    if path is not None:
        return f"{kernel.name}/{path.name}"
    if sg.context.reference and data is not None and fast.has_fast_path(node, data):
        return f"{kernel.name}/reference"
    return kernel.kernel_name(data, sg.context.reference)


def steps(sg):
    """Run the subgraph node by node, yielding a :class:`StepEvent` after each executed node."""
    sg.check_allocated()
    interp = sg.interp
    _blas.set_threads(interp.blas_threads)
    interp._stack = []
    return traced(sg)


def traced(sg):
    """Run node by node; yield the events of nested subgraphs, then the node's own event.

    While a node runs, ``interp._sink`` collects the events of what it calls (a control-flow kernel's
    subgraphs: ``_Subgraph.invoke`` comes back here when it sees a sink) and of a delegate's device
    (``Interpreter.emit``); ``interp._stack`` is the chain of running callers."""
    interp = sg.interp
    ctx = sg.context
    tensors = ctx.tensors
    clock = time.perf_counter
    stack = interp._stack
    deferred = prepare.Deferred
    for (fn, node, data), kname in zip(sg.plan, sg.plan_kernels):
        sink: list = []
        outer = interp._sink
        interp._sink = sink
        stack.append((sg.index, node.index))
        t0 = clock()
        try:
            fn(ctx, node, data)
        finally:
            elapsed = (clock() - t0) * 1000.0
            stack.pop()
            interp._sink = outer
        if isinstance(fn, deferred):
            data, kname = fn.data, fn.kernel_name(node)
        ins = tuple(None if t < 0 else np.array(tensors[t]) for t in node.inputs)
        outs = tuple(np.array(tensors[t]) for t in node.outputs)
        yield from sink
        if node.index in sg.delegate_kernels:      # its kernel says what its last run was modeled to take
            yield StepEvent(sg.index, node.index, node.op_name, node.version, kname, data, ins, outs,
                            tuple(node.inputs), tuple(node.outputs), elapsed, tuple(stack), kind="delegate",
                            modeled_ms=getattr(data, "last_modeled_ms", None))
            continue
        yield StepEvent(sg.index, node.index, node.op_name, node.version, kname, data, ins, outs,
                        tuple(node.inputs), tuple(node.outputs), elapsed, tuple(stack))


def profile(sg, runs: int, warmup: int):
    """Time every executed node over ``runs`` invokes (after ``warmup`` plain ones); a :class:`Profile`."""
    sg.check_allocated()
    _blas.set_threads(sg.interp.blas_threads)
    ctx = sg.context
    clock = time.perf_counter
    for _ in range(warmup):
        sg.invoke()
    samples = []
    for _ in range(runs):
        row = []
        for fn, node, data in sg.plan:
            t0 = clock()
            fn(ctx, node, data)
            row.append(clock() - t0)
        samples.append(row)
    rows = [(node.index, node.op_name, kname, ctx.shapes[node.outputs[0]] if node.outputs else ())
            for (fn, node, data), kname in zip(sg.plan, sg.plan_kernels)]
    return build_profile(runs, samples, rows)


def invoke_node(sg, node_index: int, feed: dict) -> tuple:
    """Run one executed node on the values in ``feed`` ({tensor id: array}); copies of its outputs."""
    sg.check_allocated()
    ctx = sg.context
    for fn, node, data in sg.plan:
        if node.index == node_index:
            break
    else:
        folded = " (it was evaluated once in allocate_tensors: its inputs are constants)" \
            if node_index in sg.folded_nodes else ""
        raise TensorError(f"node {node_index} is not an executed node of subgraph {sg.index}{folded}")
    for t in node.inputs:
        if t < 0 or ctx.constants[t] is not None:
            continue
        if t not in feed:
            raise TensorError(f"invoke_node({node_index}): no value for input tensor {t} ('{ctx.name(t)}')")
        v = feed[t]
        if ctx.dtypes[t] is None:
            raise TensorError(f"invoke_node({node_index}): input tensor {t} ('{ctx.name(t)}') has type "
                              f"{ctx.type_name(t)}, which this interpreter cannot hold")
        if is_string(ctx.dtypes[t]):
            v = string_array(v, f"invoke_node: tensor {t}")
        v = np.asarray(v, ctx.dtypes[t])
        if t in ctx.dynamic:
            # made while invoking (READ_VARIABLE, a RESHAPE to a run-time shape, ...): it may have no
            # array yet, or another shape; the value given decides, as the producing node would
            target = ctx.resize_output(t, v.shape)
        else:
            target = ctx.tensors[t]
            if tuple(v.shape) != tuple(target.shape):
                raise TensorError(f"invoke_node({node_index}): input tensor {t} ('{ctx.name(t)}') has shape "
                                  f"{list(target.shape)}; the value given has shape {list(v.shape)}")
        np.copyto(target, v)
    fn(ctx, node, data)
    return tuple(np.array(ctx.tensors[t]) for t in node.outputs)

"""Steps 3 and 4 of ``allocate_tensors``: tensor lifetimes, then one arena for the tensors invoke writes.

TFLite does this in ``tensorflow/lite/arena_planner.cc``: ``ArenaPlanner::PlanAllocations`` walks the
execution plan and records, for every tensor, the first node that writes it and the last node that
reads it; ``ArenaPlanner::ExecuteAllocations`` then gives each tensor an offset in one arena so that
tensors whose lifetimes do not overlap share bytes (``tensorflow/lite/simple_memory_arena.cc``).
``Subgraph::AllocateTensors`` (``tensorflow/lite/core/subgraph.cc``) calls the planner after every node
is prepared, and resets variable tensors (``ResetVariableTensor``) once they have their memory.

Here :func:`lifetimes` is PlanAllocations, :func:`plan_arena` is ExecuteAllocations; the placement
itself (greedy by size) is :func:`workbench.interpreter.arena.plan`.  Both functions take the subgraph
(``interpreter._Subgraph``) being allocated.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TensorError, UnsupportedOpError
from . import arena
from .context import Context, is_string, new_array

__all__ = ["lifetimes", "plan_arena", "reset_variable"]


def lifetimes(sg, executed) -> dict:
    """Tensor → [first, last] position in ``executed`` (the (invoke function, node, data, kernel) rows
    invoke will run) where it is used.  Constants and dynamic tensors are not planned; graph inputs and
    variables live through the whole invoke (-1 … n), outputs until its end (n)."""
    ctx = sg.context
    n = len(executed)
    life: dict[int, list[int]] = {}

    def touch(t, k):
        if t < 0 or ctx.constants[t] is not None or t in ctx.dynamic:
            return
        lo_hi = life.setdefault(t, [k, k])
        lo_hi[0] = min(lo_hi[0], k)
        lo_hi[1] = max(lo_hi[1], k)

    for t in sg.inputs:      # inputs stay intact for the whole invoke (TFLite preserves them too)
        touch(t, -1)
        touch(t, n)
    for k, (_, node, _, _) in enumerate(executed):
        for t in node.inputs:
            touch(t, k)
        for t in node.outputs:
            touch(t, k)
    for t in sg.outputs:
        touch(t, n)
    for t, meta in enumerate(ctx.meta):
        if meta.is_variable:
            touch(t, -1)
            touch(t, n)
    return life


def plan_arena(sg, life: dict, held: dict | None = None) -> None:
    """Place the planned tensors in one arena (``arena.plan``: offsets shared by tensors whose lifetimes
    do not overlap, unless ``keep_intermediates``), give every tensor its array, reset variables.
    Sets ``sg.arena_plan`` (the table a notebook prints) and ``sg._arena`` (the bytes)."""
    ctx = sg.context
    nbytes = {}
    strings = []        # STRING tensors: variable-size, each its own object array (not in the plan)
    for t in life:
        if ctx.dtypes[t] is None:
            raise UnsupportedOpError(f"tensor '{ctx.name(t)}' has type {ctx.type_name(t)}, which this "
                                     f"interpreter cannot hold")
        if is_string(ctx.dtypes[t]):
            strings.append(t)
            continue
        nbytes[t] = math.prod(ctx.shapes[t]) * ctx.dtypes[t].itemsize      # Python ints: no wrap-around
    for t in strings:
        del life[t]
    sg.arena_plan = arena.plan({t: tuple(v) for t, v in life.items()}, nbytes,
                               reuse=not sg.interp.keep_intermediates, held=held)
    try:
        sg._arena, views = arena.materialize(sg.arena_plan, ctx.shapes, ctx.dtypes)
    except (MemoryError, ValueError) as exc:
        raise TensorError(f"subgraph {sg.index} needs {sg.arena_plan.size} bytes of tensor memory, which "
                          f"cannot be allocated ({exc})") from None
    for t, view in views.items():
        ctx.tensors[t] = view
    for t in strings:
        ctx.tensors[t] = new_array(ctx.shapes[t], ctx.dtypes[t])
    for t, meta in enumerate(ctx.meta):
        if meta.is_variable and ctx.tensors[t] is not None:
            reset_variable(ctx, t)
    for t in ctx.dynamic:
        if ctx.constants[t] is None:
            ctx.tensors[t] = None


def reset_variable(ctx: Context, t: int) -> None:
    """Give variable tensor ``t`` its start value, as TFLite's ResetVariableTensor does: every byte 0,
    except an int8 tensor, whose bytes are all its zero point (so it starts at the real value 0).
    This is what litert does at allocate_tensors and at reset_all_variables."""
    value = ctx.tensors[t]
    if is_string(ctx.dtypes[t]):
        value[...] = b""
        return
    fill = 0
    if ctx.dtypes[t] == np.int8:
        q = ctx.meta[t].quantization
        zps = getattr(q, "zero_point", None) if q is not None else None
        if zps is not None and len(zps):
            fill = int(zps[0])
    value[...] = fill

"""A memory plan for the tensors one invoke writes (TFLite's arena planner, greedy by size).

Each tensor lives from the node that writes it to the last node that reads it (graph inputs from
the start, graph outputs and variables to the end).  Tensors whose lifetimes do not overlap may
share bytes.  The plan is a plain table a notebook can print; ``keep_intermediates=True`` gives
every tensor its own bytes instead, so every intermediate can still be read after ``invoke``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ALIGNMENT = 64


@dataclass(frozen=True)
class Allocation:
    tensor: int
    offset: int
    nbytes: int
    first: int   # index (in execution order) of the first node that needs it; -1 = before all
    last: int    # index of the last node that needs it; n = after all
    held_by: int | None = None   # a node that does not read it but keeps it alive (``last``): an ADD that the
    #                              convolution reading this tensor does in its epilogue writes its output
    #                              while the convolution still reads this (workbench/interpreter/fused.py)


@dataclass(frozen=True)
class ArenaPlan:
    allocations: tuple
    size: int
    shared: frozenset  # tensors whose bytes are reused by another tensor

    def __repr__(self) -> str:
        naive = sum(a.nbytes for a in self.allocations)
        return (f"ArenaPlan({len(self.allocations)} tensors in {self.size:,} bytes; "
                f"without reuse {naive:,} bytes; {len(self.shared)} tensors share memory)")


def _align(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def plan(lifetimes: dict[int, tuple[int, int]], nbytes: dict[int, int], reuse: bool = True,
         held: dict[int, int] | None = None) -> ArenaPlan:
    """Offsets for tensors given their [first, last] node lifetimes and sizes; ``held``: tensor → the node
    past its last reader that keeps it alive (already in its lifetime; shown in the table)."""
    held = held or {}
    order = sorted(lifetimes, key=lambda t: (-nbytes[t], lifetimes[t][0], t))
    placed: list[Allocation] = []
    top = 0
    for t in order:
        first, last = lifetimes[t]
        size = _align(max(nbytes[t], 1))
        if not reuse:
            placed.append(Allocation(t, top, nbytes[t], first, last, held.get(t)))
            top += size
            continue
        busy = sorted((a.offset, a.offset + _align(max(a.nbytes, 1))) for a in placed
                      if not (a.last < first or last < a.first))
        offset = 0
        for lo, hi in busy:
            if offset + size <= lo:
                break
            offset = max(offset, hi)
        placed.append(Allocation(t, offset, nbytes[t], first, last, held.get(t)))
        top = max(top, offset + size)
    shared = set()
    if reuse:
        spans = sorted((a.offset, a.offset + _align(max(a.nbytes, 1)), a.tensor) for a in placed)
        for i, (lo, hi, t) in enumerate(spans):
            for lo2, hi2, t2 in spans[i + 1:]:
                if lo2 >= hi:
                    break
                shared.add(t)
                shared.add(t2)
    placed.sort(key=lambda a: a.tensor)
    return ArenaPlan(tuple(placed), top, frozenset(shared))


def materialize(p: ArenaPlan, shapes, dtypes) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """One zeroed byte buffer, its start 64-byte aligned, and a numpy view per planned tensor.

    numpy aligns a large buffer to 16 bytes only; with the offsets 64-byte aligned too, every tensor
    starts on a cache line, so a 64-byte vector load never straddles two (measured: a float 3x3
    depthwise layer of 14x14x576 took 0.076 ms from a buffer 16 bytes past a line, 0.059 ms aligned)."""
    size = max(p.size, 1)
    raw = np.zeros(size + ALIGNMENT, np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    arena = raw[start:start + size]
    views = {}
    for a in p.allocations:
        dt = np.dtype(dtypes[a.tensor])
        views[a.tensor] = arena[a.offset:a.offset + a.nbytes].view(dt).reshape(shapes[a.tensor])
    return arena, views


class Scratch:
    """One buffer that the temporary arrays of every node share (TFLite's scratch buffers).

    A node needs its scratch (im2col matrix, sums, padded input) only while it runs, so one buffer
    as large as the largest request serves every node of the subgraph.  ``prepare`` calls
    :meth:`reserve` with the arrays it will need and keeps the returned layout in its OpData;
    ``invoke`` calls :meth:`views` for numpy views of them.  The contents do not survive from one
    node (or one invoke) to the next.
    """

    def __init__(self):
        self.nbytes = 0
        self._buf = None

    def reserve(self, *arrays) -> tuple:
        """``arrays`` = (shape, dtype) pairs → a layout ((offset, shape, dtype), ...), 64-byte aligned."""
        layout, top = [], 0
        for shape, dtype in arrays:
            dt = np.dtype(dtype)
            shape = tuple(int(d) for d in shape)
            layout.append((top, shape, dt))
            top += _align(max(1, int(np.prod(shape, dtype=np.int64)) * dt.itemsize))
        self.nbytes = max(self.nbytes, top)
        return tuple(layout)

    def views(self, layout) -> list:
        """The arrays of a layout from :meth:`reserve`, as views of the shared buffer."""
        if self._buf is None or len(self._buf) < self.nbytes + ALIGNMENT:
            self._buf = np.empty(self.nbytes + ALIGNMENT, np.uint8)
        base = (-self._buf.ctypes.data) % ALIGNMENT
        out = []
        for offset, shape, dt in layout:
            start = base + offset
            n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
            out.append(self._buf[start:start + n].view(dt).reshape(shape))
        return out

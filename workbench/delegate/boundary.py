"""Calibration of the tensors that cross between the CPU and an offloaded subgraph.

The TI paper's import tool writes, beside the compiled model, a per-subgraph config (``subgraph0.cfg``)
with the quantization parameters used to convert float tensors at the subgraph's boundary to the
accelerator's fixed point and back.  Those parameters come from the tensors' ranges over calibration
inputs: :func:`calibration_ranges` runs the float model on the CPU and records them;
``workbench.partition.compile(plan, ranges=...)`` turns them into power-of-two scales, and
``workbench.partition.boundary_config(compiled)`` writes the config as text::

    plan = partition(model, "tidl", "tidl", max_partitions=1)
    compiled = compile(plan, ranges=calibration_ranges(plan, samples))
    print(boundary_config(compiled, 0))
"""

from __future__ import annotations

import numpy as np

from ..errors import WorkbenchError
from ..interpreter import Interpreter

__all__ = ["calibration_ranges"]


def calibration_ranges(plan, calibration) -> dict:
    """{tensor: (min, max)} of every tensor crossing a partition boundary of ``plan``, over runs of the
    plan's model on ``calibration`` (an iterable of samples: a list of input arrays, or one array for a
    one-input model), in float, on the CPU."""
    crossing = sorted({t for p in plan.partitions for t in (*p.runtime_inputs, *p.outputs)})
    it = Interpreter(model=plan.model, experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    details = it.get_input_details()
    ranges: dict = {}
    count = 0
    for sample in calibration:
        xs = sample if isinstance(sample, (list, tuple)) else [sample]
        if len(xs) != len(details):
            raise WorkbenchError(f"calibration sample {count} has {len(xs)} input(s); the model takes "
                                 f"{len(details)}")
        for d, x in zip(details, xs):
            it.set_tensor(d["index"], np.asarray(x, d["dtype"]).reshape(d["shape"]))
        it.invoke()
        for t in crossing:
            v = np.asarray(it.get_tensor(t), np.float64)
            if v.size:
                lo, hi = float(v.min()), float(v.max())
                old = ranges.get(t)
                ranges[t] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
        count += 1
    if not count:
        raise WorkbenchError("calibration: no samples")
    return ranges

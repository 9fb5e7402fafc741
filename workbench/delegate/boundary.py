"""Calibration of the tensors that cross between the CPU and an offloaded subgraph.

The TI paper's import tool writes, beside the compiled model, a per-subgraph config (``subgraph0.cfg``)
with the quantization parameters used to convert float tensors at the subgraph's boundary to the
accelerator's fixed point and back.  Those parameters come from the tensors' ranges over calibration
inputs: :func:`calibration_ranges` runs the float model on the CPU and records them;
:func:`boundary_params` turns them into power-of-two scales (:func:`workbench.delegate.quantize.feature_map_params`,
the one place this arithmetic lives), ``workbench.partition.compile(plan, params=...)`` writes them into
the compiled model, and ``workbench.partition.boundary_config(compiled)`` writes the config as text::

    plan = partition(model, "tidl", "tidl", max_partitions=1)
    compiled = compile(plan, params=boundary_params(plan, samples))
    print(boundary_config(compiled, 0))
"""

from __future__ import annotations

import numpy as np

from ..errors import WorkbenchError
from ..interpreter import Interpreter
from .quantize import feature_map_params

__all__ = ["calibration_ranges", "boundary_params", "params_from_ranges"]


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


def params_from_ranges(ranges: dict) -> dict:
    """{tensor: (min, max)} → {tensor: the boundary entry's fixed-point fields}: a power-of-two scale and
    zero point 0 per tensor, as TIDL quantizes feature maps, with the range and whether it is signed."""
    out = {}
    for t, (lo, hi) in ranges.items():
        scale, zero_point, signed = feature_map_params(lo, hi)
        out[t] = {"scale": [scale], "zero_point": [zero_point], "min": lo, "max": hi, "power_of_two": True,
                  "signed": signed}
    return out


def boundary_params(plan, calibration) -> dict:
    """The finished fixed-point parameters of every tensor crossing a partition boundary of ``plan``,
    for ``workbench.partition.compile(plan, params=...)``: :func:`params_from_ranges` of
    :func:`calibration_ranges` over ``calibration``."""
    return params_from_ranges(calibration_ranges(plan, calibration))

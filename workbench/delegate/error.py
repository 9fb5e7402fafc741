"""What offload did to the answer: each device node's output against the float CPU run.

    errs = node_errors(it, frames)       # it: an interpreter with a delegate applied; frames: model inputs
    errs[0]                              # NodeError(node 3 CONV_2D: max |error| 0.071, SNR 38.2 dB over 16 frames)

For every frame, the model runs twice: on the CPU alone in float (keeping every tensor), and through the
delegate step by step.  Each node that ran on the device is compared, output by output, with the same
tensor of the float run — an int8 output dequantized with its scale and zero point first.  So an
error shows where it appears and how it grows from layer to layer (TIDL's layer-level traces,
``debug_level`` 3–4, answer the same question).  In float precision every error is 0 (SNR inf): the
device runs the model's own kernels.  The errors are also kept on each delegation (``errors``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import WorkbenchError
from .quantize import EXPLODED_DB, sqnr

__all__ = ["NodeError", "node_errors", "first_explosion", "EXPLODED_DB"]


@dataclass(frozen=True)
class NodeError:
    """One device node's output error against the float CPU run, over every frame compared."""

    subgraph: int
    node: int
    op: str
    tensor: int
    name: str
    max_abs: float
    snr_db: float
    frames: int
    zeroed: int = 0         # flagged outputs: values int8 made 0 where the float run has a value other than 0
    note: str = ""          # the calibration's warning for this output (quantize.QuantizationWarning)

    def __repr__(self) -> str:
        snr = "inf" if self.snr_db == float("inf") else f"{self.snr_db:.1f}"
        extra = f", {self.zeroed} value(s) made 0" if self.zeroed else ""
        extra += f"; warning: {self.note}" if self.note else ""
        return (f"NodeError(node {self.node} {self.op}: max |error| {self.max_abs:.4g}, SNR {snr} dB over "
                f"{self.frames} frame{'s' if self.frames != 1 else ''}{extra})")


def _device_data(interpreter, subgraph: int) -> dict:
    """DELEGATE node index → its prepared device data (DeviceData), for the partitions of ``subgraph``."""
    out = {}
    for node, _, data, _ in interpreter.prepared(subgraph):
        inner = getattr(data, "data", None)
        if inner is not None and hasattr(inner, "outer_tensor"):
            out[node.index] = inner
    return out


def _as_float(value, name: str, device) -> np.ndarray:
    cal = getattr(device, "calibrated", None)
    if value.dtype == np.int8 and cal is not None and name in cal.scales:
        scale, zero_point = cal.scales[name]
        return (value.astype(np.float64) - zero_point) * scale
    return value.astype(np.float64)


def node_errors(interpreter, frames, subgraph: int = 0) -> list[NodeError]:
    """Every device node's output error against the float CPU run on ``frames`` (a list of input frames:
    each a list of arrays, one per model input, or one array).  Needs ``allocate_tensors()`` done."""
    from ..interpreter import Interpreter

    if not interpreter.delegations:
        raise WorkbenchError("node_errors needs an interpreter with a delegate applied (experimental_delegates)")
    cpu = Interpreter(model=interpreter.model, keep_intermediates=True)
    cpu.allocate_tensors()
    details = cpu.get_input_details()
    devices = _device_data(interpreter, subgraph)
    names = [t.name or "" for t in interpreter.model.subgraphs[subgraph].tensors or ()]
    refs: dict = {}
    vals: dict = {}
    ops: dict = {}
    notes: dict = {}
    count = 0
    for frame in frames:
        arrays = [frame] if isinstance(frame, np.ndarray) else list(frame)
        if len(arrays) != len(details):
            raise WorkbenchError(f"a frame has {len(arrays)} array(s); the model has {len(details)} input(s)")
        for it in (cpu, interpreter):
            for d, a in zip(it.get_input_details(), arrays):
                it.set_tensor(d["index"], np.asarray(a, d["dtype"]).reshape(d["shape"]))
        cpu.invoke()
        for e in interpreter.steps(subgraph):
            if e.lane != "device" or e.kind != "node" or e.node < 0 or e.subgraph != subgraph:
                continue
            device = devices.get(e.callers[-1][1]) if e.callers else None
            for value, t in zip(e.outputs, e.output_ids):
                if t < 0 or value is None:
                    continue
                ref = cpu.get_tensor(t)
                if ref.dtype.kind not in "fc" or ref.shape != value.shape:
                    continue
                key = (e.node, t)
                refs.setdefault(key, []).append(ref.astype(np.float64).ravel())
                vals.setdefault(key, []).append(_as_float(value, names[t], device).ravel())
                ops[key] = e.op
                cal = getattr(device, "calibrated", None)
                if cal is not None and names[t] in getattr(cal, "warnings", {}):
                    notes[key] = cal.warnings[names[t]]
        count += 1
    out = []
    for key in sorted(refs):
        ref, val = np.concatenate(refs[key]), np.concatenate(vals[key])
        s = sqnr(ref, val)
        node, t = key
        zeroed = int(np.count_nonzero((val == 0) & (ref != 0))) if key in notes else 0     # a flagged output
        out.append(NodeError(subgraph, node, ops[key], t, names[t], float(s["max_abs"]), float(s["snr_db"]), count,
                             zeroed, notes.get(key, "")))
    for _, delegation in interpreter.delegations:
        if delegation is not None:
            delegation.errors = {e.node: e for e in out}
    return out


def first_explosion(errors, below_db: float = EXPLODED_DB):
    """The first device node, in node order, whose int8 output SNR falls below ``below_db`` (the
    :class:`NodeError` of :func:`node_errors`), or a node whose output int8 made 0 where float is not
    (a calibration warning), whichever comes first; None when no node does.  Errors add up from layer
    to layer, so the first such node is where to look: its own range, its scale, the warning beside it."""
    for e in sorted(errors, key=lambda e: (e.subgraph, e.node)):
        if e.snr_db < below_db or e.note:
            return e
    return None

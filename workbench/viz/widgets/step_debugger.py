"""StepDebugger: Play / Step / Back over one run, on the CPU or with a (simulated) delegate.

The run happens once (``Interpreter.steps()``: every executed node with copies of its input and output
arrays; with a delegate, the device's copy in / nodes / copy out before each DELEGATE node); the
debugger then moves a cursor over those steps:

* the graph (laid out once, :mod:`._layout`) with the current node ringed, the nodes still to run
  faded, the partition being worked on outlined, the tensors the step reads or writes in colour;
  on a big graph the picture follows the cursor;
* the step's input and output tensors: shape, dtype, min / max / mean / std, for quantized tensors
  the scale and zero point (and the real range they stand for), and a picture of the values: a
  vector (one dimension other than 1, such as a [1, 10] row of class scores) as bars, anything else as
  a heatmap (a PNG made here from the array: 2-D as is, channels side by side, long vectors wrapped);
* the timeline (:func:`workbench.delegate.trace.timeline`): the host lane and, for a delegated run, one
  lane per core of the device, on one clock (modeled from the target file; measured for a CPU-only
  run), with the cursor on the current step and a legend of what each colour means.

The slider counts steps from 1, as the header does ("step 1 / 13" is the slider at 1).  Given an
interpreter you set up, the debugger shows that run: its target and strategy menus show what its
delegate uses and are disabled (the interpreter fixes them; pass the model instead to choose).  The
strategy ``tflite`` runs a runtime delegate (it claims the nodes the target's rules accept, TFLite's
partitioner cuts them, as in LiteRT); ``tidl`` and ``edgetpu`` run the partitions of an offline compile
(the delegate's ``mode="compiled"``, what ``workbench partition --strategy S -o OUT.tflite`` writes).

A plain class holding ipywidgets, so tests drive it without a browser::

    dbg = StepDebugger(model)                          # a CPU run (random inputs, seed 0)
    dbg = StepDebugger(model, target="tidl")           # delegated to a simulated accelerator (runtime)
    dbg = StepDebugger(model, target="tidl", strategy="tidl")   # the offline tidl compile, run
    dbg = StepDebugger(interpreter)                    # a run you set up (inputs set, delegates applied)
    dbg.step_button.click(); dbg.back_button.click()   # or dbg.go(4) (= dbg.slider.value = 5); dbg.play drives it
    dbg.current                                        # the Step: its event, the nodes and tensors in focus
    dbg.graph_html.value, dbg.tensors_html.value, dbg.timeline_html.value
"""

from __future__ import annotations

import base64
import dataclasses
import math
import struct
import time
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as W
import numpy as np

from ... import corpus
from ...errors import WorkbenchError
from ...partition import GraphView, list_targets
from ...partition.strategies import STRATEGIES
from ...schema import load
from .. import _html as H
from ..render import PALETTE
from ..view_model import op_graph
from ._layout import EdgeStyle, Layout, Outline, outline_for, placement_style

__all__ = ["StepDebugger", "Step", "tensor_stats", "heatmap_png", "png_bytes", "bars_svg", "StepOutOfRange"]

CURRENT = "#d62728"          # the ring of the node running now, the tensors it reads and writes
FUTURE_OPACITY = 0.35
# timeline boxes: host nodes brown (as an unplaced node's border), device nodes their partition's colour
KIND_FILL = {"copy in": "#333333", "copy out": "#808080", "stream": "#6a3d9a", "wait": "#f2f2f2",
             "node": "#8c6d3f", "delegate": "#f2f2f2"}
# the timeline's legend: what a box of each kind is (a device node's colour is its partition's)
KIND_MEANING = {"node": "a node run on the host (CPU)",
                "wait": "the host waiting for the device (the device's modeled time)",
                "copy in": "copy in: a tensor copied from the host to the device",
                "copy out": "copy out: a tensor copied back to the host",
                "stream": "weights streamed from host memory to the device"}
BAR_MAX = 128            # a vector up to this long is drawn as bars; a longer one as a wrapped heatmap
BAR_HEIGHT = 64          # px: the bars' drawing area
# viridis, sampled at 9 points (matplotlib's map; values are public)
_VIRIDIS = np.array([(68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141), (39, 173, 129),
                     (92, 200, 99), (170, 220, 50), (253, 231, 37)], dtype=np.float64)


class StepOutOfRange(WorkbenchError, ValueError):
    """``go(index)`` with an index outside the run's steps."""


# -- arrays as pictures ----------------------------------------------------------------------------------

def png_bytes(rgb: np.ndarray) -> bytes:
    """An 8-bit RGB array [h, w, 3] as a PNG file (zlib, no filter)."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w, _ = rgb.shape
    rows = np.zeros((h, 1 + 3 * w), np.uint8)          # each scanline starts with filter type 0
    rows[:, 1:] = rgb.reshape(h, 3 * w)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def _grid(a: np.ndarray, max_side: int, max_channels: int) -> tuple:
    """A 2-D float grid to paint (NaN: gaps between channel tiles) and a note on what it shows."""
    notes = []
    s = np.squeeze(a)
    if s.ndim == 0:
        s = s.reshape(1, 1)
    if s.ndim == 1:
        n = s.shape[0]
        if n <= 64:
            s = s[None, :]
        else:
            cols = math.ceil(math.sqrt(n))
            rows = math.ceil(n / cols)
            pad = np.full(rows * cols, np.nan)
            pad[:n] = s
            s = pad.reshape(rows, cols)
            notes.append(f"{n} values wrapped in rows of {cols}")
    elif s.ndim >= 3:
        h = int(np.prod(s.shape[:-2]))
        w, c = s.shape[-2], s.shape[-1]
        s = s.reshape(h, w, c)
        k = min(c, max_channels)
        cols = math.ceil(math.sqrt(k))
        rows = math.ceil(k / cols)
        out = np.full((rows * (h + 1) - 1, cols * (w + 1) - 1), np.nan)
        for j in range(k):
            r, q = divmod(j, cols)
            out[r * (h + 1): r * (h + 1) + h, q * (w + 1): q * (w + 1) + w] = s[:, :, j]
        notes.append(f"channels 0–{k - 1} of {c}, each {h}×{w}" if k < c else f"{c} channel{'s' if c > 1 else ''}, "
                                                                               f"each {h}×{w}")
        s = out
    sy = max(1, math.ceil(s.shape[0] / max_side))
    sx = max(1, math.ceil(s.shape[1] / max_side))
    if sy > 1 or sx > 1:
        s = s[::sy, ::sx]
        notes.append(f"every {max(sy, sx)}th value shown")
    return s, "; ".join(notes)


def heatmap_png(a, *, max_side: int = 192, max_channels: int = 16) -> tuple:
    """(PNG bytes, note) of an array painted with viridis from its minimum to its maximum; None for
    arrays with no numbers (strings)."""
    a = np.asarray(a)
    if a.dtype == object or a.dtype.kind in "SUV" or a.size == 0:
        return None, "no heatmap for this type" if a.size else "empty"
    note = ""
    if np.iscomplexobj(a):
        a, note = np.abs(a), "magnitude"
    grid, more = _grid(a.astype(np.float64), max_side, max_channels)
    note = "; ".join(x for x in (note, more) if x)
    finite = np.isfinite(grid)
    vals = grid[finite]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 1.0)
    t = np.zeros_like(grid) if hi <= lo else (np.where(finite, grid, lo) - lo) / (hi - lo)
    x = np.clip(t, 0, 1) * (len(_VIRIDIS) - 1)
    k = np.minimum(x.astype(int), len(_VIRIDIS) - 2)
    f = (x - k)[..., None]
    rgb = _VIRIDIS[k] * (1 - f) + _VIRIDIS[k + 1] * f
    gaps = np.isnan(grid)
    rgb[gaps] = 255.0
    rgb[~finite & ~gaps] = (255.0, 0.0, 255.0)                 # inf: magenta
    return png_bytes(np.rint(rgb).astype(np.uint8)), note


def bars_svg(a, *, width: float = 240.0, height: float = BAR_HEIGHT) -> str | None:
    """An SVG bar chart of a vector: an array with one dimension other than 1 (a [1, 10] row of class
    scores, a [32] bias), at most :data:`BAR_MAX` long.  One bar per value, up from a zero line (down
    for a negative value); the largest value is drawn darker.  None for any other array."""
    a = np.asarray(a)
    if a.dtype == object or a.dtype.kind not in "biuf" or a.size < 2 or a.size > BAR_MAX:
        return None
    if sum(1 for d in a.shape if d != 1) != 1:
        return None
    v = a.reshape(-1).astype(np.float64)
    if not np.isfinite(v).all():
        return None
    n = len(v)
    lo, hi = min(0.0, float(v.min())), max(0.0, float(v.max()))
    span = (hi - lo) or 1.0
    pitch = max(2.0, min(16.0, width / n))
    zero = height * hi / span                      # the y of value 0
    top = int(np.argmax(v))
    rects = []
    for k, x in enumerate(v):
        y0, y1 = sorted((zero, zero - height * float(x) / span))
        fill = _hex(_VIRIDIS[2]) if k == top else _hex(_VIRIDIS[5])
        rects.append(f'<rect class="bar" x="{k * pitch + 0.5:.1f}" y="{y0:.1f}" width="{max(pitch - 1.0, 1.0):.1f}" '
                     f'height="{max(y1 - y0, 0.5):.1f}" fill="{fill}"><title>[{k}] {_num(float(x))}</title></rect>')
    w = n * pitch + 1
    return (f"<svg xmlns='http://www.w3.org/2000/svg' class='wb-bars' width='{w:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {w:.1f} {height:.1f}' style='border:1px solid #ccc;background:#fff'>{''.join(rects)}"
            f'<line x1="0" x2="{w:.1f}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="#888" stroke-width="0.6"/></svg>')


def _hex(rgb) -> str:
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def tensor_stats(a, quantization=None) -> dict:
    """shape, dtype, min, max, mean, std (and non-finite count) of an array; with ``quantization``
    (a QuantizationParameters) its scale, zero point and the real range the integers stand for."""
    a = np.asarray(a)
    out = {"shape": tuple(int(d) for d in a.shape), "dtype": "string" if a.dtype == object else str(a.dtype),
           "size": int(a.size)}
    if a.size and a.dtype != object and a.dtype.kind not in "SUV":
        v = np.abs(a) if np.iscomplexobj(a) else a
        f = v.astype(np.float64)
        finite = np.isfinite(f)
        g = f[finite]
        if g.size:
            out.update(min=float(g.min()), max=float(g.max()), mean=float(g.mean()), std=float(g.std()))
        if not finite.all():
            out["non_finite"] = int((~finite).sum())
    q = quantization
    if q is not None and q.scale:
        scale = np.asarray(q.scale, np.float64)
        zp = np.asarray(q.zero_point if q.zero_point else [0] * len(scale), np.float64)
        out["scale"] = float(scale[0]) if scale.size == 1 else tuple(float(s) for s in scale)
        out["zero_point"] = int(zp[0]) if zp.size == 1 else tuple(int(z) for z in zp)
        if scale.size > 1:
            out["quantized_dimension"] = int(q.quantized_dimension or 0)
        if "min" in out and a.dtype.kind in "iu" and scale.size == 1:
            out["real_min"] = (out["min"] - zp[0]) * scale[0]
            out["real_max"] = (out["max"] - zp[0]) * scale[0]
    return out


def _num(v) -> str:
    if isinstance(v, float):
        if v == 0 or 1e-3 <= abs(v) < 1e5:
            return f"{v:.4g}"
        return f"{v:.3e}"
    return str(v)


_GRADIENT = ",".join(f"rgb({int(r)},{int(g)},{int(b)})" for r, g, b in _VIRIDIS)


def _tensor_card(role: str, t: int, name: str, a, quant, constant: bool) -> str:
    if a is None:
        return (f"<div style='{H.BOX};margin:2px'><b>{H.esc(role)}</b>: absent (optional input)</div>")
    st = tensor_stats(a, quant)
    head = f"<b>{H.esc(role)}</b> · tensor {t if t >= 0 else '(inside the partition)'}"
    if name:
        head += f" <code title='{H.esc(name)}'>{H.esc(name if len(name) <= 36 else name[:35] + '…')}</code>"
    if constant:
        head += " <small>(constant)</small>"
    lines = [f"{st['dtype']} [{', '.join(map(str, st['shape']))}] · {st['size']:,} values"]
    if "min" in st:
        lines.append(f"min {_num(st['min'])} · max {_num(st['max'])} · mean {_num(st['mean'])} · "
                     f"std {_num(st['std'])}")
    if st.get("non_finite"):
        lines.append(f"<span style='color:#b00020'>{st['non_finite']} NaN / inf</span>")
    if "scale" in st:
        sc, zp = st["scale"], st["zero_point"]
        if isinstance(sc, tuple):
            lines.append(f"per-channel scales ({len(sc)}, axis {st.get('quantized_dimension', 0)}): "
                         f"{_num(min(sc))} … {_num(max(sc))}, zero points {H.short(zp, 24)}")
        else:
            lines.append(f"scale {_num(sc)} · zero point {zp}")
        if "real_min" in st:
            lines.append(f"real range {_num(st['real_min'])} … {_num(st['real_max'])} "
                         f"(= (q − zero point) × scale)")
    bars = bars_svg(a)
    png, note = (None, "") if bars is not None else heatmap_png(a)
    pic = ""
    if bars is not None:
        n = int(np.asarray(a).size)
        pic = (f"<div>{bars}</div><small style='color:#555'>{n} values as bars, index 0 on the left (zero line "
               f"in grey, the largest darker): min {_num(st.get('min', 0.0))} · max {_num(st.get('max', 0.0))}"
               f"</small>")
    elif png is not None:
        h, w = struct.unpack(">II", png[16:24])
        scale = max(1.0, min(16.0, 180.0 / max(h, w)))
        src = base64.b64encode(png).decode("ascii")
        pic = (f"<div><img alt='heatmap' src='data:image/png;base64,{src}' width='{w * scale:.0f}' "
               f"height='{h * scale:.0f}' style='image-rendering:pixelated;image-rendering:crisp-edges;"
               f"border:1px solid #ccc'></div><div style='display:flex;align-items:center;gap:4px'>"
               f"<small>{_num(st.get('min', 0.0))}</small><span style='display:inline-block;width:90px;height:8px;"
               f"background:linear-gradient(to right,{_GRADIENT})'></span><small>{_num(st.get('max', 0.0))}</small>"
               f"</div>" + (f"<small style='color:#555'>{H.esc(note)}</small>" if note else ""))
    return (f"<div style='{H.BOX};margin:2px;vertical-align:top;max-width:300px'><div>{head}</div>"
            + "".join(f"<div>{x}</div>" for x in lines) + pic + "</div>")


# -- the steps -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One event of the run, and what the debugger shows for it."""

    index: int
    event: object                 # the StepEvent
    focus: tuple                  # node ids ringed (the node running; the caller of a nested subgraph)
    group: str | None             # the partition worked on (copy in / device node / copy out / DELEGATE)
    around: tuple                 # node ids the picture centres on
    tensors: tuple                # tensor ids read or written (subgraph 0)
    slice: int | None             # index into the timeline's slices
    text: str

    def __repr__(self) -> str:
        return f"Step({self.index}: {self.text})"


def _setup_of(it) -> tuple:
    """(target name, strategy) of the first delegate of an interpreter ("", "tflite": a CPU run)."""
    delegates = [d for d, _ in getattr(it, "delegations", ())] or list(getattr(it, "_delegates", ()))
    if not delegates:
        return "", "tflite"
    d = delegates[0]
    target = getattr(d, "target", None)
    name = getattr(target, "name", None) or getattr(d, "name", None) or type(d).__name__
    return str(name), str(getattr(d, "strategy", None) or "tflite")


def _random_inputs(it, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for d in it.get_input_details():
        shape = tuple(int(x) for x in d["shape"])
        dt = np.dtype(d["dtype"])
        if dt.kind == "f":
            v = rng.uniform(-1.0, 1.0, shape).astype(dt)
        elif dt.kind == "b":
            v = rng.random(shape) > 0.5
        elif dt.kind in "iu" and dt.itemsize <= 2:
            info = np.iinfo(dt)
            v = rng.integers(max(info.min, -128), min(info.max, 127) + 1, shape).astype(dt)
        elif dt.kind in "iu":
            v = rng.integers(0, 4, shape).astype(dt)
        elif dt.kind == "c":
            v = (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dt)
        else:
            continue
        it.set_tensor(d["index"], v)


def _slice_index(events, slices) -> list:
    """For every event, the index of its slice in ``timeline(events)`` (None: it has none).  Mirrors how
    :func:`workbench.delegate.trace.timeline` groups events: an event of the device or of a called
    subgraph comes before the top-level node that ran it, and is laid out right after that node's slice."""
    out: list = [None] * len(events)
    si, pending = 0, []
    for k, ev in enumerate(events):
        if ev.lane == "device" or ev.callers:
            pending.append(k)
            continue
        out[k] = si
        si += 1
        lane = "device" if ev.kind == "delegate" else "host"
        for p in pending:
            if (events[p].lane == "device") == (lane == "device"):
                out[p] = si
                si += 1
        pending = []
    for k, s in enumerate(out):                      # a check: the slice is the event's lane and node
        if s is not None and (s >= len(slices) or slices[s].node != events[k].node):
            out[k] = None
    return out


class StepDebugger:
    """Widgets over the steps of one run: controls, graph, tensors, timeline."""

    def __init__(self, source, target: str | None = None, strategy: str = "tflite", *, inputs=None, seed: int = 0,
                 follow: bool | None = None, window=(760.0, 520.0)):
        self.prefix = "sd" + uuid.uuid4().hex[:6]
        self.seed = seed
        self.inputs = inputs
        self.window = window
        self._given = None
        self.source_name = ""
        if hasattr(source, "steps") and hasattr(source, "model"):           # an Interpreter, set up by the caller
            self._given = source
            self.model = source.model
            self.source_name = "the interpreter given"
        else:
            if isinstance(source, str) and source in corpus.MODELS:
                self.source_name = source
                source = corpus.path(source)
            elif isinstance(source, (str, Path)):
                self.source_name = Path(source).stem
                source = Path(source)
            self.model = load(source) if isinstance(source, (str, Path)) else source
            self.source_name = self.source_name or "model"
        self._layout = None
        fixed = self._given is not None
        targets = [("CPU only", "")] + [(t, t) for t in list_targets()]
        strategies = list(STRATEGIES)
        label = {s: f"{s} (runtime)" if s == "tflite" else f"{s} (compiled offline)" for s in STRATEGIES}
        why = "the target and strategy you choose for the run"
        if fixed:           # the menus show the run given: what its delegate uses, and cannot change it
            target, strategy = _setup_of(source)
            if target not in [v for _, v in targets]:
                targets.append((target, target))
            if strategy not in strategies:
                strategies.append(strategy)
            why = ("set by the interpreter you passed in (its delegates decide); pass the model instead, "
                   "StepDebugger(model, target=..., strategy=...), to choose here")
        self.run_on = W.Dropdown(options=targets, value=target or "", description="run on", disabled=fixed,
                                 tooltip=why, layout=W.Layout(width="200px"))
        self.strategy = W.Dropdown(options=[(label.get(s, s), s) for s in strategies], value=strategy,
                                   description="strategy", disabled=fixed, tooltip=why,
                                   layout=W.Layout(width="280px"))
        self.menus_note = W.HTML(f"<small style='color:#555'>menus fixed: {H.esc(why)}</small>" if fixed else "")
        # the slider counts steps from 1, as the header does; ``cursor`` is the step's index (from 0)
        self.play = W.Play(value=1, min=1, max=1, step=1, interval=700, description="play")
        self.slider = W.IntSlider(value=1, min=1, max=1, description="step", continuous_update=True,
                                  layout=W.Layout(width="420px"))
        W.link((self.play, "value"), (self.slider, "value"))
        self.back_button = W.Button(description="Back", icon="step-backward", layout=W.Layout(width="90px"))
        self.step_button = W.Button(description="Step", icon="step-forward", layout=W.Layout(width="90px"))
        self.follow = W.Checkbox(value=True, description="follow the cursor", indent=False,
                                 layout=W.Layout(width="150px"))
        self.zoom = W.FloatSlider(value=1.0, min=0.2, max=2.0, step=0.05, description="zoom", readout_format=".2f",
                                  continuous_update=False, layout=W.Layout(width="240px"))
        self.run_html = W.HTML()
        self.header_html = W.HTML()
        self.graph_html = W.HTML()
        self.tensors_html = W.HTML()
        self.timeline_html = W.HTML()
        self.widget = W.VBox([
            W.HBox([self.run_on, self.strategy, self.menus_note]), self.run_html,
            W.HBox([self.play, self.back_button, self.step_button, self.slider]),
            W.HBox([self.follow, self.zoom]), self.header_html, self.timeline_html,
            W.HBox([W.Box([self.graph_html], layout=W.Layout(flex="1 1 60%", min_width="300px")),
                    W.Box([self.tensors_html], layout=W.Layout(flex="1 1 40%", min_width="280px"))])])
        self.widget.add_class("wb-step-debugger")
        self.events: list = []
        self.steps: list = []
        self.slices: list = []
        self.error: str | None = None
        self.timings: dict = {}
        self._follow_default = follow
        self.back_button.on_click(lambda _b: self.back())
        self.step_button.on_click(lambda _b: self.step())
        self.slider.observe(lambda _c: self.show(), names="value")
        for w in (self.follow, self.zoom):
            w.observe(lambda _c: self.show(), names="value")
        for w in (self.run_on, self.strategy):
            w.observe(lambda _c: self.run(), names="value")
        self.run()

    # -- the run -----------------------------------------------------------------------------------------
    def _interpreter(self):
        if self._given is not None:
            return self._given
        from ...interpreter import Interpreter

        delegates = []
        if self.run_on.value:
            from ...delegate import SimulatedAccelerator

            s = self.strategy.value          # tflite: a runtime delegate; tidl / edgetpu: an offline compile
            delegates.append(SimulatedAccelerator(self.run_on.value, strategy=s,
                                                  mode="runtime" if s == "tflite" else "compiled"))
        it = Interpreter(model=self.model)
        for k, shape in enumerate(corpus.INPUT_SHAPES.get(self.source_name, ())):
            it.resize_tensor_input(k, list(shape))
        for d in delegates:          # after the resize: a delegate for static shapes needs them settled first
            it.modify_graph_with_delegate(d)
        it.allocate_tensors()
        if self.inputs is None:
            _random_inputs(it, self.seed)
        else:
            values = self.inputs.values() if isinstance(self.inputs, dict) else self.inputs
            for d, v in zip(it.get_input_details(), values):
                it.set_tensor(d["index"], np.asarray(v, dtype=d["dtype"]))
        return it

    def run(self) -> None:
        """Run the model step by step (once) and put the cursor on the first step."""
        from ...delegate.trace import timeline

        t0 = time.perf_counter()
        self.error = None
        try:
            it = self.interpreter = self._interpreter()
            self.events = list(it.steps())
        except Exception as exc:      # noqa: BLE001 - a debugger shows what went wrong instead of raising
            self.error = f"{type(exc).__name__}: {exc}"
            self.events, self.steps, self.slices = [], [], []
            self.run_html.value = f"<div style='{H.BOX};background:#ffebee'>the run failed: {H.esc(self.error)}</div>"
            self.graph_html.value = self.tensors_html.value = self.timeline_html.value = self.header_html.value = ""
            return
        self.view = op_graph(it)
        if self._layout is None:
            self._layout = Layout(self.view)
        self.slices = timeline(self.events)
        self._partitions = self._partition_map(it)
        self._graphs: dict = {}
        slice_of = _slice_index(self.events, self.slices)
        self.steps = [self._make_step(k, ev, slice_of[k]) for k, ev in enumerate(self.events)]
        self._own = {}                             # node id → the step that runs it (its own event)
        for s in self.steps:
            ev = s.event
            if ev.kind == "node" and not ev.callers[1:] and s.focus and (ev.lane == "device" or not ev.callers):
                self._own[s.focus[0]] = s.index
        self._base = self._base_styles()
        self._timeline_static = self._timeline_svg_static()
        self._timeline_legend = self._legend_html()
        self.run_html.value = self._run_summary(it)
        self.timings["run_ms"] = (time.perf_counter() - t0) * 1000.0
        n = len(self.steps)
        self.play.max = self.slider.max = max(n, 1)
        if self._follow_default is not None:
            self.follow.value = bool(self._follow_default)
        lay = self._layout
        self.zoom.value = 1.0 if lay.height <= self.window[1] * 1.4 else self.zoom.value
        if self.slider.value != 1:
            self.slider.value = 1           # shows
        else:
            self.show()

    def _partition_map(self, it) -> dict:
        """DELEGATE node index → (group id, node ids of its partition, partition index)."""
        out = {}
        delegations = [(d, r) for d, r in it.delegations if r is not None and r.plans.get(0) is not None]
        several = len(delegations) > 1
        for d, r in delegations:
            plan = r.plans[0]
            for k, idx in r.nodes.get(0, {}).items():
                part = plan.partitions[k]
                gid = f"{plan.target.name}:P{part.index}" if several else f"P{part.index}"
                out[idx] = (gid, tuple(f"n{i}" for i in part.nodes), part.index)
        return out

    def _graph(self, sg: int):
        g = self._graphs.get(sg)
        if g is None:
            g = self._graphs[sg] = GraphView(self.model, sg)
        return g

    def _make_step(self, k: int, ev, sl) -> Step:
        focus, group, around = (), None, ()
        tensors = tuple(t for t in (*ev.input_ids, *ev.output_ids) if t >= 0) if ev.subgraph == 0 else ()
        top = ev.callers[0][1] if ev.callers and ev.callers[0][0] == 0 else None
        if ev.lane == "device" and top is not None and top not in self._partitions:
            # a delegate's partition inside a subgraph that node ``top`` (IF / WHILE / CALL_ONCE) called
            focus = around = (f"n{top}",)
            what = f"{ev.kind} of {ev.bytes:,} bytes" if ev.kind != "node" else f"node {ev.node} {ev.op} v{ev.version}"
            text = (f"device · subgraph {ev.subgraph}, {what} — {ev.modeled_ms or 0:.3f} ms modeled (a partition of "
                    f"the subgraph node {top} calls)")
        elif ev.lane == "device":
            part = self._partitions.get(top)
            group = part[0] if part else None
            if ev.kind == "node" and ev.node >= 0 and ev.subgraph == 0:
                focus = (f"n{ev.node}",)
                text = (f"device · node {ev.node} {ev.op} v{ev.version} in {group} — {ev.modeled_ms or 0:.3f} ms "
                        f"modeled ({ev.elapsed_ms:.3f} ms measured simulating it)")
            elif ev.kind in ("copy in", "copy out"):
                t = (ev.input_ids or ev.output_ids or (-1,))[0]
                text = (f"device · {ev.kind} of tensor {t} {ev.kernel!r} for {group}: {ev.bytes:,} bytes — "
                        f"{ev.modeled_ms or 0:.3f} ms modeled")
            elif ev.kind == "stream":
                text = f"device · weights streamed from host memory for {group}: {ev.bytes:,} bytes"
            else:
                text = f"device · subgraph {ev.subgraph} node {ev.node} {ev.op} (called inside {group})"
            around = focus or (part[1] if part else ())
        elif ev.callers:
            focus = (f"n{top}",) if top is not None else ()
            text = (f"host · subgraph {ev.subgraph} node {ev.node} {ev.op} v{ev.version}, called by node {top} — "
                    f"{ev.elapsed_ms:.3f} ms measured")
            around = focus
        elif ev.kind == "delegate":
            part = self._partitions.get(ev.node)
            group = part[0] if part else None
            text = (f"host · DELEGATE node {ev.node} ({ev.op}, {group}) — the host waits "
                    f"{ev.modeled_ms or 0:.3f} ms (modeled) for the device")
            around = part[1] if part else ()
        else:
            focus = (f"n{ev.node}",)
            text = f"host · node {ev.node} {ev.op} v{ev.version} [{ev.kernel}] — {ev.elapsed_ms:.3f} ms measured"
            around = focus
        return Step(k, ev, focus, group, around, tensors, sl, text)

    # -- moving ------------------------------------------------------------------------------------------
    @property
    def cursor(self) -> int:
        """The current step's index (from 0); the slider shows it plus one."""
        return int(self.slider.value) - 1

    @property
    def current(self) -> Step | None:
        return self.steps[self.cursor] if self.steps else None

    def go(self, index: int) -> None:
        """Put the cursor on step ``index`` (from 0; the slider and the header show ``index + 1``)."""
        if not 0 <= index < max(len(self.steps), 1):
            n = len(self.steps)
            raise StepOutOfRange(f"step {index} is outside the run's {n} steps (indices 0 … {n - 1})")
        self.slider.value = index + 1

    def step(self) -> None:
        if self.cursor < len(self.steps) - 1:
            self.go(self.cursor + 1)

    def back(self) -> None:
        if self.cursor > 0:
            self.go(self.cursor - 1)

    # -- showing ----------------------------------------------------------------------------------------
    def show(self) -> None:
        if not self.steps:
            return
        t0 = time.perf_counter()
        s = self.current
        self.header_html.value = (f"<div style='{H.BOX}'><b>step {s.index + 1} / {len(self.steps)}</b> · "
                                  f"{H.esc(s.text)}</div>")
        self.graph_html.value = self._graph_html(s)
        self.tensors_html.value = self._tensors_html(s)
        self.timeline_html.value = self._timeline_html(s)
        self.timings["show_ms"] = (time.perf_counter() - t0) * 1000.0

    def _base_styles(self) -> dict:
        styles = {}
        lay = self._layout
        for n in self.view.nodes:
            if n.lane is None or n.kind not in ("op", "offload", "chain"):
                styles[n.id] = lay.default_style(n.id)
                continue
            tip = n.tooltip
            styles[n.id] = placement_style(n.partition if n.lane == "device" else None, None, tip)
        return styles

    def _graph_html(self, s: Step) -> str:
        lay = self._layout
        cur = s.index
        styles = {}
        for nid, base in self._base.items():
            own = self._own.get(nid)
            future = own is not None and own > cur and nid not in s.focus
            ring = CURRENT if nid in s.focus else None
            if future or ring:
                base = dataclasses.replace(base, opacity=FUTURE_OPACITY if future else 1.0, ring=ring)
            styles[nid] = base
        edges = {}
        hot = set(s.tensors)
        for pair, members in lay.pairs.items():
            crossing = [e for e in members if e.crossing]
            if any(e.tensor in hot for e in members):
                edges[pair] = EdgeStyle(CURRENT, 2.2, label=f"⇄ {sum(e.nbytes for e in crossing):,} B" if crossing
                                        else "")
            elif crossing:
                edges[pair] = EdgeStyle("#000000", 2.0, label=f"⇄ {sum(e.nbytes for e in crossing):,} B")
        outlines = []
        for g in self.view.groups:
            if g.id == s.group:
                outlines.append(Outline(g.nodes, CURRENT, "#fdecea", g.id, f"{g.label} — working now", 2.6))
            else:
                outlines.append(outline_for(g.partition, g.nodes, g.id, g.label))
        window = None
        if self.follow.value:
            window = lay.window_around(s.around or [self.view.nodes[0].id], *self.window)
        svg = lay.svg(styles, edges, outlines, prefix=self.prefix + "g", zoom=float(self.zoom.value), window=window)
        where = "" if window is None else " (following the cursor; untick “follow the cursor” for the whole graph)"
        return (f"<div style='font-family:Helvetica,Arial,sans-serif;font-size:12px;color:{H.INK}'>"
                f"<div><small>ringed: running now · faded: not run yet{where}</small></div>"
                f"<div style='overflow:auto;max-height:640px;border:1px solid #ddd;background:#fff'>{svg}</div></div>")

    def _tensor_meta(self, sg: int, t: int):
        if t < 0:
            return "", None, False
        tensors = self.model.subgraphs[sg].tensors or ()
        if t >= len(tensors):
            return "", None, False
        meta = tensors[t]
        return meta.name or "", meta.quantization, bool(self._graph(sg).constant[t])

    def _tensors_html(self, s: Step) -> str:
        ev = s.event
        sg = ev.subgraph
        cards = []
        for role, arrays, ids in (("input", ev.inputs, ev.input_ids), ("output", ev.outputs, ev.output_ids)):
            for j, a in enumerate(arrays[:8]):
                t = ids[j] if j < len(ids) else -1
                name, quant, const = self._tensor_meta(sg, t)
                if not name and ev.kind in ("copy in", "copy out"):
                    name = ev.kernel
                cards.append(_tensor_card(f"{role} {j}", t, name, a, quant, const))
            if len(arrays) > 8:
                cards.append(f"<div>… {len(arrays) - 8} more {role}s</div>")
        if not cards:
            cards.append("<div>no tensors in this step</div>")
        return "<div style='display:flex;flex-wrap:wrap;align-items:flex-start'>" + "".join(cards) + "</div>"

    # -- timeline -----------------------------------------------------------------------------------------
    TL_WIDTH, TL_LEFT = 900.0, 118.0

    def _lanes(self) -> list:
        """The timeline's rows: the host, then one per core in the order they first work ("device", or
        "eve:0", "dsp:0", … for a target that lists its cores)."""
        return ["host"] + list(dict.fromkeys(self._row(sl) for sl in self.slices if sl.lane == "device"))

    @staticmethod
    def _row(sl) -> str:
        return "host" if sl.lane == "host" else (sl.unit or "device")

    def _x(self, us: float) -> float:
        total = max((sl.end_us for sl in self.slices), default=1.0) or 1.0
        return self.TL_LEFT + (self.TL_WIDTH - self.TL_LEFT - 8) * us / total

    def _timeline_svg_static(self) -> str:
        lanes = self._lanes()
        total = max((sl.end_us for sl in self.slices), default=0.0)
        part_of = {nid: p[2] for p in self._partitions.values() for nid in p[1]}
        out = []
        for j, lane in enumerate(lanes):
            y = 14 + j * 30
            host_clock = next((sl.clock for sl in self.slices if sl.lane == "host" and sl.kind != "wait"), "modeled")
            label = f"host (CPU, {host_clock})" if lane == "host" else f"{lane} (modeled)"
            out.append(f'<text x="4" y="{y + 14}" font-size="10" fill="#111">{label}</text>'
                       f'<line x1="{self.TL_LEFT}" x2="{self.TL_WIDTH - 8}" y1="{y + 22}" y2="{y + 22}" '
                       f'stroke="#ddd"/>')
        for sl in self.slices:
            j = lanes.index(self._row(sl))
            y = 14 + j * 30 + (11 if sl.depth else 0)
            h = 11 if sl.depth else 22
            x0 = self._x(sl.start_us)
            w = max(self._x(sl.end_us) - x0, 0.6)
            if sl.lane == "device" and sl.kind == "node":
                fill = PALETTE[part_of.get(f"n{sl.node}", 0) % len(PALETTE)][0]
            else:
                fill = KIND_FILL.get(sl.kind, "#9e9e9e")
            stroke = (' stroke="#999" stroke-dasharray="3,2"' if sl.kind == "wait"
                      else ' stroke="#fff" stroke-width="0.3"')
            out.append(f'<rect x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{h}" fill="{fill}"{stroke}>'
                       f'<title>{H.esc(sl.name)} · {sl.kind} · {sl.dur_us:,.1f} µs {sl.clock}</title></rect>')
        # time axis
        y = 14 + len(lanes) * 30 + 2
        for k in range(5):
            us = total * k / 4
            x = self._x(us)
            label = f"{us / 1000:.2f} ms" if total >= 2000 else f"{us:.0f} µs"
            anchor = "start" if k == 0 else "end" if k == 4 else "middle"
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y - 4}" y2="{y}" stroke="#888"/>'
                       f'<text x="{x:.1f}" y="{y + 10}" font-size="9" text-anchor="{anchor}" fill="#555">'
                       f'{label}</text>')
        return "".join(out)

    def _legend_html(self) -> str:
        """What each colour of the timeline means: one swatch per kind of box the run has (a device
        node takes its partition's colour, as on the graph), and what the lanes are."""
        def swatch(fill: str, text: str, dashed: bool = False) -> str:
            border = "1px dashed #999" if dashed else "1px solid #fff"
            return (f"<span class='wb-legend-item' style='display:inline-flex;align-items:center;gap:3px;"
                    f"margin-right:10px'><span style='display:inline-block;width:14px;height:10px;background:{fill};"
                    f"border:{border}'></span>{H.esc(text)}</span>")

        kinds = {(sl.lane, sl.kind) for sl in self.slices}
        items = []
        for kind, text in KIND_MEANING.items():
            if any(k == kind and not (lane == "device" and kind == "node") for lane, k in kinds):
                items.append(swatch(KIND_FILL[kind], text, dashed=kind == "wait"))
        device_nodes = {sl.node for sl in self.slices if sl.lane == "device" and sl.kind == "node"}
        part_of = {nid: (p[2], p[0]) for p in self._partitions.values() for nid in p[1]}
        shown = set()
        for node in sorted(device_nodes):
            k, gid = part_of.get(f"n{node}", (0, "a partition"))
            if gid not in shown:
                shown.add(gid)
                items.append(swatch(PALETTE[k % len(PALETTE)][0], f"a node of {gid} run on the device, modeled"))
        lanes = ("host: the CPU, its time measured" if all(sl.clock == "measured" for sl in self.slices
                                                           if sl.lane == "host" and sl.kind != "wait")
                 else "host: the CPU, its time modeled from the target's figures (what this machine measured: "
                      "workbench.delegate.trace.measured_table)")
        cores = self._lanes()[1:]
        if cores == ["device"]:
            lanes += " · device: the accelerator, its time modeled (simulated, not measured)"
        elif cores:
            lanes += (f" · {', '.join(cores)}: the accelerator's cores (one row each), their time modeled "
                      "(simulated, not measured)")
        return (f"<div class='wb-timeline-legend' style='font-size:11px;color:{H.INK};margin:2px 0 6px'>"
                f"<div><small>lanes — {H.esc(lanes)}; the red line is the current step</small></div>"
                f"<div style='display:flex;flex-wrap:wrap'>{''.join(items)}</div></div>")

    def _timeline_html(self, s: Step) -> str:
        lanes = self._lanes()
        height = 14 + len(lanes) * 30 + 16
        k = s.slice
        if k is None:        # no box of its own (a delegate inside a called subgraph): its caller's box
            k = next((t.slice for t in self.steps[s.index + 1:] if not t.event.callers), None)
        j = s.index
        while k is None and j > 0:           # else the box before it
            j -= 1
            k = self.steps[j].slice
        cursor = ""
        if k is not None and self.slices:
            sl = self.slices[k]
            x0 = self._x(sl.start_us)
            w = max(self._x(sl.end_us) - x0, 0.6)
            yl = 14 + lanes.index(self._row(sl)) * 30 + (11 if sl.depth else 0)
            cursor = (f'<line x1="{x0:.2f}" x2="{x0:.2f}" y1="6" y2="{height - 14}" stroke="{CURRENT}" '
                      f'stroke-width="1.5"/><rect x="{x0 - 1:.2f}" y="{yl - 1}" width="{w + 2:.2f}" '
                      f'height="{(11 if sl.depth else 22) + 2}" fill="none" stroke="{CURRENT}" stroke-width="2"/>'
                      f'<text x="{min(x0 + 3, self.TL_WIDTH - 120):.1f}" y="10" font-size="9" fill="{CURRENT}">'
                      f'{sl.start_us:,.1f} µs · {H.esc(sl.name)}</text>')
        total = max((sl.end_us for sl in self.slices), default=0.0)
        return (f"<div style='font-family:Helvetica,Arial,sans-serif;font-size:12px;color:{H.INK}'>"
                f"<div><b>timeline</b> · {total:,.1f} µs on one clock (the host waits for the device's modeled time)"
                f"</div><svg xmlns='http://www.w3.org/2000/svg' id='{self.prefix}t' width='{self.TL_WIDTH:.0f}' "
                f"height='{height}' font-family='Helvetica,Arial,sans-serif' style='background:#fff'>"
                f"{self._timeline_static}{cursor}</svg>{self._timeline_legend}</div>")

    def _run_summary(self, it) -> str:
        host = sum(1 for e in self.events if e.lane == "host" and e.kind == "node" and not e.callers)
        device = sum(1 for e in self.events if e.lane == "device" and e.kind == "node")
        copies = [e for e in self.events if e.kind in ("copy in", "copy out")]
        s = self.strategy.value
        how = ("on the CPU" if not self.run_on.value else
               f"delegated to {self.run_on.value} (a runtime delegate, TFLite's partitioning)" if s == "tflite" else
               f"delegated to {self.run_on.value} (the offline {s} compile)")
        if self._given is not None:
            how = "with " + (", ".join(getattr(d, "name", str(d)) for d, _ in it.delegations) or "no delegate")
        log = "".join(f"<div><small>{H.esc(line)}</small></div>" for line in getattr(it, "delegate_log", [])[:2])
        return (f"<div style='{H.BOX}'><b>{H.esc(self.source_name)}</b> run {H.esc(how)}: {len(self.events)} "
                f"steps · {host} node{'s' if host != 1 else ''} on the host, {device} on the device, {len(copies)} "
                f"cop{'ies' if len(copies) != 1 else 'y'} ({sum(e.bytes for e in copies):,} bytes){log}</div>")

    # -- display ------------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        if self.error:
            return f"StepDebugger: {self.source_name}: {self.error}"
        s = self.current
        return f"StepDebugger: {self.source_name}, step {self.cursor + 1}/{len(self.steps)}: {s.text if s else ''}"

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = (f"<div>{self.run_html.value}{self.header_html.value}{self.timeline_html.value}"
                               f"{self.graph_html.value}{self.tensors_html.value}</div>")
        return bundle

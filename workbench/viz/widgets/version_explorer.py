"""VersionExplorer: turn an operator's knobs and watch its version and minimum runtime move.

Each change rebuilds a one-operator model (:func:`workbench.versioning.walkthrough.build_op_model`,
finished like the converter finishes a model), then shows the version today's rules compute, why,
and every rule row tried; the minimum runtime; what a chosen TFLite release would say; and whether
any TFLite kernel takes the operator's tensor types at all (:mod:`workbench.versioning.kernel_types`).
A plain class holding ipywidgets, so tests drive it without a browser::

    ex = VersionExplorer(op="DEPTHWISE_CONV_2D")
    ex.dilation.value = 2                # → version 2, minimum runtime 1.12.0
    ex.release.value = "1.11.0"          # → "Didn't find op for builtin opcode 'DEPTHWISE_CONV_2D' version '2'..."
    ex.set(op="CONV_2D", input="uint8", weights="int8", output="int16")
                                         # → v1, and "no TFLite kernel takes ...": no release runs it
    ex.version_html.value, ex.runtime_html.value, ex.check_html.value, ex.types_html.value
    ex.version, ex.types                 # the Version and TypeVerdict objects behind the view

In a notebook, display the object itself (or ``ex.widget``).
"""

from __future__ import annotations

import time

import ipywidgets as W

from ...schema.enums import ActivationFunctionType
from ...schema.enums import BuiltinOperator as B
from ...versioning import check, min_runtime, op_version
from ...versioning.kernel_types import type_verdict
from ...versioning.walkthrough import DTYPES, EXPLORER_OPS, OpConfig, build_op_model
from .. import _html as H
from ..versions import findings_html, min_runtime_html, releases, version_html

ACTIVATIONS = tuple(a.name for a in ActivationFunctionType if a.name != "SIGN_BIT")
BIAS = (("bias present", "present"), ("bias omitted (-1)", "omitted"), ("no bias slot", "no slot"))
QUANT = (("per-tensor", "per-tensor"), ("per-channel", "per-channel"), ("no quantization params", "none"))


def _dropdown(options, value, description, width="190px"):
    return W.Dropdown(options=options, value=value, description=description, style={"description_width": "initial"},
                      layout=W.Layout(width=width))


class VersionExplorer:
    """Widgets for one operator's knobs, and the live verdict of the version rules."""

    def __init__(self, op="DEPTHWISE_CONV_2D", release: str = "2.3.0", **knobs):
        op = B[op] if isinstance(op, str) else B(op)
        cfg = OpConfig(op=op, **knobs)
        dt = list(DTYPES)
        self.op = _dropdown([(o.name, o) for o in EXPLORER_OPS], op, "op", "300px")
        self.release = _dropdown(releases(), release, "TFLite release", "220px")
        self.input = _dropdown(dt, cfg.input, "input")
        self.weights = _dropdown(dt, cfg.weights, "weights / 2nd input", "250px")
        self.output = _dropdown(dt, cfg.output, "output")
        self.quantization = _dropdown(QUANT, cfg.quantization, "quantization", "290px")
        self.dilation = W.IntSlider(value=cfg.dilation, min=1, max=4, description="dilation",
                                    continuous_update=False, layout=W.Layout(width="260px"))
        self.stride = W.IntSlider(value=cfg.stride, min=1, max=3, description="stride",
                                  continuous_update=False, layout=W.Layout(width="260px"))
        self.activation = _dropdown(ACTIVATIONS, cfg.activation, "fused activation", "250px")
        self.bias = _dropdown(BIAS, cfg.bias, "", "170px")
        self.keep_num_dims = W.Checkbox(value=cfg.keep_num_dims, description="keep_num_dims", indent=False)
        self.half_pixel_centers = W.Checkbox(value=cfg.half_pixel_centers, description="half_pixel_centers",
                                             indent=False)
        self.align_corners = W.Checkbox(value=cfg.align_corners, description="align_corners", indent=False)
        self.pot_scale_int16 = W.Checkbox(value=cfg.pot_scale_int16, description="pot_scale_int16", indent=False)
        self.options_table = W.Checkbox(value=cfg.options_table, description="write the options table",
                                        indent=False)
        self.controls = {
            "input": self.input, "weights": self.weights, "output": self.output,
            "quantization": self.quantization, "dilation": self.dilation, "stride": self.stride,
            "activation": self.activation, "bias": self.bias, "keep_num_dims": self.keep_num_dims,
            "half_pixel_centers": self.half_pixel_centers, "align_corners": self.align_corners,
            "pot_scale_int16": self.pot_scale_int16, "options_table": self.options_table,
        }
        self.header = W.HTML()
        self.version_html = W.HTML()
        self.runtime_html = W.HTML()
        self.check_html = W.HTML()
        self.types_html = W.HTML()
        self.signature_html = W.HTML()
        rows = [
            W.HBox([self.op, self.release]),
            W.HBox([self.input, self.weights, self.output]),
            W.HBox([self.quantization, self.bias, self.activation]),
            W.HBox([self.dilation, self.stride]),
            W.HBox([self.keep_num_dims, self.half_pixel_centers, self.align_corners, self.pot_scale_int16,
                    self.options_table], layout=W.Layout(grid_gap="12px")),
        ]
        runtime = W.HBox([self.runtime_html, self.check_html], layout=W.Layout(grid_gap="12px",
                                                                              align_items="flex-start"))
        self.widget = W.VBox([*rows, self.header, runtime, self.types_html, self.version_html, self.signature_html])
        self.widget.add_class("wb-version-explorer")
        self.model = None
        self.version = None
        self.types = None  # TypeVerdict: does some TFLite kernel take these tensor types?
        self.min_runtime = None
        self.findings: list = []
        self.elapsed = 0.0  # seconds the last update took
        for w in (self.op, self.release, *self.controls.values()):
            w.observe(self._on_change, names="value")
        self.update()

    # -- state ----------------------------------------------------------------------------------
    @property
    def config(self) -> OpConfig:
        values = {k: w.value for k, w in self.controls.items()}
        return OpConfig(op=self.op.value, **values)

    def set(self, **values) -> None:
        """Set several knobs at once, with one update: ``ex.set(input="int8", weights="int8", output="int8")``."""
        self._hold = True
        try:
            for k, v in values.items():
                target = self.op if k == "op" else self.release if k == "release" else self.controls[k]
                target.value = B[v] if k == "op" and isinstance(v, str) else v
        finally:
            self._hold = False
        self.update()

    def _on_change(self, _change) -> None:
        if not getattr(self, "_hold", False):
            self.update()

    # -- rendering ------------------------------------------------------------------------------
    def update(self) -> None:
        t0 = time.perf_counter()
        cfg = self.config
        used = set(cfg.knobs())
        for name, w in self.controls.items():
            w.disabled = name not in used
        try:
            model = build_op_model(cfg)
        except Exception as exc:  # a combination the builder cannot make: say so, keep the widgets alive
            self.header.value = f"<div style='color:#b71c1c'>cannot build {H.esc(cfg.describe())}: {H.esc(exc)}</div>"
            self.elapsed = time.perf_counter() - t0
            return
        self.model = model
        self.version = op_version(model, 0, 0)
        self.min_runtime = min_runtime(model)
        self.findings = check(model, self.release.value)
        ignored = [k for k in self.controls if k not in used]
        self.header.value = (f"<div style='margin:6px 0'>one {H.code(cfg.op.name)} built with "
                             f"<code>ModelBuilder</code>, stamped like the converter does"
                             + (f" <small style='color:#777'>(not used by this op: {H.esc(', '.join(ignored))})"
                                "</small>" if ignored else "") + "</div>")
        self.version_html.value = version_html(self.version)
        self.runtime_html.value = min_runtime_html(self.min_runtime)
        self.check_html.value = findings_html(self.findings, f"TFLite {self.release.value}")
        self.types = type_verdict(self.version.signature)
        self.types_html.value = _types_html(self.types)
        self.signature_html.value = (f"<details><summary>what the rules looked at (OpSignature)</summary>"
                                     f"<pre style='{H.BOX}'>{H.esc(repr(self.version.signature))}</pre></details>")
        self.elapsed = time.perf_counter() - t0

    # -- display --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        v = self.version
        head = f"VersionExplorer: {self.config.describe()}"
        if v is None:
            return head
        return f"{head}\n  → {v.reason}; minimum runtime {self.min_runtime.version}"

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = (f"<div>{self.header.value}{self.version_html.value}{self.runtime_html.value}"
                               f"{self.check_html.value}{self.types_html.value}</div>")
        return bundle


def _types_html(verdict) -> str:
    """One line: the kernel that takes these tensor types, or that none does (whatever the version)."""
    if verdict is None:
        return ""
    if verdict.ok:
        row = verdict.row
        what = f" — {row.label}" if row.label else ""
        return (f"<div style='margin:4px 0'>kernel types: {H.esc(verdict.types_text())} — a TFLite kernel takes "
                f"them{H.esc(what)}</div>")
    return (f"<div style='margin:4px 0;background:#ffebee;color:{H.INK};padding:2px 6px'>kernel types: "
            f"<b>no TFLite kernel takes {H.esc(verdict.types_text())}</b>, whatever the version says; "
            f"TFLite's kernels take {H.esc(verdict.accepted_text())}</div>")


__all__ = ["VersionExplorer"]

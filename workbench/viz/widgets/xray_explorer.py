"""XRayExplorer: pick an operator, see its parsed options, its bytes and its tensors.

A plain class holding ipywidgets, so tests drive it without a browser::

    ex = XRayExplorer(model)
    ex.slider.value = 2                  # or ex.dropdown.value = 2, or ex.jump.value = "CONV_2D"
    ex.options_html.value                # the parsed options (present / defaulted / table absent;
                                         # a sentence when the operator has no options fields)
    ex.table_choice.value = "operator"   # X-ray the Operator table instead of its options table
    ex.xray_html.value                   # the byte map
    ex.tensors_html.value                # inputs and outputs

In a notebook, display the object itself (or ``ex.widget``).
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ...options import parse
from ...schema import buffer_bytes, op_name, tensor_data
from .. import _html as H
from ..xray import byte_map, file_offset


def _quant(t) -> str:
    q = t.quantization
    if q is None or not q.scale:
        return ""
    scale = H.short(tuple(round(s, 6) for s in q.scale), 32)
    zp = H.short(tuple(q.zero_point or ()), 24)
    axis = f", axis {q.quantized_dimension}" if len(q.scale) > 1 else ""
    return f"scale {scale}, zero_point {zp}{axis}"


class XRayExplorer:
    """Widgets for walking the operators of one subgraph and X-raying each."""

    def __init__(self, model, subgraph: int = 0):
        self.model = model
        self.subgraph = subgraph
        sg = model.subgraphs[subgraph]
        self.ops = tuple(sg.operators or ())
        codes = model.operator_codes or ()
        self.names = tuple(op_name(codes[op.opcode_index]) for op in self.ops)
        n = len(self.ops)
        first: dict[str, int] = {}
        for i, name in enumerate(self.names):
            first.setdefault(name, i)
        self.first_of = first

        self.slider = W.IntSlider(value=0, min=0, max=max(n - 1, 0), description="operator",
                                  continuous_update=False, layout=W.Layout(width="340px"))
        self.dropdown = W.Dropdown(options=[(f"{i}: {name}", i) for i, name in enumerate(self.names)],
                                   value=0 if n else None, layout=W.Layout(width="260px"))
        self.jump = W.Dropdown(options=[("jump to the first …", "")] + [
            (f"{name} ({self.names.count(name)})", name) for name in sorted(first)], value="",
            layout=W.Layout(width="240px"))
        self.table_choice = W.ToggleButtons(options=[("options table", "options"), ("Operator table", "operator")],
                                            value="options", style={"button_width": "120px"})
        self.header = W.HTML()
        self.options_html = W.HTML()
        self.xray_html = W.HTML()
        self.tensors_html = W.HTML()
        self.tabs = W.Tab(children=[self.options_html, W.VBox([self.table_choice, self.xray_html]),
                                    self.tensors_html])
        self.tabs.titles = ("parsed options", "X-ray (bytes)", "tensors")
        self.widget = W.VBox([W.HBox([self.slider, self.dropdown, self.jump]), self.header, self.tabs])
        self.widget.add_class("wb-xray-explorer")

        W.link((self.slider, "value"), (self.dropdown, "value"))
        self.slider.observe(self._on_op, names="value")
        self.table_choice.observe(self._on_table, names="value")
        self.jump.observe(self._on_jump, names="value")
        self.show(0)

    # -- reactions --------------------------------------------------------------------------------
    def _on_op(self, change) -> None:
        self.show(change["new"])

    def _on_table(self, _change) -> None:
        self._render_xray()

    def _on_jump(self, change) -> None:
        name = change["new"]
        if name:
            self.slider.value = self.first_of[name]
            self.jump.value = ""

    @property
    def index(self) -> int:
        return self.slider.value

    def show(self, index: int) -> None:
        """Render operator ``index`` into every panel."""
        if not self.ops:
            self.header.value = "<i>this subgraph has no operators</i>"
            return
        op = self.ops[index]
        oc = self.model.operator_codes[op.opcode_index]
        self.header.value = (
            f"<div style='margin:4px 0'><b>operators[{index}]</b> {H.code(self.names[index])} "
            f"version {oc.version} · operator_codes[{op.opcode_index}] · "
            f"{len([i for i in op.inputs or () if i >= 0])} inputs → {len(op.outputs or ())} outputs</div>")
        self.options_html.value = self._options(op)
        self._render_xray()
        self.tensors_html.value = self._tensors(op)

    def _options(self, op) -> str:
        """The parsed options as a table; in plain words when there is no field to list (an empty
        table would show only its header row)."""
        opts = parse(self.model, op)
        if opts.fields:
            return opts._repr_html_()
        name = H.code(opts.op)
        if opts.table is None:
            what = (f"{name} has <b>no options table</b>: the schema gives this operator none"
                    + (", and a custom operator keeps its parameters in <code>custom_options</code>."
                       if opts.custom is not None else "."))
        elif opts.table_present:
            what = (f"{name} stores an <b>empty options table</b>: {H.code(opts.table)} has no fields, "
                    "so there is no parameter to read.")
        else:
            what = (f"{name} has <b>no options table</b> in the file (absent): its schema table, "
                    f"{H.code(opts.table)}, has no fields, so there was nothing to store.")
        custom = f"<div>{H.esc(opts.custom.explain())}</div>" if opts.custom is not None else ""
        return f"<div style='margin:4px 0'>{what}</div>{custom}"

    def _render_xray(self) -> None:
        if not self.ops:
            return
        op = self.ops[self.index]
        if self.table_choice.value == "options":
            table = op.builtin_options if op.builtin_options is not None else op.builtin_options_2
            if table is None:
                self.xray_html.value = (
                    "<div style='margin:4px 0'><i>This operator stores no builtin options table.</i> "
                    "Its Operator table shows the empty <code>builtin_options</code> slots:</div>"
                    + byte_map(self.model, op)._repr_html_())
                return
        else:
            table = op
        self.xray_html.value = byte_map(self.model, table)._repr_html_()

    def _tensors(self, op) -> str:
        sg = self.model.subgraphs[self.subgraph]
        rows = []
        for role, ids in (("input", op.inputs or ()), ("output", op.outputs or ())):
            for i in ids:
                if i < 0:
                    rows.append([role, "-1", "<i>optional input left out</i>", "", "", "", ""])
                    continue
                t = sg.tensors[i]
                data = ""
                if t.buffer:
                    nbytes = len(buffer_bytes(self.model, t.buffer))
                    if nbytes:
                        arr = tensor_data(self.model, self.subgraph, i)
                        where = None
                        try:
                            where = file_offset(self.model, arr)
                        except ValueError:  # a model built in code: no file
                            pass
                        head = np.asarray(arr).ravel()[:4].tolist()
                        data = (f"buffers[{t.buffer}]: {nbytes:,} bytes"
                                + (f" at file byte {where:,}" if where is not None else "")
                                + f"; first values {H.short(tuple(head), 60)}")
                rows.append([role, str(i), H.esc(H.short(t.name, 40)), H.esc(list(t.shape or ())), t.type.name,
                             H.esc(_quant(t)), H.esc(data or "— (computed at run time)")])
        return H.table(["", "tensor", "name", "shape", "type", "quantization", "constant data"], rows)

    # -- display --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return (f"XRayExplorer over {len(self.ops)} operators of subgraph {self.subgraph}; "
                f"showing operators[{self.index}] {self.names[self.index] if self.ops else ''}")

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle["text/plain"] = repr(self)
        # a static snapshot for places without a live kernel (GitHub, nbviewer, saved notebooks)
        bundle["text/html"] = (f"<div>{self.header.value}{self.options_html.value}"
                               f"<details><summary>X-ray</summary>{self.xray_html.value}</details></div>")
        return bundle

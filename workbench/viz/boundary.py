"""The boundary parameters of a compiled model's offloaded subgraphs: what crosses between the CPU and
the accelerator, and how each tensor is converted to fixed point and back.

The same facts as the ``OUT.subgraph<k>.cfg`` files ``workbench partition -o OUT`` writes (the TI paper's
``subgraph0.cfg``), as a table per subgraph::

    viz.boundary_view(compiled)          # compiled = workbench.partition.compile(plan, params=...)
"""

from __future__ import annotations

import html

from ..partition.compiler import boundary_config, boundary_entries

__all__ = ["BoundaryView", "boundary_view"]


class BoundaryView:
    """One table per offloaded subgraph: role, name, type, shape, scale, zero point, range."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.subgraphs = boundary_entries(compiled)

    def __repr__(self) -> str:
        if not self.subgraphs:
            return "no offloaded subgraph in this model"
        return "\n".join(boundary_config(self.compiled, e["partition"]) for e in self.subgraphs)

    def _repr_html_(self) -> str:
        if not self.subgraphs:
            return "<p>No offloaded subgraph in this model.</p>"
        parts = []
        head = "".join(f"<th style='text-align:left;padding:2px 8px'>{h}</th>" for h in
                       ("", "tensor", "type", "shape", "scale", "zero point", "calibrated range"))
        for e in self.subgraphs:
            rows = []
            for b in e["boundary"]:
                if b["calibrated"]:
                    scale = " ".join(f"{x:.6g}" for x in b["scale"][:4]) + (" …" if len(b["scale"]) > 4 else "")
                    zp = " ".join(str(z) for z in b["zero_point"][:4]) + (" …" if len(b["zero_point"]) > 4 else "")
                    rng = f"{b['min']:.4g} … {b['max']:.4g}" if "min" in b else "(from the model)"
                else:
                    scale, zp, rng = "not calibrated", "", ""
                cells = (b["role"], b["name"], b["dtype"], "×".join(map(str, b["shape"])), scale, zp, rng)
                rows.append("<tr>" + "".join(f"<td style='padding:2px 8px'>{html.escape(str(c))}</td>"
                                             for c in cells) + "</tr>")
            nodes = e["nodes"]
            span = f"nodes {nodes[0]}–{nodes[-1]}" if nodes else "no node"
            parts.append(f"<p style='margin:6px 0 2px'><b>subgraph {e['partition']}</b> on {html.escape(e['target'])}"
                         f" ({len(nodes)} node(s), {span} of the original model): real = scale × (q − zero "
                         f"point) at its boundary</p><table style='border-collapse:collapse;font-size:13px'>"
                         f"<tr>{head}</tr>{''.join(rows)}</table>")
        return "<div class='wb-boundary'>" + "".join(parts) + "</div>"


def boundary_view(compiled) -> BoundaryView:
    """The boundary parameters of every offloaded subgraph of a compiled model."""
    return BoundaryView(compiled)

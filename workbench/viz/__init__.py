"""Views for notebooks: summaries, X-rays, trees, graphs and small widget apps.

Nothing in the library imports ``viz``; notebooks and the CLI do::

    from workbench import viz
    viz.model_summary(model)                  # counts, operator codes, metadata, signatures
    viz.file_header(model)                    # root offset + "TFL3"
    viz.byte_map(model, op.builtin_options)   # vtable slots and the table's bytes, coloured by field
    viz.walk(model)                           # Model → SubGraph → Operator → Tensor → Buffer
    viz.graph_view(model, ops=range(0, 8))    # graphviz picture of (part of) one subgraph, tensors as nodes
    viz.op_graph(plan)                        # ops as nodes: placement, partitions, reasons, bytes crossing
    viz.op_graph(model).collapse(4)           # big graphs: chains as one node; .focus(node, radius=2)
    viz.offload_view(compiled, plan)          # offload ops opened into their sub-models, beside the cut
    viz.boundary_view(compiled)               # each offloaded subgraph's boundary: shapes, scales, zero points
    viz.op_graph(plan).save_html("plan.html") # one self-contained file; .save_explorer_node_data(dir)
    viz.XRayExplorer(model)                   # pick an operator: options, bytes, tensors
    viz.VersionExplorer()                     # turn an op's knobs: version, reason, minimum runtime
    viz.RuntimeExplorer()                     # model × TFLite release: runs, or which ops refuse
    viz.version_diff(model)                   # stored op versions against today's rules
    viz.compatibility_table({name: model})    # models × releases

Every view has a text ``repr`` as well as HTML/SVG, so notebooks read correctly anywhere.
"""

from .boundary import BoundaryView, boundary_view
from .graph import TensorGraph, graph_view
from .render import SideBySide, offload_view, side_by_side
from .summary import ModelSummary, Walk, model_summary, walk
from .versions import CompatibilityTable, VersionDiff, compatibility_table, version_diff
from .view_model import Edge, Group, Node, OpGraph, Overlay, Reason, op_graph
from .widgets import RuntimeExplorer, VersionExplorer, XRayExplorer
from .xray import ByteMap, FileHeader, SlotEntry, byte_map, file_header, file_offset, resolve

__all__ = [
    "model_summary", "walk", "file_header", "byte_map", "file_offset", "resolve", "graph_view", "XRayExplorer",
    "VersionExplorer", "RuntimeExplorer", "version_diff", "compatibility_table", "VersionDiff", "CompatibilityTable",
    "ModelSummary", "Walk", "FileHeader", "ByteMap", "SlotEntry", "TensorGraph",
    "op_graph", "OpGraph", "Node", "Edge", "Group", "Reason", "Overlay", "offload_view", "side_by_side", "SideBySide",
    "boundary_view", "BoundaryView",
]

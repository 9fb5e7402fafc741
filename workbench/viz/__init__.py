"""Views for notebooks: summaries, X-rays, trees, graphs and small widget apps.

Nothing in the library imports ``viz``; notebooks and the CLI do::

    from workbench import viz
    viz.model_summary(model)                  # counts, operator codes, metadata, signatures
    viz.file_header(model)                    # root offset + "TFL3"
    viz.byte_map(model, op.builtin_options)   # vtable slots and the table's bytes, coloured by field
    viz.walk(model)                           # Model → SubGraph → Operator → Tensor → Buffer
    viz.graph_view(model, ops=range(0, 8))    # graphviz picture of (part of) one subgraph
    viz.XRayExplorer(model)                   # pick an operator: options, bytes, tensors
    viz.VersionExplorer()                     # turn an op's knobs: version, reason, minimum runtime
    viz.RuntimeExplorer()                     # model × TFLite release: runs, or which ops refuse
    viz.version_diff(model)                   # stored op versions against today's rules
    viz.compatibility_table({name: model})    # models × releases

Every view has a text ``repr`` as well as HTML/SVG, so notebooks read correctly anywhere.
"""

from .graph import GraphView, graph_view
from .summary import ModelSummary, Walk, model_summary, walk
from .versions import CompatibilityTable, VersionDiff, compatibility_table, version_diff
from .widgets import RuntimeExplorer, VersionExplorer, XRayExplorer
from .xray import ByteMap, FileHeader, SlotEntry, byte_map, file_header, file_offset, resolve

__all__ = [
    "model_summary", "walk", "file_header", "byte_map", "file_offset", "resolve", "graph_view", "XRayExplorer",
    "VersionExplorer", "RuntimeExplorer", "version_diff", "compatibility_table", "VersionDiff", "CompatibilityTable",
    "ModelSummary", "Walk", "FileHeader", "ByteMap", "SlotEntry", "GraphView",
]

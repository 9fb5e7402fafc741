"""Small ipywidgets apps, one file each; plain classes that tests drive without a browser."""

from .partition_lab import PartitionLab
from .runtime_explorer import RuntimeExplorer
from .step_debugger import StepDebugger
from .version_explorer import VersionExplorer
from .xray_explorer import XRayExplorer

__all__ = ["XRayExplorer", "VersionExplorer", "RuntimeExplorer", "PartitionLab", "StepDebugger"]

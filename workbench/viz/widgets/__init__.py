"""Small ipywidgets apps, one file each; plain classes that tests drive without a browser."""

from .xray_explorer import XRayExplorer

__all__ = ["XRayExplorer"]

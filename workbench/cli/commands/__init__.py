"""One module per ``workbench`` command; :mod:`workbench.cli` registers them in order."""

"""Small HTML helpers shared by the views: escaping, a colour palette, hex cells.

Only inline styles are used: JupyterLab keeps them in untrusted notebooks, where ``<style>``
blocks are dropped.  Every coloured cell sets its text colour too, so the views stay readable
in a dark theme.
"""

from __future__ import annotations

import enum
import html

# pastel colours for fields; the same field has the same colour in the vtable and the table
PALETTE = (
    "#c8e6c9", "#bbdefb", "#ffe0b2", "#e1bee7", "#b2ebf2", "#f8bbd0",
    "#dcedc8", "#d1c4e9", "#ffccbc", "#b3e5fc", "#fff59d", "#cfd8dc",
)
GREY = "#e0e0e0"
ABSENT = "#fff8e1"
INK = "#111"

BOX = ("font-family:var(--jp-code-font-family,monospace);font-size:12px;color:" + INK +
       ";background:#fff;padding:6px 8px;border:1px solid #ddd;border-radius:4px;display:inline-block;"
       "line-height:1.45")
TABLE = "border-collapse:collapse;font-size:12px;margin:4px 0;line-height:1.35"
CELL = "padding:1px 6px;border-bottom:1px solid #eee;text-align:left;vertical-align:top"


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def short(value, limit: int = 48) -> str:
    """A short readable rendering of a field value."""
    if isinstance(value, memoryview):
        return f"<{value.nbytes} bytes>"
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, tuple):
        if len(value) > 6:
            head = ", ".join(short(v, 16) for v in value[:4])
            return f"({head}, … {len(value)} items)"
        text = "(" + ", ".join(short(v, 16) for v in value) + ("," if len(value) == 1 else "") + ")"
        return text if len(text) <= limit else text[: limit - 1] + "…"
    if hasattr(value, "__decl__"):  # a FlatTable
        return type(value).__name__ + "(…)"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(headers, rows, row_styles=None, nowrap=()) -> str:
    """An HTML table; ``rows`` hold already-escaped cell HTML; ``nowrap``: column indices kept on one line."""
    head = "".join(f"<th style='{CELL};font-weight:600;white-space:nowrap'>{esc(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        style = row_styles[i] if row_styles else ""
        cells = "".join(f"<td style='{CELL}{';white-space:nowrap' if j in nowrap else ''}'>{c}</td>"
                        for j, c in enumerate(row))
        body.append(f"<tr style='{style}'>{cells}</tr>")
    return f"<table style='{TABLE}'><tr>{head}</tr>{''.join(body)}</table>"


def code(text) -> str:
    return f"<code>{esc(text)}</code>"


def byte_cell(byte: int, colour: str | None, title: str = "", dim: bool = False) -> str:
    style = "padding:0 2px;margin:0 1px;border-radius:2px"
    if colour:
        style += f";background:{colour};color:{INK}"
    if dim:
        style += ";color:#999"
    t = f" title='{esc(title)}'" if title else ""
    return f"<span style='{style}'{t}>{byte:02x}</span>"

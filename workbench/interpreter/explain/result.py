"""What explain() returns: :class:`Step` (one worked line) and :class:`Explanation` (all of them, the
verdict, and their text / HTML views), with the helpers that print and compare values."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np

# ----------------------------------------------------------------------------------------------
# the result


def _show(v) -> str:
    """A value as a learner wants to read it: float32 values with the digits that identify them."""
    if isinstance(v, np.floating):
        return str(v.dtype.type(v)) if v.dtype == np.float32 else repr(float(v))
    if isinstance(v, float):
        return f"{v:.10g}"
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ")"
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v)


@dataclass(frozen=True)
class Step:
    what: str
    formula: str
    value: object

    def __str__(self) -> str:
        return f"{self.what:<28} {self.formula:<60} = {_show(self.value)}"


def _item(v):
    """A numpy scalar as a Python value (strings stay bytes)."""
    return v.item() if isinstance(v, np.generic) else v


def _number(v) -> float:
    return float(v) if isinstance(v, (int, float, bool, np.number, np.bool_)) else math.nan


def _same(a, b) -> bool:
    """Equal as the kernel's type sees it: integers exactly, floats bit for bit (NaN equals NaN)."""
    if isinstance(a, (bytes, str)) or isinstance(b, (bytes, str)):
        return a == b
    if isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating)):
        ft = np.float32 if isinstance(a, np.float32) or isinstance(b, np.float32) else np.float64
        fa, fb = ft(a), ft(b)
        if np.isnan(fa) and np.isnan(fb):
            return True
        return fa.tobytes() == fb.tobytes()
    return int(a) == int(b)


@dataclass(frozen=True)
class Explanation:
    node: int
    op: str
    output_index: tuple
    steps: tuple = field(repr=False)
    by_hand: object = 0
    kernel: object = 0
    float_result: float = 0.0
    dequantized: float = 0.0
    kind: str = "quantized"          # "quantized" | "hybrid" | "copy" | "not quantized"
    recipe: str = ""                 # which of the kernel's paths this element took

    @property
    def agrees(self):
        """True when the hand computation equals what the kernel wrote (None: nothing computed)."""
        if self.by_hand is None:
            return None
        return _same(self.by_hand, self.kernel)

    def _verdict(self) -> str:
        if self.by_hand is None:
            return (f"no quantized arithmetic here (a {self.recipe or 'float'} node); the kernel wrote "
                    f"{_show(self.kernel)}")
        ok = "equal" if self.agrees else "DIFFERENT"
        return (f"by hand {_show(self.by_hand)}, kernel wrote {_show(self.kernel)} ({ok}); it stands for "
                f"{self.dequantized:.6g}, the float computation gives {self.float_result:.6g}")

    def __repr__(self) -> str:
        head = f"node {self.node} {self.op}"
        if self.recipe:
            head += f" [{self.kind}: {self.recipe}]"
        lines = [f"{head}, output element {list(self.output_index)}:"]
        lines += [f"  {s}" for s in self.steps]
        lines.append("  " + self._verdict())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(s.what)}</td><td><code>{html.escape(s.formula)}</code></td>"
                       f"<td>{html.escape(_show(s.value))}</td></tr>" for s in self.steps)
        head = f"node {self.node} {html.escape(self.op)}"
        if self.recipe:
            head += f" <i>[{html.escape(self.kind)}: {html.escape(self.recipe)}]</i>"
        verdict = html.escape(self._verdict()).replace("DIFFERENT", "<b>DIFFERENT</b>")
        return (f"<div><b>{head}</b>, output element {list(self.output_index)}"
                f"<table>{rows}</table><p>{verdict}</p></div>")

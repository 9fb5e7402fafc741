"""What every explainer shares: the node being explained (:class:`_Work`), index and integer helpers,
and the arithmetic steps that many ops write out (MultiplyByQuantizedMultiplier, the output clamp)."""

from __future__ import annotations

import math

import numpy as np

from .. import quant
from .result import Step, _show

# ----------------------------------------------------------------------------------------------
# the node being explained


class _Work:
    """One node of an interpreter that has run: its OpData, kernel, tensors, and the steps so far."""

    def __init__(self, interpreter, index: int):
        sg = interpreter._sg(0)
        rows = {n.index: (n, d) for n, _, d, _ in interpreter.prepared()}
        if index not in rows:
            raise IndexError(f"node {index} does not exist (the subgraph has nodes 0-{len(rows) - 1})")
        self.it, self.ctx = interpreter, sg.context
        self.n, self.d = rows[index]
        self.kernel = {n.index: k for n, k, _, _ in sg.prepared}[index]
        self.steps: list[Step] = []
        self.kind = "quantized"
        self.recipe = ""
        self.out = None
        self.pos = ()

    def get(self, t: int) -> np.ndarray:
        c = self.ctx.constants[t]
        return np.asarray(c if c is not None else self.it.get_tensor(t))

    def quantization(self, t: int):
        """(scales float64 [k], zero points int64 [k], quantized_dimension); empty scales when none."""
        q = self.ctx.meta[t].quantization
        scales = np.asarray(tuple(q.scale or ()) if q is not None else (), np.float32).astype(np.float64)
        zps = np.asarray(tuple(q.zero_point or ()) if q is not None else (), np.int64)
        if len(zps) < len(scales):
            zps = np.zeros(len(scales), np.int64) if len(zps) == 0 else np.resize(zps, len(scales))
        return scales, zps, int(q.quantized_dimension or 0) if q is not None else 0

    def is_quantized(self, t: int) -> bool:
        return t >= 0 and len(self.quantization(t)[0]) > 0

    def sz(self, t: int) -> tuple[float, int]:
        s, z, _ = self.quantization(t)
        return (float(s[0]), int(z[0])) if len(s) else (1.0, 0)

    def step(self, what: str, formula: str, value):
        self.steps.append(Step(what, formula, value))
        return value

    def input_slot(self, k: int) -> int:
        return self.n.input(k)


def _flat(pos, shape) -> int:
    return int(np.ravel_multi_index(pos, shape)) if len(shape) else 0


def _bcast_index(pos, shape) -> tuple:
    """The index of a broadcast input's element that lands on output position ``pos``."""
    shape = tuple(shape)
    tail = tuple(pos[len(pos) - len(shape):]) if shape else ()
    return tuple(0 if s == 1 else int(p) for p, s in zip(tail, shape))


def _wrap32(v: int) -> int:
    return (int(v) + 2 ** 31) % 2 ** 32 - 2 ** 31


def _wrap16(v: int) -> int:
    return (int(v) + 2 ** 15) % 2 ** 16 - 2 ** 15


def _short(values, k: int = 8) -> str:
    vals = [_show(v) for v in np.asarray(values).reshape(-1)[:k]]
    more = np.asarray(values).size - k
    return "[" + ", ".join(vals) + (f", … {more} more" if more > 0 else "") + "]"


def _cvt_int32(f) -> int:
    """``static_cast<int32_t>(float)`` on x86: truncation; NaN and values outside int32 give INT32_MIN."""
    f = float(f)
    if not (math.isfinite(f) and -2147483649.0 < f < 2147483648.0):
        return -(2 ** 31)
    return int(math.trunc(f))


def _real(scale, q, zp) -> float:
    return float(scale) * (float(q) - float(zp))


def _operand(w: _Work, slot: int):
    """(value, index) of input ``slot``'s element that lands on the output position (broadcasting)."""
    x = w.get(w.input_slot(slot))
    idx = _bcast_index(w.pos, x.shape)
    return int(x[idx]) if x.ndim else int(x), idx


# ----------------------------------------------------------------------------------------------
# shared arithmetic steps


def _mbqm(w: _Work, acc: int, m: int, shift: int, rounding: str = "away", wrap_acc: bool = False,
          wrap_shift: bool = True) -> int:
    """MultiplyByQuantizedMultiplier, double rounding, written out; ``rounding`` is the last shift's
    tie rule ("away": reference kernels, gemmlowp; "up": ruy, NEON vrshl)."""
    acc = int(acc)
    if wrap_acc and _wrap32(acc) != acc:
        acc = w.step("int32 wrap-around", f"{acc} mod 2^32 (the int32 accumulator overflows)", _wrap32(acc))
    left, right = max(int(shift), 0), max(-int(shift), 0)
    x = acc
    if left:
        x = acc << left
        if wrap_shift and _wrap32(x) != x:
            x = w.step("left shift (wraps)", f"{acc} · 2^{left} mod 2^32", _wrap32(x))
        else:
            w.step("left shift", f"{acc} · 2^{left}", x)
    high = quant.saturating_rounding_doubling_high_mul(x, int(m))
    p = x * int(m)
    tie = p % (1 << 31) == (1 << 30)
    note = ("  (an exact tie, rounded toward +∞" + (f"; away from 0 would give {high - 1})" if p < 0 else ")")) \
        if tie else ""
    w.step("high multiply (SRDHM)", f"round({x} · {int(m)} / 2^31){note}", high)
    if not right:
        return high
    away = quant.rounding_divide_by_pot(high, right)
    up = quant.rounding_right_shift_half_up(high, right)
    tie = (high & ((1 << right) - 1)) == (1 << (right - 1))
    note = f"  (an exact tie: away from 0 → {away}, up → {up})" if tie else ""
    if rounding == "up":
        return w.step("rounding shift (ties up)", f"({high} + 2^{right - 1}) >> {right}{note}", up)
    return w.step("rounding shift (ties away)", f"round({high} / 2^{right}), halves away from 0{note}", away)


def _mbqm64(w: _Work, acc: int, m: int, shift: int) -> int:
    """The int64 overload of MultiplyByQuantizedMultiplier: a 16-bit multiplier, ONE rounding (ties up)."""
    acc, m, shift = int(acc), int(m), int(shift)
    reduced = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    w.step("16-bit multiplier", f"({m} + 2^15) >> 16" if m < 0x7FFF0000 else f"{m} ≥ 0x7FFF0000 → 0x7FFF", reduced)
    total = 15 - shift
    prod = w.step("multiply (int64)", f"{acc} · {reduced}", acc * reduced)
    v = (prod + (1 << (total - 1))) >> total
    tie = (prod & ((1 << total) - 1)) == (1 << (total - 1))
    note = f"  (an exact tie, rounded up; away from 0 would give {v - 1})" if tie and prod < 0 else (
        "  (an exact tie, rounded up)" if tie else "")
    w.step("one rounding shift (ties up)", f"({prod} + 2^{total - 1}) >> {total}{note}", v)
    if _wrap32(v) != v:
        v = w.step("kept as int32 (wraps)", f"{v} mod 2^32", _wrap32(v))
    return v


def _finish(w: _Work, v: int, zp: int, lo: int, hi: int, what: str = "clamp") -> int:
    v = int(v)
    if zp:
        v = w.step("add output zero point", f"{v} + {zp}", v + int(zp))
    return w.step(what, f"clamp({v}, {int(lo)}, {int(hi)})", min(max(v, int(lo)), int(hi)))


def _act_real(d, v: float) -> float:
    """The fused activation applied to a real (float) result."""
    act = str(getattr(d, "activation", "") or "")
    lo, hi = {"RELU": (0.0, math.inf), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}.get(act, (-math.inf, math.inf))
    return min(max(v, lo), hi)


def _activation_note(d) -> str:
    act = getattr(d, "activation", "")
    return f"clamp ({act})" if act and act != "NONE" else "clamp"


INT32_MIN, INT32_MAX = quant.INT32_MIN, quant.INT32_MAX


_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "int32": (INT32_MIN, INT32_MAX)}

"""Type conversions: QUANTIZE (from float32, per channel, requantize) and DEQUANTIZE."""

from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..kernels.dequantize import DequantizeData
from ..kernels.quantize import QuantizeData
from ._steps import _RANGE, _finish, _flat, _mbqm, _real, _Work
from .registry import explains
from .result import _show

# ----------------------------------------------------------------------------------------------
# QUANTIZE, DEQUANTIZE


@explains(QuantizeData)
def _explain_quantize(w: _Work):
    d = w.d
    src, dst = d.mode.split("→")
    lo, hi = _RANGE[dst]
    x = w.get(w.input_slot(0))
    k = _flat(w.pos, x.shape)
    v = x[w.pos]
    if src == "float32":
        v = np.float32(v)
        if np.ndim(d.output_scale) > 0:
            ch = w.pos[d.quantized_dimension]
            s, zp = np.float32(d.output_scale[ch]), int(d.output_zero_point[ch])
            w.recipe = f"float32 → {dst}, per channel (channel {ch} on axis {d.quantized_dimension})"
            t = w.step("divide (float32)", f"{_show(v)} / {_show(s)}", np.float32(v / s))
            r = w.step("round", f"round({_show(t)}), halves away from 0", int(quant.round_half_away(np.array([t]))[0]))
            return _finish(w, r, zp, lo, hi, "clamp to " + dst), float(v)
        s, zp = np.float32(d.output_scale), int(d.output_zero_point)
        n_vec = x.size // d.block * d.block if d.block else 0          # Variant.quantize_block
        if not d.block:
            w.recipe = f"float32 → {dst}: the reference kernel (÷ scale in float32, ties away from 0)"
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                t = w.step("divide (float32)", f"{_show(v)} / {_show(s)}", np.float32(v / s))
            r = w.step("round", f"round({_show(t)}), halves away from 0", int(quant.round_half_away(np.array([t]))[0]))
        elif k < n_vec:
            w.recipe = f"float32 → {dst}: litert's {d.block}-wide loop (× 1/scale in float32, ties to even)"
            inv = np.float32(np.float32(1.0) / s)
            t = w.step("× 1/scale (float32)", f"{_show(v)} · {_show(inv)}  (1/{_show(s)})", np.float32(v * inv))
            tie = float(t) - math.floor(float(t)) == 0.5
            r = w.step("round half to even", f"rint({_show(t)})" + ("  (an exact tie: to the even neighbour)" if tie
                                                                     else ""),
                       int(np.rint(t)))
        else:
            w.recipe = f"float32 → {dst}: litert's scalar tail (÷ scale in double, ties away from 0)"
            t = w.step("divide (double)", f"{_show(v)} / {_show(s)}", float(np.float64(v) / np.float64(s)))
            r = w.step("round", f"round({t!r}), halves away from 0", int(quant.round_half_away(np.array([t]))[0]))
        return _finish(w, r, zp, lo, hi, "clamp to " + dst), float(v)
    v = int(v)
    blocks = bool(d.block)                    # Variant.requantize_block (8-bit → 8-bit, litert-x86)
    up = blocks and k < x.size // d.block * d.block
    w.recipe = f"requantize {src} → {dst}" + ((f": {d.block}-wide NEON blocks, ties up" if up else
                                                 ": scalar tail, ties away") if blocks else ": ties away")
    t = w.step("remove input zero point", f"{v} − ({d.input_zero_point})", v - d.input_zero_point)
    w.step("multiplier", f"{d.effective_scale:.9g} = in_scale / out_scale = {d.output_multiplier}·2^"
                         f"({d.output_shift}−31)", (d.output_multiplier, d.output_shift))
    r = _mbqm(w, t, d.output_multiplier, d.output_shift, "up" if up else "away")
    in_s, in_zp = d.input_scale, d.input_zero_point
    return _finish(w, r, d.output_zero_point, lo, hi, "clamp to " + dst), _real(in_s, v, in_zp)


@explains(DequantizeData)
def _explain_dequantize(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0))
    v = x[w.pos]
    if d.scale is None:
        w.kind = "not quantized"
        w.recipe = "float16 → float32: widening, exact"
        f = w.step("widen", f"float32({_show(np.float16(v))})", np.float32(v))
        return f, float(v)
    v = int(v)
    if np.ndim(d.scale) > 0:
        s = np.float32(np.asarray(d.scale).reshape(-1)[w.pos[d.quantized_dimension]])
        zp = int(np.asarray(d.zero_point).reshape(-1)[w.pos[d.quantized_dimension]])
        w.recipe = f"{d.input_type} → float32 per channel: float32(x − zp) · scale in float32"
        f = w.step("dequantize", f"float32({v} − ({zp})) · {_show(s)}", np.float32(np.float32(v - zp) * s))
        return f, float(s) * (v - zp)
    s, zp = np.float32(d.scale), int(d.zero_point)
    k = _flat(w.pos, x.shape)
    if not d.block:
        w.recipe = f"{d.input_type} → float32: the reference kernel, float32(x − zp) · scale, one float32 rounding"
        f = w.step("dequantize", f"float32({v} − ({zp})) · {_show(s)}", np.float32(np.float32(v - zp) * s))
    elif k < x.size // d.block * d.block:
        w.recipe = (f"{d.input_type} → float32: litert's {d.block}-wide loop, x·scale + (−zp·scale), "
                    "two float32 roundings")
        t = w.step("x · scale (float32)", f"{v} · {_show(s)}", np.float32(np.float32(v) * s))
        off = w.step("−zp · scale (float32)", f"−{zp} · {_show(s)}", np.float32(-np.float32(zp) * s))
        f = w.step("add", f"{_show(t)} + {_show(off)}", np.float32(t + off))
    else:
        w.recipe = f"{d.input_type} → float32: litert's scalar tail, (float)(scale · (x − zp)) in double"
        f = w.step("dequantize", f"float32({_show(s)} · ({v} − ({zp})))", np.float32(np.float64(s) * (v - zp)))
    return f, float(s) * (v - zp)

"""The matrix ops worked out for one output element: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
TRANSPOSE_CONV and BATCH_MATMUL in int8, uint8 and 16x8 (the "rows", "int64", "int32", "double" and
"raw int32" recipes); the hybrid variants are in :mod:`.hybrid`."""

from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..kernels.batch_matmul import BatchMatMulQuantizedData
from ..kernels.conv_2d import Conv2DInt8Data, Conv2DInt16Data, Conv2DUint8Data
from ..kernels.depthwise_conv_2d import DepthwiseConv2DInt8Data, DepthwiseConv2DInt16Data, DepthwiseConv2DUint8Data
from ..kernels.fully_connected import FullyConnectedInt8Data, FullyConnectedInt16Data, FullyConnectedUint8Data
from ..kernels.transpose_conv import TransposeConvQuantizedData, TransposeConvUint8Data
from ._steps import (
    INT32_MAX,
    INT32_MIN,
    _act_real,
    _activation_note,
    _bcast_index,
    _finish,
    _flat,
    _mbqm,
    _mbqm64,
    _Work,
    _wrap32,
)
from .registry import explains

# ----------------------------------------------------------------------------------------------
# matrix ops: operands of one output element


def _conv_operands(w: _Work, x, filt, groups: int, dtype=np.int64, image=None):
    """CONV_2D: (x values, filter values, number of in-image products, filter values of the taps that
    fall outside the image) for output (b, oy, ox, c)."""
    d = w.d
    b, oy, ox, c = w.pos
    b = b if image is None else image
    o, kh, kw, ci = filt.shape
    g0 = (c // (o // max(groups, 1))) * ci
    xs, ws, outside = [], [], []
    for ky in range(kh):
        iy = oy * d.stride_h - d.pad_top + ky * d.dilation_h
        for kx in range(kw):
            ix = ox * d.stride_w - d.pad_left + kx * d.dilation_w
            if 0 <= iy < x.shape[1] and 0 <= ix < x.shape[2]:
                xs.append(x[b, iy, ix, g0:g0 + ci])
                ws.append(filt[c, ky, kx, :])
            else:
                outside.append(filt[c, ky, kx, :])
    cat = lambda parts: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)  # noqa: E731
    return cat(xs), cat(ws), len(xs) * ci, cat(outside)


def _depthwise_operands(w: _Work, x, filt, dtype=np.int64, image=None):
    d = w.d
    b, oy, ox, c = w.pos
    b = b if image is None else image
    _, kh, kw, _ = filt.shape
    ic = c // d.depth_multiplier
    xs, ws = [], []
    for ky in range(kh):
        iy = oy * d.stride_h - d.pad_top + ky * d.dilation_h
        for kx in range(kw):
            ix = ox * d.stride_w - d.pad_left + kx * d.dilation_w
            if 0 <= iy < x.shape[1] and 0 <= ix < x.shape[2]:
                xs.append(x[b, iy, ix, ic])
                ws.append(filt[0, ky, kx, c])
    return np.array(xs, dtype), np.array(ws, dtype)


def _fc_operands(w: _Work, x, filt):
    d = w.d
    row = _flat(w.pos[:-1], w.out.shape[:-1]) if len(w.pos) > 1 else 0
    c = w.pos[-1]
    return x.reshape(d.batch, d.depth)[row].astype(np.int64), filt[c].astype(np.int64), row


def _tconv_operands(w: _Work, x, filt):
    d = w.d
    b, oy, ox, c = w.pos
    _, kh, kw, _ = filt.shape
    xs, ws = [], []
    for iy in range(x.shape[1]):
        ky = oy + d.pad_top - iy * d.stride_h
        if not 0 <= ky < kh:
            continue
        for ix in range(x.shape[2]):
            kx = ox + d.pad_left - ix * d.stride_w
            if 0 <= kx < kw:
                xs.append(x[b, iy, ix, :])
                ws.append(filt[c, ky, kx, :])
    if not xs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(xs).astype(np.int64), np.concatenate(ws).astype(np.int64)


def _bmm_operands(w: _Work, a, b):
    d = w.d
    if d.adj_x:
        a = np.swapaxes(a, -1, -2)
    if d.adj_y:
        b = np.swapaxes(b, -1, -2)
    batch = w.pos[:-2]
    m, n = w.pos[-2], w.pos[-1]
    row = a[_bcast_index(batch, a.shape[:-2]) + (m,)]
    col = b[_bcast_index(batch, b.shape[:-2]) + (slice(None), n)]
    return row.astype(np.int64), col.astype(np.int64), a, b


# which input slots hold (input, filter, bias), per OpData
_MATRIX_SLOTS = {"TransposeConvQuantizedData": (2, 1, 3), "TransposeConvUint8Data": (2, 1, 3)}


@explains(Conv2DInt8Data, DepthwiseConv2DInt8Data, FullyConnectedInt8Data, Conv2DUint8Data,
          DepthwiseConv2DUint8Data, FullyConnectedUint8Data, Conv2DInt16Data, DepthwiseConv2DInt16Data,
          FullyConnectedInt16Data, TransposeConvQuantizedData, TransposeConvUint8Data, BatchMatMulQuantizedData)
def _explain_matrix(w: _Work):
    d, name = w.d, type(w.d).__name__
    x_t, f_t, b_t = _MATRIX_SLOTS.get(name, (0, 1, 2))
    if name.startswith("BatchMatMul"):
        b_t = -1
    x, filt = w.get(w.input_slot(x_t)), w.get(w.input_slot(f_t))
    bias_t = w.input_slot(b_t) if b_t >= 0 else -1
    c = w.pos[-1]

    # operands and offsets
    w_zp = int(getattr(d, "filter_zero_point", 0) or 0)
    in_zp = int(getattr(d, "input_zero_point", 0) or 0)
    if name.startswith("Conv2D"):
        xv, wv, taps, _ = _conv_operands(w, x, filt, d.groups)
        where = f"{taps // filt.shape[3]} in-image filter taps × {filt.shape[3]} channels"
    elif name.startswith("DepthwiseConv2D"):
        xv, wv = _depthwise_operands(w, x, filt)
        where = f"in-image taps of input channel {c // d.depth_multiplier}"
    elif name.startswith("FullyConnected"):
        xv, wv, row = _fc_operands(w, x, filt)
        where = f"input row {row} · weight row {c}"
    elif name.startswith("TransposeConv"):
        xv, wv = _tconv_operands(w, x, filt)
        where = "the input pixels whose scattered filter taps land here"
    else:
        xv, wv, _, _ = _bmm_operands(w, x, filt)
        in_zp, w_zp = d.lhs_zero_point, d.rhs_zero_point
        where = f"lhs row · rhs column {c}"
        if d.recipe == "raw int32":
            in_zp = w_zp = 0
    n_terms = len(xv)
    if name in ("Conv2DInt8Data", "DepthwiseConv2DInt8Data", "FullyConnectedInt8Data"):
        formula = f"Σ w·(x − ({in_zp})) over {n_terms} taps" if w_zp == 0 else \
            f"Σ (w − ({w_zp}))·(x − ({in_zp})) over {n_terms} taps"
    elif w_zp or in_zp:
        formula = f"Σ (w − ({w_zp}))·(x − ({in_zp})) over {n_terms} terms ({where})"
    else:
        formula = f"Σ w·x over {n_terms} terms ({where})"
    acc = int(((xv - in_zp) * (wv - w_zp)).sum())

    # recipe
    scalar_mult = np.ndim(d.output_multiplier) == 0
    m = int(d.output_multiplier if scalar_mult else d.output_multiplier[c])
    s = int(d.output_shift if scalar_mult else d.output_shift[c])
    eff = d.effective_scale if np.ndim(d.effective_scale) == 0 else d.effective_scale[c]
    # "int64" | "int32" | "double" | "raw int32" (the 16x8 / int8 TRANSPOSE_CONV / BATCH_MATMUL OpData say
    # which); the int8 / uint8 kernels: int32 sums and the double rounding ("rows")
    recipe = "int64" if name == "DepthwiseConv2DInt16Data" else getattr(d, "recipe", None) or "rows"
    if name in ("FullyConnectedInt8Data", "FullyConnectedUint8Data") and w.ctx.variant.fc_rescale == "double":
        recipe = "double"          # the reference kernels (Variant.fc_rescale): the real scale in double
        eff = float(np.float64(np.float32(d.input_scale)) * np.float64(np.float32(fs_of(d, c)))
                    / np.float64(np.float32(d.output_scale)))
    acc_what = "accumulate (int64)" if recipe == "int64" else "accumulate"
    if recipe == "int32" and _wrap32(acc) != acc:
        acc_what = "accumulate (exact; int32 wraps below)"
    w.step(acc_what, formula, acc)

    bias = 0
    if bias_t >= 0:
        bias = int(w.get(bias_t).reshape(-1)[c])
        acc = w.step("add bias", f"{acc} + {bias}", acc + bias)

    lo, hi = d.output_activation_min, d.output_activation_max
    out_zp = int(getattr(d, "output_zero_point", 0) or 0)
    if recipe == "raw int32":
        w.recipe = "int8 × int8 → int32: the plain integer product (zero points and scales ignored)"
        v = _wrap32(acc)
        if v != acc:
            w.step("int32 wrap-around", f"{acc} mod 2^32", v)
        by_hand = v
    elif recipe == "double":
        accumulator = getattr(d, "accumulator", "int32")
        kind = "16x8" if name == "FullyConnectedInt16Data" else ("uint8" if "Uint8" in name else "int8")
        w.recipe = (f"{kind} reference FULLY_CONNECTED: {accumulator} sums, round(acc · effective_scale) in "
                    f"double")
        if accumulator == "int32" and _wrap32(acc) != acc:
            acc = w.step("int32 wrap-around", f"{acc} mod 2^32", _wrap32(acc))
        prod = float(np.float64(acc) * np.float64(eff))
        w.step("scale (double)", f"{acc} · {float(eff)!r}", prod)
        r = float(quant.round_half_away_double(np.array([prod]))[0])
        if not INT32_MIN <= r <= INT32_MAX:
            v = w.step("round → int32", f"round({prod!r}) is outside int32: x86 gives INT32_MIN", INT32_MIN)
        else:
            tie = "  (an exact tie)" if abs(prod - math.trunc(prod)) == 0.5 else ""
            v = w.step("round (C round)", f"round({prod!r}), halves away from 0{tie}", int(r))
        by_hand = _finish(w, v, out_zp, lo, hi, _activation_note(d))
    elif recipe == "int64":
        w.recipe = "int64 sums, MultiplyByQuantizedMultiplier(int64): one rounding, ties up (TFLite reference)"
        w.step("multiplier", f"{float(eff):.9g} = {m}·2^({s}−31)", (m, s))
        by_hand = _finish(w, _mbqm64(w, acc, m, s), out_zp, lo, hi, _activation_note(d))
    else:
        rounding = _matrix_rounding(w, name, c)
        wrap = recipe == "int32"
        if recipe == "int32":
            w.recipe = f"int32 sums (wrap), double rounding, last shift ties {rounding}"
        else:
            w.recipe = f"{'uint8' if 'Uint8' in name else 'int8'}: int32 sums, double rounding, last shift ties " \
                       f"{rounding}"
        w.step("multiplier", f"{float(eff):.9g} = {m}·2^({s}−31)", (m, s))
        v = _mbqm(w, acc, m, s, rounding, wrap_acc=wrap,
                  wrap_shift=wrap or name == "TransposeConvUint8Data" or name.startswith("BatchMatMul"))
        by_hand = _finish(w, v, out_zp, lo, hi, _activation_note(d))

    # the float computation
    if recipe == "raw int32":
        return by_hand, float(((xv) * (wv)).sum())
    x_s, _ = w.sz(w.input_slot(x_t))
    fs, _, _ = w.quantization(w.input_slot(f_t))
    f_s = float(fs[c] if len(fs) > 1 else fs[0])
    real = float(((xv - in_zp).astype(np.float64) * x_s) @ ((wv - w_zp).astype(np.float64) * f_s))
    if bias_t >= 0:
        bs, _, _ = w.quantization(bias_t)
        b_s = float(bs[c] if len(bs) > 1 else bs[0]) if len(bs) else x_s * f_s
        real += bias * b_s
    return by_hand, _act_real(d, real)


def fs_of(d, c: int) -> float:
    """The weight scale of output channel ``c`` (one scale, or one per channel)."""
    fs = np.atleast_1d(np.asarray(d.filter_scale, np.float32))
    return float(fs[c] if len(fs) > 1 else fs[0])


def _matrix_rounding(w: _Work, name: str, c: int) -> str:
    """The tie rule of the last rounding shift the kernel uses for this element."""
    d = w.d
    if name == "DepthwiseConv2DInt8Data":
        if c < d.vector_channels:
            return "up"                   # litert-x86's 8-wide vector loop (Variant.depthwise_chunks)
        if w.ctx.variant.depthwise_chunks:
            w.step("TFLite's scalar leftover loop", f"channel {c} ≥ {d.vector_channels} (the last C·M % 8): "
                                                    f"requantized one by one, ties away from 0", "away")
        return "away"
    if name in ("Conv2DInt16Data", "TransposeConvQuantizedData"):
        up = c < d.up_channels
        if name == "TransposeConvQuantizedData" and not up and w.ctx.variant.transpose_conv_kernel != "scatter":
            w.step("TFLite's per-channel leftover", f"channel {c} ≥ {d.up_channels} (the last O % 8): scalar code, "
                                                    f"ties away from 0", "away")
        return "up" if up else "away"
    if name == "FullyConnectedInt16Data":
        return "up"                       # ruy, every channel
    if name in ("FullyConnectedInt8Data", "FullyConnectedUint8Data"):     # ruy: Variant.final_shift
        return "up" if w.ctx.variant.final_shift == "ties-up" else "away"
    if name == "TransposeConvUint8Data":
        k = _flat(w.pos, w.out.shape)
        up = k < d.up_values
        if not up and w.ctx.variant.transpose_conv_kernel != "scatter":
            w.step("TFLite's leftover values", f"flat index {k} ≥ {d.up_values} (the last size % 16): scalar code, "
                                               f"ties away from 0", "away")
        return "up" if up else "away"
    if name.startswith("BatchMatMul"):
        return "away"
    return d.rounding

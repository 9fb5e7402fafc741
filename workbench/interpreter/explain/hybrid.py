"""Hybrid matrix ops (float input quantized at run time, int8 weights, float output): FULLY_CONNECTED,
CONV_2D (ordinary and grouped), DEPTHWISE_CONV_2D, TRANSPOSE_CONV and BATCH_MATMUL."""

from __future__ import annotations

import numpy as np

from .. import quant
from ..kernels._fc_hybrid import FullyConnectedHybridData
from ..kernels.batch_matmul import BatchMatMulHybridData
from ..kernels.conv_2d import Conv2DHybridData
from ..kernels.depthwise_conv_2d import DepthwiseConv2DHybridData
from ..kernels.transpose_conv import TransposeConvHybridData
from ._steps import _activation_note, _bcast_index, _flat, _short, _Work, _wrap32
from .matrix import _conv_operands, _depthwise_operands
from .registry import explains
from .result import _show

# ----------------------------------------------------------------------------------------------
# hybrid matrix ops: float input quantized at run time, int8 weights, float output


def _quantize_row_steps(w: _Work, row: np.ndarray, asymmetric: bool, what: str):
    """The run-time quantization of one float row (SymmetricQuantizeFloats / AsymmetricQuantizeFloats)."""
    row = np.asarray(row, np.float32).reshape(1, -1)
    if asymmetric:
        q, sf, zp = quant.asymmetric_quantize_rows(row)
        rmin = min(np.float32(0.0), row.min()) if row.size else np.float32(0)
        rmax = max(np.float32(0.0), row.max()) if row.size else np.float32(0)
        w.step(f"{what}: range", f"[min(0, min x), max(0, max x)] over {row.size} values", (rmin, rmax))
        w.step("scaling factor", f"float32(({_show(rmax)} − ({_show(rmin)})) / 255)", sf[0])
        w.step("zero point", "from the end with the smaller error, rounded, in [−128, 127]", int(zp[0]))
        w.step("quantized row", "round(x / scaling factor) + zero point (first 8·⌊K/8⌋ NEON-style)", _short(q[0]))
        return q[0].astype(np.int64), sf[0], int(zp[0])
    q, sf = quant.symmetric_quantize_rows(row)
    rng = np.float32(max(abs(row.min()), abs(row.max()))) if row.size else np.float32(0)
    w.step(f"{what}: range", f"max |x| over {row.size} values", rng)
    w.step("scaling factor", f"float32({_show(rng)} / 127)" if rng else "an all-zero row: 1", sf[0])
    w.step("quantized row", "round(x · 127 / range), in [−127, 127] (first 8·⌊K/8⌋ NEON-style)", _short(q[0]))
    return q[0].astype(np.int64), sf[0], 0


def _float_clamp(w: _Work, v, lo, hi, order: str = "max-min"):
    """The float activation clamp in the kernel's order (std::max / std::min keep v on equality)."""
    v = np.float32(v)
    lo, hi = np.float32(lo), np.float32(hi)
    if order == "max-min":
        r = quant.std_min(quant.std_max(np.array([v]), lo), hi)[0]
        formula = f"min(max({_show(v)}, {_show(lo)}), {_show(hi)})"
    else:
        r = quant.std_max(quant.std_min(np.array([v]), hi), lo)[0]
        formula = f"max(min({_show(v)}, {_show(hi)}), {_show(lo)})"
    return w.step(_activation_note(w.d), formula, np.float32(r))


@explains(FullyConnectedHybridData, fused_activation=True)
def _explain_hybrid_fc(w: _Work):
    d = w.d
    w.kind = "hybrid"
    x = np.asarray(w.get(w.input_slot(0)), np.float32).reshape(d.batch, d.depth)
    filt = w.get(w.input_slot(1)).astype(np.int64)
    row = _flat(w.pos[:-1], w.out.shape[:-1]) if len(w.pos) > 1 else 0
    u = w.pos[-1]
    fs = np.asarray(d.filter_scale, np.float32)
    f_s = fs[u] if len(fs) > 1 else fs[0]
    b_t = w.input_slot(2)
    bias = np.float32(w.get(b_t).reshape(-1)[u]) if b_t >= 0 else None
    real = float(x[row].astype(np.float64) @ (filt[u].astype(np.float64) * float(f_s))) + \
        (float(bias) if bias is not None else 0.0)
    w.recipe = (f"hybrid FULLY_CONNECTED: {'asymmetric' if d.asymmetric_quantize_inputs else 'symmetric'} rows, "
                f"int8 dot product, float32 scaling")
    if not x.any():
        base = w.step("the input is all zeros", "TFLite skips the products (IsZeroVector): the output is the bias",
                      bias if bias is not None else np.float32(0))
        v = quant.apply_float_activation(np.array([base], np.float32), d.activation_code)[0]
        return w.step(f"activation ({d.activation})", f"of {_show(base)}", np.float32(v)), real
    q, sf, zp = _quantize_row_steps(w, x[row], d.asymmetric_quantize_inputs, f"input row {row}")
    acc = w.step("integer dot product", f"Σ q·w over {d.depth} values (weight row {u})", int(q @ filt[u]))
    if zp:
        rs = int(d.row_sums[u])
        acc = w.step("remove the zero point", f"{acc} − ({zp})·{rs}  (row sum of weight row {u}, int32)",
                     _wrap32(acc - zp * rs))
    scale = w.step("product scale", f"float32({_show(sf)} · {_show(f_s)})", np.float32(np.float32(sf) * f_s))
    prod = w.step("scale", f"float32({acc}) · {_show(scale)}", np.float32(np.float32(acc) * scale))
    v = prod
    if bias is not None:
        v = w.step("add bias", f"{_show(bias)} + {_show(prod)}", np.float32(bias + prod))
    if d.activation_code:
        v = w.step(f"activation ({d.activation})", f"of {_show(v)}",
                   np.float32(quant.apply_float_activation(np.array([v], np.float32), d.activation_code)[0]))
    return v, real


@explains(Conv2DHybridData, fused_activation=True)
def _explain_hybrid_conv(w: _Work):
    d = w.d
    w.kind = "hybrid"
    x = np.asarray(w.get(w.input_slot(0)), np.float32)
    filt = w.get(w.input_slot(1)).astype(np.int64)
    b, oy, ox, c = w.pos
    fs = np.asarray(d.filter_scale, np.float32)
    bias = _conv_bias(w)
    if d.recipe == "reference":
        return _reference_hybrid_conv(w, x, filt, fs, bias)
    asym = d.recipe == "per-channel"
    w.recipe = ("hybrid CONV_2D per channel: asymmetric images, zero-point border, row sums" if asym else
                "hybrid CONV_2D per tensor: symmetric images, zero border")
    q, sf, zp = _quantize_row_steps(w, x[b].reshape(-1), asym, f"image {b}")
    qimg = q.reshape(x.shape[1:])
    xv, wv, n_in, outside = _conv_operands(w, qimg[None], filt, 1, image=0)
    acc = int(xv @ wv)
    if asym and len(outside):
        border = int(outside.sum()) * zp
        acc = w.step("integer sums", f"Σ w·q over {n_in} in-image products + Σ w·({zp}) over {len(outside)} border "
                                     f"values", acc + border)
    else:
        acc = w.step("integer sums", f"Σ w·q over {n_in} in-image products", acc)
    if asym:
        if zp:
            rs = int(d.row_sums[c])
            acc = w.step("remove the zero point", f"{acc} − ({zp})·{rs}  (sum of filter {c}, int32)",
                         _wrap32(acc - zp * rs))
        scale = w.step("product scale", f"float32({_show(fs[c])} · {_show(sf)})", np.float32(fs[c] * np.float32(sf)))
    else:
        scale = w.step("product scale", f"float32({_show(sf)} · {_show(fs[0])})", np.float32(np.float32(sf) * fs[0]))
    v = w.step("scale", f"float32({acc}) · {_show(scale)}", np.float32(np.float32(acc) * scale))
    if bias is not None:
        v = w.step("add bias", f"{_show(v)} + {_show(bias[c])}", np.float32(v + bias[c]))
    by_hand = _float_clamp(w, v, d.output_activation_min, d.output_activation_max, "min-max" if asym else "max-min")
    xr, wr, _, _ = _conv_operands(w, x, filt, 1, np.float64)
    real = float(xr @ (wr * float(fs[c] if len(fs) > 1 else fs[0])))
    return by_hand, real + (float(bias[c]) if bias is not None else 0.0)


def _conv_bias(w: _Work):
    """The float32 bias of a hybrid CONV_2D node, or None."""
    b_t = w.input_slot(2)
    return np.asarray(w.get(b_t), np.float32) if b_t >= 0 else None


def _reference_hybrid_conv(w: _Work, x, filt, fs, bias):
    """TFLite's reference HybridConvPerChannel (grouped convolutions; every per-channel one under the
    reference variant): int32 Σ w·(q − zp) over the in-image taps of the output channel's group, then
    float32 (sum · filter scale) · scaling factor."""
    d = w.d
    b, c = w.pos[0], w.pos[3]
    o, ci = filt.shape[0], filt.shape[3]
    g = c // (o // d.groups)
    what = f"grouped hybrid CONV_2D ({d.groups} groups" if d.groups > 1 else "hybrid CONV_2D per channel ("
    w.recipe = (f"{what}{', ' if d.groups > 1 else ''}TFLite's reference kernel): asymmetric images, "
                f"int32 sums over the group's in-image taps, float32 · filter scale · scaling factor")
    q, sf, zp = _quantize_row_steps(w, x[b].reshape(-1), True, f"image {b}")
    xv, wv, n_in, outside = _conv_operands(w, q.reshape(x.shape[1:])[None], filt, d.groups, image=0)
    if d.groups > 1:
        w.step("group", f"output channel {c}: group {g} of {d.groups} ({o // d.groups} filters each), input "
                        f"channels {g * ci}–{g * ci + ci - 1}", g)
    skipped = f"; {len(outside) // ci} taps off the image are skipped" if len(outside) else ""
    acc = w.step("integer sum", f"Σ w·(q − ({zp})) over {n_in} in-image products{skipped}",
                 _wrap32(int(((xv - zp) * wv).sum())))
    sf = np.float32(sf)
    t = w.step("× filter scale", f"float32({acc}) · {_show(fs[c])}", np.float32(np.float32(acc) * fs[c]))
    v = w.step("× scaling factor", f"{_show(t)} · {_show(sf)}", np.float32(t * sf))
    if bias is not None:
        v = w.step("add bias", f"{_show(v)} + {_show(bias[c])}", np.float32(v + bias[c]))
    by_hand = _float_clamp(w, v, d.output_activation_min, d.output_activation_max)
    xr, wr, _, _ = _conv_operands(w, x, filt, d.groups, np.float64)
    real = float(xr @ (wr * float(fs[c])))
    return by_hand, real + (float(bias[c]) if bias is not None else 0.0)


@explains(DepthwiseConv2DHybridData, fused_activation=True)
def _explain_hybrid_depthwise(w: _Work):
    d = w.d
    w.kind = "hybrid"
    x = np.asarray(w.get(w.input_slot(0)), np.float32)
    filt = w.get(w.input_slot(1)).astype(np.int64)
    b, oy, ox, c = w.pos
    fs = np.asarray(d.filter_scale, np.float32)
    chunks = w.ctx.variant.depthwise_chunks
    w.recipe = ("hybrid DEPTHWISE_CONV_2D: asymmetric images, int32 sums, float32 scaling in "
                + ("litert-x86's order" if chunks else "the reference kernel's order"))
    q, sf, zp = _quantize_row_steps(w, x[b].reshape(-1), True, f"image {b}")
    xv, wv = _depthwise_operands(w, q.reshape(x.shape[1:])[None], filt, image=0)
    acc = w.step("integer sum", f"Σ w·(q − ({zp})) over {len(xv)} in-image taps", _wrap32(((xv - zp) * wv).sum()))
    sf = np.float32(sf)
    if not chunks:
        t = w.step("product scale", f"float32({_show(fs[c])} · {_show(sf)})", np.float32(fs[c] * sf))
        v = w.step("scale", f"float32({acc}) · {_show(t)}", np.float32(np.float32(acc) * t))
    elif c < d.vector_channels:
        t = w.step("× filter scale", f"float32({acc}) · {_show(fs[c])}  (4-wide vector loop)",
                   np.float32(np.float32(acc) * fs[c]))
        v = w.step("× scaling factor", f"{_show(t)} · {_show(sf)}", np.float32(t * sf))
    else:
        t = w.step("× scaling factor", f"float32({acc}) · {_show(sf)}  (leftover channel)",
                   np.float32(np.float32(acc) * sf))
        v = w.step("× filter scale", f"{_show(t)} · {_show(fs[c])}", np.float32(t * fs[c]))
    b_t = w.input_slot(2)
    bias = np.float32(w.get(b_t).reshape(-1)[c]) if b_t >= 0 else None
    if bias is not None:
        v = w.step("add bias", f"{_show(v)} + {_show(bias)}", np.float32(v + bias))
    by_hand = _float_clamp(w, v, d.output_activation_min, d.output_activation_max)
    xr, wr = _depthwise_operands(w, x, filt, np.float64)
    return by_hand, float(xr @ (wr * float(fs[c]))) + (float(bias) if bias is not None else 0.0)


@explains(BatchMatMulHybridData)
def _explain_hybrid_bmm(w: _Work):
    d = w.d
    w.kind = "hybrid"
    a = np.asarray(w.get(w.input_slot(0)), np.float32)
    b = w.get(w.input_slot(1))
    if d.adj_x:
        a = np.swapaxes(a, -1, -2)
    if d.adj_y:
        b = np.swapaxes(b, -1, -2)
    batch, m, n = w.pos[:-2], w.pos[-2], w.pos[-1]
    a_idx = _bcast_index(batch, a.shape[:-2]) + (m,)
    b_idx = _bcast_index(batch, b.shape[:-2])
    row = _flat(a_idx, a.shape[:-1])
    w.recipe = (f"hybrid BATCH_MATMUL: {'asymmetric' if d.asymmetric_quantize_inputs else 'symmetric'} lhs rows, "
                f"float32 correction and scaling (TFLite's reference kernel)")
    q, sf, zp = _quantize_row_steps(w, a[a_idx], d.asymmetric_quantize_inputs, f"lhs row {row}")
    col = b[b_idx + (slice(None), n)].astype(np.int64)
    dot = w.step("integer dot product", f"Σ q·w over {len(col)} values (rhs column {n})", int(q @ col))
    rs = int(d.row_sums[b_idx + (n,)])
    prod = w.step("zero point · row sum", f"float32({rs}) · float32({zp})",
                  np.float32(np.float32(rs) * np.float32(zp)))
    total = w.step("correct, truncate", f"(int32)(float32({dot}) − {_show(prod)})",
                   np.float32(np.trunc(np.float32(np.float32(dot) - prod))))
    fs = np.asarray(d.filter_scale, np.float32)
    f_s = fs[n] if d.per_channel else fs[0]
    scale = w.step("product scale", f"float32({_show(np.float32(sf))} · {_show(f_s)})",
                   np.float32(np.float32(sf) * f_s))
    v = w.step("scale", f"{_show(scale)} · {_show(total)}", np.float32(np.float32(0) + np.float32(scale * total)))
    real = float(a[a_idx].astype(np.float64) @ (col.astype(np.float64) * float(f_s)))
    return v, real


_TAP_STEPS = 24      # hybrid TRANSPOSE_CONV: taps written out one by one; the rest are summed in one step


@explains(TransposeConvHybridData, fused_activation=True)
def _explain_hybrid_tconv(w: _Work):
    """Hybrid TRANSPOSE_CONV (TFLite's reference HybridTransposeConv): the image quantized asymmetrically,
    every tap that lands on the output element added as its own float32 product, then bias, clamp."""
    d = w.d
    w.kind = "hybrid"
    x = np.asarray(w.get(w.input_slot(2)), np.float32)
    filt = w.get(w.input_slot(1)).astype(np.int64)
    b_t = w.input_slot(3)
    b, oy, ox, c = w.pos
    _, kh, kw, ci = filt.shape
    f_s = np.float32(np.asarray(d.filter_scale, np.float32)[c])
    w.recipe = ("hybrid TRANSPOSE_CONV (TFLite's reference kernel): an asymmetric image, every tap its own "
                "float32 product and float32 sum in litert's order, then bias, clamp")
    q, sf, zp = _quantize_row_steps(w, x[b].reshape(-1), True, f"image {b}")
    sf = np.float32(sf)
    qimg = q.reshape(x.shape[1:])
    # the taps that land on (oy, ox): input (iy, ix) with filter (ky, kx) = (oy + pad − iy·S, ox + pad − ix·S),
    # visited as litert scatters them: input row, input column, input channel
    taps = [(iy, ix, ky, kx) for iy in range(x.shape[1]) for ix in range(x.shape[2])
            for ky, kx in [(oy + d.pad_top - iy * d.stride_h, ox + d.pad_left - ix * d.stride_w)]
            if 0 <= ky < kh and 0 <= kx < kw]
    where = ", ".join(f"x[{iy},{ix}]·w[{ky},{kx}]" for iy, ix, ky, kx in taps) or "none"
    w.step("taps landing here", f"{len(taps)} input pixel{'s' if len(taps) != 1 else ''} × {ci} channels: {where} "
                                f"(x[iy, ix]·w[ky, kx] of filter {c})", len(taps) * ci)
    total = np.float32(0.0)
    exact = 0
    k = 0
    for iy, ix, ky, kx in taps:
        for ic in range(ci):
            qv, wv = int(qimg[iy, ix, ic]), int(filt[c, ky, kx, ic])
            p = np.float32(np.float32(qv - zp) * np.float32(wv))
            t1 = np.float32(p * f_s)
            t2 = np.float32(t1 * sf)
            new = np.float32(total + t2)
            k += 1
            if k <= _TAP_STEPS:
                w.step(f"tap {k}: x[{b},{iy},{ix},{ic}], w[{c},{ky},{kx},{ic}]",
                       f"{_show(total)} + float32(float32(({qv} − ({zp}))·({wv}) · {_show(f_s)}) · {_show(sf)})"
                       f"  [{int(p)} → {_show(t1)} → {_show(t2)}]", new)
            total = new
            exact += (qv - zp) * wv
    if k > _TAP_STEPS:
        w.step(f"taps {_TAP_STEPS + 1}–{k}", "each the same way: float32 product · filter scale, · scaling factor, "
                                             "added to the float32 sum", total)
    if not k:
        w.step("no tap lands here", "the sum stays 0 (this output element is outside every input pixel's reach)",
               total)
    once = np.float32(np.float32(np.float32(_wrap32(exact)) * f_s) * sf)
    same = "the same here" if once == total else "a different float32 here"
    w.step("(not what runs) one sum",
           f"float32(float32(Σ (q − zp)·w = {exact}) · {_show(f_s)}) · {_show(sf)}: {same}", once)
    bias = w.get(b_t) if b_t >= 0 else None
    bias_c = np.float32(bias[c]) if bias is not None else np.float32(0.0)
    v = w.step("add bias", f"{_show(total)} + {_show(bias_c)}" + ("" if b_t >= 0 else "  (no bias tensor: 0)"),
               np.float32(total + bias_c))
    by_hand = _float_clamp(w, v, d.output_activation_min, d.output_activation_max)
    real = float(bias_c)
    for iy, ix, ky, kx in taps:
        real += float(x[b, iy, ix].astype(np.float64) @ (filt[c, ky, kx].astype(np.float64) * float(f_s)))
    return by_hand, real

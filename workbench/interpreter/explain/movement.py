"""Elements that are copied, not computed (``kind == "copy"``): data movement traced by running the
kernel on inputs that encode their own positions, CONCATENATION (copied or requantized), and the
selections MAXIMUM / MINIMUM, REDUCE_MAX / REDUCE_MIN, ARG_MAX / ARG_MIN, SHAPE / RANK."""

from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..kernels._arg import ArgData
from ..kernels._elementwise import ElementwiseData
from ..kernels._reduce import ReduceData
from ..kernels.rank import RankData
from ..kernels.shape import ShapeData
from ._steps import _finish, _flat, _operand, _real, _short, _Work
from .registry import explains
from .result import _item, _number, _show

# ----------------------------------------------------------------------------------------------
# selections: a comparison, no arithmetic


@explains(ElementwiseData, ops=("MAXIMUM", "MINIMUM"))
def _explain_select2(w: _Work):
    """MAXIMUM / MINIMUM: a comparison of the stored integers, no arithmetic."""
    a, ia = _operand(w, 0)
    b, ib = _operand(w, 1)
    bigger = w.n.op_name == "MAXIMUM"
    w.kind = "copy"
    w.recipe = "a comparison of the stored integers (quantization ignored): nothing is computed"
    first = a > b if bigger else a < b
    v = w.step("copy (no arithmetic)", f"{'max' if bigger else 'min'}(x{list(ia)} = {a}, y{list(ib)} = {b})",
               a if first else b)
    s, zp = w.sz(w.input_slot(0))
    return v, _real(s, v, zp)


@explains(ShapeData, ops=("SHAPE",))
@explains(RankData, ops=("RANK",))
def _explain_shape(w: _Work):
    x = w.get(w.input_slot(0))
    w.kind = "copy"
    w.recipe = "no arithmetic: the output holds the input's shape"
    if w.n.op_name == "RANK":
        v = w.step("rank of the input", f"'{w.ctx.name(w.input_slot(0))}' has shape {list(x.shape)}", x.ndim)
        return v, float(v)
    k = w.pos[-1]
    v = w.step("dimension of the input", f"shape of '{w.ctx.name(w.input_slot(0))}' {list(x.shape)}, entry {k}",
               int(x.shape[k]))
    return v, float(v)


@explains(ArgData, ops=("ARG_MAX", "ARG_MIN"))
def _explain_arg(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0))
    idx = list(w.pos)
    idx.insert(d.axis, slice(None))
    row = x[tuple(idx)]
    w.kind = "copy"
    w.recipe = "a comparison of the stored values (the scale is positive: same order as the reals)"
    fn = np.argmax if w.n.op_name == "ARG_MAX" else np.argmin
    v = w.step("position of the " + ("largest" if w.n.op_name == "ARG_MAX" else "smallest"),
               f"along axis {d.axis} over {row.size} values {_short(row)} (the first of ties)", int(fn(row)))
    return v, float(v)


@explains(ReduceData, ops=("REDUCE_MAX", "REDUCE_MIN"))
def _explain_reduce_select(w: _Work):
    """REDUCE_MAX / REDUCE_MIN: a comparison, no arithmetic."""
    d = w.d
    x = w.get(w.input_slot(0))
    from ..kernels.mean import reduced_rows
    row = reduced_rows(x, tuple(d.axes))[_flat(w.pos, w.out.shape)]
    pick = np.argmax(row) if w.n.op_name == "REDUCE_MAX" else np.argmin(row)
    w.kind = "copy"
    w.recipe = "a comparison of the stored values: nothing is computed"
    v = row[pick].item()
    w.step("copy (no arithmetic)", f"{'largest' if w.n.op_name == 'REDUCE_MAX' else 'smallest'} of {row.size} "
                                   f"values {_short(row)} (value {pick} of the reduced ones)", v)
    s, zp = w.sz(w.input_slot(0))
    return v, (_real(s, v, zp) if w.is_quantized(w.input_slot(0)) else float(v))


# ----------------------------------------------------------------------------------------------
# CONCATENATION


def _explain_concatenation(w: _Work):
    d = w.d
    axis = d.axis
    k = w.pos[axis]
    for j, t in enumerate(w.n.inputs):
        size = w.ctx.shapes[t][axis]
        if k < size:
            break
        k -= size
    src = tuple(w.pos[:axis]) + (k,) + tuple(w.pos[axis + 1:])
    x = w.get(t)
    v = int(x[src]) if x.dtype.kind in "iu" else _item(x[src])
    s, zp = w.sz(t)
    real = _real(s, v, zp) if w.is_quantized(t) else _number(v)
    if not (d.rescaled and d.rescaled[j]):
        w.kind = "copy"
        w.recipe = "no arithmetic: the values are copied" + (
            " (int16: TFLite copies even when the scales differ)" if d.input_scales and x.dtype == np.int16 else "")
        w.step("copy (no arithmetic)", f"output{list(w.pos)} ← input {j} '{w.ctx.name(t)}'{list(src)}", v)
        return v, real
    w.recipe = "uint8 CONCATENATION: an input with other scale / zero point is requantized in float32"
    w.step("value", f"input {j} '{w.ctx.name(t)}'{list(src)}", v)
    scale, bias = np.float32(d.scale[j]), np.float32(d.bias[j])
    f = w.step("rescale (float32)", f"{v} · {_show(scale)} + {_show(bias)}  (scale = in_s · (1/out_s), bias = "
                                    f"−in_zp · scale)", np.float32(np.float32(np.float32(v) * scale) + bias))
    r = w.step("round", f"round({_show(f)}), halves away from 0", int(quant.round_half_away(np.array([f]))[0]))
    return _finish(w, r, d.output_zero_point, 0, 255), real


# ----------------------------------------------------------------------------------------------
# data movement: which input element was copied


# op → the input slots that carry data (the others: shapes, indices, paddings, multiples ...)
DATA_MOVEMENT = {
    "RESHAPE": (0,), "SQUEEZE": (0,), "EXPAND_DIMS": (0,), "TRANSPOSE": (0,), "PAD": (0,), "PADV2": (0, 2),
    "MIRROR_PAD": (0,), "TILE": (0,), "GATHER": (0,), "GATHER_ND": (0,), "STRIDED_SLICE": (0,), "SLICE": (0,),
    "SPLIT": (1,), "SPLIT_V": (0,), "PACK": None, "UNPACK": (0,), "CONCATENATION": None,
    "SPACE_TO_BATCH_ND": (0,), "BATCH_TO_SPACE_ND": (0,), "SPACE_TO_DEPTH": (0,), "DEPTH_TO_SPACE": (0,),
    "RESIZE_NEAREST_NEIGHBOR": (0,), "REVERSE_V2": (0,), "BROADCAST_TO": (0,), "SELECT": (1, 2),
    "SELECT_V2": (1, 2),
}


def _digits_plan(dtype):
    """(bits per probe digit, value of digit 0) for a tensor type the probe can encode positions in."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return 1, 0
    if dt.kind == "f":
        return (10 if dt.itemsize == 2 else 16), 0
    if dt.kind in "iu" and dt.itemsize >= 1:
        bits = min(8 * dt.itemsize, 16)
        return bits, (-(1 << (bits - 1)) if dt.kind == "i" and bits == 8 * dt.itemsize else 0)
    return None


def _run_probe(w: _Work, values: dict, output: int) -> np.ndarray:
    """Run the node's kernel with some inputs replaced (``values``: tensor → array); the interpreter's
    own arrays are put back afterwards."""
    ctx, n = w.ctx, w.n
    saved = {t: ctx.tensors[t] for t in set(values) | set(n.outputs)}
    try:
        for t, v in values.items():
            ctx.tensors[t] = v
        for t in n.outputs:
            ctx.tensors[t] = np.zeros_like(saved[t]) if saved[t] is not None else None
        w.kernel.invoke(ctx, n, w.d)
        return np.array(ctx.tensors[n.outputs[output]])
    finally:
        for t, v in saved.items():
            ctx.tensors[t] = v


def _explain_copy(w: _Work, output: int):
    n = w.n
    slots = DATA_MOVEMENT[n.op_name]
    out_t = n.outputs[output]
    tagged = [(k, t) for k, t in enumerate(n.inputs) if t >= 0 and (slots is None or k in slots)
              and w.ctx.dtypes[t] == w.ctx.dtypes[out_t]]
    # strings: the position itself, written as text, in one run
    plan = (62, 0) if w.ctx.dtypes[out_t] == np.dtype(object) else _digits_plan(w.ctx.dtypes[out_t])
    if plan is None or not tagged:
        raise NotImplementedError(f"explain() cannot trace the copies of node {n.index} {n.op_name} "
                                  f"({w.ctx.dtypes[out_t]} data)")
    bits, base = plan
    dtype = w.ctx.dtypes[out_t]
    sizes = [int(np.prod(w.ctx.tensors[t].shape if w.ctx.tensors[t] is not None else w.get(t).shape))
             for _, t in tagged]
    total = sum(sizes) + 1
    ndig = max(1, math.ceil(math.log2(total + 1) / bits))
    k_out = _flat(w.pos, w.out.shape)
    ident = 0
    constant = False
    offsets = np.cumsum([1] + sizes[:-1])
    for p in range(ndig):
        runs = []
        for shift in (0, 1):
            vals = {}
            for (k, t), off, size in zip(tagged, offsets, sizes):
                shape = w.get(t).shape
                ids = np.arange(off, off + size, dtype=np.int64)
                digit = ((ids >> (bits * p)) + shift) & ((1 << bits) - 1)
                if dtype == np.dtype(object):
                    vals[t] = np.array([f"{shift}:{v}".encode() for v in digit], object).reshape(shape)
                else:
                    vals[t] = (digit + base).astype(dtype).reshape(shape)
            got = np.asarray(_run_probe(w, vals, output)).reshape(-1)[k_out]
            if dtype == np.dtype(object):
                text = bytes(got).decode(errors="replace")
                got = int(text.split(":")[1]) if text.startswith(f"{shift}:") else -1 - shift
            runs.append(int(got) - base)
        if runs[0] == runs[1]:
            constant = True
            break
        ident |= (runs[0] & ((1 << bits) - 1)) << (bits * p)
    w.kind = "copy"
    value = _item(w.out[w.pos])
    if constant or not 1 <= ident < total:
        w.recipe = "no arithmetic: this element is not taken from the input data"
        s, zp = w.sz(out_t)
        what = " (the output zero point: real 0.0)" if w.is_quantized(out_t) and value == zp else ""
        v = _item(_run_probe(w, {}, output).reshape(-1)[k_out])
        w.step("written by the kernel", f"a constant that does not depend on the inputs (padding / fill){what}", v)
        return v, (_real(s, v, zp) if w.is_quantized(out_t) else _number(v))
    j = int(np.searchsorted(offsets, ident, side="right")) - 1
    k, t = tagged[j]
    src = np.unravel_index(ident - offsets[j], w.get(t).shape)
    src = tuple(int(i) for i in src)
    v = _item(w.get(t)[src])
    w.recipe = "no arithmetic: the value is copied"
    name = w.ctx.name(t)
    w.step("copy (no arithmetic)", f"output{list(w.pos)} ← input {k} '{name}'{list(src)}", v)
    if w.is_quantized(t) and w.is_quantized(out_t) and w.sz(t) != w.sz(out_t):
        w.step("note", f"the input's scale / zero point {w.sz(t)} differ from the output's {w.sz(out_t)}: the same "
                       f"integer now stands for another real number", v)
    s, zp = w.sz(t)
    return v, (_real(s, v, zp) if w.is_quantized(t) else _number(v))

"""Views for integer arithmetic (notebook 04): what int8 values stand for, how a real multiplier
becomes an int32 mantissa and a shift, where the roundings happen, per-channel weights, and how far
an int8 model drifts from float.

    from workbench.viz import quant as vq
    vq.scale_view(0.0078, -1)                  # q → real for a few q, the representable range
    vq.multiplier_view(0.00106567)             # frexp → mantissa · 2^31 → (multiplier, shift)
    vq.rounding_view(-2269, 1575127402, -8)    # SRDHM, then the final shift: ties away vs ties up
    vq.find_tie(1575127402, -8)                # an accumulator whose final shift is an exact tie
    vq.weight_error(w, axis=-1)                # per-tensor vs per-channel int8 weights, per channel
    vq.dequantized_twin(model)                 # the same network in float32 (weights dequantized)
    vq.float_vs_int8(model, x)                 # every layer's error, in output steps
    vq.compare_variants(model, q)              # LiteRT's x86 build against TFLite's reference kernels

Every view is a small frozen object with a text ``repr`` and ``_repr_html_``; the numbers it shows
are attributes too, so a notebook (or a test) can ask for them.  The arithmetic itself is the
library's (:mod:`workbench.interpreter.quant`); nothing here re-implements a kernel.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..interpreter import Interpreter
from ..interpreter import quant as Q
from ..schema import TensorType, dump, load, tensor_data
from . import _html as H

__all__ = ["scale_view", "multiplier_view", "rounding_view", "find_tie", "weight_error", "dequantized_twin",
           "float_vs_int8", "accumulators", "rounding_census", "histogram", "compare_variants"]


# ----------------------------------------------------------------------------------------------
# a table with a title and notes (the shape every view here takes)


@dataclass(frozen=True)
class _View:
    title: str
    headers: tuple
    rows: tuple                 # tuples of already formatted strings
    notes: tuple = ()

    def __repr__(self) -> str:
        widths = [max(len(str(h)), *(len(r[i]) for r in self.rows)) if self.rows else len(str(h))
                  for i, h in enumerate(self.headers)]

        def line(cells):
            return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths)).rstrip()

        out = [self.title, "  " + line(self.headers)] + ["  " + line(r) for r in self.rows]
        return "\n".join(out + list(self.notes))

    def _repr_html_(self) -> str:
        notes = "".join(f"<div>{H.esc(n)}</div>" for n in self.notes)
        rows = [[H.esc(c) for c in r] for r in self.rows]
        return (f"<div style='{H.BOX}'><div><b>{H.esc(self.title)}</b></div>"
                f"{H.table(self.headers, rows)}{notes}</div>")


def _real(x: float) -> str:
    return f"{x:.6g}"


# ----------------------------------------------------------------------------------------------
# 1. scale and zero point


@dataclass(frozen=True, repr=False)
class ScaleView(_View):
    scale: float = 0.0
    zero_point: int = 0
    lowest: float = 0.0
    highest: float = 0.0


def scale_view(scale: float, zero_point: int, qs=None, qmin: int = -128, qmax: int = 127) -> ScaleView:
    """real = scale · (q − zero_point) for a few q (default: qmin, zero point, 0, qmax)."""
    scale, zero_point = float(scale), int(zero_point)
    qs = sorted({qmin, zero_point, 0, qmax}) if qs is None else list(qs)
    rows = tuple((str(q), f"{scale:.6g} · ({q} − ({zero_point}))", _real(scale * (q - zero_point))) for q in qs)
    lo, hi = scale * (qmin - zero_point), scale * (qmax - zero_point)
    notes = (f"representable: [{_real(lo)}, {_real(hi)}] in steps of {_real(scale)}; "
             f"real 0.0 is exactly q = {zero_point}",)
    return ScaleView(f"int8 with scale {scale:.6g}, zero point {zero_point}", ("q", "scale · (q − zp)", "real"),
                     rows, notes, scale, zero_point, lo, hi)


# ----------------------------------------------------------------------------------------------
# 2. real multiplier → (int32 mantissa, shift)


@dataclass(frozen=True, repr=False)
class MultiplierView(_View):
    real: float = 0.0
    multiplier: int = 0
    shift: int = 0
    represented: float = 0.0


def multiplier_view(real: float) -> MultiplierView:
    """QuantizeMultiplier step by step: frexp, scale the fraction to 31 bits, round, the shift."""
    real = float(real)
    frac, exp = math.frexp(real)
    m, shift = Q.quantize_multiplier(real)
    back = m * 2.0 ** (shift - 31)
    rows = (("frexp", f"{real:.9g} = {frac:.12g} · 2^{exp}", f"fraction in [0.5, 1), exponent {exp}"),
            ("fraction · 2^31", f"{frac:.12g} · 2147483648", f"{frac * 2 ** 31:.4f}"),
            ("round (half away)", "std::round", f"multiplier = {m}"),
            ("shift", "the exponent", f"{shift}  ({'left' if shift > 0 else 'right'} shift by {abs(shift)})"),
            ("check", f"{m} · 2^({shift} − 31)", f"{back:.12g}  (relative error {abs(back - real) / real:.1e})"))
    return MultiplierView(f"quantize_multiplier({real:.9g})", ("step", "computation", "result"), rows, (),
                          real, m, shift, back)


# ----------------------------------------------------------------------------------------------
# 3. where the rounding happens


@dataclass(frozen=True, repr=False)
class RoundingView(_View):
    exact: float = 0.0
    high: int = 0
    reference: int = 0          # gemmlowp RoundingDivideByPOT: ties away from zero
    ruy: int = 0                # ruy / x86 TFLite: ties toward +infinity
    single: int = 0             # one rounding of the exact product (TFLITE_SINGLE_ROUNDING builds)

    @property
    def is_tie(self) -> bool:
        return self.reference != self.ruy


def rounding_view(x: int, multiplier: int, shift: int) -> RoundingView:
    """x · multiplier · 2^(shift − 31) computed exactly, then the two roundings TFLite does."""
    x, multiplier, shift = int(x), int(multiplier), int(shift)
    left, right = max(shift, 0), max(-shift, 0)
    xs = x << left
    high = Q.saturating_rounding_doubling_high_mul(xs, multiplier)
    exact = xs * multiplier / 2 ** (31 + right)
    ref = Q.rounding_divide_by_pot(high, right)
    ruy = Q.rounding_right_shift_half_up(high, right)
    total = 31 + right
    single = (xs * multiplier + (1 << (total - 1))) >> total
    rows = (("exact value", f"{x}·{multiplier}·2^({shift}−31)", f"{exact:.6f}"),
            ("1st rounding: SRDHM", f"round({xs}·{multiplier} / 2^31)", str(high)),
            ("   … as a fraction", f"{high} / 2^{right}", f"{high / 2 ** right:.6f}"),
            ("2nd rounding, reference", "RoundingDivideByPOT (ties away from 0)", str(ref)),
            ("2nd rounding, ruy (x86)", f"({high} + 2^{right - 1}) >> {right} (ties up)" if right else "none",
             str(ruy)),
            ("single rounding", "round(exact), ties up (opt-in build flag)", str(single)))
    note = ("a tie: the reference kernels and TFLite's x86 kernels disagree by one" if ref != ruy
            else "no tie: every variant agrees" if ref == ruy == single else "")
    return RoundingView(f"multiply_by_quantized_multiplier({x}, {multiplier}, {shift})",
                        ("step", "computation", "value"), rows, (note,) if note else (), exact, high, ref, ruy, single)


def find_tie(multiplier: int, shift: int, sign: int = -1, start: int = 1, limit: int = 1 << 20) -> int:
    """The accumulator of smallest magnitude ≥ ``start`` (with the given sign) whose final rounding
    shift lands exactly half-way, i.e. where ties-away and ties-up give different answers."""
    right = -int(shift)
    if right <= 0:
        raise ValueError("a shift ≥ 0 has no final rounding shift, so no ties")
    half = 1 << (right - 1)
    mask = (1 << right) - 1
    for a in range(int(start), int(start) + limit):
        high = Q.saturating_rounding_doubling_high_mul(sign * a, int(multiplier))
        if high & mask == half and high < 0:
            return sign * a
    raise ValueError("no tie found in range")


# ----------------------------------------------------------------------------------------------
# 4. per-tensor vs per-channel weights


@dataclass(frozen=True, repr=False)
class WeightError(_View):
    per_tensor_rms: float = 0.0
    per_channel_rms: float = 0.0


def _symmetric_int8(w: np.ndarray, scale) -> np.ndarray:
    return np.clip(Q.round_half_away(w / scale), -127, 127) * scale


def weight_error(w, axis: int = -1) -> WeightError:
    """Quantize float weights to symmetric int8 twice — one scale for the tensor, one per channel
    along ``axis`` (zero point 0, range [−127, 127]) — and compare the errors channel by channel."""
    w = np.moveaxis(np.asarray(w, np.float64), axis, -1).reshape(-1, np.shape(w)[axis])
    amax = np.abs(w).max(axis=0)
    s_t = amax.max() / 127
    s_c = np.where(amax > 0, amax / 127, 1.0)
    e_t = _symmetric_int8(w, s_t) - w
    e_c = _symmetric_int8(w, s_c) - w

    def rms(e):
        return float(np.sqrt((e ** 2).mean()))

    rows = tuple((str(c), f"{amax[c]:.4f}", f"{s_t:.2e}", f"{rms(e_t[:, c]):.2e}", f"{s_c[c]:.2e}",
                  f"{rms(e_c[:, c]):.2e}", f"{rms(e_t[:, c]) / max(rms(e_c[:, c]), 1e-30):.1f}×")
                 for c in range(w.shape[1]))
    notes = (f"whole tensor: rms error {rms(e_t):.2e} per-tensor, {rms(e_c):.2e} per-channel "
             f"({rms(e_t) / max(rms(e_c), 1e-30):.1f}× smaller)",)
    return WeightError("int8 weights: one scale vs one scale per channel",
                       ("channel", "max|w|", "tensor scale", "rms err", "channel scale", "rms err", "gain"),
                       rows, notes, rms(e_t), rms(e_c))


# ----------------------------------------------------------------------------------------------
# 5. the error against float


def dequantized_twin(model):
    """The same network in float32: every int8/int32 tensor with quantization parameters becomes
    float32, constant data dequantized (per channel where the file says so).  Running it on the
    dequantized input shows what the int8 arithmetic costs, with weight rounding left out (both
    models use the same, already rounded, weights)."""
    sg = model.subgraphs[0]
    buffers, tensors = list(model.buffers), []
    for i, t in enumerate(sg.tensors):
        q = t.quantization
        if t.type in (TensorType.INT8, TensorType.INT32) and q is not None and q.scale:
            data = tensor_data(model, 0, i)
            if data is not None:
                scale = np.asarray(q.scale, np.float64)
                zp = np.asarray(q.zero_point or [0] * len(scale), np.int64)
                shape = [1] * data.ndim
                if len(scale) > 1:
                    shape[q.quantized_dimension or 0] = -1
                real = (data.astype(np.int64) - zp.reshape(shape)) * scale.reshape(shape)
                buffers[t.buffer] = dataclasses.replace(buffers[t.buffer], data=real.astype(np.float32).tobytes(),
                                                        offset=0, size=0)
            t = dataclasses.replace(t, type=TensorType.FLOAT32, quantization=None)
        tensors.append(t)
    twin = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),)
                               + tuple(model.subgraphs[1:]), buffers=tuple(buffers))
    return load(dump(twin))


def _run(it: Interpreter, x) -> None:
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.asarray(x, d["dtype"]).reshape(d["shape"]))
    it.invoke()


def histogram(values, bins, width: int = 30) -> str:
    """A text histogram (one line per bin) — no plotting library needed."""
    counts, edges = np.histogram(values, bins=bins)
    top = max(int(counts.max()), 1)
    return "\n".join(f"  [{edges[i]:+.2f}, {edges[i + 1]:+.2f})  {'█' * round(width * c / top):<{width}} {c}"
                     for i, c in enumerate(counts))


@dataclass(frozen=True, repr=False)
class FloatVsInt8(_View):
    errors: dict = field(default_factory=dict)      # node index → its output's error, in steps
    output_error: object = None                     # the model output's error (float units)
    output_steps: object = None                     # … in output steps


def float_vs_int8(model, x_float, nodes=None) -> FloatVsInt8:
    """Run ``model`` (int8) and its :func:`dequantized_twin` (float32) on the same input and compare
    every node's output: the int8 value dequantized minus the float value, in the int8 tensor's
    steps (its scale).  ``x_float`` is the float input; the int8 run gets it quantized."""
    from ..schema import op_name
    sg = model.subgraphs[0]
    names = [op_name(model.operator_codes[op.opcode_index]) for op in sg.operators]
    boundary = sorted({n for n in names if n in ("QUANTIZE", "DEQUANTIZE")})
    if boundary:
        raise ValueError(f"the model converts types inside ({', '.join(boundary)}); float_vs_int8 needs a model "
                         f"that is int8 from its input to its output")
    it = Interpreter(model=model, keep_intermediates=True)
    ft = Interpreter(model=dequantized_twin(model), keep_intermediates=True)
    it.allocate_tensors()
    ft.allocate_tensors()
    d = it.get_input_details()[0]
    x_float = np.asarray(x_float, np.float32).reshape(d["shape"])
    if d["dtype"] == np.int8:
        s, zp = d["quantization"]
        xq = np.clip(Q.round_half_away(x_float / np.float32(s)) + zp, -128, 127).astype(np.int8)
        _run(it, xq)
        _run(ft, (xq.astype(np.float64) - zp) * s)
    else:
        _run(it, x_float)
        _run(ft, x_float)
    rows, errors = [], {}
    for n, *_ in it.prepared():
        if nodes is not None and n.index not in nodes:
            continue
        t = n.outputs[0]
        q = sg.tensors[t].quantization
        if sg.tensors[t].type != TensorType.INT8 or q is None or not q.scale:
            continue
        s, zp = float(q.scale[0]), int((q.zero_point or [0])[0])
        f = ft.get_tensor(t).astype(np.float64)
        err = ((it.get_tensor(t).astype(np.float64) - zp) * s - f) / s
        errors[n.index] = err
        outside = (f < s * (-128.5 - zp)) | (f > s * (127.5 - zp))      # beyond the int8 range: clipped
        inside = np.abs(err[~outside]).max() if (~outside).any() else 0.0
        rows.append((str(n.index), n.op_name, f"{s:.3g}", f"{np.abs(err).mean():.2f}", f"{np.abs(err).max():.2f}",
                     str(int(outside.sum())), f"{inside:.2f}"))
    out_t = sg.outputs[0]
    q = sg.tensors[out_t].quantization
    a = it.get_tensor(out_t).astype(np.float64)
    if sg.tensors[out_t].type == TensorType.INT8:
        a = (a - q.zero_point[0]) * q.scale[0]
    out_err = a - ft.get_tensor(out_t).astype(np.float64)
    out_scale = float(q.scale[0]) if q is not None and q.scale else float("nan")
    notes = (f"model output: max |int8 − float| = {np.abs(out_err).max():.4g}"
             + (f" ({np.abs(out_err).max() / out_scale:.2f} steps)" if q is not None and q.scale else ""),)
    return FloatVsInt8("each node's int8 output against the float twin, in output steps (scale)",
                       ("node", "op", "scale", "mean |err|", "max |err|", "clipped", "max |err| unclipped"),
                       tuple(rows), notes, errors,
                       out_err, out_err / out_scale if q is not None and q.scale else None)


# ----------------------------------------------------------------------------------------------
# rounding on a real layer: how often does the final shift hit a tie?


def accumulators(interpreter: Interpreter, node: int) -> np.ndarray:
    """The int32 values (sum + bias) an int8 CONV_2D node (groups 1) requantizes, [N, OH, OW, O].
    The interpreter must have run with ``keep_intermediates=True`` (or the node reads the input)."""
    from ..interpreter.kernels._conv_geometry import integer_sums, padded
    from ..interpreter.kernels.conv_2d import Conv2DInt8Data
    n, _, d, _ = interpreter.prepared()[node]
    if type(d) is not Conv2DInt8Data or d.groups != 1:
        raise ValueError(f"node {node} is not an int8 CONV_2D without groups")
    ctx = interpreter._sg(0).context

    def get(t):
        return np.asarray(ctx.constants[t] if ctx.constants[t] is not None else interpreter.get_tensor(t))

    x = get(n.inputs[0]).astype(np.int64) - d.input_zero_point
    acc = integer_sums(padded(x, d), get(n.inputs[1]), d)        # the teaching layer's exact sums
    return acc + (get(n.inputs[2]).astype(np.int64) if n.input(2) >= 0 else 0)


@dataclass(frozen=True, repr=False)
class RoundingCensus(_View):
    elements: int = 0
    ties: int = 0


def rounding_census(interpreter: Interpreter, node: int) -> RoundingCensus:
    """Requantize every accumulator of an int8 CONV_2D node both ways (ties away / ties up) and count
    where they differ — and check that the kernel's output matches one of them."""
    _, _, d, _ = interpreter.prepared()[node]
    acc = accumulators(interpreter, node)
    out = interpreter.get_tensor(interpreter.prepared()[node][0].outputs[0]).astype(np.int64)
    lo, hi, zp = d.output_activation_min, d.output_activation_max, d.output_zero_point

    def req(half_up):
        return np.clip(Q.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, half_up) + zp,
                       lo, hi)

    away, up = req(False), req(True)
    ties = int((away != up).sum())
    rows = (("ties away from zero (reference)", str(int((away == out).sum()))),
            ("ties up (ruy, x86)", str(int((up == out).sum()))))
    return RoundingCensus(f"node {node}: {acc.size} outputs, {ties} of them land on an exact tie",
                          ("rounding rule", f"outputs equal to the kernel's (of {acc.size})"), rows,
                          (f"the workbench kernel rounds ties '{d.rounding}'",), acc.size, ties)


# ----------------------------------------------------------------------------------------------
# section 7: two builds of TFLite


@dataclass(frozen=True, repr=False)
class VariantCensus(_View):
    changed: tuple = ()         # (node, op, elements that differ, of, max |difference| in steps, starts here?)
    outputs_equal: bool = True
    same_argmax: bool = True


def compare_variants(model, inputs, first: str = "litert-x86", second: str = "reference") -> VariantCensus:
    """Run ``model`` on the same ``inputs`` under two arithmetic variants and compare every node's output:
    how many elements differ, by how many steps at most, and whether the node *starts* a difference
    (its inputs are equal in both runs) or only carries one from upstream."""
    runs = []
    for variant in (first, second):
        it = Interpreter(model=model, keep_intermediates=True, variant=variant)
        it.allocate_tensors()
        for d, x in zip(it.get_input_details(), inputs if isinstance(inputs, (list, tuple)) else [inputs]):
            it.set_tensor(d["index"], x)
        it.invoke()
        runs.append(it)
    a, b = runs

    def differs(t):
        return not np.array_equal(a.get_tensor(t), b.get_tensor(t))

    rows, changed = [], []
    for node, kernel_name, _, _ in a.prepared():
        out = node.outputs[0]
        x, y = a.get_tensor(out), b.get_tensor(out)
        n = int((x != y).sum())
        if not n:
            continue
        steps = int(np.abs(x.astype(np.int64) - y.astype(np.int64)).max()) if x.dtype.kind in "iu" else \
            float(np.abs(x.astype(np.float64) - y.astype(np.float64)).max())
        starts = not any(differs(t) for t in node.inputs if t >= 0)
        changed.append((node.index, node.op_name, n, x.size, steps, starts))
        rows.append((str(node.index), node.op_name, f"{n} of {x.size}", str(steps),
                     "starts here" if starts else "inherited"))
    outs = [d["index"] for d in a.get_output_details()]
    equal = not any(differs(t) for t in outs)
    argmax = all(int(np.argmax(a.get_tensor(t))) == int(np.argmax(b.get_tensor(t))) for t in outs)
    notes = (f"model outputs: {'identical' if equal else 'different'}; "
             f"top class: {'the same' if argmax else 'DIFFERENT'} in both builds",)
    return VariantCensus(f"{first} against {second}: {len(rows)} of {len(a.prepared())} nodes differ",
                         ("node", "op", "elements that differ", "max |diff| (steps)", "where"), tuple(rows), notes,
                         tuple(changed), equal, argmax)

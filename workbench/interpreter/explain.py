"""Work out one int8 output element by hand, step by step, next to what the kernel produced.

    it = Interpreter(model_path="mobilenet_int8.tflite", keep_intermediates=True)
    it.allocate_tensors(); it.set_tensor(...); it.invoke()
    explain(it, 3, 1234)          # node 3, flat output index 1234

The :class:`Explanation` lists the steps a CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / ADD kernel
takes for that element (accumulate, add bias, requantize with the multiplier and shift and their
roundings, add the zero point, clamp), the value they give, the value the kernel wrote, and the
float result the int8 value stands for (the same op computed in float64 on dequantized inputs).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from . import quant

__all__ = ["explain", "Explanation", "Step"]


@dataclass(frozen=True)
class Step:
    what: str
    formula: str
    value: object

    def __str__(self) -> str:
        return f"{self.what:<28} {self.formula:<60} = {self.value}"


@dataclass(frozen=True)
class Explanation:
    node: int
    op: str
    output_index: tuple
    steps: tuple = field(repr=False)
    by_hand: int = 0
    kernel: int = 0
    float_result: float = 0.0
    dequantized: float = 0.0

    @property
    def agrees(self) -> bool:
        return self.by_hand == self.kernel

    def __repr__(self) -> str:
        lines = [f"node {self.node} {self.op}, output element {list(self.output_index)}:"]
        lines += [f"  {s}" for s in self.steps]
        lines.append(f"  by hand {self.by_hand}, kernel wrote {self.kernel} "
                     f"({'equal' if self.agrees else 'DIFFERENT'}); it stands for {self.dequantized:.6g}, "
                     f"the float computation gives {self.float_result:.6g}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(s.what)}</td><td><code>{html.escape(s.formula)}</code></td>"
                       f"<td>{html.escape(str(s.value))}</td></tr>" for s in self.steps)
        ok = "equal" if self.agrees else "<b>DIFFERENT</b>"
        return (f"<div><b>node {self.node} {html.escape(self.op)}</b>, output element {list(self.output_index)}"
                f"<table>{rows}</table><p>by hand <b>{self.by_hand}</b>, kernel wrote <b>{self.kernel}</b> ({ok}); "
                f"stands for {self.dequantized:.6g}; float computation {self.float_result:.6g}</p></div>")


def _requantize_steps(acc: int, m: int, shift: int, zp: int, lo: int, hi: int, half_up: bool, steps: list) -> int:
    left = max(shift, 0)
    right = max(-shift, 0)
    x = acc << left
    if left:
        steps.append(Step("left shift", f"{acc} · 2^{left}", x))
    high = quant.saturating_rounding_doubling_high_mul(x, m)
    steps.append(Step("high multiply (SRDHM)", f"round({x} · {m} / 2^31)", high))
    if right:
        if half_up:
            v = quant.rounding_right_shift_half_up(high, right)
            steps.append(Step("rounding shift (ties up)", f"({high} + 2^{right - 1}) >> {right}", v))
        else:
            v = quant.rounding_divide_by_pot(high, right)
            steps.append(Step("rounding shift (ties away)", f"round({high} / 2^{right})", v))
    else:
        v = high
    steps.append(Step("add output zero point", f"{v} + {zp}", v + zp))
    out = min(max(v + zp, lo), hi)
    steps.append(Step("clamp", f"clamp({v + zp}, {lo}, {hi})", out))
    return out


def _scale_zp(it, t):
    meta = it.model.subgraphs[0].tensors[t]
    q = meta.quantization
    return np.asarray(q.scale, np.float64), np.asarray(q.zero_point or [0], np.int64)


def explain(interpreter, node, output_index) -> Explanation:
    """Compute output element ``output_index`` (flat int or a tuple) of ``node`` by hand.

    The interpreter must have run (``invoke``) and keep the node's inputs readable
    (``keep_intermediates=True``, or the node reads model inputs/constants only).
    """
    from .kernels.conv_2d import Conv2DInt8Data
    from .kernels.depthwise_conv_2d import DepthwiseConv2DInt8Data
    from .kernels.fully_connected import FullyConnectedInt8Data
    from .kernels._binary import BinaryInt8Data

    prepared = {n.index: (n, d) for n, _, d, _ in interpreter.prepared()}
    index = node.index if hasattr(node, "index") else int(node)
    n, d = prepared[index]
    ctx = interpreter._sg(0).context
    get = lambda t: np.asarray(ctx.constants[t] if ctx.constants[t] is not None else interpreter.get_tensor(t))
    out = get(n.outputs[0])
    pos = np.unravel_index(output_index, out.shape) if np.isscalar(output_index) else tuple(output_index)
    pos = tuple(int(p) for p in pos)
    steps: list[Step] = []
    x = get(n.inputs[0]).astype(np.int64)
    x_s, x_zp = _scale_zp(interpreter, n.inputs[0])

    if type(d) in (Conv2DInt8Data, DepthwiseConv2DInt8Data, FullyConnectedInt8Data):
        w = get(n.inputs[1]).astype(np.int64)
        b_t = n.input(2)
        bias = get(b_t).astype(np.int64) if b_t >= 0 else None
        w_s, _ = _scale_zp(interpreter, n.inputs[1])
        if type(d) is FullyConnectedInt8Data:
            row, c = pos[:-1], pos[-1]
            xr = x.reshape(d.batch, d.depth)[int(np.ravel_multi_index(row, out.shape[:-1])) if row else 0]
            xv, wv = xr, w[c] - d.filter_zero_point
        else:
            b, oy, ox, c = pos
            xs, ws = [], []
            kh, kw = (w.shape[1], w.shape[2])
            for ky in range(kh):
                iy = oy * d.stride_h - d.pad_top + ky * d.dilation_h
                for kx in range(kw):
                    ix = ox * d.stride_w - d.pad_left + kx * d.dilation_w
                    if not (0 <= iy < x.shape[1] and 0 <= ix < x.shape[2]):
                        continue
                    if type(d) is Conv2DInt8Data:
                        ci = w.shape[3]
                        g0 = (c // (w.shape[0] // d.groups)) * ci
                        xs.append(x[b, iy, ix, g0:g0 + ci])
                        ws.append(w[c, ky, kx, :])
                    else:
                        xs.append(x[b, iy, ix, c // d.depth_multiplier:c // d.depth_multiplier + 1])
                        ws.append(w[0, ky, kx, c:c + 1])
            xv = np.concatenate(xs) if xs else np.zeros(0, np.int64)
            wv = np.concatenate(ws) if ws else np.zeros(0, np.int64)
        acc = int(((xv - d.input_zero_point) * wv).sum())
        steps.append(Step("accumulate", f"Σ w·(x − ({d.input_zero_point})) over {len(xv)} taps", acc))
        if bias is not None:
            steps.append(Step("add bias", f"{acc} + {int(bias[c])}", acc + int(bias[c])))
            acc += int(bias[c])
        m, s = int(d.output_multiplier[c]), int(d.output_shift[c])
        steps.append(Step("multiplier", f"{d.effective_scale[c]:.9g} = {m}·2^({s}−31)", (m, s)))
        half_up = d.half_up
        tail = getattr(d, "scalar_tail", None)
        if tail is not None and tail[pos[1], pos[2] * out.shape[3] + pos[3]]:
            half_up = False          # TFLite requantizes this value in its scalar leftover loop
        by_hand = _requantize_steps(acc, m, s, d.output_zero_point, d.output_activation_min,
                                    d.output_activation_max, half_up, steps)
        fw = w_s[c] if len(w_s) > 1 else w_s[0]
        real = float(((xv - d.input_zero_point) * x_s[0]) @ (wv * fw))
        if bias is not None:
            real += float(bias[c]) * float(x_s[0]) * float(fw)
    elif type(d) is BinaryInt8Data and n.op_name in ("ADD", "SUB"):
        y = get(n.inputs[1]).astype(np.int64)
        xa = int(np.broadcast_to(x, out.shape)[pos])
        ya = int(np.broadcast_to(y, out.shape)[pos])
        steps.append(Step("offsets", f"({xa} + {d.input1_offset}), ({ya} + {d.input2_offset})",
                          (xa + d.input1_offset, ya + d.input2_offset)))
        sx = quant.multiply_by_quantized_multiplier((xa + d.input1_offset) << d.left_shift, d.input1_multiplier,
                                                    d.input1_shift)
        sy = quant.multiply_by_quantized_multiplier((ya + d.input2_offset) << d.left_shift, d.input2_multiplier,
                                                    d.input2_shift)
        steps.append(Step("rescale input 1", f"MBQM({xa + d.input1_offset}·2^{d.left_shift}, {d.input1_multiplier}, {d.input1_shift})", sx))
        steps.append(Step("rescale input 2", f"MBQM({ya + d.input2_offset}·2^{d.left_shift}, {d.input2_multiplier}, {d.input2_shift})", sy))
        sign = 1 if n.op_name == "ADD" else -1
        raw = sx + sign * sy
        steps.append(Step("sum" if sign > 0 else "difference", f"{sx} {'+' if sign > 0 else '−'} {sy}", raw))
        v = quant.multiply_by_quantized_multiplier(raw, d.output_multiplier, d.output_shift)
        steps.append(Step("requantize", f"MBQM({raw}, {d.output_multiplier}, {d.output_shift})", v))
        steps.append(Step("add output zero point", f"{v} + {d.output_offset}", v + d.output_offset))
        by_hand = min(max(v + d.output_offset, d.output_activation_min), d.output_activation_max)
        steps.append(Step("clamp", f"clamp(…, {d.output_activation_min}, {d.output_activation_max})", by_hand))
        y_s, y_zp = _scale_zp(interpreter, n.inputs[1])
        real = float((xa - x_zp[0]) * x_s[0] + sign * (ya - y_zp[0]) * y_s[0])
    else:
        raise NotImplementedError(f"explain() knows int8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD and SUB; "
                                  f"node {index} is {n.op_name} with {type(d).__name__}")
    o_s, o_zp = _scale_zp(interpreter, n.outputs[0])
    kernel_value = int(out[pos])
    return Explanation(index, n.op_name, pos, tuple(steps), int(by_hand), kernel_value, real,
                       float(o_s[0] * (kernel_value - o_zp[0])))

"""One-op CONV_2D cases in every type TFLite convolves, for tests/interpreter/kernels/test_conv_2d.py.

``conv_case(kind, x_shape, w_shape, ...)`` returns ``build(name) -> (ModelBuilder, {input name: array})``
with seeded data:

* ``float32``: inputs k/8, filters j/16, biases m/4 with small integers k, j, m — every product and
  partial sum is exact in float32, so any order of summation gives the same bits (BLAS, litert's
  GEMM, the reference loop); ``exact=False`` draws ordinary floats instead;
* ``int8`` / ``uint8`` / ``int16``: the type's range, or (``ties=True``) power-of-two scales that make
  the final rounding shift land on many exact halves;
* ``hybrid``: float inputs with an int8 filter, its scales ``"random"`` (per channel), ``"one"`` or
  ``"equal"`` (both per tensor for TFLite); ``ties=True`` puts exact halves into the run-time
  quantization of the first image.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import Conv2DOptions, ModelBuilder, Padding

S, V = Padding.SAME, Padding.VALID
HYBRID_TIES = np.float32([2.5, -2.5, 0.49999997, -0.49999997, 1.5, -0.5, 3.5, 0.5])


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == S else (size - eff) // s + 1


def q(scale, zp, dim=0):
    return {"scale": np.atleast_1d(scale).astype(float).tolist(), "zero_point": np.atleast_1d(zp).astype(int).tolist(),
            "quantized_dimension": dim}


def _float(b, rng, x_shape, w_shape, y_shape, *, exact=True, bias=True, filter_input=False):
    o = w_shape[0]
    if exact:
        x = (rng.integers(-32, 33, x_shape) / 8).astype(np.float32)
        w = (rng.integers(-16, 17, w_shape) / 16).astype(np.float32)
        bv = (rng.integers(-64, 65, o) / 4).astype(np.float32)
    else:
        x = rng.uniform(-1, 1, x_shape).astype(np.float32)
        w = (rng.standard_normal(w_shape) * 0.3).astype(np.float32)
        bv = rng.standard_normal(o).astype(np.float32)
    feeds = {"x": x}
    xt = b.input("x", x_shape)
    if filter_input:
        wt, feeds["w"] = b.input("w", w_shape), w
    else:
        wt = b.constant("w", w)
    bt = b.constant("bias", bv) if bias else -1
    return xt, wt, bt, b.tensor("y", y_shape), feeds


def _int8(b, rng, x_shape, w_shape, y_shape, *, per_channel=True, in_zp=-3, out_zp=5, ties=False,
          filter_input=False, bias=True):
    o, k = w_shape[0], int(np.prod(w_shape[1:]))
    if ties:                                      # effective scale 2^-7 or 2^-8: many exact ties
        in_s, w_s, out_s = 0.5, rng.choice([1 / 64, 1 / 128], o), 1.0
    else:
        in_s = 0.02
        w_s = rng.uniform(0.002, 0.01, o) if per_channel else np.array([0.006])
        out_s = float(in_s * np.max(w_s) * 128 * math.sqrt(k) * 0.25)
    w = rng.integers(-127, 128, w_shape).astype(np.int8)
    feeds = {"x": rng.integers(-128, 128, x_shape).astype(np.int8)}
    xt = b.input("x", x_shape, np.int8, quantization=q(in_s, in_zp))
    wq = q(w_s, [0] * len(w_s), 0)
    if filter_input:
        wt, feeds["w"] = b.input("w", w_shape, np.int8, quantization=wq), w
    else:
        wt = b.constant("w", w, quantization=wq)
    bs = np.float32(in_s) * np.resize(w_s, o).astype(np.float32)
    bt = b.constant("bias", rng.integers(-3000, 3000, o).astype(np.int32),
                    quantization=q(bs, [0] * o, 0)) if bias else -1
    return xt, wt, bt, b.tensor("y", y_shape, np.int8, quantization=q(out_s, out_zp)), feeds


def _uint8(b, rng, x_shape, w_shape, y_shape, *, ties=True, filter_input=False, bias=True):
    # ties: M = in·filter/out = 1/16 and data near the zero points; otherwise an ordinary multiplier
    in_s, in_zp, f_s, out_s, out_zp = (0.5, 131, 0.125, 1.0, 120) if ties else (0.0213, 117, 0.0071, 0.173, 97)
    w_zp, o = 137, w_shape[0]
    if ties:
        x, w = rng.integers(in_zp - 8, in_zp + 9, x_shape), rng.integers(w_zp - 6, w_zp + 7, w_shape)
    else:
        x, w = rng.integers(0, 256, x_shape), rng.integers(0, 256, w_shape)
    feeds = {"x": x.astype(np.uint8)}
    xt = b.input("x", x_shape, np.uint8, quantization=q(in_s, in_zp))
    if filter_input:
        wt, feeds["w"] = b.input("w", w_shape, np.uint8, quantization=q(f_s, w_zp)), w.astype(np.uint8)
    else:
        wt = b.constant("w", w.astype(np.uint8), quantization=q(f_s, w_zp))
    span = 100 if ties else 3000
    bt = b.constant("bias", rng.integers(-span, span, o).astype(np.int32),
                    quantization=q(float(np.float32(in_s) * np.float32(f_s)), 0)) if bias else -1
    return xt, wt, bt, b.tensor("y", y_shape, np.uint8, quantization=q(out_s, out_zp)), feeds


def _int16(b, rng, x_shape, w_shape, y_shape, *, bias_dtype=np.int64, option=None, ties=False, filter_input=False,
           per_channel=True):
    o, k = w_shape[0], int(np.prod(w_shape[1:]))
    if ties:       # 1x1 filters of ones, every int16 step of 32 and [-300, 300): effective scale 0.375
        in_s, w_s, out_s = 2.0 ** -10, np.array([2.0 ** -6]), 2.0 ** -16 / 0.375
        v = np.concatenate([np.arange(-32768, 32768, 32), np.arange(-300, 300)])
        x = np.resize(np.repeat(v, x_shape[3]), x_shape)
        w = np.ones(w_shape, np.int8)
        bv = np.zeros(o, np.int64)
    else:
        in_s = 0.0005
        w_s = rng.uniform(0.002, 0.01, o) if per_channel else np.array([0.006])
        out_s = float(in_s * np.max(w_s) * 32768 / 3 * 127 * math.sqrt(k) / 11000)
        x = rng.integers(-32768, 32768, x_shape)
        w = rng.integers(-127, 128, w_shape)
        bv = rng.integers(-(1 << 20), 1 << 20, o)
    feeds = {"x": x.astype(np.int16)}
    xt = b.input("x", x_shape, np.int16, quantization=q(in_s, 0))
    wq = q(w_s, [0] * len(w_s), 0)
    if filter_input:
        wt, feeds["w"] = b.input("w", w_shape, np.int8, quantization=wq), w.astype(np.int8)
    else:
        wt = b.constant("w", w.astype(np.int8), quantization=wq)
    bs = np.float32(in_s) * np.resize(w_s, o).astype(np.float32)
    bt = b.constant("bias", bv.astype(bias_dtype), quantization=q(bs, [0] * o, 0))
    return xt, wt, bt, b.tensor("y", y_shape, np.int16, quantization=q(out_s, 0)), feeds


def _hybrid(b, rng, x_shape, w_shape, y_shape, *, scales="random", ties=False, weights=None, positive=False,
            bias=True):
    o = w_shape[0]
    w_s = {"random": lambda: rng.uniform(0.001, 0.01, o), "one": lambda: np.array([0.006]),
           "equal": lambda: np.full(o, 0.006)}[scales]()
    w = rng.integers(-127, 128, w_shape) if weights is None else np.broadcast_to(weights, w_shape)
    x = (rng.uniform(0.0 if positive else -1.0, 1.0, x_shape) * 3).astype(np.float32)
    if ties:            # the first image spans [-127, 127] (or [-128, 127]): scale 1, exact halves
        row = x.reshape(x_shape[0], -1)[0]
        row[:] = np.clip(row * 40, -127, 127)
        row[0], row[1] = (-127.0 if scales != "random" else -128.0), 127.0
        row[2:10] = HYBRID_TIES
    xt = b.input("x", x_shape)
    wt = b.constant("w", np.asarray(w, np.int8), quantization=q(w_s, [0] * len(w_s), 0))
    bt = b.constant("bias", rng.uniform(-1, 1, o).astype(np.float32)) if bias else -1
    return xt, wt, bt, b.tensor("y", y_shape), {"x": x}


KINDS = {"float32": _float, "int8": _int8, "uint8": _uint8, "int16": _int16, "hybrid": _hybrid}


def conv_case(kind, x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, **kw):
    """``build(name)`` for one CONV_2D of ``kind`` (see the module docstring); ``option`` (int16) sets
    Conv2DOptions.quantized_bias_type."""
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        xt, wt, bt, yt, feeds = KINDS[kind](b, rng, x_shape, w_shape, (x_shape[0], oh, ow, w_shape[0]), **kw)
        opts = dict(padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
                    dilation_h_factor=dilation[0], dilation_w_factor=dilation[1])
        if kw.get("option") is not None:
            opts["quantized_bias_type"] = kw["option"]
        b.op(B.CONV_2D, [xt, wt, bt], [yt], Conv2DOptions(**opts))
        b.output(yt)
        return b, feeds
    return build


def conv_int8_teaching(x, f, bias, stride, dilation, pad, out_hw, zp, mult, shift, out_zp, lo, hi, half_up):
    """The teaching layer's int8 CONV_2D (``kernels/conv_2d.conv_int8``) on raw arrays: an input ``x``
    [N, H, W, C], filter ``f`` [O, KH, KW, C], per-channel ``mult`` / ``shift``, ties up (``half_up``) or away."""
    from workbench.interpreter.kernels import conv_2d

    d = conv_2d.Conv2DInt8Data(
        "", stride[0], stride[1], dilation[0], dilation[1], f.shape[1], f.shape[2], pad[0], pad[1], 1,
        (x.shape[0], *out_hw, f.shape[0]), "", 1.0, zp, None, 1.0, out_zp, None, mult, shift, lo, hi, True,
        "up" if half_up else "away")
    return conv_2d.conv_int8(x, f, bias, d)

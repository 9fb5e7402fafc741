"""Model builders of tests/interpreter/test_interpreter_ops.py, shared with the fast-path tests."""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import Conv2DOptions, DepthwiseConv2DOptions, ModelBuilder, Padding


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == Padding.SAME else (size - eff) // s + 1


def conv(x_shape, w_shape, stride=(1, 1), padding=Padding.SAME, dilation=(1, 1), act=Act.NONE, bias=True):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape)
        w = b.constant("w", rng.standard_normal(w_shape).astype(np.float32) * 0.3)
        bias_t = b.constant("bias", rng.standard_normal(w_shape[0]).astype(np.float32)) if bias else -1
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, w_shape[0]))
        b.op(B.CONV_2D, [x, w, bias_t], [y], Conv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": rng.uniform(-1, 1, x_shape).astype(np.float32)}
    return build


def depthwise_f32(x_shape, k, mult=1, stride=(1, 1), padding=Padding.SAME, dilation=(1, 1), act=Act.NONE, bias=True):
    """float32 weights, bias and input from a normal distribution (the sums' order shows in the bits)."""
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        co = x_shape[3] * mult
        b = ModelBuilder()
        x = b.input("x", x_shape)
        ins = [x, b.constant("w", rng.standard_normal((1, k[0], k[1], co)).astype(np.float32))]
        if bias:
            ins.append(b.constant("bias", rng.standard_normal(co).astype(np.float32)))
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, co))
        b.op(B.DEPTHWISE_CONV_2D, ins, [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult,
            fused_activation_function=act, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": rng.standard_normal(x_shape).astype(np.float32)}
    return build

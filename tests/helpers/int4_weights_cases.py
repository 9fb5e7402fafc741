"""The int4-weight case table of tests/interpreter/test_int4_weights.py, shared with the kernel tests."""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import (
    Conv2DOptions,
    FullyConnectedOptions,
    ModelBuilder,
    Padding,
    QuantizationDetails,
    TensorType,
)
from workbench.schema.tables import CLASSES


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def pack(values, bits: int = 4) -> bytes:
    """Our own packer for test models: value i in byte i*bits//8, first value in the lowest bits."""
    v = np.asarray(values, np.int64).reshape(-1)
    per = 8 // bits
    out = np.zeros(-(-v.size // per), np.uint8)
    for i, x in enumerate(v):
        out[i // per] |= (int(x) & ((1 << bits) - 1)) << (bits * (i % per))
    return out.tobytes()


def q(scale, zp, dim=0):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": dim}


def int4_constant(b: ModelBuilder, name, values, quantization=None, bits: int = 4) -> int:
    values = np.asarray(values)
    ttype = TensorType.INT4 if bits == 4 else TensorType.INT2
    return b.tensor(name, values.shape, ttype, buffer=b.add_buffer(pack(values, bits)), quantization=quantization)


def weights4(rng, shape, with_minus8=True):
    """int4 weights over the whole range -8..7 (AEQ's symmetric ones stay in -7..7)."""
    lo = -8 if with_minus8 else -7
    return rng.integers(lo, 8, shape).astype(np.int8)


def _dequantize_model(shape, scales, zps, axis, bits=4, version=None):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        lo, hi = (-8, 8) if bits == 4 else (-2, 2)
        values = rng.integers(lo, hi, shape).astype(np.int8)
        w = int4_constant(b, "w", values, q(scales, zps, axis), bits)
        y = b.tensor("y", shape, np.float32)
        kw = {} if version is None else {"version": version}
        b.op(B.DEQUANTIZE, [w], [y], **kw)
        b.output(y)
        return b, {}
    return build


def _fc_model(batch, k, units, act=Act.NONE, per_channel=True, bias=True, minus8=True, asym=False, spread=1.0):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", (batch, k), np.float32)
        ws = rng.uniform(0.01, 0.05, units) if per_channel else np.array([0.03])
        w = int4_constant(b, "w", weights4(rng, (units, k), minus8), q(ws.tolist(), [0] * len(ws), 0))
        ins = [x, w]
        if bias:
            ins.append(b.constant("bias", rng.uniform(-0.5, 0.5, units).astype(np.float32)))
        y = b.tensor("y", (batch, units), np.float32)
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act,
                                                                asymmetric_quantize_inputs=asym))
        b.output(y)
        xv = (rng.standard_normal((batch, k)) * spread).astype(np.float32)
        if batch > 2:
            xv[1] = 0.0                                 # an all-zero row
        return b, {"x": xv}
    return build


def _fc_blockwise_model(batch, k, units, block=32, act=Act.RELU):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", (batch, k), np.float32)
        scales = b.constant("w_scales", rng.uniform(0.005, 0.05, (units, k // block)).astype(np.float16))
        details = CLASSES["BlockwiseQuantization"](scales=scales, zero_points=-1, block_size=block)
        quant = CLASSES["QuantizationParameters"](details_type=QuantizationDetails.BlockwiseQuantization,
                                                  details=details)
        w = int4_constant(b, "w", weights4(rng, (units, k)), quant)
        bias = b.constant("bias", rng.uniform(-0.5, 0.5, units).astype(np.float32))
        y = b.tensor("y", (batch, units), np.float32)
        b.op(B.FULLY_CONNECTED, [x, w, bias], [y], FullyConnectedOptions(fused_activation_function=act))
        b.output(y)
        return b, {"x": rng.standard_normal((batch, k)).astype(np.float32)}
    return build


def _conv_model(x_shape, w_shape, stride=1, padding=Padding.SAME, act=Act.NONE, per_channel=True, asym=False):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        o = w_shape[0]
        x = b.input("x", x_shape, np.float32)
        ws = rng.uniform(0.01, 0.05, o) if per_channel else np.array([0.02])
        w = int4_constant(b, "w", weights4(rng, w_shape), q(ws.tolist(), [0] * len(ws), 0))
        bias = b.constant("bias", rng.uniform(-0.3, 0.3, o).astype(np.float32))
        oh = -(-x_shape[1] // stride) if padding == Padding.SAME else (x_shape[1] - w_shape[1]) // stride + 1
        ow = -(-x_shape[2] // stride) if padding == Padding.SAME else (x_shape[2] - w_shape[2]) // stride + 1
        y = b.tensor("y", (x_shape[0], oh, ow, o), np.float32)
        b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(padding=padding, stride_h=stride, stride_w=stride,
                                                          fused_activation_function=act))
        b.output(y)
        return b, {"x": rng.standard_normal(x_shape).astype(np.float32)}
    return build


CASES = {
    # DEQUANTIZE: per channel on axis 0 and 1 (odd counts), per tensor (8-wide part + tail), int2
    "dequant_int4_per_channel_axis0": _dequantize_model((5, 7), [0.5, 0.25, 0.1, 0.03, 1.7], [0] * 5, 0),
    "dequant_int4_per_channel_axis1": _dequantize_model((3, 4, 3), [0.013, 0.7, 0.2], [0, 0, 0], 2),
    "dequant_int4_per_tensor": _dequantize_model((19,), [0.0371], [0], 0),
    "dequant_int4_v1_as_aeq": _dequantize_model((4, 6), [0.1, 0.2, 0.3, 0.4], [0] * 4, 0, version=1),
    "dequant_int2_per_channel": _dequantize_model((3, 5), [0.5, 0.125, 3.0], [0, 0, 0], 0, bits=2),
    # FULLY_CONNECTED, litert's 4-bit kernel (K even ≥ 32, ≥ 4 units)
    "fc4_k64_relu_batch3": _fc_model(3, 64, 8, Act.RELU),
    "fc4_k40_tail_per_tensor": _fc_model(2, 40, 5, per_channel=False),
    "fc4_k96_relu6_no_bias": _fc_model(1, 96, 6, Act.RELU6, bias=False, spread=4.0),
    "fc4_k32_asym_flag_ignored": _fc_model(5, 32, 4, Act.RELU_N1_TO_1, asym=True),
    # FULLY_CONNECTED, the int8 fallback (EvalHybridDense on unpacked weights)
    "fc_fallback_3_units": _fc_model(2, 48, 3, Act.RELU),
    "fc_fallback_k20": _fc_model(3, 20, 7, asym=True),
    "fc_fallback_odd_k": _fc_model(2, 33, 6, per_channel=False),
    # FULLY_CONNECTED, blockwise (EvalBlockwise4Bit: the RELU is ignored by litert)
    "fc_blockwise_k64_relu": _fc_blockwise_model(2, 64, 6),
    "fc_blockwise_k128_none": _fc_blockwise_model(3, 128, 4, act=Act.NONE),
    # CONV_2D / DEPTHWISE_CONV_2D hybrid
    "conv_int4_3x3_same": _conv_model((1, 6, 6, 5), (4, 3, 3, 5)),
    "conv_int4_stride2_relu_valid": _conv_model((2, 7, 7, 3), (6, 3, 3, 3), 2, Padding.VALID, Act.RELU),
    "conv_int4_1x1_per_tensor": _conv_model((1, 4, 4, 8), (5, 1, 1, 8), per_channel=False),
}

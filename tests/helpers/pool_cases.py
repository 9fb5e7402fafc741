"""One-op pool cases (MAX_POOL_2D, AVERAGE_POOL_2D, L2_POOL_2D) in every type TFLite pools, for
tests/interpreter/kernels/test_*pool_2d.py."""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import ActivationFunctionType as Act
from workbench.schema import ModelBuilder, Padding, Pool2DOptions

S, V = Padding.SAME, Padding.VALID
QUANT = {np.uint8: (0.05, 131), np.int8: (0.04, -5), np.int16: (0.002, 0)}


def window_out(padding, size, k, s):
    return -(-size // s) if padding == S else (size - k) // s + 1


def pool_case(op, dtype, x_shape, f, stride, padding, act=Act.NONE):
    """``build(name)`` for one pool: a seeded input of ``dtype`` that fills the type's range (floats in
    [-4, 4) with a few exact ties), quantized pools sharing input and output parameters."""
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        b = ModelBuilder()
        qp = None
        if dtype is np.float32:
            x = rng.uniform(-4, 4, x_shape).astype(np.float32)
            x.flat[::7] = np.round(x.flat[::7])
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, x_shape, endpoint=True).astype(dtype)
            s, zp = QUANT[dtype]
            qp = {"scale": s, "zero_point": zp}
        xt = b.input("x", x_shape, dtype, quantization=qp)
        oh = window_out(padding, x_shape[1], f[0], stride[0])
        ow = window_out(padding, x_shape[2], f[1], stride[1])
        y = b.tensor("y", (x_shape[0], oh, ow, x_shape[3]), dtype, quantization=qp)
        b.op(op, [xt], [y], Pool2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                          filter_height=f[0], filter_width=f[1], fused_activation_function=act))
        b.output(y)
        return b, {"x": x}
    return build


def pool_cases(op, dtypes=(np.float32, np.uint8, np.int8, np.int16)) -> dict:
    shapes = {
        "2x2_valid": ((1, 8, 8, 3), (2, 2), (2, 2), V, Act.NONE),
        "3x3_same_relu": ((2, 7, 9, 4), (3, 3), (2, 2), S, Act.RELU),
        "3x3_same_edges": ((1, 7, 6, 16), (3, 3), (2, 2), S, Act.NONE),
        "4x4_valid_relu6": ((1, 8, 8, 2), (4, 4), (4, 4), V, Act.RELU6),
        "global_7x7": ((1, 7, 7, 24), (7, 7), (1, 1), V, Act.NONE),
        "window_over_image": ((1, 3, 3, 2), (5, 5), (1, 1), S, Act.RELU_N1_TO_1),
    }
    return {f"{np.dtype(dt).name}_{name}": pool_case(op, dt, *args)
            for dt in dtypes for name, args in shapes.items()}

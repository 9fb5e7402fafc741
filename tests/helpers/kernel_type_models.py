"""One-operator models for a chosen type combination (a helper of ``test_kernel_types.py``).

``build(op, types)`` makes a tiny model whose typed slots (``"in0"``, ``"in1"``, ``"out0"`` ...,
the slots :data:`workbench.versioning.kernel_types.KERNEL_TYPES` names for that op) have the given
TensorTypes; every other input (axes, shapes, paddings, a convolution's bias) is filled in the way
the converter would make it for those types.  Integer activations carry per-tensor quantization
(int16 and int8 with zero point 0, uint8 with 128; the fixed output scales of LOGISTIC, TANH,
SOFTMAX, LOG_SOFTMAX and L2_NORMALIZATION), weights per-channel int8 / per-tensor uint8, and the
operator code carries the version today's rules compute, as the converter leaves them.
``feeds(data)`` gives one input array per model input (small non-zero values), for running it.

    data = build(B.CONV_2D, {"in0": T.UINT8, "in1": T.INT8, "out0": T.INT16})
"""

from __future__ import annotations

import numpy as np

from workbench import dump
from workbench.schema import CLASSES, ModelBuilder, load
from workbench.schema import BuiltinOperator as B
from workbench.schema import TensorType as T
from workbench.schema.enums import Padding
from workbench.schema.types import NUMPY_DTYPE
from workbench.versioning import update_versions

C = CLASSES
# types numpy holds: the builder can make constants and inputs of these
HOLDABLE = frozenset(NUMPY_DTYPE)
QUANTIZED = {T.INT8: 0, T.UINT8: 128, T.INT16: 0}
SHAPE = (1, 4, 4, 2)


# output quantization TFLite's kernels insist on: op → {type: (scale, zero point)}
FIXED_OUTPUT = {
    B.LOGISTIC: {T.INT8: (1 / 256, -128), T.UINT8: (1 / 256, 0), T.INT16: (1 / 32768, 0)},
    B.SOFTMAX: {T.INT8: (1 / 256, -128), T.UINT8: (1 / 256, 0), T.INT16: (1 / 32768, 0)},
    B.TANH: {T.INT8: (1 / 128, 0), T.UINT8: (1 / 128, 128), T.INT16: (1 / 32768, 0)},
    B.LOG_SOFTMAX: {T.INT8: (16 / 256, 127), T.UINT8: (16 / 256, 255)},
    B.L2_NORMALIZATION: {T.INT8: (1 / 128, 0), T.UINT8: (1 / 128, 128)},
}


def _q(b: ModelBuilder, t: T, scale: float = 0.05, channels: int | None = None, axis: int = 0,
       fixed: tuple | None = None):
    if t not in QUANTIZED:
        return None
    if fixed is not None:
        return b.quant(*fixed)
    if channels and t != T.UINT8:  # uint8 weights are per-tensor in TFLite; int8 / int16 per channel
        return b.quant([scale] * channels, [QUANTIZED[t]] * channels, quantized_dimension=axis)
    return b.quant(scale, QUANTIZED[t])


def _np(t: T):
    return NUMPY_DTYPE[t]


def _values(t: T, shape, lo: int = -3, hi: int = 3) -> np.ndarray:
    n = int(np.prod(shape)) if len(shape) else 1
    v = (np.arange(n) % (hi - lo + 1) + lo).reshape(shape)
    if t == T.BOOL:
        return (v > 0).reshape(shape)
    if t == T.UINT8:
        v = v + 128
    return v.astype(_np(t))


class _Model:
    """The builder plus the typed slots, with helpers that make tensors for them."""

    def __init__(self, op: B, types: dict):
        self.op, self.types = op, dict(types)
        self.b = ModelBuilder(f"one {op.name}")

    def t(self, slot: str, default: T = T.FLOAT32) -> T:
        return self.types.get(slot, default)

    def act(self, name: str, slot: str, shape, default: T = T.FLOAT32, **qkw) -> int:
        """A non-constant tensor (model input) of the slot's type."""
        t = self.t(slot, default)
        return self.b.input(name, shape, t, quantization=_q(self.b, t, **qkw))

    def const(self, name: str, slot: str | None, shape, default: T = T.INT32, values=None, **qkw) -> int:
        t = self.t(slot, default) if slot else default
        arr = _values(t, shape) if values is None else np.asarray(values).astype(_np(t))
        return self.b.constant(name, arr.reshape(shape), quantization=_q(self.b, t, **qkw))

    def out(self, name: str, slot: str, shape, default: T = T.FLOAT32, **qkw) -> int:
        t = self.t(slot, default)
        qkw.setdefault("fixed", FIXED_OUTPUT.get(self.op, {}).get(t))
        y = self.b.tensor(name, shape, t, quantization=_q(self.b, t, **qkw))
        self.b.output(y)
        return y

    def finish(self, inputs, outputs, options=None) -> bytes:
        self.b.op(self.op, inputs, outputs, options)
        # stamped like the converter: the operator code carries the version today's rules compute
        return dump(update_versions(load(dump(self.b.build()))))


def _unary(m: _Model, options=None, shape=SHAPE, out_shape=None):
    x = m.act("x", "in0", shape)
    y = m.out("y", "out0", out_shape or shape, default=m.t("in0"))
    return m.finish([x], [y], options)


def _binary(m: _Model, options=None):
    x = m.act("x", "in0", SHAPE)
    z = m.act("z", "in1", SHAPE, default=m.t("in0"))
    y = m.out("y", "out0", SHAPE, default=m.t("in0"))
    return m.finish([x, z], [y], options)


def _compare(m: _Model):
    x = m.act("x", "in0", SHAPE)
    z = m.act("z", "in1", SHAPE, default=m.t("in0"))
    y = m.out("y", "out0", SHAPE, default=T.BOOL)
    return m.finish([x, z], [y])


def _with_int_aux(m: _Model, aux_values, out_shape, options=None, aux_shape=None, in_shape=SHAPE):
    x = m.act("x", "in0", in_shape)
    aux = m.const("aux", "in1", aux_shape or (len(aux_values),), values=aux_values)
    y = m.out("y", "out0", out_shape, default=m.t("in0"))
    return m.finish([x, aux], [y], options)


def _reduce(m: _Model):
    return _with_int_aux(m, [1], (1, 4, 2), C["ReducerOptions"](keep_dims=False))


def _pool(m: _Model):
    opts = C["Pool2DOptions"](padding=Padding.VALID, stride_w=2, stride_h=2, filter_width=2, filter_height=2)
    return _unary(m, opts, out_shape=(1, 2, 2, 2))


def _bias_type(x: T) -> T:
    if x in (T.FLOAT32, T.FLOAT16):
        return x
    return T.INT64 if x == T.INT16 else T.INT32


def _bias(m: _Model, n: int, x: T, w: T) -> int:
    bt = _bias_type(x)
    q = m.b.quant(0.0025, 0) if bt in (T.INT32, T.INT64) else None
    return m.b.constant("bias", _values(bt, (n,)), quantization=q)


def _conv(m: _Model):
    x_t, w_t = m.t("in0"), m.t("in1")
    x = m.act("x", "in0", (1, 6, 6, 2))
    w = m.const("filter", "in1", (4, 3, 3, 2), channels=4 if w_t in QUANTIZED else None, axis=0)
    y = m.out("y", "out0", (1, 6, 6, 4), default=x_t)
    opts = C["Conv2DOptions"](padding=Padding.SAME, stride_w=1, stride_h=1, dilation_w_factor=1, dilation_h_factor=1)
    return m.finish([x, w, _bias(m, 4, x_t, w_t)], [y], opts)


def _depthwise(m: _Model):
    x_t, w_t = m.t("in0"), m.t("in1")
    x = m.act("x", "in0", (1, 6, 6, 2))
    w = m.const("filter", "in1", (1, 3, 3, 2), channels=2 if w_t in QUANTIZED else None, axis=3)
    y = m.out("y", "out0", (1, 6, 6, 2), default=x_t)
    opts = C["DepthwiseConv2DOptions"](padding=Padding.SAME, stride_w=1, stride_h=1, depth_multiplier=1,
                                       dilation_w_factor=1, dilation_h_factor=1)
    return m.finish([x, w, _bias(m, 2, x_t, w_t)], [y], opts)


def _fully_connected(m: _Model):
    x_t, w_t = m.t("in0"), m.t("in1")
    x = m.act("x", "in0", (1, 8))
    w = m.const("weights", "in1", (4, 8), channels=4 if w_t in QUANTIZED else None, axis=0)
    y = m.out("y", "out0", (1, 4), default=x_t)
    return m.finish([x, w, _bias(m, 4, x_t, w_t)], [y], C["FullyConnectedOptions"]())


def _transpose_conv(m: _Model):
    x_t, w_t = m.t("in2"), m.t("in1")
    shape = m.const("output_shape", None, (4,), values=[1, 8, 8, 4])
    w = m.const("filter", "in1", (4, 3, 3, 2), channels=4 if w_t in QUANTIZED else None, axis=0)
    x = m.act("x", "in2", (1, 4, 4, 2))
    y = m.out("y", "out0", (1, 8, 8, 4), default=x_t)
    opts = C["TransposeConvOptions"](padding=Padding.SAME, stride_w=2, stride_h=2)
    return m.finish([shape, w, x, _bias(m, 4, x_t, w_t)], [y], opts)


def _batch_matmul(m: _Model):
    x = m.act("x", "in0", (1, 2, 3))
    if m.t("in0") == T.FLOAT32 and m.t("in1") == T.INT8:  # hybrid: TFLite wants the int8 rhs constant
        z = m.const("z", "in1", (1, 3, 4))
    else:
        z = m.act("z", "in1", (1, 3, 4), default=m.t("in0"))
    y = m.out("y", "out0", (1, 2, 4), default=m.t("in0"))
    return m.finish([x, z], [y], C["BatchMatMulOptions"]())


def _arg(m: _Model, opts_name: str):
    x = m.act("x", "in0", SHAPE)
    axis = m.const("axis", None, (1,), values=[3])
    y = m.out("y", "out0", (1, 4, 4), default=T.INT64)
    return m.finish([x, axis], [y], C[opts_name](output_type=m.t("out0", T.INT64)))


def _gather(m: _Model):
    x = m.act("x", "in0", (4, 3))
    idx = m.const("indices", "in1", (2,), values=[0, 2])
    y = m.out("y", "out0", (2, 3), default=m.t("in0"))
    return m.finish([x, idx], [y], C["GatherOptions"](axis=0))


def _gather_nd(m: _Model):
    x = m.act("x", "in0", (4, 3))
    idx = m.const("indices", "in1", (2, 1), values=[0, 2])
    y = m.out("y", "out0", (2, 3), default=m.t("in0"))
    return m.finish([x, idx], [y])


def _split(m: _Model):
    axis = m.const("axis", None, (), values=3)
    x = m.act("x", "in1", SHAPE)
    t = m.t("in1")
    ys = [m.out(f"y{k}", "out0", (1, 4, 4, 1), default=t) for k in range(2)]
    return m.finish([axis, x], ys, C["SplitOptions"](num_splits=2))


def _split_v(m: _Model):
    x = m.act("x", "in0", SHAPE)
    sizes = m.const("sizes", None, (2,), values=[1, 1])
    axis = m.const("axis", None, (), values=3)
    t = m.t("in0")
    ys = [m.out(f"y{k}", "out0", (1, 4, 4, 1), default=t) for k in range(2)]
    return m.finish([x, sizes, axis], ys, C["SplitVOptions"](num_splits=2))


def _pack(m: _Model):
    x = m.act("x", "in0", (2, 3))
    z = m.act("z", "in1", (2, 3), default=m.t("in0"))
    y = m.out("y", "out0", (2, 2, 3), default=m.t("in0"))
    return m.finish([x, z], [y], C["PackOptions"](values_count=2, axis=0))


def _unpack(m: _Model):
    x = m.act("x", "in0", (2, 3))
    ys = [m.out(f"y{k}", "out0", (3,), default=m.t("in0")) for k in range(2)]
    return m.finish([x], ys, C["UnpackOptions"](num=2, axis=0))


def _concatenation(m: _Model):
    x = m.act("x", "in0", SHAPE)
    z = m.act("z", "in1", SHAPE, default=m.t("in0"))
    y = m.out("y", "out0", (1, 4, 4, 4), default=m.t("in0"))
    return m.finish([x, z], [y], C["ConcatenationOptions"](axis=3))


def _resize(m: _Model, table: str):
    x = m.act("x", "in0", SHAPE)
    size = m.const("size", None, (2,), values=[8, 8])
    y = m.out("y", "out0", (1, 8, 8, 2), default=m.t("in0"))
    return m.finish([x, size], [y], C[table]())


def _pad(m: _Model):
    return _with_int_aux(m, [0, 0, 1, 1, 1, 1, 0, 0], (1, 6, 6, 2), aux_shape=(4, 2))


def _padv2(m: _Model):
    x = m.act("x", "in0", SHAPE)
    pads = m.const("paddings", None, (4, 2), values=[0, 0, 1, 1, 1, 1, 0, 0])
    value = m.const("value", "in2", (), default=m.t("in0"), values=0 if m.t("in0") != T.UINT8 else 128)
    y = m.out("y", "out0", (1, 6, 6, 2), default=m.t("in0"))
    return m.finish([x, pads, value], [y])


def _mirror_pad(m: _Model):
    x = m.act("x", "in0", SHAPE)
    pads = m.const("paddings", None, (4, 2), values=[0, 0, 1, 1, 1, 1, 0, 0])
    y = m.out("y", "out0", (1, 6, 6, 2), default=m.t("in0"))
    return m.finish([x, pads], [y], C["MirrorPadOptions"]())


def _dynamic_update_slice(m: _Model):
    x = m.act("x", "in0", (4, 4))
    upd = m.act("update", "in1", (2, 2), default=m.t("in0"))
    idx = m.const("indices", "in2", (2,), values=[1, 1])
    y = m.out("y", "out0", (4, 4), default=m.t("in0"))
    return m.finish([x, upd, idx], [y])


def _select(m: _Model, rank4: bool = True):
    cond = m.act("cond", "in0", SHAPE, default=T.BOOL)
    a = m.act("a", "in1", SHAPE)
    c = m.act("c", "in2", SHAPE, default=m.t("in1"))
    y = m.out("y", "out0", SHAPE, default=m.t("in1"))
    return m.finish([cond, a, c], [y])


def _fill(m: _Model):
    dims = m.const("dims", "in0", (2,), values=[2, 3])
    value = m.const("value", "in1", (), default=T.FLOAT32, values=1)
    y = m.out("y", "out0", (2, 3), default=m.t("in1"))
    return m.finish([dims, value], [y])


def _range(m: _Model):
    start = m.const("start", "in0", (), default=T.INT32, values=0)
    limit = m.const("limit", "in1", (), default=m.t("in0"), values=4)
    delta = m.const("delta", "in2", (), default=m.t("in0"), values=1)
    y = m.out("y", "out0", (4,), default=m.t("in0"))
    return m.finish([start, limit, delta], [y])


def _where(m: _Model):
    x = m.act("x", "in0", (2, 3), default=T.BOOL)
    y = m.b.tensor("y", (3, 2), m.t("out0", T.INT64))
    m.b.output(y)
    return m.finish([x], [y])


def _topk(m: _Model):
    x = m.act("x", "in0", (2, 5))
    k = m.const("k", "in1", (), values=2)
    y = m.out("values", "out0", (2, 2), default=m.t("in0"))
    idx = m.out("indices", "out1", (2, 2), default=m.t("in1", T.INT32))
    return m.finish([x, k], [y, idx])


def _sparse_to_dense(m: _Model):
    idx = m.const("indices", "in0", (2, 1), values=[0, 2])
    shape = m.const("output_shape", None, (1,), values=[4], default=m.t("in0"))
    values = m.const("values", "in2", (2,), default=T.FLOAT32, values=[1, 2])
    default = m.const("default", "in3", (), default=m.t("in2"), values=0)
    y = m.out("y", "out0", (4,), default=m.t("in2"))
    return m.finish([idx, shape, values, default], [y])


def _embedding_lookup(m: _Model):
    ids = m.act("ids", "in0", (2,), default=T.INT32)
    table = m.const("table", "in1", (4, 3), default=T.FLOAT32)
    y = m.out("y", "out0", (2, 3), default=m.t("in1") if m.t("in1") != T.INT8 else T.FLOAT32)
    return m.finish([ids, table], [y])


def _prelu(m: _Model):
    x = m.act("x", "in0", SHAPE)
    alpha = m.const("alpha", "in1", (1, 1, 2), default=m.t("in0"))
    y = m.out("y", "out0", SHAPE, default=m.t("in0"))
    return m.finish([x, alpha], [y])


def _squeeze(m: _Model):
    return _unary(m, C["SqueezeOptions"](squeeze_dims=(0,)), shape=(1, 4, 2), out_shape=(4, 2))


def _strided_slice(m: _Model):
    x = m.act("x", "in0", SHAPE)
    begin = m.const("begin", None, (4,), values=[0, 1, 1, 0])
    end = m.const("end", None, (4,), values=[1, 3, 3, 2])
    strides = m.const("strides", None, (4,), values=[1, 1, 1, 1])
    y = m.out("y", "out0", (1, 2, 2, 2), default=m.t("in0"))
    return m.finish([x, begin, end, strides], [y], C["StridedSliceOptions"]())


def _slice(m: _Model):
    x = m.act("x", "in0", SHAPE)
    begin = m.const("begin", None, (4,), values=[0, 1, 1, 0])
    size = m.const("size", None, (4,), values=[1, 2, 2, 2])
    y = m.out("y", "out0", (1, 2, 2, 2), default=m.t("in0"))
    return m.finish([x, begin, size], [y])


def _cast(m: _Model):
    return _unary(m, C["CastOptions"](in_data_type=m.t("in0"), out_data_type=m.t("out0")))


_RECIPES = {
    B.CONV_2D: _conv, B.DEPTHWISE_CONV_2D: _depthwise, B.FULLY_CONNECTED: _fully_connected,
    B.TRANSPOSE_CONV: _transpose_conv, B.BATCH_MATMUL: _batch_matmul,
    B.ADD: lambda m: _binary(m, C["AddOptions"]()), B.SUB: lambda m: _binary(m, C["SubOptions"]()),
    B.MUL: lambda m: _binary(m, C["MulOptions"]()), B.DIV: lambda m: _binary(m, C["DivOptions"]()),
    B.MAXIMUM: _binary, B.MINIMUM: _binary, B.FLOOR_DIV: _binary, B.FLOOR_MOD: _binary,
    B.SQUARED_DIFFERENCE: _binary,
    B.EQUAL: _compare, B.NOT_EQUAL: _compare, B.LESS: _compare, B.LESS_EQUAL: _compare, B.GREATER: _compare,
    B.GREATER_EQUAL: _compare,
    B.ABS: _unary, B.RELU: _unary, B.RELU6: _unary, B.TANH: _unary, B.LOGISTIC: _unary, B.EXP: _unary,
    B.LOG: _unary, B.SQRT: _unary, B.RSQRT: _unary, B.SIN: _unary, B.COS: _unary, B.SIGN: _unary,
    B.HARD_SWISH: _unary, B.DEQUANTIZE: _unary, B.QUANTIZE: _unary, B.CAST: _cast,
    B.LEAKY_RELU: lambda m: _unary(m, C["LeakyReluOptions"](alpha=0.2)),
    B.GELU: lambda m: _unary(m, C["GeluOptions"]()),
    B.SOFTMAX: lambda m: _unary(m, C["SoftmaxOptions"](beta=1.0)),
    B.LOG_SOFTMAX: _unary, B.L2_NORMALIZATION: lambda m: _unary(m, C["L2NormOptions"]()),
    B.MAX_POOL_2D: _pool, B.AVERAGE_POOL_2D: _pool, B.PRELU: _prelu, B.SQUEEZE: _squeeze,
    B.SPACE_TO_DEPTH: lambda m: _unary(m, C["SpaceToDepthOptions"](block_size=2), out_shape=(1, 2, 2, 8)),
    B.DEPTH_TO_SPACE: lambda m: _unary(m, C["DepthToSpaceOptions"](block_size=2), shape=(1, 2, 2, 8),
                                       out_shape=SHAPE),
    B.MEAN: _reduce, B.SUM: _reduce, B.REDUCE_PROD: _reduce, B.REDUCE_MAX: _reduce, B.REDUCE_MIN: _reduce,
    B.ARG_MAX: lambda m: _arg(m, "ArgMaxOptions"), B.ARG_MIN: lambda m: _arg(m, "ArgMinOptions"),
    B.TRANSPOSE: lambda m: _with_int_aux(m, [0, 2, 1, 3], SHAPE),
    B.TILE: lambda m: _with_int_aux(m, [1, 1, 1, 2], (1, 4, 4, 4)),
    B.BROADCAST_TO: lambda m: _with_int_aux(m, [2, 4, 4, 2], (2, 4, 4, 2)),
    B.REVERSE_V2: lambda m: _with_int_aux(m, [1], SHAPE),
    B.SPACE_TO_BATCH_ND: lambda m: _s2b(m, True), B.BATCH_TO_SPACE_ND: lambda m: _s2b(m, False),
    B.PAD: _pad, B.PADV2: _padv2, B.MIRROR_PAD: _mirror_pad, B.SLICE: _slice, B.STRIDED_SLICE: _strided_slice,
    B.GATHER: _gather, B.GATHER_ND: _gather_nd, B.SPLIT: _split, B.SPLIT_V: _split_v, B.PACK: _pack,
    B.UNPACK: _unpack, B.CONCATENATION: _concatenation,
    B.RESIZE_BILINEAR: lambda m: _resize(m, "ResizeBilinearOptions"),
    B.RESIZE_NEAREST_NEIGHBOR: lambda m: _resize(m, "ResizeNearestNeighborOptions"),
    B.DYNAMIC_UPDATE_SLICE: _dynamic_update_slice, B.SELECT: _select, B.SELECT_V2: _select, B.FILL: _fill,
    B.RANGE: _range, B.WHERE: _where, B.TOPK_V2: _topk, B.SPARSE_TO_DENSE: _sparse_to_dense,
    B.EMBEDDING_LOOKUP: _embedding_lookup,
}


def _s2b(m: _Model, to_batch: bool):
    x = m.act("x", "in0", SHAPE if to_batch else (4, 2, 2, 2))
    block = m.const("block_shape", None, (2,), values=[2, 2])
    pads = m.const("paddings" if to_batch else "crops", None, (2, 2), values=[0, 0, 0, 0])
    y = m.out("y", "out0", (4, 2, 2, 2) if to_batch else SHAPE, default=m.t("in0"))
    return m.finish([x, block, pads], [y])


def recipes() -> frozenset:
    """The ops :func:`build` can make."""
    return frozenset(_RECIPES)


def build(op, types: dict) -> bytes:
    """A one-operator model of ``op`` whose typed slots have ``types`` (slot name → TensorType)."""
    op = B(op)
    return _RECIPES[op](_Model(op, {k: T(v) for k, v in types.items()}))


def feeds(data: bytes) -> list[np.ndarray]:
    """Small valid values for every model input, in order."""
    model = load(data)
    sg = model.subgraphs[0]
    out = []
    for i in sg.inputs:
        t = sg.tensors[i]
        out.append(_values(T(t.type), tuple(t.shape), 1, 3))  # no zeros: divisors stay valid
    return out

"""The (model, feeds) cases of tests/interpreter/test_version_gaps.py, shared with the kernel tests."""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from workbench.schema import (
    AddOptions,
    ConcatenationOptions,
    DimensionMetadata,
    DimensionType,
    FullyConnectedOptions,
    Int32Vector,
    ModelBuilder,
    MulOptions,
    SoftmaxOptions,
    SparseIndexVector,
    SparsityParameters,
    SubOptions,
    TensorType,
)
from workbench.schema import BuiltinOperator as B


def sparse_levels(w: np.ndarray, block: int) -> tuple[np.ndarray, SparsityParameters]:
    """The stored values and SparsityParameters of ``w`` [units, K]: dense rows, CSR over blocks of
    ``block`` columns (block 1: TFLite's "random sparse"), a dense block level when block > 1."""
    units, k = w.shape
    segments, indices, stored = [0], [], []
    for u in range(units):
        blocks = w[u].reshape(k // block, block)
        for j in range(k // block):
            if np.any(blocks[j] != 0):
                indices.append(j)
                stored.extend(blocks[j].tolist())
        segments.append(len(indices))
    levels = [DimensionMetadata(format=DimensionType.DENSE, dense_size=units),
              DimensionMetadata(format=DimensionType.SPARSE_CSR, dense_size=k // block,
                                array_segments_type=SparseIndexVector.Int32Vector,
                                array_segments=Int32Vector(values=tuple(segments)),
                                array_indices_type=SparseIndexVector.Int32Vector,
                                array_indices=Int32Vector(values=tuple(indices)))]
    if block > 1:
        levels.append(DimensionMetadata(format=DimensionType.DENSE, dense_size=block))
        sparsity = SparsityParameters(traversal_order=(0, 1, 2), block_map=(1,), dim_metadata=tuple(levels))
    else:
        sparsity = SparsityParameters(traversal_order=(0, 1), block_map=(), dim_metadata=tuple(levels))
    return np.array(stored, w.dtype), sparsity


CASES: dict = {}


F16, F32, C64 = np.float16, np.float32, np.complex64
I8, I16, I32, I64, U32 = np.int8, np.int16, np.int32, np.int64, np.uint32
OPTIONS = {B.ADD: AddOptions, B.SUB: SubOptions, B.MUL: MulOptions}


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp, dim=0):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": dim}


def values(rng, dt, shape) -> np.ndarray:
    """Values that exercise ``dt``: integer extremes (overflow), float ties, infinities, NaN, ±65504."""
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        v[: min(n, 6)] = np.array([info.min, info.max, 0, 1, 7, 6], dtype=object)[: min(n, 6)].astype(dt)
        small = rng.integers(-9 if dt.kind == "i" else 0, 10, n)
        v[n // 2:] = small[n // 2:].astype(dt)                    # small values: the activation clamps bite
        return v.reshape(shape)
    if dt.kind == "c":
        return (rng.normal(0, 100, n) + 1j * rng.normal(0, 100, n)).astype(dt).reshape(shape)
    v = rng.normal(0, 20, n) * (10.0 ** rng.integers(-3, 4, n))
    v[n // 2:] = rng.integers(-16, 17, n - n // 2) / 4.0       # ties and small values
    special = [np.inf, -np.inf, np.nan, -0.0, 65504.0, -65504.0, 40000.0, 6.0, -1.0]
    v[: min(n, len(special))] = special[: min(n, len(special))]
    with np.errstate(over="ignore"):
        return v.astype(dt).reshape(shape)


def one_op(op, inputs, outputs, options=None, version=1):
    """inputs: [(name, shape, dtype, quantization, value or None for a graph input)], outputs: [(shape, dtype, q)]."""
    b = ModelBuilder()
    ins = []
    for name, shape, dt, qp, value in inputs:
        if value is None:
            ins.append(b.input(name, shape, dt, quantization=qp))
        else:
            ins.append(b.constant(name, np.asarray(value, dt), quantization=qp))
    outs = [b.tensor(f"out{k}", shape, dt, quantization=qp) for k, (shape, dt, qp) in enumerate(outputs)]
    b.op(op, ins, outs, options, version=version)
    b.output(*outs)
    return b


def binary(op, dt, version, shapes=((3, 8), (3, 8)), act=0, qp=None, name=""):
    rng = rng_for(name)
    feeds = [values(rng, dt, shapes[0]), values(rng, dt, shapes[1])]
    if op in (B.FLOOR_DIV, B.FLOOR_MOD):
        feeds[1][feeds[1] == 0] = 3
        feeds[1].reshape(-1)[0] = -1                   # MIN / −1: the one quotient that does not fit
    opts = OPTIONS[op](fused_activation_function=act) if op in OPTIONS else None
    b = one_op(op, [("a", shapes[0], dt, qp, None), ("b", shapes[1], dt, qp, None)],
               [(np.broadcast_shapes(*shapes), dt, qp)], opts, version)
    return b.build(), feeds


def every_pair(op, dt, version, qp=None):
    """Every int8 value against every non-zero int8 value ([256, 1] by [1, 255] broadcast)."""
    allv = np.arange(-128, 128).astype(dt)
    nonzero = allv[allv != 0]
    b = one_op(op, [("a", (256, 1), dt, qp, None), ("b", (1, 255), dt, qp, None)], [((256, 255), dt, qp)],
               version=version)
    return b.build(), [allv.reshape(256, 1), nonzero.reshape(1, 255)]


def unary(op, x, version, options=None):
    b = one_op(op, [("x", x.shape, x.dtype, None, None)], [(x.shape, x.dtype, None)], options, version)
    return b.build(), [x]


def all_halves() -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint16).view(F16)


def softmax16(shape, beta, name):
    x = (rng_for(name).normal(0, 4, shape)).astype(F16)
    if shape[0] >= 5:
        x[0, :2] = (np.inf, 1)
        x[1, -1] = np.nan
        x[2, :] = -np.inf
        x[3, :] = 65504
        x[4, :] = -65504
    return unary(B.SOFTMAX, x, 4, SoftmaxOptions(beta=beta))


def transpose(dt, shape, version, name):
    perm = rng_for(name).permutation(len(shape)).astype(np.int32)
    x = values(rng_for(name), dt, shape)
    b = one_op(B.TRANSPOSE, [("x", shape, dt, None, None), ("perm", perm.shape, np.int32, None, perm)],
               [(tuple(np.array(shape)[perm]), dt, None)], version=version)
    return b.build(), [x]


def slice16(name):
    x = values(rng_for(name), F16, (4, 5, 3))
    begin, size = np.array([1, 0, 1], np.int32), np.array([2, -1, 2], np.int32)
    b = one_op(B.SLICE, [("x", x.shape, F16, None, None), ("begin", (3,), np.int32, None, begin),
                         ("size", (3,), np.int32, None, size)], [((2, 5, 2), F16, None)], version=8)
    return b.build(), [x]


def concat16(name):
    rng = rng_for(name)
    xs = [values(rng, F16, (2, k, 3)) for k in (1, 4, 2)]
    b = one_op(B.CONCATENATION, [(f"x{k}", x.shape, F16, None, None) for k, x in enumerate(xs)],
               [((2, 7, 3), F16, None)], ConcatenationOptions(axis=1), version=6)
    return b.build(), xs


def fc_int16_weights(name, units=5, k=12, w_zp=0, per_channel=False, bias=None, bias_type_option=None, act=0,
                     keep=False, x_shape=None, w_max=32767):
    """FULLY_CONNECTED v7: int16 input, weights and output."""
    rng = rng_for(name)
    xs = x_shape or (3, k)
    ws = rng.uniform(1e-5, 5e-5, units).tolist() if per_channel else 3e-5
    zps = [0] * units if per_channel else w_zp
    b = ModelBuilder()
    x = b.input("x", xs, I16, quantization=q(0.002, 0))
    w = b.constant("w", rng.integers(-w_max, w_max + 1, (units, k)).astype(I16), quantization=q(ws, zps))
    ins = [x, w]
    if bias is not None:
        bs = (0.002 * np.asarray(ws, np.float32)).tolist() if per_channel else 0.002 * 3e-5
        ins.append(b.constant("bias", rng.integers(-2 ** 20, 2 ** 20, units).astype(bias),
                              quantization=q(bs, [0] * units if per_channel else 0)))
    out = tuple(xs[:-1]) + (units,) if keep else (int(np.prod(xs)) // k, units)
    y = b.tensor("y", out, I16, quantization=q(0.01, 0))
    extra = {} if bias_type_option is None else {"quantized_bias_type": bias_type_option}
    b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act, keep_num_dims=keep,
                                                            **extra), version=7)
    b.output(y)
    x_values = rng.integers(-32768, 32768, xs).astype(I16)
    x_values.reshape(-1)[:2] = (-32768, 32767)
    return b.build(), [x_values]


def fc_sparse(name, dt, block, units=12, k=64, batch=5, per_channel=False, bias=True, act=0, density=0.3,
              in_zp=-3, input_dtype=None):
    """FULLY_CONNECTED v8: constant weights with SparsityParameters."""
    rng = rng_for(name)
    if dt == F32:
        w = rng.normal(0, 1, (units, k)).astype(F32)
    else:
        w = rng.integers(-127, 128, (units, k)).astype(I8)
    keep = np.repeat(rng.random((units, k // block)) < density, block, axis=1)
    keep[0] = False                                  # a row with no stored weight
    w = np.where(keep, w, 0).astype(dt)
    stored, sparsity = sparse_levels(w, block)
    xdt = input_dtype or dt
    b = ModelBuilder()
    if dt == F32:
        x = b.input("x", (batch, k), xdt)
        wt = b.constant("w", stored)
        ins = [x, wt] + ([b.constant("bias", rng.normal(0, 1, units).astype(F32))] if bias else [])
        y = b.tensor("y", (batch, units), F32)
        feeds = [rng.normal(0, 1, (batch, k)).astype(F32)]
    else:
        ws = rng.uniform(0.002, 0.01, units).tolist() if per_channel else 0.005
        zps = [0] * units if per_channel else 0
        x = b.input("x", (batch, k), xdt, quantization=q(0.02, in_zp) if xdt != F32 else None)
        wt = b.constant("w", stored, quantization=q(ws, zps))
        bs = (0.02 * np.asarray(ws, np.float32)).tolist() if per_channel else 0.02 * 0.005
        ins = [x, wt] + ([b.constant("bias", rng.integers(-3000, 3000, units).astype(I32),
                                     quantization=q(bs, zps))] if bias else [])
        y = b.tensor("y", (batch, units), xdt, quantization=q(0.25, 2) if xdt != F32 else None)
        feeds = [rng.integers(-128, 128, (batch, k)).astype(I8) if xdt == I8 else
                 rng.normal(0, 1, (batch, k)).astype(F32)]
    b.tensors[wt] = dataclasses.replace(b.tensors[wt], shape=(units, k), sparsity=sparsity)
    b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act), version=8)
    b.output(y)
    return b.build(), feeds


RULES: dict = {}
REFUSED: dict = {}


def case(name, made, rule=None):
    CASES[name] = made
    if rule is not None:
        RULES[name] = rule


for op, dt, version in ((B.ADD, I64, 4), (B.SUB, I64, 4), (B.MUL, I64, 5), (B.ADD, F16, 6), (B.MUL, F16, 8),
                        (B.MUL, U32, 7), (B.ADD, I32, 1), (B.SUB, I32, 1), (B.MUL, I32, 1)):
    tag = f"{op.name.lower()}_{np.dtype(dt).name}"
    for act in (0, 1, 2, 3, 4):
        case(f"{tag}_act{act}", binary(op, dt, version, act=act, name=f"{tag}_act{act}"), version)
    case(f"{tag}_broadcast", binary(op, dt, version, shapes=((2, 1, 4), (3, 1)), act=1, name=f"{tag}_b"), version)
    case(f"{tag}_scalar", binary(op, dt, version, shapes=((1,), (2, 5)), name=f"{tag}_s"), version)
case("mul_complex64", binary(B.MUL, C64, 6, shapes=((64, 16), (64, 16)), name="c64"), 6)
case("mul_complex64_broadcast", binary(B.MUL, C64, 6, shapes=((4, 1, 16), (3, 1)), name="c64b"), 6)
REFUSED["mul_complex64_relu"] = (*binary(B.MUL, C64, 6, act=1, name="c64r"), "error")

for op, version in ((B.FLOOR_DIV, 3), (B.FLOOR_MOD, 2)):
    tag = op.name.lower()
    case(f"{tag}_int8_every_pair", every_pair(op, I8, version), version)
    case(f"{tag}_int8_quantized_every_pair", every_pair(op, I8, version, q(0.05, 3)), version)
    case(f"{tag}_int16", binary(op, I16, version, shapes=((64, 64), (64, 64)), name=f"{tag}16"), version)
    case(f"{tag}_int16_broadcast", binary(op, I16, version, shapes=((4, 1), (5,)), name=f"{tag}16b"), version)
    zero = one_op(op, [("a", (3,), I8, None, None), ("b", (3,), I8, None, None)], [((3,), I8, None)],
                  version=version).build()
    REFUSED[f"{tag}_int8_zero_divisor"] = (zero, [np.array([1, 2, 3], I8), np.array([1, 0, 2], I8)], "error")

for op in (B.SIN, B.COS):
    case(f"{op.name.lower()}_float16_every_value", unary(op, all_halves(), 2))
SOFTMAX_EDGES = np.array([[1, 2, 3], [np.inf, 1, 2], [-np.inf, 1, 2], [np.inf, -np.inf, 1], [-np.inf] * 3,
                          [np.inf, np.inf, 1], [1, 2, np.nan], [np.nan, 1, 2], [1, 2, 0], [65504, -65504, 0]], F16)
SOFTMAX_EDGES[8, 2] = np.array([0xFE00], np.uint16).view(F16)[0]          # a negative NaN
case("softmax_float16_infinities_and_nans", unary(B.SOFTMAX, SOFTMAX_EDGES, 4, SoftmaxOptions(beta=1.0)))
for shape, beta in (((64, 10), 1.0), ((8, 1000), 1.0), ((3, 4, 257), 0.37), ((5, 3), 5.0), ((2, 1), 1.0)):
    case(f"softmax_float16_{'x'.join(map(str, shape))}_beta{beta}", softmax16(shape, beta, f"sm{shape}{beta}"))

for rank in (7, 8):
    for dt in (F32, I8, F16):
        n = f"transpose_rank{rank}_{np.dtype(dt).name}"
        # rules.py lacks LiteRT's newer "float16 → 9" row (it would give 8 here): no RULES entry for float16
        case(n, transpose(dt, (2, 3, 1, 2, 2, 3, 2, 2)[:rank], 9 if dt == F16 else 8, n), None if dt == F16 else 8)
case("transpose_float16", transpose(F16, (3, 4, 5), 9, "t16"))
REFUSED["transpose_rank9"] = (*transpose(F32, (2, 1, 2, 1, 2, 1, 2, 1, 2), 8, "t9"), "error")
case("slice_float16", slice16("s16"))
case("concatenation_float16", concat16("c16"))
case("gather_nd_float16", (one_op(B.GATHER_ND, [("p", (4, 3), F16, None, None),
                                               ("i", (2, 1), np.int32, None, np.array([[3], [0]]))],
                                  [((2, 3), F16, None)]).build(), [values(rng_for("gnd"), F16, (4, 3))]))

for name, kw in {"per_tensor": {}, "weight_zero_point": {"w_zp": 7}, "per_channel": {"per_channel": True},
                 "int32_bias": {"bias": I32}, "int32_bias_option": {"bias": I32, "bias_type_option": TensorType.INT32},
                 "int64_bias_option": {"bias": I64, "bias_type_option": TensorType.INT64},
                 "per_channel_int64_bias": {"bias": I64, "bias_type_option": TensorType.INT64, "per_channel": True},
                 "relu": {"act": 1, "bias": I32}, "relu6": {"act": 3}, "relu_n1_to_1": {"act": 2},
                 "keep_num_dims": {"keep": True, "x_shape": (2, 3, 12)},
                 "deep": {"k": 3000, "units": 7}}.items():
    case(f"fc_int16_weights_{name}", fc_int16_weights(f"fc16{name}", **kw), 7)
REFUSED["fc_int16_weights_int64_bias_without_option"] = (*fc_int16_weights("fc16bad", bias=I64), "ok")

for name, args, kw in (("float_random", (F32, 1), {}), ("float_1x4", (F32, 4), {}),
                       ("float_1x4_relu_no_bias", (F32, 4), {"act": 1, "bias": False}),
                       ("float_random_relu6", (F32, 1), {"act": 3, "batch": 1}),
                       ("int8_1x16", (I8, 16), {}), ("int8_1x16_per_channel", (I8, 16), {"per_channel": True}),
                       ("int8_1x16_no_bias_relu6", (I8, 16), {"bias": False, "act": 3}),
                       ("int8_1x16_deep", (I8, 16), {"k": 512, "units": 40, "batch": 9, "density": 0.5})):
    n = f"fc_sparse_{name}"
    case(n, fc_sparse(n, *args, **kw), 8)
REFUSED["fc_sparse_int8_random"] = (*fc_sparse("bad1", I8, 1), "error")
REFUSED["fc_sparse_float_1x16"] = (*fc_sparse("bad2", F32, 16), "error")
REFUSED["fc_sparse_hybrid"] = (*fc_sparse("bad3", I8, 16, input_dtype=F32), None)

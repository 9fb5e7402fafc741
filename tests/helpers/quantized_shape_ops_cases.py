"""The quantized shape-op case table of tests/interpreter/quant/test_quantized_shape_ops.py.

Shared with the explain tests (tests/interpreter/explain/), which run the same cases.
"""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import CLASSES, ModelBuilder, Padding, TensorType
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.versioning import update_versions

U8, I8, I16 = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)
S, V = Padding.SAME, Padding.VALID
OPT = CLASSES          # options tables by name, e.g. OPT["Pool2DOptions"](...)


def Q(scale, zero_point):
    return {"scale": scale, "zero_point": zero_point}


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


STR = TensorType.STRING


def random_values(rng, dtype, shape):
    """Full-range integers (the extremes included), uniform floats, random bools, or byte strings of
    random length (the empty one and one with a NUL included) for STRING."""
    if dtype is STR:
        n = int(np.prod(shape))
        words = [bytes(rng.integers(0, 256, int(rng.integers(0, 6))).astype(np.uint8)) for _ in range(n)]
        words[:2] = [b"", b"a\x00b"][:n]
        return np.array(words, dtype=object).reshape(shape)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        return rng.uniform(-2, 2, shape).astype(dtype)
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    flat = v.reshape(-1)
    if flat.size >= 4:
        flat[:2] = info.min, info.max
    return v


def one_op(op, inputs, outputs, options=None, values=None):
    """A model with one operator.

    ``inputs``: list of (name, shape, dtype, quantization or None) and, for constants, ("const",
    array[, quantization]) entries, in the operator's input order; ``outputs``: list of
    (shape, dtype, quantization or None).  ``values``: name → array to use instead of random
    inputs.
    """
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        ids, feed = [], {}
        for k, spec in enumerate(inputs):
            if spec[0] == "const":
                arr = np.asarray(spec[1])
                ids.append(b.constant(f"c{k}", arr, quantization=spec[2] if len(spec) > 2 else None))
                continue
            nm, shape, dt, q = spec
            ids.append(b.input(nm, shape, dt, quantization=q))
            feed[nm] = (values or {}).get(nm, random_values(rng, dt, shape))
        outs = [b.tensor(f"y{k}", shape, dt, quantization=q) for k, (shape, dt, q) in enumerate(outputs)]
        b.op(op, ids, outs, options)
        b.output(*outs)
        return b, feed
    return build


def unary(op, shape, dtype, qi, out_shape, qo="same", options=None, consts=(), out_dtype=None, values=None):
    """x (+ constants after it) → y."""
    qo = qi if qo == "same" else qo
    ins = [("x", shape, dtype, qi)] + [("const",) + tuple(c if isinstance(c, tuple) else (c,)) for c in consts]
    return one_op(op, ins, [(out_shape, out_dtype or dtype, qo)], options,
                  values={"x": values} if values is not None else None)


def pool(op, dtype, shape, f, stride, padding, act=Act.NONE, q=(0.05, 0)):
    def window(size, k, s):
        return -(-size // s) if padding == S else (size - k) // s + 1
    out = (shape[0], window(shape[1], f[0], stride[0]), window(shape[2], f[1], stride[1]), shape[3])
    return unary(op, shape, dtype, Q(*q), out, options=OPT["Pool2DOptions"](
        padding=padding, stride_h=stride[0], stride_w=stride[1], filter_height=f[0], filter_width=f[1],
        fused_activation_function=act))


CASES = {
    # pools
    "avg_pool_u8_same_odd": pool(B.AVERAGE_POOL_2D, U8, (2, 7, 9, 5), (3, 3), (2, 2), S, q=(0.05, 255)),
    "avg_pool_u8_relu6_zp200": pool(B.AVERAGE_POOL_2D, U8, (1, 8, 6, 17), (3, 2), (1, 2), V, Act.RELU6, (0.03, 200)),
    "avg_pool_u8_global": pool(B.AVERAGE_POOL_2D, U8, (1, 7, 7, 33), (7, 7), (1, 1), V, q=(0.1, 0)),
    "avg_pool_i16_same": pool(B.AVERAGE_POOL_2D, I16, (1, 9, 8, 6), (3, 3), (2, 2), S, q=(0.001, 0)),
    "avg_pool_i16_relu_zp": pool(B.AVERAGE_POOL_2D, I16, (2, 5, 6, 3), (2, 3), (1, 1), S, Act.RELU, (0.0004, -9)),
    "avg_pool_i8_relu_n1": pool(B.AVERAGE_POOL_2D, I8, (1, 6, 7, 4), (2, 2), (2, 2), S, Act.RELU_N1_TO_1, (0.02, 127)),
    "max_pool_u8_same": pool(B.MAX_POOL_2D, U8, (1, 7, 9, 5), (3, 3), (2, 2), S, q=(0.05, 255)),
    "max_pool_u8_relu": pool(B.MAX_POOL_2D, U8, (2, 6, 6, 3), (2, 2), (2, 2), V, Act.RELU, (0.05, 100)),
    "max_pool_i16_relu6": pool(B.MAX_POOL_2D, I16, (1, 8, 7, 4), (3, 3), (1, 1), S, Act.RELU6, (0.0003, 0)),
    "max_pool_i16_valid": pool(B.MAX_POOL_2D, I16, (2, 9, 9, 2), (4, 4), (3, 3), V, q=(0.001, 0)),
}


def concat(dtype, shapes, axis, qs, qo):
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    ins = [(f"x{k}", s, dtype, qs[k] if qs else None) for k, s in enumerate(shapes)]
    return one_op(B.CONCATENATION, ins, [(tuple(out), dtype, qo)], OPT["ConcatenationOptions"](axis=axis))


CASES.update({
    "concat_u8_same_q": concat(U8, [(2, 3, 4), (2, 5, 4)], 1, [Q(0.1, 128)] * 2, Q(0.1, 128)),
    "concat_u8_rescale": concat(U8, [(2, 3, 5), (2, 3, 2), (2, 3, 7)], -1,
                                [Q(0.02, 0), Q(0.1, 128), Q(0.37, 255)], Q(0.1, 128)),
    "concat_u8_rescale_axis0": concat(U8, [(1, 3, 4), (3, 3, 4)], 0, [Q(0.0123, 17), Q(0.5, 200)], Q(0.05, 3)),
    "concat_u8_ties": concat(U8, [(4, 64), (4, 64)], 1, [Q(0.5, 0), Q(0.25, 1)], Q(1.0, 0)),
    "concat_i8_axis2": concat(I8, [(2, 2, 3), (2, 2, 1)], 2, [Q(0.07, -128)] * 2, Q(0.07, -128)),
    "concat_i16_scales_copied": concat(I16, [(3, 4), (3, 2)], 1, [Q(0.001, 0), Q(0.003, 0)], Q(0.002, 0)),
    "concat_u32_v4": concat(np.uint32, [(2, 3), (2, 1)], 1, None, None),
    "concat_bool": concat(np.bool_, [(2, 3), (1, 3)], 0, None, None),
    # reshapes
    "reshape_u8": unary(B.RESHAPE, (2, 3, 5), U8, Q(0.1, 255), (5, 6), consts=[np.array([5, -1], np.int32)]),
    "reshape_i16": unary(B.RESHAPE, (4, 6), I16, Q(0.001, 0), (2, 12), consts=[np.array([2, 12], np.int32)]),
    "squeeze_u8": unary(B.SQUEEZE, (3, 1, 5, 1), U8, Q(0.1, 7), (3, 5),
                        options=OPT["SqueezeOptions"](squeeze_dims=(1, 3))),
    "squeeze_i16": unary(B.SQUEEZE, (1, 4, 1), I16, Q(0.01, 0), (4,), options=OPT["SqueezeOptions"]()),
    "expand_dims_u8": unary(B.EXPAND_DIMS, (3, 5), U8, Q(0.1, 0), (3, 1, 5), consts=[np.array([-2], np.int32)]),
    "expand_dims_i16": unary(B.EXPAND_DIMS, (3, 5), I16, Q(0.1, 0), (1, 3, 5), consts=[np.array([0], np.int32)]),
    "expand_dims_i8": unary(B.EXPAND_DIMS, (3, 5), I8, Q(0.1, 0), (3, 5, 1), consts=[np.array([2], np.int32)]),
    # padding
    "pad_u8_zp255": unary(B.PAD, (1, 3, 4, 2), U8, Q(0.1, 255), (1, 6, 7, 2),
                          consts=[np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32)]),
    "pad_i8_out_zp_differs": unary(B.PAD, (2, 3), I8, Q(0.1, 7), (4, 5), qo=Q(0.2, -5),
                                   consts=[np.array([[1, 1], [0, 2]], np.int32)]),
    "pad_i16": unary(B.PAD, (3, 2, 3), I16, Q(0.001, 0), (4, 5, 3),
                     consts=[np.array([[1, 0], [2, 1], [0, 0]], np.int32)]),
    "pad_i16_zero_point": unary(B.PAD, (2, 3), I16, Q(0.001, -300), (3, 5),
                                consts=[np.array([[0, 1], [1, 1]], np.int32)]),
    "pad_i8_rank5_v4": unary(B.PAD, (1, 2, 2, 2, 3), I8, Q(0.1, -128), (1, 3, 2, 4, 3),
                             consts=[np.array([[0, 0], [1, 0], [0, 0], [1, 1], [0, 0]], np.int32)]),
    "pad_bool_v5": unary(B.PAD, (2, 3), np.bool_, None, (3, 4), consts=[np.array([[0, 1], [1, 0]], np.int32)]),
    "pad_i64": unary(B.PAD, (2, 3), np.int64, None, (3, 4), consts=[np.array([[0, 1], [1, 0]], np.int32)]),
    "padv2_u8": unary(B.PADV2, (2, 3, 2), U8, Q(0.1, 100), (3, 6, 2), consts=[
        np.array([[1, 0], [1, 2], [0, 0]], np.int32), (np.array([250], np.uint8), Q(0.1, 100))]),
    "padv2_i8": unary(B.PADV2, (2, 3), I8, Q(0.05, -3), (4, 4), consts=[
        np.array([[1, 1], [0, 1]], np.int32), (np.array([-128], np.int8), Q(0.05, -3))]),
    "padv2_i16": unary(B.PADV2, (2, 3), I16, Q(0.001, 0), (4, 4), consts=[
        np.array([[1, 1], [0, 1]], np.int32), (np.array([-32768], np.int16), Q(0.001, 0))]),
    "padv2_bool_v5": unary(B.PADV2, (2, 2), np.bool_, None, (3, 3), consts=[
        np.array([[1, 0], [0, 1]], np.int32), np.array([True])]),
    "padv2_i8_no_constant": unary(B.PADV2, (2, 3), I8, Q(0.05, -3), (2, 5), qo=Q(0.05, 11),
                                  consts=[np.array([[0, 0], [1, 1]], np.int32)]),
    "mirror_pad_u8_reflect": unary(B.MIRROR_PAD, (3, 4), U8, Q(0.1, 3), (5, 9),
                                   consts=[np.array([[1, 1], [2, 3]], np.int32)],
                                   options=OPT["MirrorPadOptions"](mode=0)),
    "mirror_pad_i8_symmetric": unary(B.MIRROR_PAD, (2, 3, 2), I8, Q(0.1, -3), (4, 6, 2),
                                     consts=[np.array([[2, 0], [1, 2], [0, 0]], np.int32)],
                                     options=OPT["MirrorPadOptions"](mode=1)),
    "mirror_pad_i16": unary(B.MIRROR_PAD, (3, 3), I16, Q(0.001, 0), (5, 4),
                            consts=[np.array([[1, 1], [0, 1]], np.int32)],
                            options=OPT["MirrorPadOptions"](mode=0)),
})

CASES.update({
    "transpose_u8": unary(B.TRANSPOSE, (2, 3, 5), U8, Q(0.1, 9), (5, 2, 3), consts=[np.array([2, 0, 1], np.int32)]),
    "transpose_i16_v5": unary(B.TRANSPOSE, (2, 3, 4), I16, Q(0.001, 0), (4, 3, 2),
                              consts=[np.array([2, 1, 0], np.int32)]),
    "transpose_i8_rank5": unary(B.TRANSPOSE, (1, 2, 3, 2, 2), I8, Q(0.1, 1), (2, 2, 1, 3, 2),
                                consts=[np.array([3, 1, 0, 2, 4], np.int32)]),
    "split_u8": one_op(B.SPLIT, [("const", np.array(1, np.int32)), ("x", (2, 6, 3), U8, Q(0.1, 4))],
                       [((2, 2, 3), U8, Q(0.1, 4))] * 3, OPT["SplitOptions"](num_splits=3)),
    "split_i8": one_op(B.SPLIT, [("const", np.array(-1, np.int32)), ("x", (2, 4), I8, Q(0.1, 4))],
                       [((2, 2), I8, Q(0.1, 4))] * 2, OPT["SplitOptions"](num_splits=2)),
    "split_i16_v4": one_op(B.SPLIT, [("const", np.array(0, np.int32)), ("x", (4, 3), I16, Q(0.001, 0))],
                           [((2, 3), I16, Q(0.001, 0))] * 2, OPT["SplitOptions"](num_splits=2)),
    "split_v_u8": one_op(B.SPLIT_V, [("x", (2, 7), U8, Q(0.1, 4)), ("const", np.array([2, -1, 1], np.int32)),
                                     ("const", np.array(1, np.int32))],
                         [((2, 2), U8, Q(0.1, 4)), ((2, 4), U8, Q(0.1, 4)), ((2, 1), U8, Q(0.1, 4))],
                         OPT["SplitVOptions"](num_splits=3)),
    "split_v_i8": one_op(B.SPLIT_V, [("x", (5, 2), I8, Q(0.1, 4)), ("const", np.array([3, 2], np.int32)),
                                     ("const", np.array(0, np.int32))],
                         [((3, 2), I8, Q(0.1, 4)), ((2, 2), I8, Q(0.1, 4))], OPT["SplitVOptions"](num_splits=2)),
    "split_v_i16": one_op(B.SPLIT_V, [("x", (3, 5), I16, Q(0.001, 0)), ("const", np.array([1, 4], np.int32)),
                                      ("const", np.array(-1, np.int32))],
                          [((3, 1), I16, Q(0.001, 0)), ((3, 4), I16, Q(0.001, 0))], OPT["SplitVOptions"](num_splits=2)),
    "pack_u8": one_op(B.PACK, [("a", (2, 3), U8, Q(0.1, 200)), ("b", (2, 3), U8, Q(0.1, 200))],
                      [((2, 2, 3), U8, Q(0.1, 200))], OPT["PackOptions"](values_count=2, axis=1)),
    "pack_i8": one_op(B.PACK, [("a", (3,), I8, Q(0.1, -1)), ("b", (3,), I8, Q(0.1, -1)), ("c", (3,), I8, Q(0.1, -1))],
                      [((3, 3), I8, Q(0.1, -1))], OPT["PackOptions"](values_count=3, axis=0)),
    "pack_i16_v3": one_op(B.PACK, [("a", (2, 2), I16, Q(0.001, 0)), ("b", (2, 2), I16, Q(0.001, 0))],
                          [((2, 2, 2), I16, Q(0.001, 0))], OPT["PackOptions"](values_count=2, axis=-1)),
    "pack_u32_v4": one_op(B.PACK, [("a", (2,), np.uint32, None), ("b", (2,), np.uint32, None)],
                          [((2, 2), np.uint32, None)], OPT["PackOptions"](values_count=2, axis=0)),
    "tile_u8": unary(B.TILE, (2, 3), U8, Q(0.1, 0), (4, 9), consts=[np.array([2, 3], np.int32)]),
    "tile_i8_v3": unary(B.TILE, (2, 1, 3), I8, Q(0.1, 0), (2, 4, 3), consts=[np.array([1, 4, 1], np.int32)]),
    "tile_i16": unary(B.TILE, (3,), I16, Q(0.001, 0), (6,), consts=[np.array([2], np.int64)]),
    "broadcast_to_u8": unary(B.BROADCAST_TO, (1, 3), U8, Q(0.1, 0), (2, 4, 3), consts=[np.array([2, 4, 3], np.int32)]),
    "broadcast_to_i8_v3": unary(B.BROADCAST_TO, (3, 1), I8, Q(0.1, 0), (3, 5), consts=[np.array([3, 5], np.int32)]),
    "broadcast_to_i16_v3": unary(B.BROADCAST_TO, (2, 1, 2), I16, Q(0.001, 0), (2, 3, 2),
                                 consts=[np.array([2, 3, 2], np.int64)]),
    "reverse_u8": unary(B.REVERSE_V2, (3, 4), U8, Q(0.1, 0), (3, 4), consts=[np.array([1], np.int32)]),
    "reverse_i8_v3": unary(B.REVERSE_V2, (2, 3, 4), I8, Q(0.1, 0), (2, 3, 4), consts=[np.array([0], np.int32)]),
    "reverse_i16": unary(B.REVERSE_V2, (2, 5), I16, Q(0.001, 0), (2, 5), consts=[np.array([-1], np.int32)]),
    "space_to_depth_u8": unary(B.SPACE_TO_DEPTH, (1, 4, 6, 3), U8, Q(0.1, 0), (1, 2, 3, 12),
                               options=OPT["SpaceToDepthOptions"](block_size=2)),
    "space_to_depth_i8": unary(B.SPACE_TO_DEPTH, (2, 6, 3, 1), I8, Q(0.1, 0), (2, 2, 1, 9),
                               options=OPT["SpaceToDepthOptions"](block_size=3)),
    "depth_to_space_u8": unary(B.DEPTH_TO_SPACE, (1, 2, 3, 8), U8, Q(0.1, 0), (1, 4, 6, 2),
                               options=OPT["DepthToSpaceOptions"](block_size=2)),
    "depth_to_space_i8": unary(B.DEPTH_TO_SPACE, (2, 1, 2, 9), I8, Q(0.1, 0), (2, 3, 6, 1),
                               options=OPT["DepthToSpaceOptions"](block_size=3)),
    "space_to_batch_u8_zp": unary(B.SPACE_TO_BATCH_ND, (1, 3, 5, 2), U8, Q(0.1, 200), (4, 2, 3, 2), consts=[
        np.array([2, 2], np.int32), np.array([[1, 0], [0, 1]], np.int32)]),
    "space_to_batch_i8_zp": unary(B.SPACE_TO_BATCH_ND, (2, 3, 3, 1), I8, Q(0.1, -77), (8, 2, 2, 1), consts=[
        np.array([2, 2], np.int32), np.array([[1, 0], [0, 1]], np.int32)]),
    "space_to_batch_i8_rank3": unary(B.SPACE_TO_BATCH_ND, (1, 5, 2), I8, Q(0.1, 9), (3, 2, 2), consts=[
        np.array([3], np.int32), np.array([[0, 1]], np.int32)]),
    "space_to_batch_i16_v4": unary(B.SPACE_TO_BATCH_ND, (1, 4, 3, 2), I16, Q(0.001, 0), (4, 2, 2, 2), consts=[
        np.array([2, 2], np.int32), np.array([[0, 0], [1, 0]], np.int32)]),
    "batch_to_space_u8": unary(B.BATCH_TO_SPACE_ND, (4, 2, 3, 2), U8, Q(0.1, 200), (1, 3, 5, 2), consts=[
        np.array([2, 2], np.int32), np.array([[1, 0], [0, 1]], np.int32)]),
    "batch_to_space_i8": unary(B.BATCH_TO_SPACE_ND, (8, 2, 2, 1), I8, Q(0.1, -77), (2, 3, 3, 1), consts=[
        np.array([2, 2], np.int32), np.array([[1, 0], [0, 1]], np.int32)]),
    "batch_to_space_i16_v4": unary(B.BATCH_TO_SPACE_ND, (4, 2, 2, 2), I16, Q(0.001, 0), (1, 4, 3, 2), consts=[
        np.array([2, 2], np.int32), np.array([[0, 0], [1, 0]], np.int32)]),
    "gather_nd_u8": one_op(B.GATHER_ND, [("x", (3, 4, 2), U8, Q(0.1, 3)),
                                         ("const", np.array([[2, 1], [0, 3], [1, 0]], np.int32))],
                           [((3, 2), U8, Q(0.1, 3))]),
    "gather_nd_i8": one_op(B.GATHER_ND, [("x", (3, 4), I8, Q(0.1, 3)), ("const", np.array([[2], [0]], np.int64))],
                           [((2, 4), I8, Q(0.1, 3))]),
    "gather_nd_i16_v3": one_op(B.GATHER_ND, [("x", (2, 3, 2), I16, Q(0.001, 0)),
                                             ("const", np.array([[[1, 2]], [[0, 0]]], np.int32))],
                               [((2, 1, 2), I16, Q(0.001, 0))]),
    "gather_nd_int16_indices_v4": one_op(B.GATHER_ND, [("x", (4, 2), I8, Q(0.1, 0)),
                                                       ("const", np.array([[3], [1]], np.int16))],
                                         [((2, 2), I8, Q(0.1, 0))]),
})


def resize(op, dtype, shape, size, q, **opts):
    table = OPT["ResizeBilinearOptions" if op == B.RESIZE_BILINEAR else "ResizeNearestNeighborOptions"]
    return unary(op, shape, dtype, Q(*q), (shape[0], size[0], size[1], shape[3]), consts=[np.array(size, np.int32)],
                 options=table(**opts))


RN = B.RESIZE_NEAREST_NEIGHBOR
CASES.update({
    "resize_nn_u8_up": resize(RN, U8, (1, 3, 4, 2), (7, 9), (0.1, 128)),
    "resize_nn_u8_align": resize(RN, U8, (1, 4, 5, 3), (7, 8), (0.1, 128), align_corners=True),
    "resize_nn_i8_half_pixel": resize(RN, I8, (2, 5, 4, 2), (3, 9), (0.1, 0), half_pixel_centers=True),
    "resize_nn_i8_down": resize(RN, I8, (1, 9, 8, 2), (4, 3), (0.1, 0)),
    "resize_nn_i16_v4": resize(RN, I16, (1, 3, 3, 2), (5, 6), (0.001, 0)),
    "resize_nn_i16_half_pixel": resize(RN, I16, (1, 4, 3, 1), (8, 7), (0.001, 0), half_pixel_centers=True),
})

RB = B.RESIZE_BILINEAR
CASES.update({
    "resize_bilinear_u8_up": resize(RB, U8, (1, 4, 5, 3), (8, 7), (0.05, 128)),
    "resize_bilinear_u8_2x": resize(RB, U8, (2, 3, 4, 2), (6, 8), (0.05, 128)),
    "resize_bilinear_u8_align": resize(RB, U8, (1, 4, 5, 2), (7, 9), (0.05, 0), align_corners=True),
    "resize_bilinear_u8_half_pixel": resize(RB, U8, (2, 5, 4, 3), (10, 8), (0.05, 255), half_pixel_centers=True),
    "resize_bilinear_u8_down_half_pixel": resize(RB, U8, (1, 9, 8, 2), (4, 3), (0.05, 0), half_pixel_centers=True),
    "resize_bilinear_u8_8x_kernel": resize(RB, U8, (1, 2, 3, 8), (16, 24), (0.05, 0), half_pixel_centers=True),
    "resize_bilinear_u8_8x_kernel_depth16": resize(RB, U8, (2, 3, 1, 16), (24, 8), (0.05, 0), half_pixel_centers=True),
    "resize_bilinear_u8_half_pixel_8x_depth3": resize(RB, U8, (1, 2, 2, 3), (16, 16), (0.05, 0),
                                                      half_pixel_centers=True),
    "resize_bilinear_i16_up_v4": resize(RB, I16, (1, 4, 5, 3), (8, 7), (0.001, 0)),
    "resize_bilinear_i16_align": resize(RB, I16, (1, 4, 5, 2), (7, 9), (0.001, 0), align_corners=True),
    "resize_bilinear_i16_half_pixel": resize(RB, I16, (2, 5, 4, 2), (10, 8), (0.001, 0), half_pixel_centers=True),
    "resize_bilinear_i16_down": resize(RB, I16, (1, 9, 8, 2), (4, 3), (0.001, 0)),
})


def l2norm(dtype, shape, zp, values=None):
    qo = Q(1.0 / 128.0, 128 if dtype == U8 else 0)
    return unary(B.L2_NORMALIZATION, shape, dtype, Q(0.05, zp), shape, qo=qo, options=OPT["L2NormOptions"](),
                 values=values)


L2_ROWS = np.array([[0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [127, 127, 127, 127, 127], [-128, 127, -128, 127, 0],
                    [3, -4, 0, 0, 0], [1, 1, 0, 0, 0]])
CASES.update({
    "l2norm_i8_v2": l2norm(I8, (4, 3, 17), 0),
    "l2norm_i8_zp": l2norm(I8, (6, 9), -77),
    "l2norm_i8_special_rows": l2norm(I8, (6, 5), 0, values=L2_ROWS.astype(np.int8)),
    "l2norm_i8_long_rows": l2norm(I8, (2, 700), 5),
    "l2norm_u8": l2norm(U8, (5, 11), 128),
    "l2norm_u8_zp0": l2norm(U8, (2, 3, 8), 0),
    "l2norm_u8_many_rows": l2norm(U8, (96, 7), 100),
    "l2norm_u8_special_rows": l2norm(U8, (6, 5), 128, values=(L2_ROWS + 128).astype(np.uint8)),
})


def arg(op, dtype, shape, axis, q=None, out_type=2, values=None):
    r = len(shape)
    a = axis + r if axis < 0 else axis
    table = OPT["ArgMaxOptions" if op == B.ARG_MAX else "ArgMinOptions"](output_type=out_type)
    odt = np.int32 if out_type == 2 else np.int64
    return unary(op, shape, dtype, q, shape[:a] + shape[a + 1:], qo=None, consts=[np.array([axis], np.int32)],
                 options=table, out_dtype=odt, values=values)


TIES = np.array([[3, 7, 7, 1, 7, 0], [5, 5, 2, 2, 9, 9], [0, 0, 0, 0, 0, 0]])
CASES.update({
    "arg_max_u8": arg(B.ARG_MAX, U8, (3, 7, 5), 1, Q(0.1, 128)),
    "arg_max_i8_v2": arg(B.ARG_MAX, I8, (4, 9), -1, Q(0.1, -3), out_type=4),
    "arg_max_i8_ties": arg(B.ARG_MAX, I8, (3, 6), 1, Q(0.1, 0), values=TIES.astype(np.int8)),
    "arg_min_u8_ties": arg(B.ARG_MIN, U8, (3, 6), 1, Q(0.1, 0), values=TIES.astype(np.uint8)),
    "arg_min_i8_v2": arg(B.ARG_MIN, I8, (5, 3, 2), 0, Q(0.1, 5)),
})


def reduce_case(op, dtype, shape, axes, keep, qi, qo="same", values=None):
    rank = len(shape)
    res = {a + rank if a < 0 else a for a in axes}
    out = tuple(1 if i in res else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i not in res)
    return unary(op, shape, dtype, Q(*qi) if qi else None, out, qo=Q(*qo) if qo not in ("same", None) else qo,
                 consts=[np.array(axes, np.int32)], options=OPT["ReducerOptions"](keep_dims=keep), values=values)


CASES.update({
    # MEAN: the 4-D HW algorithm (uint8/int8, keep_dims) and the reference one
    "mean_u8_hw_keep": reduce_case(B.MEAN, U8, (2, 5, 4, 19), [1, 2], True, (0.05, 128), (0.02, 3)),
    "mean_u8_hw_keep_same_q": reduce_case(B.MEAN, U8, (1, 6, 6, 40), [2, 1], True, (0.05, 128)),
    "mean_u8_hw_no_keep": reduce_case(B.MEAN, U8, (1, 3, 3, 40), [1, 2], False, (0.0235, 0), (0.0114, 255)),
    "mean_u8_last_axis": reduce_case(B.MEAN, U8, (2, 5, 12), [-1], False, (0.05, 128), (0.02, 7)),
    "mean_u8_same_q_axis1": reduce_case(B.MEAN, U8, (3, 7, 4), [1], True, (0.1, 3)),
    "mean_i8_negative_hw_axes": reduce_case(B.MEAN, I8, (1, 5, 6, 18), [1, -2], True, (0.05, -3), (0.03, 9)),
    "mean_i8_repeated_axis": reduce_case(B.MEAN, I8, (2, 4, 3, 17), [1, 2, 2], True, (0.05, -128), (0.02, 0)),
    "mean_i16_hw_keep_v3": reduce_case(B.MEAN, I16, (1, 5, 4, 7), [1, 2], True, (0.001, 0), (0.0004, 0)),
    "mean_i16_axes_0_2": reduce_case(B.MEAN, I16, (3, 4, 5), [0, 2], False, (0.002, 0), (0.0005, 0)),
    "mean_i16_all_axes": reduce_case(B.MEAN, I16, (3, 4, 5), [0, 1, 2], False, (0.002, 0), (0.00001, 0)),
    # SUM: float32 rescaling in TFLite's default kernel
    "sum_u8_axis1": reduce_case(B.SUM, U8, (2, 7, 3), [1], False, (0.05, 128), (0.3, 100)),
    "sum_u8_keep_two_axes": reduce_case(B.SUM, U8, (2, 3, 4, 5), [1, 3], True, (0.01, 255), (0.12, 0)),
    "sum_i8_v2": reduce_case(B.SUM, I8, (4, 9), [-1], False, (0.05, -3), (0.2, 11)),
    "sum_i8_all": reduce_case(B.SUM, I8, (3, 4, 2), [0, 1, 2], True, (0.05, 127), (0.5, -128)),
    "sum_i16": reduce_case(B.SUM, I16, (3, 6, 2), [1], False, (0.0005, 0), (0.002, 0)),
    "sum_i8_ties": reduce_case(B.SUM, I8, (4, 8), [1], False, (0.25, 0), (1.0, 0)),
    # REDUCE_MAX / REDUCE_MIN: raw integers, equal quantization required
    "reduce_max_u8": reduce_case(B.REDUCE_MAX, U8, (3, 4, 5), [1], False, (0.1, 7)),
    "reduce_max_i8_v2": reduce_case(B.REDUCE_MAX, I8, (2, 3, 4), [0, 2], True, (0.1, -128)),
    "reduce_max_i16_v3": reduce_case(B.REDUCE_MAX, I16, (3, 5), [-1], False, (0.001, 0)),
    "reduce_min_u8": reduce_case(B.REDUCE_MIN, U8, (3, 4, 5), [2, 0], False, (0.1, 255)),
    "reduce_min_i8_v2": reduce_case(B.REDUCE_MIN, I8, (2, 3, 4), [1], True, (0.1, 0)),
    "reduce_min_i16_v3": reduce_case(B.REDUCE_MIN, I16, (4, 3), [0], False, (0.001, 0)),
    # REDUCE_PROD: quantized int8/int16 rescale at every step
    "reduce_prod_i8": reduce_case(B.REDUCE_PROD, I8, (3, 4, 2), [1], False, (0.02, -3), (0.001, 5)),
    "reduce_prod_i8_two_axes": reduce_case(B.REDUCE_PROD, I8, (2, 3, 2, 2), [1, 3], True, (0.1, 0), (0.05, -128)),
    "reduce_prod_i8_one_value": reduce_case(B.REDUCE_PROD, I8, (3, 1, 4), [1], False, (0.05, 10), (0.1, -20)),
    "reduce_prod_i16": reduce_case(B.REDUCE_PROD, I16, (4, 3), [1], False, (0.001, 0), (0.000001, 0)),
    "reduce_prod_i8_unquantized": reduce_case(B.REDUCE_PROD, I8, (2, 3, 4), [1], False, None, None),
    "reduce_prod_u8_unquantized": reduce_case(B.REDUCE_PROD, U8, (2, 3, 4), [2], True, None, None),
    "reduce_prod_i8_many_rows": reduce_case(B.REDUCE_PROD, I8, (60, 3), [1], False, (0.02, 0), (0.0004, -7)),
    "reduce_prod_i8_long_rows": reduce_case(B.REDUCE_PROD, I8, (5, 9), [1], False, (0.01, 3), (1e-9, 0)),
    "sum_u8_many_rows": reduce_case(B.SUM, U8, (64, 9), [1], False, (0.05, 128), (0.15, 120)),
    "sum_i16_many_rows": reduce_case(B.SUM, I16, (64, 5), [1], False, (0.0005, 0), (0.0015, 0)),
})

# STRING tensors: the pure data-movement ops TFLite runs on strings (numpy object arrays of bytes)
CASES.update({
    "string_reshape": unary(B.RESHAPE, (2, 3), STR, None, (3, 2), consts=[np.array([3, 2], np.int32)]),
    "string_squeeze_v2": unary(B.SQUEEZE, (2, 1, 3), STR, None, (2, 3),
                               options=OPT["SqueezeOptions"](squeeze_dims=(1,))),
    "string_expand_dims": unary(B.EXPAND_DIMS, (2, 3), STR, None, (2, 3, 1), consts=[np.array([-1], np.int32)]),
    "string_tile_v2": unary(B.TILE, (2, 3), STR, None, (4, 6), consts=[np.array([2, 2], np.int32)]),
    "string_gather_nd_v2": one_op(B.GATHER_ND, [("x", (3, 2), STR, None),
                                                ("const", np.array([[2, 1], [0, 0]], np.int32))],
                                  [((2,), STR, None)]),
})


def build_case(name):
    builder, feed = CASES[name](name)
    return update_versions(builder.build()), feed

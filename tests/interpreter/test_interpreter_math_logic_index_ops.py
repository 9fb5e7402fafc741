"""Per-op checks for the second batch of builtin kernels (float32 and the int32/int64/bool variants).

Each case is a one-op model built with ModelBuilder, versioned by the workbench's own rules (as the
converter would), and run three ways:
  * our fast kernels vs our numpy references (where a kernel has a separate reference path);
  * our kernels vs ai-edge-litert's builtin kernels, in a child process: integer and bool outputs
    must be EXACTLY equal (dtype and shape too), float outputs within 1e-5 relative;
  * a few hand-worked values for the TFLite-specific semantics (FLOOR_MOD sign, ROUND ties to even,
    ARG_MAX ties, GATHER bounds, ...), and errors that must name the node.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers import litert_runner
from workbench import dump
from workbench.errors import UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    ArgMaxOptions,
    ArgMinOptions,
    BatchMatMulOptions,
    CumsumOptions,
    GatherOptions,
    GeluOptions,
    L2NormOptions,
    MirrorPadOptions,
    ModelBuilder,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    SpaceToDepthOptions,
    SplitOptions,
    SplitVOptions,
    TensorType,
    UnpackOptions,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.versioning import update_versions

F32, I32, I64, BOOL = np.float32, np.int32, np.int64, np.bool_
RTOL = 1e-5


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def f32(rng, shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def ints(rng, shape, lo=-20, hi=20, dtype=I32):
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def bools(rng, shape):
    return rng.integers(0, 2, shape).astype(bool)


# ------------------------------------------------------------------------------------------------
# the generic one-op case: ins are ("x", array) model inputs, ("c", array) constants, ("-",) absent


def X(a):
    return ("x", np.asarray(a))


def C(a, dtype=None):
    return ("c", np.asarray(a, dtype))


def one_op(op, ins, outs, options=None):
    """outs: list of (shape, dtype) as declared in the model (litert and we recompute them)."""
    b = ModelBuilder()
    ids, feed = [], {}
    for k, spec in enumerate(ins):
        if spec[0] == "-":
            ids.append(-1)
        elif spec[0] == "x":
            ids.append(b.input(f"in{k}", spec[1].shape, spec[1].dtype))
            feed[f"in{k}"] = spec[1]
        else:
            arr = np.array(spec[1])
            if arr.ndim == 0:   # ModelBuilder.constant would make a scalar 1-D
                le = arr.astype(arr.dtype.newbyteorder("<"))
                ids.append(b.tensor(f"c{k}", (), arr.dtype, buffer=b.add_buffer(le.tobytes())))
            else:
                ids.append(b.constant(f"c{k}", arr))
    out_ids = [b.tensor(f"out{k}", shape, dtype) for k, (shape, dtype) in enumerate(outs)]
    b.op(op, ids, out_ids, options)
    b.output(*out_ids)
    return b, feed


CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


def add(name, fn):
    CASES[name] = fn


def unary_case(op, shape, dtype=F32, lo=-3.0, hi=3.0, options=None, out_dtype=None):
    def build(rng):
        if dtype == F32:
            x = f32(rng, shape, lo, hi)
        elif dtype == BOOL:
            x = bools(rng, shape)
        else:
            x = ints(rng, shape, int(lo), int(hi), dtype)
        return one_op(op, [X(x)], [(shape, out_dtype or dtype)], options)
    return build


def binary_case(op, sa, sb, dtype=F32, out_dtype=None, lo=-3.0, hi=3.0, b_lo=None, b_hi=None, equal_some=False,
                options=None):
    def build(rng):
        b_lo_, b_hi_ = (lo if b_lo is None else b_lo), (hi if b_hi is None else b_hi)
        if dtype == F32:
            a, b = f32(rng, sa, lo, hi), f32(rng, sb, b_lo_, b_hi_)
        elif dtype == BOOL:
            a, b = bools(rng, sa), bools(rng, sb)
        else:
            a, b = ints(rng, sa, int(lo), int(hi), dtype), ints(rng, sb, int(b_lo_), int(b_hi_), dtype)
        if equal_some and a.shape == b.shape:     # make comparisons meet ties
            mask = rng.integers(0, 2, a.shape).astype(bool)
            b = np.where(mask, a, b).astype(b.dtype)
        out = tuple(np.broadcast_shapes(sa, sb))
        return one_op(op, [X(a), X(b)], [(out, out_dtype or dtype)], options)
    return build


# -- elementwise unary -------------------------------------------------------------------------
for _op, _lo, _hi in [(B.SQRT, 0.0, 9.0), (B.RSQRT, 0.05, 9.0), (B.EXP, -5.0, 5.0), (B.LOG, 0.01, 50.0),
                      (B.ABS, -3.0, 3.0), (B.NEG, -3.0, 3.0), (B.SQUARE, -3.0, 3.0), (B.FLOOR, -4.0, 4.0),
                      (B.CEIL, -4.0, 4.0), (B.SIN, -7.0, 7.0), (B.COS, -7.0, 7.0), (B.RELU_N1_TO_1, -3.0, 3.0),
                      (B.RELU_0_TO_1, -1.0, 2.0), (B.ELU, -4.0, 3.0), (B.LOG_SOFTMAX, -6.0, 6.0),
                      (B.L2_NORMALIZATION, -2.0, 2.0)]:
    add(f"{_op.name.lower()}_f32", unary_case(_op, (2, 3, 5), lo=_lo, hi=_hi))
add("sqrt_rank1", unary_case(B.SQRT, (7,), lo=0.0, hi=100.0))
add("exp_rank4", unary_case(B.EXP, (1, 2, 3, 4), lo=-20.0, hi=20.0))
add("abs_int32_v5", unary_case(B.ABS, (3, 4), I32, lo=-1000, hi=1000))
add("neg_int32", unary_case(B.NEG, (3, 4), I32, lo=-1000, hi=1000))
add("neg_int64", unary_case(B.NEG, (5,), I64, lo=-10 ** 6, hi=10 ** 6))
add("logical_not", unary_case(B.LOGICAL_NOT, (2, 6), BOOL))
add("log_softmax_rank1", unary_case(B.LOG_SOFTMAX, (9,), lo=-30.0, hi=30.0))
add("l2_normalization_4d", unary_case(B.L2_NORMALIZATION, (1, 2, 3, 8), options=L2NormOptions()))
add("gelu_exact", unary_case(B.GELU, (3, 7), lo=-5.0, hi=5.0, options=GeluOptions(approximate=False)))
add("gelu_approximate", unary_case(B.GELU, (3, 7), lo=-5.0, hi=5.0, options=GeluOptions(approximate=True)))
add("gelu_no_options", unary_case(B.GELU, (2, 4), lo=-3.0, hi=3.0))
add("zeros_like_f32", unary_case(B.ZEROS_LIKE, (2, 3)))
add("zeros_like_int64", unary_case(B.ZEROS_LIKE, (4,), I64))


@case("round_ties_even")
def _(rng):
    x = np.concatenate([np.arange(-4.5, 5.0, 0.5), f32(rng, (11,), -9, 9)]).astype(F32).reshape(5, 6)
    return one_op(B.ROUND, [X(x)], [(x.shape, F32)])


# -- elementwise binary ------------------------------------------------------------------------
add("maximum_broadcast", binary_case(B.MAXIMUM, (2, 3, 4), (4,)))
add("maximum_int32", binary_case(B.MAXIMUM, (3, 4), (3, 4), I32, equal_some=True))
add("maximum_rank5_v3", binary_case(B.MAXIMUM, (2, 1, 3, 1, 2), (1, 2, 1, 2, 1)))
add("minimum_broadcast", binary_case(B.MINIMUM, (3, 1), (1, 5)))
add("minimum_int64", binary_case(B.MINIMUM, (6,), (6,), I64))
add("squared_difference", binary_case(B.SQUARED_DIFFERENCE, (2, 3), (3,)))
add("squared_difference_int32", binary_case(B.SQUARED_DIFFERENCE, (4, 3), (4, 3), I32, lo=-100, hi=100))
add("pow_f32", binary_case(B.POW, (2, 5), (2, 5), lo=0.1, hi=3.0, b_lo=-2.0, b_hi=3.0))
add("pow_int32", binary_case(B.POW, (3, 4), (4,), I32, lo=-5, hi=5, b_lo=0, b_hi=6))
add("floor_div_f32_v2", binary_case(B.FLOOR_DIV, (3, 4), (4,), lo=-9, hi=9, b_lo=0.5, b_hi=3.0))
add("floor_div_f32_neg", binary_case(B.FLOOR_DIV, (3, 4), (3, 4), lo=-9, hi=9, b_lo=-3.0, b_hi=-0.5))
add("floor_div_int32", binary_case(B.FLOOR_DIV, (3, 5), (5,), I32, lo=-50, hi=50, b_lo=1, b_hi=7))
add("floor_div_int32_neg", binary_case(B.FLOOR_DIV, (3, 5), (3, 5), I32, lo=-50, hi=50, b_lo=-7, b_hi=-1))
add("floor_mod_f32", binary_case(B.FLOOR_MOD, (3, 4), (3, 4), lo=-9, hi=9, b_lo=-3.0, b_hi=3.0))
add("floor_mod_int32", binary_case(B.FLOOR_MOD, (4, 5), (5,), I32, lo=-50, hi=50, b_lo=1, b_hi=7))
add("floor_mod_int32_neg", binary_case(B.FLOOR_MOD, (4, 5), (4, 5), I32, lo=-50, hi=50, b_lo=-7, b_hi=-1))
add("floor_mod_int64", binary_case(B.FLOOR_MOD, (6,), (6,), I64, lo=-50, hi=50, b_lo=-9, b_hi=-2))
for _op in (B.EQUAL, B.NOT_EQUAL, B.LESS, B.LESS_EQUAL, B.GREATER, B.GREATER_EQUAL):
    _n = _op.name.lower()
    add(f"{_n}_f32", binary_case(_op, (3, 4), (3, 4), out_dtype=BOOL, equal_some=True))
    add(f"{_n}_broadcast", binary_case(_op, (2, 3, 1), (4,), out_dtype=BOOL))
    add(f"{_n}_int32", binary_case(_op, (3, 4), (3, 4), I32, out_dtype=BOOL, lo=-3, hi=3))
    add(f"{_n}_int64", binary_case(_op, (5,), (1,), I64, out_dtype=BOOL, lo=-3, hi=3))
add("equal_bool", binary_case(B.EQUAL, (2, 3), (2, 3), BOOL, out_dtype=BOOL))
add("not_equal_bool", binary_case(B.NOT_EQUAL, (2, 3), (3,), BOOL, out_dtype=BOOL))
add("logical_and", binary_case(B.LOGICAL_AND, (2, 3), (2, 3), BOOL))
add("logical_and_broadcast", binary_case(B.LOGICAL_AND, (2, 1, 3), (4, 1), BOOL))
add("logical_or", binary_case(B.LOGICAL_OR, (3, 4), (4,), BOOL))


# -- pooling -----------------------------------------------------------------------------------
def l2_pool(x_shape, f, s, padding, act=Act.NONE):
    def build(rng):
        def size(n, k, st):
            return -(-n // st) if padding == Padding.SAME else (n - k) // st + 1
        out = (x_shape[0], size(x_shape[1], f[0], s[0]), size(x_shape[2], f[1], s[1]), x_shape[3])
        return one_op(B.L2_POOL_2D, [X(f32(rng, x_shape))], [(out, F32)],
                      Pool2DOptions(padding=padding, stride_h=s[0], stride_w=s[1], filter_height=f[0],
                                    filter_width=f[1], fused_activation_function=act))
    return build


add("l2_pool_valid", l2_pool((1, 6, 6, 3), (2, 2), (2, 2), Padding.VALID))
add("l2_pool_same_edges", l2_pool((2, 7, 5, 2), (3, 3), (2, 2), Padding.SAME))
add("l2_pool_relu6", l2_pool((1, 5, 5, 2), (2, 3), (1, 2), Padding.SAME, Act.RELU_N1_TO_1))


# -- reductions --------------------------------------------------------------------------------
def reduce_case(op, shape, axes, keep, dtype=F32, lo=-3.0, hi=3.0):
    def build(rng):
        if dtype == BOOL:
            x = rng.uniform(0, 1, shape) < 0.8 if op == B.REDUCE_ALL else rng.uniform(0, 1, shape) < 0.2
        elif dtype == F32:
            x = f32(rng, shape, lo, hi)
        else:
            x = ints(rng, shape, int(lo), int(hi), dtype)
        r = len(shape)
        ax = {a + r if a < 0 else a for a in axes}
        out = tuple(1 if i in ax else d for i, d in enumerate(shape)) if keep else \
            tuple(d for i, d in enumerate(shape) if i not in ax)
        return one_op(op, [X(x), C(np.asarray(axes, I32))], [(out, dtype)], ReducerOptions(keep_dims=keep))
    return build


for _op, _dt in [(B.SUM, F32), (B.REDUCE_MAX, F32), (B.REDUCE_MIN, F32), (B.REDUCE_PROD, F32),
                 (B.REDUCE_ANY, BOOL), (B.REDUCE_ALL, BOOL)]:
    _n = _op.name.lower()
    _lo, _hi = (0.5, 1.5) if _op == B.REDUCE_PROD else (-3.0, 3.0)
    add(f"{_n}_keep", reduce_case(_op, (2, 3, 4), [1], True, _dt, _lo, _hi))
    add(f"{_n}_two_axes", reduce_case(_op, (2, 3, 4), [0, 2], False, _dt, _lo, _hi))
    add(f"{_n}_negative_dup_axes", reduce_case(_op, (3, 2, 5), [-1, 2, 0], False, _dt, _lo, _hi))
    add(f"{_n}_all_axes_keep", reduce_case(_op, (2, 3), [0, 1], True, _dt, _lo, _hi))
for _op in (B.SUM, B.REDUCE_MAX, B.REDUCE_MIN, B.REDUCE_PROD):
    add(f"{_op.name.lower()}_int32", reduce_case(_op, (3, 4), [-1], False, I32, -5, 5))
add("sum_int64", reduce_case(B.SUM, (2, 5), [0], True, I64, -10 ** 9, 10 ** 9))


# -- slicing, splitting, gathering --------------------------------------------------------------
def slice_case(shape, begin, size, out, dtype=F32, idx_dtype=I32):
    def build(rng):
        x = f32(rng, shape) if dtype == F32 else (bools(rng, shape) if dtype == BOOL else ints(rng, shape, dtype=dtype))
        return one_op(B.SLICE, [X(x), C(begin, idx_dtype), C(size, idx_dtype)], [(out, dtype)])
    return build


add("slice_2d", slice_case((4, 6), [1, 2], [2, 3], (2, 3)))
add("slice_minus1", slice_case((3, 4, 5), [0, 1, 2], [-1, 2, -1], (3, 2, 3)))
add("slice_int32_int64_begin", slice_case((5, 4), [2, 0], [3, 4], (3, 4), I32, I64))
add("slice_bool", slice_case((4, 4), [1, 1], [2, 2], (2, 2), BOOL))
add("slice_rank5_v5", slice_case((2, 3, 2, 4, 3), [1, 0, 1, 1, 0], [1, 2, 1, 2, 3], (1, 2, 1, 2, 3)))


@case("split_axis1")
def _(rng):
    return one_op(B.SPLIT, [C(np.asarray(1, I32)), X(f32(rng, (2, 6, 3)))], [((2, 2, 3), F32)] * 3,
                  SplitOptions(num_splits=3))


@case("split_negative_axis_int32_v3")
def _(rng):
    return one_op(B.SPLIT, [C(np.asarray(-1, I32)), X(ints(rng, (3, 4)))], [((3, 2), I32)] * 2,
                  SplitOptions(num_splits=2))


@case("split_v_minus1")
def _(rng):
    return one_op(B.SPLIT_V, [X(f32(rng, (7, 3))), C([2, -1, 1], I32), C(np.asarray(0, I32))],
                  [((2, 3), F32), ((4, 3), F32), ((1, 3), F32)], SplitVOptions(num_splits=3))


@case("split_v_axis2")
def _(rng):
    return one_op(B.SPLIT_V, [X(f32(rng, (2, 3, 5))), C([3, 2], I32), C(np.asarray(2, I32))],
                  [((2, 3, 3), F32), ((2, 3, 2), F32)], SplitVOptions(num_splits=2))


@case("unpack_axis0")
def _(rng):
    return one_op(B.UNPACK, [X(f32(rng, (3, 2, 4)))], [((2, 4), F32)] * 3, UnpackOptions(num=3, axis=0))


@case("unpack_axis_neg_int32")
def _(rng):
    return one_op(B.UNPACK, [X(ints(rng, (2, 3)))], [((2,), I32)] * 3, UnpackOptions(num=3, axis=-1))


@case("unpack_bool_v3")
def _(rng):
    return one_op(B.UNPACK, [X(bools(rng, (2, 2)))], [((2,), BOOL)] * 2, UnpackOptions(num=2, axis=1))


def expand_case(shape, axis, out):
    return lambda rng: one_op(B.EXPAND_DIMS, [X(f32(rng, shape)), C([axis], I32)], [(out, F32)])


add("expand_dims_0", expand_case((3, 4), 0, (1, 3, 4)))
add("expand_dims_end", expand_case((3, 4), 2, (3, 4, 1)))
add("expand_dims_neg", expand_case((3, 4), -1, (3, 4, 1)))


def gather_case(params_shape, idx, axis=0, batch_dims=0, dtype=F32, idx_dtype=I32, options=True, const_idx=False):
    def build(rng):
        p = f32(rng, params_shape) if dtype == F32 else (
            bools(rng, params_shape) if dtype == BOOL else ints(rng, params_shape, dtype=dtype))
        i = np.asarray(idx, idx_dtype)
        ax = axis + len(params_shape) if axis < 0 else axis
        bd = batch_dims + i.ndim if batch_dims < 0 else batch_dims
        out = params_shape[:ax] + i.shape[bd:] + params_shape[ax + 1:]
        opts = GatherOptions(axis=axis, batch_dims=batch_dims) if options else None
        return one_op(B.GATHER, [X(p), C(i) if const_idx else X(i)], [(out, dtype)], opts)
    return build


add("gather_axis0", gather_case((5, 3), [4, 0, 2, 2]))
add("gather_axis1_2d_indices", gather_case((2, 6, 3), [[5, 1], [0, 3], [2, 2]], axis=1))
add("gather_axis_neg", gather_case((3, 4), [3, 0], axis=-1))
add("gather_int64_indices_const", gather_case((4, 2), [3, 1, 0], idx_dtype=I64, const_idx=True))
add("gather_int32_params", gather_case((6,), [[5, 0], [1, 1]], dtype=I32))
add("gather_bool_v3", gather_case((4, 2), [1, 3], dtype=BOOL))
add("gather_scalar_index", gather_case((4, 3), np.int32(2), axis=0))
add("gather_batch_dims_v5", gather_case((2, 5, 3), [[4, 0, 1], [2, 2, 3]], axis=1, batch_dims=1))
add("gather_batch_dims_axis2", gather_case((2, 3, 4, 2), [[1, 3], [0, 0]], axis=2, batch_dims=1))
add("gather_batch_dims_neg", gather_case((2, 3, 4), [[2, 1], [0, 3], [1, 1]][:2], axis=2, batch_dims=-1))
add("gather_no_options", gather_case((3, 2), [2, 0], options=False))


def gather_nd_case(params_shape, idx, dtype=F32, idx_dtype=I32):
    def build(rng):
        p = f32(rng, params_shape) if dtype == F32 else (
            bools(rng, params_shape) if dtype == BOOL else ints(rng, params_shape, dtype=dtype))
        i = np.asarray(idx, idx_dtype)
        out = i.shape[:-1] + params_shape[i.shape[-1]:]
        return one_op(B.GATHER_ND, [X(p), X(i)], [(out, dtype)])
    return build


add("gather_nd_full", gather_nd_case((3, 4), [[0, 1], [2, 3], [1, 0]]))
add("gather_nd_slices", gather_nd_case((3, 4, 2), [[2], [0]]))
add("gather_nd_batched_int64", gather_nd_case((2, 3, 4), [[[1, 2], [0, 0]], [[1, 1], [0, 2]]], idx_dtype=I64))
add("gather_nd_int32", gather_nd_case((4, 3), [[3, 2], [0, 0]], dtype=I32))
add("gather_nd_bool_v5", gather_nd_case((2, 3), [[1], [0]], dtype=BOOL))


# -- matrix and layout ops --------------------------------------------------------------------
def batch_matmul(sa, sb, adj_x=False, adj_y=False, const_b=False, options=True):
    def build(rng):
        a, b = f32(rng, sa), f32(rng, sb)
        am = (sa[-1], sa[-2]) if adj_x else (sa[-2], sa[-1])
        bm = (sb[-1], sb[-2]) if adj_y else (sb[-2], sb[-1])
        out = tuple(np.broadcast_shapes(sa[:-2], sb[:-2])) + (am[0], bm[1])
        opts = BatchMatMulOptions(adj_x=adj_x, adj_y=adj_y) if options else None
        return one_op(B.BATCH_MATMUL, [X(a), C(b) if const_b else X(b)], [(out, F32)], opts)
    return build


add("batch_matmul_2d", batch_matmul((3, 4), (4, 5)))
add("batch_matmul_batched", batch_matmul((2, 3, 4), (2, 4, 2)))
add("batch_matmul_broadcast", batch_matmul((2, 1, 3, 4), (3, 4, 5)))
add("batch_matmul_adj_x", batch_matmul((2, 4, 3), (2, 4, 5), adj_x=True))
add("batch_matmul_adj_y_const", batch_matmul((3, 4), (2, 5, 4), adj_y=True, const_b=True))
add("batch_matmul_adj_both", batch_matmul((1, 2, 4, 3), (2, 1, 5, 4), adj_x=True, adj_y=True))
add("batch_matmul_no_options", batch_matmul((2, 3), (3, 2), options=False))


def space_to_depth(shape, b, dtype=F32):
    def build(rng):
        x = f32(rng, shape) if dtype == F32 else ints(rng, shape, dtype=dtype)
        n, h, w, c = shape
        return one_op(B.SPACE_TO_DEPTH, [X(x)], [((n, h // b, w // b, c * b * b), dtype)],
                      SpaceToDepthOptions(block_size=b))
    return build


add("space_to_depth_2", space_to_depth((1, 4, 6, 3), 2))
add("space_to_depth_3_int32", space_to_depth((2, 6, 3, 2), 3, I32))


def tile_case(shape, mult, dtype=F32):
    def build(rng):
        x = f32(rng, shape) if dtype == F32 else (bools(rng, shape) if dtype == BOOL else ints(rng, shape, dtype=dtype))
        return one_op(B.TILE, [X(x), C(mult, I32)], [(tuple(s * m for s, m in zip(shape, mult)), dtype)])
    return build


add("tile_2d", tile_case((2, 3), [2, 3]))
add("tile_3d_int64", tile_case((1, 2, 2), [3, 1, 2], I64))
add("tile_bool", tile_case((2,), [3], BOOL))


def mirror_pad(shape, pads, mode):
    def build(rng):
        out = tuple(s + a + b for s, (a, b) in zip(shape, pads))
        return one_op(B.MIRROR_PAD, [X(f32(rng, shape)), C(pads, I32)], [(out, F32)], MirrorPadOptions(mode=mode))
    return build


add("mirror_pad_reflect", mirror_pad((3, 4), [[2, 1], [1, 3]], 0))
add("mirror_pad_symmetric", mirror_pad((3, 4), [[3, 1], [0, 4]], 1))
add("mirror_pad_reflect_4d", mirror_pad((1, 4, 5, 2), [[0, 0], [1, 2], [2, 2], [0, 0]], 0))


def reverse_case(shape, axis, dtype=F32):
    def build(rng):
        x = f32(rng, shape) if dtype == F32 else (bools(rng, shape) if dtype == BOOL else ints(rng, shape, dtype=dtype))
        return one_op(B.REVERSE_V2, [X(x), C([axis], I32)], [(shape, dtype)])
    return build


add("reverse_axis0", reverse_case((3, 4), 0))
add("reverse_axis_neg_int32", reverse_case((2, 3, 4), -1, I32))
add("reverse_bool_v2", reverse_case((2, 5), 1, BOOL))


def broadcast_to(shape, target, dtype=F32):
    def build(rng):
        x = f32(rng, shape) if dtype == F32 else ints(rng, shape, dtype=dtype)
        return one_op(B.BROADCAST_TO, [X(x), C(target, I32)], [(tuple(target), dtype)])
    return build


add("broadcast_to_rank_up", broadcast_to((3,), [2, 4, 3]))
add("broadcast_to_ones", broadcast_to((2, 1, 3), [2, 5, 3]))
add("broadcast_to_int32", broadcast_to((1, 2), [3, 2], I32))


def s2b(shape, block, pads):
    def build(rng):
        m = len(block)
        out = [shape[0] * int(np.prod(block))] + [(shape[1 + i] + sum(pads[i])) // block[i] for i in range(m)]
        out += list(shape[1 + m:])
        return one_op(B.SPACE_TO_BATCH_ND, [X(f32(rng, shape)), C(block, I32), C(pads, I32)], [(tuple(out), F32)])
    return build


def b2s(shape, block, crops):
    def build(rng):
        m = len(block)
        out = [shape[0] // int(np.prod(block))] + [shape[1 + i] * block[i] - sum(crops[i]) for i in range(m)]
        out += list(shape[1 + m:])
        return one_op(B.BATCH_TO_SPACE_ND, [X(f32(rng, shape)), C(block, I32), C(crops, I32)], [(tuple(out), F32)])
    return build


add("space_to_batch_nd_2x2", s2b((1, 4, 4, 2), [2, 2], [[0, 0], [0, 0]]))
add("space_to_batch_nd_padded", s2b((2, 3, 5, 1), [2, 3], [[1, 0], [0, 1]]))
add("space_to_batch_nd_rank3_v3", s2b((2, 5, 3), [2], [[1, 0]]))
add("batch_to_space_nd_2x2", b2s((4, 2, 2, 3), [2, 2], [[0, 0], [0, 0]]))
add("batch_to_space_nd_cropped", b2s((12, 2, 2, 1), [2, 3], [[1, 0], [0, 2]]))
add("batch_to_space_nd_rank3_v3", b2s((4, 3, 2), [2], [[0, 1]]))


# -- cast, arg max/min, select, fill, range, cumsum, where ---------------------------------------
def cast_case(src, dst, shape=(3, 5)):
    def build(rng):
        if src == BOOL:
            x = bools(rng, shape)
        elif np.dtype(src).kind == "f":
            x = rng.uniform(-100, 100, shape).astype(src)
            if np.dtype(dst).kind == "u":
                x = np.abs(x)            # negative float -> unsigned is undefined in C
            x.reshape(-1)[:3] = [0.0, 2.5, -0.0]
        else:
            info = np.iinfo(src)
            x = rng.integers(max(info.min, -300), min(info.max, 300), shape, endpoint=True).astype(src)
            x.reshape(-1)[0] = 0
        return one_op(B.CAST, [X(x)], [(shape, dst)])
    return build


for _src, _dst in [(F32, I32), (I32, F32), (F32, I64), (I64, F32), (I32, I64), (I64, I32), (F32, BOOL),
                   (BOOL, F32), (I32, BOOL), (BOOL, I32), (np.uint8, F32), (F32, np.uint8), (I32, np.uint8),
                   (np.int16, I32), (I32, np.int16), (F32, np.int16), (np.uint8, I32), (BOOL, I64),
                   (np.int8, F32), (I32, np.int8), (np.uint32, I32), (I32, np.uint32), (np.uint16, I32),
                   (F32, np.float64), (np.float64, F32), (np.float16, F32), (F32, np.float16), (I64, BOOL)]:
    add(f"cast_{np.dtype(_src).name}_to_{np.dtype(_dst).name}", cast_case(_src, _dst))


def arg_case(op, shape, axis, out_type=TensorType.INT32, dtype=F32, ties=False, axis_dtype=I32):
    def build(rng):
        if dtype == F32:
            x = np.round(f32(rng, shape, -2, 2)) if ties else f32(rng, shape)
        elif dtype == BOOL:
            x = bools(rng, shape)
        else:
            x = ints(rng, shape, -3, 3, dtype)
        r = len(shape)
        a = axis + r if axis < 0 else axis
        out = shape[:a] + shape[a + 1:]
        opts = (ArgMaxOptions if op == B.ARG_MAX else ArgMinOptions)(output_type=out_type)
        odt = I32 if out_type == TensorType.INT32 else I64
        return one_op(op, [X(x), C([axis], axis_dtype)], [(out, odt)], opts)
    return build


for _op in (B.ARG_MAX, B.ARG_MIN):
    _n = _op.name.lower()
    add(f"{_n}_last", arg_case(_op, (3, 5), -1))
    add(f"{_n}_axis0_int64_out", arg_case(_op, (4, 3, 2), 0, TensorType.INT64))
    add(f"{_n}_ties_first_index", arg_case(_op, (4, 9), 1, ties=True))
    add(f"{_n}_int32_ties", arg_case(_op, (3, 8), 1, dtype=I32))
    add(f"{_n}_bool_v3", arg_case(_op, (3, 4), 1, dtype=BOOL))
    add(f"{_n}_int64_axis", arg_case(_op, (2, 6), 1, axis_dtype=I64))


def select_case(op, sc, sx, sy, dtype=F32):
    def build(rng):
        def val(s):
            return f32(rng, s) if dtype == F32 else (bools(rng, s) if dtype == BOOL else ints(rng, s, dtype=dtype))
        out = tuple(np.broadcast_shapes(sc, sx, sy)) if op == B.SELECT_V2 else sx
        return one_op(op, [X(bools(rng, sc)), X(val(sx)), X(val(sy))], [(out, dtype)])
    return build


add("select_same_shape", select_case(B.SELECT, (2, 3), (2, 3), (2, 3)))
add("select_rank1_condition", select_case(B.SELECT, (3,), (3, 2, 2), (3, 2, 2)))
add("select_int32", select_case(B.SELECT, (4,), (4,), (4,), I32))
add("select_rank5_v3", select_case(B.SELECT, (2, 1, 2, 1, 2), (2, 1, 2, 1, 2), (2, 1, 2, 1, 2)))
add("select_v2_broadcast", select_case(B.SELECT_V2, (2, 1, 3), (1, 4, 1), (3,)))
add("select_v2_scalar_cond", select_case(B.SELECT_V2, (), (2, 3), (2, 3)))
add("select_v2_int64", select_case(B.SELECT_V2, (3, 1), (3, 4), (1, 4), I64))
add("select_v2_bool", select_case(B.SELECT_V2, (2, 2), (2, 2), (2,), BOOL))


def fill_case(dims, value, runtime_value=True):
    def build(rng):
        v = np.asarray(value)
        return one_op(B.FILL, [C(dims, I32), X(v) if runtime_value else C(v)], [(tuple(dims), v.dtype)])
    return build


add("fill_f32", fill_case([2, 3], np.float32(1.5)))
add("fill_int32_const", fill_case([4], np.int32(-7), runtime_value=False))
add("fill_int64", fill_case([2, 1, 2], np.int64(10 ** 10)))
add("fill_bool_v2", fill_case([3, 2], np.bool_(True)))


def range_case(start, limit, delta, dtype):
    def build(rng):
        ins = [C(np.asarray(v, dtype)) for v in (start, limit, delta)]
        if np.dtype(dtype).kind == "f":
            n = int(np.ceil(abs((limit - start) / delta)))
        else:
            n = (abs(limit - start) + abs(delta) - 1) // abs(delta)
        return one_op(B.RANGE, ins, [((n,), dtype)])
    return build


add("range_int32", range_case(2, 17, 3, I32))
add("range_int32_negative_delta", range_case(10, -3, -4, I32))
add("range_f32", range_case(0.5, 3.2, 0.3, F32))
add("range_f32_negative", range_case(1.0, -2.0, -0.7, F32))
add("range_int64_v2", range_case(-5, 5, 2, I64))


def cumsum_case(shape, axis, exclusive=False, reverse=False, dtype=F32):
    def build(rng):
        x = f32(rng, shape) if dtype == F32 else ints(rng, shape, dtype=dtype)
        return one_op(B.CUMSUM, [X(x), C(np.asarray(axis, I32))], [(shape, dtype)],
                      CumsumOptions(exclusive=exclusive, reverse=reverse))
    return build


add("cumsum_axis0", cumsum_case((4, 3), 0))
add("cumsum_exclusive", cumsum_case((2, 5), 1, exclusive=True))
add("cumsum_reverse", cumsum_case((3, 4), -1, reverse=True))
add("cumsum_exclusive_reverse_int32", cumsum_case((2, 3, 4), 1, True, True, I32))
add("cumsum_int64", cumsum_case((6,), 0, dtype=I64))


@case("where_bool_const")
def _(rng):
    cond = bools(rng, (3, 4))
    return one_op(B.WHERE, [C(cond)], [((int(cond.sum()), 2), I64)])


@case("where_float_v2")
def _(rng):
    v = np.where(rng.uniform(0, 1, (2, 3, 2)) < 0.5, 0, f32(rng, (2, 3, 2))).astype(F32)
    return one_op(B.WHERE, [C(v)], [((int(np.count_nonzero(v)), 3), I64)])


@case("where_int32_v2")
def _(rng):
    v = ints(rng, (7,), -1, 1)
    return one_op(B.WHERE, [C(v)], [((int(np.count_nonzero(v)), 1), I64)])


# ------------------------------------------------------------------------------------------------
# running


def build_case(name):
    builder, feed = CASES[name](rng_for(name))
    return update_versions(builder.build()), feed


def run_ours(model, feed, reference=False):
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in feed.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]


def assert_same(ours, theirs, what=""):
    assert len(ours) == len(theirs), what
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, f"{what} output {k}: shape {a.shape} vs {b.shape}"
        assert a.dtype == b.dtype, f"{what} output {k}: dtype {a.dtype} vs {b.dtype}"
        if a.dtype.kind in "fc":
            scale = float(np.nanmax(np.abs(b))) if b.size and not np.isnan(b).all() else 1.0
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * 0.1 * max(scale, 1.0), equal_nan=True,
                                       err_msg=f"{what} output {k}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{what} output {k}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_matches_reference_path(name):
    model, feed = build_case(name)
    assert_same(run_ours(model, feed), run_ours(model, feed, reference=True), name)


@pytest.fixture(scope="session")
def litert_more(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_more_ops"), CASES, build_case, workers=8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_litert(name, litert_more):
    result = litert_more[name]
    assert result.ok, result.describe()
    model, feed = build_case(name)
    theirs = [result.outputs[f"output_{k}"] for k in range(len(result.outputs))]
    assert_same(run_ours(model, feed), theirs, name)


def test_every_new_op_has_a_case():
    ops = {"L2_POOL_2D", "LOG_SOFTMAX", "RELU_N1_TO_1", "RELU_0_TO_1", "ELU", "GELU", "MIRROR_PAD", "SUM",
           "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "REDUCE_ANY", "REDUCE_ALL", "SLICE", "SPLIT", "SPLIT_V",
           "UNPACK", "EXPAND_DIMS", "GATHER", "GATHER_ND", "BATCH_MATMUL", "MAXIMUM", "MINIMUM",
           "L2_NORMALIZATION", "SPACE_TO_DEPTH", "TILE", "CAST", "SQRT", "RSQRT", "EXP", "LOG", "ABS", "NEG",
           "SQUARE", "SQUARED_DIFFERENCE", "FLOOR", "CEIL", "ROUND", "SIN", "COS", "POW", "FLOOR_DIV",
           "FLOOR_MOD", "ARG_MAX", "ARG_MIN", "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER",
           "GREATER_EQUAL", "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "SELECT", "SELECT_V2", "FILL", "RANGE",
           "CUMSUM", "ZEROS_LIKE", "BROADCAST_TO", "WHERE", "REVERSE_V2", "SPACE_TO_BATCH_ND",
           "BATCH_TO_SPACE_ND"}
    seen = set()
    for name in CASES:
        model, _ = build_case(name)
        seen |= {B(c.builtin_code).name for c in model.operator_codes}
    assert ops <= seen, sorted(ops - seen)


# ------------------------------------------------------------------------------------------------
# TFLite semantics where numpy differs, by hand


def run_one(op, ins, outs, options=None):
    builder, feed = one_op(op, ins, outs, options)
    return run_ours(update_versions(builder.build()), feed)


def test_floor_mod_takes_the_sign_of_the_divisor():
    a = np.array([7, -7, 7, -7, 6], I32)
    b = np.array([3, 3, -3, -3, -3], I32)
    out, = run_one(B.FLOOR_MOD, [X(a), X(b)], [((5,), I32)])
    assert out.tolist() == [1, 2, -2, -1, 0]
    af = np.array([7.5, -7.5, 7.5, -7.5], F32)
    bf = np.array([2.0, 2.0, -2.0, -2.0], F32)
    out, = run_one(B.FLOOR_MOD, [X(af), X(bf)], [((4,), F32)])
    assert out.tolist() == [1.5, 0.5, -0.5, -1.5]


def test_floor_div_rounds_toward_minus_infinity():
    out, = run_one(B.FLOOR_DIV, [X(np.array([7, -7, 7, -7], I32)), X(np.array([2, 2, -2, -2], I32))], [((4,), I32)])
    assert out.tolist() == [3, -4, -4, 3]


def test_round_ties_to_even():
    out, = run_one(B.ROUND, [X(np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4], F32))], [((7,), F32)])
    assert out.tolist() == [0, 2, 2, -0.0, -2, -2, 2]


def test_arg_max_ties_pick_the_first_index():
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], F32)
    out, = run_one(B.ARG_MAX, [X(x), C([1], I32)], [((2,), I32)], ArgMaxOptions(output_type=TensorType.INT32))
    assert out.tolist() == [1, 0]
    out, = run_one(B.ARG_MIN, [X(x), C([1], I32)], [((2,), I64)], ArgMinOptions(output_type=TensorType.INT64))
    assert out.tolist() == [3, 0] and out.dtype == np.int64


def test_arg_max_without_options_is_refused_like_tflite():
    with pytest.raises(UnsupportedOpError, match=r"ARG_MAX.*node 0.*output_type"):
        run_one(B.ARG_MAX, [X(np.zeros((2, 3), F32)), C([1], I32)], [((2,), I32)])


@pytest.mark.parametrize("bad", [5, -1])
def test_gather_index_out_of_range_is_an_error_naming_the_node(bad):
    with pytest.raises(WorkbenchError, match=rf"GATHER \(node 0\).*{bad}.*out of bounds"):
        run_one(B.GATHER, [X(np.zeros((5, 2), F32)), X(np.array([0, bad], I32))], [((2, 2), F32)],
                GatherOptions(axis=0))


def test_gather_nd_index_out_of_range_is_an_error():
    with pytest.raises(WorkbenchError, match=r"GATHER_ND \(node 0\).*out of bounds"):
        run_one(B.GATHER_ND, [X(np.zeros((3, 2), F32)), X(np.array([[0, 2]], I32))], [((1,), F32)])


def test_litert_also_refuses_an_out_of_range_gather(tmp_path):
    builder, feed = one_op(B.GATHER, [X(np.zeros((5, 2), F32)), C(np.array([0, 7], I32))], [((2, 2), F32)],
                           GatherOptions(axis=0))
    path = tmp_path / "g.tflite"
    path.write_bytes(dump(update_versions(builder.build())))
    np.savez(tmp_path / "in.npz", input_0=feed["in0"])
    result = litert_runner.run(path, tmp_path / "in.npz", tmp_path / "out.npz")
    assert not result.ok


@pytest.mark.parametrize("op", [B.FLOOR_DIV, B.FLOOR_MOD])
def test_integer_division_by_zero_is_an_error(op):
    with pytest.raises(WorkbenchError, match=rf"{op.name} \(node 0\).*division by zero"):
        run_one(op, [X(np.array([1, 2], I32)), X(np.array([1, 0], I32))], [((2,), I32)])


def test_integer_pow_refuses_negative_exponents():
    with pytest.raises(WorkbenchError, match=r"POW \(node 0\).*negative"):
        run_one(B.POW, [X(np.array([2, 2], I32)), X(np.array([1, -1], I32))], [((2,), I32)])


@pytest.mark.parametrize("op,ins,outs,opts,match", [
    (B.SLICE, [X(np.zeros((3, 4), F32)), C([1, 2], I32), C([3, 1], I32)], [((3, 1), F32)], None, "do not fit"),
    (B.SPLIT, [C(np.asarray(0, I32)), X(np.zeros((5, 2), F32))], [((2, 2), F32)] * 2, SplitOptions(num_splits=2),
     "equal parts"),
    (B.BATCH_MATMUL, [X(np.zeros((2, 3), F32)), X(np.zeros((4, 2), F32))], [((2, 2), F32)], None, "contraction"),
    (B.MIRROR_PAD, [X(np.zeros((2, 3), F32)), C([[2, 0], [0, 0]], I32)], [((4, 3), F32)], MirrorPadOptions(mode=0),
     "REFLECT"),
    (B.MAXIMUM, [X(np.zeros((2, 3), F32)), X(np.zeros((4,), F32))], [((2, 3), F32)], None, "broadcast"),
    (B.RANGE, [C(np.asarray(0, I32)), C(np.asarray(5, I32)), C(np.asarray(-1, I32))], [((0,), I32)], None,
     "moves away"),
])
def test_bad_shapes_are_clear_errors(op, ins, outs, opts, match):
    with pytest.raises(WorkbenchError, match=rf"{op.name}.*node 0.*{match}"):
        run_one(op, ins, outs, opts)


def test_where_with_a_run_time_condition_has_a_dynamic_output():
    out, = run_one(B.WHERE, [X(np.array([True, False, True]))], [((1, 1), I64)])
    assert out.dtype == I64 and out.tolist() == [[0], [2]]

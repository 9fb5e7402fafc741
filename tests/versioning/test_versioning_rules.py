"""Every row of every op's version table, each on a tiny model built in code, plus the traps.

A case builds a one-operator model with :class:`ModelBuilder`, writes it and reads it back (so the
options are seen exactly as TFLite's parser sees a file), and checks the computed version.  The
coverage test at the bottom fails if any rule row of :data:`RULES` is not decided by some case.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest

from workbench.options import options_table_for
from workbench.schema import CLASSES, dump, load
from workbench.schema import BuiltinOperator as B
from workbench.schema import TensorType as T
from workbench.schema.builder import ModelBuilder
from workbench.schema.validate import tensor_nbytes
from workbench.versioning import RULES, TRAPS, op_version, signature_of, update_versions
from workbench.versioning.rules import DEFAULT_REASON, TRAP_BY_ID, covered_ops

F32, F16, F64, BF16 = T.FLOAT32, T.FLOAT16, T.FLOAT64, T.BFLOAT16
I2, I4, I8, I16, I32, I64 = T.INT2, T.INT4, T.INT8, T.INT16, T.INT32, T.INT64
U4, U8, U16, U32 = T.UINT4, T.UINT8, T.UINT16, T.UINT32
BOOL, STR, C64 = T.BOOL, T.STRING, T.COMPLEX64
OPT = CLASSES  # options tables by name: OPT["Conv2DOptions"](...)
ABSENT = "absent"  # no options table at all


@dataclass
class Tn:
    """One tensor of a test model."""

    type: T
    shape: tuple = (1, 4, 4, 4)
    q: tuple | None = None  # scales (zero points are 0)
    axis: int = 0
    const: bool = False
    sparse: bool = False


def _tn(spec) -> Tn | None:
    if spec is None or isinstance(spec, Tn):
        return spec
    return Tn(spec)


def build(op, ins=(), outs=(), opts=None, *, n_in: int = 3, n_out: int = 1, version: int = 1):
    """A one-operator model.  ``ins`` / ``outs``: {slot: TensorType | Tn | None (omitted)} or a list;
    slots not given are FLOAT32 [1, 4, 4, 4].  ``opts``: an options table, ABSENT, or None for the
    op's own table with schema defaults (present in the file)."""
    ins = dict(enumerate(ins)) if isinstance(ins, (list, tuple)) else dict(ins)
    outs = dict(enumerate(outs)) if isinstance(outs, (list, tuple)) else dict(outs)
    n_in = max(n_in, max(ins, default=-1) + 1)
    n_out = max(n_out, max(outs, default=-1) + 1)
    b = ModelBuilder()

    def make(name, spec):
        if spec is None:
            return -1
        q = None
        if spec.q is not None:
            q = b.quant(list(spec.q), [0] * len(spec.q), spec.axis)
        t = b.tensor(name, spec.shape, spec.type, quantization=q)
        if spec.const:  # constant data of the right size (one byte per element for unsized types)
            nbytes = tensor_nbytes(b.tensors[t]) or max(1, int(np.prod(spec.shape)))
            b.tensors[t] = dataclasses.replace(b.tensors[t], buffer=b.add_buffer(b"\x01" * nbytes))
        if spec.sparse:
            sp = CLASSES["SparsityParameters"](traversal_order=tuple(range(len(spec.shape))),
                                               dim_metadata=tuple(CLASSES["DimensionMetadata"](dense_size=d)
                                                                  for d in spec.shape))
            b.tensors[t] = dataclasses.replace(b.tensors[t], sparsity=sp)
        return t

    in_idx = [make(f"in{i}", _tn(ins.get(i, F32))) for i in range(n_in)]
    out_idx = [make(f"out{i}", _tn(outs.get(i, F32))) for i in range(n_out)]
    if opts is None:
        table = options_table_for(B(op))
        opts = OPT[table[1]]() if table else None
    elif opts == ABSENT:
        opts = None
    b.op(op, in_idx, out_idx, opts, version=version)
    b.output(*out_idx)
    return load(dump(b.build()))


def version(op, *args, **kw):
    return op_version(build(op, *args, **kw), 0, 0)


# ---------------------------------------------------------------------------------------------
# The case table: (id, op, build kwargs, expected version).  Each case decides one rule row.
# ---------------------------------------------------------------------------------------------
CASES: list[tuple[str, B, dict, int]] = []


def case(name, op, expect, **kw):
    CASES.append((name, op, kw, expect))


def per_channel(t, n, axis, shape):
    return Tn(t, shape, q=tuple([0.5] * n), axis=axis, const=True)


W_CONV = (4, 3, 3, 4)  # OHWI; 4 output channels
case("conv_16x8_bias_type_from_disk_v8", B.CONV_2D, 8, ins=[I16, Tn(I8, W_CONV)], outs=[I16])
case("conv_16x8_explicit_int32_bias_v8", B.CONV_2D, 8, ins=[I16, Tn(I8, W_CONV)], outs=[I16],
     opts=OPT["Conv2DOptions"](quantized_bias_type=I32))
case("conv_grouped_v6", B.CONV_2D, 6, ins=[Tn(F32, (1, 4, 4, 4)), Tn(F32, (4, 3, 3, 2))])
case("conv_int16_two_outputs_v4", B.CONV_2D, 4, ins=[I16, I16], outs=[I16, I16])
case("conv_int8_v3", B.CONV_2D, 3, ins=[I8, I8], outs=[I8])
case("conv_int8_int4_v7", B.CONV_2D, 7, ins=[I8, I4], outs=[I8])
case("conv_hybrid_per_channel_v5", B.CONV_2D, 5, ins=[F32, per_channel(I8, 4, 0, W_CONV)])
case("conv_hybrid_per_tensor_v2", B.CONV_2D, 2, ins=[F32, Tn(I8, W_CONV, q=(0.5,))])

W_DW = (1, 3, 3, 4)  # 1HWC
DW = "DepthwiseConv2DOptions"
case("depthwise_int16_two_outputs_v5", B.DEPTHWISE_CONV_2D, 5, ins=[I16, I16], outs=[I16, I16])
case("depthwise_hybrid_per_channel_v6", B.DEPTHWISE_CONV_2D, 6, ins=[F32, per_channel(I8, 4, 3, W_DW)])
case("depthwise_hybrid_per_tensor_v4", B.DEPTHWISE_CONV_2D, 4, ins=[F32, Tn(I8, W_DW, q=(0.5,))])
case("depthwise_int8_v3", B.DEPTHWISE_CONV_2D, 3, ins=[I8, I8], outs=[I8])
case("depthwise_int8_int4_v7", B.DEPTHWISE_CONV_2D, 7, ins=[I8, I4], outs=[I8])
case("depthwise_dilation_w_v2", B.DEPTHWISE_CONV_2D, 2, opts=OPT[DW](dilation_w_factor=2))
case("depthwise_dilation_h_v2", B.DEPTHWISE_CONV_2D, 2, opts=OPT[DW](dilation_h_factor=3))

case("embedding_lookup_int4_v4", B.EMBEDDING_LOOKUP, 4, ins=[Tn(I32, (3,)), Tn(I4, (10, 4))], n_in=2)
case("embedding_lookup_per_channel_v4", B.EMBEDDING_LOOKUP, 4,
     ins=[Tn(I32, (3,)), per_channel(I8, 10, 0, (10, 4))], n_in=2)
case("embedding_lookup_int2_v5", B.EMBEDDING_LOOKUP, 5, ins=[Tn(I32, (3,)), Tn(I2, (10, 4))], n_in=2)

case("fake_quant_narrow_range_v2", B.FAKE_QUANT, 2, opts=OPT["FakeQuantOptions"](narrow_range=True), n_in=1)

FC_X, FC_W, FC_B = (1, 4), (3, 4), (3,)
FCO = "FullyConnectedOptions"


def fc(x=F32, w=F32, o=F32, *, wq=None, sparse=False, bias=True):
    ins = [Tn(x, FC_X), Tn(w, FC_W, q=wq, const=True, sparse=sparse)]
    if bias:
        ins.append(Tn(F32 if x in (F32,) else I32, FC_B, const=True))
    return dict(ins=ins, outs=[Tn(o, (1, 3))], n_in=len(ins))


case("fc_int2_weights_v14", B.FULLY_CONNECTED, 14, **fc(F32, I2))
case("fc_int16_int4_v13", B.FULLY_CONNECTED, 13, **fc(I16, I4, I16))
case("fc_hybrid_per_channel_v12", B.FULLY_CONNECTED, 12, **fc(F32, I8, F32, wq=(0.1, 0.2, 0.3)))
case("fc_16x8_bias_type_from_disk_v11", B.FULLY_CONNECTED, 11, **fc(I16, I8, I16))
case("fc_sparse_weights_v8", B.FULLY_CONNECTED, 8, **fc(sparse=True))
case("fc_int16_v7", B.FULLY_CONNECTED, 7, **fc(I16, I16, I16))
case("fc_without_bias_v6", B.FULLY_CONNECTED, 6, **fc(bias=False))
case("fc_keep_num_dims_v5", B.FULLY_CONNECTED, 5, **fc(), opts=OPT[FCO](keep_num_dims=True))
case("fc_int8_v4", B.FULLY_CONNECTED, 4, **fc(I8, I8, I8))
case("fc_int8_int4_v10", B.FULLY_CONNECTED, 10, **fc(I8, I4, I8))
case("fc_hybrid_asymmetric_v9", B.FULLY_CONNECTED, 9, **fc(F32, I8, F32, wq=(0.1,)),
     opts=OPT[FCO](asymmetric_quantize_inputs=True))
case("fc_hybrid_v3", B.FULLY_CONNECTED, 3, **fc(F32, I8, F32, wq=(0.1,)))
case("fc_shuffled_weights_v2", B.FULLY_CONNECTED, 2, **fc(), opts=OPT[FCO](weights_format=1))

GP = dict(ins=[Tn(F32, (4, 4)), Tn(I32, (2,))], n_in=2)
case("gather_int4_params_v7", B.GATHER, 7, ins=[Tn(I4, (4, 4)), Tn(I32, (2,))], n_in=2)
case("gather_int16_indices_v6", B.GATHER, 6, ins=[Tn(F32, (4, 4)), Tn(I16, (2,))], n_in=2)
case("gather_batch_dims_v5", B.GATHER, 5, **GP, opts=OPT["GatherOptions"](batch_dims=1))
case("gather_int16_params_v4", B.GATHER, 4, ins=[Tn(I16, (4, 4)), Tn(I32, (2,))], n_in=2)
case("gather_bool_v3", B.GATHER, 3, ins=[Tn(BOOL, (4, 4)), Tn(I32, (2,))], n_in=2)
case("gather_int8_v2", B.GATHER, 2, ins=[Tn(I8, (4, 4)), Tn(I32, (2,))], n_in=2)

case("svdf_int8_v3", B.SVDF, 3, ins=[I8, I8], outs=[I8])
case("svdf_hybrid_asymmetric_v4", B.SVDF, 4, ins=[F32, I8], opts=OPT["SVDFOptions"](asymmetric_quantize_inputs=True))
case("svdf_hybrid_v2", B.SVDF, 2, ins=[F32, I8])

case("sign_int32_v2", B.SIGN, 2, ins=[I32], n_in=1)

Q = (0.5,)
case("mul_float16_v8", B.MUL, 8, ins=[F16, F16], n_in=2)
case("mul_int16_unquantized_v7", B.MUL, 7, ins=[I16, I16], outs=[I16], n_in=2)
case("mul_uint32_v7", B.MUL, 7, ins=[U32, U32], outs=[U32], n_in=2)
case("mul_complex64_v6", B.MUL, 6, ins=[C64, C64], n_in=2)
case("mul_int64_v5", B.MUL, 5, ins=[I64, I64], n_in=2)
case("mul_int16_quantized_v4", B.MUL, 4, ins=[Tn(I16, q=Q), Tn(I16, q=Q)], outs=[Tn(I16, q=Q)], n_in=2)
case("mul_rescale_ge_1_v3", B.MUL, 3, ins=[Tn(I8, q=(1.0,)), Tn(I8, q=(2.0,))], outs=[Tn(I8, q=(1.0,))], n_in=2)
case("mul_int8_v2", B.MUL, 2, ins=[Tn(I8, q=Q), Tn(I8, q=Q)], outs=[Tn(I8, q=(1.0,))], n_in=2)

for pool in (B.MAX_POOL_2D, B.AVERAGE_POOL_2D):
    case(f"{pool.name.lower()}_int16_v3", pool, 3, ins=[I16], outs=[I16], n_in=1)
    case(f"{pool.name.lower()}_int8_v2", pool, 2, ins=[I8], outs=[I8], n_in=1)

PERM = Tn(I32, (4,))
case("transpose_float16_v9", B.TRANSPOSE, 9, ins=[F16, PERM], n_in=2)
case("transpose_rank7_v8", B.TRANSPOSE, 8, ins=[Tn(F32, (1,) * 7), PERM], n_in=2)
case("transpose_bfloat16_v8", B.TRANSPOSE, 8, ins=[BF16, PERM], n_in=2)
case("transpose_int4_v7", B.TRANSPOSE, 7, ins=[I4, PERM], n_in=2)
case("transpose_rank6_v6", B.TRANSPOSE, 6, ins=[Tn(F32, (1,) * 6), PERM], n_in=2)
case("transpose_int16_v5", B.TRANSPOSE, 5, ins=[I16, PERM], n_in=2)
case("transpose_rank5_v4", B.TRANSPOSE, 4, ins=[Tn(F32, (1,) * 5), PERM], n_in=2)
case("transpose_bool_v3", B.TRANSPOSE, 3, ins=[BOOL, PERM], n_in=2)
case("transpose_int8_v2", B.TRANSPOSE, 2, ins=[I8, PERM], n_in=2)

OS = Tn(I32, (4,), const=True)  # TRANSPOSE_CONV input 0 is output_shape
case("transpose_conv_16x8_in0_v5", B.TRANSPOSE_CONV, 5, ins=[I16, I8, I16], outs=[I16])
case("transpose_conv_fused_relu_v4", B.TRANSPOSE_CONV, 4, ins=[OS],
     opts=OPT["TransposeConvOptions"](fused_activation_function=1))
case("transpose_conv_bias_v3", B.TRANSPOSE_CONV, 3, ins=[OS, F32, F32, Tn(F32, (4,))], n_in=4)
case("transpose_conv_int8_weights_v2", B.TRANSPOSE_CONV, 2, ins=[OS, I8, I8], outs=[I8])

case("lstm_16x8_v5", B.LSTM, 5, ins=[I16, I8, I8], outs=[I16])
case("lstm_hybrid_asymmetric_v4", B.LSTM, 4, ins=[F32, I8, I8],
     opts=OPT["LSTMOptions"](asymmetric_quantize_inputs=True))
case("lstm_hybrid_v3", B.LSTM, 3, ins=[F32, F32, I8])
case("lstm_basic_kernel_v2", B.LSTM, 2, opts=OPT["LSTMOptions"](kernel_type=1))

AXIS = Tn(I32, ())
case("split_int16_v4", B.SPLIT, 4, ins=[AXIS, I16], n_in=2)
case("split_int32_v3", B.SPLIT, 3, ins=[AXIS, I32], n_in=2)
case("split_int8_v2", B.SPLIT, 2, ins=[AXIS, I8], n_in=2)

case("sparse_to_dense_int8_values_v3", B.SPARSE_TO_DENSE, 3, ins=[I32, I32, I8, I8], n_in=4)
case("sparse_to_dense_uint8_values_v3", B.SPARSE_TO_DENSE, 3, ins=[I32, I32, U8, U8], n_in=4)
case("sparse_to_dense_int64_values_v2", B.SPARSE_TO_DENSE, 2, ins=[I32, I32, I64, I64], n_in=4)

case("slice_float16_v8", B.SLICE, 8, ins=[F16])
case("slice_int4_v7", B.SLICE, 7, ins=[I4])
case("slice_uint32_v6", B.SLICE, 6, ins=[U32])
case("slice_rank5_v5", B.SLICE, 5, ins=[Tn(F32, (1,) * 5)])
case("slice_int16_v4", B.SLICE, 4, ins=[I16])
case("slice_string_v3", B.SLICE, 3, ins=[STR])
case("slice_int8_v2", B.SLICE, 2, ins=[I8])

case("unpack_int8_v2", B.UNPACK, 2, ins=[I8], n_in=1)
case("unpack_uint8_v2", B.UNPACK, 2, ins=[U8], n_in=1)
case("unpack_bool_v3", B.UNPACK, 3, ins=[BOOL], n_in=1)
case("unpack_int16_v4", B.UNPACK, 4, ins=[I16], outs=[I16], n_in=1)
case("unpack_float16_v5", B.UNPACK, 5, ins=[F16], n_in=1)
case("unpack_bfloat16_v5", B.UNPACK, 5, ins=[BF16], n_in=1)

case("dequantize_uint4_v8", B.DEQUANTIZE, 8, ins=[U4], n_in=1)
case("dequantize_int2_v7", B.DEQUANTIZE, 7, ins=[I2], n_in=1)
case("dequantize_int4_v6", B.DEQUANTIZE, 6, ins=[I4], n_in=1)
case("dequantize_int16_v3", B.DEQUANTIZE, 3, ins=[I16], n_in=1)
case("dequantize_float16_v3", B.DEQUANTIZE, 3, ins=[F16], n_in=1)
case("dequantize_int8_per_channel_v5", B.DEQUANTIZE, 5, ins=[per_channel(I8, 4, 3, (1, 4, 4, 4))], n_in=1)
case("dequantize_int8_v2", B.DEQUANTIZE, 2, ins=[Tn(I8, q=Q)], n_in=1)

case("quantize_uint4_out_v5", B.QUANTIZE, 5, outs=[U4], n_in=1)
case("quantize_int4_in_v4", B.QUANTIZE, 4, ins=[I4], n_in=1)
case("quantize_per_channel_out_v3", B.QUANTIZE, 3, outs=[Tn(I8, q=(0.1,) * 4, axis=3)], n_in=1)
case("quantize_int16_out_v2", B.QUANTIZE, 2, outs=[Tn(I16, q=Q)], n_in=1)

case("floor_div_int16_v3", B.FLOOR_DIV, 3, ins=[I16, I16], n_in=2)
case("floor_div_float32_v2", B.FLOOR_DIV, 2, n_in=2)
case("floor_mod_int8_v2", B.FLOOR_MOD, 2, ins=[I8, I8], n_in=2)
case("l2_normalization_int8_out_v2", B.L2_NORMALIZATION, 2, outs=[I8], n_in=1)

case("abs_int32_v5", B.ABS, 5, ins=[I32], n_in=1)
case("abs_int16_quantized_v3", B.ABS, 3, ins=[Tn(I16, q=Q)], n_in=1)
case("abs_int16_unquantized_v4", B.ABS, 4, ins=[I16], n_in=1)
case("abs_uint8_v2", B.ABS, 2, ins=[U8], n_in=1)

case("relu_int16_v3", B.RELU, 3, ins=[I16], n_in=1)
case("relu_uint8_v2", B.RELU, 2, ins=[U8], n_in=1)

SSO = "StridedSliceOptions"
case("strided_slice_offset_v8", B.STRIDED_SLICE, 8, opts=OPT[SSO](offset=True), n_in=4)
case("strided_slice_uint32_v7", B.STRIDED_SLICE, 7, ins=[U32], n_in=4)
case("strided_slice_ellipsis_v6", B.STRIDED_SLICE, 6, opts=OPT[SSO](ellipsis_mask=2), n_in=4)
case("strided_slice_new_axis_v6", B.STRIDED_SLICE, 6, opts=OPT[SSO](new_axis_mask=1), n_in=4)
case("strided_slice_string_v5", B.STRIDED_SLICE, 5, ins=[STR], n_in=4)
case("strided_slice_rank5_v4", B.STRIDED_SLICE, 4, ins=[Tn(F32, (1,) * 5)], n_in=4)
case("strided_slice_bool_v3", B.STRIDED_SLICE, 3, ins=[BOOL], n_in=4)
case("strided_slice_int8_v2", B.STRIDED_SLICE, 2, ins=[I8], n_in=4)

case("reverse_v2_int8_v3", B.REVERSE_V2, 3, ins=[I8], n_in=2)
case("reverse_v2_bool_v2", B.REVERSE_V2, 2, ins=[BOOL], n_in=2)

RB, RN = "ResizeBilinearOptions", "ResizeNearestNeighborOptions"
case("resize_bilinear_int16_v4", B.RESIZE_BILINEAR, 4, ins=[I16], n_in=2)
case("resize_bilinear_half_pixel_v3", B.RESIZE_BILINEAR, 3, opts=OPT[RB](half_pixel_centers=True), n_in=2)
case("resize_bilinear_int8_v2", B.RESIZE_BILINEAR, 2, ins=[I8], n_in=2)
case("resize_nearest_int16_v4", B.RESIZE_NEAREST_NEIGHBOR, 4, ins=[I16], n_in=2)
case("resize_nearest_half_pixel_v3", B.RESIZE_NEAREST_NEIGHBOR, 3, opts=OPT[RN](half_pixel_centers=True), n_in=2)
case("resize_nearest_align_corners_v3", B.RESIZE_NEAREST_NEIGHBOR, 3, opts=OPT[RN](align_corners=True), n_in=2)
case("resize_nearest_int8_v2", B.RESIZE_NEAREST_NEIGHBOR, 2, ins=[I8], n_in=2)

for mm in (B.MAXIMUM, B.MINIMUM):
    n = mm.name.lower()
    case(f"{n}_int16_v4", mm, 4, ins=[I16, I16], outs=[I16], n_in=2)
    case(f"{n}_broadcast_rank5_v3", mm, 3, ins=[Tn(F32, (1, 2, 1, 4, 4)), Tn(F32, (4,))], n_in=2)
    case(f"{n}_int8_v2", mm, 2, ins=[I8, I8], n_in=2)

case("pack_int8_v2", B.PACK, 2, ins=[I8, I8], n_in=2)
case("pack_int16_v3", B.PACK, 3, ins=[I16, I16], outs=[I16], n_in=2)
case("pack_uint32_v4", B.PACK, 4, ins=[U32, U32], n_in=2)
case("tile_int8_v3", B.TILE, 3, ins=[I8, I32], n_in=2)
case("tile_string_v2", B.TILE, 2, ins=[STR, I32], n_in=2)
case("squeeze_string_v2", B.SQUEEZE, 2, ins=[STR], n_in=1)

for s2b in (B.SPACE_TO_BATCH_ND, B.BATCH_TO_SPACE_ND):
    n = s2b.name.lower()
    case(f"{n}_int16_v4", s2b, 4, ins=[I16])
    case(f"{n}_rank3_v3", s2b, 3, ins=[Tn(F32, (1, 4, 4))])
    case(f"{n}_int8_v2", s2b, 2, ins=[I8])

case("add_float16_v6", B.ADD, 6, ins=[F16, F16], n_in=2)
case("add_int16_unquantized_v5", B.ADD, 5, ins=[I16, I16], outs=[I16], n_in=2)
case("add_int64_v4", B.ADD, 4, ins=[I64, I64], n_in=2)
case("add_int16_general_scale_v3", B.ADD, 3, ins=[Tn(I16, q=Q), Tn(I16, q=Q)], outs=[Tn(I16, q=Q)], n_in=2,
     opts=OPT["AddOptions"](pot_scale_int16=False))
case("add_int8_v2", B.ADD, 2, ins=[I8, I8], n_in=2)

case("sub_int16_general_scale_v5", B.SUB, 5, ins=[Tn(I16, q=Q), Tn(I16, q=Q)], outs=[Tn(I16, q=Q)], n_in=2,
     opts=OPT["SubOptions"](pot_scale_int16=False))
case("sub_int64_v4", B.SUB, 4, ins=[I64, I64], n_in=2)
case("sub_broadcast_rank5_v3", B.SUB, 3, ins=[Tn(F32, (1, 2, 1, 4, 4)), Tn(F32, (1, 4))], n_in=2)
case("sub_int8_v2", B.SUB, 2, ins=[I8, I8], n_in=2)

case("gather_nd_bool_v5", B.GATHER_ND, 5, ins=[BOOL, I32], n_in=2)
case("gather_nd_int16_indices_v4", B.GATHER_ND, 4, ins=[F32, I16], n_in=2)
case("gather_nd_int16_params_v3", B.GATHER_ND, 3, ins=[I16, I32], n_in=2)
case("gather_nd_string_v2", B.GATHER_ND, 2, ins=[STR, I32], n_in=2)
case("div_broadcast_rank5_v2", B.DIV, 2, ins=[Tn(F32, (2, 1, 1, 1, 4)), Tn(F32, (4,))], n_in=2)

for act in (B.TANH, B.LOGISTIC):
    case(f"{act.name.lower()}_int16_v3", act, 3, ins=[I16], outs=[I16], n_in=1)
    case(f"{act.name.lower()}_int8_v2", act, 2, ins=[I8], n_in=1)

DIMS = Tn(I32, (4,))
case("fill_float16_v4", B.FILL, 4, ins=[DIMS, F16], n_in=2)
case("fill_int8_v3", B.FILL, 3, ins=[DIMS, I8], n_in=2)
case("fill_int16_v3", B.FILL, 3, ins=[DIMS, I16], n_in=2)
case("fill_bool_v2", B.FILL, 2, ins=[DIMS, BOOL], n_in=2)
case("fill_string_v2", B.FILL, 2, ins=[DIMS, STR], n_in=2)

case("equal_int16_v5", B.EQUAL, 5, ins=[I16, I16], n_in=2)
case("equal_string_v3", B.EQUAL, 3, ins=[STR, STR], n_in=2)
case("equal_int8_v2", B.EQUAL, 2, ins=[I8, I8], n_in=2)
case("not_equal_int16_v4", B.NOT_EQUAL, 4, ins=[I16, I16], n_in=2)
case("not_equal_string_v3", B.NOT_EQUAL, 3, ins=[STR, STR], n_in=2)
case("not_equal_int8_v2", B.NOT_EQUAL, 2, ins=[I8, I8], n_in=2)

case("leaky_relu_int16_v2", B.LEAKY_RELU, 2, ins=[I16], n_in=1)
case("range_int64_v2", B.RANGE, 2, ins=[I64, I64, I64])

case("batch_matmul_int16_v3", B.BATCH_MATMUL, 3, ins=[I16, I16], n_in=2)
case("batch_matmul_int8_v2", B.BATCH_MATMUL, 2, ins=[I8, I8], n_in=2)
case("batch_matmul_hybrid_asymmetric_v4", B.BATCH_MATMUL, 4, ins=[F32, I8], n_in=2,
     opts=OPT["BatchMatMulOptions"](asymmetric_quantize_inputs=True))

for pad in (B.PAD, B.PADV2):
    n = pad.name.lower()
    case(f"{n}_bool_v5", pad, 5, ins=[BOOL, Tn(I32, (4, 2))], n_in=2)
    case(f"{n}_rank5_v4", pad, 4, ins=[Tn(F32, (1,) * 5), Tn(I32, (5, 2))], n_in=2)
    case(f"{n}_int16_v3", pad, 3, ins=[I16, Tn(I32, (4, 2))], n_in=2)
    case(f"{n}_int8_v2", pad, 2, ins=[I8, Tn(I32, (4, 2))], n_in=2)

case("concatenation_float16_v6", B.CONCATENATION, 6, ins=[F16, F16], n_in=2)
case("concatenation_int4_v5", B.CONCATENATION, 5, ins=[I4, I4], n_in=2)
case("softmax_float16_v4", B.SOFTMAX, 4, ins=[F16], n_in=1)
case("sin_float16_v2", B.SIN, 2, ins=[F16], n_in=1)
case("cos_float16_v2", B.COS, 2, ins=[F16], n_in=1)
case("concatenation_uint32_v4", B.CONCATENATION, 4, ins=[U32, U32], n_in=2)
case("concatenation_int16_v3", B.CONCATENATION, 3, ins=[I16, I16], n_in=2)
case("concatenation_int8_v2", B.CONCATENATION, 2, ins=[I8, I8], n_in=2)

for op in (B.SOFTMAX, B.MEAN, B.MIRROR_PAD, B.REDUCE_MAX, B.REDUCE_MIN, B.RELU6, B.RSQRT):
    case(f"{op.name.lower()}_int16_v3", op, 3, ins=[I16], n_in=2)
    case(f"{op.name.lower()}_int8_v2", op, 2, ins=[I8], n_in=2)

RNN_OPTS = {B.RNN: "RNNOptions", B.UNIDIRECTIONAL_SEQUENCE_RNN: "SequenceRNNOptions",
            B.BIDIRECTIONAL_SEQUENCE_RNN: "BidirectionalSequenceRNNOptions",
            B.BIDIRECTIONAL_SEQUENCE_LSTM: "BidirectionalSequenceLSTMOptions"}
for op, table in RNN_OPTS.items():
    n = op.name.lower()
    case(f"{n}_hybrid_asymmetric_v3", op, 3, ins=[F32, I8], opts=OPT[table](asymmetric_quantize_inputs=True))
    case(f"{n}_hybrid_v2", op, 2, ins=[F32, I8])

UL = "UnidirectionalSequenceLSTMOptions"
case("unidirectional_sequence_lstm_16x8_v5", B.UNIDIRECTIONAL_SEQUENCE_LSTM, 5, ins=[I16, I8, I8], outs=[I16])
case("unidirectional_sequence_lstm_diagonal_v4", B.UNIDIRECTIONAL_SEQUENCE_LSTM, 4,
     opts=OPT[UL](diagonal_recurrent_tensors=True))
case("unidirectional_sequence_lstm_hybrid_asymmetric_v3", B.UNIDIRECTIONAL_SEQUENCE_LSTM, 3,
     ins=[F32, I8, I8], opts=OPT[UL](asymmetric_quantize_inputs=True))
case("unidirectional_sequence_lstm_hybrid_v2", B.UNIDIRECTIONAL_SEQUENCE_LSTM, 2, ins=[F32, F32, I8])

for op in (B.ARG_MAX, B.ARG_MIN):
    case(f"{op.name.lower()}_bool_v3", op, 3, ins=[BOOL, I32], n_in=2)
    case(f"{op.name.lower()}_int8_v2", op, 2, ins=[I8, I32], n_in=2)

case("select_uint32_v4", B.SELECT, 4, ins=[U32])
case("select_rank5_condition_v3", B.SELECT, 3, ins=[Tn(BOOL, (1,) * 5)])
case("select_rank5_third_input_v3", B.SELECT, 3, ins=[BOOL, F32, Tn(F32, (1,) * 5)])
case("select_int8_v2", B.SELECT, 2, ins=[I8])
for op in (B.LESS, B.GREATER_EQUAL):
    case(f"{op.name.lower()}_int16_v3", op, 3, ins=[I16, I16], n_in=2)
    case(f"{op.name.lower()}_int8_v2", op, 2, ins=[I8, I8], n_in=2)
case("select_v2_uint32_v2", B.SELECT_V2, 2, ins=[U32])
for op in (B.SPACE_TO_DEPTH, B.SPLIT_V, B.SUM, B.LOG_SOFTMAX, B.GREATER, B.LESS_EQUAL, B.SQUARED_DIFFERENCE,
           B.DEPTH_TO_SPACE):
    case(f"{op.name.lower()}_int8_v2", op, 2, ins=[I8], n_in=2)

case("topk_v2_int16_input_v3", B.TOPK_V2, 3, ins=[I16, I32], outs=[I16, I32], n_in=2)
case("topk_v2_int16_k_v3", B.TOPK_V2, 3, ins=[F32, I16], outs=[F32, I32], n_in=2)
case("topk_v2_int16_indices_out_v3", B.TOPK_V2, 3, ins=[F32, I32], outs=[F32, I16], n_in=2)
case("topk_v2_int8_v2", B.TOPK_V2, 2, ins=[I8, I32], outs=[I8, I32], n_in=2)

for op in (B.EXP, B.LOG, B.REDUCE_PROD, B.SQRT):
    case(f"{op.name.lower()}_int8_v2", op, 2, ins=[I8], n_in=1)
    case(f"{op.name.lower()}_int16_v2", op, 2, ins=[I16], n_in=1)

DUS = B.DYNAMIC_UPDATE_SLICE
case("dynamic_update_slice_bfloat16_v6", DUS, 6, ins=[BF16, BF16, I32])
case("dynamic_update_slice_int4_v5", DUS, 5, ins=[I4, I4, I32])
case("dynamic_update_slice_int16_v4", DUS, 4, ins=[I16, I16, I32])
case("dynamic_update_slice_float16_v3", DUS, 3, ins=[F16, F16, I32])
case("dynamic_update_slice_int64_indices_v2", DUS, 2, ins=[F32, F32, I64])

case("broadcast_to_int8_v3", B.BROADCAST_TO, 3, ins=[I8, I32], n_in=2)
case("broadcast_to_int16_v3", B.BROADCAST_TO, 3, ins=[I16, I32], n_in=2)
case("broadcast_to_float_is_v2", B.BROADCAST_TO, 2, ins=[F32, I32], n_in=2)

for name, i, o, v in (("int2_in", I2, F32, 8), ("uint4_out", F32, U4, 8), ("bfloat16_out", F32, BF16, 7),
                      ("int4_to_float", I4, F32, 6), ("float64_in", F64, F32, 5), ("float16_out", I32, F16, 5),
                      ("uint16_in", U16, I32, 4), ("int8_out", F32, I8, 3), ("uint32_in", U32, F32, 2)):
    case(f"cast_{name}_v{v}", B.CAST, v, ins=[i], outs=[o], n_in=1)

case("where_bool_condition_v1", B.WHERE, 1, ins=[BOOL], n_in=1)
case("where_float_condition_v2", B.WHERE, 2, ins=[F32], n_in=1)
case("gelu_int8_v2", B.GELU, 2, ins=[I8], n_in=1)
case("gelu_uint8_v2", B.GELU, 2, ins=[U8], n_in=1)


@pytest.mark.parametrize("op, kw, expect", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_row(op, kw, expect):
    v = version(op, **kw)
    assert v.number == expect, v.explain()
    assert v.rule is not None and v.rule.version == expect
    assert v.reason.startswith(f"v{expect}: ")


def test_every_rule_row_is_decided_by_some_case():
    """Fails when a row of RULES has no case above that it decides (and so no unit test)."""
    hit = set()
    for _, op, kw, _ in CASES:
        v = version(op, **kw)
        if v.rule is not None:
            hit.add((op, RULES[op].index(v.rule)))
    missing = [f"{op.name} row {i} (v{r.version}: {r.predicate.name})"
               for op, rows in RULES.items() for i, r in enumerate(rows) if (op, i) not in hit]
    assert missing == []


# ops and the version a plain float signature (default options table present) gets
PLAIN_NOT_1 = {B.BROADCAST_TO: 2, B.WHERE: 2, B.FLOOR_DIV: 2}


@pytest.mark.parametrize("op", list(RULES), ids=[op.name for op in RULES])
def test_plain_float_op_gets_default_version(op):
    v = version(op)
    expect = PLAIN_NOT_1.get(op, 1)
    assert v.number == expect, v.explain()
    if expect == 1 and op != B.WHERE:
        assert v.rule is None and v.reason == DEFAULT_REASON


# ---------------------------------------------------------------------------------------------
# Named cases (op_version.cc's rules, op_version_test.cc's expectations)
# ---------------------------------------------------------------------------------------------
def test_depthwise_dilation_2_needs_version_2():
    v = version(B.DEPTHWISE_CONV_2D, opts=OPT[DW](stride_w=1, stride_h=1, dilation_w_factor=2, dilation_h_factor=2))
    assert v.number == 2
    assert v.reason == "v2: dilation_w_factor=2 ≠ 1"  # || short-circuits: the width decided it
    assert v.why == "dilation_w_factor=2 ≠ 1"


def test_depthwise_dilation_h_only_names_the_height():
    v = version(B.DEPTHWISE_CONV_2D, opts=OPT[DW](dilation_h_factor=3))
    assert v.reason == "v2: dilation_h_factor=3 ≠ 1"


def test_fc_without_bias_is_v6_before_int8():
    v = version(B.FULLY_CONNECTED, **fc(I8, I8, I8, bias=False))
    assert v.number == 6 and "2 inputs (no bias slot)" in v.reason
    assert any("fc-no-bias-before-int8" in t for t in v.traps)


def test_fc_omitted_bias_minus_one_is_still_three_inputs():
    # the bias slot exists (index -1): "exactly 2 inputs" does not hold, so int8 → v4
    kw = fc(I8, I8, I8)
    kw["ins"][2] = None
    v = version(B.FULLY_CONNECTED, **kw)
    assert v.number == 4
    assert v.signature.input(2).omitted and v.signature.input(2).type is None


def test_fc_keep_num_dims_outranks_int8():
    v = version(B.FULLY_CONNECTED, **fc(I8, I8, I8), opts=OPT[FCO](keep_num_dims=True))
    assert v.number == 5 and v.reason == "v5: keep_num_dims=True"


def test_int8_conv_reason_names_the_types():
    v = version(B.CONV_2D, ins=[I8, I8], outs=[I8])
    assert v.reason == "v3: int8 op (in0=INT8, in1=INT8, out0=INT8)"


def test_conv_rows_are_in_upstream_order_not_version_order():
    assert [r.version for r in RULES[B.CONV_2D]] == [8, 6, 4, 3, 7, 5, 2]
    assert [r.version for r in RULES[B.FULLY_CONNECTED]] == [14, 13, 12, 11, 8, 7, 6, 5, 4, 10, 9, 3, 2]


def test_mul_rescale_reason_shows_the_arithmetic():
    v = version(B.MUL, ins=[Tn(I8, q=(1.0,)), Tn(I8, q=(2.0,))], outs=[Tn(I8, q=(1.0,))], n_in=2)
    assert v.reason == "v3: input1_scale·input2_scale/output_scale = 1·2/1 = 2 ≥ 1"


def test_resize_bilinear_align_corners_alone_stays_v1():
    v = version(B.RESIZE_BILINEAR, opts=OPT[RB](align_corners=True), n_in=2)
    assert v.number == 1
    assert any("resize-bilinear-align-corners" in t for t in v.traps)


def test_relu6_uint8_and_leaky_relu_int8_stay_v1():
    assert version(B.RELU6, ins=[U8], n_in=1).number == 1
    assert version(B.LEAKY_RELU, ins=[I8], n_in=1).number == 1


def test_quantize_float_to_int8_per_tensor_is_v1():
    assert version(B.QUANTIZE, outs=[Tn(I8, q=Q)], n_in=1).number == 1


def test_dequantize_uint8_is_v1():
    assert version(B.DEQUANTIZE, ins=[Tn(U8, q=Q)], n_in=1).number == 1


# ---------------------------------------------------------------------------------------------
# The traps of op_version.cc (found while porting it)
# ---------------------------------------------------------------------------------------------
def test_traps_are_listed_with_ids():
    ids = {t.id for t in TRAPS}
    assert {"conv2d-outputs1", "depthwise-outputs1", "depthwise-no-16x8", "quantized-bias-type-from-disk",
            "fc-no-bias-before-int8", "depthwise-dilation-int8", "mul-v3-any-quantized",
            "transpose-conv-in0-is-output-shape", "zero-filled-params"} <= ids
    for rows in RULES.values():
        for r in rows:
            assert r.trap is None or r.trap in TRAP_BY_ID


def test_trap_conv_int16_single_output_never_gets_v4():
    v = version(B.CONV_2D, ins=[I16, I16], outs=[I16])
    assert v.number == 1
    assert any("outputs[1]" in t and ".at(1) would throw" in t for t in v.traps)
    assert any(t.startswith("[conv2d-outputs1]") for t in v.traps)


def test_trap_depthwise_int16_single_output_never_gets_v5():
    v = version(B.DEPTHWISE_CONV_2D, ins=[I16, I16], outs=[I16])
    assert v.number == 1
    assert any(t.startswith("[depthwise-outputs1]") for t in v.traps)


def test_trap_no_16x8_rule_for_depthwise():
    v = version(B.DEPTHWISE_CONV_2D, ins=[I16, I8], outs=[I16])
    assert v.number == 1
    assert any(t.startswith("[depthwise-no-16x8]") for t in v.traps)
    v2 = version(B.DEPTHWISE_CONV_2D, ins=[I16, I8], outs=[I16], opts=OPT[DW](dilation_w_factor=2))
    assert v2.number == 2


def test_trap_16x8_conv_from_disk_is_v8_without_explicit_bias_type():
    v = version(B.CONV_2D, ins=[I16, Tn(I8, W_CONV)], outs=[I16])
    assert v.number == 8
    assert "quantized_bias_type=kTfLiteFloat32 (1)" in v.reason and "field absent" in v.reason
    assert any(t.startswith("[quantized-bias-type-from-disk]") for t in v.traps)
    assert v.signature.options["quantized_bias_type"] == 1


def test_trap_16x8_conv_without_options_table_is_v1():
    # no table at all: the C parser zero-fills, quantized_bias_type = kTfLiteNoType = 0
    v = version(B.CONV_2D, ins=[I16, Tn(I8, W_CONV)], outs=[I16], opts=ABSENT)
    assert v.number == 1
    assert v.signature.options["quantized_bias_type"] == 0


def test_trap_depthwise_dilation_does_not_bump_int8():
    v = version(B.DEPTHWISE_CONV_2D, ins=[I8, I8], outs=[I8], opts=OPT[DW](dilation_w_factor=2))
    assert v.number == 3
    assert any(t.startswith("[depthwise-dilation-int8]") for t in v.traps)


def test_trap_mul_v3_applies_to_uint8():
    v = version(B.MUL, ins=[Tn(U8, q=(1.0,)), Tn(U8, q=(2.0,))], outs=[Tn(U8, q=(1.0,))], n_in=2)
    assert v.number == 3
    assert any(t.startswith("[mul-v3-any-quantized]") for t in v.traps)


def test_trap_transpose_conv_16x8_real_layout_never_gets_v5():
    v = version(B.TRANSPOSE_CONV, ins=[OS, Tn(I8, W_CONV), I16], outs=[I16])
    assert v.number == 2  # the int8 weights rule; v5 tests input 0 = output_shape (INT32)
    assert any(t.startswith("[transpose-conv-in0-is-output-shape]") for t in v.traps)


def test_trap_transpose_conv_omitted_bias_is_not_v3():
    v = version(B.TRANSPOSE_CONV, ins=[OS, F32, F32, None], n_in=4)
    assert v.number == 1


def test_trap_depthwise_without_options_table_computes_v2():
    v = version(B.DEPTHWISE_CONV_2D, opts=ABSENT)
    assert v.number == 2
    assert "dilation_w_factor=0 ≠ 1" in v.reason and "zero-fills" in v.reason
    assert any(t.startswith("[zero-filled-params]") for t in v.traps)


def test_trap_int16_add_without_options_table_is_v3():
    v = version(B.ADD, ins=[Tn(I16, q=Q), Tn(I16, q=Q)], outs=[Tn(I16, q=Q)], n_in=2, opts=ABSENT)
    assert v.number == 3 and "pot_scale_int16=False" in v.reason
    # with the table present, the schema default (true) applies
    assert version(B.ADD, ins=[Tn(I16, q=Q), Tn(I16, q=Q)], outs=[Tn(I16, q=Q)], n_in=2).number == 1


def test_trap_missing_input_slot_reads_as_notype():
    # SPLIT reads inputs[1]; with a single input upstream's .at(1) would throw
    v = version(B.SPLIT, ins=[I16], n_in=1)
    assert v.number == 1
    assert any("inputs[1]" in t for t in v.traps)


# ---------------------------------------------------------------------------------------------
# Signature extraction, CUSTOM ops, update_versions
# ---------------------------------------------------------------------------------------------
def test_signature_facts():
    m = build(B.CONV_2D, ins=[Tn(I8, (1, 8, 8, 4), q=Q), per_channel(I8, 4, 0, W_CONV), None], outs=[I8])
    sig = signature_of(m, 0, 0)
    assert sig.name == "CONV_2D" and sig.version == 1
    assert sig.input(1).is_const and not sig.input(0).is_const
    assert sig.input(1).scales == (0.5,) * 4 and sig.input(1).per_channel
    assert sig.input(2).index == -1 and sig.input(2).type is None
    assert sig.ext.is_per_channel_quantized and not sig.ext.is_grouped_convolution
    assert sig.options["dilation_w_factor"] == 1 and sig.options_table_present
    assert sig.schema_options.table == "Conv2DOptions"
    assert sig.max_input_rank == 4 and sig.need_broadcast
    assert "CONV_2D" in repr(sig) and "4 scales" in repr(sig)


def test_signature_dynamic_shape():
    b = ModelBuilder()
    x = b.input("x", [1, 4], shape_signature=[-1, 4])
    y = b.tensor("y", [1, 4])
    b.op(B.RELU, [x], [y])
    b.output(y)
    sig = signature_of(load(dump(b.build())), 0, 0)
    assert sig.input(0).is_shape_dynamic and not sig.output(0).is_shape_dynamic


def _custom_model(version=3):
    b = ModelBuilder()
    x = b.input("x", [4])
    y = b.tensor("y", [4])
    b.op(None, [x], [y], custom_code="MyOp", version=version, custom_options=b"")
    b.output(y)
    return load(dump(b.build()))


def test_custom_op_keeps_its_authors_version():
    v = op_version(_custom_model(3), 0, 0)
    assert v.number == 3 and v.reason == "custom op: version is the op author's" and v.rule is None


def test_update_versions_raises_never_lowers():
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 4], np.int8)
    y = b.tensor("y", [1, 4, 4, 4], np.int8)
    z = b.tensor("z", [1, 4, 4, 4], np.float32)
    w = b.tensor("w", [1, 4, 4, 4], np.float32)
    b.op(B.SOFTMAX, [x], [y], OPT["SoftmaxOptions"](beta=1.0), version=1)  # computes 2
    b.op(B.RELU, [z], [w], version=3)  # computes 1, stored 3 stays
    b.output(y, w)
    m = load(dump(b.build()))
    m2 = update_versions(m)
    assert [c.version for c in m2.operator_codes] == [2, 3]
    assert [c.version for c in m.operator_codes] == [1, 3]  # the input is unchanged
    assert update_versions(m2) is m2  # nothing left to raise
    assert [c.version for c in load(dump(m2)).operator_codes] == [2, 3]


def test_update_versions_shared_code_takes_the_max():
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 4])
    y = b.tensor("y", [1, 4, 4, 4])
    z = b.tensor("z", [1, 4, 4, 4])
    b.op(B.DEPTHWISE_CONV_2D, [x, x, -1], [y], OPT[DW]())
    b.op(B.DEPTHWISE_CONV_2D, [y, y, -1], [z], OPT[DW](dilation_w_factor=2))
    b.output(z)
    m2 = update_versions(load(dump(b.build())))
    assert len(m2.operator_codes) == 1 and m2.operator_codes[0].version == 2


def test_update_versions_skips_custom():
    m = _custom_model(1)
    assert update_versions(m) is m


def test_covered_ops_include_every_target_op():
    target = {"ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
              "DEQUANTIZE", "FULLY_CONNECTED", "L2_NORMALIZATION", "LOGISTIC", "MAX_POOL_2D", "MUL", "RELU",
              "RELU6", "RESHAPE", "RESIZE_BILINEAR", "SOFTMAX", "SPACE_TO_DEPTH", "TANH", "PAD", "GATHER",
              "TRANSPOSE", "MEAN", "SUB", "SQUEEZE", "STRIDED_SLICE", "SPLIT", "PRELU", "MAXIMUM", "MINIMUM",
              "TRANSPOSE_CONV", "PACK", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "QUANTIZE", "HARD_SWISH",
              "BATCH_MATMUL"}
    assert target <= set(covered_ops())

"""The operator options tables of the TFLite schema: every member of ``BuiltinOptions`` and
``BuiltinOptions2``, and the two unions themselves.

One line per field: ``Field(slot id, schema name, type, default, since=op version)``.  Defaults are
spelled out where the schema's default is not zero, and for every enum-typed field (so the table
reads like the schema).  ``since`` is the operator version that introduced the field, where the
schema comments (or the op's version history) say so.

Several operators share one table: Pool2DOptions serves AVERAGE_POOL_2D, MAX_POOL_2D and
L2_POOL_2D; ReducerOptions serves MEAN, SUM, REDUCE_PROD/MAX/MIN/ANY/ALL; MaximumMinimumOptions
serves MAXIMUM and MINIMUM; Conv3DOptions serves CONV_3D and CONV_3D_TRANSPOSE.

Facts: the schema as shipped with the current LiteRT release (``ai_edge_litert``), cross-checked
field by field in ``tests/schema/test_schema_declarations.py``.
"""

from __future__ import annotations

from .declare import (
    BOOL,
    FLOAT32,
    INT8,
    INT32,
    INT64,
    STRING,
    UINT32,
    Bytes,
    Enum,
    Field,
    Vector,
    table,
    union,
)
from .enums import (
    ActivationFunctionType,
    BuiltinOptions,
    BuiltinOptions2,
    CombinerType,
    CustomOptionsFormat,
    FullyConnectedOptionsWeightsFormat,
    LSHProjectionType,
    LSTMKernelType,
    MirrorPadMode,
    Padding,
    ReduceWindowFunction,
    RngAlgorithm,
    StablehloComparisonDirection,
    StablehloComparisonType,
    StablehloPrecisionConfig,
    TensorType,
)

# Enum types with their storage scalar (schema ``byte`` = INT8, ``int`` = INT32, ``uint`` = UINT32).
PADDING = Enum(Padding, INT8)
ACTIVATION = Enum(ActivationFunctionType, INT8)
TENSOR_TYPE = Enum(TensorType, INT8)
WEIGHTS_FORMAT = Enum(FullyConnectedOptionsWeightsFormat, INT8)
LSTM_KERNEL = Enum(LSTMKernelType, INT8)
LSH_TYPE = Enum(LSHProjectionType, INT8)
COMBINER = Enum(CombinerType, INT8)
MIRROR_PAD_MODE = Enum(MirrorPadMode, INT8)
RNG_ALGORITHM = Enum(RngAlgorithm, INT8)
OPTIONS_FORMAT = Enum(CustomOptionsFormat, INT8)
REDUCE_FUNCTION = Enum(ReduceWindowFunction, INT32)
COMPARISON_DIRECTION = Enum(StablehloComparisonDirection, UINT32)
COMPARISON_TYPE = Enum(StablehloComparisonType, UINT32)
PRECISION = Enum(StablehloPrecisionConfig, UINT32)

LONGS = Vector(INT64)  # [long]: StableHLO dimension lists
INTS = Vector(INT32)  # [int]


def padding(id: int, **kw) -> Field:
    return Field(id, "padding", PADDING, Padding.SAME, **kw)


def activation(id: int, **kw) -> Field:
    return Field(id, "fused_activation_function", ACTIVATION, ActivationFunctionType.NONE, **kw)


def bias_type(id: int, since: int) -> Field:
    return Field(
        id, "quantized_bias_type", TENSOR_TYPE, TensorType.FLOAT32, since=since,
        doc="dtype of bias and accumulator for quantized kernels; absent means FLOAT32 (= not set)",
    )


# --------------------------------------------------------------------------------------------
# Convolution and pooling

table(
    "Conv2DOptions",
    padding(0),
    Field(1, "stride_w", INT32),
    Field(2, "stride_h", INT32),
    activation(3),
    Field(4, "dilation_w_factor", INT32, 1),
    Field(5, "dilation_h_factor", INT32, 1),
    bias_type(6, since=8),
)

table(
    "DepthwiseConv2DOptions",
    padding(0),
    Field(1, "stride_w", INT32),
    Field(2, "stride_h", INT32),
    Field(3, "depth_multiplier", INT32,
          doc="redundant: used by CPU kernels up to TF 2.0, ignored since (output channels come "
              "from the filter shape)"),
    activation(4),
    Field(5, "dilation_w_factor", INT32, 1, since=2),
    Field(6, "dilation_h_factor", INT32, 1, since=2),
)

table(
    "Conv3DOptions",
    padding(0),
    Field(1, "stride_d", INT32),
    Field(2, "stride_w", INT32),
    Field(3, "stride_h", INT32),
    activation(4),
    Field(5, "dilation_d_factor", INT32, 1),
    Field(6, "dilation_w_factor", INT32, 1),
    Field(7, "dilation_h_factor", INT32, 1),
    doc="Options of CONV_3D and CONV_3D_TRANSPOSE.",
)

table(
    "TransposeConvOptions",
    padding(0),
    Field(1, "stride_w", INT32),
    Field(2, "stride_h", INT32),
    activation(3, since=4),
    bias_type(4, since=5),
)

table(
    "Pool2DOptions",
    padding(0),
    Field(1, "stride_w", INT32),
    Field(2, "stride_h", INT32),
    Field(3, "filter_width", INT32),
    Field(4, "filter_height", INT32),
    activation(5),
    doc="Options of AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D.",
)

# --------------------------------------------------------------------------------------------
# Fully connected and matrix multiplication

table(
    "FullyConnectedOptions",
    activation(0),
    Field(1, "weights_format", WEIGHTS_FORMAT, FullyConnectedOptionsWeightsFormat.DEFAULT, since=2),
    Field(2, "keep_num_dims", BOOL, since=5,
          doc="keep the input rank: all but the last output dimension equal the input's"),
    Field(3, "asymmetric_quantize_inputs", BOOL, since=7,
          doc="hybrid (weights-only) kernels quantize inputs asymmetrically; the schema says "
              "version 7, op_version.cc assigns version 9 when it is set"),
    bias_type(4, since=11),
    Field(5, "quant_spec", Bytes(),
          doc="opaque quantization spec bytes; only in the newest schema (not in schema.fbs copies "
              "before it)"),
)

table(
    "BatchMatMulOptions",
    Field(0, "adj_x", BOOL, doc="use the adjoint (transpose) of x"),
    Field(1, "adj_y", BOOL, doc="use the adjoint (transpose) of y"),
    Field(2, "asymmetric_quantize_inputs", BOOL, since=4),
)

# --------------------------------------------------------------------------------------------
# Element-wise arithmetic, comparison and logic

table(
    "AddOptions",
    activation(0),
    Field(1, "pot_scale_int16", BOOL, True, since=3,
          doc="int16 kernels: require power-of-two scales (true) or use the general path (false)"),
)
table(
    "SubOptions",
    activation(0),
    Field(1, "pot_scale_int16", BOOL, True, since=5,
          doc="int16 kernels: require power-of-two scales (true) or use the general path (false)"),
)
table("MulOptions", activation(0))
table("DivOptions", activation(0))
table("PowOptions")
table("SquaredDifferenceOptions")
table("FloorDivOptions")
table("FloorModOptions")
table("MaximumMinimumOptions", doc="Options of MAXIMUM and MINIMUM.")
table("AddNOptions")
table("ATan2Options")
table("AbsOptions")
table("NegOptions")
table("SignOptions")
table("ExpOptions")
table("CosOptions")
table("SquareOptions")
table("BitwiseXorOptions")
table("RightShiftOptions")
table("LogicalAndOptions")
table("LogicalOrOptions")
table("LogicalNotOptions")
table("EqualOptions")
table("NotEqualOptions")
table("LessOptions")
table("LessEqualOptions")
table("GreaterOptions")
table("GreaterEqualOptions")
table("SelectOptions")
table("SelectV2Options")

# --------------------------------------------------------------------------------------------
# Activations and normalisation

table("SoftmaxOptions", Field(0, "beta", FLOAT32, doc="logit multiplier; absent = 0.0, not 1.0"))
table("LogSoftmaxOptions")
table("LeakyReluOptions", Field(0, "alpha", FLOAT32, doc="slope for x < 0; absent means 0.0"))
table("HardSwishOptions")
table("GeluOptions", Field(0, "approximate", BOOL, doc="use the tanh approximation"))
table("L2NormOptions", activation(0, doc="ignored by the L2 normalisation kernels"))
table(
    "LocalResponseNormalizationOptions",
    Field(0, "radius", INT32),
    Field(1, "bias", FLOAT32),
    Field(2, "alpha", FLOAT32),
    Field(3, "beta", FLOAT32),
)

# --------------------------------------------------------------------------------------------
# Shape, layout and data movement

table("ReshapeOptions", Field(0, "new_shape", INTS, doc="the shape may instead come from input 1"))
table("SqueezeOptions", Field(0, "squeeze_dims", INTS, doc="empty: squeeze every size-1 axis"))
table("ExpandDimsOptions")
table("TransposeOptions")
table(
    "ConcatenationOptions",
    Field(0, "axis", INT32),
    activation(1),
)
table(
    "PackOptions",
    Field(0, "values_count", INT32),
    Field(1, "axis", INT32),
)
table(
    "UnpackOptions",
    Field(0, "num", INT32),
    Field(1, "axis", INT32),
)
table("SplitOptions", Field(0, "num_splits", INT32))
table("SplitVOptions", Field(0, "num_splits", INT32))
table("SliceOptions")
table(
    "StridedSliceOptions",
    Field(0, "begin_mask", INT32),
    Field(1, "end_mask", INT32),
    Field(2, "ellipsis_mask", INT32),
    Field(3, "new_axis_mask", INT32),
    Field(4, "shrink_axis_mask", INT32),
    Field(5, "offset", BOOL, since=8, doc="the end tensor is an offset from begin"),
)
table("TileOptions")
table("PadOptions")
table("PadV2Options")
table("MirrorPadOptions", Field(0, "mode", MIRROR_PAD_MODE, MirrorPadMode.REFLECT))
table("SpaceToDepthOptions", Field(0, "block_size", INT32))
table("DepthToSpaceOptions", Field(0, "block_size", INT32))
table("SpaceToBatchNDOptions")
table("BatchToSpaceNDOptions")
table("ShapeOptions", Field(0, "out_type", TENSOR_TYPE, TensorType.FLOAT32,
                            doc="INT32 or INT64; the schema comment says int32 by default, but the "
                                "stored default is 0 = FLOAT32"))
table("RankOptions")
table("BroadcastToOptions")
table("FillOptions")
table("ZerosLikeOptions")
table("ReverseV2Options")
table(
    "ReverseSequenceOptions",
    Field(0, "seq_dim", INT32),
    Field(1, "batch_dim", INT32),
)
table("MatrixDiagOptions")
table("MatrixSetDiagOptions")
table(
    "ResizeBilinearOptions",
    Field(0, "new_height", INT32, deprecated=True, doc="deprecated: the size comes from input 1"),
    Field(1, "new_width", INT32, deprecated=True, doc="deprecated: the size comes from input 1"),
    Field(2, "align_corners", BOOL),
    Field(3, "half_pixel_centers", BOOL, since=3),
)
table(
    "ResizeNearestNeighborOptions",
    Field(0, "align_corners", BOOL, since=3, doc="op_version assigns 3 when either flag is set"),
    Field(1, "half_pixel_centers", BOOL, since=3),
)

# --------------------------------------------------------------------------------------------
# Gather, scatter, indexing and sorting

table(
    "GatherOptions",
    Field(0, "axis", INT32),
    Field(1, "batch_dims", INT32, since=5),
)
table("GatherNdOptions")
table("ScatterNdOptions")
table("DynamicUpdateSliceOptions")
table("WhereOptions")
table("OneHotOptions", Field(0, "axis", INT32))
table("ArgMaxOptions", Field(0, "output_type", TENSOR_TYPE, TensorType.FLOAT32))
table("ArgMinOptions", Field(0, "output_type", TENSOR_TYPE, TensorType.FLOAT32))
table("TopKV2Options")
table("UniqueOptions", Field(0, "idx_out_type", TENSOR_TYPE, TensorType.INT32))
table("SparseToDenseOptions", Field(0, "validate_indices", BOOL))
table("NonMaxSuppressionV4Options")
table("NonMaxSuppressionV5Options")
table(
    "CumsumOptions",
    Field(0, "exclusive", BOOL),
    Field(1, "reverse", BOOL),
)
table("BucketizeOptions", Field(0, "boundaries", Vector(FLOAT32), doc="the bucket boundaries"))
table("RangeOptions")
table("DensifyOptions")

# --------------------------------------------------------------------------------------------
# Reductions and segment operations

table("ReducerOptions", Field(0, "keep_dims", BOOL),
      doc="Options of MEAN, SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, REDUCE_ANY and REDUCE_ALL.")
table("SegmentSumOptions")
table("UnsortedSegmentProdOptions")
table("UnsortedSegmentMaxOptions")
table("UnsortedSegmentMinOptions")
table("UnsortedSegmentSumOptions")

# --------------------------------------------------------------------------------------------
# Type conversion and quantisation

table(
    "CastOptions",
    Field(0, "in_data_type", TENSOR_TYPE, TensorType.FLOAT32),
    Field(1, "out_data_type", TENSOR_TYPE, TensorType.FLOAT32),
)
table("QuantizeOptions")
table("DequantizeOptions")
table(
    "FakeQuantOptions",
    Field(0, "min", FLOAT32),
    Field(1, "max", FLOAT32),
    Field(2, "num_bits", INT32),
    Field(3, "narrow_range", BOOL, since=2),
)
table("BitcastOptions")

# --------------------------------------------------------------------------------------------
# Recurrent networks

table(
    "SVDFOptions",
    Field(0, "rank", INT32),
    activation(1),
    Field(2, "asymmetric_quantize_inputs", BOOL),
)
table(
    "RNNOptions",
    activation(0),
    Field(1, "asymmetric_quantize_inputs", BOOL),
)
table(
    "SequenceRNNOptions",
    Field(0, "time_major", BOOL),
    activation(1),
    Field(2, "asymmetric_quantize_inputs", BOOL),
)
table(
    "BidirectionalSequenceRNNOptions",
    Field(0, "time_major", BOOL),
    activation(1),
    Field(2, "merge_outputs", BOOL),
    Field(3, "asymmetric_quantize_inputs", BOOL),
)
table(
    "LSTMOptions",
    activation(0),
    Field(1, "cell_clip", FLOAT32, doc="0.0 means no clipping"),
    Field(2, "proj_clip", FLOAT32, doc="0.0 means no clipping"),
    Field(3, "kernel_type", LSTM_KERNEL, LSTMKernelType.FULL, since=2),
    Field(4, "asymmetric_quantize_inputs", BOOL, since=4),
)
table(
    "UnidirectionalSequenceLSTMOptions",
    activation(0),
    Field(1, "cell_clip", FLOAT32, doc="0.0 means no clipping"),
    Field(2, "proj_clip", FLOAT32, doc="0.0 means no clipping"),
    Field(3, "time_major", BOOL, doc="true: the first dimension is time, else batch"),
    Field(4, "asymmetric_quantize_inputs", BOOL, since=3),
    Field(5, "diagonal_recurrent_tensors", BOOL, since=4,
          doc="the schema comment says 'unidirectional sequence RNN version 4' (sic, this table)"),
)
table(
    "BidirectionalSequenceLSTMOptions",
    activation(0),
    Field(1, "cell_clip", FLOAT32, doc="0.0 means no clipping"),
    Field(2, "proj_clip", FLOAT32, doc="0.0 means no clipping"),
    Field(3, "merge_outputs", BOOL, doc="store both directions' outputs in the first output"),
    Field(4, "time_major", BOOL, True, since=2,
          doc="default true because version 1 kernels assumed time-major input"),
    Field(5, "asymmetric_quantize_inputs", BOOL, since=3),
)

# --------------------------------------------------------------------------------------------
# Embeddings, hashing, random numbers and other legacy ops

table(
    "ConcatEmbeddingsOptions",
    Field(0, "num_channels", INT32),
    Field(1, "num_columns_per_channel", INTS),
    Field(2, "embedding_dim_per_channel", INTS),
)
table("LSHProjectionOptions", Field(0, "type", LSH_TYPE, LSHProjectionType.UNKNOWN))
table(
    "SkipGramOptions",
    Field(0, "ngram_size", INT32),
    Field(1, "max_skip_size", INT32),
    Field(2, "include_all_ngrams", BOOL),
)
table("EmbeddingLookupSparseOptions", Field(0, "combiner", COMBINER, CombinerType.SUM))
table(
    "HashtableOptions",
    Field(0, "table_id", INT32, doc="identifies the table across subgraphs of one interpreter"),
    Field(1, "key_dtype", TENSOR_TYPE, TensorType.FLOAT32),
    Field(2, "value_dtype", TENSOR_TYPE, TensorType.FLOAT32),
)
table("HashtableFindOptions")
table("HashtableImportOptions")
table("HashtableSizeOptions")
table(
    "RandomOptions",
    Field(0, "seed", INT64),
    Field(1, "seed2", INT64),
)
table("Rfft2dOptions")

# --------------------------------------------------------------------------------------------
# Control flow and resource variables

table("CallOptions", Field(0, "subgraph", UINT32, doc="index of the subgraph to call"))
table(
    "IfOptions",
    Field(0, "then_subgraph_index", INT32),
    Field(1, "else_subgraph_index", INT32),
)
table(
    "WhileOptions",
    Field(0, "cond_subgraph_index", INT32),
    Field(1, "body_subgraph_index", INT32),
)
table("CallOnceOptions", Field(0, "init_subgraph_index", INT32))
table(
    "VarHandleOptions",
    Field(0, "container", STRING),
    Field(1, "shared_name", STRING),
)
table("ReadVariableOptions")
table("AssignVariableOptions")

# --------------------------------------------------------------------------------------------
# BuiltinOptions2: StableHLO and later ops (dimension lists are [long])

table("StablehloConcatenateOptions", Field(0, "dimension", INT64))
table("StablehloBroadcastInDimOptions", Field(0, "broadcast_dimensions", LONGS))
table(
    "StablehloSliceOptions",
    Field(0, "start_indices", LONGS),
    Field(1, "limit_indices", LONGS),
    Field(2, "strides", LONGS),
)
table(
    "StablehloConvolutionOptions",
    Field(0, "window_strides", LONGS),
    Field(1, "padding", LONGS),
    Field(2, "lhs_dilation", LONGS),
    Field(3, "rhs_dilation", LONGS),
    Field(4, "window_reversal", Vector(BOOL)),
    Field(5, "input_batch_dimension", INT64),
    Field(6, "input_feature_dimension", INT64),
    Field(7, "input_spatial_dimensions", LONGS),
    Field(8, "kernel_input_feature_dimension", INT64),
    Field(9, "kernel_output_feature_dimension", INT64),
    Field(10, "kernel_spatial_dimensions", LONGS),
    Field(11, "output_batch_dimension", INT64),
    Field(12, "output_feature_dimension", INT64),
    Field(13, "output_spatial_dimensions", LONGS),
    Field(14, "feature_group_count", INT64),
    Field(15, "batch_group_count", INT64),
    Field(16, "precision_config", Vector(PRECISION)),
)
table(
    "StablehloCustomCallOptions",
    Field(0, "call_target_name", STRING),
    Field(1, "has_side_effect", BOOL),
    Field(2, "backend_config", STRING),
    Field(3, "api_version", INT32, doc="to be deprecated, says the schema"),
    Field(4, "called_computations", INTS, doc="subgraph indices of the called computations"),
    Field(5, "custom_attributes", Bytes()),
)
table(
    "StablehloReduceOptions",
    Field(0, "dimensions", LONGS),
    Field(1, "body_subgraph_index", INT32),
)
table(
    "StablehloScatterOptions",
    Field(0, "indices_are_sorted", BOOL),
    Field(1, "update_window_dims", LONGS),
    Field(2, "inserted_window_dims", LONGS),
    Field(3, "scatter_dims_to_operand_dims", LONGS),
    Field(4, "index_vector_dim", INT64),
    Field(5, "unique_indices", BOOL),
    Field(6, "update_computation_subgraph_index", INT32),
)
table(
    "StablehloCompareOptions",
    Field(0, "comparison_direction", COMPARISON_DIRECTION,
          StablehloComparisonDirection.STABLEHLO_COMPARISON_DIRECTION_EQ),
    Field(1, "compare_type", COMPARISON_TYPE,
          StablehloComparisonType.STABLEHLO_COMPARISON_TYPE_NOTYPE),
)
table("StablehloDynamicSliceOptions", Field(0, "slice_sizes", LONGS))
table(
    "StablehloPadOptions",
    Field(0, "edge_padding_low", LONGS),
    Field(1, "edge_padding_high", LONGS),
    Field(2, "interior_padding", LONGS),
)
table("StablehloIotaOptions", Field(0, "iota_dimension", INT64))
table(
    "StablehloDotGeneralOptions",
    Field(0, "lhs_batching_dimensions", LONGS),
    Field(1, "rhs_batching_dimensions", LONGS),
    Field(2, "lhs_contracting_dimensions", LONGS),
    Field(3, "rhs_contracting_dimensions", LONGS),
    Field(4, "precision_config", Vector(PRECISION)),
)
table(
    "StablehloReduceWindowOptions",
    Field(0, "window_dimensions", LONGS),
    Field(1, "window_strides", LONGS),
    Field(2, "base_dilations", LONGS),
    Field(3, "window_dilations", LONGS),
    Field(4, "padding", LONGS),
    Field(5, "body_subgraph_index", INT32),
)
table(
    "StablehloSortOptions",
    Field(0, "dimension", INT64),
    Field(1, "is_stable", BOOL),
    Field(2, "comparator_subgraph_index", INT32),
)
table(
    "StablehloWhileOptions",
    Field(0, "cond_subgraph_index", INT32),
    Field(1, "body_subgraph_index", INT32),
)
table(
    "StablehloGatherOptions",
    Field(0, "offset_dims", LONGS),
    Field(1, "collapsed_slice_dims", LONGS),
    Field(2, "start_index_map", LONGS),
    Field(3, "index_vector_dim", INT64),
    Field(4, "slice_sizes", LONGS),
    Field(5, "indices_are_sorted", BOOL),
)
table("StablehloTransposeOptions", Field(0, "permutation", LONGS))
table("DilateOptions")
table("StablehloRngBitGeneratorOptions", Field(0, "algorithm", RNG_ALGORITHM, RngAlgorithm.DEFAULT))
table(
    "ReduceWindowOptions",
    Field(0, "reduce_function", REDUCE_FUNCTION, ReduceWindowFunction.UNSUPPORTED),
    doc="Options of REDUCE_WINDOW; the table (and the op) are marked deprecated in the schema.",
)
table(
    "StableHLOCompositeOptions",
    Field(0, "name", STRING),
    Field(1, "decomposition_subgraph_index", INT32),
    Field(2, "composite_attributes", Bytes(), doc="attributes, in composite_attributes_format"),
    Field(3, "composite_attributes_format", OPTIONS_FORMAT, CustomOptionsFormat.FLEXBUFFERS),
    Field(4, "version", INT32),
)
table("StablehloShiftLeftOptions")
table("StablehloCaseOptions", Field(0, "branch_subgraph_indices", INTS))

# --------------------------------------------------------------------------------------------
# The unions: tag value -> table name (tag 0 is NONE).  BuiltinOptions is frozen at 126 members;
# new options go into BuiltinOptions2.

union("BuiltinOptions", BuiltinOptions, {
    1: "Conv2DOptions",
    2: "DepthwiseConv2DOptions",
    3: "ConcatEmbeddingsOptions",
    4: "LSHProjectionOptions",
    5: "Pool2DOptions",
    6: "SVDFOptions",
    7: "RNNOptions",
    8: "FullyConnectedOptions",
    9: "SoftmaxOptions",
    10: "ConcatenationOptions",
    11: "AddOptions",
    12: "L2NormOptions",
    13: "LocalResponseNormalizationOptions",
    14: "LSTMOptions",
    15: "ResizeBilinearOptions",
    16: "CallOptions",
    17: "ReshapeOptions",
    18: "SkipGramOptions",
    19: "SpaceToDepthOptions",
    20: "EmbeddingLookupSparseOptions",
    21: "MulOptions",
    22: "PadOptions",
    23: "GatherOptions",
    24: "BatchToSpaceNDOptions",
    25: "SpaceToBatchNDOptions",
    26: "TransposeOptions",
    27: "ReducerOptions",
    28: "SubOptions",
    29: "DivOptions",
    30: "SqueezeOptions",
    31: "SequenceRNNOptions",
    32: "StridedSliceOptions",
    33: "ExpOptions",
    34: "TopKV2Options",
    35: "SplitOptions",
    36: "LogSoftmaxOptions",
    37: "CastOptions",
    38: "DequantizeOptions",
    39: "MaximumMinimumOptions",
    40: "ArgMaxOptions",
    41: "LessOptions",
    42: "NegOptions",
    43: "PadV2Options",
    44: "GreaterOptions",
    45: "GreaterEqualOptions",
    46: "LessEqualOptions",
    47: "SelectOptions",
    48: "SliceOptions",
    49: "TransposeConvOptions",
    50: "SparseToDenseOptions",
    51: "TileOptions",
    52: "ExpandDimsOptions",
    53: "EqualOptions",
    54: "NotEqualOptions",
    55: "ShapeOptions",
    56: "PowOptions",
    57: "ArgMinOptions",
    58: "FakeQuantOptions",
    59: "PackOptions",
    60: "LogicalOrOptions",
    61: "OneHotOptions",
    62: "LogicalAndOptions",
    63: "LogicalNotOptions",
    64: "UnpackOptions",
    65: "FloorDivOptions",
    66: "SquareOptions",
    67: "ZerosLikeOptions",
    68: "FillOptions",
    69: "BidirectionalSequenceLSTMOptions",
    70: "BidirectionalSequenceRNNOptions",
    71: "UnidirectionalSequenceLSTMOptions",
    72: "FloorModOptions",
    73: "RangeOptions",
    74: "ResizeNearestNeighborOptions",
    75: "LeakyReluOptions",
    76: "SquaredDifferenceOptions",
    77: "MirrorPadOptions",
    78: "AbsOptions",
    79: "SplitVOptions",
    80: "UniqueOptions",
    81: "ReverseV2Options",
    82: "AddNOptions",
    83: "GatherNdOptions",
    84: "CosOptions",
    85: "WhereOptions",
    86: "RankOptions",
    87: "ReverseSequenceOptions",
    88: "MatrixDiagOptions",
    89: "QuantizeOptions",
    90: "MatrixSetDiagOptions",
    91: "HardSwishOptions",
    92: "IfOptions",
    93: "WhileOptions",
    94: "DepthToSpaceOptions",
    95: "NonMaxSuppressionV4Options",
    96: "NonMaxSuppressionV5Options",
    97: "ScatterNdOptions",
    98: "SelectV2Options",
    99: "DensifyOptions",
    100: "SegmentSumOptions",
    101: "BatchMatMulOptions",
    102: "CumsumOptions",
    103: "CallOnceOptions",
    104: "BroadcastToOptions",
    105: "Rfft2dOptions",
    106: "Conv3DOptions",
    107: "HashtableOptions",
    108: "HashtableFindOptions",
    109: "HashtableImportOptions",
    110: "HashtableSizeOptions",
    111: "VarHandleOptions",
    112: "ReadVariableOptions",
    113: "AssignVariableOptions",
    114: "RandomOptions",
    115: "BucketizeOptions",
    116: "GeluOptions",
    117: "DynamicUpdateSliceOptions",
    118: "UnsortedSegmentProdOptions",
    119: "UnsortedSegmentMaxOptions",
    120: "UnsortedSegmentMinOptions",
    121: "UnsortedSegmentSumOptions",
    122: "ATan2Options",
    123: "SignOptions",
    124: "BitcastOptions",
    125: "BitwiseXorOptions",
    126: "RightShiftOptions",
})

union("BuiltinOptions2", BuiltinOptions2, {
    1: "StablehloConcatenateOptions",
    2: "StablehloBroadcastInDimOptions",
    3: "StablehloSliceOptions",
    4: "StablehloConvolutionOptions",
    5: "StablehloCustomCallOptions",
    6: "StablehloReduceOptions",
    7: "StablehloScatterOptions",
    8: "StablehloCompareOptions",
    9: "StablehloDynamicSliceOptions",
    10: "StablehloPadOptions",
    11: "StablehloIotaOptions",
    12: "StablehloDotGeneralOptions",
    13: "StablehloReduceWindowOptions",
    14: "StablehloSortOptions",
    15: "StablehloWhileOptions",
    16: "StablehloGatherOptions",
    17: "StablehloTransposeOptions",
    18: "DilateOptions",
    19: "StablehloRngBitGeneratorOptions",
    20: "ReduceWindowOptions",
    21: "StableHLOCompositeOptions",
    22: "StablehloShiftLeftOptions",
    23: "StablehloCaseOptions",
})

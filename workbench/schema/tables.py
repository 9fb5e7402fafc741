"""The core tables of the TFLite schema (Model, SubGraph, Tensor, Operator, ...).

Each line is one schema field: slot id, name in the schema's spelling, type, default, and — for
options fields — the op version that introduced it.  The options tables of the two builtin-options
unions live in :mod:`workbench.schema.options_tables`.
"""

from __future__ import annotations

from . import options_tables  # noqa: F401  (registers the options tables and unions)
from .declare import (
    BOOL,
    FLOAT32,
    INT8,
    INT32,
    INT64,
    STRING,
    UINT16,
    UINT32,
    UINT64,
    Bytes,
    Enum,
    TableRef,
    UnionRef,
    Vector,
    table,
    union,
)
from .declare import CLASSES as CLASSES  # each table's class, made when first asked for
from .declare import (
    Field as F,
)
from .enums import (
    BuiltinOperator,
    CustomOptionsFormat,
    DimensionType,
    QuantizationDetails,
    SparseIndexVector,
    TensorType,
)

TENSOR_TYPE = Enum(TensorType, INT8)

# --- quantization -------------------------------------------------------------------------------
table("CustomQuantization",
      F(0, "custom", Bytes(16)),
      doc="Opaque parameters of an experimental quantization scheme.")
table("BlockwiseQuantization",
      F(0, "scales", INT32, doc="index of the tensor holding the per-block scales"),
      F(1, "zero_points", INT32, doc="index of the tensor holding zero points (-1: none)"),
      F(2, "block_size", INT32),
      F(3, "block_shape", Vector(INT32)),
      doc="Block-wise quantization: scales and zero points live in other tensors.")
table("MultiAxisQuantization",
      F(0, "scales", INT32),
      F(1, "zero_points", INT32),
      F(2, "block_size", INT32),
      F(3, "quantized_dimensions", Vector(INT32)))
union("QuantizationDetails", QuantizationDetails,
      {1: "CustomQuantization", 2: "BlockwiseQuantization", 3: "MultiAxisQuantization"})

table("QuantizationParameters",
      F(0, "min", Vector(FLOAT32), doc="for importing back into TensorFlow"),
      F(1, "max", Vector(FLOAT32), doc="for importing back into TensorFlow"),
      F(2, "scale", Vector(FLOAT32), doc="real = scale * (q - zero_point)"),
      F(3, "zero_point", Vector(INT64), doc="int64 in the file; the runtime keeps int32"),
      F(4, "details", UnionRef("QuantizationDetails"), doc="if set, the affine fields are ignored"),
      F(6, "quantized_dimension", INT32, doc="axis the per-channel scales run along"),
      doc="Affine quantization: real = scale * (q - zero_point), per tensor or per axis.")

# --- sparsity -----------------------------------------------------------------------------------
table("Int32Vector", F(0, "values", Vector(INT32)))
table("Uint16Vector", F(0, "values", Vector(UINT16)))
table("Uint8Vector", F(0, "values", Bytes(4)))
union("SparseIndexVector", SparseIndexVector, {1: "Int32Vector", 2: "Uint16Vector", 3: "Uint8Vector"})

table("DimensionMetadata",
      F(0, "format", Enum(DimensionType, INT8)),
      F(1, "dense_size", INT32),
      F(2, "array_segments", UnionRef("SparseIndexVector")),
      F(4, "array_indices", UnionRef("SparseIndexVector")),
      doc="One dimension of a sparse tensor: dense (size) or CSR (segments + indices).")
table("SparsityParameters",
      F(0, "traversal_order", Vector(INT32)),
      F(1, "block_map", Vector(INT32)),
      F(2, "dim_metadata", Vector(TableRef("DimensionMetadata"))),
      doc="A sparse tensor in a TACO-like format (DENSIFY turns it back into a dense one).")

# --- tensors ------------------------------------------------------------------------------------
table("VariantSubType",
      F(0, "shape", Vector(INT32)),
      F(1, "type", TENSOR_TYPE),
      F(2, "has_rank", BOOL))

table("Tensor",
      F(0, "shape", Vector(INT32), doc="NHWC for image ops, row-major data"),
      F(1, "type", TENSOR_TYPE),
      F(2, "buffer", UINT32, doc="index into Model.buffers; 0 = no data (the empty sentinel)"),
      F(3, "name", STRING),
      F(4, "quantization", TableRef("QuantizationParameters")),
      F(5, "is_variable", BOOL),
      F(6, "sparsity", TableRef("SparsityParameters")),
      F(7, "shape_signature", Vector(INT32), doc="shape with -1 for unknown dimensions"),
      F(8, "has_rank", BOOL, doc="tells a scalar (shape [] + has_rank) from an unknown rank"),
      F(9, "variant_tensors", Vector(TableRef("VariantSubType"))),
      F(10, "external_buffer", UINT32, doc="index into Model.external_buffers (0: none)"))

# --- operators ----------------------------------------------------------------------------------
table("OperatorCode",
      F(0, "deprecated_builtin_code", INT8,
        doc="the code as int8; 127 (PLACEHOLDER_FOR_GREATER_OP_CODES) when it does not fit"),
      F(1, "custom_code", STRING),
      F(2, "version", INT32, default=1),
      F(3, "builtin_code", Enum(BuiltinOperator, INT32),
        doc="effective code = max(builtin_code, deprecated_builtin_code)"))

table("Operator",
      F(0, "opcode_index", UINT32),
      F(1, "inputs", Vector(INT32), doc="-1 marks an omitted optional input"),
      F(2, "outputs", Vector(INT32)),
      F(3, "builtin_options", UnionRef("BuiltinOptions")),
      F(5, "custom_options", Bytes()),
      F(6, "custom_options_format", Enum(CustomOptionsFormat, INT8)),
      F(7, "mutating_variable_inputs", Vector(BOOL)),
      F(8, "intermediates", Vector(INT32)),
      F(9, "large_custom_options_offset", UINT64, doc="models > 2 GB: from file start, valid if > 1"),
      F(10, "large_custom_options_size", UINT64),
      F(11, "builtin_options_2", UnionRef("BuiltinOptions2")),
      F(13, "debug_metadata_index", INT32, default=-1))

table("SubGraph",
      F(0, "tensors", Vector(TableRef("Tensor"))),
      F(1, "inputs", Vector(INT32)),
      F(2, "outputs", Vector(INT32)),
      F(3, "operators", Vector(TableRef("Operator")), doc="in execution order"),
      F(4, "name", STRING),
      F(5, "debug_metadata_index", INT32, default=-1))

# --- buffers, metadata, signatures --------------------------------------------------------------
table("Buffer",
      F(0, "data", Bytes(16)),
      F(1, "offset", UINT64, doc="data stored after the FlatBuffer (> 2 GB models): file offset, valid if > 1"),
      F(2, "size", UINT64))
table("Metadata", F(0, "name", STRING), F(1, "buffer", UINT32))
table("TensorMap", F(0, "name", STRING), F(1, "tensor_index", UINT32))
table("SignatureDef",
      F(0, "inputs", Vector(TableRef("TensorMap"))),
      F(1, "outputs", Vector(TableRef("TensorMap"))),
      F(2, "signature_key", STRING),
      F(3, "deprecated_tag", STRING, deprecated=True),
      F(4, "subgraph_index", UINT32))
table("ExternalBufferGroup", F(0, "name", STRING))
table("ExternalBuffer",
      F(0, "id", UINT32),
      F(1, "group", UINT32),
      F(2, "offset", UINT64),
      F(3, "length", UINT64),
      F(4, "packing", STRING))

table("Model",
      F(0, "version", UINT32, doc="schema version; must be 3"),
      F(1, "operator_codes", Vector(TableRef("OperatorCode"))),
      F(2, "subgraphs", Vector(TableRef("SubGraph")), doc="subgraph 0 is the main graph"),
      F(3, "description", STRING),
      F(4, "buffers", Vector(TableRef("Buffer")), doc="entry 0 must be the empty sentinel"),
      F(5, "metadata_buffer", Vector(INT32), doc="deprecated in favour of metadata"),
      F(6, "metadata", Vector(TableRef("Metadata"))),
      F(7, "signature_defs", Vector(TableRef("SignatureDef"))),
      F(8, "external_buffer_groups", Vector(TableRef("ExternalBufferGroup"))),
      F(9, "external_buffers", Vector(TableRef("ExternalBuffer"))))

"""Tiny models built in code with the workbench's own schema classes.

``add_fc_model()`` is a runnable float graph: ``y = FullyConnected(x + c, W, b)`` (4 → 3).
``feature_model()`` adds, on top of it, one of nearly every structure the schema has, so mutating
its bytes reaches every kind of reader path in a few kilobytes: per-axis int8 quantization, custom
quantization details, two sparse tensors (CSR with Int32Vector, Uint8Vector and Uint16Vector index vectors), a
CUSTOM op with flexbuffer options, an op with ``builtin_options_2``, strings, a signature and
metadata.
"""

from __future__ import annotations

import numpy as np

from workbench import dump
from workbench.schema import (
    AddOptions,
    Buffer,
    BuiltinOperator,
    BuiltinOptions,
    BuiltinOptions2,
    CustomQuantization,
    DimensionMetadata,
    DimensionType,
    FullyConnectedOptions,
    Int32Vector,
    Metadata,
    Model,
    Operator,
    OperatorCode,
    QuantizationDetails,
    QuantizationParameters,
    SignatureDef,
    SparseIndexVector,
    SparsityParameters,
    StablehloConcatenateOptions,
    SubGraph,
    Tensor,
    TensorMap,
    TensorType,
    Uint8Vector,
    Uint16Vector,
)


def _f32(values) -> bytes:
    return np.asarray(values, dtype="<f4").tobytes()


def _opcode(code: BuiltinOperator, version: int = 1, custom: str | None = None) -> OperatorCode:
    return OperatorCode(deprecated_builtin_code=min(int(code), 127), builtin_code=code,
                        version=version, custom_code=custom)


def add_fc_model() -> Model:
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, (3, 4)).astype("<f4")
    buffers = (Buffer(), Buffer(data=_f32([0.5, -0.25, 1.0, 2.0])), Buffer(data=w.tobytes()),
               Buffer(data=_f32([0.1, 0.2, 0.3])), Buffer(), Buffer())
    tensors = (
        Tensor(shape=(1, 4), type=TensorType.FLOAT32, buffer=4, name="x", shape_signature=(-1, 4)),
        Tensor(shape=(1, 4), type=TensorType.FLOAT32, buffer=1, name="c"),
        Tensor(shape=(1, 4), type=TensorType.FLOAT32, buffer=0, name="x_plus_c"),
        Tensor(shape=(3, 4), type=TensorType.FLOAT32, buffer=2, name="W"),
        Tensor(shape=(3,), type=TensorType.FLOAT32, buffer=3, name="b"),
        Tensor(shape=(1, 3), type=TensorType.FLOAT32, buffer=5, name="y"),
    )
    ops = (
        Operator(opcode_index=0, inputs=(0, 1), outputs=(2,),
                 builtin_options_type=BuiltinOptions.AddOptions, builtin_options=AddOptions()),
        Operator(opcode_index=1, inputs=(2, 3, 4), outputs=(5,),
                 builtin_options_type=BuiltinOptions.FullyConnectedOptions,
                 builtin_options=FullyConnectedOptions(keep_num_dims=False)),
    )
    sg = SubGraph(tensors=tensors, inputs=(0,), outputs=(5,), operators=ops, name="main")
    return Model(version=3, operator_codes=(_opcode(BuiltinOperator.ADD), _opcode(BuiltinOperator.FULLY_CONNECTED)),
                 subgraphs=(sg,), description="add_fc built by tests/builders.py", buffers=buffers)


def feature_model() -> Model:
    base = add_fc_model()
    sg = base.subgraphs[0]
    buffers = list(base.buffers)

    def add_buffer(data: bytes) -> int:
        buffers.append(Buffer(data=data))
        return len(buffers) - 1

    tensors = list(sg.tensors)
    # per-axis int8 weights with min/max, scale, zero_point and a quantized dimension
    q = QuantizationParameters(min=(-1.0, -2.0), max=(1.0, 2.0), scale=(0.0078125, 0.015625),
                               zero_point=(0, 0), quantized_dimension=0)
    tensors.append(Tensor(shape=(2, 2), type=TensorType.INT8, name="q_w", quantization=q,
                          buffer=add_buffer(np.array([1, -2, 3, -4], "i1").tobytes())))
    # custom quantization details (the union member with a [ubyte] field)
    tensors.append(Tensor(shape=(2,), type=TensorType.INT8, name="custom_q",
                          quantization=QuantizationParameters(
                              details_type=QuantizationDetails.CustomQuantization,
                              details=CustomQuantization(custom=b"\x01\x02\x03\x04")),
                          buffer=add_buffer(b"\x05\x06")))
    # a 4x4 CSR sparse tensor: dense rows, compressed columns
    sparsity = SparsityParameters(
        traversal_order=(0, 1), block_map=(),
        dim_metadata=(
            DimensionMetadata(format=DimensionType.DENSE, dense_size=4),
            DimensionMetadata(format=DimensionType.SPARSE_CSR,
                              array_segments_type=SparseIndexVector.Int32Vector,
                              array_segments=Int32Vector(values=(0, 1, 2, 2, 3)),
                              array_indices_type=SparseIndexVector.Uint8Vector,
                              array_indices=Uint8Vector(values=b"\x00\x02\x03")),
        ))
    tensors.append(Tensor(shape=(4, 4), type=TensorType.FLOAT32, name="sparse", sparsity=sparsity,
                          buffer=add_buffer(_f32([1.0, 2.0, 3.0]))))
    # the same with uint16 index vectors
    sparsity16 = SparsityParameters(
        traversal_order=(0, 1),
        dim_metadata=(
            DimensionMetadata(format=DimensionType.DENSE, dense_size=4),
            DimensionMetadata(format=DimensionType.SPARSE_CSR,
                              array_segments_type=SparseIndexVector.Uint16Vector,
                              array_segments=Uint16Vector(values=(0, 0, 1, 1, 2)),
                              array_indices_type=SparseIndexVector.Uint16Vector,
                              array_indices=Uint16Vector(values=(1, 3))),
        ))
    tensors.append(Tensor(shape=(4, 4), type=TensorType.FLOAT32, name="sparse16", sparsity=sparsity16,
                          buffer=add_buffer(_f32([4.0, 5.0]))))
    # a scalar with has_rank, a variable tensor, a string tensor
    tensors.append(Tensor(shape=(), type=TensorType.INT32, name="scalar", has_rank=True,
                          buffer=add_buffer(np.array([7], "<i4").tobytes())))
    tensors.append(Tensor(shape=(1, 3), type=TensorType.FLOAT32, name="state", is_variable=True))
    tensors.append(Tensor(shape=(2,), type=TensorType.STRING, name="strings",
                          buffer=add_buffer(b"\x02\x00\x00\x00\x10\x00\x00\x00\x11\x00\x00\x00\x12\x00\x00\x00ab")))
    t_custom_out = len(tensors)
    tensors.append(Tensor(shape=(1, 3), type=TensorType.FLOAT32, name="custom_out"))
    t_concat_out = len(tensors)
    tensors.append(Tensor(shape=(2, 3), type=TensorType.FLOAT32, name="concat_out"))

    codes = list(base.operator_codes) + [
        _opcode(BuiltinOperator.CUSTOM, custom="MyCustomOp"),
        _opcode(BuiltinOperator.STABLEHLO_CONCATENATE),
    ]
    ops = list(sg.operators) + [
        Operator(opcode_index=2, inputs=(5, -1), outputs=(t_custom_out,),
                 custom_options=b"\x01\x02\x03\x04\x05", mutating_variable_inputs=(False, False),
                 intermediates=(t_custom_out - 1,)),
        Operator(opcode_index=3, inputs=(5, t_custom_out), outputs=(t_concat_out,),
                 builtin_options_2_type=BuiltinOptions2.StablehloConcatenateOptions,
                 builtin_options_2=StablehloConcatenateOptions(dimension=0)),
    ]
    meta = add_buffer(b"1.5.0\0\0\0\0\0\0\0\0\0\0\0")
    sg2 = SubGraph(tensors=tuple(tensors), inputs=sg.inputs, outputs=(5, t_concat_out),
                   operators=tuple(ops), name="main")
    signature = SignatureDef(inputs=(TensorMap(name="x", tensor_index=0),),
                             outputs=(TensorMap(name="y", tensor_index=5),
                                      TensorMap(name="concat", tensor_index=t_concat_out)),
                             signature_key="serving_default", subgraph_index=0)
    return Model(version=3, operator_codes=tuple(codes), subgraphs=(sg2,),
                 description="feature model built by tests/builders.py", buffers=tuple(buffers),
                 metadata=(Metadata(name="min_runtime_version", buffer=meta),),
                 signature_defs=(signature,))


def repack(data: bytes, force_defaults: bool = True, edit=None) -> bytes:
    """The same model re-serialized by the flatc-generated object API of ``ai_edge_litert``.

    With ``force_defaults`` every scalar field is stored even when it holds its default (and every
    union type tag, NONE included), which no converter does: the X-ray then reports "present"
    for fields that hold default values.  ``edit(model_t)`` may change the object tree first.
    """
    import flatbuffers
    from ai_edge_litert import schema_py_generated as gen

    model = gen.ModelT.InitFromPackedBuf(data, 0)
    if edit is not None:
        edit(model)
    builder = flatbuffers.Builder(0)
    builder.ForceDefaults(force_defaults)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def add_fc_bytes() -> bytes:
    return dump(add_fc_model())


def feature_bytes() -> bytes:
    return dump(feature_model())

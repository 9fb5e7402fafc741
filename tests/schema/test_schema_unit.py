"""Unit tests of the schema layer on tiny models built in code."""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest

import workbench
from workbench.errors import LossyWriteError, ModelError
from workbench.schema import (
    BuiltinOperator,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Padding,
    TensorType,
    buffer_bytes,
    builtin_code,
    dump,
    load,
    op_name,
    stored_min_runtime,
    tensor_data,
)
from workbench.schema.builder import ModelBuilder


def dilated_depthwise(dilation: int = 2):
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3])
    w = b.constant("w", np.arange(27, dtype=np.float32).reshape(1, 3, 3, 3))
    bias = b.constant("bias", np.zeros(3, np.float32))
    y = b.tensor("y", [1, 8, 8, 3])
    b.op(BuiltinOperator.DEPTHWISE_CONV_2D, [x, w, bias], [y],
         DepthwiseConv2DOptions(stride_w=1, stride_h=1, depth_multiplier=1,
                                dilation_w_factor=dilation, dilation_h_factor=dilation), version=2)
    b.output(y)
    b.add_metadata("min_runtime_version", b"1.12.0".ljust(16, b"\0"))
    return b.build()


def test_round_trip_of_a_built_model_is_equal():
    model = dilated_depthwise()
    data = dump(model)
    assert data[4:8] == b"TFL3"
    again = load(data)
    assert again == model
    assert dump(again) == data  # second generation is byte-identical


def test_absent_field_reads_schema_default_and_knows_it():
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 1])
    w = b.constant("w", np.ones((1, 3, 3, 1), np.float32))
    y = b.tensor("y", [1, 4, 4, 1])
    b.op(BuiltinOperator.DEPTHWISE_CONV_2D, [x, w, -1], [y], DepthwiseConv2DOptions(stride_w=1, stride_h=1))
    b.output(y)
    model = load(dump(b.build()))
    opts = model.subgraphs[0].operators[0].builtin_options
    assert opts.dilation_w_factor == 1
    assert opts.present("dilation_w_factor") is False
    assert opts.present("stride_w") is True
    x = opts.xray("dilation_w_factor")
    assert not x.present and x.offset is None and x.default == 1 and x.since == 2
    assert "absent → default 1" in str(x)
    assert x.path == "model.subgraphs[0].operators[0].builtin_options.dilation_w_factor"


def test_xray_offset_points_at_the_stored_bytes():
    model = dilated_depthwise(dilation=3)
    data = dump(model)
    model = load(data)
    opts = model.subgraphs[0].operators[0].builtin_options
    x = opts.xray("dilation_h_factor")
    assert x.present
    assert struct.unpack_from("<i", data, x.offset)[0] == 3
    # the vtable entry holds the offset of the field relative to the table start
    entry = struct.unpack_from("<H", data, x.vtable_entry_offset)[0]
    assert opts.origin.pos + entry == x.offset


def test_present_fields_survive_rewriting_even_when_equal_to_default():
    model = load(dump(dilated_depthwise(dilation=1)))  # the builder writes only non-defaults ...
    opts = model.subgraphs[0].operators[0].builtin_options
    assert opts.present("dilation_w_factor") is False
    # ... but a file that stores a default value explicitly keeps it stored after dump
    b = ModelBuilder()
    x = b.input("x", [1, 2, 2, 1])
    y = b.tensor("y", [1, 2, 2, 1])
    b.op(BuiltinOperator.ADD, [x, x], [y], workbench.schema.AddOptions(pot_scale_int16=False))
    b.output(y)
    m = load(dump(b.build()))
    assert m.subgraphs[0].operators[0].builtin_options.present("pot_scale_int16")
    m2 = load(dump(m))
    assert m2.subgraphs[0].operators[0].builtin_options.present("pot_scale_int16")


def test_tensor_data_is_a_zero_copy_view_of_the_file():
    data = dump(dilated_depthwise())
    model = load(data)
    w = tensor_data(model, 0, 1)
    assert w.dtype == np.float32 and w.shape == (1, 3, 3, 3)
    assert w[0, 2, 2, 2] == 26
    assert not w.flags.writeable
    assert w.base is not None  # a view, not a copy
    assert tensor_data(model, 0, 0) is None  # activations have no data


def test_min_runtime_metadata_is_read_without_padding():
    model = load(dump(dilated_depthwise()))
    assert stored_min_runtime(model) == "1.12.0"


def test_builtin_code_is_max_of_the_two_fields():
    model = dilated_depthwise()
    oc = model.operator_codes[0]
    assert builtin_code(oc) == BuiltinOperator.DEPTHWISE_CONV_2D
    old_style = dataclasses.replace(oc, builtin_code=BuiltinOperator.ADD)  # v3 files: builtin_code reads 0
    assert builtin_code(old_style) == BuiltinOperator.DEPTHWISE_CONV_2D
    big = dataclasses.replace(oc, deprecated_builtin_code=127, builtin_code=BuiltinOperator.CUMSUM)
    assert builtin_code(big) == BuiltinOperator.CUMSUM and op_name(big) == "CUMSUM"


def test_unknown_builtin_code_is_kept_and_reported():
    model = dilated_depthwise()
    oc = dataclasses.replace(model.operator_codes[0], deprecated_builtin_code=127, builtin_code=999)
    model = dataclasses.replace(model, operator_codes=(oc,))
    again = load(dump(model))
    assert builtin_code(again.operator_codes[0]) == 999
    assert op_name(again.operator_codes[0]) == "BUILTIN_999"
    assert any("999" in str(n) for n in again.load_notes)


def test_unknown_trailing_field_is_reported_and_dump_refuses_to_drop_it():
    # Re-encode a Buffer table with one extra (future) slot and check the reader keeps going.
    import flatbuffers

    b = flatbuffers.Builder(64)
    b.StartObject(4)  # Buffer has 3 slots; slot 3 is from the future
    b.PrependUint32Slot(3, 7, 0)
    buf_off = b.EndObject()
    b.StartVector(4, 1, 4)
    b.PrependUOffsetTRelative(buf_off)
    bufs = b.EndVector()
    b.StartObject(10)
    b.PrependUint32Slot(0, 3, 0)
    b.PrependUOffsetTRelativeSlot(4, bufs, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=b"TFL3")
    model = load(bytes(b.Output()))
    assert model.buffers[0].origin.unknown_slots == (3,)
    assert any("slot 3" in str(n) for n in model.load_notes)
    with pytest.raises(LossyWriteError):
        dump(model)
    assert load(dump(model, drop_unknown=True)).buffers[0].origin.unknown_slots == ()


@pytest.mark.parametrize("data, message", [
    (b"", "at least 8 bytes"),
    (b"\x08\x00\x00\x00TFL3", "past the end"),
    (b"\x08\x00\x00\x00XXXX\x00\x00\x00\x00", "file identifier"),
])
def test_malformed_headers_raise_model_error(data, message):
    with pytest.raises(ModelError, match=message):
        load(data)


def test_truncation_everywhere_raises_model_error_only():
    """Every cut of the file, down to zero bytes, raises ModelError -- no cut is accepted, no other error.

    No cut is legitimately readable: the writer lays the objects out back to front (as flatbuffers do), so
    the file's last bytes are those of a table the root reaches (here operator_codes[0]) and even a one-byte
    cut leaves an offset or a table running past the end.
    """
    data = dump(dilated_depthwise())
    load(data)                                    # the whole file loads
    accepted, other = [], []
    for cut in range(len(data)):
        try:
            load(data[:cut])
        except ModelError:
            continue
        except Exception as e:                    # any other error is a failure too, reported below
            other.append(f"{cut}: {type(e).__name__}: {e}")
        else:
            accepted.append(cut)
    assert not accepted, f"load accepted the file cut to these lengths (of {len(data)}): {accepted}"
    assert not other, "\n".join(other)


def test_wrong_schema_version_is_refused():
    model = dataclasses.replace(dilated_depthwise(), version=2)
    with pytest.raises(ModelError, match="schema version 2"):
        load(dump(model))


def test_dangling_indices_raise_model_error_with_path():
    model = dilated_depthwise()
    sg = model.subgraphs[0]
    bad_op = dataclasses.replace(sg.operators[0], inputs=(0, 1, 77))
    bad = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, operators=(bad_op,)),))
    with pytest.raises(ModelError, match=r"tensor index 77 does not exist") as err:
        load(dump(bad))
    assert err.value.path == "model.subgraphs[0].operators[0].inputs[2]"


def test_constant_size_mismatch_is_refused():
    model = dilated_depthwise()
    sg = model.subgraphs[0]
    t = dataclasses.replace(sg.tensors[1], shape=(1, 3, 3, 4))
    tensors = list(sg.tensors)
    tensors[1] = t
    bad = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),))
    with pytest.raises(ModelError, match="needs 144"):
        load(dump(bad))


def test_absurd_shape_is_refused_not_allocated():
    model = dilated_depthwise()
    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    tensors[1] = dataclasses.replace(tensors[1], shape=(2**31 - 1, 2**31 - 1, 2**31 - 1))
    bad = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),))
    with pytest.raises(ModelError, match="would need"):
        load(dump(bad))


def test_external_buffer_data_round_trips():
    model = dilated_depthwise()
    data = dump(model)
    loaded = load(data)
    # move buffer 1 (the weights) after the FlatBuffer, as the converter does for > 2 GB models
    payload = bytes(buffer_bytes(loaded, 1))
    start = (len(data) + 15) // 16 * 16
    ext = list(loaded.buffers)
    ext[1] = dataclasses.replace(ext[1], data=None, offset=start, size=len(payload))
    # the placeholder flatbuffer must have the same length as the final one: build it the same way
    external = dataclasses.replace(loaded, buffers=tuple(ext))
    object.__setattr__(external, "_source", data.ljust(start, b"\0") + payload)
    out = dump(external)
    again = load(out)
    assert again.buffers[1].offset > 1 and again.buffers[1].data is None
    np.testing.assert_array_equal(tensor_data(again, 0, 1), tensor_data(loaded, 0, 1))


def test_tensor_type_enum_values_are_the_schema_facts():
    assert TensorType.INT8 == 9 and TensorType.FLOAT16 == 1 and TensorType.BFLOAT16 == 18
    assert Padding.SAME == 0 and Padding.VALID == 1
    assert BuiltinOperator.CUSTOM == 32 and BuiltinOperator.BATCH_MATMUL == 126


def test_conv_options_table_declares_bias_type_since_version_8():
    f = Conv2DOptions.__decl__.field("quantized_bias_type")
    assert f.id == 6 and f.since == 8


def test_shared_subgraph_repeated_many_times_is_refused():
    b = ModelBuilder()
    x = b.input("x", [1])
    prev = x
    for i in range(2000):
        t = b.tensor(f"t{i}", [1])
        b.op(BuiltinOperator.RELU, [prev], [t])
        prev = t
    b.output(prev)
    model = b.build()
    sg = model.subgraphs[0]
    hostile = dataclasses.replace(model, subgraphs=(sg,) * 600)  # the writer shares the one table
    data = dump(hostile)
    assert len(data) < 400_000
    with pytest.raises(ModelError, match="absurd graph"):
        load(data)


def test_tensor_in_an_external_buffer_group_says_where_its_data_is():
    from workbench.schema import CLASSES

    model = dilated_depthwise()
    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    tensors[1] = dataclasses.replace(tensors[1], buffer=0, external_buffer=1)
    ext = (CLASSES["ExternalBuffer"](), CLASSES["ExternalBuffer"](id=1, group=0, offset=4096, length=108))
    groups = (CLASSES["ExternalBufferGroup"](name="weights.bin"),)
    model = dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),),
                                external_buffers=ext, external_buffer_groups=groups)
    again = load(dump(model))
    with pytest.raises(ModelError, match="108 bytes at offset 4096 of external file 'weights.bin'"):
        tensor_data(again, 0, 1)


def test_empty_data_vector_is_no_data_with_a_note_litert_refuses_it(tmp_path):
    """A buffer whose data vector is present but 0 bytes long (Arm's ethos-u-vela test network has
    one on its output tensor): read as "no data" — the tensor is computed at run time — with a load
    note saying that ai-edge-litert refuses such a file; the model runs as without the vector."""
    from helpers import litert_runner
    from workbench.interpreter import Interpreter
    from workbench.schema import Buffer

    model = dilated_depthwise()
    sg = model.subgraphs[0]
    y = sg.outputs[0]
    tensors = list(sg.tensors)
    tensors[y] = dataclasses.replace(tensors[y], buffer=len(model.buffers))
    odd = dataclasses.replace(model, buffers=(*model.buffers, Buffer(data=b"")),
                              subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),))
    loaded = load(dump(odd))
    assert loaded.buffers[-1].data is not None and len(loaded.buffers[-1].data) == 0
    notes = [n for n in loaded.load_notes if "0 bytes" in str(n)]
    assert len(notes) == 1 and notes[0].path == f"model.subgraphs[0].tensors[{y}].buffer"
    assert "ai-edge-litert" in str(notes[0]) and f"Tensor {y} is invalidly specified" in str(notes[0])
    x = np.random.default_rng(0).standard_normal((1, 8, 8, 3)).astype(np.float32)
    outs = []
    for m in (model, loaded):
        it = Interpreter(model=m)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]))
    assert outs[0].tobytes() == outs[1].tobytes()
    path = tmp_path / "odd.tflite"
    path.write_bytes(dump(odd))
    result = litert_runner.run(path, tmp_path / "in.npz", tmp_path / "out.npz", seed=0)
    assert not result.ok and "invalidly specified" in result.describe()

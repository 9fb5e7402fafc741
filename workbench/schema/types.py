"""Small facts and helpers on schema values: dtypes, operator codes, metadata, tensor data."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError
from .enums import BuiltinOperator, TensorType

PLACEHOLDER_FOR_GREATER_OP_CODES = 127

NUMPY_DTYPE = {
    TensorType.FLOAT32: np.dtype("<f4"),
    TensorType.FLOAT16: np.dtype("<f2"),
    TensorType.FLOAT64: np.dtype("<f8"),
    TensorType.INT8: np.dtype("i1"),
    TensorType.UINT8: np.dtype("u1"),
    TensorType.INT16: np.dtype("<i2"),
    TensorType.UINT16: np.dtype("<u2"),
    TensorType.INT32: np.dtype("<i4"),
    TensorType.UINT32: np.dtype("<u4"),
    TensorType.INT64: np.dtype("<i8"),
    TensorType.UINT64: np.dtype("<u8"),
    TensorType.BOOL: np.dtype("?"),
    TensorType.COMPLEX64: np.dtype("<c8"),
    TensorType.COMPLEX128: np.dtype("<c16"),
}
TENSOR_ITEMSIZE = {t: d.itemsize for t, d in NUMPY_DTYPE.items()}
TENSOR_ITEMSIZE[TensorType.BFLOAT16] = 2
TENSOR_ITEMSIZE[TensorType.FLOAT8_E4M3FN] = 1
TENSOR_ITEMSIZE[TensorType.FLOAT8_E5M2] = 1


def builtin_code(opcode) -> BuiltinOperator | int:
    """The effective operator code: max(builtin_code, deprecated_builtin_code).

    Files older than schema 3a only have the int8 field (the int32 one reads 0); codes past
    126 do not fit int8, so writers put 127 there and the real code in ``builtin_code``.
    """
    code = max(int(opcode.builtin_code), int(opcode.deprecated_builtin_code))
    try:
        return BuiltinOperator(code)
    except ValueError:
        return code


def op_name(opcode) -> str:
    """'CONV_2D', or the custom code of a CUSTOM op, or 'BUILTIN_209' for an unknown code."""
    code = builtin_code(opcode)
    if code == BuiltinOperator.CUSTOM:
        return opcode.custom_code or "CUSTOM"
    return code.name if isinstance(code, BuiltinOperator) else f"BUILTIN_{code}"


def buffer_bytes(model, index: int) -> memoryview:
    """The bytes of buffer ``index``, inside the FlatBuffer or after it (``offset``/``size``)."""
    buffers = model.buffers or ()
    if not 0 <= index < len(buffers):
        raise ModelError(f"buffer {index} does not exist (there are {len(buffers)})", f"model.buffers[{index}]")
    buf = buffers[index]
    if buf.offset > 1:
        source = model.__dict__.get("_source")
        if source is None:
            raise ModelError("external buffer data needs the original file", f"model.buffers[{index}]")
        view = memoryview(source)
        if buf.offset + buf.size > len(view):
            raise ModelError("external data lies outside the file", f"model.buffers[{index}]", buf.offset)
        return view[buf.offset:buf.offset + buf.size].toreadonly()
    if buf.data is None:
        return memoryview(b"")
    return buf.data if isinstance(buf.data, memoryview) else memoryview(bytes(buf.data))


def tensor_data(model, subgraph: int, tensor: int) -> np.ndarray | None:
    """Constant data of a tensor as a read-only numpy view of the file (None if it has none).

    Dense numeric tensors come back typed and shaped; packed (int4), string and sparse tensors
    come back as their raw uint8 bytes.
    """
    t = model.subgraphs[subgraph].tensors[tensor]
    if t.buffer == 0 and t.external_buffer:
        ext = model.external_buffers or ()
        where = ""
        if 0 <= t.external_buffer < len(ext):
            e = ext[t.external_buffer]
            groups = model.external_buffer_groups or ()
            group = groups[e.group].name if 0 <= e.group < len(groups) else f"group {e.group}"
            where = f" ({e.length} bytes at offset {e.offset} of external file {group!r})"
        raise ModelError(f"the data of this tensor lives outside the .tflite file{where}; "
                         "external buffer groups are not read by the workbench",
                         f"model.subgraphs[{subgraph}].tensors[{tensor}].external_buffer")
    if t.buffer == 0:
        return None
    raw = buffer_bytes(model, t.buffer)
    if len(raw) == 0:
        return None
    dtype = NUMPY_DTYPE.get(t.type)
    if dtype is None or t.sparsity is not None:
        return np.frombuffer(raw, np.uint8)
    shape = tuple(t.shape or ())
    if any(d < 0 for d in shape):
        raise ModelError(f"shape {list(shape)} has a negative dimension, so the buffer cannot be shaped",
                         f"model.subgraphs[{subgraph}].tensors[{tensor}].shape")
    count = math.prod(shape)  # exact: no int64 wrap-around for absurd shapes
    if count * dtype.itemsize != len(raw):
        raise ModelError(f"buffer has {len(raw)} bytes, shape {list(shape)} of {getattr(t.type, 'name', t.type)} needs "
                         f"{count * dtype.itemsize}", f"model.subgraphs[{subgraph}].tensors[{tensor}]")
    return np.frombuffer(raw, dtype).reshape(shape)


def metadata(model) -> dict[str, bytes]:
    """Metadata entries as name → bytes."""
    out = {}
    for m in model.metadata or ():
        out[m.name] = bytes(buffer_bytes(model, m.buffer))
    return out


def stored_min_runtime(model) -> str | None:
    """The ``min_runtime_version`` metadata string (zero padding stripped), or None."""
    raw = metadata(model).get("min_runtime_version")
    if raw is None:
        return None
    return raw.split(b"\0", 1)[0].decode("ascii", "replace")

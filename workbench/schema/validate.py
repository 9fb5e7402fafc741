"""Cross-reference checks on a decoded Model: every index points at something that exists.

Structural problems (an operator naming tensor 900 of 12, a tensor naming a missing buffer, a
constant whose bytes do not match its shape) raise :class:`ModelError` with the path.  Things a
newer file may legitimately contain (an unknown op code) become notes instead.
"""

from __future__ import annotations

import math

from ..errors import ModelError
from .enums import BuiltinOperator, TensorType
from .types import TENSOR_ITEMSIZE, builtin_code

MAX_TENSOR_BYTES = 1 << 40  # 1 TiB: beyond any real model; guards shape-product overflow
MAX_TENSOR_ELEMENTS = MAX_TENSOR_BYTES // 16
MAX_GRAPH_ELEMENTS = 2_000_000  # tensors + operators over all subgraphs, counted with repetition


def _check_index(value: int, count: int, path: str, what: str, allow_minus_one: bool = False) -> None:
    if allow_minus_one and value == -1:
        return
    if not 0 <= value < count:
        raise ModelError(f"{what} index {value} does not exist (there are {count})", path)


def _check_all(indices, count: int, path: str, field: str, allow_minus_one: bool = False) -> None:
    """Check a vector of tensor indices at once; name the first bad one if there is one."""
    if not indices:
        return
    low = -1 if allow_minus_one else 0
    if min(indices) >= low and max(indices) < count:
        return
    for k, t in enumerate(indices):
        _check_index(t, count, f"{path}.{field}[{k}]", "tensor", allow_minus_one)


def tensor_nbytes(tensor, path: str = "") -> int | None:
    """Bytes a dense tensor of this shape and type needs, or None when not fixed (string, int4...)."""
    shape = tensor.shape or ()
    count = 1
    for i, d in enumerate(shape):
        if d < 0:
            return None
        count *= d
    item = TENSOR_ITEMSIZE.get(tensor.type)
    if item is None:
        if tensor.type in (TensorType.INT4, TensorType.UINT4):
            nbytes = math.ceil(count / 2)
        elif tensor.type == TensorType.INT2:
            nbytes = math.ceil(count / 4)
        else:
            return None
    else:
        nbytes = count * item
    if nbytes > MAX_TENSOR_BYTES:
        raise ModelError(f"shape {list(shape)} of {getattr(tensor.type, 'name', tensor.type)} "
                         f"would need {nbytes} bytes", path)
    return nbytes


def validate_model(model) -> list:
    from .reader import LoadNote

    notes = []
    codes = model.operator_codes or ()
    buffers = model.buffers or ()
    subgraphs = model.subgraphs or ()
    source_len = len(model.__dict__.get("_source", b""))
    # FlatBuffers may reference one table many times; a small hostile file can thereby describe
    # a graph of billions of elements.  Refuse graphs no real model comes near (the C++
    # verifier caps table visits the same way).
    total = sum(len(sg.tensors or ()) + len(sg.operators or ()) for sg in subgraphs)
    if total > MAX_GRAPH_ELEMENTS:
        raise ModelError(f"the subgraphs reference {total} tensors and operators in total (limit "
                         f"{MAX_GRAPH_ELEMENTS}); shared tables make this file describe an absurd graph",
                         "model.subgraphs")
    for i, oc in enumerate(codes):
        code = builtin_code(oc)
        if not isinstance(code, BuiltinOperator):
            notes.append(LoadNote(f"model.operator_codes[{i}]", None,
                                  f"builtin code {code} is newer than this schema (kept as a number)"))
        elif code == BuiltinOperator.CUSTOM and not oc.custom_code:
            notes.append(LoadNote(f"model.operator_codes[{i}]", None,
                                  "CUSTOM operator code without custom_code (TFLite refuses this at run time)"))
    for b, buf in enumerate(buffers):
        if buf.offset > 1:
            if buf.offset + buf.size > source_len:
                raise ModelError(f"external data ({buf.size} bytes at file offset {buf.offset}) lies outside "
                                 f"the {source_len}-byte file", f"model.buffers[{b}]")
    for s, sg in enumerate(subgraphs):
        tensors = sg.tensors or ()
        nt = len(tensors)
        base = f"model.subgraphs[{s}]"
        for k, t in enumerate(sg.inputs or ()):
            _check_index(t, nt, f"{base}.inputs[{k}]", "tensor")
        for k, t in enumerate(sg.outputs or ()):
            _check_index(t, nt, f"{base}.outputs[{k}]", "tensor")
        nbuf = max(len(buffers), 1)
        for ti, tensor in enumerate(tensors):
            b = tensor.buffer
            if b >= nbuf:
                _check_index(b, nbuf, f"{base}.tensors[{ti}].buffer", "buffer")
            shape = tensor.shape
            if shape:
                if min(shape) < 0:
                    notes.append(LoadNote(f"{base}.tensors[{ti}].shape", None,
                                          f"negative dimension in shape {list(shape)}"))
                elif math.prod(shape) > MAX_TENSOR_ELEMENTS:
                    tensor_nbytes(tensor, f"{base}.tensors[{ti}].shape")  # raises with the details
            if b and b < len(buffers) and tensor.sparsity is None:
                stored = buffer_size(buffers[b])
                if (stored == 0 and buffers[b].data is not None and buffers[b].offset <= 1
                        and tensor_nbytes(tensor, f"{base}.tensors[{ti}].shape")):
                    notes.append(LoadNote(f"{base}.tensors[{ti}].buffer", None,
                                          f"buffer {b} has a data vector of 0 bytes: read here as no data (a "
                                          f"tensor computed at run time); ai-edge-litert 2.3 counts it as 0 "
                                          f"bytes of constant data, too few for the shape, and refuses the model "
                                          f"('Tensor {ti} is invalidly specified in schema')"))
                nbytes = tensor_nbytes(tensor, f"{base}.tensors[{ti}].shape") if stored else None
                if nbytes is not None and stored != nbytes:
                    raise ModelError(f"constant data has {stored} bytes but shape {list(shape or ())} of "
                                     f"{getattr(tensor.type, 'name', tensor.type)} needs {nbytes}",
                                     f"{base}.tensors[{ti}].buffer")
        ncodes = len(codes)
        for oi, op in enumerate(sg.operators or ()):
            opath = f"{base}.operators[{oi}]"
            if not 0 <= op.opcode_index < ncodes:
                _check_index(op.opcode_index, ncodes, f"{opath}.opcode_index", "operator code")
            _check_all(op.inputs, nt, opath, "inputs", allow_minus_one=True)
            _check_all(op.outputs, nt, opath, "outputs", allow_minus_one=True)
            _check_all(op.intermediates, nt, opath, "intermediates")
            if op.large_custom_options_offset > 1:
                end = op.large_custom_options_offset + op.large_custom_options_size
                if end > source_len:
                    raise ModelError(f"large custom options end at byte {end}, past the {source_len}-byte file",
                                     f"{opath}.large_custom_options_offset")
    for m, meta in enumerate(model.metadata or ()):
        _check_index(meta.buffer, len(buffers), f"model.metadata[{m}].buffer", "buffer")
    for k, sig in enumerate(model.signature_defs or ()):
        spath = f"model.signature_defs[{k}]"
        _check_index(sig.subgraph_index, len(subgraphs), f"{spath}.subgraph_index", "subgraph")
        nt = len(subgraphs[sig.subgraph_index].tensors or ())
        for side in ("inputs", "outputs"):
            for j, tm in enumerate(getattr(sig, side) or ()):
                _check_index(tm.tensor_index, nt, f"{spath}.{side}[{j}].tensor_index", "tensor")
    return notes


def buffer_size(buf) -> int:
    if buf.offset > 1:
        return buf.size
    return 0 if buf.data is None else len(buf.data)

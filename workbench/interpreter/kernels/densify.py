"""DENSIFY: a sparse constant (TACO-style ``SparsityParameters``) → its dense tensor.

The stored values are walked level by level in ``traversal_order``; each level of
``dim_metadata`` is DENSE (every index 0..dense_size-1) or SPARSE_CSR (for the parent position p,
indices array_indices[array_segments[p]:array_segments[p+1]]).  Levels past the tensor's rank are
block dimensions (``block_map`` says which dimension each one blocks): the dense index of a
blocked dimension is block_index * block_size + index_in_block.  Evaluated once, in
``allocate_tensors`` (TFLite's ``densify.cc``; both builds run the same code, and one numpy scatter
needs no speed layer).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class DensifyData(OpData):
    output_shape: tuple
    levels: tuple           # human-readable description of each level
    flat_index: object      # int64 [nnz]: where each stored value goes in the dense tensor
    value_index: object     # int64 [nnz]: which stored value goes there


def _vector(v):
    values = getattr(v, "values", None)
    return np.asarray(tuple(values) if values is not None and not isinstance(values, (bytes, memoryview))
                      else np.frombuffer(bytes(values or b""), np.uint8), np.int64)


def dense_positions(shape, sparsity) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(flat dense index, stored-value index) of every stored value, and the levels described."""
    rank = len(shape)
    order = list(sparsity.traversal_order or range(rank))
    block_map = list(sparsity.block_map or ())
    levels = list(sparsity.dim_metadata or ())
    if len(levels) != len(order):
        raise UnsupportedOpError(f"sparsity has {len(levels)} levels but traversal order {order}")
    block_size = {}
    for k, dim in enumerate(block_map):
        lvl = order.index(rank + k)
        block_size[dim] = int(levels[lvl].dense_size)
    coords = np.zeros((len(order), 1), np.int64)   # one column per position reached so far
    positions = np.zeros(1, np.int64)
    described = []
    for lvl, (dim, meta) in enumerate(zip(order, levels)):
        if int(meta.format) == 0:                      # DENSE
            size = int(meta.dense_size)
            described.append(f"dim {dim}: dense {size}")
            positions = (positions[:, None] * size + np.arange(size)[None, :]).reshape(-1)
            coords = np.repeat(coords, size, axis=1)
            coords[lvl] = np.tile(np.arange(size), coords.shape[1] // size)
        else:                                          # SPARSE_CSR
            seg = _vector(meta.array_segments)
            idx = _vector(meta.array_indices)
            described.append(f"dim {dim}: csr ({len(idx)} indices)")
            starts, ends = seg[positions], seg[positions + 1]
            counts = ends - starts
            new_pos = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if len(starts) else \
                np.zeros(0, np.int64)
            coords = np.repeat(coords, counts, axis=1)
            coords[lvl] = idx[new_pos]
            positions = new_pos.astype(np.int64)
    # dense coordinates per original dimension
    dense = np.zeros((rank, coords.shape[1]), np.int64)
    for lvl, dim in enumerate(order):
        if dim < rank:
            dense[dim] += coords[lvl] * block_size.get(dim, 1)
        else:
            dense[block_map[dim - rank]] += coords[lvl]
    flat = np.ravel_multi_index(tuple(dense), shape) if rank else np.zeros(coords.shape[1], np.int64)
    # the value reached through column j is stored at position positions[j] of the last level
    return flat, positions, tuple(described)


def densify(values, shape, sparsity) -> np.ndarray:
    """``FormatConverter::SparseToDense``: zeros, then every stored value at its dense position."""
    flat, pos, _ = dense_positions(shape, sparsity)
    out = np.zeros(int(np.prod(shape)), np.asarray(values).dtype)
    out[flat] = np.asarray(values)[pos]
    return out.reshape(shape)


@kernel(BuiltinOperator.DENSIFY, versions=(1,))
class Densify(Kernel):
    name = "densify"

    def prepare(self, context, node):
        x = node.inputs[0]
        meta = context.tensor_meta(x)
        if meta.sparsity is None:
            raise UnsupportedOpError(f"DENSIFY (node {node.index}): input '{context.name(x)}' is not sparse")
        if context.value(x) is None:
            raise UnsupportedOpError(f"DENSIFY (node {node.index}): input has no constant data")
        shape = tuple(int(d) for d in meta.shape)
        flat, pos, levels = dense_positions(shape, meta.sparsity)
        if len(pos) and pos.max() >= len(context.value(x)):
            raise UnsupportedOpError(f"DENSIFY (node {node.index}): sparsity indexes value {pos.max()} of "
                                     f"{len(context.value(x))}")
        context.set_output(node.outputs[0], shape, context.dtype(x))
        return DensifyData(shape, levels, flat, pos)

    def invoke(self, context, node, d):
        values = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]].reshape(-1)
        out[...] = 0
        out[d.flat_index] = values[d.value_index]

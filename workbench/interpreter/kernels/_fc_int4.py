"""FULLY_CONNECTED with int4 weights and float activations: litert's two 4-bit hybrid paths.

Only litert's builtin build takes them (``Variant.fc_4bit_kernel``); its reference kernels send int4
weights through the ordinary int8 hybrid path (``_fc_hybrid.py``) and have no blockwise kernel.

Most int4 weights (AI Edge Quantizer's ``dynamic_wi4*`` recipes) are unpacked to int8 when the model
is loaded (:meth:`workbench.interpreter.context.Context.packed_bits`) and then run the ordinary int8
hybrid path of ``_fc_hybrid.py`` — as litert does in ``EvalHybridDense``.  But litert's
optimized FULLY_CONNECTED takes a separate 4-bit kernel (``optimized_4bit``, reference and SSE
versions give the same numbers) when the weights are a constant INT4 tensor, the batch is not empty,
the depth K is even and at least 32 and there are at least 4 units.  This module is that kernel,
as arithmetic (facts read from LiteRT's ``fully_connected.cc`` and ``optimized/4bit/*``):

* Rows of the input are quantized *symmetrically* in their own way (not ``SymmetricQuantizeFloats``):
  m = max|x| over the row (m = 127 when the row is all zero), inverse = float32(127.0 / m) in double,
  scaling_factor = float32(m / 127.0) in double, q = round_half_away(float32(x · inverse)) as int8.
  There is no all-zero shortcut and ``asymmetric_quantize_inputs`` is ignored.
* The weights are packed as unsigned nibbles w + 7 (the kernel's zero point is −7), so
  acc = Σ (w + 7)·q in int32 and the row offset −7·Σq is folded in separately, in float32:
  out = float32(float32(float32(−7·Σq) · scaling_factor) · filter_scale[u]) + bias[u], then
  out += float32(float32(float32(acc) · scaling_factor) · filter_scale[u]), then the activation
  (``ApplyActivationToVector``).
* A weight of −8 does not survive the packing: w + 7 = −1 is written as the byte 0xFF.  The packer
  works on 32-value chunks of a row and puts value j (j < 16) and value j + 16 into one byte (j's
  nibble high).  A −8 among the first 16 becomes nibble 15 (it acts as +8); a −8 among the last 16
  fills the whole byte, so it *and its partner j − 16* both act as +8.  litert's x86 build packs
  whole chunks with SSE, whose 16-bit lane shifts also carry a −8 at position j < 16 with
  j % 4 in {0, 1} into position j + 18 (which then acts as +8 too); the scalar tail packer does not.
  :func:`packed_nibbles` reproduces all of that (measured against litert 2.3; AEQ's symmetric int4
  uses −7..7, so real models do not meet it).

Blockwise int4 weights (``dynamic_wi4b32``: ``BlockwiseQuantization`` with a float16 scales tensor of
shape [units, K / block_size]) take ``EvalBlockwise4Bit`` under the same conditions: every row is
quantized *asymmetrically* (``AsymmetricQuantizeFloats``, q, s, zp), then for each unit, block by
block in float32: out += float32(acc_block) · scale, kfsum += scale · float32(Σ w_block), and at the
end out = (out − float32(zp) · kfsum) · s + bias.  litert applies **no fused activation** on that
path (a RELU in the options is ignored); the workbench does the same, and says so in the OpData.

The speed layer (``workbench/interpreter/fast/fully_connected.py``) packs the nibbles once and takes
their product as one exact float matmul; for the blockwise path it splits the weights into blocks once.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import ModelError, UnsupportedOpError
from .. import quant
from ..registry import opdata
from ._common import activation_name
from ._fc_geometry import FullyConnectedGeometry

FILTER_WIDTH = 4      # units per packed block of litert's 4-bit kernel
FILTER_DEPTH = 32     # values of K per packed block
ZERO_POINT_4BIT = -7


def uses_4bit_kernel(batch: int, units: int, depth: int) -> bool:
    """litert's condition (fully_connected.cc, PrepareImpl) for its optimized 4-bit path, given
    constant INT4 weights and the builtin (optimized) kernel."""
    return batch > 0 and depth % 2 == 0 and units >= FILTER_WIDTH and depth >= FILTER_DEPTH


def packed_nibbles(w: np.ndarray) -> np.ndarray:
    """The unsigned nibbles (0..15) litert's 4-bit packer stores for int4 weights ``w`` [units, K]
    (values −8..7): w + 7, except for what a −8 does (see the module docstring)."""
    w = np.asarray(w, np.int16)
    nib = w + 7
    units, k = w.shape
    col = np.arange(k)
    in_chunk = col % FILTER_DEPTH
    upper = in_chunk < FILTER_DEPTH // 2          # value j of a chunk, j < 16: the byte's high nibble
    minus8 = w == -8
    nib[minus8] = 15
    low_hits = minus8 & ~upper[None, :]           # a −8 in the low nibble spoils the whole byte
    r, c = np.nonzero(low_hits)
    nib[r, c - FILTER_DEPTH // 2] = 15
    # SSE packer (whole 32-value chunks only): a 16-bit lane shift carries the 0xFF of a −8 at chunk
    # position j (j < 16, j % 4 in {0, 1}) into the nibble of position j + 18
    full = (col - in_chunk + FILTER_DEPTH) <= k
    carry = minus8 & (upper & full & (in_chunk % 4 < 2))[None, :]
    r, c = np.nonzero(carry)
    nib[r, c + 18] = 15
    return nib


def quantize_rows_4bit(x2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q int8 [batch, K], scaling_factors float32 [batch]) as ``BatchQuantizeFloats4Bit``."""
    x2 = np.asarray(x2, np.float32)
    m = np.abs(x2).max(axis=1, initial=np.float32(0)).astype(np.float32)
    m = np.where(m == 0, np.float32(127.0), m)
    inverse = (127.0 / m.astype(np.float64)).astype(np.float32)
    sf = (m.astype(np.float64) / 127.0).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        q = quant.round_half_away((x2 * inverse[:, None]).astype(np.float32)).astype(np.int64)
    return q.astype(np.int8), sf


def output_4bit(acc, qsum, sf, filter_scales, bias, code) -> np.ndarray:
    """The float tail (``AssignBiasAndComputeOffsets`` + ``Unpack`` + activation) → float32 [batch, units]."""
    fs = np.asarray(filter_scales, np.float32)[None, :]
    offsets = (np.asarray(qsum, np.int64) * ZERO_POINT_4BIT).astype(np.float32)
    base = ((offsets * sf).astype(np.float32)[:, None] * fs).astype(np.float32)
    if bias is not None:
        base = (base + np.asarray(bias, np.float32)[None, :]).astype(np.float32)
    prod = ((np.asarray(acc).astype(np.float32) * sf[:, None]).astype(np.float32) * fs).astype(np.float32)
    return quant.apply_float_activation((base + prod).astype(np.float32), code)


@opdata
class FullyConnectedHybrid4BitData(FullyConnectedGeometry):
    """litert's optimized 4-bit hybrid path (int4 weights, float activations)."""

    filter_scale: object               # float32 [units] (a per-tensor scale repeated)
    zero_point_4bit: int               # −7: the packed nibbles hold w + 7
    activation_code: int = dataclasses.field(default=0, repr=False)


@opdata
class FullyConnectedBlockwise4BitData(FullyConnectedGeometry):
    """litert's blockwise int4 path (``EvalBlockwise4Bit``): no fused activation is applied (``activation``
    says what the options ask for — litert ignores it on this path)."""

    block_size: int
    block_scales: object               # float32 [units, K / block_size] (from float16)


def _filter_scales(node, context, w_t, units: int) -> np.ndarray:
    scales, zps, qdim = quant.quant_params(context, w_t)
    if len(scales) == 0:
        raise ModelError(f"FULLY_CONNECTED (node {node.index}): int4 weights '{context.name(w_t)}' have no "
                         f"quantization scale")
    if np.any(np.asarray(zps) != 0):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): int4 weights with a non-zero zero point "
                                 f"(litert refuses them: 'Unsupported filter quantization zero-point value')")
    if len(scales) == 1:
        return np.full(units, np.float32(scales[0]), np.float32)
    if len(scales) != units or qdim != 0:
        raise ModelError(f"FULLY_CONNECTED (node {node.index}): {len(scales)} scales on axis {qdim} for int4 "
                         f"weights with {units} units")
    return np.asarray(scales, np.float32)


def prepare_4bit(context, node, geo, code) -> FullyConnectedHybrid4BitData:
    fs = _filter_scales(node, context, node.input(1), geo.units)
    return FullyConnectedHybrid4BitData(**geo._asdict(), activation=activation_name(code), filter_scale=fs,
                                        zero_point_4bit=ZERO_POINT_4BIT, activation_code=int(code))


def fully_connected_4bit(x, w, b, d) -> np.ndarray:
    """litert's ``EvalHybridDense4Bit``: rows quantized by :func:`quantize_rows_4bit`, int32 sums with the
    packed nibbles (:func:`packed_nibbles`), the float tail of :func:`output_4bit`."""
    q, sf = quantize_rows_4bit(np.asarray(x, np.float32).reshape(d.batch, d.depth))
    acc = q.astype(np.int64) @ packed_nibbles(w).astype(np.int64).T
    return output_4bit(acc, q.astype(np.int64).sum(axis=1), sf, d.filter_scale, b, d.activation_code)


def blockwise_details(context, w_t):
    """The ``BlockwiseQuantization`` of tensor ``w_t``, or None."""
    q = context.tensor_meta(w_t).quantization
    details = getattr(q, "details", None) if q is not None else None
    return details if type(details).__name__ == "BlockwiseQuantization" else None


def prepare_blockwise(context, node, geo, w, code, details, four_bit_kernel: bool):
    units, k = geo.units, geo.depth
    block = int(details.block_size)
    where = (f"FULLY_CONNECTED (node {node.index}): weights '{context.name(node.input(1))}' use blockwise "
             f"quantization (block size {block})")
    if not four_bit_kernel or context.packed_bits(node.input(1)) != 4:
        raise UnsupportedOpError(
            f"{where}; litert computes it only with int4 weights in its builtin 4-bit kernel, which needs K even "
            f"and ≥ {FILTER_DEPTH} and ≥ {FILTER_WIDTH} units (this node: {context.type_name(node.input(1))} "
            f"weights, K = {k}, {units} units, variant {context.variant.name}).  litert's fallback "
            f"(EvalHybridDense, and every case of its reference kernels) reads no blockwise scales and outputs the "
            f"bias alone; the workbench refuses instead of imitating that")
    if block <= 0 or k % block:
        raise ModelError(f"{where}, which does not divide the depth {k}")
    if int(getattr(details, "zero_points", -1)) >= 0:
        raise UnsupportedOpError(f"{where} with a zero-point tensor; litert reads scales only")
    s_t = int(details.scales)
    scales = context.value(s_t) if 0 <= s_t < len(context.meta) else None
    if scales is None or scales.dtype != np.float16 or scales.size != units * (k // block):
        raise ModelError(f"{where}: the scales tensor {s_t} must be a constant float16 tensor of "
                         f"{units}×{k // block} values")
    return FullyConnectedBlockwise4BitData(
        **geo._asdict(), activation=activation_name(code) + " (ignored by litert's blockwise kernel)",
        block_size=block, block_scales=np.asarray(scales, np.float32).reshape(units, k // block))


def fully_connected_blockwise(x, w, b, d) -> np.ndarray:
    """``EvalBlockwise4Bit``, vectorized over batch and units, block after block in float32: rows
    quantized asymmetrically (q, s, zp); out += float32(Σ_block q·w) · scale and kfsum += scale ·
    float32(Σ_block w) per block; then out = (out − float32(zp)·kfsum) · s + bias.  No activation."""
    blocks = np.asarray(w, np.int64).reshape(d.units, d.depth // d.block_size, d.block_size)
    return blockwise_sums(x, blocks, blocks.sum(axis=2).astype(np.float32), b, d)


def blockwise_sums(x, blocks, block_sums, b, d) -> np.ndarray:
    """:func:`fully_connected_blockwise` given the weights as [units, blocks, block_size] int64 and
    their float32 sums per block."""
    x2 = np.asarray(x, np.float32).reshape(d.batch, d.depth)
    q, s, zp = quant.asymmetric_quantize_rows(x2)
    qb = q.astype(np.int64).reshape(d.batch, blocks.shape[1], d.block_size)
    out = np.zeros((d.batch, d.units), np.float32)
    kfsum = np.zeros(d.units, np.float32)
    for bi in range(blocks.shape[1]):
        acc = qb[:, bi, :] @ blocks[:, bi, :].T                         # exact int [batch, units]
        scale = d.block_scales[:, bi]
        out = (out + (acc.astype(np.float32) * scale[None, :]).astype(np.float32)).astype(np.float32)
        kfsum = (kfsum + (scale * block_sums[:, bi]).astype(np.float32)).astype(np.float32)
    out = (out - (zp.astype(np.float32)[:, None] * kfsum[None, :]).astype(np.float32)).astype(np.float32)
    out = (out * s[:, None]).astype(np.float32)
    if b is not None:
        out = (out + np.asarray(b, np.float32)[None, :]).astype(np.float32)
    return out


__all__ = ["uses_4bit_kernel", "packed_nibbles", "quantize_rows_4bit", "output_4bit", "prepare_4bit",
           "fully_connected_4bit", "blockwise_details", "prepare_blockwise", "fully_connected_blockwise",
           "blockwise_sums",
           "FullyConnectedHybrid4BitData", "FullyConnectedBlockwise4BitData"]

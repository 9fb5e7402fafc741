"""EMBEDDING_LOOKUP (versions 1-3): rows of a table picked by ids, as text models look up word vectors.

Inputs: ids (int32, 1-D), value [rows, ...]; output [len(ids), ...].  An id outside [0, rows) is a
run-time error ("Embedding Lookup: index out of bounds" in TFLite).

* same type in and out (float32, int8, uint8, ...): the rows are copied byte for byte;
* hybrid: an int8 or uint8 table with a float32 output (the dynamic-range converter's form):
  out = float32(v) · scale per value, with the table's one scale (its zero point must be 0).  TFLite
  reads the table bytes as int8 whatever their type, so a uint8 value of 200 becomes −56; so does
  this kernel (bitwise equal to litert).

Per-channel (per-row) scales and int4 / int2 tables are versions 4 and 5, not implemented (a model
asking for them fails at allocate).  LiteRT's builtin and reference builds run the same kernel, and it
has no speed layer: one numpy gather already is the fast way."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..quant import quant_params
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I32, U8
from ._elementwise import fail, refuse


@opdata
class EmbeddingLookupData(OpData):
    rows: int
    output_shape: tuple
    hybrid: bool = False
    scale: float = 1.0


def embedding_lookup(table, ids, d) -> np.ndarray:
    """TFLite's ``EvalSimple`` (a memcpy of each row) or ``EvalHybrid`` (each value read as int8,
    float32(v) · scale, the table's one scale): both builds run this same code."""
    rows = table[ids]
    if d.hybrid:
        rows = (rows.view(np.int8).astype(np.float32) * np.float32(d.scale)).astype(np.float32)
    return rows


@kernel(BuiltinOperator.EMBEDDING_LOOKUP, versions=(1, 2, 3))
class EmbeddingLookup(Kernel):
    name = "embedding_lookup"

    def prepare(self, context, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            refuse(node, f"expects 2 inputs and 1 output; it has {len(node.inputs)} and {len(node.outputs)}")
        ids, value = node.inputs[0], node.inputs[1]
        context.expect_dtype(node, ids, (I32,), "ids")
        dt = context.dtype(value)
        out_t = node.outputs[0]
        out_dt = context.dtype(out_t)
        hybrid = out_dt == F32 and dt in (I8, U8)
        if not hybrid and out_dt is not None and out_dt != dt:
            refuse(node, f"a {dt} table with a {out_dt} output; supported: the same type, or an int8 / uint8 table "
                         f"with a float32 output (hybrid)")
        vs = context.shape(value)
        if len(context.shape(ids)) != 1 or len(vs) < 2:
            refuse(node, f"ids must be 1-D and value at least 2-D; got {list(context.shape(ids))} and {list(vs)}")
        out = (context.shape(ids)[0],) + tuple(vs[1:])
        scale = 1.0
        if hybrid:
            scales, zps, _ = quant_params(context, value)
            if len(scales) != 1:
                refuse(node, f"the int8 table has {len(scales)} scales; per-row scales are version 4 (not implemented)")
            if zps[0] != 0:
                refuse(node, f"the table's zero point is {int(zps[0])}; TFLite's hybrid lookup requires 0")
            scale = float(scales[0])
        context.set_output(out_t, out, F32 if hybrid else dt)
        return EmbeddingLookupData(vs[0], out, hybrid, scale)

    def invoke(self, context, node, d):
        t = context.tensors
        ids = t[node.inputs[0]]
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= d.rows):
            fail(node, f"id {int(ids[(ids < 0) | (ids >= d.rows)][0])} is out of bounds for a table of {d.rows} rows")
        t[node.outputs[0]][...] = embedding_lookup(t[node.inputs[1]], ids, d)


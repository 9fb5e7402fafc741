"""What some file writers do to stored versions, beyond today's rules (facts for the explanations).

TFLite's legacy post-training quantizer (``tensorflow/lite/tools/optimize``, the calibrate-and-quantize
step that ran after conversion in TensorFlow 2.x before the MLIR quantizer) ends with a pass that raises
every operator code it calls quantizable to that op's quantized version — whatever the operator's
tensors are. A shape computation left in int32 (``SHAPE → STRIDED_SLICE → PACK``) is then stored as
v2, where today's rules give v1. The same step keeps the ``min_runtime_version`` metadata the float
conversion wrote, so an int8 model can claim 1.5.0 while its CONV_2D v3 needs 1.14.0.

:data:`LEGACY_QUANTIZER_VERSIONS` lists the version that quantizer stamps, for the ops where it is
above 1 (its operator property table, read from upstream as a fact).
"""

from __future__ import annotations

from ..schema.enums import BuiltinOperator as B

__all__ = ["LEGACY_QUANTIZER_VERSIONS", "legacy_quantizer_note"]

LEGACY_QUANTIZER_VERSIONS: dict[B, int] = {
    **{op: 2 for op in (
        B.ADD, B.ARG_MAX, B.AVERAGE_POOL_2D, B.BATCH_MATMUL, B.BATCH_TO_SPACE_ND, B.SPACE_TO_BATCH_ND,
        B.SPACE_TO_DEPTH, B.SPLIT, B.SPLIT_V, B.CONCATENATION, B.EQUAL, B.NOT_EQUAL, B.GREATER,
        B.GREATER_EQUAL, B.LESS, B.LESS_EQUAL, B.GATHER, B.LOG_SOFTMAX, B.LOGISTIC, B.LSTM,
        B.L2_NORMALIZATION, B.MAX_POOL_2D, B.MAXIMUM, B.MEAN, B.MINIMUM, B.MUL, B.PACK, B.PAD, B.PADV2,
        B.QUANTIZE, B.LEAKY_RELU, B.RELU, B.RELU6, B.RESIZE_BILINEAR, B.RESIZE_NEAREST_NEIGHBOR, B.SLICE,
        B.SOFTMAX, B.STRIDED_SLICE, B.SUB, B.SUM, B.TANH, B.TRANSPOSE, B.MIRROR_PAD, B.REDUCE_MAX,
        B.REDUCE_MIN)},
    B.CONV_2D: 3, B.TRANSPOSE_CONV: 3, B.DEPTHWISE_CONV_2D: 3, B.SVDF: 3,
    B.FULLY_CONNECTED: 4,
}


def legacy_quantizer_note(op, stored: int, computed: int, quantized_model: bool) -> str | None:
    """The explanation for a stored version above today's when the legacy quantizer can have written
    it: an integer-quantized model and exactly the version that quantizer stamps on ``op``."""
    if not quantized_model or computed >= stored or LEGACY_QUANTIZER_VERSIONS.get(op) != stored:
        return None
    name = op.name if isinstance(op, B) else str(op)
    return (f"stored above computed: TFLite's legacy post-training quantizer (tools/optimize) stamps every "
            f"{name} v{stored}, whatever its tensors' types")

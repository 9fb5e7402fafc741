"""Facts about the sample models (tests/sample_models/test_sample_models.py), shared with the CLI tests."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
MANIFEST = json.loads((SAMPLES / "manifest.json").read_text())
ENTRIES = {e["name"][: -len(".tflite")]: e for e in MANIFEST["models"]}
NAMES = sorted(ENTRIES)

SHARED_CODE = ("shared OperatorCode: the converter stamps one code per op with the highest version over "
               "its operators; this operator's own version is lower")
INT16X8 = ("16x8 quantization: the flatbuffer-level quantizer stamps its int8 operator-property version and "
           "skips the version pass")
AEQ = ("AI Edge Quantizer: tensors quantized, OperatorCodes left at the float file's versions")
DEVIATIONS = (INT16X8, AEQ)  # whole-file deviations of a tool, as opposed to SHARED_CODE

# model → {(subgraph, operator): (op, stored, computed, reason op_version gives, kind)}
EXPECTED_DIFFERENCES: dict[str, dict[tuple[int, int], tuple[str, int, int, str, str]]] = {
    "batch_matmul": {},
    "digits_cnn_float": {},  # trained by dev/train_digits.py (TRAINED), all v1
    "dilated_depthwise_float": {},
    "fc_variants_float": {
        # the bias-less FC (written with a -1 bias slot, so not the 2-input v6) and the plain FC are v1;
        # their code is shared with the keep_num_dims FC (v5)
        (0, 2): ("FULLY_CONNECTED", 5, 1, "v1: no rule applies", SHARED_CODE),
        (0, 3): ("FULLY_CONNECTED", 5, 1, "v1: no rule applies", SHARED_CODE),
    },
    "float16_weights": {},
    "gather_batch_dims": {},
    "hybrid_fc_conv": {},
    "int16x8_conv_fc": {
        (0, 0): ("QUANTIZE", 1, 2, "v2: out0=INT16", INT16X8),
        (0, 1): ("CONV_2D", 3, 8,
                 "v8: 16x8 (in0=INT16, in1=INT8, out0=INT16), quantized_bias_type=kTfLiteInt64 (4)", INT16X8),
        (0, 2): ("MAX_POOL_2D", 2, 3, "v3: int16 in/out (in0=INT16, out0=INT16)", INT16X8),
        (0, 4): ("FULLY_CONNECTED", 4, 11,
                 "v11: 16x8 (in0=INT16, in1=INT8, out0=INT16), quantized_bias_type=kTfLiteInt64 (4)", INT16X8),
        (0, 5): ("FULLY_CONNECTED", 4, 11,
                 "v11: 16x8 (in0=INT16, in1=INT8, out0=INT16), quantized_bias_type=kTfLiteInt64 (4)", INT16X8),
        (0, 6): ("SOFTMAX", 2, 3, "v3: in0=INT16", INT16X8),
        (0, 7): ("DEQUANTIZE", 2, 3, "v3: in0=INT16", INT16X8),
    },
    "int8_cnn": {},
    "int8_float_io": {
        # the int8 FC with bias is v4; its code is shared with the bias-less keep_num_dims FC (v5)
        (0, 4): ("FULLY_CONNECTED", 5, 4, "v4: int8 op (in0=INT8, in1=INT8, out0=INT8)", SHARED_CODE),
    },
    "resize_half_pixel": {
        # align_corners alone does not bump RESIZE_BILINEAR; the code is shared with a half-pixel one (v3)
        (0, 0): ("RESIZE_BILINEAR", 3, 1, "v1: no rule applies", SHARED_CODE),
    },
    "resource_variable": {},
    "strided_slice_masks": {},
    "string_ops": {},
    "transpose_conv": {
        (0, 1): ("TRANSPOSE_CONV", 4, 3, "v3: bias input present (4 inputs, in3=FLOAT32 (present))", SHARED_CODE),
        (0, 2): ("TRANSPOSE_CONV", 4, 1, "v1: no rule applies", SHARED_CODE),
    },
    "uint8_legacy_cnn": {},
    "while_loop": {},
}

# The realistic models: model → {(op, stored, computed, kind): number of operators}; {} when every builtin
# operator's computed version is its stored one.  SHARED_CODE rows: a hybrid conv / FC (v5 / v12) or a
# keep_num_dims FC (v5) shares its code with plain ones.  INT16X8 rows: see the module docstring (a 16x8
# DEPTHWISE_CONV_2D, TILE or TRANSPOSE_CONV computes BELOW the stamped version: TFLite has no int16 rule for
# them).  AEQ rows: the computed version of the quantized op against the float file's version.
EXPECTED_DIFFERENCE_COUNTS: dict[str, dict[tuple[str, int, int, str], int]] = {
    "audio_conv1d_dynamic": {("CONV_2D", 5, 1, SHARED_CODE): 1},
    "audio_conv1d_float": {},
    "audio_conv1d_int16x8": {("AVERAGE_POOL_2D", 2, 3, INT16X8): 1, ("BATCH_TO_SPACE_ND", 3, 4, INT16X8): 1,
        ("CONV_2D", 3, 8, INT16X8): 3, ("DEPTHWISE_CONV_2D", 3, 1, INT16X8): 1, ("DEQUANTIZE", 2, 3, INT16X8): 1,
        ("FULLY_CONNECTED", 4, 11, INT16X8): 1, ("MAX_POOL_2D", 2, 3, INT16X8): 1, ("PAD", 2, 3, INT16X8): 1,
        ("QUANTIZE", 1, 2, INT16X8): 1, ("REDUCE_MAX", 2, 3, INT16X8): 1, ("RELU", 2, 3, INT16X8): 1,
        ("SOFTMAX", 2, 3, INT16X8): 1, ("SPACE_TO_BATCH_ND", 3, 4, INT16X8): 1},
    "audio_conv1d_int8": {},
    "efficientnet_block_float": {},
    "efficientnet_block_int16x8": {("ADD", 2, 3, INT16X8): 2, ("CONV_2D", 3, 8, INT16X8): 13,
        ("DEPTHWISE_CONV_2D", 3, 1, INT16X8): 3, ("DEQUANTIZE", 2, 3, INT16X8): 1,
        ("FULLY_CONNECTED", 4, 11, INT16X8): 1, ("LOGISTIC", 2, 3, INT16X8): 13, ("MEAN", 2, 3, INT16X8): 4,
        ("MUL", 2, 4, INT16X8): 14, ("QUANTIZE", 1, 2, INT16X8): 1, ("SOFTMAX", 2, 3, INT16X8): 1},
    "efficientnet_block_int8": {},
    "gru_tiny_dynamic": {("FULLY_CONNECTED", 12, 5, SHARED_CODE): 1},
    "gru_tiny_float": {("FULLY_CONNECTED", 5, 1, SHARED_CODE): 2},
    "kws_lstm_dynamic": {},
    "kws_lstm_float": {},
    "kws_lstm_int8": {},
    "mobilenet_v3_block_aeq_a16w8": {("CONV_2D", 1, 8, AEQ): 13, ("DEQUANTIZE", 1, 3, AEQ): 7,
        ("FULLY_CONNECTED", 1, 11, AEQ): 1, ("MEAN", 1, 3, AEQ): 3, ("MUL", 1, 4, AEQ): 4,
        ("QUANTIZE", 1, 2, AEQ): 7, ("SOFTMAX", 1, 3, AEQ): 1},
    "mobilenet_v3_block_dynamic": {("CONV_2D", 5, 1, SHARED_CODE): 11},
    "mobilenet_v3_block_float": {},
    "mobilenet_v3_block_int8": {},
    "resnet_block_aeq_dynamic": {("CONV_2D", 1, 5, AEQ): 8, ("FULLY_CONNECTED", 1, 12, AEQ): 1},
    "resnet_block_dynamic": {("CONV_2D", 5, 1, SHARED_CODE): 3},
    "resnet_block_float": {},
    "resnet_block_int16x8": {("ADD", 2, 3, INT16X8): 3, ("CONV_2D", 3, 8, INT16X8): 8,
        ("DEQUANTIZE", 2, 3, INT16X8): 1, ("FULLY_CONNECTED", 4, 11, INT16X8): 1, ("MAX_POOL_2D", 2, 3, INT16X8): 1,
        ("MEAN", 2, 3, INT16X8): 1, ("PAD", 2, 3, INT16X8): 2, ("QUANTIZE", 1, 2, INT16X8): 1,
        ("SOFTMAX", 2, 3, INT16X8): 1},
    "resnet_block_int8": {},
    "ssd_head_float": {},
    "ssd_head_int16x8": {("CONCATENATION", 2, 3, INT16X8): 2, ("CONV_2D", 3, 8, INT16X8): 7,
        ("DEPTHWISE_CONV_2D", 3, 1, INT16X8): 2, ("DEQUANTIZE", 2, 3, INT16X8): 2, ("LOGISTIC", 2, 3, INT16X8): 1},
    "ssd_head_int8": {},
    "transformer_tiny_aeq_a16w8": {("BATCH_MATMUL", 1, 3, AEQ): 2, ("CONV_2D", 1, 8, AEQ): 1,
        ("DEQUANTIZE", 1, 3, AEQ): 9, ("FULLY_CONNECTED", 5, 11, AEQ): 7, ("MEAN", 1, 3, AEQ): 7,
        ("MUL", 1, 4, AEQ): 10, ("QUANTIZE", 1, 2, AEQ): 6, ("RSQRT", 1, 3, AEQ): 3, ("SOFTMAX", 1, 3, AEQ): 2,
        ("TRANSPOSE", 1, 5, AEQ): 4},
    "transformer_tiny_aeq_a8w8": {("ADD", 1, 2, AEQ): 9, ("BATCH_MATMUL", 1, 2, AEQ): 2, ("CONV_2D", 1, 3, AEQ): 1,
        ("DEQUANTIZE", 1, 2, AEQ): 6, ("FULLY_CONNECTED", 5, 4, AEQ): 3, ("GELU", 1, 2, AEQ): 1,
        ("MEAN", 1, 2, AEQ): 7, ("MUL", 1, 2, AEQ): 10, ("RSQRT", 1, 2, AEQ): 3, ("SOFTMAX", 1, 2, AEQ): 2,
        ("SQUARED_DIFFERENCE", 1, 2, AEQ): 3, ("TRANSPOSE", 1, 2, AEQ): 4},
    "transformer_tiny_dynamic": {("FULLY_CONNECTED", 12, 1, SHARED_CODE): 1},
    "transformer_tiny_float": {("FULLY_CONNECTED", 5, 1, SHARED_CODE): 3},
    "transformer_tiny_int8": {("FULLY_CONNECTED", 5, 4, SHARED_CODE): 3},
    "unet_tiny_float": {},
    "unet_tiny_int16x8": {("ADD", 2, 3, INT16X8): 1, ("CONCATENATION", 2, 3, INT16X8): 2,
        ("CONV_2D", 3, 8, INT16X8): 12, ("DEQUANTIZE", 2, 3, INT16X8): 1, ("LOGISTIC", 2, 3, INT16X8): 1,
        ("MAX_POOL_2D", 2, 3, INT16X8): 2, ("RESIZE_BILINEAR", 3, 4, INT16X8): 1, ("TILE", 3, 1, INT16X8): 2,
        ("TRANSPOSE_CONV", 3, 2, INT16X8): 1},
    "unet_tiny_int8": {},
    # the architectures of dev/quantized_sweep.py (SWEEP_ARCHITECTURES)
    "aspp_int8": {("RESIZE_BILINEAR", 3, 2, SHARED_CODE): 1},
    "bilstm_int8": {},
    "crnn_gru_16x8": {("ADD", 2, 3, INT16X8): 37, ("CONV_2D", 3, 8, INT16X8): 2, ("DEQUANTIZE", 2, 3, INT16X8): 1,
        ("FULLY_CONNECTED", 4, 11, INT16X8): 20, ("LOGISTIC", 2, 3, INT16X8): 19, ("MAX_POOL_2D", 2, 3, INT16X8): 1,
        ("MUL", 2, 4, INT16X8): 29, ("QUANTIZE", 1, 2, INT16X8): 1, ("SOFTMAX", 2, 3, INT16X8): 1,
        ("SPLIT", 2, 4, INT16X8): 10, ("SPLIT_V", 2, 1, INT16X8): 9, ("SUB", 2, 5, INT16X8): 10,
        ("TANH", 2, 3, INT16X8): 10, ("UNPACK", 1, 4, INT16X8): 1},
    "grouped_conv_aeq_static_wi8_ai8": {("CONV_2D", 6, 3, AEQ): 2, ("DEPTHWISE_CONV_2D", 1, 3, AEQ): 2,
        ("DEQUANTIZE", 1, 2, AEQ): 3, ("FULLY_CONNECTED", 1, 4, AEQ): 1},
    "grouped_conv_dynamic": {("CONV_2D", 6, 5, SHARED_CODE): 2},
    "grouped_conv_float": {("CONV_2D", 6, 1, SHARED_CODE): 2},
    "pixel_ops_int8": {},
    "tconv_decoder_dynamic": {("TRANSPOSE_CONV", 4, 1, SHARED_CODE): 3, ("TRANSPOSE_CONV", 4, 2, SHARED_CODE): 1},
    "yolo_head_int8": {},
}


def _rows(name: str) -> dict[tuple[str, int, int], tuple[int, str]]:
    """A model's listed differences as (op, stored, computed) → (number of operators, kind)."""
    if name in EXPECTED_DIFFERENCE_COUNTS:
        return {(op, s, c): (n, kind) for (op, s, c, kind), n in EXPECTED_DIFFERENCE_COUNTS[name].items()}
    rows: dict = {}
    for op, s, c, _, kind in EXPECTED_DIFFERENCES[name].values():
        n, _ = rows.get((op, s, c), (0, kind))
        rows[(op, s, c)] = (n + 1, kind)
    return rows


def _deviation_ops(name: str) -> set[str]:
    """Ops with an INT16X8 or AEQ difference in this model: their codes hold a tool's version, not the max."""
    return {op for (op, _, _), (_, kind) in _rows(name).items() if kind in DEVIATIONS}


# The files whose versions a tool stamped (the 16x8 quantizer, the AI Edge Quantizer): TFLite checks their
# stored versions, which are not today's computed ones.  tests/cli/test_cli_versions.py imports this.
TOOL_STAMPED = frozenset(n for n in NAMES if _deviation_ops(n))

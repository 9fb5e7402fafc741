"""TFLite_Detection_PostProcess (custom op, version 1): SSD box decoding + non-max suppression.

Inputs: box encodings [1, N, >=4] (y, x, h, w relative to an anchor; extra keypoint columns are
ignored), class scores [1, N, C'] where C' = num_classes or num_classes + 1 (a background column
first), anchors [N, 4] (ycenter, xcenter, h, w).  Outputs, all float32:
detection_boxes [1, M, 4] (ymin, xmin, ymax, xmax), detection_classes [1, M],
detection_scores [1, M], num_detections [1], with M = max_detections * max_classes_per_detection.

Options: a FlexBuffer map (``workbench.options.custom``) with max_detections,
max_classes_per_detection, detections_per_class (absent: 100), use_regular_nms (absent: false),
nms_score_threshold, nms_iou_threshold, num_classes, y_scale, x_scale, h_scale, w_scale.  As in
TFLite's Init, an absent numeric key reads as 0.

1. Decode (float64 arithmetic, each result stored as float32):
     yc = y / y_scale * anchor_h + anchor_y          xc = x / x_scale * anchor_w + anchor_x
     half_h = 0.5 * exp(h / h_scale) * anchor_h      half_w = 0.5 * exp(w / w_scale) * anchor_w
     box = (yc - half_h, xc - half_w, yc + half_h, xc + half_w)      (float32 subtractions)
   uint8 boxes are dequantized first, (q - zero_point) * scale in float32, and then the anchors
   must be uint8 too (with their own scale / zero point); float32 boxes need float32 anchors.
   uint8 scores are dequantized the same way.  No other types (TFLite's kernel has no int8 path).
2. Single-class NMS (used by both modes): keep scores >= nms_score_threshold; stable sort by
   decreasing score (ties keep the lower anchor first); walk the list, select each still-active
   box and deactivate every later active box whose IoU with it is > nms_iou_threshold; stop after
   ``limit`` selections (``_nms.single_class_nms``).  IoU is float32 arithmetic; a box of area <= 0
   has IoU 0 with anything.
   A decoded box with ymin > ymax or xmin > xmax is an error (TFLite's ValidateBoxes).
3a. Fast NMS (use_regular_nms false, what SSD exports use): per anchor the best class score
   (first maximum); NMS on those with limit max_detections; for each selected anchor, its top
   min(max_classes_per_detection, num_classes) classes by score (C++ std::partial_sort order,
   emulated here for ties).  Slots past the written ones are left unwritten by TFLite (stale
   memory); here they are zero.
3b. Regular NMS: for each class in order, NMS with limit min(detections_per_class,
   max_detections); merge the picks into the running list sorted by decreasing score (on ties the
   earlier class / earlier pick stays first: std::inplace_merge) and keep the first max_detections.
   The first max_detections output slots are written (zeros past the detections).
num_detections counts detections (anchors in fast mode), as float32.

Classes are reported without the background column (class index - label_offset).

Differences from TFLite, on purpose: a zero y/x/h/w scale, anchors that are not [N, 4], an IoU
threshold outside (0, 1] and regular NMS with max_classes_per_detection 0 (which would write past
the outputs) are refused in prepare with a named error instead of producing inf/NaN, reading out
of bounds or failing in invoke.  Unwritten padding is zero rather than stale memory.
Both builds of TFLite run this one kernel (BUILTIN_REF too): no arithmetic variant.
"""

from __future__ import annotations

import numpy as np

from ..quant import tensor_scale_zp
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, U8
from ._elementwise import fail, refuse
from ._nms import partial_sort_desc, single_class_nms

NUM_DETECTIONS_PER_CLASS_DEFAULT = 100


@opdata
class DetectionPostProcessData(OpData):
    max_detections: int
    max_classes_per_detection: int
    detections_per_class: int
    use_regular_nms: bool
    nms_score_threshold: float        # float32 values, as TFLite keeps them
    nms_iou_threshold: float
    num_classes: int
    y_scale: float
    x_scale: float
    h_scale: float
    w_scale: float
    num_boxes: int
    num_classes_with_background: int
    label_offset: int                 # 1 when the scores carry a background column first
    num_detected_boxes: int           # M = max_detections * max_classes_per_detection
    box_dtype: str
    score_dtype: str
    box_scale: float = 0.0
    box_zero_point: int = 0
    anchor_scale: float = 0.0
    anchor_zero_point: int = 0
    score_scale: float = 0.0
    score_zero_point: int = 0


# ----------------------------------------------------------------------------------------------
# options


def _options(node) -> dict:
    c = node.custom
    if c is None or c.format == "none":
        refuse(node, "has no custom options (a FlexBuffer map with max_detections, num_classes, ... is needed)")
    if c.format != "flexbuffers" or not isinstance(c.value, dict):
        refuse(node, "custom options are not a FlexBuffer map")
    return c.value


def _int(o: dict, key: str, default: int = 0) -> int:
    v = o.get(key, None)
    return default if v is None else int(v)


def _f32(o: dict, key: str) -> float:
    v = o.get(key, None)
    return float(np.float32(0.0 if v is None else v))


# ----------------------------------------------------------------------------------------------
# the pieces


def dequantize_u8(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """(float(q) - float(zero_point)) * scale, in float32."""
    return ((q.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)).astype(np.float32)


def decode_boxes(enc: np.ndarray, anchors: np.ndarray, d) -> np.ndarray:
    """enc [N, 4] and anchors [N, 4] (float32, centre-size) -> boxes [N, 4] (ymin, xmin, ymax, xmax)."""
    e = enc.astype(np.float64)
    a = anchors.astype(np.float64)
    yc = (e[:, 0] / np.float64(d.y_scale) * a[:, 2] + a[:, 0]).astype(np.float32)
    xc = (e[:, 1] / np.float64(d.x_scale) * a[:, 3] + a[:, 1]).astype(np.float32)
    hh = (0.5 * np.exp(e[:, 2] / np.float64(d.h_scale)) * a[:, 2]).astype(np.float32)
    hw = (0.5 * np.exp(e[:, 3] / np.float64(d.w_scale)) * a[:, 3]).astype(np.float32)
    return np.stack([yc - hh, xc - hw, yc + hh, xc + hw], axis=1).astype(np.float32)


def _inputs(context, node, d) -> tuple[np.ndarray, np.ndarray]:
    """(decoded boxes [N, 4], float32 scores [N, C']) from the node's inputs."""
    t = context.tensors
    enc = t[node.inputs[0]].reshape(d.num_boxes, -1)[:, :4]
    anchors = t[node.inputs[2]].reshape(d.num_boxes, 4)
    if d.box_dtype == "uint8":
        enc = dequantize_u8(enc, d.box_scale, d.box_zero_point)
        anchors = dequantize_u8(anchors, d.anchor_scale, d.anchor_zero_point)
    scores = t[node.inputs[1]].reshape(d.num_boxes, d.num_classes_with_background)
    if d.score_dtype == "uint8":
        scores = dequantize_u8(scores, d.score_scale, d.score_zero_point)
    boxes = decode_boxes(enc, anchors, d)
    bad = (boxes[:, 0] > boxes[:, 2]) | (boxes[:, 1] > boxes[:, 3])
    if bad.any():
        i = int(np.argmax(bad))
        fail(node, f"decoded box {i} {boxes[i].tolist()} has ymin > ymax or xmin > xmax (a negative anchor "
                   f"height or width?); TFLite's ValidateBoxes refuses it too")
    return boxes, scores.astype(np.float32, copy=False)


def top_classes(row: np.ndarray, k: int) -> list[int]:
    """TFLite's DecreasingPartialArgSort: the first maximum for k == 1, else std::partial_sort."""
    if k == 1:
        return [int(np.argmax(row))]          # numpy's argmax returns the first maximum, as ArgMaxVector
    return partial_sort_desc(row, k)


# ----------------------------------------------------------------------------------------------
# the two NMS modes


def fast_nms(boxes, scores, d):
    """TFLite's NonMaxSuppressionMultiClassFastHelper (step 3a of the module docstring)."""
    s = scores[:, d.label_offset:]
    k = min(d.max_classes_per_detection, d.num_classes)
    if k == 1:
        best = np.argmax(s, axis=1)
        max_scores = s[np.arange(d.num_boxes), best]
    else:
        max_scores = np.array([s[r, top_classes(s[r], k)[0]] for r in range(d.num_boxes)], np.float32)
    selected = single_class_nms(boxes, max_scores, d.nms_score_threshold, d.nms_iou_threshold, d.max_detections)
    out_boxes = np.zeros((d.num_detected_boxes, 4), np.float32)
    out_classes = np.zeros(d.num_detected_boxes, np.float32)
    out_scores = np.zeros(d.num_detected_boxes, np.float32)
    for n, anchor in enumerate(selected):
        cls = [int(best[anchor])] if k == 1 else top_classes(s[anchor], k)
        for col, c in enumerate(cls):
            slot = d.max_classes_per_detection * n + col
            out_boxes[slot] = boxes[anchor]
            out_classes[slot] = c
            out_scores[slot] = s[anchor, c]
    return out_boxes, out_classes, out_scores, len(selected)


def regular_nms(boxes, scores, d):
    """TFLite's NonMaxSuppressionMultiClassRegularHelper (step 3b of the module docstring)."""
    limit = min(d.detections_per_class, d.max_detections)
    picks: list[tuple[float, int, int]] = []      # (score, anchor, class) sorted by decreasing score
    for c in range(d.num_classes):
        col = scores[:, c + d.label_offset]
        new = [(float(col[i]), i, c) for i in single_class_nms(boxes, col, d.nms_score_threshold,
                                                               d.nms_iou_threshold, limit)]
        # the merge keeps earlier entries first on ties: a stable sort of the concatenation
        picks = sorted(picks + new, key=lambda p: -p[0])[:d.max_detections]
    out_boxes = np.zeros((d.num_detected_boxes, 4), np.float32)
    out_classes = np.zeros(d.num_detected_boxes, np.float32)
    out_scores = np.zeros(d.num_detected_boxes, np.float32)
    for n, (score, anchor, c) in enumerate(picks):
        out_boxes[n] = boxes[anchor]
        out_classes[n] = c
        out_scores[n] = score
    return out_boxes, out_classes, out_scores, len(picks)


@kernel("TFLite_Detection_PostProcess", versions=(1,), custom=True)
class DetectionPostProcess(Kernel):
    name = "detection_postprocess"

    def prepare(self, context, node):
        if len(node.inputs) != 3 or len(node.outputs) != 4:
            refuse(node, f"needs 3 inputs (box encodings, class scores, anchors) and 4 outputs; it has "
                         f"{len(node.inputs)} and {len(node.outputs)}")
        b_t, s_t, a_t = node.inputs[0], node.inputs[1], node.inputs[2]
        bdt = context.expect_dtype(node, b_t, (F32, U8), "box encodings")
        sdt = context.expect_dtype(node, s_t, (F32, U8), "class scores")
        context.expect_dtype(node, a_t, (bdt,), "anchors (the same type as the box encodings)")
        bs, ss, as_ = context.shape(b_t), context.shape(s_t), context.shape(a_t)
        if len(bs) != 3 or len(ss) != 3 or len(as_) != 2:
            refuse(node, f"box encodings {list(bs)} and class scores {list(ss)} must be rank 3, anchors "
                         f"{list(as_)} rank 2")
        if bs[0] != 1 or ss[0] != 1:
            refuse(node, f"batch must be 1 (box encodings {list(bs)}, class scores {list(ss)})")
        if bs[2] < 4:
            refuse(node, f"box encodings {list(bs)}: the last dimension must be at least 4")
        n = bs[1]
        if ss[1] != n or tuple(as_) != (n, 4):
            refuse(node, f"{n} boxes need class scores [1, {n}, C] and anchors [{n}, 4]; got {list(ss)} and "
                         f"{list(as_)}")
        o = _options(node)
        max_det = _int(o, "max_detections")
        max_cls = _int(o, "max_classes_per_detection")
        dpc = _int(o, "detections_per_class", NUM_DETECTIONS_PER_CLASS_DEFAULT)
        regular = bool(o.get("use_regular_nms") or False)
        num_classes = _int(o, "num_classes")
        if max_det < 0 or max_cls < 0 or dpc < 0:
            refuse(node, f"max_detections ({max_det}), max_classes_per_detection ({max_cls}) and "
                         f"detections_per_class ({dpc}) must not be negative")
        if num_classes <= 0:
            refuse(node, f"num_classes is {num_classes}; it must be positive")
        label_offset = ss[2] - num_classes
        if label_offset not in (0, 1):
            refuse(node, f"class scores have {ss[2]} columns for num_classes {num_classes}: expected "
                         f"num_classes or num_classes + 1 (a background column)")
        scales = {k: _f32(o, k) for k in ("y_scale", "x_scale", "h_scale", "w_scale")}
        zero = [k for k, v in scales.items() if v == 0.0]
        if zero:
            refuse(node, f"{', '.join(zero)} is 0 or missing (TFLite would divide by zero)")
        iou = _f32(o, "nms_iou_threshold")
        if not 0.0 < iou <= 1.0:
            refuse(node, f"nms_iou_threshold is {iou}; it must be in (0, 1]")
        if regular and (max_cls < 1 or dpc < 1 or max_det < 1):
            refuse(node, f"regular NMS needs max_detections, detections_per_class and max_classes_per_detection "
                         f">= 1 (got {max_det}, {dpc}, {max_cls})")
        if not regular and max_cls < 1:
            refuse(node, "fast NMS needs max_classes_per_detection >= 1")
        m = max_det * max_cls
        if m >= 2 ** 31:
            refuse(node, f"max_detections * max_classes_per_detection = {m} overflows int32")
        q = {}
        if bdt == U8:
            q["box_scale"], q["box_zero_point"] = tensor_scale_zp(context, b_t)
            q["anchor_scale"], q["anchor_zero_point"] = tensor_scale_zp(context, a_t)
        if sdt == U8:
            q["score_scale"], q["score_zero_point"] = tensor_scale_zp(context, s_t)
        context.set_output(node.outputs[0], (1, m, 4), F32)
        context.set_output(node.outputs[1], (1, m), F32)
        context.set_output(node.outputs[2], (1, m), F32)
        context.set_output(node.outputs[3], (1,), F32)
        return DetectionPostProcessData(
            max_det, max_cls, dpc, regular, _f32(o, "nms_score_threshold"), iou, num_classes,
            scales["y_scale"], scales["x_scale"], scales["h_scale"], scales["w_scale"], n, ss[2], label_offset, m,
            str(bdt), str(sdt), **q)

    def invoke(self, context, node, d):
        boxes, scores = _inputs(context, node, d)
        mode = regular_nms if d.use_regular_nms else fast_nms
        out_boxes, out_classes, out_scores, count = mode(boxes, scores, d)
        t = context.tensors
        t[node.outputs[0]][...] = out_boxes.reshape(1, -1, 4)
        t[node.outputs[1]][...] = out_classes.reshape(1, -1)
        t[node.outputs[2]][...] = out_scores.reshape(1, -1)
        t[node.outputs[3]][...] = np.float32(count)

    def kernel_name(self, data, reference: bool = False) -> str:
        base = super().kernel_name(data, reference)
        if data is None:
            return base
        return f"{base} ({'regular' if data.use_regular_nms else 'fast'} NMS)"

"""NON_MAX_SUPPRESSION_V4 (float32): TensorFlow's NonMaxSuppressionV4, the algorithm of ``_nms.py``.

Inputs: boxes [N, 4], scores [N], max_output_size (int32 scalar; its value sizes the outputs),
iou_threshold and score_threshold (float32 scalars).  Outputs: selected_indices [max_output_size]
(int32, zero past the selections) and valid_outputs (int32 scalar)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _nms
from ._common import F32
from ._elementwise import I32, fail, refuse

SOFT = False


@opdata
class NonMaxSuppressionV4Data(OpData):
    num_boxes: int
    max_output_size: int


@kernel(BuiltinOperator.NON_MAX_SUPPRESSION_V4, versions=(1,))
class NonMaxSuppressionV4(Kernel):
    name = "non_max_suppression_v4"

    def prepare(self, context, node):
        n_in, n_out = (6, 3) if SOFT else (5, 2)
        if len(node.inputs) != n_in or len(node.outputs) != n_out:
            refuse(node, f"expects {n_in} inputs and {n_out} outputs; it has {len(node.inputs)} and "
                         f"{len(node.outputs)}")
        boxes, scores = node.inputs[0], node.inputs[1]
        context.expect_dtype(node, boxes, (F32,), "boxes")
        context.expect_dtype(node, scores, (F32,), "scores")
        context.expect_dtype(node, node.inputs[2], (I32,), "max_output_size")
        for k in range(3, n_in):
            context.expect_dtype(node, node.inputs[k], (F32,), f"input {k}")
        bs = context.shape(boxes)
        if len(bs) != 2 or bs[1] != 4 or tuple(context.shape(scores)) != (bs[0],):
            refuse(node, f"boxes {list(bs)} must be [N, 4] and scores {list(context.shape(scores))} [N]")
        m = [int(v) for v in np.asarray(context.require_value(node, 2, "max_output_size")).reshape(-1)]
        if len(m) != 1 or m[0] < 0:
            fail(node, f"max_output_size must be one non-negative value; got {m}")
        context.set_output(node.outputs[0], (m[0],), I32)
        if SOFT:
            context.set_output(node.outputs[1], (m[0],), F32)
        context.set_output(node.outputs[-1], (), I32)
        return NonMaxSuppressionV4Data(bs[0], m[0])

    def invoke(self, context, node, d):
        t = context.tensors
        iou_thr = _nms.scalar(context, node, 3, "iou_threshold", np.float32)
        score_thr = _nms.scalar(context, node, 4, "score_threshold", np.float32)
        sigma = _nms.scalar(context, node, 5, "soft_nms_sigma", np.float32) if SOFT else np.float32(0)
        if not 0 <= iou_thr <= 1:
            fail(node, f"iou_threshold {float(iou_thr)} must be in [0, 1]")
        if sigma < 0:
            fail(node, f"soft_nms_sigma {float(sigma)} must not be negative")
        sel, sc = _nms.nms(t[node.inputs[0]], t[node.inputs[1]], d.max_output_size, iou_thr, score_thr, sigma)
        out = t[node.outputs[0]]
        out[...] = 0
        out[:len(sel)] = sel
        if SOFT:
            so = t[node.outputs[1]]
            so[...] = 0
            so[:len(sc)] = sc
        t[node.outputs[-1]][...] = len(sel)

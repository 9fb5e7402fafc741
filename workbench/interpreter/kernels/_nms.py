"""TFLite's non-max suppressions, and the libstdc++ heap routines whose tie order they inherit.

NON_MAX_SUPPRESSION_V4 and V5 share :func:`nms`, TensorFlow's single-class (soft) NMS:
boxes [N, 4] hold two opposite corners (y1, x1, y2, x2) in either order; scores [N].
  * candidates: boxes with score > score_threshold, in a max-priority queue on the score
    (C++ std::priority_queue; equal scores come out in the order its binary heap gives, emulated
    here step for step as libstdc++ does it);
  * repeatedly take the best candidate and compare it with the boxes selected since it was last
    looked at, newest first: IoU >= iou_threshold drops it (hard suppression); otherwise, with
    soft_nms_sigma > 0, its score is multiplied by exp(-0.5 / sigma * IoU^2), and comparing stops
    once the score is <= score_threshold;
  * a candidate whose score did not change is selected; one still above the threshold goes back
    into the queue (with its decayed score);
  * at most min(max_output_size, number of candidates) boxes are selected.
IoU is float32: corners sorted, areas, intersection clipped at 0; union 0 (or an area <= 0) gives 0.

TFLite_Detection_PostProcess (detection_postprocess.py) uses :func:`single_class_nms` (its
NonMaxSuppressionSingleClassHelper: hard suppression, IoU > threshold, boxes already (ymin, xmin,
ymax, xmax)) and :func:`partial_sort_desc` (std::partial_sort's order of equal class scores).
"""

from __future__ import annotations

import numpy as np

from ..registry import Kernel, OpData, opdata
from ._common import F32, I32
from ._elementwise import fail, refuse


def iou(boxes: np.ndarray, i: int, j: int) -> np.float32:
    a, b = boxes[i], boxes[j]
    ay0, ay1 = min(a[0], a[2]), max(a[0], a[2])
    ax0, ax1 = min(a[1], a[3]), max(a[1], a[3])
    by0, by1 = min(b[0], b[2]), max(b[0], b[2])
    bx0, bx1 = min(b[1], b[3]), max(b[1], b[3])
    area_a = np.float32((ay1 - ay0) * (ax1 - ax0))
    area_b = np.float32((by1 - by0) * (bx1 - bx0))
    if area_a <= 0 or area_b <= 0:
        return np.float32(0)
    inter = np.float32(max(min(ay1, by1) - max(ay0, by0), np.float32(0)) *
                       max(min(ax1, bx1) - max(ax0, bx0), np.float32(0)))
    union = np.float32(area_a + area_b - inter)
    if union == 0:
        return np.float32(0)
    return np.float32(inter / union)


def adjust_heap(c: list, hole: int, n: int, value, less) -> None:
    """libstdc++'s ``std::__adjust_heap`` on ``c[:n]``: sink the hole at ``hole`` to a leaf (taking the
    larger child each time, the right one on ties), then push ``value`` back up (``less`` orders)."""
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(c[child], c[child - 1]):
            child -= 1
        c[hole] = c[child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        c[hole] = c[child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(c[parent], value):
        c[hole] = c[parent]
        hole = parent
        parent = (hole - 1) // 2
    c[hole] = value


class _Heap:
    """std::priority_queue<Candidate> (a max-heap on the score) with libstdc++'s push_heap / pop_heap."""

    def __init__(self):
        self.c: list = []            # [index, score, suppress_begin_index]

    @staticmethod
    def _less(a, b) -> bool:
        return a[1] < b[1]

    def push(self, item) -> None:
        c = self.c
        c.append(item)
        hole = len(c) - 1
        parent = (hole - 1) // 2
        while hole > 0 and self._less(c[parent], item):
            c[hole] = c[parent]
            hole = parent
            parent = (hole - 1) // 2
        c[hole] = item

    def pop(self):
        c = self.c
        top = c[0]
        last = c.pop()
        if c:
            adjust_heap(c, 0, len(c), last, self._less)
        return top

    def __len__(self) -> int:
        return len(self.c)


def partial_sort_desc(values: np.ndarray, k: int) -> list[int]:
    """The first k indices of ``std::partial_sort`` (libstdc++: heap select, then sort_heap) of
    0..n-1 by decreasing value, so that ties come out in the same order as TFLite's."""
    first = list(range(len(values)))

    def comp(i, j):
        return values[i] > values[j]

    for parent in range((k - 2) // 2, -1, -1) if k >= 2 else ():     # make_heap on [0, k)
        adjust_heap(first, parent, k, first[parent], comp)
    for i in range(k, len(first)):                                     # heap select
        if k and comp(first[i], first[0]):
            value = first[i]
            first[i] = first[0]
            adjust_heap(first, 0, k, value, comp)
    for last in range(k - 1, 0, -1):                                   # sort_heap
        value = first[last]
        first[last] = first[0]
        adjust_heap(first, 0, last, value, comp)
    return first[:k]


def iou_with(boxes: np.ndarray, i: int, js: np.ndarray) -> np.ndarray:
    """IoU of decoded box i (ymin, xmin, ymax, xmax) with boxes js, float32 step by step; 0 where
    either area is <= 0."""
    bi = boxes[i]
    bj = boxes[js]
    area_i = (bi[2] - bi[0]) * (bi[3] - bi[1])
    area_j = (bj[:, 2] - bj[:, 0]) * (bj[:, 3] - bj[:, 1])
    ih = np.maximum(np.minimum(bi[2], bj[:, 2]) - np.maximum(bi[0], bj[:, 0]), np.float32(0.0))
    iw = np.maximum(np.minimum(bi[3], bj[:, 3]) - np.maximum(bi[1], bj[:, 1]), np.float32(0.0))
    inter = (ih * iw).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = (inter / (area_i + area_j - inter).astype(np.float32)).astype(np.float32)
    return np.where((area_i <= 0) | (area_j <= 0), np.float32(0.0), iou)


def single_class_nms(boxes, scores, score_threshold, iou_threshold, limit) -> list[int]:
    """The detection post-processing's NonMaxSuppressionSingleClassHelper: keep scores >= threshold,
    stable sort by decreasing score, walk the list selecting each still-active box and deactivating
    every later active box whose IoU with it is > iou_threshold (all of them at once), stop after
    ``limit`` selections.  The selected anchor indices, in selection order."""
    keep = np.nonzero(scores >= np.float32(score_threshold))[0]
    cand = keep[np.argsort(-scores[keep], kind="stable")]
    active = np.ones(len(cand), bool)
    selected: list[int] = []
    limit = min(limit, len(cand))
    a = 0
    while len(selected) < limit:
        rest = np.flatnonzero(active[a:])
        if not len(rest):
            break
        a += int(rest[0])
        i = int(cand[a])
        selected.append(i)
        active[a] = False
        later = np.flatnonzero(active[a + 1:]) + a + 1
        if len(later):
            active[later[iou_with(boxes, i, cand[later]) > np.float32(iou_threshold)]] = False
        a += 1
    return selected


def nms(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma=0.0):
    """(selected indices, their (possibly decayed) scores)."""
    thr = np.float32(score_threshold)
    iou_thr = np.float32(iou_threshold)
    heap = _Heap()
    for i, s in enumerate(scores):
        if s > thr:
            heap.push([i, np.float32(s), 0])
    num_outputs = min(len(heap), max_output_size)
    sigma = np.float32(soft_nms_sigma)
    scale = np.float32(-0.5) / sigma if sigma > 0 else np.float32(0)
    selected, sel_scores = [], []
    while len(selected) < num_outputs and len(heap):
        cand = heap.pop()
        original = cand[1]
        hard = False
        for j in range(len(selected) - 1, cand[2] - 1, -1):
            v = iou(boxes, cand[0], selected[j])
            if v >= iou_thr:
                hard = True
                break
            if sigma > 0:
                cand[1] = np.float32(cand[1] * np.float32(np.exp(np.float32(scale * v * v))))
            if cand[1] <= thr:
                break
        cand[2] = len(selected)
        if not hard:
            if cand[1] == original:
                selected.append(cand[0])
                sel_scores.append(cand[1])
            if cand[1] > thr:
                heap.push(cand)
    return selected, sel_scores


def scalar(context, node, slot, what, dtype) -> float:
    v = np.asarray(context.tensors[node.inputs[slot]]).reshape(-1)
    return dtype(v[0])


@opdata
class NonMaxSuppressionData(OpData):
    num_boxes: int
    max_output_size: int


class NmsKernel(Kernel):
    """The kernel of both ops; ``soft`` (V5) adds the soft_nms_sigma input and the selected_scores output."""

    soft = False

    def prepare(self, context, node):
        n_in, n_out = (6, 3) if self.soft else (5, 2)
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
        if self.soft:
            context.set_output(node.outputs[1], (m[0],), F32)
        context.set_output(node.outputs[-1], (), I32)
        return NonMaxSuppressionData(bs[0], m[0])

    def invoke(self, context, node, d):
        t = context.tensors
        iou_thr = scalar(context, node, 3, "iou_threshold", np.float32)
        score_thr = scalar(context, node, 4, "score_threshold", np.float32)
        sigma = scalar(context, node, 5, "soft_nms_sigma", np.float32) if self.soft else np.float32(0)
        if not 0 <= iou_thr <= 1:
            fail(node, f"iou_threshold {float(iou_thr)} must be in [0, 1]")
        if sigma < 0:
            fail(node, f"soft_nms_sigma {float(sigma)} must not be negative")
        sel, sc = nms(t[node.inputs[0]], t[node.inputs[1]], d.max_output_size, iou_thr, score_thr, sigma)
        out = t[node.outputs[0]]
        out[...] = 0
        out[:len(sel)] = sel
        if self.soft:
            so = t[node.outputs[1]]
            so[...] = 0
            so[:len(sc)] = sc
        t[node.outputs[-1]][...] = len(sel)

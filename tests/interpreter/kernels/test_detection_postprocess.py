"""TFLite_Detection_PostProcess: tiny SSD-like one-op models, ours vs ai-edge-litert.

Each case builds the custom op with a FlexBuffer options map and runs it: the default interpreter
and the teaching layer alone (``reference=True``; the kernel has no speed layer, kernels/
detection_postprocess.py is both), litert's builtin kernel and its reference kernels (BUILTIN_REF,
the oracle of ``variant="reference"``: the two builds share this kernel) in child processes.
Outputs are float32 but the op is a selection: boxes, classes, scores and the count must be
EXACTLY equal wherever TFLite writes them.  Fast NMS leaves the slots past the detections
unwritten (stale memory in TFLite), so those are compared only as "ours are zero".  The vectorised
single-class NMS is also checked against the plain loop it replaced.

Cases cover fast and regular NMS, a background column or none, several classes per detection,
more classes per detection than classes, keypoint columns in the encodings, uint8 boxes and
scores (ties everywhere: 256 score levels), thresholds that leave few detections, and overlapping
boxes so that suppression really happens.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from flatbuffers import flexbuffers

from helpers import litert_runner
from workbench.errors import UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.kernels import _nms
from workbench.interpreter.kernels import detection_postprocess as dp
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder

OP = "TFLite_Detection_PostProcess"


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def options(**kw) -> bytes:
    o = {"max_detections": 10, "max_classes_per_detection": 1, "nms_score_threshold": 0.3,
         "nms_iou_threshold": 0.5, "num_classes": 4, "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0,
         "w_scale": 5.0}
    o.update(kw)
    o = {k: v for k, v in o.items() if v is not None}
    return flexbuffers.Dumps(o)


def anchors_grid(n: int, rng) -> np.ndarray:
    """[n, 4] (ycenter, xcenter, h, w): a coarse grid with jitter, sizes 0.15-0.4 (boxes overlap)."""
    side = int(np.ceil(np.sqrt(n)))
    k = np.arange(n)
    yc = (k // side + 0.5) / side + rng.uniform(-0.03, 0.03, n)
    xc = (k % side + 0.5) / side + rng.uniform(-0.03, 0.03, n)
    h = rng.uniform(0.15, 0.4, n)
    w = rng.uniform(0.15, 0.4, n)
    return np.stack([yc, xc, h, w], 1).astype(np.float32)


def build_model(n=40, classes=4, background=True, coords=4, dtype="float32", quant=None, opts=b"",
                anchor_values=None, enc=None, scores=None, rng=None):
    cw = classes + (1 if background else 0)
    b = ModelBuilder()
    qb = qs = qa = None
    if dtype == "uint8":
        qb, qs, qa = quant
    dt = np.uint8 if dtype == "uint8" else np.float32
    box_t = b.input("box_encodings", (1, n, coords), dt,
                    quantization=None if qb is None else {"scale": qb[0], "zero_point": qb[1]})
    sc_t = b.input("class_predictions", (1, n, cw), dt,
                   quantization=None if qs is None else {"scale": qs[0], "zero_point": qs[1]})
    an_t = b.constant("anchors", anchor_values,
                      quantization=None if qa is None else {"scale": qa[0], "zero_point": qa[1]})
    outs = [b.tensor(name, shape, np.float32) for name, shape in
            (("detection_boxes", (1, 1, 4)), ("detection_classes", (1, 1)), ("detection_scores", (1, 1)),
             ("num_detections", (1,)))]
    b.op(B.CUSTOM, [box_t, sc_t, an_t], outs, custom_code=OP, custom_options=opts)
    b.output(*outs)
    return b.build(), {"box_encodings": enc, "class_predictions": scores}


CASES = {}


def case(name, n=40, classes=4, background=True, coords=4, dtype="float32", score_hi=1.0, **kw):
    def build():
        rng = rng_for(name)
        anchors = anchors_grid(n, rng)
        enc = rng.normal(0.0, 1.0, (1, n, coords)).astype(np.float32)
        cw = classes + (1 if background else 0)
        scores = rng.uniform(0.0, score_hi, (1, n, cw)).astype(np.float32)
        quant = None
        if dtype == "uint8":
            qb, qs, qa = (0.05, 128), (1.0 / 255, 0), (1.0 / 255, 0)
            enc = np.clip(np.round(enc / qb[0]) + qb[1], 0, 255).astype(np.uint8)
            scores = np.clip(np.round(scores / qs[0]), 0, 255).astype(np.uint8)
            anchors = np.clip(np.round(anchors / qa[0]), 1, 255).astype(np.uint8)
            quant = (qb, qs, qa)
        opts = options(num_classes=classes, **kw)
        return build_model(n, classes, background, coords, dtype, quant, opts, anchors, enc, scores)
    CASES[name] = build


case("fast_ssd_like")
case("fast_no_background", background=False)
case("fast_3_classes_per_detection", max_classes_per_detection=3, classes=5)
case("fast_more_classes_per_detection_than_classes", max_classes_per_detection=4, classes=2, max_detections=6)
case("fast_keypoint_columns", coords=8, max_detections=5)
case("fast_few_detections", nms_score_threshold=0.93, max_detections=8)
case("fast_no_detections", nms_score_threshold=2.0)
case("fast_iou_threshold_1", nms_iou_threshold=1.0, max_detections=12)
case("fast_many_anchors", n=300, classes=6, max_detections=20, nms_score_threshold=0.05, nms_iou_threshold=0.3)
case("regular", use_regular_nms=True, detections_per_class=4)
case("regular_no_background", use_regular_nms=True, detections_per_class=3, background=False)
case("regular_default_detections_per_class", use_regular_nms=True, max_detections=15)
case("regular_few_detections", use_regular_nms=True, detections_per_class=5, nms_score_threshold=0.9,
     max_detections=20)
case("regular_2_classes_per_detection", use_regular_nms=True, max_classes_per_detection=2, max_detections=5)
case("uint8_fast", dtype="uint8")
case("uint8_fast_3_classes", dtype="uint8", max_classes_per_detection=3, classes=6, score_hi=0.1,
     nms_score_threshold=0.0)
case("uint8_regular", dtype="uint8", use_regular_nms=True, detections_per_class=5, score_hi=0.2,
     nms_score_threshold=0.05)
case("uint8_regular_ties", n=60, dtype="uint8", use_regular_nms=True, classes=8, detections_per_class=6,
     max_detections=25, score_hi=0.03, nms_score_threshold=0.0)
case("uint8_fast_ties", n=60, dtype="uint8", classes=8, max_detections=25, score_hi=0.03,
     nms_score_threshold=0.0, nms_iou_threshold=0.6)


def run_ours(model, feed, reference=False, variant="litert-x86"):
    it = Interpreter(model=model, reference=reference, variant=variant)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in feed.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()], it


def written_slots(model, outs):
    """Mask of the output slots TFLite writes (fast NMS writes only the detections)."""
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    m = d.num_detected_boxes
    count = int(outs[3][0])
    mask = np.zeros(m, bool)
    if d.use_regular_nms:
        mask[:d.max_detections] = True
    else:
        k = min(d.max_classes_per_detection, d.num_classes)
        for n in range(count):
            mask[n * d.max_classes_per_detection:n * d.max_classes_per_detection + k] = True
    return mask


@pytest.fixture(scope="module")
def litert_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_detection"), CASES, lambda name: CASES[name](),
                                   workers=4)


@pytest.fixture(scope="module")
def litert_ref_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_detection_ref"), CASES, lambda name: CASES[name](),
                                   workers=4, resolver="BUILTIN_REF")


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_litert(name, litert_results):
    check_against(name, litert_results[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_variant_matches_litert_builtin_ref(name, litert_ref_results):
    check_against(name, litert_ref_results[name], variant="reference")


def check_against(name, result, variant="litert-x86"):
    assert result.ok, result.describe()
    model, feed = CASES[name]()
    ours, _ = run_ours(model, feed, reference=variant == "reference", variant=variant)
    theirs = [result.outputs[f"output_{k}"] for k in range(4)]
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
    assert ours[3][0] == theirs[3][0], (ours[3], theirs[3])
    mask = written_slots(model, ours)
    np.testing.assert_array_equal(ours[0][0][mask], theirs[0][0][mask])
    np.testing.assert_array_equal(ours[1][0][mask], theirs[1][0][mask])
    np.testing.assert_array_equal(ours[2][0][mask], theirs[2][0][mask])
    # what TFLite leaves unwritten is zero here
    assert not ours[0][0][~mask].any() and not ours[1][0][~mask].any() and not ours[2][0][~mask].any()


@pytest.mark.parametrize("name", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(name):
    model, feed = CASES[name]()
    for variant in ("litert-x86", "reference"):
        fast, _ = run_ours(model, feed, variant=variant)
        ref, _ = run_ours(model, feed, reference=True, variant=variant)
        for a, b in zip(fast, ref):
            np.testing.assert_array_equal(a, b)


def iou_one(boxes: np.ndarray, i: int, j: int) -> np.float32:
    """IoU of two decoded boxes, float32 step by step (0 when either area is <= 0)."""
    bi, bj = boxes[i], boxes[j]
    area_i = (bi[2] - bi[0]) * (bi[3] - bi[1])
    area_j = (bj[2] - bj[0]) * (bj[3] - bj[1])
    if area_i <= 0 or area_j <= 0:
        return np.float32(0.0)
    ih = max(min(bi[2], bj[2]) - max(bi[0], bj[0]), np.float32(0.0))
    iw = max(min(bi[3], bj[3]) - max(bi[1], bj[1]), np.float32(0.0))
    inter = np.float32(ih * iw)
    return np.float32(inter / np.float32(area_i + area_j - inter))


def nms_loop(boxes, scores, score_threshold, iou_threshold, limit) -> list[int]:
    """Single-class NMS as TFLite's NonMaxSuppressionSingleClassHelper loops: one pair at a time."""
    keep = [i for i in range(len(scores)) if scores[i] >= np.float32(score_threshold)]
    order = sorted(range(len(keep)), key=lambda k: -float(scores[keep[k]]))   # stable
    active = [True] * len(keep)
    selected: list[int] = []
    for a in range(len(keep)):
        if len(selected) >= min(limit, len(keep)):
            break
        if not active[a]:
            continue
        i = keep[order[a]]
        selected.append(i)
        active[a] = False
        for b in range(a + 1, len(keep)):
            if active[b] and iou_one(boxes, i, keep[order[b]]) > np.float32(iou_threshold):
                active[b] = False
    return selected


@pytest.mark.parametrize("seed", range(6))
def test_single_class_nms_is_the_plain_loop(seed):
    """The teaching layer deactivates all overlapping candidates of a selected box at once; the
    selection is the pair-by-pair loop's (ties in the scores, degenerate boxes, several limits)."""
    rng = np.random.default_rng(seed)
    n = 80
    yx = rng.uniform(0, 1, (n, 2))
    hw = rng.uniform(-0.02, 0.4, (n, 2))                    # a few boxes of area <= 0
    boxes = np.concatenate([yx, yx + hw], axis=1).astype(np.float32)
    scores = (rng.integers(0, 12, n) / 11).astype(np.float32)   # many equal scores
    for thr, iou, limit in ((0.0, 0.5, 100), (0.3, 0.2, 7), (0.5, 0.9, 3), (2.0, 0.5, 10)):
        assert _nms.single_class_nms(boxes, scores, thr, iou, limit) == nms_loop(boxes, scores, thr, iou, limit)


def test_cases_really_suppress_and_select():
    """The cases are not vacuous: detections happen, NMS removes overlapping boxes, ties exist."""
    model, feed = CASES["fast_ssd_like"]()
    outs, it = run_ours(model, feed)
    assert 3 <= outs[3][0] <= 10
    d = it.prepared()[0][2]
    assert d.label_offset == 1 and d.num_detected_boxes == 10 and not d.use_regular_nms
    # without suppression (IoU threshold 1) more boxes of the same region survive
    model1, feed1 = CASES["fast_iou_threshold_1"]()
    outs1, _ = run_ours(model1, feed1)
    assert outs1[3][0] == 12
    model, feed = CASES["uint8_regular_ties"]()
    outs, _ = run_ours(model, feed)
    scores = outs[2][0][:int(outs[3][0])]
    assert len(np.unique(scores)) < len(scores)          # equal scores among the detections
    assert np.all(np.diff(scores) <= 0)                  # sorted by decreasing score


def test_options_are_shown_in_the_opdata():
    model, _ = CASES["regular"]()
    it = Interpreter(model=model)
    it.allocate_tensors()
    node, kname, d, _ = it.prepared()[0]
    assert kname == "detection_postprocess (regular NMS)"
    assert (d.max_detections, d.detections_per_class, d.num_classes, d.use_regular_nms) == (10, 4, 4, True)
    assert d.y_scale == 10.0 and d.h_scale == 5.0 and d.nms_iou_threshold == 0.5


def test_partial_sort_emulation_orders_ties_like_libstdcxx():
    """Expected orders were printed by a C++ program calling std::partial_sort (g++ / libstdc++)
    with the same comparator as TFLite's DecreasingPartialArgSort; note the ties come out neither
    in index order nor reversed."""
    for values, k, want in (([1, 3, 3, 3, 1, 3, 2, 1, 0], 4, [1, 3, 5, 2]),
                            ([2, 1, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0], 5, [0, 10, 1, 8, 4]),
                            ([3, 2, 1, 1, 3, 3, 1], 3, [5, 4, 0])):
        assert _nms.partial_sort_desc(np.array(values, np.float32), k) == want
    v = np.array([0.5, 0.7, 0.5], np.float32)
    assert _nms.partial_sort_desc(v, 0) == []
    assert dp.top_classes(v, 1) == [1]
    for k in range(1, 8):      # without ties it is a plain sort
        w = np.array([3, 9, 1, 7, 5, 8, 2], np.float32)
        assert _nms.partial_sort_desc(w, k) == list(np.argsort(-w)[:k])


def _model_with(opts=b"", dtype="float32", n=8, classes=3, anchors=None, inputs=3):
    rng = rng_for("bad")
    a = anchors_grid(n, rng) if anchors is None else anchors
    model, feed = build_model(n, classes, True, 4, dtype, ((0.1, 128), (0.01, 0), (0.01, 0)), opts,
                              a.astype(np.uint8) if dtype == "uint8" and anchors is None else a,
                              np.zeros((1, n, 4), dtype), np.zeros((1, n, classes + 1), dtype))
    return model, feed


@pytest.mark.parametrize("opts, match", [
    (options(num_classes=3, y_scale=0.0), "y_scale is 0"),
    (options(num_classes=3, nms_iou_threshold=0.0), "nms_iou_threshold"),
    (options(num_classes=5), "columns for num_classes 5"),
    (options(num_classes=0), "num_classes is 0"),
    (options(num_classes=3, max_detections=-1), "must not be negative"),
    (options(num_classes=3, use_regular_nms=True, max_classes_per_detection=0), "regular NMS needs"),
    (b"", "no custom options"),
])
def test_bad_options_are_named_errors(opts, match):
    model, _ = _model_with(opts)
    it = Interpreter(model=model)
    with pytest.raises(UnsupportedOpError, match=match):
        it.allocate_tensors()


def test_int8_inputs_are_refused_like_tflite():
    b = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 0}
    box = b.input("box", (1, 4, 4), np.int8, quantization=q)
    sc = b.input("scores", (1, 4, 3), np.int8, quantization=q)
    an = b.constant("anchors", np.ones((4, 4), np.int8), quantization=q)
    outs = [b.tensor(f"o{k}", (1,), np.float32) for k in range(4)]
    b.op(B.CUSTOM, [box, sc, an], outs, custom_code=OP, custom_options=options(num_classes=2))
    b.output(*outs)
    it = Interpreter(model=b.build())
    with pytest.raises(UnsupportedOpError, match="box encodings .* is int8; this kernel handles float32/uint8"):
        it.allocate_tensors()


def test_negative_anchor_size_is_a_run_time_error():
    a = anchors_grid(8, rng_for("neg"))
    a[3, 2] = -0.2
    model, feed = _model_with(options(num_classes=3), anchors=a)
    it = Interpreter(model=model)
    it.allocate_tensors()
    with pytest.raises(WorkbenchError, match="decoded box 3 .* ymin > ymax"):
        it.invoke()


def test_version_2_is_not_registered():
    from workbench.interpreter.registry import BuiltinOpResolver

    assert BuiltinOpResolver().versions(OP) == (1,)

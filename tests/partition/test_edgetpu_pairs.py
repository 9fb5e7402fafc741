"""The edgetpu target and strategy against Google's Edge TPU compiler (shared/edgetpu_pairs).

Each pair is a quantized model and its ``*_edgetpu.tflite`` compiled by the real compiler; its
``ground_truth.json`` says, for every operator, whether the compiler mapped it (and into which
``edgetpu-custom-op``) or left it on the CPU.  Our plan must agree node for node, region for region.
The target names no model, tensor or node: its rules are the documented requirements (see
``targets/edgetpu.json``) and the strategy is TFLite's greedy partitioning, first delegated subset.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench import corpus, load
from workbench.partition import partition

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
PAIRS = SHARED / "edgetpu_pairs"
TRUTH = PAIRS / "ground_truth.json"
STATUS_WORDS = ("More than one subgraph is not supported", "Operation is working on an unsupported data type",
                "Operation is otherwise supported, but not mapped due to some unspecified limitation",
                "Operation not supported", "Operation version not supported", "Tensor has unsupported rank")


def _pairs() -> list:
    if not TRUTH.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no Edge TPU pairs: {TRUTH} is absent "
                                                                 f"(CI provides ../shared/edgetpu_pairs)"))]
    doc = json.loads(TRUTH.read_text())
    return [pytest.param(p, id=p["name"]) for p in doc["pairs"]]


def _plan(pair):
    model = load(PAIRS / pair["files"]["cpu"])
    regions = pair["n_edgetpu_custom_ops"]
    # one region: the compiler's default; several: it ran with -a, every delegated subset is mapped
    return partition(model, "edgetpu", "edgetpu", max_partitions=0 if regions <= 1 else -1)


@pytest.mark.parametrize("pair", _pairs())
def test_every_node_is_placed_as_the_edge_tpu_compiler_placed_it(pair):
    plan = _plan(pair)
    assert len(plan.placements) == pair["n_ops"]
    wrong = [(o["index"], o["op"], o["placement"], plan.placements[o["index"]].reason) for o in pair["ops"]
             if (o["placement"] == "edgetpu") != plan.placements[o["index"]].on_target]
    assert not wrong, wrong
    assert plan.offloaded == pair["n_mapped_to_edgetpu"]
    assert sorted(o["index"] for o in pair["cpu_left_ops"]) == [p.node for p in plan.placements if not p.on_target]


@pytest.mark.parametrize("pair", _pairs())
def test_regions_group_the_nodes_as_the_compiled_custom_ops_do(pair):
    plan = _plan(pair)
    theirs = {}
    for o in pair["ops"]:
        if o["placement"] == "edgetpu":
            theirs.setdefault(o["partition"], set()).add(o["index"])
    ours = [set(p.nodes) for p in plan.partitions]
    assert len(plan.partitions) == pair["n_edgetpu_custom_ops"]
    assert sorted(map(sorted, ours)) == sorted(map(sorted, theirs.values()))
    for part in pair["partitions"]:     # the same nodes, custom op by custom op
        assert set(part["cpu_op_indices"]) in ours


@pytest.mark.parametrize("pair", _pairs())
def test_every_cpu_node_gets_the_compilers_status_and_the_failing_constraint(pair):
    plan = _plan(pair)
    for p in plan.placements:
        if not p.on_target:
            assert p.reason.startswith(STATUS_WORDS), p
            assert ": " in p.reason and len(p.reason) > len("Operation not supported: X"), p


def test_the_deeplab_cuts_say_why():
    if not TRUTH.is_file():
        pytest.skip(f"no Edge TPU pairs: {TRUTH} is absent")
    doc = {p["name"]: p for p in json.loads(TRUTH.read_text())["pairs"]}
    plan = _plan(doc["td_deeplabv3_mnv2_dm05_pascal_quant"])
    reasons = {p.node: p.reason for p in plan.placements}
    assert reasons[64].startswith("Operation is otherwise supported, but not mapped due to some unspecified "
                                  "limitation: RESIZE_BILINEAR 1x1 → 33x33: size ratio 33 is not a power of two")
    assert reasons[65].startswith("More than one subgraph is not supported: depends on node 64 (RESIZE_BILINEAR)")
    assert reasons[71] == ("Operation is working on an unsupported data type: ARG_MAX: output 0 is INT64, "
                           "not in [INT8, UINT8]")
    slim = {p.node: p for p in _plan(doc["td_deeplab_mobilenet_edgetpu_slim_cityscapes_quant"]).placements}
    assert slim[81].on_target and slim[76].on_target      # RESIZE_BILINEAR 33x33 → 33x33, TILE 1x1 → 33x33
    assert "RESIZE_BILINEAR 33x33 → 513x513: size ratio 15.55 is not a power of two" in slim[82].reason
    posenet = _plan(doc["td_posenet_mobilenet_v1_075_353_481_16_quant_decoder"]).placements
    assert posenet[37].reason == "Operation not supported: PosenetDecoderOp (custom op)"


def test_efficientnet_lite0_int8_maps_whole():
    """MediaPipe's EfficientNet-Lite0 int8 (uint8 in and out): 64 nodes, all of them mapped.

    It was designed for the Edge TPU: CONV_2D / DEPTHWISE_CONV_2D with RELU6, ADD, one 7x7
    AVERAGE_POOL_2D, RESHAPE, FULLY_CONNECTED (one-dimensional output), SOFTMAX, all on 8-bit
    activations of at most 3 non-unit dimensions; the uint8 → int8 QUANTIZE at the input and the
    int8 → uint8 one at the output are requantizes between 8-bit types, which the compiler maps (as in the
    posenet and LSTM pairs).  The rank rule applies to activations only, so the 4-D filters
    ([32, 3, 3, 3] ...) no longer stop node 1.
    """
    try:
        path = corpus.cached_path("aitoolkit_image_classifier")
    except corpus.CorpusError as exc:
        pytest.skip(str(exc))
    plan = partition(load(path), "edgetpu", "edgetpu")
    assert (plan.offloaded, len(plan.placements), len(plan.partitions)) == (64, 64, 1)

"""The TIDL walk as the TI paper describes it, on the paper's own examples, and cuts named by tensor.

"TensorFlow Lite Heterogeneous Execution with TI Deep Learning Offload" (Gou, Varis): the import walks up
from the graph output; at an unsupported node the subgraph's output is reset to that node's input, so one
pass keeps the input side.  DeepLab v3: "the algorithm traverses from the graph output to the
AveragePool2D node, and then does the partitioning right up to this unsupported node" (Fig. 4: the
backbone).  MobileNet v1 (Fig. 8): the tool offloads "all nodes before" the tensor named on its command
line.  Real models: DeepLab v3 from the corpus, MobileNet v1 1.0/224 converted by Google's converter
(../shared/models, Keras names; skipped with a message without it), and the paper's own Fig. 8 network:
MobileNet v1 1.0/224 with TF-slim's tensor names, built in code (tests/helpers/slim_mobilenet.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers.slim_mobilenet import RELU6_13 as SLIM_RELU6_13
from helpers.slim_mobilenet import slim_mobilenet_v1
from workbench import Interpreter, corpus, dump, load
from workbench.errors import WorkbenchError
from workbench.partition import compile, partition
from workbench.partition.graph import GraphView

MOBILENET = Path(__file__).resolve().parents[2].parent / "shared" / "models" / "mobilenet_v1_a10_224_float32.tflite"
RELU6_13 = "mobilenet_1.00_224_1/conv_pw_13_relu_1/Relu6"     # Keras' name for slim's Conv2d_13_pointwise/Relu6


def mobilenet():
    if not MOBILENET.is_file():
        pytest.skip(f"needs {MOBILENET} (../shared/models beside the clone)")
    return load(MOBILENET)


def run(model, x):
    it = Interpreter(model_content=dump(model))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def test_deeplab_one_pass_offloads_the_backbone_above_the_33x33_pool():
    m = load(corpus.path("aitoolkit_deeplab_v3"))
    plan = partition(m, "tidl", "tidl", max_partitions=1)
    g = plan.graph
    pool = next(i for i, n in enumerate(g.nodes) if n.name == "AVERAGE_POOL_2D")
    assert [p.nodes for p in plan.partitions] == [tuple(range(pool))]          # nodes 0-60: the backbone
    assert plan.placements[pool].reason.code == "constraint" and "33" in plan.placements[pool].reason
    # the ASPP head stays behind; each node's reason names the reset below it
    assert f"reset the subgraph's output at node {pool} (AVERAGE_POOL_2D)" in plan.placements[pool + 1].reason
    assert "at node 63 (RESIZE_BILINEAR)" in plan.placements[66].reason
    assert all(pl.partition is None for pl in plan.placements[pool:])
    compiled = compile(plan)     # the custom op is "the first exported operator"
    sg = compiled.subgraphs[0]
    assert compiled.operator_codes[sg.operators[0].opcode_index].custom_code


def test_deeplab_passes_repeat_on_what_the_first_left_behind():
    m = load(corpus.path("aitoolkit_deeplab_v3"))
    plan = partition(m, "tidl", "tidl")
    firsts = [p.nodes[0] for p in plan.partitions]
    assert firsts == sorted(firsts) and plan.partitions[0].nodes == tuple(range(61))
    assert len(plan.partitions) > 1


def test_mobilenet_cut_after_relu6_of_conv_13_offloads_everything_before_it_and_outputs_match():
    m = mobilenet()
    plan = partition(m, "tidl", "tidl", cut_after=[RELU6_13])
    g = plan.graph
    last = next(g.producer[t] for t, x in enumerate(g.tensors) if RELU6_13 in x.name.split(";") and g.producer[t] >= 0)
    assert [p.nodes for p in plan.partitions] == [tuple(range(last + 1))]
    head = plan.placements[last + 1:]
    assert head and all(pl.partition is None for pl in head)
    assert {pl.reason.code for pl in head} <= {"after-cut", "unsupported-op", "dtype", "constraint"}
    assert any(pl.reason.code == "after-cut" and RELU6_13 in pl.reason for pl in head)
    assert plan.knobs["cut_after"] == (RELU6_13,)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    (want,), (got,) = run(m, x), run(compile(plan), x)
    np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module")
def slim():
    return slim_mobilenet_v1()


def test_fig8_cut_after_slims_conv_13_relu6_leaves_the_head_on_the_cpu_and_outputs_equal_the_cpu_run(slim):
    plan = partition(slim, "tidl", "tidl", cut_after=[SLIM_RELU6_13])
    g = plan.graph
    assert [p.nodes for p in plan.partitions] == [tuple(range(27))]           # conv 0 + 13 blocks: one subgraph
    head = plan.placements[27:]
    assert [pl.op for pl in head] == ["AVERAGE_POOL_2D", "CONV_2D", "RESHAPE", "SOFTMAX"]
    assert all(pl.partition is None and pl.reason.code == "after-cut" and SLIM_RELU6_13 in pl.reason for pl in head)
    (p,) = plan.partitions
    assert [g.tensors[t].name for t in p.outputs] == [SLIM_RELU6_13]
    compiled = compile(plan)      # the offload op first, then the head's four ops on the CPU
    ops = [compiled.operator_codes[op.opcode_index] for op in compiled.subgraphs[0].operators]
    assert ops[0].custom_code and [o.builtin_code.name for o in ops[1:]] == [pl.op for pl in head]
    x = np.random.default_rng(1).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    (want,), (got,) = run(slim, x), run(compiled, x)
    assert want.shape == (1, 1001) and 0 < want.max() < 1
    np.testing.assert_array_equal(got, want)


def test_fig8_without_a_cut_the_walk_takes_the_whole_slim_network(slim):
    """The tidl target takes the slim head too (a 7x7 pool is within its 9x9 limit): the demo's cut is the
    user's choice, not a refusal."""
    plan = partition(slim, "tidl", "tidl", max_partitions=1)
    assert [p.nodes for p in plan.partitions] == [tuple(range(31))]


def test_cut_after_takes_a_tensor_index_and_applies_to_every_strategy():
    m = load(corpus.path("aitoolkit_deeplab_v3"))
    g = GraphView(m)
    t = g.nodes[30].outputs[0]
    for strategy in ("tidl", "tflite", "edgetpu"):
        plan = partition(m, "tidl", strategy, cut_after=[t])
        placed = {i for p in plan.partitions for i in p.nodes}
        assert placed and max(placed) <= 30, strategy
        assert plan.placements[31].reason.code == "after-cut", strategy


def test_an_unknown_cut_tensor_is_an_error_that_lists_the_closest_names():
    m = load(corpus.path("aitoolkit_deeplab_v3"))
    with pytest.raises(WorkbenchError, match=r"no tensor named 'AvgPool2D/AvgPoo' in subgraph 0; the closest "
                                             r"names: AvgPool2D/AvgPool"):
        partition(m, "tidl", "tidl", cut_after=["AvgPool2D/AvgPoo"])
    with pytest.raises(WorkbenchError, match="tensor 99999 is out of range"):
        partition(m, "tidl", "tidl", cut_after=[99999])


def test_cli_partition_cut_after(tmp_path, capsys):
    from workbench.cli import main

    path = corpus.path("aitoolkit_deeplab_v3")
    out = tmp_path / "cut.tflite"
    assert main(["partition", str(path), "--target", "tidl", "--strategy", "tidl", "--cut-after",
                 "MobilenetV2/expanded_conv_16/project/BatchNorm/FusedBatchNorm", "-o", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["knobs"]["cut_after"] == ["MobilenetV2/expanded_conv_16/project/BatchNorm/FusedBatchNorm"]
    assert out.is_file()
    assert main(["partition", str(path), "--target", "tidl", "--strategy", "tidl", "--cut-after", "nope/x"]) != 0
    assert "no tensor named 'nope/x'" in capsys.readouterr().err

"""Our `tflite` strategy with the `xnnpack` target vs. ai-edge-litert's real XNNPACK delegation.

LiteRT (default resolver = XNNPACK applied) replaces each delegated partition by one DELEGATE node;
``_get_ops_details()`` after allocate lists those nodes (and still lists the replaced ones).  The
child process reports, per model, the DELEGATE nodes with their input and output tensors; we
compare the number of partitions, each partition's output list and each partition's INPUT list
(constants included, as TFLite lists them: the fp16 weights of a DEQUANTIZE inside the partition are
inputs, the fp32 tensor it makes is not).  Besides the corpus, small models made here probe the
edges: a split by an unsupported op, and fp16 weights that a CPU node also reads.  Every difference
is data below, with its explanation.  A corpus model whose stored input shape cannot run
(``corpus.INPUT_SHAPES``) is compared as a copy with that input shape written into the file.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from workbench import corpus, dump, load
from workbench.partition import partition
from workbench.schema import (
    BuiltinOperator as B, Conv2DOptions, CumsumOptions, ModelBuilder, Padding, TensorType, op_name,
)

PROBE = r"""
import json, sys
from ai_edge_litert.interpreter import Interpreter
out = {}
for name, path in json.loads(sys.argv[1]).items():
    try:
        it = Interpreter(model_path=path)
        it.allocate_tensors()
        ops = it._get_ops_details()
        out[name] = [{"inputs": sorted(int(t) for t in o["inputs"]), "outputs": sorted(int(t) for t in o["outputs"])}
                     for o in ops if o["op_name"] == "DELEGATE"]
    except Exception as e:
        out[name] = {"error": str(e).splitlines()[0]}
print(json.dumps(out))
"""

# every difference between LiteRT and us, with its explanation (data, checked below):
# model → (what differs, why)
DIFFERENCES = {
    "face_landmark_with_attention": (
        "litert error",
        "LiteRT cannot allocate the model (unresolved custom op Landmarks2TransformMatrix, a MediaPipe op "
        "the default resolver lacks), so it never delegates; our xnnpack target rejects the MediaPipe "
        "transform ops and partitions around them"),
    "split_sin": (
        "count",
        "ai-edge-litert 2.3's XNNPACK also delegates SIN, which the xnnpack target (built from the "
        "delegate's README operator list) leaves out: LiteRT makes one partition of all four nodes, we "
        "cut at SIN"),
    "fp16_shared": (
        "inputs+outputs",
        "XNNPACK claims a DEQUANTIZE of constant fp16 weights only when no CPU node reads its output "
        "(xnnpack_delegate.cc drops such 'static unpack' nodes when a non-delegated node consumes them): "
        "LiteRT leaves the DEQUANTIZE on the CPU and the partition reads its fp32 output; our target "
        "takes every constant DEQUANTIZE, so the partition reads the fp16 constant and exports the fp32 "
        "weights to CUMSUM"),
    "fp16_cpu_only": (
        "inputs+outputs",
        "the same rule: the fp16 DEQUANTIZE feeds only CUMSUM (CPU), so XNNPACK does not take it and the "
        "partition is RELU alone; ours takes the DEQUANTIZE along (fp16 constant in, fp32 weights out)"),
    # the wake-word and music corpus (ai-edge-litert 2.3.0's XNNPACK vs the README-based target)
    **{name: (
        "count",
        "LiteRT's XNNPACK also runs the int8 (QS8) operators and the resource-variable operators "
        "VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE: it delegates every node but CALL_ONCE and the "
        "int8->uint8 QUANTIZE (one partition; okay_nabu four, cut where its int8 SPLIT_V stay on the "
        "CPU); the xnnpack target describes XNNPACK's float32 path only, so we offload nothing")
       for name in ("microwakeword_alexa", "microwakeword_hey_jarvis", "microwakeword_hey_mycroft",
                    "microwakeword_okay_nabu")},
    "basic_pitch_nmp": (
        "count",
        "LiteRT's XNNPACK also takes SUM, LOG, REDUCE_MIN and REDUCE_MAX, which the target (built from "
        "the delegate's README operator list) leaves out, so it joins what we cut into partitions 11-15 "
        "into three; and it leaves the 8-input CONCATENATION on the CPU (XNNPACK concatenates a bounded "
        "number of inputs; the target sets no bound), which splits our partition 16 in two: 17 "
        "partitions against our 18"),
    "openwakeword_melspectrogram": (
        "count",
        "LiteRT's XNNPACK also takes LOG and REDUCE_MAX (not in the README list the target is built "
        "from): its last partition runs from the power spectrum to the output, where we cut at LOG and "
        "REDUCE_MAX: 4 partitions against our 6"),
}


# ------------------------------------------------------------------------------------------------
# small models made here


def _conv(b, x, w, bias, y):
    b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1,
                                                     dilation_w_factor=1, dilation_h_factor=1))


def _split_model(op: str):
    """CONV → op → ADD(const) → MUL(with the CONV output): the op splits two supported runs."""
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2])
    w = b.constant("w", np.ones((2, 1, 1, 2), np.float32))
    bias = b.constant("b", np.zeros(2, np.float32))
    t0 = b.tensor("t0", [1, 4, 4, 2])
    _conv(b, x, w, bias, t0)
    t1 = b.tensor("t1", [1, 4, 4, 2])
    if op == "CUMSUM":
        b.op(B.CUMSUM, [t0, b.constant("axis", np.array([3], np.int32))], [t1], CumsumOptions())
    else:
        b.op(getattr(B, op), [t0], [t1])
    c = b.constant("c", np.full((1, 4, 4, 2), 0.5, np.float32))
    t2 = b.tensor("t2", [1, 4, 4, 2])
    b.op(B.ADD, [t1, c], [t2])
    t3 = b.tensor("t3", [1, 4, 4, 2])
    b.op(B.MUL, [t2, t0], [t3])
    b.output(t3)
    return b.build()


def _fp16_model(conv_reads_weights: bool):
    """fp16 weights → DEQUANTIZE → (CONV on the target, if asked) and CUMSUM (CPU)."""
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2])
    w16 = b.constant("w16", np.ones((2, 1, 1, 2), np.float16))
    w = b.tensor("w", [2, 1, 1, 2])
    b.op(B.DEQUANTIZE, [w16], [w])
    bias = b.constant("b", np.zeros(2, np.float32))
    t0 = b.tensor("t0", [1, 4, 4, 2])
    if conv_reads_weights:
        _conv(b, x, w, bias, t0)
    else:
        b.op(B.RELU, [x], [t0])
    t1 = b.tensor("t1", [2, 1, 1, 2])
    b.op(B.CUMSUM, [w, b.constant("axis", np.array([3], np.int32))], [t1], CumsumOptions())
    b.output(t0, t1)
    return b.build()


MADE = {"split_cumsum": lambda: _split_model("CUMSUM"), "split_sin": lambda: _split_model("SIN"),
        "fp16_shared": lambda: _fp16_model(True), "fp16_cpu_only": lambda: _fp16_model(False)}


def _with_input_shapes(model, shapes):
    """The model with subgraph 0's input tensors stored at ``shapes`` (their signatures kept)."""
    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    for t, shape in zip(sg.inputs, shapes):
        tensors[t] = dataclasses.replace(tensors[t], shape=tuple(shape))
    return dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)), *model.subgraphs[1:]))


@pytest.fixture(scope="module")
def models(corpus_paths, tmp_path_factory):
    """name → path: the corpus and the models made here."""
    out = {k: str(v) for k, v in corpus_paths.items()}
    d = tmp_path_factory.mktemp("crosscheck")
    for name, shapes in corpus.INPUT_SHAPES.items():  # LiteRT allocates before any resize could happen
        p = d / f"{name}.tflite"
        p.write_bytes(dump(_with_input_shapes(load(corpus_paths[name]), shapes)))
        out[name] = str(p)
    for name, make in MADE.items():
        p = d / f"{name}.tflite"
        p.write_bytes(dump(make()))
        out[name] = str(p)
    return out


@pytest.fixture(scope="module")
def litert(models):
    r = subprocess.run([sys.executable, "-c", PROBE, json.dumps(models)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _compare(plan, theirs) -> tuple[str, str] | None:
    if isinstance(theirs, dict):
        return "litert error", f"litert error: {theirs['error']}; ours: {len(plan.partitions)} partitions"
    ours = [{"inputs": sorted(p.inputs), "outputs": sorted(p.outputs)} for p in plan.partitions]
    if len(ours) != len(theirs):
        return "count", f"count {len(ours)} vs litert {len(theirs)}"
    kinds, details = [], []
    for key in ("inputs", "outputs"):
        a, b = [o[key] for o in ours], [t[key] for t in theirs]
        if a != b:
            kinds.append(key)
            details.append(f"{key} {a} vs litert {b}")
    return ("+".join(kinds), "; ".join(details)) if kinds else None


def test_xnnpack_partitions_match_litert(litert, models):
    found = {}
    for name, path in sorted(models.items()):
        diff = _compare(partition(load(path), "xnnpack", "tflite"), litert[name])
        if diff is not None:
            found[name] = diff
    assert set(found) == set(DIFFERENCES), found
    for name, (kind, detail) in found.items():
        assert kind == DIFFERENCES[name][0], (name, detail)
    assert "unresolved custom op" in found["face_landmark_with_attention"][1]


def test_the_differences_are_what_the_explanations_say(litert, models):
    # split_sin: LiteRT takes SIN (one partition: every node), we cut there
    plan = partition(load(models["split_sin"]), "xnnpack", "tflite")
    assert plan.placements[1].reason == "SIN: not supported" and len(litert["split_sin"]) == 1
    # fp16: LiteRT's partition reads the DEQUANTIZE's fp32 output (shared) or not at all (cpu only);
    # ours reads the fp16 constant and exports the fp32 weights
    for name in ("fp16_shared", "fp16_cpu_only"):
        m = load(models[name])
        sg = m.subgraphs[0]
        w16, w = sg.operators[0].inputs[0], sg.operators[0].outputs[0]
        theirs = litert[name][0]
        assert w16 not in theirs["inputs"] and w not in theirs["outputs"]
        assert (w in theirs["inputs"]) == (name == "fp16_shared")
        ours = partition(m, "xnnpack", "tflite").partitions[0]
        assert 0 in ours.nodes and w16 in ours.inputs and w in ours.outputs
    # split_cumsum agrees: two partitions, the second reads the constant c and the CONV output again
    assert len(litert["split_cumsum"]) == 2


def test_the_corpus_differences_are_what_the_explanations_say(litert, models):
    def producer(m, op):
        sg = m.subgraphs[0]
        return [i for i, o in enumerate(sg.operators) if op_name(m.operator_codes[o.opcode_index]) == op]

    for name in ("microwakeword_alexa", "microwakeword_hey_jarvis", "microwakeword_hey_mycroft",
                 "microwakeword_okay_nabu"):
        m = load(models[name])
        sg = m.subgraphs[0]
        assert partition(m, "xnnpack", "tflite").partitions == ()
        theirs = litert[name]
        assert len(theirs) == (4 if name.endswith("okay_nabu") else 1)
        inside = set().union(*(set(p["inputs"]) | set(p["outputs"]) for p in theirs))
        # QUANTIZE reads the last partition's LOGISTIC output; the variables are read inside
        (q,) = producer(m, "QUANTIZE")
        assert sg.operators[q].inputs[0] in theirs[-1]["outputs"]
        reads = {sg.operators[i].outputs[0] for i in producer(m, "READ_VARIABLE")}
        assert reads and not reads & set(theirs[0]["inputs"])
        if len(theirs) == 1:
            assert not reads & inside
        for i in producer(m, "SPLIT_V"):  # okay_nabu: the CPU's SPLIT_V reads a partition output
            assert sg.operators[i].inputs[0] in inside
    m = load(models["basic_pitch_nmp"])
    (big,) = [i for i in producer(m, "CONCATENATION") if len(m.subgraphs[0].operators[i].inputs) == 8]
    concat_out = m.subgraphs[0].operators[big].outputs[0]
    assert any(concat_out in p["inputs"] for p in litert["basic_pitch_nmp"])
    assert any(big in p.nodes for p in partition(m, "xnnpack", "tflite").partitions)
    for name, ops in (("basic_pitch_nmp", ("SUM", "LOG", "REDUCE_MIN", "REDUCE_MAX")),
                      ("openwakeword_melspectrogram", ("LOG", "REDUCE_MAX"))):
        m = load(models[name])
        sg = m.subgraphs[0]
        plan = partition(m, "xnnpack", "tflite")
        made = set().union(*(p["outputs"] for p in litert[name]))
        listed = made | set().union(*(p["inputs"] for p in litert[name]))
        for op in ops:
            for i in producer(m, op):  # ours leaves it on the CPU; LiteRT's DELEGATE node computes it
                assert not plan.placements[i].on_target and plan.placements[i].reason == f"{op}: not supported"
                node = sg.operators[i]
                runtime = [t for t in (*node.inputs, *node.outputs) if t >= 0 and not plan.graph.constant[t]]
                assert set(node.outputs) & made or not set(runtime) & listed, (name, op, i)


def test_fp16_weights_are_partition_inputs_on_both_sides(litert, models):
    """Where they agree (the corpus): a DEQUANTIZE of fp16 weights is inside the partition, so the fp16
    constant is a partition input and the fp32 tensor it makes is not — for LiteRT and for us."""
    checked = 0
    for name in sorted(models):
        if name in DIFFERENCES or name in MADE:
            continue
        m = load(models[name])
        sg = m.subgraphs[0]
        plan = partition(m, "xnnpack", "tflite")
        inputs = set(litert[name][0]["inputs"])
        assert inputs == set(plan.partitions[0].inputs)
        for i, op in enumerate(sg.operators):
            t = op.inputs[0] if op.inputs else -1
            if (t >= 0 and sg.tensors[t].type == TensorType.FLOAT16 and plan.graph.constant[t]
                    and plan.placements[i].on_target):
                assert op.inputs[0] in inputs and op.outputs[0] not in inputs, (name, i)
                checked += 1
    assert checked > 100

"""The interpreter against ai-edge-litert on every corpus model (and MobileNet v1 when present).

For each model, with seeded random inputs (``litert_runner`` makes them):
  * end to end: max |ours - litert| <= 1e-4 * (max |litert| + 1) on every output;
  * node by node: each of our executed nodes, fed litert's own values of its inputs, matches
    litert's value of its outputs to the same bound (litert returns every intermediate because the
    test re-serializes the model with all of them listed as outputs).
Models litert cannot run (MediaPipe custom ops) run end to end on our fast path and are compared
with our numpy-reference path; MediaPipe's Convolution2DTransposeBias is also rewritten into
TRANSPOSE_CONV (+ bias), which litert can run, and compared with it.
"""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import numpy as np
import pytest

import litert_runner
from workbench import dump, load
from workbench.interpreter import Interpreter
from workbench.schema import (
    Buffer, BuiltinOperator, BuiltinOptions, OperatorCode, Padding, Tensor, TensorType, TransposeConvOptions, op_name,
)

TOL = 1e-4
SEED = 20240611
MOBILENET = Path(__file__).resolve().parents[2] / "shared" / "models" / "mobilenet_v1_a10_224_float32.tflite"

# Outputs whose end-to-end value is so sensitive to float rounding that TFLite's own kernel sets
# disagree beyond 1e-4 (measured with ai-edge-litert 2.3.0 on these inputs: builtin vs XNNPACK 5.1e-4,
# builtin vs reference kernels 3.1e-4).  They get the looser bound given here; the node-by-node
# check still holds every node to 1e-4.
SENSITIVE_OUTPUTS = {("pose_landmark_full", 2): 2e-3}

# corpus models litert cannot run (MediaPipe custom ops only MediaPipe registers); their custom
# kernels are checked in tests/test_mediapipe_ops.py, the model here fast path vs reference path
LITERT_CANNOT_RUN = {
    "face_landmark_with_attention": ("Landmarks2TransformMatrix", "TransformLandmarks", "TransformTensorBilinear"),
    "selfie_segmentation": ("Convolution2DTransposeBias",),
    "selfie_segmentation_landscape": ("Convolution2DTransposeBias",),
}


def relative_error(a, b) -> float:
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max() / (np.abs(b).max() + 1.0))


def run_ours(model, inputs: list, **kw):
    it = Interpreter(model=model, **kw)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return it, [it.get_tensor(d["index"]) for d in it.get_output_details()]


def with_all_outputs(model):
    """The model with every operator output added to subgraph 0's outputs (originals first)."""
    sg = model.subgraphs[0]
    outs = list(sg.outputs)
    for op in sg.operators:
        for t in op.outputs:
            if t >= 0 and t not in outs:
                outs.append(t)
    sg2 = dataclasses.replace(sg, outputs=tuple(outs))
    return dataclasses.replace(model, subgraphs=(sg2, *model.subgraphs[1:]), signature_defs=None), outs


def transpose_conv_bias_as_builtin(model):
    """Replace every Convolution2DTransposeBias by TRANSPOSE_CONV v3 (output shape constant + bias)."""
    codes = list(model.operator_codes)
    codes.append(OperatorCode(deprecated_builtin_code=int(BuiltinOperator.TRANSPOSE_CONV),
                              builtin_code=BuiltinOperator.TRANSPOSE_CONV, version=3))
    tc_code = len(codes) - 1
    buffers = list(model.buffers)
    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    ops = list(sg.operators)
    it = Interpreter(model=model)
    it.allocate_tensors()
    shapes = it._sg(0).context.shapes
    changed = 0
    for i, op in enumerate(ops):
        if op_name(model.operator_codes[op.opcode_index]) != "Convolution2DTransposeBias":
            continue
        padding, stride_w, stride_h = struct.unpack("<iii", bytes(op.custom_options))
        out_shape = np.asarray(shapes[op.outputs[0]], "<i4")
        buffers.append(Buffer(data=memoryview(out_shape.tobytes())))
        tensors.append(Tensor(shape=(4,), type=TensorType.INT32, buffer=len(buffers) - 1, name=f"output_shape_{i}"))
        x, w, b = op.inputs
        ops[i] = dataclasses.replace(
            op, opcode_index=tc_code, inputs=(len(tensors) - 1, w, x, b), custom_options=None,
            builtin_options_type=BuiltinOptions.TransposeConvOptions,
            builtin_options=TransposeConvOptions(padding=Padding.SAME if padding == 1 else Padding.VALID,
                                                 stride_w=stride_w, stride_h=stride_h))
        changed += 1
    assert changed
    sg2 = dataclasses.replace(sg, tensors=tuple(tensors), operators=tuple(ops))
    return dataclasses.replace(model, operator_codes=tuple(codes), buffers=tuple(buffers), subgraphs=(sg2,))


def litert_run(model, tmp_path: Path, name: str, inputs: list | None = None):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(dump(model))
    in_path = tmp_path / f"{name}_in.npz"
    if inputs is not None:
        np.savez(in_path, **{f"input_{k}": x for k, x in enumerate(inputs)})
        return litert_runner.run(path, in_path, tmp_path / f"{name}_out.npz")
    return litert_runner.run(path, in_path, tmp_path / f"{name}_out.npz", seed=SEED)


def check_model(model, name: str, tmp_path: Path) -> dict:
    """End to end and node by node against litert; returns {output k: relative error}."""
    full, out_ids = with_all_outputs(model)
    result = litert_run(full, tmp_path, name)
    assert result.ok, result.describe()
    with np.load(tmp_path / f"{name}_in.npz") as z:
        inputs = [z[f"input_{k}"] for k in range(len(z.files))]
    litert = {t: result.outputs[f"output_{k}"] for k, t in enumerate(out_ids)}
    it, ours = run_ours(model, inputs)
    errors = {}
    for k, (d, a) in enumerate(zip(it.get_output_details(), ours)):
        b = litert[d["index"]]
        assert a.shape == b.shape, f"{name} output {k}: shape {a.shape} vs litert {b.shape}"
        errors[k] = relative_error(a, b)
        bound = SENSITIVE_OUTPUTS.get((name, k), TOL)
        assert errors[k] <= bound, f"{name} output {k} ('{d['name']}'): error {errors[k]:.3g} > {bound:g}"
    # node by node: feed litert's inputs to each executed node
    it2 = Interpreter(model=model)
    it2.allocate_tensors()
    ctx = it2._sg(0).context
    graph_inputs = {d["index"]: x for d, x in zip(it2.get_input_details(), inputs)}
    worst = 0.0
    for node, _, _, folded in it2.prepared():
        if folded:
            continue
        feed = {t: graph_inputs[t] if t in graph_inputs else litert[t]
                for t in node.inputs if t >= 0 and not ctx.is_constant(t)}
        outs = it2.invoke_node(node.index, feed)
        for t, a in zip(node.outputs, outs):
            e = relative_error(a, litert[t])
            assert e <= TOL, f"{name} node {node.index} ({node.op_name}): error {e:.3g} on '{ctx.name(t)}'"
            worst = max(worst, e)
    print(f"\n{name}: output errors {[f'{e:.2e}' for e in errors.values()]}, worst node {worst:.2e}")
    return errors


def test_corpus_model_matches_litert(corpus_model, corpus_paths, tmp_path):
    model = load(corpus_paths[corpus_model])
    probe = litert_run(model, tmp_path, "probe")
    if corpus_model in LITERT_CANNOT_RUN:
        assert not probe.ok and "unresolved custom op" in probe.stderr
        assert any(op in probe.stderr for op in LITERT_CANNOT_RUN[corpus_model])
        # litert cannot run it: our fast path vs our numpy references, end to end
        rng = np.random.default_rng(SEED)
        inputs = [litert_runner.make_input(rng, d["dtype"], d["shape"])
                  for d in Interpreter(model=model).get_input_details()]
        _, fast = run_ours(model, inputs)
        _, ref = run_ours(model, inputs, reference=True)
        for k, (a, b) in enumerate(zip(fast, ref)):
            assert np.isfinite(a).all()
            assert relative_error(a, b) <= TOL, f"{corpus_model} output {k}: fast vs reference"
        if LITERT_CANNOT_RUN[corpus_model] == ("Convolution2DTransposeBias",):
            # with the custom op rewritten into TRANSPOSE_CONV, against litert
            check_model(transpose_conv_bias_as_builtin(model), corpus_model + "_builtin", tmp_path)
        return
    assert probe.ok, probe.describe()
    check_model(model, corpus_model, tmp_path)


def test_corpus_model_reference_path_agrees(corpus_model, corpus_paths):
    model = load(corpus_paths[corpus_model])
    rng = np.random.default_rng(SEED)
    it = Interpreter(model=model)
    inputs = [litert_runner.make_input(rng, d["dtype"], d["shape"]) for d in it.get_input_details()]
    _, fast = run_ours(model, inputs)
    _, ref = run_ours(model, inputs, reference=True)
    for k, (a, b) in enumerate(zip(fast, ref)):
        bound = SENSITIVE_OUTPUTS.get((corpus_model, k), TOL)
        assert relative_error(a, b) <= bound, f"{corpus_model} output {k}"


@pytest.mark.skipif(not MOBILENET.exists(), reason="MobileNet v1 is only on the development machine")
def test_mobilenet_v1_matches_litert(tmp_path):
    errors = check_model(load(MOBILENET), "mobilenet_v1", tmp_path)
    assert errors[0] <= TOL
